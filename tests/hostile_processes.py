"""Process trees for the kill -9 tests: who a process started, and a deadline for them to be gone.

Read from /proc (Linux): a process's parent is field 4 of ``/proc/PID/stat``. After a ``kill -9`` the
orphans are re-parented (to init or a subreaper), so a test lists the tree *before* the kill and then
waits for every process in that list to disappear; whatever is left at the deadline is killed (the test
cleans up what it started) and reported.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

__all__ = ["descendants", "command_line", "snapshot", "wait_gone", "kill_all", "wait_for_tree"]


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":  # a zombie is gone already: it only waits for its parent to read its status
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (children, their children, ...)."""
    parents = _parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier and child not in found}
        found |= frontier
    return found


def command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def snapshot(pids: set[int]) -> dict[int, str]:
    """pid -> command line: a pid counts as the same process only while its command line is the same
    (a pid freed by an exit may be given to another process)."""
    return {pid: command_line(pid) for pid in pids}


def _alive(pid: int, cmdline: str) -> bool:
    return pid in _parents() and command_line(pid) == cmdline


def wait_for_tree(pid: int, predicate, timeout_s: float) -> set[int]:
    """Poll ``descendants(pid)`` until ``predicate(pids)`` holds (or the deadline); returns the last set."""
    deadline = time.monotonic() + timeout_s
    found: set[int] = set()
    while time.monotonic() < deadline:
        found = descendants(pid)
        if predicate(found):
            return found
        time.sleep(0.1)
    return found


def wait_gone(procs: dict[int, str], timeout_s: float) -> dict[int, str]:
    """Wait until none of ``procs`` (a :func:`snapshot`) is alive; returns those alive at the deadline."""
    deadline = time.monotonic() + timeout_s
    left = dict(procs)
    while left and time.monotonic() < deadline:
        left = {pid: cmd for pid, cmd in left.items() if _alive(pid, cmd)}
        if left:
            time.sleep(0.1)
    return left


def kill_all(procs: dict[int, str]) -> None:
    for pid, cmd in procs.items():
        if not _alive(pid, cmd):
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
