"""kernel-select's layout family: Reductions and transposes."""

from __future__ import annotations

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import (
    Call,
    Fields,
    arr,
    max_rank,
    u32,
)


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Sum and mean reductions over a set of axes (dm_reduce.h), transposes
    (dm_transpose.h)."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.ReduceSumOp() | T.ReduceMeanOp():
            shape = T.shape_of(ins[0].type)
            max_rank(op, len(shape), 4)
            f: Fields = [
                ("X", ins[0]),
                ("Y", outs[0]),
                ("rank", u32(len(shape))),
                ("shape", arr(shape)),
                ("reduce_mask", u32(sum(1 << a for a in op.axes_list()))),
            ]
            kernel = (
                "dm_reduce_sum_fp32" if isinstance(op, T.ReduceSumOp) else "dm_reduce_mean_fp32"
            )
            return [Call(kernel, "dm_reduce_args_t", f, note)]
        case T.TransposeOp():
            shape = T.shape_of(ins[0].type)
            max_rank(op, len(shape), 6)
            f = [
                ("X", ins[0]),
                ("Y", outs[0]),
                ("rank", u32(len(shape))),
                ("shape", arr(shape, 6)),
                ("perm", arr(op.perm_list(), 6)),
            ]
            # accumulate-fuse: Y is a gradient buffer (old value + X^T unless reset)
            f += [("acc_reset", op.ins[-1])] if op.onto_outputs() else []
            return [Call("dm_transpose_fp32", "dm_transpose_args_t", f, note)]
        case _:
            return None
