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
BOILERSTRIP_POLITENESS_MAX_CRAWL_DELAY_S = 30.0
BOILERSTRIP_POLITENESS_MAX_RETRY_AFTER_S = 60.0
BOILERSTRIP_POLITENESS_RETRY_BACKOFF_BASE_S = 0.5
BOILERSTRIP_POLITENESS_MAX_BACKOFF_S = 10.0
BOILERSTRIP_POLITENESS_MAX_RETRIES = 4
BOILERSTRIP_ROBOTS_UNREACHABLE_RETRY_S = 5.0
BOILERSTRIP_ROBOTS_UNREACHABLE_MAX_FETCHES = 3
