"""Window geometry of the sliding-window ops: `SlidingWindow` (one axis, in loop
dims), `Window2d` (a 2-D window's kernel, strides, pads, dilations) and the
checks of their properties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    DenseArrayBase,
    i64,
)
from xdsl.ir.affine import AffineExpr
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.shapes import fmt_shape


@dataclass(frozen=True)
class SlidingWindow:
    """One spatial axis of a windowed op, in loop dims of its iteration space:
    input position = out * stride + tap * dilation - pad_before.

    The maps index the input by `in_dim`, a loop dim of its own (extent: the
    input's size) that stays whole together with `out_dim` and `tap_dim`, so
    that every map result is a single loop dim (what tile-select and
    tiling-materialize read). This record keeps the affine relation between the
    three, which tiling the spatial axes (with halos) needs."""

    out_dim: int
    tap_dim: int
    in_dim: int
    stride: int
    dilation: int
    pad_before: int
    pad_after: int

    def input_expr(self) -> AffineExpr:
        """out * stride + tap * dilation - pad_before, over the op's loop dims."""
        d = AffineExpr.dimension
        return d(self.out_dim) * self.stride + d(self.tap_dim) * self.dilation - self.pad_before

    def extent(self, dims: Sequence[int]) -> int:
        """The input positions one window spans, for loop dims of sizes `dims`."""
        return (dims[self.tap_dim] - 1) * self.dilation + 1

    def in_tile(self, dims: Sequence[int], t: int) -> int:
        """The input tile of an output tile of `t` positions: the whole input
        for the whole output, else the window's footprint (t - 1) * stride +
        extent (the tile and its halo), at most the input."""
        if t >= dims[self.out_dim]:
            return dims[self.in_dim]
        return min(dims[self.in_dim], (t - 1) * self.stride + self.extent(dims))

    def span(self, dims: Sequence[int], first: int, t: int) -> tuple[int, int, int, int]:
        """(input start, input size, pad before, pad after) of the output
        positions [first, first + t): the footprint clipped to the input (the
        padding is not stored) and the padding the clipping leaves on each
        side, so that the tile is again a window op with `t` outputs. The
        whole output keeps the whole input and the op's own pads."""
        n_in = dims[self.in_dim]
        if first == 0 and t >= dims[self.out_dim]:
            return 0, n_in, self.pad_before, self.pad_after
        start = first * self.stride - self.pad_before
        end = start + (t - 1) * self.stride + self.extent(dims)
        lo, hi = max(0, start), min(n_in, end)
        return lo, hi - lo, lo - start, end - hi


def _i64s(*vals: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(vals))


def _ints(arr: DenseArrayBase, name: str, meaning: str, positive: bool) -> tuple[int, ...]:
    """The values of an i64 array property, with its count and sign checked;
    `meaning` names the values ("height, width")."""
    vals = tuple(int(v) for v in arr.get_values())  # pyright: ignore[reportAttributeAccessIssue]
    want = len(meaning.split(", "))
    if len(vals) != want:
        raise VerifyException(f"{name} must have {want} values ({meaning}), got {len(vals)}")
    if any(v < (1 if positive else 0) for v in vals):
        sign = "positive" if positive else "non-negative"
        raise VerifyException(f"{name} must be {sign}, got {list(vals)}")
    return vals


def _rank4(shape: Sequence[int], what: str, layout: str) -> tuple[int, int, int, int]:
    if len(shape) != 4:
        raise VerifyException(f"{what} must be rank 4 [{layout}], got {fmt_shape(shape)}")
    return shape[0], shape[1], shape[2], shape[3]


AXES = ("height", "width")


def _check_dy(dy: Sequence[int], forward: Sequence[int], how: str) -> None:
    """A gradient op's dY has the shape of its forward's output (`forward`,
    which `how` gives)."""
    if tuple(dy) != tuple(forward):
        raise VerifyException(f"dY has shape {fmt_shape(dy)} but {how} gives {fmt_shape(forward)}")


@dataclass(frozen=True)
class Window2d:
    """A 2-D sliding window: kernel size, strides, pads (top, left, bottom,
    right: ONNX's order) and dilations. Input row of output row o and kernel
    tap k: o * stride + k * dilation - pad_top (rows outside the input read
    the padding)."""

    kernel: tuple[int, int]
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilations: tuple[int, int]

    def extent(self, axis: int) -> int:
        return (self.kernel[axis] - 1) * self.dilations[axis] + 1

    def tileable(self, axis: int) -> bool:
        """Whether the output may tile along `axis` (spatial tiles with halos):
        when each pad is smaller than the window's extent every window reads
        some input, so every tile's input is at least one row (column)."""
        ext = self.extent(axis)
        return self.pads[axis] < ext and self.pads[axis + 2] < ext

    def spatial_whole(self, out_dims: tuple[int, int], in_dims: tuple[int, int]) -> set[int]:
        """The output and input dims of the axes that may not tile."""
        return {d for a in (0, 1) if not self.tileable(a) for d in (out_dims[a], in_dims[a])}

    def out_size(self, hw: tuple[int, int]) -> tuple[int, int]:
        """Output size over an input of size hw (floor division, ONNX's
        ceil_mode = 0); raises when the kernel does not fit the padded input."""
        out: list[int] = []
        for a in (0, 1):
            padded = hw[a] + self.pads[a] + self.pads[a + 2]
            if padded < self.extent(a):
                raise VerifyException(
                    f"the kernel's {AXES[a]} extent {self.extent(a)} (kernel {self.kernel[a]}, "
                    f"dilation {self.dilations[a]}) exceeds the padded input {AXES[a]} {padded} "
                    f"(input {hw[a]}, pads {self.pads[a]} + {self.pads[a + 2]})"
                )
            out.append((padded - self.extent(a)) // self.strides[a] + 1)
        return out[0], out[1]

    def check_windows_overlap(self, hw: tuple[int, int], out: tuple[int, int]) -> None:
        """Pooling: every window must read at least one input element (as
        onnxruntime requires pads smaller than the kernel)."""
        for a in (0, 1):
            for o in range(out[a]):
                start = o * self.strides[a] - self.pads[a]
                taps = (start + k * self.dilations[a] for k in range(self.kernel[a]))
                if not any(0 <= t < hw[a] for t in taps):
                    raise VerifyException(
                        f"pooling window {o} along the {AXES[a]} reads only padding (input "
                        f"{hw[a]}, kernel {self.kernel[a]}, stride {self.strides[a]}, dilation "
                        f"{self.dilations[a]}, pads {self.pads[a]} + {self.pads[a + 2]}): every "
                        "window must overlap the input"
                    )

    def sliding(
        self, out_dims: tuple[int, int], tap_dims: tuple[int, int], in_dims: tuple[int, int]
    ) -> tuple[SlidingWindow, ...]:
        return tuple(
            SlidingWindow(
                out_dims[a],
                tap_dims[a],
                in_dims[a],
                self.strides[a],
                self.dilations[a],
                self.pads[a],
                self.pads[a + 2],
            )
            for a in (0, 1)
        )
