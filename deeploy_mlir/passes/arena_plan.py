"""arena-plan{level=L2 strategy=greedy|exact capacity=N}: one static arena per memory level.

`greedy` (largest first, lowest free offset) is fast for any graph; `exact`
asks Z3 for the smallest arena (for small graphs; its
`#training.arena<..., proven = true>` says the minimum is proven, `false` that the
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
its offset, gives each argument its offset (in its `#training.arg`), and records
on the module `training.arena_<level> = #training.arena<size = bytes planned,
bound = the peak of bytes live at once>`.

With a `capacity`, an arena over it is the one-line budget error (`stacks`:
the L1 the cluster stacks take beside an L1 arena's capacity, named in it;
`name_option`: name the command-line option of the budget, --l1/--l2/--l3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ModuleOp,
)
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.memory.buffers import level_of, nbytes
from deeploy_mlir.memory.planner import (
    DEFAULT_RLIMIT,
    check_no_overlap,
    lower_bound,
    plan_exact,
    plan_greedy,
)
from deeploy_mlir.memory.probe import arena_buffers

__all__ = ["ArenaPlan", "level_of", "nbytes"]


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
        found = arena_buffers(op, self.level)
        buffers, args, allocs = found.buffers, found.args, found.allocs
        bl = list(buffers.values())
        if not bl and self.level != "L2":
            return  # nothing lives in this level: no arena
        if self.strategy == "exact":
            offsets, size, proven = plan_exact(bl, self.rlimit)
        else:
            offsets, size = plan_greedy(bl)
            proven = None
        problems = check_no_overlap(bl, offsets)
        assert not problems, problems
        if self.capacity and size > self.capacity:
            raise DeeployError(self._over_budget(size))
        for fn, i, name in args:
            T.set_arg_offset(fn, i, offsets[name])
        for o, key in allocs:
            view = T.ArenaViewOp(offsets[key], o.memref.type)  # type: ignore[arg-type]
            Rewriter.replace_op(o, view)
        T.set_arena(op, self.level, T.ArenaAttr(size, lower_bound(bl), proven))

    def _over_budget(self, size: int) -> str:
        lv, cap = self.level, self.capacity
        stacks = self.stacks if lv == "L1" else 0
        note = f" ({cap + stacks} minus {stacks} of cluster stacks)" if stacks else ""
        option = f" (--{lv.lower()})" if self.name_option else ""
        return f"the {lv} arena needs {size} bytes but the {lv} budget is {cap} bytes{note}{option}"
