"""The crawl's worker pool: the processes (or threads) that read pages off the reactor thread.

Shared by the render middleware, the extraction and cross-page pipelines and the finishing pass, so it
lives beside them rather than among them: a component asks for the crawl's pool
(:meth:`WorkerPool.of`), never for another component. Registered as a Scrapy extension
(``EXTENSIONS["boilerstrip.workers.pool.WorkerPool"]``) for its lifetime: started at ``spider_opened``,
closed after the finishing pass.

- :mod:`.pool`: ``WorkerPool`` (Scrapy glue), ``WorkerPoolParams``, ``WorkerDied``;
- :mod:`._start`: what a worker process runs first. It is pure, and this ``__init__`` imports nothing, so a
  worker process that imports it loads no Scrapy.
"""
