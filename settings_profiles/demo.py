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
BOILERSTRIP_POLITENESS_MAX_CRAWL_DELAY_S = 30.0
BOILERSTRIP_POLITENESS_MAX_RETRY_AFTER_S = 10.0
BOILERSTRIP_POLITENESS_RETRY_BACKOFF_BASE_S = 0.5
BOILERSTRIP_POLITENESS_MAX_BACKOFF_S = 5.0
BOILERSTRIP_POLITENESS_MAX_RETRIES = 3
BOILERSTRIP_ROBOTS_UNREACHABLE_RETRY_S = 1.0
BOILERSTRIP_ROBOTS_UNREACHABLE_MAX_FETCHES = 2
