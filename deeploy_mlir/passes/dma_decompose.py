"""dma-decompose{engine=NAME|TARGET wait_each=true}: copies the engine accepts.

Every `dma.copy` on a hop of the given engines (a target name means all of
its engines, as its Target record in deeploy_mlir.targets.target lists them:
pulp-open = mchan + pulp-open-ram, gap9 = mchan + gap9-ram) gets
its engine. A copy of a higher rank than the engine takes (or of more bytes)
becomes a loop nest of sub-copies: the box dims outermost on the loc side are
peeled, one `scf.for` each (marked `dma.sub_copies`), until the remaining box
is one legal transfer: of the engine's rank, at most `max_bytes` bytes, with
contiguous runs (rows) of at most `max_row` bytes.
The sub-copies are issued on one request, created where the copy was (its
token), or on the copy's ring slot when it had one; the copy's waits stay
where they are and wait for all of them (on that slot). A copy whose sizes or
strides the engine cannot align is an error naming the tensor.

Where the engine's sub-copies share one request that holds a single transfer
(`shared_request`, the L3 RAM requests of both targets) each sub-copy is
waited before the next is issued. The cluster DMA's command may carry several
transfers, but each takes one of 16 transfer ids that only the wait on the
command's latest frees: the C emitter waits for the previous sub-copy of a
`dma.sub_copies` loop nest before it issues the next (see emitters/c/dma.py). A
copy that needs no decomposition stays as it is, fully asynchronous.
`wait_each=false` drops the waits between L3 sub-copies -- only to show, in
tests, the bug they prevent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, MATERIALIZED, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.targets.target import TARGETS

#: a target (all of its engines) or one engine (dma.ENGINES); a test checks
#: that these are the targets and the engines
EngineName = Literal["pulp-open", "gap9", "mchan", "pulp-open-ram", "gap9-ram"]


def _index(b: Builder, v: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result


@dataclass(frozen=True)
class DmaDecompose(ModulePass):
    name = "dma-decompose"

    engine: EngineName = "pulp-open"
    wait_each: bool = True

    def engines(self) -> tuple[dma.EngineAttr, ...]:
        """The engines `engine` names: a target's, or the one engine."""
        names = TARGETS[self.engine].engines if self.engine in TARGETS else (self.engine,)
        unknown = [n for n in names if n not in dma.ENGINES]
        if unknown:
            raise DeeployError(
                f"dma-decompose: unknown engine '{unknown[0]}' (engines: "
                f"{', '.join(dma.ENGINES)}; targets: {', '.join(TARGETS)})"
            )
        return tuple(dma.ENGINES[n] for n in names)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        engines = self.engines()
        require(op, self.name, BUFFER, MATERIALIZED)
        by_hop = {e.hop: e for e in engines}
        for copy in [o for o in op.walk() if isinstance(o, dma.CopyOp)]:
            engine = by_hop.get(copy.hop)
            if engine is None:
                continue
            if copy.engine is not None and copy.engine != engine:
                raise DeeployError(
                    f"dma-decompose: a copy {copy.src_level} -> {copy.dst_level} already has "
                    f"engine '{copy.engine.engine.data}', not '{engine.engine.data}'"
                )
            self._decompose(copy, engine)

    def _decompose(self, copy: dma.CopyOp, engine: dma.EngineAttr) -> None:
        box = copy.box
        # box dims, outermost on the loc side first
        dst_st = T.shape_of(copy.dst.type)
        src_st = T.shape_of(copy.src.type)
        loc_strides = (
            [dma.contiguous_strides(dst_st)[p] for p in copy.perm_list]
            if copy.is_in
            else dma.contiguous_strides(src_st)
        )
        order = sorted((k for k in range(len(box)) if box[k] > 1), key=lambda k: -loc_strides[k])
        peeled: list[int] = []
        sub = list(box)
        src_t, dst_t, perm_t = copy.src.type, copy.dst.type, tuple(copy.perm_list)
        while True:
            why = dma.CopyShape(src_t, dst_t, tuple(sub), perm_t).legality(engine)
            if why is None:
                break
            if len(peeled) == len(order):
                raise DeeployError(
                    f"dma-decompose: no sub-copy of a {copy.src_level} -> {copy.dst_level} copy of "
                    f"sizes {box} fits engine '{engine.engine.data}': {why}"
                )
            k = order[len(peeled)]
            peeled.append(k)
            sub[k] = 1
        bad = dma.CopyShape(src_t, dst_t, tuple(sub), perm_t).misalignment(engine)
        if bad is not None:
            big = copy.src if copy.is_in else copy.dst  # the tensor on the ext side
            name = f"%{big.name_hint}" if big.name_hint else f"a {big.type} tensor"
            raise DeeployError(
                f"dma-decompose: the {copy.src_level} -> {copy.dst_level} copy of {name} cannot "
                f"move on engine '{engine.engine.data}': {bad}"
            )
        if not peeled:
            copy.properties["engine"] = engine
            return
        # a request for the sub-copies, in place of the copy's own
        b = Builder(InsertPoint.before(copy))
        if copy.on is not None:  # already on a request (a ring slot): keep it
            req, slot = copy.on, copy.slot
        else:
            req, slot = b.insert(dma.RequestOp(1)).token, None
        src_off: list[SSAValue] = list(copy.src_offsets)
        dst_off: list[SSAValue] = list(copy.dst_offsets)
        perm = copy.perm_list
        for k in peeled:
            lb, ub, one = _index(b, 0), _index(b, box[k]), _index(b, 1)
            end = scf.YieldOp()
            body = Block([end], arg_types=[IndexType()])
            loop = b.insert(scf.ForOp(lb, ub, one, [], Region(body)))
            loop.attributes[dma.SUB_COPY_LOOP] = UnitAttr()
            b = Builder(InsertPoint.before(end))
            iv = body.args[0]
            src_off[k] = b.insert(arith.AddiOp(src_off[k], iv)).result
            dst_off[perm[k]] = b.insert(arith.AddiOp(dst_off[perm[k]], iv)).result
        sub_copy = b.insert(
            dma.CopyOp(copy.src, src_off, copy.dst, dst_off, sub, perm, engine, on=req, slot=slot)
        )
        if engine.shared and self.wait_each:
            b.insert(dma.WaitOp(sub_copy.token))
        # the copy's waits wait for its sub-copies: on its request, and on
        # the same slot when it was issued on a ring slot
        for use in list(copy.token.uses):
            if slot is not None and isinstance(use.operation, dma.WaitOp):
                Rewriter.replace_op(use.operation, dma.WaitOp(req, slot))
        copy.token.replace_all_uses_with(req)
        Rewriter.erase_op(copy)
