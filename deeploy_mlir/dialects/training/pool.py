"""2-D pooling (NCHW): max, average and global average pooling and their gradients."""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import TrainingComputeOp
from deeploy_mlir.dialects.training.conv import WindowedOp, _space
from deeploy_mlir.dialects.training.interfaces import (
    IterationSpace,
    IterationSpaceInterface,
    NoAliasing,
)
from deeploy_mlir.dialects.training.shapes import (
    _same_shape,
    elem_of,
    fmt_shape,
    is_f32,
    is_int,
    shape_of,
)
from deeploy_mlir.dialects.training.window import Window2d, _check_dy, _i64s, _ints, _rank4

# -- pooling -----------------------------------------------------------------

#: loop dims of the 2-D pooling ops' iteration space
POOL_N, POOL_C, POOL_OH, POOL_OW, POOL_KH, POOL_KW, POOL_IH, POOL_IW = range(8)
POOL_IN = (POOL_N, POOL_C, POOL_IH, POOL_IW)
POOL_OUT = (POOL_N, POOL_C, POOL_OH, POOL_OW)


class PoolOp(WindowedOp, ABC):
    """Properties and geometry of the 2-D pooling ops (forward and gradient)."""

    kernel_shape = prop_def(DenseArrayBase.constr(i64))

    def dilation_prop(self) -> DenseArrayBase | None:
        return None

    def window(self) -> Window2d:
        k = _ints(self.kernel_shape, "kernel_shape", "height, width", positive=True)
        return self._window((k[0], k[1]), self.dilation_prop())

    def pooled(self, x: Sequence[int], what: str) -> tuple[int, int, int, int]:
        """[N, C, OH, OW] of pooling an input of shape x (called `what`)."""
        n, c, h, w = _rank4(x, what, "N, C, H, W")
        win = self.window()
        out = win.out_size((h, w))
        win.check_windows_overlap((h, w), out)
        return n, c, out[0], out[1]

    def space(self, n_in: int, n_out: int, grad: bool) -> IterationSpace:
        """Forward: the input, then the outputs; gradient: the inputs (shaped
        like the forward's output), then dX."""
        x = shape_of(self.output_types()[0] if grad else self.ins[0].type)
        n, c, oh, ow = self.pooled(x, "dX" if grad else "X")
        win = self.window()
        dims = (n, c, oh, ow, *win.kernel, x[2], x[3])
        operands = [POOL_OUT] * n_in + [POOL_IN] if grad else [POOL_IN] + [POOL_OUT] * n_out
        reduction = {POOL_KH, POOL_KW} | ({POOL_OH, POOL_OW} if grad else set())
        windows = win.sliding((POOL_OH, POOL_OW), (POOL_KH, POOL_KW), (POOL_IH, POOL_IW))
        whole = {POOL_OH, POOL_OW, POOL_KH, POOL_KW, POOL_IH, POOL_IW}
        if not grad:
            # the forward tiles its output rows and columns (inputs with halos)
            whole = {POOL_KH, POOL_KW} | win.spatial_whole((POOL_OH, POOL_OW), (POOL_IH, POOL_IW))
        return _space(dims, operands, whole, reduction, windows)

    def grad_shapes(self, dy: Sequence[int]) -> list[tuple[int, ...]]:
        """dX's declared shape, checked against dY: dX pooled must give dY."""
        dx = shape_of(self.output_types()[0])
        n, c, oh, ow = self.pooled(dx, "dX")
        _rank4(dy, "dY", "N, C, OH, OW")
        _check_dy(dy, (n, c, oh, ow), f"pooling dX ({fmt_shape(dx)})")
        return [dx]


@irdl_op_definition
class MaxPool2dOp(PoolOp):
    """(Y, Indices) = MaxPool(X) (ONNX MaxPool, 2-D, NCHW, ceil_mode = 0,
    storage_order = 0); Indices is optional (one output: Y only).

    Indices[n, c, oh, ow] is the flat row-major index into the whole input
    ((n * C + c) * H + h) * W + w of the first largest element of the window
    (padding never wins). A tile (tiling-materialize) carries its origin in
    the whole input (`origin`: n, c, h, w) and the whole input's [C, H, W]
    (`index_frame`), so that its Indices are those of the whole op.
    maxpool2d_grad reads an index modulo H * W.

    `relu_mask` (relu-fuse: X is a ReLU's output and the only reader of
    Indices is the gradient of that ReLU through maxpool2d_grad): Indices is
    -1 where Y is not > 0, so that maxpool2d_grad adds nothing there, which
    is what the ReLU's gradient would have zeroed (the selected element is
    Y itself, and ReluGrad's mask is X > 0). It needs Indices."""

    name = "training.maxpool2d"
    N_OUTS: ClassVar[int] = 2
    dilations = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))
    #: a tile of a larger maxpool2d: where its input starts in the whole input
    #: (n, c, h, w; index values, set per tile by tiling-materialize; after
    #: ins and outs, which are declared again to keep that operand order) ...
    ins = var_operand_def()
    outs = var_operand_def()
    origin = var_operand_def(IndexType())
    #: ... and the whole input's [C, H, W], so that Indices number the whole input
    index_frame = opt_prop_def(DenseArrayBase.constr(i64))
    #: Indices -1 where Y is not > 0 (relu-fuse)
    relu_mask = opt_prop_def(UnitAttr)

    assembly_format = (
        "`ins` `(` $ins `:` type($ins) `)` (`outs` `(` $outs^ `:` type($outs) `)`)? "
        "(`origin` `(` $origin^ `)`)? attr-dict (`->` type($res)^)?"
    )

    def __init__(
        self,
        ins: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute] = (),
        outs: Sequence[SSAValue | Operation] = (),
        properties: Mapping[str, Attribute | None] | None = None,
        origin: Sequence[SSAValue | Operation] = (),
    ):
        props = {k: v for k, v in (properties or {}).items() if v is not None}
        IRDLOperation.__init__(
            self,
            operands=[list(ins), list(outs), list(origin)],
            result_types=[list(result_types)],
            properties=props,
        )

    def dilation_prop(self) -> DenseArrayBase | None:
        return self.dilations

    def frame(self) -> tuple[int, int, int]:
        """[C, H, W] of the input the Indices count in (the op's own unless a tile)."""
        if self.index_frame is None:
            _, c, h, w = shape_of(self.ins[0].type)
            return c, h, w
        c, h, w = (int(v) for v in self.index_frame.get_values())
        return c, h, w

    def n_outs(self) -> int:
        n = len(self.output_types())
        return n if n in (1, 2) else 2

    def verify_(self) -> None:
        n = len(self.output_types())
        if n not in (1, 2):
            form = "outs" if self.is_buffer_form else "results"
            raise VerifyException(f"expects 1 or 2 {form} (Y, then optionally Indices), got {n}")
        super().verify_()
        if self.relu_mask is not None and n != 2:
            raise VerifyException("relu_mask needs the Indices output (it marks Indices)")
        if len(self.origin) not in (0, 4) or (len(self.origin) == 4) != (
            self.index_frame is not None
        ):
            raise VerifyException(
                "a tile's origin (4 index values: n, c, h, w) and index_frame ([C, H, W] of "
                "the whole input) come together"
            )
        if self.index_frame is not None:
            frame = tuple(int(v) for v in self.index_frame.get_values())
            _, c, h, w = shape_of(self.ins[0].type)
            if len(frame) != 3 or any(f < t for f, t in zip(frame, (c, h, w), strict=False)):
                raise VerifyException(
                    f"index_frame must be [C, H, W] of the whole input, at least the tile's "
                    f"{[c, h, w]}, got {list(frame)}"
                )

    def output_elem_types(self) -> list[Attribute]:
        return [f32, i64][: self.n_outs()]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        y = self.pooled(shape_of(self.ins[0].type), "X")
        return [y] * self.n_outs()

    def iteration_space(self) -> IterationSpace:
        return self.space(1, self.n_outs(), grad=False)


@irdl_op_definition
class MaxPool2dGradOp(PoolOp):
    """dX = gradient of maxpool2d (onnxruntime MaxPoolGrad): ins (dY,
    Indices), the forward's properties; dX's shape is the forward input's.

    dX[n, c] is zero but for dX[n, c].flat[Indices[n, c, oh, ow] mod (H * W)]
    += dY[n, c, oh, ow], in increasing (oh, ow) order; an index -1 (an empty
    window, or maxpool2d's `relu_mask`) adds nothing."""

    name = "training.maxpool2d_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    dilations = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))

    def dilation_prop(self) -> DenseArrayBase | None:
        return self.dilations

    def check_inputs(self) -> None:
        dy, idx = self.in_types()
        if not is_f32(dy):
            raise VerifyException(f"dY must have f32 elements, got {elem_of(dy)}")
        if not is_int(idx, 64):
            raise VerifyException(f"Indices must have i64 elements, got {elem_of(idx)}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, idx = self.in_types()
        return self.grad_shapes(_same_shape(dy, "dY", idx, "Indices"))

    def iteration_space(self) -> IterationSpace:
        return self.space(2, 1, grad=True)


@irdl_op_definition
class AvgPool2dOp(PoolOp):
    """Y = AveragePool(X) (ONNX AveragePool, 2-D, NCHW, ceil_mode = 0, no
    dilations): the mean of each window's input elements; padding counts in
    the divisor (kH * kW) only with count_include_pad."""

    name = "training.avgpool2d"
    count_include_pad = opt_prop_def(UnitAttr)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [self.pooled(shape_of(self.ins[0].type), "X")]

    def iteration_space(self) -> IterationSpace:
        return self.space(1, 1, grad=False)


@irdl_op_definition
class AvgPool2dGradOp(PoolOp):
    """dX = gradient of avgpool2d (onnxruntime AveragePoolGrad): ins (dY),
    the forward's properties; dX's shape is the forward input's. Each
    dY[n, c, oh, ow], divided by its window's divisor, adds to every input
    element of the window."""

    name = "training.avgpool2d_grad"
    count_include_pad = opt_prop_def(UnitAttr)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return self.grad_shapes(shape_of(self.ins[0].type))

    def iteration_space(self) -> IterationSpace:
        return self.space(1, 1, grad=True)


GLOBAL_IN = (0, 1, 2, 3)
GLOBAL_OUT = (0, 1, None, None)


@irdl_op_definition
class GlobalAvgPoolOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """Y [N, C, 1, 1] = the mean of X [N, C, H, W] over H and W (ONNX
    GlobalAveragePool)."""

    name = "training.global_avgpool"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        n, c, _, _ = _rank4(shape_of(self.ins[0].type), "X", "N, C, H, W")
        return [(n, c, 1, 1)]

    def iteration_space(self) -> IterationSpace:
        return _space(shape_of(self.ins[0].type), [GLOBAL_IN, GLOBAL_OUT], set(), {2, 3})


@irdl_op_definition
class GlobalAvgPoolGradOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """dX [N, C, H, W] = dY [N, C, 1, 1] / (H * W), broadcast over H and W;
    dX's shape is the forward input's."""

    name = "training.global_avgpool_grad"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dx = shape_of(self.output_types()[0])
        n, c, _, _ = _rank4(dx, "dX", "N, C, H, W")
        dy = shape_of(self.ins[0].type)
        if dy != (n, c, 1, 1):
            raise VerifyException(
                f"dY must have shape {fmt_shape((n, c, 1, 1))} (dX's batch and channels), got "
                f"{fmt_shape(dy)}"
            )
        return [dx]

    def iteration_space(self) -> IterationSpace:
        dx = shape_of(self.output_types()[0])
        # the divisor is the whole plane: H and W stay whole
        return _space(dx, [GLOBAL_OUT, GLOBAL_IN], {2, 3}, set())
