"""The finishing pass: the step runner, and the same output from `scrapy crawl` and `boilerstrip crawl`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from boilerstrip.demo.server import SiteServer
from boilerstrip.demo.sitegen import SITE_DIR
from boilerstrip.finishing import FinishContext, Spill, Step, run_steps
from boilerstrip.state import crawl_layout
from _incrawl import run_cli
from conftest import read_jsonl, run_crawl


#: both entry points read the pages without a browser (rendering has its own tests)
NO_BROWSER = ("-s", "BOILERSTRIP_RENDER_MODE=never")


class _DropOdd(Step):
    name = "odd"

    def run(self, records, context):
        for record in records:
            if record["n"] % 2:
                self.drop(record, "odd", context, n=record["n"])
            else:
                yield record


class _Double(Step):
    name = "double"

    def run(self, records, context):
        for record in records:
            self.count(context, "seen")
            yield {**record, "n": record["n"] * 2}


def test_steps_chain_lazily_and_count_their_drops() -> None:
    pulled = []

    def source():
        for n in range(6):
            pulled.append(n)
            yield {"url": f"http://s/{n}", "n": n}

    context = FinishContext()
    stream = run_steps(source(), [_DropOdd(), _Double()], context)
    assert pulled == []  # nothing runs until the result is read
    assert [r["n"] for r in stream] == [0, 4, 8]
    assert context.counts == {"odd/dropped/odd": 3, "double/seen": 3}
    assert context.dropped_by_url() == {"http://s/1": "odd", "http://s/3": "odd", "http://s/5": "odd"}
    assert [d.detail["n"] for d in context.dropped] == [1, 3, 5] and {d.step for d in context.dropped} == {"odd"}


def test_spill_keeps_offsets_not_records() -> None:
    with Spill() as spill:
        spill.put("b", {"text": "second \udc80"})
        spill.put("a", {"text": "first"})
        spill.put("a", {"text": "ignored"})  # taken: kept as it was
        spill.put("a", {"text": "replaces"}, replace=lambda old, new: new["text"] > old["text"])
        assert sorted(spill.keys()) == ["a", "b"]
        assert spill.get("a") == {"text": "replaces"} and spill.get("b") == {"text": "second \udc80"}


def _scrapy_crawl(url: str, out: Path) -> subprocess.CompletedProcess:
    """`scrapy crawl site -a url=URL -O OUT` from the project folder, as scrapyd or a Scrapy user runs it."""
    return run_cli(["crawl", "site", "-a", f"url={url}", "-O", str(out), "-s", "BOILERSTRIP_PROFILE=test", *NO_BROWSER,
                    "-s", "LOG_LEVEL=WARNING"], scrapy=True, timeout=600)


@pytest.mark.slow
def test_scrapy_crawl_and_boilerstrip_crawl_write_the_same_output(tmp_path: Path) -> None:
    """The demo site (vendored: a template on every page, robots.txt, sitemaps, a near duplicate) through
    both entry points: the same records, each with its template report, reconciled manifest and ledger."""
    with SiteServer(root=SITE_DIR) as server:
        start = server.url + "/"
        a, b = tmp_path / "a" / "a.jsonl", tmp_path / "b" / "b.jsonl"
        a.parent.mkdir()
        proc_a = _scrapy_crawl(start, a)
        proc_b, _ = run_crawl(start, out=b, args=["--profile", "test", *NO_BROWSER], timeout=600)
    assert proc_a.returncode == 0, proc_a.stderr[-3000:]
    assert proc_b.returncode == 0, proc_b.stderr[-3000:]
    records_a, records_b = read_jsonl(a), read_jsonl(b)
    assert len(records_a) > 10
    assert [r["url"] for r in records_a] == [r["url"] for r in records_b]  # sorted by URL, both
    assert {r["url"]: r["text"] for r in records_a} == {r["url"]: r["text"] for r in records_b}
    for out in (a, b):
        layout = crawl_layout(out)
        report = json.loads((layout.report_dir / "template-report.json").read_text(encoding="utf-8"))
        assert report["pages"] >= len(read_jsonl(out))
        manifest = json.loads(layout.manifest.read_text(encoding="utf-8"))
        assert manifest["reconciled"] is True and manifest["output"]["record_lines"] == len(read_jsonl(out))
        ledger = [json.loads(line) for line in layout.ledger.read_text(encoding="utf-8").splitlines()]
        assert sum(1 for e in ledger if e["outcome"] == "item") == len(read_jsonl(out))
        assert not layout.part.exists() and (layout.state_dir / "state.sqlite3").exists()


def test_the_sort_spills_lean_records_when_the_writer_drops_the_trail(tmp_path: Path) -> None:
    from boilerstrip.finishing.steps import SortByUrl, crawl_steps

    def sort_of(steps: list[Step]) -> SortByUrl:
        return next(step for step in steps if isinstance(step, SortByUrl))

    assert sort_of(crawl_steps(tmp_path / "o.jsonl")).lean
    assert not sort_of(crawl_steps(tmp_path / "o.jsonl", trail=True)).lean  # crawl --trail writes it
    assert not sort_of(crawl_steps(None)).lean  # the records go back to the caller whole
    trail = {"blocks": [{"kind": "p", "text": "x"}], "page_blocks": [], "page_block_hashes": ["h"]}
    records = [{"url": "http://a.test/2", "text": "x", **trail}, {"url": "http://a.test/1", "text": "y", **trail}]
    lean = list(SortByUrl(lean=True).run(records, FinishContext()))
    assert [r["url"] for r in lean] == ["http://a.test/1", "http://a.test/2"]
    assert lean[0] == {"url": "http://a.test/1", "text": "y"}
    assert list(SortByUrl().run(records, FinishContext()))[1] == records[0]
