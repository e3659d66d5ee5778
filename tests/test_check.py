"""``boilerstrip check``: the pure core (navigation lines, patterns, verdicts) and the thin command."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys

import pytest

from boilerstrip.check import CheckParams, check_records, failed_rules, line_pattern, navigation_line, render_html
from conftest import ROOT

WORDS = ("amber basil cedar delta ember fennel garnet hazel indigo juniper kelp lotus maple nutmeg olive "
         "pepper quartz rowan sage thyme umber violet willow yarrow zinnia").split()


def _sentence(i: int, n: int = 14) -> str:
    rng = random.Random(i)
    return " ".join(rng.choice(WORDS) + str(rng.randrange(3)) for _ in range(n)).capitalize() + "."


def _clean_site(pages: int = 40) -> list[dict]:
    """A crawl's records: each page starts with its headline (the title) and has its own paragraphs."""
    records = []
    for i in range(pages):
        title = f"{WORDS[i % len(WORDS)].capitalize()} {WORDS[(i * 7) % len(WORDS)]} notes {i}"
        text = "\n\n".join([title, _sentence(i), _sentence(1000 + i), "Description", _sentence(2000 + i)])
        records.append({"url": f"http://docs.test/ch{i % 4}/page{i}.html", "title": title, "text": text,
                        "method": "density", "fetch": "http", "boilerplate_removed_chars": 40 + i})
    return records


@pytest.mark.parametrize(("line", "expected"), [
    ("Prev | Pagination and General Styles | Next", True),
    ("Prev | Up | Next", True),
    ("hyphenate | Home | column.count.back", True),
    ("Home", True),
    ("Log in", True),
    ("Subscribe to our newsletter", True),
    ("Back to top", True),
    ("Next, configure the server to listen on port 80.", False),
    ("Back up the log files before the upgrade.", False),
    ("const char *zFilename, /* Name of file to back up to */", False),
    ("Description", False),
])
def test_navigation_lines(line: str, expected: bool) -> None:
    assert navigation_line(line) is expected


def test_line_patterns_keep_common_words_and_hide_names_and_numbers() -> None:
    common = {"prev", "next", "and", "home"}
    assert line_pattern("Prev | Pagination and General Styles | Next", common) == "prev … next"
    assert line_pattern("Prev Pagination and General Styles Next", common) == "prev … next"  # no separators
    assert line_pattern("Prev | Callouts | Next", common) == "prev … next"
    assert line_pattern("hyphenate | Home | column.count.back", common) == "… home …"
    assert line_pattern("Prev | Next", common) is None  # the line itself: an exact repeat
    assert line_pattern("Release 3.41.2", {"release"}) is None  # numbers only: an exact repeat (digits as 0)
    assert line_pattern("12.1. RAID and LVM", {"and"}) is None  # nothing fixed but numbers


def test_a_clean_crawl_passes() -> None:
    report = check_records(_clean_site())
    (site,) = report["sites"]
    assert site["site"] == "docs.test" and site["pages"] == 40
    assert site["verdict"] == "ok", site["reasons"]
    assert site["first_paragraph_match_share"] == 1.0
    assert site["nav_word_share"] == 0.0
    # "Description" heads every page: listed as a repeated line, judged a section label, not a finding
    assert site["repeated_lines"][0]["text"] == "Description" and site["repeated_lines"][0]["label"]
    assert site["methods"] == {"density": 40} and site["fetch_modes"] == {"http": 40}
    assert sum(site["removed_share_histogram"]) == 40


def test_a_numbered_section_label_is_a_label() -> None:
    """libpam-doc's module pages each have "6.N.1. DESCRIPTION", "6.N.7. EXAMPLES" (digits read as 0): section
    labels under their numbers, listed but not judged, as "Description" is; a line that only starts with
    a number and says more is judged."""
    records = _clean_site()
    for i, record in enumerate(records):
        record["text"] += f"\n\n6.{i}.1. DESCRIPTION\n\n6.{i}.7. EXAMPLES"
    for record in records[:24]:
        record["text"] += "\n\n20% off all plans this week with code SPRING"
    (site,) = check_records(records)["sites"]
    labels = {e["text"]: e["label"] for e in site["repeated_lines"]}
    assert labels["6.0.1. DESCRIPTION"] is True and labels["6.0.7. EXAMPLES"] is True
    assert labels["20% off all plans this week with code SPRING"] is False
    assert [r["rule"] for r in site["reasons"]] == ["repeated_lines"] and site["verdict"] == "fail"


def test_a_numbered_section_heading_of_more_words_is_a_label_only_as_a_heading() -> None:
    """libpam-doc's "6.N.4. MODULE TYPES PROVIDED" heads a section of every module page (three words, over
    the two-word limit): a label when the record's Markdown makes it a heading on most of its pages. The
    same line written as a paragraph, a "### " line inside a code block (code, not a heading), and an
    unnumbered heading of as many words, are judged."""
    def site(numbered: bool, heading: bool, fenced: bool = False) -> dict:
        records = _clean_site()
        for i, record in enumerate(records):
            line = f"6.{i}.4. MODULE TYPES PROVIDED" if numbered else "MODULE TYPES PROVIDED HERE"
            record["text"] += f"\n\n{line}\n\n{_sentence(3000 + i)}"
            marked = f"### {line}" if heading else line
            record["markdown"] = record["text"].replace(line, f"```\n{marked}\n```" if fenced else marked)
        (report,) = check_records(records)["sites"]
        return report

    labelled = site(numbered=True, heading=True)
    assert labelled["verdict"] == "ok", labelled["reasons"]
    assert {e["text"]: e["label"] for e in labelled["repeated_lines"]}["6.0.4. MODULE TYPES PROVIDED"] is True
    for numbered, heading, fenced in ((True, False, False), (False, True, False), (True, True, True)):
        judged = site(numbered, heading, fenced)
        assert judged["verdict"] == "fail", (numbered, heading, fenced)
        assert [r["rule"] for r in judged["reasons"]] == ["repeated_lines"]

def test_a_line_injected_into_60_percent_of_records_fails() -> None:
    records = _clean_site()
    banner = "Get 20% off all plans this week with code SPRING"
    for record in records[: int(0.6 * len(records))]:
        record["text"] += "\n\n" + banner
    report = check_records(records)
    (site,) = report["sites"]
    assert site["verdict"] == "fail"
    entry = next(e for e in site["repeated_lines"] if e["text"] == banner)
    assert (entry["pages"], entry["share"], entry["label"]) == (24, 0.6, False)
    assert [r["rule"] for r in site["reasons"]] == ["repeated_lines"]
    assert failed_rules(report, ["repeated_lines"]) == ["repeated_lines"]
    assert failed_rules(report, ["navigation"]) == []


def test_per_page_navigation_bars_fail_as_near_repeats_and_navigation() -> None:
    records = _clean_site()
    chapters = ["Admonitions", "Callouts", "Pagination and General Styles", "Tables", "Lists", "Linking",
                "Glossary", "Bibliography"]
    for i, record in enumerate(records):
        before, after = WORDS[(i - 1) % len(WORDS)], WORDS[(i + 1) % len(WORDS)]
        record["text"] = f"Prev | {chapters[i % 8]} | Next\n\n{record['text']}\n\n{before}.param | Home | {after}.param"
    (site,) = check_records(records)["sites"]
    assert site["verdict"] == "fail"
    assert site["nav_word_share"] == 1.0
    patterns = {e["pattern"]: e for e in site["near_repeated_lines"]}
    assert patterns["prev … next"]["pages"] == 40 and patterns["prev … next"]["at_page_edge_share"] == 1.0
    # and the text no longer starts with the headline
    assert {r["rule"] for r in site["reasons"]} == {"near_repeats", "navigation", "first_paragraph"}


def test_empty_and_short_pages_and_other_tools_records() -> None:
    records = [{"url": f"http://b.test/{i}", "text": "" if i < 5 else f"Stub {i}."} for i in range(10)]
    records.append({"text": "no url"})
    report = check_records(records)
    (site,) = report["sites"]
    assert report["skipped_records"] == 1
    assert (site["empty_pages"], site["short_pages"]) == (5, 5)
    assert {r["rule"]: r["level"] for r in site["reasons"]} == {"empty_pages": "fail", "short_pages": "warn"}
    assert site["methods"] == {"unknown": 10} and site["pages_with_title"] == 0


def test_the_report_does_not_depend_on_record_order() -> None:
    records = _clean_site()
    shuffled = list(records)
    random.Random(3).shuffle(shuffled)
    assert json.dumps(check_records(records)) == json.dumps(check_records(shuffled))


def test_the_html_report_is_self_contained() -> None:
    records = _clean_site()
    for record in records[:30]:
        record["text"] += "\n\nSubscribe to our newsletter <today>"
    page = render_html(check_records(records), source="out.jsonl")
    assert page.startswith("<!doctype html>") and "<svg" in page and "fail" in page
    assert "&lt;today&gt;" in page and "<today>" not in page  # text is escaped
    external = set(re.findall(r"https?://[^\s\"'<]+", page)) - {"http://www.w3.org/2000/svg"}
    assert all(u.startswith("http://docs.test/") for u in external), external  # only the pages' own URLs, as text
    assert "src=" not in page and "<link" not in page and "<script" not in page


def test_params_reject_bad_values() -> None:
    with pytest.raises(ValueError, match="repeated_fail_share"):
        CheckParams(repeated_fail_share=0)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "boilerstrip", "check", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_the_command_writes_reports_and_gates_a_pipeline(tmp_path) -> None:
    records = _clean_site()
    clean = tmp_path / "clean.jsonl"
    clean.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n", encoding="utf-8")
    proc = _run(str(clean), "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"),
                "--fail-on", "any")
    assert proc.returncode == 0, proc.stderr
    assert "docs.test: ok" in proc.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert {"site", "pages", "repeated_lines", "nav_word_share", "first_paragraph_match_share", "verdict",
            "reasons"} <= set(report["sites"][0])
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    for record in records[:24]:
        record["text"] += "\n\nGet 20% off all plans this week with code SPRING"
    dirty = tmp_path / "dirty.jsonl"
    dirty.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert _run(str(dirty)).returncode == 0  # a report, not a gate, unless asked
    assert _run(str(dirty), "--fail-on", "navigation").returncode == 0
    gated = _run(str(dirty), "--fail-on", "repeated_lines")
    assert gated.returncode == 1 and "repeated_lines" in gated.stderr
    assert _run(str(dirty), "--fail-on", "nonsense").returncode == 2
    assert _run(str(dirty), "-s", 'BOILERSTRIP_CHECK_PARAMS={"repeated_fail_share": 2}').returncode == 2
    assert _run(str(tmp_path / "missing.jsonl")).returncode == 2  # a missing input is a bad argument (issue 26 item 7)


def _other_tool(records: list[dict], shape: str) -> list[dict]:
    """The clean site's records as trafilatura, Firecrawl or Crawl4AI write them (their field names)."""
    if shape == "trafilatura":  # output_format="json": the URL in "source"
        return [{"title": r["title"], "text": r["text"], "source": r["url"], "source-hostname": "docs.test"}
                for r in records]
    if shape == "firecrawl":  # a crawl's data items: Markdown, the URL in metadata
        return [{"markdown": "[Home](/) | [Blog](/blog) | [About](/about)\n\n# " + r["text"],
                 "metadata": {"sourceURL": r["url"], "title": r["title"], "statusCode": 200}} for r in records]
    return [{"url": r["url"], "success": True,  # Crawl4AI: markdown as an object
             "markdown": {"raw_markdown": "[Home](/) | [Blog](/blog) | [About](/about)\n\n" + r["text"]}}
            for r in records]


@pytest.mark.parametrize("shape", ["trafilatura", "firecrawl", "crawl4ai"])
def test_other_tools_output_is_checked_under_their_own_field_names(tmp_path, shape) -> None:
    # the README's "ours or another tool's": trafilatura's JSON has no "url" (it was refused, exit 2), and
    # Firecrawl's and Crawl4AI's Markdown-only records were refused or judged empty
    path = tmp_path / f"{shape}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _other_tool(_clean_site(), shape)), encoding="utf-8")
    proc = _run(str(path), "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stderr
    (site,) = json.loads((tmp_path / "r.json").read_text())["sites"]
    assert site["site"] == "docs.test" and site["pages"] == 40 and site["empty_pages"] == 0, site
    rules = {r["rule"] for r in site["reasons"]}
    if shape == "trafilatura":
        assert proc.stdout.startswith("docs.test: ok"), proc.stdout
    else:  # the navigation bar each Markdown page starts with is found, its link targets read as its words
        assert {"repeated_lines", "navigation"} <= rules, site["reasons"]
        assert "'Home | Blog | About'" in proc.stdout, proc.stdout


def test_markdown_without_text_is_read_as_the_chunker_reads_it() -> None:
    from boilerstrip.check.foreign import as_checked_record

    markdown = "# Title\n\n- [Home](/) and ![logo](/l.png)\n> **bold** _it_ `code`\n\n```py\nx = 1\n```\n---\n1. one"
    record = as_checked_record({"markdown": markdown, "metadata": {"sourceURL": "http://f.test/a"}})
    assert record["url"] == "http://f.test/a"
    assert record["text"].splitlines() == ["Title", "", "- Home and logo", "bold _it_ code", "", "x = 1", "",
                                           "1. one"]
