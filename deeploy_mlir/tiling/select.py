"""Per-op tile selection: what tile-select decides for one compute op.

A `Selector` holds tile-select's options (budgets, buffer counts, solver,
cost model, Z3's resource limit) and answers, per op: whether a conv2d_grad
splits into its dX and dW/dB parts (`split`), the L3 -> L2 stage tiles of an
op with operands in L3 (`select_outer`), and its L1 tiles (`select`), each
with why its search stopped before proving its optimum. Problems of one
shape share their answer (a cache per selector). Errors name the op, what it
needs and the budget.

A library module: tile-select imports it; it imports the tiling model and
search, xDSL's rewriter and the training dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError, L1BudgetError
from deeploy_mlir.targets.boards import Board
from deeploy_mlir.tiling.model import (
    CostModel,
    Halo,
    Kernel,
    Operand,
    footprint,
    halos,
    in_l3,
    summed_whole,
    tile_operands,
    whole_dims,
    with_halos,
)
from deeploy_mlir.tiling.search import DEFAULT_RLIMIT, solve_front, solve_z3

Solver = Literal["front", "z3", "untiled"]


@dataclass
class Selector:
    """Tile choices under tile-select's options, one op at a time."""

    #: L1 bytes for the arena (tiles and their buffers)
    l1: int
    buffers: int = 1
    #: buffers per L2 stage tile
    l3_buffers: int = 1
    solver: Solver = "front"
    model: CostModel = field(default_factory=CostModel)
    #: L3 -> L2 model: the transfers of the stage tiles (None: the board
    #: has no L3 engine)
    stage_model: CostModel | None = field(default_factory=CostModel)
    rlimit: int = DEFAULT_RLIMIT
    #: L1 bytes kept beside the arena for the cluster stacks (named in errors)
    stacks: int = 0
    #: the board the models come from (named in errors)
    board: str = ""
    #: the board whose kernel figures score L1 tiles with their compute (None:
    #: the transfers alone)
    kernels: Board | None = None
    #: solutions by problem: ops of one shape share their tiles
    cache: dict[object, tuple[list[int], str]] = field(
        default_factory=dict[object, tuple[list[int], str]]
    )

    def _stacks_note(self) -> str:
        if not self.stacks:
            return ""
        return f" ({self.l1 + self.stacks} minus {self.stacks} of cluster stacks)"

    def split(self, o: T.TrainingComputeOp) -> list[T.TrainingComputeOp]:
        """A conv2d_grad with dX and dW (dB) whose reduction dims would have to
        tile (its smallest tiles with every reduction whole do not fit) becomes
        two ops, one for dX and one for dW (dB), each of which may accumulate
        over its own reduction dims; any other op stays as it is."""
        if not isinstance(o, T.Conv2dGradOp) or self.solver == "untiled":
            return [o]
        if "dX" not in o.grads() or len(o.grads()) == 1:
            return [o]
        ops = tile_operands(o)
        dims = list(o.iteration_space().dims)
        _, need = self._fitting_whole(o, dims, ops, halos(o, dims))
        if need <= self.l1:
            return [o]
        parts = o.split()
        for p in parts:
            Rewriter.insert_op(p, InsertPoint.before(o))
        Rewriter.erase_op(o)
        return list(parts)

    def select_outer(
        self, o: T.TrainingComputeOp, where: str, stage_budget: int | None
    ) -> tuple[list[int] | None, int, str]:
        """Tiles of the L3 -> L2 hop, the stage buffers per tile and why the
        solve stopped before proving its optimum ("" when it did): None when
        no operand is in L3; the whole dims when the whole tensors fit the L2
        left free (or L2 is unbudgeted). When `l3_buffers` stage tiles of the
        smallest size do not fit but one does, the op keeps one (its L3 hop is
        then single-buffered, and dma-multibuffer says so)."""
        assert isinstance(o, T.IterationSpaceInterface)
        ops3 = tile_operands(o, in_l3)
        if not ops3:
            return None, self.l3_buffers, ""
        space = o.iteration_space()
        dims = list(space.dims)
        if stage_budget is None or footprint(dims, ops3, self.l3_buffers) <= stage_budget:
            return dims, self.l3_buffers, ""
        # stage tiles keep the spatial dims whole (L1 tiles may still split them)
        whole = whole_dims(o) | {w.out_dim for w in space.tiled_windows()}
        if space.accumulate:
            # and, where they fit, the dims an output summed over an
            # accumulating reduction does not index: the L1 tiles may then
            # accumulate within a stage tile (a stage split of such a dim
            # would add the same terms once per stage tile; `select` keeps
            # the reductions whole inside a stage tile that splits one)
            summed = whole | summed_whole(space, tile_operands(o))
            least = [size if d in summed else 1 for d, size in enumerate(dims)]
            if footprint(least, ops3, 1) <= stage_budget:
                whole = summed
        smallest = [size if d in whole else 1 for d, size in enumerate(dims)]
        buffers = self.l3_buffers
        if footprint(smallest, ops3, buffers) > stage_budget:
            buffers = 1
        need = footprint(smallest, ops3, buffers)
        if need > stage_budget:
            raise DeeployError(
                f"{where} ({o.name}) needs at least {need} bytes of L2 to stage its L3 "
                f"operands (smallest tiles, {buffers} buffer(s)); the L2 budget "
                f"leaves {stage_budget} bytes free"
            )
        budget = stage_budget // buffers
        if self.stage_model is None:
            raise DeeployError(
                f"{where} ({o.name}) has operands in L3 but board '{self.board}' has no DMA "
                "engine between L3 and L2"
            )
        key = ("L3", tuple(dims), frozenset(whole), tuple(ops3), budget, self.stage_model)
        if key not in self.cache:
            self.cache[key] = self._solve(dims, whole, ops3, budget, self.stage_model)
        tiles, why = self.cache[key]
        return list(tiles), buffers, why

    def stage_cycles(
        self, o: T.TrainingComputeOp, where: str, outer: list[int], buffers: int
    ) -> int:
        """An estimate of `o`'s cycles with stage tiles `outer` and `buffers`
        L2 buffers per stage tile: the stage tiles' L3 transfers T (serial,
        the stage model), the compute C of the L1 tile loops of every stage
        tile (each as the first); one buffer: T + C; two: the transfers
        overlap the compute but the first fetch, max(T, C) + T / stage tiles."""
        assert isinstance(o, T.IterationSpaceInterface) and self.stage_model is not None
        dims = list(o.iteration_space().dims)
        n = 1
        for d, t in zip(dims, outer, strict=True):
            n *= -(-d // t)
        t3 = self.stage_model.cycles(dims, outer, tile_operands(o, in_l3))
        tiles, _ = self.select(o, where, outer)
        c = n * self.cycles(o, tiles, outer)
        return max(t3, c) + t3 // n if buffers > 1 else t3 + c

    def _solve(
        self,
        dims: Sequence[int],
        whole: set[int],
        ops: Sequence[Operand],
        budget: int,
        model: CostModel,
        hs: Sequence[Halo] = (),
    ) -> tuple[list[int], str]:
        if self.solver == "z3":
            return solve_z3(dims, whole, ops, budget, model, self.rlimit, hs)
        return solve_front(dims, whole, ops, budget, model, hs)

    def _fitting_whole(
        self,
        o: T.TrainingComputeOp,
        dims: Sequence[int],
        ops: Sequence[Operand],
        hs: Sequence[Halo],
    ) -> tuple[set[int], int]:
        """The dims kept whole and the smallest footprint: dims are freed only
        as far as needed, so that the problem of an op that fits stays small
        -- first the free dims alone, then the reduction dims that accumulate
        (outputs copied in and out again per tile), then spatial tiles with
        halos, rows before columns."""
        assert isinstance(o, T.IterationSpaceInterface)
        space = o.iteration_space()
        windows = space.tiled_windows()
        outs = {w.out_dim for w in windows}
        steps: list[set[int]] = []
        plain_acc = set(space.accumulate) - outs
        if plain_acc:
            steps.append(plain_acc)
        steps += [{w.out_dim} for w in windows]
        base = whole_dims(o) - set(space.accumulate)
        # inside a stage tile (`dims` below the op's) that splits a dim some
        # summed output does not index, the reductions stay whole
        if any(dims[d] < space.dims[d] for d in summed_whole(space, ops)):
            base |= set(space.accumulate)
            steps = [s - base for s in steps if s - base]
        whole: set[int] = set()
        need = 0
        for k in range(len(steps) + 1):
            whole = base.union(*steps[k:])
            if set(space.accumulate) - whole:
                whole |= summed_whole(space, ops)
            smallest = with_halos([size if d in whole else 1 for d, size in enumerate(dims)], hs)
            need = footprint(smallest, ops, self.buffers)
            if need <= self.l1:
                break
        return whole, need

    def select(
        self,
        o: T.TrainingComputeOp,
        where: str,
        outer: list[int] | None = None,
    ) -> tuple[list[int], str]:
        """L1 tiles; with `outer`, tiles of one L2 stage tile (at most its
        sizes); and why the solve stopped before proving its optimum ("" when
        it did)."""
        assert isinstance(o, T.IterationSpaceInterface)
        space = o.iteration_space()
        dims = list(space.dims) if outer is None else list(outer)
        ops = tile_operands(o)
        budget = self.l1 // self.buffers
        if self.solver == "untiled":
            need = footprint(dims, ops, self.buffers)
            if need > self.l1:
                raise L1BudgetError(
                    f"{where} ({o.name}) needs {need} bytes of L1 untiled; the L1 budget is "
                    f"{self.l1} bytes{self._stacks_note()}",
                    need,
                )
            return dims, ""
        hs = halos(o, dims)
        whole, need = self._fitting_whole(o, dims, ops, hs)
        if need > self.l1:
            spatial = ", spatial ones with their halos" if space.tiled_windows() else ""
            acc = ", accumulating over the reduction" if space.accumulate else ""
            raise L1BudgetError(
                f"{where} ({o.name}) needs at least {need} bytes of L1 (smallest tiles"
                f"{spatial}{acc}, {self.buffers} buffer(s)); the L1 budget is {self.l1} bytes"
                f"{self._stacks_note()}",
                need,
            )
        model = self.model
        if self.kernels is not None:
            model = replace(model, kernel=Kernel.of(o, self.kernels, self.buffers))
        key = (tuple(dims), frozenset(whole), tuple(ops), budget, model, hs)
        if key not in self.cache:
            self.cache[key] = self._solve(dims, whole, ops, budget, model, hs)
        tiles, why = self.cache[key]
        return list(tiles), why

    def cycles(self, o: T.TrainingComputeOp, tiles: Sequence[int], outer: list[int] | None) -> int:
        """The cycle model's cycles of `o`'s tile loops at `tiles` with this
        selector's buffers (overlapped when 2 and dma-multibuffer takes the
        op), the objective `select` minimizes."""
        assert isinstance(o, T.IterationSpaceInterface)
        dims = list(o.iteration_space().dims) if outer is None else list(outer)
        model = self.model
        if self.kernels is not None:
            model = replace(model, kernel=Kernel.of(o, self.kernels, self.buffers))
        return model.cycles(dims, tiles, tile_operands(o), halos(o, dims))
