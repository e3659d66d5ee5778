"""Issue 11 on a generated manual: per-page navigation bars go as structural template, section headings and
lists of links that are the page's content stay, near duplicates are kept and marked."""

from __future__ import annotations

import random

from boilerstrip.boilerplate import BoilerplateParams, DuplicateParams, page_block_hashes, page_blocks, region_blocks
from boilerstrip.check import check_records, navigation_line
from boilerstrip.extraction import extract
from boilerstrip.finishing import finish_records

WORDS = ("amber basil cedar delta ember fennel garnet hazel indigo juniper kelp lotus maple nutmeg olive "
         "pepper quartz rowan sage thyme umber violet willow yarrow zinnia").split()
CHAPTERS = ["Admonitions", "Callouts", "Pagination and General Styles", "Tables"]
NAMES = [f"{WORDS[i % 25]}.{WORDS[(i * 7 + 3) % 25]}" for i in range(24)]


def _prose(seed: int, sentences: int = 3) -> str:
    rng = random.Random(seed)
    return " ".join(" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range(sentences))


def _navheader(title: str, chapter: str, prev: str, nxt: str) -> str:
    return (f'<div class="navheader"><table><tr><th colspan="3">{title}</th></tr><tr>'
            f'<td><a href="{prev}.html">Prev</a></td><th>{chapter}</th><td><a href="{nxt}.html">Next</a></td>'
            f'</tr></table><hr></div>')


def _navfooter(prev: str, nxt: str) -> str:
    return (f'<div class="navfooter"><hr><table><tr><td><a href="{prev}.html">Prev</a></td><td><a href="index.html">Up'
            f'</a></td><td><a href="{nxt}.html">Next</a></td></tr><tr><td>{prev}</td><td><a href="../index.html">'
            f'Home</a></td><td>{nxt}</td></tr></table></div>')


def _reference_page(i: int) -> tuple[str, str]:
    name, chapter = NAMES[i], CHAPTERS[i % 4]
    prev, nxt = NAMES[i - 1], NAMES[(i + 1) % len(NAMES)]
    body = (f'<div class="refentry"><div class="refnamediv"><h2>{name}</h2><p>{name} &#8212; {_prose(i, 1)}</p></div>'
            f'<div class="refsynopsisdiv"><h2>Synopsis</h2><pre>&lt;xsl:param name="{name}"&gt;{i}&lt;/xsl:param&gt;</pre></div>'
            f'<div class="refsection"><h2>Description</h2><p>{_prose(100 + i)}</p><p>{_prose(200 + i)}</p></div></div>')
    html = (f"<html><head><title>{name}</title></head><body>{_navheader(name, chapter, prev, nxt)}{body}"
            f"{_navfooter(prev, nxt)}</body></html>")
    return f"http://manual.test/fo/{name}.html", html


def _index_page() -> tuple[str, str]:
    """A part's index: its content is the list of its pages (a table of contents, named "toc")."""
    items = "".join(f'<dt><a href="{n}.html">{n}</a> &#8212; {_prose(i, 1)[:40]}</dt>' for i, n in enumerate(NAMES))
    html = (f"<html><head><title>FO Parameter Reference</title></head><body>"
            f"{_navheader('FO Parameter Reference', 'Reference', NAMES[-1], NAMES[0])}"
            f'<div class="part"><h1>FO Parameter Reference</h1><p>All the parameters.</p>'
            f'<div class="toc"><p><b>Table of Contents</b></p><dl class="toc">{items}</dl></div></div>'
            f"{_navfooter(NAMES[-1], NAMES[0])}</body></html>")
    return "http://manual.test/fo/index.html", html


def _record(url: str, html: str) -> dict:
    result = extract(html, url=url)
    return {"url": url, "title": result.title, "text": result.text, "method": result.method,
            "attempts": [a.__dict__.copy() for a in result.attempts],
            "blocks": [{"kind": b.kind, "text": b.text} for b in result.blocks],
            "page_block_hashes": page_block_hashes(html), "page_blocks": region_blocks(html)}


def _site() -> list[dict]:
    return [_record(*_reference_page(i)) for i in range(len(NAMES))] + [_record(*_index_page())]


def test_per_page_navigation_bars_are_structural_template() -> None:
    records = {r["url"]: r for r in finish_records(_site()).records}
    assert len(records) == len(NAMES) + 1
    for i, name in enumerate(NAMES):
        record = records[f"http://manual.test/fo/{name}.html"]
        lines = record["text"].splitlines()
        assert not any(navigation_line(line) for line in lines), lines
        assert not any(CHAPTERS[i % 4] in line for line in lines)
        # the page's structure stays: its headline, its one-line purpose, "Synopsis" and "Description" over
        # text of its own, though both headings are on every page
        assert lines[0] == name and "Synopsis" in lines and "Description" in lines
        assert _prose(100 + i) in record["text"] and f'name="{name}"' in record["text"]
        removed = {b["text"]: b["removed"] for b in record["page_blocks"]}
        assert removed[f"Prev | {CHAPTERS[i % 4]} | Next"] == "template:structure"
        assert removed[f"{NAMES[i - 1]} | Home | {NAMES[(i + 1) % len(NAMES)]}"] == "template:structure"
        assert removed[name] is None or removed[name] == "template:structure"  # the title row or the h2
    report = check_records(records.values())
    assert report["verdict"] == "ok", report["sites"][0]["reasons"]


def _page_source_site() -> list[dict]:
    """The records as ``SOURCE=page`` makes them: every block of the page, the cross-page model alone decides."""
    out = []
    for url, html in [_reference_page(i) for i in range(len(NAMES))] + [_index_page()]:
        blocks = page_blocks(html, slots=True)
        out.append({"url": url, "title": url, "method": "crosspage", "page_block_hashes": page_block_hashes(html),
                    "blocks": [{"kind": k, "text": t, "slot": slot} for k, t, slot in blocks]})
    return out


def test_the_cross_page_model_alone_removes_the_bars_by_structure() -> None:
    params = BoilerplateParams(source="page")
    records = finish_records(_page_source_site(), params=params).records
    assert not any(navigation_line(line) for r in records for line in r["text"].splitlines())
    # without the structural rule the bars stay: only their constant "Prev | Up | Next" row goes
    off = finish_records(_page_source_site(), params=BoilerplateParams(source="page", structure_enabled=False)).records
    assert all(any(navigation_line(line) for line in r["text"].splitlines()) for r in off)
    assert check_records(off)["sites"][0]["verdict"] == "fail"


def test_a_page_that_is_its_table_of_contents_keeps_it() -> None:
    records = {r["url"]: r for r in finish_records(_site()).records}
    index = records["http://manual.test/fo/index.html"]
    assert "boilerplate_source_page_list_content" in index["flags"]
    for name in NAMES:
        assert name in index["text"]
    assert not any(navigation_line(line) for line in index["text"].splitlines())


def test_the_finishing_pass_is_order_independent() -> None:
    site = _site()
    shuffled = list(site)
    random.Random(5).shuffle(shuffled)
    assert finish_records(site).records == finish_records(shuffled).records


def _article(url: str, paragraphs: list[str]) -> dict:
    text = "\n\n".join(paragraphs)
    return {"url": url, "title": url, "text": text, "method": "semantic",
            "blocks": [{"kind": "p", "text": p} for p in paragraphs]}


def test_near_duplicates_are_kept_and_marked_exact_copies_dropped() -> None:
    base = [_prose(300 + k, 4) for k in range(30)]
    records = [
        _article("http://d.test/part.html", base),
        _article("http://d.test/part/commands.html", base[:29] + [_prose(999, 1)]),  # ~95% of the part index
        _article("http://d.test/copy-of-part.html", base),  # the same text under another URL
        _article("http://d.test/other.html", [_prose(500 + k, 4) for k in range(12)]),
    ]
    result = finish_records(records)
    out = {r["url"]: r for r in result.records}
    assert sorted(out) == ["http://d.test/other.html", "http://d.test/part.html", "http://d.test/part/commands.html"]
    near = out["http://d.test/part/commands.html"]
    assert near["duplicate_of"] == "http://d.test/part.html" and 0.9 <= near["duplicate_similarity"] < 1.0
    assert "near_duplicate" in near["flags"]
    assert out["http://d.test/part.html"]["duplicate_of"] is None
    assert [(d["url"], d["reason"]) for d in result.dropped] == [("http://d.test/copy-of-part.html", "exact_duplicate")]
    (site,) = result.report["sites"].values()
    assert [d["url"] for d in site["near_duplicates_kept"]] == ["http://d.test/part/commands.html"]
    # asked to drop them (--drop-duplicates): the near duplicate goes too
    dropped = finish_records(records, dup_params=DuplicateParams(drop_near=True))
    assert {d["url"] for d in dropped.dropped} == {"http://d.test/copy-of-part.html", "http://d.test/part/commands.html"}


def test_a_blocks_pieces_are_its_separated_parts_whether_or_not_it_holds_a_separator() -> None:
    """A block without any separator character skips the separators' regex: the pieces are the same as the
    regex's split gives, on texts with and without separators (bars, breadcrumbs, "and/or", arrows, empty
    parts, digits on and off)."""
    from boilerstrip.boilerplate.blocks import _PIECE_SEP_RE, normalise_block, split_pieces

    rng = random.Random(7)
    parts = ["Prev", "Next", "Home", "Docs", "and/or", "3.19.1", "a|b", "→", "  ", "Straße", "x > y", "", "·"]
    joiners = [" | ", " > ", " / ", " » ", " · ", " → ", " ", "|", "/", " - "]
    for _ in range(2000):
        text = "".join(rng.choice(parts) + rng.choice(joiners) for _ in range(rng.randint(1, 5)))
        for digits in (True, False):
            expected = [p for p in (normalise_block(part, digits=digits) for part in _PIECE_SEP_RE.split(text)) if p]
            assert split_pieces(text, digits=digits) == expected, text
    assert split_pieces("Prev | Admonitions | Next") == ["prev", "admonitions", "next"]
    assert split_pieces("Plain prose without a bar") == ["plain prose without a bar"]


def test_ascii_text_is_normalised_by_the_byte_table_to_the_patterns_form() -> None:
    """``normalise_block`` reads ASCII text without code punctuation through a byte table; its form is the
    one the patterns give (``_normalised_by_patterns``), on prose, digits (runs, zeros, digits in words),
    code punctuation, control characters and underscores, digits on and off."""
    import string

    from boilerstrip.boilerplate.blocks import _normalised_by_patterns, normalise_block

    rng = random.Random(11)
    words = ["Next", "next()", "--help", "std::move", "a->b", "3.19.1", "007", "a0b", "x_1", "Page 3 of 12",
             "Reliable.", "\x00", "\x1c", "\t", "ÉCOLE", "2021-10-06", "$HOME", "100%", "[1]", "»", "Straße"]
    alphabet = string.printable + "\x00\x1c"
    texts = ["", " ", "0", "00", "10 200 3000"]
    texts += [" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) for _ in range(3000)]
    for text in texts:
        for digits in (True, False):
            assert normalise_block.__wrapped__(text, digits=digits) == _normalised_by_patterns(text, digits), (text, digits)
    assert normalise_block("Page 3 of 12") == "page 0 of 0"
    assert normalise_block("Release 3.19.1", digits=False) == "release 3 19 1"
