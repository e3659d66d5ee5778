"""What each new worker process of the crawl's pool has loaded before its first page (``WorkerPool``).

Apart from ``workers.py``, which imports Scrapy: a worker imports the module of every function it is sent,
and none of the jobs it runs needs Scrapy, Twisted or Playwright (a test checks that none gets loaded).
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal

from boilerstrip.lifetime import die_with_parent

__all__ = ["WORKER_MODULES", "start_worker", "warm_up", "ignore_interrupts"]

#: the modules of the jobs the crawl sends its workers: the render decision, the page's reading, and the
#: finishing pass's clean and MinHash (numpy is imported by the first signature; no job imports datasketch
#: or scipy: ``boilerstrip.minhash``)
WORKER_MODULES = (
    "boilerstrip.boilerplate.page",
    "boilerstrip.reading.render_job",
    "boilerstrip.extraction",
    "boilerstrip.reading.page",
    "boilerstrip.rendering",
    "boilerstrip.finishing.steps",
)


def warm_up() -> None:
    """Import what the jobs need before the first page comes (nothing to do in a process forked from a
    server that loaded them)."""
    for name in WORKER_MODULES:
        importlib.import_module(name)


def start_worker() -> None:
    """Each worker process's first act (the pool's ``initializer``): ignore a terminal's Ctrl-C
    (:func:`ignore_interrupts`) and die with the crawl.

    A worker is forked from the forkserver, which exits when the crawl's end of its "alive" pipe closes,
    that is when the crawl exits, however it dies. Two things stood in the way after a ``kill -9``: every
    worker inherits a copy of that pipe's write end, so the server never saw it close, and a worker waits
    on its job queue, whose write end it holds too, so it never saw the crawl go. So a worker closes its
    copy, and asks for SIGKILL when its parent (the server, single-threaded) dies; the resource tracker
    then exits when the last of them is gone. A worker whose crawl is gone already exits at once.
    """
    from multiprocessing import forkserver

    ignore_interrupts()
    server_pid = os.getppid()
    server = getattr(forkserver, "_forkserver", None)
    alive_fd = getattr(server, "_forkserver_alive_fd", None)
    if alive_fd is None:
        return  # not forked from a forkserver ("spawn": the crawl's own child; see WorkerPool)
    server._forkserver_alive_fd = None
    try:
        os.close(alive_fd)
    except OSError:
        pass
    die_with_parent(signal.SIGKILL, parent_pid=server_pid)
    crawl = multiprocessing.parent_process()
    if crawl is not None and not _alive(crawl.pid):
        os._exit(1)  # the crawl died before this worker was up


def _alive(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
def ignore_interrupts() -> None:
    """Each worker process's initializer: a Ctrl-C at the terminal sends SIGINT to the whole process group,
    workers included; the crawl's own process drives the shutdown (it stops the crawl, writes the manifest,
    then closes the pool), so a worker must not die of it mid-page."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
