"""The export's steps, run by the finishing runner (:func:`boilerstrip.finishing.run_steps`).

``ReadInputs -> TooLong -> NewestVersion -> Normalise -> OptOutPolicy -> Language -> Quality -> Filters -> Pii -> ExactDedup ->
NearDedup -> ShardWriter -> WriteSummary``. Every step that leaves a document out calls ``Step.drop`` with a
short reason; the export's context writes each drop to ``excluded.jsonl`` as it happens, so that file is
exactly the drops and memory does not grow with them.

The keep rule: ``ExactDedup`` sees every document first (spilled to a temporary file, memory holds one sort
key per document) and passes them on sorted by ``(len(url), url, id, date, crawl)``; the first of a
duplicate group in that order is kept, so the same inputs in any order give the same rows. With a kept
index, documents of earlier exports come first of all (they are already in the index).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import unicodedata
from collections import Counter
from datetime import datetime, timezone
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from boilerstrip.boilerplate.blocks import site_of_url
from boilerstrip.boilerplate.duplicates import text_digest
from boilerstrip.finishing.base import Dropped, FinishContext, Record, Spill, Step, TOMBSTONES, is_page, read_jsonl
from boilerstrip.chunks import plain_text
from boilerstrip.items import complete_record

from .index import DedupIndex, MinHasher
from .language import LanguageIdentifier
from .params import ExportParams, FilterParams, NearDedupParams
from .pii import code_literals, replace_pii
from .signals import QUALITY_FIELDS, gopher_failures, quality_signals

__all__ = ["ExcludedLog", "ExportContext", "ReadInputs", "TooLong", "NewestVersion", "Normalise", "OptOutPolicy", "Language", "Quality",
           "Filters", "Pii", "ExactDedup", "NearDedup", "ShardWriter", "ROW_FIELDS", "document_id",
           "normalise_text", "crawl_name", "record_problem"]

#: the columns of an exported row, in order (FineWeb's text/id/url/date first)
ROW_FIELDS = ("text", "id", "url", "date", "title", "site", "crawl", "language", "language_score", "word_count",
              "quality", "ai_opt_out")
_TRAILING_SPACE_RE = re.compile(r"[ \t\u00a0]+\n")
_BLANK_LINES_RE = re.compile(r"\n{3,}")


def normalise_text(text: str) -> str:
    """NFC, no trailing spaces on lines, at most one blank line in a row, no leading/trailing blanks."""
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    return _BLANK_LINES_RE.sub("\n\n", _TRAILING_SPACE_RE.sub("\n", text)).strip()


def document_id(url: str, digest: str) -> str:
    """Stable across runs and machines: the same URL with the same (normalised) text gets the same id."""
    return hashlib.sha256(f"{url}\n{digest}".encode("utf-8")).hexdigest()[:32]


def crawl_name(path: str | Path) -> str:
    """``out/site-2026-12.jsonl`` -> ``site-2026-12``: the source crawl named on every row."""
    name = Path(path).name
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


#: the record fields the export reads, and the types each may have (None: the field may be missing or null)
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "url": (str,), "text": (str, type(None)), "markdown": (str, type(None)), "title": (str, type(None)),
    "fetched_at": (str, type(None)), "date": (str, type(None)), "method": (str, type(None)),
    "crawl": (str, type(None)), "change": (str, type(None)), "outcome": (str, type(None)),
    "ai_opt_out": (list, type(None)), "flags": (list, type(None)),
    "boilerplate_removed_chars": (int, type(None)), "confidence": (float, int, type(None)),
}
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def record_problem(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, what is wrong) when a record cannot be exported as it is (a field of the wrong type, a lone
    surrogate that no UTF-8 file can hold); None when it can. Pure: the export leaves such a record out
    with reason ``bad_record`` rather than fail on it."""
    for name, types in _FIELD_TYPES.items():
        value = record.get(name)
        if not isinstance(value, types) or isinstance(value, bool):
            return name, f"expected {' or '.join('null' if t is type(None) else t.__name__ for t in types)}, " \
                          f"got {type(value).__name__}"
        if isinstance(value, str) and _SURROGATE_RE.search(value):
            return name, "a lone surrogate (not valid Unicode)"
        if isinstance(value, list) and not all(isinstance(v, str) and not _SURROGATE_RE.search(v) for v in value):
            return name, "expected a list of strings"
    if not record["url"]:
        return "url", "empty"
    if (record.get("boilerplate_removed_chars") or 0) < 0:
        return "boilerplate_removed_chars", "negative"
    return None


class ExcludedLog:
    """``context.dropped`` of an export: each drop is written to ``excluded.jsonl`` at once and counted by
    reason and site; nothing is kept in memory but the counts."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(f".{self.path.name}.tmp")
        self._handle = open(self._tmp, "w", encoding="utf-8", newline="\n")
        self.reasons: Counter = Counter()
        self.sites: Counter = Counter()
        self.total = 0

    def append(self, dropped: Dropped) -> None:
        line = {"url": dropped.url, "reason": dropped.reason, "step": dropped.step, **dict(dropped.detail)}
        text = json.dumps(line, ensure_ascii=False, sort_keys=False)
        if _SURROGATE_RE.search(text):
            text = json.dumps(line, ensure_ascii=True, sort_keys=False)  # a bad record's URL: escaped, still JSON
        self._handle.write(text + "\n")
        self.reasons[dropped.reason] += 1
        self.sites[site_of_url(dropped.url)] += 1
        self.total += 1

    def __len__(self) -> int:
        return self.total

    def __iter__(self) -> Iterator[Dropped]:
        self._handle.flush()
        for line in read_jsonl(self._tmp):
            detail = {k: v for k, v in line.items() if k not in ("url", "reason", "step")}
            yield Dropped(line["url"], line["reason"], line["step"], detail)

    def finish(self) -> None:
        """The file appears under its name once complete (in drop order: streaming, never sorted in memory)."""
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.replace(self._tmp, self.path)

    def abort(self) -> None:
        self._handle.close()
        try:
            self._tmp.unlink()
        except OSError:
            pass


class ExportContext(FinishContext):
    """A FinishContext whose drops go to ``excluded.jsonl`` (see :class:`ExcludedLog`)."""

    def __init__(self, excluded: ExcludedLog, **kwargs: Any) -> None:
        super().__init__(dropped=excluded, **kwargs)  # type: ignore[arg-type]
        self.excluded = excluded


def _drop(step: Step, record: Mapping[str, Any], reason: str, context: FinishContext, **detail: Any) -> None:
    step.drop(record, reason, context, id=record.get("id"), crawl=record.get("crawl"), **detail)


class ReadInputs(Step):
    """The records of each input JSONL file, in turn, each tagged with its crawl's name."""

    name = "read"

    def __init__(self, paths: Iterable[str | Path]) -> None:
        self.paths = [Path(p) for p in paths]

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        yield from records
        inputs = context.report.setdefault("export", {}).setdefault("inputs", [])
        for path in self.paths:
            crawl = crawl_name(path)
            count = 0
            for record in read_jsonl(path, context):
                count += 1
                record = complete_record(record)
                record["_crawl"] = crawl
                yield record
            inputs.append({"path": str(path), "crawl": crawl, "records": count})
            self.count(context, "records", count)


def _moment(value: Any) -> float | None:
    """An ISO 8601 time (``2026-01-02T03:04:05Z``) as a POSIX timestamp; None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


class TooLong(Step):
    """Leaves out a document whose text is longer than ``max_chars`` (``too_long``, with its length) as soon
    as it is read: every later step costs memory in proportion to the text, and the record is let go here."""

    name = "size"

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        for record in records:
            text = record.get("text")
            if isinstance(text, str) and len(text) > self.max_chars:
                self.drop(record, "too_long", context, crawl=record.get("_crawl"), chars=len(text),
                          max_chars=self.max_chars)
                continue
            yield record


class NewestVersion(Step):
    """A series of crawls of one site (a recurring job's runs) holds several versions of a URL: the newest
    is kept (by ``fetched_at``, then the later input, then the later line); the others are left out as
    ``older_version``. A tombstone (``change: removed``) removes its URL: every version fetched no later
    than the tombstone's ``last_seen`` (a tombstone without it: every version) is left out as
    ``removed_later``, whatever the order of the inputs; a version fetched after it (the page came back)
    stays. ``unseen`` proves nothing and removes nothing. Sees every record first (spilled to a temporary
    file, memory holds one small entry per URL)."""

    name = "versions"

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        newest: dict[str, tuple[tuple[float, int], str]] = {}  # url -> ((fetched, order), spill key)
        removed: dict[str, float] = {}  # url -> the latest time a tombstone says it was gone by
        with Spill() as spill:
            for order, record in enumerate(records):
                url = record.get("url")
                if not isinstance(url, str) or record.get("outcome") in ("failed", "filtered"):
                    yield record  # Normalise says what is wrong with it
                    continue
                if record.get("change") in TOMBSTONES:
                    if record.get("change") == "removed":
                        gone = _moment(record.get("last_seen"))
                        removed[url] = max(removed.get(url, float("-inf")), float("inf") if gone is None else gone)
                    yield record  # dropped as a tombstone by Normalise
                    continue
                fetched = _moment(record.get("fetched_at"))
                rank = (float("-inf") if fetched is None else fetched, order)
                key = str(order)
                spill.put(key, record)
                kept = newest.get(url)
                if kept is None or rank > kept[0]:
                    if kept is not None:
                        self._older(spill.get(kept[1]), context)
                    newest[url] = (rank, key)
                else:
                    self._older(record, context)
            for url, ((fetched, _), key) in newest.items():
                record = spill.get(key)
                if url in removed and fetched <= removed[url]:
                    self.drop(record, "removed_later", context, crawl=record.get("_crawl"), fetched_at=record.get("fetched_at"))
                    continue
                yield record

    def _older(self, record: Record, context: FinishContext) -> None:
        self.drop(record, "older_version", context, crawl=record.get("_crawl"), fetched_at=record.get("fetched_at"))


class Normalise(Step):
    """A crawl record becomes an export row: normalised text, stable id, FineWeb's fields."""

    name = "normalise"

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        for record in records:
            crawl = record.get("_crawl") or record.get("crawl") or ""
            if record.get("change") in TOMBSTONES:  # a recurring crawl's page that is gone (or unseen)
                self.drop(record, f"tombstone_{record['change']}", context, crawl=crawl)
                continue
            problem = record_problem(record)
            if problem is not None:
                self.drop(record, "bad_record", context, crawl=crawl, field=problem[0], problem=problem[1])
                continue
            if not is_page(record):
                self.drop(record, "not_a_page", context, crawl=crawl, outcome=record.get("outcome"))
                continue
            url = record["url"]
            text = normalise_text(record.get("text") or "")
            if not text and isinstance(record.get("markdown"), str):
                # a crawl written with --fields url,title,markdown: the text is its Markdown's (an extraction
                # with no text has no Markdown either)
                text = normalise_text(plain_text(record["markdown"]))
            if not text:
                self.drop(record, "empty_text", context, crawl=crawl)
                continue
            digest = text_digest(text)
            removed = int(record.get("boilerplate_removed_chars") or 0)
            yield {
                "text": text,
                "id": document_id(url, digest),
                "url": url,
                "date": record.get("fetched_at") or record.get("date") or None,
                "title": record.get("title") or None,
                "site": site_of_url(url),
                "crawl": crawl,
                "ai_opt_out": sorted(str(s) for s in (record.get("ai_opt_out") or [])),
                "_digest": digest,  # the exact-duplicate key (of the text before PII replacement)
                "_code_addresses": code_literals(record.get("markdown") if isinstance(record.get("markdown"), str) else None),
                "_crawl_quality": {
                    "template_removed_fraction": round(removed / (removed + len(text)), 4) if removed else 0.0,
                    "extraction_method": record.get("method") or None,
                    "extraction_confidence": None if record.get("confidence") is None else float(record["confidence"]),
                    "flags": [str(f) for f in (record.get("flags") or [])],
                },
            }


class OptOutPolicy(Step):
    """Pages that opted out of AI training are left out (reason ``ai_opt_out``), unless ``include``."""

    name = "optout"

    def __init__(self, include: bool = False) -> None:
        self.include = include

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        for record in records:
            if record["ai_opt_out"]:
                if not self.include:
                    _drop(self, record, "ai_opt_out", context, signals=record["ai_opt_out"])
                    continue
                self.count(context, "included_opted_out")
            yield record


class Language(Step):
    name = "language"

    def __init__(self, max_chars: int = 2_000, identifier: LanguageIdentifier | None = None) -> None:
        self.max_chars = max_chars
        self.identifier = identifier

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        identifier = self.identifier
        for record in records:
            if identifier is None:
                identifier = self.identifier = LanguageIdentifier(self.max_chars)  # loaded on first use
            record["language"], record["language_score"] = identifier.identify(record["text"])
            yield record


class Quality(Step):
    """Gopher signals of the text plus what the crawl knew (template share, extraction method, flags)."""

    name = "quality"

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        for record in records:
            signals = quality_signals(record["text"])
            record["word_count"] = signals["words"]
            record["quality"] = {**signals, **record.pop("_crawl_quality", {})}
            yield record


class Filters(Step):
    """The optional filters; with the defaults nothing is left out here."""

    name = "filters"

    def __init__(self, params: FilterParams | None = None) -> None:
        self.params = params or FilterParams()

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        p = self.params
        for record in records:
            reason, detail = self._failure(record, p)
            if reason is None:
                yield record
            else:
                _drop(self, record, reason, context, **detail)

    @staticmethod
    def _failure(record: Mapping[str, Any], p: FilterParams) -> tuple[str | None, dict[str, Any]]:
        if p.min_confidence:
            confidence = record["quality"].get("extraction_confidence")
            if confidence is None:
                return "confidence_missing", {}
            if confidence < p.min_confidence:
                return "confidence_too_low", {"confidence": confidence}
        if p.min_words and record["word_count"] < p.min_words:
            return "too_few_words", {"words": record["word_count"]}
        if p.languages and record["language"] not in p.languages:
            return "language_not_selected", {"language": record["language"]}
        if p.min_language_score and record["language_score"] < p.min_language_score:
            return "language_score_too_low", {"language": record["language"], "score": record["language_score"]}
        if p.gopher:
            failed = gopher_failures(record["quality"], p.gopher_params, record["language"])
            if failed:
                return failed[0], {"failed": failed}
        return None, {}


class Pii(Step):
    """Email and public IP addresses replaced by placeholders (counted), unless ``keep``."""

    name = "pii"

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        for record in records:
            in_code = record.pop("_code_addresses", frozenset())
            if not self.keep:
                record["text"], counts = replace_pii(record["text"], keep=in_code)
                for kind, n in counts.items():
                    self.count(context, f"replaced/{kind}", n)
            yield record


def _keep_key(record: Mapping[str, Any]) -> tuple[int, str, str, str, str]:
    return (len(record["url"]), record["url"], record["id"], record.get("date") or "", record.get("crawl") or "")


class ExactDedup(Step):
    """Sees every document, then passes them on in keep order, leaving out the ones whose normalised text
    (case and whitespace folded) an earlier-kept document or an earlier export already has.

    Must be followed directly by :class:`NearDedup`, which adds each kept document to the index before
    this step moves on (the runner's steps are lazy generators, so they take turns per document)."""

    name = "exact"

    def __init__(self, index: DedupIndex, run_id: str) -> None:
        self.index = index
        self.run_id = run_id

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        keys: list[tuple[tuple[int, str, str, str, str], str]] = []
        with Spill() as spill:
            for number, record in enumerate(records):
                spill.put(str(number), record)
                keys.append((_keep_key(record), str(number)))
            keys.sort()
            for _, key in keys:
                record = spill.get(key)
                record["_digest"] = digest = record.get("_digest") or text_digest(record["text"])
                match = self.index.exact(digest)
                if match is not None:
                    reason = "exact_duplicate" if match[1] == self.run_id else "already_exported"
                    _drop(self, record, reason, context, of=match[0])
                    continue
                yield record


class NearDedup(Step):
    """MinHash LSH (FineWeb's 14 bands of 8 rows over word 5-grams): a document sharing a band with one in
    the index is left out (``near_duplicate``, with the estimated similarity); the others are added."""

    name = "near"

    def __init__(self, index: DedupIndex, run_id: str, params: NearDedupParams | None = None) -> None:
        self.index = index
        self.run_id = run_id
        self.params = params or NearDedupParams()
        self.hasher = MinHasher(self.params)

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        hasher = self.hasher
        for record in records:
            digest = record.pop("_digest", None) or text_digest(record["text"])
            signature = hasher.signature(record["text"])
            bands = hasher.band_keys(signature) if signature is not None else []
            best: tuple[float, str, str] | None = None
            for doc_id, run, other in self.index.candidates(bands):
                if doc_id == record["id"] or not other:
                    continue
                similarity = round(hasher.similarity(signature, other), 4)  # type: ignore[arg-type]
                if similarity >= self.params.min_jaccard and (best is None or (-similarity, doc_id) < (-best[0], best[1])):
                    best = (similarity, doc_id, run)
            if best is not None:
                _drop(self, record, "near_duplicate", context, of=best[1], similarity=best[0],
                      earlier_export=best[2] != self.run_id)
                continue
            self.index.add(record["id"], record["url"], digest, bands, signature, self.run_id)
            self.count(context, "indexed")
            yield record


def _row(record: Mapping[str, Any]) -> dict[str, Any]:
    return {name: record.get(name) for name in ROW_FIELDS}


class ShardWriter(Step):
    """Rows to ``<folder>/data/train-NNNNN-of-MMMMM.parquet`` (zstd, row groups of ``row_group_rows``) or
    ``.jsonl``; shards appear under their final names only once the last row is written."""

    name = "write"

    def __init__(self, folder: str | Path, params: ExportParams) -> None:
        self.folder = Path(folder) / "data"
        self.params = params

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        self.folder.mkdir(parents=True, exist_ok=True)
        summary = context.report.setdefault("export", {})
        languages: Counter = Counter()
        sites: Counter = Counter()
        crawls: Counter = Counter()
        first_date = last_date = ""
        words = 0
        parts: list[Path] = []
        writer: Any = None
        batch: list[dict[str, Any]] = []
        in_shard = 0
        try:
            for record in records:
                if writer is None or in_shard >= self.params.shard_size:
                    if writer is not None:
                        self._flush(writer, batch)
                        writer.close()
                    part = self.folder / f".part-{len(parts):05d}.tmp"
                    parts.append(part)
                    writer, in_shard = self._open(part), 0
                batch.append(_row(record))
                in_shard += 1
                if len(batch) >= self.params.row_group_rows:
                    self._flush(writer, batch)
                languages[record.get("language") or "unknown"] += 1
                sites[record["site"]] += 1
                crawls[record["crawl"]] += 1
                words += record.get("word_count") or 0
                date = record.get("date")
                if date:
                    first_date = min(first_date or date, date)
                    last_date = max(last_date, date)
                self.count(context, "rows")
                yield record
            if writer is not None:
                self._flush(writer, batch)
                writer.close()
                writer = None
        except BaseException:
            if writer is not None:
                writer.close()
            for part in parts:
                part.unlink(missing_ok=True)
            raise
        suffix = "parquet" if self.params.format == "parquet" else "jsonl"
        final = [self.folder / f"train-{i:05d}-of-{len(parts):05d}.{suffix}" for i in range(len(parts))]
        for stale in self.folder.glob("train-*-of-*.*"):  # an earlier export into the same folder
            if stale not in final and stale.suffix in (".parquet", ".jsonl"):
                stale.unlink()
        for part, target in zip(parts, final):
            os.replace(part, target)
        summary.update(shards=[str(p.relative_to(self.folder.parent)) for p in final], documents=sum(crawls.values()),
                       words=words, languages=dict(languages.most_common()), sites=dict(sorted(sites.items())),
                       crawls=dict(sorted(crawls.items())),
                       dates=[first_date, last_date] if first_date else [])

    def _open(self, part: Path) -> Any:
        if self.params.format == "jsonl":
            return _JsonlShard(part)
        import pyarrow.parquet as pq

        return pq.ParquetWriter(str(part), parquet_schema(), compression="zstd",
                                compression_level=self.params.zstd_level)

    @staticmethod
    def _flush(writer: Any, batch: list[dict[str, Any]]) -> None:
        if not batch:
            return
        if isinstance(writer, _JsonlShard):
            writer.write(batch)
        else:
            import pyarrow as pa

            writer.write_table(pa.Table.from_pylist(batch, schema=parquet_schema()))
        batch.clear()


class _JsonlShard:
    def __init__(self, path: Path) -> None:
        self._handle = open(path, "w", encoding="utf-8", newline="\n")

    def write(self, rows: list[dict[str, Any]]) -> None:
        self._handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)

    def close(self) -> None:
        self._handle.close()


@functools.lru_cache(maxsize=1)
def parquet_schema() -> Any:
    """The rows' Arrow schema, every shard the same (built on first use: pyarrow is imported only then)."""
    import pyarrow as pa

    quality = [pa.field(name, pa.int64() if name in ("words", "stop_words") else pa.float64())
               for name in QUALITY_FIELDS]
    quality += [pa.field("template_removed_fraction", pa.float64()), pa.field("extraction_method", pa.string()),
                pa.field("extraction_confidence", pa.float64()),
                pa.field("flags", pa.list_(pa.string()))]
    return pa.schema([
        pa.field("text", pa.string()), pa.field("id", pa.string()), pa.field("url", pa.string()),
        pa.field("date", pa.string()), pa.field("title", pa.string()), pa.field("site", pa.string()),
        pa.field("crawl", pa.string()), pa.field("language", pa.string()),
        pa.field("language_score", pa.float64()), pa.field("word_count", pa.int64()),
        pa.field("quality", pa.struct(quality)), pa.field("ai_opt_out", pa.list_(pa.string())),
    ])
