"""Double buffering on GVSoC siracusa against single buffering of the same
tiles and against the step's roofline (issue 19: "never slower than single
buffering for the same tiles, and within 1.2x of the step's roofline
computed from the measured DMA and compute times").

mlp_wide at an L1 arena of 16,384 bytes, every op double-buffered
(tile-select{fallback=false}: left to itself, tile-select keeps single
buffering's tiles for every op of the examples at this budget, and double
buffering's program is single buffering's); bench/gvsoc.py's `forced-N`
and `single@forced-N` (the same pipeline without dma-multibuffer: the same
tiles, the copies waited around each kernel). One optimizer step of two
mini-batches each, and a profiled run of the double-buffered program for
its roofline R = max(K + I, D): K the kernel calls' and I the cluster DMA's
copy-issue cycles the probes measure, D the busiest DMA engine's cycles in
the calibrated cycle model (bench/gvsoc.py `roofline`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import needs_gvsoc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import gvsoc as bench  # noqa: E402  (bench/gvsoc.py)

MODEL, ARENA = "mlp_wide", 16384


def _profiled(sites: list[tuple[str, str, int, int]], overhead: int = 1) -> bench.Measured:
    return bench.Measured(
        train=0.0,
        optimizer=0.0,
        batch=1,
        profile={
            "overhead": overhead,
            "sites": [
                {"function": f, "kind": k, "calls": c, "cycles": y, "op": "training.x #0"}
                for f, k, c, y in sites
            ],
        },
        minibatches=2,
    )


def test_roofline_arithmetic() -> None:
    """R = max(K + I, D) per training step, the probe overhead taken off per
    call; the optimizer step's sites and the waits are not in it."""
    m = _profiled(
        [
            ("training_step", "kernel", 10, 2010),  # (2010 - 10) / 2 = 1000
            ("training_step", "dma-issue", 4, 404),  # (404 - 4) / 2 = 200
            ("training_step", "dma-wait", 4, 604),  # 300
            ("optimizer_step", "kernel", 5, 99999),
        ]
    )
    p = bench.Prediction(0, 0, 0, {}, {"mchan": 900})
    r = bench.roofline(m, p)
    assert (r.kernel, r.issue, r.wait, r.dma) == (1000, 200, 300, 900)
    assert r.bound == r.profiled_bound == 1200
    # D above K + I: the engine bounds the step
    assert bench.roofline(m, bench.Prediction(0, 0, 0, {}, {"mchan": 1500, "ram": 7})).bound == 1500
    # an unprofiled step shorter than the probed windows (1500): K and I
    # scale by 1200 / 1500
    r = bench.roofline(m, p, unprofiled=1200)
    assert r.scale == pytest.approx(0.8)
    assert r.bound == pytest.approx(960)
    assert r.profiled_bound == 1200
    # a longer one leaves them as measured
    assert bench.roofline(m, p, unprofiled=5000).scale == 1.0


def test_config_names() -> None:
    assert bench.config_spec("double-4096") == ("tiled", "double", 4096)
    assert bench.config_spec("single@forced-512") == ("tiled", "single@forced", 512)
    with pytest.raises(ValueError, match="unknown configuration"):
        bench.config_spec("triple-4096")


@needs_gvsoc
def test_double_buffering_beats_same_tiles_and_meets_roofline() -> None:
    double = bench.run_step(MODEL, f"forced-{ARENA}")
    same = bench.run_step(MODEL, f"single@forced-{ARENA}")
    assert not isinstance(double, str), double
    assert not isinstance(same, str), same
    # dma-multibuffer made rings: the programs differ
    assert double.program != same.program
    prof = bench.run_step(MODEL, f"forced-{ARENA}", profile=True)
    assert not isinstance(prof, str), prof
    r = bench.roofline(prof, bench.predict(MODEL, f"forced-{ARENA}"), double.train)
    print(
        f"{MODEL} arena {ARENA}: double {double.train:.0f}, single@double {same.train:.0f}, "
        f"K {r.kernel:.0f} I {r.issue:.0f} D {r.dma} scale {r.scale:.3f} R {r.bound:.0f}, "
        f"step / R {double.train / r.bound:.3f}"
    )
    assert r.kernel > 0 and r.issue > 0 and r.dma > 0
    assert double.train <= same.train
    assert double.train / r.bound <= 1.2
