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
from boilerstrip.config import ConfigError, component_enabled, params_from_settings
from boilerstrip.finishing import FinishContext, finish_crawl
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

    @classmethod
    def from_crawler(cls, crawler: Any) -> "FinishingExtension":
        if not component_enabled(crawler.settings, "finishing"):
            raise NotConfigured("BOILERSTRIP_FINISHING_ENABLED is false")
        output = feed_output(crawler.settings)
        if output is None:
            raise NotConfigured("no local JSONL feed to finish")
        ext = cls(output, crawler.settings, stats=crawler.stats)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def spider_closed(self, spider: Any = None, reason: str = "") -> None:
        self.reason = reason

    def engine_stopped(self) -> None:
        status = self.finish()
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
        except ConfigError as exc:
            logger.error("finishing pass: %s", exc)
            return "failed"
        layout = crawl_layout(self.output)
        context = FinishContext()
        try:
            context.state = open_state(state_params, self.output)
            try:
                summary = finish_crawl(self.output, self.output, params, layout.report_dir, dup_params=dup_params,
                                       duplicates_enabled=component_enabled(self.settings, "duplicates"),
                                       context=context)
            finally:
                context.state.close()
        except (OSError, UnicodeError, ValueError) as exc:
            logger.error("finishing pass failed, %s left as crawled: %s", self.output, exc)
            return "failed"
        if self.stats is not None:
            for key, count in sorted(context.counts.items()):
                self.stats.set_value(f"{STATS}/{key}", count)
            self.stats.set_value(f"{STATS}/summary", {"pages": summary["pages"], "records": summary["records_out"],
                                                     "dropped": len(context.dropped), "report": summary.get("report")})
        logger.info("finishing pass: %d pages, %d duplicates dropped, %d near duplicates marked, template report in %s",
                    summary["pages"], summary["dropped_duplicates"], summary.get("marked_near_duplicates", 0),
                    summary.get("report"))
        if layout.manifest.exists():
            from boilerstrip.extensions.ledger import reconcile_output

            if not reconcile_output(self.output, context.dropped_by_url()):
                return "mismatch"
        return "done"
