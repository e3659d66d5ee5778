"""Check a crawl's records (``boilerstrip check``): per site, what a reader of the output would notice.

Works on any JSONL whose records have ``url`` and ``text`` (boilerstrip's or another tool's); the other
fields it reads are optional (``title``, ``method``, ``fetch``, ``boilerplate_removed_chars``). Per site:

- does the first paragraph match the page's title (the text starts with its headline);
- lines repeated across many pages, with page counts and shares, and *near repeats*: lines that differ only
  in names and numbers ("Prev | Admonitions | Next", "Prev | Callouts | Next": pattern "prev … next");
- the share of pages showing a navigation line (Home, Login, Subscribe, Next, Cookie, ...);
- empty and very short pages, pages by method and fetch mode, the removed-share distribution;
- a verdict (``ok``/``warn``/``fail``) with its reasons, each named by a rule (:data:`RULES`).

Pure: no Scrapy, Twisted or Playwright; reads records, writes nothing. Deterministic: the same records in
any order give the same report.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from boilerstrip.boilerplate.blocks import normalise_block, site_of_url, split_pieces
from boilerstrip.chunks.parse import HEADING, parse_blocks

from ._vocab import NAVIGATION_PHRASES, NAVIGATION_WORDS, WEAK_NAVIGATION_WORDS
from .params import CheckParams

__all__ = ["RULES", "VERDICTS", "check_records", "confidence_exclusion", "navigation_line", "line_pattern", "failed_rules"]

#: the rules a reason can name (``--fail-on``); "any" matches every one
RULES = ("repeated_lines", "near_repeats", "navigation", "first_paragraph", "empty_pages", "short_pages")
VERDICTS = ("ok", "warn", "fail")
ELLIPSIS = "…"
#: the removed-share histogram: ten bins of 10%
_BINS = 10


def navigation_line(line: str, params: CheckParams | None = None) -> bool:
    """Is ``line`` a navigation line: at most ``nav_line_max_words`` words, with two distinct navigation
    words ("Prev ... Next"), or only navigation words ("Home", "Log in"), or a piece of only navigation
    words among several ("<title> | Home | <title>")? (``_vocab``: weak words such as "up", "back", "log"
    count only in a line or piece of nothing else.)"""
    params = params or CheckParams()
    words = normalise_block(line).split()
    if not words or len(words) > params.nav_line_max_words:
        return False
    strong = {w for w in words if w in NAVIGATION_WORDS}
    if len(strong) >= 2 or _all_navigation(words):
        return True
    pieces = split_pieces(line)
    return len(pieces) >= 2 and any(_all_navigation(p.split()) for p in pieces)


def _all_navigation(words: list[str]) -> bool:
    """Only navigation words, at least one of them a strong one or a navigation phrase ("log in")."""
    if not all(w in NAVIGATION_WORDS or w in WEAK_NAVIGATION_WORDS for w in words):
        return False
    joined = f" {' '.join(words)} "
    return any(w in NAVIGATION_WORDS for w in words) or any(f" {p} " in joined for p in NAVIGATION_PHRASES)


def line_pattern(line: str, common: set[str] | frozenset[str]) -> str | None:
    """The near-repeat pattern of a line: what stays the same when names and numbers change. A line of
    several pieces ("Prev | Admonitions | Next") keeps its pieces made of common words only; another line
    keeps its common words, and a common word between two others is part of a name ("Pagination and
    General Styles") and goes too. The rest becomes "…"; numbers stay "0" (lines that differ only in
    numbers are one repeated line already). None when the pattern is the line itself or holds no fixed word."""
    pieces = split_pieces(line)
    if len(pieces) >= 2:
        marks = [p if all(w in common or w.isdigit() for w in p.split()) else None for p in pieces]
    else:
        words = normalise_block(line).split()
        marks = [w if w in common or w.isdigit() else None for w in words]
        for i in range(1, len(marks) - 1):
            if marks[i] is not None and marks[i - 1] is None and marks[i + 1] is None:
                marks[i] = None
    if all(m is not None for m in marks) or not any(m is not None and not m.isdigit() for m in marks):
        return None
    out: list[str] = []
    for m in marks:
        token = m if m is not None else ELLIPSIS
        if token == ELLIPSIS and out and out[-1] == ELLIPSIS:
            continue
        out.append(token)
    return " ".join(out)


@dataclass
class _Page:
    url: str
    lines: list[str]  # non-empty lines, stripped
    title: str | None
    #: the normalised text of the record's Markdown headings (``#`` lines): which lines head a section
    headings: frozenset[str]
    chars: int
    method: str
    fetch: str
    removed_share: float | None


@dataclass
class _Site:
    pages: list[_Page] = field(default_factory=list)


def _page(record: Mapping[str, Any]) -> _Page | None:
    url = record.get("url")
    if not isinstance(url, str) or not url:
        return None
    text = record.get("text")
    text = text if isinstance(text, str) else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    title = record.get("title")
    removed = record.get("boilerplate_removed_chars")
    removed_share = None
    if isinstance(removed, (int, float)) and not isinstance(removed, bool) and removed >= 0:
        total = removed + len(text.strip())
        removed_share = removed / total if total else 0.0
    return _Page(url, lines, title if isinstance(title, str) and title.strip() else None, _headings(record),
                 len(text.strip()), str(record.get("method") or "unknown"), str(record.get("fetch") or "unknown"), removed_share)


def _headings(record: Mapping[str, Any]) -> frozenset[str]:
    """The normalised text of the record's Markdown headings (read as the chunker reads them: a ``#`` line
    inside a code block is code); none without Markdown."""
    markdown = record.get("markdown")
    if not isinstance(markdown, str):
        return frozenset()
    return frozenset(normalise_block(block.title) for block in parse_blocks(markdown) if block.kind == HEADING)


def _first_paragraph_matches(page: _Page, params: CheckParams) -> bool:
    first = set(normalise_block(page.lines[0], digits=False).split()) if page.lines else set()
    title = set(normalise_block(page.title or "", digits=False).split())
    if not first or not title:
        return False
    shared = len(first & title)
    if shared >= params.first_paragraph_min_overlap * len(first):
        return True
    return (shared >= params.first_paragraph_min_overlap * len(title)
            and len(first) <= 2 * len(title) + params.first_paragraph_extra_words)


def _without_numbering(words: list[str]) -> list[str]:
    """A normalised line's words without the section number it opens with ("6.1.1. DESCRIPTION" is
    "0 0 0 description": a label of one word, as "Description" is, on every page of a manual)."""
    i = 0
    while i < len(words) - 1 and words[i].isdigit():
        i += 1
    return words[i:]


def _share(n: int, total: int) -> float:
    return round(n / total, 4) if total else 0.0


def _site_report(site: str, pages: list[_Page], params: CheckParams) -> dict[str, Any]:
    pages = sorted(pages, key=lambda p: p.url)
    total = len(pages)
    # -- lines repeated across pages (each page counts a line once), with an example from the smallest URL
    line_pages: Counter[str] = Counter()
    line_headline: Counter[str] = Counter()  # pages where the line is the page's headline (repeats its title)
    line_heading: Counter[str] = Counter()  # pages where the line heads a section (a Markdown heading)
    line_example: dict[str, str] = {}
    word_pages: Counter[str] = Counter()
    for page in pages:
        keys = set()
        for i, line in enumerate(page.lines):
            key = normalise_block(line)
            if key and key not in keys:
                keys.add(key)
                line_example.setdefault(key, line)
                if i == 0 and _first_paragraph_matches(page, params):
                    line_headline[key] += 1
                if key in page.headings:
                    line_heading[key] += 1
        line_pages.update(keys)
        word_pages.update({w for key in keys for w in key.split()})
    floor = max(params.repeated_min_pages, math.ceil(params.repeated_min_share * total))
    repeated = []
    for key, n in line_pages.items():
        if n >= floor:
            words = key.split()
            unnumbered = _without_numbering(words)
            # a section label: a line of a word or two ("Description"), or a numbered section heading of a
            # manual ("6.1.4. MODULE TYPES PROVIDED", a heading on most of its pages): a template's line
            # (a banner, a "related posts" box) carries no section number
            label = (len(unnumbered) <= params.label_max_words
                     or (len(unnumbered) < len(words) and 2 * line_heading[key] >= n))
            repeated.append({"text": line_example[key], "pages": n, "share": _share(n, total),
                             "navigation": navigation_line(line_example[key], params),
                             "label": label and not navigation_line(key, params),
                             "headline_share": _share(line_headline[key], n)})
    repeated.sort(key=lambda e: (-e["pages"], e["text"]))
    # -- near repeats: lines that differ only in names and numbers
    common = {w for w, n in word_pages.items() if n >= params.pattern_word_min_share * total}
    pattern_pages: dict[str, set[str]] = defaultdict(set)
    pattern_edge: Counter[str] = Counter()
    pattern_headline: Counter[str] = Counter()
    pattern_example: dict[str, str] = {}
    for page in pages:
        seen: set[str] = set()
        for i, line in enumerate(page.lines):
            pattern = line_pattern(line, common)
            if pattern is None or pattern in seen:
                continue
            seen.add(pattern)
            pattern_pages[pattern].add(page.url)
            pattern_example.setdefault(pattern, line)
            if i == 0 and _first_paragraph_matches(page, params):
                pattern_headline[pattern] += 1
            elif i < params.edge_lines or i >= len(page.lines) - params.edge_lines:
                pattern_edge[pattern] += 1
    near = []
    for pattern, urls in pattern_pages.items():
        n = len(urls)
        if n >= floor:
            nav = any(w in NAVIGATION_WORDS for w in pattern.split())
            near.append({"text": pattern_example[pattern], "pattern": pattern, "pages": n, "share": _share(n, total),
                         "at_page_edge_share": _share(pattern_edge[pattern], n), "navigation": nav,
                         "headline_share": _share(pattern_headline[pattern], n),
                         "fixed_words": sum(1 for w in pattern.split() if w != ELLIPSIS and not w.isdigit())})
    near.sort(key=lambda e: (-e["pages"], e["pattern"]))
    # -- navigation lines
    nav_examples: Counter[str] = Counter()
    nav_pages = 0
    for page in pages:
        found = [line for line in page.lines if navigation_line(line, params)]
        if found:
            nav_pages += 1
            nav_examples.update({normalise_block(line) for line in found})
    # -- first paragraph
    titled = [p for p in pages if p.title]
    matching = sum(1 for p in titled if _first_paragraph_matches(p, params))
    # -- sizes, methods, removed share
    empty = [p.url for p in pages if p.chars == 0]
    short = [p.url for p in pages if 0 < p.chars < params.short_page_max_chars]
    histogram = [0] * _BINS
    for p in pages:
        if p.removed_share is not None:
            histogram[min(_BINS - 1, int(p.removed_share * _BINS))] += 1
    lengths = sorted(p.chars for p in pages)
    report: dict[str, Any] = {
        "site": site,
        "pages": total,
        "repeated_lines": repeated[: params.max_listed],
        "near_repeated_lines": near[: params.max_listed],
        "nav_word_share": _share(nav_pages, total),
        "nav_lines": [{"text": t, "pages": n} for t, n in sorted(nav_examples.items(), key=lambda e: (-e[1], e[0]))
                      ][: params.max_listed],
        "first_paragraph_match_share": _share(matching, len(titled)),
        "pages_with_title": len(titled),
        "empty_pages": len(empty),
        "short_pages": len(short),
        "empty_examples": empty[:10],
        "short_examples": short[:10],
        "methods": dict(sorted(Counter(p.method for p in pages).items())),
        "fetch_modes": dict(sorted(Counter(p.fetch for p in pages).items())),
        "removed_share_histogram": histogram,
        "text_chars_quartiles": [lengths[(len(lengths) - 1) * q // 4] for q in range(5)] if lengths else [],
    }
    report["reasons"] = _reasons(report, repeated, near, params)
    levels = {r["level"] for r in report["reasons"]}
    report["verdict"] = "fail" if "fail" in levels else "warn" if "warn" in levels else "ok"
    return report


def _level(share: float, warn: float, fail: float) -> str | None:
    return "fail" if share >= fail else "warn" if share >= warn else None


def _reasons(report: Mapping[str, Any], repeated: list[dict[str, Any]], near: list[dict[str, Any]],
             params: CheckParams) -> list[dict[str, Any]]:
    reasons: list[dict[str, Any]] = []
    for entry in repeated:
        if entry["label"] or entry["headline_share"] >= 0.5:
            continue  # a section label over every reference page, or the pages' headlines: listed, not judged
        level = _level(entry["share"], params.repeated_warn_share, params.repeated_fail_share)
        if level:
            reasons.append({"rule": "repeated_lines", "level": level,
                            "detail": f"line on {entry['pages']} pages ({entry['share']:.0%}): {entry['text'][:80]!r}"})
    for entry in near:
        if entry["headline_share"] >= 0.5:
            continue  # "SQLite Release 3.41.0": the pages' own headlines
        if not entry["navigation"] and (entry["at_page_edge_share"] < 0.5 or entry["fixed_words"] < 2):
            continue  # a generated line in the middle of every page is the page's structure
        level = _level(entry["share"], params.repeated_warn_share, params.repeated_fail_share)
        if level:
            reasons.append({"rule": "near_repeats", "level": level,
                            "detail": f"lines like {entry['text'][:80]!r} ({entry['pattern']!r}) on "
                                      f"{entry['pages']} pages ({entry['share']:.0%})"})
    level = _level(report["nav_word_share"], params.nav_warn_share, params.nav_fail_share)
    if level:
        reasons.append({"rule": "navigation", "level": level,
                        "detail": f"navigation lines on {report['nav_word_share']:.0%} of pages"})
    pages = report["pages"]
    if (report["pages_with_title"] * 2 >= pages > 0
            and report["first_paragraph_match_share"] < params.first_paragraph_warn_share):
        reasons.append({"rule": "first_paragraph", "level": "warn",
                        "detail": f"the first paragraph repeats the title on only "
                                  f"{report['first_paragraph_match_share']:.0%} of titled pages"})
    level = _level(_share(report["empty_pages"], pages), params.empty_warn_share, params.empty_fail_share)
    if level:
        reasons.append({"rule": "empty_pages", "level": level,
                        "detail": f"{report['empty_pages']} empty pages ({_share(report['empty_pages'], pages):.0%})"})
    if pages and report["short_pages"] / pages >= params.short_warn_share:
        reasons.append({"rule": "short_pages", "level": "warn",
                        "detail": f"{report['short_pages']} pages under {params.short_page_max_chars} characters "
                                  f"({_share(report['short_pages'], pages):.0%})"})
    return reasons


def confidence_exclusion(record: Mapping[str, Any], min_confidence: float) -> str | None:
    """Why ``record`` is left out under ``--min-confidence`` (``confidence_too_low``, or
    ``confidence_missing`` for a record without a numeric ``confidence``); None when it stays (or 0: off)."""
    if not min_confidence:
        return None
    confidence = record.get("confidence")
    if not isinstance(confidence, (int, float)) or isinstance(confidence, bool):
        return "confidence_missing"
    return "confidence_too_low" if confidence < min_confidence else None


def check_records(records: Iterable[Mapping[str, Any]], params: CheckParams | None = None,
                  min_confidence: float = 0.0) -> dict[str, Any]:
    """The report of a crawl's records: ``{"sites": [...], "pages", "skipped", "verdict"}``; records without
    a ``url`` are skipped (counted); one record per URL (the last that sorts highest wins). With
    ``min_confidence``, records whose extraction ``confidence`` is below it (or missing) are left out of the
    report, listed under ``excluded`` with their reason."""
    params = params or CheckParams()
    by_url: dict[str, _Page] = {}
    skipped = 0
    excluded: list[dict[str, Any]] = []
    for record in records:
        if not isinstance(record, Mapping) or record.get("outcome") in ("failed", "filtered"):
            skipped += 1
            continue
        reason = confidence_exclusion(record, min_confidence)
        if reason is not None:
            excluded.append({"url": record.get("url"), "confidence": record.get("confidence"), "reason": reason})
            continue
        page = _page(record)
        if page is None:
            skipped += 1
            continue
        old = by_url.get(page.url)
        if old is None or (page.lines, page.chars) > (old.lines, old.chars):
            by_url[page.url] = page
    sites: dict[str, list[_Page]] = defaultdict(list)
    for page in by_url.values():
        sites[site_of_url(page.url)].append(page)
    reports = [_site_report(site, sites[site], params) for site in sorted(sites)]
    verdicts = {r["verdict"] for r in reports}
    return {
        "check_version": 1,
        "pages": len(by_url),
        "skipped_records": skipped,
        "excluded": sorted(excluded, key=lambda e: (str(e["url"]), e["reason"])),
        "excluded_by_reason": dict(sorted(Counter(e["reason"] for e in excluded).items())),
        "verdict": "fail" if "fail" in verdicts else "warn" if "warn" in verdicts else "ok",
        "sites": reports,
    }


def failed_rules(report: Mapping[str, Any], fail_on: Iterable[str]) -> list[str]:
    """The rules of ``fail_on`` ("any" for all) that a reason of some site names (warn or fail)."""
    wanted = set(fail_on)
    hits = set()
    for site in report.get("sites", ()):
        for reason in site.get("reasons", ()):
            if reason["rule"] in wanted or "any" in wanted:
                hits.add(reason["rule"])
    return sorted(hits)
