"""kernel-select's activation family: `training.unary` -> dm_unary_ext_fp32,
`training.unary_grad` -> dm_unary_grad_fp32 (runtime_c/include/
dm_kernels_ext.h, kernels/activation_ext.c); the kind is the kernel's `op`
enumerator, alpha (leaky_relu, quick_gelu) its `alpha` field; the fields
not set (lo and hi, Clip's) are 0."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import Call, Fields, float32, numel, u32


def _alpha(op: T.UnaryOp | T.UnaryGradOp) -> Fields:
    """The `alpha` field of a kind that has one (a field not set is 0)."""
    return [] if op.alpha is None else [("alpha", float32(op.alpha_value()))]


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """training.unary and training.unary_grad over the flat index."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.UnaryOp():
            f: Fields = [
                ("X", ins[0]),
                ("Y", outs[0]),
                ("size", u32(numel(ins[0]))),
                ("op", StringAttr(f"DM_UNARY_{op.kind.data.upper()}")),
                *_alpha(op),
            ]
            return [Call("dm_unary_ext_fp32", "dm_unary_ext_args_t", f, note)]
        case T.UnaryGradOp():
            f = [
                ("dY", ins[0]),
                ("Z", ins[1]),
                ("dX", outs[0]),
                ("size", u32(numel(ins[0]))),
                ("op", StringAttr(f"DM_UGRAD_{op.kind.data.upper()}")),
                *_alpha(op),
            ]
            return [Call("dm_unary_grad_fp32", "dm_unary_grad_args_t", f, note)]
        case _:
            return None
