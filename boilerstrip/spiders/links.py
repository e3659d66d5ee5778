"""The links of a page, read once per response.

The spider (to follow them), the trap filter (to report links with other schemes) and the recrawl
middleware (to keep them for the next crawl) all need every ``<a href>`` and ``<area href>`` of a page:
one XPath query over the parsed page, remembered for as long as the response lives.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

__all__ = ["page_hrefs", "HREF_XPATH"]

HREF_XPATH = "//a/@href | //area/@href"
_READ: WeakKeyDictionary = WeakKeyDictionary()  # response -> its hrefs (gone with the response)


def page_hrefs(response: Any, selector: Any = None) -> list[str]:
    """The raw ``href`` of every ``<a>`` and ``<area>`` of ``response`` (read with ``selector`` when given,
    else the response's own); raises what the XPath query raises on a page that cannot be read."""
    try:
        return _READ[response]
    except (KeyError, TypeError):
        pass
    root = (selector if selector is not None else response.selector).root
    # lxml's own query: the same strings as parsel's .xpath().getall() without a Selector built for each
    # (a large page has hundreds of links: sqlite3-doc, 155,000 Selector objects for the crawl)
    hrefs = [str(href) for href in root.xpath(HREF_XPATH, smart_strings=False)]
    try:
        _READ[response] = hrefs
    except TypeError:  # not weak-referenceable: read again next time
        pass
    return hrefs
