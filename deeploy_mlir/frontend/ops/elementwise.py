"""Elementwise ops and reductions: Add, Sub, Mul, Div, Pow (with numpy
broadcasting), Relu and com.microsoft ReluGrad, Identity, Sum (residual
connections add their branches' gradients with it: a chain of
`training.binary` adds), com.microsoft Scale, ReduceSum and ReduceMean."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, StringAttr, UnitAttr, i64

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, Props, attrs, handles, node_label, ssa_name


@handles("Add", "Sub", "Mul", "Div", "Pow")
def binary(im: Importer, node: pb.NodeProto) -> None:
    if node.op_type == "Pow" and node.input[1] in im.inits and node.input[1] not in im.env:
        # an integer exponent (x ** 2 in an MSE loss) is a float one here
        exp = np.asarray(im.inits[node.input[1]])
        if exp.dtype.kind in "iu":
            im.env[node.input[1]] = im.constant(exp.astype(np.float32))
    ins = [im.value(node, 0), im.value(node, 1)]
    kind = StringAttr(node.op_type.lower())
    im.bind(node, im.emit(node, T.BinaryOp, ins, {"kind": kind}))


@handles("Relu")
def relu(im: Importer, node: pb.NodeProto) -> None:
    im.bind(node, im.emit(node, T.ReluOp, [im.value(node, 0)]))


@handles(f"{MS}:ReluGrad")
def relu_grad(im: Importer, node: pb.NodeProto) -> None:
    im.bind(node, im.emit(node, T.ReluGradOp, [im.value(node, 0), im.value(node, 1)]))


@handles("Identity")
def identity(im: Importer, node: pb.NodeProto) -> None:
    im.env[node.output[0]] = im.value(node, 0)


@handles("Sum")
def sum_(im: Importer, node: pb.NodeProto) -> None:
    if not node.input:
        raise DeeployError(f"{node_label(node)}: Sum needs at least one input")
    acc = im.value(node, 0)
    for i in range(1, len(node.input)):
        (acc,) = im.emit(node, T.BinaryOp, [acc, im.value(node, i)], {"kind": StringAttr("add")})
    if len(node.input) > 1:
        acc.name_hint = ssa_name(node.output[0])
    im.env[node.output[0]] = acc


@handles(f"{MS}:Scale")
def scale(im: Importer, node: pb.NodeProto) -> None:
    """Y = X * scale, or X / scale with scale_down (scale: one element of
    any numeric type, converted to float as onnxruntime's kernel does: the
    gradient of a mean over some axes scales by an int64 element count). A
    constant scale is converted here; a computed one must be float."""
    name = im.input_name(node, 1)
    x = im.value(node, 0)
    val = np.asarray(im.inits[name]) if name in im.inits and name not in im.env else None
    if val is not None and val.dtype.kind in "biuf" and val.dtype != np.float32:
        s = im.constant(val.astype(np.float32))  # (not bound: other readers keep its type)
    else:
        s = im.value(node, 1)
    if not T.is_f32(s.type):
        raise DeeployError(
            f"{node_label(node)}: a computed scale must have f32 elements, got "
            f"{T.elem_of(s.type)} (only a constant scale of another type is converted)"
        )
    if int(np.prod(T.shape_of(s.type), dtype=np.int64)) != 1:
        raise DeeployError(
            f"{node_label(node)}: scale must have one element, got {list(T.shape_of(s.type))}"
        )
    kind = "div" if int(attrs(node).get("scale_down", 0)) else "mul"
    im.bind(node, im.emit(node, T.BinaryOp, [x, s], {"kind": StringAttr(kind)}))


@handles("ReduceSum", "ReduceMean")
def reduce_sum(im: Importer, node: pb.NodeProto) -> None:
    a = attrs(node)
    x = im.value(node, 0)
    rank = len(T.shape_of(x.type))
    if len(node.input) > 1 and node.input[1]:
        axes = im.static_ints(node, 1)
    else:
        axes = [int(v) for v in a.get("axes", [])]
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            im.env[node.output[0]] = x
            return
        axes = list(range(rank))
    if any(not -rank <= ax < rank for ax in axes):
        raise DeeployError(f"{node_label(node)}: axes {axes} out of range for rank {rank}")
    norm = sorted({ax % rank for ax in axes})
    props: Props = {
        "axes": DenseArrayBase.from_list(i64, norm),
        "keepdims": UnitAttr() if a.get("keepdims", 1) else None,
    }
    cls = T.ReduceMeanOp if node.op_type == "ReduceMean" else T.ReduceSumOp
    im.bind(node, im.emit(node, cls, [x], props))
