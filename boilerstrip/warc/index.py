"""An on-disk index of a set of WARC files: where each record is, grouped by site (SQLite).

``build_index`` scans the files once (:func:`boilerstrip.warc.read.scan_warc`) and writes one row per
record; memory holds one record at a time, whatever the files' size. ``WarcIndex`` then hands the records
back site by site (``sites``, ``entries_of``), and finds a URL's response (``response_for``: a replayed
crawl's robots.txt). The counts of what the files held are in ``summary``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .params import WarcReadParams
from .read import WarcEntry, scan_warc

__all__ = ["WarcIndex", "IndexedEntry", "build_index", "site_of"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (no INTEGER PRIMARY KEY, path TEXT NOT NULL, error TEXT);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY, site TEXT NOT NULL, file_no INTEGER NOT NULL, offset INTEGER NOT NULL,
    length INTEGER NOT NULL, inner INTEGER NOT NULL, gzip INTEGER NOT NULL, kind TEXT NOT NULL,
    url TEXT, error TEXT, detail TEXT, block_bytes INTEGER NOT NULL, record_id TEXT, refers_to TEXT
);
"""
#: rows written between commits while the index is built
_COMMIT_ROWS = 5000


def site_of(url: str | None) -> str:
    """``scheme://host:port`` of an http(s) URL, lower case; "" for anything else (grouped apart)."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}:{port}"


@dataclass(frozen=True)
class IndexedEntry:
    """A row of the index: a record's place, kind, URL and error (a :class:`WarcEntry` without headers)."""

    id: int
    site: str
    file: str
    offset: int
    length: int
    inner: int
    gzip: bool
    kind: str
    url: str | None
    error: str | None
    detail: str
    block_bytes: int

    def as_entry(self) -> WarcEntry:
        return WarcEntry(self.file, self.offset, self.length, self.inner, self.gzip, [], self.block_bytes,
                         self.error, self.detail)


def build_index(files: Iterable[str | Path], path: str | Path, params: WarcReadParams | None = None,
                progress: Callable[[int], None] | None = None) -> WarcIndex:
    """Scan ``files`` into a new index at ``path``; a file that cannot be opened is noted (``file_errors``)."""
    Path(path).unlink(missing_ok=True)
    db = sqlite3.connect(str(path))
    db.executescript(_SCHEMA)
    rows = 0
    for no, name in enumerate(files):
        try:
            entries = scan_warc(name, params)
            db.execute("INSERT INTO files (no, path) VALUES (?, ?)", (no, str(name)))
            for entry in entries:
                url = entry.url
                kind = entry.kind or ("" if entry.error else "unknown")
                refers = entry.header("WARC-Concurrent-To") or entry.header("WARC-Refers-To")
                db.execute(
                    "INSERT INTO entries (site, file_no, offset, length, inner, gzip, kind, url, error, detail, "
                    "block_bytes, record_id, refers_to) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (site_of(url), no, entry.offset, entry.length, entry.inner, int(entry.gzip), kind, url,
                     entry.error, entry.detail, entry.block_bytes, entry.header("WARC-Record-ID"), refers))
                rows += 1
                if rows % _COMMIT_ROWS == 0:
                    db.commit()
                    if progress is not None:
                        progress(rows)
        except OSError as exc:
            db.execute("INSERT OR REPLACE INTO files (no, path, error) VALUES (?, ?, ?)",
                       (no, str(name), exc.strerror or str(exc)))
    db.execute("CREATE INDEX IF NOT EXISTS by_site ON entries (site, id)")
    db.execute("CREATE INDEX IF NOT EXISTS by_url ON entries (url, kind)")
    db.commit()
    db.close()
    return WarcIndex(path)


class WarcIndex:
    """An index :func:`build_index` wrote (read only; one thread)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.db = sqlite3.connect(self.path)
        self.files = {no: name for no, name in self.db.execute("SELECT no, path FROM files")}

    def close(self) -> None:
        self.db.close()

    def file_errors(self) -> list[tuple[str, str]]:
        return list(self.db.execute("SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY no"))

    def _entry(self, row: tuple) -> IndexedEntry:
        id_, site, file_no, offset, length, inner, gzip, kind, url, error, detail, block = row
        return IndexedEntry(id_, site, self.files[file_no], offset, length, inner, bool(gzip), kind, url, error,
                            detail or "", block)

    _COLUMNS = "id, site, file_no, offset, length, inner, gzip, kind, url, error, detail, block_bytes"

    def sites(self) -> list[str]:
        """Every site with records, in order ("" holds the records of no http(s) site)."""
        return [site for (site,) in self.db.execute("SELECT DISTINCT site FROM entries ORDER BY site")]

    def entries_of(self, site: str) -> Iterator[IndexedEntry]:
        """The records of ``site`` in file order."""
        cursor = self.db.execute(f"SELECT {self._COLUMNS} FROM entries WHERE site = ? ORDER BY id", (site,))
        for row in cursor.fetchall():  # a site's rows (small) read at once: the caller may query meanwhile
            yield self._entry(row)

    def response_for(self, url: str) -> IndexedEntry | None:
        """The first readable response record of ``url``."""
        row = self.db.execute(f"SELECT {self._COLUMNS} FROM entries WHERE url = ? AND kind = 'response' "
                              "AND error IS NULL ORDER BY id LIMIT 1", (url,)).fetchone()
        return self._entry(row) if row else None

    def summary(self) -> dict[str, int]:
        """Records by kind (``response``, ``request``, ``metadata``...), and unreadable ones as ``error``."""
        counts = {f"{kind or 'unknown'}": n for kind, n in
                  self.db.execute("SELECT kind, COUNT(*) FROM entries WHERE error IS NULL GROUP BY kind")}
        errors = self.db.execute("SELECT COUNT(*) FROM entries WHERE error IS NOT NULL").fetchone()[0]
        if errors:
            counts["unreadable"] = errors
        return counts
