"""Distributed crawls on scrapy-redis: speed with 1 and 4 workers, shared politeness, same output, kill -9.

Usage (from the repository root; needs Debian's ``redis-server``)::

    .venv/bin/python benchmarks/distributed_benchmark.py              # all four checks, exit 1 if one misses
    .venv/bin/python benchmarks/distributed_benchmark.py --pages 300 --latency 0.05

A loopback site of ``--pages`` pages (each linking to the home page and a few others, one shared template)
is served by SiteServer, which adds ``--latency`` seconds (50 ms by default) to every response; a
``redis-server`` runs on a free loopback port. Each check is a real ``boilerstrip crawl ... --redis URL
--workers N`` (worker processes, coordinator, finishing pass):

- **speed** (politeness off: no delay, 32 connections per host; each worker is one capacity unit of
  ``CONCURRENT_REQUESTS=2``): pages/s = pages the server answered / (last request - first request), so the
  workers' start-up (imports) is not counted; the bar is 4 workers >= 3x one worker;
- **politeness** (``DOWNLOAD_DELAY`` 0.2 s, one connection per host, 3 workers of one request each): the
  smallest gap between two requests in the server's log must be >= the delay;
- **same output**: the 1-worker and the 4-worker crawls of the speed check give the same URLs and texts;
- **kill -9**: 3 workers, one holding requests is killed with SIGKILL mid-crawl; the crawl must finish
  with every admitted URL accounted for (``reconciled``) and every page in the output.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from boilerstrip.demo.server import Reply, SiteServer  # noqa: E402
from boilerstrip.distributed.localredis import LocalRedis  # noqa: E402
from boilerstrip.distributed.store import CrawlKeys  # noqa: E402

HTML = (("Content-Type", "text/html; charset=utf-8"),)
FAST = ["--profile", "test", "-s", "BOILERSTRIP_RENDER_MODE=never", "--no-sitemaps"]
#: the crawl alone, for --crawl-only (as crawl_benchmark.py measures it)
CRAWL_ONLY = ["-s", "BOILERSTRIP_EXTRACTION_ENABLED=false", "-s", "BOILERSTRIP_BOILERPLATE_ENABLED=false"]
#: the bar of the speed check (issue 14): 4 workers at least 3x the pages/s of one
SPEEDUP_BAR = 3.0


def site_routes(pages: int, latency_s: float) -> dict:
    links = [f"/doc/{i}" for i in range(1, pages + 1)]
    routes: dict = {}
    for i, href in enumerate(["/"] + links):
        out = (["/"] + links) if i == 0 else ["/", links[(i * 7) % pages], links[(i * 13) % pages], links[i % pages]]
        nav = "".join(f'<li><a href="{h}">{h}</a></li>' for h in out)
        html = (f"<!DOCTYPE html><html lang='en'><head><title>Doc {i}</title></head><body><nav><ul>{nav}</ul></nav>"
                f"<main><h1>Doc {i}</h1><p>{'Paragraph about subject %d, in a few plain words. ' % i * 8}</p></main>"
                f"<footer>Example documentation footer, the same on every page.</footer></body></html>")
        routes[href] = Reply(200, html.encode(), HTML, delay_s=latency_s)
    routes["/robots.txt"] = Reply(200, b"User-agent: *\nAllow: /\n", (("Content-Type", "text/plain"),), delay_s=latency_s)
    return routes


def crawl(url: str, out: Path, redis_url: str, workers: int, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", url, "-o", str(out), *FAST, "--redis", redis_url,
           "--workers", str(workers), *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)


def records(out: Path) -> dict[str, str]:
    """path -> text (each crawl has its own server port: URLs are compared by path)."""
    if not out.exists():
        return {}
    rows = (json.loads(line) for line in out.read_text().splitlines() if line.strip())
    return {"/" + r["url"].split("/", 3)[3]: r["text"] for r in rows}


def manifest(out: Path) -> dict:
    return json.loads(out.with_name(out.name.replace(".jsonl", ".manifest.json")).read_text())


def rate(log: list) -> tuple[int, float, float]:
    times = sorted(entry.at for entry in log)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return len(times), span, (len(times) - 1) / span if span else 0.0


def speed_check(args: argparse.Namespace, redis_url: str, folder: Path) -> dict:
    result: dict = {}
    capacity = ["-s", f"CONCURRENT_REQUESTS={args.per_worker}", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=32",
                "-s", "DOWNLOAD_DELAY=0", *(CRAWL_ONLY if args.crawl_only else [])]
    for workers in (1, 4):
        with SiteServer(routes=site_routes(args.pages, args.latency)) as site:
            out = folder / f"speed{workers}.jsonl"
            proc = crawl(site.url + "/", out, redis_url, workers, *capacity)
            fetched, span, pages_s = rate(site.log)
            result[workers] = {"exit": proc.returncode, "fetched": fetched, "seconds": round(span, 2),
                               "pages_s": round(pages_s, 1), "records": records(out),
                               "by_worker": manifest(out)["distributed"].get("items_by_worker") if out.exists() else {}}
            if proc.returncode:
                print(proc.stderr[-2000:], file=sys.stderr)
    return result


def politeness_check(args: argparse.Namespace, redis_url: str, folder: Path) -> dict:
    delay = args.delay
    with SiteServer(routes=site_routes(min(args.pages, 40), args.latency)) as site:
        out = folder / "polite.jsonl"
        proc = crawl(site.url + "/", out, redis_url, 3, "-s", f"DOWNLOAD_DELAY={delay}",
                     "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", "RANDOMIZE_DOWNLOAD_DELAY=false",
                     "-s", "CONCURRENT_REQUESTS=1")
        times = sorted(entry.at for entry in site.log)
    gaps = [b - a for a, b in zip(times, times[1:])]
    return {"exit": proc.returncode, "requests": len(times), "delay_s": delay,
            "min_gap_s": round(min(gaps), 3) if gaps else None,
            "by_worker": manifest(out)["distributed"].get("items_by_worker") if out.exists() else {}}


def kill_check(args: argparse.Namespace, redis_url: str, folder: Path) -> dict:
    import redis

    client = redis.Redis.from_url(redis_url)
    out = folder / "killed.jsonl"
    pages = min(args.pages, 60)
    with SiteServer(routes=site_routes(pages, max(args.latency, 0.1))) as site:
        cmd = [sys.executable, "-m", "boilerstrip", "crawl", site.url + "/", "-o", str(out), *FAST, "--redis",
               redis_url, "--workers", "3", "-s", "CONCURRENT_REQUESTS=2", "-s", 'BOILERSTRIP_DISTRIBUTED_PARAMS={"heartbeat_ttl_s": 5}']
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed = None
        while killed is None and proc.poll() is None:
            if len(site.log) >= pages // 4:
                keys = CrawlKeys((client.get("boilerstrip:crawl:current") or b"").decode())
                for raw in client.smembers(keys.workers):
                    beat = client.get(keys.heartbeat(raw.decode()))
                    if beat and client.zcard(keys.inflight(raw.decode())):
                        killed = json.loads(beat)["pid"]
                        os.kill(killed, signal.SIGKILL)
                        break
            time.sleep(0.02)
        _, stderr = proc.communicate(timeout=600)
    data = manifest(out) if out.exists() else {}
    got = set(records(out))
    expected = {"/"} | {f"/doc/{i}" for i in range(1, pages + 1)}
    return {"exit": proc.returncode, "killed_pid": killed, "reconciled": data.get("reconciled"),
            "pending": (data.get("counts") or {}).get("pending"), "missing_pages": len(expected - got),
            "requeued": (data.get("distributed") or {}).get("requeued", 0),
            "dead_workers": (data.get("distributed") or {}).get("dead_workers", 0)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=160, help="pages of the site (default 160)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the server adds per response (0.05)")
    parser.add_argument("--per-worker", type=int, default=1,
                        help="CONCURRENT_REQUESTS of each worker in the speed check (its capacity; default 1)")
    parser.add_argument("--crawl-only", action="store_true",
                        help="speed check without extraction and cross-page removal (the engine alone)")
    parser.add_argument("--delay", type=float, default=0.2, help="DOWNLOAD_DELAY of the politeness check (0.2)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="boilerstrip-dist-bench-") as tmp, LocalRedis() as server:
        folder = Path(tmp)
        speed = speed_check(args, server.url, folder)
        polite = politeness_check(args, server.url, folder)
        killed = kill_check(args, server.url, folder)
    one, four = speed[1], speed[4]
    ratio = four["pages_s"] / one["pages_s"] if one["pages_s"] else 0.0
    same = bool(one["records"]) and one["records"] == four["records"]
    checks = {
        "speed": not one["exit"] and not four["exit"] and ratio >= SPEEDUP_BAR,
        "politeness": not polite["exit"] and polite["min_gap_s"] is not None and polite["min_gap_s"] >= polite["delay_s"]
                      and len(polite["by_worker"] or {}) >= 2,
        "same_output": same,
        "kill_9": not killed["exit"] and killed["killed_pid"] is not None and bool(killed["reconciled"])
                  and killed["missing_pages"] == 0 and killed["pending"] == 0,
    }
    print(f"site: {args.pages + 1} pages, +{args.latency * 1000:.0f} ms per response, redis-server on loopback; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; each worker CONCURRENT_REQUESTS={args.per_worker}"
          + (", crawl only" if args.crawl_only else ", extraction and cross-page removal on"))
    rows = [
        ("speed", "1 worker %s pages/s (%d requests in %s s); 4 workers %s pages/s (%d in %s s): x%.2f"
         % (one["pages_s"], one["fetched"], one["seconds"], four["pages_s"], four["fetched"], four["seconds"], ratio),
         ">= x%.1f" % SPEEDUP_BAR),
        ("politeness", "3 workers, %d requests, smallest gap %s s; items by worker %s"
         % (polite["requests"], polite["min_gap_s"], sorted((polite["by_worker"] or {}).values())),
         ">= %.2f s" % polite["delay_s"]),
        ("same_output", "1 vs 4 workers: %d vs %d records, identical URLs and texts: %s"
         % (len(one["records"]), len(four["records"]), same), "identical"),
        ("kill_9", "killed pid %s, requeued %s, dead workers %s, pending %s, missing pages %s"
         % (killed["killed_pid"], killed["requeued"], killed["dead_workers"], killed["pending"], killed["missing_pages"]),
         "reconciled, 0 missing"),
    ]
    print("%-12s %-84s %-22s %s" % ("check", "figures", "bar", "result"))
    for name, figures, bar in rows:
        print("%-12s %-84s %-22s %s" % (name, figures, bar, "ok" if checks[name] else "MISSED"))
    print(json.dumps({"pages_s_1": one["pages_s"], "pages_s_4": four["pages_s"], "speedup": round(ratio, 2),
                      "items_by_worker_4": four["by_worker"], "politeness_min_gap_s": polite["min_gap_s"],
                      "checks": checks}))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
