"""runtime_c: every fp32 kernel against numpy, through the PMSIS host emulation.

The kernels and runtime_c/host/pmsis_host.c are built into a shared library
(once with the default NUM_CORES=8, once with NUM_CORES=3 for uneven splits)
and each kernel is run by a team fork called through ctypes. The numpy
references are written here, independently of deeploy_mlir.

Where the kernel's summation order is specified (gemm: k = 0..K-1 with one
fused multiply-add per term; reduce_sum and the loss reduction: increasing
flat index) the test also rebuilds that order in float32 and asks for
identical bits: the kernels are built with -ffp-contract=off (as every build
of the emitted code), so gcc contracts no a*b+c by itself, and gemm's
explicit fmaf is rebuilt here by fma32 (exact product and sum in float64
rounded to odd, then to float32), itself checked against exact rational
arithmetic. Gemm is also held within the rounding error bound
(K + 2) * 2**-24 * (|alpha| sum|a*b| + |beta c|) of the float64
product. Elsewhere (exp, log) the tolerance is a few float32 ulps."""

from __future__ import annotations

import ctypes
import itertools
import math
import shutil
import subprocess
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from c_structs import enum, mirror

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
KERNELS = sorted((RT / "kernels").glob("*.c"))
HOST = RT / "host" / "pmsis_host.c"
HEADERS = [*sorted((RT / "include").glob("*.h")), RT / "host" / "pmsis.h"]
INCS = [f"-I{RT / 'include'}", f"-I{RT / 'host'}"]
CFLAGS = ["-std=gnu11", "-ffp-contract=off", "-O2", "-Wall", "-Wextra", "-Werror"]
GCC = shutil.which("gcc")
RNG = np.random.default_rng(1234)

pytestmark = pytest.mark.skipif(GCC is None, reason="gcc is needed to build runtime_c")

# ---------------------------------------------------------------- ctypes mirrors

PTR, U32, F32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_float
U32x4 = U32 * 4

_OPS, _RED = enum("dm_binary_op_e"), enum("dm_reduction_e")
DM_BINARY_ADD, DM_BINARY_SUB = _OPS["DM_BINARY_ADD"], _OPS["DM_BINARY_SUB"]
DM_BINARY_MUL, DM_BINARY_DIV = _OPS["DM_BINARY_MUL"], _OPS["DM_BINARY_DIV"]
DM_REDUCTION_MEAN, DM_REDUCTION_SUM = _RED["DM_REDUCTION_MEAN"], _RED["DM_REDUCTION_SUM"]
PI_PERF_ACTIVE_CYCLES, PI_PERF_INSTR, PI_PERF_CYCLES = 0, 1, 17

BARRIER_MESSAGE = (
    "pi_cl_team_barrier: kernels must not use barriers under the host emulation; "
    "split the kernel into two forks"
)


# the argument structs, as runtime_c/include declares them (tests/c_structs.py)
GemmArgs = mirror("dm_gemm_args_t")
BinaryArgs = mirror("dm_binary_args_t")
UnaryArgs = mirror("dm_unary_args_t")
ReluGradArgs = mirror("dm_relu_grad_args_t")
SceArgs = mirror("dm_sce_args_t")
SceGradArgs = mirror("dm_sce_grad_args_t")
ReduceArgs = mirror("dm_reduce_args_t")
AccumulateArgs = mirror("dm_accumulate_args_t")
SgdArgs = mirror("dm_sgd_args_t")
CopyArgs = mirror("dm_copy_args_t")
ConvArgs = mirror("dm_conv2d_args_t")
ConvGradArgs = mirror("dm_conv2d_grad_args_t")


STRUCTS = [
    GemmArgs,
    ConvArgs,
    ConvGradArgs,
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
    "powf",  # exp, log and erf are dm_mathf.h's, inlined: no libm call
    "sqrtf",  # LayerNorm
    "fmaf",  # gemm's fused multiply-add: a libm call on the host, fmadd.s on RV32F
    "__stack_chk_fail",
    "_GLOBAL_OFFSET_TABLE_",
}


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is needed")
def test_kernels_have_no_mutable_globals_and_call_no_runtime_services(tmp_path: Path) -> None:
    """no global mutable state; no barrier, malloc or printf in any kernel: a
    kernel calls only the team API, libm/string functions and other kernels
    (batched matmul runs gemm per batch; reduce_mean runs reduce_sum)"""
    symbols: dict[str, list[list[str]]] = {}
    for src in KERNELS:
        obj = tmp_path / (src.stem + ".o")
        _gcc(*CFLAGS, *INCS, "-c", src, "-o", obj)
        r = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True)
        symbols[src.name] = [line.split()[:2] for line in r.stdout.splitlines() if line.strip()]
    kernels = {n for syms in symbols.values() for n, t in syms if t == "T"}
    assert "dm_gemm_fp32" in kernels
    for name, syms in symbols.items():
        writable = [n for n, t in syms if t in "BbDdCGgSs"]
        assert not writable, f"{name}: global mutable state {writable}"
        calls = {n for n, t in syms if t == "U"} - ALLOWED_KERNEL_CALLS - kernels
        assert not calls, f"{name}: kernels must not call {sorted(calls)}"


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


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """fmaf elementwise (broadcasting): a * b + c rounded once to float32.

    The float64 product of two float32 is exact; the float64 sum is made
    round-to-odd from its exact error (TwoSum), and round-to-odd at 53 bits
    followed by round-to-nearest at 24 bits is the correctly rounded result."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - c64
    err = (c64 - (s - bb)) + (p - bb)
    even = (s.view(np.int64) & 1) == 0
    odd = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
    return np.where((err != 0) & even, odd, s).astype(np.float32)


def gemm_in_order(ap, bp, c2, alpha, beta):
    """Y as the kernel computes it: float32, acc = fmaf(a, b, acc) for
    k = 0..K-1 in order from 0, then alpha * acc (+ beta * C), unfused."""
    acc = np.zeros((ap.shape[0], bp.shape[1]), np.float32)
    for k in range(ap.shape[1]):
        acc = fma32(ap[:, k : k + 1], bp[k : k + 1, :], acc)
    y = np.float32(alpha) * acc
    return y if c2 is None else y + np.float32(beta) * c2


def _round_f32(x: Fraction) -> np.float32:
    """x rounded to the nearest float32, ties to even (finite x in range)."""
    f = np.float32(float(x))
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    best = min(abs(Fraction(float(c)) - x) for c in cands)
    near = [c for c in cands if abs(Fraction(float(c)) - x) == best]
    return min(near, key=lambda c: int(np.array(c).view(np.int32)) & 1)


def test_fma32_is_correctly_rounded() -> None:
    """fma32 against exact rational arithmetic, on random triples and on
    triples whose exact result lies halfway between two float32 (where a
    float64 sum rounded twice goes wrong)."""
    a, b, c = f32(400, lo=-4, hi=4), f32(400, lo=-4, hi=4), f32(400, lo=-4, hi=4)
    # (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is a tie between two float32 (to even:
    # 1 + 2^-11); plus 2^-80 it rounds up, but its float64 sum is the tie again
    t, tiny = 1.0 + 2.0**-12, 2.0**-80
    a = np.concatenate([a, [t, t, t, -t]]).astype(np.float32)
    b = np.concatenate([b, [t, t, t, t]]).astype(np.float32)
    c = np.concatenate([c, [0.0, tiny, -tiny, -tiny]]).astype(np.float32)
    got = fma32(a, b, c)
    for x, y, z, g in zip(a, b, c, got, strict=True):
        want = _round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
        assert g.view(np.int32) == want.view(np.int32), (x, y, z)
    naive = (a.astype(np.float64) * b + c).astype(np.float32)  # double rounding
    assert (got != naive).any(), "no case here tells fma32 from double rounding"


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


def _gemm(rt, m, n, k, ta, tb, c_kind, alpha=1.0, beta=1.0, team=0):
    a = f32(k, m) if ta else f32(m, k)
    b = f32(n, k) if tb else f32(k, n)
    shape_fn = GEMM_C_SHAPES[c_kind]
    c = None if shape_fn is None else f32(*shape_fn(m, n))
    y = np.full((m + 1, n), 7.0, np.float32)  # one guard row
    sm, sn = c_strides(c.shape) if c is not None else (0, 0)
    args = GemmArgs(ptr(a), ptr(b), ptr(c), ptr(y), m, n, k, ta, tb, alpha, beta, sm, sn)
    rt.run("dm_gemm_fp32", args, nb_cores=team)
    ap, bp = (a.T if ta else a), (b.T if tb else b)
    c2 = None if c is None else np.broadcast_to(c.reshape([1, 1, *c.shape][-2:]), (m, n))
    a64, b64 = ap.astype(np.float64), bp.astype(np.float64)
    want = alpha * (a64 @ b64)
    bound = abs(alpha) * (np.abs(a64) @ np.abs(b64))
    if c2 is not None:
        want = want + beta * c2
        bound = bound + abs(beta) * np.abs(c2)
    err = np.abs(y[:m] - want)
    assert (err <= (k + 2) * 2.0**-24 * bound + 1e-30).all(), err.max()
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


# M, N, K off the kernel's 4 x 4 tiles and its k unrolling (by 2 and 4), and
# 1-sized dims: every edge path of every transpose form. With 3 cores M = 37
# gives chunks of 13 rows (three 4-row blocks and one row), with 8 cores 5.
GEMM_RAGGED = [
    (1, 1, 1),
    (1, 9, 5),
    (9, 1, 5),
    (6, 5, 1),
    (4, 4, 4),
    (5, 4, 2),
    (8, 7, 3),
    (37, 11, 7),
    (13, 6, 10),
    (16, 16, 9),
]


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("m,n,k", GEMM_RAGGED, ids=[f"{m}x{n}x{k}" for m, n, k in GEMM_RAGGED])
def test_gemm_ragged_sizes(rt: Runtime, ta: int, tb: int, m: int, n: int, k: int) -> None:
    """every form, ragged and 1-sized dims, on the whole cluster and alone"""
    _gemm(rt, m, n, k, ta, tb, "none", team=0)
    _gemm(rt, m, n, k, ta, tb, "mn", alpha=0.5, beta=-2.0, team=0)
    _gemm(rt, m, n, k, ta, tb, "m1", alpha=1.0, beta=0.75, team=1)
    _gemm(rt, m, n, k, ta, tb, "n", alpha=-1.25, beta=1.0, team=2)


@pytest.fixture(scope="module")
def rt_nr2(tmp_path_factory, probe_c: Path) -> Runtime:
    """The runtime with gemm's Zfinx micro-tiles (4 x 2, DM_GEMM_NR=2; A B
    and A^T B 4 x 3, DM_GEMM_NR_AB=DM_GEMM_NR_ATB=3) and k unrolling (A^T
    B^T by 4, A B and A^T B by 1): what clang builds for
    -march=rv32imc_zfinx, 8 cores, on the host."""
    lib = tmp_path_factory.mktemp("rtnr2") / "libdm_runtime_nr2.so"
    _gcc(
        *CFLAGS,
        "-fPIC",
        "-shared",
        "-DDM_GEMM_NR=2u",
        "-DDM_GEMM_NR_AB=3u",
        "-DDM_GEMM_KU_AB=1u",
        "-DDM_GEMM_NR_ATB=3u",
        "-DDM_GEMM_KU_ATB=1u",
        "-DDM_GEMM_KU_ATBT=4u",
        *INCS,
        *KERNELS,
        HOST,
        probe_c,
        "-o",
        lib,
        "-lm",
    )
    return Runtime(lib, 8)


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
def test_gemm_zfinx_tile_gives_the_same_bits(rt_nr2: Runtime, ta: int, tb: int) -> None:
    """4 x 2 and (A B, A^T B) 4 x 3 tiles: ragged sizes (tiles moved left by
    one or two columns, 1-column edges), teams of 8, 1 and 3, the bias
    forms; the bits of gemm_in_order."""
    for m, n, k in [*GEMM_RAGGED, (64, 13, 5), (36, 130, 6)]:
        _gemm(rt_nr2, m, n, k, ta, tb, "none", team=0)
        _gemm(rt_nr2, m, n, k, ta, tb, "mn", alpha=0.5, beta=-2.0, team=3)
        _gemm(rt_nr2, m, n, k, ta, tb, "m1", alpha=1.0, beta=0.75, team=1)


def _gemm_k_tiles(rt, m, n, k, ta, tb, c_kind, cuts, alpha=1.0, beta=1.0, team=0):
    """K split at `cuts`, as tiling-materialize runs it: each K tile's A and B
    copied into buffers of their own (as a DMA copy makes them), the first
    tile from 0 (acc_Y = 0) into a Y poisoned with NaN (it must not read it),
    the later ones from Y's partial sums (acc_Y = 1), every tile but the last
    `partial` (raw sums). Y must equal the whole product's bits (one call over
    all of K) and the kernel's specified order (gemm_in_order)."""
    a = f32(k, m) if ta else f32(m, k)
    b = f32(n, k) if tb else f32(k, n)
    shape_fn = GEMM_C_SHAPES[c_kind]
    c = None if shape_fn is None else f32(*shape_fn(m, n))
    sm, sn = c_strides(c.shape) if c is not None else (0, 0)
    whole = np.full((m, n), 7.0, np.float32)
    args = GemmArgs(ptr(a), ptr(b), ptr(c), ptr(whole), m, n, k, ta, tb, alpha, beta, sm, sn)
    rt.run("dm_gemm_fp32", args, nb_cores=team)
    y = np.full((m + 1, n), np.nan, np.float32)  # one guard row
    bounds = [0, *cuts, k]
    for i, (k0, k1) in enumerate(itertools.pairwise(bounds)):
        at = np.ascontiguousarray(a[k0:k1] if ta else a[:, k0:k1])
        bt = np.ascontiguousarray(b[:, k0:k1] if tb else b[k0:k1])
        last = i == len(bounds) - 2
        args = GemmArgs(ptr(at), ptr(bt), ptr(c), ptr(y), m, n, k1 - k0, ta, tb, alpha, beta,
                        sm, sn, int(i > 0), int(not last))  # fmt: skip
        rt.run("dm_gemm_fp32", args, nb_cores=team)
    ap, bp = (a.T if ta else a), (b.T if tb else b)
    c2 = None if c is None else np.broadcast_to(c.reshape([1, 1, *c.shape][-2:]), (m, n))
    assert not np.isnan(y[:m]).any()
    np.testing.assert_array_equal(y[:m].view(np.int32), whole.view(np.int32))
    np.testing.assert_array_equal(y[:m], gemm_in_order(ap, bp, c2, alpha, beta))
    assert np.isnan(y[m]).all()


#: (M, N, K, the K tiles' starts): two tiles, ragged last tiles, tiles of one
#: step and of an odd count (the kernel's k unrolling by 2 and 4 restarts per
#: call), many tiles
GEMM_K_SPLITS = [
    (4, 4, 8, [4]),
    (7, 5, 17, [5, 10, 15]),
    (9, 6, 13, [1, 2, 7]),
    (1, 9, 144, [64, 128]),
    (37, 11, 10, [3, 4, 5, 6, 9]),
]


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize(
    "m,n,k,cuts", GEMM_K_SPLITS, ids=[f"{m}x{n}x{k}-{len(c) + 1}" for m, n, k, c in GEMM_K_SPLITS]
)
def test_gemm_k_tiles_give_the_whole_products_bits(
    rt: Runtime, ta: int, tb: int, m: int, n: int, k: int, cuts: list[int]
) -> None:
    """K split into tiles (acc_Y, partial) gives the bits of one whole-K call,
    in every transpose form, with alpha != 1 (applied once, on the last tile)
    and every broadcast of C (added once, on the last tile)"""
    _gemm_k_tiles(rt, m, n, k, ta, tb, "none", cuts, team=0)
    _gemm_k_tiles(rt, m, n, k, ta, tb, "mn", cuts, alpha=0.5, beta=-2.0, team=0)
    _gemm_k_tiles(rt, m, n, k, ta, tb, "n", cuts, alpha=-1.25, beta=1.0, team=2)
    _gemm_k_tiles(rt, m, n, k, ta, tb, "m1", cuts, alpha=3.0, beta=0.75, team=1)
    _gemm_k_tiles(rt, m, n, k, ta, tb, "scalar", cuts, alpha=1.0, beta=0.25, team=0)


def test_gemm_k_tiles_are_not_a_sum_of_products(rt: Runtime) -> None:
    """The check above can fail: adding a later K tile's own product to the
    partial sum (instead of going on from it) changes bits"""
    m, n, k, cut = 8, 8, 64, 31
    a, b = f32(m, k, lo=-4, hi=4), f32(k, n, lo=-4, hi=4)
    whole = np.zeros((m, n), np.float32)
    args = GemmArgs(ptr(a), ptr(b), None, ptr(whole), m, n, k, 0, 0, 1.0, 1.0, 0, 0)
    rt.run("dm_gemm_fp32", args)
    parts = []
    for k0, k1 in ((0, cut), (cut, k)):
        at, bt = np.ascontiguousarray(a[:, k0:k1]), np.ascontiguousarray(b[k0:k1])
        y = np.zeros((m, n), np.float32)
        rt.run("dm_gemm_fp32", GemmArgs(ptr(at), ptr(bt), None, ptr(y), m, n, k1 - k0, 0, 0,
                                         1.0, 1.0, 0, 0, 0, 1))  # fmt: skip
        parts.append(y)
    assert (parts[0] + parts[1] != whole).any()


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("reset", [0, 1])
def test_gemm_onto_buffer(rt: Runtime, ta: int, tb: int, reset: int) -> None:
    """reset_Y (accumulate-fuse): Y is a gradient buffer; with reset[0] == 0
    each element becomes old + the product, InPlaceAccumulatorV2's float32
    buffer + grad of an unfused call's Y (the same bits), with reset[0] == 1
    the product alone; ragged 4 x 4 tiles (their moved-up rows are stored
    once: added once), every team size; and a later K tile (acc_Y) goes on
    from Y without adding it again."""
    rng = np.random.default_rng(1919)  # its own: the other tests' draws stay

    def r(*shape: int) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)

    m, n, k = 29, 10, 11
    a, b = (r(k, m) if ta else r(m, k)), (r(n, k) if tb else r(k, n))
    plain = np.zeros(m * n, np.float32)
    rt.run("dm_gemm_fp32", GemmArgs(ptr(a), ptr(b), None, ptr(plain), m, n, k, ta, tb, 1.0, 1.0))
    old = r(m * n)
    want = plain if reset else old + plain
    flag = np.array([reset], np.uint8)
    for cores in range(1, rt.cores + 1):
        y = np.concatenate([old, np.float32([7.0])])
        args = GemmArgs(ptr(a), ptr(b), None, ptr(y), m, n, k, ta, tb, 1.0, 1.0)
        args.reset_Y = flag.ctypes.data
        rt.run("dm_gemm_fp32", args, nb_cores=cores)
        assert y[-1] == 7.0, "written past the end"
        np.testing.assert_array_equal(y[:-1].view(np.uint32), want.view(np.uint32))
    y = old.copy()
    args = GemmArgs(ptr(a), ptr(b), None, ptr(y), m, n, k, ta, tb, 1.0, 1.0)
    args.acc_Y, args.reset_Y = 1, flag.ctypes.data
    rt.run("dm_gemm_fp32", args)
    again = old.copy()
    rt.run("dm_gemm_fp32", GemmArgs(ptr(a), ptr(b), None, ptr(again), m, n, k, ta, tb, 1.0, 1.0,
                                    0, 0, 1))  # fmt: skip
    np.testing.assert_array_equal(y.view(np.uint32), again.view(np.uint32))


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("size", [32, 64])
def test_gemm_benchmark_sizes(rt: Runtime, ta: int, tb: int, size: int) -> None:
    """the sizes of bench/kernels.py, with a bias as in the forward Gemm"""
    _gemm(rt, size, size, size, ta, tb, "1n")


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
def test_gemm_every_team_size(rt: Runtime, ta: int, tb: int) -> None:
    """the rows split over 1..NUM_CORES cores: each core's chunk starts and
    ends anywhere in the 4-row blocks, and every split gives the same bits"""
    m, n, k = 29, 10, 11
    a = f32(k, m) if ta else f32(m, k)
    b = f32(n, k) if tb else f32(k, n)
    c = f32(n)
    results = []
    for cores in range(1, rt.cores + 1):
        y = np.full(m * n, np.nan, np.float32)
        args = GemmArgs(ptr(a), ptr(b), ptr(c), ptr(y), m, n, k, ta, tb, 1.0, 1.0, 0, 1)
        rt.run("dm_gemm_fp32", args, nb_cores=cores)
        results.append(y)
    ap, bp = (a.T if ta else a), (b.T if tb else b)
    want = gemm_in_order(ap, bp, np.broadcast_to(c, (m, n)), 1.0, 1.0).ravel()
    for y in results:
        np.testing.assert_array_equal(y, want)


# ---------------------------------------------------------------- conv
#
# The conv kernels sum each output in the order dm_conv.h gives with one fused
# multiply-add per term: forward over (c, kh, kw), input gradient over
# (m, kh, kw), weight gradient over (n, oh, ow); taps in the padding add
# nothing (fmaf(0, w, acc) = acc, so the references below read them as
# zeros). The references rebuild those orders with fma32 and ask for
# identical bits, for every team size; a float64 formulation (zero-padded
# slices and einsum) checks the references and the kernels within the
# rounding bound (terms + 2) * 2**-24 * sum |term|.


@dataclass(frozen=True)
class ConvCase:
    n: int
    c: int
    h: int
    w: int
    m: int
    groups: int
    k: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, left, bottom, right
    dil: tuple[int, int] = (1, 1)
    bias: bool = True

    def out_hw(self) -> tuple[int, int]:
        (kh, kw), (sh, sw), (dh, dw) = self.k, self.strides, self.dil
        pt, pl, pb, pr = self.pads
        return (
            (self.h + pt + pb - dh * (kh - 1) - 1) // sh + 1,
            (self.w + pl + pr - dw * (kw - 1) - 1) // sw + 1,
        )

    def geom(self) -> list[int]:
        oh, ow = self.out_hw()
        return [
            *(self.n, self.c, self.h, self.w, self.m, *self.k, oh, ow, self.groups),
            *(*self.strides, *self.dil, self.pads[0], self.pads[1]),
        ]


# Named for the kernel paths they reach: "same" (3 wide, stride/dilation/pad
# 1, as many output as input columns: first/middle/last tiles), the blocked
# interior with stride 1 or any stride, 1 x 1 kernels, depthwise (its
# three-tap weight gradient, and that path's fallback on rows too narrow for
# a common column range), channel counts off the blocks of 4, strides and
# dilations in either direction.
CONV_KERNEL_CASES = {
    "same-wide": ConvCase(2, 5, 9, 21, 6, 1, (3, 3), pads=(1, 1, 1, 1)),
    "same-one-tile": ConvCase(1, 4, 5, 4, 4, 1, (3, 3), pads=(1, 1, 1, 1), bias=False),
    "same-two-tiles": ConvCase(1, 8, 3, 8, 8, 1, (3, 3), pads=(1, 1, 1, 1)),
    # 6 input, 7 output channels: the weight gradient's 4 x 2 and 2 x 4 (+ 1 x 4)
    # tiles, and the split of rows x channel blocks by channels
    "same-ragged-blocks": ConvCase(1, 6, 7, 9, 7, 1, (3, 3), pads=(1, 1, 1, 1)),
    "depthwise-wide": ConvCase(2, 6, 10, 19, 6, 6, (3, 3), pads=(1, 1, 1, 1)),
    "depthwise-8": ConvCase(1, 3, 6, 8, 3, 3, (3, 3), pads=(1, 1, 1, 1), bias=False),
    "depthwise-one-row": ConvCase(2, 2, 1, 12, 2, 2, (3, 3), pads=(1, 1, 1, 1)),
    "depthwise-two-rows": ConvCase(1, 3, 2, 25, 3, 3, (3, 3), pads=(1, 1, 1, 1), bias=False),
    "depthwise-narrow": ConvCase(1, 3, 4, 2, 3, 3, (3, 3), pads=(1, 1, 1, 1)),
    "depthwise-stride2": ConvCase(1, 4, 9, 17, 4, 4, (3, 3), (2, 2), (1, 1, 1, 1)),
    "stride2-wide": ConvCase(2, 5, 11, 17, 6, 1, (3, 3), (2, 2), (1, 1, 1, 1)),
    "stride-w2": ConvCase(1, 4, 8, 13, 4, 1, (3, 3), (1, 2), (1, 1, 1, 1)),
    "stride-h2": ConvCase(1, 4, 9, 16, 5, 1, (3, 3), (2, 1), (1, 1, 1, 1)),
    "dilation2": ConvCase(1, 4, 12, 20, 5, 1, (3, 3), pads=(2, 2, 2, 2), dil=(2, 2)),
    "kernel-2x5-asym": ConvCase(1, 4, 9, 15, 4, 1, (2, 5), pads=(0, 2, 1, 1)),
    "pointwise": ConvCase(2, 9, 5, 13, 7, 1, (1, 1)),
    "pointwise-stride2": ConvCase(1, 6, 7, 11, 5, 1, (1, 1), (2, 2), bias=False),
    "groups2": ConvCase(1, 8, 7, 12, 8, 2, (3, 3), pads=(1, 1, 1, 1)),
    "groups-uneven": ConvCase(2, 6, 6, 10, 10, 2, (3, 2), pads=(1, 0, 1, 2)),
    "window-in-padding": ConvCase(1, 2, 3, 3, 2, 1, (2, 2), (2, 2), (3, 0, 1, 3)),
}


def _padded(x: np.ndarray, cfg: ConvCase) -> np.ndarray:
    """x with zero rows/columns: the pads, and more so every window fits."""
    pt, pl, pb, pr = cfg.pads
    oh, ow = cfg.out_hw()
    need_h = (oh - 1) * cfg.strides[0] + (cfg.k[0] - 1) * cfg.dil[0] + 1
    need_w = (ow - 1) * cfg.strides[1] + (cfg.k[1] - 1) * cfg.dil[1] + 1
    xp = np.zeros(
        (
            x.shape[0],
            x.shape[1],
            max(need_h, x.shape[2] + pt + pb),
            max(need_w, x.shape[3] + pl + pr),
        ),
        x.dtype,
    )
    xp[:, :, pt : pt + x.shape[2], pl : pl + x.shape[3]] = x
    return xp


def _tap_view(xp: np.ndarray, cfg: ConvCase, kh: int, kw: int) -> np.ndarray:
    """xp[n, c, oh * sh + kh * dh, ow * sw + kw * dw] for every output (oh, ow)."""
    oh, ow = cfg.out_hw()
    (sh, sw), (dh, dw) = cfg.strides, cfg.dil
    r0, c0 = kh * dh, kw * dw
    return xp[:, :, r0 : r0 + (oh - 1) * sh + 1 : sh, c0 : c0 + (ow - 1) * sw + 1 : sw]


def conv_refs64(cfg: ConvCase, x, w, dy) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(Y without bias, dX, dW, |.| bounds) in float64: each tap's slice of the
    zero-padded X times W, summed; dX scattered back through the same slices."""
    g, cg, mg = cfg.groups, cfg.c // cfg.groups, cfg.m // cfg.groups
    xp = _padded(x.astype(np.float64), cfg)
    w64, dy64 = w.astype(np.float64), dy.astype(np.float64)
    oh, ow = cfg.out_hw()
    y = np.zeros((cfg.n, cfg.m, oh, ow))
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w64)
    wg = w64.reshape(g, mg, cg, *cfg.k)
    dyg = dy64.reshape(cfg.n, g, mg, oh, ow)
    for kh in range(cfg.k[0]):
        for kw in range(cfg.k[1]):
            xs = _tap_view(xp, cfg, kh, kw).reshape(cfg.n, g, cg, oh, ow)
            y += np.einsum("ngcij,gmc->ngmij", xs, wg[..., kh, kw]).reshape(y.shape)
            dw[..., kh, kw] = np.einsum("ngmij,ngcij->gmc", dyg, xs).reshape(cfg.m, cg)
            contrib = np.einsum("ngmij,gmc->ngcij", dyg, wg[..., kh, kw])
            _tap_view(dxp, cfg, kh, kw)[...] += contrib.reshape(cfg.n, cfg.c, oh, ow)
    pt, pl = cfg.pads[0], cfg.pads[1]
    dx = dxp[:, :, pt : pt + cfg.h, pl : pl + cfg.w]
    return y, dx, dw, xp


def conv_fwd_in_order(cfg: ConvCase, x, w, b) -> np.ndarray:
    """Y as the kernel computes it: acc = fmaf(X, W, acc) over (c, kh, kw)
    from 0, then + B."""
    cg, mg = cfg.c // cfg.groups, cfg.m // cfg.groups
    xp = _padded(x, cfg)
    oh, ow = cfg.out_hw()
    acc = np.zeros((cfg.n, cfg.m, oh, ow), np.float32)
    chans = (np.arange(cfg.m) // mg) * cg
    for c in range(cg):
        for kh in range(cfg.k[0]):
            for kw in range(cfg.k[1]):
                xs = _tap_view(xp, cfg, kh, kw)[:, chans + c]
                acc = fma32(xs, w[:, c, kh, kw][None, :, None, None], acc)
    return acc if b is None else acc + b[None, :, None, None]


def conv_dx_in_order(cfg: ConvCase, w, dy) -> np.ndarray:
    """dX as the kernel computes it: over the group's output channels, then
    kh, then kw, the dY element the tap reaches (0 where none)."""
    cg, mg = cfg.c // cfg.groups, cfg.m // cfg.groups
    (sh, sw), (dh, dw), (pt, pl) = cfg.strides, cfg.dil, cfg.pads[:2]
    oh_n, ow_n = cfg.out_hw()
    acc = np.zeros((cfg.n, cfg.c, cfg.h, cfg.w), np.float32)
    cs = np.arange(cfg.c)
    ih = np.arange(cfg.h)[:, None]
    iw = np.arange(cfg.w)[None, :]
    for j in range(mg):
        ms = (cs // cg) * mg + j
        for kh in range(cfg.k[0]):
            th = ih + pt - kh * dh
            okh = (th >= 0) & (th % sh == 0) & (th // sh < oh_n)
            for kw in range(cfg.k[1]):
                tw = iw + pl - kw * dw
                ok = okh & (tw >= 0) & (tw % sw == 0) & (tw // sw < ow_n)
                oh = np.where(ok, th // sh, 0)
                ow = np.where(ok, tw // sw, 0)
                dyv = dy[:, ms][:, :, oh, ow] * ok  # zero where no output is reached
                acc = fma32(
                    dyv.astype(np.float32), w[ms, cs % cg, kh, kw][None, :, None, None], acc
                )
    return acc


def conv_dw_in_order(cfg: ConvCase, x, dy) -> np.ndarray:
    """dW as the kernel computes it: over n, oh, ow in order."""
    cg, mg = cfg.c // cfg.groups, cfg.m // cfg.groups
    xp = _padded(x, cfg)
    (sh, sw), (dh, dw) = cfg.strides, cfg.dil
    oh_n, ow_n = cfg.out_hw()
    chans = ((np.arange(cfg.m) // mg) * cg)[:, None] + np.arange(cg)[None, :]  # [m, c]
    rk = (np.arange(cfg.k[0]) * dh)[:, None]
    ck = (np.arange(cfg.k[1]) * dw)[None, :]
    acc = np.zeros((cfg.m, cg, *cfg.k), np.float32)
    for n in range(cfg.n):
        for oh in range(oh_n):
            for ow in range(ow_n):
                xv = xp[n][chans[:, :, None, None], oh * sh + rk, ow * sw + ck]
                acc = fma32(dy[n, :, oh, ow][:, None, None, None], xv, acc)
    return acc


def conv_db_in_order(dy: np.ndarray) -> np.ndarray:
    acc = np.zeros(dy.shape[1], np.float32)
    for n in range(dy.shape[0]):
        for v in dy[n].reshape(dy.shape[1], -1).T:
            acc = acc + v
    return acc


def _guarded(shape: tuple[int, ...]) -> np.ndarray:
    return np.full(math.prod(shape) + 1, 7.0, np.float32)


def _bounded(got: np.ndarray, want64: np.ndarray, bound: np.ndarray, terms: int) -> None:
    err = np.abs(got.astype(np.float64) - want64)
    assert (err <= (terms + 2) * 2.0**-24 * bound + 1e-30).all(), err.max()


@pytest.mark.parametrize("name", list(CONV_KERNEL_CASES))
def test_conv_kernels_in_order_for_every_team(rt: Runtime, name: str) -> None:
    _conv_in_order(rt, name)


def _conv_in_order(rt: Runtime, name: str, check_refs: bool = True) -> None:
    cfg = CONV_KERNEL_CASES[name]
    cg = cfg.c // cfg.groups
    oh, ow = cfg.out_hw()
    x, w = f32(cfg.n, cfg.c, cfg.h, cfg.w), f32(cfg.m, cg, *cfg.k)
    dy, b = f32(cfg.n, cfg.m, oh, ow), (f32(cfg.m) if cfg.bias else None)
    y_want = conv_fwd_in_order(cfg, x, w, b)
    dx_want, dw_want = conv_dx_in_order(cfg, w, dy), conv_dw_in_order(cfg, x, dy)
    db_want = conv_db_in_order(dy)
    if check_refs:
        y64, dx64, dw64, _ = conv_refs64(cfg, x, w, dy)
        ay, adx, adw, _ = conv_refs64(cfg, np.abs(x), np.abs(w), np.abs(dy))
        taps = cg * cfg.k[0] * cfg.k[1]
        _bounded(y_want, y64 + (0 if b is None else b[None, :, None, None]), ay, taps)
        _bounded(dx_want, dx64, adx, cfg.m // cfg.groups * cfg.k[0] * cfg.k[1])
        _bounded(dw_want, dw64, adw, cfg.n * oh * ow)
    for team in sorted({1, 2, rt.cores}):
        y = _guarded(y_want.shape)
        rt.run("dm_conv2d_fp32", ConvArgs(ptr(x), ptr(w), ptr(b), ptr(y), *cfg.geom()), team)
        dx, dw, db = _guarded(dx_want.shape), _guarded(dw_want.shape), _guarded(db_want.shape)
        args = ConvGradArgs(ptr(dy), ptr(x), ptr(w), ptr(dx), ptr(dw), ptr(db), *cfg.geom())
        rt.run("dm_conv2d_grad_input_fp32", args, team)
        rt.run("dm_conv2d_grad_weight_fp32", args, team)
        for got, want, what in [
            (y, y_want, "Y"),
            (dx, dx_want, "dX"),
            (dw, dw_want, "dW"),
            (db, db_want, "dB"),
        ]:
            assert got[-1] == 7.0, f"{what}: written past the end (team {team})"
            np.testing.assert_array_equal(
                got[:-1].reshape(want.shape), want, err_msg=f"{what}, team {team}"
            )


def _grad_calls(
    rt: Runtime, cfg: ConvCase, dy, x, w, dx, dw, db, acc: int, team: int, dx_only: bool = False
) -> None:
    """The two gradient kernels of cfg on these arrays (None: not computed),
    every acc_* field set to `acc`."""
    args = ConvGradArgs(ptr(dy), ptr(x), ptr(w), ptr(dx), ptr(dw), ptr(db), *cfg.geom())
    args.acc_dX = args.acc_dW = args.acc_dB = acc
    if dx is not None:
        rt.run("dm_conv2d_grad_input_fp32", args, team)
    if not dx_only:
        rt.run("dm_conv2d_grad_weight_fp32", args, team)


@pytest.mark.parametrize("name", list(CONV_KERNEL_CASES))
def test_conv_grads_add_up_split_reductions(rt: Runtime, name: str) -> None:
    _conv_split_reductions(rt, name)


def _conv_split_reductions(rt: Runtime, name: str) -> None:
    """acc_dX, acc_dW, acc_dB: a call that adds into its outputs continues
    their sums in order, so a reduction split in two consecutive parts, the
    second call adding, gives the same bits as one call (every team size):
    dX over the output channels (convolutions with one group: the outer sum),
    dW and dB over the batch (of 2). The first call overwrites what the
    outputs held, and nothing is written past them."""
    import dataclasses

    cfg = dataclasses.replace(CONV_KERNEL_CASES[name], n=2)
    cg = cfg.c // cfg.groups
    oh, ow = cfg.out_hw()
    x, w, dy = f32(cfg.n, cfg.c, cfg.h, cfg.w), f32(cfg.m, cg, *cfg.k), f32(cfg.n, cfg.m, oh, ow)
    dx_want, dw_want, db_want = _guarded(x.shape), _guarded(w.shape), _guarded((cfg.m,))
    _grad_calls(rt, cfg, dy, x, w, dx_want, dw_want, db_want, 0, rt.cores)
    m1 = cfg.m // 2
    for team in sorted({1, 2, rt.cores}):
        if cfg.groups == 1 and m1 > 0:
            dx = _guarded(x.shape)
            for lo, hi, acc in ((0, m1, 0), (m1, cfg.m, 1)):
                part = dataclasses.replace(cfg, m=hi - lo)
                dyp = np.ascontiguousarray(dy[:, lo:hi])
                _grad_calls(rt, part, dyp, x, w[lo:hi], dx, None, None, acc, team, True)
            assert dx[-1] == 7.0, f"dX written past the end (team {team})"
            np.testing.assert_array_equal(dx, dx_want, err_msg=f"dX, team {team}")
        dw, db = _guarded(w.shape), _guarded((cfg.m,))
        for b, acc in ((0, 0), (1, 1)):
            one = dataclasses.replace(cfg, n=1)
            _grad_calls(rt, one, dy[b : b + 1], x[b : b + 1], w, None, dw, db, acc, team)
        assert dw[-1] == 7.0 and db[-1] == 7.0, f"written past the end (team {team})"
        np.testing.assert_array_equal(dw, dw_want, err_msg=f"dW, team {team}")
        np.testing.assert_array_equal(db, db_want, err_msg=f"dB, team {team}")


@pytest.mark.parametrize("name", list(CONV_KERNEL_CASES))
@pytest.mark.parametrize("reset", [0, 1])
def test_conv_grads_onto_buffers(rt: Runtime, name: str, reset: int) -> None:
    """reset_dW, reset_dB (accumulate-fuse): dW and dB are gradient buffers;
    with reset[0] == 0 each element becomes old + the sum, InPlaceAccumulatorV2's
    float32 buffer + grad of the sums of an unfused call (the same bits);
    with reset[0] == 1 the sum alone. Every case of the kernels' paths
    (depthwise, three taps wide, blocks), every team size."""
    cfg = CONV_KERNEL_CASES[name]
    cg = cfg.c // cfg.groups
    oh, ow = cfg.out_hw()
    rng = np.random.default_rng(19)  # its own: the other tests' draws stay as they were

    def r(*shape: int) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)

    x, w, dy = r(cfg.n, cfg.c, cfg.h, cfg.w), r(cfg.m, cg, *cfg.k), r(cfg.n, cfg.m, oh, ow)
    dw_sum, db_sum = _guarded(w.shape), _guarded((cfg.m,))
    _grad_calls(rt, cfg, dy, x, w, None, dw_sum, db_sum, 0, rt.cores)
    old_w, old_b = r(*w.shape).ravel(), r(cfg.m)
    flag = np.array([reset], np.uint8)
    want_w = dw_sum[:-1] if reset else old_w + dw_sum[:-1]
    want_b = db_sum[:-1] if reset else old_b + db_sum[:-1]
    for team in sorted({1, 2, rt.cores}):
        dw, db = _guarded(w.shape), _guarded((cfg.m,))
        dw[:-1], db[:-1] = old_w, old_b
        args = ConvGradArgs(ptr(dy), ptr(x), ptr(w), None, ptr(dw), ptr(db), *cfg.geom())
        args.reset_dW = args.reset_dB = flag.ctypes.data
        rt.run("dm_conv2d_grad_weight_fp32", args, team)
        assert dw[-1] == 7.0 and db[-1] == 7.0, f"written past the end (team {team})"
        np.testing.assert_array_equal(dw[:-1].view(np.uint32), want_w.view(np.uint32))
        np.testing.assert_array_equal(db[:-1].view(np.uint32), want_b.view(np.uint32))


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
    # the column path (innermost dim kept): blocks of 4 outputs and a tail,
    # one reduced dim after merging (the CCT's bias gradients) and two
    ((1, 64, 64), (0, 1)),
    ((9, 7), (0,)),
    ((3, 10, 2, 6), (0, 2)),
    # nothing reduced but a size-1 dim; a contiguous row after merging
    ((5, 1, 12), (1,)),
    ((4, 8, 3), (1, 2)),
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


def test_reduce_sum_columns_any_team(rt: Runtime) -> None:
    """the column path's blocks follow each core's chunk of the outputs,
    whatever its length and start (a block never crosses a chunk's end)"""
    x = f32(6, 2, 19)
    for cores in range(1, rt.cores + 1):
        y = np.full(39, 7.0, np.float32)
        rt.run("dm_reduce_sum_fp32", ReduceArgs(ptr(x), ptr(y), 3, u32x4(x.shape), 1), cores)
        np.testing.assert_array_equal(y[:38], reduce_in_order(x, (0,)))
        assert y[38] == 7.0


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


@pytest.fixture(scope="module")
def rt_conv_zf(tmp_path_factory, probe_c: Path) -> Runtime:
    """The runtime with conv's Zfinx code (what clang builds for
    -march=rv32imc_zfinx, DM_CONV_ZF=1: DM_CONV_MB=2, 2 x DM_CONV_NB forward
    and input gradient tiles, the 1 x 1 tiles' loop dm_pw_zf, the
    unconditional row and channel steps, DM_CONV_WCB=2, 4 x 2 weight
    gradient tiles, the weight gradient's units tap first), 8 cores, on the
    host."""
    lib = tmp_path_factory.mktemp("rtconvzf") / "libdm_runtime_convzf.so"
    defs = ["-DDM_CONV_ZF=1"]
    _gcc(*CFLAGS, "-fPIC", "-shared", *defs, *INCS, *KERNELS, HOST, probe_c, "-o", lib, "-lm")
    return Runtime(lib, 8)


@pytest.mark.parametrize("name", list(CONV_KERNEL_CASES))
def test_conv_zfinx_tiles_give_the_same_bits(rt_conv_zf: Runtime, name: str) -> None:
    """Every conv path with the Zfinx tiles: the bits of the in-order
    references (teams of 1, 2 and 8; test_conv_kernels_in_order_for_every_team
    checks those references against float64), and the split reductions
    (acc_*). Last in the file: its draws from RNG change no other test's data."""
    _conv_in_order(rt_conv_zf, name, check_refs=False)
    _conv_split_reductions(rt_conv_zf, name)
