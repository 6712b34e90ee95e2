"""Reference semantics of `training.unary` and `training.unary_grad`
(dialects/training/activation.py): each function in float64, rounded once to
float32, the way onnxruntime's float kernels agree with it to about 1 ulp."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp.registry import semantics

F32 = np.float32


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow for large |x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _sign(x: np.ndarray) -> np.ndarray:
    return np.sign(x)


_UNARY: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "sigmoid": lambda x, a: _sigmoid(x),
    "tanh": lambda x, a: np.tanh(x),
    "leaky_relu": lambda x, a: np.where(x > 0, x, a * x),
    "quick_gelu": lambda x, a: x * _sigmoid(a * x),
    "abs": lambda x, a: np.abs(x),
    "sign": lambda x, a: _sign(x),
    "neg": lambda x, a: -x,
    "log": lambda x, a: np.log(x),
    "exp": lambda x, a: np.exp(x),
    "sqrt": lambda x, a: np.sqrt(x),
    "reciprocal": lambda x, a: 1.0 / x,
}


def _quick_gelu_grad(dy: np.ndarray, x: np.ndarray, a: float) -> np.ndarray:
    v = a * x
    s = _sigmoid(v)
    return dy * s * (1.0 + v * (1.0 - s))


_GRAD: dict[str, Callable[[np.ndarray, np.ndarray, float], np.ndarray]] = {
    "sigmoid": lambda dy, y, a: dy * y * (1.0 - y),
    "tanh": lambda dy, y, a: dy * (1.0 - y * y),
    "leaky_relu": lambda dy, z, a: np.where(z > 0, dy, a * dy),
    "quick_gelu": _quick_gelu_grad,
}


@semantics(T.UnaryOp)
def unary(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.UnaryOp)
    fn = _UNARY[op.kind.data]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return [fn(ins[0].astype(np.float64), op.alpha_value()).astype(F32)]


@semantics(T.UnaryGradOp)
def unary_grad(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.UnaryGradOp)
    dy, z = (v.astype(np.float64) for v in ins)
    with np.errstate(over="ignore", invalid="ignore"):
        return [_GRAD[op.kind.data](dy, z, op.alpha_value()).astype(F32)]
