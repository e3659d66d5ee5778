"""boilerstrip.safety.compression: bounded decoding that says whether the stream was whole (pure)."""

from __future__ import annotations

import gzip
import zlib

import pytest

from boilerstrip.safety.compression import DecompressedTooLarge, decode_content

BODY = b"<p>hello world</p>" * 20_000


def _deflate_raw(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoded", "encodings"),
    [
        (gzip.compress(BODY, mtime=0), ["gzip"]),
        (gzip.compress(BODY[:100], mtime=0) + gzip.compress(BODY[100:], mtime=0), ["x-gzip"]),  # two gzip members
        (gzip.compress(BODY, mtime=0) + b"\0\0\0", ["gzip"]),  # NUL padding after the stream
        (zlib.compress(BODY), ["deflate"]),
        (_deflate_raw(BODY), ["deflate"]),
        (gzip.compress(zlib.compress(BODY), mtime=0), ["deflate, gzip"]),  # applied in order, undone in reverse
    ],
)
def test_whole_streams_decode(encoded: bytes, encodings: list[str]) -> None:
    decoded = decode_content(encoded, encodings, max_size=16 << 20)
    assert decoded.body == BODY and decoded.problem is None and decoded.remaining == ()


def test_truncated_and_corrupt_streams_are_named() -> None:
    data = gzip.compress(BODY)
    cut = decode_content(data[: len(data) // 2], ["gzip"])
    assert cut.problem == "truncated" and cut.encoding == "gzip" and 0 < len(cut.body) < len(BODY)
    bad_crc = data[:-8] + bytes(4) + data[-4:]
    assert decode_content(bad_crc, ["gzip"]).problem == "corrupt"
    assert decode_content(zlib.compress(BODY)[:-10], ["deflate"]).problem == "truncated"
    assert decode_content(b"\x1f\x8b\x08garbage", ["gzip"]).problem == "corrupt"


def test_bomb_stops_at_the_cap_and_unknown_encodings_stay() -> None:
    with pytest.raises(DecompressedTooLarge) as info:
        decode_content(gzip.compress(bytes(8 << 20)), ["gzip"], max_size=1 << 20)
    assert info.value.decompressed <= (1 << 20) + 64 * 1024
    assert decode_content(b"abc", ["compress"]).remaining == ("compress",)
    assert decode_content(b"", ["gzip"]).problem is None  # an empty 204/304 body
