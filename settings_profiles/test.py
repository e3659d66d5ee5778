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
BOILERSTRIP_POLITENESS_PARAMS = {
    "max_crawl_delay_s": 30.0,
    "max_retry_after_s": 5.0,
    "retry_backoff_base_s": 0.1,
    "max_backoff_s": 1.0,
    "max_retries": 2,
    "host_down_after_s": 5.0,
}
BOILERSTRIP_ROBOTS_PARAMS = {
    "fetch_timeout_s": 5.0,
    "unreachable_retry_s": 0.3,
    "unreachable_max_fetches": 2,
}
