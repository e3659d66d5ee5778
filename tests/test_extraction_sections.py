"""Multi-section pages: in-text boxes named like furniture ("sidebar") and section <h1>s stay in the content;
page furniture with the same names does not."""

from __future__ import annotations

import pytest

from boilerstrip.extraction import ExtractionParams, extract

PROSE = (
    "The daemon collects messages from applications and the kernel, then dispatches them into log files, "
    "usually stored in the log directory, and it obeys its configuration file for every one of them."
)
BOX = (
    "A named pipe is a persistent pipe that lives in the file system, so that two unrelated processes can "
    "exchange data through it, one writing and the other reading, without sharing a parent process at all."
)


def _docbook_page(box_class: str = "sidebar") -> str:
    return f"""<html><head><title>9.5. Log Events</title></head><body>
    <div id="banner"><a href="/ebook">Download the ebook</a></div>
    <div class="section">
      <div class="titlepage"><h2>9.5. Log Events</h2></div>
      <div class="para">{PROSE}</div>
      <div class="{box_class}"><div class="titlepage"><p>BACK TO BASICS The named pipe</p></div>
        <div class="para">{BOX}</div><div class="para">{BOX.replace("pipe", "fifo")}</div></div>
      <div class="para">{PROSE.replace("daemon", "service")}</div>
      <div class="para">{PROSE.replace("kernel", "network")}</div>
    </div></body></html>"""


@pytest.mark.parametrize("semantic", [True, False])
def test_a_sidebar_box_among_the_paragraphs_is_kept(semantic: bool) -> None:
    result = extract(_docbook_page(), params=ExtractionParams(semantic_enabled=semantic))
    assert result.method == "density"
    assert "lives in the file system" in result.text and "exchange data through it, one writing" in result.text
    assert "The service collects" in result.text
    assert "Download the ebook" not in result.text


def test_the_rule_can_be_switched_off() -> None:
    result = extract(_docbook_page(), params=ExtractionParams(min_inflow_box_chars=0))
    assert "lives in the file system" not in result.text
    assert "The service collects" in result.text


def test_a_page_sidebar_column_is_still_dropped() -> None:
    # the same words, as the page's sidebar column: next to the article's wrapper, not among its paragraphs
    links = "".join(f'<li><a href="/p{i}">Another post about logging number {i}</a></li>' for i in range(8))
    html = f"""<html><body><div class="wrap">
      <div class="post">{"".join(f"<p>{PROSE} ({i})</p>" for i in range(4))}</div>
      <div class="sidebar"><h3>Recent posts</h3><ul>{links}</ul><p>{BOX}</p></div>
    </div></body></html>"""
    result = extract(html)
    assert "The daemon collects" in result.text
    assert "Recent posts" not in result.text and "Another post" not in result.text
    assert "lives in the file system" not in result.text


def test_a_link_box_among_the_paragraphs_is_still_dropped() -> None:
    related = "".join(f'<p><a href="/r{i}">A related story about the kernel and its many logs, part {i}</a></p>'
                      for i in range(4))
    html = f"""<html><body><div class="story">
      <p>{PROSE}</p><div class="related">{related}</div><p>{PROSE.replace("daemon", "service")}</p>
      <p>{PROSE.replace("kernel", "network")}</p></div></body></html>"""
    result = extract(html)
    assert "The service collects" in result.text
    assert "A related story" not in result.text


def _sections(h1s: int) -> str:
    body = "".join(f"<h1>{i}. Section {i}</h1><p>{PROSE} ({i})</p>" for i in range(1, h1s + 1))
    return f"<html><head><title>Threads</title></head><body><div class='doc'><h1>Threads</h1>{body}</div></body></html>"


def test_several_h1s_are_section_headings_and_the_headline_still_goes() -> None:
    result = extract(_sections(3))
    assert [b.text for b in result.blocks if b.kind == "h1"] == ["1. Section 1", "2. Section 2", "3. Section 3"]
    assert result.title == "Threads" and not result.text.startswith("Threads")


def test_a_single_h1_is_the_headline_and_goes() -> None:
    html = f"<html><body><div class='doc'><h1>Just a headline here</h1><p>{PROSE}</p><p>{PROSE} again</p></div></body></html>"
    result = extract(html)
    assert not any(b.kind == "h1" for b in result.blocks)
    assert not any(b.kind == "h1" for b in extract(_sections(3), params=ExtractionParams(min_section_h1s=0)).blocks)
