"""ONNX import of the transformer ops: Softmax and com.microsoft SoftmaxGrad,
LayerNormalization and com.microsoft LayerNormalizationGrad, Gelu and GeluGrad,
Transpose, Squeeze and Unsqueeze (batched MatMul and Gemm, the elementwise ops
with broadcasting, ReduceSum/ReduceMean: onnx_import; Reshape and Flatten:
conv_import).

The two conventions of the gradient ops:

* ``LayerNormalizationGrad`` as onnxruntime-training writes it takes (dY, X,
  scale, Mean, InvStdDev) and returns (dX, dScale, dBias), an empty output
  name marking a gradient nobody needs; Deeploy's takes (dY, X, scale, bias)
  and returns dX only (its bias input is not read, the statistics are
  recomputed from X).
* ``SoftmaxGrad`` (com.microsoft, axis default 1) flattens its inputs to 2-D
  at the axis, like Softmax before opset 13: it is read when the axis is the
  last one (Deeploy's graphs); ``SoftmaxGrad_13`` takes any axis.
* ``GeluGrad`` is read in the default domain (Deeploy) and com.microsoft.

onnxruntime-training's fused forms lower onto the same ops:

* ``FusedMatMul`` (A, B; transA, transB, alpha; transBatchA = transBatchB =
  0) is ``alpha * A' @ B'`` with numpy's batch broadcasting: ``gemm`` when both
  operands have rank 2, else ``batch_matmul``;
* ``BiasGelu`` (A, B) is ``Gelu(A + B)``: ``binary`` add, then ``gelu``;
* ``BiasGeluGrad_dX`` (dY, X, B) is ``GeluGrad(dY, X + B)``: ``binary`` add,
  then ``gelu_grad``.
"""

from __future__ import annotations

import numpy as np
import onnx
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
from xdsl.ir import Attribute, SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.conv_import import _bind_named, _reshape_to
from deeploy_mlir.frontend.onnx_import import (
    MS,
    _attrs,
    _Importer,
    _node_label,
    _ssa_name,
    handles,
)


def _opset(im: _Importer) -> int:
    return max(o.version for o in im.train.opset_import if o.domain in ("", "ai.onnx"))


def _axis(node: onnx.NodeProto, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise DeeployError(f"{_node_label(node)}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def _axis_attr(node: onnx.NodeProto, axis: int) -> dict[str, Attribute | None]:
    return {"axis": IntegerAttr(axis, i64)}


# --------------------------------------------------------------------------
# Softmax
# --------------------------------------------------------------------------


def _softmax_axis(im: _Importer, node: onnx.NodeProto, rank: int, coerced_2d: bool) -> int:
    """The normalized axis; `coerced_2d`: the node flattens to 2-D at the
    axis (Softmax before opset 13, SoftmaxGrad), which is the same as a
    softmax along the axis only when the axis is the last dim."""
    default = 1 if coerced_2d else -1
    axis = _axis(node, int(_attrs(node).get("axis", default)), rank)
    if coerced_2d and axis != rank - 1:
        raise DeeployError(
            f"{_node_label(node)}: {node.op_type} flattens its input to 2-D at axis {axis}; "
            f"only the last axis ({rank - 1}) is supported for rank {rank}"
        )
    return axis


@handles("Softmax")
def _softmax(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    axis = _softmax_axis(im, node, len(T.shape_of(x.type)), _opset(im) < 13)
    im.bind(node, im.emit(node, T.SoftmaxOp, [x], _axis_attr(node, axis)))


@handles(f"{MS}:SoftmaxGrad", f"{MS}:SoftmaxGrad_13")
def _softmax_grad(im: _Importer, node: onnx.NodeProto) -> None:
    dy, y = im.value(node, 0), im.value(node, 1)
    rank = len(T.shape_of(y.type))
    axis = _softmax_axis(im, node, rank, node.op_type == "SoftmaxGrad")
    im.bind(node, im.emit(node, T.SoftmaxGradOp, [dy, y], _axis_attr(node, axis)))


# --------------------------------------------------------------------------
# Layer normalization
# --------------------------------------------------------------------------


def _norm_props(node: onnx.NodeProto, rank: int) -> dict[str, Attribute | None]:
    a = _attrs(node)
    if int(a.get("stash_type", 1)) != 1:
        raise DeeployError(
            f"{_node_label(node)}: stash_type {a['stash_type']} is not supported (only 1: float)"
        )
    eps = float(a.get("epsilon", 1e-5))
    if not eps >= 0 or not np.isfinite(eps):
        raise DeeployError(f"{_node_label(node)}: epsilon must be a non-negative number, got {eps}")
    axis = _axis(node, int(a.get("axis", -1)), rank)
    return {"axis": IntegerAttr(axis, i64), "epsilon": FloatAttr(eps, f32)}


@handles("LayerNormalization", f"{MS}:LayerNormalization")
def _layer_norm(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    props = _norm_props(node, len(T.shape_of(x.type)))
    ins = [x, im.value(node, 1)]
    if len(node.input) > 2 and node.input[2]:
        ins.append(im.value(node, 2))
    outs = list(node.output[:3])
    n = max(i + 1 for i, name in enumerate(outs) if name or i == 0)
    res = im.emit(node, T.LayerNormOp, ins, props, n_results=n)
    _bind_named(im, [o for o in outs[:n] if o], [r for o, r in zip(outs, res, strict=False) if o])


@handles(f"{MS}:LayerNormalizationGrad")
def _layer_norm_grad(im: _Importer, node: onnx.NodeProto) -> None:
    n_in = len(node.input)
    if n_in not in (3, 4, 5):
        raise DeeployError(
            f"{_node_label(node)}: expects (dY, X, scale, Mean, InvStdDev) or Deeploy's (dY, X, "
            f"scale, bias), got {n_in} inputs"
        )
    dy, x, scale = (im.value(node, i) for i in range(3))
    ins = [dy, x, scale]
    if n_in == 5:  # onnxruntime: the forward's saved statistics
        ins += [im.value(node, 3), im.value(node, 4)]
    names = [*node.output, "", "", ""][:3]
    wanted = [(g, name) for g, name in zip(T.LN_GRADS, names, strict=True) if name]
    if not wanted:
        return
    props = _norm_props(node, len(T.shape_of(x.type)))
    props["outputs"] = ArrayAttr([StringAttr(g) for g, _ in wanted])
    res = im.emit(node, T.LayerNormGradOp, ins, props, n_results=len(wanted))
    _bind_named(im, [name for _, name in wanted], res)


# --------------------------------------------------------------------------
# GELU
# --------------------------------------------------------------------------


def _check_exact_gelu(node: onnx.NodeProto) -> None:
    approx = _attrs(node).get("approximate", b"none")
    approx = approx.decode() if isinstance(approx, bytes) else str(approx)
    if approx != "none":
        raise DeeployError(
            f"{_node_label(node)}: approximate = '{approx}' is not supported (only the erf form)"
        )


@handles("Gelu", f"{MS}:Gelu")
def _gelu(im: _Importer, node: onnx.NodeProto) -> None:
    _check_exact_gelu(node)
    im.bind(node, im.emit(node, T.GeluOp, [im.value(node, 0)]))


@handles("GeluGrad", f"{MS}:GeluGrad")
def _gelu_grad(im: _Importer, node: onnx.NodeProto) -> None:
    _check_exact_gelu(node)
    im.bind(node, im.emit(node, T.GeluGradOp, [im.value(node, 0), im.value(node, 1)]))


def _plus_bias(im: _Importer, node: onnx.NodeProto, x: SSAValue, i_bias: int) -> SSAValue:
    """X + B for BiasGelu and BiasGeluGrad_dX: B is 1-D, as long as X's last dim."""
    bias = im.value(node, i_bias)
    xs, bs = T.shape_of(x.type), T.shape_of(bias.type)
    if len(bs) != 1 or not xs or bs[0] != xs[-1]:
        raise DeeployError(
            f"{_node_label(node)}: the bias must be 1-D and as long as the last dim of "
            f"{list(xs)}, got {list(bs)}"
        )
    (total,) = im.emit(node, T.BinaryOp, [x, bias], {"kind": StringAttr("add")})
    total.name_hint = _ssa_name(f"{node.output[0]}_biased")
    return total


@handles(f"{MS}:BiasGelu")
def _bias_gelu(im: _Importer, node: onnx.NodeProto) -> None:
    total = _plus_bias(im, node, im.value(node, 0), 1)
    im.bind(node, im.emit(node, T.GeluOp, [total]))


@handles(f"{MS}:BiasGeluGrad_dX")
def _bias_gelu_grad(im: _Importer, node: onnx.NodeProto) -> None:
    total = _plus_bias(im, node, im.value(node, 1), 2)
    im.bind(node, im.emit(node, T.GeluGradOp, [im.value(node, 0), total]))


# --------------------------------------------------------------------------
# FusedMatMul
# --------------------------------------------------------------------------


@handles(f"{MS}:FusedMatMul")
def _fused_matmul(im: _Importer, node: onnx.NodeProto) -> None:
    a = _attrs(node)
    for k in ("transBatchA", "transBatchB"):
        if int(a.get(k, 0)) != 0:
            raise DeeployError(f"{_node_label(node)}: {k} = {a[k]} is not supported (only 0)")
    ins = [im.value(node, 0), im.value(node, 1)]
    ranks = [len(T.shape_of(v.type)) for v in ins]
    if min(ranks) < 2:
        raise DeeployError(
            f"{_node_label(node)}: FusedMatMul of rank-1 operands is not supported, got ranks "
            f"{ranks}"
        )
    alpha = float(a.get("alpha", 1.0))
    if not np.isfinite(alpha):
        raise DeeployError(f"{_node_label(node)}: alpha must be a finite number, got {alpha}")
    props: dict[str, Attribute | None] = {
        "trans_a": UnitAttr() if int(a.get("transA", 0)) else None,
        "trans_b": UnitAttr() if int(a.get("transB", 0)) else None,
        "alpha": FloatAttr(alpha, f32),
        "beta": FloatAttr(0.0, f32),
    }
    cls = T.GemmOp if ranks == [2, 2] else T.BatchMatmulOp
    im.bind(node, im.emit(node, cls, ins, props))


# --------------------------------------------------------------------------
# Layout: Transpose, Squeeze, Unsqueeze
# --------------------------------------------------------------------------


@handles("Transpose")
def _transpose(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    rank = len(T.shape_of(x.type))
    perm = [int(p) for p in _attrs(node).get("perm", list(reversed(range(rank))))]
    if sorted(perm) != list(range(rank)):
        raise DeeployError(
            f"{_node_label(node)}: perm {perm} is not a permutation of the {rank} dims"
        )
    shape = T.shape_of(x.type)
    moved = [p for p in perm if shape[p] != 1]
    if moved == sorted(moved):
        # only size-1 dims move: the elements keep their order (a reshape, or
        # the value itself)
        _reshape_to(im, node, x, [shape[p] for p in perm])
        return
    props: dict[str, Attribute | None] = {"perm": DenseArrayBase.from_list(i64, perm)}
    im.bind(node, im.emit(node, T.TransposeOp, [x], props))


def _axes(im: _Importer, node: onnx.NodeProto, rank: int) -> list[int] | None:
    """The axes of Squeeze/Unsqueeze: input #1 (opset 13) or the attribute;
    None when neither is given. `rank`: the rank the axes index."""
    if len(node.input) > 1 and node.input[1]:
        axes = im.static_ints(node, 1)
    elif "axes" in _attrs(node):
        axes = _int_list(_attrs(node)["axes"])
    else:
        return None
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise DeeployError(
            f"{_node_label(node)}: axes {axes} must be distinct and in [{-rank}, {rank})"
        )
    return sorted(a % rank for a in axes)


@handles("Squeeze")
def _squeeze(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    shape = T.shape_of(x.type)
    axes = _axes(im, node, len(shape))
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    wide = [a for a in axes if shape[a] != 1]
    if wide:
        raise DeeployError(
            f"{_node_label(node)}: cannot squeeze axis {wide[0]} of size {shape[wide[0]]} "
            f"(input shape {list(shape)})"
        )
    _reshape_to(im, node, x, [d for i, d in enumerate(shape) if i not in axes])


@handles("Unsqueeze")
def _unsqueeze(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    shape = list(T.shape_of(x.type))
    axes = _axes(im, node, len(shape) + len(_unsqueeze_count(im, node)))
    if axes is None:
        raise DeeployError(f"{_node_label(node)}: Unsqueeze needs axes")
    out: list[int] = []
    it = iter(shape)
    for i in range(len(shape) + len(axes)):
        out.append(1 if i in axes else next(it))
    _reshape_to(im, node, x, out)


def _unsqueeze_count(im: _Importer, node: onnx.NodeProto) -> list[int]:
    """The raw axes of an Unsqueeze (for the output rank), unchecked."""
    if len(node.input) > 1 and node.input[1]:
        return im.static_ints(node, 1)
    return _int_list(_attrs(node).get("axes", []))


def _int_list(v: object) -> list[int]:
    """An ints attribute (Deeploy's exporter also writes a single int)."""
    return [int(v)] if isinstance(v, int) else [int(a) for a in v]  # type: ignore[attr-defined]
