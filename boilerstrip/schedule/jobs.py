"""Scheduled jobs and where they are kept: ``<state folder>/schedule.json``. Pure: no Scrapy, no APScheduler.

A job is a crawl to repeat (start URLs, crawl options, an output folder) and when: ``every`` seconds or a
five-field ``cron`` expression (UTC). The file is rewritten atomically under an exclusive lock, so
``schedule add`` and a running ``schedule run`` (which records each run's time there) never lose an update.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import atomic_open
from boilerstrip.state.layout import SCHEDULE_FILE

__all__ = ["ScheduledJob", "JobStore", "parse_every", "check_name", "JobError"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_EVERY = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: the shortest interval accepted: a crawl that starts more often than this is a load test, not a schedule
MIN_EVERY_S = 5


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

    def describe(self) -> str:
        when = f"every {self.every_s}s" if self.every_s else f"cron {self.cron!r} (UTC)"
        return f"{self.name}: {' '.join(self.urls)} {when} -> {Path(self.out_dir) / self.name}"


class JobStore:
    def __init__(self, state_dir: str | Path) -> None:
        self.folder = Path(state_dir).expanduser()
        self.path = self.folder / SCHEDULE_FILE

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
        except ValueError as exc:
            raise JobError(f"{self.path} is not readable JSON: {exc}") from None
        data.setdefault("jobs", {})
        data.setdefault("runs", {})
        return data

    def jobs(self) -> list[ScheduledJob]:
        with self._locked() as data:
            return [ScheduledJob(**data["jobs"][name]) for name in sorted(data["jobs"])]

    def get(self, name: str) -> ScheduledJob | None:
        with self._locked() as data:
            entry = data["jobs"].get(name)
            return ScheduledJob(**entry) if entry else None

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
        with self._locked() as data:
            return data["runs"].get(name)

    def record_run(self, name: str, run: dict[str, Any]) -> None:
        with self._locked() as data:
            if name in data["jobs"]:
                data["runs"][name] = dict(run)
