"""Property tests of the DMA layer: random rank-N (transposing) copies between
levels, decomposed for every engine, move exactly the bytes of the original
copy (interpreted: every sub-copy lands at a wait), every sub-copy is one
transfer its engine accepts, and the canonical access pattern of a copy
covers exactly the box's bytes. Large copies (runs of up to 64 KiB, up to
640 KiB in all) exercise mchan's size limits: every cluster-DMA sub-copy is
checked against the limits pulp-sdk states (a 1-D size and a 2-D row length
fit 16 bits, a 2-D size mchan_v7's 17-bit length field), written out here
rather than read from the engine attribute."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, StringAttr, f32
from xdsl.interpreter import Interpreter
from xdsl.ir import Block, Region

from deeploy_mlir.dialects import dma
from deeploy_mlir.interp.interpreter import TrainingFunctions
from deeploy_mlir.passes.dma_decompose import DmaDecompose
from deeploy_mlir.pipeline import make_context

HOPS = {"mchan": ("L2", "L1"), "pulp-open-ram": ("L3", "L2"), "gap9-ram": ("L3", "L2")}


@st.composite
def copies(
    draw: st.DrawFn,
) -> tuple[list[int], list[int], list[int], list[int], list[int], str, bool]:
    rank = draw(st.integers(1, 4))
    box = [draw(st.integers(1, 4)) for _ in range(rank)]
    src_shape = [b + draw(st.integers(0, 2)) for b in box]
    src_off = [draw(st.integers(0, s - b)) for s, b in zip(src_shape, box, strict=True)]
    perm = draw(st.permutations(list(range(rank))))
    dst_box = [0] * rank
    for k, p in enumerate(perm):
        dst_box[p] = box[k]
    dst_shape = [b + draw(st.integers(0, 2)) for b in dst_box]
    dst_off = [draw(st.integers(0, s - b)) for s, b in zip(dst_shape, dst_box, strict=True)]
    engine = draw(st.sampled_from(sorted(HOPS)))
    inward = draw(st.booleans())
    return box, src_shape, src_off, perm, dst_shape + dst_off, engine, inward


@st.composite
def large_copies(
    draw: st.DrawFn,
) -> tuple[list[int], list[int], list[int], list[int], list[int], str, bool]:
    """Rank 2-3 boxes (no transpose) with rows of up to 16383 floats (65532
    bytes), often whole rows (merged into one run of up to 5 x 64 KiB)."""
    rank = draw(st.integers(2, 3))
    inner = draw(st.sampled_from([1, 5, 4096, 8192, 12000, 16383]))
    box = [draw(st.integers(1, 5)) for _ in range(rank - 1)] + [inner]
    src_shape = [b + draw(st.sampled_from([0, 0, 1])) for b in box]
    src_off = [draw(st.integers(0, s - b)) for s, b in zip(src_shape, box, strict=True)]
    dst_shape = [b + draw(st.sampled_from([0, 0, 1])) for b in box]
    dst_off = [draw(st.integers(0, s - b)) for s, b in zip(dst_shape, box, strict=True)]
    engine = draw(st.sampled_from(["mchan", "mchan", "gap9-ram", "pulp-open-ram"]))
    inward = draw(st.booleans())
    return box, src_shape, src_off, list(range(rank)), dst_shape + dst_off, engine, inward


def _rows(n: int, floats: int, pad: int) -> tuple:
    """n rows of `floats` floats of an L2 tensor with `pad` more per row, into
    a whole L1 tile: 1-D when pad = 0 (one run of n * floats * 4 bytes)."""
    return ([n, floats], [n, floats + pad], [0, 0], [0, 1], [n, floats, 0, 0], "mchan", True)


#: mchan's limits as pulp-sdk states them (rtos/pulpos/common/include/pos/
#: implem/dma.h: unsigned short 1-D size and 2-D row length; archi/dma/
#: mchan_v7.h: MCHAN_CMD_CMD_LEN_WIDTH 17 for the 2-D size)
MCHAN_1D, MCHAN_ROW, MCHAN_2D = 65535, 65535, 131071


def _mchan_fits(sub: dma.CopyOp) -> bool:
    dims = sub.pattern()
    if len(dims) == 1:
        return sub.bytes() <= MCHAN_1D
    return dma.copy_rank(dims) == 2 and dims[-1].count <= MCHAN_ROW and sub.bytes() <= MCHAN_2D


def _module(box, src_shape, src_off, perm, dst_shape, dst_off, src_lv, dst_lv):
    st_ = MemRefType(f32, src_shape, memory_space=StringAttr(src_lv))
    dt = MemRefType(f32, dst_shape, memory_space=StringAttr(dst_lv))
    block = Block(arg_types=[st_, dt])
    b = Builder(InsertPoint.at_end(block))

    def idx(v: int):
        return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result

    so = [idx(v) for v in src_off]
    do = [idx(v) for v in dst_off]
    c = b.insert(dma.CopyOp(block.args[0], so, block.args[1], do, box, perm))
    b.insert(dma.WaitOp(c.token))
    b.insert(func.ReturnOp())
    fn = func.FuncOp("f", ([st_, dt], []), Region(block))
    return ModuleOp([fn])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(copies())
def test_decomposed_copies_move_the_same_bytes(c) -> None:
    _check_decomposition(c)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(large_copies())
# the limits' edges: 1-D 65532 (one copy) and 65536 bytes (split); 2-D
# 65536, 98304 and 131064 bytes in rows of 32768 or 65532 (one copy each) and
# 131072 bytes (split)
@example(_rows(1, 16383, 0))
@example(_rows(2, 8192, 0))
@example(_rows(2, 8192, 1))
@example(_rows(3, 8192, 1))
@example(_rows(2, 16383, 1))
@example(_rows(4, 8192, 1))
def test_large_decomposed_copies_fit_the_sdk_limits_and_move_the_same_bytes(c) -> None:
    subs = _check_decomposition(c)
    if c[5] == "mchan":
        assert all(_mchan_fits(s) for s in subs)
        # and no more sub-copies than needed: the copy itself when it fits
        whole = _module(*_split(c))
        (one,) = [o for o in whole.walk() if isinstance(o, dma.CopyOp)]
        if _mchan_fits(one):
            assert [s.box for s in subs] == [c[0]]


def _split(c) -> tuple:
    box, src_shape, src_off, perm, dst_rest, engine, inward = c
    rank = len(box)
    ext, loc = HOPS[engine]
    src_lv, dst_lv = (ext, loc) if inward else (loc, ext)
    return box, src_shape, src_off, perm, dst_rest[:rank], dst_rest[rank:], src_lv, dst_lv


def _check_decomposition(c) -> list[dma.CopyOp]:
    """Decompose the copy `c` for its engine, check every sub-copy is legal for
    it, interpret, and compare the destination with numpy; the sub-copies."""
    box, src_shape, src_off, perm, dst_rest, engine, inward = c
    rank = len(box)
    dst_shape, dst_off = dst_rest[:rank], dst_rest[rank:]
    ext, loc = HOPS[engine]
    src_lv, dst_lv = (ext, loc) if inward else (loc, ext)
    module = _module(box, src_shape, src_off, perm, dst_shape, dst_off, src_lv, dst_lv)
    module.verify()
    DmaDecompose(engine=engine).apply(make_context(), module)
    module.verify()  # every sub-copy carries its engine and is legal for it
    subs = [o for o in module.walk() if isinstance(o, dma.CopyOp)]
    eng = dma.ENGINES[engine]
    for s in subs:
        assert s.engine == eng and s.legality(eng) is None
    rng = np.random.default_rng(len(box) * 7 + sum(src_shape))
    src = rng.standard_normal(src_shape).astype(np.float32)
    dst = np.full(dst_shape, np.nan, dtype=np.float32)
    want = dst.copy()
    sbox = tuple(slice(o, o + n) for o, n in zip(src_off, box, strict=True))
    dbox_sizes = [0] * rank
    for k, p in enumerate(perm):
        dbox_sizes[p] = box[k]
    dbox = tuple(slice(o, o + n) for o, n in zip(dst_off, dbox_sizes, strict=True))
    want[dbox] = np.transpose(src[sbox], tuple(int(k) for k in np.argsort(perm)))
    interp = Interpreter(module)
    interp.register_implementations(TrainingFunctions())
    from xdsl.interpreters.arith import ArithFunctions
    from xdsl.interpreters.func import FuncFunctions
    from xdsl.interpreters.scf import ScfFunctions

    for f in (ArithFunctions(), FuncFunctions(), ScfFunctions()):
        interp.register_implementations(f)
    interp.call_op("f", (src, dst))
    np.testing.assert_array_equal(dst, want)  # NaN where nothing was written
    return subs


@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=4),
    st.integers(0, 2),
    st.sampled_from([1, 2, 4, 8]),
)
def test_canonical_pattern_covers_the_box(box: list[int], pad: int, elem: int) -> None:
    """The canonical dims enumerate exactly box-size x element bytes, each once."""
    ext_shape = [b + pad for b in box]
    ext = dma.contiguous_strides(ext_shape)
    loc = dma.contiguous_strides(box)
    dims = dma.canonical_dims(box, ext, loc, elem)
    assert math.prod(d.count for d in dims) == math.prod(box) * elem
    assert dims[-1].ext == 1 and dims[-1].loc == 1
    # the loc side is read in order: its offsets enumerate 0..n-1
    offs = [0]
    for d in reversed(dims):
        offs = [i * d.loc + o for i in range(d.count) for o in offs]
    assert sorted(offs) == list(range(math.prod(box) * elem))
    if pad == 0:  # the whole tensor: one contiguous run on both sides
        assert dma.copy_rank(dims) == 1 and len(dims) == 1
    elif box[-1] > 1 and sum(b > 1 for b in box) >= 2:
        # rows of the last dim, strided on the ext side: at least rank 2
        assert dma.copy_rank(dims) >= 2
