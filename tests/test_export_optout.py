"""AI-training opt-out signals: the pure reader (boilerstrip.optout), the middleware glue, and our identity."""

from __future__ import annotations

import pytest
from protego import Protego
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from boilerstrip import ROBOTS_TOKEN
from boilerstrip.downloadermiddlewares.optout import AiOptOutMiddleware
from boilerstrip.meta import OPT_OUT_META
from boilerstrip.optout import (OptOutParams, header_opt_out, meta_opt_out, page_opt_out, parse_robots_ai_rules,
                                parse_tdmrep, robots_opt_out, tdmrep_opt_out)

TOKEN = ROBOTS_TOKEN


@pytest.mark.parametrize("robots, url, expected", [
    # a group naming our token wins over "*": the "*" group's Content-Signal does not apply to us
    ("User-agent: *\nContent-Signal: ai-train=no\nDisallow: /\n\nUser-agent: boilerstrip\nAllow: /\n",
     "http://s/x", []),
    ("User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n", "http://s/x",
     ["robots.txt:content-signal:ai-train=no"]),
    ("User-agent: BoilerStrip\nContent-Signal: ai-train=no\n", "http://s/x", ["robots.txt:content-signal:ai-train=no"]),
    ("Content-Signal: ai-train=no\n\nUser-agent: *\nAllow: /\n", "http://s/x", ["robots.txt:content-signal:ai-train=no"]),
    ("User-agent: *\nContent-Signal: ai-train=yes, search=no\n", "http://s/x", []),
    ("User-agent: otherbot\nContent-Signal: ai-train=no\n", "http://s/x", []),
    ("User-agent: *\nContent-Usage: train-ai=n\n", "http://s/x", ["robots.txt:content-usage:train-ai=n"]),
    ("User-agent: *\nContent-Usage: /usage/ train-ai=n\n", "http://s/usage/doc", ["robots.txt:content-usage:train-ai=n"]),
    ("User-agent: *\nContent-Usage: /usage/ train-ai=n\n", "http://s/other", []),
    ("User-agent: *\nContent-Usage: bots=n, train-ai=y\n", "http://s/x", []),
    ("User-agent: *\nContent-Usage: train-genai=n\n", "http://s/x", ["robots.txt:content-usage:train-genai=n"]),
    ("\ufeffUser-agent: * # comment\ncontent-signal: ai-train=no # all of it\n", "http://s/x",
     ["robots.txt:content-signal:ai-train=no"]),
    ("User-agent: a\nUser-agent: boilerstrip\nContent-Usage: train-ai=n\n", "http://s/x",
     ["robots.txt:content-usage:train-ai=n"]),
])
def test_robots_ai_lines(robots, url, expected) -> None:
    assert sorted(robots_opt_out(parse_robots_ai_rules(robots, TOKEN), url)) == expected


def test_robots_ai_group_is_recorded() -> None:
    assert parse_robots_ai_rules("User-agent: *\nUser-agent: boilerstrip\n", TOKEN).group == "boilerstrip"
    assert parse_robots_ai_rules("User-agent: *\nAllow: /\n", TOKEN).group == "*"
    assert parse_robots_ai_rules("Allow: /\n", TOKEN).group is None


@pytest.mark.parametrize("metas, expected", [
    ([("robots", "index, noai, noimageai")], ["meta-robots:noai"]),
    ([("ROBOTS", "NOAI")], ["meta-robots:noai"]),
    ([("boilerstrip", "noai")], ["meta-robots:noai"]),
    ([("otherbot", "noai")], []),
    ([("robots", "noindex")], []),
    ([("tdm-reservation", "1")], ["tdm-reservation:meta"]),
    ([("tdm-reservation", "0")], []),
])
def test_meta_signals(metas, expected) -> None:
    assert meta_opt_out(metas, TOKEN) == expected


@pytest.mark.parametrize("headers, expected", [
    ({"x-robots-tag": ["noai"]}, ["x-robots-tag:noai"]),
    ({"x-robots-tag": ["noindex, noai"]}, ["x-robots-tag:noai"]),
    ({"x-robots-tag": ["boilerstrip: noai"]}, ["x-robots-tag:noai"]),
    ({"x-robots-tag": ["otherbot: noai"]}, []),
    ({"x-robots-tag": ["unavailable_after: 25 Jun 2030 15:00:00 PST"]}, []),
    ({"tdm-reservation": ["1"]}, ["tdm-reservation:header"]),
    ({"tdm-reservation": ["0"]}, []),
])
def test_header_signals(headers, expected) -> None:
    assert header_opt_out(headers, TOKEN) == expected


def test_tdmrep_first_matching_rule_decides() -> None:
    rules = parse_tdmrep(b'[{"location": "/reserved/*", "tdm-reservation": 1, "tdm-policy": "https://s/p.json"},'
                         b' {"location": "/*", "tdm-reservation": 0}]')
    assert rules[0].policy == "https://s/p.json"
    assert tdmrep_opt_out(rules, "http://s/reserved/doc") == ["tdmrep.json"]
    assert tdmrep_opt_out(rules, "http://s/open/doc") == []
    assert tdmrep_opt_out(parse_tdmrep(b'[{"location": "page$", "tdm-reservation": 1}]'), "http://s/page") == ["tdmrep.json"]


@pytest.mark.parametrize("body", [b"", b"<html>not json</html>", b'{"location": "/"}', b"[1, 2]", b"[" * 5000])
def test_tdmrep_garbage_is_no_rules(body) -> None:
    assert parse_tdmrep(body) == ()


def test_page_opt_out_combines_sorted_once() -> None:
    rules = parse_robots_ai_rules("User-agent: *\nContent-Signal: ai-train=no\n", TOKEN)
    found = page_opt_out("http://s/x", token=TOKEN, headers={"x-robots-tag": ["noai", "noai"]},
                         metas=[("robots", "noai"), ("tdm-reservation", "1")], robots=rules)
    assert found == ["meta-robots:noai", "robots.txt:content-signal:ai-train=no", "tdm-reservation:meta",
                     "x-robots-tag:noai"]


def test_params_reject_bad_values() -> None:
    with pytest.raises(ValueError):
        OptOutParams(tdmrep_timeout_s=0)


# -- glue ------------------------------------------------------------------------------------------------
def _response(url: str, body: str, headers: dict | None = None) -> HtmlResponse:
    return HtmlResponse(url, body=body.encode(), headers=headers or {}, encoding="utf-8",
                        request=Request(url))


def test_middleware_records_signals_in_meta_and_stats() -> None:
    crawler = get_crawler(settings_dict={})
    mw = AiOptOutMiddleware(OptOutParams(tdmrep=False), crawler=crawler)
    mw.robots["http://s"] = parse_robots_ai_rules("User-agent: *\nContent-Usage: /usage/ train-ai=n\n", TOKEN)
    mw.tdmrep["http://s"] = parse_tdmrep(b'[{"location": "/reserved/", "tdm-reservation": 1}]')
    request = Request("http://s/usage/a")
    page = '<html><head><meta name="robots" content="noai"></head><body>x</body></html>'
    mw.process_response(request, _response("http://s/usage/a", page, {"X-Robots-Tag": "noai"}))
    assert request.meta[OPT_OUT_META] == ["meta-robots:noai", "robots.txt:content-usage:train-ai=n",
                                          "x-robots-tag:noai"]
    request = Request("http://s/reserved/b")
    mw.process_response(request, _response("http://s/reserved/b", "<p>ok</p>", {"tdm-reservation": "1"}))
    assert request.meta[OPT_OUT_META] == ["tdm-reservation:header", "tdmrep.json"]
    request = Request("http://s/plain")
    mw.process_response(request, _response("http://s/plain", '<html><head><base href="http://[oops/"></head></html>'))
    assert request.meta[OPT_OUT_META] == []
    # infrastructure requests are not pages: nothing recorded
    request = Request("http://s/sitemap.xml", meta={"boilerstrip_kind": "sitemap"})
    mw.process_response(request, _response("http://s/sitemap.xml", "<urlset/>"))
    assert OPT_OUT_META not in request.meta


def test_middleware_is_off_with_its_setting() -> None:
    from scrapy.exceptions import NotConfigured

    with pytest.raises(NotConfigured):
        AiOptOutMiddleware.from_crawler(get_crawler(settings_dict={"BOILERSTRIP_OPTOUT_ENABLED": False}))


# -- our identity ----------------------------------------------------------------------------------------
#: product tokens of other crawlers that public AI-bot blocklists name (ai.robots.txt and the like)
OTHER_CRAWLERS = ("scrapy", "python-requests", "python-urllib", "curl", "wget", "gptbot", "chatgpt", "ccbot",
                  "claudebot", "anthropic", "google-extended", "googlebot", "bingbot", "bytespider",
                  "perplexitybot", "amazonbot", "applebot", "facebookbot", "meta-externalagent", "diffbot",
                  "omgili", "cohere", "ai2bot", "timpibot", "imagesiftbot", "headlesschrome")


def test_user_agent_names_no_other_crawler() -> None:
    # the crawl's real requests are checked too (test_export_crawl: every request the server logged)
    from boilerstrip import settings

    agent = settings.USER_AGENT.lower()
    assert agent.startswith(ROBOTS_TOKEN + "/")
    assert [t for t in OTHER_CRAWLERS if t in agent] == []


def test_robots_groups_for_other_crawlers_do_not_apply_to_us() -> None:
    # Protego matches group names as substrings of the token it is given: a group for "Scrapy" must not
    # catch us, a group for our own token must
    robots = Protego.parse("User-agent: Scrapy\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    assert robots.can_fetch("http://s/page", ROBOTS_TOKEN)
    robots = Protego.parse("User-agent: boilerstrip\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    assert not robots.can_fetch("http://s/page", ROBOTS_TOKEN)
