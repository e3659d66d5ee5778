"""Make any text valid UTF-8: lone surrogates become U+FFFD and the record is flagged, never dropped.

A page can yield a lone surrogate through a numeric character reference (``&#xD800;``) or a decoder with
``surrogateescape``; ``json.dumps(..., ensure_ascii=False).encode("utf-8")`` then raises and Scrapy's
feed exporter drops the item with only a log line. ``repair_value`` walks an item's values and fixes them.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "repair_text", "repair_value", "has_replacement"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def repair_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and how many were replaced."""
    return _SURROGATE.subn(REPLACEMENT, text)


def has_replacement(text: str) -> bool:
    """True when ``text`` carries U+FFFD (a decoder met bytes that are not valid in the page's charset)."""
    return REPLACEMENT in text


def repair_value(value: Any) -> tuple[Any, int]:
    """A copy of ``value`` (str, list, tuple, dict, nested) with lone surrogates replaced; and the count.

    Dict keys are repaired too. Values of other types are returned as they are.
    """
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        total = 0
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key, n_key = repair_value(key)
            new_item, n_item = repair_value(item)
            out[new_key] = new_item
            total += n_key + n_item
        return out, total
    if isinstance(value, (list, tuple)):
        total = 0
        items = []
        for item in value:
            new_item, n_item = repair_value(item)
            items.append(new_item)
            total += n_item
        return (type(value)(items) if isinstance(value, tuple) else items), total
    return value, 0
