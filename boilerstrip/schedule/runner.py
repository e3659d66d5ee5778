"""Run scheduled jobs: each run a ``boilerstrip crawl`` child process; the scheduler is APScheduler 3.x.

- A run is a child process because Twisted's reactor cannot be started twice in one process. It writes
  ``DIR/NAME/<UTC time>.jsonl`` (with the crawl's ledger, manifest and report beside it), the child's log
  ``<UTC time>.log`` and ``<UTC time>.summary.json`` (exit status, times, change counts), and on success
  points ``DIR/NAME/latest.jsonl`` at the new output (a hard link swapped in atomically). Runs of one job
  share the job's recurring-crawl state (``DIR/NAME/.boilerstrip-state``): each run fetches only what
  changed and reports new / changed / removed against the last one. A run that failed (exit status not
  0) never moves ``latest.jsonl``: its summary says so (``latest_kept``).
- Retention: a job with ``keep_runs`` / ``keep_days`` deletes its older runs' files after each run
  (:func:`prune_runs`); the run ``latest.jsonl`` is, and ``latest.jsonl`` itself, always stay.
- One job never runs twice at once: APScheduler's ``max_instances=1`` inside the scheduler, and an
  exclusive ``DIR/NAME/.lock`` across processes (a second ``schedule run``, a manual run), held by the
  scheduler and by the crawl it started, so a crawl that outlives a killed scheduler still holds it.
- A run's crawl dies with its scheduler (a parent-death signal, SIGTERM: it closes cleanly).
- A run missed while the scheduler was down (its due time, from the last recorded run, is past) runs once
  at start (``coalesce``: several missed runs are one).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import atomic_open
from boilerstrip.lifetime import parent_death_hook
from boilerstrip.run import HOSTS_DOWN_EXIT, RENDER_MISSED_EXIT
from boilerstrip.recrawl import TOMBSTONES
from boilerstrip.state.layout import schedule_layout

from .jobs import JobError, JobStore, ScheduledJob

__all__ = ["run_job", "Scheduler", "trigger_of", "next_due", "job_running", "utc_stamp", "prune_runs", "cron_trigger"]

logger = logging.getLogger(__name__)

#: how often ``schedule run`` re-reads the jobs file (jobs added or removed while it runs)
RELOAD_EVERY_S = 30
#: on stop, how long a running crawl gets to close cleanly after SIGINT before it is killed
STOP_GRACE_S = 60


def utc_stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _change_counts(path: Path) -> tuple[int, int, dict[str, int]]:
    """(lines of the output, of them pages (not tombstones), change counts of every line)."""
    counts: Counter = Counter()
    records = pages = 0
    if not path.is_file():
        return 0, 0, {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records += 1
                if record.get("change") not in TOMBSTONES:
                    pages += 1
                if isinstance(record.get("change"), str):
                    counts[record["change"]] += 1
    return records, pages, dict(sorted(counts.items()))


def cron_trigger(expression: str, now: datetime | None = None) -> Any:
    """The CronTrigger of a five-field UTC expression; JobError when it is not one or never fires
    (``0 0 31 2 *``: no February has a 31st)."""
    from apscheduler.triggers.cron import CronTrigger

    from .jobs import JobError

    try:
        trigger = CronTrigger.from_crontab(expression, timezone=timezone.utc)
    except (ValueError, TypeError) as exc:
        raise JobError(f"--cron {expression!r}: {exc}") from None
    if trigger.get_next_fire_time(None, now or datetime.now(timezone.utc)) is None:
        raise JobError(f"--cron {expression!r} never fires (no such date)")
    return trigger


def _run_stamps(layout: Any) -> list[str]:
    """The UTC stamps of a job's runs on disk, oldest first (a run is its ``<stamp>.summary.json``)."""
    suffix = ".summary.json"
    return sorted(p.name[: -len(suffix)] for p in layout.folder.glob(f"*{suffix}") if _STAMP.match(p.name[: -len(suffix)]))


_STAMP = re.compile(r"^\d{8}T\d{6}Z$")


def prune_runs(job: ScheduledJob, now: datetime | None = None) -> list[str]:
    """Delete the files of ``job``'s runs beyond its ``keep_runs`` newest and older than ``keep_days``; the
    run ``latest.jsonl`` is and ``latest.jsonl`` itself always stay. Returns the stamps deleted."""
    if not job.keep_runs and not job.keep_days:
        return []
    layout = schedule_layout(job.out_dir, job.name)
    stamps = _run_stamps(layout)
    now = now or datetime.now(timezone.utc)
    doomed: set[str] = set()
    if job.keep_runs:
        doomed.update(stamps[: max(0, len(stamps) - job.keep_runs)])
    if job.keep_days:
        oldest = utc_stamp(now - timedelta(days=job.keep_days))
        doomed.update(stamp for stamp in stamps if stamp < oldest)
    latest = _inode(layout.latest)
    for stamp in sorted(doomed):
        if latest is not None and _inode(layout.run_output(stamp)) == latest:
            doomed.discard(stamp)
            continue
        for path in layout.folder.glob(f"{stamp}.*"):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
    if doomed:
        logger.info("schedule: %s: deleted %d old run(s) (%s)", job.name, len(doomed), ", ".join(sorted(doomed)))
    return sorted(doomed)


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _point_latest(latest: Path, target: Path) -> None:
    """``latest`` becomes the same file as ``target``: a hard link swapped in (a copy where links fail)."""
    tmp = latest.with_name(f".{latest.name}.tmp")
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(target, tmp)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        with open(target, "rb") as src, atomic_open(tmp, "wb") as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                dst.write(chunk)
    os.replace(tmp, latest)


def run_job(job: ScheduledJob, store: JobStore | None = None, python: str = sys.executable,
            running: set[subprocess.Popen] | None = None) -> dict[str, Any]:
    """One run of ``job`` in a child process; returns its summary (``{"skipped": ...}`` when another run
    of the job holds the lock)."""
    layout = schedule_layout(job.out_dir, job.name)
    layout.folder.mkdir(parents=True, exist_ok=True)
    with open(layout.lock, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logger.warning("schedule: %s is running already: this run is skipped", job.name)
            return {"job": job.name, "skipped": "already_running"}
        started = datetime.now(timezone.utc)
        stamp = utc_stamp(started)
        out = layout.run_output(stamp)
        command = [python, "-m", "boilerstrip", "crawl", *job.urls, "-o", str(out), *job.crawl_args]
        logger.info("schedule: %s starts -> %s", job.name, out)
        with open(layout.run_log(stamp), "wb") as log:
            # its own session: a Ctrl-C at the scheduler's terminal reaches the scheduler, which stops the
            # child cleanly, rather than both at once. The child dies with the scheduler however that dies
            # (SIGTERM from the kernel: the crawl closes cleanly, as on `schedule run`'s own stop), and it
            # holds the job's lock until it has (the lock's file is passed on): a scheduler started again
            # meanwhile skips the job instead of running it beside the old crawl.
            child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                     pass_fds=(lock.fileno(),), preexec_fn=parent_death_hook(signal.SIGTERM))  # noqa: PLW1509 - prctl only
            if running is not None:
                running.add(child)
            try:
                code = child.wait()
            finally:
                if running is not None:
                    running.discard(child)
        finished = datetime.now(timezone.utc)
        records, pages, changes = _change_counts(out)
        summary = {
            "job": job.name, "started_at": _iso(started), "finished_at": _iso(finished),
            "seconds": round((finished - started).total_seconds(), 3), "exit_code": code, "output": str(out),
            "log": str(layout.run_log(stamp)),
            # records: the output's lines; pages: those that are pages (not removed/unseen tombstones)
            "records": records, "pages": pages, "tombstones": records - pages, "changes": changes,
            "latest_updated": False,
        }
        if code == 0 and out.is_file():
            _point_latest(layout.latest, out)
            summary["latest_updated"] = True
        else:
            previous = layout.latest.resolve() if layout.latest.exists() else None
            what = f"the run failed (exit {code}{_EXIT_MEANINGS.get(code, '')})"
            summary["latest_kept"] = (f"{what}: latest.jsonl still holds the last good run"
                                      if previous is not None else f"{what}: no latest.jsonl yet")
            logger.warning("schedule: %s: %s (see %s)", job.name, summary["latest_kept"], layout.run_log(stamp))
        with atomic_open(layout.run_summary(stamp), "w") as handle:
            handle.write(json.dumps(summary, indent=1) + "\n")
        if store is not None:
            store.record_run(job.name, {"started_at": summary["started_at"], "finished_at": summary["finished_at"],
                                        "exit_code": code, "output": str(out)})
        logger.info("schedule: %s finished (exit %s) in %.1f s: %d records (%d pages, %d tombstones) %s", job.name,
                    code, summary["seconds"], records, pages, records - pages, changes)
        summary["pruned"] = prune_runs(job, finished)
        return summary


#: what a crawl's exit status says (``boilerstrip crawl``), for a run that did not move latest.jsonl
_EXIT_MEANINGS = {1: ": stopped early, or no start URL gave a page (unreachable, an HTTP error, or disallowed by "
                     "robots.txt)", 2: ": a bad argument",
                  3: ": the ledger does not reconcile",
                  RENDER_MISSED_EXIT: ": pages that needed a browser did not get a whole render",
                  HOSTS_DOWN_EXIT: ": a host stopped answering and was given up; the next run fetches its pages"}


def trigger_of(job: ScheduledJob) -> Any:
    """The job's APScheduler trigger; JobError when its cron expression is bad or never fires."""
    from apscheduler.triggers.interval import IntervalTrigger

    if job.every_s:
        return IntervalTrigger(seconds=job.every_s, timezone=timezone.utc)
    return cron_trigger(str(job.cron))


def next_due(job: ScheduledJob, last_run: dict[str, Any] | None, now: datetime) -> datetime | None:
    """When ``job`` is due next, from its last recorded run: an interval after it, or the cron expression's
    next time after it (a time past means a run was missed). An interval job never run yet is due ``now``;
    a cron job never run, at its first time after ``now``. None: the cron expression never fires again."""
    try:
        last = datetime.strptime(str(last_run["started_at"]), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except (TypeError, KeyError, ValueError):  # never run, or a record someone edited: as if never run
        return now if job.every_s else trigger_of(job).get_next_fire_time(None, now + timedelta(microseconds=1))
    if job.every_s:
        return last + timedelta(seconds=job.every_s)
    return trigger_of(job).get_next_fire_time(None, last + timedelta(seconds=1))


def job_running(job: ScheduledJob) -> bool:
    """Is a run of ``job`` going on now (its crawl, or the scheduler that started it, holds ``DIR/NAME/.lock``)?
    Only looks: no file is made."""
    try:
        fd = os.open(schedule_layout(job.out_dir, job.name).lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # (closing drops a lock taken here)
    return False


class Scheduler:
    """The foreground scheduler of ``boilerstrip schedule run`` (for systemd, a container, a terminal)."""

    def __init__(self, store: JobStore, only: list[str] | None = None, python: str = sys.executable,
                 reload_every_s: float = RELOAD_EVERY_S) -> None:
        self.store = store
        self.only = set(only or ())
        self.python = python
        self.reload_every_s = reload_every_s
        self.running: set[subprocess.Popen] = set()
        self._defs: dict[str, dict[str, Any]] = {}
        self._scheduler: Any = None
        self._lock = threading.Lock()
        self._reported: dict[str, str] = {}  # job name -> the problem with its entry already logged
        self._bad_triggers: dict[str, str] = {}  # job name -> why its trigger could not be made (logged once)

    def _wanted(self) -> dict[str, ScheduledJob]:
        try:
            jobs = self.store.jobs()
        except JobError as exc:  # the whole file is broken: say so, keep running what was read before
            logger.error("schedule: %s", exc)
            return {name: ScheduledJob(**definition) for name, definition in self._defs.items()}
        for name, problem in sorted(self.store.problems.items()):
            if problem != self._reported.get(name):
                logger.error("schedule: %s: %s: skipped", self.store.path, problem)
        self._reported = dict(self.store.problems)
        return {j.name: j for j in jobs if not self.only or j.name in self.only}

    def sync(self) -> None:
        """Bring the scheduler's jobs in line with the jobs file (added, removed, changed)."""
        with self._lock:
            wanted = self._wanted()
            now = datetime.now(timezone.utc)
            for name in sorted(set(self._defs) - set(wanted)):
                self._scheduler.remove_job(name)
                del self._defs[name]
                logger.info("schedule: %s removed", name)
            for name, job in sorted(wanted.items()):
                if self._defs.get(name) == asdict(job):
                    continue
                try:
                    trigger = trigger_of(job)
                except JobError as exc:
                    if self._bad_triggers.get(name) != str(exc):
                        logger.error("schedule: %s: %s: skipped", name, exc)
                    self._bad_triggers[name] = str(exc)
                    continue
                self._bad_triggers.pop(name, None)
                if name in self._defs:
                    self._scheduler.remove_job(name)
                    del self._defs[name]
                last = self.store.last_run(name)
                due = next_due(job, last, now)
                missed = due is not None and due <= now
                # the first run when the job's last run says so (an interval job run 5 h ago every 6 h: in 1 h,
                # not 6 h after this scheduler started), at once when a run was missed
                options: dict[str, Any] = {"next_run_time": max(due, now)} if due is not None else {}
                self._scheduler.add_job(run_job, trigger, id=name, name=name,
                                        kwargs={"job": job, "store": self.store, "python": self.python,
                                                "running": self.running},
                                        max_instances=1, coalesce=True, misfire_grace_time=None, **options)
                self._defs[name] = asdict(job)
                why = "never run yet" if last is None else "a run was missed"
                logger.info("schedule: %s%s", job.describe(), f" ({why}: running it now)" if missed else "")

    def run(self) -> int:
        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.blocking import BlockingScheduler

        self._scheduler = BlockingScheduler(timezone=timezone.utc, executors={"default": ThreadPoolExecutor(8)})
        self.sync()
        if not self._defs:
            logger.warning("schedule: no jobs in %s", self.store.path)
        self._scheduler.add_job(self.sync, "interval", seconds=self.reload_every_s, id="__reload__",
                                max_instances=1, coalesce=True)
        self._scheduler.add_listener(self._ran, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
        previous = {sig: signal.signal(sig, self._stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self._scheduler.start()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._stop_children()
        return 0

    def _ran(self, event: Any) -> None:
        """After a run of a job: when its next run is (APScheduler's own time for it)."""
        if event.job_id == "__reload__":
            return
        scheduled = self._scheduler.get_job(event.job_id)
        if scheduled is not None and scheduled.next_run_time is not None:
            logger.info("schedule: %s runs next at %s", event.job_id, _iso(scheduled.next_run_time))

    def _stop(self, signum: int, frame: Any = None) -> None:
        logger.info("schedule: stopping (signal %d)", signum)
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)

    def _stop_children(self) -> None:
        children = list(self.running)
        for child in children:  # Scrapy closes cleanly on SIGINT (the crawl can be resumed)
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGINT)
        for child in children:
            try:
                child.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    child.kill()
