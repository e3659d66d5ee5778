"""Map ``BOILERSTRIP_<COMPONENT>_<NAME>`` settings onto frozen params dataclasses.

Every component keeps its thresholds in a frozen dataclass with documented defaults. This module is the
one place that reads them from Scrapy settings (or any mapping), coerces each value by the type of the
field's default, and rejects a bad value with an error that names the setting.

It imports nothing from Scrapy: a plain ``dict`` works as well as a ``Settings`` object.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["ConfigError", "params_from_settings", "setting_name", "component_enabled", "RENAMED_SETTINGS"]

P = TypeVar("P")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


#: setting -> its older name, still read when the setting itself is not set (one setting per concept: the
#: URL-length rule belongs to the trap rules, session-id stripping to URL normalisation)
RENAMED_SETTINGS = {
    "BOILERSTRIP_TRAPS_MAX_URL_CHARS": "BOILERSTRIP_URLS_MAX_URL_CHARS",
    "BOILERSTRIP_URLS_STRIP_SESSION_IDS": "BOILERSTRIP_TRAPS_STRIP_SESSION_IDS",
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
    """Build ``cls`` from settings named ``BOILERSTRIP_<COMPONENT>_<FIELD>``.

    Fields without a setting keep the dataclass default. ``overrides`` (plain values) win over settings.
    A value that cannot be coerced, or that the dataclass' ``__post_init__`` rejects, raises
    :class:`ConfigError` naming the setting.
    """
    kwargs: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not field.init:
            continue
        name = setting_name(component, field.name)
        raw = _get(settings, name)
        if raw is None and name in RENAMED_SETTINGS:
            name = RENAMED_SETTINGS[name]
            raw = _get(settings, name)
        if raw is None:
            continue
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = field.default_factory()  # type: ignore[misc]
        else:
            default = None
        kwargs[field.name] = _coerce(raw, default, name)
    kwargs.update(overrides)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{_blamed_setting(cls, component, str(exc))}: {exc}") from None


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
