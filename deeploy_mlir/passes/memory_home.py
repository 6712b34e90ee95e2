"""memory-home{l2=BYTES weights=L2|L3 home=L2|L3 stage=whole|tiled prefetch}:
which tensors live in L3.

Runs on buffer-form IR (after training-bufferize, before arena-plan). Every
function argument (parameters, gradient buffers, inputs, outputs: the
tensors that live across a step) starts in L2. `weights=L3` moves every
parameter to L3; `home=L3` every argument (and, with `stage=tiled`, every
temporary) whose size the L3 engines can move (a multiple of 4 bytes: the
accumulation reset flag stays in L2). With an `l2` budget, while the L2 arena
would not fit it, the largest tensor still in L2 moves to L3 (an argument keeps
one level in every function it appears in: the optimizer step shares the
training step's buffers; temporaries are candidates only with `stage=tiled`).

Kernels never touch L3. With `stage=whole` this pass stages each L3 tensor
through a whole-tensor L2 buffer around each op that uses it -- an L3 -> L2
`dma.copy` and its wait before the op if the op reads it, an L2 -> L3 copy and
its wait after the op if the op writes it -- and tiling then moves tiles of
the staged tensor between L2 and L1. With `stage=tiled` (what `lower` uses when
it tiles) the ops keep their L3 operands and tile-select stages them through
L2 in tiles (`tiling.tiled` `outer` sizes), so a tensor larger than the whole
L2 budget can be used; the budget check then counts the smallest stage tiles.
The staging buffers are ordinary L2 allocations: arena-plan overlaps them like
any other temporary, and their bytes count against the budget. With
`prefetch=true` (whole staging) each L3 fetch is issued one op earlier, so
that it flies while the previous op computes (its stage buffer then lives one
op longer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.builder import Builder
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
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, UNPLANNED, UNTILED, require
from deeploy_mlir.errors import DeeployError


def _arg_info(fn: func.FuncOp, i: int) -> tuple[str, str]:
    info = T.arg_info(fn, i)
    return info.name_or(f"{fn.sym_name.data}.arg{i}"), info.kind


def _functions(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]


def _in_level(t: MemRefType, level: str) -> MemRefType:
    return MemRefType(t.get_element_type(), t.get_shape(), memory_space=StringAttr(level))


def move_to_l3(module: ModuleOp, names: set[str], stage: bool = True) -> None:
    """Put the arguments named `names` in L3 and (with `stage`) stage them
    whole through L2 around every op; without, the ops read L3 directly until
    tile-select stages them in tiles."""
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
            if stage:
                stage_uses(new)
        fn.function_type = FunctionType.from_lists(
            [a.type for a in block.args], list(fn.function_type.outputs.data)
        )


def temporaries(module: ModuleOp) -> dict[str, memref.AllocOp]:
    """The L2 temporaries (top-level `memref.alloc`s) by a stable name."""
    out: dict[str, memref.AllocOp] = {}
    for fn in _functions(module):
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
    new = memref.AllocOp([], [], _in_level(t, "L3"))
    new.memref.name_hint = alloc.memref.name_hint
    Rewriter.replace_op(alloc, new)
    return new.memref


def stage_uses(v: SSAValue) -> None:
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
    return T.arena_bytes(probe, "L2")


def _min_stage(module: ModuleOp) -> int:
    """The most L2 any op needs to stage its L3 operands in the smallest tiles."""
    from deeploy_mlir.passes.tile_select import footprint, in_l3, tile_operands, whole_dims

    most = 0
    for fn in _functions(module):
        for o in fn.body.block.ops:
            if not isinstance(o, T.TrainingComputeOp) or not isinstance(
                o, T.IterationSpaceInterface
            ):
                continue
            ops3 = tile_operands(o, in_l3)
            if ops3:
                whole = whole_dims(o)
                dims = o.iteration_space().dims
                smallest = [n if d in whole else 1 for d, n in enumerate(dims)]
                most = max(most, footprint(smallest, ops3, 1))
    return most


def _bytes(t: Attribute) -> int:
    assert isinstance(t, MemRefType)
    return T.elem_bytes(t) * math.prod(t.get_shape())


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
    #: L2: only `weights` and `l2` decide; L3: every argument lives in L3
    home: str = "L2"
    #: whole: stage whole tensors through L2 here; tiled: leave the ops on
    #: their L3 operands for tile-select to stage in tiles (the L3 -> L2 hop)
    stage: str = "whole"

    def _check_options(self) -> None:
        if self.weights not in ("L2", "L3"):
            raise DeeployError(f"memory-home: weights must be L2 or L3, got '{self.weights}'")
        if self.l2 < 0:
            raise DeeployError(f"memory-home: l2 must not be negative, got {self.l2}")
        if self.home not in ("L2", "L3"):
            raise DeeployError(f"memory-home: home must be L2 or L3, got '{self.home}'")
        if self.stage not in ("whole", "tiled"):
            raise DeeployError(f"memory-home: stage must be whole or tiled, got '{self.stage}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self._check_options()
        require(op, self.name, BUFFER, UNPLANNED, UNTILED)
        whole = self.stage == "whole"
        sizes: dict[str, int] = {}
        kinds: dict[str, str] = {}
        for fn in _functions(op):
            for i, a in enumerate(fn.body.block.args):
                name, kind = _arg_info(fn, i)
                if isinstance(a.type, MemRefType):
                    sizes[name] = T.elem_bytes(a.type) * math.prod(a.type.get_shape())
                    kinds[name] = kind
        if self.home == "L3":
            # flags and other tensors of a size the L3 engines cannot move
            # (not a multiple of 4 bytes) stay in L2
            chosen = {n for n in kinds if sizes[n] % 4 == 0}
        elif self.weights == "L3":
            chosen = {n for n, k in kinds.items() if k == "param"}
        else:
            chosen = set()
        if chosen:
            move_to_l3(op, chosen, whole)
        if self.home == "L3" and not whole:
            for alloc in temporaries(op).values():
                if _bytes(alloc.memref.type) % 4 == 0:
                    move_temporary_to_l3(alloc)
        if self.l2:
            self._fit(op, chosen, sizes)
        if self.prefetch and whole:
            for fn in _functions(op):
                _prefetch_l3(fn.body.block)

    def _fit(self, op: ModuleOp, chosen: set[str], sizes: dict[str, int]) -> None:
        whole = self.stage == "whole"
        need = _l2_arena(op, self.prefetch and whole)
        if not whole:
            need += _min_stage(op)
        while need > self.l2:
            left = sorted((n for n in sizes if n not in chosen), key=lambda n: (-sizes[n], n))
            temps = {} if whole else temporaries(op)
            # tiled staging: the largest tensor, argument or temporary, moves
            big_temp = max(
                (n for n, a in temps.items() if _bytes(a.memref.type) % 4 == 0),
                key=lambda n: (_bytes(temps[n].memref.type), n),
                default=None,
            )
            if big_temp is not None and (
                not left or _bytes(temps[big_temp].memref.type) > sizes[left[0]]
            ):
                move_temporary_to_l3(temps[big_temp])
            elif not left:
                raise DeeployError(
                    f"memory-home: the L2 budget of {self.l2} bytes is too small: with every "
                    f"tensor that can live in L3 there the L2 arena still needs {need} bytes"
                )
            else:
                chosen.add(left[0])
                move_to_l3(op, {left[0]}, whole)
            need = _l2_arena(op, self.prefetch and whole)
            if not whole:
                need += _min_stage(op)
