"""The in-memory backend: for tests, batch use and ``BOILERSTRIP_STATE_DIR=""`` (nothing outlives the run)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from .base import PageCopy, SiteCounts, UrlState

__all__ = ["MemoryTemplateCounts", "MemoryUrlHistory", "MemoryPageCopies", "MemoryState"]


class MemoryTemplateCounts:
    def __init__(self) -> None:
        self._pages: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {}
        self._site: dict[str, list[Any]] = {}  # site -> [pages, Counter]
        self._cluster: dict[tuple[str, str], list[Any]] = {}

    def _apply(self, site: str, cluster: str, hashes: tuple[str, ...], sign: int) -> None:
        for entry in (self._site.setdefault(site, [0, Counter()]), self._cluster.setdefault((site, cluster), [0, Counter()])):
            entry[0] += sign
            counter: Counter = entry[1]
            for h in hashes:
                counter[h] += sign
                if counter[h] <= 0:
                    del counter[h]

    def put_page(self, site: str, url: str, cluster: str, hashes: Iterable[str]) -> None:
        self.remove_page(site, url)
        kept = tuple(sorted({h for h in hashes if h}))
        self._pages.setdefault(site, {})[url] = (cluster, kept)
        self._apply(site, cluster, kept, +1)

    def get_page(self, site: str, url: str) -> tuple[str, tuple[str, ...]] | None:
        return self._pages.get(site, {}).get(url)

    def remove_page(self, site: str, url: str) -> bool:
        old = self._pages.get(site, {}).pop(url, None)
        if old is None:
            return False
        self._apply(site, old[0], old[1], -1)
        return True

    def site_counts(self, site: str, min_pages: int = 1) -> SiteCounts:
        pages, counter = self._site.get(site, (0, Counter()))
        return pages, {h: n for h, n in counter.items() if n >= min_pages}

    def cluster_counts(self, site: str, min_pages: int = 1) -> dict[str, SiteCounts]:
        return {c: (e[0], {h: n for h, n in e[1].items() if n >= min_pages})
                for (s, c), e in sorted(self._cluster.items()) if s == site and e[0] > 0}

    def urls(self, site: str) -> Iterator[str]:
        yield from sorted(self._pages.get(site, {}))


class MemoryUrlHistory:
    def __init__(self) -> None:
        self._states: dict[str, UrlState] = {}

    def get(self, url: str) -> UrlState | None:
        return self._states.get(url)

    def put(self, state: UrlState) -> None:
        self._states[state.url] = state

    def delete(self, url: str) -> bool:
        return self._states.pop(url, None) is not None

    def iter_site(self, site: str) -> Iterator[UrlState]:
        yield from (s for _, s in sorted(self._states.items()) if s.site == site)

    def sites(self) -> list[str]:
        return sorted({s.site for s in self._states.values()})


class MemoryPageCopies:
    def __init__(self) -> None:
        self._copies: dict[str, PageCopy] = {}

    def get(self, url: str) -> PageCopy | None:
        copy = self._copies.get(url)
        # a copy, as a store that serialises would give: a caller changing it changes nothing stored
        return None if copy is None else PageCopy(copy.url, json.loads(json.dumps(copy.record)), json.loads(json.dumps(copy.links)))

    def put(self, copy: PageCopy) -> None:
        self._copies[copy.url] = PageCopy(copy.url, json.loads(json.dumps(copy.record)), json.loads(json.dumps(copy.links)))

    def delete(self, url: str) -> bool:
        return self._copies.pop(url, None) is not None


class MemoryState:
    def __init__(self, state_dir: Any = None) -> None:
        self.templates = MemoryTemplateCounts()
        self.history = MemoryUrlHistory()
        self.pages = MemoryPageCopies()

    def commit(self) -> None:
        pass

    def close(self) -> None:
        pass
