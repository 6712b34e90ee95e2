"""The tiling model: what one op's tile problem is and how a tile choice scores.

A problem is an op's loop dims (`IterationSpace.dims`), the dims it keeps
whole, its distinct tile buffers (`Operand`: which dims index it, element
size, copied in / out / in again when it accumulates) and its halos (a
sliding window's input dim following its output dim). A combination of tile
sizes (one row of `Combos`) has a footprint (bytes of one buffer of every
operand tile), a tile count and a cost (`CostModel`: with the op's `Kernel`
the cycles of its tile loops as the cycle model runs them -- per variant of
full and ragged tiles (tiling/parts.py) its own loop, the first fetch and the
last write-back exposed, max(compute, copies) per tile when double-buffered,
the kernel's compute and call cycles; without, the serial sum of the
transfers, what stage tiles are scored by). `pareto_candidates` enumerates the combinations worth
trying (per dim the smallest size of each tile count), scores them all in
numpy and keeps the front of footprint against (cost, tile count). The cost
is the cycle model's: `transfer_cycles` and `compute_cycles` of
cost/events.py, the MAC terms, calls and core split of cost/kernels.py.

A library module: tile-select, tiling-materialize, memory-home and
dma-multibuffer import it; it imports numpy, xDSL, the training dialect, the
board record, tiling/parts.py and the cycle model's cost functions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from deeploy_mlir.cost.events import compute_cycles, transfer_cycles
from deeploy_mlir.cost.kernels import (
    Fork,
    Split,
    kernel_family,
    mac_terms,
    narrow_macs,
    op_calls,
    op_forks,
    op_split,
)
from deeploy_mlir.dialects import training as T
from deeploy_mlir.targets.boards import Board, Engine
from deeploy_mlir.tiling.parts import window_parts

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

    def contiguous(self, dims: Sequence[int], t: Combos) -> NDArray[np.bool_]:
        """Whether its tile is one contiguous run of the whole buffer (a 1-D
        copy), per combination: the dims inside the outermost one the tile
        cuts are whole, the dims outside it 1."""
        ds = [d for d in self.dims if d is not None]
        ok = np.ones(len(t), dtype=bool)
        cut = np.zeros(len(t), dtype=bool)  # an inner dim is cut: the rest must be 1
        for d in reversed(ds):
            ok &= ~cut | (t[:, d] == 1)
            cut |= t[:, d] < dims[d]
        return ok

    def runs(self, dims: Sequence[int], t: Combos) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(contiguous runs of its tile in the whole buffer, elements per
        run), per combination: a run spans the innermost dims while they are
        whole, and the tile's extent of the first dim it cuts."""
        run = np.ones(len(t), dtype=np.int64)
        whole = np.ones(len(t), dtype=bool)  # every dim inside is whole
        for d in reversed([d for d in self.dims if d is not None]):
            run = np.where(whole, run * t[:, d], run)
            whole &= t[:, d] == dims[d]
        return self.tile_elems(t) // run, run

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
    # an output accumulated onto its buffer (`onto`) is not written again by
    # the tiles of a dim it does not index: each would add its old value once
    # more (a reduction dim that accumulates adds its tiles' sums instead)
    n_in = len(op.ins)
    onto = {
        d
        for k in op.onto_outputs()
        for d in range(len(space.dims))
        if d not in map_dims(space.maps[n_in + k]) and d not in space.accumulate
    }
    return set(space.whole) | set(space.reduction) | derived | onto


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
class Kernel:
    """What one tile of an op costs the cluster, as the cycle model counts it
    (deeploy_mlir/cost/kernels.py, `compute_cycles` of cost/events.py): its
    kernel family on `board`, its MACs as terms over the tile sizes
    (`mac_terms`), its kernel calls, how its kernel splits over the cores,
    and whether dma-multibuffer overlaps its tile loop (`double`: buffers >= 2
    and nothing that makes it refuse)."""

    family: str
    board_name: str
    terms: tuple[tuple[int, tuple[int, ...]], ...]
    calls: int
    split: Split | None
    double: bool
    board: Board = field(compare=False, hash=False, repr=False)
    #: its kernel calls by family (cost/kernels.py `op_forks`)
    forks: tuple[Fork, ...] = ()

    @staticmethod
    def of(op: T.TrainingComputeOp, board: Board, buffers: int) -> Kernel:
        """The kernel of `op` on `board` with `buffers` buffers per tile."""
        terms = tuple((c, tuple(ds)) for c, ds in mac_terms(op))
        return Kernel(
            kernel_family(op),
            board.name,
            terms,
            op_calls(op),
            op_split(op),
            buffers >= 2 and multibuffers(op),
            board,
            tuple(op_forks(op)),
        )

    def cycles(self, s: Combos) -> NDArray[np.int64]:
        """Compute cycles of one tile of sizes `s`, per row: per fork
        `compute_cycles` of its MACs and outputs (once per distinct (MACs,
        outputs, split sizes)); a tile loop's calls of an op of one kernel call
        run after their own (warm), of several each after another's (cold)."""
        sp = self.split
        cols = [s[:, d] for d in sp.dims] if sp is not None else []
        total = np.zeros(len(s), dtype=np.int64)
        for f in self.forks:
            macs, outs = _term_counts(f.macs, s), _term_counts(f.outputs, s)
            cold = f.calls if f.calls > 1 or len(self.forks) > 1 else 0
            # conv.c's one-channel path: the channel and width sizes (`narrow_macs`)
            nar = [s[:, d] for d in f.narrow] if f.narrow is not None else []
            keys, where = np.unique(
                np.stack([macs, outs, *cols, *nar], axis=1), axis=0, return_inverse=True
            )
            cores = self.board.cores
            cycles = []
            for k in keys:
                m = int(k[0])
                if f.narrow is not None:
                    at = dict(zip(f.narrow, (int(v) for v in k[2 + len(cols) :]), strict=True))
                    m = narrow_macs(f, at, m, self.board.conv_tiles)
                vals = tuple(int(v) for v in k[2 : 2 + len(cols)])
                share = sp.share_of(vals, cores, self.board.gemm_tiles) if sp is not None else None
                cycles.append(
                    compute_cycles(self.board, f.family, m, f.calls, 0, int(k[1]), cold, share)
                )
            total += np.asarray(cycles, dtype=np.int64)[where.reshape(-1)]
        return total

    def first_cold(self) -> int:
        """The cold cycles of the op's first kernel call when `cycles` counts
        its calls warm (one fork of one kernel call: a tile loop's calls
        after the first follow their own)."""
        if len(self.forks) == 1 and self.forks[0].calls == 1:
            return self.board.kernels[self.forks[0].family].cold
        return 0


def _term_counts(terms: tuple[tuple[int, tuple[int, ...]], ...], s: Combos) -> NDArray[np.int64]:
    """The count `terms` give for each row of tile sizes."""
    out = np.zeros(len(s), dtype=np.int64)
    for c, ds in terms:
        term = np.full(len(s), c, dtype=np.int64)
        for d in ds:
            term *= s[:, d]
        out += term
    return out


def multibuffers(op: T.TrainingComputeOp) -> bool:
    """Whether dma-multibuffer overlaps the tile loops of `op` (its refusals:
    an output written in place, several outputs in different buffers, a
    scalar tensor; a tile loop that accumulates is decided per tiling)."""
    unread = set(stand_ins(op))
    for out in op.outs:
        if any(out is inp and j not in unread for j, inp in enumerate(op.ins)):
            return False
    if len(op.outs) > 1 and len({id(v) for v in op.outs}) > 1:
        return False
    return all(math.prod(T.shape_of(v.type)) != 1 for v in [*op.ins, *op.outs])


@dataclass(frozen=True)
class CostModel:
    """The cycles of a tile loop's transfers on one DMA engine, counted as the
    cycle model counts them (deeploy_mlir/cost/events.py): per transfer the
    cluster's `issue` cycles plus `transfer_cycles` of the engine (`setup` +
    ceil(bytes / `bandwidth`)). `of` takes a board's engine; tile-select
    scores L1 tiles with the engine between L2 and L1 and stage tiles with
    the one between L3 and L2 (the board's numbers, not constants of its
    own)."""

    setup: int = 100  # cycles per transfer (the engine's)
    bandwidth: float = 8  # bytes per cycle
    issue: int = 0  # cycles the cluster spends issuing one transfer
    #: the op's kernel: with it the objective runs the tile loop's schedule
    #: (`schedule`); without, it is the serial sum of the transfers
    kernel: Kernel | None = None
    #: the engine's setup and bandwidth per copy kind (`Engine.copies`)
    copies: tuple[tuple[str, int, float], ...] = ()
    #: the engine moves each contiguous run of a tile as a transfer of its
    #: own (`Engine.row_transfers`: the L3 RAM's row-by-row 2-D copies)
    row_transfers: bool = False

    @staticmethod
    def of(engine: Engine) -> CostModel:
        """The model of a board's engine."""
        return CostModel(
            engine.setup,
            engine.bandwidth,
            engine.issue,
            copies=engine.copies,
            row_transfers=engine.row_transfers,
        )

    def _engine(self) -> Engine:
        return Engine(
            "tile-select",
            ("L2", "L1"),
            self.bandwidth,
            self.setup,
            2,
            False,
            self.issue,
            self.copies,
        )

    def transfer(
        self, nbytes: NDArray[np.int64], kinds: NDArray[np.str_] | None = None
    ) -> NDArray[np.int64]:
        """Cycles of one transfer of each of `nbytes` (of copy kind `kinds`,
        "in-1d" ..., or the engine's): `issue` plus the cycle model's
        `transfer_cycles` (computed once per distinct size and kind)."""
        engine = self._engine()
        if kinds is None or not self.copies:
            sizes, where = np.unique(nbytes, return_inverse=True)
            cycles = [self.issue + transfer_cycles(engine, int(b)) for b in sizes]
            return np.asarray(cycles, dtype=np.int64)[where.reshape(nbytes.shape)]
        out = np.zeros(nbytes.shape, dtype=np.int64)
        for kind in np.unique(kinds):
            sel = kinds == kind
            sizes, where = np.unique(nbytes[sel], return_inverse=True)
            cycles = [self.issue + transfer_cycles(engine, int(b), str(kind)) for b in sizes]
            out[sel] = np.asarray(cycles, dtype=np.int64)[where.reshape(-1)]
        return out

    def objective(
        self,
        dims: Sequence[int],
        t: Combos,
        ops: Sequence[Operand],
        hs: Sequence[Halo] = (),
    ) -> NDArray[np.int64]:
        """The cycles of each combination's tile loop, an exact integer: per
        tile, the transfers of its operand tiles (halos included), each
        `transfer` cycles (with `row_transfers`, one transfer per contiguous
        run of the tile)."""
        if self.kernel is not None:
            return self.schedule(dims, t, ops, hs)
        per_tile = np.zeros(len(t), dtype=np.int64)
        for o in ops:
            if self.row_transfers:
                n, run = o.runs(dims, t)
                per_tile += o.moves(dims, t) * n * self.transfer(run * o.elem_bytes)
            else:
                per_tile += o.moves(dims, t) * self.transfer(o.tile_elems(t) * o.elem_bytes)
        return tile_counts(dims, t, hs) * per_tile

    def schedule(
        self,
        dims: Sequence[int],
        t: Combos,
        ops: Sequence[Operand],
        hs: Sequence[Halo] = (),
    ) -> NDArray[np.int64]:
        """The cycles of each combination's tile loops as the cycle model runs
        them, an exact integer: per variant (each dim's n // t full tiles and
        its ragged n % t remainder, as tiling-materialize splits them) its own
        loop (`loop_cycles`)."""
        derived = {h.in_dim for h in hs} | {h.out_dim for h in hs}
        free = [d for d in range(len(dims)) if d not in derived and bool(np.any(t[:, d] < dims[d]))]
        # partial sums copied in again: per combination (they follow `t`)
        acc = [o.moves(dims, t) - int(o.copy_in) - int(o.copy_out) for o in ops]
        double = np.full(len(t), self.kernel is not None and self.kernel.double)
        for a in acc:
            double &= a == 0  # a loop that accumulates stays single-buffered
        # per dim (window) its parts: ({dim: tile size}, tiles), per combination
        Slot = tuple[dict[int, NDArray[np.int64]], NDArray[np.int64]]
        units: list[list[Slot]] = []
        for d in free:
            rem = dims[d] % t[:, d]
            units.append(
                [({d: t[:, d]}, dims[d] // t[:, d]), ({d: rem}, (rem > 0).astype(np.int64))]
            )
        for h in hs:
            units.append(_window_slots(h, t))
        total = np.zeros(len(t), dtype=np.int64)
        for combo in itertools.product(*units):
            s = t.copy()
            n = np.ones(len(t), dtype=np.int64)
            # per dim: does this loop step along it (more than one tile)
            steps = np.zeros(t.shape, dtype=bool)
            for sizes, count in combo:
                for d, v in sizes.items():
                    s[:, d] = v
                    steps[:, d] = count > 1
                n *= count
            live = n > 0
            if not np.any(live):
                continue
            s = np.maximum(s, 1)
            cyc = self.loop_cycles(n, s, ops, acc, double, dims, steps)
            total += np.where(live, cyc, 0)
        # the op's first kernel call follows another op's (cold); the tile
        # loops' later calls follow their own (`Kernel.cycles`)
        return total + (self.kernel.first_cold() if self.kernel is not None else 0)

    def loop_cycles(
        self,
        n: NDArray[np.int64],
        s: Combos,
        ops: Sequence[Operand],
        acc: Sequence[NDArray[np.int64]],
        double: NDArray[np.bool_],
        full: Sequence[int] = (),
        steps: NDArray[np.bool_] | None = None,
    ) -> NDArray[np.int64]:
        """One tile loop of `n` tiles of sizes `s`, as the cycle model runs
        its events: per tile the cluster issues the input copies (`issue`
        each), waits for them, computes (`Kernel.cycles`), issues the output
        copies and waits. Single-buffered every tile pays all of it;
        double-buffered the first fetch and the last write-back are exposed
        and each tile in between takes max(compute + issues, the engine's
        copies of one tile in and one out)."""
        assert self.kernel is not None
        zero = np.zeros(len(s), dtype=np.int64)
        fetch, store, k_in, k_out = zero.copy(), zero.copy(), zero.copy(), zero.copy()
        # head / tail: when the copies in (out) of one tile have landed, the
        # cluster issuing them one after another (`issue` each) on an idle
        # engine that runs them in order
        head, tail = zero.copy(), zero.copy()
        # double-buffered, an input tile the loop steps along none of whose
        # dims (`steps`) is fetched once, first, before the loop
        # (dma-multibuffer's invariant_tiles): in the head only
        once_k, once_fetch, ins = zero.copy(), zero.copy(), []
        for o, a in zip(ops, acc, strict=True):
            nbytes = o.tile_elems(s) * o.elem_bytes
            rank = np.where(o.contiguous(full, s), "1d", "2d") if full else None
            whole = np.full(len(s), steps is not None and o.copy_in and not o.copy_out)
            for d in [d for d in o.dims if d is not None] if steps is not None else []:
                whole &= ~steps[:, d]
            for moves, is_in in ((int(o.copy_in) + a, True), (int(o.copy_out) + zero, False)):
                # the engine's cycles (`transfer` counts the issue too)
                kinds = None if rank is None else np.char.add("in-" if is_in else "out-", rank)
                c = self.transfer(nbytes, kinds) - self.issue
                k = k_in if is_in else k_out
                done = head if is_in else tail
                k += moves
                done[:] = np.where(moves > 0, np.maximum(done, k * self.issue) + c, done)
                (fetch if is_in else store)[:] += moves * c
                if is_in:
                    once = np.where(whole & (a == 0), moves, 0)
                    once_k, once_fetch = once_k + once, once_fetch + once * c
                    ins.append((moves, c, once))
        head2, k2 = zero.copy(), zero.copy()  # the once-fetches first
        for m, c in [(x, c) for _, c, x in ins] + [(mv - x, c) for mv, c, x in ins]:
            k2 += m
            head2 = np.where(m > 0, np.maximum(head2, k2 * self.issue) + c, head2)
        compute = self.kernel.cycles(s)
        one = head + compute + tail
        # overlapped: the later of the cluster's path (first fetch, then per
        # tile its compute and issues, the last write-back) and the engine's
        # (every copy in a row; the last tile's write-back waits for its
        # compute, which runs while the one before is written back)
        per_issue = (k_in - once_k + k_out) * self.issue
        cluster = head2 + (n - 1) * (compute + per_issue) + compute + tail
        last = compute + (k_out > 0) * self.issue
        engine = head2 + (n - 1) * (fetch - once_fetch) + (n - 1) * store + np.maximum(store, last)
        overlapped = np.where(n > 1, np.maximum(cluster, engine), one)
        return np.where(double, overlapped, n * one)

    def cycles(
        self,
        dims: Sequence[int],
        tiles: Sequence[int],
        ops: Sequence[Operand],
        hs: Sequence[Halo] = (),
    ) -> int:
        """The cycles of one combination's tile loop (its `objective`)."""
        return int(self.objective(dims, as_combos(tiles), ops, hs)[0])


def _window_slots(
    h: Halo, t: Combos
) -> list[tuple[dict[int, NDArray[np.int64]], NDArray[np.int64]]]:
    """The parts of a window's output dim (`window_parts`: runs of tiles
    whose output and input sizes and pads agree), as slots per combination:
    slot k is each combination's k-th part (0 tiles past its last)."""
    sizes = [int(v) for v in np.unique(t[:, h.out_dim])]
    runs = {v: window_parts(h.window, h.dims, min(v, h.dims[h.out_dim])) for v in sizes}
    width = max(len(r) for r in runs.values())
    table = np.zeros((max(sizes) + 1, width, 3), dtype=np.int64)
    for v, r in runs.items():
        for k, (o, i) in enumerate(r):
            table[v, k] = (o.size, i.size, o.count)
    rows = table[t[:, h.out_dim]]
    return [
        ({h.out_dim: rows[:, k, 0], h.in_dim: rows[:, k, 1]}, rows[:, k, 2]) for k in range(width)
    ]


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
    order), the input dim of each halo set from its output dim's tile. An op
    without loop dims (a scalar's) has one combination, the empty one."""
    if not per_dim:
        return np.zeros((1, 0), dtype=np.int64)
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
    objective (cycles, an integer) and its tile count.

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
