"""accumulate-fuse's analysis and rewrite: a gradient written by one compute
op and read only by a `training.accumulate` (InPlaceAccumulatorV2: out =
reset ? grad : buffer + grad) is written by its producer straight into the
accumulation buffer. The producer gets `onto = [output positions]` and, at
the end of its `ins`, each buffer and the reset flag; it then writes reset ?
f : buffer + f, the same bits as the two ops (its kernel adds the buffer at
the store, after the producer's own sum: an epilogue, so a reduction is summed
exactly as before). The gradient's buffer and its two transfers (written by
the producer, read back by the accumulation) go away.

A library module: passes/accumulate_fuse.py imports it. It imports xDSL, the
training dialect and irutil.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import memref
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.irutil import rebuild


@dataclass
class Fusion:
    """The accumulations one producer takes over: output position -> the
    accumulate op that reads that output."""

    producer: T.TrainingComputeOp
    accs: dict[int, T.AccumulateOp] = field(default_factory=dict[int, T.AccumulateOp])


def _before(block: Block, v: SSAValue, op: Operation) -> bool:
    """`v` is available at `op`: an argument of `block`, or made above `op` in it."""
    if isinstance(v, BlockArgument):
        return v.block is block
    owner = v.owner
    return isinstance(owner, Operation) and owner.parent is block and owner.is_before_in_block(op)


def why_not(acc: T.AccumulateOp, block: Block) -> str | Fusion:
    """The fusion of `acc` into the op that writes its gradient, or why it is
    left alone (one line)."""
    if not acc.is_buffer_form:
        return "not in buffer form"
    buf, grad, reset = acc.ins
    if acc.outs[0] is not buf:
        return "the sum goes to another buffer than the one it reads (not in place)"
    if any(u.operation is not acc for u in buf.uses):
        return "the buffer has other readers or writers in the step"
    alloc = grad.owner
    if not isinstance(alloc, memref.AllocOp) or alloc.parent is not block:
        return "the gradient is not a buffer of its own in the step (an argument or a view)"
    users = {u.operation for u in grad.uses} - {acc}
    if len(users) != 1 or sum(1 for u in grad.uses if u.operation is acc) != 1:
        return "the gradient has other readers (or none writes it)"
    (prod,) = users
    if not isinstance(prod, T.TrainingComputeOp) or not prod.is_buffer_form:
        return f"the gradient is written by {prod.name}, not a compute op"
    outs = list(prod.outs)
    if grad in prod.ins or outs.count(grad) != 1:
        return f"{prod.name} reads the gradient too or writes it twice"
    k = outs.index(grad)
    if k not in prod.ontoable():
        return f"{prod.name} cannot accumulate onto its output #{k}"
    if prod.accumulated():
        return f"{prod.name} already adds into its outputs (accumulate)"
    if prod.parent is not block or not prod.is_before_in_block(acc):
        return f"{prod.name} is not above the accumulation in the step"
    if not (_before(block, buf, prod) and _before(block, reset, prod)):
        return "the buffer or the reset flag is made after the gradient's producer"
    bt, gt = buf.type, grad.type
    assert isinstance(bt, MemRefType) and isinstance(gt, MemRefType)
    if T.shape_of(bt) != T.shape_of(gt) or bt.get_element_type() != gt.get_element_type():
        return "the buffer and the gradient differ in shape or element type"
    return Fusion(prod, {k: acc})


def plan(block: Block) -> tuple[list[Fusion], list[tuple[T.AccumulateOp, str]]]:
    """The fusions of `block` (one per producer, with every output it takes
    over) and the accumulations left alone with their reasons."""
    by_prod: dict[T.TrainingComputeOp, Fusion] = {}
    left: list[tuple[T.AccumulateOp, str]] = []
    for op in list(block.ops):
        if not isinstance(op, T.AccumulateOp):
            continue
        got = why_not(op, block)
        if isinstance(got, str):
            left.append((op, got))
            continue
        f = by_prod.setdefault(got.producer, Fusion(got.producer))
        if f.accs and next(iter(f.accs.values())).ins[2] is not op.ins[2]:
            left.append((op, f"{got.producer.name} already accumulates under another reset flag"))
            continue
        f.accs.update(got.accs)
    return list(by_prod.values()), left


def apply(f: Fusion) -> T.TrainingComputeOp:
    """Rewrites the producer of `f` to accumulate onto the buffers; erases
    the accumulations and the gradients' buffers."""
    prod = f.producer
    onto = sorted(f.accs)
    outs = list(prod.outs)
    grads = [outs[k] for k in onto]
    bufs = [f.accs[k].ins[0] for k in onto]
    reset = f.accs[onto[0]].ins[2]
    for k, b in zip(onto, bufs, strict=True):
        outs[k] = b
    props = {"onto": DenseArrayBase.from_list(i64, onto)}
    new = rebuild(prod, [*prod.ins, *bufs, reset], outs, props)
    block = prod.parent
    assert block is not None
    block.insert_op_before(new, prod)
    for k in onto:
        f.accs[k].detach()
        f.accs[k].erase()
    prod.detach()
    prod.erase()
    for g in grads:
        alloc = g.owner
        assert isinstance(alloc, Operation) and not g.uses
        alloc.detach()
        alloc.erase()
    return new
