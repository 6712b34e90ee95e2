"""The code stays ruff clean, and the core packages (dialects, passes, memory)
pyright clean (the configurations are in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is in the test extra")
def test_ruff_clean() -> None:
    r = subprocess.run(
        [
            "ruff",
            "check",
            "--output-format",
            "concise",
            "deeploy_mlir",
            "tests",
            "examples",
            "bench",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("pyright") is None, reason="pyright is in the test extra")
def test_pyright_clean_on_the_core() -> None:
    r = subprocess.run(["pyright"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    assert "0 errors" in r.stdout
