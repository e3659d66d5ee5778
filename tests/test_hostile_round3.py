"""The hostile web, round 3 (issue 30): nothing left running after a kill, Redis outages ridden out, no
"finished" that is not, an idempotent --resume of a finished run, the extraction budget before the work.

Real processes where the process boundary is the point: a crawl, a coordinator or a scheduler is killed
with SIGKILL, and every process it had started must be gone within a deadline (``hostile_processes``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _crawlsite import FAST, page
from _redis import need_redis_server
from _incrawl import run_cli
from conftest import ROOT, read_jsonl
from hostile_processes import command_line, descendants, kill_all, snapshot, wait_for_tree, wait_gone

from boilerstrip.demo.server import Reply

ENV = dict(os.environ, PYTHONUNBUFFERED="1")
#: how long the processes of a killed crawl get to go (they go within a second; a loaded 2-core machine)
GONE_WITHIN_S = 30


def _slow_site(pages: int = 300, delay_s: float = 0.2) -> dict:
    """A site that takes minutes to crawl one request at a time: it is still running when it is killed."""
    routes: dict = {"/": page("home", [f"/p{i}" for i in range(pages)])}
    for i in range(pages):
        reply = page(f"p{i}", [f"/p{j}" for j in range(i, min(pages, i + 3))])
        routes[f"/p{i}"] = Reply(reply.status, reply.body, reply.headers, delay_s=delay_s)
    return routes


def _pool_up(min_forkserver_processes: int):
    """A predicate on a process tree: the crawl's forkserver and its workers are running."""
    return lambda pids: sum("multiprocessing.forkserver" in command_line(p) for p in pids) >= min_forkserver_processes


def _reap(proc: subprocess.Popen, tree: set[int]) -> None:
    """A test's cleanup: the command killed if it still runs, then whatever of its process tree is left."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=30)
    kill_all(snapshot(tree))


def _kill_and_expect_gone(proc: subprocess.Popen, tree: set[int]) -> None:
    procs = snapshot(tree)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        left = wait_gone(procs, GONE_WITHIN_S)
        assert not left, f"still running {GONE_WITHIN_S} s after the kill: {left}"
    finally:
        kill_all(procs)


# -- item 1: kill -9 of a crawl takes its worker pool with it --------------------------------------------------
@pytest.mark.timeout(180)
def test_kill_9_of_a_crawl_leaves_no_forkserver_worker_or_resource_tracker(serve, tmp_path: Path) -> None:
    site = serve(routes=_slow_site())
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", site.url + "/", "-o", str(tmp_path / "o.jsonl"), *FAST,
           "--no-sitemaps", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", "BOILERSTRIP_EXTRACTION_WORKERS=2"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree: set[int] = set()
    try:
        # the forkserver and both workers (each a "multiprocessing.forkserver" command line), mid-crawl
        tree = wait_for_tree(proc.pid, _pool_up(3), timeout_s=120)
        assert _pool_up(3)(tree), [command_line(p)[:80] for p in tree]
        assert any("resource_tracker" in command_line(p) for p in tree)
        assert proc.poll() is None, "the crawl ended before it could be killed"
        _kill_and_expect_gone(proc, tree)
    finally:
        _reap(proc, tree)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_kill_9_of_a_distributed_crawl_stops_its_workers_and_their_pools(serve, redis_url, tmp_path: Path) -> None:
    site = serve(routes=_slow_site())
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", site.url + "/", "-o", str(tmp_path / "o.jsonl"), *FAST,
           "--no-sitemaps", "--redis", redis_url, "--workers", "2", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
           "-s", "BOILERSTRIP_EXTRACTION_WORKERS=1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree: set[int] = set()
    try:
        # two `boilerstrip worker` processes, each with a forkserver and one worker process
        tree = wait_for_tree(proc.pid, _pool_up(4), timeout_s=150)
        assert _pool_up(4)(tree), [command_line(p)[:80] for p in tree]
        assert sum(" worker " in command_line(p) for p in tree) == 2
        before = len(site.log)
        _kill_and_expect_gone(proc, tree)
        requests_after = len(site.log) - before
        time.sleep(2)
        assert len(site.log) - before == requests_after  # nobody crawls any more
    finally:
        _reap(proc, tree)


# -- item 3: a killed scheduler takes its crawl with it; the crawl holds the job's lock ---------------------------
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_kill_9_of_the_scheduler_stops_its_crawl_which_holds_the_jobs_lock(serve, tmp_path: Path) -> None:
    from boilerstrip.state import schedule_layout

    site = serve(routes=_slow_site())
    add = subprocess.run([sys.executable, "-m", "boilerstrip", "schedule", "add", "j", site.url + "/", "--every", "1h",
                          "-o", "runs", "--store", "st", *FAST, "--no-sitemaps", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1"],
                         cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert add.returncode == 0, add.stderr
    runner = subprocess.Popen([sys.executable, "-m", "boilerstrip", "schedule", "run", "--store", "st"], cwd=tmp_path,
                              env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree: set[int] = set()
    again = None
    try:
        tree = wait_for_tree(runner.pid, _pool_up(3), timeout_s=150)
        crawls = [p for p in tree if " crawl " in command_line(p)]
        assert len(crawls) == 1 and _pool_up(3)(tree), [command_line(p)[:80] for p in tree]
        lock = schedule_layout(tmp_path / "runs", "j").lock.resolve()
        held = {os.readlink(f) for f in Path(f"/proc/{crawls[0]}/fd").iterdir() if os.path.islink(f)}
        assert str(lock) in held  # the crawl holds the job's lock itself: a new scheduler skips the job
        _kill_and_expect_gone(runner, tree)
        # a scheduler started again runs the job once the old crawl is gone, alone
        again = subprocess.Popen([sys.executable, "-m", "boilerstrip", "schedule", "run", "--store", "st"],
                                 cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        new_tree = wait_for_tree(again.pid, lambda pids: any(" crawl " in command_line(p) for p in pids), 60)
        tree |= new_tree
        crawling = [p for p in descendants(1) if " crawl " in command_line(p) and str(site.port) in command_line(p)]
        assert len(crawling) == 1, crawling
    finally:
        for proc in (runner, again):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=90)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=30)
        kill_all(snapshot(tree))


# -- item 5: a full disk under --state fails the run (exit 1, manifest finished: false with the step) ------------
def _small_tmpfs(folder: Path, size: str = "192k") -> None:
    """A tmpfs of ``size`` at ``folder`` (root only: the test says so under CI rather than skip there)."""
    folder.mkdir(parents=True)
    if os.geteuid() != 0:
        message = "mounting a small tmpfs needs root (CI runs the tests as root)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True, timeout=30)


@pytest.mark.timeout(300)
def test_a_full_disk_under_state_fails_the_run_and_says_which_step(serve, tmp_path: Path) -> None:
    routes = {"/": page("home", [f"/p{i}" for i in range(120)])}
    for i in range(120):
        routes[f"/p{i}"] = page(f"p{i}", ["/"], body=f"Page {i} says something of its own, at some length. " * 20)
    site = serve(routes=routes)
    state = tmp_path / "state"
    _small_tmpfs(state)
    out = tmp_path / "o.jsonl"
    try:
        proc = run_cli(["crawl", site.url + "/", "-o", str(out), *FAST, "--no-sitemaps", "--state", str(state)],
                       timeout=240)
    finally:
        subprocess.run(["umount", str(state)], timeout=30)
    assert "database or disk is full" in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Error caught on signal handler" not in proc.stderr
    manifest = json.loads(out.with_name("o.manifest.json").read_text())
    assert manifest["finished"] is False
    assert manifest["finishing"]["status"] == "failed" and manifest["finishing"]["step"]
    assert "database or disk is full" in manifest["finishing"]["error"]


# -- item 4: --resume of a run that finished leaves it as it was ---------------------------------------------------
@pytest.mark.timeout(300)
def test_resume_of_a_finished_recurring_run_keeps_its_change_report(serve, tmp_path: Path) -> None:
    routes = {"/": page("home", [f"/p{i}" for i in range(4)])}
    for i in range(4):
        routes[f"/p{i}"] = page(f"p{i}", ["/"], body=f"Page {i} tells its own story in a few plain sentences. " * 4)
    site = serve(routes=routes)
    out = tmp_path / "o.jsonl"
    command = ["crawl", site.url + "/", "-o", str(out), *FAST, "--no-sitemaps", "--state", str(tmp_path / "state"),
               "--changes-only"]

    def crawl(*extra: str) -> subprocess.CompletedProcess:
        return run_cli([*command, *extra], timeout=240)

    first = crawl()
    assert first.returncode == 0, first.stderr[-3000:]
    for i in range(3):  # an edit on three pages
        site.routes[f"/p{i}"] = page(f"p{i}", ["/"], body=f"Page {i} was rewritten with other words entirely. " * 4)
    second = crawl()
    assert second.returncode == 0, second.stderr[-3000:]
    changed = read_jsonl(out)
    assert sorted(r["change"] for r in changed) == ["changed"] * 3, changed
    files = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "state" not in p.parts}
    requests = len(site.log)

    again = crawl("--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "nothing to resume" in again.stderr
    assert len(site.log) == requests  # not crawled again
    assert {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "state" not in p.parts} == files


# -- item 2: a Redis outage is ridden out; a Redis that lost the crawl stops it cleanly ----------------------------
def _distributed_args(site_url: str, out: Path, redis: str, *extra: str) -> list[str]:
    return ["crawl", site_url + "/", "-o", str(out), *FAST, "--no-sitemaps", "--redis", redis, "--workers", "2",
            "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", *extra]


def _distributed(site_url: str, out: Path, redis: str, *extra: str) -> subprocess.Popen:
    """The coordinator in a process of its own: the test stops, kills or watches it."""
    cmd = [sys.executable, "-m", "boilerstrip", *_distributed_args(site_url, out, redis, *extra)]
    return subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_requests(site, proc: subprocess.Popen, n: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while len(site.log) < n:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the crawl made too few requests"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_ten_second_redis_pause_is_ridden_out(serve, tmp_path: Path) -> None:
    from boilerstrip.distributed.localredis import LocalRedis

    need_redis_server()
    pages = 40
    site = serve(routes=_slow_site(pages, delay_s=0.1))
    out = tmp_path / "o.jsonl"
    with LocalRedis() as server:
        proc = _distributed(site.url, out, server.url)
        tree: set[int] = set()
        try:
            _wait_for_requests(site, proc, 8)
            tree = descendants(proc.pid)
            os.kill(server.process.pid, signal.SIGSTOP)
            try:
                time.sleep(10)
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            _, stderr = proc.communicate(timeout=240)
        finally:
            _reap(proc, tree)
    assert proc.returncode == 0, stderr[-3000:]
    manifest = json.loads(out.with_name("o.manifest.json").read_text())
    assert manifest["finished"] is True and manifest["reconciled"] is True, manifest
    assert {r["url"] for r in read_jsonl(out)} == {site.url + "/"} | {f"{site.url}/p{i}" for i in range(pages)}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_redis_restarted_empty_stops_every_worker_with_a_manifest(serve, tmp_path: Path) -> None:
    from boilerstrip.distributed.localredis import LocalRedis

    need_redis_server()
    site = serve(routes=_slow_site())
    out = tmp_path / "o.jsonl"
    with LocalRedis() as server:
        proc = _distributed(site.url, out, server.url)
        tree: set[int] = set()
        try:
            _wait_for_requests(site, proc, 8)
            tree = wait_for_tree(proc.pid, _pool_up(4), timeout_s=150)
            procs = snapshot(tree)
            server.restart()
            _, stderr = proc.communicate(timeout=180)
            left = wait_gone(procs, GONE_WITHIN_S)
            assert not left, left
            requests = len(site.log)
            time.sleep(2)
            assert len(site.log) == requests  # nobody crawls on
        finally:
            _reap(proc, tree)
    assert proc.returncode == 1, stderr[-3000:]
    assert "redis_lost_state" in stderr and "Traceback" not in stderr, stderr[-3000:]
    manifest = json.loads(out.with_name("o.manifest.json").read_text())
    assert manifest["finish_reason"] == "redis_lost_state" and manifest["finished"] is False
    assert "gone from Redis" in manifest["error"]


def test_the_redis_client_waits_out_a_pause_retries_a_restart_and_gives_up_at_its_limit() -> None:
    from boilerstrip.distributed.connection import OutageParams, redis_client
    from boilerstrip.distributed.localredis import LocalRedis

    need_redis_server()
    with LocalRedis() as server:
        client = redis_client(server.url, OutageParams(limit_s=20))
        client.set("n", 1)
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            import threading

            threading.Timer(2, os.kill, (server.process.pid, signal.SIGCONT)).start()
            assert client.incr("n") == 2  # waited for the paused server, sent once
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        assert client.get("n") == b"2"
        server.process.kill()
        server.process.wait(timeout=10)
        short = redis_client(server.url, OutageParams(limit_s=1.5))
        started = time.monotonic()
        with pytest.raises(Exception) as caught:
            short.get("n")
        assert type(caught.value).__name__ == "ConnectionError"
        assert 1.5 <= time.monotonic() - started < 15  # retried up to the limit, then gave up
        server.restart()
        assert client.get("n") is None  # a restarted, empty server: connected again


# -- item 10: the extraction budget is checked before the work it bounds ------------------------------------------
def test_the_byte_scan_finds_a_page_over_the_node_budget_without_parsing_it() -> None:
    from boilerstrip.reading.links import surely_over_node_budget

    huge = b"<html><body>" + b"<div><p>words</p></div>" * 60_000 + b"</body></html>"  # 120,000 elements
    assert surely_over_node_budget(huge, 100_000)
    assert not surely_over_node_budget(huge, 200_000)
    assert not surely_over_node_budget(huge, 0)  # 0: no limit
    assert not surely_over_node_budget(b"<p>" + b"x" * 1_000_000 + b"</p>", 100_000)  # large, few elements


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("mode", ["auto", "never"])
def test_a_huge_page_does_not_hold_other_hosts(serve, tmp_path: Path, mode: str) -> None:
    """A 9 MiB page of 360,000 elements, fetched second while the workers start: the steady host's
    requests (0.08 s apart when nothing holds the reactor) never wait a second (issue 30: 1.4-4.6 s).

    The page held the reactor 2.16 s (never) and 5.68 s (auto) on a quiet machine, against 0.23 and 0.51 s
    since (commit 50f4d4a), and the hold is the same in every crawl. A stressed suite (`stress --cpu 2` beside
    four test workers, 2026-12-06) once saw a single 1.07 s gap in a crawl whose usual gap was 0.1 s: the
    machine, not the page. So a crawl over the bound is crawled once more, and the smaller of the two largest
    gaps is judged: a page that holds the reactor is over it both times."""
    from test_hostile_round2 import _largest_gap_s, _two_hosts

    gaps = []
    for attempt in range(2):
        huge, steady = _two_hosts(serve)
        out = tmp_path / f"o{attempt}.jsonl"
        proc = run_cli(["crawl", huge.url + "/", steady.url + "/", "-o", str(out), "--profile", "test",
                        "-s", f"BOILERSTRIP_RENDER_MODE={mode}"], timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        ledger = {e["url"]: e for e in read_jsonl(out.with_name(f"o{attempt}.ledger.jsonl"))}
        assert ledger[huge.url + "/huge"]["reason"] == "extraction_budget"
        assert len(steady.hits("/p49")) == 1
        gaps.append(_largest_gap_s(steady))
        print(f"largest gap between the steady host's requests ({mode}): {gaps[-1]:.2f} s")
        if gaps[-1] < 1.0:
            break
    assert min(gaps) < 1.0, gaps


# -- item 12: rendering dependability (real Chromium) ---------------------------------------------------------------
def _browser_available() -> bool:
    from boilerstrip.rendering import default_browser_path

    return bool(default_browser_path() or os.environ.get("BOILERSTRIP_RENDER_BROWSER_PATH"))


def _mixed_site(tmp_path: Path, **kwargs):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from mixed_site import build_mixed_site

    return build_mixed_site(tmp_path / "site", **kwargs)


def _browser_processes(pid: int) -> set[int]:
    return {p for p in descendants(pid) if any(n in command_line(p).split(" ", 1)[0].rsplit("/", 1)[-1].lower()
                                                 for n in ("chrom", "headless_shell"))}


def _stall_browser(proc: subprocess.Popen, server, after: set[int], deadline_s: float = 180) -> set[int]:
    """SIGSTOP the crawl's browser (one launched after the ``after`` ones, once it renders): it answers
    nothing, its tabs never finish. Returns the stopped processes."""
    deadline = time.monotonic() + deadline_s
    renders = sum("/api/posts/" in entry.path for entry in server.log)
    while True:
        fresh = _browser_processes(proc.pid) - after
        if fresh and sum("/api/posts/" in entry.path for entry in server.log) > renders:
            break
        assert proc.poll() is None and time.monotonic() < deadline, "no render started on a fresh browser"
        time.sleep(0.05)
    for pid in fresh:
        os.kill(pid, signal.SIGSTOP)
    return fresh


def _stats_dump(stderr: str) -> dict:
    """The crawl's stats, from Scrapy's closing dump (INFO)."""
    import datetime

    text = stderr.split("Dumping Scrapy stats:", 1)[1]
    return eval(text[text.index("{"):text.index("}\n") + 1], {"datetime": datetime})  # noqa: S307 - our own crawl's dump


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_stalled_browser_is_found_and_restarted_and_pages_that_fell_back_meanwhile_are_rendered(
        tmp_path: Path, serve) -> None:
    """Item 12: the browser freezes (SIGSTOP) mid-crawl; it is found stalled, killed and relaunched, and the
    renders it held are retried. Then the fresh browser freezes too, so the retries fail as well: those
    pages fell back while the browser was down, and get one more render after its second restart."""
    if not _browser_available():
        pytest.skip("no chromium installed (./run tests installs Debian's)")
    site = _mixed_site(tmp_path, pages=24, js_share=0.5, delayed_share=0.0)
    server = serve(root=site.root)
    out = tmp_path / "o.jsonl"
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", server.url + "/", "-o", str(out), "--profile", "test",
           "--log-level", "INFO", "-s", 'BOILERSTRIP_RENDER_PARAMS={"max_render_ms": 8000}', "-s", "CONCURRENT_REQUESTS=2"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped: set[int] = set()
    tree: set[int] = set()
    try:
        stopped |= _stall_browser(proc, server, set())
        frozen_at = time.monotonic()
        # the frozen browser is found and killed: one render budget (8 s) plus the probe (5 s), nominally;
        # the window is ten times that
        while _browser_processes(proc.pid) & stopped and time.monotonic() - frozen_at < 10 * (8 + 5):
            time.sleep(0.1)
        assert not _browser_processes(proc.pid) & stopped, "the stalled browser was not killed"
        tree = descendants(proc.pid)
        stopped |= _stall_browser(proc, server, stopped)  # its successor freezes as well
        tree |= descendants(proc.pid)
        _, stderr = proc.communicate(timeout=480)
        (tmp_path / "crawl.log").write_text(stderr)
    finally:
        kill_all(snapshot(tree | stopped))
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0, stderr[-3000:]
    assert stderr.count("is stalled") >= 2, stderr[-3000:]
    stats = _stats_dump(stderr)
    assert stats.get("boilerstrip/render/browser_stalled", 0) >= 2 and stats.get("boilerstrip/render/browser_restarts", 0) >= 2, stats
    # the retries held by the second frozen browser failed too: rendered once more after its restart
    assert stats.get("boilerstrip/render/after_restart/browser_stalled", 0) >= 1, stats
    assert "rendering it once more after the browser's restart" in stderr
    by_path = {r["url"].split(server.url, 1)[1]: r for r in read_jsonl(out)}
    for js_page in site.js_pages:  # every page that needed the browser got it, on a fresh one
        record = by_path[js_page.path]
        assert record["fetch"] == "browser" and js_page.sentence in record["text"], (js_page.path, record.get("flags"))
        assert not any(f.startswith("render_failed") for f in record["flags"]), record["flags"]


APP_JS = "/* the app: fills #root from its API */\n" + (
    "window.addEventListener('DOMContentLoaded', function () {\n"
    "  fetch(document.body.dataset.api).then(function (r) { return r.json(); }).then(function (d) {\n"
    "    if (d.text) { document.getElementById('root').innerHTML = '<article><h1>' + d.title + '</h1><p>' + d.text + '</p></article>'; }\n"
    "  }).catch(function () {});\n"
    "});\n")
SHELL = ("<!doctype html><html><head><title>{title}</title><script src=\"/app.js\"></script></head><body data-api=\"{api}\">"
         "<nav><a href=\"/\">Home</a> <a href=\"/a\">A</a> <a href=\"/b\">B</a></nav>"
         "<div id=\"root\"><p class=\"loading\">Loading…</p></div></body></html>")
SECOND_TEXT = ("The second visit finally brings the story of the harbour pilots and their long night on the estuary. "
               "They guided eleven ships past the sandbanks before the tide turned against them at dawn.")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_page_still_loading_after_the_wait_is_rendered_again_then_flagged_and_the_exit_status_says_so(
        tmp_path: Path, serve) -> None:
    if not _browser_available():
        pytest.skip("no chromium installed (./run tests installs Debian's)")
    html = (("Content-Type", "text/html; charset=utf-8"),)
    js = (("Content-Type", "application/javascript"),)
    data = (("Content-Type", "application/json"),)
    api_hits = {"a": 0}

    def late_api(path: str, headers: dict) -> Reply:  # empty the first time: the first render stays "Loading…"
        api_hits["a"] += 1
        body = {"title": "Pilots", "text": SECOND_TEXT} if api_hits["a"] >= 2 else {}
        return Reply(200, json.dumps(body).encode(), data)

    home = page("home", ["/a", "/b"]).body
    routes = {
        "/": Reply(200, home, html),
        "/app.js": Reply(200, APP_JS.encode(), js),
        "/a": Reply(200, SHELL.format(title="A", api="/api/a.json").encode(), html),
        "/api/a.json": late_api,
        "/b": Reply(200, SHELL.format(title="B", api="/api/b.json").encode(), html),
        "/api/b.json": Reply(200, b"{}", data),  # never any content: a placeholder for good
    }
    site = serve(routes=routes)
    out = tmp_path / "o.jsonl"
    proc = run_cli(["crawl", site.url + "/", "-o", str(out), "--profile", "test", "--no-sitemaps",
                    "--log-level", "INFO"], timeout=240)
    by_path = {r["url"].split(site.url, 1)[1]: r for r in read_jsonl(out)}
    a, b = by_path["/a"], by_path["/b"]
    assert a["fetch"] == "browser" and "harbour pilots" in a["text"], a
    assert not any(f.startswith("render_placeholder") for f in a["flags"]), a["flags"]
    assert "render_placeholder:loading_shell" in b["flags"], b["flags"]
    assert proc.returncode == 5, proc.stderr[-3000:]
    assert "needed a browser did not get a whole render" in proc.stderr and "render_placeholder:loading_shell" in proc.stderr


def test_a_page_that_needs_a_paused_browser_waits_for_it_once_and_is_rendered() -> None:
    """Issue 30 item 12: pages that needed the browser while it was down get a render after it is back."""
    import asyncio

    from scrapy import Request
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    from boilerstrip.downloadermiddlewares.render import RenderWhenNeededMiddleware
    from boilerstrip.rendering import BrowserParams

    crawler = get_crawler(settings_dict={})
    mw = RenderWhenNeededMiddleware(browser=BrowserParams(max_render_ms=300), stats=crawler.stats)
    shell = (b'<html><head><script src="/static/js/main.js"></script></head><body><div id="root">'
             b'<p class="loading">Loading\xe2\x80\xa6</p></div></body></html>')

    def response(url: str) -> tuple:
        request = Request(url)
        return request, HtmlResponse(url, body=shell, request=request, headers={"Content-Type": "text/html; charset=utf-8"})

    mw.paused_until = time.monotonic() + 0.3  # the browser failed five renders in a row just now
    request, resp = response("http://s.test/a")
    held = mw.process_response(request, resp)
    assert asyncio.iscoroutine(held)  # not kept static: it waits
    started = time.monotonic()
    rendered = asyncio.run(held)
    assert time.monotonic() - started >= 0.25  # for the pause's end
    assert getattr(rendered, "meta", {}).get("playwright") is True  # then to the browser
    assert crawler.stats.get_value("boilerstrip/render/held_for_browser") == 1

    mw.paused_until = time.monotonic() + 60  # paused again while it waited: static, saying why
    request, resp = response("http://s.test/b")
    request.meta["boilerstrip_render_held"] = True
    assert mw.process_response(request, resp) is resp
    assert request.meta["boilerstrip_render_failed"] == "browser_paused"


def test_a_page_whose_render_failed_while_the_browser_was_down_is_rendered_once_more_after() -> None:
    """Item 12: a render lost with the browser (stalled, crashed, or failing while it is paused) is rendered
    once more when the browser is back; a lone timeout on a healthy browser is the page's and goes static."""
    import asyncio

    from scrapy import Request
    from scrapy.utils.test import get_crawler

    from boilerstrip.downloadermiddlewares.render import RenderWhenNeededMiddleware
    from boilerstrip.downloadhandlers.browser import BrowserCrashed, RenderTimeout
    from boilerstrip.rendering import BrowserParams

    crawler = get_crawler(settings_dict={})
    mw = RenderWhenNeededMiddleware(browser=BrowserParams(max_render_ms=300, max_browser_retries=0), stats=crawler.stats)

    def rendered(url: str) -> Request:
        return Request(url, meta={"playwright": True, "boilerstrip_render_reason": "loading_shell"})

    lone = mw.process_exception(rendered("http://s.test/slow"), RenderTimeout("slow page"))
    assert isinstance(lone, Request) and not lone.meta.get("playwright")  # static at once
    assert lone.meta["boilerstrip_render_failed"] == "render_timeout"

    later = mw.process_exception(rendered("http://s.test/a"), BrowserCrashed("stalled", "browser_stalled"))
    assert asyncio.iscoroutine(later)
    again = asyncio.run(later)
    assert again.meta.get("playwright") is True and again.meta["boilerstrip_render_after_restart"] is True
    # its one more render fails as well: static, with the reason
    last = mw.process_exception(again, BrowserCrashed("stalled", "browser_stalled"))
    assert isinstance(last, Request) and not last.meta.get("playwright")
    assert last.meta["boilerstrip_render_failed"] == "browser_stalled"

    mw.paused_until = time.monotonic() + 0.3  # a timeout while the browser is paused: waits for the pause's end
    started = time.monotonic()
    after_pause = asyncio.run(mw.process_exception(rendered("http://s.test/b"), RenderTimeout("timeout")))
    assert time.monotonic() - started >= 0.25 and after_pause.meta.get("playwright") is True
    assert crawler.stats.get_value("boilerstrip/render/after_restart/browser_stalled") == 1
    assert crawler.stats.get_value("boilerstrip/render/after_restart/render_timeout") == 1
    # the exit status counts the pages that ended static, not the renders that were tried again
    assert crawler.stats.get_value("boilerstrip/render/failed/browser_stalled") == 1
    assert crawler.stats.get_value("boilerstrip/render/failed/render_timeout") == 1


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_redis_gone_past_the_outage_limit_stops_the_crawl_with_a_manifest(serve, tmp_path: Path) -> None:
    from boilerstrip.distributed.localredis import LocalRedis

    need_redis_server()
    site = serve(routes=_slow_site())
    out = tmp_path / "o.jsonl"
    # the crawl's own limit, not the default 60 s: the wait is the point, not its length (10 s is five times
    # the client's longest back-off between reconnections, and longer than any answer of a loaded Redis)
    limit_s = 10.0
    with LocalRedis() as server:
        proc = _distributed(site.url, out, server.url, "-s", f'BOILERSTRIP_DISTRIBUTED_PARAMS={{"redis_outage_limit_s": {limit_s}}}')
        tree: set[int] = set()
        try:
            _wait_for_requests(site, proc, 8)
            tree = wait_for_tree(proc.pid, _pool_up(4), timeout_s=150)
            server.process.kill()  # gone, and not coming back
            server.process.wait(timeout=10)
            killed_at = time.monotonic()
            _, stderr = proc.communicate(timeout=limit_s + 240)
            took = time.monotonic() - killed_at
            left = wait_gone(snapshot(tree), GONE_WITHIN_S)
            assert not left, left
        finally:
            _reap(proc, tree)
    assert proc.returncode == 1, stderr[-3000:]
    assert took >= limit_s * 0.9, took  # the outage was ridden out up to the limit
    manifest = json.loads(out.with_name("o.manifest.json").read_text())
    assert manifest["finish_reason"] == "redis_unavailable" and manifest["finished"] is False, manifest
    assert manifest["distributed"]["redis_outage_limit_s"] == limit_s, manifest
    assert "redis_unavailable" in stderr and "Traceback" not in stderr.split("boilerstrip crawl: distributed crawl", 1)[-1]


# -- --resume --redis: a distributed crawl goes on from its frontier in Redis -----------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_resume_of_a_killed_distributed_crawl_goes_on_from_its_redis_frontier(serve, redis_url, tmp_path: Path) -> None:
    pages = 40
    site = serve(routes=_slow_site(pages, delay_s=0.1))
    out = tmp_path / "o.jsonl"
    import redis

    from boilerstrip.distributed.store import CrawlKeys

    client = redis.Redis.from_url(redis_url)
    proc = _distributed(site.url, out, redis_url)
    tree: set[int] = set()
    try:
        _wait_for_requests(site, proc, 1)
        outcomes = CrawlKeys(json.loads((tmp_path / "o.workers" / "crawl.json").read_text())["crawl_id"]).outcomes
        deadline = time.monotonic() + 120
        while client.hlen(outcomes) < 8:  # some pages settled, most not yet
            assert proc.poll() is None and time.monotonic() < deadline, "too few pages settled"
            time.sleep(0.05)
        tree = descendants(proc.pid)
        _kill_and_expect_gone(proc, tree)
    finally:
        _reap(proc, tree)
    before = [entry.path for entry in site.log]
    settled = {url.decode().split(site.url, 1)[1] for url in client.hkeys(outcomes)}
    assert len(settled) < pages  # stopped mid-crawl
    # the resumed runs' coordinators in forked children (their processes are not the point; the workers are processes)
    resumed = run_cli(_distributed_args(site.url, out, redis_url, "--resume"), timeout=300)
    stderr = resumed.stderr
    assert resumed.returncode == 0, stderr[-3000:]
    assert "resuming distributed crawl" in stderr, stderr[-3000:]
    manifest = json.loads(out.with_name("o.manifest.json").read_text())
    assert manifest["finished"] is True and manifest["reconciled"] is True and manifest["resumed"] is True, manifest
    urls = [r["url"] for r in read_jsonl(out)]
    assert sorted(urls) == sorted({site.url + "/"} | {f"{site.url}/p{i}" for i in range(pages)})
    after = [entry.path for entry in site.log][len(before):]
    # what was settled before the kill is not fetched again (only what the killed workers held in flight)
    assert not settled & set(after), sorted(settled & set(after))

    # a finished distributed run resumed again: nothing to do, nothing rewritten
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    requests = len(site.log)
    again = run_cli(_distributed_args(site.url, out, redis_url, "--resume"), timeout=120)
    assert again.returncode == 0 and "nothing to resume" in again.stderr, again.stderr[-3000:]
    assert len(site.log) == requests
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == files


def test_resume_of_a_distributed_crawl_redis_has_lost_says_so_and_writes_nothing(redis_url, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    (tmp_path / "o.workers").mkdir()
    (tmp_path / "o.workers" / "crawl.json").write_text(json.dumps({"crawl_id": "gone0000", "redis": redis_url}))
    proc = subprocess.run([sys.executable, "-m", "boilerstrip", "crawl", "http://127.0.0.1:9/", "-o", str(out),
                           "--redis", redis_url, "--resume"], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "crawl gone0000 is not in this Redis any more" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists() and not out.with_name("o.manifest.json").exists()


# -- a remote worker whose coordinator died stops (its liveness key expired) ------------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_remote_worker_of_a_dead_coordinator_stops_with_a_clear_message(serve, redis_url, tmp_path: Path) -> None:
    """The worker sees only Redis: a coordinator that stops refreshing its liveness key (killed, frozen, cut
    off) is one whose key expires. Here the test is that coordinator, with a 3 s key."""
    import redis

    from boilerstrip.distributed.coordinator import CURRENT_KEY
    from boilerstrip.distributed.store import CrawlStore

    site = serve(routes=_slow_site())
    client = redis.Redis.from_url(redis_url)
    store = CrawlStore(client, "deadcoord01")
    client.set(store.keys.config, json.dumps({"urls": [site.url + "/"], "no_sitemaps": True,
                                              "settings": ["CONCURRENT_REQUESTS_PER_DOMAIN=1", "DOWNLOAD_DELAY=0"]}))
    client.set(CURRENT_KEY, "deadcoord01")
    ttl_s = 3.0
    store.coordinator_alive(ttl_s)
    store.set_go()
    worker = subprocess.Popen([sys.executable, "-m", "boilerstrip", "worker", "--redis", redis_url], cwd=ROOT,
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tree: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len(site.log) < 5:  # crawling, with a live coordinator
            assert worker.poll() is None, worker.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the worker made too few requests"
            store.coordinator_alive(ttl_s)
            time.sleep(0.2)
        tree = descendants(worker.pid)
        died_at = time.monotonic()  # the coordinator stops refreshing its key here
        _, stderr = worker.communicate(timeout=(ttl_s + 1) * 10 + 60)
        took = time.monotonic() - died_at
        left = wait_gone(snapshot(tree), GONE_WITHIN_S)
        assert not left, left
    finally:
        _reap(worker, tree)
    assert worker.returncode == 1, stderr[-3000:]
    assert "the coordinator of crawl deadcoord01 is gone" in stderr, stderr[-3000:]
    assert f"boilerstrip worker: joined crawl deadcoord01 ({site.url}/) as " in stderr, stderr[-3000:]
    assert took >= ttl_s * 0.5, took  # not before the key could expire
    requests = len(site.log)
    time.sleep(2)
    assert len(site.log) == requests  # it crawls no more
    assert client.zcard(store.keys.queue) + sum(client.zcard(k) for k in client.scan_iter(store.keys.inflight("*"))) > 0


def test_a_worker_does_not_join_a_crawl_whose_coordinator_is_gone(redis_url) -> None:
    """A coordinator killed before its crawl was done leaves the crawl in Redis (for --resume), but its
    liveness key expires: a worker started then waits for a live crawl instead of joining a dead one."""
    import redis

    from boilerstrip.distributed.coordinator import CURRENT_KEY
    from boilerstrip.distributed.store import CrawlStore

    client = redis.Redis.from_url(redis_url)
    store = CrawlStore(client, "orphan0001")
    client.set(store.keys.config, json.dumps({"urls": ["http://127.0.0.1:9/"]}))
    client.set(CURRENT_KEY, "orphan0001")
    proc = subprocess.run([sys.executable, "-m", "boilerstrip", "worker", "--redis", redis_url, "--wait", "1"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "no crawl with a live coordinator to join" in proc.stderr and "Traceback" not in proc.stderr
    # the wait is said at once, not only when it ends
    assert proc.stderr.startswith(f"boilerstrip worker: waiting up to 1 s for a crawl on {redis_url} "), proc.stderr
    assert not client.scard(store.keys.workers)  # it never joined
