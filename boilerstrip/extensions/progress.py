"""Live progress on stderr and a summary when the crawl ends.

On a terminal the progress line is redrawn every ``interval_s`` seconds; otherwise a plain line is printed
every ``plain_interval_s`` seconds (0 = only the summary); both in ``BOILERSTRIP_PROGRESS_PARAMS``.
Counts come from Scrapy's stats: pages fetched (responses received), pages extracted (items; the finishing
pass then says how many records the output holds, which ``--changes-only`` and tombstones change), and skipped /
failed URLs by reason (``boilerstrip/filtered/<reason>``, ``boilerstrip/failed/<reason>``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call

from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.outcomes import is_warc_replay

__all__ = ["ProgressExtension", "ProgressParams", "summarize", "format_counts"]


@dataclass(frozen=True)
class ProgressParams:
    # A terminal redraw every second feels live without flooding the stats collector.
    interval_s: float = 1.0
    # Logs and CI output get a plain line every 10 s: enough to see a long crawl move.
    plain_interval_s: float = 10.0
    # The live line names the most frequent skip reasons, up to this many (the summary names them all).
    live_reasons: int = 3

    def __post_init__(self) -> None:
        if self.interval_s <= 0 or self.plain_interval_s < 0 or self.live_reasons < 0:
            raise ValueError("interval_s must be > 0, plain_interval_s and live_reasons >= 0")


def _by_prefix(stats: dict[str, Any], prefix: str) -> dict[str, int]:
    found = {key[len(prefix) :]: int(value) for key, value in stats.items() if key.startswith(prefix)}
    return dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))


#: the robots middleware's gauge of robots.txt fetches under way, and its count of unreachable verdicts
#: (boilerstrip.downloadermiddlewares.robots; not imported: a component does not import another)
ROBOTS_PENDING = "boilerstrip/robots/pending"
ROBOTS_UNREACHABLE = "boilerstrip/robots/fetch/robots_unreachable"
ROBOTS_UNREACHABLE_DETAIL = "boilerstrip/robots/unreachable_detail"


def robots_wait(stats: dict[str, Any]) -> str:
    """The progress line's note while pages wait for a robots.txt: a host that does not answer looks like a
    stalled crawl (fetched 0) for as long as its robots.txt is retried."""
    pending = int(stats.get(ROBOTS_PENDING, 0) or 0)
    unreachable = int(stats.get(ROBOTS_UNREACHABLE, 0) or 0)
    detail = stats.get(ROBOTS_UNREACHABLE_DETAIL)
    why = f", the last {detail}" if detail else ""  # a mistyped host name says dns_not_found, a wrong port connection_refused
    if pending > 0:
        retry = f", {unreachable} unreachable so far{why}: retrying" if unreachable else ""
        return f"  [waiting for robots.txt of {pending} host(s){retry}]"
    if unreachable and not stats.get("item_scraped_count"):
        return f"  [robots.txt unreachable {unreachable} time(s){why}: its pages wait for a retry]"
    return ""


#: the politeness middleware's gauges, per host (not imported): the wall-clock time until which it is paused
#: after a 429/503 (it asked) and after failures without an answer (a back-off), and why it was given up
PAUSED_UNTIL = "boilerstrip/politeness/paused_until/"
BACKOFF_UNTIL = "boilerstrip/politeness/backoff_until/"
HOST_DOWN = "boilerstrip/politeness/host_down/"
#: the politeness middleware's gauge of each host's robots.txt Crawl-delay, in seconds
CRAWL_DELAY = "boilerstrip/politeness/crawl_delay_s/"


def paused_hosts(stats: dict[str, Any], now: float | None = None, prefixes: tuple[str, ...] = (PAUSED_UNTIL, BACKOFF_UNTIL)
                 ) -> tuple[int, float]:
    """(hosts paused now by a 429/503's Retry-After or a back-off, the latest time one of them is paused
    until, epoch seconds); (0, 0.0) when none is. ``prefixes``: which pauses count."""
    now = time.time() if now is None else now
    until = [float(v) for k, v in stats.items()
             if k.startswith(prefixes) and isinstance(v, (int, float)) and v > now]
    return len(until), max(until, default=0.0)


def down_hosts(stats: dict[str, Any]) -> dict[str, str]:
    """Host -> why, of the hosts given up for the rest of the crawl (``host_down``)."""
    return {k[len(HOST_DOWN):]: str(v) for k, v in stats.items() if k.startswith(HOST_DOWN)}


def paused_note(stats: dict[str, Any], now: float | None = None) -> str:
    """The progress line's note while hosts are paused or given up: a host that asks for minutes
    (Retry-After: 600) or does not answer holds its pages that long, and the crawl looks stalled."""
    notes = []
    for prefix, what in ((PAUSED_UNTIL, "asked to wait (429/503): paused until"),
                         (BACKOFF_UNTIL, "not answering: next try at")):
        count, until = paused_hosts(stats, now, (prefix,))
        if count:
            notes.append(f"  [{count} host(s) {what} {time.strftime('%H:%M:%S', time.gmtime(until))} UTC]")
    down = down_hosts(stats)
    if down:
        notes.append(f"  [{len(down)} host(s) given up: their pages fail as host_down]")
    return "".join(notes)


def crawl_delays(stats: dict[str, Any], configured_delay_s: float) -> dict[str, float]:
    """Host -> Crawl-delay of the hosts whose robots.txt asks for more than ``DOWNLOAD_DELAY``: those set the
    pace of their pages (one request each that often), which otherwise looks like a stalled crawl."""
    return {k[len(CRAWL_DELAY):]: float(v) for k, v in stats.items()
            if k.startswith(CRAWL_DELAY) and isinstance(v, (int, float)) and v > configured_delay_s}


def crawl_delay_note(delays: dict[str, float]) -> str:
    if not delays:
        return ""
    return (f"  [{len(delays)} host(s) ask for a Crawl-delay of up to {max(delays.values()):g} s (robots.txt): "
            "one request each that often]")


def format_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason}={n}" for reason, n in counts.items()) or "none"


def summarize(stats: dict[str, Any], elapsed_s: float) -> dict[str, Any]:
    return {
        "elapsed_s": elapsed_s,
        "fetched": int(stats.get("response_received_count", 0)),
        "written": int(stats.get("item_scraped_count", 0)),
        "dropped": int(stats.get("item_dropped_count", 0)),
        "filtered": _by_prefix(stats, "boilerstrip/filtered/"),
        "failed": _by_prefix(stats, "boilerstrip/failed/"),
    }


class ProgressExtension:
    #: what the summary tells the user to look at when no page was written
    nothing_written_hint = "check the start URL"

    def __init__(self, params: ProgressParams, stats: Any, outputs: list[str], stream: TextIO | None = None,
                 configured_delay_s: float = 0.0) -> None:
        self.params = params
        self.configured_delay_s = configured_delay_s  # DOWNLOAD_DELAY: a Crawl-delay above it sets a host's pace
        self.stats = stats
        self.outputs = outputs
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self._loop: Any = None
        self._last_plain = self.started
        self._drawn = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> "ProgressExtension":
        if not component_enabled(crawler.settings, "progress"):
            raise NotConfigured("BOILERSTRIP_PROGRESS_ENABLED is false")
        params = params_from_settings(crawler.settings, "progress", ProgressParams)
        outputs = [str(uri) for uri in (crawler.settings.getdict("FEEDS") or {})]
        ext = cls(params, crawler.stats, outputs, configured_delay_s=crawler.settings.getfloat("DOWNLOAD_DELAY"))
        if is_warc_replay(crawler):
            ext.nothing_written_hint = "check the WARC files"  # a replay has no start URL to check
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def line(self) -> str:
        stats = self.stats.get_stats()
        s = summarize(stats, time.monotonic() - self.started)
        skipped = sum(s["filtered"].values())
        failed = sum(s["failed"].values())
        rate = s["fetched"] / s["elapsed_s"] if s["elapsed_s"] > 0 else 0.0
        top = dict(list(s["filtered"].items())[: self.params.live_reasons])
        detail = f" ({format_counts(top)}{', ...' if len(s['filtered']) > len(top) else ''})" if top else ""
        return (
            f"[boilerstrip] {s['elapsed_s']:6.1f}s  fetched {s['fetched']}  extracted {s['written']}  "
            f"skipped {skipped}{detail}  failed {failed}  ({rate:.1f} pages/s){robots_wait(stats)}{paused_note(stats)}"
            f"{crawl_delay_note(crawl_delays(stats, self.configured_delay_s))}"
        )

    def tick(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line())
            self.stream.flush()
            self._drawn = True
        elif self.params.plain_interval_s and time.monotonic() - self._last_plain >= self.params.plain_interval_s:
            self._last_plain = time.monotonic()
            print(self.line(), file=self.stream, flush=True)

    def spider_opened(self) -> None:
        self.started = self._last_plain = time.monotonic()
        self._loop = create_looping_call(self.tick)
        self._loop.start(self.params.interval_s, now=False)

    def spider_closed(self, reason: str = "") -> None:
        if self._loop is not None and getattr(self._loop, "running", True):
            try:
                self._loop.stop()
            except Exception:  # noqa: BLE001 - already stopped
                pass
        if self._drawn:
            self.stream.write("\r\x1b[2K")
        stats = self.stats.get_stats()
        s = summarize(stats, time.monotonic() - self.started)
        rate = s["fetched"] / s["elapsed_s"] if s["elapsed_s"] > 0 else 0.0
        lines = [
            f"[boilerstrip] finished ({reason or 'unknown'}) in {s['elapsed_s']:.1f} s: "
            f"{s['fetched']} pages fetched, {s['written']} pages extracted ({rate:.1f} pages/s)",
            f"[boilerstrip]   skipped by reason: {format_counts(s['filtered'])}",
            f"[boilerstrip]   failed by reason: {format_counts(s['failed'])}",
        ]
        if s["dropped"]:
            lines.append(f"[boilerstrip]   items dropped by pipelines: {s['dropped']}")
        delays = crawl_delays(stats, self.configured_delay_s)
        if delays:
            paced = ", ".join(f"{host} {delay:g} s" for host, delay in sorted(delays.items())[:5])
            more = f" and {len(delays) - 5} more" if len(delays) > 5 else ""
            lines.append(f"[boilerstrip]   paced by robots.txt Crawl-delay: {paced}{more}")
        if not s["written"]:
            # A mistyped port or host looks like a polite skip (robots.txt unreachable means disallow, RFC
            # 9309): say plainly that nothing came out, and why.
            reasons = dict(list({**s["failed"], **s["filtered"]}.items())[:3])
            why = f" ({format_counts(reasons)})" if reasons else ""
            lines.append(f"[boilerstrip]   WARNING: no page was written{why}; {self.nothing_written_hint}")
        for out in self.outputs:
            lines.append(f"[boilerstrip]   output: {out}")
        print("\n".join(lines), file=self.stream, flush=True)
