"""Helpers of lowered modules (functions by name, arena sizes, the loss output;
the metadata itself is read through the training dialect's typed view), without
the interpreter: `lower` uses them, and importing xdsl's interpreters costs
start-up time it does not need."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
)
from xdsl.ir import Attribute

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError

NP_OF: dict[str, Any] = {"f32": np.float32, "i64": np.int64, "i1": np.bool_}


def np_dtype(t: Attribute) -> Any:
    return NP_OF[str(T.elem_of(t))]


def dense_to_array(attr: DenseIntOrFPElementsAttr, t: Attribute) -> np.ndarray:
    vals = attr.get_values()
    return np.array(vals, dtype=np_dtype(t)).reshape(T.shape_of(t))


def func_named(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(f"module has no function @{name}")


def arena_sizes(module: ModuleOp) -> dict[str, int]:
    out: dict[str, int] = {}
    for level in T.MEMORY_LEVELS:
        a = T.arena_of(module, level)
        if a is not None:
            out[level] = a.size_bytes
    return out


def check_arenas(module: ModuleOp, budgets: Mapping[str, int]) -> None:
    """Raise when an arena of `module` is over its level's budget (`budgets`
    by lower-case level: l1, l2, l3; `l1` is the L1 arena's, and
    `l1_stacks`, when present, the L1 the cluster stacks take beside it)."""
    for level, size in arena_sizes(module).items():
        cap = budgets[level.lower()]
        if size > cap:
            stacks = budgets.get("l1_stacks", 0) if level == "L1" else 0
            note = f" ({cap + stacks} minus {stacks} of cluster stacks)" if stacks else ""
            raise DeeployError(
                f"the {level} arena needs {size} bytes but the {level} budget is {cap} bytes"
                f"{note} (--{level.lower()})"
            )


def loss_output_name(module: ModuleOp) -> str | None:
    """The name of @training_step's scalar f32 result (or output buffer), if any."""
    fn = func_named(module, "training_step")
    step = T.StepFunction(fn)
    for r, t in zip(step.results, fn.function_type.outputs.data, strict=True):
        if r.updates is None and T.shape_of(t) == ():
            return r.name
    for a, v in zip(step.args, fn.args, strict=True):
        if a.kind == T.ArgKind.OUTPUT and T.shape_of(v.type) == ():
            return a.name
    return None
