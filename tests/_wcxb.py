"""WCXB-dev pages extracted once per test process: the quality floor (``test_extraction_benchmark.py``) and the
confidence floor (``test_confidence_benchmark.py``) score the same extraction of the same pages, with the
default :class:`~boilerstrip.extraction.ExtractionParams`, so whichever runs second reads the first one's
results for the pages they share. (Under pytest-xdist each worker process keeps its own: at worst each
page is extracted once per worker, as each test did for itself before; ``xdist_group("wcxb")`` on both tests
puts them on one worker under ``--dist loadgroup``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any

from boilerstrip.extraction import ExtractionParams, extract


@dataclass(frozen=True)
class Extracted:
    """What the floors read of one page's extraction."""

    text: str
    confidence: float


#: (page id, digest of its HTML) -> its extraction (the digest tells two datasets' pages of one id apart)
_done: dict[tuple[str, bytes], Extracted] = {}


def extracted(pages: Sequence[Any]) -> list[Extracted]:
    """Each page's extraction (``page.page_id``, ``.url``, ``.html``), extracting the pages not seen before."""
    params = ExtractionParams()
    results = []
    for page in pages:
        key = (page.page_id, blake2b(page.html.encode("utf-8", "surrogatepass"), digest_size=16).digest())
        if key not in _done:
            result = extract(page.html, url=page.url, params=params)
            _done[key] = Extracted(result.text, result.confidence)
        results.append(_done[key])
    return results


__all__ = ["Extracted", "extracted"]
