"""Crawl a real documentation site served on loopback and check that every linked, allowed page is found.

Usage (from the repository root)::

    .venv/bin/python benchmarks/crawl_benchmark.py                       # sqlite3-doc, own-site profile
    .venv/bin/python benchmarks/crawl_benchmark.py --root /usr/share/doc/sqlite3 --disallow /releaselog/
    .venv/bin/python benchmarks/crawl_benchmark.py --compare-scrapy-defaults
    .venv/bin/python benchmarks/crawl_benchmark.py -s BOILERSTRIP_EXTRACTION_ENABLED=false \
        -s BOILERSTRIP_BOILERPLATE_ENABLED=false -s BOILERSTRIP_RENDER_MODE=never   # the crawl alone
    .venv/bin/python benchmarks/crawl_benchmark.py --throughput [--repeat 3]     # bare Scrapy vs boilerstrip
    .venv/bin/python benchmarks/crawl_benchmark.py --throughput --growth 1000,10000,100000

``--throughput`` crawls three documentation sites (``sqlite3-doc``, ``docbook-xsl-doc-html`` and a generated
DocBook XSL site of 1,147 pages of ~13 KB each, ``benchmarks/docbook_site.py``) on loopback,
each with bare Scrapy (``benchmarks/bare_spider.py``: follow links, write URL and body length) and with
boilerstrip's whole pipeline (``--profile own-site``, finishing pass included), both at 16 connections per
host, and prints pages/s, their ratio and each process's peak RSS. ``--growth`` crawls a generated
one-template site (``benchmarks/gensite.py``) of each size with boilerstrip and prints time, peak RSS and
KiB per extra page, so memory that grows with pages shows.

The site (by default Debian's ``sqlite3-doc``, ``/usr/share/doc/sqlite3``: 766 HTML files) is served by
SiteServer with a ``robots.txt`` that disallows a folder. The expected set is computed independently of
boilerstrip: a breadth-first walk with lxml and ``urllib.parse`` from ``/`` over ``<a href>``/``<area
href>`` links on the same origin, keeping URLs that resolve to an HTML file on disk and are not under a
disallowed prefix. The crawl's ``final_url`` paths must equal that set, and the server's log must show no
request under a disallowed prefix. Prints pages, seconds and pages/second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import lxml.html

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from boilerstrip.demo.server import Reply, SiteServer  # noqa: E402
from boilerstrip.items import complete_record  # noqa: E402

DEFAULT_ROOT = Path("/usr/share/doc/sqlite3")
DEFAULT_DISALLOW = ("/releaselog/",)
HTML_SUFFIXES = (".html", ".htm")


def _file_for(root: Path, path: str) -> Path | None:
    """The HTML file a URL path resolves to on disk (folder -> index.html), else None."""
    target = (root / unquote(path).lstrip("/")).resolve()
    if root.resolve() not in target.parents and target != root.resolve():
        return None
    if target.is_dir():
        target = target / "index.html"
    if target.is_file() and target.suffix.lower() in HTML_SUFFIXES:
        return target
    return None


def independent_pages(root: Path, disallow: tuple[str, ...], base: str = "http://site.invalid") -> set[str]:
    """Paths (with trailing slash for folders) of the HTML pages reachable from / without disallowed ones."""
    root = root.resolve()
    start = base + "/"
    seen = {start}
    queue = deque([start])
    pages: set[str] = set()
    while queue:
        url = queue.popleft()
        path = urlsplit(url).path
        if any(path.startswith(prefix) for prefix in disallow):
            continue
        file = _file_for(root, path)
        if file is None:
            continue
        if (root / unquote(path).lstrip("/")).is_dir() and not path.endswith("/"):
            path += "/"  # the server redirects folders to their slash form
            url = base + path
        pages.add(unquote(path))
        try:
            tree = lxml.html.fromstring(file.read_bytes())
        except (lxml.etree.ParserError, ValueError):
            continue
        for href in tree.xpath("//a/@href | //area/@href"):
            # browsers read a backslash as a slash in http(s) URLs (WHATWG URL standard)
            target, _ = urldefrag(urljoin(url, href.strip().replace("\\", "/")))
            parts = urlsplit(target)
            if parts.scheme != "http" or parts.netloc != urlsplit(base).netloc:
                continue
            target = f"{base}{parts.path or '/'}"  # static files ignore the query
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return pages


def crawl(root: Path, disallow: tuple[str, ...], profile: str, settings: dict[str, str], out: Path) -> dict:
    robots = "User-agent: *\n" + "".join(f"Disallow: {p}\n" for p in disallow)
    routes = {"/robots.txt": Reply(200, robots.encode(), (("Content-Type", "text/plain"),))}
    with SiteServer(root=root, routes=routes) as server:
        # links only (no sitemaps): the check is "every page that is linked and allowed"
        cmd = [sys.executable, "-m", "boilerstrip", "crawl", server.url + "/", "-o", str(out), "--profile", profile,
               "--no-sitemaps"]
        for key, value in settings.items():
            cmd += ["-s", f"{key}={value}"]
        started = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
        elapsed = time.monotonic() - started
        log = list(server.log)
    records = [complete_record(json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = {unquote(urlsplit(r["final_url"]).path) for r in records}
    return {
        "returncode": proc.returncode,
        "stderr": proc.stderr,
        "seconds": elapsed,
        "records": len(records),
        "found": found,
        "requests": len(log),
        "disallowed_requests": [e.path for e in log if any(e.path.startswith(p) for p in disallow)],
    }


THROUGHPUT_SITES = (Path("/usr/share/doc/sqlite3"), Path("/usr/share/doc/docbook-xsl-doc-html/doc"))
#: the concurrency the throughput comparison gives both crawlers (politeness off)
THROUGHPUT_PER_HOST = 16


def _machine_busy_s() -> float | None:
    """CPU seconds the whole machine has been busy (all cores, ``/proc/stat``); None off Linux. The crawl's
    worker processes are children of a forkserver, not of the crawl, so only the machine's count holds them."""
    import os

    try:
        with open("/proc/stat", encoding="ascii") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values) - idle) / os.sysconf("SC_CLK_TCK")


def _timed(cmd: list[str], cwd: Path) -> dict:
    """Run ``cmd``; wall seconds, exit code, stderr, the process's own peak RSS (MiB, from wait4) and the
    machine's busy CPU seconds meanwhile (the loopback server's share included; steadier than wall time on
    a shared machine, as both crawlers pay the same server)."""
    import os

    busy = _machine_busy_s()
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr_lines: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        stderr_lines.append(line)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    after = _machine_busy_s()
    return {"seconds": time.monotonic() - started, "returncode": proc.returncode,
            "stderr": "".join(stderr_lines[-200:]), "peak_rss_mib": usage.ru_maxrss / 1024,
            "cpu_s": after - busy if busy is not None and after is not None else None}


def _lines(path: Path) -> int:
    return sum(1 for line in path.open(encoding="utf-8") if line.strip()) if path.exists() else 0


def bare_scrapy(start: str, out: Path) -> dict:
    """The reference: plain Scrapy, no project settings (run from a folder without scrapy.cfg)."""
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(ROOT / "benchmarks" / "bare_spider.py"), "-a", f"start={start}",
           "-O", str(out), "-s", "LOG_LEVEL=WARNING", "-s", "ROBOTSTXT_OBEY=False", "-s", "TELNETCONSOLE_ENABLED=False",
           "-s", "CONCURRENT_REQUESTS=32", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={THROUGHPUT_PER_HOST}",
           "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False"]
    result = _timed(cmd, out.parent)
    result["pages"] = _lines(out)
    return result


def whole_pipeline(start: str, out: Path, extra: dict[str, str] | None = None) -> dict:
    """boilerstrip crawl with every stage on and the finishing pass, politeness off (own-site profile)."""
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", start, "-o", str(out), "--profile", "own-site",
           "--no-sitemaps", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={THROUGHPUT_PER_HOST}"]
    for key, value in (extra or {}).items():
        cmd += ["-s", f"{key}={value}"]
    result = _timed(cmd, ROOT)
    result["pages"] = _pages_read(out)
    result["pass_s"] = _pass_seconds(out)
    return result


def _pass_seconds(out: Path) -> float | None:
    """The finishing pass's seconds, as the run's manifest records them (``finishing.seconds``)."""
    manifest = out.with_name(out.stem + ".manifest.json")
    if not manifest.is_file():
        return None
    seconds = (json.loads(manifest.read_text(encoding="utf-8")).get("finishing") or {}).get("seconds")
    return float(seconds) if isinstance(seconds, (int, float)) else None


def _pages_read(out: Path) -> int:
    """Pages boilerstrip read and wrote: the output's records plus the exact copies the finishing pass
    dropped (bare Scrapy writes a line for those too; its count is of pages read, so is this one)."""
    manifest = out.with_name(out.stem + ".manifest.json")
    if not manifest.is_file():
        return _lines(out)
    data = json.loads(manifest.read_text(encoding="utf-8"))
    return _lines(out) + int(data.get("dropped_after_crawl") or 0)


#: the issue's bar: boilerstrip's whole pipeline keeps this share of bare Scrapy's pages/s on each site
THROUGHPUT_BAR = 0.6
#: issue 29's bar for the finishing pass, ms a page: reported beside each run, not enforced (not met on the
#: large-page site: docs/crawling.md)
PASS_BAR_MS = 1.0


def throughput(sites: tuple[Path, ...], repeat: int = 1) -> bool:
    print(f"throughput: bare Scrapy vs boilerstrip's whole pipeline (finishing pass included), "
          f"{THROUGHPUT_PER_HOST} connections per host, politeness off; fastest of {repeat} interleaved run(s) each "
          "(CPU s: the whole machine busy during that run, all cores; pass ms/page: boilerstrip's finishing "
          f"pass, from the run's manifest, issue 29's bar {PASS_BAR_MS:g} ms)")
    print(f"{'site':28s} {'crawler':12s} {'pages':>6s} {'seconds':>8s} {'pages/s':>8s} {'peak RSS MiB':>13s} "
          f"{'CPU s':>6s} {'pass ms/page':>12s}  ratio")
    ok = True
    for root in sites:
        if not (root / "index.html").is_file():
            print(f"{str(root):28s} missing (apt-get install the package): skipped")
            continue
        with SiteServer(root=root) as server, tempfile.TemporaryDirectory() as tmp:
            start = server.url + "/index.html"
            runs: dict[str, list[dict]] = {"bare": [], "ours": []}
            for n in range(repeat):  # interleaved, so both meet the same load; the fastest of each is kept
                runs["bare"].append(bare_scrapy(start, Path(tmp) / f"bare{n}.jsonl"))
                runs["ours"].append(whole_pipeline(start, Path(tmp) / f"ours{n}" / "out.jsonl"))
            bare = min(runs["bare"], key=lambda r: r["seconds"])
            ours = min(runs["ours"], key=lambda r: r["seconds"])
        rates = []
        for name, result in (("bare-scrapy", bare), ("boilerstrip", ours)):
            rate = result["pages"] / result["seconds"] if result["seconds"] else 0.0
            rates.append(rate)
            ratio = f"{rates[1] / rates[0]:.2f}" if len(rates) == 2 and rates[0] else ""
            cpu = f"{result['cpu_s']:6.1f}" if result.get("cpu_s") is not None else f"{'-':>6s}"
            pass_s = result.get("pass_s")
            per_page = f"{pass_s * 1000 / result['pages']:12.2f}" if pass_s is not None and result["pages"] else f"{'-':>12s}"
            print(f"{root.parent.name + '/' + root.name:28s} {name:12s} {result['pages']:6d} {result['seconds']:8.1f} "
                  f"{rate:8.1f} {result['peak_rss_mib']:13.0f} {cpu} {per_page}  {ratio}")
            if ratio and rates[1] < THROUGHPUT_BAR * rates[0]:
                ok = False
                print(f"  below the bar: boilerstrip keeps less than {THROUGHPUT_BAR} of bare Scrapy's pages/s")
            if result["returncode"] != 0:
                ok = False
                print("  exit", result["returncode"], result["stderr"][-500:])
    return ok


def growth(sizes: list[int]) -> bool:
    from gensite import GeneratedSite

    print("growth: boilerstrip's whole pipeline on a generated one-template site")
    print(f"{'pages':>7s} {'records':>8s} {'seconds':>8s} {'pages/s':>8s} {'peak RSS MiB':>13s} {'KiB/extra page':>15s}")
    previous: tuple[int, float] | None = None
    ok = True
    for size in sizes:
        with GeneratedSite(size) as site, tempfile.TemporaryDirectory() as tmp:
            result = whole_pipeline(site.url + "/p/0.html", Path(tmp) / "out.jsonl",
                                    # /p/1999.html is date-like: the trap's calendar budget would stop it
                                    {"BOILERSTRIP_TRAPS_PARAMS": json.dumps({"max_pages_per_host": size + 10,
                                                                             "max_urls_per_pattern": 0})})
        per_page = ""
        if previous is not None and result["pages"] > previous[0]:
            per_page = f"{(result['peak_rss_mib'] - previous[1]) * 1024 / (result['pages'] - previous[0]):.2f}"
        previous = (result["pages"], result["peak_rss_mib"])
        rate = result["pages"] / result["seconds"] if result["seconds"] else 0.0
        print(f"{size:7d} {result['pages']:8d} {result['seconds']:8.1f} {rate:8.1f} {result['peak_rss_mib']:13.0f} {per_page:>15s}")
        ok = ok and result["returncode"] == 0 and result["pages"] == size
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--disallow", action="append", default=None)
    parser.add_argument("--profile", default="own-site")
    parser.add_argument("--compare-scrapy-defaults", action="store_true",
                        help="also crawl with Scrapy's stock concurrency (8 per domain, no delay, no AutoThrottle)")
    parser.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="extra settings for every run, e.g. -s BOILERSTRIP_EXTRACTION_ENABLED=false")
    parser.add_argument("--throughput", action="store_true",
                        help="bare Scrapy vs the whole pipeline on two doc sites (pages/s ratio, peak RSS)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="with --throughput: interleaved runs of each crawler per site; the fastest counts")
    parser.add_argument("--growth", metavar="N,N,...", default="",
                        help="also crawl generated one-template sites of these sizes (time, memory per page)")
    args = parser.parse_args(argv)
    if args.throughput or args.growth:
        ok = True
        if args.throughput:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from docbook_site import write_site

            with tempfile.TemporaryDirectory() as generated:
                # the large-page site (issue 29): ~13 KB of DocBook XSL HTML a page, 1,147 pages
                large = Path(generated) / "docbook-large"
                write_site(large)
                ok = throughput((*THROUGHPUT_SITES, large), args.repeat)
        if args.growth:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            ok = growth([int(n) for n in args.growth.split(",") if n.strip()]) and ok
        return 0 if ok else 1
    disallow = tuple(args.disallow or DEFAULT_DISALLOW)
    if not (args.root / "index.html").is_file():
        if args.root != DEFAULT_ROOT:
            print(f"no HTML site at {args.root}", file=sys.stderr)
            return 2
        from boilerstrip.demo.sitegen import DISALLOWED_PREFIX, SITE_DIR

        print(f"{DEFAULT_ROOT} is missing (apt-get install sqlite3-doc): using the bundled demo site instead")
        args.root, disallow = SITE_DIR, tuple(args.disallow or (DISALLOWED_PREFIX,))
    expected = independent_pages(args.root, disallow)
    # Identical files (sqlite3-doc ships fileformat.html twice; / and /index.html are the same page) are
    # found by the crawl but dropped by the duplicate-pages pipeline: it is off here so the set compares
    # what the crawl found, not what dedup kept.
    base = {"BOILERSTRIP_DUPLICATES_ENABLED": "false"}
    base.update(item.split("=", 1) for item in args.settings if "=" in item)
    runs = [(args.profile, dict(base))]
    if args.compare_scrapy_defaults:
        runs.append(("scrapy-defaults", {**base, "CONCURRENT_REQUESTS": "16", "CONCURRENT_REQUESTS_PER_DOMAIN": "8"}))
    ok = True
    print(f"site: {args.root} ({len(list(args.root.rglob('*.html')))} HTML files), robots disallows {list(disallow)}")
    print(f"expected (linked from / and allowed, computed independently): {len(expected)} pages")
    for name, settings in runs:
        profile = "own-site" if name == "scrapy-defaults" else name
        with tempfile.TemporaryDirectory() as tmp:
            result = crawl(args.root, disallow, profile, settings, Path(tmp) / "out.jsonl")
        missing, extra = expected - result["found"], result["found"] - expected
        rate = result["records"] / result["seconds"] if result["seconds"] else 0.0
        print(
            f"{name:16s} pages={result['records']} seconds={result['seconds']:.1f} pages/s={rate:.1f} "
            f"requests={result['requests']} disallowed_requests={len(result['disallowed_requests'])} "
            f"missing={len(missing)} extra={len(extra)} exit={result['returncode']}"
        )
        for line in result["stderr"].splitlines():
            if "by reason" in line:
                print("  " + line.replace("[boilerstrip]", "").strip())
        for path in sorted(missing)[:10]:
            print(f"  missing: {path}")
        for path in sorted(extra)[:10]:
            print(f"  extra: {path}")
        ok = ok and not missing and not extra and not result["disallowed_requests"] and result["returncode"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
