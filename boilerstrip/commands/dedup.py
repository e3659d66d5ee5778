"""``boilerstrip dedup IN.jsonl -o OUT.jsonl``: the deterministic finishing pass over a crawl's records.

Rebuilds every site's template model from all records, re-cleans every page with it, drops duplicate
pages with the fixed keep rule, writes the records sorted by URL (shuffled input gives byte-identical
output) and the template report (``template-report.json`` and ``.txt``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from boilerstrip.boilerplate import (
    BoilerplateParams,
    DuplicateParams,
    SqliteTemplateStore,
    finish_crawl,
    resolve_state_dir,
)
from boilerstrip.config import ConfigError, component_enabled, params_from_settings

HELP = "re-clean a crawl's JSONL with the final per-site template model and drop duplicate pages"

__all__ = ["HELP", "add_arguments", "run", "default_report_dir", "finish_after_crawl"]


def default_report_dir(out_path: str | Path) -> Path:
    """``out/site.jsonl`` -> ``out/site.report/``."""
    out_path = Path(out_path)
    return out_path.with_name(out_path.stem + ".report")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="records written by boilerstrip crawl (JSONL)")
    parser.add_argument("-o", "--output", required=True, help="where to write the cleaned records (JSONL); may be INPUT")
    parser.add_argument("--report", metavar="DIR", default=None,
                        help="folder for template-report.json/.txt (default: OUTPUT's name + .report)")
    parser.add_argument("--no-report", action="store_true", help="do not write the template report")
    parser.add_argument("--state-dir", metavar="DIR", default=None,
                        help="also count the stored pages of the same sites (a crawl's BOILERSTRIP_BOILERPLATE_STATE_DIR)")
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
    try:
        params = params_from_settings(settings, "boilerplate", BoilerplateParams)
        dup_params = params_from_settings(settings, "duplicates", DuplicateParams)
        duplicates_enabled = component_enabled(settings, "duplicates")
    except ConfigError as exc:
        print(f"boilerstrip dedup: {exc}", file=sys.stderr)
        return 2
    in_path = Path(args.input)
    if not in_path.is_file():
        print(f"boilerstrip dedup: no such file: {in_path}", file=sys.stderr)
        return 1
    report_dir = None if args.no_report else Path(args.report or default_report_dir(args.output))
    store = SqliteTemplateStore(Path(args.state_dir)) if args.state_dir else None
    try:
        summary = finish_crawl(in_path, args.output, params, report_dir, dup_params=dup_params, store=store,
                               duplicates_enabled=duplicates_enabled)
    except (OSError, UnicodeError) as exc:
        print(f"boilerstrip dedup: cannot finish {in_path} -> {args.output}: {exc}", file=sys.stderr)
        return 1
    finally:
        if store is not None:
            store.close()
    if summary["invalid_lines"]:
        print(f"boilerstrip dedup: skipped {summary['invalid_lines']} line(s) that were not JSON objects",
              file=sys.stderr)
    report = f", report {summary['report']}" if "report" in summary else ""
    print(f"boilerstrip dedup: {summary['pages']} pages, {summary['dropped_duplicates']} duplicates dropped, "
          f"{summary['records_out']} records -> {summary['out']}{report}", file=sys.stderr)
    return 0


def finish_after_crawl(settings: Any, out: str | Path) -> int:
    """The end of ``boilerstrip crawl``: the finishing pass over ``out``, in place, with the crawl's settings.

    Skipped when ``BOILERSTRIP_BOILERPLATE_ENABLED`` or ``BOILERSTRIP_BOILERPLATE_FINISH_ENABLED`` is
    false. Uses the crawl's state folder (pages of the same sites from earlier crawls count too).
    Returns 0, or 1 after a one-line error (the crawl's output is then left as the crawl wrote it).
    """
    try:
        if not component_enabled(settings, "boilerplate"):
            return 0
        params = params_from_settings(settings, "boilerplate", BoilerplateParams)
        if not params.finish_enabled:
            return 0
        dup_params = params_from_settings(settings, "duplicates", DuplicateParams)
        duplicates_enabled = component_enabled(settings, "duplicates")
    except ConfigError as exc:
        print(f"boilerstrip crawl: finishing pass: {exc}", file=sys.stderr)
        return 1
    out = Path(out)
    if not out.is_file():
        return 0
    state_dir = resolve_state_dir(params.state_dir, out)
    store = SqliteTemplateStore(state_dir) if state_dir is not None and state_dir.exists() else None
    try:
        summary = finish_crawl(out, out, params, default_report_dir(out), dup_params=dup_params, store=store,
                               duplicates_enabled=duplicates_enabled)
    except (OSError, UnicodeError, ValueError) as exc:
        print(f"boilerstrip crawl: finishing pass failed, output left as crawled: {exc}", file=sys.stderr)
        return 1
    finally:
        if store is not None:
            store.close()
    print(f"boilerstrip crawl: finishing pass: {summary['pages']} pages, {summary['dropped_duplicates']} duplicates "
          f"dropped, template report in {summary.get('report')}", file=sys.stderr)
    return 0
