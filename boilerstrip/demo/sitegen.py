"""Generate the bundled demo site (``boilerstrip/demo/site/``): a small, realistic community-garden blog.

Run ``python -m boilerstrip.demo.sitegen`` to rewrite the folder (the output is deterministic and
committed). What it contains, on purpose:

- 23 HTML pages (21 crawlable) behind one template: a shared header + nav, a footer, a sidebar, a cookie banner;
- 12 articles with multi-paragraph prose and a "Related posts" block repeated on every article;
- most pages use semantic markup (``<main>``, ``<article>``); 3 articles are div-soup (no semantic tags);
- listing pages (home, archive pages 1-2, three category pages), about, contact, a press page that only
  the sitemap links to;
- ``/drafts/`` (2 pages) linked from the sidebar but disallowed by ``robots.txt``;
- ``robots.txt`` with a ``Sitemap:`` line to a sitemap index (``sitemap_index.xml`` -> ``sitemap-pages.xml``
  + ``sitemap-posts.xml.gz``) and a plain ``/sitemap.xml``;
- URL variants of one article (tracking parameters, a fragment, a ``?ref=`` variant whose page carries
  ``rel=canonical``), and a link to a PDF (skipped as not HTML).
"""

from __future__ import annotations

import gzip
import html
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ARTICLES", "build_site", "SITE_DIR", "expected_pages", "DISALLOWED_PREFIX"]

SITE_DIR = Path(__file__).resolve().parent / "site"
SITE_NAME = "Northfield Community Garden"
DISALLOWED_PREFIX = "/drafts/"


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    category: str  # slug of the category page
    date: str
    author: str
    paragraphs: tuple[str, ...]
    soup: bool = False  # div-soup markup (no <main>/<article>)


CATEGORIES = {
    "soil": "Soil and compost",
    "growing": "Growing",
    "community": "Community",
}

ARTICLES: tuple[Article, ...] = (
    Article("hot-composting-in-winter", "Hot composting through a northern winter", "soil", "2026-01-12", "Maren Ostby", (
        "Most of our members stop turning the compost bays in November and let them sit until March. This year we tried to keep one bay hot through the cold months, and the results were better than we expected: the core stayed above 45 degrees Celsius for nine weeks.",
        "The trick was mass. A bay that is less than a cubic metre loses heat faster than the microbes can make it, so we combined two half-full bays into one and insulated the sides with straw bales. We fed it kitchen scraps from the Thursday drop-off and a bucket of fresh horse manure every ten days.",
        "Moisture mattered more than we thought. When the pile dried out in a dry cold spell in January, the temperature fell by fifteen degrees in four days. Two watering cans of lukewarm water and a turn brought it back within a day.",
        "By March the bay had shrunk by half and the finished compost at the bottom was dark, crumbly and smelled of forest floor. We will run two hot bays next winter and keep a log of temperatures on the shed door.",
    )),
    Article("reading-a-soil-test", "How to read a soil test report", "soil", "2026-02-03", "Idris Kalu", (
        "Every spring a few plot holders send samples to the county extension lab, and every spring the reports cause confusion. The numbers are not hard to read once you know which three lines matter most for a vegetable bed.",
        "Start with pH. Most vegetables are happiest between 6.2 and 6.8. Our beds on the east side of the site test around 5.9 because of the old conifer hedge, so those plots get a light dressing of garden lime every other autumn.",
        "Next look at organic matter. Anything above five percent means the bed holds water and nutrients well. The raised beds we built in 2023 started at three percent and are now above six after three seasons of leaf mould and compost.",
        "Finally, phosphorus and potassium are usually fine in an established garden; it is nitrogen that runs short, and most labs do not report it because it changes week to week. Plant a green manure after your early crops and you will rarely need to buy fertiliser at all.",
    )),
    Article("leaf-mould-cages", "Building leaf mould cages from pallets", "soil", "2026-03-18", "Maren Ostby", (
        "Every October the park department drops two trailer loads of leaves at our gate. Leaf mould takes longer than compost, but it is almost free and it is the best seed-sowing medium we know.",
        "We built four cages from reclaimed pallets and chicken wire in a single Saturday work party. Each cage holds about a cubic metre of wet leaves, and we stack them tight, water them and leave them alone for eighteen months.",
        "Shredding the leaves with a mower first halves the time. Oak and beech break down slowest; lime and maple are ready after a year. Pine needles go in a separate cage because they make an acidic mould the blueberry bed loves.",
    ), soup=True),
    Article("saving-tomato-seed", "Saving tomato seed the fermenting way", "growing", "2026-08-22", "Lucia Ferreira", (
        "Our seed library now holds eleven tomato varieties that have been grown on this site for at least five years. Saving your own seed is easy, and fermenting it first gives cleaner, healthier seed.",
        "Scoop the seeds and gel from a fully ripe fruit into a jar, add a splash of water and leave it on a warm windowsill for three days. A layer of mould will form on top; that is what you want, because the fermentation dissolves the gel coat that stops the seed germinating inside the fruit.",
        "Pour off the mould and the floating seeds, rinse the good seeds that sank in a sieve, and spread them on a ceramic plate to dry. Paper towels stick to the seeds. Once they rattle, label them with the variety, year and plot number and bring them to the library box in the shed.",
        "Tomatoes rarely cross-pollinate, so seed from open-pollinated varieties comes true. Seed from hybrid varieties will not, and we ask members not to add it to the library.",
    )),
    Article("no-dig-beds", "Three seasons of no-dig beds", "growing", "2026-04-07", "Idris Kalu", (
        "Three years ago we split the long bed by the greenhouse in two: one half dug every autumn as it always had been, the other covered with cardboard and fifteen centimetres of compost and never dug again.",
        "In the first season the dug half yielded slightly more potatoes and the no-dig half slightly more salad. By the third season the no-dig half out-yielded the dug half on every crop we weighed, and it needed roughly a third of the weeding hours.",
        "The soil life is the visible difference. Turn over a trowel of the no-dig bed and you find worms in every handful; the dug bed has a crust after rain and fewer worms. We are converting two more beds this autumn and will keep weighing the harvests.",
    )),
    Article("succession-sowing-salad", "Succession sowing for salad all summer", "growing", "2026-05-02", "Lucia Ferreira", (
        "The classic mistake with salad is sowing a whole packet in April and having forty lettuces bolt at once in June. Small sowings every two weeks give a steady supply from May to October.",
        "We sow into module trays in the greenhouse rather than straight into the ground. Each sowing is one tray of twenty cells: lettuce, rocket, mustards and a few spring onions. When the previous tray goes out, the next one is sown.",
        "From midsummer, switch to heat-tolerant varieties and sow in the shade of the greenhouse, because lettuce seed will not germinate above about 25 degrees. In late August the oriental greens take over and carry on well into autumn.",
    ), soup=True),
    Article("growing-garlic", "Planting garlic in October", "growing", "2026-10-05", "Tomasz Wierzbicki", (
        "Garlic is the easiest crop we grow and the one members most often plant at the wrong time. It needs a cold spell to split into cloves, so it goes in between late September and early November.",
        "Buy seed garlic or keep the biggest heads from your own harvest; supermarket bulbs are often treated to stop sprouting. Break the head into cloves just before planting, push each clove in pointed end up, ten centimetres deep and fifteen apart.",
        "Weed carefully in spring, because garlic hates competition, and stop watering in June so the bulbs firm up. Lift when a third of the leaves have turned yellow and dry the heads in the shed rafters for a month.",
    )),
    Article("water-butts", "Catching every drop: our water butt network", "community", "2026-06-14", "Tomasz Wierzbicki", (
        "The garden has no mains water at the lower end, and carrying cans from the tap by the gate used to be the most hated job of the summer. Last year we connected every roof on the site to a water butt.",
        "The shed, the greenhouse and the two shelters now feed fourteen butts, linked with overflow pipes so that the upper ones fill the lower ones. In an average summer they hold about six thousand litres, which covers the lower plots for all but the longest dry spells.",
        "The work party that built the network took three weekends and cost less than the previous year's water bill. A grant from the parish council paid for the diverters and the stands.",
    )),
    Article("open-day-recap", "Open day recap: 300 visitors and a lot of soup", "community", "2026-09-20", "Maren Ostby", (
        "Saturday's open day was the busiest we have had. About three hundred people came through the gate, including two school classes and a group from the care home on Linden Road.",
        "The most popular stall was the seed library, which gave away more than four hundred packets, followed closely by the pumpkin soup made from plot 14's harvest. The children's bug hunt found a slow worm under the compost bays, which caused great excitement.",
        "Eleven people signed up for the waiting list and two local businesses offered to sponsor tools. Thank you to the thirty volunteers who set up, cooked, guided tours and cleared up afterwards.",
    )),
    Article("new-members-guide", "A guide for new plot holders", "community", "2026-02-27", "Idris Kalu", (
        "Welcome to the garden. This guide answers the questions new members ask most often in their first season.",
        "Your plot is yours to plan as you like, but please keep paths clear and mown, and keep tall crops like sweetcorn and runner beans to the north side so you do not shade your neighbours. Shared tools live in the shed; the code is on the welcome sheet in your pack.",
        "Work parties are on the first Saturday of every month from ten until one. Everyone is asked to come to at least four a year. They are how the compost gets turned, the hedges get cut and the paths stay usable.",
        "If you are struggling with your plot, tell someone. Life happens, and we would much rather share a plot or help out for a season than lose a member.",
    )),
    Article("slug-patrol", "Slug patrol without pellets", "growing", "2026-06-30", "Lucia Ferreira", (
        "The garden has been pellet-free since 2024, and the slugs have not won. A combination of habits keeps the damage to a level most members accept.",
        "Evening patrols with a torch after rain remove more slugs than any trap. The frogs in the wildlife pond do the rest, and the pond has more spawn every spring. Beer traps work but also drown beetles that eat slug eggs, so we use them only around seedlings.",
        "Grow plants on to a decent size in modules before planting out. A lettuce with ten leaves survives a night of nibbling that would finish a seedling with two.",
    ), soup=True),
    Article("pruning-apples", "Winter pruning the old apple trees", "growing", "2026-01-25", "Tomasz Wierzbicki", (
        "The four apple trees by the gate are older than the garden itself. They had not been pruned for years when we took over the site, and they cropped heavily only every other year.",
        "We are restoring them slowly, removing no more than a quarter of the canopy each winter. First the dead, diseased and crossing branches; then some of the tall upright water shoots that grow from the big cuts of the past.",
        "Three winters in, the trees are lower, more open, and they cropped evenly in both of the last two years. The prunings go to the shredder and then to the paths.",
    )),
)

DRAFTS = (
    ("plot-fee-proposal", "Draft: plot fee proposal for 2027", "The committee is considering a rise in the annual plot fee. This draft is not yet approved and must not be published."),
    ("committee-notes", "Draft: committee notes, November", "Notes from the November committee meeting, for members only until they are approved at the next meeting."),
)

ABOUT = (
    "Northfield Community Garden was founded in 2019 on a derelict corner of the old railway sidings. Today it has forty-two plots, a shared greenhouse, a seed library and a wildlife pond, looked after by about ninety members.",
    "The garden is run by an elected committee of volunteers. We are a registered charity and our accounts are published every year at the annual general meeting in March.",
    "Anyone who lives in the parish can join the waiting list for a plot, and everyone is welcome at open days and work parties whether or not they have a plot.",
)
CONTACT = (
    "The best way to reach us is the garden's email address, which is read by the membership secretary every few days. For urgent matters about the site, such as a broken gate or a water leak, call the number on the noticeboard by the gate.",
    "We do not take plot bookings by phone. To join the waiting list, fill in the form in the shed or bring it to a work party.",
)
PRESS = (
    "Journalists and local groups are welcome to visit. We can arrange a guided tour on most Saturday mornings; please give us two weeks' notice.",
    "Photographs of the garden may be used with credit to Northfield Community Garden. Please do not photograph members or their plots without asking first.",
)


# -- template ---------------------------------------------------------------------------------------
def _head(title: str, canonical: str | None = None, description: str | None = None) -> str:
    extra = f'\n  <link rel="canonical" href="{canonical}">' if canonical else ""
    if description:
        extra += f'\n  <meta name="description" content="{html.escape(description)}">'
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{html.escape(title)} | {SITE_NAME}</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">{extra}
  <link rel="stylesheet" href="/static/site.css">
</head>"""


COOKIE_BANNER = """<div id="cookie-banner" class="cookie-consent">
  <p>We use cookies to remember your preferences and to count visitors. By continuing to browse you agree
  to our use of cookies. <a href="/about/#privacy">Privacy policy</a></p>
  <button type="button">Accept all cookies</button> <button type="button">Manage preferences</button>
</div>"""

NAV = """<nav class="site-nav"><ul>
    <li><a href="/">Home</a></li>
    <li><a href="/archive/">Archive</a></li>
    <li><a href="/category/soil/">Soil and compost</a></li>
    <li><a href="/category/growing/">Growing</a></li>
    <li><a href="/category/community/">Community</a></li>
    <li><a href="/about/">About</a></li>
    <li><a href="/contact/">Contact</a></li>
  </ul></nav>"""


def _header(semantic: bool) -> str:
    tag = "header" if semantic else 'div id="header"'
    end = "header" if semantic else "div"
    nav = NAV if semantic else NAV.replace("<nav", '<div').replace("</nav>", "</div>")
    return f"""<{tag} class="site-header">
  <a class="logo" href="/">{SITE_NAME}</a>
  <p class="tagline">Growing food and neighbours since 2019</p>
  {nav}
</{end}>"""


SIDEBAR_LINKS = """<h3>Popular</h3>
  <ul>
    <li><a href="/posts/no-dig-beds.html?utm_source=sidebar&amp;utm_medium=web">Three seasons of no-dig beds</a></li>
    <li><a href="/posts/hot-composting-in-winter.html#comments">Hot composting through a northern winter</a></li>
    <li><a href="/posts/saving-tomato-seed.html?ref=sidebar">Saving tomato seed</a></li>
  </ul>
  <h3>Members</h3>
  <ul>
    <li><a href="/drafts/plot-fee-proposal.html">Plot fee proposal (draft)</a></li>
    <li><a href="/drafts/committee-notes.html">Committee notes (draft)</a></li>
    <li><a href="/files/planting-calendar.pdf">Planting calendar (PDF)</a></li>
  </ul>
  <h3>Newsletter</h3>
  <p>Get the monthly newsletter: seasonal jobs, work party dates and the seed library list.</p>"""


def _sidebar(semantic: bool) -> str:
    if semantic:
        return f'<aside class="sidebar">\n  {SIDEBAR_LINKS}\n</aside>'
    return f'<div class="sidebar" id="sidebar">\n  {SIDEBAR_LINKS}\n</div>'


def _footer(semantic: bool) -> str:
    tag = "footer" if semantic else 'div id="footer"'
    end = "footer" if semantic else "div"
    return f"""<{tag} class="site-footer">
  <p>&copy; 2026 {SITE_NAME}, registered charity no. 1187654. Railway Sidings, Northfield.</p>
  <p><a href="/about/">About us</a> &middot; <a href="/contact/">Contact</a> &middot;
     <a href="/archive/">All posts</a> &middot; <a href="https://example.org/parish-council">Parish council</a></p>
</{end}>"""


def _related(article: Article) -> str:
    others = [a for a in ARTICLES if a.slug != article.slug][:4]
    items = "\n".join(f'    <li><a href="/posts/{a.slug}.html">{html.escape(a.title)}</a></li>' for a in others)
    return f"""<div class="related-posts">
  <h2>Related posts</h2>
  <ul>
{items}
  </ul>
</div>"""


def _page(title: str, body: str, semantic: bool = True, canonical: str | None = None,
          description: str | None = None) -> str:
    main_open, main_close = ('<main id="content">', "</main>") if semantic else ('<div id="content" class="col-main">', "</div>")
    return f"""{_head(title, canonical, description)}
<body>
{COOKIE_BANNER}
{_header(semantic)}
<div class="wrap">
{main_open}
{body}
{main_close}
{_sidebar(semantic)}
</div>
{_footer(semantic)}
<script src="/static/site.js"></script>
</body>
</html>
"""


def _paragraphs(paragraphs: tuple[str, ...]) -> str:
    return "\n".join(f"  <p>{html.escape(p)}</p>" for p in paragraphs)


def _article_page(article: Article) -> str:
    byline = f"{html.escape(article.author)}, {article.date} in <a href=\"/category/{article.category}/\">{CATEGORIES[article.category]}</a>"
    if article.soup:
        body = f"""<div class="post">
  <div class="post-title"><h1>{html.escape(article.title)}</h1></div>
  <div class="byline">{byline}</div>
  <div class="post-body">
{_paragraphs(article.paragraphs)}
  </div>
</div>
{_related(article)}"""
    else:
        body = f"""<article class="post">
  <h1>{html.escape(article.title)}</h1>
  <p class="byline">By {byline}</p>
{_paragraphs(article.paragraphs)}
</article>
{_related(article)}"""
    return _page(article.title, body, semantic=not article.soup, canonical=f"/posts/{article.slug}.html",
                 description=article.paragraphs[0][:150])


def _listing(title: str, articles: list[Article], intro: str, pager: str = "") -> str:
    items = "\n".join(
        f"""  <li class="teaser"><h2><a href="/posts/{a.slug}.html">{html.escape(a.title)}</a></h2>
    <p>{html.escape(a.paragraphs[0])}</p></li>"""
        for a in articles
    )
    return _page(title, f"<h1>{html.escape(title)}</h1>\n<p>{html.escape(intro)}</p>\n<ul class=\"teasers\">\n{items}\n</ul>\n{pager}")


def _text_page(title: str, paragraphs: tuple[str, ...]) -> str:
    return _page(title, f"<h1>{html.escape(title)}</h1>\n{_paragraphs(paragraphs)}")


def site_files() -> dict[str, bytes]:
    """Path (relative, "/"-separated) -> content of every file of the demo site."""
    files: dict[str, str | bytes] = {}
    newest = sorted(ARTICLES, key=lambda a: a.date, reverse=True)
    files["index.html"] = _listing(
        "Welcome to the garden", newest[:5],
        "News, how-tos and notes from the plots of Northfield Community Garden.",
        '<p><a href="/archive/">All posts</a> &middot; <a href="/posts/no-dig-beds.html?utm_campaign=home#results">Our no-dig trial</a></p>',
    )
    files["archive/index.html"] = _listing("Archive", newest[:6], "Every post, newest first.", '<p class="pager"><a href="/archive/page-2.html">Older posts</a></p>')
    files["archive/page-2.html"] = _listing("Archive, page 2", newest[6:], "Older posts.", '<p class="pager"><a href="/archive/">Newer posts</a></p>')
    for slug, name in CATEGORIES.items():
        files[f"category/{slug}/index.html"] = _listing(name, [a for a in newest if a.category == slug], f"Posts filed under {name.lower()}.")
    for article in ARTICLES:
        files[f"posts/{article.slug}.html"] = _article_page(article)
    files["about/index.html"] = _text_page("About the garden", ABOUT)
    files["contact/index.html"] = _text_page("Contact", CONTACT)
    files["press/index.html"] = _text_page("Press and visits", PRESS)  # only in the sitemap
    for slug, title, text in DRAFTS:
        files[f"drafts/{slug}.html"] = _text_page(title, (text,))
    files["static/site.css"] = "body{font-family:sans-serif;max-width:70em;margin:auto}.wrap{display:flex}main,#content{flex:3}aside,.sidebar{flex:1}\n"
    files["static/site.js"] = "document.querySelectorAll('#cookie-banner button').forEach(b=>b.onclick=()=>b.parentNode.remove());\n"
    files["files/planting-calendar.pdf"] = b"%PDF-1.4\n% demo placeholder, not a real calendar\n%%EOF\n"
    files["robots.txt"] = (
        "# Northfield Community Garden\nUser-agent: *\nDisallow: /drafts/\n\n"
        "Sitemap: /sitemap_index.xml\n"
    )
    page_urls = ["/", "/archive/", "/archive/page-2.html", "/about/", "/contact/", "/press/"] + [
        f"/category/{slug}/" for slug in CATEGORIES
    ]
    post_urls = [f"/posts/{a.slug}.html" for a in ARTICLES]
    files["sitemap-pages.xml"] = _urlset(page_urls)
    files["sitemap-posts.xml.gz"] = gzip.compress(_urlset(post_urls).encode("utf-8"), mtime=0)
    files["sitemap_index.xml"] = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "  <sitemap><loc>/sitemap-pages.xml</loc></sitemap>\n  <sitemap><loc>/sitemap-posts.xml.gz</loc></sitemap>\n"
        "</sitemapindex>\n"
    )
    files["sitemap.xml"] = _urlset(page_urls + post_urls)
    return {path: (content.encode("utf-8") if isinstance(content, str) else content) for path, content in files.items()}


def _urlset(paths: list[str]) -> str:
    # Relative <loc> values are not allowed by sitemaps.org, but the site is served on a random port:
    # the spider resolves them against the sitemap's own URL, as browsers resolve links.
    body = "\n".join(f"  <url><loc>{p}</loc></url>" for p in paths)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{body}\n</urlset>\n'


def expected_pages() -> set[str]:
    """Paths of the HTML pages a correct crawl records (allowed by robots.txt, one per page)."""
    return {
        "/" + path.removesuffix("index.html")
        for path in site_files()
        if path.endswith(".html") and not ("/" + path).startswith(DISALLOWED_PREFIX)
    }


def build_site(target: Path = SITE_DIR) -> Path:
    if target.exists():
        shutil.rmtree(target)
    for path, content in site_files().items():
        dest = target / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(content)
    return target


if __name__ == "__main__":
    print(build_site())
