"""Reference semantics of the AdamW family (dialects/training/adamw.py):
com.microsoft AdamWOptimizer on one parameter, in float32 with onnxruntime's
order of operations (orttraining's cpu/optimizer/adamw kernel; runtime_c's
dm_adamw_fp32 follows the same order), and the step counter."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp.registry import semantics

F32 = np.float32


def _signal(op: T.TrainingComputeOp, ins: Sequence[np.ndarray], at: int) -> bool:
    """The update_signal input (true when absent)."""
    return len(ins) <= at or bool(np.asarray(ins[at]).reshape(-1)[0])


def bias_corrections(alpha: float, beta: float, step: int) -> tuple[F32, F32]:
    """1 - alpha^step and 1 - beta^step: the powers of the float32 attributes
    in double (onnxruntime: std::pow(float, int64) is a double), then float32."""
    ac = F32(1) - F32(float(F32(alpha)) ** step)
    bc = F32(1) - F32(float(F32(beta)) ** step)
    return ac, bc


def adamw_update(
    w: np.ndarray,
    g: np.ndarray,
    m1: np.ndarray,
    m2: np.ndarray,
    lr: float,
    step: int,
    alpha: float,
    beta: float,
    eps: float,
    wd: float,
    correct_bias: bool,
    mode: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(new weight, m1, m2); every operation one float32 rounding."""
    a, b, e, d, lr32 = F32(alpha), F32(beta), F32(eps), F32(wd), F32(lr)
    ac, bc = bias_corrections(alpha, beta, step) if correct_bias else (F32(1), F32(1))
    w, g, m1, m2 = (np.asarray(x, dtype=F32) for x in (w, g, m1, m2))
    with np.errstate(all="ignore"):
        if mode == 0:
            w = w - (w * lr32) * d
        n1 = a * m1 + (F32(1) - a) * g
        n2 = b * m2 + ((F32(1) - b) * g) * g
        if mode == 1:
            lr_c = lr32 * (np.sqrt(bc) / ac) if correct_bias else lr32
            w = w - (lr_c * n1) / (np.sqrt(n2) + e)
            w = w - (lr32 * d) * w
        else:
            w = w - (lr32 * n1) / (ac * (np.sqrt(n2 / bc) + e))
    return w.astype(F32), n1.astype(F32), n2.astype(F32)


@semantics(T.AdamWOp)
def adamw(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.AdamWOp)
    w, g, m1, m2, lr, step = (np.asarray(x) for x in ins[:6])
    if not _signal(op, ins, 6):
        return [w.copy(), m1.copy(), m2.copy()]
    return list(
        adamw_update(
            w,
            g,
            m1,
            m2,
            float(lr.reshape(-1)[0]),
            int(step.reshape(-1)[0]),
            op.alpha.value.data,
            op.beta.value.data,
            op.epsilon.value.data,
            op.weight_decay.value.data,
            bool(op.correct_bias.value.data),
            op.adam_mode.value.data,
        )
    )


@semantics(T.StepCountOp)
def step_count(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    count = np.asarray(ins[0], dtype=np.int64)
    return [count + 1 if _signal(op, ins, 1) else count.copy()]
