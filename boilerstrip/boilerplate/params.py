"""Every threshold of cross-page boilerplate removal and duplicate detection, in frozen dataclasses.

The Scrapy glue reads :class:`BoilerplateParams` from ``BOILERSTRIP_BOILERPLATE_PARAMS`` and
:class:`DuplicateParams` from ``BOILERSTRIP_DUPLICATES_PARAMS`` (``boilerstrip.config``). Values were set
on ``benchmarks/site_benchmark.py`` (sqlite3-doc, debian-handbook) and the demo site; each comment says why.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BoilerplateParams", "DuplicateParams", "DUPLICATE_MODES", "SOURCES"]

DUPLICATE_MODES = ("mark", "drop")
SOURCES = ("auto", "extracted", "page")


@dataclass(frozen=True)
class BoilerplateParams:
    # --- what is cleaned ----------------------------------------------------------------------------
    #: "extracted": the extractor's blocks (its main-content choice), minus template. "page": every
    #: block of the page (the extractor's segmentation; <nav>, <aside>, <footer> and scripts excluded)
    #: minus template: the cross-page model alone decides what is content. "page" wins on documentation
    #: sites with one strong template (site benchmark: F1 0.96-0.99 against 0.83-0.88) but keeps per-page
    #: chrome the model cannot see (a table of contents, a sidebar that differs on every page).
    #: "auto" (default): per page, the extractor's blocks, or the page's whole non-template region when
    #: the extractor found no content or kept clearly less than a region that holds it (see
    #: ``boilerplate/source.py``; the record's flags say when the region won and why).
    source: str = "auto"
    #: auto: the region wins when the extracted text (after template removal) is less than this share of
    #: the region's text (the region adds more than 3%: a left-out heading, box or list). Sweep on the
    #: site benchmark (direct, 2026-11-30, F1 sqlite3-doc / debian-handbook): 0.9 0.946/0.981, 0.95
    #: 0.952/0.984, 0.97 0.955/0.987, 1.0 0.959/0.990 (precision flat at 0.98/0.99-1.0: the region minus
    #: template and furniture is clean there); 0.97 leaves the extractor's choice alone on pages where
    #: the region adds next to nothing.
    max_extracted_share_of_region: float = 0.97
    #: ...and the region holds at least this share of the extracted text (same blocks): the extractor's
    #: choice is a part of the region, not something else (a page whose region is a comment thread).
    min_held_share: float = 0.9
    #: auto, wider region: what the comparison counts of the region is the extracted blocks and the
    #: *prose* reached from them block by block (the output is the extracted blocks' span widened the same
    #: way; see ``source.py``). A block with more link characters than this share of its text is a link
    #: line: stepped over, not counted (a "more from this author" list, another article's title), unless a
    #: sentence ending with ":" introduces its list. 0.5: prose holds a few links, a list of links is
    #: nearly all link text. These three rules keep ``auto`` from taking an article site's bio box, "more
    #: from" list and comments (``tests/test_boilerplate_newsite.py``); the site benchmark (direct,
    #: 2026-11-30, F1 sqlite3-doc / debian-handbook) is flat over them: link density 0.3 0.955/0.983,
    #: 0.5 0.955/0.983, 0.7 0.956/0.983; min chars 20 0.955/0.983, 40 0.955/0.983, 80 0.955/0.981;
    #: max pages 1 0.955/0.983, 3 0.956/0.983 (one leaking page). Without them (the previous rule):
    #: 0.958/0.988, and the news fixture's pages get the bio and the "more from" list.
    extra_max_link_density: float = 0.5
    #: ...a non-heading block shorter than this (characters) stops the widening: a commenter's name and
    #: date, an author's name line above a bio.
    extra_min_chars: int = 40
    #: ...as does a block on more than this many pages of the page's cluster (counted by the model): an
    #: author's bio box on each of their articles, a title listed on other pages. 1: prose is this page's
    #: own. Counted in the cluster, not the site (2026-12-01): a parameter documented in two parts of a
    #: manual (fo/ and html/) is still its pages' own text (docbook-xsl-doc-html F1 0.959 -> 0.963 direct;
    #: sqlite3-doc, debian-handbook and the news fixture unchanged). Headings, code and list items are
    #: never stopped by ``extra_min_chars``, and a block between the headline and the extracted text (the
    #: lede) is always taken (0.963 -> 0.983).
    extra_max_pages: int = 1
    #: auto: the region's heading that repeats the page's title (the headline, which the extractor leaves
    #: to ``title``) is searched among the region's first this many kept blocks and left out of the
    #: comparison and of the text ("region:headline"): a headline alone never flips the source, and no
    #: record's text starts with it. 5: the extractor's ``max_headline_search_blocks``.
    headline_search_blocks: int = 5
    #: ...a heading repeats the title when its words are part of the title's ("Title | Site"), or hold the
    #: title's words and the title is at least this share of them (the extractor's
    #: ``min_headline_match_share``: a one-word title does not match every heading).
    min_headline_match_share: float = 0.6

    #: auto: a page whose region (minus template, comments and hidden text) is at least this share list
    #: items holding a link, with at least ``list_page_min_items`` of them, *is* that list (a chapter's
    #: table of contents, a sitemap page, a command index): its text is the region with the list, even
    #: where the class vocabulary calls the list furniture ("toc"); reason ``list_content``. Above 1: off.
    #: Site benchmark (direct, 2026-12-01, F1 docbook-xsl-doc-html / debian-handbook): off 0.980/0.983,
    #: 0.3, 0.5 and 0.7 all 0.983/0.980 (the handbook's index page is its table of contents, which its
    #: truth leaves out); 0.5: half the page, "the page is a list".
    list_page_min_share: float = 0.5
    list_page_min_items: int = 3

    # --- the template rule -----------------------------------------------------------------------
    #: A block on more than this share of a site's pages is template. 0.8 (the issue's default): a
    #: footer or "related posts" box is on ~100% of pages; real text repeated on 80% of a site is rare.
    min_share_of_pages: float = 0.8
    #: ...and on at least this many pages: below 5 pages a share says little (2 of 2 pages is 100%).
    min_pages: int = 5
    #: Also learn per template cluster (URL path pattern: first folder + depth), so a block on every
    #: article but not on listings still goes. Same share rule, counted within the cluster.
    clusters_enabled: bool = True
    cluster_min_share_of_pages: float = 0.8
    #: A cluster needs this many pages before it may declare a block template (as ``min_pages``).
    cluster_min_pages: int = 5

    #: Among consecutive list items (or table rows), a window of ``list_min_items`` items in which at
    #: least this share (and at least 2 items) is template is a template list: its other short items go
    #: too ("template:list"). It catches the slot that changes per page: the "Prev <title>" of a
    #: Prev | Up | Home | Next bar, the one "related post" that differs on the related posts' own pages.
    #: 0.5 with windows of 3: two constant items next to a varying one.
    list_min_template_share: float = 0.5
    list_min_items: int = 3

    #: Structural template (``template:structure``): a block of several pieces (cells, the items of a
    #: bar) whose text differs per page but whose slot (tag path with class/id, kind, links or not) is on
    #: at least this share of the pages of its site or cluster, with at least one piece that is template
    #: by itself ("Prev", "Home", on ``min_share_of_pages``) and only short names besides: the per-page
    #: navigation bars of generated manuals. 0.8, as for blocks. Site benchmark (crawl, 2026-12-01):
    #: docbook-xsl-doc-html records with a navigation line 32% -> 0%; off (direct): see the sweep in
    #: docs/cross-page.md; sqlite3-doc and debian-handbook unchanged (their bars are list items, caught by
    #: the list rule).
    structure_enabled: bool = True
    structure_min_share_of_pages: float = 0.8
    #: ...a varying piece is a name when its normalised text is at most this long: page and chapter titles
    #: of the three benchmark sites are under 60; a sentence in a table cell is longer. Sweep (direct,
    #: 2026-12-01, docbook-xsl-doc-html): 40 leaves bars with long titles on 1.5% of records, 80 and 160 none.
    structure_max_name_chars: int = 80

    #: A heading that is template by its text stays when the blocks of its section (up to the next
    #: heading) hold at least this many characters found on this page only: "Synopsis" and "Description"
    #: head every reference page of a generated manual and are that page's structure, not chrome. 0: off.
    #: 20: one short sentence ("Sets the line-height property." is 30). Site benchmark (direct,
    #: 2026-12-01, F1 docbook-xsl-doc-html / debian-handbook): off 0.851/0.980, 20 0.983/0.980, 60
    #: 0.939/0.980.
    section_min_own_chars: int = 20

    # --- normalisation ---------------------------------------------------------------------------
    #: Replace every run of digits by "0" before hashing, so "Page 3 of 12" and "(c) 2024" match across
    #: pages. Headings like "6.2. APT" stay distinct: their words differ.
    normalise_digits: bool = True

    # --- safety ------------------------------------------------------------------------------------
    #: A block whose normalised text is at least this long looks unique (real prose): it is removed only
    #: with overwhelming evidence (``protect_min_share``). 200 chars: footers, banners and "related"
    #: items are shorter; a long legal footer on every page still clears 0.98.
    protect_min_chars: int = 200
    protect_min_share: float = 0.98
    #: Never blank a page: when removal would leave fewer than this many characters, nothing is removed
    #: and the page is flagged ``boilerplate_kept_too_short``. 1: any real text left is kept as is.
    min_kept_chars: int = 1
    #: ...unless every block removed is on at least this share of the pages of its scope: then the page
    #: held nothing but template beyond doubt (the extractor found no content, e.g. a page that is one SVG
    #: diagram, and fell back to the menu); its text is left empty and the page flagged
    #: ``boilerplate_only`` (its blocks stay in the record). 0.95: site menus and taglines are on ~100%.
    blank_min_share: float = 0.95
    #: A page that loses more than this share of its text is flagged ``boilerplate_removed_most``
    #: (listed as suspicious in the report, still cleaned). 0.8: template-only pages (tag listings).
    max_removed_share_unflagged: float = 0.8

    # --- the crawl-time pipeline ---------------------------------------------------------------------
    #: The pipeline reloads a site's counts from the run's state after this many of its pages, so a
    #: shared state (several workers) lends each worker what the others learned. Not tuned: a reload
    #: costs one read of the site's distinct blocks, cheap beside 200 page cleans; the final output
    #: comes from the finishing pass either way.
    state_refresh_pages: int = 200

    def min_model_count(self) -> int:
        """The fewest pages a block must be on for its count to decide anything: with the defaults 2 (every
        rule reading a count needs at least ``min_pages`` / ``cluster_min_pages`` pages, more than
        ``extra_max_pages``, or ``structure_min_share_of_pages`` of at least ``min_pages`` pages), so the
        final model leaves out the blocks found on one page -- most of a site's distinct blocks, its own
        text -- and its memory follows the template, not the pages. 1 (keep every count) when a setting
        lets one page decide."""
        low = min(self.min_pages, self.cluster_min_pages)
        if low >= 2 and self.extra_max_pages >= 1 and self.structure_min_share_of_pages * low > 1:
            return 2
        return 1

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {self.source!r}")
        for name in ("min_share_of_pages", "cluster_min_share_of_pages", "protect_min_share", "blank_min_share",
                     "list_min_template_share", "structure_min_share_of_pages", "max_extracted_share_of_region", "min_held_share", "min_headline_match_share",
                     "extra_max_link_density",
                     "max_removed_share_unflagged"):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {value!r}")
        for name in ("min_pages", "cluster_min_pages", "list_min_items", "state_refresh_pages"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.list_page_min_share <= 0 or self.list_page_min_items < 1:
            raise ValueError("list_page_min_share must be > 0 and list_page_min_items >= 1")
        if self.section_min_own_chars < 0:
            raise ValueError(f"section_min_own_chars must be >= 0, got {self.section_min_own_chars!r}")
        if self.structure_max_name_chars < 1:
            raise ValueError(f"structure_max_name_chars must be >= 1, got {self.structure_max_name_chars!r}")
        if self.extra_min_chars < 0 or self.extra_max_pages < 1:
            raise ValueError("extra_min_chars must be >= 0 and extra_max_pages >= 1")
        if self.headline_search_blocks < 0:
            raise ValueError(f"headline_search_blocks must be >= 0, got {self.headline_search_blocks!r}")
        if self.min_kept_chars < 0 or self.protect_min_chars < 0:
            raise ValueError("min_kept_chars and protect_min_chars must be >= 0")


@dataclass(frozen=True)
class DuplicateParams:
    #: "mark": the crawl keeps duplicates, sets ``duplicate_of`` and the finishing pass drops them
    #: deterministically (same output whatever the crawl order). "drop": the crawl drops them at once
    #: (first kept wins: the kept URL then depends on the crawl order).
    mode: str = "mark"
    #: Near duplicates are kept and marked (``duplicate_of``, ``duplicate_similarity``, flag
    #: ``near_duplicate``): in a site crawl the user asked for every page, and a 180-entry command index
    #: 92% similar to the part index holding it is still a page of its own. True (``--drop-duplicates``)
    #: drops them (in the finishing pass; at once with ``mode = "drop"``). Exact copies of a page's text
    #: under another URL are dropped either way (reason ``exact_duplicate`` in the ledger).
    drop_near: bool = False
    #: Near duplicates: estimated Jaccard similarity of word shingles at or above this. 0.9: the same
    #: article with a different date line or comment count; two chapters of one manual stay apart.
    near_min_jaccard: float = 0.9
    #: Words per shingle. 5: short enough to be robust to small edits, long enough to ignore shared phrases.
    shingle_words: int = 5
    #: MinHash permutations: 128 keeps the Jaccard estimate within ~0.09 (1/sqrt(128)).
    num_perm: int = 128
    #: Texts with fewer words are only compared exactly: near-duplicate estimates on stubs are noise.
    near_min_words: int = 50
    #: Texts shorter than this (characters) are never duplicates of anything: two empty pages are not
    #: one page (they are flagged elsewhere).
    exact_min_chars: int = 1

    def __post_init__(self) -> None:
        if self.mode not in DUPLICATE_MODES:
            raise ValueError(f"mode must be one of {DUPLICATE_MODES}, got {self.mode!r}")
        if not 0.0 < self.near_min_jaccard <= 1.0:
            raise ValueError(f"near_min_jaccard must be in (0, 1], got {self.near_min_jaccard!r}")
        if self.shingle_words < 1 or self.num_perm < 16:
            raise ValueError("shingle_words must be >= 1 and num_perm >= 16")
