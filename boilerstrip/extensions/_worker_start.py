"""What each new worker process of the crawl's pool has loaded before its first page (``WorkerPool``).

Apart from ``workers.py``, which imports Scrapy: a worker imports the module of every function it is sent,
and none of the jobs it runs needs Scrapy, Twisted or Playwright (a test checks that none gets loaded).
"""

from __future__ import annotations

import gc
import importlib

__all__ = ["WORKER_MODULES", "GC_THRESHOLDS", "collect_less_often", "warm_up"]

#: the modules of the jobs the crawl sends its workers: the render decision, the page's reading, and the
#: finishing pass's clean and MinHash (datasketch, which imports scipy: 0.8 s on the 2-core machine, once in
#: the forkserver instead of once in every worker, and not in the middle of the finishing pass)
WORKER_MODULES = (
    "boilerstrip.boilerplate.page",
    "boilerstrip.downloadermiddlewares._render_job",
    "boilerstrip.extraction",
    "boilerstrip.pipelines._page_reading",
    "boilerstrip.rendering",
    "boilerstrip.finishing.steps",
    "datasketch",
)


#: CPython's cycle collector: a young collection after this many container allocations, an older one every
#: 20th young one, a full one every 100th older one (CPython: 700, 10, 10). A crawl's process builds up
#: long-lived objects (bounded caches, the ledger's line per URL), and at 10 each full collection walked them
#: all: 1.1 s of sqlite3-doc's crawl process (8 full collections), 0.4 s of docbook-xsl-doc-html's; at
#: these values 0.03 and 0.02 s, the collector's whole time 1.96 -> 1.04 s and 1.17 -> 0.68 s (same runs,
#: crawl_benchmark.py's sites, 2026-12-02). The young threshold stays near CPython's: garbage in reference
#: cycles (a refused decompression bomb's exception, holding its response) is freed as soon as before
#: (tests/test_hostile_round2.py's forty bombs: 35-36 MiB of growth either way; at 20,000, 56 MiB).
GC_THRESHOLDS = (1000, 20, 100)


def collect_less_often() -> None:
    """Set :data:`GC_THRESHOLDS` for this process (the crawl's, and each worker's)."""
    gc.set_threshold(*GC_THRESHOLDS)


def warm_up() -> None:
    """Import what the jobs need before the first page comes (nothing to do in a process forked from a
    server that loaded them), and collect garbage less often."""
    for name in WORKER_MODULES:
        importlib.import_module(name)
    collect_less_often()
