"""runtime_c: every fp32 kernel against numpy, through the PMSIS host emulation.

The kernels and runtime_c/host/pmsis_host.c are built into a shared library
(once with the default NUM_CORES=8, once with NUM_CORES=3 for uneven splits)
and each kernel is run by a team fork called through ctypes. The numpy
references are written here, independently of deeploy_mlir.

Where the kernel's summation order is specified (gemm: k = 0..K-1; reduce_sum
and the loss reduction: increasing flat index) the test also rebuilds that
order in float32 and asks for identical bits: the kernels are built with
-std=c11, so gcc does not contract a*b+c into an FMA. Elsewhere (exp, log)
the tolerance is a few float32 ulps."""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
KERNELS = sorted((RT / "kernels").glob("*.c"))
HOST = RT / "host" / "pmsis_host.c"
HEADERS = [*sorted((RT / "include").glob("*.h")), RT / "host" / "pmsis.h"]
INCS = [f"-I{RT / 'include'}", f"-I{RT / 'host'}"]
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
GCC = shutil.which("gcc")
RNG = np.random.default_rng(1234)

pytestmark = pytest.mark.skipif(GCC is None, reason="gcc is needed to build runtime_c")

# ---------------------------------------------------------------- ctypes mirrors

PTR, U32, F32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_float
U32x4 = U32 * 4

DM_BINARY_ADD, DM_BINARY_SUB, DM_BINARY_MUL, DM_BINARY_DIV = 0, 1, 2, 3
DM_REDUCTION_MEAN, DM_REDUCTION_SUM = 0, 1
PI_PERF_ACTIVE_CYCLES, PI_PERF_INSTR, PI_PERF_CYCLES = 0, 1, 17

BARRIER_MESSAGE = (
    "pi_cl_team_barrier: kernels must not use barriers under the host emulation; "
    "split the kernel into two forks"
)


class GemmArgs(ctypes.Structure):
    c_name = "dm_gemm_args_t"
    _fields_ = [
        ("A", PTR),
        ("B", PTR),
        ("C", PTR),
        ("Y", PTR),
        ("M", U32),
        ("N", U32),
        ("K", U32),
        ("trans_a", U32),
        ("trans_b", U32),
        ("alpha", F32),
        ("beta", F32),
        ("c_stride_m", U32),
        ("c_stride_n", U32),
    ]


class BinaryArgs(ctypes.Structure):
    c_name = "dm_binary_args_t"
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


class UnaryArgs(ctypes.Structure):
    c_name = "dm_unary_args_t"
    _fields_ = [("X", PTR), ("Y", PTR), ("size", U32)]


class ReluGradArgs(ctypes.Structure):
    c_name = "dm_relu_grad_args_t"
    _fields_ = [("dY", PTR), ("X", PTR), ("dX", PTR), ("size", U32)]


class SceArgs(ctypes.Structure):
    c_name = "dm_sce_args_t"
    _fields_ = [
        ("logits", PTR),
        ("labels", PTR),
        ("log_prob", PTR),
        ("row_loss", PTR),
        ("loss", PTR),
        ("batch", U32),
        ("classes", U32),
        ("reduction", U32),
    ]


class SceGradArgs(ctypes.Structure):
    c_name = "dm_sce_grad_args_t"
    _fields_ = [
        ("dY", PTR),
        ("log_prob", PTR),
        ("labels", PTR),
        ("dX", PTR),
        ("batch", U32),
        ("classes", U32),
        ("reduction", U32),
    ]


class ReduceArgs(ctypes.Structure):
    c_name = "dm_reduce_args_t"
    _fields_ = [
        ("X", PTR),
        ("Y", PTR),
        ("rank", U32),
        ("shape", U32x4),
        ("reduce_mask", U32),
    ]


class AccumulateArgs(ctypes.Structure):
    c_name = "dm_accumulate_args_t"
    _fields_ = [("buffer", PTR), ("grad", PTR), ("reset", PTR), ("out", PTR), ("size", U32)]


class SgdArgs(ctypes.Structure):
    c_name = "dm_sgd_args_t"
    _fields_ = [("weight", PTR), ("grad", PTR), ("lr", PTR), ("out", PTR), ("size", U32)]


class CopyArgs(ctypes.Structure):
    c_name = "dm_copy_args_t"
    _fields_ = [("src", PTR), ("dst", PTR), ("bytes", U32)]


STRUCTS = [
    GemmArgs,
    BinaryArgs,
    UnaryArgs,
    ReluGradArgs,
    SceArgs,
    SceGradArgs,
    ReduceArgs,
    AccumulateArgs,
    SgdArgs,
    CopyArgs,
]

# Test-only C: the layout of every args struct (to check the mirrors above),
# a kernel that records the team it ran in, one that calls a barrier, and the
# harness sequence (open the cluster, send a task that forks).
PROBE_C = r"""
#include <stddef.h>
#include "dm_kernels.h"

void dm_probe_team(void *arg)
{
    int32_t *out = (int32_t *)arg;
    uint32_t id = pi_core_id();
    out[id] = (int32_t)(id * 100u + (uint32_t)pi_cl_team_nb_cores());
}

void dm_probe_barrier(void *arg)
{
    (void)arg;
    pi_cl_team_barrier();
}

static void dm_probe_task(void *arg)
{
    int32_t *out = (int32_t *)arg;
    out[0] = (int32_t)pi_core_id();
    out[1] = pi_cl_team_nb_cores();
    pi_cl_team_fork(0, dm_probe_team, out + 2);
}

int dm_probe_cluster(int32_t *out, int nb_cores)
{
    struct pi_device cluster;
    struct pi_cluster_conf conf;
    struct pi_cluster_task task;
    pi_cluster_conf_init(&conf);
    pi_open_from_conf(&cluster, &conf);
    if (pi_cluster_open(&cluster) != 0) return -1;
    pi_cluster_task(&task, dm_probe_task, out);
    task.nb_cores = nb_cores;
    int r = pi_cluster_send_task_to_cl(&cluster, &task);
    pi_cluster_close(&cluster);
    return r;
}

int dm_probe_closed_cluster(void)
{
    struct pi_device cluster;
    struct pi_cluster_conf conf;
    struct pi_cluster_task task;
    int32_t out[2 + NUM_CORES];
    pi_cluster_conf_init(&conf);
    pi_open_from_conf(&cluster, &conf);
    return pi_cluster_send_task_to_cl(&cluster, pi_cluster_task(&task, dm_probe_task, out));
}
"""


def _probe_layout_c() -> str:
    lines = []
    for s in STRUCTS:
        items = [f"sizeof({s.c_name})"] + [f"offsetof({s.c_name}, {f[0]})" for f in s._fields_]
        lines.append(f"const size_t dm_layout_{s.c_name}[] = {{{', '.join(items)}}};")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- building


def _gcc(*args: str | Path) -> None:
    r = subprocess.run([GCC, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


class Runtime:
    """The runtime library built with NUM_CORES = cores, called through ctypes."""

    def __init__(self, path: Path, cores: int) -> None:
        self.path, self.cores = path, cores
        self.lib = lib = ctypes.CDLL(str(path))
        lib.pi_cl_team_fork.argtypes = [ctypes.c_int, PTR, PTR]
        lib.pi_cl_team_fork.restype = None
        lib.pi_perf_read.argtypes = [ctypes.c_int]
        lib.pi_perf_read.restype = ctypes.c_uint
        lib.dm_probe_cluster.argtypes = [PTR, ctypes.c_int]

    def run(self, kernel: str, args: ctypes.Structure | np.ndarray, nb_cores: int = 0) -> None:
        """pi_cl_team_fork(nb_cores, kernel, &args); nb_cores 0: NUM_CORES."""
        fn = ctypes.cast(getattr(self.lib, kernel), PTR)
        arg = args.ctypes.data if isinstance(args, np.ndarray) else ctypes.addressof(args)
        self.lib.pi_cl_team_fork(nb_cores, fn, arg)

    def layout(self, s: type[ctypes.Structure]) -> list[int]:
        arr = (ctypes.c_size_t * (1 + len(s._fields_))).in_dll(self.lib, f"dm_layout_{s.c_name}")
        return list(arr)


@pytest.fixture(scope="session")
def probe_c(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("probe") / "probe.c"
    p.write_text(PROBE_C + _probe_layout_c())
    return p


@pytest.fixture(scope="session", params=[8, 3], ids=["cores8", "cores3"])
def rt(request: pytest.FixtureRequest, tmp_path_factory, probe_c: Path) -> Runtime:
    cores = request.param
    lib = tmp_path_factory.mktemp(f"rt{cores}") / f"libdm_runtime_{cores}.so"
    defs = [] if cores == 8 else [f"-DNUM_CORES={cores}"]  # 8 is the header's default
    _gcc(*CFLAGS, "-fPIC", "-shared", *defs, *INCS, *KERNELS, HOST, probe_c, "-o", lib, "-lm")
    return Runtime(lib, cores)


def ptr(a: np.ndarray | None) -> int | None:
    if a is None:
        return None
    assert a.flags.c_contiguous
    return a.ctypes.data


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def u32x4(vals) -> U32x4:
    v = [int(x) for x in vals]
    return U32x4(*(v + [0] * (4 - len(v))))


# ---------------------------------------------------------------- compile and hygiene


def test_sources_compile_pedantic(tmp_path: Path) -> None:
    for src in [*KERNELS, HOST]:
        _gcc(*CFLAGS, "-pedantic", *INCS, "-c", src, "-o", tmp_path / (src.stem + ".o"))
    for h in HEADERS:  # every header compiles on its own
        tu = tmp_path / f"only_{h.stem}.c"
        tu.write_text(f'#include "{h.name}"\n')
        _gcc(*CFLAGS, "-pedantic", *INCS, "-c", tu, "-o", tmp_path / f"only_{h.stem}.o")


ALLOWED_KERNEL_CALLS = {
    "pi_core_id",
    "pi_cl_team_nb_cores",
    "memcpy",
    "memset",
    "expf",
    "logf",
    "__stack_chk_fail",
    "_GLOBAL_OFFSET_TABLE_",
}


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is needed")
def test_kernels_have_no_mutable_globals_and_call_no_runtime_services(tmp_path: Path) -> None:
    """no global mutable state; no barrier, malloc or printf in any kernel"""
    for src in KERNELS:
        obj = tmp_path / (src.stem + ".o")
        _gcc(*CFLAGS, *INCS, "-c", src, "-o", obj)
        r = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True)
        syms = [line.split()[:2] for line in r.stdout.splitlines() if line.strip()]
        writable = [n for n, t in syms if t in "BbDdCGgSs"]
        assert not writable, f"{src.name}: global mutable state {writable}"
        calls = {n for n, t in syms if t == "U"} - ALLOWED_KERNEL_CALLS
        assert not calls, f"{src.name}: kernels must not call {sorted(calls)}"


def test_struct_mirrors_match_the_headers(rt: Runtime) -> None:
    for s in STRUCTS:
        want = [ctypes.sizeof(s)] + [getattr(s, f[0]).offset for f in s._fields_]
        assert rt.layout(s) == want, s.c_name


# ---------------------------------------------------------------- emulation semantics


def test_fork_runs_every_core_in_turn(rt: Runtime) -> None:
    for n in [0, 1, 2, rt.cores]:
        team = n or rt.cores
        out = np.full(rt.cores + 1, -1, np.int32)
        rt.run("dm_probe_team", out, nb_cores=n)
        want = [i * 100 + team for i in range(team)] + [-1] * (rt.cores + 1 - team)
        assert out.tolist() == want


def test_cluster_task_runs_on_core_0_and_forks(rt: Runtime) -> None:
    for nb in [0, 2]:
        out = np.full(2 + rt.cores, -1, np.int32)
        assert rt.lib.dm_probe_cluster(out.ctypes.data, nb) == 0
        team = nb or rt.cores
        assert out[:2].tolist() == [0, team]
        assert out[2 : 2 + rt.cores].tolist() == [i * 100 + rt.cores for i in range(rt.cores)]


def test_perf_counts_core_invocations_while_started(rt: Runtime) -> None:
    lib, x = rt.lib, np.zeros(rt.cores, np.int32)
    lib.pi_perf_conf((1 << PI_PERF_CYCLES) | (1 << PI_PERF_INSTR))
    lib.pi_perf_reset()
    lib.pi_perf_start()
    rt.run("dm_probe_team", x, nb_cores=0)
    rt.run("dm_probe_team", x, nb_cores=2)
    assert lib.pi_perf_read(PI_PERF_CYCLES) == rt.cores + 2
    assert lib.pi_perf_read(PI_PERF_INSTR) == rt.cores + 2
    lib.pi_perf_stop()
    rt.run("dm_probe_team", x, nb_cores=1)
    assert lib.pi_perf_read(PI_PERF_CYCLES) == rt.cores + 2
    lib.pi_perf_reset()
    assert lib.pi_perf_read(PI_PERF_CYCLES) == 0


def _run_child(rt: Runtime, code: str) -> subprocess.CompletedProcess[str]:
    prelude = f"import ctypes, sys\nlib = ctypes.CDLL({str(rt.path)!r})\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=30
    )


def test_barrier_aborts_with_a_message(rt: Runtime) -> None:
    r = _run_child(
        rt,
        "fn = ctypes.cast(lib.dm_probe_barrier, ctypes.c_void_p)\n"
        "lib.pi_cl_team_fork(0, fn, None)\n"
        "print('survived')\n",
    )
    assert r.returncode != 0
    assert BARRIER_MESSAGE in r.stderr
    assert "survived" not in r.stdout


def test_allocation_failures_abort_naming_the_size(rt: Runtime) -> None:
    r = _run_child(rt, "lib.pi_l2_malloc(-12)\n")
    assert r.returncode != 0 and "pi_l2_malloc" in r.stderr and "-12" in r.stderr
    if sys.platform.startswith("linux"):
        r = _run_child(
            rt,
            "import resource\n"
            "resource.setrlimit(resource.RLIMIT_AS, (1 << 29, resource.RLIM_INFINITY))\n"
            "lib.pi_cl_l1_malloc.argtypes = [ctypes.c_void_p, ctypes.c_uint32]\n"
            "lib.pi_cl_l1_malloc(None, 3 << 30)\n",
        )
        assert r.returncode != 0
        assert "pi_cl_l1_malloc" in r.stderr and str(3 << 30) in r.stderr


def test_allocators_and_closed_cluster(rt: Runtime) -> None:
    lib = rt.lib
    lib.pi_l2_malloc.restype = PTR
    lib.pi_l2_free.argtypes = [PTR, ctypes.c_int]
    for size in [0, 1, 4096]:
        p = lib.pi_l2_malloc(size)
        assert p
        ctypes.memset(p, 0x5A, size)
        lib.pi_l2_free(p, size)
    r = _run_child(rt, "lib.dm_probe_closed_cluster()\n")
    assert r.returncode != 0 and "not open" in r.stderr


def test_fork_rejects_more_cores_than_the_cluster_has(rt: Runtime) -> None:
    r = _run_child(
        rt,
        f"fn = ctypes.cast(lib.dm_probe_team, ctypes.c_void_p)\n"
        f"lib.pi_cl_team_fork({rt.cores + 1}, fn, None)\n",
    )
    assert r.returncode != 0 and "pi_cl_team_fork" in r.stderr


# ---------------------------------------------------------------- gemm


def gemm_in_order(ap, bp, c2, alpha, beta):
    """Y as the kernel computes it: float32, k = 0..K-1 in order."""
    acc = np.zeros((ap.shape[0], bp.shape[1]), np.float32)
    for k in range(ap.shape[1]):
        acc = acc + ap[:, k : k + 1] * bp[k : k + 1, :]
    y = np.float32(alpha) * acc
    return y if c2 is None else y + np.float32(beta) * c2


def c_strides(c_shape: tuple[int, ...]) -> tuple[int, int]:
    cm, cn = ([1, 1, *c_shape])[-2:]
    return (cn if cm != 1 else 0), (1 if cn != 1 else 0)


GEMM_C_SHAPES = {
    "none": None,
    "scalar": lambda m, n: (),
    "n": lambda m, n: (n,),
    "1n": lambda m, n: (1, n),
    "m1": lambda m, n: (m, 1),
    "mn": lambda m, n: (m, n),
}


def _gemm(rt, m, n, k, ta, tb, c_kind, alpha=1.0, beta=1.0):
    a = f32(k, m) if ta else f32(m, k)
    b = f32(n, k) if tb else f32(k, n)
    shape_fn = GEMM_C_SHAPES[c_kind]
    c = None if shape_fn is None else f32(*shape_fn(m, n))
    y = np.full((m + 1, n), 7.0, np.float32)  # one guard row
    sm, sn = c_strides(c.shape) if c is not None else (0, 0)
    args = GemmArgs(ptr(a), ptr(b), ptr(c), ptr(y), m, n, k, ta, tb, alpha, beta, sm, sn)
    rt.run("dm_gemm_fp32", args)
    ap, bp = (a.T if ta else a), (b.T if tb else b)
    c2 = None if c is None else np.broadcast_to(c.reshape([1, 1, *c.shape][-2:]), (m, n))
    want = alpha * (ap.astype(np.float64) @ bp.astype(np.float64))
    if c2 is not None:
        want = want + beta * c2
    np.testing.assert_allclose(y[:m], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y[:m], gemm_in_order(ap, bp, c2, alpha, beta))
    assert (y[m] == 7.0).all()


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
def test_gemm_transposes(rt: Runtime, ta: int, tb: int) -> None:
    _gemm(rt, 7, 5, 3, ta, tb, "mn", alpha=0.5, beta=2.0)
    _gemm(rt, 13, 9, 17, ta, tb, "none")


@pytest.mark.parametrize("c_kind", list(GEMM_C_SHAPES))
def test_gemm_bias_broadcast(rt: Runtime, c_kind: str) -> None:
    _gemm(rt, 7, 5, 3, 0, 1, c_kind, alpha=1.0, beta=1.0)
    _gemm(rt, 6, 4, 8, 1, 0, c_kind, alpha=-1.5, beta=0.25)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (2, 3, 1), (3, 1, 4), (5, 2, 2), (9, 1, 1)])
def test_gemm_small_sizes(rt: Runtime, m: int, n: int, k: int) -> None:
    """fewer rows than cores, and rows that do not divide evenly"""
    _gemm(rt, m, n, k, 0, 0, "n")
    _gemm(rt, m, n, k, 1, 1, "none")


# ---------------------------------------------------------------- elementwise


def bcast_strides(out: tuple[int, ...], shape: tuple[int, ...]) -> list[int]:
    """Element strides of a contiguous `shape` read as `out` (numpy broadcast)."""
    full = [1] * (len(out) - len(shape)) + list(shape)
    strides, s = [0] * len(out), 1
    for d in reversed(range(len(out))):
        strides[d] = s if full[d] != 1 else 0
        s *= full[d]
    return strides


NP_OPS = {
    DM_BINARY_ADD: np.add,
    DM_BINARY_SUB: np.subtract,
    DM_BINARY_MUL: np.multiply,
    DM_BINARY_DIV: np.divide,
}


def operand(shape) -> np.ndarray:
    """values away from 0 so that division is well conditioned"""
    mag = f32(*shape, lo=0.5, hi=2.0)
    sign = np.where(RNG.random(shape) < 0.5, -1.0, 1.0).astype(np.float32)
    return np.ascontiguousarray(mag * sign)


def _binary_args(a, b, y, out, op) -> BinaryArgs:
    return BinaryArgs(
        ptr(a),
        ptr(b),
        ptr(y),
        len(out),
        u32x4(out),
        u32x4(bcast_strides(out, a.shape)),
        u32x4(bcast_strides(out, b.shape)),
        op,
    )


BINARY_SHAPES = [
    ((), ()),
    ((5,), (5,)),
    ((7,), ()),
    ((3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((2, 3, 5), (3, 1)),
    ((2, 1, 5), (1, 3, 1)),
    ((2, 3, 4, 5), (1, 3, 1, 5)),
    ((1,), (2, 3, 1, 4)),
]


@pytest.mark.parametrize("op", list(NP_OPS), ids=["add", "sub", "mul", "div"])
@pytest.mark.parametrize("sa,sb", BINARY_SHAPES, ids=[f"{a}x{b}" for a, b in BINARY_SHAPES])
def test_binary_broadcast(rt: Runtime, op: int, sa, sb) -> None:
    a, b = operand(sa), operand(sb)
    want = NP_OPS[op](a, b)
    out = want.shape
    y = np.full(math.prod(out) + 1, 7.0, np.float32)
    rt.run("dm_binary_fp32", _binary_args(a, b, y, out, op))
    np.testing.assert_array_equal(y[:-1].reshape(out), want)
    assert y[-1] == 7.0


@pytest.mark.parametrize("op", list(NP_OPS), ids=["add", "sub", "mul", "div"])
def test_binary_in_place(rt: Runtime, op: int) -> None:
    out = (4, 3, 5)
    a, b = operand(out), operand((3, 1))  # Y = A, B broadcast
    want = NP_OPS[op](a, b)
    rt.run("dm_binary_fp32", _binary_args(a, b, a, out, op))
    np.testing.assert_array_equal(a, want)
    a, b = operand((5,)), operand(out)  # Y = B, A broadcast
    want = NP_OPS[op](a, b)
    rt.run("dm_binary_fp32", _binary_args(a, b, b, out, op))
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 8, 9, 31])
def test_relu(rt: Runtime, size: int) -> None:
    x = f32(size)
    y = np.full(size + 1, 7.0, np.float32)
    rt.run("dm_relu_fp32", UnaryArgs(ptr(x), ptr(y), size))
    np.testing.assert_array_equal(y[:size], np.maximum(x, 0))
    assert y[size] == 7.0
    want = np.maximum(x, 0)
    rt.run("dm_relu_fp32", UnaryArgs(ptr(x), ptr(x), size))  # in place
    np.testing.assert_array_equal(x, want)


def test_relu_grad(rt: Runtime) -> None:
    size = 29
    x, dy = f32(size), f32(size)
    x[3] = 0.0  # X == 0 gives 0
    want = np.where(x > 0, dy, np.float32(0))
    dx = np.full(size, 7.0, np.float32)
    rt.run("dm_relu_grad_fp32", ReluGradArgs(ptr(dy), ptr(x), ptr(dx), size))
    np.testing.assert_array_equal(dx, want)
    relu_out = np.maximum(x, 0)  # X may be the ReLU's output: same result
    rt.run("dm_relu_grad_fp32", ReluGradArgs(ptr(dy), ptr(relu_out), ptr(dx), size))
    np.testing.assert_array_equal(dx, want)
    dy2 = dy.copy()  # dX aliases dY
    rt.run("dm_relu_grad_fp32", ReluGradArgs(ptr(dy2), ptr(x), ptr(dy2), size))
    np.testing.assert_array_equal(dy2, want)
    x2 = x.copy()  # dX aliases X
    rt.run("dm_relu_grad_fp32", ReluGradArgs(ptr(dy), ptr(x2), ptr(x2), size))
    np.testing.assert_array_equal(x2, want)


# ---------------------------------------------------------------- loss


def log_softmax64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _sce(rt, batch, classes, reduction, with_row_loss, scale=3.0):
    logits = f32(batch, classes, lo=-scale, hi=scale)
    labels = RNG.integers(0, classes, size=batch).astype(np.int64)
    log_prob = np.full((batch, classes), 7.0, np.float32)
    row_loss = np.full(batch, 7.0, np.float32) if with_row_loss else None
    loss = np.full(2, 7.0, np.float32)
    args = SceArgs(
        ptr(logits),
        ptr(labels),
        ptr(log_prob),
        ptr(row_loss),
        ptr(loss),
        batch,
        classes,
        reduction,
    )
    rt.run("dm_sce_logprob_fp32", args)
    rt.run("dm_sce_reduce_fp32", args)
    lp64 = log_softmax64(logits)
    np.testing.assert_allclose(log_prob, lp64, rtol=1e-5, atol=1e-6)
    rows64 = -lp64[np.arange(batch), labels]
    want = rows64.mean() if reduction == DM_REDUCTION_MEAN else rows64.sum()
    np.testing.assert_allclose(loss[0], want, rtol=1e-5)
    assert loss[1] == 7.0
    # the reduction sums the kernel's own row losses in order b = 0..
    rows = -log_prob[np.arange(batch), labels]
    if row_loss is not None:
        np.testing.assert_array_equal(row_loss, rows)
    acc = np.float32(0)
    for r in rows:
        acc = np.float32(acc + r)
    if reduction == DM_REDUCTION_MEAN:
        acc = np.float32(acc / np.float32(batch))
    assert loss[0] == acc


@pytest.mark.parametrize("reduction", [DM_REDUCTION_MEAN, DM_REDUCTION_SUM], ids=["mean", "sum"])
@pytest.mark.parametrize(
    "batch,classes", [(1, 1), (1, 10), (3, 4), (5, 7), (7, 2), (9, 3), (11, 5), (16, 10)]
)
def test_sce_loss(rt: Runtime, reduction: int, batch: int, classes: int) -> None:
    _sce(rt, batch, classes, reduction, with_row_loss=True)
    _sce(rt, batch, classes, reduction, with_row_loss=False)


def test_sce_loss_large_logits_are_stable(rt: Runtime) -> None:
    _sce(rt, 4, 6, DM_REDUCTION_MEAN, with_row_loss=True, scale=80.0)


def test_sce_log_prob_in_place(rt: Runtime) -> None:
    batch, classes = 5, 4
    logits = f32(batch, classes, lo=-3, hi=3)
    labels = RNG.integers(0, classes, size=batch).astype(np.int64)
    want = log_softmax64(logits)
    loss = np.zeros(1, np.float32)
    args = SceArgs(
        ptr(logits), ptr(labels), ptr(logits), None, ptr(loss), batch, classes, DM_REDUCTION_SUM
    )
    rt.run("dm_sce_logprob_fp32", args)
    rt.run("dm_sce_reduce_fp32", args)
    np.testing.assert_allclose(logits, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss[0], -want[np.arange(batch), labels].sum(), rtol=1e-5)


@pytest.mark.parametrize("reduction", [DM_REDUCTION_MEAN, DM_REDUCTION_SUM], ids=["mean", "sum"])
@pytest.mark.parametrize("dy_value", [None, 0.75])
@pytest.mark.parametrize("batch,classes", [(1, 3), (5, 7), (10, 4)])
def test_sce_grad(rt: Runtime, reduction: int, dy_value, batch: int, classes: int) -> None:
    log_prob = log_softmax64(f32(batch, classes, lo=-3, hi=3)).astype(np.float32)
    labels = RNG.integers(0, classes, size=batch).astype(np.int64)
    dy = None if dy_value is None else np.array([dy_value], np.float32)
    onehot = np.eye(classes)[labels]
    scale = (1.0 if dy is None else dy_value) / (batch if reduction == DM_REDUCTION_MEAN else 1)
    want = (np.exp(log_prob.astype(np.float64)) - onehot) * scale
    dx = np.full((batch + 1, classes), 7.0, np.float32)
    args = SceGradArgs(ptr(dy), ptr(log_prob), ptr(labels), ptr(dx), batch, classes, reduction)
    rt.run("dm_sce_grad_fp32", args)
    np.testing.assert_allclose(dx[:batch], want, rtol=1e-5, atol=1e-6)
    assert (dx[batch] == 7.0).all()
    # dX may alias log_prob
    args = SceGradArgs(
        ptr(dy), ptr(log_prob), ptr(labels), ptr(log_prob), batch, classes, reduction
    )
    rt.run("dm_sce_grad_fp32", args)
    np.testing.assert_array_equal(log_prob, dx[:batch])


# ---------------------------------------------------------------- reduce_sum


def reduce_in_order(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """float32 sums of each output's inputs in increasing flat-index order."""
    kept = [d for d in range(x.ndim) if d not in axes]
    xt = x.transpose(kept + list(axes))
    outs = math.prod(x.shape[d] for d in kept)
    flat = xt.reshape(outs, -1)
    acc = np.zeros(outs, np.float32)
    for r in range(flat.shape[1]):
        acc = acc + flat[:, r]
    return acc


REDUCE_CASES = [
    ((6, 5), (0,)),
    ((6, 5), (1,)),
    ((6, 5), (0, 1)),
    ((3, 1), (1,)),
    ((2, 3, 4), (1,)),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), ()),
    ((2, 3, 4), (0, 1, 2)),
    ((2, 3, 4, 5), (0,)),
    ((2, 3, 4, 5), (1, 3)),
    ((2, 3, 4, 5), (0, 2, 3)),
    ((3, 2, 5, 4), (0, 1, 2)),
    ((4, 1, 3, 2), (1, 2)),
]


@pytest.mark.parametrize("shape,axes", REDUCE_CASES, ids=[f"{s}-{a}" for s, a in REDUCE_CASES])
def test_reduce_sum(rt: Runtime, shape, axes) -> None:
    x = f32(*shape)
    want = x.astype(np.float64).sum(axis=axes)
    size = want.size
    y = np.full(size + 1, 7.0, np.float32)
    mask = sum(1 << d for d in axes)
    rt.run("dm_reduce_sum_fp32", ReduceArgs(ptr(x), ptr(y), len(shape), u32x4(shape), mask))
    np.testing.assert_allclose(y[:size].reshape(want.shape), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(y[:size], reduce_in_order(x, axes))
    assert y[size] == 7.0


# ---------------------------------------------------------------- optimizer


@pytest.mark.parametrize("reset", [0, 1])
@pytest.mark.parametrize("size", [1, 5, 37])
def test_accumulate(rt: Runtime, reset: int, size: int) -> None:
    buf, grad = f32(size), f32(size)
    flag = np.array([reset], np.uint8)
    want = grad.copy() if reset else buf + grad
    out = np.full(size, 7.0, np.float32)
    rt.run("dm_accumulate_fp32", AccumulateArgs(ptr(buf), ptr(grad), ptr(flag), ptr(out), size))
    np.testing.assert_array_equal(out, want)
    b2 = buf.copy()  # out aliases buffer: the normal case
    rt.run("dm_accumulate_fp32", AccumulateArgs(ptr(b2), ptr(grad), ptr(flag), ptr(b2), size))
    np.testing.assert_array_equal(b2, want)
    g2 = grad.copy()  # out aliases grad
    rt.run("dm_accumulate_fp32", AccumulateArgs(ptr(buf), ptr(g2), ptr(flag), ptr(g2), size))
    np.testing.assert_array_equal(g2, want)


def test_accumulate_any_nonzero_flag_resets(rt: Runtime) -> None:
    buf, grad, flag = f32(9), f32(9), np.array([2], np.uint8)
    rt.run("dm_accumulate_fp32", AccumulateArgs(ptr(buf), ptr(grad), ptr(flag), ptr(buf), 9))
    np.testing.assert_array_equal(buf, grad)


@pytest.mark.parametrize("size", [1, 3, 20, 101])
def test_sgd(rt: Runtime, size: int) -> None:
    w, g, lr = f32(size), f32(size), np.array([0.05], np.float32)
    want = w - lr[0] * g
    out = np.full(size, 7.0, np.float32)
    rt.run("dm_sgd_fp32", SgdArgs(ptr(w), ptr(g), ptr(lr), ptr(out), size))
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(out, w.astype(np.float64) - 0.05 * g, rtol=1e-6, atol=1e-7)
    rt.run("dm_sgd_fp32", SgdArgs(ptr(w), ptr(g), ptr(lr), ptr(w), size))  # in place
    np.testing.assert_array_equal(w, want)


# ---------------------------------------------------------------- copy


@pytest.mark.parametrize("nbytes", [0, 1, 2, 7, 8, 13, 64, 1001])
def test_copy(rt: Runtime, nbytes: int) -> None:
    src = RNG.integers(0, 256, size=nbytes + 3, dtype=np.uint8)
    dst = np.zeros(nbytes + 3, np.uint8)
    rt.run("dm_copy", CopyArgs(ptr(src), ptr(dst), nbytes))
    np.testing.assert_array_equal(dst[:nbytes], src[:nbytes])
    assert (dst[nbytes:] == 0).all()


# ---------------------------------------------------------------- every team size


def test_every_team_size_gives_the_same_result(rt: Runtime) -> None:
    """chunking covers every element once for each team size 1..NUM_CORES"""
    m, n, k = 7, 5, 3
    a, b, c = f32(m, k), f32(k, n), f32(n)
    x = f32(11, 3)
    results = []
    for cores in range(1, rt.cores + 1):
        y = np.full(m * n, np.nan, np.float32)
        args = GemmArgs(ptr(a), ptr(b), ptr(c), ptr(y), m, n, k, 0, 0, 1.0, 1.0, 0, 1)
        rt.run("dm_gemm_fp32", args, nb_cores=cores)
        s = np.full(3, np.nan, np.float32)
        rt.run("dm_reduce_sum_fp32", ReduceArgs(ptr(x), ptr(s), 2, u32x4(x.shape), 1), cores)
        results.append(np.concatenate([y, s]))
    assert not np.isnan(results[0]).any()
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
