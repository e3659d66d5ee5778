"""``boilerstrip export``: crawls' JSONL to a dataset for AI training, as steps of the finishing runner.

``ReadInputs -> TooLong -> NewestVersion -> Normalise -> OptOutPolicy -> Language -> Quality -> Filters -> Pii -> ExactDedup ->
NearDedup -> ShardWriter``; every document left out is dropped by one step with a reason and lands in
``excluded.jsonl``. Then ``stats.json`` and the dataset card (``README.md``). Pure Python (no Scrapy):
py3langid, pyarrow and numpy (datasketch's MinHash, ``boilerstrip.minhash``) do the heavy lifting. See docs/export.md.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import atomic_open
from boilerstrip.finishing.base import Step, run_steps
from boilerstrip.finishing.steps import CountProgress, PassProgress

from .card import dataset_card, export_stats, size_category
from .index import INDEX_FILE, DedupIndex, MemoryDedupIndex, MinHasher, SqliteDedupIndex
from .params import ExportParams, FilterParams, GopherParams, NearDedupParams
from .pii import replace_pii
from .signals import QUALITY_FIELDS, gopher_failures, quality_signals
from .steps import (ROW_FIELDS, ExactDedup, ExcludedLog, ExportContext, Filters, Language, NearDedup, NewestVersion,
                    Normalise, OptOutPolicy, Pii, Quality, ReadInputs, ShardWriter, TooLong, document_id,
                    normalise_text, parquet_schema)

__all__ = [
    "ExportParams", "FilterParams", "GopherParams", "NearDedupParams", "DedupIndex", "MemoryDedupIndex",
    "SqliteDedupIndex", "MinHasher", "INDEX_FILE", "QUALITY_FIELDS", "ROW_FIELDS", "quality_signals",
    "gopher_failures", "replace_pii", "document_id", "normalise_text", "export_steps", "run_export",
    "open_index", "dataset_card", "export_stats", "size_category", "parquet_schema", "EXCLUDED_FILE",
    "STATS_FILE", "CARD_FILE",
]

EXCLUDED_FILE = "excluded.jsonl"
STATS_FILE = "stats.json"
CARD_FILE = "README.md"
DEFAULT_INDEX_BACKEND = "boilerstrip.export.SqliteDedupIndex"


def export_steps(inputs: Iterable[str | Path], out_dir: str | Path, params: ExportParams, index: DedupIndex,
                 run_id: str, progress: PassProgress | None = None) -> list[Step]:
    steps: list[Step] = [
        ReadInputs(inputs),
        TooLong(params.max_text_chars),
        NewestVersion(),
        Normalise(),
        OptOutPolicy(include=params.include_opted_out),
        Language(max_chars=params.language_max_chars),
        Quality(),
        Filters(params.filters),
        Pii(keep=params.keep_pii),
        ExactDedup(index, run_id),
        NearDedup(index, run_id, params.near),
        ShardWriter(out_dir, params),
    ]
    if progress is not None:  # reading counts every record; ExactDedup then sees them all before one is written
        steps = [steps[0], CountProgress(progress, "reading records", then="deduplicating"), *steps[1:],
                 CountProgress(progress, "writing rows")]
    return steps


def open_index(folder: str | Path, params: NearDedupParams, backend: str = DEFAULT_INDEX_BACKEND) -> DedupIndex:
    """The dedup index kept in ``folder``, by the backend's dotted path (as ``boilerstrip.state`` does)."""
    from boilerstrip.state import load_backend

    try:
        cls: Any = load_backend(backend)
    except ValueError as exc:
        raise ValueError(str(exc).replace("state backend", "index backend")) from None
    return cls(folder, params)


def _holds_a_file(path: Path) -> bool:
    """Is ``path`` a file, or a folder with a file somewhere under it?"""
    if not path.is_dir():
        return True
    return any(files for _root, _dirs, files in os.walk(path))


def foreign_folder_problem(out: Path) -> str | None:
    """Why ``out`` must not take an export, or None: a folder holding files that no earlier export wrote (a
    home folder, a project), whose ``README.md`` the dataset card would overwrite and whose ``data/`` the
    shards would join. A missing or empty folder, or an earlier export's (its ``stats.json``), is fine; what
    an export leaves in a folder it was given before, it replaces."""
    if not out.is_dir():
        return None
    entries = sorted(p.name for p in out.iterdir() if not p.name.startswith(".boilerstrip-") and _holds_a_file(p))
    if not entries:  # empty, or only empty folders (an interrupted export leaves its data/)
        return None
    try:
        stats = json.loads((out / STATS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stats = None
    if isinstance(stats, dict) and "shards" in stats and "documents" in stats:
        return None  # an earlier export: this one replaces its files
    shown = ", ".join(e + ("/" if (out / e).is_dir() else "") for e in entries[:5]) + (", ..." if len(entries) > 5 else "")
    return (f"{out} is a folder with files no earlier export wrote ({shown}): its {CARD_FILE} and data/ would be "
            "overwritten or mixed with the dataset's; export to a new or empty folder")


def _earlier_run(out: Path) -> str | None:
    """The run of the export ``out`` holds (its ``stats.json``), which a new export there replaces."""
    try:
        run = json.loads((out / STATS_FILE).read_text(encoding="utf-8")).get("run")
    except (OSError, ValueError, AttributeError):
        return None
    return run if isinstance(run, str) and run else None


def run_export(inputs: Iterable[str | Path], out_dir: str | Path, params: ExportParams | None = None,
               index_dir: str | Path | None = None, index_backend: str = DEFAULT_INDEX_BACKEND,
               progress: PassProgress | None = None) -> dict[str, Any]:
    """Export ``inputs`` (crawl JSONL files) to ``out_dir``; returns the stats written to ``stats.json``.
    ValueError, before anything is written, for a folder of other files (:func:`foreign_folder_problem`).

    With ``index_dir`` the dedup index is kept there and committed once every file is written, so a later
    export leaves out what this one exported; without it a temporary index is used and deleted."""
    params = params or ExportParams()
    out = Path(out_dir)
    problem = foreign_folder_problem(out)
    if problem is not None:
        raise ValueError(problem)
    out.mkdir(parents=True, exist_ok=True)
    inputs = [Path(p) for p in inputs]
    run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory(prefix=".boilerstrip-index-", dir=out) as scratch:
        index = open_index(index_dir if index_dir is not None else scratch, params.near, index_backend)
        replaced = _earlier_run(out)
        forgotten = 0
        if replaced and index_dir is not None:
            # this export replaces the folder's earlier one: its documents leave the index with it (they were
            # all "already exported", and a re-run of the same export made an empty dataset over a full one)
            forget = getattr(index, "forget_run", None)
            if forget is None:
                index.close()
                raise ValueError(f"{out} holds export {replaced}, which this one would replace, and the index backend "
                                 f"{index_backend} cannot take its documents out: export to a new folder")
            forgotten = forget(replaced)
        excluded = ExcludedLog(out / EXCLUDED_FILE)
        context = ExportContext(excluded)
        try:
            for _ in run_steps([], export_steps(inputs, out, params, index, run_id, progress), context):
                pass
            excluded.finish()
        except BaseException:
            excluded.abort()
            index.close()
            raise
        summary = context.report.get("export", {})
        summary["invalid_lines"] = len(context.invalid_lines)
        summary["index_documents"] = index.documents()
        stats = export_stats(summary, excluded.reasons, excluded.sites, context.counts, params)
        stats["run"] = run_id
        if replaced:
            stats["replaced"] = {"run": replaced, "index_documents_taken_out": forgotten}
        with atomic_open(out / STATS_FILE, "w") as handle:
            handle.write(json.dumps(stats, ensure_ascii=False, indent=1) + "\n")
        with atomic_open(out / CARD_FILE, "w") as handle:
            handle.write(dataset_card(stats, params, name=out.resolve().name))
        index.commit()
        index.close()
    return stats
