"""The crawl command's contract: argument checks, exit codes, profiles, and the Scrapy-native route."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from scrapy.settings import Settings

from _crawlsite import FAST, page, small_site
from boilerstrip.addons import PROFILES_PACKAGE, ProfileAddon, ProfileError, available_profiles, load_profile
from boilerstrip.demo.sitegen import SITE_DIR, expected_pages
from _incrawl import run_cli
from conftest import ROOT, Reply, read_jsonl, run_crawl
from test_crawl_demo import reasons


def cli(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "boilerstrip", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["crawl", "ftp://example.org/", "-o", "{tmp}/o.jsonl"], "not an http(s) URL"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "--max-pages", "0"], "--max-pages must be >= 1"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "--max-depth", "two"], "--max-depth expects a whole number"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "--profile", "turbo"], "unknown profile 'turbo'"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "--scope", "planet"], "--scope expects host or domain"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "-s", "nonsense"], "-s expects NAME=VALUE"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "-s", "BOILERSTRIP_CRAWL_MAX_PAGES=many"], "BOILERSTRIP_CRAWL_MAX_PAGES"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "-s", 'BOILERSTRIP_ROBOTS_PARAMS={"max_bytes": "lots"}'], "BOILERSTRIP_ROBOTS_PARAMS field max_bytes"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "-s", 'BOILERSTRIP_POLITENESS_PARAMS={"max_retries": -3}'], "max_retries must be >= 0"),
        # a former setting, or a typo: Scrapy would take any name and ignore it
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "-s", "BOILERSTRIP_POLITENESS_MAX_RETRIES=3"],
         "BOILERSTRIP_POLITENESS_MAX_RETRIES is not a setting: max_retries is a field of BOILERSTRIP_POLITENESS_PARAMS"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "-s", "BOILERSTRIP_CRAWL_MAX_PAGE=3"],
         "did you mean BOILERSTRIP_CRAWL_MAX_PAGES"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "-s", "BOILERSTRIP_ROBOTS_ENABLED=false"], "use ROBOTSTXT_OBEY"),
        (["crawl", "http://127.0.0.1:9/"], "no output file"),
        (["crawl", "-o", "{tmp}/o.jsonl"], "no start URL"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}"], "is a directory"),
        (["crawl", "http://127.0.0.1:9/", "-o", "/proc/boilerstrip/o.jsonl"], "cannot write to"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "--chunks", "{tmp}/o.jsonl"], "--chunks must name another file"),
        (["crawl", "http://127.0.0.1:9/", "-o", "{tmp}/o.jsonl", "--chunks", "{tmp}"], "is a directory"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, args, message) -> None:
    proc = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert message in lines[0]
    assert lines[0].startswith("boilerstrip crawl: ")


def test_unwritable_folder_is_refused_before_crawling(serve, tmp_path) -> None:
    if os.geteuid() == 0:
        target = "/proc/self/boilerstrip.jsonl"  # root can write anywhere a chmod would forbid
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = str(locked / "o.jsonl")
    server = serve(routes=small_site(n=1))
    proc = cli("crawl", server.url + "/", "-o", target)
    assert proc.returncode == 2
    assert "cannot write" in proc.stderr
    assert server.log == []  # nothing fetched


def test_profiles_are_data_and_documented() -> None:
    names = available_profiles()
    assert {"polite", "own-site", "test", "demo"} <= set(names)
    for name in names:
        module = __import__(f"{PROFILES_PACKAGE}.{name.replace('-', '_')}", fromlist=["x"])
        assert module.__doc__ and len(module.__doc__.split()) > 15, name
        values = load_profile(name)
        assert values and all(key.isupper() for key in values)
        for banned in ("ITEM_PIPELINES", "DOWNLOADER_MIDDLEWARES", "EXTENSIONS", "ROBOTSTXT_OBEY"):
            assert banned not in values, (name, banned)
    polite = load_profile("polite")
    assert polite["AUTOTHROTTLE_ENABLED"] is True
    assert polite["CONCURRENT_REQUESTS_PER_DOMAIN"] == 1 and polite["DOWNLOAD_DELAY"] == 1.0
    with pytest.raises(ProfileError):
        load_profile("../etc/passwd")


def test_profile_is_applied_below_project_spider_and_cmdline() -> None:
    settings = Settings()
    settings.set("BOILERSTRIP_PROFILE", "polite", priority="project")
    settings.set("RETRY_TIMES", 7, priority="project")  # project beats profile
    settings.set("DOWNLOAD_DELAY", 3.0, priority="spider")  # spider beats profile
    settings.set("CONCURRENT_REQUESTS_PER_DOMAIN", 4, priority="cmdline")  # -s beats profile
    ProfileAddon().update_settings(settings)
    assert settings.getint("RETRY_TIMES") == 7
    assert settings.getfloat("DOWNLOAD_DELAY") == 3.0
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 4
    assert settings.getbool("AUTOTHROTTLE_ENABLED") is True  # from the profile, over Scrapy's default
    assert settings.getpriority("AUTOTHROTTLE_ENABLED") == 15


def test_project_settings_leave_politeness_to_profiles() -> None:
    import boilerstrip.settings as project

    for key in load_profile("polite"):
        assert not hasattr(project, key), f"{key} in settings.py would override every profile"


def test_contact_goes_into_the_user_agent(serve, tmp_path) -> None:
    server = serve(routes=small_site(n=1))
    run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST,
              settings={"BOILERSTRIP_CONTACT": "mailto:ops@example.org"})
    agents = {e.headers.get("user-agent") for e in server.log}
    assert len(agents) == 1
    agent = agents.pop()
    assert agent.startswith("boilerstrip/") and agent.endswith("; mailto:ops@example.org)")


def test_scrapy_crawl_route_writes_the_same_schema(tmp_path) -> None:
    from boilerstrip.demo.server import SiteServer

    out = tmp_path / "native.jsonl"
    with SiteServer(root=SITE_DIR) as server:
        proc = run_cli(["crawl", "site", "-a", f"url={server.url}/", "-O", str(out), "-s", "BOILERSTRIP_PROFILE=test",
                        "-s", "LOG_LEVEL=WARNING"], scrapy=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = read_jsonl(out)
    assert {urlsplit(r["url"]).path for r in records} == expected_pages()
    from boilerstrip.items import EXPORT_FIELDS

    assert list(records[0]) == [f for f in EXPORT_FIELDS if f in records[0]]
    assert "html" not in records[0]


def test_non_html_skipped_by_content_type(serve, tmp_path) -> None:
    routes = small_site(n=1, extra={
        "/": page("home", ["/p1", "/download?id=3", "/feed"]),
        "/download": Reply(200, b"%PDF-1.4 " + b"x" * 4_000_000, (("Content-Type", "application/pdf"),)),
        "/feed": Reply(200, b"<rss></rss>", (("Content-Type", "application/rss+xml"),)),
    })
    server = serve(routes=routes)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=[*FAST, "--log-level", "INFO"])
    assert {urlsplit(r["url"]).path for r in records} == {"/", "/p1"}
    assert reasons(proc.stderr)["not_html"] == 2
    # the 4 MB PDF was stopped after its headers, not downloaded
    received = int(re.search(r"'downloader/response_bytes': (\d+)", proc.stderr).group(1))
    assert received < 100_000, received


def test_max_pages_and_max_depth(serve, tmp_path) -> None:
    chain = {"/": page("home", ["/a"]), "/a": page("a", ["/b"]), "/b": page("b", ["/c"]), "/c": page("c", [])}
    server = serve(routes=chain)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "d.jsonl", args=[*FAST, "--max-depth", "1"])
    assert {urlsplit(r["url"]).path for r in records} == {"/", "/a"}
    assert not server.hits("/b")
    assert reasons(proc.stderr)["max_depth"] == 1
    site = serve(routes=small_site(n=6))
    proc, records = run_crawl(site.url + "/", out=tmp_path / "p.jsonl", args=[*FAST, "--max-pages", "3"])
    assert len(records) == 3
    assert reasons(proc.stderr)["max_pages"] == 4
    assert len([e for e in site.log if e.path.startswith("/p")]) == 2


def test_offsite_links_not_followed(serve, tmp_path) -> None:
    other = serve(routes=small_site(n=1))
    server = serve(routes={"/": page("home", [other.url + "/", "/a"]), "/a": page("a", [])})
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert len(records) == 2
    assert other.log == []  # another port is another site
    assert reasons(proc.stderr)["offsite"] == 1


def test_demo_command_writes_jsonl(tmp_path) -> None:
    out = tmp_path / "demo.jsonl"
    proc = cli("demo", "-o", str(out), "--profile", "test")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"wrote {out}" in proc.stdout
    # its lines are named after the command the user ran (they said "boilerstrip crawl:")
    said = {line.split(":", 1)[0] for line in proc.stderr.splitlines() if line.startswith("boilerstrip ")}
    assert said == {"boilerstrip demo"}, proc.stderr[-2000:]
    assert "boilerstrip demo: finishing pass: " in proc.stderr
    records = read_jsonl(out)
    assert {urlsplit(r["url"]).path for r in records} == expected_pages()
    json.dumps(records)


def test_variants_sharing_a_canonical_make_one_record(serve, tmp_path) -> None:
    def variant(path, headers):
        html = ("<html lang='en'><head><title>A</title><link rel='canonical' href='/a'></head><body><main>"
                "<p>The same article whatever the query string says, with enough words to be a page.</p></main></body></html>")
        return Reply(200, html.encode(), (("Content-Type", "text/html"),))

    server = serve(routes={"/": page("home", ["/a?sort=new", "/a?sort=old"]), "/a": variant})
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    paths = sorted(urlsplit(r["url"]).path + ("?" + urlsplit(r["url"]).query if urlsplit(r["url"]).query else "") for r in records)
    assert len(records) == 2, paths  # home + one of the variants
    variants = [r for r in records if urlsplit(r["url"]).path == "/a"]
    assert variants[0]["canonical_url"] == server.url + "/a"
    assert reasons(proc.stderr)["duplicate_canonical"] == 1
    assert len(server.hits("/a")) == 2 and not [e for e in server.log if e.path == "/a"]


def test_tracking_parameters_are_configurable(serve, tmp_path) -> None:
    routes = {"/": page("home", ["/a?ref=home&utm_source=x", "/a"]), "/a": page("a", [])}
    server = serve(routes=routes)
    run_crawl(server.url + "/", out=tmp_path / "default.jsonl", args=FAST)
    assert sorted(e.path for e in server.hits("/a")) == ["/a", "/a?ref=home"]  # utm_ dropped, ref kept
    server = serve(routes=routes)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "ref.jsonl", args=FAST,
                              settings={"BOILERSTRIP_URLS_PARAMS": '{"tracking_params": ["ref", "fbclid"]}'})
    assert [e.path for e in server.hits("/a")] == ["/a"]
    assert len(records) == 2


def test_a_page_that_says_nofollow_is_read_and_its_links_are_not_followed(serve, tmp_path) -> None:
    # <meta name="robots" content="nofollow"> and X-Robots-Tag: nofollow (or none) for us were not read: every
    # link of such a page was followed. One for another crawler ("otherbot: nofollow") is not ours.
    def with_meta(title: str, links: list[str], content: str) -> Reply:
        reply = page(title, links)
        return Reply(200, reply.body.replace(b"</title>", f'</title><meta name="robots" content="{content}">'.encode()),
                     reply.headers)

    def with_header(title: str, links: list[str], value: str) -> Reply:
        reply = page(title, links)
        return Reply(200, reply.body, (*reply.headers, ("X-Robots-Tag", value)))

    routes = {"/": page("Home", ["/meta", "/header", "/other", "/own"]),
              "/meta": with_meta("Meta", ["/m1"], "index, nofollow"),
              "/header": with_header("Header", ["/h1"], "none"),
              "/other": with_header("Other", ["/o1"], "otherbot: nofollow"),
              "/own": with_header("Own", ["/b1"], "boilerstrip: noindex, nofollow"),
              **{f"/{name}": page(name.upper()) for name in ("m1", "h1", "o1", "b1")}}
    server = serve(routes=routes)
    proc, records = run_crawl(server.url + "/", out=tmp_path / "o.jsonl", args=FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    by_path = {urlsplit(r["url"]).path: r for r in records}
    assert set(by_path) == {"/", "/meta", "/header", "/other", "/own", "/o1"}, sorted(by_path)
    assert not server.hits("/m1") and not server.hits("/h1") and not server.hits("/b1")
    assert "robots_nofollow:meta" in by_path["/meta"]["flags"] and "robots_nofollow:header" in by_path["/header"]["flags"]
    assert not any(f.startswith("robots_nofollow") for f in by_path["/other"].get("flags") or [])
    # a crawl told not to obey it follows them
    proc, records = run_crawl(server.url + "/", out=tmp_path / "all.jsonl", args=FAST,
                              settings={"BOILERSTRIP_CRAWL_PARAMS": '{"obey_nofollow": false}'})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {"/m1", "/h1", "/b1"} <= {urlsplit(r["url"]).path for r in records}


def test_a_start_url_that_is_a_sitemap_is_read_as_one(serve, tmp_path) -> None:
    # a sitemap given as the start URL was filtered:not_html and nothing was crawled (--no-sitemaps or a
    # sitemap at a path no robots.txt names)
    import gzip

    def urlset(*paths: str) -> bytes:
        locs = "".join(f"<url><loc>{path}</loc></url>" for path in paths)
        return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'.encode()

    routes = {"/maps/docs.xml": Reply(200, urlset("/a", "/b"), (("Content-Type", "application/xml"),)),
              "/maps/more.xml.gz": Reply(200, gzip.compress(urlset("/c")), (("Content-Type", "application/gzip"),)),
              "/feed.xml": Reply(200, b"<?xml version='1.0'?><rss><channel><title>news</title></channel></rss>",
                                 (("Content-Type", "application/rss+xml"),)),
              **{f"/{name}": page(name.upper()) for name in ("a", "b", "c")}}
    server = serve(routes=routes)
    starts = [server.url + path for path in ("/maps/docs.xml", "/maps/more.xml.gz", "/feed.xml")]
    proc, records = run_crawl(*starts, out=tmp_path / "o.jsonl", args=[*FAST, "--no-sitemaps"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(urlsplit(r["url"]).path for r in records) == ["/a", "/b", "/c"]
    ledger = {e["url"]: e for e in read_jsonl(tmp_path / "o.ledger.jsonl")}
    assert ledger[starts[0]]["reason"] == "sitemap" and ledger[starts[0]]["detail"] == "read as a sitemap: 2 request(s)"
    assert ledger[starts[1]]["reason"] == "sitemap"
    assert (ledger[starts[2]]["outcome"], ledger[starts[2]]["reason"]) == ("filtered", "not_html")  # XML, no sitemap


def test_scrapy_crawl_with_credentials_in_its_url_says_how_to_send_them(caplog) -> None:
    from boilerstrip.spiders.site import SiteSpider

    with caplog.at_level("WARNING", logger="boilerstrip.spiders.site"):
        spider = SiteSpider(url="http://ann:secret@127.0.0.1:9/")
    assert spider.start_urls == ["http://127.0.0.1:9/"]  # the normal form holds no password
    assert "give -s HTTPAUTH_USER=... -s HTTPAUTH_PASS=... -s HTTPAUTH_DOMAIN=HOST[:PORT]" in caplog.text
    assert "secret" not in caplog.text
