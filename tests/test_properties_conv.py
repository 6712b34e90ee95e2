"""Property: for random convolutions (regular, depthwise, pointwise; kernel 1
or 3; stride 1 or 2; padding; with or without bias; forward Conv or
com.microsoft ConvGrad with a random subset of its outputs) and random L1
budgets between the smallest tiles and the whole op, the emitted C run on the
host emulation gives the numbers of the reference interpreter
(deeploy_mlir/interp/reference.py, float64 sums) for the imported op, single
and double buffered. Tolerance rtol 1e-5, atol 1e-5 (float32 sums in the
kernels)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
from conftest import STACKS
from host_run import lower_and_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_builders import make_model, vi

from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.reference import compute
from deeploy_mlir.pipeline import bufferize_only, run_pipeline
from deeploy_mlir.tiling.model import footprint, tile_operands, whole_dims


@st.composite
def conv_problems(draw: st.DrawFn) -> dict:
    kind = draw(st.sampled_from(["regular", "depthwise", "pointwise"]))
    c = draw(st.integers(1, 6))
    m = c if kind == "depthwise" else draw(st.integers(1, 6))
    k = 1 if kind == "pointwise" else draw(st.sampled_from([1, 3]))
    pads = [draw(st.integers(0, k // 2 + (k > 1))) for _ in range(4)]
    return {
        "n": draw(st.integers(1, 2)),
        "c": c,
        "m": m,
        "group": c if kind == "depthwise" else 1,
        "k": k,
        "stride": draw(st.sampled_from([1, 2])),
        "pads": pads,
        "h": draw(st.integers(k, 9)),
        "w": draw(st.integers(k, 9)),
        "bias": draw(st.booleans()),
        "grad": draw(st.sampled_from([None, ("dX", "dW", "dB"), ("", "dW", "dB"), ("dX", "", "")])),
        "buffering": draw(st.sampled_from(["single", "double"])),
        "budget": draw(st.floats(0.0, 1.0)),
        "seed": draw(st.integers(0, 2**31 - 1)),
    }


def _model(p: dict) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(p["seed"])
    x = rng.standard_normal((p["n"], p["c"], p["h"], p["w"])).astype(np.float32)
    w = rng.standard_normal((p["m"], p["c"] // p["group"], p["k"], p["k"])).astype(np.float32)
    attrs = {
        "kernel_shape": [p["k"], p["k"]],
        "strides": [p["stride"]] * 2,
        "pads": p["pads"],
        "group": p["group"],
    }
    oh = (p["h"] + p["pads"][0] + p["pads"][2] - p["k"]) // p["stride"] + 1
    ow = (p["w"] + p["pads"][1] + p["pads"][3] - p["k"]) // p["stride"] + 1
    feeds = {"X": x, "W": w}
    if p["grad"] is None:
        ins = ["X", "W"]
        if p["bias"]:
            feeds["B"] = rng.standard_normal(p["m"]).astype(np.float32)
            ins.append("B")
        node = helper.make_node("Conv", ins, ["Y"], **attrs)
        outs = [vi("Y", [p["n"], p["m"], oh, ow])]
    else:
        feeds = {"dY": rng.standard_normal((p["n"], p["m"], oh, ow)).astype(np.float32), **feeds}
        names = list(p["grad"])
        node = helper.make_node(
            "ConvGrad", ["dY", "X", "W"], names, domain="com.microsoft", **attrs
        )
        shapes = {"dX": x.shape, "dW": w.shape, "dB": (p["m"],)}
        outs = [vi(n, list(shapes[n])) for n in names if n]
    ins_vi = [vi(k, list(v.shape)) for k, v in feeds.items()]
    return make_model([node], ins_vi, outs, ms=True), feeds


def _l1_budget(path: Path, buffers: int, frac: float) -> tuple[int, T.TrainingComputeOp]:
    """A budget between the smallest tiles and the whole op (times the
    buffers), and the imported op."""
    imported = import_model(path)
    module = imported.module.clone()
    run_pipeline(module, bufferize_only(inplace=False))
    op = next(o for o in module.walk() if isinstance(o, T.Conv2dOp | T.Conv2dGradOp))
    assert isinstance(op, T.IterationSpaceInterface)
    dims = list(op.iteration_space().dims)
    whole = whole_dims(op)
    ops = tile_operands(op)
    lo = footprint([n if d in whole else 1 for d, n in enumerate(dims)], ops, buffers)
    hi = footprint(dims, ops, buffers)
    tensor_op = next(
        o for o in imported.module.walk() if isinstance(o, T.Conv2dOp | T.Conv2dGradOp)
    )
    return (lo + int(frac * (hi - lo))) // 4 * 4 + 4, tensor_op


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_problems())
def test_tiled_conv_on_the_host_equals_the_reference(p: dict) -> None:
    model, feeds = _model(p)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        onnx.save(model, d / "m.onnx")
        np.savez(d / "d.npz", **{k: v[None] for k, v in feeds.items()})
        buffers = 2 if p["buffering"] == "double" else 1
        l1, op = _l1_budget(d / "m.onnx", buffers, p["budget"])
        opts = ["--l1", str(STACKS + l1), "--buffering", p["buffering"], "--data", str(d / "d.npz")]
        run = lower_and_run(d / "m.onnx", d / "proj", *opts)
    names = [o.name for o in model.graph.output]
    ins = [feeds[n] for n in (["dY", "X", "W"] if p["grad"] else list(feeds))]
    want = compute(op, ins)
    for name, ref in zip(names, want, strict=True):
        got = run.outs[name].reshape(ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5, err_msg=f"{name}: {p}")
