"""Which addresses a crawler must not reach, and what "the same site" means (host *and* port).

Pure functions over strings and :mod:`ipaddress`; the Scrapy glue (``ScopeMiddleware``, ``ScopedResolver``)
calls them before a request is sent and again on the address a connection is about to use.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
import socket
from typing import NamedTuple
from urllib.parse import urlsplit

__all__ = [
    "IPAddress",
    "Origin",
    "DEFAULT_PORTS",
    "parse_ip_literal",
    "address_refusal",
    "origin_of",
    "parse_host_port",
    "PrivateAllowlist",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

DEFAULT_PORTS = {"http": 80, "https": 443}

# Ranges ipaddress does not flag as non-global (or flags inconsistently across Python versions).
_CGNAT = ipaddress.ip_network("100.64.0.0/10")  # RFC 6598 shared address space (carrier-grade NAT)
_SITE_LOCAL_V6 = ipaddress.ip_network("fec0::/10")  # RFC 3879, deprecated but still routed inside networks
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: the last 32 bits are an IPv4 address
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215 local-use NAT64
_SIXTOFOUR = ipaddress.ip_network("2002::/16")  # RFC 3056: bits 16..48 are an IPv4 address
_IPV4_COMPAT = ipaddress.ip_network("::/96")  # deprecated IPv4-compatible IPv6 (::a.b.c.d)
_LEGACY_V4_CHARS = set("0123456789abcdefx.")


def parse_ip_literal(host: str) -> IPAddress | None:
    """The IP address ``host`` denotes, or None for a name.

    Accepts what browsers and ``inet_aton`` accept, so that a URL cannot hide loopback behind another
    spelling: ``[::1]``, ``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``, a trailing dot.
    """
    text = host.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    text = text.split("%", 1)[0]  # an IPv6 zone id does not change the address
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    if not text:
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if set(text) <= _LEGACY_V4_CHARS and any(ch.isdigit() for ch in text):
        # WHATWG: a host whose last label is numeric is an IPv4 address in decimal, octal or hex parts.
        last = text.rsplit(".", 1)[-1]
        if last and (last.isdigit() or last.startswith("0x")):
            try:
                return ipaddress.IPv4Address(socket.inet_aton(text))
            except (OSError, ValueError):
                return None
    return None


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _IPV4_COMPAT and int(ip) > 1:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_refusal(ip: IPAddress | str) -> str | None:
    """Why a crawler must not connect to ``ip`` (``loopback``, ``private``, ``cgnat``...), or None if global."""
    if isinstance(ip, str):
        parsed = parse_ip_literal(ip)
        if parsed is None:
            return "not_an_address"
        ip = parsed
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_v4(ip)
        if embedded is not None:
            inner = address_refusal(embedded)
            if inner is not None:
                return f"embedded_{inner}"
        if ip in _SITE_LOCAL_V6:
            return "site_local"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "cgnat"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "not_global"
    return None


class Origin(NamedTuple):
    """scheme, host (lower case; an IP literal in canonical form) and port (the default made explicit)."""

    scheme: str
    host: str
    port: int

    @property
    def site(self) -> tuple[str, int | None]:
        """What offsite checks compare: the host and a non-default port (so http->https stays on site,
        while :8080 is another site)."""
        return (self.host, None if DEFAULT_PORTS.get(self.scheme) == self.port else self.port)

    @property
    def endpoint(self) -> tuple[str, int]:
        return (self.host, self.port)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def _normalise_host(host: str) -> str:
    ip = parse_ip_literal(host)
    if ip is not None:
        return str(ip)
    return host.strip().rstrip(".").lower()


def origin_of(url: str) -> Origin | None:
    """The origin of an http(s) URL, or None when the URL has no usable host/port (or another scheme)."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    return Origin(scheme, _normalise_host(host), port if port is not None else DEFAULT_PORTS[scheme])


def parse_host_port(entry: str) -> tuple[str, int | None]:
    """``"host:port"``, ``"[v6]:port"``, ``"host"`` (any port) or a URL -> (normalised host, port or None)."""
    text = entry.strip()
    if "://" in text:
        origin = origin_of(text)
        if origin is None:
            raise ValueError(f"not an http(s) URL: {entry!r}")
        return origin.host, origin.port
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:
        host, port_text = text, ""
    if not host:
        raise ValueError(f"no host in {entry!r}")
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"bad port in {entry!r}")
        return _normalise_host(host), int(port_text)
    return _normalise_host(host), None


class PrivateAllowlist:
    """Endpoints the crawl may reach although their address is not global: the start URLs' origins and
    ``BOILERSTRIP_SCOPE_ALLOW_PRIVATE`` entries ("host:port", or "host" for any port). The one copy, used
    by the HTTP path (scope middleware, resolver) and the browser's proxy alike."""

    def __init__(self, entries: Iterable[str] = (), start_urls: Iterable[str] = ()) -> None:
        self.endpoints: set[tuple[str, int]] = set()
        self.any_port_hosts: set[str] = set()
        for entry in entries:
            host, port = parse_host_port(entry)  # raises ValueError naming a bad entry
            if port is None:
                self.any_port_hosts.add(host)
            else:
                self.endpoints.add((host, port))
        for url in start_urls:
            origin = origin_of(str(url))
            if origin is not None:
                self.add(origin)

    def add(self, origin: Origin) -> None:
        self.endpoints.add(origin.endpoint)

    def allows(self, host: str, port: int) -> bool:
        host = _normalise_host(host)
        return host in self.any_port_hosts or (host, port) in self.endpoints

    def allows_origin(self, origin: Origin) -> bool:
        return origin.host in self.any_port_hosts or origin.endpoint in self.endpoints

    @property
    def hosts(self) -> set[str]:
        return self.any_port_hosts | {host for host, _ in self.endpoints}

