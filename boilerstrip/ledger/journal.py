"""The ledger's files while a local crawl runs: ``OUT.ledger.jsonl.part`` gets one line per settlement as
it happens (a killed run keeps what it settled), ``OUT.ledger.jsonl`` is written whole at the end and the
journal removed. A resumed run (``--resume``) starts from the earlier run's ledger, journal and records.
Pure Python: no Scrapy import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from boilerstrip.atomicfile import append_line, written_urls
from boilerstrip.state.layout import CrawlLayout

from .manifest import write_ledger
from .reader import read_ledger

__all__ = ["Journal"]


class Journal:
    def __init__(self, layout: CrawlLayout) -> None:
        self.layout = layout

    def start(self) -> None:
        """A fresh run: an earlier run's ledger files (and dead letters, which this run may write before
        its feed opens) go."""
        self.layout.final.parent.mkdir(parents=True, exist_ok=True)
        for path in (self.layout.ledger_journal, self.layout.ledger, self.layout.deadletter):
            if path.exists():
                path.unlink()

    def settled_before(self) -> dict[str, tuple[str, str]]:
        """URL -> (outcome, reason) of what the earlier run settled, for a resumed run: its filtered and
        failed URLs (from its ledger and journal; a torn last journal line is cut off) and its records."""
        self.layout.final.parent.mkdir(parents=True, exist_ok=True)
        settled: dict[str, tuple[str, str]] = {}
        for path in (self.layout.ledger, self.layout.ledger_journal):
            for entry in read_ledger(path, truncate=path == self.layout.ledger_journal):
                if entry.get("outcome") in ("filtered", "failed"):
                    settled[entry["url"]] = (entry["outcome"], entry.get("reason", ""))
        output = self.layout.part if self.layout.part.exists() else self.layout.final
        for url in written_urls(output):
            settled[url] = ("item", "")
        return settled

    def append(self, line: Mapping[str, Any]) -> None:
        append_line(self.layout.ledger_journal, dict(line))

    def close(self, lines: Iterable[Mapping[str, Any]]) -> None:
        """Write the whole ledger and drop the journal."""
        write_ledger(self.layout.ledger, lines)
        if self.layout.ledger_journal.exists():
            self.layout.ledger_journal.unlink()
