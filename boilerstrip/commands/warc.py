"""``boilerstrip warc FILE [FILE ...] -o OUT.jsonl``: the pages of WARC files, cleaned as a crawl cleans them.

Any WARC (ours from ``crawl --warc``, ``wget --warc-file``, Common Crawl's, browsertrix-crawler's), gzip
per record or uncompressed. The files are scanned once into an on-disk index of records by site
(:mod:`boilerstrip.warc.index`, next to the output, removed at the end), then the ``warc`` spider replays
them site by site through the crawl's own middlewares, pipelines, ledger and finishing pass
(:mod:`boilerstrip.spiders.warc`): the same record schema and side files (ledger, manifest, template
report) as ``boilerstrip crawl``, and the same exit status. Also the helpers ``crawl --warc`` uses.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from boilerstrip.addons import set_setting

__all__ = ["HELP", "add_arguments", "run", "replay_settings"]

HELP = "Read WARC files (any writer's) and write their pages as a crawl would, template removal included."

#: what the replay changes in the crawl's settings: nothing goes to the network, no politeness delays
#: (the pages are on disk), every host is in scope (the WARC chose the pages), the trap rules and
#: conditional requests do not apply, no browser, no WARC written while one is read
_REPLAY_SETTINGS: dict[str, Any] = {
    "DOWNLOAD_HANDLERS": {"http": "boilerstrip.downloadhandlers.warc.WarcReplayHandler",
                          "https": "boilerstrip.downloadhandlers.warc.WarcReplayHandler",
                          "file": None, "data": None, "ftp": None, "s3": None},
    "BOILERSTRIP_SCOPE_ENABLED": False,
    "BOILERSTRIP_POLITENESS_ENABLED": False,
    "BOILERSTRIP_TRAPS_ENABLED": False,
    "BOILERSTRIP_RENDER_MODE": "never",
    "BOILERSTRIP_RENDER_PATTERNS": [],
    "BOILERSTRIP_RECRAWL_PARAMS": {"conditional": False, "trust_lastmod": False},
    "BOILERSTRIP_WARC_DIR": "",
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "RETRY_ENABLED": False,
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
    "COOKIES_ENABLED": False,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="WARC file(s): .warc.gz (gzip per record) or .warc; "
                        "a folder for the WARC files under it")
    parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="the JSONL file to write (overwritten)")
    parser.add_argument("--state", metavar="DIR", help="the state folder (template counts, URL history; default: "
                        ".boilerstrip-state next to the output)")
    parser.add_argument("--robots", action="store_true", help="honour each site's robots.txt as captured in the WARC "
                        "(pages it disallows: filtered:robots_disallowed); default: every captured page is read")
    parser.add_argument("--profile", metavar="NAME", help="settings profile (settings_profiles/NAME.py)")
    parser.add_argument("--drop-duplicates", action="store_true", help="drop near-duplicate pages (default: marked)")
    parser.add_argument("--trail", action="store_true", help="keep each record's block-by-block trail")
    parser.add_argument("--fields", metavar="LIST", help="write only these record fields (url always)")
    parser.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="set a Scrapy/boilerstrip setting")
    parser.add_argument("--log-level", default="WARNING", metavar="LEVEL", help="Scrapy log level (default WARNING)")


#: the components the replay leaves out (their _ENABLED settings are off too): taken out of the lists as well,
#: so the run does not log a "Disabled" line for each
_LEFT_OUT = {
    "DOWNLOADER_MIDDLEWARES": ("boilerstrip.downloadermiddlewares.scope.ScopeMiddleware",
                               "boilerstrip.downloadermiddlewares.scope.CredentialsMiddleware",
                               "boilerstrip.downloadermiddlewares.politeness.PolitenessMiddleware",
                               "boilerstrip.downloadermiddlewares.render.RenderWhenNeededMiddleware",
                               "boilerstrip.downloadermiddlewares.conditional.ConditionalRequestMiddleware",
                               "boilerstrip.downloadermiddlewares.warc.WarcWriterMiddleware"),
    "SPIDER_MIDDLEWARES": ("boilerstrip.spidermiddlewares.traps.TrapFilterMiddleware",),
}
_ROBOTS = "boilerstrip.downloadermiddlewares.robots.Rfc9309RobotsMiddleware"


def replay_settings(settings: Any, robots: bool) -> None:
    """Turn a crawl's settings into a replay's (see ``_REPLAY_SETTINGS``)."""
    for name, value in _REPLAY_SETTINGS.items():
        set_setting(settings, name, value, "cmdline")  # a params hook over the user's, field by field
    settings.set("ROBOTSTXT_OBEY", bool(robots), priority="cmdline")
    for name, paths in _LEFT_OUT.items():
        components = dict(settings.getdict(name))
        for path in (*paths, *(() if robots else (_ROBOTS,))):
            components[path] = None
        settings.set(name, components, priority="cmdline")


#: the names a folder's WARC files end with (a crawler's output folder: wget, Heritrix, Browsertrix)
_WARC_SUFFIXES = (".warc", ".warc.gz")


def warc_files(names: list[str]) -> list[str]:
    """The files ``names`` give: a folder stands for the WARC files under it (``_WARC_SUFFIXES``, any case,
    every level down, hidden folders left out), in path order; a folder without any is a usage error."""
    from boilerstrip import run as crawl
    from boilerstrip.cli import files_under

    out: list[str] = []
    for name in names:
        if not Path(name).is_dir():
            out.append(name)
            continue
        found = files_under(name, _WARC_SUFFIXES)
        if not found:
            raise crawl.UsageError(f"{name!r} is a folder without WARC files (names ending {', '.join(_WARC_SUFFIXES)})")
        out += found
    return out


def run(args: argparse.Namespace) -> int:
    from boilerstrip import run as crawl
    from boilerstrip.commands.crawl import check_output
    from boilerstrip.warc.read import not_a_warc

    prog = "boilerstrip warc"
    try:
        if not args.files:
            raise crawl.UsageError("no WARC file: boilerstrip warc FILE [FILE ...] -o OUT.jsonl")
        args.files = warc_files(args.files)
        for name in args.files:
            path = Path(name)
            if not path.is_file():
                raise crawl.UsageError(f"{name!r} is not a file")
            if not os.access(path, os.R_OK):
                raise crawl.UsageError(f"cannot read {name!r}: permission denied")
            problem = not_a_warc(path)
            if problem:
                raise crawl.UsageError(f"{name!r} is not a WARC file: {problem}")
        if args.state:
            crawl.check_state_dir(args.state)
        out = check_output(args.output)
        crawl_args = argparse.Namespace(
            urls=[_PLACEHOLDER], max_pages=None, max_depth=None, scope=None, no_sitemaps=True, state=args.state,
            profile=args.profile, drop_duplicates=args.drop_duplicates, trail=args.trail, changes_only=False,
            fields=args.fields, allow_private=[], settings=args.settings, log_level=args.log_level, resume=False)
        settings, _kwargs = crawl.build_settings(crawl_args, out)
    except crawl.UsageError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    replay_settings(settings, args.robots)
    out.parent.mkdir(parents=True, exist_ok=True)  # (every argument checked: check_output makes no folder)
    from boilerstrip.spiders.warc import WarcReplaySpider
    from boilerstrip.warc import build_index

    with tempfile.TemporaryDirectory(prefix=".boilerstrip-warc-index-", dir=out.parent) as folder:
        index_path = Path(folder) / "index.sqlite"

        def progress(rows: int) -> None:
            print(f"[boilerstrip] indexing: {rows} records", file=sys.stderr, flush=True)

        index = build_index([str(Path(f).resolve()) for f in args.files], index_path, progress=progress)
        summary = index.summary()
        for name, error in index.file_errors():
            print(f"{prog}: {name}: {error}", file=sys.stderr)
        files_failed = bool(index.file_errors())
        index.close()
        print(f"{prog}: {sum(summary.values())} records: " + ", ".join(f"{n} {k}" for k, n in sorted(summary.items()))
              + "; replaying the responses site by site", file=sys.stderr)
        code = crawl.crawl_and_finish(settings, {"index": str(index_path)}, out, spider_cls=WarcReplaySpider,
                                      prog=prog)
    return 1 if code == 0 and files_failed else code


#: the start URL the crawl's settings are built with (the replay has none)
_PLACEHOLDER = "http://warc.invalid/"
