"""Build a crawl's settings and run it: the library below the CLI.

``boilerstrip crawl``, ``boilerstrip demo``, ``boilerstrip schedule``, ``boilerstrip worker`` and the
distributed coordinator all call it: :func:`build_settings` (checked arguments -> Scrapy settings and the
spider's arguments; :class:`UsageError` names a bad one), :func:`run_spider` (the ``site`` spider in a
``CrawlerProcess``, stopped gracefully by SIGINT/SIGTERM however early they come) and
:func:`crawl_and_finish` (the exit status of a crawl and the lines that explain it: the one copy of that
text).

Exit status: 0 when the crawl finished, 1 when it stopped early or could not start, 2 for a bad argument
or setting, 3 when the ledger does not reconcile (a URL unaccounted for or settled twice), 5 when it
finished but pages that needed a browser did not get a whole render (:data:`RENDER_MISSED_EXIT`).

Scrapy, Twisted and the spider are imported inside the functions that run a crawl: the CLI imports every
command module to build its parser, and ``boilerstrip --help`` or ``boilerstrip extract`` must not load
them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import FEED_STORE_FAILED_STAT, WRITE_ERRNO_STAT, OutputBusy, output_lock, write_error_advice
from boilerstrip.config import ConfigError, is_params_hook, params_from_settings, stack_params_hooks, unknown_settings
from boilerstrip.items import RECORD_FIELDS
from boilerstrip.ledger import read_ledger
from boilerstrip.recrawl import TOMBSTONES
from boilerstrip.safety.addresses import parse_host_port
from boilerstrip.state import crawl_layout

__all__ = ["UsageError", "build_settings", "run_spider", "crawl_and_finish", "count_option", "check_state_dir",
           "check_fields", "parse_set_options", "apply_settings", "note_early_signals", "ShutdownOnSignal",
           "RENDER_MISSED_EXIT", "browser_misses", "HOSTS_DOWN_EXIT", "hosts_down_of", "hosts_down_line", "output_lock", "OutputBusy", "finishing_stopped",
           "written_line", "start_urls_line", "unreached_start_urls", "unreached_line", "partly_unreached_line",
           "report_finishing",
           "say", "stopped_early", "FINISHING_FAILED", "LEDGER_MISMATCH", "LEDGER_MISMATCH_AFTER_PASS",
           "CHANGE_KINDS", "FINISHING_STATUS", "LOG_LEVELS"]

#: how the crawl command's lines to the user begin
PROG = "boilerstrip crawl"
#: the exit-status lines: one copy, for the one-process crawl and the distributed coordinator
FINISHING_FAILED = "the finishing pass failed; the output is left as crawled (see the log)"
LEDGER_MISMATCH = "ledger mismatch: some URLs are unaccounted for (see the manifest)"
LEDGER_MISMATCH_AFTER_PASS = "ledger mismatch after the finishing pass (see the manifest)"


def say(message: str, prog: str = PROG) -> None:
    """One line to the user, on stderr, after the command's name (``boilerstrip warc`` runs a crawl too)."""
    print(f"{prog}: {message}", file=sys.stderr, flush=True)


def next_run(resumable: bool = True) -> str:
    """What goes on after a run that did not finish: the same command with ``--resume``, or for a WARC
    replay, which has none, the same command again."""
    return "the same command with --resume" if resumable else "the same command again"


def stopped_early(reason: str, hint: bool = True, write_errno: str | None = None, resumable: bool = True) -> str:
    """The line of a crawl that did not finish, with what to do next (``hint``): the same command with
    ``--resume`` goes on from where it stopped (for a write error, after what its cause ``write_errno``
    asks: :func:`boilerstrip.atomicfile.write_error_advice`); a WARC replay (not ``resumable``: it has no
    ``--resume``) is run again."""
    if not hint:
        return f"stopped early ({reason})"
    again = next_run(resumable)
    if reason == "write_error":
        return f"stopped early ({reason}); {write_error_advice(write_errno, again)}"
    if not resumable:
        return f"stopped early ({reason}); run the same command again (a replay reads its WARC files from the start)"
    return f"stopped early ({reason}); the same command with --resume goes on from where it stopped"


def apply_settings(settings: Any, values: dict[str, Any]) -> None:
    """Set ``values`` at command-line priority; component dicts are merged into the project's, and a params
    hook over the one already set, field by field."""
    from boilerstrip.addons import set_setting

    for name, value in values.items():
        if name in ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "EXTENSIONS", "ITEM_PIPELINES"):
            merged = settings.getdict(name)
            merged.update(value)
            value = merged
        set_setting(settings, name, value, "cmdline")


#: the change counts the summary prints, in order (boilerstrip.recrawl.CHANGES)
CHANGE_KINDS = ("new", "changed", "unchanged", "removed", "unseen")
#: the stat the FinishingExtension sets (boilerstrip.extensions.finishing.STATUS; not imported: Scrapy)
FINISHING_STATUS = "boilerstrip/finishing/status"

class UsageError(ValueError):
    """A bad argument; the message is one line for the user."""

def count_option(value: str | None, name: str, minimum: int) -> int | None:
    if value is None:
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise UsageError(f"{name} expects a whole number, got {value!r}") from None
    if number < minimum:
        raise UsageError(f"{name} must be >= {minimum}, got {number}")
    return number

def check_state_dir(path: str) -> Path:
    """The ``--state`` folder, resolved: refused when it is a file, or cannot be made (nothing is written)."""
    folder = Path(path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--state {str(folder)!r} is a file; it expects a folder (the recurring crawl's history)")
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise UsageError(f"--state {str(folder)!r}: {str(existing)!r} is a file, not a folder")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--state {str(folder)!r}: cannot write to {str(existing)!r}: permission denied")
    return folder.resolve()


def check_fields(value: Any) -> list[str]:
    """``--fields`` / ``-s FEED_EXPORT_FIELDS``: record field names (url always included); UsageError names
    an unknown one."""
    # the finishing pass's modules load lxml and the extractor: imported when a crawl is built, not at every
    # start of the CLI (which imports every command module, and so this one)
    from boilerstrip.finishing.steps import field_list

    fields = field_list(value)
    unknown = [name for name in fields if name not in RECORD_FIELDS]
    if not fields or unknown:
        raise UsageError(f"--fields (FEED_EXPORT_FIELDS): unknown field(s) {', '.join(unknown) or repr(value)}; "
                         f"a record has {', '.join(RECORD_FIELDS)}")
    return fields


LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


def _check_log_level(value: Any) -> Any:
    """LOG_LEVEL in the form ``logging`` accepts (upper case). Scrapy hands it to ``logging`` only once the
    crawl starts, where a typo or a lower-case ``-s LOG_LEVEL=debug`` is a traceback."""
    if isinstance(value, int):
        return value
    if str(value).strip().upper() in LOG_LEVELS:
        return str(value).strip().upper()
    raise UsageError(f"--log-level (LOG_LEVEL) expects one of {', '.join(LOG_LEVELS)}, got {value!r}")


def parse_set_options(values: list[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name or not name.replace("_", "").isalnum() or not name.isupper():
            raise UsageError(f"-s expects NAME=VALUE with an UPPERCASE setting name, got {item!r}")
        settings[name] = value
    return settings


def build_settings(args: argparse.Namespace, out: Path) -> tuple[Any, dict[str, Any]]:
    """(Scrapy Settings, spider kwargs) for a checked set of arguments. Raises UsageError."""
    from boilerstrip.addons import ProfileError, load_profile, set_setting
    from boilerstrip.feeds import feed_settings as safe_feed_settings
    from boilerstrip.spiders.site import CrawlParams, parse_start_urls
    from boilerstrip.urls import url_credentials

    try:
        start_urls = parse_start_urls(args.urls)
        credentials = url_credentials(args.urls)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    max_pages = count_option(args.max_pages, "--max-pages", 1)
    max_depth = count_option(args.max_depth, "--max-depth", 0)
    if args.scope is not None and args.scope not in ("host", "domain"):
        raise UsageError(f"--scope expects host or domain, got {args.scope!r}")
    overrides = parse_set_options(args.settings)
    if args.profile is not None:
        overrides["BOILERSTRIP_PROFILE"] = args.profile
    if getattr(args, "drop_duplicates", False):
        overrides["BOILERSTRIP_DUPLICATES_DROP_NEAR"] = "true"
    if getattr(args, "state", None):
        overrides["BOILERSTRIP_STATE_DIR"] = str(check_state_dir(args.state))
    if getattr(args, "trail", False):
        overrides["BOILERSTRIP_FEEDS_TRAIL"] = "true"
    if getattr(args, "warc", None) or getattr(args, "warc_max_bytes", None):
        # the WARC package (reader, writer, index) loads only for a crawl that keeps a WARC: not at every CLI start
        from boilerstrip.warc.options import warc_overrides

        try:
            for name, value in warc_overrides(args.warc, args.warc_max_bytes).items():
                # --warc-max-bytes over a -s BOILERSTRIP_WARC_PARAMS, field by field
                overrides[name] = stack_params_hooks(overrides.get(name), value) if is_params_hook(name) else value
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if getattr(args, "changes_only", False):
        overrides["BOILERSTRIP_RECRAWL_CHANGES_ONLY"] = "true"
    if getattr(args, "fields", None):
        overrides["FEED_EXPORT_FIELDS"] = args.fields
    if getattr(args, "allow_private", None):

        for entry in args.allow_private:
            try:
                parse_host_port(entry)
            except ValueError as exc:
                raise UsageError(f"--allow-private: {exc}") from None
        overrides["BOILERSTRIP_SCOPE_ALLOW_PRIVATE"] = ",".join(args.allow_private)
    if "BOILERSTRIP_PROFILE" in overrides:
        try:
            load_profile(overrides["BOILERSTRIP_PROFILE"])
        except ProfileError as exc:
            raise UsageError(str(exc)) from None

    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "boilerstrip.settings")
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.set("LOG_LEVEL", args.log_level.upper(), priority="cmdline")
    for name, value in safe_feed_settings(out, resume=bool(getattr(args, "resume", False))).items():
        settings.set(name, value, priority="cmdline")
    for name, value in overrides.items():
        set_setting(settings, name, value, "cmdline")
    problems = unknown_settings(list(settings))
    if problems:  # Scrapy takes any name: a typo or a setting that moved would be silently ignored
        raise UsageError("; ".join(problems))
    settings.set("LOG_LEVEL", _check_log_level(settings.get("LOG_LEVEL")), priority="cmdline")
    for name in overrides:
        check_scrapy_number(name, settings.get(name))
    if "FEED_EXPORT_FIELDS" in overrides:
        settings.set("FEED_EXPORT_FIELDS", check_fields(overrides["FEED_EXPORT_FIELDS"]), priority="cmdline")

    spider_kwargs: dict[str, Any] = {"start_urls": start_urls}
    if max_pages is not None:
        spider_kwargs["max_pages"] = max_pages
    if max_depth is not None:
        spider_kwargs["max_depth"] = max_depth
    if args.scope is not None:
        spider_kwargs["scope"] = args.scope
    if args.no_sitemaps:
        spider_kwargs["sitemaps"] = False
    # the crawl's own params, checked now so a bad -s BOILERSTRIP_CRAWL_* value is a usage error
    try:
        view = {k: settings.get(k) for k in settings if k.startswith("BOILERSTRIP_CRAWL_")}
        view.update({f"BOILERSTRIP_CRAWL_{k.upper()}": v for k, v in spider_kwargs.items() if k != "start_urls"})
        params_from_settings(view, "crawl", CrawlParams)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if credentials is not None:  # user:password@ in a start URL: basic authentication on its host (HttpAuthMiddleware)
        for name, value in zip(("HTTPAUTH_USER", "HTTPAUTH_PASS", "HTTPAUTH_DOMAIN"), credentials):
            settings.set(name, value, priority="cmdline")
        logging.getLogger("scrapy.crawler").addFilter(_PasswordFilter(credentials[1]))
    return settings, spider_kwargs


class _PasswordFilter(logging.Filter):
    """Masks a password in the records of the logger it filters: Scrapy's crawler logs its "Overridden
    settings" at INFO, HTTPAUTH_PASS included (``--log-level INFO``, a scheduled run's log file)."""

    def __init__(self, password: str) -> None:
        super().__init__()
        self.password = password

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        # as written, and as a repr writes it (pprint escapes a quote or a backslash in it)
        for form in dict.fromkeys((self.password, repr(self.password)[1:-1])):
            if form and form in message:
                message = message.replace(form, "***")
                record.msg, record.args = message, None
        return True


#: Scrapy's numeric settings a -s value can break without a word before the crawl: (type, least value, whether
#: the least value itself is allowed). CONCURRENT_REQUESTS=0 never sent a request and DOWNLOAD_TIMEOUT=-1
#: never ended (both ran until killed); DOWNLOAD_DELAY=abc stopped with "ValueError: could not convert...",
#: naming no setting.
_SCRAPY_NUMBERS: dict[str, tuple[type, float, bool]] = {
    "CONCURRENT_REQUESTS": (int, 1, True), "CONCURRENT_REQUESTS_PER_DOMAIN": (int, 1, True),
    "CONCURRENT_REQUESTS_PER_IP": (int, 0, True), "CONCURRENT_ITEMS": (int, 1, True),
    "DOWNLOAD_DELAY": (float, 0, True), "DOWNLOAD_TIMEOUT": (float, 0, False), "DNS_TIMEOUT": (float, 0, False),
    "DOWNLOAD_MAXSIZE": (int, 0, True), "DOWNLOAD_WARNSIZE": (int, 0, True), "RETRY_TIMES": (int, 0, True),
    "REDIRECT_MAX_TIMES": (int, 0, True), "DEPTH_LIMIT": (int, 0, True),
    "CLOSESPIDER_TIMEOUT": (float, 0, True), "CLOSESPIDER_ITEMCOUNT": (int, 0, True),
    "CLOSESPIDER_PAGECOUNT": (int, 0, True), "CLOSESPIDER_ERRORCOUNT": (int, 0, True),
    "AUTOTHROTTLE_START_DELAY": (float, 0, True), "AUTOTHROTTLE_MAX_DELAY": (float, 0, True),
    "AUTOTHROTTLE_TARGET_CONCURRENCY": (float, 0, False),
}


def check_scrapy_number(name: str, value: Any) -> None:
    """UsageError for a value of one of Scrapy's numeric settings (``_SCRAPY_NUMBERS``) that is no number of
    its kind, or below its least value; other names pass."""
    rule = _SCRAPY_NUMBERS.get(name)
    if rule is None or value is None:
        return
    kind, least, inclusive = rule
    try:
        number = kind(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number != number or number < least or (number == least and not inclusive):
        what = "a whole number" if kind is int else "a number"
        bound = f">= {least:g}" if inclusive else f"> {least:g}"
        raise UsageError(f"-s {name}={value!r}: expected {what} {bound}")


#: SIGINT/SIGTERM received while the crawl is being built (see :func:`note_early_signals`)
_EARLY_SIGNALS: list[int] = []


def note_early_signals() -> None:
    """From here until the crawl's own handler (:class:`ShutdownOnSignal`) is in place, a SIGINT or SIGTERM
    is noted as well as raised (KeyboardInterrupt, SystemExit): a library that swallows exceptions around an
    import (the crawl imports numpy, scipy, lxml...) must not make a Ctrl-C in the first seconds vanish."""

    def early(signum: int, frame: Any = None) -> None:
        _EARLY_SIGNALS.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, early)


class ShutdownOnSignal:
    """SIGINT (Ctrl-C) and SIGTERM stop the crawl gracefully, however early they come: the spider closes as
    ``shutdown`` (the manifest written, the output renamed, exit 1); a second one stops at once.

    Scrapy's own handlers are installed only once the reactor runs, and a signal that comes before the
    engine runs is lost there (the crawl then goes on to the end, or stops with no manifest); a terminal's
    Ctrl-C in the first seconds of a crawl is exactly that. Here the handler is installed before the reactor
    starts, and a stop asked for early waits until the engine runs."""

    #: how often a stop asked for before the engine runs looks again
    retry_s = 0.2

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.received = 0
        #: the signal that stopped the crawl at once (the reactor stopped: the spider never closed)
        self.killed = ""

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self.handle)
        if _EARLY_SIGNALS:  # one came while the crawl was being built and its KeyboardInterrupt was swallowed
            self.handle(_EARLY_SIGNALS[-1])

    def handle(self, signum: int, frame: Any = None) -> None:
        from twisted.internet import reactor

        self.received += 1
        reactor.callFromThread(self.stop if self.received == 1 else self.kill, signal.Signals(signum).name)

    def stop(self, name: str) -> None:
        from twisted.internet import reactor

        engine = self.crawler.engine
        if engine is None or not engine.running:
            if self.crawler.crawling or engine is None:
                reactor.callLater(self.retry_s, self.stop, name)  # not started yet: stop it once it runs
            return
        from scrapy.utils.defer import deferred_from_coro

        deferred_from_coro(self.crawler.stop_async())  # (the engine takes no new request from here on)
        # the pages queued for a download are let go, not sent: each could wait out a pause (429/503, a host
        # not answering) or the download timeout, one after another (a Ctrl-C of a polite crawl of a site
        # that never answers took 7 minutes). Scrapy's engine still ends the downloads in progress.
        downloader = getattr(engine, "downloader", None)
        let_go = waiting = 0
        if hasattr(downloader, "fail_queued"):  # boilerstrip's DOWNLOADER
            let_go = downloader.fail_queued(_stopping_page)
            waiting = downloader.downloads_in_progress()
        timeout = self.crawler.settings.getfloat("DOWNLOAD_TIMEOUT")
        from boilerstrip.outcomes import is_warc_replay

        replay = is_warc_replay(self.crawler)  # (a replay has no --resume)
        logging.getLogger(__name__).warning(
            "received %s: stopping the crawl%s%s; send it again to stop at once", name,
            f"; {let_go} queued page(s) let go ({'the same command again reads them' if replay else '--resume fetches them'})"
            if let_go else "",
            f"; waiting for {waiting} download(s) in progress ({timeout:g} s at most)" if waiting else "")

    def kill(self, name: str) -> None:
        from twisted.internet import reactor

        self.killed = name
        logging.getLogger(__name__).warning("received %s twice: stopping at once", name)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if reactor.running:
            reactor.stop()


def _stopping_page(request: Any) -> Exception | None:
    """What a stop does to a request queued for a download: a page is let go (``CrawlStopping``: not settled,
    ``--resume`` fetches it); a robots.txt, sitemap or opt-out fetch stays queued (its waiting pages read its
    answer, and a robots.txt let go would read as unreachable)."""
    from boilerstrip.meta import KIND_META
    from boilerstrip.outcomes import CrawlStopping

    if request.meta.get(KIND_META, "page") != "page":
        return None
    return CrawlStopping(f"stopping: {request.url} not sent")


def run_spider(settings: Any, spider_kwargs: dict[str, Any], spider_cls: Any = None,
               prog: str = PROG) -> tuple[int, dict[str, Any]]:
    """Run the ``site`` spider (or ``spider_cls``: the WARC replay's) to completion: (0 when it finished,
    1 otherwise; its stats). ``prog``: the command the user ran, before each line it prints."""
    from scrapy.crawler import CrawlerProcess

    from boilerstrip.spiders.site import SiteSpider

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(spider_cls or SiteSpider)
    outcome: dict[str, Any] = {}
    from boilerstrip.outcomes import is_warc_replay

    resumable = not is_warc_replay(crawler)  # a replay has no --resume: it is run again

    def closed(reason: str = "") -> None:
        outcome["reason"] = reason

    from scrapy import signals

    crawler.signals.connect(closed, signal=signals.spider_closed)
    deferred = process.crawl(crawler, **spider_kwargs)

    def failed(failure: Any) -> None:
        outcome["error"] = failure.value

    deferred.addErrback(failed)
    shutdown = ShutdownOnSignal(crawler)
    shutdown.install()
    process.start(install_signal_handlers=False)
    error = outcome.get("error")
    if isinstance(error, (KeyboardInterrupt, SystemExit)):
        say("interrupted before the crawl started; nothing written", prog)
        return 1, {}
    if error is not None:
        kind = "bad setting" if isinstance(error, ConfigError) else type(error).__name__
        say(f"{kind}: {error}", prog)
        return (2 if isinstance(error, (ConfigError, ValueError)) else 1), {}
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    if outcome.get("reason") != "finished":
        # a second signal stops the reactor before the spider closes: no reason of Scrapy's then
        say(stopped_early(outcome.get("reason") or (f"{shutdown.killed} twice" if shutdown.killed else "unknown"),
                          write_errno=stats.get(WRITE_ERRNO_STAT), resumable=resumable), prog)
        return 1, stats
    # a full disk (or a folder removed) as the crawl ended: the ledger, or the output's rename into place
    unwritten = stats.get("boilerstrip/ledger/write_failed") or stats.get(FEED_STORE_FAILED_STAT)
    if unwritten:
        again = next_run(resumable)
        say(f"cannot write {unwritten}; {write_error_advice(stats.get(WRITE_ERRNO_STAT), again)}", prog)
        return 1, stats
    if stats.get("boilerstrip/ledger/mismatch"):
        # the ledger did not reconcile (a URL never settled, or settled twice): an error, not a log line
        say(LEDGER_MISMATCH, prog)
        return 3, stats
    return 0, stats


def finishing_stopped(out: Path, by: str | None = None, again: str | None = None) -> str:
    """The line of a run whose finishing pass a signal stopped (``by``); ``again``: what finishes it
    (default: ``boilerstrip dedup``)."""
    again = again or f"boilerstrip dedup {out} -o {out}"
    return f"the finishing pass was stopped by {by or 'a signal'}; {out} is left as crawled ({again} finishes it)"


def crawl_and_finish(settings: Any, spider_kwargs: dict[str, Any], out: Path, spider_cls: Any = None,
                     prog: str = PROG) -> int:
    """Run the crawl; the finishing pass and the ledger's reconciliation run inside it (FinishingExtension).
    Exit status as the module says; a crawl that wrote nothing because no start URL could be reached is 1.
    Another run writing the same output raises :class:`OutputBusy` before anything is written (the CLI says
    so and exits 2: :func:`output_lock`). ``prog``: the command the user ran, before each line it prints."""
    with output_lock(out):
        return _crawl_and_finish(settings, spider_kwargs, out, spider_cls, prog)


def _crawl_and_finish(settings: Any, spider_kwargs: dict[str, Any], out: Path, spider_cls: Any, prog: str) -> int:
    code, stats = run_spider(settings, spider_kwargs, spider_cls, prog)
    if code != 0:
        return code
    status = stats.get(FINISHING_STATUS) if stats else None
    summary = stats.get(f"{FINISHING_STATUS.rpartition('/')[0]}/summary") if stats else None
    if status in ("done", "mismatch") and isinstance(summary, dict):
        report_finishing(summary, out, prog)
        if stats.get("boilerstrip/warc/dir"):
            from boilerstrip.warc.options import warc_written_line  # as in build_settings

            say(warc_written_line(stats), prog)
    if status == "failed":
        say(FINISHING_FAILED, prog)
        return 1
    if status == "interrupted":
        by = stats.get(f"{FINISHING_STATUS.rpartition('/')[0]}/stopped_by")
        from boilerstrip.outcomes import WARC_REPLAY_SPIDER  # (as above: Scrapy only once a run starts)

        # a crawl (or the demo) goes on with --resume; a WARC replay has none: dedup finishes its pass
        resumable = getattr(spider_cls, "name", None) != WARC_REPLAY_SPIDER
        say(finishing_stopped(out, by, "the same command with --resume" if resumable else None), prog)
        return 1
    if status == "mismatch":
        say(LEDGER_MISMATCH_AFTER_PASS, prog)
        return 3
    line, failed = start_urls_line(out, spider_kwargs.get("start_urls") or [])
    if line:
        say(line, prog)
    if failed:
        return 1
    code = 0
    missed = browser_misses(stats or {})
    if missed:
        say(f"{sum(missed.values())} page(s) that needed a browser did not get a whole render: "
            + ", ".join(f"{n} {why}" for why, n in sorted(missed.items()))
            + " (their records say so in flags render_failed:* / render_placeholder:*)", prog)
        code = RENDER_MISSED_EXIT
    from boilerstrip.extensions.progress import down_hosts  # the politeness middleware's gauges (no ledger needed)

    down = down_hosts(stats or {})
    if down:
        say(hosts_down_line(down, int((stats or {}).get("boilerstrip/failed/host_down", 0) or 0)), prog)
        code = HOSTS_DOWN_EXIT
    return code


#: exit status of a crawl that finished, but gave up on a host that stopped answering: the records written
#: are whole, the site is not (its other pages failed as ``host_down``; the politeness middleware's
#: ``host_down_after_s``)
HOSTS_DOWN_EXIT = 6


def hosts_down_of(manifest: dict[str, Any]) -> tuple[dict[str, str], int]:
    """The hosts a run gave up (host -> why: ``hosts_down``) and its pages that failed as ``host_down``, as
    its manifest says (for the readers of a finished run's manifest: the distributed coordinator, --resume)."""
    down = manifest.get("hosts_down")
    failed = (manifest.get("reasons") or {}).get("failed:host_down", 0)
    return (down if isinstance(down, dict) else {}), (failed if isinstance(failed, int) else 0)


def hosts_down_line(down: dict[str, str], failed: int) -> str:
    """The line of a crawl that gave up on the hosts ``down`` (host -> why), ``failed`` of its pages failing
    as ``host_down`` (the others of those hosts settled with the answer in hand: http_503...)."""
    hosts = "; ".join(f"{host} ({why})" for host, why in sorted(down.items())[:3]) + ("; ..." if len(down) > 3 else "")
    return (f"{len(down)} host(s) stopped answering and were given up: {hosts}; {failed} page(s) failed as "
            f"host_down; once the site answers again, run the same command again (what it has is asked for "
            f"conditionally, the rest fetched)")


def report_finishing(summary: dict[str, Any], out: Path, prog: str = PROG) -> None:
    """The lines that sum up a finishing pass (``boilerstrip/finishing/summary``)."""
    seconds = summary.get("seconds")
    took = (f" ({sum(seconds.values()):.1f} s: " + ", ".join(f"{phase} {s:.1f}" for phase, s in seconds.items()) + ")"
            if isinstance(seconds, dict) and seconds else "")
    marked = f"{summary['marked']} near duplicates kept and marked, " if summary.get("marked") else ""
    say(f"finishing pass: {summary['pages']} pages, {summary['dropped']} duplicates dropped, {marked}"
        f"template report in {summary['report']}{took}", prog)
    say(f"{written_line(summary)} to {out}", prog)
    changes = summary.get("changes")
    if isinstance(changes, dict):
        say("changes: " + ", ".join(f"{changes.get(k, 0)} {k}" for k in CHANGE_KINDS)
            + (f" (crawl cut by {changes['cut_reason']}: nothing marked removed)" if changes.get("cut_reason") else ""), prog)


#: exit status of a crawl that finished, but some pages that needed a browser kept their static HTML or a
#: placeholder (the records and the ledger are complete: the status says the text of those pages is not)
RENDER_MISSED_EXIT = 5
#: render failures that are the crawl's policy, not a browser it lacked (the static page is the right one)
_POLICY_FALLBACKS = ("navigation_refused", "navigated_offsite")


def browser_misses(stats: dict[str, Any]) -> dict[str, int]:
    """``render_failed:<reason>`` / ``render_placeholder:<verdict>`` -> pages, from the crawl's stats: the
    pages that needed a browser and did not get a whole render."""
    missed: dict[str, int] = {}
    for key, value in stats.items():
        if not isinstance(value, int) or not value:
            continue
        if key.startswith("boilerstrip/render/failed/") and key.rsplit("/", 1)[1] not in _POLICY_FALLBACKS:
            missed[f"render_failed:{key.rsplit('/', 1)[1]}"] = value
        elif key.startswith("boilerstrip/render/placeholder/"):
            missed[f"render_placeholder:{key.rsplit('/', 1)[1]}"] = value
    return missed
def written_line(summary: dict[str, Any]) -> str:
    """What the output holds, in the words the progress and summary lines use: ``6 records written (4 pages,
    2 tombstones; 121 unchanged pages left out by --changes-only)``."""
    records = int(summary.get("records") or 0)
    tombstones = int(summary.get("tombstones") or 0)
    left_out = int(summary.get("unchanged_left_out") or 0)
    detail = f"{records - tombstones} pages, {tombstones} tombstones" if tombstones else f"{records} pages"
    if left_out:
        detail += f"; {left_out} unchanged pages left out by --changes-only"
    return f"{records} records written ({detail})"

#: a tombstone line is a URL, a change, a reason and a time: a longer line is a page
_TOMBSTONE_MAX_BYTES = 16384


def _wrote_a_page(out: Path) -> bool:
    """Whether ``out`` holds a page's record (not only a recurring crawl's tombstones); stops at the first."""

    if not out.is_file():
        return False
    with open(out, "rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            if len(line) > _TOMBSTONE_MAX_BYTES:
                return True
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("change") not in TOMBSTONES:
                return True
    return False


#: ledger outcomes of a start URL that mean "the site could not be reached at all", or would not be crawled
#: (a robots.txt that disallows it: a crawl of it wrote nothing and exited 0, saying "check the start URL")
_UNREACHABLE = ("failed:", "filtered:robots_unreachable", "filtered:robots_disallowed")


def unreached_line(unreachable: list[tuple[str, str]]) -> str:
    """The last line of a run that wrote nothing because no start URL could be reached or was allowed
    (:func:`start_urls_line`), with what to try when the outcome suggests it."""
    listed = ", ".join(f"{url} ({reason})" for url, reason in unreachable[:5])
    if all(reason.startswith("filtered:robots_disallowed") for _url, reason in unreachable):
        # (the site's own choice, but nothing came out: exit 1, so a scheduled run keeps its last output)
        return f"every start URL is disallowed by its site's robots.txt (boilerstrip obeys it), nothing written: {listed}"
    if all(reason.startswith("failed:http_") for _url, reason in unreachable):
        # the server was reached, and answered with an error (404, 401, 500...): not "could not be reached"
        return f"no start URL gave a page (each answered with an error), nothing written: {listed}"
    return f"no start URL could be reached, nothing written: {listed}{_unreached_hint(unreachable)}"


def partly_unreached_line(unreached: list[tuple[str, str]], start_urls: int) -> str:
    """The line of a run that crawled some of its start URLs and could not reach, or was not allowed, the
    others (:func:`unreached_start_urls`): a site of a list that is down, said once at the end."""
    listed = ", ".join(f"{url} ({reason})" for url, reason in unreached[:5])
    more = f" and {len(unreached) - 5} more" if len(unreached) > 5 else ""
    return (f"{len(unreached)} of {start_urls} start URL(s) gave no page: "
            f"{listed}{more}{_unreached_hint(unreached)}")


def _unreached_hint(unreachable: list[tuple[str, str]]) -> str:
    """What to try, when the outcomes of unreached start URLs suggest it."""
    hint = ""
    if any("refused:private_address" in reason for _url, reason in unreachable):
        # (a dev server's 127.0.0.1 -> localhost redirect: only the start URLs' own origins are allowed)
        hint = "; it redirected to a private or loopback address other than the start URL's: --allow-private HOST:PORT allows it"
    tls = [url for url, reason in unreachable if reason.endswith("tls_error") and url.startswith("https://")]
    if tls:
        hint += (f"; no TLS handshake with {tls[0]}: if the server speaks plain HTTP there, give "
                 f"http://{tls[0][len('https://'):]}")
    return hint


def unreached_start_urls(out: Path, start_urls: list[str]) -> list[tuple[str, str]]:
    """[(start URL, outcome)] of the start URLs the run's ledger says could not be reached or were not allowed
    (robots.txt unreachable or disallowing them, a failed fetch), each once, in the order given."""
    layout = crawl_layout(out)
    if not start_urls or not layout.ledger.exists():
        return []
    entries = {entry["url"]: entry for entry in read_ledger(layout.ledger)}
    found = []
    for url in dict.fromkeys(start_urls):
        entry = entries.get(url) or {}
        outcome = f"{entry.get('outcome')}:{entry.get('reason') or ''}" if entry else ""
        if outcome.startswith(_UNREACHABLE):
            # what went wrong under the verdict: robots_unreachable of a mistyped host name says dns_not_found
            detail = str(entry.get("detail") or "")
            found.append((url, f"{outcome}: {detail}" if detail and detail not in outcome else outcome))
    return found


def start_urls_line(out: Path, start_urls: list[str]) -> tuple[str | None, bool]:
    """(the line about the start URLs that gave nothing, or None; whether that fails the run). No page written
    and no start URL reached or allowed: :func:`unreached_line`, exit 1 (tombstones alone, a recurring crawl's
    removed/unseen lines, are not a crawl that did something). Some of them: :func:`partly_unreached_line`,
    and the run stands (one site of a list down)."""
    unreached = unreached_start_urls(out, start_urls)
    if not unreached:
        return None, False
    starts = len(dict.fromkeys(start_urls))
    if len(unreached) == starts and not _wrote_a_page(out):
        return unreached_line(unreached), True
    return partly_unreached_line(unreached, starts), False
