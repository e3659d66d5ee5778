"""Email and IP addresses become placeholders, as FineWeb does (datatrove ``PIIFormatter``)."""

from __future__ import annotations

import ipaddress
import re

__all__ = ["EMAIL_PLACEHOLDER", "IP_PLACEHOLDER", "replace_pii"]

#: what an address becomes: a reserved example domain, and an address of TEST-NET-1 (RFC 5737)
EMAIL_PLACEHOLDER = "email@example.com"
IP_PLACEHOLDER = "192.0.2.1"

_EMAIL_RE = re.compile(r"\b[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b")
#: four dotted numbers not inside a longer dotted run (a version "1.2.3.4.5" is not an address); a
#: sentence's full stop after the address is fine. Octets above 255 are refused by ``ipaddress``.
_IPV4_RE = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?!\d|\.\d)")


def _is_public(address: str) -> bool:
    # Only public addresses identify someone: 127.0.0.1, 192.168.x.x and documentation ranges stay (as
    # datatrove's only_remove_public_ips does), so network how-tos keep their meaning.
    try:
        return ipaddress.ip_address(address).is_global
    except ValueError:
        return False


def replace_pii(text: str) -> tuple[str, dict[str, int]]:
    """(text with emails and public IPv4 addresses replaced, {"email": n, "ip": n} replaced)."""
    counts = {"email": 0, "ip": 0}
    if "@" in text:
        text, counts["email"] = _EMAIL_RE.subn(EMAIL_PLACEHOLDER, text)

    def ip(match: re.Match[str]) -> str:
        if not _is_public(match.group(0)):
            return match.group(0)
        counts["ip"] += 1
        return IP_PLACEHOLDER

    if "." in text:
        text = _IPV4_RE.sub(ip, text)
    return text, counts
