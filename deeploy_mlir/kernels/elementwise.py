"""kernel-select's elementwise family: Binary ops (broadcast by strides), ReLU,
GELU and their gradients, copies."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import (
    Call,
    Fields,
    arr,
    bcast_strides,
    max_rank,
    numel,
    u32,
)


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Binary ops (broadcast by strides), ReLU, GELU and their gradients, copies."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.BinaryOp():
            out = T.shape_of(outs[0].type)
            max_rank(op, len(out), 4)
            f: Fields = [
                ("A", ins[0]),
                ("B", ins[1]),
                ("Y", outs[0]),
                ("rank", u32(len(out))),
                ("shape", arr(out)),
                ("a_strides", arr(bcast_strides(out, T.shape_of(ins[0].type)))),
                ("b_strides", arr(bcast_strides(out, T.shape_of(ins[1].type)))),
                ("op", StringAttr(f"DM_BINARY_{op.kind.data.upper()}")),
            ]
            return [Call("dm_binary_fp32", "dm_binary_args_t", f, note)]
        case T.ReluOp() | T.GeluOp():
            f = [("X", ins[0]), ("Y", outs[0]), ("size", u32(numel(ins[0])))]
            if isinstance(op, T.ReluOp):
                return [Call("dm_relu_fp32", "dm_unary_args_t", f, note)]
            return [Call("dm_gelu_fp32", "dm_gelu_args_t", f, note)]
        case T.ReluGradOp() | T.GeluGradOp():
            f = [("dY", ins[0]), ("X", ins[1]), ("dX", outs[0]), ("size", u32(numel(ins[0])))]
            if isinstance(op, T.ReluGradOp):
                return [Call("dm_relu_grad_fp32", "dm_relu_grad_args_t", f, note)]
            return [Call("dm_gelu_grad_fp32", "dm_gelu_grad_args_t", f, note)]
        case T.CopyOp() | T.ReshapeOp():
            nbytes = numel(ins[0]) * T.elem_bytes(ins[0].type)
            f = [("src", ins[0]), ("dst", outs[0]), ("bytes", u32(nbytes))]
            return [Call("dm_copy", "dm_copy_args_t", f, note)]
        case _:
            return None
