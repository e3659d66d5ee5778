"""boilerstrip.fastjson: orjson writes what the json module writes, and hands back what it refuses."""

from __future__ import annotations

import datetime
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from boilerstrip.boilerplate.finish import dump_record
from boilerstrip.extraction import extract
from boilerstrip.fastjson import compact_utf8, lossless_json
from boilerstrip.state import PageCopy
from boilerstrip.state.sqlite import _PageCopies

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import extraction_benchmark as bench  # noqa: E402

from conftest import run_crawl  # noqa: E402

SEPARATORS = (",", ":")
DEMO_SITE = Path(__file__).resolve().parents[1] / "boilerstrip" / "demo" / "site"


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=SEPARATORS).encode("utf-8")


def test_every_code_point_and_escape_is_written_as_json_writes_it() -> None:
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    value = {"text": text, "quote": '"\\\b\f\n\r\t/\x00\x1f\x7f\u2028\u2029', "esc": "\\ufffd"}
    assert compact_utf8(value) == _json(value)


@pytest.mark.parametrize("number", [0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 0.0, -0.0, 0.1, 1 / 3, 0.9529, 1e-4,
                                    123456789.123, 1e15, 1e16, 1e22, 1.7976931348623157e308, -2.5e-3])
def test_numbers_are_written_as_json_writes_them(number: float) -> None:
    value = {"n": number, "list": [number, True, False, None], "tuple": (number,)}
    assert compact_utf8(value) == _json(value)


def test_the_two_documented_differences_read_back_as_the_same_value() -> None:
    small = {"n": 1e-05}
    assert compact_utf8(small) == b'{"n":0.00001}' and json.loads(compact_utf8(small)) == small
    assert compact_utf8({"n": float("nan")}) == b'{"n":null}'


@pytest.mark.parametrize("value", [
    {"text": "lone \ud800 surrogate"},                 # UTF-8 cannot hold it: the caller repairs or escapes it
    {1: "a key that is not a string"},
    {"n": 2**64},                                       # beyond 64 bits
    {"at": datetime.datetime(2026, 12, 7)},             # json calls its default for it
    {"s": type("Str", (str,), {})("a str subclass")},  # json writes it by its base type
    {"set": {1, 2}},
])
def test_what_orjson_refuses_or_writes_its_own_way_goes_back_to_json(value: dict) -> None:
    assert compact_utf8(value) is None


def test_a_dumped_record_with_a_lone_surrogate_is_repaired_as_before() -> None:
    assert dump_record({"url": "http://a.test/", "text": "x\ud800y"}) == '{"url":"http://a.test/","text":"x\ufffdy"}'


def test_a_page_copy_keeps_a_lone_surrogate_and_every_other_value(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "copies.sqlite3")
    db.execute("CREATE TABLE page_copies (url TEXT PRIMARY KEY, record TEXT, links TEXT)")
    copies = _PageCopies(db)
    for record in ({"url": "http://a.test/", "text": "hostile \ud83d page"}, {"url": "http://a.test/", "text": "é ✓ \U0001f600"}):
        copies.put(PageCopy("http://a.test/", record, {"complete": True, "urls": ["http://a.test/b"]}))
        assert copies.get("http://a.test/").record == record
    assert lossless_json({"t": "\ud800"}) == '{"t": "\\ud800"}'  # json's ASCII escape: it reads back
    assert lossless_json({"t": "é"}) == '{"t":"é"}'


def test_extractions_of_the_article_set_are_written_byte_for_byte_as_json_writes_them() -> None:
    pages = bench.load_pages(bench.ARTICLE_DATASET)
    assert len(pages) == 181
    for page in pages:
        result = extract(page.html, url=page.url)
        value = {**result.to_dict(), "headline": result.headline.as_dict() if result.headline else None}
        assert compact_utf8(value) == _json(value), page.page_id


def test_a_crawl_with_its_trail_writes_the_lines_json_would_write(serve, tmp_path: Path) -> None:
    site = serve(root=DEMO_SITE)
    out = tmp_path / "out.jsonl"
    proc, records = run_crawl(site.url + "/index.html", out=out, args=["--profile", "own-site", "--trail"])
    assert proc.returncode == 0, proc.stderr
    lines = out.read_bytes().splitlines()
    assert len(lines) >= 5 and any(b'"page_blocks"' in line for line in lines)
    for line in lines:
        assert _json(json.loads(line)) == line
