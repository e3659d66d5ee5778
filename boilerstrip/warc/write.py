"""Write WARC/1.1 files: one gzip member per record, files rotated at a size limit, crash-safe.

A file is written as ``NAME.warc.gz.open`` and renamed to ``NAME.warc.gz`` when it is closed (Heritrix's
convention): a file still named ``.open`` was cut by a crash. Each record is one ``write`` of one whole
gzip member; a write that fails (a full disk) is cut back to the last whole record and the writer stops.
:func:`recover_open_files` makes the ``.open`` files a crash left whole again (cut to their last whole
record, renamed), and says what it cut.
"""

from __future__ import annotations

import base64
import hashlib
import os
import uuid
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .params import WarcParams

__all__ = ["WarcWriter", "Recovered", "recover_open_files", "http_request_block", "http_response_block",
           "sha1_digest", "warc_date", "OPEN_SUFFIX"]

OPEN_SUFFIX = ".open"
#: HTTP headers that describe the wire, not the payload as recorded (see :func:`http_response_block`)
_WIRE_HEADERS = ("transfer-encoding",)


def warc_date(when: datetime | None = None) -> str:
    when = when or datetime.now(timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha1_digest(data: bytes) -> str:
    """``sha1:BASE32``, the digest form WARC writers use."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _header_lines(headers: Iterable[tuple[str, str]]) -> bytes:
    out = []
    for name, value in headers:
        value = " ".join(str(value).split())  # no CR/LF can end a header early
        out.append(f"{name}: {value}\r\n".encode("utf-8", errors="replace"))
    return b"".join(out)


def http_request_block(method: str, url_path: str, headers: Iterable[tuple[str, str]], body: bytes = b"",
                       protocol: str = "HTTP/1.1") -> bytes:
    return f"{method} {url_path or '/'} {protocol}\r\n".encode("latin-1", errors="replace") + \
        _header_lines(headers) + b"\r\n" + body


def http_response_block(status: int, headers: Iterable[tuple[str, str]], body: bytes, protocol: str = "HTTP/1.1",
                        reason: str = "") -> bytes:
    """The HTTP response as recorded. The body is the payload as the client got it after the transfer
    coding was undone (Scrapy, like most clients, de-chunks on the way in): ``Transfer-Encoding`` is kept
    as ``X-Boilerstrip-Orig-Transfer-Encoding`` and ``Content-Length`` states the recorded length, so the
    record parses; ``Content-Encoding`` stays, with the encoded bytes as they came."""
    kept: list[tuple[str, str]] = []
    for name, value in headers:
        lower = name.lower()
        if lower in _WIRE_HEADERS:
            kept.append((f"X-Boilerstrip-Orig-{name}", value))
        elif lower == "content-length":
            continue
        else:
            kept.append((name, value))
    kept.append(("Content-Length", str(len(body))))
    line = f"{protocol} {int(status)} {reason or ''}".rstrip() + "\r\n"
    return line.encode("latin-1", errors="replace") + _header_lines(kept) + b"\r\n" + body


@dataclass(frozen=True)
class Recovered:
    """A ``.open`` file a crash left: cut to ``kept_bytes`` (``cut_bytes`` of a torn record dropped)."""

    path: str
    kept_bytes: int
    cut_bytes: int
    records: int


def _whole_members_end(path: Path) -> tuple[int, int]:
    """(the end offset of the last whole gzip member of ``path``, the whole members before it)."""
    end = records = 0
    with open(path, "rb") as handle:
        data = handle.read()
    position = 0
    while position < len(data):
        inflater = zlib.decompressobj(wbits=31)
        try:
            inflater.decompress(data[position:])
        except zlib.error:
            break
        if not inflater.eof:
            break
        position = len(data) - len(inflater.unused_data)
        end, records = position, records + 1
    return end, records


def recover_open_files(folder: str | Path) -> list[Recovered]:
    """Every ``*.warc.gz.open`` in ``folder`` (a crashed run's) cut to its last whole record and renamed to
    ``*.warc.gz``; what was done, one entry a file."""
    done: list[Recovered] = []
    for path in sorted(Path(folder).glob(f"*.warc.gz{OPEN_SUFFIX}")):
        size = path.stat().st_size
        end, records = _whole_members_end(path)
        if end != size:
            with open(path, "r+b") as handle:
                handle.truncate(end)
        os.replace(path, path.with_name(path.name[: -len(OPEN_SUFFIX)]))
        done.append(Recovered(str(path), end, size - end, records))
    return done


class WarcWriter:
    """Writes records into ``params.dir``; a new file once the current one reaches ``max_file_bytes``."""

    def __init__(self, params: WarcParams, software: str = "boilerstrip") -> None:
        if not params.dir:
            raise ValueError("WarcWriter needs a folder (params.dir)")
        self.params = params
        self.software = software
        self.folder = Path(params.dir)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._stamp = datetime.now(timezone.utc).strftime("%Y%m%d%H%M%S")
        self._serial = 0
        self._handle = None
        self._path: Path | None = None
        self._size = 0
        self.files: list[str] = []  # closed files, in order
        self.records = 0
        self.bytes = 0
        #: the first write error; nothing more is written after it
        self.failed: OSError | None = None

    # -- files ---------------------------------------------------------------------------------------------
    def _open_next(self) -> None:
        self._close_current()
        while True:
            self._serial += 1
            # the process id keeps apart the files of workers of one crawl writing into one folder
            name = f"{self.params.prefix}-{self._stamp}-{os.getpid()}-{self._serial:05d}.warc.gz"
            final = self.folder / name
            if not final.exists() and not (self.folder / (name + OPEN_SUFFIX)).exists():
                break
        self._path = self.folder / (name + OPEN_SUFFIX)
        self._handle = open(self._path, "xb", buffering=0)  # noqa: SIM115 (closed in _close_current)
        self._size = 0
        info = (f"software: {self.software}\r\nformat: WARC File Format 1.1\r\n"
                "conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
                "description: HTTP response bodies as the client received them after the transfer coding "
                "(chunked) was undone; see X-Boilerstrip-Orig-* headers\r\n").encode("utf-8")
        self._write_member(self._record_bytes("warcinfo", None, info, "application/warc-fields",
                                              [("WARC-Filename", name)]))

    def _close_current(self) -> None:
        if self._handle is None:
            return
        handle, path = self._handle, self._path
        self._handle = self._path = None
        try:
            os.fsync(handle.fileno())
        except OSError:
            pass
        handle.close()
        assert path is not None
        final = path.with_name(path.name[: -len(OPEN_SUFFIX)])
        os.replace(path, final)
        self.files.append(str(final))

    def close(self) -> None:
        self._close_current()

    @property
    def current_file(self) -> str | None:
        return str(self._path) if self._path is not None else None

    # -- records -------------------------------------------------------------------------------------------
    def _record_bytes(self, kind: str, url: str | None, block: bytes, content_type: str | None,
                      extra: Iterable[tuple[str, str]] = (), record_id: str | None = None) -> bytes:
        headers = [("WARC-Type", kind), ("WARC-Record-ID", record_id or f"<urn:uuid:{uuid.uuid4()}>"),
                   ("WARC-Date", warc_date())]
        if url is not None:
            headers.append(("WARC-Target-URI", url))
        headers.extend(extra)
        headers.append(("WARC-Block-Digest", sha1_digest(block)))
        if content_type:
            headers.append(("Content-Type", content_type))
        headers.append(("Content-Length", str(len(block))))
        return b"WARC/1.1\r\n" + _header_lines(headers) + b"\r\n" + block + b"\r\n\r\n"

    def _write_member(self, record: bytes) -> None:
        member = zlib.compressobj(6, zlib.DEFLATED, 31)
        data = member.compress(record) + member.flush()
        assert self._handle is not None
        try:
            view = memoryview(data)
            while view:
                view = view[self._handle.write(view):]
        except OSError as exc:
            self.failed = exc
            try:  # the file keeps whole records only (shrinking works on a full disk)
                self._handle.truncate(self._size)
            except OSError:
                pass
            raise
        self._size += len(data)
        self.bytes += len(data)

    def write(self, kind: str, url: str | None, block: bytes, content_type: str | None,
              extra: Iterable[tuple[str, str]] = (), rotate: bool = True) -> str:
        """Write one record; returns its WARC-Record-ID. Raises OSError (then ``failed`` is set).
        ``rotate=False``: into the current file whatever its size (a request beside its response)."""
        if self.failed is not None:
            raise self.failed
        if self._handle is None or (rotate and self._size >= self.params.max_file_bytes):
            self._open_next()
        record_id = f"<urn:uuid:{uuid.uuid4()}>"
        self._write_member(self._record_bytes(kind, url, block, content_type, extra, record_id))
        self.records += 1
        return record_id

    def write_exchange(self, url: str, request_block: bytes, response_block: bytes, payload: bytes,
                       revisit_of: tuple[str, str] | None = None, ip: str | None = None) -> str:
        """A response (or, with ``revisit_of`` = (the earlier capture's URI, its date), a ``revisit`` with
        the server-not-modified profile) and the request that got it; returns the response's record ID."""
        extra: list[tuple[str, str]] = [("WARC-IP-Address", ip)] if ip else []
        if revisit_of is None:
            extra.append(("WARC-Payload-Digest", sha1_digest(payload)))
            response_id = self.write("response", url, response_block, "application/http;msgtype=response", extra)
        else:
            extra += [("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/server-not-modified"),
                      ("WARC-Refers-To-Target-URI", revisit_of[0])]
            if revisit_of[1]:
                extra.append(("WARC-Refers-To-Date", revisit_of[1]))
            response_id = self.write("revisit", url, response_block, "application/http;msgtype=response", extra)
        self.write("request", url, request_block, "application/http;msgtype=request",
                   [("WARC-Concurrent-To", response_id)], rotate=False)
        return response_id
