"""Reading a page: the pure code the crawl's components share (no Scrapy, Twisted or Playwright import).

- :mod:`.links`: a page's links, canonical URL and ``<meta>`` tags (for the spider, the trap filter, the
  recrawl and opt-out middlewares);
- :mod:`.page`: the pipelines' reading of a page (its blocks, its extraction, the template model's hashes)
  in one job of the worker pool;
- :mod:`.render_job`: the render decision on the served HTML, with the page's reading, as one worker job.

A worker process imports these modules, not Scrapy, to run their jobs.
"""
