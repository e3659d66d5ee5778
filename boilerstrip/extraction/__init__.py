"""Main-content extraction: from one page's HTML, keep the article and drop the chrome.

A pure library (lxml, selectolax and w3lib only; no Scrapy, Twisted or Playwright import)::

    from boilerstrip.extraction import extract
    result = extract(html, url="https://example.com/post")
    result.text, result.title, result.method, result.attempts

The ladder is semantic markup, then text density, then a configurable body-text XPath; every result says
which rung won and why the others were refused.
"""

from .blocks import Block, render_markdown, render_text
from .bodytext import DEFAULT_EXCLUDE_TAGS, DEFAULT_INCLUDE_TAGS, bodytext_xpath
from .core import Attempt, ExtractionResult, decode_html, extract, main_text_chars, over_node_budget
from .metadata import Metadata
from .params import EXTRACTION_PRESETS, ExtractionParams, extraction_preset

# the extractor's vocabulary the cross-page pass reads too (one copy of each rule)
from ._vocab import LIST_ITEM_KINDS, NAVIGATION_BOX_TITLES, NEVER_CONTENT_TAGS

__all__ = [
    "LIST_ITEM_KINDS",
    "NAVIGATION_BOX_TITLES",
    "NEVER_CONTENT_TAGS",
    "Attempt",
    "Block",
    "DEFAULT_EXCLUDE_TAGS",
    "DEFAULT_INCLUDE_TAGS",
    "EXTRACTION_PRESETS",
    "ExtractionParams",
    "extraction_preset",
    "ExtractionResult",
    "Metadata",
    "bodytext_xpath",
    "decode_html",
    "extract",
    "main_text_chars",
    "over_node_budget",
    "render_markdown",
    "render_text",
]
