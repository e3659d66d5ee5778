"""Lean records: the trail (blocks, page_blocks, page_block_hashes) is written only when asked for, a lean
record says what was removed and why, and the finishing pass keeps a lean record's text as written."""

from __future__ import annotations

import io
import json

from boilerstrip.boilerplate.finish import removed_by_reason
from boilerstrip.feeds import SafeJsonLinesExporter
from boilerstrip.finishing import finish_crawl, finish_records
from boilerstrip.items import (DEFAULTS, EXPORT_FIELDS, RECORD_FIELDS, SCHEMA_VERSION, TRAIL_FIELDS, PageItem, compact_record,
                               complete_record, text_hash, without_trail)

TRAIL = set(TRAIL_FIELDS)


def _site_records(n: int = 12) -> list[dict]:
    records = []
    for i in range(n):
        blocks = [{"kind": "li", "text": "Home"}, {"kind": "li", "text": "Download"},
                  {"kind": "h1", "text": f"Page {chr(97 + i)}"},
                  {"kind": "p", "text": "The body: " + " ".join(chr(97 + i) + chr(97 + k % 26) * 3 for k in range(40))},
                  {"kind": "p", "text": "Copyright the site, all rights reserved"}]
        records.append({"url": f"http://site.test/docs/p{i}.html", "text": "", "markdown": "", "blocks": blocks,
                        "page_block_hashes": [], "flags": []})
    return records


def test_the_record_fields_split_into_lean_and_trail() -> None:
    assert SCHEMA_VERSION == 3
    assert EXPORT_FIELDS == [f for f in RECORD_FIELDS if f not in TRAIL]
    assert TRAIL <= set(RECORD_FIELDS) and "boilerplate_removed_by" in EXPORT_FIELDS
    record = {"url": "u", "blocks": [], "text": "t"}
    assert without_trail(record) == {"url": "u", "text": "t"} and "blocks" in record  # a copy
    lean = {"url": "u"}
    assert without_trail(lean) is lean


def _full_record(**changes) -> dict:
    record = {"schema_version": 2, "url": "http://site.test/a", "final_url": "http://site.test/a", "status": 200,
              "fetched_at": "2026-12-03T10:00:00Z", "depth": 0, "fetch": "http", "render_reason": None,
              "content_type": "text/html", "encoding": "utf-8", "title": "A", "lang": None, "description": None,
              "canonical_url": None, "author": None, "published": None, "modified": None, "method": "semantic",
              "attempts": [{"method": "semantic", "accepted": False, "chars": 0, "reason": "too_short"},
                           {"method": "density", "accepted": True, "chars": 5, "reason": "accepted"}],
              "confidence": 0.9, "text": "hello", "markdown": "hello", "content_hash": text_hash("hello"),
              "boilerplate_removed_chars": 0,
              "boilerplate_removed_blocks": 0, "boilerplate_removed_by": {}, "template_cluster": "root:0",
              "duplicate_of": None, "duplicate_similarity": None, "flags": [], "ai_opt_out": [], "change": "new",
              "first_seen": "2026-12-03T10:00:01Z", "last_changed": "2026-12-03T10:00:01Z"}
    record.update(changes)
    return record


def test_a_line_leaves_out_what_holds_its_default_and_reads_back_whole() -> None:
    full = _full_record()
    assert set(full) == set(EXPORT_FIELDS)
    line = compact_record(full)
    assert line == {"schema_version": 3, "url": "http://site.test/a", "status": 200, "fetched_at": "2026-12-03T10:00:00Z",
                    "content_type": "text/html", "encoding": "utf-8", "title": "A", "method": "semantic",
                    "attempts": [{"method": "semantic", "reason": "too_short"},
                                 {"method": "density", "accepted": True, "chars": 5, "reason": "accepted"}],
                    "confidence": 0.9, "text": "hello", "markdown": "hello", "template_cluster": "root:0", "change": "new",
                    "first_seen": "2026-12-03T10:00:01Z"}
    back = complete_record(line)
    assert back == {**full, "schema_version": 3} and list(back["attempts"][0]) == ["method", "accepted", "chars", "reason"]
    assert list(back) == list(full)  # the record's key order
    assert complete_record(full) == full  # a version-2 line (every field written) reads as it is
    older = {key: value for key, value in full.items() if key != "confidence"}  # a line from before confidence
    assert complete_record(older)["confidence"] is None
    # a value that only looks empty is not its default: kept
    kept = compact_record(_full_record(text="", markdown="", depth=1, status=0, fetch="browser", final_url="http://site.test/b",
                                       content_hash="0" * 64, last_changed="2026-12-04T00:00:00Z", flags=["x"]))
    assert kept["text"] == "" and kept["markdown"] == "" and kept["final_url"] == "http://site.test/b"
    assert kept["content_hash"] == "0" * 64 and kept["last_changed"] == "2026-12-04T00:00:00Z" and kept["fetch"] == "browser"
    assert "status" not in kept and kept["depth"] == 1 and kept["flags"] == ["x"]
    assert complete_record({"schema_version": 3, "url": "u"})["markdown"] is None  # Markdown off, not empty
    assert complete_record({"schema_version": 3, "url": "u", "text": ""})["content_hash"] == text_hash("")
    chunk = {"chunk_id": "c1", "url": "u", "text": "t"}  # not a page's line (no schema_version): left alone
    assert compact_record(chunk) == chunk == complete_record(chunk)
    # the trail is written whole, and not made up for a lean line; other lines are left alone
    assert compact_record({**full, "blocks": [], "page_blocks": None})["blocks"] == []
    assert "blocks" not in complete_record(line) and set(DEFAULTS).isdisjoint(TRAIL)
    tombstone = {"url": "http://site.test/gone", "change": "removed", "reason": "http_404", "last_seen": None}
    assert compact_record(tombstone) == tombstone == complete_record(tombstone)
    outcome = {"url": "http://site.test/x", "outcome": "failed", "reason": "http_500", "detail": None}
    assert compact_record(outcome) == outcome == complete_record(outcome)


def test_removed_by_reason_counts_blocks_and_chars_per_reason() -> None:
    blocks = [{"kind": "li", "text": " Home ", "removed": "template:site"},
              {"kind": "p", "text": "kept", "removed": None},
              {"kind": "li", "text": "Download", "removed": "template:site"},
              {"kind": "p", "text": "a sidebar", "removed": "region:outside", "md": "opaque"}]
    assert removed_by_reason(blocks) == {"region:outside": {"blocks": 1, "chars": 9},
                                         "template:site": {"blocks": 2, "chars": 12}}
    assert removed_by_reason([]) == {}


def test_the_pass_writes_lean_records_that_say_what_was_removed(tmp_path) -> None:
    src = tmp_path / "crawl.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _site_records()), encoding="utf-8")
    out, trailed = tmp_path / "out.jsonl", tmp_path / "trailed.jsonl"
    finish_crawl(src, out)
    finish_crawl(src, trailed, trail=True)
    lean = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    full = [json.loads(line) for line in trailed.read_text(encoding="utf-8").splitlines()]
    assert len(lean) == len(full) == 12
    for small, big in zip(lean, full):
        assert not TRAIL & set(small) and {"blocks", "page_block_hashes"} <= set(big)
        assert small == without_trail(big)
        assert small["text"].startswith("Page ") and "The body: " in small["text"]
        assert "Home" not in small["text"] and "Copyright" not in small["text"]
        assert small["boilerplate_removed_by"] == {"template:site": {"blocks": 3, "chars": 4 + 8 + 39}}
        assert small["boilerplate_removed_chars"] == 51 and small["boilerplate_removed_blocks"] == 3


def test_a_lean_record_is_kept_as_written_and_refinishing_changes_nothing(tmp_path) -> None:
    src = tmp_path / "crawl.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _site_records()), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    finish_crawl(src, out)
    first = out.read_bytes()
    summary = finish_crawl(out, out)  # a lean file finished again, in place
    assert out.read_bytes() == first
    assert summary["kept_as_written"] == 12
    # a lean record whose paragraphs repeat on every page keeps them: nothing says they were template
    lean = [{"url": f"http://site.test/p{i}.html", "text": f"Parameters\n\nText of page {i}", "flags": ["near_duplicate"],
             "duplicate_of": "http://site.test/x"} for i in range(10)]
    result = finish_records(lean)
    assert [r["text"] for r in result.records] == [r["text"] for r in lean]
    assert all(r["duplicate_of"] is None and r["flags"] == [] for r in result.records)  # decided again


def test_the_exporter_writes_the_trail_only_when_kept() -> None:
    item = PageItem(url="http://site.test/a", text="hello", blocks=[{"kind": "p", "text": "hello"}],
                    page_block_hashes=["0011"], page_blocks=[{"kind": "p", "text": "hello", "links": 0}])
    for keep in (False, True):
        buffer = io.BytesIO()
        exporter = SafeJsonLinesExporter(buffer, fields_to_export=list(EXPORT_FIELDS))
        exporter.keep_trail(keep)
        exporter.start_exporting()
        exporter.export_item(item)
        record = json.loads(buffer.getvalue())
        assert (TRAIL <= set(record)) is keep and bool(TRAIL & set(record)) is keep
        assert list(record) == [f for f in RECORD_FIELDS if f in record]  # the trail in its place
    buffer = io.BytesIO()
    exporter = SafeJsonLinesExporter(buffer)  # every field: the trail left out unless kept
    exporter.keep_trail(False)
    exporter.start_exporting()
    exporter.export_item(item)
    assert not TRAIL & set(json.loads(buffer.getvalue()))


def test_the_exporter_writes_compact_lines_that_read_back_whole() -> None:
    from boilerstrip.feeds import record_url

    item = PageItem(url="http://site.test/a", final_url="http://site.test/a", status=200, text="hello",
                    markdown="hello", content_hash=text_hash("hello"), attempts=[
                        {"method": "semantic", "accepted": True, "chars": 5, "reason": "accepted"}])
    buffer = io.BytesIO()
    exporter = SafeJsonLinesExporter(buffer, fields_to_export=list(EXPORT_FIELDS))
    exporter.start_exporting()
    exporter.export_item(item)
    line = buffer.getvalue().rstrip(b"\n")
    assert line.startswith(b'{"schema_version":3,"url":"http://site.test/a","status":200,')
    assert b": " not in line and b"null" not in line and b"final_url" not in line and b"content_hash" not in line
    assert record_url(line) == "http://site.test/a"
    record = complete_record(json.loads(line))
    assert record["final_url"] == "http://site.test/a" and record["content_hash"] == text_hash("hello")
    assert record["flags"] == [] and record["duplicate_of"] is None and set(record) == set(EXPORT_FIELDS)


def test_crawl_trail_reaches_the_finishing_pass(tmp_path) -> None:
    """``crawl --trail`` sets BOILERSTRIP_FEEDS_TRAIL; the finishing extension then writes the trail, and
    without it writes lean records (no crawl: the extension's pass over a crawl's intermediate output)."""
    import argparse

    from boilerstrip.commands.crawl import add_arguments
    from boilerstrip.run import build_settings
    from boilerstrip.extensions.finishing import FinishingExtension

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    for trail in (False, True):
        out = tmp_path / f"trail-{trail}" / "out.jsonl"
        out.parent.mkdir()
        args = parser.parse_args(["http://site.test/", "-o", str(out), *(["--trail"] if trail else [])])
        settings, _ = build_settings(args, out)
        assert settings.getbool("BOILERSTRIP_FEEDS_TRAIL") is trail
        settings.set("BOILERSTRIP_STATE_DIR", "", priority="cmdline")
        out.write_text("".join(json.dumps(r) + "\n" for r in _site_records()), encoding="utf-8")
        extension = FinishingExtension(out, settings)
        extension.reason = "finished"
        assert extension.finish() == "done"
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert len(records) == 12
        assert all(("blocks" in r) is trail and "Home" not in r["text"] for r in records)


def test_ctrl_c_during_the_finishing_pass_stops_it_and_leaves_the_output_as_crawled(tmp_path, monkeypatch) -> None:
    """The pass holds the reactor's thread, so the crawl's own SIGINT handler (which hands its work to the
    reactor) could not stop it: a Ctrl-C did nothing for the pass's whole length. Now a real SIGINT sent
    while the pass runs stops it at its next record, the output is left byte for byte as crawled, the manifest
    and the status say so, and the handlers before the pass are put back."""
    import argparse
    import os
    import signal
    import threading

    import boilerstrip.extensions.finishing as finishing
    from boilerstrip.commands.crawl import add_arguments
    from boilerstrip.run import build_settings

    assert threading.current_thread() is threading.main_thread()  # where Python delivers signals
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = tmp_path / "out.jsonl"
    settings, _ = build_settings(parser.parse_args(["http://site.test/", "-o", str(out)]), out)
    settings.set("BOILERSTRIP_STATE_DIR", "", priority="cmdline")
    out.write_text("".join(json.dumps(r) + "\n" for r in _site_records()), encoding="utf-8")
    crawled = out.read_bytes()
    real_pass = finishing.finish_crawl

    def interrupted_pass(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, once the pass's handlers are in place
        return real_pass(*args, **kwargs)

    monkeypatch.setattr(finishing, "finish_crawl", interrupted_pass)
    before = signal.getsignal(signal.SIGINT)
    stats: dict = {}

    class Stats:
        def set_value(self, key, value):
            stats[key] = value

        def get_value(self, key, default=None):
            return stats.get(key, default)

    extension = finishing.FinishingExtension(out, settings, stats=Stats())
    extension.reason = "finished"
    assert extension.finish() == "interrupted"
    assert out.read_bytes() == crawled and not list(tmp_path.glob(".out.jsonl.*"))
    manifest = json.loads((tmp_path / "out.manifest.json").read_text())
    assert manifest["finished"] is False and manifest["finishing"] == {"status": "interrupted", "signal": "SIGINT"}
    assert stats["boilerstrip/finishing/stopped_by"] == "SIGINT"
    assert signal.getsignal(signal.SIGINT) is before
    # without the signal the same pass runs to its end (no manifest: no ledger to reconcile, as in the first run)
    monkeypatch.setattr(finishing, "finish_crawl", real_pass)
    (tmp_path / "out.manifest.json").unlink()
    extension = finishing.FinishingExtension(out, settings, stats=Stats())
    extension.reason = "finished"
    assert extension.finish() == "done" and out.read_bytes() != crawled
