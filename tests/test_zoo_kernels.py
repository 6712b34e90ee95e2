"""runtime_c's kernels for the model zoo's ops (runtime_c/include/dm_kernels_ext.h)
against numpy models of their order of operations, bit for bit.

The new kernels and runtime_c/host/pmsis_host.c are built into a shared
library for 8 cores and for 3 (uneven splits), and each kernel runs as a
team fork of the whole cluster and of 3 cores through ctypes; every output
has a guard element after it. The numpy models are written here from the
header's formulas: float32 operations one at a time (numpy's float32 add,
multiply, divide and sqrt round like C's), sums as sequential cumulative
sums, and exp / log as runtime_c/include/dm_mathf.h computes them
(tests/mathf_model.py, bit for bit), so that the comparison can ask for
identical bits. The kernels are built with
-ffp-contract=off, as every build of the emitted code. Where a kernel
replaces a C library function (tanh from expf, the AdamW bias correction's
powers by squaring), a second test holds it within a few ulps of the exact
value as well."""

from __future__ import annotations

import ctypes
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import kernel_harness
import mathf_model
import numpy as np
import pytest
from kernel_harness import KernelLib, kernel_library, p

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
NEW = (
    "activation_ext.c",
    "compare.c",
    "adamw.c",
    "batchnorm.c",
    "dropout.c",
    "loss_ignore.c",
    "log_softmax.c",
    "gather.c",
    "concat.c",
)
GCC = shutil.which("gcc")
F32 = np.float32

pytestmark = pytest.mark.skipif(GCC is None, reason="gcc is needed to build runtime_c")

PTR, U32, I64, F = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int64, ctypes.c_float
U32x4 = U32 * 4

# ---------------------------------------------------------------- ctypes mirrors


class UnaryExtArgs(ctypes.Structure):
    c_name = "dm_unary_ext_args_t"
    _fields_ = [
        ("X", PTR),
        ("Y", PTR),
        ("size", U32),
        ("op", U32),
        ("alpha", F),
        ("lo", F),
        ("hi", F),
    ]


class UnaryGradArgs(ctypes.Structure):
    c_name = "dm_unary_grad_args_t"
    _fields_ = [
        ("dY", PTR),
        ("Z", PTR),
        ("dX", PTR),
        ("size", U32),
        ("op", U32),
        ("alpha", F),
        ("lo", F),
        ("hi", F),
    ]


class CompareArgs(ctypes.Structure):
    c_name = "dm_compare_args_t"
    _fields_ = [
        ("A", PTR),
        ("B", PTR),
        ("Y", PTR),
        ("rank", U32),
        ("shape", U32x4),
        ("a_strides", U32x4),
        ("b_strides", U32x4),
        ("op", U32),
    ]


class WhereArgs(ctypes.Structure):
    c_name = "dm_where_args_t"
    _fields_ = [
        ("C", PTR),
        ("A", PTR),
        ("B", PTR),
        ("Y", PTR),
        ("rank", U32),
        ("shape", U32x4),
        ("c_strides", U32x4),
        ("a_strides", U32x4),
        ("b_strides", U32x4),
    ]


class CastArgs(ctypes.Structure):
    c_name = "dm_cast_args_t"
    _fields_ = [("X", PTR), ("Y", PTR), ("size", U32), ("op", U32)]


class AdamWArgs(ctypes.Structure):
    c_name = "dm_adamw_args_t"
    _fields_ = [
        ("weight", PTR),
        ("grad", PTR),
        ("m1", PTR),
        ("m2", PTR),
        ("lr", PTR),
        ("step", PTR),
        ("update_signal", PTR),
        ("size", U32),
        ("alpha", F),
        ("beta", F),
        ("epsilon", F),
        ("weight_decay", F),
        ("correct_bias", U32),
        ("adam_mode", U32),
    ]


class BatchNormArgs(ctypes.Structure):
    c_name = "dm_batchnorm_args_t"
    _fields_ = [
        ("X", PTR),
        ("scale", PTR),
        ("bias", PTR),
        ("running_mean_in", PTR),
        ("running_var_in", PTR),
        ("Y", PTR),
        ("running_mean", PTR),
        ("running_var", PTR),
        ("mean", PTR),
        ("inv_std", PTR),
        ("N", U32),
        ("C", U32),
        ("S", U32),
        ("epsilon", F),
        ("momentum", F),
    ]


class BatchNormGradArgs(ctypes.Structure):
    c_name = "dm_batchnorm_grad_args_t"
    _fields_ = [
        ("dY", PTR),
        ("X", PTR),
        ("scale", PTR),
        ("mean", PTR),
        ("inv_std", PTR),
        ("dX", PTR),
        ("dscale", PTR),
        ("dbias", PTR),
        ("N", U32),
        ("C", U32),
        ("S", U32),
    ]


class DropoutArgs(ctypes.Structure):
    c_name = "dm_dropout_args_t"
    _fields_ = [
        ("X", PTR),
        ("Y", PTR),
        ("mask", PTR),
        ("size", U32),
        ("seed", U32),
        ("stream", U32),
        ("keep_threshold", U32),
        ("scale", F),
        ("streams", U32),
        ("step", U32),
    ]


class DropoutGradArgs(ctypes.Structure):
    c_name = "dm_dropout_grad_args_t"
    _fields_ = [("dY", PTR), ("mask", PTR), ("dX", PTR), ("size", U32), ("scale", F)]


class SceIIArgs(ctypes.Structure):
    c_name = "dm_sce_ii_args_t"
    _fields_ = [
        ("logits", PTR),
        ("labels", PTR),
        ("log_prob", PTR),
        ("row_loss", PTR),
        ("loss", PTR),
        ("batch", U32),
        ("classes", U32),
        ("reduction", U32),
        ("has_ignore", U32),
        ("ignore_index", I64),
    ]


class SceIIGradArgs(ctypes.Structure):
    c_name = "dm_sce_ii_grad_args_t"
    _fields_ = [
        ("dY", PTR),
        ("log_prob", PTR),
        ("labels", PTR),
        ("dX", PTR),
        ("batch", U32),
        ("classes", U32),
        ("reduction", U32),
        ("has_ignore", U32),
        ("ignore_index", I64),
    ]


class LogSoftmaxArgs(ctypes.Structure):
    c_name = "dm_log_softmax_args_t"
    _fields_ = [("X", PTR), ("Y", PTR), ("out", PTR), ("outer", U32), ("len", U32), ("inner", U32)]


class GatherArgs(ctypes.Structure):
    c_name = "dm_gather_args_t"
    _fields_ = [
        ("data", PTR),
        ("indices", PTR),
        ("Y", PTR),
        ("outer", U32),
        ("rows", U32),
        ("inner", U32),
        ("n", U32),
    ]


class GatherGradArgs(ctypes.Structure):
    c_name = "dm_gather_grad_args_t"
    _fields_ = [
        ("dY", PTR),
        ("indices", PTR),
        ("dX", PTR),
        ("outer", U32),
        ("rows", U32),
        ("inner", U32),
        ("n", U32),
    ]


class ConcatArgs(ctypes.Structure):
    c_name = "dm_concat_args_t"
    _fields_ = [
        ("whole", PTR),
        ("part", PTR),
        ("outer", U32),
        ("total", U32),
        ("offset", U32),
        ("len", U32),
        ("inner", U32),
    ]


STRUCTS = [
    UnaryExtArgs,
    UnaryGradArgs,
    CompareArgs,
    WhereArgs,
    CastArgs,
    AdamWArgs,
    BatchNormArgs,
    BatchNormGradArgs,
    DropoutArgs,
    DropoutGradArgs,
    SceIIArgs,
    SceIIGradArgs,
    LogSoftmaxArgs,
    GatherArgs,
    GatherGradArgs,
    ConcatArgs,
]

# ---------------------------------------------------------------- the library


Lib = KernelLib


def _build(d: Path, cores: int) -> Path:
    """The zoo's kernels (NEW) with the layouts of STRUCTS, for `cores` cores."""
    return kernel_library(d, "zoo", cores, NEW, STRUCTS)


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lib:
    d = tmp_path_factory.mktemp(f"zoo{request.param}")
    return Lib(_build(d, request.param), request.param)


TEAMS = [0, 3, 1]  # the whole cluster, an uneven team, one core


def expf(x: np.ndarray) -> np.ndarray:
    """dm_expf (runtime_c/include/dm_mathf.h), the kernels' exp."""
    return mathf_model.expf(x)


def logf(x: np.ndarray) -> np.ndarray:
    """dm_logf, the kernels' log."""
    return mathf_model.logf(x)


def seqsum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The sum along `axis` added in order from 0.0f, in float32."""
    x = np.asarray(x, F32)
    if x.shape[axis] == 0:
        return np.zeros(np.delete(x.shape, axis), F32)
    return np.take(np.cumsum(x, axis=axis, dtype=F32), -1, axis=axis)


class Guarded(kernel_harness.Guarded):
    """kernel_harness's guarded output, read as a copy (an output may be run
    into again after it was read)."""

    def check(self) -> np.ndarray:
        return super().check().copy()


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    if got.dtype == F32:
        bad = got.view(np.uint32) != want.view(np.uint32)
        assert not bad.any(), f"{int(bad.sum())} differ; first {got[bad][:4]} vs {want[bad][:4]}"
    else:
        np.testing.assert_array_equal(got, want)


RNG = np.random.default_rng(20)


def randn(*shape: int, scale: float = 1.0) -> np.ndarray:
    return np.asarray(RNG.standard_normal(shape) * scale, F32)


def test_struct_mirrors_match_the_header(lib: Lib) -> None:
    for s in STRUCTS:
        want = [ctypes.sizeof(s)] + [getattr(s, f[0]).offset for f in s._fields_]
        assert lib.layout(s) == want, s.c_name


# ---------------------------------------------------------------- unary


TANH_Q = (
    0.000590027441,
    -0.00145583439,
    0.00359212804,
    -0.00886323553,
    0.0218694885,
    -0.0539682540,
    0.133333333,
    -0.333333333,
)


def _tanh_model(x: np.ndarray) -> np.ndarray:
    x = x.astype(F32)
    ax = np.abs(x)
    x2 = x * x
    q = np.full_like(x, F32(TANH_Q[0]))
    for c in TANH_Q[1:]:
        q = F32(c) + x2 * q
    small = x + (x * x2) * q
    with np.errstate(over="ignore"):
        t = F32(1) - F32(2) / (expf(F32(2) * ax) + F32(1))
    big = np.where(x < 0, -t, t)
    return np.where(ax < F32(0.55), small, big).astype(F32)


def _sigmoid_model(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        pos = F32(1) / (F32(1) + expf(-x))
        e = expf(x)
        neg = e / (F32(1) + e)
    return np.where(x >= 0, pos, neg).astype(F32)


ALPHA, LO, HI = F32(0.1), F32(-0.5), F32(0.75)


def _quick_gelu_grad_model(dy: np.ndarray, z: np.ndarray) -> np.ndarray:
    v = (ALPHA * z).astype(F32)
    s = _sigmoid_model(v)
    return ((dy * s) * (F32(1) + v * (F32(1) - s))).astype(F32)


UNARY: dict[str, tuple[int, Callable[[np.ndarray], np.ndarray]]] = {
    "sigmoid": (0, _sigmoid_model),
    "tanh": (1, _tanh_model),
    "leaky_relu": (2, lambda x: np.where(x > 0, x, ALPHA * x).astype(F32)),
    "clip": (3, lambda x: np.where(x < LO, LO, np.where(x > HI, HI, x)).astype(F32)),
    "abs": (4, np.abs),
    "sign": (5, lambda x: np.where(x > 0, F32(1), np.where(x < 0, F32(-1), x)).astype(F32)),
    "neg": (6, np.negative),
    "log": (7, logf),
    "exp": (8, expf),
    "sqrt": (9, np.sqrt),
    "reciprocal": (10, lambda x: (F32(1) / x).astype(F32)),
    "quick_gelu": (11, lambda x: (x * _sigmoid_model((ALPHA * x).astype(F32))).astype(F32)),
}


def _unary_input(name: str) -> np.ndarray:
    x = randn(257, scale=3.0)
    x[:6] = [0.0, -0.0, 0.125, -0.125, 1e-30, 40.0]
    x[6] = np.nextafter(F32(0.55), F32(0))  # both sides of the tanh switch
    x[7] = 0.55
    if name in ("log", "sqrt"):
        x = np.abs(x) + F32(1e-3)
    if name == "reciprocal":
        x[x == 0] = 1.0
    return x.astype(F32)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(lib: Lib, name: str) -> None:
    op, model = UNARY[name]
    x = _unary_input(name)
    want = np.asarray(model(x), F32)
    for team in TEAMS:
        y = Guarded(x.shape)
        lib.run("dm_unary_ext_fp32", UnaryExtArgs(p(x), y.ptr, x.size, op, ALPHA, LO, HI), team)
        same_bits(y.check(), want)
    # in place
    xi = x.copy()
    lib.run("dm_unary_ext_fp32", UnaryExtArgs(p(xi), p(xi), x.size, op, ALPHA, LO, HI), 0)
    same_bits(xi, want)


def test_tanh_and_sigmoid_are_accurate(lib: Lib) -> None:
    """The kernel's tanh (from expf) and sigmoid within 3 float32 ulps of
    the exact values (float64)."""
    x = np.concatenate([np.linspace(-12, 12, 4001, dtype=F32), randn(2000, scale=0.2)])
    for op, exact in ((1, np.tanh), (0, lambda v: 1.0 / (1.0 + np.exp(-v)))):
        y = Guarded(x.shape)
        lib.run("dm_unary_ext_fp32", UnaryExtArgs(p(x), y.ptr, x.size, op, 0, 0, 0), 0)
        ref = exact(x.astype(np.float64))
        err = np.abs(y.check().astype(np.float64) - ref)
        ulp = np.spacing(np.abs(ref).astype(F32)).astype(np.float64)
        assert (err <= 3 * ulp).all(), (op, float((err / ulp).max()))


UGRAD: dict[str, tuple[int, Callable[[np.ndarray, np.ndarray], np.ndarray]]] = {
    "sigmoid": (0, lambda dy, z: ((dy * z) * (F32(1) - z)).astype(F32)),
    "tanh": (1, lambda dy, z: (dy * (F32(1) - z * z)).astype(F32)),
    "leaky_relu": (2, lambda dy, z: np.where(z > 0, dy, ALPHA * dy).astype(F32)),
    "clip": (3, lambda dy, z: (dy * ((LO <= z) & (z <= HI)).astype(F32)).astype(F32)),
    "abs": (
        4,
        lambda dy, z: (dy * np.where(z > 0, F32(1), np.where(z < 0, F32(-1), z))).astype(F32),
    ),
    "quick_gelu": (5, lambda dy, z: _quick_gelu_grad_model(dy, z)),
}


@pytest.mark.parametrize("name", list(UGRAD))
def test_unary_grad(lib: Lib, name: str) -> None:
    op, model = UGRAD[name]
    dy, z = randn(301), randn(301)
    z[:4] = [0.0, -0.0, LO, HI]  # the edges: clip's bounds pass the gradient
    want = model(dy, z)
    for team in TEAMS:
        dx = Guarded(dy.shape)
        lib.run(
            "dm_unary_grad_fp32",
            UnaryGradArgs(p(dy), p(z), dx.ptr, dy.size, op, ALPHA, LO, HI),
            team,
        )
        same_bits(dx.check(), want)


def test_clip_grad_is_the_onnx_decomposition(lib: Lib) -> None:
    """onnxruntime's Clip gradient: Mul(dY, Cast(And(GreaterOrEqual(X, lo),
    LessOrEqual(X, hi)))) -- the same bits through the compare, logical and
    cast kernels and dm_binary-free numpy Mul as through DM_UGRAD_CLIP."""
    x, dy = randn(64), randn(64)
    x[:2] = [LO, HI]
    lo, hi = np.array([LO], F32), np.array([HI], F32)
    ge, le, both, fl = (
        Guarded((64,), np.uint8),
        Guarded((64,), np.uint8),
        Guarded((64,), np.uint8),
        Guarded((64,)),
    )
    one = (1, 0, 0, 0)
    lib.run(
        "dm_compare_fp32",
        CompareArgs(p(x), p(lo), ge.ptr, 1, (64, 0, 0, 0), one, (0, 0, 0, 0), 1),
        0,
    )
    lib.run(
        "dm_compare_fp32",
        CompareArgs(p(x), p(hi), le.ptr, 1, (64, 0, 0, 0), one, (0, 0, 0, 0), 3),
        0,
    )
    g, lq = ge.check(), le.check()
    lib.run("dm_compare_fp32", CompareArgs(p(g), p(lq), both.ptr, 1, (64, 0, 0, 0), one, one, 5), 0)
    b = both.check()
    lib.run("dm_cast", CastArgs(p(b), fl.ptr, 64, 0), 0)
    decomposed = (dy * fl.check()).astype(F32)
    dx = Guarded((64,))
    lib.run("dm_unary_grad_fp32", UnaryGradArgs(p(dy), p(x), dx.ptr, 64, 3, 0, LO, HI), 0)
    same_bits(dx.check(), decomposed)


# ---------------------------------------------------------------- compare, where, cast


def _strides(shape: Sequence[int], out: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a contiguous array of `shape` (right-aligned to
    out's rank), 0 on the broadcast dims, padded to 4."""
    shape = [1] * (len(out) - len(shape)) + list(shape)
    st, acc = [], 1
    for d in reversed(shape):
        st.append(0 if d == 1 else acc)
        acc *= d
    st = list(reversed(st))
    return tuple(st + [0] * (4 - len(st)))


def _pad4(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(list(shape) + [0] * (4 - len(shape)))


CMP = {
    0: np.greater,
    1: np.greater_equal,
    2: np.less,
    3: np.less_equal,
    4: np.equal,
    5: np.logical_and,
    6: np.logical_or,
    7: np.logical_xor,
}
BROADCASTS = [
    ((3, 4, 5), (3, 4, 5)),
    ((3, 4, 5), (5,)),
    ((3, 1, 5), (1, 4, 1)),
    ((2, 3, 2, 3), (3, 1, 3)),
    ((), ()),
]


@pytest.mark.parametrize("op", list(CMP))
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
def test_compare_and_logical_broadcast(lib: Lib, op: int, shapes: tuple) -> None:
    sa, sb = shapes
    out = np.broadcast_shapes(sa, sb)
    if op < 5:
        a = np.asarray(np.round(randn(*sa), 0), F32)  # ties, so == and >= differ from > somewhere
        b = np.asarray(np.round(randn(*sb), 0), F32)
    else:
        a = np.asarray(RNG.integers(0, 3, sa), np.uint8)  # 2 is true too
        b = np.asarray(RNG.integers(0, 2, sb), np.uint8)
    want = np.asarray(CMP[op](a, b), np.uint8)
    for team in TEAMS:
        y = Guarded(out, np.uint8)
        args = CompareArgs(
            p(a), p(b), y.ptr, len(out), _pad4(out), _strides(sa, out), _strides(sb, out), op
        )
        lib.run("dm_compare_fp32", args, team)
        same_bits(y.check(), want)


@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)), ((1, 4), (3, 1), ())], ids=str
)
def test_where_broadcast(lib: Lib, shapes: tuple) -> None:
    sc, sa, sb = shapes
    out = np.broadcast_shapes(sc, sa, sb)
    c = np.asarray(RNG.integers(0, 2, sc), np.uint8)
    a, b = randn(*sa), randn(*sb)
    want = np.asarray(np.where(c.astype(bool), a, b), F32)
    for team in TEAMS:
        y = Guarded(out)
        args = WhereArgs(
            p(c),
            p(a),
            p(b),
            y.ptr,
            len(out),
            _pad4(out),
            _strides(sc, out),
            _strides(sa, out),
            _strides(sb, out),
        )
        lib.run("dm_where_fp32", args, team)
        same_bits(y.check(), want)


def test_cast(lib: Lib) -> None:
    f = randn(50) * F32(100)
    f[:3] = [0.0, -0.0, 2.75]
    b = RNG.integers(0, 3, 50).astype(np.uint8)
    i = RNG.integers(-(2**40), 2**40, 50).astype(np.int64)
    cases = [
        (0, b, np.float32, (b != 0).astype(F32)),
        (1, f, np.uint8, (f != 0).astype(np.uint8)),
        (2, i, np.float32, i.astype(F32)),
        (3, f, np.int64, np.trunc(f).astype(np.int64)),
        (4, b, np.uint8, (b == 0).astype(np.uint8)),
    ]
    for op, x, dt, want in cases:
        for team in TEAMS:
            y = Guarded(x.shape, dt)
            lib.run("dm_cast", CastArgs(p(x), y.ptr, x.size, op), team)
            same_bits(y.check(), want)


# ---------------------------------------------------------------- AdamW


def _powi(b: float, n: int) -> float:
    """adamw.c's dm_powi: Python floats are IEEE doubles."""
    r = 1.0
    while n > 0:
        if n & 1:
            r = r * b
        b = b * b
        n >>= 1
    return r


def adamw_model(w, g, m1, m2, lr, step, alpha, beta, eps, wd, correct, mode):
    w, g, m1, m2 = (np.asarray(v, F32).copy() for v in (w, g, m1, m2))
    alpha, beta, eps, wd, lr = F32(alpha), F32(beta), F32(eps), F32(wd), F32(lr)
    ac = F32(1) - F32(_powi(float(alpha), step)) if correct else F32(1)
    bc = F32(1) - F32(_powi(float(beta), step)) if correct else F32(1)
    m1n = alpha * m1 + (F32(1) - alpha) * g
    m2n = beta * m2 + ((F32(1) - beta) * g) * g
    if mode == 1:
        lr_c = lr * (np.sqrt(bc) / ac) if correct else lr
        w = w - (lr_c * m1n) / (np.sqrt(m2n) + eps)
        w = w - (lr * wd) * w
    else:
        w = w - (w * lr) * wd
        w = w - (lr * m1n) / (ac * (np.sqrt(m2n / bc) + eps))
    return w.astype(F32), m1n.astype(F32), m2n.astype(F32)


@pytest.mark.parametrize("mode", [1, 0])
@pytest.mark.parametrize("correct", [1, 0])
def test_adamw_steps(lib: Lib, mode: int, correct: int) -> None:
    """Three steps (1, 2, 3) of one parameter, moments from zero."""
    n = 203
    w0, lr = randn(n), np.array([0.01], F32)
    hp = (0.9, 0.999, 1e-6, 0.01, correct, mode)  # alpha, beta, eps, wd, correct_bias, adam_mode
    for team in TEAMS:
        w, m1, m2 = w0.copy(), np.zeros(n, F32), np.zeros(n, F32)
        ww, wm1, wm2 = w0.copy(), np.zeros(n, F32), np.zeros(n, F32)
        for step in (1, 2, 3):
            g = randn(n)
            s = np.array([step], np.int64)
            args = AdamWArgs(p(w), p(g), p(m1), p(m2), p(lr), p(s), None, n, *hp)
            lib.run("dm_adamw_fp32", args, team)
            ww, wm1, wm2 = adamw_model(ww, g, wm1, wm2, lr[0], step, *hp)
            same_bits(w, ww)
            same_bits(m1, wm1)
            same_bits(m2, wm2)


def test_adamw_update_signal_and_bias_correction(lib: Lib) -> None:
    n = 10
    w, g, m1, m2 = randn(n), randn(n), randn(n), np.abs(randn(n))
    before = [a.copy() for a in (w, m1, m2)]
    lr, s, off = np.array([0.1], F32), np.array([1], np.int64), np.array([0], np.uint8)
    lib.run(
        "dm_adamw_fp32",
        AdamWArgs(p(w), p(g), p(m1), p(m2), p(lr), p(s), p(off), n, 0.9, 0.999, 1e-6, 0.0, 1, 1),
        0,
    )
    for a, b in zip((w, m1, m2), before, strict=True):
        same_bits(a, b)
    # the first step from zero moments moves every weight by about lr: the bias
    # corrections 1 - alpha and 1 - beta cancel m1 = (1 - alpha) g and
    # m2 = (1 - beta) g^2, leaving lr g / (|g| + eps / sqrt(1 - beta)) -- an
    # independent check of the formulas (eps counts where |g| is small: at
    # |g| = 0.01 it moves the step by 0.3%)
    m1[:], m2[:] = 0, 0
    lib.run(
        "dm_adamw_fp32",
        AdamWArgs(p(w), p(g), p(m1), p(m2), p(lr), p(s), None, n, 0.9, 0.999, 1e-6, 0.0, 1, 1),
        0,
    )
    g64 = g.astype(np.float64)
    want = before[0] - 0.1 * g64 / (np.abs(g64) + 1e-6 / np.sqrt(1 - 0.999))
    np.testing.assert_allclose(w, want, rtol=1e-5, atol=1e-6)
    # and the squaring powers, cast to float, are the double-precision pow's
    # (onnxruntime's std::pow) within one float ulp
    for b in (0.9, 0.999, 0.95):
        for n_ in (1, 2, 3, 10, 1000, 123457, 10**7):
            want = F32(float(F32(b)) ** n_)
            got = F32(_powi(float(F32(b)), n_))
            assert abs(float(got) - float(want)) <= float(np.spacing(want)), (b, n_)


# ---------------------------------------------------------------- BatchNorm


def bn_model(x, scale, bias, rm, rv, eps, mom):
    n, c, s = x.shape
    mm = F32(n * s)
    mean = np.zeros(c, F32)
    var = np.zeros(c, F32)
    for ch in range(c):
        mean[ch] = seqsum(x[:, ch, :].ravel()) / mm
        d = x[:, ch, :].ravel() - mean[ch]
        var[ch] = seqsum(d * d) / mm
    inv_std = np.sqrt(F32(1) / (var + F32(eps))).astype(F32)
    keep, take = F32(mom), F32(1) - F32(mom)
    rmo = (rm * keep + mean * take).astype(F32)
    rvo = (rv * keep + var * take).astype(F32)
    ns = (inv_std * scale).astype(F32)
    nb = (bias - mean * ns).astype(F32)
    y = (x * ns[None, :, None] + nb[None, :, None]).astype(F32)
    return y, rmo, rvo, mean, inv_std


def bn_grad_model(dy, x, scale, mean, inv_std):
    n, c, s = x.shape
    db = np.zeros(c, F32)
    ds = np.zeros(c, F32)
    for ch in range(c):
        xs, dys = x[:, ch, :].ravel(), dy[:, ch, :].ravel()
        db[ch] = seqsum(dys)
        ds[ch] = seqsum(((xs - mean[ch]) * inv_std[ch]) * dys)
    m = F32(n * s)
    k = ((scale * inv_std) / m).astype(F32)
    b = lambda v: v[None, :, None]  # noqa: E731
    dx = b(k) * ((dy * m - b(db)) - ((x - b(mean)) * b(ds)) * b(inv_std))
    return dx.astype(F32), ds, db


@pytest.mark.parametrize("shape", [(4, 5, 1), (3, 4, 9), (2, 7, 6)], ids=str)
def test_batchnorm_forward_and_grad(lib: Lib, shape: tuple) -> None:
    n, c, s = shape
    x = randn(*shape, scale=2.0) + F32(0.5)
    scale, bias, rm, rv = randn(c), randn(c), randn(c), np.abs(randn(c))
    eps, mom = 1e-5, 0.9
    want = bn_model(x, scale, bias, rm, rv, eps, mom)
    dy = randn(*shape)
    for team in TEAMS:
        y, rmo, rvo, mean, inv = (
            Guarded(shape),
            Guarded((c,)),
            Guarded((c,)),
            Guarded((c,)),
            Guarded((c,)),
        )
        ins = [p(a) for a in (x, scale, bias, rm, rv)]
        args = BatchNormArgs(*ins, *(o.ptr for o in (y, rmo, rvo, mean, inv)), n, c, s, eps, mom)
        lib.run("dm_batchnorm_stats_fp32", args, team)
        lib.run("dm_batchnorm_apply_fp32", args, team)
        got = [o.check() for o in (y, rmo, rvo, mean, inv)]
        for g_, w_ in zip(got, want, strict=True):
            same_bits(g_, w_)
        gw = bn_grad_model(dy, x, scale, got[3], got[4])
        dx, ds, db = Guarded(shape), Guarded((c,)), Guarded((c,))
        gargs = BatchNormGradArgs(
            p(dy), p(x), p(scale), p(got[3]), p(got[4]), dx.ptr, ds.ptr, db.ptr, n, c, s
        )
        lib.run("dm_batchnorm_grad_reduce_fp32", gargs, team)
        lib.run("dm_batchnorm_grad_apply_fp32", gargs, team)
        for g_, w_ in zip((dx.check(), ds.check(), db.check()), gw, strict=True):
            same_bits(g_, w_)
    # independent: the forward normalizes (mean 0, variance 1 before the affine)
    # and the gradient is the float64 autograd of sum(y * dy)
    y64 = (x - x.mean(axis=(0, 2), keepdims=True)) / np.sqrt(
        x.var(axis=(0, 2), keepdims=True) + eps
    )
    np.testing.assert_allclose(
        want[0], y64 * scale[None, :, None] + bias[None, :, None], rtol=1e-4, atol=1e-5
    )
    xh = y64
    m = n * s
    dxh = dy * scale[None, :, None]
    inv = 1 / np.sqrt(x.var(axis=(0, 2), keepdims=True) + eps)
    dx64 = (
        inv
        / m
        * (
            m * dxh
            - dxh.sum(axis=(0, 2), keepdims=True)
            - xh * (dxh * xh).sum(axis=(0, 2), keepdims=True)
        )
    )
    gw = bn_grad_model(dy, x, scale, want[3], want[4])
    np.testing.assert_allclose(gw[0], dx64, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gw[2], dy.sum(axis=(0, 2)), rtol=1e-4, atol=1e-5)


def test_batchnorm_running_stats_optional(lib: Lib) -> None:
    x = randn(3, 2, 4)
    one, zero = np.ones(2, F32), np.zeros(2, F32)
    y, mean, inv = Guarded((3, 2, 4)), Guarded((2,)), Guarded((2,))
    args = BatchNormArgs(
        p(x),
        p(one),
        p(zero),
        p(zero),
        p(one),
        y.ptr,
        None,
        None,
        mean.ptr,
        inv.ptr,
        3,
        2,
        4,
        1e-5,
        0.9,
    )
    lib.run("dm_batchnorm_stats_fp32", args, 0)
    lib.run("dm_batchnorm_apply_fp32", args, 0)
    same_bits(y.check(), bn_model(x, one, zero, zero, one, 1e-5, 0.9)[0])


# ---------------------------------------------------------------- dropout


def dropout_bits(i: np.ndarray, seed: int, stream: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = (
            (i.astype(np.uint32) * np.uint32(0x9E3779B1))
            ^ np.uint32(seed)
            ^ (np.uint32(stream) * np.uint32(0x85EBCA77))
        )
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h


def test_dropout_bits_are_murmur3_fmix32() -> None:
    """The numpy model of the generator against murmur3's finalizer written
    with Python integers (its published constants)."""

    def fmix(h: int) -> int:
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & 0xFFFFFFFF
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & 0xFFFFFFFF
        return h ^ (h >> 16)

    i = np.arange(1000)
    got = dropout_bits(i, 1234, 7)
    want = [
        fmix(((k * 0x9E3779B1) & 0xFFFFFFFF) ^ 1234 ^ ((7 * 0x85EBCA77) & 0xFFFFFFFF))
        for k in range(1000)
    ]
    assert got.tolist() == want


@pytest.mark.parametrize("ratio", [0.0, 0.1, 0.25, 0.5])
def test_dropout_and_grad(lib: Lib, ratio: float) -> None:
    n = 100_000
    x = randn(n)
    thr = round((1 - ratio) * 2**24)
    scale = F32(1) / (F32(1) - F32(ratio))
    seed, stream = 0xC0FFEE, 3
    keep = (dropout_bits(np.arange(n), seed, stream) >> np.uint32(8)) < np.uint32(thr)
    want_y = np.where(keep, x * scale, F32(0)).astype(F32)
    dy = randn(n)
    want_dx = np.where(keep, dy * scale, F32(0)).astype(F32)
    for team in TEAMS:
        y, mask, dx = Guarded((n,)), Guarded((n,), np.uint8), Guarded((n,))
        lib.run(
            "dm_dropout_fp32", DropoutArgs(p(x), y.ptr, mask.ptr, n, seed, stream, thr, scale), team
        )
        m = mask.check()
        same_bits(m, keep.astype(np.uint8))
        same_bits(y.check(), want_y)
        lib.run("dm_dropout_grad_fp32", DropoutGradArgs(p(dy), p(m), dx.ptr, n, scale), team)
        same_bits(dx.check(), want_dx)
    # the keep rate over 10^5 draws is within 1% of 1 - p; p = 0 keeps all
    assert abs(keep.mean() - (1 - ratio)) <= 0.01
    if ratio == 0:
        same_bits(want_y, x)
    # another seed or stream gives another mask
    if ratio > 0:
        other = (dropout_bits(np.arange(n), seed, stream + 1) >> np.uint32(8)) < np.uint32(thr)
        assert (other != keep).mean() > 0.1


# ---------------------------------------------------------------- SCE with ignore_index


def sce_model(logits, labels, reduction, ignore):
    b = logits.shape[0]
    lp = np.zeros_like(logits)
    row = np.zeros(b, F32)
    for r in range(b):
        x = logits[r]
        mx = x[0]
        for v in x[1:]:
            mx = v if v > mx else mx
        lse = logf(seqsum(expf(x - mx)))
        lp[r] = (x - mx) - lse
        row[r] = F32(0) if labels[r] == ignore else -lp[r, labels[r]]
    kept = labels != ignore
    s = seqsum(row[kept]) if kept.any() else F32(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        loss = s / F32(kept.sum()) if reduction == 0 else s
    return lp, row, np.array([loss], F32)


def sce_grad_model(dy, lp, labels, reduction, ignore):
    k = F32(dy)
    kept = labels != ignore
    if reduction == 0:
        k = F32(k / F32(kept.sum()))
    onehot = np.zeros_like(lp)
    for r, lab in enumerate(labels):
        if lab != ignore:
            onehot[r, lab] = 1
    dx = ((expf(lp) - onehot) * k).astype(F32)
    dx[~kept] = 0
    return dx


@pytest.mark.parametrize("reduction", [0, 1], ids=["mean", "sum"])
def test_sce_ignore_index(lib: Lib, reduction: int) -> None:
    b, c, ignore = 13, 6, -100
    logits = randn(b, c, scale=2.0)
    labels = RNG.integers(0, c, b).astype(np.int64)
    labels[[1, 4, 5, 11]] = ignore
    want = sce_model(logits, labels, reduction, ignore)
    dy = np.array([0.5], F32)
    want_dx = sce_grad_model(dy[0], want[0], labels, reduction, ignore)
    for team in TEAMS:
        lp, row, loss = Guarded((b, c)), Guarded((b,)), Guarded((1,))
        args = SceIIArgs(
            p(logits), p(labels), lp.ptr, row.ptr, loss.ptr, b, c, reduction, 1, ignore
        )
        lib.run("dm_sce_ii_logprob_fp32", args, team)
        lib.run("dm_sce_ii_reduce_fp32", args, team)
        for g_, w_ in zip((lp.check(), row.check(), loss.check()), want, strict=True):
            same_bits(g_, w_)
        dx = Guarded((b, c))
        lpv = lp.check()
        lib.run(
            "dm_sce_ii_grad_fp32",
            SceIIGradArgs(p(dy), p(lpv), p(labels), dx.ptr, b, c, reduction, 1, ignore),
            team,
        )
        same_bits(dx.check(), want_dx)
    # independent: torch's semantics, mean over the kept rows, in float64
    kept = labels != ignore
    lp64 = logits - np.log(np.exp(logits.astype(np.float64)).sum(1, keepdims=True))
    nll = -lp64[np.arange(b)[kept], labels[kept]]
    ref = nll.mean() if reduction == 0 else nll.sum()
    np.testing.assert_allclose(want[2][0], ref, rtol=1e-5)


def test_sce_without_ignore_is_the_plain_loss(lib: Lib) -> None:
    """has_ignore 0: label -100 would be out of range, so every label is a
    class; the loss is the mean over all rows."""
    b, c = 5, 3
    logits = randn(b, c)
    labels = RNG.integers(0, c, b).astype(np.int64)
    lp, row, loss = Guarded((b, c)), Guarded((b,)), Guarded((1,))
    args = SceIIArgs(p(logits), p(labels), lp.ptr, row.ptr, loss.ptr, b, c, 0, 0, 0)
    lib.run("dm_sce_ii_logprob_fp32", args, 0)
    lib.run("dm_sce_ii_reduce_fp32", args, 0)
    same_bits(loss.check(), sce_model(logits, labels, 0, -(2**62))[2])


# ---------------------------------------------------------------- log-softmax


def log_softmax_model(x, axis):
    xm = np.moveaxis(x, axis, -1)
    out = np.zeros_like(xm)
    for idx in np.ndindex(xm.shape[:-1]):
        v = xm[idx]
        mx = v[0]
        for t in v[1:]:
            mx = t if t > mx else mx
        out[idx] = (v - mx) - logf(seqsum(expf(v - mx)))
    return np.moveaxis(out, -1, axis).astype(F32)


def log_softmax_grad_model(dy, y, axis):
    dym, ym = np.moveaxis(dy, axis, -1), np.moveaxis(y, axis, -1)
    out = np.zeros_like(dym)
    for idx in np.ndindex(dym.shape[:-1]):
        s = seqsum(dym[idx])
        out[idx] = dym[idx] - expf(ym[idx]) * s
    return np.moveaxis(out, -1, axis).astype(F32)


@pytest.mark.parametrize(("shape", "axis"), [((6, 5), 1), ((3, 4, 5), 1), ((2, 3, 4), 0)], ids=str)
def test_log_softmax_and_grad(lib: Lib, shape: tuple, axis: int) -> None:
    x = randn(*shape, scale=3.0)
    outer = int(np.prod(shape[:axis])) if axis else 1
    ln, inner = shape[axis], int(np.prod(shape[axis + 1 :]))
    want = log_softmax_model(x, axis)
    dy = randn(*shape)
    want_dx = log_softmax_grad_model(dy, want, axis)
    for team in TEAMS:
        y = Guarded(shape)
        lib.run("dm_log_softmax_fp32", LogSoftmaxArgs(p(x), None, y.ptr, outer, ln, inner), team)
        yv = y.check()
        same_bits(yv, want)
        dx = Guarded(shape)
        lib.run(
            "dm_log_softmax_grad_fp32", LogSoftmaxArgs(p(dy), p(yv), dx.ptr, outer, ln, inner), team
        )
        same_bits(dx.check(), want_dx)
    x64 = x.astype(np.float64)
    ref = x64 - np.log(np.exp(x64).sum(axis=axis, keepdims=True))
    np.testing.assert_allclose(want, ref, rtol=1e-5, atol=1e-5)
    p64 = np.exp(ref)
    np.testing.assert_allclose(
        want_dx, dy - p64 * dy.sum(axis=axis, keepdims=True), rtol=1e-4, atol=1e-5
    )


# ---------------------------------------------------------------- gather, scatter-add


@pytest.mark.parametrize(
    ("outer", "rows", "inner", "n"), [(1, 20, 8, 15), (3, 5, 2, 7), (2, 4, 1, 1)]
)
def test_gather_and_grad(lib: Lib, outer: int, rows: int, inner: int, n: int) -> None:
    data = randn(outer, rows, inner)
    idx = RNG.integers(-rows, rows, n).astype(np.int64)
    idx[0] = idx[-1] = 1  # a repeated row
    want = data[:, idx % rows, :]
    dy = randn(outer, n, inner)
    want_dx = np.zeros((outer, rows, inner), F32)
    for j in range(n):  # in increasing j, one float32 add each
        want_dx[:, idx[j] % rows, :] = (want_dx[:, idx[j] % rows, :] + dy[:, j, :]).astype(F32)
    for team in TEAMS:
        y = Guarded((outer, n, inner))
        lib.run("dm_gather_fp32", GatherArgs(p(data), p(idx), y.ptr, outer, rows, inner, n), team)
        same_bits(y.check(), want)
        dx = Guarded((outer, rows, inner))
        lib.run(
            "dm_gather_grad_fp32",
            GatherGradArgs(p(dy), p(idx), dx.ptr, outer, rows, inner, n),
            team,
        )
        same_bits(dx.check(), want_dx)
    ref = np.zeros((outer, rows, inner))
    np.add.at(ref, (slice(None), idx % rows), dy.astype(np.float64))
    np.testing.assert_allclose(want_dx, ref, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- concat, split


@pytest.mark.parametrize(
    ("shapes", "axis"),
    [([(2, 3, 4), (2, 1, 4), (2, 5, 4)], 1), ([(3, 2), (3, 6)], 1), ([(2, 3), (4, 3)], 0)],
    ids=str,
)
def test_concat_and_split(lib: Lib, shapes: list, axis: int) -> None:
    parts = [randn(*s) for s in shapes]
    whole = np.concatenate(parts, axis=axis)
    outer = int(np.prod(whole.shape[:axis])) if axis else 1
    inner = int(np.prod(whole.shape[axis + 1 :]))
    lens = [s[axis] for s in shapes]
    offsets = np.cumsum([0, *lens[:-1]]).tolist()
    total = sum(lens)
    for team in TEAMS:
        y = Guarded(whole.shape)
        for a, off, ln in zip(parts, offsets, lens, strict=True):
            args = ConcatArgs(y.ptr, p(a), outer, total, off, ln, inner)
            lib.run("dm_concat_fp32", args, team)
        same_bits(y.check(), whole)
        outs = [Guarded(s) for s in shapes]
        src = whole.copy()
        for o, off, ln in zip(outs, offsets, lens, strict=True):
            lib.run("dm_split_fp32", ConcatArgs(p(src), o.ptr, outer, total, off, ln, inner), team)
        for o, want in zip(outs, parts, strict=True):
            same_bits(o.check(), want)
