"""The hostile web, end to end: real crawls (subprocess) against loopback fault servers.

Every test asserts the run's ledger reconciles: each admitted URL is one record, one filtered:<reason> or
one failed:<reason>, the manifest says so and the crawl exits 0.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import time
from pathlib import Path

import pytest

from conftest import Reply, run_crawl
from hostile_faults import RawServer, assert_reconciled, html_page, read_ledger

FAST = ["--profile", "test", "--no-sitemaps", "--log-level", "INFO"]
HTML = (("Content-Type", "text/html; charset=utf-8"),)
_COUNTER = itertools.count()
TEXT = "<p>" + "Real content of the page, long enough to be kept by the extractor. " * 8 + "</p>"


_WORDS = "river stone cloud maple quiet amber harbor violet meadow copper lantern thistle orbit velvet canyon".split()


def _unique_text(seed: str) -> str:
    """A paragraph no other page has (the dedup pass would otherwise drop look-alike test pages)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "<p>" + " ".join(f"{_WORDS[b % len(_WORDS)]}{b}" for b in digest * 3) + ".</p>"


def _page(body: str = "", title: str | None = None) -> Reply:
    title = title or f"page {next(_COUNTER)}"
    return Reply(200, html_page(_unique_text(title) + TEXT + body, title), HTML)


@pytest.fixture
def counting(serve):
    """A second loopback server on another port that only counts hits: it must see none."""
    return serve(routes={"/": Reply(200, html_page("<p>internal admin page</p>"), HTML)})


def _outcomes(out: Path) -> dict[str, str]:
    return {url: f"{e['outcome']}:{e['reason']}".rstrip(":") for url, e in read_ledger(out).items()}


def test_file_link_redirects_and_meta_refresh_never_leave_scope(serve, counting, tmp_path: Path) -> None:
    other = counting.url
    site = serve(
        routes={
            "/": _page(
                '<a href="file:///etc/hostname">f</a> <a href="/to-other">a</a> <a href="/to-metadata">b</a>'
                ' <a href="/to-hex">c</a> <a href="/refresh">d</a> <a href="/to-file">e</a>'
                f' <a href="{other}/">g</a> <a href="http://2130706433:{counting.port}/">h</a>'
            ),
            "/to-other": Reply(302, b"", (("Location", f"{other}/?via=redirect"),)),
            "/to-metadata": Reply(301, b"", (("Location", "http://169.254.169.254/latest/meta-data/"),)),
            "/to-hex": Reply(307, b"", (("Location", f"http://0x7f.1:{counting.port}/"),)),
            "/to-file": Reply(302, b"", (("Location", "file:///etc/hostname"),)),
            "/refresh": Reply(200, f'<html><head><meta http-equiv="refresh" content="0; url={other}/?via=refresh"></head><body>x</body></html>'.encode(), HTML),
        }
    )
    out = tmp_path / "scope.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=FAST)
    assert_reconciled(out, proc)
    assert counting.requested_paths() == []
    outcomes = _outcomes(out)
    assert outcomes["file:///etc/hostname"] == "filtered:scheme_not_allowed"
    for path in ("/to-other", "/to-metadata", "/to-hex", "/refresh"):
        assert outcomes[site.url + path] == "filtered:offsite", outcomes
    assert not any("/etc/hostname" in r["text"] or "internal admin" in r["text"] for r in records)
    # /to-file: Scrapy's redirect middleware does not follow non-http Locations; the 302 ends failed
    assert outcomes[site.url + "/to-file"].startswith(("failed:", "filtered:"))


def test_private_addresses_refused_after_dns_even_without_offsite_check(serve, counting, tmp_path: Path) -> None:
    port = counting.port
    targets = {
        "/a": f"http://127.0.0.1:{port}/",
        "/b": f"http://localhost:{port}/",  # a name: refused after resolution
        "/c": f"http://2130706433:{port}/",
        "/d": f"http://[::ffff:127.0.0.1]:{port}/",
        "/e": "http://169.254.169.254/",
        "/f": "http://10.255.255.1/",
    }
    routes = {path: Reply(302, b"", (("Location", loc),)) for path, loc in targets.items()}
    routes["/"] = _page("".join(f'<a href="{p}">{p}</a>' for p in targets))
    site = serve(routes=routes)
    out = tmp_path / "private.jsonl"
    proc, _ = run_crawl(site.url + "/", out=out, args=FAST, settings={"BOILERSTRIP_SCOPE_PARAMS": '{"offsite": "off"}'})
    assert_reconciled(out, proc)
    assert counting.requested_paths() == []
    outcomes = _outcomes(out)
    for path in targets:
        assert outcomes[site.url + path] == "filtered:private_address", outcomes


def test_allow_private_opens_exactly_one_origin_and_strips_credentials(serve, counting, tmp_path: Path) -> None:
    site = serve(
        routes={
            "/": Reply(200, html_page(TEXT + '<a href="/go">go</a> <a href="/same">same</a>'), HTML + (("Set-Cookie", "sid=s3cret; Path=/"),)),
            "/go": Reply(302, b"", (("Location", f"{counting.url}/"),)),
            "/same": Reply(302, b"", (("Location", "/landing"),)),
            "/landing": _page(),
        }
    )
    out = tmp_path / "creds.jsonl"
    proc, records = run_crawl(
        site.url + "/",
        out=out,
        args=[*FAST, "--allow-private", f"127.0.0.1:{counting.port}"],
        settings={"BOILERSTRIP_SCOPE_PARAMS": '{"offsite": "off"}', "DEFAULT_REQUEST_HEADERS": json.dumps({"Authorization": "Bearer T0KEN"})},
    )
    assert_reconciled(out, proc)
    hits = counting.hits("/")
    assert len(hits) == 1, counting.requested_paths()  # the one explicitly allowed origin was reached
    assert "authorization" not in hits[0].headers and "cookie" not in hits[0].headers, hits[0].headers
    # control: on the same origin the hop keeps both (so the assertion above can fail)
    landing = site.hits("/landing")[0].headers
    assert landing.get("authorization") == "Bearer T0KEN" and "s3cret" in landing.get("cookie", "")


def _endless(conn, _request) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"<p>" + b"x" * 16_000 + b"</p>"
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    for _ in range(100_000):  # ~1.6 GB if nobody stops reading
        conn.sendall(frame)


def _declared_huge(conn, _request) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10000000000\r\n\r\n<html>")
    time.sleep(2)


def _slowloris(conn, _request) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n")
    for _ in range(200):
        conn.sendall(b"<")
        time.sleep(0.5)


@pytest.mark.slow
def test_size_caps_bombs_and_slowloris_fail_with_reasons(serve, tmp_path: Path) -> None:
    bomb = gzip.compress(b"<p>" + b"\0" * (64 * 1024 * 1024) + b"</p>", compresslevel=9)  # 64 MiB -> ~64 KiB
    with RawServer(_endless) as endless, RawServer(_declared_huge) as huge, RawServer(_slowloris) as slow:
        # the fault servers sit on other loopback ports: allowed explicitly, and reached by redirects
        routes = {
            "/": _page('<a href="/endless">1</a> <a href="/huge">2</a> <a href="/slow">3</a> <a href="/bomb">4</a> <a href="/loop/0">5</a>'
                   ' <a href="/self">6</a> <a href="/ping">7</a> <a href="/to-home">8</a>'),
            "/endless": Reply(302, b"", (("Location", endless.url + "/"),)),
            "/huge": Reply(302, b"", (("Location", huge.url + "/"),)),
            "/slow": Reply(302, b"", (("Location", slow.url + "/"),)),
            "/bomb": Reply(200, bomb, (("Content-Type", "text/html"), ("Content-Encoding", "gzip"))),
        }
        routes.update({f"/loop/{i}": Reply(302, b"", (("Location", f"/loop/{i + 1}"),)) for i in range(10)})
        # a redirect to itself, a loop of two, and a redirect to a page fetched already
        routes.update({"/self": Reply(302, b"", (("Location", "/self"),)), "/ping": Reply(301, b"", (("Location", "/pong"),)),
                       "/pong": Reply(302, b"", (("Location", "/ping"),)), "/to-home": Reply(302, b"", (("Location", "/"),))})
        site = serve(routes=routes)
        out = tmp_path / "limits.jsonl"
        allow = [arg for s in (endless, huge, slow) for arg in ("--allow-private", f"127.0.0.1:{s.port}")]
        started = time.monotonic()
        proc, records = run_crawl(
            site.url + "/",
            out=out,
            args=[*FAST, *allow],
            settings={
                "BOILERSTRIP_SCOPE_PARAMS": '{"offsite": "off"}',
                "DOWNLOAD_MAXSIZE": 2 * 1024 * 1024,
                "DOWNLOAD_TIMEOUT": 3,
                "RETRY_ENABLED": "false",
            },
            timeout=120,
        )
        elapsed = time.monotonic() - started
    assert_reconciled(out, proc)
    outcomes = _outcomes(out)
    assert outcomes[site.url + "/huge"] == "failed:response_too_large", outcomes
    assert outcomes[site.url + "/endless"] == "failed:response_too_large", outcomes
    assert outcomes[site.url + "/bomb"] == "filtered:decompressed_too_large", outcomes
    assert outcomes[site.url + "/slow"] == "failed:timeout", outcomes
    assert outcomes[site.url + "/loop/0"] == "filtered:too_many_redirects", outcomes
    # a redirect loop is named as one (it was filtered:duplicate, as if the page were another's copy)
    assert outcomes[site.url + "/self"] == outcomes[site.url + "/ping"] == "failed:redirect_loop", outcomes
    entries = read_ledger(out)
    assert entries[site.url + "/ping"]["detail"] == f"{site.url}/ping -> {site.url}/pong -> {site.url}/ping"
    assert outcomes[site.url + "/to-home"] == "filtered:duplicate", outcomes
    assert entries[site.url + "/to-home"]["detail"] == f"redirected (302) to {site.url}/, requested already"
    assert len(endless.hits) >= 1 and elapsed < 90  # the slowloris alone would hold a connection 100 s
    assert [r["url"] for r in records] == [site.url + "/"]


@pytest.mark.parametrize(
    ("name", "body", "ctype", "needle"),
    [
        ("wrong-charset", "Café déjà vu - naïve".encode("latin-1"), "text/html; charset=utf-8", "Caf"),
        ("unknown-charset", "Grüße aus Köln".encode("utf-8"), "text/html; charset=x-no-such-charset", "Gr"),
        ("invalid-utf8", b"bytes \xff\xfe\xc3\x28 broken \xed\xa0\x80 surrogate", "text/html; charset=utf-8", "broken"),
        ("lone-surrogate-ncr", b"lone &#xD800; and &#55296; surrogates &#x1F600;", "text/html; charset=utf-8", "surrogates"),
        ("utf16-no-bom", "UTF-16 without a mark".encode("utf-16-le"), "text/html", None),
    ],
)
def test_bad_bytes_give_valid_utf8_records_never_a_dropped_item(serve, tmp_path: Path, name, body, ctype, needle) -> None:
    page = b"<html><head><title>t</title></head><body><main><p>" + body + b" " + TEXT.encode() + b"</p></main></body></html>"
    site = serve(routes={"/": Reply(200, page, (("Content-Type", ctype),))})
    out = tmp_path / f"{name}.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=FAST)
    assert_reconciled(out, proc)
    raw = out.read_bytes()
    raw.decode("utf-8")  # strict: valid UTF-8
    assert "\\ud8" not in raw.decode("utf-8").lower()  # no escaped lone surrogate either
    assert len(records) == 1, proc.stderr[-2000:]
    if needle:
        assert needle in records[0]["text"]
    if name in ("wrong-charset", "invalid-utf8", "lone-surrogate-ncr"):
        assert "\ufffd" in records[0]["text"]
        assert "replacement_chars" in records[0]["flags"]


def test_deep_nesting_and_robots_faults_do_not_crash(serve, tmp_path: Path) -> None:
    deep = ("<div>" * 50_000) + "<p>deep</p>" + ("</div>" * 50_000)
    cases = {
        "robots-5xx": Reply(503, b"down"),
        "robots-huge": Reply(200, b"User-agent: *\nDisallow: /private\n" + b"# padding\n" * 200_000, (("Content-Type", "text/plain"),)),
        "robots-malformed": Reply(200, b"\xff\xfe<<html>>\nUser-agent *\nDisallow /\0\n", (("Content-Type", "text/plain"),)),
    }
    for name, robots in cases.items():
        site = serve(routes={"/robots.txt": robots, "/": _page('<a href="/deep">d</a>'), "/deep": Reply(200, html_page(deep), HTML)})
        out = tmp_path / f"{name}.jsonl"
        proc, records = run_crawl(site.url + "/", out=out, args=FAST)
        assert_reconciled(out, proc, returncode=1 if name == "robots-5xx" else 0)
        outcomes = _outcomes(out)
        assert len(outcomes) >= 1
        if name == "robots-5xx":  # RFC 9309: unreachable robots.txt = disallow everything, with a reason
            assert all(v.startswith("filtered:robots") for v in outcomes.values()), outcomes
        else:
            assert site.url + "/deep" in outcomes, outcomes


def test_429_with_retry_after_then_success(serve, tmp_path: Path) -> None:
    seen: list[float] = []

    def flaky(_path: str, _headers: dict) -> Reply:
        seen.append(time.monotonic())
        if len(seen) == 1:
            return Reply(429, b"slow down", (("Retry-After", "1"),))
        return _page(title="after 429")

    site = serve(routes={"/": _page('<a href="/flaky">f</a>'), "/flaky": flaky})
    out = tmp_path / "429.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=FAST)
    assert_reconciled(out, proc)
    assert len(seen) == 2 and seen[1] - seen[0] >= 0.9
    assert read_ledger(out)[site.url + "/flaky"]["outcome"] == "item"


def test_calendar_trap_ends_within_budget(serve, tmp_path: Path) -> None:
    def calendar(path: str, _headers: dict) -> Reply:
        from urllib.parse import parse_qs, urlsplit

        query = parse_qs(urlsplit(path).query)
        year, month = int(query.get("year", ["2026"])[0]), int(query.get("month", ["1"])[0])
        prev_y, prev_m = (year, month - 1) if month > 1 else (year - 1, 12)
        next_y, next_m = (year, month + 1) if month < 12 else (year + 1, 1)
        days = "".join(f'<a href="/day/{year}/{month:02d}/{d:02d}">{d}</a> ' for d in range(1, 4))
        body = f'<a href="/cal?year={prev_y}&month={prev_m}">prev</a> <a href="/cal?year={next_y}&month={next_m}">next</a> {days}'
        return _page(body, title=f"{year}-{month}")

    site = serve(routes={"/": _page('<a href="/cal?year=2026&month=11">calendar</a>'), "/cal": calendar, "/day": _page()})
    site.routes.update({f"/day/{y}/{m:02d}/{d:02d}": _page() for y in range(1990, 2060) for m in range(1, 13) for d in range(1, 4)})
    out = tmp_path / "calendar.jsonl"
    started = time.monotonic()
    proc, records = run_crawl(
        site.url + "/", out=out, args=FAST, settings={"BOILERSTRIP_TRAPS_PARAMS": '{"max_urls_per_pattern": 8}'}, timeout=120
    )
    assert_reconciled(out, proc)
    assert time.monotonic() - started < 60
    outcomes = _outcomes(out)
    calendar_pages = [u for u in outcomes if "/cal?" in u and outcomes[u] == "item"]
    assert len(calendar_pages) <= 8
    assert sum(1 for v in outcomes.values() if v == "filtered:pattern_budget") >= 1
    assert len(records) <= 1 + 8 + 8  # home + calendar pages + day pages within their own budget


def test_the_connection_itself_is_checked_when_the_middleware_does_not_resolve(serve, counting, tmp_path: Path) -> None:
    """With the early lookup off, the only guard left is ScopedResolver at connect time (what stops
    DNS rebinding): a name resolving to loopback is still never connected to."""
    site = serve(routes={"/": _page('<a href="/go">go</a>'), "/go": Reply(302, b"", (("Location", f"http://localhost:{counting.port}/"),))})
    out = tmp_path / "connect.jsonl"
    proc, _ = run_crawl(
        site.url + "/", out=out, args=FAST,
        settings={"BOILERSTRIP_SCOPE_PARAMS": '{"offsite": "off", "resolve_early": false}', "ROBOTSTXT_OBEY": "false"},
    )  # fmt: skip
    assert_reconciled(out, proc)
    assert counting.requested_paths() == []
    assert _outcomes(out)[site.url + "/go"] == "failed:private_address"
