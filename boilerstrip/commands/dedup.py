"""``boilerstrip dedup IN.jsonl -o OUT.jsonl``: the deterministic finishing pass over a crawl's records.

Argument parsing around :func:`boilerstrip.finishing.finish_crawl`, the same steps the
``FinishingExtension`` runs at the end of every crawl.

Rebuilds every site's template model from all records, re-cleans every page with it (a page whose record
carries its block-by-block trail: ``crawl --trail``; a lean record's text is kept as written), drops exact duplicate
pages with the fixed keep rule (near duplicates are kept and marked; ``--drop-duplicates`` drops them too), writes the records sorted by URL (shuffled input gives byte-identical
output) and the template report (``template-report.json`` and ``.txt``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from boilerstrip.boilerplate import BoilerplateParams, DuplicateParams
from boilerstrip.config import ConfigError, component_enabled, params_from_settings, unknown_settings
from boilerstrip.finishing import finish_crawl
from boilerstrip.atomicfile import output_lock
from boilerstrip.finishing.base import count_lines, refused_records_input
from boilerstrip.finishing.steps import PassProgress, ProgressTicker
from boilerstrip.state import SqliteState, crawl_layout

HELP = "Re-clean a crawl's JSONL with the final per-site template model and drop duplicate pages."

__all__ = ["HELP", "add_arguments", "run", "default_report_dir"]


def default_report_dir(out_path: str | Path) -> Path:
    """``out/site.jsonl`` -> ``out/site.report/``."""
    return crawl_layout(out_path).report_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="records written by boilerstrip crawl (JSONL)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.jsonl",
                        help="where to write the cleaned records (JSONL); may be INPUT")
    parser.add_argument("--report", metavar="DIR", default=None,
                        help="folder for template-report.json/.txt (default: OUTPUT's name + .report)")
    parser.add_argument("--no-report", action="store_true", help="do not write the template report")
    parser.add_argument("--state-dir", metavar="DIR", default=None,
                        help="also count the template counts stored there for the same sites (a crawl's state folder)")
    parser.add_argument("--drop-duplicates", action="store_true",
                        help="also drop near duplicates (default: kept, marked with duplicate_of and duplicate_similarity)")
    parser.add_argument("--trail", action="store_true",
                        help="keep the records' block-by-block trail in OUTPUT (default: lean records)")
    parser.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="a BOILERSTRIP_BOILERPLATE_* or BOILERSTRIP_DUPLICATES_* setting (repeatable)")


def run(args: argparse.Namespace) -> int:
    settings: dict[str, str] = {}
    for pair in args.settings:
        name, sep, value = pair.partition("=")
        if not sep:
            print(f"boilerstrip dedup: -s expects NAME=VALUE, got {pair!r}", file=sys.stderr)
            return 2
        settings[name.strip()] = value
    if args.drop_duplicates:
        settings["BOILERSTRIP_DUPLICATES_DROP_NEAR"] = "true"
    problems = unknown_settings(settings)  # a typo or a former setting is not silently ignored
    if problems:
        print(f"boilerstrip dedup: {'; '.join(problems)}", file=sys.stderr)
        return 2
    try:
        params = params_from_settings(settings, "boilerplate", BoilerplateParams)
        dup_params = params_from_settings(settings, "duplicates", DuplicateParams)
        duplicates_enabled = component_enabled(settings, "duplicates")
    except ConfigError as exc:
        print(f"boilerstrip dedup: {exc}", file=sys.stderr)
        return 2
    in_path = Path(args.input)
    if refused_records_input(in_path, "boilerstrip dedup", "; nothing written"):
        return 2
    report_dir = None if args.no_report else Path(args.report or default_report_dir(args.output))
    state = None
    # a line every few seconds while it runs (a pass over a large crawl takes minutes)
    progress = PassProgress(total=count_lines(in_path), label="dedup")
    ticker = ProgressTicker(progress)
    try:
        with output_lock(Path(args.output)):  # one run at a time writes OUTPUT (busy: OutputBusy, exit 2)
            state = SqliteState(Path(args.state_dir)) if args.state_dir else None
            summary = finish_crawl(in_path, args.output, params, report_dir, dup_params=dup_params, state=state,
                                   duplicates_enabled=duplicates_enabled, trail=args.trail, progress=progress)
    except (OSError, UnicodeError) as exc:
        print(f"boilerstrip dedup: cannot finish {in_path} -> {args.output}: {exc}", file=sys.stderr)
        return 1
    finally:
        ticker.stop()
        if state is not None:
            state.close()
    if summary["invalid_lines"]:
        print(f"boilerstrip dedup: skipped {summary['invalid_lines']} line(s) that were not JSON objects",
              file=sys.stderr)
    if summary["kept_as_written"]:
        print(f"boilerstrip dedup: {summary['kept_as_written']} record(s) carry no block trail: their text is kept as "
              "written (template removal not redone; crawl with --trail to redo it)", file=sys.stderr)
    report = f", report {summary['report']}" if "report" in summary else ""
    print(f"boilerstrip dedup: {summary['pages']} pages, {summary['dropped_duplicates']} duplicates dropped, "
          f"{summary['marked_near_duplicates']} near duplicates kept and marked, "
          f"{summary['records_out']} records -> {summary['out']}{report}", file=sys.stderr)
    return 0
