"""A pipeline stage that fails on one page (for the dead-letter test; loaded by the crawl subprocess)."""

from __future__ import annotations

from itemadapter import ItemAdapter


class FailOnPage3:
    def process_item(self, item):
        if ItemAdapter(item).get("url", "").endswith("/p3"):
            raise RuntimeError("stage exploded on this page")
        return item


class SettleTwice:
    """An extension that reports an already-scraped page as filtered too: a ledger mismatch on purpose."""

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        from scrapy import signals

        ext = cls(crawler)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        return ext

    def item_scraped(self, item, response=None, spider=None):
        from boilerstrip.outcomes import report_filtered

        if ItemAdapter(item).get("url", "").endswith("/p2"):
            report_filtered(self.crawler, response.request, "bogus_second_outcome")
