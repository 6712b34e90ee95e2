"""tile-select{l1=BYTES l2=BYTES buffers=N fallback=BOOL solver=front|z3|untiled}: choose tiles.

For each buffer-form compute op, generically from its iteration space
(`IterationSpaceInterface`): one tile size per loop dim such that the tiles
of all its operands, times the buffer count, fit the L1 budget. Dims the op
needs whole (softmax class dim, reduction dims) stay whole; the last tile of
a dim may be ragged.

Spatial tiles with halos: the output rows and columns of conv2d, maxpool2d and
avgpool2d may tile; the input tile is then the window's footprint, (t - 1) *
stride + dilation * (k - 1) + 1 rows for t output rows (`Halo`), which the
footprint and the cycles count. They are offered only when the op does not fit
otherwise: first with whole planes (the problem of an op that fits stays as
small as before), then with rows free, then rows and columns.

Reduction tiles with accumulation: the reduction dims in
`IterationSpace.accumulate` (conv2d_grad, layer_norm_grad) may tile too, the
later tiles adding into the outputs; offered only when the free dims are not
enough, before spatial tiles, with the partial sums copied in again per tile
(`Operand.acc_dims`) and the dims a summed output does not index kept whole
(`summed_whole`). A conv2d_grad with dX and dW that does not fit with every
reduction whole is split into two ops (dX; dW and dB) first.

The objective is the cycles of the op's tile loops on the `board` as the
cycle model (deeploy_mlir/cost) runs the schedule tiling-materialize and
dma-multibuffer make of them: per variant (full tiles, ragged remainders,
window border runs) its own loop whose first fetch and last write-back are
exposed; per tile the kernel's compute and call cycles (the board's kernel
figures) and the copies (issue, setup, bytes over the bandwidth), overlapped
when double-buffered; ties go to fewer, larger tiles (`tiling.model.CostModel`).
L3 stage tiles are scored by the serial sum of their transfers.

With `buffers` > 1 each op's tiles are also chosen for one buffer (twice
the L1 per tile); when the cycle model finds those single-buffered tiles
faster than the overlapped ones (small tiles whose copies' issue and the
kernels' fixed costs outweigh the overlap; an op dma-multibuffer refuses
anyway), the op keeps them: `tile_buffers = 1` on its `tiling.tiled`, whose
tile loops tiling-materialize marks `#tiling.loop<tile, buffers = 1>` and
dma-multibuffer leaves single-buffered. So double buffering is never
modelled slower than single buffering at the same budget, op by op.
`fallback=false` turns that comparison off (every op keeps `buffers`), to
measure what the overlap alone gives (bench/gvsoc.py --roofline's
`forced-N`).

`solver=front` (the default) takes, per op, the combination of the
(footprint, cycles) front that fits with the fewest cycles, then tiles
(tiling/search.py): exact. `solver=z3` solves the same choice as a
pseudo-Boolean program in a fresh Z3 context under Z3's deterministic
resource limit `rlimit` (a count of the solver's steps, not a time: a search
stops at the same point on any machine and load); both give the same tiles
when Z3 proves its optimum. An op whose search may have missed its optimum
(Z3 stopped at its limit, or a large op's candidate sizes were thinned)
keeps the best tiles found and is listed in the module's
`tiling.stopped_early` (pairs of op and reason; the CLI prints a note for
each). `solver=untiled` is the baseline: every
tile is the whole tensor. An op that cannot fit even with the smallest tiles
is an error naming the op, the L1 it needs and the budget.

The L3 -> L2 hop: with an `l2` budget, an op with operands in L3 first gets
`outer` tiles -- the same solver over the L3 operands only, against what the
L2 plan leaves free (the budget minus the L2 arena without stages, divided by
`l3_buffers`) -- and its L1 tiles are then chosen within one outer tile. When
the whole L3 operands fit, the outer tiles are the whole dims.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Self

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.arg_spec import ArgSpec

from deeploy_mlir import progress
from deeploy_mlir.dialects import tiling
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, UNTILED, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.irutil import check_choices
from deeploy_mlir.memory.buffers import step_functions
from deeploy_mlir.memory.probe import arena_size
from deeploy_mlir.targets.boards import load_board
from deeploy_mlir.tiling.model import CostModel
from deeploy_mlir.tiling.search import DEFAULT_RLIMIT
from deeploy_mlir.tiling.select import Selector

#: the largest budget: a 32-bit target addresses 4 GiB
MAX_BUDGET = (1 << 32) - 1


def _l2_arena(module: ModuleOp) -> int:
    """The L2 arena of `module` before any stage buffer exists."""
    a = T.arena_of(module, "L2")
    if a is not None:
        return a.size_bytes
    return arena_size(module, "L2")


@dataclass(frozen=True)
class TileSelect(ModulePass):
    name = "tile-select"

    #: L1 bytes for the arena (tiles and their buffers)
    l1: int = 65536
    #: L1 bytes the caller keeps beside the arena for the cluster stacks
    #: (deeploy_mlir/targets/stacks.py): not in `l1`, named in the errors
    stacks: int = 0
    #: L2 budget in bytes (0 = unchecked). Operands in L3 are staged through
    #: L2 in tiles (the L3 -> L2 hop) that fit what the L2 arena leaves free.
    l2: int = 0
    buffers: int = 1
    #: buffers per L2 stage tile (2 when the L3 hop is double-buffered)
    l3_buffers: int = 1
    solver: Literal["front", "z3", "untiled"] = "front"
    #: the board whose DMA engines score the tiles (a shipped board's name or a
    #: board file's path): the cycle model's transfer cost on the engine
    #: between L2 and L1 (L1 tiles) and between L3 and L2 (stage tiles)
    board: str = "siracusa"
    #: with `buffers` > 1: keep an op's single-buffered tiles when the cycle
    #: model finds them faster (false: every op keeps `buffers`, for
    #: measuring what the overlap gives, bench/gvsoc.py's `forced-N`)
    fallback: bool = True
    #: with solver=z3, Z3's deterministic resource limit per solve (0 = none): a search that
    #: reaches it keeps the best tiles found, and the op is listed in
    #: `tiling.stopped_early`
    rlimit: int = DEFAULT_RLIMIT

    def _check_options(self) -> None:
        if self.solver not in ("front", "z3", "untiled"):
            raise DeeployError(
                f"tile-select: solver must be one of front, z3, untiled, got '{self.solver}'"
            )
        if self.l1 <= 0 or self.buffers < 1 or self.l3_buffers < 1:
            raise DeeployError(
                "tile-select: l1 must be positive and buffers and l3_buffers at least 1"
            )
        if self.l2 < 0:
            raise DeeployError(f"tile-select: l2 must not be negative, got {self.l2}")
        for what, v in (("l1", self.l1), ("l2", self.l2)):
            if v > MAX_BUDGET:
                raise DeeployError(
                    f"tile-select: {what} must be at most {MAX_BUDGET} (a 32-bit target "
                    f"addresses 4 GiB), got {v}"
                )
        if self.rlimit < 0:
            raise DeeployError(f"tile-select: rlimit must not be negative, got {self.rlimit}")

    def _selector(self) -> Selector:
        board = load_board(self.board)

        def model(a: str, b: str) -> CostModel | None:
            try:
                return CostModel.of(board.engine_between(a, b))
            except ValueError:
                return None

        l1 = model("L2", "L1")
        if l1 is None:
            raise DeeployError(f"tile-select: board '{board.name}' has no DMA engine L2 <-> L1")
        return Selector(
            self.l1,
            self.buffers,
            self.l3_buffers,
            self.solver,
            l1,
            model("L3", "L2"),
            self.rlimit,
            self.stacks,
            board.name,
            kernels=board,
        )

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        check_choices(cls, spec)
        return super().from_spec(spec)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self._check_options()
        require(op, self.name, BUFFER, UNTILED)
        stage_budget: int | None = None
        if self.l2:
            arena = _l2_arena(op)
            if arena > self.l2:
                raise DeeployError(
                    f"tile-select: the tensors need {arena} bytes of L2 but the L2 budget is "
                    f"{self.l2} bytes"
                )
            stage_budget = self.l2 - arena
        sel = self._selector()
        # with several buffers per tile: the single-buffered choice beside it
        single = (
            replace(sel, buffers=1, cache={})
            if self.buffers > 1 and self.solver != "untiled" and self.fallback
            else None
        )
        # with several L2 buffers per stage tile: the one-buffer stage tiles beside it
        one_stage = (
            replace(sel, l3_buffers=1, cache={})
            if self.l3_buffers > 1 and self.solver != "untiled"
            else None
        )
        stopped: list[Attribute] = []
        fns = step_functions(op)
        n_ops = sum(
            isinstance(o, T.TrainingComputeOp) and o.is_buffer_form
            for fn in fns
            for o in fn.body.block.ops
        )
        done = 0
        for fn in fns:
            for k, first in enumerate(list(fn.body.block.ops)):
                if not isinstance(first, T.TrainingComputeOp) or not first.is_buffer_form:
                    continue
                done += 1
                progress.update(f"tile selection: op {done}/{n_ops} {first.name}", done, n_ops)
                for o in sel.split(first):
                    hint = o.outs[0].name_hint
                    where = (
                        f"@{fn.sym_name.data}: the op writing %{hint}"
                        if hint
                        else (f"@{fn.sym_name.data}: op #{k}")
                    )
                    if not isinstance(o, T.IterationSpaceInterface):
                        raise DeeployError(
                            f"{where} ({o.name}) has no iteration space and cannot be tiled"
                        )
                    outer, stage_buffers, why_outer = sel.select_outer(o, where, stage_budget)
                    if one_stage is not None and outer is not None and stage_buffers > 1:
                        # one stage buffer's larger stage tiles, when the
                        # cycle model finds them faster than two overlapped
                        alt, _, why_alt = one_stage.select_outer(o, where, stage_budget)
                        if (
                            alt is not None
                            and alt != outer
                            and sel.stage_cycles(o, where, alt, 1)
                            < sel.stage_cycles(o, where, outer, stage_buffers)
                        ):
                            outer, stage_buffers, why_outer = alt, 1, why_alt
                    tiles, why = sel.select(o, where, outer)
                    kept = None
                    if single is not None:
                        # one buffer's larger tiles, when the cycle model
                        # finds them faster than two buffers' overlapped ones
                        alone, why1 = single.select(o, where, outer)
                        if single.cycles(o, alone, outer) < sel.cycles(o, tiles, outer):
                            tiles, why, kept = alone, why1, 1
                    reasons = [r for r in (why_outer and f"L3 stage tiles: {why_outer}", why) if r]
                    if reasons:
                        label = f"{o.name} writing %{hint} " if hint else f"{o.name} "
                        stopped.append(
                            ArrayAttr(
                                [
                                    StringAttr(f"{label}at @{fn.sym_name.data} #{k}"),
                                    StringAttr("; ".join(reasons)),
                                ]
                            )
                        )
                    anchor = o.next_op
                    assert anchor is not None  # the terminator follows every op
                    o.detach()
                    fewer = stage_buffers if stage_buffers < self.l3_buffers else None
                    tiled = tiling.TiledOp(o, tiles, kept or self.buffers, "L1", outer, fewer, kept)
                    Rewriter.insert_op(tiled, InsertPoint.before(anchor))
        # no timing here: the IR is the same from one run to the next
        tiling.set_stopped_early(op, stopped)
