"""The export's pure core: text normalisation and ids, PII, quality signals, the dedup index, the steps."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest

from boilerstrip.export import (ExportParams, FilterParams, GopherParams, MemoryDedupIndex, MinHasher,
                                NearDedupParams, SqliteDedupIndex, document_id, gopher_failures, normalise_text,
                                quality_signals, replace_pii, run_export, size_category)
from boilerstrip.boilerplate.duplicates import text_digest

WORDS = ("garden soil compost seed water bed tomato garlic apple leaf mould winter spring summer autumn plot "
         "member committee shed path fence hedge worm slug rain sun frost root shoot bloom harvest basket "
         "spade fork barrow hose butt greenhouse cold frame netting cane string label tray pot").split()


def article(seed: int, words: int = 120) -> str:
    rng = random.Random(seed)
    sentences = []
    while sum(len(s.split()) for s in sentences) < words:
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14)))
        sentences.append(f"The {body} and that is how we have it with the rest.")
    return " ".join(sentences)


def perturb(text: str, seed: int, edits: int = 2) -> str:
    rng = random.Random(seed)
    words = text.split()
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(WORDS)
    return " ".join(words)


# -- text, ids, PII ----------------------------------------------------------------------------------------
def test_normalise_text() -> None:
    assert normalise_text("  a  \r\nb\t\n\n\n\nc\u0065\u0301 ") == "a\nb\n\nc\u00e9"


def test_document_id_is_stable_and_depends_on_url_and_text() -> None:
    digest = text_digest("Hello  World")
    assert document_id("http://s/a", digest) == document_id("http://s/a", text_digest("hello world"))
    assert document_id("http://s/a", digest) != document_id("http://s/b", digest)
    assert len(document_id("http://s/a", digest)) == 32


@pytest.mark.parametrize("text, expected, counts", [
    ("write to jane.doe@mail.example.org today", "write to email@example.com today", {"email": 1, "ip": 0}),
    ("server 93.184.216.34 answered", "server 192.0.2.1 answered", {"email": 0, "ip": 1}),
    ("ping 8.8.8.8.", "ping 192.0.2.1.", {"email": 0, "ip": 1}),
    ("on 127.0.0.1 and 192.168.1.10 and 10.0.0.1", "on 127.0.0.1 and 192.168.1.10 and 10.0.0.1", {"email": 0, "ip": 0}),
    ("version 1.2.3.4.5 and 999.1.1.1", "version 1.2.3.4.5 and 999.1.1.1", {"email": 0, "ip": 0}),
    ("a@b", "a@b", {"email": 0, "ip": 0}),
    # issue 26 item 10: a dotted quad inside a longer dotted name is not an address
    ("'1.0.0.127.in-addr.arpa' and 34.216.184.93.in-addr.arpa", "'1.0.0.127.in-addr.arpa' and 34.216.184.93.in-addr.arpa",
     {"email": 0, "ip": 0}),
    ("host-93.184.216.34 or a.93.184.216.34", "host-93.184.216.34 or a.93.184.216.34", {"email": 0, "ip": 0}),
    # ... nor one inside the text's code
    ("run `ping 93.184.216.34` then 8.8.8.8", "run `ping 93.184.216.34` then 192.0.2.1", {"email": 0, "ip": 1}),
    ("```\nnameserver 8.8.4.4\n```\nask 8.8.4.4", "```\nnameserver 8.8.4.4\n```\nask 192.0.2.1", {"email": 0, "ip": 1}),
])
def test_pii(text, expected, counts) -> None:
    assert replace_pii(text) == (expected, counts)


def test_pii_keeps_addresses_the_markdown_shows_as_code() -> None:
    from boilerstrip.export.pii import code_literals

    markdown = "Set:\n\n```ini\nserver = 93.184.216.34\n```\n\nor `1.1.1.1`; mail 8.8.8.8"
    keep = code_literals(markdown)
    assert keep == {"93.184.216.34", "1.1.1.1"}
    text = "Set: server = 93.184.216.34 or 1.1.1.1; mail 8.8.8.8"
    assert replace_pii(text, keep=keep) == ("Set: server = 93.184.216.34 or 1.1.1.1; mail 192.0.2.1", {"email": 0, "ip": 1})


# -- quality signals -----------------------------------------------------------------------------------------
def test_quality_signals_measure_what_they_say() -> None:
    text = "One line here...\n- bullet one\n- bullet two\n#tag line\n\nSame para\n\nSame para"
    q = quality_signals(text)
    assert q["words"] == 13
    assert q["lines_ending_ellipsis_fraction"] == round(1 / 6, 4)
    assert q["lines_starting_bullet_fraction"] == round(2 / 6, 4)
    assert q["symbol_word_ratio"] == round(2 / 13, 4)  # one "#", one "..."
    assert q["duplicate_line_fraction"] == round(1 / 6, 4)
    assert q["duplicate_paragraph_fraction"] == round(1 / 3, 4)
    assert quality_signals("")["words"] == 0


def test_top_ngram_share_catches_repetition() -> None:
    assert quality_signals("buy cheap pills " * 50)["top_2gram_char_fraction"] > 0.3
    assert quality_signals(article(1))["top_2gram_char_fraction"] < 0.2


def test_gopher_failures() -> None:
    good = quality_signals(article(2, 200))
    assert gopher_failures(good, GopherParams(), "en") == []
    short = quality_signals("too short to keep")
    assert "gopher_too_few_words" in gopher_failures(short, GopherParams(), "en")
    spam = quality_signals("buy cheap pills now " * 40)
    assert {"gopher_top_2gram", "gopher_stop_words"} <= set(gopher_failures(spam, GopherParams(), "en"))


def test_size_category() -> None:
    assert size_category(0) == "n<1K" and size_category(1000) == "1K<n<10K" and size_category(250_000) == "100K<n<1M"


# -- MinHash and the index -------------------------------------------------------------------------------------
def test_minhash_bands_find_near_duplicates_only() -> None:
    hasher = MinHasher(NearDedupParams())
    a = hasher.signature(article(3))
    near = hasher.signature(perturb(article(3), 1, edits=2))
    other = hasher.signature(article(4))
    assert len(a) == 14 * 8 * 4
    assert set(hasher.band_keys(a)) & set(hasher.band_keys(near))
    assert not set(hasher.band_keys(a)) & set(hasher.band_keys(other))
    assert hasher.similarity(a, near) > 0.7 > hasher.similarity(a, other)
    assert hasher.signature("too few words") is None


@pytest.fixture(params=["memory", "sqlite"])
def make_index(request, tmp_path):
    def make():
        if request.param == "memory":
            return MemoryDedupIndex()
        return SqliteDedupIndex(tmp_path / "index")
    return make


def test_index_contract(make_index) -> None:
    index = make_index()
    hasher = MinHasher(NearDedupParams())
    sig = hasher.signature(article(5))
    bands = hasher.band_keys(sig)
    assert index.exact("d1") is None and index.candidates(bands) == []
    index.add("id1", "http://s/a", "d1", bands, sig, "run1")
    index.add("id1", "http://s/a", "d1", bands, sig, "run2")  # added again: the first stays
    assert index.exact("d1") == ("id1", "run1")
    assert index.candidates(bands) == [("id1", "run1", sig)]
    assert index.documents() == 1
    index.commit()
    index.close()


def test_an_index_forgets_the_documents_of_one_run(make_index) -> None:
    index = make_index()
    hasher = MinHasher(NearDedupParams())
    sig_a, sig_b = hasher.signature(article(5)), hasher.signature(article(6))
    index.add("a", "http://s/a", "da", hasher.band_keys(sig_a), sig_a, "run1")
    index.add("b", "http://s/b", "db", hasher.band_keys(sig_b), sig_b, "run2")
    assert index.forget_run("run1") == 1 and index.forget_run("nothing") == 0
    assert index.exact("da") is None and index.candidates(hasher.band_keys(sig_a)) == []
    assert index.exact("db") == ("b", "run2") and index.candidates(hasher.band_keys(sig_b)) == [("b", "run2", sig_b)]
    assert index.documents() == 1
    index.close()


def test_sqlite_index_keeps_only_what_was_committed(tmp_path) -> None:
    index = SqliteDedupIndex(tmp_path)
    index.add("id1", "http://s/a", "d1", [(0, 1)], None, "run1")
    index.commit()
    index.add("id2", "http://s/b", "d2", [(0, 2)], None, "run1")
    index.close()  # not committed: an export that failed adds nothing
    index = SqliteDedupIndex(tmp_path)
    assert index.exact("d1") == ("id1", "run1") and index.exact("d2") is None
    index.close()


def test_sqlite_index_refuses_another_recipe(tmp_path) -> None:
    SqliteDedupIndex(tmp_path).close()
    with pytest.raises(ValueError, match="bands=20"):
        SqliteDedupIndex(tmp_path, NearDedupParams(bands=20))


# -- the export over hand-made records ------------------------------------------------------------------------
def _record(url: str, text: str, **extra) -> dict:
    return {"url": url, "text": text, "fetched_at": "2026-12-01T05:00:00Z", "title": url.rsplit("/", 1)[-1],
            "method": "semantic", "flags": [], "boilerplate_removed_chars": 10, "ai_opt_out": [], **extra}


def _write(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def _rows(out) -> list[dict]:
    import pyarrow.parquet as pq

    files = sorted((out / "data").glob("train-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def _excluded(out) -> list[dict]:
    return [json.loads(line) for line in (out / "excluded.jsonl").read_text(encoding="utf-8").splitlines()]


CORPUS = [
    _record("http://s.test/a", article(10)),
    _record("http://s.test/copy/of-a", article(10).replace(" ", "  ")),  # exact after normalisation
    _record("http://s.test/b", article(11)),
    _record("http://s.test/longer/b-edited", perturb(article(11), 7)),  # near duplicate of b
    _record("http://s.test/c", article(12), ai_opt_out=["meta-robots:noai"]),
    _record("http://s.test/d", article(13)),
    _record("http://s.test/e", ""),  # no text
    {"url": "http://s.test/f", "outcome": "failed", "reason": "timeout"},
]


def test_export_keeps_the_same_documents_in_any_order(tmp_path) -> None:
    results = []
    for n in range(3):
        records = list(CORPUS)
        random.Random(n).shuffle(records)
        out = tmp_path / f"out{n}"
        stats = run_export([_write(tmp_path / f"in{n}.jsonl", records)], out, ExportParams(row_group_rows=2))
        rows = _rows(out)
        results.append(sorted((r["id"], r["url"], r["text"]) for r in rows))
        excluded = _excluded(out)
        assert len(excluded) == stats["excluded"] == len(CORPUS) - len(rows)
        reasons = {e["url"].rsplit("/", 1)[-1]: e["reason"] for e in excluded}
        assert reasons == {"of-a": "exact_duplicate", "b-edited": "near_duplicate", "c": "ai_opt_out",
                           "e": "empty_text", "f": "not_a_page"}
    assert results[0] == results[1] == results[2]
    assert sorted(u.rsplit("/", 1)[-1] for _, u, _ in results[0]) == ["a", "b", "d"]  # shortest URLs kept


def test_export_filters_are_opt_in(tmp_path) -> None:
    records = [_record("http://s.test/long", article(20, 200)), _record("http://s.test/short", "Just a stub."),
               _record("http://s.test/fr", "Le jardin partagé ouvre ses portes samedi prochain pour tous les "
                       "habitants du quartier qui veulent apprendre à composter leurs déchets de cuisine.")]
    src = _write(tmp_path / "in.jsonl", records)
    assert run_export([src], tmp_path / "none")["documents"] == 3
    stats = run_export([src], tmp_path / "some", ExportParams(filters=FilterParams(min_words=10, languages=("en",))))
    assert stats["excluded_by_reason"] == {"too_few_words": 1, "language_not_selected": 1}
    stats = run_export([src], tmp_path / "gopher", ExportParams(filters=FilterParams(gopher=True)))
    assert stats["documents"] == 1 and stats["excluded_by_reason"] == {"gopher_too_few_words": 2}
    assert {r["url"].rsplit("/", 1)[-1]: r["language"] for r in _rows(tmp_path / "none")} == {
        "long": "en", "short": "en", "fr": "fr"}


def test_export_shards_and_jsonl(tmp_path) -> None:
    records = [_record(f"http://s.test/p{i}", article(100 + i)) for i in range(7)]
    src = _write(tmp_path / "in.jsonl", records)
    stats = run_export([src], tmp_path / "pq", ExportParams(shard_size=3, row_group_rows=2))
    assert stats["shards"] == [f"data/train-0000{i}-of-00003.parquet" for i in range(3)]
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(tmp_path / "pq" / stats["shards"][0]).metadata
    assert meta.num_rows == 3 and meta.num_row_groups == 2
    assert meta.row_group(0).column(0).compression == "ZSTD"
    stats = run_export([src], tmp_path / "js", ExportParams(format="jsonl", shard_size=5))
    lines = [json.loads(x) for s in stats["shards"] for x in (tmp_path / "js" / s).read_text().splitlines()]
    assert len(lines) == 7 and set(lines[0]) >= {"text", "id", "url", "date", "language", "quality", "ai_opt_out"}
    # a second export into the same folder replaces the first's shards
    stats = run_export([src], tmp_path / "pq", ExportParams(shard_size=10))
    assert sorted(p.name for p in (tmp_path / "pq" / "data").iterdir()) == ["train-00000-of-00001.parquet"]


def test_failed_export_leaves_the_index_untouched(tmp_path, monkeypatch) -> None:
    src = _write(tmp_path / "in.jsonl", [_record("http://s.test/a", article(30))])
    import boilerstrip.export.steps as steps

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(steps.ShardWriter, "_flush", staticmethod(boom))
    with pytest.raises(OSError):
        run_export([src], tmp_path / "out", index_dir=tmp_path / "index")
    monkeypatch.undo()
    db = sqlite3.connect(tmp_path / "index" / "dedup-index.sqlite3")
    assert db.execute("SELECT COUNT(*) FROM docs").fetchone()[0] == 0
    assert not list((tmp_path / "out" / "data").glob("*"))
    assert run_export([src], tmp_path / "out", index_dir=tmp_path / "index")["documents"] == 1


def test_language_model_ships_with_the_package_and_needs_no_network() -> None:
    import subprocess
    import sys

    code = (
        "import socket\n"
        "def refuse(*args, **kwargs):\n    raise OSError('network used')\n"
        "socket.socket = socket.create_connection = socket.getaddrinfo = refuse\n"
        "from boilerstrip.export.language import LanguageIdentifier\n"
        "print(LanguageIdentifier().identify('The garden opens on Saturday for everyone who wants to compost.'))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("('en', ")
