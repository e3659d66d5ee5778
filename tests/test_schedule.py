"""``boilerstrip schedule``: jobs kept in the state folder, and a foreground scheduler whose runs are child
crawls that never overlap. The end-to-end test runs the real command against a loopback site."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from boilerstrip.schedule import JobError, JobStore, ScheduledJob, next_due, parse_every
from tests._crawlsite import FAST, small_site

from boilerstrip.demo.server import SiteServer

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``boilerstrip schedule ARGS...`` run in this process from ``cwd`` (the job store's commands start no
    crawl: a new interpreter each would be most of this file's time); its exit status and output."""
    import contextlib
    import io

    from boilerstrip.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(["schedule", *args])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["boilerstrip", "schedule", *args], code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize("value, seconds", [("10s", 10), ("15m", 900), ("6h", 21600), ("1d", 86400), ("2w", 1209600)])
def test_every_reads_a_number_and_a_unit(value, seconds) -> None:
    assert parse_every(value) == seconds


@pytest.mark.parametrize("value", ["", "6", "h", "6x", "1s", "-5m"])
def test_every_refuses_what_is_not_an_interval(value) -> None:
    with pytest.raises(JobError):
        parse_every(value)


def test_a_job_is_due_from_its_last_run_and_a_missed_run_at_once() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    hourly = ScheduledJob("h", ["http://a/"], "/tmp", every_s=3600)
    nightly = ScheduledJob("n", ["http://a/"], "/tmp", cron="0 3 * * *")
    at = lambda t: {"started_at": t.strftime("%Y-%m-%dT%H:%M:%SZ")}  # noqa: E731
    assert next_due(hourly, None, now) == now  # never run: now
    assert next_due(nightly, None, now) == datetime(2026, 12, 2, 3, 0, tzinfo=timezone.utc)  # at its first time
    assert next_due(hourly, at(now - timedelta(hours=2)), now) == now - timedelta(hours=1)  # missed
    assert next_due(hourly, at(now - timedelta(minutes=30)), now) == now + timedelta(minutes=30)
    assert next_due(nightly, at(now - timedelta(days=1, hours=10)), now) == datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc)  # missed
    assert next_due(nightly, at(now.replace(hour=3)), now) == datetime(2026, 12, 2, 3, 0, tzinfo=timezone.utc)


def test_a_scheduler_started_again_runs_a_job_when_its_last_run_says(tmp_path) -> None:
    """An hourly job last run 50 minutes ago runs 10 minutes after a scheduler starts, not an hour after (it
    was: APScheduler's interval counted from the start); a job whose run was missed runs at once."""
    from apscheduler.schedulers.background import BackgroundScheduler

    from boilerstrip.schedule import Scheduler

    store = JobStore(tmp_path / "st")
    now = datetime.now(timezone.utc)
    for name, ago in (("recent", timedelta(minutes=50)), ("missed", timedelta(hours=3))):
        store.add(ScheduledJob(name, ["http://127.0.0.1:9/"], str(tmp_path / "runs"), every_s=3600))
        store.record_run(name, {"started_at": (now - ago).strftime("%Y-%m-%dT%H:%M:%SZ"), "exit_code": 0})
    scheduler = Scheduler(store)
    scheduler._scheduler = BackgroundScheduler(timezone=timezone.utc)
    scheduler._scheduler.start(paused=True)  # nothing runs: the jobs' times are only read
    try:
        scheduler.sync()
        recent = scheduler._scheduler.get_job("recent").next_run_time - now
        missed = scheduler._scheduler.get_job("missed").next_run_time - now
    finally:
        scheduler._scheduler.shutdown(wait=False)
    assert timedelta(minutes=9) < recent <= timedelta(minutes=10), recent
    assert timedelta(0) <= missed < timedelta(minutes=1), missed


def test_list_says_when_each_job_runs_next_and_whether_a_scheduler_runs_them(tmp_path) -> None:
    from boilerstrip.atomicfile import output_lock
    from boilerstrip.state.layout import schedule_layout

    store = JobStore(tmp_path / "st")
    store.add(ScheduledJob("hourly", ["http://127.0.0.1:9/"], str(tmp_path / "runs"), every_s=3600))
    store.add(ScheduledJob("fresh", ["http://127.0.0.1:9/"], str(tmp_path / "runs"), every_s=3600))
    last = datetime.now(timezone.utc) - timedelta(minutes=30)
    store.record_run("hourly", {"started_at": last.strftime("%Y-%m-%dT%H:%M:%SZ"), "exit_code": 0})
    listing = _cli("list", "--store", "st", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].startswith("fresh:") and lines[0].endswith("; never run; next run: due now"), lines
    assert lines[1].endswith(f"exit 0; next run {(last + timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%SZ')}"), lines
    assert lines[2].startswith("no scheduler is running these jobs: `boilerstrip schedule run` runs them"), lines
    layout = schedule_layout(str(tmp_path / "runs"), "hourly")
    layout.folder.mkdir(parents=True)
    with output_lock(store.path), open(layout.lock, "a+") as lock:  # a scheduler, and a run of the job
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX)
        lines = _cli("list", "--store", "st", cwd=tmp_path).stdout.splitlines()
    assert lines[1].endswith("exit 0; running now"), lines
    assert lines[2] == f"a scheduler runs these jobs (pid {os.getpid()})", lines


def test_jobs_are_kept_in_the_state_folder(tmp_path) -> None:
    add = _cli("add", "blog", "http://127.0.0.1:9/", "--every", "6h", "-o", "runs", "--max-pages", "50",
               "-s", "DOWNLOAD_DELAY=2", "--store", "st", cwd=tmp_path)
    assert add.returncode == 0, add.stderr
    job = JobStore(tmp_path / "st").get("blog")
    assert job.every_s == 21600 and job.out_dir == str(tmp_path / "runs") and job.urls == ["http://127.0.0.1:9/"]
    assert job.crawl_args[:4] == ["--max-pages", "50", "-s", "DOWNLOAD_DELAY=2"]
    again = _cli("add", "blog", "http://127.0.0.1:9/", "--every", "1h", "-o", "runs", "--store", "st", cwd=tmp_path)
    assert again.returncode == 2 and "exists already" in again.stderr
    bad = _cli("add", "x", "http://a/", "--cron", "0 3 * *", "-o", "runs", "--store", "st", cwd=tmp_path)
    assert bad.returncode == 2 and "--cron" in bad.stderr
    bad_setting = _cli("add", "y", "http://a/", "--every", "1h", "-o", "runs", "--max-pages", "many", "--store", "st",
                       cwd=tmp_path)
    assert bad_setting.returncode == 2 and "--max-pages" in bad_setting.stderr
    listed = _cli("list", "--store", "st", cwd=tmp_path)
    assert "blog: http://127.0.0.1:9/ every 21600s" in listed.stdout and "never run" in listed.stdout
    assert _cli("remove", "blog", "--store", "st", cwd=tmp_path).returncode == 0
    assert JobStore(tmp_path / "st").jobs() == []
    assert _cli("remove", "blog", "--store", "st", cwd=tmp_path).returncode == 2


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_schedule_run_runs_a_ten_second_job_again_and_again_without_overlap(tmp_path) -> None:
    with SiteServer(routes=small_site(6)) as server:
        add = _cli("add", "site", server.url + "/", "--every", "10s", "-o", "runs", "--store", "st", *FAST, cwd=tmp_path)
        assert add.returncode == 0, add.stderr
        runner = subprocess.Popen([sys.executable, "-m", "boilerstrip", "schedule", "run", "--store", "st"],
                                  cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:  # two finished runs take about 20 s; poll with a deadline far past that, no fixed sleep
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and runner.poll() is None and _finished_runs(tmp_path / "runs" / "site") < 2:
                time.sleep(0.2)
        finally:
            runner.send_signal(signal.SIGTERM)
            log, _ = runner.communicate(timeout=90)
    assert runner.returncode == 0, log
    folder = tmp_path / "runs" / "site"
    summaries = [json.loads(p.read_text()) for p in sorted(folder.glob("*.summary.json"))]
    finished = [s for s in summaries if s["exit_code"] == 0]
    # at least two runs; the last may have been stopped by the SIGTERM (a loaded machine makes runs long)
    assert len(summaries) >= 2 and summaries[0]["exit_code"] == 0, (summaries, log)
    spans = sorted((s["started_at"], s["finished_at"]) for s in summaries)
    assert all(earlier[1] <= later[0] for earlier, later in zip(spans, spans[1:])), spans  # never two at once
    for summary in summaries:  # DIR/NAME/<UTC time>.jsonl beside its summary
        out = Path(summary["output"])
        assert out.parent == folder and out.name == summary["started_at"].replace("-", "").replace(":", "") + ".jsonl"
    assert finished[0]["changes"] == {"new": 7}
    assert all(s["changes"] == {"unchanged": 7} for s in finished[1:])
    latest = folder / "latest.jsonl"
    assert latest.read_bytes() == Path(finished[-1]["output"]).read_bytes()
    assert (folder / ".boilerstrip-state").is_dir()  # the job's recurring-crawl state, shared by its runs
    assert JobStore(tmp_path / "st").last_run("site")["started_at"] == summaries[-1]["started_at"]


def _finished_runs(folder: Path) -> int:
    """How many runs in ``folder`` wrote a summary with exit code 0 (a summary being written is skipped)."""
    count = 0
    for path in folder.glob("*.summary.json"):
        try:
            count += json.loads(path.read_text()).get("exit_code") == 0
        except (OSError, ValueError):
            pass
    return count


@pytest.mark.timeout(120)
def test_a_job_does_not_run_while_another_run_of_it_holds_the_lock(tmp_path) -> None:
    import fcntl

    from boilerstrip.schedule import run_job
    from boilerstrip.state import schedule_layout

    job = ScheduledJob("busy", ["http://127.0.0.1:9/"], str(tmp_path), every_s=60)
    layout = schedule_layout(tmp_path, "busy")
    layout.folder.mkdir(parents=True)
    with open(layout.lock, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert run_job(job) == {"job": "busy", "skipped": "already_running"}
    assert not list(layout.folder.glob("*.jsonl"))


def test_a_second_scheduler_on_one_store_is_refused(tmp_path) -> None:
    # two `schedule run` on one store each fired every job: run twice in a row, or skipped as already_running
    from boilerstrip.atomicfile import output_lock

    store = tmp_path / "store"
    store.mkdir()
    with output_lock(store / "schedule.json"):  # the first scheduler runs
        done = _cli("run", "--store", str(store), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"boilerstrip schedule: another scheduler runs the jobs of {store / 'schedule.json'} "
                                   f"(pid {os.getpid()}); one scheduler a store (stop it first, or give another --store)")
    assert sorted(p.name for p in store.iterdir()) == []  # nothing left behind: the lock file went with the first


def test_run_only_a_job_that_is_not_there_is_refused(tmp_path) -> None:
    # it started a scheduler with nothing to run and said "no jobs in ...", of a store that has jobs
    store = JobStore(tmp_path / "st")
    store.add(ScheduledJob("docs", ["http://127.0.0.1:9/"], str(tmp_path / "runs"), every_s=3600))
    proc = _cli("run", "--only", "doc", "--store", "st", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "boilerstrip schedule: --only doc: no such job in st/schedule.json (its jobs: docs)"
