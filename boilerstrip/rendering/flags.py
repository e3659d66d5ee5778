"""The record flags a page's render history leaves (read from the request meta the middleware wrote)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["render_flags"]


def render_flags(meta: Mapping[str, Any]) -> list[str]:
    """``render_failed:<reason>`` (the browser failed; the static page was kept), ``render_truncated``
    (the rendered HTML hit the size cap), ``render_settle_timeout`` (the content wait hit its bound)."""
    flags = []
    failed = meta.get("boilerstrip_render_failed")
    if failed:
        flags.append(f"render_failed:{failed}")
    if meta.get("boilerstrip_render_truncated"):
        flags.append("render_truncated")
    settle = meta.get("boilerstrip_render_settle")
    if isinstance(settle, Mapping) and settle.get("outcome") in ("timeout", "error"):
        flags.append(f"render_settle_{settle['outcome']}")
    return flags
