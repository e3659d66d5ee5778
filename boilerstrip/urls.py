"""URL normalisation and crawl scope, so that one page is fetched once.

Pure functions over strings (w3lib and tldextract; no Scrapy import). ``normalize_url`` is applied to
every URL before it becomes a request: start URLs, links, sitemap entries and ``rel=canonical`` targets.

What it does, in order: resolve against a base, keep only http/https, lowercase scheme and host, drop
the default port (80/443), drop the fragment, drop tracking parameters (``utm_*``, ``fbclid``...), sort
the query (w3lib ``canonicalize_url``), and turn an empty path into ``/``. It does *not* guess that
``/index.html`` equals ``/`` (not true on every server); ``rel=canonical`` handles such variants.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import tldextract
from w3lib.url import canonicalize_url

__all__ = [
    "UrlParams",
    "TRACKING_PARAMS",
    "TRACKING_PREFIXES",
    "normalize_url",
    "site_key",
    "in_scope",
    "origin",
]

#: query parameters that only track the visitor and never change the page
TRACKING_PARAMS: tuple[str, ...] = (
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "twclid", "igshid", "mc_cid",
    "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id",
    "ref_src", "spm",
)  # fmt: skip
#: query parameter prefixes that only track (``utm_source``, ``utm_medium``...)
TRACKING_PREFIXES: tuple[str, ...] = ("utm_", "pk_", "mtm_", "hsa_")

_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCOPES = ("host", "domain")


@dataclass(frozen=True)
class UrlParams:
    # Parameters dropped from every URL (exact names, lowercase compared).
    tracking_params: tuple[str, ...] = TRACKING_PARAMS
    # Parameters dropped when their name starts with one of these.
    tracking_prefixes: tuple[str, ...] = TRACKING_PREFIXES
    # A URL longer than this is refused: no real page needs 2 KiB of URL and traps generate them.
    max_url_chars: int = 2048

    def __post_init__(self) -> None:
        if self.max_url_chars < 16:
            raise ValueError("max_url_chars must be >= 16")


_DEFAULT_PARAMS = UrlParams()


def normalize_url(url: str, base: str | None = None, params: UrlParams = _DEFAULT_PARAMS) -> str | None:
    """The normal form of ``url`` (resolved against ``base``), or None when it is not a crawlable URL."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url:
        return None
    try:
        if base:
            url = urljoin(base, url)
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        host = (parts.hostname or "").rstrip(".")
        if not host:
            return None
        port = parts.port  # ValueError on a bad port
    except ValueError:
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    query = _drop_tracking(parts.query, params)
    path = parts.path or "/"
    # userinfo is dropped on purpose: credentials never belong in a crawl frontier.
    rebuilt = urlunsplit((scheme, netloc, path, query, ""))
    try:
        normal = canonicalize_url(rebuilt, keep_blank_values=True, keep_fragments=False)
    except (ValueError, UnicodeError):
        return None
    if len(normal) > params.max_url_chars:
        return None
    return normal


def _drop_tracking(query: str, params: UrlParams) -> str:
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    names = {name.lower() for name in params.tracking_params}
    kept = [
        (name, value)
        for name, value in pairs
        if name.lower() not in names and not name.lower().startswith(params.tracking_prefixes)
    ]
    if len(kept) == len(pairs):
        return query
    return urlencode(kept)


@functools.lru_cache(maxsize=1)
def _extractor() -> tldextract.TLDExtract:
    # The bundled public-suffix snapshot only: a crawler must not fetch a list from the network.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def _registrable_domain(host: str) -> str:
    bare = host.strip("[]")
    try:
        ipaddress.ip_address(bare)
        return bare
    except ValueError:
        pass
    result = _extractor()(bare)
    top = getattr(result, "top_domain_under_public_suffix", None) or result.registered_domain
    return top or bare


def site_key(url: str, scope: str = "host") -> str | None:
    """The key of the site ``url`` belongs to: ``host[:port]`` (scope "host") or the registrable domain."""
    if scope not in _SCOPES:
        raise ValueError(f"scope must be one of {_SCOPES}, got {scope!r}")
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
        port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    if scope == "domain":
        return _registrable_domain(host)
    scheme = parts.scheme.lower()
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return host
    return f"{host}:{port}"


def in_scope(url: str, sites: frozenset[str] | set[str], scope: str = "host") -> bool:
    """Whether ``url`` belongs to one of ``sites`` (keys from :func:`site_key` with the same scope)."""
    key = site_key(url, scope)
    return key is not None and key in sites


def origin(url: str) -> str:
    """``scheme://netloc`` of a (normalised) URL: where its robots.txt and /sitemap.xml live."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
