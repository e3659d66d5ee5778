"""Everyday use (issue 26 and issue 30's validation items): what a user typing commands hits next.

Argument checks (``-o -``, ``--state`` on a file, a bare host), wrong files given to export and check, a
series of recurring crawls exported, the scheduler's store and retention. Pure or in-process where the
process boundary is not the point; CLI subprocesses where exit codes and stderr lines are.
"""

from __future__ import annotations

import gzip
import importlib

import json
import subprocess
import sys
from pathlib import Path

import pytest

from boilerstrip.commands.crawl import complete_bare_hosts
from conftest import ROOT


def cli(*args: str, cwd=ROOT, env=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``boilerstrip ARGS...`` in a forked child (the CLI's own code, its exit status and output; no new
    interpreter importing Scrapy for each command: _incrawl.run_cli), from ``cwd`` with ``env``."""
    from _incrawl import run_cli

    return run_cli(list(args), cwd=cwd, env=env, timeout=timeout)


def one_line(proc: subprocess.CompletedProcess, command: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"boilerstrip {command}: "), lines[0]
    return lines[0]


# -- crawl: arguments -----------------------------------------------------------------------------------------
def test_output_dash_is_refused_before_anything_is_written(tmp_path) -> None:
    proc = cli("crawl", "http://127.0.0.1:9/", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 2
    assert "-o - (stdout) is not supported" in one_line(proc, "crawl")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ("crawl", "http://127.0.0.1:9/", "-o", "http://127.0.0.1:9/index.html"),  # a second URL where the output goes
    ("crawl", "http://127.0.0.1:9/", "-o", "out.jsonl", "--chunks", "https://example.org/c.jsonl"),
    ("warc", "in.warc.gz", "-o", "s3://bucket/out.jsonl"),
    ("dedup", "in.jsonl", "-o", "file:///tmp/out.jsonl"),
    ("check", "in.jsonl", "--html", "http://127.0.0.1:9/report.html"),
    ("export", "in.jsonl", "-o", "http://127.0.0.1:9/dataset"),
    ("export", "in.jsonl", "-o", "dataset", "--index", "redis://127.0.0.1:9/0"),  # the default index is a folder
])
def test_a_url_where_a_path_belongs_is_refused_before_anything_is_written(tmp_path, args) -> None:
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2
    assert "is a URL; it takes a path on this machine" in one_line(proc, args[0])
    assert list(tmp_path.iterdir()) == []  # no http:/127.0.0.1:9/ folder, no state, no ledger


def test_a_second_run_on_the_same_output_is_refused_while_the_first_writes_it(tmp_path) -> None:
    # two runs on one output (a cron job over a manual run) each renamed and rewrote the other's files, and
    # one of them reported success over a short output: now the output is locked for the whole run
    from boilerstrip.run import OutputBusy, output_lock

    out = tmp_path / "o.jsonl"
    with output_lock(out):
        proc = cli("crawl", "http://127.0.0.1:9/", "-o", str(out))
        assert proc.returncode == 2, proc.stderr
        assert "is being written by another run (pid " in one_line(proc, "crawl")
        with pytest.raises(OutputBusy):
            with output_lock(out):
                pass
    assert [p.name for p in tmp_path.iterdir()] == []  # nothing written by the refused run; the lock file gone
    with output_lock(out):  # free again once the first run has ended
        assert (tmp_path / ".o.jsonl.lock").read_text().strip().isdigit()


@pytest.mark.parametrize("command", ["dedup", "chunk", "export", "check"])
def test_records_commands_refuse_an_input_a_crawl_writes_and_an_output_another_run_writes(tmp_path, command) -> None:
    # dedup, chunk and export on an output another run writes raced it (the last one won whole); on an input
    # a crawl is still writing they read part of a crawl. Both are refused now, before anything is written
    from boilerstrip.atomicfile import output_lock

    records = tmp_path / "in.jsonl"
    records.write_text(json.dumps({"url": "http://a.example/", "status": 200, "text": "One page of text.",
                                   "title": "A"}) + "\n", encoding="utf-8")
    out = tmp_path / ("dataset" if command == "export" else "out.jsonl")
    to = ("--json", str(out)) if command == "check" else ("-o", str(out))
    before = sorted(p.name for p in tmp_path.iterdir())
    if command != "check":  # check writes reports, not records: it takes no lock
        with output_lock(out):  # another run writes the output
            proc = cli(command, str(records), *to)
        assert proc.returncode == 2, proc.stderr
        assert "is being written by another run (pid " in proc.stderr and "nothing written" in proc.stderr
    with output_lock(records):  # a crawl is still writing the input
        proc = cli(command, str(records), *to)
    assert proc.returncode == 2, proc.stderr
    assert f"{records} is being written by another run (pid " in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written; the locks gone
    proc = cli(command, str(records), *to)  # free again: the command runs
    assert proc.returncode == 0, proc.stderr
    assert out.exists() and not (tmp_path / f".{out.name}.lock").exists()


@pytest.mark.parametrize("command", ["dedup", "chunk", "export", "check"])
def test_records_commands_on_a_crawl_that_did_not_finish_say_so(tmp_path, command) -> None:
    # a crawl stopped by a second Ctrl-C (or killed) leaves OUT.jsonl.part: "out.jsonl is not there (no such
    # file)" sent the user looking for a file that was never made; now the line names the part and what to do
    from boilerstrip.atomicfile import output_lock

    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.part").write_text(json.dumps({"url": "http://a.example/", "status": 200,
                                                         "text": "One page."}) + "\n", encoding="utf-8")
    to = () if command == "check" else ("-o", str(tmp_path / ("dataset" if command == "export" else "o2.jsonl")))
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = cli(command, str(out), *to)
    assert proc.returncode == 2, proc.stderr
    assert ("out.jsonl is not there, but out.jsonl.part is: the crawl that writes it did not finish; the same crawl "
            "command with --resume completes it") in one_line(proc, command)
    with output_lock(out):  # the crawl is still running
        proc = cli(command, str(out), *to)
    assert proc.returncode == 2, proc.stderr
    assert "out.jsonl is not there yet: a crawl is writing out.jsonl.part (pid " in one_line(proc, command)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(("args", "message"), [
    (("export", "in.jsonl", "-o", "afile"), "-o 'afile' is a file; it expects a folder"),
    (("export", "in.jsonl", "-o", "dataset", "--index", "afile"), "--index 'afile' is a file; it expects a folder"),
    (("chunk", "in.jsonl", "-o", "c.jsonl", "--state", "afile"), "--state 'afile' is a file; it expects a folder"),
    (("dedup", "in.jsonl", "-o", "adir"), "-o 'adir' is a directory; it expects a file path (OUT.jsonl)"),
    (("dedup", "in.jsonl", "-o", "d.jsonl", "--report", "afile"), "--report 'afile' is a file; it expects a folder"),
    (("check", "in.jsonl", "--html", "adir"), "--html 'adir' is a directory; it expects a file path (REPORT.html)"),
    (("warc", "in.warc.gz", "-o", "adir"), "-o 'adir' is a directory; it expects a file path (OUT.jsonl)"),
    # a sub-command's options too: the job was added, its runs failing later on the file
    (("schedule", "add", "docs", "http://127.0.0.1:9/", "--every", "6h", "-o", "afile", "--store", "adir"),
     "-o 'afile' is a file; it expects a folder"),
    (("schedule", "list", "--store", "afile"), "--store 'afile' is a file; it expects a folder"),
    # a .gz name held plain JSON lines (zcat refused it): refused too, with the name to use instead
    (("crawl", "http://127.0.0.1:9/", "-o", "o.jsonl.gz"), "-o 'o.jsonl.gz' names a compressed file"),
    (("dedup", "in.jsonl", "-o", "d.jsonl.zst"), "write 'd.jsonl' and compress it afterwards"),
    # Scrapy's -o items.json is one JSON array: a JSON lines file so named broke json.load
    (("crawl", "http://127.0.0.1:9/", "-o", "o.json"), "-o 'o.json' names one JSON array (as Scrapy's -o reads it), "
     "and the records are written as JSON lines, one object a line; name it 'o.jsonl'"),
    (("dedup", "in.jsonl", "-o", "d.jsonl.csv"), "-o 'd.jsonl.csv' names CSV (as Scrapy's -o reads it)"),
    (("chunk", "in.jsonl", "-o", "c.xml"), "name it 'c.jsonl'"),
])
def test_a_file_where_a_folder_belongs_or_the_reverse_is_refused_before_any_work(tmp_path, args, message) -> None:
    # each of these did its whole work, then failed on its last rename or mkdir ("[Errno 21] Is a directory",
    # "[Errno 17] File exists", exit 1), leaving a report folder behind: now each option's metavar (DIR, or a
    # file name) is checked against what is there, before anything runs
    (tmp_path / "in.jsonl").write_text(json.dumps({"url": "http://a.example/", "status": 200, "text": "Text."}) + "\n",
                                       encoding="utf-8")
    (tmp_path / "afile").write_text("a file", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert message in one_line(proc, args[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile", "in.jsonl"]
    assert list((tmp_path / "adir").iterdir()) == []


def test_a_file_of_urls_given_as_a_url_is_refused_with_the_option_that_reads_it(tmp_path) -> None:
    # "boilerstrip crawl urls.txt" crawled https://urls.txt/: a minute of DNS retries, then robots_unreachable
    (tmp_path / "urls.txt").write_text("http://127.0.0.1:9/\n", encoding="utf-8")
    proc = cli("crawl", "urls.txt", "-o", "out.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert "'urls.txt' is a file here, not a site: to crawl the URLs it lists, pass --urls urls.txt" in one_line(
        proc, "crawl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["urls.txt"]


@pytest.mark.parametrize(("content", "message"), [
    (None, "No such file or directory"),
    ("# nothing but a comment\n\n", "lists no URL"),
    ("http://127.0.0.1:9/a\nhttp://127.0.0.1:9/b c\n", "line 2: expected one URL a line"),
    ("http://127.0.0.1:9/\nftp://127.0.0.1/x\n", "not an http(s) URL: 'ftp://127.0.0.1/x'"),
    (b"\xff\xfe\x00h", "is not UTF-8 text"),
])
def test_a_bad_urls_file_is_refused_before_anything_is_written(tmp_path, content, message) -> None:
    listed = tmp_path / "in" / "urls.txt"
    listed.parent.mkdir()
    if isinstance(content, bytes):
        listed.write_bytes(content)
    elif content is not None:
        listed.write_text(content, encoding="utf-8")
    proc = cli("crawl", "--urls", str(listed), "-o", str(tmp_path / "out" / "o.jsonl"), cwd=tmp_path)
    assert proc.returncode == 2 and message in one_line(proc, "crawl"), proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_crawl_and_a_job_take_their_start_urls_from_a_file(serve, tmp_path) -> None:
    from _crawlsite import FAST, page
    from conftest import read_jsonl

    def site(name: str, n: int) -> dict:  # (pages of the same text on two sites would be duplicates)
        links = [f"/p{i}" for i in range(1, n + 1)]
        text = f"The {name} site's own page. " * 8
        return {"/": page(f"{name} home", links, text), **{h: page(f"{name} {h}", ["/"], text + h) for h in links}}

    one, two = serve(routes=site("first", 2)), serve(routes=site("second", 1))
    listed = tmp_path / "urls.txt"
    # a comment, a blank line, a byte order mark (Windows editors), a bare local host and a repeat
    listed.write_text(f"\ufeff# the sites\n\n{one.url}/\n{two.url.split('://')[1]}/\n{one.url}/\n", encoding="utf-8")
    out = tmp_path / "o.jsonl"
    proc = cli("crawl", "--urls", str(listed), "-o", str(out), *FAST, cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {r["url"] for r in read_jsonl(out)} == {f"{one.url}/", f"{one.url}/p1", f"{one.url}/p2",
                                                    f"{two.url}/", f"{two.url}/p1"}

    env = schedule_env(tmp_path)
    add = cli("schedule", "add", "sites", "--urls", str(listed), "--every", "1d", "-o", str(tmp_path / "runs"),
              cwd=tmp_path, env=env)
    assert add.returncode == 0, add.stderr
    job = json.loads((tmp_path / "xdg" / "boilerstrip" / "schedule.json").read_text(encoding="utf-8"))["jobs"]["sites"]
    assert job["urls"] == [f"{one.url}/", f"{two.url}/"]  # the file read once, at add: each URL once


def test_a_start_url_redirected_to_another_local_name_says_how_to_allow_it(serve, tmp_path) -> None:
    # a development server that sends 127.0.0.1 to localhost: the redirect is refused (only the start URLs'
    # own origins are allowed among private addresses), and the last line said only redirect_refused
    from _crawlsite import FAST, page
    from conftest import Reply, read_jsonl

    server = serve(routes={})
    port = server.url.rsplit(":", 1)[1]

    def by_host(reply):
        def answer(path: str, headers: dict) -> Reply:
            if (headers.get("Host") or headers.get("host") or "").startswith("127.0.0.1"):
                return Reply(301, b"", (("Location", f"http://localhost:{port}{path}"),))
            return reply
        return answer

    text = "A page of the development server, with a few sentences of its own. " * 6
    server.routes.update({"/": by_host(page("home", ["/a"], text)), "/a": by_host(page("a", ["/"], text + " a")),
                          "/robots.txt": by_host(Reply(404, b""))})
    out = tmp_path / "o.jsonl"
    proc = cli("crawl", f"{server.url}/", "-o", str(out), *FAST, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "redirect_refused:private_address); it redirected to a private or loopback address other than the " \
           "start URL's: --allow-private HOST:PORT allows it" in proc.stderr.strip().splitlines()[-1], proc.stderr[-2000:]
    proc = cli("crawl", f"{server.url}/", "-o", str(out), *FAST, "--allow-private", f"localhost:{port}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {r["url"] for r in read_jsonl(out)} == {f"{server.url}/", f"http://localhost:{port}/a"}


def test_https_to_a_plain_http_server_ends_at_once_and_says_to_give_http(serve, tmp_path) -> None:
    # https:// to a development server that speaks plain HTTP: robots.txt was fetched three times a minute
    # apart (68 s with polite) and the last line said only robots_unreachable: response_failed
    import time

    from _crawlsite import small_site

    server = serve(routes=small_site(n=1))
    https = server.url.replace("http://", "https://") + "/"
    started = time.monotonic()
    proc = cli("crawl", https, "-o", str(tmp_path / "o.jsonl"), cwd=tmp_path)  # the polite profile
    took = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert f"{https} (filtered:robots_unreachable: tls_error); no TLS handshake with {https}: if the server " \
           f"speaks plain HTTP there, give {server.url}/" in last, last
    assert took < 50, took  # no re-fetch a minute later (each robots.txt fetch is refused in milliseconds)


@pytest.mark.parametrize(("setting", "message"), [
    ("CONCURRENT_REQUESTS=0", "-s CONCURRENT_REQUESTS='0': expected a whole number >= 1"),  # ran until killed
    ("DOWNLOAD_TIMEOUT=-1", "-s DOWNLOAD_TIMEOUT='-1': expected a number > 0"),  # ran until killed
    ("DOWNLOAD_DELAY=abc", "-s DOWNLOAD_DELAY='abc': expected a number >= 0"),  # "ValueError: could not convert"
    ("RETRY_TIMES=1.5", "-s RETRY_TIMES='1.5': expected a whole number >= 0"),
])
def test_a_scrapy_number_that_would_break_the_crawl_is_refused_and_no_folder_is_made(tmp_path, setting, message) -> None:
    proc = cli("crawl", "http://127.0.0.1:9/", "-o", str(tmp_path / "new" / "o.jsonl"), "-s", setting, cwd=tmp_path)
    assert proc.returncode == 2
    assert one_line(proc, "crawl") == f"boilerstrip crawl: {message}"
    assert list(tmp_path.iterdir()) == []  # the output's folder was made before the settings were read


def test_an_output_under_a_file_is_refused(tmp_path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    proc = cli("crawl", "http://127.0.0.1:9/", "-o", str(tmp_path / "afile" / "sub" / "o.jsonl"), cwd=tmp_path)
    assert proc.returncode == 2 and "is a file, not a folder" in one_line(proc, "crawl")


def test_resume_with_nothing_to_resume_says_it_starts_a_new_crawl(tmp_path) -> None:
    # a typo in -o with --resume started a new crawl in silence, which looked like a resumed one gone wrong
    out = tmp_path / "o.jsonl"
    proc = cli("crawl", "http://127.0.0.1:9/", "-o", str(out), "--resume", "--profile", "test")
    assert proc.returncode == 1, proc.stderr  # (nothing listens on port 9: no start URL reached)
    assert f"boilerstrip crawl: note: no crawl to resume at {out} (no o.jsonl.part): starting a new one" in proc.stderr
    (tmp_path / "o.jsonl.part").write_text("", encoding="utf-8")  # a crawl stopped early: resumed, no note
    proc = cli("crawl", "http://127.0.0.1:9/", "-o", str(out), "--resume", "--profile", "test")
    assert "no crawl to resume" not in proc.stderr, proc.stderr


def test_a_redis_that_cannot_be_reached_is_refused_before_anything_is_written(tmp_path) -> None:
    # it exited 2 with the right line, but after the output's folder was made
    proc = cli("crawl", "http://127.0.0.1:9/", "-o", str(tmp_path / "out" / "o.jsonl"), "--redis", "redis://127.0.0.1:1/0")
    assert proc.returncode == 2, proc.stderr
    assert "cannot reach redis://127.0.0.1:1/0" in one_line(proc, "crawl")
    assert list(tmp_path.iterdir()) == []


def test_state_on_a_file_is_refused_before_anything_is_written(tmp_path) -> None:
    (tmp_path / "state").write_text("not a folder")
    proc = cli("crawl", "http://127.0.0.1:9/", "-o", str(tmp_path / "out" / "o.jsonl"), "--state",
               str(tmp_path / "state"))
    assert proc.returncode == 2
    assert "is a file; it expects a folder" in one_line(proc, "crawl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]


@pytest.mark.parametrize(("given", "expected"), [
    ("example.org", "https://example.org"),
    ("docs.example.org/guide/?a=1", "https://docs.example.org/guide/?a=1"),
    ("8.8.8.8/dns", "https://8.8.8.8/dns"),
    # a machine of the local network: a development server rarely speaks TLS (https://localhost:8000 ended as
    # robots_unreachable: connection_refused after a minute's retries)
    ("localhost:8080", "http://localhost:8080"),
    ("app.localhost:5173/", "http://app.localhost:5173/"),
    ("127.0.0.1:8000/docs", "http://127.0.0.1:8000/docs"),
    ("[::1]:3000", "http://[::1]:3000"),
    ("192.168.1.20", "http://192.168.1.20"),
    ("http://example.org/", "http://example.org/"),
    ("ftp://example.org/", "ftp://example.org/"),
    ("not a host", "not a host"),
])
def test_a_bare_host_is_taken_as_https_or_http_on_the_local_network(given, expected) -> None:
    urls, notes = complete_bare_hosts([given])
    assert urls == [expected]
    assert bool(notes) == (given != expected)
    if notes:
        assert expected in notes[0]


# -- export and check: the wrong file --------------------------------------------------------------------------
RECORD = {"url": "http://a.example/p", "title": "P", "text": "Some words of a page " * 20, "fetched_at": "2026-01-01T00:00:00Z"}


@pytest.fixture
def wrong_files(tmp_path) -> dict[str, Path]:
    """A crawl's records and every file beside them that is not records, plus garbage."""
    out = tmp_path / "crawl"
    out.mkdir()
    (out / "o.jsonl").write_text(json.dumps(RECORD) + "\n")
    (out / "o.ledger.jsonl").write_text(json.dumps({"url": RECORD["url"], "outcome": "item", "reason": ""}) + "\n")
    (out / "o.manifest.json").write_text(json.dumps({"run_id": "x", "finish_reason": "finished", "output": {}}, indent=1))
    (tmp_path / "page.html").write_text("<!doctype html><html><body><p>hi</p></body></html>")
    (tmp_path / "array.json").write_text(json.dumps([RECORD]))
    (tmp_path / "random.bin").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "nourl.jsonl").write_text(json.dumps({"a": 1}) + "\n")
    (tmp_path / "o.jsonl.gz").write_bytes(gzip.compress((json.dumps(RECORD) + "\n").encode()))
    return {"gzip": tmp_path / "o.jsonl.gz", "records": out / "o.jsonl", "ledger": out / "o.ledger.jsonl", "manifest": out / "o.manifest.json",
            "html": tmp_path / "page.html", "array": tmp_path / "array.json", "binary": tmp_path / "random.bin",
            "empty": tmp_path / "empty.jsonl", "nourl": tmp_path / "nourl.jsonl", "folder": out,
            "missing": tmp_path / "nosuch.jsonl"}


WRONG = {"ledger": "ledger", "manifest": "manifest", "html": "HTML", "array": "JSON array", "binary": "binary",
         "gzip": "gzip-compressed: boilerstrip reads plain JSON lines (zcat o.jsonl.gz > o.jsonl)",
         "nourl": "without a url", "folder": "o.jsonl", "missing": "no such file"}


@pytest.mark.parametrize("kind", sorted(WRONG))
def test_records_file_problem_says_what_a_wrong_file_is(wrong_files, kind) -> None:
    from boilerstrip.finishing.base import EMPTY, records_file_problem

    assert records_file_problem(wrong_files["records"]) is None
    assert records_file_problem(wrong_files["empty"]) == EMPTY
    assert WRONG[kind] in records_file_problem(wrong_files[kind])


@pytest.mark.parametrize("kind", ["ledger", "manifest", "html", "folder", "missing"])
def test_export_refuses_a_wrong_file_with_exit_2(wrong_files, tmp_path, kind) -> None:
    proc = cli("export", str(wrong_files[kind]), "-o", str(tmp_path / "ds"), "--format", "jsonl")
    assert proc.returncode == 2, proc.stderr
    assert WRONG[kind] in one_line(proc, "export")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("kind", ["html", "manifest", "ledger", "missing", "binary", "empty", "array", "gzip"])
def test_check_refuses_a_wrong_file_with_exit_2(wrong_files, kind) -> None:
    proc = cli("check", str(wrong_files[kind]))
    assert proc.returncode == 2, proc.stderr
    line = one_line(proc, "check")
    assert WRONG.get(kind, "empty") in line and "Errno" not in line
    assert proc.stdout == ""


def test_check_reads_a_record_after_a_byte_order_mark(tmp_path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(RECORD).encode() + b"\n")
    proc = cli("check", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "a.example" in proc.stdout and "(1 pages" in proc.stdout


def test_check_and_chunk_of_records_written_without_text_say_so(tmp_path) -> None:
    # a crawl written with --fields url,title: check judged every page empty ("fail empty_pages", exit 0) and
    # chunk said the file was not a crawl's records
    path = tmp_path / "lean.jsonl"
    path.write_text("".join(json.dumps({"url": f"https://a.example/{i}", "title": f"Page {i}"}) + "\n"
                            for i in range(3)), encoding="utf-8")
    proc = cli("check", str(path), "--json", str(tmp_path / "report.json"))
    assert proc.returncode == 2
    assert "hold no text or markdown (a crawl written with --fields that leaves them out?): nothing to judge" in \
        one_line(proc, "check")
    assert not (tmp_path / "report.json").exists()
    proc = cli("chunk", str(path), "-o", str(tmp_path / "chunks.jsonl"))
    assert proc.returncode == 2 and "a crawl written with --fields that leaves them out" in one_line(proc, "chunk")
    # one page with text among them is judged as before
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(RECORD) + "\n")
    assert cli("check", str(path)).returncode == 0


# -- export: one bad record never sinks the export ------------------------------------------------------------
def rows(folder: Path) -> list[dict]:
    return [json.loads(line) for shard in sorted((folder / "data").glob("*.jsonl"))
            for line in shard.read_text(encoding="utf-8").splitlines()]


def excluded(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "excluded.jsonl").read_text(encoding="utf-8").splitlines()]


def words(n: int, seed: str) -> str:
    return " ".join(f"{seed}{i} word{i % 7} thing{i % 11}" for i in range(n))


def test_export_leaves_out_a_bad_record_with_its_reason(tmp_path) -> None:
    from boilerstrip.export import ExportParams, run_export

    good = {"url": "http://a.example/good", "text": words(40, "g"), "fetched_at": "2026-01-01T00:00:00Z"}
    lines = [
        json.dumps({"url": "http://a.example/", "text": 5}),
        json.dumps({"url": "http://a.example/t", "text": words(40, "t"), "fetched_at": 1767225600}),
        '{"url": "http://a.example/s", "text": "bad \\ud800 ' + words(40, "s") + '"}',
        json.dumps({"url": "http://a.example/o", "text": words(40, "o"), "ai_opt_out": "robots"}),
    ]
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(good) + "\n" + "\n".join(lines) + "\n").encode())
    stats = run_export([path], tmp_path / "ds", ExportParams(format="jsonl"))
    assert [r["url"] for r in rows(tmp_path / "ds")] == ["http://a.example/good"]  # the one after the BOM too
    bad = {e["url"]: (e["reason"], e["field"]) for e in excluded(tmp_path / "ds")}
    assert bad == {"http://a.example/": ("bad_record", "text"), "http://a.example/t": ("bad_record", "fetched_at"),
                   "http://a.example/s": ("bad_record", "text"), "http://a.example/o": ("bad_record", "ai_opt_out")}
    assert stats["documents"] == 1


def test_an_export_of_records_written_with_markdown_alone_takes_their_text_from_it(tmp_path) -> None:
    # a crawl written with --fields url,title,markdown (lean records for retrieval): every record was left out
    # as empty_text, and the warning guessed that the Markdown was missing too
    from boilerstrip.export import ExportParams, run_export

    markdown = "# Setup\n\nInstall it with [pip](https://pip.pypa.io/): " + words(40, "m") + "\n\n```sh\npip install x\n```"
    path = tmp_path / "lean.jsonl"
    path.write_text(json.dumps({"url": "http://a.example/setup", "title": "Setup", "markdown": markdown}) + "\n"
                    + json.dumps({"url": "http://a.example/none", "title": "None", "markdown": ""}) + "\n", encoding="utf-8")
    stats = run_export([path], tmp_path / "ds", ExportParams(format="jsonl"))
    (row,) = rows(tmp_path / "ds")
    assert row["text"].startswith("Setup\n\nInstall it with pip: m0 word0") and "pip install x" in row["text"]
    assert "https://pip.pypa.io" not in row["text"] and "```" not in row["text"]
    assert stats["excluded_by_reason"] == {"empty_text": 1}


def test_an_export_that_keeps_nothing_says_why_with_a_warning(tmp_path) -> None:
    # records written with --fields url,title exported to an empty dataset, and the only line said "0 documents"
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"url": f"http://a.example/{i}", "title": f"T{i}"}) + "\n" for i in range(3)),
                    encoding="utf-8")
    proc = cli("export", str(path), "-o", str(tmp_path / "ds"))
    assert proc.returncode == 0, proc.stderr  # the export did its work; the data had none to give
    assert (f"WARNING: the dataset is empty: all 3 record(s) were left out, 3 as empty_text (records without text: a "
            f"crawl written with --fields that leaves out text and markdown?); each is in {tmp_path / 'ds' / 'excluded.jsonl'}"
            in proc.stderr), proc.stderr
    path.write_text(json.dumps({"url": "http://a.example/", "text": words(40, "w")}) + "\n", encoding="utf-8")
    proc = cli("export", str(path), "-o", str(tmp_path / "ds"))
    assert proc.returncode == 0 and "WARNING" not in proc.stderr and "note:" not in proc.stderr, proc.stderr


def test_an_export_named_like_a_file_says_it_is_made_as_a_folder(tmp_path) -> None:
    # "-o dataset.parquet" made a folder of that name without a word
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"url": "http://a.example/", "text": words(40, "w")}) + "\n", encoding="utf-8")
    proc = cli("export", str(path), "-o", str(tmp_path / "dataset.parquet"))
    assert proc.returncode == 0, proc.stderr
    assert f"note: {tmp_path / 'dataset.parquet'} is made as a folder" in proc.stderr, proc.stderr
    assert (tmp_path / "dataset.parquet" / "data").is_dir()
    again = cli("export", str(path), "-o", str(tmp_path / "dataset.parquet"))  # the folder is there now: no note
    assert again.returncode == 0 and "note:" not in again.stderr, again.stderr


def test_export_refuses_a_folder_of_other_files_and_reuses_its_own(tmp_path) -> None:
    # `export -o ~` (or a project folder) overwrote the folder's README.md with the dataset card and put its
    # shards beside the user's data/: now refused before anything is written; an earlier export's folder,
    # and one an interrupted export left with an empty data/, are taken
    from boilerstrip.export import ExportParams, run_export

    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"url": "http://a.example/p", "text": words(40, "p")}) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "README.md").write_text("my project", encoding="utf-8")
    (home / "data" / "mine.csv").write_text("1,2", encoding="utf-8")
    proc = cli("export", str(path), "-o", str(home))
    assert proc.returncode == 2, proc.stderr
    assert "is a folder with files no earlier export wrote (README.md, data/)" in proc.stderr
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == ["README.md", "data", "data/mine.csv"]
    assert (home / "README.md").read_text(encoding="utf-8") == "my project"
    with pytest.raises(ValueError, match="no earlier export wrote"):
        run_export([path], home)
    ds = tmp_path / "ds"
    (ds / "data").mkdir(parents=True)  # what an interrupted export leaves
    assert run_export([path], ds, ExportParams(format="jsonl"))["documents"] == 1
    assert run_export([path], ds, ExportParams(format="jsonl"))["documents"] == 1  # again: its own folder


def test_export_refuses_a_language_py3langid_never_gives(tmp_path) -> None:
    # --languages english (for en) kept nothing: 0 documents, exit 0, every page "language_not_selected"
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"url": "http://a.example/p", "text": words(40, "p")}) + "\n", encoding="utf-8")
    proc = cli("export", str(path), "-o", str(tmp_path / "ds"), "--languages", "en,english")
    assert proc.returncode == 2, proc.stderr
    assert "--languages: 'english' is not a language code py3langid gives" in one_line(proc, "export")
    assert not (tmp_path / "ds").exists()


# -- export: a series of recurring crawls ---------------------------------------------------------------------
def series(tmp_path: Path) -> tuple[Path, Path]:
    """Monday's crawl: /a, /b, /c; Tuesday's: /a edited, /b unchanged, /c gone (a tombstone)."""
    monday = tmp_path / "2026-01-05.jsonl"
    tuesday = tmp_path / "2026-01-06.jsonl"
    mon, tue = "2026-01-05T03:00:00Z", "2026-01-06T03:00:00Z"
    monday.write_text("\n".join(json.dumps(r) for r in [
        {"url": "http://s.example/a", "text": words(60, "monday"), "fetched_at": mon, "change": "new"},
        {"url": "http://s.example/b", "text": words(60, "bee"), "fetched_at": mon, "change": "new"},
        {"url": "http://s.example/c", "text": words(60, "sea"), "fetched_at": mon, "change": "new"},
    ]) + "\n")
    tuesday.write_text("\n".join(json.dumps(r) for r in [
        {"url": "http://s.example/a", "text": words(60, "tuesday"), "fetched_at": tue, "change": "changed"},
        {"url": "http://s.example/b", "text": words(60, "bee"), "fetched_at": tue, "change": "unchanged"},
        {"url": "http://s.example/c", "change": "removed", "reason": "404", "last_seen": "2026-01-05T03:05:00Z"},
    ]) + "\n")
    return monday, tuesday


@pytest.mark.parametrize("order", ["in_order", "reversed"])
def test_export_of_a_series_keeps_the_newest_version_and_honours_tombstones(tmp_path, order) -> None:
    from boilerstrip.export import ExportParams, run_export

    monday, tuesday = series(tmp_path)
    inputs = [monday, tuesday] if order == "in_order" else [tuesday, monday]
    stats = run_export(inputs, tmp_path / "ds", ExportParams(format="jsonl"))
    kept = {r["url"].rsplit("/", 1)[1]: r for r in rows(tmp_path / "ds")}
    assert sorted(kept) == ["a", "b"]
    assert "tuesday0" in kept["a"]["text"] and kept["a"]["crawl"] == "2026-01-06"
    assert kept["b"]["crawl"] == "2026-01-06"
    reasons = sorted((e["url"].rsplit("/", 1)[1], e["reason"]) for e in excluded(tmp_path / "ds"))
    assert reasons == [("a", "older_version"), ("b", "older_version"), ("c", "removed_later"),
                       ("c", "tombstone_removed")]
    # the card's counts agree with the rows and excluded.jsonl
    assert stats["documents"] == 2 and stats["excluded"] == 4
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "2 documents" in card and "4 left out" in card
    assert "| `removed_later` | 1 |" in card and "| `older_version` | 2 |" in card


def test_a_page_that_came_back_after_its_tombstone_stays(tmp_path) -> None:
    from boilerstrip.export import ExportParams, run_export

    monday, tuesday = series(tmp_path)
    wednesday = tmp_path / "2026-01-07.jsonl"
    wednesday.write_text(json.dumps({"url": "http://s.example/c", "text": words(60, "back"),
                                     "fetched_at": "2026-01-07T03:00:00Z", "change": "new"}) + "\n")
    run_export([wednesday, tuesday, monday], tmp_path / "ds", ExportParams(format="jsonl"))
    kept = {r["url"].rsplit("/", 1)[1]: r for r in rows(tmp_path / "ds")}
    assert sorted(kept) == ["a", "b", "c"] and "back0" in kept["c"]["text"]


# -- the scheduler: one store, validation, retention ----------------------------------------------------------
def schedule_env(tmp_path: Path) -> dict:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(tmp_path / "xdg")}


def test_the_job_store_is_one_folder_whatever_the_working_folder(tmp_path) -> None:
    env = schedule_env(tmp_path)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    add = cli("schedule", "add", "docs", "example.org", "--every", "6h", "-o", str(tmp_path / "runs"), "--keep", "3",
              cwd=here, env=env)
    assert add.returncode == 0, add.stderr
    listed = cli("schedule", "list", cwd=there, env=env)
    assert listed.returncode == 0 and "docs: https://example.org every 21600s" in listed.stdout, listed
    assert "(keeps 3 runs)" in listed.stdout
    assert (tmp_path / "xdg" / "boilerstrip" / "schedule.json").is_file()
    assert list(here.iterdir()) == [] and list(there.iterdir()) == []  # no .lock, no .boilerstrip-state
    other = cli("schedule", "list", "--store", str(tmp_path / "elsewhere"), cwd=there, env=env)
    assert "no jobs in" in other.stdout and not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--every", "99999999999999999999w"], "at most 520w"),
    (["--cron", "0 0 31 2 *"], "never fires"),
    (["--every", "1h", "--resume"], "unrecognized arguments: --resume"),
    (["--every", "1h", "--keep", "0"], "--keep must be >= 1"),
])
def test_schedule_add_refuses_what_could_never_run(tmp_path, args, message) -> None:
    proc = cli("schedule", "add", "x", "http://127.0.0.1:9/", "-o", str(tmp_path / "runs"), *args,
               cwd=tmp_path, env=schedule_env(tmp_path))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "xdg" / "boilerstrip" / "schedule.json").exists()


GOOD_JOB = {"name": "good", "urls": ["http://127.0.0.1:9/"], "out_dir": "/tmp/runs", "every_s": 3600}


@pytest.mark.parametrize(("content", "message"), [
    ("[]", "holds a JSON list"),
    ("{not json", "not readable JSON"),
    (json.dumps({"jobs": []}), "'jobs' must be an object"),
])
def test_a_broken_jobs_file_is_one_line_not_a_traceback(tmp_path, content, message) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "schedule.json").write_text(content)
    for action in ("list", "run"):
        proc = cli("schedule", action, "--store", str(store), cwd=tmp_path, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert message in one_line(proc, "schedule") and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("entry", "message"), [
    ({**GOOD_JOB, "name": "bad", "colour": "red"}, "unknown field(s) colour"),
    ({"name": "bad", "urls": ["http://a/"]}, "missing field(s) out_dir"),
    ({**GOOD_JOB, "name": "bad", "every_s": 10 ** 30}, "every_s must be"),
    ({**GOOD_JOB, "name": "bad", "every_s": None, "cron": "0 0 31 2 *"}, "never fires"),
])
def test_a_broken_job_is_named_and_skipped_the_others_run(tmp_path, entry, message) -> None:
    from boilerstrip.schedule import JobStore
    from boilerstrip.schedule.runner import Scheduler

    store = tmp_path / "store"
    store.mkdir()
    (store / "schedule.json").write_text(json.dumps({"jobs": {"good": GOOD_JOB, "bad": entry}}))
    listed = cli("schedule", "list", "--store", str(store), cwd=tmp_path, timeout=60)
    assert "good: http://127.0.0.1:9/" in listed.stdout and "Traceback" not in listed.stderr
    if "never fires" not in message:
        assert listed.returncode == 2 and message in listed.stderr and "bad" in listed.stderr

    class Recorder:  # stands in for APScheduler's scheduler: what sync() asks of it
        def __init__(self) -> None:
            self.jobs: list[str] = []

        def add_job(self, func, trigger, id, **kwargs) -> None:  # noqa: A002 - APScheduler's name
            self.jobs.append(id)

        def remove_job(self, name) -> None:
            self.jobs.remove(name)

    scheduler = Scheduler(JobStore(store))
    scheduler._scheduler = Recorder()
    scheduler.sync()
    assert scheduler._scheduler.jobs == ["good"]


def test_retention_keeps_the_newest_runs_and_never_latest(tmp_path) -> None:
    import os
    from datetime import datetime, timezone

    from boilerstrip.schedule import ScheduledJob
    from boilerstrip.schedule.runner import prune_runs
    from boilerstrip.state import schedule_layout

    layout = schedule_layout(tmp_path, "docs")
    layout.folder.mkdir(parents=True)
    stamps = [f"202612{day:02d}T030000Z" for day in range(1, 7)]
    for stamp in stamps:
        for suffix in (".jsonl", ".summary.json", ".log", ".ledger.jsonl", ".manifest.json"):
            (layout.folder / f"{stamp}{suffix}").write_text(stamp)
        (layout.folder / f"{stamp}.report").mkdir()
        (layout.folder / f"{stamp}.report" / "template-report.json").write_text("{}")
    os.link(layout.run_output(stamps[1]), layout.latest)  # the last good run is an old one (later ones failed)
    job = ScheduledJob("docs", ["http://a/"], str(tmp_path), every_s=86400, keep_runs=2)
    deleted = prune_runs(job, now=datetime(2026, 12, 7, tzinfo=timezone.utc))
    assert deleted == [stamps[0], stamps[2], stamps[3]]
    left = sorted({p.name.split(".")[0] for p in layout.folder.iterdir()})
    assert left == [stamps[1], stamps[4], stamps[5], "latest"]
    assert layout.latest.read_text() == stamps[1]
    by_days = ScheduledJob("docs", ["http://a/"], str(tmp_path), every_s=86400, keep_days=2)
    assert prune_runs(by_days, now=datetime(2026, 12, 7, 12, tzinfo=timezone.utc)) == [stamps[4]]


# -- a recurring crawl of a site that is down -----------------------------------------------------------------
def test_the_finishing_line_counts_the_near_duplicates_it_marked(capsys, tmp_path) -> None:
    """As ``boilerstrip dedup`` says it: the pages kept and marked as near duplicates are counted on the
    crawl's finishing line too (when there are any), and the line is the command's own."""
    from boilerstrip.run import report_finishing

    summary = {"pages": 9, "records": 9, "tombstones": 0, "dropped": 1, "marked": 3, "report": "r.json",
               "seconds": {"reading": 0.1, "cleaning pages": 0.2}}
    report_finishing(summary, tmp_path / "o.jsonl", prog="boilerstrip warc")
    report_finishing({**summary, "marked": 0}, tmp_path / "o.jsonl")
    lines = [line for line in capsys.readouterr().err.splitlines() if "finishing pass" in line]
    assert lines == ["boilerstrip warc: finishing pass: 9 pages, 1 duplicates dropped, 3 near duplicates kept and "
                     "marked, template report in r.json (0.3 s: reading 0.1, cleaning pages 0.2)",
                     "boilerstrip crawl: finishing pass: 9 pages, 1 duplicates dropped, template report in r.json "
                     "(0.3 s: reading 0.1, cleaning pages 0.2)"]


@pytest.mark.timeout(300)
def test_a_failed_run_exits_non_zero_and_never_replaces_latest(tmp_path) -> None:
    from _crawlsite import FAST, small_site
    from boilerstrip.demo.server import Reply, SiteServer
    from boilerstrip.schedule import ScheduledJob, run_job
    from boilerstrip.state import schedule_layout

    with SiteServer(routes=small_site(3)) as server:
        job = ScheduledJob("docs", [server.url + "/"], str(tmp_path / "runs"), every_s=3600, crawl_args=list(FAST))
        first = run_job(job)
        assert first["exit_code"] == 0 and first["latest_updated"], first
        assert first["records"] == first["pages"] == 4 and first["tombstones"] == 0
        good = schedule_layout(job.out_dir, job.name).latest.read_bytes()
        gone = Reply(404, b"<html><body>Not here</body></html>", (("Content-Type", "text/html"),))
        for path in list(server.routes):
            server.routes[path] = gone
        second = run_job(job)
    assert second["exit_code"] == 1, Path(second["log"]).read_text()[-2000:]
    # the server answered 404: said as such, with the status line (Scrapy's "Ignoring non-200 response" said nothing)
    assert (f"no start URL gave a page (each answered with an error), nothing written: {server.url}/ "
            "(failed:http_404: 404 Not Found)") in Path(second["log"]).read_text()
    assert second["latest_updated"] is False and "latest.jsonl still holds the last good run" in second["latest_kept"]
    assert second["latest_kept"].startswith("the run failed (exit 1: stopped early, or no start URL gave a page "
                                            "(unreachable, an HTTP error, or disallowed by robots.txt))")
    assert schedule_layout(job.out_dir, job.name).latest.read_bytes() == good
    assert second["pages"] == 0 and second["records"] == second["tombstones"]


@pytest.mark.timeout(300)
def test_a_scheduled_run_that_gave_up_on_a_host_keeps_latest_and_says_why(tmp_path) -> None:
    # a site down at 3 a.m.: the run gives the host up (exit 6) and latest.jsonl stays the last whole crawl
    from _crawlsite import FAST, small_site
    from boilerstrip.demo.server import Reply, SiteServer
    from boilerstrip.schedule import ScheduledJob, run_job
    from boilerstrip.state import schedule_layout

    pages = 30
    with SiteServer(routes=small_site(pages)) as server:
        job = ScheduledJob("docs", [server.url + "/"], str(tmp_path / "runs"), every_s=3600,
                           crawl_args=[*FAST, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
                                       "-s", 'BOILERSTRIP_POLITENESS_PARAMS={"max_retries": 4}'])
        first = run_job(job)
        assert first["exit_code"] == 0 and first["latest_updated"], first
        good = schedule_layout(job.out_dir, job.name).latest.read_bytes()
        for i in range(1, pages + 1):
            server.routes[f"/p{i}"] = Reply(503, b"upstream down", (("Content-Type", "text/plain"),))
        second = run_job(job)
    assert second["exit_code"] == 6, Path(second["log"]).read_text()[-2000:]
    assert second["latest_kept"] == ("the run failed (exit 6: a host stopped answering and was given up; the next run "
                                     "fetches its pages): latest.jsonl still holds the last good run")
    assert schedule_layout(job.out_dir, job.name).latest.read_bytes() == good
    assert second["changes"].get("removed", 0) == 0  # (the pages not fetched are not gone)


# -- the counts a crawl prints agree with its output ----------------------------------------------------------
def test_written_line_says_what_it_counts() -> None:
    from boilerstrip.run import written_line

    assert written_line({"records": 6, "tombstones": 2, "unchanged_left_out": 121}) == \
        "6 records written (4 pages, 2 tombstones; 121 unchanged pages left out by --changes-only)"
    assert written_line({"records": 5, "tombstones": 0}) == "5 records written (5 pages)"


@pytest.mark.timeout(300)
def test_changes_only_counts_agree_with_the_file(serve, tmp_path) -> None:
    import re

    from _crawlsite import FAST, page, small_site
    from conftest import run_crawl

    routes = small_site(5)
    server = serve(routes=routes)
    state = ["--state", str(tmp_path / "state")]
    first, _ = run_crawl(server.url + "/", out=tmp_path / "one.jsonl", args=[*FAST, *state])
    assert first.returncode == 0, first.stderr[-2000:]
    server.routes["/p1"] = page("p1", ["/"], body="An edited page with other words in it than before, now.")
    del server.routes["/p5"]
    server.routes["/"] = page("home", ["/p1", "/p2", "/p3", "/p4", "/p5"])
    second, records = run_crawl(server.url + "/", out=tmp_path / "two.jsonl", args=[*FAST, *state, "--changes-only"])
    assert second.returncode == 0, second.stderr[-2000:]
    changes = [r["change"] for r in records]
    assert "removed" in changes and "changed" in changes and "unchanged" not in changes
    match = re.search(r"(\d+) records written \((\d+) pages, (\d+) tombstones(?:; (\d+) unchanged pages left out)?",
                      second.stderr)
    assert match, second.stderr
    written, pages, tombstones, left_out = (int(g or 0) for g in match.groups())
    assert written == len(records) and tombstones == changes.count("removed") and pages == written - tombstones
    extracted = int(re.search(r"(\d+) pages extracted", second.stderr).group(1))
    assert extracted == pages + left_out  # the pages the crawl extracted (or reused): written or left out
    summary = re.search(r"changes: (\d+) new, (\d+) changed, (\d+) unchanged, (\d+) removed", second.stderr)
    new, changed, unchanged, removed = map(int, summary.groups())
    assert (new + changed, unchanged, removed) == (pages, left_out, tombstones)
    assert "items written" not in second.stderr


# -- a corrupt state file ---------------------------------------------------------------------------------------
def _good_state(folder: Path) -> Path:
    from boilerstrip.state import SqliteState, UrlState

    state = SqliteState(folder)
    for i in range(200):
        state.history.put(UrlState(url=f"http://a.example/{i}", site="a.example", text_hash="x" * 64 + str(i)))
    state.commit()
    state.close()
    return folder / "state.sqlite3"


@pytest.mark.parametrize("damage", ["random_bytes", "cut_in_half", "foreign_tables"])
def test_a_corrupt_state_file_is_named_set_aside_and_started_afresh(tmp_path, caplog, damage) -> None:
    import logging
    import os
    import sqlite3

    from boilerstrip.state import SqliteState, UrlState

    path = _good_state(tmp_path / "state")
    if damage == "random_bytes":
        path.write_bytes(os.urandom(path.stat().st_size))
    elif damage == "cut_in_half":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    else:
        path.unlink()
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, address TEXT)")
        db.commit()
        db.close()
    with caplog.at_level(logging.WARNING):
        state = SqliteState(tmp_path / "state")
    try:
        state.history.put(UrlState(url="http://a.example/new", site="a.example"))
        state.commit()
        assert state.history.get("http://a.example/new") is not None
    finally:
        state.close()
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert str(path) in warning and "starting from an empty state" in warning
    assert list((tmp_path / "state").glob("state.sqlite3.broken-*"))
    again = SqliteState(tmp_path / "state")  # the next run opens it without a word
    again.close()


# -- Ctrl-C in a terminal ----------------------------------------------------------------------------------------
def crawl_in_a_terminal(url: str, out: Path, interrupt_when) -> tuple[int, str]:
    """Run ``boilerstrip crawl`` in a new pty session (as a terminal runs it), send SIGINT to its whole
    process group (what Ctrl-C does: workers, forkserver and all) once ``interrupt_when()`` holds; returns
    (exit status, everything the terminal showed)."""
    import os
    import pty
    import signal
    import threading
    import time

    from _crawlsite import FAST

    argv = [sys.executable, "-m", "boilerstrip", "crawl", url, "-o", str(out), *FAST, "-s", "DOWNLOAD_DELAY=0.05"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader with the pty as its terminal
        os.chdir(ROOT)
        os.execv(sys.executable, argv)
    shown: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            shown.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 180
    while not interrupt_when() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(pid, signal.SIGINT)
    _, status = os.waitpid(pid, 0)
    reader.join(timeout=10)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(shown).decode("utf-8", "replace")


@pytest.mark.timeout(300)
def test_ctrl_c_in_a_terminal_ends_like_a_sigint_to_the_crawl(serve, tmp_path) -> None:
    from _crawlsite import small_site

    server = serve(routes=small_site(300))
    out = tmp_path / "o.jsonl"
    part = tmp_path / "o.jsonl.part"

    def some_pages_written() -> bool:
        return part.exists() and part.read_bytes().count(b"\n") >= 5

    code, shown = crawl_in_a_terminal(server.url + "/", out, some_pages_written)
    assert code == 1, shown[-3000:]
    assert "finished (shutdown)" in shown
    assert "stopped early (shutdown); the same command with --resume goes on from where it stopped" in shown
    assert "Traceback" not in shown and "worker process died" not in shown, shown[-3000:]
    manifest = json.loads((tmp_path / "o.manifest.json").read_text())
    assert manifest["finish_reason"] == "shutdown" and manifest["reconciled"] is False
    assert out.is_file() and not part.exists() and not (tmp_path / "o.ledger.jsonl.part").exists()


@pytest.mark.timeout(300)
def test_ctrl_c_in_the_first_moments_never_exits_0(serve, tmp_path) -> None:
    import time

    from _crawlsite import small_site

    server = serve(routes=small_site(300))
    out = tmp_path / "o.jsonl"
    started = time.monotonic()
    code, shown = crawl_in_a_terminal(server.url + "/", out, lambda: time.monotonic() - started > 1.5)
    assert code != 0, shown[-3000:]
    assert "Traceback" not in shown, shown[-3000:]
    if out.exists():  # the crawl had started: it ended as a shutdown, with its manifest
        assert json.loads((tmp_path / "o.manifest.json").read_text())["finish_reason"] == "shutdown"


# -- choosing the fields ----------------------------------------------------------------------------------------
def test_select_fields_keeps_the_chosen_fields_and_a_tombstone_whole() -> None:
    from boilerstrip.finishing.steps import field_list, select_fields

    assert field_list("title, text") == ["url", "title", "text"]
    assert field_list({"text": "body", "url": "address"}) == ["url", "text"]
    page = {"url": "http://a/", "title": "T", "text": "x", "blocks": [1]}
    assert select_fields(page, ["url", "text"]) == {"url": "http://a/", "text": "x"}
    gone = {"url": "http://a/b", "change": "removed", "reason": "http_404", "last_seen": "2026-01-01T00:00:00Z"}
    assert select_fields(gone, ["url", "text"]) == gone
    assert select_fields(page, None) is page


@pytest.mark.timeout(300)
def test_crawl_writes_only_the_fields_asked_for(serve, tmp_path) -> None:
    from _crawlsite import FAST, small_site
    from conftest import run_crawl

    server = serve(routes=small_site(3))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=[*FAST, "--fields", "title,text"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == 4 and all(list(r) == ["url", "title", "text"] for r in records)
    manifest = json.loads((tmp_path / "o.manifest.json").read_text())
    assert manifest["reconciled"] is True
    proc, records = run_crawl(server.url + "/", out=tmp_path / "s.jsonl",
                              args=[*FAST, "-s", "FEED_EXPORT_FIELDS=url,title"])
    assert proc.returncode == 0 and all(list(r) == ["url", "title"] for r in records)
    bad = cli("crawl", server.url + "/", "-o", str(tmp_path / "b.jsonl"), "--fields", "url,colour")
    assert bad.returncode == 2 and "unknown field(s) colour" in one_line(bad, "crawl")


# -- progress in the finishing pass -------------------------------------------------------------------------------
def test_the_finishing_pass_counts_its_phases(tmp_path) -> None:
    from boilerstrip.finishing import finish_crawl
    from boilerstrip.finishing.steps import PassProgress

    path = tmp_path / "o.jsonl"
    path.write_text("".join(json.dumps({"url": f"http://a.example/{i}", "text": words(30, f"p{i}"),
                                        "blocks": [["p", words(30, f"p{i}")]]}) + "\n" for i in range(12)))
    seen: list[tuple[str, int]] = []

    class Watch(PassProgress):  # what a ticker reading it at any moment could print
        def __setattr__(self, name, value) -> None:
            super().__setattr__(name, value)
            if name == "done":
                seen.append((self.phase, value))

    progress = Watch(total=12)
    finish_crawl(path, path, progress=progress)
    phases = [phase for phase, _ in seen]
    assert phases.index("reading pages") < phases.index("building the template model") < phases.index("cleaning pages") \
        < phases.index("writing records")
    assert ("reading pages", 12) in seen and ("cleaning pages", 12) in seen and ("writing records", 12) in seen
    assert progress.line().startswith("finishing pass: writing records 12/12 (")


def test_the_finishing_pass_times_its_phases_in_order() -> None:
    from boilerstrip.finishing.steps import PassProgress

    progress = PassProgress(total=3)
    for phase in ("reading pages", "building the template model", "cleaning pages", "reading pages"):
        progress.enter(phase)
    phases = progress.finish()
    assert list(phases) == ["reading", "reading pages", "building the template model", "cleaning pages"]
    assert all(seconds >= 0 for seconds in phases.values())
    assert progress.finish()["reading pages"] >= phases["reading pages"]  # a phase entered again adds up


def test_a_crawl_says_how_long_each_phase_of_its_pass_took(serve, tmp_path) -> None:
    """The finishing pass is no silent phase: its time, phase by phase, is on its summary line and in the
    manifest (``finishing``), the phases in the order the pass went through them."""
    from _crawlsite import FAST, small_site
    from conftest import run_crawl

    server = serve(routes=small_site(3))
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=[*FAST])
    assert proc.returncode == 0 and len(records) == 4, proc.stderr[-2000:]
    finishing = json.loads((tmp_path / "o.manifest.json").read_text())["finishing"]
    assert finishing["status"] == "done", finishing
    assert set(finishing["phases_s"]) == {"reading", "reading pages", "building the template model",
                                          "cleaning pages", "sorting", "writing records"}
    assert abs(finishing["seconds"] - sum(finishing["phases_s"].values())) < 0.01
    line = next(line for line in proc.stderr.splitlines() if "finishing pass: 4 pages" in line)
    said = line.partition(" s: ")[2]
    assert [part.rsplit(" ", 1)[0] for part in said.rstrip(")").split(", ")] == [
        "reading", "reading pages", "building the template model", "cleaning pages", "sorting", "writing records"], line


def test_the_ticker_prints_while_the_pass_runs(capsys) -> None:
    import time

    from boilerstrip.finishing.steps import PassProgress, ProgressTicker

    progress = PassProgress(total=527, phase="cleaning pages", done=120)
    ticker = ProgressTicker(progress, every_s=0.05)
    deadline = time.monotonic() + 30
    while "cleaning pages 120/527" not in capsys.readouterr().err and time.monotonic() < deadline:
        time.sleep(0.05)
    ticker.stop()
    assert time.monotonic() < deadline


@pytest.mark.parametrize("command", ["dedup", "check", "chunk"])
def test_dedup_check_and_chunk_say_how_far_they_got_while_they_run(tmp_path, monkeypatch, capsys, command) -> None:
    # both were silent for their whole length (minutes over a large crawl): now they print the ticker's line,
    # as the crawl's pass and export do (a tick of 1 ms here instead of 5 s; 2,000 records take 0.1 s or more)
    import argparse
    import importlib

    from boilerstrip.finishing.steps import ProgressTicker

    module = importlib.import_module(f"boilerstrip.commands.{command}")
    monkeypatch.setattr(module, "ProgressTicker", lambda progress: ProgressTicker(progress, every_s=0.001))
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"url": f"http://a.example/{i}", "text": words(40, f"d{i}q")}) + "\n"
                            for i in range(2000)), encoding="utf-8")
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    args = [str(path), "-o", str(tmp_path / "out.jsonl")] if command != "check" else [str(path)]
    assert module.run(parser.parse_args(args)) == 0
    err = capsys.readouterr().err
    assert f"[boilerstrip] {command}: reading " in err and "/2000 (" in err, err[-2000:]


def test_the_progress_line_says_pages_wait_for_robots_txt() -> None:
    from boilerstrip.extensions.progress import ProgressExtension, ProgressParams

    class Stats:
        def __init__(self, values) -> None:
            self.values = values

        def get_stats(self) -> dict:
            return self.values

    waiting = ProgressExtension(ProgressParams(), Stats({"boilerstrip/robots/pending": 1}), [])
    assert "waiting for robots.txt of 1 host(s)" in waiting.line()
    retrying = ProgressExtension(ProgressParams(), Stats({"boilerstrip/robots/pending": 1,
                                                          "boilerstrip/robots/fetch/robots_unreachable": 2}), [])
    assert "2 unreachable so far: retrying" in retrying.line()
    # with why (the robots middleware's detail of its last unreachable verdict): a mistyped host, a wrong port
    named = ProgressExtension(ProgressParams(), Stats({"boilerstrip/robots/fetch/robots_unreachable": 2,
                                                       "boilerstrip/robots/unreachable_detail": "dns_not_found"}), [])
    assert "[robots.txt unreachable 2 time(s), the last dns_not_found: its pages wait for a retry]" in named.line()
    done = ProgressExtension(ProgressParams(), Stats({"boilerstrip/robots/pending": 0, "item_scraped_count": 3}), [])
    assert "robots.txt" not in done.line()


def test_a_run_that_wrote_nothing_says_what_to_check() -> None:
    import io

    from scrapy.utils.test import get_crawler

    from boilerstrip.extensions.progress import ProgressExtension
    from boilerstrip.spiders.site import SiteSpider
    from boilerstrip.spiders.warc import WarcReplaySpider

    def summary(spider_cls, stats: dict) -> str:
        crawler = get_crawler(spider_cls)
        ext = ProgressExtension.from_crawler(crawler)
        for key, value in stats.items():
            crawler.stats.set_value(key, value)
        ext.stream = io.StringIO()
        ext.spider_closed("finished")
        return ext.stream.getvalue()

    crawl = summary(SiteSpider, {"boilerstrip/filtered/robots_unreachable": 1})
    assert "WARNING: no page was written (robots_unreachable=1); check the start URL" in crawl, crawl
    # a WARC holding no response: no reasons to list, and no start URL to check
    replay = summary(WarcReplaySpider, {})
    assert "WARNING: no page was written; check the WARC files" in replay, replay


# -- a distributed crawl says what its workers did ---------------------------------------------------------------
def test_the_coordinators_line_sums_the_workers() -> None:
    from boilerstrip.distributed.coordinator import progress_line
    from boilerstrip.distributed.store import Snapshot

    line = progress_line(12.3, 40, 38, Snapshot(queued=5, inflight=2, live=2, starting=0, dead=1))
    assert "(all workers) settled 40  extracted 38  queued 5  in flight 2  workers 2 (1 presumed dead)" in line


@pytest.mark.timeout(300)
def test_a_distributed_crawl_prints_its_summary_and_finishing_lines(tmp_path) -> None:
    from _crawlsite import FAST, small_site
    from _redis import LocalRedis, need_redis_server
    from boilerstrip.demo.server import SiteServer

    from _incrawl import run_cli

    need_redis_server()
    with LocalRedis() as server, SiteServer(routes=small_site(4)) as site:
        # the coordinator in a forked child (what it prints is the point, not its process); its worker is a process
        proc = run_cli(["crawl", site.url + "/", "-o", str(tmp_path / "d.jsonl"), "--redis", server.url, "--workers",
                        "1", *FAST], timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "pages extracted by 1 local worker(s)" in proc.stderr and "settled again" in proc.stderr
    assert "boilerstrip crawl: finishing pass: 5 pages" in proc.stderr, proc.stderr[-3000:]


# -- export memory -----------------------------------------------------------------------------------------------
_PEAK = """
import resource, sys
from boilerstrip.export import ExportParams, run_export
stats = run_export([sys.argv[1]], sys.argv[2], ExportParams(format="jsonl"))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, stats["documents"], stats["excluded"])
"""


def _export_peak(path: Path, out: Path) -> tuple[int, int, int]:
    import os

    proc = subprocess.run([sys.executable, "-c", _PEAK, str(path), str(out)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    peak, documents, left_out = map(int, proc.stdout.split())
    return peak, documents, left_out


@pytest.mark.timeout(900)
def test_a_huge_record_costs_the_export_at_most_four_times_its_line(tmp_path) -> None:
    small = [json.dumps({"url": f"http://a.example/{i}", "text": words(300, f"w{i}")}) for i in range(20)]
    (tmp_path / "small.jsonl").write_text("\n".join(small) + "\n")
    line = json.dumps({"url": "http://a.example/huge", "text": words(1_500_000, "x")})  # ~40 MB
    (tmp_path / "huge.jsonl").write_text(line + "\n" + "\n".join(small) + "\n")
    baseline, documents, left_out_small = _export_peak(tmp_path / "small.jsonl", tmp_path / "a")
    peak, with_huge, left_out = _export_peak(tmp_path / "huge.jsonl", tmp_path / "b")
    assert documents == with_huge and left_out == left_out_small + 1
    assert excluded(tmp_path / "b")[0]["reason"] == "too_long"
    assert peak - baseline <= 4 * len(line), (peak, baseline, len(line))


def test_the_export_counts_its_phases(tmp_path) -> None:
    from boilerstrip.export import ExportParams, run_export
    from boilerstrip.finishing.steps import PassProgress

    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"url": f"http://a.example/{i}", "text": words(40, f"d{i}q")}) + "\n"
                            for i in range(6)))
    seen: list[tuple[str, int]] = []

    class Watch(PassProgress):
        def __setattr__(self, name, value) -> None:
            super().__setattr__(name, value)
            if name == "done":
                seen.append((self.phase, value))

    progress = Watch(total=6, label="export")
    stats = run_export([path], tmp_path / "ds", ExportParams(format="jsonl"), progress=progress)
    assert ("reading records", 6) in seen and ("deduplicating", 0) in seen
    assert ("writing rows", stats["documents"]) in seen
    assert progress.line().startswith(f"export: writing rows {stats['documents']}/6 (")


def test_ctrl_c_while_the_commands_are_still_being_imported_exits_130_without_a_traceback(monkeypatch, capsys) -> None:
    """The first moments of a run are spent importing the commands (seconds on a loaded machine; CI once
    sent Ctrl-C right then and got a traceback): that window ends like any later Ctrl-C."""
    from boilerstrip import cli

    def interrupted_import(only=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted_import)
    assert cli.main(["crawl", "http://127.0.0.1:9/"]) == 130
    assert capsys.readouterr().err == "boilerstrip: interrupted\n"


def test_sigterm_ends_a_command_as_ctrl_c_does_with_its_cleanup(tmp_path, monkeypatch, capsys) -> None:
    """``kill`` (SIGTERM) of an export, a dedup, a chunk... used to end the process where it stood and leave
    its temporary files (an export left its index folder, a shard's part and its excluded log); now it is
    raised where the command stands, so its cleanup runs, and the exit status is 143."""
    import os
    import signal

    from boilerstrip import cli
    from boilerstrip.atomicfile import atomic_open

    target = tmp_path / "out.jsonl"

    def killed_while_writing(args) -> int:
        with atomic_open(target, "w") as handle:
            handle.write("half a record")
            os.kill(os.getpid(), signal.SIGTERM)
            handle.write(" and the rest")  # never reached: the signal is raised at the line before
        return 0

    class NotHandledByTheCommand(Exception):
        pass

    def runner_handler(signum, frame):  # what the process had before (here: a test runner's, not a kill)
        raise NotHandledByTheCommand

    module = importlib.import_module("boilerstrip.commands.check")
    monkeypatch.setattr(module, "run", killed_while_writing)
    before = signal.signal(signal.SIGTERM, runner_handler)
    try:
        assert cli.main(["check", str(target)]) == 143
        assert signal.getsignal(signal.SIGTERM) is runner_handler  # put back when the command ends
    finally:
        signal.signal(signal.SIGTERM, before)
    assert capsys.readouterr().err == "boilerstrip check: terminated\n"  # named after the command
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file


def test_a_command_imports_its_own_module_only_and_help_lists_them_all() -> None:
    """``boilerstrip extract ...`` builds its own parser alone (the nine others cost 75 ms of every start);
    ``boilerstrip --help`` and a mistyped command still see every command."""
    code = ("import sys\nfrom boilerstrip import cli\n"
            "for argv in (['extract', '--help'], ['--help'], ['extrakt']):\n"
            "    before = set(sys.modules)\n"
            "    try:\n        cli.main(argv)\n    except SystemExit:\n        pass\n"
            "    print(sorted(m for m in set(sys.modules) - before if m.startswith('boilerstrip.commands.')), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    loaded = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert loaded[0] == "['boilerstrip.commands.extract']", proc.stderr
    assert "boilerstrip.commands.crawl" in loaded[1] and "boilerstrip.commands.warc" in loaded[1]
    assert "invalid choice: 'extrakt'" in proc.stderr and "choose from 'crawl'" in proc.stderr


# -- credentials in a start URL ------------------------------------------------------------------------------------
def test_credentials_in_a_start_url_authenticate_on_its_host_and_are_kept_nowhere(serve, tmp_path) -> None:
    # http://user:password@host/ was crawled without them (the normal form drops them): 401 on every page
    import base64
    import gzip

    from conftest import Reply, run_crawl

    token = "Basic " + base64.b64encode(b"ann:s3cr:et").decode()
    page = ("<html><head><title>{0}</title></head><body><main><h1>Members {0}</h1><p>" + "Words for members of {0}. " * 20
            + "</p><a href='/1'>1</a></main></body></html>")

    def members(path, headers):
        if headers.get("authorization") != token:
            return Reply(401, b"login", (("WWW-Authenticate", 'Basic realm="m"'),))
        return Reply(200, page.format(path).encode(), (("Content-Type", "text/html"),))

    site = serve(routes={"/": members, "/1": members})
    bare = site.url.split("://", 1)[1]
    out = tmp_path / "o.jsonl"
    proc, records = run_crawl(f"http://ann:s3cr%3Aet@{bare}/", out=out,
                              args=["--profile", "test", "--no-sitemaps", "--warc", str(tmp_path / "warc")])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(r["url"] for r in records) == [site.url + "/", site.url + "/1"]
    assert all(e.headers.get("authorization") == token for e in site.log), [e.path for e in site.log]
    # Scrapy logs its overridden settings, HTTPAUTH_PASS among them, at INFO: masked
    logged = run_crawl(f"http://ann:s3cr%3Aet@{bare}/", out=tmp_path / "logged.jsonl",
                       args=["--profile", "test", "--no-sitemaps", "--log-level", "INFO"])[0]
    assert "'HTTPAUTH_PASS': '***'" in logged.stderr and "s3cr" not in logged.stderr, logged.stderr[-3000:]
    written = b"".join(p.read_bytes() for p in tmp_path.glob("o.*") if p.is_file())
    warc = b"".join(gzip.decompress(p.read_bytes()) for p in (tmp_path / "warc").glob("*.warc.gz"))
    assert b"s3cr" not in written and b"YW5u" not in warc and b"Authorization: [redacted by boilerstrip]" in warc
    # one set of credentials, for one host
    other = cli("crawl", f"http://ann:x@{bare}/", "http://bob:y@other.example/", "-o", str(tmp_path / "two.jsonl"))
    assert other.returncode == 2 and "credentials (user:password@) are sent to one host only" in other.stderr
    assert not (tmp_path / "two.jsonl").exists()


def test_a_jobs_password_is_not_listed(tmp_path) -> None:
    from boilerstrip.schedule import JobStore, ScheduledJob

    store = JobStore(tmp_path / "st")
    store.add(ScheduledJob("members", ["http://ann:s3cret@127.0.0.1:9/"], str(tmp_path / "runs"), every_s=3600))
    listing = cli("schedule", "list", "--store", str(tmp_path / "st"))
    assert "members: http://ann:***@127.0.0.1:9/ every 3600s" in listing.stdout and "s3cret" not in listing.stdout
