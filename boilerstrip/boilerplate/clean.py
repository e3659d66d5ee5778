"""Remove a site's template blocks from one page, with the safety rules and a reason per block."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .blocks import (HEADING_KINDS, block_hash, digits_insensitive, normalise_block, piece_hash, slot_hash,
                     split_pieces)
from .model import SCOPE_CLUSTER, SCOPE_SITE, TemplateDecision, TemplateModel

#: kinds whose consecutive blocks form a list (one item or row per block)
_LIST_KINDS = frozenset(("li", "tr"))
SCOPE_LIST = "template:list"
from .params import BoilerplateParams

__all__ = ["CleanResult", "clean_page", "hash_blocks", "FLAG_KEPT_TOO_SHORT", "FLAG_REMOVED_MOST", "FLAG_ONLY",
           "FLAG_PROTECTED"]

FLAG_KEPT_TOO_SHORT = "boilerplate_kept_too_short"  # removal would blank the page: nothing removed
FLAG_REMOVED_MOST = "boilerplate_removed_most"  # most of the page was template (suspicious, still cleaned)
FLAG_ONLY = "boilerplate_only"  # every block was template beyond doubt: the page's text is empty
FLAG_PROTECTED = "boilerplate_protected_block"  # a long block on many pages was kept (not overwhelming)


@dataclass(frozen=True)
class CleanResult:
    #: every block of the page, in order: {"kind", "text", "hash", "removed": reason | None}
    blocks: list[dict[str, Any]]
    #: (kind, text) of the kept blocks, ready to render
    kept: list[tuple[str, str]]
    removed_chars: int
    removed_blocks: int
    total_chars: int
    flags: tuple[str, ...] = ()
    #: (hash, reason, pages, share) of each removed block, for the report
    removed: tuple[tuple[str, str, int, float], ...] = field(default=())

    @property
    def removed_share(self) -> float:
        return self.removed_chars / self.total_chars if self.total_chars else 0.0


def hash_blocks(blocks: Iterable[tuple[str, str]], params: BoilerplateParams) -> list[tuple[str, str, str | None, int]]:
    """(kind, text, hash, normalised length) per block."""
    out = []
    for kind, text in blocks:
        norm = normalise_block(text, digits=digits_insensitive(kind, params.normalise_digits))
        out.append((kind, text, block_hash(norm, kind), len(norm)))
    return out


def _template_lists(hashed, decisions: list[TemplateDecision], params: BoilerplateParams) -> list[TemplateDecision]:
    """In runs of list items / table rows, a short item inside a window of ``list_min_items`` consecutive
    items that is mostly template goes too: the "Prev <title>" slot of a Prev | Up | Home | Next bar."""
    out = list(decisions)
    size = params.list_min_items
    i = 0
    while i < len(hashed):
        kind = hashed[i][0]
        j = i
        while j < len(hashed) and hashed[j][0] == kind:
            j += 1
        if kind in _LIST_KINDS and j - i >= size:
            for start in range(i, j - size + 1):
                window = decisions[start : start + size]
                template = sum(1 for d in window if d.reason)
                if template >= 2 and template / size >= params.list_min_template_share:
                    for k in range(start, start + size):
                        if not out[k].reason and hashed[k][3] < params.protect_min_chars:
                            # pages: 0 (the evidence is the neighbours, not a page count); share: of the window
                            out[k] = TemplateDecision(SCOPE_LIST, 0, round(template / size, 4))
        i = j
    return out


def _structure_decisions(hashed, decisions: list[TemplateDecision], site: str, cluster: str, model: TemplateModel,
                         params: BoilerplateParams, slots: Mapping[str, str] | None) -> list[TemplateDecision]:
    """Blocks not template by their text, tried by their place in the template (``decide_structure``);
    then their siblings: a short row or item in the same container (slot path minus its last element) as
    a row found template by structure, in a slot on most pages, goes too (the page title row of a
    navigation table whose other row is "Prev | <chapter> | Next")."""
    out = list(decisions)
    containers: set[str] = set()
    for i, ((kind, text, h, n), d) in enumerate(zip(hashed, decisions)):
        if d.reason or not h:
            continue
        pieces = split_pieces(text, digits=digits_insensitive(kind, params.normalise_digits))
        if len(pieces) < 2:
            continue
        slot = slots.get(h) if slots else None
        structural = model.decide_structure(site, cluster, slot_hash(slot),
                                            [(piece_hash(p) or "", len(p)) for p in pieces], n, params)
        if structural.reason:
            out[i] = structural
            if slot:
                containers.add(_container(slot))
    if not containers:
        return out
    for i, ((kind, _text, h, n), d) in enumerate(zip(hashed, out)):
        slot = slots.get(h) if slots and h else None
        if d.reason or not slot or kind not in _LIST_KINDS or n > params.structure_max_name_chars:
            continue
        if _container(slot) in containers:
            sibling = model.decide_structure(site, cluster, slot_hash(slot), [], n, params, sibling=True)
            if sibling.reason:
                out[i] = sibling
    return out


def _container(slot: str) -> str:
    """The container part of a slot (``page.slot_of``): its tag path without the block's own element."""
    path = slot.split("|", 1)[0]
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _section_headings(hashed, decisions: list[TemplateDecision], site: str, model: TemplateModel,
                      params: BoilerplateParams) -> list[TemplateDecision]:
    """A heading that is template by its text ("Synopsis", "Description" on every reference page) stays
    when its section (the blocks up to the next heading) holds text of this page's own: at least
    ``section_min_own_chars`` characters in kept blocks found on fewer than ``min_pages`` pages (too few
    to be template anywhere: a parameter documented in two parts of a manual is still its pages' own). A
    "Related posts" heading over nothing kept still goes."""
    if params.section_min_own_chars <= 0:
        return decisions
    out = list(decisions)
    for i, (kind, _text, _h, _n) in enumerate(hashed):
        if kind not in HEADING_KINDS or decisions[i].reason not in (SCOPE_SITE, SCOPE_CLUSTER):
            continue
        own = 0
        for k in range(i + 1, len(hashed)):
            if hashed[k][0] in HEADING_KINDS:
                break
            if not decisions[k].reason and hashed[k][2] and model.block_pages(site, hashed[k][2]) < params.min_pages:
                own += len(hashed[k][1].strip())
        if own >= params.section_min_own_chars:
            d = decisions[i]
            out[i] = TemplateDecision(None, d.pages, d.share)
    return out


def clean_page(
    blocks: Iterable[tuple[str, str]],
    site: str,
    cluster: str,
    model: TemplateModel,
    params: BoilerplateParams,
    slots: Mapping[str, str] | None = None,
) -> CleanResult:
    """Drop the blocks the model calls template; never blank the page; say why for every block.

    ``slots`` maps a block's hash to its structural slot (``page.slot_of``) where known: a block's slot
    must then repeat across pages for the block to be template by structure."""
    hashed = hash_blocks(blocks, params)
    decisions = [model.decide(site, cluster, h, n, params) for _, _, h, n in hashed]
    decisions = _structure_decisions(hashed, decisions, site, cluster, model, params, slots)
    decisions = _template_lists(hashed, decisions, params)
    decisions = _section_headings(hashed, decisions, site, model, params)
    total = sum(len(text.strip()) for _, text, _, _ in hashed)
    removed_chars = sum(len(t.strip()) for (_, t, _, _), d in zip(hashed, decisions) if d.reason)
    flags: list[str] = []
    if any(d.protected for d in decisions):
        flags.append(FLAG_PROTECTED)
    overwhelming = all(d.share >= params.blank_min_share for d in decisions if d.reason)
    if removed_chars and total - removed_chars < params.min_kept_chars and overwhelming:
        flags.append(FLAG_ONLY)  # nothing but site chrome beyond doubt: no content to keep
    elif removed_chars and total - removed_chars < params.min_kept_chars:
        # Never blank a page on weaker evidence: keep it whole and say so.
        flags.append(FLAG_KEPT_TOO_SHORT)
        decisions = [TemplateDecision(None, d.pages, d.share, d.protected) for d in decisions]
        removed_chars = 0
    if FLAG_ONLY not in flags and removed_chars and total and removed_chars / total > params.max_removed_share_unflagged:
        flags.append(FLAG_REMOVED_MOST)
    out_blocks: list[dict[str, Any]] = []
    kept: list[tuple[str, str]] = []
    removed: list[tuple[str, str, int, float]] = []
    for (kind, text, h, _), d in zip(hashed, decisions):
        out_blocks.append({"kind": kind, "text": text, "hash": h, "removed": d.reason})
        if d.reason:
            removed.append((h or "", d.reason, d.pages, round(d.share, 4)))
        else:
            kept.append((kind, text))
    return CleanResult(
        blocks=out_blocks,
        kept=kept,
        removed_chars=removed_chars,
        removed_blocks=len(removed),
        total_chars=total,
        flags=tuple(flags),
        removed=tuple(removed),
    )
