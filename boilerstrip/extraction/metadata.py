"""Page metadata the page itself declares: <title>, meta tags, <link rel=canonical>, <html lang>, JSON-LD."""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urljoin

from lxml import etree

_ARTICLE_TYPES = frozenset(
    "article newsarticle blogposting reportagenewsarticle analysisnewsarticle opinionnewsarticle "
    "reviewnewsarticle backgroundnewsarticle techarticle scholarlyarticle report webpage review "
    "socialmediaposting liveblogposting medicalwebpage".split()
)
#: Bounds on JSON-LD walking (objects visited per script, objects kept per page): a hostile page cannot
#: make metadata reading slow.
_MAX_JSONLD_NODES = 1000
_MAX_JSONLD_ITEMS = 50
_METADATA_TAGS = ("meta", "link", "title", "script")


@dataclass(frozen=True)
class Metadata:
    title: str | None = None
    description: str | None = None
    canonical_url: str | None = None
    lang: str | None = None
    author: str | None = None
    published: str | None = None
    modified: str | None = None
    #: JSON-LD articleBody, when declared: a signal for locating the content container.
    jsonld_body: str | None = None


def _clean(value) -> str | None:
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())  # WHITESPACE_RE.sub(" ", value).strip(), without a regex: both split on str.isspace
    return value or None


def _iter_jsonld(data):
    stack = [data]
    seen = 0
    while stack and seen < _MAX_JSONLD_NODES:
        seen += 1
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            yield item
            graph = item.get("@graph")
            if isinstance(graph, list):
                stack.extend(reversed(graph))


def _is_jsonld(script: etree._Element) -> bool:
    return (script.get("type") or "").strip().lower() == "application/ld+json"


def _types(item: dict) -> set[str]:
    kind = item.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return {k.lower() for k in kinds if isinstance(k, str)}


def _person_name(value) -> str | None:
    if isinstance(value, list):
        names = [_person_name(v) for v in value]
        return ", ".join(n for n in names if n) or None
    if isinstance(value, dict):
        return _clean(value.get("name"))
    return _clean(value)


def extract_metadata(document: etree._Element, url: str | None = None) -> Metadata:
    """Read metadata from the parsed document (before scripts are stripped). Never raises on odd input."""
    meta: dict[str, str] = {}
    title_tag = canonical = None
    jsonld: list[dict] = []
    for element in document.iter(*_METADATA_TAGS):  # one pass, tags filtered in C
        tag = element.tag
        if tag == "meta":
            key = element.get("property") or element.get("name") or element.get("itemprop") or element.get("http-equiv")
            if key:
                value = _clean(element.get("content"))
                if value:
                    meta.setdefault(key.strip().lower(), value)
        elif tag == "link":
            if canonical is None and element.get("href") and "canonical" in element.get("rel", "").lower().split():
                canonical = _clean(element.get("href"))
        elif tag == "title":
            if title_tag is None:
                title_tag = _clean("".join(element.itertext()))
        # the type first: reading a script's text makes a Python string of it, and most scripts are code
        elif len(jsonld) < _MAX_JSONLD_ITEMS and _is_jsonld(element) and element.text:
            try:
                jsonld.extend(_iter_jsonld(json.loads(element.text)))
            except (ValueError, RecursionError):
                continue
    article = next((item for item in jsonld if _types(item) & _ARTICLE_TYPES and item.get("articleBody")), None)
    if article is None:
        article = next((item for item in jsonld if _types(item) & _ARTICLE_TYPES), {})

    title = meta.get("og:title") or _clean(article.get("headline")) or meta.get("twitter:title") or title_tag
    description = meta.get("description") or meta.get("og:description") or _clean(article.get("description"))
    canonical = canonical or meta.get("og:url")
    if canonical and url:
        canonical = urljoin(url, canonical)
    lang = _clean(document.get("lang")) or _clean(document.get("xml:lang")) or meta.get("content-language")
    lang = lang or _clean(article.get("inLanguage")) or meta.get("og:locale")
    author = (
        meta.get("author")
        or meta.get("article:author")
        or _person_name(article.get("author"))
        or meta.get("parsely-author")
        or meta.get("sailthru.author")
        or meta.get("dc.creator")
    )
    published = (
        meta.get("article:published_time")
        or _clean(article.get("datePublished"))
        or meta.get("datepublished")
        or meta.get("date")
        or meta.get("dc.date")
        or meta.get("pubdate")
    )
    modified = meta.get("article:modified_time") or _clean(article.get("dateModified")) or meta.get("datemodified")
    body = article.get("articleBody")
    return Metadata(
        title=title,
        description=description,
        canonical_url=canonical,
        lang=lang,
        author=author,
        published=published,
        modified=modified,
        jsonld_body=body if isinstance(body, str) else None,
    )
