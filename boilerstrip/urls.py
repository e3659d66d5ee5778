"""URL normalisation and crawl scope, so that one page is fetched once.

Pure functions over strings (w3lib and tldextract; no Scrapy import). ``normalize_url`` is applied to
every URL before it becomes a request: start URLs, links, sitemap entries and ``rel=canonical`` targets.

What it does, in order: resolve against a base, keep only http/https, lowercase scheme and host, drop
the default port (80/443), drop the fragment, drop tracking parameters (``utm_*``, ``fbclid``...) and
session ids (``;jsessionid=``, ``?sid=``, ``PHPSESSID``...), sort the query (w3lib ``canonicalize_url``),
and turn an empty path into ``/``. It does *not* guess that ``/index.html`` equals ``/`` (not true on
every server); ``rel=canonical`` handles such variants.

This is the one normal form: the spider admits a URL under it and the trap rules see the same string,
so ``/a`` and ``/a;jsessionid=1`` are one URL before either becomes a request. Length is not judged
here: an over-long URL is the trap rule's ``filtered:url_too_long`` (``max_url_chars`` of ``BOILERSTRIP_TRAPS_PARAMS``),
with a reason, never a silent ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import parse_qsl, unquote, urlencode, urljoin, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from boilerstrip.scope import in_scope, origin, site_key  # noqa: F401 -- re-exported: scope lives in boilerstrip.scope

__all__ = [
    "UrlParams",
    "TRACKING_PARAMS",
    "TRACKING_PREFIXES",
    "SESSION_ID_PARAMS",
    "normalize_url",
    "url_credentials",
    "without_password",
    "link_targets",
    "strip_session_ids",
    "site_key",
    "in_scope",
    "origin",
]

#: query parameters that only track the visitor and never change the page
TRACKING_PARAMS: tuple[str, ...] = (
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "twclid", "igshid", "mc_cid",
    "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id",
    "ref_src", "spm",
)  # fmt: skip
#: query parameter prefixes that only track (``utm_source``, ``utm_medium``...)
TRACKING_PREFIXES: tuple[str, ...] = ("utm_", "pk_", "mtm_", "hsa_")
#: query parameters that carry a session id: the same page under endless names (lowercase compared)
SESSION_ID_PARAMS: frozenset[str] = frozenset(
    {"jsessionid", "phpsessid", "aspsessionid", "asp.net_sessionid", "sid", "sessionid", "session_id", "sessid",
     "cfid", "cftoken", "zenid", "oscsid"}
)  # fmt: skip
#: ``;jsessionid=...`` style path parameters (Java servlets, PHP with trans_sid)
_PATH_SESSION_ID = re.compile(r";(?:jsessionid|phpsessid|sid|sessionid)=[^/?#;]*", re.IGNORECASE)

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class UrlParams:
    # Parameters dropped from every URL (exact names, lowercase compared).
    tracking_params: tuple[str, ...] = TRACKING_PARAMS
    # Parameters dropped when their name starts with one of these.
    tracking_prefixes: tuple[str, ...] = TRACKING_PREFIXES
    # Strip session-id parameters (SESSION_ID_PARAMS, ``;jsessionid=``) so each page has one URL.
    strip_session_ids: bool = True


_DEFAULT_PARAMS = UrlParams()


def normalize_url(url: str, base: str | None = None, params: UrlParams = _DEFAULT_PARAMS) -> str | None:
    """The normal form of ``url`` (resolved against ``base``), or None when it is not a crawlable URL."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url:
        return None
    if base:
        try:
            url = urljoin(base, url)
        except ValueError:
            return None
    # the normal form has no fragment: cut here, so that a page's links to its own sections ("#syntax"),
    # distinct strings, meet the cache as the one URL they are
    return _normalize_absolute(url.partition("#")[0], params)


def link_targets(hrefs: Iterable[str], base: str, params: UrlParams = _DEFAULT_PARAMS,
                 ) -> tuple[tuple[str | None, ...], tuple[str, ...]]:
    """The normal form of each of a page's raw ``hrefs`` (None: not a crawlable URL), resolved against the
    page's ``base``, and the names of the exceptions the unusable ones raised (one link's error must not cost
    the page its other links). Browsers read ``\\`` as ``/`` in http(s) URLs (WHATWG URL); w3lib would turn
    it into ``%5C`` or ``//``."""
    targets: list[str | None] = []
    errors: list[str] = []
    folder = _base_folder(base)
    for href in hrefs:
        try:
            link = href.strip().replace("\\", "/")
            if folder is not None and _resolves_in_folder(link):
                targets.append(_normalize_in_folder(link, folder, params))
                continue
            targets.append(normalize_url(link, base=base, params=params))
        except Exception as exc:  # noqa: BLE001 - a hostile href
            targets.append(None)
            errors.append(type(exc).__name__)
    return tuple(targets), tuple(errors)


def _base_folder(base: str) -> tuple[str, str, str] | None:
    """What ``urljoin(base, href)`` reads of an http(s) ``base`` for an href :func:`_resolves_in_folder`: its
    scheme, host and path up to its last ``/`` (``urljoin`` drops the last segment, its ``;params`` with
    it); None for a base the cache does not take (another scheme, no host, a path not from the root)."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.netloc or not parts.path.startswith("/"):
        return None
    return parts.scheme, parts.netloc, parts.path[: parts.path.rfind("/") + 1]


def _resolves_in_folder(link: str) -> bool:
    """Whether ``urljoin`` resolves ``link`` (stripped) against its base's scheme, host and folder alone: a
    path, relative or from the root, without a scheme. Not an empty link, nor one that starts with ``?``,
    ``#`` or ``;`` (those keep the base's own path and query), nor with ``//`` (``//`` alone is the base
    itself), nor one with a ``:`` before its first ``/`` (a scheme, perhaps), nor one starting with a control
    character (``urlsplit`` strips those, and what follows may be a ``?``)."""
    return (bool(link) and link[0] > " " and link[0] not in "?#;" and not link.startswith("//")
            and ":" not in link.partition("/")[0])


#: absolute URLs whose normal form each process keeps: a site's navigation links are on every page, so a
#: crawl normalises the same few hundred URLs over and over (sqlite3-doc: 51,800 links, 2,900 distinct)
_NORMAL_CACHE_ENTRIES = 16_384


@lru_cache(maxsize=_NORMAL_CACHE_ENTRIES)
def _normalize_in_folder(link: str, folder: tuple[str, str, str], params: UrlParams) -> str | None:
    """The normal form of an href that :func:`_resolves_in_folder`, against any page of ``folder`` (what
    :func:`_base_folder` keeps of its base): a site's pages repeat the same relative hrefs (``ch02s03.html``,
    ``../index.html``) on every page, and every page has its own base URL, so the URL cache below (keyed by
    the resolved URL) answers only after ``urljoin`` each time (on ``sqlite3-doc``, ~70 % of a page's link
    normalisation)."""
    scheme, netloc, path = folder
    return normalize_url(link, base=f"{scheme}://{netloc}{path}", params=params)


@lru_cache(maxsize=_NORMAL_CACHE_ENTRIES)
def _normalize_absolute(url: str, params: UrlParams) -> str | None:
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        host = (parts.hostname or "").rstrip(".")
        if not host:
            return None
        port = parts.port  # ValueError on a bad port
    except ValueError:
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    query = _drop_tracking(parts.query, params)
    path = parts.path or "/"
    if params.strip_session_ids:
        path = _PATH_SESSION_ID.sub("", path) or "/"
        query = _drop_session_ids(query)
    # userinfo is dropped on purpose: credentials never belong in a crawl frontier.
    rebuilt = urlunsplit((scheme, netloc, path, query, ""))
    try:
        normal = canonicalize_url(rebuilt, keep_blank_values=True, keep_fragments=False)
    except (ValueError, UnicodeError):
        return None
    return normal


def strip_session_ids(url: str) -> str:
    """``url`` without session-id query parameters and ``;jsessionid=`` path parameters (else unchanged)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    path = _PATH_SESSION_ID.sub("", parts.path)
    query = _drop_session_ids(parts.query)
    if path == parts.path and query == parts.query:
        return url
    return urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment))


def _drop_session_ids(query: str) -> str:
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    kept = [(name, value) for name, value in pairs if name.lower() not in SESSION_ID_PARAMS]
    return query if len(kept) == len(pairs) else urlencode(kept)


def _drop_tracking(query: str, params: UrlParams) -> str:
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    names = {name.lower() for name in params.tracking_params}
    kept = [
        (name, value)
        for name, value in pairs
        if name.lower() not in names and not name.lower().startswith(params.tracking_prefixes)
    ]
    if len(kept) == len(pairs):
        return query
    return urlencode(kept)


def url_credentials(urls: Iterable[str]) -> tuple[str, str, str] | None:
    """(user, password, host[:port]) given in start URLs (``https://user:secret@docs.example.org/``), for HTTP
    basic authentication on that host (Scrapy's ``HTTPAUTH_USER``/``_PASS``/``_DOMAIN``: the domain is the
    URL's host and port as Scrapy compares them; the normal form drops the credentials, so records and the
    ledger never hold a password); None when no URL has any. ValueError when URLs give credentials for more
    than one host, or two sets for one (Scrapy sends one set, to one domain)."""
    found: dict[str, tuple[str, str]] = {}
    for url in urls:
        try:
            parts = urlsplit(str(url).strip())
            user, password, host, port = parts.username, parts.password, parts.hostname, parts.port
        except ValueError:
            continue  # the URL's own check says what is wrong with it
        if user is None or not host:
            continue
        domain = f"[{host}]" if ":" in host else host
        domain += f":{port}" if port is not None else ""
        given = (unquote(user), unquote(password or ""))
        if found.setdefault(domain, given) != given or len(found) > 1:
            raise ValueError("credentials (user:password@) are sent to one host only, with one user: "
                             f"start URLs give them for {', '.join(sorted(found)) if len(found) > 1 else domain} "
                             "(crawl each site on its own)")
    if not found:
        return None
    ((domain, (user, password)),) = found.items()
    return user, password, domain


def without_password(url: str) -> str:
    """``url`` with the password of its ``user:password@`` shown as ``***`` (for what is printed or listed)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if password is None:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostport}"))
