"""Write a file so that readers see the old one or the new one, never half of one.

Pure (standard library only): used by the crash-safe feed (``boilerstrip.feeds``) and by the finishing
pass (``boilerstrip.boilerplate.finish``). The new content goes to a temporary file in the same folder, is
flushed and fsynced, then renamed over the target; the folder is fsynced so the rename survives a power
loss. Files get the mode an ordinary ``open()`` would give them, not ``mkstemp``'s private 0o600: the
output, ledger, manifest and report are for other users and tools too.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["FILE_MODE", "atomic_open", "fsync_dir", "atomic_write_lines", "atomic_write_json", "append_line",
           "read_whole_lines", "iter_whole_lines", "record_url", "written_urls", "OutputBusy", "output_lock",
           "output_writer", "WRITE_ERRNO_STAT", "FEED_STORE_FAILED_STAT", "write_error_advice", "errno_name",
           "note_write_error"]

logger = logging.getLogger(__name__)


#: stat: the errno name (``ENOSPC``, ``ENOENT``...) of the first write error that stopped a crawl: what the
#: advice at its end (:func:`write_error_advice`) is chosen by
WRITE_ERRNO_STAT = "boilerstrip/write_error/errno"
#: stat: the part file the crawl-safe feed could not move into place when the crawl ended (its folder gone)
FEED_STORE_FAILED_STAT = "boilerstrip/feeds/store_failed"


def write_error_advice(error: BaseException | str | None, again: str = "the same command with --resume") -> str:
    """What to do after a write error stopped a crawl, by its cause (an OSError or its errno name): free space
    for a full disk, and in every case but a removed folder the same command with ``--resume``. "Free space"
    was the advice for every cause: a folder removed during the crawl took its part file and journal along,
    so ``--resume`` had nothing to go on."""
    name = error if isinstance(error, str) or error is None else errno_name(error)
    if name == "ENOENT":
        return "its folder was removed or moved while the crawl ran, and what it had written with it: run the command again"
    if name in ("EACCES", "EPERM", "EROFS"):
        return f"the folder stopped taking writes (permissions, a read-only file system): fix that, then {again}"
    if name in (None, "ENOSPC", "EDQUOT", "EFBIG"):  # (EFBIG: a file size limit, ulimit -f)
        return f"free space, then {again}"
    return f"fix the cause ({name}), then {again}"


def note_write_error(stats: Any, error: BaseException) -> None:
    """Keep the errno name of the crawl's first write error in ``stats`` (``WRITE_ERRNO_STAT``), for the
    advice its last line gives; a later error does not replace it. ``stats``: a Scrapy stats collector, or None."""
    if stats is not None and stats.get_value(WRITE_ERRNO_STAT) is None:
        stats.set_value(WRITE_ERRNO_STAT, errno_name(error))


def errno_name(error: BaseException) -> str | None:
    """The errno name of an OSError (``ENOSPC``), or None."""
    import errno

    code = getattr(error, "errno", None)
    return errno.errorcode.get(code) if isinstance(code, int) else None


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: 0o666 minus the umask. Read once at import: reading the umask means setting it, which would race with
#: other threads later.
FILE_MODE = 0o666 & ~_read_umask()


def fsync_dir(folder: str | Path) -> None:
    """fsync a folder (a rename in it is then durable); a file system that cannot is left alone."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file for ``path`` ("w": UTF-8 text with "\\n" newlines, "wb": bytes); on a clean
    exit it replaces ``path``, on an exception it is removed and ``path`` is untouched."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', not {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        text = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **text) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


# -- whole lines ----------------------------------------------------------------------------------------------
def read_whole_lines(path: Path, truncate: bool = False) -> list[bytes]:
    """The complete (newline-terminated) lines of ``path``; with ``truncate``, cut a torn last line off."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if truncate and end != len(data):
        with open(path, "r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
        logger.warning("feeds: cut a torn last line (%d bytes) off %s", len(data) - end, path)
    return data[:end].splitlines()


def iter_whole_lines(path: Path) -> Iterable[bytes]:
    """The complete (newline-terminated) lines of ``path``, one at a time (a torn last line is left out):
    memory holds one line, not the file."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for line in handle:
            if line.endswith(b"\n"):
                yield line.rstrip(b"\r\n")


#: the start of a record line as boilerstrip writes it (``dump_record``, the feed exporter): its URL can be
#: read without parsing a line of tens of kilobytes
_RECORD_URL_RE = re.compile(rb'^\{"schema_version": ?\d+, ?"url": ?("(?:[^"\\]|\\.)*")')


def record_url(line: bytes) -> str | None:
    """The ``url`` of a JSON record line, or None (not a JSON object, no string URL)."""
    match = _RECORD_URL_RE.match(line)
    if match is not None:
        try:
            url = json.loads(match.group(1))
        except ValueError:
            url = None
        if isinstance(url, str):
            return url
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record["url"] if isinstance(record, dict) and isinstance(record.get("url"), str) else None


def written_urls(path: Path) -> set[str]:
    urls: set[str] = set()
    for line in iter_whole_lines(path):
        url = record_url(line)
        if url is not None:
            urls.add(url)
    return urls


def atomic_write_lines(path: str | Path, lines: Iterable[str | bytes]) -> int:
    """Write ``lines`` (each gets a trailing newline) to ``path`` through a temp file + fsync + rename.

    Readers see the old file or the new one, never half of one. Returns the number of lines written.
    """
    count = 0
    with atomic_open(path, "wb") as handle:
        for line in lines:
            data = line if isinstance(line, bytes) else line.encode("utf-8")
            handle.write(data.rstrip(b"\n") + b"\n")
            count += 1
    return count


def atomic_write_json(path: str | Path, data: Any) -> None:
    """Write one JSON document atomically (the manifest)."""
    with atomic_open(path, "w") as handle:
        handle.write(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line with a single write (used for the dead-letter file and the ledger journal)."""
    data = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8", "replace")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


class OutputBusy(Exception):
    """Another run holds the output's lock (:func:`output_lock`); the message names it, ``holder`` is its pid
    as the lock file says it ("?" when it does not)."""

    def __init__(self, message: str, holder: str = "?") -> None:
        super().__init__(message)
        self.holder = holder


@contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """One run at a time writes ``out``: an exclusive lock on ``.OUT.lock`` beside it for the whole run (the
    crawl, its finishing pass). Two runs on one output (a cron job over a manual run) each renamed and
    rewrote the other's files, and one of them reported success over a short output. Raises
    :class:`OutputBusy` when another run holds it. The kernel drops the lock with its process (``kill -9``
    too); the file is removed when the run ends."""
    path = _lock_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)  # the folder the output goes to (each command makes it anyway)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip()
            os.close(fd)
            raise OutputBusy(f"{out} is being written by another run (pid {holder or '?'}); wait for it to end, "
                             "or write elsewhere with -o", holder or "?") from None
        try:  # the run before may have removed the file between our open and our lock: lock the one that is there
            current = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def _lock_path(out: Path) -> Path:
    return Path(out).with_name(f".{Path(out).name}.lock")


def output_writer(path: str | Path) -> str | None:
    """Who is writing ``path`` now: "pid N" of the run that holds its :func:`output_lock`, else None. Only
    looks: it creates no file (an input may sit in a folder this run cannot write)."""
    try:
        fd = os.open(_lock_path(Path(path)), os.O_RDONLY)
    except OSError:
        return None  # no lock file: no run is writing it
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 64).decode("ascii", "replace").strip()
        return f"pid {holder or '?'}"
    except OSError:
        return None
    finally:
        os.close(fd)
    return None
