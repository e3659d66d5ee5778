"""The Markdown keeps what the page meant: code spans, fenced code with its language, GFM tables (cells
holding several blocks, pipes escaped), definition lists, headings whose text is a link, no permalink
anchors; and the cross-page pass keeps it when it re-renders the record."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from boilerstrip.extraction import Block, ExtractionParams, extract, render_markdown, render_text
from boilerstrip.extraction.blocks import blocks_from, code_span, segment
from boilerstrip.finishing import finish_records


#: the page's text around a table whose cells hold blocks (a cell holding most of the page is layout)
PROSE = " ".join(["The page says a good deal before its table, as pages do, so the table is a part of it."] * 2)


def blocks(fragment: str) -> tuple[Block, ...]:
    seg = segment(lxml_html.fragment_fromstring(fragment, create_parent="div"))
    return blocks_from(seg, range(len(seg)))


def markdown(fragment: str) -> str:
    return render_markdown(blocks(fragment))


def text(fragment: str) -> str:
    return render_text(blocks(fragment))


# --- inline code -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fragment", "expected_markdown", "expected_text"),
    [
        ("<p>Call <code>foo()</code> now.</p>", "Call `foo()` now.", "Call foo() now."),
        ("<p>Press <kbd>Ctrl</kbd>+<kbd>C</kbd>.</p>", "Press `Ctrl`+`C`.", "Press Ctrl+C."),
        ("<p>Old <tt>tt</tt> and <samp>out</samp></p>", "Old `tt` and `out`", "Old tt and out"),
        # Sphinx: the code's words in spans, the whitespace between them inside the code
        ('<p>Use <code class="docutils literal"><span class="pre">a</span> <span class="pre">b</span></code>.</p>',
         "Use `a b`.", "Use a b."),
        # spaces at the code's edges go outside the span
        ("<p>x<code> y </code>z</p>", "x `y` z", "x y z"),
        ("<p>empty <code> </code>code</p>", "empty code", "empty code"),
        # nested code elements make one span
        ("<p><code>a <code>b</code> c</code></p>", "`a b c`", "a b c"),
    ],
)
def test_inline_code_is_a_code_span(fragment: str, expected_markdown: str, expected_text: str) -> None:
    assert markdown(fragment) == expected_markdown
    assert text(fragment) == expected_text


@pytest.mark.parametrize(
    ("code", "span"),
    [
        ("a`b", "``a`b``"),
        ("a``b`c", "```a``b`c```"),
        ("`x", "`` `x ``"),
        ("x`", "`` x` ``"),
        ("`", "`` ` ``"),
        ("plain", "`plain`"),
    ],
)
def test_code_spans_hold_backticks_by_commonmark_rules(code: str, span: str) -> None:
    assert code_span(code) == span
    assert markdown(f"<p><code>{code}</code></p>") == span


# --- fenced code -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fragment", "fence_line"),
    [
        ('<pre><code class="language-python">x</code></pre>', "```python"),
        ('<pre class="lang-js">x</pre>', "```js"),
        ('<pre class="brush: ruby">x</pre>', "```"),  # "brush:" with a space is two tokens: no language
        ('<div class="highlight-python notranslate"><div class="highlight"><pre>x</pre></div></div>', "```python"),
        ('<div class="highlight-default notranslate"><div class="highlight"><pre>x</pre></div></div>', "```"),
        ('<pre class="sourceCode haskell">x</pre>', "```haskell"),
        ('<pre data-lang="sql">x</pre>', "```sql"),
        ('<pre class="hljs-keyword">x</pre>', "```"),
        ("<pre>x</pre>", "```"),
    ],
)
def test_fenced_code_keeps_the_declared_language(fragment: str, fence_line: str) -> None:
    assert markdown(fragment).split("\n")[0] == fence_line
    assert text(fragment) == "x"


def test_a_fence_is_longer_than_any_backtick_run_in_the_code() -> None:
    out = markdown('<pre class="language-md">```\ncode\n```\n````</pre>')
    assert out.startswith("`````md\n") and out.endswith("\n`````")


# --- tables ----------------------------------------------------------------------------------------


def test_a_data_table_is_a_gfm_table_with_its_header() -> None:
    out = markdown("<table><thead><tr><th>Name</th><th>Type</th></tr></thead>"
                   "<tbody><tr><td>id</td><td>int</td></tr><tr><td>name</td><td>text</td></tr></tbody></table>")
    assert out == "| Name | Type |\n| --- | --- |\n| id | int |\n| name | text |"


def test_a_table_without_a_header_takes_its_first_row_as_header() -> None:
    out = markdown("<table><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>")
    assert out == "| a | 1 |\n| --- | --- |\n| b | 2 |"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("<p>one</p><p>two</p>", "one<br>two"),  # several blocks stay one cell
        ("<ul><li>x</li><li>y</li></ul>", "x<br>y"),
        ("a | b", "a \\| b"),  # pipes escaped
        ("<code>x|y</code>", "`x\\|y`"),  # in a code span too (GFM)
        ("one<br>two", "one<br>two"),
        ("<pre>line 1\nline 2</pre>", "`line 1 line 2`"),
        ("<h4>Amounts</h4>", "Amounts"),
    ],
)
def test_a_cell_stays_one_cell(cell: str, expected: str) -> None:
    out = markdown(f"<p>{PROSE}</p><table><tr><th>Head</th><th>Other</th></tr><tr><td>{cell}</td><td>z</td></tr></table>")
    assert out.split("\n")[4] == f"| {expected} | z |"


def test_rows_are_padded_to_the_table_columns_and_tables_stay_apart() -> None:
    out = markdown("<table><tr><th colspan='2'>Wide</th></tr><tr><td>a</td><td>b</td></tr></table>"
                   "<table><tr><th>Other</th></tr><tr><td>c</td></tr></table>")
    assert out == "| Wide |  |\n| --- | --- |\n| a | b |\n\n| Other |\n| --- |\n| c |"


def test_the_text_of_a_row_is_its_cells_joined() -> None:
    assert text(f"<p>{PROSE}</p><table><tr><th>A</th><th>B</th></tr><tr><td><p>one</p><p>two</p></td><td>x</td></tr>"
                "</table>") == f"{PROSE}\n\nA | B\none two | x"


@pytest.mark.parametrize(
    "table",
    [
        # one cell wrapping the page's text
        "<table><tr><td>Menu</td></tr><tr><td><p>{long}</p><p>{long}</p></td></tr></table>",
        # a page's columns
        "<table><tr><td><p>Menu</p></td><td><p>{long}</p></td></tr></table>",
        # a table inside a table
        "<table><tr><td><table><tr><td>x</td></tr></table></td></tr><tr><td><p>{long}</p></td></tr></table>",
        '<table role="presentation"><tr><td>a</td></tr><tr><td>{long}</td></tr></table>',
    ],
)
def test_a_layout_table_is_unwrapped(table: str) -> None:
    long = "A paragraph of the article that is long enough to be the page. " * 3
    found = blocks(table.format(long=long))
    assert any(block.text == long.strip() and block.kind == "p" for block in found)


# --- definition lists --------------------------------------------------------------------------------


def test_a_definition_list_is_term_then_description() -> None:
    out = markdown("<dl><dt>Term</dt><dd><p>What it means.</p><p>More.</p></dd><dt>Other</dt><dd>Else.</dd></dl>")
    assert out == "Term\n\nWhat it means.\n\nMore.\n\nOther\n\nElse."
    assert "- " not in out


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        # Sphinx's API signature: a code term by its class, its permalink left out
        ('<dt class="sig sig-object py" id="abs"><span class="sig-name descname"><span class="pre">abs</span></span>'
         '<span class="sig-paren">(</span><em class="sig-param">x</em><span class="sig-paren">)</span>'
         '<a class="headerlink" href="#abs">¶</a></dt>', "`abs(x)`"),
        ("<dt><code>--verbose</code></dt>", "`--verbose`"),
        ("<dt>The <code>-v</code> flag</dt>", "The `-v` flag"),  # prose with code is not a code term
    ],
)
def test_a_term_that_is_code_is_a_code_span(term: str, expected: str) -> None:
    assert markdown(f"<dl>{term}<dd>Description.</dd></dl>") == f"{expected}\n\nDescription."


# --- headings and permalinks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fragment",
    [
        # Sphinx
        '<section id="install"><h2>Install<a class="headerlink" href="#install" title="Permalink">¶</a></h2></section>',
        # Django's theme: the id on an empty span before the heading
        '<span id="install"></span><h2>Install<a class="headerlink" href="#install">¶</a></h2>',
        # MkDocs Material
        '<h2 id="install">Install<a class="headerlink" href="#install" title="Permanent link">#</a></h2>',
        # rustdoc
        '<h2 id="install" class="section-header">Install<a href="#install" class="anchor">§</a></h2>',
        # Docusaurus: a zero-width space
        '<h2 class="anchor" id="install">Install<a href="#install" class="hash-link">\u200b</a></h2>',
        # GitHub: an icon before the text
        '<h2><a id="user-content-install" class="anchor" href="#install"><svg></svg></a>Install</h2>',
        # an empty anchor inside the heading holds the id
        '<h2><a name="install"></a>Install <a href="#install">🔗</a></h2>',
        # DocBook's empty name anchors
        '<h2 class="title"><a name="install"></a>Install</h2>',
    ],
)
def test_permalink_anchors_leave_headings(fragment: str) -> None:
    assert markdown(fragment) == "## Install"
    assert text(fragment) == "Install"


@pytest.mark.parametrize(
    "fragment",
    [
        '<p>See <a href="#install">§</a> above.</p>',  # a symbol link elsewhere: not to its own element
        '<h2 id="a">Title <a href="#b">#</a></h2>',  # to another part of the page
        '<h2 id="a">Title <a href="#a">link</a></h2>',  # words are text
    ],
)
def test_other_links_stay(fragment: str) -> None:
    link_text = lxml_html.fragment_fromstring(fragment, create_parent="div").xpath("string(.//a)")
    assert link_text in text(fragment)


def test_headings_whose_text_is_a_link_are_kept() -> None:
    questions = "".join(
        f'<section id="q{i}"><h3><a class="toc-backref" href="#toc{i}">Question number {i}?</a>'
        f'<a class="headerlink" href="#q{i}">¶</a></h3><p>{"The answer to this question is here. " * 4}</p></section>'
        for i in range(8)
    )
    result = extract(f"<html><head><title>FAQ</title></head><body><main><h1>FAQ</h1>{questions}</main></body></html>")
    for i in range(8):
        assert f"### Question number {i}?\n" in result.markdown
    assert "¶" not in result.markdown and "¶" not in result.text


def _docutils_page(sections: str) -> str:
    return (f"<html><head><title>Notes</title></head><body><div id='hd'><a href='/'>Home</a></div>"
            f"<div class='document'><div class='body'>{sections}</div></div></body></html>")


def _docutils_section(slug: str, title: str, heading: str = "h2") -> str:
    """Docutils' section: its id made from its heading's words, an anchor, the heading's permalink."""
    return (f'<div class="section" id="s-{slug}"><span id="{slug}"></span><{heading}>{title}'
            f'<a class="headerlink" href="#{slug}">¶</a></{heading}>'
            f'<p>{"This section of the document explains its subject in a few sentences, with commas, here. " * 3}</p>'
            f'<pre>{slug}()</pre></div>')


def test_a_section_with_its_own_permalinked_heading_is_content_whatever_its_id_says() -> None:
    # "tools", "comments", "cookie", "related" are furniture words; here they name the sections' subjects
    sections = "".join(_docutils_section(slug, title) for slug, title in (
        ("testing-tools", "Testing tools"), ("comments", "Comments"), ("csrf-cookie-secure", "CSRF cookie secure"),
        ("related-settings", "Related settings"), ("introduction", "Introduction")))
    result = extract(_docutils_page(sections))
    for title in ("Testing tools", "Comments", "CSRF cookie secure", "Related settings", "Introduction"):
        assert f"## {title}\n" in result.markdown, title
    assert "```\ntesting-tools()\n```" in result.markdown and "¶" not in result.markdown


def test_a_furniture_box_titled_like_its_id_is_still_furniture() -> None:
    box = ('<div id="related-posts"><h3>Related posts</h3><p>' + "A teaser of another post, with a comma, here. " * 3
           + "</p></div>")
    result = extract(_docutils_page(_docutils_section("introduction", "Introduction") + box))
    assert "Related posts" not in result.markdown and "## Introduction" in result.markdown


def test_a_heading_with_its_own_permalink_keeps_its_link_to_another_page() -> None:
    # Sphinx: "<h4><a href=../admin/>django.contrib.admin</a><a href=#x>¶</a></h4>": the heading's text is a
    # link away, yet it is the document's heading (a teaser's title linking to its article has no permalink)
    sections = "".join(
        f'<div class="section" id="s-m{i}"><span id="m{i}"></span><h4><a class="reference" href="../mod{i}/">'
        f'<code>package.module{i}</code></a><a class="headerlink" href="#m{i}">¶</a></h4>'
        f'<ul><li>{"A change to this module, described in one sentence, with commas. " * 2}</li></ul></div>'
        for i in range(6))
    result = extract(_docutils_page(sections))
    for i in range(6):
        assert f"#### `package.module{i}`\n" in result.markdown


def test_a_list_that_outscores_its_document_gives_way_to_it() -> None:
    """The density rung: a list of one section scored above the notes holding it (a release note's
    "Miscellaneous"); the notes, nearly as good and holding more, are the content."""
    sentence = "A change described in a sentence, with a comma, another, and one more, here. "
    paragraphs = "".join(f"<h2>Part {i}</h2><p>{sentence * 3}</p>" for i in range(4))
    items = f"<li>{sentence * 2}</li>" * 8
    page = (f"<html><head><title>Notes</title></head><body><div id='hd'><a href='/'>Home</a></div><div id='notes'>"
            f"{paragraphs}<div id='misc'><h2>Miscellaneous</h2><ul>{items}</ul></div></div></body></html>")
    result = extract(page)
    assert result.method == "density"
    assert all(f"## Part {i}" in result.markdown for i in range(4)) and "## Miscellaneous" in result.markdown
    off = extract(page, params=ExtractionParams(min_ancestor_score_share=0))
    assert "## Part 0" not in off.markdown  # the list alone, without the rule


def test_text_after_wbr_is_kept_by_every_rung() -> None:
    # libxml2 nests the rest of the heading in <wbr>; the body-text rung (rustdoc's pages) lost its "::"
    heading = ('<h1><span>Struct <a href="../index.html">syn</a>::<wbr><a href="index.html">token</a>::<wbr>'
               '<a href="#">While</a></span></h1>')
    links = "".join(f'<li><a href="p{i}.html">Page number {i}</a></li>' for i in range(30))
    result = extract(f"<html><body><div>{heading}<ul>{links}</ul></div></body></html>")
    assert "Struct syn::token::While" in result.markdown, (result.method, result.markdown[:200])


def test_the_markdown_opens_with_the_headline_the_text_leaves_to_the_title() -> None:
    body = "<p>" + "A sentence of the article body that says something. " * 6 + "</p>"
    result = extract(f"<html><head><title>Slug patrol</title></head><body><article><h1>Slug patrol</h1>{body}"
                     f"<h2>Traps</h2>{body}</article></body></html>")
    assert result.title == "Slug patrol"
    assert result.markdown.startswith("# Slug patrol\n\nA sentence")
    assert not result.text.startswith("Slug patrol")
    assert "## Traps" in result.markdown


def test_a_headline_below_a_banner_stays_as_a_heading() -> None:
    # a version banner above the page's <h1> (Celery's Sphinx theme): the <h1> is no longer the first
    # block, so it is not the headline the Markdown opens with; it was then lost from both
    body = "<p>" + "A sentence of the guide that explains the subject well. " * 6 + "</p>"
    result = extract("<html><head><title>Introduction to Celery - Docs</title></head><body><div role='main'>"
                     "<p>This document describes the current stable version of Celery.</p>"
                     f"<h1>Introduction to Celery</h1>{body}<h2>What is a queue?</h2>{body}</div></body></html>")
    assert "stable version of Celery.\n\n# Introduction to Celery\n\nA sentence" in result.markdown
    assert "## What is a queue?" in result.markdown


def test_a_heading_whose_id_is_its_own_words_is_kept() -> None:
    # a wiki's anchors: "login", "feedback" are furniture words, here the heading's own subject
    body = "<p>" + "A sentence of the article that explains the tool at some length. " * 4 + "</p>"
    sections = "".join(f'<div class="mw-heading"><h3 id="{slug}">{title}</h3></div>{body}' for slug, title in (
        ("Usage", "Usage"), ("Login_shell", "Login shell"), ("Enable_password_input_feedback",
                                                              "Enable password input feedback")))
    result = extract(f"<html><head><title>Sudo</title></head><body><main><h1>Sudo</h1>{body}{sections}</main></body></html>")
    for title in ("Usage", "Login shell", "Enable password input feedback"):
        assert f"### {title}\n" in result.markdown, title
    # an id that is not the heading's words still counts ("login" box titled otherwise)
    box = extract(f"<html><head><title>Sudo</title></head><body><main><h1>Sudo</h1>{body}"
                  f"<h3 id='login-box'>Members area</h3>{body}</main></body></html>")
    assert "Members area" not in box.markdown


# --- data tables are not link lists ------------------------------------------------------------------


def _api_page(table: str) -> str:
    prose = "".join(f"<p>{'This paragraph of the reference explains the module, with commas, at length. ' * 4}</p>"
                    for _ in range(4))
    return (f"<html><head><title>API</title></head><body><main><h1>API</h1>{prose}{table}{prose}</main>"
            f"</body></html>")


def _table(rows: list[tuple[str, str]]) -> str:
    return "<table>" + "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows) + "</table>"


def test_a_table_of_linked_names_and_descriptions_is_kept() -> None:
    # an API table: a link cell (long names) and a short description; over half its text is link text
    rows = [(f'<a href="#celery.app.module{i}"><code>celery.app.module_number_{i}</code></a>', f"Part {i}.")
            for i in range(6)]
    result = extract(_api_page(_table(rows)))
    for i in range(6):
        assert f"| `celery.app.module_number_{i}` | Part {i}. |" in result.markdown, result.markdown
    off = extract(_api_page(_table(rows)), params=ExtractionParams(min_data_table_rows=0))
    assert "module_number_0" not in off.markdown  # dropped as a link list without the rule


def test_a_table_of_links_only_is_still_a_link_list() -> None:
    # navigation in a table: every cell a link ("Prev | Up | Next" over titles that are links too)
    rows = [(f'<a href="/p{i}">Previous page number {i}</a>', f'<a href="/n{i}">Next page number {i}</a>')
            for i in range(4)]
    result = extract(_api_page(_table(rows)))
    assert "Previous page number" not in result.markdown


# --- the block's Markdown through the record and the cross-page pass ---------------------------------


def test_blocks_carry_their_markdown_only_when_it_says_more() -> None:
    found = blocks("<p>plain</p><p>with <code>code</code></p>")
    assert [b.as_dict() for b in found] == [{"kind": "p", "text": "plain"},
                                           {"kind": "p", "text": "with code", "md": "with `code`"}]


_NAMES = "alder birch cedar daisy elder fennel gorse hazel iris juniper kale lupin".split()


def _page(i: int) -> str:
    name = _NAMES[i]
    prose = f"The {name} option changes how {name} pages are built, which the {name} guide explains. " * 3
    return (
        f"<html><head><title>Option {name}</title></head><body><nav><a href='/'>Home</a></nav><main>"
        f"<h1>Option {name}</h1><p>{prose}</p><p>Set <code>opt_{name}</code> to change it.</p>"
        f'<pre><code class="language-toml">opt_{name} = true</code></pre>'
        f"<table><tr><th>Key</th><th>Meaning</th></tr><tr><td><code>opt_{name}</code></td>"
        f"<td><p>on for {name}</p><p>off</p></td></tr></table>"
        "<p>Copyright the Example Project, all rights reserved, licensed under the terms of the license.</p>"
        "</main></body></html>"
    )


def test_the_finishing_pass_keeps_the_markdown_of_the_blocks() -> None:
    records = []
    for i in range(12):
        result = extract(_page(i), url=f"http://docs.test/options/{i}.html")
        records.append({"url": f"http://docs.test/options/{i}.html", **result.to_dict()})
    assert "opt_daisy" in records[3]["markdown"] and "Copyright" in records[3]["markdown"]
    out = {record["url"]: record for record in finish_records(records).records}
    record = out["http://docs.test/options/3.html"]
    assert "Copyright" not in record["text"]  # template, removed
    assert "Copyright" not in record["markdown"]
    assert record["markdown"].startswith("# Option daisy\n\n")
    assert "Set `opt_daisy` to change it." in record["markdown"]
    assert "```toml\nopt_daisy = true\n```" in record["markdown"]
    # the header row is on every page: template. The row left is still a GFM table (its own header)
    assert "| `opt_daisy` | on for daisy<br>off |\n| --- | --- |" in record["markdown"]
    assert "Set opt_daisy to change it." in record["text"]
    # cleaning again gives the same record
    again = {r["url"]: r for r in finish_records(list(out.values())).records}
    assert again["http://docs.test/options/3.html"]["markdown"] == record["markdown"]


def test_records_without_block_markdown_still_render_from_text() -> None:
    records = []
    for i in range(12):
        result = extract(_page(i), url=f"http://docs.test/options/{i}.html")
        record = {"url": f"http://docs.test/options/{i}.html", **result.to_dict()}
        record["blocks"] = [{"kind": b["kind"], "text": b["text"]} for b in record["blocks"]]  # an older record
        records.append(record)
    record = {r["url"]: r for r in finish_records(records).records}["http://docs.test/options/3.html"]
    assert "Set opt_daisy to change it." in record["markdown"]
    assert "```\nopt_daisy = true\n```" in record["markdown"]
    assert "Copyright" not in record["markdown"]


@pytest.mark.parametrize("text", [
    "1. one", "３. fullwidth", "٣) arabic-indic", "- item", "  # heading", "+ plus", "> quote", "\u2028- after a separator",
    "a line\n- then a list", "plain prose", "", "2024 was a year", "-dash joined",
])
def test_markdown_line_start_escapes_match_the_regex(text):
    """render_markdown skips the line-start regex on one-line text that cannot open with a mark: what it
    writes is what the regex writes on every text (any decimal digit, any leading whitespace)."""
    from boilerstrip.extraction._vocab import MARKDOWN_LINE_START_RE
    from boilerstrip.extraction.blocks import _escape_line_start

    expected = MARKDOWN_LINE_START_RE.sub(_escape_line_start, text).replace("\n", "  \n")
    assert render_markdown([Block("p", text)]) == expected


def test_code_block_inside_a_data_cell_is_a_code_span_of_its_row():
    """A <pre> in a data table's cell is a code span of the row, not a code block of its own (segment's
    in-cell test for <pre>, which no page of the benchmarks reaches)."""
    doc = lxml_html.fromstring(
        "<html><body><table><tr><th>Option</th><th>Example</th></tr>"
        "<tr><td>verbose</td><td><pre>run -v\nrun --verbose</pre></td></tr>"
        "<tr><td>quiet</td><td><pre>run -q</pre></td></tr></table></body></html>"
    )
    seg = segment(doc.find("body"))
    assert seg.kinds == ["tr", "tr", "tr"]
    assert seg.texts[1:] == ["verbose | run -v run --verbose", "quiet | run -q"]
    assert seg.markdowns[1:] == ["| verbose | `run -v run --verbose` |", "| quiet | `run -q` |"]
