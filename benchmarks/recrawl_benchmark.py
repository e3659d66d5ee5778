"""Recurring crawls: what a second crawl transfers, and whether it reports exactly what changed.

Usage (from the repository root)::

    .venv/bin/python benchmarks/recrawl_benchmark.py              # 500 pages
    .venv/bin/python benchmarks/recrawl_benchmark.py --pages 200

A generated site (:class:`EditableSite`: a home page and article pages in a tree, each with a header nav,
an article, related links outside the article, a rotating "popular" sidebar and a footer with a date) is
served on loopback by ``SiteServer``, which answers conditional requests (ETag / Last-Modified -> 304)
and counts every byte it sends. Figures printed:

1. a first crawl into a fresh state folder (bytes, requests);
2. a second crawl of the unchanged site: once answered by 304s only (sitemap ``<lastmod>`` not trusted),
   once with ``<lastmod>`` trusted; bytes as a ratio of the first crawl's (the bar: at most 10%);
3. an edited site (5 pages' main text edited, the footer date changed on every page, the sidebar
   rotated, 3 pages deleted -- 2 still linked (404), 1 unlinked -- and 2 new pages linked from edited
   articles): the recrawl's counts of new / changed / unchanged / removed (the bar: exactly 2 / 5 / rest / 3).

Exits 1 when a bar is missed. The site and the crawl helper are imported by tests/test_recrawl.py.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from email.utils import formatdate
from hashlib import sha1
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from boilerstrip.demo.server import Reply, SiteServer  # noqa: E402
from boilerstrip.items import complete_record  # noqa: E402

#: the second crawl of an unchanged site transfers at most this share of the first crawl's bytes (issue 12)
MAX_UNCHANGED_BYTES_RATIO = 0.10
#: fast loopback crawl arguments (the test profile; no browser)
FAST = ["--profile", "test", "-s", "BOILERSTRIP_RENDER_MODE=never", "--log-level", "ERROR"]

_WORDS = (
    "garden soil compost mulch seed bed frost spring summer autumn winter water rain root leaf stem flower "
    "fruit harvest tool spade fork rake hoe barrow shed greenhouse cold frame cloche netting slug snail "
    "worm bee pollen nectar hedge path lawn border pond bird fox badger shade sun wind clay loam sand chalk "
    "lime manure leafmould straw bark nettle comfrey bean pea onion leek garlic potato carrot parsnip beet "
    "kale cabbage lettuce spinach chard squash courgette pumpkin tomato pepper chilli herb mint thyme sage "
    "parsley basil rosemary apple pear plum cherry currant gooseberry raspberry strawberry rhubarb vine "
    "sow plant prune thin weed dig turn feed stake tie pick store dry freeze share swap grow trial record"
).split()
#: inline CSS as a CMS theme writes it: real pages carry kilobytes of it (the web's median HTML is ~30 KiB;
#: these pages are ~9 KiB, so the byte ratios printed are, if anything, pessimistic)
_STYLE = "".join(f".c{i}{{margin:{i % 7}px {i % 5}px;padding:{i % 3}px;color:#{i * 2654435761 % 0xFFFFFF:06x}}}" for i in range(90))
_JOINERS = ("and", "then", "but", "so", "while", "after", "before", "because", "until", "when", "with", "without")


def prose(seed: int, paragraphs: int = 4, sentences: int = 5) -> list[str]:
    """Distinct, deterministic paragraphs for one page (random words: no two pages are near-duplicates)."""
    rng = random.Random(seed)
    out = []
    for _ in range(paragraphs):
        lines = []
        for _ in range(sentences):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(9, 16))]
            words.insert(rng.randint(3, len(words) - 2), rng.choice(_JOINERS))
            lines.append(" ".join(words).capitalize() + ".")
        out.append(" ".join(lines))
    return out


def _http_date(ts: float) -> str:
    return formatdate(ts, usegmt=True)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


class EditableSite:
    """A site of ``pages`` pages (``/`` and ``/p/<i>.html``, a binary tree of related links) to edit
    between crawls. ``routes()`` is the SiteServer route table (a callable per path, so edits show at once)."""

    def __init__(self, pages: int = 500, created: float | None = None) -> None:
        created = time.time() - 2 * 86400 if created is None else created
        self.n = pages
        self.footer_date = "30 November 2026"
        self.rotation = 0
        self.paths = ["/"] + [f"/p/{i}.html" for i in range(1, pages)]
        self.titles = {p: ("Allotment notes" if p == "/" else f"Notes {i}: " + " ".join(prose(i * 7, 1, 1)[0].split()[:3]))
                       for i, p in enumerate(self.paths)}
        self.body = {p: prose(i) for i, p in enumerate(self.paths)}
        self.related = {p: self._tree_links(i) for i, p in enumerate(self.paths)}
        self.article_links: dict[str, list[str]] = {}
        self.mtime = {p: created for p in self.paths}
        self.deleted: set[str] = set()

    def _tree_links(self, i: int) -> list[str]:
        kids = [2 * i + 1, 2 * i + 2]
        links = [self.paths[k] for k in kids if k < self.n]
        if i:
            links.append(self.paths[(i - 1) // 2])
        return links

    # -- edits -----------------------------------------------------------------------------------------
    def leaves(self) -> list[str]:
        return [p for i, p in enumerate(self.paths) if 2 * i + 1 >= self.n and p not in self.deleted]

    def touch(self, path: str) -> None:
        self.mtime[path] = time.time()

    def edit_text(self, path: str, extra_links: list[str] = ()) -> None:
        self.body[path] = self.body[path][:-1] + [prose(sum(map(ord, path)) + 77_000, 1, 3)[0] + " (edited)"]
        self.article_links[path] = list(self.article_links.get(path, [])) + list(extra_links)
        self.touch(path)

    def add_page(self, path: str, seed: int) -> None:
        self.paths.append(path)
        self.titles[path] = f"New notes {seed}"
        self.body[path] = prose(10_000 + seed)
        self.related[path] = ["/"]
        self.touch(path)

    def delete(self, path: str, unlink: bool = False) -> None:
        self.deleted.add(path)
        if unlink:
            for source, links in self.related.items():
                if path in links:
                    self.related[source] = [link for link in links if link != path]

    def change_template(self, footer_date: str) -> None:
        """Template churn: a new date in every footer, the sidebar rotated (every page's bytes change)."""
        self.footer_date = footer_date
        self.rotation += 1
        for path in self.paths:
            self.touch(path)

    # -- serving ---------------------------------------------------------------------------------------
    def html(self, path: str) -> str:
        live = [p for p in self.paths if p not in self.deleted]
        popular = [live[(self.rotation * 7 + k * 13) % len(live)] for k in range(3)]
        nav = "".join(f'<li><a href="{p}">{self.titles[p]}</a></li>' for p in self.paths[:24])
        article_links = "".join(f'<p>See also <a href="{p}">{p}</a> for more.</p>' for p in self.article_links.get(path, []))
        paragraphs = "".join(f"<p>{text}</p>" for text in self.body[path])
        related = "".join(f'<li><a href="{p}">{self.titles.get(p, p)}</a></li>' for p in self.related[path])
        side = "".join(f'<li><a href="{p}">{self.titles[p]}</a></li>' for p in popular)
        return (
            f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{self.titles[path]}</title>"
            f"<link rel='stylesheet' href='/site.css'><style>{_STYLE}</style></head><body>"
            f"<header><a href='/'>Allotment Society</a><nav><ul>{nav}</ul></nav></header>"
            f"<main><article><h1>{self.titles[path]}</h1>{paragraphs}{article_links}</article>"
            f"<nav class='related'><h2>Related notes</h2><ul>{related}</ul></nav></main>"
            f"<aside><h2>Popular this week</h2><ul>{side}</ul></aside>"
            f"<footer><p>Allotment Society, Plot 14, Mill Lane. Members only on Sundays.</p>"
            f"<p>Site updated {self.footer_date}.</p></footer></body></html>"
        )

    def _page(self, path: str) -> Reply:
        if path in self.deleted or path not in self.body:
            return Reply(404, b"<html><body><h1>Not found</h1></body></html>", (("Content-Type", "text/html"),))
        body = self.html(path).encode("utf-8")
        return Reply(200, body, (("Content-Type", "text/html; charset=utf-8"),
                                 ("ETag", f'"{sha1(body).hexdigest()[:20]}"'),
                                 ("Last-Modified", _http_date(self.mtime[path]))))

    def _sitemap(self) -> Reply:
        entries = "".join(f"<url><loc>{self.base}{p}</loc><lastmod>{_iso(self.mtime[p])}</lastmod></url>"
                          for p in self.paths if p not in self.deleted)
        xml = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        return Reply(200, xml.encode(), (("Content-Type", "application/xml"),))

    base = ""

    def serve(self) -> SiteServer:
        """A started SiteServer for this site (a route per path, looked up at request time)."""
        site = self

        class Routes(dict):
            def get(self, key: Any, default: Any = None) -> Any:
                if key == "/sitemap.xml":
                    return lambda raw, headers: site._sitemap()
                if key == "/robots.txt":
                    return Reply(200, b"User-agent: *\nAllow: /\n", (("Content-Type", "text/plain"),))
                if key in site.body:
                    return lambda raw, headers, key=key: site._page(key)
                return default

        server = SiteServer(routes=None)
        server.routes = Routes()
        server.start()
        self.base = server.url
        return server


def crawl(url: str, out: Path, state: Path, *extra: str, timeout: float = 600) -> tuple[int, str]:
    """``boilerstrip crawl URL -o OUT --state STATE`` in a child process: (exit status, stderr)."""
    command = [sys.executable, "-m", "boilerstrip", "crawl", url, "-o", str(out), "--state", str(state), *FAST, *extra]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    return done.returncode, done.stderr


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a crawl's output, the fields their lines leave at their default filled in."""
    return [complete_record(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def change_counts(records: list[dict[str, Any]]) -> Counter:
    return Counter(r.get("change") for r in records)


def run(pages: int) -> int:
    failed = []
    with tempfile.TemporaryDirectory(prefix="recrawl-bench-") as tmp:
        work = Path(tmp)
        site = EditableSite(pages)
        server = site.serve()
        try:
            start = server.url + "/"
            t0 = time.monotonic()
            code, err = crawl(start, work / "c1.jsonl", work / "state")
            first_s = time.monotonic() - t0
            first_bytes, first_requests = server.bytes_sent, len(server.log)
            records = read_records(work / "c1.jsonl")
            print(f"first crawl: {len(records)} records, {first_requests} requests, {first_bytes} bytes, {first_s:.1f} s (exit {code})")
            if code:
                print(err[-2000:])
                return 1
            for label, extra in (("304s only (lastmod not trusted)", ["-s", 'BOILERSTRIP_RECRAWL_PARAMS={"trust_lastmod": false}']),
                                 ("304s + sitemap lastmod", [])):
                state = work / f"state-{len(label)}"
                subprocess.run(["cp", "-r", str(work / "state"), str(state)], check=True)
                server.reset_counts()
                t0 = time.monotonic()
                code, err = crawl(start, work / "c2.jsonl", state, *extra)
                seconds = time.monotonic() - t0
                ratio = server.bytes_sent / first_bytes
                statuses = Counter(r.get("change") for r in read_records(work / "c2.jsonl"))
                print(f"unchanged site, {label}: {len(server.log)} requests, {server.bytes_sent} bytes = "
                      f"{ratio:.3f} of the first crawl's, {seconds:.1f} s; changes {dict(statuses)} (exit {code})")
                if code or ratio > MAX_UNCHANGED_BYTES_RATIO or set(statuses) != {"unchanged"}:
                    failed.append(f"unchanged: {label}")
            # the edited site, from the first crawl's state
            leaves = site.leaves()
            edited = site.paths[10:15]
            site.add_page("/new/1.html", 1)
            site.add_page("/new/2.html", 2)
            for k, path in enumerate(edited):
                site.edit_text(path, ["/new/1.html"] if k == 0 else ["/new/2.html"] if k == 1 else [])
            site.delete(leaves[0])
            site.delete(leaves[1])
            site.delete(leaves[2], unlink=True)
            site.change_template("1 December 2026")
            server.reset_counts()
            code, err = crawl(start, work / "c3.jsonl", work / "state")
            counts = change_counts(read_records(work / "c3.jsonl"))
            print(f"edited site: {len(server.log)} requests, {server.bytes_sent} bytes; changes {dict(counts)} (exit {code})")
            expected = {"new": 2, "changed": 5, "removed": 3, "unchanged": pages - 5 - 3}
            if code or dict(counts) != expected:
                failed.append(f"edited: expected {expected}")
        finally:
            server.stop()
    print("bars missed: " + "; ".join(failed) if failed else "all bars met")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500)
    args = parser.parse_args(argv)
    return run(args.pages)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
