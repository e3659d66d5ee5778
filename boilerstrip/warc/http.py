"""The HTTP message inside a WARC ``response`` record: status, headers and the payload."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["HttpResponse", "parse_http_response", "NotHttp"]

_STATUS_LINE = re.compile(rb"^(HTTP/\d(?:\.\d)?)\s+(\d{3})(?:\s+(.*))?$")


class NotHttp(ValueError):
    """The block is not an HTTP response (a ``dns:`` record, a ``resource``, a torn header)."""


@dataclass(frozen=True)
class HttpResponse:
    protocol: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    #: how the recorded payload was changed to give ``body``: "dechunked", "chunked_torn"
    notes: tuple[str, ...] = ()


def _dechunk(data: bytes) -> tuple[bytes, bool]:
    """(the payload of a chunked body, whether it was whole)."""
    out = bytearray()
    position = 0
    while True:
        end = data.find(b"\r\n", position)
        if end < 0:
            return bytes(out), False
        size_text = data[position:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return bytes(out), False
        if size == 0:
            return bytes(out), True
        start = end + 2
        out += data[start : start + size]
        if start + size > len(data):
            return bytes(out), False
        position = start + size + 2


def parse_http_response(block: bytes, max_header_bytes: int = 64 * 1024) -> HttpResponse:
    """Parse an HTTP/1.x response as WARC writers record it. ``Transfer-Encoding: chunked`` is undone (wget
    and Heritrix keep the wire bytes); ``Content-Encoding`` is left for the caller (the crawl's own
    decompression, with its limits). Raises :class:`NotHttp`."""
    line_end = block.find(b"\n", 0, max_header_bytes)
    if line_end < 0:
        raise NotHttp("no HTTP status line")
    match = _STATUS_LINE.match(block[:line_end].rstrip(b"\r"))
    if match is None:
        raise NotHttp(f"not an HTTP status line: {block[:40]!r}")
    head_end, sep = block.find(b"\r\n\r\n", 0, max_header_bytes), 4
    if head_end < 0:
        head_end, sep = block.find(b"\n\n", 0, max_header_bytes), 2
    if head_end < 0:
        if len(block) > max_header_bytes:
            raise NotHttp("no end of the HTTP headers")
        head_end, sep = len(block), 0
    headers: list[tuple[str, str]] = []
    for raw in block[line_end + 1 : head_end].replace(b"\r\n", b"\n").split(b"\n"):
        if not raw.strip():
            continue
        if raw[:1] in (b" ", b"\t") and headers:
            name, value = headers[-1]
            headers[-1] = (name, value + " " + raw.strip().decode("latin-1"))
            continue
        name, colon, value = raw.partition(b":")
        if colon and name.strip():
            headers.append((name.strip().decode("latin-1"), value.strip().decode("latin-1")))
    body = block[head_end + sep :]
    notes: list[str] = []
    coding = next((v for k, v in headers if k.lower() == "transfer-encoding"), "")
    if "chunked" in coding.lower():
        payload, whole = _dechunk(body)
        if whole or payload:
            body = payload
            notes.append("dechunked" if whole else "chunked_torn")
        else:  # a writer that de-chunked the payload and kept the header: the body is the payload
            notes.append("chunked_header_only")
        headers = [(k, v) for k, v in headers if k.lower() != "transfer-encoding"]
    return HttpResponse(match.group(1).decode("ascii"), int(match.group(2)), headers, body, tuple(notes))
