"""The export's deduplication index: exact text digests and MinHash LSH bands of every exported document.

Kept in a folder with ``--index DIR`` (``DIR/dedup-index.sqlite3``) so that a later export leaves out what
an earlier one exported; without it the export uses a temporary one. Backends mirror
:mod:`boilerstrip.state`: SQLite by default (memory stays flat whatever the number of documents), an
in-memory one for tests, any other by dotted path (``--index-backend``). Nothing is visible to a later
export until :meth:`commit`, which the export calls once its shards are written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from boilerstrip.minhash import band_keys, recipe_words, signature, similarity
from boilerstrip.state.sqlite import open_sqlite

from .params import NearDedupParams

__all__ = ["DedupIndex", "MemoryDedupIndex", "SqliteDedupIndex", "INDEX_FILE", "INDEX_SCHEMA_VERSION",
           "MinHasher", "Match"]

INDEX_FILE = "dedup-index.sqlite3"
#: the layout and the MinHash recipe of a stored index; an index of another version is refused
INDEX_SCHEMA_VERSION = 1

#: (id, run, signature bytes)
Match = tuple[str, str, bytes]


class MinHasher:
    """The export's near-duplicate recipe (:func:`boilerstrip.minhash` ``TRAINING_RECIPE``, FineWeb's: text
    simplified -- case folded, accents and punctuation dropped, digits as 0 --, word n-grams,
    ``bands * rows_per_band`` permutations) with ``params``' sizes; the code is boilerstrip/minhash.py's,
    the crawl's duplicates use it too."""

    def __init__(self, params: NearDedupParams) -> None:
        self.params = params
        self.recipe = params.recipe()

    def words(self, text: str) -> list[str]:
        return recipe_words(text, self.recipe)

    def signature(self, text: str) -> bytes | None:
        """The MinHash signature (uint32 per permutation), or None for a text shorter than one shingle."""
        return signature(text, self.recipe)

    def band_keys(self, sig: bytes) -> list[tuple[int, int]]:
        """(band, key) per band (:func:`boilerstrip.minhash.band_keys`)."""
        return band_keys(sig, self.recipe)

    def similarity(self, a: bytes, b: bytes) -> float:
        """The estimated Jaccard similarity of two signatures (share of equal minima)."""
        return similarity(a, b)


@runtime_checkable
class DedupIndex(Protocol):
    """What the dedup steps need. ``run`` names the export that added a document (earlier exports win)."""

    def exact(self, digest: str) -> tuple[str, str] | None: ...  # (id, run) of the text digest
    def candidates(self, band_keys: list[tuple[int, int]]) -> list[Match]: ...
    def add(self, doc_id: str, url: str, digest: str, band_keys: list[tuple[int, int]], signature: bytes | None,
            run: str) -> None: ...
    def documents(self) -> int: ...
    def forget_run(self, run: str) -> int: ...  # the documents an export added, taken out; returns how many
    def commit(self) -> None: ...
    def close(self) -> None: ...


class MemoryDedupIndex:
    """Everything in dicts: for tests and small exports (memory grows with the documents)."""

    def __init__(self, folder: Any = None, params: NearDedupParams | None = None) -> None:
        self._exact: dict[str, tuple[str, str]] = {}
        self._bands: dict[tuple[int, int], str] = {}
        self._docs: dict[str, tuple[str, bytes | None]] = {}

    def exact(self, digest: str) -> tuple[str, str] | None:
        return self._exact.get(digest)

    def candidates(self, band_keys: list[tuple[int, int]]) -> list[Match]:
        ids = dict.fromkeys(self._bands[k] for k in band_keys if k in self._bands)
        return [(i, self._docs[i][0], self._docs[i][1] or b"") for i in ids]

    def add(self, doc_id: str, url: str, digest: str, band_keys: list[tuple[int, int]], signature: bytes | None,
            run: str) -> None:
        self._exact.setdefault(digest, (doc_id, run))
        for key in band_keys:
            self._bands.setdefault(key, doc_id)
        self._docs.setdefault(doc_id, (run, signature))

    def documents(self) -> int:
        return len(self._docs)

    def forget_run(self, run: str) -> int:
        gone = {doc_id for doc_id, (doc_run, _sig) in self._docs.items() if doc_run == run}
        self._exact = {d: entry for d, entry in self._exact.items() if entry[0] not in gone}
        self._bands = {k: doc_id for k, doc_id in self._bands.items() if doc_id not in gone}
        for doc_id in gone:
            del self._docs[doc_id]
        return len(gone)

    def commit(self) -> None:
        pass

    def close(self) -> None:
        pass


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, url TEXT NOT NULL, run TEXT NOT NULL, sig BLOB) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS exact (digest TEXT PRIMARY KEY, id TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bands (key INTEGER PRIMARY KEY, id TEXT NOT NULL);
"""


class SqliteDedupIndex:
    """One SQLite file (``<folder>/dedup-index.sqlite3``): docs, exact digests, LSH band buckets.
    The MinHash recipe is stored with it; an index made with other LSH settings is refused."""

    def __init__(self, folder: str | Path, params: NearDedupParams | None = None) -> None:
        path, db = open_sqlite(folder, INDEX_FILE)
        self.path = path
        self._db: sqlite3.Connection | None = db
        self._db.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages: the band B-tree's hot part
        self._db.executescript(_SCHEMA)
        recipe = _recipe(params or NearDedupParams())
        stored = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        if stored and stored.get("recipe") != recipe:
            self._db.close()
            self._db = None
            raise ValueError(f"dedup index {path} was made with {stored.get('recipe')!r}, this export uses "
                             f"{recipe!r}: use another --index folder")
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('recipe', ?)", (recipe,))
        self._db.commit()

    def exact(self, digest: str) -> tuple[str, str] | None:
        assert self._db is not None
        row = self._db.execute("SELECT e.id, d.run FROM exact e JOIN docs d ON d.id = e.id WHERE e.digest = ?",
                               (digest,)).fetchone()
        return None if row is None else (row[0], row[1])

    def candidates(self, band_keys: list[tuple[int, int]]) -> list[Match]:
        assert self._db is not None
        if not band_keys:
            return []
        rows = self._db.execute(
            f"SELECT DISTINCT d.id, d.run, d.sig FROM bands b JOIN docs d ON d.id = b.id "
            f"WHERE b.key IN ({','.join('?' * len(band_keys))})", [key for _, key in band_keys]).fetchall()
        return [(r[0], r[1], r[2] or b"") for r in rows]

    def add(self, doc_id: str, url: str, digest: str, band_keys: list[tuple[int, int]], signature: bytes | None,
            run: str) -> None:
        assert self._db is not None
        self._db.execute("INSERT OR IGNORE INTO docs (id, url, run, sig) VALUES (?, ?, ?, ?)",
                         (doc_id, url, run, signature))
        self._db.execute("INSERT OR IGNORE INTO exact (digest, id) VALUES (?, ?)", (digest, doc_id))
        if band_keys:
            self._db.executemany("INSERT OR IGNORE INTO bands (key, id) VALUES (?, ?)",
                                 [(key, doc_id) for _, key in band_keys])

    def documents(self) -> int:
        assert self._db is not None
        return int(self._db.execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    def forget_run(self, run: str) -> int:
        """Take out the documents export ``run`` added (an export that replaces it in its folder), in the
        transaction :meth:`commit` ends: an export that fails leaves them in. A band bucket the run's document
        held goes with it (a later document that shared it was not stored there: its other bands remain)."""
        assert self._db is not None
        db = self._db
        gone = [row[0] for row in db.execute("SELECT id FROM docs WHERE run = ?", (run,))]
        if not gone:
            return 0
        db.execute("CREATE TEMP TABLE IF NOT EXISTS forgotten (id TEXT PRIMARY KEY) WITHOUT ROWID")
        db.execute("DELETE FROM forgotten")
        db.executemany("INSERT OR IGNORE INTO forgotten (id) VALUES (?)", [(doc_id,) for doc_id in gone])
        db.execute("DELETE FROM exact WHERE id IN (SELECT id FROM forgotten)")
        db.execute("DELETE FROM bands WHERE id IN (SELECT id FROM forgotten)")
        db.execute("DELETE FROM docs WHERE run = ?", (run,))
        return len(gone)

    def commit(self) -> None:
        if self._db is not None:
            self._db.commit()

    def close(self) -> None:
        """Closes without committing: an export that failed leaves the index as it was."""
        if self._db is not None:
            self._db.rollback()
            self._db.close()
            self._db = None


def _recipe(params: NearDedupParams) -> str:
    return (f"v{INDEX_SCHEMA_VERSION} minhash shingle_words={params.shingle_words} bands={params.bands} "
            f"rows={params.rows_per_band} seed={params.seed}")
