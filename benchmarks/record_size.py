"""How big a crawl's records are next to their content: average record bytes against ``text`` + ``markdown``.

Usage (from the repository root)::

    .venv/bin/python benchmarks/record_size.py out/site.jsonl [more.jsonl ...]

Pages only (failed/filtered records and tombstones are left out). Issue 24's bar: the default (lean) record
at most 1.5 times its text plus Markdown (UTF-8 bytes, as written).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def record_sizes(path: Path) -> tuple[int, float, float]:
    """(pages, average record bytes, average text + markdown bytes)."""
    pages = record_bytes = content_bytes = 0
    with open(path, "rb") as handle:
        for line in handle:
            record = json.loads(line)
            if (not isinstance(record, dict) or not record.get("url") or record.get("outcome")
                    or record.get("change") in ("removed", "unseen")):
                continue
            pages += 1
            record_bytes += len(line)
            content_bytes += sum(len((record.get(key) or "").encode("utf-8")) for key in ("text", "markdown"))
    return pages, record_bytes / max(pages, 1), content_bytes / max(pages, 1)


def main(argv: list[str] | None = None) -> int:
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        pages, record, content = record_sizes(path)
        ratio = record / content if content else float("inf")
        print(f"{path}: {pages} pages, record {record / 1024:.1f} KiB, text + markdown {content / 1024:.1f} KiB, "
              f"ratio {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
