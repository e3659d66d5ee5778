"""RFC 9309 robots.txt semantics, checked against the server's request log."""

from __future__ import annotations

import itertools
import json

from _crawlsite import FAST, page_hits, robots, small_site
from conftest import Reply, run_crawl
from test_crawl_demo import reasons


def test_robots_503_means_no_page_requests_and_is_retried(serve, tmp_path) -> None:
    server = serve(routes=small_site(robots_reply=robots("oops", status=503)))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    # no start URL could be reached: a non-zero exit with one line that says so
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "no start URL could be reached" in proc.stderr and "robots_unreachable" in proc.stderr
    assert records == []
    assert page_hits(server) == [], [e.path for e in server.log]
    # the test profile fetches an unreachable robots.txt twice before giving the host up
    assert len(server.hits("/robots.txt")) == 2
    assert reasons(proc.stderr)["robots_unreachable"] == 1


def test_a_start_url_of_a_list_that_cannot_be_reached_is_named_at_the_end(serve, tmp_path) -> None:
    # one site of two down: the other is crawled and the run stands (exit 0), and the last line names the one
    # that gave nothing (it was only a count among the skip reasons: robots_unreachable=1)
    good = serve(routes=small_site())
    down = serve(routes=small_site(robots_reply=robots("oops", status=503)))
    proc, records = run_crawl(good.url + "/", down.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == 5 and all(r["url"].startswith(good.url) for r in records)
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (f"boilerstrip crawl: 1 of 2 start URL(s) gave no page: {down.url}/ "
                    "(filtered:robots_unreachable: http_503)"), last


def test_robots_recovering_after_503_is_obeyed(serve, tmp_path) -> None:
    answers = itertools.chain([robots("busy", status=503)], itertools.repeat(robots("User-agent: *\nDisallow: /p2\n")))
    server = serve(routes=small_site(extra={"/robots.txt": lambda path, headers: next(answers)}))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {r["url"].rsplit("/", 1)[1] for r in records} == {"", "p1", "p3", "p4"}
    assert not server.hits("/p2")
    assert len(server.hits("/robots.txt")) == 2


def test_robots_unreachable_connection_means_disallow(serve, tmp_path) -> None:
    # robots.txt answers slower than the fetch timeout: unreachable -> nothing fetched
    slow = Reply(200, b"User-agent: *\nAllow: /\n", (("Content-Type", "text/plain"),), delay_s=2.5)
    server = serve(routes=small_site(robots_reply=slow))
    proc, records = run_crawl(
        server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
        settings={"BOILERSTRIP_ROBOTS_PARAMS": '{"fetch_timeout_s": 1, "unreachable_max_fetches": 1}'},
    )
    assert records == []
    assert page_hits(server) == []
    assert reasons(proc.stderr)["robots_unreachable"] == 1


def test_robots_404_allows_everything(serve, tmp_path) -> None:
    server = serve(routes=small_site(robots_reply=None))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == 5


def test_robots_redirects_followed_up_to_five_hops(serve, tmp_path) -> None:
    hops = {f"/r{i}": Reply(301, b"", (("Location", f"/r{i + 1}"),)) for i in range(1, 5)}
    routes = small_site(
        robots_reply=Reply(302, b"", (("Location", "/r1"),)),
        extra={**hops, "/r5": robots("User-agent: *\nDisallow: /p1\nDisallow: /p3\n")},
    )
    server = serve(routes=routes)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not server.hits("/p1") and not server.hits("/p3")
    assert {r["url"].rsplit("/", 1)[1] for r in records} == {"", "p2", "p4"}
    assert reasons(proc.stderr)["robots_disallowed"] == 2


def test_robots_more_than_five_redirects_means_unavailable(serve, tmp_path) -> None:
    hops = {f"/r{i}": Reply(301, b"", (("Location", f"/r{i + 1}"),)) for i in range(1, 7)}
    routes = small_site(
        robots_reply=Reply(302, b"", (("Location", "/r1"),)),
        extra={**hops, "/r7": robots("User-agent: *\nDisallow: /\n")},
    )
    server = serve(routes=routes)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert not server.hits("/r7")  # the sixth hop is not followed
    assert len(records) == 5  # unavailable (RFC 9309 2.3.1.2) -> allow


def test_robots_parsed_up_to_512_kib_only(serve, tmp_path) -> None:
    filler = "# " + "x" * 1000 + "\n"
    head = "User-agent: *\nDisallow: /p1\n"
    body = head + filler * 600 + "Disallow: /p2\n"  # the /p2 rule starts after ~600 KB
    assert len(body.encode()) > 512 * 1024
    server = serve(routes=small_site(robots_reply=robots(body)))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not server.hits("/p1")
    assert server.hits("/p2")  # beyond the parsed prefix: ignored


def test_robots_group_for_our_token_is_used(serve, tmp_path) -> None:
    text = "User-agent: *\nDisallow: /\n\nUser-agent: boilerstrip\nDisallow: /p4\n"
    server = serve(routes=small_site(robots_reply=robots(text)))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert {r["url"].rsplit("/", 1)[1] for r in records} == {"", "p1", "p2", "p3"}
    assert not server.hits("/p4")


def test_a_site_whose_robots_txt_disallows_every_start_url_ends_non_zero_saying_so(serve, tmp_path) -> None:
    # it wrote nothing, exited 0 and said "check the start URL": a scheduled run then replaced its last good
    # output with an empty one
    server = serve(routes=small_site(robots_reply=robots("User-agent: *\nDisallow: /\n")))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 1 and records == []
    assert proc.stderr.strip().splitlines()[-1] == (
        "boilerstrip crawl: every start URL is disallowed by its site's robots.txt (boilerstrip obeys it), nothing "
        f"written: {server.url}/ (filtered:robots_disallowed)")
    assert server.hits("/robots.txt") and not server.hits("/")


def test_robots_can_be_switched_off_only_explicitly(serve, tmp_path) -> None:
    server = serve(routes=small_site(robots_reply=robots("User-agent: *\nDisallow: /\n")))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
                              settings={"ROBOTSTXT_OBEY": "false"})
    assert len(records) == 5
    assert not server.hits("/robots.txt")
    json.dumps(records)


def test_robots_redirect_to_another_site_does_not_block_the_crawl(serve, tmp_path) -> None:
    other = serve(routes={"/robots.txt": robots("User-agent: *\nDisallow: /p1\n")})
    server = serve(routes=small_site(robots_reply=Reply(301, b"", (("Location", other.url + "/robots.txt"),))))
    # the other loopback port is private: opened explicitly, so the hop is about offsite, not SSRF (a robots
    # redirect to an unnamed private address is "unreachable": tests/test_scope_followups.py)
    allow = ["--allow-private", f"127.0.0.1:{other.port}"]
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=[*FAST, *allow])
    assert proc.returncode == 0, proc.stderr[-2000:]
    skipped = reasons(proc.stderr)
    assert "robots_unreachable" not in skipped
    # RFC 9309 2.3.1.2: the redirect is followed across authorities and the other site's rules apply
    assert other.hits("/robots.txt")
    assert not server.hits("/p1") and len(records) == 4


def test_robots_connection_refused_means_disallow(tmp_path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))  # held, never listening, so no parallel test's server can take it
        port = sock.getsockname()[1]
        proc, records = run_crawl(f"http://127.0.0.1:{port}/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 1, proc.stderr[-2000:]  # a mistyped host or port: exit 1, one clear line
    assert f"no start URL could be reached, nothing written: http://127.0.0.1:{port}/ (filtered:robots_unreachable: connection_refused)" in proc.stderr
    assert records == []
    assert reasons(proc.stderr) == {"robots_unreachable": 1}
    assert reasons(proc.stderr, "failed") == {}


def test_a_stop_while_pages_wait_for_an_unreachable_robots_txt_is_prompt(serve, tmp_path) -> None:
    # a Ctrl-C while the start URL's robots.txt was unreachable (a wrong port, a site down) waited out the
    # robots.txt retries, a minute with polite, with nothing said; now the waiting pages are let go at once,
    # not settled (the ledger lists them, --resume fetches them)
    from _incrawl import cli_interrupted

    server = serve(routes=small_site(robots_reply=robots("busy", status=503)))
    out = tmp_path / "o.jsonl"
    # SIGINT once robots.txt answered 503: the start page waits 600 s for the next fetch (a stop before the
    # 503's verdict is applied ends the same way: the page looks at the stop first)
    code, shown, took = cli_interrupted(
        ["crawl", server.url + "/", "-o", out, *FAST,
         "-s", 'BOILERSTRIP_ROBOTS_PARAMS={"unreachable_retry_s": 600, "unreachable_max_fetches": 3}'],
        lambda: bool(server.hits("/robots.txt")))
    assert server.hits("/robots.txt"), "robots.txt never fetched"
    assert code == 1, shown[-3000:]
    assert took < 60, (took, shown[-3000:])  # the retry was 600 s away
    assert "stopped early (shutdown)" in shown
    ledger = [json.loads(line) for line in (tmp_path / "o.ledger.jsonl").read_text().splitlines()]
    assert ledger == [{"url": server.url + "/", "outcome": "pending", "reason": ""}]
    assert len(server.hits("/robots.txt")) == 1 and page_hits(server) == []
