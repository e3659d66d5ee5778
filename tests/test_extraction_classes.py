"""The class/id vocabulary: what a class or id string says about its element (``classify_attributes``) and
which of its words make it furniture (``furniture_words``), on the token shapes real pages use."""

from __future__ import annotations

import pytest

from boilerstrip.extraction import blocks
from boilerstrip.extraction._vocab import BOILERPLATE_STEMS, COMPOUND_RE, COMPOUND_TAILS
from boilerstrip.extraction.blocks import classify_attributes, furniture_words

CASES = [
    # (class + id string, (verdict, weight), furniture words)
    ("relatedPosts", ("boilerplate", -1), {"related"}),  # camelCase splits into words
    ("RelatedPosts", ("boilerplate", -1), {"related"}),
    ("sharebuttons", ("boilerplate", 0), {"sharebuttons"}),  # a run-together compound is itself the word
    ("shareButtons", ("boilerplate", -1), {"share"}),
    ("commentlist", ("comments", -1), {"commentlist"}),
    ("read-more", ("boilerplate", 0), {"read-more"}),  # a pair of words that alone are not furniture
    ("readMore", ("boilerplate", 0), {"read-more"}),
    ("you-may-like", ("boilerplate", 0), {"may-like"}),
    ("node--promoted", (None, 0), set()),  # a BEM modifier says what state the block is in
    ("card__title--sponsored-look", (None, -1), set()),
    ("has-sidebar", (None, 0), set()),  # layout state, not furniture
    ("comments-open", (None, 0), set()),
    ("embed-share", (None, 0), set()),  # an embed's share words are the embed's
    ("social-share", ("boilerplate", -1), {"share", "social"}),
    ("sr-only", ("hidden", 0), set()),
    ("entry-content", ("content", 1), set()),
    ("Article-Body", ("content", 1), set()),
    ("\u017ftory", ("content", 1), set()),  # the long s folds to "s" (CONTENT_TOKEN_RE ignores case)
    ("main-content sidebar", ("content", 1), {"sidebar"}),  # content wins; the furniture word is still named
    ("nav-item", ("boilerplate", -1), {"nav"}),
    ("\u0130tem-nav", ("boilerplate", -1), {"nav"}),  # a capital outside ASCII lowers to more characters
    ("\u015eHARE-bar", (None, 0), set()),  # letters outside ASCII are no words of the vocabulary
    ("post-navigation", ("boilerplate", 0), {"navigation"}),
    ("cookie-banner", ("consent", -1), {"cookie"}),
    ("elementor-widget-container", ("boilerplate", -1), {"widget"}),
    ("hentry", (None, 1), set()),
    ("x9f3k css-1dbjc4n", (None, 0), set()),  # generated class names name nothing
]


@pytest.mark.parametrize(("value", "verdict", "words"), CASES, ids=[case[0] for case in CASES])
def test_a_class_string_is_classified_by_its_words(value: str, verdict: tuple, words: set[str]) -> None:
    blocks._classify_token.cache_clear()
    blocks._token_furniture_words.cache_clear()
    classify_attributes.cache_clear()
    furniture_words.cache_clear()
    assert classify_attributes(value) == verdict
    assert furniture_words(value) == frozenset(words)


def test_every_compound_of_a_stem_and_a_tail_is_furniture_and_nothing_else_is_read_as_one() -> None:
    """The word table (``_WORD_FLAGS``) and the stem test before ``COMPOUND_RE`` find the compounds the
    pattern alone finds, and no word the pattern does not match gets the flag that way."""
    for stem in BOILERPLATE_STEMS:
        for tail in COMPOUND_TAILS:
            word = stem + tail
            assert COMPOUND_RE.match(word)
            verdict, _weight = classify_attributes(word)
            assert verdict in ("boilerplate", "comments", "consent"), word
    for word in ("relate", "sharingan", "menuss", "footersx", "xrelatedposts", "prelatedposts", "menus"):
        flags = blocks._classify_token(word)
        assert bool(flags & blocks._BOILER_FLAG) == bool(
            COMPOUND_RE.match(word) or blocks._WORD_FLAGS.get(word, 0) & blocks._BOILER_FLAG), word
