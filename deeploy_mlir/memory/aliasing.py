"""The in-place decisions and state updates that travel in the IR between
training-inplace-alias and training-bufferize.

`INPLACE` (``training.inplace = array<i64: k, ...>``, one entry per result,
-1 = own buffer) is what training-inplace-alias decides and
training-bufferize reads; `updates_of` reads the `training.updates` result
attributes of a step function (result index -> the argument it is the new
value of). A library module: it imports only xDSL.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr
from xdsl.ir import Operation

INPLACE = "training.inplace"


def updates_of(fn: func.FuncOp) -> dict[int, int]:
    """result index -> argument index, from the `training.updates` result attributes."""
    out: dict[int, int] = {}
    if fn.res_attrs is None:
        return out
    for i, d in enumerate(fn.res_attrs.data):
        a = d.data.get("training.updates")  # type: ignore[attr-defined]
        if isinstance(a, IntegerAttr):
            out[i] = a.value.data
    return out


def inplace_of(op: Operation) -> list[int]:
    """The `training.inplace` decision of `op` (-1 per result when none)."""
    a = op.attributes.get(INPLACE)
    if isinstance(a, DenseArrayBase):
        return [int(x) for x in a.get_values()]
    return [-1] * len(op.results)
