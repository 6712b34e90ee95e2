"""The core install (`pip install deeploy-mlir`, no extras) into a fresh venv:
neither torch nor onnxruntime comes with it, and README's command (a) trains
the bundled example there to onnxruntime-training's losses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def test_core_install_has_no_torch_and_trains_the_example(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # a copy of what the package is built from: pip's in-tree build writes
    # build/ beside the sources, and the checkout stays untouched
    src = tmp_path / "src"
    src.mkdir()
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / f, src / f)
    for d in ("deeploy_mlir", "runtime_c"):
        shutil.copytree(REPO / d, src / d, ignore=shutil.ignore_patterns("__pycache__"))
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    py = venv / "bin" / "python"
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", str(src)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    took = time.monotonic() - t0
    print(f"venv + core install: {took:.1f} s")
    for mod in ("torch", "onnxruntime"):
        r = subprocess.run(
            [str(py), "-c", f"import {mod}"], capture_output=True, text=True, env=env
        )
        assert r.returncode != 0 and "No module named" in r.stderr, (mod, r.stderr)
    # README command (a), from outside the checkout: the installed package alone
    ex = REPO / "examples" / "mlp_small"
    out = tmp_path / "a.json"
    r = subprocess.run(
        [
            str(venv / "bin" / "deeploy-mlir"),
            "run",
            str(ex),
            "--data",
            str(ex / "data.npz"),
            "--steps",
            "5",
            "--accum",
            "2",
            "--lr",
            "0.05",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 10, r.stdout
    got = json.loads(out.read_text())["losses"]
    want = json.loads((ex / "expected.json").read_text())["losses"]  # onnxruntime-training's
    np.testing.assert_allclose(got, want, rtol=1e-4)
