"""Read any WARC file record by record, and never lose the records after a bad one.

:func:`scan_warc` walks a file (gzip per record, as every writer does, or uncompressed) and yields one
:class:`WarcEntry` per record: where it is (offset, length, and its place inside a gzip member), its WARC
headers, and ``error`` when it cannot be read -- a truncated or corrupt gzip member (``warc_truncated``,
``warc_corrupt_gzip``), a ``Content-Length`` that does not end where the record ends
(``warc_bad_length``), a block over ``max_record_bytes`` (``warc_too_large``, read through without being
held), a header that is not a WARC header (``warc_bad_header``). After an error the scan finds the next
record (the next gzip member, or the next ``WARC/1.x`` line) and goes on. :func:`read_record` reads one
record back from where the scan found it.

warcio and FastWARC both stop at the first bad member (``benchmarks/warc_benchmark.py --readers`` shows
it, with their speeds); the scan is ``zlib`` and bytes searches, and keeps up with FastWARC on the files
this project reads (docs/warc.md).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .params import WarcReadParams

__all__ = ["WarcEntry", "WarcRecord", "scan_warc", "read_record", "parse_warc_headers", "header_value",
           "WARC_ERRORS", "not_a_warc"]

_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_MAGIC = b"WARC/"
#: the reasons a record could not be read (the ledger's failed:<reason>)
WARC_ERRORS = ("warc_truncated", "warc_corrupt_gzip", "warc_bad_length", "warc_too_large", "warc_bad_header")


@dataclass
class WarcEntry:
    """One record as the scan found it (``error`` set: it cannot be read, ``detail`` says why)."""

    file: str
    offset: int  # where its gzip member (or, uncompressed, the record) starts in the file
    length: int  # the member's (or record's) bytes in the file
    inner: int = 0  # where the record starts inside the decompressed member (0 but for several in one)
    gzip: bool = False
    headers: list[tuple[str, str]] = field(default_factory=list)
    block_bytes: int = 0
    error: str | None = None
    detail: str = ""

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    @property
    def kind(self) -> str:
        return (self.header("WARC-Type") or "").strip().lower()

    @property
    def url(self) -> str | None:
        value = self.header("WARC-Target-URI")
        return value.strip().strip("<>") if value else None


@dataclass(frozen=True)
class WarcRecord:
    headers: list[tuple[str, str]]
    block: bytes

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)


def header_value(headers: list[tuple[str, str]], name: str) -> str | None:
    lower = name.lower()
    for key, value in headers:
        if key.lower() == lower:
            return value
    return None


def parse_warc_headers(head: bytes) -> list[tuple[str, str]] | None:
    """The named fields of a WARC header block (the ``WARC/1.x`` line first); None if it is not one."""
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    if not lines or not lines[0].strip().startswith(_WARC_MAGIC):
        return None
    headers: list[tuple[str, str]] = []
    for raw in lines[1:]:
        if not raw.strip():
            continue
        if raw[:1] in (b" ", b"\t") and headers:  # a folded line continues the last field
            name, value = headers[-1]
            headers[-1] = (name, value + " " + raw.strip().decode("utf-8", errors="replace"))
            continue
        name, sep, value = raw.partition(b":")
        if not sep:
            return None
        headers.append((name.strip().decode("utf-8", errors="replace"), value.strip().decode("utf-8", errors="replace")))
    return headers


def _split_head(data: bytes | bytearray, start: int, limit: int) -> tuple[int, int] | None:
    """(end of the header block, start of the block) of a record at ``start``; None when no blank line
    ends a header within ``limit`` bytes."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        end = data.find(sep, start, start + limit)
        if end >= 0:
            return end, end + len(sep)
    return None


def _partial_headers(data: bytes | bytearray) -> list[tuple[str, str]] | None:
    """The whole header lines at the start of a cut record (its type and URL, when they came through)."""
    if not bytes(data[:5]) == _WARC_MAGIC:
        return None
    lines = bytes(data[:4096]).split(b"\n")[1:-1]  # the last line may be cut
    headers: list[tuple[str, str]] = []
    for raw in lines:
        name, sep, value = raw.strip().partition(b":")
        if not sep or not name or b" " in name:
            break
        headers.append((name.decode("utf-8", "replace"), value.strip().decode("utf-8", "replace")))
    return headers


def _content_length(headers: list[tuple[str, str]]) -> int | None:
    value = header_value(headers, "Content-Length")
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def _ends_record(data: bytes | bytearray, at: int) -> int | None:
    """The record's end mark at ``at``: its length (``\\r\\n\\r\\n``; lenient writers: ``\\n\\n``, or
    nothing at the very end of the data); None when something else is there."""
    tail = bytes(data[at : at + 4])
    if tail == b"\r\n\r\n":
        return 4
    if tail[:2] == b"\n\n":
        return 2
    if at >= len(data):
        return 0
    return None


#: the first read of a gzip member (most are a few KiB; the file is buffered, so the next member's start
#: read with it is not read again)
_FIRST_READ = 16 * 1024


# -- gzip files -----------------------------------------------------------------------------------------------
def _inflate_member(handle, offset: int, keep: int, chunk: int) -> tuple[bytearray, int, int, str | None]:
    """Inflate the gzip member at ``offset``: (its first ``keep`` decompressed bytes, all its decompressed
    bytes, its compressed length, an error: None, "warc_truncated" or "warc_corrupt_gzip")."""
    handle.seek(offset)
    inflater = zlib.decompressobj(wbits=31)
    kept = bytearray()
    total = consumed = 0
    size = _FIRST_READ  # most members are a few KiB: read that first, then more and more
    while True:
        data = handle.read(size)
        size = min(size * 4, chunk)
        if not data:
            return kept, total, consumed, "warc_truncated"
        pending = data
        while pending:
            try:
                out = inflater.decompress(pending, chunk)
            except zlib.error:
                return kept, total, consumed, "warc_corrupt_gzip"
            if len(kept) < keep:
                kept += out[: keep - len(kept)]
            total += len(out)
            if inflater.eof:
                consumed += len(pending) - len(inflater.unused_data)
                return kept, total, consumed, None
            consumed += len(pending) - len(inflater.unconsumed_tail)
            pending = inflater.unconsumed_tail


#: input bytes fed at a time while salvaging the start of a corrupt member
_SALVAGE_STEP = 4


def _salvage(handle, offset: int, keep: int) -> tuple[bytearray, int]:
    """(what a corrupt member at ``offset`` inflates to before its error, up to ``keep`` bytes; the file
    offset by which the error came: the end of the piece being fed), fed a few bytes at a time so the
    output before the error is kept."""
    handle.seek(offset)
    data = handle.read(keep * 4)
    inflater = zlib.decompressobj(wbits=31)
    kept = bytearray()
    for start in range(0, len(data), _SALVAGE_STEP):
        piece = data[start : start + _SALVAGE_STEP]
        try:
            kept += inflater.decompress(piece, keep - len(kept) + 1)
        except zlib.error:  # somewhere in this piece: a piece that reaches the next member counts as reaching it
            return kept[:keep], offset + start + len(piece)
        if len(kept) >= keep or inflater.eof:
            break
    return kept[:keep], offset + len(data)


def _find_from(handle, needle: bytes, start: int, chunk: int) -> int | None:
    """The offset of the next ``needle`` at or after ``start``; None at the end of the file."""
    position = start
    while True:
        handle.seek(position)
        data = handle.read(chunk + len(needle))
        if not data:
            return None
        found = data.find(needle)
        if found >= 0:
            return position + found
        if len(data) < chunk + len(needle):
            return None
        position += chunk


def _records_in(data: bytearray, total: int, params: WarcReadParams
                ) -> Iterator[tuple[int, list[tuple[str, str]] | None, int, str | None, str]]:
    """The records in one member's decompressed bytes: (inner offset, headers, block bytes, error, detail)."""
    position = 0
    while True:
        head = _split_head(data, position, params.max_header_bytes)
        headers = parse_warc_headers(bytes(data[position : head[0]])) if head else None
        if headers is None:
            yield position, None, 0, "warc_bad_header", "no WARC header block"
            return
        length = _content_length(headers)
        body = head[1]
        if length is None:
            yield position, headers, 0, "warc_bad_header", "no Content-Length"
            return
        if length > params.max_record_bytes:  # read through, not held: the rest of the member is its block
            yield position, headers, length, "warc_too_large", f"{length} bytes (limit {params.max_record_bytes})"
            return
        if body + length > total:
            yield position, headers, length, "warc_bad_length", f"Content-Length {length}, {total - body} bytes there"
            return
        mark = _ends_record(data, body + length)
        if mark is None:
            yield position, headers, length, "warc_bad_length", f"Content-Length {length} does not end the record"
            return
        yield position, headers, length, None, ""
        position = body + length + mark
        if position >= len(data) or not data[position:position + 5].startswith(_WARC_MAGIC):
            return


def _scan_gzip(path: str, handle, size: int, params: WarcReadParams) -> Iterator[WarcEntry]:
    offset = 0
    keep = params.max_record_bytes + params.max_header_bytes + 8
    while offset < size:
        kept, total, consumed, error = _inflate_member(handle, offset, keep, params.chunk_bytes)
        if error is None:
            for inner, headers, block, record_error, detail in _records_in(kept, total, params):
                yield WarcEntry(path, offset, consumed, inner, True, headers or [], block, record_error, detail)
            offset += consumed
            continue
        # a bad member: what of its header could be read names the record; the scan goes on at the next member
        if error == "warc_corrupt_gzip":
            kept, failed_at = _salvage(handle, offset, params.max_header_bytes)
        head = _split_head(kept, 0, params.max_header_bytes)
        headers = (parse_warc_headers(bytes(kept[: head[0]])) if head else None) or _partial_headers(kept)
        found = _find_from(handle, _GZIP_MAGIC, offset + 1, params.chunk_bytes)
        end = found if found is not None else size
        if error == "warc_corrupt_gzip" and found is not None and failed_at > found:
            error = "warc_truncated"  # its deflate stream ran on into the next member: it was cut short
        detail = f"gzip member at {offset}: {'cut short' if error == 'warc_truncated' else 'corrupt'} after {max(total, len(kept))} bytes"
        yield WarcEntry(path, offset, end - offset, 0, True, headers or [], 0, error, detail)
        offset = end


# -- uncompressed files ---------------------------------------------------------------------------------------
def _next_warc_line(handle, start: int, chunk: int) -> int | None:
    """The next record start (a ``WARC/1.`` at the start of a line) after ``start``."""
    found = _find_from(handle, b"\nWARC/1.", start, chunk)
    return None if found is None else found + 1


def _scan_plain(path: str, handle, size: int, params: WarcReadParams) -> Iterator[WarcEntry]:
    offset = 0
    while offset < size:
        handle.seek(offset)
        data = handle.read(params.max_header_bytes)
        skipped = len(data) - len(data.lstrip(b"\r\n"))
        if skipped:
            offset += skipped
            continue
        head = _split_head(data, 0, params.max_header_bytes)
        headers = parse_warc_headers(data[: head[0]]) if head else None
        length = _content_length(headers) if headers else None
        if headers is None or length is None:
            after = _next_warc_line(handle, offset, params.chunk_bytes)
            end = after if after is not None else size
            yield WarcEntry(path, offset, end - offset, 0, False, headers or [], 0, "warc_bad_header",
                            "no WARC header block" if headers is None else "no Content-Length")
            offset = end
            continue
        body = offset + head[1]
        handle.seek(body + length)
        mark = _ends_record(handle.read(4), 0) if body + length < size else 0
        if body + length > size or mark is None:
            after = _next_warc_line(handle, body, params.chunk_bytes)
            end = after if after is not None else size
            detail = (f"Content-Length {length}, {size - body} bytes left" if body + length > size
                      else f"Content-Length {length} does not end the record")
            yield WarcEntry(path, offset, end - offset, 0, False, headers, length, "warc_bad_length", detail)
            offset = end
            continue
        error, detail = (("warc_too_large", f"{length} bytes (limit {params.max_record_bytes})")
                         if length > params.max_record_bytes else (None, ""))
        end = body + length + mark
        yield WarcEntry(path, offset, end - offset, 0, False, headers, length, error, detail)
        offset = end


#: bytes of a file (or of its first gzip member, inflated) that :func:`not_a_warc` looks at
_SNIFF_BYTES = 65536


def not_a_warc(path: str | Path) -> str | None:
    """Why the file at ``path`` is not a WARC file, or None when it reads as one: a record starts it (after any
    blank lines), or starts a line within its first 64 KiB (a file whose first record is damaged), in the
    file or in the first gzip member that inflates. A WARC cut or damaged further on is a WARC, and the scan reads
    what it can of it; a file with no record near its start (another format, an empty file, a crawl's JSONL
    given by mistake) has none to read. Raises OSError when the file cannot be read."""
    with open(path, "rb") as handle:
        start = handle.read(_SNIFF_BYTES)
    if not start:
        return "the file is empty"
    if start[:3] == _GZIP_MAGIC:
        # the first gzip member that inflates (a damaged first member leaves the others readable)
        at, inflated = 0, b""
        while at >= 0 and not inflated:
            try:
                inflated = zlib.decompressobj(wbits=31).decompress(start[at:], _SNIFF_BYTES)
            except zlib.error:
                pass
            at = start.find(_GZIP_MAGIC, at + 1)
        if not inflated:
            return "no gzip member near its start inflates"
        start = inflated
    elif start[:2] == b"\x1f\x8b" or start[:4] == b"\x28\xb5\x2f\xfd":
        return "it is compressed in a way WARC files are not (they are gzip per record, or not compressed)"
    if start.lstrip(b"\r\n").startswith(_WARC_MAGIC) or b"\nWARC/1." in start:
        return None
    if any(byte < 9 or 13 < byte < 32 for byte in start[:512]):
        return "it starts with binary data, not a WARC record"
    shown = start[:24].decode("utf-8", "replace")
    return f"it does not start with a WARC record (it starts with {shown!r})"


def scan_warc(path: str | Path, params: WarcReadParams | None = None) -> Iterator[WarcEntry]:
    """Every record of the WARC file at ``path``, in order (see the module doc). Raises OSError when the
    file cannot be opened."""
    params = params or WarcReadParams()
    name = str(path)
    with open(name, "rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(0)
        start = handle.read(3)
        handle.seek(0)
        scan = _scan_gzip if start == _GZIP_MAGIC else _scan_plain
        yield from scan(name, handle, size, params)


def read_record(entry: WarcEntry, params: WarcReadParams | None = None) -> WarcRecord:
    """The record the scan found at ``entry`` (headers and whole block). Raises ValueError when it cannot
    be read any more (the file changed), OSError when the file cannot."""
    params = params or WarcReadParams()
    with open(entry.file, "rb") as handle:
        if entry.gzip:
            keep = params.max_record_bytes + params.max_header_bytes + 8
            data, _total, _consumed, error = _inflate_member(handle, entry.offset, keep, params.chunk_bytes)
            if error is not None:
                raise ValueError(error)
        else:
            handle.seek(entry.offset)
            data = bytearray(handle.read(entry.length))
    head = _split_head(data, entry.inner, params.max_header_bytes)
    headers = parse_warc_headers(bytes(data[entry.inner : head[0]])) if head else None
    length = _content_length(headers) if headers else None
    if headers is None or length is None:
        raise ValueError("warc_bad_header")
    return WarcRecord(headers, bytes(data[head[1] : head[1] + length]))
