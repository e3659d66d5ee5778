"""Small scripted sites for crawl/politeness tests (served by SiteServer routes)."""

from __future__ import annotations

from pathlib import Path

from _incrawl import run_cli
from boilerstrip.demo.server import Reply

HTML = (("Content-Type", "text/html; charset=utf-8"),)


def page(title: str, links: list[str] = (), body: str = "") -> Reply:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    text = body or f"This is the page called {title}. It has a few sentences of ordinary prose for the crawler."
    html = (
        f"<!DOCTYPE html><html lang='en'><head><title>{title}</title></head><body>"
        f"<nav><ul>{anchors}</ul></nav><main><h1>{title}</h1><p>{text}</p></main></body></html>"
    )
    return Reply(200, html.encode(), HTML)


def robots(text: str, status: int = 200) -> Reply:
    return Reply(status, text.encode(), (("Content-Type", "text/plain"),))


def small_site(n: int = 4, robots_reply: Reply | None = None, extra: dict | None = None) -> dict:
    """'/' linking to /p1../pn; robots.txt as given (404 when None); no sitemap."""
    links = [f"/p{i}" for i in range(1, n + 1)]
    routes: dict = {"/": page("home", links)}
    for href in links:
        routes[href] = page(href.strip("/"), ["/"])
    if robots_reply is not None:
        routes["/robots.txt"] = robots_reply
    routes.update(extra or {})
    return routes


def page_hits(server, exclude=("/robots.txt", "/sitemap.xml", "/.well-known/tdmrep.json")) -> list:
    return [entry for entry in server.log if entry.path not in exclude]


#: fast crawl arguments for these scripted sites: the test profile, and no browser (these tests measure
#: crawling and politeness; rendering has its own tests, and skipping the browser saves seconds per run)
FAST = ["--profile", "test", "-s", "BOILERSTRIP_RENDER_MODE=never"]


def crawl_with_state(url: str, out: Path, state: Path, *extra: str, timeout: float = 600) -> tuple[int, str]:
    """``boilerstrip crawl URL -o OUT --state STATE`` with the FAST arguments and only errors logged (the
    CLI's code path, in a forked child: ``_incrawl.run_cli``): (exit status, stderr)."""
    done = run_cli(["crawl", url, "-o", out, "--state", state, *FAST, "--log-level", "ERROR", *extra], timeout=timeout)
    return done.returncode, done.stderr
