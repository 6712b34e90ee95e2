"""State updates: gradient accumulation and the SGD step."""

from __future__ import annotations

from typing import ClassVar

from xdsl.irdl import (
    irdl_op_definition,
)
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import ElementwiseSpace, TrainingComputeOp
from deeploy_mlir.dialects.training.interfaces import StateUpdate
from deeploy_mlir.dialects.training.shapes import _same_shape, fmt_shape, is_f32, is_int, shape_of


@irdl_op_definition
class AccumulateOp(TrainingComputeOp, StateUpdate, ElementwiseSpace):
    """InPlaceAccumulatorV2: out = reset ? grad : buffer + grad (reset: tensor<1xi1>)."""

    name = "training.accumulate"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)

    def check_inputs(self) -> None:
        buf, grad, reset = self.in_types()
        if not (is_f32(buf) and is_f32(grad)):
            raise VerifyException("buffer and gradient must have f32 elements")
        if not is_int(reset, 1) or shape_of(reset) not in ((), (1,)):
            raise VerifyException(f"reset flag must be a tensor<1xi1>, got {reset}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        buf, grad = self.in_types()[:2]
        return [_same_shape(buf, "buffer", grad, "gradient")]


@irdl_op_definition
class SgdOp(TrainingComputeOp, StateUpdate, ElementwiseSpace):
    """out = weight - lr * grad (lr: a one-element f32 tensor)."""

    name = "training.sgd"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        w, g, lr = self.in_types()
        shape = _same_shape(w, "weight", g, "gradient")
        if shape_of(lr) not in ((), (1,)):
            raise VerifyException(
                f"learning rate must have one element, got {fmt_shape(shape_of(lr))}"
            )
        return [shape]
