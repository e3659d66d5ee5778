"""Arbitrary input never raises: hostile pages give a result (maybe empty) with a reason and flags;
metadata is read from what the page declares; the core imports no crawling framework."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time

import pytest

from boilerstrip.extraction import ExtractionParams, ExtractionResult, decode_html, extract

PARAGRAPH = "The council approved the new budget on Monday after a long debate about schools, roads and parks. "


def article(text: str = PARAGRAPH * 5) -> str:
    return f"<html><body><article><p>{text}</p></article></body></html>"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "empty_input"),
        ("   \n\t ", "empty_input"),
        (b"", "empty_input"),
        (None, "empty_input"),
        (12345, "not_text"),
        ("<!-- only a comment -->", "empty_document"),
        ("<html><body></body></html>", "no_content_found"),
        ("<", "no_content_found"),
        ("<frameset><frame src='a.html'></frameset>", "no_content_found"),
        (gzip.compress(article().encode()), "binary_input"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20, "binary_input"),
    ],
)
def test_degenerate_inputs_give_empty_results_with_reasons(value, reason) -> None:
    result = extract(value)
    assert isinstance(result, ExtractionResult)
    assert result.text == "" and result.method is None and result.blocks == ()
    assert result.reason == reason


def test_random_bytes_are_binary() -> None:
    for seed in range(5):
        data = bytes((i * 7919 + seed * 104729) % 251 for i in range(50_000))  # deterministic noise
        result = extract(data + os.urandom(1000))
        assert result.reason == "binary_input"


def test_huge_input_is_refused_before_it_is_decoded_or_parsed(monkeypatch) -> None:
    # "quickly" without a clock: the refusal comes before any decoding or parsing of the input
    from boilerstrip.extraction import core

    def must_not_run(*args, **kwargs):
        raise AssertionError("a too-large input was decoded or parsed")

    monkeypatch.setattr(core, "parse_document", must_not_run)
    monkeypatch.setattr(core, "decode_html", must_not_run)
    result = extract("<p>" + "x" * (50 * 1024 * 1024) + "</p>")
    assert result.reason == "input_too_large"
    assert "input_too_large" in result.flags
    assert extract(b"x" * (50 * 1024 * 1024)).reason == "input_too_large"


def test_input_limit_is_a_param() -> None:
    assert extract(article(), params=ExtractionParams(max_input_chars=100)).reason == "input_too_large"


def test_deep_nesting_keeps_the_text_and_says_so() -> None:
    depth = 5000
    html = (
        "<html><body>" + "<div>" * depth + f"<p>{PARAGRAPH * 4}</p>" + "</div>" * depth
        + "<p>Text after the deep part.</p></body></html>"
    )
    start = time.perf_counter()
    result = extract(html)
    assert time.perf_counter() - start < 5
    assert "truncated_depth" in result.flags
    assert PARAGRAPH.strip() in result.text  # not lost silently


def test_moderate_nesting_is_fine() -> None:
    html = "<html><body>" + "<div>" * 1500 + f"<p>{PARAGRAPH * 4}</p>" + "</div>" * 1500 + "</body></html>"
    result = extract(html)
    assert "truncated_depth" not in result.flags
    assert PARAGRAPH.strip() in result.text


def test_lone_surrogates_are_replaced_and_flagged() -> None:
    result = extract(article(PARAGRAPH * 3 + "broken \ud800 here " + PARAGRAPH))
    assert "lone_surrogates" in result.flags
    assert "broken \ufffd here" in result.text
    result.text.encode("utf-8")  # always encodable


def test_undeclared_legacy_encoding_is_sniffed() -> None:
    text = "Le café crème et la crème brûlée sont très bons, dit le chef à Montréal. " * 5
    result = extract(article(text).encode("cp1252"))
    assert "café crème" in result.text
    assert "replacement_chars" not in result.flags


def test_declared_charset_wins() -> None:
    html = f"<html><head><meta charset='koi8-r'></head><body><article><p>{'Привет, мир. ' * 30}</p></article></body></html>"
    result = extract(html.encode("koi8-r"))
    assert "Привет, мир." in result.text


def test_utf16_with_bom() -> None:
    result = extract(b"\xff\xfe" + article().encode("utf-16-le"))
    assert PARAGRAPH.strip() in result.text


def test_mojibake_is_flagged() -> None:
    html = article(PARAGRAPH * 3 + "bad bytes \ufffd\ufffd here")
    assert "replacement_chars" in extract(html).flags


def test_control_characters_and_xml_declaration() -> None:
    html = '<?xml version="1.0" encoding="iso-8859-1"?>' + article(PARAGRAPH * 3 + "nul\x00 bell\x07 " + PARAGRAPH)
    result = extract(html)
    assert PARAGRAPH.strip() in result.text
    assert "\x07" not in result.text and "\x00" not in result.text


def test_decode_html_never_raises() -> None:
    assert decode_html(b"\xff\xfe\x00")[0] is not None
    assert decode_html(b"plain")[0] == "plain"
    assert decode_html(bytearray(b"caf\xe9"))[0] == "café"


# --- metadata --------------------------------------------------------------------------------------

HEAD = """
<title>Budget approved | The Town Paper</title>
<meta name="description" content="The council approved the budget.">
<meta property="og:title" content="Budget approved">
<link rel="canonical" href="/news/budget">
<meta property="article:published_time" content="2026-11-02T09:00:00Z">
<script type="application/ld+json">
{"@context": "https://schema.org", "@graph": [{"@type": "WebSite", "name": "Town Paper"},
 {"@type": "NewsArticle", "headline": "Budget approved (LD)", "author": [{"@type": "Person", "name": "Ann Lee"}],
  "datePublished": "2026-11-02", "dateModified": "2026-11-03T10:00:00Z"}]}
</script>
<script type="application/ld+json">{ not json </script>
"""


def test_metadata_from_meta_tags_and_json_ld() -> None:
    html = f"<html lang='en-GB'><head>{HEAD}</head><body><article><p>{PARAGRAPH * 4}</p></article></body></html>"
    result = extract(html, url="https://town.example/a?x=1")
    assert result.title == "Budget approved"
    assert result.description == "The council approved the budget."
    assert result.canonical_url == "https://town.example/news/budget"
    assert result.lang == "en-GB"
    assert result.author == "Ann Lee"
    assert result.published == "2026-11-02T09:00:00Z"
    assert result.modified == "2026-11-03T10:00:00Z"


def test_metadata_is_kept_on_empty_results() -> None:
    result = extract(f"<html><head>{HEAD}</head><body><nav><a href='/'>Home</a></nav></body></html>")
    assert result.text == "" and result.reason == "no_content_found"
    assert result.title == "Budget approved"


def test_to_dict_is_json_ready() -> None:
    data = extract(article()).to_dict()
    assert json.loads(json.dumps(data))["method"] == "semantic"
    assert data["attempts"][0] == {"method": "semantic", "accepted": True, "chars": len(PARAGRAPH * 5) - 1, "reason": "accepted"}


# --- purity ------------------------------------------------------------------------------------------


def test_core_imports_no_crawling_framework() -> None:
    code = (
        "import sys, json\n"
        "import boilerstrip.extraction as e\n"
        "e.extract('<article><p>' + 'word ' * 100 + '</p></article>')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('scrapy', 'twisted', 'playwright', 'scrapy_playwright', 'trafilatura'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_random_tag_soup_never_raises() -> None:
    import random

    rng = random.Random(20261130)
    tags = "div p span a article main nav aside footer header table tr td th ul ol li pre code br h1 h2 blockquote figure figcaption img script style form select option".split()
    attrs = ['class="share"', 'class="entry-content"', 'id="comments"', "hidden", 'style="display:none"', 'role="main"', 'itemprop="articleBody"', 'aria-hidden="true"', 'class="related-posts"', ""]
    words = "the river rose over town council, bridge; water 2026 <> & é 中文 \u200b".split()
    for _ in range(300):
        out = []
        for _ in range(rng.randint(0, 200)):
            roll = rng.random()
            tag = rng.choice(tags)
            if roll < 0.4:
                out.append(f"<{tag} {rng.choice(attrs)}>")
            elif roll < 0.6:
                out.append(f"</{tag}>")
            else:
                out.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 30))))
        html = "".join(out)
        result = extract(html if rng.random() < 0.5 else html.encode("utf-8", "surrogatepass"))
        assert isinstance(result, ExtractionResult)
        assert result.text == "" or result.method is not None
        assert all(not a.reason.startswith("error_") for a in result.attempts), result.attempts
