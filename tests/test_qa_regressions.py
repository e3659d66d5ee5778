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
    for path in (tmp_path / "out.ledger.jsonl", tmp_path / "out.manifest.json"):
        assert stat.S_IMODE(path.stat().st_mode) == expected, path
