"""The L3 hop of tensors homed in L3: stage tiles of accumulating ops
(tile-select), the l3-overlap pass, and the cycle model's view of the
HyperRAM copies (a bounded queue, chunks, rows apart)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, run_cli, run_training
from xdsl.dialects import scf

from deeploy_mlir.config import CompileConfig as C
from deeploy_mlir.cost.schedule import schedule_cost
from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.tiling import TiledOp
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.interpreter import TrainingSession, loss_output_name
from deeploy_mlir.memory.buffers import step_functions
from deeploy_mlir.memory.probe import arena_size
from deeploy_mlir.passes.l3_overlap import L3Overlap
from deeploy_mlir.pipeline import make_context, pipeline, run_pipeline
from deeploy_mlir.targets.boards import load_board
from deeploy_mlir.tiling.model import summed_whole, tile_operands


def _reference(d: Path) -> dict:
    ref = d / "reference.json"
    return json.loads((ref if ref.is_file() else d / "expected.json").read_text())


def _train(module, params, d: Path) -> tuple[list[float], dict[str, np.ndarray]]:
    exp = _reference(d)
    with np.load(d / "data.npz") as z:
        data = {k: z[k] for k in z.files}
    s = TrainingSession(module, params)
    return s.train(data, exp["steps"], exp["accum"], exp["lr"], loss_output_name(module) or "")


def _check_numbers(module, params, d: Path) -> None:
    exp = _reference(d)
    losses, got = _train(module, params, d)
    np.testing.assert_allclose(losses, exp["losses"], rtol=1e-4)
    for name, want in exp["params"].items():
        have = np.asarray(got[name]).reshape(np.shape(want))
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-6, err_msg=name)


def test_stage_tiles_keep_the_dims_a_summed_output_does_not_index() -> None:
    """Regression (published MobileNetV1 at L1 64,000 double-buffered did not
    compile: tiling-materialize's "adds into outputs over its reduction dims
    [..], but dim 2 also tiles"). The first conv's weight gradient (N 2, M 4,
    C 3, OH 6, OW 6, kernel 3x3, input 12x12) with every tensor in L3, 6,000
    bytes of L2 and 800 of L1: its L1 tiles must accumulate over a reduction
    dim, and dB (indexed by M alone) adds up over them, so the L3 stage tile
    may not split C (dim 2): it did, one C per stage tile."""
    d = EXAMPLES / "mobilenet_v1"
    model = import_model(d)
    module = model.module
    passes = pipeline(C(l1=800, l2=6000, home="L3", buffering="double"))
    upto = [p for p in passes if p.name in ("training-inplace-alias", "training-bufferize")]
    upto += [p for p in passes if p.name in ("memory-home", "tile-select")]
    probe = module.clone()
    run_pipeline(probe, upto)
    seen = 0
    for t in probe.walk():
        if not isinstance(t, TiledOp) or not isinstance(t.inner, T.Conv2dGradOp):
            continue
        space = t.inner.iteration_space()
        tiles, outer = t.tile_sizes(), t.outer_sizes()
        acc = [k for k in space.accumulate if tiles[k] < space.dims[k]]
        if outer is None or not acc:
            continue
        seen += 1
        for k in summed_whole(space, tile_operands(t.inner)):
            assert outer[k] == space.dims[k], (space.dims, outer, tiles)
    assert seen, "the case must accumulate over a reduction inside an L3 stage tile"
    run_pipeline(module, passes)
    _check_numbers(module, model.params, d)


def _ds_cnn_l3(with_overlap: bool):
    d = EXAMPLES / "ds_cnn"
    model = import_model(d)
    passes = pipeline(C(l1=8192, l2=64000, home="L3", buffering="double"))
    assert "l3-overlap" in [p.name for p in passes]
    if not with_overlap:
        passes = tuple(p for p in passes if p.name != "l3-overlap")
    run_pipeline(model.module, passes)
    return d, model


def _late_waits(ops) -> int:
    """Waits on L2 -> L3 stores with a compute op (or loop) between the store
    and its wait."""
    crossed: dict[object, bool] = {}  # store -> a compute op since it
    late = 0
    for o in ops:
        if isinstance(o, T.TrainingComputeOp | scf.ForOp):
            crossed = dict.fromkeys(crossed, True)
        elif isinstance(o, dma.CopyOp) and o.dst_level == "L3":
            crossed[o] = False
        elif isinstance(o, dma.WaitOp) and crossed.pop(o.token.owner, False):
            late += 1
    return late


def test_l3_overlap_moves_copies_and_keeps_the_numbers() -> None:
    """ds_cnn with every tensor in L3 (64,000 bytes of L2): its ops' L3
    operands are one stage tile each. l3-overlap issues fetches one op early
    and waits for stores one op late; the numbers stay the reference's, and
    the cycle model (siracusa's queued HyperRAM copies) finds the training
    step faster than without the pass."""
    d, model = _ds_cnn_l3(True)
    m = model.module
    step = next(
        f for f in m.ops if getattr(f, "sym_name", None) and f.sym_name.data == "training_step"
    )
    block = step.body.block
    hoisted = [o for o in block.ops if isinstance(o, dma.CopyOp) and "dma.remark" in o.attributes]
    assert hoisted and all(o.src_level == "L3" for o in hoisted)
    # a store waited for after a compute op that follows it
    late = _late_waits(block.ops)
    assert late > 0
    _check_numbers(m, model.params, d)
    board = load_board("siracusa")
    with_pass = schedule_cost(m, board)["train"].cycles
    _, plain = _ds_cnn_l3(False)
    without = schedule_cost(plain.module, board)["train"].cycles
    assert with_pass < without, (with_pass, without)


def test_l3_overlap_keeps_the_l2_plan_within_its_budget() -> None:
    """The moved buffers live longer: unbounded, the pass grows ds_cnn's L2
    plan; with the plan's size before it as the budget, the pass keeps only
    moves that fit (some, not all), and the plan stays within it."""
    d = EXAMPLES / "ds_cnn"
    model = import_model(d)
    passes = pipeline(C(l1=8192, l2=64000, home="L3", buffering="double"))
    k = [p.name for p in passes].index("l3-overlap")
    run_pipeline(model.module, passes[:k])
    before = arena_size(model.module, "L2")
    free, tight = model.module.clone(), model.module.clone()
    ctx = make_context()
    L3Overlap().apply(ctx, free)
    L3Overlap(l2=before).apply(ctx, tight)

    def moved(m) -> int:
        fetches = sum(
            1 for o in m.walk() if isinstance(o, dma.CopyOp) and "dma.remark" in o.attributes
        )
        return fetches + sum(_late_waits(f.body.block.ops) for f in step_functions(m))

    assert arena_size(free, "L2") > before
    assert arena_size(tight, "L2") <= before
    # not every move of the unbounded pass (they do not all fit), but some
    assert str(tight) != str(free)
    assert moved(tight) > 0


def _l3_copies(m) -> tuple[int, int]:
    """(L3 copies, bytes they move once each) of a module."""
    n = b = 0
    for o in m.walk():
        if isinstance(o, dma.CopyOp) and "L3" in (o.src_level, o.dst_level):
            n += 1
            k = 4
            for s in o.box:
                k *= s
            b += k
    return n, b


def test_l3_overlap_forwarding_drops_copies_and_keeps_the_numbers() -> None:
    """ds_cnn with every tensor in L3: each op's output is stored to L3 and
    fetched right back for the next op. l3-overlap's forwarding (the
    default) reads the L2 buffer that holds the bytes instead, drops the
    stores overwritten unread and hoists loop-invariant fetches: fewer L3
    copies and bytes than with `forward=false`, the reference's numbers,
    and a faster step in the cycle model."""
    from dataclasses import replace

    d = EXAMPLES / "ds_cnn"
    runs = {}
    for fwd in (False, True):
        model = import_model(d)
        passes = pipeline(C(l1=8192, l2=64000, home="L3", buffering="double"))
        passes = tuple(replace(p, forward=fwd) if p.name == "l3-overlap" else p for p in passes)
        run_pipeline(model.module, passes)
        runs[fwd] = model
    (n0, b0), (n1, b1) = _l3_copies(runs[False].module), _l3_copies(runs[True].module)
    assert n1 < n0 and b1 < b0, (n0, n1, b0, b1)
    _check_numbers(runs[True].module, runs[True].params, d)
    board = load_board("siracusa")
    fast = schedule_cost(runs[True].module, board)["train"].cycles
    slow = schedule_cost(runs[False].module, board)["train"].cycles
    assert fast < slow, (fast, slow)


@pytest.mark.parametrize(
    ("name", "opts"),
    [
        ("mlp_small", ["--regime", "spill"]),
        ("ds_cnn", ["--home", "L3", "--l2", "64000", "--buffering", "single"]),
    ],
)
def test_forwarding_keeps_the_host_emulations_bits(
    name: str, opts: list[str], tmp_path: Path, fast_build: None
) -> None:
    """The default pipeline forwards (every buffering; single buffering
    without the moves); `l3-overlap{forward=false}` in the same pipeline's
    text is the opt-out. The emitted C on the host emulation gives the same
    losses and weights, bit for bit, with fewer L3 copies: the same bytes
    reach every kernel, only L3 hops are skipped."""
    d = EXAMPLES / name
    p = run_cli("lower", d, "-o", tmp_path / "unused", "--print-pipeline", *opts)
    assert p.code == 0, p.err
    on = p.out.strip()
    assert on.count("l3-overlap{") == 1 and "forward=false" not in on
    off = on.replace("l3-overlap{", "l3-overlap{forward=false ")
    runs = {}
    for k, o in (("on", opts), ("off", ["--pass-pipeline", off])):
        (tmp_path / k).mkdir()
        runs[k], _ = run_training(d, tmp_path / k, *o)
    a, b = runs["on"], runs["off"]
    assert a["losses"] == b["losses"]
    assert a["params"] == b["params"]

    def l3(j: dict) -> tuple[int, int]:
        hops = [v for h, v in j["dma"].items() if "L3" in h]
        return sum(v["transfers"] for v in hops), sum(v["bytes"] for v in hops)

    (n_on, b_on), (n_off, b_off) = l3(a), l3(b)
    assert n_on < n_off and b_on < b_off, (l3(a), l3(b))
