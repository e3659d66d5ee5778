"""What ``pip install .`` installs: the boilerstrip package (profiles inside it, no generic top-level
``settings_profiles`` package) and its runtime dependencies; the test and bench extras; the same packages
as requirements.txt, whose pins fall inside the declared ranges."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = {"Runtime": None, "Tests": "test", "Benchmarks": "bench"}  # requirements.txt header -> extra


def _pinned_sections() -> dict[str | None, dict[str, Requirement]]:
    """requirements.txt's pins by section: None (runtime), "test", "bench"."""
    sections: dict[str | None, dict[str, Requirement]] = {}
    current = "missing header"
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        header = re.match(r"# ---- (\w+)", line)
        if header:
            current = SECTIONS[header.group(1)]
            sections[current] = {}
            continue
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            sections[current][canonicalize_name(requirement.name)] = requirement
    return sections


def _declared() -> dict[str | None, dict[str, Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {None: project["dependencies"], **project["optional-dependencies"]}
    return {
        extra: {canonicalize_name(Requirement(r).name): Requirement(r) for r in requirements}
        for extra, requirements in declared.items()
    }


def test_requirements_sections_match_the_declared_dependencies() -> None:
    pinned, declared = _pinned_sections(), _declared()
    assert set(pinned) == set(declared) == {None, "test", "bench"}
    for extra, requirements in pinned.items():
        assert set(requirements) == set(declared[extra]), extra
        for name, pin in requirements.items():
            (version,) = [spec.version for spec in pin.specifier if spec.operator == "=="]
            assert declared[extra][name].specifier.contains(version, prereleases=True), (name, version)


@pytest.mark.timeout(300)
def test_the_wheel_ships_profiles_inside_the_package_and_declares_its_dependencies(tmp_path: Path) -> None:
    # built from a copy of what the build reads, so setuptools' build/ and egg-info stay out of the tree
    source = tmp_path / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")
    for name in ("pyproject.toml", "README.md"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    for folder in ("boilerstrip", "settings_profiles"):
        shutil.copytree(ROOT / folder, source / folder, symlinks=True, ignore=skip)
    assert (source / "boilerstrip" / "profiles").is_symlink()
    wheels = tmp_path / "wheels"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(wheels), str(source)],
        capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = wheels.glob("boilerstrip-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode("utf-8"))
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"boilerstrip", metadata_name.split("/", 1)[0]}, tops  # no settings_profiles, no tests
    profiles = {Path(n).stem for n in names if n.startswith("boilerstrip/profiles/") and n.endswith(".py")}
    assert {"polite", "own_site", "test", "demo"} <= profiles
    assert "boilerstrip/demo/site/about/index.html" in names  # package data: the demo site

    requires = [Requirement(r) for r in metadata.get_all("Requires-Dist")]
    # runtime: no marker, or one of the platform only (backports.zstd before Python 3.14), not of an extra
    runtime = {canonicalize_name(r.name) for r in requires if r.marker is None or "extra" not in str(r.marker)}
    assert runtime == set(_declared()[None]) and {"scrapy", "scrapy-playwright", "lxml"} <= runtime
    for extra in ("test", "bench"):
        assert extra in metadata.get_all("Provides-Extra")
        in_extra = {canonicalize_name(r.name) for r in requires
                    if r.marker and "extra" in str(r.marker) and r.marker.evaluate({"extra": extra})}
        assert in_extra == set(_declared()[extra]), extra
