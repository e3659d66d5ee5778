"""Crash-safe JSONL output and the run manifest.

``-o OUT.jsonl`` writes through :class:`CrashSafeFeedStorage` and :class:`SafeJsonLinesExporter`:

- records go to ``OUT.jsonl.part``, one ``write()`` per whole line on an unbuffered file (a ``kill -9``
  leaves whole lines only; a torn last line is cut when the file is opened again), ``fsync`` every
  ``fsync_every_items`` records or ``fsync_every_s`` seconds (``BOILERSTRIP_FEEDS_PARAMS``);
- at the end the part is renamed atomically to ``OUT.jsonl`` and the ledger writes ``OUT.manifest.json``;
- a record that cannot be encoded is repaired (lone surrogates -> U+FFFD, flag ``replacement_chars``), and
  one that still fails goes to ``OUT.deadletter.jsonl`` with its reason: never silently lost;
- ``BOILERSTRIP_FEEDS_RESUME`` appends to the existing part (or reopens the finished file) and skips
  records whose ``url`` is already written, so a resumed run completes the set without duplicates;
- records are lean (``boilerstrip.items.EXPORT_FIELDS``) unless ``BOILERSTRIP_FEEDS_TRAIL`` (``crawl
  --trail``) asks for the block-by-block trail; when a finishing pass will rewrite the file, the crawl
  writes the trail anyway (it is the pass's input) and the pass drops it.

:func:`atomic_write_lines` is the one way to (re)write an output file whole (a final dedup pass uses it).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import traceback
from pathlib import Path
from typing import Any

from scrapy.exporters import JsonLinesItemExporter
from scrapy.utils.python import to_bytes

from boilerstrip.atomicfile import (
    FEED_STORE_FAILED_STAT,
    append_line,
    atomic_write_json,
    atomic_write_lines,
    fsync_dir,
    iter_whole_lines,
    note_write_error,
    read_whole_lines,
    record_url,
    write_error_advice,
    written_urls,
)
from boilerstrip.config import params_from_settings
from boilerstrip.fastjson import compact_utf8
from boilerstrip.state.layout import CrawlLayout, crawl_layout
from boilerstrip.items import EXPORT_FIELDS, JSON_SEPARATORS, RECORD_FIELDS, TRAIL_FIELDS, compact_record
from boilerstrip.safety.text import REPLACEMENT, repair_value

__all__ = [
    "FeedParams",
    "OutputPaths",
    "output_paths",
    "feed_settings",
    "resume_requested",
    "trail_written",
    "CrashSafeFeedStorage",
    "SafeJsonLinesExporter",
    "atomic_write_lines",
    "atomic_write_json",
    "read_whole_lines",
    "iter_whole_lines",
    "record_url",
    "export_failed",
    "REPLACEMENT_FLAG",
    "WRITE_ERROR",
]

logger = logging.getLogger(__name__)

#: signal: export_failed(item, reason: str) -- a record could not be written and was dead-lettered
export_failed = object()
REPLACEMENT_FLAG = "replacement_chars"
_REPLACEMENT_UTF8 = REPLACEMENT.encode("utf-8")
#: the reason of a record that could not be written (disk full, file size limit); the crawl stops
WRITE_ERROR = "write_error"


@dataclasses.dataclass(frozen=True)
class FeedParams:
    # fsync the part file after this many records: bounds what a power loss (not a kill) can take.
    # 50 records at ~20 KiB is ~1 MiB of page cache, one fsync per second at a fast local crawl.
    fsync_every_items: int = 50
    # ... or after this many seconds since the last fsync, so a slow crawl is durable too.
    fsync_every_s: float = 5.0
    # Append to the part (or the finished file) of an earlier run and skip records already written.
    resume: bool = False
    # Keep the block-by-block trail (items.TRAIL_FIELDS) in the written records (``crawl --trail``); off:
    # lean records, the content and the decisions (the trail was ~70 % of a record on docbook-xsl-doc-html).
    trail: bool = False

    def __post_init__(self) -> None:
        if self.fsync_every_items < 1:
            raise ValueError("fsync_every_items must be >= 1")
        if self.fsync_every_s <= 0:
            raise ValueError("fsync_every_s must be > 0")


#: the paths of a crawl's files, derived in one place (boilerstrip.state.layout)
OutputPaths = CrawlLayout
output_paths = crawl_layout


def feed_settings(out: str | Path, resume: bool = False) -> dict[str, Any]:
    """Scrapy settings that write ``out`` crash-safely (for ``boilerstrip crawl -o OUT``)."""
    return {
        "FEEDS": {
            str(Path(out).resolve()): {
                "format": "jsonl",
                "encoding": "utf-8",
                "fields": list(EXPORT_FIELDS),
                "store_empty": True,
                "overwrite": True,
            }
        },
        "FEED_STORAGES": {"": "boilerstrip.feeds.CrashSafeFeedStorage", "file": "boilerstrip.feeds.CrashSafeFeedStorage"},
        "FEED_EXPORTERS": {"jsonl": "boilerstrip.feeds.SafeJsonLinesExporter",
                           "jsonlines": "boilerstrip.feeds.SafeJsonLinesExporter"},
        "BOILERSTRIP_FEEDS_RESUME": resume,
    }


def trail_written(settings: Any) -> bool:
    """Does the crawl's feed carry the block-by-block trail? When asked (``BOILERSTRIP_FEEDS_TRAIL``), or when
    a finishing pass will rewrite the file: the pass works from the trail and drops it as it writes."""
    from boilerstrip.finishing import finishing_follows

    return params_from_settings(settings, "feeds", FeedParams).trail or finishing_follows(settings)


def resume_requested(settings: Any) -> bool:
    """``BOILERSTRIP_FEEDS_RESUME``, or a Scrapy ``JOBDIR`` that holds a job to resume (its dupefilter file):
    Scrapy then skips the pages already fetched, so the output must keep their records."""
    if params_from_settings(settings, "feeds", FeedParams).resume:
        return True
    jobdir = settings.get("JOBDIR")
    return bool(jobdir) and (Path(str(jobdir)) / "requests.seen").exists()


# -- the storage ----------------------------------------------------------------------------------------------
class _PartFile:
    """The open part file: unbuffered, one write per line, periodic fsync, resume set, dead letters."""

    def __init__(self, paths: OutputPaths, params: FeedParams, already: set[str]) -> None:
        self.paths = paths
        self.params = params
        self.already = already
        self._raw = open(paths.part, "ab", buffering=0)  # noqa: SIM115 (closed by store())
        self._since_sync = 0
        self._synced_at = time.monotonic()
        self.written = 0
        self.skipped = 0
        self.deadlettered = 0
        #: the first write error (a full disk, ``ulimit -f``): nothing more is written after it
        self.failed: OSError | None = None
        self._good_size = self._raw.seek(0, os.SEEK_END)

    def write(self, data: bytes) -> int:
        if self.failed is not None:
            raise self.failed
        view = memoryview(data)
        try:
            while view:  # os.write on a regular file writes all of it; loop only for the pathological case
                done = self._raw.write(view)
                view = view[done:]
        except OSError as exc:
            self.failed = exc
            try:  # cut the torn line: the file keeps whole records only (shrinking works on a full disk)
                self._raw.truncate(self._good_size)
            except OSError:
                pass  # a resumed run cuts it (read_whole_lines(truncate=True))
            raise
        self._good_size += len(data)
        self.written += 1
        self._since_sync += 1
        if self._since_sync >= self.params.fsync_every_items or time.monotonic() - self._synced_at >= self.params.fsync_every_s:
            self.sync()
        return len(data)

    def sync(self) -> None:
        os.fsync(self._raw.fileno())
        self._since_sync = 0
        self._synced_at = time.monotonic()

    def dead_letter(self, record: dict[str, Any]) -> None:
        self.deadlettered += 1
        append_line(self.paths.deadletter, record)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self._raw.closed:
            self.sync()
            self._raw.close()

    @property
    def closed(self) -> bool:
        return self._raw.closed


class CrashSafeFeedStorage:
    """A FeedStorage for local paths: writes ``OUT.part``, renames it to ``OUT`` when the feed closes."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None, params: FeedParams | None = None) -> None:
        path = uri[len("file://") :] if uri.startswith("file://") else uri
        self.paths = output_paths(path)
        self.params = params or FeedParams()
        self.file: _PartFile | None = None
        self.stats: Any = None  # the crawl's (from_crawler): a rename that fails is recorded there

    @classmethod
    def from_crawler(cls, crawler: Any, uri: str, *, feed_options: dict[str, Any] | None = None) -> CrashSafeFeedStorage:
        params = params_from_settings(crawler.settings, "feeds", FeedParams)
        if not params.resume and resume_requested(crawler.settings):
            params = dataclasses.replace(params, resume=True)
        storage = cls(uri, feed_options=feed_options, params=params)
        storage.stats = crawler.stats
        return storage

    def open(self, spider: Any) -> _PartFile:
        paths = self.paths
        paths.part.parent.mkdir(parents=True, exist_ok=True)
        already: set[str] = set()
        if self.params.resume:
            if not paths.part.exists() and paths.final.exists():
                os.replace(paths.final, paths.part)  # reopen a finished run to add to it
            read_whole_lines(paths.part, truncate=True)
            already = written_urls(paths.part)
        elif paths.part.exists():
            # The dead-letter file is NOT cleared here: Scrapy opens the storage at the first exported
            # record, after a pipeline may already have dead-lettered a page of this run. The ledger clears
            # an earlier run's file when the spider opens.
            paths.part.unlink()
        self.file = _PartFile(paths, self.params, already)
        return self.file  # type: ignore[return-value]

    def store(self, file: Any) -> None:
        file.close()
        if getattr(file, "failed", None) is not None:
            # not renamed: OUT.jsonl.part says "incomplete", and --resume appends to it
            logger.error("feeds: %s is incomplete after a write error (%s); run again with --resume", self.paths.part, file.failed)
            return
        try:
            os.replace(self.paths.part, self.paths.final)
        except OSError as exc:
            # its folder removed or moved during the crawl: one line, and the run fails (Scrapy's feed export
            # logged a traceback and the crawl said finished, with no output anywhere)
            logger.error("feeds: cannot move %s into place (%s); %s", self.paths.part, exc, write_error_advice(exc))
            if self.stats is not None:
                self.stats.set_value(FEED_STORE_FAILED_STAT, str(self.paths.final))
                note_write_error(self.stats, exc)
            return
        fsync_dir(self.paths.final.parent)
        logger.info("feeds: %s complete (%d records written by this run, %d skipped as already written)", self.paths.final, file.written, file.skipped)


# -- the exporter ---------------------------------------------------------------------------------------------
class SafeJsonLinesExporter(JsonLinesItemExporter):
    """JSON lines that are always valid UTF-8: repairs lone surrogates, flags them, dead-letters the rest."""

    def __init__(self, file: Any, **kwargs: Any) -> None:
        kwargs.setdefault("encoding", "utf-8")
        kwargs.setdefault("separators", JSON_SEPARATORS)  # the record's line as items.compact_record writes it
        super().__init__(file, **kwargs)
        self.crawler: Any = None
        encoder = self.encoder
        #: the encoder writes what :func:`compact_utf8` writes (compact, UTF-8, no indent or sorted keys)
        self._compact = (not encoder.ensure_ascii and encoder.indent is None and not encoder.sort_keys
                         and (encoder.item_separator, encoder.key_separator) == JSON_SEPARATORS)

    @classmethod
    def from_crawler(cls, crawler: Any, file: Any, **kwargs: Any) -> SafeJsonLinesExporter:
        exporter = cls(file, **kwargs)
        exporter.crawler = crawler
        exporter.keep_trail(trail_written(crawler.settings))
        return exporter

    #: the trail fields this exporter leaves out of the records it writes (see :meth:`keep_trail`)
    _dropped: frozenset[str] = frozenset()

    def keep_trail(self, keep: bool) -> None:
        """Write the trail fields (added to the fields to export, in record order) or leave them out."""
        fields = self.fields_to_export
        if keep:
            self._dropped = frozenset()
            if isinstance(fields, (list, tuple)):
                listed = set(fields) | set(TRAIL_FIELDS)
                self.fields_to_export = [name for name in RECORD_FIELDS if name in listed] + [
                    name for name in fields if name not in RECORD_FIELDS]
        elif isinstance(fields, (list, tuple)):
            self._dropped = frozenset(TRAIL_FIELDS) - set(fields)  # fields listed by hand are written
        else:
            self._dropped = frozenset(TRAIL_FIELDS)

    _stopping = False  # set at the first write error (the crawl is being stopped)

    def export_item(self, item: Any) -> None:
        url = _item_url(item)
        already = getattr(self.file, "already", None)
        if already is not None and url is not None and url in already:
            self.file.skipped += 1  # type: ignore[union-attr]
            self._inc("skipped_already_written")
            return
        try:
            record = dict(self.get_serialized_fields(item))
            for name in self._dropped.intersection(record):
                del record[name]
            record = compact_record(record)
            data = self._clean_line(record) or self._repaired(record)
        except Exception as exc:  # noqa: BLE001 -- any failure dead-letters the record, never drops it
            reason = f"export_error:{type(exc).__name__}"
            self._dead_letter(item, url, reason, exc)
            return
        try:
            self.file.write(data)
        except OSError as exc:
            self._write_failed(item, url, exc)
            return
        if already is not None and url is not None:
            already.add(url)

    def _clean_line(self, record: dict[str, Any]) -> bytes | None:
        """The JSON line of a record with nothing to repair or flag (the common case: one encode, no walk
        over the values); None when it holds a lone surrogate, or U+FFFD without the flag (or the encoder
        escapes non-ASCII, which hides them). A record already flagged (the extractor flags the pages it
        decoded with replacements: most of docbook-xsl-doc-html) is written as encoded: repairing it would
        change nothing but the count."""
        if getattr(self.encoder, "ensure_ascii", True):
            return None
        fast = compact_utf8(record) if self._compact else None
        if fast is not None:  # what the encoder writes, by orjson; None: a lone surrogate, or a type only json writes
            data = fast + b"\n"
        else:
            try:
                data = (self.encoder.encode(record) + "\n").encode("utf-8")
            except UnicodeEncodeError:
                return None
        if _REPLACEMENT_UTF8 in data or b"\\ufffd" in data:
            flags = record.get("flags")
            if not isinstance(flags, (list, tuple)) or REPLACEMENT_FLAG not in flags:
                return None
            if _has_replacement(record):
                self._inc("repaired")  # what _repaired counts for it
        return data

    def _repaired(self, record: dict[str, Any]) -> bytes:
        """The JSON line of a record with lone surrogates or U+FFFD: repaired and flagged."""
        record, replaced = repair_value(record)
        if replaced or _has_replacement(record):
            flags = list(record.get("flags") or [])
            if REPLACEMENT_FLAG not in flags:
                flags.append(REPLACEMENT_FLAG)
            record["flags"] = flags
            self._inc("repaired")
        return to_bytes(self.encoder.encode(record) + "\n", "utf-8")

    def _write_failed(self, item: Any, url: str | None, exc: OSError) -> None:
        """A record could not be written (disk full, file size limit): ``failed:write_error`` for it and
        every later one, and the crawl stops, so nothing is lost without a non-zero exit; ``--resume``
        fetches them again."""
        self._inc("write_errors")
        first = not self._stopping
        if first:
            self._stopping = True
            logger.error("feeds: cannot write %s (%s): stopping the crawl; %s",
                         getattr(getattr(self.file, "paths", None), "part", "the output"), exc,
                         write_error_advice(exc))  # fmt: skip
            if self.crawler is not None:
                note_write_error(self.crawler.stats, exc)
        try:
            self._dead_letter_line(url, WRITE_ERROR, exc)
        except OSError:
            pass  # the disk that refused the record may refuse this line too: the ledger still has it
        if self.crawler is None:
            return
        self.crawler.signals.send_catch_log(export_failed, item=item, reason=WRITE_ERROR)
        engine = getattr(self.crawler, "engine", None)
        if first and engine is not None:
            from scrapy.utils.defer import deferred_from_coro

            deferred_from_coro(engine.close_spider_async(reason=WRITE_ERROR))

    def _dead_letter(self, item: Any, url: str | None, reason: str, exc: BaseException) -> None:
        self._inc("deadlettered")
        logger.error("feeds: could not write the record of %s (%s); dead-lettered", url, reason)
        self._dead_letter_line(url, reason, exc)
        if self.crawler is not None:
            self.crawler.signals.send_catch_log(export_failed, item=item, reason=reason)

    def _dead_letter_line(self, url: str | None, reason: str, exc: BaseException) -> None:
        dead = getattr(self.file, "dead_letter", None)
        if dead is not None:
            dead({"url": url, "stage": "export", "reason": reason, "error": "".join(traceback.format_exception_only(exc)).strip()})

    def _inc(self, key: str) -> None:
        if self.crawler is not None:
            self.crawler.stats.inc_value(f"boilerstrip/feeds/{key}")


def _item_url(item: Any) -> str | None:
    try:
        from itemadapter import ItemAdapter

        url = ItemAdapter(item).get("url")
    except Exception:  # noqa: BLE001
        return None
    return url if isinstance(url, str) else None


def _has_replacement(value: Any) -> bool:
    if isinstance(value, str):
        return REPLACEMENT in value
    if isinstance(value, dict):
        return any(_has_replacement(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_replacement(v) for v in value)
    return False
