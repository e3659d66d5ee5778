"""What the HTML5 rebuild costs and what it changes, on both shared annotated sets.

Usage (from the repository root)::

    .venv/bin/python benchmarks/html5_rebuild.py              # both sets
    .venv/bin/python benchmarks/html5_rebuild.py --sets wcxb --pages

``parse_document`` parses a page with libxml2 and builds it again the way a browser does (lexbor, then
libxml2 on lexbor's serialisation) when libxml2's log holds an end tag it could not match
(``_wants_html5_tree``). For each set this prints how many pages are rebuilt, how many of those get another
text than libxml2's tree gives (``extract`` with ``html5_tree`` on and off), the F1 of both on the pages that
change, the cost of each step of the rebuild per rebuilt page (wall time, one process), and which
libxml2 messages stand on the pages that change and on those that do not: the evidence for any rule that
would rebuild fewer pages (docs/benchmarks.md, *Extraction speed*).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import extraction_benchmark as eb  # noqa: E402
from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from boilerstrip.extraction import ExtractionParams, extract  # noqa: E402
from boilerstrip.extraction import parse as P  # noqa: E402

_MISMATCH_RE = re.compile(r"mismatch: (\S+) and (\S+)")
_UNEXPECTED_RE = re.compile(r"Unexpected end tag : (\S+)")


def message_kinds(messages: list[str]) -> set[str]:
    """The unmatched-end-tag messages of one page, as "END/OPEN" (a mismatch) or "END" (an unexpected one)."""
    kinds = set()
    for message in messages:
        if not P._UNMATCHED_END_TAG_RE.search(message):
            continue
        if found := _MISMATCH_RE.search(message):
            kinds.add(f"{found.group(1)}/{found.group(2)}")
        elif found := _UNEXPECTED_RE.search(message):
            kinds.add(found.group(1))
    return kinds


def rebuild_steps(data: bytes) -> dict[str, float]:
    """Seconds of each step of ``html5_serialised`` and of libxml2's second parse, for one page."""
    times = {}
    start = time.perf_counter()
    tree = LexborHTMLParser(data, scripting=True)
    times["lexbor parse"] = time.perf_counter() - start
    start = time.perf_counter()
    for element in tree.css("script, style"):
        if not P._is_jsonld(element.attributes.get("type")):
            element.decompose()
    times["scripts out"] = time.perf_counter() - start
    start = time.perf_counter()
    serialised = (tree.html or "").encode("utf-8", "replace")
    times["serialise"] = time.perf_counter() - start
    start = time.perf_counter()
    P._libxml2(serialised)
    times["libxml2 again"] = time.perf_counter() - start
    return times


def run(set_name: str, dataset: Path, show_pages: bool) -> None:
    pages = eb.load_pages(dataset)
    on = ExtractionParams()
    off = dataclasses.replace(on, html5_tree=False)
    rebuilt = changed = 0
    f1_on = f1_off = 0.0
    steps: Counter[str] = Counter()
    kinds_changed: Counter[str] = Counter()
    kinds_same: Counter[str] = Counter()
    for page in pages:
        data = page.html.encode("utf-8", "replace")
        parsed = P._libxml2(data)
        if isinstance(parsed, str) or not P._wants_html5_tree(parsed[0], parsed[1], on.max_nodes):
            continue
        rebuilt += 1
        steps.update(rebuild_steps(data))
        kinds = message_kinds(parsed[1])
        with_rebuild = extract(page.html, url=page.url, params=on).text
        without = extract(page.html, url=page.url, params=off).text
        if with_rebuild == without:
            kinds_same.update(kinds)
            continue
        changed += 1
        kinds_changed.update(kinds)
        a = eb.score_page(page.page_id, page.truth, with_rebuild).f1
        b = eb.score_page(page.page_id, page.truth, without).f1
        f1_on += a
        f1_off += b
        if show_pages:
            print(f"  {page.page_id} {page.kind} {page.half}: F1 {a:.3f} rebuilt, {b:.3f} libxml2 alone; {sorted(kinds)}")
    print(f"== {set_name}: {len(pages)} pages, {rebuilt} rebuilt, {changed} of them with another text")
    if changed:
        print(f"   F1 on those {changed}: {f1_on / changed:.4f} rebuilt, {f1_off / changed:.4f} libxml2 alone")
    if rebuilt:
        print("   ms per rebuilt page: " + ", ".join(f"{name} {seconds * 1000 / rebuilt:.2f}"
                                                  for name, seconds in steps.items()))
        print("   messages on pages that change (count there / on pages that do not):")
        for kind, count in kinds_changed.most_common(15):
            print(f"     {kind}: {count} / {kinds_same[kind]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="article,wcxb", help="comma-separated: article, wcxb")
    parser.add_argument("--wcxb", type=Path, default=eb.WCXB_DATASET, help="WCXB-dev's folder")
    parser.add_argument("--pages", action="store_true", help="list each page whose text the rebuild changes")
    args = parser.parse_args(argv)
    datasets = {"article": eb.ARTICLE_DATASET, "wcxb": args.wcxb}
    names = [name.strip() for name in args.sets.split(",") if name.strip()]
    unknown = [name for name in names if name not in datasets]
    if unknown or not names:
        parser.error(f"unknown set(s): {', '.join(unknown) or '(none)'}; choose from article, wcxb")
    for name in names:
        try:
            run(name, datasets[name], args.pages)
        except eb.DatasetMissing as exc:
            print(f"== {name}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
