"""Reference semantics of split, concat, gather and gather_grad
(dialects/training/gather_split.py). gather_grad adds in the kernel's order:
for each dX row, the dY rows whose index names it, in increasing position,
from 0.0f (runtime_c/kernels/gather.c)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp.registry import semantics


@semantics(T.SplitOp)
def split(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.SplitOp)
    cuts = np.cumsum(op.size_list())[:-1]
    return [np.array(p) for p in np.split(ins[0], cuts, axis=op.axis_value())]


@semantics(T.ConcatOp)
def concat(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.ConcatOp)
    return [np.concatenate(list(ins), axis=op.axis_value())]


@semantics(T.GatherOp)
def gather(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.GatherOp)
    x, idx = ins
    return [np.take(x, idx.astype(np.int64), axis=op.axis_value())]


@semantics(T.GatherGradOp)
def gather_grad(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.GatherGradOp)
    dy, idx = ins
    axis = op.axis_value()
    shape = T.shape_of(op.output_types()[0])
    rows = shape[axis]
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1 :], dtype=np.int64))
    flat = idx.astype(np.int64).reshape(-1) % max(rows, 1)
    d = dy.astype(np.float32).reshape(outer, flat.size, inner)
    dx = np.zeros((outer, rows, inner), np.float32)
    for j, row in enumerate(flat):  # in increasing j, as the kernel adds
        dx[:, row, :] += d[:, j, :]
    return [dx.reshape(shape)]
