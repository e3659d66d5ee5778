"""Gopher-style quality signals of a text (Rae et al. 2021; datatrove's Gopher filters compute the same).

:func:`quality_signals` returns plain numbers; :func:`gopher_failures` compares them with
:class:`~boilerstrip.export.params.GopherParams`. Pure Python, one pass per measure, no tokenizer download.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .params import GopherParams

__all__ = ["QUALITY_FIELDS", "quality_signals", "gopher_failures"]

#: Gopher's English stop words (a document with fewer than 2 of them is rarely prose)
_STOP_WORDS = frozenset(("the", "be", "to", "of", "and", "that", "have", "with"))
_BULLETS = ("\u2022", "\u2023", "\u25b6", "\u25cf", "\u25e6", "\u25aa", "\u25ab", "\u2013", "\u2014",
            "-", "*", "\u00b7", "\u2043", "\u25a0", "\u25a1", "\u27a2")
_ELLIPSES = ("...", "\u2026")
#: stripped from both ends of a word before it is counted: ASCII punctuation, typographic quotes, bullets
_PUNCT_STRIP = string.punctuation + "\u201c\u201d\u2018\u2019\u00ab\u00bb\u2026" + "".join(_BULLETS)
_PARAGRAPH_RE = re.compile(r"\n\s*\n")
_TOP_NGRAMS = (2, 3, 4)

#: the signals, in the order the export writes them (their names are the Parquet struct's fields)
QUALITY_FIELDS = (
    "words", "mean_word_length", "symbol_word_ratio", "lines_ending_ellipsis_fraction",
    "lines_starting_bullet_fraction", "alpha_words_fraction", "stop_words",
    "duplicate_line_fraction", "duplicate_line_char_fraction", "duplicate_paragraph_fraction",
    "duplicate_paragraph_char_fraction", "top_2gram_char_fraction", "top_3gram_char_fraction",
    "top_4gram_char_fraction",
)


def _duplicates(parts: list[str]) -> tuple[float, float]:
    """(share of parts that repeat an earlier one, share of characters in those repeats)."""
    if not parts:
        return 0.0, 0.0
    seen: set[str] = set()
    dup_count = dup_chars = total_chars = 0
    for part in parts:
        total_chars += len(part)
        if part in seen:
            dup_count += 1
            dup_chars += len(part)
        else:
            seen.add(part)
    return dup_count / len(parts), (dup_chars / total_chars if total_chars else 0.0)


def _top_ngram_char_fraction(words: list[str], n: int, total_chars: int) -> float:
    """Characters covered by the most frequent word n-gram, as a share of all word characters."""
    if len(words) < n or not total_chars:
        return 0.0
    counts = Counter(zip(*(words[i:] for i in range(n))))
    gram, count = counts.most_common(1)[0]
    if count < 2:
        return 0.0
    return min(1.0, sum(len(w) for w in gram) * count / total_chars)


def quality_signals(text: str) -> dict[str, Any]:
    """The Gopher signals of ``text`` (fractions in [0, 1], rounded to 4 places)."""
    raw_words = text.split()
    words = [w.strip(_PUNCT_STRIP) for w in raw_words]
    words = [w for w in words if w]
    n_words = len(words)
    word_chars = sum(len(w) for w in words)
    lines = [line.strip() for line in text.split("\n")]
    lines = [line for line in lines if line]
    paragraphs = [p.strip() for p in _PARAGRAPH_RE.split(text) if p.strip()]
    symbols = text.count("#") + sum(text.count(e) for e in _ELLIPSES)
    lowered = [w.lower() for w in words]
    dup_lines, dup_line_chars = _duplicates(lines)
    dup_paras, dup_para_chars = _duplicates(paragraphs)
    signals: dict[str, Any] = {
        "words": n_words,
        "mean_word_length": word_chars / n_words if n_words else 0.0,
        "symbol_word_ratio": symbols / n_words if n_words else 0.0,
        "lines_ending_ellipsis_fraction": (sum(1 for line in lines if line.endswith(_ELLIPSES)) / len(lines)
                                           if lines else 0.0),
        "lines_starting_bullet_fraction": (sum(1 for line in lines if line.startswith(_BULLETS)) / len(lines)
                                           if lines else 0.0),
        "alpha_words_fraction": (sum(1 for w in words if any(c.isalpha() for c in w)) / n_words
                                 if n_words else 0.0),
        "stop_words": sum(1 for w in lowered if w in _STOP_WORDS),
        "duplicate_line_fraction": dup_lines,
        "duplicate_line_char_fraction": dup_line_chars,
        "duplicate_paragraph_fraction": dup_paras,
        "duplicate_paragraph_char_fraction": dup_para_chars,
    }
    for n in _TOP_NGRAMS:
        signals[f"top_{n}gram_char_fraction"] = _top_ngram_char_fraction(lowered, n, word_chars)
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in signals.items()}


def gopher_failures(signals: Mapping[str, Any], params: GopherParams, language: str | None = None) -> list[str]:
    """The Gopher rules ``signals`` fail, as reasons (``gopher_too_few_words``...); [] = passes."""
    p = params
    checks = [
        ("gopher_too_few_words", signals["words"] < p.min_words),
        ("gopher_too_many_words", signals["words"] > p.max_words),
        ("gopher_mean_word_length", not p.min_mean_word_length <= signals["mean_word_length"] <= p.max_mean_word_length),
        ("gopher_symbol_word_ratio", signals["symbol_word_ratio"] > p.max_symbol_word_ratio),
        ("gopher_bullet_lines", signals["lines_starting_bullet_fraction"] > p.max_bullet_lines_fraction),
        ("gopher_ellipsis_lines", signals["lines_ending_ellipsis_fraction"] > p.max_ellipsis_lines_fraction),
        ("gopher_alpha_words", signals["alpha_words_fraction"] < p.min_alpha_words_fraction),
        ("gopher_stop_words", language == "en" and signals["stop_words"] < p.min_stop_words),
        ("gopher_duplicate_lines", signals["duplicate_line_fraction"] > p.max_duplicate_line_fraction),
        ("gopher_duplicate_paragraphs", signals["duplicate_paragraph_fraction"] > p.max_duplicate_paragraph_fraction),
        ("gopher_duplicate_line_chars", signals["duplicate_line_char_fraction"] > p.max_duplicate_line_char_fraction),
        ("gopher_duplicate_paragraph_chars",
         signals["duplicate_paragraph_char_fraction"] > p.max_duplicate_paragraph_char_fraction),
        ("gopher_top_2gram", signals["top_2gram_char_fraction"] > p.max_top_2gram_char_fraction),
        ("gopher_top_3gram", signals["top_3gram_char_fraction"] > p.max_top_3gram_char_fraction),
        ("gopher_top_4gram", signals["top_4gram_char_fraction"] > p.max_top_4gram_char_fraction),
    ]
    return [reason for reason, failed in checks if failed]
