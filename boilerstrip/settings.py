"""Scrapy settings of the boilerstrip project.

These are the project's settings: a profile from ``settings_profiles/`` is applied *below* them (only
where a setting is not set here, by the spider or on the command line), so the values here that a
profile may change are listed in ``PROFILE_KEYS`` and kept out of this module on purpose; their
polite defaults live in ``settings_profiles/polite.py``.

Every ``BOILERSTRIP_*`` setting is documented in docs/settings.md (a test checks that none is missing).
"""

from boilerstrip import PROJECT_URL, __version__
from boilerstrip.items import EXPORT_FIELDS

BOT_NAME = "boilerstrip"
SPIDER_MODULES = ["boilerstrip.spiders"]
NEWSPIDER_MODULE = "boilerstrip.spiders"

# The asyncio reactor (Scrapy 2.19's default, stated because the crawl relies on it) and UTF-8 feeds
# (Scrapy's default FEED_EXPORT_ENCODING is None, which escapes every non-ASCII character).
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"

# An honest identity: the product token matches the robots.txt group we obey.
BOILERSTRIP_CONTACT = ""  # e.g. "mailto:crawler-ops@example.org"; appended to the User-Agent when set
USER_AGENT = f"boilerstrip/{__version__} (+{PROJECT_URL})"

# The item fields that reach the JSONL file, in order (the raw HTML never does).
FEED_EXPORT_FIELDS = list(EXPORT_FIELDS)  # also for `scrapy crawl site -O out.jsonl`

# A page's callback yields one item (its links are requests, which the engine takes as they come), and
# Scrapy starts CONCURRENT_ITEMS tasks for every response's output whatever it holds: its default of 100
# is a hundred asyncio tasks a page for one item (create_task was the largest single cost of Scrapy's own
# work on the reactor thread; crawl_benchmark.py --throughput, 2026-12-01: docbook-xsl-doc-html ~8 % faster).
CONCURRENT_ITEMS = 4

# Scrapy's downloader, with CONCURRENT_REQUESTS_PER_DOMAIN held when DOWNLOAD_DELAY is 0 (see the module).
DOWNLOADER = "boilerstrip.core.downloader.Downloader"

# Components are registered here; each has its own BOILERSTRIP_<COMPONENT>_ENABLED setting.
DOWNLOADER_MIDDLEWARES: dict[str, int | None] = {}
SPIDER_MIDDLEWARES: dict[str, int | None] = {}
ITEM_PIPELINES: dict[str, int] = {}
EXTENSIONS: dict[str, int | None] = {
    # Remote-control endpoints off: a crawler must not open a shell on a port.
    "scrapy.extensions.telnet.TelnetConsole": None,
}
TELNETCONSOLE_ENABLED = False
# Scrapy 2.19 also opens a remote-control HTTP endpoint by default: off, for the same reason.
EXTENSIONS["scrapy.extensions.remote_control.RemoteControl"] = None
REMOTE_CONTROL_ENABLED = False

# -- safety (docs/safety.md) ------------------------------------------------------------------
# Scope: ScopeMiddleware first in the downloader chain sees every request (links, dont_filter, redirect and
# meta-refresh hops, robots.txt); it replaces Scrapy's OffsiteMiddleware, which ignores ports and drops
# requests silently inside the request_scheduled signal.
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.scope.ScopeMiddleware"] = 40
DOWNLOADER_MIDDLEWARES["scrapy.downloadermiddlewares.offsite.OffsiteMiddleware"] = None
# Credentials never follow a redirect to another origin (after default headers/auth, before cookies).
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.scope.CredentialsMiddleware"] = 450
# Traps run on the spider side of DepthMiddleware/UrlLengthMiddleware (which drop without a reason).
SPIDER_MIDDLEWARES["boilerstrip.spidermiddlewares.traps.TrapFilterMiddleware"] = 950
# The ledger accounts for every admitted URL and writes the manifest (after the FeedExporter, at 0).
EXTENSIONS["boilerstrip.extensions.ledger.LedgerExtension"] = 600
# The finishing pass over the JSONL output once the engine has stopped (docs/finishing.md): the same for
# `scrapy crawl site -O out.jsonl`, scrapyd and `boilerstrip crawl`.
EXTENSIONS["boilerstrip.extensions.finishing.FinishingExtension"] = 700
# Every JSONL feed is written crash-safely (part file, fsync, dead letters), whoever starts the crawl.
FEED_STORAGES = {"": "boilerstrip.feeds.CrashSafeFeedStorage", "file": "boilerstrip.feeds.CrashSafeFeedStorage"}
FEED_EXPORTERS = {"jsonl": "boilerstrip.feeds.SafeJsonLinesExporter", "jsonlines": "boilerstrip.feeds.SafeJsonLinesExporter"}
# Only http(s) is ever fetched: a page linking to file:///etc/hostname must not get it read.
DOWNLOAD_HANDLERS = {"file": None, "data": None, "ftp": None, "s3": None}
# The connection uses the address this resolver checked (no DNS rebinding between check and connect).
TWISTED_DNS_RESOLVER = "boilerstrip.downloadermiddlewares.scope.ScopedResolver"
DNS_TIMEOUT = 10  # seconds; Scrapy's 60 s lets one dead name server stall a slot for a minute
# Size caps: 16 MiB covers the largest real HTML pages by a wide margin (the web's median is ~30 KiB);
# the same cap applies to the decompressed body (a gzip bomb stops at 16 MiB, reason decompressed_too_large).
# Our decoder replaces Scrapy's (same place): bounded memory per bomb, and a truncated or corrupt gzip
# stream is retried, then failed:data_loss, instead of kept as a whole page (docs/safety.md).
DOWNLOADER_MIDDLEWARES["scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware"] = None
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.compression.DecompressionMiddleware"] = 590
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
REDIRECT_MAX_TIMES = 5  # hops; more is a loop or a trap (reason too_many_redirects)
# Scrapy's meta-refresh handling fails a whole page over an unparsable <base href>; ours ignores that URL.
DOWNLOADER_MIDDLEWARES["scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware"] = None
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.metarefresh.TolerantMetaRefreshMiddleware"] = 580
METAREFRESH_MAXDELAY = 10  # seconds; a longer refresh is a page to read, not a redirect
# Depth is limited by TrapFilterMiddleware with a recorded reason (max_depth of BOILERSTRIP_TRAPS_PARAMS; BOILERSTRIP_CRAWL_MAX_DEPTH is the crawl's own).
DEPTH_LIMIT = 0

# -- extraction (docs/extraction.md) ----------------------------------------------------------
# The ladder (semantic -> density -> body-text XPath) turns item.html into text, blocks and metadata, then
# clears the HTML; after PageBlocksPipeline (250), before cross-page removal (500).
ITEM_PIPELINES["boilerstrip.pipelines.extraction.ExtractionPipeline"] = 300
# Reads each page once, in the worker pool, for the pipelines after it (page blocks 250, extraction 300,
# cross-page 500 take their part of it from item.reading); first of the pipelines that read item.html.
ITEM_PIPELINES["boilerstrip.pipelines.reading.PageReadingPipeline"] = 200
# The worker processes that read pages (render decision, page blocks, extraction) off the reactor thread.
EXTENSIONS["boilerstrip.workers.pool.WorkerPool"] = 100

# -- cross-page boilerplate (docs/cross-page.md) -----------------------------
# Page block hashes before extraction clears the HTML (250); after extraction (~300): template blocks out (500), then duplicate pages over the cleaned text (600).
ITEM_PIPELINES["boilerstrip.pipelines.boilerplate.PageBlocksPipeline"] = 250  # first to use the page's reading
ITEM_PIPELINES["boilerstrip.pipelines.boilerplate.CrossPageBoilerplatePipeline"] = 500
ITEM_PIPELINES["boilerstrip.pipelines.duplicates.DuplicatePagesPipeline"] = 600

# -- crawl (docs/crawling.md) ------------------------------------------------------------------
# Profiles (settings_profiles/<name>.py) are applied at "addon" priority, below this file: so the
# politeness knobs (DOWNLOAD_DELAY, AUTOTHROTTLE_*, CONCURRENT_*, RETRY_TIMES...) are NOT set here.
ADDONS = {"boilerstrip.addons.ProfileAddon": 0}
# robots.txt is always obeyed unless the command line says otherwise (-s ROBOTSTXT_OBEY=false).
ROBOTSTXT_OBEY = True
# RFC 9309 robots (100) replaces Scrapy's, which allows everything when robots.txt fails.
DOWNLOADER_MIDDLEWARES["scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"] = None
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.robots.Rfc9309RobotsMiddleware"] = 100
# AI-training opt-out signals (robots.txt Content-Signal/Content-Usage, noai, TDMRep) recorded on every
# page (docs/export.md); right after robots, so only allowed pages wait for the site's tdmrep.json.
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.optout.AiOptOutMiddleware"] = 110
# Crawl-delay floor, Retry-After and per-host back-off: process_response before RetryMiddleware (550).
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.politeness.PolitenessMiddleware"] = 560
# Non-HTML pages are skipped by Content-Type before their body downloads; first to see responses.
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.htmlonly.HtmlOnlyMiddleware"] = 950
# Recurring crawls (docs/recurring.md): conditional requests from the state's validators, 304s and
# sitemap <lastmod> answered from the stored copy (558: after the render decision at 555, before it sees a
# body); the spider side swaps in stored records and keeps each page's links and validators.
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.conditional.ConditionalRequestMiddleware"] = 558
SPIDER_MIDDLEWARES["boilerstrip.spidermiddlewares.recrawl.RecrawlMiddleware"] = 900
# Last pipeline: placeholder text when no extractor ran, content_hash, html cleared.
ITEM_PIPELINES["boilerstrip.pipelines.finalize.FinalizePipeline"] = 900
EXTENSIONS["boilerstrip.extensions.progress.ProgressExtension"] = 500
# `crawl --warc DIR` (docs/warc.md): every exchange as WARC records; 960, the downloader side of every
# other middleware, so it records the response as it came (still content-encoded, a 304 before reuse).
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.warc.WarcWriterMiddleware"] = 960

# -- rendering (docs/rendering.md) -----------------------------------------------------------
# Static first, a browser only where the served HTML lacks the content. 555: its process_response sees
# the final static response (after decompression 590, redirects 600, politeness 560) and runs before
# RetryMiddleware (550). RenderAddon (after the profile add-on) configures scrapy-playwright as the http(s)
# download handler only when BOILERSTRIP_RENDER_MODE allows rendering.
DOWNLOADER_MIDDLEWARES["boilerstrip.downloadermiddlewares.render.RenderWhenNeededMiddleware"] = 555
ADDONS["boilerstrip.rendering_addon.RenderAddon"] = 10

# The profile applied when none is named (see settings_profiles/).
BOILERSTRIP_PROFILE = "polite"

LOG_LEVEL = "INFO"
