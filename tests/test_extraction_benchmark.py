"""The extractor's quality on the public article benchmark stays above the floors pinned in
``benchmarks/extraction_floor.json`` (the scorer is ``benchmarks/extraction_benchmark.py``; trafilatura,
the speed peer, is not run here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("extraction_benchmark", ROOT / "benchmarks" / "extraction_benchmark.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # dataclasses look their module up by name
_spec.loader.exec_module(bench)


def test_scorer_follows_the_dataset_metric() -> None:
    same = bench.score_page("x", "one two three four five", "one two three four five")
    assert (same.precision, same.recall, same.exact) == (1.0, 1.0, True)
    half = bench.score_page("x", "a b c d e f g h", "a b c d e")  # 5 truth shingles, 2 predicted, 2 shared
    assert half.precision == 1.0 and half.recall == pytest.approx(2 / 5)
    assert half.tp + half.fp + half.fn == pytest.approx(1.0)  # normalised: every page weighs the same
    short = bench.score_page("x", "a b", "a b")  # shorter than 4 tokens: one shorter shingle
    assert short.f1 == 1.0
    empty = bench.score_page("x", "a b c d", "")
    assert empty.precision == 0.0 and empty.recall == 0.0
    summary = bench.summarise("t", [same, half], 1.0)
    assert summary.precision == pytest.approx(1.0) and summary.recall == pytest.approx(0.7)
    assert summary.f1 == pytest.approx(2 * 0.7 / 1.7)


@pytest.mark.benchmark_floor
def test_quality_floor_on_the_article_benchmark() -> None:
    if not (bench.DEFAULT_DATASET / "ground-truth.json").is_file():
        pytest.skip(f"dataset not found at {bench.DEFAULT_DATASET}")
    floor = bench.load_floor()
    summary = bench.score_boilerstrip()
    assert summary.pages == 181
    report = f"F1={summary.f1:.4f} P={summary.precision:.4f} R={summary.recall:.4f}"
    assert summary.f1 >= floor["f1"], report
    assert summary.precision >= floor["precision"], report
    assert summary.recall >= floor["recall"], report
    assert summary.f1 >= 0.965, report  # the bar, whatever the floor file says
