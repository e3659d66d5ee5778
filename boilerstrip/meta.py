"""The ``meta`` keys more than one component reads: defined once, here (pure: no Scrapy import).

A key one component sets and reads alone stays in that component's module.
"""

from __future__ import annotations

__all__ = ["KIND", "LEDGER_KEY", "LEDGER_SKIP"]

#: what a request is for: "page" (the default when absent), or "robots", "sitemap", "tdmrep", "wake" for the
#: infrastructure requests that are not pages to extract or account for
KIND = "boilerstrip_kind"
#: the ledger key of the admitted URL a request belongs to (set at its first scheduling, inherited by every
#: redirect hop, retry and browser re-issue)
LEDGER_KEY = "boilerstrip_ledger_key"
#: True for infrastructure requests (robots.txt, sitemaps) that are not pages to account for
LEDGER_SKIP = "boilerstrip_ledger_skip"
