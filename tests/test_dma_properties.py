"""Property tests of the DMA layer: random rank-N (transposing) copies between
levels, decomposed for every engine, move exactly the bytes of the original
copy (interpreted: every sub-copy lands at a wait), every sub-copy is one
transfer its engine accepts, and the canonical access pattern of a copy
covers exactly the box's bytes."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
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
