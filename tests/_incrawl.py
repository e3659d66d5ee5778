"""A crawl in a forked child of the test process: the CLI's own code path, without a new interpreter.

``run_cli(["crawl", URL, "-o", OUT, ...])`` forks the test process, and the child runs
``boilerstrip.cli.main`` (or ``scrapy.cmdline.execute``) with its stdout and stderr on pipes; the parent
reads them and waits, with a deadline, and returns a ``subprocess.CompletedProcess`` with the exit status
and both texts, what ``subprocess.run([python, "-m", "boilerstrip", ...], capture_output=True)`` gives. What
the child skips is what is not under test: a new interpreter importing Scrapy, Twisted, lxml, numpy and the
project, and a new forkserver for the worker pool importing the workers' modules again (one forkserver,
started by the test process, serves every child's pool). About 3 s of CPU of a small crawl's 4. The crawl
itself (its reactor, worker pool, feed and finishing pass) is the one the CLI runs, once per child:
Twisted's reactor cannot be restarted, and each forked child installs its own.

Measured on the 2-core machine, same load, against a subprocess per crawl: a fork child is cheaper than a
fresh interpreter and needs none of the care a long-lived reactor thread shared by the session would (its
signal handlers, its global state between crawls, a crawl that hangs the reactor for every later test).

Use a real subprocess (``sys.executable -m boilerstrip``) where the process boundary is the point: kill -9,
signals, the process tree and its memory, an environment the test process must not share.

This is the one place the tests call the crawl's entry point: when the runner below the CLI moves, only
:func:`_entry` changes.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: imported once in the test process, so each child starts with them loaded (the components the project's
#: settings name, which a fresh process imports while it builds the crawler)
_PRELOAD = (
    "scrapy.crawler",
    "boilerstrip.cli",
    "boilerstrip.commands.crawl",
    "boilerstrip.spiders.site",
    "boilerstrip.workers._start",
)
_preloaded = False


def _entry(argv: list[str]) -> int:
    from boilerstrip.cli import main

    return main(argv)


def _scrapy_entry(argv: list[str]) -> int:
    from scrapy.cmdline import execute

    execute(["scrapy", *argv])
    return 0


def preload() -> None:
    """Import the crawl's modules and the components its settings name (once per test process); never the
    reactor, which each child installs for itself."""
    global _preloaded
    if _preloaded:
        return
    import importlib

    for name in _PRELOAD:
        importlib.import_module(name)
    from scrapy.utils.misc import load_object

    from boilerstrip import settings as project

    for group in ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES", "EXTENSIONS", "ADDONS"):
        for path, order in getattr(project, group, {}).items():
            if order is not None and path.startswith("boilerstrip."):
                load_object(path)
    from boilerstrip.workers._start import warm_up

    warm_up()
    _preloaded = True


def _child(entry: Callable[[list[str]], int], argv: list[str], cwd: Path, env: dict[str, str] | None,
           out_fd: int, err_fd: int, preexec: Callable[[], None] | None) -> None:
    """The forked child: never returns (``os._exit``), so no test-process cleanup runs twice."""
    code = 1
    try:
        os.setpgid(0, 0)  # its own group: a timeout kills the crawl and whatever it started
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
            signal.signal(signum, signal.SIG_DFL)
        signal.alarm(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8", line_buffering=True)  # noqa: SIM115
        sys.stderr = io.TextIOWrapper(open(2, "wb", closefd=False), encoding="utf-8", line_buffering=True)  # noqa: SIM115
        sys.__stdout__, sys.__stderr__ = sys.stdout, sys.stderr
        import logging

        for handler in list(logging.root.handlers):  # pytest's capture handlers belong to the parent
            logging.root.removeHandler(handler)
        logging.root.setLevel(logging.WARNING)
        os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.environ["PYTHONUNBUFFERED"] = "1"
        _fresh_process_state()
        if preexec is not None:
            preexec()
        code = entry(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 -- an uncaught error is a traceback and status 1, as in a process
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)


def _fresh_process_state() -> None:
    """What a new interpreter would not have: an installed reactor. And one thing it would not have that it
    may share: the session's forkserver (:func:`preload`), which already loaded the workers' modules."""
    if "twisted.internet.reactor" in sys.modules:
        import twisted.internet

        del sys.modules["twisted.internet.reactor"]
        if hasattr(twisted.internet, "reactor"):
            del twisted.internet.reactor
    from multiprocessing import forkserver, resource_tracker

    server = forkserver._forkserver
    if server._forkserver_pid is None:
        return

    def ensure_running() -> None:
        # the server is the test process's child, not this one's: ForkServer's waitpid cannot see it from
        # here, so ask /proc whether it still runs; a dead one is forgotten and this crawl starts its own
        if server._forkserver_pid is not None and not _running(server._forkserver_pid):
            server._forkserver_pid = server._forkserver_address = server._forkserver_alive_fd = None
        if server._forkserver_pid is None:
            type(server).ensure_running(server)
        else:
            resource_tracker.ensure_running()

    server.ensure_running = ensure_running
    forkserver.ensure_running = ensure_running


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _start_forkserver() -> None:
    """The worker pool's forkserver, started once for the session with the workers' modules loaded (as the
    crawl starts its own: ``WorkerPool``); each child's pool forks its workers from it, instead of starting
    a server that imports the workers' modules again."""
    import multiprocessing
    from multiprocessing import forkserver

    from boilerstrip.workers._start import WORKER_MODULES

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(WORKER_MODULES))
    forkserver.ensure_running()


def run_cli(
    argv: Sequence[str],
    *,
    cwd: str | Path = ROOT,
    env: dict[str, str] | None = None,
    timeout: float = 240,
    scrapy: bool = False,
    preexec: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess:
    """``boilerstrip ARGV...`` (or ``scrapy ARGV...`` with ``scrapy=True``) in a forked child; the
    ``CompletedProcess`` a subprocess run would give. ``preexec`` runs in the child before the command (a
    resource limit, a folder on ``sys.path``). Raises ``subprocess.TimeoutExpired`` (the child's process
    group killed) past ``timeout``."""
    preload()
    _start_forkserver()  # (again if a test killed it)
    argv = [str(arg) for arg in argv]
    entry = _scrapy_entry if scrapy else _entry
    shown = ["scrapy" if scrapy else "boilerstrip", *argv]
    sys.stdout.flush()
    sys.stderr.flush()
    out_r, out_w = os.pipe()  # pipes, as a subprocess's capture: a file would meet the child's own limits
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        _child(entry, argv, Path(cwd), env, out_w, err_w, preexec)
    os.close(out_w)
    os.close(err_w)
    try:
        os.setpgid(pid, pid)  # (the child does it too: whichever runs first)
    except OSError:
        pass
    deadline = time.monotonic() + timeout
    try:
        out, err = _read_until_closed(out_r, err_r, deadline, shown, timeout)
        status = _wait(pid, deadline, shown, timeout)
    finally:
        os.close(out_r)
        os.close(err_r)
        if not _reaped(pid):
            _kill_group(pid)
    return subprocess.CompletedProcess(shown, status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def _read_until_closed(out_fd: int, err_fd: int, deadline: float, shown: list[str],
                       timeout: float) -> tuple[bytes, bytes]:
    """Both pipes read to their end (the child and whatever it started closed them), as ``communicate``."""
    import selectors

    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(shown, timeout)
            for key, _ in selector.select(min(left, 1.0)):
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _wait(pid: int, deadline: float, shown: list[str], timeout: float) -> int:
    pause = 0.005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(shown, timeout)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _reaped(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return bool(done)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


__all__ = ["run_cli", "preload", "ROOT"]


def cli_interrupted(argv: Sequence[str], ready: Callable[[], bool], *, ready_within_s: float = 120,
                    stop_within_s: float = 300, env: dict[str, str] | None = None) -> tuple[int, str, float]:
    """``boilerstrip ARGV`` in a new interpreter (its signal handling is the point: not a forked child), sent
    SIGINT once ``ready()`` is true (polled with a deadline of ``ready_within_s``); returns its exit status,
    its output (stdout and stderr) and the seconds from the signal to its end."""
    import tempfile

    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "boilerstrip", *map(str, argv)], cwd=ROOT, env=env,
                                stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + ready_within_s
            while not ready() and time.monotonic() < deadline:
                time.sleep(0.02)
            stopped = time.monotonic()
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=stop_within_s)
            took = time.monotonic() - stopped
        finally:
            proc.kill()
        log.seek(0)
        return code, log.read().decode("utf-8", "replace"), took
