"""Views: a buffer read under another shape, over the same storage.

`training.view` is what training-bufferize makes of a reshape (ONNX Reshape,
Flatten, Squeeze, Unsqueeze, and a Transpose that moves only size-1 dims)
whose result may share its input's storage (`ViewAliasing`, decided by
training-inplace-alias): the same contiguous row-major bytes, read as a
memref of another static shape -- no copy, no tile, no kernel call. It is a
memref reinterpretation: the element type, element count and memory level
stay, and both sides have the identity (contiguous row-major) layout, so
element i of one is element i of the other.

The passes that reason about storage follow views (`view_source`,
`storage_root`, `uses_through_views`): arena-plan keeps a buffer live while a
view of it is read, memory-home and memory-regime move a view with its
source (`retype_views`). The C emitter spells a view as its source's
pointer, and the interpreter as a numpy view of its source's array, so a
view over arena storage aliases for real.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Attribute, Operation, SSAValue, Use
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.interfaces import AliasingInterface
from deeploy_mlir.dialects.training.shapes import elem_of, fmt_shape, shape_of


class ViewAliasing(AliasingInterface):
    """Result 0 may be a *view* of operand 0 (`VIEW`): the same bytes in the
    same order under another shape, so sharing storage costs no computation
    at all; unlike an in-place write, the operand may still be read after
    the op (both name the same, unchanged elements)."""

    VIEW: ClassVar[bool] = True

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return [(0, 0)]


def _count(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@irdl_op_definition
class ViewOp(IRDLOperation):
    """`%v = training.view %x : memref<..> to memref<..>`: %x's storage under
    the result's shape (same element type, element count and memory level;
    contiguous row-major layouts on both sides)."""

    name = "training.view"
    source = operand_def(MemRefType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue | Operation, type_: MemRefType[Attribute]):
        super().__init__(operands=[source], result_types=[type_])

    def verify_(self) -> None:
        src, dst = self.source.type, self.result.type
        assert isinstance(src, MemRefType) and isinstance(dst, MemRefType)
        for what, t in (("source", src), ("result", dst)):
            if not isinstance(t.layout, NoneAttr):
                raise VerifyException(
                    f"the {what} must have the contiguous row-major layout, got {t.layout}"
                )
        if elem_of(src) != elem_of(dst):
            raise VerifyException(
                f"element types differ: source {elem_of(src)}, result {elem_of(dst)}"
            )
        if src.memory_space != dst.memory_space:
            raise VerifyException(
                f"memory spaces differ: source {src.memory_space}, result {dst.memory_space} "
                "(a view is the same storage)"
            )
        xs, ys = shape_of(src), shape_of(dst)
        if _count(xs) != _count(ys):
            raise VerifyException(
                f"source {fmt_shape(xs)} has {_count(xs)} elements but result {fmt_shape(ys)} "
                f"has {_count(ys)}"
            )


def view_source(v: SSAValue) -> SSAValue | None:
    """The value `v` is a view of (None: `v` is not a view)."""
    owner = v.owner
    return owner.source if isinstance(owner, ViewOp) else None


def storage_root(v: SSAValue) -> SSAValue:
    """The value whose storage `v` names: `v` itself, or what its chain of
    views starts from."""
    while (src := view_source(v)) is not None:
        v = src
    return v


def uses_through_views(v: SSAValue) -> Iterator[Use]:
    """Every use of `v`'s storage: the uses of `v` and, for each view of it,
    the uses of the view (transitively); the view ops' own uses included."""
    for use in list(v.uses):
        yield use
        if isinstance(use.operation, ViewOp):
            yield from uses_through_views(use.operation.result)


def retype_views(v: SSAValue) -> None:
    """Give every view of `v` (transitively) `v`'s memory level, after `v`
    moved to another level: a view is the same storage."""
    t = v.type
    assert isinstance(t, MemRefType)
    for use in list(v.uses):
        op = use.operation
        if not isinstance(op, ViewOp):
            continue
        old = op.result.type
        assert isinstance(old, MemRefType)
        if old.memory_space != t.memory_space:
            new_t = MemRefType(old.get_element_type(), old.get_shape(), memory_space=t.memory_space)
            new = Rewriter.replace_value_with_new_type(op.result, new_t)
            retype_views(new)
