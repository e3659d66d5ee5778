"""The contract of ``bodytext_xpath``: the expression it builds from two tag lists, and the text nodes the rung
finds without evaluating it (the same ones)."""

from __future__ import annotations

import pytest
from lxml import etree

from boilerstrip.extraction import DEFAULT_EXCLUDE_TAGS, DEFAULT_INCLUDE_TAGS, bodytext_xpath
from boilerstrip.extraction.bodytext import _tag_sets, selected_text_nodes

ISSUE_INCLUDE = (
    "a abbr address article b bdi bdo blockquote caption cite code data dd del details dfn div dl dt em "
    "figcaption h1 h2 h3 h4 h5 h6 header i ins kbd li main mark menu noscript ol p pre q rp rt ruby s samp "
    "section small span strong sub summary sup time u ul var"
).split()
ISSUE_EXCLUDE = (
    "area aside audio base button canvas col colgroup datalist embed fieldset footer form head iframe img "
    "input label legend link map meta nav object optgroup option output param picture script search select "
    "source style svg table tbody td textarea tfoot th thead title tr track video"
).split()


def test_defaults_are_the_issue_lists() -> None:
    assert list(DEFAULT_INCLUDE_TAGS) == ISSUE_INCLUDE
    assert list(DEFAULT_EXCLUDE_TAGS) == ISSUE_EXCLUDE


def test_default_expression_shape() -> None:
    expression = bodytext_xpath()
    assert expression.startswith("//body//*[self::a or self::abbr or self::address or ")
    assert "][not(ancestor::area) and not(ancestor::aside) and " in expression
    assert expression.endswith(" and not(ancestor::video)]/text()")
    etree.XPath(expression)  # valid XPath 1.0


def test_small_lists_exact_output_sorted_and_deduplicated() -> None:
    assert bodytext_xpath(["p", "a", "P"], ["nav", "aside"]) == (
        "//body//*[self::a or self::p][not(ancestor::aside) and not(ancestor::nav)]/text()"
    )


def test_output_is_stable_whatever_the_order() -> None:
    assert bodytext_xpath(reversed(ISSUE_INCLUDE), reversed(ISSUE_EXCLUDE)) == bodytext_xpath()


def test_overlap_raises_naming_the_tags() -> None:
    with pytest.raises(ValueError) as excinfo:
        bodytext_xpath(["p", "div", "nav", "table"], ["table", "nav", "footer"])
    message = str(excinfo.value)
    assert "nav" in message and "table" in message
    assert "div" not in message and "footer" not in message


@pytest.mark.parametrize("bad", [["p q"], ["p]"], [""], ["1p"], [None], "p,div"])
def test_bad_tag_names_raise(bad) -> None:
    with pytest.raises(ValueError):
        bodytext_xpath(bad, ["nav"])


def test_empty_include_raises_and_empty_exclude_is_allowed() -> None:
    with pytest.raises(ValueError):
        bodytext_xpath([], ["nav"])
    assert bodytext_xpath(["p"], []) == "//body//*[self::p]/text()"


def test_never_mutates_arguments_or_defaults() -> None:
    include, exclude = ["span", "p", "p"], ["nav", "footer"]
    before = (list(include), list(exclude), tuple(DEFAULT_INCLUDE_TAGS), tuple(DEFAULT_EXCLUDE_TAGS))
    bodytext_xpath(include, exclude)
    bodytext_xpath()
    with pytest.raises(ValueError):
        bodytext_xpath(include, ["p"])
    assert (include, exclude, tuple(DEFAULT_INCLUDE_TAGS), tuple(DEFAULT_EXCLUDE_TAGS)) == before
    assert isinstance(DEFAULT_INCLUDE_TAGS, tuple) and isinstance(DEFAULT_EXCLUDE_TAGS, tuple)


def test_expression_selects_the_right_text() -> None:
    html = (
        "<html><body><nav><p>menu</p></nav><div>one <b>two</b></div>"
        "<table><tr><td><p>cell</p></td></tr></table><footer>foot</footer></body></html>"
    )
    document = etree.fromstring(html, etree.HTMLParser())
    texts = [t.strip() for t in document.xpath(bodytext_xpath()) if t.strip()]
    assert texts == ["one", "two"]


def _nested_bodies() -> etree._Element:
    """A <body> inside a <p> of a <body> inside a <section>, and a comment among the text (built by hand: no
    parser makes this tree, but the rung gets whatever tree it is given)."""
    root = etree.Element("html")
    body = etree.SubElement(etree.SubElement(root, "section"), "body")
    body.text = "body text"
    paragraph = etree.SubElement(body, "p")
    paragraph.text = "paragraph"
    inner = etree.SubElement(paragraph, "body")
    inner.text = "inner body"
    etree.SubElement(inner, "p").text = "inner paragraph"
    inner.tail = "after the inner body"
    comment = etree.Comment("note")
    paragraph.append(comment)
    comment.tail = "after a comment"
    return root


def _stripped_wbr() -> etree._Element:
    """Adjacent text nodes, as ``strip_tags`` leaves them: the XPath gives them one at a time."""
    html = "<html><body><p>syn::<wbr>token::<wbr>While</p><div><nav>x</nav>y<wbr>z <a href=#>link</a></div></body></html>"
    document = etree.fromstring(html, etree.HTMLParser())
    etree.strip_tags(document, "wbr")
    return document


_PAGE = (
    "<html><head><title>t</title></head><body>top<div>a<span>b</span>c<nav>n<p>in nav</p></nav>d</div>e"
    "<table><tr><td><p>cell</p></td></tr></table><p>f<a href='#'>g</a>h<footer>foot</footer></p></body></html>"
)


@pytest.mark.parametrize("document", [
    pytest.param(lambda: etree.fromstring(_PAGE, etree.HTMLParser()), id="page"),
    pytest.param(_nested_bodies, id="nested-bodies"),
    pytest.param(_stripped_wbr, id="adjacent-text-nodes"),
])
@pytest.mark.parametrize("include, exclude", [
    (DEFAULT_INCLUDE_TAGS, DEFAULT_EXCLUDE_TAGS),
    (("p", "body", "div"), ("section",)),
    (("p", "body", "div", "span", "a"), ("nav", "footer")),
    (("p", "body", "a"), ()),
])
def test_selected_text_nodes_are_the_expressions(document, include, exclude) -> None:
    """The rung finds the text nodes without the XPath's ancestor tests: the same nodes, in the same order."""
    tree = document()
    expected = etree.XPath(bodytext_xpath(include, exclude), smart_strings=True)(tree)
    found = selected_text_nodes(tree, *_tag_sets(tuple(include), tuple(exclude)))
    assert [str(node) for node in found] == [str(node) for node in expected]
    assert [(node.getparent(), node.is_tail) for node in found] == [(node.getparent(), node.is_tail) for node in expected]
