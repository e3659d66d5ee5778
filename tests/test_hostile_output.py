"""Nothing lost, nothing doubled: crash-safe feed storage, the ledger, dead letters, kill -9 and resume."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from boilerstrip.extensions.ledger import LedgerExtension
from boilerstrip.ledger import reconcile_output
from boilerstrip.feeds import (
    export_failed,
    CrashSafeFeedStorage,
    FeedParams,
    SafeJsonLinesExporter,
    atomic_write_lines,
    output_paths,
    read_whole_lines,
)
from boilerstrip.items import EXPORT_FIELDS, PageItem
from boilerstrip.outcomes import FilteredItem, report_failed, report_filtered
from boilerstrip.safety.text import repair_value
from _incrawl import run_cli
from conftest import ROOT, Reply, read_jsonl, run_crawl
from hostile_faults import assert_reconciled, html_page, read_ledger, read_manifest

# -- pure text repair --------------------------------------------------------------------------------------------


def test_repair_value_replaces_lone_surrogates_everywhere() -> None:
    value = {"text": "a\ud800b", "blocks": [{"text": "\udfff"}], "ok": "😀", "n": 3, "k\ud801": None}
    fixed, count = repair_value(value)
    assert count == 3
    json.dumps(fixed, ensure_ascii=False).encode("utf-8")  # encodes now
    assert fixed["text"] == "a\ufffdb" and fixed["ok"] == "😀" and "k\ufffd" in fixed


# -- storage + exporter -----------------------------------------------------------------------------------------
def _export(tmp_path: Path, items: list, resume: bool = False) -> tuple[Path, CrashSafeFeedStorage]:
    out = tmp_path / "out.jsonl"
    storage = CrashSafeFeedStorage(str(out), params=FeedParams(resume=resume, fsync_every_items=2))
    handle = storage.open(None)
    exporter = SafeJsonLinesExporter(handle, fields_to_export=list(EXPORT_FIELDS))
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    assert output_paths(out).part.exists() and not out.exists() or resume
    storage.store(handle)
    return out, storage


def test_part_file_is_renamed_whole_and_bad_text_is_repaired_and_flagged(tmp_path: Path) -> None:
    items = [PageItem(url="http://a/1", text="fine"), PageItem(url="http://a/2", text="bad \ud800 text", title="\udc00")]
    out, _ = _export(tmp_path, items)
    assert not output_paths(out).part.exists()
    records = read_jsonl(out)
    assert [r["url"] for r in records] == ["http://a/1", "http://a/2"]
    assert records[1]["text"] == "bad \ufffd text" and records[1]["flags"] == ["replacement_chars"]
    assert records[0]["flags"] == []


def test_unencodable_record_is_dead_lettered_not_lost(tmp_path: Path) -> None:
    class Weird:
        pass

    items = [PageItem(url="http://a/1"), PageItem(url="http://a/2", attempts=[{"obj": Weird()}]), PageItem(url="http://a/3")]
    out, _ = _export(tmp_path, items)
    assert [r["url"] for r in read_jsonl(out)] == ["http://a/1", "http://a/3"]
    dead = read_jsonl(output_paths(out).deadletter)
    assert dead[0]["url"] == "http://a/2" and dead[0]["reason"].startswith("export_error:")


def test_torn_last_line_is_cut_and_resume_skips_written_urls(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    part = output_paths(out).part
    part.write_bytes(b'{"url": "http://a/1"}\n{"url": "http://a/2"}\n{"url": "http://a/3", "te')  # a kill mid-line
    items = [PageItem(url=f"http://a/{i}") for i in (1, 2, 3, 4)]
    _export(tmp_path, items, resume=True)
    urls = [r["url"] for r in read_jsonl(out)]
    assert urls == ["http://a/1", "http://a/2", "http://a/3", "http://a/4"]


def test_atomic_write_lines_replaces_whole(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("old\n")
    assert atomic_write_lines(path, ["a", b"b\n"]) == 2
    assert path.read_bytes() == b"a\nb\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]  # no temp file left behind


# -- ledger glue --------------------------------------------------------------------------------------------------
def _ledger(tmp_path: Path) -> tuple[LedgerExtension, object]:
    crawler = get_crawler(settings_dict={"FEEDS": {str(tmp_path / "out.jsonl"): {"format": "jsonl"}}})
    ext = LedgerExtension.from_crawler(crawler)
    ext.spider_opened()
    return ext, crawler


def _scheduled(ext: LedgerExtension, url: str, **meta) -> Request:
    request = Request(url, meta=meta)
    ext.request_scheduled(request)
    return request


def _response(request: Request) -> HtmlResponse:
    return HtmlResponse(request.url, body=b"<html></html>", request=request)


def test_ledger_reconciles_items_filters_failures_and_hops(tmp_path: Path) -> None:
    ext, crawler = _ledger(tmp_path)
    a = _scheduled(ext, "http://s/a")
    b = _scheduled(ext, "http://s/b")
    c = _scheduled(ext, "http://s/c")
    d = _scheduled(ext, "http://s/d")
    # a redirect hop of a inherits its key: the same URL, not a new one
    hop = a.replace(url="http://s/a2", meta={**a.meta, "redirect_urls": ["http://s/a"]})
    ext.request_scheduled(hop)
    # a duplicate the dupefilter drops was never admitted
    dup = _scheduled(ext, "http://s/a?dup")
    ext.request_dropped(dup)
    _scheduled(ext, "http://s/sitemap.xml", boilerstrip_kind="sitemap")  # infrastructure
    report_filtered(crawler, "http://s/trap/1", "pattern_budget")  # filtered before admission
    report_filtered(crawler, "http://s/trap/1", "pattern_budget")  # ... counted once
    ext.item_scraped(PageItem(url="http://s/a"), _response(hop))
    ext.item_dropped(PageItem(url="http://s/b"), _response(b), FilteredItem("near_duplicate"))
    report_failed(crawler, c, "http_503")
    ext.item_error(PageItem(url="http://s/d"), _response(d), failure=_failure(ValueError("boom")))
    ext.spider_closed("finished")
    assert ext.reconciled is True
    ledger = read_ledger(tmp_path / "out.jsonl")
    assert {u: f"{e['outcome']}:{e['reason']}" for u, e in ledger.items()} == {
        "http://s/a": "item:",
        "http://s/b": "filtered:near_duplicate",
        "http://s/c": "failed:http_503",
        "http://s/d": "failed:pipeline_error:ValueError",
        "http://s/trap/1": "filtered:pattern_budget",
    }
    dead = read_jsonl(output_paths(tmp_path / "out.jsonl").deadletter)
    assert dead[0]["url"] == "http://s/d" and dead[0]["reason"] == "pipeline_error:ValueError"
    manifest = read_manifest(tmp_path / "out.jsonl")
    assert manifest["counts"]["urls"] == 5 and manifest["reconciled"] is True
    assert manifest["counts"]["item"] == 1 and manifest["counts"]["filtered"] == 2 and manifest["counts"]["failed"] == 2
    assert crawler.stats.get_value("boilerstrip/ledger/mismatch") == 0


def _failure(exc: Exception):
    from twisted.python.failure import Failure

    try:
        raise exc
    except Exception:
        return Failure()


def test_ledger_names_requests_and_items_by_their_values_not_their_identity(tmp_path: Path) -> None:
    """A dupefilter drop undoes only the admission of the request it drops (a redirect hop to a URL fetched
    already, which inherits its page's key, does not), and a write the feed reports failed is charged to
    the item written, whichever of the two reaches the ledger first (the ledger keys neither by id(): an
    id() is reused once its object is freed, and items are freed as soon as they are written)."""
    ext, crawler = _ledger(tmp_path)
    page = _scheduled(ext, "http://s/page")
    hop = page.replace(url="http://s/seen", meta={**page.meta, "redirect_urls": ["http://s/page"]})
    ext.request_scheduled(hop)
    ext.request_dropped(hop)  # the hop's URL was fetched already: the page stays admitted (pending)
    assert "http://s/page" in ext.records
    dup = _scheduled(ext, "http://s/dup")
    ext.request_dropped(dup)
    assert "http://s/dup" not in ext.records
    early = _scheduled(ext, "http://s/early")
    later = _scheduled(ext, "http://s/later")
    ext.request_dropped(early)  # named by its own scheduling (on its meta), not by the order of the signals
    assert "http://s/early" not in ext.records and "http://s/later" in ext.records
    ext.item_scraped(PageItem(url="http://s/later"), _response(later))
    ext.url_settled("http://s/page", "filtered", "duplicate", request=hop)  # what the spider reports for it
    for n in range(6):
        request = _scheduled(ext, f"http://s/{n}")
        item = PageItem(url=f"http://s/{n}")
        if n % 3 == 1:  # the feed reports the failed write before the ledger sees the item
            crawler.signals.send_catch_log(export_failed, item=item, reason="write_error")
        ext.item_scraped(item, _response(request))
        if n % 3 == 2:  # ... or after
            crawler.signals.send_catch_log(export_failed, item=item, reason="write_error")
        del item, request
    ext.spider_closed("finished")
    assert ext.reconciled is True
    outcomes = {u: f"{e['outcome']}:{e['reason']}" for u, e in read_ledger(tmp_path / "out.jsonl").items()}
    assert outcomes == {"http://s/page": "filtered:duplicate", "http://s/later": "item:",
                        **{f"http://s/{n}": "item:" if n % 3 == 0 else "failed:write_error" for n in range(6)}}


def test_ledger_mismatch_is_an_error_for_unsettled_and_double_settled(tmp_path: Path) -> None:
    ext, crawler = _ledger(tmp_path)
    a = _scheduled(ext, "http://s/a")
    _scheduled(ext, "http://s/never-settled")
    ext.item_scraped(PageItem(url="http://s/a"), _response(a))
    ext.item_scraped(PageItem(url="http://s/a"), _response(a))  # the same URL a second time
    ext.spider_closed("finished")
    assert ext.reconciled is False
    manifest = read_manifest(tmp_path / "out.jsonl")
    assert manifest["reconciled"] is False
    assert manifest["unsettled"] == ["http://s/never-settled"]
    assert manifest["settled_twice"][0]["url"] == "http://s/a"
    assert crawler.stats.get_value("boilerstrip/ledger/mismatch") == 1


def test_reconcile_output_follows_a_pass_that_drops_records(tmp_path: Path) -> None:
    ext, _ = _ledger(tmp_path)
    out = tmp_path / "out.jsonl"
    for url in ("http://s/a", "http://s/b"):
        request = _scheduled(ext, url)
        ext.item_scraped(PageItem(url=url), _response(request))
    ext.spider_closed("finished")
    atomic_write_lines(out, [json.dumps({"url": "http://s/a"})])  # a dedup pass kept one of the two
    assert reconcile_output(out, {"http://s/b": "exact_duplicate"}) is True
    assert read_ledger(out)["http://s/b"]["reason"] == "exact_duplicate"
    assert read_manifest(out)["counts"]["item"] == 1
    atomic_write_lines(out, [json.dumps({"url": "http://s/a"}), json.dumps({"url": "http://s/zzz"})])
    assert reconcile_output(out) is False  # a record the ledger never saw


# -- end to end: a failing pipeline stage, kill -9 and resume ----------------------------------------------------
HTML = (("Content-Type", "text/html; charset=utf-8"),)


def _words(n: int) -> str:
    vocab = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar".split()
    return " ".join(f"{vocab[(n * 7 + i) % len(vocab)]}{(n * 31 + i * 17) % 997}" for i in range(120))


def _site_routes(pages: int, delay_s: float = 0.0) -> dict:
    routes = {}
    for i in range(pages):
        links = " ".join(f'<a href="/p{j}">p{j}</a>' for j in (i + 1, i + 2) if j < pages)
        body = f"<h1>Page {i}</h1><p>{_words(i)}</p>{links}"
        routes[f"/p{i}"] = Reply(200, html_page(body, f"Page {i}"), HTML, delay_s=delay_s)
    routes["/"] = Reply(200, html_page(f"<p>{_words(10_000)}</p><a href='/p0'>start</a>", "Home"), HTML, delay_s=delay_s)
    return routes


def test_failing_pipeline_stage_dead_letters_one_item_and_goes_on(serve, tmp_path: Path) -> None:
    site = serve(routes=_site_routes(6))
    out = tmp_path / "dead.jsonl"
    pipelines = json.dumps({"boilerstrip.pipelines.finalize.FinalizePipeline": 900, "hostile_pipeline.FailOnPage3": 100})
    env_path = str(Path(__file__).parent)
    proc, records = _crawl_with_path(site.url + "/", out, env_path, ["-s", f"ITEM_PIPELINES={pipelines}"])
    assert_reconciled(out, proc)
    ledger = read_ledger(out)
    assert ledger[site.url + "/p3"]["outcome"] == "failed"
    assert ledger[site.url + "/p3"]["reason"] == "pipeline_error:RuntimeError"
    assert len(records) == 6  # home + p0..p5 except p3
    dead = read_jsonl(output_paths(out).deadletter)
    assert [d["url"] for d in dead] == [site.url + "/p3"] and "RuntimeError" in json.dumps(dead)


def _crawl_with_path(url: str, out: Path, path: str, extra: list[str], **popen) -> subprocess.CompletedProcess:
    proc = run_cli(["crawl", url, "-o", str(out), "--profile", "test", "--no-sitemaps", *extra], timeout=120,
                   preexec=lambda: sys.path.insert(0, path))  # the components under test, as PYTHONPATH would
    return proc, read_jsonl(out)


def _wait_for_lines(part: Path, lines: int, proc: subprocess.Popen, what: str, timeout_s: float = 300) -> None:
    """Until the crawl's ``.part`` holds ``lines`` records: a deadline far past the few seconds it takes (a
    2-core machine under load took more than 60 s), never a fixed sleep."""
    deadline = time.monotonic() + timeout_s
    while not (part.exists() and part.read_bytes().count(b"\n") >= lines):
        assert proc.poll() is None, f"the crawl ended before it could be {what}"
        assert time.monotonic() < deadline, f"{lines} records not written within {timeout_s:.0f} s"
        time.sleep(0.05)


@pytest.mark.slow
def test_kill_9_mid_crawl_then_resume_completes_the_set_exactly_once(serve, tmp_path: Path) -> None:
    pages = 60
    site = serve(routes=_site_routes(pages, delay_s=0.12))
    out = tmp_path / "killed.jsonl"
    part = output_paths(out).part
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", site.url + "/", "-o", str(out), "--profile", "test",
           "--no-sitemaps", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_lines(part, 25, proc, "killed")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()  # never renamed: the run did not finish
    raw = part.read_bytes()
    lines = read_whole_lines(part)
    assert len(lines) >= 25 and all(json.loads(line)["url"] for line in lines)  # whole JSON lines only
    assert raw.endswith(b"\n") or raw.count(b"\n") == len(lines)
    killed_urls = {json.loads(line)["url"] for line in lines}

    proc2, records = run_crawl(site.url + "/", out=out, args=["--profile", "test", "--no-sitemaps", "--resume"])
    manifest = assert_reconciled(out, proc2)
    urls = [r["url"] for r in records]
    expected = {site.url + "/"} | {f"{site.url}/p{i}" for i in range(pages)}
    assert manifest["parts"][0]["path"] == str(out) and manifest["parts"][0]["lines"] == len(records)
    assert manifest["parts"][0]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert sorted(urls) == sorted(expected), proc2.stderr[-3000:]  # every page, each exactly once
    assert killed_urls <= set(urls)
    assert manifest["resumed"] is True and manifest["counts"]["item"] == pages + 1


def test_a_ledger_mismatch_fails_the_crawl(serve, tmp_path: Path) -> None:
    site = serve(routes=_site_routes(4))
    out = tmp_path / "mismatch.jsonl"
    extensions = json.dumps({"boilerstrip.extensions.ledger.LedgerExtension": 600, "hostile_pipeline.SettleTwice": 700})
    proc, _ = _crawl_with_path(site.url + "/", out, str(Path(__file__).parent), ["-s", f"EXTENSIONS={extensions}"])
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "ledger mismatch" in proc.stderr
    manifest = read_manifest(out)
    assert manifest["reconciled"] is False
    assert manifest["settled_twice"][0]["url"] == site.url + "/p2"


@pytest.mark.slow
def test_scrapy_jobdir_pause_and_resume_keeps_the_first_runs_records(serve, tmp_path: Path) -> None:
    # 100 pages linked from the home page, 0.1 s each, one at a time: the stop after 22 comes with ~8 s of the
    # crawl left (a graceful stop waits for the one page in flight: 10x that and more still pauses it; with
    # 40 pages, a loaded machine finished the crawl before the SIGINT took effect)
    pages = 100
    routes = _site_routes(pages, delay_s=0.1)
    links = " ".join(f'<a href="/p{i}">p{i}</a>' for i in range(pages))
    routes["/"] = Reply(200, html_page(f"<p>{_words(10_000)}</p>{links}", "Home"), HTML, delay_s=0.1)
    site = serve(routes=routes)
    out = tmp_path / "job.jsonl"
    jobdir = tmp_path / "job"
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", site.url + "/", "-o", str(out), "--profile", "test",
           "--no-sitemaps", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", f"JOBDIR={jobdir}"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    part = output_paths(out).part
    # paused once 22 pages were fetched: fetches keep their pace (one at a time, 0.1 s) on a starved machine,
    # where the records lag behind them (the workers that read the pages get the CPU last)
    deadline = time.monotonic() + 300
    while sum(entry.path.startswith("/p") for entry in site.log) < 22:
        assert proc.poll() is None, "the crawl ended before it could be paused"
        assert time.monotonic() < deadline, "22 pages not fetched within 300 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # a graceful stop: Scrapy keeps its queue and dupefilter in JOBDIR
    _, stderr = proc.communicate(timeout=60)
    first = {r["url"] for r in read_jsonl(out if out.exists() else part)}
    assert 22 <= len(first) < pages + 1, stderr[-2000:]

    proc2, records = run_crawl(site.url + "/", out=out, args=["--profile", "test", "--no-sitemaps"], settings={"JOBDIR": jobdir})
    assert_reconciled(out, proc2)
    urls = [r["url"] for r in records]
    assert sorted(urls) == sorted({site.url + "/"} | {f"{site.url}/p{i}" for i in range(pages)}), proc2.stderr[-3000:]
    assert first <= set(urls)
    assert len(site.hits("/p0")) == 1  # Scrapy's JOBDIR: pages of the first run are not fetched again


def test_the_tombstones_of_a_file_are_its_removed_and_unseen_lines_however_spaced(tmp_path: Path) -> None:
    """The ledger leaves out a recurring crawl's tombstones (``change`` removed/unseen), found without
    parsing every record: compact and spaced JSON, and a page whose text quotes a tombstone's field is a
    page."""
    from boilerstrip.ledger.reader import tombstone_urls

    lines = [json.dumps({"url": "http://a.test/1", "change": "new", "text": "x"}, separators=(",", ":")),
             json.dumps({"url": "http://a.test/2", "change": "removed"}, separators=(",", ":")),
             json.dumps({"url": "http://a.test/3", "change": "unseen"}),
             json.dumps({"url": "http://a.test/4", "text": 'it says "change": "removed"', "change": "changed"}),
             '{"url": "http://a.test/5", "change" :  "removed"}',
             '{"url": "http://a.test/6", "change": "removed"']  # torn: not a line
    path = tmp_path / "o.jsonl"
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1])
    assert tombstone_urls(path) == {"http://a.test/2", "http://a.test/3", "http://a.test/5"}
