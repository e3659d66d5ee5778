"""Runs the finishing pass over the crawl's JSONL output when the crawl is over.

Connected to ``engine_stopped``, which Scrapy sends after every ``spider_closed`` handler has finished:
the feed file is complete and the ledger has written its lines by then, through public signals only.
The pass (``boilerstrip.finishing.crawl_steps``: final template model and clean, duplicates, sort, report,
write) rewrites the output in place, lean (without the block-by-block trail the crawl wrote for it, unless
``BOILERSTRIP_FEEDS_TRAIL``); its last step brings the ledger and manifest in line with what was
written (each dropped page becomes ``filtered:<reason>``). So ``scrapy crawl site -O out.jsonl``,
scrapyd and ``boilerstrip crawl`` all write the same records, report, ledger and manifest.

Only a crawl that *finished* is finished this way; one stopped early keeps its output as crawled (the
``--resume`` path continues it). Stats: ``boilerstrip/finishing/status`` is ``done``, ``skipped:<why>``,
``failed`` or ``mismatch``; ``boilerstrip/finishing/<step>/...`` are the steps' counts. Whatever error a step
raises (a full disk under the state folder is SQLite's ``database or disk is full``) fails the run: status
``failed``, exit 1, and the manifest says ``finished: false`` with ``finishing: {status, step, error}``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from boilerstrip.boilerplate import BoilerplateParams, DuplicateParams
from boilerstrip.atomicfile import atomic_write_json
from boilerstrip.config import ConfigError, component_enabled, params_from_settings
from boilerstrip.feeds import FeedParams
from boilerstrip.finishing import FinishContext, finish_crawl, finishing_inputs
from boilerstrip.finishing.change import ChangeStep
from boilerstrip.finishing.base import count_lines
from boilerstrip.finishing.steps import PassInterrupted, PassProgress, ProgressTicker, field_list
from boilerstrip.items import EXPORT_FIELDS
from boilerstrip.ledger import ledger_outcomes
from boilerstrip.recrawl import CUT_REASONS, RecrawlParams, digest_of_settings
from boilerstrip.state import StateParams, crawl_layout, feed_output, open_state
from boilerstrip.workers.pool import WorkerPool

__all__ = ["FinishingExtension", "STATUS", "mark_finishing_failed"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/finishing"
STATUS = f"{STATS}/status"


class FinishingExtension:
    def __init__(self, output: Path, settings: Any, stats: Any = None) -> None:
        self.output = output
        self.settings = settings
        self.stats = stats
        self.reason: str | None = None
        self.recrawl: Any = None  # the run's RecrawlMiddleware (what each page showed), when enabled
        #: the run's cross-page pipeline learned every page into a state that outlives it (the pass then takes
        #: the final model from that state instead of hashing every record again)
        self.learned = False
        self.workers: Any = None  # the crawl's WorkerPool: the pass computes MinHash signatures there
        #: the failed step and its error, once the pass failed (``{"step": ..., "error": ...}``)
        self.failure: dict[str, str] | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "FinishingExtension":
        if not component_enabled(crawler.settings, "finishing"):
            raise NotConfigured("BOILERSTRIP_FINISHING_ENABLED is false")
        output = feed_output(crawler.settings)
        if output is None:
            raise NotConfigured("no local JSONL feed to finish")
        ext = cls(output, crawler.settings, stats=crawler.stats)

        def engine_started() -> None:
            for _, answer in crawler.signals.send_catch_log(finishing_inputs):
                if isinstance(answer, dict):
                    ext.recrawl = answer.get("recrawl", ext.recrawl)
                    ext.learned = bool(answer.get("learned", ext.learned))
            ext.workers = WorkerPool.of(crawler)

        crawler.signals.connect(engine_started, signal=signals.engine_started, weak=False)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def _executor(self) -> Any:
        """The crawl's worker processes' executor (None: no process pool)."""
        if self.workers is not None and self.workers.params.pool == "process":
            return self.workers.executor
        return None

    def spider_closed(self, reason: str = "") -> None:
        self.reason = reason

    def engine_stopped(self) -> None:
        try:
            status = self.finish()
        except Exception as exc:  # never swallowed by Scrapy's signal dispatch: the run fails
            logger.exception("finishing pass failed")
            self.failure = self.failure or {"step": "pass", "error": f"{type(exc).__name__}: {exc}"}
            status = "failed"
        finally:
            if self.recrawl is not None:
                try:
                    self.recrawl.close()  # saves the pages' history (a full disk fails it here)
                except Exception as exc:  # noqa: BLE001 - as above
                    logger.error("finishing pass failed in step 'history': %s: %s", type(exc).__name__, exc)
                    self.failure = {"step": "history", "error": f"{type(exc).__name__}: {exc}"}
                    status = "failed"
        if self.failure is not None:
            mark_finishing_failed(crawl_layout(self.output).manifest, self.failure)
        if self.stats is not None:
            self.stats.set_value(STATUS, status)

    def finish(self) -> str:
        """Run the pass; returns the status (see the module doc)."""
        if self.reason is None:
            return "skipped:not_started"
        if self.reason != "finished":
            logger.warning("finishing pass skipped: the crawl did not finish (%s); %s left as crawled",
                           self.reason, _records_so_far(self.output))
            return f"skipped:{self.reason}"
        if not self.output.is_file():
            logger.warning("finishing pass skipped: %s was not written", self.output)
            return "skipped:no_output"
        if self.stats is not None and self.stats.get_value("boilerstrip/ledger/write_failed"):
            logger.warning("finishing pass skipped: the crawl's ledger could not be written; %s left as crawled",
                           self.output)
            return "skipped:ledger_not_written"
        if not component_enabled(self.settings, "boilerplate"):
            return "skipped:boilerplate_disabled"
        try:
            params = params_from_settings(self.settings, "boilerplate", BoilerplateParams)
            dup_params = params_from_settings(self.settings, "duplicates", DuplicateParams)
            state_params = params_from_settings(self.settings, "state", StateParams)
            trail = params_from_settings(self.settings, "feeds", FeedParams).trail
            change = self._change_step(crawl_layout(self.output))
        except ConfigError as exc:
            logger.error("finishing pass: %s", exc)
            self.failure = {"step": "settings", "error": str(exc)}
            return "failed"
        layout = crawl_layout(self.output)
        context = FinishContext(executor=self._executor())
        step = "state"
        try:
            total = count_lines(self.output)
        except OSError:
            total = 0  # no total on the progress line
        progress = PassProgress(total=total)
        ticker = ProgressTicker(progress) if component_enabled(self.settings, "progress") else None
        try:
            context.state = open_state(state_params, self.output)
            try:
                step = "pass"
                with stopped_by_signals(progress):
                    summary = finish_crawl(self.output, self.output, params, layout.report_dir, dup_params=dup_params,
                                           duplicates_enabled=component_enabled(self.settings, "duplicates"),
                                           context=context, change=change, learned=self.learned, trail=trail,
                                           fields=selected_fields(self.settings), progress=progress,
                                           reconcile=layout.manifest.exists())
                step = "state"
            finally:
                if ticker is not None:
                    ticker.stop()
                context.state.close()  # saves what the pass learned: a full disk fails it here
        except PassInterrupted as exc:
            logger.warning("finishing pass stopped by %s: %s is left as crawled", exc, self.output)
            _update_manifest(layout.manifest, {"finished": False, "finishing": {"status": "interrupted",
                                                                                "signal": str(exc)}},
                             "the interrupted finishing pass")
            if self.stats is not None:
                self.stats.set_value(f"{STATS}/stopped_by", str(exc))
            return "interrupted"
        except Exception as exc:  # any step's error fails the run (sqlite3's too), never a log line
            failed = context.failed_step or step
            logger.error("finishing pass failed in step %r, %s left as crawled: %s: %s", failed, self.output,
                         type(exc).__name__, exc, exc_info=not isinstance(exc, (OSError, UnicodeError, ValueError)))
            self.failure = {"step": failed, "error": f"{type(exc).__name__}: {exc}"}
            mark_finishing_failed(layout.manifest, self.failure)
            return "failed"
        phases = progress.finish()
        record_finishing_phases(layout.manifest, phases)
        if self.stats is not None:
            self.stats.set_value(f"{STATS}/seconds", phases)
            for key, count in sorted(context.counts.items()):
                self.stats.set_value(f"{STATS}/{key}", count)
            self.stats.set_value(f"{STATS}/summary", {"pages": summary["pages"], "records": summary["records_out"],
                                                     "tombstones": summary["tombstones_out"],
                                                     "unchanged_left_out": context.counts.get("change/dropped/unchanged", 0),
                                                     "dropped": summary["dropped_duplicates"],
                                                     "marked": summary.get("marked_near_duplicates", 0),
                                                     "report": summary.get("report"),
                                                     "changes": summary.get("changes"), "seconds": phases})
        logger.info("finishing pass: %d pages, %d duplicates dropped, %d near duplicates marked, template report in %s; "
                    "%.1f s (%s)", summary["pages"], summary["dropped_duplicates"], summary.get("marked_near_duplicates", 0),
                    summary.get("report"), sum(phases.values()),
                    ", ".join(f"{phase} {seconds:.2f}" for phase, seconds in phases.items()))
        if summary.get("changes"):
            logger.info("changes: %s", ", ".join(f"{n} {k}" for k, n in summary["changes"].items()))
        if summary.get("reconciled") is False:
            return "mismatch"
        return "done"

    def _change_step(self, layout: Any) -> Any:
        """The change step of a recurring crawl (None when ``BOILERSTRIP_RECRAWL_ENABLED`` is off)."""
        if not component_enabled(self.settings, "recrawl"):
            return None
        params = params_from_settings(self.settings, "recrawl", RecrawlParams)
        settled = ledger_outcomes(layout.ledger)
        cut = None
        if self.stats is not None:
            cut = next((r for r in CUT_REASONS if self.stats.get_value(f"boilerstrip/filtered/{r}")), None)
            if cut is None and self.stats.get_value("boilerstrip/failed/host_down"):
                cut = "host_down"  # a host given up mid-crawl: the pages not reached are not gone
        facts = self.recrawl.facts_for if self.recrawl is not None else None
        return ChangeStep(params, digest_of_settings(self.settings), facts=facts, settled=settled, cut_reason=cut)


def record_finishing_phases(manifest: Path, phases: dict[str, float]) -> None:
    """Say in the run's manifest how long its finishing pass took, phase by phase (``finishing``:
    ``{"status": "done", "seconds": total, "phases_s": {...}}``). No manifest (a pass without a ledger):
    nothing to do."""
    if manifest.is_file():
        _update_manifest(manifest, {"finishing": {"status": "done", "seconds": round(sum(phases.values()), 3),
                                                  "phases_s": phases}}, "the finishing pass's times")


@contextlib.contextmanager
def stopped_by_signals(progress: PassProgress) -> Iterator[None]:
    """While the pass runs, SIGINT (Ctrl-C) and SIGTERM stop it at its next record (``progress.stop_asked``).
    The crawl's own handler (``boilerstrip.run.ShutdownOnSignal``) hands its work to the reactor, which the
    pass holds until it ends: without this a Ctrl-C did nothing for the pass's whole length. Outside the
    main thread (where Python delivers signals) nothing changes; the handlers before are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        if not progress.stop_asked:
            progress.stop_asked = signal.Signals(signum).name
            logger.warning("received %s: stopping the finishing pass", progress.stop_asked)

    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def mark_finishing_failed(manifest: Path, failure: dict[str, str]) -> None:
    """Say in the run's manifest that its finishing pass failed: ``finished: false`` and ``finishing`` with
    the step and the error (the exit status says it anyway when the manifest cannot be written either)."""
    _update_manifest(manifest, {"finished": False, "finishing": {"status": "failed", **failure}},
                     "the failed finishing pass")


def _update_manifest(manifest: Path, fields: dict[str, Any], what: str) -> None:
    """Set ``fields`` in the run's manifest (made when missing); logged, not raised, when it cannot be
    read or written."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
        data.update(fields)
        atomic_write_json(manifest, data)
    except (OSError, ValueError) as exc:
        logger.error("cannot record %s in %s: %s", what, manifest, exc)


def selected_fields(settings: Any) -> list[str] | None:
    """``FEED_EXPORT_FIELDS`` when it selects fewer fields than a record has (``crawl --fields``), else None.
    The crawl's feed writes whole records (the pass needs their blocks and hashes); the pass writes these."""
    fields = field_list(settings.get("FEED_EXPORT_FIELDS"))
    return fields if fields and not set(fields) >= set(EXPORT_FIELDS) else None  # every field: no selection


def _records_so_far(output: Path) -> Path:
    """Where the records of a crawl that did not finish are: ``output`` when it was written, else its part
    file (a crawl stopped early keeps its records there for ``--resume``), else ``output`` (none written)."""
    part = crawl_layout(output).part
    return part if not output.exists() and part.exists() else output
