"""The Redis backend: the state every worker of a distributed crawl shares (``redis://HOST:PORT/DB``).

Chosen with ``BOILERSTRIP_STATE_BACKEND=boilerstrip.state.RedisState`` and ``BOILERSTRIP_STATE_DIR=redis://...``
(``boilerstrip crawl --redis`` and ``boilerstrip worker`` set both). Keys, under the prefix
``boilerstrip:state`` (``redis://HOST:PORT/DB?prefix=NAME`` picks another):

- ``P:meta`` (hash): ``schema_version``. A store of another version is emptied with a warning.
- ``P:tpl:SITE:pages`` (hash): URL -> ``[cluster, [hashes]]``, the latest block hashes of each URL;
- ``P:tpl:SITE:scopes`` (hash): cluster -> pages (``""`` = the whole site);
- ``P:tpl:SITE:counts:CLUSTER`` (hash): block hash -> pages (``CLUSTER`` empty = the whole site);
- ``P:url`` (hash): URL -> the ``UrlState`` as JSON; ``P:urlsites`` (hash): URL -> site.
- ``P:copies`` (hash): URL -> the page's last record and links as JSON (``PageCopies``).

``put_page`` and ``remove_page`` are one Lua script each, so two workers putting the same URL at once
never double-count. Every write is immediate: ``commit`` has nothing to do. Pure Python: no Scrapy import.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from .base import STATE_SCHEMA_VERSION, PageCopy, SiteCounts, UrlState, packed_json, unpacked_json

__all__ = ["RedisState", "DEFAULT_PREFIX", "split_state_url"]

logger = logging.getLogger(__name__)

DEFAULT_PREFIX = "boilerstrip:state"

# KEYS[1] pages hash, KEYS[2] scopes hash; ARGV[1] url, ARGV[2] new cluster ("" = only remove),
# ARGV[3] JSON list of new hashes, ARGV[4] the counts-key prefix ("P:tpl:SITE:counts:").
# Returns 1 when an earlier version of the URL was removed.
_PUT_PAGE = """
local removed = 0
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local entry = cjson.decode(old)
  for _, scope in ipairs({'', entry[1]}) do
    local counts = ARGV[4] .. scope
    if redis.call('HINCRBY', KEYS[2], scope, -1) <= 0 then redis.call('HDEL', KEYS[2], scope) end
    for _, h in ipairs(entry[2]) do
      if redis.call('HINCRBY', counts, h, -1) <= 0 then redis.call('HDEL', counts, h) end
    end
  end
  redis.call('HDEL', KEYS[1], ARGV[1])
  removed = 1
end
if ARGV[2] ~= '' then
  local hashes = cjson.decode(ARGV[3])
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({ARGV[2], hashes}))
  for _, scope in ipairs({'', ARGV[2]}) do
    redis.call('HINCRBY', KEYS[2], scope, 1)
    for _, h in ipairs(hashes) do redis.call('HINCRBY', ARGV[4] .. scope, h, 1) end
  end
end
return removed
"""


def split_state_url(url: str) -> tuple[str, str]:
    """(connection URL, key prefix) of ``redis://HOST:PORT/DB?prefix=NAME``."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"not a Redis URL: {url!r}")
    query = parse_qs(parts.query)
    prefix = (query.pop("prefix", [DEFAULT_PREFIX]) or [DEFAULT_PREFIX])[0]
    rest = "&".join(f"{k}={v}" for k, values in query.items() for v in values)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, "")), prefix


class _Templates:
    def __init__(self, client: Any, prefix: str) -> None:
        self._r = client
        self._p = prefix
        self._put = client.register_script(_PUT_PAGE)

    def _key(self, site: str, what: str) -> str:
        return f"{self._p}:tpl:{site}:{what}"

    def _run(self, site: str, url: str, cluster: str, hashes: list[str]) -> int:
        return int(self._put(keys=[self._key(site, "pages"), self._key(site, "scopes")],
                             args=[url, cluster, json.dumps(hashes), self._key(site, "counts:")]))

    def put_page(self, site: str, url: str, cluster: str, hashes: Iterable[str]) -> None:
        if cluster == "":
            raise ValueError("a cluster name must not be empty")
        kept = sorted({h for h in hashes if h})
        # cjson encodes an empty Lua table as {}: an empty list is sent as [] and decoded to an empty table
        self._run(site, url, cluster, kept)

    def get_page(self, site: str, url: str) -> tuple[str, tuple[str, ...]] | None:
        raw = self._r.hget(self._key(site, "pages"), url)
        if raw is None:
            return None
        cluster, hashes = json.loads(raw)
        return cluster, tuple(hashes) if isinstance(hashes, list) else ()

    def remove_page(self, site: str, url: str) -> bool:
        return self._run(site, url, "", []) == 1

    def _counts(self, site: str, cluster: str, min_pages: int = 1) -> SiteCounts:
        pages = int(self._r.hget(self._key(site, "scopes"), cluster) or 0)
        blocks: dict[str, int] = {}
        for k, v in self._r.hscan_iter(self._key(site, f"counts:{cluster}"), count=1000):
            if int(v) >= min_pages:
                blocks[k.decode()] = int(v)
        return pages, blocks

    def site_counts(self, site: str, min_pages: int = 1) -> SiteCounts:
        return self._counts(site, "", min_pages)

    def cluster_counts(self, site: str, min_pages: int = 1) -> dict[str, SiteCounts]:
        scopes = sorted(k.decode() for k, v in self._r.hgetall(self._key(site, "scopes")).items() if int(v) > 0)
        return {c: self._counts(site, c, min_pages) for c in scopes if c != ""}

    def urls(self, site: str) -> Iterator[str]:
        yield from sorted(k.decode() for k in self._r.hkeys(self._key(site, "pages")))


class _History:
    def __init__(self, client: Any, prefix: str) -> None:
        self._r = client
        self._states = f"{prefix}:url"
        self._sites = f"{prefix}:urlsites"

    def get(self, url: str) -> UrlState | None:
        raw = self._r.hget(self._states, url)
        return None if raw is None else UrlState(**json.loads(raw))

    def put(self, state: UrlState) -> None:
        pipe = self._r.pipeline(transaction=True)
        pipe.hset(self._states, state.url, json.dumps(dataclasses.asdict(state)))
        pipe.hset(self._sites, state.url, state.site)
        pipe.execute()

    def delete(self, url: str) -> bool:
        pipe = self._r.pipeline(transaction=True)
        pipe.hdel(self._states, url)
        pipe.hdel(self._sites, url)
        return bool(pipe.execute()[0])

    def iter_site(self, site: str) -> Iterator[UrlState]:
        urls = sorted(u.decode() for u, s in self._r.hgetall(self._sites).items() if s.decode() == site)
        for url in urls:
            state = self.get(url)
            if state is not None:
                yield state

    def sites(self) -> list[str]:
        return sorted({s.decode() for s in self._r.hvals(self._sites)})


class _PageCopies:
    """``P:copies`` (hash): URL -> ``{"record", "links"}`` as compressed JSON (``packed_json``: a lone
    surrogate survives; a copy an earlier boilerstrip stored as JSON text still reads)."""

    def __init__(self, client: Any, prefix: str) -> None:
        self._r = client
        self._copies = f"{prefix}:copies"

    def get(self, url: str) -> PageCopy | None:
        raw = self._r.hget(self._copies, url)
        if raw is None:
            return None
        data = unpacked_json(raw)
        return PageCopy(url, data["record"], data["links"])

    def put(self, copy: PageCopy) -> None:
        # compressed (packed_json): every page's copy lives in the server's memory, a tenth of it so
        self._r.hset(self._copies, copy.url, packed_json({"record": copy.record, "links": copy.links}))

    def delete(self, url: str) -> bool:
        return bool(self._r.hdel(self._copies, url))


class RedisState:
    """Both stores in one Redis database. ``state_dir`` is the Redis URL (a ``Path`` of it works too);
    ``client`` (a ``redis.Redis``, or a fakeredis one in unit tests) replaces the connection."""

    def __init__(self, state_dir: str | Path = "redis://127.0.0.1:6379/0", client: Any = None) -> None:
        url, prefix = split_state_url(str(state_dir).replace(":/", "://", 1) if "://" not in str(state_dir) else str(state_dir))
        if client is None:
            from boilerstrip.distributed.connection import redis_client

            client = redis_client(url)  # rides out a Redis outage as the crawl's other clients do
        self.url = url
        self.prefix = prefix
        self._r: Any = client
        self._check_version()
        self.templates = _Templates(client, prefix)
        self.history = _History(client, prefix)
        self.pages = _PageCopies(client, prefix)

    def _check_version(self) -> None:
        meta = f"{self.prefix}:meta"
        found = self._r.hget(meta, "schema_version")
        if found is not None and found.decode() != str(STATE_SCHEMA_VERSION):
            logger.warning("state %s (%s): schema version %s, this boilerstrip writes %d: starting from empty state",
                           self.url, self.prefix, found.decode(), STATE_SCHEMA_VERSION)
            for key in self._r.scan_iter(match=f"{self.prefix}:*"):
                self._r.delete(key)
        self._r.hset(meta, "schema_version", str(STATE_SCHEMA_VERSION))

    def commit(self) -> None:
        pass  # every write is immediate

    def close(self) -> None:
        self._r = None
