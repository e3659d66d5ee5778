"""Third rung: text nodes selected by a configurable body-text XPath.

``bodytext_xpath`` builds ``//body//*[self::a or ...][not(ancestor::area) and ...]/text()`` from two tag
lists; ``extract_bodytext`` takes the text nodes it selects from a parsed document (found without its
ancestor tests, which libxml2 makes slow: ``selected_text_nodes``) and groups them into blocks by their
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
def _tag_sets(include: tuple[str, ...], exclude: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The two lists as ``bodytext_xpath`` reads them (lower-cased, de-duplicated), after its checks."""
    bodytext_xpath(include, exclude)  # raises ValueError on lists it refuses
    return frozenset(_normalise_tags(include, "include_tags")), frozenset(_normalise_tags(exclude, "exclude_tags"))


#: every text node under a <body>, in document order: a superset of ``bodytext_xpath``'s, filtered below
_BODY_TEXT_NODES = etree.XPath("//body//text()", smart_strings=True)


def selected_text_nodes(document: etree._Element, include: frozenset[str], exclude: frozenset[str]) -> list:
    """The text nodes ``bodytext_xpath(include, exclude)`` selects, in document order (lxml's strings of
    them, which know their element), without its tests: libxml2 evaluates each ``not(ancestor::x)`` by
    building the node's whole ancestor set, one per excluded tag, for every candidate element (21 ms a page
    on the 88 WCXB-dev pages the rung runs on; this: ~3). The text nodes of an element whose tag is in
    ``include``, below a <body>, without an ancestor whose tag is in ``exclude``; one text node at a time,
    as the XPath gives them (adjacent text nodes left by stripped tags stay apart)."""
    free: dict[etree._Element, bool] = {}  # element -> no ancestor of it has an excluded tag

    def is_free(element: etree._Element) -> bool:
        climbed = []
        parent = element.getparent()
        verdict = True
        while parent is not None:
            known = free.get(parent)
            if known is not None:
                verdict = known and parent.tag not in exclude
                break
            climbed.append(parent)
            parent = parent.getparent()
        # climbed[i]'s ancestors are climbed[i + 1:] (and what ``verdict`` says of the ones above them)
        for ancestor in reversed(climbed):
            free[ancestor] = verdict
            verdict = verdict and ancestor.tag not in exclude
        free[element] = verdict
        return verdict

    selected = []
    for node in _BODY_TEXT_NODES(document):
        element = node.getparent()
        if node.is_tail:
            element = element.getparent()
        tag = element.tag
        if tag not in include:
            continue
        if tag == "body" and next(element.iterancestors("body"), None) is None:
            continue  # the text of the outermost <body> itself (the XPath's ``//body//*`` is below it)
        known = free.get(element)
        if known if known is not None else is_free(element):
            selected.append(node)
    return selected


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
    include, exclude = _tag_sets(tuple(include_tags), tuple(exclude_tags))
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

    for node in selected_text_nodes(document, include, exclude):
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
