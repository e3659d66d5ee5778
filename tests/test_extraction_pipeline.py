"""ExtractionPipeline (glue) and ``boilerstrip extract`` (CLI) around the pure core."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from boilerstrip.commands import extract as extract_command
from boilerstrip.config import ConfigError
from boilerstrip.extraction import ExtractionParams
from boilerstrip.items import PageItem
from boilerstrip.pipelines.extraction import ExtractionPipeline

STORY = "Volunteers rebuilt the footbridge in three weekends, using oak from the estate and donated tools. " * 4
HTML = (
    "<html lang='de'><head><title>Footbridge</title><meta name='author' content='K. Berg'></head><body>"
    "<nav><a href='/'>Home</a></nav><article><h1>Footbridge</h1>"
    f"<p>{STORY}</p><h2>Next steps</h2><ul><li>Paint</li><li>Open</li></ul><p>{STORY}</p></article>"
    "<footer>Imprint</footer></body></html>"
)


def pipeline(settings: dict | None = None) -> ExtractionPipeline:
    crawler = get_crawler(settings_dict=settings or {})
    crawler.stats.open_spider()
    return ExtractionPipeline.from_crawler(crawler)


def test_fills_a_page_item_and_clears_html() -> None:
    pipe = pipeline()
    item = PageItem(url="https://example.org/bridge", html=HTML)
    out = pipe.extract_item(item)
    assert out is item
    assert item.html is None
    assert item.method == "semantic"
    assert item.text.startswith("Volunteers rebuilt") and "Paint\nOpen" in item.text
    assert item.markdown and "## Next steps" in item.markdown
    assert item.title == "Footbridge" and item.lang == "de" and item.author == "K. Berg"
    assert item.attempts == [{"method": "semantic", "accepted": True, "chars": item.attempts[0]["chars"], "reason": "accepted"}]
    assert item.blocks[0] == {"kind": "p", "text": STORY.strip()}
    stats = pipe.stats.get_stats()
    assert stats["boilerstrip/extraction/method/semantic"] == 1


def test_works_on_plain_dict_items_and_records_refusals() -> None:
    pipe = pipeline({"BOILERSTRIP_EXTRACTION_MARKDOWN": False})
    item = {"url": "https://example.org/", "html": "<html><body><div><div>" + f"<p>{STORY}</p>" * 2 + "</div></div></body></html>"}
    pipe.extract_item(item)
    assert item["method"] == "density" and item["markdown"] is None and item["html"] is None
    assert item["attempts"][0] == {"method": "semantic", "accepted": False, "chars": 0, "reason": "no_semantic_container"}
    stats = pipe.stats.get_stats()
    assert stats["boilerstrip/extraction/method/density"] == 1
    assert stats["boilerstrip/extraction/refused/semantic/no_semantic_container"] == 1


def test_empty_pages_say_why() -> None:
    pipe = pipeline()
    item = {"url": "https://example.org/", "html": "", "flags": ["kept"]}
    pipe.extract_item(item)
    assert item["text"] == "" and item["method"] is None
    assert item["flags"] == ["kept", "extraction_empty:empty_input"]
    assert pipe.stats.get_stats()["boilerstrip/extraction/empty/empty_input"] == 1


def test_items_without_html_pass_through() -> None:
    item = {"url": "https://example.org/", "text": "already"}
    assert pipeline().extract_item(item) == {"url": "https://example.org/", "text": "already"}


def test_settings_select_the_method_and_tune_the_xpath() -> None:
    pipe = pipeline(
        {
            "BOILERSTRIP_EXTRACTION_METHOD": "bodytext",
            "BOILERSTRIP_EXTRACTION_PARAMS": '{"min_text_chars": 100, "bodytext_include_tags": "p,li", '
                                             '"bodytext_exclude_tags": ["nav", "footer"]}',
        }
    )
    assert pipe.params.method == "bodytext"
    assert pipe.params.bodytext_include_tags == ("p", "li")
    assert pipe.params.min_text_chars == 100
    item = {"url": "https://example.org/", "html": HTML}
    pipe.extract_item(item)
    assert item["method"] == "bodytext" and "Next steps" not in item["text"] and "Paint" in item["text"]


def test_disabled_and_bad_settings() -> None:
    with pytest.raises(NotConfigured):
        pipeline({"BOILERSTRIP_EXTRACTION_ENABLED": False})
    with pytest.raises(ConfigError, match="BOILERSTRIP_EXTRACTION_PARAMS field max_link_density"):
        pipeline({"BOILERSTRIP_EXTRACTION_PARAMS": '{"max_link_density": "lots"}'})
    # a threshold is no setting of its own: refused, with where it went, never silently ignored
    with pytest.raises(ConfigError, match="BOILERSTRIP_EXTRACTION_MAX_LINK_DENSITY is not a setting.*BOILERSTRIP_EXTRACTION_PARAMS"):
        pipeline({"BOILERSTRIP_EXTRACTION_MAX_LINK_DENSITY": "0.3"})
    with pytest.raises(ConfigError, match="BOILERSTRIP_EXTRACTION_MARKDOWN"):
        pipeline({"BOILERSTRIP_EXTRACTION_MARKDOWN": "sometimes"})
    with pytest.raises(ConfigError, match="method"):
        pipeline({"BOILERSTRIP_EXTRACTION_METHOD": "magic"})
    with pytest.raises(ConfigError):
        pipeline({"BOILERSTRIP_EXTRACTION_PARAMS": {"bodytext_include_tags": "p,nav", "bodytext_exclude_tags": "nav"}})


def test_init_takes_plain_values() -> None:
    pipe = ExtractionPipeline(params=ExtractionParams(min_text_chars=10), markdown=False)
    item = {"url": "u", "html": "<article><p>Short but perfectly fine text.</p></article>"}
    pipe.extract_item(item)
    assert item["text"] == "Short but perfectly fine text." and item["method"] == "semantic"


def test_default_settings_wire_the_pipeline_before_boilerplate_removal() -> None:
    from boilerstrip import settings

    order = settings.ITEM_PIPELINES
    assert "boilerstrip.pipelines.extraction.ExtractionPipeline" in order
    assert order["boilerstrip.pipelines.extraction.ExtractionPipeline"] < order[
        "boilerstrip.pipelines.boilerplate.CrossPageBoilerplatePipeline"
    ]


# --- CLI ----------------------------------------------------------------------------------------------


def run_cli(args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "boilerstrip", "extract", *args], input=stdin, capture_output=True, check=False
    )


def test_cli_jsonl_plain_gzip_and_stdin(tmp_path) -> None:
    plain = tmp_path / "a.html"
    plain.write_text(HTML, encoding="utf-8")
    packed = tmp_path / "b.html.gz"
    packed.write_bytes(gzip.compress(HTML.encode("cp1252")))
    proc = run_cli([str(plain), str(packed), "-"], stdin=HTML.encode())
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [r["path"] for r in records] == [str(plain), str(packed), "-"]
    for record in records:
        assert record["method"] == "semantic" and record["title"] == "Footbridge"
        assert record["text"].startswith("Volunteers rebuilt")


def test_cli_text_and_markdown_formats(tmp_path) -> None:
    plain = tmp_path / "a.html"
    plain.write_text(HTML, encoding="utf-8")
    text = run_cli(["--format", "text", str(plain)]).stdout.decode()
    assert text.startswith("Volunteers rebuilt") and "Paint\nOpen" in text
    markdown = run_cli(["--format", "markdown", str(plain)]).stdout.decode()
    assert "## Next steps\n\n- Paint\n- Open" in markdown


def test_cli_missing_file_and_bad_setting(tmp_path, capsys) -> None:
    parser = __import__("argparse").ArgumentParser()
    extract_command.add_arguments(parser)
    status = extract_command.run(parser.parse_args([str(tmp_path / "missing.html")]))
    captured = capsys.readouterr()
    assert status == 1
    assert json.loads(captured.out)["error"]
    status = extract_command.run(parser.parse_args(["-s", 'BOILERSTRIP_EXTRACTION_PARAMS={"min_text_chars": "many"}', "x"]))
    assert status == 2
    assert "BOILERSTRIP_EXTRACTION_PARAMS field min_text_chars" in capsys.readouterr().err


def test_read_html_file_gunzips_by_magic(tmp_path) -> None:
    path = tmp_path / "page.bin"
    path.write_bytes(gzip.compress(b"<p>x</p>"))
    assert extract_command.read_html_file(str(path)) == b"<p>x</p>"
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"\x1f\x8b" + b"garbage")
    with pytest.raises(OSError):
        extract_command.read_html_file(str(broken))
    assert io  # noqa: B018 - keep import list stable


def test_cli_reads_the_html_files_of_a_folder_and_says_when_a_folder_has_none(tmp_path) -> None:
    site = tmp_path / "mirror"
    (site / "docs").mkdir(parents=True)
    (site / ".git").mkdir()
    (site / "index.html").write_text(HTML, encoding="utf-8")
    (site / "docs" / "page.HTM").write_text(HTML, encoding="utf-8")
    (site / "docs" / "old.html.gz").write_bytes(gzip.compress(HTML.encode("utf-8")))
    (site / "docs" / "notes.txt").write_text("not a page", encoding="utf-8")
    (site / ".git" / "hidden.html").write_text(HTML, encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli([str(site), str(empty)])
    records = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    # the folder's HTML files in path order (plain, any case, gzip; not hidden ones, not other files), then
    # the folder without any: an error line, and exit 1 as for an unreadable file
    assert [r["path"] for r in records] == [str(site / "docs" / "old.html.gz"), str(site / "docs" / "page.HTM"),
                                            str(site / "index.html"), str(empty)]
    assert all(r["text"].startswith("Volunteers rebuilt") for r in records[:3])
    assert "no HTML files" in records[3]["error"] and "no HTML files" in proc.stderr.decode()
    assert proc.returncode == 1


def test_cli_refuses_a_url_where_a_saved_page_belongs(tmp_path) -> None:
    # "No such file or directory: 'https://example.com/'" (exit 1) said nothing of what to do instead
    plain = tmp_path / "a.html"
    plain.write_text(HTML, encoding="utf-8")
    proc = run_cli([str(plain), "https://example.com/"])
    assert proc.returncode == 2 and proc.stdout == b""  # nothing printed for the file before it either
    assert "is a URL; extract reads saved pages (curl -s https://example.com/ | boilerstrip extract -" in proc.stderr.decode()


def test_cli_says_what_a_warc_or_a_crawls_records_are_instead_of_reading_them_as_a_page(tmp_path) -> None:
    # both were read as the text of one page, exit 0: a WARC's first record headers ("WARC/1.0 WARC-Type:
    # warcinfo ..."), a crawl's records as their JSON
    from _warcfiles import http_response, warc_record, write_warc

    warc = write_warc(tmp_path / "site.warc.gz", [warc_record("response", "http://w.test/", http_response(HTML.encode()))])
    records = tmp_path / "out.jsonl"
    records.write_text(json.dumps({"url": "http://w.test/", "text": "Volunteers rebuilt"}) + "\n", encoding="utf-8")
    page = tmp_path / "a.html"
    page.write_text(HTML, encoding="utf-8")
    proc = run_cli([str(warc), str(records), str(page)])
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert lines[0] == {"path": str(warc), "error": f"a WARC file, not an HTML page: boilerstrip warc {warc} -o "
                                                    "OUT.jsonl reads its pages"}
    assert lines[1]["error"].startswith("JSON lines (a crawl's records?), not an HTML page")
    assert lines[2]["text"].startswith("Volunteers rebuilt")  # the page itself is read as before
