"""The bare-Scrapy reference of the throughput benchmark: follow same-site links, write URL and body length.

Run by ``benchmarks/crawl_benchmark.py --throughput`` with ``scrapy runspider`` from a folder without a
``scrapy.cfg`` (so none of boilerstrip's settings apply): ``-a start=URL``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import scrapy
from scrapy.linkextractors import LinkExtractor


class BareSpider(scrapy.Spider):
    name = "bare"

    def __init__(self, start: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_url = start
        # same-site is checked on host:port below: LinkExtractor's allow_domains compares the netloc, port
        # included, with a bare host name, so on a loopback server it would let no link through
        self.links = LinkExtractor()

    async def start(self):
        yield scrapy.Request(self.start_url)

    def parse(self, response):
        if not isinstance(response, scrapy.http.TextResponse):
            return
        yield {"url": response.url, "length": len(response.body)}
        host = urlsplit(self.start_url).netloc
        for link in self.links.extract_links(response):
            if urlsplit(link.url).netloc == host:
                yield response.follow(link.url, callback=self.parse)
