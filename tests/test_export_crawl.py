"""Two overlapping crawls of a loopback site with every opt-out signal, exported as a dataset.

Site "garden" (crawl A starts at /a, crawl B at /b; both reach /s1../s3) and site "signal" (in crawl B only),
whose robots.txt says ``Content-Signal: ai-train=no`` to everyone. Checked: the crawl records each
signal; the export leaves opted-out pages out (or includes them, with a warning, on request), deduplicates
across crawls whatever the input order, keeps its index so a later export adds only new documents, replaces
PII, writes excluded.jsonl / stats.json / a card, and the shards read with pyarrow and ``datasets``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from _crawlsite import FAST
from _incrawl import run_cli
from conftest import Reply, SiteServer, run_crawl
from test_export_optout import OTHER_CRAWLERS

from boilerstrip.export import run_export

HTML = ("Content-Type", "text/html; charset=utf-8")
VOCAB = ("compost soil seed water bed tomato garlic apple leaf winter spring summer autumn plot member shed path "
         "fence hedge worm slug rain frost root shoot bloom harvest basket spade fork barrow hose greenhouse "
         "frame netting cane string label tray pot mulch manure bean pea onion leek kale chard squash").split()


def prose(seed: int, words: int = 110) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < words:
        out += ["The"] + [rng.choice(VOCAB) for _ in range(rng.randint(7, 12))] + ["is", "what", "we", "have", "with",
                                                                                   "the", "rest", "of", "it."]
    return " ".join(out)


def near(text: str) -> str:
    words = text.split()
    words[20], words[60] = "rhubarb", "courgette"  # two words in ~110: Jaccard of 5-grams ~0.83
    return " ".join(words)


def article(title: str, text: str, head: str = "", headers: tuple = ()) -> Reply:
    html = (f"<!DOCTYPE html><html lang='en'><head><title>{title}</title>{head}</head><body>"
            f"<nav><a href='/a'>home</a></nav><main><h1>{title}</h1><p>{text}</p></main></body></html>")
    return Reply(200, html.encode(), (HTML, *headers))


def hub(title: str, links: list[str]) -> Reply:
    items = "".join(f"<li><a href='{href}'>{href}</a></li>" for href in links)
    html = (f"<!DOCTYPE html><html lang='en'><head><title>{title}</title></head><body><main><h1>{title}</h1>"
            f"<p>{prose(1000 + zlib.crc32(title.encode()) % 1000, 60)}</p><ul>{items}</ul></main></body></html>")
    return Reply(200, html.encode(), (HTML,))


GARDEN_ROBOTS = (
    "User-agent: Scrapy\nDisallow: /\n\n"
    "User-agent: *\nContent-Signal: ai-train=no\nDisallow: /\n\n"  # not our group: does not apply to us
    "User-agent: boilerstrip\nContent-Usage: /usage/ train-ai=n\nDisallow: /private/\nAllow: /\n"
)
TDMREP = b'[{"location": "/reserved/*", "tdm-reservation": 1}, {"location": "/*", "tdm-reservation": 0}]'
#: path -> the signals the crawl must record for it
OPTED_OUT = {
    "/optout/meta": ["meta-robots:noai"],
    "/optout/header": ["x-robots-tag:noai"],
    "/optout/tdm-header": ["tdm-reservation:header"],
    "/optout/tdm-meta": ["tdm-reservation:meta"],
    "/reserved/doc": ["tdmrep.json"],
    "/usage/doc": ["robots.txt:content-usage:train-ai=n"],
}
PII_TEXT = "Write to jane.doe@mail.example.org or ping 93.184.216.34 but not 127.0.0.1 for the plot rota. "


def garden_routes() -> dict:
    a_links = ["/s1", "/s2", "/s3", "/a1", "/a2", "/fr", "/otherbot", *OPTED_OUT]
    b_links = ["/s1", "/s2", "/s3", "/b1", "/copies/b-copy-of-a1", "/copies/b-near-a2", "/pii"]
    return {
        "/robots.txt": Reply(200, GARDEN_ROBOTS.encode(), (("Content-Type", "text/plain"),)),
        "/.well-known/tdmrep.json": Reply(200, TDMREP, (("Content-Type", "application/json"),)),
        "/a": hub("Crawl A start", a_links),
        "/b": hub("Crawl B start", b_links),
        **{f"/s{i}": article(f"Shared {i}", prose(i)) for i in (1, 2, 3)},
        "/a1": article("Only A one", prose(11)),
        "/a2": article("Only A two", prose(12)),
        "/b1": article("Only B one", prose(21)),
        "/copies/b-copy-of-a1": article("Only A one", prose(11)),  # exact duplicate across crawls
        "/copies/b-near-a2": article("Only A two", near(prose(12))),  # near duplicate across crawls
        "/pii": article("Rota", PII_TEXT + prose(31)),
        "/fr": article("Jardin", "Le jardin partagé ouvre ses portes samedi prochain pour tous les habitants du "
                       "quartier qui veulent apprendre à composter leurs déchets de cuisine et à semer des radis."),
        "/otherbot": article("Other bot", prose(41), headers=(("X-Robots-Tag", "otherbot: noai"),)),
        "/optout/meta": article("Meta", prose(51), head="<meta name='robots' content='index, noai, noimageai'>"),
        "/optout/header": article("Header", prose(52), headers=(("X-Robots-Tag", "noai"),)),
        "/optout/tdm-header": article("TDM header", prose(53), headers=(("tdm-reservation", "1"),)),
        "/optout/tdm-meta": article("TDM meta", prose(54), head="<meta name='tdm-reservation' content='1'>"),
        "/reserved/doc": article("Reserved", prose(55)),
        "/usage/doc": article("Usage", prose(56)),
    }


#: one worker for the module under ``pytest-xdist --dist loadgroup``: its two crawls run once, not per worker
pytestmark = pytest.mark.xdist_group("test_export_crawl")

SIGNAL_ROUTES = {
    "/robots.txt": Reply(200, b"User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n",
                         (("Content-Type", "text/plain"),)),
    "/": article("Signal site", prose(61)),
}


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crawls")
    garden = SiteServer(routes=garden_routes()).start()
    signal = SiteServer(routes=SIGNAL_ROUTES).start()
    try:
        args = [*FAST, "--max-depth", "1"]
        # two independent crawls (each its own state: B is not a recurrence of A, so no tombstones)
        proc_a, records_a = run_crawl(garden.url + "/a", out=folder / "crawl-a.jsonl", args=[*args, "--state", str(folder / "state-a")])
        assert proc_a.returncode == 0, proc_a.stderr[-3000:]
        proc_b, records_b = run_crawl(garden.url + "/b", signal.url + "/", out=folder / "crawl-b.jsonl",
                                      args=[*args, "--state", str(folder / "state-b")])
        assert proc_b.returncode == 0, proc_b.stderr[-3000:]
        yield {"folder": folder, "a": folder / "crawl-a.jsonl", "b": folder / "crawl-b.jsonl", "garden": garden,
               "signal": signal, "records_a": records_a, "records_b": records_b}
    finally:
        garden.stop()
        signal.stop()


def path_of(url: str) -> str:
    return "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"


def rows_of(out) -> list[dict]:
    import pyarrow.parquet as pq

    return [r for f in sorted((out / "data").glob("train-*.parquet")) for r in pq.read_table(f).to_pylist()]


def excluded_of(out) -> list[dict]:
    return [json.loads(x) for x in (out / "excluded.jsonl").read_text(encoding="utf-8").splitlines()]


# -- the crawl records what it found -------------------------------------------------------------------------
def test_crawl_records_each_opt_out_signal(crawls) -> None:
    found = {path_of(r["url"]): r["ai_opt_out"] for r in crawls["records_a"] + crawls["records_b"]}
    for path, signals in OPTED_OUT.items():
        assert found[path] == signals, path
    assert found["/"] == ["robots.txt:content-signal:ai-train=no"]  # the signal site
    for path in ("/a", "/b", "/s1", "/a1", "/otherbot", "/pii"):
        assert found[path] == [], path  # the "*" group's Content-Signal is not ours; otherbot's noai neither


def test_tdmrep_is_one_request_per_site_and_not_a_page(crawls) -> None:
    garden = crawls["garden"]
    # fetched once per crawl (two crawls), before any page
    assert len(garden.hits("/.well-known/tdmrep.json")) == 2
    ledger = crawls["folder"] / "crawl-a.ledger.jsonl"
    assert ledger.exists()
    assert "tdmrep" not in ledger.read_text(encoding="utf-8")
    assert not any("tdmrep" in r["url"] for r in crawls["records_a"])
    # robots.txt for our token: /private/ is never fetched, and a group for "Scrapy" does not apply to us
    assert not garden.hits("/private/x")


def test_every_request_carries_our_own_user_agent(crawls) -> None:
    agents = {entry.headers.get("user-agent", "") for s in ("garden", "signal") for entry in crawls[s].log}
    assert agents and all(a.lower().startswith("boilerstrip/") for a in agents), agents
    assert not [t for a in agents for t in OTHER_CRAWLERS if t in a.lower()]


# -- the export ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def export_ab(crawls, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "ab"
    proc = run_cli(["export", crawls["a"], crawls["b"], "-o", out, "--row-group-rows", "4"], timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc


def test_export_applies_every_rule(crawls, export_ab) -> None:
    out, proc = export_ab
    rows = rows_of(out)
    by_path = {path_of(r["url"]): r for r in rows}
    excluded = excluded_of(out)
    reasons = {(path_of(e["url"]), e["reason"]) for e in excluded}
    # opted-out pages are left out, each with its reason and signals
    for path in [*OPTED_OUT, "/"]:
        assert path not in by_path, path
        assert (path, "ai_opt_out") in reasons, path
    assert {tuple(e["signals"]) for e in excluded if e["reason"] == "ai_opt_out"} >= {tuple(s) for s in OPTED_OUT.values()}
    # the pages both crawls reached: once
    assert [path_of(r["url"]) for r in rows].count("/s1") == 1
    # (one URL in two crawls is two versions of a page: the newest is kept, issue 26 item 9)
    assert sum(1 for e in excluded if path_of(e["url"]) == "/s1" and e["reason"] == "older_version") == 1
    # duplicates across crawls: the shorter URL is kept
    assert "/a1" in by_path and "/a2" in by_path
    assert ("/copies/b-copy-of-a1", "exact_duplicate") in reasons
    near = [e for e in excluded if e["reason"] == "near_duplicate"]
    assert [path_of(e["url"]) for e in near] == ["/copies/b-near-a2"]
    assert near[0]["of"] == by_path["/a2"]["id"] and 0.5 < near[0]["similarity"] < 1
    # PII replaced by default; a private address stays
    assert "email@example.com" in by_path["/pii"]["text"] and "192.0.2.1" in by_path["/pii"]["text"]
    assert "jane.doe" not in by_path["/pii"]["text"] and "127.0.0.1" in by_path["/pii"]["text"]
    # FineWeb-style fields
    row = by_path["/a1"]
    assert row["crawl"] == "crawl-a" and by_path["/b1"]["crawl"] == "crawl-b"
    assert row["language"] == "en" and row["language_score"] > 0.5 and by_path["/fr"]["language"] == "fr"
    assert row["word_count"] == row["quality"]["words"] > 50
    assert row["date"].endswith("Z") and row["title"].startswith("Only A one") and row["site"].startswith("127.0.0.1:")
    assert row["quality"]["extraction_method"] and 0 <= row["quality"]["template_removed_fraction"] < 1
    assert len({r["id"] for r in rows}) == len(rows)
    # signals are recorded, not used: nothing left out by a filter
    assert {e["reason"] for e in excluded} == {"ai_opt_out", "exact_duplicate", "near_duplicate", "older_version"}


def test_export_accounts_for_everything(crawls, export_ab) -> None:
    out, proc = export_ab
    stats = json.loads((out / "stats.json").read_text())
    rows, excluded = rows_of(out), excluded_of(out)
    total_in = len(crawls["records_a"]) + len(crawls["records_b"])
    assert stats["documents"] == len(rows) and stats["excluded"] == len(excluded)
    assert len(rows) + len(excluded) == total_in == sum(i["records"] for i in stats["inputs"])
    assert stats["excluded_by_reason"]["ai_opt_out"] == len(OPTED_OUT) + 1
    assert stats["languages"]["fr"] == 1 and sum(stats["languages"].values()) == len(rows)
    assert sum(s["kept"] for s in stats["sites"].values()) == len(rows)
    assert stats["pii_replaced"] == {"email": 1, "ip": 1}
    card = (out / "README.md").read_text()
    header = card.split("---\n")[1]
    import yaml

    meta = yaml.safe_load(header)
    assert meta["language"] == ["en", "fr"]  # most documents first
    assert meta["size_categories"] == ["n<1K"] and meta["opt_out_policy"] == "excluded"
    assert meta["configs"][0]["data_files"][0]["path"] == "data/train-*.parquet"
    assert len(meta["source_sites"]) == 2 and ".." in meta["crawl_dates"]
    assert "| `ai_opt_out` | 7 |" in card


def test_shards_read_with_pyarrow_and_datasets(export_ab) -> None:
    out, _ = export_ab
    import pyarrow.parquet as pq

    shard = sorted((out / "data").glob("*.parquet"))[0]
    meta = pq.ParquetFile(shard).metadata
    assert meta.num_row_groups > 1 and meta.row_group(0).num_rows == 4
    code = (
        "import datasets, json, sys\n"
        "ds = datasets.load_dataset('parquet', data_files=sys.argv[1], split='train', cache_dir=sys.argv[2])\n"
        "print(json.dumps({'rows': ds.num_rows, 'columns': ds.column_names}))\n"
    )
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(out.parent / "hf"))
    proc = subprocess.run([sys.executable, "-c", code, str(out / "data" / "*.parquet"), str(out.parent / "hf")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["rows"] == len(rows_of(out))
    assert result["columns"][:4] == ["text", "id", "url", "date"] and "ai_opt_out" in result["columns"]


def _ids(out) -> list[tuple[str, str]]:
    return sorted((r["id"], r["text"]) for r in rows_of(out))


def test_input_order_does_not_change_the_rows(crawls, export_ab, tmp_path) -> None:
    out, _ = export_ab
    run_export([crawls["b"], crawls["a"]], tmp_path / "ba")
    assert _ids(tmp_path / "ba") == _ids(out)
    key = lambda e: (e["url"], e["reason"], e.get("of") or "")  # noqa: E731
    assert sorted(map(key, excluded_of(tmp_path / "ba"))) == sorted(map(key, excluded_of(out)))


def test_a_twice_gives_the_rows_of_a_once(crawls, tmp_path) -> None:
    run_export([crawls["a"]], tmp_path / "a")
    stats = run_export([crawls["a"], crawls["a"]], tmp_path / "aa")
    assert _ids(tmp_path / "aa") == _ids(tmp_path / "a")
    # the second copy of each page is an older version of it (issue 26 item 9: one URL, one version kept)
    pages = [r for r in map(json.loads, Path(crawls["a"]).read_text().splitlines()) if r.get("outcome") not in ("failed", "filtered")]
    assert stats["excluded_by_reason"]["older_version"] == len(pages) >= len(_ids(tmp_path / "a"))
    assert "exact_duplicate" not in stats["excluded_by_reason"]


def test_index_adds_only_documents_not_exported_before(crawls, export_ab, tmp_path) -> None:
    index = tmp_path / "index"
    first = run_export([crawls["a"]], tmp_path / "a", index_dir=index)
    second = run_export([crawls["b"]], tmp_path / "b", index_dir=index)
    rows_a, rows_b = rows_of(tmp_path / "a"), rows_of(tmp_path / "b")
    # together they are the rows of one export of A and B
    assert sorted((r["id"], r["text"]) for r in rows_a + rows_b) == _ids(export_ab[0])
    assert {path_of(r["url"]) for r in rows_b} == {"/b", "/b1", "/pii"}
    reasons = {path_of(e["url"]): e for e in excluded_of(tmp_path / "b")}
    assert reasons["/s1"]["reason"] == "already_exported"
    assert reasons["/copies/b-near-a2"]["reason"] == "near_duplicate" and reasons["/copies/b-near-a2"]["earlier_export"]
    assert second["index_documents"] == first["documents"] + second["documents"]
    # once more: nothing new
    third = run_export([crawls["a"], crawls["b"]], tmp_path / "again", index_dir=index)
    assert third["documents"] == 0 and set(third["excluded_by_reason"]) <= {"already_exported", "ai_opt_out",
                                                                              "exact_duplicate", "near_duplicate",
                                                                              "older_version"}


def test_an_export_run_again_into_its_folder_replaces_itself_in_the_index(crawls, tmp_path) -> None:
    # the same export run again (a retry, a cron job) into the same folder with the same index: every document
    # was "already_exported" by the very dataset it replaced, and an empty dataset was written over a full one
    index = tmp_path / "index"
    first = run_export([crawls["a"]], tmp_path / "a", index_dir=index)
    rows = sorted(r["id"] for r in rows_of(tmp_path / "a"))
    other = run_export([crawls["a"]], tmp_path / "other", index_dir=index)
    assert other["documents"] == 0  # another folder: already exported, as before
    again = run_export([crawls["a"]], tmp_path / "a", index_dir=index)
    assert again["documents"] == first["documents"] > 0 and sorted(r["id"] for r in rows_of(tmp_path / "a")) == rows
    assert again["replaced"] == {"run": first["run"], "index_documents_taken_out": first["documents"]}
    assert again["index_documents"] == first["index_documents"]
    proc = run_cli(["export", crawls["a"], "-o", tmp_path / "a", "--index", index], timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"boilerstrip export: replaced the export {again['run']} in {tmp_path / 'a'}: its {first['documents']} " \
           "document(s) taken out of the index first" in proc.stderr


def test_opted_out_pages_only_on_request_with_a_warning(crawls, tmp_path) -> None:
    out = tmp_path / "all"
    proc = run_cli(["export", crawls["a"], "-o", out, "--include-opted-out", "--keep-pii"], timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "WARNING" in proc.stderr and "opted-out" in proc.stderr
    rows = {path_of(r["url"]): r for r in rows_of(out)}
    for path, signals in OPTED_OUT.items():
        assert rows[path]["ai_opt_out"] == signals
    stats = json.loads((out / "stats.json").read_text())
    assert stats["opted_out_included"] == len(OPTED_OUT) and "ai_opt_out" not in stats["excluded_by_reason"]
    assert "opt_out_policy: \"included" in (out / "README.md").read_text()


def test_keep_pii_keeps_addresses(crawls, tmp_path) -> None:
    from boilerstrip.export import ExportParams

    run_export([crawls["b"]], tmp_path / "pii", ExportParams(keep_pii=True))
    text = next(r["text"] for r in rows_of(tmp_path / "pii") if path_of(r["url"]) == "/pii")
    assert "jane.doe@mail.example.org" in text and "93.184.216.34" in text
