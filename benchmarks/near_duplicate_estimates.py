"""How well the crawl's MinHash estimates the Jaccard similarity of a page and an edited copy, with each
shingle hash: "words64" (the crawl's), CRC-32 (the crawl's until 2026-12-07) and SHA-1 (datasketch's
default, the export's). The permutations are the same for all three (boilerstrip.minhash); only the 32-bit
value of each shingle differs.

    .venv/bin/python benchmarks/near_duplicate_estimates.py OUT.jsonl [OUT2.jsonl ...] [--pairs 600] [--seed 7]

Reads the pages of crawl outputs (pages of at least 100 words, the same number from each file), edits a copy
of each (0.2-4 % of its words replaced), and prints per hash the bias and RMSE of the estimate against the
true Jaccard similarity of the shingle sets, how many pairs at Jaccard >= 0.92 it judges below the crawl's
0.9 and how many at <= 0.88 at or above it, and the shingle hashes' time a page (the words included). Not
in ``./run bench``: its figures are quoted in docs/cross-page.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from boilerstrip.minhash import NearDuplicateRecipe, minhash_of, recipe_words, shingle_values, site_recipe, similarity  # noqa: E402

_JUDGED = 0.9  # the crawl's threshold (DuplicateParams.near_min_jaccard)


def _crc32_values(text: str, recipe: NearDuplicateRecipe) -> np.ndarray:
    """The crawl's shingle values until 2026-12-07: zlib's CRC-32 of each shingle's UTF-8 bytes."""
    words = recipe_words(text, recipe)
    shingles = map(" ".join, zip(*(words[i:] for i in range(recipe.shingle_words))))
    return np.fromiter(map(zlib.crc32, map(str.encode, shingles)), dtype=np.uint32)


_CRAWL = site_recipe()
#: hash -> (its recipe, the shingle values of a text): the crawl's own code for words64 and SHA-1
_HASHES = {
    "words64": (_CRAWL, lambda text: shingle_values(text, _CRAWL)[1]),
    "crc32": (_CRAWL, lambda text: _crc32_values(text, _CRAWL)),
    "sha1": (dataclasses.replace(_CRAWL, shingle_hash="sha1"),
             lambda text: shingle_values(text, dataclasses.replace(_CRAWL, shingle_hash="sha1"))[1]),
}


def _texts(paths: list[str], pairs: int, rng: random.Random) -> list[str]:
    each = max(1, pairs // len(paths))
    out: list[str] = []
    for path in paths:
        texts = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                text = json.loads(line).get("text")
                if isinstance(text, str) and len(text.split()) >= 100:
                    texts.append(text)
        out += rng.sample(texts, min(each, len(texts)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outputs", nargs="+", help="crawl outputs (JSONL records with text)")
    parser.add_argument("--pairs", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    recipe = _CRAWL
    k = recipe.shingle_words
    texts = _texts(args.outputs, args.pairs, rng)
    errors: dict[str, list[float]] = {name: [] for name in _HASHES}
    misjudged = {name: [0, 0, 0, 0] for name in _HASHES}  # high judged low, high pairs, low judged high, low pairs
    seconds = dict.fromkeys(_HASHES, 0.0)
    for text in texts:
        words = text.split()
        edited = list(words)
        for i in rng.sample(range(len(words)), max(1, int(len(words) * rng.uniform(0.002, 0.04)))):
            edited[i] = f"edit{rng.randrange(10**6)}"
        pair = [recipe_words(t, recipe) for t in (text, " ".join(edited))]
        sets = [{" ".join(w[i:i + k]) for i in range(len(w) - k + 1)} for w in pair]
        true = len(sets[0] & sets[1]) / len(sets[0] | sets[1])
        for name, (own, values_of) in _HASHES.items():
            started = time.perf_counter()
            values = [values_of(t) for t in (text, " ".join(edited))]
            seconds[name] += time.perf_counter() - started
            estimate = similarity(*(minhash_of(v, own) for v in values))
            errors[name].append(estimate - true)
            counts = misjudged[name]
            if true >= 0.92:
                counts[1] += 1
                counts[0] += estimate < _JUDGED
            if true <= 0.88:
                counts[3] += 1
                counts[2] += estimate >= _JUDGED
    print(f"{len(texts)} pages of {', '.join(args.outputs)}, each against a copy with 0.2-4 % of its words replaced")
    print(f"{'hash':<8} {'bias':>8} {'RMSE':>7} {'>=0.92 judged <0.9':>20} {'<=0.88 judged >=0.9':>21} {'ms a page':>10}")
    for name, found in errors.items():
        e = np.array(found)
        high_low, high, low_high, low = misjudged[name]
        print(f"{name:<8} {e.mean():>+8.4f} {np.sqrt((e * e).mean()):>7.4f} {f'{high_low}/{high}':>20} "
              f"{f'{low_high}/{low}':>21} {seconds[name] / (2 * len(texts)) * 1e3:>10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

