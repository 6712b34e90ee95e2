"""tile-select{l1=BYTES l2=BYTES buffers=N solver=z3|untiled}: choose every op's tiles.

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

The objective is the estimated cycles of the op's tile loop: per tile, one
transfer per operand tile (setup cycles each) plus the tile bytes over the
bandwidth; ties go to fewer, larger tiles. Z3 solves it per op, in a fresh
Z3 context under Z3's deterministic resource limit `rlimit` (a count of the
solver's steps, not a time: a search stops at the same point on any machine
and load, and the same options always give the same tiles). An op whose
solve stopped before proving its optimum keeps the best tiles found and is
listed in the module's `tiling.stopped_early` (pairs of op and reason; the
CLI prints a note for each). `solver=untiled` is the baseline: every
tile is the whole tensor. An op that cannot fit even with the smallest tiles
is an error naming the op, the L1 it needs and the budget.

The L3 -> L2 hop: with an `l2` budget, an op with operands in L3 first gets
`outer` tiles -- the same solver over the L3 operands only, against what the
L2 plan leaves free (the budget minus the L2 arena without stages, divided by
`l3_buffers`) -- and its L1 tiles are then chosen within one outer tile. When
the whole L3 operands fit, the outer tiles are the whole dims.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir import progress
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, UNTILED, require
from deeploy_mlir.dialects.tiling import TiledOp
from deeploy_mlir.errors import DeeployError

#: the largest budget: a 32-bit target addresses 4 GiB
MAX_BUDGET = (1 << 32) - 1

#: on a tiling.tiled (and its stage loops): fewer stage buffers than asked
#: for fit the free L2, so its L3 hop stays single-buffered
STAGE_BUFFERS = "tiling.stage_buffers"

#: on the module: one [op, reason] pair of strings per op whose tile search
#: stopped before proving its optimum (empty when every search finished)
STOPPED_EARLY = "tiling.stopped_early"

#: Z3's resource limit per tile-select solve: a count of solver steps, the
#: same on every machine and load. The examples' and Deeploy's graphs need at
#: most ~15,000 per solve, a front of 3,000 combinations ~300,000; this is
#: about 5 s of solving on one 2020s x86 core (the wall-clock limit it replaces)
DEFAULT_RLIMIT = 5_000_000

#: tile-size combinations: one row per combination, one column per loop dim
#: (the cost model scores every row at once; one combination is one row)
Combos = NDArray[np.int64]


def as_combos(tiles: Sequence[int]) -> Combos:
    """One combination as a one-row `Combos`."""
    return np.asarray([tiles], dtype=np.int64).reshape(1, len(tiles))


@dataclass(frozen=True)
class Operand:
    """One distinct tile buffer of an op: which loop dims index it, element size,
    and whether it is copied in, out, or both."""

    dims: tuple[int | None, ...]
    elem_bytes: int
    copy_in: bool
    copy_out: bool
    #: an output that the op adds into when one of these (accumulating
    #: reduction) dims tiles: its tiles are then also copied in
    acc_dims: tuple[int, ...] = ()

    def tile_elems(self, t: Combos) -> NDArray[np.int64]:
        """Elements of its tile, per combination."""
        elems = np.ones(len(t), dtype=np.int64)
        for d in self.dims:
            if d is not None:
                elems *= t[:, d]
        return elems

    def moves(self, dims: Sequence[int], t: Combos) -> NDArray[np.int64]:
        """Transfers per tile and combination: in, out, and in again when it
        accumulates (one of its `acc_dims` tiles)."""
        moves = np.full(len(t), int(self.copy_in) + int(self.copy_out), dtype=np.int64)
        if self.acc_dims and not self.copy_in:
            acc = list(self.acc_dims)
            moves += np.any(t[:, acc] < np.asarray(dims, dtype=np.int64)[acc], axis=1)
        return moves


def map_dims(m: AffineMap) -> tuple[int | None, ...]:
    return tuple(r.position if isinstance(r, AffineDimExpr) else None for r in m.results)


def in_l3(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, MemRefType) and t.memory_space == StringAttr("L3")


def tile_operands(
    op: T.TrainingComputeOp, only: Callable[[SSAValue], bool] | None = None
) -> list[Operand]:
    """The distinct (value, index map) pairs of `op`: an operand read and written
    in place, or read twice the same way, is one tile buffer. `only` keeps the
    values it accepts (e.g. the L3 ones, staged through L2). An input the
    kernels do not read (`IterationSpace.unread`) has no tile buffer."""
    assert isinstance(op, T.IterationSpaceInterface)
    space = op.iteration_space()
    values: list[SSAValue] = [*op.ins, *op.outs]
    unread = set(stand_ins(op))
    seen: dict[tuple[SSAValue, tuple[int | None, ...]], int] = {}
    out: list[Operand] = []
    for i, (v, m) in enumerate(zip(values, space.maps, strict=True)):
        if (only is not None and not only(v)) or i in unread:
            continue
        dims = map_dims(m)
        is_out = i >= len(op.ins)
        acc = tuple(sorted(space.accumulate - set(dims))) if is_out else ()
        key = (v, dims)
        if key in seen:
            prev = out[seen[key]]
            out[seen[key]] = Operand(
                dims,
                prev.elem_bytes,
                prev.copy_in or not is_out,
                prev.copy_out or is_out,
                prev.acc_dims or acc,
            )
            continue
        seen[key] = len(out)
        out.append(Operand(dims, T.elem_bytes(v.type), not is_out, is_out, acc))
    return out


def stand_ins(op: T.TrainingComputeOp) -> dict[int, int]:
    """The inputs the kernels do not read (`IterationSpace.unread`) that get
    no tile buffer, each with the output (position among the outs) whose
    tile stands in for it: same index map, shape and element type, so the
    tile op verifies; not when the same tensor is also read through another
    operand."""
    assert isinstance(op, T.IterationSpaceInterface)
    space = op.iteration_space()
    maps = space.maps
    n_in = len(op.ins)
    out: dict[int, int] = {}
    for i, o in space.unread:
        v, w = op.ins[i], op.outs[o]
        same = (
            maps[i] == maps[n_in + o]
            and T.shape_of(v.type) == T.shape_of(w.type)
            and T.elem_of(v.type) == T.elem_of(w.type)
        )
        read_elsewhere = any(u is v for j, u in enumerate(op.ins) if j != i)
        if same and not read_elsewhere:
            out[i] = o
    return out


def whole_dims(op: T.TrainingComputeOp) -> set[int]:
    """The dims the op keeps whole (reduction dims included, those that may
    accumulate too), and the input dims of its tiled windows (they follow
    their output dim: see `Halo`)."""
    assert isinstance(op, T.IterationSpaceInterface)
    space = op.iteration_space()
    derived = {w.in_dim for w in space.tiled_windows()}
    return set(space.whole) | set(space.reduction) | derived


def summed_whole(space: T.IterationSpace, ops: Sequence[Operand]) -> set[int]:
    """The dims that stay whole while a reduction dim tiles with accumulation:
    those that an output summed over it does not index (conv2d_grad's dB and
    the input channels). Tiles along such a dim would add the same terms into
    that output once per tile."""
    # (a window's input dim follows its output dim: it is not a tile dim)
    acc = set(space.accumulate) | {w.in_dim for w in space.tiled_windows()}
    return {
        d
        for o in ops
        if o.acc_dims
        for d in range(len(space.dims))
        if d not in o.dims and d not in acc
    }


@dataclass(frozen=True)
class Halo:
    """A sliding window whose output dim tiles: the input dim's tile is the
    output tile's footprint, (t - 1) * stride + extent rows (the tile and its
    halo; the whole input for the whole output), at most the input. Border
    tiles read fewer rows (the padding is not stored), so this is the largest."""

    out_dim: int
    in_dim: int
    window: T.SlidingWindow
    dims: tuple[int, ...]

    def apply(self, tiles: list[int]) -> None:
        tiles[self.in_dim] = self.window.in_tile(self.dims, tiles[self.out_dim])


def halos(op: T.TrainingComputeOp, dims: Sequence[int]) -> tuple[Halo, ...]:
    """The halos of `op` over loop dims of sizes `dims`."""
    assert isinstance(op, T.IterationSpaceInterface)
    return tuple(
        Halo(w.out_dim, w.in_dim, w, tuple(dims)) for w in op.iteration_space().tiled_windows()
    )


def with_halos(tiles: Sequence[int], hs: Sequence[Halo]) -> list[int]:
    out = list(tiles)
    for h in hs:
        h.apply(out)
    return out


def tile_counts(dims: Sequence[int], t: Combos, hs: Sequence[Halo] = ()) -> NDArray[np.int64]:
    """Tiles of the loop nest, per combination (an input dim that follows its
    window's output dim adds none)."""
    derived = {h.in_dim for h in hs}
    count = np.ones(len(t), dtype=np.int64)
    for d, n in enumerate(dims):
        if d not in derived:
            count *= -(-n // t[:, d])
    return count


def tile_count(dims: Sequence[int], tiles: Sequence[int], hs: Sequence[Halo] = ()) -> int:
    """`tile_counts` of one combination."""
    return int(tile_counts(dims, as_combos(tiles), hs)[0])


@dataclass(frozen=True)
class CostModel:
    setup: int = 100  # cycles per transfer
    bandwidth: int = 8  # bytes per cycle

    def objective(
        self,
        dims: Sequence[int],
        t: Combos,
        ops: Sequence[Operand],
        hs: Sequence[Halo] = (),
    ) -> NDArray[np.int64]:
        """Cycles x bandwidth of each combination's tile loop, an exact
        integer: per tile, the transfers of its operand tiles (halos
        included), each `setup` cycles plus its bytes over the bandwidth."""
        per_tile = np.zeros(len(t), dtype=np.int64)
        for o in ops:
            per_tile += o.moves(dims, t) * (
                self.setup * self.bandwidth + o.tile_elems(t) * o.elem_bytes
            )
        return tile_counts(dims, t, hs) * per_tile

    def cycles(
        self,
        dims: Sequence[int],
        tiles: Sequence[int],
        ops: Sequence[Operand],
        hs: Sequence[Halo] = (),
    ) -> float:
        """The cycles of one combination's tile loop (`objective` / bandwidth)."""
        return int(self.objective(dims, as_combos(tiles), ops, hs)[0]) / self.bandwidth


def footprints(t: Combos, ops: Sequence[Operand]) -> NDArray[np.int64]:
    """Bytes of one buffer of every operand tile, per combination."""
    foot = np.zeros(len(t), dtype=np.int64)
    for o in ops:
        foot += o.tile_elems(t) * o.elem_bytes
    return foot


def footprint(tiles: Sequence[int], ops: Sequence[Operand], buffers: int) -> int:
    """L1 bytes of one combination's tile buffers, `buffers` of each."""
    return buffers * int(footprints(as_combos(tiles), ops)[0])


def candidates(n: int) -> list[int]:
    """Tile sizes worth trying for a dim of n: the smallest size for each tile
    count (a larger size with the same count only costs more)."""
    return sorted({-(-n // k) for k in range(1, n + 1)})


#: the most tile-size combinations one op's problem enumerates (numpy arrays
#: of this many rows; past it each dim keeps a spread subset of its candidates)
MAX_COMBINATIONS = 400_000


def _thin(cands: list[int], keep: int) -> list[int]:
    """At most `keep` of the candidates, spread over the range, ends included."""
    if len(cands) <= keep:
        return cands
    step = (len(cands) - 1) / (keep - 1)
    return sorted({cands[round(i * step)] for i in range(keep)})


def combinations(
    per_dim: Sequence[Sequence[int]], dims: Sequence[int], hs: Sequence[Halo] = ()
) -> Combos:
    """Every combination of the sizes of `per_dim` (in `itertools.product`
    order), the input dim of each halo set from its output dim's tile."""
    grids = np.meshgrid(*[np.asarray(c, dtype=np.int64) for c in per_dim], indexing="ij")
    t = np.stack([g.reshape(-1) for g in grids], axis=1)
    for h in hs:
        sizes = [int(v) for v in np.unique(t[:, h.out_dim])]
        lookup = np.zeros(max(sizes) + 1, dtype=np.int64)
        for v in sizes:
            lookup[v] = with_halos([*dims[: h.out_dim], v, *dims[h.out_dim + 1 :]], [h])[h.in_dim]
        t[:, h.in_dim] = lookup[t[:, h.out_dim]]
    return t


@dataclass(frozen=True)
class Candidates:
    """The tile-size combinations of one op that can be optimal under some
    budget: each row of `tiles` with its L1 footprint (one buffer), its
    objective (cycles x bandwidth, an integer) and its tile count.

    A combination is dropped when another one needs at most its footprint and
    is at least as good in (cycles, tile count): whatever the budget, that
    other one is feasible whenever it is and never worse, so the optimum is
    always among the rest. What remains is the Pareto front of footprint
    against objective, usually a few dozen rows out of thousands."""

    tiles: list[list[int]]
    foot: list[int]
    cost: list[int]
    count: list[int]
    complete: bool  # False when the candidate sizes were thinned


def pareto_candidates(
    dims: Sequence[int],
    whole: set[int],
    ops: Sequence[Operand],
    model: CostModel,
    hs: Sequence[Halo] = (),
) -> Candidates:
    """Every combination of candidate sizes, scored in numpy, reduced to the
    (footprint, objective) front. The input dim of each halo follows its
    output dim's tile (it is in `whole`, and its column is overwritten)."""
    per_dim = [[size] if d in whole else candidates(size) for d, size in enumerate(dims)]
    complete = True
    while math.prod(len(c) for c in per_dim) > MAX_COMBINATIONS:
        complete = False
        widest = max(range(len(per_dim)), key=lambda d: len(per_dim[d]))
        per_dim[widest] = _thin(per_dim[widest], max(2, len(per_dim[widest]) // 2))
    t = combinations(per_dim, dims, hs)
    count = tile_counts(dims, t, hs)
    foot = footprints(t, ops)
    cost = model.objective(dims, t, ops, hs)
    # rank by (cost, count, footprint), then walk in (footprint, rank) order
    # keeping a combination only when it beats every combination with a
    # smaller or equal footprint: the front's (cost, count) are then distinct,
    # so the optimum under any budget is unique
    rank = np.empty(len(t), dtype=np.int64)
    rank[np.lexsort((foot, count, cost))] = np.arange(len(t))
    order = np.lexsort((rank, foot))
    r = rank[order]
    best_before = np.minimum.accumulate(np.concatenate(([len(t)], r[:-1])))
    keep = order[r < best_before]
    return Candidates(
        [[int(x) for x in t[i]] for i in keep],
        [int(foot[i]) for i in keep],
        [int(cost[i]) for i in keep],
        [int(count[i]) for i in keep],
        complete,
    )


def solve_z3(
    dims: Sequence[int],
    whole: set[int],
    ops: Sequence[Operand],
    budget: int,
    model: CostModel,
    rlimit: int,
    hs: Sequence[Halo] = (),
) -> tuple[list[int], str]:
    """(tiles, why the search stopped before proving the optimum: "" when it
    proved it; "rlimit N" when Z3 reached its resource limit, the thinned
    candidates otherwise). The input dims of `hs` are not chosen: each
    combination sets them from its output tiles (footprint and cycles then
    count the halos).

    Each dim's tile size ranges over its candidates (the smallest size per
    tile count); each combination on the (footprint, objective) front
    (`pareto_candidates`) is one Boolean of a pseudo-Boolean problem whose
    footprint constraint and cycle objective are linear in the Booleans, so
    Z3's optimizer solves it exactly. When the combinations of a large op
    would exceed MAX_COMBINATIONS, each dim keeps a spread subset of its
    candidates and the result is reported as not proven.

    Each solve has its own Z3 context, so its work (and where `rlimit`, Z3's
    deterministic resource limit, stops it; 0 = none) does not depend on what
    was solved before in the process."""
    c = pareto_candidates(dims, whole, ops, model, hs)
    # a combination above the budget is never chosen: Z3 gets the others
    # (fewer Booleans; the footprint constraint still holds them to it)
    ids = [i for i, f in enumerate(c.foot) if f <= budget]
    if not ids:
        raise ValueError("infeasible")
    # the best combination of all (fewest cycles, then tiles) fits: it is the
    # optimum under the budget too, and Z3 (its import and context: about
    # 30 MiB and a few hundred ms) is not needed
    best = min(range(len(c.foot)), key=lambda i: (c.cost[i], c.count[i]))
    if c.foot[best] <= budget:
        thinned = f"candidate sizes thinned to {MAX_COMBINATIONS:,} combinations"
        return c.tiles[best], "" if c.complete else thinned
    import z3

    zc = z3.Context()
    opt = z3.Optimize(ctx=zc)
    # Ctrl-C is Python's to handle (Z3's own handler would swallow it, or kill the process)
    opt.set(ctrl_c=False)
    if rlimit:
        opt.set("rlimit", rlimit)
    pick = [z3.Bool(f"c{i}", zc) for i in ids]
    opt.add(z3.PbEq([(b, 1) for b in pick], 1))
    opt.add(z3.PbLe([(b, c.foot[i]) for b, i in zip(pick, ids, strict=True)], budget))
    # one objective: the rank of each combination by cycles, then tile count
    # (the front's (cycles, count) pairs are distinct, so ranks keep the
    # order exactly while the weights stay small)
    order = sorted(range(len(pick)), key=lambda k: (c.cost[ids[k]], c.count[ids[k]]))
    rank = {k: r for r, k in enumerate(order)}
    opt.minimize(z3.Sum([z3.If(b, rank[k], 0) for k, b in enumerate(pick)]))
    r = opt.check()
    if r == z3.unsat:
        raise ValueError("infeasible")
    why = [] if r == z3.sat else [f"rlimit {rlimit}" if rlimit else f"Z3: {opt.reason_unknown()}"]
    if not c.complete:
        why.append(f"candidate sizes thinned to {MAX_COMBINATIONS:,} combinations")
    chosen: list[int] = []
    try:
        # after a stop at the rlimit: the best model found so far, if any
        # (a search stopped early may leave none, or one that is not a choice)
        m = opt.model()
        chosen = [k for k, b in enumerate(pick) if z3.is_true(m.eval(b, model_completion=True))]
    except z3.Z3Exception:
        pass
    if len(chosen) != 1 or c.foot[ids[chosen[0]]] > budget:
        assert r != z3.sat, "Z3 proved an optimum that is not one fitting combination"
        # no choice found: the smallest tiles (they fit)
        smallest = with_halos([size if d in whole else 1 for d, size in enumerate(dims)], hs)
        return smallest, "; ".join(why)
    return c.tiles[ids[chosen[0]]], "; ".join(why)


def solve_bruteforce(
    dims: Sequence[int],
    whole: set[int],
    ops: Sequence[Operand],
    budget: int,
    model: CostModel,
    hs: Sequence[Halo] = (),
) -> list[int] | None:
    """Every combination of tile sizes, not only the candidates, and no front
    (for tests on small ops): the first that fits with the fewest cycles,
    then tiles."""
    ranges = [[size] if d in whole else range(1, size + 1) for d, size in enumerate(dims)]
    t = combinations(ranges, dims, hs)
    t = t[footprints(t, ops) <= budget]
    if not len(t):
        return None
    # lexsort is stable: among equal keys the first combination wins
    best = np.lexsort((tile_counts(dims, t, hs), model.objective(dims, t, ops, hs)))[0]
    return [int(x) for x in t[best]]


def stopped_early(module: ModuleOp) -> list[tuple[str, str]] | None:
    """(op, reason) of every op whose tile search stopped before proving its
    optimum, as tile-select recorded them; None when tile-select did not run."""
    a = module.attributes.get(STOPPED_EARLY)
    if not isinstance(a, ArrayAttr):
        return None
    out: list[tuple[str, str]] = []
    for pair in a.data:
        if isinstance(pair, ArrayAttr) and len(pair.data) == 2:
            op, why = pair.data
            if isinstance(op, StringAttr) and isinstance(why, StringAttr):
                out.append((op.data, why.data))
    return out


def _probe_l2_arena(module: ModuleOp) -> int:
    """The L2 arena of `module` before any stage buffer exists."""
    a = T.arena_of(module, "L2")
    if a is not None:
        return a.size_bytes
    from deeploy_mlir.passes.arena_plan import ArenaPlan
    from deeploy_mlir.pipeline import make_context

    probe = module.clone()
    ArenaPlan(level="L2").apply(make_context(), probe)
    return T.arena_bytes(probe, "L2")


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
    solver: str = "z3"
    setup: int = 100
    bandwidth: int = 8
    #: Z3's deterministic resource limit per solve (0 = none): a search that
    #: reaches it keeps the best tiles found, and the op is listed in
    #: `tiling.stopped_early`
    rlimit: int = DEFAULT_RLIMIT

    def _stacks_note(self) -> str:
        if not self.stacks:
            return ""
        return f" ({self.l1 + self.stacks} minus {self.stacks} of cluster stacks)"

    @property
    def _cache(self) -> dict[object, tuple[list[int], str]]:
        """Solutions by problem: ops of one shape share their tiles."""
        cache = self.__dict__.get("_solutions")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_solutions", cache)
        return cache

    def _check_options(self) -> None:
        if self.solver not in ("z3", "untiled"):
            raise DeeployError(
                f"tile-select: solver must be 'z3' or 'untiled', got '{self.solver}'"
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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self._check_options()
        require(op, self.name, BUFFER, UNTILED)
        stage_budget: int | None = None
        if self.l2:
            arena = _probe_l2_arena(op)
            if arena > self.l2:
                raise DeeployError(
                    f"tile-select: the tensors need {arena} bytes of L2 but the L2 budget is "
                    f"{self.l2} bytes"
                )
            stage_budget = self.l2 - arena
        model = CostModel(self.setup, self.bandwidth)
        stopped: list[Attribute] = []
        n_ops = sum(
            isinstance(o, T.TrainingComputeOp) and o.is_buffer_form
            for fn in op.ops
            if isinstance(fn, func.FuncOp) and fn.body.blocks
            for o in fn.body.block.ops
        )
        done = 0
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            for k, first in enumerate(list(fn.body.block.ops)):
                if not isinstance(first, T.TrainingComputeOp) or not first.is_buffer_form:
                    continue
                done += 1
                progress.update(f"tile selection: op {done}/{n_ops} {first.name}", done, n_ops)
                for o in self._split(first):
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
                    outer, stage_buffers, why_outer = self._select_outer(
                        o, model, where, stage_budget
                    )
                    tiles, why = self._select(o, model, where, outer)
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
                    tiled = TiledOp(o, tiles, self.buffers, "L1", outer)
                    if stage_buffers < self.l3_buffers:
                        tiled.attributes[STAGE_BUFFERS] = IntegerAttr(stage_buffers, i64)
                    Rewriter.insert_op(tiled, InsertPoint.before(anchor))
        # no timing here: the IR is the same from one run to the next
        op.attributes[STOPPED_EARLY] = ArrayAttr(stopped)

    def _split(self, o: T.TrainingComputeOp) -> list[T.TrainingComputeOp]:
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

    def _select_outer(
        self, o: T.TrainingComputeOp, model: CostModel, where: str, stage_budget: int | None
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
        key = ("L3", tuple(dims), frozenset(whole), tuple(ops3), budget, model)
        if key not in self._cache:
            self._cache[key] = solve_z3(dims, whole, ops3, budget, model, self.rlimit)
        tiles, why = self._cache[key]
        return list(tiles), buffers, why

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

    def _select(
        self,
        o: T.TrainingComputeOp,
        model: CostModel,
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
                raise DeeployError(
                    f"{where} ({o.name}) needs {need} bytes of L1 untiled; the L1 budget is "
                    f"{self.l1} bytes{self._stacks_note()}"
                )
            return dims, ""
        hs = halos(o, dims)
        whole, need = self._fitting_whole(o, dims, ops, hs)
        if need > self.l1:
            spatial = ", spatial ones with their halos" if space.tiled_windows() else ""
            acc = ", accumulating over the reduction" if space.accumulate else ""
            raise DeeployError(
                f"{where} ({o.name}) needs at least {need} bytes of L1 (smallest tiles"
                f"{spatial}{acc}, {self.buffers} buffer(s)); the L1 budget is {self.l1} bytes"
                f"{self._stacks_note()}"
            )
        key = (tuple(dims), frozenset(whole), tuple(ops), budget, model, hs)
        if key not in self._cache:
            self._cache[key] = solve_z3(dims, whole, ops, budget, model, self.rlimit, hs)
        tiles, why = self._cache[key]
        return list(tiles), why
