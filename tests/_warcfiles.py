"""Hand-written WARC files for tests and the WARC benchmark: records shaped as other writers shape them."""

from __future__ import annotations

import uuid
import zlib
from pathlib import Path


def warc_record(kind: str, url: str | None, block: bytes, content_type: str | None = "application/http;msgtype=response",
                length: int | None = None, extra: tuple[tuple[str, str], ...] = ()) -> bytes:
    """One WARC/1.0 record (wget and Heritrix write 1.0); ``length`` overrides the Content-Length (a lie)."""
    lines = ["WARC/1.0", f"WARC-Type: {kind}", f"WARC-Record-ID: <urn:uuid:{uuid.uuid4()}>",
             "WARC-Date: 2026-11-01T10:00:00Z"]
    if url is not None:
        lines.append(f"WARC-Target-URI: {url}")
    lines += [f"{k}: {v}" for k, v in extra]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    lines.append(f"Content-Length: {len(block) if length is None else length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + block + b"\r\n\r\n"


def http_response(body: bytes, status: str = "200 OK", headers: tuple[tuple[str, str], ...] = (
        ("Content-Type", "text/html; charset=utf-8"),), chunked: bool = False) -> bytes:
    head = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers)]
    if chunked:
        head.append("Transfer-Encoding: chunked")
        parts = [body[i : i + 700] for i in range(0, len(body), 700)]
        body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    else:
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def gz(record: bytes) -> bytes:
    member = zlib.compressobj(6, zlib.DEFLATED, 31)
    return member.compress(record) + member.flush()


def template_page(site: str, title: str, text: str, nav: list[str]) -> bytes:
    """A page of a site with its own template: a nav bar, a footer and a sidebar naming the site."""
    links = "".join(f'<li><a href="{href}">{href.strip("/")} of {site}</a></li>' for href in nav)
    return (f"<!DOCTYPE html><html lang='en'><head><title>{title}</title></head><body>"
            f"<header><p>{site} - the site about {site} things, since 1999</p><ul>{links}</ul></header>"
            f"<main><h1>{title}</h1><p>{text}</p></main>"
            f"<aside><p>Subscribe to the {site} letter for news of {site} every week.</p></aside>"
            f"<footer><p>Copyright {site} cooperative. All rights reserved. Contact the {site} editors.</p></footer>"
            "</body></html>").encode()


def write_warc(path: Path, records: list[bytes], gzip: bool = True) -> Path:
    with open(path, "wb") as handle:
        for record in records:
            handle.write(gz(record) if gzip else record)
    return path
