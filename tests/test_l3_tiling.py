"""The L3 -> L2 hop in tiles: tensors larger than the whole L2 budget.

With `--home L3` every tensor whose size the L3 engines can move (a multiple
of 4 bytes) lives in L3, temporaries included, and with an L2 budget smaller
than the largest tensor tile-select stages each op's L3 operands through L2
in tiles that fit what the L2 plan leaves free (#tiling.loop<stage>), with the
L1 tiles inside. Every example must still train to onnxruntime-training's
numbers on the host emulation (which lands each copy at its wait and aborts
on a reused request), on both targets and with every buffering; the L2 arena
must fit the budget, and the L3 counters show the traffic went through L3."""

from __future__ import annotations

import math
from pathlib import Path

import onnx
import pytest
from conftest import STACKS, run_cli, train_like_expected

from deeploy_mlir.config import CompileConfig
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.tiling import is_loop
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.pipeline import parse_pipeline, pipeline, run_pipeline

pytestmark = pytest.mark.usefixtures("fast_build")

ROOT = Path(__file__).resolve().parents[1]
#: an L2 budget below each example's largest tensor (bytes)
BUDGETS = {"mlp_small": 500, "mlp_wide": 1000}


def _largest_tensor(d: Path) -> int:
    m = onnx.load(str(d / "training_model.onnx"))
    best = 0
    for vi in m.graph.input:
        dims = [x.dim_value for x in vi.type.tensor_type.shape.dim]
        best = max(best, 4 * math.prod(dims))
    return best


#: every target x buffering on mlp_wide (its largest tensor is 8 KiB, the L2
#: budget 1,000 B); mlp_small on each target with one buffering each
L3_CASES = [
    ("mlp_wide", t, b) for t in ("pulp-open", "gap9") for b in ("single", "double", "double-l3")
]
L3_CASES += [("mlp_small", "pulp-open", "double"), ("mlp_small", "gap9", "single")]


@pytest.mark.parametrize(("name", "target", "buffering"), L3_CASES)
def test_trains_with_l2_smaller_than_a_tensor(
    name: str, target: str, buffering: str, tmp_path: Path
) -> None:
    d = ROOT / "examples" / name
    l2 = BUDGETS[name]
    assert _largest_tensor(d) > l2  # the point of the test
    opts = [
        "--home",
        "L3",
        "--l2",
        l2,
        "--l1",
        STACKS + 2048,
        "--target",
        target,
        "--buffering",
        buffering,
    ]
    got = train_like_expected(d, tmp_path, *opts)
    dma = got["dma"]
    assert dma["L3->L2"]["bytes"] > 0 and dma["L2->L3"]["bytes"] > 0


def test_stage_tiles_fit_the_l2_budget() -> None:
    """The compiled module: stage loops exist, and the planned L2 arena (stage
    tiles included) is within the budget."""
    d = ROOT / "examples" / "mlp_wide"
    module = import_model(d).module.clone()
    l2 = BUDGETS["mlp_wide"]
    run_pipeline(module, pipeline(CompileConfig(l1=2048, buffering="single", l2=l2, home="L3")))
    loops = [o for o in module.walk() if is_loop(o, "stage")]
    assert len(loops) >= 3
    from deeploy_mlir.dialects import training as T

    assert 0 < T.arena_bytes(module, "L2") <= l2
    # no kernel reads L3: every compute op's operands are in L1
    for o in module.walk():
        if isinstance(o, T.TrainingComputeOp):
            for v in o.operands:
                assert 'memory_space = "L1"' in str(v.type) or '"L1"' in str(v.type), o


def test_too_small_l2_names_the_op(tmp_path: Path) -> None:
    d = ROOT / "examples" / "mlp_small"
    r = run_cli("lower", d, "-o", tmp_path / "out", "--home", "L3", "--l2", "64")
    assert r.code == 2
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
    assert "the L2 budget of 64 bytes is too small" in r.err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["mlp_wide", "resnet8"])
@pytest.mark.parametrize("home", ["L2", "L3"])
def test_the_arena_probe_is_what_arena_plan_plans(name: str, home: str) -> None:
    # memory/probe.py sizes an arena without a pass (tile-select, memory-home
    # and memory-regime decide by it): it must be what arena-plan then plans,
    # and leave the module as it was
    from deeploy_mlir.memory.probe import arena_size

    module = import_model(ROOT / "examples" / name).module
    pre = "training-inplace-alias,training-bufferize{level=L2},"
    pre += f"memory-home{{home={home} stage=tiled}}"
    run_pipeline(module, parse_pipeline(pre))
    before = str(module)
    sizes = {lv: arena_size(module, lv) for lv in ("L2", "L3")}
    assert str(module) == before
    run_pipeline(module, parse_pipeline("arena-plan{level=L2},arena-plan{level=L3}"))
    planned = {lv: T.arena_of(module, lv) for lv in ("L2", "L3")}
    got = {lv: a.size_bytes if a is not None else 0 for lv, a in planned.items()}
    assert sizes == got
    assert sizes["L3" if home == "L3" else "L2"] > 0
