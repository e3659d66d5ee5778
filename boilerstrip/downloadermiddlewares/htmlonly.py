"""Skip non-HTML pages by Content-Type, before their body is downloaded.

On ``headers_received`` a page request (``meta["boilerstrip_kind"]`` absent or ``"page"``) whose
successful response declares a non-HTML Content-Type (a PDF, an image, a zip) stops its download; in
``process_response`` such a response is refused with ``Filtered("not_html")`` so the spider's errback
records it. A response without Content-Type goes on: Scrapy sniffs the body and the spider checks again.
A body that *says* HTML but is binary (a PDF served as ``text/html``) is caught by the spider with
:func:`sniff_not_html` on the decoded body (this middleware sees it still compressed), also ``not_html``.
Registered at 950 so its ``process_response`` runs before any other middleware looks at the body. A start
URL's XML or gzip body is let through: the spider reads a start URL that is a sitemap as one.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured, StopDownload
from scrapy.http import Response

from boilerstrip.config import component_enabled
from boilerstrip.outcomes import Filtered
from boilerstrip.safety.sniff import is_html_content_type
from boilerstrip.meta import KIND_META

__all__ = ["HtmlOnlyMiddleware"]

def _is_page(request: Request) -> bool:
    return request.meta.get(KIND_META, "page") == "page"


#: media types a start URL that is a sitemap comes as (XML, or a .xml.gz): such a start URL's body is
#: downloaded and the spider reads it as a sitemap when it is one (else it is not_html there)
_SITEMAP_MEDIA = ("xml", "gzip", "octet-stream")


def _skipped(request: Request, declared: Any) -> bool:
    """Is a page's declared Content-Type one whose body is not wanted: not HTML, and not what a start URL
    that is a sitemap comes as."""
    if is_html_content_type(declared) is not False:
        return False
    if request.meta.get("depth", 0) == 0:
        media = (declared or b"").decode("latin-1", errors="replace").split(";", 1)[0].strip().lower()
        return not any(word in media for word in _SITEMAP_MEDIA)
    return True


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
        if _skipped(request, headers.get(b"Content-Type")):
            raise StopDownload(fail=False)  # the response arrives with an empty body and this flag

    def process_response(self, request: Request, response: Response) -> Response:
        if not _is_page(request) or not 200 <= response.status < 300:
            return response
        declared = response.headers.get(b"Content-Type")
        if _skipped(request, declared):
            media = declared.decode("latin-1", errors="replace").split(";", 1)[0].strip().lower()
            self.crawler.stats.inc_value("boilerstrip/htmlonly/skipped")
            raise Filtered("not_html", media)
        return response
