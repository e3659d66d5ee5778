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


#: CPython's cycle collector runs after this many allocations of containers (700 by default, then every 10th
#: and 100th time over the older generations). Reading a page allocates tens of thousands of them, nearly all
#: freed by reference counting: at 700 the crawl's process spent 0.9 s of docbook-xsl-doc-html's crawl and
#: 1.6 s of sqlite3-doc's collecting (540 and 1,240 collections; 0.2 and 0.7 s at these values, same runs,
#: crawl_benchmark.py's sites, 2026-12-02). Cycles wait a little longer to be freed: a constant, not per page.
GC_THRESHOLDS = (20_000, 20, 20)


def collect_less_often() -> None:
    """Set :data:`GC_THRESHOLDS` for this process (the crawl's, and each worker's)."""
    gc.set_threshold(*GC_THRESHOLDS)


def warm_up() -> None:
    """Import what the jobs need before the first page comes (nothing to do in a process forked from a
    server that loaded them), and collect garbage less often."""
    for name in WORKER_MODULES:
        importlib.import_module(name)
    collect_less_often()
