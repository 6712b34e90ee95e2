"""com.microsoft AdamWOptimizer (onnxruntime-training's OptimType.AdamW):
`training.adamw` on one parameter and `training.step_count`, the optimizer's
step counter.

onnxruntime's training loop feeds the kernel `step = state.step + 1` (1 at the
first update) and increments its state when the node reports an update. Here
the counter is an int64 state argument of @optimizer_step: `training.step_count`
computes the new count (`count + 1`, unchanged when an `update_signal` is
given and false), every `training.adamw` of the step reads it, and it is
returned as the new value of the argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import ElementwiseSpace, TrainingComputeOp
from deeploy_mlir.dialects.training.interfaces import AliasingInterface
from deeploy_mlir.dialects.training.shapes import (
    _same_shape,
    elem_of,
    fmt_shape,
    is_f32,
    is_int,
    shape_of,
)

#: AdamWOptimizer's attribute defaults (onnxruntime's kernel)
ADAMW_DEFAULTS = {
    "alpha": 0.9,
    "beta": 0.999,
    "epsilon": 1e-8,
    "weight_decay": 0.0,
    "adam_mode": 0,
    "correct_bias": 1,
}


def _one_element(t: Attribute, what: str) -> None:
    if shape_of(t) not in ((), (1,)):
        raise VerifyException(f"{what} must have one element, got {fmt_shape(shape_of(t))}")


def _check_signal(t: Attribute) -> None:
    if not is_int(t, 1):
        raise VerifyException(f"update_signal must have i1 elements, got {elem_of(t)}")
    _one_element(t, "update_signal")


@irdl_op_definition
class AdamWOp(TrainingComputeOp, AliasingInterface, ElementwiseSpace):
    """AdamW on one parameter: ins (weight, grad, m1, m2, lr, step[,
    update_signal]) -> (new weight, new m1, new m2), each written in place of
    its input. `step` is the count including this update (1 at the first).
    Nothing changes when update_signal is given and false. With
    correct_bias, ac = 1 - alpha^step, bc = 1 - beta^step (the powers in
    double, rounded to float), else 1; m1 = alpha m1 + (1 - alpha) g,
    m2 = beta m2 + ((1 - beta) g) g; then
    adam_mode 1 (Hugging Face): w -= (lr sqrt(bc) / ac) m1 / (sqrt(m2) + eps);
    w -= (lr wd) w;
    adam_mode 0 (torch): w -= (w lr) wd before; w -= lr m1 / (ac (sqrt(m2 /
    bc) + eps))."""

    name = "training.adamw"
    N_INS: ClassVar[tuple[int, int]] = (6, 7)
    N_OUTS: ClassVar[int] = 3
    STATE_UPDATE: ClassVar[bool] = True

    alpha = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(0.9, f32))
    beta = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(0.999, f32))
    epsilon = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1e-8, f32))
    weight_decay = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(0.0, f32))
    adam_mode = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    correct_bias = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return [(0, 0), (1, 2), (2, 3)]

    def has_signal(self) -> bool:
        return len(self.ins) == 7

    def check_inputs(self) -> None:
        types = self.in_types()
        for i, what in enumerate(("weight", "gradient", "m1", "m2", "learning rate")):
            if not is_f32(types[i]):
                raise VerifyException(f"{what} must have f32 elements, got {elem_of(types[i])}")
        if not is_int(types[5], 64):
            raise VerifyException(f"step must have i64 elements, got {elem_of(types[5])}")
        if self.has_signal():
            _check_signal(types[6])
        mode = self.adam_mode.value.data
        if mode not in (0, 1):
            raise VerifyException(f"adam_mode must be 0 or 1, got {mode}")
        cb = self.correct_bias.value.data
        if cb not in (0, 1):
            raise VerifyException(f"correct_bias must be 0 or 1, got {cb}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        w, g, m1, m2, lr, step = self.in_types()[:6]
        shape = _same_shape(w, "weight", g, "gradient")
        _same_shape(w, "weight", m1, "m1")
        _same_shape(w, "weight", m2, "m2")
        _one_element(lr, "learning rate")
        _one_element(step, "step")
        return [shape, shape, shape]


@irdl_op_definition
class StepCountOp(TrainingComputeOp, AliasingInterface, ElementwiseSpace):
    """The optimizer's step count after this step: ins (count[,
    update_signal]) -> count + 1, or count when update_signal is given and
    false (i64, one element), written in place of the count."""

    name = "training.step_count"
    N_INS: ClassVar[tuple[int, int]] = (1, 2)
    STATE_UPDATE: ClassVar[bool] = True

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return [(0, 0)]

    def check_inputs(self) -> None:
        types = self.in_types()
        if not is_int(types[0], 64):
            raise VerifyException(f"step count must have i64 elements, got {elem_of(types[0])}")
        if len(types) == 2:
            _check_signal(types[1])

    def output_elem_types(self) -> list[Attribute]:
        return [i64]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        t = self.in_types()[0]
        _one_element(t, "step count")
        return [shape_of(t)]
