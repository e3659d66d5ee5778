"""WARC in and out: the round trip, a foreign writer's WARC, and many sites in one file.

Usage (from the repository root)::

    .venv/bin/python benchmarks/warc_benchmark.py                       # everything, the figures of docs/warc.md
    .venv/bin/python benchmarks/warc_benchmark.py --parts roundtrip,wget --site sqlite3-doc
    .venv/bin/python benchmarks/warc_benchmark.py --parts many --sites 500 --double
    .venv/bin/python benchmarks/warc_benchmark.py --parts readers       # the WARC readers compared
    .venv/bin/python benchmarks/warc_benchmark.py --json out/warc-benchmark.json

Parts:

- **roundtrip**: a Debian doc site served on loopback, crawled with ``boilerstrip crawl --warc DIR``, then
  read back with ``boilerstrip warc DIR/*.warc.gz``: the share of pages whose ``text`` and ``markdown`` are
  the same in both (done when >= 99.9 %).
- **wget**: the same site captured by Debian's ``wget --mirror --warc-file`` (a client no one here wrote;
  loopback only), read with ``boilerstrip warc``: the share of our crawl's pages with the same ``text``
  (done when >= 99 %), and the pages one has and the other lacks.
- **many**: a generated WARC of ``--sites`` sites (default 500), each with its own template (one of four
  layouts, its own words), 5 to 200 pages each (log-uniform, seeded). ``boilerstrip warc`` against
  trafilatura page by page over the same file, records read with warcio (datatrove's way:
  ``extract(favor_precision=True, include_comments=False, deduplicate=True)``): template leakage (the share
  of pages whose text still holds one of its site's template strings; done when <= 1 %), pages/s, and the
  peak RSS of the ``boilerstrip warc`` process tree (done when < 1 GiB). ``--double`` runs again with twice
  the sites: the peak must not double.
- **readers**: records/s of the scan ``boilerstrip warc`` uses (``boilerstrip.warc.scan_warc``), warcio and
  FastWARC over the generated file, and how many records each reads of a file with one cut gzip member.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))

from _warcfiles import gz, http_response, warc_record  # noqa: E402

from boilerstrip.demo.server import SiteServer  # noqa: E402

#: the doc sites the round trip may use (Debian packages)
DOC_SITES = {
    "sqlite3-doc": (Path("/usr/share/doc/sqlite3"), "index.html"),
    "debian-handbook": (Path("/usr/share/doc/debian-handbook/html/en-US"), "index.html"),
}
#: fast settings for our own loopback server (no politeness delay), as site_benchmark.py crawls
CRAWL_ARGS = ["--profile", "test", "-s", "BOILERSTRIP_RENDER_MODE=never", "-s", "ROBOTSTXT_OBEY=false"]
GIB = 1024 ** 3


# -- running and measuring ----------------------------------------------------------------------------------------
def _tree_rss(root: int) -> int:
    """The resident bytes of ``root`` and its descendants (from /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(rss.get(pid, 0) for pid in tree)


def run_measured(cmd: list[str], timeout: float = 7200) -> tuple[subprocess.CompletedProcess, float, int]:
    """Run ``cmd``: (the completed process, wall seconds, peak RSS of its process tree in bytes)."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    peak = [0]
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    out, err = proc.communicate(timeout=timeout)
    done.set()
    watcher.join()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), time.monotonic() - started, peak[0]


def boilerstrip(*args: str) -> list[str]:
    return [sys.executable, "-m", "boilerstrip", *args]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.exists() else []


def _by_url(records: list[dict]) -> dict[str, dict]:
    return {r.get("final_url") or r["url"]: r for r in records if "text" in r}


# -- round trip and wget ---------------------------------------------------------------------------------------
def crawl_with_warc(url: str, tmp: Path) -> tuple[list[dict], list[Path], dict]:
    proc, wall, peak = run_measured(boilerstrip("crawl", url, "-o", str(tmp / "crawl.jsonl"), "--warc",
                                                str(tmp / "warc"), "--state", str(tmp / "state-crawl"), *CRAWL_ARGS))
    if proc.returncode != 0:
        raise RuntimeError(f"crawl failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return read_jsonl(tmp / "crawl.jsonl"), sorted((tmp / "warc").glob("*.warc.gz")), {"wall_s": round(wall, 1)}


def read_warc(files: list[Path], out: Path, state: Path) -> tuple[list[dict], dict]:
    proc, wall, peak = run_measured(boilerstrip("warc", *map(str, files), "-o", str(out), "--state", str(state),
                                                "--profile", "test"))
    if proc.returncode != 0:
        raise RuntimeError(f"boilerstrip warc failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return read_jsonl(out), {"wall_s": round(wall, 1), "peak_rss_mib": round(peak / 2**20), "stderr": proc.stderr[-600:]}


def compare(reference: list[dict], other: list[dict], fields: tuple[str, ...]) -> dict:
    ref, oth = _by_url(reference), _by_url(other)
    both = sorted(set(ref) & set(oth))
    same = [u for u in both if all(ref[u].get(f) == oth[u].get(f) for f in fields)]
    return {"pages": len(ref), "compared": len(both), "same": len(same),
            "same_share": round(len(same) / len(ref), 5) if ref else 0.0,
            "missing": sorted(set(ref) - set(oth))[:10], "extra": sorted(set(oth) - set(ref))[:10],
            "differ": [u for u in both if u not in set(same)][:10]}


def part_roundtrip_and_wget(site: str, parts: set[str], tmp: Path) -> dict:
    root, start = DOC_SITES[site]
    results: dict = {"site": site}
    with SiteServer(root=root) as server:
        url = f"{server.url}/{start}"
        crawled, files, crawl_info = crawl_with_warc(url, tmp)
        results["crawl"] = {**crawl_info, "pages": len(crawled), "warc_files": len(files),
                            "warc_bytes": sum(f.stat().st_size for f in files)}
        if "roundtrip" in parts:
            replayed, info = read_warc(files, tmp / "replay.jsonl", tmp / "state-replay")
            results["roundtrip"] = {**compare(crawled, replayed, ("text", "markdown")), **info}
        if "wget" in parts:
            wget = shutil.which("wget")
            if wget is None:
                results["wget"] = {"skipped": "wget is not installed (apt-get install wget)"}
            else:
                folder = tmp / "wget"
                folder.mkdir()
                started = time.monotonic()
                subprocess.run([wget, "--mirror", "--no-verbose", "-e", "robots=off", "--no-host-directories",
                                "--warc-file", str(tmp / "wget-capture"), "--no-warc-keep-log", "-P", str(folder), url],
                               capture_output=True, text=True, timeout=3600)
                capture = tmp / "wget-capture.warc.gz"
                replayed, info = read_warc([capture], tmp / "wget.jsonl", tmp / "state-wget")
                results["wget"] = {**compare(crawled, replayed, ("text",)), **info,
                                   "wget_s": round(time.monotonic() - started, 1), "warc_bytes": capture.stat().st_size}
    return results


# -- many sites ---------------------------------------------------------------------------------------------------
_SYLLABLES = ["ka", "lo", "mi", "ten", "ra", "vo", "su", "nel", "pi", "dor", "ex", "qua", "ri", "mon", "tal", "be", "gu",
              "fen", "ho", "zi", "sta", "pre", "lum", "cor", "ni", "vis", "ard", "el", "to", "mar"]


def _words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(n)]


def _sentence(rng: random.Random, vocab: list[str]) -> str:
    words = [rng.choice(vocab) for _ in range(rng.randint(8, 20))]
    return " ".join(words).capitalize() + "."


def site_template(rng: random.Random, vocab: list[str], name: str) -> dict:
    """A site's own template: a layout and its strings (what must not reach the text)."""
    nav = [f"{w.capitalize()} {rng.choice(vocab)}" for w in _words(rng, rng.randint(4, 8))]
    return {
        "layout": rng.randrange(4),
        "tagline": f"{name}: {_sentence(rng, vocab)}",
        "nav": nav,
        "aside": _sentence(rng, vocab) + " " + _sentence(rng, vocab),
        "footer": f"Copyright {name}. " + _sentence(rng, vocab),
    }


def template_page(template: dict, title: str, paragraphs: list[str], links: list[str]) -> bytes:
    nav = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in zip(links, template["nav"]))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    layout = template["layout"]
    if layout == 0:
        html = (f"<header><p class='tag'>{template['tagline']}</p><nav><ul>{nav}</ul></nav></header>"
                f"<main><article><h1>{title}</h1>{body}</article></main><aside><p>{template['aside']}</p></aside>"
                f"<footer><p>{template['footer']}</p></footer>")
    elif layout == 1:
        html = (f"<div id='top'><div class='brand'>{template['tagline']}</div><div class='menu'><ul>{nav}</ul></div></div>"
                f"<div id='content'><h2>{title}</h2>{body}</div><div id='side'>{template['aside']}</div>"
                f"<div id='bottom'>{template['footer']}</div>")
    elif layout == 2:
        html = (f"<table><tr><td colspan='2'>{template['tagline']}</td></tr><tr><td><ul>{nav}</ul></td>"
                f"<td><h1>{title}</h1>{body}</td></tr><tr><td colspan='2'>{template['footer']}<br>{template['aside']}"
                "</td></tr></table>")
    else:
        html = (f"<div class='wrap'><ul class='crumbs'>{nav}</ul><section><h1>{title}</h1>{body}</section>"
                f"<div class='promo'><p>{template['tagline']}</p><p>{template['aside']}</p></div>"
                f"<p class='legal'>{template['footer']}</p></div>")
    return (f"<!DOCTYPE html><html lang='en'><head><title>{title}</title></head><body>{html}</body></html>").encode()


def generate_many(path: Path, sites: int, seed: int = 27) -> dict[str, dict]:
    """Write the generated WARC (gzip per record); returns each site's template."""
    rng = random.Random(seed)
    vocab = _words(rng, 3000)
    templates: dict[str, dict] = {}
    with open(path, "wb") as handle:
        for i in range(sites):
            name = f"{''.join(_words(rng, 1))}{i}.example"
            template = templates[name] = site_template(rng, vocab, name)
            pages = int(round(math.exp(rng.uniform(math.log(5), math.log(200)))))
            urls = [f"http://{name}/"] + [f"http://{name}/{w}-{n}.html" for n, w in enumerate(_words(rng, pages - 1))]
            links = [u.split(name, 1)[1] for u in urls[: len(template["nav"])]]
            for url in urls:
                paragraphs = [" ".join(_sentence(rng, vocab) for _ in range(rng.randint(2, 5)))
                              for _ in range(rng.randint(2, 6))]
                body = template_page(template, " ".join(_words(rng, 3)).capitalize(), paragraphs, links)
                handle.write(gz(warc_record("request", url, f"GET {url} HTTP/1.1\r\n\r\n".encode(),
                                            "application/http;msgtype=request")))
                handle.write(gz(warc_record("response", url, http_response(body))))
    return templates


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def leakage(records: dict[str, str], templates: dict[str, dict]) -> tuple[int, int]:
    """(pages whose text holds one of its site's template strings, pages)."""
    leaked = 0
    for url, text in records.items():
        template = templates[url.split("/")[2]]
        norm = _norm(text or "")
        lines = {_norm(line) for line in (text or "").splitlines()}
        strings = [template["tagline"], template["aside"], template["footer"]]
        if any(_norm(s) in norm for s in strings) or any(_norm(n) in lines for n in template["nav"]):
            leaked += 1
    return leaked, len(records)


def trafilatura_pages(path: Path) -> tuple[dict[str, str], float]:
    """trafilatura page by page over the WARC, read with warcio (datatrove's way): (url -> text, seconds)."""
    from trafilatura import extract
    from warcio.archiveiterator import ArchiveIterator

    texts: dict[str, str] = {}
    started = time.monotonic()
    with open(path, "rb") as handle:
        for record in ArchiveIterator(handle):
            if record.rec_type != "response":
                continue
            html = record.content_stream().read().decode("utf-8", errors="replace")
            texts[record.rec_headers.get_header("WARC-Target-URI")] = extract(
                html, favor_precision=True, include_comments=False, deduplicate=True) or ""
    return texts, time.monotonic() - started


def part_many(sites: int, tmp: Path, with_trafilatura: bool = True) -> dict:
    path = tmp / f"many-{sites}.warc.gz"
    templates = generate_many(path, sites)
    out = tmp / f"many-{sites}.jsonl"
    proc, wall, peak = run_measured(boilerstrip("warc", str(path), "-o", str(out), "--state", str(tmp / f"state-{sites}"),
                                                "--profile", "test"))
    if proc.returncode != 0:
        raise RuntimeError(f"boilerstrip warc failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    records = {r["url"]: r.get("text") or "" for r in read_jsonl(out) if "text" in r}
    leaked, pages = leakage(records, templates)
    result = {"sites": sites, "warc_bytes": path.stat().st_size, "pages": pages,
              "boilerstrip": {"leaked_pages": leaked, "leakage": round(leaked / pages, 4) if pages else 0.0,
                              "wall_s": round(wall, 1), "pages_per_s": round(pages / wall, 1),
                              "peak_rss_mib": round(peak / 2**20)}}
    if with_trafilatura:
        texts, seconds = trafilatura_pages(path)
        t_leaked, t_pages = leakage(texts, templates)
        result["trafilatura"] = {"leaked_pages": t_leaked, "leakage": round(t_leaked / t_pages, 4) if t_pages else 0.0,
                                 "wall_s": round(seconds, 1), "pages_per_s": round(t_pages / seconds, 1)}
    return result


# -- readers ------------------------------------------------------------------------------------------------------
def part_readers(tmp: Path, sites: int) -> dict:
    from fastwarc.warc import ArchiveIterator as FastIterator
    from warcio.archiveiterator import ArchiveIterator

    from boilerstrip.warc import read_record, scan_warc

    path = tmp / "readers.warc.gz"
    if not path.exists():
        generate_many(path, sites)

    def ours(p: Path) -> tuple[int, str]:
        n = 0
        for entry in scan_warc(p):
            if entry.error is None:
                if entry.kind == "response":
                    read_record(entry)
                n += 1
        return n, ""

    def warcio(p: Path) -> tuple[int, str]:
        n = 0
        try:
            with open(p, "rb") as handle:
                for record in ArchiveIterator(handle):
                    record.content_stream().read()
                    n += 1
        except Exception as exc:  # noqa: BLE001 - what the reader does with a cut member is the figure
            return n, f"stopped: {type(exc).__name__}"
        return n, ""

    def fastwarc(p: Path) -> tuple[int, str]:
        n = 0
        try:
            with open(p, "rb") as handle:
                for record in FastIterator(handle):
                    record.reader.read()
                    n += 1
        except Exception as exc:  # noqa: BLE001
            return n, f"stopped: {type(exc).__name__}"
        return n, ""

    cut = tmp / "cut.warc.gz"
    good = [gz(warc_record("response", f"http://a.test/{i}", http_response(b"<p>%d</p>" % i * 200))) for i in range(10)]
    good[3] = good[3][: len(good[3]) // 2]
    cut.write_bytes(b"".join(good))
    result: dict = {}
    for name, reader in (("boilerstrip scan_warc", ours), ("warcio", warcio), ("FastWARC", fastwarc)):
        started = time.monotonic()
        records, _ = reader(path)
        seconds = time.monotonic() - started
        after_cut, how = reader(cut)
        result[name] = {"records": records, "records_per_s": round(records / seconds), "cut_file_records": after_cut,
                        "cut_file_end": how or "read to the end"}
    return result


# -- report -------------------------------------------------------------------------------------------------------
def print_report(results: dict) -> None:
    for key in ("roundtrip", "wget"):
        part = results.get("doc", {}).get(key)
        if not part:
            continue
        if "skipped" in part:
            print(f"{key}: skipped ({part['skipped']})")
            continue
        what = "text+markdown" if key == "roundtrip" else "text"
        print(f"{key} ({results['doc']['site']}): {part['same']}/{part['pages']} crawl pages with the same {what} "
              f"({part['same_share']:.2%}); {part['compared']} compared, missing {len(part['missing'])}, "
              f"read in {part['wall_s']} s")
        if part["differ"]:
            print(f"   differ: {', '.join(part['differ'][:5])}")
        if part["missing"]:
            print(f"   missing: {', '.join(part['missing'][:5])}")
    for run in results.get("many", []):
        b, t = run["boilerstrip"], run.get("trafilatura")
        print(f"many: {run['sites']} sites, {run['pages']} pages, {run['warc_bytes'] / 2**20:.0f} MiB of WARC")
        print(f"   {'':<14}{'leakage':>10}{'pages/s':>10}{'wall s':>9}{'peak RSS':>11}")
        print(f"   {'boilerstrip':<14}{b['leakage']:>10.2%}{b['pages_per_s']:>10}{b['wall_s']:>9}{b['peak_rss_mib']:>8} MiB")
        if t:
            print(f"   {'trafilatura':<14}{t['leakage']:>10.2%}{t['pages_per_s']:>10}{t['wall_s']:>9}{'':>11}")
    runs = results.get("many", [])
    if len(runs) == 2:
        a, b = runs
        ratio = b["boilerstrip"]["peak_rss_mib"] / max(a["boilerstrip"]["peak_rss_mib"], 1)
        print(f"   doubling the sites ({a['sites']} -> {b['sites']}): peak RSS x{ratio:.2f}")
    for name, info in results.get("readers", {}).items():
        print(f"reader {name:<22} {info['records_per_s']:>8} records/s; a file of 10 records, the 4th cut: "
              f"{info['cut_file_records']} whole records read ({info['cut_file_end']})")


#: the issue's bars (issue 27's "done when"); --check exits 1 when one is missed
BARS = {"roundtrip_same_share": 0.999, "wget_same_share": 0.99, "max_leakage": 0.01, "max_peak_rss": GIB,
        "max_doubling_ratio": 2.0}


def misses(results: dict) -> list[str]:
    missed: list[str] = []
    doc = results.get("doc", {})
    if "same_share" in doc.get("roundtrip", {}) and doc["roundtrip"]["same_share"] < BARS["roundtrip_same_share"]:
        missed.append(f"round trip {doc['roundtrip']['same_share']:.2%} < {BARS['roundtrip_same_share']:.1%}")
    if "same_share" in doc.get("wget", {}) and doc["wget"]["same_share"] < BARS["wget_same_share"]:
        missed.append(f"wget {doc['wget']['same_share']:.2%} < {BARS['wget_same_share']:.0%}")
    runs = results.get("many", [])
    for run in runs:
        b = run["boilerstrip"]
        if b["leakage"] > BARS["max_leakage"]:
            missed.append(f"{run['sites']} sites: leakage {b['leakage']:.2%}")
        if b["peak_rss_mib"] * 2**20 >= BARS["max_peak_rss"]:
            missed.append(f"{run['sites']} sites: peak RSS {b['peak_rss_mib']} MiB")
    if len(runs) == 2 and runs[1]["boilerstrip"]["peak_rss_mib"] >= BARS["max_doubling_ratio"] * runs[0]["boilerstrip"]["peak_rss_mib"]:
        missed.append("doubling the sites doubled the peak RSS")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--parts", default="roundtrip,wget,many,readers")
    parser.add_argument("--site", default="sqlite3-doc", choices=sorted(DOC_SITES))
    parser.add_argument("--sites", type=int, default=500, help="sites in the generated WARC (default 500)")
    parser.add_argument("--double", action="store_true", help="also run the many-sites part with twice the sites")
    parser.add_argument("--no-trafilatura", action="store_true")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--check", action="store_true", help="exit 1 when a bar of BARS is missed")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="warc-benchmark-") as folder:
        tmp = Path(folder)
        if parts & {"roundtrip", "wget"}:
            results["doc"] = part_roundtrip_and_wget(args.site, parts, tmp)
        if "many" in parts:
            results["many"] = [part_many(args.sites, tmp, not args.no_trafilatura)]
            if args.double:
                results["many"].append(part_many(args.sites * 2, tmp, with_trafilatura=False))
        if "readers" in parts:
            results["readers"] = part_readers(tmp, min(args.sites, 200))
    print_report(results)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    missed = misses(results)
    for line in missed:
        print(f"MISSED: {line}")
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
