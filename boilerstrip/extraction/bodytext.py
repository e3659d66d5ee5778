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

from ._vocab import BLOCK_TAGS, CONTROL_CHARS_RE, INLINE_CODE_TAGS, KIND_BY_TAG, WHITESPACE_RE
from .blocks import CODE_CLOSE, CODE_OPEN, Block, code_fence, code_language, inline_markdown, is_permalink

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
    if element is not None and element.tag != "pre":
        pre = next(element.iterancestors("pre"), None)
        if pre is not None:  # a block inside a code block (rustdoc's attribute <div>) is part of it
            return pre
    return element


def _code_of(text_node, owner: etree._Element | None) -> etree._Element | None:
    """The outermost inline code element around ``text_node`` below its block ``owner``, if any."""
    element = text_node.getparent()
    if element is not None and text_node.is_tail:
        element = element.getparent()
    found = None
    while element is not None and element is not owner:
        if element.tag in INLINE_CODE_TAGS:
            found = element
        element = element.getparent()
    return found


def extract_bodytext(
    document: etree._Element,
    include_tags: Iterable[str] = DEFAULT_INCLUDE_TAGS,
    exclude_tags: Iterable[str] = DEFAULT_EXCLUDE_TAGS,
) -> tuple[list[Block], int]:
    """Run the body-text XPath on ``document``: (blocks, link characters). A block's Markdown holds its
    inline code as code spans; a code block's, the language its page declares."""
    xpath = _compiled(tuple(include_tags), tuple(exclude_tags))
    blocks: list[Block] = []
    link_chars = 0
    current_owner = None
    current_code = None
    parts: list[str] = []
    marked = [False]

    def flush() -> None:
        if parts and current_owner is not None:
            kind = KIND_BY_TAG.get(current_owner.tag, "p")
            raw = "".join(parts)
            if kind == "pre":
                text = raw.strip("\n").rstrip()
                language = code_language(current_owner)
                markdown = None
                if text and language:
                    fence = code_fence(text)
                    markdown = f"{fence}{language}\n{text}\n{fence}"
            else:
                plain = raw.replace(CODE_OPEN, "").replace(CODE_CLOSE, "") if marked[0] else raw
                text = WHITESPACE_RE.sub(" ", plain).strip()
                markdown = inline_markdown(" ".join(raw.split())) if marked[0] else None
            if text:
                text = CONTROL_CHARS_RE.sub("", text)
                markdown = CONTROL_CHARS_RE.sub("", markdown) if markdown is not None else None
                blocks.append(Block(kind, text, markdown if markdown != text else None))
        parts.clear()
        marked[0] = False

    for node in xpath(document):
        parent = node.getparent()
        if parent is not None and not node.is_tail and parent.tag == "a":
            if (parent.get("href") or "").startswith("#") and is_permalink(parent, parent.get("href")):
                continue  # a heading's "¶"
        owner = _owner(node)
        if owner is not current_owner:
            if current_code is not None:
                parts.append(CODE_CLOSE)
                current_code = None
            flush()
            current_owner = owner
        code = None if owner is not None and owner.tag == "pre" else _code_of(node, owner)
        if code is not current_code:
            if current_code is not None:
                parts.append(CODE_CLOSE)
            if code is not None:
                parts.append(CODE_OPEN)
                marked[0] = True
            current_code = code
        if node.is_tail and parent is not None and parent.tag in BLOCK_TAGS and owner is not None and owner.tag == "pre" \
                and parts and not parts[-1].endswith("\n"):
            parts.append("\n")  # after a block inside a code block: its own line
        parts.append(str(node))
        if parent is not None and not node.is_tail and parent.tag == "a":
            link_chars += len(node.strip())
    if current_code is not None:
        parts.append(CODE_CLOSE)
    flush()
    return blocks, link_chars
