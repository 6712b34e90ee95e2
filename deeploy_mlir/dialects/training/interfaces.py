"""The op interfaces of the training dialect: `AliasingInterface` (which result
may reuse which operand's storage; state updates) and `IterationSpaceInterface`
(loop dims and one affine map per operand, linalg-style).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.ir.affine import AffineExpr, AffineMap

from deeploy_mlir.dialects.training.window import SlidingWindow

# --------------------------------------------------------------------------
# Interfaces
# --------------------------------------------------------------------------


class AliasingInterface(ABC):
    """Which results may share which operand's storage."""

    #: True for ops whose result is the new value of their first operand
    #: (SGD, gradient accumulation): bufferization writes them in place.
    STATE_UPDATE: ClassVar[bool] = False
    #: True for ops whose result 0 may be a view of operand 0 (the same bytes
    #: under another shape: reshapes; see view.ViewAliasing): sharing then
    #: replaces the op, and the operand may still be read after it
    VIEW: ClassVar[bool] = False

    @abstractmethod
    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        """(result index, operand index) pairs: the result may be written into
        the operand's buffer when the operand dies at this op."""


@dataclass(frozen=True)
class IterationSpace:
    """Loop dims of an op, one affine map per operand (ins, then results) from
    the loop dims to the operand's indices, and the dims that must stay whole."""

    dims: tuple[int, ...]
    maps: tuple[AffineMap, ...]
    whole: frozenset[int]
    reduction: frozenset[int] = frozenset()
    #: sliding windows (conv, pooling): how an input position follows from an
    #: output position and a kernel tap; see `SlidingWindow`
    windows: tuple[SlidingWindow, ...] = ()
    #: reduction dims that may tile all the same: the op's kernel can add into
    #: its outputs (the `accumulate` property), so the tiles along such a dim
    #: run in order, the first writing the outputs that do not index it and
    #: the others adding to them. Each output indexes every one of these dims
    #: or none of them.
    accumulate: frozenset[int] = frozenset()
    #: inputs the kernels do not read (their shape only makes the op's
    #: geometry), each with the output whose tile has the same shape and
    #: stands in for it in a tile: no copy, no buffer of its own
    unread: tuple[tuple[int, int], ...] = ()

    def tiled_windows(self) -> tuple[SlidingWindow, ...]:
        """The windows whose output dim may tile (it is neither whole nor a
        reduction dim, or a reduction dim that accumulates): their input dim
        is then not free but follows from the output tile
        (`SlidingWindow.in_tile`, the tile plus its halo)."""
        fixed = self.whole | (self.reduction - self.accumulate)
        return tuple(w for w in self.windows if w.out_dim not in fixed)


class IterationSpaceInterface(ABC):
    @abstractmethod
    def iteration_space(self) -> IterationSpace: ...


def _dims_map(n: int, idx: Sequence[int | None]) -> AffineMap:
    """Map from n loop dims to the listed dims (None = constant 0)."""
    exprs: list[AffineExpr] = [
        AffineExpr.constant(0) if i is None else AffineExpr.dimension(i) for i in idx
    ]
    return AffineMap(n, 0, tuple(exprs))


def _broadcast_map(out_shape: Sequence[int], shape: Sequence[int]) -> AffineMap:
    r = len(out_shape)
    off = r - len(shape)
    return _dims_map(
        r,
        [None if shape[i] == 1 and out_shape[i + off] != 1 else i + off for i in range(len(shape))],
    )


class StateUpdate(AliasingInterface):
    STATE_UPDATE: ClassVar[bool] = True

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return [(0, 0)]


class NoAliasing(AliasingInterface):
    """No result may share an input's storage: a window reads input elements
    after the outputs that overlap them are written."""

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return []
