"""memory-home{l2=BYTES weights=L2|L3 home=L2|L3 stage=whole|tiled prefetch}:
which tensors live in L3.

Runs on buffer-form IR (after training-bufferize, before arena-plan). Every
function argument (parameters, gradient buffers, inputs, outputs: the
tensors that live across a step) starts in L2. `weights=L3` moves every
parameter to L3; `home=L3` every argument (and, with `stage=tiled`, every
temporary) whose size the L3 engines can move (a multiple of 4 bytes: the
accumulation reset flag stays in L2). With an `l2` budget, while the L2 arena
would not fit it, the largest tensor still in L2 moves to L3 (an argument keeps
one level in every function it appears in: the optimizer step shares the
training step's buffers; temporaries are candidates only with `stage=tiled`).

Kernels never touch L3. With `stage=whole` this pass stages each L3 tensor
through a whole-tensor L2 buffer around each op that uses it -- an L3 -> L2
`dma.copy` and its wait before the op if the op reads it, an L2 -> L3 copy and
its wait after the op if the op writes it -- and tiling then moves tiles of
the staged tensor between L2 and L1. With `stage=tiled` (what `lower` uses when
it tiles) the ops keep their L3 operands and tile-select stages them through
L2 in tiles (`tiling.tiled` `outer` sizes), so a tensor larger than the whole
L2 budget can be used; the budget check then counts the smallest stage tiles.
The staging buffers are ordinary L2 allocations: arena-plan overlaps them like
any other temporary, and their bytes count against the budget. With
`prefetch=true` (whole staging) each L3 fetch is issued one op earlier, so
that it flies while the previous op computes (its stage buffer then lives one
op longer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.passes import ModulePass

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, UNPLANNED, UNTILED, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.memory.buffers import arg_kind, arg_name, nbytes, step_functions
from deeploy_mlir.memory.probe import arena_size
from deeploy_mlir.memory.staging import (
    move_temporary_to_l3,
    move_to_l3,
    prefetch_l3,
    temporaries,
)
from deeploy_mlir.tiling.model import footprint, in_l3, tile_operands, whole_dims


def _l2_arena(module: ModuleOp, prefetch: bool) -> int:
    """The L2 arena `module` will need (with the fetches moved when `prefetch`)."""
    if not prefetch:
        return arena_size(module, "L2")
    probe = module.clone()
    for fn in step_functions(probe):
        prefetch_l3(fn.body.block)
    return arena_size(probe, "L2")


def _min_stage(module: ModuleOp) -> int:
    """The most L2 any op needs to stage its L3 operands in the smallest tiles."""
    most = 0
    for fn in step_functions(module):
        for o in fn.body.block.ops:
            if not isinstance(o, T.TrainingComputeOp) or not isinstance(
                o, T.IterationSpaceInterface
            ):
                continue
            ops3 = tile_operands(o, in_l3)
            if ops3:
                whole = whole_dims(o)
                dims = o.iteration_space().dims
                smallest = [n if d in whole else 1 for d, n in enumerate(dims)]
                most = max(most, footprint(smallest, ops3, 1))
    return most


@dataclass(frozen=True)
class MemoryHome(ModulePass):
    name = "memory-home"

    #: L2 budget in bytes (0: no budget, only `weights` decides)
    l2: int = 0
    weights: Literal["L2", "L3"] = "L2"
    #: issue each L3 fetch one op early (double buffering of the L3 hop)
    prefetch: bool = False
    #: L2: only `weights` and `l2` decide; L3: every argument lives in L3
    home: Literal["L2", "L3"] = "L2"
    #: whole: stage whole tensors through L2 here; tiled: leave the ops on
    #: their L3 operands for tile-select to stage in tiles (the L3 -> L2 hop)
    stage: Literal["whole", "tiled"] = "whole"

    def _check_options(self) -> None:
        if self.weights not in ("L2", "L3"):
            raise DeeployError(f"memory-home: weights must be L2 or L3, got '{self.weights}'")
        if self.l2 < 0:
            raise DeeployError(f"memory-home: l2 must not be negative, got {self.l2}")
        if self.home not in ("L2", "L3"):
            raise DeeployError(f"memory-home: home must be L2 or L3, got '{self.home}'")
        if self.stage not in ("whole", "tiled"):
            raise DeeployError(f"memory-home: stage must be whole or tiled, got '{self.stage}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self._check_options()
        require(op, self.name, BUFFER, UNPLANNED, UNTILED)
        whole = self.stage == "whole"
        sizes: dict[str, int] = {}
        kinds: dict[str, str] = {}
        for fn in step_functions(op):
            for i, a in enumerate(fn.body.block.args):
                if isinstance(a.type, MemRefType):
                    name = arg_name(fn, i)
                    sizes[name] = nbytes(a.type)
                    kinds[name] = arg_kind(fn, i)
        if self.home == "L3":
            # flags and other tensors of a size the L3 engines cannot move
            # (not a multiple of 4 bytes) stay in L2
            chosen = {n for n in kinds if sizes[n] % 4 == 0}
        elif self.weights == "L3":
            chosen = {n for n, k in kinds.items() if k == "param"}
        else:
            chosen = set()
        if chosen:
            move_to_l3(op, chosen, whole)
        if self.home == "L3" and not whole:
            for alloc in temporaries(op).values():
                if nbytes(alloc.memref.type) % 4 == 0:
                    move_temporary_to_l3(alloc)
        if self.l2:
            self._fit(op, chosen, sizes)
        if self.prefetch and whole:
            for fn in step_functions(op):
                prefetch_l3(fn.body.block)

    def _fit(self, op: ModuleOp, chosen: set[str], sizes: dict[str, int]) -> None:
        whole = self.stage == "whole"
        need = _l2_arena(op, self.prefetch and whole)
        if not whole:
            need += _min_stage(op)
        while need > self.l2:
            left = sorted((n for n in sizes if n not in chosen), key=lambda n: (-sizes[n], n))
            temps = {} if whole else temporaries(op)
            # tiled staging: the largest tensor, argument or temporary, moves
            big_temp = max(
                (n for n, a in temps.items() if nbytes(a.memref.type) % 4 == 0),
                key=lambda n: (nbytes(temps[n].memref.type), n),
                default=None,
            )
            if big_temp is not None and (
                not left or nbytes(temps[big_temp].memref.type) > sizes[left[0]]
            ):
                move_temporary_to_l3(temps[big_temp])
            elif not left:
                raise DeeployError(
                    f"memory-home: the L2 budget of {self.l2} bytes is too small: with every "
                    f"tensor that can live in L3 there the L2 arena still needs {need} bytes"
                )
            else:
                chosen.add(left[0])
                move_to_l3(op, {left[0]}, whole)
            need = _l2_arena(op, self.prefetch and whole)
            if not whole:
                need += _min_stage(op)
