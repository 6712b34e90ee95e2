"""Batch normalization in training mode: `training.batch_norm` (com.microsoft
BatchNormInternal, training_mode 1) and `training.batch_norm_grad`
(com.microsoft BatchNormalizationGrad).

X is [N, C, d2..] (rank 2: BatchNorm1d on [N, C]; rank 4: BatchNorm2d on
NCHW); the statistics are per channel C, over N and the spatial dims. In the
iteration space (X's dims) the channel dim may tile; N and the spatial dims
are reductions and stay whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, FloatAttr, f32
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineMap
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import TrainingComputeOp
from deeploy_mlir.dialects.training.interfaces import (
    AliasingInterface,
    IterationSpace,
    IterationSpaceInterface,
    _dims_map,
)
from deeploy_mlir.dialects.training.shapes import _same_shape, fmt_shape, shape_of

#: the results of batch_norm, in order
BN_OUTS = ("Y", "running_mean", "running_var", "saved_mean", "saved_inv_std")
#: the results of batch_norm_grad, in order
BN_GRADS = ("dX", "dScale", "dBias")


class BatchNormShapes(TrainingComputeOp, IterationSpaceInterface):
    """The shapes both ops share: X (input #X_IN) of rank 2 or more, channels
    on dim 1, per-channel vectors of shape [C]."""

    #: position of X among the inputs
    X_IN: ClassVar[int] = 0
    epsilon = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1e-5, f32))

    def x_shape(self) -> tuple[int, ...]:
        x = shape_of(self.ins[self.X_IN].type)
        if len(x) < 2:
            raise VerifyException(
                f"X must have rank 2 or more ([N, C, spatial..]), got {fmt_shape(x)}"
            )
        return x

    def channels(self) -> int:
        return self.x_shape()[1]

    def check_vector(self, t: Attribute, what: str) -> None:
        c = self.channels()
        if shape_of(t) != (c,):
            raise VerifyException(
                f"{what} must have shape {fmt_shape((c,))} (X's channels), got "
                f"{fmt_shape(shape_of(t))}"
            )

    def check_epsilon(self) -> None:
        eps = float(self.epsilon.value.data)
        if not (math.isfinite(eps) and eps > 0):
            raise VerifyException(f"epsilon must be positive and finite, got {eps}")

    def geometry(self) -> tuple[int, int, int]:
        """(N, C, S): S the product of the spatial dims (1 for rank 2)."""
        x = self.x_shape()
        return x[0], x[1], math.prod(x[2:])

    def _space(self, vectors_in: Sequence[bool], vectors_out: Sequence[bool]) -> IterationSpace:
        """X's dims; a map per operand: X-shaped (identity) or [C] (dim 1)."""
        x = self.x_shape()
        ident = AffineMap.identity(len(x))
        chan = _dims_map(len(x), [1])
        maps = [chan if v else ident for v in (*vectors_in, *vectors_out)]
        reduced = frozenset(d for d in range(len(x)) if d != 1)
        return IterationSpace(x, tuple(maps), reduced, reduced)


@irdl_op_definition
class BatchNormOp(BatchNormShapes, AliasingInterface):
    """(Y, running_mean', running_var', saved_mean, saved_inv_std) =
    batch_norm(X, scale, bias, running_mean, running_var) in training mode, as
    onnxruntime's BatchNormInternal computes it: per channel c over N and the
    spatial dims (M elements), mean = sum(X) / M, var = sum((X - mean)^2) / M
    (biased), saved_inv_std = 1 / sqrt(var + epsilon), Y = (X - mean) *
    saved_inv_std * scale + bias, running_mean' = running_mean * momentum +
    mean * (1 - momentum), running_var' = running_var * momentum + var * (1 -
    momentum) (onnxruntime's momentum: the weight of the old value; the biased
    variance, as onnxruntime's CPU kernel). The new running statistics are
    state updates: written in place of inputs #3 and #4 when the function
    returns them as those arguments' new values."""

    name = "training.batch_norm"
    N_INS: ClassVar[tuple[int, int]] = (5, 5)
    N_OUTS: ClassVar[int] = 5
    STATE_UPDATE: ClassVar[bool] = True
    momentum = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(0.9, f32))

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return [(0, 0), (1, 3), (2, 4)]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = self.x_shape()
        for i, what in enumerate(("scale", "bias", "running_mean", "running_var"), start=1):
            self.check_vector(self.ins[i].type, what)
        self.check_epsilon()
        mom = float(self.momentum.value.data)
        if not 0.0 <= mom <= 1.0:
            raise VerifyException(f"momentum must be in [0, 1], got {mom}")
        c = (x[1],)
        return [x, c, c, c, c]

    def iteration_space(self) -> IterationSpace:
        return self._space([False, True, True, True, True], [False, True, True, True, True])


@irdl_op_definition
class BatchNormGradOp(BatchNormShapes, AliasingInterface):
    """(dX, dScale, dBias) = batch_norm_grad(dY, X, scale, saved_mean,
    saved_inv_std), onnxruntime's BatchNormalizationGrad: per channel over the
    M = N * spatial elements, xhat = (X - mean) * inv_std, dBias = sum(dY),
    dScale = sum(xhat * dY), dX = scale * inv_std / M * (M * dY - dBias - xhat
    * dScale). dX may reuse dY's storage."""

    name = "training.batch_norm_grad"
    N_INS: ClassVar[tuple[int, int]] = (5, 5)
    N_OUTS: ClassVar[int] = 3
    X_IN: ClassVar[int] = 1

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return [(0, 0)]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = _same_shape(self.ins[0].type, "dY", self.ins[1].type, "X")
        self.x_shape()
        for i, what in enumerate(("scale", "saved_mean", "saved_inv_std"), start=2):
            self.check_vector(self.ins[i].type, what)
        self.check_epsilon()
        c = (x[1],)
        return [x, c, c]

    def iteration_space(self) -> IterationSpace:
        return self._space([False, False, True, True, True], [False, True, True])
