"""Third rung: text nodes selected by a configurable body-text XPath.

``bodytext_xpath`` builds ``//body//*[self::a or ...][not(ancestor::area) and ...]/text()`` from two tag
lists; ``extract_bodytext`` runs it on a parsed document and groups the text nodes into blocks by their
nearest block-level element.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from lxml import etree

from .blocks import is_permalink
from ._vocab import BLOCK_TAGS, CONTROL_CHARS_RE, KIND_BY_TAG, WHITESPACE_RE

DEFAULT_INCLUDE_TAGS: tuple[str, ...] = tuple(
    """a abbr address article b bdi bdo blockquote caption cite code data dd del details dfn div dl dt em
    figcaption h1 h2 h3 h4 h5 h6 header i ins kbd li main mark menu noscript ol p pre q rp rt ruby s samp
    section small span strong sub summary sup time u ul var""".split()
)
DEFAULT_EXCLUDE_TAGS: tuple[str, ...] = tuple(
    """area aside audio base button canvas col colgroup datalist embed fieldset footer form head iframe img
    input label legend link map meta nav object optgroup option output param picture script search select
    source style svg table tbody td textarea tfoot th thead title tr track video""".split()
)

_TAG_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*$")


def _normalise_tags(tags: Iterable[str] | str, name: str) -> list[str]:
    if isinstance(tags, str):
        raise ValueError(f"{name} must be a list of tag names, not the string {tags!r}")
    result = set()
    for tag in tags:
        if not isinstance(tag, str) or not _TAG_NAME_RE.match(tag.strip()):
            raise ValueError(f"{name}: {tag!r} is not a tag name")
        result.add(tag.strip().lower())
    return sorted(result)


def bodytext_xpath(
    include_tags: Iterable[str] = DEFAULT_INCLUDE_TAGS,
    exclude_tags: Iterable[str] = DEFAULT_EXCLUDE_TAGS,
) -> str:
    """The XPath selecting the text nodes of ``include_tags`` elements under <body> that have no
    ``exclude_tags`` ancestor. Tags are lower-cased, de-duplicated and sorted, so the output is stable; the
    arguments are only read. Raises ``ValueError`` naming the tags found in both lists, or when
    ``include_tags`` is empty or a name is not a tag name."""
    include = _normalise_tags(include_tags, "include_tags")
    exclude = _normalise_tags(exclude_tags, "exclude_tags")
    both = sorted(set(include) & set(exclude))
    if both:
        raise ValueError(f"tags in both include_tags and exclude_tags: {', '.join(both)}")
    if not include:
        raise ValueError("include_tags must name at least one tag")
    expression = "//body//*[" + " or ".join(f"self::{tag}" for tag in include) + "]"
    if exclude:
        expression += "[" + " and ".join(f"not(ancestor::{tag})" for tag in exclude) + "]"
    return expression + "/text()"


@lru_cache(maxsize=16)
def _compiled(include: tuple[str, ...], exclude: tuple[str, ...]) -> etree.XPath:
    return etree.XPath(bodytext_xpath(include, exclude), smart_strings=True)


def _owner(text_node) -> etree._Element | None:
    element = text_node.getparent()
    if element is not None and text_node.is_tail:
        element = element.getparent()
    while element is not None and element.tag not in BLOCK_TAGS:
        element = element.getparent()
    return element


def extract_bodytext(
    document: etree._Element,
    include_tags: Iterable[str] = DEFAULT_INCLUDE_TAGS,
    exclude_tags: Iterable[str] = DEFAULT_EXCLUDE_TAGS,
) -> tuple[list[tuple[str, str]], int]:
    """Run the body-text XPath on ``document``: (list of (kind, text) blocks, link characters)."""
    xpath = _compiled(tuple(include_tags), tuple(exclude_tags))
    blocks: list[tuple[str, str]] = []
    link_chars = 0
    current_owner = None
    parts: list[str] = []

    def flush() -> None:
        if parts and current_owner is not None:
            kind = KIND_BY_TAG.get(current_owner.tag, "p")
            raw = "".join(parts)
            text = raw.strip("\n").rstrip() if kind == "pre" else WHITESPACE_RE.sub(" ", raw).strip()
            if text:
                blocks.append((kind, CONTROL_CHARS_RE.sub("", text)))
        parts.clear()

    for node in xpath(document):
        parent = node.getparent()
        if parent is not None and not node.is_tail and parent.tag == "a":
            if (parent.get("href") or "").startswith("#") and is_permalink(parent, parent.get("href")):
                continue  # a heading's "¶"
        owner = _owner(node)
        if owner is not current_owner:
            flush()
            current_owner = owner
        parts.append(str(node))
        if parent is not None and not node.is_tail and parent.tag == "a":
            link_chars += len(node.strip())
    flush()
    return blocks, link_chars
