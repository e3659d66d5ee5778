"""What the safety layer costs: the same loopback crawl with scope/traps/ledger on and off.

    .venv/bin/python benchmarks/safety_overhead.py [--pages 300] [--runs 3]

Serves a generated site (``--pages`` linked pages) on 127.0.0.1, crawls it with ``--profile test`` once per
run with the safety components enabled and once with BOILERSTRIP_{SCOPE,TRAPS,LEDGER}_ENABLED=false, and
prints the median wall time of each and the ledger's verdict of the enabled runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from boilerstrip.demo.server import Reply, SiteServer  # noqa: E402

OFF = ["-s", "BOILERSTRIP_SCOPE_ENABLED=false", "-s", "BOILERSTRIP_TRAPS_ENABLED=false", "-s", "BOILERSTRIP_LEDGER_ENABLED=false"]


def site_routes(pages: int) -> dict[str, Reply]:
    html = (("Content-Type", "text/html; charset=utf-8"),)
    routes = {}
    for i in range(pages):
        links = " ".join(f'<a href="/p{j}">p{j}</a>' for j in range(i + 1, min(pages, i + 6)))
        words = " ".join(f"w{(i * 13 + k) % 5000}" for k in range(300))
        body = f"<html><head><title>P{i}</title></head><body><nav>menu</nav><main><h1>P{i}</h1><p>{words}</p>{links}</main></body></html>"
        routes[f"/p{i}"] = Reply(200, body.encode(), html)
    routes["/"] = Reply(200, b'<html><body><main><p>home</p><a href="/p0">start</a></main></body></html>', html)
    return routes


def crawl(url: str, out: Path, extra: list[str]) -> float:
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", url, "-o", str(out), "--profile", "test", "--no-sitemaps",
           "-s", "BOILERSTRIP_FINISHING_ENABLED=false", *extra]  # fmt: skip
    started = time.monotonic()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with SiteServer(routes=site_routes(args.pages)) as server, tempfile.TemporaryDirectory() as tmp:
        on, off, verdicts = [], [], []
        for run in range(args.runs):
            out = Path(tmp) / f"on{run}.jsonl"
            on.append(crawl(server.url + "/", out, []))
            manifest = json.loads((Path(tmp) / f"on{run}.manifest.json").read_text())
            verdicts.append((manifest["reconciled"], manifest["counts"]["urls"], manifest["counts"]["item"], manifest["reasons"]))
            off.append(crawl(server.url + "/", Path(tmp) / f"off{run}.jsonl", OFF))
    print(f"pages={args.pages} runs={args.runs}")
    print(f"safety on : median {statistics.median(on):.2f} s  {[round(t, 2) for t in on]}")
    print(f"safety off: median {statistics.median(off):.2f} s  {[round(t, 2) for t in off]}")
    print(f"ledger (reconciled, urls, items, reasons) per run: {verdicts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
