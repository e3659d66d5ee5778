"""Download handlers (Scrapy's ``DOWNLOAD_HANDLERS``)."""
