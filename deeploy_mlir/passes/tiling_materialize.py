"""tiling-materialize: `tiling.tiled` -> loops over tiles with copies.

Shapes stay static everywhere: each tiled dim of size n with tile t splits
into a part of n // t full tiles and, when t does not divide n, one ragged
remainder tile of n % t. Every combination of parts gets its own loop nest
(`scf.for` over the full tiles of each dim) with its own static tile buffers
in the tile level (`memref.alloc` before the nest), so the compute op inside
keeps static shapes and its verifier holds. Per tile: `dma.copy` of every
input tile in, the compute op on the tile buffers, `dma.copy` of every output
tile out. Tile offsets are `arith` index arithmetic on the loop variables.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.tiling import TiledOp
from deeploy_mlir.passes.tile_select import map_dims


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
        offsets: list[SSAValue | int] = []
        for p in variant:
            if p.count == 1:
                offsets.append(p.base)
                continue
            lb, ub, one = _index(b, 0), _index(b, p.count), _index(b, 1)
            end = scf.YieldOp()
            body = Block([end], arg_types=[IndexType()])
            loop = b.insert(scf.ForOp(lb, ub, one, [], Region(body)))
            b = Builder(InsertPoint.before(end))
            iv = loop.body.block.args[0]
            size = _index(b, p.size)
            off = b.insert(arith.MuliOp(iv, size)).result
            if p.base:
                off = b.insert(arith.AddiOp(off, _index(b, p.base))).result
            offsets.append(off)
        consts: dict[int, SSAValue] = {}

        def offset_values(dims: tuple[int | None, ...]) -> list[SSAValue]:
            out: list[SSAValue] = []
            for d in dims:
                o = 0 if d is None else offsets[d]
                if isinstance(o, int):
                    if o not in consts:
                        consts[o] = _index(b, o)
                    o = consts[o]
                out.append(o)
            return out

        copied_in: set[SSAValue] = set()
        for v, dims in zip(values[:n_in], dims_of[:n_in], strict=True):
            tile = bufs[(v, dims)]
            if tile in copied_in:
                continue
            copied_in.add(tile)
            b.insert(dma.CopyOp(v, tile, offset_values(dims), "in"))
        ins = [bufs[(v, d)] for v, d in zip(values[:n_in], dims_of[:n_in], strict=True)]
        outs = [bufs[(v, d)] for v, d in zip(values[n_in:], dims_of[n_in:], strict=True)]
        props = {k: p for k, p in inner.properties.items() if k != "operandSegmentSizes"}
        b.insert(type(inner)(ins, (), outs, properties=props))
        for v, dims in zip(values[n_in:], dims_of[n_in:], strict=True):
            b.insert(dma.CopyOp(bufs[(v, dims)], v, offset_values(dims), "out"))
