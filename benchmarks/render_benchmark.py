"""Render benchmark: the mixed site crawled in auto mode and through the browser for every page.

    .venv/bin/python benchmarks/render_benchmark.py [--pages 200] [--json OUT.json]

Builds the mixed site (``benchmarks/mixed_site.py``: ~half server-rendered articles, ~half JS-only
shells, a third of those injecting their content after 300-1500 ms), serves it on loopback, and runs two
real crawls of it (``python -m boilerstrip crawl --profile test``) one after the other:

- ``auto``   (the default ``BOILERSTRIP_RENDER_MODE``): static first, the browser where the verdict says so;
- ``always`` (``BOILERSTRIP_RENDER_MODE=always``): every page through the browser.

For each: pages/second (records / wall time of the crawl process), recall on JS-only pages (the record's
text holds the page's unique sentence), the share of static pages that went to the browser, render
reasons, and the peak memory of the crawler plus its browser (sum over the process tree, sampled from
/proc every 100 ms: RSS, and PSS which counts memory shared between Chromium's processes once).
Exit status 1 when auto mode misses the issue's bar: recall 100 %, at most 2 % of static pages rendered.

First, the decision alone is checked on real server-rendered pages (``render_decision_check.py``: the
extraction benchmark's 181 article pages, when the dataset is there): at most 2 % may be judged to need
a browser.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from boilerstrip.demo.server import SiteServer  # noqa: E402
from mixed_site import MixedSite, build_mixed_site  # noqa: E402
from render_decision_check import MAX_RENDERED_SHARE as MAX_REAL_PAGES_RENDERED_SHARE  # noqa: E402
from render_decision_check import check as check_real_pages  # noqa: E402

#: the issue's bar for auto mode
MIN_JS_RECALL = 1.0
MAX_STATIC_RENDERED_SHARE = 0.02


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("latin-1")
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _tree_memory_kib(pid: int) -> tuple[int, int, int]:
    """(rss, pss, processes) summed over ``pid`` and its descendants."""
    tree = _children()
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(tree.get(p, []))
    rss = pss = 0
    for p in seen:
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss, len(seen)


class PeakSampler(threading.Thread):
    def __init__(self, pid: int, every_s: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.every_s = pid, every_s
        self.peak_rss = self.peak_pss = self.peak_procs = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            rss, pss, procs = _tree_memory_kib(self.pid)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.peak_procs = max(self.peak_procs, procs)
            self._halt.wait(self.every_s)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def crawl(site: MixedSite, url: str, mode: str, workdir: Path) -> dict:
    out = workdir / f"{mode}.jsonl"
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", url, "-o", str(out), "--profile", "test",
           "--log-level", "INFO", "-s", f"BOILERSTRIP_RENDER_MODE={mode}", "-s", "STATS_DUMP=true"]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sampler = PeakSampler(proc.pid)
    sampler.start()
    log, _ = proc.communicate(timeout=600)
    wall = time.monotonic() - started
    sampler.stop()
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_path = {urlsplit(r["url"]).path: r for r in records}
    js_ok = [p for p in site.js_pages if p.sentence in ((by_path.get(p.path) or {}).get("text") or "")]
    static_seen = [p for p in site.static_pages if p.path in by_path]
    static_rendered = [p for p in static_seen if by_path[p.path].get("fetch") == "browser"]
    reasons: dict[str, int] = {}
    for r in records:
        if r.get("fetch") == "browser":
            reasons[r.get("render_reason") or "?"] = reasons.get(r.get("render_reason") or "?", 0) + 1
    missed = [
        {"path": p.path, "shell": p.shell, "delay_ms": p.delay_ms,
         "fetch": (by_path.get(p.path) or {}).get("fetch"), "flags": (by_path.get(p.path) or {}).get("flags")}
        for p in site.js_pages if p not in js_ok
    ]
    return {
        "mode": mode,
        "exit_code": proc.returncode,
        "records": len(records),
        "wall_s": round(wall, 2),
        "pages_per_s": round(len(records) / wall, 2) if wall else 0.0,
        "js_recall": round(len(js_ok) / len(site.js_pages), 4) if site.js_pages else 1.0,
        "static_pages_seen": len(static_seen),
        "static_rendered": len(static_rendered),
        "static_rendered_share": round(len(static_rendered) / len(static_seen), 4) if static_seen else 0.0,
        "rendered_by_reason": dict(sorted(reasons.items())),
        "peak_rss_mib": round(sampler.peak_rss / 1024, 1),
        "peak_pss_mib": round(sampler.peak_pss / 1024, 1),
        "peak_processes": sampler.peak_procs,
        "missed_js_pages": missed[:10],
        "log_tail": log.splitlines()[-3:] if proc.returncode else [],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--modes", default="auto,always")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--no-real-pages", action="store_true", help="skip the decision check on real pages")
    args = parser.parse_args(argv)
    real = None if args.no_real_pages else check_real_pages()
    if real is not None:
        print(f"decision on {real['pages']} real server-rendered pages: {real['judged_needing_browser']} judged to "
              f"need a browser ({real['share']:.1%}), {real['ms_per_page']} ms/page; {real['by_reason']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="boilerstrip-mixed-") as tmp:
        site = build_mixed_site(Path(tmp) / "site", pages=args.pages)
        results = {"pages": len(site.pages), "js_pages": len(site.js_pages), "cpus": os.cpu_count(),
                   "real_pages": real, "runs": {}}
        with SiteServer(root=site.root) as server:
            for mode in args.modes.split(","):
                results["runs"][mode] = run = crawl(site, server.url + "/", mode, Path(tmp))
                print(f"{mode:>6}: {run['records']} records in {run['wall_s']} s = {run['pages_per_s']} pages/s; "
                      f"JS recall {run['js_recall']:.1%}; static rendered {run['static_rendered']}/"
                      f"{run['static_pages_seen']}; peak RSS {run['peak_rss_mib']} MiB (PSS {run['peak_pss_mib']} MiB, "
                      f"{run['peak_processes']} processes); reasons {run['rendered_by_reason']}", flush=True)
    runs = results["runs"]
    if "auto" in runs and "always" in runs and runs["always"]["pages_per_s"]:
        results["speedup_auto_vs_always"] = round(runs["auto"]["pages_per_s"] / runs["always"]["pages_per_s"], 2)
        print(f"auto is {results['speedup_auto_vs_always']}x the pages/s of always")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if real is not None and real["share"] > MAX_REAL_PAGES_RENDERED_SHARE:
        print(f"FAIL: {real['share']:.1%} of real server-rendered pages judged to need a browser: {real['rendered']}",
              file=sys.stderr)
        return 1
    auto = runs.get("auto")
    if auto and (auto["js_recall"] < MIN_JS_RECALL or auto["static_rendered_share"] > MAX_STATIC_RENDERED_SHARE):
        print(f"FAIL: auto mode must reach recall {MIN_JS_RECALL:.0%} with <= {MAX_STATIC_RENDERED_SHARE:.0%} "
              f"static pages rendered; missed: {auto['missed_js_pages']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
