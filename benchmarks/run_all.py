"""Run every benchmark, one after the other, each printing its figures beside its peer's.

    ./run bench                      # all of them
    ./run bench extraction site      # only these (names: extraction, markdown, confidence, site, render, crawl, throughput, recrawl, safety, distributed, export, chunks, warc)

Each benchmark is a script of its own in this folder (see its docstring for options); this runner only
calls them with their default, comparative settings and reports which ones missed their bar.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

BENCHMARKS = {
    # name: (script, arguments) -- extraction, markdown, render, crawl and recrawl exit non-zero when their bar is missed;
    # site and safety only print (site_floor.json is checked by tests/test_boilerplate_benchmark.py)
    "extraction": ("extraction_benchmark.py", ["--check"]),
    "markdown": ("markdown_benchmark.py", ["--check"]),
    "confidence": ("confidence_benchmark.py", ["--check"]),
    "site": ("site_benchmark.py", []),
    "render": ("render_benchmark.py", []),
    "crawl": ("crawl_benchmark.py", ["--compare-scrapy-defaults"]),
    "throughput": ("crawl_benchmark.py", ["--throughput", "--growth", "1000,10000"]),
    "recrawl": ("recrawl_benchmark.py", []),
    "safety": ("safety_overhead.py", []),
    "distributed": ("distributed_benchmark.py", []),
    "export": ("export_benchmark.py", []),
    "chunks": ("chunk_benchmark.py", []),
    "warc": ("warc_benchmark.py", ["--double", "--check"]),
}


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f"run_all: unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    failed = []
    for name in names:
        script, args = BENCHMARKS[name]
        print(f"\n=== {name}: {script} {' '.join(args)}", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(HERE / script), *args], cwd=HERE.parent)
        print(f"=== {name}: exit {code} in {time.monotonic() - started:.0f} s", flush=True)
        if code:
            failed.append(name)
    print(f"\nbenchmarks missing their bar: {failed}" if failed else "\nall benchmarks met their bar")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
