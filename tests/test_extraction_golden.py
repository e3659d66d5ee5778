"""Golden pages: whole realistic pages whose reviewed output is pinned in ``expected.txt``.

The expected files are written only by ``tests/golden/regenerate.py``; a difference here is either a
regression or a deliberate change to regenerate and review.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p.name for p in (GOLDEN / "extraction").iterdir() if (p / "source.html").is_file())

_spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
regenerate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regenerate)


def test_there_are_golden_pages_for_each_rung() -> None:
    methods = {(GOLDEN / "extraction" / c / "expected.txt").read_text(encoding="utf-8").splitlines()[0] for c in CASES}
    assert {"# method: semantic", "# method: density"} <= methods


@pytest.mark.parametrize("case", CASES)
def test_golden_page(case: str) -> None:
    folder = GOLDEN / "extraction" / case
    expected = (folder / "expected.txt").read_text(encoding="utf-8")
    assert regenerate.expected_text(folder / "source.html") == expected


def test_golden_blog_drops_every_widget() -> None:
    # The extractor's own output, not the pinned file: every widget is in the source and none in the text.
    source = GOLDEN / "extraction" / "blog-wordpress" / "source.html"
    html = source.read_text(encoding="utf-8")
    text = regenerate.expected_text(source)
    for chrome in ("Share this", "Related", "Leave a Reply", "Great tips", "Recent Posts", "cookies", "Posted in", "harvest, picked"):
        assert chrome in html
        assert chrome not in text
