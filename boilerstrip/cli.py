"""The ``boilerstrip`` command: a thin dispatcher over ``boilerstrip.commands.<name>``.

Each command module exposes ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``.
Bad arguments exit with status 2 and a one-line message, as argparse does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
import threading
from pathlib import Path

from boilerstrip import __version__
from boilerstrip.atomicfile import OutputBusy

__all__ = ["main", "COMMANDS"]

#: command name -> module under boilerstrip.commands
COMMANDS = {
    "crawl": "crawl",
    "demo": "demo",
    "extract": "extract",
    "dedup": "dedup",
    "worker": "worker",
    "export": "export",
    "check": "check",
    "schedule": "schedule",
    "chunk": "chunk",
    "warc": "warc",
}


#: the options that name a file or folder on this machine, by argparse ``dest`` (``--state`` is not one of them:
#: it may be a ``redis://`` URL; nor export's ``--index``, which another ``--index-backend`` may take as one:
#: the export command checks it for its default backend)
LOCAL_PATHS = ("output", "html", "json", "report", "chunks", "warc")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(value: str) -> bool:
    """Does ``value`` start like a URL (``scheme://``), not a path on this machine?"""
    return bool(_URL.match(value))


def url_given_as_path(args: argparse.Namespace, dests: tuple[str, ...] = LOCAL_PATHS) -> str | None:
    """The message for a URL passed where a local path belongs (``boilerstrip crawl URL -o URL``, a second
    start URL typed after ``-o``), or None. Without this check the URL became a folder ``http:/host/``."""
    for dest in dests:
        value = getattr(args, dest, None)
        if isinstance(value, str) and is_url(value):
            option = "-o" if dest == "output" else f"--{dest}"
            return (f"{option} {value!r} is a URL; it takes a path on this machine "
                    "(start URLs go before -o: boilerstrip crawl URL [URL ...] -o OUT.jsonl)")
    return None


#: file names a tool would take for compressed: a JSONL output under one of them would be plain text
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zip")
#: output names Scrapy's ``-o`` reads as another format (``-o items.json`` is one JSON array there): a JSON
#: lines output so named would not be what its name says
_OTHER_FORMATS = {".json": "one JSON array", ".csv": "CSV", ".xml": "XML", ".pickle": "pickle", ".marshal": "marshal"}


def files_under(folder: str, suffixes: tuple[str, ...]) -> list[str]:
    """The files under ``folder`` whose names end with one of ``suffixes`` (lower case; matched in any case),
    every level down, hidden files and folders (a ``.git``) left out, in path order: what a folder given
    for files stands for (``extract DIR``, ``warc DIR``)."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        out += [os.path.join(root, f) for f in files if not f.startswith(".") and f.lower().endswith(suffixes)]
    return sorted(out)


def _as_jsonl(path: Path) -> Path:
    """``path`` named ``.jsonl``: ``out.json`` -> ``out.jsonl``, ``out.jsonl.csv`` -> ``out.jsonl``."""
    return path.with_suffix("") if path.stem.lower().endswith(".jsonl") else path.with_suffix(".jsonl")


def wrong_kind_of_path(args: argparse.Namespace) -> str | None:
    """The message for an existing file given where a folder belongs, or a folder where a file belongs, or
    None. What each option takes is its metavar: ``DIR`` a folder, a name with a suffix (``OUT.jsonl``,
    ``REPORT.html``) a file; a JSONL output named as compressed (``out.jsonl.gz``) is refused too, as it would
    hold plain text. Without this check the command did its work, then failed on its last rename
    ("[Errno 21] Is a directory", exit 1); URLs (a ``redis://`` state) are not paths and are left alone."""
    sub = getattr(args, "_parser", None)  # the command's own parser (build_parser)
    for action in sub._actions if sub is not None else ():
        value, metavar = getattr(args, action.dest, None), action.metavar
        if not isinstance(value, str) or not isinstance(metavar, str) or not action.option_strings or is_url(value):
            continue
        path = Path(value).expanduser()
        option = "-o" if action.dest == "output" else max(action.option_strings, key=len)
        suffix = next((s for s in _COMPRESSED if value.lower().endswith(s)), None)
        if metavar.endswith(".jsonl") and suffix is not None:
            return (f"{option} {value!r} names a compressed file, and the records are written as plain JSON lines; "
                    f"write {value[:-len(suffix)]!r} and compress it afterwards")
        other = _OTHER_FORMATS.get(path.suffix.lower())
        if metavar.endswith(".jsonl") and other is not None:
            return (f"{option} {value!r} names {other} (as Scrapy's -o reads it), and the records are written as "
                    f"JSON lines, one object a line; name it {str(_as_jsonl(path))!r}")
        if metavar == "DIR" and path.is_file():
            return f"{option} {value!r} is a file; it expects a folder"
        if "." in metavar and path.is_dir():
            return f"{option} {value!r} is a directory; it expects a file path ({metavar})"
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only``: with that command's module alone imported (the one being run:
    the other nine cost 75 ms of every run's start)."""
    parser = argparse.ArgumentParser(
        prog="boilerstrip",
        description="Crawl a site politely and keep only the real content of every page.",
    )
    parser.add_argument("--version", action="version", version=f"boilerstrip {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(f"boilerstrip.commands.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"boilerstrip.commands.{module_name}":
                raise
            continue  # a command still being built is simply not offered
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(_run=module.run, _parser=command)
    return parser


def _command_named(argv: list[str]) -> str | None:
    """The command ``argv`` runs when its first word is one (``boilerstrip crawl ...``), else None: ``--help``,
    ``--version`` or a mistyped command get the whole parser (its list of commands, its error message)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


class Terminated(SystemExit):
    """SIGTERM (``kill``, ``systemctl stop``, a scheduler's stop): raised where the command stands, so its
    cleanup runs (temporary files, an export's unfinished shards, a half-written output) as on Ctrl-C."""


def _terminated(signum: int, frame: object = None) -> None:
    raise Terminated(128 + signum)


def _terminate_cleanly() -> object:
    """SIGTERM ends a command the way Ctrl-C does (:class:`Terminated`), instead of killing it where it
    stands and leaving its temporary files behind. A command with a stop of its own (a crawl, the scheduler,
    a worker) installs its handler over this one; an inherited "ignore" is kept. Returns the handler before
    (None: nothing changed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    before = signal.getsignal(signal.SIGTERM)
    if before is signal.SIG_IGN:
        return None
    signal.signal(signal.SIGTERM, _terminated)
    return before


def main(argv: list[str] | None = None) -> int:
    before = _terminate_cleanly()
    try:
        return _main(argv)
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _main(argv: list[str] | None) -> int:
    command = "?"
    try:  # the commands are imported here: a Ctrl-C during those first moments ends as quietly as a later one
        args = build_parser(_command_named(sys.argv[1:] if argv is None else argv)).parse_args(argv)
        command = args.command
        wrong = url_given_as_path(args) or wrong_kind_of_path(args)
        if wrong is not None:
            print(f"boilerstrip {command}: {wrong}", file=sys.stderr)
            return 2
        return int(args._run(args) or 0)
    except OutputBusy as exc:  # another run holds the output's lock (crawl, dedup, chunk, export...)
        print(f"boilerstrip {command}: {exc}; nothing written", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{_named(command)}: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"{_named(command)}: terminated", file=sys.stderr)
        return int(exc.code)


def _named(command: str) -> str:
    """How a line of ``command`` begins (``boilerstrip`` alone before the arguments were read)."""
    return "boilerstrip" if command == "?" else f"boilerstrip {command}"


if __name__ == "__main__":
    sys.exit(main())
