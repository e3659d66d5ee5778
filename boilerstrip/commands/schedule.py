"""``boilerstrip schedule add|list|remove|run``: recurring crawls on a schedule.

    boilerstrip schedule add NAME URL... (--every 6h | --cron "0 3 * * *") -o DIR [crawl options]
    boilerstrip schedule list
    boilerstrip schedule remove NAME
    boilerstrip schedule run [--only NAME]      # foreground: systemd, a container, a terminal

Jobs are kept in the scheduler's state folder (``--state DIR``, default ``./.boilerstrip-state``;
``<state>/schedule.json``). Each run writes ``DIR/NAME/<UTC time>.jsonl`` and its summary and updates
``DIR/NAME/latest.jsonl`` (see :mod:`boilerstrip.schedule.runner`). Bad arguments exit 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from boilerstrip.commands.crawl import UsageError, add_crawl_options, build_settings
from boilerstrip.schedule.jobs import JobError, JobStore, ScheduledJob, check_name, parse_every
from boilerstrip.state.layout import STATE_FOLDER

__all__ = ["HELP", "add_arguments", "run", "crawl_argv"]

HELP = "Schedule recurring crawls (add, list, remove) and run the scheduler in the foreground (run)."


def _state_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--state", default=STATE_FOLDER, metavar="DIR",
                        help=f"the scheduler's state folder, where jobs are kept (default ./{STATE_FOLDER})")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    add = sub.add_parser("add", help="add a job", description="Add a recurring crawl job.")
    add.add_argument("name", metavar="NAME", help="the job's name (its runs go to DIR/NAME/)")
    add.add_argument("urls", nargs="+", metavar="URL", help="start URL(s)")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--every", metavar="INTERVAL", help="run every INTERVAL: 90s, 15m, 6h, 1d, 2w")
    when.add_argument("--cron", metavar="EXPR", help='run at the times of a five-field cron expression, UTC ("0 3 * * *")')
    add.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder the job's runs go to (DIR/NAME/)")
    add.add_argument("--replace", action="store_true", help="replace a job of the same name")
    _state_option(add)
    add_crawl_options(add)
    listing = sub.add_parser("list", help="list the jobs and their last runs")
    _state_option(listing)
    remove = sub.add_parser("remove", help="remove a job (its runs stay on disk)")
    remove.add_argument("name", metavar="NAME")
    _state_option(remove)
    runner = sub.add_parser("run", help="run the scheduler in the foreground until stopped (SIGTERM, Ctrl-C)")
    runner.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this job (repeatable)")
    _state_option(runner)


def crawl_argv(args: argparse.Namespace) -> list[str]:
    """The ``boilerstrip crawl`` options of a parsed ``schedule add``, as a run will pass them."""
    argv: list[str] = []
    for option, name in (("--profile", "profile"), ("--max-pages", "max_pages"), ("--max-depth", "max_depth"),
                         ("--scope", "scope")):
        value = getattr(args, name, None)
        if value is not None:
            argv += [option, str(value)]
    if args.no_sitemaps:
        argv.append("--no-sitemaps")
    if args.changes_only:
        argv.append("--changes-only")
    for entry in args.allow_private:
        argv += ["--allow-private", entry]
    for entry in args.settings:
        argv += ["-s", entry]
    argv += ["--log-level", args.log_level]
    return argv


def _add(args: argparse.Namespace, store: JobStore) -> int:
    name = check_name(args.name)
    every = parse_every(args.every) if args.every else None
    cron = None
    if args.cron:
        from apscheduler.triggers.cron import CronTrigger

        try:
            CronTrigger.from_crontab(args.cron, timezone=timezone.utc)
        except ValueError as exc:
            raise JobError(f"--cron: {exc}") from None
        cron = args.cron
    if args.resume:
        raise JobError("--resume is not a schedule option: each run is a new crawl")
    from boilerstrip.commands.crawl import complete_bare_hosts

    args.urls, notes = complete_bare_hosts(list(args.urls))
    for note in notes:
        print(f"boilerstrip schedule: {note}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix=".boilerstrip-check-") as tmp:
        build_settings(args, Path(tmp) / "check.jsonl")  # the crawl options are checked now, not at 3 a.m.
    out_dir = Path(args.output).expanduser().resolve()
    job = ScheduledJob(name=name, urls=args.urls, out_dir=str(out_dir), every_s=every, cron=cron,
                       crawl_args=crawl_argv(args),
                       created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    store.add(job, replace=args.replace)
    print(f"boilerstrip schedule: added {job.describe()}")
    return 0


def _list(store: JobStore) -> int:
    jobs = store.jobs()
    if not jobs:
        print(f"no jobs in {store.path}")
    for job in jobs:
        last = store.last_run(job.name)
        run = f"; last run {last['started_at']} exit {last['exit_code']}" if last else "; never run"
        print(job.describe() + run)
    return 0


def run(args: argparse.Namespace) -> int:
    store = JobStore(args.state)
    try:
        if args.action == "add":
            return _add(args, store)
        if args.action == "list":
            return _list(store)
        if args.action == "remove":
            if not store.remove(args.name):
                raise JobError(f"no job named {args.name!r} in {store.path}")
            print(f"boilerstrip schedule: removed {args.name} (its runs stay on disk)")
            return 0
    except (JobError, UsageError) as exc:
        print(f"boilerstrip schedule: {exc}", file=sys.stderr)
        return 2
    from boilerstrip.schedule.runner import Scheduler

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    print(f"boilerstrip schedule: running the jobs of {store.path} (SIGTERM or Ctrl-C stops)", file=sys.stderr,
          flush=True)
    return Scheduler(store, only=args.only).run()
