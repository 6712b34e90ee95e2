"""L3 copies moved so that they fly while the cluster computes (l3-overlap).

After tiling-materialize, an op whose L3 operands fit one stage tile has
them fetched into a fresh L2 buffer, waited for, computed on and stored back,
all at the top level of its step function, around the op: with nothing to
compute between a copy and its wait, the HyperRAM hop is not overlapped.

- `hoist_fetch`: each top-level L3 -> L2 fetch into a fresh top-level L2
  buffer (the buffer, the copy and the index constants it uses) moves above
  the compute op (or loop) before it, so that it is issued before the
  previous op computes; its wait stays where it was. It never moves above a
  store into its L3 source (the copy or its wait: `writes`).
- `sink_store_wait`: each top-level wait on an L2 -> L3 store moves below
  the next compute op (or loop), so that the store flies while that op
  computes; never past the function's end, nor past a copy from or into the
  same L3 storage (the IR's copies promise no order among themselves: a
  store's bytes are there once it is waited for), nor past an op that
  writes the store's L2 source (a forwarded fetch's readers may, see
  memory/forward.py).

Both only move ops; the copies run in the order they did. A moved buffer
lives longer (a store's source until its wait: memory.probe counts a
store's wait as a use of the buffer it reads), so the L2 plan may grow; each move returns its undo,
and the pass keeps only the moves the L2 budget allows.

A library module: it imports xDSL and the training and dma dialects.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.memory.forward import writes_buffer

Undo = Callable[[], None]


def _computes(o: Operation) -> bool:
    return isinstance(o, T.TrainingComputeOp | scf.ForOp)


def writes(o: Operation, l3: SSAValue) -> bool:
    """Whether `o` stores into `l3`'s storage (the copy, or its wait)."""
    if isinstance(o, dma.WaitOp):
        owner = o.token.owner
        return isinstance(owner, dma.CopyOp) and writes(owner, l3)
    return isinstance(o, dma.CopyOp) and T.storage_root(o.dst) is T.storage_root(l3)


def _move(o: Operation, before: Operation) -> Undo:
    """Move `o` before `before`; the undo puts it back."""
    anchor, block = o.next_op, o.parent_block()
    assert block is not None
    o.detach()
    Rewriter.insert_op(o, InsertPoint.before(before))

    def undo() -> None:
        o.detach()
        if anchor is not None:
            Rewriter.insert_op(o, InsertPoint.before(anchor))
        else:
            Rewriter.insert_op(o, InsertPoint.at_end(block))

    return undo


def _is_fetch(o: Operation, block: Block) -> bool:
    return (
        isinstance(o, dma.CopyOp)
        and o.src_level == "L3"
        and o.on is None
        and isinstance(o.dst.owner, memref.AllocOp)
        and o.dst.owner.parent_block() is block
    )


def _target(fetch: dma.CopyOp) -> tuple[Operation, set[Operation]] | None:
    """The compute op (or loop) before `fetch` and the ops between them;
    None when there is none or a store into the fetch's L3 source lies
    between or inside it."""
    between: set[Operation] = set()
    prev = fetch.prev_op
    while prev is not None:
        if writes(prev, fetch.src):
            return None
        if _computes(prev):
            # a loop's stores into the source (an output it writes tile by
            # tile) are below the fetch's new place too
            if any(writes(c, fetch.src) for c in prev.walk()):
                return None
            return prev, between
        between.add(prev)
        prev = prev.prev_op
    return None


def hoist_fetch(fetch: dma.CopyOp) -> Undo | None:
    """Move `fetch` (and its buffer, and the index constants it uses after
    the target) above the compute op before it; None when it cannot move."""
    block = fetch.parent_block()
    alloc = fetch.dst.owner
    assert block is not None and isinstance(alloc, memref.AllocOp)
    found = _target(fetch)
    if found is None or alloc not in found[1]:
        return None
    target, between = found
    for u in T.uses_through_views(alloc.memref):
        user: Operation | None = u.operation
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user in between:  # the buffer is used before the fetch fills it
            return None
    consts: list[Operation] = []
    for v in fetch.operands:
        d = v.owner
        if isinstance(d, Operation) and d in between and d is not alloc:
            if not isinstance(d, arith.ConstantOp):
                return None
            if d not in consts:
                consts.append(d)
    undos: list[Undo] = []
    for c in consts:
        clone = c.clone()
        Rewriter.insert_op(clone, InsertPoint.before(target))
        old = c.results[0]
        fetch.operands = [clone.results[0] if x is old else x for x in fetch.operands]

        def restore(fc: Operation = clone, o: SSAValue = old) -> None:
            fetch.operands = [o if x is fc.results[0] else x for x in fetch.operands]
            fc.detach()
            fc.erase()

        undos.append(restore)
    undos.append(_move(alloc, target))
    undos.append(_move(fetch, target))
    fetch.attributes["dma.remark"] = StringAttr(
        "l3-overlap: L3 fetch issued before the previous op computes"
    )

    def undo() -> None:
        del fetch.attributes["dma.remark"]
        for u in reversed(undos):
            u()

    return undo


def _touches(o: Operation, root: SSAValue) -> bool:
    """Whether `o` is (or holds) a copy from or into `root`'s storage."""
    return any(
        isinstance(c, dma.CopyOp) and root in (T.storage_root(c.src), T.storage_root(c.dst))
        for c in o.walk()
    )


def sink_store_wait(wait: dma.WaitOp) -> Undo | None:
    """Move the wait of a top-level L2 -> L3 store below the next compute op
    (a copy from or into the same L3 storage before it: just above that copy,
    the store is waited for before its bytes are read or written again); None
    when it cannot move."""
    store = wait.token.owner
    assert isinstance(store, dma.CopyOp)
    root, src = T.storage_root(store.dst), T.storage_root(store.src)
    nxt = wait.next_op
    while nxt is not None and not isinstance(nxt, func.ReturnOp):
        # the store reads its source until the wait: no op that writes it
        # (a forwarded fetch's readers may) runs before the wait
        if _touches(nxt, root) or writes_buffer(nxt, src):
            break
        if _computes(nxt):
            nxt = nxt.next_op
            break
        nxt = nxt.next_op
    if nxt is None or nxt is wait.next_op:
        return None
    return _move(wait, nxt)


def _is_store_wait(o: Operation) -> bool:
    if not isinstance(o, dma.WaitOp) or o.slot is not None:
        return False
    c = o.token.owner
    return isinstance(c, dma.CopyOp) and c.on is None and c.dst_level == "L3"


def overlap_moves(block: Block) -> list[Callable[[], Undo | None]]:
    """The moves of one step function's body, in program order: each, when
    called, moves its op and returns the undo (None: it could not move)."""
    moves: list[Callable[[], Undo | None]] = []
    for o in list(block.ops):
        if _is_fetch(o, block):
            assert isinstance(o, dma.CopyOp)
            moves.append(lambda f=o: hoist_fetch(f))
        elif _is_store_wait(o):
            assert isinstance(o, dma.WaitOp)
            moves.append(lambda w=o: sink_store_wait(w))
    return moves
