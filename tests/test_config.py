"""boilerstrip.config: settings -> frozen params, with errors that name the setting."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from boilerstrip.config import ConfigError, component_enabled, params_from_settings


@dataclass(frozen=True)
class DemoParams:
    min_text_chars: int = 10
    max_link_density: float = 0.5
    keep_h1: bool = True
    tags: tuple[str, ...] = ("p", "li")
    mode: str = "auto"

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "never"):
            raise ValueError(f"mode must be auto or never, got {self.mode!r}")
        if self.min_text_chars < 0:
            raise ValueError("min_text_chars must be >= 0")


def test_defaults_when_nothing_is_set() -> None:
    assert params_from_settings({}, "demo", DemoParams) == DemoParams()


@pytest.mark.parametrize(
    ("name", "raw", "field", "value"),
    [
        ("BOILERSTRIP_DEMO_MIN_TEXT_CHARS", "25", "min_text_chars", 25),
        ("BOILERSTRIP_DEMO_MAX_LINK_DENSITY", "0.25", "max_link_density", 0.25),
        ("BOILERSTRIP_DEMO_KEEP_H1", "false", "keep_h1", False),
        ("BOILERSTRIP_DEMO_KEEP_H1", "1", "keep_h1", True),
        ("BOILERSTRIP_DEMO_TAGS", "p, pre ,li", "tags", ("p", "pre", "li")),
        ("BOILERSTRIP_DEMO_TAGS", '["h1", "h2"]', "tags", ("h1", "h2")),
        ("BOILERSTRIP_DEMO_MODE", "never", "mode", "never"),
    ],
)
def test_values_are_coerced_by_the_default_type(name, raw, field, value) -> None:
    params = params_from_settings({name: raw}, "demo", DemoParams)
    assert getattr(params, field) == value


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("BOILERSTRIP_DEMO_MIN_TEXT_CHARS", "many"),
        ("BOILERSTRIP_DEMO_MIN_TEXT_CHARS", 2.5),
        ("BOILERSTRIP_DEMO_MAX_LINK_DENSITY", "half"),
        ("BOILERSTRIP_DEMO_KEEP_H1", "perhaps"),
        ("BOILERSTRIP_DEMO_TAGS", "[not json"),
        ("BOILERSTRIP_DEMO_MODE", "sometimes"),
        ("BOILERSTRIP_DEMO_MIN_TEXT_CHARS", "-1"),
    ],
)
def test_a_bad_value_names_its_setting(name, raw) -> None:
    with pytest.raises(ConfigError) as excinfo:
        params_from_settings({name: raw}, "demo", DemoParams)
    assert str(excinfo.value).startswith(name + ":"), str(excinfo.value)


def test_overrides_beat_settings_and_enabled_reads_the_switch() -> None:
    params = params_from_settings({"BOILERSTRIP_DEMO_MODE": "never"}, "demo", DemoParams, mode="auto")
    assert params.mode == "auto"
    assert component_enabled({}, "demo") is True
    assert component_enabled({"BOILERSTRIP_DEMO_ENABLED": "false"}, "demo") is False
