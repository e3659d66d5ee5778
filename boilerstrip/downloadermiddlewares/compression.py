"""Content-Encoding with bounded memory, and no half page kept as a whole one.

Replaces Scrapy's ``HttpCompressionMiddleware`` (same place, 590) around the pure
:func:`boilerstrip.safety.compression.decode_content`:

- a body that decodes past ``DOWNLOAD_MAXSIZE`` (or meta ``download_maxsize``) is refused with
  ``filtered:decompressed_too_large`` after at most that many bytes, all freed at once;
- a truncated stream (ended before its end marker, whatever the Content-Length said) or a corrupt one (bad
  data, wrong CRC) is retried as Scrapy retries a lost connection (``RETRY_TIMES``, stat
  ``retry/reason_count/data_loss``), then fails as ``failed:data_loss``; with
  ``keep_partial`` of ``BOILERSTRIP_COMPRESSION_PARAMS`` (or meta ``boilerstrip_keep_partial``) the decoded part is kept
  instead, its record flagged ``partial_body:<encoding>_<truncated|corrupt>``. The same setting lets Scrapy's
  own data-loss check (a body shorter than its Content-Length) keep the part, flagged
  ``partial_body:dataloss``.
"""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass
from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.retry import get_retry_request
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse
from scrapy.responsetypes import responsetypes

from boilerstrip.config import params_from_settings
from boilerstrip.outcomes import Filtered
from boilerstrip.safety.compression import DECODERS, DecompressedTooLarge, decode_content
from boilerstrip.meta import BODY_FLAGS_META

__all__ = ["CompressionParams", "DecompressionMiddleware", "BodyDataLoss", "KEEP_PARTIAL_META"]

logger = logging.getLogger(__name__)

#: meta: keep a partial body (flagged) instead of retrying and failing it; beats the setting
KEEP_PARTIAL_META = "boilerstrip_keep_partial"
ACCEPT_ENCODING = b", ".join(name.encode() for name in DECODERS if name != "x-gzip")


class BodyDataLoss(Exception):
    """A body whose compressed stream was cut short or corrupt, after its retries."""

    refusal_reason = "data_loss"


@dataclass(frozen=True)
class CompressionParams:
    # Keep what decoded before a truncated/corrupt stream (flagged) instead of retrying and failing the page.
    # Off: a half page that looks whole is worse than a recorded failure that --resume can fetch again.
    keep_partial: bool = False


class DecompressionMiddleware:
    def __init__(self, params: CompressionParams, max_size: int = 0, crawler: Any = None) -> None:
        self.params = params
        self.max_size = max_size
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "DecompressionMiddleware":
        settings = crawler.settings
        if not settings.getbool("COMPRESSION_ENABLED", True):  # Scrapy's switch, the one knob for decoding
            raise NotConfigured("COMPRESSION_ENABLED is off")
        params = params_from_settings(settings, "compression", CompressionParams)
        return cls(params, settings.getint("DOWNLOAD_MAXSIZE"), crawler)

    def _keep_partial(self, request: Request) -> bool:
        value = request.meta.get(KEEP_PARTIAL_META)
        return self.params.keep_partial if value is None else bool(value)

    def process_request(self, request: Request) -> None:
        request.headers.setdefault("Accept-Encoding", ACCEPT_ENCODING)
        if self._keep_partial(request):
            request.meta.setdefault("download_fail_on_dataloss", False)  # Scrapy then flags it "dataloss"
        return None

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if "dataloss" in response.flags:
            _flag(request, "partial_body:dataloss")
        encodings = response.headers.getlist("Content-Encoding")
        if request.method == "HEAD" or not encodings:
            return response
        max_size = request.meta.get("download_maxsize", self.max_size)
        refused = None
        try:
            decoded = decode_content(response.body, [e.decode("latin-1") for e in encodings], max_size)
        except DecompressedTooLarge as exc:
            refused = (str(exc), exc.decompressed)
        if refused is not None:
            # raised here, not in the except clause: as its __context__ the decoder's error would keep the
            # decoder's frame, and the body decoded so far, alive until the cycle collector runs
            self._inc("too_large")
            logger.warning("%s: %d B compressed, refused at %d B decompressed (DOWNLOAD_MAXSIZE)", response.url, len(response.body), refused[1])
            # The refused responses before this one (their compressed bodies)
            # live on in reference cycles of their failures' tracebacks until the cycle collector runs;
            # forty bombs kept ~18 MiB that way (issue 30): collected now, once per refused bomb (tens of
            # milliseconds, beside the hundreds a bomb costs to decode up to the cap)
            gc.collect()
            raise Filtered("decompressed_too_large", refused[0])
        if decoded.problem is not None:
            what = f"{decoded.encoding}_{decoded.problem}"
            self._inc(f"problem/{what}")
            if self._keep_partial(request):
                _flag(request, f"partial_body:{what}")
            else:
                retry = get_retry_request(request, spider=self.crawler.spider, reason="data_loss")
                if retry is not None:
                    return retry
                raise BodyDataLoss(f"{what}: {len(response.body)} B received, {len(decoded.body)} B decoded")
        if self.crawler is not None:
            self.crawler.stats.inc_value("httpcompression/response_bytes", len(decoded.body))
            self.crawler.stats.inc_value("httpcompression/response_count")
        headers = response.headers.copy()
        if decoded.remaining:
            headers[b"Content-Encoding"] = [e.encode() for e in decoded.remaining]
        else:
            del headers[b"Content-Encoding"]
        cls = responsetypes.from_args(headers=headers, url=response.url, body=decoded.body)
        kwargs: dict[str, Any] = {"body": decoded.body, "headers": headers, "cls": cls}
        if issubclass(cls, TextResponse):
            kwargs["encoding"] = None  # sniff again from the decoded body, as Scrapy does
        return response.replace(**kwargs)

    def _inc(self, key: str) -> None:
        if self.crawler is not None:
            self.crawler.stats.inc_value(f"boilerstrip/compression/{key}")


def _flag(request: Request, flag: str) -> None:
    flags = request.meta.setdefault(BODY_FLAGS_META, [])
    if flag not in flags:
        flags.append(flag)
