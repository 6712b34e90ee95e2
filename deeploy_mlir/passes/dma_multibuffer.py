"""dma-multibuffer{count=2 levels=all|l3-only}: overlap tile transfers with compute.

Works on the tile loops of `tiling-materialize` (`scf.for` marked
`#tiling.loop<tile>`: copies in, waits, the compute op, copies out, waits),
one rewrite pattern application per loop. The tiles are the compute op's
operands; the copies into the tile level (`dma.copy` ext -> loc) fill them,
the copies out of it drain them.
Each tile buffer becomes a ring of `count` slots (`memref.alloc` of one more
leading dim, `dma.slot` per iteration) and each copy a ring of requests
(`dma.request count N`). Tile 0 is fetched before the loop; iteration i waits
for its inputs, fetches tile i+1 into the next slot, waits until the output
slot's previous write-back (tile i-count) has landed -- only once there is
one (`scf.if i >= count`; no wait at all when the loop has at most `count`
tiles) --, computes, and starts the write-back of tile i without waiting;
after the loop, one wait per output slot that a tile used (min(count, trip
count) slots). No wait is ever issued on a request that has nothing in
flight: on the board an mchan wait on a command that never had a transfer
frees transfer id 0, and an L3 RAM wait on one never returns. The same boxes
move as with single buffering, only earlier -- except an input tile that
holds the same box in every iteration (its copies' offsets do not depend on
the loop index, the op does not write it, no write-back of the loop writes
its tensor: `invariant_tiles`), which keeps one buffer and is fetched once,
before the loop, where single buffering fetches it in every iteration.

It refuses, leaving the loop single-buffered with a `dma.remark` saying why:
* an op whose output aliases an input (SGD, gradient accumulation, in-place
  elementwise ops): the next tile's fetch would overwrite what is written back;
* an op with several outputs in different buffers (softmax cross-entropy
  grad and loss): their buffers are freed by different consumers;
* an op that adds into its outputs (`accumulate`: the loop over the later
  tiles of a tiled reduction dim): a tile fetches the partial sums that an
  earlier tile writes back;
* a pattern in which any tensor is a scalar (one element): all of its
  copies stay single-buffered (mixed coefficients would leave a kernel with
  no DMA at all).
The L3 hop: each stage loop of tiling-materialize (`#tiling.loop<stage>`:
L3 -> L2 fetches of stage tiles, the L1 tile loops, L2 -> L3 write-backs)
gets rings of `count` stage tiles the same way -- stage tile i+1 is fetched
while tile i's L1 tiles run, tile i is written back without waiting, and a
slot's previous write-back is waited for only once there is one. It refuses
an op whose L3 tile is fetched and written back in place, a scalar stage
tile, and a stage loop for which tile-select kept a single stage buffer
(`#tiling.loop<stage, stage_buffers = 1>`). A tile loop for which tile-select
kept a single buffer (`#tiling.loop<tile, buffers = 1>`: larger single tiles
are faster than half-size double-buffered ones) stays single-buffered too.
`levels=l3-only` multi-buffers the stage loops only and leaves the L2 <-> L1
tile loops single-buffered (whole-tensor staging of memory-home{stage=whole}
is overlapped by its `prefetch` instead).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Self

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.arg_spec import ArgSpec

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, COPIES, MATERIALIZED, UNDECOMPOSED, require
from deeploy_mlir.dialects.tiling import is_loop, loop_marker
from deeploy_mlir.dialects.training.view import storage_root
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.irutil import check_choices, index_const, rebuild, rewrite_once
from deeploy_mlir.tiling.model import stand_ins

REMARK = "dma.remark"


def _describe(op: Operation, copies: list[dma.CopyOp]) -> str:
    """The op and the tensor (not the tile) it writes, for remarks."""
    outs = list(getattr(op, "outs", ()))
    big = next((c.dst for c in copies if not c.is_in and outs and c.src is outs[0]), None)
    hint = big.name_hint if big is not None else None
    return f"{op.name} writing %{hint}" if hint else op.name


def refusal(loop: scf.ForOp) -> str | None:
    """Why the tile loop must stay single-buffered (None: it may be multi-buffered)."""
    body = loop.body.block
    computes = [o for o in body.ops if isinstance(o, T.TrainingComputeOp)]
    copies = [o for o in body.ops if isinstance(o, dma.CopyOp)]
    if len(computes) != 1:
        return "the loop does not hold exactly one compute op"
    c = computes[0]
    marker = loop_marker(loop)
    if marker is not None and marker.stage_buffers.data == 1:
        return (
            f"{_describe(c, copies)} keeps single buffering: tile-select found its "
            "single-buffered tiles faster than its double-buffered ones (`buffers = 1`)"
        )
    if c.accumulated():
        return (
            f"{_describe(c, copies)} keeps single buffering: it adds into its output tiles (a "
            "reduction dim tiles), and the next tile would fetch a sum before it is written back"
        )
    # an input the kernels do not read may be an output's tile (a stand-in)
    unread = set(stand_ins(c)) if isinstance(c, T.IterationSpaceInterface) else set()
    for k, out in enumerate(c.outs):
        for j, inp in enumerate(c.ins):
            if out is inp and j not in unread:
                return (
                    f"{_describe(c, copies)} keeps single buffering: its output #{k} aliases "
                    f"input #{j} (written in place)"
                )
    out_bigs = {o.dst for o in copies if not o.is_in}
    if len(c.outs) > 1 and len(out_bigs) > 1:
        return (
            f"{_describe(c, copies)} keeps single buffering: its {len(c.outs)} outputs live in "
            "different buffers that different consumers free"
        )
    for o in copies:
        big = o.src if o.is_in else o.dst
        n = 1
        for d in T.shape_of(big.type):
            n *= d
        if n == 1:
            name = f"%{big.name_hint}" if big.name_hint else "a tensor"
            return (
                f"{_describe(c, copies)}: the whole pattern falls back to single buffering: "
                f"{name} is a scalar"
            )
    return None


def _hoist(body: Block, index_ops: Sequence[Operation]) -> None:
    """Move the index arithmetic to the top of the loop body (it is pure and
    reads only the loop index), keeping its order."""
    anchor = body.first_op
    assert anchor is not None
    for o in index_ops:
        if o is anchor:
            anchor = o.next_op
            assert anchor is not None
            continue
        o.detach()
        Rewriter.insert_op(o, InsertPoint.before(anchor))


def _ring(tile: SSAValue, n: int) -> SSAValue:
    """A ring of `n` slots shaped like `tile`, allocated where `tile` was."""
    alloc = tile.owner
    if not isinstance(alloc, memref.AllocOp):
        raise DeeployError("dma-multibuffer: a tile buffer is not a memref.alloc")
    tt = tile.type
    assert isinstance(tt, MemRefType)
    ring_t = MemRefType(tt.get_element_type(), [n, *tt.get_shape()], memory_space=tt.memory_space)
    ring = memref.AllocOp([], [], ring_t)
    ring.memref.name_hint = f"{tile.name_hint or 'tile'}_ring"
    Rewriter.insert_op(ring, InsertPoint.before(alloc))
    return ring.memref


@dataclass(frozen=True)
class DmaMultibuffer(ModulePass):
    name = "dma-multibuffer"

    count: int = 2
    levels: Literal["all", "l3-only"] = "all"

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        check_choices(cls, spec)
        return super().from_spec(spec)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.count < 1:
            raise DeeployError(f"dma-multibuffer: count must be at least 1, got {self.count}")
        if self.levels not in ("all", "l3-only"):
            raise DeeployError(
                f"dma-multibuffer: levels must be 'all' or 'l3-only', got '{self.levels}'"
            )
        require(op, self.name, BUFFER, MATERIALIZED, COPIES, UNDECOMPOSED)
        if self.count == 1:
            return
        rewrite_once(op, MultibufferTileLoop(self.count, self.levels == "l3-only"))
        # the L3 -> L2 hop: stage loops (their L1 loops inside are done above)
        rewrite_once(op, MultibufferStageLoop(self.count))


@dataclass(frozen=True)
class MultibufferTileLoop(RewritePattern):
    """A tile loop (`#tiling.loop<tile>`) -> rings of `count` tile buffers and
    requests, or a `dma.remark` saying why it stays single-buffered."""

    count: int
    #: only loops with an L3 copy (the L2 <-> L1 hop stays single-buffered)
    l3_only: bool = False

    @op_type_rewrite_pattern
    def match_and_rewrite(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        if not is_loop(loop, "tile"):
            return
        copies = [o for o in loop.body.block.ops if isinstance(o, dma.CopyOp)]
        if self.l3_only and not any("L3" in c.hop for c in copies):
            return
        why = refusal(loop)
        if why is not None:
            loop.attributes[REMARK] = StringAttr(f"dma-multibuffer: {why}")
            rewriter.notify_op_modified(loop)
            return
        _rewrite_tile_loop(loop, self.count, rewriter)


@dataclass(frozen=True)
class MultibufferStageLoop(RewritePattern):
    """A stage loop (`#tiling.loop<stage>`) -> rings of `count` stage tiles,
    or a `dma.remark` saying why its L3 hop stays single-buffered."""

    count: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        if not is_loop(loop, "stage"):
            return
        why = stage_refusal(loop)
        if why is not None:
            loop.attributes[REMARK] = StringAttr(f"dma-multibuffer: {why}")
            rewriter.notify_op_modified(loop)
            return
        rewrite_stage_loop(loop, self.count, rewriter)


def _rewrite_tile_loop(loop: scf.ForOp, n: int, rewriter: PatternRewriter) -> None:
    """Multi-buffer a tile loop: the compute op's operands (`ins`, `outs`)
    are its tiles; the copies into the tile level fill them, those out of it
    drain them (`dma.copy`'s direction)."""
    body = loop.body.block
    iv = body.args[0]
    compute = next(o for o in body.ops if isinstance(o, T.TrainingComputeOp))
    ins = [o for o in body.ops if isinstance(o, dma.CopyOp) and o.is_in]
    outs = [o for o in body.ops if isinstance(o, dma.CopyOp) and not o.is_in]
    # the index arithmetic that computes this iteration's offsets
    index_ops = [o for o in body.ops if isinstance(o, _INDEX_TYPES)]
    _hoist(body, index_ops)
    # tiles that hold the same box in every iteration: fetched once, before the loop
    fixed = invariant_tiles(loop, compute, ins, outs)
    once = _fetch_once(loop, [c for c in ins if c.dst in fixed], index_ops, rewriter)
    ins = [c for c in ins if c.dst not in fixed]
    waits = [o for o in body.ops if isinstance(o, dma.WaitOp)]
    # operand order, without duplicates (a set would order them by address)
    tiles = [t for t in dict.fromkeys([*compute.ins, *compute.outs]) if t not in fixed]
    # the body: slot views, waits, prefetch, compute, write-back
    first = next(o for o in body.ops if o not in index_ops)
    b, slot, views, reqs_out = _pipeline(loop, first, tiles, index_ops, ins, outs, n)
    # the fetches of the fixed tiles land while tile 0's are in flight
    for t in once:
        Rewriter.insert_op(dma.WaitOp(t), InsertPoint.before(loop))
    trip = _trip_count(loop)
    # the output slot's previous write-back (tile i - n), once there is one
    _wait_previous(b, iv, n, trip, reqs_out, slot)
    # compute on the slots (a maxpool2d tile keeps its origin: the loop's index values)
    new = b.insert(
        rebuild(
            compute, [views.get(v, v) for v in compute.ins], [views.get(v, v) for v in compute.outs]
        )
    )
    new.attributes.update(compute.attributes)
    rewriter.erase(compute)
    for c, r in zip(outs, reqs_out, strict=True):
        b.insert(_write_back(c, views, r, slot))
    # every write-back has landed after the loop: a wait per slot used
    if reqs_out:
        _wait_used(Builder(InsertPoint.after(loop)), loop, n, trip, reqs_out)
    _erase_single(rewriter, waits, [*ins, *outs], tiles)


def invariant_tiles(
    loop: scf.ForOp,
    compute: T.TrainingComputeOp,
    ins: Sequence[dma.CopyOp],
    outs: Sequence[dma.CopyOp],
) -> set[SSAValue]:
    """The input tiles of a tile loop that hold the same data in every
    iteration: every copy that fills the tile has offsets that do not depend
    on the loop index (the same box of the same tensor each time), the op does
    not write the tile, and no write-back of the loop writes the tensor it is
    copied from. Such a tile needs one fetch before the loop, not one per
    tile (single buffering fetches it again in every iteration)."""
    iv = loop.body.block.args[0]
    varying: set[SSAValue] = {iv}
    for o in loop.body.block.ops:
        if isinstance(o, _INDEX_TYPES) and any(v in varying for v in o.operands):
            varying.update(o.results)
    # storage written in the loop (a view names its source's storage)
    written = {c.dst for c in outs} | set(compute.outs)
    roots = {storage_root(v) for v in written}
    fixed: set[SSAValue] = set()
    bad: set[SSAValue] = set()
    for c in ins:
        offsets = [*c.src_offsets, *c.dst_offsets]
        if c.dst in written or storage_root(c.src) in roots or any(v in varying for v in offsets):
            bad.add(c.dst)
        else:
            fixed.add(c.dst)
    return fixed - bad


def _fetch_once(
    loop: scf.ForOp,
    copies: Sequence[dma.CopyOp],
    index_ops: Sequence[Operation],
    rewriter: PatternRewriter,
) -> list[SSAValue]:
    """Move the loop-invariant input `copies` of a tile loop before it (with
    the index arithmetic their offsets need, cloned there); erase their waits
    in the loop and return the tokens the caller waits for before it."""
    if not copies:
        return []
    body = loop.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    needed: set[Operation] = set()
    todo = [v for c in copies for v in [*c.src_offsets, *c.dst_offsets]]
    while todo:
        v = todo.pop()
        o = v.owner
        if isinstance(o, Operation) and o.parent_block() is body and o not in needed:
            needed.add(o)
            todo.extend(o.operands)
    at = InsertPoint.before(loop)
    for o in index_ops:
        if o in needed:
            c = o.clone(value_mapper=mapping)
            Rewriter.insert_op(c, at)
            mapping.update(zip(o.results, c.results, strict=True))
    tokens: list[SSAValue] = []
    for c in copies:
        new = c.clone(value_mapper=mapping)
        Rewriter.insert_op(new, at)
        for use in list(c.token.uses):
            if isinstance(use.operation, dma.WaitOp):
                rewriter.erase(use.operation)
        rewriter.erase(c)
        tokens.append(new.token)
    return tokens


def _fetch(
    b: Builder,
    iv: SSAValue,
    at: SSAValue,
    slot: SSAValue,
    index_ops: Sequence[Operation],
    ins: Sequence[dma.CopyOp],
    reqs: Sequence[SSAValue],
    rings: Mapping[SSAValue, SSAValue],
) -> None:
    """Issue the input copies `ins` of a loop body for iteration `at` (the
    body's index arithmetic recomputed with `at` for its index `iv`) into slot
    `slot` of their rings, each on that slot of its request ring."""
    mapping: dict[SSAValue, SSAValue] = {iv: at}
    for o in index_ops:
        c = o.clone(value_mapper=mapping)
        mapping.update(zip(o.results, c.results, strict=True))
        b.insert(c)
    for c, r in zip(ins, reqs, strict=True):
        view = b.insert(dma.SlotOp(rings[c.dst], slot)).result
        b.insert(
            dma.CopyOp(
                c.src,
                [mapping.get(v, v) for v in c.src_offsets],
                view,
                [mapping.get(v, v) for v in c.dst_offsets],
                c.box,
                c.perm_list,
                c.engine,
                on=r,
                slot=slot,
            )
        )


def _pipeline(
    loop: scf.ForOp,
    first: Operation,
    tiles: Sequence[SSAValue],
    index_ops: Sequence[Operation],
    ins: Sequence[dma.CopyOp],
    outs: Sequence[dma.CopyOp],
    n: int,
) -> tuple[Builder, SSAValue, Mapping[SSAValue, SSAValue], Sequence[SSAValue]]:
    """The part that the tile and stage loops share: each of `tiles` becomes a
    ring of `n` slots and each copy of `ins` and `outs` a ring of `n` requests;
    iteration 0's inputs are fetched before the loop. Before `first` in the
    body: the iteration's slot (iv mod n) and its view of each ring, the waits
    for its inputs, and the fetch of iteration iv + 1's (under `scf.if
    iv + 1 < ub`). Returns a builder there, the slot, the views by tile and
    the request rings of `outs`."""
    iv = loop.body.block.args[0]
    outer = Builder(InsertPoint.before(loop))
    rings = {t: _ring(t, n) for t in tiles}
    reqs_in = [outer.insert(dma.RequestOp(n)).token for _ in ins]
    reqs_out = [outer.insert(dma.RequestOp(n)).token for _ in outs]
    for r, c in zip(reqs_in + reqs_out, [*ins, *outs], strict=True):
        r.name_hint = c.token.name_hint
    zero = index_const(outer, 0)
    _fetch(outer, iv, zero, zero, index_ops, ins, reqs_in, rings)
    b = Builder(InsertPoint.before(first))
    slot = b.insert(arith.RemUIOp(iv, index_const(b, n))).result
    views = {t: b.insert(dma.SlotOp(rings[t], slot)).result for t in tiles}
    for r in reqs_in:
        b.insert(dma.WaitOp(r, slot))
    if not ins:
        return b, slot, views, reqs_out
    nxt = b.insert(arith.AddiOp(iv, index_const(b, 1))).result
    more = b.insert(arith.CmpiOp(nxt, loop.ub, "ult")).result
    then = Block([scf.YieldOp()])
    b.insert(scf.IfOp(more, [], Region(then), None))
    tb = Builder(InsertPoint.before(then.last_op))  # type: ignore[arg-type]
    next_slot = tb.insert(arith.RemUIOp(nxt, index_const(tb, n))).result
    _fetch(tb, iv, nxt, next_slot, index_ops, ins, reqs_in, rings)
    return b, slot, views, reqs_out


def _write_back(
    c: dma.CopyOp, views: Mapping[SSAValue, SSAValue], req: SSAValue, slot: SSAValue
) -> dma.CopyOp:
    """The write-back `c` from its tile's slot view, async on slot `slot` of
    request ring `req`."""
    return dma.CopyOp(
        views[c.src],
        list(c.src_offsets),
        c.dst,
        list(c.dst_offsets),
        c.box,
        c.perm_list,
        c.engine,
        on=req,
        slot=slot,
    )


def _erase_single(
    rewriter: PatternRewriter,
    waits: Sequence[dma.WaitOp],
    copies: Sequence[dma.CopyOp],
    tiles: Sequence[SSAValue],
) -> None:
    """Erase what the rings replace: the single-buffered waits and copies,
    and the allocs of the tiles."""
    for w in waits:
        rewriter.erase(w)
    for c in copies:
        rewriter.erase(c, safe_erase=False)
    for t in tiles:
        alloc = t.owner
        assert isinstance(alloc, Operation)
        rewriter.erase(alloc)


def _wait_previous(
    b: Builder, iv: SSAValue, n: int, trip: int | None, reqs: Sequence[SSAValue], slot: SSAValue
) -> None:
    """In iteration `iv` of a loop from 0, wait on slot `slot` of each request
    ring for the copy of iteration iv - n: under `scf.if iv >= n`, since in the
    first n iterations nothing was issued on the slot (a wait on a request that
    never had a transfer frees mchan transfer id 0 on the board, and an L3 RAM
    wait never returns); nothing at all when the loop has at most n iterations."""
    if not reqs or (trip is not None and trip <= n):
        return
    used = b.insert(arith.CmpiOp(iv, index_const(b, n), "uge")).result
    then = Block([scf.YieldOp()])
    b.insert(scf.IfOp(used, [], Region(then), None))
    tb = Builder(InsertPoint.before(then.last_op))  # type: ignore[arg-type]
    for r in reqs:
        tb.insert(dma.WaitOp(r, slot))


def _wait_used(
    after: Builder, loop: scf.ForOp, n: int, trip: int | None, reqs: Sequence[SSAValue]
) -> None:
    """After a loop from 0, wait on every slot of each request ring that an
    iteration issued on: slots 0..min(n, trip)-1; with a trip count unknown
    until run time, slot k under `scf.if ub > k`."""
    ks = [index_const(after, k) for k in range(n if trip is None else min(n, trip))]
    for r in reqs:
        for kv in ks:
            if trip is not None:
                after.insert(dma.WaitOp(r, kv))
                continue
            more = after.insert(arith.CmpiOp(loop.ub, kv, "ugt")).result
            then = Block([scf.YieldOp()])
            after.insert(scf.IfOp(more, [], Region(then), None))
            inner = Builder(InsertPoint.before(then.last_op))  # type: ignore[arg-type]
            inner.insert(dma.WaitOp(r, kv))


_INDEX_TYPES = (arith.ConstantOp, arith.DivUIOp, arith.RemUIOp, arith.MuliOp, arith.AddiOp)


def _stage_buffers(loop: scf.ForOp) -> list[SSAValue]:
    """The L2 stage tiles of a stage loop, in order: the buffers its L3 copies
    fill or drain."""
    out: dict[SSAValue, None] = {}
    for o in loop.body.block.ops:
        if isinstance(o, dma.CopyOp) and "L3" in o.hop:
            out[o.dst if o.src_level == "L3" else o.src] = None
    return list(out)


def stage_refusal(loop: scf.ForOp) -> str | None:
    """Why the stage loop's L3 hop must stay single-buffered (None: it may be
    multi-buffered)."""
    marker = loop_marker(loop)
    if marker is not None and marker.stage_buffers.data:
        return (
            "the L3 hop keeps single buffering: two stage tiles of this op do not fit "
            "the L2 the plan leaves free (tile-select kept one)"
        )
    body = loop.body.block.ops
    fetched = [o.dst for o in body if isinstance(o, dma.CopyOp) and o.src_level == "L3"]
    stored = [o.src for o in body if isinstance(o, dma.CopyOp) and o.dst_level == "L3"]
    both = [v for v in fetched if v in stored]
    if both:
        v = both[0]
        name = f"%{v.name_hint}" if v.name_hint else "a stage tile"
        return (
            f"the L3 hop keeps single buffering: {name} is fetched and written back in place "
            "(the next tile's fetch would overwrite what is written back)"
        )
    for v in fetched + stored:
        if math.prod(T.shape_of(v.type)) == 1:
            name = f"%{v.name_hint}" if v.name_hint else "a stage tile"
            return f"the L3 hop keeps single buffering: {name} is a scalar"
    return None


def _trip_count(loop: scf.ForOp) -> int | None:
    ub = loop.ub.owner
    lb = loop.lb.owner
    if (
        isinstance(ub, arith.ConstantOp)
        and isinstance(lb, arith.ConstantOp)
        and isinstance(ub.value, IntegerAttr)
        and isinstance(lb.value, IntegerAttr)
    ):
        return ub.value.value.data - lb.value.value.data
    return None


def rewrite_stage_loop(loop: scf.ForOp, n: int, rewriter: PatternRewriter) -> None:
    """Multi-buffer the L3 hop of a stage loop: each stage tile a ring of `n`
    slots; stage tile i+1 fetched while tile i's L1 loops run; tile i written
    back without waiting (its slot's previous write-back waited for before the
    slot is written again, only once a previous write-back exists)."""
    body = loop.body.block
    stages = _stage_buffers(loop)
    # the L3 hop only (the L1 copies of a one-tile variant also sit in the body)
    ins = [o for o in body.ops if isinstance(o, dma.CopyOp) and o.src_level == "L3"]
    outs = [o for o in body.ops if isinstance(o, dma.CopyOp) and o.dst_level == "L3"]
    l3_tokens = {c.token for c in ins + outs}
    waits = [o for o in body.ops if isinstance(o, dma.WaitOp) and o.token in l3_tokens]
    # constants are pure: hoist them to the top of the body so that the
    # index arithmetic there (the tile's offsets) is all a fetch needs
    consts = [o for o in body.ops if isinstance(o, arith.ConstantOp)]
    _hoist(body, consts)
    index_ops: list[Operation] = []
    for o in body.ops:
        if not isinstance(o, _INDEX_TYPES):
            break
        index_ops.append(o)
    first_other = body.ops.first if not index_ops else index_ops[-1].next_op
    assert first_other is not None
    trip = _trip_count(loop)
    assert trip is not None, "stage loops have static bounds"
    b, slot, views, reqs_out = _pipeline(loop, first_other, stages, index_ops, ins, outs, n)
    _stage_stores(loop, b, outs, reqs_out, views, slot, n, trip)
    # every other use of a stage tile (the L1 copies inside) reads its slot
    for t in stages:
        t.replace_uses_with_if(views[t], lambda u: loop.is_ancestor(u.operation))
    _erase_single(rewriter, waits, [*ins, *outs], stages)


def _stage_stores(
    loop: scf.ForOp,
    b: Builder,
    outs: list[dma.CopyOp],
    reqs_out: Sequence[SSAValue],
    views: Mapping[SSAValue, SSAValue],
    slot: SSAValue,
    n: int,
    trip: int,
) -> None:
    """The write-backs of a multi-buffered stage loop: before the slot is
    written again, wait for its previous write-back (only from iteration n on:
    before, nothing is in flight on it); each store async on its slot; after
    the loop, a wait on every slot that was used."""
    if not reqs_out:
        return
    _wait_previous(b, loop.body.block.args[0], n, trip, reqs_out, slot)
    for c, r in zip(outs, reqs_out, strict=True):
        Rewriter.insert_op(_write_back(c, views, r, slot), InsertPoint.before(c))
    after = Builder(InsertPoint.after(loop))
    for r in reqs_out:
        for k in range(min(n, trip)):
            after.insert(dma.WaitOp(r, index_const(after, k)))
