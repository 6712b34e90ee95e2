"""Compare, logical, Where, Cast, Clip and OneHot (with ONNX broadcasting):
the ops of ReLU6 / Hardtanh (Clip) and their exported gradient
(GreaterOrEqual, LessOrEqual, And, Cast, Mul), and of losses written with
torch.where and F.one_hot.

OneHot has no op of its own: it is built from the family's ops (the indices
cast to f32, compared with the constant 0..depth-1 and with -depth..-1, or'ed,
then the on / off values chosen), exact for indices below 2^24 in size.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import FloatAttr, StringAttr, TensorType, f32, i1, i64
from xdsl.ir import Attribute, SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import Importer, attrs, handles, node_label

_COMPARE = {
    "Greater": "greater",
    "GreaterOrEqual": "greater_equal",
    "Less": "less",
    "LessOrEqual": "less_equal",
    "Equal": "equal",
}
_CAST_TO: dict[int, Attribute] = {
    pb.TensorProto.FLOAT: f32,
    pb.TensorProto.BOOL: i1,
    pb.TensorProto.INT64: i64,
}
_F32 = np.finfo(np.float32)
#: indices above this in size are not exact as f32 (OneHot compares them as f32)
_EXACT = 1 << 24


def _elem(v: SSAValue) -> str:
    return T.elem_name(T.elem_of(v.type))


def _require(node: pb.NodeProto, v: SSAValue, i: int, want: str, what: str) -> None:
    if _elem(v) != want:
        raise DeeployError(
            f"{node_label(node)}: input #{i} has {_elem(v)} elements; {node.op_type} is "
            f"supported {what}"
        )


@handles(*_COMPARE)
def compare(im: Importer, node: pb.NodeProto) -> None:
    a, b = im.value(node, 0), im.value(node, 1)
    for i, v in enumerate((a, b)):
        _require(node, v, i, "f32", "on float tensors")
    kind = StringAttr(_COMPARE[node.op_type])
    im.bind(node, im.emit(node, T.CompareOp, [a, b], {"kind": kind}))


@handles("And", "Or", "Xor")
def logical(im: Importer, node: pb.NodeProto) -> None:
    a, b = im.value(node, 0), im.value(node, 1)
    kind = StringAttr(node.op_type.lower())
    im.bind(node, im.emit(node, T.LogicalOp, [a, b], {"kind": kind}))


@handles("Not")
def not_(im: Importer, node: pb.NodeProto) -> None:
    im.bind(node, im.emit(node, T.NotOp, [im.value(node, 0)]))


@handles("Where")
def where(im: Importer, node: pb.NodeProto) -> None:
    c, a, b = (im.value(node, i) for i in range(3))
    for i, v in ((1, a), (2, b)):
        _require(node, v, i, "f32", "with float values")
    im.bind(node, im.emit(node, T.WhereOp, [c, a, b]))


def cast_to(im: Importer, node: pb.NodeProto, x: SSAValue, to: Attribute) -> SSAValue:
    """x as element type `to`: itself, one training.cast, or two through f32
    (bool <-> i64: exact both ways)."""
    src, dst = _elem(x), T.elem_name(to)
    if src == dst:
        return x
    if (src, dst) not in T.CAST_PAIRS:
        (x,) = im.emit(node, T.CastOp, [x], {"to": f32})
    (y,) = im.emit(node, T.CastOp, [x], {"to": to})
    return y


@handles("Cast")
def cast(im: Importer, node: pb.NodeProto) -> None:
    to = int(attrs(node).get("to", 0))
    if to not in _CAST_TO:
        known = to in pb.TensorProto.DataType.values()
        name = pb.TensorProto.DataType.Name(to) if known else to
        raise DeeployError(
            f"{node_label(node)}: Cast to {name} is not supported (FLOAT, BOOL and INT64 are)"
        )
    y = cast_to(im, node, im.value(node, 0), _CAST_TO[to])
    im.bind(node, [y])


def _bound(im: Importer, node: pb.NodeProto, i: int, name: str, default: float) -> float:
    """Clip's min (i = 1) or max (i = 2): a constant input, an attribute (old
    opsets) or ONNX's default, float32's lowest / largest value."""
    a = attrs(node)
    if i < len(node.input) and node.input[i]:
        if node.input[i] not in im.inits:
            raise DeeployError(
                f"{node_label(node)}: {name} '{node.input[i]}' must be a constant (an initializer)"
            )
        arr = np.asarray(im.inits[node.input[i]])
        if arr.size != 1:
            raise DeeployError(f"{node_label(node)}: {name} must be a scalar, got {arr.shape}")
        v = float(arr.reshape(-1)[0])
    elif name in a:
        v = float(a[name])
    else:
        return default
    if not abs(v) <= float(_F32.max):
        raise DeeployError(f"{node_label(node)}: {name} {v} is not a finite float32")
    return v


@handles("Clip")
def clip(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    _require(node, x, 0, "f32", "on float tensors")
    lo = _bound(im, node, 1, "min", float(_F32.min))
    hi = _bound(im, node, 2, "max", float(_F32.max))
    # ONNX: min > max sets every element to max (x < hi ? hi : hi)
    lo = min(lo, hi)
    props: dict[str, Attribute | None] = {"lo": FloatAttr(lo, f32), "hi": FloatAttr(hi, f32)}
    im.bind(node, im.emit(node, T.ClipOp, [x], props))


@handles("OneHot")
def one_hot(im: Importer, node: pb.NodeProto) -> None:
    idx = im.value(node, 0)
    if _elem(idx) not in ("i64", "f32"):
        raise DeeployError(f"{node_label(node)}: indices must be int64 or float, got {_elem(idx)}")
    depth_v = im.static_ints(node, 1) if _is_int_const(im, node, 1) else _float_ints(im, node)
    if len(depth_v) != 1 or not 0 < depth_v[0] < _EXACT:
        raise DeeployError(
            f"{node_label(node)}: depth must be one integer in 1..2^24, got {depth_v}"
        )
    depth = depth_v[0]
    values = _constant(im, node, 2, "values")
    if values.size != 2 or values.dtype.type not in (np.float32, np.float64, np.int64):
        raise DeeployError(
            f"{node_label(node)}: values must be [off, on], two floats or int64, got "
            f"{values.dtype} {list(values.shape)}"
        )
    shape = T.shape_of(idx.type)
    rank = len(shape) + 1
    axis = int(attrs(node).get("axis", -1))
    if not -rank <= axis < rank:
        raise DeeployError(f"{node_label(node)}: axis {axis} out of range for rank {rank}")
    axis %= rank
    # indices [..a.., 1, ..b..] against 0..depth-1 shaped [depth, 1 x len(b)]
    xf = cast_to(im, node, idx, f32)
    expanded = TensorType(f32, [*shape[:axis], 1, *shape[axis:]])
    (xr,) = im.emit_typed(node, T.ReshapeOp, [xf], [expanded])
    tail = [1] * (len(shape) - axis)
    pos = im.constant(np.arange(depth, dtype=np.float32).reshape([depth, *tail]))
    neg = im.constant(np.arange(-depth, 0, dtype=np.float32).reshape([depth, *tail]))
    (m_pos,) = im.emit(node, T.CompareOp, [xr, pos], {"kind": StringAttr("equal")})
    (m_neg,) = im.emit(node, T.CompareOp, [xr, neg], {"kind": StringAttr("equal")})
    (mask,) = im.emit(node, T.LogicalOp, [m_pos, m_neg], {"kind": StringAttr("or")})
    off, on = (float(v) for v in values.reshape(-1))
    if (off, on) == (0.0, 1.0):
        (y,) = im.emit(node, T.CastOp, [mask], {"to": f32})
    else:
        for v in (off, on):
            if not abs(v) <= float(_F32.max) or (values.dtype == np.int64 and abs(v) >= _EXACT):
                raise DeeployError(f"{node_label(node)}: value {v} is not exact as a float32")
        on_c = im.constant(np.array(on, dtype=np.float32))
        off_c = im.constant(np.array(off, dtype=np.float32))
        (y,) = im.emit(node, T.WhereOp, [mask, on_c, off_c])
    if values.dtype == np.int64:
        y = cast_to(im, node, y, i64)
    im.bind(node, [y])


def _constant(im: Importer, node: pb.NodeProto, i: int, what: str) -> np.ndarray:
    name = im.input_name(node, i)
    if name not in im.inits:
        raise DeeployError(
            f"{node_label(node)}: {what} '{name}' must be a constant (an initializer)"
        )
    return np.asarray(im.inits[name])


def _is_int_const(im: Importer, node: pb.NodeProto, i: int) -> bool:
    return _constant(im, node, i, "depth").dtype.kind in "iu"


def _float_ints(im: Importer, node: pb.NodeProto) -> list[int]:
    """A float depth (ONNX allows any numeric type): its integer value."""
    d = _constant(im, node, 1, "depth").reshape(-1)
    if d.size != 1 or not np.isfinite(d[0]) or d[0] != np.floor(d[0]):
        raise DeeployError(f"{node_label(node)}: depth must be one integer, got {d.tolist()}")
    return [int(d[0])]
