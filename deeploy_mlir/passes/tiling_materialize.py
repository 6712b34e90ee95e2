"""tiling-materialize: `tiling.tiled` -> loops over tiles with copies.

Shapes stay static everywhere: each tiled dim of size n with tile t splits
into a part of n // t full tiles and, when t does not divide n, one ragged
remainder tile of n % t. Every combination of parts gets its own loop
with its own static tile buffers
in the tile level (`memref.alloc` before the nest), so the compute op inside
keeps static shapes and its verifier holds. The tiles of a variant are one
`scf.for` (marked `tiling.tile_loop`) whose index splits into the per-dim tile
indices (`arith.divui`/`remui`). Per tile: a `dma.copy` of every input tile
in, the waits for them, the compute op on the tile buffers, a `dma.copy` of
every output tile out and the waits for those (single buffering;
`dma-multibuffer` overlaps them across tiles).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.tiling import TiledOp
from deeploy_mlir.passes.tile_select import map_dims

#: marks the loop over the tiles of one op (what dma-multibuffer works on)
TILE_LOOP = "tiling.tile_loop"


@dataclass(frozen=True)
class Part:
    base: int  # offset of the first tile
    size: int  # tile size
    count: int  # number of tiles


def parts(n: int, t: int) -> list[Part]:
    full, rem = divmod(n, t)
    out = [Part(0, t, full)] if full else []
    if rem:
        out.append(Part(full * t, rem, 1))
    return out


def _index(b: Builder, v: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result


def _tile_loop(b: Builder, variant: tuple[Part, ...]) -> tuple[Builder, list[SSAValue | int]]:
    """One loop over all tiles of the variant (none for a single tile), its
    index split into the per-dim tile offsets. Returns a builder inside the
    loop and the offset of each dim (an int where it is constant)."""
    looped = [d for d, p in enumerate(variant) if p.count > 1]
    total = 1
    for d in looped:
        total *= variant[d].count
    offsets: list[SSAValue | int] = [p.base for p in variant]
    if not looped:
        return b, offsets
    lb, ub, one = _index(b, 0), _index(b, total), _index(b, 1)
    end = scf.YieldOp()
    body = Block([end], arg_types=[IndexType()])
    loop = b.insert(scf.ForOp(lb, ub, one, [], Region(body)))
    loop.attributes[TILE_LOOP] = UnitAttr()
    b = Builder(InsertPoint.before(end))
    iv: SSAValue = body.args[0]
    inner_count = 1
    for d in reversed(looped):
        p = variant[d]
        idx = iv
        if inner_count > 1:
            idx = b.insert(arith.DivUIOp(idx, _index(b, inner_count))).result
        if inner_count * p.count < total:
            idx = b.insert(arith.RemUIOp(idx, _index(b, p.count))).result
        off = b.insert(arith.MuliOp(idx, _index(b, p.size))).result
        if p.base:
            off = b.insert(arith.AddiOp(off, _index(b, p.base))).result
        offsets[d] = off
        inner_count *= p.count
    return b, offsets


@dataclass(frozen=True)
class TilingMaterialize(ModulePass):
    name = "tiling-materialize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for tiled in [o for o in op.walk() if isinstance(o, TiledOp)]:
            self._materialize(tiled)

    def _materialize(self, tiled: TiledOp) -> None:
        inner = tiled.inner
        assert isinstance(inner, T.IterationSpaceInterface)
        space = inner.iteration_space()
        level = StringAttr(tiled.level.data)
        values = [*inner.ins, *inner.outs]
        n_in = len(inner.ins)
        dims_of = [map_dims(m) for m in space.maps]
        per_dim = [parts(n, t) for n, t in zip(space.dims, tiled.tile_sizes(), strict=True)]
        outer = Builder(InsertPoint.before(tiled))
        for variant in itertools.product(*per_dim):
            sizes = [p.size for p in variant]
            # one tile buffer per distinct (value, index map)
            bufs: dict[tuple[SSAValue, tuple[int | None, ...]], SSAValue] = {}
            for v, dims in zip(values, dims_of, strict=True):
                if (v, dims) in bufs:
                    continue
                t = v.type
                assert isinstance(t, MemRefType)
                shape = [1 if d is None else sizes[d] for d in dims]
                alloc = outer.insert(
                    memref.AllocOp(
                        [], [], MemRefType(t.get_element_type(), shape, memory_space=level)
                    )
                )
                alloc.memref.name_hint = f"{v.name_hint or 't'}_tile"
                bufs[(v, dims)] = alloc.memref
            self._nest(outer, variant, inner, values, dims_of, n_in, bufs)
        Rewriter.erase_op(tiled)

    def _nest(
        self,
        b: Builder,
        variant: tuple[Part, ...],
        inner: T.TrainingComputeOp,
        values: list[SSAValue],
        dims_of: list[tuple[int | None, ...]],
        n_in: int,
        bufs: dict[tuple[SSAValue, tuple[int | None, ...]], SSAValue],
    ) -> None:
        b, offsets = _tile_loop(b, variant)
        consts: dict[int, SSAValue] = {}

        def const(v: int) -> SSAValue:
            if v not in consts:
                consts[v] = _index(b, v)
            return consts[v]

        def offset_values(dims: tuple[int | None, ...]) -> list[SSAValue]:
            out: list[SSAValue] = []
            for d in dims:
                o = 0 if d is None else offsets[d]
                out.append(const(o) if isinstance(o, int) else o)
            return out

        def tile_shape(tile: SSAValue) -> list[int]:
            return list(T.shape_of(tile.type))

        tokens: list[SSAValue] = []
        copied_in: set[SSAValue] = set()
        for v, dims in zip(values[:n_in], dims_of[:n_in], strict=True):
            tile = bufs[(v, dims)]
            if tile in copied_in:
                continue
            copied_in.add(tile)
            zeros = [const(0)] * len(tile_shape(tile))
            c = b.insert(dma.CopyOp(v, offset_values(dims), tile, zeros, tile_shape(tile)))
            c.token.name_hint = f"{v.name_hint or 't'}_in"
            tokens.append(c.token)
        for t in tokens:
            b.insert(dma.WaitOp(t))
        ins = [bufs[(v, d)] for v, d in zip(values[:n_in], dims_of[:n_in], strict=True)]
        outs = [bufs[(v, d)] for v, d in zip(values[n_in:], dims_of[n_in:], strict=True)]
        props = {k: p for k, p in inner.properties.items() if k != "operandSegmentSizes"}
        b.insert(type(inner)(ins, (), outs, properties=props))
        tokens = []
        for v, dims in zip(values[n_in:], dims_of[n_in:], strict=True):
            tile = bufs[(v, dims)]
            zeros = [const(0)] * len(tile_shape(tile))
            c = b.insert(dma.CopyOp(tile, zeros, v, offset_values(dims), tile_shape(tile)))
            c.token.name_hint = f"{v.name_hint or 't'}_out"
            tokens.append(c.token)
        for t in tokens:
            b.insert(dma.WaitOp(t))
