"""Everyday use (issue 26 and issue 30's validation items): what a user typing commands hits next.

Argument checks (``-o -``, ``--state`` on a file, a bare host), wrong files given to export and check, a
series of recurring crawls exported, the scheduler's store and retention. Pure or in-process where the
process boundary is not the point; CLI subprocesses where exit codes and stderr lines are.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from boilerstrip.commands.crawl import complete_bare_hosts
from conftest import ROOT


def cli(*args: str, cwd=ROOT, env=None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "boilerstrip", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


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
    ("localhost:8080", "https://localhost:8080"),
    ("http://example.org/", "http://example.org/"),
    ("ftp://example.org/", "ftp://example.org/"),
    ("not a host", "not a host"),
])
def test_a_bare_host_is_taken_as_https(given, expected) -> None:
    urls, notes = complete_bare_hosts([given])
    assert urls == [expected]
    assert bool(notes) == (given != expected)
    if notes:
        assert expected in notes[0]
