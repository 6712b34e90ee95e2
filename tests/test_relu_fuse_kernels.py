"""relu-fuse's kernel fields against the unfused kernels, bit for bit, on the
host build of runtime_c (1 and 8 cores, and an uneven team of 3):

* dm_conv2d_fp32 with `relu` gives the bits of dm_conv2d_fp32 followed by
  dm_relu_fp32, on every path (the general one with blocks of 4 and of 1
  channel, strided, grouped, pointwise; the depthwise fast path), with
  NaNs, infinities and signed zeros among the inputs;
* dm_maxpool2d_fp32 with `relu_mask` keeps Y and marks -1 exactly the
  indices whose Y is not > 0 (the header's rule, written here in numpy),
  and dm_maxpool2d_grad_fp32 on those indices gives the bits of
  dm_relu_grad_fp32(dm_maxpool2d_grad_fp32(dY, indices), X) -- the pair
  relu-fuse replaces -- on the 2x2, 3x3 and general paths and on a tile
  whose indices count in a larger frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from c_structs import mirror
from kernel_harness import Guarded, KernelLib, kernel_library, p

RNG = np.random.default_rng(1919)

Conv = mirror("dm_conv2d_args_t")
Pool = mirror("dm_pool2d_args_t")
PoolGrad = mirror("dm_pool2d_grad_args_t")
Unary = mirror("dm_unary_args_t")
ReluGrad = mirror("dm_relu_grad_args_t")
STRUCTS = [Conv, Pool, PoolGrad, Unary, ReluGrad]


@pytest.fixture(scope="module", params=[1, 8], ids=["cores1", "cores8"])
def lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> KernelLib:
    cores = request.param
    d: Path = tmp_path_factory.mktemp(f"relufuse{cores}")
    kernels = ["conv.c", "pool.c", "elementwise.c"]
    return KernelLib(kernel_library(d, "relufuse", cores, kernels, STRUCTS), cores)


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32)


def special(shape: tuple[int, ...], kind: str) -> np.ndarray:
    """Random floats; "ties": -0, +0, 1, -1 only; "nan": NaNs and infinities."""
    x = RNG.standard_normal(shape).astype(np.float32)
    if kind == "ties":
        x = np.choose(RNG.integers(0, 4, shape), [np.float32(-0.0), np.float32(0.0), 1.0, -1.0])
        x = x.astype(np.float32)
    elif kind == "nan":
        m = RNG.random(shape)
        x[m < 0.05] = np.nan
        x[(m >= 0.05) & (m < 0.08)] = np.inf
        x[(m >= 0.08) & (m < 0.11)] = -np.inf
    return x


# ---------------------------------------------------------------- conv2d relu

#: (n, c, h, w, m, groups, k, stride, pad): the general path (blocks of 4
#: channels and of 1, strided, grouped, pointwise, edge columns) and the
#: depthwise fast path (groups = c = m, 3x3, stride 1, pad 1, w >= 8)
CONVS = [
    (2, 3, 8, 8, 16, 1, 3, 1, 1),  # the CCT tokenizer's kind
    (1, 4, 9, 7, 6, 1, 3, 2, 1),  # strided, 6 = a block of 4 and two of 1
    (2, 4, 5, 6, 5, 1, 1, 1, 0),  # pointwise
    (1, 4, 7, 7, 6, 2, 3, 1, 0),  # grouped, no padding
    (2, 5, 6, 10, 5, 5, 3, 1, 1),  # depthwise fast path
    (1, 3, 4, 4, 3, 3, 3, 2, 1),  # depthwise, general path (stride 2)
]


@pytest.mark.parametrize("kind", ["rand", "nan"])
@pytest.mark.parametrize(
    "case", CONVS, ids=[f"{c[1]}to{c[4]}-g{c[5]}k{c[6]}s{c[7]}" for c in CONVS]
)
def test_conv_relu_is_conv_then_relu(lib: KernelLib, case: tuple[int, ...], kind: str) -> None:
    n, c, h, w, m, groups, k, s, pad = case
    oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    x = special((n, c, h, w), kind)
    wt = RNG.standard_normal((m, c // groups, k, k)).astype(np.float32)
    b = RNG.standard_normal(m).astype(np.float32)
    b[::2] = -0.0
    geom = [n, c, h, w, m, k, k, oh, ow, groups, s, s, 1, 1, pad, pad]
    size = n * m * oh * ow
    for team in lib.teams():
        for bias in (b, None):
            y = Guarded((n, m, oh, ow))
            lib.run("dm_conv2d_fp32", Conv(p(x), p(wt), p(bias), y.ptr, *geom, 0), team)
            plain = y.check().copy()
            want = Guarded((n, m, oh, ow))
            lib.run("dm_relu_fp32", Unary(p(plain), want.ptr, size), team)
            fused = Guarded((n, m, oh, ow))
            lib.run("dm_conv2d_fp32", Conv(p(x), p(wt), p(bias), fused.ptr, *geom, 1), team)
            np.testing.assert_array_equal(bits(fused.check()), bits(want.check()))
            # and the header's rule, x > 0 ? x : +0, from numpy
            with np.errstate(invalid="ignore"):
                rule = np.where(plain > 0, plain, np.float32(0.0)).astype(np.float32)
            np.testing.assert_array_equal(bits(fused.arr), bits(rule))
            # both sides of the mask taken (with NaN inputs every sum may be
            # NaN, depending on where the NaNs fell: then NaN's side)
            if kind == "rand":
                assert (plain <= 0).any() and (plain > 0).any()
            else:
                assert np.isnan(plain).any()


# ---------------------------------------------------------------- maxpool relu_mask

#: (planes, h, w, k, stride, pad): the 2x2 path, the 3x3 path, the general one
POOLS = [
    (3, 8, 6, 2, 2, 0),
    (5, 9, 7, 3, 2, 1),  # the CCT's kind
    (4, 8, 8, 3, 2, 1),
    (2, 7, 9, 2, 1, 1),  # general
    (9, 6, 5, 4, 2, 1),  # general, more planes than cores
]


@pytest.mark.parametrize("kind", ["rand", "ties", "nan"])
@pytest.mark.parametrize("case", POOLS, ids=[f"{c[0]}x{c[1]}x{c[2]}-k{c[3]}s{c[4]}" for c in POOLS])
def test_maxpool_relu_mask_drops_what_relu_grad_zeroes(
    lib: KernelLib, case: tuple[int, ...], kind: str
) -> None:
    planes, h, w, k, s, pad = case
    out = ((h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1)
    x = special((planes, h, w), kind)
    if kind != "ties":  # windows whose max is <= 0, too
        x = (x - np.float32(1.2)).astype(np.float32)
    x[0] = -np.abs(x[0])  # a plane of windows none of which is > 0 (-0, +0 and NaN kept)
    geom = [planes, h, w, *out, k, k, s, s, 1, 1, pad, pad, 0]
    dy = RNG.standard_normal((planes, *out)).astype(np.float32)
    dy[:, ::2, ::3] = -0.0
    for team in lib.teams():
        y, idx = Guarded((planes, *out)), Guarded((planes, *out), np.int64)
        lib.run("dm_maxpool2d_fp32", Pool(p(x), y.ptr, idx.ptr, *geom), team)
        ym, im = Guarded((planes, *out)), Guarded((planes, *out), np.int64)
        args = Pool(p(x), ym.ptr, im.ptr, *geom, relu_mask=1)
        lib.run("dm_maxpool2d_fp32", args, team)
        np.testing.assert_array_equal(bits(ym.check()), bits(y.check()))
        with np.errstate(invalid="ignore"):
            rule = np.where(y.arr > 0, idx.check(), np.int64(-1))
        np.testing.assert_array_equal(im.check(), rule)
        # the unfused pair: maxpool_grad on the plain indices, then relu_grad with X's mask
        d = Guarded((planes, h, w))
        lib.run("dm_maxpool2d_grad_fp32", PoolGrad(p(dy), p(idx.arr), d.ptr, *geom), team)
        d_plain = d.check().copy()
        want = Guarded((planes, h, w))
        lib.run("dm_relu_grad_fp32", ReluGrad(p(d_plain), p(x), want.ptr, x.size), team)
        got = Guarded((planes, h, w))
        lib.run("dm_maxpool2d_grad_fp32", PoolGrad(p(dy), p(im.arr), got.ptr, *geom), team)
        np.testing.assert_array_equal(bits(got.check()), bits(want.check()))
        assert (rule < 0).any() and (rule >= 0).any()  # some indices dropped, some kept


def test_maxpool_relu_mask_on_a_tile(lib: KernelLib) -> None:
    """A tile (channels 2..4, rows 3.., columns 5.. of a 6-channel 20x19
    input): indices count in the frame, and the masked ones are -1."""
    tch, fc, fh, fw, oc, orh, orw = 3, 6, 20, 19, 2, 3, 5
    h, w, k, s, pad = 9, 10, 3, 2, 1
    out = ((h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1)
    x = special((2 * tch, h, w), "ties")
    geom = [2 * tch, h, w, *out, k, k, s, s, 1, 1, pad, pad, 0]
    frame = [tch, fc, fh, fw, 0, oc, orh, orw]
    for team in lib.teams():
        y, idx = Guarded((2 * tch, *out)), Guarded((2 * tch, *out), np.int64)
        lib.run("dm_maxpool2d_fp32", Pool(p(x), y.ptr, idx.ptr, *geom, *frame), team)
        ym, im = Guarded((2 * tch, *out)), Guarded((2 * tch, *out), np.int64)
        lib.run("dm_maxpool2d_fp32", Pool(p(x), ym.ptr, im.ptr, *geom, *frame, 1), team)
        np.testing.assert_array_equal(bits(ym.check()), bits(y.check()))
        rule = np.where(y.arr > 0, idx.check(), np.int64(-1))
        np.testing.assert_array_equal(im.check(), rule)
        assert (rule < 0).any() and (rule >= fw * fh).any()
