"""memory-home{l2=BYTES weights=L2|L3}: which persistent tensors live in L3.

Runs on buffer-form IR (after training-bufferize, before arena-plan). Every
function argument (parameters, gradient buffers, inputs, outputs: the
tensors that live across a step) starts in L2. `weights=L3` moves every
parameter to L3. With an `l2` budget, while the L2 arena would not fit it,
the largest argument still in L2 moves to L3 (an argument keeps one level in
every function it appears in: the optimizer step shares the training step's
buffers).

Kernels never touch L3: around each op that reads or writes a tensor in L3
the pass stages it through a whole-tensor L2 buffer -- an L3 -> L2 `dma.copy`
and its wait before the op if the op reads it, an L2 -> L3 copy and its wait
after the op if the op writes it -- so the L3 hop moves whole tensors, and
tiling then moves tiles of the staged tensor between L2 and L1. The staging
buffers are ordinary L2 allocations: arena-plan overlaps them like any other
temporary, and their bytes count against the budget. With `prefetch=true`
each L3 fetch is issued one op earlier, so that it flies while the previous
op computes (its stage buffer then lives one op longer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError


def _arg_info(fn: func.FuncOp, i: int) -> tuple[str, str]:
    d = fn.arg_attrs.data[i].data if fn.arg_attrs else {}  # type: ignore[attr-defined]
    name = d.get("training.name")
    kind = d.get("training.kind")
    return (
        name.data if isinstance(name, StringAttr) else f"{fn.sym_name.data}.arg{i}",
        kind.data if isinstance(kind, StringAttr) else "input",
    )


def _functions(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]


def _in_level(t: MemRefType, level: str) -> MemRefType:
    return MemRefType(t.get_element_type(), t.get_shape(), memory_space=StringAttr(level))


def move_to_l3(module: ModuleOp, names: set[str]) -> None:
    """Put the arguments named `names` in L3 and stage them around every op."""
    for fn in _functions(module):
        block = fn.body.block
        for i in range(len(block.args)):
            name, _ = _arg_info(fn, i)
            a = block.args[i]
            if name not in names or not isinstance(a.type, MemRefType):
                continue
            if dma.level_of(a.type) == "L3":
                continue
            new = Rewriter.replace_value_with_new_type(a, _in_level(a.type, "L3"))
            _stage_uses(new)
        fn.function_type = FunctionType.from_lists(
            [a.type for a in block.args], list(fn.function_type.outputs.data)
        )


def _stage_uses(v: SSAValue) -> None:
    t = v.type
    assert isinstance(t, MemRefType)
    shape = list(t.get_shape())
    for use in list(v.uses):
        op = use.operation
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
        stage = b.insert(memref.AllocOp([], [], _in_level(t, "L2"))).memref
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


def _l2_arena(module: ModuleOp, prefetch: bool) -> int:
    """The L2 arena `module` will need (with the fetches moved when `prefetch`)."""
    from deeploy_mlir.passes.arena_plan import ArenaPlan
    from deeploy_mlir.pipeline import make_context

    probe = module.clone()
    if prefetch:
        for fn in _functions(probe):
            _prefetch_l3(fn.body.block)
    ArenaPlan(level="L2").apply(make_context(), probe)
    a = probe.attributes.get("training.arena_L2")
    return a.value.data if isinstance(a, IntegerAttr) else 0


def _is_l3_fetch(o: Operation) -> bool:
    return (
        isinstance(o, dma.CopyOp)
        and o.src_level == "L3"
        and isinstance(o.dst.owner, memref.AllocOp)
        and o.dst.owner.parent_block() is o.parent_block()
    )


def _writes(o: Operation, l3: SSAValue) -> bool:
    """Whether `o` is a store into `l3` or the wait of one."""
    if isinstance(o, dma.WaitOp):
        owner = o.token.owner
        return isinstance(owner, dma.CopyOp) and owner.dst is l3
    return isinstance(o, dma.CopyOp) and o.dst is l3


def _prefetch_l3(block: Block) -> None:
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


@dataclass(frozen=True)
class MemoryHome(ModulePass):
    name = "memory-home"

    #: L2 budget in bytes (0: no budget, only `weights` decides)
    l2: int = 0
    weights: str = "L2"
    #: issue each L3 fetch one op early (double buffering of the L3 hop)
    prefetch: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.weights not in ("L2", "L3"):
            raise DeeployError(f"memory-home: weights must be L2 or L3, got '{self.weights}'")
        if self.l2 < 0:
            raise DeeployError(f"memory-home: l2 must not be negative, got {self.l2}")
        sizes: dict[str, int] = {}
        kinds: dict[str, str] = {}
        for fn in _functions(op):
            for i, a in enumerate(fn.body.block.args):
                name, kind = _arg_info(fn, i)
                if isinstance(a.type, MemRefType):
                    sizes[name] = T.elem_bytes(a.type) * math.prod(a.type.get_shape())
                    kinds[name] = kind
        chosen = {n for n, k in kinds.items() if k == "param"} if self.weights == "L3" else set()
        if chosen:
            move_to_l3(op, chosen)
        if self.l2:
            self._fit(op, chosen, sizes)
        if self.prefetch:
            for fn in _functions(op):
                _prefetch_l3(fn.body.block)

    def _fit(self, op: ModuleOp, chosen: set[str], sizes: dict[str, int]) -> None:
        need = _l2_arena(op, self.prefetch)
        while need > self.l2:
            left = sorted((n for n in sizes if n not in chosen), key=lambda n: (-sizes[n], n))
            if not left:
                raise DeeployError(
                    f"memory-home: the L2 budget of {self.l2} bytes is too small: with every "
                    f"tensor that lives across a step in L3 the L2 arena still needs {need} bytes"
                )
            chosen.add(left[0])
            move_to_l3(op, {left[0]})
            need = _l2_arena(op, self.prefetch)
