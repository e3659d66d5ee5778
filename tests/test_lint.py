"""The tree passes the project's ruff configuration (pyproject.toml [tool.ruff]): no unused import or
variable, no undefined name, no redefinition, no statement or syntax error."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")  # the venv's ruff (requirements.txt, test section)
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: pip install -r requirements.txt (it is in the test section)")
    return [found]


def test_ruff_finds_nothing() -> None:
    proc = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]


def test_ruff_reads_the_project_configuration() -> None:
    proc = subprocess.run([*_ruff(), "check", "--show-settings", str(ROOT / "boilerstrip" / "__init__.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "pyproject.toml" in proc.stdout and "line_length = 120" in proc.stdout
