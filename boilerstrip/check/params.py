"""Thresholds of ``boilerstrip check``, in one frozen dataclass (``BOILERSTRIP_CHECK_PARAMS``).

Values were set on crawls of the site benchmark's three sites (sqlite3-doc, debian-handbook,
docbook-xsl-doc-html; ``benchmarks/site_benchmark.py``, 2026-12-01): a clean crawl of each passes (verdict
``ok``), the same crawls with a line injected into 60% of the records, or with the sites' navigation bars
left in (the cross-page model off), fail. Each comment says why that value.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CheckParams"]


@dataclass(frozen=True)
class CheckParams:
    # --- repeated lines ------------------------------------------------------------------------------
    #: A line (or near-repeat pattern) is listed when it is on at least this many pages of a site...
    repeated_min_pages: int = 3
    #: ...and at least this share of them. 0.1: below that a repeated line is a phrase, not a template.
    repeated_min_share: float = 0.1
    #: A listed line on at least this share of pages makes the verdict ``warn``...
    repeated_warn_share: float = 0.2
    #: ...and ``fail`` from this share. 0.5: template lines sit on (nearly) every page of a template; real
    #: text on half of a site's pages is rare. The issue's test injects a line into 60% of the records.
    repeated_fail_share: float = 0.5
    #: Lines of at most this many words that are not navigation are section labels ("Description",
    #: "See also" over every reference page): listed, but they do not count in the verdict. 2: the labels
    #: of the three benchmark sites; a banner or a footer has more words.
    label_max_words: int = 2
    #: Near repeats: a word on at least this share of a site's pages is kept in a line's pattern, rarer ones
    #: (names, titles) and numbers become "…" ("Prev … Next"). 0.25: the DocBook manual's bars (on 32% of
    #: its records before issue 11) must show; a chapter title is on a few pages.
    pattern_word_min_share: float = 0.25
    #: A near repeat counts in the verdict only when most of its lines sit within this many lines of the
    #: top or bottom of their page (where a template's bars are), or when its pattern holds a navigation
    #: word: a generated synopsis line in the middle of every reference page is the page's structure.
    edge_lines: int = 2

    # --- navigation words ---------------------------------------------------------------------------------
    #: A line is a navigation line when it has at most this many words and (two navigation words, or only
    #: navigation words, or a piece of only navigation words between separators: "Prev | Up | Next",
    #: "Home", "<title> | Home | <title>"). 12: a bar with two titles.
    nav_line_max_words: int = 12
    #: The share of pages with a navigation line that makes the verdict ``warn``, and ``fail``. 0.05 / 0.2:
    #: a clean crawl of the benchmark sites has under 1%; the DocBook manual with its bars left in, 32%.
    nav_warn_share: float = 0.05
    nav_fail_share: float = 0.2

    # --- first paragraph ------------------------------------------------------------------------------
    #: The first paragraph matches the title when at least this share of its words are the title's (it is
    #: the headline), or it holds this share of the title's words and is at most twice as long plus
    #: ``first_paragraph_extra_words`` ("Chapter 6. APT" for "APT").
    first_paragraph_min_overlap: float = 0.6
    first_paragraph_extra_words: int = 3
    #: With titles on at least half the pages, a match share below this warns: the text starts with
    #: something else than the page's headline (a bar, a banner) on most pages. 0.5.
    first_paragraph_warn_share: float = 0.5

    # --- empty and short pages --------------------------------------------------------------------------
    #: A page with fewer characters of text is very short. 100: a one-line stub; a reference page that
    #: documents one parameter in one sentence has more.
    short_page_max_chars: int = 100
    #: Shares of empty pages that warn and fail; of very short pages that warn.
    empty_warn_share: float = 0.05
    empty_fail_share: float = 0.25
    short_warn_share: float = 0.3

    # --- the report ------------------------------------------------------------------------------------
    #: Repeated lines and near repeats listed per site (the most frequent first).
    max_listed: int = 30

    def __post_init__(self) -> None:
        for name in ("repeated_min_share", "repeated_warn_share", "repeated_fail_share", "pattern_word_min_share",
                     "nav_warn_share", "nav_fail_share", "first_paragraph_min_overlap", "first_paragraph_warn_share",
                     "empty_warn_share", "empty_fail_share", "short_warn_share"):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {value!r}")
        for name in ("repeated_min_pages", "nav_line_max_words", "max_listed"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("label_max_words", "edge_lines", "first_paragraph_extra_words", "short_page_max_chars"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
