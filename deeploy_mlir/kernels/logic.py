"""kernel-select's logic family: compare and logical ops
(dm_compare_fp32), Where (dm_where_fp32), Cast and Not (dm_cast), all in
runtime_c/kernels/compare.c, broadcast by strides; Clip
(dm_unary_ext_fp32, activation_ext.c)."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import (
    Call,
    Fields,
    arr,
    bcast_strides,
    float32,
    max_rank,
    numel,
    u32,
)

_CAST_OP = {
    ("i1", "f32"): "DM_CAST_U8_TO_F32",
    ("f32", "i1"): "DM_CAST_F32_TO_U8",
    ("i64", "f32"): "DM_CAST_I64_TO_F32",
    ("f32", "i64"): "DM_CAST_F32_TO_I64",
}


def _strided(op: T.TrainingComputeOp, names: tuple[str, ...]) -> Fields:
    """rank, shape and one stride array per input (broadcast dims: 0)."""
    out = T.shape_of(op.outs[0].type)
    max_rank(op, len(out), 4)
    f: Fields = [("rank", u32(len(out))), ("shape", arr(out))]
    for name, v in zip(names, op.ins, strict=True):
        f.append((name, arr(bcast_strides(out, T.shape_of(v.type)))))
    return f


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Compare, logical, not, where, cast and clip."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.CompareOp() | T.LogicalOp():
            prefix = "DM_CMP_" if isinstance(op, T.CompareOp) else "DM_LOGIC_"
            f: Fields = [("A", ins[0]), ("B", ins[1]), ("Y", outs[0])]
            f += _strided(op, ("a_strides", "b_strides"))
            f.append(("op", StringAttr(prefix + op.kind.data.upper())))
            return [Call("dm_compare_fp32", "dm_compare_args_t", f, note)]
        case T.WhereOp():
            f = [("C", ins[0]), ("A", ins[1]), ("B", ins[2]), ("Y", outs[0])]
            f += _strided(op, ("c_strides", "a_strides", "b_strides"))
            return [Call("dm_where_fp32", "dm_where_args_t", f, note)]
        case T.CastOp() | T.NotOp():
            if isinstance(op, T.NotOp):
                kind = "DM_CAST_U8_NOT"
            else:
                pair = (T.elem_name(T.elem_of(ins[0].type)), T.elem_name(op.to))
                kind = _CAST_OP[pair]
            f = [("X", ins[0]), ("Y", outs[0]), ("size", u32(numel(ins[0])))]
            f.append(("op", StringAttr(kind)))
            return [Call("dm_cast", "dm_cast_args_t", f, note)]
        case T.ClipOp():
            f = [("X", ins[0]), ("Y", outs[0]), ("size", u32(numel(ins[0])))]
            f += [("op", StringAttr("DM_UNARY_CLIP"))]
            f += [("lo", float32(T.float_of(op.lo))), ("hi", float32(T.float_of(op.hi)))]
            return [Call("dm_unary_ext_fp32", "dm_unary_ext_args_t", f, note)]
        case _:
            return None
