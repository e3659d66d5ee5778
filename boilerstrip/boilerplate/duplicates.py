"""Exact and near-duplicate pages: exact by the hash of the cleaned text, near by MinHash + LSH.

:class:`DuplicateIndex` answers "is this page a duplicate of one already kept?" online (first kept wins,
as a crawl must). :func:`find_duplicates` decides over a whole set of pages with a fixed keep rule (the
shortest URL, then the lexicographically smallest): the same set gives the same answer in any order.
Only kept pages are indexed, so memory grows with distinct pages' signatures, not with duplicates.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from boilerstrip.minhash import NearDuplicateRecipe, band_keys, band_ranges, is_near_duplicate, signature, similarity, site_recipe

from .params import DuplicateParams

__all__ = ["DuplicateIndex", "Duplicate", "find_duplicates", "keep_order", "text_digest", "text_signature",
           "Signature", "near_recipe", "EXACT_DUPLICATE", "NEAR_DUPLICATE"]

EXACT_DUPLICATE = "exact_duplicate"
NEAR_DUPLICATE = "near_duplicate"


def keep_order(url: str) -> tuple[int, str]:
    """Sort key of the keep rule: of duplicate pages the shortest URL wins, then the smallest."""
    return (len(url), url)


def text_digest(text: str) -> str:
    """sha256 of the text with case and whitespace normalised (the exact-duplicate key)."""
    norm = " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())  # split(): the \s runs a regex finds
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Duplicate:
    reason: str  # EXACT_DUPLICATE | NEAR_DUPLICATE
    of: str  # the URL kept
    similarity: float  # 1.0 for exact, the estimated Jaccard for near


@dataclass(frozen=True)
class Signature:
    """What the duplicate checks need of a text (:func:`text_signature`): plain values, so a worker
    process can compute it."""

    digest: str | None  # text_digest, None when the text is too short for the exact check
    #: the MinHash (:func:`boilerstrip.minhash.signature` of the crawl's recipe: uint32 bytes, ``num_perm``
    #: values); None when the text has too few words for the near check
    hashvalues: bytes | None = None


def near_recipe(params: DuplicateParams) -> NearDuplicateRecipe:
    """The crawl's near-duplicate recipe with ``params``' threshold and sizes (boilerstrip/minhash.py)."""
    return site_recipe(params.near_min_jaccard, params.num_perm, params.shingle_words, params.near_min_words)


def text_signature(text: str, params: DuplicateParams) -> Signature:
    """The exact key and the MinHash of ``text`` (the crawl's recipe: words as written, word
    ``shingle_words``-grams, ``num_perm`` permutations, seed 1). A pure function: the finishing pass computes
    it in the crawl's worker processes."""
    text = text or ""
    if len(text.strip()) < params.exact_min_chars:
        return Signature(None)
    return Signature(text_digest(text), signature(text, near_recipe(params)))


class DuplicateIndex:
    """Exact and near duplicates of the pages kept so far. Near: MinHash LSH with the bands datasketch's
    ``MinHashLSH`` chooses for ``near_min_jaccard`` (b bands of r rows), kept compactly -- per band a dict
    from the band's hash to the kept pages' numbers, and each kept page's hash values as bytes (~1.5 KB a
    page, where ``MinHashLSH`` and a ``LeanMinHash`` per page take ~4 KB): the same candidates, the same
    estimated Jaccard, so the same answers."""

    def __init__(self, params: DuplicateParams) -> None:
        self.params = params
        self._exact: dict[str, str] = {}
        self._recipe = near_recipe(params)
        self._ranges = band_ranges(self._recipe)
        self._bands: list[dict[int, int | list[int]]] = [{} for _ in self._ranges]
        self._urls: list[str] = []  # kept page number -> URL
        self._values: list[bytes] = []  # kept page number -> its signature
        self._numbers: dict[str, int] = {}

    def _band_keys(self, values: bytes) -> list[tuple[int, int]]:
        return band_keys(values, self._recipe, self._ranges)

    def _candidates(self, keys: list[int]) -> set[int]:
        found: set[int] = set()
        for band, key in zip(self._bands, keys):
            hit = band.get(key)
            if hit is None:
                continue
            if isinstance(hit, int):
                found.add(hit)
            else:
                found.update(hit)
        return found

    def check(self, url: str, text: str, signature: Signature | None = None) -> tuple[Duplicate | None, object]:
        """(duplicate or None, what to pass to :meth:`add`) without adding. ``signature``: the text's
        :func:`text_signature` when it was computed elsewhere."""
        sig = signature if signature is not None else text_signature(text, self.params)
        if sig.digest is None:
            return None, None
        kept = self._exact.get(sig.digest)
        if kept is not None and kept != url:
            return Duplicate(EXACT_DUPLICATE, kept, 1.0), None
        values = sig.hashvalues
        if values is not None and self._urls:
            best: Duplicate | None = None
            keys = self._band_keys(values)
            candidates = sorted((self._urls[n] for n in self._candidates(keys)), key=keep_order)
            for key in candidates:
                if key == url:
                    continue
                estimate = similarity(values, self._values[self._numbers[key]])
                if is_near_duplicate(estimate, self._recipe) and (best is None or estimate > best.similarity):
                    best = Duplicate(NEAR_DUPLICATE, key, round(estimate, 4))
            if best is not None:
                return best, None
        return None, (sig.digest, values)

    def add(self, url: str, signature: object) -> None:
        if not signature:
            return
        digest, values = signature  # type: ignore[misc]
        self._exact.setdefault(digest, url)
        if values is not None and url not in self._numbers:
            number = len(self._urls)
            self._urls.append(url)
            self._values.append(values)
            self._numbers[url] = number
            for band, key in zip(self._bands, self._band_keys(values)):
                hit = band.get(key)
                if hit is None:
                    band[key] = number
                elif isinstance(hit, int):
                    band[key] = [hit, number]
                else:
                    hit.append(number)

    def check_and_add(self, url: str, text: str, signature: Signature | None = None) -> Duplicate | None:
        """Online use: a duplicate of a page kept earlier, or None (and the page is now kept)."""
        dup, signature = self.check(url, text, signature)
        if dup is None:
            self.add(url, signature)
        return dup

    def __len__(self) -> int:
        return len(self._exact)


def find_duplicates(pages: Iterable[tuple[str, str]], params: DuplicateParams) -> dict[str, Duplicate]:
    """url -> Duplicate for every page of ``(url, text)`` that duplicates a kept one; order-independent."""
    index = DuplicateIndex(params)
    out: dict[str, Duplicate] = {}
    for url, text in sorted(pages, key=lambda p: keep_order(p[0])):
        dup = index.check_and_add(url, text)
        if dup is not None:
            out[url] = dup
    return out
