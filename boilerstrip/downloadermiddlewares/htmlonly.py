"""Skip non-HTML pages by Content-Type, before their body is downloaded.

On ``headers_received`` a page request (``meta["boilerstrip_kind"]`` absent or ``"page"``) whose
successful response declares a non-HTML Content-Type (a PDF, an image, a zip) stops its download; in
``process_response`` such a response is refused with ``Filtered("not_html")`` so the spider's errback
records it. A response without Content-Type goes on: Scrapy sniffs the body and the spider checks again.
A body that *says* HTML but is binary (a PDF served as ``text/html``) is caught by the spider with
:func:`sniff_not_html` on the decoded body (this middleware sees it still compressed), also ``not_html``.
Registered at 950 so its ``process_response`` runs before any other middleware looks at the body.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured, StopDownload
from scrapy.http import Response

from boilerstrip.config import component_enabled
from boilerstrip.outcomes import Filtered

__all__ = ["HtmlOnlyMiddleware", "is_html_content_type", "sniff_not_html", "HTML_CONTENT_TYPES"]

#: media types that are pages we extract from
HTML_CONTENT_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: what a body starting with these bytes is, whatever its Content-Type says (the WHATWG MIME sniffing table)
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"RIFF", "application/octet-stream"),  # webp, wav, avi
    (b"\x1f\x8b\x08", "application/gzip"),  # a gzip file (not a Content-Encoding: that is decoded first)
    (b"\x7fELF", "application/x-executable"),
    (b"\xd0\xcf\x11\xe0", "application/msword"),  # OLE2: .doc, .xls
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
)
_UTF_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
#: bytes that never occur in text (NUL and the C0 controls but TAB, LF, FF, CR, ESC)
_BINARY_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))
#: how much of the body the sniffer reads (the WHATWG algorithm reads 1445 bytes)
SNIFF_BYTES = 1445
#: share of binary bytes in that window above which the body is binary: random bytes have ~0.11, HTML ~0
#: (a page with a stray NUL or a short run of UTF-16 stays a page, as the extractor's own 0.08 rule says)
MAX_BINARY_BYTE_RATIO = 0.08


def sniff_not_html(body: bytes, encoding: str | None = None) -> str | None:
    """The media type a body declared as HTML really has when it is binary (a PDF, an image, an archive,
    or mostly binary bytes in its first 1445), else None. Pure. A page in UTF-16/32 (BOM or ``encoding``)
    is text whatever its NULs."""
    head = body[:SNIFF_BYTES].lstrip(b" \t\r\n")
    for magic, media in _MAGIC:
        if head.startswith(magic):
            return media
    if head.startswith(_UTF_BOMS) or (encoding or "").lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        return None
    odd = sum(head.count(bytes((b,))) for b in _BINARY_BYTES)
    if head and odd > MAX_BINARY_BYTE_RATIO * len(head):
        return "application/octet-stream"
    return None


def is_html_content_type(value: bytes | str | None) -> bool | None:
    """True/False for a declared Content-Type; None when there is none (let the body decide)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1", errors="replace")
    media = value.split(";", 1)[0].strip().lower()
    if not media:
        return None
    return media in HTML_CONTENT_TYPES


def _is_page(request: Request) -> bool:
    return request.meta.get("boilerstrip_kind", "page") == "page"


class HtmlOnlyMiddleware:
    def __init__(self, crawler: Any = None) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "HtmlOnlyMiddleware":
        if not component_enabled(crawler.settings, "htmlonly"):
            raise NotConfigured("BOILERSTRIP_HTMLONLY_ENABLED is false")
        mw = cls(crawler)
        crawler.signals.connect(mw._headers_received, signal=signals.headers_received)
        return mw

    def _headers_received(self, headers: Any, body_length: int, request: Request) -> None:
        if not _is_page(request):
            return
        if is_html_content_type(headers.get(b"Content-Type")) is False:
            raise StopDownload(fail=False)  # the response arrives with an empty body and this flag

    def process_response(self, request: Request, response: Response) -> Response:
        if not _is_page(request) or not 200 <= response.status < 300:
            return response
        declared = response.headers.get(b"Content-Type")
        if is_html_content_type(declared) is False:
            media = declared.decode("latin-1", errors="replace").split(";", 1)[0].strip().lower()
            self.crawler.stats.inc_value("boilerstrip/htmlonly/skipped")
            raise Filtered("not_html", media)
        return response
