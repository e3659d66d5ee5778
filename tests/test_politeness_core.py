"""The pure politeness core: RFC 9309 fetch verdicts, Retry-After, back-off, Crawl-delay."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from boilerstrip.config import ConfigError, params_from_settings
from boilerstrip.politeness import (
    PolitenessParams,
    RobotsParams,
    crawl_delay_refusal,
    host_delay_s,
    parse_retry_after,
    pause_for_s,
    robots_verdict_for_status,
)

ROBOTS = RobotsParams()


@pytest.mark.parametrize(
    ("status", "redirects", "action", "reason"),
    [
        (200, 0, "parse", "robots_ok"),
        (204, 0, "parse", "robots_ok"),
        (301, 0, "follow", "robots_redirect"),
        (302, 4, "follow", "robots_redirect"),
        (302, 5, "allow_all", "robots_too_many_redirects"),
        (401, 0, "allow_all", "robots_4xx_allow"),
        (403, 0, "allow_all", "robots_4xx_allow"),
        (404, 0, "allow_all", "robots_4xx_allow"),
        (429, 0, "disallow_all", "robots_unreachable"),
        (500, 0, "disallow_all", "robots_unreachable"),
        (503, 0, "disallow_all", "robots_unreachable"),
        (101, 0, "disallow_all", "robots_unreachable"),
    ],
)
def test_robots_verdicts_follow_rfc9309(status: int, redirects: int, action: str, reason: str) -> None:
    verdict = robots_verdict_for_status(status, redirects, ROBOTS)
    assert (verdict.action, verdict.reason) == (action, reason)


def test_retry_after_seconds_and_dates() -> None:
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(b" 7 ") == 7.0
    assert parse_retry_after("1.5") == 1.5
    later = (now + timedelta(seconds=90)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert parse_retry_after(later, now=now) == pytest.approx(90.0)
    earlier = (now - timedelta(seconds=90)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert parse_retry_after(earlier, now=now) == 0.0
    for junk in (None, "", "soon", "-5", "nan", "Mon, 99 Foo 2026"):
        assert parse_retry_after(junk, now=now) in (None, 0.0), junk
    assert parse_retry_after("soon") is None


def test_pause_caps_retry_after_and_backs_off_exponentially() -> None:
    params = PolitenessParams(max_retry_after_s=60, retry_backoff_base_s=2, max_backoff_s=20)
    assert pause_for_s(30, 1, params) == 30
    assert pause_for_s(3600, 1, params) == 60
    assert [pause_for_s(None, n, params) for n in (1, 2, 3, 4, 5, 6)] == [2, 4, 8, 16, 20, 20]
    assert pause_for_s(None, 10_000, params) == 20


def test_crawl_delay_is_a_floor_and_has_a_cap() -> None:
    assert host_delay_s(1.0, None) == 1.0
    assert host_delay_s(1.0, 3.0) == 3.0
    assert host_delay_s(5.0, 3.0) == 5.0
    assert host_delay_s(1.0, float("nan")) == 1.0
    params = PolitenessParams(max_crawl_delay_s=30)
    assert crawl_delay_refusal(30, params) is None
    assert crawl_delay_refusal(31, params) == "crawl_delay_too_long"
    assert crawl_delay_refusal(None, params) is None


def test_settings_map_onto_params_and_bad_values_name_the_setting() -> None:
    params = params_from_settings({"BOILERSTRIP_POLITENESS_PARAMS": '{"max_crawl_delay_s": "12.5"}'}, "politeness", PolitenessParams)
    assert params.max_crawl_delay_s == 12.5
    with pytest.raises(ConfigError, match="BOILERSTRIP_ROBOTS_PARAMS field max_bytes"):
        params_from_settings({"BOILERSTRIP_ROBOTS_PARAMS": '{"max_bytes": "lots"}'}, "robots", RobotsParams)
    with pytest.raises(ConfigError):
        params_from_settings({"BOILERSTRIP_ROBOTS_PARAMS": {"max_redirects": -1}}, "robots", RobotsParams)
