"""How every admitted URL ends: as one record, filtered with a reason, or failed with a reason.

This is the shared vocabulary of the Scrapy glue. Components never drop a request or an item silently:

- a downloader middleware that refuses a request raises :class:`Filtered` (an ``IgnoreRequest``) with a
  short machine-readable reason (``robots_disallowed``, ``private_address``...);
- a spider middleware that drops an outgoing request calls :func:`report_filtered`;
- a pipeline that drops an item raises :class:`FilteredItem` (a ``DropItem``) with a reason, or
  :class:`FailedItem` when the page could not be processed (``extraction_budget``);
- the spider's errback turns any other failure into :func:`report_failed` with :func:`failure_reason`.

The ledger extension listens to :data:`url_settled` and to Scrapy's item signals and reconciles the
counts at the end of the run.
"""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import DropItem, IgnoreRequest

__all__ = [
    "url_settled",
    "Filtered",
    "HostDown",
    "CrawlStopping",
    "crawl_stopping",
    "FilteredItem",
    "FailedItem",
    "report_filtered",
    "report_failed",
    "failure_reason",
]

#: signal: url_settled(url: str, outcome: "filtered" | "failed", reason: str, detail: str, request)
url_settled = object()


class Filtered(IgnoreRequest):
    """A request refused on purpose; ``reason`` is short and machine-readable."""

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"filtered:{reason}" + (f" ({detail})" if detail else ""))


class HostDown(Exception):
    """A request to a host given up for this crawl (it gave nothing but failures for minutes: the politeness
    middleware's ``host_down_after_s``): the page fails at once, reason ``host_down``, the message says why."""

    #: what :func:`failure_reason` reads off the exception
    refusal_reason = "host_down"


class CrawlStopping(IgnoreRequest):
    """A request a component held (a host's pause, a robots.txt retry) let go because the crawl is stopping
    (Ctrl-C, SIGTERM): it is not settled, the ledger lists it as not settled yet and ``--resume`` fetches it.
    Before, a graceful stop waited out the hold: a minute for an unreachable robots.txt, minutes for a pause."""


#: the name of the spider that replays WARC files (``boilerstrip.spiders.warc``)
WARC_REPLAY_SPIDER = "warc"


def is_warc_replay(crawler: Any) -> bool:
    """Does ``crawler`` replay WARC files (``boilerstrip warc``)? Such a run has no start URL to check and
    no ``--resume``: what a crawl's messages advise is not what a replay's say."""
    return getattr(getattr(crawler, "spidercls", None), "name", None) == WARC_REPLAY_SPIDER


def crawl_stopping(crawler: Any) -> bool:
    """Has a stop of ``crawler`` begun (``Crawler.crawling`` false, or its engine no longer running)?"""
    if crawler is None:
        return False
    engine = getattr(crawler, "engine", None)
    return not getattr(crawler, "crawling", True) or (engine is not None and not getattr(engine, "running", True))


class FilteredItem(DropItem):
    """An item dropped on purpose (a duplicate page, say); ``reason`` is short and machine-readable."""

    #: the ledger outcome of the drop (:func:`boilerstrip.ledger.dropped_outcome` reads it)
    outcome = "filtered"

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"filtered:{reason}" + (f" ({detail})" if detail else ""))


class FailedItem(FilteredItem):
    """An item that could not be processed (a page over the extraction budget): the ledger records it as
    ``failed:<reason>``, the crawl goes on."""

    outcome = "failed"


def _send(crawler: Any, url: str, outcome: str, reason: str, detail: str, request: Any) -> None:
    crawler.stats.inc_value(f"boilerstrip/{outcome}/{reason}")
    crawler.signals.send_catch_log(
        url_settled, url=url, outcome=outcome, reason=reason, detail=detail, request=request
    )


def report_filtered(crawler: Any, request: Any, reason: str, detail: str = "") -> None:
    """Record that ``request`` (a Request or a URL string) was filtered and will not be fetched."""
    url = request if isinstance(request, str) else request.url
    _send(crawler, url, "filtered", reason, detail, None if isinstance(request, str) else request)


def report_failed(crawler: Any, request: Any, reason: str, detail: str = "") -> None:
    """Record that fetching ``request`` failed for good (after retries)."""
    url = request if isinstance(request, str) else request.url
    _send(crawler, url, "failed", reason, detail, None if isinstance(request, str) else request)


def failure_reason(failure: Any) -> str:
    """A short reason for a Twisted failure or exception: ``http_503``, ``timeout``, ``dns_not_found``..."""
    exc = getattr(failure, "value", failure)
    if isinstance(exc, (Filtered, FilteredItem)):
        return exc.reason
    response = getattr(exc, "response", None)
    if response is not None and getattr(response, "status", None):
        return f"http_{response.status}"
    # a refusal raised below Scrapy's wrapping (the scope resolver's PrivateAddressRefused) keeps its refusal_reason
    cause = exc
    for _ in range(4):
        if cause is None:
            break
        tagged = getattr(cause, "refusal_reason", None)
        if isinstance(tagged, str):
            return tagged
        cause = cause.__cause__ or cause.__context__
    if _tls_failed(exc):
        return "tls_error"  # no TLS handshake: a server that speaks plain HTTP on that port, or no TLS it shares
    message = str(exc)
    name = type(exc).__name__
    if name == "DownloadCancelledError" and "max size" in message:
        return "response_too_large"  # DOWNLOAD_MAXSIZE: declared or received body too large
    if name == "IgnoreRequest" and "during decompression" in message:
        return "decompressed_too_large"  # a decompression bomb stopped at DOWNLOAD_MAXSIZE
    if name == "IgnoreRequest" and "max redirections" in message:
        return "too_many_redirects"  # REDIRECT_MAX_TIMES
    if name in ("CannotResolveHostError", "DNSLookupError"):
        # a lookup that took longer than DNS_TIMEOUT (a dead name server) is not a name that does not exist
        return "dns_timeout" if "timeout error" in message else "dns_not_found"
    known = {
        "DownloadTimeoutError": "timeout",
        "DownloadConnectionRefusedError": "connection_refused",
        "ResponseDataLossError": "data_loss",
        "DownloadFailedError": "response_failed",
        "DownloadCancelledError": "cancelled",
        "TimeoutError": "timeout",
        "TCPTimedOutError": "timeout",
        "ConnectionRefusedError": "connection_refused",
        "ConnectionLost": "connection_lost",
        "ConnectionDone": "connection_lost",
        "ResponseNeverReceived": "no_response",
        "ResponseFailed": "response_failed",
        "IgnoreRequest": "ignored",
    }
    return known.get(name, name.lower())


def _tls_failed(exc: Any) -> bool:
    """Did the download fail in the TLS handshake (an ``OpenSSL.SSL.Error`` among the reasons Twisted's HTTP
    client gives, under Scrapy's ``DownloadFailedError``)?"""
    cause = exc
    for _ in range(4):
        if cause is None:
            return False
        for reason in getattr(cause, "reasons", None) or ():
            kind = getattr(reason, "type", None)
            if kind is not None and getattr(kind, "__module__", "").startswith("OpenSSL"):
                return True
        cause = cause.__cause__ or cause.__context__
    return False
