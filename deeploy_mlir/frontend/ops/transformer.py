"""Transformer ops: Softmax and com.microsoft SoftmaxGrad,
LayerNormalization and com.microsoft LayerNormalizationGrad, Gelu and GeluGrad,
com.microsoft BiasGelu and BiasGeluGrad_dX (batched products: ops/linalg.py;
Transpose, Squeeze, Unsqueeze: ops/shape.py).

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

* ``BiasGelu`` (A, B) is ``Gelu(A + B)``: ``binary`` add, then ``gelu``;
* ``BiasGeluGrad_dX`` (dY, X, B) is ``GeluGrad(dY, X + B)``: ``binary`` add,
  then ``gelu_grad``.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, StringAttr, f32, i64
from xdsl.ir import SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, Props, attrs, handles, node_label, ssa_name


def _axis(node: pb.NodeProto, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise DeeployError(f"{node_label(node)}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def _axis_attr(node: pb.NodeProto, axis: int) -> Props:
    return {"axis": IntegerAttr(axis, i64)}


# --------------------------------------------------------------------------
# Softmax
# --------------------------------------------------------------------------


def _softmax_axis(im: Importer, node: pb.NodeProto, rank: int, coerced_2d: bool) -> int:
    """The normalized axis; `coerced_2d`: the node flattens to 2-D at the
    axis (Softmax before opset 13, SoftmaxGrad), which is the same as a
    softmax along the axis only when the axis is the last dim."""
    default = 1 if coerced_2d else -1
    axis = _axis(node, int(attrs(node).get("axis", default)), rank)
    if coerced_2d and axis != rank - 1:
        raise DeeployError(
            f"{node_label(node)}: {node.op_type} flattens its input to 2-D at axis {axis}; "
            f"only the last axis ({rank - 1}) is supported for rank {rank}"
        )
    return axis


@handles("Softmax")
def _softmax(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    axis = _softmax_axis(im, node, len(T.shape_of(x.type)), im.opset() < 13)
    im.bind(node, im.emit(node, T.SoftmaxOp, [x], _axis_attr(node, axis)))


@handles(f"{MS}:SoftmaxGrad", f"{MS}:SoftmaxGrad_13", schema="Softmax")
def _softmax_grad(im: Importer, node: pb.NodeProto) -> None:
    dy, y = im.value(node, 0), im.value(node, 1)
    rank = len(T.shape_of(y.type))
    axis = _softmax_axis(im, node, rank, node.op_type == "SoftmaxGrad")
    im.bind(node, im.emit(node, T.SoftmaxGradOp, [dy, y], _axis_attr(node, axis)))


# --------------------------------------------------------------------------
# Layer normalization
# --------------------------------------------------------------------------


def _norm_props(node: pb.NodeProto, rank: int) -> Props:
    a = attrs(node)
    if int(a.get("stash_type", 1)) != 1:
        raise DeeployError(
            f"{node_label(node)}: stash_type {a['stash_type']} is not supported (only 1: float)"
        )
    eps = float(a.get("epsilon", 1e-5))
    if not eps >= 0 or not np.isfinite(eps):
        raise DeeployError(f"{node_label(node)}: epsilon must be a non-negative number, got {eps}")
    axis = _axis(node, int(a.get("axis", -1)), rank)
    return {"axis": IntegerAttr(axis, i64), "epsilon": FloatAttr(eps, f32)}


@handles("LayerNormalization", f"{MS}:LayerNormalization")
def _layer_norm(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    props = _norm_props(node, len(T.shape_of(x.type)))
    ins = [x, im.value(node, 1)]
    if len(node.input) > 2 and node.input[2]:
        ins.append(im.value(node, 2))
    outs = list(node.output[:3])
    n = max(i + 1 for i, name in enumerate(outs) if name or i == 0)
    res = im.emit(node, T.LayerNormOp, ins, props, n_results=n)
    im.bind_named([o for o in outs[:n] if o], [r for o, r in zip(outs, res, strict=False) if o])


@handles(f"{MS}:LayerNormalizationGrad", schema="LayerNormalization")
def _layer_norm_grad(im: Importer, node: pb.NodeProto) -> None:
    n_in = len(node.input)
    if n_in not in (3, 4, 5):
        raise DeeployError(
            f"{node_label(node)}: expects (dY, X, scale, Mean, InvStdDev) or Deeploy's (dY, X, "
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
    im.bind_named([name for _, name in wanted], res)


# --------------------------------------------------------------------------
# GELU
# --------------------------------------------------------------------------


def _check_exact_gelu(node: pb.NodeProto) -> None:
    approx = attrs(node).get("approximate", b"none")
    approx = approx.decode() if isinstance(approx, bytes) else str(approx)
    if approx != "none":
        raise DeeployError(
            f"{node_label(node)}: approximate = '{approx}' is not supported (only the erf form)"
        )


@handles("Gelu", f"{MS}:Gelu")
def _gelu(im: Importer, node: pb.NodeProto) -> None:
    _check_exact_gelu(node)
    im.bind(node, im.emit(node, T.GeluOp, [im.value(node, 0)]))


@handles("GeluGrad", f"{MS}:GeluGrad")
def _gelu_grad(im: Importer, node: pb.NodeProto) -> None:
    _check_exact_gelu(node)
    im.bind(node, im.emit(node, T.GeluGradOp, [im.value(node, 0), im.value(node, 1)]))


def _plus_bias(im: Importer, node: pb.NodeProto, x: SSAValue, i_bias: int) -> SSAValue:
    """X + B for BiasGelu and BiasGeluGrad_dX: B is 1-D, as long as X's last dim."""
    bias = im.value(node, i_bias)
    xs, bs = T.shape_of(x.type), T.shape_of(bias.type)
    if len(bs) != 1 or not xs or bs[0] != xs[-1]:
        raise DeeployError(
            f"{node_label(node)}: the bias must be 1-D and as long as the last dim of "
            f"{list(xs)}, got {list(bs)}"
        )
    (total,) = im.emit(node, T.BinaryOp, [x, bias], {"kind": StringAttr("add")})
    total.name_hint = ssa_name(f"{node.output[0]}_biased")
    return total


@handles(f"{MS}:BiasGelu")
def _bias_gelu(im: Importer, node: pb.NodeProto) -> None:
    total = _plus_bias(im, node, im.value(node, 0), 1)
    im.bind(node, im.emit(node, T.GeluOp, [total]))


@handles(f"{MS}:BiasGeluGrad_dX")
def _bias_gelu_grad(im: Importer, node: pb.NodeProto) -> None:
    total = _plus_bias(im, node, im.value(node, 1), 2)
    im.bind(node, im.emit(node, T.GeluGradOp, [im.value(node, 0), total]))
