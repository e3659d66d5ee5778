"""``benchmarks/html5_rebuild.py`` counts the pages the HTML5 rebuild changes, on a set built here: one page
whose misnested ``</button>`` swallows the article in libxml2's tree, one that is misnested harmlessly, one
that is well formed."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
_spec = importlib.util.spec_from_file_location("html5_rebuild", ROOT / "benchmarks" / "html5_rebuild.py")
rebuild = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = rebuild
_spec.loader.exec_module(rebuild)

STORY = " ".join(f"Paragraph {i} of the flood story tells what the river did to the town that spring." for i in range(6))
ARTICLE = "".join(f"<p>{sentence}.</p>" for sentence in STORY.split(". ") if sentence)


def _page(body: str) -> str:
    return f"<!doctype html><html><head><title>Flood</title></head><body>{body}</body></html>"


PAGES = {
    # </button> cannot close the divs in libxml2's tree: the article ends up inside the menu button
    "swallowed": _page("<header><div class='menu'><button><div class='inner'><div></button></div>"
                       f"<a href='/'>Logo</a></header><main><article>{ARTICLE}</article></main>"),
    # </div> closes an open <b> (a browser closes it too): rebuilt, the same text
    "harmless": _page(f"<main><article>{ARTICLE}<div><b>Filed under rivers</div></article></main>"),
    "well_formed": _page(f"<main><article>{ARTICLE}</article></main>"),
}


def _dataset(folder: Path) -> Path:
    (folder / "html").mkdir(parents=True)
    truth = {}
    for page_id, html in PAGES.items():
        (folder / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(html.encode("utf-8")))
        truth[page_id] = {"url": f"https://{page_id}.example/story", "articleBody": STORY, "page_type": "article"}
    (folder / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return folder


def test_it_counts_the_rebuilt_pages_and_those_whose_text_changes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert rebuild.main(["--sets", "wcxb", "--wcxb", str(_dataset(tmp_path / "set")), "--pages"]) == 0
    out = capsys.readouterr().out
    assert "3 pages, 2 rebuilt, 1 of them with another text" in out
    assert "swallowed article" in out and "harmless article" not in out
    assert "button/div: 1 / 0" in out


def test_message_kinds_name_the_end_tag_and_what_was_open() -> None:
    messages = ["Opening and ending tag mismatch: button and div", "Unexpected end tag : span",
                "Unexpected end tag : p", "htmlParseEntityRef: expecting ';'"]
    assert rebuild.message_kinds(messages) == {"button/div", "span"}


def test_an_unknown_set_exits_2() -> None:
    with pytest.raises(SystemExit) as exit_info:
        rebuild.main(["--sets", "articles"])
    assert exit_info.value.code == 2
