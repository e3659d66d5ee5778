"""Scrapy's meta-refresh handling, minus one way to lose a page.

``scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware`` resolves every HTML page's ``<base href>``
to look for a ``<meta http-equiv="refresh">``; a base (or refresh URL) no URL parser accepts -- a template
placeholder such as ``http://example.org:port/``, or ``http://[oops/`` -- raises ``ValueError`` and the
page ends ``failed:valueerror`` although nothing is wrong with its content. Browsers ignore such a URL;
so does :class:`TolerantMetaRefreshMiddleware`: the page is kept as it is (no refresh followed) and the
stat ``boilerstrip/crawl/meta_refresh_unparsable`` counts it.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware

__all__ = ["TolerantMetaRefreshMiddleware"]

logger = logging.getLogger(__name__)


class TolerantMetaRefreshMiddleware(MetaRefreshMiddleware):
    def process_response(self, request: Any, response: Any) -> Any:
        try:
            return super().process_response(request, response)
        except ValueError as exc:
            self.crawler.stats.inc_value("boilerstrip/crawl/meta_refresh_unparsable")
            logger.debug("meta refresh of %s not followed: unparsable URL (%s)", response.url, exc)
            return response
