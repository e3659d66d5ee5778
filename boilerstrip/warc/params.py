"""The WARC writer's and reader's limits: one frozen dataclass each (no Scrapy here)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["WarcParams", "WarcReadParams"]


@dataclass(frozen=True)
class WarcParams:
    """``boilerstrip crawl --warc DIR`` (``BOILERSTRIP_WARC_DIR``; ``--warc-max-bytes`` sets ``max_file_bytes`` of ``BOILERSTRIP_WARC_PARAMS``)."""

    #: the folder the crawl's WARC files go to; "" = no WARC written
    dir: str = ""
    #: a file is closed and the next one started once it holds this many bytes (compressed): 1 GB, the size
    #: Heritrix and Common Crawl use, so a file copies and checksums in one go
    max_file_bytes: int = 1_000_000_000
    #: the file names' prefix: PREFIX-YYYYmmddHHMMSS-NNNNN.warc.gz
    prefix: str = "boilerstrip"

    def __post_init__(self) -> None:
        if self.max_file_bytes < 1024:
            raise ValueError(f"max_file_bytes must be >= 1024, got {self.max_file_bytes}")
        if not self.prefix or "/" in self.prefix:
            raise ValueError(f"prefix must be a plain file name part, got {self.prefix!r}")


@dataclass(frozen=True)
class WarcReadParams:
    """``boilerstrip warc FILE...``: how much of a record is read."""

    #: a record whose block (decompressed) is larger than this is not a page: failed:warc_too_large. The
    #: crawl's DOWNLOAD_MAXSIZE (16 MiB) with room for the HTTP headers; larger records are still read
    #: through (streamed, not held) to reach the next one
    max_record_bytes: int = 16 * 1024 * 1024 + 64 * 1024
    #: the WARC header block of a record larger than this is not a WARC header: the record is skipped
    #: (failed:warc_bad_header) and the reader looks for the next one
    max_header_bytes: int = 64 * 1024
    #: bytes read from the file at a time while scanning
    chunk_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        if self.max_record_bytes < 1024 or self.max_header_bytes < 256 or self.chunk_bytes < 4096:
            raise ValueError("max_record_bytes >= 1024, max_header_bytes >= 256 and chunk_bytes >= 4096")
