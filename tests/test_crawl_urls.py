"""URL normalisation and scope (pure core: no Scrapy)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boilerstrip.urls import UrlParams, in_scope, link_targets, normalize_url, origin, site_key


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


def _targets_one_by_one(hrefs: list[str], base: str, params: UrlParams) -> tuple[tuple, tuple]:
    """``link_targets`` as it was before its per-folder cache: each href normalised against the page's base."""
    targets, errors = [], []
    for href in hrefs:
        try:
            targets.append(normalize_url(href.strip().replace("\\", "/"), base=base, params=params))
        except Exception as exc:  # noqa: BLE001 - as link_targets
            targets.append(None)
            errors.append(type(exc).__name__)
    return tuple(targets), tuple(errors)


def test_link_targets_cached_by_folder_are_the_links_own_normal_forms() -> None:
    """A page's hrefs are normalised once per folder of their base (pages of one folder share their relative
    hrefs): the same answers as each href against each page's own base, for hrefs whose resolution reads more
    of the base (``?q``, ``#f``, ``;p``, ``//``, ``http:``, a leading control character) and for bases the
    cache does not take, whatever page of the folder came first."""
    import random

    from boilerstrip.urls import _normalize_in_folder

    bases = ["http://h.test/a/b.html", "http://h.test/a/c.html?x=1#f", "http://h.test/a/", "http://h.test",
             "http://h.test/a/b;p=1", "http://h.test/a;q/b.html", "https://h.test/a/b.html",
             "http://H.test:80/a/b.html", "http://u:p@h.test/a/d", "http:foo", "mailto:x@y", "http://[::1]/a/b",
             "http://h.test/a/b/", "ftp://h.test/a/b", "http://h.test/a/?q=2", "http://[oops/a"]
    parts = ["", "a.html", "../x", "./y", "/abs", "//other.test/p", "?q=1", "#frag", ";p", "http:", "http:?z",
             "HTTP:x", "x:y", "\x01?q", "\t", " b.html ", "\\\\w\\x", "a?b:c", "a/b:c", "mailto:a", "%zz", "ü.html",
             "a#b", "..", "../../..", "http://[bad/", "http://h.test:99999/", "//", "///x", "..;x", "\x0e#x",
             "c?utm_source=1&a=2", "x;jsessionid=1/y", "\u3000?q"]
    rnd = random.Random(29)
    hrefs = parts + ["".join(rnd.choice(parts + list("/?#;:.\\a%\x01 ")) for _ in range(rnd.randint(1, 4)))
                     for _ in range(2000)]
    _normalize_in_folder.cache_clear()
    for params in (UrlParams(), UrlParams(strip_session_ids=False)):
        for order in (bases, bases[::-1]):
            for base in order:
                assert link_targets(hrefs, base, params) == _targets_one_by_one(hrefs, base, params), base
    assert _normalize_in_folder.cache_info().hits  # the cache answered


def test_link_targets_work_out_a_folders_relative_href_once() -> None:
    """Two pages of one folder: the second page's relative hrefs come from the cache (``normalize_url`` is
    not called for them), its ``?``-only href does not."""
    from unittest import mock

    import boilerstrip.urls as urls

    urls._normalize_in_folder.cache_clear()
    hrefs = ["next.html", "../up/index.html", "?page=2"]
    first = link_targets(hrefs, "http://once.test/docs/a.html")
    with mock.patch.object(urls, "normalize_url", wraps=urls.normalize_url) as counted:
        second = link_targets(hrefs, "http://once.test/docs/b.html")
    assert [call.args[0] for call in counted.call_args_list] == ["?page=2"]
    assert first[0][:2] == second[0][:2] == ("http://once.test/docs/next.html", "http://once.test/up/index.html")
    assert second[0][2] == "http://once.test/docs/b.html?page=2"
