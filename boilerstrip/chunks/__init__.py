"""Chunks for retrieval, cut from a page's Markdown along its headings, with IDs that survive a recrawl.

Pure Python over strings (no Scrapy, no I/O): :func:`chunk_markdown` takes one page's Markdown and returns
frozen :class:`Chunk` values; :mod:`.parse` finds the blocks a boundary may fall between, :mod:`.cut` the
boundaries and IDs, :mod:`.tokens` the size counters, :mod:`.records` the chunk records of a crawl's
records and the comparison with what an earlier run kept (:mod:`.store`). ``boilerstrip chunk`` is the
command around it (docs/chunks.md).
"""

from .cut import FLAG_OVERSIZE, FLAG_SPLIT_PARAGRAPH, FLAG_TABLE_CONTINUED, Chunk, ChunkParams, chunk_id, chunk_markdown, plain_text
from .parse import Block, parse_blocks
from .tokens import DEFAULT_TOKENIZER, TokenCounter, TokenizerError, load_token_counter, word_counter

__all__ = [
    "Chunk", "ChunkParams", "chunk_markdown", "chunk_id", "plain_text", "FLAG_OVERSIZE", "FLAG_SPLIT_PARAGRAPH",
    "FLAG_TABLE_CONTINUED",
    "Block", "parse_blocks",
    "TokenCounter", "TokenizerError", "load_token_counter", "word_counter", "DEFAULT_TOKENIZER",
]
