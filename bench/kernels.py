"""Instructions retired per MAC of the fp32 kernels, on one RV32IMF core under
QEMU (Debian's riscv64-unknown-elf-gcc -O2 -march=rv32imf, picolibc).

Each kernel runs once on a fixed problem inside a small driver that reads
`minstret` around the call. The baseline, measured in the same run and the
same driver, is a textbook loop nest for the same operation compiled the same
way (gemm: the triple loop; conv: the seven loops with a bounds test per tap;
conv gradients: the same loops scattering into dX or dW; pooling: a loop per
output over its window). The ratio column is kernel / baseline. The driver
also compares the two outputs and the run fails if they differ by more than
float32 rounding allows.

MACs: gemm M*N*K; conv and both its gradients N*M*OH*OW*(C/groups)*KH*KW
(taps in the padding counted). Pooling rows count one "MAC" per window tap.

    python bench/kernels.py [FAMILY...]     # gemm conv pool; default all
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deeploy_mlir.targets.qemu import QEMU, RV32_CC, RV32_COMPILE, qemu_command, rv32_link

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
FLAGS = [*RV32_COMPILE, *rv32_link(0x200000, 0x800000), "-DNUM_CORES=1"]
#: largest |kernel - baseline| / (1 + |baseline|) accepted (different fp32 summation orders)
TOLERANCE = 1e-4

DRIVER = r"""
#include <math.h>
#include <stdio.h>
#include "pmsis.h"
#include "dm_kernels.h"
%(decls)s
static unsigned instret(void) {
    unsigned v;
    __asm__ volatile("csrr %%0, minstret" : "=r"(v));
    return v;
}
static void naive(void) {
%(naive)s
}
static void fill(float *p, int n, int seed) {
    for (int i = 0; i < n; i++) p[i] = (float)((i * 37 + seed) %% 17) * 0.125f - 1.0f;
}
int main(void) {
%(init)s
    unsigned t0 = instret();
%(call)s
    unsigned t1 = instret();
    naive();
    unsigned t2 = instret();
    double err = 0.0;
    for (int i = 0; i < (int)(sizeof(OUT) / sizeof(float)); i++) {
        double d = fabs((double)OUT[i] - (double)REF[i]) / (1.0 + fabs((double)REF[i]));
        if (!(d <= err)) err = d;
    }
    printf("KERNEL %%u NAIVE %%u ERR %%.3e\n", t1 - t0, t2 - t1, err);
    return 0;
}
"""


@dataclass(frozen=True)
class Case:
    """One kernel on one problem, with its textbook baseline."""

    family: str
    name: str
    shape: str
    macs: int
    decls: str
    init: str
    call: str
    naive: str


# ------------------------------------------------------------------ gemm


def gemm_case(m: int, n: int, k: int, ta: int, tb: int, bias: bool, name: str) -> Case:
    aidx = "k * M + m" if ta else "m * K + k"
    bidx = "n * K + k" if tb else "k * N + n"
    decls = (
        f"#define M {m}\n#define N {n}\n#define K {k}\n"
        "static float A[M * K], B[K * N], C[N], OUT[M * N], REF[M * N];"
    )
    init = (
        "    fill(A, M * K, 1); fill(B, K * N, 2); fill(C, N, 3);\n"
        f"    dm_gemm_args_t a = {{A, B, {'C' if bias else 'NULL'}, OUT, M, N, K, {ta}, {tb},"
        " 1.0f, 1.0f, 0, 1, 0, 0, NULL};"
    )
    naive = (
        "    for (int m = 0; m < M; m++)\n"
        "        for (int n = 0; n < N; n++) {\n"
        "            float acc = 0.0f;\n"
        f"            for (int k = 0; k < K; k++) acc += A[{aidx}] * B[{bidx}];\n"
        f"            REF[m * N + n] = acc{' + C[n]' if bias else ''};\n"
        "        }"
    )
    return Case(
        "gemm",
        name,
        f"M{m} N{n} K{k}",
        m * n * k,
        decls,
        init,
        "    pi_cl_team_fork(1, dm_gemm_fp32, &a);",
        naive,
    )


def gemm_cases() -> list[Case]:
    forms = [  # trans_a, trans_b, bias, name
        (0, 1, True, "gemm A B^T + C (forward)"),
        (0, 0, False, "gemm A B (input grad)"),
        (1, 0, False, "gemm A^T B (weight grad)"),
        (1, 1, False, "gemm A^T B^T"),
    ]
    return [
        gemm_case(s, s, s, ta, tb, bias, name) for s in (32, 64) for ta, tb, bias, name in forms
    ]


# ------------------------------------------------------------------ conv


@dataclass(frozen=True)
class ConvShape:
    label: str
    n: int
    c: int
    m: int
    h: int
    w: int
    k: int
    pad: int
    groups: int

    @property
    def out(self) -> int:
        return self.h + 2 * self.pad - self.k + 1

    @property
    def macs(self) -> int:
        return self.n * self.m * self.out * self.out * (self.c // self.groups) * self.k * self.k

    def defines(self) -> str:
        s = self
        return (
            f"#define NB {s.n}\n#define CI {s.c}\n#define CO {s.m}\n#define IH {s.h}\n"
            f"#define IW {s.w}\n#define KS {s.k}\n#define PAD {s.pad}\n#define G {s.groups}\n"
            f"#define OH {s.out}\n#define OW {s.out}\n#define CG (CI / G)\n#define MG (CO / G)\n"
            "static float X[NB * CI * IH * IW], Wt[CO * CG * KS * KS], Bs[CO],"
            " DY[NB * CO * OH * OW];\n"
        )


CONV_GEOM = "NB, CI, IH, IW, CO, KS, KS, OH, OW, G, 1, 1, 1, 1, PAD, PAD"
CONV_INIT = (
    "    fill(X, NB * CI * IH * IW, 1); fill(Wt, CO * CG * KS * KS, 2); fill(Bs, CO, 3);\n"
    "    fill(DY, NB * CO * OH * OW, 4);\n"
)
# the seven loops of a convolution; BODY sees n, m, oh, ow, c (within the
# group), kh, kw and ih, iw inside the input
CONV_LOOPS = """    for (int n = 0; n < NB; n++)
    for (int m = 0; m < CO; m++)
    for (int oh = 0; oh < OH; oh++)
    for (int ow = 0; ow < OW; ow++) {
        PRE
        for (int c = 0; c < CG; c++)
        for (int kh = 0; kh < KS; kh++)
        for (int kw = 0; kw < KS; kw++) {
            int ih = oh + kh - PAD, iw = ow + kw - PAD;
            if (ih >= 0 && ih < IH && iw >= 0 && iw < IW) BODY
        }
        POST
    }"""
#: the grad kernels' geometry; one call computes the whole sums (no accumulation)
GRAD_GEOM = CONV_GEOM + ", .acc_dX = 0, .acc_dW = 0, .acc_dB = 0"
X_AT = "X[((n * CI + (m / MG) * CG + c) * IH + ih) * IW + iw]"
W_AT = "Wt[((m * CG + c) * KS + kh) * KS + kw]"
DY_AT = "DY[((n * CO + m) * OH + oh) * OW + ow]"


def conv_loops(pre: str, body: str, post: str) -> str:
    return CONV_LOOPS.replace("PRE", pre).replace("BODY", body).replace("POST", post)


def conv_cases(s: ConvShape) -> list[Case]:
    shape = f"{s.n}x{s.c}x{s.h}x{s.w} k{s.k} g{s.groups}"
    fwd = Case(
        "conv",
        f"conv2d {s.label}",
        shape,
        s.macs,
        s.defines() + "static float OUT[NB * CO * OH * OW], REF[NB * CO * OH * OW];",
        CONV_INIT + f"    dm_conv2d_args_t a = {{X, Wt, Bs, OUT, {CONV_GEOM}, .relu = 0}};",
        "    pi_cl_team_fork(1, dm_conv2d_fp32, &a);",
        conv_loops(
            "float acc = 0.0f;",
            f"acc += {X_AT} * {W_AT};",
            "REF[((n * CO + m) * OH + oh) * OW + ow] = acc + Bs[m];",
        ),
    )
    dx_at = X_AT.replace("X[", "REF[")
    dgrad = Case(
        "conv",
        f"conv2d input grad {s.label}",
        shape,
        s.macs,
        s.defines() + "static float OUT[NB * CI * IH * IW], REF[NB * CI * IH * IW];",
        CONV_INIT + f"    dm_conv2d_grad_args_t a = {{DY, X, Wt, OUT, NULL, NULL, {GRAD_GEOM}}};",
        "    pi_cl_team_fork(1, dm_conv2d_grad_input_fp32, &a);",
        "    for (int i = 0; i < NB * CI * IH * IW; i++) REF[i] = 0.0f;\n"
        + conv_loops("", f"{dx_at} += {DY_AT} * {W_AT};", ""),
    )
    dw_at = W_AT.replace("Wt[", "REF[")
    wgrad = Case(
        "conv",
        f"conv2d weight grad {s.label}",
        shape,
        s.macs,
        s.defines() + "static float OUT[CO * CG * KS * KS], REF[CO * CG * KS * KS];",
        CONV_INIT + f"    dm_conv2d_grad_args_t a = {{DY, X, NULL, NULL, OUT, NULL, {GRAD_GEOM}}};",
        "    pi_cl_team_fork(1, dm_conv2d_grad_weight_fp32, &a);",
        "    for (int i = 0; i < CO * CG * KS * KS; i++) REF[i] = 0.0f;\n"
        + conv_loops("", f"{dw_at} += {DY_AT} * {X_AT};", ""),
    )
    return [fwd, dgrad, wgrad]


CONV_SHAPES = [
    ConvShape("3x3", 1, 16, 16, 16, 16, 3, 1, 1),
    ConvShape("depthwise 3x3", 1, 32, 32, 16, 16, 3, 1, 32),
    ConvShape("pointwise 1x1", 1, 32, 32, 16, 16, 1, 0, 1),
]

# ------------------------------------------------------------------ pooling


def pool_cases() -> list[Case]:
    """2x2 stride-2 and 3x3 stride-2 pad-1 (the CCT tokenizer's) max pooling
    and 3x3 stride-1 pad-1 average pooling (count_include_pad = 0), forward,
    on 32 planes of 16x16."""
    out: list[Case] = []
    shapes = [("maxpool", 2, 2, 0, 8), ("maxpool", 3, 2, 1, 8), ("avgpool", 3, 1, 1, 16)]
    for kind, k, st, pad, oh in shapes:
        decls = (
            f"#define P 32\n#define IH 16\n#define IW 16\n#define KS {k}\n#define ST {st}\n"
            f"#define PAD {pad}\n#define OH {oh}\n#define OW {oh}\n"
            "static float X[P * IH * IW], OUT[P * OH * OW], REF[P * OH * OW];"
        )
        init = (
            "    fill(X, P * IH * IW, 1);\n"
            "    dm_pool2d_args_t a = {.X = X, .Y = OUT, .indices = NULL, .planes = P,"
            " .in_h = IH, .in_w = IW, .out_h = OH, .out_w = OW, .k_h = KS, .k_w = KS,"
            " .stride_h = ST, .stride_w = ST, .dil_h = 1, .dil_w = 1, .pad_top = PAD,"
            " .pad_left = PAD};"
        )
        first, step, post = (
            ("-INFINITY", "v = x > v ? x : v;", "v")
            if kind == "maxpool"
            else ("0.0f", "v += x; cnt++;", "v / (float)cnt")
        )
        naive = f"""    for (int p = 0; p < P; p++)
    for (int oh = 0; oh < OH; oh++)
    for (int ow = 0; ow < OW; ow++) {{
        float v = {first};
        int cnt = 0;
        for (int kh = 0; kh < KS; kh++)
        for (int kw = 0; kw < KS; kw++) {{
            int ih = oh * ST + kh - PAD, iw = ow * ST + kw - PAD;
            if (ih >= 0 && ih < IH && iw >= 0 && iw < IW) {{
                float x = X[(p * IH + ih) * IW + iw];
                {step}
            }}
        }}
        (void)cnt;
        REF[(p * OH + oh) * OW + ow] = {post};
    }}"""
        out.append(
            Case(
                "pool",
                f"{kind} {k}x{k}/{st}" + (f" pad {pad}" if pad else "") + " (per tap)",
                f"32x16x16 k{k}",
                32 * oh * oh * k * k,
                decls,
                init,
                f"    pi_cl_team_fork(1, dm_{kind}2d_fp32, &a);",
                naive,
            )
        )
    return out


# ------------------------------------------------------------------ running


def all_cases() -> list[Case]:
    return [*gemm_cases(), *(c for s in CONV_SHAPES for c in conv_cases(s)), *pool_cases()]


def driver_source(case: Case) -> str:
    return DRIVER % {"decls": case.decls, "init": case.init, "call": case.call, "naive": case.naive}


def build(case: Case, tmp: Path) -> Path:
    """The case's driver compiled and linked for RV32; raises with the
    compiler's words unless it builds without a warning."""
    src = tmp / "drv.c"
    src.write_text(driver_source(case))
    elf = tmp / "drv.elf"
    r = subprocess.run(
        [
            RV32_CC,
            *FLAGS,
            "-Wall",
            "-Wextra",
            f"-I{RT / 'include'}",
            f"-I{RT / 'host'}",
            str(src),
            *map(str, sorted((RT / "kernels").glob("*.c"))),
            str(RT / "host" / "pmsis_host.c"),
            "-o",
            str(elf),
            "-lm",
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 or r.stderr.strip():
        raise RuntimeError(f"{case.name}: the driver does not build cleanly:\n{r.stderr}")
    return elf


def measure(case: Case, tmp: Path) -> tuple[int, int, float]:
    """(kernel instret, baseline instret, largest relative difference)"""
    elf = build(case, tmp)
    run = subprocess.run(qemu_command(elf), capture_output=True, text=True, timeout=300)
    got = re.search(r"KERNEL (\d+) NAIVE (\d+) ERR (\S+)", run.stdout + run.stderr)
    if got is None:
        raise RuntimeError(f"{case.name}: no result from QEMU:\n{run.stdout}{run.stderr}")
    return int(got.group(1)), int(got.group(2)), float(got.group(3))


def main(argv: list[str]) -> int:
    families = {"gemm", "conv", "pool"}
    unknown = sorted(set(argv) - families)
    if unknown:
        print(
            f"bench/kernels.py: unknown kernel family {unknown[0]!r} (gemm, conv, pool)",
            file=sys.stderr,
        )
        return 2
    missing = [t for t in (RV32_CC, QEMU) if shutil.which(t) is None]
    if missing:
        print(
            f"bench/kernels.py: {', '.join(missing)} not found; install the Debian packages "
            "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc",
            file=sys.stderr,
        )
        return 2
    cases = [c for c in all_cases() if not argv or c.family in argv]
    print(f"{'kernel':34} {'problem':22} {'instr/MAC':>9} {'naive':>7} {'ratio':>6}")
    bad: list[str] = []
    with tempfile.TemporaryDirectory() as t:
        for case in cases:
            kern, naive, err = measure(case, Path(t))
            print(
                f"{case.name:34} {case.shape:22} {kern / case.macs:>9.2f} "
                f"{naive / case.macs:>7.2f} {kern / naive:>6.2f}",
                flush=True,
            )
            if not err <= TOLERANCE:
                bad.append(f"{case.name} ({case.shape}): differs from the baseline by {err:.2e}")
    for b in bad:
        print(f"bench/kernels.py: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
