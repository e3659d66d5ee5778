"""How much to trust one extraction: an estimate of its F1 against what a person would call the page's
main content, from what the ladder already computed (no second parse, no extra rung).

``page_signals`` reads the winner and its refused rivals (``attempts``), the page's block statistics
(``PageStats``: text, link text, good paragraph text, semantic containers) and the blocks kept; each signal
is a plain number named in ``SIGNALS``. ``estimate_confidence`` maps them to 0-1 with a small ensemble of
regression trees stored beside this module (``confidence_model.json``), fitted on the tuning half of
WCXB-dev by ``benchmarks/confidence_benchmark.py --fit`` and reported there on the held-out half.
Cost: a pass over the kept block indices and a few dozen tree lookups (tens of microseconds a page).

Pure: lxml is not touched here, only numbers the ladder produced.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

MODEL_FILE = Path(__file__).with_name("confidence_model.json")

#: The signals, in the order of the model's feature vector (``confidence_model.json`` names them too).
SIGNALS = (
    "method_semantic",  # 1 when the semantic rung won
    "method_density",  # 1 when the density rung won
    "method_other",  # 1 when bodytext or the plain-text rung won
    "last_resort",  # 1 when every rung refused and a short or link-list result was kept
    "rungs_refused",  # rungs refused before the winner
    "log_chars",  # log(1 + characters kept)
    "log_page_chars",  # log(1 + characters of the page's blocks)
    "kept_share",  # characters kept / characters of the page
    "good_kept_share",  # good paragraph text kept / good paragraph text of the page
    "good_share_of_kept",  # good paragraph text kept / characters kept
    "link_density",  # link text share of what was kept
    "page_link_density",  # link text share of the page
    "blocks",  # log(1 + blocks kept)
    "mean_block_chars",  # log(1 + mean characters per kept block)
    "list_share",  # share of kept characters in list items, table rows and definitions
    "heading_share",  # share of kept blocks that are headings
    "gaps",  # runs of kept blocks (1: one contiguous span) per 10 blocks kept
    "first_position",  # index of the first kept block / blocks of the page
    "semantic_containers",  # log(1 + semantic containers on the page)
    "rival_ratio",  # characters of the largest refused rival / characters kept (0: none)
    "headline_found",  # 1 when the page's title was recognised among the blocks
    "flags",  # flags raised while reading the page (unclosed chrome, noscript shell, rebuilt tree...)
)

_LIST_KINDS = frozenset(("li", "tr", "dt", "dd"))
_HEADING_KINDS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_LAST_RESORT = frozenset(("accepted_short", "accepted_links", "over_budget"))


def page_signals(method, attempts, blocks, page=None, indices=(), headline=None, flags=()) -> tuple[float, ...]:
    """The signals of ``SIGNALS`` for one result: ``method`` the rung that won, ``attempts`` every rung
    tried, ``blocks`` the blocks kept, ``page`` the ladder's ``PageStats`` (None when no scoring rung ran),
    ``indices`` the kept blocks' indices in the page's segmentation (empty for bodytext/plain text)."""
    chars = sum(len(block.text) for block in blocks)
    n_blocks = len(blocks)
    list_chars = sum(len(block.text) for block in blocks if block.kind in _LIST_KINDS)
    headings = sum(1 for block in blocks if block.kind in _HEADING_KINDS)
    page_chars = page_links = page_good = good_kept = kept_links = 0
    gaps, first = 0, 0.0
    semantic = 0
    if page is not None:
        seg = page.seg
        n = len(seg)
        page_chars = seg.sum_chars[n] if n else 0
        page_links = seg.sum_link_chars[n] if n else 0
        page_good = page.page_good_chars
        semantic = len(seg.semantic)
        sum_good = page.sum_good
        link_chars = seg.link_chars
        previous = -2
        for i in indices:
            good_kept += sum_good[i + 1] - sum_good[i]
            kept_links += link_chars[i]
            if i != previous + 1:
                gaps += 1
            previous = i
        if indices and n:
            first = indices[0] / n
    if not indices:
        gaps = 1 if blocks else 0
    rivals = [a.chars for a in attempts if not a.accepted and a.method != method and a.chars]
    winner_at = next((i for i, a in enumerate(attempts) if a.accepted), len(attempts))
    last = attempts[-1].reason if attempts else ""
    return (
        float(method == "semantic"),
        float(method == "density"),
        float(method not in (None, "semantic", "density")),
        float(last in _LAST_RESORT),
        float(sum(1 for a in attempts[:winner_at] if not a.accepted)),
        math.log1p(chars),
        math.log1p(page_chars),
        min(1.0, chars / page_chars) if page_chars else 0.0,
        min(1.0, good_kept / page_good) if page_good else 0.0,
        min(1.0, good_kept / chars) if chars else 0.0,
        kept_links / chars if chars else 0.0,
        page_links / page_chars if page_chars else 0.0,
        math.log1p(n_blocks),
        math.log1p(chars / n_blocks) if n_blocks else 0.0,
        list_chars / chars if chars else 0.0,
        headings / n_blocks if n_blocks else 0.0,
        10.0 * gaps / n_blocks if n_blocks else 0.0,
        first,
        math.log1p(semantic),
        max(rivals) / chars if rivals and chars else 0.0,
        float(headline is not None),
        float(len(flags)),
    )


@lru_cache(maxsize=1)
def _model() -> dict:
    model = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    if tuple(model["signals"]) != SIGNALS:
        raise ValueError(f"{MODEL_FILE.name} was fitted on other signals; refit it (confidence_benchmark.py --fit)")
    return model


def _tree_value(tree: list, x: tuple[float, ...]) -> float:
    """A tree as nested lists: a leaf is [value]; a split is [feature, threshold, left, right] (left: x <= t)."""
    while len(tree) == 4:
        feature, threshold, left, right = tree
        tree = left if x[feature] <= threshold else right
    return tree[0]


def estimate_confidence(signals: tuple[float, ...]) -> float:
    """The model's estimate of the extraction's F1 (0-1) from ``page_signals``; 0.0 for no signals."""
    if not signals:
        return 0.0
    model = _model()
    value = model["base"] + model["rate"] * sum(_tree_value(tree, signals) for tree in model["trees"])
    return round(min(1.0, max(0.0, value)), 4)
