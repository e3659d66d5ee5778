"""test (``--profile test``): the test suite's profile, for loopback fixture sites only.

For: integration tests that must finish in seconds. Politeness machinery stays on (robots.txt obeyed,
Crawl-delay honoured, 429/503 pause the host) but every configured delay and back-off is tiny, so a test
that measures politeness sets the value it measures explicitly. Never use it on a real site.
"""

CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_DELAY = 0.0
AUTOTHROTTLE_ENABLED = False
DOWNLOAD_TIMEOUT = 10
RETRY_TIMES = 1
BOILERSTRIP_POLITENESS_MAX_CRAWL_DELAY_S = 30.0
BOILERSTRIP_POLITENESS_MAX_RETRY_AFTER_S = 5.0
BOILERSTRIP_POLITENESS_RETRY_BACKOFF_BASE_S = 0.1
BOILERSTRIP_POLITENESS_MAX_BACKOFF_S = 1.0
BOILERSTRIP_POLITENESS_MAX_RETRIES = 2
BOILERSTRIP_ROBOTS_FETCH_TIMEOUT_S = 5.0
BOILERSTRIP_ROBOTS_UNREACHABLE_RETRY_S = 0.3
BOILERSTRIP_ROBOTS_UNREACHABLE_MAX_FETCHES = 2
