"""Other tools' records read with boilerstrip's field names, so ``boilerstrip check`` judges their output too.

A record that has ``url`` and ``text`` is taken as it is (boilerstrip's, or any tool that writes those).
Otherwise the URL, text, Markdown and title are looked for where the tools of this field put them:

- **trafilatura** (``--json`` / ``output_format="json"``): the URL in ``source``, the text in ``text``;
- **Firecrawl** (a crawl's ``data`` items, one a line): ``markdown``, and ``metadata.sourceURL`` or
  ``metadata.url``, ``metadata.title``;
- **Crawl4AI** (``CrawlResult`` as JSON): ``url``, and ``markdown`` as a string or an object whose
  ``raw_markdown`` holds it;
- a ``content`` field for the text (Spider, many scrapers' own exports).

A record with Markdown and no text gets its text from the Markdown as the chunker reads it
(:func:`boilerstrip.chunks.plain_text`: link targets, images' addresses and the heading and quote marks taken
off), since check judges the lines of the text. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boilerstrip.chunks import plain_text

__all__ = ["as_checked_record", "record_url"]

def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def record_url(record: Mapping[str, Any]) -> str | None:
    """The page's URL in any of the shapes above (None: none found)."""
    metadata = record.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    for value in (record.get("url"), metadata.get("sourceURL"), metadata.get("url"), record.get("source")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def as_checked_record(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """``record`` with ``url``, ``text``, ``markdown`` and ``title`` where another tool keeps them elsewhere
    (see the module docstring); a record that has them already is returned as it is."""
    if isinstance(record.get("url"), str) and isinstance(record.get("text"), str):
        return record
    url = record_url(record)
    if url is None:
        return record
    metadata = record.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    markdown = record.get("markdown")
    if isinstance(markdown, Mapping):  # Crawl4AI's MarkdownGenerationResult
        markdown = markdown.get("raw_markdown") or markdown.get("fit_markdown")
    markdown = _text(markdown)
    text = _text(record.get("text")) or _text(record.get("content"))
    if text is None and markdown is not None:
        text = plain_text(markdown)
    if text is None:
        return record  # no text anywhere (a crawl written with --fields url,title): the caller says so
    out = {**record, "url": url, "text": text}
    if markdown is not None:
        out["markdown"] = markdown
    title = _text(record.get("title")) or _text(metadata.get("title"))
    if title is not None:
        out["title"] = title
    return out
