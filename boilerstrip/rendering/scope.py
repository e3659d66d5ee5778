"""Which of the browser's own sub-requests may go out: a pure function of URLs and a resource type.

The browser must not wander where the crawl would not: it stays on the page's own host and port, the
crawl's own sites (the caller passes the crawl's scope test) and explicitly allowed hosts; it speaks only
http(s), and skips images, media and fonts (the text does not need them).

Addresses follow the HTTP path's rule (:func:`boilerstrip.safety.addresses.address_refusal`, the one copy):
:func:`subrequest_block_reason` refuses a non-global IP literal early (any spelling), and
:func:`connect_refusal` is asked again for every connection the browser makes (redirect hops included),
with the addresses the host resolved to, by the browser's proxy. A non-global address is reached only at
an allowed endpoint: a start URL's origin or a ``BOILERSTRIP_SCOPE_ALLOW_PRIVATE`` entry.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from urllib.parse import urlsplit

from boilerstrip.safety.addresses import PrivateAllowlist, address_refusal, parse_ip_literal

__all__ = ["subrequest_block_reason", "origin_key", "PrivateAllowlist", "connect_refusal"]

_NETWORK_FREE_SCHEMES = frozenset(("data", "blob", "about"))
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_key(url: str) -> tuple[str, int] | None:
    """(host, port) of an http(s) URL (lower-cased host, default port filled in), None otherwise."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").rstrip(".")
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return None
    if scheme not in _DEFAULT_PORTS or not host or port is None:
        return None
    return host, port


def _host_allowed(host: str, allowed: frozenset[str] | set[str]) -> bool:
    return any(host == h or host.endswith("." + h) for h in allowed)


def connect_refusal(host: str, port: int, addresses: Collection[str], allowed: PrivateAllowlist) -> str | None:
    """None when the browser may connect to ``host:port`` resolved to ``addresses`` (all of them are
    checked), else why not (``loopback``, ``private``, ``link_local``... of
    :func:`boilerstrip.safety.addresses.address_refusal`)."""
    if allowed.allows(host, port):
        return None
    if not addresses:
        return "no_address"
    for address in addresses:
        kind = address_refusal(address)
        if kind is not None:
            return kind
    return None


def _private_literal(host: str) -> bool:
    ip = parse_ip_literal(host)
    return ip is not None and address_refusal(ip) is not None


def subrequest_block_reason(
    url: str,
    *,
    resource_type: str,
    page_url: str,
    blocked_resource_types: frozenset[str] | set[str] = frozenset(("image", "media", "font")),
    extra_hosts: frozenset[str] | set[str] = frozenset(),
    in_crawl_scope: Callable[[str], bool] | None = None,
) -> str | None:
    """None when the browser may fetch ``url`` for the page at ``page_url``, else a short reason:
    ``resource_type`` (an image, media or font), ``scheme`` (not http(s)), ``private_address`` (a private
    or loopback IP literal the page is not on), ``offsite`` (another host or port than the page's, not in
    the crawl's scope, not in ``extra_hosts``)."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in _NETWORK_FREE_SCHEMES:
        return None
    if resource_type in blocked_resource_types:
        return "resource_type"
    target = origin_key(url)
    if target is None:
        return "scheme"
    page = origin_key(page_url)
    if page is not None and target == page:
        return None
    if _host_allowed(target[0], extra_hosts):
        return None
    if in_crawl_scope is not None and in_crawl_scope(url):
        return None  # one of the crawl's own sites (a loopback start URL included: the user chose it)
    if _private_literal(target[0]):
        return "private_address"
    return "offsite"
