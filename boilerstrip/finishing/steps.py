"""The finishing steps of a crawl: final template model and clean, duplicates, sort, report, write.

The order :func:`crawl_steps` builds: ``TemplateStep`` (one record per URL, the final per-site model from
every page plus the state's counts, each page cleaned with it; yields pages in keep order) ->
``MarkDuplicates`` (exact copies of an earlier-kept page dropped, near duplicates marked) -> ``SortByUrl`` ->
``TemplateReport`` (writes ``template-report.json``/``.txt``) -> ``WriteJsonl`` -> ``ReconcileLedger`` (a
crawl's ledger and manifest brought in line with what was written, once the file is in place). The same set
of records gives byte-identical output in any input order.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import atomic_open
from boilerstrip.boilerplate.blocks import blocks_of_record, cluster_of_url, site_of_url
from boilerstrip.boilerplate.duplicates import (EXACT_DUPLICATE, DuplicateIndex, keep_order,
                                                text_signature)
from boilerstrip.boilerplate.finish import (REPORT_JSON, REPORT_TXT, ReportBuilder, clean_record, has_trail,
                                            mark_duplicate, model_hashes, report_text)
from boilerstrip.boilerplate.model import TemplateModel
from boilerstrip.boilerplate.params import BoilerplateParams, DuplicateParams
from boilerstrip.items import compact_record, without_trail
from boilerstrip.ledger import reconcile_output
from boilerstrip.recrawl import TOMBSTONES

from .base import FinishContext, Record, Spill, Step, dump_record, is_page

#: records whose signatures MarkDuplicates computes ahead in the worker pool, ``_BATCH`` texts a job (enough
#: to keep 2 workers busy while this thread cleans the next records, in jobs big enough that sending them
#: costs less than the MinHash: docbook-xsl-doc-html's short pages were slower one text a job)
_AHEAD = 64
_BATCH = 16
#: transient record key: ``(DuplicateParams, text, Signature)``, the MinHash signature of the record's cleaned
#: text, worked out by TemplateStep in the job that cleaned it; MarkDuplicates takes it off the record
SIGNATURE_KEY = "_boilerstrip_text_signature"

__all__ = ["TemplateStep", "MarkDuplicates", "SortByUrl", "TemplateReport", "WriteJsonl", "ReconcileLedger", "crawl_steps",
           "select_fields",
           "field_list", "SIGNATURE_KEY", "TOMBSTONE_FIELDS", "PassProgress", "PassInterrupted", "CountProgress",
           "PROGRESS_EVERY_S", "ProgressTicker"]


def _sorts_after(old: Record, new: Record) -> bool:
    """Of two records of one URL the one whose bytes sort last is kept: order-independent."""
    return dump_record(new, []) > dump_record(old, [])


def load_state_counts(model: TemplateModel, state: Any, site: str, crawled: Iterable[str], min_pages: int = 1) -> int:
    """Add the state's counts of ``site`` to ``model``, minus the stored versions of the ``crawled`` URLs
    (their versions from this crawl are in the model already); with ``min_pages``, only the blocks on at
    least that many pages (then ``crawled`` must be empty: a subtraction needs every count). Returns the
    stored pages counted."""
    templates = state.templates
    pages, blocks = templates.site_counts(site, min_pages) if min_pages > 1 else templates.site_counts(site)
    if not pages:
        return 0
    model.add_counts(site, None, pages, blocks)
    clusters = templates.cluster_counts(site, min_pages) if min_pages > 1 else templates.cluster_counts(site)
    for cluster, (cluster_pages, cluster_blocks) in clusters.items():
        model.add_counts(site, cluster, cluster_pages, cluster_blocks)
    for url in crawled:
        stored = templates.get_page(site, url)
        if stored is not None:
            model.remove_page(site, stored[0], stored[1])
            pages -= 1
    return pages


def _spill_pages(records: Iterable[Record], spill: Spill) -> list[Record]:
    """Every page into ``spill`` by URL (one record per URL, see :func:`_sorts_after`); the other records
    (failed/filtered, tombstones) are returned as they came."""
    others: list[Record] = []
    for record in records:
        if is_page(record):
            spill.put(record["url"], record, replace=_sorts_after)
        else:
            others.append(record)
    return others


class TemplateStep(Step):
    """The final template model over the whole crawl, then every page cleaned with it."""

    name = "template"

    def __init__(self, params: BoilerplateParams | None = None, learned: bool = False,
                 sign: DuplicateParams | None = None) -> None:
        self.params = params or BoilerplateParams()
        #: the duplicates step's parameters when one follows: a worker that cleans a page works out the
        #: cleaned text's signature in the same job, and the record carries it to that step
        #: (``SIGNATURE_KEY``, which takes it off), so the text does not travel back to a worker
        self.sign = sign
        #: the crawl's pipeline put every page's hashes in ``context.state`` (``CrossPageBoilerplatePipeline``
        #: learns each page as it passes): the state's counts are then the final model, and no record is
        #: read to build it (the per-page hashes are computed once, during the crawl)
        self.learned = learned

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        params = self.params
        with Spill() as spill:
            others = _spill_pages(records, spill)
            urls = sorted(spill.keys())
            model = TemplateModel()
            by_site: dict[str, list[str]] = {}
            for url in urls:
                by_site.setdefault(site_of_url(url), []).append(url)
            stored = 0
            for site in sorted(by_site):
                stored += self._site_model(model, site, by_site[site], spill, context)
            builder = ReportBuilder()
            context.report["template"] = {"model": model, "builder": builder, "stored_pages": stored,
                                          "params": params}
            self.count(context, "pages", len(urls))
            self.count(context, "stored_pages_used", stored)
            ordered = sorted(urls, key=keep_order)
            cleaned = (self._cleaned_in_pool(ordered, spill, model, context.executor) if context.executor is not None
                       else ((*clean_record(spill.get(url), url, model, params), None) for url in ordered))
            for url, (record, result, site, cluster, signature) in zip(ordered, cleaned):
                builder.add(url, site, cluster, result)
                if not has_trail(record):
                    self.count(context, "kept_as_written")  # lean: template removal not redone
                if signature is not None:
                    record[SIGNATURE_KEY] = (self.sign, record.get("text"), signature)
                yield record
        yield from others

    def _cleaned_in_pool(self, urls: list[str], spill: Spill, model: TemplateModel, executor: Any) -> Iterator[Any]:
        """``clean_record`` of each URL's record, in order, computed in ``executor``'s worker processes
        ``_BATCH`` records a job, ``_AHEAD`` records ahead: the model goes to each worker once, through a
        file (a job carries only its records)."""
        with tempfile.TemporaryDirectory(prefix="boilerstrip-model-") as folder:
            path = str(Path(folder) / "model.pickle")
            with open(path, "wb") as handle:
                pickle.dump((model, self.params), handle, protocol=pickle.HIGHEST_PROTOCOL)
            # each record goes as the spill holds it (pickled): unpickled in the worker, not here and again
            batches = _batches_ahead(((url, spill.get_pickled(url)) for url in urls), executor,
                                     lambda batch: executor.submit(clean_records, path, batch, self.sign))
            for batch, future in batches:
                yield from self._resolved_clean(batch, future, model)

    def _resolved_clean(self, batch: list[tuple[str, Record]], future: Any, model: TemplateModel) -> Iterator[Any]:
        try:
            yield from future.result()
        except Exception:  # noqa: BLE001 - a dead worker process costs time here, never the pages
            for url, pickled in batch:
                yield (*clean_record(pickle.loads(pickled), url, model, self.params), None)

    def _site_model(self, model: TemplateModel, site: str, urls: list[str], spill: Spill,
                    context: FinishContext) -> int:
        """Add ``site``'s final counts to ``model``; returns the pages counted from the state beyond ``urls``."""
        state = context.state
        min_count = self.params.min_model_count()
        if self.learned and state is not None:
            pages = load_state_counts(model, state, site, (), min_count)
            if pages >= len(urls):
                self.count(context, "model_from_state")
                return pages - len(urls)
            model.forget_site(site)  # the state lacks some of the pages: count them from the records
        for url in urls:
            record = spill.get(url)
            if has_trail(record):  # a lean record's text is cleaned already: it teaches the model nothing
                model.add_page(site, cluster_of_url(url), model_hashes(record, blocks_of_record(record), self.params))
        stored = load_state_counts(model, state, site, urls) if state is not None else 0
        model.prune(site, min_count)  # the same model as from the state: blocks on one page decide nothing
        return stored


#: the model a worker process loaded for the pass in progress (file path -> (model, params)); one at a time
_LOADED_MODELS: dict[str, Any] = {}


def clean_records(model_path: str, batch: list[tuple[str, bytes]], sign: DuplicateParams | None = None) -> list[Any]:
    """``clean_record`` of each (URL, pickled record) with the model pickled at ``model_path`` (one job of the
    worker pool; the model is read once per worker and pass), with the cleaned text's ``text_signature``
    under ``sign`` (None: not wanted). The clean results keep only their removed blocks: what the template
    report needs."""
    if model_path not in _LOADED_MODELS:
        _LOADED_MODELS.clear()
        with open(model_path, "rb") as handle:
            _LOADED_MODELS[model_path] = pickle.load(handle)
    model, params = _LOADED_MODELS[model_path]
    out = []
    for url, pickled in batch:
        cleaned, result, site, cluster = clean_record(pickle.loads(pickled), url, model, params)
        result = dataclasses.replace(result, blocks=[b for b in result.blocks if b["removed"]], kept=[])
        signature = text_signature(cleaned.get("text") or "", sign) if sign is not None and is_page(cleaned) else None
        out.append((cleaned, result, site, cluster, signature))
    return out


class MarkDuplicates(Step):
    """Drops a page whose cleaned text is an exact copy of a page kept before it (reason
    ``exact_duplicate``); a near duplicate (MinHash) is a page of its own, kept and marked
    (``duplicate_of``, ``duplicate_similarity``, flag ``near_duplicate``), and dropped only with
    ``DuplicateParams.drop_near`` (``--drop-duplicates``).

    Expects pages in keep order (shortest URL first, as :class:`TemplateStep` yields them), so the page
    kept of a group is the same whatever the crawl order."""

    name = "duplicates"

    def __init__(self, params: DuplicateParams | None = None) -> None:
        self.params = params or DuplicateParams()

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        index = DuplicateIndex(self.params)
        last: tuple[int, str] | None = None
        dropped: list[dict[str, Any]] = []
        marked: list[dict[str, Any]] = []
        context.report["duplicates"] = {"dropped": dropped, "marked": marked, "params": self.params}
        for record, signature in self._signed(records, context):
            if not is_page(record):
                yield record
                continue
            url = record["url"]
            if last is not None and keep_order(url) < last:
                raise ValueError("MarkDuplicates needs pages in keep order (TemplateStep yields them so)")
            last = keep_order(url)
            dup = index.check_and_add(url, record.get("text") or "", signature)
            if dup is None:
                yield record
                continue
            entry = {"url": url, "reason": dup.reason, "of": dup.of, "similarity": dup.similarity}
            if dup.reason == EXACT_DUPLICATE or self.params.drop_near:
                dropped.append(entry)
                self.drop(record, dup.reason, context, of=dup.of, similarity=dup.similarity)
                continue
            marked.append(entry)
            self.count(context, f"marked/{dup.reason}")
            yield {**record, **mark_duplicate(record, dup.of, dup.similarity, dup.reason)}

    def _signed(self, records: Iterable[Record], context: FinishContext) -> Iterator[tuple[Record, Any]]:
        """Each record with its text's signature: the one it carries (``SIGNATURE_KEY``), else computed ahead
        in ``context.executor`` when there is one (the MinHash is most of this step's work), ``_BATCH`` texts
        a job, ``_AHEAD`` records ahead; else None (computed when checked)."""
        if context.executor is None:
            for record in records:
                yield record, self._signed_before(record)
            return

        def submit(batch: list[Record]) -> Any:
            texts = [(r.get("text") or "") for r in batch if is_page(r) and self._signed_before(r, take=False) is None]
            return context.executor.submit(text_signatures, texts, self.params) if texts else None

        for batch, future in _batches_ahead(records, context.executor, submit):
            computed = iter(_signatures_of(future))
            for record in batch:
                if not is_page(record):
                    yield record, None
                    continue
                signature = self._signed_before(record)
                yield record, signature if signature is not None else next(computed, None)

    def _signed_before(self, record: Record, take: bool = True) -> Any:
        """The signature a step before this one worked out for ``record``'s text with these parameters, else
        None; ``take``: off the record (it is not written)."""
        entry = record.pop(SIGNATURE_KEY, None) if take else record.get(SIGNATURE_KEY)
        if entry is None or entry[0] != self.params or entry[1] != record.get("text"):
            return None
        return entry[2]


def _batches_ahead(items: Iterable[Any], executor: Any, submit: Any) -> Iterator[tuple[list[Any], Any]]:
    """``items`` in order, ``_BATCH`` at a time, each batch with the future ``submit(batch)`` returned, the
    jobs submitted up to ``_AHEAD`` items before their batch is handed on (so the workers run ahead of the
    caller, and memory holds at most that many items)."""
    window: deque[tuple[list[Any], Any]] = deque()
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= _BATCH:
            window.append((batch, submit(batch)))
            batch = []
            if len(window) * _BATCH >= _AHEAD:
                yield window.popleft()
    if batch:
        window.append((batch, submit(batch)))
    yield from window


def text_signatures(texts: list[str], params: DuplicateParams) -> list[Any]:
    """:func:`text_signature` of each text (one job of the worker pool)."""
    return [text_signature(text, params) for text in texts]


def _signatures_of(future: Any) -> list[Any]:
    """The signatures a job worked out (None: no job); none when the worker failed (each is then computed
    again when checked)."""
    if future is None:
        return []
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - a dead worker process costs time here, never the page
        return []


class SortByUrl(Step):
    """Pages sorted by URL, then the other records (failed/filtered) in a fixed order. ``lean``: the records
    are spilled, and passed on, without their trail (``TRAIL_FIELDS``), when no step after this one reads it
    (the large-page site's trail is 60 % of a record's bytes)."""

    name = "sort"

    def __init__(self, lean: bool = False) -> None:
        self.lean = lean

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        if self.lean:
            records = map(without_trail, records)
        with Spill() as spill:
            others = _spill_pages(records, spill)
            for url in sorted(spill.keys()):
                yield spill.get(url)
        yield from sorted(others, key=lambda r: dump_record(r, []))


class TemplateReport(Step):
    """Passes records through; when they are all through, writes the template report (when the pass has
    a template step) to ``folder`` and keeps it in ``context.report["template_report"]``."""

    name = "report"

    def __init__(self, folder: str | Path | None) -> None:
        self.folder = Path(folder) if folder is not None else None

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        yield from records
        template = context.report.get("template")
        if template is None:
            return
        dups = context.report.get("duplicates") or {}
        dropped = sorted(dups.get("dropped", []), key=lambda d: d["url"])
        marked = sorted(dups.get("marked", []), key=lambda d: d["url"])
        report = template["builder"].build(template["model"], dropped, template["params"],
                                           dups.get("params") or DuplicateParams(), template["stored_pages"], marked)
        report["invalid_lines"] = list(context.invalid_lines)
        context.report["template_report"] = report
        if self.folder is not None:
            with atomic_open(self.folder / REPORT_JSON, "w") as handle:
                handle.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
            with atomic_open(self.folder / REPORT_TXT, "w") as handle:
                handle.write(report_text(report))
            context.report["template_report_path"] = str(self.folder / REPORT_JSON)


#: what a tombstone line always keeps, whatever fields are selected: without them it reads as a page
TOMBSTONE_FIELDS = ("url", "change", "reason", "last_seen")


def select_fields(record: Record, fields: Sequence[str] | None) -> Record:
    """The record with only ``fields`` (``FEED_EXPORT_FIELDS``, ``crawl --fields``), in that order; a
    tombstone keeps ``TOMBSTONE_FIELDS`` too. None: the whole record."""
    if not fields:
        return record
    keep = [*fields, *TOMBSTONE_FIELDS] if record.get("change") in TOMBSTONES else fields
    return {name: record[name] for name in dict.fromkeys(keep) if name in record}


def field_list(value: Any) -> list[str]:
    """``FEED_EXPORT_FIELDS`` as a list of names (a comma-separated string, a list, or Scrapy's dict form,
    whose keys are the names), ``url`` always first: the ledger and the next run read records by it."""
    if isinstance(value, str):
        value = value.split(",")
    names = [str(f).strip() for f in (value or []) if str(f).strip()]
    return ["url", *(n for n in dict.fromkeys(names) if n != "url")] if names else []


class WriteJsonl(Step):
    """Writes every record as one JSON line to ``path``, atomically: the file appears, whole, only once
    the last record is written (so ``path`` may be the pass's own input). Yields the records on.

    The records are written lean, without their block-by-block trail (``TRAIL_FIELDS``), unless ``trail``:
    this is where the crawl's intermediate records become its output."""

    name = "write"

    def __init__(self, path: str | Path, fields: Sequence[str] | None = None, trail: bool = False) -> None:
        self.path = Path(path)
        self.fields = list(fields) if fields else None
        self.trail = trail

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        with atomic_open(self.path, "w") as out:
            for record in records:
                out.write(dump_record(compact_record(select_fields(record if self.trail else without_trail(record),
                                                                   self.fields))) + "\n")
                self.count(context, "records")
                yield record


class ReconcileLedger(Step):
    """The last step of a crawl's pass: once the records are written (the step before it has put the file
    in place when its stream ends), each page a step dropped becomes ``filtered:<reason>`` in the crawl's
    ledger, and its manifest lists the file as written (:func:`boilerstrip.ledger.reconcile_output`).
    ``context.report["reconciled"]`` says whether every URL is still accounted for; an error fails the pass
    (as step ``ledger``)."""

    name = "ledger"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        yield from records
        context.report["reconciled"] = reconcile_output(self.path, context.dropped_by_url())


#: how often a long finishing pass says how far it got (FinishingExtension; a pass under this says nothing)
PROGRESS_EVERY_S = 5.0


class PassInterrupted(Exception):
    """The pass was asked to stop (``PassProgress.stop_asked``, e.g. Ctrl-C): what it would have written is
    not, and its input is left as it was (:class:`WriteJsonl` replaces a file only once it is whole)."""


@dataclasses.dataclass
class PassProgress:
    """How far a finishing pass got, for a line every ``PROGRESS_EVERY_S`` (the extension's ticker reads
    it from another thread: plain ints and strings, written by :class:`CountProgress` steps)."""

    total: int = 0  # the records of the crawl's output (0: unknown)
    phase: str = "reading"
    done: int = 0
    started: float = dataclasses.field(default_factory=time.monotonic)
    label: str = "finishing pass"
    #: phases with no count to show (work between two counters)
    uncounted: tuple[str, ...] = ("building the template model", "deduplicating", "sorting")
    #: seconds spent in each phase so far (the current one is added by :meth:`enter` and :meth:`finish`)
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    entered: float = dataclasses.field(default_factory=time.monotonic)
    #: set (to what asked, "SIGINT") to stop the pass: the next record a :class:`CountProgress` step passes
    #: on raises :class:`PassInterrupted` instead (a signal handler sets it; the pass holds the thread)
    stop_asked: str = ""

    def enter(self, phase: str, done: int = 0) -> None:
        """The pass goes on to ``phase``: the time since the last phase began is that phase's."""
        now = time.monotonic()
        self.seconds[self.phase] = self.seconds.get(self.phase, 0.0) + now - self.entered
        self.phase, self.done, self.entered = phase, done, now

    def finish(self) -> dict[str, float]:
        """Close the current phase; the seconds of each phase, rounded, in the order the pass went through
        them (what the log line, the stats and the manifest give)."""
        self.enter(self.phase, self.done)
        return {phase: round(seconds, 3) for phase, seconds in self.seconds.items()}

    def line(self) -> str:
        counted = self.phase not in self.uncounted
        of = f"/{self.total}" if self.total and counted else ""
        count = f" {self.done}{of}" if counted else ""
        return f"{self.label}: {self.phase}{count} ({time.monotonic() - self.started:.0f} s)"


class ProgressTicker:
    """Prints a pass's progress line on stderr every ``PROGRESS_EVERY_S`` while it runs (a thread: a crawl's
    pass runs on the reactor thread, which nothing else wakes meanwhile; export and dedup run it too)."""

    def __init__(self, progress: PassProgress, every_s: float = PROGRESS_EVERY_S) -> None:
        self.progress = progress
        self.every_s = every_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="boilerstrip-finishing-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self.every_s):
            print(f"[boilerstrip] {self.progress.line()}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=self.every_s)


class CountProgress(Step):
    """Passes records on, counting them into ``progress`` under ``phase``; when its input is exhausted the
    phase becomes ``then`` (the work that follows before the next counter moves)."""

    name = "progress"

    def __init__(self, progress: PassProgress, phase: str, then: str | None = None) -> None:
        self.progress = progress
        self.phase = phase
        self.then = then

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        progress = self.progress
        count = 0
        for record in records:
            if progress.stop_asked:
                raise PassInterrupted(progress.stop_asked)
            count += 1
            if progress.phase != self.phase:
                progress.enter(self.phase)
            progress.done = count
            yield record
        if self.then:
            progress.enter(self.then)


def crawl_steps(
    out: str | Path | None,
    params: BoilerplateParams | None = None,
    dup_params: DuplicateParams | None = None,
    report_dir: str | Path | None = None,
    duplicates_enabled: bool = True,
    change: Step | None = None,
    learned: bool = False,
    trail: bool = False,
    fields: Sequence[str] | None = None,
    progress: PassProgress | None = None,
    reconcile: bool = False,
) -> list[Step]:
    """The finishing pass of a crawl, as ordered steps; ``out`` None: nothing written (records yielded).
    ``change`` (a :class:`boilerstrip.finishing.change.ChangeStep`) goes after the final clean and
    duplicates, so a page's change status is decided on its final text. ``learned``: see
    :class:`TemplateStep`. ``trail``: the output keeps the block-by-block trail (see :class:`WriteJsonl`).
    ``reconcile``: the crawl's ledger and manifest follow what was written (:class:`ReconcileLedger`, last)."""
    dup_params = dup_params or DuplicateParams()
    steps: list[Step] = [TemplateStep(params, learned=learned, sign=dup_params if duplicates_enabled else None)]
    if progress is not None:
        steps = [CountProgress(progress, "reading pages", then="building the template model"), *steps,
                 CountProgress(progress, "cleaning pages", then="sorting")]
    if duplicates_enabled:
        steps.append(MarkDuplicates(dup_params))
    if change is not None:
        steps.append(change)
    steps += [SortByUrl(lean=out is not None and not trail), TemplateReport(report_dir)]  # the writer drops it anyway
    if out is not None:
        steps.append(WriteJsonl(out, fields, trail=trail))
    if progress is not None:
        steps.append(CountProgress(progress, "writing records"))
    if out is not None and reconcile:
        steps.append(ReconcileLedger(out))
    return steps
