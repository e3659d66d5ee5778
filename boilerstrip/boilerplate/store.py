"""Where a site's template model lives between crawls: a small store interface and two stores.

A store keeps, per site, the latest version of every page it has seen: ``url -> (cluster, block
hashes)``. The model is rebuilt from it (counts only, in memory). How old and new pages combine: a page
crawled again *replaces* its earlier version (keyed by URL); pages not crawled again keep counting. So a
later crawl of the same site starts warm, re-crawling never double-counts, and the model depends only on
the set of (URL, latest blocks): deterministic. Pages that disappeared from a site keep counting until
the state folder is removed (documented limitation).

``SqliteTemplateStore`` is the embedded default (one file in the state folder); ``MemoryTemplateStore``
is for tests and ``state_dir=""``. A Redis store for distributed crawls implements the same five methods.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from .blocks import HASH_VERSION
from .model import TemplateModel

__all__ = ["TemplateStore", "MemoryTemplateStore", "SqliteTemplateStore", "StoredPage", "load_site",
           "STATE_FILE", "STATE_FOLDER", "resolve_state_dir", "open_store"]

logger = logging.getLogger(__name__)

STATE_FILE = "templates.sqlite3"
STATE_FOLDER = ".boilerstrip-state"
StoredPage = tuple[str, tuple[str, ...]]  # (cluster, block hashes)


class TemplateStore(Protocol):
    def get_page(self, site: str, url: str) -> StoredPage | None: ...
    def put_page(self, site: str, url: str, cluster: str, hashes: tuple[str, ...]) -> None: ...
    def iter_pages(self, site: str) -> Iterator[tuple[str, str, tuple[str, ...]]]: ...
    def commit(self) -> None: ...
    def close(self) -> None: ...


class MemoryTemplateStore:
    def __init__(self) -> None:
        self._pages: dict[str, dict[str, StoredPage]] = {}

    def get_page(self, site: str, url: str) -> StoredPage | None:
        return self._pages.get(site, {}).get(url)

    def put_page(self, site: str, url: str, cluster: str, hashes: tuple[str, ...]) -> None:
        self._pages.setdefault(site, {})[url] = (cluster, tuple(sorted(set(hashes))))

    def iter_pages(self, site: str) -> Iterator[tuple[str, str, tuple[str, ...]]]:
        for url, (cluster, hashes) in sorted(self._pages.get(site, {}).items()):
            yield url, cluster, hashes

    def commit(self) -> None:
        pass

    def close(self) -> None:
        pass


class SqliteTemplateStore:
    """``<state_dir>/templates.sqlite3``; one row per (site, url) with the page's block hashes.

    The ``meta`` table records the block hash version (``blocks.HASH_VERSION``) the hashes were made
    with. A DB written with another version (or before versions were recorded) holds hashes this code
    cannot match: its pages are dropped with a log line and the model learns the site again.
    """

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if path.suffix == "" or path.is_dir():
            path = path / STATE_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path), timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS pages (site TEXT NOT NULL, url TEXT NOT NULL, cluster TEXT NOT NULL,"
            " hashes TEXT NOT NULL, PRIMARY KEY (site, url))"
        )
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._check_hash_version()
        self._db.commit()

    def _check_hash_version(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key='hash_version'").fetchone()
        version = row[0] if row else None
        if version == str(HASH_VERSION):
            return
        stale = self._db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        if stale:
            logger.warning("template store %s: %d stored pages were hashed with block hash version %s, not %d;"
                           " ignoring them (the model learns those sites again)", self.path, stale,
                           version or 1, HASH_VERSION)
            self._db.execute("DELETE FROM pages")
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('hash_version', ?)", (str(HASH_VERSION),))

    def get_page(self, site: str, url: str) -> StoredPage | None:
        row = self._db.execute("SELECT cluster, hashes FROM pages WHERE site=? AND url=?", (site, url)).fetchone()
        if row is None:
            return None
        return row[0], tuple(h for h in row[1].split(",") if h)

    def put_page(self, site: str, url: str, cluster: str, hashes: tuple[str, ...]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO pages (site, url, cluster, hashes) VALUES (?, ?, ?, ?)",
            (site, url, cluster, ",".join(sorted(set(hashes)))),
        )

    def iter_pages(self, site: str) -> Iterator[tuple[str, str, tuple[str, ...]]]:
        rows = self._db.execute("SELECT url, cluster, hashes FROM pages WHERE site=? ORDER BY url", (site,))
        for url, cluster, hashes in rows:
            yield url, cluster, tuple(h for h in hashes.split(",") if h)

    def commit(self) -> None:
        self._db.commit()

    def close(self) -> None:
        try:
            self._db.commit()
        finally:
            self._db.close()


def load_site(model: TemplateModel, store: TemplateStore, site: str, exclude: set[str] | frozenset[str] = frozenset()) -> int:
    """Add the stored pages of ``site`` (except URLs in ``exclude``) to ``model``; return how many."""
    n = 0
    for url, cluster, hashes in store.iter_pages(site):
        if url in exclude:
            continue
        model.add_page(site, cluster, hashes)
        n += 1
    return n


def resolve_state_dir(state_dir: str, output: str | Path | None = None) -> Path | None:
    """The state folder for ``state_dir`` ("auto", "" or a path); "auto" puts it next to ``output``."""
    if not state_dir:
        return None
    if state_dir != "auto":
        return Path(state_dir)
    if output:
        text = str(output)
        if text.startswith("file://"):
            text = text[len("file://"):]
        if "://" not in text:
            return Path(text).expanduser().resolve().parent / STATE_FOLDER
    return Path(STATE_FOLDER)


def open_store(state_dir: Path | None) -> TemplateStore:
    """A SQLite store in ``state_dir``, or a memory store when it is None."""
    return SqliteTemplateStore(state_dir) if state_dir is not None else MemoryTemplateStore()
