"""The ``boilerstrip check`` HTML report in a real headless Chromium (Debian's /usr/bin/chromium): it renders
its plots and tables from one file, with no request to anything but itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from boilerstrip.rendering import default_browser_path
from conftest import ROOT
from test_check import _clean_site

BROWSER = default_browser_path() or os.environ.get("BOILERSTRIP_RENDER_BROWSER_PATH", "")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not BROWSER, reason="no chromium installed (./run tests installs Debian's)"),
]


def test_the_html_report_renders_self_contained_in_chromium(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    records = _clean_site()
    for record in records[:24]:  # a banner on 60% of the pages
        record["text"] += "\n\nGet 20% off all plans this week with code SPRING"
    source = tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    report = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "boilerstrip", "check", str(source), "--html", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=BROWSER, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report.as_uri())
            assert page.title() == "boilerstrip check: out.jsonl"
            heading = page.locator("h2").first.inner_text()
            assert "docs.test" in heading and "fail" in heading
            assert "repeated_lines" in page.locator("ul").first.inner_text()
            # the plots are drawn: inline SVG with visible bars
            assert page.locator("svg").count() >= 2
            bar = page.locator("svg rect").first.bounding_box()
            assert bar is not None and bar["width"] > 0 and bar["height"] > 0
            assert "Get 20% off all plans" in page.locator("table").nth(2).inner_text()
        finally:
            browser.close()
    assert requests == [report.as_uri()], requests  # nothing but the file itself
