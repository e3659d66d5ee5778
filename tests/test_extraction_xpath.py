"""The contract of ``bodytext_xpath``: the expression it builds from two tag lists."""

from __future__ import annotations

import pytest
from lxml import etree

from boilerstrip.extraction import DEFAULT_EXCLUDE_TAGS, DEFAULT_INCLUDE_TAGS, bodytext_xpath

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
