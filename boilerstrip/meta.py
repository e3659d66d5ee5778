"""The ``meta`` keys more than one module reads: defined once, here (pure: no Scrapy import).

A key one component sets and reads alone stays in that component's module. The user-facing ones
(``boilerstrip_render``, ``boilerstrip_dont_render``...) are documented in docs/settings.md.
"""

from __future__ import annotations

__all__ = ["KIND_META", "LEDGER_KEY", "LEDGER_SKIP", "BODY_FLAGS_META", "OPT_OUT_META", "REUSED_META", "COPY_META",
           "LASTMOD_META", "PAGE_META", "DONT_RENDER_META", "RENDER_REASON_META", "RENDER_FAILED_META",
           "RENDER_TRUNCATED_META", "RENDER_SETTLE_META", "RENDER_STATIC_LOOK_META", "RENDER_PLACEHOLDER_META",
           "LINKS_META", "READING_META", "WARC_ENTRY_META"]

#: what a request is for: "page" (the default when absent), or "robots", "sitemap", "tdmrep", "wake" for the
#: infrastructure requests that are not pages to extract or account for
KIND_META = "boilerstrip_kind"
#: the ledger key of the admitted URL a request belongs to (set at its first scheduling, inherited by every
#: redirect hop, retry and browser re-issue)
LEDGER_KEY = "boilerstrip_ledger_key"
#: True for infrastructure requests (robots.txt, sitemaps) that are not pages to account for
LEDGER_SKIP = "boilerstrip_ledger_skip"
#: flags the body's history leaves on the record (``partial_body:...``); the spider copies them
BODY_FLAGS_META = "boilerstrip_body_flags"
#: where the page's AI opt-out signals are left for the spider (internal: not a user setting)
OPT_OUT_META = "_boilerstrip_ai_opt_out"
#: how a response stands for a page not downloaded: "not_modified" (a 304) or "sitemap_lastmod"
REUSED_META = "boilerstrip_reused"
#: the stored copy (``PageCopy``) a reused response stands for
COPY_META = "boilerstrip_recrawl_copy"
#: the ``<lastmod>`` of the sitemap entry that admitted a page request (set by the spider)
LASTMOD_META = "boilerstrip_sitemap_lastmod"
#: transient: the browser page being rendered (set by the render middleware, read and removed by the
#: download handler)
PAGE_META = "_boilerstrip_page"
#: user-facing: never render this request (meta beats settings)
DONT_RENDER_META = "boilerstrip_dont_render"
#: why a request was re-issued for the browser (the record's ``render_reason``)
RENDER_REASON_META = "boilerstrip_render_reason"
#: the render flags the record carries (``boilerstrip.rendering.flags``)
RENDER_FAILED_META = "boilerstrip_render_failed"
RENDER_TRUNCATED_META = "boilerstrip_render_truncated"
RENDER_SETTLE_META = "boilerstrip_render_settle"
RENDER_STATIC_LOOK_META = "boilerstrip_render_static_look"
RENDER_PLACEHOLDER_META = "boilerstrip_render_placeholder"
#: transient: a page's links as read once, (URL, body length, ``boilerstrip.reading.links.PageLinks``): the
#: render decision's worker job reads them, the spider and the middlewares take them from here
LINKS_META = "_boilerstrip_links"
#: transient: the pipelines' reading of a static page (``boilerstrip.reading.page.PageReading``, named by the
#: text it was read from), done in the render decision's worker job; the spider hands it on as
#: ``PageItem.reading``
READING_META = "_boilerstrip_reading"
#: the WARC record (``boilerstrip.warc.IndexedEntry``) a replayed request is answered from (set by the replay
#: spider, read by the WARC download handler)
WARC_ENTRY_META = "boilerstrip_warc_entry"
