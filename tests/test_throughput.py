"""Throughput machinery: the crawl's worker pool (real processes), and the same output whichever way pages
are read and however the finishing pass builds its model."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from boilerstrip.boilerplate import BoilerplateParams
from boilerstrip.demo.server import SiteServer
from boilerstrip.demo.sitegen import SITE_DIR
from boilerstrip.workers.pool import WorkerDied, WorkerPool, WorkerPoolParams
from boilerstrip.finishing import FinishContext, finish_crawl
from boilerstrip.state import StateParams, crawl_layout, open_state
from conftest import run_crawl


def _pid_and(value: int) -> tuple[int, int]:
    return os.getpid(), value


def _die_once(marker: str) -> str:
    """Kills its worker process the first time (no marker file yet), answers the second."""
    if not os.path.exists(marker):
        Path(marker).write_text("died", encoding="utf-8")
        os._exit(3)
    return "second try"


def _die() -> None:
    os._exit(3)


def _worker_and_server() -> tuple[int, int]:
    return os.getpid(), os.getppid()  # a worker is forked by the forkserver


def _slow(value: int) -> int:
    time.sleep(0.5)
    return value


def test_the_pool_runs_work_in_other_processes() -> None:
    pool = WorkerPool(WorkerPoolParams(workers=2, pool="process"))

    async def main() -> list[tuple[int, int]]:
        try:
            return await asyncio.gather(*(pool.run(_pid_and, n) for n in range(6)))
        finally:
            pool.close()

    results = asyncio.run(main())
    assert [value for _pid, value in results] == list(range(6))
    assert all(pid != os.getpid() for pid, _ in results)
    # 0 workers: on the calling thread
    assert asyncio.run(WorkerPool(WorkerPoolParams(workers=0)).run(_pid_and, 1)) == (os.getpid(), 1)


def test_a_dead_worker_costs_only_its_own_page(tmp_path: Path) -> None:
    """A worker that dies takes the pages in flight with it: they are tried again in a new pool and come
    back; a page that kills every worker it meets ends as WorkerDied (the pipelines record it as failed)."""
    pool = WorkerPool(WorkerPoolParams(workers=2, pool="process"))

    async def main() -> tuple[list, BaseException | None]:
        try:
            slow = asyncio.ensure_future(pool.run(_slow, 7))  # in flight when the other worker dies
            await asyncio.sleep(0.2)
            once = await pool.run(_die_once, str(tmp_path / "marker"))
            survived = await slow
            error = None
            try:
                await pool.run(_die)
            except WorkerDied as exc:
                error = exc
            after = await pool.run(_pid_and, 9)
            return [survived, once, after[1]], error
        finally:
            pool.close()

    results, error = asyncio.run(main())
    assert results == [7, "second try", 9]
    assert isinstance(error, WorkerDied)


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no forkserver here")
def test_a_killed_forkserver_costs_no_page() -> None:
    """The worker processes and the server that forks them killed (by hand, or by the OOM killer): the next
    page's job starts a new pool and a new server and comes back, rather than failing with the socket's
    error (ConnectionRefusedError, which read as an HTTP failure)."""
    import signal

    pool = WorkerPool(WorkerPoolParams(workers=1, pool="process"))

    def gone(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:  # a zombie until its parent reaps it
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"

    async def main():
        try:
            worker, server = await pool.run(_worker_and_server)
            for pid in (worker, server):
                os.kill(pid, signal.SIGKILL)
            for _ in range(200):
                if gone(worker) and gone(server):
                    break
                await asyncio.sleep(0.02)
            after = await pool.run(_worker_and_server)
            return worker, server, after
        finally:
            pool.close()

    worker, server, after = asyncio.run(main())
    assert after[0] != worker and after[1] != server  # a new worker, from a new server


def test_a_submit_that_cannot_start_a_worker_starts_a_new_pool() -> None:
    """A pool's submit starts a worker process through the forkserver's socket; when the server was killed
    between the pool's check that it lives and the connection (seen with servers killed by hand mid-crawl),
    the submit raises ConnectionRefusedError: the page's job goes to a new pool, it does not fail with it."""
    from concurrent.futures import ThreadPoolExecutor

    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    class NoWorkerStarts(ThreadPoolExecutor):
        def submit(self, *args, **kwargs):
            raise ConnectionRefusedError(111, "Connection refused")

    class FlakyPool(WorkerPool):
        made = 0

        def _new_executor(self):
            FlakyPool.made += 1
            return NoWorkerStarts(1) if FlakyPool.made == 1 else ThreadPoolExecutor(1)

    pool = FlakyPool(WorkerPoolParams(workers=1, pool="process"), stats=MemoryStatsCollector(get_crawler()))

    async def main():
        try:
            return await pool.run(_pid_and, 4)
        finally:
            pool.close()

    assert asyncio.run(main())[1] == 4
    assert FlakyPool.made == 2 and pool.stats.get_value("boilerstrip/workers/broken") == 1


def test_worker_processes_threads_and_the_reactor_write_the_same_crawl(tmp_path: Path, monkeypatch) -> None:
    """The demo site crawled with pages read in worker processes (the default), in threads and on the
    reactor thread: the same records, text for text. With threads (whose work the test can watch), each
    page is extracted once, and never on the reactor thread."""
    import threading

    from boilerstrip.extraction import extract
    from boilerstrip.pipelines import extraction as extraction_pipeline
    from boilerstrip.reading import page as reading

    reads = tmp_path / "reads.tsv"
    lock = threading.Lock()

    def watched(html, url=None, params=None, **hooks):  # the crawl runs in a fork of this process: it calls this
        with lock, reads.open("a", encoding="utf-8") as log:
            log.write(f"{url}\t{threading.current_thread().name}\n")
        return extract(html, url, params, **hooks)

    outputs = {}
    with SiteServer(root=SITE_DIR) as server:
        for name, settings in (("process", {}), ("thread", {"BOILERSTRIP_EXTRACTION_PARAMS": '{"pool": "thread"}'}),
                               ("reactor", {"BOILERSTRIP_EXTRACTION_WORKERS": "0"})):
            with monkeypatch.context() as patch:
                if name == "thread":
                    patch.setattr(reading, "extract", watched)
                    patch.setattr(extraction_pipeline, "extract", watched)
                proc, records = run_crawl(server.url + "/", out=tmp_path / name / "out.jsonl", settings=settings,
                                          args=["--profile", "test"])
            assert proc.returncode == 0, proc.stderr[-3000:]
            outputs[name] = {r["url"]: (r.get("text"), r.get("render_reason"), r.get("flags")) for r in records}
            if name == "thread":
                extracted = [line.split("\t") for line in reads.read_text(encoding="utf-8").splitlines()]
                pages = [r["final_url"] for r in records]
    assert len(outputs["process"]) > 10
    assert outputs["process"] == outputs["thread"] == outputs["reactor"]
    urls = [url for url, _ in extracted]
    assert len(urls) == len(set(urls)) and set(pages) <= set(urls)  # once a page (duplicates dropped after)
    assert {thread.split("_")[0] for _, thread in extracted} == {"boilerstrip-worker"}


def test_the_model_from_the_crawls_state_is_the_model_from_its_records(tmp_path: Path) -> None:
    """The finishing pass takes the final model from the state the crawl's pipeline filled (``learned``):
    byte for byte the output and report of the pass that hashes every record again; and the same again
    when the records are cleaned and signed in worker processes."""
    raw = tmp_path / "raw" / "out.jsonl"
    with SiteServer(root=SITE_DIR) as server:  # --trail: the records keep what hashing them again needs
        proc, records = run_crawl(server.url + "/", out=raw, settings={"BOILERSTRIP_FINISHING_ENABLED": "false"},
                                  args=["--profile", "test", "--trail"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(records) > 10
    written = {}
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    try:
        for learned, executor in ((True, None), (False, None), (True, pool)):
            out = tmp_path / f"learned-{learned}-{executor is not None}" / "out.jsonl"
            out.parent.mkdir()
            context = FinishContext(executor=executor)  # with an executor: clean and MinHash in its processes
            context.state = open_state(StateParams(), raw)  # the crawl's own state folder
            try:
                finish_crawl(raw, out, BoilerplateParams(), out.parent / "report", context=context, learned=learned)
            finally:
                context.state.close()
            assert context.counts.get("template/model_from_state", 0) == (1 if learned else 0)
            written[learned, executor is not None] = (
                out.read_bytes(), (out.parent / "report" / "template-report.json").read_bytes())
    finally:
        pool.shutdown()
    assert written[True, False] == written[False, False] == written[True, True]
    assert crawl_layout(raw).state_dir.is_dir()


@pytest.mark.parametrize("value", ["sometimes", ""])
def test_a_bad_pool_setting_is_named(tmp_path: Path, value: str) -> None:
    proc, _ = run_crawl("http://127.0.0.1:9/", out=tmp_path / "out.jsonl",
                        settings={"BOILERSTRIP_EXTRACTION_PARAMS": json.dumps({"pool": value})})
    assert proc.returncode != 0
    assert "BOILERSTRIP_EXTRACTION_PARAMS field pool" in proc.stderr


def test_record_urls_are_read_from_the_line_start_and_a_torn_line_is_left_out(tmp_path: Path) -> None:
    from boilerstrip.finishing import dump_record
    from boilerstrip.feeds import iter_whole_lines, record_url, written_urls

    plain = dump_record({"schema_version": 1, "url": 'http://s.test/a "b"', "text": "x" * 1000}).encode()
    compact = b'{"url":"http://s.test/c","schema_version":1}'
    assert record_url(plain) == 'http://s.test/a "b"'
    assert record_url(compact) == "http://s.test/c"  # not our layout: parsed whole
    assert record_url(b"[1, 2]") is None and record_url(b"not json") is None
    path = tmp_path / "out.jsonl"
    path.write_bytes(plain + b"\n" + compact + b"\n" + b'{"schema_version": 1, "url": "http://s.test/torn')
    assert list(iter_whole_lines(path)) == [plain, compact]
    assert written_urls(path) == {'http://s.test/a "b"', "http://s.test/c"}


class _CountingPool(WorkerPool):
    """A pool that runs jobs on the calling thread and names each job it ran."""

    def __init__(self) -> None:
        super().__init__(WorkerPoolParams(workers=0))
        self.jobs: list[str] = []

    async def run(self, fn, *args):
        self.jobs.append(fn.__name__)
        return fn(*args)


_PAGE = ("<html><head><title>Page {n}</title></head><body><nav><a href='/'>Home</a> <a href='/b'>Blog</a></nav>"
         "<main><h1>Heading {n}</h1><p>{text}</p><p>A second paragraph about page {n}, long enough to count as "
         "content for the extractor.</p></main><footer>Copyright the site, all rights reserved.</footer></body></html>")


def _plan(source: str):
    from boilerstrip.extraction import ExtractionParams
    from boilerstrip.reading.page import PagePlan

    params = BoilerplateParams(source=source)
    return PagePlan(features=(params.source, params.normalise_digits), extraction=ExtractionParams(), hashes=params)


def _pipelines(pool, source: str, reading: bool = True) -> list:
    """The crawl's item pipelines in their order (reading, page blocks, extraction, cross-page learning
    only, finalize), given ``pool`` as the crawl's worker pool; without the reading pipeline with
    ``reading=False`` (each pipeline then reads its own part)."""
    from boilerstrip.pipelines.boilerplate import CrossPageBoilerplatePipeline, PageBlocksPipeline
    from boilerstrip.pipelines.extraction import ExtractionPipeline
    from boilerstrip.pipelines.finalize import FinalizePipeline
    from boilerstrip.pipelines.reading import PageReadingPipeline
    from boilerstrip.state import MemoryState

    params = BoilerplateParams(source=source)
    learn = CrossPageBoilerplatePipeline(params, state=MemoryState(), clean=False, pool=pool)
    learn.open_spider()
    first = [PageReadingPipeline(_plan(source), pool=pool)] if reading else []
    return [*first, PageBlocksPipeline(params, pool=pool), ExtractionPipeline(pool=pool), learn, FinalizePipeline()]


def _learned(pipelines: list, urls: list[str]) -> list:
    """What the cross-page pipeline put in its state for each URL."""
    from boilerstrip.pipelines.boilerplate import CrossPageBoilerplatePipeline

    learn = next(p for p in pipelines if isinstance(p, CrossPageBoilerplatePipeline))
    return [learn.state.templates.get_page("s.test", url) for url in urls]


async def _through(pipelines, item):
    for pipeline in pipelines:
        item = pipeline.process_item(item)
        if asyncio.iscoroutine(item):
            item = await item
    return item


def _page_item(n: int, kind=None):
    from boilerstrip.items import PageItem

    html = _PAGE.format(n=n, text=f"Text of page {n}. " * 20)
    return (kind or PageItem)(url=f"http://s.test/p{n}", final_url=f"http://s.test/p{n}", html=html)


@pytest.mark.parametrize("source", ["auto", "page", "extracted"])
def test_each_page_is_read_once_for_the_pipelines(source: str) -> None:
    """The reading pipeline reads a page in one worker job; page blocks, extraction and the model's hashes
    are taken from it, and the records and the template counts are what the pipelines give reading their
    own parts. A plain dict item (no field to carry the reading) and a page a pipeline in between changed
    are read part by part."""
    urls = [f"http://s.test/p{n}" for n in range(3)]
    alone = _pipelines(None, source, reading=False)
    expected = [asyncio.run(_through(alone, _page_item(n))) for n in range(3)]
    assert all(e.text and e.reading is None and e.html is None for e in expected)

    pool = _CountingPool()
    shared = _pipelines(pool, source)
    assert [asyncio.run(_through(shared, _page_item(n))) for n in range(3)] == expected
    assert pool.jobs == ["read_page"] * 3
    assert _learned(shared, urls) == _learned(alone, urls)

    pool = _CountingPool()
    as_dicts = _pipelines(pool, source)
    got = [asyncio.run(_through(as_dicts, _page_item(n, kind=dict))) for n in range(3)]
    assert pool.jobs == ["_features", "extract", "record_model_hashes"] * 3
    fields = ("text", "blocks", "page_blocks", "page_block_hashes")
    assert [{k: g.get(k) for k in fields} for g in got] == [{k: getattr(e, k) for k in fields} for e in expected]

    class Rewrite:  # a pipeline of the user's between page blocks and extraction
        def process_item(self, item):
            item.html = item.html.replace("Text of page", "Other text of page")
            return item

    pool = _CountingPool()
    reading, blocks, extraction, learn, finalize = _pipelines(pool, source)
    rewritten = asyncio.run(_through((reading, blocks, Rewrite(), extraction, learn, finalize), _page_item(0)))
    # the new HTML is extracted on its own; the model's hashes are worked out from what the item holds (with
    # source="page" the page blocks, of the HTML read first, stand for the extracted ones: its hashes hold)
    assert pool.jobs == ["read_page", "extract", *(["record_model_hashes"] if source != "page" else [])]
    assert "Other text of page 0" in rewritten.text and "Other" not in expected[0].text


def test_the_crawls_settings_name_the_parts_each_page_is_read_for() -> None:
    """The render decision's job and the reading pipeline both read the plan from the settings: every part
    by default, none of a component switched off (and no reading pipeline when nothing is read)."""
    from scrapy.exceptions import NotConfigured
    from scrapy.utils.test import get_crawler

    from boilerstrip.pipelines.reading import PageReadingPipeline
    from boilerstrip.reading.page import PagePlan, page_plan

    def plan(**settings):
        return page_plan(get_crawler(settings_dict=settings).settings)

    assert plan() == _plan("auto")
    assert plan(BOILERSTRIP_EXTRACTION_ENABLED=False) == PagePlan(features=("auto", True))
    assert plan(BOILERSTRIP_BOILERPLATE_ENABLED=False) == PagePlan(extraction=_plan("auto").extraction)
    with pytest.raises(NotConfigured):
        PageReadingPipeline.from_crawler(get_crawler(settings_dict={"BOILERSTRIP_EXTRACTION_ENABLED": False,
                                                                    "BOILERSTRIP_BOILERPLATE_ENABLED": False}))


def test_worker_processes_read_pages_without_importing_scrapy() -> None:
    """A worker imports the module of each function it is sent: the render decision and the page's one
    job come from pure modules, so the worker processes never load Scrapy, Twisted or Playwright."""
    from boilerstrip.reading.render_job import judge_and_read
    from boilerstrip.downloadermiddlewares.render import judge_static
    from boilerstrip.extraction import ExtractionParams
    from boilerstrip.reading.page import PagePlan, read_page
    from boilerstrip.rendering import RenderParams

    pool = WorkerPool(WorkerPoolParams(workers=1, pool="process"))
    html = _PAGE.format(n=1, text="Text. " * 50)
    frameworks = "sorted(m for m in __import__('sys').modules if m.split('.')[0] in " \
                 "('scrapy', 'twisted', 'playwright', 'scrapy_playwright'))"

    async def main():
        try:
            verdict = await pool.run(judge_static, html, "http://s.test/p1", RenderParams())
            reading = await pool.run(read_page, html, "http://s.test/p1",
                                     PagePlan(features=("auto", True), extraction=ExtractionParams(),
                                              hashes=BoilerplateParams()))
            judged = await pool.run(judge_and_read, html, "http://s.test/p1", RenderParams(), PagePlan(), "utf-8")
            return verdict, reading, judged, await pool.run(eval, frameworks)
        finally:
            pool.close()

    verdict, reading, judged, loaded = asyncio.run(main())
    assert not verdict.needs and reading.hashes and "Text." in reading.extraction.text
    assert judged[2].hrefs == ("/", "/b")  # the page's links, read in the worker
    assert loaded == []


def test_a_record_flagged_for_replacement_chars_is_written_in_one_encode_as_repairing_would() -> None:
    """Most docbook-xsl-doc-html records hold U+FFFD and carry the extractor's flag already: the exporter
    writes them as first encoded, the bytes and the count the repair walk gives; a record with U+FFFD and
    no flag, or a lone surrogate, still goes the repair way."""
    import io

    from scrapy.utils.test import get_crawler

    from boilerstrip.feeds import REPLACEMENT_FLAG, SafeJsonLinesExporter

    def exporter():
        crawler = get_crawler()
        crawler.stats.open_spider()
        out = SafeJsonLinesExporter(io.BytesIO())
        out.crawler = crawler
        return out, crawler.stats

    flagged = {"url": "http://s.test/", "text": "Common \ufffd Base", "flags": [REPLACEMENT_FLAG]}
    fast, fast_stats = exporter()
    slow, slow_stats = exporter()
    assert fast._clean_line(dict(flagged)) == slow._repaired(dict(flagged))
    assert fast_stats.get_value("boilerstrip/feeds/repaired") == slow_stats.get_value("boilerstrip/feeds/repaired") == 1
    assert fast._clean_line({"url": "http://s.test/", "text": "a \ufffd b", "flags": []}) is None
    assert fast._clean_line({"url": "http://s.test/", "text": "a \udc80 b", "flags": [REPLACEMENT_FLAG]}) is None


def test_a_signature_worked_out_with_the_clean_travels_on_the_record_and_is_not_written(tmp_path: Path) -> None:
    """With worker processes, the template step works out each cleaned text's MinHash signature in the job
    that cleans it; the record carries it to the duplicates step, which takes it off: nothing of it is
    written, and the output is the one of a pass without workers."""
    from concurrent.futures import ThreadPoolExecutor

    from boilerstrip.finishing import MarkDuplicates, TemplateStep, WriteJsonl, run_steps
    from boilerstrip.finishing.steps import SIGNATURE_KEY
    from boilerstrip.boilerplate import DuplicateParams

    text = "The same long text on two pages of the site, word after word after word. " * 8
    records = [{"url": f"http://s.test/{n}", "text": text if n < 2 else f"Page {n}. " + text[:200], "blocks": []}
               for n in range(4)]
    seen = []

    class Watch(MarkDuplicates):
        def run(self, stream, context):
            return super().run((seen.append(SIGNATURE_KEY in r) or r for r in stream), context)

    outputs = []
    for executor in (None, ThreadPoolExecutor(2)):
        out = tmp_path / f"{executor is not None}.jsonl"
        context = FinishContext(executor=executor)
        steps = [TemplateStep(BoilerplateParams(), sign=DuplicateParams()), Watch(DuplicateParams()), WriteJsonl(out)]
        list(run_steps([dict(r) for r in records], steps, context))
        outputs.append((out.read_bytes(), context.dropped_by_url()))
        if executor is not None:
            executor.shutdown()
    assert seen == [False] * 4 + [True] * 4  # carried only when a worker cleaned the pages
    assert outputs[0] == outputs[1] and SIGNATURE_KEY.encode() not in outputs[1][0]
    assert outputs[1][1] == {"http://s.test/1": "exact_duplicate"}


def _served(url: str, html: str | bytes):
    """A static HTML response to a page request, as the downloader hands it to the middlewares."""
    from scrapy import Request
    from scrapy.http import HtmlResponse

    body = html.encode() if isinstance(html, str) else html
    return HtmlResponse(url, body=body, encoding="utf-8", headers={"Content-Type": "text/html"},
                        request=Request(url))


def _decided(middleware, response):
    """The render middleware's ``process_response`` on ``response`` (awaited when it went to the pool)."""
    out = middleware.process_response(response.request, response)
    return asyncio.run(out) if asyncio.iscoroutine(out) else out


def test_the_render_decisions_job_reads_a_static_page_for_the_pipelines() -> None:
    """A page that keeps its served HTML is judged and read in one job: the reading travels on the
    response's meta to the spider's item, and the pipelines start no job of their own (the records are
    what reading the page in the pipelines gives); a page to render is judged only."""
    from scrapy.utils.test import get_crawler

    from boilerstrip.downloadermiddlewares.render import RenderWhenNeededMiddleware
    from boilerstrip.items import PageItem
    from boilerstrip.meta import READING_META
    from boilerstrip.spiders.site import SiteSpider

    alone = _pipelines(None, "auto", reading=False)
    expected = asyncio.run(_through(alone, _page_item(1)))

    pool = _CountingPool()
    middleware = RenderWhenNeededMiddleware(plan=_plan("auto"))
    middleware.pool = pool
    response = _served("http://s.test/p1", _PAGE.format(n=1, text="Text of page 1. " * 20))
    assert _decided(middleware, response) is response and pool.jobs == ["judge_and_read"]

    crawler = get_crawler(SiteSpider)
    spider = SiteSpider.from_crawler(crawler, url="http://s.test/")
    crawler.stats.open_spider()
    [item] = [r for r in spider.parse(response) if isinstance(r, PageItem)]  # the page's item, not its links
    assert item.reading is response.meta[READING_META]
    got = asyncio.run(_through(_pipelines(pool, "auto"), item))
    assert pool.jobs == ["judge_and_read"]  # the pipelines started no job
    fields = ("text", "markdown", "title", "method", "attempts", "blocks", "page_blocks", "page_block_hashes",
              "flags", "content_hash", "template_cluster")
    assert {f: getattr(got, f) for f in fields} == {f: getattr(expected, f) for f in fields}

    shell = _served("http://s.test/app", "<html><body><div id='root'></div><script src='/app.js'></script></body></html>")
    pool.jobs.clear()
    _decided(middleware, shell)
    assert pool.jobs == ["judge_and_read"] and READING_META not in shell.meta


_LINK_PAGES = {
    "plain": "<html><head><title>t</title></head><body><a href='/a'>a</a> <a href=' b.html '>b</a>"
             "<map><area href='/map'></map><a>no href</a></body></html>",
    "base": "<html><head><base href='/docs/'><link rel='Canonical' href='/docs/c'></head>"
            "<body><a href='x.html'>x</a></body></html>",
    "bad base": "<html><head><base href='http://example.org:port/'></head><body><a href='y'>y</a></body></html>",
    "bad ipv6 base": "<html><head><base href='http://[oops/'></head><body><a href='z'>z</a></body></html>",
    "metas": "<html><head><meta name='robots' content='noai, noimageai'><meta name='x'>"
             "<meta content='orphan'><meta name='tdm-reservation' content='1'></head><body><p>t</p></body></html>",
    "canonical among others": "<html><head><link rel='alternate' href='/alt'><link rel='stylesheet canonical' "
                              "href='/one'><link rel=canonical href='/two'></head><body></body></html>",
    "nul and comments": "<html><body>\x00<!-- c --><a href='/n'>n</a><?pi x?></body></html>",
    "nested": "<html><body>" + "<div>" * 300 + "<a href='/deep'>d</a>" + "</div>" * 300 + "</body></html>",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(_LINK_PAGES))
def test_a_pages_links_read_apart_are_what_scrapys_selector_reads(name: str) -> None:
    """``read_links`` (run in the render decision's worker job) gives the spider, the trap filter, the recrawl
    and opt-out middlewares what they read with Scrapy's ``response.selector`` before: the same hrefs,
    canonical href, ``<meta>`` pairs, base URL and node count (the extraction budget), for the same text."""
    from parsel import Selector
    from scrapy.http import HtmlResponse
    from scrapy.utils.response import get_base_url

    from boilerstrip.extraction import over_node_budget
    from boilerstrip.reading.links import CANONICAL_XPATH, HREF_XPATH, META_XPATH, read_links

    response = HtmlResponse("http://s.test/dir/page.html", body=_LINK_PAGES[name].encode("latin-1"),
                            encoding="latin-1")
    try:
        selector, base, bad_base = response.selector, get_base_url(response), False
    except ValueError:  # what the spider did on an unusable <base href>
        selector = Selector(text=response.text, type="html", base_url=response.url)
        base, bad_base = response.url, True
    links = read_links(response.text, response.url, response.encoding)
    assert links.error is None
    assert (links.base, links.bad_base) == (base, bad_base)
    assert list(links.hrefs) == selector.xpath(HREF_XPATH).getall()
    assert links.canonical == selector.xpath(CANONICAL_XPATH).get()
    assert list(links.metas) == [(n.attrib.get("name", ""), n.attrib.get("content", ""))
                                 for n in selector.xpath(META_XPATH)]
    assert links.elements == sum(1 for _node in selector.root.iter())  # counted by libxml2, not iter()
    for budget in (0, links.elements - 1, links.elements):
        assert links.over_budget(budget) == over_node_budget(selector.root, budget)


def test_the_crawl_process_takes_a_static_pages_links_from_the_decisions_job(monkeypatch) -> None:
    """The render decision's job reads a static page's links: the spider's and the opt-out middleware's
    reading of the response is that one (the crawl's process does not parse the page); a page with no job's
    reading (rendered, or judged in the crawl's process) is read there, once."""
    from scrapy import Request
    from scrapy.http import HtmlResponse

    from boilerstrip.downloadermiddlewares.optout import AiOptOutMiddleware
    from boilerstrip.downloadermiddlewares.render import RenderWhenNeededMiddleware
    from boilerstrip.reading import links as page_links_module

    def response(n: int) -> HtmlResponse:
        html = _PAGE.format(n=n, text=f"Text of page {n}. " * 20).replace(
            "<head>", "<head><meta name='robots' content='noai'>")
        # the reading travels on the response's meta: a crawled response has its request
        return HtmlResponse(f"http://s.test/p{n}", body=html.encode(), encoding="utf-8",
                            headers={"Content-Type": "text/html"}, request=Request(f"http://s.test/p{n}"))

    from boilerstrip.urls import UrlParams, link_targets

    pool = _CountingPool()
    middleware = RenderWhenNeededMiddleware(url_params=UrlParams())
    middleware.pool = pool
    resp = response(1)
    assert _decided(middleware, resp) is resp
    assert pool.jobs == ["judge_and_read"]
    judged = page_links_module.page_links(resp)
    # the links' normal forms for the spider, under the crawl's URL parameters: what it works out itself
    assert judged.url_params == UrlParams()
    assert judged.targets == link_targets(judged.hrefs, judged.base, UrlParams())[0] == ("http://s.test/",
                                                                                          "http://s.test/b")

    read_here = []
    real_read = page_links_module.read_links
    monkeypatch.setattr(page_links_module, "read_links", lambda *a: read_here.append(a[1]) or real_read(*a))
    links = page_links_module.page_links(resp)
    assert links.hrefs == ("/", "/b") and links.base == resp.url
    from boilerstrip.optout import OptOutParams

    from boilerstrip.meta import OPT_OUT_META

    assert AiOptOutMiddleware(OptOutParams()).process_response(resp.request, resp) is resp
    assert resp.meta[OPT_OUT_META] == ["meta-robots:noai"]  # its <meta name=robots content=noai>
    assert page_links_module.page_hrefs(resp) == ["/", "/b"]
    assert read_here == []  # all from the job's reading

    other = response(2)  # no job: read in this process, once for every reader
    assert page_links_module.page_hrefs(other) == ["/", "/b"]
    assert page_links_module.page_links(other).metas == (("robots", "noai"),)
    assert read_here == [other.url]


def test_the_first_pages_are_judged_in_the_crawl_process_while_the_workers_start() -> None:
    """While the worker processes are launched (the forkserver loads its modules: about a second), a page's
    render decision is made in the crawl's process instead of waiting for them: the start page's links are
    followed at once. Once they run, pages are judged in the pool."""
    from scrapy import Request
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    from boilerstrip.downloadermiddlewares.render import RenderWhenNeededMiddleware

    class StartingPool(_CountingPool):
        starting = True

    crawler = get_crawler()
    middleware = RenderWhenNeededMiddleware(stats=crawler.stats)
    html = _PAGE.format(n=1, text="Text of the page. " * 20)
    resp = HtmlResponse("http://s.test/p1", body=html.encode(), encoding="utf-8",
                        headers={"Content-Type": "text/html"})
    for pool, judged_here in ((StartingPool(), True), (_CountingPool(), False)):
        middleware.pool = pool
        out = middleware.process_response(Request(resp.url), resp)
        if not judged_here:
            out = asyncio.run(out)
        assert out is resp
        assert pool.jobs == ([] if judged_here else ["judge_and_read"])
    assert crawler.stats.get_value("boilerstrip/render/judged_while_workers_start") == 1
    assert crawler.stats.get_value("boilerstrip/render/checked") == 2


def test_a_crawls_workers_load_neither_datasketch_nor_scipy() -> None:
    """datasketch imports scipy (0.6 s of CPU a process): a worker that reads a page and works out the
    finishing pass's signatures loads neither (``boilerstrip.minhash`` computes datasketch's MinHash with
    numpy), and the forkserver does not preload them.

    In a fresh interpreter: the test process's forkserver may already have been started by another test,
    and the point is the crawl's own forkserver."""
    import subprocess
    import sys

    script = """
import asyncio, sys
from boilerstrip.boilerplate import DuplicateParams
from boilerstrip.finishing.steps import text_signatures
from boilerstrip.reading.render_job import judge_and_read
from boilerstrip.reading.page import PagePlan
from boilerstrip.rendering import RenderParams
from boilerstrip.workers._start import WORKER_MODULES
from boilerstrip.workers.pool import WorkerPool, WorkerPoolParams

PAGE = sys.argv[1]
ours = lambda names: sorted(m for m in names if m.split('.')[0] in ('datasketch', 'scipy'))
loaded = "sorted({m.split('.')[0] for m in __import__('sys').modules} & {'datasketch', 'scipy', 'numpy'})"
print("preloaded", ours(WORKER_MODULES))

async def main():
    pool = WorkerPool(WorkerPoolParams(workers=1, pool="process"))
    try:
        await pool.run(judge_and_read, PAGE, "http://s.test/p1", RenderParams(), PagePlan(), "utf-8")
        (signed,) = await pool.run(text_signatures, ["word after word " * 40], DuplicateParams())
        return signed.hashvalues is not None, await pool.run(eval, loaded)
    finally:
        pool.close()

print("worker", *asyncio.run(main()))
"""
    html = _PAGE.format(n=1, text="Text. " * 50)
    proc = subprocess.run([sys.executable, "-c", script, html], capture_output=True, text=True, timeout=240,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[-2:] == ["preloaded []", "worker True ['numpy']"], proc.stdout[-2000:]
