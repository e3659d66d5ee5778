"""The embedded default backend: one SQLite file per state folder (``<state_dir>/state.sqlite3``).

Tables: ``meta`` (the ``schema_version`` row), ``template_pages`` (latest block hashes per URL),
``template_counts`` (pages per block hash per cluster; per site, their sum), ``template_scopes``
(pages per site and cluster), ``urls`` (per-URL history) and ``page_copies`` (each page's last record and
links, re-emitted on a 304). A file written with another schema version is
not read: its tables are dropped with a warning and the state is learned again. WAL mode, so a reader (a
``boilerstrip dedup`` of the same folder) does not block the crawl.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from boilerstrip.fastjson import lossless_json

from .base import STATE_SCHEMA_VERSION, PageCopy, SiteCounts, UrlState, packed_json, unpacked_json

__all__ = ["SqliteState", "STATE_FILE", "open_sqlite", "set_aside"]

logger = logging.getLogger(__name__)

STATE_FILE = "state.sqlite3"
_SITE = ""  # the cluster value of a site's own page count (template_scopes; template_counts holds clusters only)
_URL_FIELDS = [f.name for f in dataclasses.fields(UrlState)]
_PUT_URL = f"INSERT OR REPLACE INTO urls ({', '.join(_URL_FIELDS)}) VALUES ({', '.join('?' * len(_URL_FIELDS))})"
_TABLES = ("template_pages", "template_counts", "template_scopes", "urls", "page_copies")
#: the two tables written for every page of a crawl, keyed by their primary keys (WITHOUT ROWID: one
#: B-tree each, not a table and an index). ``template_counts`` holds the counts per cluster only: a block's
#: count in its site is their sum (every page is in one cluster). Half the rows, and with the one B-tree the
#: learning of the large-page site's 1,147 pages took 0.22 s instead of 0.61 s of the crawl's reactor
#: thread, reading its model 0.03 s instead of 0.13 s (2026-12-07, docs/crawling.md)
_TEMPLATE_TABLES = {
    "template_pages": "(site TEXT NOT NULL, url TEXT NOT NULL, cluster TEXT NOT NULL, hashes TEXT NOT NULL, "
                      "PRIMARY KEY (site, url)) WITHOUT ROWID",
    "template_counts": "(site TEXT NOT NULL, cluster TEXT NOT NULL, hash TEXT NOT NULL, pages INTEGER NOT NULL, "
                       "PRIMARY KEY (site, cluster, hash)) WITHOUT ROWID",
}
#: a file of an earlier boilerstrip (rowid tables, and site-wide rows, cluster "", in template_counts)
#: converted in place, in one transaction: the same counts read back
_MIGRATE_TEMPLATES = f"""
BEGIN;
CREATE TABLE template_pages_new {_TEMPLATE_TABLES["template_pages"]};
INSERT INTO template_pages_new SELECT site, url, cluster, hashes FROM template_pages;
DROP TABLE template_pages;
ALTER TABLE template_pages_new RENAME TO template_pages;
CREATE TABLE template_counts_new {_TEMPLATE_TABLES["template_counts"]};
INSERT INTO template_counts_new SELECT site, cluster, hash, pages FROM template_counts WHERE cluster != '{_SITE}';
DROP TABLE template_counts;
ALTER TABLE template_counts_new RENAME TO template_counts;
COMMIT;
"""
_SCHEMA = "".join(f"CREATE TABLE IF NOT EXISTS {name} {columns};\n" for name, columns in _TEMPLATE_TABLES.items()) + """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS template_scopes (site TEXT NOT NULL, cluster TEXT NOT NULL, pages INTEGER NOT NULL,
    PRIMARY KEY (site, cluster));
CREATE TABLE IF NOT EXISTS urls (url TEXT PRIMARY KEY, site TEXT NOT NULL, etag TEXT, last_modified TEXT,
    text_hash TEXT, first_seen TEXT, last_seen TEXT, last_changed TEXT, last_status INTEGER, last_outcome TEXT,
    settings_digest TEXT);
CREATE INDEX IF NOT EXISTS urls_site ON urls (site, url);
CREATE TABLE IF NOT EXISTS page_copies (url TEXT PRIMARY KEY, record TEXT NOT NULL, links TEXT NOT NULL);
"""


#: block-count changes held in memory before they are written (one upsert per distinct (site, cluster,
#: hash) in a batch, not one per page and block: a template block on every page costs one write a batch;
#: 0.9 s of the reactor thread's 8 s on docbook-xsl-doc-html's 1,085 pages were these upserts, one by one).
#: Bounded, so memory still grows with distinct blocks, not with pages.
_PENDING_MAX = 20_000


_INSERT_NEW_PAGE = ("INSERT INTO template_pages (site, url, cluster, hashes) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (site, url) DO NOTHING")


class _Templates:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        #: (site, cluster, hash) -> pages to add, and (site, cluster) -> pages to add: not yet written
        self._pending: dict[tuple[str, str, str], int] = {}
        self._pending_scopes: dict[tuple[str, str], int] = {}
        self._emptied: set[str] = set()  # sites whose counts went down: rows at 0 are deleted on flush

    def _apply(self, site: str, cluster: str, hashes: tuple[str, ...], sign: int) -> None:
        pending = self._pending
        for scope in (_SITE, cluster):
            key = (site, scope)
            self._pending_scopes[key] = self._pending_scopes.get(key, 0) + sign
        for h in hashes:  # the cluster's counts only: the site's are their sums (_counts)
            entry = (site, cluster, h)
            pending[entry] = pending.get(entry, 0) + sign
        if sign < 0:
            self._emptied.add(site)
        if len(pending) >= _PENDING_MAX:
            self.flush()

    def flush(self) -> None:
        """Write the counts held in memory (before every read of the counts, and at each commit)."""
        if self._pending_scopes:
            self._db.executemany(
                "INSERT INTO template_scopes (site, cluster, pages) VALUES (?, ?, ?) "
                "ON CONFLICT (site, cluster) DO UPDATE SET pages = pages + excluded.pages",
                [(site, scope, n) for (site, scope), n in self._pending_scopes.items() if n])
            self._pending_scopes.clear()
        if self._pending:
            self._db.executemany(
                "INSERT INTO template_counts (site, cluster, hash, pages) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (site, cluster, hash) DO UPDATE SET pages = pages + excluded.pages",
                [(site, scope, h, n) for (site, scope, h), n in self._pending.items() if n])
            self._pending.clear()
        for site in sorted(self._emptied):
            self._db.execute("DELETE FROM template_counts WHERE site = ? AND pages <= 0", (site,))
            self._db.execute("DELETE FROM template_scopes WHERE site = ? AND pages <= 0", (site,))
        self._emptied.clear()

    def put_page(self, site: str, url: str, cluster: str, hashes: Iterable[str]) -> None:
        if cluster == _SITE:
            raise ValueError("a cluster name must not be empty")
        kept = tuple(sorted({h for h in hashes if h}))
        row = (site, url, cluster, ",".join(kept))
        # a page new to the store (every page of a first crawl) is one statement; one stored before has its
        # old counts taken out first
        if not self._db.execute(_INSERT_NEW_PAGE, row).rowcount:
            self.remove_page(site, url)
            self._db.execute(_INSERT_NEW_PAGE, row)
        self._apply(site, cluster, kept, +1)

    def get_page(self, site: str, url: str) -> tuple[str, tuple[str, ...]] | None:
        row = self._db.execute("SELECT cluster, hashes FROM template_pages WHERE site = ? AND url = ?",
                               (site, url)).fetchone()
        return None if row is None else (row[0], tuple(h for h in row[1].split(",") if h))

    def remove_page(self, site: str, url: str) -> bool:
        old = self.get_page(site, url)
        if old is None:
            return False
        self._db.execute("DELETE FROM template_pages WHERE site = ? AND url = ?", (site, url))
        self._apply(site, old[0], old[1], -1)
        return True

    def _counts(self, site: str, cluster: str, min_pages: int = 1) -> SiteCounts:
        self.flush()
        row = self._db.execute("SELECT pages FROM template_scopes WHERE site = ? AND cluster = ?", (site, cluster)).fetchone()
        if cluster == _SITE:
            # (cluster "" rows left out: an earlier boilerstrip, run on this file after it was converted,
            # writes its site-wide rows there, which the sum would count twice)
            blocks = dict(self._db.execute(
                "SELECT hash, SUM(pages) AS n FROM template_counts WHERE site = ? AND cluster != ? GROUP BY hash "
                "HAVING n >= ?", (site, _SITE, min_pages)))
        else:
            blocks = dict(self._db.execute(
                "SELECT hash, pages FROM template_counts WHERE site = ? AND cluster = ? AND pages >= ?",
                (site, cluster, min_pages)))
        return (row[0] if row else 0), blocks

    def site_counts(self, site: str, min_pages: int = 1) -> SiteCounts:
        return self._counts(site, _SITE, min_pages)

    def cluster_counts(self, site: str, min_pages: int = 1) -> dict[str, SiteCounts]:
        self.flush()
        clusters = [c for (c,) in self._db.execute(
            "SELECT cluster FROM template_scopes WHERE site = ? AND cluster != ? ORDER BY cluster", (site, _SITE))]
        return {c: self._counts(site, c, min_pages) for c in clusters}

    def urls(self, site: str) -> Iterator[str]:
        for (url,) in self._db.execute("SELECT url FROM template_pages WHERE site = ? ORDER BY url", (site,)):
            yield url


class _History:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def get(self, url: str) -> UrlState | None:
        row = self._db.execute(f"SELECT {', '.join(_URL_FIELDS)} FROM urls WHERE url = ?", (url,)).fetchone()
        return None if row is None else UrlState(*row)

    def put(self, state: UrlState) -> None:
        # the fields one by one: dataclasses.astuple deep-copies every value (a fifth of the change step's time)
        self._db.execute(_PUT_URL, tuple(getattr(state, name) for name in _URL_FIELDS))

    def delete(self, url: str) -> bool:
        return self._db.execute("DELETE FROM urls WHERE url = ?", (url,)).rowcount > 0

    def iter_site(self, site: str) -> Iterator[UrlState]:
        rows = self._db.execute(f"SELECT {', '.join(_URL_FIELDS)} FROM urls WHERE site = ? ORDER BY url", (site,)).fetchall()
        for row in rows:
            yield UrlState(*row)

    def sites(self) -> list[str]:
        return [s for (s,) in self._db.execute("SELECT DISTINCT site FROM urls ORDER BY site")]


class _PageCopies:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def get(self, url: str) -> PageCopy | None:
        row = self._db.execute("SELECT record, links FROM page_copies WHERE url = ?", (url,)).fetchone()
        if row is None:
            return None
        return PageCopy(url, unpacked_json(row[0]), json.loads(row[1]))

    def put(self, copy: PageCopy) -> None:
        # the record compressed (a BLOB: packed_json), its links as JSON text; a lone surrogate in a hostile
        # page's text survives the trip (lossless_json: then ASCII escapes)
        self._db.execute("INSERT OR REPLACE INTO page_copies (url, record, links) VALUES (?, ?, ?)",
                         (copy.url, packed_json(copy.record), lossless_json(copy.links)))

    def delete(self, url: str) -> bool:
        return self._db.execute("DELETE FROM page_copies WHERE url = ?", (url,)).rowcount > 0


def open_sqlite(location: str | Path, file_name: str) -> tuple[Path, sqlite3.Connection]:
    """(path, connection) of ``location`` (a ``.sqlite3`` file, or a folder that gets ``file_name``),
    its folder created, in WAL mode: how every embedded store of boilerstrip opens its file."""
    path = Path(location)
    if path.suffix != ".sqlite3":
        path = path / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return path, db


def _expected_columns() -> dict[str, list[str]]:
    """Table -> its column names, as :data:`_SCHEMA` makes them (read from a scratch in-memory database)."""
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.executescript(_SCHEMA)
        return {table: [row[1] for row in scratch.execute(f"PRAGMA table_info({table})")] for table in ("meta", *_TABLES)}
    finally:
        scratch.close()


_COLUMNS = _expected_columns()


def set_aside(path: Path, stamp: str | None = None) -> Path:
    """Move an unreadable state file (and its ``-wal``/``-shm``) to ``<name>.broken-<UTC time>``; returns where."""
    from datetime import datetime, timezone

    stamp = stamp or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.replace(target.with_name(target.name + suffix))
    return target


class SqliteState:
    """A state file that is not a readable state (random bytes, cut short, another program's tables) is set
    aside (:func:`set_aside`, the path named in a warning) and the state starts empty: the next crawl
    fetches every page whole and calls it ``new``, and the runs after it are recurring again."""

    def __init__(self, state_dir: str | Path) -> None:
        try:
            self._open(state_dir)
        except sqlite3.DatabaseError as exc:
            broken = self.path
            aside = set_aside(broken)
            logger.warning("state %s is not a readable boilerstrip state (%s): moved to %s; starting from an empty "
                           "state (this crawl fetches every page and calls it new)", broken, exc, aside)
            self._open(state_dir)
        self.templates = _Templates(self._db)
        self.history = _History(self._db)
        self.pages = _PageCopies(self._db)

    def _open(self, state_dir: str | Path) -> None:
        self._db = None
        self.path = Path(state_dir) if Path(state_dir).suffix == ".sqlite3" else Path(state_dir) / STATE_FILE
        self.path, db = open_sqlite(state_dir, STATE_FILE)
        self._db = db
        try:
            check = db.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check: {check[0] if check else 'no answer'}")
            db.executescript(_SCHEMA)
            layout = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'template_counts'").fetchone()
            if "WITHOUT ROWID" not in layout[0].upper():
                db.executescript(_MIGRATE_TEMPLATES)
            for table, columns in _COLUMNS.items():
                found = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
                if found != columns:
                    raise sqlite3.DatabaseError(f"table {table} has columns {found}, expected {columns}")
            self._check_version()
            db.commit()
        except sqlite3.DatabaseError:
            db.close()
            self._db = None
            raise

    def _check_version(self) -> None:
        assert self._db is not None
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and row[0] != str(STATE_SCHEMA_VERSION):
            logger.warning("state %s: schema version %s, this boilerstrip writes %d: starting from empty state",
                           self.path, row[0], STATE_SCHEMA_VERSION)
            for table in _TABLES:
                self._db.execute(f"DELETE FROM {table}")
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                         (str(STATE_SCHEMA_VERSION),))

    def commit(self) -> None:
        if self._db is not None:
            self.templates.flush()
            self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            try:
                self.templates.flush()
                self._db.commit()
            finally:
                self._db.close()
                self._db = None
