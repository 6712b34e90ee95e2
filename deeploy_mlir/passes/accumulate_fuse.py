"""accumulate-fuse{remarks}: gradients written straight into their
accumulation buffers.

Runs on the buffer form, after training-bufferize and before the memory
homes and tiling. A `training.accumulate` (InPlaceAccumulatorV2: buffer =
reset ? grad : buffer + grad) whose gradient is a buffer of its own, written
by one compute op and read by nothing else, is fused into that op: the op
gets `onto = [output positions]`, the buffers and the reset flag at the end of
its `ins`, and writes the buffer itself (deeploy_mlir/memory/accfuse.py).
The reset flag stays a run-time value: the kernel reads it per call. The
sum is the accumulation's (buffer + grad, added at the store after the op's
own result), so the numbers keep their bits. An op whose kernel cannot add
at its store (`TrainingComputeOp.ontoable`), a gradient read elsewhere, or a
buffer used by other ops in the step is left alone; with `remarks`, each
left-alone accumulation carries its reason as `accfuse.left`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from deeploy_mlir.dialects.forms import BUFFER, UNPLANNED, UNTILED, require
from deeploy_mlir.memory.accfuse import apply as fuse
from deeploy_mlir.memory.accfuse import plan
from deeploy_mlir.memory.buffers import step_functions


@dataclass(frozen=True)
class AccumulateFuse(ModulePass):
    name = "accumulate-fuse"

    #: mark each accumulation left alone with its reason (`accfuse.left`)
    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require(op, self.name, BUFFER, UNPLANNED, UNTILED)
        for fn in step_functions(op):
            block = fn.body.block
            fusions, left = plan(block)
            for f in fusions:
                fuse(f)
            if self.remarks:
                for acc, why in left:
                    acc.attributes["accfuse.left"] = StringAttr(why)
