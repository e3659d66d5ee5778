"""Decode a ``Content-Encoding`` body with a size cap, and say whether the stream was whole.

Pure (zlib, brotli, zstd; no Scrapy). Two differences from Scrapy's own decoders, which the crawl needs:

- **Bounded memory.** Output is kept as chunks of at most ``CHUNK_BYTES`` and the cap is checked *before*
  a chunk is kept, so a decompression bomb costs at most ``max_size`` plus one chunk, all freed when it is
  refused (Scrapy's ``gunzip`` grows one ``BytesIO`` by doubling and copies it once more at the end; forty
  stopped bombs left ~550 MiB of peak RSS behind).
- **Whole or not.** A gzip stream cut short (a truncated body with a correct Content-Length) or with a
  wrong CRC is reported (``truncated`` / ``corrupt``) instead of being kept silently as a whole page.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["CHUNK_BYTES", "DECODERS", "Decoded", "DecompressedTooLarge", "decode_content"]

#: output is produced and kept in pieces of this size (64 KiB, as Scrapy's decoders): the cap overshoots by
#: at most one piece
CHUNK_BYTES = 64 * 1024
_GZIP_MAGIC = b"\x1f\x8b"


class DecompressedTooLarge(ValueError):
    """The decoded body grew past ``max_size`` (a decompression bomb): nothing of it is kept."""

    def __init__(self, decompressed: int, max_size: int) -> None:
        super().__init__(f"{decompressed} bytes decompressed so far, the cap is {max_size}")
        self.decompressed = decompressed
        self.max_size = max_size


@dataclass(frozen=True)
class Decoded:
    body: bytes
    #: None for a whole stream; "truncated" (ended early) or "corrupt" (bad data or CRC) otherwise, with
    #: ``body`` the part decoded before the problem
    problem: str | None = None
    #: the encoding whose stream had the problem ("gzip", "deflate", "br", "zstd")
    encoding: str | None = None
    #: Content-Encoding values left undecoded (unknown to us), outermost last
    remaining: tuple[str, ...] = ()


class _Sink:
    """The decoded body so far, in one bytearray: past the allocator's mmap threshold it grows by mremap
    and goes back to the system whole when freed (a list of 64 KiB pieces fragments the heap instead)."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.size = 0
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.size += len(chunk)
        if self.max_size and self.size > self.max_size:
            self.data = bytearray()
            raise DecompressedTooLarge(self.size, self.max_size)
        self.data += chunk

    def value(self) -> bytes:
        data = bytes(self.data)
        self.data = bytearray()
        return data


def _zlib_stream(decompressor: zlib._Decompress, data: bytes, sink: _Sink) -> None:
    """Feed ``data`` through ``decompressor`` in bounded pieces (raises zlib.error on bad data).

    The input goes in slices of CHUNK_BYTES: handing zlib the whole body with an output limit makes it copy
    the unread rest (``unconsumed_tail``) on every call, a megabyte per 64 KiB of output for a bomb.
    """
    view = memoryview(data)
    for start in range(0, max(len(view), 1), CHUNK_BYTES):
        buffer: bytes | memoryview = view[start : start + CHUNK_BYTES]
        while True:
            chunk = decompressor.decompress(buffer, CHUNK_BYTES)
            sink.add(chunk)
            if decompressor.eof:
                return
            buffer = decompressor.unconsumed_tail
            if not buffer and not chunk:
                break
        if decompressor.eof:
            return


def _gunzip(data: bytes, sink: _Sink) -> str | None:
    """All gzip members of ``data`` (RFC 1952 allows several), CRC and length checked by zlib."""
    while True:
        decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            _zlib_stream(decompressor, data, sink)
        except zlib.error:
            return "corrupt"
        if not decompressor.eof:
            return "truncated"
        data = decompressor.unused_data
        if not data.startswith(_GZIP_MAGIC):
            return None  # the end, or padding after the last member (servers add NULs): ignored as browsers do


def _inflate(data: bytes, sink: _Sink) -> str | None:
    """zlib-wrapped deflate, or raw deflate as some Microsoft servers send."""
    decompressor = zlib.decompressobj()
    try:
        _zlib_stream(decompressor, data, sink)
    except zlib.error:
        if sink.size:
            return "corrupt"
        decompressor = zlib.decompressobj(wbits=-zlib.MAX_WBITS)
        try:
            _zlib_stream(decompressor, data, sink)
        except zlib.error:
            return "corrupt"
    return None if decompressor.eof else "truncated"


def _unbrotli(data: bytes, sink: _Sink) -> str | None:
    try:
        import brotli
    except ImportError:  # pragma: no cover -- a Scrapy dependency
        import brotlicffi as brotli  # type: ignore[no-redef]
    decompressor = brotli.Decompressor()
    try:
        chunk = decompressor.process(data, output_buffer_limit=CHUNK_BYTES)
        sink.add(chunk)
        while not decompressor.is_finished():
            chunk = decompressor.process(b"", output_buffer_limit=CHUNK_BYTES)
            if not chunk:
                break
            sink.add(chunk)
    except brotli.error:
        return "corrupt"
    return None if decompressor.is_finished() else "truncated"


def _unzstd(data: bytes, sink: _Sink) -> str | None:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14
    except ImportError:
        from backports import zstd  # a Scrapy dependency before 3.14
    decompressor = zstd.ZstdDecompressor()
    buffer = data
    try:
        while not decompressor.eof:
            chunk = decompressor.decompress(buffer, max_length=CHUNK_BYTES)
            sink.add(chunk)
            buffer = b""
            if not chunk and decompressor.needs_input:
                break
    except zstd.ZstdError:
        return "corrupt"
    return None if decompressor.eof else "truncated"


#: Content-Encoding value -> decoder; the Accept-Encoding the crawl sends lists exactly these
DECODERS: dict[str, Callable[[bytes, _Sink], str | None]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _inflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}


def decode_content(body: bytes, encodings: Iterable[str], max_size: int = 0) -> Decoded:
    """Undo ``encodings`` (the Content-Encoding values in the order applied) on ``body``.

    Raises :class:`DecompressedTooLarge` past ``max_size`` bytes (0: no cap). Stops at the first encoding
    it does not know (the rest stay in ``remaining``) or at the first problem.
    """
    pending = [e.strip().lower() for value in encodings for e in value.split(",") if e.strip()]
    while pending and pending[-1] == "identity":
        pending.pop()
    if not body:
        return Decoded(b"", None, None, ())  # a 204/304 or an empty error page that names an encoding
    while pending:
        name = pending[-1]
        decoder = DECODERS.get(name)
        if decoder is None:
            break
        pending.pop()
        sink = _Sink(max_size)
        problem = decoder(body, sink)
        body = sink.value()
        if problem is not None:
            return Decoded(body, problem, "gzip" if name == "x-gzip" else name, tuple(pending))
    return Decoded(body, None, None, tuple(pending))
