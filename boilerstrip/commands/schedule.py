"""``boilerstrip schedule add|list|remove|run``: recurring crawls on a schedule.

    boilerstrip schedule add NAME URL... (--every 6h | --cron "0 3 * * *") -o DIR [--keep N] [--keep-days N]
                             [--state DIR] [crawl options]
    boilerstrip schedule list
    boilerstrip schedule remove NAME
    boilerstrip schedule run [--only NAME]      # foreground: systemd, a container, a terminal

Jobs are kept in the scheduler's store, one folder whatever the working folder: ``--store DIR``, default
``$XDG_STATE_HOME/boilerstrip`` or ``~/.local/state/boilerstrip`` (``<store>/schedule.json``). ``--state``
means what it means for ``crawl``: the job's recurring-crawl history (default ``DIR/NAME/.boilerstrip-state``).
Each run writes ``DIR/NAME/<UTC time>.jsonl`` and its summary and updates ``DIR/NAME/latest.jsonl`` (see
:mod:`boilerstrip.schedule.runner`). Bad arguments exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from boilerstrip.atomicfile import OutputBusy, output_lock, output_writer
from boilerstrip.commands.crawl import add_crawl_options, add_urls_option, complete_bare_hosts, start_urls_of
from boilerstrip.run import UsageError, build_settings, check_state_dir, count_option
from boilerstrip.schedule.jobs import JobError, JobStore, ScheduledJob, check_name, default_store, parse_every
from boilerstrip.state.layout import STATE_FOLDER

__all__ = ["HELP", "add_arguments", "run", "crawl_argv"]

HELP = "Schedule recurring crawls (add, list, remove) and run the scheduler in the foreground (run)."


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", default=None, metavar="DIR",
                        help=f"the scheduler's store, where jobs are kept (default {default_store()}: "
                             "$XDG_STATE_HOME/boilerstrip or ~/.local/state/boilerstrip)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    add = sub.add_parser("add", help="Add a recurring crawl job.", description="Add a recurring crawl job.")
    add.add_argument("name", metavar="NAME", help="the job's name (its runs go to DIR/NAME/)")
    add.add_argument("urls", nargs="*", metavar="URL", help="start URL(s)")
    add_urls_option(add)
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--every", metavar="INTERVAL", help="run every INTERVAL: 90s, 15m, 6h, 1d, 2w")
    when.add_argument("--cron", metavar="EXPR", help='run at the times of a five-field cron expression, UTC ("0 3 * * *")')
    add.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder the job's runs go to (DIR/NAME/)")
    add.add_argument("--replace", action="store_true", help="replace a job of the same name")
    add.add_argument("--keep", dest="keep_runs", metavar="N",
                     help="keep the newest N runs, delete older ones after each run (latest.jsonl always stays)")
    add.add_argument("--keep-days", dest="keep_days", metavar="N",
                     help="delete runs older than N days after each run (latest.jsonl always stays)")
    add.add_argument("--state", metavar="DIR", help="the job's recurring-crawl history, as for crawl "
                     f"(default DIR/NAME/{STATE_FOLDER})")
    _store_option(add)
    add_crawl_options(add, resume=False)
    listing = sub.add_parser("list", help="List the jobs, their last and next runs, and whether a scheduler runs them.")
    _store_option(listing)
    remove = sub.add_parser("remove", help="Remove a job (its runs stay on disk).")
    remove.add_argument("name", metavar="NAME")
    _store_option(remove)
    runner = sub.add_parser("run", help="Run the scheduler in the foreground until stopped (SIGTERM, Ctrl-C).")
    runner.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this job (repeatable)")
    _store_option(runner)
    for each in (add, listing, remove, runner):  # the parser cli.wrong_kind_of_path reads the options of
        each.set_defaults(_parser=each)


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
    if args.fields:
        argv += ["--fields", args.fields]
    for entry in args.allow_private:
        argv += ["--allow-private", entry]
    for entry in args.settings:
        argv += ["-s", entry]
    if getattr(args, "state", None):
        argv += ["--state", str(Path(args.state).expanduser().resolve())]
    argv += ["--log-level", args.log_level]
    return argv


def _add(args: argparse.Namespace, store: JobStore) -> int:
    name = check_name(args.name)
    every = parse_every(args.every) if args.every else None
    cron = None
    if args.cron:
        from boilerstrip.schedule.runner import cron_trigger

        cron_trigger(args.cron)  # a bad expression, or one that never fires (0 0 31 2 *), is refused now
        cron = args.cron
    keep_runs = count_option(args.keep_runs, "--keep", 1)
    keep_days = count_option(args.keep_days, "--keep-days", 1)
    if args.state:
        check_state_dir(args.state)

    args.urls = start_urls_of(args)
    if not args.urls:
        raise UsageError("no start URL: boilerstrip schedule add NAME URL [URL ...] (or --urls FILE)")
    args.urls, notes = complete_bare_hosts(list(args.urls))
    for note in notes:
        print(f"boilerstrip schedule: {note}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix=".boilerstrip-check-") as tmp:
        build_settings(args, Path(tmp) / "check.jsonl")  # the crawl options are checked now, not at 3 a.m.
    out_dir = Path(args.output).expanduser().resolve()
    job = ScheduledJob(name=name, urls=args.urls, out_dir=str(out_dir), every_s=every, cron=cron,
                       crawl_args=crawl_argv(args), keep_runs=keep_runs, keep_days=keep_days,
                       created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    store.add(job, replace=args.replace)
    print(f"boilerstrip schedule: added {job.describe()}")
    return 0


def _list(store: JobStore) -> int:
    from boilerstrip.schedule.runner import job_running, next_due

    jobs = store.jobs()
    if not jobs and not store.problems:
        print(f"no jobs in {store.path}")
    now = datetime.now(timezone.utc)
    for job in jobs:
        last = store.last_run(job.name)
        run = f"; last run {last.get('started_at')} exit {last.get('exit_code')}" if last else "; never run"
        try:
            due = next_due(job, last, now)
        except JobError as exc:
            due, run = None, f"{run}; {exc}"
        if job_running(job):
            run += "; running now"
        elif due is not None:
            run += "; next run: due now" if due <= now else f"; next run {due.strftime('%Y-%m-%dT%H:%M:%SZ')}"
        print(job.describe() + run)
    if jobs:
        # the jobs run only while a scheduler runs them: say whether one does (it holds the store's lock)
        holder = output_writer(store.path)
        print(f"a scheduler runs these jobs ({holder})" if holder else
              "no scheduler is running these jobs: `boilerstrip schedule run` runs them (systemd, a container, "
              "a terminal)")
    for problem in store.problems.values():
        print(f"boilerstrip schedule: {store.path}: {problem}: skipped", file=sys.stderr)
    return 2 if store.problems else 0


def run(args: argparse.Namespace) -> int:
    store = JobStore(args.store)
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
    try:
        names = {job.name for job in store.jobs()}  # a jobs file that is not the jobs object stops here, in one line
    except JobError as exc:
        print(f"boilerstrip schedule: {exc}", file=sys.stderr)
        return 2
    unknown = [name for name in args.only if name not in names and name not in store.problems]
    if unknown:  # (it ran no job and said "no jobs in ...", a store that has some)
        print(f"boilerstrip schedule: --only {', '.join(unknown)}: no such job in {store.path} "
              f"(its jobs: {', '.join(sorted(names)) or 'none'})", file=sys.stderr)
        return 2
    from boilerstrip.schedule.runner import Scheduler

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    with contextlib.ExitStack() as held:
        try:  # one scheduler a store: two each fired every job (a run twice in a row, or skipped as already_running)
            held.enter_context(output_lock(store.path))
        except OutputBusy as exc:
            print(f"boilerstrip schedule: another scheduler runs the jobs of {store.path} (pid {exc.holder}); one "
                  "scheduler a store (stop it first, or give another --store)", file=sys.stderr)
            return 2
        print(f"boilerstrip schedule: running the jobs of {store.path} (SIGTERM or Ctrl-C stops)", file=sys.stderr,
              flush=True)
        return Scheduler(store, only=args.only).run()
