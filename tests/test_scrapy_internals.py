"""Guards for the one place boilerstrip relies on non-public Scrapy code (docs/scrapy-internals.md).

``boilerstrip/core/downloader.py`` copies Scrapy's ``Downloader._process_queue`` with one line added. These
tests fail the day the installed Scrapy's method differs from the one copied, so an upgrade cannot
silently keep an outdated copy; and they check that no other module reaches into the engine's private
state.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
from pathlib import Path

from scrapy.core.downloader import Downloader as ScrapyDownloader

from boilerstrip.core.downloader import Downloader

PACKAGE = Path(__file__).resolve().parents[1] / "boilerstrip"
#: sha256 of ``inspect.getsource(scrapy.core.downloader.Downloader._process_queue)`` in Scrapy 2.19.0, the
#: method boilerstrip/core/downloader.py copies. A new value means: re-read the upstream method, carry the
#: fix over (or drop it if upstream fixed the burst), then update this pin and docs/scrapy-internals.md.
UPSTREAM_PROCESS_QUEUE_SHA256 = "872b81a4bbb4cb1ad45b25c6f8803344a3a18fd5743dec234733891ab94559c8"


def _code_lines(source: str) -> list[str]:
    lines = []
    for line in inspect.cleandoc(source).splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def test_the_copied_upstream_method_is_unchanged() -> None:
    source = inspect.getsource(ScrapyDownloader._process_queue)
    assert hashlib.sha256(source.encode("utf-8")).hexdigest() == UPSTREAM_PROCESS_QUEUE_SHA256, (
        "scrapy.core.downloader.Downloader._process_queue changed: re-check boilerstrip/core/downloader.py")


def test_our_copy_is_upstream_plus_the_one_line() -> None:
    upstream = _code_lines(inspect.getsource(ScrapyDownloader._process_queue))
    ours = _code_lines(inspect.getsource(Downloader._process_queue))
    added = [line for line in ours if line not in upstream]
    assert added == ["slot.transferring.add(request)"], added
    assert [line for line in upstream if line not in ours] == []


def test_no_module_reads_the_engines_private_state() -> None:
    private = re.compile(r"\bengine\._\w+|\bscraper\.slot\b|\bslot\.latercall\b|\b_latercall\b")
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "downloader.py" and path.parent.name == "core":
            continue  # the one module allowed, guarded above
        text = path.read_text(encoding="utf-8")
        ast.parse(text)
        for number, line in enumerate(text.splitlines(), 1):
            if private.search(line) and not line.lstrip().startswith("#"):
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not offenders, offenders


def test_fail_queued_fails_the_queued_requests_of_a_real_slot_without_sending_them() -> None:
    # fail_queued reads Scrapy's Slot.queue ((request, deferred) pairs) and transferring: this runs it on
    # Scrapy's own Slot, so a change of either breaks here and not in a crawl
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.utils.test import get_crawler
    from twisted.internet.defer import Deferred

    downloader = Downloader(get_crawler())
    try:
        slot = downloader.slots["a.example"] = Slot(concurrency=1, delay=0, jitter=0)
        other = downloader.slots["b.example"] = Slot(concurrency=1, delay=0, jitter=0)
        requests = [Request(f"http://a.example/{i}") for i in range(3)]
        robots = Request("http://a.example/robots.txt", meta={"keep": True})
        results: dict[str, object] = {}
        for request in (*requests, robots):
            done: Deferred = Deferred()
            done.addBoth(lambda value, url=request.url: results.setdefault(url, value) and None)
            slot.queue.append((request, done))
        elsewhere: Deferred = Deferred()
        elsewhere.addBoth(lambda value: results.setdefault("http://b.example/", value) and None)
        other.queue.append((Request("http://b.example/"), elsewhere))
        slot.transferring.add(Request("http://a.example/being-downloaded"))

        failed = downloader.fail_queued(lambda r: None if r.meta.get("keep") else ValueError(r.url), "a.example")
        assert failed == 3
        assert [request for request, _ in slot.queue] == [robots]  # kept, still queued
        assert [type(results[r.url].value) for r in requests] == [ValueError] * 3  # each one's own failure
        assert len(other.queue) == 1  # another host's queue is not touched
        assert downloader.downloads_in_progress() == 1
        assert downloader.fail_queued(lambda r: ValueError(r.url)) == 2  # every slot's
        assert not slot.queue and not other.queue
    finally:
        downloader.close()
