"""The download handler of a WARC replay (``boilerstrip warc``): answers each request with the response
recorded in the WARC, so the crawl's middlewares, pipelines, ledger and finishing pass run unchanged.

A request of the replay spider carries its record's place (``boilerstrip_warc_entry``); any other request
(robots.txt, tdmrep.json) is answered from the first readable response recorded for its URL, or with a
404 when the WARC holds none (as a site without the file would). Nothing goes to the network. A record
that cannot be replayed fails the request with a reason the spider's errback records
(``failed:warc_not_http``, ``failed:warc_unreadable``).
"""

from __future__ import annotations

from typing import Any

from scrapy.http import Headers, Response
from scrapy.responsetypes import responsetypes

from boilerstrip.meta import WARC_ENTRY_META
from boilerstrip.warc import IndexedEntry, NotHttp, WarcReadParams, parse_http_response, read_record

__all__ = ["WarcReplayHandler", "ReplayError"]


class ReplayError(Exception):
    """A record that cannot be replayed; ``refusal_reason`` is what the ledger records."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.refusal_reason = reason


class WarcReplayHandler:
    lazy = False

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.params = WarcReadParams()

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WarcReplayHandler":
        return cls(crawler)

    async def download_request(self, request: Any) -> Response:
        entry: IndexedEntry | None = request.meta.get(WARC_ENTRY_META)
        if entry is None:
            index = getattr(self.crawler.spider, "warc_index", None)
            entry = index.response_for(request.url) if index is not None else None
            if entry is None:
                return Response(request.url, status=404, body=b"", request=request)
        return self.response_of(request, entry)

    def response_of(self, request: Any, entry: IndexedEntry) -> Response:
        try:
            record = read_record(entry.as_entry(), self.params)
        except (OSError, ValueError) as exc:
            raise ReplayError("warc_unreadable", f"{entry.file}@{entry.offset}: {exc}") from None
        try:
            http = parse_http_response(record.block)
        except NotHttp as exc:
            raise ReplayError("warc_not_http", str(exc)) from None
        headers = Headers()
        for name, value in http.headers:
            if name.lower() == "content-length" and http.notes:  # dechunked: the length is the payload's now
                continue
            headers.appendlist(name, value)
        if http.notes:
            headers["Content-Length"] = str(len(http.body))
        if self.crawler.stats is not None:
            for note in http.notes:
                self.crawler.stats.inc_value(f"boilerstrip/warc/replay/{note}")
        cls = responsetypes.from_args(headers=headers, url=request.url, body=http.body)
        return cls(url=request.url, status=http.status, headers=headers, body=http.body, request=request,
                   protocol=http.protocol)

    async def close(self) -> None:
        pass
