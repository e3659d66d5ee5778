"""Nothing is fetched outside the crawl's scope: schemes, offsite (with the port), SSRF after DNS, credentials.

``ScopeMiddleware`` sits first in the downloader chain (priority 40), so it sees every request: links,
``dont_filter`` requests, redirect and meta-refresh hops (a Request returned by a downloader middleware goes
back through the scheduler and the whole chain), retries, robots.txt fetches and browser re-issues. It refuses
with :class:`boilerstrip.outcomes.Filtered` and a reason:

- ``scheme_not_allowed``: anything but http/https (the file/data/ftp/s3 handlers are also off in settings);
- ``offsite``: a host:port that is not one of the start URLs' sites (``offsite`` of ``BOILERSTRIP_SCOPE_PARAMS``).
  Two exemptions, both still held to the scheme and private-address rules: the redirect hops of a *start
  URL* (depth 0), whose final origin then joins the crawl's sites as a start URL's would
  (``example.org`` -> ``www.example.org``; stat ``boilerstrip/scope/start_redirect_origin_added``), and
  robots.txt fetches (``meta["boilerstrip_kind"] == "robots"``), whose redirects RFC 9309 §2.3.1.2 says to
  follow across authorities. A joined origin is *not* added to the private allowlist: the user named the
  start URL, not where it redirects, so a start URL redirecting to a private address stays refused;
- ``private_address``: the host is, or resolves to, a loopback/private/link-local/CGNAT/multicast/reserved
  address (IP literals in any spelling included) and its host:port is neither a start URL's origin nor
  listed in ``BOILERSTRIP_SCOPE_ALLOW_PRIVATE``.

``ScopedResolver`` (``TWISTED_DNS_RESOLVER``) applies the same address rule to the answer the connection
actually uses, so a name that rebinds to 127.0.0.1 between the check and the connect is still refused.

``CredentialsMiddleware`` (priority 450): on a redirect hop to another origin it removes ``Authorization``,
``Cookie`` and ``Proxy-Authorization`` and keeps the cookie jar out of that hop.

``ScopeMiddleware.process_exception`` also names two failures Scrapy reports without a reason: a body that
grew past ``DOWNLOAD_MAXSIZE`` while streaming (``response_too_large``) and a connect the resolver refused
(``private_address``, which Twisted reports as "no results").
"""

from __future__ import annotations

import logging
import socket
import threading
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.resolver import CachingThreadedResolver
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.address import IPv6Address
from twisted.internet.base import ThreadedResolver
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IHostnameResolver, IHostResolution
from zope.interface import implementer

from boilerstrip.config import component_enabled, params_from_settings

from boilerstrip.outcomes import Filtered
from boilerstrip.safety.addresses import Origin, PrivateAllowlist, address_refusal, origin_of, parse_ip_literal
from boilerstrip.scope import ScopeParams, joined_site, site_key
from boilerstrip.meta import KIND_META

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

__all__ = [
    "ScopeMiddleware",
    "CredentialsMiddleware",
    "ScopedResolver",
    "PrivateAddressRefused",
    "ResponseTooLarge",
    "DnsTimeout",
    "CREDENTIAL_HEADERS",
]

logger = logging.getLogger(__name__)

ALLOWED_SCHEMES = frozenset({"http", "https"})
#: headers that carry credentials and must not follow a redirect to another origin
CREDENTIAL_HEADERS = ("Authorization", "Cookie", "Proxy-Authorization")
# Refused host names remembered to name the reason of a failed connect; a hostile page can mint names
# without end, so the memory is bounded (10 000 names is ~1 MiB).
_MAX_REMEMBERED_REFUSALS = 10_000
#: transient: the bytes of a response received so far (``bytes_received``), to say why a download was cancelled
_RECEIVED_META = "_boilerstrip_received_bytes"


class PrivateAddressRefused(DNSLookupError):
    """The resolver refused to hand out a non-global address for a host that is not allowed."""

    refusal_reason = "private_address"


class DnsTimeout(Exception):
    """A lookup that did not answer within DNS_TIMEOUT (Twisted's endpoint reports it as "no results")."""

    refusal_reason = "dns_timeout"


class ResponseTooLarge(Exception):
    """A body that grew past DOWNLOAD_MAXSIZE while streaming (Scrapy cancels it without saying why)."""

    refusal_reason = "response_too_large"


class ScopeMiddleware:
    def __init__(self, params: ScopeParams, start_urls: list[str] | tuple[str, ...] = (), stats: Any = None) -> None:
        self.params = params
        self.stats = stats
        self.maxsize = 0
        self.private = PrivateAllowlist(params.allow_private)
        #: the scope "auto" falls back to when the spider names none (BOILERSTRIP_CRAWL_SCOPE)
        self.crawl_scope = "host"
        self.mode = "host" if params.offsite == "auto" else params.offsite
        #: scope ("host"/"domain") -> the crawl's site keys (boilerstrip.scope.site_key) under it
        self.sites: dict[str, set[str]] = {"host": set(), "domain": set()}
        self.start_urls: set[str] = set()  # the start URLs as requested: a redirect chain begins at one
        self.set_start_urls(start_urls)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ScopeMiddleware:
        if not component_enabled(crawler.settings, "scope"):
            raise NotConfigured("BOILERSTRIP_SCOPE_ENABLED is off")
        params = params_from_settings(crawler.settings, "scope", ScopeParams)  # ConfigError names the setting
        mw = cls(params, stats=crawler.stats)
        mw.maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        crawl_scope = str(crawler.settings.get("BOILERSTRIP_CRAWL_SCOPE") or "host")
        mw.crawl_scope = crawl_scope if crawl_scope in ("host", "domain") else "host"
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.bytes_received, signal=signals.bytes_received)
        return mw

    # -- why a download was cancelled ----------------------------------------------------------------------
    def bytes_received(self, data: bytes, request: Request) -> None:
        meta = request.meta
        meta[_RECEIVED_META] = meta.get(_RECEIVED_META, 0) + len(data)

    def process_exception(self, request: Request, exception: Exception) -> None:
        received = request.meta.pop(_RECEIVED_META, 0)
        maxsize = request.meta.get("download_maxsize", self.maxsize)
        name = type(exception).__name__
        if name == "DownloadCancelledError" and maxsize and received > maxsize:
            raise ResponseTooLarge(f"{received} bytes received, DOWNLOAD_MAXSIZE is {maxsize}") from exception
        if name in ("CannotResolveHostError", "DNSLookupError"):
            # Twisted's endpoint reports any resolver failure as "no results": ask the resolver whether it
            # refused this host, so the outcome says private_address rather than dns_not_found (and
            # whether its lookup timed out: dns_timeout).
            host = urlsplit(request.url).hostname or ""
            refusal = _resolver_refusal(host)
            if refusal:
                self._count("filtered/private_address")
                raise PrivateAddressRefused(refusal) from exception
            if _resolver_timed_out(host):
                raise DnsTimeout(f"the lookup of {host!r} took longer than DNS_TIMEOUT") from exception
        return None

    def process_response(self, request: Request, response: Any) -> Any:
        request.meta.pop(_RECEIVED_META, None)
        if 200 <= response.status < 300 and self._is_start_chain(request):
            self._add_start_redirect_origin(request)
        return response

    # -- what is in scope ------------------------------------------------------------------------------
    def set_start_urls(self, urls: Any) -> None:
        for url in urls or ():
            origin = origin_of(str(url))
            if origin is None:
                continue
            self.private.add(origin)
            self.start_urls.add(str(url))
            self._add_site(origin)
        _share_with_resolver(self.private)

    def _add_site(self, origin: Origin) -> None:
        for scope, keys in self.sites.items():
            key = site_key(str(origin), scope)
            if key is not None:
                keys.add(key)

    def _is_start_chain(self, request: Request) -> bool:
        """A redirect (or meta-refresh) hop, retry or re-issue of a start URL's request (depth 0)."""
        hops = request.meta.get("redirect_urls")
        return bool(hops) and request.meta.get("depth", 0) == 0 and hops[0] in self.start_urls

    def _add_start_redirect_origin(self, request: Request) -> None:
        """The final origin of a start URL's redirect chain joins the sites (not the private allowlist)."""
        origin = origin_of(request.url)
        if origin is None or self.mode == "off" or joined_site(str(origin), self.sites[self.mode], self.mode) is None:
            return
        self._add_site(origin)
        self._count("start_redirect_origin_added")
        logger.info(
            "scope: start URL %s redirects to %s: %s joins the crawl's sites",
            request.meta["redirect_urls"][0], request.url, origin,
        )  # fmt: skip

    def spider_opened(self, spider: Spider) -> None:
        urls = list(getattr(spider, "start_urls", None) or ())
        urls += list(getattr(spider, "allowed_origins", None) or ())
        self.set_start_urls(urls)
        if self.params.offsite == "auto":
            # one setting for "what is the crawl's site": the spider's scope (BOILERSTRIP_CRAWL_SCOPE, --scope)
            scope = getattr(getattr(spider, "params", None), "scope", None) or getattr(spider, "scope", None)
            self.mode = scope if scope in ("host", "domain") else self.crawl_scope
        if not self.sites["host"] and self.mode != "off":
            logger.warning("scope: the spider has no start_urls; every request will be filtered as offsite")

    def is_offsite(self, origin: Origin) -> bool:
        """Not one of the crawl's sites under the scope mode (boilerstrip.scope: host or registrable
        domain, with the port; 80 and 443 count as one)."""
        if self.mode == "off":
            return False
        return site_key(str(origin), self.mode) not in self.sites[self.mode]

    # -- the hook --------------------------------------------------------------------------------------
    def process_request(self, request: Request) -> Any:
        """None (go on), or -- when a host name must be resolved first -- an awaitable of None.

        Plain (not ``async def``) on purpose: most requests need no DNS (start origins, IP literals), and a
        coroutine hook costs every request a trip through the event loop.
        """
        url = request.url
        scheme = url.split(":", 1)[0].strip().lower() if ":" in url else ""
        if scheme not in ALLOWED_SCHEMES:
            self._refuse(request, "scheme_not_allowed", scheme or "none")
        origin = origin_of(url)
        if origin is None:
            self._refuse(request, "bad_url", url[:80])
        if self.is_offsite(origin) and not self._offsite_exempt(request):
            self._refuse(request, "offsite", f"{origin.host}:{origin.port}")
        if self.private.allows_origin(origin):
            return None
        ip = parse_ip_literal(origin.host)
        if ip is not None:
            kind = address_refusal(ip)
            if kind:
                self._refuse(request, "private_address", f"{origin.host} {kind}")
            return None
        if self.params.resolve_early and not request.meta.get("proxy"):
            return self._check_resolved(request, origin.host)
        return None

    def _offsite_exempt(self, request: Request) -> bool:
        """robots.txt hops (RFC 9309 follows redirects across authorities) and a start URL's redirect chain."""
        return request.meta.get(KIND_META) == "robots" or self._is_start_chain(request)

    async def _check_resolved(self, request: Request, host: str) -> None:
        from twisted.internet import reactor

        try:
            address = await maybe_deferred_to_future(reactor.resolve(host))
        except PrivateAddressRefused as exc:
            raise self._refusal(request, "private_address", str(exc)) from None
        kind = address_refusal(address)
        if kind:
            self._refuse(request, "private_address", f"{host}={address} {kind}")

    def _refuse(self, request: Request, reason: str, detail: str) -> NoReturn:
        raise self._refusal(request, reason, detail)

    def _count(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"boilerstrip/scope/{key}")

    def _refusal(self, request: Request, reason: str, detail: str) -> Filtered:
        self._count(f"filtered/{reason}")
        logger.debug("scope: filtered %s (%s: %s)", request.url, reason, detail)
        return Filtered(reason, detail)


class CredentialsMiddleware:
    """Credentials never follow a redirect (or meta refresh) to another origin.

    Runs at 450: after DefaultHeadersMiddleware (400) and HttpAuthMiddleware (300), which could add an
    ``Authorization`` header again, and before CookiesMiddleware (700), which it keeps out of the hop
    (``dont_merge_cookies``: cookie jars ignore ports, so a cookie of :8000 would reach :9000).
    Same-origin hops keep their headers.
    """

    def __init__(self, stats: Any = None) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CredentialsMiddleware:
        if not component_enabled(crawler.settings, "scope"):
            raise NotConfigured("BOILERSTRIP_SCOPE_ENABLED is off")
        return cls(crawler.stats)

    def process_request(self, request: Request) -> None:
        hops = request.meta.get("redirect_urls") or ()
        if not hops or origin_of(hops[-1]) == origin_of(request.url):
            return None
        removed = [name for name in CREDENTIAL_HEADERS if request.headers.pop(name, None) is not None]
        request.meta["dont_merge_cookies"] = True
        if self.stats is not None:
            self.stats.inc_value("boilerstrip/scope/cross_origin_hops")
            if removed:
                self.stats.inc_value("boilerstrip/scope/credentials_stripped")
        if removed:
            logger.debug("scope: removed %s on the cross-origin redirect to %s", removed, request.url)
        return None


# -- connect-time check ------------------------------------------------------------------------------------
def _share_with_resolver(allowlist: PrivateAllowlist) -> None:
    """Tell the installed resolver which host names may resolve to private addresses."""
    try:
        from twisted.internet import reactor
    except Exception:  # pragma: no cover
        return
    resolver = getattr(reactor, "resolver", None)
    if isinstance(resolver, ScopedResolver):
        resolver.allowed_hosts.update(allowlist.hosts)


def _resolver_timed_out(host: str) -> bool:
    try:
        from twisted.internet import reactor
    except Exception:  # pragma: no cover
        return False
    resolver = getattr(reactor, "resolver", None)
    return isinstance(resolver, ScopedResolver) and host.strip().rstrip(".").lower() in resolver.timed_out


def _resolver_refusal(host: str) -> str | None:
    try:
        from twisted.internet import reactor
    except Exception:  # pragma: no cover
        return None
    resolver = getattr(reactor, "resolver", None)
    if isinstance(resolver, ScopedResolver):
        return resolver.refused.get(host.strip().rstrip(".").lower())
    return None


@implementer(IHostResolution)
class _LiteralResolution:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:  # already complete
        return None


@implementer(IHostnameResolver)
class _IPv6LiteralNameResolver:
    """Answers IPv6 literals itself, hands names to the reactor's own name resolver.

    A simple resolver (``getHostByName``, what ``TWISTED_DNS_RESOLVER`` installs) speaks IPv4 only, and the
    adapter Twisted wraps it in sends ``::1`` to ``gethostbyname``, which fails: without this an
    ``http://[::1]:8080/`` start URL cannot be crawled at all. A literal cannot rebind; the scope middleware
    decided on it before the connect.
    """

    def __init__(self, fallback: Any) -> None:
        self.fallback = fallback

    def resolveHostName(  # noqa: N802 (Twisted's name)
        self, resolutionReceiver: Any, hostName: str, portNumber: int = 0, addressTypes: Any = None,
        transportSemantics: str = "TCP",
    ) -> Any:  # fmt: skip
        ip = parse_ip_literal(hostName) if ":" in hostName else None
        if ip is None or ip.version != 6:
            return self.fallback.resolveHostName(resolutionReceiver, hostName, portNumber, addressTypes, transportSemantics)
        resolution = _LiteralResolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        resolutionReceiver.addressResolved(IPv6Address("TCP", str(ip), portNumber))
        resolutionReceiver.resolutionComplete()
        return resolution


class _DaemonThreadLookups(ThreadedResolver):
    """``getHostByName`` in a daemon thread per lookup instead of the reactor's thread pool.

    A lookup stuck on a dead name server keeps its thread in ``getaddrinfo`` long after DNS_TIMEOUT failed
    the request; in the reactor's pool that thread is joined when the reactor stops, so the process could not
    exit until the lookup gave up (a minute and more). A daemon thread does not hold the exit. The timeout is
    kept here too, and remembered per host so the failure is named ``dns_timeout``.
    """

    timed_out: set[str]

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:  # noqa: N802 (Twisted's name)
        delay = sum(timeout) if timeout else 60
        deferred: Deferred = Deferred()
        host = name.strip().rstrip(".").lower()

        def answer(address: str | None, error: BaseException | None) -> None:
            if deferred.called:
                return
            if error is not None:
                deferred.errback(DNSLookupError(f"address {name!r} not found: {error}"))
            else:
                deferred.callback(address)

        def lookup() -> None:
            try:
                address = socket.gethostbyname(name)
            except Exception as exc:  # noqa: BLE001 -- handed to the reactor thread
                self.reactor.callFromThread(answer, None, exc)
            else:
                self.reactor.callFromThread(answer, address, None)

        def expire() -> None:
            if not deferred.called:
                self.timed_out.add(host)
                deferred.errback(DNSLookupError(f"address {name!r} not found: timeout error"))

        timer = self.reactor.callLater(delay, expire)

        def stop_timer(result: Any) -> Any:
            if timer.active():
                timer.cancel()
            return result

        deferred.addBoth(stop_timer)
        threading.Thread(target=lookup, name="boilerstrip-dns", daemon=True).start()
        return deferred


class ScopedResolver(CachingThreadedResolver, _DaemonThreadLookups):
    """Scrapy's caching resolver that refuses to hand out non-global addresses for hosts not allowed.

    The connection uses the address this resolver returns (cached for the run), so the address that was
    checked is the address that is connected to: DNS rebinding between check and connect gains nothing.
    """

    def __init__(
        self, reactor: Any, cache_size: int, timeout: float, allowed_hosts: set[str] | None = None, enabled: bool = True
    ) -> None:
        super().__init__(reactor, cache_size, timeout)
        self.allowed_hosts: set[str] = set(allowed_hosts or ())
        self.enabled = enabled
        #: host -> why it was refused (Twisted's endpoint turns the refusal into "no results")
        self.refused: dict[str, str] = {}
        #: hosts whose lookup timed out (to name the failure dns_timeout rather than dns_not_found)
        self.timed_out: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> ScopedResolver:
        settings = crawler.settings
        cache_size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        params = params_from_settings(settings, "scope", ScopeParams)
        hosts = PrivateAllowlist(params.allow_private).hosts
        enabled = component_enabled(settings, "scope")
        return cls(reactor, cache_size, settings.getfloat("DNS_TIMEOUT"), hosts, enabled=enabled)

    def install_on_reactor(self) -> None:
        super().install_on_reactor()
        self.reactor.installNameResolver(_IPv6LiteralNameResolver(self.reactor.nameResolver))
        # installNameResolver put a plain adapter in reactor.resolver: the scope checks look for us there
        self.reactor.resolver = self

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:  # noqa: N802 (Twisted's name)
        deferred = super().getHostByName(name, timeout)
        deferred.addCallback(self._check, name)
        return deferred

    def _check(self, address: str, name: str) -> str:
        if not self.enabled or parse_ip_literal(name) is not None:
            return address  # an IP literal cannot rebind: ScopeMiddleware decided on it before any connect
        kind = address_refusal(address)
        host = name.strip().rstrip(".").lower()
        if kind and host not in self.allowed_hosts:
            detail = f"{name} resolves to {address} ({kind})"
            if len(self.refused) >= _MAX_REMEMBERED_REFUSALS:
                self.refused.clear()  # only a reason is lost (dns_not_found instead of private_address), never a check
            self.refused[host] = detail
            raise PrivateAddressRefused(detail)
        return address
