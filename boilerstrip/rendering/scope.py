"""Which of the browser's own sub-requests may go out: a pure function of URLs and a resource type.

The browser must not wander where the crawl would not: it stays on the page's own host and port (plus
explicitly allowed hosts), speaks only http(s), and skips images, media and fonts (the text does not
need them). Private addresses are covered by the host rule: a sub-request reaches 10.0.0.1 only when the
page itself is on 10.0.0.1, which the crawl's scope checks already admitted.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["subrequest_block_reason", "origin_key"]

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


def subrequest_block_reason(
    url: str,
    *,
    resource_type: str,
    page_url: str,
    blocked_resource_types: frozenset[str] | set[str] = frozenset(("image", "media", "font")),
    extra_hosts: frozenset[str] | set[str] = frozenset(),
) -> str | None:
    """None when the browser may fetch ``url`` for the page at ``page_url``, else a short reason:
    ``resource_type`` (an image, media or font), ``scheme`` (not http(s)), ``offsite`` (another host or
    port than the page's, not in ``extra_hosts``)."""
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
    return "offsite"
