"""Small C programs on GVSoC siracusa for bench/gvsoc.py and bench/calibrate.py:
the fmadd ceiling probe, cluster-DMA and HyperRAM timing, and the runtime's
kernels timed one call at a time (`mcycle` on the cluster controller around
`pi_cl_team_fork`, so fork and barrier are in the figure, as in a step).

Every program is built with runtime_c/gvsoc/gvsoc.mk (Debian's RV32IMFC gcc,
-O2, gnu11) plus FLAGS below: -ffp-contract=off, the flag the emitted
projects are built with (no fused multiply-add, so the host's bits), unless a
case asks for contraction."""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from deeploy_mlir.cost.kernels import gemm_share
from deeploy_mlir.targets import gvsoc

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
TARGET = "siracusa"
#: the emitted projects' float flag (kernels without fused multiply-add)
FLAGS = "-ffp-contract=off"
#: the cluster cores' float ISA (deeploy_mlir.targets.gvsoc.ISAS): "f" Debian
#: gcc RV32F on ../shared/gvsoc, "zfinx" clang-19 on scripts/build-gvsoc-zfinx.sh's
#: GVSoC (bench/gvsoc.py --isa sets it)
ISA = "f"

HEADER = r"""
#include <stdio.h>
#include <string.h>
#include "pmsis.h"
#include "dm_kernels.h"
static inline unsigned cyc(void)
{
    unsigned v;
    __asm__ volatile("csrr %0, mcycle" : "=r"(v));
    return v;
}
__attribute__((unused)) static void fill(float *p, unsigned n, int seed)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (float)((i * 37u + (unsigned)seed) % 17u) * 0.125f - 1.0f;
}
static struct pi_device cluster;
__attribute__((unused)) static float *l1f(unsigned n, int seed)
{
    float *p = pi_cl_l1_malloc(&cluster, n * 4u);
    if (!p) { printf("ERROR l1 alloc %u\n", n); return p; }
    fill(p, n, seed);
    return p;
}
"""

MAIN = r"""
int main(void)
{
    struct pi_cluster_conf conf;
    struct pi_cluster_task task;
    pi_cluster_conf_init(&conf);
    pi_open_from_conf(&cluster, &conf);
    if (pi_cluster_open(&cluster) != 0) return 1;
    pi_cluster_send_task_to_cl(&cluster, pi_cluster_task(&task, run, NULL));
    pi_cluster_close(&cluster);
    printf("DONE\n");
    return 0;
}
"""


def run_program(
    body: str, flags: str = FLAGS, timeout: float = 900, rt: Path = RT, kernels: bool = True
) -> str:
    """Build `body` (C defining `static void run(void *arg)`, the cluster
    task) with the runtime's kernels (those of `rt`, a runtime_c directory;
    none without `kernels`) and run it on GVSoC: its stdout."""
    setup = gvsoc.find_setup(ISA)
    srcs = sorted(f"runtime/kernels/{p.name}" for p in (rt / "kernels").glob("*.c"))
    if not kernels:
        srcs = []
    with tempfile.TemporaryDirectory(prefix="dm-probe-") as tmp:
        d = Path(tmp)
        (d / "p.c").write_text(HEADER + body + MAIN)
        (d / "runtime").symlink_to(rt)
        b = subprocess.run(
            [
                *("make", "-s", "-j2", "-f", "runtime/gvsoc/gvsoc.mk"),
                "APP_SRCS=p.c " + " ".join(srcs),
                "APP_INCS=-Iruntime/include",
                f"APP_DEFS={flags}",
                "OUT=build/p.elf",
                f"PULP_RUNTIME_HOME={setup.pulp_runtime}",
                f"GVSOC_TARGET={TARGET}",
                f"GVSOC_ISA={setup.isa}",
            ],
            cwd=d,
            capture_output=True,
            text=True,
        )
        if b.returncode != 0:
            raise RuntimeError(f"building the probe failed:\n{b.stdout}{b.stderr}")
        return gvsoc.run(d / "build" / "p.elf", TARGET, setup, timeout=timeout)


def lines(text: str, tag: str) -> list[list[str]]:
    return [ln.split()[1:] for ln in text.splitlines() if ln.split()[:1] == [tag]]


# ------------------------------------------------------------------ ceiling

FMA_ITERS = 4000
FMA_PROBE = r"""
static volatile unsigned res[8];
static volatile float sink[8];
/* the register class of a float: f registers on RV32F, x registers on Zfinx */
#ifdef __riscv_zfinx
#define FR "r"
#else
#define FR "f"
#endif
/* 64-byte aligned: at 8 cores the cycles depend on the loop's placement
 * (16-byte aligned 72,153, unaligned up to 76,158, measured) */
__attribute__((noinline, aligned(64))) static void chains(void *arg)
{
    (void)arg;
    int core = (int)pi_core_id();
    float a0 = 1.0f + (float)core, a1 = 1.1f, a2 = 1.2f, a3 = 1.3f, a4 = 1.4f, a5 = 1.5f,
          a6 = 1.6f, a7 = 1.7f, b = 0.999f, c = 0.001f;
    pi_cl_team_barrier();
    unsigned t0 = cyc();
    for (int i = 0; i < %(iters)d; i++) {
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a0) : FR(b), FR(c));
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a1) : FR(b), FR(c));
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a2) : FR(b), FR(c));
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a3) : FR(b), FR(c));
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a4) : FR(b), FR(c));
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a5) : FR(b), FR(c));
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a6) : FR(b), FR(c));
        __asm__ volatile("fmadd.s %%0, %%0, %%1, %%2" : "+" FR(a7) : FR(b), FR(c));
    }
    res[core] = cyc() - t0;
    sink[core] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
static void run(void *arg)
{
    (void)arg;
    static const int teams[4] = {1, 2, 4, 8};
    for (int t = 0; t < 4; t++) {
        int n = teams[t];
        pi_cl_team_fork(n, chains, NULL);
        unsigned mx = 0;
        for (int i = 0; i < n; i++) if (res[i] > mx) mx = res[i];
        printf("FMA %%d %%u %%u\n", n, (unsigned)(n * %(iters)d * 8), mx);
    }
}
"""


@dataclass(frozen=True)
class Ceiling:
    cores: int
    fmadds: int
    cycles: int

    @property
    def per_cycle(self) -> float:
        return self.fmadds / self.cycles


def measure_ceiling() -> list[Ceiling]:
    """8 independent fmadd.s chains per core, register only, 1/2/4/8 cores;
    cycles are the slowest core's. At 8 cores the probe's own cycles depend
    on where its loop lands (64,184 to 76,158 measured, see README): it is
    built without the kernels and its function aligned to 64 bytes, the
    placement that measured fastest."""
    out = run_program(FMA_PROBE % {"iters": FMA_ITERS}, kernels=False)
    return [Ceiling(int(n), int(f), int(c)) for n, f, c in lines(out, "FMA")]


# ------------------------------------------------------------------ DMA

DMA_PROBE = r"""
#include "bsp/ram.h"
#include "bsp/ram/hyperram.h"
static void run(void *arg)
{
    (void)arg;
    static const unsigned sizes[] = {%(sizes)s};
    uint8_t *ext = pi_l2_malloc(%(maxsize)d);
    uint8_t *loc = pi_cl_l1_malloc(&cluster, %(maxsize)d);
    if (!ext || !loc) { printf("ERROR alloc\n"); return; }
    pi_cl_dma_cmd_t cmd;
    for (int dir = 0; dir < 2; dir++) {
        int d = dir ? PI_CL_DMA_DIR_LOC2EXT : PI_CL_DMA_DIR_EXT2LOC;
        for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            unsigned s = sizes[i];
            for (int rep = 0; rep < 2; rep++) {  /* the second one is reported */
                unsigned t0 = cyc();
                pi_cl_dma_cmd((uint32_t)ext, (uint32_t)loc, s, d, &cmd);
                unsigned t1 = cyc();
                pi_cl_dma_cmd_wait(&cmd);
                unsigned t2 = cyc();
                if (rep) printf("DMA1 %%d %%u %%u %%u\n", dir, s, t1 - t0, t2 - t0);
            }
            /* 2-D: rows of %(row)d bytes every 2 x %(row)d bytes in L2 */
            if (s >= %(row)d && s * 2u <= %(maxsize)du) {
                for (int rep = 0; rep < 2; rep++) {
                    unsigned t0 = cyc();
                    pi_cl_dma_cmd_2d((uint32_t)ext, (uint32_t)loc, s, 2u * %(row)du, %(row)du, d,
                                     &cmd);
                    unsigned t1 = cyc();
                    pi_cl_dma_cmd_wait(&cmd);
                    unsigned t2 = cyc();
                    if (rep) printf("DMA2 %%d %%u %%u %%u\n", dir, s, t1 - t0, t2 - t0);
                }
            }
        }
    }
    /* a wait on a command that is done: the wait's own cycles */
    for (int rep = 0; rep < 3; rep++) {
        pi_cl_dma_cmd((uint32_t)ext, (uint32_t)loc, 64u, PI_CL_DMA_DIR_EXT2LOC, &cmd);
        for (volatile int i = 0; i < 200; i++) {
        }
        unsigned t0 = cyc();
        pi_cl_dma_cmd_wait(&cmd);
        printf("WAITDONE %%u\n", cyc() - t0);
    }
%(ram)s
}
"""

RAM_PART = r"""
    struct pi_device ram;
    struct pi_hyperram_conf rc;
    pi_hyperram_conf_init(&rc);
    pi_open_from_conf(&ram, &rc);
    if (pi_ram_open(&ram)) { printf("ERROR ram\n"); return; }
    uint32_t l3;
    if (pi_ram_alloc(&ram, &l3, %(maxsize)du)) { printf("ERROR ram alloc\n"); return; }
    pi_cl_ram_req_t req;
    for (int dir = 0; dir < 2; dir++) {
        for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            unsigned s = sizes[i];
            for (int rep = 0; rep < 2; rep++) {  /* the second one is reported */
                req = (pi_cl_ram_req_t){0};
                unsigned t0 = cyc();
                pi_cl_ram_copy(&ram, l3, ext, s, dir ? 0 : 1, &req);
                unsigned t1 = cyc();
                pi_cl_ram_copy_wait(&req);
                unsigned t2 = cyc();
                if (rep) printf("RAM %%d %%u %%u %%u\n", dir, s, t1 - t0, t2 - t0);
            }
        }
    }
"""


@dataclass
class Transfers:
    #: (direction "L2->L1"/"L1->L2", rank 1/2) -> [(bytes, cycles)]
    dma: dict[tuple[str, int], list[tuple[int, int]]] = field(default_factory=dict)
    #: direction "L3->L2"/"L2->L3" -> [(bytes, cycles)]
    ram: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: cycles the cluster spent issuing each HyperRAM copy (an idle interface)
    ram_issue: list[int] = field(default_factory=list)
    #: cycles the cluster controller spent issuing each DMA command
    issue: list[int] = field(default_factory=list)
    #: cycles of a wait on a command already done
    wait_done: list[int] = field(default_factory=list)


def measure_transfers(sizes: list[int], row: int = 256, ram: bool = True) -> Transfers:
    """Cycles of one cluster-DMA copy from issue to the end of its wait, 1-D
    and 2-D (rows of `row` bytes), both directions; with `ram`, one HyperRAM
    copy each direction (issued on an idle interface, then waited)."""
    mx = max(sizes) * 2
    text = DMA_PROBE % {
        "sizes": ", ".join(f"{s}u" for s in sizes),
        "maxsize": mx,
        "row": row,
        "ram": (RAM_PART % {"maxsize": mx}) if ram else "",
    }
    out = run_program(text.replace('#include "dm_kernels.h"', ""), timeout=900)
    t = Transfers()
    for tag, rank in (("DMA1", 1), ("DMA2", 2)):
        for d, s, issue, total in lines(out, tag):
            key = ("L1->L2" if d == "1" else "L2->L1", rank)
            t.issue.append(int(issue))
            t.dma.setdefault(key, []).append((int(s), int(total)))
    t.wait_done = [int(x[0]) for x in lines(out, "WAITDONE")]
    for d, s, issue, total in lines(out, "RAM"):
        t.ram.setdefault("L2->L3" if d == "1" else "L3->L2", []).append((int(s), int(total)))
        t.ram_issue.append(int(issue))
    return t


def fit(points: list[tuple[int, int]]) -> tuple[float, float]:
    """Least squares cycles = a + x / b over (x, cycles): (a, b); b = x per cycle."""
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    a = (sy - slope * sx) / n
    return a, 1.0 / slope


# ------------------------------------------------------------------ kernels


@dataclass(frozen=True)
class KernelCase:
    """One kernel call: `decl` allocates its buffers (l1f) and fills `a`."""

    name: str  # row label
    family: str  # cost-model family (targets.boards.KERNEL_FAMILIES)
    group: str  # bench table group (gemm, conv 3x3, depthwise, ...)
    shape: str
    macs: int
    fn: str
    decl: str
    units: int = 0  # work units the kernel splits over the cores (0: even split)
    #: output elements the call writes (as deeploy_mlir.cost.kernels.op_outputs counts them)
    outputs: int = 0
    #: (M, N) of a product split as gemm.c splits it (gemm, batch_matmul:
    #: deeploy_mlir.cost.kernels.gemm_share); None: `units` (0: even)
    mn: tuple[int, int] | None = None

    def share(self, cores: int) -> Fraction:
        """The busiest core's share of the call, as the cost model counts it
        (deeploy_mlir.cost.kernels `Split`)."""
        if self.mn is not None:
            return gemm_share(*self.mn, cores)
        if not self.units:
            return Fraction(1, cores)
        return Fraction(-(-self.units // cores), self.units)

    def effective(self, cores: int) -> float:
        """The MACs as the cost model sees them: the busiest core's share x cores."""
        return float(self.macs * cores * self.share(cores))


def gemm(m: int, n: int, k: int, ta: int, tb: int, label: str) -> KernelCase:
    form = {(0, 0): "A B", (0, 1): "A B^T", (1, 0): "A^T B", (1, 1): "A^T B^T"}[(ta, tb)]
    decl = (
        "dm_gemm_args_t a = {0};\n"
        f"a.A = l1f({m * k}u, 1); a.B = l1f({k * n}u, 2); a.Y = l1f({m * n}u, 3);\n"
        f"a.M = {m}; a.N = {n}; a.K = {k}; a.trans_a = {ta}; a.trans_b = {tb};\n"
        "a.alpha = 1.0f; a.beta = 0.0f;\n"
    )
    return KernelCase(
        f"gemm {form}",
        "gemm",
        "gemm",
        f"{label} M{m} N{n} K{k}".strip(),
        m * n * k,
        "dm_gemm_fp32",
        decl,
        m,
        m * n,
        (m, n),
    )


def _conv_geom(n: int, c: int, m: int, h: int, k: int, g: int, stride: int = 1) -> str:
    pad = k // 2
    o = (h + 2 * pad - k) // stride + 1
    return (
        f"a.batch = {n}; a.in_ch = {c}; a.in_h = {h}; a.in_w = {h}; a.out_ch = {m};\n"
        f"a.k_h = {k}; a.k_w = {k}; a.out_h = {o}; a.out_w = {o}; a.groups = {g};\n"
        f"a.stride_h = {stride}; a.stride_w = {stride}; a.dil_h = 1; a.dil_w = 1;"
        f" a.pad_top = {pad}; a.pad_left = {pad};\n"
    )


def conv(
    group: str, n: int, c: int, m: int, h: int, k: int, g: int, label: str, stride: int = 1
) -> list[KernelCase]:
    """Forward, input gradient and weight gradient of one convolution (pad
    k // 2, square planes, `stride`)."""
    o = (h + 2 * (k // 2) - k) // stride + 1
    macs = n * m * o * o * (c // g) * k * k
    xs, ws, ys = n * c * h * h, m * (c // g) * k * k, n * m * o * o
    s = f" s{stride}" if stride != 1 else ""
    shape = f"{label} {n}x{c}x{h}x{h}->{m} k{k} g{g}{s}"
    geom = _conv_geom(n, c, m, h, k, g, stride)
    fwd = (
        "dm_conv2d_args_t a = {0};\n"
        f"a.X = l1f({xs}u, 1); a.W = l1f({ws}u, 2); a.Y = l1f({ys}u, 3);\n" + geom
    )
    grad = (
        "dm_conv2d_grad_args_t a = {0};\n"
        f"a.dY = l1f({ys}u, 4); a.X = l1f({xs}u, 1); a.W = l1f({ws}u, 2);\n" + geom
    )
    return [
        KernelCase(f"{group} fwd", "conv", group, shape, macs, "dm_conv2d_fp32", fwd, 0, ys),
        KernelCase(
            f"{group} dX",
            "conv",
            group,
            shape,
            macs,
            "dm_conv2d_grad_input_fp32",
            grad + f"a.dX = l1f({xs}u, 5);\n",
            0,
            xs,
        ),
        KernelCase(
            f"{group} dW",
            "conv",
            group,
            shape,
            macs,
            "dm_conv2d_grad_weight_fp32",
            grad + f"a.dW = l1f({ws}u, 5);\n",
            0,
            ws,
        ),
    ]


def binary(shape: tuple[int, ...], b_shape: tuple[int, ...]) -> KernelCase:
    """Y = A + B, B broadcast from `b_shape` (same rank, 1 on broadcast dims)."""
    size = 1
    for d in shape:
        size *= d
    bsize = 1
    for d in b_shape:
        bsize *= d
    st, bst, acc, bacc = [0] * 4, [0] * 4, 1, 1
    for i in range(len(shape) - 1, -1, -1):
        st[i], acc = acc, acc * shape[i]
        bst[i], bacc = (0 if b_shape[i] == 1 and shape[i] != 1 else bacc), bacc * b_shape[i]
    dims = list(shape) + [1] * (4 - len(shape))
    decl = (
        "dm_binary_args_t a = {0};\n"
        f"a.A = l1f({size}u, 1); a.B = l1f({bsize}u, 2); a.Y = l1f({size}u, 3);\n"
        f"a.rank = {len(shape)}; a.op = DM_BINARY_ADD;\n"
        + "".join(
            f"a.shape[{i}] = {dims[i]}; a.a_strides[{i}] = {st[i]}; a.b_strides[{i}] = {bst[i]};\n"
            for i in range(len(shape))
        )
    )
    label = "x".join(map(str, shape)) + " + " + "x".join(map(str, b_shape))
    return KernelCase("add", "binary", "binary", label, size, "dm_binary_fp32", decl, 0, size)


def transpose(shape: tuple[int, ...], perm: tuple[int, ...]) -> KernelCase:
    size = 1
    for d in shape:
        size *= d
    decl = (
        "dm_transpose_args_t a = {0};\n"
        f"a.X = l1f({size}u, 1); a.Y = l1f({size}u, 2); a.rank = {len(shape)};\n"
        + "".join(f"a.shape[{i}] = {d}; a.perm[{i}] = {perm[i]};\n" for i, d in enumerate(shape))
    )
    label = "x".join(map(str, shape)) + " perm " + "".join(map(str, perm))
    return KernelCase(
        "transpose", "transpose", "transpose", label, size, "dm_transpose_fp32", decl, 0, size
    )


def batch_matmul(b: int, m: int, n: int, k: int, tb: int) -> KernelCase:
    """b products of A [M, K] and B ([K, N], or [N, K] with `tb`), batched."""
    decl = (
        "dm_batch_matmul_args_t a = {0};\n"
        f"a.gemm.A = l1f({b * m * k}u, 1); a.gemm.B = l1f({b * k * n}u, 2);"
        f" a.gemm.Y = l1f({b * m * n}u, 3);\n"
        f"a.gemm.M = {m}; a.gemm.N = {n}; a.gemm.K = {k}; a.gemm.trans_b = {tb};\n"
        "a.gemm.alpha = 1.0f; a.gemm.beta = 0.0f;\n"
        f"a.batch_rank = 1; a.batch_shape[0] = {b}; a.a_strides[0] = {m * k};"
        f" a.b_strides[0] = {k * n};\n"
    )
    return KernelCase(
        "batch matmul",
        "batch_matmul",
        "batch_matmul",
        f"{b}x M{m} N{n} K{k}" + (" B^T" if tb else ""),
        b * m * n * k,
        "dm_batch_matmul_fp32",
        decl,
        0,
        b * m * n,
        (m, n),
    )


def maxpool(planes: int, h: int, label: str) -> KernelCase:
    o = h // 2
    decl = (
        "dm_pool2d_args_t a = {0};\n"
        f"a.X = l1f({planes * h * h}u, 1); a.Y = l1f({planes * o * o}u, 2);\n"
        f"a.indices = (int64_t *)l1f({planes * o * o * 2}u, 3);\n"
        f"a.planes = {planes}; a.in_h = {h}; a.in_w = {h}; a.out_h = {o}; a.out_w = {o};\n"
        "a.k_h = 2; a.k_w = 2; a.stride_h = 2; a.stride_w = 2; a.dil_h = 1; a.dil_w = 1;\n"
        f"a.tile_ch = {planes}; a.frame_c = {planes}; a.frame_h = {h}; a.frame_w = {h};\n"
    )
    return KernelCase(
        "maxpool 2x2",
        "reduce",
        "pooling",
        f"{label} {planes}x{h}x{h}",
        planes * o * o * 4,
        "dm_maxpool2d_fp32",
        decl,
        0,
        2 * planes * o * o,  # Y and the indices
    )


def _pool_decl(planes: int, h: int, k: int, stride: int, pad: int) -> tuple[int, str]:
    o = (h + 2 * pad - k) // stride + 1
    geom = (
        f"a.planes = {planes}; a.in_h = {h}; a.in_w = {h}; a.out_h = {o}; a.out_w = {o};\n"
        f"a.k_h = {k}; a.k_w = {k}; a.stride_h = {stride}; a.stride_w = {stride};"
        f" a.dil_h = 1; a.dil_w = 1; a.pad_top = {pad}; a.pad_left = {pad};\n"
    )
    return o, geom


def maxpool_k(
    planes: int, h: int, k: int, stride: int, pad: int, label: str, indices: bool = True
) -> KernelCase:
    """Max pooling k x k, `stride`, `pad` on every border, square planes; with
    `indices` the int64 indices too (as a training step asks)."""
    o, geom = _pool_decl(planes, h, k, stride, pad)
    idx = f"(int64_t *)l1f({planes * o * o * 2}u, 3)" if indices else "NULL"
    decl = (
        "dm_pool2d_args_t a = {0};\n"
        f"a.X = l1f({planes * h * h}u, 1); a.Y = l1f({planes * o * o}u, 2);\n"
        f"a.indices = {idx};\n" + geom
    )
    name = f"maxpool {k}x{k} s{stride} pad{pad}" + ("" if indices else " no idx")
    return KernelCase(
        name,
        "reduce",
        "pooling",
        f"{label} {planes}x{h}x{h}".strip(),
        planes * o * o * k * k,
        "dm_maxpool2d_fp32",
        decl,
        0,
        (2 if indices else 1) * planes * o * o,
    )


def maxpool_grad(planes: int, h: int, k: int, stride: int, pad: int, label: str) -> KernelCase:
    """MaxPoolGrad of maxpool_k's call: the indices from one forward call on
    8 cores (outside the timed calls); "MACs" are the outputs scattered."""
    o, geom = _pool_decl(planes, h, k, stride, pad)
    decl = (
        "dm_pool2d_args_t f = {0};\n"
        f"f.X = l1f({planes * h * h}u, 1); f.Y = l1f({planes * o * o}u, 2);\n"
        f"f.indices = (int64_t *)l1f({planes * o * o * 2}u, 3);\n"
        + geom.replace("a.", "f.")
        + "pi_cl_team_fork(8, dm_maxpool2d_fp32, &f);\n"
        "dm_pool2d_grad_args_t a = {0};\n"
        f"a.dY = l1f({planes * o * o}u, 4); a.indices = f.indices;"
        f" a.dX = l1f({planes * h * h}u, 5);\n" + geom
    )
    return KernelCase(
        f"maxpool grad {k}x{k} s{stride} pad{pad}",
        "reduce",
        "pooling",
        f"{label} {planes}x{h}x{h}".strip(),
        planes * o * o,
        "dm_maxpool2d_grad_fp32",
        decl,
        0,
        planes * h * h,
    )


def accumulate(size: int) -> KernelCase:
    """InPlaceAccumulatorV2 (reset 0): out = buffer + grad, out aliasing buffer."""
    decl = (
        "dm_accumulate_args_t a = {0};\n"
        f"a.buffer = l1f({size}u, 1); a.grad = l1f({size}u, 2); a.out = (float *)a.buffer;\n"
        "static const uint8_t no_reset = 0; a.reset = &no_reset;"
        f" a.size = {size};\n"
    )
    return KernelCase(
        "accumulate",
        "elementwise",
        "elementwise",
        f"{size}",
        size,
        "dm_accumulate_fp32",
        decl,
        0,
        size,
    )


def relu_grad(size: int) -> KernelCase:
    decl = (
        "dm_relu_grad_args_t a = {0};\n"
        f"a.dY = l1f({size}u, 1); a.X = l1f({size}u, 2); a.dX = l1f({size}u, 3);"
        f" a.size = {size};\n"
    )
    return KernelCase(
        "relu_grad",
        "elementwise",
        "elementwise",
        f"{size}",
        size,
        "dm_relu_grad_fp32",
        decl,
        0,
        size,
    )


def layernorm(rows: int, cols: int, label: str) -> KernelCase:
    decl = (
        "dm_layernorm_args_t a = {0};\n"
        f"a.X = l1f({rows * cols}u, 1); a.scale = l1f({cols}u, 2); a.bias = l1f({cols}u, 3);\n"
        f"a.Y = l1f({rows * cols}u, 4); a.mean = l1f({rows}u, 5); a.inv_std = l1f({rows}u, 6);\n"
        f"a.rows = {rows}; a.cols = {cols}; a.epsilon = 1e-5f;\n"
    )
    return KernelCase(
        "layernorm",
        "reduce",
        "layernorm",
        f"{label} {rows}x{cols}",
        rows * cols,
        "dm_layernorm_fp32",
        decl,
        0,
        rows * cols + 2 * rows,  # Y, mean, inv_std
    )


def layernorm_grad(rows: int, cols: int, label: str) -> KernelCase:
    """LayerNormalizationGrad as a step runs it: dScale and dBias
    (dm_layernorm_grad_params_fp32), then dX (two forks); the forward's
    mean and inv_std."""
    decl = (
        "dm_layernorm_grad_params_args_t p = {0};\n"
        f"p.dY = l1f({rows * cols}u, 1); p.X = l1f({rows * cols}u, 2);"
        f" p.mean = l1f({rows}u, 3); p.inv_std = l1f({rows}u, 4);\n"
        f"p.dScale = l1f({cols}u, 5); p.dBias = l1f({cols}u, 6);\n"
        f"p.rows = {rows}; p.cols = {cols};\n"
        "dm_layernorm_grad_args_t a = {0};\n"
        f"a.dY = p.dY; a.X = p.X; a.scale = l1f({cols}u, 7); a.mean = p.mean;"
        f" a.inv_std = p.inv_std;\n"
        f"a.dX = l1f({rows * cols}u, 8); a.rows = {rows}; a.cols = {cols}; a.epsilon = 1e-5f;\n"
    )
    return KernelCase(
        "layernorm grad",
        "norm_grad",
        "layernorm",
        f"{label} {rows}x{cols}".strip(),
        rows * cols,
        "dm_layernorm_grad_params_fp32, &p);\n"
        "            pi_cl_team_fork(n, dm_layernorm_grad_fp32",
        decl,
        0,
        rows * cols + 2 * cols,  # dX, dScale, dBias
    )


def reduce_sum(shape: tuple[int, ...], mask: int, label: str = "") -> KernelCase:
    """ReduceSum of X `shape` over the dims whose bit is set in `mask` (bit
    d: dim d, outermost first); "MACs" are the input elements, parallel
    over the outputs."""
    size = 1
    for x in shape:
        size *= x
    outs = 1
    for d, x in enumerate(shape):
        if not mask & (1 << d):
            outs *= x
    dims = "".join(f" a.shape[{d}] = {x};" for d, x in enumerate(shape))
    decl = (
        "dm_reduce_args_t a = {0};\n"
        f"a.X = l1f({size}u, 1); a.Y = l1f({outs}u, 2); a.rank = {len(shape)};{dims}\n"
        f"a.reduce_mask = {mask}u;\n"
    )
    return KernelCase(
        "reduce_sum",
        "reduce_sum",
        "reduce",
        (f"{label} " if label else "") + "x".join(map(str, shape)) + f" mask {mask}",
        size,
        "dm_reduce_sum_fp32",
        decl,
        outs,
        outs,
    )


def layernorm_grad_dx(rows: int, cols: int, label: str) -> KernelCase:
    """dX of a layer norm alone (the forward's mean and inv_std given, as a
    step passes them)."""
    decl = (
        "dm_layernorm_grad_args_t a = {0};\n"
        f"a.dY = l1f({rows * cols}u, 1); a.X = l1f({rows * cols}u, 2); a.scale = l1f({cols}u, 3);\n"
        f"a.mean = l1f({rows}u, 4); a.inv_std = l1f({rows}u, 5); a.dX = l1f({rows * cols}u, 6);\n"
        f"a.rows = {rows}; a.cols = {cols}; a.epsilon = 1e-5f;\n"
    )
    return KernelCase(
        "layernorm grad dX",
        "norm_grad",
        "layernorm",
        f"{label} {rows}x{cols}",
        rows * cols,
        "dm_layernorm_grad_fp32",
        decl,
        0,
        rows * cols,
    )


def layernorm_grad_params(rows: int, cols: int, label: str) -> KernelCase:
    decl = (
        "dm_layernorm_grad_params_args_t a = {0};\n"
        f"a.dY = l1f({rows * cols}u, 1); a.X = l1f({rows * cols}u, 2);\n"
        f"a.mean = l1f({rows}u, 3); a.inv_std = l1f({rows}u, 4);\n"
        f"a.dScale = l1f({cols}u, 5); a.dBias = l1f({cols}u, 6);\n"
        f"a.rows = {rows}; a.cols = {cols};\n"
    )
    return KernelCase(
        "layernorm grad dScale dBias",
        "norm_grad",
        "layernorm",
        f"{label} {rows}x{cols}",
        rows * cols,
        "dm_layernorm_grad_params_fp32",
        decl,
        0,
        2 * cols,
    )


def softmax_grad(rows: int, cols: int, label: str) -> KernelCase:
    decl = (
        "dm_softmax_grad_args_t a = {0};\n"
        f"a.dY = l1f({rows * cols}u, 1); a.Y = l1f({rows * cols}u, 2);"
        f" a.dX = l1f({rows * cols}u, 3);\n"
        f"a.outer = {rows}; a.len = {cols}; a.inner = 1;\n"
    )
    return KernelCase(
        "softmax grad",
        "loss",
        "softmax",
        f"{label} {rows}x{cols}",
        rows * cols,
        "dm_softmax_grad_fp32",
        decl,
        0,
        rows * cols,
    )


def softmax(rows: int, cols: int, label: str) -> KernelCase:
    decl = (
        "dm_softmax_args_t a = {0};\n"
        f"a.X = l1f({rows * cols}u, 1); a.Y = l1f({rows * cols}u, 2);\n"
        f"a.outer = {rows}; a.len = {cols}; a.inner = 1;\n"
    )
    return KernelCase(
        "softmax",
        "loss",
        "softmax",
        f"{label} {rows}x{cols}",
        rows * cols,
        "dm_softmax_fp32",
        decl,
        0,
        rows * cols,
    )


def sce(batch: int, classes: int) -> KernelCase:
    """The loss op: log-probabilities per row, then the mean (two forks)."""
    decl = (
        "dm_sce_args_t a = {0};\n"
        f"a.logits = l1f({batch * classes}u, 1); a.labels = (int64_t *)l1f({batch * 2}u, 0);\n"
        f"memset((void *)a.labels, 0, {batch * 8}u);\n"
        f"a.log_prob = l1f({batch * classes}u, 2); a.loss = l1f(1u, 3);\n"
        f"a.batch = {batch}; a.classes = {classes}; a.reduction = DM_REDUCTION_MEAN;\n"
    )
    return KernelCase(
        "softmax cross-entropy",
        "loss",
        "loss",
        f"{batch}x{classes}",
        batch * classes,
        "dm_sce_logprob_fp32, &a);\n            pi_cl_team_fork(n, dm_sce_reduce_fp32",
        decl,
        batch,
        batch * classes + 1,  # log_prob, loss
    )


def _spread(name: str, size: int, seed: int, scale: float) -> str:
    """`float *name` of `size` elements, fill()'s [-1, 1] times `scale`."""
    return (
        f"float *{name} = l1f({size}u, {seed});\n"
        f"for (unsigned i = 0; i < {size}u; i++) {name}[i] *= {scale}f;\n"
    )


def gelu(size: int, label: str) -> KernelCase:
    """GELU (erf form) on inputs in [-3, 3] (both of dm_erff's ranges)."""
    decl = (
        _spread("x", size, 1, 3.0)
        + f"dm_gelu_args_t a = {{0}};\na.X = x; a.Y = l1f({size}u, 2); a.size = {size};\n"
    )
    return KernelCase(
        "gelu", "loss", "gelu", f"{label} {size}", size, "dm_gelu_fp32", decl, 0, size
    )


def gelu_grad(size: int, label: str) -> KernelCase:
    decl = (
        _spread("x", size, 1, 3.0) + "dm_gelu_grad_args_t a = {0};\n"
        f"a.dY = l1f({size}u, 2); a.X = x; a.dX = l1f({size}u, 3); a.size = {size};\n"
    )
    return KernelCase(
        "gelu_grad",
        "loss",
        "gelu",
        f"{label} {size}",
        size,
        "dm_gelu_grad_fp32",
        decl,
        0,
        size,
    )


def sigmoid(size: int, label: str) -> KernelCase:
    """dm_unary_ext_fp32's sigmoid on inputs in [-4, 4]."""
    decl = (
        _spread("x", size, 1, 4.0) + "dm_unary_ext_args_t a = {0};\n"
        f"a.X = x; a.Y = l1f({size}u, 2); a.size = {size}; a.op = DM_UNARY_SIGMOID;\n"
    )
    return KernelCase(
        "sigmoid", "loss", "unary", f"{label} {size}", size, "dm_unary_ext_fp32", decl, 0, size
    )


def relu(size: int) -> KernelCase:
    decl = (
        f"dm_unary_args_t a = {{0}};\na.X = l1f({size}u, 1); a.Y = l1f({size}u, 2);"
        f" a.size = {size};\n"
    )
    return KernelCase(
        "relu", "elementwise", "elementwise", f"{size}", size, "dm_relu_fp32", decl, 0, size
    )


def sgd(size: int) -> KernelCase:
    decl = (
        "dm_sgd_args_t a = {0};\n"
        f"a.weight = l1f({size}u, 1); a.grad = l1f({size}u, 2); a.lr = l1f(1u, 3);"
        f" a.out = l1f({size}u, 4); a.size = {size};\n"
    )
    return KernelCase(
        "sgd", "optimizer", "optimizer", f"{size}", size, "dm_sgd_fp32", decl, 0, size
    )


KERNEL_PROBE_CASE = r"""
    {
        %(decl)s
        for (int t = 0; t < %(nteams)d; t++) {
            int n = teams[t];
            unsigned tc = cyc();
            pi_cl_team_fork(n, %(fn)s, &a);  /* warm the instruction cache */
            tc = cyc() - tc;
            unsigned t0 = cyc();
            pi_cl_team_fork(n, %(fn)s, &a);
            unsigned t1 = cyc();
            printf("KCOLD %(idx)d %%d %%u\n", n, tc);
            printf("K %(idx)d %%d %%u\n", n, t1 - t0);
        }
        pi_cl_l1_free_all();
    }
"""

KERNEL_PROBE = r"""
static void pi_cl_l1_free_all(void);
static void *allocs[16];
static unsigned nallocs, alloc_sizes[16];
static float *l1f_track(unsigned n, int seed)
{
    float *p = l1f(n, seed);
    if (nallocs < 16) { allocs[nallocs] = p; alloc_sizes[nallocs++] = n * 4u; }
    return p;
}
#define l1f l1f_track
static void pi_cl_l1_free_all(void)
{
    while (nallocs) { nallocs--; pi_cl_l1_free(&cluster, allocs[nallocs], alloc_sizes[nallocs]); }
}
static void run(void *arg)
{
    (void)arg;
    static const int teams[] = {%(teams)s};
%(cases)s
}
"""


def measure_kernels(
    cases: list[KernelCase], teams: tuple[int, ...] = (1, 8), flags: str = FLAGS, rt: Path = RT
) -> dict[tuple[int, int], int]:
    """{(case index, team size): cycles of one call} (the second of two calls),
    the kernels of `rt` (a runtime_c directory: another revision's for a
    before/after comparison)."""
    body = "".join(
        KERNEL_PROBE_CASE
        % {"decl": c.decl.replace("\n", "\n        "), "fn": c.fn, "idx": i, "nteams": len(teams)}
        for i, c in enumerate(cases)
    )
    out = run_program(
        KERNEL_PROBE % {"teams": ", ".join(map(str, teams)), "cases": body}, flags=flags, rt=rt
    )
    if "ERROR" in out:
        raise RuntimeError(next(ln for ln in out.splitlines() if "ERROR" in ln))
    return {(int(i), int(n)): int(c) for i, n, c in lines(out, "K")}
