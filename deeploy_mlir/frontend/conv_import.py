"""ONNX import of convolution networks: Conv and com.microsoft ConvGrad,
MaxPool / AveragePool / GlobalAveragePool and their gradients as
onnxruntime-training writes them, residual sums, and the shape arithmetic
around Flatten and Reshape, folded at import time (shapes are static).

What onnxruntime-training's generator writes, and how it is read here:

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
  `training.global_avgpool_grad` of the unscaled one.
* ``Flatten`` and its gradient ``Reshape(dY, Shape(X))``: ``Shape``,
  ``Constant``, ``Gather`` and ``Concat`` of static values are evaluated here
  (their results join the initializers), so every Reshape target is a
  constant; a Reshape that changes the shape is a `training.reshape` (a copy),
  one that does not is the value itself.
* ``Sum`` (residual connections add their branches' gradients with it) is a
  chain of `training.binary` adds.

Dilations other than 1 are refused for convolutions, and ceil_mode = 1,
storage_order = 1 and dilated average pooling for pooling, each with a
one-line error naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.onnx_import import (
    FOLDERS,
    MS,
    _attrs,
    _Importer,
    _node_label,
    _ssa_name,
    handles,
)

Props = dict[str, Attribute | None]


def _i64s(vals: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in vals])


def _shape(v: SSAValue) -> tuple[int, ...]:
    return T.shape_of(v.type)


def _str(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _emit_typed(
    im: _Importer,
    node: onnx.NodeProto,
    cls: type[T.TrainingComputeOp],
    ins: Sequence[SSAValue],
    out_types: Sequence[Attribute],
    props: Props | None = None,
) -> list[SSAValue]:
    """Create `cls` with declared result types (ops whose output shape is not
    a function of their inputs: pooling gradients, reshape); its verifier
    checks them."""
    assert im.builder is not None
    op = cls(ins, out_types, properties=props)
    try:
        op.verify()
    except VerifyException as e:
        op.erase(safe_erase=False)
        raise DeeployError(f"{_node_label(node)}: {e}") from None
    im.builder.insert(op)
    return list(op.res)


def _bind_named(im: _Importer, names: Sequence[str], vals: Sequence[SSAValue]) -> None:
    """Bind ONNX output names to values (also when some outputs are unnamed)."""
    for name, v in zip(names, vals, strict=True):
        v.name_hint = _ssa_name(name)
        im.env[name] = v


def _rank4(node: onnx.NodeProto, v: SSAValue, what: str) -> tuple[int, ...]:
    s = _shape(v)
    if len(s) != 4:
        raise DeeployError(
            f"{_node_label(node)}: only 2-D {node.op_type} is supported: {what} must be rank 4 "
            f"(NCHW), got shape {list(s)}"
        )
    return s


# --------------------------------------------------------------------------
# Window attributes (kernel, strides, pads, dilations, auto_pad)
# --------------------------------------------------------------------------


def _pair(node: onnx.NodeProto, a: dict[str, Any], key: str, default: int) -> list[int]:
    vals = [int(v) for v in a.get(key, [default, default])]
    if len(vals) != 2:
        raise DeeployError(
            f"{_node_label(node)}: {key} {vals} must have 2 values (only 2-D windows are supported)"
        )
    return vals


def _window_props(
    node: onnx.NodeProto,
    kernel: Sequence[int],
    in_hw: Sequence[int],
    dilations: bool,
) -> Props:
    """strides, pads (top, left, bottom, right) and, if `dilations`, the
    dilations of a node, with auto_pad resolved against the input size."""
    a = _attrs(node)
    label = _node_label(node)
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


def _conv_props(im: _Importer, node: onnx.NodeProto, x: SSAValue, w: SSAValue) -> Props:
    xs = _rank4(node, x, "X")
    ws = _rank4(node, w, "W")
    group = int(_attrs(node).get("group", 1))
    if group < 1 or ws[1] * group != xs[1]:
        raise DeeployError(
            f"{_node_label(node)}: group {group} does not match the shapes: X has {xs[1]} "
            f"channels, W {ws[1]} per group (W is {list(ws)})"
        )
    return _window_props(node, ws[2:], xs[2:], dilations=False)


@handles("Conv")
def _conv(im: _Importer, node: onnx.NodeProto) -> None:
    x, w = im.value(node, 0), im.value(node, 1)
    props = _conv_props(im, node, x, w)
    ins = [x, w]
    if len(node.input) > 2 and node.input[2]:
        ins.append(im.value(node, 2))
    im.bind(node, im.emit(node, T.Conv2dOp, ins, props))


@handles(f"{MS}:ConvGrad")
def _conv_grad(im: _Importer, node: onnx.NodeProto) -> None:
    dy, x, w = (im.value(node, i) for i in range(3))
    props = _conv_props(im, node, x, w)
    names = [*node.output, "", "", ""][:3]
    if len(node.output) > 3:
        raise DeeployError(f"{_node_label(node)}: ConvGrad has 3 outputs (dX, dW, dB)")
    wanted = [(g, n) for g, n in zip(T.CONV_GRADS, names, strict=True) if n]
    if not wanted:
        return  # no gradient is needed
    props["outputs"] = ArrayAttr([StringAttr(g) for g, _ in wanted])
    res = im.emit(node, T.Conv2dGradOp, [dy, x, w], props, n_results=len(wanted))
    _bind_named(im, [n for _, n in wanted], res)


# --------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------


def _pool_props(node: onnx.NodeProto, in_hw: Sequence[int], maxpool: bool) -> Props:
    a = _attrs(node)
    if "kernel_shape" not in a:
        raise DeeployError(f"{_node_label(node)}: the kernel_shape attribute is required")
    kernel = [int(k) for k in a["kernel_shape"]]
    if len(kernel) != 2:
        raise DeeployError(
            f"{_node_label(node)}: kernel_shape {kernel} must have 2 values (only 2-D pooling "
            "is supported)"
        )
    if int(a.get("storage_order", 0)):
        raise DeeployError(f"{_node_label(node)}: storage_order = 1 is not supported")
    props = _window_props(node, kernel, in_hw, dilations=maxpool)
    props["kernel_shape"] = _i64s(kernel)
    if not maxpool and int(a.get("count_include_pad", 0)):
        props["count_include_pad"] = UnitAttr()
    return props


@handles("MaxPool")
def _maxpool(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _rank4(node, x, "X")
    props = _pool_props(node, xs[2:], maxpool=True)
    n = 2 if len(node.output) > 1 and node.output[1] else 1
    im.bind(node, im.emit(node, T.MaxPool2dOp, [x], props, n_results=n))


@handles("AveragePool")
def _avgpool(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _rank4(node, x, "X")
    im.bind(node, im.emit(node, T.AvgPool2dOp, [x], _pool_props(node, xs[2:], maxpool=False)))


@handles("GlobalAveragePool")
def _global_avgpool(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    _rank4(node, x, "X")
    im.bind(node, im.emit(node, T.GlobalAvgPoolOp, [x]))


def _same_window(a: onnx.NodeProto, b: onnx.NodeProto) -> bool:
    keys = ("kernel_shape", "strides", "pads", "dilations", "auto_pad", "count_include_pad")
    aa, ba = _attrs(a), _attrs(b)
    return all(aa.get(k) == ba.get(k) for k in keys)


def _pool_grad_dx_shape(im: _Importer, node: onnx.NodeProto, fwd_type: str) -> tuple[int, ...]:
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
            f"{_node_label(node)}: cannot tell the shape of dX: {why} forward {fwd_type} "
            "matches it and the graph gives no value_info for the output"
        )
    return shapes.pop()


@handles("MaxPoolGrad", f"{MS}:MaxPoolGrad")
def _maxpool_grad(im: _Importer, node: onnx.NodeProto) -> None:
    if len(node.input) < 2 or not node.input[1]:
        raise DeeployError(f"{_node_label(node)}: MaxPoolGrad needs the Indices input")
    dy, idx = im.value(node, 0), im.value(node, 1)
    dx = _pool_grad_dx_shape(im, node, "MaxPool")
    props = _pool_props(node, dx[2:], maxpool=True)
    res = _emit_typed(im, node, T.MaxPool2dGradOp, [dy, idx], [TensorType(T.f32, dx)], props)
    _bind_named(im, node.output[:1], res)


@handles("AveragePoolGrad", f"{MS}:AveragePoolGrad")
def _avgpool_grad(im: _Importer, node: onnx.NodeProto) -> None:
    dy = im.value(node, 0)
    dx = _pool_grad_dx_shape(im, node, "AveragePool")
    props = _pool_props(node, dx[2:], maxpool=False)
    res = _emit_typed(im, node, T.AvgPool2dGradOp, [dy], [TensorType(T.f32, dx)], props)
    _bind_named(im, node.output[:1], res)


@handles(f"{MS}:Scale")
def _scale(im: _Importer, node: onnx.NodeProto) -> None:
    """Y = X * scale, or X / scale with scale_down (scale: one element)."""
    x, s = im.value(node, 0), im.value(node, 1)
    if int(np.prod(_shape(s), dtype=np.int64)) != 1:
        raise DeeployError(
            f"{_node_label(node)}: scale must have one element, got {list(_shape(s))}"
        )
    kind = "div" if int(_attrs(node).get("scale_down", 0)) else "mul"
    im.bind(node, im.emit(node, T.BinaryOp, [x, s], {"kind": StringAttr(kind)}))


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
def _expand(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _shape(x)
    target = tuple(im.static_ints(node, 1))
    try:
        out = tuple(int(d) for d in np.broadcast_shapes(xs, target))
    except ValueError:
        raise DeeployError(
            f"{_node_label(node)}: shape {list(xs)} does not broadcast to {list(target)}"
        ) from None
    if out == xs:
        im.env[node.output[0]] = x
        return
    if len(xs) == 4 and xs[2:] == (1, 1) and out[:2] == xs[:2]:
        dy = _global_pool_grad_source(x, out[2] * out[3])
        if dy is not None:
            scaled = x.owner
            res = _emit_typed(im, node, T.GlobalAvgPoolGradOp, [dy], [TensorType(T.f32, out)])
            _bind_named(im, node.output[:1], res)
            _drop_scaled(im, node, scaled)
            return
    raise DeeployError(
        f"{_node_label(node)}: Expand of {list(xs)} to {list(out)} is supported only as "
        "GlobalAveragePool's gradient (a [N, C, 1, 1] gradient divided by H * W, expanded to "
        "[N, C, H, W])"
    )


def _drop_scaled(im: _Importer, node: onnx.NodeProto, scaled: Any) -> None:
    """Erase the scaling that the gradient op replaced, unless another node or
    a graph output reads its result."""
    name = node.input[0]
    g = im.train.graph
    read = any(name in n.input for n in g.node if list(n.output) != list(node.output))
    if not read and name not in {o.name for o in g.output}:
        _drop_if_dead(scaled)
        im.env.pop(name, None)


# --------------------------------------------------------------------------
# Residual sums
# --------------------------------------------------------------------------


@handles("Sum")
def _sum(im: _Importer, node: onnx.NodeProto) -> None:
    if not node.input:
        raise DeeployError(f"{_node_label(node)}: Sum needs at least one input")
    acc = im.value(node, 0)
    for i in range(1, len(node.input)):
        (acc,) = im.emit(node, T.BinaryOp, [acc, im.value(node, i)], {"kind": StringAttr("add")})
    if len(node.input) > 1:
        acc.name_hint = _ssa_name(node.output[0])
    im.env[node.output[0]] = acc


# --------------------------------------------------------------------------
# Static shapes: Shape, Constant, Gather, Concat folded; Flatten, Reshape
# --------------------------------------------------------------------------


def _static(im: _Importer, name: str) -> np.ndarray | None:
    return im.inits.get(name) if name else None


def _value_shape(im: _Importer, node: onnx.NodeProto, i: int) -> tuple[int, ...]:
    name = im.input_name(node, i)
    if name in im.env:
        return _shape(im.env[name])
    if name in im.inits:
        return tuple(np.asarray(im.inits[name]).shape)
    raise DeeployError(f"{_node_label(node)}: input '{name}' is not defined before use")


@handles("Shape")
def _shape_op(im: _Importer, node: onnx.NodeProto) -> None:
    a = _attrs(node)
    shape = _value_shape(im, node, 0)
    start, end = int(a.get("start", 0)), a.get("end")
    im.inits[node.output[0]] = np.array(
        shape[start : None if end is None else int(end)], dtype=np.int64
    )


@handles("Size")
def _size(im: _Importer, node: onnx.NodeProto) -> None:
    n = int(np.prod(_value_shape(im, node, 0), dtype=np.int64))
    im.inits[node.output[0]] = np.array(n, dtype=np.int64)


@handles("Constant")
def _constant(im: _Importer, node: onnx.NodeProto) -> None:
    if len(node.attribute) != 1:
        raise DeeployError(f"{_node_label(node)}: a Constant needs exactly one value attribute")
    attr = node.attribute[0]
    v = onnx.helper.get_attribute_value(attr)
    if attr.name == "value":
        arr = numpy_helper.to_array(v)
    elif attr.name in ("value_float", "value_floats"):
        arr = np.array(v, dtype=np.float32)
    elif attr.name in ("value_int", "value_ints"):
        arr = np.array(v, dtype=np.int64)
    else:
        raise DeeployError(f"{_node_label(node)}: Constant '{attr.name}' is not supported")
    im.inits[node.output[0]] = np.array(arr)


def _all_static(im: _Importer, node: onnx.NodeProto) -> list[np.ndarray]:
    vals = [_static(im, n) for n in node.input]
    missing = [n for n, v in zip(node.input, vals, strict=True) if v is None]
    if missing:
        raise DeeployError(
            f"{_node_label(node)}: only {node.op_type} of constants (shapes, initializers) is "
            f"supported; '{missing[0]}' is computed at run time"
        )
    return [np.asarray(v) for v in vals if v is not None]


@handles("Gather")
def _gather(im: _Importer, node: onnx.NodeProto) -> None:
    data, idx = _all_static(im, node)
    axis = int(_attrs(node).get("axis", 0))
    try:
        im.inits[node.output[0]] = np.take(data, idx, axis=axis)
    except (IndexError, np.AxisError) as e:
        raise DeeployError(f"{_node_label(node)}: {e}") from None


@handles("Concat")
def _concat(im: _Importer, node: onnx.NodeProto) -> None:
    vals = _all_static(im, node)
    axis = int(_attrs(node).get("axis", 0))
    try:
        im.inits[node.output[0]] = np.concatenate(vals, axis=axis)
    except (ValueError, np.AxisError) as e:
        raise DeeployError(f"{_node_label(node)}: {e}") from None


def _reshape_to(im: _Importer, node: onnx.NodeProto, x: SSAValue, shape: Sequence[int]) -> None:
    """Bind the node's output to x under `shape` (resolved, non-negative)."""
    out = node.output[0]
    if tuple(shape) == _shape(x):
        im.env[out] = x
        return
    t = TensorType(T.elem_of(x.type), list(shape))
    res = _emit_typed(im, node, T.ReshapeOp, [x], [t])
    _bind_named(im, [out], res)


@handles("Flatten")
def _flatten(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _shape(x)
    axis = int(_attrs(node).get("axis", 1))
    if not -len(xs) <= axis <= len(xs):
        raise DeeployError(f"{_node_label(node)}: axis {axis} out of range for rank {len(xs)}")
    if axis < 0:
        axis += len(xs)
    lead = int(np.prod(xs[:axis], dtype=np.int64))
    _reshape_to(im, node, x, [lead, int(np.prod(xs[axis:], dtype=np.int64))])


def resolve_reshape(xs: Sequence[int], spec: Sequence[int], allowzero: bool) -> list[int]:
    """ONNX Reshape's target shape: 0 copies the input's dim (unless
    allowzero), one -1 is inferred; raises ValueError with the reason."""
    out = [xs[i] if d == 0 and not allowzero and i < len(xs) else d for i, d in enumerate(spec)]
    if any(d < -1 for d in out) or out.count(-1) > 1:
        raise ValueError(f"shape {list(spec)} has a dim below -1 or more than one -1")
    total = int(np.prod(xs, dtype=np.int64))
    known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
    if -1 in out:
        if known == 0 or total % known:
            raise ValueError(f"{list(xs)} cannot be reshaped to {list(spec)}")
        out[out.index(-1)] = total // known
    if int(np.prod(out, dtype=np.int64)) != total:
        raise ValueError(f"{list(xs)} ({total} elements) cannot be reshaped to {list(spec)}")
    return out


@handles("Reshape")
def _reshape(im: _Importer, node: onnx.NodeProto) -> None:
    x = im.value(node, 0)
    spec = im.static_ints(node, 1)
    try:
        shape = resolve_reshape(_shape(x), spec, bool(_attrs(node).get("allowzero", 0)))
    except ValueError as e:
        raise DeeployError(f"{_node_label(node)}: {e}") from None
    _reshape_to(im, node, x, shape)


# -- constant folding ---------------------------------------------------------


def _fold_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":  # ONNX integer division truncates
        return np.trunc(a / b).astype(a.dtype)
    return (a / b).astype(a.dtype)


def _fold_axes(vals: list[np.ndarray | None], a: dict[str, Any], rank: int) -> list[int]:
    raw = vals[1] if len(vals) > 1 and vals[1] is not None else a.get("axes", [])
    return sorted(int(x) % rank for x in np.asarray(raw).reshape(-1))


def _fold_unsqueeze(vals: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    x = vals[0]
    assert x is not None
    raw = vals[1] if len(vals) > 1 and vals[1] is not None else a.get("axes", [])
    axes = _fold_axes(vals, a, x.ndim + np.asarray(raw).size)
    for ax in axes:
        x = np.expand_dims(x, ax)
    return x


def _fold_squeeze(vals: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    x = vals[0]
    assert x is not None
    has_axes = (len(vals) > 1 and vals[1] is not None) or "axes" in a
    return np.squeeze(x, axis=tuple(_fold_axes(vals, a, x.ndim))) if has_axes else np.squeeze(x)


def _fold_scale(vals: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    x, s = vals[0], vals[1]
    assert x is not None and s is not None
    scale = s.astype(x.dtype).reshape(())
    return (x / scale if int(a.get("scale_down", 0)) else x * scale).astype(x.dtype)


def _fold_reshape(vals: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    x, shape = vals[0], vals[1]
    assert x is not None and shape is not None
    spec = [int(d) for d in shape.reshape(-1)]
    return x.reshape(resolve_reshape(x.shape, spec, bool(a.get("allowzero", 0))))


def _fold_expand(vals: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    x, shape = vals[0], vals[1]
    assert x is not None and shape is not None
    return np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(d) for d in shape))).copy()


def _fold_cast(vals: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
    x = vals[0]
    assert x is not None
    return x.astype(onnx.helper.tensor_dtype_to_np_dtype(int(a["to"])))


def _binary_fold(
    fn: Any,
) -> Any:
    def fold(vals: list[np.ndarray | None], a: dict[str, Any]) -> np.ndarray:
        x, y = vals[0], vals[1]
        assert x is not None and y is not None
        return np.asarray(fn(x, y)).astype(x.dtype)

    return fold


#: node kinds evaluated at import time when every input is a constant
_FOLDS: dict[str, Any] = {
    "Add": _binary_fold(np.add),
    "Sub": _binary_fold(np.subtract),
    "Mul": _binary_fold(np.multiply),
    "Div": lambda v, a: _fold_div(v[0], v[1]),
    "Pow": _binary_fold(np.power),
    "Neg": lambda v, a: -v[0],
    "Identity": lambda v, a: v[0],
    "Cast": _fold_cast,
    "Unsqueeze": _fold_unsqueeze,
    "Squeeze": _fold_squeeze,
    "Reshape": _fold_reshape,
    "Expand": _fold_expand,
    f"{MS}:Scale": _fold_scale,
}


def fold_constants(im: _Importer, node: onnx.NodeProto) -> bool:
    """Evaluate a node whose inputs are all constants (initializers or folded
    values): its outputs join the constants, and no op is emitted. Shape
    arithmetic (Shape, Size, Gather, Concat, Unsqueeze, Div, ...) and the
    constant parts of a loss gradient (Scale of a constant by a Size,
    Expand of a constant) end here."""
    dom = "" if node.domain in ("", "ai.onnx") else node.domain
    key = f"{dom}:{node.op_type}" if dom else node.op_type
    fold = _FOLDS.get(key)
    if fold is None or len(node.output) != 1 or not node.input:
        return False
    if not node.input[0] or any(n and n not in im.inits for n in node.input):
        return False
    vals = [np.asarray(im.inits[n]) if n else None for n in node.input]
    try:
        out = fold(vals, _attrs(node))
    except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError) as e:
        raise DeeployError(f"{_node_label(node)}: {e}") from None
    im.inits[node.output[0]] = np.asarray(out)
    return True


FOLDERS.append(fold_constants)
