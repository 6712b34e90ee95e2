"""Buffer facts read off buffer-form IR: sizes, levels, the step functions and
their arguments' names and kinds.

A library module: passes (arena-plan, memory-home, memory-regime, tile-select),
the arena probe, the emitter and the cycle model import it; it imports only
xDSL and the training dialect.
"""

from __future__ import annotations

import math

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import Attribute

from deeploy_mlir.dialects import training as T


def nbytes(t: Attribute) -> int:
    """Bytes of a memref (or tensor) type."""
    return T.elem_bytes(t) * math.prod(T.shape_of(t))


def level_of(t: Attribute) -> str | None:
    """The memory level of a memref type (None: not a memref with a level)."""
    if isinstance(t, MemRefType) and isinstance(t.memory_space, StringAttr):
        return t.memory_space.data
    return None


def in_level(t: MemRefType[Attribute], level: str) -> MemRefType[Attribute]:
    """`t` in memory level `level`."""
    return MemRefType(t.get_element_type(), t.get_shape(), memory_space=StringAttr(level))


def step_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions of `module` that have a body, in order."""
    return [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]


def arg_name(fn: func.FuncOp, i: int) -> str:
    """The ONNX name of argument `i` (its `#training.arg`), else `@fn.argI`."""
    return T.arg_info(fn, i).name_or(f"{fn.sym_name.data}.arg{i}")


def arg_kind(fn: func.FuncOp, i: int) -> str:
    """The kind of argument `i` (its `#training.arg`; `input` when absent)."""
    return T.arg_info(fn, i).kind
