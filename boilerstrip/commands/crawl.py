"""``boilerstrip crawl URL [URL ...] -o OUT.jsonl``: crawl each site politely, one JSON line per page.

Arguments are checked before anything starts (URL schemes, numbers, profile name, ``-s`` syntax, an
output folder we can write to): a bad one prints one line to stderr and exits 2. The crawl itself runs
the ``site`` spider in a ``CrawlerProcess`` with the project settings, the profile below them and ``-s``
values above them. Exit status: 0 when the crawl finished, 1 when it stopped early or could not start,
3 when the ledger does not reconcile (a URL unaccounted for or settled twice), 5 when it finished but
pages that needed a browser did not get a whole render (``RENDER_MISSED_EXIT``), 6 when it finished but gave
up on a host that stopped answering (``HOSTS_DOWN_EXIT``).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from boilerstrip.chunks import ChunkParams, word_counter
from boilerstrip.commands.chunk import run_chunks
from boilerstrip.config import params_from_settings
from boilerstrip.distributed.command import crawl_distributed, redis_problem
from boilerstrip.ledger import finished_run, run_status
from boilerstrip.recrawl import RecrawlParams
from boilerstrip.run import (
    HOSTS_DOWN_EXIT,
    RENDER_MISSED_EXIT,
    UsageError,
    build_settings,
    check_state_dir,
    count_option,
    crawl_and_finish,
    hosts_down_of,
    note_early_signals,
    output_lock,
)
from boilerstrip.safety.addresses import address_refusal, parse_ip_literal
from boilerstrip.state import StateParams, crawl_layout, resolve_state_dir


__all__ = ["HELP", "add_arguments", "add_crawl_options", "add_urls_option", "run", "complete_bare_hosts", "check_output",
           "start_urls_of"]

HELP = "Crawl one or more sites politely and write one JSON line per page."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urls", nargs="*", metavar="URL", help="start URL(s); each one's site is crawled")
    parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="the JSONL file to write (overwritten)")
    add_urls_option(parser)
    parser.add_argument("--state", metavar="DIR", help="the state folder a recurring crawl remembers its pages in "
                        "(BOILERSTRIP_STATE_DIR; default: .boilerstrip-state next to the output)")
    add_crawl_options(parser)
    parser.add_argument("--chunks", metavar="CHUNKS.jsonl",
                        help="after the finishing pass, also cut the pages into chunks for retrieval, each new, "
                             "unchanged or removed against the last crawl with the same state folder "
                             "(boilerstrip chunk with its default sizes, docs/chunks.md)")
    parser.add_argument("--warc", metavar="DIR", help="also keep every request and response as WARC/1.1 files in DIR "
                        "(BOILERSTRIP_WARC_DIR; read back with boilerstrip warc, docs/warc.md)")
    parser.add_argument("--warc-max-bytes", metavar="N", help="start a new WARC file once one holds N bytes "
                        "(max_file_bytes of BOILERSTRIP_WARC_PARAMS; default 1000000000)")
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


def add_urls_option(parser: argparse.ArgumentParser) -> None:
    """``--urls FILE``, shared with ``boilerstrip schedule add``."""
    parser.add_argument("--urls", dest="url_files", action="append", default=[], metavar="FILE",
                        help="also the start URLs listed in FILE, one a line (blank lines and # comments skipped; "
                             "- for stdin; repeatable)")


# -- checks ----------------------------------------------------------------------------------------------
#: a host name or address with an optional port and path, and no scheme: ``example.org``, ``docs.example.org/guide``
_BARE_HOST = re.compile(r"^(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?:[/?#]\S*)?$")


def start_urls_of(args: argparse.Namespace) -> list[str]:
    """The start URLs of the command line: its URL arguments, then those of each ``--urls`` file, each once. UsageError
    for a file that cannot be read or lists no URL, naming it."""
    urls = list(args.urls or ())
    for name in getattr(args, "url_files", None) or ():
        urls += _listed_urls(name)
    return list(dict.fromkeys(urls))  # a URL listed twice is one start URL


def _listed_urls(name: str) -> list[str]:
    """The URLs a ``--urls`` file lists: one a line, blank lines and lines starting with # left out."""
    if "://" in name:
        raise UsageError(f"--urls {name!r} is a URL; it takes a file on this machine (start URLs go as arguments)")
    try:
        if name == "-":
            text = sys.stdin.read()
        else:
            text = Path(name).expanduser().read_text(encoding="utf-8-sig")
    except IsADirectoryError:
        raise UsageError(f"--urls {name!r} is a folder: expected a file of URLs, one a line") from None
    except OSError as exc:
        raise UsageError(f"--urls {name!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--urls {name!r} is not UTF-8 text: expected a file of URLs, one a line") from None
    urls = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if any(character.isspace() for character in line):
            raise UsageError(f"--urls {name!r}, line {number}: expected one URL a line, got {line[:120]!r}")
        urls.append(line)
    if not urls:
        raise UsageError(f"--urls {name!r} lists no URL (one a line; blank lines and # comments are skipped)")
    return urls


def complete_bare_hosts(urls: list[str]) -> tuple[list[str], list[str]]:
    """(the start URLs with a scheme put before a bare host; one note per URL so completed). ``https://`` as
    trafilatura does (``example.org`` -> ``https://example.org``), except for a machine of the local
    network, where a development server rarely speaks TLS: ``localhost:8000``, ``127.0.0.1:8080`` and a
    private address get ``http://`` (``https://localhost:8000`` ended as robots_unreachable after a minute).
    Anything with a scheme is left as it is."""
    done: list[str] = []
    notes: list[str] = []
    for url in urls:
        text = str(url).strip()
        if "://" not in text and _BARE_HOST.match(text):
            if Path(text).expanduser().is_file():
                # "crawl urls.txt" crawled https://urls.txt/ (a minute of DNS retries, then robots_unreachable)
                raise UsageError(f"{text!r} is a file here, not a site: to crawl the URLs it lists, pass --urls "
                                 f"{text} (or write the site as https://{text}/)")
            local = _is_local_host(text)
            scheme = "http" if local else "https"
            done.append(f"{scheme}://{text}")
            why = " (a local address; write https:// for TLS)" if local else ""
            notes.append(f"note: {text!r} has no scheme: crawling {scheme}://{text}{why}")
        else:
            done.append(url)
    return done, notes


def _is_local_host(bare: str) -> bool:
    """Is the host of ``bare`` (a URL without its scheme) this machine or its local network: ``localhost``,
    a ``*.localhost`` name, or a loopback, private or link-local address?"""
    host = urlsplit(f"//{bare}").hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    return parse_ip_literal(host) is not None and address_refusal(host) is not None


def check_output(path: str | None) -> Path:
    """The output path, resolved, after proving its folder is writable. A missing folder is not made here
    (the run makes it once every argument is checked: a bad setting after -o left an empty folder behind);
    the nearest folder that exists must be one this user can write in."""
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
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"cannot write to {str(folder)!r}: {str(existing)!r} is a file, not a folder")
    if existing != folder:
        try:  # a folder can be made there (a probe, removed at once: os.access says yes to root under /proc)
            os.rmdir(tempfile.mkdtemp(prefix=".boilerstrip-probe-", dir=existing))
        except OSError as exc:
            raise UsageError(f"cannot write to {str(folder)!r}: cannot make folders in {str(existing)!r} "
                             f"({exc.strerror or exc})") from None
        return out.resolve()
    try:
        fd, probe = tempfile.mkstemp(prefix=".boilerstrip-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"cannot write to {str(folder)!r}: {exc.strerror or exc}") from None
    if out.exists() and not os.access(out, os.W_OK):
        raise UsageError(f"cannot overwrite {str(out)!r}: permission denied")
    return out.resolve()


def run(args: argparse.Namespace) -> int:
    note_early_signals()
    try:
        args.urls = start_urls_of(args)
        if not args.urls:
            raise UsageError("no start URL: boilerstrip crawl URL [URL ...] -o OUT.jsonl (or --urls FILE)")
        from boilerstrip.spiders.site import parse_start_urls  # Scrapy: loaded for a crawl, not for the CLI's parser

        args.urls, notes = complete_bare_hosts(list(args.urls))
        for note in notes:
            print(f"boilerstrip crawl: {note}", file=sys.stderr)
        try:
            parse_start_urls(args.urls)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if getattr(args, "state", None):
            check_state_dir(args.state)  # before the output's folder is made
        if getattr(args, "redis", None) and (problem := redis_problem(args.redis)) is not None:
            raise UsageError(problem)  # before the output's folder is made too
        out = check_output(args.output)
        settings, spider_kwargs = build_settings(args, out)
        workers = count_option(getattr(args, "workers", None), "--workers", 0)
        if workers is not None and not getattr(args, "redis", None):
            raise UsageError("--workers needs --redis redis://HOST:PORT/DB")
        chunks = check_chunks_output(getattr(args, "chunks", None), out)
    except UsageError as exc:
        print(f"boilerstrip crawl: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "resume", False):
        manifest = finished_run(out)
        if manifest is not None:  # a finished run has nothing to resume: its output and reports stay as they are
            print(f"boilerstrip crawl: {out} finished at {manifest.get('finished_at', '?')}: nothing to resume; "
                  "its records, ledger, manifest and change report are left as they were "
                  "(run without --resume for a new crawl)", file=sys.stderr)
            status = run_status(out)
            down, failed = hosts_down_of(manifest)
            if down and status == 0:  # that run's status, and what fetches the rest
                print(f"boilerstrip crawl: that run gave up on a host that stopped answering ({failed} page(s) failed "
                      "as host_down): run without --resume to fetch them", file=sys.stderr)
                return HOSTS_DOWN_EXIT
            return status
        layout = crawl_layout(out)
        if not getattr(args, "redis", None) and not any(p.exists() for p in (layout.part, layout.ledger_journal, layout.final)):
            # (a typo in -o looked like a resumed crawl that had started over)
            print(f"boilerstrip crawl: note: no crawl to resume at {out} (no {layout.part.name}): starting a new one",
                  file=sys.stderr)
    if getattr(args, "redis", None):
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the coordinator's own handling, as before
        signal.signal(signal.SIGTERM, _terminated_as_interrupted)

        with output_lock(out):  # another run on this output: OutputBusy, exit 2 (cli)
            code = crawl_distributed(args, settings, out, 1 if workers is None else workers)
    else:
        code = crawl_and_finish(settings, spider_kwargs, out)
    if code in (0, RENDER_MISSED_EXIT, HOSTS_DOWN_EXIT) and chunks is not None:  # the records are complete: chunk them
        return chunk_crawl(out, chunks, settings) or code
    return code


def _terminated_as_interrupted(signum: int, frame: Any = None) -> None:
    """The coordinator of a distributed crawl stops on a SIGTERM (``kill``, ``systemctl stop``) as on a
    Ctrl-C: its workers told to stop, the manifest written (``shutdown``), exit 1, the crawl left in Redis
    for ``--resume``. Before, SIGTERM killed it where it stood, with no manifest. A second one kills it."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt


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
    state_dir = params_from_settings(settings, "state", StateParams).dir
    state = None if "://" in state_dir else resolve_state_dir(state_dir, out)
    # --changes-only: the output leaves unchanged pages out (their chunks are kept), and the chunks file
    # holds only what an index must add or delete, as the records file holds only what changed
    changes_only = params_from_settings(settings, "recrawl", RecrawlParams).changes_only and state is not None
    params = ChunkParams()
    return run_chunks(out, chunks, params, word_counter(params.words_to_tokens), str(state) if state else None,
                      changes_only=changes_only, partial=changes_only, prog="boilerstrip crawl")
