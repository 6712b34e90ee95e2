"""Split, Concat, Gather and their training forms: ONNX Split (sizes from
the ``split`` input, opset 13 on, or attribute, before; else equal parts,
``num_outputs`` from opset 18) and com.microsoft SplitTraining; Concat and
com.microsoft ConcatTraining; Gather and com.microsoft GatherGrad.

* Gather and Concat of constants only (shape arithmetic: Shape, Gather,
  Concat before a Reshape) are evaluated at import; their results join the
  initializers. Otherwise they are `training.gather` / `training.concat`.
* ``ConcatTraining``'s second output, the per-input lengths along the axis,
  is a constant (shapes are static): it joins the initializers, where the
  gradient's ``SplitTraining`` reads its sizes.
* ``GatherGrad`` (shape, indices, dY): the shape is a constant (the
  forward's ``Shape`` of the gathered data); `training.gather_grad` is the
  scatter-add into a zeroed gradient of that shape.
* Indices that are constants are checked at import (in [-n, n)); indices
  computed at run time (token ids) must be in range, as in onnxruntime.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, f32, i64

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, Props, attrs, handles, node_label


def _is_static(im: Importer, name: str) -> bool:
    """A constant: an initializer or a value evaluated at import, and not an
    argument of the function (a Deeploy-style parameter is both)."""
    return bool(name) and name in im.inits and name not in im.arg_index


def _axis(node: pb.NodeProto, rank: int, default: int = 0) -> int:
    axis = int(attrs(node).get("axis", default))
    if not -rank <= axis < rank:
        raise DeeployError(f"{node_label(node)}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def _axis_prop(axis: int) -> Props:
    return {"axis": IntegerAttr(axis, i64)}


# --------------------------------------------------------------------------
# Split
# --------------------------------------------------------------------------


def _split_sizes(im: Importer, node: pb.NodeProto, dim: int) -> list[int]:
    """The sizes of a Split's parts: the `split` input, else the attribute,
    else `num_outputs` (or the number of outputs) parts of ceil(dim / n),
    the last one smaller."""
    a = attrs(node)
    if len(node.input) > 1 and node.input[1]:
        if not _is_static(im, node.input[1]):
            raise DeeployError(
                f"{node_label(node)}: the split sizes '{node.input[1]}' must be a constant"
            )
        sizes = im.static_ints(node, 1)
    elif "split" in a:
        sizes = [int(s) for s in a["split"]]
    else:
        n = int(a.get("num_outputs", len(node.output)))
        if n < 1:
            raise DeeployError(f"{node_label(node)}: num_outputs must be positive, got {n}")
        step = -(-dim // n)
        sizes = [min(step, dim - k * step) for k in range(n)]
    if len(sizes) != len(node.output):
        raise DeeployError(
            f"{node_label(node)}: {len(sizes)} split sizes {sizes} for {len(node.output)} outputs"
        )
    if any(s <= 0 for s in sizes) or sum(sizes) != dim:
        raise DeeployError(
            f"{node_label(node)}: split sizes {sizes} must be positive and add up to the "
            f"axis' length {dim}"
        )
    return sizes


@handles("Split", f"{MS}:SplitTraining")
def _split(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    xs = T.shape_of(x.type)
    axis = _axis(node, len(xs))
    sizes = _split_sizes(im, node, xs[axis])
    if len(sizes) == 1:
        im.env[node.output[0]] = x
        return
    props = _axis_prop(axis)
    props["sizes"] = DenseArrayBase.from_list(i64, sizes)
    res = im.emit(node, T.SplitOp, [x], props, n_results=len(sizes))
    im.bind(node, res)


# --------------------------------------------------------------------------
# Concat
# --------------------------------------------------------------------------


def _fold(node: pb.NodeProto, fn: object, *args: object, **kw: object) -> np.ndarray:
    try:
        return np.asarray(fn(*args, **kw))  # type: ignore[operator]
    except (ValueError, IndexError, np.exceptions.AxisError) as e:
        raise DeeployError(f"{node_label(node)}: {e}") from None


def _concat_lengths(im: Importer, node: pb.NodeProto) -> list[int]:
    """Emit Y of a Concat / ConcatTraining (folded when every input is a
    constant); the inputs' lengths along the axis."""
    if not node.input or not all(node.input):
        raise DeeployError(f"{node_label(node)}: Concat needs at least one input, all named")
    if all(_is_static(im, n) for n in node.input):
        vals = [np.asarray(im.inits[n]) for n in node.input]
        rank = vals[0].ndim
        axis = _axis(node, max(rank, 1))
        im.inits[node.output[0]] = _fold(node, np.concatenate, vals, axis=axis)
        return [int(v.shape[axis]) if v.ndim else 1 for v in vals]
    ins = [im.value(node, i) for i in range(len(node.input))]
    shapes = [T.shape_of(v.type) for v in ins]
    axis = _axis(node, len(shapes[0]))
    lens = [s[axis] if len(s) > axis else 0 for s in shapes]
    if 0 in lens:
        raise DeeployError(
            f"{node_label(node)}: an input of length 0 along the axis is not supported"
        )
    if len(ins) == 1:
        im.env[node.output[0]] = ins[0]
        return lens
    (y,) = im.emit(node, T.ConcatOp, ins, _axis_prop(axis))
    im.bind_named(node.output[:1], [y])
    return lens


@handles("Concat")
def _concat(im: Importer, node: pb.NodeProto) -> None:
    _concat_lengths(im, node)


@handles(f"{MS}:ConcatTraining", schema="Concat")
def _concat_training(im: Importer, node: pb.NodeProto) -> None:
    lens = _concat_lengths(im, node)
    if len(node.output) > 1 and node.output[1]:
        im.inits[node.output[1]] = np.array(lens, dtype=np.int64)


# --------------------------------------------------------------------------
# Gather
# --------------------------------------------------------------------------


def _check_static_indices(node: pb.NodeProto, idx: np.ndarray, rows: int) -> None:
    if idx.dtype.kind not in "iu":
        raise DeeployError(f"{node_label(node)}: indices must be integers, got {idx.dtype}")
    bad = idx[(idx < -rows) | (idx >= rows)]
    if bad.size:
        raise DeeployError(
            f"{node_label(node)}: index {int(bad.reshape(-1)[0])} is out of range for an axis "
            f"of length {rows}"
        )


@handles("Gather")
def _gather(im: Importer, node: pb.NodeProto) -> None:
    data_name, idx_name = im.input_name(node, 0), im.input_name(node, 1)
    if _is_static(im, data_name) and _is_static(im, idx_name):
        data, idx = np.asarray(im.inits[data_name]), np.asarray(im.inits[idx_name])
        axis = _axis(node, max(data.ndim, 1))
        if data.ndim:
            _check_static_indices(node, idx, data.shape[axis])
        im.inits[node.output[0]] = _fold(node, np.take, data, idx, axis=axis)
        return
    x = im.value(node, 0)
    xs = T.shape_of(x.type)
    axis = _axis(node, len(xs))
    if _is_static(im, idx_name):
        idx = np.asarray(im.inits[idx_name])
        _check_static_indices(node, idx, xs[axis])
        if idx.dtype != np.int64:
            im.env[idx_name] = im.constant(idx.astype(np.int64))
    im.bind(node, im.emit(node, T.GatherOp, [x, im.value(node, 1)], _axis_prop(axis)))


@handles(f"{MS}:GatherGrad", schema="Gather")
def _gather_grad(im: Importer, node: pb.NodeProto) -> None:
    shape = im.static_ints(node, 0)
    if any(d < 0 for d in shape):
        raise DeeployError(f"{node_label(node)}: shape {shape} has a negative dim")
    idx_name = im.input_name(node, 1)
    axis = _axis(node, max(len(shape), 1))
    if _is_static(im, idx_name):
        idx = np.asarray(im.inits[idx_name])
        _check_static_indices(node, idx, shape[axis])
        if idx.dtype != np.int64:
            im.env[idx_name] = im.constant(idx.astype(np.int64))
    ins = [im.value(node, 2), im.value(node, 1)]
    res = im.emit_typed(node, T.GatherGradOp, ins, [TensorType(f32, shape)], _axis_prop(axis))
    im.bind_named(node.output[:1], res)
