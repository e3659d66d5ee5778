"""``boilerstrip chunk`` on small hand-made crawl records: exit codes, --state, --changes-only, removals."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from boilerstrip.cli import main
from tests.conftest import read_jsonl

SITE = "https://docs.example.org"


def _page(path: str, seed: int, sections: int = 3) -> dict:
    rng = random.Random(seed)
    words = "page cache index journal lock reader writer schema view trigger".split()
    parts = [f"# Page {path}"]
    for s in range(sections):
        parts.append(f"## Part {s}")
        parts += [" ".join(rng.choice(words) for _ in range(rng.randint(40, 120))) + "." for _ in range(4)]
    markdown = "\n\n".join(parts)
    return {"schema_version": 1, "url": SITE + path, "title": f"Page {path}", "markdown": markdown,
            "text": markdown.replace("#", ""), "change": "new"}


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _by_change(records: list[dict]) -> dict[str, set]:
    out: dict[str, set] = {}
    for r in records:
        out.setdefault(r.get("change"), set()).add(r["chunk_id"])
    return out


def test_chunk_records_have_their_fields(tmp_path: Path, capsys) -> None:
    crawl = _write(tmp_path / "crawl.jsonl", [_page("/a.html", 1), _page("/b.html", 2)])
    assert main(["chunk", str(crawl), "-o", str(tmp_path / "chunks.jsonl")]) == 0
    chunks = read_jsonl(tmp_path / "chunks.jsonl")
    assert chunks and all("change" not in c for c in chunks)  # no state: no change status
    first = chunks[0]
    assert list(first) == ["chunk_id", "url", "title", "headings", "index", "char_start", "char_end", "tokens",
                           "chars", "flags", "markdown", "text"]
    page = _page("/a.html", 1)["markdown"]
    for c in chunks:
        if c["url"] == SITE + "/a.html":
            assert page[c["char_start"]:c["char_end"]] == c["markdown"] and c["chars"] == len(c["markdown"])
    assert "2 pages" in capsys.readouterr().err


def test_state_reports_new_unchanged_and_removed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    pages = [_page(f"/{i}.html", i) for i in range(6)]
    crawl1 = _write(tmp_path / "c1.jsonl", pages)
    assert main(["chunk", str(crawl1), "-o", str(tmp_path / "k1.jsonl"), "--state", str(state)]) == 0
    first = read_jsonl(tmp_path / "k1.jsonl")
    assert {c["change"] for c in first} == {"new"}
    assert (state / "chunks.sqlite3").is_file()

    # the same crawl again: every chunk unchanged, with the same IDs
    assert main(["chunk", str(crawl1), "-o", str(tmp_path / "k2.jsonl"), "--state", str(state)]) == 0
    second = read_jsonl(tmp_path / "k2.jsonl")
    assert {c["change"] for c in second} == {"unchanged"}
    assert [c["chunk_id"] for c in second] == [c["chunk_id"] for c in first]

    # page 1 edited (one paragraph), page 2 removed (tombstone), page 3 missing, a new page 9
    edited = dict(pages[1])
    paragraphs = edited["markdown"].split("\n\n")
    paragraphs[3] = paragraphs[3].replace("page", "PAGE") + " Edited."
    edited["markdown"] = "\n\n".join(paragraphs)
    tombstone = {"url": SITE + "/2.html", "change": "removed", "reason": "http_404", "last_seen": "2026-12-01T00:00:00Z"}
    crawl3 = _write(tmp_path / "c3.jsonl", [pages[0], edited, tombstone, pages[4], pages[5], _page("/9.html", 9)])
    assert main(["chunk", str(crawl3), "-o", str(tmp_path / "k3.jsonl"), "--state", str(state)]) == 0
    third = read_jsonl(tmp_path / "k3.jsonl")
    changes = _by_change(third)
    ids_of = {url: {c["chunk_id"] for c in first if c["url"] == SITE + url} for url in ("/1.html", "/2.html", "/3.html")}
    removed = changes["removed"]
    assert ids_of["/2.html"] <= removed and ids_of["/3.html"] <= removed
    edited_removed = removed & ids_of["/1.html"]
    assert 1 <= len(edited_removed) <= 2
    new_urls = {c["url"] for c in third if c["change"] == "new"}
    assert new_urls == {SITE + "/1.html", SITE + "/9.html"}
    assert len([c for c in third if c["change"] == "new" and c["url"].endswith("/1.html")]) <= 2
    for c in third:
        if c["change"] == "removed":
            assert set(c) == {"chunk_id", "change", "url"}
    unchanged_pages = {c["url"] for c in third if c["change"] == "unchanged"}
    assert {SITE + "/0.html", SITE + "/4.html", SITE + "/5.html"} <= unchanged_pages

    # --changes-only: the same crawl once more writes nothing (everything is unchanged now)
    assert main(["chunk", str(crawl3), "-o", str(tmp_path / "k4.jsonl"), "--state", str(state), "--changes-only"]) == 0
    assert read_jsonl(tmp_path / "k4.jsonl") == []


def test_changes_only_writes_what_an_index_must_add_or_delete(tmp_path: Path) -> None:
    state = tmp_path / "state"
    pages = [_page(f"/{i}.html", i) for i in range(4)]
    assert main(["chunk", str(_write(tmp_path / "c1.jsonl", pages)), "-o", str(tmp_path / "k1.jsonl"),
                 "--state", str(state)]) == 0
    crawl2 = _write(tmp_path / "c2.jsonl", pages[:3] + [_page("/3.html", 33)])  # page 3 rewritten
    assert main(["chunk", str(crawl2), "-o", str(tmp_path / "k2.jsonl"), "--state", str(state), "--changes-only"]) == 0
    out = read_jsonl(tmp_path / "k2.jsonl")
    assert out and {c["change"] for c in out} == {"new", "removed"}
    assert {c["url"] for c in out} == {SITE + "/3.html"}
    # replaying the changes on the first run's IDs gives this run's IDs
    index = {c["chunk_id"] for c in read_jsonl(tmp_path / "k1.jsonl")}
    index -= {c["chunk_id"] for c in out if c["change"] == "removed"}
    index |= {c["chunk_id"] for c in out if c["change"] == "new"}
    assert main(["chunk", str(crawl2), "-o", str(tmp_path / "k3.jsonl")]) == 0
    assert index == {c["chunk_id"] for c in read_jsonl(tmp_path / "k3.jsonl")}


def test_a_partial_input_keeps_the_chunks_of_missing_pages(tmp_path: Path) -> None:
    state = tmp_path / "state"
    pages = [_page(f"/{i}.html", i) for i in range(3)]
    assert main(["chunk", str(_write(tmp_path / "c1.jsonl", pages)), "-o", str(tmp_path / "k1.jsonl"),
                 "--state", str(state)]) == 0
    # a --changes-only crawl: its manifest counts unchanged pages it left out
    crawl2 = _write(tmp_path / "c2.jsonl", [_page("/1.html", 11)])
    (tmp_path / "c2.manifest.json").write_text(json.dumps({"reasons": {"filtered:unchanged": 2}}))
    assert main(["chunk", str(crawl2), "-o", str(tmp_path / "k2.jsonl"), "--state", str(state)]) == 0
    out = read_jsonl(tmp_path / "k2.jsonl")
    assert {c["url"] for c in out} == {SITE + "/1.html"}
    # without the manifest, --partial says the same
    crawl3 = _write(tmp_path / "c3.jsonl", [_page("/1.html", 12)])
    assert main(["chunk", str(crawl3), "-o", str(tmp_path / "k3.jsonl"), "--state", str(state), "--partial"]) == 0
    assert {c["url"] for c in read_jsonl(tmp_path / "k3.jsonl")} == {SITE + "/1.html"}


def test_most_of_a_site_missing_at_once_removes_nothing(tmp_path: Path, capsys) -> None:
    state = tmp_path / "state"
    pages = [_page(f"/{i}.html", i, sections=1) for i in range(24)]
    assert main(["chunk", str(_write(tmp_path / "c1.jsonl", pages)), "-o", str(tmp_path / "k1.jsonl"),
                 "--state", str(state)]) == 0
    assert main(["chunk", str(_write(tmp_path / "c2.jsonl", pages[:5])), "-o", str(tmp_path / "k2.jsonl"),
                 "--state", str(state)]) == 0
    assert {c["change"] for c in read_jsonl(tmp_path / "k2.jsonl")} == {"unchanged"}
    assert "19 known pages" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--min-tokens", "500"], "chunk sizes must satisfy"),
    (["--tokenizer", "gpt-7"], "unknown tokenizer"),
    (["--changes-only"], "--changes-only needs --state"),
    (["--tokenizer", "/nowhere/tokenizer.json"], "tokenizer"),
])
def test_bad_arguments_exit_2_before_writing(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    crawl = _write(tmp_path / "crawl.jsonl", [_page("/a.html", 1)])
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", str(crawl), "-o", str(out), *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_tokenizer_that_is_not_installed_exits_2(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    crawl = _write(tmp_path / "crawl.jsonl", [_page("/a.html", 1)])
    assert main(["chunk", str(crawl), "-o", str(tmp_path / "k.jsonl"), "--tokenizer", "tiktoken:cl100k_base"]) == 2
    assert "tiktoken package is not installed" in capsys.readouterr().err
    assert not (tmp_path / "k.jsonl").exists()


@pytest.mark.parametrize("lines", [
    ['{"chunk_id": "x", "url": "https://a/", "markdown": "x"}'],  # a chunks file
    ["just some text"],
    ['{"url": "https://a/", "title": "t"}'],
    [json.dumps({"url": SITE + "/a.html", "markdown": "# A"}), "not json, a torn line"],
    [json.dumps({"url": SITE + "/a.html", "markdown": "# A"})] * 2,  # the same URL twice
])
def test_an_input_that_is_not_a_crawls_records_is_refused(tmp_path: Path, capsys, lines: list[str]) -> None:
    state = tmp_path / "state"
    good = _write(tmp_path / "good.jsonl", [_page("/a.html", 1)])
    assert main(["chunk", str(good), "-o", str(tmp_path / "k0.jsonl"), "--state", str(state)]) == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "k.jsonl"
    assert main(["chunk", str(bad), "-o", str(out), "--state", str(state)]) == 2
    err = capsys.readouterr().err  # what the file is: told by its first lines, or by the line that is wrong
    assert f"{bad} is " in err and "nothing written" in err
    assert "is not a crawl's records" in err or "text that is not JSON lines" in err
    assert not out.exists()
    # the state is untouched: the good crawl again is all unchanged
    assert main(["chunk", str(good), "-o", str(out), "--state", str(state)]) == 0
    assert {c["change"] for c in read_jsonl(out)} == {"unchanged"}


@pytest.mark.parametrize(("content", "said"), [
    (None, "not there (no such file)"),
    ('{"url": "https://a.example/", "outcome": "item", "reason": ""}\n', "a crawl's ledger"),
    ("<!doctype html><html><body>hi</body></html>\n", "an HTML or XML page"),
    ('[{"url": "https://a.example/"}]\n', "a JSON array"),
    ("url,title\nhttps://a.example/,A\n", "text that is not JSON lines"),
])
def test_a_missing_or_wrong_input_exits_2_saying_what_it_is(tmp_path: Path, capsys, content, said) -> None:
    """As ``check`` and ``export`` do: exit 2 before anything is written, the state untouched, and the
    message says what the file looks like instead of a crawl's records."""
    source = tmp_path / "in.jsonl"
    if content is not None:
        source.write_text(content)
    state = tmp_path / "state"
    assert main(["chunk", str(source), "-o", str(tmp_path / "k.jsonl"), "--state", str(state)]) == 2
    err = capsys.readouterr().err
    assert said in err and "nothing written" in err
    assert not (tmp_path / "k.jsonl").exists()
    assert not state.exists()


def test_an_empty_crawl_output_chunks_to_nothing(tmp_path: Path, capsys) -> None:
    (tmp_path / "in.jsonl").write_text("")
    assert main(["chunk", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "k.jsonl")]) == 0
    assert "is empty" in capsys.readouterr().err
    assert (tmp_path / "k.jsonl").read_text() == ""


def test_crawl_chunks_reports_only_the_edited_pages_chunks(tmp_path: Path) -> None:
    """``crawl --chunks`` after the finishing pass, twice: a text edit on one page and a new footer date
    on every page (template churn) change the chunks of the edited page only."""
    from _crawlsite import crawl_with_state as crawl
    from benchmarks.recrawl_benchmark import EditableSite

    site = EditableSite(12)
    server = site.serve()
    try:
        start = server.url + "/"
        code, err = crawl(start, tmp_path / "c1.jsonl", tmp_path / "state", "--chunks", str(tmp_path / "k1.jsonl"))
        assert code == 0, err[-2000:]
        first = read_jsonl(tmp_path / "k1.jsonl")
        assert first and {c["change"] for c in first} == {"new"}
        assert (tmp_path / "state" / "chunks.sqlite3").is_file()
        edited = site.paths[5]
        site.edit_text(edited)
        site.change_template("2 December 2026")
        code, err = crawl(start, tmp_path / "c2.jsonl", tmp_path / "state", "--chunks", str(tmp_path / "k2.jsonl"))
        assert code == 0, err[-2000:]
        assert "chunk changes:" in err
        # --changes-only: the chunks file holds only what an index must add or delete
        site.edit_text(site.paths[7])
        code, err = crawl(start, tmp_path / "c3.jsonl", tmp_path / "state", "--chunks", str(tmp_path / "k3.jsonl"),
                          "--changes-only")
        assert code == 0, err[-2000:]
        third = read_jsonl(tmp_path / "k3.jsonl")
        assert third and {c["change"] for c in third} == {"new", "removed"}
        assert {c["url"] for c in third} == {server.url + site.paths[7]}
    finally:
        server.stop()
    second = read_jsonl(tmp_path / "k2.jsonl")
    changed = {c["url"] for c in second if c["change"] != "unchanged"}
    assert changed == {server.url + edited}
    assert {c["change"] for c in second if c["url"] == server.url + edited} >= {"new", "removed"}
    assert all("December" not in c.get("markdown", "") for c in first + second)  # no footer in a chunk
