"""``source="auto"`` on an ordinary multi-template news site: never worse than the extractor alone.

The fixture is a small news/blog site in the WordPress block-editor style: 31 article pages (five
staff authors, one guest) plus listings, shared chrome (masthead, menu, "Most read", newsletter box, footer) and, on every
article, per-page furniture the cross-page model cannot call template because it differs from page to
page: an unlabelled author bio box (``wp-block-group``, the same per author: on 6 of 31 pages, and on one
page only for the guest), a "More from <author>" list of other articles' titles, and comments under the neutral class ``responses``. On such
a site the page's region is wider than the extracted article for bad reasons only; the records' text must
not carry that furniture any more than the extractor's own text does.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from boilerstrip.boilerplate import BoilerplateParams, page_block_hashes, region_blocks
from boilerstrip.finishing import finish_records
from boilerstrip.demo.server import SiteServer
from conftest import run_crawl

AUTHORS = [
    ("Ines Halvorsen", "ines", "Ines Halvorsen covers transport and the city budget. She joined the Courier from "
     "a trade paper in Leeds and still cycles to every council meeting."),
    ("Tomasz Wylie", "tomasz", "Tomasz Wylie writes about schools, youth sport and the county's libraries. "
     "Before journalism he taught geography for nine years."),
    ("Ruth Okafor", "ruth", "Ruth Okafor is the Courier's health reporter. She has covered the hospital trust "
     "since the merger and hosts the paper's weekly podcast."),
    ("Callum Pryce", "callum", "Callum Pryce reports on business and the high street. He grew up above his "
     "parents' bakery on Mill Lane, which is still open."),
    ("Maren Lindqvist", "maren", "Maren Lindqvist edits the culture pages and reviews theatre, music and the "
     "occasional restaurant when the budget allows."),
]
GUEST = ("Alba Moreno", "alba", "Alba Moreno is a marine biologist at the estuary trust and an occasional "
         "contributor; her book on the river's seals comes out in autumn.")
SECTIONS = ["news", "city", "schools", "health", "business", "culture"]
TOPICS = ["bridge", "ferry", "library", "clinic", "bakery", "theatre", "tram", "harbour", "market", "school",
          "bus depot", "swimming pool", "allotment", "museum", "car park", "cycle lane", "orchard", "cinema",
          "fire station", "post office", "arcade", "brewery", "boatyard", "mill", "chapel", "canal", "stadium",
          "playground", "quay", "bandstand"]
VERBS = ["reopens", "faces closure", "gets funding", "splits opinion", "wins award", "moves site"]
WORDS = ("council residents plan budget week spring summer members officers report meeting proposal vote "
         "traffic river evening morning survey petition contract builders delay cost estimate families "
         "volunteers neighbours station repairs lease tenants deadline hearing planning committee objection "
         "scheme funding grant review consultation opening visitors season shift staff nurses pupils teachers "
         "parents shops owners customers rent harbour ferry timetable").split()
NAMES = ["Priya", "Owen", "Lucy", "Dev", "Martha", "Sam", "Aled", "Greta", "Joe", "Nadia", "Hugh", "Zara"]


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng, rng.randint(9, 16)) for _ in range(sentences))


def _articles() -> list[dict]:
    rng = random.Random(7)
    out = []
    for i, topic in enumerate(TOPICS + ["lido"]):
        # the last article is by a guest author: their bio box is on that one page only
        name, slug, bio = AUTHORS[i % len(AUTHORS)] if i < len(TOPICS) else GUEST
        title = f"The {topic} {VERBS[i % len(VERBS)]} after a long {rng.choice(['winter', 'summer', 'year', 'row'])}"
        out.append({
            "i": i, "title": title, "path": f"/2026/{1 + i % 9:02d}/{topic.replace(' ', '-')}-{i}/",
            "section": SECTIONS[i % len(SECTIONS)], "author": name, "author_slug": slug, "bio": bio,
            "date": f"{1 + i % 27} {['March', 'April', 'May'][i % 3]} 2026",
            "paragraphs": [_paragraph(rng, rng.randint(3, 5)) for _ in range(rng.randint(4, 7))],
            "comments": [(rng.choice(NAMES), _paragraph(rng, rng.randint(1, 3))) for _ in range(rng.randint(2, 5))],
        })
    for a in out:  # "More from <author>": that author's other articles, a different list on every page
        a["more"] = [b for b in out if b["author"] == a["author"] and b is not a][:4]
    return out


CHROME_TOP = """<div class="topbar"><p>Support local journalism: subscribe from £1 a week.</p></div>
<header class="masthead"><p class="logo"><a href="/">The Riverside Courier</a></p>
<nav class="menu"><ul>{menu}</ul></nav></header>"""
CHROME_BOTTOM = """<aside class="col-side"><h3>Most read</h3><ul>{popular}</ul></aside>
</div>
<footer class="site-footer"><p>The Riverside Courier, 12 Quay Street. Registered in England no. 04411220.</p>
<p><a href="/about/">About us</a> · <a href="/contact/">Contact</a> · <a href="/privacy/">Privacy</a></p></footer>
</body></html>"""
NEWSLETTER = ('<div class="wp-block-group"><h3>The Courier in your inbox</h3><p>Every weekday at 7am: the '
              'stories that matter on both banks of the river, free.</p></div>')


def _page(title: str, main: str, articles: list[dict]) -> str:
    menu = "".join(f'<li><a href="/{s}/">{s.title()}</a></li>' for s in SECTIONS)
    popular = "".join(f'<li><a href="{a["path"]}">{a["title"]}</a></li>' for a in articles[:5])
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title} | The Riverside Courier"
            f"</title></head><body>{CHROME_TOP.format(menu=menu)}<div class=\"wrap\"><main class=\"col-main\">"
            f"{main}</main>{CHROME_BOTTOM.format(popular=popular)}")


def _article_html(a: dict, articles: list[dict]) -> str:
    body = "".join(f"<p>{p}</p>" for p in a["paragraphs"])
    more = "".join(f'<li><a href="{b["path"]}">{b["title"]}</a></li>' for b in a["more"])
    comments = "".join(f'<div class="response"><p class="who"><b>{who}</b> · {2 + n} days ago</p><p>{text}</p></div>'
                       for n, (who, text) in enumerate(a["comments"]))
    main = (f'<article class="post"><h1>{a["title"]}</h1>'
            f'<p class="meta">By <a href="/author/{a["author_slug"]}/">{a["author"]}</a> · {a["date"]}</p>'
            f'<div class="post-body">{body}</div>'
            f'<div class="wp-block-group has-background"><img src="/img/{a["author_slug"]}.jpg" alt="">'
            f'<p><strong>{a["author"]}</strong></p><p>{a["bio"]}</p></div>'
            f'<div class="wp-block-group"><h3>More from {a["author"]}</h3><ul class="wp-block-list">{more}</ul></div>'
            f'{NEWSLETTER}</article>'
            f'<div class="responses"><h3>{len(a["comments"])} responses</h3>{comments}</div>')
    return _page(a["title"], main, articles)


def _listing_html(title: str, items: list[dict], articles: list[dict]) -> str:
    cards = "".join(f'<div class="entry"><h2><a href="{a["path"]}">{a["title"]}</a></h2>'
                    f'<p>{a["paragraphs"][0][:160]}…</p></div>' for a in items)
    return _page(title, f"<h1>{title}</h1>{cards}", articles)


def write_news_site(root: Path) -> list[dict]:
    """Write the site under ``root``; return its articles (with their furniture)."""
    articles = _articles()
    pages = {"/": _listing_html("Latest", articles[:10], articles)}
    for s in SECTIONS:
        pages[f"/{s}/"] = _listing_html(s.title(), [a for a in articles if a["section"] == s], articles)
    for a in articles:
        pages[a["path"]] = _article_html(a, articles)
    for path, html in pages.items():
        target = root / path.strip("/") / "index.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    return articles


def furniture_lines(article: dict) -> list[str]:
    """The per-page furniture of an article page, one text line each."""
    return ([article["bio"], f"More from {article['author']}", f"{len(article['comments'])} responses"]
            + [b["title"] for b in article["more"]] + [text for _, text in article["comments"]])


def _lines(text: str) -> set[str]:
    return {line.strip() for line in (text or "").split("\n") if line.strip()}


def _raw_records(root: Path, articles: list[dict], base: str = "http://courier.test") -> list[dict]:
    """The records the crawl's pipelines make (extraction, then the page's blocks and region)."""
    from boilerstrip.extraction import extract

    records = []
    for path in sorted(root.rglob("index.html")):
        url = base + "/" + path.parent.relative_to(root).as_posix().strip(".") + "/"
        url = url.replace("//", "/").replace(":/", "://")
        html = path.read_text(encoding="utf-8")
        result = extract(html, url=url)
        records.append({"url": url, "title": result.title, "text": result.text, "method": result.method,
                        "attempts": [a.__dict__.copy() for a in result.attempts],
                        "blocks": [{"kind": b.kind, "text": b.text} for b in result.blocks],
                        "page_block_hashes": page_block_hashes(html), "page_blocks": region_blocks(html)})
    return records


def _extractor_lines(record: dict) -> set[str]:
    """The extractor's own text (every one of its blocks, template included): the baseline."""
    return _lines("\n".join(b["text"] for b in record["blocks"]))


@pytest.fixture(scope="module")
def news_site(tmp_path_factory) -> tuple[Path, list[dict]]:
    root = tmp_path_factory.mktemp("news-site")
    return root, write_news_site(root)


def _check_not_worse(records: list[dict], articles: list[dict]) -> int:
    """Every article record: its text holds all the article's paragraphs, and no furniture line that the
    extractor's own text does not hold. Returns the number of article records checked."""
    by_path = {a["path"]: a for a in articles}
    checked = 0
    for record in records:
        path = "/" + record["url"].split("/", 3)[3]
        article = by_path.get(path)
        if article is None:
            continue
        checked += 1
        lines = _lines(record["text"])
        assert set(article["paragraphs"]) <= lines, record["url"]
        worse = [f for f in furniture_lines(article) if f in lines and f not in _extractor_lines(record)]
        assert not worse, (record["url"], record.get("flags"), worse[:3])
    return checked


def test_auto_is_not_worse_than_the_extractor_on_a_news_site(news_site) -> None:
    root, articles = news_site
    out = finish_records(_raw_records(root, articles), params=BoilerplateParams()).records
    assert _check_not_worse(out, articles) == len(articles)
    # the site's chrome is template and gone; the headline leads every article's text
    for record in out:
        assert "Support local journalism" not in record["text"]
        assert "The Courier in your inbox" not in _lines(record["text"])
    for record in out:
        article = {a["path"]: a for a in articles}.get("/" + record["url"].split("/", 3)[3])
        if article is not None:
            assert record["text"].startswith(article["title"] + "\n"), record["url"]


def test_the_region_still_wins_where_the_extractor_kept_one_part_of_the_article(news_site) -> None:
    """The tightened rule still takes a wider region when the extra text is the article's own prose: here
    the extractor is given only the first half of each article's paragraphs."""
    root, articles = news_site
    records = _raw_records(root, articles)
    by_path = {a["path"]: a for a in articles}
    halves = {}
    for record in records:
        article = by_path.get("/" + record["url"].split("/", 3)[3])
        if article is not None:
            paras = article["paragraphs"]
            record["blocks"] = [{"kind": "p", "text": t} for t in paras[: len(paras) // 2]]
            halves[record["url"]] = paras
    out = {r["url"]: r for r in finish_records(records, params=BoilerplateParams()).records}
    assert len(halves) == len(articles)
    for url, paras in halves.items():
        assert "boilerplate_source_page_wider_region" in out[url]["flags"], url
        lines = _lines(out[url]["text"])
        assert set(paras) <= lines, url
        # ...and takes the article, not the furniture after it
        article = by_path["/" + url.split("/", 3)[3]]
        assert not set(furniture_lines(article)) & lines, url


def test_a_crawl_of_the_news_site_is_not_worse_than_its_extractor(news_site, tmp_path) -> None:
    root, articles = news_site
    with SiteServer(root=root) as server:
        proc, records = run_crawl(server.url + "/", out=tmp_path / "news.jsonl", args=["--profile", "test"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _check_not_worse(records, articles) == len(articles)
