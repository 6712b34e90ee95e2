"""Attribute helpers of lowered modules (function and argument attributes,
arena sizes, the loss output), without the interpreter: `lower` uses them,
and importing xdsl's interpreters costs start-up time it does not need."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
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


def arg_attr(fn: func.FuncOp, i: int, key: str) -> Attribute | None:
    if fn.arg_attrs is None:
        return None
    d = fn.arg_attrs.data[i]
    assert isinstance(d, DictionaryAttr)
    return d.data.get(key)


def res_attr(fn: func.FuncOp, i: int, key: str) -> Attribute | None:
    if fn.res_attrs is None:
        return None
    d = fn.res_attrs.data[i]
    assert isinstance(d, DictionaryAttr)
    return d.data.get(key)


def str_attr(a: Attribute | None) -> str | None:
    return a.data if isinstance(a, StringAttr) else None


def int_attr(a: Attribute | None) -> int | None:
    return a.value.data if isinstance(a, IntegerAttr) else None


def arena_sizes(module: ModuleOp) -> dict[str, int]:
    out: dict[str, int] = {}
    for level in T.MEMORY_LEVELS:
        a = module.attributes.get(f"training.arena_{level}")
        if isinstance(a, IntegerAttr):
            out[level] = a.value.data
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
    for i, t in enumerate(fn.function_type.outputs.data):
        if res_attr(fn, i, "training.updates") is None and T.shape_of(t) == ():
            return str_attr(res_attr(fn, i, "training.name"))
    for i, a in enumerate(fn.args):
        if str_attr(arg_attr(fn, i, "training.kind")) == "output" and T.shape_of(a.type) == ():
            return str_attr(arg_attr(fn, i, "training.name"))
    return None
