"""Score the structure of the Markdown (code, tables, headings, permalinks) against the page's own main
region, for boilerstrip's extractor and trafilatura's Markdown, on documentation sites of several generators.

Usage (from the repository root)::

    .venv/bin/python benchmarks/markdown_benchmark.py                 # every package installed, + WCXB-dev
    .venv/bin/python benchmarks/markdown_benchmark.py --check         # also exit 1 below markdown_floor.json
    .venv/bin/python benchmarks/markdown_benchmark.py --packages sphinx-doc --cap 30 --no-peers

The truth of a page is its **main region**, the element its generator puts the page's content in (found by
the generator's markup, never by boilerstrip): Sphinx's ``div[role=main]`` (Django's docs:
``#yui-main .yui-g``), DocBook XSL's body without its ``navheader``/``navfooter``, rustdoc's
``section#main-content``, the Debian handbook's (Publican) body without its banner and ``docnav`` bars. On
WCXB-dev pages (any generator), an element of the page counts when its text is in the page's annotated
main text. Pages come from Debian's doc packages, read from disk (no crawl): a fixed-seed sample of at most
``--cap`` pages per package.

Figures, each a share over the package's elements (pages pooled):

- ``pre_fenced``: ``<pre>`` blocks whose text lies inside one fenced code block; ``pre_kept`` those whose
  text is in the Markdown at all (the gap between the two is structure lost; below ``pre_kept``, text the
  extractor did not keep);
- ``code_spans``: inline ``<code>``/``<tt>``/``<kbd>``/``<samp>`` (3+ characters, outside ``<pre>``) whose
  text is inside one code span;
- ``rows``: ``<tr>`` rows of a table (two or more cells with text; tables holding tables left out) written
  as one GFM row line holding every cell's text in order;
- ``headings``: ``<h1>``-``<h4>`` (permalink anchors left out of their text; not inside a table, where a
  heading is a cell's text) written as a ``#`` heading;
  ``headings_h2_4`` the same without ``<h1>`` (boilerstrip gives a page's headline as ``title``);
- ``cells``: table cells whose text is anywhere in the Markdown;
- ``glyph_pages``: share of pages whose Markdown (or ``text``) holds a permalink glyph ("¶", "§", "#"...: the
  text of a symbol-only link in a heading or term of the region to that place) more often than the
  region's text does without those links. Lower is better.

Peers: trafilatura's ``extract(output_format="markdown", include_tables=True, include_formatting=True)``.
Tuning was done on sphinx-doc, python-django-doc, docbook-xsl-doc-html, debian-handbook and WCXB-dev;
``cargo-doc`` (rustdoc) was held out until 2026-12-03, when its headings were looked at. ``python-celery-doc``
(Sphinx, Celery's theme) and ``libpam-doc`` (DocBook XSL) were added on 2026-12-03 after the last Markdown
change. In the third pass (same day) libpam-doc was tuned on with the others and python-celery-doc held
out as the check (its pages were read to find the causes the second pass had named: API tables dropped as
link lists, a headline under a version banner); both have floors since.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from lxml import etree, html as lxml_html  # noqa: E402

from boilerstrip.extraction import decode_html, extract  # noqa: E402

FLOOR_FILE = Path(__file__).resolve().parent / "markdown_floor.json"
WCXB_DATASET = REPO_ROOT.parent / "shared" / "datasets" / "wcxb-dev"  # as extraction_benchmark.py
#: Fixed: changing it changes which pages every recorded figure was measured on.
SEED = 24
DEFAULT_CAP = 150
#: An inline code span shorter than this is not scored (a one-letter variable matches anything).
MIN_CODE_CHARS = 3
FIGURES = ("pre_fenced", "pre_kept", "code_spans", "rows", "headings", "headings_h2_4", "cells", "glyph_pages")
#: figures where lower is better
LOWER_IS_BETTER = frozenset(("glyph_pages",))
_WORD_RE = re.compile(r"\w")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_ATX_MARK_RE = re.compile(r"^ {0,3}#{1,6}(?=[ \t])", re.MULTILINE)
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$", re.MULTILINE)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _dense(text: str) -> str:
    return "".join(text.split())


@dataclass(frozen=True)
class Package:
    """A Debian doc package: where its pages are, and how its generator marks a page's main region."""

    name: str
    generator: str
    root: Path
    region: Callable[[etree._Element], etree._Element | None]
    skip: re.Pattern | None = None  # paths (relative to root) that are not documentation pages


def _first(document: etree._Element, xpath: str) -> etree._Element | None:
    found = document.xpath(xpath)
    return found[0] if found else None


def _without(element: etree._Element | None, xpath: str) -> etree._Element | None:
    if element is None:
        return None
    element = copy.deepcopy(element)
    for child in element.xpath(xpath):
        child.getparent().remove(child)
    return element


#: Sphinx's generated pages: the index of every term (a table of link lists), the module index, the search
#: page and the highlighted source of the modules; not documentation pages
_SPHINX_GENERATED = re.compile(r"^(_modules/|genindex|py-modindex|search\.html)")

PACKAGES = (
    Package("sphinx-doc", "Sphinx", Path("/usr/share/doc/sphinx-doc/html"),
            lambda d: _first(d, "//div[@role='main']"), _SPHINX_GENERATED),
    Package("python-django-doc", "Sphinx (Django theme)", Path("/usr/share/doc/python-django-doc/html"),
            lambda d: _first(d, "//div[@id='yui-main']//div[contains(concat(' ', @class, ' '), ' yui-g ')]"),
            _SPHINX_GENERATED),
    Package("docbook-xsl-doc-html", "DocBook XSL", Path("/usr/share/doc/docbook-xsl-doc-html"),
            lambda d: _without(_first(d, "//body"), ".//div[@class='navheader' or @class='navfooter']")),
    Package("debian-handbook", "Publican (DocBook)", Path("/usr/share/doc/debian-handbook/html/en-US"),
            lambda d: _without(_first(d, "//body"),
                               ".//div[@id='banner'] | .//p[@id='title'] | .//ul[contains(@class, 'docnav')]"),
            re.compile(r"^Common_Content")),
    Package("cargo-doc", "rustdoc", Path("/usr/share/doc/cargo/doc"),
            lambda d: _first(d, "//section[@id='main-content']"),
            re.compile(r"^(src/|.*/all\.html$|.*sidebar-items|help\.html|settings\.html)")),
    # never tuned on (added 2026-12-03 after the last Markdown change, to measure sites nobody looked at):
    # Celery's Sphinx theme and Linux-PAM's DocBook guides
    Package("python-celery-doc", "Sphinx (Celery theme)", Path("/usr/share/doc/python-celery-doc/html"),
            lambda d: _first(d, "//div[@role='main']"), _SPHINX_GENERATED),
    Package("libpam-doc", "DocBook XSL (Linux-PAM)", Path("/usr/share/doc/libpam-doc/html"),
            lambda d: _without(_first(d, "//body"), ".//div[@class='navheader' or @class='navfooter']")),
)


def _pages(package: Package, cap: int) -> list[Path]:
    files = sorted(p for p in package.root.rglob("*.html")
                   if not (package.skip and package.skip.match(str(p.relative_to(package.root)))))
    random.Random(SEED).shuffle(files)
    return sorted(files[:cap])


# --- the truth: elements of the main region ----------------------------------------------------------


def _permalink(anchor: etree._Element) -> bool:
    """A symbol-only link to a fragment in a heading, term or caption (the benchmark's own rule)."""
    href = anchor.get("href") or ""
    text = "".join(anchor.itertext()).strip()
    if not href.startswith("#") or _WORD_RE.search(text) or len(text) > 3:
        return False
    # a link to somewhere else in the page, or to nothing, is no permalink: docutils' "**" of
    # "dict(**kwargs)" in a term, linked to an error message the page leaves out; a permalink's target
    # holds the anchor (its section), sits inside a heading or term, or is an empty marker
    fragment = href[1:]
    targets = anchor.getroottree().getroot().xpath("//*[@id=$f or @name=$f]", f=fragment) if fragment else []
    if fragment and not any(target in anchor.iterancestors() or not "".join(target.itertext()).strip()
                           or target.xpath("ancestor::h1 | ancestor::h2 | ancestor::h3 | ancestor::h4 | "
                                           "ancestor::h5 | ancestor::h6 | ancestor::dt")
                           for target in targets):
        return False
    return bool(anchor.xpath("ancestor::h1 | ancestor::h2 | ancestor::h3 | ancestor::h4 | ancestor::h5 | "
                             "ancestor::h6 | ancestor::dt | ancestor::caption | ancestor::figcaption | "
                             "ancestor::*[contains(@class, 'caption')]"))


def _text(element: etree._Element, skip_permalinks: bool = True) -> str:
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if isinstance(node.tag, str) and node.tag in ("script", "style"):
            return
        if skip_permalinks and node.tag == "a" and _permalink(node):
            return
        if node.text:
            parts.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(element)
    return _norm("".join(parts))


@dataclass
class Truth:
    pres: list[str]
    codes: list[str]
    rows: list[list[str]]
    headings: list[tuple[int, str]]
    cells: list[str]
    glyphs: Counter  # glyph -> how often the region's text holds it outside permalinks


def region_truth(region: etree._Element, keep: Callable[[str], bool] = lambda _text: True,
                 keep_heading: Callable[[str], bool] | None = None) -> Truth:
    """What the region holds; ``keep`` says whether an element's text is main content (WCXB-dev),
    ``keep_heading`` whether a heading's is (default ``keep``)."""
    keep_heading = keep_heading or keep
    pres = [t for pre in region.iter("pre") if not pre.xpath("ancestor::pre") and (t := _norm(pre.text_content()))]
    codes = []
    for code in region.iter("code", "tt", "kbd", "samp"):
        if code.xpath("ancestor::pre | ancestor::code | ancestor::tt | ancestor::kbd | ancestor::samp"):
            continue
        text = _text(code)
        if len(text) >= MIN_CODE_CHARS:
            codes.append(text)
    rows, cells = [], []
    for table in region.iter("table"):
        if table.xpath(".//table"):
            continue
        for tr in table.iter("tr"):
            texts = [_text(cell) for cell in tr if cell.tag in ("td", "th")]
            texts = [t for t in texts if t]
            cells.extend(texts)
            if len(texts) >= 2:
                rows.append(texts)
    # a heading inside a table's cell is that cell's text (a GFM cell holds no heading)
    headings = [(int(h.tag[1]), t) for h in region.iter("h1", "h2", "h3", "h4")
                if (t := _text(h)) and not h.xpath("ancestor::table")]
    glyphs: Counter = Counter()
    symbols = {"".join(a.itertext()).strip() for a in region.iter("a") if _permalink(a)}
    symbols.discard("")
    plain = _text(region)
    for symbol in symbols:
        glyphs[symbol] = plain.count(symbol)
    return Truth([p for p in pres if keep(p)], [c for c in codes if keep(c)],
                 [r for r in rows if keep(" ".join(r))], [h for h in headings if keep_heading(h[1])],
                 [c for c in cells if keep(c)], glyphs)


# --- scoring one Markdown ------------------------------------------------------------------------------


def _unmark(text: str) -> str:
    """Markdown inline text as plain text (for matching): code backticks, "*" emphasis, links, escapes off;
    a code span's text as written (its "*" is C's pointer, not emphasis)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    pieces = _CODE_SPAN_RE.split(text)  # text, then (backticks, code, text) for every span
    return _norm("".join(piece.replace("\\|", "|") if i % 3 == 2 else "" if i % 3 == 1 else _unmark_prose(piece)
                         for i, piece in enumerate(pieces)))


def _unmark_prose(text: str) -> str:
    text = text.replace("<br>", " ").replace("\\|", "|")
    text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", text)
    text = re.sub(r"`+", "", text)
    return re.sub(r"(\*\*|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w))", "", text)  # "*" emphasis ("_" is in names)


def score(markdown: str, truth: Truth, text: str = "") -> Counter:
    """Hits and totals of each figure for one page (``<figure>`` and ``<figure>_of`` keys); ``text``, the
    extractor's plain text where it gives one, is scored for glyphs too."""
    out: Counter = Counter()
    fences = [_norm(m.group(2)) for m in _FENCE_RE.finditer(markdown)]
    outside = _FENCE_RE.sub("\n", markdown)
    spans = [_norm(m.group(2)) for m in _CODE_SPAN_RE.finditer(outside)]
    row_lines = [_unmark(line) for line in outside.split("\n") if line.lstrip().startswith("|")]
    headings = [_unmark(m.group(1)) for m in _HEADING_RE.finditer(outside)]
    plain = _unmark(outside) + " " + " ".join(fences)
    # code compared without its whitespace: a <div> line inside a <pre> (rustdoc's attributes) is a line
    # break the page shows, not one its text holds
    dense_fences = [_dense(fence) for fence in fences]
    flat = _dense(markdown)
    for pre in truth.pres:
        pre = _dense(pre)
        out["pre_fenced_of"] += 1
        out["pre_fenced"] += any(pre in fence for fence in dense_fences)
        out["pre_kept_of"] += 1
        out["pre_kept"] += pre in flat
    for code in truth.codes:
        out["code_spans_of"] += 1
        out["code_spans"] += any(code in span for span in spans)
    for row in truth.rows:
        out["rows_of"] += 1
        out["rows"] += any(_in_order(row, line) for line in row_lines)
    for level, heading in truth.headings:
        hit = any(heading in line for line in headings)
        out["headings_of"] += 1
        out["headings"] += hit
        if level > 1:
            out["headings_h2_4_of"] += 1
            out["headings_h2_4"] += hit
    for cell in truth.cells:
        out["cells_of"] += 1
        out["cells"] += cell in plain
    out["glyph_pages_of"] += 1
    # a heading's "#" marks are Markdown, not a permalink's "#"
    unmarked = _ATX_MARK_RE.sub("", markdown)
    out["glyph_pages"] += any(max(unmarked.count(symbol), text.count(symbol)) > count
                              for symbol, count in truth.glyphs.items())
    return out


def _in_order(cells: list[str], line: str) -> bool:
    at = 0
    for cell in cells:
        found = line.find(cell, at)
        if found < 0:
            return False
        at = found + len(cell)
    return True


# --- the extractors --------------------------------------------------------------------------------


def boilerstrip_markdown(page: str, url: str) -> tuple[str, str]:
    result = extract(page, url=url)
    return result.markdown, result.text


def trafilatura_markdown(page: str, url: str) -> str:
    import trafilatura

    return trafilatura.extract(page, url=url, output_format="markdown", include_tables=True,
                               include_formatting=True) or ""


#: each gives the page's Markdown, or (Markdown, text) when it also gives a plain text
EXTRACTORS: dict[str, Callable[[str, str], str | tuple[str, str]]] = {"boilerstrip": boilerstrip_markdown,
                                                    "trafilatura": trafilatura_markdown}


# --- the sets ----------------------------------------------------------------------------------------


def package_pages(package: Package, cap: int) -> Iterator[tuple[str, str, Truth]]:
    for path in _pages(package, cap):
        page, _encoding = decode_html(path.read_bytes())
        try:
            document = lxml_html.document_fromstring(page.encode("utf-8"))
        except (etree.ParserError, ValueError):
            continue
        region = package.region(document)
        if region is None:
            continue
        yield page, path.as_uri(), region_truth(region)


def wcxb_pages(folder: Path, cap: int) -> Iterator[tuple[str, str, Truth]]:
    """WCXB-dev pages holding a table or code whose text is in the annotated main text."""
    truth_file = folder / "ground-truth.json"
    truths = json.loads(truth_file.read_text(encoding="utf-8"))
    chosen = []
    for page_id in sorted(truths):
        path = folder / "html" / f"{page_id}.html.gz"
        if not path.exists():
            continue
        data = gzip.decompress(path.read_bytes())
        if not re.search(rb"<(pre|table|code)[\s>]", data, re.IGNORECASE):
            continue
        chosen.append((page_id, data))
    random.Random(SEED).shuffle(chosen)
    for page_id, data in sorted(chosen[: cap * 3]):
        entry = truths[page_id]
        raw = (entry.get("articleBody") or entry.get("text") or "") if isinstance(entry, dict) else ""
        main = _norm(raw)
        # a heading of the main text is a line of its own there (a heading's words found inside a
        # sentence, "See The Locking Clause below", are a link to it, and the heading is elsewhere)
        lines = {_norm(line) for line in raw.split("\n")}
        if not main:
            continue
        page, _encoding = decode_html(data)
        try:
            document = lxml_html.document_fromstring(page.encode("utf-8"))
        except (etree.ParserError, ValueError):
            continue
        body = _first(document, "//body")
        if body is None:
            continue
        truth = region_truth(body, keep=lambda text, main=main: len(text) >= MIN_CODE_CHARS and text in main,
                             keep_heading=lambda text, lines=lines: text in lines)
        if truth.pres or truth.codes or truth.rows:
            yield page, (entry.get("url") if isinstance(entry, dict) else None) or f"https://wcxb.invalid/{page_id}", truth
            cap -= 1
            if cap <= 0:
                return


# --- running -------------------------------------------------------------------------------------------


def run(sets: list[tuple[str, Iterator[tuple[str, str, Truth]]]], extractors: list[str]) -> dict:
    results: dict = {}
    for name, pages in sets:
        totals = {extractor: Counter() for extractor in extractors}
        count = 0
        started = time.perf_counter()
        for page, url, truth in pages:
            count += 1
            for extractor in extractors:
                try:
                    output = EXTRACTORS[extractor](page, url)
                except Exception as exc:  # noqa: BLE001 - a peer's crash is a miss on this page, not a stop
                    print(f"  {extractor} failed on {url}: {exc!r}", file=sys.stderr)
                    output = ""
                markdown, text = output if isinstance(output, tuple) else (output, "")
                totals[extractor] += score(markdown, truth, text)
        results[name] = {"pages": count, "seconds": round(time.perf_counter() - started, 1),
                         **{extractor: _figures(totals[extractor]) for extractor in extractors}}
        print(_row(name, results[name], extractors), flush=True)
    return results


def _figures(counts: Counter) -> dict:
    return {figure: (round(counts[figure] / counts[f"{figure}_of"], 4) if counts[f"{figure}_of"] else None)
            for figure in FIGURES} | {f"{figure}_of": counts[f"{figure}_of"] for figure in FIGURES}


def _row(name: str, result: dict, extractors: list[str]) -> str:
    cells = []
    for extractor in extractors:
        values = result[extractor]
        cells.append(" ".join("  -  " if values[f] is None else f"{values[f]:.2f}" for f in FIGURES))
    return f"{name:<22} {result['pages']:>4}  " + "  |  ".join(cells)


def check(results: dict, floors: dict) -> list[str]:
    """The figures below their floors (above them for a lower-is-better figure)."""
    failures = []
    for name, figures in floors.items():
        measured = results.get(name, {}).get("boilerstrip")
        if measured is None:
            continue
        for figure, floor in figures.items():
            value = measured.get(figure)
            if value is None:
                continue
            bad = value > floor if figure in LOWER_IS_BETTER else value < floor
            if bad:
                failures.append(f"{name} {figure}: {value:.4f} (floor {floor})")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", default=",".join(p.name for p in PACKAGES) + ",wcxb",
                        help="sets to score (comma-separated; 'wcxb' is WCXB-dev's pages with tables or code)")
    parser.add_argument("--cap", type=int, default=DEFAULT_CAP, help="pages per package (fixed-seed sample)")
    parser.add_argument("--wcxb", type=Path, default=WCXB_DATASET, help="WCXB-dev's folder")
    parser.add_argument("--no-peers", action="store_true", help="score boilerstrip only")
    parser.add_argument("--check", action="store_true", help=f"exit 1 below the floors in {FLOOR_FILE.name}")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.cap < 1:
        parser.error("--cap must be at least 1")
    wanted = [name.strip() for name in args.packages.split(",") if name.strip()]
    known = {p.name: p for p in PACKAGES}
    unknown = [name for name in wanted if name not in known and name != "wcxb"]
    if unknown:
        parser.error(f"unknown package(s): {', '.join(unknown)} (known: {', '.join(known)}, wcxb)")
    extractors = ["boilerstrip"] if args.no_peers else ["boilerstrip", "trafilatura"]
    sets = []
    for name in wanted:
        if name == "wcxb":
            if not (args.wcxb / "ground-truth.json").exists():
                print(f"wcxb: dataset not found in {args.wcxb}, skipped", file=sys.stderr)
                continue
            sets.append((name, wcxb_pages(args.wcxb, args.cap)))
        elif known[name].root.is_dir():
            sets.append((name, package_pages(known[name], args.cap)))
        else:
            print(f"{name}: not installed ({known[name].root}), skipped", file=sys.stderr)
    print("figures: " + " ".join(FIGURES) + "  (per extractor: " + " | ".join(extractors) + ")")
    results = run(sets, extractors)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.check:
        floors = json.loads(FLOOR_FILE.read_text(encoding="utf-8"))
        failures = check(results, floors)
        for failure in failures:
            print("below floor: " + failure, file=sys.stderr)
        missing = [name for name in floors if not name.startswith("_") and name not in results]  # "_": notes
        for name in missing:
            print(f"not measured: {name}", file=sys.stderr)
        return 1 if failures or missing else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
