"""Shaped types and small shape helpers shared by the training dialect's ops."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    Float32Type,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------
# Types and small helpers
# --------------------------------------------------------------------------

ShapedT = TensorType[Attribute] | MemRefType[Attribute]


def shape_of(t: Attribute) -> tuple[int, ...]:
    if isinstance(t, TensorType | MemRefType):
        return tuple(t.get_shape())
    raise VerifyException(f"expected a tensor or memref type, got {t}")


def elem_of(t: Attribute) -> Attribute:
    if isinstance(t, TensorType | MemRefType):
        return t.get_element_type()
    raise VerifyException(f"expected a tensor or memref type, got {t}")


def elem_bytes(t: Attribute) -> int:
    """Bytes of one element of a shaped type (i1 takes a whole byte, as in C)."""
    return elem_type_bytes(elem_of(t))


def elem_type_bytes(e: Attribute) -> int:
    """Bytes of one value of element type `e`."""
    width = getattr(e, "bitwidth", None)
    if not isinstance(width, int) or width <= 0:
        raise VerifyException(f"element type {e} has no fixed size in memory")
    return (width + 7) // 8


def memory_level(t: Attribute) -> str | None:
    """The memory level ("L1", "L2", "L3") of a memref in one, else None. (The
    dma dialect's `level_of` is the strict form: it requires a memref with a
    level.)"""
    if isinstance(t, MemRefType) and isinstance(t.memory_space, StringAttr):
        return t.memory_space.data
    return None


def fmt_shape(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


def is_f32(t: Attribute) -> bool:
    return isinstance(elem_of(t), Float32Type)


def is_int(t: Attribute, width: int) -> bool:
    e = elem_of(t)
    return isinstance(e, IntegerType) and e.width.data == width


def _same_shape(a: Attribute, a_name: str, b: Attribute, b_name: str) -> tuple[int, ...]:
    """The shape of `a` and `b`, which must be the same (`a_name`, `b_name`:
    what the message calls them)."""
    sa, sb = shape_of(a), shape_of(b)
    if sa != sb:
        raise VerifyException(
            f"{a_name} ({fmt_shape(sa)}) and {b_name} ({fmt_shape(sb)}) must have the same shape"
        )
    return sa


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """numpy broadcasting of two static shapes, None when incompatible."""
    out: list[int] = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and 1 not in (da, db):
            return None
        out.append(max(da, db))
    return tuple(reversed(out))


def gemm_shapes(
    a: Sequence[int], b: Sequence[int], trans_a: bool, trans_b: bool
) -> tuple[int, int, int]:
    """(M, N, K) of a Gemm, raising VerifyException with the mismatch."""
    if len(a) != 2 or len(b) != 2:
        raise VerifyException(
            f"operands A and B must be rank 2, got {fmt_shape(a)} and {fmt_shape(b)}"
        )
    m, k = (a[1], a[0]) if trans_a else (a[0], a[1])
    kb, n = (b[1], b[0]) if trans_b else (b[0], b[1])
    if k != kb:
        raise VerifyException(
            f"inner dimensions differ: A gives K={k} (trans_a={int(trans_a)}) but B gives "
            f"K={kb} (trans_b={int(trans_b)})"
        )
    return m, n, k


def _check_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not 0 <= axis < rank:
        raise VerifyException(
            f"{what} {axis} is out of range for rank {rank}: it must be in [0, {rank}) "
            "(the importer turns negative axes into these)"
        )
    return axis
