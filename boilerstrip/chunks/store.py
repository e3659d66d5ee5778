"""The chunk IDs each page had at the last run: what ``boilerstrip chunk --state DIR`` compares with.

``ChunkStore`` is the interface; ``SqliteChunkStore`` the embedded default, one file in the state folder
(``<DIR>/chunks.sqlite3``, WAL mode, opened as every store of boilerstrip is, with a schema-version row);
``MemoryChunkStore`` the in-memory one for tests. A run writes in one transaction, committed when the run
succeeds: a run that fails leaves the IDs of the run before. The store also keeps the *recipe* (chunk sizes
and tokenizer) the IDs were cut with: another recipe cuts other chunks, so every page's chunks are then
reported new and the old ones removed.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

from boilerstrip.state.sqlite import open_sqlite

__all__ = ["ChunkStore", "SqliteChunkStore", "MemoryChunkStore", "CHUNK_STATE_FILE", "CHUNK_SCHEMA_VERSION"]

logger = logging.getLogger(__name__)

CHUNK_STATE_FILE = "chunks.sqlite3"
#: the layout of the chunk store; a file with another version is emptied (every chunk is then new)
CHUNK_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, ids TEXT NOT NULL);
"""


@runtime_checkable
class ChunkStore(Protocol):
    def get(self, url: str) -> tuple[str, ...] | None: ...
    def put(self, url: str, ids: tuple[str, ...]) -> None: ...
    def delete(self, url: str) -> bool: ...
    def urls(self) -> Iterator[str]: ...
    def recipe(self) -> str | None: ...
    def set_recipe(self, recipe: str) -> None: ...
    def commit(self) -> None: ...
    def close(self) -> None: ...


class MemoryChunkStore:
    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, ...]] = {}
        self._recipe: str | None = None

    def get(self, url: str) -> tuple[str, ...] | None:
        return self.pages.get(url)

    def put(self, url: str, ids: tuple[str, ...]) -> None:
        self.pages[url] = tuple(ids)

    def delete(self, url: str) -> bool:
        return self.pages.pop(url, None) is not None

    def urls(self) -> Iterator[str]:
        yield from sorted(self.pages)

    def recipe(self) -> str | None:
        return self._recipe

    def set_recipe(self, recipe: str) -> None:
        self._recipe = recipe

    def commit(self) -> None:
        pass

    def close(self) -> None:
        pass


class SqliteChunkStore:
    def __init__(self, state_dir: str | Path) -> None:
        self.path, db = open_sqlite(state_dir, CHUNK_STATE_FILE)
        self._db: sqlite3.Connection = db
        self._db.executescript(_SCHEMA)
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and row[0] != str(CHUNK_SCHEMA_VERSION):
            logger.warning("chunk state %s: schema version %s, this boilerstrip writes %d: starting from empty "
                           "state (every chunk is new)", self.path, row[0], CHUNK_SCHEMA_VERSION)
            self._db.execute("DELETE FROM pages")
            self._db.execute("DELETE FROM meta WHERE key = 'recipe'")
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                         (str(CHUNK_SCHEMA_VERSION),))
        self._db.commit()

    def get(self, url: str) -> tuple[str, ...] | None:
        row = self._db.execute("SELECT ids FROM pages WHERE url = ?", (url,)).fetchone()
        return None if row is None else tuple(i for i in row[0].split(",") if i)

    def put(self, url: str, ids: tuple[str, ...]) -> None:
        self._db.execute("INSERT OR REPLACE INTO pages (url, ids) VALUES (?, ?)", (url, ",".join(ids)))

    def delete(self, url: str) -> bool:
        return self._db.execute("DELETE FROM pages WHERE url = ?", (url,)).rowcount > 0

    def urls(self) -> Iterator[str]:
        yield from [url for (url,) in self._db.execute("SELECT url FROM pages ORDER BY url")]

    def recipe(self) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'recipe'").fetchone()
        return None if row is None else row[0]

    def set_recipe(self, recipe: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('recipe', ?)", (recipe,))

    def commit(self) -> None:
        self._db.commit()

    def close(self) -> None:
        """Close without committing: what was not committed is rolled back."""
        self._db.close()
