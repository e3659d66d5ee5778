"""False-positive check of the render decision on real server-rendered pages.

    .venv/bin/python benchmarks/render_decision_check.py [--dataset DIR]

Every page of the extraction benchmark's dataset (vendored in ``benchmarks/data/article-extraction-benchmark``:
181 real article pages whose hand-checked text is in the served HTML) should be judged static. Prints the
verdicts by reason and each page judged to need a browser, with the share; exits 1 above 2 %.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from boilerstrip.extraction import extract  # noqa: E402
from boilerstrip.rendering import needs_rendering  # noqa: E402

DEFAULT_DATASET = ROOT / "benchmarks" / "data" / "article-extraction-benchmark"  # vendored (MIT)
MAX_RENDERED_SHARE = 0.02


def check(dataset: Path = DEFAULT_DATASET) -> dict | None:
    """Judge every page of ``dataset``; None when the dataset is not there."""
    files = sorted((dataset / "html").rglob("*.html*"))
    if not files:
        return None
    reasons: Counter = Counter()
    rendered = []
    started = time.perf_counter()
    for path in files:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        html = raw.decode("utf-8", errors="replace")
        verdict = needs_rendering(html, main_text_chars=lambda doc: len(extract(doc, "https://example.org/").text))
        reasons[verdict.reason] += 1
        if verdict.needs:
            rendered.append({"page": path.name[:16], "reason": verdict.reason,
                             "content_chars": verdict.signals.content_chars})
    return {
        "pages": len(files),
        "judged_needing_browser": len(rendered),
        "share": round(len(rendered) / len(files), 4),
        "by_reason": dict(reasons.most_common()),
        "ms_per_page": round((time.perf_counter() - started) / len(files) * 1000, 1),
        "rendered": rendered,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args(argv)
    result = check(args.dataset)
    if result is None:
        print(f"no pages under {args.dataset / 'html'}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 1 if result["share"] > MAX_RENDERED_SHARE else 0


if __name__ == "__main__":
    sys.exit(main())
