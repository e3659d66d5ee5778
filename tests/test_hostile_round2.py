"""The hostile web, round 2 (issue 16, HTTP side): real crawls (subprocess) against loopback fault servers.

Each case names its outcome; each run's ledger reconciles, or the crawl exits non-zero and says why.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import ROOT, Reply, read_jsonl, run_crawl
from hostile_faults import RawServer, assert_reconciled, html_page, read_ledger, read_manifest

FAST = ["--profile", "test", "--no-sitemaps", "--log-level", "INFO", "-s", "BOILERSTRIP_RENDER_MODE=never"]
HTML = (("Content-Type", "text/html; charset=utf-8"),)
_WORDS = "river stone cloud maple quiet amber harbor violet meadow copper lantern thistle orbit velvet canyon".split()


def _text(seed: str) -> str:
    """Paragraphs no other page has (the dedup pass would otherwise drop look-alike test pages)."""
    digest = hashlib.sha256(seed.encode()).digest()
    words = " ".join(f"{_WORDS[b % len(_WORDS)]}{b}" for b in digest * 4)
    return f"<p>{words}.</p><p>Ordinary prose about {seed}, long enough for the extractor to keep it as content.</p>"


def _page(seed: str, links: str = "") -> Reply:
    return Reply(200, html_page(_text(seed) + links, seed), HTML)


def _outcomes(out: Path) -> dict[str, str]:
    return {url: f"{e['outcome']}:{e['reason']}".rstrip(":") for url, e in read_ledger(out).items()}


# -- 6. robots.txt starting with a UTF-8 byte-order mark ----------------------------------------------------------
def test_robots_txt_with_a_bom_is_obeyed(serve, tmp_path: Path) -> None:
    robots = Reply(200, b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n", (("Content-Type", "text/plain"),))
    site = serve(routes={"/": _page("home", '<a href="/private">p</a> <a href="/open">o</a>'),
                         "/private": _page("private"), "/open": _page("open"), "/robots.txt": robots})
    out = tmp_path / "bom.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=FAST)
    assert_reconciled(out, proc)
    assert site.hits("/private") == []
    assert _outcomes(out)[site.url + "/private"] == "filtered:robots_disallowed"
    assert {r["url"] for r in records} == {site.url + "/", site.url + "/open"}


# -- 3. session-id variants of one page -----------------------------------------------------------------------------
def test_session_id_variants_are_one_url_settled_once(serve, tmp_path: Path) -> None:
    links = '<a href="/a">a</a> <a href="/a;jsessionid=1">a1</a> <a href="/b?sid=9">b9</a> <a href="/b">b</a>'
    site = serve(routes={"/": _page("home", links), "/a": _page("a", '<a href="/a;jsessionid=2">again</a>'),
                         "/b": _page("b", '<a href="/b?PHPSESSID=3">b3</a>')})
    out = tmp_path / "sid.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=FAST)
    assert_reconciled(out, proc)
    assert sorted(r["url"] for r in records) == [site.url + "/", site.url + "/a", site.url + "/b"]
    assert len(site.hits("/a")) == 1 and len(site.hits("/b")) == 1
    outcomes = _outcomes(out)
    assert not any("sid" in url.lower() for url in outcomes), outcomes


# -- 7. a dead letter written before the feed opens ------------------------------------------------------------------
def _crawl_with_helpers(url: str, out: Path, extra: list[str], timeout: float = 180, preexec=None) -> tuple[subprocess.CompletedProcess, list[dict]]:
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", url, "-o", str(out), *FAST, *extra]
    here = str(Path(__file__).parent)
    env = dict(os.environ, PYTHONPATH=here + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONUNBUFFERED="1")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env, preexec_fn=preexec)
    return proc, read_jsonl(out)


def test_dead_letter_of_the_first_page_survives_the_feed_opening(serve, tmp_path: Path) -> None:
    from boilerstrip import settings as project

    site = serve(routes={"/": _page("home", '<a href="/a">a</a> <a href="/b">b</a>'), "/a": _page("a"), "/b": _page("b")})
    out = tmp_path / "dead.jsonl"
    stale = tmp_path / "dead.deadletter.jsonl"
    stale.write_text('{"url": "http://earlier-run/", "reason": "stale"}\n')
    pipelines = {**project.ITEM_PIPELINES, "hostile_round2_helpers.FailOnHome": 100}
    proc, records = _crawl_with_helpers(site.url + "/", out, ["-s", f"ITEM_PIPELINES={json.dumps(pipelines)}"])
    assert_reconciled(out, proc)
    assert _outcomes(out)[site.url + "/"] == "failed:pipeline_error:RuntimeError"
    dead = read_jsonl(stale)
    assert [d["url"] for d in dead] == [site.url + "/"], dead  # this run's dead letter kept, the earlier run's gone
    assert sorted(r["url"] for r in records) == [site.url + "/a", site.url + "/b"]
    assert read_manifest(out)["output"]["deadletter"] == str(stale)


# -- 2. a full disk (a file size limit) while writing the records ----------------------------------------------------
def _site_routes(pages: int) -> dict:
    routes = {}
    for i in range(pages):
        links = " ".join(f'<a href="/p{j}">p{j}</a>' for j in (i + 1, i + 2) if j < pages)
        routes[f"/p{i}"] = _page(f"page {i}", links)
    routes["/"] = _page("home", '<a href="/p0">p0</a>')
    return routes


def test_a_write_error_stops_the_crawl_non_zero_and_resume_recovers(serve, tmp_path: Path) -> None:
    import resource

    pages = 40  # + the home page: 41 URLs
    site = serve(routes=_site_routes(pages))
    out = tmp_path / "full.jsonl"
    limit = 40 * 1024  # bytes any one file of the crawl may reach: room for some records, not all 41

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc, _ = _crawl_with_helpers(site.url + "/", out, ["-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1"], preexec=small_disk)
    assert proc.returncode != 0, proc.stderr[-3000:]
    assert "write_error" in proc.stderr and "--resume" in proc.stderr
    part = out.with_name(out.name + ".part")
    assert not out.exists() and part.exists()  # never renamed: visibly incomplete
    written = [json.loads(line) for line in part.read_text(encoding="utf-8").splitlines()]  # whole lines only
    assert 0 < len(written) < pages + 1 and part.stat().st_size <= limit
    manifest = read_manifest(out)
    assert manifest["reconciled"] is False and manifest["finish_reason"] == "write_error"
    ledger = read_ledger(out)
    items = {u for u, e in ledger.items() if e["outcome"] == "item"}
    assert items == {r["url"] for r in written}  # an item in the ledger is a record on disk, nothing else
    assert any(e["outcome"] == "failed" and e["reason"] == "write_error" for e in ledger.values()), ledger
    assert not any(e["reason"] == "dropped_after_crawl" for e in ledger.values())

    proc2, records = run_crawl(site.url + "/", out=out, args=[*FAST, "--resume"])
    assert_reconciled(out, proc2)
    assert sorted(r["url"] for r in records) == sorted({site.url + "/"} | {f"{site.url}/p{i}" for i in range(pages)})
