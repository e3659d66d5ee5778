"""AI-training opt-out signals: what a site says about its pages being used to train AI, read from plain text.

Pure Python (no Scrapy): the crawl records what it found on every record (``ai_opt_out``, a sorted list of
signal names) and ``boilerstrip export`` leaves those pages out unless told otherwise. The thin glue is
:class:`boilerstrip.downloadermiddlewares.optout.AiOptOutMiddleware`.

Signals read, each named ``<where>:<what>`` on the record:

- ``robots.txt:content-signal:ai-train=no`` -- a ``Content-Signal: ai-train=no`` line (contentsignals.org)
  in the robots.txt group that applies to our token (or before any group);
- ``robots.txt:content-usage:train-ai=n`` (or ``...:train-genai=n``, ``...:bots=n``) -- a
  ``Content-Usage:`` line (IETF AI-preferences vocabulary), optionally scoped to a path prefix;
- ``meta-robots:noai`` -- ``noai`` in ``<meta name="robots">`` or ``<meta name="boilerstrip">``;
- ``x-robots-tag:noai`` -- ``noai`` in an ``X-Robots-Tag`` header (unprefixed or prefixed with our token);
- ``tdm-reservation:header`` / ``tdm-reservation:meta`` -- TDMRep ``tdm-reservation: 1``;
- ``tdmrep.json`` -- a matching rule with ``"tdm-reservation": 1`` in the site's ``/.well-known/tdmrep.json``.

Protego parses the Allow/Disallow rules; it ignores these lines, so they are read here with the same group
selection as RFC 9309 (a group naming our product token wins over ``*``; tokens compare case-insensitively).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

__all__ = [
    "OptOutParams", "RobotsAiRules", "TdmRepRule", "TDMREP_PATH", "parse_robots_ai_rules", "robots_opt_out",
    "meta_opt_out", "header_opt_out", "meta_robots_directives", "x_robots_directives", "robots_nofollow",
    "parse_tdmrep", "tdmrep_opt_out", "page_opt_out",
]

#: where TDMRep puts a site's policy file (W3C TDMRep, section 3.3)
TDMREP_PATH = "/.well-known/tdmrep.json"

#: Content-Signal values (contentsignals.org) that refuse AI training
_CONTENT_SIGNAL_NO = {"ai-train": ("no", "n", "false", "0")}
#: Content-Usage categories (IETF aipref vocabulary) whose "n" covers AI training: training itself,
#: generative-AI training (narrower) and all automated processing (broader)
_USAGE_TRAINING = ("train-ai", "train-genai", "bots")
_NOAI = "noai"
_LINE_RE = re.compile(r"^\s*([A-Za-z-]+)\s*:\s*(.*?)\s*$")
_PAIR_RE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)\s*=\s*([A-Za-z0-9_\"-]+)")


@dataclass(frozen=True)
class OptOutParams:
    # Fetch each site's /.well-known/tdmrep.json once (one extra request per site, not a page).
    tdmrep: bool = True
    # A tdmrep.json larger than this is not read (a policy list is a few hundred bytes; 64 KiB is generous).
    tdmrep_max_bytes: int = 64 * 1024
    # A tdmrep.json slower than this counts as absent (no reservation found): same order as robots.txt's.
    tdmrep_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if self.tdmrep_max_bytes < 256 or self.tdmrep_timeout_s <= 0:
            raise ValueError("tdmrep_max_bytes must be >= 256 and tdmrep_timeout_s > 0")


@dataclass(frozen=True)
class RobotsAiRules:
    """The AI-use lines of one robots.txt that apply to our token."""

    group: str | None = None  # the user-agent group they came from: our token, "*", or None (global lines)
    signals: tuple[str, ...] = ()  # site-wide opt-out signals (Content-Signal, unscoped Content-Usage)
    scoped: tuple[tuple[str, str], ...] = ()  # (path prefix, signal) for path-scoped Content-Usage lines


def _content_signal(value: str) -> list[str]:
    found = []
    for key, val in _PAIR_RE.findall(value):
        key, val = key.lower(), val.strip('"').lower()
        if val in _CONTENT_SIGNAL_NO.get(key, ()):
            found.append(f"robots.txt:content-signal:{key}={val}")
    return found


def _content_usage(value: str) -> tuple[str | None, list[str]]:
    """(path prefix or None, signals) of one Content-Usage value: ``[/path] train-ai=n, search=y``."""
    path = None
    first = value.split(None, 1)
    if first and first[0].startswith("/"):
        path, value = first[0], (first[1] if len(first) > 1 else "")
    prefs = {k.lower(): v.strip('"').lower() for k, v in _PAIR_RE.findall(value)}
    found = []
    for category in _USAGE_TRAINING:
        if prefs.get(category) == "n":
            # a narrower "y" wins over a broader "n" (bots=n, train-ai=y: training is allowed)
            if category == "bots" and prefs.get("train-ai") == "y":
                continue
            found.append(f"robots.txt:content-usage:{category}=n")
    return path, found


def parse_robots_ai_rules(text: str, token: str) -> RobotsAiRules:
    """The Content-Signal / Content-Usage lines of robots.txt ``text`` that apply to product ``token``.

    Groups are read as RFC 9309 reads them: consecutive ``User-agent`` lines open a group; the group naming
    ``token`` applies, else the ``*`` group; lines before the first group apply to everyone."""
    token = token.lower()
    groups: dict[str, list[tuple[str, str]]] = {}
    global_lines: list[tuple[str, str]] = []
    agents: list[str] = []
    in_agents = False
    for raw in text.lstrip("\ufeff").splitlines():
        line = raw.split("#", 1)[0]
        match = _LINE_RE.match(line)
        if not match:
            continue
        key, value = match.group(1).lower(), match.group(2)
        if key in ("user-agent", "useragent"):
            if not in_agents:
                agents = []
            agents.append(value.strip().lower())
            groups.setdefault(agents[-1], [])  # a group with no AI lines still shadows "*"
            in_agents = True
            continue
        in_agents = False
        if key not in ("content-signal", "content-usage"):
            continue
        target = [groups.setdefault(agent, []) for agent in agents] if agents else [global_lines]
        for lines in target:
            lines.append((key, value))
    group = token if token in groups else ("*" if "*" in groups else None)
    signals: list[str] = []
    scoped: list[tuple[str, str]] = []
    for key, value in global_lines + (groups.get(group, []) if group else []):
        if key == "content-signal":
            signals += _content_signal(value)
        else:
            path, found = _content_usage(value)
            if path is None or path == "/":
                signals += found
            else:
                scoped += [(path, s) for s in found]
    return RobotsAiRules(group=group, signals=tuple(dict.fromkeys(signals)), scoped=tuple(dict.fromkeys(scoped)))


def _path_of(url: str) -> str:
    parts = urlsplit(url)
    return unquote(parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _pattern_matches(pattern: str, path: str) -> bool:
    """robots.txt-style path pattern: a prefix, ``*`` any run of characters, a final ``$`` anchors the end."""
    anchored = pattern.endswith("$")
    body = re.escape(unquote(pattern[:-1] if anchored else pattern)).replace(r"\*", ".*")
    return re.match(body + ("$" if anchored else ""), path) is not None


def robots_opt_out(rules: RobotsAiRules | None, url: str) -> list[str]:
    if rules is None:
        return []
    found = list(rules.signals)
    if rules.scoped:
        path = _path_of(url)
        found += [signal for prefix, signal in rules.scoped if _pattern_matches(prefix, path)]
    return found


def _directives(value: str) -> set[str]:
    return {part.strip().lower() for part in re.split(r"[,\s]+", value) if part.strip()}


def meta_robots_directives(metas: Iterable[tuple[str, str]], token: str) -> set[str]:
    """The directives (lower case) of ``<meta name="robots">`` and ``<meta name="<token>">``: ours."""
    token = token.lower()
    found: set[str] = set()
    for name, content in metas:
        if (name or "").strip().lower() in ("robots", token):
            found |= _directives(content or "")
    return found


def x_robots_directives(values: Iterable[str], token: str) -> set[str]:
    """The directives (lower case) of ``X-Robots-Tag`` header values that apply to us: unprefixed, or
    prefixed with our token ("X-Robots-Tag: otherbot: noai" is for another crawler)."""
    token = token.lower()
    found: set[str] = set()
    for value in values:
        agent, sep, rest = value.partition(":")
        if sep and " " not in agent.strip() and "," not in agent:
            if agent.strip().lower() != token:
                continue
            value = rest
        found |= _directives(value)
    return found


def meta_opt_out(metas: Iterable[tuple[str, str]], token: str) -> list[str]:
    """Signals in ``<meta name=... content=...>`` pairs: robots/<token> ``noai``, ``tdm-reservation``."""
    metas = list(metas)
    found = ["meta-robots:noai"] if _NOAI in meta_robots_directives(metas, token) else []
    if any((name or "").strip().lower() == "tdm-reservation" and (content or "").strip() == "1" for name, content in metas):
        found.append("tdm-reservation:meta")
    return found


def header_opt_out(headers: Mapping[str, Iterable[str]], token: str) -> list[str]:
    """Signals in response headers (names lower-case): ``X-Robots-Tag: noai``, ``tdm-reservation: 1``."""
    found = ["x-robots-tag:noai"] if _NOAI in x_robots_directives(headers.get("x-robots-tag", ()), token) else []
    if any(v.strip() == "1" for v in headers.get("tdm-reservation", ())):
        found.append("tdm-reservation:header")
    return found


def robots_nofollow(metas: Iterable[tuple[str, str]], x_robots_tag: Iterable[str], token: str) -> str | None:
    """Where the page asks crawlers not to follow its links (``nofollow``, or ``none``: noindex, nofollow),
    ``"meta"`` or ``"header"``; None when it does not."""
    if {"nofollow", "none"} & meta_robots_directives(metas, token):
        return "meta"
    if {"nofollow", "none"} & x_robots_directives(x_robots_tag, token):
        return "header"
    return None


@dataclass(frozen=True)
class TdmRepRule:
    location: str  # path pattern (robots.txt syntax)
    reserved: bool  # "tdm-reservation": 1
    policy: str | None = None  # "tdm-policy" URL


def parse_tdmrep(body: bytes | str) -> tuple[TdmRepRule, ...]:
    """The rules of a ``tdmrep.json`` file (a JSON array of ``{location, tdm-reservation, tdm-policy}``);
    anything else is no rules at all (never raises)."""
    try:
        data = json.loads(body.decode("utf-8-sig", errors="replace") if isinstance(body, bytes) else body)
    except (ValueError, RecursionError):
        return ()
    if not isinstance(data, list):
        return ()
    rules = []
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("location"), str):
            continue
        reservation = entry.get("tdm-reservation")
        policy = entry.get("tdm-policy")
        rules.append(TdmRepRule(entry["location"].strip() or "/", reservation in (1, "1", True),
                                policy if isinstance(policy, str) else None))
    return tuple(rules)


def tdmrep_opt_out(rules: Iterable[TdmRepRule], url: str) -> list[str]:
    """The first rule whose location matches the URL's path decides (TDMRep evaluates them in order)."""
    path = _path_of(url)
    for rule in rules:
        location = rule.location if rule.location.startswith("/") else "/" + rule.location
        if _pattern_matches(location, path):
            return ["tdmrep.json"] if rule.reserved else []
    return []


def page_opt_out(url: str, *, token: str, headers: Mapping[str, Iterable[str]] | None = None,
                 metas: Iterable[tuple[str, str]] = (), robots: RobotsAiRules | None = None,
                 tdmrep: Iterable[TdmRepRule] = ()) -> list[str]:
    """Every opt-out signal that applies to the page at ``url``, sorted, each once."""
    found = robots_opt_out(robots, url) + tdmrep_opt_out(tdmrep, url)
    found += header_opt_out(headers or {}, token) + meta_opt_out(metas, token)
    return sorted(set(found))
