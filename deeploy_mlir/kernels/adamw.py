"""kernel-select's AdamW family: `training.adamw` -> dm_adamw_fp32 and
`training.step_count` -> dm_step_count_i64 (dm_kernels_ext.h).

dm_adamw_fp32 updates the weight and the moments in place. When
training-inplace-alias wrote them in place (the state update of the
pipeline), that is the whole call; an output with a buffer of its own (in-place
reuse off) is first given its input's values by a `dm_copy`, and the kernel
then updates the outputs."""

from __future__ import annotations

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.kernels.fields import Call, Fields, float32, numel, ptr_or_null, u32

#: (output, input) pairs dm_adamw_fp32 updates in place: weight, m1, m2
_UPDATED = ((0, 0), (1, 2), (2, 3))


def _copies(op: T.AdamWOp) -> list[Call]:
    """A dm_copy of each updated input into its output, where they differ."""
    out: list[Call] = []
    for o, k in _UPDATED:
        src, dst = op.ins[k], op.outs[o]
        if src is dst:
            continue
        for j, other in enumerate(op.ins):
            if other is dst and j != k:
                raise DeeployError(
                    f"kernel-select: {op.name}: output #{o} is input #{j}'s buffer; it can only "
                    f"be written in place of input #{k}"
                )
        nbytes = numel(src) * T.elem_bytes(src.type)
        f: Fields = [("src", src), ("dst", dst), ("bytes", u32(nbytes))]
        out.append(Call("dm_copy", "dm_copy_args_t", f, op.name))
    return out


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    match op:
        case T.AdamWOp():
            ins, outs = list(op.ins), list(op.outs)
            signal = ins[6] if op.has_signal() else None
            f: Fields = [
                ("weight", outs[0]),
                ("grad", ins[1]),
                ("m1", outs[1]),
                ("m2", outs[2]),
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
            return [*_copies(op), Call("dm_adamw_fp32", "dm_adamw_args_t", f, op.name)]
        case T.StepCountOp():
            signal = op.ins[1] if len(op.ins) > 1 else None
            f = [("count", op.ins[0]), ("update_signal", ptr_or_null(signal))]
            f += [("out", op.outs[0])]
            return [Call("dm_step_count_i64", "dm_step_count_args_t", f, op.name)]
        case _:
            return None
