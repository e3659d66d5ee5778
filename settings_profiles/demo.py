"""demo (used by ``boilerstrip demo``): the polite profile, scaled down for the bundled loopback site.

For: showing the polite behaviour (robots.txt, one request per host, AutoThrottle) on the 20-odd page demo
site in a few seconds. The only differences from ``polite`` are the delays: 0.1 s instead of 1 s, so the
demo finishes in seconds. Do not use it on a site you do not run.
"""

CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 0.1
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.1
AUTOTHROTTLE_MAX_DELAY = 2.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
DOWNLOAD_TIMEOUT = 15
RETRY_TIMES = 1
BOILERSTRIP_POLITENESS_PARAMS = {
    "max_crawl_delay_s": 30.0,
    "max_retry_after_s": 10.0,
    "retry_backoff_base_s": 0.5,
    "max_backoff_s": 5.0,
    "max_retries": 3,
}
BOILERSTRIP_ROBOTS_PARAMS = {
    "unreachable_retry_s": 1.0,
    "unreachable_max_fetches": 2,
}
