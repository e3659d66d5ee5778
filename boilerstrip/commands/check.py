"""``boilerstrip check OUT.jsonl [--html REPORT.html] [--json REPORT.json] [--fail-on RULE...]``.

Reads any JSONL with ``url`` and ``text`` (ours or another tool's: trafilatura's, Firecrawl's and Crawl4AI's
fields are read too, :mod:`boilerstrip.check.foreign`), prints a short summary per site and
writes the reports asked for. Exit status: 0; 1 when a ``--fail-on`` rule has a finding (warn or fail) on
some site, when ``--fail-on`` is given and no page was left to check, or the input cannot be read; 2 on bad
arguments (an input that is not JSONL records: a manifest, a ledger, an HTML page, a folder, binary data, an
empty file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import atomic_open
from boilerstrip.check import RULES, CheckParams, check_records, failed_rules, render_html
from boilerstrip.check.foreign import as_checked_record, record_url
from boilerstrip.config import ConfigError, params_from_settings, unknown_settings
from boilerstrip.items import complete_record
from boilerstrip.finishing.base import EMPTY, FinishContext, count_lines, read_jsonl, records_file_problem
from boilerstrip.finishing.steps import PassProgress, ProgressTicker
from boilerstrip.recrawl import TOMBSTONES

HELP = "Judge a crawl's JSONL per site: repeated lines, navigation words, first paragraphs, empty pages."

__all__ = ["HELP", "add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="records (JSONL) with url and text, from boilerstrip or another tool "
                                      "(trafilatura's, Firecrawl's and Crawl4AI's fields are read too)")
    parser.add_argument("--html", metavar="REPORT.html", help="write a self-contained HTML report here")
    parser.add_argument("--json", metavar="REPORT.json", help="write the report as JSON here")
    parser.add_argument("--fail-on", nargs="+", default=[], metavar="RULE", choices=[*RULES, "any"],
                        help=f"exit 1 when a site has a finding of one of these rules: {', '.join(RULES)}, any")
    parser.add_argument("--min-confidence", type=float, default=0.0, metavar="C",
                        help="leave out records whose extraction confidence (estimated F1, 0-1) is below C; "
                             "they are listed with their reason")
    parser.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="a BOILERSTRIP_CHECK_* setting (repeatable)")


def run(args: argparse.Namespace) -> int:
    settings: dict[str, str] = {}
    for pair in args.settings:
        name, sep, value = pair.partition("=")
        if not sep:
            print(f"boilerstrip check: -s expects NAME=VALUE, got {pair!r}", file=sys.stderr)
            return 2
        settings[name.strip()] = value
    problems = unknown_settings(settings)  # a typo or a former setting is not silently ignored
    if problems:
        print(f"boilerstrip check: {'; '.join(problems)}", file=sys.stderr)
        return 2
    try:
        params = params_from_settings(settings, "check", CheckParams)
    except ConfigError as exc:
        print(f"boilerstrip check: {exc}", file=sys.stderr)
        return 2
    if not 0.0 <= args.min_confidence <= 1.0:
        print(f"boilerstrip check: --min-confidence must be in [0, 1], not {args.min_confidence}", file=sys.stderr)
        return 2
    path = Path(args.input)
    problem = records_file_problem(path, url_of=record_url)
    if problem is not None:
        what = "empty: there are no records to check" if problem == EMPTY else problem
        print(f"boilerstrip check: {path} is {what}", file=sys.stderr)
        return 2
    context = FinishContext()
    progress = PassProgress(total=count_lines(path), phase="reading records", label="check")
    ticker = ProgressTicker(progress)  # a line every few seconds: a large crawl takes minutes

    seen = {"pages": 0, "textless": 0}

    def counted() -> Iterator[dict[str, Any]]:
        for progress.done, record in enumerate(read_jsonl(path, context), 1):
            record = as_checked_record(record)  # another tool's fields under boilerstrip's names
            if isinstance(record, dict) and record.get("url") and not record.get("outcome") \
                    and record.get("change") not in TOMBSTONES:
                seen["pages"] += 1
                seen["textless"] += "text" not in record and "markdown" not in record
            yield complete_record(record)  # (which fills a missing text in as "")

    try:
        report = check_records(counted(), params, min_confidence=args.min_confidence)
        if seen["pages"] and seen["textless"] == seen["pages"]:
            # a crawl written with --fields url,title: every page judged "empty" (fail empty_pages, exit 0)
            print(f"boilerstrip check: the records of {path} hold no text or markdown (a crawl written with --fields "
                  "that leaves them out?): nothing to judge", file=sys.stderr)
            return 2
        if args.json:
            with atomic_open(Path(args.json), "w") as handle:
                handle.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
        if args.html:
            with atomic_open(Path(args.html), "w") as handle:
                handle.write(render_html(report, source=path.name))
    except (OSError, UnicodeError) as exc:
        print(f"boilerstrip check: {exc}", file=sys.stderr)
        return 1
    finally:
        ticker.stop()
    if context.invalid_lines:
        print(f"boilerstrip check: skipped {len(context.invalid_lines)} line(s) that were not JSON objects "
              f"(line {', '.join(map(str, context.invalid_lines[:5]))}{', ...' if len(context.invalid_lines) > 5 else ''})",
              file=sys.stderr)
    if report["excluded"]:
        reasons = ", ".join(f"{reason} {n}" for reason, n in report["excluded_by_reason"].items())
        print(f"boilerstrip check: left out {len(report['excluded'])} record(s) below --min-confidence "
              f"{args.min_confidence} ({reasons})", file=sys.stderr)
        for entry in report["excluded"]:
            print(f"  excluded {entry['reason']}: {entry['url']} (confidence {entry['confidence']})", file=sys.stderr)
    if not report["sites"]:
        why = (f"every page was left out below --min-confidence {args.min_confidence}" if report["excluded"]
               else "no page with a url and a text")
        print(f"boilerstrip check: nothing checked in {path}: {why}", file=sys.stderr)
        if args.fail_on:  # a gate that looked at no page has not passed
            print(f"boilerstrip check: failing: --fail-on {' '.join(args.fail_on)} had no page to look at",
                  file=sys.stderr)
            return 1
    for site in report["sites"]:
        print(f"{site['site']}: {site['verdict']} ({site['pages']} pages, navigation lines on "
              f"{site['nav_word_share']:.1%}, first paragraph = title on {site['first_paragraph_match_share']:.1%})")
        for reason in site["reasons"]:
            print(f"  {reason['level']:<4} {reason['rule']}: {reason['detail']}")
    hits = failed_rules(report, args.fail_on)
    if hits:
        print(f"boilerstrip check: failing on {', '.join(hits)}", file=sys.stderr)
        return 1
    return 0
