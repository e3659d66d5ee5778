"""Components the round-2 hostile tests load into a crawl subprocess (PYTHONPATH=tests)."""

from __future__ import annotations

from urllib.parse import urlsplit

from itemadapter import ItemAdapter


class FailOnHome:
    """A pipeline stage that fails on the start page: the run's first outcome is a dead letter, before
    the feed has exported (and opened its file for) a single record."""

    def process_item(self, item):
        if urlsplit(ItemAdapter(item).get("url") or "").path == "/":
            raise RuntimeError("stage exploded on the start page")
        return item
