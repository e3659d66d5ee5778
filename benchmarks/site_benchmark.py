"""Cross-page boilerplate removal on real multi-page sites: Debian's HTML documentation packages.

Usage (from the repository root)::

    .venv/bin/python benchmarks/site_benchmark.py                      # crawl each site, all checks
    .venv/bin/python benchmarks/site_benchmark.py --sites sqlite3-doc --limit 200
    .venv/bin/python benchmarks/site_benchmark.py --via direct         # no crawl: extract files directly
    .venv/bin/python benchmarks/site_benchmark.py --json out/site-benchmark.json

Sites (Debian packages; a missing one is skipped with a message): ``sqlite3-doc`` (the SQLite docs, one
template for the whole site plus a C-API section with its own), ``debian-handbook`` (DocBook HTML, en-US)
and ``docbook-xsl-doc-html`` (1,085 pages of DocBook XSL's chunked output: "Prev | Up | <title> | Home |
Next" bars in tables on every page, reference pages documented twice, chapter pages that are their table of
contents).
Each site is served on loopback with ``SiteServer`` and crawled with ``boilerstrip crawl`` (fast settings,
no politeness delay: it is our own loopback server), once per variant: the default; the extractor's
semantic rung off (``BOILERSTRIP_EXTRACTION_PARAMS='{"semantic_enabled": false}'``: density plus cross-page alone); the
cross-page model off (``BOILERSTRIP_BOILERPLATE_ENABLED=false``: what this component adds);
``source=extracted`` (``BOILERSTRIP_BOILERPLATE_PARAMS``) (the extractor's blocks minus the template) and ``=page`` (every
block of the page minus the template). The default source is ``auto`` (per page, see docs/cross-page.md).

Ground truth comes from each site's own markup: the page body minus the site's chrome elements (listed
per site below as XPaths: header/menu, navigation bars, banners, generated footers) and minus non-content
(scripts, forms, generated tables of contents). Metrics, per site:

- **F1**: the article benchmark's metric (``benchmarks/extraction_benchmark.py``): multisets of 4-token
  shingles (tokens ``\\w+``), per-page tp/fp/fn normalised, F1 of the mean precision and mean recall;
  pages whose truth is empty (pure navigation pages) are not scored.
- **leakage**: share of pages whose output still holds a template string. Template strings are the texts
  of the chrome elements (each element and each of its list items/paragraphs/cells) found on at least
  ``--chrome-min-pages`` pages, plus the page's own chrome texts (e.g. its "Prev <title>" bar). A page
  leaks when one of its output lines equals a template string, or contains one of at least 25 characters
  (compared on their ``\\w`` characters, case-folded).
- **nav**: share of records with a navigation line (``boilerstrip.check.navigation_line``: "Prev | <chapter>
  | Next", "<title> | Home | <title>", a line of only navigation words), the measure ``boilerstrip check``
  reports.
- **pages**: records of the crawl (after the finishing pass: exact copies under another URL dropped).
- **shuffled**: ``boilerstrip dedup`` applied to a shuffled copy of the crawl's JSONL gives byte-identical
  output to the one applied to the file as crawled.

The peer is trafilatura (a single-page extractor, no cross-page model) on the same pages.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from lxml import html as lxml_html  # noqa: E402

from benchmarks.extraction_benchmark import score_page, summarise  # noqa: E402  (the same metric)
from boilerstrip.boilerplate import page_block_hashes  # noqa: E402
from boilerstrip.finishing import finish_records  # noqa: E402
from boilerstrip.boilerplate.finish import read_records  # noqa: E402
from boilerstrip.check import navigation_line  # noqa: E402
from boilerstrip.demo.server import SiteServer  # noqa: E402

_WORD_RE = re.compile(r"\w+")
#: A template string at least this long (in \w characters) leaks also as a substring of a line.
LEAK_SUBSTRING_MIN_CHARS = 25
#: Block-level elements whose text is a template string of its own inside a chrome element.
_CHROME_PARTS = ".//li|.//tr|.//p|.//td|.//dt|.//dd|.//h1|.//h2|.//h3|.//h4|.//h5|.//h6|.//option|.//div[not(.//div|.//p|.//ul)]"
_PARSER = lxml_html.HTMLParser(encoding="utf-8")
_NOT_CONTENT = ("//script", "//style", "//noscript", "//form", "//head")


@dataclass(frozen=True)
class Site:
    name: str  # the Debian package
    root: Path
    start: str  # path of the start page under the root
    #: the site's template, from its markup: removed from the truth, its texts are the template strings
    chrome: tuple[str, ...]
    #: not content and not template either (generated tables of contents): removed from the truth only
    not_content: tuple[str, ...] = ()


SITES = {
    "sqlite3-doc": Site(
        name="sqlite3-doc",
        root=Path("/usr/share/doc/sqlite3"),
        start="index.html",
        chrome=(
            "(/html/body/div[@class='nosearch'])[1]",  # logo, tagline, main menu, submenu, search box
            "//p[@align='center'][.//i[contains(., 'This page last modified')]]",  # generated footer
            "//p[starts-with(normalize-space(.), 'See also lists of')]",  # the C-API pages' footer
            "//div[@class='nosearch']/a[h2]",  # the C-API pages' breadcrumb ("SQLite C Interface")
            # the release notes' generated footnote, identical on every releaselog page
            "//p[starts-with(normalize-space(.), 'A complete list of SQLite releases')]",
        ),
        not_content=("//div[contains(@class, 'fancy_toc')]",),
    ),
    "debian-handbook": Site(
        name="debian-handbook",
        root=Path("/usr/share/doc/debian-handbook/html/en-US"),
        start="index.html",
        chrome=(
            "//div[@id='banner']",  # "Download the ebook"
            "//p[@id='title']",  # the two logo links
            "//ul[contains(@class, 'docnav')]",  # Prev | Up | Home | Next bars, top and bottom
        ),
        not_content=("//div[contains(@class, 'toc')]",),
    ),
    "docbook-xsl-doc-html": Site(
        name="docbook-xsl-doc-html",
        root=Path("/usr/share/doc/docbook-xsl-doc-html/doc"),
        start="index.html",
        # DocBook XSL's chunked output: a "Prev | Up | <title> | Home | Next" bar on top and a
        # "<previous title> | Home | <next title>" bar at the bottom of every page. Nothing else is chrome:
        # a part's or reference's table of contents is its content (the list of its pages).
        chrome=(
            "//div[@class='navheader']",
            "//div[@class='navfooter']",
        ),
    ),
}


def _key(text: str) -> str:
    """Compare strings on their word characters only, case-folded."""
    return "".join(_WORD_RE.findall(text.casefold()))


def _element_text(el) -> str:
    parts = []
    for piece in el.itertext():
        parts.append(piece)
    return " ".join(" ".join(parts).split())


@dataclass
class Truth:
    text: str
    chrome: set[str] = field(default_factory=set)
    #: keys of the content's own blocks: a chrome text that is also one (the page title in a DocBook
    #: navigation header and in its heading) does not leak as a line of its own
    content: set[str] = field(default_factory=set)


def truth_of(html: str, site: Site) -> Truth:
    """The page's content per its markup, and its chrome texts (keys)."""
    try:
        doc = lxml_html.document_fromstring(html.encode("utf-8"), parser=_PARSER)
    except (ValueError, lxml_html.etree.ParserError):
        return Truth("")
    chrome: set[str] = set()
    for xpath in site.chrome:
        for el in doc.xpath(xpath):
            for part in [el, *el.xpath(_CHROME_PARTS)]:
                key = _key(_element_text(part))
                if key:
                    chrome.add(key)
            el.drop_tree()
    for xpath in (*_NOT_CONTENT, *site.not_content):
        for el in doc.xpath(xpath):
            if el.getparent() is not None:
                el.drop_tree()
    body = doc.find("body")
    if body is None:
        body = doc
    content = {_key(_element_text(part)) for part in body.xpath(_CHROME_PARTS)}
    content.discard("")
    return Truth(_element_text(body), chrome, content)


@dataclass
class SitePages:
    site: Site
    urls: list[str]
    html: dict[str, str]
    truth: dict[str, Truth]
    template: set[str]  # chrome keys on >= chrome_min_pages pages
    template_substrings: set[str]  # the long ones that are no page's real text


def load_truth(site: Site, base_url: str, urls: list[str], chrome_min_pages: int) -> SitePages:
    html: dict[str, str] = {}
    truth: dict[str, Truth] = {}
    for url in urls:
        path = site.root / unquote(urlsplit(url).path).lstrip("/")
        if path.is_dir():
            path = path / "index.html"
        try:
            source = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        html[url] = source
        truth[url] = truth_of(source, site)
    counts = Counter(k for t in truth.values() for k in t.chrome)
    template = {k for k, n in counts.items() if n >= chrome_min_pages}
    # A template string that is also part of some page's real text ("The Debian Administrator's Handbook"
    # in the preface) leaks only as a whole line, not as a substring.
    content = "\n".join(_key(t.text) for t in truth.values())
    template_substrings = {k for k in template if len(k) >= LEAK_SUBSTRING_MIN_CHARS and k not in content}
    return SitePages(site, sorted(html), html, truth, template, template_substrings)


def leaks(text: str, own_chrome: set[str], template: set[str], substrings: set[str],
          own_content: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Template strings found in ``text`` (line equality, or substring for long ones); a line that is one of
    the page's own content blocks (``own_content``) is not a leak."""
    found = []
    long_template = sorted(substrings)
    for line in (text or "").splitlines():
        key = _key(line)
        if not key or key in own_content:
            continue
        if key in template or key in own_chrome:
            found.append(line.strip())
            continue
        for t in long_template:
            if t in key:
                found.append(line.strip())
                break
    return found


# -- getting the records ------------------------------------------------------------------------------
EXTRACTION_PIPELINE = "boilerstrip.pipelines.extraction.ExtractionPipeline"


def _item_pipelines() -> dict[str, int] | None:
    """None when the project registers the extraction pipeline; else the project's pipelines plus it
    (at 300, as the extraction engineer's contract says), with a warning: the crawl would otherwise
    measure the placeholder text of FinalizePipeline."""
    from boilerstrip import settings as project

    if EXTRACTION_PIPELINE in project.ITEM_PIPELINES:
        return None
    print(f"note: {EXTRACTION_PIPELINE} is not in the project's ITEM_PIPELINES; the benchmark adds it at 300",
          file=sys.stderr)
    return {**project.ITEM_PIPELINES, EXTRACTION_PIPELINE: 300}


#: the crawl's settings for our own loopback server (no politeness delay, no state kept between runs)
CRAWL_SETTINGS = {
    "DOWNLOAD_DELAY": "0",
    "AUTOTHROTTLE_ENABLED": "false",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
    "ROBOTSTXT_OBEY": "false",
    "BOILERSTRIP_STATE_DIR": "",  # no state shared between the benchmark's runs
    "LOG_LEVEL": "WARNING",
}


def crawl_records(base_url: str, site: Site, out: Path, extra_settings: dict[str, str], limit: int) -> list[dict]:
    """A real ``boilerstrip crawl`` of the loopback site; returns the records after its finishing pass."""
    settings = {**CRAWL_SETTINGS, **extra_settings}
    if limit:
        settings["CLOSESPIDER_ITEMCOUNT"] = str(limit)
    pipelines = _item_pipelines()
    if pipelines is not None:
        settings["ITEM_PIPELINES"] = json.dumps(pipelines)
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", f"{base_url}/{site.start}", "-o", str(out)]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"crawl failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    records, _ = read_records(out)
    return records


def direct_records(base_url: str, site: Site, extra_settings: dict[str, str], limit: int) -> list[dict]:
    """No crawl: extract every HTML file of the site (for iterating on the model without the crawler)."""
    from boilerstrip.config import params_from_settings
    from boilerstrip.extraction import ExtractionParams, extract

    from boilerstrip.boilerplate import BoilerplateParams, page_blocks, region_blocks

    params = params_from_settings(extra_settings, "extraction", ExtractionParams)
    bp_params = params_from_settings(extra_settings, "boilerplate", BoilerplateParams)
    page_source = bp_params.source == "page"
    files = sorted(p for p in site.root.rglob("*.html"))
    if limit:
        files = files[:limit]
    records = []
    for path in files:
        url = f"{base_url}/{path.relative_to(site.root).as_posix()}"
        html = path.read_bytes().decode("utf-8", errors="replace")
        result = extract(html, url=url, params=params)
        blocks = page_blocks(html, slots=True) if page_source else [(b.kind, b.text) for b in result.blocks]
        record = {"url": url, "title": result.title, "text": result.text, "page_block_hashes": page_block_hashes(html),
                  "method": "crosspage" if page_source else result.method,
                  "attempts": [a.__dict__.copy() for a in result.attempts],
                  "blocks": [{"kind": b[0], "text": b[1], **({"slot": b[2]} if len(b) > 2 else {})} for b in blocks]}
        if bp_params.source == "auto":
            record["page_blocks"] = region_blocks(html)
        records.append(record)
    if extra_settings.get("BOILERSTRIP_BOILERPLATE_ENABLED") == "false":
        return records
    return finish_records(records, params=bp_params).records


def shuffled_identical(records: list[dict], seed: int) -> bool:
    """dedup(records) == dedup(shuffled records), byte for byte, through the CLI."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shuffled = list(records)
        random.Random(seed).shuffle(shuffled)
        outputs = []
        for name, recs in (("asis", records), ("shuffled", shuffled)):
            src = tmp / f"{name}.jsonl"
            src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
            out = tmp / f"{name}.out.jsonl"
            proc = subprocess.run([sys.executable, "-m", "boilerstrip", "dedup", str(src), "-o", str(out), "--no-report"],
                                  cwd=REPO_ROOT, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"boilerstrip dedup failed ({proc.returncode}): {proc.stderr[-2000:]}")
            outputs.append(out.read_bytes())
        return outputs[0] == outputs[1]


# -- scoring --------------------------------------------------------------------------------------------
@dataclass
class Row:
    site: str
    system: str
    pages: int
    scored: int
    precision: float
    recall: float
    f1: float
    leakage: float
    leaking_pages: list[tuple[str, list[str]]]
    #: share of records with a navigation line (``boilerstrip.check.navigation_line``: "Prev | ... | Next")
    nav_lines: float = 0.0
    shuffled_identical: bool | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["leaking_pages"] = [{"url": u, "lines": lines[:3]} for u, lines in self.leaking_pages[:20]]
        return d


def score(site_pages: SitePages, system: str, texts: dict[str, str], seconds: float = 0.0) -> Row:
    urls = [u for u in site_pages.urls if u in texts]
    scored = [score_page(u, site_pages.truth[u].text, texts[u]) for u in urls if _WORD_RE.search(site_pages.truth[u].text)]
    summary = summarise(system, scored, seconds)
    leaking = []
    for u in urls:
        truth = site_pages.truth[u]
        found = leaks(texts[u], truth.chrome, site_pages.template, site_pages.template_substrings, truth.content)
        if found:
            leaking.append((u, found))
    nav = sum(1 for u in urls if any(navigation_line(line) for line in texts[u].splitlines()))
    return Row(site_pages.site.name, system, len(urls), len(scored), summary.precision, summary.recall,
               summary.f1, len(leaking) / len(urls) if urls else 0.0, leaking, nav / len(urls) if urls else 0.0,
               seconds=seconds)


def _local_url(url: str, base_url: str) -> str:
    parts = urlsplit(url)
    return base_url + parts.path


def run_site(site: Site, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    with SiteServer(root=site.root) as server, tempfile.TemporaryDirectory() as tmp:
        base = server.url
        variants = [
            ("boilerstrip", {}),
            ("boilerstrip -semantic", {"BOILERSTRIP_EXTRACTION_PARAMS": '{"semantic_enabled": false}'}),
            # the same extraction without the cross-page model: what this component adds
            ("boilerstrip -crosspage", {"BOILERSTRIP_BOILERPLATE_ENABLED": "false"}),
            # the extractor's blocks only, minus the template (the default before SOURCE=auto)
            ("boilerstrip source=extracted", {"BOILERSTRIP_BOILERPLATE_PARAMS": '{"source": "extracted"}'}),
            # every block of the page minus the template: the cross-page model alone decides
            ("boilerstrip source=page", {"BOILERSTRIP_BOILERPLATE_PARAMS": '{"source": "page"}'}),
        ]
        if args.variants:
            variants = [v for v in variants if v[0] in args.variants]
        site_pages = None
        for system, extra in variants:
            started = time.perf_counter()
            if args.via == "crawl":
                records = crawl_records(base, site, Path(tmp) / f"{len(rows)}.jsonl", extra, args.limit)
            else:
                records = direct_records(base, site, extra, args.limit)
            seconds = time.perf_counter() - started
            texts = {_local_url(r["url"], base): r.get("text") or "" for r in records if r.get("url")}
            if site_pages is None:
                site_pages = load_truth(site, base, sorted(texts), args.chrome_min_pages)
            row = score(site_pages, system, texts, seconds)
            if not args.no_shuffle and extra.get("BOILERSTRIP_BOILERPLATE_ENABLED") != "false":
                row.shuffled_identical = shuffled_identical(records, seed=args.seed)
            rows.append(row)
        if not args.no_trafilatura and site_pages is not None:
            import trafilatura  # benchmark-only dependency

            started = time.perf_counter()
            texts = {u: trafilatura.extract(site_pages.html[u], url=u) or "" for u in site_pages.urls}
            rows.append(score(site_pages, "trafilatura", texts, time.perf_counter() - started))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", nargs="*", default=list(SITES), choices=list(SITES))
    parser.add_argument("--via", choices=("crawl", "direct"), default="crawl")
    parser.add_argument("--variants", nargs="*", default=None, metavar="NAME",
                        help="only these variants (names as in the table: boilerstrip, 'boilerstrip -semantic', ...)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many pages per site (0: all)")
    parser.add_argument("--chrome-min-pages", type=int, default=3)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--no-shuffle", action="store_true")
    parser.add_argument("--no-trafilatura", action="store_true")
    parser.add_argument("--leaks", type=int, default=5, help="print up to N leaking pages per row")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for name in args.sites:
        site = SITES[name]
        if not site.root.is_dir():
            print(f"skip {name}: not installed (apt-get install {name})", file=sys.stderr)
            continue
        rows.extend(run_site(site, args))
    print(f"{'site':<22}{'system':<31}{'pages':>6}{'scored':>7}{'P':>7}{'R':>7}{'F1':>7}{'leakage':>9}{'nav':>8}"
          f"{'shuffled':>10}{'secs':>7}")
    for row in rows:
        shuffled = "-" if row.shuffled_identical is None else ("same" if row.shuffled_identical else "DIFFERS")
        print(f"{row.site:<22}{row.system:<31}{row.pages:>6}{row.scored:>7}{row.precision:>7.3f}{row.recall:>7.3f}"
              f"{row.f1:>7.3f}{row.leakage:>9.2%}{row.nav_lines:>8.2%}{shuffled:>10}{row.seconds:>7.1f}")
    for row in rows:
        for url, lines in row.leaking_pages[: args.leaks]:
            print(f"  leak [{row.site} / {row.system}] {url}: {lines[:2]}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([r.as_dict() for r in rows], indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
