"""The record flags a page's render history leaves (read from the request meta the middleware wrote)."""

from __future__ import annotations

from boilerstrip.meta import (
    RENDER_FAILED_META,
    RENDER_PLACEHOLDER_META,
    RENDER_SETTLE_META,
    RENDER_STATIC_LOOK_META,
    RENDER_TRUNCATED_META,
)

from collections.abc import Mapping
from typing import Any

__all__ = ["render_flags"]


def render_flags(meta: Mapping[str, Any]) -> list[str]:
    """``render_failed:<reason>`` (the browser failed; the static page was kept), ``render_truncated``
    (the rendered HTML hit the size cap), ``render_wait:<outcome>`` (how the content wait ended: settled,
    quiet, idle, timeout, error), ``render_repaired_surrogates`` (lone surrogates in script-written text
    were replaced by U+FFFD), ``render_static_look`` (a learned host's page whose served HTML already held
    its content: not rendered), ``render_placeholder:<verdict>`` (rendered twice, the page still showed a
    placeholder: a loading shell or an empty app root)."""
    flags = []
    failed = meta.get(RENDER_FAILED_META)
    if failed:
        flags.append(f"render_failed:{failed}")
    if meta.get(RENDER_TRUNCATED_META):
        flags.append("render_truncated")
    settle = meta.get(RENDER_SETTLE_META)
    if isinstance(settle, Mapping) and settle.get("outcome"):
        flags.append(f"render_wait:{settle['outcome']}")
        if settle.get("surrogates_repaired"):
            flags.append("render_repaired_surrogates")
    if meta.get(RENDER_STATIC_LOOK_META):
        flags.append("render_static_look")
    placeholder = meta.get(RENDER_PLACEHOLDER_META)
    if placeholder:
        flags.append(f"render_placeholder:{placeholder}")
    return flags
