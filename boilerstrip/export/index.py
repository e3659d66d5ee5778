"""The export's deduplication index: exact text digests and MinHash LSH bands of every exported document.

Kept in a folder with ``--index DIR`` (``DIR/dedup-index.sqlite3``) so that a later export leaves out what
an earlier one exported; without it the export uses a temporary one. Backends mirror
:mod:`boilerstrip.state`: SQLite by default (memory stays flat whatever the number of documents), an
in-memory one for tests, any other by dotted path (``--index-backend``). Nothing is visible to a later
export until :meth:`commit`, which the export calls once its shards are written.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import unicodedata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from boilerstrip.state.sqlite import open_sqlite

from .params import NearDedupParams

__all__ = ["DedupIndex", "MemoryDedupIndex", "SqliteDedupIndex", "INDEX_FILE", "INDEX_SCHEMA_VERSION",
           "MinHasher", "Match"]

INDEX_FILE = "dedup-index.sqlite3"
#: the layout and the MinHash recipe of a stored index; an index of another version is refused
INDEX_SCHEMA_VERSION = 1

_WORD_RE = re.compile(r"\w+")
_DIGIT_RE = re.compile(r"\d")
#: (id, run, signature bytes)
Match = tuple[str, str, bytes]


class MinHasher:
    """MinHash signatures and LSH band keys of texts, FineWeb's recipe: text simplified (case folded,
    accents and punctuation dropped, digits as 0), word n-grams, ``bands * rows_per_band`` permutations."""

    def __init__(self, params: NearDedupParams) -> None:
        import numpy as np
        from datasketch import MinHash

        self.params = params
        self._np = np
        self._template = MinHash(num_perm=params.num_perm, seed=params.seed)

    def words(self, text: str) -> list[str]:
        folded = text.casefold()
        if not folded.isascii():
            folded = "".join(ch for ch in unicodedata.normalize("NFD", folded) if not unicodedata.combining(ch))
        return _WORD_RE.findall(_DIGIT_RE.sub("0", folded))

    def signature(self, text: str) -> bytes | None:
        """The MinHash signature (uint32 per permutation), or None for a text shorter than one shingle."""
        words = self.words(text)
        k = self.params.shingle_words
        if len(words) < max(k, self.params.min_words):
            return None
        shingles = {" ".join(words[i : i + k]).encode("utf-8") for i in range(len(words) - k + 1)}
        mh = self._template.copy()
        mh.update_batch(list(shingles))
        return mh.hashvalues.astype(self._np.uint32).tobytes()

    def band_keys(self, signature: bytes) -> list[tuple[int, int]]:
        """(band, key) per band: a 63-bit hash of the band number and its rows (one SQLite INTEGER column
        holds every band's buckets; two bands never share a key)."""
        width = self.params.rows_per_band * 4
        return [(band, int.from_bytes(hashlib.blake2b(band.to_bytes(2, "big") + signature[band * width : (band + 1) * width],
                                                      digest_size=8).digest(), "big") >> 1)
                for band in range(self.params.bands)]

    def similarity(self, a: bytes, b: bytes) -> float:
        """The estimated Jaccard similarity of two signatures (share of equal minima)."""
        np = self._np
        return float((np.frombuffer(a, dtype=np.uint32) == np.frombuffer(b, dtype=np.uint32)).mean())


@runtime_checkable
class DedupIndex(Protocol):
    """What the dedup steps need. ``run`` names the export that added a document (earlier exports win)."""

    def exact(self, digest: str) -> tuple[str, str] | None: ...  # (id, run) of the text digest
    def candidates(self, band_keys: list[tuple[int, int]]) -> list[Match]: ...
    def add(self, doc_id: str, url: str, digest: str, band_keys: list[tuple[int, int]], signature: bytes | None,
            run: str) -> None: ...
    def documents(self) -> int: ...
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
