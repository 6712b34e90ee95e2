"""kernel-select's gather_split family: split and concat (one dm_split_fp32 /
dm_concat_fp32 call per part, each copying the part's rows to or from its
slab of the whole tensor), gather (dm_gather_fp32) and its gradient, the
scatter-add (dm_gather_grad_fp32). Each op sees its operands as [outer,
axis, inner] around its axis; the sizes are those of the operands (a tile's
when the op is tiled: its outer and inner dims may tile, the axis is whole)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import Call, Fields, prod, u32


def _around(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """(outer, length, inner) of a shape around `axis`."""
    return prod(shape[:axis]), shape[axis], prod(shape[axis + 1 :])


def _parts(
    kernel: str, op: T.SplitOp | T.ConcatOp, whole: SSAValue, parts: list[SSAValue]
) -> list[Call]:
    axis = op.axis_value()
    outer, total, inner = _around(T.shape_of(whole.type), axis)
    calls: list[Call] = []
    offset = 0
    for part in parts:
        n = T.shape_of(part.type)[axis]
        f: Fields = [
            ("whole", whole),
            ("part", part),
            ("outer", u32(outer)),
            ("total", u32(total)),
            ("offset", u32(offset)),
            ("len", u32(n)),
            ("inner", u32(inner)),
        ]
        calls.append(Call(kernel, "dm_concat_args_t", f, op.name))
        offset += n
    return calls


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Split, concat, gather and gather_grad."""
    ins, outs = list(op.ins), list(op.outs)
    match op:
        case T.SplitOp():
            return _parts("dm_split_fp32", op, ins[0], outs)
        case T.ConcatOp():
            return _parts("dm_concat_fp32", op, outs[0], ins)
        case T.GatherOp():
            outer, rows, inner = _around(T.shape_of(ins[0].type), op.axis_value())
            f: Fields = [("data", ins[0]), ("indices", ins[1]), ("Y", outs[0])]
            f += [("outer", u32(outer)), ("rows", u32(rows)), ("inner", u32(inner))]
            f += [("n", u32(prod(T.shape_of(ins[1].type))))]
            return [Call("dm_gather_fp32", "dm_gather_args_t", f, op.name)]
        case T.GatherGradOp():
            outer, rows, inner = _around(T.shape_of(outs[0].type), op.axis_value())
            f = [("dY", ins[0]), ("indices", ins[1]), ("dX", outs[0])]
            f += [("outer", u32(outer)), ("rows", u32(rows)), ("inner", u32(inner))]
            f += [("n", u32(prod(T.shape_of(ins[1].type))))]
            return [Call("dm_gather_grad_fp32", "dm_gather_grad_args_t", f, op.name)]
        case _:
            return None
