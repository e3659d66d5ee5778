"""Finishing steps: each takes records and yields records, and counts what it dropped and why.

Modelled on datatrove's ``PipelineStep``: a step is an object with ``run(records, context)`` returning an
iterator; :func:`run_steps` chains them lazily, so a pass streams from the first reader to the last
writer. A step that must see every record before it can decide (the final template model, duplicates,
sort) spills what it received to a temporary file (:class:`Spill`), so memory holds offsets and
counts, not records. Pure Python: no Scrapy import.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import output_writer
from boilerstrip.boilerplate.finish import dump_record
from boilerstrip.recrawl import TOMBSTONES
from boilerstrip.state import crawl_layout

__all__ = ["finishing_inputs", "Record", "Dropped", "FinishContext", "Step", "run_steps", "Spill", "is_page", "dump_record",
           "read_jsonl", "records_file_problem", "refused_records_input", "EMPTY", "count_lines"]

Record = dict[str, Any]

#: signal: finishing_inputs() -> dict, sent by the finishing extension once the engine started. A component
#: with something for the finishing pass answers with it: ``{"recrawl": facts}`` (an object with
#: ``facts_for(url)`` and ``close()``: what each page showed, RecrawlMiddleware) or ``{"learned": bool}``
#: (every page went into a state that outlives the run, CrossPageBoilerplatePipeline). So the extension
#: looks no other component up.
finishing_inputs = object()

#: records with these outcomes are not pages: steps that work on pages pass them through untouched
NOT_PAGES = ("failed", "filtered")
#: nor are the tombstones of a recurring crawl (``change`` removed/unseen: a page of an earlier crawl)


def is_page(record: Mapping[str, Any]) -> bool:
    url = record.get("url")
    return (isinstance(url, str) and bool(url) and record.get("outcome") not in NOT_PAGES
            and record.get("change") not in TOMBSTONES)


@dataclass(frozen=True)
class Dropped:
    url: str
    reason: str  # short machine-readable reason, e.g. exact_duplicate
    step: str
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class FinishContext:
    """What the steps of one pass share: the drops (the ledger turns them into filtered:<reason>), counts
    per step, report sections, and the state backend when the pass has one."""

    state: Any = None  # boilerstrip.state.State, or None
    dropped: list[Dropped] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    report: dict[str, Any] = field(default_factory=dict)
    invalid_lines: list[int] = field(default_factory=list)
    #: a ``concurrent.futures.Executor`` (the crawl's worker processes) for per-record pure work that
    #: steps can run ahead of the record stream; None: on the calling thread
    executor: Any = None
    #: the name of the step that raised, when one did (set by :func:`run_steps`; the pass names it)
    failed_step: str | None = None

    def dropped_by_url(self) -> dict[str, str]:
        return {d.url: d.reason for d in self.dropped}


class Step:
    """Base class of a finishing step. ``name`` keys its counts (``<name>/<what>``)."""

    name = "step"

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        raise NotImplementedError

    def drop(self, record: Mapping[str, Any], reason: str, context: FinishContext, **detail: Any) -> None:
        context.dropped.append(Dropped(str(record.get("url") or ""), reason, self.name, detail))
        self.count(context, f"dropped/{reason}")

    def count(self, context: FinishContext, what: str, n: int = 1) -> None:
        if n:
            context.counts[f"{self.name}/{what}"] += n


def run_steps(records: Iterable[Record], steps: Iterable[Step], context: FinishContext) -> Iterator[Record]:
    """Chain ``steps`` over ``records``; nothing runs until the result is iterated."""
    stream: Iterable[Record] = records
    for step in steps:
        stream = _named(step.run(stream, context), step.name, context)
    return iter(stream)


def _named(stream: Iterable[Record], name: str, context: FinishContext) -> Iterator[Record]:
    """``stream``, noting ``name`` as the failed step when it raises (the innermost step notes it first)."""
    try:
        yield from stream
    except Exception:
        if context.failed_step is None:
            context.failed_step = name
        raise


_BOM = b"\xef\xbb\xbf"


def read_jsonl(path: str | Path, context: FinishContext | None = None) -> Iterator[Record]:
    """The JSON objects of a JSONL file, in order; other lines are skipped and their numbers noted. A
    leading UTF-8 byte order mark is not part of the first record."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            if not raw.strip():
                continue
            try:
                value = json.loads(raw.decode("utf-8", errors="replace"))
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                yield value
            elif context is not None:
                context.invalid_lines.append(number)


def count_lines(path: str | Path) -> int:
    """The lines of a file (a pass's progress total), counted in 1 MiB chunks; OSError when unreadable."""
    count = 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            count += chunk.count(b"\n")
    return count


#: how much of a file :func:`records_file_problem` reads to tell what it is
SNIFF_BYTES = 1 << 16
#: ... and how many of its first complete lines it looks at
SNIFF_LINES = 20
#: the keys of a crawl's ledger line (``OUT.ledger.jsonl``): URL outcomes, not records
_LEDGER_KEYS = frozenset({"url", "outcome", "reason", "detail"})
EMPTY = "empty"


def records_file_problem(path: str | Path, url_of: Callable[[dict], Any] | None = None) -> str | None:
    """None when ``path`` looks like records (JSONL, one object a line, with a ``url``), else what it looks
    like instead, for a one-line refusal: ``"a crawl's ledger (OUT.ledger.jsonl: ...)"``, ``"an HTML
    page"``, ``"being written by another run (pid N)..."`` (a crawl in progress), :data:`EMPTY` (the caller decides whether an empty file is fine). Reads at most
    ``SNIFF_BYTES``: a record longer than that is taken on trust. ``url_of``: where a record's URL is (default
    its ``url``; ``check`` reads other tools' shapes too)."""
    path = Path(path)
    if not path.exists():
        part = crawl_layout(path).part
        if part.is_file():  # a crawl that never finished: stopped by a second signal, killed, a full disk
            writer = output_writer(path)
            if writer is not None:
                return f"not there yet: a crawl is writing {part.name} ({writer}); wait for it to end"
            return (f"not there, but {part.name} is: the crawl that writes it did not finish; the same crawl "
                    f"command with --resume completes it (or read {part.name} as it is)")
        return "not there (no such file)"
    writer = output_writer(path)
    if writer is not None:  # its output_lock is held: a crawl in progress, whose finishing pass rewrites it whole
        return f"being written by another run ({writer}); wait for it to end"
    if path.is_dir():
        inside = sorted(p.name for p in path.glob("*.jsonl") if not p.name.endswith((".ledger.jsonl", ".deadletter.jsonl")))
        hint = f"; its records: {', '.join(inside[:5])}" if inside else ""
        return f"a folder, not a file{hint}"
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
            whole = not handle.read(1)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if head.startswith(_BOM):
        head = head[len(_BOM):]
    if not head.strip():
        return EMPTY
    if head[:2] == b"\x1f\x8b":  # (it said "binary data")
        plain = path.name[:-3] if path.name.endswith(".gz") else path.name + ".jsonl"
        return f"gzip-compressed: boilerstrip reads plain JSON lines (zcat {path.name} > {plain})"
    if b"\x00" in head:
        return "binary data, not JSON lines"
    text = head.decode("utf-8", errors="replace")
    first = text.lstrip()[:1]
    if first == "<":
        return "an HTML or XML page, not JSON lines"
    if first == "[":
        return "a JSON array, not JSON lines (one record a line)"
    if first != "{":
        return "text that is not JSON lines"
    lines = text.splitlines()
    if not whole and not text.endswith("\n"):
        lines = lines[:-1]  # cut off at SNIFF_BYTES
    if not lines:
        return None  # one record longer than SNIFF_BYTES: taken on trust
    objects = []
    for line in lines[:SNIFF_LINES]:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        objects.append(value)
    if not any(isinstance(v, dict) for v in objects):
        document = None
        if whole:
            try:
                document = json.loads(text)
            except ValueError:
                pass
        if isinstance(document, dict) and "finish_reason" in document and "run_id" in document:
            return "a crawl's manifest (OUT.manifest.json), not its records: give OUT.jsonl beside it"
        if isinstance(document, dict):
            return "one JSON document, not JSON lines (one record a line)"
        return "text that is not JSON lines"
    records = [v for v in objects if isinstance(v, dict)]
    if all("outcome" in v and set(v) <= _LEDGER_KEYS for v in records):
        return "a crawl's ledger (OUT.ledger.jsonl: URL outcomes), not its records: give OUT.jsonl beside it"
    url_of = url_of or (lambda record: record.get("url"))
    if not any(isinstance(url_of(v), str) for v in records):
        return "JSON lines without a url field, not a crawl's records"
    return None


def refused_records_input(path: str | Path, prog: str, then: str = "") -> bool:
    """A command's check of an input that must be a crawl's records (``dedup``, ``chunk``, ``export``): True,
    with the reason on stderr (``{prog}: PATH is WHAT{then}``), when it is not one and the command exits 2
    before writing anything; an empty file is a crawl that wrote nothing, noted and taken."""
    problem = records_file_problem(path)
    if problem == EMPTY:
        print(f"{prog}: note: {path} is empty (a crawl that wrote nothing)", file=sys.stderr)
    elif problem is not None:
        print(f"{prog}: {path} is {problem}{then}", file=sys.stderr)
        return True
    return False


class Spill:
    """Records written once to a temporary file and read back by key: a step that needs every record
    before it decides keeps ``key -> (offset, end)`` in memory, not the records.

    A record is pickled, not JSON-encoded: the file lives only as long as this object, in this process, and
    the round trip gives back the same values (lone surrogates included) at a fraction of the cost (JSON
    was a third of the finishing pass's own time on sqlite3-doc: each record spills twice)."""

    def __init__(self, folder: str | Path | None = None) -> None:
        fd, name = tempfile.mkstemp(prefix=".boilerstrip-spill-", suffix=".pickle", dir=folder)
        os.unlink(name)  # the file lives as long as the handle: nothing is left behind after a crash
        self._handle = os.fdopen(fd, "w+b")
        self._spans: dict[str, tuple[int, int]] = {}  # key -> (offset, end) of its record in the file
        self._end = 0

    def put(self, key: str, record: Mapping[str, Any], replace: Callable[[Record, Record], bool] | None = None) -> None:
        """Store ``record`` under ``key``; when the key is taken, ``replace(old, new)`` decides (default: keep old)."""
        if key in self._spans and (replace is None or not replace(self.get(key), dict(record))):
            return
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        self._handle.seek(self._end)
        self._handle.write(data)
        self._spans[key] = (self._end, self._end + len(data))
        self._end += len(data)

    def get(self, key: str) -> Record:
        self._handle.seek(self._spans[key][0])
        return pickle.load(self._handle)

    def get_pickled(self, key: str) -> bytes:
        """The record under ``key`` as stored (pickled): what a worker process is sent, unpickled only there."""
        start, end = self._spans[key]
        self._handle.seek(start)
        return self._handle.read(end - start)

    def __contains__(self, key: object) -> bool:
        return key in self._spans

    def keys(self) -> list[str]:
        return list(self._spans)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "Spill":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
