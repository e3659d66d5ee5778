"""Regenerate the golden extraction outputs: ``tests/golden/extraction/<name>/expected.txt`` from
``source.html`` with the current extractor.

Run it only after a deliberate change to the extractor, then read the diff (``git diff tests/golden``)
before committing: the expected files are the reviewed behaviour, not a snapshot to refresh blindly.

    .venv/bin/python tests/golden/regenerate.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from boilerstrip.extraction import extract  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "extraction"


def expected_text(source: Path) -> str:
    result = extract(source.read_bytes())
    header = f"# method: {result.method}\n# title: {result.title}\n"
    return header + result.text + "\n"


def main() -> int:
    for case in sorted(p for p in GOLDEN.iterdir() if (p / "source.html").is_file()):
        (case / "expected.txt").write_text(expected_text(case / "source.html"), encoding="utf-8")
        print(f"wrote {case.relative_to(ROOT)}/expected.txt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
