"""The pure core of cross-page boilerplate removal and duplicate pages (no Scrapy)."""

from __future__ import annotations

import json
import random

import pytest

from boilerstrip.finishing import finish_records

from boilerstrip.boilerplate import (
    BoilerplateParams,
    DuplicateIndex,
    DuplicateParams,
    TemplateModel,
    block_hash,
    clean_page,
    cluster_of_url,
    find_duplicates,
    normalise_block,
    page_block_hashes,
    page_blocks,
    site_of_url,
)
from boilerstrip.boilerplate.finish import dump_record

P = BoilerplateParams()


# -- blocks -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Small. Fast. Reliable.\nChoose any three.", "small. fast. reliable.Choose  any three"),
        ("This page last modified on 2021-10-06 14:45:14 UTC", "This page last modified on 2016-09-28 09:07:03 UTC"),
        ("© 2024 Example Ltd", "© 2026  EXAMPLE ltd."),
        ("Page 3 of 12", "Page 10 of 11"),
    ],
)
def test_normalised_alike(a: str, b: str) -> None:
    assert block_hash(normalise_block(a)) == block_hash(normalise_block(b))


@pytest.mark.parametrize(
    ("a", "b"),
    [("Related posts", "Related post"), ("Subscribe now", "Subscribe later"), ("Prev", "Next"),
     # what was written counts: code punctuation against a word is part of it (hash version 3)
     ("next()", "Next"), ("next(iterator)", "next iterator"), ("--help", "Help"), ("@property", "Property"),
     ("$HOME", "Home"), ("items[0]", "Items 0"), ("std::move", "std move")],
)
def test_normalised_apart(a: str, b: str) -> None:
    assert block_hash(normalise_block(a)) != block_hash(normalise_block(b))


def test_prose_punctuation_still_does_not_count() -> None:
    assert normalise_block("« Previous | Up | Next »") == normalise_block("Previous Up Next")
    assert normalise_block("(c) 2000 The Site, all rights reserved.") == normalise_block("c 2000 the site all rights reserved")
    assert normalise_block("e-mail, x - y") == "e mail x y"


def test_a_code_cell_is_not_the_sites_navigation_word() -> None:
    """A Sphinx-like site: every page has "next" / "previous" / "index" links; the built-in functions page
    lists ``next()`` in a table cell. The cell is not template: its text is not the link's."""
    pages = {}
    for i in range(20):
        pages[f"http://site/library/p{i}.html"] = [
            ("li", "index"), ("li", "modules"), ("li", "next"), ("li", "previous"), ("h1", f"Module {chr(97 + i)}"),
            ("p", "Body " + _words(i)), ("li", "next"), ("li", "previous"), ("p", "Created using Sphinx")]
    pages["http://site/library/functions.html"] = [
        ("li", "index"), ("li", "modules"), ("li", "next"), ("li", "previous"), ("h1", "Built-in Functions"),
        ("p", "The Python interpreter has a number of functions built into it."),
        ("td", "iter()"), ("td", "len()"), ("td", "next()"), ("td", "object()"), ("td", "index()"),
        ("li", "next"), ("li", "previous"), ("p", "Created using Sphinx")]
    result = finish_records(_records(pages))
    record = next(r for r in result.records if r["url"].endswith("functions.html"))
    lines = record["text"].splitlines()
    assert "next()" in lines and "index()" in lines
    assert "next" not in lines and "previous" not in lines and "Created using Sphinx" not in lines


def test_digits_kept_when_asked_and_empty_blocks_have_no_hash() -> None:
    assert normalise_block("Release 3.0.0", digits=False) != normalise_block("Release 3.6.2", digits=False)
    assert block_hash(normalise_block(" \n -- ")) is None


def test_headings_keep_their_digits() -> None:
    """Two release-note titles differing only by version stay two blocks; footers with dates merge."""
    model = TemplateModel()
    pages = [[("h2", f"SQLite Release 3.{i}.0"), ("p", f"Notes {i} " + "word " * i), ("p", f"Updated 2022-0{i % 9 + 1}-01")]
             for i in range(10)]
    params = BoilerplateParams(min_pages=3)
    from boilerstrip.boilerplate import hash_blocks

    for i, blocks in enumerate(pages):
        model.add_page("s", "c", [h for _, _, h, _ in hash_blocks(blocks, params)])
    result = clean_page(pages[0], "s", "c", model, params)
    assert [b["removed"] for b in result.blocks] == [None, None, "template:site"]


def test_site_and_cluster_of_url() -> None:
    assert site_of_url("http://Example.ORG:8080/a/b") == "example.org:8080"
    assert site_of_url("https://example.org/") == "example.org"
    assert cluster_of_url("http://h/blog/2024/05/post") == "blog:4"
    assert cluster_of_url("http://h/c3ref/open.html") == "c0ref:2"  # digits in the folder name count as 0
    assert cluster_of_url("http://h/about.html") == "-:1"
    assert cluster_of_url("http://h/") == "-:1"  # the home page goes with the top-level pages
    assert site_of_url("http://[::1") == ""  # a broken URL is a site name, not an exception


# -- the model and cleaning ------------------------------------------------------------------------------
def _words(i: int, n: int = 40) -> str:
    """n words unique to page i, without digits (digits are normalised away)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join(f"{letters[i % 26]}{letters[(i // 26) % 26]}{letters[k % 26]}{letters[k // 26 % 26]}q" for k in range(n))


def _site(n_articles: int, n_listings: int, footer_on: int | None = None):
    """Pages of a site: every page has a menu and a footer (unless footer_on), articles a 'related' box."""
    pages = {}
    for i in range(n_articles):
        blocks = [("li", "Home"), ("li", "Archive"), ("h1", f"Article {chr(65 + i)} title"),
                  ("p", "Article body " + _words(i)),
                  ("h2", "Related posts"), ("p", "Subscribe to our newsletter")]
        if footer_on is None or i < footer_on:
            blocks.append(("p", f"(c) 20{i:02d} The Site, all rights reserved"))
        pages[f"http://site/posts/{i}.html"] = blocks
    for i in range(n_listings):
        pages[f"http://site/list{i}.html"] = [("li", "Home"), ("li", "Archive"), ("p", "Listing of things " + _words(i + 100, 10)),
                                              ("p", f"(c) 20{i:02d} The Site, all rights reserved")]
    return pages


def _model(pages, params=P) -> TemplateModel:
    from boilerstrip.boilerplate import hash_blocks

    model = TemplateModel()
    for url, blocks in pages.items():
        model.add_page(site_of_url(url), cluster_of_url(url), [h for _, _, h, _ in hash_blocks(blocks, params)])
    return model


def test_site_template_and_cluster_template_are_removed() -> None:
    pages = _site(n_articles=12, n_listings=8)  # 20 pages; "Related posts" on 12 of them = 60% of the site
    model = _model(pages)
    result = clean_page(pages["http://site/posts/3.html"], "site", "posts:2", model, P)
    reasons = {b["text"]: b["removed"] for b in result.blocks}
    assert reasons["Home"] == "template:site"
    assert reasons["(c) 2003 The Site, all rights reserved"] == "template:site"
    assert reasons["Related posts"] == "template:cluster"  # on every article, not on listings
    assert reasons["Subscribe to our newsletter"] == "template:cluster"
    assert reasons["Article D title"] is None and reasons[pages["http://site/posts/3.html"][3][1]] is None
    assert result.removed_blocks == 5
    assert result.removed_chars == sum(len(b["text"]) for b in result.blocks if b["removed"])
    listing = clean_page(pages["http://site/list0.html"], "site", "-:1", model, P)
    assert [b["removed"] for b in listing.blocks] == ["template:site", "template:site", None, "template:site"]


def test_a_page_heading_is_not_the_menu_item_with_the_same_words() -> None:
    """Block hashes keep the kind class (heading / other): a category page's <h1>Growing</h1> is not the
    "Growing" menu item on every page, while a "Related posts" heading on every article still goes."""
    pages = {f"http://site/posts/{i}.html": [("li", "Home"), ("li", "Growing"), ("li", "Archive"),
                                            ("h2", f"Post {_words(i, 3)}"), ("p", "Body " + _words(i)),
                                            ("h2", "Related posts"), ("li", "Growing")]  # also a related link
             for i in range(12)}
    category = [("li", "Home"), ("li", "Growing"), ("li", "Archive"), ("h1", "Growing"),
                ("p", "Posts filed under growing."), ("h2", "Archive")]
    pages["http://site/category/growing/"] = category
    model = _model(pages)
    reasons = [(b["kind"], b["text"], b["removed"]) for b in clean_page(category, "site", "category:2", model, P).blocks]
    assert reasons == [("li", "Home", "template:site"), ("li", "Growing", "template:site"),
                       ("li", "Archive", "template:site"), ("h1", "Growing", None),
                       ("p", "Posts filed under growing.", None), ("h2", "Archive", None)]
    article = {b["text"]: b["removed"] for b in clean_page(pages["http://site/posts/3.html"], "site", "posts:2",
                                                             model, P).blocks if b["kind"] == "h2"}
    assert article["Related posts"] == "template:site"
    assert block_hash("growing", "h1") == block_hash("growing", "h3") != block_hash("growing", "li")
    assert block_hash("growing", "li") == block_hash("growing", "p") == block_hash("growing")



def test_thresholds_share_and_minimum_pages() -> None:
    # footer on 15 of 20 pages = 75% < 80%: stays; with the share lowered to 0.7 it goes
    pages = _site(n_articles=20, n_listings=0, footer_on=15)
    params = BoilerplateParams(clusters_enabled=False)
    footer = pages["http://site/posts/0.html"][-1]
    blocks = pages["http://site/posts/0.html"]
    assert clean_page(blocks, "site", "posts:2", _model(pages, params), params).blocks[-1]["removed"] is None
    lower = BoilerplateParams(clusters_enabled=False, min_share_of_pages=0.7)
    assert clean_page(blocks, "site", "posts:2", _model(pages, lower), lower).blocks[-1]["removed"] == "template:site"
    assert footer[1].startswith("(c)")
    # 4 pages, all sharing a block: fewer than min_pages (5), so nothing is template yet
    small = _site(n_articles=4, n_listings=0)
    result = clean_page(small["http://site/posts/0.html"], "site", "posts:2", _model(small), P)
    assert result.removed_blocks == 0


def test_long_unique_looking_block_is_protected_unless_overwhelming() -> None:
    long_text = "This long paragraph explains the licence of every article in detail " * 4  # > 200 chars
    params = BoilerplateParams(clusters_enabled=False)
    pages = {f"http://s/{i}": [("p", "Body " + _words(i, 5)), ("p", long_text)] for i in range(20)}
    # on 18 of 20 pages (90%): template by share, but long, and 90% < 98%: kept, page flagged
    for i in (0, 1):
        pages[f"http://s/{i}"] = pages[f"http://s/{i}"][:1]
    model = _model(pages, params)
    result = clean_page(pages["http://s/5"], "s", "-:1", model, params)
    assert result.blocks[1]["removed"] is None
    assert "boilerplate_protected_block" in result.flags
    # on every page: overwhelming evidence, removed
    pages = {f"http://s/{i}": [("p", "Body " + _words(i, 5)), ("p", long_text)] for i in range(20)}
    result = clean_page(pages["http://s/5"], "s", "-:1", _model(pages, params), params)
    assert result.blocks[1]["removed"] == "template:site"


def test_never_blank_a_page_on_weak_evidence() -> None:
    params = BoilerplateParams(clusters_enabled=False)
    # a block on 17 of 20 pages (85%) is template; a page made only of it would be blanked: kept whole
    pages = {f"http://s/{i}": [("p", "Shared notice for members"), ("p", _words(i, 3))] for i in range(17)}
    pages.update({f"http://s/x{i}": [("p", _words(i + 50, 3))] for i in range(3)})
    pages["http://s/only"] = [("p", "Shared notice for members")]
    model = _model(pages, params)
    result = clean_page(pages["http://s/only"], "s", "-:1", model, params)
    assert [b["removed"] for b in result.blocks] == [None]
    assert result.kept == [("p", "Shared notice for members")]
    assert result.flags == ("boilerplate_kept_too_short",) and result.removed_chars == 0


def test_page_of_nothing_but_site_chrome_is_emptied_and_flagged() -> None:
    params = BoilerplateParams(clusters_enabled=False)
    pages = {f"http://s/{i}": [("li", "Home"), ("li", "About"), ("p", _words(i, 3))] for i in range(20)}
    pages["http://s/diagram"] = [("li", "Home"), ("li", "About")]  # the extractor found only the menu
    result = clean_page(pages["http://s/diagram"], "s", "-:1", _model(pages, params), params)
    assert result.kept == [] and result.flags == ("boilerplate_only",)
    assert [b["text"] for b in result.blocks] == ["Home", "About"]  # still recoverable from the record


def test_mostly_template_list_goes_whole() -> None:
    """A Prev | Up | Home | Next bar: Up and Home are constant, Prev/Next carry the neighbours' titles."""
    params = BoilerplateParams(clusters_enabled=False)
    pages = {}
    for i in range(20):
        pages[f"http://s/{i}"] = [("p", "Text " + _words(i, 5)), ("li", "Prev " + _words(i - 1, 2)), ("li", "Up"),
                                  ("li", "Home"), ("li", "Next " + _words(i + 1, 2))]
    result = clean_page(pages["http://s/7"], "s", "-:1", _model(pages, params), params)
    assert [b["removed"] for b in result.blocks] == [None, "template:list", "template:site", "template:site",
                                                      "template:list"]
    # a content list with one template-looking item keeps its items
    blocks = [("li", "Up"), ("li", "first real item"), ("li", "second real item"), ("li", "third real item")]
    result = clean_page(blocks, "s", "-:1", _model(pages, params), params)
    assert [b["removed"] for b in result.blocks] == ["template:site", None, None, None]


def test_model_is_order_independent_and_counts_not_pages() -> None:
    pages = _site(n_articles=30, n_listings=10)
    items = list(pages.items())
    reference = None
    for seed in range(5):
        random.Random(seed).shuffle(items)
        model = _model(dict(items))
        decisions = {url: [b["removed"] for b in clean_page(blocks, "site", cluster_of_url(url), model, P).blocks]
                     for url, blocks in pages.items()}
        reference = reference or decisions
        assert decisions == reference
    # memory grows with distinct blocks: the same pages again add no entries
    model = _model(pages)
    before = model.distinct_blocks()
    for url, blocks in pages.items():
        from boilerstrip.boilerplate import hash_blocks

        model.add_page("site", cluster_of_url(url), [h for _, _, h, _ in hash_blocks(blocks, P)])
    assert model.distinct_blocks() == before
    assert model.pages("site") == 2 * len(pages)


def test_remove_page_undoes_add_page() -> None:
    model = TemplateModel()
    model.add_page("s", "c", ["a", "b", "b"])
    model.add_page("s", "c", ["a"])
    model.remove_page("s", "c", ["a", "b"])
    assert model.pages("s") == 1 and model.block_pages("s", "a") == 1 and model.block_pages("s", "b") == 0


# -- page blocks -------------------------------------------------------------------------------------------
def test_page_blocks_cover_chrome_and_survive_junk() -> None:
    html = ('<html><body><div class="menu"><ul><li>Home</li><li>About</li></ul></div><p>Hello world</p>'
            '<div id="copyright">(c) 2026</div></body></html>')
    texts = [t for _, t in page_blocks(html)]
    assert "Home" in texts and "Hello world" in texts and any("2026" in t for t in texts)
    assert len(page_block_hashes(html)) == len(set(page_block_hashes(html)))
    for junk in ["", "\x00\x01\x02", "<" * 10000, "<html><body>" + "<div>" * 5000 + "deep", "x" * 20_000_001]:
        assert isinstance(page_block_hashes(junk), list)


# -- duplicates --------------------------------------------------------------------------------------------------
ARTICLE = " ".join(f"word{i % 97} token{i % 89}" for i in range(400))


def test_exact_and_near_duplicates_with_a_deterministic_keep_rule() -> None:
    params = DuplicateParams()
    pages = [
        ("http://s/a/long/path.html", ARTICLE),
        ("http://s/a.html", ARTICLE),  # same text, shorter URL: kept
        ("http://s/b.html", ARTICLE.replace("word5 ", "changed ", 1) + " and one trailing sentence"),
        ("http://s/c.html", "A different page entirely " * 30),
        ("http://s/e1", ""),
        ("http://s/e2", ""),  # empty pages are never duplicates of each other
    ]
    expected = None
    for seed in range(6):
        random.Random(seed).shuffle(pages)
        dups = find_duplicates(pages, params)
        summary = {u: (d.reason, d.of) for u, d in dups.items()}
        expected = expected or summary
        assert summary == expected
    assert expected == {
        "http://s/a/long/path.html": ("exact_duplicate", "http://s/a.html"),
        "http://s/b.html": ("near_duplicate", "http://s/a.html"),
    }


def test_near_threshold_is_respected() -> None:
    half = ARTICLE[: len(ARTICLE) // 2]
    other = half + " " + " ".join(f"other{i}" for i in range(400))
    index = DuplicateIndex(DuplicateParams())
    assert index.check_and_add("http://s/1", ARTICLE) is None
    assert index.check_and_add("http://s/2", other) is None  # ~1/3 shared: not a duplicate
    loose = DuplicateIndex(DuplicateParams(near_min_jaccard=0.2))
    loose.check_and_add("http://s/1", ARTICLE)
    dup = loose.check_and_add("http://s/2", other)
    assert dup is not None and dup.reason == "near_duplicate" and dup.of == "http://s/1"


def test_bad_params_are_refused() -> None:
    with pytest.raises(ValueError):
        BoilerplateParams(min_share_of_pages=0)
    with pytest.raises(ValueError):
        DuplicateParams(mode="sometimes")


# -- the finishing pass ---------------------------------------------------------------------------------------------
def _records(pages):
    return [{"url": url, "blocks": [{"kind": k, "text": t} for k, t in blocks], "flags": ["replacement_chars"]}
            for url, blocks in pages.items()]


def test_finish_records_is_identical_for_any_order() -> None:
    pages = _site(n_articles=25, n_listings=10)
    pages["http://site/posts/copy.html"] = pages["http://site/posts/1.html"]  # an exact duplicate page
    records = _records(pages)
    outputs = set()
    for seed in range(5):
        shuffled = list(records)
        random.Random(seed).shuffle(shuffled)
        result = finish_records(shuffled)
        outputs.add("\n".join(dump_record(r) for r in result.records))
        assert [d["url"] for d in result.dropped] == ["http://site/posts/copy.html"]
        assert result.dropped[0]["of"] == "http://site/posts/1.html"
    assert len(outputs) == 1
    out = [json.loads(line) for line in outputs.pop().split("\n")]
    assert [r["url"] for r in out] == sorted(r["url"] for r in out)
    for record in out:
        assert "Home" not in record["text"].split("\n\n") and "Related posts" not in record["text"]
        assert record["flags"][0] == "replacement_chars"  # other components' flags kept
        assert all({"kind", "text", "hash", "removed"} <= set(b) for b in record["blocks"])
        assert record["boilerplate_removed_chars"] > 0


def test_finish_records_refinishing_is_stable() -> None:
    records = _records(_site(n_articles=25, n_listings=10))
    once = finish_records(records).records
    twice = finish_records(once).records
    assert [dump_record(r) for r in once] == [dump_record(r) for r in twice]


def test_finish_records_tolerates_odd_records() -> None:
    records = _records(_site(n_articles=6, n_listings=0)) + [
        {"url": "http://site/failed", "outcome": "failed", "reason": "http_500"},
        {"no_url": True},
        {"url": "http://site/textonly.html", "text": "First paragraph\n\nSecond paragraph"},
        {"url": "http://site/weird.html", "blocks": [{"kind": None, "text": 5}, "plain string block", None]},
    ]
    result = finish_records(records)
    urls = [r.get("url") for r in result.records]
    assert "http://site/failed" in urls and None in urls
    textonly = next(r for r in result.records if r.get("url") == "http://site/textonly.html")
    assert textonly["text"] == "First paragraph\n\nSecond paragraph"


def test_finish_records_never_raises_on_junk() -> None:
    rng = random.Random(7)
    values = [None, 0, 1.5, "", "x", "http://j/a", [], {}, ["a", 1], {"kind": "p"}, [{"text": None}],
              [{"kind": "li", "text": "Home"}] * 3, "\udc80 lone", "a" * 5000, True]
    records = []
    for i in range(300):
        record = {key: rng.choice(values) for key in ("text", "blocks", "flags", "page_block_hashes", "markdown")
                  if rng.random() < 0.7}
        record["url"] = rng.choice([f"http://j/{i}", f"http://j/{i % 7}", None, 5, "", "not a url", "http://[::1"])
        records.append(record)
    result = finish_records(records)
    assert len(result.records) + len(result.dropped) <= len(records)
    for record in result.records:
        dump_record(record).encode("utf-8")  # lone surrogates repaired: the line encodes
        if isinstance(record.get("url"), str) and record["url"]:  # a page (others pass through untouched)
            assert isinstance(record["flags"], list) and isinstance(record["text"], str)


def test_streaming_finish_crawl_matches_finish_records(tmp_path) -> None:
    from boilerstrip.finishing import finish_crawl
    from boilerstrip.items import without_trail

    pages = _site(n_articles=25, n_listings=10)
    pages["http://site/posts/copy.html"] = pages["http://site/posts/1.html"]
    records = _records(pages) + [{"url": "http://site/failed", "outcome": "failed"}, {"url": "http://site/posts/1.html",
                                  "blocks": [{"kind": "p", "text": "an older version of the page"}]}]
    random.Random(3).shuffle(records)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n", encoding="utf-8")
    trailed = tmp_path / "trailed.jsonl"
    finish_crawl(src, trailed, trail=True)
    summary = finish_crawl(src, src, report_dir=tmp_path / "report")  # in place
    in_memory = finish_records(records)
    # the file holds lean records (the trail dropped as it is written); with trail=True, the records whole
    assert trailed.read_text(encoding="utf-8") == "".join(dump_record(r) + "\n" for r in in_memory.records)
    expected = "".join(dump_record(without_trail(r)) + "\n" for r in in_memory.records)
    assert src.read_text(encoding="utf-8") == expected
    assert not any({"blocks", "page_blocks", "page_block_hashes"} & set(json.loads(line)) for line in expected.splitlines())
    # the URL seen twice kept its record that sorts last (the "older version"), so the copy is not a duplicate
    assert "an older version of the page" in expected
    assert summary["invalid_lines"] == 1 and summary["dropped"] == in_memory.dropped
    assert summary["records_out"] == len(expected.splitlines())


def test_a_block_without_code_punctuation_normalises_to_the_same_tokens_as_with_the_full_pattern() -> None:
    """normalise_block reads a text with none of the code punctuation by the plain word pattern (faster):
    the tokens must be the ones the full pattern reads, on prose, code and everything between."""
    import unicodedata

    from boilerstrip.boilerplate.blocks import _DIGITS_RE, _WORD_RE, normalise_block

    pieces = ["word", "Straße", "ÉCOLE", "漢字", "x1", "42", " ", "  ", "\n", ".", ",", "!", "'", '"', "-", "--", "->",
              "::", "@", "$", "%", "(", ")", "[", "]", "{", "}", "()", "_", "|", ">", "/", "ﬁ", "①"]
    rng = random.Random(7)
    texts = ["Reliable.\nChoose a plan", "next() and --verbose", "a->b::c", "Page 3 of 12", "foo_bar baz"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    for text in texts:
        for digits in (True, False):
            folded = unicodedata.normalize("NFKC", text).casefold()
            folded = _DIGITS_RE.sub("0", folded) if digits else folded
            assert normalise_block(text, digits=digits) == " ".join(_WORD_RE.findall(folded)), repr(text)
