"""l3-overlap{l2=BYTES}: L3 copies that fly while the cluster computes.

Runs after tiling-materialize (and dma-multibuffer, dma-decompose), before
arena-plan. An op whose L3 operands are one stage tile has them fetched,
waited for, computed on and stored back around the op at the top level of
its step function (no stage loop to prefetch in): the HyperRAM hop does not
overlap anything. This pass moves, in each step function
(deeploy_mlir/memory/overlap.py):

- each such L3 -> L2 fetch into a fresh L2 buffer above the compute op (or
  loop) before it, so that it is issued one op early (never above a store
  into its L3 source); its wait stays before the op that reads it;
- each wait on such an L2 -> L3 store below the next compute op (or loop),
  so that the store flies while that op computes.

The copies keep their order (the L3 engine runs its queue in issue order);
only the cluster waits later. The moved buffers live longer, so the L2 plan
may grow: with an `l2` budget (bytes, 0: none) all moves are tried at once,
and if the greedy L2 plan then exceeds the budget, one at a time in program
order, each kept only if the plan still fits. Moved fetches carry a
`dma.remark`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from deeploy_mlir.dialects.forms import BUFFER, MATERIALIZED, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.memory.buffers import step_functions
from deeploy_mlir.memory.overlap import Undo, overlap_moves
from deeploy_mlir.memory.probe import arena_size


@dataclass(frozen=True)
class L3Overlap(ModulePass):
    name = "l3-overlap"

    #: L2 budget in bytes the plan must keep fitting (0: none)
    l2: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.l2 < 0:
            raise DeeployError(f"l3-overlap: l2 must not be negative, got {self.l2}")
        require(op, self.name, BUFFER, MATERIALIZED)
        moves = [m for fn in step_functions(op) for m in overlap_moves(fn.body.block)]
        if not moves:
            return
        before = arena_size(op, "L2")
        undos: list[Undo] = [u for m in moves if (u := m()) is not None]
        if not self.l2 or arena_size(op, "L2") <= max(self.l2, before):
            return
        for u in reversed(undos):
            u()
        # one at a time: each move kept only while the plan fits
        for m in [m for fn in step_functions(op) for m in overlap_moves(fn.body.block)]:
            u = m()
            if u is not None and arena_size(op, "L2") > max(self.l2, before):
                u()
