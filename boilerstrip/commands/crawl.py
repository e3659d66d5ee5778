"""``boilerstrip crawl URL [URL ...] -o OUT.jsonl``: crawl each site politely, one JSON line per page.

Arguments are checked before anything starts (URL schemes, numbers, profile name, ``-s`` syntax, an
output folder we can write to): a bad one prints one line to stderr and exits 2. The crawl itself runs
the ``site`` spider in a ``CrawlerProcess`` with the project settings, the profile below them and ``-s``
values above them. Exit status: 0 when the crawl finished, 1 when it stopped early or could not start,
3 when the ledger does not reconcile (a URL unaccounted for or settled twice).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any


#: the change counts the summary prints, in order (boilerstrip.recrawl.CHANGES; not imported: no Scrapy here)
CHANGE_KINDS = ("new", "changed", "unchanged", "removed", "unseen")
#: the stat the FinishingExtension sets (boilerstrip.extensions.finishing.STATUS; not imported: no Scrapy here)
FINISHING_STATUS = "boilerstrip/finishing/status"

__all__ = ["HELP", "add_arguments", "run", "feed_settings", "UsageError", "build_settings", "run_spider"]

HELP = "Crawl one or more sites politely and write one JSON line per page."


class UsageError(ValueError):
    """A bad argument; the message is one line for the user."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urls", nargs="*", metavar="URL", help="start URL(s); each one's site is crawled")
    parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="the JSONL file to write (overwritten)")
    parser.add_argument("--state", metavar="DIR", help="the state folder a recurring crawl remembers its pages in "
                        "(BOILERSTRIP_STATE_DIR; default: .boilerstrip-state next to the output)")
    add_crawl_options(parser)
    parser.add_argument("--redis", metavar="redis://HOST:PORT/DB",
                        help="crawl on scrapy-redis: the frontier and shared state in this Redis (docs/distributed.md)")
    parser.add_argument("--workers", metavar="N", help="with --redis: run N local worker processes (default 1)")


def add_crawl_options(parser: argparse.ArgumentParser) -> None:
    """Options shared with ``boilerstrip demo`` and ``boilerstrip schedule add``."""
    parser.add_argument("--profile", metavar="NAME", help="settings profile (settings_profiles/NAME.py); default polite")
    parser.add_argument("--max-pages", metavar="N", help="admit at most N page requests")
    parser.add_argument("--max-depth", metavar="N", help="follow links at most N hops from a start URL")
    parser.add_argument("--scope", metavar="host|domain", help="stay on the start URL's host (default) or its registrable domain")
    parser.add_argument("--no-sitemaps", action="store_true", help="do not read robots.txt Sitemap: lines and /sitemap.xml")
    parser.add_argument("--drop-duplicates", action="store_true",
                        help="drop near-duplicate pages (default: kept, marked with duplicate_of and duplicate_similarity)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run into the same output")
    parser.add_argument("--changes-only", dest="changes_only", action="store_true",
                        help="write only new, changed and removed pages (BOILERSTRIP_RECRAWL_CHANGES_ONLY)")
    parser.add_argument("--allow-private", dest="allow_private", action="append", default=[], metavar="HOST:PORT",
                        help="also allow this private/loopback host:port (start URLs' own origins always are)")
    parser.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="set a Scrapy/boilerstrip setting (beats the profile and the project)")
    parser.add_argument("--log-level", default="WARNING", metavar="LEVEL", help="Scrapy log level (default WARNING)")


# -- checks ----------------------------------------------------------------------------------------------
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
        overrides["BOILERSTRIP_STATE_DIR"] = str(Path(args.state).expanduser().resolve())
    if getattr(args, "changes_only", False):
        overrides["BOILERSTRIP_RECRAWL_CHANGES_ONLY"] = "true"
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
    process.start()
    error = outcome.get("error")
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
    try:
        if not args.urls:
            raise UsageError("no start URL: boilerstrip crawl URL [URL ...] -o OUT.jsonl")
        from boilerstrip.spiders.site import parse_start_urls

        try:
            parse_start_urls(args.urls)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        out = check_output(args.output)
        settings, spider_kwargs = build_settings(args, out)
        workers = _count(getattr(args, "workers", None), "--workers", 0)
        if workers is not None and not getattr(args, "redis", None):
            raise UsageError("--workers needs --redis redis://HOST:PORT/DB")
    except UsageError as exc:
        print(f"boilerstrip crawl: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "redis", None):
        from boilerstrip.distributed.command import crawl_distributed

        return crawl_distributed(args, settings, out, 1 if workers is None else workers)
    return crawl_and_finish(settings, spider_kwargs, out)


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
    return 0


#: ledger outcomes of a start URL that mean "the site could not be reached at all"
_UNREACHABLE = ("failed:", "filtered:robots_unreachable")


def unreachable_start_urls(out: Path, start_urls: list[str]) -> list[tuple[str, str]]:
    """[(start URL, outcome)] when the run wrote no record and every start URL failed to be reached;
    [] otherwise (one reachable start URL, or any record written, is a crawl that did something)."""
    from boilerstrip.state import crawl_layout

    layout = crawl_layout(out)
    if not start_urls or not layout.ledger.exists():
        return []
    if out.exists() and out.stat().st_size > 0:
        return []
    outcomes: dict[str, str] = {}
    with open(layout.ledger, encoding="utf-8") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            outcome = f"{entry.get('outcome')}:{entry.get('reason')}"
            outcomes[entry.get("url")] = outcome
    found = [(url, outcomes.get(url, "")) for url in start_urls]
    if all(outcome.startswith(_UNREACHABLE) for _, outcome in found):
        return found
    return []
