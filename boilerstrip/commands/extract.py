"""``boilerstrip extract FILE [FILE ...]``: the main content of saved HTML pages, without crawling.

Each FILE is plain or gzip (``.gz``, or gzip magic bytes) HTML; ``-`` reads standard input; a folder
stands for the HTML files under it (``*.html``, ``*.htm``, ``*.xhtml``, ``*.shtml``, each also ``.gz``; a
saved site or a ``wget -r`` mirror), in path order. The bytes are decoded by the page's own charset. ``--format jsonl`` (the default) prints one JSON object per file with
``path``, ``text``, ``title``, ``method`` and the rest of the result (metadata, ``attempts``, ``flags``,
``reason``); ``--format text`` / ``markdown`` print the content alone, files separated by a form feed line.
A file that cannot be read, or a folder without HTML files, is reported on stderr and in its JSON line
(``error``), and the exit status is 1.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import sys
import zlib

from boilerstrip.config import ConfigError, params_from_settings, unknown_settings
from boilerstrip.extraction import ExtractionParams, extract

HELP = "Print the main content of saved HTML files (plain or .gz; - for stdin; a folder for its HTML files)."

__all__ = ["HELP", "add_arguments", "run", "read_html_file", "html_files_in"]

_GZIP_MAGIC = b"\x1f\x8b"
#: the names a folder's HTML files end with (each also with ``.gz``)
_HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml")
#: Read at most this many bytes of a (decompressed) file: past the extractor's own input limit anyway.
_MAX_READ_BYTES = 64 * 1024 * 1024


def read_html_file(path: str) -> bytes:
    """The bytes of FILE (``-``: stdin), gunzipped when it is gzip. Raises OSError on unreadable files, and
    on a WARC file or a crawl's JSON lines (:func:`_other_kind`)."""
    if path == "-":
        data = sys.stdin.buffer.read(_MAX_READ_BYTES + 1)
    else:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_READ_BYTES + 1)
    if data[:2] == _GZIP_MAGIC:
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as archive:
                data = archive.read(_MAX_READ_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise OSError(f"not a valid gzip file: {exc}") from None
    other = _other_kind(data, path)
    if other is not None:
        raise OSError(other)
    return data


def _other_kind(data: bytes, path: str) -> str | None:
    """What a file given for a page is instead, when it is a WARC file or JSON lines; None otherwise. Either
    was read as the text of one page: a WARC's first record headers, a crawl's records as their JSON."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"WARC/1."):
        return f"a WARC file, not an HTML page: boilerstrip warc {path if path != '-' else 'FILE'} -o OUT.jsonl reads its pages"
    if head.startswith(b"{") and b'"url"' in head.split(b"\n", 1)[0]:
        return ("JSON lines (a crawl's records?), not an HTML page: each record's text and markdown fields hold "
                "its content already")
    return None


def html_files_in(folder: str) -> list[str]:
    """The HTML files under ``folder`` (``_HTML_SUFFIXES``, plain or ``.gz``, any case), every level down,
    hidden folders and files left out, in path order."""
    from boilerstrip.cli import files_under

    return files_under(folder, (*_HTML_SUFFIXES, *(f"{s}.gz" for s in _HTML_SUFFIXES)))


def _expanded(paths: list[str]) -> list[tuple[str, str | None]]:
    """(path, error) for each file the arguments name: a folder becomes its HTML files
    (:func:`html_files_in`), or one entry with an error when it holds none."""
    out: list[tuple[str, str | None]] = []
    for path in paths:
        if path != "-" and os.path.isdir(path):
            files = html_files_in(path)
            out += [(f, None) for f in files] or [(path, f"no HTML files in this folder (names ending "
                                                          f"{', '.join(_HTML_SUFFIXES)}, or .gz)")]
        else:
            out.append((path, None))
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="HTML file, plain or .gz; - for stdin; a folder for the HTML files under it")
    parser.add_argument(
        "--format", choices=("jsonl", "text", "markdown"), default="jsonl",
        help="jsonl (default): one object a file, with its path, text, markdown and metadata; text or markdown: "
             "the content alone, files separated by a form feed line",
    )
    parser.add_argument("--url", default=None, help="the page's URL (resolves a relative canonical link)")
    parser.add_argument(
        "--method",
        choices=("auto", "semantic", "density", "bodytext"),
        default=None,
        help="run one rung only (default: auto, the whole ladder)",
    )
    parser.add_argument(
        "-s", "--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
        help="a BOILERSTRIP_EXTRACTION_* setting (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    settings: dict[str, str] = {}
    for pair in args.settings:
        name, sep, value = pair.partition("=")
        if not sep:
            print(f"boilerstrip extract: -s expects NAME=VALUE, got {pair!r}", file=sys.stderr)
            return 2
        settings[name.strip()] = value
    overrides = {"method": args.method} if args.method else {}
    problems = unknown_settings(settings)  # a typo or a former setting is not silently ignored
    if problems:
        print(f"boilerstrip extract: {'; '.join(problems)}", file=sys.stderr)
        return 2
    try:
        params = params_from_settings(settings, "extraction", ExtractionParams, **overrides)
    except ConfigError as exc:
        print(f"boilerstrip extract: {exc}", file=sys.stderr)
        return 2
    from boilerstrip.cli import is_url

    for path in args.files:
        if is_url(path) and not os.path.exists(path):
            print(f"boilerstrip extract: {path!r} is a URL; extract reads saved pages (curl -s {path} | boilerstrip "
                  f"extract - --url {path}), crawl fetches them (boilerstrip crawl {path} -o OUT.jsonl)",
                  file=sys.stderr)
            return 2
    status = 0
    out = sys.stdout
    for index, (path, error) in enumerate(_expanded(args.files)):
        try:
            if error is not None:
                raise OSError(error)
            data = read_html_file(path)
        except OSError as exc:
            print(f"boilerstrip extract: {path}: {exc}", file=sys.stderr)
            status = 1
            if args.format == "jsonl":
                out.write(json.dumps({"path": path, "error": str(exc)}, ensure_ascii=False) + "\n")
            continue
        result = extract(data, url=args.url, params=params)
        if args.format == "jsonl":
            record = {"path": path}
            record.update(result.to_dict())
            if not record.get("text") and result.reason:
                print(f"boilerstrip extract: {path}: no content ({result.reason})", file=sys.stderr)
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            if index:
                out.write("\f\n")
            body = result.text if args.format == "text" else result.markdown
            out.write(body + ("\n" if body else ""))
    out.flush()
    return status


if __name__ == "__main__":  # pragma: no cover
    parser = argparse.ArgumentParser(prog="boilerstrip extract", description=HELP)
    add_arguments(parser)
    raise SystemExit(run(parser.parse_args()))
