"""polite (the default): crawl someone else's site the way its operator would want.

For: any public site you do not run. One request at a time per host, at least 1 s apart (more when the
site's ``Crawl-delay`` or its response times ask for it, via AutoThrottle), robots.txt obeyed with
RFC 9309 semantics, 429/503 answered by pausing the host. A 1000-page site takes roughly 20 minutes.
Applied below the project's, the spider's and the command line's settings.
"""

# One connection per host: a small site's server should never see us as more than one reader.
CONCURRENT_REQUESTS_PER_DOMAIN = 1
CONCURRENT_REQUESTS = 16  # across hosts (a multi-site crawl still progresses on other hosts)
# 1 s between two requests to a host (Scrapy's jitter makes it 0.5-1.5 s); Crawl-delay raises it.
DOWNLOAD_DELAY = 1.0
# AutoThrottle slows down further when the server slows down (target: one request in flight).
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
DOWNLOAD_TIMEOUT = 30
# Plain retries (timeouts, 500/502/504) stay few; 429/503 are handled by the politeness middleware.
RETRY_TIMES = 2
# Crawl-delay above 30 s skips the host (reason crawl_delay_too_long). Retry-After is obeyed up to
# 5 minutes; without it 2, 4, 8... s up to 2 minutes, 4 retries of a request.
BOILERSTRIP_POLITENESS_PARAMS = {
    "max_crawl_delay_s": 30.0,
    "max_retry_after_s": 300.0,
    "retry_backoff_base_s": 2.0,
    "max_backoff_s": 120.0,
    "max_retries": 4,
}
# An unreachable robots.txt is fetched again after 30 s, 3 times in all, before the host is given up.
BOILERSTRIP_ROBOTS_PARAMS = {
    "unreachable_retry_s": 30.0,
    "unreachable_max_fetches": 3,
}
