"""Static shapes and layout: Shape, Size, Constant (and Gather and Concat of
static values, ops/gather_split.py) are evaluated at import (their results
join the initializers), so every Reshape target is a constant; Flatten, Reshape,
Transpose, Squeeze and Unsqueeze; and `fold_constants`, which evaluates a
node whose inputs are all constants (shape arithmetic, the constant parts of
a loss gradient) instead of emitting an op.

* ``Flatten`` and its gradient ``Reshape(dY, Shape(X))``: a Reshape that
  changes the shape is a `training.reshape` (a copy), one that does not is the
  value itself.
* ``Transpose`` that only moves size-1 dims is a reshape (the elements keep
  their order), else `training.transpose`.
* ``Squeeze`` / ``Unsqueeze`` take their axes from input #1 (opset 13) or the
  attribute (Deeploy's exporter also writes a single int).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import FOLDERS, MS, Importer, Props, attrs, handles, node_label


def _shape(v: SSAValue) -> tuple[int, ...]:
    return T.shape_of(v.type)


def _value_shape(im: Importer, node: pb.NodeProto, i: int) -> tuple[int, ...]:
    name = im.input_name(node, i)
    if name in im.env:
        return _shape(im.env[name])
    if name in im.inits:
        return tuple(np.asarray(im.inits[name]).shape)
    raise DeeployError(f"{node_label(node)}: input '{name}' is not defined before use")


@handles("Shape")
def _shape_op(im: Importer, node: pb.NodeProto) -> None:
    a = attrs(node)
    shape = _value_shape(im, node, 0)
    start, end = int(a.get("start", 0)), a.get("end")
    im.inits[node.output[0]] = np.array(
        shape[start : None if end is None else int(end)], dtype=np.int64
    )


@handles("Size")
def _size(im: Importer, node: pb.NodeProto) -> None:
    n = int(np.prod(_value_shape(im, node, 0), dtype=np.int64))
    im.inits[node.output[0]] = np.array(n, dtype=np.int64)


@handles("Constant")
def _constant(im: Importer, node: pb.NodeProto) -> None:
    if len(node.attribute) != 1:
        raise DeeployError(f"{node_label(node)}: a Constant needs exactly one value attribute")
    attr = node.attribute[0]
    v = pb.attribute_value(attr)
    if attr.name == "value":
        arr = pb.to_array(v)
    elif attr.name in ("value_float", "value_floats"):
        arr = np.array(v, dtype=np.float32)
    elif attr.name in ("value_int", "value_ints"):
        arr = np.array(v, dtype=np.int64)
    else:
        raise DeeployError(f"{node_label(node)}: Constant '{attr.name}' is not supported")
    im.inits[node.output[0]] = np.array(arr)


@handles("Flatten")
def _flatten(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    xs = _shape(x)
    axis = int(attrs(node).get("axis", 1))
    if not -len(xs) <= axis <= len(xs):
        raise DeeployError(f"{node_label(node)}: axis {axis} out of range for rank {len(xs)}")
    if axis < 0:
        axis += len(xs)
    lead = int(np.prod(xs[:axis], dtype=np.int64))
    im.reshape_to(node, x, [lead, int(np.prod(xs[axis:], dtype=np.int64))])


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
def _reshape(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    spec = im.static_ints(node, 1)
    try:
        shape = resolve_reshape(_shape(x), spec, bool(attrs(node).get("allowzero", 0)))
    except ValueError as e:
        raise DeeployError(f"{node_label(node)}: {e}") from None
    im.reshape_to(node, x, shape)


# --------------------------------------------------------------------------
# Layout: Transpose, Squeeze, Unsqueeze
# --------------------------------------------------------------------------


@handles("Transpose")
def _transpose(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    rank = len(T.shape_of(x.type))
    perm = [int(p) for p in attrs(node).get("perm", list(reversed(range(rank))))]
    if sorted(perm) != list(range(rank)):
        raise DeeployError(
            f"{node_label(node)}: perm {perm} is not a permutation of the {rank} dims"
        )
    shape = T.shape_of(x.type)
    moved = [p for p in perm if shape[p] != 1]
    if moved == sorted(moved):
        # only size-1 dims move: the elements keep their order (a reshape, or
        # the value itself)
        im.reshape_to(node, x, [shape[p] for p in perm])
        return
    props: Props = {"perm": DenseArrayBase.from_list(i64, perm)}
    im.bind(node, im.emit(node, T.TransposeOp, [x], props))


def _axes(im: Importer, node: pb.NodeProto, rank: int) -> list[int] | None:
    """The axes of Squeeze/Unsqueeze: input #1 (opset 13) or the attribute;
    None when neither is given. `rank`: the rank the axes index."""
    if len(node.input) > 1 and node.input[1]:
        axes = im.static_ints(node, 1)
    elif "axes" in attrs(node):
        axes = _int_list(attrs(node)["axes"])
    else:
        return None
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise DeeployError(
            f"{node_label(node)}: axes {axes} must be distinct and in [{-rank}, {rank})"
        )
    return sorted(a % rank for a in axes)


@handles("Squeeze")
def _squeeze(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    shape = T.shape_of(x.type)
    axes = _axes(im, node, len(shape))
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    wide = [a for a in axes if shape[a] != 1]
    if wide:
        raise DeeployError(
            f"{node_label(node)}: cannot squeeze axis {wide[0]} of size {shape[wide[0]]} "
            f"(input shape {list(shape)})"
        )
    im.reshape_to(node, x, [d for i, d in enumerate(shape) if i not in axes])


@handles("Unsqueeze")
def _unsqueeze(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    shape = list(T.shape_of(x.type))
    axes = _axes(im, node, len(shape) + len(_unsqueeze_count(im, node)))
    if axes is None:
        raise DeeployError(f"{node_label(node)}: Unsqueeze needs axes")
    out: list[int] = []
    it = iter(shape)
    for i in range(len(shape) + len(axes)):
        out.append(1 if i in axes else next(it))
    im.reshape_to(node, x, out)


def _unsqueeze_count(im: Importer, node: pb.NodeProto) -> list[int]:
    """The raw axes of an Unsqueeze (for the output rank), unchecked."""
    if len(node.input) > 1 and node.input[1]:
        return im.static_ints(node, 1)
    return _int_list(attrs(node).get("axes", []))


def _int_list(v: object) -> list[int]:
    """An ints attribute (Deeploy's exporter also writes a single int)."""
    return [int(v)] if isinstance(v, int) else [int(a) for a in v]  # type: ignore[attr-defined]


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
    return x.astype(pb.np_dtype(int(a["to"])))


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


def fold_constants(im: Importer, node: pb.NodeProto) -> bool:
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
        out = fold(vals, attrs(node))
    except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError) as e:
        raise DeeployError(f"{node_label(node)}: {e}") from None
    im.inits[node.output[0]] = np.asarray(out)
    return True


FOLDERS.append(fold_constants)
