"""Convolution and pooling, forward and backward (NCHW, fp32), at every level:

* the reference semantics (deeploy_mlir/interp/reference.py) against
  onnxruntime executing the same ONNX op (forward: Conv, MaxPool with
  Indices, AveragePool, GlobalAveragePool; gradients: ConvGrad, MaxPoolGrad,
  AveragePoolGrad) and every gradient against torch autograd, on fixed cases
  (stride 2, asymmetric pads, dilation, depthwise, pointwise, groups) and on
  random shapes;
* the iteration spaces: every map result is one loop dim, the sliding-window
  relation holds, and tile-select + tiling-materialize on the buffer form
  (forced to split batch/channel dims) compute the same numbers;
* the runtime_c kernels, built with the host emulation for NUM_CORES 1 and 8
  (and again under -fsanitize=address,undefined, in a child pytest that
  preloads the sanitizer runtime), against the reference.

torch and onnxruntime are imported where they are used, so that the child
run under the sanitizers loads neither."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from c_structs import mirror
from kernel_harness import (
    GCC,
    ROOT,
    Guarded,
    KernelLib,
    buffer_module,
    build,
    compute_op,
    kernel_library,
    materialize,
    mirror_layout,
    p,
    select_tiles,
    tensor,
    untiled,
)
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, StringAttr, UnitAttr, i64
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineDimExpr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp.reference import compute
from deeploy_mlir.pipeline import make_context
from deeploy_mlir.tiling.model import (
    footprint,
    halos,
    summed_whole,
    tile_operands,
    whole_dims,
    with_halos,
)

RNG = np.random.default_rng(2024)
F64_TOL = {"rtol": 1e-5, "atol": 1e-5}
SANITIZE_ENV = "DM_CONV_OPS_SANITIZE"

# ---------------------------------------------------------------- cases


@dataclass(frozen=True)
class Conv:
    n: int
    c: int
    h: int
    w: int
    m: int
    groups: int
    k: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilations: tuple[int, int] = (1, 1)
    bias: bool = True

    @property
    def x_shape(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, self.h, self.w)

    @property
    def w_shape(self) -> tuple[int, int, int, int]:
        return (self.m, self.c // self.groups, *self.k)

    def out_hw(self) -> tuple[int, int]:
        out = []
        for a, size in enumerate((self.h, self.w)):
            ext = (self.k[a] - 1) * self.dilations[a] + 1
            out.append((size + self.pads[a] + self.pads[a + 2] - ext) // self.strides[a] + 1)
        return out[0], out[1]

    @property
    def y_shape(self) -> tuple[int, int, int, int]:
        return (self.n, self.m, *self.out_hw())

    def props(self) -> dict[str, Attribute]:
        return {
            "strides": DenseArrayBase.from_list(i64, list(self.strides)),
            "pads": DenseArrayBase.from_list(i64, list(self.pads)),
            "dilations": DenseArrayBase.from_list(i64, list(self.dilations)),
        }

    def onnx_attrs(self) -> dict[str, Any]:
        return {
            "kernel_shape": list(self.k),
            "strides": list(self.strides),
            "pads": list(self.pads),
            "dilations": list(self.dilations),
            "group": self.groups,
        }


CONV_CASES = {
    "regular-3x3-pad1": Conv(2, 3, 7, 6, 4, 1, (3, 3), pads=(1, 1, 1, 1)),
    "stride2-pads": Conv(2, 4, 9, 8, 5, 1, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
    "asymmetric-pads-strides": Conv(1, 2, 8, 7, 3, 1, (3, 2), strides=(2, 1), pads=(0, 1, 2, 0)),
    "dilation2": Conv(2, 3, 9, 9, 2, 1, (3, 3), pads=(2, 2, 2, 2), dilations=(2, 2)),
    "depthwise": Conv(2, 6, 8, 8, 6, 6, (3, 3), pads=(1, 1, 1, 1)),
    "depthwise-stride2-nobias": Conv(1, 4, 9, 9, 4, 4, (3, 3), (2, 2), (1, 1, 1, 1), bias=False),
    "depthwise-multiplier": Conv(2, 3, 6, 6, 6, 3, (3, 3), pads=(1, 1, 1, 1)),
    "pointwise": Conv(3, 8, 5, 5, 6, 1, (1, 1)),
    "pointwise-stride2": Conv(2, 4, 6, 7, 3, 1, (1, 1), strides=(2, 2), bias=False),
    "groups2": Conv(2, 4, 7, 7, 6, 2, (3, 3), pads=(1, 0, 1, 2)),
    "window-in-padding": Conv(1, 2, 3, 3, 2, 1, (2, 2), strides=(2, 2), pads=(3, 0, 1, 3)),
    "kernel-is-input": Conv(2, 3, 4, 5, 2, 1, (4, 5)),
}


def random_conv(rng: np.random.Generator) -> Conv:
    kind = rng.choice(["regular", "depthwise", "groups", "pointwise"])
    n = int(rng.integers(1, 4))
    if kind == "depthwise":
        c = int(rng.integers(2, 9))
        groups, m = c, c
    elif kind == "groups":
        groups = int(rng.integers(2, 4))
        c, m = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 3))
    else:
        groups, c, m = 1, int(rng.integers(1, 7)), int(rng.integers(1, 7))
    k = (1, 1) if kind == "pointwise" else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    strides = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3))) if kind == "regular" else (1, 1)
    pads = tuple(int(rng.integers(0, k[i % 2] + 1)) for i in range(4))
    h = int(rng.integers(k[0] * dil[0], 11))
    w = int(rng.integers(k[1] * dil[1], 11))
    return Conv(n, c, h, w, m, groups, k, strides, pads, dil, bool(rng.integers(0, 2)))  # type: ignore[arg-type]


_case_rng = np.random.default_rng(7)
for _i in range(8):
    CONV_CASES[f"random{_i}"] = random_conv(_case_rng)


@dataclass(frozen=True)
class Pool:
    n: int
    c: int
    h: int
    w: int
    k: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilations: tuple[int, int] = (1, 1)
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def x_shape(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, self.h, self.w)

    def out_hw(self) -> tuple[int, int]:
        return Conv(
            1, 1, self.h, self.w, 1, 1, self.k, self.strides, self.pads, self.dilations
        ).out_hw()

    @property
    def y_shape(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, *self.out_hw())

    def props(self, dilations: bool) -> dict[str, Attribute]:
        p: dict[str, Attribute] = {
            "kernel_shape": DenseArrayBase.from_list(i64, list(self.k)),
            "strides": DenseArrayBase.from_list(i64, list(self.strides)),
            "pads": DenseArrayBase.from_list(i64, list(self.pads)),
        }
        if dilations:
            p["dilations"] = DenseArrayBase.from_list(i64, list(self.dilations))
        return p

    def onnx_attrs(self, dilations: bool) -> dict[str, Any]:
        a: dict[str, Any] = {
            "kernel_shape": list(self.k),
            "strides": list(self.strides),
            "pads": list(self.pads),
        }
        if dilations:
            a["dilations"] = list(self.dilations)
        return a


POOL_CASES = {
    "2x2-stride2": Pool(2, 3, 8, 8, (2, 2), (2, 2)),
    "3x3-stride2-pad1": Pool(2, 4, 9, 7, (3, 3), (2, 2), (1, 1, 1, 1)),
    "3x3-stride1-pad1": Pool(1, 2, 5, 6, (3, 3), (1, 1), (1, 1, 1, 1)),
    "asymmetric": Pool(2, 2, 7, 8, (3, 2), (2, 3), (0, 1, 2, 0)),
    "odd-size-floor": Pool(1, 3, 7, 7, (2, 2), (2, 2)),
    "whole-plane": Pool(2, 3, 4, 5, (4, 5)),
    "overlapping": Pool(1, 2, 6, 6, (3, 3), (1, 1)),
    "dilation2": Pool(2, 2, 9, 8, (2, 3), (1, 2), (1, 0, 1, 2), (2, 2)),
}
#: AveragePool has no dilations in our op
AVG_CASES = {k: v for k, v in POOL_CASES.items() if v.dilations == (1, 1)}


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- building ops


def conv_op(cfg: Conv, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> T.TrainingComputeOp:
    ins = [x, w] if b is None else [x, w, b]
    return build(T.Conv2dOp, ins, [tensor(cfg.y_shape)], cfg.props())


def conv_grad_op(
    cfg: Conv, dy: np.ndarray, x: np.ndarray, w: np.ndarray, grads: Sequence[str]
) -> T.TrainingComputeOp:
    shapes = {"dX": cfg.x_shape, "dW": cfg.w_shape, "dB": (cfg.m,)}
    props = {**cfg.props(), "outputs": ArrayAttr([StringAttr(g) for g in grads])}
    return build(T.Conv2dGradOp, [dy, x, w], [tensor(shapes[g]) for g in grads], props)


def maxpool_op(cfg: Pool, x: np.ndarray, with_indices: bool = True) -> T.TrainingComputeOp:
    outs = [tensor(cfg.y_shape)] + ([tensor(cfg.y_shape, i64)] if with_indices else [])
    return build(T.MaxPool2dOp, [x], outs, cfg.props(True))


def avg_props(cfg: Pool, include_pad: bool) -> dict[str, Attribute]:
    return {**cfg.props(False), **({"count_include_pad": UnitAttr()} if include_pad else {})}


# ---------------------------------------------------------------- oracles


def ort_run(
    op_type: str,
    feeds: dict[str, np.ndarray],
    outs: Sequence[tuple[str, Sequence[int], int]],
    domain: str = "",
    **attrs: Any,
) -> list[np.ndarray]:
    """One ONNX node run by onnxruntime (com.microsoft and training ops included)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper
    from onnx_builders import make_model, vi

    kinds = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64}
    node = helper.make_node(op_type, list(feeds), [o[0] for o in outs], domain=domain, **attrs)
    ins = [vi(k, list(v.shape), kinds[v.dtype.type]) for k, v in feeds.items()]
    out_vi = [vi(name, list(shape), kind) for name, shape, kind in outs if name]
    m = make_model([node], ins, out_vi, ms=True)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(feeds))


FLOAT, INT64 = 1, 7  # onnx TensorProto.FLOAT / INT64


def torch_conv_grads(
    cfg: Conv, x: np.ndarray, w: np.ndarray, b: np.ndarray | None, dy: np.ndarray
) -> dict[str, np.ndarray]:
    import torch
    import torch.nn.functional as F

    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    wt = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    bt = None if b is None else torch.tensor(b, dtype=torch.float64, requires_grad=True)
    top, left, bottom, right = cfg.pads
    xp = F.pad(xt, (left, right, top, bottom))
    y = F.conv2d(xp, wt, bt, stride=cfg.strides, dilation=cfg.dilations, groups=cfg.groups)
    y.backward(torch.tensor(dy, dtype=torch.float64))
    out = {"Y": y.detach().numpy(), "dX": xt.grad.numpy(), "dW": wt.grad.numpy()}
    if bt is not None:
        out["dB"] = bt.grad.numpy()
    return out


def _torch_pad(cfg: Pool, xt: Any, value: float) -> Any:
    import torch.nn.functional as F

    top, left, bottom, right = cfg.pads
    return F.pad(xt, (left, right, top, bottom), value=value)


def torch_maxpool_grad(cfg: Pool, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = F.max_pool2d(_torch_pad(cfg, xt, -np.inf), cfg.k, cfg.strides, dilation=cfg.dilations)
    y.backward(torch.tensor(dy, dtype=torch.float64))
    return xt.grad.numpy()


def torch_avgpool_grad(cfg: Pool, x: np.ndarray, dy: np.ndarray, include_pad: bool) -> np.ndarray:
    """AveragePool as a sum pool over the zero-padded input divided by each
    window's divisor (a constant): torch differentiates the sum."""
    import torch
    import torch.nn.functional as F

    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    total = F.avg_pool2d(_torch_pad(cfg, xt, 0.0), cfg.k, cfg.strides, divisor_override=1)
    if include_pad:
        div = float(cfg.k[0] * cfg.k[1])
    else:
        ones = torch.ones((1, 1, cfg.h, cfg.w), dtype=torch.float64)
        div = F.avg_pool2d(_torch_pad(cfg, ones, 0.0), cfg.k, cfg.strides, divisor_override=1)
    (total / div).backward(torch.tensor(dy, dtype=torch.float64))
    return xt.grad.numpy()


# ---------------------------------------------------------------- forward vs onnxruntime


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv2d_matches_onnxruntime(name: str) -> None:
    cfg = CONV_CASES[name]
    x, w = rand(*cfg.x_shape), rand(*cfg.w_shape)
    b = rand(cfg.m) if cfg.bias else None
    feeds = {"x": x, "w": w} | ({"b": b} if b is not None else {})
    (want,) = ort_run("Conv", feeds, [("y", cfg.y_shape, FLOAT)], **cfg.onnx_attrs())
    (got,) = compute(conv_op(cfg, x, w, b), list(feeds.values()))
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, **F64_TOL)


@pytest.mark.parametrize("name", list(POOL_CASES))
def test_maxpool2d_and_indices_match_onnxruntime(name: str) -> None:
    cfg = POOL_CASES[name]
    x = rand(*cfg.x_shape)
    y, idx = ort_run(
        "MaxPool",
        {"x": x},
        [("y", cfg.y_shape, FLOAT), ("i", cfg.y_shape, INT64)],
        **cfg.onnx_attrs(True),
    )
    got_y, got_i = compute(maxpool_op(cfg, x), [x])
    np.testing.assert_array_equal(got_y, y)
    np.testing.assert_array_equal(got_i, idx)  # flat into N*C*H*W, storage_order 0
    assert got_i.dtype == np.int64
    (only_y,) = compute(maxpool_op(cfg, x, with_indices=False), [x])
    np.testing.assert_array_equal(only_y, y)


@pytest.mark.parametrize("include_pad", [0, 1])
@pytest.mark.parametrize("name", list(AVG_CASES))
def test_avgpool2d_matches_onnxruntime(name: str, include_pad: int) -> None:
    cfg = AVG_CASES[name]
    x = rand(*cfg.x_shape)
    (want,) = ort_run(
        "AveragePool",
        {"x": x},
        [("y", cfg.y_shape, FLOAT)],
        count_include_pad=include_pad,
        **cfg.onnx_attrs(False),
    )
    op = build(T.AvgPool2dOp, [x], [tensor(cfg.y_shape)], avg_props(cfg, bool(include_pad)))
    (got,) = compute(op, [x])
    np.testing.assert_allclose(got, want, **F64_TOL)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 8, 1, 1), (3, 1, 7, 2)])
def test_global_avgpool_matches_onnxruntime(shape: tuple[int, ...]) -> None:
    x = rand(*shape)
    out = (shape[0], shape[1], 1, 1)
    (want,) = ort_run("GlobalAveragePool", {"x": x}, [("y", out, FLOAT)])
    (got,) = compute(build(T.GlobalAvgPoolOp, [x], [tensor(out)]), [x])
    np.testing.assert_allclose(got, want, **F64_TOL)


# ---------------------------------------------------- gradients vs torch and onnxruntime


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv2d_grad_matches_torch(name: str) -> None:
    cfg = CONV_CASES[name]
    x, w, dy = rand(*cfg.x_shape), rand(*cfg.w_shape), rand(*cfg.y_shape)
    b = rand(cfg.m) if cfg.bias else None
    want = torch_conv_grads(cfg, x, w, b, dy)
    (y,) = compute(conv_op(cfg, x, w, b), [x, w] if b is None else [x, w, b])
    np.testing.assert_allclose(y, want["Y"], **F64_TOL)
    full = ["dX", "dW", "dB"]
    got = dict(zip(full, compute(conv_grad_op(cfg, dy, x, w, full), [dy, x, w]), strict=True))
    for g in full:
        if g in want:
            np.testing.assert_allclose(got[g], want[g], **F64_TOL, err_msg=g)
    # any subset of the gradients gives the same numbers for the ones it has
    for subset in (["dX"], ["dW", "dB"], ["dW"], ["dB"], ["dX", "dB"]):
        outs = compute(conv_grad_op(cfg, dy, x, w, subset), [dy, x, w])
        for g, arr in zip(subset, outs, strict=True):
            np.testing.assert_array_equal(arr, got[g])


@pytest.mark.parametrize(
    "name", ["regular-3x3-pad1", "stride2-pads", "dilation2", "pointwise", "depthwise", "groups2"]
)
def test_conv2d_grad_matches_onnxruntime_convgrad(name: str) -> None:
    cfg = CONV_CASES[name]
    x, w, dy = rand(*cfg.x_shape), rand(*cfg.w_shape), rand(*cfg.y_shape)
    outs = [("dx", cfg.x_shape, FLOAT), ("dw", cfg.w_shape, FLOAT), ("db", (cfg.m,), FLOAT)]
    want = ort_run(
        "ConvGrad", {"dy": dy, "x": x, "w": w}, outs, domain="com.microsoft", **cfg.onnx_attrs()
    )
    got = compute(conv_grad_op(cfg, dy, x, w, ["dX", "dW", "dB"]), [dy, x, w])
    for g, wnt in zip(got, want, strict=True):
        np.testing.assert_allclose(g, wnt, rtol=1e-4, atol=1e-4)
    # a gradient ConvGrad leaves unnamed is left out of `outputs`
    outs[0] = ("", cfg.x_shape, FLOAT)
    dw, db = ort_run(
        "ConvGrad", {"dy": dy, "x": x, "w": w}, outs, domain="com.microsoft", **cfg.onnx_attrs()
    )
    got_w, got_b = compute(conv_grad_op(cfg, dy, x, w, ["dW", "dB"]), [dy, x, w])
    np.testing.assert_allclose(got_w, dw, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_b, db, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", list(POOL_CASES))
def test_maxpool2d_grad_matches_torch_and_onnxruntime(name: str) -> None:
    cfg = POOL_CASES[name]
    x, dy = rand(*cfg.x_shape), rand(*cfg.y_shape)
    _, idx = compute(maxpool_op(cfg, x), [x])
    op = build(T.MaxPool2dGradOp, [dy, idx], [tensor(cfg.x_shape)], cfg.props(True))
    (got,) = compute(op, [dy, idx])
    np.testing.assert_allclose(got, torch_maxpool_grad(cfg, x, dy), **F64_TOL)
    (want,) = ort_run(
        "MaxPoolGrad",
        {"dy": dy, "i": idx},
        [("dx", cfg.x_shape, FLOAT)],
        **cfg.onnx_attrs(False),
    )
    np.testing.assert_array_equal(got, want)  # same float32 sums in the same order
    # indices numbered from a tile's own first plane give the same gradient
    local = idx % (cfg.h * cfg.w)
    np.testing.assert_array_equal(compute(op, [dy, local])[0], got)


@pytest.mark.parametrize("include_pad", [0, 1])
@pytest.mark.parametrize("name", list(AVG_CASES))
def test_avgpool2d_grad_matches_torch_and_onnxruntime(name: str, include_pad: int) -> None:
    cfg = AVG_CASES[name]
    x, dy = rand(*cfg.x_shape), rand(*cfg.y_shape)
    props = avg_props(cfg, bool(include_pad))
    (got,) = compute(build(T.AvgPool2dGradOp, [dy], [tensor(cfg.x_shape)], props), [dy])
    np.testing.assert_allclose(got, torch_avgpool_grad(cfg, x, dy, bool(include_pad)), **F64_TOL)
    (want,) = ort_run(
        "AveragePoolGrad",
        {"dy": dy},
        [("dx", cfg.x_shape, FLOAT)],
        count_include_pad=include_pad,
        **cfg.onnx_attrs(False),
    )
    np.testing.assert_allclose(got, want, **F64_TOL)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 8, 1, 1), (3, 1, 7, 2)])
def test_global_avgpool_grad_matches_torch(shape: tuple[int, ...]) -> None:
    import torch

    x, dy = rand(*shape), rand(shape[0], shape[1], 1, 1)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    xt.mean(dim=(2, 3), keepdim=True).backward(torch.tensor(dy, dtype=torch.float64))
    (got,) = compute(build(T.GlobalAvgPoolGradOp, [dy], [tensor(shape)]), [dy])
    np.testing.assert_allclose(got, xt.grad.numpy(), **F64_TOL)


# ---------------------------------------------------------------- iteration spaces and tiling


def _spaces() -> list[tuple[str, T.TrainingComputeOp]]:
    ops: list[tuple[str, T.TrainingComputeOp]] = []
    for name in ("regular-3x3-pad1", "depthwise", "groups2", "asymmetric-pads-strides"):
        cfg = CONV_CASES[name]
        x, w, dy = rand(*cfg.x_shape), rand(*cfg.w_shape), rand(*cfg.y_shape)
        ops.append((f"conv-{name}", conv_op(cfg, x, w, rand(cfg.m))))
        ops.append((f"grad-{name}", conv_grad_op(cfg, dy, x, w, ["dX", "dW", "dB"])))
    cfg = POOL_CASES["dilation2"]
    x = rand(*cfg.x_shape)
    mp = maxpool_op(cfg, x)
    ops.append(("maxpool", mp))
    _, idx = compute(mp, [x])
    dy = rand(*cfg.y_shape)
    ops.append(
        (
            "maxpool-grad",
            build(T.MaxPool2dGradOp, [dy, idx], [tensor(cfg.x_shape)], cfg.props(True)),
        )
    )
    return ops


@pytest.mark.parametrize("name,op", _spaces(), ids=[n for n, _ in _spaces()])
def test_iteration_space_maps_are_single_dims(name: str, op: T.TrainingComputeOp) -> None:
    """Every map result is one loop dim whose extent is the operand's size (the
    form tile-select and tiling-materialize read), and each sliding window's
    affine relation maps every (output, tap) pair it keeps to the input
    position the reference reads."""
    assert isinstance(op, T.IterationSpaceInterface)
    space = op.iteration_space()
    types = [*op.in_types(), *op.output_types()]
    assert len(space.maps) == len(types)
    for m, t in zip(space.maps, types, strict=True):
        assert m.num_dims == len(space.dims)
        for r, size in zip(m.results, T.shape_of(t), strict=True):
            assert isinstance(r, AffineDimExpr), (name, m)
            assert space.dims[r.position] == size
    assert len(space.windows) == 2
    tiled = space.tiled_windows()
    # the forward ops tile their output rows and columns (inputs with halos);
    # the gradients keep the spatial dims whole
    assert len(tiled) == (0 if name.startswith("grad") or name.endswith("-grad") else 2), name
    for sw in space.windows:
        assert sw.tap_dim in space.whole | space.reduction
        if sw not in tiled:
            assert {sw.out_dim, sw.in_dim} <= space.whole | space.reduction
        expr = sw.input_expr()
        for o in range(space.dims[sw.out_dim]):
            for k in range(space.dims[sw.tap_dim]):
                point = [0] * len(space.dims)
                point[sw.out_dim], point[sw.tap_dim] = o, k
                got = expr.eval(point, [])
                assert got == o * sw.stride + k * sw.dilation - sw.pad_before


def _tileable(op: T.TrainingComputeOp) -> set[int]:
    """The dims tile-select chooses (a tiled window's input dim follows its output)."""

    s = op.iteration_space()  # type: ignore[attr-defined]
    return set(range(len(s.dims))) - whole_dims(op)


def test_tileable_dims_are_batch_and_channels() -> None:
    sp = dict(_spaces())
    N, M, CG, IC = T.CONV_N, T.CONV_M, T.CONV_CG, T.CONV_IC
    OH, OW = T.CONV_OH, T.CONV_OW
    assert _tileable(sp["conv-regular-3x3-pad1"]) == {N, M, OH, OW}
    assert _tileable(sp["conv-depthwise"]) == {N, M, OH, OW}
    assert _tileable(sp["conv-groups2"]) == {N, OH, OW}
    assert IC < len(sp["conv-groups2"].iteration_space().dims)  # type: ignore[attr-defined]
    # dX sums over m, dW and dB over n: only the input channel stays free
    assert _tileable(sp["grad-regular-3x3-pad1"]) == {CG}
    assert _tileable(sp["grad-depthwise"]) == {M, CG}  # CG has extent 1
    assert _tileable(sp["grad-groups2"]) == set()
    assert _tileable(sp["maxpool"]) == {T.POOL_N, T.POOL_C, T.POOL_OH, T.POOL_OW}
    assert _tileable(sp["maxpool-grad"]) == {T.POOL_N, T.POOL_C}


def _tiling_cases() -> dict[str, tuple]:
    cases: dict[str, tuple] = {}
    for name in ("regular-3x3-pad1", "depthwise", "groups2", "stride2-pads"):
        cfg = CONV_CASES[name]
        x, w, b, dy = rand(*cfg.x_shape), rand(*cfg.w_shape), rand(cfg.m), rand(*cfg.y_shape)
        cases[f"conv-{name}"] = (
            T.Conv2dOp,
            [x, w, b],
            [(cfg.y_shape, np.float32)],
            cfg.props(),
        )
        for grads in (["dX", "dW", "dB"], ["dW", "dB"], ["dX"]):
            shapes = {"dX": cfg.x_shape, "dW": cfg.w_shape, "dB": (cfg.m,)}
            props = {**cfg.props(), "outputs": ArrayAttr([StringAttr(g) for g in grads])}
            cases[f"grad-{name}-{'-'.join(grads)}"] = (
                T.Conv2dGradOp,
                [dy, x, w],
                [(shapes[g], np.float32) for g in grads],
                props,
            )
    cfg = POOL_CASES["3x3-stride2-pad1"]
    x, dy = rand(*cfg.x_shape), rand(*cfg.y_shape)
    _, idx = compute(maxpool_op(cfg, x), [x])
    y_out = [(cfg.y_shape, np.float32)]
    cases["maxpool"] = (
        T.MaxPool2dOp,
        [x],
        [*y_out, (cfg.y_shape, np.int64)],
        cfg.props(True),
    )
    cases["maxpool-grad"] = (
        T.MaxPool2dGradOp,
        [dy, idx],
        [(cfg.x_shape, np.float32)],
        cfg.props(True),
    )
    cases["avgpool"] = (T.AvgPool2dOp, [x], y_out, avg_props(cfg, False))
    cases["avgpool-grad"] = (
        T.AvgPool2dGradOp,
        [dy],
        [(cfg.x_shape, np.float32)],
        avg_props(cfg, True),
    )
    one = POOL_CASES["3x3-stride1-pad1"]  # batch 1: the channels are split
    x1 = rand(*one.x_shape)
    cases["maxpool-batch1"] = (
        T.MaxPool2dOp,
        [x1],
        [(one.y_shape, np.float32), (one.y_shape, np.int64)],
        one.props(True),
    )
    g = rand(2, 4, 1, 1)
    cases["global-avgpool"] = (T.GlobalAvgPoolOp, [x], [((2, 4, 1, 1), np.float32)], {})
    cases["global-avgpool-grad"] = (T.GlobalAvgPoolGradOp, [g], [(cfg.x_shape, np.float32)], {})
    return cases


TILING_CASES = _tiling_cases()


@pytest.mark.parametrize("budget", ["half", "smallest"])
@pytest.mark.parametrize("name", list(TILING_CASES))
def test_tiled_buffer_form_computes_the_same(name: str, budget: str) -> None:
    """tile-select with a small L1 budget (half the untiled footprint, or just
    the smallest tiles, spatial ones with their halos for the forward window
    ops) splits batch/channel (and output row/column) dims, never a whole or
    reduction dim; after tiling-materialize the interpreted numbers equal the
    untiled op's (maxpool2d's indices too: a tile numbers from its origin in
    the whole input)."""

    cls, ins, outs, props = TILING_CASES[name]
    module, want = untiled(cls, ins, outs, props)
    op = compute_op(module)
    space = op.iteration_space()
    free = [d for d in range(len(space.dims)) if d not in whole_dims(op)]
    derived = {w.in_dim for w in space.tiled_windows()}
    ops = tile_operands(op)
    hs = halos(op, space.dims)
    smallest = with_halos([1 if d in free else n for d, n in enumerate(space.dims)], hs)
    # a budget that fits the smallest tiles but not the whole op
    l1 = footprint(smallest, ops, 1)
    if budget == "half":
        l1 = max(l1, footprint(list(space.dims), ops, 1) // 2)
    ctx = make_context()
    tiles = select_tiles(ctx, module, l1)
    for d, (t, n) in enumerate(zip(tiles, space.dims, strict=True)):
        assert t == n or d in free or d in derived, (d, tiles)
    if free and any(space.dims[d] > 1 for d in free):
        assert tiles != list(space.dims), "the budget should force tiles"
    got = materialize(ctx, module, ins, outs)
    for g, w, (_, dtype) in zip(got, want, outs, strict=True):
        if dtype is np.int64:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def _accumulates(name: str) -> bool:
    cls, ins, outs, props = TILING_CASES[name]
    op = compute_op(buffer_module(cls, ins, outs, props))
    return bool(op.iteration_space().accumulate)  # type: ignore[attr-defined]


ACC_CASES = [n for n in TILING_CASES if _accumulates(n)]


@pytest.mark.parametrize("name", ACC_CASES)
def test_tiles_of_a_reduction_add_up(name: str) -> None:
    """conv2d_grad with dX alone (the output channels tile) or dW and dB
    alone (batch, output rows and columns tile, X with its halo), at an L1
    budget that only the smallest tiles of the reduction dims fit: the
    tiles after the first copy the partial sums in and add to them
    (`accumulate`), and the interpreted numbers equal the untiled op's."""

    cls, ins, outs, props = TILING_CASES[name]
    module, want = untiled(cls, ins, outs, props)
    op = compute_op(module)
    space = op.iteration_space()
    ops = tile_operands(op)
    fixed = (whole_dims(op) - space.accumulate) | summed_whole(space, ops)
    smallest = with_halos(
        [1 if d not in fixed else n for d, n in enumerate(space.dims)], halos(op, space.dims)
    )
    ctx = make_context()
    tiles = select_tiles(ctx, module, footprint(smallest, ops, 1))
    assert any(tiles[d] < space.dims[d] for d in space.accumulate), tiles
    got = materialize(ctx, module, ins, outs)
    adds = [o for o in module.walk() if isinstance(o, T.TrainingComputeOp) and o.accumulated()]
    assert adds, "no tile adds into its outputs"
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- runtime_c kernels

# the argument structs, as runtime_c/include declares them (tests/c_structs.py)
ConvArgs = mirror("dm_conv2d_args_t")
#: acc_*: the sums start from the output's value (tiles of a reduction)
ConvGradArgs = mirror("dm_conv2d_grad_args_t")
#: tile_ch, frame_*, org_*: a maxpool tile's place in the whole input (0: X is the whole input)
PoolArgs = mirror("dm_pool2d_args_t")
PoolGradArgs = mirror("dm_pool2d_grad_args_t")
GlobalArgs = mirror("dm_global_avgpool_args_t")
GlobalGradArgs = mirror("dm_global_avgpool_grad_args_t")
STRUCTS = [ConvArgs, ConvGradArgs, PoolArgs, PoolGradArgs, GlobalArgs, GlobalGradArgs]


SANITIZING = os.environ.get(SANITIZE_ENV) == "1"
SAN_FLAGS = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


Lib = KernelLib


@pytest.fixture(scope="module", params=[1, 8], ids=["cores1", "cores8"])
def lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lib:
    cores = request.param
    opt = SAN_FLAGS if SANITIZING else ["-O2"]
    d = tmp_path_factory.mktemp(f"conv{cores}")
    return Lib(kernel_library(d, "conv", cores, ["conv.c", "pool.c"], STRUCTS, opt), cores)


def conv_geom(cfg: Conv) -> list[int]:
    """The size fields of the conv args structs, in order."""
    oh, ow = cfg.out_hw()
    return [
        *(cfg.n, cfg.c, cfg.h, cfg.w, cfg.m, *cfg.k, oh, ow, cfg.groups),
        *(*cfg.strides, *cfg.dilations, cfg.pads[0], cfg.pads[1]),
    ]


def test_kernel_struct_layouts_match(lib: Lib) -> None:
    for s in STRUCTS:
        assert lib.layout(s) == mirror_layout(s), s.c_name  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_kernel_conv2d(lib: Lib, name: str) -> None:
    cfg = CONV_CASES[name]
    x, w, dy = rand(*cfg.x_shape), rand(*cfg.w_shape), rand(*cfg.y_shape)
    b = rand(cfg.m) if cfg.bias else None
    (want,) = compute(conv_op(cfg, x, w, b), [x, w] if b is None else [x, w, b])
    grads = compute(conv_grad_op(cfg, dy, x, w, ["dX", "dW", "dB"]), [dy, x, w])
    first: list[np.ndarray] = []
    for team in lib.teams():
        y = Guarded(cfg.y_shape)
        lib.run("dm_conv2d_fp32", ConvArgs(p(x), p(w), p(b), p(y.arr), *conv_geom(cfg)), team)
        np.testing.assert_allclose(y.check(), want, **F64_TOL)
        outs = [Guarded(cfg.x_shape), Guarded(cfg.w_shape), Guarded((cfg.m,))]
        ptrs = [p(o.arr) for o in outs]
        args = ConvGradArgs(p(dy), p(x), p(w), *ptrs, *conv_geom(cfg))
        lib.run("dm_conv2d_grad_input_fp32", args, team)
        lib.run("dm_conv2d_grad_weight_fp32", args, team)
        for o, g, what in zip(outs, grads, ["dX", "dW", "dB"], strict=True):
            np.testing.assert_allclose(o.check(), g, **F64_TOL, err_msg=what)
        # each output is summed by one core in a fixed order: any team, same bits
        got = [y.arr, *(o.arr for o in outs)]
        for before, now in zip(first or got, got, strict=True):
            np.testing.assert_array_equal(before, now)
        first = first or got


def test_kernel_conv2d_grad_weight_null_outputs(lib: Lib) -> None:
    """dW or dB NULL: the other is still written; grad_input touches only dX."""
    cfg = CONV_CASES["stride2-pads"]
    x, w, dy = rand(*cfg.x_shape), rand(*cfg.w_shape), rand(*cfg.y_shape)
    dw_want, db_want = compute(conv_grad_op(cfg, dy, x, w, ["dW", "dB"]), [dy, x, w])
    dw, db = Guarded(cfg.w_shape), Guarded((cfg.m,))
    lib.run(
        "dm_conv2d_grad_weight_fp32",
        ConvGradArgs(p(dy), p(x), None, None, p(dw.arr), None, *conv_geom(cfg)),
    )
    lib.run(
        "dm_conv2d_grad_weight_fp32",
        ConvGradArgs(p(dy), p(x), None, None, None, p(db.arr), *conv_geom(cfg)),
    )
    np.testing.assert_allclose(dw.check(), dw_want, **F64_TOL)
    np.testing.assert_allclose(db.check(), db_want, **F64_TOL)
    dx = Guarded(cfg.x_shape)
    lib.run(
        "dm_conv2d_grad_input_fp32",
        ConvGradArgs(p(dy), None, p(w), p(dx.arr), None, None, *conv_geom(cfg)),
    )
    (dx_want,) = compute(conv_grad_op(cfg, dy, x, w, ["dX"]), [dy, x, w])
    np.testing.assert_allclose(dx.check(), dx_want, **F64_TOL)


def pool_geom(cfg: Pool, include_pad: bool = False) -> list[int]:
    oh, ow = cfg.out_hw()
    return [
        cfg.n * cfg.c,
        cfg.h,
        cfg.w,
        oh,
        ow,
        *cfg.k,
        *cfg.strides,
        *cfg.dilations,
        cfg.pads[0],
        cfg.pads[1],
        int(include_pad),
    ]


@pytest.mark.parametrize("name", list(POOL_CASES))
def test_kernel_maxpool2d(lib: Lib, name: str) -> None:
    cfg = POOL_CASES[name]
    x, dy = rand(*cfg.x_shape), rand(*cfg.y_shape)
    y_want, i_want = compute(maxpool_op(cfg, x), [x])
    op = build(T.MaxPool2dGradOp, [dy, i_want], [tensor(cfg.x_shape)], cfg.props(True))
    (dx_want,) = compute(op, [dy, i_want])
    for team in lib.teams():
        y, idx = Guarded(cfg.y_shape), Guarded(cfg.y_shape, np.int64)
        lib.run("dm_maxpool2d_fp32", PoolArgs(p(x), p(y.arr), p(idx.arr), *pool_geom(cfg)), team)
        np.testing.assert_array_equal(y.check(), y_want)
        np.testing.assert_array_equal(idx.check(), i_want)
        y2 = Guarded(cfg.y_shape)  # no indices
        lib.run("dm_maxpool2d_fp32", PoolArgs(p(x), p(y2.arr), None, *pool_geom(cfg)), team)
        np.testing.assert_array_equal(y2.check(), y_want)
        dx = Guarded(cfg.x_shape)
        args = PoolGradArgs(p(dy), p(i_want), p(dx.arr), *pool_geom(cfg))
        lib.run("dm_maxpool2d_grad_fp32", args, team)
        np.testing.assert_array_equal(dx.check(), dx_want)


@pytest.mark.parametrize("name", list(POOL_CASES))
def test_kernel_maxpool2d_ties_keep_the_first_tap(lib: Lib, name: str) -> None:
    """Inputs of three values only, so most windows hold their maximum more
    than once: the kernel keeps the first tap in window order (rows, then
    columns), as the reference (onnxruntime's scan) does."""
    cfg = POOL_CASES[name]
    x = np.floor(rand(*cfg.x_shape) * 1.5).astype(np.float32)
    y_want, i_want = compute(maxpool_op(cfg, x), [x])
    for team in lib.teams():
        y, idx = Guarded(cfg.y_shape), Guarded(cfg.y_shape, np.int64)
        lib.run("dm_maxpool2d_fp32", PoolArgs(p(x), p(y.arr), p(idx.arr), *pool_geom(cfg)), team)
        np.testing.assert_array_equal(y.check(), y_want)
        np.testing.assert_array_equal(idx.check(), i_want)


@pytest.mark.parametrize("include_pad", [False, True])
@pytest.mark.parametrize("name", list(POOL_CASES))
def test_kernel_avgpool2d(lib: Lib, name: str, include_pad: bool) -> None:
    """(the kernels take dilations too; the reference is numpy here)"""
    cfg = POOL_CASES[name]
    x, dy = rand(*cfg.x_shape), rand(*cfg.y_shape)
    y_want, dx_want = _avg_reference(cfg, x, dy, include_pad)
    for team in lib.teams():
        y = Guarded(cfg.y_shape)
        lib.run(
            "dm_avgpool2d_fp32", PoolArgs(p(x), p(y.arr), None, *pool_geom(cfg, include_pad)), team
        )
        np.testing.assert_allclose(y.check(), y_want, **F64_TOL)
        dx = Guarded(cfg.x_shape)
        args = PoolGradArgs(p(dy), None, p(dx.arr), *pool_geom(cfg, include_pad))
        lib.run("dm_avgpool2d_grad_fp32", args, team)
        np.testing.assert_allclose(dx.check(), dx_want, **F64_TOL)


def _span(first: int, t: int, size: int, stride: int, dil: int, k: int, pad: int) -> tuple:
    """(input start, input rows, pad before) of output rows [first, first + t):
    the rows their windows read, clipped to the input (written out here, not
    taken from the compiler)."""
    start = first * stride - pad
    end = start + (t - 1) * stride + (k - 1) * dil + 1
    lo, hi = max(0, start), min(size, end)
    return lo, hi - lo, lo - start


def _tiles(n: int, t: int) -> list[tuple[int, int]]:
    return [(o, min(t, n - o)) for o in range(0, n, t)]


SPATIAL_CONV = [
    k
    for k, c in CONV_CASES.items()
    if all(c.pads[a] < (c.k[a % 2] - 1) * c.dilations[a % 2] + 1 for a in range(4))
]


@pytest.mark.parametrize("tile", [(1, 3), (2, 2), (3, 100)], ids=["1x3", "2x2", "3xall"])
@pytest.mark.parametrize("name", SPATIAL_CONV)
def test_kernel_conv2d_spatial_tiles_bit_identical(lib: Lib, name: str, tile: tuple) -> None:
    """Spatial tiles (rows x columns of the output) computed from their input
    window (the halo included, clipped at the borders) with the tile's own
    top/left padding give the same bits as the whole convolution."""
    cfg = CONV_CASES[name]
    x, w = rand(*cfg.x_shape), rand(*cfg.w_shape)
    b = rand(cfg.m) if cfg.bias else None
    whole = Guarded(cfg.y_shape)
    lib.run("dm_conv2d_fp32", ConvArgs(p(x), p(w), p(b), p(whole.arr), *conv_geom(cfg)))
    oh, ow = cfg.out_hw()
    got = np.full(cfg.y_shape, np.nan, np.float32)
    for r0, tr in _tiles(oh, tile[0]):
        h0, hn, top = _span(r0, tr, cfg.h, cfg.strides[0], cfg.dilations[0], cfg.k[0], cfg.pads[0])
        for c0, tc in _tiles(ow, tile[1]):
            w0, wn, left = _span(
                c0, tc, cfg.w, cfg.strides[1], cfg.dilations[1], cfg.k[1], cfg.pads[1]
            )
            xt = np.ascontiguousarray(x[:, :, h0 : h0 + hn, w0 : w0 + wn])
            yt = Guarded((cfg.n, cfg.m, tr, tc))
            geom = [cfg.n, cfg.c, hn, wn, cfg.m, *cfg.k, tr, tc, cfg.groups]
            geom += [*cfg.strides, *cfg.dilations, top, left]
            lib.run(
                "dm_conv2d_fp32", ConvArgs(p(xt), p(w), p(b), p(yt.arr), *geom), lib.teams()[-1]
            )
            got[:, :, r0 : r0 + tr, c0 : c0 + tc] = yt.check()
    np.testing.assert_array_equal(got, whole.check())


@pytest.mark.parametrize("tile", [(1, 2, 100), (2, 3, 2)], ids=["1x2-allch", "2x3-2ch"])
@pytest.mark.parametrize("name", list(POOL_CASES))  # (pooling pads are smaller than the kernel)
def test_kernel_pool2d_spatial_tiles_bit_identical(lib: Lib, name: str, tile: tuple) -> None:
    """Max and average pooling (with and without count_include_pad) over
    tiles of rows x columns x channels, each with its halo and own padding:
    the same bits as the whole op, and maxpool's indices, given the tile's
    origin and the whole input's frame, count in the whole input as ONNX's
    (the reference interpreter's, for the whole op)."""
    cfg = POOL_CASES[name]
    x = rand(*cfg.x_shape)
    y_want, i_want = compute(maxpool_op(cfg, x), [x])
    oh, ow = cfg.out_hw()
    (sh, sw), (dh, dw) = cfg.strides, cfg.dilations
    for kernel in ("max", "avg0", "avg1"):
        if kernel != "max" and cfg.dilations != (1, 1):
            continue
        incl = int(kernel == "avg1")
        whole = Guarded(cfg.y_shape)
        lib.run(
            "dm_avgpool2d_fp32" if incl or kernel == "avg0" else "dm_maxpool2d_fp32",
            PoolArgs(p(x), p(whole.arr), None, *pool_geom(cfg, bool(incl))),
        )
        got = np.full(cfg.y_shape, np.nan, np.float32)
        idx = np.full(cfg.y_shape, -5, np.int64)
        for ch0, tch in _tiles(cfg.c, tile[2]):
            for r0, tr in _tiles(oh, tile[0]):
                h0, hn, top = _span(r0, tr, cfg.h, sh, dh, cfg.k[0], cfg.pads[0])
                for c0, tc in _tiles(ow, tile[1]):
                    w0, wn, left = _span(c0, tc, cfg.w, sw, dw, cfg.k[1], cfg.pads[1])
                    xt = np.ascontiguousarray(x[:, ch0 : ch0 + tch, h0 : h0 + hn, w0 : w0 + wn])
                    yt = Guarded((cfg.n, tch, tr, tc))
                    it = Guarded((cfg.n, tch, tr, tc), np.int64)
                    geom = [cfg.n * tch, hn, wn, tr, tc, *cfg.k, sh, sw, dh, dw, top, left, incl]
                    frame = [tch, cfg.c, cfg.h, cfg.w, 0, ch0, h0, w0]
                    fn = "dm_maxpool2d_fp32" if kernel == "max" else "dm_avgpool2d_fp32"
                    args = PoolArgs(p(xt), p(yt.arr), p(it.arr), *geom, *frame)
                    lib.run(fn, args, lib.teams()[-1])
                    sl = np.s_[:, ch0 : ch0 + tch, r0 : r0 + tr, c0 : c0 + tc]
                    got[sl] = yt.check()
                    idx[sl] = it.check()
        np.testing.assert_array_equal(got, whole.check(), err_msg=kernel)
        if kernel == "max":
            np.testing.assert_array_equal(got, y_want)
            np.testing.assert_array_equal(idx, i_want)


def _avg_reference(
    cfg: Pool, x: np.ndarray, dy: np.ndarray, include_pad: bool
) -> tuple[np.ndarray, np.ndarray]:
    if cfg.dilations == (1, 1):
        props = avg_props(cfg, include_pad)
        (y,) = compute(build(T.AvgPool2dOp, [x], [tensor(cfg.y_shape)], props), [x])
        (dx,) = compute(build(T.AvgPool2dGradOp, [dy], [tensor(cfg.x_shape)], props), [dy])
        return y, dx
    # dilated windows: loops over the taps
    oh, ow = cfg.out_hw()
    y = np.zeros(cfg.y_shape)
    dx = np.zeros(cfg.x_shape)
    for i in range(oh):
        for j in range(ow):
            taps = [
                (ih, iw)
                for kh in range(cfg.k[0])
                for kw in range(cfg.k[1])
                if 0 <= (ih := i * cfg.strides[0] + kh * cfg.dilations[0] - cfg.pads[0]) < cfg.h
                and 0 <= (iw := j * cfg.strides[1] + kw * cfg.dilations[1] - cfg.pads[1]) < cfg.w
            ]
            div = cfg.k[0] * cfg.k[1] if include_pad else len(taps)
            for ih, iw in taps:
                y[:, :, i, j] += x[:, :, ih, iw] / div
                dx[:, :, ih, iw] += dy[:, :, i, j] / div
    return y, dx


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 9, 1, 1), (3, 1, 7, 2), (1, 16, 3, 3)])
def test_kernel_global_avgpool(lib: Lib, shape: tuple[int, int, int, int]) -> None:
    x, dy = rand(*shape), rand(shape[0], shape[1], 1, 1)
    out = (shape[0], shape[1], 1, 1)
    (y_want,) = compute(build(T.GlobalAvgPoolOp, [x], [tensor(out)]), [x])
    (dx_want,) = compute(build(T.GlobalAvgPoolGradOp, [dy], [tensor(shape)]), [dy])
    planes, size = shape[0] * shape[1], shape[2] * shape[3]
    for team in lib.teams():
        y = Guarded(out)
        lib.run("dm_global_avgpool_fp32", GlobalArgs(p(x), p(y.arr), planes, size), team)
        np.testing.assert_allclose(y.check(), y_want, **F64_TOL)
        dx = Guarded(shape)
        lib.run("dm_global_avgpool_grad_fp32", GlobalGradArgs(p(dy), p(dx.arr), planes, size), team)
        np.testing.assert_array_equal(dx.check(), dx_want)


def test_kernels_are_sanitizer_clean() -> None:
    """Every kernel test again, with the library built with
    -fsanitize=address,undefined (any finding aborts), in a child pytest that
    preloads the sanitizer runtime."""
    if SANITIZING:
        pytest.skip("this is the sanitized run")
    if GCC is None:
        pytest.skip("gcc is needed to build runtime_c")
    asan = subprocess.run(
        [GCC, "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(asan).is_file(), "gcc has no AddressSanitizer runtime"
    env = {
        **os.environ,
        SANITIZE_ENV: "1",
        "LD_PRELOAD": asan,
        "ASAN_OPTIONS": "detect_leaks=0",
        "UBSAN_OPTIONS": "print_stacktrace=1",
    }
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", "kernel_"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    tail = r.stdout[-4000:] + r.stderr[-4000:]
    assert r.returncode == 0, tail
    assert "runtime error" not in r.stderr and "AddressSanitizer" not in r.stderr, tail
    assert " passed" in r.stdout and "skipped" not in r.stdout.splitlines()[-1], tail
