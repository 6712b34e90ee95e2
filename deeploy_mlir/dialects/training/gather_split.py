"""Split, concat, gather and its gradient: ops that move whole rows along one
axis (ONNX Split / com.microsoft SplitTraining, Concat / ConcatTraining,
Gather and com.microsoft GatherGrad).

Every op here sees its operands as [outer, axis, inner] around its `axis`
(normalized to [0, rank) at import): the dims before the axis and after it
may tile (a tile keeps whole rows, so its kernel is the same copy on the
tile); the axis itself, and the indices of a gather's gradient, stay whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import TrainingComputeOp
from deeploy_mlir.dialects.training.interfaces import (
    IterationSpace,
    IterationSpaceInterface,
    NoAliasing,
    _dims_map,
)
from deeploy_mlir.dialects.training.shapes import (
    _check_axis,
    elem_of,
    fmt_shape,
    is_f32,
    is_int,
    shape_of,
)


class AxisOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """An op along one axis (`axis`, in [0, rank))."""

    axis = prop_def(IntegerAttr[i64])

    def axis_value(self) -> int:
        return self.axis.value.data


def _parts_space(whole: Sequence[int], axis: int, lens: Sequence[int]) -> IterationSpace:
    """The loop dims of a split or concat: the whole tensor's dims (its axis
    whole) and one whole dim per part for the part's own length; maps for
    the whole tensor, then for the parts."""
    r = len(whole)
    dims = [*whole, *lens]
    whole_idx: list[int | None] = list(range(r))
    maps = [_dims_map(len(dims), whole_idx)]
    for k in range(len(lens)):
        idx: list[int | None] = list(range(r))
        idx[axis] = r + k
        maps.append(_dims_map(len(dims), idx))
    fixed = frozenset({axis, *range(r, r + len(lens))})
    return IterationSpace(tuple(dims), tuple(maps), fixed)


def _parts_shapes(whole: Sequence[int], axis: int, lens: Sequence[int]) -> list[tuple[int, ...]]:
    return [tuple(n if i == axis else d for i, d in enumerate(whole)) for n in lens]


@irdl_op_definition
class SplitOp(AxisOp):
    """Y_k = the slab of X along `axis` of length sizes[k], in order (ONNX
    Split and com.microsoft SplitTraining with static split sizes): one
    result per entry of `sizes`, which add up to X's dim."""

    name = "training.split"
    sizes = prop_def(DenseArrayBase.constr(i64))

    def size_list(self) -> list[int]:
        return [int(v) for v in self.sizes.get_values()]

    def n_outs(self) -> int:
        return len(self.size_list())

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = shape_of(self.ins[0].type)
        axis = _check_axis(self.axis_value(), len(x))
        sizes = self.size_list()
        if not sizes or any(s <= 0 for s in sizes) or sum(sizes) != x[axis]:
            raise VerifyException(
                f"sizes {sizes} must be positive and add up to X's dim {axis} ({x[axis]}; X is "
                f"{fmt_shape(x)})"
            )
        return _parts_shapes(x, axis, sizes)

    def iteration_space(self) -> IterationSpace:
        x = shape_of(self.ins[0].type)
        return _parts_space(x, self.axis_value(), self.size_list())


@irdl_op_definition
class ConcatOp(AxisOp):
    """Y = the inputs one after the other along `axis` (ONNX Concat and
    com.microsoft ConcatTraining); the inputs agree on every other dim."""

    name = "training.concat"
    N_INS: ClassVar[tuple[int, int]] = (1, 1 << 16)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        shapes = [shape_of(t) for t in self.in_types()]
        first = shapes[0]
        axis = _check_axis(self.axis_value(), len(first))
        for i, s in enumerate(shapes):
            same = len(s) == len(first) and all(
                a == b for j, (a, b) in enumerate(zip(s, first, strict=True)) if j != axis
            )
            if not same:
                raise VerifyException(
                    f"input #{i} ({fmt_shape(s)}) must have input #0's shape ({fmt_shape(first)}) "
                    f"but for dim {axis}"
                )
        total = sum(s[axis] for s in shapes)
        return [tuple(total if i == axis else d for i, d in enumerate(first))]

    def iteration_space(self) -> IterationSpace:
        lens = [shape_of(t)[self.axis_value()] for t in self.in_types()]
        y = shape_of(self.output_types()[0])
        sp = _parts_space(y, self.axis_value(), lens)
        # operands in order: the parts (ins), then Y
        return IterationSpace(sp.dims, (*sp.maps[1:], sp.maps[0]), sp.whole)


def _check_data_indices(data: Attribute, data_name: str, idx: Attribute) -> None:
    if not is_f32(data):
        raise VerifyException(f"{data_name} must have f32 elements, got {elem_of(data)}")
    if not is_int(idx, 64):
        raise VerifyException(f"indices must have i64 elements, got {elem_of(idx)}")


@irdl_op_definition
class GatherOp(AxisOp):
    """Y = X's rows along `axis` named by the indices, Y.shape = X.shape[:axis]
    + indices.shape + X.shape[axis + 1:] (ONNX Gather; ins X f32, indices
    i64, each in [-X.shape[axis], X.shape[axis]), a negative one counting
    from the end). An embedding lookup is a gather along axis 0."""

    name = "training.gather"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def check_inputs(self) -> None:
        x, idx = self.in_types()
        _check_data_indices(x, "X", idx)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x, idx = (shape_of(t) for t in self.in_types())
        axis = _check_axis(self.axis_value(), len(x))
        return [(*x[:axis], *idx, *x[axis + 1 :])]

    def iteration_space(self) -> IterationSpace:
        # loop dims: Y's, then X's axis (whole: any index may name any row)
        x, idx = (shape_of(t) for t in self.in_types())
        axis, ri = self.axis_value(), len(idx)
        y = (*x[:axis], *idx, *x[axis + 1 :])
        n = len(y) + 1
        x_idx: list[int | None] = [*range(axis), len(y), *range(axis + ri, len(y))]
        i_idx: list[int | None] = list(range(axis, axis + ri))
        maps = (_dims_map(n, x_idx), _dims_map(n, i_idx), _dims_map(n, list(range(len(y)))))
        return IterationSpace((*y, x[axis]), maps, frozenset({len(y)}))


@irdl_op_definition
class GatherGradOp(AxisOp):
    """dX = zeros of dX's declared shape, then dX[.., indices[j], ..] +=
    dY[.., j, ..] for every index position j in increasing order (com.microsoft
    GatherGrad: a scatter-add; ins dY f32, indices i64). dY.shape must be
    dX.shape[:axis] + indices.shape + dX.shape[axis + 1:]."""

    name = "training.gather_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def check_inputs(self) -> None:
        dy, idx = self.in_types()
        _check_data_indices(dy, "dY", idx)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, idx = (shape_of(t) for t in self.in_types())
        dx = shape_of(self.output_types()[0])
        axis = _check_axis(self.axis_value(), len(dx))
        want = (*dx[:axis], *idx, *dx[axis + 1 :])
        if dy != want:
            raise VerifyException(
                f"dY is {fmt_shape(dy)} but dX {fmt_shape(dx)} and indices {fmt_shape(idx)} "
                f"along axis {axis} give {fmt_shape(want)}"
            )
        return [dx]

    def iteration_space(self) -> IterationSpace:
        # loop dims: dX's (its axis whole), then the indices' (a reduction:
        # whole, each dX row sums over all of them)
        _, idx = (shape_of(t) for t in self.in_types())
        dx = shape_of(self.output_types()[0])
        axis, r, ri = self.axis_value(), len(dx), len(idx)
        n = r + ri
        dy_idx: list[int | None] = [*range(axis), *range(r, n), *range(axis + 1, r)]
        i_idx: list[int | None] = list(range(r, n))
        maps = (_dims_map(n, dy_idx), _dims_map(n, i_idx), _dims_map(n, list(range(r))))
        red = frozenset(range(r, n))
        return IterationSpace((*dx, *idx), maps, frozenset({axis}) | red, red)
