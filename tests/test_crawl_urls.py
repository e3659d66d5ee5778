"""URL normalisation and scope (pure core: no Scrapy)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boilerstrip.urls import UrlParams, in_scope, normalize_url, origin, site_key


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.ORG/a", "http://example.org/a"),
        ("http://example.org:80/a", "http://example.org/a"),
        ("https://example.org:443/a", "https://example.org/a"),
        ("https://example.org:8443/a", "https://example.org:8443/a"),
        ("http://example.org", "http://example.org/"),
        ("http://example.org/a#section-2", "http://example.org/a"),
        ("http://example.org/a?utm_source=x&utm_medium=y", "http://example.org/a"),
        ("http://example.org/a?b=2&fbclid=abc&a=1", "http://example.org/a?a=1&b=2"),
        ("http://example.org/a?gclid=1&q=", "http://example.org/a?q="),
        ("http://user:pw@example.org/a", "http://example.org/a"),
        ("http://example.org./a", "http://example.org/a"),
        ("  http://example.org/a b  ", "http://example.org/a%20b"),
        ("mailto:someone@example.org", None),
        ("javascript:alert(1)", None),
        ("ftp://example.org/file", None),
        ("http://", None),
        ("http://example.org:99999/", None),
        ("", None),
    ],
)
def test_normalize_url(raw: str, expected: str | None) -> None:
    assert normalize_url(raw) == expected


def test_normalize_resolves_against_base_and_is_idempotent() -> None:
    url = normalize_url("../b/c.html?utm_campaign=z#top", base="http://example.org:80/a/x/y.html")
    assert url == "http://example.org/a/b/c.html"
    assert normalize_url(url) == url


def test_variants_collapse_to_one() -> None:
    variants = [
        "http://example.org/post.html",
        "http://EXAMPLE.org:80/post.html#comments",
        "http://example.org/post.html?utm_source=feed",
        "http://example.org/post.html?fbclid=123#x",
    ]
    assert len({normalize_url(v) for v in variants}) == 1


def test_links_to_a_pages_sections_are_normalised_once() -> None:
    """A page's links to its own sections are one URL, worked out once (the normal-form cache is not
    filled with a string per fragment)."""
    from boilerstrip.urls import _normalize_absolute

    base = "http://sections.test/docs/lang.html?v=2#top"
    before = _normalize_absolute.cache_info()
    normals = {normalize_url(href, base) for href in ("#syntax", "#expr", "lang.html?v=2#more")}
    after = _normalize_absolute.cache_info()
    assert normals == {"http://sections.test/docs/lang.html?v=2"}
    assert after.misses - before.misses == 1


def test_overlong_url_is_left_to_the_trap_rule_which_gives_a_reason() -> None:
    # one URL-length rule (max_url_chars of BOILERSTRIP_TRAPS_PARAMS, filtered:url_too_long), not a silent None here
    long = "http://example.org/" + "a" * 3000
    assert normalize_url(long) == long


def test_session_ids_are_part_of_the_normal_form() -> None:
    variants = ["http://example.org/a", "http://example.org/a;jsessionid=1", "http://example.org/a?sid=9",
                "http://example.org/a?PHPSESSID=z#x"]
    assert {normalize_url(v) for v in variants} == {"http://example.org/a"}
    assert normalize_url("http://example.org/a?sid=9", params=UrlParams(strip_session_ids=False)) == "http://example.org/a?sid=9"


def test_scope_host_and_domain() -> None:
    start = "https://docs.example.co.uk/guide/"
    host_sites = {site_key(start, "host")}
    domain_sites = {site_key(start, "domain")}
    assert host_sites == {"docs.example.co.uk"}
    assert domain_sites == {"example.co.uk"}
    assert in_scope("https://docs.example.co.uk/x", host_sites, "host")
    assert not in_scope("https://www.example.co.uk/x", host_sites, "host")
    assert in_scope("https://www.example.co.uk/x", domain_sites, "domain")
    assert not in_scope("https://example.com/x", domain_sites, "domain")
    # the port is part of the host scope: another port is another site
    assert site_key("http://127.0.0.1:8000/", "host") == "127.0.0.1:8000"
    assert not in_scope("http://127.0.0.1:9000/", {"127.0.0.1:8000"}, "host")
    assert origin("http://127.0.0.1:8000/a/b") == "http://127.0.0.1:8000"
    with pytest.raises(ValueError):
        site_key(start, "planet")


def test_core_modules_import_no_scrapy() -> None:
    code = (
        "import sys, boilerstrip.urls, boilerstrip.politeness, boilerstrip.addons;"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('scrapy','twisted','playwright')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
