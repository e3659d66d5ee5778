"""WARC (ISO 28500) in and out, without Scrapy: write records (``write``), scan any WARC file without
losing the records after a bad one (``read``), parse the HTTP message of a record (``http``), and index the
records by site on disk (``index``). The Scrapy glue is ``downloadermiddlewares.warc`` (a crawl's WARC),
``downloadhandlers.warc`` and ``spiders.warc`` (a WARC read back through the crawl's pipelines)."""

from .http import HttpResponse, NotHttp, parse_http_response
from .index import IndexedEntry, WarcIndex, build_index, site_of
from .params import WarcParams, WarcReadParams
from .read import WARC_ERRORS, WarcEntry, WarcRecord, not_a_warc, read_record, scan_warc
from .write import (OPEN_SUFFIX, Recovered, WarcWriter, http_request_block, http_response_block,
                    recover_open_files, warc_date)

__all__ = ["HttpResponse", "NotHttp", "parse_http_response", "IndexedEntry", "WarcIndex", "build_index", "site_of",
           "WarcParams", "WarcReadParams", "WARC_ERRORS", "WarcEntry", "WarcRecord", "not_a_warc", "read_record",
           "scan_warc",
           "OPEN_SUFFIX", "Recovered", "WarcWriter", "http_request_block", "http_response_block",
           "recover_open_files", "warc_date"]
