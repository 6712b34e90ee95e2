"""Instructions retired per MAC of the fp32 kernels, on one RV32IMF core under
QEMU (Debian's riscv64-unknown-elf-gcc -O2 -march=rv32imf, picolibc).

Each kernel runs once on a fixed problem inside a small driver; the driver
reads `minstret` around the call. The baseline measured in the same run is a
textbook triple loop compiled the same way, so the ratio shows what the
kernel's blocking buys.

    python bench/kernels.py
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from deeploy_mlir.targets.qemu import RV32_COMPILE, qemu_command, rv32_link

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
FLAGS = [*RV32_COMPILE, *rv32_link(0x200000, 0x800000), "-DNUM_CORES=1"]

DRIVER = r"""
#include <stdio.h>
#include "pmsis.h"
#include "dm_kernels.h"
#define M %(M)d
#define N %(N)d
#define K %(K)d
static float A[M * K], B[K * N], C[N], Y[M * N];
static unsigned instret(void) {
    unsigned v;
    __asm__ volatile("csrr %%0, minstret" : "=r"(v));
    return v;
}
static void naive(void) {
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += A[%(AIDX)s] * B[%(BIDX)s];
            Y[m * N + n] = acc;
        }
}
int main(void) {
    for (int i = 0; i < M * K; i++) A[i] = (float)(i %% 7) * 0.25f;
    for (int i = 0; i < K * N; i++) B[i] = (float)(i %% 5) * 0.5f;
    dm_gemm_args_t a = {A, B, %(CPTR)s, Y, M, N, K, %(TA)d, %(TB)d, 1.0f, 1.0f, 0, 1};
    unsigned t0 = instret();
    pi_cl_team_fork(1, dm_gemm_fp32, &a);
    unsigned t1 = instret();
    naive();
    unsigned t2 = instret();
    printf("KERNEL %%u NAIVE %%u\n", t1 - t0, t2 - t1);
    return 0;
}
"""

CASES = [  # name, M, N, K, trans_a, trans_b, bias
    ("gemm forward (A B^T + C)", 32, 32, 32, 0, 1, True),
    ("gemm (A B)", 32, 32, 32, 0, 0, False),
    ("gemm weight grad (A^T B)", 32, 32, 32, 1, 0, False),
    ("gemm input grad (A B)", 64, 16, 32, 0, 0, False),
]


def measure(m: int, n: int, k: int, ta: int, tb: int, bias: bool, tmp: Path) -> tuple[int, int]:
    src = tmp / "drv.c"
    src.write_text(
        DRIVER
        % {
            "M": m,
            "N": n,
            "K": k,
            "TA": ta,
            "TB": tb,
            "CPTR": "C" if bias else "NULL",
            "AIDX": "k * M + m" if ta else "m * K + k",
            "BIDX": "n * K + k" if tb else "k * N + n",
        }
    )
    elf = tmp / "drv.elf"
    subprocess.run(
        [
            "riscv64-unknown-elf-gcc",
            *FLAGS,
            f"-I{RT / 'include'}",
            f"-I{RT / 'host'}",
            str(src),
            *map(str, sorted((RT / "kernels").glob("*.c"))),
            str(RT / "host" / "pmsis_host.c"),
            "-o",
            str(elf),
            "-lm",
        ],
        check=True,
    )
    r = subprocess.run(
        qemu_command(elf),
        capture_output=True,
        text=True,
        timeout=120,
    )
    got = re.search(r"KERNEL (\d+) NAIVE (\d+)", r.stdout + r.stderr)
    assert got, r.stdout + r.stderr
    return int(got.group(1)), int(got.group(2))


def main() -> None:
    print(f"{'kernel':28} {'M':>4} {'N':>4} {'K':>4} {'instr/MAC':>9} {'naive':>7} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as t:
        for name, m, n, k, ta, tb, bias in CASES:
            kern, naive = measure(m, n, k, ta, tb, bias, Path(t))
            macs = m * n * k
            print(
                f"{name:28} {m:>4} {n:>4} {k:>4} {kern / macs:>9.2f} {naive / macs:>7.2f} "
                f"{kern / naive:>6.2f}"
            )
    print("conv kernels and their gradients: not yet in runtime_c (the models issue)")


if __name__ == "__main__":
    main()
