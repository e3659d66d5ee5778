"""Scheduled jobs and where they are kept: ``<store>/schedule.json``. Pure: no Scrapy, no APScheduler.

A job is a crawl to repeat (start URLs, crawl options, an output folder) and when: ``every`` seconds or a
five-field ``cron`` expression (UTC), and how many of its runs to keep. The store is one folder whatever
the working folder (:func:`default_store`: ``$XDG_STATE_HOME/boilerstrip``, else
``~/.local/state/boilerstrip``; ``schedule --store DIR`` picks another). The file is rewritten atomically
under an exclusive lock, so ``schedule add`` and a running ``schedule run`` (which records each run's time
there) never lose an update. A file someone edited by hand is checked entry by entry: a broken job is
named and skipped (:attr:`JobStore.problems`), never a traceback.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import atomic_open
from boilerstrip.state.layout import SCHEDULE_FILE
from boilerstrip.urls import without_password

__all__ = ["ScheduledJob", "JobStore", "parse_every", "check_name", "JobError", "default_store", "job_from_entry",
           "MAX_EVERY_S"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_EVERY = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: the shortest interval accepted: a crawl that starts more often than this is a load test, not a schedule
MIN_EVERY_S = 5
#: the longest: ten years (a longer one is a typo, and past ~2.7 million years Python's dates overflow)
MAX_EVERY_S = 520 * 7 * 86400


def default_store() -> Path:
    """Where the scheduler keeps its jobs unless ``--store`` says otherwise: the XDG state folder
    (``$XDG_STATE_HOME/boilerstrip``, else ``~/.local/state/boilerstrip``), the same from any folder."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    root = Path(base).expanduser() if base and Path(base).expanduser().is_absolute() else Path.home() / ".local" / "state"
    return root / "boilerstrip"


class JobError(ValueError):
    """A bad job definition or an unknown job; the message is one line for the user."""


def parse_every(value: str) -> int:
    """``90s``, ``15m``, ``6h``, ``1d``, ``2w`` -> seconds."""
    match = _EVERY.match(value or "")
    if not match:
        raise JobError(f"--every expects a number and a unit (s, m, h, d, w), e.g. 6h; got {value!r}")
    seconds = int(match.group(1)) * _UNITS[match.group(2)]
    if seconds < MIN_EVERY_S:
        raise JobError(f"--every must be at least {MIN_EVERY_S}s, got {value!r}")
    if seconds > MAX_EVERY_S:
        raise JobError(f"--every must be at most 520w (ten years), got {value!r}")
    return seconds


def check_name(name: str) -> str:
    if not _NAME.match(name or "") or name in (".", ".."):
        raise JobError(f"a job name is letters, digits, '.', '_' or '-' (at most 64), got {name!r}")
    return name


@dataclass(frozen=True)
class ScheduledJob:
    name: str
    urls: list[str]
    out_dir: str  # absolute; runs go to out_dir/name/
    every_s: int | None = None
    cron: str | None = None  # five fields, UTC
    crawl_args: list[str] = field(default_factory=list)  # boilerstrip crawl options, as typed
    created: str = ""
    keep_runs: int | None = None  # keep the newest N runs (None: all); latest.jsonl's run always stays
    keep_days: int | None = None  # delete runs older than N days (None: none); latest.jsonl's run always stays

    def describe(self) -> str:
        when = f"every {self.every_s}s" if self.every_s else f"cron {self.cron!r} (UTC)"
        keep = [f"{self.keep_runs} runs" if self.keep_runs else "", f"{self.keep_days} days" if self.keep_days else ""]
        kept = f" (keeps {' and '.join(k for k in keep if k)})" if any(keep) else ""
        urls = " ".join(without_password(url) for url in self.urls)  # a job's user:password@ stays in its file
        return f"{self.name}: {urls} {when} -> {Path(self.out_dir) / self.name}{kept}"


_JOB_FIELDS = {f.name: f for f in fields(ScheduledJob)}
_REQUIRED = ("name", "urls", "out_dir")


def job_from_entry(name: str, entry: Any) -> ScheduledJob:
    """The job of one ``schedule.json`` entry, checked field by field; JobError says what is wrong."""
    if not isinstance(entry, dict):
        raise JobError(f"job {name!r}: expected an object, got {type(entry).__name__}")
    unknown = sorted(set(entry) - set(_JOB_FIELDS))
    if unknown:
        raise JobError(f"job {name!r}: unknown field(s) {', '.join(unknown)}")
    missing = [key for key in _REQUIRED if key not in entry]
    if missing:
        raise JobError(f"job {name!r}: missing field(s) {', '.join(missing)}")
    if entry["name"] != name:
        raise JobError(f"job {name!r}: its name field says {entry['name']!r}")
    check_name(name)
    urls = entry["urls"]
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) and u for u in urls):
        raise JobError(f"job {name!r}: urls must be a list of URLs")
    if not isinstance(entry["out_dir"], str) or not entry["out_dir"]:
        raise JobError(f"job {name!r}: out_dir must be a folder path")
    args = entry.get("crawl_args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise JobError(f"job {name!r}: crawl_args must be a list of strings")
    every, cron = entry.get("every_s"), entry.get("cron")
    if (every is None) == (cron is None):
        raise JobError(f"job {name!r}: needs exactly one of every_s and cron")
    if every is not None and (not isinstance(every, int) or isinstance(every, bool)
                              or not MIN_EVERY_S <= every <= MAX_EVERY_S):
        raise JobError(f"job {name!r}: every_s must be a whole number of seconds from {MIN_EVERY_S} to {MAX_EVERY_S}")
    if cron is not None and not isinstance(cron, str):
        raise JobError(f"job {name!r}: cron must be a string")
    for key in ("keep_runs", "keep_days"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise JobError(f"job {name!r}: {key} must be a whole number >= 1")
    if not isinstance(entry.get("created", ""), str):
        raise JobError(f"job {name!r}: created must be a string")
    return ScheduledJob(**entry)

class JobStore:
    """The jobs file of a store folder. ``problems``: job name -> what is wrong with its entry, for the
    entries the last read skipped."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder is not None else default_store()
        self.path = self.folder / SCHEDULE_FILE
        self.problems: dict[str, str] = {}

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                data = self._read()
                before = json.dumps(data, sort_keys=True)
                yield data
                if json.dumps(data, sort_keys=True) != before:
                    with atomic_open(self.path, "w") as handle:
                        handle.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"version": 1, "jobs": {}, "runs": {}}
        except (ValueError, UnicodeError) as exc:
            raise JobError(f"{self.path} is not readable JSON ({exc}): fix it, or move it away to start afresh") from None
        except OSError as exc:
            raise JobError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if not isinstance(data, dict):
            raise JobError(f"{self.path} holds a JSON {type(data).__name__}, not the jobs object "
                           '({"jobs": {...}, "runs": {...}}): fix it, or move it away to start afresh')
        for key in ("jobs", "runs"):
            if not isinstance(data.setdefault(key, {}), dict):
                raise JobError(f"{self.path}: {key!r} must be an object, got {type(data[key]).__name__}")
        return data

    def _valid(self, data: dict[str, Any]) -> dict[str, ScheduledJob]:
        jobs: dict[str, ScheduledJob] = {}
        self.problems = {}
        for name in sorted(data["jobs"], key=str):
            try:
                jobs[name] = job_from_entry(name, data["jobs"][name])
            except JobError as exc:
                self.problems[name] = str(exc)
        return jobs

    def jobs(self) -> list[ScheduledJob]:
        """The valid jobs, by name (a broken entry is skipped and named in ``problems``)."""
        if not self.path.exists():
            self.problems = {}
            return []  # nothing to lock, nothing to make: a list from anywhere leaves no file behind
        with self._locked() as data:
            return list(self._valid(data).values())

    def get(self, name: str) -> ScheduledJob | None:
        if not self.path.exists():
            return None
        with self._locked() as data:
            return self._valid(data).get(name)

    def add(self, job: ScheduledJob, replace: bool = False) -> None:
        with self._locked() as data:
            if job.name in data["jobs"] and not replace:
                raise JobError(f"a job named {job.name!r} exists already (schedule remove it first, or --replace)")
            data["jobs"][job.name] = asdict(job)

    def remove(self, name: str) -> bool:
        with self._locked() as data:
            data["runs"].pop(name, None)
            return data["jobs"].pop(name, None) is not None

    def last_run(self, name: str) -> dict[str, Any] | None:
        if not self.path.exists():
            return None
        with self._locked() as data:
            run = data["runs"].get(name)
            return run if isinstance(run, dict) else None

    def record_run(self, name: str, run: dict[str, Any]) -> None:
        with self._locked() as data:
            if name in data["jobs"]:
                data["runs"][name] = dict(run)
