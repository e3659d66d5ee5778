"""Page-specific navigation left in the records of a crawled Sphinx site (issue 24, part C).

Usage (from the repository root)::

    .venv/bin/python benchmarks/own_navigation.py                       # crawl both sites, report
    .venv/bin/python benchmarks/own_navigation.py --sites sphinx-doc --records out.jsonl   # score a crawl

Sites (Debian packages served on loopback with ``SiteServer``, crawled with ``boilerstrip crawl`` as
``site_benchmark.py`` does): ``sphinx-doc`` (Sphinx's own theme: an "On this page" sidebar) and
``python-django-doc`` (Django's theme: a "Table of Contents" sidebar, "Previous topic" / "Next topic" boxes,
a "« previous | up | next »" bar). Cross-page template removal cannot see this navigation: it differs on
every page.

What counts, per page, from the page's own markup (the site's navigation containers, listed per site as
XPaths, outside its main element):

- **toc**: the record's text holds two consecutive lines that are two consecutive links of a list in a
  navigation container whose links mostly point at the page's own fragments (its sidebar table of
  contents), looked for in the Markdown's lines that are not headings (a title right above the first
  section's heading is the page's structure), and not two consecutive blocks of the main element;
- **nav**: a line of the record equals the text of a part (heading, paragraph, list item, leaf div) of a
  navigation container, or of the whole bar, that is not also a block of the page's main element ("Previous
  topic", the previous page's title, "« previous | up | next »").

A page *keeps own navigation* when it has either. Texts are compared on their casefolded ``\\w`` tokens.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from lxml import html as lxml_html  # noqa: E402

from boilerstrip.demo.server import SiteServer  # noqa: E402

_WORD_RE = re.compile(r"\w+")
_PARTS = ".//li|.//p|.//h1|.//h2|.//h3|.//h4|.//h5|.//h6|.//div[not(.//div|.//p|.//ul)]"
_PARSER = lxml_html.HTMLParser(encoding="utf-8")


@dataclass(frozen=True)
class Site:
    name: str
    root: Path
    start: str
    main: str  # the page's main element
    navigation: tuple[str, ...]  # the site's navigation containers (sidebars, bars)


SITES = {
    "sphinx-doc": Site("sphinx-doc", Path("/usr/share/doc/sphinx-doc/html"), "index.html",
                       "//div[@role='main']",
                       ("//div[contains(@class, 'sphinxsidebar')]", "//div[contains(@class, 'related')]")),
    "python-django-doc": Site("python-django-doc", Path("/usr/share/doc/python-django-doc/html"), "index.html",
                              "//div[@id='yui-main']",
                              ("//div[contains(@class, 'sphinxsidebar')]", "//div[@id='hd']",
                               "//div[@id='ft']", "//div[contains(@class, 'nav')]")),
    # added 2026-12-03 (issue 24, last pass): Celery's Sphinx theme, whose pages nobody tuned on
    "python-celery-doc": Site("python-celery-doc", Path("/usr/share/doc/python-celery-doc/html"), "index.html",
                              "//div[@role='main']",
                              ("//div[contains(@class, 'sphinxsidebar')]", "//div[@class='related']")),
}


def _norm(text: str) -> str:
    return " ".join(_WORD_RE.findall((text or "").casefold()))


def _text(element) -> str:
    return " ".join(element.text_content().split())


@dataclass
class PageNavigation:
    toc: list[list[str]]  # per own-fragment list: its link texts, in order
    parts: set[str]  # normalised navigation texts that are not main content
    main_pairs: set[tuple[str, str]]  # consecutive blocks of the main element


def page_navigation(html: bytes, site: Site) -> PageNavigation | None:
    try:
        root = lxml_html.document_fromstring(html, parser=_PARSER)
    except Exception:  # noqa: BLE001 - an unparsable page has nothing to score
        return None
    main = root.xpath(site.main)
    main_texts = set()
    for element in main:
        for part in [element, *element.xpath(_PARTS)]:
            main_texts.add(_norm(_text(part)))
        main_texts.update(_norm(line) for line in element.text_content().splitlines())
    # consecutive blocks of the main element: a heading right after the page's title is not a TOC left
    blocks = [_norm(_text(e)) for m in main for e in m.iter("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "dt",
                                                              "dd", "pre", "td", "th")]
    blocks = [b for b in blocks if b]
    main_pairs = set(zip(blocks, blocks[1:]))
    toc: list[list[str]] = []
    parts: set[str] = set()
    for xpath in site.navigation:
        for container in root.xpath(xpath):
            if any(container is m or m in container.iterancestors() for m in main):
                continue  # a container inside the main element
            for part in [container, *container.xpath(_PARTS), *container.xpath(".//a")]:
                norm = _norm(_text(part))
                if norm and norm not in main_texts:
                    parts.add(norm)
            for listing in container.xpath(".//ul|.//ol"):
                links = listing.xpath(".//a[@href]")
                own = [a for a in links if a.get("href", "").startswith("#")]
                if len(own) >= 2 and 2 * len(own) >= len(links):
                    toc.append([_norm(_text(a)) for a in own])
    return PageNavigation(toc, parts, main_pairs)


def keeps_navigation(text: str, markdown: str, nav: PageNavigation) -> tuple[bool, bool, list[str]]:
    """(toc left, nav line left, examples) for a record's text and Markdown."""
    lines = [_norm(line) for line in (text or "").splitlines()]
    lines = [line for line in lines if line]
    # the TOC is looked for in the Markdown's lines that are not headings: two consecutive section headings
    # (a title right above the first question) are the page's structure, not its table of contents
    body = [_norm(line) if not line.lstrip().startswith("#") else "" for line in (markdown or text or "").splitlines()]
    body = [line for line in body if line is not None and line != ""] if markdown is None else [
        line for line, raw in zip(body, (markdown or "").splitlines()) if raw.strip()]
    pairs = {(a, b) for links in nav.toc for a, b in zip(links, links[1:]) if a and b} - nav.main_pairs
    toc = any(a and b and (a, b) in pairs for a, b in zip(body, body[1:]))
    found = [line for line in lines if line in nav.parts]
    examples = ([f"toc: {a} / {b}" for a, b in zip(body, body[1:]) if a and b and (a, b) in pairs][:1] + found[:2])
    return toc, bool(found), examples


def file_of(url: str, site: Site) -> Path:
    path = unquote(urlsplit(url).path).lstrip("/") or site.start
    file = site.root / path
    return file / "index.html" if file.is_dir() else file


def score(records: list[dict], site: Site, show: int = 5) -> dict:
    pages = toc = nav = either = 0
    examples = []
    for record in records:
        url = record.get("url")
        if not isinstance(url, str) or record.get("outcome") or record.get("change") in ("removed", "unseen"):
            continue
        file = file_of(url, site)
        if not file.is_file():
            continue
        navigation = page_navigation(file.read_bytes(), site)
        if navigation is None:
            continue
        pages += 1
        has_toc, has_nav, found = keeps_navigation(record.get("text") or "", record.get("markdown"), navigation)
        toc += has_toc
        nav += has_nav
        if has_toc or has_nav:
            either += 1
            if len(examples) < show:
                examples.append((url, found))
    return {"site": site.name, "pages": pages, "toc": toc, "nav": nav, "either": either,
            "share": either / pages if pages else 0.0, "examples": examples}


def crawl(site: Site, out: Path, extra: list[str]) -> list[dict]:
    settings = {"DOWNLOAD_DELAY": "0", "AUTOTHROTTLE_ENABLED": "false", "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
                "ROBOTSTXT_OBEY": "false", "BOILERSTRIP_STATE_DIR": "", "LOG_LEVEL": "WARNING"}
    with SiteServer(root=site.root) as server:
        cmd = [sys.executable, "-m", "boilerstrip", "crawl", f"{server.url}/{site.start}", "-o", str(out)]
        for key, value in settings.items():
            cmd += ["-s", f"{key}={value}"]
        proc = subprocess.run(cmd + extra, cwd=REPO_ROOT, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", nargs="*", default=list(SITES), choices=list(SITES))
    parser.add_argument("--records", type=Path, help="score this JSONL instead of crawling (one site)")
    parser.add_argument("--show", type=int, default=5, help="print up to N pages that keep navigation")
    parser.add_argument("--keep", type=Path, help="keep each crawl's output in this folder (SITE.jsonl)")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for the crawl (repeatable)")
    args = parser.parse_args(argv)
    extra = [item for pair in args.settings for item in ("-s", pair)]
    for name in args.sites:
        site = SITES[name]
        if not site.root.is_dir():
            print(f"{name}: not installed ({site.root}), skipped")
            continue
        if args.records is not None:
            records = [json.loads(line) for line in args.records.read_text(encoding="utf-8").splitlines() if line.strip()]
        elif args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            records = crawl(site, args.keep.resolve() / f"{name}.jsonl", extra)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                records = crawl(site, Path(tmp) / "out.jsonl", extra)
        row = score(records, site, args.show)
        print(f"{name:<20} pages {row['pages']:>5}  own TOC left {row['toc']:>4}  nav line left {row['nav']:>4}  "
              f"pages keeping own navigation {row['either']:>4} ({row['share']:.2%})")
        for url, found in row["examples"]:
            print(f"  {url}: {found}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
