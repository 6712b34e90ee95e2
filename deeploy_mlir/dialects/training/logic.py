"""Compare, logical, Where, Cast and Clip ops (issue 20's logic family).

Booleans are `i1` tensors, one byte per element in memory (0 or 1), as
runtime_c's compare.c reads and writes them. All these ops are elementwise
with numpy (ONNX) broadcasting of their inputs, so they tile on every dim of
their output (`ElementwiseSpace`).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    FloatAttr,
    IntegerType,
    StringAttr,
    i1,
)
from xdsl.ir import Attribute, TypeAttribute
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import (
    ElementwiseAliasing,
    ElementwiseSpace,
    TrainingComputeOp,
)
from deeploy_mlir.dialects.training.interfaces import NoAliasing
from deeploy_mlir.dialects.training.shapes import (
    broadcast_shapes,
    elem_of,
    fmt_shape,
    is_f32,
    is_int,
    shape_of,
)

COMPARE_KINDS = ("greater", "greater_equal", "less", "less_equal", "equal")
LOGICAL_KINDS = ("and", "or", "xor")
#: the (from, to) element types training.cast converts between
CAST_PAIRS = (("i1", "f32"), ("f32", "i1"), ("i64", "f32"), ("f32", "i64"))


def elem_name(e: Attribute) -> str:
    """ "f32", "i1", "i64" or the type's text."""
    if isinstance(e, Float32Type):
        return "f32"
    if isinstance(e, IntegerType):
        return f"i{e.width.data}"
    return str(e)


def _broadcast_all(op: TrainingComputeOp) -> tuple[int, ...]:
    shapes = [shape_of(t) for t in op.in_types()]
    out: tuple[int, ...] | None = shapes[0]
    for s in shapes[1:]:
        assert out is not None
        out = broadcast_shapes(out, s)
        if out is None:
            break
    if out is None:
        raise VerifyException(
            "input shapes " + ", ".join(fmt_shape(s) for s in shapes) + " do not broadcast together"
        )
    return out


def _check_kind(kind: StringAttr, kinds: tuple[str, ...]) -> None:
    if kind.data not in kinds:
        raise VerifyException(f"kind must be one of {', '.join(kinds)}, got '{kind.data}'")


@irdl_op_definition
class CompareOp(TrainingComputeOp, NoAliasing, ElementwiseSpace):
    """Y = A <kind> B (bool), f32 A and B with numpy broadcasting; kind in
    greater, greater_equal, less, less_equal, equal (ONNX Greater, ...)."""

    name = "training.compare"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    kind = prop_def(StringAttr)

    def output_elem_types(self) -> list[Attribute]:
        return [i1]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        _check_kind(self.kind, COMPARE_KINDS)
        return [_broadcast_all(self)]


def _check_bools(op: TrainingComputeOp) -> None:
    for i, t in enumerate(op.in_types()):
        if not is_int(t, 1):
            raise VerifyException(f"input #{i} must have i1 elements, got {elem_of(t)}")


@irdl_op_definition
class LogicalOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = A <kind> B on booleans with numpy broadcasting; kind in and, or, xor."""

    name = "training.logical"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    kind = prop_def(StringAttr)

    def check_inputs(self) -> None:
        _check_bools(self)

    def output_elem_types(self) -> list[Attribute]:
        return [i1]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        _check_kind(self.kind, LOGICAL_KINDS)
        return [_broadcast_all(self)]


@irdl_op_definition
class NotOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = !X on booleans (ONNX Not)."""

    name = "training.not"

    def check_inputs(self) -> None:
        _check_bools(self)

    def output_elem_types(self) -> list[Attribute]:
        return [i1]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class WhereOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = C ? A : B (ONNX Where): C boolean, A and B f32, all three with
    numpy broadcasting."""

    name = "training.where"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)

    def check_inputs(self) -> None:
        c, a, b = self.in_types()
        if not is_int(c, 1):
            raise VerifyException(f"condition (input #0) must have i1 elements, got {elem_of(c)}")
        for i, t in ((1, a), (2, b)):
            if not is_f32(t):
                raise VerifyException(f"input #{i} must have f32 elements, got {elem_of(t)}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [_broadcast_all(self)]


@irdl_op_definition
class CastOp(TrainingComputeOp, NoAliasing, ElementwiseSpace):
    """Y = X converted to the element type `to` (ONNX Cast): bool <-> f32
    (0 / 1; x != 0, NaN true), i64 <-> f32 ((float)x; toward zero)."""

    name = "training.cast"
    to = prop_def(TypeAttribute)

    def check_inputs(self) -> None:
        pair = (elem_name(elem_of(self.ins[0].type)), elem_name(self.to))
        if pair not in CAST_PAIRS:
            pairs = ", ".join(f"{a}->{b}" for a, b in CAST_PAIRS)
            raise VerifyException(f"cannot cast {pair[0]} to {pair[1]} (supported: {pairs})")

    def output_elem_types(self) -> list[Attribute]:
        return [self.to]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


def float_of(a: FloatAttr[AnyFloat]) -> float:
    return float(a.value.data)


@irdl_op_definition
class ClipOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = X < lo ? lo : (X > hi ? hi : X) (ONNX Clip; ReLU6 and Hardtanh
    export as it). lo and hi are finite (an absent bound is float32's
    lowest / largest value, ONNX's default); NaN stays NaN."""

    name = "training.clip"
    lo = prop_def(FloatAttr[AnyFloat])
    hi = prop_def(FloatAttr[AnyFloat])

    def infer_shapes(self) -> list[tuple[int, ...]]:
        lo, hi = float_of(self.lo), float_of(self.hi)
        if not lo <= hi:
            raise VerifyException(f"lo ({lo}) must not exceed hi ({hi}), and neither be NaN")
        return [shape_of(self.ins[0].type)]


__all__ = [
    "CAST_PAIRS",
    "COMPARE_KINDS",
    "LOGICAL_KINDS",
    "CastOp",
    "ClipOp",
    "CompareOp",
    "LogicalOp",
    "NotOp",
    "WhereOp",
    "elem_name",
    "float_of",
]
