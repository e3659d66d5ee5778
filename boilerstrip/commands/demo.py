"""``boilerstrip demo``: serve the bundled demo site on loopback and crawl it (or just serve it).

The site (``boilerstrip/demo/site/``, see :mod:`boilerstrip.demo.sitegen`) is served by
:class:`boilerstrip.demo.server.SiteServer` on 127.0.0.1 with a free port; the crawl uses the ``demo``
profile (the polite profile with 0.1 s delays) unless ``--profile`` says otherwise, and prints progress,
a summary and where the JSONL file is.
"""

from __future__ import annotations

import argparse
import sys
import time

from boilerstrip.commands.crawl import add_crawl_options, check_output
from boilerstrip.demo.server import SiteServer
from boilerstrip.demo.sitegen import SITE_DIR, build_site
from boilerstrip.run import UsageError, build_settings, crawl_and_finish

__all__ = ["HELP", "add_arguments", "run"]

HELP = "Crawl the bundled demo site (served on loopback) and write a JSONL file; --serve only serves it."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", default="out/demo.jsonl", metavar="OUT.jsonl",
                        help="the JSONL file to write (default out/demo.jsonl)")
    parser.add_argument("--serve", action="store_true", help="only serve the demo site until Ctrl-C")
    parser.add_argument("--port", default="0", metavar="PORT", help="port for --serve (default: a free one)")
    add_crawl_options(parser)


def _site() -> str:
    if not (SITE_DIR / "index.html").is_file():
        build_site()
    return str(SITE_DIR)


def run(args: argparse.Namespace) -> int:
    if args.serve:
        try:
            port = int(args.port)
        except ValueError:
            print(f"boilerstrip demo: --port expects a number, got {args.port!r}", file=sys.stderr)
            return 2
        with SiteServer(root=_site(), port=port) as server:
            print(f"boilerstrip demo: serving {SITE_DIR} at {server.url}/ (Ctrl-C to stop)", flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
    if args.profile is None:
        args.profile = "demo"
    with SiteServer(root=_site()) as server:
        args.urls = [server.url + "/"]
        try:
            out = check_output(args.output)
            settings, spider_kwargs = build_settings(args, out)
        except UsageError as exc:
            print(f"boilerstrip demo: {exc}", file=sys.stderr)
            return 2
        print(f"boilerstrip demo: crawling the demo site at {server.url}/ (profile {args.profile})", file=sys.stderr)
        status = crawl_and_finish(settings, spider_kwargs, out, prog="boilerstrip demo")
    if status == 0:
        print(f"boilerstrip demo: wrote {out}")
    return status
