"""kernel-select's matmul family: Matrix products: gemm, matmul, batched matmul."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, SSAValue

from deeploy_mlir.dialects import kernel as K
from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import (
    Call,
    Fields,
    arr,
    bcast_strides,
    float32,
    max_rank,
    u32,
)


def _gemm_fields(
    ins: Sequence[SSAValue],
    y: SSAValue,
    mnk: tuple[int, int, int],
    trans: tuple[bool, bool],
    alpha: float,
    beta: float,
) -> Fields:
    """The fields of a dm_gemm_args_t: A, B and C (when there are three
    operands; its stride 0 broadcasts a dim of 1) and Y; sizes, flags, scales."""
    f: Fields = [("A", ins[0]), ("B", ins[1])]
    if len(ins) == 3:
        cm, cn = [1, 1, *T.shape_of(ins[2].type)][-2:]
        f += [
            ("C", ins[2]),
            ("c_stride_m", u32(cn if cm != 1 else 0)),
            ("c_stride_n", u32(1 if cn != 1 else 0)),
        ]
    else:
        f += [("C", K.NULL), ("c_stride_m", u32(0)), ("c_stride_n", u32(0))]
    m, n, k = mnk
    return [
        *f,
        ("Y", y),
        ("M", u32(m)),
        ("N", u32(n)),
        ("K", u32(k)),
        ("trans_a", u32(int(trans[0]))),
        ("trans_b", u32(int(trans[1]))),
        ("alpha", float32(alpha)),
        ("beta", float32(beta)),
    ]


def _batch_matmul_call(op: T.BatchMatmulOp) -> Call:
    """dm_batch_matmul_fp32 over the operands' own shapes (a tile's, when tiled)."""
    ins, outs = list(op.ins), list(op.outs)
    batch, m, n, k = op.geometry()
    max_rank(op, len(batch), 4, "batch dims")

    def batch_strides(t: Attribute, rank: int) -> list[int]:
        s = [1] * (rank - len(T.shape_of(t))) + list(T.shape_of(t))
        mat = s[-2] * s[-1]
        return [st * mat for st in bcast_strides(batch, s[:-2])]

    trans = (op.trans_a is not None, op.trans_b is not None)
    gemm = _gemm_fields(ins, outs[0], (m, n, k), trans, op.alpha.value.data, op.beta.value.data)
    c_strides = batch_strides(ins[2].type, len(batch) + 2) if len(ins) == 3 else []
    f: Fields = [(f"gemm.{name}", v) for name, v in gemm] + [  # batch 0's product
        ("batch_rank", u32(len(batch))),
        ("batch_shape", arr(batch)),
        ("a_strides", arr(batch_strides(ins[0].type, len(batch) + 2))),
        ("b_strides", arr(batch_strides(ins[1].type, len(batch) + 2))),
        ("c_strides", arr(c_strides)),
    ]
    return Call("dm_batch_matmul_fp32", "dm_batch_matmul_args_t", f, op.name)


def _k_tile_fields(op: T.TrainingComputeOp) -> Fields:
    """A K tile of a split reduction: acc_Y (the sums go on from Y's partial
    sums) and partial (raw sums: no alpha, no C); unset (0) for a whole K."""
    f: Fields = []
    if op.accumulated():
        f.append(("acc_Y", u32(1)))
    if isinstance(op, T.GemmOp) and op.partial is not None:
        f.append(("partial", u32(1)))
    return f


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Gemm (transposes, alpha, beta, a broadcast C), matmul and batched matmul."""
    ins, outs = op.base_ins(), list(op.outs)
    match op:
        case T.GemmOp():
            trans = (op.trans_a is not None, op.trans_b is not None)
            f = _gemm_fields(ins, outs[0], op.mnk(), trans, op.alpha.value.data, op.beta.value.data)
        case T.MatmulOp():
            a, b = T.shape_of(ins[0].type), T.shape_of(ins[1].type)
            f = _gemm_fields(ins, outs[0], (a[0], b[1], a[1]), (False, False), 1.0, 0.0)
        case T.BatchMatmulOp():
            return [_batch_matmul_call(op)]
        case _:
            return None
    # accumulate-fuse: Y is a gradient buffer (old value + sum unless reset)
    f += [("reset_Y", op.ins[-1])] if op.onto_outputs() else []
    return [Call("dm_gemm_fp32", "dm_gemm_args_t", f + _k_tile_fields(op), op.name)]
