"""What each new worker process of the crawl's pool has loaded before its first page (``WorkerPool``).

Apart from ``workers.py``, which imports Scrapy: a worker imports the module of every function it is sent,
and none of the jobs it runs needs Scrapy, Twisted or Playwright (a test checks that none gets loaded).
"""

from __future__ import annotations

import importlib
import signal

__all__ = ["WORKER_MODULES", "warm_up", "ignore_interrupts"]

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


def ignore_interrupts() -> None:
    """Each worker process's initializer: a Ctrl-C at the terminal sends SIGINT to the whole process group,
    workers included; the crawl's own process drives the shutdown (it stops the crawl, writes the manifest,
    then closes the pool), so a worker must not die of it mid-page."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
