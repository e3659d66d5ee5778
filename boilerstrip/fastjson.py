"""A record's JSON written by orjson, and by the json module when orjson refuses the value.

The crawl writes each record's line once (with its trail: ~55 KB a page on the large-page site) and the
finishing pass writes each page's stored copy and its final line: json's encoder took 0.26 s for the
large-page site's 1,147 lines with their trail, orjson 0.05 s (docs/crawling.md, twelfth pass). orjson writes
what ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` writes (the same bytes for every
extraction of the article set, every line of a crawl of the demo site and every code point:
``tests/test_fastjson.py``) with two exceptions,
both the same values to a reader: a float under 1e-4 in positional notation (``0.00001`` for ``1e-05``), and
NaN or an infinity as ``null`` (json writes ``NaN``, which is not JSON). Reading stays with the json module:
orjson was no faster on these lines, and it reads an integer beyond 64 bits as a float.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["compact_utf8", "lossless_json"]

#: values orjson would write its own way go to the json module instead: datetimes (json calls its
#: ``default``), dataclasses and subclasses of str, int, dict and list (json writes them by their base type)
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS


def compact_utf8(value: Any) -> bytes | None:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` in UTF-8, written by orjson; None
    when orjson refuses ``value`` (a lone surrogate, which UTF-8 cannot hold; a key that is not a string; an
    integer beyond 64 bits; any other type): the caller then encodes it with the json module, as before."""
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


def lossless_json(value: Any) -> str:
    """``value`` as JSON text that ``json.loads`` gives back whole: compact UTF-8 by orjson, or json's ASCII
    escapes when ``value`` holds a lone surrogate (or anything else orjson refuses). What a store of page
    copies keeps: the text and the ASCII forms read back alike."""
    fast = compact_utf8(value)
    return fast.decode("utf-8") if fast is not None else json.dumps(value)
