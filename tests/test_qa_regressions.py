"""Regressions found by walking through the README as a new user (one test per bug, each failed before its fix)."""

from __future__ import annotations

import os
import stat

from conftest import Reply, run_crawl

from boilerstrip.feeds import atomic_write_json, atomic_write_lines

FAST = ["--profile", "test", "--no-sitemaps"]
PAGE = (
    b"<html><head><title>One page</title></head><body><main><h1>One page</h1>"
    b"<p>A single page with enough words in it to count as the main content of a small test site.</p>"
    b"</main></body></html>"
)


def one_page_site(serve):
    return serve(routes={"/": Reply(body=PAGE, headers=(("Content-Type", "text/html; charset=utf-8"),))})


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_unknown_log_level_is_a_one_line_usage_error(serve, tmp_path):
    # Was: a 33-line ValueError traceback from logging once the crawl started, exit 1.
    server = one_page_site(serve)
    out = tmp_path / "out.jsonl"
    proc, records = run_crawl(server.url + "/", out=out, args=[*FAST, "--log-level", "LOUD"])
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--log-level" in lines[0] and "LOUD" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() and records == []
    assert not server.log, "nothing may be fetched for a bad argument"


def test_lower_case_log_level_setting_is_accepted(serve, tmp_path):
    # Was: `-s LOG_LEVEL=info` crashed the same way (logging wants upper case); --log-level was upper-cased.
    server = one_page_site(serve)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=[*FAST, "-s", "LOG_LEVEL=info"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [r["url"] for r in records] == [server.url + "/"]
    assert " INFO: " in proc.stderr and " DEBUG: " not in proc.stderr


def test_atomic_writes_get_an_ordinary_file_mode(tmp_path):
    # Was: mkstemp's private 0o600 on the ledger and the manifest, unreadable to anyone else.
    expected = 0o666 & ~_umask()
    atomic_write_lines(tmp_path / "a.jsonl", ['{"a": 1}'])
    atomic_write_json(tmp_path / "m.json", {"a": 1})
    for name in ("a.jsonl", "m.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name


def test_crawl_ledger_and_manifest_are_not_private_files(serve, tmp_path):
    server = one_page_site(serve)
    out = tmp_path / "out.jsonl"
    proc, records = run_crawl(server.url + "/", out=out, args=FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = 0o666 & ~_umask()
    # the records and the template report are rewritten by the finishing pass: same mode
    for path in (tmp_path / "out.ledger.jsonl", tmp_path / "out.manifest.json", out,
                 tmp_path / "out.report" / "template-report.json", tmp_path / "out.report" / "template-report.txt"):
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


def _resumed_ledger(tmp_path):
    import json

    from boilerstrip.extensions.ledger import LedgerExtension
    from boilerstrip.ledger import LedgerParams
    from boilerstrip.feeds import output_paths

    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "site.jsonl"
    paths = output_paths(out)
    base = "http://127.0.0.1:8000"
    out.write_text(json.dumps({"url": base + "/"}) + "\n", encoding="utf-8")
    earlier = [
        {"url": base + "/", "outcome": "item", "reason": ""},
        {"url": base + "/drafts/a.html", "outcome": "filtered", "reason": "robots_disallowed"},
        {"url": base + "/p.html?ref=x", "outcome": "filtered", "reason": "duplicate_canonical"},
    ]
    paths.ledger.write_text("".join(json.dumps(e) + "\n" for e in earlier), encoding="utf-8")
    ledger = LedgerExtension(LedgerParams(), paths, resume=True)
    ledger.spider_opened()
    return ledger, base


def test_jobdir_resume_keeps_the_earlier_runs_filtered_urls(tmp_path):
    # Was: after a Ctrl-C and a re-run with the same JOBDIR, the persisted dupefilter dropped the links to
    # URLs the first run had filtered (robots_disallowed, duplicate_canonical); the spider reported that as
    # filtered:duplicate, which overwrote the earlier reason and then deleted the URL from the ledger as
    # "never admitted": the final ledger and manifest lost them (25 URLs became 22 on the demo site).
    from scrapy import Request

    ledger, base = _resumed_ledger(tmp_path)
    for url, spider_first in ((base + "/drafts/a.html", True), (base + "/p.html?ref=x", False)):
        request = Request(url)
        ledger.request_scheduled(request)
        if spider_first:  # either order of the two request_dropped handlers
            ledger.url_settled(url, "filtered", "duplicate", request=request)
            ledger.request_dropped(request)
        else:
            ledger.request_dropped(request)
            ledger.url_settled(url, "filtered", "duplicate", request=request)
    assert ledger.reconcile(), ledger.summary
    assert ledger.summary["counts"]["urls"] == 3
    assert ledger.summary["reasons"] == {"filtered:duplicate_canonical": 1, "filtered:robots_disallowed": 1}


def test_plain_duplicate_drops_are_still_not_admitted(tmp_path):
    # The fix must not change a fresh run: a URL the dupefilter drops on its first request was never admitted.
    from scrapy import Request

    ledger, base = _resumed_ledger(tmp_path)
    request = Request(base + "/new.html")
    ledger.request_scheduled(request)
    ledger.url_settled(request.url, "filtered", "duplicate", request=request)
    ledger.request_dropped(request)
    assert base + "/new.html" not in ledger.records


def test_a_crawl_stopped_on_purpose_is_a_warning_not_a_ledger_mismatch(tmp_path, caplog):
    # Was: one Ctrl-C logged "ERROR: ledger: MISMATCH" (URLs in flight are never settled), which reads as a
    # bug in the tool; a finished crawl with an unsettled URL must still be an ERROR.
    import logging

    from scrapy import Request

    for reason, level, words in (("shutdown", logging.WARNING, "stopped early"), ("finished", logging.ERROR, "MISMATCH")):
        ledger, base = _resumed_ledger(tmp_path / reason)
        ledger.request_scheduled(Request(base + "/in-flight.html"))
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="boilerstrip.extensions.ledger"):
            ledger.spider_closed(reason=reason)
        assert ledger.reconciled is False
        records = [r for r in caplog.records if r.name == "boilerstrip.extensions.ledger"]
        assert [(r.levelno, words in r.getMessage()) for r in records] == [(level, True)], reason
        assert ledger.summary["unsettled"] == [base + "/in-flight.html"]


def test_a_crawl_that_writes_nothing_says_so(tmp_path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on: a mistyped start URL
        sock.bind(("127.0.0.1", 0))  # held, never listening, so no parallel test's server can take it
        port = sock.getsockname()[1]
        proc, records = run_crawl(f"http://127.0.0.1:{port}/", out=tmp_path / "o.jsonl", args=FAST)
    assert records == []
    assert "WARNING: no page was written (robots_unreachable=1)" in proc.stderr, proc.stderr[-2000:]
