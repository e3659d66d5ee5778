"""Glue: the boilerplate and duplicate pipelines built from a real crawler's settings."""

from __future__ import annotations

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from boilerstrip.boilerplate import block_hash, page_block_hashes
from boilerstrip.boilerplate.blocks import piece_hash
from boilerstrip.config import ConfigError
from boilerstrip.items import PageItem
from boilerstrip.outcomes import FilteredItem
from boilerstrip.pipelines.boilerplate import CrossPageBoilerplatePipeline, PageBlocksPipeline
from boilerstrip.pipelines.duplicates import DuplicatePagesPipeline
from boilerstrip.state import MemoryState, SqliteState

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _unique(i: int) -> str:
    return " ".join(f"{LETTERS[i % 26]}{LETTERS[k]}{LETTERS[(i * 7 + k) % 26]}w" for k in range(12))


def _item(i: int) -> PageItem:
    return PageItem(
        url=f"http://site.test/posts/{LETTERS[i]}.html",
        blocks=[{"kind": "p", "text": "We use cookies. Accept all cookies"},
                {"kind": "p", "text": f"Article {_unique(i)}"},
                {"kind": "h2", "text": "Related posts"}],
    )


def _stats(crawler, name: str):
    return crawler.stats.get_value(f"boilerstrip/boilerplate/{name}")


def test_disabled_components_raise_not_configured() -> None:
    crawler = get_crawler(settings_dict={"BOILERSTRIP_BOILERPLATE_ENABLED": "false",
                                         "BOILERSTRIP_DUPLICATES_ENABLED": False})
    for cls in (PageBlocksPipeline, CrossPageBoilerplatePipeline, DuplicatePagesPipeline):
        with pytest.raises(NotConfigured):
            cls.from_crawler(crawler)


def test_bad_setting_names_the_setting() -> None:
    crawler = get_crawler(settings_dict={"BOILERSTRIP_BOILERPLATE_PARAMS": {"min_share_of_pages": "most"}})
    with pytest.raises(ConfigError, match="BOILERSTRIP_BOILERPLATE_PARAMS field min_share_of_pages"):
        CrossPageBoilerplatePipeline.from_crawler(crawler)
    crawler = get_crawler(settings_dict={"BOILERSTRIP_DUPLICATES_MODE": "sometimes"})
    with pytest.raises(ConfigError, match="BOILERSTRIP_DUPLICATES_"):
        DuplicatePagesPipeline.from_crawler(crawler)


def test_page_blocks_pipeline_hashes_the_whole_page() -> None:
    crawler = get_crawler()
    pipeline = PageBlocksPipeline.from_crawler(crawler)
    item = PageItem(url="http://s/", html="<html><body><div class=menu><li>Home</li></div><p>Text here</p></body></html>")
    pipeline.features_item(item)
    # two blocks: their two block hashes, plus what the structural model counts: a slot and a piece each
    assert len(item.page_block_hashes) == 6
    assert page_block_hashes("<p>Home</p><p>Text here</p>", blocks=[("li", "Home"), ("p", "Text here")]) == sorted(
        {block_hash("home"), block_hash("text here"), piece_hash("home"), piece_hash("text here")})
    empty = PageItem(url="http://s/2")
    pipeline.features_item(empty)
    assert empty.page_block_hashes == []
    assert _stats(crawler, "page_blocks/no_html") == 1


def test_pages_are_cleaned_with_what_the_model_knows_and_the_counts_outlive_the_run(tmp_path) -> None:
    crawler = get_crawler(settings_dict={"BOILERSTRIP_BOILERPLATE_PARAMS": {"min_pages": 5},
                                         "BOILERSTRIP_STATE_DIR": str(tmp_path / "state")})
    pipeline = CrossPageBoilerplatePipeline.from_crawler(crawler)
    pipeline.open_spider()
    items = [pipeline.process_item(_item(i)) for i in range(8)]
    pipeline.close_spider()
    # provisional: the first pages were cleaned with a cold model (the finishing pass cleans them again);
    # from the fifth page on, the site's template is known
    assert "cookies" in items[0].text
    for item in items[4:]:
        assert "cookies" not in item.text and "Related posts" not in item.text
        assert item.text.startswith("Article ")
        assert [b["removed"] for b in item.blocks] == ["template:site", None, "template:site"]
        assert item.template_cluster == "posts:2"
    # the counts were persisted: a later crawl of the same site starts warm
    state = SqliteState(tmp_path / "state")
    assert state.templates.site_counts("site.test")[0] == 8 and len(list(state.templates.urls("site.test"))) == 8
    state.close()
    crawler2 = get_crawler(settings_dict={"BOILERSTRIP_STATE_DIR": str(tmp_path / "state")})
    pipeline2 = CrossPageBoilerplatePipeline.from_crawler(crawler2)
    pipeline2.open_spider()
    item = pipeline2.process_item(_item(20))
    pipeline2.close_spider()
    assert crawler2.stats.get_value("boilerstrip/boilerplate/stored_pages_loaded") == 8
    assert item.text.startswith("Article ") and "cookies" not in item.text


def test_the_pipeline_never_waits() -> None:
    crawler = get_crawler(settings_dict={"BOILERSTRIP_STATE_DIR": ""})
    pipeline = CrossPageBoilerplatePipeline.from_crawler(crawler)
    pipeline.open_spider()
    item = pipeline.process_item(_item(0))  # a plain call: no coroutine, no hold
    pipeline.close_spider()
    assert item.text.startswith("We use cookies")  # one page: nothing is template yet, nothing removed


ARTICLE = " ".join(f"alpha{i % 50} beta{i % 37} gamma{i % 23}" for i in range(200))


@pytest.mark.parametrize("mode", ["mark", "drop", "drop+near"])
def test_duplicate_pages(mode: str) -> None:
    crawler = get_crawler(settings_dict={"BOILERSTRIP_DUPLICATES_MODE": mode.split("+")[0],
                                         "BOILERSTRIP_DUPLICATES_DROP_NEAR": mode.endswith("+near")})
    pipeline = DuplicatePagesPipeline.from_crawler(crawler)
    pipeline.open_spider()
    first = pipeline.process_item(PageItem(url="http://s/a", text=ARTICLE, flags=["boilerplate_removed_most"]))
    assert first.duplicate_of is None
    exact = PageItem(url="http://s/b", text=ARTICLE.upper(), flags=["boilerplate_removed_most"])
    near = PageItem(url="http://s/c", text=ARTICLE + " plus a short line at the end")
    other = PageItem(url="http://s/d", text="Something else altogether " * 20)
    if mode == "drop":
        with pytest.raises(FilteredItem) as caught:
            pipeline.process_item(exact)
        assert (caught.value.reason, caught.value.detail) == ("exact_duplicate", "http://s/a")
        # a near duplicate is a page of its own: kept and marked, unless drop_near
        assert pipeline.process_item(near).duplicate_of == "http://s/a"
        assert 0.9 <= near.duplicate_similarity < 1.0
    elif mode == "drop+near":
        with pytest.raises(FilteredItem) as caught:
            pipeline.process_item(exact)
        with pytest.raises(FilteredItem) as caught:
            pipeline.process_item(near)
        assert (caught.value.reason, caught.value.detail) == ("near_duplicate", "http://s/a")
        assert crawler.stats.get_value("boilerstrip/duplicates/dropped/near_duplicate") == 1
    else:
        assert pipeline.process_item(exact).duplicate_of == "http://s/a"
        assert exact.flags == ["boilerplate_removed_most", "exact_duplicate"]
        assert pipeline.process_item(near).duplicate_of == "http://s/a"
        assert near.flags == ["near_duplicate"]
        assert crawler.stats.get_value("boilerstrip/duplicates/exact_duplicate") == 1
    assert pipeline.process_item(other).duplicate_of is None


def test_page_source_cleans_every_block_of_the_page() -> None:
    """source=page (BOILERSTRIP_BOILERPLATE_PARAMS): the page's own blocks replace the extractor's, minus template."""
    crawler = get_crawler(settings_dict={"BOILERSTRIP_BOILERPLATE_PARAMS": {"source": "page"},
                                         "BOILERSTRIP_STATE_DIR": "",
                                         })
    blocks_stage = PageBlocksPipeline.from_crawler(crawler)
    pipeline = CrossPageBoilerplatePipeline.from_crawler(crawler)
    pipeline.open_spider()
    items = []
    for i in range(6):
        html = (f"<html><body><div class=top><p>Workshop menu: tools, notes, hours</p></div>"
                f"<div class=main><h1>Note {_unique(i)[:8]}</h1><p>{_unique(i)}</p><p>{_unique(i + 30)}</p></div>"
                f"<div class=legal><p>All rights reserved by the workshop</p></div></body></html>")
        # the extractor kept only the first paragraph (a recall miss the page source repairs)
        item = PageItem(url=f"http://site.test/n/{i}.html", html=html, blocks=[{"kind": "p", "text": _unique(i)}],
                        method="density")
        blocks_stage.features_item(item)
        assert item.page_blocks and len(item.page_blocks) == 5
        items.append(pipeline.process_item(item))
    pipeline.close_spider()
    last = items[-1]
    assert last.method == "crosspage" and last.page_blocks is None
    assert last.text.split("\n\n") == [f"Note {_unique(5)[:8]}", _unique(5), _unique(35)]
    assert [b["removed"] for b in last.blocks] == ["template:site", None, None, None, "template:site"]
    assert crawler.stats.get_value("boilerstrip/boilerplate/source/page") == 6


def test_auto_source_takes_the_wider_region_and_keeps_both_block_lists() -> None:
    """source=auto (the default of BOILERSTRIP_BOILERPLATE_PARAMS): once the model is ready, a page whose extracted text
    is part of a larger non-template region gets the region's text, flagged; the record keeps both lists."""
    crawler = get_crawler(settings_dict={"BOILERSTRIP_STATE_DIR": "",
                                         })
    blocks_stage = PageBlocksPipeline.from_crawler(crawler)
    pipeline = CrossPageBoilerplatePipeline.from_crawler(crawler)
    assert pipeline.params.source == "auto"
    pipeline.open_spider()
    items = []
    accepted = [{"method": "density", "accepted": True, "chars": 100, "reason": "accepted"}]
    for i in range(7):
        html = (f"<html><body><div class=top><p>Workshop menu: tools, notes, hours</p></div>"
                f"<div class=main><h2>Note {_unique(i)[:8]}</h2><p>{_unique(i)}</p><p>{_unique(i + 30)}</p>"
                f"<div class=comments><p>First comment {_unique(i + 60)}</p></div></div>"
                f"<footer><p>All rights reserved by the workshop</p></footer></body></html>")
        item = PageItem(url=f"http://site.test/n/{i}.html", html=html, blocks=[{"kind": "p", "text": _unique(i)}],
                        method="density", attempts=accepted)
        blocks_stage.features_item(item)
        assert [b.get("furniture") for b in item.page_blocks] == [None, None, None, None, "comments"]
        items.append(pipeline.process_item(item))
    pipeline.close_spider()
    first, last = items[0], items[-1]
    assert first.text == _unique(0) and not first.flags  # the model had one page: nothing to go on
    assert last.text.split("\n\n") == [f"Note {_unique(6)[:8]}", _unique(6), _unique(36)]
    assert last.flags == ["boilerplate_source_page_wider_region"] and last.method == "density"
    assert [b["text"] for b in last.blocks] == [_unique(6)] and len(last.page_blocks) == 5
    assert [b["removed"] for b in last.page_blocks] == ["template:site", None, None, None, "region:comments"]
    assert crawler.stats.get_value("boilerstrip/boilerplate/source/page/wider_region") >= 2
    assert crawler.stats.get_value("boilerstrip/boilerplate/source/extracted/model_not_ready") == 4


def test_auto_carries_the_headline_and_counts_it() -> None:
    """The heading that repeats the item's title leads the text whichever source wins, never flips it
    alone, and is counted under ``source/headline``."""
    crawler = get_crawler(settings_dict={"BOILERSTRIP_STATE_DIR": "",
                                         })
    blocks_stage = PageBlocksPipeline.from_crawler(crawler)
    pipeline = CrossPageBoilerplatePipeline.from_crawler(crawler)
    pipeline.open_spider()
    accepted = [{"method": "density", "accepted": True, "chars": 100, "reason": "accepted"}]
    items = []
    for i in range(7):
        html = (f"<html><body><div class=top><p>Workshop menu: tools, notes, hours</p></div>"
                f"<div class=main><h2>Note {_unique(i)[:8]}</h2><p>{_unique(i)}</p></div>"
                f"<footer><p>All rights reserved by the workshop</p></footer></body></html>")
        item = PageItem(url=f"http://site.test/n/{i}.html", html=html, title=f"Note {_unique(i)[:8]} | Workshop",
                        blocks=[{"kind": "p", "text": _unique(i)}], method="density", attempts=accepted)
        blocks_stage.features_item(item)
        items.append(pipeline.process_item(item))
    pipeline.close_spider()
    for item in items:
        assert item.text.split("\n\n") == [f"Note {_unique(int(item.url[-6]))[:8]}", _unique(int(item.url[-6]))]
        assert not item.flags and [b["text"] for b in item.blocks] == [_unique(int(item.url[-6]))]
    assert crawler.stats.get_value("boilerstrip/boilerplate/source/headline") == 7
    assert crawler.stats.get_value("boilerstrip/boilerplate/source/extracted/extracted_covers_region") == 3
    assert crawler.stats.get_value("boilerstrip/boilerplate/source/extracted/model_not_ready") == 4


def test_a_shared_state_lends_the_pipeline_what_other_workers_learned() -> None:
    state = MemoryState()
    crawler = get_crawler(settings_dict={"BOILERSTRIP_BOILERPLATE_PARAMS": {"min_pages": 5, "state_refresh_pages": 2}})
    pipeline = CrossPageBoilerplatePipeline.from_crawler(crawler)
    pipeline._state_arg = state
    pipeline.open_spider()
    first = pipeline.process_item(_item(0))
    assert "cookies" in first.text  # alone, this worker knows one page
    other = CrossPageBoilerplatePipeline(pipeline.params, state=MemoryState())  # another worker's hashes
    for i in range(1, 9):
        state.templates.put_page("site.test", f"http://site.test/posts/w{i}.html", "posts:2",
                                 other._hashes_of(_item(i)))
    pipeline.process_item(_item(10))  # the second page of the site: the next one reloads the counts
    item = pipeline.process_item(_item(11))
    pipeline.close_spider()
    assert "cookies" not in item.text and item.text.startswith("Article ")
    assert crawler.stats.get_value("boilerstrip/boilerplate/state_reloads") == 1
