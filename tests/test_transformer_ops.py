"""The transformer ops (issue 8): batched MatMul/Gemm, elementwise ops with
broadcasting (Add, Sub, Mul, Div, Pow), Softmax and SoftmaxGrad,
LayerNormalization and LayerNormalizationGrad, Gelu and GeluGrad, Transpose,
Reshape/Squeeze/Unsqueeze, ReduceSum/ReduceMean. At every level:

* the reference semantics (deeploy_mlir/interp/reference.py) against
  onnxruntime running the same ONNX node (the forward ops, and onnxruntime's
  own gradient kernels SoftmaxGrad_13, LayerNormalizationGrad, GeluGrad), and
  every gradient against torch autograd (in float64): the gradient ops
  directly, the others (MatMul, Transpose, the broadcasting binary ops,
  ReduceMean) through the ops their gradients are built from;
* the iteration spaces (every map result one loop dim, or the constant 0 on a
  size-1 dim; the dims that must stay whole), and tile-select +
  tiling-materialize on the buffer form, forced to split, computing the same
  numbers;
* the runtime_c kernels, built with the host emulation for 1 and 8 cores (and
  a team of 3), against the reference, with a guard element after every
  output;
* the importer: Deeploy's and onnxruntime's conventions, unsorted graphs, and
  one-line errors;
* end to end: `deeploy-mlir test` on folders whose expected outputs
  onnxruntime computed, untiled and tiled (forced to split), single and
  double buffered."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mathf_model
import numpy as np
import onnx
import pytest
from c_structs import mirror
from conftest import stacks_of
from kernel_harness import (
    Guarded,
    KernelLib,
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
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.interp.reference import compute

RNG = np.random.default_rng(88)
TOL = {"rtol": 1e-5, "atol": 1e-6}

# ---------------------------------------------------------------- helpers


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run(cls: type[T.TrainingComputeOp], arrays: Sequence[np.ndarray], outs, props=None):
    """The reference's numbers of the op on `arrays`, its fp32 outputs shaped `outs`."""
    return compute(build(cls, arrays, [tensor(s) for s in outs], props), arrays)


def axis(a: int) -> dict[str, Attribute]:
    return {"axis": IntegerAttr(a, i64)}


def ln_props(a: int, eps: float = 1e-5) -> dict[str, Attribute]:
    return {"axis": IntegerAttr(a, i64), "epsilon": FloatAttr(eps, f32)}


def ints(vals: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(vals))


def onnx_model(
    nodes: list[onnx.NodeProto],
    feeds: dict[str, np.ndarray],
    outputs: Sequence[str],
    inits: Sequence[onnx.TensorProto] = (),
    opset: int = 20,
) -> onnx.ModelProto:
    kinds = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64}
    ins = [helper.make_tensor_value_info(k, kinds[v.dtype.type], v.shape) for k, v in feeds.items()]
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    g = helper.make_graph(nodes, "g", ins, outs, list(inits))
    ops = [helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 9
    return m


def ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return sess.run(None, feeds)


def ort_node(
    op_type: str, feeds: dict[str, np.ndarray], n_out: int = 1, domain: str = "", **attrs: Any
) -> list[np.ndarray]:
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op_type, list(feeds), outs, domain=domain, **attrs)
    return ort(onnx_model([node], feeds, outs), feeds)


def torch_grads(fn, arrays: Sequence[np.ndarray], dy: np.ndarray) -> list[np.ndarray]:
    """d(sum(fn(*arrays) * dy)) / d(arrays), in float64."""
    import torch

    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    y = fn(*ts)
    y.backward(torch.tensor(dy, dtype=torch.float64))
    return [t.grad.numpy() for t in ts]  # type: ignore[union-attr]


# ---------------------------------------------------------------- forward vs onnxruntime

SOFTMAX_CASES = [((2, 3, 5), 0), ((2, 3, 5), 1), ((2, 3, 5), 2), ((4, 7), 1), ((6,), 0)]


@pytest.mark.parametrize(("shape", "ax"), SOFTMAX_CASES)
def test_softmax_matches_onnxruntime(shape: tuple[int, ...], ax: int) -> None:
    x = rand(*shape) * 3
    (got,) = run(T.SoftmaxOp, [x], [shape], axis(ax))
    (want,) = ort_node("Softmax", {"x": x}, axis=ax)
    np.testing.assert_allclose(got, want, **TOL)


LN_CASES = {
    "last-axis-bias": ((2, 3, 8), 2, (8,), True),
    "two-dims": ((2, 3, 4), 1, (3, 4), True),
    "no-bias": ((5, 6), 1, (6,), False),
    "scale-without-leading-one": ((3, 1, 4), 1, (4,), True),
}


@pytest.mark.parametrize("name", list(LN_CASES))
def test_layer_norm_and_its_statistics_match_onnxruntime(name: str) -> None:
    shape, ax, sshape, bias = LN_CASES[name]
    x, s, b = rand(*shape) * 2 + 0.5, rand(*sshape), rand(*sshape)
    ins = [x, s, b] if bias else [x, s]
    stats = (*shape[:ax], *([1] * (len(shape) - ax)))
    got = run(T.LayerNormOp, ins, [shape, stats, stats], ln_props(ax, 1e-3))
    feeds = dict(zip(["x", "s", "b"], ins, strict=False))
    want = ort_node("LayerNormalization", feeds, n_out=3, axis=ax, epsilon=1e-3)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=2e-6)
    # one output (Y only) is the same Y
    (y,) = run(T.LayerNormOp, ins, [shape], ln_props(ax, 1e-3))
    np.testing.assert_array_equal(y, got[0])


def test_gelu_matches_onnxruntime() -> None:
    x = np.concatenate([rand(40) * 3, np.array([0.0, -8.0, 8.0], np.float32)])
    (got,) = run(T.GeluOp, [x], [x.shape])
    (want,) = ort_node("Gelu", {"x": x})
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("perm", [(1, 0, 2, 3), (0, 2, 3, 1), (3, 2, 1, 0), (0, 3, 1, 2)])
def test_transpose_matches_onnxruntime(perm: tuple[int, ...]) -> None:
    x = rand(2, 3, 4, 5)
    out = tuple(x.shape[p] for p in perm)
    (got,) = run(T.TransposeOp, [x], [out], {"perm": ints(perm)})
    (want,) = ort_node("Transpose", {"x": x}, perm=list(perm))
    np.testing.assert_array_equal(got, want)


MATMUL_CASES = [
    ((2, 1, 4, 3), (5, 3, 6)),  # batch dims broadcast both ways
    ((3, 4), (2, 4, 5)),  # a matrix times a batch
    ((1, 2, 3, 4), (4, 5)),  # a batch times a matrix (Deeploy's projections)
    ((2, 2, 8, 8), (2, 2, 8, 8)),  # attention scores
]


@pytest.mark.parametrize(("a", "b"), MATMUL_CASES)
def test_batched_matmul_matches_onnxruntime(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    x, y = rand(*a), rand(*b)
    (want,) = ort_node("MatMul", {"a": x, "b": y})
    (got,) = run(T.BatchMatmulOp, [x, y], [want.shape])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("trans", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_batched_gemm_with_transposes_and_bias_matches_torch(trans: tuple[int, int]) -> None:
    """Deeploy's Gemm on batched operands (not an ONNX form, so torch)."""
    import torch

    ta, tb = trans
    a = rand(*((1, 2, 5, 3) if ta else (1, 2, 3, 5)))
    b = rand(*((4, 5) if tb else (5, 4)))
    c = rand(4)
    props: dict[str, Attribute] = {"alpha": FloatAttr(0.5, f32), "beta": FloatAttr(2.0, f32)}
    if ta:
        props["trans_a"] = UnitAttr()
    if tb:
        props["trans_b"] = UnitAttr()
    (got,) = run(T.BatchMatmulOp, [a, b, c], [(1, 2, 3, 4)], props)
    at, bt = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    at = at.transpose(-1, -2) if ta else at
    bt = bt.transpose(-1, -2) if tb else bt
    want = 0.5 * (at @ bt) + 2.0 * torch.tensor(c, dtype=torch.float64)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


BINARY_CASES = [((2, 1, 4), (3, 1)), ((3, 4), (4,)), ((2, 3), ()), ((1,), (2, 3, 1))]


@pytest.mark.parametrize("kind", ["add", "sub", "mul", "div", "pow"])
@pytest.mark.parametrize(("sa", "sb"), BINARY_CASES)
def test_broadcasting_binary_ops_match_onnxruntime(
    kind: str, sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    a, b = rand(*sa), rand(*sb)
    if kind == "pow":
        a = np.abs(a) + 0.5
    if kind == "div":
        b = np.where(np.abs(b) < 0.2, 0.5, b).astype(np.float32)
    out = np.broadcast_shapes(sa, sb)
    (got,) = run(T.BinaryOp, [a, b], [out], {"kind": StringAttr(kind)})
    (want,) = ort_node(kind.capitalize(), {"a": a, "b": b})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean"])
@pytest.mark.parametrize(("axes", "keep"), [((1,), 1), ((0, 2), 0), ((0, 1, 2), 1), ((2,), 0)])
def test_reductions_match_onnxruntime(op_type: str, axes: tuple[int, ...], keep: int) -> None:
    x = rand(3, 4, 5)
    ax = np.array(axes, np.int64)
    node = helper.make_node(op_type, ["x", "axes"], ["y"], keepdims=keep)
    (want,) = ort(
        onnx_model([node], {"x": x}, ["y"], [numpy_helper.from_array(ax, "axes")]), {"x": x}
    )
    cls = T.ReduceSumOp if op_type == "ReduceSum" else T.ReduceMeanOp
    props: dict[str, Attribute] = {"axes": ints(axes)}
    if keep:
        props["keepdims"] = UnitAttr()
    (got,) = run(cls, [x], [want.shape], props)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize(("shape", "ax"), SOFTMAX_CASES)
def test_softmax_grad_matches_torch_and_onnxruntime(shape: tuple[int, ...], ax: int) -> None:
    import torch

    x, dy = rand(*shape), rand(*shape)
    (y,) = run(T.SoftmaxOp, [x], [shape], axis(ax))
    (got,) = run(T.SoftmaxGradOp, [dy, y], [shape], axis(ax))
    (want,) = torch_grads(lambda t: torch.softmax(t, dim=ax), [x], dy)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    (ort_dx,) = ort_node("SoftmaxGrad_13", {"dy": dy, "y": y}, domain="com.microsoft", axis=ax)
    np.testing.assert_allclose(got, ort_dx, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(LN_CASES))
def test_layer_norm_grad_matches_torch_and_onnxruntime(name: str) -> None:
    import torch

    shape, ax, sshape, _ = LN_CASES[name]
    x, s, b, dy = rand(*shape) * 2 + 0.5, rand(*sshape), rand(*sshape), rand(*shape)
    stats = (*shape[:ax], *([1] * (len(shape) - ax)))
    _, mean, inv = run(T.LayerNormOp, [x, s, b], [shape, stats, stats], ln_props(ax))
    norm = shape[ax:]

    def ln(xt: Any, st: Any, bt: Any) -> Any:
        return torch.nn.functional.layer_norm(xt, norm, st.reshape(norm), bt.reshape(norm), 1e-5)

    want = torch_grads(ln, [x, s, b], dy)
    props = {**ln_props(ax), "outputs": ArrayAttr([StringAttr(g) for g in T.LN_GRADS])}
    got = run(T.LayerNormGradOp, [dy, x, s, mean, inv], [shape, sshape, sshape], props)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    # Deeploy's form: no statistics, dX only, recomputed from X
    props = {**ln_props(ax), "outputs": ArrayAttr([StringAttr("dX")])}
    (dx,) = run(T.LayerNormGradOp, [dy, x, s], [shape], props)
    np.testing.assert_allclose(dx, want[0], rtol=1e-4, atol=1e-5)
    ort_out = ort_node(
        "LayerNormalizationGrad",
        {"dy": dy, "x": x, "s": s, "m": mean, "i": inv},
        n_out=3,
        domain="com.microsoft",
        axis=ax,
    )
    for g, w in zip(got, ort_out, strict=True):
        np.testing.assert_allclose(g, w.reshape(g.shape), rtol=1e-4, atol=1e-5)


def test_gelu_grad_matches_torch_and_onnxruntime() -> None:
    import torch

    x, dy = rand(50) * 3, rand(50)
    (got,) = run(T.GeluGradOp, [dy, x], [x.shape])
    (want,) = torch_grads(lambda t: torch.nn.functional.gelu(t), [x], dy)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    (ort_dx,) = ort_node("GeluGrad", {"dy": dy, "x": x}, domain="com.microsoft")
    np.testing.assert_allclose(got, ort_dx, rtol=1e-5, atol=1e-6)


def _sum_to(g: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Our reduce_sum over the dims broadcasting added to `shape` (keepdims
    where the dim was 1), as the gradient of a broadcast operand."""
    lead = g.ndim - len(shape)
    axes = [i for i in range(g.ndim) if i < lead or (shape[i - lead] == 1 and g.shape[i] != 1)]
    if not axes:
        return g
    props: dict[str, Attribute] = {"axes": ints(axes), "keepdims": UnitAttr()}
    kept = tuple(1 if i in axes else d for i, d in enumerate(g.shape))
    (s,) = run(T.ReduceSumOp, [g], [kept], props)
    return s.reshape(shape)


@pytest.mark.parametrize(("a", "b"), MATMUL_CASES)
def test_batched_matmul_gradient_is_two_transposed_products(
    a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    """dA = dY B^T and dB = A^T dY (trans_b / trans_a products, summed over
    the batch dims an operand was broadcast along) equal torch's."""
    import torch

    x, y = rand(*a), rand(*b)
    (out,) = run(T.BatchMatmulOp, [x, y], [(*np.broadcast_shapes(a[:-2], b[:-2]), a[-2], b[-1])])
    dy = rand(*out.shape)
    want = torch_grads(torch.matmul, [x, y], dy)
    (da,) = run(T.BatchMatmulOp, [dy, y], [(*out.shape[:-1], a[-1])], {"trans_b": UnitAttr()})
    (db,) = run(T.BatchMatmulOp, [x, dy], [out.shape[:-2] + b[-2:]], {"trans_a": UnitAttr()})
    np.testing.assert_allclose(_sum_to(da, a), want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_sum_to(db, b), want[1], rtol=1e-5, atol=1e-5)


def test_transpose_gradient_is_the_inverse_transpose() -> None:
    perm = (0, 2, 3, 1)
    x = rand(2, 3, 4, 5)
    out = tuple(x.shape[p] for p in perm)
    dy = rand(*out)
    inv = tuple(int(i) for i in np.argsort(perm))
    (dx,) = run(T.TransposeOp, [dy], [x.shape], {"perm": ints(inv)})
    (want,) = torch_grads(lambda t: t.permute(*perm), [x], dy)
    np.testing.assert_array_equal(dx, want)


@pytest.mark.parametrize("kind", ["add", "sub", "mul", "div", "pow"])
def test_broadcast_binary_gradients_from_our_ops(kind: str) -> None:
    """The gradients of A op B with A [2, 1, 4] and B [3, 1], composed of our
    binary ops and reduce_sum over the broadcast dims, equal torch's."""
    import torch

    a, b = np.abs(rand(2, 1, 4)) + 0.5, rand(3, 1) + 0.1
    b = np.where(np.abs(b) < 0.2, 0.7, b).astype(np.float32)
    out = (2, 3, 4)
    dy = rand(*out)

    def op(k: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        shape = np.broadcast_shapes(x.shape, y.shape)
        return run(T.BinaryOp, [x, y], [shape], {"kind": StringAttr(k)})[0]

    one = np.ones((1,), np.float32)
    if kind in ("add", "sub"):
        ga, gb = dy, dy if kind == "add" else op("sub", np.zeros_like(dy), dy)
    elif kind == "mul":
        ga, gb = op("mul", dy, b), op("mul", dy, a)
    elif kind == "div":  # dA = dY / B, dB = -dY * A / B^2
        ga = op("div", dy, b)
        gb = op("sub", np.zeros_like(dy), op("div", op("mul", dy, a), op("mul", b, b)))
    else:  # dA = dY * B * A^(B-1), dB = dY * A^B * ln A (ln A from torch: no log op)
        ga = op("mul", dy, op("mul", b, op("pow", a, op("sub", b, one))))
        gb = op("mul", op("mul", dy, op("pow", a, b)), np.log(a).astype(np.float32))
    fns = {
        "add": torch.add,
        "sub": torch.sub,
        "mul": torch.mul,
        "div": torch.div,
        "pow": torch.pow,
    }
    want = torch_grads(fns[kind], [a, b], dy)
    np.testing.assert_allclose(_sum_to(ga, a.shape), want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_sum_to(gb, b.shape), want[1], rtol=1e-5, atol=1e-5)


def test_reduce_mean_gradient_from_our_ops() -> None:
    """dX = dY (kept dims) broadcast over X, divided by the count: a binary
    op with broadcasting, against torch."""

    x = rand(3, 4, 5)
    dy = rand(3, 1, 5)
    ones = np.ones_like(x)
    (spread,) = run(T.BinaryOp, [ones, dy], [x.shape], {"kind": StringAttr("mul")})
    n = np.full((1,), 4.0, np.float32)
    (dx,) = run(T.BinaryOp, [spread, n], [x.shape], {"kind": StringAttr("div")})
    (want,) = torch_grads(lambda t: t.mean(dim=1, keepdim=True), [x], dy)
    np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-7)


def test_gelu_grad_matches_finite_differences_of_gelu() -> None:
    """Our two GELU ops agree with each other: central differences of
    training.gelu (float64 steps) give training.gelu_grad."""
    x = np.linspace(-4, 4, 33).astype(np.float32)
    h = 1e-2
    (up,) = run(T.GeluOp, [x + np.float32(h)], [x.shape])
    (down,) = run(T.GeluOp, [x - np.float32(h)], [x.shape])
    fd = (up.astype(np.float64) - down) / (2 * h)
    (g,) = run(T.GeluGradOp, [np.ones_like(x), x], [x.shape])
    np.testing.assert_allclose(g, fd, atol=5e-4)


# ---------------------------------------------------------------- iteration spaces and tiling


def _cases() -> dict[str, tuple[type[T.TrainingComputeOp], list[np.ndarray], list, dict]]:
    x3 = rand(4, 6, 8)
    s8, b8 = rand(8), rand(8)
    stats = (4, 6, 1)
    _, mean, inv = run(T.LayerNormOp, [x3, s8, b8], [x3.shape, stats, stats], ln_props(2))
    dy3 = rand(4, 6, 8)
    all_grads = {**ln_props(2), "outputs": ArrayAttr([StringAttr(g) for g in T.LN_GRADS])}
    dx_only = {**ln_props(2), "outputs": ArrayAttr([StringAttr("dX")])}
    return {
        "softmax-last": (T.SoftmaxOp, [x3], [x3.shape], axis(2)),
        "softmax-middle": (T.SoftmaxOp, [x3], [x3.shape], axis(1)),
        "softmax-grad": (T.SoftmaxGradOp, [dy3, x3], [x3.shape], axis(2)),
        "layer-norm-stats": (T.LayerNormOp, [x3, s8, b8], [x3.shape, stats, stats], ln_props(2)),
        "layer-norm-two-dims": (
            T.LayerNormOp,
            [x3, rand(6, 8)],
            [x3.shape],
            ln_props(1),
        ),
        "layer-norm-grad-dx": (T.LayerNormGradOp, [dy3, x3, s8], [x3.shape], dx_only),
        "layer-norm-grad-all": (
            T.LayerNormGradOp,
            [dy3, x3, s8, mean, inv],
            [x3.shape, (8,), (8,)],
            all_grads,
        ),
        "gelu": (T.GeluOp, [x3], [x3.shape], {}),
        "gelu-grad": (T.GeluGradOp, [dy3, x3], [x3.shape], {}),
        "transpose": (T.TransposeOp, [x3], [(8, 4, 6)], {"perm": ints((2, 0, 1))}),
        "batch-matmul-bcast": (
            T.BatchMatmulOp,
            [rand(2, 1, 6, 5), rand(3, 5, 7), rand(7)],
            [(2, 3, 6, 7)],
            {},
        ),
        "batch-matmul-trans": (
            T.BatchMatmulOp,
            [rand(2, 5, 6), rand(7, 5)],
            [(2, 6, 7)],
            {"trans_a": UnitAttr(), "trans_b": UnitAttr()},
        ),
        "reduce-mean": (
            T.ReduceMeanOp,
            [x3],
            [(4, 1, 8)],
            {"axes": ints([1]), "keepdims": UnitAttr()},
        ),
        "pow-bcast": (
            T.BinaryOp,
            [np.abs(x3) + 0.5, rand(6, 1)],
            [x3.shape],
            {"kind": StringAttr("pow")},
        ),
        "reshape-split": (T.ReshapeOp, [x3], [(4, 6, 2, 4)], {}),
        "reshape-merge-leading-one": (T.ReshapeOp, [rand(1, 6, 2, 4)], [(6, 8)], {}),
    }


CASES = _cases()


WHOLE = {
    "softmax-last": {2},
    "softmax-middle": {1},
    "softmax-grad": {2},
    "layer-norm-stats": {2},
    "layer-norm-two-dims": {1, 2},
    "layer-norm-grad-dx": {2},
    "layer-norm-grad-all": {0, 1, 2},
    "gelu": set(),
    "gelu-grad": set(),
    "transpose": set(),
    "batch-matmul-bcast": {4},  # K
    "batch-matmul-trans": {3},
    "reduce-mean": {1},
    "pow-bcast": set(),
    "reshape-split": {2, 3, 4},  # 8 <-> (2, 4) stays whole; 4 and 6 tile
    "reshape-merge-leading-one": {1, 2, 3},
}


@pytest.mark.parametrize("name", list(CASES))
def test_iteration_space_maps_and_whole_dims(name: str) -> None:
    cls, ins, outs, props = CASES[name]
    op = build(cls, ins, [tensor(s) for s in outs], props)
    assert isinstance(op, T.IterationSpaceInterface)
    space = op.iteration_space()
    shapes = [a.shape for a in ins] + [tuple(s) for s in outs]
    assert len(space.maps) == len(shapes)
    for m, shape in zip(space.maps, shapes, strict=True):
        assert m.num_dims == len(space.dims)
        assert len(m.results) == len(shape)
        for r, size in zip(m.results, shape, strict=True):
            if isinstance(r, AffineConstantExpr):
                assert r.value == 0 and size == 1
            else:
                assert isinstance(r, AffineDimExpr)
                assert space.dims[r.position] == size
    assert set(space.whole) | set(space.reduction) == WHOLE[name]


@pytest.mark.parametrize("name", list(CASES))
def test_tiled_buffer_form_computes_the_same(name: str) -> None:
    """tile-select at a budget that only fits small tiles splits every free
    dim it can; after tiling-materialize the numbers equal the untiled op's."""
    from deeploy_mlir.pipeline import make_context
    from deeploy_mlir.tiling.model import footprint, tile_operands

    cls, ins, shapes, props = CASES[name]
    outs = [(s, np.float32) for s in shapes]
    module, want = untiled(cls, ins, outs, props)
    op = compute_op(module)
    space = op.iteration_space()
    fixed = space.whole | space.reduction
    smallest = [n if d in fixed else 1 for d, n in enumerate(space.dims)]
    l1 = max(
        footprint(smallest, tile_operands(op), 1), footprint(space.dims, tile_operands(op), 1) // 3
    )
    ctx = make_context()
    tiles = select_tiles(ctx, module, l1)
    if any(n > 1 and d not in fixed for d, n in enumerate(space.dims)):
        assert tiles != list(space.dims), "the budget should force tiles"
    for d, (t, n) in enumerate(zip(tiles, space.dims, strict=True)):
        assert t == n or d not in fixed
    got = materialize(ctx, module, ins, outs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("cls", "ins", "outs", "props", "message"),
    [
        (T.SoftmaxOp, [(2, 3)], [(2, 3)], axis(2), "axis 2 is out of range for rank 2"),
        (T.TransposeOp, [(2, 3)], [(3, 2)], {"perm": ints((0, 0))}, "must be a permutation"),
        (
            T.LayerNormOp,
            [(2, 3), (2,)],
            [(2, 3)],
            ln_props(1),
            "scale must have the normalized shape 3",
        ),
        (
            T.LayerNormGradOp,
            [(2, 3), (2, 3), (3,)],
            [(3,)],
            {**ln_props(1), "outputs": ArrayAttr([StringAttr("dScale")])},
            "dScale and dBias need the forward's Mean and InvStdDev",
        ),
        (T.BatchMatmulOp, [(2, 3, 4), (3, 4, 5)], [(2, 3, 5)], {}, "do not broadcast"),
        (T.BatchMatmulOp, [(2, 3, 4), (5, 6)], [(2, 3, 6)], {}, "inner dimensions differ"),
        (T.ReshapeOp, [(2, 3)], [(7,)], {}, "cannot be reshaped"),
        (T.GeluGradOp, [(2, 3), (3, 2)], [(2, 3)], {}, "must have the same shape"),
    ],
)
def test_verifier_messages(cls, ins, outs, props, message: str) -> None:
    from xdsl.utils.exceptions import VerifyException

    block = Block(arg_types=[tensor(s) for s in ins])
    op = cls(list(block.args), [tensor(s) for s in outs], properties=props)
    with pytest.raises(VerifyException, match=message):
        op.verify()


# ---------------------------------------------------------------- runtime_c kernels

# the argument structs, as runtime_c/include declares them (tests/c_structs.py)
Softmax = mirror("dm_softmax_args_t")
SoftmaxGrad = mirror("dm_softmax_grad_args_t")
LayerNorm = mirror("dm_layernorm_args_t")
LayerNormGrad = mirror("dm_layernorm_grad_args_t")
LayerNormParams = mirror("dm_layernorm_grad_params_args_t")
Gelu = mirror("dm_gelu_args_t")
GeluGrad = mirror("dm_gelu_grad_args_t")
Transpose = mirror("dm_transpose_args_t")
Gemm = mirror("dm_gemm_args_t")
BatchMatmul = mirror("dm_batch_matmul_args_t")
Reduce = mirror("dm_reduce_args_t")
Binary = mirror("dm_binary_args_t")
STRUCTS = [
    Softmax,
    SoftmaxGrad,
    LayerNorm,
    LayerNormGrad,
    LayerNormParams,
    Gelu,
    GeluGrad,
    Transpose,
    Gemm,
    BatchMatmul,
    Reduce,
    Binary,
]
KERNELS = [
    "softmax.c",
    "layernorm.c",
    "gelu.c",
    "transpose.c",
    "batch_matmul.c",
    "gemm.c",
    "reduce.c",
    "reduce_mean.c",
    "elementwise.c",
]


class Lib(KernelLib):
    def run(self, kernel: str, args: ctypes.Structure, once: bool = False) -> None:  # type: ignore[override]
        """Run the kernel on the whole cluster, then (unless `once`: in place)
        again on an uneven team of 3: both must write the same outputs."""
        for team in [0] if once else self.teams():
            super().run(kernel, args, team)


@pytest.fixture(scope="module", params=[1, 8], ids=["cores1", "cores8"])
def lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lib:
    cores = request.param
    d = tmp_path_factory.mktemp(f"tf{cores}")
    return Lib(kernel_library(d, "tf", cores, KERNELS, STRUCTS), cores)


def _u(vals: Sequence[int], n: int) -> Any:
    return (ctypes.c_uint32 * n)(*list(vals), *([0] * (n - len(vals))))


def test_kernel_struct_layouts_match(lib: Lib) -> None:
    for s in STRUCTS:
        assert lib.layout(s) == mirror_layout(s), s.c_name  # type: ignore[attr-defined]


@pytest.mark.parametrize(("shape", "ax"), SOFTMAX_CASES)
def test_kernel_softmax_and_grad(lib: Lib, shape: tuple[int, ...], ax: int) -> None:
    x, dy = rand(*shape) * 3, rand(*shape)
    outer, inner = int(np.prod(shape[:ax])), int(np.prod(shape[ax + 1 :]))
    y = Guarded(shape)
    lib.run("dm_softmax_fp32", Softmax(p(x), y.ptr, outer, shape[ax], inner))
    (want,) = run(T.SoftmaxOp, [x], [shape], axis(ax))
    np.testing.assert_allclose(y.check(), want, **TOL)
    yv = want.copy()
    dx = Guarded(shape)
    lib.run("dm_softmax_grad_fp32", SoftmaxGrad(p(dy), p(yv), dx.ptr, outer, shape[ax], inner))
    (want_dx,) = run(T.SoftmaxGradOp, [dy, yv], [shape], axis(ax))
    np.testing.assert_allclose(dx.check(), want_dx, **TOL)
    # in place: Y over X
    xi = x.copy()
    lib.run("dm_softmax_fp32", Softmax(p(xi), p(xi), outer, shape[ax], inner), once=True)
    np.testing.assert_allclose(xi, want, **TOL)


@pytest.mark.parametrize("bias", [True, False])
def test_kernel_layer_norm_and_grads(lib: Lib, bias: bool) -> None:
    rows, cols = 7, 24
    x, s, b, dy = rand(rows, cols) * 2 + 1, rand(cols), rand(cols), rand(rows, cols)
    y, mean, inv = Guarded((rows, cols)), Guarded((rows,)), Guarded((rows,))
    args = LayerNorm(p(x), p(s), p(b) if bias else None, y.ptr, mean.ptr, inv.ptr, rows, cols, 1e-5)
    lib.run("dm_layernorm_fp32", args)
    ins = [x, s, b] if bias else [x, s]
    want = run(T.LayerNormOp, ins, [(rows, cols), (rows, 1), (rows, 1)], ln_props(1))
    np.testing.assert_allclose(y.check(), want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean.check(), want[1].reshape(rows), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(inv.check(), want[2].reshape(rows), rtol=1e-5, atol=1e-6)
    m, iv = mean.check().copy(), inv.check().copy()
    props = {**ln_props(1), "outputs": ArrayAttr([StringAttr(g) for g in T.LN_GRADS])}
    wants = run(T.LayerNormGradOp, [dy, x, s, m, iv], [(rows, cols), (cols,), (cols,)], props)
    for stats in (True, False):  # given, or recomputed (Deeploy's form)
        dx = Guarded((rows, cols))
        sm, si = (p(m), p(iv)) if stats else (None, None)
        lib.run(
            "dm_layernorm_grad_fp32",
            LayerNormGrad(p(dy), p(x), p(s), sm, si, dx.ptr, rows, cols, 1e-5),
        )
        np.testing.assert_allclose(dx.check(), wants[0], rtol=1e-4, atol=1e-5)
    ds, db = Guarded((cols,)), Guarded((cols,))
    lib.run(
        "dm_layernorm_grad_params_fp32",
        LayerNormParams(p(dy), p(x), p(m), p(iv), ds.ptr, db.ptr, rows, cols),
    )
    np.testing.assert_allclose(ds.check(), wants[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db.check(), wants[2], rtol=1e-5, atol=1e-5)
    only = Guarded((cols,))  # dScale may be NULL
    lib.run(
        "dm_layernorm_grad_params_fp32",
        LayerNormParams(p(dy), p(x), p(m), p(iv), None, only.ptr, rows, cols),
    )
    np.testing.assert_allclose(only.check(), wants[2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("rows", "cols"), [(9, 22), (5, 64), (3, 3)])
def test_kernel_layer_norm_bits(lib: Lib, rows: int, cols: int) -> None:
    """layernorm.c's float operations in their order (sums one element after
    the other, as the header documents), rebuilt in numpy: the same bits for
    the forward, dX and dScale / dBias; cols with and without a remainder
    of 4 (the loops take 4 columns a step), dScale's columns split over the
    cores in blocks of 4 and a tail."""
    f = np.float32
    x, s, b, dy = rand(rows, cols) * 2 + 1, rand(cols), rand(cols), rand(rows, cols)
    n, eps = f(cols), f(1e-5)
    m = _seq_sum(x, 1) / n
    d = x - m[:, None]
    inv = f(1) / np.sqrt(_seq_sum(d * d, 1) / n + eps)
    xhat = (x - m[:, None]) * inv[:, None]
    want_y = xhat * s + b
    g = dy * s
    mean_g, mean_gx = _seq_sum(g, 1) / n, _seq_sum(g * xhat, 1) / n
    want_dx = inv[:, None] * ((g - mean_g[:, None]) - xhat * mean_gx[:, None])
    want_ds, want_db = _seq_sum(dy * xhat, 0), _seq_sum(dy, 0)
    y, mean, iv = Guarded((rows, cols)), Guarded((rows,)), Guarded((rows,))
    lib.run(
        "dm_layernorm_fp32", LayerNorm(p(x), p(s), p(b), y.ptr, mean.ptr, iv.ptr, rows, cols, eps)
    )
    np.testing.assert_array_equal(mean.check(), m)
    np.testing.assert_array_equal(iv.check(), inv)
    np.testing.assert_array_equal(y.check(), want_y)
    dx = Guarded((rows, cols))
    lib.run(
        "dm_layernorm_grad_fp32",
        LayerNormGrad(p(dy), p(x), p(s), p(m), p(inv), dx.ptr, rows, cols, eps),
    )
    np.testing.assert_array_equal(dx.check(), want_dx)
    ds, db = Guarded((cols,)), Guarded((cols,))
    lib.run(
        "dm_layernorm_grad_params_fp32",
        LayerNormParams(p(dy), p(x), p(m), p(inv), ds.ptr, db.ptr, rows, cols, 0),
    )
    np.testing.assert_array_equal(ds.check(), want_ds)
    np.testing.assert_array_equal(db.check(), want_db)


def test_kernel_layer_norm_params_add_up_split_rows(lib: Lib) -> None:
    """acc: dScale and dBias continue their sums from the outputs' values,
    so the rows split in two consecutive parts (the second call adding) give
    the same bits as one call; the first call overwrites what was there."""
    rows, cols, r1 = 9, 13, 4
    x, dy = rand(rows, cols) * 2 + 1, rand(rows, cols)
    m = x.mean(axis=1).astype(np.float32)
    iv = (1 / np.sqrt(x.var(axis=1) + 1e-5)).astype(np.float32)
    ds1, db1 = Guarded((cols,)), Guarded((cols,))
    lib.run(
        "dm_layernorm_grad_params_fp32",
        LayerNormParams(p(dy), p(x), p(m), p(iv), ds1.ptr, db1.ptr, rows, cols, 0),
    )
    ds, db = Guarded((cols,)), Guarded((cols,))
    for lo, hi, acc in ((0, r1, 0), (r1, rows, 1)):
        args = [p(dy[lo:hi]), p(x[lo:hi]), p(m[lo:hi]), p(iv[lo:hi])]
        lib.run(
            "dm_layernorm_grad_params_fp32",
            LayerNormParams(*args, ds.ptr, db.ptr, hi - lo, cols, acc),
            once=acc == 1,  # (run twice, the second would add twice)
        )
    np.testing.assert_array_equal(ds.check(), ds1.check())
    np.testing.assert_array_equal(db.check(), db1.check())


def test_kernel_gelu_and_grad(lib: Lib) -> None:
    x, dy = rand(37) * 3, rand(37)
    y, dx = Guarded((37,)), Guarded((37,))
    lib.run("dm_gelu_fp32", Gelu(p(x), y.ptr, 37))
    lib.run("dm_gelu_grad_fp32", GeluGrad(p(dy), p(x), dx.ptr, 37))
    np.testing.assert_allclose(y.check(), run(T.GeluOp, [x], [(37,)])[0], **TOL)
    np.testing.assert_allclose(dx.check(), run(T.GeluGradOp, [dy, x], [(37,)])[0], **TOL)


def test_kernel_gelu_and_softmax_bits(lib: Lib) -> None:
    """gelu.c's and softmax.c's float operations in order, exp and erf as
    runtime_c/include/dm_mathf.h computes them (tests/mathf_model.py): the
    same bits (inputs over both of dm_erff's ranges, ragged per core)."""
    f = np.float32
    x = (rand(203) * 4).astype(f)
    dy = rand(203)
    c, inv = f(0.70710678118654752440), f(0.39894228040143267794)
    y, dx = Guarded((203,)), Guarded((203,))
    lib.run("dm_gelu_fp32", Gelu(p(x), y.ptr, 203))
    lib.run("dm_gelu_grad_fp32", GeluGrad(p(dy), p(x), dx.ptr, 203))
    erf = mathf_model.erff(x * c)
    want = (f(0.5) * x) * (f(1) + erf)
    cdf = f(0.5) * (f(1) + erf)
    pdf = mathf_model.expf((f(-0.5) * x) * x) * inv
    want_dx = dy * (cdf + x * pdf)
    assert (y.check().view(np.uint32) == want.view(np.uint32)).all()
    assert (dx.check().view(np.uint32) == want_dx.view(np.uint32)).all()
    xs = (rand(9, 13) * 5).astype(f)
    ys = Guarded((9, 13))
    lib.run("dm_softmax_fp32", Softmax(p(xs), ys.ptr, 9, 13, 1))
    e = mathf_model.expf(xs - xs.max(axis=1, keepdims=True))
    s = np.cumsum(e, axis=1, dtype=f)[:, -1:]
    assert (ys.check().view(np.uint32) == (e / s).view(np.uint32)).all()


def _seq_sum(v: np.ndarray, axis: int) -> np.ndarray:
    """float32 sums along `axis`, the elements added one by one in order."""
    return np.take(np.cumsum(v, axis=axis, dtype=np.float32), -1, axis=axis)


RNG_DIV = np.random.default_rng(1931)


@pytest.mark.parametrize(("outer", "n", "inner"), [(9, 13, 1), (5, 64, 1), (2, 7, 3)])
def test_kernel_softmax_grad_bits(lib: Lib, outer: int, n: int, inner: int) -> None:
    """softmax_grad's operations in order, rebuilt in numpy: s the sum of
    dY * Y along the line, one product after the other, then Y * (dY - s)
    (contiguous lines take 4 elements a step: the same bits)."""
    y = rand(outer, n, inner) * 0.5 + 0.5
    dy = rand(outer, n, inner)
    s = _seq_sum(dy * y, 1)
    want = y * (dy - s[:, None, :])
    dx = Guarded((outer, n, inner))
    lib.run("dm_softmax_grad_fp32", SoftmaxGrad(p(dy), p(y), dx.ptr, outer, n, inner))
    np.testing.assert_array_equal(dx.check(), want)


def test_kernel_softmax_division_bits(lib: Lib) -> None:
    """softmax.c divides a row by its sum with one division and two
    multiply-adds per element (dm_rows.h dm_div_by): the bits of the
    division e / s itself, for exps over the whole float range: 1 down to
    the subnormals and 0 (x - max in [-110, 0]; below 2^-100 the division is
    taken), sums from 1 to 64, rows whose sum has an all-ones or a power-of-
    two significand, and a row holding -inf."""
    f = np.float32
    rows, cols = 41, 64
    x = (RNG_DIV.uniform(-110.0, 0.0, (rows, cols))).astype(f)
    x[0] = 0.0  # sum 64: a power of two
    x[1, 1:] = -200.0  # sum 1 + 0s: exps that underflow to 0
    x[2, 5] = -np.inf
    x[3, :3] = 0.0  # a few ones among tiny exps
    x[4] = np.linspace(-1.0, 0.0, cols, dtype=f)  # exps all near 1: no fallback
    ys = Guarded((rows, cols))
    lib.run("dm_softmax_fp32", Softmax(p(x), ys.ptr, rows, cols, 1))
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        e = mathf_model.expf(x - x.max(axis=1, keepdims=True))
    s = np.cumsum(e, axis=1, dtype=f)[:, -1:]
    want = e / s
    assert (e[:, :] < f(2.0**-100)).any() and (e > f(0.5)).sum() > cols
    assert (ys.check().view(np.uint32) == want.view(np.uint32)).all()


@pytest.mark.parametrize(
    ("shape", "perm"),
    [
        ((3, 5), (1, 0)),
        ((2, 3, 4, 5), (0, 2, 3, 1)),
        ((2, 3, 4, 5), (3, 1, 0, 2)),
        ((2, 1, 3, 2, 2), (4, 3, 2, 1, 0)),
        ((4,), (0,)),
    ],
)
def test_kernel_transpose(lib: Lib, shape: tuple[int, ...], perm: tuple[int, ...]) -> None:
    x = rand(*shape)
    want = np.ascontiguousarray(np.transpose(x, perm))
    y = Guarded(want.shape)
    lib.run("dm_transpose_fp32", Transpose(p(x), y.ptr, len(shape), _u(shape, 6), _u(perm, 6)))
    np.testing.assert_array_equal(y.check(), want)


def _elem_strides(a: np.ndarray, batch: Sequence[int]) -> list[int]:
    """Element strides of a's batch dims broadcast to `batch` (numpy's view:
    0 where broadcast)."""
    view = np.broadcast_to(a, (*batch, *a.shape[-2:]))
    return [s // 4 for s in view.strides[: len(batch)]]


@pytest.mark.parametrize(
    ("sa", "sb", "sc", "trans"),
    [
        ((2, 1, 4, 3), (5, 3, 6), None, (0, 0)),
        ((1, 2, 3, 4), (4, 5), (5,), (0, 0)),
        ((2, 5, 4), (2, 6, 5), (2, 4, 1), (1, 1)),
        ((3, 8), (2, 3, 5), (1, 5), (1, 0)),
    ],
)
def test_kernel_batch_matmul(lib: Lib, sa, sb, sc, trans: tuple[int, int]) -> None:
    a, b = rand(*sa), rand(*sb)
    c = rand(*sc) if sc is not None else None
    ta, tb = trans
    props: dict[str, Attribute] = {"alpha": FloatAttr(1.5, f32), "beta": FloatAttr(0.5, f32)}
    if ta:
        props["trans_a"] = UnitAttr()
    if tb:
        props["trans_b"] = UnitAttr()
    ins = [a, b] if c is None else [a, b, c]
    m = sa[-1] if ta else sa[-2]
    n = sb[-2] if tb else sb[-1]
    k = sa[-2] if ta else sa[-1]
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    (want,) = run(T.BatchMatmulOp, ins, [(*batch, m, n)], props)
    y = Guarded(want.shape)
    cs = [0, 0, 0]
    if c is not None:
        full = np.broadcast_to(c, want.shape)
        cs = [s // 4 for s in full.strides[-2:]] + [0]
        cstr = [s // 4 for s in full.strides[: len(batch)]]
    else:
        cstr = [0] * len(batch)
    args = BatchMatmul(
        Gemm(p(a), p(b), p(c), y.ptr, m, n, k, ta, tb, 1.5, 0.5, cs[0], cs[1]), len(batch),
        _u(batch, 4), _u(_elem_strides(a, batch), 4), _u(_elem_strides(b, batch), 4),
        _u(cstr, 4),
    )  # fmt: skip
    lib.run("dm_batch_matmul_fp32", args)
    np.testing.assert_allclose(y.check(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axes", [(1,), (0, 2), (0, 1, 2), (3,)])
def test_kernel_reduce_mean(lib: Lib, axes: tuple[int, ...]) -> None:
    x = rand(3, 4, 5, 2)
    want = x.astype(np.float64).mean(axis=axes)
    y = Guarded(want.shape)
    mask = sum(1 << a for a in axes)
    lib.run("dm_reduce_mean_fp32", Reduce(p(x), y.ptr, 4, _u(x.shape, 4), mask))
    np.testing.assert_allclose(y.check(), want, rtol=1e-5, atol=1e-6)


def test_kernel_binary_pow_broadcast(lib: Lib) -> None:
    a, b = np.abs(rand(2, 3, 4)) + 0.5, rand(3, 1)
    want = np.power(a, np.broadcast_to(b, a.shape))
    y = Guarded(a.shape)
    # element strides of B [3, 1] read as [2, 3, 4]: 0 on the broadcast dims
    args = Binary(p(a), p(b), y.ptr, 3, _u(a.shape, 4), _u((12, 4, 1), 4), _u((0, 1, 0), 4), 4)
    lib.run("dm_binary_fp32", args)
    np.testing.assert_allclose(y.check(), want, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- the importer


def _import(model: onnx.ModelProto, tmp_path: Path):
    from deeploy_mlir.frontend.onnx_import import import_model

    f = tmp_path / "m.onnx"
    onnx.save(model, f)
    return import_model(f)


def _interpret_model(model: onnx.ModelProto, feeds: dict[str, np.ndarray], tmp_path: Path):
    from deeploy_mlir.interp.interpreter import TrainingSession

    imp = _import(model, tmp_path)
    s = TrainingSession(imp.module, imp.params)
    out = s.call("training_step", feeds)
    return [out[o.name] for o in model.graph.output]


def _transformer_forward() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """One attention-like block: batched MatMul, broadcast Add, LayerNorm with
    its statistics, Reshape/Transpose heads, scores Mul + Softmax, Gelu,
    Squeeze/Unsqueeze, Pow, ReduceMean; nodes deliberately unsorted."""
    x = rand(1, 6, 8)
    w, bias, s, b = rand(8, 8) * 0.5, rand(8), rand(8), rand(8)
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(bias, "bias"),
        numpy_helper.from_array(s, "s"),
        numpy_helper.from_array(b, "b"),
        numpy_helper.from_array(np.array([1, 6, 2, 4], np.int64), "heads"),
        numpy_helper.from_array(np.array(0.5, np.float32), "scale"),
        numpy_helper.from_array(np.array(2, np.int64), "two"),
        numpy_helper.from_array(np.array([0], np.int64), "ax0"),
        numpy_helper.from_array(np.array([-1], np.int64), "axlast"),
    ]
    nodes = [
        helper.make_node("Softmax", ["scores"], ["att"], axis=-1),  # unsorted on purpose
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["bias", "xw"], ["h"]),
        helper.make_node("LayerNormalization", ["h", "s", "b"], ["n", "mean", "inv"], axis=-1),
        helper.make_node("Reshape", ["n", "heads"], ["nh"]),
        helper.make_node("Transpose", ["nh"], ["q"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["nh"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]),
        helper.make_node("Mul", ["qk", "scale"], ["scores"]),
        helper.make_node("MatMul", ["att", "q"], ["ctx"]),
        helper.make_node("Gelu", ["ctx"], ["g"]),
        helper.make_node("Squeeze", ["g", "ax0"], ["g3"]),
        helper.make_node("Pow", ["g3", "two"], ["sq"]),
        helper.make_node("ReduceMean", ["sq", "axlast"], ["ms"], keepdims=1),
        helper.make_node("Unsqueeze", ["ms", "ax0"], ["ms4"]),
    ]
    outs = ["att", "ms4", "mean", "inv", "g"]
    return onnx_model(nodes, {"x": x}, outs, inits, opset=20), {"x": x}


def _transformer_backward() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """onnxruntime's gradient ops: LayerNormalizationGrad with (Mean,
    InvStdDev) and three outputs, SoftmaxGrad_13 on a middle axis, GeluGrad,
    and a batched Gemm-free product gradient as MatMul of a Transpose."""
    x, dy, s, b = rand(2, 3, 8) + 0.5, rand(2, 3, 8), rand(8), rand(8)
    inits = [numpy_helper.from_array(s, "s"), numpy_helper.from_array(b, "b")]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=2),
        helper.make_node(
            "LayerNormalizationGrad",
            ["dy", "x", "s", "mean", "inv"],
            ["dx", "ds", "db"],
            domain="com.microsoft",
            axis=2,
        ),
        helper.make_node("Softmax", ["y"], ["p"], axis=1),
        helper.make_node("SoftmaxGrad_13", ["dx", "p"], ["dp"], domain="com.microsoft", axis=1),
        helper.make_node("GeluGrad", ["dp", "y"], ["dg"], domain="com.microsoft"),
        helper.make_node("Transpose", ["dg"], ["dgt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["dgt", "p"], ["prod"]),
    ]
    # dgt an output too: transpose-fold would otherwise fold the transpose
    # into the MatMul (trans_a), and the emitted C would not run its kernel
    outs = ["ds", "db", "dp", "dg", "dgt", "prod"]
    feeds = {"x": x, "dy": dy}
    return onnx_model(nodes, feeds, outs, inits, opset=20), feeds


@pytest.mark.parametrize("which", ["forward", "backward"])
def test_imported_graph_interprets_like_onnxruntime(which: str, tmp_path: Path) -> None:
    model, feeds = _transformer_forward() if which == "forward" else _transformer_backward()
    want = ort(model, feeds)
    got = _interpret_model(model, feeds, tmp_path)
    for name, g, w in zip([o.name for o in model.graph.output], got, want, strict=True):
        np.testing.assert_allclose(g.reshape(w.shape), w, rtol=1e-4, atol=1e-5, err_msg=name)


def test_deeploy_conventions(tmp_path: Path) -> None:
    """Deeploy's LayerNormalizationGrad (dY, X, scale, bias) -> dX, GeluGrad in
    the default domain, SoftmaxGrad on the last axis, a Squeeze whose axes
    attribute is a single int: against torch."""
    import torch

    x, dy, s, b = rand(1, 4, 6) + 0.3, rand(1, 4, 6), rand(6), rand(6)
    inits = [numpy_helper.from_array(s, "s"), numpy_helper.from_array(b, "b")]
    nodes = [
        helper.make_node("LayerNormalizationGrad", ["dy", "x", "s", "b"], ["dx"],
                         domain="com.microsoft", epsilon=1e-5, axis=-1),
        helper.make_node("GeluGrad", ["dx", "x"], ["dg"]),
        helper.make_node("Softmax", ["x"], ["p"], axis=2),
        helper.make_node("SoftmaxGrad", ["dg", "p"], ["dp"], domain="com.microsoft", axis=2),
        helper.make_node("Squeeze", ["dp"], ["out"], axes=0),
    ]  # fmt: skip
    model = onnx_model(nodes, {"x": x, "dy": dy}, ["out"], inits, opset=19)
    (got,) = _interpret_model(model, {"x": x, "dy": dy}, tmp_path)
    assert got.shape == (4, 6)

    def chain(xt: Any) -> Any:  # the gradient each node computes, composed in torch
        xt64 = xt
        ln = torch.nn.functional.layer_norm
        dx = torch.autograd.functional.vjp(
            lambda t: ln(t, (6,), torch.tensor(s, dtype=torch.float64), None, 1e-5),
            xt64,
            torch.tensor(dy, dtype=torch.float64),
        )[1]
        dg = torch.autograd.functional.vjp(torch.nn.functional.gelu, xt64, dx)[1]
        return torch.autograd.functional.vjp(lambda t: torch.softmax(t, dim=2), xt64, dg)[1]

    want = chain(torch.tensor(x, dtype=torch.float64)).numpy().reshape(4, 6)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"), "approximate = 'tanh'"),
        (helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0, 1]), "perm [0, 0, 1]"),
        (helper.make_node("Softmax", ["x"], ["y"], axis=3), "axis 3 is out of range"),
        (helper.make_node("Squeeze", ["x"], ["y"], axes=[1]), "cannot squeeze axis 1 of size 3"),
        (
            helper.make_node("SoftmaxGrad", ["x", "x"], ["y"], domain="com.microsoft", axis=1),
            "only the last axis",
        ),
        (
            helper.make_node("LayerNormalizationGrad", ["x", "x"], ["y"], domain="com.microsoft"),
            "got 2 inputs",
        ),
        (helper.make_node("MatMul", ["x", "v"], ["y"]), "rank-1"),
    ],
)
def test_import_errors_are_one_line(node: onnx.NodeProto, message: str, tmp_path: Path) -> None:
    x = rand(2, 3, 4)
    inits = [numpy_helper.from_array(rand(4), "v")]
    model = onnx_model([node], {"x": x}, ["y"], inits, opset=19)
    with pytest.raises(DeeployError, match=re.escape(message)) as e:
        _import(model, tmp_path)
    assert "\n" not in str(e.value)


def test_import_error_through_the_cli(tmp_path: Path) -> None:
    from conftest import run_cli

    model = onnx_model(
        [helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")], {"x": rand(2)}, ["y"]
    )
    d = tmp_path / "f"
    d.mkdir()
    onnx.save(model, d / "network.onnx")
    np.savez(d / "inputs.npz", x=rand(2))
    np.savez(d / "outputs.npz", y=rand(2))
    r = run_cli("test", d)
    assert r.code == 2
    assert r.err.count("\n") == 1 and "approximate = 'tanh'" in r.err, r.err


# ---------------------------------------------------------------- end to end


def _folder(tmp_path: Path, which: str) -> Path:
    model, feeds = _transformer_forward() if which == "forward" else _transformer_backward()
    want = ort(model, feeds)
    d = tmp_path / which
    d.mkdir()
    onnx.save(model, d / "network.onnx")
    np.savez(d / "inputs.npz", *feeds.values())  # arr_0, arr_1: names do not matter
    np.savez(d / "outputs.npz", *want)
    return d


#: L1 budgets below what each graph needs untiled (672 and 896 bytes, one
#: buffer), above what its largest op needs at its smallest tiles
BUDGETS = {"forward": (300, 600), "backward": (800, 880)}
CONFIGS = {
    "untiled": lambda w, d: ["--tiling", "untiled"],
    "tiled-single": lambda w, d: [
        "--l1",
        str(stacks_of(d) + BUDGETS[w][0]),
        "--buffering",
        "single",
    ],
    "tiled-double": lambda w, d: [
        "--l1",
        str(stacks_of(d) + BUDGETS[w][1]),
        "--buffering",
        "double",
    ],
    "tiled-home-L3": lambda w, d: [
        *["--l1", str(stacks_of(d) + BUDGETS[w][1]), "--l2", "60000", "--home", "L3"]
    ],
}


@pytest.mark.parametrize("which", ["forward", "backward"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_emitted_c_matches_onnxruntime(
    which: str, config: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    """The emitted C (gcc, host emulation) of each graph against
    onnxruntime's outputs through `deeploy-mlir test`; the small L1 budgets
    split every op the tiler may split."""
    from deeploy_mlir.cli import main

    monkeypatch.setenv("CFLAGS", "-std=gnu11 -ffp-contract=off -O0 -Wall -Wextra -Werror")
    d = _folder(tmp_path, which)
    code = main(["test", str(d), *CONFIGS[config](which, d), "--keep", str(tmp_path / "proj")])
    out = capsys.readouterr().out
    assert code == 0, out
    n = len(onnx.load(d / "network.onnx").graph.output)
    assert f"{n}/{n} outputs match" in out
    c = (tmp_path / "proj" / "TrainingNetwork.c").read_text()
    kernels = {
        "forward": ["dm_batch_matmul_fp32", "dm_layernorm_fp32", "dm_softmax_fp32", "dm_gelu_fp32",
                    "dm_transpose_fp32", "dm_reduce_mean_fp32", "dm_binary_fp32"],
        "backward": ["dm_layernorm_grad_fp32", "dm_layernorm_grad_params_fp32",
                     "dm_softmax_grad_fp32", "dm_gelu_grad_fp32", "dm_transpose_fp32"],
    }[which]  # fmt: skip
    for k in kernels:
        assert f"pi_cl_team_fork(NUM_CORES, {k}," in c, k
    if config != "untiled":  # the budget splits ops: their kernels run in loops over tiles
        assert "for (uint32_t" in c
