"""FinalizePipeline: the last pipeline (900). Makes every record complete and small before export.

- When no extractor filled the item (``text`` empty and ``method`` unset, e.g. the extraction pipeline is
  disabled), fills a placeholder: the body text minus nav/header/footer/aside/script/style, the
  ``<title>`` and the declared ``<html lang>``; ``method`` is then ``"placeholder"``.
- Sets ``content_hash`` = sha256 (hex) of the final ``text``.
- Clears ``html`` and ``reading``: the raw page and its reading never reach the output.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import lxml.etree
import lxml.html
from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from boilerstrip.config import component_enabled

__all__ = ["FinalizePipeline", "placeholder_fields", "content_hash"]

#: elements whose text is never main content, for the placeholder text
_DROP_TAGS = ("nav", "header", "footer", "aside", "script", "style", "noscript", "template", "svg", "form")
#: elements that start a new line in the placeholder text
_BLOCK_TAGS = (
    "p", "div", "section", "article", "main", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt",
    "dd", "pre", "blockquote", "table", "tr", "td", "th", "br", "hr", "figure", "figcaption", "address",
)  # fmt: skip
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_BLANKS = re.compile(r"\n\s*\n+")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def placeholder_fields(html: str) -> dict[str, Any]:
    """``{"text", "title", "lang"}`` from raw HTML; never raises (an unparsable page gives empty text)."""
    try:
        root = lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError, TypeError):
        return {"text": "", "title": None, "lang": None}
    title = root.findtext(".//title")
    lang = root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang")
    body = root.find("body")
    body = body if body is not None else root
    for element in body.xpath(" | ".join(f".//{tag}" for tag in _DROP_TAGS)):
        if element.getparent() is not None:
            element.drop_tree()
    for element in body.iter(*_BLOCK_TAGS):  # one line per block, not one run-on string
        element.text = "\n" + (element.text or "")
        element.tail = "\n" + (element.tail or "")
    raw = lxml.etree.tostring(body, method="text", encoding="unicode", with_tail=False) or ""
    lines = [_SPACES.sub(" ", line).strip() for line in raw.splitlines()]
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    return {
        "text": text,
        "title": _SPACES.sub(" ", title).strip() or None if title else None,
        "lang": lang.strip() or None if lang else None,
    }


class FinalizePipeline:
    @classmethod
    def from_crawler(cls, crawler: Any) -> "FinalizePipeline":
        if not component_enabled(crawler.settings, "finalize"):
            raise NotConfigured("BOILERSTRIP_FINALIZE_ENABLED is false")
        return cls()

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        html = adapter.get("html")
        if not adapter.get("text") and adapter.get("method") is None and html:
            found = placeholder_fields(html)
            adapter["text"] = found["text"]
            adapter["method"] = "placeholder"
            if not adapter.get("title"):
                adapter["title"] = found["title"]
            if not adapter.get("lang"):
                adapter["lang"] = found["lang"]
        adapter["content_hash"] = content_hash(adapter.get("text") or "")
        names = adapter.field_names()
        for name in ("html", "reading"):
            if name in names:
                adapter[name] = None
        return item
