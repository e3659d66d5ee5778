"""Runs the finishing pass over the crawl's JSONL output when the crawl is over.

Connected to ``engine_stopped``, which Scrapy sends after every ``spider_closed`` handler has finished:
the feed file is complete and the ledger has written its lines by then, through public signals only.
The pass (``boilerstrip.finishing.crawl_steps``: final template model and clean, duplicates, sort, report,
write) rewrites the output in place; then the ledger and manifest are brought in line with what was
written (each dropped page becomes ``filtered:<reason>``). So ``scrapy crawl site -O out.jsonl``,
scrapyd and ``boilerstrip crawl`` all write the same records, report, ledger and manifest.

Only a crawl that *finished* is finished this way; one stopped early keeps its output as crawled (the
``--resume`` path continues it). Stats: ``boilerstrip/finishing/status`` is ``done``, ``skipped:<why>``,
``failed`` or ``mismatch``; ``boilerstrip/finishing/<step>/...`` are the steps' counts.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from boilerstrip.boilerplate import BoilerplateParams, DuplicateParams
from boilerstrip.boilerplate.duplicates import lsh_bands
from boilerstrip.config import ConfigError, component_enabled, params_from_settings
from boilerstrip.finishing import FinishContext, finish_crawl
from boilerstrip.finishing.steps import bands_key
from boilerstrip.state import StateParams, crawl_layout, feed_output, open_state

__all__ = ["FinishingExtension", "STATUS"]

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
        self.ahead: dict[tuple, Any] = {}  # work asked of the workers before the pass (FinishContext.ahead)
        self._asked = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> "FinishingExtension":
        if not component_enabled(crawler.settings, "finishing"):
            raise NotConfigured("BOILERSTRIP_FINISHING_ENABLED is false")
        output = feed_output(crawler.settings)
        if output is None:
            raise NotConfigured("no local JSONL feed to finish")
        ext = cls(output, crawler.settings, stats=crawler.stats)

        def engine_started() -> None:
            from boilerstrip.spidermiddlewares.recrawl import RecrawlMiddleware

            ext.recrawl = crawler.get_spider_middleware(RecrawlMiddleware)
            from boilerstrip.pipelines.boilerplate import CrossPageBoilerplatePipeline

            pipeline = crawler.get_item_pipeline(CrossPageBoilerplatePipeline)
            ext.learned = pipeline is not None and pipeline.learns_into_shared_state()
            from boilerstrip.extensions.workers import WorkerPool

            ext.workers = WorkerPool.of(crawler)

        crawler.signals.connect(engine_started, signal=signals.engine_started, weak=False)
        crawler.signals.connect(ext.ask_ahead, signal=signals.item_scraped)  # once, at the first page
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def ask_ahead(self) -> None:
        """Ask a worker process for the pass's LSH bands now (once the first page is written: datasketch
        imported and the bands worked out while the crawl runs, over a second of one worker that the pass
        would otherwise wait for; asked at the spider's opening, it slowed the start-up)."""
        if self._asked:
            return
        self._asked = True
        executor = self._executor()
        if executor is None or not component_enabled(self.settings, "duplicates"):
            return
        try:
            params = params_from_settings(self.settings, "duplicates", DuplicateParams)
        except ConfigError:
            return  # the pass names the setting
        self.ahead[bands_key(params)] = executor.submit(lsh_bands, params.near_min_jaccard, params.num_perm)

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
        finally:
            if self.recrawl is not None:
                self.recrawl.close()
        if self.stats is not None:
            self.stats.set_value(STATUS, status)

    def finish(self) -> str:
        """Run the pass; returns the status (see the module doc)."""
        if self.reason is None:
            return "skipped:not_started"
        if self.reason != "finished":
            logger.warning("finishing pass skipped: the crawl did not finish (%s); %s left as crawled",
                           self.reason, self.output)
            return f"skipped:{self.reason}"
        if not self.output.is_file():
            logger.warning("finishing pass skipped: %s was not written", self.output)
            return "skipped:no_output"
        if not component_enabled(self.settings, "boilerplate"):
            return "skipped:boilerplate_disabled"
        try:
            params = params_from_settings(self.settings, "boilerplate", BoilerplateParams)
            dup_params = params_from_settings(self.settings, "duplicates", DuplicateParams)
            state_params = params_from_settings(self.settings, "state", StateParams)
            change = self._change_step(crawl_layout(self.output))
        except ConfigError as exc:
            logger.error("finishing pass: %s", exc)
            return "failed"
        layout = crawl_layout(self.output)
        context = FinishContext(executor=self._executor(), ahead=dict(self.ahead))
        try:
            context.state = open_state(state_params, self.output)
            try:
                summary = finish_crawl(self.output, self.output, params, layout.report_dir, dup_params=dup_params,
                                       duplicates_enabled=component_enabled(self.settings, "duplicates"),
                                       context=context, change=change, learned=self.learned)
            finally:
                context.state.close()
        except (OSError, UnicodeError, ValueError) as exc:
            logger.error("finishing pass failed, %s left as crawled: %s", self.output, exc)
            return "failed"
        if self.stats is not None:
            for key, count in sorted(context.counts.items()):
                self.stats.set_value(f"{STATS}/{key}", count)
            self.stats.set_value(f"{STATS}/summary", {"pages": summary["pages"], "records": summary["records_out"],
                                                     "dropped": summary["dropped_duplicates"],
                                                     "report": summary.get("report"),
                                                     "changes": summary.get("changes")})
        logger.info("finishing pass: %d pages, %d duplicates dropped, %d near duplicates marked, template report in %s",
                    summary["pages"], summary["dropped_duplicates"], summary.get("marked_near_duplicates", 0),
                    summary.get("report"))
        if summary.get("changes"):
            logger.info("changes: %s", ", ".join(f"{n} {k}" for k, n in summary["changes"].items()))
        if layout.manifest.exists():
            from boilerstrip.extensions.ledger import reconcile_output

            if not reconcile_output(self.output, context.dropped_by_url()):
                return "mismatch"
        return "done"

    def _change_step(self, layout: Any) -> Any:
        """The change step of a recurring crawl (None when ``BOILERSTRIP_RECRAWL_ENABLED`` is off)."""
        if not component_enabled(self.settings, "recrawl"):
            return None
        from boilerstrip.finishing.change import ChangeStep
        from boilerstrip.recrawl import CUT_REASONS, RecrawlParams, digest_of_settings

        params = params_from_settings(self.settings, "recrawl", RecrawlParams)
        settled = _ledger_outcomes(layout.ledger)
        cut = None
        if self.stats is not None:
            cut = next((r for r in CUT_REASONS if self.stats.get_value(f"boilerstrip/filtered/{r}")), None)
        facts = self.recrawl.facts_for if self.recrawl is not None else None
        return ChangeStep(params, digest_of_settings(self.settings), facts=facts, settled=settled, cut_reason=cut)


def _ledger_outcomes(path: Path) -> dict[str, str] | None:
    """URL -> ``outcome:reason`` of every URL the crawl settled (None without a ledger)."""
    if not path.is_file():
        return None
    import json

    settled: dict[str, str] = {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                settled[entry["url"]] = f"{entry.get('outcome')}:{entry.get('reason') or ''}"
    return settled
