"""``source="auto"``: per page, the extractor's blocks or the page's non-template region (pure core, no Scrapy)."""

from __future__ import annotations

import random

import pytest

from boilerstrip.finishing import finish_records

from boilerstrip.boilerplate import (
    BoilerplateParams,
    TemplateModel,
    blocks_of_record,
    choose_source,
    cluster_of_url,
    extraction_failed,
    region_blocks,
    region_blocks_of_record,
    site_of_url,
)
from boilerstrip.boilerplate.finish import dump_record, model_hashes

P = BoilerplateParams()
MENU = [("p", "Small. Fast. Reliable. Choose any three."), ("li", "Home"), ("li", "About"), ("li", "Download")]
ACCEPTED = [{"method": "semantic", "accepted": False, "chars": 0, "reason": "no_semantic_container"},
            {"method": "density", "accepted": True, "chars": 900, "reason": "accepted"}]
SHORT = [{"method": "density", "accepted": False, "chars": 0, "reason": "no_dense_block"},
         {"method": "bodytext", "accepted": True, "chars": 120, "reason": "accepted_short"}]


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


def _para(i: int, j: int) -> str:
    """Text of its own per page and paragraph (digits alone would hash alike: they normalise to 0)."""
    return f"Paragraph {WORDS[j]} of page {WORDS[i]} explains one more thing about the library, {WORDS[(i + j) % 16]}."


def _record(i: int, extracted: list[tuple[str, str]], region: list[dict], method: str = "density",
            attempts: list | None = None) -> dict:
    return {"url": f"https://docs.example/p{i:02d}.html", "method": method, "attempts": attempts or ACCEPTED,
            "text": "\n\n".join(t for _, t in extracted),
            "blocks": [{"kind": k, "text": t} for k, t in extracted],
            "page_block_hashes": [], "page_blocks": region}


def _doc_page(i: int, with_box: bool = True) -> dict:
    """A documentation page: the extractor keeps the paragraphs, not the headline nor the in-text box."""
    paras = [("p", _para(i, j)) for j in range(3)]
    box = [("p", f"NOTE: page {WORDS[i]} has a boxed remark that the extractor left out, long enough to matter.")]
    region = [{"kind": k, "text": t, "links": len(t) if k == "li" else 0} for k, t in MENU]
    region += [{"kind": "h2", "text": f"Chapter {WORDS[i]}: the headline", "links": 0}]
    region += [{"kind": k, "text": t, "links": 0} for k, t in paras[:1] + (box if with_box else []) + paras[1:]]
    region += [{"kind": "p", "text": f"Comment {WORDS[i]}: great page!", "links": 0, "furniture": "comments"}]
    return _record(i, paras, region)


def _model(records: list[dict]) -> TemplateModel:
    model = TemplateModel()
    for record in records:
        url = record["url"]
        model.add_page(site_of_url(url), cluster_of_url(url), model_hashes(record, blocks_of_record(record), P))
    return model


def _choose(record: dict, model: TemplateModel, params: BoilerplateParams = P, title: str | None = None):
    url = record["url"]
    return choose_source(blocks_of_record(record), region_blocks_of_record(record), extraction_failed(record),
                         site_of_url(url), cluster_of_url(url), model, params, title=title)


def test_a_wider_region_that_holds_the_extracted_text_wins() -> None:
    records = [_doc_page(i) for i in range(10)]
    choice = _choose(records[3], _model(records))
    assert (choice.source, choice.reason, choice.flag) == ("page", "wider_region", "boilerplate_source_page_wider_region")
    texts = [t for _, t in choice.result.kept]
    assert texts[0] == "Chapter delta: the headline" and any(t.startswith("NOTE: page delta") for t in texts)
    assert "Home" not in texts and not any(t.startswith("Comment") for t in texts)  # template, comments
    assert [t for _, t in choice.extracted.kept] == [_para(3, j) for j in range(3)]


def test_extracted_blocks_win_when_they_cover_the_region() -> None:
    records = [_doc_page(i) for i in range(10)]
    for record in records:  # the region adds nothing beyond the extracted blocks but template and comments
        record["page_blocks"] = [b for b in record["page_blocks"] if not b["text"].startswith(("NOTE", "Chapter"))]
    choice = _choose(records[3], _model(records))
    assert (choice.source, choice.reason, choice.flag) == ("extracted", "extracted_covers_region", None)


def test_a_region_that_does_not_hold_the_extracted_text_loses() -> None:
    records = [_doc_page(i) for i in range(10)]
    odd = records[3]
    odd["page_blocks"] = [b for b in odd["page_blocks"] if not b["text"].startswith("Paragraph")]
    odd["page_blocks"] += [{"kind": "p", "text": f"Unrelated text number {j} that is long enough to count.", "links": 0}
                           for j in range(8)]
    assert _choose(odd, _model(records)).reason == "region_not_holding"


def test_furniture_stays_out_of_a_wider_region_unless_the_extractor_kept_it() -> None:
    records = [_doc_page(i) for i in range(10)]
    page = records[3]
    page["page_blocks"].insert(-1, {"kind": "li", "text": "Related: another page entirely", "links": 30,
                                    "furniture": "boilerplate"})
    page["page_blocks"][5]["furniture"] = "boilerplate"  # the first paragraph, which the extractor kept
    choice = _choose(page, _model(records))
    assert choice.source == "page"
    texts = [t for _, t in choice.result.kept]
    assert "Related: another page entirely" not in texts and _para(3, 0) in texts
    removed = {b["text"]: b["removed"] for b in choice.result.blocks}
    assert removed["Related: another page entirely"] == "region:boilerplate"
    assert removed["Comment delta: great page!"] == "region:comments"


def test_a_failed_extraction_takes_the_region_minus_template_and_comments() -> None:
    records = [_doc_page(i) for i in range(10)]
    index = records[4]
    index["method"], index["attempts"] = "bodytext", SHORT
    links = [{"kind": "li", "text": f"function_{WORDS[j]}()", "links": 12,
              "furniture": "boilerplate" if j == 0 else None} for j in range(6)]
    heading = {"kind": "h2", "text": "All the functions", "links": 0}
    index["page_blocks"] = [b for b in index["page_blocks"] if b["kind"] == "li"] + [heading] + links + [
        {"kind": "p", "text": "Comment: thanks", "links": 0, "furniture": "comments"}]
    index["blocks"] = [{"kind": "li", "text": t} for _, t in MENU[1:]]  # the extractor fell back to the menu
    assert extraction_failed(index)
    choice = _choose(index, _model(records))
    # the page is its list of links (issue 11): the list's reason wins over the failed extraction
    assert (choice.source, choice.reason) == ("page", "list_content")
    # link lists and other furniture are the content of an index page; comments never are
    assert [t for _, t in choice.result.kept] == ["All the functions"] + [f"function_{WORDS[j]}()" for j in range(6)]


def test_no_choice_before_the_model_is_ready_or_without_a_region_or_in_other_modes() -> None:
    records = [_doc_page(i) for i in range(10)]
    assert _choose(records[0], _model(records[:3])).reason == "model_not_ready"
    bare = dict(records[0], page_blocks=None)
    assert _choose(bare, _model(records)).reason == "no_page_blocks"
    assert _choose(records[0], _model(records), BoilerplateParams(source="extracted")).source == "extracted"
    # a model that finds no template on the page cannot say where its content ends
    plain = [dict(r, page_blocks=[b for b in r["page_blocks"] if b["kind"] != "li" and b["kind"] != "p" or
                                  b["text"].startswith(("Paragraph", "NOTE"))]) for r in records]
    assert _choose(plain[0], _model(plain)).reason == "no_template_found"


def test_thresholds_are_params() -> None:
    records = [_doc_page(i) for i in range(10)]
    model = _model(records)
    assert _choose(records[3], model, BoilerplateParams(max_extracted_share_of_region=0.5)).source == "extracted"
    with pytest.raises(ValueError, match="max_extracted_share_of_region"):
        BoilerplateParams(max_extracted_share_of_region=0)
    with pytest.raises(ValueError, match="min_held_share"):
        BoilerplateParams(min_held_share=1.5)
    with pytest.raises(ValueError, match="source"):
        BoilerplateParams(source="everything")


def test_finishing_with_auto_is_order_independent_idempotent_and_flags_the_source() -> None:
    records = [_doc_page(i, with_box=i % 2 == 0) for i in range(12)]
    out = finish_records(records).records
    shuffled = list(records)
    random.Random(7).shuffle(shuffled)
    assert [dump_record(r) for r in finish_records(shuffled).records] == [dump_record(r) for r in out]
    again = finish_records(out).records
    assert [dump_record(r) for r in again] == [dump_record(r) for r in out]
    first = out[0]
    assert "boilerplate_source_page_wider_region" in first["flags"]
    assert first["text"].startswith("Chapter alpha: the headline") and "NOTE: page alpha" in first["text"]
    # ``blocks`` keeps the extractor's blocks; the region stays on the record for the next pass
    assert [b["text"] for b in first["blocks"]] == [_para(0, j) for j in range(3)]
    assert [(b["kind"], b["text"]) for b in first["page_blocks"]] == [
        (b["kind"], b["text"]) for b in records[0]["page_blocks"]]
    removed = {b["text"]: b["removed"] for b in first["page_blocks"]}
    assert removed["Home"] == "template:site" and removed["Comment alpha: great page!"] == "region:comments"
    assert removed["NOTE: page alpha has a boxed remark that the extractor left out, long enough to matter."] is None
    # the counts describe ``blocks`` (the extractor's), as the text's source is in the flags
    assert first["boilerplate_removed_blocks"] == sum(1 for b in first["blocks"] if b["removed"]) == 0


def test_region_blocks_of_html() -> None:
    html = """<html><body><nav><a href="/">Home</a></nav><div class="menu"><a href="/a">About us</a></div>
    <div class="post"><p>Real text with <a href="/x">a link</a> inside it.</p>
    <div class="comments"><p>First!</p></div><div style="display:none"><p>hidden words</p></div></div>
    <footer>(c) 2026</footer></body></html>"""
    blocks = region_blocks(html)
    by_text = {b["text"]: b for b in blocks}
    assert "Home" not in by_text and "(c) 2026" not in by_text  # <nav>, <footer>: never read
    assert by_text["Real text with a link inside it."]["links"] == len("a link")
    assert "furniture" not in by_text["Real text with a link inside it."]
    assert by_text["First!"]["furniture"] == "comments"
    assert by_text["About us"]["furniture"] == "boilerplate"
    assert by_text.get("hidden words", {}).get("furniture", "hidden") == "hidden"
    for junk in ("", None, 12, b"<p>bytes</p>"):
        assert region_blocks(junk) == []  # type: ignore[arg-type]
    for junk in ("\x00\x01\x02", "<" * 100, "<div>" * 5000, "\ud800 lone"):
        assert isinstance(region_blocks(junk), list)


def test_odd_region_records_never_raise() -> None:
    records = [_doc_page(i) for i in range(8)]
    records[0]["page_blocks"] = [None, "x", {"text": 5}, {"kind": None, "text": "ok", "links": "many"}]
    records[1]["page_blocks"] = "not a list"
    records[2]["attempts"] = "nope"
    out = finish_records(records).records
    assert len(out) == 8


# -- the headline: never what flips the source; carried by every record's text ----------------------------------
def _titled(i: int, with_box: bool) -> dict:
    record = _doc_page(i, with_box=with_box)
    record["title"] = f"Chapter {WORDS[i]}: the headline | Example docs"
    return record


@pytest.mark.parametrize(
    ("heading", "title", "repeats"),
    [
        ("Slug patrol without pellets", "Slug patrol without pellets | Northfield Community Garden", True),
        ("6.3. The apt-cache Command", "6.3. The apt-cache Command", True),
        ("Open day recap", "Open Day Recap — Garden", True),
        ("The story, and more", "The story", False),  # title too small a share of the heading
        ("Related posts", "Slug patrol without pellets | Garden", False),
        ("Anything", None, False),
    ],
)
def test_repeats_title(heading: str, title: str | None, repeats: bool) -> None:
    from boilerstrip.boilerplate.source import repeats_title

    assert repeats_title(heading, title, P) is repeats


def test_the_headline_alone_does_not_make_the_region_win_and_every_text_carries_it() -> None:
    # half the pages: the region adds only the headline (which the extractor leaves to ``title``)
    records = [_titled(i, with_box=i % 2 == 0) for i in range(10)]
    model = _model(records)
    plain = _choose(records[3], model, title=records[3]["title"])
    assert (plain.source, plain.reason, plain.headline) == ("extracted", "extracted_covers_region", True)
    assert [t for _, t in plain.result.kept] == ["Chapter delta: the headline"] + [_para(3, j) for j in range(3)]
    boxed = _choose(records[4], model, title=records[4]["title"])  # a real wider region still wins
    assert (boxed.source, boxed.reason) == ("page", "wider_region")
    assert [t for _, t in boxed.result.kept][:2] == ["Chapter echo: the headline", _para(4, 0)]
    # without a title nothing is taken for the headline, and the heading is extra text again
    assert _choose(records[3], model).source == "page"
    out = finish_records(records).records
    for record in out:  # one rule for all: the text starts with the headline, once, whatever the source
        lines = record["text"].split("\n\n")
        assert lines[0] == record["title"].split(" | ")[0] and lines.count(lines[0]) == 1, record["url"]
    flags = [any(f.startswith("boilerplate_source_page") for f in r["flags"]) for r in out]
    assert flags == [i % 2 == 0 for i in range(10)]
    # the extractor's blocks are kept as they are (the headline is not one of them): a second pass agrees
    assert all(not any(b["text"].startswith("Chapter") for b in r["blocks"]) for r in out)
    assert [dump_record(r) for r in finish_records(out).records] == [dump_record(r) for r in out]


# -- the page's own navigation (issue 24) --------------------------------------------------------------
SPHINX_PAGE = """<html><head><title>{title}</title></head><body>
<div class="related" role="navigation"><h3>Navigation</h3><ul><li><a href="index.html">index</a></li>
<li><a href="next.html">next</a> |</li></ul></div>
<div class="document"><div class="body" role="main"><section id="top">
<h1>{title}<a class="headerlink" href="#top">¶</a></h1>
<p>{intro}</p>
<section id="install"><h2>Installing {title}</h2><p>{intro} Then install it.</p></section>
<section id="navigation"><h2>Navigation</h2><p>How {title} moves between the pages of a site, in prose.</p>
<ul><li><a href="other.html">Another page of the manual</a></li><li><a href="more.html">More pages</a></li></ul>
</section></section></div></div>
<div class="sphinxsidebar" role="navigation"><div class="sphinxsidebarwrapper">
<div><h3><a href="contents.html">Table of Contents</a></h3><ul>
<li><a class="reference internal" href="#">{title}</a><ul>
<li><a class="reference internal" href="#install">Installing {title}</a></li>
<li><a class="reference internal" href="#navigation">Navigation</a></li></ul></li></ul></div>
<div><h4>Previous topic</h4><p class="topless"><a href="prev.html">The page before {title}</a></p></div>
<div><h4>Next topic</h4><p class="topless"><a href="next.html">The page after {title}</a></p></div>
</div></div></body></html>"""


def _sphinx_page(i: int) -> str:
    title = f"Module {WORDS[i]}"
    return SPHINX_PAGE.format(title=title, intro=_para(i, 0))


def test_the_pages_own_navigation_is_never_region_content() -> None:
    from boilerstrip.boilerplate.source import NAVIGATION

    region = region_blocks(_sphinx_page(1))
    own = {b["text"]: b.get("own_links", 0) for b in region}
    assert own["Installing Module bravo"] > 0 and own["Another page of the manual"] == 0
    marked = region_blocks_of_record({"page_blocks": region})
    navigation = [text for kind, text, furniture, _ in marked if furniture == NAVIGATION]
    # the sidebar's table of contents (links to the page's own fragments), the boxes titled like navigation
    # and the relation bar, each with the links under its title
    assert navigation == ["Navigation", "index", "next |", "Table of Contents", "Module bravo",
                          "Installing Module bravo", "Navigation", "Previous topic", "The page before Module bravo",
                          "Next topic", "The page after Module bravo"]
    # the page's own section titled "Navigation" goes on with prose: not a box; nor is anything in main
    main = [text for kind, text, furniture, _ in marked if furniture != NAVIGATION]
    assert "How Module bravo moves between the pages of a site, in prose." in main and "Navigation" in main
    assert "Another page of the manual" in main


def test_a_crawl_of_a_sphinx_like_site_keeps_no_own_navigation() -> None:
    from boilerstrip.extraction import extract

    records = []
    for i in range(12):
        html = _sphinx_page(i)
        result = extract(html).to_dict()
        records.append({"url": f"https://docs.example/p{i:02d}.html", "title": f"Module {WORDS[i]}",
                        "method": result["method"], "attempts": result["attempts"], "text": result["text"],
                        "blocks": result["blocks"], "page_block_hashes": [], "page_blocks": region_blocks(html)})
    for i, record in enumerate(finish_records(records).records):
        title, intro = f"Module {WORDS[i]}", _para(i, 0)
        # the page's own text, its section titled "Navigation" included; no sidebar TOC, no previous/next box
        # (the permalink glyph is another matter: left aside here)
        assert record["text"].replace("¶", "").split("\n\n") == [title, intro, f"Installing {title}", f"{intro} Then install it.",
                                                 "Navigation", f"How {title} moves between the pages of a site, in prose."]
        assert record["boilerplate_removed_by"]["region:navigation"]["blocks"] == 7


_REGION_PAGES = {
    # the extraction's tree is the region's: its cut is taken
    "plain": ("<html><body><nav><a href='/'>Home</a></nav><div class='content'><h1>Title</h1>"
              + "<p>Some text of the page, long enough to be read as its content. </p>" * 8
              + "<aside>Related</aside><footer>Footer text</footer></body></html>", True),
    # extraction changes its tree beyond the never-content tags (a heading's button, a <wbr>, an unclosed
    # <nav> that swallowed the page): the region is cut from the page's own tree
    "heading button": ("<html><body><h2><button>Open the section</button></h2>"
                       + "<p>Text of the section, long enough to be read as content here. </p>" * 8
                       + "</body></html>", False),
    "wbr": ("<html><body><h1>syn::<wbr>token</h1>" + "<p>Text of the page, long enough for the extractor. </p>" * 8
            + "</body></html>", False),
    "unclosed nav": ("<html><body><nav><a href='/'>Home</a>" + "<p>The page's text, swallowed by its nav. </p>" * 12
                     + "</body></html>", False),
}


@pytest.mark.parametrize("name", sorted(_REGION_PAGES))
def test_the_region_taken_from_the_extractions_cut_is_the_one_cut_apart(name: str) -> None:
    """A crawl's page reading takes the page's region from the extraction's cut of the same tree (one
    segmentation fewer): the features are those ``page_features`` gives alone, whether the cut was taken
    (the extraction's tree is the region's) or the region cut again (extraction changed its tree)."""
    from boilerstrip.boilerplate.page import PageFeaturesReading, page_features
    from boilerstrip.extraction import extract

    html, taken = _REGION_PAGES[name]
    reading = PageFeaturesReading(html)
    result = extract(html, "http://s.test/p", segmented=reading.take_region)
    assert (reading.region is not None) is taken
    features = reading.features()
    assert features == page_features(html)
    assert features.hashes and result.text
