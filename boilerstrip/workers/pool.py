"""The crawl's worker pool: per-page pure work (the render decision, the page's blocks, extraction) off the
reactor thread.

With ``pool = "process"`` (the default; ``BOILERSTRIP_EXTRACTION_PARAMS``) the work runs in
``BOILERSTRIP_EXTRACTION_WORKERS`` worker processes, so the machine's other cores read pages while the
reactor thread downloads, follows links and writes the feed; with ``"thread"`` in threads of the crawl's
process (they share one core: lxml releases the GIL only while it parses); with 0 workers on the reactor
thread. Components reach it with ``WorkerPool.of(crawler)`` and send it module-level pure
functions over plain values (``run``), which is all a process pool can carry.

A worker process that dies (a crash in a C library on hostile HTML, the OOM killer) takes its in-flight
pages with it: the pool is started again and each of those pages is tried ``_RETRIES`` more times; then
``run`` raises :class:`WorkerDied` and the caller records the page as failed with a reason. Stats:
``boilerstrip/workers/broken``, and ``boilerstrip/workers/jobs/<function>``, the jobs ``run`` was given.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable

from scrapy import signals

from boilerstrip.config import params_from_settings
from boilerstrip.outcomes import FailedItem
from boilerstrip.workers._start import WORKER_MODULES, start_worker, warm_up

__all__ = ["WorkerPool", "WorkerPoolParams", "WorkerDied", "POOLS", "run_page_job"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/workers"
POOLS = ("process", "thread")
#: times a page whose worker process died is tried again in a new pool (the other pages in flight die with
#: the culprit; one more try saves them, a page that kills every worker fails)
_RETRIES = 2
#: what a process pool's submit raises when it cannot start a worker process: the forkserver's socket gone
#: (ConnectionRefusedError, FileNotFoundError) or closed mid-handshake (EOFError)
_NO_WORKER_STARTED = (OSError, EOFError)


class WorkerDied(Exception):
    """The worker process reading a page died each time it was tried."""


@dataclass(frozen=True)
class WorkerPoolParams:
    # Workers reading pages off the reactor (read from BOILERSTRIP_EXTRACTION_*: they began as extraction's
    # threads). 2 = the cores of the machines we size for: the reactor's own work (downloads, links, the
    # feed) shares the cores with them; crawl_benchmark.py --throughput (2026-12-01, 2 cores) had 1 and 2
    # processes within noise of each other. 0 = on the reactor thread (one huge page stalls every download).
    workers: int = 2
    # "process": worker processes, forked from a server process that loaded the jobs' modules once
    # ("forkserver": nothing of the crawl's threads is inherited; "spawn" where there is no forkserver);
    # "thread": threads of the crawl's process.
    pool: str = "process"

    def __post_init__(self) -> None:
        if self.workers < 0:
            raise ValueError("workers must be >= 0")
        if self.pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}, got {self.pool!r}")


class WorkerPool:
    def __init__(self, params: WorkerPoolParams = WorkerPoolParams(), stats: Any = None) -> None:
        self.params = params
        self.stats = stats
        self._executor: Executor | None = None
        #: set once the executor's worker processes are launched (``_new_executor``)
        self._launched: Future | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WorkerPool":
        pool = cls(params_from_settings(crawler.settings, "extraction", WorkerPoolParams), stats=crawler.stats)
        crawler.signals.connect(pool.start, signal=signals.spider_opened)

        def engine_started() -> None:
            # connected now, after every component's from_crawler: this runs after their engine_stopped
            # handlers, so the finishing pass (FinishingExtension) still has the workers
            crawler.signals.connect(pool.close, signal=signals.engine_stopped)

        crawler.signals.connect(engine_started, signal=signals.engine_started, weak=False)
        return pool

    @classmethod
    def of(cls, crawler: Any) -> "WorkerPool | None":
        """The crawl's pool when it has workers (None without the extension or with 0 workers); ask once the
        extensions exist (``engine_started``, ``open_spider``)."""
        pool = crawler.get_extension(cls)
        return pool if pool is not None and pool.params.workers else None

    @property
    def executor(self) -> Executor | None:
        """The running pool's executor (None with 0 workers or once closed), for work submitted directly."""
        return self._executor

    @property
    def starting(self) -> bool:
        """Whether the worker processes are still being launched (a job submitted now waits for them: the
        first one waits for the forkserver to load ``WORKER_MODULES``, about a second)."""
        return self._launched is not None and not self._launched.done()

    def start(self) -> None:
        """Start the workers (``run`` also starts them when needed)."""
        if self.params.workers and self._executor is None:
            self._executor = self._new_executor()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _new_executor(self) -> Executor:
        workers = self.params.workers
        if self.params.pool == "thread":
            return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="boilerstrip-worker")
        context = _process_context()
        _start_server_deaf_to_interrupts(context)
        executor = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=start_worker)
        launched: Future = Future()

        def launch() -> None:
            # a submit starts a process while none is idle, and waits for the forkserver to fork it (the
            # first one waits for the server to load WORKER_MODULES, a second): off the reactor thread
            try:
                for _ in range(workers):
                    executor.submit(warm_up)
            except (RuntimeError, *_NO_WORKER_STARTED):  # closed or broken before every worker was launched
                pass  # (the pages' own jobs meet it, and start the pool again)
            finally:
                launched.set_result(None)

        self._launched = launched
        threading.Thread(target=launch, name="boilerstrip-worker-launch", daemon=True).start()
        return executor

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the pool (on the calling thread with 0 workers). For a process pool ``fn`` and
        its arguments must be picklable: a module-level pure function over plain values."""
        if self.stats is not None:
            self.stats.inc_value(f"{STATS}/jobs/{getattr(fn, '__name__', 'job')}")
        if not self.params.workers:
            return fn(*args)
        self.start()
        loop = asyncio.get_running_loop()
        for attempt in range(_RETRIES + 1):
            executor = self._executor
            assert executor is not None
            if self._launched is not None and not self._launched.done():
                await asyncio.wrap_future(self._launched)  # a submit now would wait for the launch
            try:
                job = loop.run_in_executor(executor, fn, *args)  # the submit: it may start a worker process
            except (BrokenProcessPool, *_NO_WORKER_STARTED):  # broken already, or no worker could be started:
                job = None  # the forkserver is gone (killed by hand, or by the OOM killer)
            if job is not None:
                try:
                    return await job
                except BrokenProcessPool:  # a worker died with this page in flight
                    pass
            # not this page's fault: a new pool (and forkserver) and another try
            if self.stats is not None:
                self.stats.inc_value(f"{STATS}/broken")
            if self._executor is executor:  # the first page to see it starts the new pool
                logger.error("a worker process died; starting the worker pool again")
                executor.shutdown(wait=False, cancel_futures=True)
                self._executor = self._new_executor()
            if attempt == _RETRIES:
                raise WorkerDied(f"the worker process reading this page died {attempt + 1} times") from None
        raise AssertionError("unreachable")  # pragma: no cover


def _start_server_deaf_to_interrupts(context: Any) -> None:
    """Start the forkserver now, with SIGINT blocked: it inherits the mask (through its exec too), so a
    Ctrl-C sent to the whole process group by a terminal neither kills it while it loads WORKER_MODULES nor
    reaches the workers it forks; the crawl's own process gets the Ctrl-C as soon as the mask is lifted and
    drives the shutdown. Only from the main thread (the reactor's), where the pool is started; the resource
    tracker is started first because starting it lifts the mask of the thread that starts it."""
    if context.get_start_method() != "forkserver" or threading.current_thread() is not threading.main_thread():
        return
    from multiprocessing import forkserver, resource_tracker

    resource_tracker.ensure_running()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _process_context() -> Any:
    """The worker processes' start method: "forkserver" where the platform has it (the server loads
    ``WORKER_MODULES`` once and forks each worker from that, so a worker costs no imports and a pool started
    again after a worker died is ready at once), else "spawn"."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(WORKER_MODULES))  # read when the server starts: once a process
    return context


async def run_page_job(pool: WorkerPool | None, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` for one page in ``pool`` (on the calling thread without one). A page whose worker died
    each time it was tried is ``failed:extraction_worker_died``: the item pipelines' one way of saying so."""
    if pool is None:
        return fn(*args)
    try:
        return await pool.run(fn, *args)
    except WorkerDied as exc:
        raise FailedItem("extraction_worker_died", str(exc)) from None
