"""The siracusa_zfinx board: Siracusa's kernels as the chip runs them (floats
in the integer registers, Zfinx), against the Zfinx GVSoC.

- A quick re-measure on the Zfinx GVSoC (bench/calibrate.py's programs built
  with clang-19 -march=rv32imc_zfinx: gemm, conv 3x3 and its two gradients,
  batch_matmul, layernorm, sgd, each after another kernel's call and again) gives the
  board's cycles within 25%. The expected cycles are computed from the
  board's numbers (written by `python bench/calibrate.py --isa zfinx`), not
  pasted; a kernel change that moves them (a faster Zfinx kernel) fails
  here until the board is calibrated again with that one command.
- `report --board siracusa_zfinx --measure` runs the step on the Zfinx GVSoC
  and the model on the board predicts it within 25% (mlp_small, untiled).
- Without GVSoC: a project lowered for siracusa_zfinx builds for Zfinx by
  default (its Makefile's GVSOC_ISA), `run --on gvsoc` and `report
  --measure` look for the Zfinx GVSoC, and bench/gvsoc.py --isa zfinx scores
  tiles and predicts with the same board.

The GVSoC tests skip only where the Zfinx GVSoC is not built;
scripts/install-gvsoc.sh (CI's install step) builds it
(scripts/build-gvsoc-zfinx.sh).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

from deeploy_mlir.cost.events import compute_cycles
from deeploy_mlir.targets.boards import load_board

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gvsoc_probe as P  # noqa: E402


def _have_zfinx_gvsoc() -> bool:
    try:
        P.gvsoc.find_setup("zfinx")
    except Exception:
        return False
    return True


#: a test that runs the Zfinx GVSoC: skipped only where it is not built
needs_zfinx_gvsoc = pytest.mark.skipif(
    not _have_zfinx_gvsoc(),
    reason="the Zfinx GVSoC is not built (scripts/build-gvsoc-zfinx.sh; "
    "scripts/install-gvsoc.sh builds it) or clang-19 is missing",
)


@pytest.fixture
def zfinx(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/gvsoc_probe.py's programs built for and run on the Zfinx GVSoC."""
    monkeypatch.setattr(P, "ISA", "zfinx")


@needs_zfinx_gvsoc
def test_zfinx_kernels_match_the_board(zfinx: None) -> None:
    import calibrate as C  # bench/calibrate.py

    board = load_board("siracusa_zfinx")
    conv, conv_dx, conv_dw = P.conv("conv", 1, 16, 16, 16, 3, 1, "")
    cases = [
        ("gemm", P.gemm(32, 32, 32, 0, 0, "")),
        ("gemm", P.gemm(64, 64, 64, 0, 1, "")),
        ("conv", conv),
        ("conv_dx", conv_dx),
        ("conv_dw", conv_dw),
        ("batch_matmul", P.batch_matmul(1, 64, 32, 128, 0)),
        ("norm", P.layernorm(64, 128, "")),
        ("optimizer", P.sgd(4096)),
    ]
    cyc = C.measure_cold_warm([c for _, c in cases])
    # the board's call holds a step's call site too, measured apart
    site_cold, site_warm = C.measure_call_sites()
    site = site_cold - site_warm
    for i, (family, c) in enumerate(cases):
        share = c.share(board.cores)
        warm = compute_cycles(board, family, c.macs, 1, 0, c.outputs, share=share) - site
        cold = compute_cycles(board, family, c.macs, 1, 0, c.outputs, 1, share) - site
        # calibrate.py fits these calls among its probes (its --points print
        # each one's error: 1-12% here); 25% leaves the cold/warm spread room
        assert abs(cyc[i][1] - warm) <= 0.25 * cyc[i][1], (family, c.shape, cyc[i], warm)
        assert abs(cyc[i][0] - cold) <= 0.25 * cyc[i][0], (family, c.shape, cyc[i], cold)


@needs_zfinx_gvsoc
def test_report_measure_runs_the_boards_isa_and_the_model_holds() -> None:
    r = run_cli(
        "report", EXAMPLES / "mlp_small", "--board", "siracusa_zfinx", "--measure", "--json"
    )
    assert r.code == 0, r.err
    m = json.loads(r.out)["measured"]
    assert (m["gvsoc_target"], m["gvsoc_isa"]) == ("siracusa", "zfinx")
    for key in ("train", "optimizer"):
        assert 0.75 <= m["ratio"][key] <= 1.25, m


# --------------------------------------------------------------------------
# without GVSoC: the board's ISA reaches the project, the simulator lookup
# and the bench


def _makefile_isa(tmp: Path, *opts: str) -> str:
    out = tmp / "p"
    r = run_cli("lower", EXAMPLES / "mlp_small", "-o", out, "-q", *opts)
    assert r.code == 0, r.err
    lines = [ln for ln in (out / "Makefile").read_text().splitlines() if "GVSOC_ISA ?=" in ln]
    # a line of its own (make reads `GVSOC_ISA ?= ...` only at a line start)
    assert all(ln.startswith("GVSOC_ISA ?= ") for ln in lines), lines
    assert len(lines) == 1, lines
    return lines[0].split("?=")[1].strip()


def test_a_project_for_siracusa_zfinx_builds_zfinx_by_default(tmp_path: Path) -> None:
    assert _makefile_isa(tmp_path / "z", "--board", "siracusa_zfinx") == "zfinx"
    assert _makefile_isa(tmp_path / "f", "--board", "siracusa") == "f"
    assert _makefile_isa(tmp_path / "d") == "f"


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GVSOC_ZFINX_HOME": str(tmp / "nowhere")}
    return subprocess.run(
        [sys.executable, "-m", "deeploy_mlir.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )


@pytest.mark.parametrize("command", ["run", "report"])
def test_the_boards_isa_picks_the_zfinx_gvsoc(tmp_path: Path, command: str) -> None:
    """--board siracusa_zfinx looks for the Zfinx GVSoC (here: none, a
    one-line error naming it, exit 2, before anything is compiled)."""
    d = EXAMPLES / "mlp_small"
    if command == "run":
        args = ["run", str(d), "--data", str(d / "data.npz"), "--board", "siracusa_zfinx"]
        args += ["--on", "gvsoc"]
    else:
        args = ["report", str(d), "--board", "siracusa_zfinx", "--measure"]
    r = _cli(tmp_path, *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "GVSoC for Zfinx: none at" in lines[0] and str(tmp_path / "nowhere") in lines[0]


def test_bench_zfinx_scores_tiles_and_predicts_with_the_zfinx_board(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gvsoc as bench  # bench/gvsoc.py

    from deeploy_mlir.pipeline import parse_pipeline

    monkeypatch.setattr(bench.P, "ISA", "zfinx")
    assert bench.board() == "siracusa_zfinx"
    text = bench._same_tiles_pipeline(
        EXAMPLES / "mlp_small", None, None, "plain", ("tiled", "double")
    )
    (ts,) = [p for p in parse_pipeline(text) if p.name == "tile-select"]
    assert ts.board == "siracusa_zfinx"  # type: ignore[attr-defined]
    z = bench.predict("mlp_small", "untiled").train
    monkeypatch.setattr(bench.P, "ISA", "f")
    assert bench.board() == "siracusa"
    f = bench.predict("mlp_small", "untiled").train
    # the two boards' kernels differ: so do the predictions of one program
    assert z != f
