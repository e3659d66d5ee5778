"""own-site (``--profile own-site``): crawl a site you run yourself, fast.

For: your own documentation or intranet site, a staging server, a static site on loopback. No delay and
16 connections per host, AutoThrottle off. robots.txt is still obeyed (and its Crawl-delay still honoured:
if your site asks for one, that is your decision to change there) because a crawl should never fetch what
the site excludes. Do not use it on a site you do not run: it can put real load on a small server.
"""

CONCURRENT_REQUESTS = 32
CONCURRENT_REQUESTS_PER_DOMAIN = 16
DOWNLOAD_DELAY = 0.0
AUTOTHROTTLE_ENABLED = False
DOWNLOAD_TIMEOUT = 30
RETRY_TIMES = 2
BOILERSTRIP_POLITENESS_PARAMS = {
    "max_crawl_delay_s": 30.0,
    "max_retry_after_s": 60.0,
    "retry_backoff_base_s": 0.5,
    "max_backoff_s": 10.0,
    "max_retries": 4,
    "host_down_after_s": 60.0,  # your own server: a minute without a good answer and it is down
}
BOILERSTRIP_ROBOTS_PARAMS = {
    "unreachable_retry_s": 5.0,
    "unreachable_max_fetches": 3,
}
