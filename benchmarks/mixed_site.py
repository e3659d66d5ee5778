"""A mixed test site: server-rendered articles and JS-only pages, written to a folder and served on loopback.

``build_mixed_site(root, pages=200)`` writes about half server-rendered articles (real-looking prose,
shared chrome: header, nav, cookie banner, related-posts sidebar, footer, Google-Analytics-style snippet
and a same-host ``site.js``) and half JS-only pages whose article is built in the browser. The JS shells
vary the way real ones do:

- ``cra``: empty ``<div id="root">`` + "You need to enable JavaScript to run this app." + inline JSON state;
- ``vue``: empty ``<div id="app">`` + ``fetch()`` of a same-host ``/api/posts/<n>.json``;
- ``next``: empty ``<div id="__next">`` + ``__NEXT_DATA__`` JSON, rendered after a ``setTimeout``;
- ``loading``: a "Loading..." placeholder, content fetched then injected after a delay;
- ``noscript``: server-rendered chrome, a "Please enable JavaScript" notice, content from the API.

About a third of the JS pages inject their content after a 300-1500 ms delay. Every page carries one
unique sentence (``Page.sentence``), the recall check: a crawl recovered a page's text when its record's
text contains that sentence. Pages are linked from listing pages (``/list/<k>.html``) and ``/sitemap.xml``.
Deterministic for a given seed. Used by ``benchmarks/render_benchmark.py`` and ``tests/test_render_*``.
"""

from __future__ import annotations

import html
import json
import random
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Page", "MixedSite", "build_mixed_site", "SHELLS"]

SHELLS = ("cra", "vue", "next", "loading", "noscript")

_SUBJECTS = """the harbour authority|a small team of volunteers|the regional council|our field engineer|the night
ferry crew|a retired schoolteacher|the museum's archivist|the cooperative bakery|two visiting geologists|the
village choir|a local beekeeper|the railway historians|the river survey|the library's reading group|a
freelance cartographer|the allotment society""".replace("\n", " ").split("|")
_VERBS = """documented|repaired|measured|argued about|photographed|rebuilt|catalogued|mapped|restored|questioned
|tested|recorded|reorganised|celebrated|inspected|described""".replace("\n", "").split("|")
_OBJECTS = """the old stone bridge over the estuary|a collection of hand-drawn tide tables|the leaking roof of the
grain store|every lighthouse lamp along the northern coast|the winter timetable of the mountain bus|a box of
letters found under the floorboards|the orchard's oldest pear trees|the acoustics of the market hall|the
flood marks on the church wall|a forgotten footpath through the marsh|the copper pipes of the public baths|the
migration of swifts above the quarry|the clockwork of the town hall tower|a century of rainfall records|the
ferry's brass engine plates|the dry-stone walls of the upper pasture""".replace("\n", " ").split("|")
_CLAUSES = """after the spring storms had passed|before the autumn market opened|while the tide was unusually
low|during a week of heavy fog|with help from the neighbouring parish|using notes kept since the nineteen
fifties|despite a shortage of funds|in time for the summer festival|for the first time in forty years|as
part of a wider conservation plan|with surprising and careful precision|under the watch of curious
children""".replace("\n", " ").split("|")
_TOPICS = "Harbour Coast Orchard Railway Archive Bridge Market Weather River Village Museum Quarry".split()

_CHROME_HEAD = """<header class="site-header"><a class="logo" href="/"><img src="/img/logo.png" alt="Tidewater Notes"
width="120" height="40"></a><nav class="main-nav"><ul><li><a href="/">Home</a></li><li><a href="/list/1.html">All
stories</a></li><li><a href="/about.html">About</a></li><li><a href="/list/2.html">Archive</a></li><li><a
href="/contact.html">Contact</a></li></ul></nav></header>
<div class="cookie-banner" id="cookie-consent">We use cookies to count visits and remember your preferences.
<button>Accept all</button> <button>Manage settings</button></div>"""
_CHROME_FOOT = """<footer class="site-footer"><p>Tidewater Notes is written by volunteers on the north coast.
Stories may be shared with attribution. Subscribe to the newsletter for a monthly digest of new pieces.</p>
<ul><li><a href="/about.html">About us</a></li><li><a href="/contact.html">Contact</a></li><li><a
href="/privacy.html">Privacy policy</a></li></ul><p>&copy; 2026 Tidewater Notes</p></footer>"""
_ANALYTICS = """<script async src="https://www.googletagmanager.com/gtag/js?id=G-TIDEWATER1"></script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}
gtag('js', new Date()); gtag('config', 'G-TIDEWATER1');</script>"""
_SITE_JS = """document.addEventListener('click', function (e) {
  var t = e.target; if (t && t.matches && t.matches('.cookie-banner button')) { t.parentNode.style.display = 'none'; }
});
"""
#: The JS app: reads the article from inline state, __NEXT_DATA__ or the API, then renders it (maybe late).
_APP_JS = """(function () {
  function render(mount, post) {
    var out = '<article class="post"><h1>' + post.title + '</h1><p class="byline">By ' + post.author + '</p>';
    for (var i = 0; i < post.paragraphs.length; i++) { out += '<p>' + post.paragraphs[i] + '</p>'; }
    out += '<img src="/img/hero-' + post.id + '.jpg" alt=""><ul class="related">';
    for (var j = 0; j < post.related.length; j++) {
      out += '<li><a href="' + post.related[j].href + '">' + post.related[j].title + '</a></li>';
    }
    mount.innerHTML = out + '</ul></article>';
    document.title = post.title + ' - Tidewater Notes';
  }
  function start() {
    var cfg = window.__APP_CONFIG__ || {};
    var mount = document.getElementById(cfg.mount);
    var later = function (post) { setTimeout(function () { render(mount, post); }, cfg.delay || 0); };
    if (cfg.source === 'inline') { later(window.__INITIAL_STATE__.post); }
    else if (cfg.source === 'next') { later(JSON.parse(document.getElementById('__NEXT_DATA__').textContent).props.pageProps.post); }
    else { fetch(cfg.api).then(function (r) { return r.json(); }).then(later); }
  }
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', start); } else { start(); }
})();
"""


@dataclass(frozen=True)
class Page:
    n: int
    path: str  # URL path, e.g. /posts/p007.html
    kind: str  # "static" | "js"
    shell: str  # "server" for static pages, else one of SHELLS
    delay_ms: int
    title: str
    sentence: str  # unique to this page; the recall check


@dataclass(frozen=True)
class MixedSite:
    root: Path
    pages: tuple[Page, ...]
    listing_paths: tuple[str, ...]

    @property
    def js_pages(self) -> list[Page]:
        return [p for p in self.pages if p.kind == "js"]

    @property
    def static_pages(self) -> list[Page]:
        return [p for p in self.pages if p.kind == "static"]

    def page_for_path(self, path: str) -> Page | None:
        for page in self.pages:
            if page.path == path:
                return page
        return None


def _sentence(rng: random.Random) -> str:
    return (
        f"{rng.choice(_SUBJECTS).capitalize()} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
        f"{rng.choice(_CLAUSES)}."
    )


def _paragraphs(rng: random.Random, unique: str, count: int) -> list[str]:
    paras = [" ".join(_sentence(rng) for _ in range(rng.randint(3, 5))) for _ in range(count)]
    where = rng.randrange(len(paras))
    paras[where] = paras[where] + " " + unique
    return paras


def _page_html(title: str, head_extra: str, body: str, chrome: bool) -> str:
    top = _CHROME_HEAD if chrome else ""
    bottom = _CHROME_FOOT if chrome else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<link rel="stylesheet" href="/css/site.css">{head_extra}</head>\n<body>\n{top}\n{body}\n{bottom}\n'
        f'</body></html>\n'
    )


def build_mixed_site(
    root: str | Path,
    pages: int = 200,
    *,
    js_share: float = 0.5,
    delayed_share: float = 1 / 3,
    seed: int = 5,
    offsite_script: str | None = None,
    extra_pages: dict[str, str] | None = None,
) -> MixedSite:
    """Write the site into ``root``. ``offsite_script``: a URL on another host that every JS page also
    loads (a test points it at a second server to prove the browser never fetches it).
    ``extra_pages``: path -> HTML of additional pages, linked from the first listing page."""
    root = Path(root)
    rng = random.Random(seed)
    for sub in ("posts", "api/posts", "list", "js", "css", "img"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    # Which pages are JS-only: spread evenly (each pair of neighbours holds one when js_share is 0.5), so
    # no long run of shells makes a host look all-JS to the per-host learner.
    kinds = []
    acc = 0.0
    for i in range(pages):
        acc += js_share
        if acc >= 1 - 1e-9:
            acc -= 1
            kinds.append("js")
        else:
            kinds.append("static")
    for i in range(0, pages - 1, 2):
        if rng.random() < 0.5:
            kinds[i], kinds[i + 1] = kinds[i + 1], kinds[i]

    meta: list[Page] = []
    js_count = 0
    for i, kind in enumerate(kinds):
        n = i + 1
        topic = rng.choice(_TOPICS)
        title = f"{topic} notes {n}: {rng.choice(_OBJECTS)}".capitalize()
        sentence = f"Archive reference TW-{n:04d}-{rng.randrange(16**6):06x} was filed by {rng.choice(_SUBJECTS)}."
        shell, delay = "server", 0
        if kind == "js":
            shell = SHELLS[js_count % len(SHELLS)]
            if rng.random() < delayed_share:
                delay = rng.randrange(300, 1501, 100)
            js_count += 1
        meta.append(Page(n, f"/posts/p{n:03d}.html", kind, shell, delay, title, sentence))

    for page in meta:
        prng = random.Random(seed * 100_003 + page.n)
        short = page.kind == "static" and page.n % 10 == 3  # a tenth of the articles are short notes
        paras = _paragraphs(prng, page.sentence, 2 if short else prng.randint(4, 7))
        related = [meta[(page.n + k * 7) % len(meta)] for k in (1, 2, 3)]
        post = {
            "id": page.n,
            "title": html.escape(page.title),
            "author": prng.choice(["Mara Quinn", "Tomas Reyes", "Ada Okafor", "Ines Laurent", "Kofi Mensah"]),
            "paragraphs": [html.escape(p) for p in paras],
            "related": [{"href": r.path, "title": html.escape(r.title)} for r in related],
        }
        if page.kind == "static":
            body = (
                '<div class="layout"><main><article class="post">'
                f'<h1>{post["title"]}</h1><p class="byline">By {post["author"]}</p>'
                + "".join(f"<p>{p}</p>" for p in post["paragraphs"])
                + '</article></main><aside class="sidebar"><h2>Related posts</h2><ul>'
                + "".join(f'<li><a href="{r["href"]}">{r["title"]}</a></li>' for r in post["related"])
                + "</ul></aside></div>"
            )
            head = _ANALYTICS + '<script src="/js/site.js" defer></script>'
            text = _page_html(page.title, head, body, chrome=True)
        else:
            (root / "api/posts" / f"{page.n:03d}.json").write_text(json.dumps(post), encoding="utf-8")
            api = f"/api/posts/{page.n:03d}.json"
            cfg = {"delay": page.delay_ms, "api": api}
            offsite = f'<script src="{offsite_script}"></script>' if offsite_script else ""
            app = '<script src="/js/app.js" defer></script>' + offsite
            chrome = page.shell in ("noscript", "vue")
            if page.shell == "cra":
                cfg.update(mount="root", source="inline")
                state = json.dumps({"post": post}).replace("</", "<\\/")
                head = f"<script>window.__APP_CONFIG__ = {json.dumps(cfg)}; window.__INITIAL_STATE__ = {state};</script>" + app
                body = '<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>'
            elif page.shell == "vue":
                cfg.update(mount="app", source="api")
                head = f"<script>window.__APP_CONFIG__ = {json.dumps(cfg)};</script>" + app
                body = '<div id="app"></div>'
            elif page.shell == "next":
                cfg.update(mount="__next", source="next")
                data = json.dumps({"props": {"pageProps": {"post": post}}, "page": "/posts/[id]"}).replace("</", "<\\/")
                head = f"<script>window.__APP_CONFIG__ = {json.dumps(cfg)};</script>" + app
                body = f'<div id="__next"></div><script id="__NEXT_DATA__" type="application/json">{data}</script>'
            elif page.shell == "loading":
                cfg.update(mount="content", source="api")
                head = f"<script>window.__APP_CONFIG__ = {json.dumps(cfg)};</script>" + app
                body = '<div id="content"><div class="spinner"></div><p>Loading...</p></div>'
            else:  # noscript
                cfg.update(mount="main-content", source="api")
                head = f"<script>window.__APP_CONFIG__ = {json.dumps(cfg)};</script>" + app
                body = (
                    '<noscript><p>Please enable JavaScript to read this story.</p></noscript>'
                    '<main id="main-content"></main>'
                )
            text = _page_html(page.title, head, body, chrome=chrome)
        (root / page.path.lstrip("/")).write_text(text, encoding="utf-8")

    per_list = 20
    listing_paths = []
    extra_links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in (extra_pages or {}))
    for k in range(0, len(meta), per_list):
        idx = k // per_list + 1
        chunk = meta[k : k + per_list]
        items = "".join(f'<li><a href="{p.path}">{html.escape(p.title)}</a></li>' for p in chunk)
        nxt = f'<a rel="next" href="/list/{idx + 1}.html">Older stories</a>' if k + per_list < len(meta) else ""
        body = (
            f'<main><h1>All stories, page {idx}</h1><p>Every story we have published, newest first. '
            f'Browse the list below or use the archive links to find older notes from the coast.</p>'
            f'<ul class="story-list">{items}{extra_links if idx == 1 else ""}</ul>{nxt}</main>'
        )
        (root / f"list/{idx}.html").write_text(_page_html(f"All stories, page {idx}", "", body, True), encoding="utf-8")
        listing_paths.append(f"/list/{idx}.html")
    index_links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in listing_paths)
    (root / "index.html").write_text(
        _page_html("Tidewater Notes", "", f"<main><h1>Tidewater Notes</h1><p>Stories from the north "
                   f"coast, written by the people who live there.</p><ul>{index_links}</ul></main>", True),
        encoding="utf-8",
    )
    for path, text in (extra_pages or {}).items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (root / "js/app.js").write_text(_APP_JS, encoding="utf-8")
    (root / "js/site.js").write_text(_SITE_JS, encoding="utf-8")
    (root / "css/site.css").write_text("body{font-family:serif;max-width:60em;margin:auto}\n", encoding="utf-8")
    (root / "img/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\nSitemap: /sitemap.xml\n", encoding="utf-8")
    urls = "".join(f"<url><loc>{p.path}</loc></url>" for p in meta)
    (root / "sitemap.xml").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>',
        encoding="utf-8",
    )
    return MixedSite(root, tuple(meta), tuple(listing_paths))


if __name__ == "__main__":  # python benchmarks/mixed_site.py OUT_DIR [PAGES]
    import sys

    site = build_mixed_site(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)
    print(f"{len(site.pages)} pages ({len(site.js_pages)} JS-only) in {site.root}")
