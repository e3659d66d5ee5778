"""One contract suite for every state backend (in-memory, SQLite and Redis on a real redis-server), plus
layout and opening rules."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from _redis import need_redis_server

from boilerstrip.distributed.localredis import LocalRedis

from boilerstrip.state import (
    STATE_SCHEMA_VERSION,
    MemoryState,
    PageCopy,
    RedisState,
    SqliteState,
    StateParams,
    UrlState,
    crawl_layout,
    feed_output,
    open_state,
    resolve_state_dir,
)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def backend(request, tmp_path):
    """(open, reopen): reopen gives the same state as a later run sees it (memory: the same object)."""
    if request.param == "memory":
        state = MemoryState()
        yield state, lambda: state
    elif request.param == "redis":
        need_redis_server()
        with LocalRedis() as server:
            opened_redis = [RedisState(server.url)]

            def reopen_redis() -> RedisState:
                opened_redis[-1].close()
                opened_redis.append(RedisState(server.url))
                return opened_redis[-1]

            yield opened_redis[0], reopen_redis
    else:
        opened: list[SqliteState] = [SqliteState(tmp_path / "state")]

        def reopen() -> SqliteState:
            opened[-1].close()
            opened.append(SqliteState(tmp_path / "state"))
            return opened[-1]

        yield opened[0], reopen
        opened[-1].close()


def test_template_counts_replace_a_page_seen_again(backend) -> None:
    state, reopen = backend
    t = state.templates
    t.put_page("s", "http://s/1", "a:1", ["x", "y", "y", ""])
    t.put_page("s", "http://s/2", "a:1", ["x"])
    t.put_page("s", "http://s/3", "b:1", ["x", "z"])
    t.put_page("s", "http://s/1", "a:1", ["z"])  # crawled again: replaces its earlier version
    t.put_page("other", "http://o/1", "a:1", ["x"])
    state.commit()
    t = reopen().templates
    assert t.get_page("s", "http://s/1") == ("a:1", ("z",))
    assert t.site_counts("s") == (3, {"x": 2, "z": 2})
    assert t.cluster_counts("s") == {"a:1": (2, {"x": 1, "z": 1}), "b:1": (1, {"x": 1, "z": 1})}
    assert t.site_counts("s", min_pages=2) == (3, {"x": 2, "z": 2})
    assert t.site_counts("s", min_pages=3) == (3, {})
    assert list(t.urls("s")) == ["http://s/1", "http://s/2", "http://s/3"]
    assert t.remove_page("s", "http://s/3") and not t.remove_page("s", "http://s/3")
    assert t.site_counts("s") == (2, {"x": 1, "z": 1}) and set(t.cluster_counts("s")) == {"a:1"}
    assert t.site_counts("nowhere") == (0, {}) and t.get_page("nowhere", "u") is None
    assert t.site_counts("s", min_pages=2) == (2, {})  # blocks on fewer pages are left out, not the pages
    assert t.cluster_counts("s", min_pages=2) == {"a:1": (2, {})}


def test_template_counts_do_not_depend_on_order(tmp_path) -> None:
    pages = [("s", f"http://s/{i}", f"c:{i % 3}", [f"h{i % 5}", "common", f"h{i % 2}"]) for i in range(30)]
    results = []
    for order in (pages, list(reversed(pages))):
        for state in (MemoryState(), SqliteState(tmp_path / f"s{len(results)}")):
            for page in order:
                state.templates.put_page(*page)
            results.append((state.templates.site_counts("s"), state.templates.cluster_counts("s")))
            state.close()
    assert all(r == results[0] for r in results)


def test_sqlite_template_counts_held_in_memory_are_written_in_batches(tmp_path, monkeypatch) -> None:
    """The SQLite backend holds count changes in memory and writes them in batches (a bounded batch, at a
    read of the counts, at commit): what is read and what a later run reads are the counts of every page,
    and a block whose pages all went leaves no row behind."""
    from boilerstrip.state import sqlite as sqlite_backend

    monkeypatch.setattr(sqlite_backend, "_PENDING_MAX", 7)  # several batches over these pages
    state = SqliteState(tmp_path / "state")
    t = state.templates
    for i in range(40):
        t.put_page("s", f"http://s/{i}", f"c:{i % 2}", ["nav", "footer", f"own{i}"])
    assert len(t._pending) < 7  # the batches were written as they filled
    assert t.site_counts("s", min_pages=2) == (40, {"nav": 40, "footer": 40})
    for i in range(40):
        t.put_page("s", f"http://s/{i}", f"c:{i % 2}", ["nav", f"own{i}"])  # the footer went from every page
    t.remove_page("s", "http://s/0")
    state.close()
    db = sqlite3.connect(str(tmp_path / "state" / "state.sqlite3"))
    try:
        rows = dict(db.execute("SELECT hash, SUM(pages) FROM template_counts GROUP BY hash"))
        clusters = {c for (c,) in db.execute("SELECT DISTINCT cluster FROM template_counts")}
        scopes = dict(db.execute("SELECT cluster, pages FROM template_scopes"))
    finally:
        db.close()
    assert clusters == {"c:0", "c:1"}  # a block's count in the site is the sum of its clusters' counts
    assert rows["nav"] == 39 and "footer" not in rows and "own0" not in rows and rows["own1"] == 1
    assert scopes == {"": 39, "c:0": 19, "c:1": 20}
    reopened = SqliteState(tmp_path / "state")
    assert reopened.templates.site_counts("s", min_pages=2) == (39, {"nav": 39})
    reopened.close()


#: the template tables as boilerstrip wrote them before 2026-12-07 (rowid tables, site-wide rows in cluster "")
_OLD_TEMPLATE_TABLES = """
CREATE TABLE template_pages (site TEXT NOT NULL, url TEXT NOT NULL, cluster TEXT NOT NULL,
    hashes TEXT NOT NULL, PRIMARY KEY (site, url));
CREATE TABLE template_counts (site TEXT NOT NULL, cluster TEXT NOT NULL, hash TEXT NOT NULL,
    pages INTEGER NOT NULL, PRIMARY KEY (site, cluster, hash));
CREATE TABLE template_scopes (site TEXT NOT NULL, cluster TEXT NOT NULL, pages INTEGER NOT NULL,
    PRIMARY KEY (site, cluster));
INSERT INTO template_scopes VALUES ('s', '', 3), ('s', 'c:0', 2), ('s', 'c:1', 1);
"""


def test_a_state_file_of_the_earlier_layout_is_converted_in_place(tmp_path) -> None:
    """A file whose template tables have site-wide rows (cluster "") and rowids is converted when opened:
    the same counts read back, per site and per cluster, and a recurring page replaces its stored version."""
    folder = tmp_path / "state"
    folder.mkdir()
    db = sqlite3.connect(str(folder / "state.sqlite3"))
    db.executescript(_OLD_TEMPLATE_TABLES)
    pages = {"http://s/a": ("c:0", ["nav", "a"]), "http://s/b": ("c:0", ["nav", "b"]), "http://s/c": ("c:1", ["nav", "c"])}
    for url, (cluster, hashes) in pages.items():
        db.execute("INSERT INTO template_pages VALUES ('s', ?, ?, ?)", (url, cluster, ",".join(sorted(hashes))))
    counts = {("", "nav"): 3, ("", "a"): 1, ("", "b"): 1, ("", "c"): 1,
              ("c:0", "nav"): 2, ("c:0", "a"): 1, ("c:0", "b"): 1, ("c:1", "nav"): 1, ("c:1", "c"): 1}
    db.executemany("INSERT INTO template_counts VALUES ('s', ?, ?, ?)", [(c, h, n) for (c, h), n in counts.items()])
    db.commit()
    db.close()
    state = SqliteState(folder)
    t = state.templates
    assert t.site_counts("s") == (3, {"nav": 3, "a": 1, "b": 1, "c": 1})
    assert t.cluster_counts("s") == {"c:0": (2, {"nav": 2, "a": 1, "b": 1}), "c:1": (1, {"nav": 1, "c": 1})}
    assert t.site_counts("s", min_pages=2) == (3, {"nav": 3})
    assert t._db.execute("SELECT COUNT(*) FROM template_counts WHERE cluster = ''").fetchone()[0] == 0
    t.put_page("s", "http://s/a", "c:0", ["nav", "a2"])  # the stored version's counts come out first
    assert t.site_counts("s")[1] == {"nav": 3, "a2": 1, "b": 1, "c": 1}
    layout = t._db.execute("SELECT sql FROM sqlite_master WHERE name = 'template_counts'").fetchone()[0]
    # an earlier boilerstrip run on the converted file writes its site-wide rows again: they are not summed
    t._db.execute("INSERT INTO template_counts VALUES ('s', '', 'nav', 3)")
    assert t.site_counts("s")[1]["nav"] == 3
    state.close()
    assert "WITHOUT ROWID" in layout
    reopened = SqliteState(folder)
    assert reopened.templates.get_page("s", "http://s/b") == ("c:0", ("b", "nav"))
    reopened.close()


def test_url_history_round_trips(backend) -> None:
    state, reopen = backend
    first = UrlState(url="http://s/a", site="s", etag='"v1"', last_modified="Tue, 01 Dec 2026 05:00:00 GMT",
                     text_hash="ab" * 32, first_seen="2026-12-01T05:00:00Z", last_seen="2026-12-01T05:00:00Z",
                     last_changed="2026-12-01T05:00:00Z", last_status=200, last_outcome="item", settings_digest="d1")
    state.history.put(first)
    state.history.put(UrlState(url="http://t/b", site="t", last_status=404, last_outcome="failed:http_404"))
    state.commit()
    history = reopen().history
    assert history.get("http://s/a") == first
    assert [s.url for s in history.iter_site("s")] == ["http://s/a"] and history.sites() == ["s", "t"]
    history.put(UrlState(url="http://s/a", site="s", last_status=304))
    assert history.get("http://s/a").etag is None  # put replaces the whole state
    assert history.delete("http://t/b") and history.get("http://t/b") is None and not history.delete("http://t/b")


def test_page_copies_round_trip(backend) -> None:
    state, reopen = backend
    record = {"url": "http://s/a", "text": "Caf\u00e9 \ud800 prose", "blocks": [{"kind": "p", "text": "x"}]}
    links = {"base": "http://s/a", "hrefs": ["/b", "c?x=1&y=2", "http://s/d"], "canonical": None}
    state.pages.put(PageCopy("http://s/a", record, links))
    state.commit()
    pages = reopen().pages
    copy = pages.get("http://s/a")
    assert copy == PageCopy("http://s/a", record, links)  # a lone surrogate survives the trip
    copy.record["text"] = "changed by the caller"
    assert pages.get("http://s/a").record["text"] == record["text"]  # what was stored is not changed
    pages.put(PageCopy("http://s/a", {"url": "http://s/a"}, {"base": "http://s/a", "hrefs": []}))
    assert pages.get("http://s/a").links["hrefs"] == []  # put replaces
    assert pages.delete("http://s/a") and pages.get("http://s/a") is None and not pages.delete("http://s/a")


def test_sqlite_page_copies_are_stored_compressed_and_earlier_json_ones_still_read(tmp_path) -> None:
    """A page copy is the page's record with its trail: SQLite keeps its JSON compressed by Zstandard (a
    BLOB), a tenth of the bytes on the large-page site. A copy an earlier boilerstrip wrote (the JSON text
    itself) still reads back."""
    import json

    from boilerstrip.state.base import unpacked_json

    record = {"url": "http://s/a", "text": "the same words again " * 500, "bad": "\ud800"}
    links = {"base": "http://s/a", "hrefs": ["/b"], "canonical": None}
    state = SqliteState(tmp_path / "state")
    state.pages.put(PageCopy("http://s/a", record, links))
    state.commit()
    stored = sqlite3.connect(state.path).execute("SELECT record FROM page_copies").fetchone()[0]
    assert isinstance(stored, bytes) and len(stored) * 5 < len(json.dumps(record))
    assert unpacked_json(stored) == record
    with sqlite3.connect(state.path) as db:  # as an earlier boilerstrip wrote it
        db.execute("INSERT OR REPLACE INTO page_copies (url, record, links) VALUES (?, ?, ?)",
                   ("http://s/old", json.dumps(record), json.dumps(links)))
    assert state.pages.get("http://s/old") == PageCopy("http://s/old", record, links)
    assert state.pages.get("http://s/a") == PageCopy("http://s/a", record, links)
    state.close()


def test_a_store_of_another_schema_version_is_started_again(tmp_path, caplog) -> None:
    state = SqliteState(tmp_path)
    state.templates.put_page("s", "http://s/1", "a:1", ["x"])
    state.close()
    db = sqlite3.connect(str(tmp_path / "state.sqlite3"))
    db.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with caplog.at_level("WARNING"):
        state = SqliteState(tmp_path)
    assert state.templates.site_counts("s") == (0, {}) and "schema version 0" in caplog.text
    state.close()
    db = sqlite3.connect(str(tmp_path / "state.sqlite3"))
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(STATE_SCHEMA_VERSION),)
    db.close()


def test_open_state_follows_the_settings(tmp_path) -> None:
    out = tmp_path / "out" / "site.jsonl"
    state = open_state(StateParams(), out)  # "auto": next to the output
    assert isinstance(state, SqliteState) and state.path == tmp_path / "out" / ".boilerstrip-state" / "state.sqlite3"
    state.close()
    assert isinstance(open_state(StateParams(dir=""), out), MemoryState)
    state = open_state(StateParams(dir=str(tmp_path / "elsewhere"), backend="boilerstrip.state.MemoryState"), out)
    assert isinstance(state, MemoryState)
    with pytest.raises(ValueError, match="cannot load state backend"):
        open_state(StateParams(dir=str(tmp_path), backend="boilerstrip.state.NoSuchBackend"), out)
    with pytest.raises(ValueError):
        StateParams(backend="nodots")


def test_one_place_knows_where_a_crawls_files_live(tmp_path) -> None:
    layout = crawl_layout(tmp_path / "site.jsonl")
    assert [p.name for p in (layout.final, layout.part, layout.ledger, layout.ledger_journal, layout.manifest,
                             layout.deadletter, layout.report_dir, layout.state_dir)] == [
        "site.jsonl", "site.jsonl.part", "site.ledger.jsonl", "site.ledger.jsonl.part", "site.manifest.json",
        "site.deadletter.jsonl", "site.report", ".boilerstrip-state"]
    assert feed_output({"FEEDS": {str(tmp_path / "a.jsonl"): {"format": "jsonl"}}}) == tmp_path / "a.jsonl"
    assert feed_output({"FEEDS": {"file://" + str(tmp_path / "b.jsonl"): {"format": "jsonlines"}}}) == tmp_path / "b.jsonl"
    assert feed_output({"FEEDS": {"s3://bucket/a.jsonl": {"format": "jsonl"}, "x.csv": {"format": "csv"}}}) is None
    assert resolve_state_dir("", tmp_path / "a.jsonl") is None
    assert resolve_state_dir("auto", tmp_path / "a.jsonl") == layout.state_dir
    assert resolve_state_dir("auto", None) == Path(".boilerstrip-state")


def test_redis_state_url_and_prefix_and_schema_version(caplog) -> None:
    """Unit test on fakeredis (no Lua there: the history side): the prefix keeps two states apart; another
    schema version starts empty."""
    import fakeredis

    client = fakeredis.FakeRedis()
    a = RedisState("redis://h:1/0?prefix=a", client=client)
    b = RedisState("redis://h:1/0?prefix=b", client=client)
    a.history.put(UrlState(url="http://s/1", site="s", last_status=200))
    assert a.history.get("http://s/1").last_status == 200 and b.history.get("http://s/1") is None
    assert a.url == "redis://h:1/0" and a.prefix == "a" and b.history.sites() == []
    client.hset("a:meta", "schema_version", "0")
    with caplog.at_level("WARNING"):
        again = RedisState("redis://h:1/0?prefix=a", client=client)
    assert again.history.get("http://s/1") is None and "schema version 0" in caplog.text
    with pytest.raises(ValueError, match="not a Redis URL"):
        RedisState("http://h/0", client=client)


def test_redis_page_copies_are_stored_compressed_and_earlier_json_ones_still_read() -> None:
    """Unit test on fakeredis: the copies live in the server's memory, compressed as SQLite keeps them; a
    copy an earlier boilerstrip stored as JSON text still reads."""
    import json

    import fakeredis

    client = fakeredis.FakeRedis()
    state = RedisState("redis://h:1/0?prefix=p", client=client)
    record = {"url": "http://s/a", "text": "the same words again " * 500, "bad": "\ud800"}
    links = {"base": "http://s/a", "hrefs": ["/b"], "canonical": None}
    state.pages.put(PageCopy("http://s/a", record, links))
    stored = client.hget("p:copies", "http://s/a")
    assert len(stored) * 5 < len(json.dumps(record)) and not stored.startswith(b"{")
    client.hset("p:copies", "http://s/old", json.dumps({"record": record, "links": links}))
    assert state.pages.get("http://s/old") == PageCopy("http://s/old", record, links)
    assert state.pages.get("http://s/a") == PageCopy("http://s/a", record, links)


def test_open_state_with_a_redis_url_connects_to_it(redis_url) -> None:
    state = open_state(StateParams(dir=redis_url + "?prefix=t", backend="boilerstrip.state.RedisState"))
    assert isinstance(state, RedisState) and state.prefix == "t"
    state.templates.put_page("s", "http://s/1", "c:1", ["x", "y"])
    state.templates.put_page("s", "http://s/1", "c:1", [])  # replaced by a version without blocks
    assert state.templates.site_counts("s") == (1, {}) and state.templates.get_page("s", "http://s/1") == ("c:1", ())
    state.close()


def test_a_local_redis_never_takes_another_servers_port_for_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run on several workers: when another test's redis-server takes the probed port first, ours fails
    to bind and exits while that one answers PING; the start must notice and try another port."""
    from boilerstrip.distributed import localredis

    need_redis_server()
    with localredis.LocalRedis() as taken:
        ports = iter([taken.port])
        real = localredis.free_port
        monkeypatch.setattr(localredis, "free_port", lambda host="127.0.0.1": next(ports, None) or real(host))
        with localredis.LocalRedis() as mine:
            assert mine.port != taken.port
            assert mine.process is not None and mine.process.poll() is None
