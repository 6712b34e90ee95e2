"""Interpreting the IR before and after each pass of the default pipeline gives
the same numbers, on every example; and the interpreter agrees with
onnxruntime-training's expected values. The arena-planned IR is interpreted
with real shared storage (numpy views into one byte array), so a wrong plan or
a wrong in-place decision changes the numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import example_dirs, load_expected, model_dirs
from validation import check_every_pass, reference, train

from deeploy_mlir.config import CompileConfig as C
from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.pipeline import l2_pipeline, make_context, pipeline

EXAMPLES = example_dirs()
#: the untiled L2 pipeline, and tiled ones that force many tiles (1-2 KiB of L1)
#: through every DMA pass: single and double buffering, both targets' engines
PIPELINES: dict[str, object] = {
    "l2": l2_pipeline(),
    "tiled-single-pulp-open": pipeline(C(l1=1024, target="pulp-open", buffering="single")),
    "tiled-double-gap9": pipeline(C(l1=2048, target="gap9", buffering="double")),
    "untiled-double-pulp-open": pipeline(C(tiling="untiled", l1=1 << 20, buffering="double")),
    "weights-l3-tiled-double-gap9": pipeline(
        C(l1=4096, target="gap9", buffering="double", weights="L3")
    ),
    # every tensor in L3, moved through 1000 bytes of L2 in stage tiles
    "home-l3-staged-single-pulp-open": pipeline(
        C(l1=2048, target="pulp-open", buffering="single", l2=1000, home="L3")
    ),
    "home-l3-staged-double-l3-gap9": pipeline(
        C(l1=2048, target="gap9", buffering="double-l3", l2=1000, home="L3")
    ),
    # an L2 budget of 80% of what the model needs: the largest tensors spill to
    # L3 (the budget is filled in per example, below)
    "l2-spill-none": "spill",
}


def _spill_pipeline(module) -> tuple:
    from deeploy_mlir.interp.interpreter import arena_sizes
    from deeploy_mlir.pipeline import run_pipeline

    probe = module.clone()
    run_pipeline(probe, l2_pipeline())
    budget = arena_sizes(probe)["L2"] * 4 // 5
    return pipeline(C(tiling="none", l2=budget))


#: every pipeline on the first example; on the other, the untiled, one tiled
#: double-buffered and one L3-staged pipeline (the same passes, larger shapes)
CASES = [(EXAMPLES[0], k) for k in PIPELINES]
CASES += [
    (d, k)
    for d in EXAMPLES[1:]
    for k in ("l2", "tiled-double-gap9", "home-l3-staged-single-pulp-open")
]


@pytest.mark.parametrize(
    ("d", "pipeline"),
    [(d, PIPELINES[k]) for d, k in CASES],
    ids=[f"{d.name}-{k}" for d, k in CASES],
)
def test_every_pass_preserves_the_numbers(d: Path, pipeline: object) -> None:
    exp = load_expected(d)
    model = import_model(d)
    module = model.module
    passes = _spill_pipeline(module) if pipeline == "spill" else pipeline
    # tiles split the sums of a gemm's rows differently from one whole
    # matmul, so tiled numbers agree to fp32 rounding, not bit for bit
    check_every_pass(module, model.params, d, passes, exp=exp, ref_atol=1e-6)
    if any(getattr(p, "name", "") == "memory-home" for p in passes):
        assert T.arena_of(module, "L3") is not None  # something is in L3


def test_a_corrupted_plan_changes_the_numbers() -> None:
    """The check above can fail: put two live buffers at one offset and the
    interpreted numbers change."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    from deeploy_mlir.dialects.training import ArenaViewOp

    d = EXAMPLES[0]
    exp = load_expected(d)
    model = import_model(d)
    module = model.module
    ctx = make_context()
    for p in l2_pipeline():
        p.apply(ctx, module)
    good, _ = train(module, model.params, d, exp)
    views = [op for op in module.walk() if isinstance(op, ArenaViewOp)]
    offsets = sorted({v.offset.value.data for v in views})
    assert len(offsets) >= 2
    for v in views:  # every temporary at the same offset
        v.offset = IntegerAttr(offsets[0], i64)
    bad, _ = train(module, model.params, d, exp)
    assert not np.allclose(bad, good, rtol=1e-4)


MODELS = model_dirs()


@pytest.mark.parametrize("d", MODELS, ids=[d.name for d in MODELS])
def test_default_pipeline_preserves_the_numbers_of_every_model(d: Path) -> None:
    """The models of make_models.py (conv, pooling, transformer ops, frozen
    parameters): interpreted before the default pipeline they train like
    onnxruntime-training (reference.json), and after each of its passes they
    give the same numbers."""
    model = import_model(d)
    passes = l2_pipeline()
    check_every_pass(
        model.module, model.params, d, passes, ref_atol=1e-6, reshape=True, rtol=1e-6, atol=1e-8
    )


@pytest.mark.parametrize(
    ("buffering", "l1", "target"), [("single", 100, "pulp-open"), ("double", 200, "gap9")]
)
def test_gemm_k_tiles_preserve_the_numbers(buffering: str, l1: int, target: str) -> None:
    """simple_mlp at an L1 so small that its gemms' reduction dim K tiles
    (with K whole, one row of X and of W do not fit): after every pass the
    interpreted training gives the numbers of the imported graph (to fp32
    rounding, like the tiled pipelines above: the interpreter's gemm is
    numpy's matmul, whose sums a split changes), and the materialized IR
    does hold K tiles -- some that go on from Y (`accumulate`), some that
    store raw sums (`partial`)."""
    d = Path(__file__).resolve().parents[1] / "examples" / "simple_mlp"
    model = import_model(d)
    module = model.module
    passes = pipeline(C(l1=l1, target=target, buffering=buffering))
    check_every_pass(module, model.params, d, passes, want_params=())
    gemms = [o for o in module.walk() if isinstance(o, T.GemmOp)]
    assert any(o.accumulated() for o in gemms)
    assert any(o.partial is not None for o in gemms)
    assert any(o.accumulated() and o.partial is None for o in gemms)  # the last K tiles


@pytest.mark.parametrize(
    "cfg",
    [C(tiling="untiled", l1=1 << 20), C(l1=8192, buffering="double")],
    ids=["untiled", "tiled-double-8k"],
)
def test_accumulate_fuse_keeps_the_bits(cfg: C) -> None:
    """examples/cct over 3 steps of 2 mini-batches (the second of each step
    accumulates: reset is false): with accumulate-fuse its transposes,
    conv2d_grads and gemm write the gradient buffers themselves (`onto`), and the
    interpreted training gives the bits of the pipeline without the pass --
    the fused op adds the buffer after its own sum, as the accumulation did
    -- and the numbers of onnxruntime-training. With transpose-fold (the
    default) the weight gradients are gemms of their own, no longer
    transposed, and the gemms take the transposes' place."""
    import dataclasses

    from deeploy_mlir.pipeline import run_pipeline

    d = Path(__file__).resolve().parents[1] / "examples" / "cct"
    exp = reference(d)
    assert exp["accum"] >= 2 and exp["steps"] >= 2
    model = import_model(d)
    for fold in (False, True):
        got = {}
        for fuse in (True, False):
            module = model.module.clone()
            one = dataclasses.replace(cfg, accumulate_fuse=fuse, transpose_fold=fold)
            run_pipeline(module, pipeline(one))
            onto = {o.name for o in module.walk() if isinstance(o, T.TrainingComputeOp) and o.onto}
            want = {"training.conv2d_grad", "training.gemm"}
            assert onto == ((want if fold else want | {"training.transpose"}) if fuse else set())
            got[fuse] = train(module, model.params, d, exp)
        (l_f, p_f), (l_u, p_u) = got[True], got[False]
        assert np.asarray(l_f, np.float32).tobytes() == np.asarray(l_u, np.float32).tobytes()
        for k in p_u:
            assert np.asarray(p_f[k]).tobytes() == np.asarray(p_u[k]).tobytes(), k
        np.testing.assert_allclose(l_f, exp["losses"], rtol=1e-5, atol=1e-6)
