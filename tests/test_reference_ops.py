"""The reference interpreter's semantics of each op, checked against
onnxruntime-training executing the same ONNX op (an outside oracle)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx_builders import make_model, vi
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i1,
    i64,
)
from xdsl.ir import Block

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp.reference import compute

RNG = np.random.default_rng(42)
ORT_TYPES = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}
XDSL_TYPES = {np.float32: f32, np.int64: i64, np.bool_: i1}


def ort_run(
    node, feeds: dict[str, np.ndarray], out_shapes: list[tuple[int, ...]]
) -> list[np.ndarray]:
    ins = [vi(k, list(v.shape), ORT_TYPES[v.dtype.type]) for k, v in feeds.items()]
    outs = [vi(n, list(s)) for n, s in zip(node.output, out_shapes, strict=True)]
    m = make_model([node], ins, outs, ms=True)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {k: v.copy() for k, v in feeds.items()})


def ours(cls, arrays: list[np.ndarray], props=None, n_out: int = 1) -> list[np.ndarray]:
    block = Block(arg_types=[TensorType(XDSL_TYPES[a.dtype.type], list(a.shape)) for a in arrays])
    op = cls(list(block.args), [TensorType(f32, [])] * n_out, properties=props)
    return compute(op, arrays)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("cshape", [None, (5,), (1, 5), (3, 1), (3, 5)])
def test_gemm(ta: int, tb: int, cshape) -> None:
    a = rand(4, 3) if ta else rand(3, 4)
    b = rand(5, 4) if tb else rand(4, 5)
    feeds = {"a": a, "b": b}
    if cshape:
        feeds["c"] = rand(*cshape)
    node = helper.make_node("Gemm", list(feeds), ["y"], transA=ta, transB=tb, alpha=0.5, beta=2.0)
    (want,) = ort_run(node, feeds, [(3, 5)])
    props = {
        "trans_a": UnitAttr() if ta else None,
        "trans_b": UnitAttr() if tb else None,
        "alpha": FloatAttr(0.5, f32),
        "beta": FloatAttr(2.0, f32),
    }
    (got,) = ours(T.GemmOp, list(feeds.values()), props)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 2))]
)
def test_binary(kind: str, shapes) -> None:
    a, b = rand(*shapes[0]), rand(*shapes[1]) + (3.0 if kind == "Div" else 0.0)
    b = b.astype(np.float32)
    out = np.broadcast_shapes(a.shape, b.shape)
    (want,) = ort_run(helper.make_node(kind, ["a", "b"], ["y"]), {"a": a, "b": b}, [out])
    (got,) = ours(T.BinaryOp, [a, b], {"kind": StringAttr(kind.lower())})
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_relu_and_grad() -> None:
    x, dy = rand(4, 6), rand(4, 6)
    (want,) = ort_run(helper.make_node("Relu", ["x"], ["y"]), {"x": x}, [(4, 6)])
    np.testing.assert_array_equal(ours(T.ReluOp, [x])[0], want)
    (wg,) = ort_run(
        helper.make_node("ReluGrad", ["dy", "x"], ["dx"], domain="com.microsoft"),
        {"dy": dy, "x": x},
        [(4, 6)],
    )
    np.testing.assert_array_equal(ours(T.ReluGradOp, [dy, x])[0], wg)
    # the ReLU's output in place of its input gives the same gradient
    np.testing.assert_array_equal(ours(T.ReluGradOp, [dy, np.maximum(x, 0)])[0], wg)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_softmax_cross_entropy_and_grad(reduction: str) -> None:
    x = rand(5, 7) * 3
    labels = RNG.integers(0, 7, 5).astype(np.int64)
    node = helper.make_node(
        "SoftmaxCrossEntropyLoss", ["x", "labels"], ["loss", "log_prob"], reduction=reduction
    )
    loss, log_prob = ort_run(node, {"x": x, "labels": labels}, [(), (5, 7)])
    got_loss, got_lp = ours(
        T.SoftmaxCrossEntropyLossOp, [x, labels], {"reduction": StringAttr(reduction)}, n_out=2
    )
    np.testing.assert_allclose(got_lp, log_prob, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_loss, loss, rtol=1e-5)
    dy = np.array(0.7, dtype=np.float32)
    gnode = helper.make_node(
        "SoftmaxCrossEntropyLossGrad",
        ["dy", "lp", "labels"],
        ["dx"],
        domain="com.microsoft",
        reduction=reduction,
    )
    (want,) = ort_run(gnode, {"dy": dy, "lp": log_prob, "labels": labels}, [(5, 7)])
    (got,) = ours(
        T.SoftmaxCrossEntropyLossGradOp,
        [dy, log_prob, labels],
        {"reduction": StringAttr(reduction)},
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("axes, keep", [([0], 0), ([1], 1), ([0, 2], 0), ([1, 2], 1)])
def test_reduce_sum(axes: list[int], keep: int) -> None:
    x = rand(3, 4, 5)
    feeds = {"x": x, "axes": np.array(axes, dtype=np.int64)}
    want_shape = np.sum(x, axis=tuple(axes), keepdims=bool(keep)).shape
    (want,) = ort_run(
        helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=keep), feeds, [want_shape]
    )
    props = {"axes": DenseArrayBase.from_list(i64, axes), "keepdims": UnitAttr() if keep else None}
    (got,) = ours(T.ReduceSumOp, [x], props)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reset", [False, True])
def test_in_place_accumulator(reset: bool) -> None:
    buf, grad = rand(3, 4), rand(3, 4)
    flag = np.array([reset])
    node = helper.make_node(
        "InPlaceAccumulatorV2", ["buf", "grad", "reset"], ["done", "out"], domain="com.microsoft"
    )
    ins = [vi("buf", [3, 4]), vi("grad", [3, 4]), vi("reset", [1], TensorProto.BOOL)]
    m = make_model([node], ins, [vi("done", [1], TensorProto.BOOL), vi("out", [3, 4])], ms=True)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    _, want = sess.run(None, {"buf": buf.copy(), "grad": grad, "reset": flag})
    (got,) = ours(T.AccumulateOp, [buf, grad, flag])
    np.testing.assert_allclose(got, want, rtol=1e-6)
