"""kernel-select's optimizer family: Gradient accumulation and the optimizer steps."""

from __future__ import annotations

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import (
    Call,
    Fields,
    numel,
    u32,
)


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Gradient accumulation and the SGD step (dm_optimizer.h)."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.AccumulateOp():
            f: Fields = [("buffer", ins[0]), ("grad", ins[1]), ("reset", ins[2])]
            f += [("out", outs[0]), ("size", u32(numel(ins[0])))]
            return [Call("dm_accumulate_fp32", "dm_accumulate_args_t", f, note)]
        case T.SgdOp():
            f = [("weight", ins[0]), ("grad", ins[1]), ("lr", ins[2])]
            f += [("out", outs[0]), ("size", u32(numel(ins[0])))]
            return [Call("dm_sgd_fp32", "dm_sgd_args_t", f, note)]
        case _:
            return None
