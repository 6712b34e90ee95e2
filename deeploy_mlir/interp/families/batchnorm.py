"""Reference semantics of batch normalization in training mode (float64
arithmetic, float32 results), as onnxruntime's BatchNormInternal and
BatchNormalizationGrad compute them: statistics per channel (dim 1) over N
and the spatial dims; the biased variance, also for the running variance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp.registry import semantics

F32 = np.float32


def _axes_and_bcast(x: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The reduced axes (all but 1) and the shape a [C] vector broadcasts as."""
    axes = tuple(d for d in range(x.ndim) if d != 1)
    return axes, (1, x.shape[1], *([1] * (x.ndim - 2)))


@semantics(T.BatchNormOp)
def batch_norm(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.BatchNormOp)
    x = ins[0].astype(np.float64)
    scale, bias, rmean, rvar = (v.astype(np.float64) for v in ins[1:5])
    axes, vec = _axes_and_bcast(x)
    mean = x.mean(axis=axes)
    var = ((x - mean.reshape(vec)) ** 2).mean(axis=axes)
    inv_std = 1.0 / np.sqrt(var + float(op.epsilon.value.data))
    y = (x - mean.reshape(vec)) * (inv_std * scale).reshape(vec) + bias.reshape(vec)
    mom = float(op.momentum.value.data)
    new_mean = rmean * mom + mean * (1.0 - mom)
    new_var = rvar * mom + var * (1.0 - mom)
    return [a.astype(F32) for a in (y, new_mean, new_var, mean, inv_std)]


@semantics(T.BatchNormGradOp)
def batch_norm_grad(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    dy, x, scale, mean, inv_std = (v.astype(np.float64) for v in ins)
    axes, vec = _axes_and_bcast(x)
    m = x.size // x.shape[1]
    xhat = (x - mean.reshape(vec)) * inv_std.reshape(vec)
    dbias = dy.sum(axis=axes)
    dscale = (xhat * dy).sum(axis=axes)
    k = (scale * inv_std / m).reshape(vec)
    dx = k * (m * dy - dbias.reshape(vec) - xhat * dscale.reshape(vec))
    return [a.astype(F32) for a in (dx, dscale, dbias)]
