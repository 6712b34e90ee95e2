"""Non-compute ops: tensor constants and arena views."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I64,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------
# Non-compute ops
# --------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor constant (bufferized to a memref.global)."""

    name = "training.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(
                f"value type {self.value.type} differs from result type {self.result.type}"
            )


MEMORY_LEVELS = ("L1", "L2", "L3")


@irdl_op_definition
class ArenaViewOp(IRDLOperation):
    """A buffer at a static byte offset of its memory level's arena (arena-plan writes it)."""

    name = "training.arena_view"
    offset = prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)
    assembly_format = "`at` $offset attr-dict `:` type($result)"

    def __init__(self, offset: int, type_: MemRefType[Attribute]):
        super().__init__(properties={"offset": IntegerAttr(offset, i64)}, result_types=[type_])

    @property
    def level(self) -> str:
        space = self.result.type.memory_space  # type: ignore[attr-defined]
        return space.data if isinstance(space, StringAttr) else ""

    def verify_(self) -> None:
        if self.level not in MEMORY_LEVELS:
            raise VerifyException(
                f"memory space must be one of {', '.join(MEMORY_LEVELS)}, got "
                f"{self.result.type.memory_space}"  # type: ignore[attr-defined]
            )
        if self.offset.value.data < 0:
            raise VerifyException(f"offset must be non-negative, got {self.offset.value.data}")
