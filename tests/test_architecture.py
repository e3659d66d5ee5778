"""The pure cores import no Scrapy, Twisted or Playwright: they run in a notebook or a batch job alike."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

PURE_MODULES = [
    "boilerstrip.config",
    "boilerstrip.items",
    "boilerstrip.extraction",
    "boilerstrip.boilerplate",
    "boilerstrip.atomicfile",
    "boilerstrip.rendering",
    "boilerstrip.optout",
    "boilerstrip.export",
    "boilerstrip.check",
    "boilerstrip.recrawl",
    "boilerstrip.schedule",
    "boilerstrip.chunks",
    "boilerstrip.ledger",
    "boilerstrip.meta",
    "boilerstrip.finishing",
    "boilerstrip.reading",
    "boilerstrip.scope",
    "boilerstrip.politeness",
    "boilerstrip.safety",
    "boilerstrip.urls",
    "boilerstrip.workers._start",
    "boilerstrip.minhash",
]
FORBIDDEN = ("scrapy", "twisted", "playwright", "scrapy_playwright")


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_core_imports_no_framework(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.fail(f"{module} is missing")
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == [], f"{module} pulled in {loaded}"
