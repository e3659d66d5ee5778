"""``boilerstrip crawl URL [URL ...] -o OUT.jsonl``: crawl each site politely, one JSON line per page.

Arguments are checked before anything starts (URL schemes, numbers, profile name, ``-s`` syntax, an
output folder we can write to): a bad one prints one line to stderr and exits 2. The crawl itself runs
the ``site`` spider in a ``CrawlerProcess`` with the project settings, the profile below them and ``-s``
values above them. Exit status: 0 when the crawl finished, 1 when it stopped early or could not start,
3 when the ledger does not reconcile (a URL unaccounted for or settled twice), 5 when it finished but
pages that needed a browser did not get a whole render (``RENDER_MISSED_EXIT``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from boilerstrip.ledger import ledger_outcomes


#: the change counts the summary prints, in order (boilerstrip.recrawl.CHANGES; not imported: no Scrapy here)
CHANGE_KINDS = ("new", "changed", "unchanged", "removed", "unseen")
#: the stat the FinishingExtension sets (boilerstrip.extensions.finishing.STATUS; not imported: no Scrapy here)
FINISHING_STATUS = "boilerstrip/finishing/status"

__all__ = ["HELP", "add_arguments", "run", "feed_settings", "UsageError", "build_settings", "run_spider",
           "complete_bare_hosts", "check_state_dir"]

HELP = "Crawl one or more sites politely and write one JSON line per page."


class UsageError(ValueError):
    """A bad argument; the message is one line for the user."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urls", nargs="*", metavar="URL", help="start URL(s); each one's site is crawled")
    parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="the JSONL file to write (overwritten)")
    parser.add_argument("--state", metavar="DIR", help="the state folder a recurring crawl remembers its pages in "
                        "(BOILERSTRIP_STATE_DIR; default: .boilerstrip-state next to the output)")
    add_crawl_options(parser)
    parser.add_argument("--chunks", metavar="CHUNKS.jsonl",
                        help="after the finishing pass, also cut the pages into chunks for retrieval, each new, "
                             "unchanged or removed against the last crawl with the same state folder "
                             "(boilerstrip chunk with its default sizes, docs/chunks.md)")
    parser.add_argument("--redis", metavar="redis://HOST:PORT/DB",
                        help="crawl on scrapy-redis: the frontier and shared state in this Redis (docs/distributed.md)")
    parser.add_argument("--workers", metavar="N", help="with --redis: run N local worker processes (default 1)")


def add_crawl_options(parser: argparse.ArgumentParser, resume: bool = True) -> None:
    """Options shared with ``boilerstrip demo`` and ``boilerstrip schedule add`` (which has no ``--resume``:
    each run of a job is a new crawl)."""
    parser.add_argument("--profile", metavar="NAME", help="settings profile (settings_profiles/NAME.py); default polite")
    parser.add_argument("--max-pages", metavar="N", help="admit at most N page requests")
    parser.add_argument("--max-depth", metavar="N", help="follow links at most N hops from a start URL")
    parser.add_argument("--scope", metavar="host|domain", help="stay on the start URL's host (default) or its registrable domain")
    parser.add_argument("--no-sitemaps", action="store_true", help="do not read robots.txt Sitemap: lines and /sitemap.xml")
    parser.add_argument("--drop-duplicates", action="store_true",
                        help="drop near-duplicate pages (default: kept, marked with duplicate_of and duplicate_similarity)")
    if resume:
        parser.add_argument("--resume", action="store_true", help="continue an interrupted run into the same output")
    parser.add_argument("--trail", action="store_true",
                        help="keep each record's block-by-block trail (blocks, page_blocks, page_block_hashes: what "
                             "`boilerstrip dedup` needs to redo template removal); default: lean records")
    parser.add_argument("--changes-only", dest="changes_only", action="store_true",
                        help="write only new, changed and removed pages (BOILERSTRIP_RECRAWL_CHANGES_ONLY)")
    parser.add_argument("--allow-private", dest="allow_private", action="append", default=[], metavar="HOST:PORT",
                        help="also allow this private/loopback host:port (start URLs' own origins always are)")
    parser.add_argument("--fields", metavar="LIST", help="write only these record fields, e.g. url,title,text "
                        "(FEED_EXPORT_FIELDS; url is always written; default: all, see docs/schema.md)")
    parser.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="set a Scrapy/boilerstrip setting (beats the profile and the project)")
    parser.add_argument("--log-level", default="WARNING", metavar="LEVEL", help="Scrapy log level (default WARNING)")


# -- checks ----------------------------------------------------------------------------------------------
#: a host name or address with an optional port and path, and no scheme: ``example.org``, ``docs.example.org/guide``
_BARE_HOST = re.compile(r"^(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?:[/?#]\S*)?$")


def complete_bare_hosts(urls: list[str]) -> tuple[list[str], list[str]]:
    """(the start URLs with ``https://`` put before a bare host, as trafilatura does; one note per URL so
    completed). ``example.org`` -> ``https://example.org``; anything with a scheme is left as it is."""
    done: list[str] = []
    notes: list[str] = []
    for url in urls:
        text = str(url).strip()
        if "://" not in text and _BARE_HOST.match(text):
            done.append(f"https://{text}")
            notes.append(f"note: {text!r} has no scheme: crawling https://{text}")
        else:
            done.append(url)
    return done, notes


def _count(value: str | None, name: str, minimum: int) -> int | None:
    if value is None:
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise UsageError(f"{name} expects a whole number, got {value!r}") from None
    if number < minimum:
        raise UsageError(f"{name} must be >= {minimum}, got {number}")
    return number


def check_output(path: str | None) -> Path:
    """The output path, resolved, after proving its folder is writable (created if missing)."""
    if not path:
        raise UsageError("no output file: pass -o OUT.jsonl")
    if path == "-":
        # a crawl writes a file and its ledger, manifest and report beside it, and rewrites the file in its
        # finishing pass: there is no stdout form of that
        raise UsageError("-o - (stdout) is not supported: a crawl's output is a file with its ledger, manifest "
                         "and report beside it; pass -o OUT.jsonl (then cat it), or use boilerstrip extract - for one page")
    out = Path(path).expanduser()
    if out.exists() and out.is_dir():
        raise UsageError(f"output {str(out)!r} is a directory, expected a file path")
    folder = out.resolve().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".boilerstrip-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"cannot write to {str(folder)!r}: {exc.strerror or exc}") from None
    if out.exists() and not os.access(out, os.W_OK):
        raise UsageError(f"cannot overwrite {str(out)!r}: permission denied")
    return out.resolve()


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
    from boilerstrip.finishing.steps import field_list
    from boilerstrip.items import RECORD_FIELDS

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


def feed_settings(out: Path, resume: bool = False) -> dict[str, Any]:
    """The Scrapy settings that write the JSONL output (the crash-safe storage of :mod:`boilerstrip.feeds`);
    the one place the output is configured."""
    from boilerstrip.feeds import feed_settings as safe_feed_settings

    return safe_feed_settings(out, resume=resume)


def build_settings(args: argparse.Namespace, out: Path) -> tuple[Any, dict[str, Any]]:
    """(Scrapy Settings, spider kwargs) for a checked set of arguments. Raises UsageError."""
    from boilerstrip.addons import ProfileError, load_profile
    from boilerstrip.config import ConfigError
    from boilerstrip.spiders.site import CrawlParams, parse_start_urls

    try:
        start_urls = parse_start_urls(args.urls)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    max_pages = _count(args.max_pages, "--max-pages", 1)
    max_depth = _count(args.max_depth, "--max-depth", 0)
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
    if getattr(args, "changes_only", False):
        overrides["BOILERSTRIP_RECRAWL_CHANGES_ONLY"] = "true"
    if getattr(args, "fields", None):
        overrides["FEED_EXPORT_FIELDS"] = args.fields
    if getattr(args, "allow_private", None):
        from boilerstrip.safety.addresses import parse_host_port

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
    for name, value in feed_settings(out, resume=bool(getattr(args, "resume", False))).items():
        settings.set(name, value, priority="cmdline")
    for name, value in overrides.items():
        settings.set(name, value, priority="cmdline")
    settings.set("LOG_LEVEL", _check_log_level(settings.get("LOG_LEVEL")), priority="cmdline")
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
        from boilerstrip.config import params_from_settings

        view = {k: settings.get(k) for k in settings if k.startswith("BOILERSTRIP_CRAWL_")}
        view.update({f"BOILERSTRIP_CRAWL_{k.upper()}": v for k, v in spider_kwargs.items() if k != "start_urls"})
        params_from_settings(view, "crawl", CrawlParams)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return settings, spider_kwargs


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
        logging.getLogger(__name__).warning("received %s: stopping the crawl (send it again to stop at once)", name)
        from scrapy.utils.defer import deferred_from_coro

        deferred_from_coro(self.crawler.stop_async())

    def kill(self, name: str) -> None:
        from twisted.internet import reactor

        logging.getLogger(__name__).warning("received %s twice: stopping at once", name)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if reactor.running:
            reactor.stop()


def run_spider(settings: Any, spider_kwargs: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Run the ``site`` spider to completion: (0 when it finished, 1 otherwise; its stats)."""
    from scrapy.crawler import CrawlerProcess

    from boilerstrip.config import ConfigError
    from boilerstrip.spiders.site import SiteSpider

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    outcome: dict[str, Any] = {}

    def closed(reason: str = "") -> None:
        outcome["reason"] = reason

    from scrapy import signals

    crawler.signals.connect(closed, signal=signals.spider_closed)
    deferred = process.crawl(crawler, **spider_kwargs)

    def failed(failure: Any) -> None:
        outcome["error"] = failure.value

    deferred.addErrback(failed)
    ShutdownOnSignal(crawler).install()
    process.start(install_signal_handlers=False)
    error = outcome.get("error")
    if isinstance(error, (KeyboardInterrupt, SystemExit)):
        print("boilerstrip crawl: interrupted before the crawl started; nothing written", file=sys.stderr)
        return 1, {}
    if error is not None:
        kind = "bad setting" if isinstance(error, ConfigError) else type(error).__name__
        print(f"boilerstrip crawl: {kind}: {error}", file=sys.stderr)
        return (2 if isinstance(error, (ConfigError, ValueError)) else 1), {}
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    if outcome.get("reason") != "finished":
        hint = "; free space, then the same command with --resume" if outcome.get("reason") == "write_error" else ""
        print(f"boilerstrip crawl: stopped early ({outcome.get('reason', 'unknown')}){hint}", file=sys.stderr)
        return 1, stats
    if stats.get("boilerstrip/ledger/mismatch"):
        # the ledger did not reconcile (a URL never settled, or settled twice): an error, not a log line
        print("boilerstrip crawl: ledger mismatch: some URLs are unaccounted for (see the manifest)", file=sys.stderr)
        return 3, stats
    return 0, stats


def run(args: argparse.Namespace) -> int:
    note_early_signals()
    try:
        if not args.urls:
            raise UsageError("no start URL: boilerstrip crawl URL [URL ...] -o OUT.jsonl")
        from boilerstrip.spiders.site import parse_start_urls

        args.urls, notes = complete_bare_hosts(list(args.urls))
        for note in notes:
            print(f"boilerstrip crawl: {note}", file=sys.stderr)
        try:
            parse_start_urls(args.urls)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if getattr(args, "state", None):
            check_state_dir(args.state)  # before the output's folder is made
        out = check_output(args.output)
        settings, spider_kwargs = build_settings(args, out)
        workers = _count(getattr(args, "workers", None), "--workers", 0)
        if workers is not None and not getattr(args, "redis", None):
            raise UsageError("--workers needs --redis redis://HOST:PORT/DB")
        chunks = check_chunks_output(getattr(args, "chunks", None), out)
    except UsageError as exc:
        print(f"boilerstrip crawl: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "resume", False) and not getattr(args, "redis", None):
        from boilerstrip.ledger import finished_run, run_status

        manifest = finished_run(out)
        if manifest is not None:  # a finished run has nothing to resume: its output and reports stay as they are
            print(f"boilerstrip crawl: {out} finished at {manifest.get('finished_at', '?')}: nothing to resume; "
                  "its records, ledger, manifest and change report are left as they were "
                  "(run without --resume for a new crawl)", file=sys.stderr)
            return run_status(out)
    if getattr(args, "redis", None):
        from boilerstrip.distributed.command import crawl_distributed

        signal.signal(signal.SIGINT, signal.default_int_handler)  # the coordinator's own handling, as before
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

        code = crawl_distributed(args, settings, out, 1 if workers is None else workers)
    else:
        code = crawl_and_finish(settings, spider_kwargs, out)
    if code in (0, RENDER_MISSED_EXIT) and chunks is not None:  # the records are complete: chunk them
        return chunk_crawl(out, chunks, settings) or code
    return code


def check_chunks_output(path: str | None, out: Path) -> Path | None:
    """``--chunks``: a writable file that is not the crawl's output (checked before the crawl starts)."""
    if path is None:
        return None
    chunks = check_output(path)
    if chunks == out:
        raise UsageError("--chunks must name another file than -o")
    return chunks


def chunk_crawl(out: Path, chunks: Path, settings: Any) -> int:
    """``--chunks``: chunk the finished crawl's records, the chunk IDs kept in the crawl's state folder (none
    when the state is in Redis or switched off: every chunk is then written without a change status)."""
    from boilerstrip.chunks import ChunkParams, word_counter
    from boilerstrip.commands.chunk import run_chunks
    from boilerstrip.config import params_from_settings
    from boilerstrip.recrawl import RecrawlParams
    from boilerstrip.state import StateParams, resolve_state_dir

    state_dir = params_from_settings(settings, "state", StateParams).dir
    state = None if "://" in state_dir else resolve_state_dir(state_dir, out)
    # --changes-only: the output leaves unchanged pages out (their chunks are kept), and the chunks file
    # holds only what an index must add or delete, as the records file holds only what changed
    changes_only = params_from_settings(settings, "recrawl", RecrawlParams).changes_only and state is not None
    params = ChunkParams()
    return run_chunks(out, chunks, params, word_counter(params.words_to_tokens), str(state) if state else None,
                      changes_only=changes_only, partial=changes_only, prog="boilerstrip crawl")


def crawl_and_finish(settings: Any, spider_kwargs: dict[str, Any], out: Path) -> int:
    """Run the crawl; the finishing pass and the ledger's reconciliation run inside it (FinishingExtension).
    Exit status as the module says; a crawl that wrote nothing because no start URL could be reached is 1."""
    code, stats = run_spider(settings, spider_kwargs)
    if code != 0:
        return code
    status = stats.get(FINISHING_STATUS) if stats else None
    summary = stats.get(f"{FINISHING_STATUS.rpartition('/')[0]}/summary") if stats else None
    if status in ("done", "mismatch") and isinstance(summary, dict):
        print(f"boilerstrip crawl: finishing pass: {summary['pages']} pages, {summary['dropped']} duplicates dropped, "
              f"template report in {summary['report']}", file=sys.stderr)
        print(f"boilerstrip crawl: {written_line(summary)} to {out}", file=sys.stderr)
        changes = summary.get("changes")
        if isinstance(changes, dict):
            print("boilerstrip crawl: changes: " + ", ".join(f"{changes.get(k, 0)} {k}" for k in CHANGE_KINDS)
                  + (f" (crawl cut by {changes['cut_reason']}: nothing marked removed)" if changes.get("cut_reason") else ""),
                  file=sys.stderr)
    if status == "failed":
        print("boilerstrip crawl: the finishing pass failed; the output is left as crawled (see the log)", file=sys.stderr)
        return 1
    if status == "mismatch":
        print("boilerstrip crawl: ledger mismatch after the finishing pass (see the manifest)", file=sys.stderr)
        return 3
    unreachable = unreachable_start_urls(out, spider_kwargs.get("start_urls") or [])
    if unreachable:
        listed = ", ".join(f"{url} ({reason})" for url, reason in unreachable[:5])
        print(f"boilerstrip crawl: no start URL could be reached, nothing written: {listed}", file=sys.stderr)
        return 1
    missed = browser_misses(stats or {})
    if missed:
        print(f"boilerstrip crawl: {sum(missed.values())} page(s) that needed a browser did not get a whole render: "
              + ", ".join(f"{n} {why}" for why, n in sorted(missed.items()))
              + " (their records say so in flags render_failed:* / render_placeholder:*)", file=sys.stderr)
        return RENDER_MISSED_EXIT
    return 0


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
    from boilerstrip.recrawl import TOMBSTONES

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


#: ledger outcomes of a start URL that mean "the site could not be reached at all"
_UNREACHABLE = ("failed:", "filtered:robots_unreachable")


def unreachable_start_urls(out: Path, start_urls: list[str]) -> list[tuple[str, str]]:
    """[(start URL, outcome)] when the run wrote no record and every start URL failed to be reached;
    [] otherwise (one reachable start URL, or any record written, is a crawl that did something)."""
    from boilerstrip.state import crawl_layout

    layout = crawl_layout(out)
    if not start_urls or not layout.ledger.exists():
        return []
    if _wrote_a_page(out):
        return []  # tombstones alone (a recurring crawl's removed/unseen lines) are not a crawl that did something
    outcomes = ledger_outcomes(layout.ledger) or {}
    found = [(url, outcomes.get(url, "")) for url in start_urls]
    if all(outcome.startswith(_UNREACHABLE) for _, outcome in found):
        return found
    return []
