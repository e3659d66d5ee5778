"""The finishing pass: ordered steps over a crawl's records, one runner for every use.

Used by :class:`boilerstrip.extensions.finishing.FinishingExtension` when a spider closes (so ``scrapy
crawl``, scrapyd and ``boilerstrip crawl`` write the same output), by ``boilerstrip dedup``, and by later
passes (export, check) with steps of their own. Pure Python: no Scrapy import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boilerstrip.boilerplate.params import BoilerplateParams, DuplicateParams
from boilerstrip.items import complete_record

from .base import TOMBSTONES, Dropped, finishing_inputs, FinishContext, Record, Spill, Step, dump_record, is_page, read_jsonl, run_steps
from .change import ChangeStep
from .steps import MarkDuplicates, ReconcileLedger, SortByUrl, TemplateReport, TemplateStep, WriteJsonl, crawl_steps

__all__ = ["finishing_inputs", "Dropped", "FinishContext", "Record", "Spill", "Step", "dump_record", "is_page", "read_jsonl",
           "run_steps", "MarkDuplicates", "ReconcileLedger", "SortByUrl", "TemplateReport", "TemplateStep", "WriteJsonl",
           "crawl_steps", "ChangeStep", "FinishResult", "finish_records", "finish_crawl", "finishing_follows"]


def finishing_follows(settings: Any) -> bool:
    """Will a finishing pass rewrite this run's output? (What ``FinishingExtension`` needs to run: the
    component on, a local JSONL feed, cross-page removal on.) Then the crawl's pipelines only learn and
    count: the pass cleans and deduplicates every page once, with the final model."""
    from boilerstrip.config import component_enabled
    from boilerstrip.state import feed_output

    return (component_enabled(settings, "finishing") and component_enabled(settings, "boilerplate")
            and feed_output(settings) is not None)


@dataclass
class FinishResult:
    records: list[Record]
    dropped: list[dict[str, Any]]  # {"url", "reason", "of", "similarity"}
    report: dict[str, Any]
    invalid_lines: list[int] = field(default_factory=list)


def finish_records(records: Any, params: BoilerplateParams | None = None, dup_params: DuplicateParams | None = None,
                   state: Any = None, duplicates_enabled: bool = True) -> FinishResult:
    """The crawl's finishing pass over records in memory (no files written)."""
    context = FinishContext(state=state)
    out = list(run_steps(records, crawl_steps(None, params, dup_params, None, duplicates_enabled), context))
    dropped = (context.report.get("duplicates") or {}).get("dropped", [])
    return FinishResult(out, sorted(dropped, key=lambda d: d["url"]), context.report.get("template_report", {}))


def finish_crawl(in_path: str | Path, out_path: str | Path, params: BoilerplateParams | None = None,
                 report_dir: str | Path | None = None, dup_params: DuplicateParams | None = None,
                 state: Any = None, duplicates_enabled: bool = True,
                 context: FinishContext | None = None, change: Step | None = None,
                 learned: bool = False, trail: bool = False, fields: Any = None,
                 progress: Any = None, reconcile: bool = False) -> dict[str, Any]:
    """The crawl's finishing pass file to file (``out_path`` may be ``in_path``), streaming: memory holds
    the model, offsets and duplicate signatures, not the records. ``trail``: the output keeps the records'
    block-by-block trail (default: lean records); ``fields``: write only these fields
    (``FEED_EXPORT_FIELDS``; every step still sees whole records); ``progress``: a
    :class:`~boilerstrip.finishing.steps.PassProgress` the steps count into; ``reconcile``: the last step brings
    the crawl's ledger and manifest in line with what was written (``summary["reconciled"]``). Returns a
    summary."""
    context = context if context is not None else FinishContext(state=state)
    records_in = 0

    def counted() -> Any:
        nonlocal records_in
        for record in read_jsonl(in_path, context):
            records_in += 1
            yield complete_record(record)

    written = tombstones = 0
    for record in run_steps(counted(), crawl_steps(out_path, params, dup_params, report_dir, duplicates_enabled,
                                                   change, learned, trail, fields, progress, reconcile),
                              context):
        written += 1
        tombstones += record.get("change") in TOMBSTONES

    dropped = sorted((context.report.get("duplicates") or {}).get("dropped", []), key=lambda d: d["url"])
    report = context.report.get("template_report", {})
    summary: dict[str, Any] = {
        "records_in": records_in,
        "records_out": written,  # the lines written: pages and tombstones
        "tombstones_out": tombstones,
        "pages": report.get("pages", 0),
        "dropped_duplicates": len(dropped),
        "dropped": dropped,
        "marked_near_duplicates": len((context.report.get("duplicates") or {}).get("marked", [])),
        "invalid_lines": len(context.invalid_lines),
        "kept_as_written": context.counts.get("template/kept_as_written", 0),
        "out": str(out_path),
    }
    if "reconciled" in context.report:
        summary["reconciled"] = context.report["reconciled"]
    if "changes" in context.report:
        summary["changes"] = context.report["changes"]
    if "template_report_path" in context.report:
        summary["report"] = context.report["template_report_path"]
    return summary
