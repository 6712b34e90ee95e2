"""The siracusa board's calibrated numbers against GVSoC siracusa.

- A quick re-measure (bench/calibrate.py's programs on a cheap subset: the
  cluster DMA at two sizes, both directions, 1-D and 2-D; gemm at two sizes
  on 8 cores) gives the board's DMA setup and bandwidth and its gemm cycles
  (MAC/cycle and cycles per call) within 15%. The board's numbers were
  written by `python bench/calibrate.py`; the expected cycles here are
  computed from the board's numbers, not pasted.
- The cycle model (deeploy_mlir.cost on the board) predicts the measured
  GVSoC cycles of one untiled training step of mlp_small and mlp_wide within
  25%.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli, training_args

from deeploy_mlir.cost.events import compute_cycles, transfer_cycles
from deeploy_mlir.targets.boards import load_board

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gvsoc_probe as P  # noqa: E402

try:
    from deeploy_mlir.targets import gvsoc

    gvsoc.find_setup()
    HAVE_GVSOC = True
except Exception:
    HAVE_GVSOC = False

needs_gvsoc = pytest.mark.skipif(not HAVE_GVSOC, reason="GVSoC is not installed")


@needs_gvsoc
def test_dma_and_gemm_match_the_board() -> None:
    board = load_board("siracusa")
    mchan = board.engine_between("L2", "L1")
    t = P.measure_transfers([1024, 8192], ram=False)
    # the board's setup is the engine's part after one isolated issue; its
    # `issue` is the larger per-copy cost of the examples' emitted code
    issue = sorted(t.issue)[len(t.issue) // 2]
    assert issue <= mchan.issue, (issue, mchan.issue)
    # every direction and shape, measured issue-to-wait-end, against the
    # isolated issue + the board's setup + bytes / bandwidth
    for key, pts in t.dma.items():
        for nbytes, cycles in pts:
            model = issue + transfer_cycles(mchan, nbytes)
            assert abs(cycles - model) <= 0.15 * cycles + 20, (key, nbytes, cycles, model)
    cases = [P.gemm(32, 32, 32, 0, 0, ""), P.gemm(64, 64, 64, 0, 1, "")]
    cyc = P.measure_kernels(cases, teams=(8,))
    for i, c in enumerate(cases):
        model = compute_cycles(board, "gemm", c.macs, 1, c.units)
        got = cyc[(i, 8)]
        assert abs(got - model) <= 0.15 * got, (c.shape, got, model)


def _step_cycles(tmp: Path, model: str) -> float:
    d = EXAMPLES / model
    args = training_args(d)
    # one optimizer step of two mini-batches
    args[args.index("--steps") + 1] = "1"
    args[args.index("--accum") + 1] = "2"
    out = tmp / f"{model}.json"
    r = run_cli("run", d, *args, "--tiling", "untiled", "--on", "gvsoc", "--json", out)
    assert r.code == 0, r.err
    cycles = json.loads(out.read_text())["bench"]["train_cycles"]
    assert len(cycles) == 2
    return sum(cycles) / len(cycles)


@needs_gvsoc
@pytest.mark.parametrize("model", ["mlp_small", "mlp_wide"])
def test_cycle_model_within_25_percent_of_gvsoc(tmp_path: Path, model: str) -> None:
    import gvsoc as bench  # bench/gvsoc.py

    measured = _step_cycles(tmp_path, model)
    predicted = bench.predict(model, "untiled").train
    assert 0.75 <= predicted / measured <= 1.25, (model, measured, predicted)
