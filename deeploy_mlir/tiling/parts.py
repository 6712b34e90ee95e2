"""How a tiled dim splits into parts, each a run of equal tiles: n // t full
tiles and one ragged remainder of n % t (`parts`); a window's output dim into
runs of tiles whose output size, input size and pads agree (`window_parts`:
usually the first, the interior and the last tiles). tiling-materialize makes
one tile loop per combination of parts, and tile-select's objective scores
each of those loops (tiling/model.py).

A library module: it imports the training dialect only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deeploy_mlir.dialects import training as T


@dataclass(frozen=True)
class Part:
    base: int  # offset of the first tile
    size: int  # tile size
    count: int  # number of tiles
    #: distance between tiles (0: the size); an input dim with a halo steps
    #: by its output tile times the stride
    step: int = 0
    #: the input dim of a window: the output dim whose tile index it follows
    tie: int | None = None
    #: the input dim of a window: the padding its tiles leave (before, after)
    pads: tuple[int, int] | None = None

    @property
    def stride(self) -> int:
        return self.step or self.size


def parts(n: int, t: int) -> list[Part]:
    full, rem = divmod(n, t)
    out = [Part(0, t, full)] if full else []
    if rem:
        out.append(Part(full * t, rem, 1))
    return out


def window_parts(w: T.SlidingWindow, dims: Sequence[int], t: int) -> list[tuple[Part, Part]]:
    """The (output, input) parts of a window's dims for output tiles of `t`:
    runs of tiles whose output size, input size and pads agree (the first and
    last tiles, clipped at the borders, usually differ from the interior ones).
    Output tiles are disjoint; input tiles overlap by the halo."""
    n = dims[w.out_dim]
    out: list[tuple[Part, Part]] = []
    for first in range(0, n, t):
        size = min(t, n - first)
        lo, rows, before, after = w.span(dims, first, size)
        if out:
            op, ip = out[-1]
            if (
                (op.size, ip.size, ip.pads) == (size, rows, (before, after))
                and first == op.base + op.count * op.size
                and lo == ip.base + ip.count * t * w.stride
            ):
                out[-1] = (
                    Part(op.base, size, op.count + 1),
                    Part(ip.base, rows, ip.count + 1, t * w.stride, w.out_dim, ip.pads),
                )
                continue
        out.append(
            (
                Part(first, size, 1),
                Part(lo, rows, 1, t * w.stride, w.out_dim, (before, after)),
            )
        )
    return out
