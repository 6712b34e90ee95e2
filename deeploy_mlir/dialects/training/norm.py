"""Normalization, softmax, losses and reductions: softmax cross-entropy loss
(and gradient), reduce_sum / reduce_mean, softmax (and gradient), layer
normalization (and gradient).
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    irdl_op_definition,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import (
    ElementwiseAliasing,
    ListedGradsOp,
    TrainingComputeOp,
)
from deeploy_mlir.dialects.training.interfaces import (
    IterationSpace,
    IterationSpaceInterface,
    NoAliasing,
    _broadcast_map,
    _dims_map,
)
from deeploy_mlir.dialects.training.shapes import (
    _check_axis,
    _same_shape,
    broadcast_shapes,
    elem_of,
    fmt_shape,
    is_f32,
    is_int,
    shape_of,
)

REDUCTIONS = ("mean", "sum")


def _check_sce(logits: Attribute, labels: Attribute, reduction: str) -> tuple[int, int]:
    if reduction not in REDUCTIONS:
        raise VerifyException(f"reduction must be 'mean' or 'sum', got '{reduction}'")
    ls, lb = shape_of(logits), shape_of(labels)
    if len(ls) != 2:
        raise VerifyException(f"scores must be rank 2 [batch, classes], got {fmt_shape(ls)}")
    if not is_int(labels, 64):
        raise VerifyException(f"labels must have i64 elements, got {elem_of(labels)}")
    if lb != (ls[0],):
        raise VerifyException(
            f"labels must have shape {ls[0]} (one per batch row), got {fmt_shape(lb)}"
        )
    return ls[0], ls[1]


class SceSpace(IterationSpaceInterface):
    """Both dims stay whole: softmax normalises over the classes, the loss
    reduces over the batch and its gradient divides by the whole batch."""

    def iteration_space(self) -> IterationSpace:
        assert isinstance(self, TrainingComputeOp)
        b, c = 0, 0
        maps: list[AffineMap] = []
        for t in [*self.in_types(), *self.output_types()]:
            s = shape_of(t)
            if len(s) == 2:
                b, c = s
                maps.append(_dims_map(2, [0, 1]))
            elif len(s) == 1:
                maps.append(_dims_map(2, [0]))
            else:
                maps.append(AffineMap(2, 0, ()))
        return IterationSpace((b, c), tuple(maps), frozenset({0, 1}))


@irdl_op_definition
class SoftmaxCrossEntropyLossOp(TrainingComputeOp, SceSpace):
    """(loss, log_prob) = SoftmaxCrossEntropyLoss(scores [B, C], labels [B] i64);
    with ignore_index, rows of that label add nothing and a mean divides by
    the number of the other rows (ONNX)."""

    name = "training.softmax_cross_entropy_loss"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    N_OUTS: ClassVar[int] = 2
    reduction = prop_def(StringAttr, default_value=StringAttr("mean"))
    #: rows whose label equals it count for nothing (ONNX ignore_index)
    ignore_index = opt_prop_def(IntegerAttr[I64])

    def check_inputs(self) -> None:
        if not is_f32(self.ins[0].type):
            raise VerifyException(f"scores must have f32 elements, got {elem_of(self.ins[0].type)}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        b, c = _check_sce(self.ins[0].type, self.ins[1].type, self.reduction.data)
        return [(), (b, c)]


@irdl_op_definition
class SoftmaxCrossEntropyLossGradOp(TrainingComputeOp, SceSpace):
    """dScores = (exp(log_prob) - onehot(labels)) * dY [/ B when reduction = mean];
    with ignore_index, the rows of that label are 0 and the mean divides by
    the number of the other rows."""

    name = "training.softmax_cross_entropy_loss_grad"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)
    reduction = prop_def(StringAttr, default_value=StringAttr("mean"))
    ignore_index = opt_prop_def(IntegerAttr[I64])

    def check_inputs(self) -> None:
        for i in (0, 1):
            if not is_f32(self.ins[i].type):
                raise VerifyException(
                    f"input #{i} must have f32 elements, got {elem_of(self.ins[i].type)}"
                )

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy = shape_of(self.ins[0].type)
        if dy not in ((), (1,)):
            raise VerifyException(
                f"upstream gradient dY must be a scalar (the loss is reduced), got {fmt_shape(dy)}"
            )
        b, c = _check_sce(self.ins[1].type, self.ins[2].type, self.reduction.data)
        return [(b, c)]


class ReduceOp(TrainingComputeOp, IterationSpaceInterface, ABC):
    """A reduction over `axes` (non-negative, sorted), keeping them as 1s when
    keepdims; the axes stay whole."""

    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)

    def axes_list(self) -> list[int]:
        return list(self.axes.get_values())

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = shape_of(self.ins[0].type)
        axes = self.axes_list()
        if not axes:
            raise VerifyException("axes must not be empty")
        if axes != sorted(set(axes)) or axes[0] < 0 or axes[-1] >= len(x):
            raise VerifyException(
                f"axes {axes} must be sorted, distinct and in [0, {len(x)}) for an input of "
                f"rank {len(x)}"
            )
        if self.keepdims is not None:
            return [tuple(1 if i in axes else d for i, d in enumerate(x))]
        return [tuple(d for i, d in enumerate(x) if i not in axes)]

    def iteration_space(self) -> IterationSpace:
        x = shape_of(self.ins[0].type)
        axes = set(self.axes_list())
        kept = [i for i in range(len(x)) if i not in axes]
        out_idx: list[int | None] = (
            [None if i in axes else i for i in range(len(x))]
            if self.keepdims is not None
            else list(kept)
        )
        maps = (AffineMap.identity(len(x)), _dims_map(len(x), out_idx))
        return IterationSpace(x, maps, frozenset(), frozenset(axes))


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes` (ONNX ReduceSum)."""

    name = "training.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over `axes`: the sum divided by the number of elements reduced into
    each output (ONNX ReduceMean)."""

    name = "training.reduce_mean"


class AlongAxisOp(TrainingComputeOp, ElementwiseAliasing, IterationSpaceInterface, ABC):
    """One input, an output of its shape, computed along `axis`, which stays
    whole (softmax, log-softmax)."""

    axis = prop_def(IntegerAttr[I64])

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = shape_of(self.ins[0].type)
        _check_axis(self.axis.value.data, len(x))
        return [x]

    def iteration_space(self) -> IterationSpace:
        x = shape_of(self.ins[0].type)
        ident = AffineMap.identity(len(x))
        return IterationSpace(x, (ident, ident), frozenset({self.axis.value.data}))


@irdl_op_definition
class SoftmaxOp(AlongAxisOp):
    """Y = exp(X - max) / sum(exp(X - max)) along `axis` (ONNX Softmax, opset 13
    semantics); the axis stays whole."""

    name = "training.softmax"


class AlongAxisGradOp(TrainingComputeOp, ElementwiseAliasing, IterationSpaceInterface, ABC):
    """The gradient of an AlongAxisOp: ins (dY, Y), Y the op's output, dX of
    their shape; the axis stays whole and is reduced over."""

    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    axis = prop_def(IntegerAttr[I64])

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, y = self.in_types()
        shape = _same_shape(dy, "dY", y, "Y")
        _check_axis(self.axis.value.data, len(shape))
        return [shape]

    def iteration_space(self) -> IterationSpace:
        y = shape_of(self.ins[1].type)
        ident = AffineMap.identity(len(y))
        axis = self.axis.value.data
        return IterationSpace(y, (ident, ident, ident), frozenset({axis}), frozenset({axis}))


@irdl_op_definition
class SoftmaxGradOp(AlongAxisGradOp):
    """dX = Y * (dY - sum(dY * Y along axis)) (com.microsoft SoftmaxGrad_13, and
    SoftmaxGrad over the last axis): ins (dY, Y), Y the softmax's output."""

    name = "training.softmax_grad"


class NormOp(TrainingComputeOp, IterationSpaceInterface, ABC):
    """Shapes shared by layer normalization and its gradient: X [d0.., da..]
    normalized over the dims from `axis` on; scale and bias have the
    normalized shape (leading 1s may be left out); the saved statistics (Mean,
    InvStdDev) have X's outer dims, then 1s (ONNX: [d0.., 1, .., 1])."""

    axis = prop_def(IntegerAttr[I64])
    epsilon = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1e-5, f32))

    def x_shape(self) -> tuple[int, ...]:
        return shape_of(self.ins[self.X_IN].type)

    #: position of X among the inputs
    X_IN: ClassVar[int] = 0

    def norm_axis(self) -> int:
        x = self.x_shape()
        if not x:
            raise VerifyException("X must have rank 1 or more")
        return _check_axis(self.axis.value.data, len(x))

    def check_param(self, t: Attribute, what: str) -> None:
        x, axis = self.x_shape(), self.norm_axis()
        s, norm = shape_of(t), x[axis:]
        size = 1
        for d in s:
            size *= d
        want = 1
        for d in norm:
            want *= d
        if len(s) > len(norm) or broadcast_shapes(s, norm) != norm or size != want:
            raise VerifyException(
                f"{what} must have the normalized shape {fmt_shape(norm)} (X's dims from axis "
                f"{axis}), got {fmt_shape(s)}"
            )

    def stats_shape(self) -> tuple[int, ...]:
        x, axis = self.x_shape(), self.norm_axis()
        return (*x[:axis], *([1] * (len(x) - axis)))

    def check_stats(self, t: Attribute, what: str) -> None:
        x, axis = self.x_shape(), self.norm_axis()
        s = shape_of(t)
        if s[:axis] != x[:axis] or len(s) > len(x) or any(d != 1 for d in s[axis:]):
            raise VerifyException(
                f"{what} must have X's outer dims {fmt_shape(x[:axis])} followed by 1s (e.g. "
                f"{fmt_shape(self.stats_shape())}), got {fmt_shape(s)}"
            )

    def param_map(self, t: Attribute) -> AffineMap:
        return _broadcast_map(self.x_shape(), shape_of(t))

    def stats_map(self, t: Attribute) -> AffineMap:
        axis, r = self.norm_axis(), len(self.x_shape())
        return _dims_map(r, [*range(axis), *([None] * (len(shape_of(t)) - axis))])


LN_OUTS = ("Y", "Mean", "InvStdDev")


@irdl_op_definition
class LayerNormOp(NormOp, ElementwiseAliasing):
    """(Y, Mean, InvStdDev) = LayerNormalization(X, scale[, bias]) (ONNX,
    stash_type 1): Y = (X - mean) * inv_std * scale + bias over the dims from
    `axis` on, inv_std = 1 / sqrt(var + epsilon) with the biased variance. One
    to three outputs (Y, then optionally Mean, then InvStdDev). The normalized
    dims stay whole."""

    name = "training.layer_norm"
    N_INS: ClassVar[tuple[int, int]] = (2, 3)

    def n_outs(self) -> int:
        n = len(self.output_types())
        return n if 1 <= n <= 3 else 1

    def verify_(self) -> None:
        n = len(self.output_types())
        if not 1 <= n <= 3:
            form = "outs" if self.is_buffer_form else "results"
            raise VerifyException(
                f"expects 1 to 3 {form} (Y, then optionally Mean and InvStdDev), got {n}"
            )
        super().verify_()

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = self.x_shape()
        self.check_param(self.ins[1].type, "scale")
        if len(self.ins) == 3:
            self.check_param(self.ins[2].type, "bias")
        return [x, *[self.stats_shape()] * (self.n_outs() - 1)]

    def iteration_space(self) -> IterationSpace:
        x, axis = self.x_shape(), self.norm_axis()
        maps = [AffineMap.identity(len(x))]
        maps += [self.param_map(t) for t in self.in_types()[1:]]
        maps.append(AffineMap.identity(len(x)))
        maps += [self.stats_map(t) for t in self.output_types()[1:]]
        norm = frozenset(range(axis, len(x)))
        return IterationSpace(x, tuple(maps), norm, norm)


LN_GRADS = ("dX", "dScale", "dBias")


@irdl_op_definition
class LayerNormGradOp(NormOp, ListedGradsOp, NoAliasing):
    """(dX, dScale, dBias) = gradients of layer_norm: ins (dY, X, scale[, Mean,
    InvStdDev]), the forward's axis and epsilon.

    With xhat = (X - mean) * inv_std and g = dY * scale, over the normalized
    dims (D elements): dX = inv_std * (g - mean(g) - xhat * mean(g * xhat)),
    dScale = sum over the outer dims of dY * xhat, dBias = sum of dY. Without
    Mean and InvStdDev (Deeploy's LayerNormalizationGrad) they are recomputed
    from X; dScale and dBias need them given (onnxruntime's form). `outputs`
    lists the gradients wanted, in the order dX, dScale, dBias."""

    name = "training.layer_norm_grad"
    N_INS: ClassVar[tuple[int, int]] = (3, 5)
    X_IN: ClassVar[int] = 1
    GRADS: ClassVar[tuple[str, ...]] = LN_GRADS
    outputs = prop_def(
        ArrayAttr[StringAttr], default_value=ArrayAttr([StringAttr(s) for s in LN_GRADS])
    )

    def verify_(self) -> None:
        self.verify_grads()
        if len(self.ins) == 4:
            raise VerifyException(
                "expects Mean and InvStdDev both (5 inputs) or neither (3 inputs), got 4 inputs"
            )
        super().verify_()

    def accumulable(self) -> set[int]:
        return {k for k, g in enumerate(self.grads()) if g != "dX"}

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, x_type = self.in_types()[:2]
        x = _same_shape(dy, "dY", x_type, "X")
        self.check_param(self.ins[2].type, "scale")
        if len(self.ins) == 5:
            self.check_stats(self.ins[3].type, "Mean")
            self.check_stats(self.ins[4].type, "InvStdDev")
        elif "dScale" in self.grads() or "dBias" in self.grads():
            raise VerifyException(
                "dScale and dBias need the forward's Mean and InvStdDev as inputs #3 and #4"
            )
        scale = shape_of(self.ins[2].type)
        shapes = {"dX": x, "dScale": scale, "dBias": scale}
        return [shapes[g] for g in self.grads()]

    def iteration_space(self) -> IterationSpace:
        x, axis = self.x_shape(), self.norm_axis()
        ident = AffineMap.identity(len(x))
        scale = self.ins[2].type
        maps = [ident, ident, self.param_map(scale)]
        maps += [self.stats_map(t) for t in self.in_types()[3:]]
        roles = {"dX": ident, "dScale": self.param_map(scale), "dBias": self.param_map(scale)}
        maps += [roles[g] for g in self.grads()]
        norm = set(range(axis, len(x)))
        reduction = set(norm)
        acc: frozenset[int] = frozenset()
        if "dScale" in self.grads() or "dBias" in self.grads():
            # dScale and dBias sum over the rows: rows may tile, dX following
            # them and dScale, dBias adding up
            reduction |= set(range(axis))
            acc = frozenset(range(axis))
        return IterationSpace(x, tuple(maps), frozenset(norm), frozenset(reduction), accumulate=acc)
