"""Convolution networks: Conv and com.microsoft ConvGrad, MaxPool /
AveragePool / GlobalAveragePool and their gradients as onnxruntime-training
writes them.

* ``ConvGrad`` (com.microsoft; inputs dY, X, W; outputs dX, dW, dB): an output
  whose name is empty (the first layer's dX, a bias-free convolution's dB) is
  not computed -- `training.conv2d_grad`'s ``outputs`` lists the others.
* ``MaxPool`` with its int64 ``Indices`` output, ``MaxPoolGrad(dY, Indices)``
  and ``AveragePoolGrad(dY)`` in the default domain (or com.microsoft, as
  some tools rewrite them), with the forward node's attributes. dX's shape is
  read from the graph's value_info, else from the forward pooling node.
* ``GlobalAveragePool``'s gradient is ``Shape(X)``, ``Scale(dY, H*W,
  scale_down=1)`` (com.microsoft) and ``Expand(scaled, Shape(X))``: the Expand
  of a scaled [N, C, 1, 1] tensor to [N, C, H, W] becomes
  `training.global_avgpool_grad` of the unscaled one. Any other Expand is a
  `training.binary` mul by ones of the broadcast dims.

A 1-D Conv or ConvGrad (X of rank 3, [N, C, L]) is the 2-D one of height 1:
X, W (and dY) reshaped to [N, C, 1, L], its window attributes as [1, k],
pads [0, begin, 0, end]; dX and dW reshaped back (the same elements in the
same order). Any other Expand is X times ones of the broadcast dims.

Dilations other than 1 are refused for convolutions, and ceil_mode = 1,
storage_order = 1 and dilated average pooling for pooling, each with a
one-line error naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, Props, attrs, handles, node_label


def _i64s(vals: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in vals])


def _shape(v: SSAValue) -> tuple[int, ...]:
    return T.shape_of(v.type)


def _str(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _rank4(node: pb.NodeProto, v: SSAValue, what: str) -> tuple[int, ...]:
    s = _shape(v)
    if len(s) != 4:
        raise DeeployError(
            f"{node_label(node)}: only 2-D {node.op_type} is supported: {what} must be rank 4 "
            f"(NCHW), got shape {list(s)}"
        )
    return s


# --------------------------------------------------------------------------
# Window attributes (kernel, strides, pads, dilations, auto_pad)
# --------------------------------------------------------------------------


def _pair(node: pb.NodeProto, a: dict[str, Any], key: str, default: int) -> list[int]:
    vals = [int(v) for v in a.get(key, [default, default])]
    if len(vals) != 2:
        raise DeeployError(
            f"{node_label(node)}: {key} {vals} must have 2 values (only 2-D windows are supported)"
        )
    return vals


def _window_props(
    node: pb.NodeProto,
    kernel: Sequence[int],
    in_hw: Sequence[int],
    dilations: bool,
) -> Props:
    """strides, pads (top, left, bottom, right) and, if `dilations`, the
    dilations of a node, with auto_pad resolved against the input size."""
    a = attrs(node)
    label = node_label(node)
    strides = _pair(node, a, "strides", 1)
    dil = _pair(node, a, "dilations", 1)
    if "kernel_shape" in a and [int(k) for k in a["kernel_shape"]] != list(kernel):
        raise DeeployError(
            f"{label}: kernel_shape {list(a['kernel_shape'])} differs from the weight's "
            f"{list(kernel)}"
        )
    if int(a.get("ceil_mode", 0)):
        raise DeeployError(f"{label}: ceil_mode = 1 is not supported")
    pads = [int(p) for p in a.get("pads", [0, 0, 0, 0])]
    if len(pads) != 4:
        raise DeeployError(f"{label}: pads {pads} must have 4 values (top, left, bottom, right)")
    auto = _str(a.get("auto_pad", "NOTSET"))
    if auto == "VALID":
        pads = [0, 0, 0, 0]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        for ax in (0, 1):
            out = -(-in_hw[ax] // strides[ax])
            total = max(0, (out - 1) * strides[ax] + (kernel[ax] - 1) * dil[ax] + 1 - in_hw[ax])
            small, big = total // 2, total - total // 2
            pads[ax], pads[ax + 2] = (small, big) if auto == "SAME_UPPER" else (big, small)
    elif auto != "NOTSET":
        raise DeeployError(f"{label}: auto_pad '{auto}' is not an ONNX auto_pad value")
    props: Props = {"strides": _i64s(strides), "pads": _i64s(pads)}
    if dilations:
        props["dilations"] = _i64s(dil)
    elif dil != [1, 1]:
        raise DeeployError(f"{label}: dilations {dil} are not supported (only 1)")
    return props


# --------------------------------------------------------------------------
# Convolution
# --------------------------------------------------------------------------


def _conv_props(im: Importer, node: pb.NodeProto, x: SSAValue, w: SSAValue) -> Props:
    xs = _rank4(node, x, "X")
    ws = _rank4(node, w, "W")
    group = int(attrs(node).get("group", 1))
    if group < 1 or ws[1] * group != xs[1]:
        raise DeeployError(
            f"{node_label(node)}: group {group} does not match the shapes: X has {xs[1]} "
            f"channels, W {ws[1]} per group (W is {list(ws)})"
        )
    return _window_props(node, ws[2:], xs[2:], dilations=False)


# -- 1-D convolution: a 2-D one of height 1 ------------------------------------


def _as_2d(node: pb.NodeProto) -> pb.NodeProto:
    """The node with its 1-D window attributes as 2-D ones of height 1:
    kernel_shape [k] -> [1, k], strides and dilations [s] -> [1, s], pads
    [begin, end] -> [0, begin, 0, end]."""
    a = attrs(node)
    protos = {p.name: p for p in node.attribute}  # the last of a name, as attrs() reads it
    out = pb.NodeProto()
    out.CopyFrom(node)
    del out.attribute[:]
    for key, val in a.items():
        new = out.attribute.add()
        new.CopyFrom(protos[key])
        if key in ("kernel_shape", "strides", "dilations"):
            if len(val) != 1:
                raise DeeployError(f"{node_label(node)}: {key} {list(val)} must have 1 value")
            val = [1, int(val[0])]
        elif key == "pads":
            if len(val) != 2:
                raise DeeployError(f"{node_label(node)}: pads {list(val)} must have 2 values")
            val = [0, int(val[0]), 0, int(val[1])]
        else:
            continue
        del new.ints[:]
        new.ints.extend(val)
    return out


def _is_1d(im: Importer, node: pb.NodeProto, x_index: int) -> bool:
    return len(_shape(im.value(node, x_index))) == 3


def _height1(im: Importer, node: pb.NodeProto, v: SSAValue, what: str) -> SSAValue:
    """v [a, b, L] as [a, b, 1, L] (the same elements in the same order)."""
    s = _shape(v)
    if len(s) != 3:
        raise DeeployError(
            f"{node_label(node)}: a 1-D {node.op_type} needs {what} of rank 3, got {list(s)}"
        )
    t = TensorType(T.elem_of(v.type), [s[0], s[1], 1, s[2]])
    (r,) = im.emit_typed(node, T.ReshapeOp, [v], [t])
    r.name_hint = f"{v.name_hint or 'v'}_h1"
    return r


def _drop_height(im: Importer, node: pb.NodeProto, v: SSAValue) -> SSAValue:
    """v [a, b, 1, L] as [a, b, L]."""
    s = _shape(v)
    t = TensorType(T.elem_of(v.type), [s[0], s[1], s[3]])
    (r,) = im.emit_typed(node, T.ReshapeOp, [v], [t])
    return r


@handles("Conv")
def _conv(im: Importer, node: pb.NodeProto) -> None:
    if _is_1d(im, node, 0):
        node2 = _as_2d(node)
        x = _height1(im, node, im.value(node, 0), "X")
        w = _height1(im, node, im.value(node, 1), "W")
        ins = [x, w]
        if len(node.input) > 2 and node.input[2]:
            ins.append(im.value(node, 2))
        (y,) = im.emit(node2, T.Conv2dOp, ins, _conv_props(im, node2, x, w))
        im.bind_named(node.output[:1], [_drop_height(im, node, y)])
        return
    x, w = im.value(node, 0), im.value(node, 1)
    props = _conv_props(im, node, x, w)
    ins = [x, w]
    if len(node.input) > 2 and node.input[2]:
        ins.append(im.value(node, 2))
    im.bind(node, im.emit(node, T.Conv2dOp, ins, props))


@handles(f"{MS}:ConvGrad", schema="Conv", optional_outputs=True)
def _conv_grad(im: Importer, node: pb.NodeProto) -> None:
    if _is_1d(im, node, 1):
        _conv1d_grad(im, node)
        return
    dy, x, w = (im.value(node, i) for i in range(3))
    props = _conv_props(im, node, x, w)
    names = [*node.output, "", "", ""][:3]
    if len(node.output) > 3:
        raise DeeployError(f"{node_label(node)}: ConvGrad has 3 outputs (dX, dW, dB)")
    wanted = [(g, n) for g, n in zip(T.CONV_GRADS, names, strict=True) if n]
    if not wanted:
        return  # no gradient is needed
    props["outputs"] = ArrayAttr([StringAttr(g) for g, _ in wanted])
    res = im.emit(node, T.Conv2dGradOp, [dy, x, w], props, n_results=len(wanted))
    im.bind_named([n for _, n in wanted], res)


def _conv1d_grad(im: Importer, node: pb.NodeProto) -> None:
    """ConvGrad of a 1-D Conv: dY, X and W at height 1, the 2-D gradient, dX
    and dW back to rank 3 (dB as it is)."""
    node2 = _as_2d(node)
    dy, x, w = (_height1(im, node, im.value(node, i), n) for i, n in enumerate(("dY", "X", "W")))
    props = _conv_props(im, node2, x, w)
    names = [*node.output, "", "", ""][:3]
    if len(node.output) > 3:
        raise DeeployError(f"{node_label(node)}: ConvGrad has 3 outputs (dX, dW, dB)")
    wanted = [(g, n) for g, n in zip(T.CONV_GRADS, names, strict=True) if n]
    if not wanted:
        return
    props["outputs"] = ArrayAttr([StringAttr(g) for g, _ in wanted])
    res = im.emit(node2, T.Conv2dGradOp, [dy, x, w], props, n_results=len(wanted))
    vals = [
        r if g == "dB" else _drop_height(im, node, r) for (g, _), r in zip(wanted, res, strict=True)
    ]
    im.bind_named([n for _, n in wanted], vals)


# --------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------


def _pool_props(node: pb.NodeProto, in_hw: Sequence[int], maxpool: bool) -> Props:
    a = attrs(node)
    if "kernel_shape" not in a:
        raise DeeployError(f"{node_label(node)}: the kernel_shape attribute is required")
    kernel = [int(k) for k in a["kernel_shape"]]
    if len(kernel) != 2:
        raise DeeployError(
            f"{node_label(node)}: kernel_shape {kernel} must have 2 values (only 2-D pooling "
            "is supported)"
        )
    if int(a.get("storage_order", 0)):
        raise DeeployError(f"{node_label(node)}: storage_order = 1 is not supported")
    props = _window_props(node, kernel, in_hw, dilations=maxpool)
    props["kernel_shape"] = _i64s(kernel)
    if not maxpool and int(a.get("count_include_pad", 0)):
        props["count_include_pad"] = UnitAttr()
    return props


@handles("MaxPool")
def _maxpool(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _rank4(node, x, "X")
    props = _pool_props(node, xs[2:], maxpool=True)
    n = 2 if len(node.output) > 1 and node.output[1] else 1
    im.bind(node, im.emit(node, T.MaxPool2dOp, [x], props, n_results=n))


@handles("AveragePool")
def _avgpool(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _rank4(node, x, "X")
    im.bind(node, im.emit(node, T.AvgPool2dOp, [x], _pool_props(node, xs[2:], maxpool=False)))


@handles("GlobalAveragePool")
def _global_avgpool(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    _rank4(node, x, "X")
    im.bind(node, im.emit(node, T.GlobalAvgPoolOp, [x]))


def _same_window(a: pb.NodeProto, b: pb.NodeProto) -> bool:
    keys = ("kernel_shape", "strides", "pads", "dilations", "auto_pad", "count_include_pad")
    aa, ba = attrs(a), attrs(b)
    return all(aa.get(k) == ba.get(k) for k in keys)


def _pool_grad_dx_shape(im: Importer, node: pb.NodeProto, fwd_type: str) -> tuple[int, ...]:
    """dX's shape: the graph's value_info, else the input of the forward
    pooling node (MaxPool: the one whose Indices this node reads; AveragePool:
    those with the same window whose output has dY's shape, if their inputs
    agree)."""
    out = node.output[0]
    if out in im.value_shapes:
        return im.value_shapes[out]
    dy = _shape(im.value(node, 0))
    shapes: set[tuple[int, ...]] = set()
    for n in im.train.graph.node:
        if n.op_type != fwd_type or not n.input or n.input[0] not in im.env:
            continue
        if fwd_type == "MaxPool":
            if len(n.output) > 1 and n.output[1] == node.input[1]:
                shapes.add(_shape(im.env[n.input[0]]))
        elif n.output[0] in im.env and _shape(im.env[n.output[0]]) == dy and _same_window(n, node):
            shapes.add(_shape(im.env[n.input[0]]))
    if len(shapes) != 1:
        why = "no" if not shapes else "more than one"
        raise DeeployError(
            f"{node_label(node)}: cannot tell the shape of dX: {why} forward {fwd_type} "
            "matches it and the graph gives no value_info for the output"
        )
    return shapes.pop()


@handles("MaxPoolGrad")
@handles(f"{MS}:MaxPoolGrad", schema="MaxPool")
def _maxpool_grad(im: Importer, node: pb.NodeProto) -> None:
    if len(node.input) < 2 or not node.input[1]:
        raise DeeployError(f"{node_label(node)}: MaxPoolGrad needs the Indices input")
    dy, idx = im.value(node, 0), im.value(node, 1)
    dx = _pool_grad_dx_shape(im, node, "MaxPool")
    props = _pool_props(node, dx[2:], maxpool=True)
    res = im.emit_typed(node, T.MaxPool2dGradOp, [dy, idx], [TensorType(T.f32, dx)], props)
    im.bind_named(node.output[:1], res)


@handles("AveragePoolGrad")
@handles(f"{MS}:AveragePoolGrad", schema="AveragePool")
def _avgpool_grad(im: Importer, node: pb.NodeProto) -> None:
    dy = im.value(node, 0)
    dx = _pool_grad_dx_shape(im, node, "AveragePool")
    props = _pool_props(node, dx[2:], maxpool=False)
    res = im.emit_typed(node, T.AvgPool2dGradOp, [dy], [TensorType(T.f32, dx)], props)
    im.bind_named(node.output[:1], res)


def _constant_scalar(v: SSAValue) -> float | None:
    owner = v.owner
    if not isinstance(owner, T.ConstantOp):
        return None
    vals = owner.value.get_values()
    only = vals[0] if len(vals) == 1 else None
    return float(only) if isinstance(only, int | float) else None


def _global_pool_grad_source(x: SSAValue, plane: int) -> SSAValue | None:
    """dY when `x` is dY / plane (or dY * (1 / plane)), as GlobalAveragePool's
    gradient writes it; else None."""
    op = x.owner
    if not isinstance(op, T.BinaryOp) or _shape(op.ins[0]) != _shape(x):
        return None
    s = _constant_scalar(op.ins[1])
    if op.kind.data == "div" and s == float(plane):
        return op.ins[0]
    if op.kind.data == "mul" and s is not None and np.float32(s) == np.float32(1.0 / plane):
        return op.ins[0]
    return None


def _drop_if_dead(op: Any) -> None:
    """Erase a compute op and the constants only it read, once unused."""
    if op is None or any(r.uses for r in op.results):
        return
    ins = list(op.operands)
    op.detach()
    op.erase()
    for v in ins:
        if isinstance(v.owner, T.ConstantOp) and not v.uses:
            c = v.owner
            c.detach()
            c.erase()


@handles("Expand")
def _expand(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _shape(x)
    target = tuple(im.static_ints(node, 1))
    try:
        out = tuple(int(d) for d in np.broadcast_shapes(xs, target))
    except ValueError:
        raise DeeployError(
            f"{node_label(node)}: shape {list(xs)} does not broadcast to {list(target)}"
        ) from None
    if out == xs:
        im.env[node.output[0]] = x
        return
    if len(xs) == 4 and xs[2:] == (1, 1) and out[:2] == xs[:2]:
        dy = _global_pool_grad_source(x, out[2] * out[3])
        if dy is not None:
            scaled = x.owner
            res = im.emit_typed(node, T.GlobalAvgPoolGradOp, [dy], [TensorType(T.f32, out)])
            im.bind_named(node.output[:1], res)
            _drop_scaled(im, node, scaled)
            return
    if len(out) > 4:
        raise DeeployError(
            f"{node_label(node)}: Expand of {list(xs)} to {list(out)} needs rank 4 at most"
        )
    if not T.is_f32(x.type):
        raise DeeployError(
            f"{node_label(node)}: Expand of {list(xs)} to {list(out)} needs f32 elements, got "
            f"{T.elem_of(x.type)}"
        )
    # any other broadcast (the gradient of a mean over some axes): X times
    # ones whose shape has the broadcast dims, 1 elsewhere (X * 1 is X, bit
    # for bit, and the ones are as small as the broadcast allows)
    lead = len(out) - len(xs)
    ones_shape = [d if i < lead or xs[i - lead] == 1 else 1 for i, d in enumerate(out)]
    ones = im.constant(np.ones(ones_shape, dtype=np.float32))
    res = im.emit(node, T.BinaryOp, [x, ones], {"kind": StringAttr("mul")})
    im.bind_named(node.output[:1], res)


def _drop_scaled(im: Importer, node: pb.NodeProto, scaled: Any) -> None:
    """Erase the scaling that the gradient op replaced, unless another node or
    a graph output reads its result."""
    name = node.input[0]
    g = im.train.graph
    read = any(name in n.input for n in g.node if list(n.output) != list(node.output))
    if not read and name not in {o.name for o in g.output}:
        _drop_if_dead(scaled)
        im.env.pop(name, None)
