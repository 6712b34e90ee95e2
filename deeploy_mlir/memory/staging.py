"""Whole-tensor homes in L3 and their staging through L2.

`move_to_l3` puts named step-function arguments in L3 (an argument keeps
one level in every function it appears in), `move_temporary_to_l3` a
temporary (their `training.view`s move with them: the same storage);
`stage_uses` stages an L3 tensor whole through an L2 buffer around every op
that uses it or a view of it (fetch and wait before an op that reads it,
store and wait after one that writes it); `prefetch_l3` issues each such fetch one op
earlier. memory-home and memory-regime apply them.

A library module: it imports xDSL, the training and dma dialects and the
buffer facts.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.memory.buffers import arg_name, in_level, step_functions


def move_to_l3(module: ModuleOp, names: set[str], stage: bool = True) -> None:
    """Put the arguments named `names` in L3 and (with `stage`) stage them
    whole through L2 around every op; without, the ops read L3 directly until
    tile-select stages them in tiles."""
    for fn in step_functions(module):
        block = fn.body.block
        for i in range(len(block.args)):
            name = arg_name(fn, i)
            a = block.args[i]
            if name not in names or not isinstance(a.type, MemRefType):
                continue
            if dma.level_of(a.type) == "L3":
                continue
            new = Rewriter.replace_value_with_new_type(a, in_level(a.type, "L3"))
            T.retype_views(new)
            if stage:
                stage_uses(new)
        fn.function_type = FunctionType.from_lists(
            [a.type for a in block.args], list(fn.function_type.outputs.data)
        )


def temporaries(module: ModuleOp) -> dict[str, memref.AllocOp]:
    """The L2 temporaries (top-level `memref.alloc`s) by a stable name."""
    out: dict[str, memref.AllocOp] = {}
    for fn in step_functions(module):
        for k, o in enumerate(fn.body.block.ops):
            if (
                isinstance(o, memref.AllocOp)
                and isinstance(o.memref.type, MemRefType)
                and dma.level_of(o.memref.type) == "L2"
            ):
                out[f"@{fn.sym_name.data}/%{o.memref.name_hint or 'tmp'}#{k}"] = o
    return out


def move_temporary_to_l3(alloc: memref.AllocOp) -> SSAValue:
    """Allocate the temporary of `alloc` in L3 instead (its ops then read L3
    directly: only for tile-select's tiled staging)."""
    t = alloc.memref.type
    assert isinstance(t, MemRefType)
    new = memref.AllocOp([], [], in_level(t, "L3"))
    new.memref.name_hint = alloc.memref.name_hint
    Rewriter.replace_op(alloc, new)
    T.retype_views(new.memref)
    return new.memref


def stage_uses(v: SSAValue) -> None:
    t = v.type
    assert isinstance(t, MemRefType)
    shape = list(t.get_shape())
    for use in list(v.uses):
        op = use.operation
        if isinstance(op, T.ViewOp):  # the same storage: stage around its uses
            stage_uses(op.result)
            continue
        if not isinstance(op, T.TrainingComputeOp):
            raise DeeployError(
                f"memory-home: %{v.name_hint or 'arg'} is used by {op.name}, which cannot be "
                "staged from L3 (run memory-home right after training-bufferize)"
            )
        if v not in op.operands:
            continue  # staged already for an earlier use of the same op
        reads = v in op.ins
        writes = v in op.outs
        b = Builder(InsertPoint.before(op))
        stage = b.insert(memref.AllocOp([], [], in_level(t, "L2"))).memref
        stage.name_hint = f"{v.name_hint or 'arg'}_l2"
        zero = b.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).result
        zeros = [zero] * len(shape)
        if reads:
            c = b.insert(dma.CopyOp(v, zeros, stage, zeros, shape))
            c.token.name_hint = f"{v.name_hint or 'arg'}_fetch"
            b.insert(dma.WaitOp(c.token))
        op.operands = [stage if o is v else o for o in op.operands]
        if writes:
            after = Builder(InsertPoint.after(op))
            c = after.insert(dma.CopyOp(stage, zeros, v, zeros, shape))
            c.token.name_hint = f"{v.name_hint or 'arg'}_store"
            after.insert(dma.WaitOp(c.token))


def _is_l3_fetch(o: Operation) -> bool:
    return (
        isinstance(o, dma.CopyOp)
        and o.src_level == "L3"
        and isinstance(o.dst.owner, memref.AllocOp)
        and o.dst.owner.parent_block() is o.parent_block()
    )


def _writes(o: Operation, l3: SSAValue) -> bool:
    """Whether `o` is a store into `l3`'s storage (itself, or what it is a view
    of, or a view of that) or the wait of one."""
    if isinstance(o, dma.WaitOp):
        owner = o.token.owner
        return isinstance(owner, dma.CopyOp) and _writes(owner, l3)
    root = T.storage_root(l3)
    return isinstance(o, dma.CopyOp) and T.storage_root(o.dst) is root


def prefetch_l3(block: Block) -> None:
    """Issue each whole-tensor L3 -> L2 fetch (memory-home's staging) one op
    earlier, so that it flies while the previous op computes; its wait stays
    before the op that reads it. A fetch never moves above a write of its L3
    source (the store copy or its wait)."""
    for fetch in [o for o in block.ops if _is_l3_fetch(o)]:
        assert isinstance(fetch, dma.CopyOp)
        alloc = fetch.dst.owner
        assert isinstance(alloc, Operation)
        group = [alloc]  # the stage buffer, its index constants, the copy
        cur = alloc.next_op
        while cur is not None and cur is not fetch:
            if not isinstance(cur, arith.ConstantOp):
                break
            group.append(cur)
            cur = cur.next_op
        if cur is not fetch:
            continue
        group.append(fetch)
        target: Operation | None = None
        prev = alloc.prev_op
        while prev is not None:
            if _writes(prev, fetch.src):
                break
            if isinstance(prev, T.TrainingComputeOp | scf.ForOp):
                target = prev
                break
            prev = prev.prev_op
        if target is None:
            continue
        for o in group:
            o.detach()
            Rewriter.insert_op(o, InsertPoint.before(target))
        fetch.attributes["dma.remark"] = StringAttr(
            "memory-home: L3 fetch issued one op early (overlaps its compute)"
        )
