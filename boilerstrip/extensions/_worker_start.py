"""What each new worker process of the crawl's pool has loaded before its first page (``WorkerPool``).

Apart from ``workers.py``, which imports Scrapy: a worker imports the module of every function it is sent,
and none of the jobs it runs needs Scrapy, Twisted or Playwright (a test checks that none gets loaded).
"""

from __future__ import annotations

import importlib

__all__ = ["WORKER_MODULES", "warm_up"]

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


def warm_up() -> None:
    """Import what the jobs need before the first page comes (nothing to do in a process forked from a
    server that loaded them)."""
    for name in WORKER_MODULES:
        importlib.import_module(name)
