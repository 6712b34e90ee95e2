"""L3 copies that need not happen: a fetch of bytes that an L2 buffer
already holds, and a store that a later store overwrites unread (l3-overlap).

After tiling-materialize, an op whose L3 operands fit one stage tile has
them fetched into a fresh L2 buffer before it and stored back after it, at
the top level of its step function. So the output of one op, stored to L3,
is fetched right back into another L2 buffer for the next op (MobileNetV1's
conv, then its in-place relu, then the next conv: store, fetch, store, fetch
of the same 73,728 bytes), and nothing between the store and the fetch can
overlap either: the fetch must wait for the store.

- `forward_fetch`: a top-level fetch of a whole L2 buffer B from an L3 box
  that the last top-level copy touching that L3 storage moved to or from a
  whole L2 buffer A of B's type (the same box, waited for before the fetch),
  with A not written between and not used after the fetch: B's uses read A
  instead, and the fetch, its waits and B go.
- `drop_dead_store`: a top-level store into an L3 box whose next touch of
  that L3 storage is a top-level store of the same box (nothing reads the
  box in between): the first store and its waits go.

The values every op reads are the same bytes; only the L3 hop is skipped.
L2 needs no more room: A lives until B's last use instead of B.

A library module: it imports xDSL and the training and dma dialects.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T


def _const(v: SSAValue) -> int | None:
    o = v.owner
    if isinstance(o, arith.ConstantOp):
        val = getattr(o.value, "value", None)
        data = getattr(val, "data", None)
        return data if isinstance(data, int) else None
    return None


def _same_index(a: SSAValue, b: SSAValue) -> bool:
    if a is b:
        return True
    ca, cb = _const(a), _const(b)
    return ca is not None and ca == cb


def _l3_side(c: dma.CopyOp) -> tuple[SSAValue, list[SSAValue]]:
    """The L3 operand of an L3 <-> L2 copy and its offsets."""
    if c.src_level == "L3":
        return c.src, list(c.src_offsets)
    return c.dst, list(c.dst_offsets)


def _l2_side(c: dma.CopyOp) -> tuple[SSAValue, list[SSAValue]]:
    if c.src_level == "L3":
        return c.dst, list(c.dst_offsets)
    return c.src, list(c.src_offsets)


def _plain(c: dma.CopyOp, block: Block) -> bool:
    """A top-level L3 <-> L2 copy of a whole top-level L2 buffer, on no
    ring, not transposing."""
    if c.parent_block() is not block or c.on is not None or c.slot is not None:
        return False
    if {c.src_level, c.dst_level} != {"L3", "L2"}:
        return False
    if c.perm_list != list(range(len(c.box))):
        return False
    buf, offs = _l2_side(c)
    if not isinstance(buf.owner, memref.AllocOp) or buf.owner.parent_block() is not block:
        return False
    t = buf.type
    return (
        isinstance(t, MemRefType)
        and list(t.get_shape()) == c.box
        and all(_const(o) == 0 for o in offs)
    )


def _same_box(a: dma.CopyOp, b: dma.CopyOp) -> bool:
    (ta, oa), (tb, ob) = _l3_side(a), _l3_side(b)
    return (
        ta is tb
        and a.box == b.box
        and len(oa) == len(ob)
        and all(_same_index(x, y) for x, y in zip(oa, ob, strict=True))
        and _l2_side(a)[0].type == _l2_side(b)[0].type
    )


def _touches(o: Operation, root: SSAValue) -> bool:
    """Whether `o` is (or holds) a copy from or into `root`'s storage."""
    return any(
        isinstance(c, dma.CopyOp) and root in (T.storage_root(c.src), T.storage_root(c.dst))
        for c in o.walk()
    )


def writes_buffer(o: Operation, root: SSAValue) -> bool:
    """Whether `o` (or an op inside it) may write `root`'s storage: a copy
    into it, a compute op with an output in it, or any other op but a view,
    a wait or a copy from it that takes it as an operand."""
    for c in o.walk():
        if isinstance(c, dma.CopyOp):
            if T.storage_root(c.dst) is root:
                return True
        elif isinstance(c, T.TrainingComputeOp):
            if any(T.storage_root(v) is root for v in c.outs):
                return True
        elif not isinstance(c, T.ViewOp | dma.WaitOp | dma.SlotOp):
            if any(
                isinstance(v.type, MemRefType) and T.storage_root(v) is root for v in c.operands
            ):
                return True
    return False


def _top(o: Operation, block: Block) -> Operation | None:
    """`o`'s ancestor in `block` (itself when it is there)."""
    cur: Operation | None = o
    while cur is not None and cur.parent_block() is not block:
        cur = cur.parent_op()
    return cur


def _waits(c: dma.CopyOp, block: Block) -> list[dma.WaitOp] | None:
    """The waits on `c`'s token, all top-level ones; None otherwise."""
    out: list[dma.WaitOp] = []
    for u in c.token.uses:
        w = u.operation
        if not isinstance(w, dma.WaitOp) or w.slot is not None or w.parent_block() is not block:
            return None
        out.append(w)
    return out


def _erase_copy(c: dma.CopyOp, waits: list[dma.WaitOp]) -> None:
    for w in waits:
        w.detach()
        w.erase()
    c.detach()
    c.erase()


def _holder(fetch: dma.CopyOp, block: Block) -> SSAValue | None:
    """The L2 buffer A that holds `fetch`'s box when it is issued (see
    `forward_fetch`), None when there is none."""
    root = T.storage_root(fetch.src)
    ops = list(block.ops)
    at = ops.index(fetch)
    # the last top-level op before the fetch that touches the L3 storage
    k = at - 1
    while k >= 0 and not _touches(ops[k], root):
        k -= 1
    prev = ops[k] if k >= 0 else None
    if not isinstance(prev, dma.CopyOp) or not _plain(prev, block) or not _same_box(prev, fetch):
        return None
    pwaits = _waits(prev, block)
    if not pwaits or not any(ops.index(w) < at for w in pwaits):
        return None
    a = _l2_side(prev)[0]
    # A is not written from that copy to the fetch, nor used after it
    if any(writes_buffer(o, T.storage_root(a)) for o in ops[k + 1 : at]):
        return None
    for u in T.uses_through_views(a):
        top = _top(u.operation, block)
        if top is None or ops.index(top) > at:
            return None
    return a


@dataclass
class Forwarded:
    """A forwarded fetch: its readers read A; the fetch, its waits and B are
    out of the block until `commit` erases them or `undo` puts all back."""

    a: SSAValue
    b: SSAValue
    users: list[tuple[Operation, int]]
    gone: list[tuple[Operation, Operation | None, Block]]

    def undo(self) -> None:
        for user, i in self.users:
            user.operands[i] = self.b
        for o, anchor, blk in reversed(self.gone):
            if anchor is not None and anchor.parent_block() is blk:
                Rewriter.insert_op(o, InsertPoint.before(anchor))
            else:
                Rewriter.insert_op(o, InsertPoint.at_end(blk))

    def commit(self) -> None:
        for o, _, _ in self.gone:
            o.erase()


def forward_fetch(fetch: dma.CopyOp) -> Forwarded | None:
    """Make the readers of `fetch`'s buffer B (a whole fresh L2 buffer
    filled from L3) read the L2 buffer A that already holds its bytes (see
    the module doc); None when it cannot."""
    block = fetch.parent_block()
    if block is None or fetch.src_level != "L3" or not _plain(fetch, block):
        return None
    b, fwaits = fetch.dst, _waits(fetch, block)
    a = _holder(fetch, block) if fwaits is not None else None
    if a is None or fwaits is None:
        return None
    ops = list(block.ops)
    at = ops.index(fetch)
    # B is read only after the fetch (and waited for after it)
    for u in T.uses_through_views(b):
        top = _top(u.operation, block)
        if top is None or (top is not fetch and ops.index(top) < at):
            return None
    alloc_b = b.owner
    assert isinstance(alloc_b, memref.AllocOp)
    users = [(u.operation, u.index) for u in b.uses if u.operation is not fetch]
    gone: list[tuple[Operation, Operation | None, Block]] = []
    for o in [*fwaits, fetch, alloc_b]:
        gone.append((o, o.next_op, block))
        o.detach()
    for user, i in users:
        user.operands[i] = a
    return Forwarded(a, b, users, gone)


def drop_dead_store(store: dma.CopyOp) -> bool:
    """Erase `store` (a whole L2 buffer -> an L3 box) when the next top-level
    op touching that L3 storage is a store of the same box; False when it
    cannot."""
    block = store.parent_block()
    if block is None or store.dst_level != "L3" or not _plain(store, block):
        return False
    waits = _waits(store, block)
    if waits is None:
        return False
    root = T.storage_root(store.dst)
    ops = list(block.ops)
    for o in ops[ops.index(store) + 1 :]:
        if isinstance(o, dma.WaitOp) and o in waits:
            continue
        if not _touches(o, root):
            continue
        if (
            isinstance(o, dma.CopyOp)
            and o.dst_level == "L3"
            and _plain(o, block)
            and _same_box(o, store)
        ):
            _erase_copy(store, waits)
            return True
        return False
    return False


def forward_candidates(block: Block) -> list[dma.CopyOp]:
    """The top-level L3 -> L2 fetches of `block`, in program order."""
    return [o for o in block.ops if isinstance(o, dma.CopyOp) and o.src_level == "L3"]


def drop_dead_stores(block: Block) -> int:
    """Drop every dead store of `block` (`drop_dead_store`); how many."""
    return sum(1 for o in list(block.ops) if isinstance(o, dma.CopyOp) and drop_dead_store(o))


def _writes_l3(o: Operation, root: SSAValue) -> bool:
    """Whether `o` (or an op inside it) copies into `root`'s storage."""
    return any(isinstance(c, dma.CopyOp) and T.storage_root(c.dst) is root for c in o.walk())


def hoist_invariant_fetch(fetch: dma.CopyOp) -> bool:
    """Move a fetch that a top-level stage loop repeats unchanged (the same
    L3 box into the same L2 buffer, allocated outside the loop, each
    iteration) and its waits above the loop: one fetch instead of one per
    iteration. Nothing else in the loop may write the buffer or the L3
    storage; the index constants it uses inside the loop are cloned above
    it. False when it cannot."""
    loop = fetch.parent_op()
    body = fetch.parent_block()
    if not isinstance(loop, scf.ForOp) or body is None or loop.parent_block() is None:
        return False
    outer = loop.parent_block()
    assert outer is not None
    if fetch.src_level != "L3" or fetch.on is not None or fetch.slot is not None:
        return False
    buf = T.storage_root(fetch.dst)
    if not isinstance(buf.owner, memref.AllocOp) or buf.owner.parent_block() is not outer:
        return False
    waits = _waits(fetch, body)
    if not waits:
        return False
    consts = _invariant_consts(fetch, loop, body)
    if consts is None:
        return False
    src = T.storage_root(fetch.src)
    ops = list(body.ops)
    at = ops.index(fetch)
    for k, o in enumerate(ops):
        if o is fetch or o in waits:
            continue
        if writes_buffer(o, buf) or _writes_l3(o, src):
            return False
        # nothing in the loop reads the buffer before the fetch fills it
        if k < at and any(T.storage_root(v) is buf for c in o.walk() for v in c.operands):
            return False
    for c in consts:
        clone = c.clone()
        Rewriter.insert_op(clone, InsertPoint.before(loop))
        fetch.operands = [clone.results[0] if x is c.results[0] else x for x in fetch.operands]
    fetch.detach()
    Rewriter.insert_op(fetch, InsertPoint.before(loop))
    for w in waits:
        w.detach()
        Rewriter.insert_op(w, InsertPoint.before(loop))
    return True


def _inside(v: SSAValue, loop: Operation) -> bool:
    """Whether `v` is defined inside `loop` (its induction variable too)."""
    owner = v.owner
    op: Operation | None = owner if isinstance(owner, Operation) else owner.parent_op()
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def _invariant_consts(fetch: dma.CopyOp, loop: Operation, body: Block) -> list[Operation] | None:
    """The index constants in `body` that `fetch` uses, when every other
    operand is defined outside `loop`; None otherwise."""
    consts: list[Operation] = []
    for v in fetch.operands:
        if not _inside(v, loop):
            continue
        d = v.owner
        if not isinstance(d, arith.ConstantOp) or d.parent_block() is not body:
            return None
        if d not in consts:
            consts.append(d)
    return consts


def hoist_invariant_fetches(block: Block) -> int:
    """`hoist_invariant_fetch` for the fetches of every loop at the top level
    of `block`; how many moved."""
    n = 0
    for loop in [o for o in block.ops if isinstance(o, scf.ForOp)]:
        for o in list(loop.body.block.ops):
            if isinstance(o, dma.CopyOp) and hoist_invariant_fetch(o):
                n += 1
    return n
