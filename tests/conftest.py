"""Shared fixtures: paths, and a runner for the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from deeploy_mlir.targets.stacks import stack_reservation


def _have_gvsoc() -> bool:
    """Whether GVSoC and its pulp-runtime are set up (scripts/install-gvsoc.sh)."""
    try:
        from deeploy_mlir.targets import gvsoc

        gvsoc.find_setup()
    except Exception:
        return False
    return True


#: marks a test that runs GVSoC: skipped, with the reason, where it is not set up
needs_gvsoc = pytest.mark.skipif(not _have_gvsoc(), reason="GVSoC is not installed")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
#: L1 bytes the cluster stacks take at most from an --l1 budget (the arena
#: gets the rest): those of a program forking the deepest kernel. A program's
#: own are stacks_of(model) (at most STACKS): a test that means an arena of
#: exactly N bytes passes --l1 stacks_of(model) + N, one that means at least N
#: bytes may pass STACKS + N
STACKS = stack_reservation()


def stacks_of(model: Path | str) -> int:
    """The L1 bytes of cluster stacks of a model's program (sized for the
    kernels it forks: deeploy_mlir/targets/stacks.py): an artifact directory,
    a Deeploy folder or an ONNX file."""
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.targets.stacks import program_kernels

    path = Path(model)
    if (path / "network.onnx").is_file() and not (path / "training_model.onnx").is_file():
        path = path / "network.onnx"  # a Deeploy test folder
    return stack_reservation(kernels=program_kernels(import_model(path).module))


SHARED_MODELS = ROOT.parent / "shared" / "models" / "deeploy"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(*args: str | Path, cwd: Path | None = None) -> CliResult:
    r = subprocess.run(
        [sys.executable, "-m", "deeploy_mlir.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    return CliResult(r.returncode, r.stdout, r.stderr)


def example_dirs() -> list[Path]:
    return sorted(p.parent for p in EXAMPLES.glob("*/expected.json"))


def model_dirs() -> list[Path]:
    """The models of examples/make_models.py (with reference.json)."""
    return sorted(p.parent for p in EXAMPLES.glob("*/reference.json"))


def model_l1(d: Path) -> int:
    """An L1 arena budget at which every op of model `d` fits double-buffered and
    most ops take several tiles (the CCTs' layer_norm_grad keeps [2, 16, 16]
    operands whole: 6,592 bytes per buffer)."""
    return 16384 if d.name.startswith("cct") else 8192


def training_args(d: Path) -> list[str | Path]:
    """The --data/--steps/--accum/--lr options that train example `d` the way
    its expected.json (an MLP example) or reference.json (a model of
    make_models.py) was computed."""
    ref = d / "reference.json"
    exp = json.loads(ref.read_text()) if ref.is_file() else load_expected(d)
    return [
        "--data",
        d / "data.npz",
        "--steps",
        str(exp["steps"]),
        "--accum",
        str(exp["accum"]),
        "--lr",
        str(exp["lr"]),
    ]


def load_expected(d: Path) -> dict:
    return json.loads((d / "expected.json").read_text())


def run_training(d: Path, tmp: Path, *options: object) -> tuple[dict, CliResult]:
    """`deeploy-mlir run` on example `d` with its training_args, `--json`
    into `tmp`, and `options`; it must succeed: the JSON and the result."""
    out = tmp / "out.json"
    r = run_cli("run", d, *training_args(d), "--json", out, *map(str, options))
    assert r.code == 0, r.err
    return json.loads(out.read_text()), r


def assert_like_expected(got: dict, exp: dict) -> None:
    """The losses and final parameters of a run (its --json) are the expected
    ones (rtol 1e-4; atol 1e-6 for parameters that pass through zero)."""
    np.testing.assert_allclose(got["losses"], exp["losses"], rtol=1e-4)
    for name, want in exp["params"].items():
        np.testing.assert_allclose(
            np.array(got["params"][name]), np.array(want), rtol=1e-4, atol=1e-6, err_msg=name
        )


def train_like_expected(d: Path, tmp: Path, *options: object) -> dict:
    """run_training, checked against d/expected.json (assert_like_expected):
    the JSON of the run."""
    got, _ = run_training(d, tmp, *options)
    assert_like_expected(got, load_expected(d))
    return got


@pytest.fixture
def fast_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build generated projects at -O0 (the Makefile's CFLAGS): the runtime's
    kernels compile several times faster, and the numbers are the same bits
    (no -ffast-math; the kernels contract with explicit fmaf).
    tests/test_end_to_end.py keeps the Makefile's -O2."""
    monkeypatch.setenv("CFLAGS", "-std=gnu11 -ffp-contract=off -O0 -Wall -Wextra -Werror")


@pytest.fixture
def cli():
    return run_cli


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--gvsoc-full",
        action="store_true",
        default=False,
        help="also run the expensive GVSoC tests (tests marked gvsoc_full: every example x "
        "untiled/single/double, Deeploy's folders); without it they are deselected",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gvsoc_full: expensive GVSoC run, only with --gvsoc-full")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--gvsoc-full"):
        return
    keep = [it for it in items if it.get_closest_marker("gvsoc_full") is None]
    dropped = [it for it in items if it.get_closest_marker("gvsoc_full") is not None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
