"""2-D convolution (NCHW): `WindowedOp` (the properties of the windowed ops),
`ConvGeometry`, `training.conv2d` and `training.conv2d_grad`.
"""

from __future__ import annotations

import dataclasses
from abc import ABC
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.irdl import (
    irdl_op_definition,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import ListedGradsOp, TrainingComputeOp
from deeploy_mlir.dialects.training.interfaces import (
    IterationSpace,
    IterationSpaceInterface,
    NoAliasing,
    _dims_map,
)
from deeploy_mlir.dialects.training.shapes import fmt_shape, shape_of
from deeploy_mlir.dialects.training.window import (
    SlidingWindow,
    Window2d,
    _check_dy,
    _i64s,
    _ints,
    _rank4,
)

# --------------------------------------------------------------------------
# Convolution and pooling (2-D, NCHW)
# --------------------------------------------------------------------------


class WindowedOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface, ABC):
    """Common properties of convolution and pooling ops."""

    strides = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))
    pads = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(0, 0, 0, 0))

    def _window(self, kernel: tuple[int, int], dilations: DenseArrayBase | None) -> Window2d:
        strides = _ints(self.strides, "strides", "height, width", positive=True)
        pads = _ints(self.pads, "pads", "top, left, bottom, right", positive=False)
        dil = (1, 1)
        if dilations is not None:
            dil = _ints(dilations, "dilations", "height, width", positive=True)
        return Window2d(
            kernel, (strides[0], strides[1]), (pads[0], pads[1], pads[2], pads[3]), (dil[0], dil[1])
        )


def _space(
    dims: Sequence[int],
    operands: Sequence[Sequence[int | None]],
    whole: set[int],
    reduction: set[int],
    windows: tuple[SlidingWindow, ...] = (),
) -> IterationSpace:
    maps = tuple(_dims_map(len(dims), idx) for idx in operands)
    return IterationSpace(tuple(dims), maps, frozenset(whole), frozenset(reduction), windows)


# -- convolution -------------------------------------------------------------

#: loop dims of the convolution ops' iteration space (IC only for grouped
#: convolutions that are neither regular nor depthwise)
CONV_N, CONV_M, CONV_CG, CONV_OH, CONV_OW, CONV_KH, CONV_KW, CONV_IH, CONV_IW, CONV_IC = range(10)
CONV_SPATIAL = frozenset({CONV_OH, CONV_OW, CONV_KH, CONV_KW, CONV_IH, CONV_IW})


@dataclass(frozen=True)
class ConvGeometry:
    """X [n, c, h, w] convolved with W [m, cg, kh, kw] in c / cg groups gives
    Y [n, m, oh, ow]; output channel j reads the input channels of group
    j // (m / groups)."""

    n: int
    c: int
    h: int
    w: int
    m: int
    cg: int
    kh: int
    kw: int
    oh: int
    ow: int
    window: Window2d

    @property
    def groups(self) -> int:
        return self.c // self.cg

    @property
    def depthwise(self) -> bool:
        """One input and one output channel per group (and more than one group)."""
        return self.groups > 1 and self.cg == 1 and self.m == self.c

    @property
    def x_channel_dim(self) -> int:
        """The loop dim that indexes X's channels: the group-local channel of a
        regular convolution, the output channel of a depthwise one, else a dim
        of its own (whole)."""
        if self.groups == 1:
            return CONV_CG
        return CONV_M if self.depthwise else CONV_IC

    def space(
        self,
        roles: Sequence[str],
        reduction: set[int],
        spatial: bool = False,
        accumulate: frozenset[int] = frozenset(),
    ) -> IterationSpace:
        """The iteration space for operands playing `roles` (X, W, B, Y and
        their gradients dX, dW, dB, dY), in order. With `spatial` (the
        forward, the weight gradient) the output rows and columns may tile,
        the input's following them with a halo (`IterationSpace.tiled_windows`);
        else the spatial dims stay whole. `accumulate`: the reduction dims
        that may tile all the same (the kernel adds into its outputs)."""
        xc = self.x_channel_dim
        index: dict[str, tuple[int, ...]] = {
            "X": (CONV_N, xc, CONV_IH, CONV_IW),
            "W": (CONV_M, CONV_CG, CONV_KH, CONV_KW),
            "B": (CONV_M,),
            "Y": (CONV_N, CONV_M, CONV_OH, CONV_OW),
        }
        dims = [self.n, self.m, self.cg, self.oh, self.ow, self.kh, self.kw, self.h, self.w]
        whole = set(CONV_SPATIAL)
        if spatial:
            whole = {CONV_KH, CONV_KW} | self.window.spatial_whole(
                (CONV_OH, CONV_OW), (CONV_IH, CONV_IW)
            )
        if xc == CONV_IC:
            # a tile of channels would cut across groups
            dims.append(self.c)
            whole |= {CONV_M, CONV_CG, CONV_IC}
        operands = [index[r.removeprefix("d")] for r in roles]
        windows = self.window.sliding((CONV_OH, CONV_OW), (CONV_KH, CONV_KW), (CONV_IH, CONV_IW))
        space = _space(dims, operands, whole, reduction, windows)
        return IterationSpace(
            space.dims, space.maps, space.whole, space.reduction, windows, accumulate - whole
        )


class ConvOp(WindowedOp, ABC):
    """Properties and geometry of conv2d and conv2d_grad."""

    dilations = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))

    #: positions of X and W among the inputs
    X_IN: ClassVar[int] = 0
    W_IN: ClassVar[int] = 1

    def geometry(self) -> ConvGeometry:
        n, c, h, w = _rank4(shape_of(self.ins[self.X_IN].type), "X", "N, C, H, W")
        m, cg, kh, kw = _rank4(shape_of(self.ins[self.W_IN].type), "W", "M, C/group, kH, kW")
        if cg == 0 or c % cg:
            raise VerifyException(
                f"X has {c} channels, not a multiple of W's {cg} input channels per group "
                f"(W is {fmt_shape((m, cg, kh, kw))})"
            )
        groups = c // cg
        if m % groups:
            raise VerifyException(
                f"W has {m} output channels, not a multiple of the {groups} groups "
                f"(X's {c} channels / W's {cg} per group)"
            )
        win = self._window((kh, kw), self.dilations)
        oh, ow = win.out_size((h, w))
        return ConvGeometry(n, c, h, w, m, cg, kh, kw, oh, ow, win)


@irdl_op_definition
class Conv2dOp(ConvOp):
    """Y = conv(X, W) + B (ONNX Conv, 2-D, NCHW, explicit pads).

    X [N, C, H, W], W [M, C/G, kH, kW], optional B [M] -> Y [N, M, OH, OW].
    The group count G is not a property: it is C / W.shape[1] (ONNX's `group`
    is checked against the shapes by the importer), so that a tile of the
    channels of a depthwise convolution is again a valid depthwise
    convolution. pads = [top, left, bottom, right];
    OH = (H + top + bottom - ((kH - 1) * dilation + 1)) // stride + 1.

    `relu` (relu-fuse: a ReLU was Y's only reader): Y = max(conv + B, 0),
    the ReLU applied to each output once its sum is complete (the reduction
    dims never tile, so every tile's outputs are complete)."""

    name = "training.conv2d"
    N_INS: ClassVar[tuple[int, int]] = (2, 3)
    relu = opt_prop_def(UnitAttr)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        g = self.geometry()
        if len(self.ins) == 3:
            b = shape_of(self.ins[2].type)
            if b != (g.m,):
                raise VerifyException(
                    f"bias B must have shape {g.m} (one per output channel), got {fmt_shape(b)}"
                )
        return [(g.n, g.m, g.oh, g.ow)]

    def iteration_space(self) -> IterationSpace:
        roles = [*("X", "W", "B")[: len(self.ins)], "Y"]
        return self.geometry().space(roles, {CONV_CG, CONV_KH, CONV_KW}, spatial=True)


CONV_GRADS = ("dX", "dW", "dB")


@irdl_op_definition
class Conv2dGradOp(ConvOp, ListedGradsOp):
    """(dX, dW, dB) = gradients of conv2d (com.microsoft ConvGrad): ins
    (dY, X, W), the forward's properties.

    `outputs` lists the gradients the graph needs, in the order dX, dW, dB
    (default: all three); the op has one output per entry, in that order. A
    gradient ConvGrad leaves unnamed ("") is left out: the first layer
    needs no dX, a convolution without bias no dB."""

    name = "training.conv2d_grad"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)
    X_IN: ClassVar[int] = 1
    W_IN: ClassVar[int] = 2
    GRADS: ClassVar[tuple[str, ...]] = CONV_GRADS
    outputs = prop_def(
        ArrayAttr[StringAttr],
        default_value=ArrayAttr([StringAttr(s) for s in CONV_GRADS]),
    )

    def verify_(self) -> None:
        self.verify_grads()
        super().verify_()

    def infer_shapes(self) -> list[tuple[int, ...]]:
        g = self.geometry()
        _check_dy(shape_of(self.ins[0].type), (g.n, g.m, g.oh, g.ow), "X convolved with W")
        shapes = {"dX": (g.n, g.c, g.h, g.w), "dW": (g.m, g.cg, g.kh, g.kw), "dB": (g.m,)}
        return [shapes[s] for s in self.grads()]

    def iteration_space(self) -> IterationSpace:
        """With dX alone, the output channels (a reduction unless depthwise)
        may tile, dX adding up their contributions; with dW and dB alone, the
        batch and the output rows and columns (X's following with a halo, as
        in the forward), dW and dB adding up. With dX and dW together every
        reduction dim stays whole (`split` makes two ops that tile)."""
        g = self.geometry()
        grads = self.grads()
        reduction: set[int] = set()
        if "dX" in grads:
            # dX sums over taps (and output positions) and, within a group,
            # over the output channels
            reduction |= {CONV_OH, CONV_OW, CONV_KH, CONV_KW}
            if not g.depthwise:
                reduction.add(CONV_M)
        if "dW" in grads or "dB" in grads:
            reduction |= {CONV_N, CONV_OH, CONV_OW}
        roles = ["dY", "X", "W", *grads]
        if grads == ["dX"]:
            # X is not read: its shape is dX's, and the dX tile stands in
            sp = g.space(roles, reduction, accumulate=frozenset(reduction & {CONV_M}))
            return self.onto_space(dataclasses.replace(sp, unread=((self.X_IN, 0),)))
        if "dX" not in grads:
            acc = frozenset({CONV_N, CONV_OH, CONV_OW})
            sp = g.space(roles, reduction, spatial=True, accumulate=acc)
            if grads[0] == "dW":  # W is not read: the dW tile stands in
                sp = dataclasses.replace(sp, unread=((self.W_IN, 0),))
            return self.onto_space(sp)
        return self.onto_space(g.space(roles, reduction))

    def accumulable(self) -> set[int]:
        return set(range(self.n_outs()))

    def ontoable(self) -> set[int]:
        """dW: the weight kernel adds the buffer at its store. Not dB: it
        does not index the input channels and taps, whose tiles would each
        add the buffer again (the kernel can: reset_dB)."""
        return {k for k, s in enumerate(self.grads()) if s == "dW"}

    def split(self) -> list[Conv2dGradOp]:
        """Buffer form with dX and dW or dB: one op for dX and one for the
        others (the same inputs and properties), each of which may tile its
        reduction dims; one op otherwise."""
        grads = self.grads()
        if "dX" not in grads or len(grads) == 1 or not self.is_buffer_form:
            return [self]
        props = {
            k: p for k, p in self.properties.items() if k not in ("operandSegmentSizes", "onto")
        }
        onto = self.onto_outputs()
        out: list[Conv2dGradOp] = []
        for names in (["dX"], grads[1:]):
            p = dict(props)
            p["outputs"] = ArrayAttr([StringAttr(n) for n in names])
            pos = [grads.index(n) for n in names]
            outs = [self.outs[k] for k in pos]
            ins = self.base_ins()
            mine = [j for j, k in enumerate(pos) if k in onto]
            if mine:  # accumulate-fuse's buffers (outputs) and flag go along
                p["onto"] = DenseArrayBase.from_list(i64, mine)
                ins += [outs[j] for j in mine] + [self.ins[-1]]
            out.append(Conv2dGradOp(ins, (), outs, properties=p))
        return out
