"""l3-overlap{l2=BYTES forward=true overlap=true}: L3 copies that need not
happen, and L3 copies that fly while the cluster computes.

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

Before the moves (`forward=true`, the default; deeploy_mlir/memory/forward.py):
a fetch that a top-level stage loop repeats unchanged each iteration (the
same L3 box into the same L2 buffer, nothing else in the loop writing
either) is issued once, above the loop; a top-level fetch of an L3 box that
an L2 buffer still holds (the last copy of that L3 storage moved the same
box to or from it) reads that buffer instead; and a store that the next
copy of its L3 storage overwrites with the same box, unread, goes
(MobileNetV1's conv output stored, fetched back for its in-place relu,
stored again and fetched for the next conv).

The copies keep their order (the L3 engine runs its queue in issue order);
only the cluster waits later. `overlap=false` leaves the moves out (the
default pipeline's single buffering: forwarding changes which copies run,
not when the cluster waits for them, so single and double buffering of the
same tiles move the same copies). The moved buffers live longer, so the L2
plan may grow: with an `l2` budget (bytes, 0: none) all moves are tried at once,
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
from deeploy_mlir.memory.forward import (
    drop_dead_stores,
    forward_candidates,
    forward_fetch,
    hoist_invariant_fetches,
)
from deeploy_mlir.memory.overlap import Undo, overlap_moves
from deeploy_mlir.memory.probe import arena_size


@dataclass(frozen=True)
class L3Overlap(ModulePass):
    name = "l3-overlap"

    #: L2 budget in bytes the plan must keep fitting (0: none)
    l2: int = 0
    #: first hoist loop-invariant fetches out of stage loops, drop the
    #: fetches of bytes an L2 buffer holds and the stores a later store
    #: overwrites unread (memory/forward.py)
    forward: bool = True
    #: then issue one-stage-tile fetches one op early and wait for their
    #: stores one op late (false: forwarding only)
    overlap: bool = True

    def _forward(self, op: ModuleOp) -> None:
        """Forwarding: every fetch that can, then the stores left dead; when
        the L2 plan then exceeds the budget (a forwarded buffer lives from
        the first copy to the last reader: across the whole step for a
        weight fetched in the forward pass and again in the backward pass),
        one fetch at a time in program order, each kept only while the plan
        fits."""
        limit = max(self.l2, arena_size(op, "L2")) if self.l2 else 0
        fns = step_functions(op)
        done = [
            f for fn in fns for c in forward_candidates(fn.body.block) if (f := forward_fetch(c))
        ]
        if not done:
            return
        if limit and arena_size(op, "L2") > limit:
            for f in reversed(done):
                f.undo()
            done = []
            for fn in fns:
                for c in forward_candidates(fn.body.block):
                    f = forward_fetch(c)
                    if f is not None and arena_size(op, "L2") > limit:
                        f.undo()
                    elif f is not None:
                        done.append(f)
        for f in done:
            f.commit()
        for fn in fns:
            drop_dead_stores(fn.body.block)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.l2 < 0:
            raise DeeployError(f"l3-overlap: l2 must not be negative, got {self.l2}")
        require(op, self.name, BUFFER, MATERIALIZED)
        if self.forward:
            for fn in step_functions(op):
                hoist_invariant_fetches(fn.body.block)
            self._forward(op)
        if not self.overlap:
            return
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
