"""Chunks for retrieval on two real doc sites: IDs that survive a recrawl, edits that change only their chunks.

Usage (from the repository root)::

    .venv/bin/python benchmarks/chunk_benchmark.py                        # both sites
    .venv/bin/python benchmarks/chunk_benchmark.py --sites sqlite3-doc --json out/chunk-benchmark.json
    .venv/bin/python benchmarks/chunk_benchmark.py --speed-only out/sqlite.jsonl out/docbook.jsonl  # no crawl

Per site (Debian's ``sqlite3-doc`` and ``docbook-xsl-doc-html``; a missing one is skipped), a copy of the
site is served on loopback by ``SiteServer`` and crawled three times with ``boilerstrip crawl --state DIR
--chunks FILE`` (the chunk IDs kept in the crawl's state folder):

1. the first crawl (every chunk new);
2. the unchanged site again: every chunk must keep its ID (bar: 100%);
3. the copy edited: one paragraph changed on 5 pages (a run of its words rewritten, marked ``EDITED``), a
   section added on 2 pages (a heading and two paragraphs marked ``BENCHSECTION``, before the page's first
   ``<h2>``), 2 pages deleted (their files removed: still linked, they answer 404), and every footer changed
   (sqlite3-doc: the "This page last modified" date of every page; docbook-xsl-doc-html: a "Built <date> from
   revision <n>" footer the copy adds to every page, with a new date and revision).

Checked against the truth of those edits (bars): the chunks of an unedited page do not change (footer churn
changes none); an edited paragraph changes at most 2 chunks (new and removed each), a removed one held the
edited words and a new one holds the edit (a boundary appearing splits the chunk that held it, the other
half is then new too; one vanishing merges it with its neighbour, which is then removed too); an added
section removes at most 2 chunks (those around the insertion point) and adds at most 2 that do not hold
its text; a deleted page loses all its chunks. A page new to the output (docbook-xsl-doc-html documents
parameters twice: a page the first crawl dropped as an exact copy of a page that was then edited or deleted
is a page of its own in the edited crawl) has only new chunks. Over every page of every crawl: no chunk splits a fenced code block, a table row or a list
item (each block of the page's Markdown lies inside one chunk). Speed: the chunker over the first crawl's
Markdown of both sites, MB of Markdown per CPU second (bar: 20; best of ``SPEED_RUNS``), and the ``boilerstrip chunk``
command end to end (JSON in and out included). Exits 1 when a bar is missed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.recrawl_benchmark import crawl, read_records  # noqa: E402
from boilerstrip.chunks import ChunkParams, chunk_markdown, parse_blocks  # noqa: E402
from boilerstrip.demo.server import SiteServer  # noqa: E402

#: the chunker's speed bar, MB of Markdown per CPU second (issue 28)
MIN_MB_PER_CPU_S = 20.0
#: chunks an edited paragraph may change (new, and removed, each) (issue 28)
MAX_CHUNKS_PER_EDIT = 2
EDITED_PAGES, SECTION_PAGES, DELETED_PAGES = 5, 2, 2
EDIT_MARK, SECTION_MARK = "EDITED", "BENCHSECTION"
#: the chunker's speed is the best of this many runs: on a shared machine the minimum is the run that other
#: jobs slowed least (CPU time too grows under contention for the cores' caches)
SPEED_RUNS = 15


@dataclass(frozen=True)
class Site:
    name: str
    root: Path
    start: str
    #: footer date on every page: (pattern, replacement) applied to the copy before the edited crawl
    footer_date: tuple[str, str] | None
    #: a footer the copy adds to every page (for a site without a changing one), and its edited text
    footer_added: tuple[str, str] | None = None


SITES = {
    "sqlite3-doc": Site("sqlite3-doc", Path("/usr/share/doc/sqlite3"), "index.html",
                        footer_date=(r'(id="mtimelink"[^>]*>)\d{4}-\d\d-\d\d \d\d:\d\d:\d\d', r"\g<1>2026-12-02 09:41:07")),
    "docbook-xsl-doc-html": Site("docbook-xsl-doc-html", Path("/usr/share/doc/docbook-xsl-doc-html/doc"), "index.html",
                                 footer_date=None,
                                 footer_added=('<div class="sitefooter"><p>Built 2026-11-30 14:02 from revision 9971.</p></div>',
                                               '<div class="sitefooter"><p>Built 2026-12-02 09:41 from revision 10014.</p></div>')),
}

_WORD_RUN = 8  # words of a paragraph rewritten by an edit, found verbatim in the page's HTML


def _html_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html") if p.is_file())


def _path_of(url: str) -> str:
    return urlsplit(url).path.lstrip("/") or "index.html"


def _chunks_by_url(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        out[_path_of(r["url"])].append(r)
    return out


def _never_split(pages: list[dict[str, Any]], chunks: list[dict[str, Any]]) -> dict[str, int]:
    """Blocks of every page checked: each inside one chunk (by the chunks' offsets into the page)."""
    by_url = defaultdict(list)
    for c in chunks:
        if c.get("change") != "removed":
            by_url[c["url"]].append((c["char_start"], c["char_end"]))
    counts: Counter = Counter()
    for page in pages:
        md = page.get("markdown")
        if not md:
            continue
        spans = sorted(by_url.get(page["url"], []))
        for block in parse_blocks(md):
            inside = [s for s in spans if s[0] <= block.start and block.end <= s[1]]
            counts[f"{block.kind}:{'ok' if len(inside) == 1 else 'split'}"] += 1
    return dict(counts)


def _edit_paragraph(html: str, markdown: str, rng: random.Random) -> tuple[str, str] | None:
    """(the page's HTML with a run of words of one of its content paragraphs rewritten, the words
    rewritten), or None."""
    paragraphs = [b for b in markdown.split("\n\n") if len(b.split()) >= 3 * _WORD_RUN and b[:1].isalpha()
                  and "\n" not in b]
    rng.shuffle(paragraphs)
    for paragraph in paragraphs:
        words = paragraph.split()
        for at in range(0, len(words) - _WORD_RUN, _WORD_RUN):
            run = " ".join(words[at:at + _WORD_RUN])
            if html.count(run) == 1 and "<" not in run and "&" not in run:
                edited = " ".join([EDIT_MARK] + words[at:at + _WORD_RUN][::-1])
                return html.replace(run, edited), run
    return None


def _add_section(html: str, rng: random.Random) -> str | None:
    at = html.find("<h2")
    if at < 0:
        return None
    words = "schema index journal cursor page cache lock reader writer checkpoint".split()
    paragraphs = "".join(f"<p>{SECTION_MARK} " + " ".join(rng.choice(words) for _ in range(70)) + ".</p>" for _ in range(2))
    return html[:at] + f"<h2>{SECTION_MARK} notes</h2>" + paragraphs + html[at:]


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_site(site: Site, work: Path, seed: int) -> dict[str, Any]:
    copy = work / "site"
    shutil.copytree(site.root, copy, symlinks=False, ignore_dangling_symlinks=True)
    if site.footer_added:
        for path in _html_files(copy):
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            path.write_text(text.replace("</body>", site.footer_added[0] + "</body>", 1), encoding="utf-8",
                            errors="surrogateescape")
    result: dict[str, Any] = {"site": site.name}
    with SiteServer(root=copy) as server:
        start = f"{server.url}/{site.start}"
        state = work / "state"

        def run(n: int) -> tuple[list[dict], list[dict]]:
            t0 = time.monotonic()
            code, err = crawl(start, work / f"c{n}.jsonl", state, "--chunks", str(work / f"k{n}.jsonl"))
            if code:
                raise SystemExit(f"{site.name}: crawl {n} exited {code}: {err[-2000:]}")
            result[f"crawl{n}_s"] = round(time.monotonic() - t0, 1)
            return read_records(work / f"c{n}.jsonl"), read_records(work / f"k{n}.jsonl")

        pages1, chunks1 = run(1)
        pages2, chunks2 = run(2)
        ids1 = {c["chunk_id"] for c in chunks1}
        ids2 = {c["chunk_id"] for c in chunks2 if c["change"] != "removed"}
        result["pages"] = len([p for p in pages1 if "markdown" in p])
        result["chunks"] = len(ids1)
        result["unchanged_recrawl"] = {"changes": dict(Counter(c["change"] for c in chunks2)),
                                       "same_ids": len(ids1 & ids2), "of": len(ids1)}

        # the edits
        rng = random.Random(seed)
        md_of = {_path_of(p["url"]): p.get("markdown") or "" for p in pages1 if "markdown" in p}
        candidates = sorted(path for path, md in md_of.items() if path != site.start and (copy / path).is_file())
        rng.shuffle(candidates)
        edited, sectioned, deleted = [], [], []
        runs: dict[str, str] = {}
        for path in candidates:
            file = copy / path
            html = file.read_text(encoding="utf-8", errors="surrogateescape")
            if len(edited) < EDITED_PAGES:
                done = _edit_paragraph(html, md_of[path], rng)
                if done is not None:
                    file.write_text(done[0], encoding="utf-8", errors="surrogateescape")
                    edited.append(path)
                    runs[path] = done[1]
                    continue
            if len(sectioned) < SECTION_PAGES and len(md_of[path]) > 2000:
                new = _add_section(html, rng)
                if new is not None:
                    file.write_text(new, encoding="utf-8", errors="surrogateescape")
                    sectioned.append(path)
                    continue
            if len(deleted) < DELETED_PAGES and len(edited) == EDITED_PAGES and len(sectioned) == SECTION_PAGES:
                file.unlink()
                deleted.append(path)
            if len(deleted) == DELETED_PAGES:
                break
        footers = 0
        for path in _html_files(copy):
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            if site.footer_date:
                text, n = re.subn(site.footer_date[0], site.footer_date[1], text)
            else:
                n = text.count(site.footer_added[0])
                text = text.replace(site.footer_added[0], site.footer_added[1])
            if n:
                footers += 1
                path.write_text(text, encoding="utf-8", errors="surrogateescape")
        result["edits"] = {"paragraph": edited, "section": sectioned, "deleted": deleted, "footers_changed": footers}

        pages3, chunks3 = run(3)
    result["page_changes"] = dict(Counter(p.get("change") for p in pages3))
    result["chunk_changes"] = dict(Counter(c["change"] for c in chunks3))
    by_page = _chunks_by_url(chunks3)
    before = _chunks_by_url(chunks1)
    markdown_of = {c["chunk_id"]: c["markdown"] for c in chunks1}
    truth: dict[str, Any] = {"paragraph": [], "section": [], "deleted": [], "unedited_pages_changed": [],
                             "pages_new_to_the_output": []}
    for path, chunks in sorted(by_page.items()):
        new = [c for c in chunks if c["change"] == "new"]
        removed = [c for c in chunks if c["change"] == "removed"]
        if path in edited:
            # the chunks that held the edited words: the removed ones must all have (one edit can split or
            # merge the chunk holding it, so a new chunk may hold the rest of that chunk, not the edit)
            truth["paragraph"].append({
                "page": path, "new": len(new), "removed": len(removed),
                "new_with_edit": sum(EDIT_MARK in c["markdown"] for c in new),
                "removed_without_edited_words": sum(runs[path] not in " ".join(markdown_of.get(c["chunk_id"], "").split())
                                                    for c in removed)})
        elif path in sectioned:
            truth["section"].append({"page": path, "new": len(new), "removed": len(removed),
                                     "new_without_section": sum(SECTION_MARK not in c["markdown"] for c in new)})
        elif path in deleted:
            truth["deleted"].append({"page": path, "removed": len(removed), "had": len(before.get(path, [])),
                                     "new": len(new)})
        elif path not in md_of:
            # not in the first crawl's output (an exact copy of another page, dropped by the finishing pass,
            # that is not a copy any more once that page was edited or deleted): all its chunks are new
            truth["pages_new_to_the_output"].append({"page": path, "new": len(new), "removed": len(removed),
                                                     "unchanged": len(chunks) - len(new) - len(removed)})
        elif new or removed:
            truth["unedited_pages_changed"].append({"page": path, "new": len(new), "removed": len(removed)})
    result["truth"] = truth
    result["never_split"] = {
        "crawl1": _never_split(pages1, chunks1),
        "crawl3": _never_split(pages3, chunks3),
    }
    result["markdown"] = [p.get("markdown") or "" for p in pages1 if p.get("markdown")]
    result["urls"] = [p["url"] for p in pages1 if p.get("markdown")]
    result["crawl1_file"] = str(work / "c1.jsonl")
    return result


def speed(markdowns: list[tuple[str, str]]) -> dict[str, float]:
    total = sum(len(md.encode("utf-8", "surrogatepass")) for _, md in markdowns)
    params = ChunkParams()
    best = float("inf")
    for _ in range(SPEED_RUNS):
        t0 = time.process_time()
        for url, md in markdowns:
            chunk_markdown(md, url, params)
        best = min(best, time.process_time() - t0)
    return {"markdown_mb": round(total / 1e6, 2), "cpu_s": round(best, 3), "mb_per_cpu_s": round(total / 1e6 / best, 1)}


def command_speed(crawl_files: list[str], work: Path) -> dict[str, float]:
    """``boilerstrip chunk`` end to end (read the crawl's JSONL, chunk, write), CPU seconds of the child."""
    out: dict[str, float] = {}
    total_bytes = 0
    total_cpu = 0.0
    for n, path in enumerate(crawl_files):
        before = _cpu_children()
        done = subprocess.run([sys.executable, "-m", "boilerstrip", "chunk", path, "-o", str(work / f"speed{n}.jsonl")],
                              cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"boilerstrip chunk exited {done.returncode}: {done.stderr[-1000:]}")
        total_cpu += _cpu_children() - before
        total_bytes += sum(len((r.get("markdown") or "").encode("utf-8", "surrogatepass")) for r in read_records(Path(path)))
    out["markdown_mb"] = round(total_bytes / 1e6, 2)
    out["cpu_s"] = round(total_cpu, 2)
    out["mb_per_cpu_s"] = round(total_bytes / 1e6 / total_cpu, 1)
    return out


def bars(results: list[dict[str, Any]], chunker: dict[str, float]) -> list[str]:
    missed = []
    for r in results:
        name = r["site"]
        same = r["unchanged_recrawl"]
        if same["same_ids"] != same["of"] or set(same["changes"]) != {"unchanged"}:
            missed.append(f"{name}: unchanged recrawl kept {same['same_ids']}/{same['of']} IDs")
        t = r["truth"]
        for e in t["paragraph"]:
            if (e["new"] > MAX_CHUNKS_PER_EDIT or e["removed"] > MAX_CHUNKS_PER_EDIT or not e["new_with_edit"]
                    or e["removed_without_edited_words"] >= e["removed"]):
                missed.append(f"{name}: paragraph edit on {e['page']}: {e}")
        if len(t["paragraph"]) != EDITED_PAGES:
            missed.append(f"{name}: {len(t['paragraph'])} edited pages reported changes, expected {EDITED_PAGES}")
        for e in t["section"]:
            if e["removed"] > MAX_CHUNKS_PER_EDIT or e["new_without_section"] > MAX_CHUNKS_PER_EDIT or not e["new"]:
                missed.append(f"{name}: section added on {e['page']}: {e}")
        for e in t["deleted"]:
            if e["removed"] != e["had"] or e["new"]:
                missed.append(f"{name}: deleted page {e['page']}: {e}")
        if len(t["deleted"]) != DELETED_PAGES:
            missed.append(f"{name}: {len(t['deleted'])} deleted pages lost their chunks, expected {DELETED_PAGES}")
        for e in t["pages_new_to_the_output"]:
            if e["removed"] or e["unchanged"]:
                missed.append(f"{name}: page new to the output {e['page']}: {e}")
        if t["unedited_pages_changed"]:
            missed.append(f"{name}: chunks changed on {len(t['unedited_pages_changed'])} unedited pages")
        for crawl_name, counts in r["never_split"].items():
            split = {k: v for k, v in counts.items() if k.endswith(":split")}
            if split:
                missed.append(f"{name} {crawl_name}: blocks split across chunks: {split}")
    if chunker["mb_per_cpu_s"] < MIN_MB_PER_CPU_S:
        missed.append(f"chunker speed {chunker['mb_per_cpu_s']} MB/CPU s < {MIN_MB_PER_CPU_S}")
    return missed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", nargs="+", default=list(SITES), choices=list(SITES))
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--json", metavar="FILE", help="also write the figures here")
    parser.add_argument("--speed-only", nargs="+", metavar="CRAWL.jsonl",
                        help="no crawl: only the chunker's speed over these crawls' Markdown")
    args = parser.parse_args(argv)
    if args.speed_only:
        markdowns = [(r["url"], r["markdown"]) for path in args.speed_only for r in read_records(Path(path))
                     if r.get("markdown")]
        chunker = speed(markdowns)
        print(f"chunker: {chunker['markdown_mb']} MB of Markdown in {chunker['cpu_s']} CPU s = "
              f"{chunker['mb_per_cpu_s']} MB/CPU s (best of {SPEED_RUNS})")
        return 0 if chunker["mb_per_cpu_s"] >= MIN_MB_PER_CPU_S else 1
    results = []
    with tempfile.TemporaryDirectory(prefix="chunk-bench-") as tmp:
        for name in args.sites:
            site = SITES[name]
            if not site.root.is_dir():
                print(f"{name}: not installed ({site.root}), skipped")
                continue
            work = Path(tmp) / name
            work.mkdir()
            results.append(run_site(site, work, args.seed))
        if not results:
            print("no site installed")
            return 1
        markdowns = [(u, m) for r in results for u, m in zip(r.pop("urls"), r.pop("markdown"))]
        chunker = speed(markdowns)
        command = command_speed([r.pop("crawl1_file") for r in results], Path(tmp))
    for r in results:
        t = r["truth"]
        print(f"{r['site']}: {r['pages']} pages, {r['chunks']} chunks; crawls {r['crawl1_s']} / {r['crawl2_s']} / {r['crawl3_s']} s")
        same = r["unchanged_recrawl"]
        print(f"  unchanged recrawl: {same['same_ids']}/{same['of']} chunk IDs kept ({same['same_ids'] / same['of']:.1%}); "
              f"changes {same['changes']}")
        print(f"  edits: {len(r['edits']['paragraph'])} paragraphs, {len(r['edits']['section'])} sections added, "
              f"{len(r['edits']['deleted'])} pages deleted, {r['edits']['footers_changed']} footers changed")
        print(f"  edited crawl: pages {r['page_changes']}; chunks {r['chunk_changes']}")
        for e in t["paragraph"]:
            print(f"    paragraph edited on {e['page']}: {e['new']} new ({e['new_with_edit']} holding the edit), "
                  f"{e['removed']} removed ({e['removed_without_edited_words']} that did not hold the edited words)")
        for e in t["section"]:
            print(f"    section added on {e['page']}: {e['new']} new ({e['new_without_section']} without the section), {e['removed']} removed")
        for e in t["deleted"]:
            print(f"    page deleted {e['page']}: {e['removed']} of its {e['had']} chunks removed, {e['new']} new")
        for e in t["pages_new_to_the_output"]:
            print(f"    page new to the output (a dropped duplicate of an edited or deleted page) {e['page']}: "
                  f"{e['new']} new")
        print(f"    unedited pages with a chunk change: {len(t['unedited_pages_changed'])}"
              + (f" {t['unedited_pages_changed'][:5]}" if t["unedited_pages_changed"] else ""))
        for crawl_name, counts in r["never_split"].items():
            ok = {k.split(":")[0]: v for k, v in counts.items() if k.endswith(":ok")}
            split = sum(v for k, v in counts.items() if k.endswith(":split"))
            print(f"  never split ({crawl_name}): {split} blocks split; blocks checked {ok}")
    print(f"chunker: {chunker['markdown_mb']} MB of Markdown in {chunker['cpu_s']} CPU s = {chunker['mb_per_cpu_s']} MB/CPU s (best of {SPEED_RUNS})")
    print(f"boilerstrip chunk end to end (JSON in and out): {command['markdown_mb']} MB in {command['cpu_s']} CPU s "
          f"= {command['mb_per_cpu_s']} MB/CPU s")
    missed = bars(results, chunker)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"sites": results, "chunker": chunker, "command": command,
                                               "missed": missed}, indent=1))
    print("bars missed: " + "; ".join(missed) if missed else "all bars met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
