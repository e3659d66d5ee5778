"""Email and IP addresses become placeholders, as FineWeb does (datatrove ``PIIFormatter``)."""

from __future__ import annotations

import ipaddress
import re

__all__ = ["EMAIL_PLACEHOLDER", "IP_PLACEHOLDER", "replace_pii", "code_literals"]

#: what an address becomes: a reserved example domain, and an address of TEST-NET-1 (RFC 5737)
EMAIL_PLACEHOLDER = "email@example.com"
IP_PLACEHOLDER = "192.0.2.1"

_EMAIL_RE = re.compile(r"\b[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b")
#: four dotted numbers not inside a longer dotted name: neither a version "1.2.3.4.5" nor a reverse-DNS
#: name "1.0.0.127.in-addr.arpa" nor "host.10.0.0.1" is an address; a sentence's full stop after the
#: address is fine. Octets above 255 are refused by ``ipaddress``.
_IPV4_RE = re.compile(r"(?<![\w.-])\d{1,3}(?:\.\d{1,3}){3}(?![\w-]|\.[\w-])")
#: code in the text: a fenced block (``` or ~~~ on a line of its own, to the closing fence or the end)
#: or an inline `code` span; addresses there are examples and commands, not someone's address
_CODE_RE = re.compile(r"^(```|~~~)[^\n]*\n.*?(?:^\1[^\n]*$|\Z)|`[^`\n]+`", re.MULTILINE | re.DOTALL)


def _is_public(address: str) -> bool:
    # Only public addresses identify someone: 127.0.0.1, 192.168.x.x and documentation ranges stay (as
    # datatrove's only_remove_public_ips does), so network how-tos keep their meaning.
    try:
        return ipaddress.ip_address(address).is_global
    except ValueError:
        return False


def code_literals(markdown: str | None) -> frozenset[str]:
    """The IPv4-looking strings inside the code (fenced blocks, inline spans) of a page's Markdown: the
    plain text has lost its code marks, so these are the addresses :func:`replace_pii` leaves alone."""
    if not markdown or "." not in markdown:
        return frozenset()
    return frozenset(m.group(0) for code in _CODE_RE.finditer(markdown) for m in _IPV4_RE.finditer(code.group(0)))


def replace_pii(text: str, keep: frozenset[str] = frozenset()) -> tuple[str, dict[str, int]]:
    """(text with emails and public IPv4 addresses replaced, {"email": n, "ip": n} replaced).

    Addresses in the text's own code (fenced blocks, inline spans) and those in ``keep`` (see
    :func:`code_literals`) stay."""
    counts = {"email": 0, "ip": 0}
    if "@" in text:
        text, counts["email"] = _EMAIL_RE.subn(EMAIL_PLACEHOLDER, text)

    def ip(match: re.Match[str]) -> str:
        if match.group(0) in keep or not _is_public(match.group(0)):
            return match.group(0)
        counts["ip"] += 1
        return IP_PLACEHOLDER

    if "." in text:
        parts: list[str] = []
        done = 0
        for code in _CODE_RE.finditer(text):
            parts += [_IPV4_RE.sub(ip, text[done:code.start()]), code.group(0)]
            done = code.end()
        parts.append(_IPV4_RE.sub(ip, text[done:]))
        text = "".join(parts)
    return text, counts
