"""The data-movement kernels' fast paths (runtime_c/kernels: pool.c's 3x3
maxpool and its banded gradient, transpose.c's reduced permutations,
elementwise.c's binary rows and ReLU on the bits, optimizer.c's
accumulation) against references written here in numpy, element by element
as the headers specify them (not taken from the kernels): the same bits,
for the whole cluster of 1 and 8 cores and an uneven team of 3, on odd
sizes, padding at every border, ties, NaNs and signed zeros."""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from c_structs import enum, mirror
from kernel_harness import Guarded, KernelLib, kernel_library, p

RNG = np.random.default_rng(2026)

Pool = mirror("dm_pool2d_args_t")
PoolGrad = mirror("dm_pool2d_grad_args_t")
Transpose = mirror("dm_transpose_args_t")
Binary = mirror("dm_binary_args_t")
Unary = mirror("dm_unary_args_t")
ReluGrad = mirror("dm_relu_grad_args_t")
Accumulate = mirror("dm_accumulate_args_t")
STRUCTS = [Pool, PoolGrad, Transpose, Binary, Unary, ReluGrad, Accumulate]
OPS = enum("dm_binary_op_e")


@pytest.fixture(scope="module", params=[1, 8], ids=["cores1", "cores8"])
def lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> KernelLib:
    cores = request.param
    d: Path = tmp_path_factory.mktemp(f"data{cores}")
    kernels = ["pool.c", "transpose.c", "elementwise.c", "optimizer.c"]
    return KernelLib(kernel_library(d, "data", cores, kernels, STRUCTS), cores)


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32)


def _u(vals: Sequence[int], n: int) -> Any:
    return (ctypes.c_uint32 * n)(*list(vals), *([0] * (n - len(vals))))


# ---------------------------------------------------------------- maxpool


def maxpool_ref(
    x: np.ndarray,
    k: tuple[int, int],
    s: tuple[int, int],
    pad: tuple[int, int],
    out: tuple[int, int],
    frame: tuple[int, int, int, int, int, int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Y and the indices of max pooling, the textbook loop: the taps inside
    the input in row-major order, a later tap replacing the best only when
    `>` (float32 comparisons). x: [planes, H, W]. frame (tile_ch, frame_c,
    frame_h, frame_w, org_c, org_h, org_w): the indices count in that
    frame (image org_n = 0), else in x."""
    planes, h, w = x.shape
    y = np.zeros((planes, *out), np.float32)
    idx = np.zeros((planes, *out), np.int64)
    for q in range(planes):
        for oh in range(out[0]):
            for ow in range(out[1]):
                best, at = None, None
                for kh in range(k[0]):
                    for kw in range(k[1]):
                        ih, iw = oh * s[0] + kh - pad[0], ow * s[1] + kw - pad[1]
                        if not (0 <= ih < h and 0 <= iw < w):
                            continue
                        v = x[q, ih, iw]
                        if best is None or v > best:
                            best, at = v, (ih, iw)
                assert best is not None and at is not None
                y[q, oh, ow] = best
                if frame is None:
                    idx[q, oh, ow] = (q * h + at[0]) * w + at[1]
                else:
                    tch, fc, fh, fw, oc, orh, orw = frame
                    n, c = q // tch, oc + q % tch
                    idx[q, oh, ow] = ((n * fc + c) * fh + orh + at[0]) * fw + orw + at[1]
    return y, idx


def pool_fields(planes: int, h: int, w: int, out: tuple[int, int], k, s, pad) -> list[int]:
    return [planes, h, w, *out, *k, *s, 1, 1, *pad, 0]


def special_input(shape: tuple[int, ...], kind: str) -> np.ndarray:
    """Random floats; "ties": three values only (most windows hold their
    maximum twice or more) with signed zeros among them; "nan": NaNs and
    infinities sprinkled in."""
    x = RNG.standard_normal(shape).astype(np.float32)
    if kind == "ties":
        x = np.choose(RNG.integers(0, 4, shape), [np.float32(-0.0), np.float32(0.0), 1.0, -1.0])
        x = x.astype(np.float32)
    elif kind == "nan":
        m = RNG.random(shape)
        x[m < 0.08] = np.nan
        x[(m >= 0.08) & (m < 0.12)] = np.inf
        x[(m >= 0.12) & (m < 0.15)] = -np.inf
    return x


#: (planes, H, W, k, stride, pad, extra): the output grows by `extra` rows and
#: columns beyond the floor formula (windows that reach into the bottom and
#: right padding, as ceil_mode or an asymmetric pad gives)
POOL3 = [
    (3, 9, 7, 3, 2, 1, 0),  # CCT's kind, odd sizes
    (2, 8, 8, 3, 2, 1, 1),  # bottom/right padding too
    (5, 6, 11, 3, 1, 1, 0),  # stride 1, every border padded
    (1, 10, 9, 3, 3, 2, 0),  # pad 2: windows with one row/column inside
    (4, 5, 5, 3, 2, 0, 0),  # no padding
    (9, 3, 3, 3, 2, 1, 0),  # 2x2 outputs: no interior column
    (2, 16, 16, 3, 2, 1, 0),  # the tokenizer's 16x16 -> 8x8
]


@pytest.mark.parametrize("kind", ["rand", "ties", "nan"])
@pytest.mark.parametrize(
    "case", POOL3, ids=[f"{c[0]}x{c[1]}x{c[2]}-s{c[4]}p{c[5]}+{c[6]}" for c in POOL3]
)
def test_maxpool_3x3_path(lib: KernelLib, case: tuple[int, ...], kind: str) -> None:
    planes, h, w, k, s, pad, extra = case
    out = ((h + 2 * pad - k) // s + 1 + extra, (w + 2 * pad - k) // s + 1 + extra)
    x = special_input((planes, h, w), kind)
    y_want, i_want = maxpool_ref(x, (k, k), (s, s), (pad, pad), out)
    geom = pool_fields(planes, h, w, out, (k, k), (s, s), (pad, pad))
    for team in lib.teams():
        y, idx = Guarded((planes, *out)), Guarded((planes, *out), np.int64)
        lib.run("dm_maxpool2d_fp32", Pool(p(x), y.ptr, idx.ptr, *geom), team)
        np.testing.assert_array_equal(bits(y.check()), bits(y_want))
        np.testing.assert_array_equal(idx.check(), i_want)
        y2 = Guarded((planes, *out))
        lib.run("dm_maxpool2d_fp32", Pool(p(x), y2.ptr, None, *geom), team)
        np.testing.assert_array_equal(bits(y2.check()), bits(y_want))


@pytest.mark.parametrize("k", [(2, 3), (3, 2), (4, 4), (2, 2)])
def test_maxpool_general_path_indices(lib: KernelLib, k: tuple[int, int]) -> None:
    """Windows other than 3x3 take the general path, whose index comes from
    the best tap's kernel row (no division): padded, ties and NaNs."""
    planes, h, w, s, pad = 3, 9, 8, (2, 1), (1, 1)
    out = ((h + 2 * pad[0] - k[0]) // s[0] + 1, (w + 2 * pad[1] - k[1]) // s[1] + 1)
    for kind in ("rand", "ties", "nan"):
        x = special_input((planes, h, w), kind)
        y_want, i_want = maxpool_ref(x, k, s, pad, out)
        for team in lib.teams():
            y, idx = Guarded((planes, *out)), Guarded((planes, *out), np.int64)
            geom = pool_fields(planes, h, w, out, k, s, pad)
            lib.run("dm_maxpool2d_fp32", Pool(p(x), y.ptr, idx.ptr, *geom), team)
            np.testing.assert_array_equal(bits(y.check()), bits(y_want), err_msg=kind)
            np.testing.assert_array_equal(idx.check(), i_want, err_msg=kind)


@pytest.mark.parametrize("k", [3, 2])
def test_maxpool_tile_indices_count_in_the_frame(lib: KernelLib, k: int) -> None:
    """A tile (channels 2..4, rows 3.., columns 5.. of a 6-channel 20x19
    input, so frame_w != in_w): its indices count in the whole input."""
    tch, fc, fh, fw, oc, orh, orw = 3, 6, 20, 19, 2, 3, 5
    h, w, s, pad = 9, 10, 2, 1
    out = ((h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1)
    x = special_input((2 * tch, h, w), "ties")  # two images of the tile's channels
    frame = (tch, fc, fh, fw, oc, orh, orw)
    y_want, i_want = maxpool_ref(x, (k, k), (s, s), (pad, pad), out, frame)
    geom = pool_fields(2 * tch, h, w, out, (k, k), (s, s), (pad, pad))
    for team in lib.teams():
        y, idx = Guarded((2 * tch, *out)), Guarded((2 * tch, *out), np.int64)
        args = Pool(p(x), y.ptr, idx.ptr, *geom, tch, fc, fh, fw, 0, oc, orh, orw)
        lib.run("dm_maxpool2d_fp32", args, team)
        np.testing.assert_array_equal(bits(y.check()), bits(y_want))
        np.testing.assert_array_equal(idx.check(), i_want)


def maxpool_grad_ref(dy: np.ndarray, idx: np.ndarray, plane_shape: tuple[int, int]) -> np.ndarray:
    """dX: zero, then dY[q, o] added at indices[q, o] mod plane, o in order,
    skipping negative indices (float32 adds)."""
    planes = dy.shape[0]
    size = plane_shape[0] * plane_shape[1]
    dx = np.zeros((planes, size), np.float32)
    for q in range(planes):
        for o, (g, i) in enumerate(zip(dy[q].ravel(), idx[q].ravel(), strict=True)):
            del o
            if i >= 0:
                dx[q, int(i) % size] = np.float32(dx[q, int(i) % size] + g)
    return dx.reshape(planes, *plane_shape)


@pytest.mark.parametrize("planes", [1, 2, 3, 5, 8, 11])
def test_maxpool_grad_bands(lib: KernelLib, planes: int) -> None:
    """Fewer planes than cores: a plane's rows are split into bands, one core
    each, every core reading the plane's outputs in order. Indices from the
    3x3 stride-2 forward (overlapping windows: an input gathers up to four
    outputs, in order), numbered from a frame of more planes (not multiples
    of this plane's base), and a few negative ones."""
    h, w, k, s, pad = 11, 9, 3, 2, 1
    out = ((h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1)
    x = special_input((planes, h, w), "ties")
    _, idx = maxpool_ref(x, (k, k), (s, s), (pad, pad), out)
    idx = idx + 7 * h * w  # as if these planes came from plane 7 on
    idx[RNG.random(idx.shape) < 0.1] = -1
    dy = RNG.standard_normal(idx.shape).astype(np.float32)
    want = maxpool_grad_ref(dy, idx, (h, w))
    geom = pool_fields(planes, h, w, out, (k, k), (s, s), (pad, pad))
    for team in lib.teams():
        dx = Guarded((planes, h, w))
        dx.arr[...] = np.nan  # every element must be written
        lib.run("dm_maxpool2d_grad_fp32", PoolGrad(p(dy), p(idx), dx.ptr, *geom), team)
        np.testing.assert_array_equal(bits(dx.check()), bits(want))


def test_maxpool_grad_any_index_in_the_plane(lib: KernelLib) -> None:
    """Indices anywhere in the plane and from planes of any base (the
    remainder the header specifies, not only the window's taps)."""
    planes, h, w = 2, 5, 3
    size = h * w
    idx = RNG.integers(0, 40 * size, (planes, 4, 4)).astype(np.int64)
    dy = RNG.standard_normal(idx.shape).astype(np.float32)
    want = maxpool_grad_ref(dy, idx, (h, w))
    geom = pool_fields(planes, h, w, (4, 4), (3, 3), (2, 2), (1, 1))
    for team in lib.teams():
        dx = Guarded((planes, h, w))
        lib.run("dm_maxpool2d_grad_fp32", PoolGrad(p(dy), p(idx), dx.ptr, *geom), team)
        np.testing.assert_array_equal(bits(dx.check()), bits(want))


# ---------------------------------------------------------------- transpose

TRANSPOSES = [
    ((128, 32), (1, 0)),  # the CCT's
    ((1, 64, 64), (0, 2, 1)),
    ((1, 2, 32, 64), (0, 2, 1, 3)),
    ((1, 2, 64, 32), (0, 3, 1, 2)),
    ((1, 64, 1, 64), (0, 2, 1, 3)),
    ((1, 64, 1, 64), (0, 2, 3, 1)),
    ((7, 13), (1, 0)),  # 2-D, neither side a multiple of 4
    ((3, 9, 6), (0, 2, 1)),  # a batch of 2-D transposes, 6 rows: one group of 4 and 2 left
    ((5, 3, 7), (2, 0, 1)),  # merges to 15 x 7
    ((2, 3, 5, 7), (3, 1, 0, 2)),  # strided gathers
    ((2, 1, 3, 1, 5), (4, 3, 2, 1, 0)),
    ((1, 1, 1), (2, 0, 1)),  # one element
    ((4, 1, 6), (1, 0, 2)),  # a copy once the 1 is dropped
    ((2, 3, 2, 3, 2, 3), (5, 3, 1, 4, 2, 0)),
]


@pytest.mark.parametrize(("shape", "perm"), TRANSPOSES)
def test_transpose_paths(lib: KernelLib, shape: tuple[int, ...], perm: tuple[int, ...]) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    x.ravel()[::5] = np.nan  # moved as bits
    want = np.ascontiguousarray(np.transpose(x, perm))
    for team in lib.teams():
        y = Guarded(want.shape)
        args = Transpose(p(x), y.ptr, len(shape), _u(shape, 6), _u(perm, 6))
        lib.run("dm_transpose_fp32", args, team)
        np.testing.assert_array_equal(bits(y.check()), bits(want))


@pytest.mark.parametrize(("shape", "perm"), TRANSPOSES)
@pytest.mark.parametrize("reset", [0, 1])
def test_transpose_onto_buffer(
    lib: KernelLib, shape: tuple[int, ...], perm: tuple[int, ...], reset: int
) -> None:
    """accumulate-fuse's transpose (acc_reset set): reset ? X^T : buffer +
    X^T, InPlaceAccumulatorV2's float32 sum (numpy's here), Y the buffer."""
    x = RNG.standard_normal(shape).astype(np.float32)
    t = np.ascontiguousarray(np.transpose(x, perm))
    buf = RNG.standard_normal(t.shape).astype(np.float32)
    want = t if reset else buf + t
    flag = np.array([reset], dtype=np.uint8)
    for team in lib.teams():
        y = Guarded(want.shape)
        y.arr[...] = buf
        args = Transpose(p(x), y.ptr, len(shape), _u(shape, 6), _u(perm, 6), p(flag))
        lib.run("dm_transpose_fp32", args, team)
        np.testing.assert_array_equal(bits(y.check()), bits(want))


def test_transpose_every_perm_of_rank_4(lib: KernelLib) -> None:
    shape = (3, 1, 5, 6)
    x = RNG.standard_normal(shape).astype(np.float32)
    for perm in itertools.permutations(range(4)):
        want = np.ascontiguousarray(np.transpose(x, perm))
        for team in lib.teams():
            y = Guarded(want.shape)
            args = Transpose(p(x), y.ptr, 4, _u(shape, 6), _u(perm, 6))
            lib.run("dm_transpose_fp32", args, team)
            np.testing.assert_array_equal(y.check(), want, err_msg=str(perm))


# ---------------------------------------------------------------- binary


def _strides(shape: Sequence[int], of: Sequence[int]) -> list[int]:
    """Element strides of an operand of shape `of` broadcast to `shape`."""
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = 0 if of[d] == 1 and shape[d] != 1 else acc
        acc *= of[d]
    return st


BINARIES = [
    ((1, 64, 128), (1, 64, 128), (1, 64, 128)),  # the CCT's residual add
    ((1, 64, 128), (1, 1, 128), (1, 64, 128)),  # the positional embedding
    ((1, 64, 128), (1, 64, 128), (1, 1, 128)),
    ((1, 2, 64, 64), (1, 2, 64, 64), (1, 1, 1, 1)),  # the attention's scale
    ((3, 5, 7), (3, 1, 7), (1, 5, 1)),
    ((2, 3, 1, 5), (1, 3, 1, 5), (2, 1, 1, 1)),
    ((13,), (13,), (1,)),
    ((), (), ()),
]


@pytest.mark.parametrize("op", ["DM_BINARY_ADD", "DM_BINARY_SUB", "DM_BINARY_MUL", "DM_BINARY_DIV"])
@pytest.mark.parametrize(("shape", "sa", "sb"), BINARIES)
def test_binary_rows(
    lib: KernelLib, op: str, shape: tuple[int, ...], sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    a = RNG.standard_normal(sa).astype(np.float32)
    b = RNG.standard_normal(sb).astype(np.float32)
    fn = {"DM_BINARY_ADD": np.add, "DM_BINARY_SUB": np.subtract}
    fn |= {"DM_BINARY_MUL": np.multiply, "DM_BINARY_DIV": np.divide}
    want = fn[op](a, b, dtype=np.float32)  # IEEE single: the C kernel's bits
    rank = len(shape)
    dims = list(shape) or [1]
    for team in lib.teams():
        y = Guarded(want.shape)
        args = Binary(
            p(a), p(b), y.ptr, rank, _u(dims, 4), _u(_strides(shape, sa), 4),
            _u(_strides(shape, sb), 4), OPS[op],
        )  # fmt: skip
        lib.run("dm_binary_fp32", args, team)
        np.testing.assert_array_equal(bits(y.check()), bits(want))


def test_binary_add_in_place(lib: KernelLib) -> None:
    """Y over A (not broadcast), B broadcast over rows: the residual add in place."""
    shape = (1, 9, 37)
    a0 = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal((1, 1, 37)).astype(np.float32)
    want = a0 + b
    a = a0.copy()
    args = Binary(
        p(a), p(b), p(a), 3, _u(shape, 4), _u(_strides(shape, shape), 4),
        _u(_strides(shape, (1, 1, 37)), 4), OPS["DM_BINARY_ADD"],
    )  # fmt: skip
    lib.run("dm_binary_fp32", args)
    np.testing.assert_array_equal(a, want)


# ---------------------------------------------------------------- relu, accumulate

SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38],
    np.float32,
)


@pytest.mark.parametrize("size", [1, 3, 12, 37, 1000])
def test_relu_bits(lib: KernelLib, size: int) -> None:
    """max(x, 0) as x > 0 ? x : +0 (NaNs, -0 and denormals included); the
    gradient passes dY where X > 0, else +0."""
    x = np.ascontiguousarray(np.resize(SPECIAL, size))
    if size > len(SPECIAL):
        x[len(SPECIAL) :] = RNG.standard_normal(size - len(SPECIAL)).astype(np.float32)
    dy = RNG.standard_normal(size).astype(np.float32)
    dy[::3] = -0.0
    with np.errstate(invalid="ignore"):
        pos = x > 0
    want = np.where(pos, x, np.float32(0.0)).astype(np.float32)
    want_dx = np.where(pos, dy, np.float32(0.0)).astype(np.float32)
    for team in lib.teams():
        y = Guarded((size,))
        lib.run("dm_relu_fp32", Unary(p(x), y.ptr, size), team)
        np.testing.assert_array_equal(bits(y.check()), bits(want))
        dx = Guarded((size,))
        lib.run("dm_relu_grad_fp32", ReluGrad(p(dy), p(x), dx.ptr, size), team)
        np.testing.assert_array_equal(bits(dx.check()), bits(want_dx))


@pytest.mark.parametrize("size", [1, 5, 64, 1001])
@pytest.mark.parametrize("reset", [0, 1])
def test_accumulate_in_place(lib: KernelLib, size: int, reset: int) -> None:
    buf0 = RNG.standard_normal(size).astype(np.float32)
    grad = RNG.standard_normal(size).astype(np.float32)
    grad[::7] = np.nan
    want = grad.copy() if reset else (buf0 + grad).astype(np.float32)
    flag = (ctypes.c_uint8 * 1)(reset)
    buf = buf0.copy()
    args = Accumulate(p(buf), p(grad), ctypes.addressof(flag), p(buf), size)
    lib.run("dm_accumulate_fp32", args, 0)
    np.testing.assert_array_equal(bits(buf), bits(want))
