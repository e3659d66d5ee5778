"""boilerstrip.scope: the one owner of "what is a site" (pure; the spider, the scope middleware, the
browser rule and the template model call it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boilerstrip.boilerplate import site_of_url
from boilerstrip.scope import in_scope, joined_site, registrable_domain, site_key
from conftest import ROOT


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("docs.example.co.uk", "example.co.uk"),
        ("WWW.Example.org.", "example.org"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("0x7f.1", "127.0.0.1"),  # the address rule's spelling of an IP literal
        ("localhost", "localhost"),  # no public suffix: its own site, never widened
        ("a.corp.internal", "a.corp.internal"),
    ],
)
def test_registrable_domain(host: str, domain: str) -> None:
    assert registrable_domain(host) == domain


def test_site_keys_carry_the_port_in_both_scopes() -> None:
    assert site_key("https://www.example.org:443/x", "host") == "www.example.org"
    assert site_key("http://www.example.org/x", "domain") == "example.org"
    assert site_key("http://docs.example.org:8080/", "domain") == "example.org:8080"
    assert site_key("http://[::1]:8080/", "host") == "[::1]:8080"
    assert site_key("http://[::1]:8080/", "domain") == "[::1]:8080"
    assert site_key("mailto:x@y", "host") is None
    sites = {site_key("http://example.org/", "domain")}
    assert in_scope("https://blog.example.org/p", sites, "domain")
    assert not in_scope("http://blog.example.org:9000/p", sites, "domain")
    with pytest.raises(ValueError):
        site_key("http://a/", "planet")


def test_start_redirect_join_and_template_site_agree() -> None:
    sites = {"example.org"}
    assert joined_site("https://www.example.org/", sites, "host") == "www.example.org"
    assert joined_site("https://example.org/", sites, "host") is None  # http -> https: same site
    assert joined_site("https://www.example.org/", sites, "domain") is None
    assert site_of_url("http://127.0.0.1:8000/a") == site_key("http://127.0.0.1:8000/a", "host") == "127.0.0.1:8000"


def test_scope_module_imports_no_scrapy() -> None:
    code = "import sys, boilerstrip.scope, boilerstrip.urls; print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
