"""The code stays ruff clean (the configuration is in pyproject.toml)."""

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
