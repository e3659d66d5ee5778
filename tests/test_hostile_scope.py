"""Scope and SSRF: pure address rules, then ScopeMiddleware / CredentialsMiddleware / ScopedResolver glue."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler
from twisted.internet import defer

from boilerstrip.downloadermiddlewares.scope import (
    CredentialsMiddleware,
    PrivateAddressRefused,
    ScopedResolver,
    ScopeMiddleware,
)
from boilerstrip.outcomes import Filtered, failure_reason
from boilerstrip.safety.addresses import address_refusal, origin_of, parse_host_port, parse_ip_literal

# -- pure rules --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "address", "refusal"),
    [
        ("127.0.0.1", "127.0.0.1", "loopback"),
        ("2130706433", "127.0.0.1", "loopback"),  # decimal
        ("0x7f.1", "127.0.0.1", "loopback"),  # hex + short form
        ("0x7f000001", "127.0.0.1", "loopback"),
        ("0177.0.0.1", "127.0.0.1", "loopback"),  # octal
        ("127.1", "127.0.0.1", "loopback"),
        ("127.0.0.1.", "127.0.0.1", "loopback"),  # trailing dot
        ("0", "0.0.0.0", "unspecified"),
        ("[::1]", "::1", "loopback"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1", "embedded_loopback"),  # IPv4-mapped
        ("[::ffff:7f00:1]", "::ffff:7f00:1", "embedded_loopback"),
        ("[2002:7f00:1::]", "2002:7f00:1::", "embedded_loopback"),  # 6to4
        ("[64:ff9b::a00:1]", "64:ff9b::a00:1", "embedded_private"),  # NAT64 of 10.0.0.1
        ("[fe80::1%25eth0]", "fe80::1", "link_local"),
        ("[fec0::1]", "fec0::1", "site_local"),
        ("[fd00::1]", "fd00::1", "private"),
        ("169.254.169.254", "169.254.169.254", "link_local"),  # cloud metadata
        ("10.1.2.3", "10.1.2.3", "private"),
        ("172.16.0.1", "172.16.0.1", "private"),
        ("192.168.1.1", "192.168.1.1", "private"),
        ("100.64.0.1", "100.64.0.1", "cgnat"),
        ("224.0.0.1", "224.0.0.1", "multicast"),
        ("[ff02::1]", "ff02::1", "multicast"),
        ("240.0.0.1", "240.0.0.1", "reserved"),
        ("255.255.255.255", "255.255.255.255", "reserved"),
        ("198.18.0.1", "198.18.0.1", "private"),  # benchmarking range
        ("8.8.8.8", "8.8.8.8", None),
        ("[2606:4700:4700::1111]", "2606:4700:4700::1111", None),
    ],
)
def test_ip_literal_spellings_and_refusals(host: str, address: str, refusal: str | None) -> None:
    ip = parse_ip_literal(host)
    assert str(ip) == address
    assert address_refusal(ip) == refusal


@pytest.mark.parametrize("host", ["example.com", "localhost", "1e100.net", "123abc", "0x.example", "a.b.c.d"])
def test_names_are_not_literals(host: str) -> None:
    assert parse_ip_literal(host) is None


def test_origin_includes_the_port_and_normalises_literals() -> None:
    assert origin_of("http://0x7f.1:8000/x") == origin_of("http://127.0.0.1:8000/y")
    assert origin_of("http://127.0.0.1:8000/") != origin_of("http://127.0.0.1:8001/")
    assert origin_of("http://example.com/").site == origin_of("https://example.com/").site  # upgrade: same site
    assert origin_of("http://example.com:8080/").site != origin_of("http://example.com/").site
    assert origin_of("file:///etc/hostname") is None
    assert origin_of("http://[::1]:99999/") is None  # bad port
    assert parse_host_port("localhost:8000") == ("localhost", 8000)
    assert parse_host_port("[::1]:80") == ("::1", 80)
    assert parse_host_port("2130706433") == ("127.0.0.1", None)
    with pytest.raises(ValueError):
        parse_host_port("host:99999")


def test_safety_core_imports_no_framework() -> None:
    code = (
        "import sys, boilerstrip.safety\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted', 'playwright')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- ScopeMiddleware glue --------------------------------------------------------------------------------------
START = "http://127.0.0.1:8000/"


def _mw(**settings) -> ScopeMiddleware:
    """The middleware with these scope values: the user-level ones (allow_private) as settings, the others
    through the component's params hook (BOILERSTRIP_SCOPE_PARAMS)."""
    hooked = {k: v for k, v in settings.items() if k != "allow_private"}
    values = {f"BOILERSTRIP_SCOPE_{k.upper()}": v for k, v in settings.items() if k == "allow_private"}
    if hooked:
        values["BOILERSTRIP_SCOPE_PARAMS"] = json.dumps(hooked)
    crawler = get_crawler(settings_dict=values)
    mw = ScopeMiddleware.from_crawler(crawler)
    mw.set_start_urls([START])
    return mw


def _decide(mw: ScopeMiddleware, request: Request) -> str | None:
    """Run the hook for a request that needs no DNS; the Filtered reason, or None."""
    try:
        result = mw.process_request(request)
    except Filtered as exc:
        return exc.reason
    if result is not None:
        result.close()
        raise AssertionError("the hook awaited DNS for an IP literal")
    return None


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/hostname", "scheme_not_allowed"),
        ("data:text/html,<p>hi</p>", "scheme_not_allowed"),
        ("ftp://127.0.0.1:8000/x", "scheme_not_allowed"),
        ("s3://bucket/key", "scheme_not_allowed"),
        ("gopher://127.0.0.1:8000/", "scheme_not_allowed"),
        ("http://127.0.0.1:8000/page", None),  # the start URL's origin
        ("http://0x7f.1:8000/page", None),  # the same origin spelled in hex
        ("http://127.0.0.1:8001/", "offsite"),  # another port is another site
        ("http://8.8.8.8/", "offsite"),
    ],
)
def test_scheme_and_offsite_with_port(url: str, reason: str | None) -> None:
    mw = _mw()
    assert _decide(mw, Request(url)) == reason
    assert _decide(mw, Request(url, dont_filter=True)) == reason  # dont_filter changes nothing


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:8001/", "private_address"),
        ("http://2130706433:8001/", "private_address"),
        ("http://0177.0.0.1:8001/", "private_address"),
        ("http://[::1]:8000/", "private_address"),  # same port, other host: not the start origin
        ("http://[::ffff:127.0.0.1]:8001/", "private_address"),
        ("http://169.254.169.254/latest/meta-data/", "private_address"),
        ("http://100.64.0.1/", "private_address"),
        ("http://10.0.0.1:8000/", "private_address"),
        ("http://127.0.0.1:8000/", None),
        ("http://8.8.8.8/", None),
    ],
)
def test_private_addresses_refused_without_offsite(url: str, reason: str | None) -> None:
    mw = _mw(offsite="off")
    assert _decide(mw, Request(url)) == reason


def test_allow_private_is_explicit_and_per_port() -> None:
    mw = _mw(offsite="off", allow_private="127.0.0.1:8001,10.0.0.5")
    assert _decide(mw, Request("http://127.0.0.1:8001/")) is None
    assert _decide(mw, Request("http://127.0.0.1:8002/")) == "private_address"
    assert _decide(mw, Request("http://10.0.0.5:1234/")) is None  # a bare host allows every port


def test_bad_settings_name_the_setting() -> None:
    from boilerstrip.config import ConfigError

    with pytest.raises(ConfigError, match="BOILERSTRIP_SCOPE"):
        _mw(offsite="everywhere")
    with pytest.raises(ConfigError, match="BOILERSTRIP_SCOPE"):
        _mw(allow_private="host:notaport")


def test_scope_can_be_switched_off() -> None:
    from scrapy.exceptions import NotConfigured

    with pytest.raises(NotConfigured):
        ScopeMiddleware.from_crawler(get_crawler(settings_dict={"BOILERSTRIP_SCOPE_ENABLED": "false"}))


# -- credentials on redirects ----------------------------------------------------------------------------------
def _hop(url: str, previous: str) -> Request:
    return Request(
        url,
        headers={"Authorization": "Basic c2VjcmV0", "Cookie": "sid=secret", "Proxy-Authorization": "Basic eA=="},
        meta={"redirect_urls": ["http://127.0.0.1:8000/start", previous]},
    )


@pytest.mark.parametrize(
    "target", ["http://127.0.0.1:9000/x", "https://127.0.0.1:8000/x", "http://localhost:8000/x", "http://evil.example/"]
)
def test_credentials_dropped_on_cross_origin_hop(target: str) -> None:
    crawler = get_crawler()
    mw = CredentialsMiddleware.from_crawler(crawler)
    request = _hop(target, "http://127.0.0.1:8000/go")
    mw.process_request(request)
    assert not any(name in request.headers for name in ("Authorization", "Cookie", "Proxy-Authorization"))
    assert request.meta["dont_merge_cookies"] is True
    assert crawler.stats.get_value("boilerstrip/scope/credentials_stripped") == 1


def test_credentials_kept_on_same_origin_hop() -> None:
    mw = CredentialsMiddleware.from_crawler(get_crawler())
    request = _hop("http://127.0.0.1:8000/next", "http://127.0.0.1:8000/go")
    mw.process_request(request)
    assert request.headers.get("Authorization") == b"Basic c2VjcmV0"
    assert "dont_merge_cookies" not in request.meta


# -- connect-time resolver (rebinding) -------------------------------------------------------------------------
class _RebindingDNS(ScopedResolver):
    """ScopedResolver over a fake name server that answers a public address first, then loopback."""

    def __init__(self, answers: list[str], allowed: set[str] | None = None) -> None:
        from twisted.internet import reactor

        super().__init__(reactor, cache_size=0, timeout=1.0, allowed_hosts=allowed)
        self.answers = list(answers)

    def _lookup(self, name: str) -> defer.Deferred:
        return defer.succeed(self.answers.pop(0))


def _resolve(resolver: _RebindingDNS, name: str) -> str | BaseException:
    # ScopedResolver applies its check to whatever the parent lookup returns; feed it the fake answer.
    results: list = []
    deferred = resolver._lookup(name)
    deferred.addCallback(resolver._check, name)
    deferred.addBoth(results.append)
    value = results[0]
    return value.value if hasattr(value, "value") else value


def test_resolver_refuses_a_name_that_rebinds_to_loopback() -> None:
    resolver = _RebindingDNS(["93.184.216.34", "127.0.0.1"])
    assert _resolve(resolver, "rebind.example") == "93.184.216.34"
    refused = _resolve(resolver, "rebind.example")
    assert isinstance(refused, PrivateAddressRefused)
    assert failure_reason(refused) == "private_address"


def test_resolver_allows_the_start_hosts_and_leaves_literals_to_the_middleware() -> None:
    resolver = _RebindingDNS(["127.0.0.1", "127.0.0.1", "10.0.0.1"], allowed={"localhost"})
    assert _resolve(resolver, "localhost") == "127.0.0.1"
    assert _resolve(resolver, "0x7f.1") == "127.0.0.1"  # a literal: ScopeMiddleware already decided on it
    assert isinstance(_resolve(resolver, "intranet.example"), PrivateAddressRefused)


def test_resolver_checks_nothing_when_scope_is_off() -> None:
    resolver = _RebindingDNS(["127.0.0.1"])
    resolver.enabled = False
    assert _resolve(resolver, "intranet.example") == "127.0.0.1"


def test_resolver_is_the_installed_one() -> None:
    from scrapy.utils.project import get_project_settings

    assert get_project_settings()["TWISTED_DNS_RESOLVER"].endswith("scope.ScopedResolver")


# -- reasons for limits ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        ("DownloadCancelledError('Expected to receive 9999 bytes which is larger than download max size (100) in request x.')", "response_too_large"),
        ("IgnoreRequest('Ignored response x because its body (1 B compressed, 9 B decompressed so far) exceeded DOWNLOAD_MAXSIZE (2 B) during decompression.')", "decompressed_too_large"),
        ("IgnoreRequest('max redirections reached')", "too_many_redirects"),
        ("DownloadTimeoutError('Getting x took longer than 3 seconds.')", "timeout"),
        ("CannotResolveHostError('no such host')", "dns_not_found"),
        ("CannotResolveHostError(\"address 'x' not found: timeout error\")", "dns_timeout"),
        ("DownloadCancelledError('')", "cancelled"),
        ("IgnoreRequest('anything else')", "ignored"),
    ],
)
def test_failure_reasons_for_limits(exc: str, reason: str) -> None:
    from scrapy import exceptions

    assert failure_reason(eval(exc, vars(exceptions))) == reason  # noqa: S307 -- a table of constructors


def test_a_refusal_below_scrapys_wrapping_keeps_its_reason() -> None:
    from scrapy.exceptions import CannotResolveHostError

    from boilerstrip.downloadermiddlewares.scope import ResponseTooLarge

    for inner, reason in ((PrivateAddressRefused("x"), "private_address"), (ResponseTooLarge("y"), "response_too_large")):
        try:
            try:
                raise inner
            except Exception as exc:
                raise CannotResolveHostError("wrapped") from exc
        except CannotResolveHostError as outer:
            assert failure_reason(outer) == reason


def test_resolver_refuses_through_a_real_lookup() -> None:
    """The real threaded lookup of ``localhost`` (from /etc/hosts), through ScopedResolver.getHostByName."""
    code = """
from twisted.internet import task
from boilerstrip.downloadermiddlewares.scope import ScopedResolver

async def main(reactor):
    from twisted.internet.defer import Deferred
    refused = ScopedResolver(reactor, cache_size=0, timeout=5.0)
    allowed = ScopedResolver(reactor, cache_size=0, timeout=5.0, allowed_hosts={"localhost"})
    print("allowed", await allowed.getHostByName("localhost"))
    try:
        print("refused?", await refused.getHostByName("localhost"))
    except Exception as exc:
        print("refused", type(exc).__name__)

task.react(lambda reactor: __import__("twisted.internet.defer", fromlist=["x"]).ensureDeferred(main(reactor)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "allowed 127.0.0.1" in out.stdout, out.stdout + out.stderr
    assert "refused PrivateAddressRefused" in out.stdout, out.stdout + out.stderr
