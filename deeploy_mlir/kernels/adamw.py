"""kernel-select's AdamW family: `training.adamw` -> dm_adamw_fp32 and
`training.step_count` -> dm_step_count_i64 (dm_kernels_ext.h). Both kernels
update in place: the weight and moments (the step count) must share their
output's buffer, as training-inplace-alias decides for a state update."""

from __future__ import annotations

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.kernels.fields import Call, Fields, float32, numel, ptr_or_null, u32


def _in_place(op: T.TrainingComputeOp, pairs: tuple[tuple[int, int], ...]) -> None:
    for out, k in pairs:
        if op.outs[out] is not op.ins[k]:
            raise DeeployError(
                f"kernel-select: {op.name}: output #{out} must be written in place of input "
                f"#{k} (its kernel updates in place); it has a buffer of its own"
            )


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    match op:
        case T.AdamWOp():
            _in_place(op, ((0, 0), (1, 2), (2, 3)))
            ins = list(op.ins)
            signal = ins[6] if op.has_signal() else None
            f: Fields = [
                ("weight", ins[0]),
                ("grad", ins[1]),
                ("m1", ins[2]),
                ("m2", ins[3]),
                ("lr", ins[4]),
                ("step", ins[5]),
                ("update_signal", ptr_or_null(signal)),
                ("size", u32(numel(ins[0]))),
                ("alpha", float32(op.alpha.value.data)),
                ("beta", float32(op.beta.value.data)),
                ("epsilon", float32(op.epsilon.value.data)),
                ("weight_decay", float32(op.weight_decay.value.data)),
                ("correct_bias", u32(op.correct_bias.value.data)),
                ("adam_mode", u32(op.adam_mode.value.data)),
            ]
            return [Call("dm_adamw_fp32", "dm_adamw_args_t", f, op.name)]
        case T.StepCountOp():
            signal = op.ins[1] if len(op.ins) > 1 else None
            f = [("count", op.ins[0]), ("update_signal", ptr_or_null(signal))]
            f += [("out", op.outs[0])]
            return [Call("dm_step_count_i64", "dm_step_count_args_t", f, op.name)]
        case _:
            return None
