"""What each new worker process of the crawl's pool runs first (``WorkerPool``).

Apart from ``workers.py``, which imports Scrapy: a worker imports the module of every function it is sent,
and none of the jobs it runs needs Scrapy, Twisted or Playwright (a test checks that none gets loaded).
"""

from __future__ import annotations

__all__ = ["warm_up"]


def warm_up() -> None:
    """Import what reading a page needs before the first page comes."""
    import boilerstrip.boilerplate.page  # noqa: F401
    import boilerstrip.downloadermiddlewares._render_job  # noqa: F401
    import boilerstrip.extraction  # noqa: F401
    import boilerstrip.pipelines._page_reading  # noqa: F401
    import boilerstrip.rendering  # noqa: F401
