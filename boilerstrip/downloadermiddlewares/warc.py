"""``boilerstrip crawl --warc DIR``: every HTTP exchange of the crawl as WARC/1.1 records.

A thin adapter around :class:`boilerstrip.warc.WarcWriter`. Registered at 960, the downloader side of every
other middleware, so ``process_response`` sees each response as the download handler returned it: the
body still content-encoded (the decoder is at 590), a 304 before the conditional middleware (558) swaps in
the stored copy. Each exchange is a ``response`` record and the ``request`` that got it; a 304 to a
conditional request is a ``revisit`` (server-not-modified profile); a page the browser rendered is a
``metadata`` record holding the rendered HTML (``WARC-Refers-To`` the static response when there was one).

When the spider opens, ``.open`` files a crashed run left in DIR are cut to their last whole record and
renamed (logged, and counted under ``boilerstrip/warc/recovered_*``). A write error (a full disk) is logged,
the file is cut back to its last whole record, and the crawl stops as ``write_error``, as it does when the
JSONL output cannot be written.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured

from boilerstrip.config import params_from_settings
from boilerstrip.warc import WarcParams, WarcWriter, http_request_block, http_response_block, recover_open_files
from boilerstrip.warc.write import sha1_digest

__all__ = ["WarcWriterMiddleware", "STATS"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/warc"
#: static responses remembered for the rendered version that may follow (URL -> record ID), at most this many
_PENDING_RENDERS = 10000


#: request headers whose value a WARC file does not keep: credentials (a start URL's user:password@ becomes
#: HTTP basic authentication, -s DEFAULT_REQUEST_HEADERS may carry a token); the header stays, so a reader
#: sees that the request was authenticated
_REDACTED = frozenset(("authorization", "proxy-authorization"))
REDACTED_VALUE = "[redacted by boilerstrip]"


def _headers(headers: Any, redact: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, values in headers.items():
        key = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        redacted = key.lower() in redact
        for value in values if isinstance(values, (list, tuple)) else [values]:
            text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            out.append((key, REDACTED_VALUE if redacted else text))
    return out


class WarcWriterMiddleware:
    def __init__(self, params: WarcParams, stats: Any = None, software: str = "boilerstrip") -> None:
        self.params = params
        self.stats = stats
        self.software = software
        self.crawler: Any = None
        self.writer: WarcWriter | None = None
        self._static: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WarcWriterMiddleware":
        params = params_from_settings(crawler.settings, "warc", WarcParams)
        if not params.dir:
            # off unless asked for (crawl --warc DIR): without a message, Scrapy disables it silently; with one it
            # logged a WARNING on every crawl that did not ask for a WARC
            raise NotConfigured
        middleware = cls(params, stats=crawler.stats, software=str(crawler.settings.get("USER_AGENT") or "boilerstrip"))
        middleware.crawler = crawler
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def spider_opened(self) -> None:
        for recovered in recover_open_files(self.params.dir):
            logger.warning("warc: %s was left open by an interrupted run: kept its %d whole records, cut %d bytes "
                           "of a torn one", recovered.path, recovered.records, recovered.cut_bytes)
            self._inc("recovered_files")
            self._inc("recovered_cut_bytes", recovered.cut_bytes)
        self.writer = WarcWriter(self.params, software=self.software)

    def spider_closed(self) -> None:
        if self.writer is None:
            return
        self.writer.close()
        if self.stats is not None:
            self.stats.set_value(f"{STATS}/files", len(self.writer.files))
            self.stats.set_value(f"{STATS}/dir", self.params.dir)
        logger.info("warc: %d records in %d files in %s", self.writer.records, len(self.writer.files), self.params.dir)

    # -- responses -----------------------------------------------------------------------------------------
    def process_response(self, request: Any, response: Any) -> Any:
        writer = self.writer
        if writer is None or writer.failed is not None:
            return response
        try:
            self._record(writer, request, response)
        except OSError as exc:
            self._write_failed(exc)
        return response

    def _record(self, writer: WarcWriter, request: Any, response: Any) -> None:
        url = request.url
        if request.meta.get("playwright"):  # the browser's DOM: what was rendered, not an HTTP payload
            body = response.body
            extra = [("WARC-Refers-To", self._static.pop(url))] if url in self._static else []
            writer.write("metadata", url, body, "text/html; charset=utf-8",
                         [*extra, ("WARC-Payload-Digest", sha1_digest(body)), ("WARC-Boilerstrip-Rendered", "browser")])
            self._inc("records/metadata")
            return
        parts = urlsplit(url)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        request_headers = [("Host", parts.netloc), *_headers(request.headers, _REDACTED)]
        request_block = http_request_block(request.method, path, request_headers, request.body or b"")
        protocol = getattr(response, "protocol", None) or "HTTP/1.1"
        response_block = http_response_block(response.status, _headers(response.headers), response.body,
                                             protocol=protocol)
        revisit = None
        if response.status == 304 and (b"If-None-Match" in request.headers or b"If-Modified-Since" in request.headers):
            revisit = (url, "")
        record_id = writer.write_exchange(url, request_block, response_block, response.body, revisit_of=revisit,
                                          ip=str(response.ip_address) if response.ip_address else None)
        self._inc("records/revisit" if revisit else "records/response")
        if revisit is None:
            self._static.pop(url, None)
            self._static[url] = record_id
            if len(self._static) > _PENDING_RENDERS:  # the oldest: its page was not rendered
                del self._static[next(iter(self._static))]

    def _write_failed(self, exc: OSError) -> None:
        self._inc("write_errors")
        logger.error("warc: cannot write %s (%s): stopping the crawl; its files keep every whole record",
                     self.writer.current_file if self.writer else self.params.dir, exc)
        engine = getattr(self.crawler, "engine", None) if self.crawler is not None else None
        if engine is not None:
            from scrapy.utils.defer import deferred_from_coro

            deferred_from_coro(engine.close_spider_async(reason="write_error"))

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(f"{STATS}/{key}", count)
