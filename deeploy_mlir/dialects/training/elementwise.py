"""Elementwise and layout ops: binary arithmetic, ReLU, GELU (and gradients),
copy, reshape, transpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    irdl_op_definition,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import (
    ElementwiseAliasing,
    ElementwiseSpace,
    TrainingComputeOp,
)
from deeploy_mlir.dialects.training.interfaces import (
    IterationSpace,
    IterationSpaceInterface,
    NoAliasing,
    _dims_map,
)
from deeploy_mlir.dialects.training.shapes import (
    _same_shape,
    broadcast_shapes,
    elem_of,
    fmt_shape,
    shape_of,
)
from deeploy_mlir.dialects.training.view import ViewAliasing

BINARY_KINDS = ("add", "sub", "mul", "div", "pow")


@irdl_op_definition
class BinaryOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Elementwise A <kind> B with numpy broadcasting; kind in add, sub, mul, div, pow
    (pow: A ** B, as C's powf)."""

    name = "training.binary"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    kind = prop_def(StringAttr)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        if self.kind.data not in BINARY_KINDS:
            raise VerifyException(
                f"kind must be one of {', '.join(BINARY_KINDS)}, got '{self.kind.data}'"
            )
        a, b = (shape_of(t) for t in self.in_types())
        out = broadcast_shapes(a, b)
        if out is None:
            raise VerifyException(
                f"shapes {fmt_shape(a)} and {fmt_shape(b)} do not broadcast together"
            )
        return [out]


@irdl_op_definition
class ReluOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = max(X, 0)."""

    name = "training.relu"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class ReluGradOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """dX = dY where X > 0 else 0; X may be the ReLU's input or its output."""

    name = "training.relu_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, x = self.in_types()
        return [_same_shape(dy, "gradient dY", x, "X")]


@irdl_op_definition
class CopyOp(TrainingComputeOp, ElementwiseSpace):
    """out = in (same shape); bufferization inserts it where an update cannot be in place."""

    name = "training.copy"

    def check_inputs(self) -> None:
        pass

    def output_elem_types(self) -> list[Attribute]:
        return [elem_of(self.ins[0].type)]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class ReshapeOp(TrainingComputeOp, ViewAliasing, IterationSpaceInterface):
    """Y = X's elements, in row-major order, under Y's declared shape (ONNX
    Reshape, Flatten, Squeeze and Unsqueeze, the target shape resolved at
    import: shapes are static). Y may be a view of X (`ViewAliasing`):
    training-inplace-alias decides, and training-bufferize then writes a
    `training.view` instead of the op (no copy); where Y needs storage of its
    own (it is returned), bufferization copies a view of X with Y's shape
    (`training.copy`, which tiles over every dim).

    The output's shape is its declared type, checked against X's element
    count, so that a tile of a reshape is again a reshape: a dim that X and Y
    keep (`reshape_groups`) may tile (a tile holds the same elements in the
    same row-major order on both sides, so its kernel is a copy); the dims
    that merge or split stay whole."""

    name = "training.reshape"

    def check_inputs(self) -> None:
        pass

    def output_elem_types(self) -> list[Attribute]:
        return [elem_of(self.ins[0].type)]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x, y = shape_of(self.ins[0].type), shape_of(self.output_types()[0])
        nx, ny = 1, 1
        for d in x:
            nx *= d
        for d in y:
            ny *= d
        if nx != ny:
            raise VerifyException(
                f"X ({fmt_shape(x)}, {nx} elements) cannot be reshaped to {fmt_shape(y)} "
                f"({ny} elements)"
            )
        return [y]

    def iteration_space(self) -> IterationSpace:
        # a dim that X and Y keep (a group of one dim on each side, see
        # reshape_groups) is one loop dim and may tile: a tile then holds the
        # same elements, in the same order, on both sides; the dims of merged
        # or split groups have loop dims of their own and stay whole; size-1
        # dims are the constant 0
        x, y = shape_of(self.ins[0].type), shape_of(self.output_types()[0])
        dims: list[int] = []
        x_idx: list[int | None] = [None] * len(x)
        y_idx: list[int | None] = [None] * len(y)
        whole: set[int] = set()
        for gx, gy in reshape_groups(x, y):
            if len(gx) == 1 and len(gy) == 1:
                x_idx[gx[0]] = y_idx[gy[0]] = len(dims)
                dims.append(x[gx[0]])
                continue
            for idx, shape, group in ((x_idx, x, gx), (y_idx, y, gy)):
                for i in group:
                    idx[i] = len(dims)
                    whole.add(len(dims))
                    dims.append(shape[i])
        maps = (_dims_map(len(dims), x_idx), _dims_map(len(dims), y_idx))
        return IterationSpace(tuple(dims), maps, frozenset(whole))


@irdl_op_definition
class GeluOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = 0.5 * X * (1 + erf(X / sqrt(2))) (ONNX Gelu, approximate = none)."""

    name = "training.gelu"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class GeluGradOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """dX = dY * (0.5 * (1 + erf(X / sqrt(2))) + X * exp(-X^2 / 2) / sqrt(2 pi))
    (GeluGrad: ins dY, X; X is the Gelu's input)."""

    name = "training.gelu_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, x = self.in_types()
        return [_same_shape(dy, "dY", x, "X")]


@irdl_op_definition
class TransposeOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """Y = X with its dims permuted: Y.shape[j] = X.shape[perm[j]] (ONNX
    Transpose). The loop dims are Y's; X is indexed through the inverse
    permutation, so every dim may tile."""

    name = "training.transpose"
    perm = prop_def(DenseArrayBase.constr(i64))

    def perm_list(self) -> list[int]:
        return [int(p) for p in self.perm.get_values()]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = shape_of(self.ins[0].type)
        perm = self.perm_list()
        if sorted(perm) != list(range(len(x))):
            raise VerifyException(
                f"perm {perm} must be a permutation of 0..{len(x) - 1} (X is {fmt_shape(x)})"
            )
        return [tuple(x[p] for p in perm)]

    def iteration_space(self) -> IterationSpace:
        perm = self.perm_list()
        out = tuple(shape_of(self.ins[0].type)[p] for p in perm)
        x_idx: list[int | None] = [perm.index(i) for i in range(len(perm))]
        maps = (_dims_map(len(out), x_idx), AffineMap.identity(len(out)))
        return self.onto_space(IterationSpace(out, maps, frozenset()))

    def ontoable(self) -> set[int]:
        return {0}


def reshape_groups(x: Sequence[int], y: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """The dims of X and Y (size-1 dims left out) in aligned groups: runs of
    consecutive dims with the same element count on both sides, as small as
    possible. A group of one dim on each side is a dim a reshape keeps."""
    xs = [i for i, d in enumerate(x) if d != 1]
    ys = [j for j, d in enumerate(y) if d != 1]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        gx, gy = [xs[i]], [ys[j]]
        px, py = x[xs[i]], y[ys[j]]
        i, j = i + 1, j + 1
        while px != py:
            if px < py and i < len(xs):
                gx.append(xs[i])
                px, i = px * x[xs[i]], i + 1
            elif py < px and j < len(ys):
                gy.append(ys[j])
                py, j = py * y[ys[j]], j + 1
            else:  # the element counts differ (the verifier says so)
                break
        groups.append((gx, gy))
    if i < len(xs) or j < len(ys):  # element counts differ: one last group
        groups.append((xs[i:], ys[j:]))
    return groups
