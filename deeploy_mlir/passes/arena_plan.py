"""arena-plan{level=L2 strategy=greedy|exact capacity=N}: one static arena per memory level.

`greedy` (largest first, lowest free offset) is fast for any graph; `exact`
asks Z3 for the smallest arena (for small graphs; it records
`training.arena_proven_<level>` = 1 when the minimum is proven, 0 when the
search reached `rlimit`, Z3's deterministic resource limit -- a count of
solver steps, not a time, so the plan is the same on any machine and load --
and the best plan found is used).

Lifetimes follow the training rules: the arguments of the step functions
(graph inputs, parameters, gradient buffers, outputs) live the whole step, and
an argument of @optimizer_step with the name of an argument of @training_step
shares its buffer (parameters and gradients are not copied between the two).
Buffers made by `memref.alloc` live from their allocation to their last use;
the two functions run one after the other, so their temporaries may share
space. Zero-sized buffers take no space.

The pass replaces each `memref.alloc` of `level` by a `training.arena_view` at
its offset, gives each argument a `training.offset`, and records on the module
`training.arena_<level>` (bytes planned) and `training.arena_bound_<level>`
(the peak of bytes live at once).

With a `capacity`, an arena over it is the one-line budget error (`stacks`:
the L1 the cluster stacks take beside an L1 arena's capacity, named in it;
`name_option`: name the command-line option of the budget, --l1/--l2/--l3).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.memory.planner import (
    DEFAULT_RLIMIT,
    Buffer,
    check_no_overlap,
    lower_bound,
    plan_exact,
    plan_greedy,
)


def nbytes(t: Attribute) -> int:
    n = T.elem_bytes(t)
    for d in T.shape_of(t):
        n *= d
    return n


def level_of(t: Attribute) -> str | None:
    if isinstance(t, MemRefType) and isinstance(t.memory_space, StringAttr):
        return t.memory_space.data
    return None


def _kind(fn: func.FuncOp, i: int) -> str:
    if fn.arg_attrs is None:
        return "input"
    a = fn.arg_attrs.data[i].data.get("training.kind")  # type: ignore[attr-defined]
    return a.data if isinstance(a, StringAttr) else "input"


def _name(fn: func.FuncOp, i: int) -> str:
    a = fn.arg_attrs.data[i].data.get("training.name") if fn.arg_attrs else None  # type: ignore[attr-defined]
    return a.data if isinstance(a, StringAttr) else f"{fn.sym_name.data}.arg{i}"


@dataclass(frozen=True)
class ArenaPlan(ModulePass):
    name = "arena-plan"

    level: Literal["L1", "L2", "L3"] = "L2"
    strategy: Literal["greedy", "exact"] = "greedy"
    #: capacity of the level in bytes (0 = unchecked)
    capacity: int = 0
    #: L1 bytes the cluster stacks take beside `capacity` (named in the error)
    stacks: int = 0
    #: name the command-line option of the budget (--l1, --l2, --l3) in the error
    name_option: bool = False
    #: `exact`: Z3's resource limit (0 = none)
    rlimit: int = DEFAULT_RLIMIT

    def _check_options(self) -> None:
        if self.level not in T.MEMORY_LEVELS:
            raise DeeployError(f"arena-plan: level must be one of L1, L2, L3, got '{self.level}'")
        if self.strategy not in ("greedy", "exact"):
            raise DeeployError(
                f"arena-plan: strategy must be 'greedy' or 'exact', got '{self.strategy}'"
            )
        if self.capacity < 0:
            raise DeeployError(f"arena-plan: capacity must not be negative, got {self.capacity}")
        if self.stacks < 0:
            raise DeeployError(f"arena-plan: stacks must not be negative, got {self.stacks}")
        if self.rlimit < 0:
            raise DeeployError(f"arena-plan: rlimit must not be negative, got {self.rlimit}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self._check_options()
        require(op, self.name, BUFFER)
        fns = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        # time = the op's place in a walk of the function (nested ops included)
        lengths = [sum(1 for _ in _walk(f)) for f in fns]
        total_time = sum(lengths) + 1
        buffers: dict[str, Buffer] = {}
        args: list[tuple[func.FuncOp, int, str]] = []
        allocs: list[tuple[memref.AllocOp, str]] = []
        t0 = 0
        for fn, n in zip(fns, lengths, strict=True):
            block = fn.body.blocks.first
            assert block is not None
            for i, a in enumerate(block.args):
                if level_of(a.type) != self.level:
                    continue
                name = _name(fn, i)
                if name not in buffers:
                    buffers[name] = Buffer(
                        name, nbytes(a.type), 0, total_time, _align(a.type), _kind(fn, i)
                    )
                args.append((fn, i, name))
            index = {o: t0 + k for k, o in enumerate(_walk(fn))}
            for o in _walk(fn):
                if isinstance(o, memref.AllocOp) and level_of(o.memref.type) == self.level:
                    key = f"{fn.sym_name.data}/%{o.memref.name_hint or 'tmp'}#{index[o]}"
                    end = _last_use(o, index) + 1
                    buffers[key] = Buffer(
                        key, nbytes(o.memref.type), index[o], end, _align(o.memref.type)
                    )
                    allocs.append((o, key))
            t0 += n
        bl = list(buffers.values())
        if not bl and self.level != "L2":
            return  # nothing lives in this level: no arena
        if self.strategy == "exact":
            offsets, size, proven = plan_exact(bl, self.rlimit)
            op.attributes[f"training.arena_proven_{self.level}"] = IntegerAttr(int(proven), i64)
        else:
            offsets, size = plan_greedy(bl)
        problems = check_no_overlap(bl, offsets)
        assert not problems, problems
        if self.capacity and size > self.capacity:
            raise DeeployError(self._over_budget(size))
        for fn, i, name in args:
            attrs = (
                list(fn.arg_attrs.data)
                if fn.arg_attrs is not None
                else [DictionaryAttr({}) for _ in fn.args]
            )
            d = dict(attrs[i].data)  # type: ignore[attr-defined]
            d["training.offset"] = IntegerAttr(offsets[name], i64)
            attrs[i] = DictionaryAttr(d)
            fn.arg_attrs = ArrayAttr(attrs)
        for o, key in allocs:
            view = T.ArenaViewOp(offsets[key], o.memref.type)  # type: ignore[arg-type]
            Rewriter.replace_op(o, view)
        op.attributes[f"training.arena_{self.level}"] = IntegerAttr(size, i64)
        op.attributes[f"training.arena_bound_{self.level}"] = IntegerAttr(lower_bound(bl), i64)

    def _over_budget(self, size: int) -> str:
        lv, cap = self.level, self.capacity
        stacks = self.stacks if lv == "L1" else 0
        note = f" ({cap + stacks} minus {stacks} of cluster stacks)" if stacks else ""
        option = f" (--{lv.lower()})" if self.name_option else ""
        return f"the {lv} arena needs {size} bytes but the {lv} budget is {cap} bytes{note}{option}"


def _align(t: Attribute) -> int:
    return 8 if str(T.elem_of(t)) == "i64" else 4


def _walk(fn: func.FuncOp) -> Iterator[Operation]:
    """The ops of `fn`'s body in program order, nested ones included."""
    block = fn.body.blocks.first
    assert block is not None
    for o in block.ops:
        yield from o.walk()


def _last_use(alloc: memref.AllocOp, index: dict[Operation, int]) -> int:
    """The time of the last op during which `alloc`'s buffer is live: a use
    inside a loop (or any region) keeps it live until the end of the op that
    holds the use in the alloc's own block -- every iteration reads it.
    A buffer allocated inside a loop body lives within one iteration."""
    block = alloc.parent_block()
    end = index[alloc]
    for u in alloc.memref.uses:
        o: Operation | None = u.operation
        while o is not None and o.parent_block() is not block:
            o = o.parent_op()
        assert o is not None, "a use outside the block of its alloc"
        end = max(end, max(index[n] for n in o.walk()))
    return end
