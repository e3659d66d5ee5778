"""Where a crawl's outputs and state live: derived from the output path here and nowhere else.

``out/site.jsonl`` gives ``out/site.jsonl.part`` (written while the crawl runs), ``out/site.ledger.jsonl``
(+ ``.part`` journal), ``out/site.manifest.json``, ``out/site.deadletter.jsonl``, ``out/site.report/`` (the
template report) and, by default, ``out/.boilerstrip-state/`` (what outlives the run). A scheduled job's
runs (:func:`schedule_layout`) and the scheduler's jobs file (``SCHEDULE_FILE`` in its state folder) too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["CrawlLayout", "crawl_layout", "feed_output", "resolve_state_dir", "STATE_FOLDER", "ScheduleLayout",
           "schedule_layout", "SCHEDULE_FILE"]

#: the state folder's name when it sits next to the output ("auto")
STATE_FOLDER = ".boilerstrip-state"


@dataclasses.dataclass(frozen=True)
class CrawlLayout:
    final: Path  # OUT.jsonl
    part: Path  # OUT.jsonl.part
    manifest: Path  # OUT.manifest.json
    ledger: Path  # OUT.ledger.jsonl
    ledger_journal: Path  # OUT.ledger.jsonl.part (appended while the crawl runs)
    deadletter: Path  # OUT.deadletter.jsonl
    report_dir: Path  # OUT.report/ (template-report.json/.txt)
    state_dir: Path  # the default state folder: OUT's folder/.boilerstrip-state

    @property
    def stem(self) -> str:
        name = self.final.name
        return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def crawl_layout(out: str | Path) -> CrawlLayout:
    """Every path of a crawl that writes ``out``."""
    final = Path(out)
    stem = final.name[: -len(".jsonl")] if final.name.endswith(".jsonl") else final.name
    folder = final.parent
    ledger = folder / f"{stem}.ledger.jsonl"
    return CrawlLayout(
        final=final,
        part=folder / f"{final.name}.part",
        manifest=folder / f"{stem}.manifest.json",
        ledger=ledger,
        ledger_journal=folder / f"{ledger.name}.part",
        deadletter=folder / f"{stem}.deadletter.jsonl",
        report_dir=folder / f"{final.stem}.report",
        state_dir=folder.expanduser().resolve() / STATE_FOLDER,
    )


#: the scheduler's jobs, in its state folder
SCHEDULE_FILE = "schedule.json"


@dataclasses.dataclass(frozen=True)
class ScheduleLayout:
    """Where a scheduled job's runs live: ``DIR/NAME/<UTC time>.jsonl`` (+ its side files), the run's
    ``<UTC time>.summary.json``, ``latest.jsonl`` (the last finished run) and ``.lock`` (one run at a time);
    the job's recurring-crawl state is the runs' default state folder, ``DIR/NAME/.boilerstrip-state``."""

    folder: Path  # DIR/NAME
    latest: Path  # DIR/NAME/latest.jsonl
    lock: Path  # DIR/NAME/.lock
    state_dir: Path  # DIR/NAME/.boilerstrip-state

    def run_output(self, stamp: str) -> Path:
        return self.folder / f"{stamp}.jsonl"

    def run_summary(self, stamp: str) -> Path:
        return self.folder / f"{stamp}.summary.json"

    def run_log(self, stamp: str) -> Path:
        return self.folder / f"{stamp}.log"


def schedule_layout(out_dir: str | Path, name: str) -> ScheduleLayout:
    folder = Path(out_dir).expanduser().resolve() / name
    return ScheduleLayout(folder=folder, latest=folder / "latest.jsonl", lock=folder / ".lock",
                          state_dir=folder / STATE_FOLDER)


def feed_output(settings: Any) -> Path | None:
    """The local JSONL file of a run's ``FEEDS`` (``-o``/``-O``/``boilerstrip crawl -o``), if any."""
    if hasattr(settings, "getdict"):
        feeds: Mapping[str, Any] = settings.getdict("FEEDS")
    else:
        feeds = dict(settings.get("FEEDS") or {})
    for uri, options in feeds.items():
        uri = str(uri)
        if (options or {}).get("format") not in ("jsonl", "jsonlines"):
            continue
        if uri.startswith("file://"):
            return Path(uri[len("file://"):])
        if "://" not in uri:
            return Path(uri)
    return None


def resolve_state_dir(state_dir: str, output: str | Path | None = None) -> Path | None:
    """The state folder for ``state_dir`` ("auto", "" or a path); "auto" puts it next to ``output``
    (or in the working folder when there is no local output). "" means: keep nothing (None)."""
    if not state_dir:
        return None
    if state_dir != "auto":
        return Path(state_dir).expanduser()
    if output is not None:
        text = str(output)
        if text.startswith("file://"):
            text = text[len("file://"):]
        if "://" not in text:
            return crawl_layout(text).state_dir
    return Path(STATE_FOLDER)
