"""How chunk sizes are counted: a word-count estimate by default, or a tokenizer the user has installed.

``words`` (the default) counts whitespace-separated words and multiplies by ``words_to_tokens`` (1.33, the
usual ratio for English prose under the BPE vocabularies of current embedding models, cl100k/o200k:
about 3 tokens per 4 words). Code and tables hold more tokens per word (punctuation splits), so the
estimate runs low on them; name a tokenizer when the limit is the model's hard one.

``tiktoken:ENCODING`` (e.g. ``tiktoken:cl100k_base``) uses the ``tiktoken`` package with an encoding
already in its local cache (``TIKTOKEN_CACHE_DIR``): it is never downloaded at run time. A path to a
Hugging Face ``tokenizer.json`` (or ``hf:PATH``) uses the ``tokenizers`` package. A tokenizer that is not
installed, not cached or not readable raises :class:`TokenizerError` with a message for the user.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TokenCounter", "TokenizerError", "load_token_counter", "word_counter", "DEFAULT_TOKENIZER"]

DEFAULT_TOKENIZER = "words"


class TokenizerError(ValueError):
    """The named tokenizer cannot be used (not installed, not cached, not a tokenizer file)."""


@dataclass(frozen=True)
class TokenCounter:
    """``count(text) -> tokens``; ``name`` is recorded with the chunk state (a new tokenizer gives new
    boundaries, so the chunks of every page are then new)."""

    name: str
    count: Callable[[str], int]


def word_counter(words_to_tokens: float) -> TokenCounter:
    def count(text: str) -> int:
        words = len(text.split())
        return int(words * words_to_tokens + 0.5) if words else 0

    return TokenCounter(f"words*{words_to_tokens:g}", count)


def _tiktoken(encoding: str) -> TokenCounter:
    try:
        import tiktoken
        import tiktoken.load as tiktoken_load
    except ImportError:
        raise TokenizerError("tokenizer tiktoken:%s: the tiktoken package is not installed "
                             "(pip install tiktoken, or use the default word estimate)" % encoding) from None
    fetch = tiktoken_load.read_file

    def offline(blobpath: str) -> bytes:  # reached only on a cache miss: refuse instead of downloading
        if "://" in blobpath:
            raise TokenizerError(f"tokenizer tiktoken:{encoding}: the encoding is not in tiktoken's local cache "
                                 f"(set TIKTOKEN_CACHE_DIR to a folder holding it); boilerstrip never downloads it")
        return fetch(blobpath)

    tiktoken_load.read_file = offline
    try:
        enc = tiktoken.get_encoding(encoding)
    except TokenizerError:
        raise
    except Exception as exc:  # an unknown encoding name: ValueError; a broken cache file: anything
        raise TokenizerError(f"tokenizer tiktoken:{encoding}: {exc}") from None
    finally:
        tiktoken_load.read_file = fetch

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    return TokenCounter(f"tiktoken:{encoding}", count)


def _hf(path: str) -> TokenCounter:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise TokenizerError(f"tokenizer {path}: the tokenizers package is not installed "
                             "(pip install tokenizers, or use the default word estimate)") from None
    file = Path(path).expanduser()
    if not file.is_file():
        raise TokenizerError(f"tokenizer {path}: no such file (expected a Hugging Face tokenizer.json)")
    try:
        tok = Tokenizer.from_file(str(file))
    except Exception as exc:
        raise TokenizerError(f"tokenizer {path}: not a tokenizer.json: {exc}") from None

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    return TokenCounter(f"hf:{file.name}", count)


def load_token_counter(spec: str, words_to_tokens: float) -> TokenCounter:
    """The counter ``spec`` names: ``words``, ``tiktoken:ENCODING``, ``hf:PATH`` or a ``.json`` path."""
    spec = spec.strip()
    if spec == DEFAULT_TOKENIZER:
        return word_counter(words_to_tokens)
    if spec.startswith("tiktoken:") and spec[len("tiktoken:"):]:
        return _tiktoken(spec[len("tiktoken:"):])
    if spec.startswith("hf:") and spec[len("hf:"):]:
        return _hf(spec[len("hf:"):])
    if spec.endswith(".json"):
        return _hf(spec)
    raise TokenizerError(f"unknown tokenizer {spec!r}: expected words, tiktoken:ENCODING, or a Hugging Face "
                         "tokenizer.json path")
