"""Every admitted URL accounted for: one record, ``filtered:<reason>`` or ``failed:<reason>``.

Shaped like :mod:`boilerstrip.state`, used by the local crawl
(:class:`boilerstrip.extensions.ledger.LedgerExtension`, a thin Scrapy extension) and by distributed workers
(:class:`boilerstrip.distributed.scheduler.WorkerLedger`) alike:

- :mod:`.rules`: when a URL is admitted, which key settles it, and the in-memory :class:`Ledger`;
- :mod:`.journal`: the ledger's files while a local crawl runs, and what a resumed run starts from;
- :mod:`.manifest`: the run manifest, built in one place, and the reconciliation after the finishing pass
  (the pass's last step, :class:`boilerstrip.finishing.steps.ReconcileLedger`);
- :mod:`.reader`: the one reader of a ledger file and of a manifest.

Pure Python: no Scrapy import.
"""

from .journal import Journal
from .manifest import build_manifest, describe_part, reconcile_output, tally, utc_now, write_ledger
from .reader import (
    dropped_from_report,
    finished_run,
    ledger_outcomes,
    read_ledger,
    read_manifest,
    run_status,
    tombstone_urls,
)
from .rules import (
    OUTCOMES,
    Ledger,
    LedgerParams,
    Record,
    admit,
    dropped_outcome,
    error_outcome,
    is_page,
    is_repeat,
    settlement_key,
)

__all__ = [
    "Journal", "build_manifest", "describe_part", "reconcile_output", "tally", "utc_now", "write_ledger",
    "dropped_from_report", "finished_run", "ledger_outcomes", "read_ledger", "read_manifest", "run_status",
    "tombstone_urls", "OUTCOMES", "Ledger", "LedgerParams", "Record", "admit", "dropped_outcome",
    "error_outcome", "is_page", "is_repeat", "settlement_key",
]
