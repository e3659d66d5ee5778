"""WARC in and out (docs/warc.md): the writer, the reader's handling of bad input, the crawl's WARC and its
replay through the crawl's pipelines."""

from __future__ import annotations

import logging

import gzip as gziplib
import json
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from _crawlsite import FAST, HTML
from _incrawl import run_cli
from _warcfiles import gz, http_response, warc_record, write_warc
from conftest import ROOT, Reply, read_jsonl, run_crawl

from boilerstrip.warc import (WarcParams, WarcWriter, build_index, http_request_block, http_response_block,
                              parse_http_response, read_record, recover_open_files, scan_warc)

PAGE = b"<!DOCTYPE html><html><head><title>T</title></head><body><main><h1>Title</h1><p>%s</p></main></body></html>"


def _exchange(writer: WarcWriter, i: int, **kwargs) -> str:
    body = PAGE % (b"page %d, with a sentence of text" % i)
    return writer.write_exchange(f"http://a.test/{i}", http_request_block("GET", f"/{i}", [("Host", "a.test")]),
                                 http_response_block(200, [("Content-Type", "text/html"),
                                                           ("Transfer-Encoding", "chunked")], body), body, **kwargs)


def _members(path: str) -> int:
    data, count = open(path, "rb").read(), 0
    while data:
        inflater = zlib.decompressobj(wbits=31)
        inflater.decompress(data)
        assert inflater.eof
        data, count = inflater.unused_data, count + 1
    return count


# -- writing ----------------------------------------------------------------------------------------------------
def test_writer_one_gzip_member_per_record_rotates_and_reads_in_warcio(tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    writer = WarcWriter(WarcParams(dir=str(tmp_path), max_file_bytes=2048))
    for i in range(12):
        _exchange(writer, i)
    writer.close()
    assert len(writer.files) > 1 and not list(tmp_path.glob("*.open"))
    kinds: list[str] = []
    for path in writer.files:
        with open(path, "rb") as handle:
            records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers) for r in ArchiveIterator(handle)]
        assert records[0][0] == "warcinfo"  # every file says who wrote it
        assert _members(path) == len(records)  # each record its own gzip member
        assert all(h.protocol == "WARC/1.1" for *_, h in records)
        kinds += [kind for kind, *_ in records[1:]]
    assert kinds.count("response") == 12 and kinds.count("request") == 12
    record = read_record(next(e for e in scan_warc(writer.files[0]) if e.kind == "response"))
    http = parse_http_response(record.block)
    assert ("X-Boilerstrip-Orig-Transfer-Encoding", "chunked") in http.headers  # the body is not chunked
    assert record.header("WARC-Payload-Digest").startswith("sha1:")


def test_revisit_record_for_a_304(tmp_path):
    writer = WarcWriter(WarcParams(dir=str(tmp_path)))
    writer.write_exchange("http://a.test/", b"GET / HTTP/1.1\r\n\r\n", http_response_block(304, [("ETag", '"v1"')], b""),
                          b"", revisit_of=("http://a.test/", ""))
    writer.close()
    revisit = next(e for e in scan_warc(writer.files[0]) if e.kind == "revisit")
    assert revisit.header("WARC-Profile").endswith("/revisit/server-not-modified")
    assert revisit.header("WARC-Refers-To-Target-URI") == "http://a.test/"


def test_a_file_cut_by_a_crash_reads_back_to_its_last_whole_record(tmp_path):
    writer = WarcWriter(WarcParams(dir=str(tmp_path)))
    for i in range(5):
        _exchange(writer, i)
    path = Path(writer.current_file)
    whole = path.stat().st_size
    with open(path, "ab") as handle:  # the crash: half of the next record's member
        handle.write(gz(warc_record("response", "http://a.test/torn", http_response(PAGE % b"torn")))[:40])
    entries = list(scan_warc(path))
    assert [e.error for e in entries][-1] == "warc_truncated" and sum(e.error is None for e in entries) == 11
    recovered = recover_open_files(tmp_path)  # what the next crawl with --warc does first
    assert len(recovered) == 1 and recovered[0].records == 11 and recovered[0].cut_bytes == 40
    final = path.with_name(path.name.removesuffix(".open"))
    assert final.stat().st_size == whole and all(e.error is None for e in scan_warc(final))


def test_a_write_error_cuts_the_file_back_to_whole_records(tmp_path):
    writer = WarcWriter(WarcParams(dir=str(tmp_path)))
    _exchange(writer, 0)
    size = Path(writer.current_file).stat().st_size
    real = writer._handle

    class FullDisk:
        def write(self, data):
            real.write(bytes(data)[:10])  # part of it went to disk
            raise OSError(28, "No space left on device")

        def truncate(self, n):
            return real.truncate(n)

    writer._handle = FullDisk()
    with pytest.raises(OSError):
        _exchange(writer, 1)
    assert writer.failed is not None and Path(writer.current_file).stat().st_size == size
    writer._handle = real
    writer.close()
    assert all(e.error is None for e in scan_warc(writer.files[0]))


# -- reading bad input ------------------------------------------------------------------------------------------
def _good(i: int, site: str = "a.test") -> bytes:
    return warc_record("response", f"http://{site}/good{i}", http_response(PAGE % (b"good %d" % i)))


def _zeros_member(megabytes: int) -> bytes:
    """A gzip member holding one response record of ``megabytes`` MiB of body, compressed piece by piece."""
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
    piece = b"<p>" + b"a" * (1024 * 1024 - 3)
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.test/huge\r\n"
            f"Content-Type: application/http;msgtype=response\r\n"
            f"Content-Length: {len(http) + megabytes * len(piece)}\r\n\r\n").encode()
    member = zlib.compressobj(1, zlib.DEFLATED, 31)
    out = [member.compress(head + http)]
    for _ in range(megabytes):
        out.append(member.compress(piece))
    out.append(member.compress(b"\r\n\r\n"))
    out.append(member.flush())
    return b"".join(out)


def test_bad_records_each_get_a_reason_and_every_other_record_is_read(tmp_path):
    started = time.monotonic()
    truncated = gz(warc_record("response", "http://a.test/truncated", http_response(PAGE % (b"x" * 4000))))
    members = [
        gz(_good(1)),
        truncated[: len(truncated) // 2],  # a gzip member cut short, followed by others
        gz(_good(2)),
        gz(warc_record("response", "http://a.test/lies", http_response(PAGE % b"lies"), length=5000)),  # wrong length
        gz(_good(3)),
        gz(warc_record("response", "dns:a.test", b"20261101100000\na.test.\t300\tIN\tA\t127.0.0.1\n",
                       content_type="text/dns")),  # a non-HTTP record
        gz(_good(4)),
        _zeros_member(100),  # a 100 MB record
        gz(_good(5)),
        b"\x1f\x8b\x08garbage that is no deflate stream at all",  # a corrupt member
        gz(_good(6)),
    ]
    path = write_warc(tmp_path / "bad.warc.gz", [], gzip=False)
    with open(path, "wb") as handle:
        for member in members:
            handle.write(member)
    entries = list(scan_warc(path))
    errors = {(e.url, e.error) for e in entries if e.error}
    assert ("http://a.test/lies", "warc_bad_length") in errors
    assert ("http://a.test/huge", "warc_too_large") in errors
    assert any(error == "warc_truncated" for _, error in errors)
    assert any(error == "warc_corrupt_gzip" for _, error in errors)
    good = sorted(e.url for e in entries if e.error is None and e.url and "good" in e.url)
    assert good == [f"http://a.test/good{i}" for i in range(1, 7)]
    dns = next(e for e in entries if e.url == "dns:a.test")
    with pytest.raises(ValueError):
        parse_http_response(read_record(dns).block)
    assert time.monotonic() - started < 20


def test_a_member_cut_short_is_truncated_wherever_its_stream_breaks_on_the_next(tmp_path):
    """A cut member's deflate stream runs on into the next member and fails there, at a place that depends on
    the compressed bytes (each record has its own id): the cut is "truncated" every time, never "corrupt"
    (it was "corrupt" when the failure came in the few bytes fed together with the next member's first)."""
    errors = []
    for i in range(200):
        cut = gz(warc_record("response", f"http://a.test/cut{i}", http_response(PAGE % (b"x" * 4000))))
        path = tmp_path / f"cut{i}.warc.gz"
        path.write_bytes(gz(_good(1)) + cut[: len(cut) // 2] + gz(_good(2)))
        errors += [e.error for e in scan_warc(path) if e.error]
    assert errors == ["warc_truncated"] * 200


def test_plain_warc_with_a_wrong_content_length_reads_on(tmp_path):
    records = [_good(1), warc_record("response", "http://a.test/short", http_response(PAGE % b"short"), length=30), _good(2)]
    path = write_warc(tmp_path / "plain.warc", records, gzip=False)
    entries = list(scan_warc(path))
    assert [(e.url, e.error) for e in entries] == [("http://a.test/good1", None), ("http://a.test/short", "warc_bad_length"),
                                                   ("http://a.test/good2", None)]
    assert b"good 2" in parse_http_response(read_record(entries[2]).block).body


def test_a_file_that_is_no_warc_is_told_apart_from_a_damaged_warc(tmp_path):
    from boilerstrip.warc import not_a_warc

    good = warc_record("response", "http://a.test/", http_response(PAGE % b"good"))
    plain = write_warc(tmp_path / "plain.warc", [good], gzip=False)
    gzipped = write_warc(tmp_path / "g.warc.gz", [good])
    assert not_a_warc(plain) is None and not_a_warc(gzipped) is None
    # damaged at the start, records after it: still a WARC (the scan reads what it can)
    junk_first = tmp_path / "junk-first.warc"
    junk_first.write_bytes(b"some bytes a writer left\r\n" + plain.read_bytes())
    corrupt_first = tmp_path / "corrupt-first.warc.gz"
    corrupt_first.write_bytes(b"\x1f\x8b\x08garbage that is no deflate stream" + gzipped.read_bytes())
    blank_first = tmp_path / "blank-first.warc"
    blank_first.write_bytes(b"\r\n\r\n" + plain.read_bytes())
    assert not_a_warc(junk_first) is None and not_a_warc(corrupt_first) is None and not_a_warc(blank_first) is None
    # no record at all near the start
    cases = {
        "empty": (b"", "empty"),
        "jsonl": (b'{"url": "http://a.test/", "text": "hi"}\n', "it starts with '{\"url\""),
        "binary": (bytes(range(256)) * 4, "binary data"),
        "gzipped-jsonl": (gziplib.compress(b'{"url": 1}\n' * 50), "does not start with a WARC record"),
        "zstd": (b"\x28\xb5\x2f\xfd" + bytes(64), "compressed in a way"),
    }
    for name, (data, says) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        problem = not_a_warc(path)
        assert problem and says in problem, (name, problem)


def test_chunked_wire_bytes_are_dechunked():
    http = parse_http_response(http_response(PAGE % (b"y" * 3000), chunked=True))
    assert http.body == PAGE % (b"y" * 3000) and http.notes == ("dechunked",)
    assert not any(k.lower() == "transfer-encoding" for k, _ in http.headers)


def test_index_groups_records_by_site_on_disk(tmp_path):
    records = [_good(1, "a.test"), _good(1, "b.test"), _good(2, "a.test"), warc_record("request", "http://b.test/x", b"GET")]
    path = write_warc(tmp_path / "two.warc.gz", records)
    index = build_index([path], tmp_path / "index.sqlite")
    assert index.sites() == ["http://a.test:80", "http://b.test:80"]
    assert [e.url for e in index.entries_of("http://a.test:80")] == ["http://a.test/good1", "http://a.test/good2"]
    assert index.summary() == {"response": 3, "request": 1}


# -- the crawl's WARC (glue) ------------------------------------------------------------------------------------
def test_middleware_records_responses_revisits_and_renders(tmp_path):
    from scrapy.http import HtmlResponse, Request, Response
    from scrapy.utils.test import get_crawler

    from boilerstrip.downloadermiddlewares.warc import WarcWriterMiddleware

    crawler = get_crawler(settings_dict={"BOILERSTRIP_WARC_DIR": str(tmp_path)})
    middleware = WarcWriterMiddleware.from_crawler(crawler)
    middleware.spider_opened()
    encoded = gziplib.compress(PAGE % b"zipped")
    request = Request("http://a.test/p?q=1")
    middleware.process_response(request, Response(request.url, body=encoded, request=request, headers={
        "Content-Type": "text/html", "Content-Encoding": "gzip"}))
    conditional = Request("http://a.test/old", headers={"If-None-Match": '"v1"'})
    middleware.process_response(conditional, Response(conditional.url, status=304, request=conditional))
    rendered = Request("http://a.test/p?q=1", meta={"playwright": True})
    middleware.process_response(rendered, HtmlResponse(rendered.url, body=PAGE % b"rendered", request=rendered))
    middleware.spider_closed()
    entries = list(scan_warc(middleware.writer.files[0]))
    assert [e.kind for e in entries] == ["warcinfo", "response", "request", "revisit", "request", "metadata"]
    response = parse_http_response(read_record(entries[1]).block)
    assert response.body == encoded and ("Content-Encoding", "gzip") in response.headers  # as it came
    assert read_record(entries[2]).block.startswith(b"GET /p?q=1 HTTP/1.1\r\nHost: a.test\r\n")
    assert entries[5].header("WARC-Refers-To") == entries[1].header("WARC-Record-ID")
    assert read_record(entries[5]).block == PAGE % b"rendered"
    assert crawler.stats.get_value("boilerstrip/warc/records/revisit") == 1


def test_a_crawl_without_warc_says_nothing_of_the_writer(caplog):
    # the WARC writer is off unless asked for: Scrapy disables it without a WARNING line on every crawl
    from scrapy.core.downloader.middleware import DownloaderMiddlewareManager
    from scrapy.exceptions import NotConfigured
    from scrapy.utils.test import get_crawler

    from boilerstrip.downloadermiddlewares.warc import WarcWriterMiddleware

    with pytest.raises(NotConfigured):
        WarcWriterMiddleware.from_crawler(get_crawler())
    crawler = get_crawler(settings_dict={
        "DOWNLOADER_MIDDLEWARES_BASE": {}, "DOWNLOADER_MIDDLEWARES": {WarcWriterMiddleware: 100}})
    with caplog.at_level(logging.DEBUG):
        chain = DownloaderMiddlewareManager.from_crawler(crawler)
    assert not chain.middlewares and "WarcWriterMiddleware" not in caplog.text


def _replay(*files, out, args=()) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """``boilerstrip warc FILE... -o OUT`` (the CLI's code path, in a forked child: ``_incrawl.run_cli``)."""
    proc = run_cli(["warc", *files, "-o", out, "--profile", "test", *args], timeout=240)
    return proc, read_jsonl(out)


def _ledger(out: Path) -> dict[str, str]:
    return {e["url"]: f"{e['outcome']}:{e['reason']}".rstrip(":") for e in read_jsonl(out.with_suffix(".ledger.jsonl"))}


def _etag_page(title: str, links: list[str]) -> Reply:
    anchors = "".join(f'<li><a href="{h}">{h}</a></li>' for h in links)
    html = (f"<!DOCTYPE html><html><head><title>{title}</title></head><body><nav><ul>{anchors}</ul></nav><main>"
            f"<h1>{title}</h1><p>The page called {title} says a few plain sentences about {title}.</p></main>"
            "<footer><p>The same footer on every page of this small site.</p></footer></body></html>")
    return Reply(200, html.encode(), HTML + (("ETag", f'"{title}-v1"'),))


def _etag_site(serve):
    links = [f"/p{i}" for i in range(1, 6)]
    return serve(routes={"/": _etag_page("home", links), **{h: _etag_page(h.strip("/"), ["/"]) for h in links}})


@pytest.mark.slow
@pytest.mark.timeout(600)  # two real runs, each a few seconds alone, minutes on a loaded shared machine
def test_crawl_warc_round_trip(serve, tmp_path):
    server = _etag_site(serve)
    proc, crawled = run_crawl(server.url + "/", out=tmp_path / "crawl.jsonl",
                              args=[*FAST, "--warc", str(tmp_path / "warc")])
    assert proc.returncode == 0, proc.stderr
    assert "WARC: " in proc.stderr and len(crawled) == 6
    # the folder stands for the WARC files under it
    proc, replayed = _replay(tmp_path / "warc", out=tmp_path / "replay.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert {r["url"]: (r["text"], r["markdown"]) for r in replayed} == {r["url"]: (r["text"], r["markdown"]) for r in crawled}
    assert (tmp_path / "replay.manifest.json").exists() and (tmp_path / "replay.report" / "template-report.json").exists()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_recurring_crawl_writes_revisits_for_304s(serve, tmp_path):
    server = _etag_site(serve)
    state = tmp_path / "state"
    for run in ("first", "again"):
        proc, _ = run_crawl(server.url + "/", out=tmp_path / f"{run}.jsonl",
                            args=[*FAST, "--warc", str(tmp_path / run), "--state", str(state)])
        assert proc.returncode == 0, proc.stderr
    kinds = [e.kind for f in (tmp_path / "again").glob("*.warc.gz") for e in scan_warc(f)]
    assert kinds.count("revisit") >= 6 and "revisits (304)" in proc.stderr
    first = [e.kind for f in (tmp_path / "first").glob("*.warc.gz") for e in scan_warc(f)]
    assert "revisit" not in first


@pytest.mark.timeout(600)
def test_replay_of_a_foreign_warc_accounts_for_every_response(tmp_path):
    site = "http://w.test"
    pdf = http_response(b"%PDF-1.4 binary", headers=(("Content-Type", "application/pdf"),))
    records = [
        warc_record("warcinfo", None, b"software: Wget/1.21\r\n", content_type="application/warc-fields"),
        warc_record("request", f"{site}/robots.txt", b"GET /robots.txt HTTP/1.1\r\n\r\n", "application/http;msgtype=request"),
        warc_record("response", f"{site}/robots.txt", http_response(b"User-agent: *\nDisallow: /private\n",
                                                                    headers=(("Content-Type", "text/plain"),))),
        warc_record("response", f"{site}/", http_response(PAGE % b"the home page of the site", chunked=True)),
        warc_record("response", f"{site}/zipped", http_response(gziplib.compress(PAGE % b"a zipped page of the site"),
                    headers=(("Content-Type", "text/html"), ("Content-Encoding", "gzip")))),
        warc_record("response", f"{site}/noai", http_response(PAGE % b"tagged page",
                    headers=(("Content-Type", "text/html"), ("X-Robots-Tag", "noai")))),
        warc_record("response", f"{site}/meta", http_response(
            b"<html><head><meta name='robots' content='noai, noimageai'></head><body><p>meta page</p></body></html>")),
        warc_record("response", f"{site}/tdm", http_response(PAGE % b"reserved page",
                    headers=(("Content-Type", "text/html"), ("tdm-reservation", "1")))),
        warc_record("response", f"{site}/private/page", http_response(PAGE % b"a private page")),
        warc_record("response", f"{site}/moved", http_response(b"", status="301 Moved", headers=(("Location", f"{site}/"),))),
        warc_record("response", f"{site}/refresh", http_response(  # what a crawl follows as a redirect
            b"<html><head><meta http-equiv='refresh' content='0; url=/'></head><body></body></html>")),
        warc_record("response", f"{site}/file.pdf", pdf),
        warc_record("response", f"{site}/gone", http_response(b"not here", status="404 Not Found")),
        warc_record("response", f"{site}/notcp", b"this is not an HTTP message"),
        warc_record("response", f"{site}/lies", http_response(PAGE % b"lies"), length=9999),
        warc_record("metadata", f"{site}/", b"outlinks: 3\r\n", content_type="application/warc-fields"),
        warc_record("response", f"{site}/", http_response(PAGE % b"a second capture")),  # a repeated URL
    ]
    plain = write_warc(tmp_path / "wget.warc", records[:9], gzip=False)
    gzipped = write_warc(tmp_path / "more.warc.gz", records[9:])
    out = tmp_path / "out.jsonl"
    proc, pages = _replay(plain, gzipped, out=out)
    assert proc.returncode == 0, proc.stderr
    ledger = _ledger(out)
    expected = {f"{site}/": "item", f"{site}/zipped": "item", f"{site}/noai": "item", f"{site}/meta": "item",
                f"{site}/tdm": "item", f"{site}/private/page": "item", f"{site}/robots.txt": "filtered:not_html",
                f"{site}/moved": "filtered:redirect", f"{site}/refresh": "filtered:redirect",
                f"{site}/file.pdf": "filtered:not_html",
                f"{site}/gone": "failed:http_404", f"{site}/notcp": "failed:warc_not_http",
                f"{site}/lies": "failed:warc_bad_length"}
    assert {url: ledger.get(url) for url in expected} == expected
    by_url = {r["url"]: r for r in pages}
    assert "the home page" in by_url[f"{site}/"]["text"] and "zipped page" in by_url[f"{site}/zipped"]["text"]
    assert by_url[f"{site}/noai"]["ai_opt_out"] and by_url[f"{site}/meta"]["ai_opt_out"]
    assert by_url[f"{site}/tdm"]["ai_opt_out"] and not by_url[f"{site}/zipped"]["ai_opt_out"]
    manifest = json.loads(out.with_suffix(".manifest.json").read_text())
    assert manifest["reconciled"] is True
    assert "1 metadata" in proc.stderr and "1 warcinfo" in proc.stderr
    # the command's own lines are named after it: no "boilerstrip crawl:" from a command that crawled nothing
    said = [line.split(":", 1)[0] for line in proc.stderr.splitlines() if line.startswith("boilerstrip ")]
    assert said and set(said) == {"boilerstrip warc"}, proc.stderr
    assert any(line.startswith("boilerstrip warc: finishing pass: ") for line in proc.stderr.splitlines())
    # --robots: the robots.txt captured in the WARC is obeyed
    proc, pages = _replay(plain, gzipped, out=tmp_path / "robots.jsonl", args=["--robots"])
    assert proc.returncode == 0, proc.stderr
    assert _ledger(tmp_path / "robots.jsonl")[f"{site}/private/page"] == "filtered:robots_disallowed"


def test_bad_arguments_exit_2_before_anything_is_written(tmp_path):
    proc = run_cli(["warc", tmp_path / "missing.warc.gz", "-o", tmp_path / "o.jsonl"], timeout=60)
    assert proc.returncode == 2 and "is not a file" in proc.stderr and not (tmp_path / "o.jsonl").exists()
    # a crawl's JSONL given where a WARC belongs: refused, not "replayed" into an empty output
    (tmp_path / "crawl.jsonl").write_text('{"url": "http://a.test/", "text": "a page"}\n')
    proc = run_cli(["warc", tmp_path / "crawl.jsonl", "-o", tmp_path / "o.jsonl"], timeout=60)
    assert proc.returncode == 2 and "is not a WARC file" in proc.stderr, proc.stderr
    assert not list(tmp_path.glob("o.*")) and not (tmp_path / ".boilerstrip-state").exists()
    (tmp_path / "nowarcs" / ".hidden").mkdir(parents=True)  # a folder: its WARC files; none here (a hidden one
    (tmp_path / "nowarcs" / "notes.txt").write_text("x")     # does not count)
    (tmp_path / "nowarcs" / ".hidden" / "a.warc.gz").write_bytes(b"")
    proc = run_cli(["warc", tmp_path / "nowarcs", "-o", tmp_path / "o.jsonl"], timeout=60)
    assert proc.returncode == 2 and "is a folder without WARC files" in proc.stderr, proc.stderr
    assert not list(tmp_path.glob("o.*"))
    (tmp_path / "afile").write_text("x")
    proc = run_cli(["crawl", "http://127.0.0.1:9/", "-o", tmp_path / "c.jsonl", "--warc", tmp_path / "afile"], timeout=60)
    assert proc.returncode == 2 and "--warc" in proc.stderr


@pytest.mark.benchmark_floor
@pytest.mark.timeout(600)
def test_many_sites_floor(tmp_path):
    """A small version of ``warc_benchmark.py --parts many``: 12 generated sites, each with its own template,
    5 to 200 pages; template leakage at most the benchmark's bar (1 % of pages)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("warc_benchmark", ROOT / "benchmarks" / "warc_benchmark.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    path = tmp_path / "many.warc.gz"
    templates = bench.generate_many(path, 12)
    proc, records = _replay(path, out=tmp_path / "many.jsonl")
    assert proc.returncode == 0, proc.stderr
    texts = {r["url"]: r.get("text") or "" for r in records}
    responses = sum(1 for e in scan_warc(path) if e.kind == "response")
    leaked, pages = bench.leakage(texts, templates)
    assert pages == responses  # every page of every site in the output
    assert leaked <= bench.BARS["max_leakage"] * pages, f"{leaked} of {pages} pages keep template text"


def test_a_stopped_replay_says_to_run_it_again_not_to_resume(tmp_path):
    # boilerstrip warc has no --resume: its stop line said "the same command with --resume goes on"
    from _incrawl import cli_interrupted
    from _warcfiles import template_page

    from boilerstrip.run import stopped_early

    assert stopped_early("shutdown", resumable=False) == (
        "stopped early (shutdown); run the same command again (a replay reads its WARC files from the start)")
    assert stopped_early("write_error", write_errno="ENOSPC", resumable=False).endswith(
        "free space, then the same command again")
    nav = [f"/p{i}" for i in range(5)]
    records = [warc_record("response", f"http://w.test/p{i}", http_response(
        template_page("w.test", f"Page {i}", f"The text of page {i}, its own words. " * 20, nav))) for i in range(1500)]
    warc = write_warc(tmp_path / "big.warc.gz", records)
    part = tmp_path / "o.jsonl.part"
    # SIGINT once the replay runs: its first records are written
    code, shown, _took = cli_interrupted(["warc", warc, "-o", tmp_path / "o.jsonl"],
                                         lambda: part.exists() and part.stat().st_size > 0)
    assert code == 1, shown[-3000:]
    assert shown.strip().splitlines()[-1] == ("boilerstrip warc: stopped early (shutdown); run the same command again "
                                              "(a replay reads its WARC files from the start)"), shown[-3000:]
    assert "--resume" not in shown, shown[-3000:]
