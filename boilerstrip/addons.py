"""Settings profiles: data-only modules in ``settings_profiles/`` applied *below* every other source.

``BOILERSTRIP_PROFILE`` names the profile (``polite`` by default; ``--profile NAME`` on the command line).
:class:`ProfileAddon` (registered in ``ADDONS``) loads ``settings_profiles/<name>.py`` and sets each of its
UPPERCASE names at Scrapy's ``addon`` priority (15): above Scrapy's defaults, below the project's
``settings.py`` (20), the spider's ``custom_settings`` (30) and ``-s`` on the command line (40).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from boilerstrip.config import ConfigError, is_params_hook, stack_params_hooks, unknown_settings

__all__ = ["ProfileAddon", "ProfileError", "load_profile", "available_profiles", "PROFILES_PACKAGE", "set_setting",
           "check_setting_names"]

PROFILES_PACKAGE = "boilerstrip.profiles"  # the settings_profiles/ folder (a symlink to it in the source tree)
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


class ProfileError(ValueError):
    """An unknown or malformed profile; the message is one line meant for the user."""


def available_profiles() -> list[str]:
    package = importlib.import_module(PROFILES_PACKAGE)
    folder = Path(package.__file__).parent  # type: ignore[arg-type]
    return sorted(p.stem.replace("_", "-") for p in folder.glob("*.py") if not p.stem.startswith("_"))


def _module(name: str) -> ModuleType:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ProfileError(f"bad profile name {name!r} (expected one of: {', '.join(available_profiles())})")
    module_name = f"{PROFILES_PACKAGE}.{name.replace('-', '_')}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name not in (module_name, PROFILES_PACKAGE):
            raise
        raise ProfileError(
            f"unknown profile {name!r} (available: {', '.join(available_profiles())})"
        ) from None


def load_profile(name: str) -> dict[str, Any]:
    """The settings a profile sets: its UPPERCASE module-level names."""
    module = _module(name)
    values = {key: getattr(module, key) for key in dir(module) if key.isupper() and not key.startswith("_")}
    for key, value in values.items():
        if not isinstance(value, (bool, int, float, str, tuple, list, dict, type(None))):
            raise ProfileError(f"profile {name!r}: {key} is not plain data")
    return values


class ProfileAddon:
    """Apply the profile named by ``BOILERSTRIP_PROFILE`` at ``addon`` priority."""

    PRIORITY = "addon"

    def update_settings(self, settings: Any) -> None:
        name = settings.get("BOILERSTRIP_PROFILE") or "polite"
        for key, value in load_profile(name).items():
            # Settings.set only replaces a value of lower or equal priority: project, spider and
            # command-line values (higher priorities) win automatically; a params hook is merged field by field.
            set_setting(settings, key, value, self.PRIORITY)
        apply_contact(settings)
        check_setting_names(settings)


def set_setting(settings: Any, name: str, value: Any, priority: int | str) -> None:
    """``settings.set(name, value, priority)``, except for a params hook (``BOILERSTRIP_<COMPONENT>_PARAMS``)
    that meets one already set: the two are merged field by field, the higher priority's fields on top, at
    the higher of the two priorities (:func:`boilerstrip.config.stack_params_hooks`). So the profile's
    politeness params, a project's and ``-s`` on the command line each change only the fields they name."""
    from scrapy.settings import get_settings_priority

    current = settings.get(name) if is_params_hook(name) else None
    if current is None or current == "":
        settings.set(name, value, priority=priority)
        return
    mine, theirs = get_settings_priority(priority), settings.getpriority(name) or 0
    if mine >= theirs:
        settings.set(name, stack_params_hooks(current, value), priority=mine)
    else:
        settings.set(name, stack_params_hooks(value, current), priority=theirs)


def check_setting_names(settings: Any) -> None:
    """ConfigError listing every ``BOILERSTRIP_*`` name that is no setting (a typo, or a setting that moved
    into a params hook): Scrapy takes any name, and a name nothing reads would be silently ignored."""
    problems = unknown_settings(list(settings))
    if problems:
        raise ConfigError("; ".join(problems))


def apply_contact(settings: Any) -> None:
    """Append ``BOILERSTRIP_CONTACT`` to our own User-Agent: ``boilerstrip/0.1.0 (+URL; contact)``.

    A User-Agent the user replaced is left alone; the product token stays ``boilerstrip`` either way.
    """
    contact = str(settings.get("BOILERSTRIP_CONTACT") or "").strip()
    agent = str(settings.get("USER_AGENT") or "")
    if not contact or not agent.startswith("boilerstrip/") or not agent.endswith(")") or contact in agent:
        return
    settings.set("USER_AGENT", f"{agent[:-1]}; {contact})", priority=settings.getpriority("USER_AGENT") or 0)
