"""The extraction ladder on inline snippets: each rung, the choice between candidates, the reasons."""

from __future__ import annotations

import dataclasses

import pytest

from boilerstrip.extraction import (
    Attempt,
    Block,
    ExtractionParams,
    ExtractionResult,
    extract,
    extraction_preset,
    render_markdown,
    render_text,
)

STORY = [
    "The river rose four metres overnight, flooding the lower town and cutting the only road to the valley, "
    "officials said on Tuesday morning.",
    "Residents were moved to the school on the hill, where volunteers served hot meals, and the mayor said "
    "the water should recede within two days if the rain stops.",
    "Engineers will inspect the old stone bridge, built in 1870, before traffic is allowed back across it, "
    "a process that could take a week.",
]
NAV = '<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li></ul></nav>'
FOOTER = "<footer><p>Copyright 2026 The Valley Gazette. All rights reserved. Contact us for reprints.</p></footer>"
RELATED = (
    '<div class="related-articles"><h3>Related stories</h3><ul>'
    + "".join(f'<li><a href="/s{i}">Another story about floods number {i} in the region</a></li>' for i in range(6))
    + "</ul></div>"
)
SHARE = '<div class="share-buttons"><a href="#">Share on Facebook</a> <a href="#">Share on X</a></div>'
COMMENTS = (
    '<section id="comments"><h3>3 comments</h3>'
    + "".join(f"<p>Reader comment {i}: I live there, and honestly this happens every single year, nothing changes.</p>" for i in range(3))
    + "</section>"
)


def paragraphs(texts=STORY) -> str:
    return "".join(f"<p>{t}</p>" for t in texts)


def page(body: str, head: str = "<title>Flood</title>") -> str:
    return f"<!doctype html><html lang='en'><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>"


def attempt(result: ExtractionResult, method: str) -> Attempt:
    return next(a for a in result.attempts if a.method == method)


# --- result contract ------------------------------------------------------------------------------


def test_result_is_frozen_and_text_is_rendered_from_blocks() -> None:
    result = extract(page(NAV + f"<article><h1>Flood</h1>{paragraphs()}</article>" + FOOTER))
    assert dataclasses.is_dataclass(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "x"  # type: ignore[misc]
    assert result.text == render_text(result.blocks)
    # the Markdown opens with the headline the text leaves to ``title``
    assert result.headline == Block("h1", "Flood")
    assert result.markdown == render_markdown((result.headline, *result.blocks))
    assert result.markdown.startswith("# Flood\n\n")
    assert all(isinstance(b, Block) for b in result.blocks)
    assert result.method == "semantic"
    assert result.reason is None
    assert result.attempts == (Attempt("semantic", True, result.attempts[0].chars, "accepted"),)


def test_text_paragraphs_are_separated_by_blank_lines() -> None:
    result = extract(page(f"<article>{paragraphs()}</article>"))
    assert result.text == "\n\n".join(STORY)


# --- rung 1: semantic -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(NAV + f"<article>{paragraphs()}</article>" + FOOTER, id="article"),
        pytest.param(NAV + f"<main>{paragraphs()}</main>" + FOOTER, id="main"),
        pytest.param(NAV + f"<div role='main'>{paragraphs()}</div>" + FOOTER, id="role-main"),
        pytest.param(NAV + f"<div itemprop='articleBody'>{paragraphs()}</div>" + FOOTER, id="itemprop"),
        pytest.param(NAV + f"<div class='entry-content'>{paragraphs()}</div>" + FOOTER, id="content-class"),
    ],
)
def test_semantic_containers(body: str) -> None:
    result = extract(page(body))
    assert result.method == "semantic"
    assert result.text == "\n\n".join(STORY)


def test_semantic_drops_chrome_and_widgets_inside_the_container() -> None:
    body = (
        "<main><header><h1>Flood</h1><p class='byline'>By A. Writer</p></header>"
        f"{SHARE}<article>{paragraphs()}</article>{RELATED}<aside><p>Sidebar: subscribe to our newsletter today, it is free and weekly.</p></aside>"
        f"<form><p>Sign up for alerts about floods in your area, it takes a minute.</p></form>{COMMENTS}</main>"
    )
    result = extract(page(body))
    assert result.method == "semantic"
    assert result.text == "\n\n".join(STORY)


def test_semantic_main_with_sidebar_narrows_to_article() -> None:
    sidebar = "<div class='sidebar'>" + paragraphs(["Most read: " + STORY[0][:60]] * 2) + "</div>"
    result = extract(page(f"<main>{sidebar}<article>{paragraphs()}</article></main>"))
    assert result.text == "\n\n".join(STORY)


def test_semantic_chooses_the_story_among_several_articles() -> None:
    teaser = "<article><h2><a href='/t'>Teaser headline</a></h2><p>A short teaser text for another story.</p></article>"
    result = extract(page(teaser + f"<article>{paragraphs()}</article>" + teaser))
    assert result.method == "semantic"
    assert result.text == "\n\n".join(STORY)


def test_semantic_keeps_a_body_split_across_sibling_containers() -> None:
    body = (
        f"<div class='article-body'>{paragraphs(STORY[:2])}</div><div class='ad'>Advertisement</div>"
        f"<div class='article-body'>{paragraphs(STORY[2:])}</div>"
    )
    result = extract(page(body))
    assert result.method == "semantic"
    assert result.text == "\n\n".join(STORY)


def test_class_words_match_whole_words_only() -> None:
    commentary = "<div class='commentary-text'><p>" + STORY[0] + "</p></div>"
    result = extract(page(f"<article>{commentary}{paragraphs(STORY[1:])}</article>"))
    assert STORY[0] in result.text


def test_semantic_refused_when_container_is_a_teaser() -> None:
    body = "<article><p>A teaser for the flood story, read the full report below.</p></article><div>" + paragraphs() + "</div>"
    result = extract(page(body))
    assert attempt(result, "semantic") == Attempt("semantic", False, 0, "covers_too_little")
    assert result.method == "density"
    assert result.text == "\n\n".join(STORY)


def test_semantic_refused_without_markup() -> None:
    result = extract(page("<div><div>" + paragraphs() + "</div></div>"))
    assert attempt(result, "semantic") == Attempt("semantic", False, 0, "no_semantic_container")


def test_semantic_refused_for_link_lists_then_kept_as_the_last_resort() -> None:
    # link density alone does not throw a page's list away (an index page): the rung is refused, and its
    # result comes back only because nothing better was found, with the attempts saying so
    links = "".join(f"<p>See the full report on <a href='/{i}'>{STORY[i % 3][:55]}</a> and more here.</p>" for i in range(10))
    result = extract(page(f"<main><p>{STORY[0]}</p>{links}</main>"), params=ExtractionParams(method="semantic"))
    assert attempt(result, "semantic").reason == "link_density_high"
    assert result.attempts[-1].reason == "accepted_links" and result.method == "semantic"
    assert STORY[0] in result.text


def test_an_index_page_keeps_its_list_of_links() -> None:
    items = "".join(f"<li><a href='/guide/{i}'>Guide number {i} to the flood defences</a></li>" for i in range(20))
    result = extract(page(f"<main><h2>All guides</h2><ul>{items}</ul></main>"))
    assert result.attempts[-1].reason == "accepted_links"
    assert "Guide number 0 to the flood defences\nGuide number 1" in result.text


def test_comments_are_dropped_or_kept_by_one_setting() -> None:
    thread = "".join(
        f"<li class='comment'><p>Comment {i}: I have lived in the valley for thirty years, the river floods.</p></li>"
        for i in range(3)
    )
    html = page(f"<article>{paragraphs()}</article><section id='comments'><ol>{thread}</ol></section>")
    assert extract(html).text == "\n\n".join(STORY)
    kept = extract(html, params=ExtractionParams(comments="keep")).text
    assert kept.startswith("\n\n".join(STORY)) and kept.count("Comment ") == 3
    with pytest.raises(ValueError, match="comments"):
        ExtractionParams(comments="maybe")


def test_every_post_of_a_thread_is_kept_in_order() -> None:
    # the first post beside a block of replies, each a card of the same shape: all of them are the content
    def post(i: int, words: str) -> str:
        return (f"<div class='MessageCard js-post'><div class='user'><b>user{i}</b></div>"
                f"<div class='message-body'><p>{words}</p></div></div>")
    first = post(0, " ".join(STORY))
    replies = "".join(post(i, f"Reply {i}: {STORY[i % 3]}") for i in range(1, 6))
    html = page(f"<div class='thread'>{first}<div class='block-messages'><div class='list'>{replies}</div></div></div>")
    text = extract(html).text
    positions = [text.find(f"Reply {i}:") for i in range(1, 6)]
    assert text.startswith(STORY[0]) and all(p > 0 for p in positions) and positions == sorted(positions)


def test_a_javascript_shell_reads_its_noscript_rendering() -> None:
    html = page(f"<div id='app'></div><noscript><div class='post'>{paragraphs()}</div></noscript>")
    result = extract(html)
    assert result.text == "\n\n".join(STORY) and "noscript_shell" in result.flags
    ordinary = extract(page(f"<article>{paragraphs()}</article><noscript><p>Please enable JavaScript to see the map of the town.</p></noscript>"))
    assert "JavaScript" not in ordinary.text and "noscript_shell" not in ordinary.flags
    # a <noscript> long enough to be looked at (min_text_chars), yet a small share of the page: stripped too
    long_notice = "<p>" + "Please enable JavaScript to see the map of the town and its opening hours. " * 5 + "</p>"
    page_with_notice = extract(page(f"<article>{paragraphs()}</article><noscript>{long_notice}</noscript>"))
    assert page_with_notice.text == "\n\n".join(STORY) and "noscript_shell" not in page_with_notice.flags


def test_an_unclosed_aside_that_swallowed_the_page_is_read() -> None:
    html = page(f"<aside class='banner'><p>Announcement.</p><main><article>{paragraphs()}</article></main>")
    result = extract(html)
    assert result.text == "\n\n".join(STORY) and "unclosed_chrome" in result.flags


# --- rung 2: density ------------------------------------------------------------------------------


def test_density_picks_the_article_not_the_navigation() -> None:
    links = "<div id='menu'>" + "".join(f"<a href='/{i}'>Section {i} with a long link name</a> " for i in range(30)) + "</div>"
    body = links + "<div><div class='x1'>" + paragraphs() + "</div></div><div class='x2'><p>Copyright line.</p></div>"
    result = extract(page(body))
    assert result.method == "density"
    assert attempt(result, "semantic").reason == "no_semantic_container"
    assert result.text == "\n\n".join(STORY)


def test_density_keeps_sibling_paragraphs_not_only_the_longest_div() -> None:
    body = (
        "<div id='wrap'><div class='a'><p>" + STORY[0] + "</p><p>" + STORY[1] + "</p></div>"
        "<p>" + STORY[2] + "</p></div>"
        "<div class='b'><a href='/x'>Next story</a></div>"
    )
    result = extract(page(body))
    assert result.method == "density"
    assert result.text == "\n\n".join(STORY)


def test_density_reads_text_in_divs_without_paragraphs() -> None:
    body = "<div><div>" + "<br><br>".join(STORY) + "</div></div>"
    result = extract(page(body))
    assert result.method == "density"
    for text in STORY:
        assert text in result.text


# --- rung 3: body-text XPath ----------------------------------------------------------------------


def test_bodytext_rung_when_others_are_disabled() -> None:
    params = ExtractionParams(semantic_enabled=False, density_enabled=False)
    result = extract(page(NAV + f"<div>{paragraphs()}</div>" + FOOTER), params=params)
    assert result.method == "bodytext"
    assert [a.reason for a in result.attempts] == ["disabled", "disabled", "accepted"]
    assert "Home" not in result.text and "Copyright" not in result.text
    assert STORY[0] in result.text


def test_bodytext_method_alone_with_tuned_lists() -> None:
    params = ExtractionParams(method="bodytext", bodytext_include_tags=("p",), bodytext_exclude_tags=("footer",))
    result = extract(page("<div>" + paragraphs() + "<span>" + "span text " * 5 + "</span></div>" + FOOTER), params=params)
    assert result.method == "bodytext"
    assert [a.method for a in result.attempts] == ["bodytext"]
    assert "span text" not in result.text
    assert result.text == "\n\n".join(STORY)


def test_bad_method_is_rejected() -> None:
    with pytest.raises(ValueError, match="method"):
        ExtractionParams(method="magic")


# --- reasons: a user can ask why text is missing ----------------------------------------------------


def test_every_refusal_has_a_reason_and_empty_results_say_why() -> None:
    result = extract(page(NAV + FOOTER))
    assert result.text == ""
    assert result.method is None
    assert result.reason == "no_content_found"
    assert [a.method for a in result.attempts] == ["semantic", "density", "bodytext"]
    assert all(not a.accepted and a.reason for a in result.attempts)


def test_short_page_is_kept_as_a_last_resort_and_says_so() -> None:
    result = extract(page("<article><p>Opening hours: 9 to 5, Monday to Friday.</p></article>"))
    assert result.text == "Opening hours: 9 to 5, Monday to Friday."
    assert attempt(result, "semantic").reason == "too_short"
    assert result.attempts[-1].reason == "accepted_short"


# --- output formats ---------------------------------------------------------------------------------


def test_blocks_keep_structure_and_markdown_renders_it() -> None:
    body = (
        "<article><h2>What happened</h2>" + paragraphs(STORY[:1])
        + "<ul><li>Road closed</li><li>School open</li></ul>"
        + "<blockquote><p>We have never seen water this high, said a farmer near the river.</p></blockquote>"
        + "<table><tr><th>Town</th><th>Level</th></tr><tr><td>Lower</td><td>4 m</td></tr></table>"
        + "<pre><code>def level():\n    return 4\n</code></pre>"
        + paragraphs(STORY[1:]) + "</article>"
    )
    result = extract(page(body))
    kinds = [b.kind for b in result.blocks]
    assert kinds == ["h2", "p", "li", "li", "quote", "tr", "tr", "pre", "p", "p"]
    assert "Road closed\nSchool open" in result.text
    assert "Town | Level\nLower | 4 m" in result.text
    assert "def level():\n    return 4" in result.text  # code whitespace intact
    md = result.markdown
    assert "## What happened" in md
    assert "- Road closed\n- School open" in md
    assert "> We have never seen water" in md
    assert "| Town | Level |\n| --- | --- |\n| Lower | 4 m |" in md
    assert "```\ndef level():\n    return 4\n```" in md


def test_render_functions_are_pure_over_blocks() -> None:
    blocks = (Block("h2", "Title"), Block("p", "One."), Block("li", "a"), Block("li", "b"), Block("pre", "x = 1\n  y"))
    assert render_text(blocks) == "Title\n\nOne.\n\na\nb\n\nx = 1\n  y"
    assert render_markdown(blocks) == "## Title\n\nOne.\n\n- a\n- b\n\n```\nx = 1\n  y\n```"
    assert render_text(blocks[1:2]) == "One."
    assert render_text(()) == "" and render_markdown(()) == ""


def test_headline_and_captions_are_not_body_text() -> None:
    body = (
        "<article><h1>Flood in the valley</h1><figure><img src='a.jpg'><figcaption>The bridge at dawn, "
        "photographed by a reader.</figcaption></figure>" + paragraphs() + "</article>"
    )
    result = extract(page(body))
    assert "Flood in the valley" not in result.text
    assert "photographed" not in result.text
    kept = extract(page(body), params=ExtractionParams(keep_h1=True, keep_captions=True))
    assert "Flood in the valley" in kept.text and "photographed" in kept.text


def test_hidden_elements_are_not_content() -> None:
    body = (
        "<article>" + paragraphs(STORY[:2])
        + "<p style='display:none'>Hidden tracking text that no reader ever sees on the page.</p>"
        + "<p>" + STORY[2] + "<span class='sr-only'>(opens in new window)</span></p>"
        + "<div hidden><p>Also hidden but quite long, long enough to be a paragraph.</p></div></article>"
    )
    result = extract(page(body))
    assert result.text == "\n\n".join(STORY)


def test_a_failing_rung_is_recorded_and_the_next_one_runs(monkeypatch) -> None:
    from boilerstrip.extraction import core

    def broken(page, params):
        raise RuntimeError("bug")

    monkeypatch.setattr(core, "extract_semantic", broken)
    result = extract(page(f"<article>{paragraphs()}</article>"))
    assert attempt(result, "semantic") == Attempt("semantic", False, 0, "error_RuntimeError")
    assert result.method == "density"
    assert result.text == "\n\n".join(STORY)


def test_markdown_keeps_text_that_looks_like_markup_as_text() -> None:
    blocks = (Block("p", "# not a heading"), Block("p", "2019. A year"), Block("li", "- dash"), Block("pre", "# code"))
    assert render_markdown(blocks) == "\\# not a heading\n\n2019\\. A year\n\n- \\- dash\n\n```\n# code\n```"
    assert render_text(blocks) == "# not a heading\n\n2019. A year\n\n- dash\n\n# code"


@pytest.mark.parametrize("container", ["<article>{}</article>", "<div class='x'><div class='y'>{}</div></div>"])
def test_a_comment_thread_longer_than_the_story_stays_out(container: str) -> None:
    thread = "".join(
        f"<p>Comment {i}: I have lived in the valley for thirty years and the river floods every spring.</p>"
        for i in range(15)
    )
    result = extract(page(container.format(paragraphs()) + f"<div id='comments'>{thread}</div>"))
    assert result.text == "\n\n".join(STORY)


def test_layout_state_classes_are_not_furniture() -> None:
    body = f"<div class='page has-sidebar comments-open no-ads'><div>{paragraphs()}</div></div>"
    result = extract(page(body).replace("<body>", "<body class='sidebar-open'>"))
    assert result.method == "density"
    assert result.text == "\n\n".join(STORY)


def test_figure_credits_without_an_image_are_dropped() -> None:
    figure = "<figure class='media no-caption'><span>Image copyright</span> <span>Getty Images</span></figure>"
    result = extract(page(f"<article>{figure}{paragraphs()}</article>"))
    assert result.text == "\n\n".join(STORY)


def test_bodytext_keeps_code_whitespace() -> None:
    params = ExtractionParams(method="bodytext", min_text_chars=10)
    result = extract(page("<div><p>" + STORY[0] + "</p><pre>def f():\n    return 1</pre></div>"), params=params)
    assert "def f():\n    return 1" in result.text


def test_an_article_of_article_cards_is_a_list_not_the_story() -> None:
    cards = "".join(
        f"<article><h3>Card {i}</h3><p>{STORY[i % 3][:90]} and more teaser text here.</p></article>" for i in range(6)
    )
    body = f"<article class='story'>{paragraphs()}</article><article class='more'><h2>You may like</h2>{cards}</article>"
    result = extract(page(body))
    assert result.method == "semantic"
    assert result.text == "\n\n".join(STORY)


def test_density_joins_chunks_wrapped_separately() -> None:
    chunks = "".join(f"<div class='grid'><div class='chunk'><p>{text}</p><p>{text}</p></div></div>" for text in STORY)
    body = "<div id='menu'>" + "".join(f"<a href='/{i}'>Section {i}</a> " for i in range(20)) + f"</div><div>{chunks}</div>"
    result = extract(page(body))
    assert result.method == "density"
    for text in STORY:
        assert text in result.text


def test_density_winner_is_not_a_small_box_with_a_content_class() -> None:
    box = "<div class='content-wrapper title'><p>" + "Short summary line of the story, with, commas, here." + "</p></div>"
    body = box + "<div class='x'><div class='y'>" + paragraphs() + "</div></div>"
    result = extract(page(body), params=ExtractionParams(method="density"))
    assert result.text == "\n\n".join(STORY)


def test_teaser_grid_without_vocabulary_is_dropped() -> None:
    cards = "".join(
        f"<div class='tumb'><div class='t'><a href='/d{i}'>Diet number {i}</a></div>"
        f"<div class='b'>A short summary of diet {i}, lose weight in a week.</div></div>"
        for i in range(6)
    )
    result = extract(page(f"<article>{paragraphs()}<div id='more'><h2>Most popular</h2>{cards}</div></article>"))
    assert result.text == "\n\n".join(STORY)


# --- the parse: the tree a browser builds --------------------------------------------------------


def test_a_misnested_end_tag_does_not_swallow_the_page() -> None:
    # <button><div><div></button>: the standard closes the divs at </button>; libxml2 alone cannot (an end
    # tag does not close a higher-priority element), so the whole article ends up inside the menu button,
    # which is never content
    html = page(
        "<header><div class='menu'><button class='menu-button'><div class='inner'><div></button></div>"
        f"<a href='/'>Logo</a></header><main><article>{paragraphs()}</article></main>"
    )
    result = extract(html)
    assert result.text == "\n\n".join(STORY) and "html5_tree" in result.flags
    assert extract(html, params=ExtractionParams(html5_tree=False)).text != "\n\n".join(STORY)
    # a well-formed page (a stray </p> included: the standard makes an empty paragraph of it) is parsed once
    assert "html5_tree" not in extract(page(f"<article>{paragraphs()}</p></article>")).flags


def test_a_misnested_end_tag_is_seen_on_a_page_full_of_duplicate_ids() -> None:
    # libxml2's log holds 100 messages: a page that repeats its ids (a mega menu written twice, one
    # "paragraph-id" a block) filled it with "ID ... already defined" before the misnested end tag came, and
    # the page kept libxml2's tree (WCXB-dev 2201). Ids are not collected (nothing looks one up): the log
    # holds what the parse met that matters
    menu = "".join(f"<li id='item-{i}'>Item {i}</li>" for i in range(120))
    html = page(f"<nav><ul>{menu}</ul><ul>{menu}</ul></nav>"
                "<header><button><div><div></button></div></header>"
                f"<main><article>{paragraphs()}</article></main>")
    result = extract(html)
    assert "html5_tree" in result.flags and result.text == "\n\n".join(STORY)


def test_the_rebuilt_page_keeps_its_json_ld_and_leaves_scripts_and_styles_out() -> None:
    # the rebuild's serialisation leaves scripts and styles out (the extractor strips them anyway); JSON-LD,
    # which metadata reads, stays, whatever the case and spacing of its type
    head = ("<title>Flood</title><style>p { color: red }</style>"
            "<script type=' Application/LD+JSON '>{\"@type\": \"NewsArticle\", \"author\": {\"name\": \"Ada Lovelace\"}}"
            "</script><script>var leaked = 'script text';</script>")
    html = page("<header><button><div><div></button></div></header><main><article>"
                f"{paragraphs()}<script>document.write('more script text')</script></article></main>", head=head)
    result = extract(html)
    assert "html5_tree" in result.flags and result.text == "\n\n".join(STORY)
    assert result.author == "Ada Lovelace"


@pytest.mark.timeout(60)
def test_a_deeply_nested_page_is_not_given_to_the_html5_builder() -> None:
    # the builder's time grows with the square of the depth (45,000 nested lists: about a minute); libxml2's tree
    # and its flattening are linear, and keep the text
    html = page("<b><div></b>" + "<ul><li>" * 45_000 + f"<p>{STORY[0]}</p>")
    result = extract(html)
    assert STORY[0] in result.text and "html5_tree" not in result.flags and "truncated_depth" in result.flags


def test_a_popover_is_hidden_until_opened() -> None:
    popup = (
        "<div popover id='notify'><h3>Allow notifications</h3>"
        + "".join(f"<p>Step {i}: open the settings of your browser, find this site and change the permission.</p>" for i in range(2))
        + "</div>"
    )
    result = extract(page(f"<div>{paragraphs()}{popup}</div>"))
    assert result.text == "\n\n".join(STORY)


def test_a_bem_modifier_is_a_state_not_what_the_block_is() -> None:
    # Drupal marks every node promoted to the front page "node--promoted": the node is still the story
    html = page(
        f"<main><article class='node node--type-page node--promoted'>{paragraphs()}</article>"
        f"<div class='promo'><p>Subscribe now and get three months of the Gazette for the price of one!</p></div></main>"
        f"<div class='related'><p>{STORY[0]}</p><p>{STORY[1]}</p><p>{STORY[2]}</p><p>{STORY[0]}</p></div>"
    )
    assert extract(html).text == "\n\n".join(STORY)


def test_a_section_header_is_read_and_the_page_header_is_chrome() -> None:
    intro = "Record your screen and camera in a few clicks, then share the link with anyone you like."
    html = page(
        "<header><p>Sign in to your account or create one for free, it takes a minute.</p></header>"
        f"<main><section><header><h2>Lightning fast recording</h2><p>{intro}</p></header>{paragraphs()}</section></main>"
    )
    text = extract(html).text
    assert intro in text and "Lightning fast recording" in text and "Sign in" not in text


def test_a_framework_wrapper_around_the_page_does_not_make_its_text_furniture() -> None:
    # a component library: one container around the page, a "cmp-text" around each text
    body = "".join(f"<div class='cmp-text'><p>{t}</p></div>" for t in STORY)
    html = page(f"<div class='cmp-container'><div class='cmp-container page'>{body}</div></div>")
    result = extract(html)
    assert result.text == "\n\n".join(STORY) and result.method == "density"  # not the body-text rescue


def test_a_button_inside_a_heading_is_the_headings_text() -> None:
    # the WAI-ARIA accordion: each section header is a button wrapped in a heading
    sections = "".join(
        f"<h3><button aria-expanded='false'>Question {i} about the flood</button></h3><div><p>{text}</p></div>"
        for i, text in enumerate(STORY)
    )
    text = extract(page(f"<main>{sections}<button>Load more</button></main>")).text
    assert "Question 1 about the flood" in text and all(t in text for t in STORY) and "Load more" not in text


PATCHES = "".join(f"<li><a href='/patch/{i}'>libgccjit: support for feature number {i}</a></li>" for i in range(5))


def test_a_list_of_links_its_sentence_introduces_is_part_of_the_text() -> None:
    def article(middle: str) -> str:
        return page(f"<article><p>{STORY[0]}</p>{middle}<p>{STORY[1]}</p><p>{STORY[2]}</p></article>")

    introduced = article(f"<p>Many patches were sent for review this month:</p><ul>{PATCHES}</ul>")
    text = extract(introduced).text
    assert "Many patches were sent for review this month:\n\nlibgccjit: support for feature number 0" in text
    assert "feature number 4" in text
    # the rule off, or the precision preset: the list goes as a link list
    assert "feature number" not in extract(introduced, params=ExtractionParams(min_introduction_words=0)).text
    assert "feature number" not in extract(introduced, params=extraction_preset("precision")).text
    # a label is not a sentence, a sentence that does not end with a colon introduces nothing, and named
    # furniture stays out whatever introduces it
    for middle in (f"<p>Related:</p><ul>{PATCHES}</ul>",
                   f"<p>Many patches were sent for review this month.</p><ul>{PATCHES}</ul>",
                   f"<div class='related'><p>Many patches were sent for review this month:</p><ul>{PATCHES}</ul></div>"):
        assert "feature number" not in extract(article(middle)).text, middle


def test_a_section_that_is_mostly_its_introduced_list_comes_back_whole() -> None:
    # the section's link density makes it a link list: its heading, sentence and list come back together
    section = f"<div class='sect1'><h2>Patches status</h2><p>Many patches were sent for review this month:</p><ul>{PATCHES}</ul></div>"
    text = extract(page(f"<article><p>{STORY[0]}</p>{section}<p>{STORY[1]}</p><p>{STORY[2]}</p></article>")).text
    assert "Patches status\n\nMany patches were sent for review this month:\n\nlibgccjit" in text
    assert text.endswith(STORY[2])
