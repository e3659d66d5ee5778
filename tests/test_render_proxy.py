"""The browser's address-checking proxy (boilerstrip/downloadhandlers/_browser_proxy.py) on loopback sockets."""

from __future__ import annotations

import asyncio

from boilerstrip.downloadhandlers._browser_proxy import AddressCheckingProxy
from boilerstrip.rendering.scope import PrivateAllowlist, connect_refusal
from conftest import Reply


async def _ask(proxy_port: int, head: bytes, *, whole: bool = True) -> bytes:
    """The proxy's answer: up to the end of the connection (``whole``), else the first chunk (a tunnel)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(head)
    await writer.drain()
    data = await asyncio.wait_for(reader.read() if whole else reader.read(65536), timeout=10)
    writer.close()
    return data


def test_proxy_forwards_allowed_origins_and_refuses_others_with_the_reason(serve) -> None:
    allowed_site = serve(routes={"/page": Reply(body=b"hello from the site", headers=(("Content-Type", "text/plain"),))})
    internal = serve(routes={"/secret": Reply(body=b"internal")})
    allowlist = PrivateAllowlist(start_urls=[allowed_site.url + "/"])
    refused: list[tuple[str, str]] = []

    async def scenario() -> tuple[bytes, bytes, bytes, bytes]:
        proxy = AddressCheckingProxy(lambda h, p, a: connect_refusal(h, p, a, allowlist),
                                     on_refused=lambda reason, where: refused.append((reason, where)))
        await proxy.start()
        try:
            ok = await _ask(proxy.port, f"GET {allowed_site.url}/page HTTP/1.1\r\nHost: 127.0.0.1:{allowed_site.port}\r\n"
                                        "Connection: keep-alive\r\n\r\n".encode())
            denied = await _ask(proxy.port, f"GET {internal.url}/secret HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            by_name = await _ask(proxy.port, f"CONNECT localhost:{internal.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            tunnel = await _ask(proxy.port, f"CONNECT 127.0.0.1:{allowed_site.port} HTTP/1.1\r\n\r\n".encode(), whole=False)
            return ok, denied, by_name, tunnel
        finally:
            await proxy.close()

    ok, denied, by_name, tunnel = asyncio.run(scenario())
    assert ok.startswith(b"HTTP/1.") and b" 200 " in ok.split(b"\r\n")[0] and ok.endswith(b"hello from the site")
    assert b"\r\nConnection: close\r\n" in ok  # one request per proxied connection
    assert denied.startswith(b"HTTP/1.1 403") and b"X-Boilerstrip-Refused: loopback" in denied
    assert by_name.startswith(b"HTTP/1.1 403") and b"loopback" in by_name  # a name, checked on its address
    assert tunnel.startswith(b"HTTP/1.1 200 Connection Established")
    assert internal.requested_paths() == []
    assert [r for r, _ in refused] == ["loopback", "loopback"]
