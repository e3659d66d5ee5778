"""What "near duplicate" means, in one place: the MinHash recipe of the crawl (and ``boilerstrip dedup``)
and the one of ``boilerstrip export``, one implementation.

A :class:`NearDuplicateRecipe` names everything a near-duplicate judgement depends on: the text's normal
form (case folded words; with ``fold_digits_and_accents`` also accents dropped and every digit read as 0,
FineWeb's simplification), word ``shingle_words``-gram shingles, datasketch's MinHash over ``num_perm``
permutations (seed ``seed``; its hash values are below 2**32 and are kept as uint32 bytes), the LSH bands a
candidate must share one of, and ``min_jaccard``, the estimated Jaccard similarity a candidate must reach.
:func:`signature`, :func:`band_ranges`, :func:`band_keys`, :func:`similarity` and
:func:`is_near_duplicate` are the only code that computes them, for both users.

Two recipes, measured (docs/cross-page.md, "One near-duplicate module, two recipes"):
:func:`site_recipe` (the crawl: is this the same page as one kept?) keeps digits, since on documentation
sites they name the page (``section.level1.properties`` and ``section.level2.properties``, release notes
3.19.1 and 3.19.2), and requires Jaccard >= 0.9; :data:`TRAINING_RECIPE` (export: would this document
repeat one in a training set?) is FineWeb's, any shared band of 14 x 8.

Pure: no Scrapy, no datasketch (whose package imports scipy): datasketch's MinHash is computed here with
numpy, imported when a signature is first computed, and MinHashLSH's choice of bands and the similarity of
two signatures in plain Python; tests compare them with datasketch's own.
"""

from __future__ import annotations

import hashlib
import math
import operator
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["NearDuplicateRecipe", "site_recipe", "TRAINING_RECIPE", "recipe_words", "signature", "band_ranges",
           "band_keys", "similarity", "is_near_duplicate", "optimal_bands", "ascii_fold_table", "words64_hash",
           "shingle_values", "minhash_of"]

_WORD_RE = re.compile(r"\w+")
_DIGIT_RE = re.compile(r"\d")
#: bytes per hash value in a signature (datasketch's values are below 2**32)
_VALUE_BYTES = 4
#: shingles handed to datasketch's ``update_batch`` at a time: it works on a (shingles x num_perm) array, and
#: one of 512 x 128 uint32 (256 KiB) stays in the CPU's cache where a page's whole 1,400 x 128 did not. The
#: same minima (a minimum of minima); 0.3 against 0.9-1.1 ms a page on the large-page site's 400 first pages
#: (2026-12-06, one process, quiet machine; 256: 0.33, 128: 0.46)
_UPDATE_ROWS = 512
_SHINGLE_HASHES = ("sha1", "words64")


@dataclass(frozen=True)
class NearDuplicateRecipe:
    # FineWeb's text simplification: accents dropped and digits read as 0 (export); the crawl keeps both
    fold_digits_and_accents: bool
    # the estimated Jaccard similarity (share of equal minima) a candidate must reach to be a near duplicate
    min_jaccard: float
    num_perm: int
    # LSH bands; None: the bands datasketch's MinHashLSH picks for min_jaccard over num_perm
    bands: int | None = None
    shingle_words: int = 5
    # a text with fewer words than this (or than one shingle) has no signature: compared exactly only
    min_words: int = 5
    seed: int = 1
    #: the 32-bit value of each shingle before the permutations: "sha1", datasketch's default
    #: (``sha1_hash32``: what a signature kept beyond one run is made with, the export's index), or
    #: "words64" (:func:`words64_hash`, worked out over a whole text in numpy), for signatures that live
    #: within one run only (the crawl's finishing pass): 0.08 ms a page of 1,400 words against SHA-1's 0.82
    #: (the large-page site of crawl_benchmark.py). The permutations are datasketch's either way; a shingle
    #: hash need only tell distinct shingles apart
    shingle_hash: str = "sha1"

    def __post_init__(self) -> None:
        if self.shingle_words < 1 or self.num_perm < 1 or not 0.0 <= self.min_jaccard <= 1.0:
            raise ValueError("shingle_words and num_perm must be >= 1, min_jaccard in [0, 1]")
        if self.shingle_hash not in _SHINGLE_HASHES:
            raise ValueError(f"shingle_hash must be one of {_SHINGLE_HASHES}, got {self.shingle_hash!r}")
        if self.bands is not None and not 1 <= self.bands <= self.num_perm:
            raise ValueError(f"bands must be in [1, num_perm], got {self.bands}")


def site_recipe(min_jaccard: float = 0.9, num_perm: int = 128, shingle_words: int = 5,
                min_words: int = 50) -> NearDuplicateRecipe:
    """The crawl's recipe (``DuplicateParams`` fields): words as written, bands for ``min_jaccard``; its
    signatures are compared within one finishing pass only, so its shingles are hashed with "words64"."""
    return NearDuplicateRecipe(fold_digits_and_accents=False, min_jaccard=min_jaccard, num_perm=num_perm,
                               shingle_words=shingle_words, min_words=min_words, shingle_hash="words64")


#: export's recipe, FineWeb's (datatrove MinhashConfig): 14 bands of 8 rows, any shared band (a pair at
#: Jaccard 0.75 shares one with probability ~0.77, at 0.85 ~0.99, at 0.5 ~0.05)
TRAINING_RECIPE = NearDuplicateRecipe(fold_digits_and_accents=True, min_jaccard=0.0, num_perm=112, bands=14)


def ascii_fold_table(digits_to_zero: bool, marked: re.Pattern[str] | None = None, mark: bytes = b"\x00") -> bytes:
    """A ``bytes.translate`` table that reads ASCII text as its case-folded ``\\w+`` words, space-separated
    (``\\w`` is ``[A-Za-z0-9_]`` there, case folding is lower-casing, NFKC and NFD change nothing): a word
    character becomes its small letter (a digit "0" with ``digits_to_zero``), a character ``marked`` matches
    becomes ``mark`` (for a caller that reads such text another way), any other character a space. Used by
    :func:`recipe_words` and ``boilerplate.blocks.normalise_block``."""
    table = bytearray(b" " * 256)
    for code in range(128):
        char = chr(code)
        if marked is not None and marked.match(char):
            table[code] = mark[0]
        elif _WORD_RE.match(char):
            table[code] = ord("0") if digits_to_zero and char.isdigit() else ord(char.lower())
    return bytes(table)


#: fold_digits_and_accents -> the table (``recipe_words`` of ASCII text, most pages: a byte translation and a
#: split, 0.1 against 0.27 ms a page of 11,000 characters, the large-page site's, 2026-12-07)
_ASCII_WORDS = {False: ascii_fold_table(False), True: ascii_fold_table(True)}


def recipe_words(text: str, recipe: NearDuplicateRecipe) -> list[str]:
    """The words of ``text`` the recipe's shingles are made of (its normal form: module docstring)."""
    text = text or ""
    if text.isascii():
        return _ascii_words(text, recipe).decode("ascii").split()
    return _words_by_patterns(text, recipe)


def _ascii_words(text: str, recipe: NearDuplicateRecipe) -> bytes:
    """An ASCII text's recipe words as bytes, separated by runs of spaces (``_ASCII_WORDS``)."""
    return text.encode("ascii").translate(_ASCII_WORDS[bool(recipe.fold_digits_and_accents)])


def _words_by_patterns(text: str, recipe: NearDuplicateRecipe) -> list[str]:
    """``recipe_words`` for any text (ASCII text takes the byte table's shorter way: ``_ASCII_WORDS``)."""
    folded = text.casefold()
    if recipe.fold_digits_and_accents:
        if not folded.isascii():
            folded = "".join(ch for ch in unicodedata.normalize("NFD", folded) if not unicodedata.combining(ch))
        folded = _DIGIT_RE.sub("0", folded)
    return _WORD_RE.findall(folded)


# datasketch 2.0's MinHash (scheme affine32, its default) and MinHashLSH's choice of bands, worked out
# without importing datasketch: its package imports scipy (for that choice), 0.57-0.69 s of CPU in each
# process that computes a signature, two worker processes a crawl (6 % of the CPU of the large-page site's
# whole crawl, 2026-12-06). The same numbers: tests/test_minhash.py compares them with datasketch's own.

#: MurmurHash3's 32-bit finaliser (datasketch's ``_fmix``): shifts and multipliers
_FMIX32 = (16, 0x85EBCA6B, 13, 0xC2B2AE35, 16)


@lru_cache(maxsize=8)
def _permutations(num_perm: int, seed: int):  # noqa: ANN202 (numpy arrays, numpy imported lazily)
    """(a, b) of datasketch's affine32 permutations ``h -> a * h + b mod 2**32`` for ``seed``: a odd, drawn
    from numpy's ``RandomState(seed)`` in datasketch's order."""
    import numpy as np

    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


def _mixed(values):  # noqa: ANN001, ANN202 (a numpy uint32 array)
    """``values`` through MurmurHash3's finaliser (a bijection on 32 bits; products wrap modulo 2**32)."""
    import numpy as np

    s1, m1, s2, m2, s3 = _FMIX32
    values = values ^ (values >> np.uint32(s1))
    values = values * np.uint32(m1)
    values = values ^ (values >> np.uint32(s2))
    values = values * np.uint32(m2)
    return values ^ (values >> np.uint32(s3))


def _shingle_hashes(words: list[str], k: int, name: str = "sha1"):  # noqa: ANN202 (a numpy uint32 array)
    """The 32-bit hash ``name`` (``NearDuplicateRecipe.shingle_hash``) of each word ``k``-gram joined by
    spaces, in UTF-8, one per position (repeats included: a MinHash is a minimum, the same over a list as
    over its set). "sha1" is datasketch's default hash (``sha1_hash32``: SHA-1's first 4 bytes,
    little-endian), computed by C-level ``map`` calls and one numpy view of the joined digests; "words64" is
    :func:`words64_hash`, computed over the whole text at once (:func:`_words64_values`)."""
    import numpy as np

    if name == "words64":
        return _words64_values(" ".join(words).encode("utf-8"), k)
    shingles = map(" ".join, zip(*(words[i:] for i in range(k)))) if k > 1 else iter(words)
    digests = b"".join(map(_DIGEST, map(hashlib.sha1, map(str.encode, shingles))))
    # each SHA-1 digest is 20 bytes: its first 4 as a little-endian uint32 are sha1_hash32's value
    return np.frombuffer(digests, dtype="<u4").reshape(-1, 5)[:, 0].astype(np.uint32)


# "words64", the crawl's shingle hash: each word's UTF-8 bytes read as a polynomial in _POLY modulo 2**64
# (byte i times _POLY**i), that value through SplitMix64's finaliser, the k words' values times a constant
# of their position in the shingle (_position_weights), summed modulo 2**64; the top 32 bits. Over a whole
# text it is numpy's work on arrays (prefix sums of the bytes times the powers of _POLY), not a Python call
# a shingle: 0.08 against 0.41 ms a page of 1,400 words for the words and their CRC-32s (the large-page
# site of crawl_benchmark.py, 2026-12-07). _POLY is the 64-bit FNV prime (odd: it has an inverse modulo 2**64)
_MASK64 = (1 << 64) - 1
_POLY = 0x100000001B3
_POLY_INVERSE = pow(_POLY, -1, 1 << 64)
#: SplitMix64's finaliser: shifts and multipliers
_SPLITMIX = (30, 0xBF58476D1CE4E5B9, 27, 0x94D049BB133111EB, 31)
#: bytes of text hashed at a time (segments end at a space): the powers of _POLY each process keeps are
#: this long (2 x 512 KiB); a longer word (no space in a segment) gets powers of its own length, not kept
_WORDS64_SEGMENT = 1 << 16


def _splitmix(value: int) -> int:
    s1, m1, s2, m2, s3 = _SPLITMIX
    value ^= value >> s1
    value = (value * m1) & _MASK64
    value ^= value >> s2
    value = (value * m2) & _MASK64
    return value ^ (value >> s3)


@lru_cache(maxsize=4)
def _position_weights(k: int) -> tuple[int, ...]:
    """The odd 64-bit weight of each place of a k-word shingle (SplitMix64's sequence from 0): a shingle's
    words in another order give another value."""
    return tuple(_splitmix((0x9E3779B97F4A7C15 * (j + 1)) & _MASK64) | 1 for j in range(k))


def words64_hash(shingle: bytes) -> int:
    """The "words64" value of one shingle (its words' UTF-8 bytes joined by single spaces): what
    :func:`_words64_values` computes for every shingle of a text at once, written out (tests hand it to
    datasketch as its ``hashfunc``)."""
    words = shingle.split(b" ")
    total = 0
    for weight, word in zip(_position_weights(len(words)), words):
        value = sum(byte * pow(_POLY, i, 1 << 64) for i, byte in enumerate(word)) & _MASK64
        total = (total + _splitmix(value) * weight) & _MASK64
    return total >> 32


def _poly_powers(n: int):  # noqa: ANN202 (two numpy uint64 arrays)
    """_POLY**i and _POLY**-i modulo 2**64 for i < n (numpy's uint64 products wrap modulo 2**64); those of
    a segment (``_WORDS64_SEGMENT``) are kept."""
    return _segment_powers(_WORDS64_SEGMENT + 1) if n <= _WORDS64_SEGMENT + 1 else _powers(n)


@lru_cache(maxsize=1)
def _segment_powers(n: int):  # noqa: ANN202
    return _powers(n)


def _powers(n: int):  # noqa: ANN202
    import numpy as np

    up = np.full(n, _POLY, dtype=np.uint64)
    down = np.full(n, _POLY_INVERSE, dtype=np.uint64)
    up[0] = down[0] = 1
    return np.cumprod(up), np.cumprod(down)


def _words64_values(data: bytes, k: int):  # noqa: ANN202 (a numpy uint32 array)
    """The :func:`words64_hash` of each ``k``-word shingle of ``data`` (words: runs of bytes other than a
    space), in order."""
    return _words64_shingles(_words64_words(data), k)


def _words64_words(data: bytes):  # noqa: ANN202 (a numpy uint64 array)
    """Each word's mixed value (:func:`_word_values`) of ``data``, ``_WORDS64_SEGMENT`` bytes at a time."""
    import numpy as np

    parts = []
    start, size = 0, len(data)
    while start < size:
        end = start + _WORDS64_SEGMENT
        if end < size:  # cut at the segment's last space; past it only when a word is longer than a segment
            cut = data.rfind(b" ", start + 1, end)
            end = cut if cut > start else data.find(b" ", end)
        end = size if end < 0 or end > size else end
        parts.append(_word_values(data[start:end]))
        start = end
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)


def _words64_shingles(words, k: int):  # noqa: ANN001, ANN202 (numpy arrays)
    """The words' values of each ``k``-word shingle weighted by place and summed; the top 32 bits."""
    import numpy as np

    count = len(words) - k + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint32)
    total = np.zeros(count, dtype=np.uint64)
    for j, weight in enumerate(_position_weights(k)):
        total += words[j:j + count] * np.uint64(weight)
    return (total >> np.uint64(32)).astype(np.uint32)


def _word_values(data: bytes):  # noqa: ANN202 (a numpy uint64 array)
    """SplitMix64 of each word's polynomial value (``_words64_values``), the words of ``data`` in order."""
    import numpy as np

    raw = np.frombuffer(data, dtype=np.uint8)
    n = len(raw)
    if not n:
        return np.empty(0, dtype=np.uint64)
    inside = np.empty(n + 2, dtype=np.int8)
    inside[0] = inside[-1] = 0
    np.not_equal(raw, 32, out=inside[1:-1])
    edges = np.diff(inside)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    up, down = _poly_powers(n + 1)
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(raw * up[:n], out=prefix[1:])
    values = (prefix[ends] - prefix[starts]) * down[starts]
    s1, m1, s2, m2, s3 = (np.uint64(x) for x in _SPLITMIX)
    values ^= values >> s1
    values *= m1
    values ^= values >> s2
    values *= m2
    return values ^ (values >> s3)


_DIGEST = operator.methodcaller("digest")


def shingle_values(text: str, recipe: NearDuplicateRecipe, words: list[str] | None = None):  # noqa: ANN201
    """(the text's word count, the recipe's ``shingle_hash`` value of each shingle: a numpy uint32 array).
    ``words``: :func:`recipe_words`, when already known. For "words64" without ``words``, the words' bytes
    as recipe_words reads them are hashed in place, never split into strings (an ASCII text's one byte
    translation): 0.06 ms less a page of 1,400 words."""
    k = recipe.shingle_words
    if recipe.shingle_hash == "words64" and words is None:
        text = text or ""
        data = (_ascii_words(text, recipe) if text.isascii()
                else " ".join(_words_by_patterns(text, recipe)).encode("utf-8"))
        word_values = _words64_words(data)
        return len(word_values), _words64_shingles(word_values, k)
    if words is None:
        words = recipe_words(text, recipe)
    return len(words), _shingle_hashes(words, k, recipe.shingle_hash)


def signature(text: str, recipe: NearDuplicateRecipe, words: list[str] | None = None) -> bytes | None:
    """The MinHash of the text's shingles as uint32 bytes (``num_perm`` values), or None for a text with
    fewer than ``max(shingle_words, min_words)`` words. ``words``: :func:`recipe_words`, when already known.
    datasketch's MinHash (scheme affine32) over the recipe's ``shingle_hash`` values
    (:func:`shingle_values`): each value mixed, permuted ``num_perm`` ways, the minimum of each kept,
    ``_UPDATE_ROWS`` values at a time."""
    count, shingles = shingle_values(text, recipe, words)
    if count < max(recipe.shingle_words, recipe.min_words):
        return None
    return minhash_of(shingles, recipe)


def minhash_of(shingles, recipe: NearDuplicateRecipe) -> bytes:  # noqa: ANN001 (a numpy uint32 array)
    """The recipe's MinHash of given 32-bit shingle values (:func:`signature` without the words)."""
    import numpy as np

    a, b = _permutations(recipe.num_perm, recipe.seed)
    values = _mixed(shingles)
    minima = np.full(recipe.num_perm, 0xFFFFFFFF, dtype=np.uint32)
    for start in range(0, len(values), _UPDATE_ROWS):
        rows = values[start:start + _UPDATE_ROWS, np.newaxis]
        np.minimum(minima, (rows * a + b).min(axis=0), out=minima)
    return minima.tobytes()


#: datasketch MinHashLSH's default weights of a false positive and a false negative
_LSH_WEIGHTS = (0.5, 0.5)


@lru_cache(maxsize=32)
def optimal_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows) MinHashLSH picks for ``threshold`` over ``num_perm`` values: of every b x r <= num_perm,
    the first (b, then r, ascending) whose weighted probabilities of a false positive (a pair below the
    threshold sharing a band: the integral of 1 - (1 - s^r)^b over [0, threshold]) and of a false negative
    (above it, sharing none: (1 - s^r)^b over [threshold, 1]) sum least. Both integrands are polynomials of
    degree b * r <= num_perm, so a Gauss-Legendre rule of num_perm / 2 + 1 nodes integrates them exactly
    (datasketch uses scipy's adaptive ``quad``). Plain Python, 22 ms for 128 values: the crawl's own process
    needs no numpy for it."""
    nodes = _gauss_legendre(num_perm // 2 + 1)

    def rule(low: float, high: float) -> list[tuple[float, float]]:
        half = (high - low) / 2
        return [(half * x + (high + low) / 2, half * w) for x, w in nodes]

    below, above = rule(0.0, threshold), rule(threshold, 1.0)
    least, chosen = float("inf"), (0, 0)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            false_positive = sum(w * (1 - (1 - s ** r) ** b) for s, w in below)
            false_negative = sum(w * (1 - s ** r) ** b for s, w in above)
            error = _LSH_WEIGHTS[0] * false_positive + _LSH_WEIGHTS[1] * false_negative
            if error < least:  # the first of equal minima, as datasketch keeps it
                least, chosen = error, (b, r)
    return chosen


def _gauss_legendre(n: int) -> list[tuple[float, float]]:
    """(node, weight) of the n-point Gauss-Legendre rule on [-1, 1]: the roots of the Legendre polynomial
    P_n by Newton's method from Tricomi's first guess, each weight 2 / ((1 - x^2) P_n'(x)^2)."""

    def legendre(x: float) -> tuple[float, float]:  # P_n(x) and P_n'(x), by the three-term recurrence
        before, value = 1.0, x
        for k in range(2, n + 1):
            before, value = value, ((2 * k - 1) * x * value - (k - 1) * before) / k
        return value, n * (x * value - before) / (x * x - 1)

    out = []
    for i in range(1, n + 1):
        x = math.cos(math.pi * (i - 0.25) / (n + 0.5))
        for _ in range(100):
            value, slope = legendre(x)
            step = value / slope
            x -= step
            if abs(step) < 1e-16:
                break
        _value, slope = legendre(x)
        out.append((x, 2 / ((1 - x * x) * slope * slope)))
    return out


@lru_cache(maxsize=32)
def band_ranges(recipe: NearDuplicateRecipe) -> tuple[tuple[int, int], ...]:
    """(first, end) hash value of each LSH band: ``recipe.bands`` of equal rows, or :func:`optimal_bands`."""
    if recipe.bands is None:
        bands, rows = optimal_bands(recipe.min_jaccard or 1e-9, recipe.num_perm)
    else:
        bands, rows = recipe.bands, recipe.num_perm // recipe.bands
    return tuple((band * rows, (band + 1) * rows) for band in range(bands))


def band_keys(sig: bytes, recipe: NearDuplicateRecipe,
              ranges: tuple[tuple[int, int], ...] | list[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """(band, key) per band: a 63-bit blake2b of the band number and its values (one SQLite INTEGER column
    holds every band's buckets; two bands never share a key). Equal bands, equal keys. ``ranges``: the
    recipe's :func:`band_ranges`, when the caller holds them."""
    return [(band, int.from_bytes(hashlib.blake2b(band.to_bytes(2, "big") + sig[a * _VALUE_BYTES:b * _VALUE_BYTES],
                                                  digest_size=8).digest(), "big") >> 1)
            for band, (a, b) in enumerate(ranges if ranges is not None else band_ranges(recipe))]


def similarity(a: bytes, b: bytes) -> float:
    """The estimated Jaccard similarity of two signatures: the share of equal minima (their uint32 values
    compared in place: the crawl's own process needs no numpy for it)."""
    x, y = memoryview(a).cast("I"), memoryview(b).cast("I")
    return sum(map(operator.eq, x, y)) / len(x) if len(x) == len(y) and len(x) else 0.0


def is_near_duplicate(estimate: float, recipe: NearDuplicateRecipe) -> bool:
    """A candidate (it shares a band) is a near duplicate when its estimate reaches ``min_jaccard``."""
    return estimate >= recipe.min_jaccard
