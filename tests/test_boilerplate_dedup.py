"""``boilerstrip dedup``: the finishing pass as a command, byte-identical output for shuffled input."""

from __future__ import annotations

import json
import random
import subprocess

from _incrawl import run_cli
from conftest import read_jsonl

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _words(i: int, n: int = 30) -> str:
    return " ".join(f"{LETTERS[i % 26]}{LETTERS[(i // 26) % 26]}{LETTERS[k % 26]}{LETTERS[k // 26]}z" for k in range(n))


def _records() -> list[dict]:
    records = []
    for i in range(30):
        section = "docs" if i % 3 else "blog"
        blocks = [{"kind": "li", "text": "Home"}, {"kind": "li", "text": "Download"},
                  {"kind": "h1", "text": f"Page {_words(i, 3)}"}, {"kind": "p", "text": _words(i)},
                  {"kind": "p", "text": f"This page last modified on 2021-0{i % 9 + 1}-0{i % 7 + 1} UTC"}]
        if section == "blog":
            blocks.append({"kind": "p", "text": "Subscribe to the newsletter"})
        records.append({"url": f"http://site.test/{section}/{LETTERS[i % 26]}{i}.html", "text": "", "blocks": blocks,
                        "flags": []})
    records.append(dict(records[4], url="http://site.test/docs/copy-of-e4.html"))
    return records


def _dedup(*args: str) -> subprocess.CompletedProcess:
    """``boilerstrip dedup ARGS...`` (the CLI's code path, in a forked child: ``_incrawl.run_cli``)."""
    return run_cli(["dedup", *args], timeout=120)


def test_shuffled_input_gives_byte_identical_output(tmp_path) -> None:
    records = _records()
    outputs = []
    for seed in (1, 2, 3):
        shuffled = list(records)
        random.Random(seed).shuffle(shuffled)
        src = tmp_path / f"in{seed}.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in shuffled), encoding="utf-8")
        out = tmp_path / f"out{seed}.jsonl"
        proc = _dedup(str(src), "-o", str(out), "--report", str(tmp_path / f"report{seed}"))
        assert proc.returncode == 0, proc.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    out_records = read_jsonl(tmp_path / "out1.jsonl")
    assert len(out_records) == len(records) - 1  # the copy went
    for record in out_records:
        lines = record["text"].split("\n")
        assert "Home" not in lines and "Download" not in lines
        assert "last modified" not in record["text"] and "Subscribe" not in record["text"]
        assert record["text"].startswith("Page ")
    report = json.loads((tmp_path / "report1" / "template-report.json").read_text())
    site = report["sites"]["site.test"]
    assert site["duplicates"] == [{"url": "http://site.test/docs/copy-of-e4.html", "reason": "exact_duplicate",
                                   "of": "http://site.test/docs/e4.html", "similarity": 1.0}]
    removed = {b["text"]: b for b in site["removed_blocks"]}
    assert removed["Home"]["scope"] == "template:site" and removed["Home"]["removed_from"] == 31  # every page crawled, the duplicate too
    assert removed["Subscribe to the newsletter"]["scope"] == "template:cluster"
    assert all(0 < p["removed_share"] < 1 for p in site["pages_detail"])
    text = (tmp_path / "report1" / "template-report.txt").read_text()
    assert "Subscribe to the newsletter" in text and "dropped exact_duplicate" in text


def test_in_place_and_bad_input(tmp_path) -> None:
    path = tmp_path / "crawl.jsonl"
    lines = [json.dumps(r) for r in _records()]
    lines.insert(3, "{not json")
    lines.insert(5, "[1, 2]")
    path.write_text("\n".join(lines) + "\n{\"url\": \"http://site.test/torn", encoding="utf-8")
    proc = _dedup(str(path), "-o", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "skipped 3 line(s)" in proc.stderr
    assert len(read_jsonl(path)) == len(_records()) - 1
    assert (tmp_path / "crawl.report" / "template-report.json").exists()  # default: next to the output

    # a bad argument exits 2 before anything is written, as in check, chunk and export
    missing = _dedup(str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "x.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    not_records, ledger = tmp_path / "notes.jsonl", tmp_path / "crawl.ledger.jsonl"
    not_records.write_text("{not json\n[1, 2]\n", encoding="utf-8")
    ledger.write_text(json.dumps({"url": "http://site.test/", "outcome": "item"}) + "\n", encoding="utf-8")
    for wrong, says in ((not_records, "text that is not JSON lines"), (ledger, "a crawl's ledger")):
        proc = _dedup(str(wrong), "-o", str(tmp_path / "x.jsonl"))
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert not list(tmp_path.glob("x.*")) and not (tmp_path / "x.report").exists()
    bad = _dedup(str(path), "-o", str(tmp_path / "x.jsonl"), "-s", 'BOILERSTRIP_BOILERPLATE_PARAMS={"min_pages": "few"}')
    assert bad.returncode == 2 and "BOILERSTRIP_BOILERPLATE_PARAMS field min_pages" in bad.stderr


def test_a_texts_minhash_is_datasketchs_over_its_word_shingles() -> None:
    """The signature's hash values are those of datasketch's MinHash fed the text's word shingles (casefolded
    ``\\w+`` words, ``shingle_words`` at a time, UTF-8, hashed with "words64": the crawl's signatures live
    within one pass): however the shingles are built and in whatever order they are fed, a near-duplicate
    verdict is datasketch's."""
    import re

    import numpy as np
    from datasketch import MinHash

    from boilerstrip.boilerplate.duplicates import text_signature
    from boilerstrip.boilerplate.params import DuplicateParams
    from boilerstrip.minhash import words64_hash

    params = DuplicateParams()
    text = "Ünïcode wörds, and more WORDS: " + _words(3, 80) + " the end, the end."
    words = re.findall(r"\w+", text.casefold())
    k = params.shingle_words
    expected = MinHash(num_perm=params.num_perm, seed=1, hashfunc=words64_hash)
    for i in range(len(words) - k + 1):
        expected.update(" ".join(words[i:i + k]).encode("utf-8"))
    signature = text_signature(text, params)
    assert signature.hashvalues is not None and signature.hashvalues == expected.hashvalues.astype(np.uint32).tobytes()
    short = " ".join(words[: params.near_min_words])  # as few words as a near check takes: one shingle or more
    assert text_signature(short, params).hashvalues is not None
