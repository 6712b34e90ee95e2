"""The `dma` dialect: copies between memory levels.

``dma.copy "in" %src, %dst at [%i, %j]`` moves the box of `dst`'s (static)
shape that starts at the given offsets of `src` into `dst`;
``dma.copy "out" %src, %dst at [%i, %j]`` moves all of `src` into the box of
`dst` at those offsets. The offsets always index the tensor side. One side is the
whole (small) tile buffer, the other a box of the (large) tensor. The copy
is synchronous: it has completed when the op returns. (Asynchronous copies
with tokens and waits, engines and multi-buffering build on this op.)
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType, MemRefType, StringAttr
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

DIRECTIONS = ("in", "out")


@irdl_op_definition
class CopyOp(IRDLOperation):
    """direction = "in": box of src at `offsets` -> all of dst (e.g. L2 -> L1);
    direction = "out": all of src -> box of dst at `offsets` (e.g. L1 -> L2)."""

    name = "dma.copy"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    offsets = var_operand_def(IndexType)
    direction = prop_def(StringAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$direction $src `,` $dst (`at` ` ` `[` $offsets^ `]`)? attr-dict "
        "`:` type($src) `,` type($dst)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        offsets: Sequence[SSAValue | Operation],
        direction: str,
    ):
        super().__init__(
            operands=[src, dst, list(offsets)],
            properties={"direction": StringAttr(direction)},
        )

    @property
    def big(self) -> SSAValue:
        """The operand the offsets index (the tensor side)."""
        return self.src if self.direction.data == "in" else self.dst

    @property
    def tile(self) -> SSAValue:
        return self.dst if self.direction.data == "in" else self.src

    def verify_(self) -> None:
        if self.direction.data not in DIRECTIONS:
            raise VerifyException(f"direction must be 'in' or 'out', got '{self.direction.data}'")
        big, tile = self.big.type, self.tile.type
        assert isinstance(big, MemRefType) and isinstance(tile, MemRefType)
        bs, ts = big.get_shape(), tile.get_shape()
        if len(self.offsets) != len(bs):
            raise VerifyException(
                f"expects one offset per dimension of the tensor side ({len(bs)}), got "
                f"{len(self.offsets)}"
            )
        if len(ts) != len(bs):
            raise VerifyException(f"tile rank {len(ts)} differs from the tensor rank {len(bs)}")
        if any(t > b for t, b in zip(ts, bs, strict=True)):
            raise VerifyException(f"tile shape {list(ts)} exceeds the tensor shape {list(bs)}")
        if big.get_element_type() != tile.get_element_type():
            raise VerifyException("source and destination element types differ")
        if big.memory_space == tile.memory_space:
            raise VerifyException("a copy moves data between two memory levels")


def elem_bytes(t: Attribute) -> int:
    assert isinstance(t, MemRefType)
    return {"f32": 4, "i64": 8, "i1": 1}[str(t.get_element_type())]


DMA = Dialect("dma", [CopyOp], [])
