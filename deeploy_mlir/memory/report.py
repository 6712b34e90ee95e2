"""What a planned module holds in memory: per level the arena and its lower
bound, and every buffer with its level, offset, size and kind."""

from __future__ import annotations

from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.passes.arena_plan import level_of, nbytes

#: argument kinds as the report names them
KIND_LABEL = {
    "param": "weight",
    "grad_accum": "gradient",
    "input": "input",
    "output": "output",
    "reset_flag": "control",
    "lr": "optimizer state",
}


def _int(a: object) -> int:
    return a.value.data if isinstance(a, IntegerAttr) else 0


def memory_summary(module: ModuleOp) -> dict[str, Any]:
    """{"memory": {level: {"arena_bytes", "bound_bytes"}}, "buffers": [...]}; every
    level L1, L2, L3 is present (0 bytes when nothing lives there)."""
    memory = {
        lv: {
            "arena_bytes": _int(module.attributes.get(f"training.arena_{lv}")),
            "bound_bytes": _int(module.attributes.get(f"training.arena_bound_{lv}")),
        }
        for lv in T.MEMORY_LEVELS
    }
    buffers: list[dict[str, Any]] = []
    seen: set[str] = set()
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
            continue
        attrs = fn.arg_attrs.data if fn.arg_attrs else ()
        for i, a in enumerate(fn.args):
            d = attrs[i].data if i < len(attrs) and isinstance(attrs[i], DictionaryAttr) else {}
            name = d.get("training.name")
            name = name.data if isinstance(name, StringAttr) else f"{fn.sym_name.data}.arg{i}"
            kind = d.get("training.kind")
            kind = kind.data if isinstance(kind, StringAttr) else "input"
            if name in seen or "training.offset" not in d:
                continue
            seen.add(name)
            buffers.append(
                {
                    "name": name,
                    "kind": KIND_LABEL.get(kind, kind),
                    "level": level_of(a.type),
                    "offset": _int(d["training.offset"]),
                    "bytes": nbytes(a.type),
                }
            )
        for op in fn.walk():
            if isinstance(op, T.ArenaViewOp):
                hint = op.result.name_hint or "tmp"
                buffers.append(
                    {
                        "name": f"{fn.sym_name.data}/{hint}",
                        "kind": "activation",
                        "level": op.level,
                        "offset": op.offset.value.data,
                        "bytes": nbytes(op.result.type),
                    }
                )
    return {"memory": memory, "buffers": buffers}
