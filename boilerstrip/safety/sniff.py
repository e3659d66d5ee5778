"""Is a response an HTML page? Its declared Content-Type, and a sniff of the body for binary data served as
HTML (a PDF as ``text/html``). Pure: used by the HTML-only middleware (before the body) and by the spider
(on the decoded body).
"""

from __future__ import annotations

__all__ = ["is_html_content_type", "sniff_not_html", "HTML_CONTENT_TYPES", "SNIFF_BYTES", "MAX_BINARY_BYTE_RATIO"]

#: media types that are pages we extract from
HTML_CONTENT_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: what a body starting with these bytes is, whatever its Content-Type says (the WHATWG MIME sniffing table)
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"RIFF", "application/octet-stream"),  # webp, wav, avi
    (b"\x1f\x8b\x08", "application/gzip"),  # a gzip file (not a Content-Encoding: that is decoded first)
    (b"\x7fELF", "application/x-executable"),
    (b"\xd0\xcf\x11\xe0", "application/msword"),  # OLE2: .doc, .xls
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
)
_UTF_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
#: bytes that never occur in text (NUL and the C0 controls but TAB, LF, FF, CR, ESC)
_BINARY_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))
#: how much of the body the sniffer reads (the WHATWG algorithm reads 1445 bytes)
SNIFF_BYTES = 1445
#: share of binary bytes in that window above which the body is binary: random bytes have ~0.11, HTML ~0
#: (a page with a stray NUL or a short run of UTF-16 stays a page, as the extractor's own 0.08 rule says)
MAX_BINARY_BYTE_RATIO = 0.08


def sniff_not_html(body: bytes, encoding: str | None = None) -> str | None:
    """The media type a body declared as HTML really has when it is binary (a PDF, an image, an archive,
    or mostly binary bytes in its first 1445), else None. Pure. A page in UTF-16/32 (BOM or ``encoding``)
    is text whatever its NULs."""
    head = body[:SNIFF_BYTES].lstrip(b" \t\r\n")
    for magic, media in _MAGIC:
        if head.startswith(magic):
            return media
    if head.startswith(_UTF_BOMS) or (encoding or "").lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        return None
    odd = sum(head.count(bytes((b,))) for b in _BINARY_BYTES)
    if head and odd > MAX_BINARY_BYTE_RATIO * len(head):
        return "application/octet-stream"
    return None


def is_html_content_type(value: bytes | str | None) -> bool | None:
    """True/False for a declared Content-Type; None when there is none (let the body decide)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1", errors="replace")
    media = value.split(";", 1)[0].strip().lower()
    if not media:
        return None
    return media in HTML_CONTENT_TYPES
