"""``crawl --warc DIR``: the options as settings, and the summary line of what a crawl wrote."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["warc_overrides", "warc_written_line"]


def warc_overrides(folder: str | None, max_bytes: str | None) -> dict[str, str]:
    """``crawl --warc DIR [--warc-max-bytes N]`` as settings, checked (a bad value raises ValueError with the
    message for the user)."""
    if not folder:
        raise ValueError("--warc-max-bytes needs --warc DIR")
    path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"--warc {str(path)!r} is a file; it expects a folder")
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--warc {str(path)!r}: cannot write to {str(existing)!r}: permission denied")
    overrides = {"BOILERSTRIP_WARC_DIR": str(path.resolve())}
    if max_bytes is not None:
        try:
            number = int(str(max_bytes).strip())
        except ValueError:
            raise ValueError(f"--warc-max-bytes expects a whole number, got {max_bytes!r}") from None
        if number < 1024:
            raise ValueError(f"--warc-max-bytes must be >= 1024, got {number}")
        overrides["BOILERSTRIP_WARC_PARAMS"] = {"max_file_bytes": number}
    return overrides


def warc_written_line(stats: dict[str, Any]) -> str:
    """``WARC: 120 responses, 2 revisits, 3 rendered in 1 file(s) in DIR`` from a crawl's stats."""
    prefix = "boilerstrip/warc"
    parts = [f"{stats.get(f'{prefix}/records/response', 0)} responses"]
    for key, label in (("revisit", "revisits (304)"), ("metadata", "rendered pages")):
        if stats.get(f"{prefix}/records/{key}"):
            parts.append(f"{stats[f'{prefix}/records/{key}']} {label}")
    line = f"WARC: {', '.join(parts)} in {stats.get(f'{prefix}/files', 0)} file(s) in {stats.get(f'{prefix}/dir')}"
    if stats.get(f"{prefix}/recovered_files"):
        line += (f"; {stats[f'{prefix}/recovered_files']} file(s) an interrupted run left open were cut to their last "
                 f"whole record ({stats.get(f'{prefix}/recovered_cut_bytes', 0)} bytes dropped)")
    return line
