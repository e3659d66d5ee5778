"""Export 200,000 records made from real crawls, with planted duplicates: docs/s, peak RSS, dedup quality.

Usage (from the repository root)::

    .venv/bin/python benchmarks/export_benchmark.py                      # 200,000 records, bar checked
    .venv/bin/python benchmarks/export_benchmark.py --records 20000 --keep /tmp/bench-export

1. Crawls the bundled demo site and Debian's ``sqlite3-doc`` (``/usr/share/doc/sqlite3``) served on
   loopback with ``boilerstrip crawl`` (real extraction, real template removal).
2. Cuts their texts into sentences (of paragraphs of at least ``MIN_PARAGRAPH_WORDS`` words, each once) and
   builds records shaped like the crawl's: each *base* document is 12 to 30 sentences drawn at random in 3
   to 6 paragraphs, so two base documents rarely share a sentence. Then it plants, on other URLs:
   - near duplicates (``--near-share`` of the base documents): 1 to 4 % of the words replaced, a line
     added or a paragraph dropped -- word 5-gram Jaccard roughly 0.75 to 0.95;
   - exact duplicates (``--exact-share``): the same text with other case and spacing.
   The records are split over two input files (two "crawls"), copies and originals shuffled across both.
3. Runs ``boilerstrip export IN1 IN2 -o OUT`` in a child process and reports wall time, documents/s, the
   child's CPU time (documents per CPU second: the figure that holds on a busy machine) and its peak RSS
   (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``; the crawls, when run, are children too: their
   peak is far lower).
4. Scores near-duplicate detection on the planted pairs: precision = share of ``near_duplicate`` drops whose
   kept document is the planted partner; recall = share of planted near pairs of which exactly one
   document was kept. Exact pairs are scored the same way.

Bar (exit 1 when missed): peak RSS under 1.5 GB, near-duplicate precision >= 0.95, every exact pair found.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from boilerstrip.demo.server import SiteServer  # noqa: E402

SITES = {"demo": ROOT / "boilerstrip" / "demo" / "site", "sqlite3-doc": Path("/usr/share/doc/sqlite3")}
#: shorter paragraphs (headings, captions, code lines) are not used: they repeat across real pages
MIN_PARAGRAPH_WORDS = 12
#: base documents are made of sentences (not whole paragraphs) drawn at random: with ~40k sentences, two
#: of 200,000 documents rarely share one, so the only duplicates are the planted ones
MIN_SENTENCE_WORDS = 6
SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
MAX_RSS_BYTES = 1.5 * 1024**3
MIN_NEAR_PRECISION = 0.95
CRAWL_ARGS = ["--profile", "test", "-s", "BOILERSTRIP_RENDER_MODE=never"]


def crawl_sites(folder: Path, reuse: bool = False) -> list[Path]:
    outputs = []
    for name, root in SITES.items():
        if not root.is_dir():
            print(f"export_benchmark: {root} missing, {name} skipped (apt-get install sqlite3-doc)", file=sys.stderr)
            continue
        out = folder / f"{name}.jsonl"
        if reuse and out.is_file():
            print(f"reusing the crawl of {name}: {out}")
            outputs.append(out)
            continue
        with SiteServer(root=root) as server:
            started = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "boilerstrip", "crawl", server.url + "/", "-o", str(out),
                                   *CRAWL_ARGS], cwd=ROOT, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"export_benchmark: crawl of {name} failed:\n{proc.stderr[-2000:]}")
        lines = out.read_text(encoding="utf-8").count("\n")
        print(f"crawled {name}: {lines} records in {time.monotonic() - started:.1f} s")
        outputs.append(out)
    if not outputs:
        sys.exit("export_benchmark: no site to crawl")
    return outputs


def sentence_pool(crawls: list[Path]) -> tuple[list[str], list[dict]]:
    """Distinct sentences of the crawled texts' paragraphs (of at least MIN_PARAGRAPH_WORDS words)."""
    pool: dict[str, None] = {}
    records = []
    for path in crawls:
        for line in path.open(encoding="utf-8"):
            record = json.loads(line)
            if not record.get("text"):
                continue
            records.append(record)
            for para in record["text"].split("\n"):
                para = " ".join(para.split())
                if len(para.split()) < MIN_PARAGRAPH_WORDS:
                    continue
                for sentence in SENTENCE_RE.split(para):
                    if len(sentence.split()) >= MIN_SENTENCE_WORDS:
                        pool[sentence] = None
    return list(pool), records


def perturb(text: str, rng: random.Random, vocabulary: list[str]) -> str:
    paragraphs = text.split("\n\n")
    kind = rng.random()
    if kind < 0.15 and len(paragraphs) > 4:
        paragraphs.pop(rng.randrange(len(paragraphs)))  # a paragraph dropped
    elif kind < 0.3:
        paragraphs.insert(0, f"Updated {rng.randint(1, 28)} March 20{rng.randint(10, 26)} by the editors.")
    words = "\n\n".join(paragraphs).split(" ")
    for _ in range(max(2, int(len(words) * rng.uniform(0.01, 0.04)))):
        words[rng.randrange(len(words))] = rng.choice(vocabulary)
    return " ".join(words)


def build_records(pool: list[str], templates: list[dict], total: int, near_share: float, exact_share: float,
                  seed: int, folder: Path) -> tuple[list[Path], dict[str, str], dict[str, int]]:
    """Two input files; url -> family (base doc number) and the planted counts."""
    rng = random.Random(seed)
    vocabulary = [w for p in pool[:2000] for w in p.split()][:50_000]
    n_base = int(total / (1 + near_share + exact_share))
    n_near, n_exact = int(n_base * near_share), total - n_base - int(n_base * near_share)
    chosen = rng.sample(range(n_base), n_near + n_exact)
    near_of, exact_of = chosen[:n_near], chosen[n_near:]
    family: dict[str, str] = {}
    files = [folder / "crawl-1.jsonl", folder / "crawl-2.jsonl"]
    handles = [f.open("w", encoding="utf-8") for f in files]
    texts: dict[int, str] = {}
    planted_of = set(near_of) | set(exact_of)

    def emit(url: str, text: str, fam: int) -> None:
        template = rng.choice(templates)
        record = {"url": url, "text": text, "fetched_at": template.get("fetched_at"), "title": template.get("title"),
                  "method": template.get("method"), "flags": template.get("flags") or [],
                  "boilerplate_removed_chars": template.get("boilerplate_removed_chars") or 0, "ai_opt_out": []}
        family[url] = str(fam)
        handles[rng.randrange(2)].write(json.dumps(record) + "\n")

    for i in range(n_base):
        sentences = rng.sample(pool, rng.randint(12, 30))
        cuts = sorted(rng.sample(range(1, len(sentences)), rng.randint(2, 5)))
        text = "\n\n".join(" ".join(sentences[a:b]) for a, b in zip([0, *cuts], [*cuts, len(sentences)]))
        if i in planted_of:
            texts[i] = text
        emit(f"https://site{i % 97}.example/docs/{i}.html", text, i)
    for i in near_of:
        emit(f"https://mirror{i % 13}.example/copy/{i}.html", perturb(texts[i], rng, vocabulary), i)
    for i in exact_of:
        emit(f"https://mirror{i % 13}.example/same/{i}.html", "  " + texts[i].upper().replace(" ", "  ") + " ", i)
    for handle in handles:
        handle.close()
    return files, family, {"base": n_base, "near": n_near, "exact": n_exact}


def score(out: Path, family: dict[str, str], planted: dict[str, int]) -> dict[str, float]:
    import pyarrow.parquet as pq

    id_url: dict[str, str] = {}
    kept_per_family: dict[str, int] = {}
    for shard in sorted((out / "data").glob("*.parquet")):
        table = pq.read_table(shard, columns=["id", "url"])
        for doc_id, url in zip(table.column("id").to_pylist(), table.column("url").to_pylist()):
            id_url[doc_id] = url
            kept_per_family[family[url]] = kept_per_family.get(family[url], 0) + 1
    near_drops = near_right = exact_drops = exact_right = 0
    for line in (out / "excluded.jsonl").open(encoding="utf-8"):
        e = json.loads(line)
        right = family[e["url"]] == family.get(id_url.get(e.get("of"), ""), None)
        if e["reason"] == "near_duplicate":
            near_drops, near_right = near_drops + 1, near_right + right
        elif e["reason"] == "exact_duplicate":
            exact_drops, exact_right = exact_drops + 1, exact_right + right
    urls_by_family: dict[str, list[str]] = {}
    for url, fam in family.items():
        urls_by_family.setdefault(fam, []).append(url)
    near_found = sum(1 for fam, urls in urls_by_family.items()
                     if any("/copy/" in u for u in urls) and kept_per_family.get(fam, 0) == 1)
    exact_found = sum(1 for fam, urls in urls_by_family.items()
                      if any("/same/" in u for u in urls) and kept_per_family.get(fam, 0) == 1)
    return {
        "near_precision": near_right / near_drops if near_drops else 1.0,
        "near_recall": near_found / planted["near"] if planted["near"] else 1.0,
        "near_drops": near_drops,
        "exact_precision": exact_right / exact_drops if exact_drops else 1.0,
        "exact_recall": exact_found / planted["exact"] if planted["exact"] else 1.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--near-share", type=float, default=0.10, help="near copies per base document")
    parser.add_argument("--exact-share", type=float, default=0.02, help="exact copies per base document")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--keep", metavar="DIR", help="work here and keep the files (default: a temporary folder)")
    parser.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    parser.add_argument("--reuse-crawls", action="store_true", help="with --keep: reuse the crawls found there")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="boilerstrip-export-bench-") as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        pool, templates = sentence_pool(crawl_sites(folder, reuse=args.reuse_crawls))
        print(f"sentence pool: {len(pool)} distinct sentences from {len(templates)} crawled pages")
        started = time.monotonic()
        inputs, family, planted = build_records(pool, templates, args.records, args.near_share, args.exact_share,
                                                args.seed, folder)
        size = sum(p.stat().st_size for p in inputs)
        print(f"records: {len(family)} ({planted['base']} base, {planted['near']} near copies, {planted['exact']} "
              f"exact copies), {size / 1e6:.0f} MB of JSONL, built in {time.monotonic() - started:.0f} s")
        out = folder / "dataset"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_before = before.ru_utime + before.ru_stime
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "boilerstrip", "export", *map(str, inputs), "-o", str(out)],
                              cwd=ROOT, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the crawls' children too, but they ran earlier
        peak_rss = usage.ru_maxrss * 1024  # KiB on Linux
        cpu = usage.ru_utime + usage.ru_stime - cpu_before
        stats = json.loads((out / "stats.json").read_text())
        figures = {"records": len(family), "seconds": round(seconds, 1), "docs_per_s": round(len(family) / seconds, 1),
                   "cpu_seconds": round(cpu, 1), "docs_per_cpu_s": round(len(family) / cpu, 1),
                   "peak_rss_mb": round(peak_rss / 1024**2), "documents": stats["documents"],
                   "excluded": stats["excluded_by_reason"], "shards": len(stats["shards"]),
                   **{k: round(v, 4) if isinstance(v, float) else v for k, v in score(out, family, planted).items()}}
    print(f"export: {figures['records']} records in {figures['seconds']} s = {figures['docs_per_s']} docs/s, "
          f"({figures['docs_per_cpu_s']} docs per CPU second: {figures['cpu_seconds']} s of CPU), "
          f"peak RSS {figures['peak_rss_mb']} MB, {figures['documents']} documents kept in {figures['shards']} "
          f"shard(s), left out {figures['excluded']}")
    print(f"near duplicates (MinHash LSH 14x8): precision {figures['near_precision']:.4f}, recall "
          f"{figures['near_recall']:.4f} on {planted['near']} planted pairs ({figures['near_drops']} dropped)")
    print(f"exact duplicates: precision {figures['exact_precision']:.4f}, recall {figures['exact_recall']:.4f} "
          f"on {planted['exact']} planted pairs")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    missed = []
    if peak_rss >= MAX_RSS_BYTES:
        missed.append(f"peak RSS {figures['peak_rss_mb']} MB >= 1536 MB")
    if figures["near_precision"] < MIN_NEAR_PRECISION:
        missed.append(f"near precision {figures['near_precision']} < {MIN_NEAR_PRECISION}")
    if figures["exact_recall"] < 1.0:
        missed.append(f"exact recall {figures['exact_recall']} < 1")
    print("bar missed: " + "; ".join(missed) if missed else "bar met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
