"""Distributed crawls on scrapy-redis, end to end: real redis-server, real HTTP server, real worker processes.

- same output: 1 worker, 2 workers and a single-process crawl give the same URLs, texts and outcomes;
- worker killed: kill -9 of a worker holding requests mid-crawl; the others finish, its requests are
  requeued, and every admitted URL is accounted for (and every page is in the output);
- politeness: with a delay and one request per host, the server never sees two requests closer than the delay
  although several workers share the host;
- the pieces on the real server: the leased queue (pop into a lease, push with the dupefilter's check in
  the same step, a hop replacing its lease, ack, requeue of a dead consumer, leave, pending), the crawl
  store (admission within the page budget, settle once, the "done" snapshot), the host lease.
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
import redis
from _crawlsite import FAST, page
from _incrawl import run_cli
from conftest import ROOT, read_jsonl

from scrapy import Request, Spider
from scrapy_redis.queue import PriorityQueue

from boilerstrip.demo.server import Reply, SiteServer
from boilerstrip.distributed.queue import LEASE_META, LeasedPriorityQueue, Pending, pending, requeue_expired
from boilerstrip.distributed.store import CrawlKeys, CrawlStore

pytestmark = pytest.mark.slow

#: the site's template: the same nav and footer on every page (cross-page removal must see all pages)
_FOOTER = "Copyright Example Docs. All rights reserved. Contact the documentation team for corrections."


def _site(pages: int = 24, delay_s: float = 0.0) -> dict:
    links = [f"/doc/{i}" for i in range(1, pages + 1)]
    routes: dict = {}
    for i, href in enumerate(["/"] + links):
        body = (f"Section {i} explains topic number {i} in plain words. " * 6) + f" The end of part {i}."
        nav = ["/"] + links[:6] + ([links[(i * 7) % pages], links[(i * 11) % pages]] if i else links)
        reply = page(f"Page {i}", nav, body=body + f"</p><footer>{_FOOTER}</footer><p>")
        routes[href] = Reply(reply.status, reply.body, reply.headers, delay_s=delay_s)
    routes["/robots.txt"] = Reply(200, b"User-agent: *\nAllow: /\n", (("Content-Type", "text/plain"),), delay_s=delay_s)
    return routes


def _crawl(url: str, out: Path, *extra: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return run_cli(["crawl", url, "-o", str(out), *FAST, *extra], timeout=timeout)


def _ledger(out: Path) -> dict[str, str]:
    lines = read_jsonl(out.with_name(out.name.replace(".jsonl", ".ledger.jsonl")))
    return {e["url"]: f"{e['outcome']}:{e['reason']}" for e in lines}


def _manifest(out: Path) -> dict:
    return json.loads(out.with_name(out.name.replace(".jsonl", ".manifest.json")).read_text())


def test_two_workers_give_the_same_urls_texts_and_outcomes_as_one(redis_url, tmp_path) -> None:
    slow = ("-s", "CONCURRENT_REQUESTS=2")  # with 0.1 s per page, both workers get a share
    with SiteServer(routes=_site(delay_s=0.1)) as site:
        single = _crawl(site.url + "/", tmp_path / "single.jsonl")
        one = _crawl(site.url + "/", tmp_path / "one.jsonl", "--redis", redis_url, "--workers", "1", *slow)
        two = _crawl(site.url + "/", tmp_path / "two.jsonl", "--redis", redis_url, "--workers", "2", *slow)
    for proc in (single, one, two):
        assert proc.returncode == 0, proc.stderr[-3000:]
    texts = {name: {r["url"]: r["text"] for r in read_jsonl(tmp_path / f"{name}.jsonl")} for name in ("single", "one", "two")}
    assert len(texts["single"]) == 25
    assert texts["one"] == texts["single"] and texts["two"] == texts["single"]
    assert all(_FOOTER not in text for text in texts["two"].values())  # the template was removed across workers
    assert _ledger(tmp_path / "two.jsonl") == _ledger(tmp_path / "single.jsonl") == _ledger(tmp_path / "one.jsonl")
    manifest = _manifest(tmp_path / "two.jsonl")
    assert manifest["reconciled"] and manifest["counts"]["pending"] == 0
    assert len(manifest["distributed"]["items_by_worker"]) == 2, manifest["distributed"]  # both workers worked
    report = json.loads((tmp_path / "two.report" / "template-report.json").read_text())
    assert report["pages"] == 25
    # nothing of the crawl is left in Redis but the shared state
    assert not list(redis.Redis.from_url(redis_url).scan_iter(match="boilerstrip:crawl:*"))


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_a_worker_killed_with_sigkill_loses_nothing(redis_url, tmp_path) -> None:
    client = redis.Redis.from_url(redis_url)
    out = tmp_path / "killed.jsonl"
    pages = 40
    with SiteServer(routes=_site(pages=pages, delay_s=0.15)) as site:
        cmd = [sys.executable, "-m", "boilerstrip", "crawl", site.url + "/", "-o", str(out), *FAST,
               "--redis", redis_url, "--workers", "3", "-s", "CONCURRENT_REQUESTS=2",
               "-s", 'BOILERSTRIP_DISTRIBUTED_PARAMS={"heartbeat_ttl_s": 5}']
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline and proc.poll() is None:
            if len(site.log) >= 8:  # mid-crawl: a few pages done, most to go
                keys = CrawlKeys((client.get("boilerstrip:crawl:current") or b"").decode())
                for raw in client.smembers(keys.workers):
                    worker = raw.decode()
                    beat = client.get(keys.heartbeat(worker))
                    if beat and client.zcard(keys.inflight(worker)) > 0:
                        victim = json.loads(beat)["pid"]
                        os.kill(victim, signal.SIGKILL)
                        break
            time.sleep(0.02)
        assert victim is not None, "no worker held a request mid-crawl"
        assert victim in _children(proc.pid) or True  # (already reaped or not: it was ours)
        stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr[-3000:]
    manifest = _manifest(out)
    distributed = manifest["distributed"]
    assert distributed["dead_workers"] == 1 and distributed["requeued"] >= 1, distributed
    assert sorted(distributed["worker_exit_codes"]).count(-signal.SIGKILL) == 1
    assert manifest["reconciled"] and manifest["counts"]["pending"] == 0, manifest["unsettled"]
    ledger = _ledger(out)
    expected = {site.url + "/"} | {f"{site.url}/doc/{i}" for i in range(1, pages + 1)}
    assert set(ledger) == expected and all(v == "item:" for v in ledger.values()), ledger
    assert {r["url"] for r in read_jsonl(out)} == expected  # the killed worker's pages were crawled again


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_sigterm_stops_the_coordinator_like_a_ctrl_c(redis_url, tmp_path) -> None:
    """``kill`` (SIGTERM) of a distributed crawl's command: its local workers stop, the manifest says
    ``shutdown`` (not finished), the exit status is 1, no worker is left running, and the same command with
    ``--resume`` finishes the crawl with every page. Before, SIGTERM killed the coordinator where it stood,
    with no manifest."""
    out = tmp_path / "stopped.jsonl"
    pages = 40
    with SiteServer(routes=_site(pages=pages, delay_s=0.15)) as site:
        cmd = [sys.executable, "-m", "boilerstrip", "crawl", site.url + "/", "-o", str(out), *FAST,
               "--redis", redis_url, "--workers", "2", "-s", "CONCURRENT_REQUESTS=2"]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(site.log) < 8 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)  # mid-crawl: a few pages done, most to go
        workers = _children(proc.pid)
        assert len(site.log) >= 8 and workers, "the crawl did not get going"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 1, stderr[-3000:]
        manifest = _manifest(out)
        assert manifest["finish_reason"] == "shutdown" and manifest["finished"] is False, manifest
        assert "--resume" in stderr
        assert not [pid for pid in workers if _alive(pid)]
        resumed = _crawl(site.url + "/", out, "--redis", redis_url, "--workers", "2", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    expected = {site.url + "/"} | {f"{site.url}/doc/{i}" for i in range(1, pages + 1)}
    assert {r["url"] for r in read_jsonl(out)} == expected
    assert _manifest(out)["finished"] is True


@pytest.mark.parametrize("lease", [True, False], ids=["lease", "no_lease_control"])
def test_workers_sharing_a_host_keep_its_delay(redis_url, tmp_path, lease) -> None:
    """With the shared lease the server never sees two requests closer than the delay; without it (the
    control: each worker keeps only its own delay) it does, so the measurement can fail."""
    delay = 0.25
    out = tmp_path / "polite.jsonl"
    with SiteServer(routes=_site(pages=14, delay_s=0.05)) as site:
        proc = _crawl(site.url + "/", out, "--redis", redis_url, "--workers", "3",
                      "-s", f"DOWNLOAD_DELAY={delay}", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
                      "-s", "RANDOMIZE_DOWNLOAD_DELAY=false", "--no-sitemaps",
                      "-s", "CONCURRENT_REQUESTS=1",  # each worker holds one request: all three share the host
                      "-s", f'BOILERSTRIP_DISTRIBUTED_PARAMS={{"lease_enabled": {str(lease).lower()}}}')
        arrivals = sorted(entry.at for entry in site.log)
        robots_fetches = len(site.hits("/robots.txt"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert robots_fetches == 1  # one fetch for the whole crawl, shared through Redis
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert len(arrivals) >= 15 and len(_manifest(out)["distributed"]["items_by_worker"]) >= 2
    if lease:
        assert min(gaps) >= delay, (min(gaps), gaps)
    else:
        assert min(gaps) < delay, (min(gaps), gaps)


def test_a_distributed_crawl_that_reaches_no_start_url_exits_1_like_one_process(redis_url, tmp_path) -> None:
    # the coordinator exited 0 with nothing written (the one-process crawl's rule was not applied to it)
    routes = _site(pages=2)
    routes["/robots.txt"] = Reply(200, b"User-agent: *\nDisallow: /\n", (("Content-Type", "text/plain"),))
    out = tmp_path / "none.jsonl"
    with SiteServer(routes=routes) as site:
        proc = _crawl(site.url + "/", out, "--redis", redis_url, "--no-sitemaps")
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1] == (
        "boilerstrip crawl: every start URL is disallowed by its site's robots.txt (boilerstrip obeys it), nothing "
        f"written: {site.url}/ (filtered:robots_disallowed)")


def test_the_page_budget_is_shared_by_the_workers(redis_url, tmp_path) -> None:
    out = tmp_path / "budget.jsonl"
    with SiteServer(routes=_site(pages=30, delay_s=0.05)) as site:
        proc = _crawl(site.url + "/", out, "--redis", redis_url, "--workers", "2", "--max-pages", "9",
                      "-s", "CONCURRENT_REQUESTS=2", "--no-sitemaps")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ledger = _ledger(out)
    assert sum(v == "item:" for v in ledger.values()) == 9 and len(read_jsonl(out)) == 9
    assert set(ledger.values()) == {"item:", "filtered:max_pages"} and len(ledger) == 31
    assert _manifest(out)["reconciled"]


def test_a_distributed_recrawl_cut_by_its_page_budget_marks_nothing_removed(redis_url, tmp_path) -> None:
    # the coordinator's finishing pass had none of the workers' stats, so it never knew the crawl was cut: a
    # recrawl with a smaller --max-pages marked every page it did not reach "removed" (one process: unseen)
    out = tmp_path / "cut.jsonl"
    with SiteServer(routes=_site(pages=12)) as site:
        first = _crawl(site.url + "/", out, "--redis", redis_url, "--no-sitemaps")
        assert first.returncode == 0, first.stderr[-3000:]
        second = _crawl(site.url + "/", out, "--redis", redis_url, "--no-sitemaps", "--max-pages", "4")
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.stderr.strip().splitlines()[-1].endswith("0 removed, 9 unseen (crawl cut by max_pages: nothing marked removed)"), \
        second.stderr[-3000:]
    tombstones = [r for r in read_jsonl(out) if r.get("change") in ("removed", "unseen")]
    assert len(tombstones) == 9 and {r["change"] for r in tombstones} == {"unseen"}
    assert all(r["reason"].startswith("crawl_cut:max_pages") for r in tombstones), tombstones[:2]


def test_a_hosts_page_budget_is_one_budget_for_all_workers(redis_url, tmp_path) -> None:
    """The traps' max_pages_per_host (BOILERSTRIP_TRAPS_PARAMS) counts in Redis: 2 workers admit 7 pages of the host, not 14."""
    out = tmp_path / "traps.jsonl"
    with SiteServer(routes=_site(pages=30, delay_s=0.05)) as site:
        proc = _crawl(site.url + "/", out, "--redis", redis_url, "--workers", "2", "-s",
                      'BOILERSTRIP_TRAPS_PARAMS={"max_pages_per_host": 7}', "-s", "CONCURRENT_REQUESTS=2", "--no-sitemaps")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ledger = _ledger(out)
    # 7 followed links, plus the start page unless another worker's link to it took one of the 7; with a
    # budget per worker it would be up to 15
    items = sum(v == "item:" for v in ledger.values())
    assert 7 <= items <= 8 and len(read_jsonl(out)) == items
    assert set(ledger.values()) == {"item:", "filtered:host_budget"}
    assert _manifest(out)["reconciled"]


def test_shared_trap_counters_check_and_count_each_link_once(redis_url) -> None:
    from boilerstrip.distributed.traps import SharedTrapState
    from boilerstrip.safety.traps import TrapParams

    params = TrapParams(max_pages_per_host=3, max_urls_per_pattern=1, max_depth=5)
    client = redis.Redis.from_url(redis_url)
    a, b = (SharedTrapState(params, client, CrawlKeys("t1")) for _ in range(2))
    assert a.check_and_admit("http://h.test/1", 1) is None
    assert b.check_and_admit("http://h.test/1", 1) is None  # the same URL from another worker: counted once
    assert b.check_and_admit("http://h.test/2", 1) is None
    assert a.check_and_admit("http://h.test/2024/05/", 1) is None  # date-like: its pattern's one URL
    assert b.check_and_admit("http://h.test/3", 1) == "host_budget"
    assert a.check_and_admit("http://other.test/2024/06/", 1) is None
    assert a.check_and_admit("http://other.test/2024/07/", 1) == "pattern_budget"
    assert a.check_and_admit("http://h.test/4", 9) == "max_depth"  # local rules first, nothing counted
    other = SharedTrapState(params, client, CrawlKeys("t2"))  # another crawl's counters
    assert other.check_and_admit("http://h.test/5", 1) is None


# -- the frontier's pieces on the real server ----------------------------------------------------------------
def _poll(read, until, timeout_s: float = 30):
    """read() until ``until(result)`` holds or the deadline passes; the last result."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = read()
        if until(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def test_the_leased_queue_pops_acks_requeues_and_knows_when_it_is_done(redis_url) -> None:
    client = redis.Redis.from_url(redis_url)
    spider = Spider(name="t")
    a, b = (LeasedPriorityQueue(client, spider, "q", consumer=name) for name in ("a", "b"))
    a.beat(ttl_s=30)
    b.beat(ttl_s=0.5)
    assert a.push(Request("http://s/1"), fingerprint="f1", seen_key="seen")
    assert not a.push(Request("http://s/1"), fingerprint="f1", seen_key="seen")  # the dupefilter's set, same step
    assert a.push(Request("http://s/2", priority=-1), fingerprint="f2", seen_key="seen")  # score -priority: later
    assert pending(client, "q") == Pending(queued=2, leased=0, live=("a", "b"), dead=())
    one, two = b.pop(), b.pop()
    assert (one.url, two.url) == ("http://s/1", "http://s/2") and b.pop() is None
    assert (pending(client, "q").queued, pending(client, "q").leased) == (0, 2)
    assert b.ack(one.meta[LEASE_META]) == 1 and not b.ack(one.meta[LEASE_META])
    # b dies holding the other: once its heartbeat has run out, its lease goes back with its score
    moved = _poll(lambda: requeue_expired(client, "q"), until=bool)
    assert moved == {"b": 1} and pending(client, "q") == Pending(queued=1, leased=0, live=("a",), dead=())
    again = a.pop()
    assert again.url == "http://s/2" and again.priority == -1
    # a redirect hop (Scrapy copies meta) replaces the lease it carries in the same step
    hop = again.replace(url="http://s/2b")
    assert a.push(hop, fingerprint="f2b", seen_key="seen") and not a.held
    assert (pending(client, "q").queued, pending(client, "q").leased) == (1, 0)
    assert a.ack(a.pop().meta[LEASE_META]) == 1
    # a consumer that stops gives back what it holds
    assert a.push(Request("http://s/3")) and a.pop().url == "http://s/3"
    assert a.leave() == 1 and pending(client, "q") == Pending(queued=1, leased=0, live=(), dead=())
    # scrapy-redis's own PriorityQueue reads what this queue pushed (same key, score and serialization)
    assert PriorityQueue(client, spider, "q").pop().url == "http://s/3"
    # a request nobody can decode is dropped with an error in the log, not handed out again and again
    client.zadd("q", {b"not a pickled request": 0})
    assert a.pop() is None and pending(client, "q").empty


def test_the_crawl_store_admits_within_the_budget_settles_once_and_says_done(redis_url) -> None:
    client = redis.Redis.from_url(redis_url)
    store = CrawlStore(client, "t1")
    # the page budget counts admitted URLs across workers: a new URL over it is refused, a hop is not
    assert store.admit("a", "http://s/1", budget=2) and store.admit("b", "http://s/2", budget=2)
    assert not store.admit("b", "http://s/3", budget=2) and store.admit("b", "http://s/1", budget=2)
    assert client.hgetall(store.keys.admitted) == {b"http://s/1": b"a", b"http://s/2": b"b"}
    assert store.settle("b", "http://s/1", "item", line=b'{"url": "http://s/1"}\n')
    assert not store.settle("a", "http://s/1", "failed", "timeout")  # the first settlement stands
    assert store.settle("b", "http://s/3", "filtered", "max_pages", admitted=False)
    # done: nothing queued or leased, and every live worker past its start requests
    spider = Spider(name="t")
    a = LeasedPriorityQueue(client, spider, store.keys.queue, consumer="a")
    b = LeasedPriorityQueue(client, spider, store.keys.queue, consumer="b")
    a.beat(ttl_s=30)
    snap = store.snapshot()
    assert (snap.live, snap.starting, snap.done) == (1, 1, False)
    store.mark_started("a")
    assert store.snapshot().done
    # a URL's outcome and the ack of the request held for it commit in one transaction
    assert a.push(Request("http://s/4")) and not store.snapshot().done
    lease = a.pop().meta[LEASE_META]
    assert store.settle("a", "http://s/4", "item", line=b"{}\n", also=lambda pipe: a.ack(lease, pipeline=pipe))
    assert client.zcard(store.keys.inflight("a")) == 0 and not a.held and store.snapshot().done
    b.beat(ttl_s=0.5)
    assert b.push(Request("http://s/2")) and b.pop() is not None and not store.snapshot().done
    assert _poll(store.requeue_dead, until=bool) == 1  # b died holding it
    assert store.snapshot().queued == 1
    assert store.counters() == {"settled_again": 1, "requeued": 1, "presumed_dead": 1, "dead_workers": 1}
    assert store.beat("b") is False  # no coordinator: a worker would stop
    store.coordinator_alive(30)
    b.beat(ttl_s=30)
    assert store.beat("b") is True  # a worker taken for dead that beats again joins again
    assert store.counters()["dead_workers"] == 0 and store.snapshot().live == 2
    store.clear()
    assert not list(client.scan_iter(match="boilerstrip:crawl:t1:*"))


def test_redis_server_is_required_under_ci(monkeypatch) -> None:
    """Without redis-server these tests fail under CI=true (CI installs it) and are skipped elsewhere."""
    import _redis

    monkeypatch.setattr(_redis, "redis_server_path", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        _redis.need_redis_server()
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        _redis.need_redis_server()


def test_a_host_lease_holds_delay_and_concurrency_across_workers(redis_url) -> None:
    from boilerstrip.distributed.lease import HostLeases

    leases = HostLeases(redis.Redis.from_url(redis_url), CrawlKeys("lease"))
    # concurrency 2, no delay: a third lease waits (-1) until one is given back
    assert leases.try_acquire("h", "a", 2, ttl_s=30, delay_s=0) == 0
    assert leases.try_acquire("h", "b", 2, ttl_s=30, delay_s=0) == 0
    assert leases.try_acquire("h", "c", 2, ttl_s=30, delay_s=0) == -1
    assert leases.release("h", "a", delay_s=0) and not leases.release("h", "a", delay_s=0)
    assert leases.try_acquire("h", "c", 2, ttl_s=30, delay_s=0) == 0
    # delay 60 s: the next lease is 60 s after the grant, and 60 s after the response came back (the
    # windows below are 10 s wide for calls a millisecond apart)
    assert leases.try_acquire("d", "x", 1, ttl_s=120, delay_s=60) == 0
    wait_ms = leases.try_acquire("d", "y", 1, ttl_s=120, delay_s=60)
    assert 50_000 < wait_ms <= 60_000
    leases.release("d", "x", delay_s=60)
    assert leases.try_acquire("d", "y", 1, ttl_s=120, delay_s=60) > 50_000  # end to start
    # once the delay has passed, a lease still held blocks on concurrency (-1), not on the delay
    assert leases.try_acquire("f", "x", 1, ttl_s=120, delay_s=0.2) == 0
    assert _poll_lease(leases, "f", "y", delay_s=0.2, until=lambda got: got <= 0) == -1
    # a lease of a killed worker expires
    assert leases.try_acquire("e", "dead", 1, ttl_s=3, delay_s=0) == 0
    assert leases.try_acquire("e", "next", 1, ttl_s=30, delay_s=0) == -1
    assert _poll_lease(leases, "e", "next", delay_s=0, until=lambda got: got == 0) == 0


def _poll_lease(leases, host: str, worker: str, delay_s: float, until, timeout_s: float = 30) -> int:
    """try_acquire until ``until(result)`` holds or the deadline passes; the last result."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = leases.try_acquire(host, worker, 1, ttl_s=30, delay_s=delay_s)
        if until(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def test_a_crawls_redis_outage_limit_reaches_every_client_of_its_workers() -> None:
    """redis_outage_limit_s of BOILERSTRIP_DISTRIBUTED_PARAMS (set on the crawl command) is the limit of the
    worker's scrapy-redis client and of its own clients (the end-to-end test sees the coordinator's)."""
    from boilerstrip.commands.worker import worker_run_settings
    from boilerstrip.config import params_from_settings
    from boilerstrip.distributed.connection import OUTAGE, crawl_client
    from boilerstrip.distributed.params import DistributedParams

    config = {"urls": ["http://127.0.0.1:9/"], "settings": ['BOILERSTRIP_DISTRIBUTED_PARAMS={"redis_outage_limit_s": 5}']}
    settings, _ = worker_run_settings(config, "redis://127.0.0.1:9/0", "c1", "w1")
    options = settings["REDIS_PARAMS"]
    assert options["socket_timeout"] == 5 and options["retry"].limit_s == 5
    params = params_from_settings(settings, "distributed", DistributedParams)
    assert params.redis_outage_limit_s == 5 and params.crawl_id == "c1"
    assert crawl_client(params).connection_pool.connection_kwargs["socket_timeout"] == 5  # (connects lazily)
    default, _ = worker_run_settings({"urls": ["http://127.0.0.1:9/"]}, "redis://127.0.0.1:9/0", "c1", "w1")
    assert default["REDIS_PARAMS"]["socket_timeout"] == OUTAGE.limit_s == 60


def test_a_host_that_stops_answering_ends_a_distributed_crawl_with_exit_6(redis_url, tmp_path) -> None:
    # each worker's politeness middleware gives the host up (host_down_after_s, 5 s in the test profile) and
    # says so in Redis as it leaves; the coordinator says so, as a one-process crawl does
    out = tmp_path / "down.jsonl"
    routes = _site(pages=30)
    for i in range(1, 31):
        routes[f"/doc/{i}"] = Reply(503, b"upstream down", (("Content-Type", "text/plain"),))
    with SiteServer(routes=routes) as site:
        # one request to the host at a time (the leases), four retries a page: the failures last well past 5 s
        proc = _crawl(site.url + "/", out, "--redis", redis_url, "--workers", "2", "--no-sitemaps", "-s",
                      "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", 'BOILERSTRIP_POLITENESS_PARAMS={"max_retries": 4}',
                      timeout=600)
    assert proc.returncode == 6, proc.stderr[-3000:]
    ledger = _ledger(out)
    assert ledger[site.url + "/"] == "item:" and len(read_jsonl(out)) == 1
    failed = [v for v in ledger.values() if v != "item:"]
    # (every page may have settled with the 503 in hand: the give-up then only spares the retries)
    assert len(failed) == 30 and set(failed) <= {"failed:host_down", "failed:http_503"}
    down = failed.count("failed:host_down")
    assert "1 host(s) stopped answering and were given up: 127.0.0.1 (no good answer for " in proc.stderr
    assert f"; {down} page(s) failed as host_down; once the site answers again, run the same command again" in proc.stderr
    manifest = _manifest(out)
    assert manifest["reconciled"] and list(manifest["hosts_down"]) == ["127.0.0.1"]
