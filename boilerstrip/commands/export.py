"""``boilerstrip export CRAWL.jsonl [MORE.jsonl ...] -o DIR``: a dataset for AI training from crawls.

Argument parsing around :func:`boilerstrip.export.run_export` (the finishing runner with the dataset steps).
Exit status: 0 done, 1 an input or the output could not be read or written, 2 bad arguments (an input that is
not a crawl's records, such as its ledger or manifest, a folder or an HTML page, is one).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "Export crawls' JSONL as a deduplicated dataset for AI training (Parquet shards, excluded.jsonl, card)."

__all__ = ["HELP", "add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from boilerstrip.export import DEFAULT_INDEX_BACKEND, ExportParams

    defaults = ExportParams()
    parser.add_argument("inputs", nargs="+", metavar="CRAWL.jsonl", help="records written by boilerstrip crawl")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="the dataset folder to write")
    parser.add_argument("--format", choices=("parquet", "jsonl"), default=defaults.format,
                        help="shard format (default: parquet, zstd)")
    parser.add_argument("--shard-size", type=int, default=defaults.shard_size, metavar="N",
                        help=f"documents per shard (default: {defaults.shard_size})")
    parser.add_argument("--row-group-rows", type=int, default=defaults.row_group_rows, metavar="N",
                        help=f"rows per Parquet row group (default: {defaults.row_group_rows})")
    parser.add_argument("--index", metavar="DIR", default=None,
                        help="keep the dedup index here: a later export with the same DIR adds only new documents")
    parser.add_argument("--index-backend", default=DEFAULT_INDEX_BACKEND, metavar="DOTTED.PATH",
                        help="the dedup index class (default: the SQLite one)")
    filters = parser.add_argument_group("filters (off by default: signals are recorded, not used)")
    filters.add_argument("--min-words", type=int, default=0, metavar="N", help="leave out documents with fewer words")
    filters.add_argument("--languages", default="", metavar="LIST", help="keep only these languages, e.g. en,fr")
    filters.add_argument("--min-language-score", type=float, default=0.0, metavar="P",
                         help="leave out documents whose language score is below P")
    filters.add_argument("--min-confidence", type=float, default=0.0, metavar="C",
                         help="leave out pages whose extraction confidence (estimated F1, 0-1) is below C")
    filters.add_argument("--gopher", action="store_true", help="leave out documents failing the Gopher rules")
    parser.add_argument("--near-min-jaccard", type=float, default=defaults.near.min_jaccard, metavar="J",
                        help="a band collision counts as a near duplicate only at this estimated Jaccard (default 0: any)")
    parser.add_argument("--include-opted-out", action="store_true",
                        help="include pages that opted out of AI training (a warning is printed)")
    parser.add_argument("--keep-pii", action="store_true", help="do not replace email and IP addresses")
    parser.add_argument("--license", default=defaults.license, help="the dataset card's license field (default: other)")


#: the endings of a file name: an output so named is still made as a folder (a dataset is shards and a card)
_FILE_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv", ".arrow")


def run(args: argparse.Namespace) -> int:
    from boilerstrip.cli import url_given_as_path
    from boilerstrip.export import (DEFAULT_INDEX_BACKEND, EXCLUDED_FILE, ExportParams, FilterParams, NearDedupParams,
                                    run_export)

    wrong = url_given_as_path(args, ("index",)) if args.index_backend == DEFAULT_INDEX_BACKEND else None
    if wrong is not None:  # the default index is a folder; another backend may take a URL
        print(f"boilerstrip export: {wrong}", file=sys.stderr)
        return 2

    try:
        params = ExportParams(
            format=args.format, shard_size=args.shard_size, row_group_rows=args.row_group_rows,
            include_opted_out=args.include_opted_out, keep_pii=args.keep_pii, license=args.license,
            filters=FilterParams(
                min_words=args.min_words, min_language_score=args.min_language_score, gopher=args.gopher,
                min_confidence=args.min_confidence,
                languages=tuple(sorted({x.strip().lower() for x in args.languages.split(",") if x.strip()})),
            ),
            near=NearDedupParams(min_jaccard=args.near_min_jaccard),
        )
    except ValueError as exc:
        print(f"boilerstrip export: {exc}", file=sys.stderr)
        return 2
    if params.filters.languages:
        from boilerstrip.export.language import unknown_languages

        unknown = unknown_languages(params.filters.languages)
        if unknown:
            print(f"boilerstrip export: --languages: {', '.join(map(repr, unknown))} is not a language code py3langid "
                  "gives (ISO 639: en, de, fr, zh, ...); nothing would be kept of it", file=sys.stderr)
            return 2
    from boilerstrip.finishing.base import count_lines, refused_records_input

    if any(refused_records_input(path, "boilerstrip export") for path in args.inputs):
        return 2
    output = Path(args.output)
    if not output.exists() and output.suffix.lower() in _FILE_SUFFIXES:
        # "-o dataset.parquet" made a folder of that name: say so, once, before the work
        print(f"boilerstrip export: note: {args.output} is made as a folder (the dataset's shards in its data/, with "
              f"{EXCLUDED_FILE}, stats.json and README.md beside them), not as one file", file=sys.stderr)
    if params.include_opted_out:
        print("boilerstrip export: WARNING: --include-opted-out: pages whose sites said no to AI training are "
              "included; their ai_opt_out column names the signals", file=sys.stderr)
    from boilerstrip.finishing.steps import PassProgress, ProgressTicker

    from boilerstrip.atomicfile import output_lock

    progress = PassProgress(total=sum(count_lines(p) for p in args.inputs), phase="reading records", label="export")
    ticker = ProgressTicker(progress)
    try:
        with output_lock(Path(args.output)):  # one export at a time writes the folder (busy: OutputBusy, exit 2)
            stats = run_export(args.inputs, args.output, params, index_dir=args.index,
                               index_backend=args.index_backend, progress=progress)
    except ValueError as exc:  # an index made with another recipe, a bad backend
        print(f"boilerstrip export: {exc}", file=sys.stderr)
        return 2
    except (OSError, UnicodeError) as exc:
        print(f"boilerstrip export: cannot export to {args.output}: {exc}", file=sys.stderr)
        return 1
    finally:
        ticker.stop()
    if stats["invalid_lines"]:
        print(f"boilerstrip export: skipped {stats['invalid_lines']} line(s) that were not JSON objects", file=sys.stderr)
    replaced = stats.get("replaced")
    if replaced and args.index:
        print(f"boilerstrip export: replaced the export {replaced['run']} in {args.output}: its "
              f"{replaced['index_documents_taken_out']} document(s) taken out of the index first", file=sys.stderr)
    reasons = ", ".join(f"{r} {n}" for r, n in stats["excluded_by_reason"].items()) or "none"
    print(f"boilerstrip export: {stats['documents']} documents in {len(stats['shards'])} shard(s) -> {args.output}; "
          f"left out {stats['excluded']} ({reasons})", file=sys.stderr)
    if not stats["documents"] and stats["excluded"]:
        # an empty dataset said only "0 documents": name what left everything out, and where to look
        top, count = max(stats["excluded_by_reason"].items(), key=lambda kv: (kv[1], kv[0]), default=("?", 0))
        hint = (" (records without text: a crawl written with --fields that leaves out text and markdown?)"
                if top == "empty_text" and count == stats["excluded"] else "")
        print(f"boilerstrip export: WARNING: the dataset is empty: all {stats['excluded']} record(s) were left out, "
              f"{count} as {top}{hint}; each is in {Path(args.output) / EXCLUDED_FILE} with its reason", file=sys.stderr)
    if params.include_opted_out and stats["opted_out_included"]:
        print(f"boilerstrip export: WARNING: {stats['opted_out_included']} opted-out page(s) included", file=sys.stderr)
    return 0
