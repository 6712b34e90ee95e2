"""kernel-select: every buffer-form compute op becomes the runtime_c kernel
call(s) that implement it (`kernel.call`, deeploy_mlir/dialects/kernel.py).

One rewrite pattern per op family (deeploy_mlir/kernels/, one module each)
chooses the kernel and fills its argument
struct from the operands' own shapes (a tile's, when tiled) and the op's
attributes: elementwise (binary, ReLU, GELU and their gradients, copies),
matrix products (gemm, matmul, batched matmul), convolution and pooling,
normalization, softmax and loss, reductions and transposes, and the
optimizer (gradient accumulation, SGD). An op the kernels cannot run (an
operand in L3, a rank the kernel does not take) is an error naming it.

The C emitter runs this on a copy of the module as its first step and then
only prints: the pipeline's IR (`--emit-ir`, the interpreter, translation
validation) keeps the compute ops. `deeploy-opt -p kernel-select` shows the
choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from deeploy_mlir.dialects import kernel as K
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, MATERIALIZED, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.kernels import FAMILIES, Family


def _check_operands(op: T.TrainingComputeOp) -> None:
    for v in (*op.ins, *op.outs):
        if not isinstance(v.type, MemRefType):
            raise DeeployError(
                f"kernel-select: {op.name} has a non-buffer operand (run training-bufferize first)"
            )
        space = v.type.memory_space
        if isinstance(space, StringAttr) and space.data == "L3":
            raise DeeployError(
                f"{op.name} reads or writes L3 directly; kernels run on L2/L1 "
                "buffers (run memory-home to stage L3 tensors through L2)"
            )


class FamilyKernels(RewritePattern):
    """Replaces the ops of one family (deeploy_mlir/kernels/) by their kernel calls."""

    def __init__(self, name: str, family: Family) -> None:
        self.name = name
        self.family = family

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, T.TrainingComputeOp):
            return
        _check_operands(op)
        calls = self.family(op)
        if calls is None:
            return
        rewriter.replace(
            op, [K.CallOp(c.kernel, c.struct, c.fields, c.note) for c in calls], new_results=[]
        )


def patterns() -> list[FamilyKernels]:
    """One rewrite pattern per kernel family, in FAMILIES' order."""
    return [FamilyKernels(name, family) for name, family in FAMILIES]


def select_kernels(root: Operation) -> None:
    """Every compute op under `root` replaced by its kernel calls, in place."""
    # no dead-code elimination: an unused constant or view stays (the C
    # printer's names count the values it has seen)
    walker = PatternRewriteWalker(
        GreedyRewritePatternApplier(list(patterns()), dce_enabled=False),
        apply_recursively=False,
    )
    for region in root.regions:
        walker.rewrite_region(region)
    for op in root.walk():
        if isinstance(op, T.TrainingComputeOp):
            raise DeeployError(f"kernel-select: runtime_c has no kernel for {op.name}")


@dataclass(frozen=True)
class KernelSelect(ModulePass):
    name = "kernel-select"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require(op, self.name, BUFFER, MATERIALIZED)
        select_kernels(op)
