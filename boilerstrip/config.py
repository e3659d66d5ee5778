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

A hook given at several priorities is merged field by field (:class:`ParamsLayers`): the profile's
fields, then the project's, then the command line's on top, so ``-s`` can change one field of a profile's
politeness params and keep the rest. :func:`unknown_settings` names every ``BOILERSTRIP_*`` name that is
no setting (Scrapy takes any name): the crawl checks it at start-up.

It imports nothing from Scrapy: a plain ``dict`` works as well as a ``Settings`` object.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import json
import re
import tomllib
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["ConfigError", "params_from_settings", "setting_name", "component_enabled", "USER_FIELDS",
           "PARAMS_CLASSES", "PRESETS", "ENABLED_COMPONENTS", "NAMED_SETTINGS", "REPLACED_SETTINGS", "load_params_hook",
           "ParamsLayers", "is_params_hook", "stack_params_hooks", "user_settings", "unknown_settings"]

P = TypeVar("P")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


#: component -> the fields read as settings of their own (``BOILERSTRIP_<COMPONENT>_<FIELD>``). Every other
#: field of a listed component is a tuned threshold: reach it through ``BOILERSTRIP_<COMPONENT>_PARAMS``.
#: A user-level setting is one a user reasons about without reading the code: what to crawl and how much,
#: what to keep, where things go, who is who in a distributed crawl. Budgets, timings, caps and the policy
#: details of a component are its params (the profiles set the politeness and robots ones as a whole).
USER_FIELDS: dict[str, frozenset[str]] = {
    # the extractor: which rungs, comments, captions; how many workers read pages (WorkerPoolParams)
    "extraction": frozenset({"method", "comments", "keep_captions", "workers"}),
    "check": frozenset(),
    # duplicates: what happens to them; the MinHash recipe, its floor and Jaccard cut are thresholds
    "duplicates": frozenset({"mode", "drop_near"}),
    # cross-page boilerplate: only its switch; the block source, when to clean and the template floors are params
    "boilerplate": frozenset(),
    # rendering: the policy and what a site needs (its browser, what to wait for, its CDN); the browser's
    # limits, the decision's thresholds and the content wait's timings are params
    "render": frozenset({"mode", "patterns", "browser_path", "wait_selector", "subrequest_hosts"}),
    # distributed crawls: where and who (set by `crawl --redis` and `worker`); budget, lease and timings are params
    "distributed": frozenset({"redis_url", "crawl_id", "worker_id"}),
    # the crawl: scope, budgets and sitemaps; the sitemap size and nesting limits are safety values
    "crawl": frozenset({"scope", "max_pages", "max_depth", "sitemaps"}),
    "politeness": frozenset(),
    "optout": frozenset(),
    "recrawl": frozenset({"changes_only"}),
    "feeds": frozenset({"resume", "trail"}),
    "warc": frozenset({"dir"}),
    "ledger": frozenset(),
    "progress": frozenset(),
    "robots": frozenset(),
    "traps": frozenset(),
    # scope: the private hosts a crawl may reach (--allow-private)
    "scope": frozenset({"allow_private"}),
    "urls": frozenset(),
    "compression": frozenset(),
    # state: where it lives and which backend (a dotted path) keeps it
    "state": frozenset({"dir", "backend"}),
}

#: component -> every params class read under it (``module:Class``), the preset's first. The params hook's
#: field names are checked against all of them (a name no class has is an error), and the start-up check
#: (:func:`unknown_settings`) names the hook a former setting moved to. tests/test_docs_settings.py checks
#: this table against the ``params_from_settings`` calls in the source.
PARAMS_CLASSES: dict[str, tuple[str, ...]] = {
    "extraction": ("boilerstrip.extraction.params:ExtractionParams", "boilerstrip.workers.pool:WorkerPoolParams"),
    "check": ("boilerstrip.check.params:CheckParams",),
    "duplicates": ("boilerstrip.boilerplate.params:DuplicateParams",),
    "boilerplate": ("boilerstrip.boilerplate.params:BoilerplateParams",
                    "boilerstrip.pipelines.boilerplate:CrossPageRunParams"),
    "render": ("boilerstrip.rendering.params:BrowserParams", "boilerstrip.rendering.params:RenderParams",
               "boilerstrip.rendering.params:HostLearnParams"),
    "distributed": ("boilerstrip.distributed.params:DistributedParams",),
    "crawl": ("boilerstrip.spiders.site:CrawlParams",),
    "politeness": ("boilerstrip.politeness:PolitenessParams",),
    "optout": ("boilerstrip.optout:OptOutParams",),
    "recrawl": ("boilerstrip.recrawl:RecrawlParams",),
    "feeds": ("boilerstrip.feeds:FeedParams",),
    "warc": ("boilerstrip.warc.params:WarcParams",),
    "ledger": ("boilerstrip.ledger.rules:LedgerParams",),
    "progress": ("boilerstrip.extensions.progress:ProgressParams",),
    "robots": ("boilerstrip.politeness:RobotsParams",),
    "traps": ("boilerstrip.safety.traps:TrapParams",),
    "scope": ("boilerstrip.scope:ScopeParams",),
    "urls": ("boilerstrip.urls:UrlParams",),
    "compression": ("boilerstrip.downloadermiddlewares.compression:CompressionParams",),
    "state": ("boilerstrip.state.open:StateParams",),
}

#: component -> its preset table (``BOILERSTRIP_<COMPONENT>_PRESET``), applied to its first params class
PRESETS: dict[str, str] = {"extraction": "boilerstrip.extraction.params:EXTRACTION_PRESETS"}

#: the components with an on/off switch ``BOILERSTRIP_<COMPONENT>_ENABLED`` (NotConfigured when off)
ENABLED_COMPONENTS = ("extraction", "boilerplate", "duplicates", "finishing", "scope", "traps", "politeness",
                      "optout", "htmlonly", "finalize", "progress", "ledger", "recrawl")

#: settings read by name, not as a params field
NAMED_SETTINGS = frozenset({"BOILERSTRIP_PROFILE", "BOILERSTRIP_CONTACT", "BOILERSTRIP_EXTRACTION_MARKDOWN"})

#: settings that are gone, with the one knob that holds their meaning now (not a params field: those the
#: start-up check finds in :data:`PARAMS_CLASSES`)
REPLACED_SETTINGS = {
    "BOILERSTRIP_ROBOTS_ENABLED": "ROBOTSTXT_OBEY (Scrapy's own switch; false: robots.txt is not obeyed)",
    "BOILERSTRIP_COMPRESSION_ENABLED": "COMPRESSION_ENABLED (Scrapy's own switch; false: bodies are not decoded)",
    "BOILERSTRIP_RENDER_ENABLED": "BOILERSTRIP_RENDER_MODE=never (static only: no browser is configured)",
}


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
    listed = PARAMS_CLASSES.get(component, ())
    kwargs: dict[str, Any] = {}
    if component in PRESETS and listed and listed[0].rpartition(":")[2] == cls.__name__:
        kwargs.update(_preset(settings, component, PRESETS[component]))
    kwargs.update(_hook_values(settings, component, cls, fields))
    for field in fields.values():
        name = setting_name(component, field.name)
        raw = _get(settings, name)
        if raw is None:
            continue
        if user is not None and field.name not in user:
            raise ConfigError(_moved_to_hook(name) or f"{name} is not a setting: {field.name} is a field of "
                              f"{setting_name(component, 'params')} (a JSON/TOML file or a dotted path, docs/settings.md)")
        kwargs[field.name] = _coerce(raw, _default(field), name)
    kwargs.update(overrides)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{_blamed_setting(cls, component, str(exc))}: {exc}") from None


@functools.lru_cache(maxsize=None)
def _hook_fields(component: str) -> frozenset[str]:
    """The field names of every params class read under ``component`` (empty for one not in the table). Asked
    only when a hook names a field the class being built lacks: the classes' modules load then, not before."""
    names: set[str] = set()
    for path in PARAMS_CLASSES.get(component, ()):
        module, _, attr = path.partition(":")
        names |= {f.name for f in dataclasses.fields(getattr(importlib.import_module(module), attr)) if f.init}
    return frozenset(names)


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


class ParamsLayers(tuple):
    """A params hook given at several priorities, lowest first (the profile's, the project's, the command
    line's...): each layer's fields are laid over the ones below, field by field. Built by
    :func:`stack_params_hooks` where a hook meets a hook already set; read by :func:`params_from_settings`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ParamsLayers({list(self)!r})"


def is_params_hook(name: str) -> bool:
    return name.startswith("BOILERSTRIP_") and name.endswith("_PARAMS")


def stack_params_hooks(lower: Any, higher: Any) -> ParamsLayers:
    """``higher``'s fields over ``lower``'s: a ``-s BOILERSTRIP_ROBOTS_PARAMS='{"fetch_timeout_s": 5}'`` changes
    that one field of the profile's robots params and keeps the others. Unset values (None, "") vanish."""
    layers: list[Any] = []
    for value in (lower, higher):
        if isinstance(value, ParamsLayers):
            layers.extend(value)
        elif value is not None and value != "":
            layers.append(value)
    return ParamsLayers(layers)


def _hook_values(settings: Any, component: str, cls: type, fields: dict[str, dataclasses.Field]) -> dict[str, Any]:
    """The fields of ``cls`` the params hook sets, layer over layer; a name no params class of the component
    has is an error."""
    name = setting_name(component, "params")
    raw = _get(settings, name)
    if raw is None or raw == "":
        return {}
    out: dict[str, Any] = {}
    for layer in raw if isinstance(raw, ParamsLayers) else (raw,):
        out.update(_layer_values(load_params_hook(layer, name), name, component, cls, fields))
    return out


def _layer_values(loaded: Any, name: str, component: str, cls: type,
                  fields: dict[str, dataclasses.Field]) -> dict[str, Any]:
    if dataclasses.is_dataclass(loaded) and not isinstance(loaded, type):
        if not isinstance(loaded, cls):
            # another params class of the component (render's three) leaves this one at its defaults
            others = {f.name for f in dataclasses.fields(loaded)}
            if not others <= set(fields) | _hook_fields(component):
                raise ConfigError(f"{name}: expected a {cls.__name__}, got a {type(loaded).__name__}")
            return {}
        return {f: getattr(loaded, f) for f in fields}
    if not isinstance(loaded, Mapping):
        raise ConfigError(f"{name}: expected a mapping of field names to values or a {cls.__name__}, got {loaded!r}")
    out: dict[str, Any] = {}
    for key, raw_value in loaded.items():
        if key not in fields:
            if key not in _hook_fields(component):
                raise ConfigError(f"{name}: {key!r} is not a field of {cls.__name__}")
            continue
        out[key] = _coerce(raw_value, _default(fields[key]), f"{name} field {key}")
    return out


def user_settings() -> set[str]:
    """Every ``BOILERSTRIP_*`` setting there is: the switches, the user-level fields, the params hooks, the
    presets and the settings read by name. docs/settings.md lists exactly these (a test checks)."""
    names = set(NAMED_SETTINGS)
    names |= {setting_name(component, "enabled") for component in ENABLED_COMPONENTS}
    names |= {setting_name(component, field) for component, fields in USER_FIELDS.items() for field in fields}
    names |= {setting_name(component, "params") for component in PARAMS_CLASSES}
    names |= {setting_name(component, "preset") for component in PRESETS}
    return names


def unknown_settings(names: Any) -> list[str]:
    """One line for each ``BOILERSTRIP_*`` name in ``names`` that is no setting: where a former setting went
    (a field of a params hook, or the Scrapy setting that replaced it), else the closest real names.
    Scrapy takes any name, so without this a typo or a removed setting would be silently ignored."""
    known = user_settings()
    problems: list[str] = []
    for name in sorted(n for n in names if isinstance(n, str) and n.startswith("BOILERSTRIP_") and n not in known):
        if name in REPLACED_SETTINGS:
            problems.append(f"{name} is not a setting any more: use {REPLACED_SETTINGS[name]}")
            continue
        moved = _moved_to_hook(name)
        if moved:
            problems.append(moved)
            continue
        tails = {n.removeprefix("BOILERSTRIP_"): n for n in sorted(known)}
        close = [tails[t] for t in difflib.get_close_matches(name.removeprefix("BOILERSTRIP_"), tails, n=2, cutoff=0.75)]
        hint = f"; did you mean {' or '.join(close)}?" if close else " (docs/settings.md lists them all)"
        problems.append(f"{name} is not a boilerstrip setting{hint}")
    return problems


def _moved_to_hook(name: str) -> str | None:
    """'X is not a setting: f is a field of the component's params hook' when ``name`` is a field of a component's params."""
    for component in sorted(PARAMS_CLASSES, key=len, reverse=True):
        prefix = f"BOILERSTRIP_{component.upper()}_"
        field = name[len(prefix):].lower() if name.startswith(prefix) else ""
        if field and field in _hook_fields(component):
            hook = setting_name(component, "params")
            return (f"{name} is not a setting: {field} is a field of {hook} "
                    f"(e.g. -s '{hook}={{\"{field}\": ...}}', or a JSON/TOML file; docs/settings.md)")
    return None


def _blamed_setting(cls: type, component: str, message: str) -> str:
    """The setting a validation message is about: the longest field name it mentions, else the wildcard."""
    names = sorted((f.name for f in dataclasses.fields(cls) if f.init), key=len, reverse=True)
    user = USER_FIELDS.get(component)
    for name in names:
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message):
            if user is not None and name not in user:
                return f"{setting_name(component, 'params')} field {name}"
            return setting_name(component, name)
    return f"BOILERSTRIP_{component.upper()}_*"


def component_enabled(settings: Any, component: str, default: bool = True) -> bool:
    """Read ``BOILERSTRIP_<COMPONENT>_ENABLED`` (a component raises NotConfigured when it is false)."""
    name = setting_name(component, "enabled")
    raw = _get(settings, name)
    if raw is None:
        return default
    return _coerce(raw, True, name)
