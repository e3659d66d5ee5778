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


# -- the params hook, presets and the user-level fields ---------------------------------------------------
#: a params object a dotted path can name (BOILERSTRIP_DEMO_PARAMS=test_config:STRICT)
STRICT = DemoParams(min_text_chars=99, max_link_density=0.1)


@pytest.mark.parametrize("kind", ["json", "toml", "inline", "dict", "dotted", "object"])
def test_the_params_hook_sets_the_fields_from_a_file_a_path_or_a_value(kind, tmp_path) -> None:
    if kind == "json":
        (tmp_path / "p.json").write_text('{"min_text_chars": 99, "max_link_density": 0.1}')
        value = str(tmp_path / "p.json")
    elif kind == "toml":
        (tmp_path / "p.toml").write_text("min_text_chars = 99\nmax_link_density = 0.1\n")
        value = str(tmp_path / "p.toml")
    elif kind == "inline":
        value = '{"min_text_chars": 99, "max_link_density": 0.1}'
    elif kind == "dict":
        value = {"min_text_chars": "99", "max_link_density": "0.1"}
    elif kind == "dotted":
        value = "test_config:STRICT"
    else:
        value = STRICT
    params = params_from_settings({"BOILERSTRIP_DEMO_PARAMS": value}, "demo", DemoParams)
    assert params == STRICT


def test_a_setting_of_its_own_beats_the_hook_and_overrides_beat_both() -> None:
    settings = {"BOILERSTRIP_DEMO_PARAMS": '{"mode": "never", "min_text_chars": 5}', "BOILERSTRIP_DEMO_MIN_TEXT_CHARS": "7"}
    assert params_from_settings(settings, "demo", DemoParams) == DemoParams(mode="never", min_text_chars=7)
    assert params_from_settings(settings, "demo", DemoParams, mode="auto").mode == "auto"


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ('{"min_text_chars": "many"}', "BOILERSTRIP_DEMO_PARAMS field min_text_chars: expected a whole number"),
        ('{"no_such_field": 1}', "BOILERSTRIP_DEMO_PARAMS: 'no_such_field' is not a field of DemoParams"),
        ('{"mode": "sometimes"}', "BOILERSTRIP_DEMO_MODE: mode must be auto or never"),
        ("/nowhere/params.json", "BOILERSTRIP_DEMO_PARAMS: cannot read /nowhere/params.json"),
        ("no_such_module.PARAMS", "BOILERSTRIP_DEMO_PARAMS: cannot import no_such_module.PARAMS"),
        ("{not json", "BOILERSTRIP_DEMO_PARAMS: not a JSON object"),
        ("plain", "BOILERSTRIP_DEMO_PARAMS: expected a JSON/TOML file path or a dotted path"),
    ],
)
def test_a_bad_params_hook_names_the_setting_and_the_field(value, needle) -> None:
    with pytest.raises(ConfigError) as excinfo:
        params_from_settings({"BOILERSTRIP_DEMO_PARAMS": value}, "demo", DemoParams)
    assert needle in str(excinfo.value), str(excinfo.value)


def test_a_bad_file_names_the_setting(tmp_path) -> None:
    (tmp_path / "p.toml").write_text("min_text_chars = = 3\n")
    with pytest.raises(ConfigError, match=r"BOILERSTRIP_DEMO_PARAMS: .*p.toml is not valid TOML"):
        params_from_settings({"BOILERSTRIP_DEMO_PARAMS": str(tmp_path / "p.toml")}, "demo", DemoParams)


def test_extraction_reads_only_its_user_fields_and_refuses_a_threshold_setting() -> None:
    from boilerstrip.extraction import ExtractionParams

    params = params_from_settings({"BOILERSTRIP_EXTRACTION_METHOD": "density", "BOILERSTRIP_EXTRACTION_COMMENTS": "keep",
                                   "BOILERSTRIP_EXTRACTION_PARAMS": '{"min_text_chars": 100}'},
                                  "extraction", ExtractionParams)  # fmt: skip
    assert (params.method, params.comments, params.min_text_chars) == ("density", "keep", 100)
    with pytest.raises(ConfigError, match="BOILERSTRIP_EXTRACTION_MIN_SIBLING_SCORE_POINTS is not a setting"):
        params_from_settings({"BOILERSTRIP_EXTRACTION_MIN_SIBLING_SCORE_POINTS": "5"}, "extraction", ExtractionParams)


@pytest.mark.parametrize(
    ("component", "cls_path", "setting", "field", "value"),
    [
        ("scope", "boilerstrip.downloadermiddlewares.scope:ScopeParams", "BOILERSTRIP_SCOPE_OFFSITE", "offsite", "off"),
        ("scope", "boilerstrip.downloadermiddlewares.scope:ScopeParams", "BOILERSTRIP_SCOPE_RESOLVE_EARLY",
         "resolve_early", False),
        ("urls", "boilerstrip.urls:UrlParams", "BOILERSTRIP_URLS_TRACKING_PREFIXES", "tracking_prefixes", ("ref_",)),
        ("urls", "boilerstrip.urls:UrlParams", "BOILERSTRIP_URLS_STRIP_SESSION_IDS", "strip_session_ids", False),
    ],
)
def test_scope_and_url_rules_are_reached_through_their_hook_only(component, cls_path, setting, field, value) -> None:
    """The switches only a debugging session or a tuned rule touches are fields of the component's params:
    set as settings of their own they stop the run with an error naming the hook; through it they work."""
    import importlib
    import json

    module, _, name = cls_path.partition(":")
    cls = getattr(importlib.import_module(module), name)
    hook = f"BOILERSTRIP_{component.upper()}_PARAMS"
    with pytest.raises(ConfigError, match=f"{setting} is not a setting.*{hook}"):
        params_from_settings({setting: str(value)}, component, cls)
    hooked = json.dumps({field: list(value) if isinstance(value, tuple) else value})
    assert getattr(params_from_settings({hook: hooked}, component, cls), field) == value


def test_the_user_level_scope_url_compression_and_state_settings_stay_settings() -> None:
    from boilerstrip.downloadermiddlewares.compression import CompressionParams
    from boilerstrip.downloadermiddlewares.scope import ScopeParams
    from boilerstrip.state import StateParams
    from boilerstrip.urls import UrlParams

    assert params_from_settings({"BOILERSTRIP_SCOPE_ALLOW_PRIVATE": "10.0.0.5:8080"}, "scope", ScopeParams).allow_private == ("10.0.0.5:8080",)
    assert params_from_settings({"BOILERSTRIP_URLS_PARAMS": '{"tracking_params": "ref"}'}, "urls", UrlParams).tracking_params == ("ref",)
    assert params_from_settings({"BOILERSTRIP_COMPRESSION_PARAMS": {"keep_partial": "true"}}, "compression", CompressionParams).keep_partial
    state = params_from_settings({"BOILERSTRIP_STATE_DIR": "", "BOILERSTRIP_STATE_BACKEND": "x.Y"}, "state", StateParams)
    assert (state.dir, state.backend) == ("", "x.Y")


def test_the_extraction_presets_are_real_and_below_the_hook() -> None:
    from boilerstrip.workers.pool import WorkerPoolParams
    from boilerstrip.extraction import EXTRACTION_PRESETS, ExtractionParams, extraction_preset

    assert set(EXTRACTION_PRESETS) == {"balanced", "precision", "recall"}
    assert extraction_preset("balanced") == ExtractionParams()
    assert extraction_preset("precision") != ExtractionParams() != extraction_preset("recall")
    for name in EXTRACTION_PRESETS:
        assert params_from_settings({"BOILERSTRIP_EXTRACTION_PRESET": name}, "extraction", ExtractionParams) == extraction_preset(name)
    recall = params_from_settings({"BOILERSTRIP_EXTRACTION_PRESET": "recall", "BOILERSTRIP_EXTRACTION_PARAMS": '{"min_text_chars": 7}'},
                                  "extraction", ExtractionParams)  # fmt: skip
    assert recall.min_text_chars == 7 and recall.keep_captions is True
    with pytest.raises(ConfigError, match="BOILERSTRIP_EXTRACTION_PRESET: expected one of balanced, precision, recall"):
        params_from_settings({"BOILERSTRIP_EXTRACTION_PRESET": "fast"}, "extraction", ExtractionParams)
    # the worker pool, read under the same component, takes its own fields and leaves the extractor's
    pool = params_from_settings({"BOILERSTRIP_EXTRACTION_PARAMS": '{"min_text_chars": 7}', "BOILERSTRIP_EXTRACTION_WORKERS": "3"},
                                "extraction", WorkerPoolParams)  # fmt: skip
    assert pool.workers == 3


# -- a params hook given at several priorities; names that are no setting -------------------------------
def _politeness(settings):
    from boilerstrip.politeness import PolitenessParams

    return params_from_settings(settings, "politeness", PolitenessParams)


def test_a_hook_on_the_command_line_changes_only_its_fields_of_the_profiles() -> None:
    """The profile sets BOILERSTRIP_POLITENESS_PARAMS whole; the project's hook and then -s each change only the
    fields they name (before the field-wise merge, -s replaced the profile's hook and its other values were
    lost to the defaults)."""
    from scrapy.settings import Settings

    from boilerstrip.addons import ProfileAddon, load_profile, set_setting
    from boilerstrip.politeness import PolitenessParams

    profile = load_profile("test")["BOILERSTRIP_POLITENESS_PARAMS"]
    settings = Settings({"BOILERSTRIP_PROFILE": "test"})
    settings.set("BOILERSTRIP_POLITENESS_PARAMS", {"max_backoff_s": 7.0, "max_retries": 9}, priority="project")
    set_setting(settings, "BOILERSTRIP_POLITENESS_PARAMS", '{"max_retries": 1}', "cmdline")
    ProfileAddon().update_settings(settings)  # what Scrapy calls when the crawler starts: below all of them
    params = _politeness(settings)
    assert params.max_retries == 1  # the command line's
    assert params.max_backoff_s == 7.0  # the project's
    assert params.max_retry_after_s == profile["max_retry_after_s"] != PolitenessParams().max_retry_after_s  # the profile's
    assert params.retry_backoff_base_s == profile["retry_backoff_base_s"] != PolitenessParams().retry_backoff_base_s
    assert settings.getpriority("BOILERSTRIP_POLITENESS_PARAMS") == 40  # still the command line's priority
    # with no hook above it, the profile's stands alone
    alone = Settings({"BOILERSTRIP_PROFILE": "test"})
    ProfileAddon().update_settings(alone)
    assert _politeness(alone) == PolitenessParams(**profile)


def test_stacked_hooks_are_read_layer_over_layer_and_a_bad_layer_names_the_setting(tmp_path) -> None:
    from boilerstrip.config import stack_params_hooks

    (tmp_path / "p.toml").write_text("min_text_chars = 3\nmax_link_density = 0.2\n")
    layers = stack_params_hooks(stack_params_hooks(str(tmp_path / "p.toml"), STRICT), '{"min_text_chars": 4}')
    assert params_from_settings({"BOILERSTRIP_DEMO_PARAMS": layers}, "demo", DemoParams) == DemoParams(
        min_text_chars=4, max_link_density=0.1)  # a params object stands for all its fields
    assert stack_params_hooks(None, "x.Y") == ("x.Y",) and stack_params_hooks("", None) == ()
    with pytest.raises(ConfigError, match="BOILERSTRIP_DEMO_PARAMS field min_text_chars: expected a whole number"):
        params_from_settings({"BOILERSTRIP_DEMO_PARAMS": stack_params_hooks({"mode": "never"}, '{"min_text_chars": "x"}')},
                             "demo", DemoParams)


def test_every_former_setting_is_refused_with_where_it_went() -> None:
    """The settings issue 25 folded into params hooks (or into Scrapy's own switch) are never silently ignored:
    the start-up check names the hook and the field (or the switch); a typo gets the closest real names."""
    from boilerstrip.config import REPLACED_SETTINGS, unknown_settings, user_settings

    moved = {
        "BOILERSTRIP_URLS_TRACKING_PARAMS": "URLS", "BOILERSTRIP_ROBOTS_FETCH_TIMEOUT_S": "ROBOTS",
        "BOILERSTRIP_ROBOTS_UNREACHABLE_RETRY_S": "ROBOTS", "BOILERSTRIP_ROBOTS_UNREACHABLE_MAX_FETCHES": "ROBOTS",
        "BOILERSTRIP_OPTOUT_TDMREP": "OPTOUT", "BOILERSTRIP_POLITENESS_MAX_CRAWL_DELAY_S": "POLITENESS",
        "BOILERSTRIP_POLITENESS_MAX_RETRY_AFTER_S": "POLITENESS", "BOILERSTRIP_POLITENESS_RETRY_BACKOFF_BASE_S": "POLITENESS",
        "BOILERSTRIP_POLITENESS_MAX_BACKOFF_S": "POLITENESS", "BOILERSTRIP_POLITENESS_MAX_RETRIES": "POLITENESS",
        "BOILERSTRIP_EXTRACTION_BODYTEXT_INCLUDE_TAGS": "EXTRACTION", "BOILERSTRIP_EXTRACTION_BODYTEXT_EXCLUDE_TAGS": "EXTRACTION",
        "BOILERSTRIP_EXTRACTION_POOL": "EXTRACTION", "BOILERSTRIP_BOILERPLATE_CLEAN_DURING_CRAWL": "BOILERPLATE",
        "BOILERSTRIP_BOILERPLATE_SOURCE": "BOILERPLATE", "BOILERSTRIP_BOILERPLATE_MIN_SHARE_OF_PAGES": "BOILERPLATE",
        "BOILERSTRIP_BOILERPLATE_MIN_PAGES": "BOILERPLATE", "BOILERSTRIP_DUPLICATES_NEAR_MIN_JACCARD": "DUPLICATES",
        "BOILERSTRIP_RENDER_MAX_RENDER_MS": "RENDER", "BOILERSTRIP_RENDER_MAX_CONTEXTS": "RENDER",
        "BOILERSTRIP_RENDER_MAX_BROWSER_MEMORY_MIB": "RENDER", "BOILERSTRIP_RENDER_BLOCKED_RESOURCE_TYPES": "RENDER",
        "BOILERSTRIP_RENDER_LEARN_ENABLED": "RENDER", "BOILERSTRIP_TRAPS_MAX_DEPTH": "TRAPS",
        "BOILERSTRIP_TRAPS_MAX_PAGES_PER_HOST": "TRAPS", "BOILERSTRIP_TRAPS_MAX_URLS_PER_PATTERN": "TRAPS",
        "BOILERSTRIP_TRAPS_MAX_URL_CHARS": "TRAPS", "BOILERSTRIP_COMPRESSION_KEEP_PARTIAL": "COMPRESSION",
        "BOILERSTRIP_LEDGER_FAIL_ON_MISMATCH": "LEDGER", "BOILERSTRIP_DISTRIBUTED_HEARTBEAT_TTL_S": "DISTRIBUTED",
        "BOILERSTRIP_DISTRIBUTED_MAX_PAGES": "DISTRIBUTED", "BOILERSTRIP_DISTRIBUTED_LEASE_ENABLED": "DISTRIBUTED",
        "BOILERSTRIP_WARC_MAX_FILE_BYTES": "WARC", "BOILERSTRIP_RECRAWL_CONDITIONAL": "RECRAWL",
        "BOILERSTRIP_RECRAWL_TRUST_LASTMOD": "RECRAWL",
    }
    assert not (set(moved) | set(REPLACED_SETTINGS)) & user_settings()
    for name, component in moved.items():
        field = name.removeprefix(f"BOILERSTRIP_{component}_").lower()
        [line] = unknown_settings([name])
        assert line.startswith(f"{name} is not a setting: {field} is a field of BOILERSTRIP_{component}_PARAMS"), line
    assert unknown_settings(["BOILERSTRIP_ROBOTS_ENABLED"]) == [
        "BOILERSTRIP_ROBOTS_ENABLED is not a setting any more: use ROBOTSTXT_OBEY (Scrapy's own switch; false: "
        "robots.txt is not obeyed)"]
    assert "use COMPRESSION_ENABLED" in unknown_settings(["BOILERSTRIP_COMPRESSION_ENABLED"])[0]
    assert "use BOILERSTRIP_RENDER_MODE=never" in unknown_settings(["BOILERSTRIP_RENDER_ENABLED"])[0]
    assert unknown_settings(["BOILERSTRIP_RENDER_MOD"]) == [
        "BOILERSTRIP_RENDER_MOD is not a boilerstrip setting; did you mean BOILERSTRIP_RENDER_MODE?"]
    assert unknown_settings([*user_settings(), "DOWNLOAD_DELAY", "MY_OWN_SETTING"]) == []


def test_a_crawl_started_by_scrapy_refuses_a_name_that_is_no_setting() -> None:
    """``scrapy crawl -s BOILERSTRIP_TRAPS_MAX_DEPTH=5`` (or a spider's custom_settings) stops at start-up: the
    profile add-on, which every crawl runs, checks the names."""
    from scrapy.settings import Settings

    from boilerstrip.addons import ProfileAddon

    settings = Settings({"BOILERSTRIP_PROFILE": "test"})
    settings.set("BOILERSTRIP_TRAPS_MAX_DEPTH", "5", priority="cmdline")
    with pytest.raises(ConfigError, match="max_depth is a field of BOILERSTRIP_TRAPS_PARAMS"):
        ProfileAddon().update_settings(settings)


@pytest.mark.parametrize("command", ["extract", "check", "dedup"])
def test_the_offline_commands_refuse_a_name_that_is_no_setting(command, tmp_path, capsys) -> None:
    from boilerstrip.cli import main

    (tmp_path / "in.jsonl").write_text("")
    args = {"extract": [str(tmp_path / "in.jsonl")], "check": [str(tmp_path / "in.jsonl")],
            "dedup": [str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl")]}[command]
    assert main([command, *args, "-s", "BOILERSTRIP_BOILERPLATE_MIN_PAGES=3"]) == 2
    err = capsys.readouterr().err
    assert f"boilerstrip {command}: BOILERSTRIP_BOILERPLATE_MIN_PAGES is not a setting: min_pages is a field of " \
           "BOILERSTRIP_BOILERPLATE_PARAMS" in err, err
    assert not (tmp_path / "out.jsonl").exists()
