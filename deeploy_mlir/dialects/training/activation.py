"""Unary activations and elementwise functions with one `kind` property
(`training.unary`), and the gradients onnxruntime-training writes for them
(`training.unary_grad`): Sigmoid, Tanh, LeakyRelu, com.microsoft QuickGelu
(SiLU exports as QuickGelu with alpha 1), Abs, Sign, Neg, Log, Exp, Sqrt,
Reciprocal; SigmoidGrad, TanhGrad, LeakyReluGrad, QuickGeluGrad.

Both keep their input's shape, may run in place (runtime_c's
dm_unary_ext_fp32 / dm_unary_grad_fp32 write each element after reading its
inputs) and tile like any elementwise op.
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, FloatAttr, StringAttr
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import (
    ElementwiseAliasing,
    ElementwiseSpace,
    TrainingComputeOp,
)
from deeploy_mlir.dialects.training.shapes import _same_shape, shape_of

#: the kinds of `training.unary` (Y = f(X)); those in ALPHA_KINDS take `alpha`
UNARY_KINDS = (
    "sigmoid",
    "tanh",
    "leaky_relu",
    "quick_gelu",
    "abs",
    "sign",
    "neg",
    "log",
    "exp",
    "sqrt",
    "reciprocal",
)
#: the kinds of `training.unary_grad` (dX from dY and Z)
UNARY_GRAD_KINDS = ("sigmoid", "tanh", "leaky_relu", "quick_gelu")
#: the kinds whose function has the parameter `alpha`
ALPHA_KINDS = ("leaky_relu", "quick_gelu")


class _KindOp(TrainingComputeOp):
    """A `kind` from KINDS and an `alpha` exactly when the kind has one."""

    KINDS: ClassVar[tuple[str, ...]] = ()
    kind = prop_def(StringAttr)
    alpha = opt_prop_def(FloatAttr[AnyFloat])

    def alpha_value(self) -> float:
        """The kind's parameter (0.0 for a kind without one)."""
        return 0.0 if self.alpha is None else float(self.alpha.value.data)

    def verify_kind(self) -> None:
        k = self.kind.data
        if k not in self.KINDS:
            raise VerifyException(f"kind must be one of {', '.join(self.KINDS)}, got '{k}'")
        if k in ALPHA_KINDS and self.alpha is None:
            raise VerifyException(f"kind '{k}' needs alpha")
        if k not in ALPHA_KINDS and self.alpha is not None:
            raise VerifyException(f"kind '{k}' takes no alpha (only {', '.join(ALPHA_KINDS)} do)")
        if self.alpha is not None and not math.isfinite(self.alpha_value()):
            raise VerifyException(f"alpha must be finite, got {self.alpha_value()}")


@irdl_op_definition
class UnaryOp(_KindOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = f(X) elementwise, f by `kind`:
    sigmoid 1 / (1 + exp(-X)); tanh; leaky_relu X > 0 ? X : alpha * X;
    quick_gelu X * sigmoid(alpha * X); abs; sign (-1, 0 or 1); neg -X;
    log (natural); exp; sqrt; reciprocal 1 / X."""

    name = "training.unary"
    KINDS: ClassVar[tuple[str, ...]] = UNARY_KINDS

    def infer_shapes(self) -> list[tuple[int, ...]]:
        self.verify_kind()
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class UnaryGradOp(_KindOp, ElementwiseAliasing, ElementwiseSpace):
    """dX from dY and Z (ins dY, Z), as onnxruntime's gradient ops define it:
    sigmoid (SigmoidGrad, Z = the output Y) dY * Y * (1 - Y);
    tanh (TanhGrad, Z = Y) dY * (1 - Y * Y);
    leaky_relu (LeakyReluGrad, Z = Y, or X: alpha > 0 gives them one sign)
    Z > 0 ? dY : alpha * dY;
    quick_gelu (QuickGeluGrad, Z = the input X) with v = alpha * X and
    s = sigmoid(v): dY * s * (1 + v * (1 - s))."""

    name = "training.unary_grad"
    KINDS: ClassVar[tuple[str, ...]] = UNARY_GRAD_KINDS
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        self.verify_kind()
        dy, z = self.in_types()
        return [_same_shape(dy, "gradient dY", z, "Z")]
