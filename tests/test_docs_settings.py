"""Every BOILERSTRIP_* setting and boilerstrip_* meta key the code reads is documented in docs/ (settings.md).

Settings come from two places: literal names in the source, and the fields of the params dataclasses
that ``boilerstrip.config.params_from_settings(settings, "<component>", <ParamsClass>)`` maps. Both are
collected from the source itself, so a new setting without a docs row fails here. The reference lists
exactly the settings there are (``boilerstrip.config.user_settings``), and there are few of them.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path

from boilerstrip.config import PARAMS_CLASSES, PRESETS, REPLACED_SETTINGS, USER_FIELDS, setting_name, user_settings

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "boilerstrip"
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))

SETTING_RE = re.compile(r"\bBOILERSTRIP_[A-Z0-9_]*[A-Z0-9]\b")
META_RE = re.compile(r"""["'](boilerstrip_[a-z0-9_]+)["']""")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _documented(name: str) -> bool:
    return re.search(rf"`{re.escape(name)}`", DOCS) is not None


def _source_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _literal_settings() -> set[str]:
    names: set[str] = set()
    for path in _source_files():
        for match in SETTING_RE.finditer(path.read_text(encoding="utf-8")):
            name = match.group(0)
            if name.endswith("_") or "<" in name:
                continue
            names.add(name)
    # Prefixes built at run time (BOILERSTRIP_{component}_...) are not settings themselves.
    return {n for n in names if not n.startswith("BOILERSTRIP_COMPONENT")}


def _params_calls() -> set[tuple[str, type]]:
    """(component, params class) of every params_from_settings(settings, "component", Cls) call in the source."""
    calls: set[tuple[str, type]] = set()
    for path in _source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = None
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "params_from_settings"):
                continue
            if len(node.args) < 3 or not isinstance(node.args[1], ast.Constant):
                continue
            component = node.args[1].value
            cls_node = node.args[2]
            cls_name = cls_node.id if isinstance(cls_node, ast.Name) else getattr(cls_node, "attr", None)
            if cls_name is None:
                continue
            module = module or importlib.import_module(_module_name(path))
            cls = getattr(module, cls_name, None)
            if cls is None or not dataclasses.is_dataclass(cls):
                continue
            calls.add((component, cls))
    return calls


def _params_settings() -> set[str]:
    """Names derived from params_from_settings(settings, "component", Cls) calls found in the source."""
    names: set[str] = set()
    for component, cls in _params_calls():
        user = USER_FIELDS.get(component)
        for field in dataclasses.fields(cls):
            if field.init and (user is None or field.name in user):
                names.add(setting_name(component, field.name))
        names.add(setting_name(component, "params"))  # every component's params hook
        if component in PRESETS:
            names.add(setting_name(component, "preset"))
    return names


def _meta_keys() -> set[str]:
    keys: set[str] = set()
    for path in _source_files():
        keys.update(META_RE.findall(path.read_text(encoding="utf-8")))
    return keys


def test_every_setting_is_documented() -> None:
    names = _literal_settings() | _params_settings()
    assert names, "no BOILERSTRIP_* settings found: the collector is broken"
    missing = sorted(name for name in names if not _documented(name))
    assert not missing, f"settings read by the code but missing from docs/: {missing}"


def test_every_meta_key_is_documented() -> None:
    missing = sorted(key for key in _meta_keys() if not _documented(key))
    assert not missing, f"meta keys used by the code but missing from docs/: {missing}"


def test_the_reference_documents_no_setting_the_code_does_not_read() -> None:
    reference = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(BOILERSTRIP_[A-Z0-9_]+)`", reference, flags=re.M))
    stale = sorted(documented - _literal_settings() - _params_settings())
    assert not stale, f"docs/settings.md documents settings nothing reads: {stale}"


def _reference() -> set[str]:
    reference = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `(BOILERSTRIP_[A-Z0-9_]+)`", reference, flags=re.M))


def test_the_reference_lists_exactly_the_settings_there_are_and_they_are_few() -> None:
    """docs/settings.md has one row for each setting boilerstrip.config knows, and no other; the code reads
    no BOILERSTRIP_* name outside that list (or the removed ones, which the start-up check names); and the
    user-level settings (neither a params hook nor a preset) stay about 40 (issue 25: "at most about 40
    documented settings, plus presets and one params hook per component")."""
    known = user_settings()
    assert _reference() == known, (f"only in docs: {sorted(_reference() - known)}; "
                                   f"only in the code: {sorted(known - _reference())}")
    assert _params_settings() <= known, sorted(_params_settings() - known)
    strays = _literal_settings() - known - set(REPLACED_SETTINGS)
    assert not strays, f"the source names BOILERSTRIP_* settings boilerstrip.config does not know: {sorted(strays)}"
    user_level = {n for n in known if not n.endswith(("_PARAMS", "_PRESET"))}
    assert len(user_level) == 41, sorted(user_level)  # the count when issue 25's cut was made; keep it <= ~40
    assert len([n for n in known if n.endswith("_PARAMS")]) == len(PARAMS_CLASSES)


def test_the_params_classes_table_matches_the_code() -> None:
    """config.PARAMS_CLASSES (what a hook may hold, where a former setting went) lists exactly the classes the
    code reads under each component."""
    import importlib as _importlib

    table = set()
    for component, paths in PARAMS_CLASSES.items():
        for path in paths:
            module, _, name = path.partition(":")
            table.add((component, getattr(_importlib.import_module(module), name)))
    assert _params_calls() == table


def test_every_profile_sets_only_real_settings() -> None:
    from boilerstrip.addons import available_profiles, load_profile
    from boilerstrip.config import unknown_settings

    for name in available_profiles():
        assert unknown_settings(load_profile(name)) == [], name


def test_the_switches_table_matches_the_code() -> None:
    """config.ENABLED_COMPONENTS (the BOILERSTRIP_<COMPONENT>_ENABLED settings the start-up check accepts) is
    exactly the components the code asks component_enabled() about."""
    from boilerstrip.config import ENABLED_COMPONENTS

    asked: set[str] = set()
    for path in _source_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "component_enabled"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
                asked.add(node.args[1].value)
    assert asked == set(ENABLED_COMPONENTS)
