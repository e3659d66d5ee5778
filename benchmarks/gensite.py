"""A generated site of N pages sharing one template, served on loopback: for growth measurements.

Page ``/p/K.html`` (K = 0..N-1) has the site's template (menu, sidebar, footer), a title and three
paragraphs of text unique to K, and links to its children ``10K+1 .. 10K+10`` (a tree, so a crawl from
``/p/0.html`` finds every page). Pages are made on request, nothing is written to disk.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["GeneratedSite", "page_html"]

_WORDS = ("garden bench river lantern copper orchard meadow harbour violet maple quarry thistle cobalt "
          "willow ember saffron granite hollow falcon juniper").split()


def _words(seed: int, count: int) -> str:
    out = []
    x = seed * 2654435761 % (2 ** 32) or 1
    for _ in range(count):
        x = (1103515245 * x + 12345) % (2 ** 31)
        out.append(_WORDS[x % len(_WORDS)] + str(x % 97))
    return " ".join(out)


def page_html(k: int, pages: int) -> str:
    children = "".join(f'<li><a href="/p/{c}.html">Page {c}</a></li>' for c in range(10 * k + 1, min(10 * k + 11, pages)))
    paragraphs = "".join(f"<p>{_words(k * 7 + i, 60)}.</p>" for i in range(3))
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Page {k} | Generated</title></head>"
            "<body><header><nav><a href='/p/0.html'>Home</a> <a href='/p/1.html'>Docs</a> <a href='/p/2.html'>Blog</a>"
            "</nav></header><aside><h3>Popular</h3><ul><li>How the garden grows</li><li>River walks</li></ul></aside>"
            f"<main><article><h1>Page {k}</h1>{paragraphs}<ul>{children}</ul></article></main>"
            "<footer><p>Generated site, all rights reserved. Contact us for help.</p></footer></body></html>")


class GeneratedSite:
    def __init__(self, pages: int) -> None:
        self.pages = pages
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?", 1)[0]
                body, status, ctype = b"not found", 404, "text/plain"
                if path == "/robots.txt":
                    body, status = b"User-agent: *\nAllow: /\n", 200
                elif path.startswith("/p/") and path.endswith(".html"):
                    try:
                        k = int(path[3:-5])
                    except ValueError:
                        k = -1
                    if 0 <= k < site.pages:
                        body, status, ctype = page_html(k, site.pages).encode(), 200, "text/html; charset=utf-8"
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "GeneratedSite":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
