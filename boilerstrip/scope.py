"""What "the same site" means, in one place: the registrable domain, the site of a URL, the host/domain
scope test and the site a start URL's redirect brings into the crawl.

Pure (tldextract's bundled public-suffix snapshot and :mod:`boilerstrip.safety.addresses`; no Scrapy). The
spider (which links to follow), the scope middleware (which requests go out), the browser's sub-request
rule and the template model (which pages share a template) all call these functions, so the crawl's idea
of a site cannot drift between them.

A *site key* is a string:

- scope ``host``: the host and a non-default port (``example.org``, ``127.0.0.1:8000``, ``[::1]:8080``);
  80 and 443 count as one, so an http -> https upgrade stays on the site;
- scope ``domain``: the registrable domain and a non-default port (``example.co.uk``,
  ``127.0.0.1:8000``): ``www.example.co.uk`` and ``docs.example.co.uk`` are one site, another port is not.

An IP literal is its own registrable domain; a name without a known public suffix (``localhost``,
``intranet``) is too (never widened to its last two labels: ``a.corp.internal`` is not ``corp.internal``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from boilerstrip.safety.addresses import DEFAULT_PORTS, parse_host_port, parse_ip_literal

__all__ = ["ScopeParams", "OFFSITE_MODES", "SCOPES", "registrable_domain", "site_key", "in_scope", "origin", "host_of_url", "joined_site"]

SCOPES = ("host", "domain")
#: what "on site" means for the scope middleware's offsite check (ScopeParams.offsite)
OFFSITE_MODES = ("auto", "host", "domain", "off")


@functools.lru_cache(maxsize=1)
def _extractor() -> Any:
    import tldextract

    # The bundled public-suffix snapshot only: a crawler must not fetch a list from the network.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@functools.lru_cache(maxsize=4096)  # a crawl asks for the same few hosts on every URL it meets
def _bare_host(host: str) -> str:
    """Lower case, no trailing dot, an IP literal in canonical form without brackets."""
    ip = parse_ip_literal(host)
    if ip is not None:
        return str(ip)
    return host.strip().strip("[]").rstrip(".").lower()


@functools.lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """``docs.example.co.uk`` -> ``example.co.uk``; an IP literal or a name without a public suffix: itself."""
    bare = _bare_host(host)
    if not bare or parse_ip_literal(bare) is not None:
        return bare
    try:
        parts = _extractor()(bare)
    except Exception:  # noqa: BLE001 -- a name tldextract cannot read is its own site
        return bare
    top = parts.top_domain_under_public_suffix
    return top or bare


def host_of_url(url: str) -> tuple[str, int | None] | None:
    """(bare host, non-default port or None) of an http(s) URL; None without a usable host or port."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        port = parts.port
    except (ValueError, AttributeError):
        return None
    bare = _bare_host(host)
    if not bare:
        return None
    if port is not None and port == DEFAULT_PORTS.get(scheme):
        port = None
    return bare, port


def _with_port(name: str, port: int | None) -> str:
    shown = f"[{name}]" if ":" in name else name
    return shown if port is None else f"{shown}:{port}"


def site_key(url: str, scope: str = "host") -> str | None:
    """The key of the site ``url`` belongs to under ``scope`` (see the module docstring), None if unusable."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    parsed = host_of_url(url)
    if parsed is None:
        return None
    host, port = parsed
    return _with_port(registrable_domain(host) if scope == "domain" else host, port)


def in_scope(url: str, sites: Collection[str], scope: str = "host") -> bool:
    """Whether ``url`` belongs to one of ``sites`` (keys from :func:`site_key` with the same scope)."""
    key = site_key(url, scope)
    return key is not None and key in sites


def origin(url: str) -> str:
    """``scheme://netloc`` of a (normalised) URL: where its robots.txt and /sitemap.xml live."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def joined_site(final_url: str, sites: Collection[str], scope: str = "host") -> str | None:
    """The site key a start URL's redirect to ``final_url`` adds to the crawl, or None (already a site).

    ``example.org`` -> ``www.example.org``: the final site is crawled as the start URL's would be. Only a
    *start URL's* redirect chain does this (the caller checks that); any other page redirecting to another
    site stays offsite.
    """
    key = site_key(final_url, scope)
    if key is None or key in sites:
        return None
    return key


@dataclass(frozen=True)
class ScopeParams:
    # Extra private endpoints the crawl may reach, as "host:port" (or "host" for any port). The start
    # URLs' origins are always allowed; nothing else private is, because a page must not be able to point
    # the crawler at the machine's own services (SSRF).
    allow_private: tuple[str, ...] = ()
    # What "on site" means for links and redirects: "host" = the start URLs' host and port (default
    # ports of http and https count as one, so an http->https upgrade stays on site); "domain" = any host
    # under the start URLs' registrable domains, on their ports (boilerstrip.scope); "off" = no
    # offsite check (private addresses are still refused); "auto" = the crawl's scope (the spider's own,
    # else BOILERSTRIP_CRAWL_SCOPE): one setting says what the crawl's site is, this one only whether the
    # check runs; "host"/"domain" here override it (kept for older configurations).
    offsite: str = "auto"
    # Resolve names in the middleware to refuse early with a clear reason; the resolver checks again at
    # connect time either way.
    resolve_early: bool = True

    def __post_init__(self) -> None:
        if self.offsite not in OFFSITE_MODES:
            raise ValueError(f"offsite must be one of {OFFSITE_MODES}, got {self.offsite!r}")
        for entry in self.allow_private:
            parse_host_port(entry)  # raises ValueError naming the entry
