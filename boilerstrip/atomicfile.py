"""Write a file so that readers see the old one or the new one, never half of one.

Pure (standard library only): used by the crash-safe feed (``boilerstrip.feeds``) and by the finishing
pass (``boilerstrip.boilerplate.finish``). The new content goes to a temporary file in the same folder, is
flushed and fsynced, then renamed over the target; the folder is fsynced so the rename survives a power
loss. Files get the mode an ordinary ``open()`` would give them, not ``mkstemp``'s private 0o600: the
output, ledger, manifest and report are for other users and tools too.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["FILE_MODE", "atomic_open", "fsync_dir"]


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
