"""One near-duplicate module (boilerstrip/minhash.py) for the crawl's duplicates and the export: the same
pair of pages is judged the same by both, except where their two recipes differ by design (digits)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from boilerstrip.boilerplate.duplicates import NEAR_DUPLICATE, DuplicateIndex, near_recipe
from boilerstrip.boilerplate.params import DuplicateParams
from boilerstrip.export.index import MemoryDedupIndex
from boilerstrip.export.params import NearDedupParams
from boilerstrip.export.steps import NearDedup
from boilerstrip.finishing.base import FinishContext
from boilerstrip.minhash import (TRAINING_RECIPE, band_ranges, optimal_bands, recipe_words, signature, similarity,
                                 words64_hash)

_WORDS = ("page cache journal write lock reader writer column value schema trigger view vacuum checkpoint "
          "commit rollback savepoint cursor statement index table row query planner").split()


def _text(seed: int, words: int = 400) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _edited(text: str, share: float, seed: int) -> str:
    """``text`` with ``share`` of its words replaced by other words."""
    rng = random.Random(seed)
    words = text.split()
    for i in rng.sample(range(len(words)), int(len(words) * share)):
        words[i] = f"edit{i}"
    return " ".join(words)


def _crawl_says(a: str, b: str) -> bool:
    """Does the crawl (``boilerstrip dedup``, the finishing pass) mark page b a near duplicate of page a?"""
    index = DuplicateIndex(DuplicateParams())
    assert index.check_and_add("https://s.example/a", a) is None
    dup = index.check_and_add("https://s.example/b", b)
    return dup is not None and dup.reason == NEAR_DUPLICATE


def _export_says(a: str, b: str) -> bool:
    """Does ``boilerstrip export`` leave document b out as a near duplicate of document a?"""
    step = NearDedup(MemoryDedupIndex(), "run1", NearDedupParams())
    context = FinishContext()
    records = [{"id": name, "url": f"https://s.example/{name}", "text": text} for name, text in (("a", a), ("b", b))]
    kept = [r["id"] for r in step.run(records, context)]
    assert kept[0] == "a"
    return {d.url: d.reason for d in context.dropped}.get("https://s.example/b") == "near_duplicate"


@pytest.mark.parametrize(("share", "both"), [
    (0.0, True),    # the same text under two URLs, one word changed below: a near duplicate for both
    (0.004, True),  # two words of 400 changed (Jaccard ~0.95)
    (0.5, False),   # half the words changed: another page for both
    (1.0, False),
])
def test_the_same_pair_is_judged_the_same_by_dedup_and_export(share: float, both: bool) -> None:
    a = _text(1)
    b = _edited(a, share, 2) if share else a + " coda"
    assert _crawl_says(a, b) is both
    assert _export_says(a, b) is both


def test_two_unrelated_pages_are_near_duplicates_for_neither() -> None:
    assert not _crawl_says(_text(1), _text(2))
    assert not _export_says(_text(1), _text(2))


def test_the_one_difference_by_design_digits_name_a_page_in_a_site_not_in_a_training_set() -> None:
    """Measured on docbook-xsl-doc-html: ``section.level1.properties`` and ``section.level2.properties`` differ
    only in digits. The crawl keeps digits (two parameters, two pages); the export reads every digit as 0
    (FineWeb's simplification: one text to train on). docs/cross-page.md names both recipes."""
    a = " ".join(f"section level1 title {w} properties for level 1 headings" for w in _WORDS)
    b = a.replace("level1", "level2").replace("level 1", "level 2")
    assert not _crawl_says(a, b)
    assert _export_says(a, b)


def test_both_use_the_one_module() -> None:
    """The estimates both report are boilerstrip/minhash.py's, over its signatures."""
    a = _text(3)
    b = a + " coda"
    params = DuplicateParams()
    dup = DuplicateIndex(params)
    dup.check_and_add("https://s.example/a", a)
    found = dup.check_and_add("https://s.example/b", b)
    recipe = near_recipe(params)
    assert found is not None
    assert found.similarity == round(similarity(signature(a, recipe), signature(b, recipe)), 4)
    step = NearDedup(MemoryDedupIndex(), "run1", NearDedupParams())
    context = FinishContext()
    list(step.run([{"id": "a", "url": "https://s.example/a", "text": a},
                   {"id": "b", "url": "https://s.example/b", "text": b}], context))
    expected = round(similarity(signature(a, TRAINING_RECIPE), signature(b, TRAINING_RECIPE)), 4)
    assert context.dropped[0].detail["similarity"] == expected
    assert NearDedupParams().recipe() == TRAINING_RECIPE
    assert recipe_words("Été 2024", TRAINING_RECIPE) == ["ete", "0000"]
    assert recipe_words("Été 2024", recipe) == ["été", "2024"]


def _datasketch_signature(text: str, recipe) -> bytes | None:  # noqa: ANN001
    """datasketch's MinHash as its documentation shows it, over the set of shingles, each shingle's UTF-8
    bytes: with its default hash function (``sha1_hash32``) for a "sha1" recipe, with the written-out
    :func:`words64_hash` as the ``hashfunc`` for a "words64" one."""
    import numpy as np
    from datasketch import MinHash

    words = recipe_words(text, recipe)
    k = recipe.shingle_words
    if len(words) < max(k, recipe.min_words):
        return None
    hashfunc = {"words64": {"hashfunc": words64_hash}, "sha1": {}}[recipe.shingle_hash]
    minhash = MinHash(num_perm=recipe.num_perm, seed=recipe.seed, **hashfunc)
    minhash.update_batch(list({" ".join(words[i:i + k]).encode("utf-8") for i in range(len(words) - k + 1)}))
    return minhash.hashvalues.astype(np.uint32).tobytes()


_VARIED_TEXTS = [
    _text(1), _text(2, 40), _text(3, 9000),
    "Naïve café déjà vu, 3.19.1 and 3.19.2 ÉCOLE Straße " * 30,  # accents, digits, case folding
    "日本語 の テキスト です。中文 文本 " * 40 + " emoji 😀 text " * 10,  # multi-byte UTF-8
    "word " * 300,  # one shingle repeated: the minimum over the list is the one over the set
    "a b c d e", "a b c d",  # one shingle; too few words
    "",
]


@pytest.mark.parametrize("recipe", [near_recipe(DuplicateParams()), TRAINING_RECIPE,
                                    near_recipe(DuplicateParams(num_perm=64, shingle_words=3, near_min_words=3)),
                                    near_recipe(DuplicateParams(shingle_words=1, near_min_words=1))],
                         ids=["site", "training", "short", "one-word-shingles"])
def test_signatures_are_datasketchs_minhash_of_the_shingle_set(recipe) -> None:  # noqa: ANN001
    """The shingles are hashed in bulk (SHA-1's first 4 bytes, as ``sha1_hash32``; or "words64", over the
    whole text in numpy) and handed to datasketch's MinHash: the signatures must be what datasketch gives
    with that hash function, the default one for the export, whose index keeps signatures from one run to
    the next."""
    for text in _VARIED_TEXTS:
        assert signature(text, recipe) == _datasketch_signature(text, recipe), text[:40]


@pytest.mark.parametrize("num_perm", [16, 64, 100, 128, 256])
def test_the_bands_are_the_ones_datasketchs_minhashlsh_picks(num_perm: int) -> None:
    """The LSH bands are chosen as datasketch's ``MinHashLSH`` chooses them (``_optimal_param``: its weighted
    false positive and false negative probabilities, integrated by scipy there, exactly by Gauss-Legendre
    here), so the crawl needs neither datasketch nor scipy: the same (bands, rows) for thresholds across the
    range, the crawl's default included. Where that is a single band (0.99 over 128 values), MinHashLSH
    refuses the threshold; the crawl keeps the band (candidates must then agree on all their rows)."""
    from datasketch import MinHashLSH
    from datasketch.lsh import _optimal_param

    for threshold in (0.05, 0.1, 0.25, 0.5, 0.6, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.99):
        chosen = optimal_bands(threshold, num_perm)
        assert chosen == tuple(_optimal_param(threshold, num_perm, 0.5, 0.5)), threshold
        recipe = dataclasses.replace(near_recipe(DuplicateParams()), min_jaccard=threshold, num_perm=num_perm)
        if chosen[0] < 2:
            assert list(band_ranges(recipe)) == [(0, chosen[1])]
            continue
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        assert list(band_ranges(recipe)) == [tuple(map(int, pair)) for pair in lsh.hashranges]


def test_a_crawls_signatures_and_bands_load_neither_datasketch_nor_scipy() -> None:
    """Importing datasketch imports scipy (0.6 s of CPU in each worker process of a crawl): a signature is
    worked out with numpy alone, and the bands and the similarity of two signatures (what the crawl's own
    process computes) with no numpy at all (in a fresh interpreter: this one has loaded all three)."""
    import subprocess
    import sys

    script = ("import sys; from boilerstrip.boilerplate.duplicates import DuplicateIndex, text_signature; "
              "from boilerstrip.boilerplate import DuplicateParams; from boilerstrip.minhash import similarity; "
              "ours = lambda: sorted({m.split('.')[0] for m in sys.modules} & {'datasketch', 'scipy', 'numpy'}); "
              "DuplicateIndex(DuplicateParams()); print(similarity(b'abcdefgh', b'abcdefgi'), ours()); "
              "text_signature('word after word ' * 40, DuplicateParams()); print(ours())")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["0.5 []", "['numpy']"]


def test_the_export_keeps_datasketchs_default_hash_and_the_crawl_uses_words64() -> None:
    """The export's index holds signatures across runs: its recipe stays on datasketch's default hash. The
    crawl's signatures live within one finishing pass: it hashes shingles with "words64" (0.08 against 0.8
    ms a page of 1,400 words)."""
    assert TRAINING_RECIPE.shingle_hash == "sha1"
    assert NearDedupParams().recipe().shingle_hash == "sha1"
    assert near_recipe(DuplicateParams()).shingle_hash == "words64"
    with pytest.raises(ValueError, match="shingle_hash"):
        dataclasses.replace(TRAINING_RECIPE, shingle_hash="md5")


def test_words64_shingles_estimate_jaccard_as_well_as_sha1() -> None:
    """The crawl's "words64" shingle hash feeds the same permutations: its estimates of the Jaccard
    similarity of a page and an edited copy are as close to the true value as with SHA-1 (measured on the
    crawled pages of sqlite3-doc, docbook-xsl-doc-html and the large-page site: docs/cross-page.md; here on
    generated pages)."""
    rng = random.Random(11)
    vocabulary = [f"w{n}" for n in range(3000)]
    crawl = near_recipe(DuplicateParams())
    sha1 = dataclasses.replace(crawl, shingle_hash="sha1")
    errors: dict[str, list[float]] = {"words64": [], "sha1": []}
    for _ in range(150):
        words = [rng.choice(vocabulary) for _ in range(rng.randrange(150, 600))]
        edited = list(words)
        for i in rng.sample(range(len(words)), max(1, int(len(words) * rng.uniform(0.002, 0.04)))):
            edited[i] = f"edit{rng.randrange(10**6)}"
        a, b = " ".join(words), " ".join(edited)
        shingles = [{" ".join(w[i:i + 5]) for i in range(len(w) - 4)} for w in (words, edited)]
        true = len(shingles[0] & shingles[1]) / len(shingles[0] | shingles[1])
        for name, recipe in (("words64", crawl), ("sha1", sha1)):
            errors[name].append(similarity(signature(a, recipe), signature(b, recipe)) - true)
    rmse = {name: (sum(e * e for e in found) / len(found)) ** 0.5 for name, found in errors.items()}
    bias = {name: sum(found) / len(found) for name, found in errors.items()}
    assert abs(bias["words64"]) < 0.01, bias
    assert rmse["words64"] < 1.25 * rmse["sha1"], rmse


def test_words64_is_the_same_hash_across_segments_and_words_of_any_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text is hashed ``_WORDS64_SEGMENT`` bytes at a time, cut at a space: with segments of a few bytes
    (so every cut falls somewhere, and some words are longer than a segment), each shingle's value is still
    the written-out :func:`words64_hash` of it; shingles that differ in one byte or in word order differ."""
    import boilerstrip.minhash as minhash

    rng = random.Random(3)
    words = ["".join(rng.choice("abcdé_9") for _ in range(rng.randint(1, 30))) for _ in range(400)]
    data = " ".join(words).encode("utf-8")
    expected = [words64_hash(" ".join(words[i:i + 5]).encode("utf-8")) for i in range(len(words) - 4)]
    assert [int(v) for v in minhash._words64_values(data, 5)] == expected
    monkeypatch.setattr(minhash, "_WORDS64_SEGMENT", 7)
    assert [int(v) for v in minhash._words64_values(data, 5)] == expected
    assert len(minhash._words64_values(b"a b c d", 5)) == 0
    assert words64_hash(b"alpha beta") != words64_hash(b"beta alpha")
    assert words64_hash(b"alpha beta") != words64_hash(b"alpha betb")


def test_ascii_text_gives_the_words_the_patterns_give() -> None:
    """``recipe_words`` reads ASCII text through a byte table; the words are the patterns' (case folded
    ``\\w+`` runs, digits read as 0 in the training recipe), on random printable text with control
    characters, for both recipes."""
    import string

    from boilerstrip.minhash import TRAINING_RECIPE, _words_by_patterns, recipe_words, site_recipe

    rng = random.Random(5)
    alphabet = string.printable + "\x00\x1c\x7f"
    texts = ["", "A_b 12 x9 --help next()", *("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 120)))
                                             for _ in range(3000))]
    for recipe in (site_recipe(), TRAINING_RECIPE):
        for text in texts:
            assert recipe_words(text, recipe) == _words_by_patterns(text, recipe), text
    assert recipe_words("Ab_1 c-2", TRAINING_RECIPE) == ["ab_0", "c", "0"]
