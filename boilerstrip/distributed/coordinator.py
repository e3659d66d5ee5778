"""The coordinator of a distributed crawl: publish it, run local workers, decide "done", finish once.

``boilerstrip crawl URL... -o OUT.jsonl --redis redis://HOST:PORT/DB --workers N`` runs :func:`coordinate`:

1. the crawl's arguments go to Redis under a new crawl id (``config``; ``boilerstrip:current`` names the
   crawl so ``boilerstrip worker --redis URL`` on another machine joins it);
2. N local worker processes start (``boilerstrip worker``), logs in ``OUT.workers/``; once they have all
   registered (or after ``start_timeout_s``) ``go`` is set and they schedule their start requests together;
3. every ``poll_s`` the coordinator requeues the in-flight requests of workers whose heartbeat expired,
   and reads a :class:`~boilerstrip.distributed.store.Snapshot`. The crawl is **done** when, twice in a row,
   nothing is queued, nothing is in flight and no live worker is still scheduling its start requests (and at
   least one worker got past them): every request ever popped is either in flight or acked, and a request
   is acked only once its URL is settled or its successors are queued, so no work can appear after that;
4. it sets ``done``; the workers' idle handlers let their spiders close;
5. it writes ``OUT.jsonl`` from the records the workers settled, ``OUT.ledger.jsonl`` from the union of
   their settlements (an admitted URL without one is ``pending``, and the run does not reconcile) and the
   manifest, then runs the same finishing pass as a single-process crawl (FinishingExtension's) over the
   merged output, with the template counts from Redis, and deletes the crawl's keys.

No reactor here: the finishing step is the Scrapy-side extension's pass, run as a plain function call.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from boilerstrip import __version__
from boilerstrip.atomicfile import atomic_write_json, atomic_write_lines
from boilerstrip.config import params_from_settings
from boilerstrip.distributed.connection import crawl_outage, redis_client
from boilerstrip.distributed.params import DistributedParams
from boilerstrip.distributed.store import KEY_ROOT, CrawlStore
from boilerstrip.extensions.finishing import FinishingExtension
from boilerstrip.ledger import build_manifest, read_manifest, tally, write_ledger
from boilerstrip.lifetime import parent_death_hook
from boilerstrip.run import (FINISHING_FAILED, HOSTS_DOWN_EXIT, LEDGER_MISMATCH, finishing_stopped, hosts_down_line,
                             hosts_down_of, report_finishing, say, start_urls_line, stopped_early)
from boilerstrip.state import crawl_layout

__all__ = ["CoordinatorParams", "coordinate", "CURRENT_KEY", "merge_outputs", "read_config", "progress_line"]

logger = logging.getLogger(__name__)

#: the id of the crawl a `boilerstrip worker` without --crawl joins
CURRENT_KEY = f"{KEY_ROOT}:current"


@dataclass(frozen=True)
class CoordinatorParams:
    # How often the coordinator looks at the frontier (and requeues dead workers' requests).
    poll_s: float = 0.2
    # Consecutive "done" looks before the crawl is called done (a second look costs one poll).
    done_looks: int = 2
    # How long the local workers get to come up before the crawl starts without the late ones.
    start_timeout_s: float = 120.0
    # After "done", how long workers get to close their spiders before they are terminated.
    worker_exit_timeout_s: float = 60.0
    # How often a line sums up the workers' progress on stderr (the workers' own lines go to their logs).
    progress_every_s: float = 10.0
    # The coordinator's liveness key lives this long unless refreshed (every sixth of it): a worker whose
    # coordinator died stops once it has expired, within this plus one worker heartbeat. It outlasts the
    # Redis outage limit (OutageParams.limit_s, 60 s) with a margin, so a ridden-out outage never reads as
    # a dead coordinator.
    liveness_ttl_s: float = 90.0
    # ...or this many times the crawl's own outage limit (redis_outage_limit_s), when that is longer: the
    # same margin over the limit as 90 s over 60 s.
    liveness_per_outage_limit: float = 1.5


def progress_line(elapsed_s: float, settled: int, items: int, snap: Any) -> str:
    """The coordinator's line: what every worker did together, from Redis."""
    return (f"[boilerstrip] {elapsed_s:6.1f}s  (all workers) settled {settled}  extracted {items}  "
            f"queued {snap.queued}  in flight {snap.inflight}  workers {snap.live}"
            + (f" ({snap.dead} presumed dead)" if snap.dead else ""))


def read_config(client: Any, crawl_id: str) -> dict[str, Any] | None:
    raw = client.get(CrawlStore(client, crawl_id).keys.config)
    return None if raw is None else json.loads(raw)


def _worker_command(redis_url: str, crawl_id: str, worker_id: str) -> list[str]:
    return [sys.executable, "-m", "boilerstrip", "worker", "--redis", redis_url, "--crawl", crawl_id,
            "--worker-id", worker_id]


def coordinate(redis_url: str, workers: int, config: dict[str, Any], out: Path, settings: Any,
               params: CoordinatorParams | None = None, on_start: Any = None, resume: bool = False) -> int:
    """Run the crawl described by ``config`` on ``workers`` local processes (and any that join); exit status
    as ``boilerstrip crawl``: 0, 1 (stopped early), 3 (the ledger does not reconcile). With ``resume``, the
    crawl that last wrote ``out`` (its id in ``OUT.workers/crawl.json``) goes on from its frontier in Redis."""
    params = params or CoordinatorParams()
    outage = crawl_outage(params_from_settings(settings, "distributed", DistributedParams))
    client = redis_client(redis_url, outage)
    client.ping()
    log_dir = out.parent / f"{out.name[:-len('.jsonl')] if out.name.endswith('.jsonl') else out.name}.workers"
    resumed = None
    if resume and (log_dir / _CRAWL_FILE).exists():
        resumed = _resumable(client, log_dir / _CRAWL_FILE)
        if resumed is None:
            return 1
    elif resume:  # as a single-process --resume with nothing to resume from: a new crawl
        print(f"boilerstrip crawl: --resume: no distributed crawl wrote {out} yet: starting a new one", file=sys.stderr)
    crawl_id, started_at = resumed or (uuid.uuid4().hex[:12], time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    store = CrawlStore(client, crawl_id)
    log_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(log_dir / _CRAWL_FILE, {"crawl_id": crawl_id, "redis": redis_url, "started_at": started_at})
    host = socket.gethostname().split(".")[0] or "host"
    procs: list[subprocess.Popen] = []
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    liveness = _Liveness(store, max(params.liveness_ttl_s, params.liveness_per_outage_limit * outage.limit_s))
    try:
        liveness.start()  # before any worker can join: a worker stops when this key expires
        if resumed:
            store.reopen()
            print(f"boilerstrip crawl: resuming distributed crawl {crawl_id} (started {started_at}) from its frontier "
                  f"in {redis_url}", file=sys.stderr)
        else:
            client.set(store.keys.config, json.dumps(config))
        client.set(CURRENT_KEY, crawl_id)
        for i in range(workers):
            worker_id = f"{host}-{os.getpid()}-{i + 1}"
            handle = open(log_dir / f"worker-{i + 1}.log", "ab" if resumed else "wb")  # noqa: SIM115 - handed to the child
            # a local worker dies with its coordinator (SIGKILL from the kernel, however the coordinator died):
            # nobody would stop it or read what it crawls; its own worker processes die with it
            procs.append(subprocess.Popen(_worker_command(redis_url, crawl_id, worker_id), stdout=handle,
                                          stderr=subprocess.STDOUT, env=env, preexec_fn=parent_death_hook(signal.SIGKILL)))  # noqa: PLW1509 - prctl only
            handle.close()
        return _run(client, store, crawl_id, procs, workers, out, settings, params, started_at, redis_url, on_start,
                    resumed=bool(resumed), outage_limit_s=outage.limit_s, start_urls=config.get("urls") or [])
    except redis.RedisError as exc:
        # Redis was gone longer than the outage limit (boilerstrip.distributed.connection): nothing can be
        # read or settled any more (nor the liveness key deleted: it expires)
        liveness.stop(forget=False)
        return _stop_on_outage(out, procs, crawl_id, started_at, "redis_unavailable", f"{type(exc).__name__}: {exc}", params,
                               outage.limit_s)
    finally:
        liveness.stop()


#: in OUT.workers/: the id of the crawl that writes OUT (what ``crawl --resume --redis`` goes on with)
_CRAWL_FILE = "crawl.json"


def _resumable(client: Any, crawl_file: Path) -> tuple[str, str] | None:
    """(crawl id, started at) of the crawl ``crawl_file`` names, when its frontier is still in Redis; None
    (with the reason on stderr) when there is nothing to resume from."""
    try:
        known = json.loads(crawl_file.read_text(encoding="utf-8"))
        crawl_id, started_at = str(known["crawl_id"]), str(known.get("started_at") or "")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"boilerstrip crawl: --resume: {crawl_file} is unreadable ({exc}); run without --resume for a new crawl",
              file=sys.stderr)
        return None
    if not client.exists(CrawlStore(client, crawl_id).keys.config):
        print(f"boilerstrip crawl: --resume: crawl {crawl_id} is not in this Redis any more (it finished, or Redis lost "
              f"its keys; it was started on {known.get('redis')}); run without --resume for a new crawl", file=sys.stderr)
        return None
    return crawl_id, started_at


class _Liveness:
    """The coordinator's liveness key, refreshed from a thread (so a long finishing pass or a slow Redis call
    on the main thread does not let it lapse): a remote worker whose coordinator died sees it expire and
    stops (:meth:`boilerstrip.distributed.scheduler.RedisFrontierScheduler._heartbeat`)."""

    def __init__(self, store: CrawlStore, ttl_s: float) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._refresh, name="boilerstrip-coordinator-liveness", daemon=True)

    def start(self) -> None:
        self.store.coordinator_alive(self.ttl_s)  # set before the first worker starts
        self._thread.start()

    def _refresh(self) -> None:
        while not self._stop.wait(self.ttl_s / 6):
            try:
                self.store.coordinator_alive(self.ttl_s)
            except redis.RedisError as exc:  # an outage: the main thread decides what it means
                logger.debug("coordinator liveness key not refreshed: %s", exc)

    def stop(self, forget: bool = True) -> None:
        """Stop refreshing; ``forget``: delete the key now (workers of a crawl not done stop at once)."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if forget:
            try:
                self.store.r.delete(self.store.keys.coordinator)
            except redis.RedisError:
                pass


def _run(client: Any, store: CrawlStore, crawl_id: str, procs: list[subprocess.Popen], workers: int, out: Path,
         settings: Any, params: CoordinatorParams, started_at: str, redis_url: str, on_start: Any,
         *, outage_limit_s: float, resumed: bool = False, start_urls: list[str] | None = None) -> int:
    deadline = time.monotonic() + params.start_timeout_s
    while client.scard(store.keys.workers) < workers and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(params.poll_s / 4)
    store.set_go()  # the local workers start together (one that is slow to start joins when it can)
    if on_start is not None:
        on_start(crawl_id, procs)
    print(f"boilerstrip crawl: distributed crawl {crawl_id} on {redis_url}: {workers} local worker(s); "
          f"others join with: boilerstrip worker --redis {redis_url}", file=sys.stderr)
    finish_reason = "finished"
    looks = 0
    ever_started = False
    began = last_line = time.monotonic()
    try:
        while True:
            if not client.exists(store.keys.config):  # Redis restarted empty (or flushed): the crawl is lost
                return _stop_on_outage(out, procs, crawl_id, started_at, "redis_lost_state",
                                       "the crawl's keys are gone from Redis (restarted without its data, or flushed)",
                                       params, outage_limit_s)
            store.requeue_dead()
            snap = store.snapshot()
            if time.monotonic() - last_line >= params.progress_every_s:
                last_line = time.monotonic()
                print(progress_line(last_line - began, client.hlen(store.keys.outcomes), client.hlen(store.keys.records),
                                    snap), file=sys.stderr, flush=True)
            ever_started = ever_started or (snap.live > 0 and snap.starting < snap.live) or bool(client.scard(store.keys.started))
            if ever_started and snap.done:
                looks += 1
                if looks >= params.done_looks:
                    break
            else:
                looks = 0
            if procs and all(p.poll() is not None for p in procs) and not snap.live:
                finish_reason = "workers_exited"
                break
            time.sleep(params.poll_s)
    except KeyboardInterrupt:
        finish_reason = "shutdown"
    store.set_done()
    _wait_for_workers(procs, params.worker_exit_timeout_s, then=subprocess.Popen.terminate)
    counters = store.counters()
    print(f"[boilerstrip] finished ({finish_reason}) in {time.monotonic() - began:.1f} s: "
          f"{client.hlen(store.keys.records)} pages extracted by {workers} local worker(s); "
          f"{counters.get('requeued', 0)} requests requeued, {counters.get('presumed_dead', 0)} worker(s) presumed dead, "
          f"{counters.get('settled_again', 0)} settled again (see docs/distributed.md)", file=sys.stderr, flush=True)
    counters["workers_local"] = workers
    counters["worker_exit_codes"] = [p.returncode for p in procs]  # type: ignore[assignment]
    ok = merge_outputs(store, out, settings, finish_reason, started_at, counters, resumed=resumed)
    if finish_reason == "finished":
        print("[boilerstrip] finishing pass over the merged output...", file=sys.stderr, flush=True)
    status = finish(out, settings) if finish_reason == "finished" else "skipped"
    if client.get(CURRENT_KEY) == crawl_id.encode():
        client.delete(CURRENT_KEY)
    if finish_reason != "finished":
        # the frontier, the ledger and the records stay in Redis: the same command with --resume goes on
        say(f"{stopped_early(finish_reason, hint=finish_reason == 'write_error')}; crawl {crawl_id} stays in Redis: "
            "the same command with --resume goes on from where it stopped")
        return 1
    store.clear()
    if status == "failed":
        say(FINISHING_FAILED)
        return 1
    if status == "interrupted":  # Ctrl-C during the pass: the merged output is whole, as crawled
        say(finishing_stopped(out))
        return 1
    if not ok or status == "mismatch":
        say(LEDGER_MISMATCH)
        return 3
    from boilerstrip.spiders.site import parse_start_urls

    # the one-process crawl's rules, in its order: nothing written and no start URL reached, then hosts given up
    line, failed = start_urls_line(out, parse_start_urls(start_urls) if start_urls else [])
    if line:
        say(line)
    if failed:
        return 1
    down, failed = hosts_down_of(read_manifest(out) or {})
    if down:  # the workers gave hosts up: the same line as a one-process crawl's
        say(hosts_down_line(down, failed))
        return HOSTS_DOWN_EXIT
    return 0


def _wait_for_workers(procs: list[subprocess.Popen], timeout_s: float,
                      then: Callable[[subprocess.Popen], None]) -> None:
    """Wait for the local workers to exit, all within ``timeout_s``; one still running then gets ``then``
    (``terminate`` or ``kill``) and 10 s more."""
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            then(proc)
            proc.wait(timeout=10)


def _stop_on_outage(out: Path, procs: list[subprocess.Popen], crawl_id: str, started_at: str, reason: str,
                    error: str, params: CoordinatorParams, outage_limit_s: float) -> int:
    """Stop every local worker, write a manifest saying what happened (the records live in Redis: none can
    be written), exit 1. Workers on other machines stop themselves once their own limit has passed."""
    logger.error("distributed crawl %s: %s: %s; stopping every worker", crawl_id, reason, error)
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    # a worker closing its spider talks to Redis, and each of its commands waits up to the outage limit: past
    # one limit, a worker still closing is waiting for a Redis that is gone (or a crawl that is lost)
    _wait_for_workers(procs, min(params.worker_exit_timeout_s, outage_limit_s), then=subprocess.Popen.kill)
    layout = crawl_layout(out)
    atomic_write_json(layout.manifest, {
        "run_id": crawl_id, "version": __version__, "started_at": started_at,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "finish_reason": reason, "finished": False, "reconciled": False, "error": error,
        "output": {"records": str(layout.final), "complete": False},
        "distributed": {"workers_local": len(procs), "worker_exit_codes": [p.returncode for p in procs],
                        "redis_outage_limit_s": outage_limit_s},
    })
    print(f"boilerstrip crawl: stopped: {reason}: {error}; every local worker was stopped; see {layout.manifest}",
          file=sys.stderr)
    return 1


def merge_outputs(store: CrawlStore, out: Path, settings: Any, finish_reason: str, started_at: str,
                  distributed: dict[str, Any], resumed: bool = False) -> bool:
    """Write OUT.jsonl, OUT.ledger.jsonl and OUT.manifest.json from what the workers settled in Redis."""
    r = store.r
    layout = crawl_layout(out)
    records = {k.decode(): v for k, v in r.hgetall(store.keys.records).items()}
    outcomes = {k.decode(): json.loads(v) for k, v in r.hgetall(store.keys.outcomes).items()}
    admitted = {k.decode(): v.decode() for k, v in r.hgetall(store.keys.admitted).items()}
    lines = [records[url] if records[url].endswith(b"\n") else records[url] + b"\n" for url in sorted(records)]
    atomic_write_lines(layout.final, lines)
    entries: list[dict[str, Any]] = []
    for url in sorted(set(outcomes) | set(admitted)):
        entry = outcomes.get(url)
        line = {"url": url, "outcome": entry["outcome"] if entry else "pending", "reason": entry["reason"] if entry else ""}
        if entry and entry.get("detail"):
            line["detail"] = entry["detail"]
        entries.append(line)
    write_ledger(layout.ledger, entries)
    counts, reasons = tally(entries)
    counts["admitted"] = sum(1 for url in set(outcomes) | set(admitted)
                             if url in admitted or (outcomes.get(url) or {}).get("admitted"))
    counts["filtered_before_admission"] = counts["urls"] - counts["admitted"]
    counts["settled_twice"] = 0
    by_worker: dict[str, int] = {}
    for entry in outcomes.values():
        if entry["outcome"] == "item":
            by_worker[entry.get("worker", "")] = by_worker.get(entry.get("worker", ""), 0) + 1
    distributed = dict(distributed, items_by_worker=dict(sorted(by_worker.items())))
    unsettled = [e["url"] for e in entries if e["outcome"] == "pending"]
    items_without_record = [url for url, e in outcomes.items() if e["outcome"] == "item" and url not in records]
    ok = not unsettled and not items_without_record
    if not ok:
        logger.error("ledger: MISMATCH -- %d admitted URLs never settled %s; %d items without a record %s",
                     len(unsettled), unsettled[:20], len(items_without_record), items_without_record[:20])
    summary = {"counts": counts, "reasons": reasons, "unsettled": unsettled[:20], "settled_twice": []}
    down = store.hosts_down()  # the hosts the workers gave up, as they left
    manifest = build_manifest(layout, run_id=store.keys.crawl_id, started_at=started_at, finish_reason=finish_reason,
                              resumed=resumed, reconciled=ok, fail_on_mismatch=True, summary=summary,
                              distributed=distributed, **({"hosts_down": down} if down else {}))
    atomic_write_json(layout.manifest, manifest)
    return ok


def finish(out: Path, settings: Any) -> str:
    """The single-process crawl's finishing pass (FinishingExtension), once, over the merged output."""
    stats = _Stats(_outcome_stats(out))
    extension = FinishingExtension(out, settings, stats=stats)
    extension.reason = "finished"
    status = extension.finish()
    summary = stats.get("boilerstrip/finishing/summary")
    if isinstance(summary, dict):  # the lines a single-process crawl prints
        report_finishing(summary, out)
    return status


def _outcome_stats(out: Path) -> dict[str, int]:
    """The merged ledger's outcome counts under the names a crawl's stats give them
    (``boilerstrip/filtered/max_pages``): the finishing pass reads from them what cut the crawl short (a page
    budget, a depth, a host given up), so that pages it did not reach are unseen, not removed, as in a
    one-process crawl (the workers' own stats stay in their processes)."""
    reasons = (read_manifest(out) or {}).get("reasons") or {}
    return {f"boilerstrip/{key.replace(':', '/', 1)}": n for key, n in reasons.items()
            if isinstance(key, str) and ":" in key and isinstance(n, int)}


class _Stats(dict):
    """The few stats calls the finishing extension makes, kept in a dict (no crawler here)."""

    def set_value(self, key: str, value: Any) -> None:
        self[key] = value

    def get_value(self, key: str, default: Any = None) -> Any:
        return self.get(key, default)
