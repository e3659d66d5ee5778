"""``boilerstrip chunk OUT.jsonl -o chunks.jsonl [--state DIR] [--changes-only]``: chunks for retrieval.

Argument parsing around :func:`boilerstrip.chunks.run.chunk_file` (docs/chunks.md). Exit status: 0 done;
1 the input or the output could not be read or written midway; 2 a bad argument, a tokenizer that is not
installed, or an input that is missing or not a crawl's records (said what it looks like instead, as
``check`` and ``export`` say it; nothing is written then, the state is untouched).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

from boilerstrip.finishing.steps import ProgressTicker

HELP = "Cut a crawl's pages into chunks for retrieval, with IDs that survive a recrawl (--state: new/unchanged/removed)."

__all__ = ["HELP", "add_arguments", "run", "add_chunk_options", "chunk_settings", "run_chunks", "ChunkUsageError"]


class ChunkUsageError(ValueError):
    """A bad chunk option; the message is one line for the user."""


def add_chunk_options(parser: argparse.ArgumentParser | Any) -> None:
    """The sizing options, shared with ``boilerstrip crawl --chunks``."""
    from boilerstrip.chunks import DEFAULT_TOKENIZER, ChunkParams

    defaults = ChunkParams()
    parser.add_argument("--target-tokens", type=int, default=defaults.target_tokens, metavar="N",
                        help=f"the size chunks come out at, about (default {defaults.target_tokens})")
    parser.add_argument("--max-tokens", type=int, default=defaults.max_tokens, metavar="N",
                        help=f"no chunk is larger, except one code block, table row or list item that is "
                             f"(flagged oversize) (default {defaults.max_tokens})")
    parser.add_argument("--min-tokens", type=int, default=defaults.min_tokens, metavar="N",
                        help=f"no boundary before a chunk holds this much (default {defaults.min_tokens})")
    parser.add_argument("--tokenizer", default=DEFAULT_TOKENIZER, metavar="SPEC",
                        help="count tokens with: words (default: words x --words-to-tokens), "
                             "tiktoken:ENCODING (cached locally), or a Hugging Face tokenizer.json path")
    parser.add_argument("--words-to-tokens", type=float, default=defaults.words_to_tokens, metavar="R",
                        help=f"tokens per word of the words estimate (default {defaults.words_to_tokens})")


def chunk_settings(args: argparse.Namespace) -> tuple[Any, Any]:
    """(ChunkParams, TokenCounter) of checked options; raises ChunkUsageError."""
    from boilerstrip.chunks import ChunkParams, TokenizerError, load_token_counter

    try:
        params = ChunkParams(target_tokens=args.target_tokens, max_tokens=args.max_tokens,
                             min_tokens=args.min_tokens, words_to_tokens=args.words_to_tokens)
        counter = load_token_counter(args.tokenizer, params.words_to_tokens)
    except (ValueError, TokenizerError) as exc:
        raise ChunkUsageError(str(exc)) from None
    return params, counter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="CRAWL.jsonl", help="records written by boilerstrip crawl (or dedup)")
    parser.add_argument("-o", "--output", required=True, metavar="CHUNKS.jsonl", help="where to write the chunks")
    parser.add_argument("--state", metavar="DIR", default=None,
                        help="remember the chunk IDs here (chunks.sqlite3) and report each chunk new, unchanged "
                             "or removed against the last run with the same DIR")
    parser.add_argument("--changes-only", action="store_true",
                        help="with --state: write only what an index must add (new) or delete (removed)")
    parser.add_argument("--partial", action="store_true",
                        help="the input holds only some pages (e.g. a --changes-only crawl, found from its "
                             "manifest by itself): a page missing from it keeps its chunks")
    add_chunk_options(parser)


def run(args: argparse.Namespace) -> int:
    try:
        params, counter = chunk_settings(args)
        if args.changes_only and not args.state:
            raise ChunkUsageError("--changes-only needs --state DIR (changes are against the last run's chunks)")
        if args.partial and not args.state:
            raise ChunkUsageError("--partial needs --state DIR")
        in_path, out_path = Path(args.input), Path(args.output)
        if out_path.exists() and out_path.is_dir():
            raise ChunkUsageError(f"output {str(out_path)!r} is a directory, expected a file path")
        if in_path.exists() and out_path.exists() and in_path.resolve() == out_path.resolve():
            raise ChunkUsageError("the output is the input: write the chunks to another file")
    except ChunkUsageError as exc:
        print(f"boilerstrip chunk: {exc}", file=sys.stderr)
        return 2
    from boilerstrip.finishing.base import refused_records_input

    if refused_records_input(in_path, "boilerstrip chunk", "; nothing written"):
        return 2
    from boilerstrip.atomicfile import output_lock

    with output_lock(out_path):  # one run at a time writes OUTPUT (busy: OutputBusy, exit 2)
        return run_chunks(in_path, out_path, params, counter, args.state, args.changes_only, args.partial)


def run_chunks(in_path: Path, out_path: Path, params: Any, counter: Any, state: str | None,
               changes_only: bool = False, partial: bool = False, prog: str = "boilerstrip chunk") -> int:
    """Chunk a checked input; print the summary; the exit status. Also what ``crawl --chunks`` runs."""
    from boilerstrip.chunks.records import NotCrawlRecord
    from boilerstrip.chunks.run import RunParams, chunk_file, input_is_partial
    from boilerstrip.chunks.store import SqliteChunkStore

    found_partial = bool(state) and not partial and input_is_partial(in_path)
    run_params = RunParams(chunks=params, changes_only=changes_only, partial=partial or found_partial)
    from boilerstrip.finishing.base import count_lines
    from boilerstrip.finishing.steps import PassProgress

    store = None
    # a line every few seconds while it runs (100,000 pages take a minute)
    progress = PassProgress(total=count_lines(in_path), phase="reading records", label="chunk")
    ticker = ProgressTicker(progress)
    try:
        if state:
            store = SqliteChunkStore(Path(state).expanduser())
        summary = chunk_file(in_path, out_path, run_params, counter, store, progress)
    except NotCrawlRecord as exc:
        print(f"{prog}: {in_path} is not a crawl's records ({exc}); nothing written", file=sys.stderr)
        return 2
    except (OSError, UnicodeError, sqlite3.Error) as exc:
        print(f"{prog}: cannot chunk {in_path} -> {out_path}: {exc}", file=sys.stderr)
        return 1
    finally:
        ticker.stop()
        if store is not None:
            store.close()
    flags = ", ".join(f"{n} {flag}" for flag, n in sorted(summary["flags"].items()))
    print(f"{prog}: {summary['pages']} pages, {summary['chunks']} chunks"
          + (f" ({flags})" if flags else "") + f", {summary['written']} records -> {summary['out']}", file=sys.stderr)
    if "changes" in summary:
        changes = summary["changes"]
        print(f"{prog}: chunk changes: {changes['new']} new, {changes['unchanged']} unchanged, "
              f"{changes['removed']} removed" + (" (input is partial: missing pages kept)" if run_params.partial else ""),
              file=sys.stderr)
        if summary.get("recipe_changed"):
            print(f"{prog}: the chunk sizes or tokenizer differ from the last run's: every chunk is new",
                  file=sys.stderr)
        for site, n in sorted((summary.get("kept_missing") or {}).items()):
            print(f"{prog}: WARNING: {n} known pages of {site} are missing from the input, more than "
                  f"{run_params.max_vanished_share:.0%} of the site: their chunks are kept (a broken crawl?)",
                  file=sys.stderr)
    return 0
