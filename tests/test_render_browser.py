"""Real crawls through a real Chromium (Debian's /usr/bin/chromium): rendering only where needed.

A small mixed site (benchmarks/mixed_site.py) on loopback, plus pages that misbehave (a dialog, a popup,
a page whose browser gets killed mid-render) and a second server standing for "another host" that the
browser must never reach.
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

from boilerstrip.rendering import RENDER_REASONS, default_browser_path
from conftest import ROOT, read_jsonl, run_crawl

sys.path.insert(0, str(ROOT / "benchmarks"))
from mixed_site import build_mixed_site  # noqa: E402

browser = pytest.mark.skipif(
    not default_browser_path() and not os.environ.get("BOILERSTRIP_RENDER_BROWSER_PATH"),
    reason="no chromium installed (./run tests installs Debian's)",
)
FAST = ["--profile", "test", "--log-level", "INFO"]

#: a page that opens alert/confirm dialogs, a popup, a beforeunload prompt and starts a download
DIALOG_SENTENCE = "The dialog page still shows its story about the lighthouse keeper ledger."
DIALOG_PAGE = f"""<!doctype html><html><head><title>Dialogs</title>
<script>
window.addEventListener('DOMContentLoaded', function () {{
  alert('Subscribe to our newsletter!');
  if (confirm('Allow notifications?')) {{ document.title = 'confirmed'; }}
  window.open('/list/1.html', '_blank');
  window.onbeforeunload = function () {{ return 'Leave?'; }};
  var a = document.createElement('a'); a.href = '/files/archive.zip'; a.download = 'archive.zip'; a.click();
  document.getElementById('root').innerHTML = '<article><h1>Dialogs</h1><p>{DIALOG_SENTENCE} '
    + 'It was kept in a drawer below the lamp room for sixty years and read by every visitor.</p></article>';
}});
</script></head><body><div id="root"></div></body></html>"""

SLOW_SENTENCE = "The slow page finally describes the clockwork of the town hall tower in detail."
SLOW_PAGE = f"""<!doctype html><html><head><title>Slow</title>
<script>
window.addEventListener('DOMContentLoaded', function () {{
  fetch('/api/slow-marker.json').catch(function () {{}});
  setTimeout(function () {{
    document.getElementById('root').innerHTML = '<article><p>{SLOW_SENTENCE} '
      + 'Every gear was cleaned and the pendulum was rehung by the railway historians.</p></article>';
  }}, 3000);
}});
</script></head><body><div id="root"></div></body></html>"""


def _by_path(records: list[dict]) -> dict[str, dict]:
    return {urlsplit(r["url"]).path: r for r in records}


def _stats(log: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"'(boilerstrip/render/[^']+|playwright/[^']+)': (\d+)", log)}


@pytest.mark.browser
@pytest.mark.slow
@browser
def test_mixed_site_renders_exactly_the_js_pages(tmp_path: Path, serve) -> None:
    offsite = serve()  # "another host": the browser must never reach it
    site = build_mixed_site(
        tmp_path / "site", pages=10, delayed_share=0.5, offsite_script=offsite.url + "/track.js",
        extra_pages={"/extras/dialogs.html": DIALOG_PAGE},
    )
    server = serve(root=site.root)
    started = time.monotonic()
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=FAST, timeout=240)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    by_path = _by_path(records)

    for page in site.js_pages:
        record = by_path[page.path]
        assert record["fetch"] == "browser", page
        assert record["render_reason"] in RENDER_REASONS
        assert page.sentence in record["text"], (page, record["text"][:300])
    for page in site.static_pages:
        record = by_path[page.path]
        assert record["fetch"] == "http" and record["render_reason"] is None, page
        assert page.sentence in record["text"]
    assert {by_path[p.path]["render_reason"] for p in site.js_pages} >= {"empty_app_root", "loading_shell"}

    dialogs = by_path["/extras/dialogs.html"]
    assert dialogs["fetch"] == "browser" and DIALOG_SENTENCE in dialogs["text"]
    # (the page rendered whole, above, is the proof; the bound is ten times the crawl's ~12 s on a quiet machine)
    assert elapsed < 120, f"a dialog or popup stalled the crawl ({elapsed:.0f} s)"

    paths = server.requested_paths()
    assert not [p for p in paths if p.startswith("/img/")], "the browser downloaded images"
    assert any(p.startswith("/api/posts/") for p in paths), "the browser did not run the pages' fetch()"
    assert offsite.log == [], "the browser reached another host"
    # each JS page: one static fetch, one browser navigation (robots.txt and scope applied to both)
    for page in site.js_pages:
        assert len(server.hits(page.path)) == 2, page
    for page in site.static_pages:
        assert len(server.hits(page.path)) == 1, page

    stats = _stats(proc.stderr)
    assert stats["boilerstrip/render/rendered"] == len(site.js_pages) + 1
    # the "other host" is another port on 127.0.0.1: a private address the page is not on
    assert stats["boilerstrip/render/subrequests_blocked/private_address"] >= len(site.js_pages)
    assert stats["boilerstrip/render/subrequests_blocked/resource_type"] >= 1
    assert stats.get("boilerstrip/render/time_ms/total", 0) > 0


@pytest.mark.browser
@pytest.mark.slow
@browser
def test_robots_disallow_applies_to_the_page_before_any_browser(tmp_path: Path, serve) -> None:
    # also: the content wait on a CSS selector instead of text growth, for content injected late
    site = build_mixed_site(tmp_path / "site", pages=8, delayed_share=1.0)
    blocked, *others = site.js_pages
    (site.root / "robots.txt").write_text(f"User-agent: *\nDisallow: {blocked.path}\n", encoding="utf-8")
    server = serve(root=site.root)
    # a text-growth target no page reaches: only the selector wait can settle these pages in time
    args = [*FAST, "-s", "BOILERSTRIP_RENDER_WAIT_SELECTOR=article.post",
            "-s", 'BOILERSTRIP_RENDER_PARAMS={"min_text_growth_chars": 100000}']
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=args, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    by_path = _by_path(records)
    assert blocked.path not in by_path
    assert server.hits(blocked.path) == []  # neither fetched static nor by the browser
    for page in others:
        assert page.delay_ms >= 300
        assert by_path[page.path]["fetch"] == "browser" and page.sentence in by_path[page.path]["text"]
    stats = _stats(proc.stderr)
    assert stats["boilerstrip/render/settle/settled"] == len(others)
    assert "boilerstrip/render/settle/timeout" not in stats


def _descendants(pid: int) -> list[tuple[int, str]]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    rows = [line.split(None, 2) for line in out.splitlines() if line.strip()]
    children: dict[int, list[tuple[int, str]]] = {}
    for row in rows:
        if len(row) == 3:
            children.setdefault(int(row[1]), []).append((int(row[0]), row[2]))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


@pytest.mark.browser
@pytest.mark.slow
@browser
def test_browser_killed_mid_render_is_restarted_and_the_page_recovered(tmp_path: Path, serve) -> None:
    site = build_mixed_site(tmp_path / "site", pages=2, extra_pages={"/extras/slow.html": SLOW_PAGE})
    server = serve(root=site.root)
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "boilerstrip", "crawl", server.url + "/extras/slow.html", "-o", str(out), *FAST,
           "-s", 'BOILERSTRIP_RENDER_PARAMS={"max_wait_ms": 8000}']
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed: list[int] = []

    def kill_browser_once_rendering() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if server.hits("/api/slow-marker.json"):  # the browser is running the page's script
                for pid, args in _descendants(proc.pid):
                    if "chromium" in args and "--type=" not in args:  # the browser process itself
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_browser_once_rendering, daemon=True)
    killer.start()
    try:
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    killer.join(timeout=5)
    assert killed, "the browser was never seen rendering"
    assert proc.returncode == 0, stderr[-3000:]
    record = _by_path(read_jsonl(out))["/extras/slow.html"]
    assert record["fetch"] == "browser" and SLOW_SENTENCE in record["text"], record
    stats = _stats(stderr)
    assert stats.get("boilerstrip/render/browser_restarts", 0) >= 1, stats
    assert len(server.hits("/api/slow-marker.json")) >= 2  # rendered again on the new browser


def test_static_site_in_auto_mode_never_starts_playwright(tmp_path: Path, serve) -> None:
    site = build_mixed_site(tmp_path / "site", pages=6, js_share=0.0)
    server = serve(root=site.root)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=FAST, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len([r for r in records if r["url"].endswith(".html")]) >= 6
    assert all(r["fetch"] == "http" for r in records)
    assert "Launching browser" not in proc.stderr  # no browser, and not Playwright's driver (started with it)
    assert "playwright/browser_count" not in proc.stderr
    assert _stats(proc.stderr).get("boilerstrip/render/checked", 0) >= 6


@pytest.mark.browser
@pytest.mark.slow
@browser
def test_all_js_host_is_learned_and_its_pages_skip_the_static_fetch(tmp_path: Path, serve) -> None:
    site = build_mixed_site(tmp_path / "site", pages=24, js_share=1.0, delayed_share=0.0)
    server = serve(root=site.root)
    args = [*FAST, "-s", 'BOILERSTRIP_RENDER_PARAMS={"learn_min_pages": 4, "learn_recheck_every": 5}',
            "-s", "CONCURRENT_REQUESTS=2", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2"]  # learn before most are sent
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=args, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    by_path = _by_path(records)
    learned = [p for p in site.js_pages if by_path[p.path]["render_reason"] == "host_learned"]
    judged = [p for p in site.js_pages if by_path[p.path]["render_reason"] not in (None, "host_learned")]
    assert len(learned) >= 8 and len(judged) >= 4, {p.path: by_path[p.path]["render_reason"] for p in site.js_pages}
    for page in site.js_pages:
        assert by_path[page.path]["fetch"] == "browser" and page.sentence in by_path[page.path]["text"]
    for page in learned:  # straight to the browser: one request, the browser's
        assert len(server.hits(page.path)) == 1, page
    for page in judged:  # static first, then the browser
        assert len(server.hits(page.path)) == 2, page
    stats = _stats(proc.stderr)
    assert stats["boilerstrip/render/learn/rechecks"] >= 1 and stats["boilerstrip/render/learned_hosts"] == 1


HUNG_PAGE = """<!doctype html><html><head><title>Hung</title><script src="/extras/hang.js"></script>
</head><body><div id="root"></div></body></html>"""
HANG_JS = "window.addEventListener('DOMContentLoaded', function () { while (true) {} });\n"


@pytest.mark.browser
@pytest.mark.slow
@browser
def test_a_page_that_hangs_the_browser_falls_back_to_static_with_the_reason(tmp_path: Path, serve) -> None:
    site = build_mixed_site(tmp_path / "site", pages=2, extra_pages={"/extras/hung.html": HUNG_PAGE, "/extras/hang.js": HANG_JS})
    server = serve(root=site.root)
    # the hung page never loads; 10 s is ~10x what a normal page's render takes on a saturated 2-core machine
    # (3 s let a normal page time out there too), and the crawl still ends long before the hang would
    args = [*FAST, "-s", 'BOILERSTRIP_RENDER_PARAMS={"max_render_ms": 10000}']
    started = time.monotonic()
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=args, timeout=300)
    assert proc.returncode == 5, proc.stderr[-3000:]  # finished; a page that needed the browser did not get it
    assert "1 render_failed:render_timeout" in proc.stderr  # the render budget ended the hang
    assert time.monotonic() - started < 240  # the hang itself would never end
    by_path = _by_path(records)
    hung = by_path["/extras/hung.html"]
    assert hung["fetch"] == "http" and "render_failed:render_timeout" in hung["flags"], hung
    assert len(server.hits("/extras/hung.html")) == 3  # static, browser, static fallback
    for page in site.js_pages:  # the other pages rendered normally on the same browser
        assert by_path[page.path]["fetch"] == "browser" and page.sentence in by_path[page.path]["text"]
    assert _stats(proc.stderr)["boilerstrip/render/failed/render_timeout"] == 1


def test_missing_browser_degrades_to_static_pages_with_the_reason(tmp_path: Path, serve) -> None:
    site = build_mixed_site(tmp_path / "site", pages=10)
    server = serve(root=site.root)
    # a browser that is not installed behind its path (a path that is no file is refused, exit 2): a wrapper
    # whose chromium is gone, as after a partial uninstall
    missing = tmp_path / "chromium"
    missing.write_text('#!/bin/sh\necho "/usr/lib/chromium/chromium: No such file or directory" >&2\nexit 127\n')
    missing.chmod(0o755)
    args = [*FAST, "-s", f"BOILERSTRIP_RENDER_BROWSER_PATH={missing}",
            "-s", 'BOILERSTRIP_RENDER_PARAMS={"max_consecutive_failures": 2}', "-s", "CONCURRENT_REQUESTS=1"]
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=args, timeout=120)
    assert proc.returncode == 5, proc.stderr[-3000:]  # finished, and says the JS pages did not get a browser
    assert "needed a browser did not get a whole render" in proc.stderr
    by_path = _by_path(records)
    # static shells without their content are near-identical: the duplicates pass may drop some of them
    kept = [p for p in site.js_pages if p.path in by_path]
    assert len(kept) >= 3
    flags = {p.path: by_path[p.path]["flags"] for p in kept}
    for page in kept:  # every JS page kept is static, saying why it was not rendered
        assert by_path[page.path]["fetch"] == "http"
        assert {"render_failed:browser_unavailable", "render_failed:browser_disabled"} & set(flags[page.path]), flags
    stats = _stats(proc.stderr)
    assert stats["boilerstrip/render/disabled"] == 1
    assert stats["boilerstrip/render/failed/browser_unavailable"] == 2  # then no more attempts
    assert stats["boilerstrip/render/failed/browser_disabled"] == len(site.js_pages) - 2
    assert "rendering is off for the rest of this crawl" in proc.stderr


def test_a_browser_that_crashes_is_paused_and_the_pages_held_for_it_are_kept(tmp_path: Path, serve) -> None:
    # pages that needed the browser while it was paused (it crashed renders in a row), judged in the worker
    # pool, each ended failed:_invalidoutput ("process_response must return Response or Request, got
    # coroutine"): the held page's own coroutine was returned unawaited from the pool's
    site = build_mixed_site(tmp_path / "site", pages=10)
    server = serve(root=site.root)
    # one page at a time, so that pages reach the browser after it was paused (they are held for it)
    args = [*FAST, "-s", "BOILERSTRIP_RENDER_BROWSER_PATH=/bin/false",  # starts, and exits at once
            "-s", 'BOILERSTRIP_RENDER_PARAMS={"max_consecutive_failures": 2, "max_render_ms": 2000}',
            "-s", "CONCURRENT_REQUESTS=1"]
    proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", args=args, timeout=300)
    assert proc.returncode == 5, proc.stderr[-3000:]
    ledger = read_jsonl(tmp_path / "out.ledger.jsonl")
    failed = [e for e in ledger if e["outcome"] == "failed" and not e["reason"].startswith("http_")]  # (the site's 404s)
    assert not failed, failed
    stats = _stats(proc.stderr)
    assert stats["boilerstrip/render/paused"] >= 1 and stats.get("boilerstrip/render/held_for_browser", 0) >= 1, stats
    by_path = _by_path(records)
    kept = [p for p in site.js_pages if p.path in by_path]
    assert len(kept) >= 3
    for page in kept:  # static, saying why
        assert by_path[page.path]["fetch"] == "http"
        assert any(f.startswith("render_failed:") for f in by_path[page.path]["flags"]), by_path[page.path]["flags"]


LEARN_SHELL = """<!doctype html><html><head><title>Shell</title><script>/* app bootstrap, long enough to count as
app code for the render decision: it builds the whole page from the data below and links three stories */
window.addEventListener('DOMContentLoaded', function () {
  var out = '<article><h1>Index of stories</h1><p>The shell lists the stories of the harbour archive, each a '
    + 'server-rendered article that needs no browser at all, whatever the host looked like so far.</p><ul>';
  for (var i = 1; i <= 3; i++) { out += '<li><a href="/a' + i + '.html">Story ' + i + '</a></li>'; }
  document.getElementById('root').innerHTML = out + '</ul></article>';
});
</script></head><body><div id="root"></div></body></html>"""


def _article(n: int) -> str:
    para = (f"Story {n} of the harbour archive tells how the night ferry crew repaired the old stone bridge "
            f"over the estuary after the spring storms had passed, using notes kept since the nineteen fifties. ")
    return (f"<!doctype html><html><head><title>Story {n}</title><script>{'/* analytics */ ' * 30}"
            f"window.x = 1;</script></head><body><main><article><h1>Story {n}</h1><p>{para * 4}</p>"
            f"<p>Unique marker ARCHIVE-{n:03d} closes the story.</p></article></main></body></html>")


@pytest.mark.browser
@pytest.mark.slow
@browser
def test_a_learned_host_still_gets_the_static_look_first(tmp_path: Path, serve) -> None:
    from conftest import Reply

    def html(text: str) -> Reply:
        return Reply(body=text.encode(), headers=(("Content-Type", "text/html; charset=utf-8"),))

    server = serve(routes={"/shell.html": html(LEARN_SHELL), **{f"/a{n}.html": html(_article(n)) for n in (1, 2, 3)}})
    # learned after one shell; each static look is evidence too: 1/2 still learned, 1/3 not
    args = [*FAST, "-s", 'BOILERSTRIP_RENDER_PARAMS={"learn_min_pages": 1, "learn_min_share": 0.5}',
            "-s", "CONCURRENT_REQUESTS=1", "-s", "BOILERSTRIP_CRAWL_SITEMAPS=false"]
    proc, records = run_crawl(server.url + "/shell.html", out=tmp_path / "out.jsonl", args=args, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    by_path = _by_path(records)
    assert by_path["/shell.html"]["fetch"] == "browser"
    looked = []
    for n in (1, 2, 3):
        record = by_path[f"/a{n}.html"]
        assert record["fetch"] == "http" and record["render_reason"] is None, record  # never rendered
        assert f"ARCHIVE-{n:03d}" in record["text"]
        assert len(server.hits(f"/a{n}.html")) == 1  # one fetch: the static look's, or Scrapy's
        if "render_static_look" in record["flags"]:
            looked.append(n)
    assert len(looked) == 2, {n: by_path[f"/a{n}.html"]["flags"] for n in (1, 2, 3)}
    stats = _stats(proc.stderr)
    assert stats["boilerstrip/render/learn/static_look/static"] == 2
    assert stats["boilerstrip/render/reason/host_learned"] == 2
