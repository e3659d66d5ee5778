"""Crawl-delay, Retry-After and per-host back-off, measured on the server's request timestamps."""

from __future__ import annotations

import contextlib
import itertools
import socketserver
import threading
from collections.abc import Callable, Iterator

from _crawlsite import FAST, page, page_hits, robots, small_site
from conftest import Reply, run_crawl
from test_crawl_demo import reasons


@contextlib.contextmanager
def _site_without_answers(pages: list[str], on_page: Callable[[str, object], None]) -> Iterator[str]:
    """A loopback site (its URL yielded) whose home page links ``pages``; robots.txt, the sitemap and
    tdmrep.json are 404, and every other request gets ``on_page(path, rfile)`` instead of an answer: the
    connection closes when it returns (a site whose connections drop, or one that never answers)."""
    links = "".join(f'<li><a href="{path}">{path}</a></li>' for path in pages)
    home = (f"<html><head><title>Home</title></head><body><main><h1>Home</h1><p>{'A page of text. ' * 30}</p>"
            f"<ul>{links}</ul></main></body></html>").encode()

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline().decode("latin-1")
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # the headers
            path = line.split(" ")[1] if " " in line else ""
            if path == "/":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                                 + f"Content-Length: {len(home)}\r\n\r\n".encode() + home)
            elif path in ("/robots.txt", "/sitemap.xml", "/.well-known/tdmrep.json"):
                self.wfile.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            else:
                on_page(path, self.rfile)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _held_open(rfile) -> None:
    """No answer: wait until the client closes the connection."""
    try:
        rfile.read(1)
    except OSError:
        pass


def gaps(entries) -> list[float]:
    times = sorted(entry.at for entry in entries)
    return [b - a for a, b in zip(times, times[1:])]


def test_crawl_delay_is_respected_even_with_autothrottle(serve, tmp_path) -> None:
    server = serve(routes=small_site(n=4, robots_reply=robots("User-agent: *\nCrawl-delay: 1\n")))
    # AutoThrottle on with tiny delays and 8 connections: only Crawl-delay keeps requests 1 s apart
    proc, records = run_crawl(
        server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
        settings={"AUTOTHROTTLE_ENABLED": "true", "AUTOTHROTTLE_START_DELAY": "0", "DOWNLOAD_DELAY": "0"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == 5
    hits = page_hits(server, exclude=("/robots.txt",))
    assert len(hits) == 7  # 5 pages + /sitemap.xml + /.well-known/tdmrep.json, all through the same host slot
    # Scrapy spaces the *starts* of requests; the server sees arrivals, and the first request pays for the
    # TCP connect (later ones reuse the connection), so allow 0.15 s of skew. Without the floor,
    # AutoThrottle would bring the gaps down to ~0.5 s, then ~0.25 s.
    assert min(gaps(hits)) >= 0.85, gaps(hits)
    assert sum(gaps(hits)) >= 0.95 * len(gaps(hits)), gaps(hits)


def test_crawl_delay_over_the_cap_skips_the_host(serve, tmp_path) -> None:
    server = serve(routes=small_site(n=2, robots_reply=robots("User-agent: *\nCrawl-delay: 120\n")))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
                              settings={"BOILERSTRIP_POLITENESS_PARAMS": '{"max_crawl_delay_s": 30}'})
    assert records == []
    assert page_hits(server) == []
    assert reasons(proc.stderr)["crawl_delay_too_long"] == 1


def test_retry_after_pauses_the_host(serve, tmp_path) -> None:
    answers = itertools.chain(
        [Reply(429, b"slow down", (("Retry-After", "2"), ("Content-Type", "text/plain")))],
        itertools.repeat(page("p1", ["/"])),
    )
    lock = threading.Lock()

    def p1(path, headers):
        with lock:
            return next(answers)

    server = serve(routes=small_site(n=3, robots_reply=None, extra={"/p1": p1}))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
                              settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 1})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == 4
    first_429 = server.hits("/p1")[0].at
    later = [e.at for e in server.log if e.at > first_429]
    assert later, "nothing after the 429"
    # the whole host waited: no request at all in the 2 s after the 429
    assert min(later) - first_429 >= 1.9, [round(t - first_429, 2) for t in later]
    assert len(server.hits("/p1")) == 2


def test_a_stop_while_a_host_is_paused_lets_its_pages_go_at_once(serve, tmp_path) -> None:
    # SIGTERM while a host said "Retry-After: 600" waited up to the capped pause (300 s) with nothing said;
    # then it named the pause and a second signal was needed. Now the pages the pause holds (in the
    # middleware, and queued in the host's download slot) are let go, not settled: the stop ends at once
    import signal
    import subprocess
    import sys
    import time

    from boilerstrip.ledger import read_ledger
    from boilerstrip.state import crawl_layout
    from conftest import ROOT

    slow = Reply(429, b"slow down", (("Retry-After", "600"), ("Content-Type", "text/plain")))
    server = serve(routes=small_site(n=3, robots_reply=None, extra={"/p1": slow, "/p2": slow, "/p3": slow}))
    out = tmp_path / "o.jsonl"
    log = tmp_path / "crawl.log"
    with open(log, "wb") as handle:
        proc = subprocess.Popen([sys.executable, "-m", "boilerstrip", "crawl", server.url + "/", "-o",
                                 str(out), *FAST, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
                                 "-s", 'BOILERSTRIP_POLITENESS_PARAMS={"max_retry_after_s": 600}'],  # the site's 600 s
                                cwd=ROOT, stdout=handle, stderr=handle)
        try:
            deadline = time.monotonic() + 120
            while b"asked to wait" not in log.read_bytes() and time.monotonic() < deadline:
                time.sleep(0.05)  # a 429 came (on the progress line, at its next tick): the host is paused
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=120)  # the pause lasts 600 s
        finally:
            proc.kill()
    shown = log.read_text(encoding="utf-8", errors="replace")
    assert "received SIGTERM: stopping the crawl" in shown and "send it again to stop at once" in shown, shown
    assert code == 1, shown[-3000:]
    assert "stopped early (shutdown); the same command with --resume goes on from where it stopped" in shown
    ledger = {entry["url"].rsplit("/", 1)[1]: entry["outcome"] for entry in read_ledger(crawl_layout(out).ledger)}
    # the home page written; the paged ones not settled (not failed:http_429): --resume asks for them again
    assert ledger == {"": "item", "p1": "pending", "p2": "pending", "p3": "pending"}, ledger


def test_retry_after_http_date_and_give_up_recorded(serve, tmp_path) -> None:
    unavailable = Reply(503, b"maintenance", (("Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT"),))
    server = serve(routes=small_site(n=2, robots_reply=None, extra={"/p2": unavailable}))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
                              settings={"BOILERSTRIP_POLITENESS_PARAMS": '{"max_retries": 2}'})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {r["url"].rsplit("/", 1)[1] for r in records} == {"", "p1"}
    assert len(server.hits("/p2")) == 3  # first try + 2 retries, then the give-up
    assert reasons(proc.stderr, "failed") == {"http_503": 1}


def test_backoff_without_retry_after_grows(serve, tmp_path) -> None:
    server = serve(routes=small_site(n=1, robots_reply=None, extra={"/p1": Reply(429, b"no")}))
    proc, records = run_crawl(
        server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
        settings={"BOILERSTRIP_POLITENESS_PARAMS": '{"retry_backoff_base_s": 0.4, "max_retries": 3, "max_backoff_s": 10}'},
    )
    hits = server.hits("/p1")
    assert len(hits) == 4
    waits = gaps(hits)  # 0.4, 0.8, 1.6 s (consecutive 429s on the host)
    assert waits[0] >= 0.35 and waits[1] >= 0.75 and waits[2] >= 1.5, waits
    assert reasons(proc.stderr, "failed") == {"http_429": 1}


def test_a_host_that_stops_answering_is_given_up_and_the_crawl_ends_saying_so(serve, tmp_path) -> None:
    # a site that went down mid-crawl held the crawl for days (each page waited out the capped back-off three
    # times); now, after host_down_after_s (5 s in the test profile) of nothing but failures, its pages fail
    # at once as host_down, the crawl ends with exit 6 and says what to do
    import json

    down = Reply(503, b"upstream down", (("Content-Type", "text/plain"),))
    pages = 30
    server = serve(routes=small_site(n=pages, robots_reply=None, extra={f"/p{i}": down for i in range(1, pages + 1)}))
    out = tmp_path / "o.jsonl"
    proc, records = run_crawl(server.url + "/", out=out, args=FAST, timeout=600)
    assert proc.returncode == 6, proc.stderr[-3000:]
    assert [r["url"] for r in records] == [server.url + "/"]
    failed = reasons(proc.stderr, "failed")
    assert sum(failed.values()) == pages and set(failed) <= {"host_down", "http_503"} and failed["host_down"] >= 1, failed
    assert "1 host(s) stopped answering and were given up: 127.0.0.1 (no good answer for " in proc.stderr
    assert f"{failed['host_down']} page(s) failed as host_down; once the site answers again, run the same command again" in proc.stderr
    assert "(crawl cut by host_down: nothing marked removed)" in proc.stderr
    manifest = json.loads((tmp_path / "o.manifest.json").read_text())
    assert manifest["reconciled"] is True and manifest["reasons"]["failed:host_down"] == failed["host_down"]
    assert list(manifest["hosts_down"]) == ["127.0.0.1"] and "failures in a row, the last http_503" in manifest["hosts_down"]["127.0.0.1"]
    # the give-up came long before every page's retries would have: at most 3 tries of each page
    assert len(page_hits(server)) < 1 + 3 * pages
    # --resume has nothing to resume (the run finished) and says what fetches the pages; the same command
    # again, once the site answers, fetches them
    proc, _ = run_crawl(server.url + "/", out=out, args=[*FAST, "--resume"])
    assert proc.returncode == 6, proc.stderr[-3000:]
    assert f"({failed['host_down']} page(s) failed as host_down): run without --resume to fetch them" in proc.stderr
    for i in range(1, pages + 1):
        server.routes[f"/p{i}"] = page(f"p{i}", ["/"])
    proc, records = run_crawl(server.url + "/", out=out, args=FAST, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(records) == 1 + pages and reasons(proc.stderr, "failed") == {}


def test_a_short_outage_is_waited_out(serve, tmp_path) -> None:
    # every page answers 503 for the first 0.5 s after the first one did (a restart): a tenth of the 5 s the
    # test profile gives a host before it is given up, so every page comes through
    import time

    lock = threading.Lock()
    first: list[float] = []

    def restarting(name):
        def route(path, headers):
            with lock:
                if not first:
                    first.append(time.monotonic())
                if time.monotonic() - first[0] < 0.5:
                    return Reply(503, b"restarting", (("Content-Type", "text/plain"),))
            return page(name, ["/"])
        return route

    pages = 6
    server = serve(routes=small_site(n=pages, robots_reply=None,
                                     extra={f"/p{i}": restarting(f"p{i}") for i in range(1, pages + 1)}))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
                              settings={"BOILERSTRIP_POLITENESS_PARAMS": '{"max_retries": 10}'})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(records) == pages + 1 and reasons(proc.stderr, "failed") == {}
    assert "given up" not in proc.stderr


def test_a_host_whose_connections_drop_is_given_up_too(tmp_path) -> None:
    # the failure found first: a site gone down mid-crawl fails at the transport (no answer at all), and each
    # page waited out the back-off, retried; here every page's connection is closed before any answer
    pages = 30
    dropped: list[str] = []
    # (closed without a word: the client sees the connection lost)
    with _site_without_answers([f"/p{i}" for i in range(1, pages + 1)], lambda path, rfile: dropped.append(path)) as url:
        # one request at a time and four retries a page: without the give-up, ~150 failures each followed by
        # the back-off (up to 1 s in the test profile), two minutes and more
        proc, records = run_crawl(url, out=tmp_path / "o.jsonl", args=FAST, timeout=600,
                                  settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "RETRY_TIMES": 4})
    assert proc.returncode == 6, proc.stderr[-3000:]
    assert [r["url"] for r in records] == [url]
    failed = reasons(proc.stderr, "failed")
    assert sum(failed.values()) == pages and failed.get("host_down", 0) >= 1, failed
    assert "the last connection_lost" in proc.stderr or "the last response_failed" in proc.stderr, proc.stderr[-3000:]
    assert len(dropped) < 5 * pages / 2  # given up long before every page's five tries


def test_the_requests_queued_for_a_host_given_up_are_not_sent_to_wait_out_their_timeout(tmp_path) -> None:
    # found by crawling a site that accepts connections and never answers: after the give-up, the requests
    # already queued in the host's download slot were sent one by one, each waiting out the whole download
    # timeout (130 s past the give-up with own-site's 30 s). Now they fail as host_down without being sent.
    import time

    pages, timeout_s = 20, 2.0
    held: list[float] = []  # how long each page request was held open before the client let it go
    lock = threading.Lock()

    def hold(path: str, rfile) -> None:
        started = time.monotonic()
        _held_open(rfile)
        with lock:
            held.append(time.monotonic() - started)

    with _site_without_answers([f"/p{i}" for i in range(1, pages + 1)], hold) as url:
        proc, records = run_crawl(url, out=tmp_path / "o.jsonl", args=FAST, timeout=600,
                                  settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_TIMEOUT": timeout_s})
    assert proc.returncode == 6, proc.stderr[-3000:]
    assert [r["url"] for r in records] == [url]
    failed = reasons(proc.stderr, "failed")
    assert sum(failed.values()) == pages and failed.get("host_down", 0) >= 1, failed
    # before the give-up (test profile: 5 s and 5 failures) about five requests wait out their timeout, and
    # one more may be sent as the give-up happens; every request queued behind them was sent and waited it
    # out as well before (20 pages and more)
    with lock:
        assert len(held) <= 10, sorted(held)


def test_a_stop_lets_go_the_pages_queued_for_a_site_that_never_answers(tmp_path) -> None:
    # a Ctrl-C of a polite crawl of a site that accepts connections and never answers took 7 minutes: the
    # graceful stop sent every page queued in the host's download slot, one after another, each waiting out
    # the download timeout. Now the queued pages are let go (not settled: --resume fetches them), and the
    # stop waits only for the download in progress
    from _incrawl import cli_interrupted
    from boilerstrip.ledger import read_ledger
    from boilerstrip.state import crawl_layout

    pages = 12
    asked: list[str] = []
    lock = threading.Lock()

    def hold(path: str, rfile) -> None:
        with lock:
            asked.append(path)
        _held_open(rfile)

    out = tmp_path / "o.jsonl"
    with _site_without_answers([f"/p{i}" for i in range(pages)], hold) as url:
        # SIGINT once the first page is being downloaded; the others wait in the host's queue
        code, shown, _took = cli_interrupted(["crawl", url, "-o", out, *FAST, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
                                              "-s", "DOWNLOAD_TIMEOUT=5"], lambda: bool(asked))
    assert code == 1, shown[-3000:]
    # (how many pages the engine had queued by the signal depends on the machine: the line says it when any)
    assert "received SIGINT: stopping the crawl" in shown and "waiting for 1 download(s) in progress (5 s at most)" \
        in shown, shown
    # the page in progress when the signal came, and at most its retry: not the queued ones, one by one
    with lock:
        assert len(asked) <= 2, asked
    ledger = {entry["url"]: entry["outcome"] for entry in read_ledger(crawl_layout(out).ledger)}
    assert ledger[url] == "item" and sum(outcome == "pending" for outcome in ledger.values()) == pages, ledger
