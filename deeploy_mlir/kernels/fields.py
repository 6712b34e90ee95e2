"""The values a kernel call's argument struct is filled with: the `Call`
record every family returns and the field-value helpers the families share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from deeploy_mlir.dialects import kernel as K
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError

Fields = list[tuple[str, Attribute | SSAValue]]


@dataclass(frozen=True)
class Call:
    kernel: str
    struct: str
    fields: Fields
    note: str


# ---------------------------------------------------------------- field values


def u32(v: int) -> Attribute:
    if not 0 <= v < 1 << 32:
        raise DeeployError(f"kernel-select: {v} does not fit a kernel's uint32_t field")
    return K.u32(v)


def arr(vals: Sequence[int], n: int = 4) -> Attribute:
    return K.u32_array([*vals, *[0] * (n - len(vals))])


def float32(x: float) -> Attribute:
    if not abs(float(x)) <= float(np.finfo(np.float32).max):  # NaN, Inf, or beyond float32
        raise DeeployError(f"cannot emit the float {x}: not finite as a float32")
    return K.f32_attr(x)


def ptr_or_null(v: SSAValue | None) -> Attribute | SSAValue:
    return K.NULL if v is None else v


def prod(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def numel(v: SSAValue) -> int:
    return prod(T.shape_of(v.type))


def strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def bcast_strides(out: Sequence[int], shape: Sequence[int]) -> list[int]:
    pad = [1] * (len(out) - len(shape)) + list(shape)
    st = strides(pad)
    return [0 if pad[i] == 1 and out[i] != 1 else st[i] for i in range(len(out))]


def max_rank(op: Operation, rank: int, most: int, what: str = "rank") -> None:
    if rank > most:
        raise DeeployError(f"{op.name}: {what} {rank} > {most} is not supported by the kernel")


def axis_fields(shape: Sequence[int], axis: int) -> Fields:
    """A row-wise kernel's geometry along `axis` (softmax, log-softmax): the
    elements before it (`outer`), its length and the elements after it."""
    return [
        ("outer", u32(prod(shape[:axis]))),
        ("len", u32(shape[axis])),
        ("inner", u32(prod(shape[axis + 1 :]))),
    ]
