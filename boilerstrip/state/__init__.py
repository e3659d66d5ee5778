"""What outlives a run, behind small interfaces; and the one place that knows where a crawl's files live.

- :mod:`.layout`: the output file, its side files (part, ledger, manifest, dead letters, report folder)
  and the state folder, derived from the output path in one place.
- :mod:`.base`: the interfaces. ``TemplateCounts`` keeps the per-site template *counts* (pages per site
  and cluster, pages per block hash: what workers must share), plus the latest block hashes of each URL
  so that a page crawled again replaces its earlier version. ``UrlHistory`` keeps per-URL fetch history
  (validators, main-text hash, first/last seen, last changed, last status). ``PageCopies`` keeps each
  page's last written record and outgoing links, so a recurring crawl re-emits a page the server answers
  304 for without downloading it.
- :mod:`.memory` and :mod:`.sqlite`: an in-memory backend (tests, ``state_dir=""``) and the embedded
  default (one SQLite file per state folder, with a schema-version row).
- :mod:`.redis_backend`: ``RedisState``, what the workers of a distributed crawl share
  (``BOILERSTRIP_STATE_DIR=redis://HOST:PORT/DB``).

A backend is chosen by the dotted path in ``BOILERSTRIP_STATE_BACKEND`` (see :func:`open_state`), so a
Redis one can plug in for distributed crawls. Pure Python: no Scrapy import.
"""

from .base import STATE_SCHEMA_VERSION, PageCopies, PageCopy, State, TemplateCounts, UrlHistory, UrlState
from .layout import (
    SCHEDULE_FILE,
    STATE_FOLDER,
    CrawlLayout,
    ScheduleLayout,
    crawl_layout,
    feed_output,
    resolve_state_dir,
    schedule_layout,
)
from .memory import MemoryState
from .open import StateParams, load_backend, open_state
from .redis_backend import RedisState
from .sqlite import STATE_FILE, SqliteState

__all__ = [
    "STATE_SCHEMA_VERSION", "State", "TemplateCounts", "UrlHistory", "UrlState", "PageCopies", "PageCopy",
    "STATE_FOLDER", "CrawlLayout", "crawl_layout", "feed_output", "resolve_state_dir", "SCHEDULE_FILE",
    "ScheduleLayout", "schedule_layout",
    "MemoryState", "RedisState", "SqliteState", "STATE_FILE", "StateParams", "load_backend", "open_state",
]
