"""Guards for the one place boilerstrip relies on non-public Scrapy code (docs/scrapy-internals.md).

``boilerstrip/core/downloader.py`` copies Scrapy's ``Downloader._process_queue`` with one line added. These
tests fail the day the installed Scrapy's method differs from the one copied, so an upgrade cannot
silently keep an outdated copy; and they check that no other module reaches into the engine's private
state.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
from pathlib import Path

from scrapy.core.downloader import Downloader as ScrapyDownloader

from boilerstrip.core.downloader import Downloader

PACKAGE = Path(__file__).resolve().parents[1] / "boilerstrip"
#: sha256 of ``inspect.getsource(scrapy.core.downloader.Downloader._process_queue)`` in Scrapy 2.19.0, the
#: method boilerstrip/core/downloader.py copies. A new value means: re-read the upstream method, carry the
#: fix over (or drop it if upstream fixed the burst), then update this pin and docs/scrapy-internals.md.
UPSTREAM_PROCESS_QUEUE_SHA256 = "872b81a4bbb4cb1ad45b25c6f8803344a3a18fd5743dec234733891ab94559c8"


def _code_lines(source: str) -> list[str]:
    lines = []
    for line in inspect.cleandoc(source).splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def test_the_copied_upstream_method_is_unchanged() -> None:
    source = inspect.getsource(ScrapyDownloader._process_queue)
    assert hashlib.sha256(source.encode("utf-8")).hexdigest() == UPSTREAM_PROCESS_QUEUE_SHA256, (
        "scrapy.core.downloader.Downloader._process_queue changed: re-check boilerstrip/core/downloader.py")


def test_our_copy_is_upstream_plus_the_one_line() -> None:
    upstream = _code_lines(inspect.getsource(ScrapyDownloader._process_queue))
    ours = _code_lines(inspect.getsource(Downloader._process_queue))
    added = [line for line in ours if line not in upstream]
    assert added == ["slot.transferring.add(request)"], added
    assert [line for line in upstream if line not in ours] == []


def test_no_module_reads_the_engines_private_state() -> None:
    private = re.compile(r"\bengine\._\w+|\bscraper\.slot\b|\bslot\.latercall\b|\b_latercall\b")
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "downloader.py" and path.parent.name == "core":
            continue  # the one module allowed, guarded above
        text = path.read_text(encoding="utf-8")
        ast.parse(text)
        for number, line in enumerate(text.splitlines(), 1):
            if private.search(line) and not line.lstrip().startswith("#"):
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not offenders, offenders
