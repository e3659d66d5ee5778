"""Processes that die with the process that started them (pure: no Scrapy import).

A ``kill -9`` gives a process no chance to stop its children, so each child asks the kernel to do it:
Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG)``, through ctypes), sent to the child when its
parent dies. Three users: the crawl's worker processes (:mod:`boilerstrip.workers._start`), the
coordinator's local workers and the scheduler's crawls. The signal follows the *thread* that started the
child: only start a child this way from a thread that lives at least as long as the child (the main
thread, or one that waits for the child).

Elsewhere (macOS, where there is no such call) :func:`die_with_parent` returns False and does nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

__all__ = ["die_with_parent", "parent_death_hook", "PDEATHSIG_SUPPORTED"]

#: <sys/prctl.h>
_PR_SET_PDEATHSIG = 1
PDEATHSIG_SUPPORTED = sys.platform.startswith("linux")


_PRCTL: list = []


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (looked up once), or None off Linux."""
    if not _PRCTL:
        try:
            _PRCTL.append(ctypes.CDLL(None, use_errno=True).prctl if PDEATHSIG_SUPPORTED else None)
        except (OSError, AttributeError):
            _PRCTL.append(None)
    return _PRCTL[0]


def die_with_parent(sig: int = signal.SIGKILL, parent_pid: int | None = None) -> bool:
    """Have the kernel send ``sig`` to this process when its parent dies. With ``parent_pid`` (the parent
    as the caller knew it), a parent that died before the call is caught too: this process then sends
    ``sig`` to itself. Returns whether the platform supports it."""
    prctl = _prctl()
    if prctl is None or prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        return False
    if parent_pid is not None and os.getppid() != parent_pid:
        os.kill(os.getpid(), sig)  # orphaned already: the signal the kernel would have sent
    return True


def parent_death_hook(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``subprocess.Popen(preexec_fn=...)`` that makes the child die with this process (with ``sig``);
    None where the platform cannot. Runs in the child between fork and exec (the signal survives exec)."""
    if _prctl() is None:
        return None
    parent = os.getpid()  # (and libc's prctl looked up here: no dlopen in a child forked from threads)

    def hook() -> None:
        die_with_parent(sig, parent_pid=parent)

    return hook
