"""numpy semantics of every `training` compute op: the specification the C
kernels and every pass are checked against."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deeploy_mlir.dialects import training as T

F32 = np.float32


def _gemm(op: T.GemmOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    a = ins[0].T if op.trans_a is not None else ins[0]
    b = ins[1].T if op.trans_b is not None else ins[1]
    y = F32(op.alpha.value.data) * (a.astype(F32) @ b.astype(F32))
    if len(ins) == 3:
        y = y + F32(op.beta.value.data) * ins[2]
    return [y.astype(F32)]


def _binary(op: T.BinaryOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    a, b = ins
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op.kind.data]
    return [fn(a, b).astype(F32)]


def _sce(op: T.SoftmaxCrossEntropyLossOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    x, labels = ins
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    log_prob = (x - m - lse).astype(F32)
    picked = -log_prob[np.arange(x.shape[0]), labels.astype(np.int64)]
    loss = picked.sum(dtype=F32)
    if op.reduction.data == "mean":
        loss = loss / F32(x.shape[0])
    return [np.asarray(loss, dtype=F32), log_prob]


def _sce_grad(op: T.SoftmaxCrossEntropyLossGradOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    dy, log_prob, labels = ins
    g = np.exp(log_prob).astype(F32)
    g[np.arange(g.shape[0]), labels.astype(np.int64)] -= F32(1.0)
    scale = F32(dy.reshape(-1)[0])
    if op.reduction.data == "mean":
        scale = scale / F32(g.shape[0])
    return [(g * scale).astype(F32)]


def _reduce_sum(op: T.ReduceSumOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    axes = tuple(op.axes_list())
    return [ins[0].sum(axis=axes, keepdims=op.keepdims is not None, dtype=F32)]


def _accumulate(ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    buf, grad, reset = ins
    return [(grad.copy() if bool(reset.reshape(-1)[0]) else buf + grad).astype(F32)]


def compute(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The outputs of `op` for input arrays `ins` (new arrays, inputs untouched)."""
    match op:
        case T.GemmOp():
            return _gemm(op, ins)
        case T.MatmulOp():
            return [(ins[0] @ ins[1]).astype(F32)]
        case T.BinaryOp():
            return _binary(op, ins)
        case T.ReluOp():
            return [np.maximum(ins[0], F32(0)).astype(F32)]
        case T.ReluGradOp():
            return [np.where(ins[1] > 0, ins[0], F32(0)).astype(F32)]
        case T.SoftmaxCrossEntropyLossOp():
            return _sce(op, ins)
        case T.SoftmaxCrossEntropyLossGradOp():
            return _sce_grad(op, ins)
        case T.ReduceSumOp():
            return _reduce_sum(op, ins)
        case T.AccumulateOp():
            return _accumulate(ins)
        case T.SgdOp():
            return [(ins[0] - F32(ins[2].reshape(-1)[0]) * ins[1]).astype(F32)]
        case T.CopyOp():
            return [ins[0].copy()]
        case _:
            raise NotImplementedError(f"no reference semantics for {op.name}")
