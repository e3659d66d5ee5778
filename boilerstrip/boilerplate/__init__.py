"""Cross-page boilerplate removal and duplicate pages: a pure core (no Scrapy, Twisted or Playwright).

Blocks that appear on most pages of a site (or of a template cluster of it) are template and are removed
from every page; duplicate pages are found exactly (hash of the cleaned text) and nearly (MinHash + LSH).
The Scrapy glue is ``boilerstrip.pipelines.boilerplate`` and ``boilerstrip.pipelines.duplicates``; the
deterministic finishing pass is :mod:`boilerstrip.finishing`; the template counts that outlive a run
live in :mod:`boilerstrip.state`.
"""

from .blocks import block_hash, blocks_of_record, cluster_of_url, normalise_block, site_of_url
from .clean import CleanResult, clean_page, hash_blocks
from .duplicates import Duplicate, DuplicateIndex, find_duplicates, keep_order, text_digest
from .finish import cleaned_fields, merge_flags, model_hashes, read_records
from .page import page_block_hashes, page_blocks, region_blocks
from .source import SourceChoice, choose_source, extraction_failed, region_blocks_of_record
from .model import SCOPE_CLUSTER, SCOPE_SITE, TemplateDecision, TemplateModel
from .params import BoilerplateParams, DuplicateParams

__all__ = [
    "BoilerplateParams",
    "DuplicateParams",
    "normalise_block",
    "block_hash",
    "site_of_url",
    "cluster_of_url",
    "blocks_of_record",
    "hash_blocks",
    "TemplateModel",
    "TemplateDecision",
    "SCOPE_SITE",
    "SCOPE_CLUSTER",
    "CleanResult",
    "clean_page",
    "Duplicate",
    "DuplicateIndex",
    "find_duplicates",
    "keep_order",
    "text_digest",
    "cleaned_fields",
    "merge_flags",
    "read_records",
    "model_hashes",
    "page_block_hashes",
    "page_blocks",
    "region_blocks",
    "SourceChoice",
    "choose_source",
    "extraction_failed",
    "region_blocks_of_record",
]
