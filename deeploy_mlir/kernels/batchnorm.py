"""kernel-select's batchnorm family: training.batch_norm and
training.batch_norm_grad onto runtime_c/kernels/batchnorm.c
(dm_batchnorm.h), two kernels (two forks) each: the per-channel statistics
or sums, then the elementwise pass that reads them. X is seen as [N, C, S]
(S: the product of the spatial dims; a channel tile is [N, C_tile, S])."""

from __future__ import annotations

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import Call, Fields, float32, u32


def _geometry(op: T.BatchNormOp | T.BatchNormGradOp) -> Fields:
    n, c, s = op.geometry()
    return [("N", u32(n)), ("C", u32(c)), ("S", u32(s))]


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.BatchNormOp():
            f: Fields = [
                ("X", ins[0]),
                ("scale", ins[1]),
                ("bias", ins[2]),
                ("running_mean_in", ins[3]),
                ("running_var_in", ins[4]),
                ("Y", outs[0]),
                ("running_mean", outs[1]),
                ("running_var", outs[2]),
                ("mean", outs[3]),
                ("inv_std", outs[4]),
                *_geometry(op),
                ("epsilon", float32(op.epsilon.value.data)),
                ("momentum", float32(op.momentum.value.data)),
            ]
            return [
                Call("dm_batchnorm_stats_fp32", "dm_batchnorm_args_t", f, f"{note} (stats)"),
                Call("dm_batchnorm_apply_fp32", "dm_batchnorm_args_t", f, note),
            ]
        case T.BatchNormGradOp():
            f = [
                ("dY", ins[0]),
                ("X", ins[1]),
                ("scale", ins[2]),
                ("mean", ins[3]),
                ("inv_std", ins[4]),
                ("dX", outs[0]),
                ("dscale", outs[1]),
                ("dbias", outs[2]),
                *_geometry(op),
            ]
            return [
                Call(
                    "dm_batchnorm_grad_reduce_fp32",
                    "dm_batchnorm_grad_args_t",
                    f,
                    f"{note} (dScale, dBias)",
                ),
                Call("dm_batchnorm_grad_apply_fp32", "dm_batchnorm_grad_args_t", f, note),
            ]
        case _:
            return None
