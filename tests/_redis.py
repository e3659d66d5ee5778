"""A real redis-server for the tests that need one (Debian's ``/usr/bin/redis-server``, installed by ``./run tests``).

Missing redis-server: the test is skipped on a developer machine, and FAILS under ``CI=true`` (CI installs it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from boilerstrip.distributed.localredis import LocalRedis, redis_server_path


def need_redis_server() -> None:
    if redis_server_path() is None:
        message = "redis-server is not installed (apt-get install redis-server; ./run tests installs it)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def redis_url() -> Iterator[str]:
    """The URL of a fresh redis-server on a loopback port, stopped after the test."""
    need_redis_server()
    with LocalRedis() as server:
        yield server.url
