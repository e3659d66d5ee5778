"""The docs document every record field and every profile; the README stays a front page."""

from __future__ import annotations

import re

from boilerstrip.addons import available_profiles
from boilerstrip.items import EXPORT_FIELDS
from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))


def section(name: str) -> str:
    match = re.search(rf"<!-- section:{name} -->(.*?)<!-- /section:{name} -->", DOCS, re.S)
    assert match, name
    return match.group(1)


def test_every_exported_field_is_in_the_schema_table() -> None:
    schema = section("schema")
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| ([^|]+(?:\\\|[^|]+)*) \|", schema, re.M))
    missing = [name for name in EXPORT_FIELDS if name not in rows]
    assert not missing, f"fields missing from the README schema table: {missing}"
    assert "(undocumented)" not in schema


def test_every_profile_is_in_the_profiles_table() -> None:
    crawl = section("crawl")
    for name in available_profiles():
        assert f"| `{name}`" in crawl, name


def test_readme_starts_with_the_two_commands() -> None:
    head = README.split("## A short tour", 1)[0]
    assert "./run demo" in head and "./run tests" in head


def test_readme_is_a_front_page() -> None:
    lines = README.splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: the reference belongs in docs/"
    for link in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / link).is_file(), f"README links to a missing page: {link}"
