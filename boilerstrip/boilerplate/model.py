"""The per-site template model: on how many of a site's pages (and of a cluster's) each block appears.

Only counts are kept (pages per site/cluster, pages per block hash), so memory grows with the number of
distinct blocks, not with pages, and the model depends only on the *set* of pages added: adding them in
any order gives the same counts, hence the same template decisions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from .params import BoilerplateParams

__all__ = ["TemplateModel", "TemplateDecision", "UNDECIDED", "SCOPE_SITE", "SCOPE_CLUSTER", "SCOPE_STRUCTURE"]

SCOPE_SITE = "template:site"
SCOPE_CLUSTER = "template:cluster"
#: a block whose text varies per page but whose place and fixed pieces repeat: a prev/next bar
SCOPE_STRUCTURE = "template:structure"


@dataclass
class _Counts:
    pages: int = 0
    blocks: Counter = field(default_factory=Counter)

    def add(self, hashes: frozenset[str], sign: int) -> None:
        self.pages += sign
        for h in hashes:
            value = self.blocks[h] + sign
            if value > 0:
                self.blocks[h] = value
            else:
                del self.blocks[h]


@dataclass
class _Site:
    counts: _Counts = field(default_factory=_Counts)
    clusters: dict[str, _Counts] = field(default_factory=dict)


@dataclass(frozen=True)
class TemplateDecision:
    """Why a block is (or is not) template: the scope that decided, its page count and share."""

    reason: str | None  # SCOPE_SITE | SCOPE_CLUSTER | None
    pages: int  # pages of the deciding scope holding the block
    share: float  # share of that scope's pages
    protected: bool = False  # template by share, kept because it is long and evidence not overwhelming


#: not template, on no evidence (most blocks: the page's own text): one shared value, since a frozen
#: dataclass costs a microsecond to make and the finishing pass decides every block of every page twice
UNDECIDED = TemplateDecision(None, 0, 0.0)


class TemplateModel:
    def __init__(self) -> None:
        self._sites: dict[str, _Site] = {}

    # -- learning ------------------------------------------------------------------------------------
    def add_page(self, site: str, cluster: str, hashes: Iterable[str | None]) -> None:
        """Count one page: each distinct block hash once (a block repeated within a page counts once)."""
        self._update(site, cluster, hashes, +1)

    def remove_page(self, site: str, cluster: str, hashes: Iterable[str | None]) -> None:
        """Undo :meth:`add_page` (a page seen again in a later crawl replaces its earlier version)."""
        self._update(site, cluster, hashes, -1)

    def add_counts(self, site: str, cluster: str | None, pages: int, blocks: Mapping[str, int]) -> None:
        """Add stored counts to one scope (the site when ``cluster`` is None, else that cluster only): a
        model loaded from a state store's counts, without its page rows."""
        entry = self._sites.setdefault(site, _Site())
        counts = entry.counts if cluster is None else entry.clusters.setdefault(cluster, _Counts())
        counts.pages += pages
        for h, n in blocks.items():
            counts.blocks[h] += n

    def prune(self, site: str, min_count: int) -> None:
        """Forget ``site``'s block counts below ``min_count`` (site and clusters; page counts stay): see
        ``BoilerplateParams.min_model_count``."""
        entry = self._sites.get(site)
        if entry is None or min_count <= 1:
            return
        for counts in (entry.counts, *entry.clusters.values()):
            for h in [h for h, n in counts.blocks.items() if n < min_count]:
                del counts.blocks[h]

    def forget_site(self, site: str) -> None:
        """Drop everything counted for ``site`` (before it is loaded again from a shared store)."""
        self._sites.pop(site, None)

    def _update(self, site: str, cluster: str, hashes: Iterable[str | None], sign: int) -> None:
        unique = frozenset(h for h in hashes if h)
        entry = self._sites.setdefault(site, _Site())
        entry.counts.add(unique, sign)
        entry.clusters.setdefault(cluster, _Counts()).add(unique, sign)

    # -- reading ---------------------------------------------------------------------------------------
    def sites(self) -> list[str]:
        return sorted(self._sites)

    def clusters(self, site: str) -> list[str]:
        entry = self._sites.get(site)
        return sorted(entry.clusters) if entry else []

    def pages(self, site: str, cluster: str | None = None) -> int:
        counts = self._counts(site, cluster)
        return counts.pages if counts else 0

    def block_pages(self, site: str, block: str, cluster: str | None = None) -> int:
        counts = self._counts(site, cluster)
        return counts.blocks.get(block, 0) if counts else 0

    def distinct_blocks(self) -> int:
        return sum(len(s.counts.blocks) for s in self._sites.values())

    def _counts(self, site: str, cluster: str | None) -> _Counts | None:
        entry = self._sites.get(site)
        if entry is None:
            return None
        return entry.counts if cluster is None else entry.clusters.get(cluster)

    def iter_counts(self, site: str, cluster: str | None = None) -> Iterator[tuple[str, int]]:
        counts = self._counts(site, cluster)
        if counts:
            yield from sorted(counts.blocks.items())

    # -- deciding ----------------------------------------------------------------------------------------
    def decide(
        self, site: str, cluster: str, block: str | None, normalised_chars: int, params: BoilerplateParams
    ) -> TemplateDecision:
        """Is ``block`` template on ``site`` (or in its ``cluster``)? Site evidence is checked first."""
        entry = self._sites.get(site) if block else None
        if entry is None:
            return UNDECIDED
        long_block = normalised_chars >= params.protect_min_chars
        best = UNDECIDED
        scopes = ((entry.counts, SCOPE_SITE, params.min_pages, params.min_share_of_pages),
                  (entry.clusters.get(cluster) if params.clusters_enabled else None, SCOPE_CLUSTER,
                   params.cluster_min_pages, params.cluster_min_share_of_pages))
        for counts, reason, min_pages, min_share in scopes:
            if counts is None or counts.pages < min_pages:
                continue
            n = counts.blocks.get(block, 0)
            share = n / counts.pages
            if n < min_pages or share < min_share:
                if share > best.share and best.reason is None:
                    best = TemplateDecision(None, n, share)
                continue
            if long_block and share < params.protect_min_share:
                best = TemplateDecision(None, n, share, protected=True)
                continue
            return TemplateDecision(reason, n, share)
        return best

    def decide_structure(
        self,
        site: str,
        cluster: str,
        slot: str | None,
        pieces: list[tuple[str, int]],
        normalised_chars: int,
        params: BoilerplateParams,
        sibling: bool = False,
    ) -> TemplateDecision:
        """Is a block template by its place in the template rather than its text? ``slot`` is the hash of its
        structural slot (None when unknown), ``pieces`` the (hash, normalised length) of its pieces.

        Yes when, in the site or in the block's cluster, the slot is on at least ``structure_min_share_of_pages``
        of the pages, at least one piece is (a "Prev", a "Home" on every page: ``min_share_of_pages`` as for
        blocks) and every other piece (if any: "Prev | Next" where the bar is usually "Prev | Up | Next") is a
        short name (at most ``structure_max_name_chars``: a page title, a
        chapter title, a date): "Prev | <chapter title> | Next", "<previous title> | Home | <next title>",
        "Home > <section> > <page>". A block of one piece, or a long one, is never template by structure.

        ``sibling``: the block shares its container with a block template by structure on its page (the
        caller checked); only its slot's share counts (``pieces`` are not looked at)."""
        if not params.structure_enabled or normalised_chars >= params.protect_min_chars:
            return UNDECIDED
        if not sibling and len(pieces) < 2 or sibling and not slot:
            return UNDECIDED
        scopes = [(None, params.min_pages, params.min_share_of_pages)]
        if params.clusters_enabled:
            scopes.append((cluster, params.cluster_min_pages, params.cluster_min_share_of_pages))
        for scope_cluster, min_pages, min_share in scopes:
            counts = self._counts(site, scope_cluster)
            if counts is None or counts.pages < min_pages:
                continue
            slot_pages = counts.blocks.get(slot, 0) if slot else counts.pages
            slot_share = slot_pages / counts.pages
            if slot_pages < min_pages or slot_share < params.structure_min_share_of_pages:
                continue
            if sibling:
                return TemplateDecision(SCOPE_STRUCTURE, slot_pages, round(slot_share, 4))
            fixed = [n for h, n in pieces if counts.blocks.get(h, 0) >= max(min_pages, min_share * counts.pages)]
            names = [n for h, n in pieces if counts.blocks.get(h, 0) < max(min_pages, min_share * counts.pages)]
            if fixed and max(names, default=0) <= params.structure_max_name_chars:
                return TemplateDecision(SCOPE_STRUCTURE, slot_pages, round(slot_share, 4))
        return UNDECIDED

    def template_hashes(self, site: str, cluster: str | None, params: BoilerplateParams) -> set[str]:
        """Hashes that are template by share in one scope (site when ``cluster`` is None); no protection."""
        counts = self._counts(site, cluster)
        if counts is None:
            return set()
        min_pages = params.min_pages if cluster is None else params.cluster_min_pages
        min_share = params.min_share_of_pages if cluster is None else params.cluster_min_share_of_pages
        if counts.pages < min_pages:
            return set()
        return {h for h, n in counts.blocks.items() if n >= min_pages and n / counts.pages >= min_share}
