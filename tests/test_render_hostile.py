"""The hostile web, browser side (issue 16): real crawls through a real Chromium against loopback fault servers.

- SSRF through redirects inside the browser (navigation, fetch, iframe; IP literal and a name), with the
  default settings (auto render, polite profile);
- a lone surrogate in script-written text;
- the browser killed mid-crawl, several times;
- the browser's memory bound.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from boilerstrip.rendering import default_browser_path
from conftest import ROOT, Reply, read_jsonl, run_crawl
from hostile_faults import assert_reconciled

sys.path.insert(0, str(ROOT / "benchmarks"))
from mixed_site import build_mixed_site  # noqa: E402

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not default_browser_path() and not os.environ.get("BOILERSTRIP_RENDER_BROWSER_PATH"),
        reason="no chromium installed (./run tests installs Debian's)",
    ),
]

FAST = ["--profile", "test", "--log-level", "INFO"]
SECRET = "INTERNAL-ADMIN-TOKEN-7f3a9c"
#: an app script long enough to count as app code for the render decision
_PAD = "/* " + "app bootstrap " * 20 + "*/"


def _shell(title: str, script: str) -> Reply:
    return _html(f"<!doctype html><html><head><title>{title}</title><script>{_PAD}\n{script}</script></head>"
                 f'<body><div id="root"></div></body></html>')


def _story(words: str) -> str:
    return (f"<article><h1>{words}</h1><p>{words} was written down by the harbour authority after the spring "
            f"storms had passed, using notes kept since the nineteen fifties and checked twice.</p></article>")


def _html(body: str) -> Reply:
    return Reply(body=body.encode(), headers=(("Content-Type", "text/html; charset=utf-8"),))


def _redirect(location: str) -> Reply:
    return Reply(status=302, headers=(("Location", location),))


def _stats(log: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"'(boilerstrip/render/[^']+|playwright/[^']+)': (\d+)", log)}


def _by_path(records: list[dict]) -> dict[str, dict]:
    return {urlsplit(r["url"]).path: r for r in records}


def test_redirects_inside_the_browser_never_reach_an_internal_service(tmp_path: Path, serve) -> None:
    internal = serve(routes={
        "/secret": _html(f"<main><h1>Admin</h1><p>{SECRET} " + "internal only " * 40 + "</p></main>"),
        "/api.json": Reply(body=f'{{"html": "<p>{SECRET}</p>"}}'.encode(), headers=(("Content-Type", "application/json"),)),
    })
    inside = f"http://127.0.0.1:{internal.port}"
    by_name = f"http://localhost:{internal.port}"  # a name that resolves to loopback: checked on the address
    render_story = "document.getElementById('root').innerHTML = "
    site = serve(routes={
        "/": _html('<main><h1>Index</h1><p>Links to the test pages of this small site.</p><ul>'
                   + "".join(f'<li><a href="/{p}.html">{p}</a></li>' for p in ("nav", "fetch", "frame", "hops"))
                   + "</ul></main>"),
        # a script navigates to a same-origin URL that redirects (twice) into the internal service
        "/nav.html": _shell("nav", "setTimeout(function () { location.href = '/go-nav'; }, 200);"),
        "/go-nav": _redirect("/go-nav-2"),
        "/go-nav-2": _redirect(inside + "/secret"),
        # fetch() of a same-origin URL that redirects to the internal API
        "/fetch.html": _shell("fetch", "fetch('/go-api').then(function (r) { return r.text(); }).then(function (t) {"
                              f" {render_story} '{_story('Fetched story')}' + '<pre>' + t + '</pre>'; }})"
                              f".catch(function () {{ {render_story} '{_story('Fetched story')}'; }});"),
        "/go-api": _redirect(inside + "/api.json"),
        # an iframe whose same-origin URL redirects to the internal service by name
        "/frame.html": _shell("frame", f"window.addEventListener('DOMContentLoaded', function () {{ {render_story} "
                              f"'{_story('Framed story')}' + '<iframe src=\"/go-frame\"></iframe>'; }});"),
        "/go-frame": _redirect(by_name + "/secret"),
        # the page URL itself redirects inside the site, then a script navigates by name
        "/hops.html": _shell("hops", "setTimeout(function () { location.replace('/go-hops'); }, 200);"),
        "/go-hops": _redirect(by_name + "/secret"),
    })
    out = tmp_path / "out.jsonl"
    # the defaults: auto rendering, the polite profile (only the log level is raised, to read the stats)
    proc, records = run_crawl(site.url + "/", out=out, args=["--log-level", "INFO"], timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert internal.requested_paths() == [], "the browser reached the internal service"
    assert records, proc.stderr[-3000:]
    for record in records:
        assert SECRET not in (record.get("text") or "") and SECRET not in (record.get("html") or ""), record["url"]
        assert urlsplit(record.get("final_url") or record["url"]).port == site.port, record
    by_path = _by_path(records)
    for path in ("/nav.html", "/hops.html"):  # the page navigated where the proxy refused: its static page
        record = by_path[path]
        assert record["fetch"] == "http" and "render_failed:navigation_refused" in record["flags"], record
    for path, words in (("/fetch.html", "Fetched story"), ("/frame.html", "Framed story")):
        record = by_path[path]
        assert record["fetch"] == "browser" and words in record["text"], record
    stats = _stats(proc.stderr)
    assert stats.get("boilerstrip/render/connections_refused/loopback", 0) >= 4, stats
    assert stats.get("boilerstrip/render/failed/navigation_refused", 0) == 2, stats


SURROGATE_PAGE = _shell("surrogate", "window.addEventListener('DOMContentLoaded', function () {"
                        " var broken = 'caf\\u00e9 ' + String.fromCharCode(0xD83D) + ' end';"
                        f" document.getElementById('root').innerHTML = '{_story('Surrogate story')}' + '<p>' + broken + '</p>';"
                        " document.title = broken; });")


def test_a_lone_surrogate_in_script_text_does_not_lose_the_page(tmp_path: Path, serve) -> None:
    site = serve(routes={"/": _html('<main><h1>Index</h1><p>One link to the page that writes broken text.</p>'
                                    '<a href="/s.html">s</a></main>'),
                         "/s.html": SURROGATE_PAGE})
    proc, records = run_crawl(site.url + "/", out=tmp_path / "out.jsonl", args=FAST, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = _by_path(records)["/s.html"]
    assert record["fetch"] == "browser", record
    assert "Surrogate story" in record["text"] and "caf\u00e9 \ufffd end" in record["text"], record["text"]
    assert "render_repaired_surrogates" in record["flags"], record["flags"]
    assert not [f for f in record["flags"] if f.startswith("render_failed")]


def _descendants(pid: int) -> list[tuple[int, str]]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    children: dict[int, list[tuple[int, str]]] = {}
    for row in (line.split(None, 2) for line in out.splitlines() if line.strip()):
        if len(row) == 3:
            children.setdefault(int(row[1]), []).append((int(row[0]), row[2]))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


def _kill_browser(pid: int) -> int | None:
    for child, args in _descendants(pid):
        if "chromium" in args and "--type=" not in args:  # the browser process itself
            os.kill(child, signal.SIGKILL)
            return child
    return None


#: the kill points (API fetches seen) and the site's seed vary by trial: the first and the last of the four
#: trials this test once ran (kills after 2 and 8, ..., 5 and 11 fetches); the two between repeated the same
#: crawl with kill points between these, for a minute of a loaded machine each
@pytest.mark.parametrize("trial", [0, 3])
@pytest.mark.timeout(420)
def test_browser_killed_mid_crawl_never_hangs_and_every_page_gets_a_record(tmp_path: Path, serve, trial: int) -> None:
    site = build_mixed_site(tmp_path / "site", pages=16, js_share=1.0, delayed_share=1.0, seed=5 + trial)
    server = serve(root=site.root)
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", server.url + "/", "-o", str(out), *FAST,
           "-s", 'BOILERSTRIP_RENDER_PARAMS={"learn_enabled": false}']
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed: list[int] = []

    def kill_twice() -> None:
        deadline = time.monotonic() + 90
        wanted = (2 + trial, 8 + trial)  # after this many API fetches: renders are under way
        while time.monotonic() < deadline and proc.poll() is None and len(killed) < len(wanted):
            fetched = len([p for p in server.requested_paths() if p.startswith("/api/posts/")])
            if fetched >= wanted[len(killed)]:
                pid = _kill_browser(proc.pid)
                if pid:
                    killed.append(pid)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_twice, daemon=True)
    killer.start()
    started = time.monotonic()
    try:
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    elapsed = time.monotonic() - started
    killer.join(timeout=5)
    assert killed, "the browser was never seen rendering"
    # 5: finished, some page kept its static HTML after its retry (the exit status says so)
    assert proc.returncode in (0, 5), stderr[-3000:]
    # a hang never ends; the crawl takes ~25 s on a quiet machine and 90-100 s on a loaded one: ten times 25 s
    assert elapsed < 250, f"the crawl took {elapsed:.0f} s after the browser was killed"
    assert_reconciled(out)  # every URL settled once: nothing pending on a dead browser, nothing lost
    by_path = _by_path(read_jsonl(out))
    rendered = 0
    for page in site.js_pages:  # rendered again, or static with the reason (identical shells: one is kept)
        record = by_path.get(page.path)
        if record is None:
            continue
        if record["fetch"] == "http":
            assert "render_failed:browser_crashed" in record["flags"], record
        else:
            assert page.sentence in record["text"], record
            rendered += 1
    assert rendered >= len(site.js_pages) // 2, rendered
    assert "the browser disconnected (crashed or killed)" in stderr  # logged at ERROR
    assert re.search(r"ERROR: the browser disconnected", stderr)
    assert _stats(stderr).get("boilerstrip/render/browser_crashes", 0) >= 1


def test_browser_over_its_memory_bound_is_closed_and_the_pages_still_render(tmp_path: Path, serve) -> None:
    site = build_mixed_site(tmp_path / "site", pages=8, js_share=1.0, delayed_share=0.0)
    server = serve(root=site.root)
    # a bound any running browser exceeds: it is closed at each check, the renders retried
    args = [*FAST, "-s", 'BOILERSTRIP_RENDER_PARAMS={"max_browser_memory_mib": 1, "memory_check_ms": 1500, "learn_enabled": false}']
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=args, timeout=180)
    assert proc.returncode in (0, 5), proc.stderr[-3000:]  # 5: some page kept its static HTML (said so)
    by_path = _by_path(records)
    stats = _stats(proc.stderr)
    assert stats.get("boilerstrip/render/browser_closed/browser_memory_limit", 0) >= 1, stats
    assert "max_browser_memory_mib" in proc.stderr
    assert stats.get("boilerstrip/render/retried/browser_memory_limit", 0) >= 1, stats
    # static shells without their content are near-identical: the duplicates pass may drop some of them
    kept = [p for p in site.js_pages if p.path in by_path]
    assert len(kept) >= 3
    for page in kept:  # rendered, or static saying why (the bound, or the browser given up on after it)
        record = by_path[page.path]
        reasons = {"render_failed:browser_memory_limit", "render_failed:browser_paused"}
        assert record["fetch"] == "browser" or reasons & set(record["flags"]), record
