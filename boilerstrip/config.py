"""Map ``BOILERSTRIP_<COMPONENT>_<NAME>`` settings onto frozen params dataclasses.

Every component keeps its thresholds in a frozen dataclass with documented defaults. This module is the
one place that reads them from Scrapy settings (or any mapping), coerces each value by the type of the
field's default, and rejects a bad value with an error that names the setting.

Not every field is a setting. A component listed in :data:`USER_FIELDS` reads only those fields one by one
(the knobs a user reasons about); its tuned thresholds are reached as a whole through one params hook,
``BOILERSTRIP_<COMPONENT>_PARAMS``: a dotted path to a params object or a mapping, a mapping itself, or the
path of a JSON or TOML file holding a mapping of field names to values. A component whose params class
has a ``PRESETS``-style table (extraction) also takes ``BOILERSTRIP_<COMPONENT>_PRESET``. Precedence, low to
high: the dataclass defaults, the preset, the params hook, the user-level settings, explicit overrides.
A threshold set as a setting of its own is refused with an error that says where it went.

It imports nothing from Scrapy: a plain ``dict`` works as well as a ``Settings`` object.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import tomllib
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["ConfigError", "params_from_settings", "setting_name", "component_enabled", "USER_FIELDS", "HOOKS",
           "PRESETS", "load_params_hook"]

P = TypeVar("P")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


#: component -> the fields read as settings of their own (``BOILERSTRIP_<COMPONENT>_<FIELD>``). Every other
#: field of a listed component is a tuned threshold: reach it through ``BOILERSTRIP_<COMPONENT>_PARAMS``.
USER_FIELDS: dict[str, frozenset[str]] = {
    # the extractor: which rungs, comments, captions; the worker pool that runs it (WorkerPoolParams)
    "extraction": frozenset({"method", "comments", "keep_captions", "bodytext_include_tags", "bodytext_exclude_tags",
                             "workers", "pool"}),
    # boilerstrip check: only thresholds
    "check": frozenset(),
    # duplicates: what happens to them; the MinHash recipe and its floors are thresholds
    "duplicates": frozenset({"mode", "drop_near", "near_min_jaccard"}),
    # cross-page boilerplate: where the blocks come from, when to clean, the two core thresholds
    "boilerplate": frozenset({"source", "clean_during_crawl", "min_pages", "min_share_of_pages"}),
    # rendering: the policy and the browser's user-facing limits; the decision's thresholds and the
    # content wait's timings are tuned values
    "render": frozenset({"mode", "patterns", "browser_path", "wait_selector", "max_render_ms", "max_contexts",
                         "max_browser_memory_mib", "blocked_resource_types", "subrequest_hosts", "learn_enabled"}),
    # distributed crawls: where, who, the budget and the shared lease; the polling and lease timings are tuned
    "distributed": frozenset({"redis_url", "crawl_id", "worker_id", "heartbeat_ttl_s", "max_pages", "lease_enabled"}),
    # the crawl: scope, budgets and sitemaps; the sitemap size and nesting limits are safety values
    "crawl": frozenset({"scope", "max_pages", "max_depth", "sitemaps"}),
    # politeness: the knobs the profiles set; the statuses that throttle and the back-off jitter are tuned
    "politeness": frozenset({"max_crawl_delay_s", "max_retry_after_s", "retry_backoff_base_s", "max_backoff_s",
                             "max_retries"}),
    "optout": frozenset({"tdmrep"}),
    "recrawl": frozenset({"conditional", "trust_lastmod", "changes_only"}),
    "feeds": frozenset({"resume", "trail"}),
    # crawl --warc: where and how large a file; the file name prefix is reached through the params hook
    "warc": frozenset({"dir", "max_file_bytes"}),
    "ledger": frozenset({"fail_on_mismatch"}),
    "progress": frozenset(),
    # robots.txt: how long to wait for it and how often to try an unreachable one (the profiles set these);
    # the size and redirect caps are safety values
    "robots": frozenset({"fetch_timeout_s", "unreachable_retry_s", "unreachable_max_fetches"}),
    # traps: the budgets a user sizes to the site; segment repeats and out-links per page are tuned
    "traps": frozenset({"max_depth", "max_pages_per_host", "max_urls_per_pattern", "max_url_chars"}),
    # scope: the private hosts a crawl may reach (--allow-private); the offsite mode and the early lookup are
    # debugging switches
    "scope": frozenset({"allow_private"}),
    # URLs: the tracking parameters a site adds; the prefixes and session-id stripping are tuned rules
    "urls": frozenset({"tracking_params"}),
    "compression": frozenset({"keep_partial"}),
    # state: where it lives and which backend (a dotted path) keeps it
    "state": frozenset({"dir", "backend"}),
}

#: component -> (its params classes as ``module:Class``, the first the preset's; its preset table or None).
#: The hook's field names are checked against all of them (a name no class has is an error); a class read
#: under the component but not listed (the worker pool under "extraction") takes the fields it has.
HOOKS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "extraction": (("boilerstrip.extraction.params:ExtractionParams",), "boilerstrip.extraction.params:EXTRACTION_PRESETS"),
    "check": (("boilerstrip.check.params:CheckParams",), None),
    "duplicates": (("boilerstrip.boilerplate.params:DuplicateParams",), None),
    "boilerplate": (("boilerstrip.boilerplate.params:BoilerplateParams",), None),
    "render": (("boilerstrip.rendering.params:BrowserParams", "boilerstrip.rendering.params:RenderParams",
                "boilerstrip.rendering.params:HostLearnParams"), None),
}
PRESETS = {component: table for component, (_classes, table) in HOOKS.items() if table}


class ConfigError(ValueError):
    """A setting has a value its component cannot use; the message names the setting."""


def setting_name(component: str, field_name: str) -> str:
    return f"BOILERSTRIP_{component.upper()}_{field_name.upper()}"


def _get(settings: Any, name: str) -> Any:
    if isinstance(settings, Mapping):
        return settings.get(name)
    return settings.get(name)  # scrapy.settings.BaseSettings


def _coerce(raw: Any, default: Any, name: str) -> Any:
    if isinstance(default, bool):
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, int) and raw in (0, 1):
            return bool(raw)
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ConfigError(f"{name}: expected a boolean (true/false), got {raw!r}")
    if isinstance(default, int):
        try:
            if isinstance(raw, float) and not raw.is_integer():
                raise ValueError
            return int(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"{name}: expected a whole number, got {raw!r}") from None
    if isinstance(default, float):
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"{name}: expected a number, got {raw!r}") from None
    if isinstance(default, (tuple, frozenset)):
        if isinstance(raw, str):
            text = raw.strip()
            if text.startswith("["):
                try:
                    items = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"{name}: not a JSON list: {exc}") from None
            else:
                items = [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]
        elif isinstance(raw, (list, tuple, set, frozenset)):
            items = list(raw)
        else:
            raise ConfigError(f"{name}: expected a list (comma-separated or JSON), got {raw!r}")
        return type(default)(items)
    if isinstance(default, dict):
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{name}: not a JSON object: {exc}") from None
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{name}: expected a mapping, got {raw!r}")
        return dict(raw)
    if default is None or isinstance(default, str):
        return None if raw is None else str(raw)
    return raw


def params_from_settings(settings: Any, component: str, cls: type[P], **overrides: Any) -> P:
    """Build ``cls`` from the preset, the params hook and the settings named ``BOILERSTRIP_<COMPONENT>_<FIELD>``
    (see the module docstring for which fields are settings and the order).

    Fields without a value keep the dataclass default. ``overrides`` (plain values) win over settings.
    A value that cannot be coerced, or that the dataclass' ``__post_init__`` rejects, raises
    :class:`ConfigError` naming the setting (and the field, for the hook).
    """
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    user = USER_FIELDS.get(component)
    listed, presets = HOOKS.get(component, ((), None))
    names = [path.rpartition(":")[2] for path in listed]
    kwargs: dict[str, Any] = {}
    if presets is not None and names and cls.__name__ == names[0]:
        kwargs.update(_preset(settings, component, presets))
    known: set[str] | None = set(fields)  # the field names the hook may hold (None: any)
    if listed and cls.__name__ in names:
        for path in listed:
            module, _, attr = path.partition(":")
            known |= {f.name for f in dataclasses.fields(getattr(importlib.import_module(module), attr))}
    elif listed:
        known = None  # a class the component's hook is not for: it takes what it has
    kwargs.update(_hook_values(settings, component, cls, fields, known))
    for field in fields.values():
        name = setting_name(component, field.name)
        raw = _get(settings, name)
        if raw is None:
            continue
        if user is not None and field.name not in user:
            raise ConfigError(f"{name} is not a setting: {field.name} is a tuned threshold; set it in "
                              f"{setting_name(component, 'params')} (a JSON/TOML file or a dotted path, docs/settings.md)")
        kwargs[field.name] = _coerce(raw, _default(field), name)
    kwargs.update(overrides)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{_blamed_setting(cls, component, str(exc))}: {exc}") from None


def _default(field: dataclasses.Field) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return field.default_factory()  # type: ignore[misc]
    return None


def _preset(settings: Any, component: str, table_path: str) -> dict[str, Any]:
    name = setting_name(component, "preset")
    raw = _get(settings, name)
    if raw is None or raw == "":
        return {}
    module, _, attr = table_path.partition(":")
    table = getattr(importlib.import_module(module), attr)
    if str(raw) not in table:
        raise ConfigError(f"{name}: expected one of {', '.join(table)}, got {raw!r}")
    return dict(table[str(raw)])


def load_params_hook(value: Any, name: str) -> Any:
    """What a ``BOILERSTRIP_<COMPONENT>_PARAMS`` value stands for: a mapping or a params object. ``value`` is
    a mapping or params object itself, a ``.json``/``.toml`` file path, or a dotted path (``pkg.mod.NAME``
    or ``pkg.mod:NAME``). ConfigError naming ``name`` when it cannot be read."""
    if isinstance(value, Mapping) or dataclasses.is_dataclass(value):
        return value
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{name}: expected a JSON/TOML file path or a dotted path, got {value!r}")
    text = value.strip()
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{name}: not a JSON object: {exc}") from None
    if text.endswith((".json", ".toml")):
        try:
            data = open(text, "rb").read()  # noqa: SIM115 - one read
        except OSError as exc:
            raise ConfigError(f"{name}: cannot read {text}: {exc.strerror}") from None
        try:
            loaded = tomllib.loads(data.decode("utf-8")) if text.endswith(".toml") else json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{name}: {text} is not valid {'TOML' if text.endswith('.toml') else 'JSON'}: {exc}") from None
        if not isinstance(loaded, Mapping):
            raise ConfigError(f"{name}: {text} must hold an object of field names and values")
        return loaded
    module, sep, attr = text.partition(":") if ":" in text else text.rpartition(".")
    if not sep or not module or not attr:
        raise ConfigError(f"{name}: expected a JSON/TOML file path or a dotted path, got {value!r}")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{name}: cannot import {text}: {exc}") from None


def _hook_values(settings: Any, component: str, cls: type, fields: dict[str, dataclasses.Field],
                 known: set[str] | None) -> dict[str, Any]:
    """The fields of ``cls`` the params hook sets; a name outside ``known`` is an error (None: no check)."""
    name = setting_name(component, "params")
    raw = _get(settings, name)
    if raw is None or raw == "":
        return {}
    loaded = load_params_hook(raw, name)
    if dataclasses.is_dataclass(loaded) and not isinstance(loaded, type):
        if not isinstance(loaded, cls):
            # another params class of the component (render's three) leaves this one at its defaults
            others = {f.name for f in dataclasses.fields(loaded)}
            if known is not None and not others <= known:
                raise ConfigError(f"{name}: expected a {cls.__name__}, got a {type(loaded).__name__}")
            return {}
        return {f: getattr(loaded, f) for f in fields}
    if not isinstance(loaded, Mapping):
        raise ConfigError(f"{name}: expected a mapping of field names to values or a {cls.__name__}, got {loaded!r}")
    out: dict[str, Any] = {}
    for key, raw_value in loaded.items():
        if key not in fields:
            if known is not None and key not in known:
                raise ConfigError(f"{name}: {key!r} is not a field of {cls.__name__}")
            continue
        out[key] = _coerce(raw_value, _default(fields[key]), f"{name} field {key}")
    return out


def _blamed_setting(cls: type, component: str, message: str) -> str:
    """The setting a validation message is about: the longest field name it mentions, else the wildcard."""
    names = sorted((f.name for f in dataclasses.fields(cls) if f.init), key=len, reverse=True)
    for name in names:
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message):
            return setting_name(component, name)
    return f"BOILERSTRIP_{component.upper()}_*"


def component_enabled(settings: Any, component: str, default: bool = True) -> bool:
    """Read ``BOILERSTRIP_<COMPONENT>_ENABLED`` (a component raises NotConfigured when it is false)."""
    name = setting_name(component, "enabled")
    raw = _get(settings, name)
    if raw is None:
        return default
    return _coerce(raw, True, name)
