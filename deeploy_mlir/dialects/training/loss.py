"""The zoo's loss-side ops (issue 20): log-softmax and its gradient
(com.microsoft LogSoftmaxGrad_13), dropout and its gradient
(com.microsoft DropoutGrad). Softmax cross-entropy with ignore_index is
`norm`'s SoftmaxCrossEntropyLoss with its `ignore_index` property.

Dropout draws its mask from a counter-based generator (the runtime's
`dm_dropout_bits`, murmur3's finalizer): element i of dropout node `stream`
of `streams` in mini-batch `step` is kept when
``dm_dropout_bits(i, seed, step * streams + stream) >> 8`` is below
``keep_threshold(ratio)``; the C kernel and the reference interpreter
compute the same bits (`dropout_keep`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I64, AnyFloat, FloatAttr, IntegerAttr, IntegerType, f32, i64
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import AffineMap
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.config import DEFAULT_SEED as DEFAULT_SEED  # the masks' when no --seed
from deeploy_mlir.dialects.training.base import (
    ElementwiseAliasing,
    ElementwiseSpace,
    TrainingComputeOp,
)
from deeploy_mlir.dialects.training.interfaces import (
    AliasingInterface,
    IterationSpace,
    IterationSpaceInterface,
)
from deeploy_mlir.dialects.training.norm import AlongAxisGradOp, AlongAxisOp
from deeploy_mlir.dialects.training.shapes import (
    _same_shape,
    elem_of,
    is_f32,
    is_int,
    shape_of,
)

i1 = IntegerType(1)


@irdl_op_definition
class LogSoftmaxOp(AlongAxisOp):
    """Y = X - max - log(sum(exp(X - max))) along `axis` (ONNX LogSoftmax,
    opset 13); the axis stays whole."""

    name = "training.log_softmax"


@irdl_op_definition
class LogSoftmaxGradOp(AlongAxisGradOp):
    """dX = dY - exp(Y) * sum(dY along axis) (com.microsoft LogSoftmaxGrad_13):
    ins (dY, Y), Y the log-softmax's output."""

    name = "training.log_softmax_grad"


def _check_ratio(ratio: float) -> None:
    if not 0.0 <= ratio < 1.0:
        raise VerifyException(f"ratio must be in [0, 1), got {ratio}")


def keep_threshold(ratio: float) -> int:
    """An element is kept when its 24 high bits are below this: round((1 -
    ratio) * 2^24), the ratio taken as a float32 (2^24 keeps every element)."""
    return round((1.0 - float(np.float32(ratio))) * (1 << 24))


def dropout_scale(ratio: float) -> float:
    """What a kept element is multiplied by: 1 / (1 - ratio) in float32."""
    return float(np.float32(1.0) / (np.float32(1.0) - np.float32(ratio)))


def dropout_bits(i: np.ndarray, seed: int, stream: int) -> np.ndarray:
    """runtime_c's dm_dropout_bits (dm_kernels_ext.h) on uint32 arrays."""
    m = np.uint32(0xFFFFFFFF)
    with np.errstate(over="ignore"):
        h = (i.astype(np.uint32) * np.uint32(0x9E3779B1)) & m
        h ^= np.uint32(seed & 0xFFFFFFFF)
        h ^= np.uint32((stream * 0x85EBCA77) & 0xFFFFFFFF)
        h ^= h >> np.uint32(16)
        h = h * np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h = h * np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h


def dropout_keep(n: int, ratio: float, seed: int, stream: int) -> np.ndarray:
    """The mask (bool) of n elements, as dm_dropout_fp32 draws it."""
    bits = dropout_bits(np.arange(n, dtype=np.uint32), seed, stream)
    return (bits >> np.uint32(8)) < np.uint32(keep_threshold(ratio))


@irdl_op_definition
class DropoutOp(TrainingComputeOp, AliasingInterface, IterationSpaceInterface):
    """(Y, mask) = Dropout(X) in training mode (ONNX Dropout, ratio a
    constant): mask[i] = element i kept (i1), Y = mask ? X / (1 - ratio) : 0.
    The mask is the counter-based generator's (the module's docstring) for
    `seed` and stream number `stream` of `streams` per mini-batch; every dim
    stays whole (element i is the flat index of the whole tensor)."""

    name = "training.dropout"
    N_OUTS: ClassVar[int] = 2
    ratio = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(0.5, f32))
    seed = prop_def(IntegerAttr[I64], default_value=IntegerAttr(DEFAULT_SEED, i64))
    stream = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    streams = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))

    def ratio_value(self) -> float:
        return float(self.ratio.value.data)

    def output_elem_types(self) -> list[Attribute]:
        return [f32, i1]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        _check_ratio(self.ratio_value())
        seed, k, n = self.seed.value.data, self.stream.value.data, self.streams.value.data
        if not 0 <= seed < 1 << 32:
            raise VerifyException(f"seed must be an unsigned 32-bit integer, got {seed}")
        if not 0 <= k < n < 1 << 32:
            raise VerifyException(f"stream must be in [0, streams), got stream {k} of {n}")
        x = shape_of(self.ins[0].type)
        return [x, x]

    def alias_candidates(self) -> list[tuple[int, int]]:
        return [(0, 0)]  # the kernel reads X[i] before it writes Y[i]

    def iteration_space(self) -> IterationSpace:
        x = shape_of(self.ins[0].type)
        ident = AffineMap.identity(len(x))
        return IterationSpace(x, (ident, ident, ident), frozenset(range(len(x))))


@irdl_op_definition
class DropoutGradOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """dX = mask ? dY / (1 - ratio) : 0 (com.microsoft DropoutGrad): ins (dY,
    mask), the forward's mask (i1) and ratio."""

    name = "training.dropout_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    ratio = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(0.5, f32))

    def ratio_value(self) -> float:
        return float(self.ratio.value.data)

    def check_inputs(self) -> None:
        dy, mask = self.in_types()
        if not is_f32(dy):
            raise VerifyException(f"dY must have f32 elements, got {elem_of(dy)}")
        if not is_int(mask, 1):
            raise VerifyException(f"mask must have i1 elements, got {elem_of(mask)}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        _check_ratio(self.ratio_value())
        dy, mask = self.in_types()
        return [_same_shape(dy, "dY", mask, "mask")]


OPS = (LogSoftmaxOp, LogSoftmaxGradOp, DropoutOp, DropoutGradOp)


def number_dropouts(module: Operation, seed: int) -> int:
    """Give every dropout op of `module` the seed and its own stream (its
    position among them, in order); returns how many there are."""
    if not 0 <= seed < 1 << 32:
        raise ValueError(f"the seed {seed} is not in [0, 2^32)")
    drops = [op for op in module.walk() if isinstance(op, DropoutOp)]
    for k, op in enumerate(drops):
        op.seed = IntegerAttr(seed, i64)
        op.stream = IntegerAttr(k, i64)
        op.streams = IntegerAttr(len(drops), i64)
    return len(drops)
