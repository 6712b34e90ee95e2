"""Calibrate the siracusa board (deeploy_mlir/targets/boards/siracusa.yaml)
against GVSoC siracusa, and write the numbers into it.

    python bench/calibrate.py            # measure, print, write the board
    python bench/calibrate.py --dry-run  # measure and print only
    python bench/calibrate.py --isa zfinx  # the chip's own ISA: siracusa_zfinx.yaml
    python bench/calibrate.py --isa zfinx --raw R.json   # also keep the measurements
    python bench/calibrate.py --isa zfinx --from-raw R.json  # fit them again, no simulation

--isa zfinx measures the kernel families (the same probes, the call-site
probe, the FMA ceiling) with clang-19 -march=rv32imc_zfinx on the Zfinx
GVSoC (scripts/build-gvsoc-zfinx.sh; floats in the x registers, as the real
Siracusa's cores) and writes deeploy_mlir/targets/boards/siracusa_zfinx.yaml:
the chip and its DMA engines copied from siracusa.yaml (the DMA is not the
cores' ISA; the emitted-form `issue` is measured on Zfinx and printed), the
kernels this ISA's. About 2-3 minutes; run it again after a kernel change.

What it measures (bench/gvsoc_probe.py's programs; about two minutes):

* the cluster DMA (mchan), 1-D and 2-D (256-byte rows), L2->L1 and L1->L2,
  256 to 16,384 bytes: cycles from issuing one command to the end of its
  wait, fitted as setup + bytes / bandwidth; the cycles the cluster
  controller spends issuing one command (`issue`);
* the HyperRAM (L3) through runtime_c/gvsoc's uDMA copies, both directions,
  the same sizes, each issued on an idle interface and waited (a fit per
  direction; the cluster's issue cycles apart: the engine's queue overlaps
  the rest);
* the fixed cost of an empty kernel call at 8 cores (a fork of
  `dm_relu_fp32` on 0 elements: fork, the workers' wake-up, the barrier);
* each kernel family's MAC/cycle and cycles per call at 8 cores over 3-4
  sizes each, from the examples' small layers to the published ones, and
  every kernel call of one untiled step of the examples in PROFILED
  (`pi_cl_team_fork`s of the emitted C timed one by one, matched to the
  IR's compute ops in program order). Model: cycles = calls x call + MACs /
  (8 x MAC/cycle/core). MAC/cycle/core: the probes, least squares through
  the origin of (MACs, cycles - calls x empty fork); call: the mean over
  the probes and the examples' calls of (cycles - MACs term) / calls, at
  least the empty fork. The DMA's `issue` is what the examples' steps
  show per copy: (step - kernel calls - setup + bytes / bandwidth of every
  copy) / copies, the cluster's cost of issuing and waiting in the emitted
  code (an isolated issue is printed too).
  Families (deeploy_mlir/cost/kernels.py): gemm (A B, A B^T, A^T B), conv
  (3x3 forward, dX, dW), depthwise (3x3 forward, dX, dW), elementwise (relu),
  reduce (layernorm, maxpool 2x2), norm, norm_grad, maxpool, maxpool_grad,
  reduce_sum, softmax, gelu, gelu_grad, loss (softmax cross-entropy),
  optimizer (sgd); the probe shapes include the published CCT's tiles.
  gemm and batch_matmul split each product as gemm.c does
  (deeploy_mlir.cost.kernels.gemm_share), the loss its rows, reduce_sum its
  outputs: MACs and outputs are the busiest core's share x 8.

The board's schema has one setup and bandwidth per engine: the DMA's are
the fit over every direction and shape (the per-direction fits are in the
file's comments).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gvsoc_probe as P

ROOT = Path(__file__).resolve().parents[1]
BOARDS_DIR = ROOT / "deeploy_mlir" / "targets" / "boards"
#: the board each ISA's calibration writes (--isa): "f" the GVSoC build of
#: ../shared/gvsoc (Debian gcc, f registers), "zfinx" the real chip's ISA
#: (clang-19 -march=rv32imc_zfinx on scripts/build-gvsoc-zfinx.sh's GVSoC)
BOARDS = {"f": BOARDS_DIR / "siracusa.yaml", "zfinx": BOARDS_DIR / "siracusa_zfinx.yaml"}
#: the command that writes each ISA's board (quoted in its comments)
CMDS = {"f": "python bench/calibrate.py", "zfinx": "python bench/calibrate.py --isa zfinx"}
CMD = CMDS["f"]
DMA_SIZES = [256, 1024, 4096, 16384]
CORES = 8


#: the throughput written for a family whose fit has no MACs term
NO_MAC_TERM = 1000.0
#: a case's role in the fit: fitted, or held out (its error printed)
FIT, HOLD = "fit", "held out"


def family_cases() -> dict[str, list[tuple[P.KernelCase, str]]]:
    """Per family its probe calls, each fitted or held out: shapes from the
    examples' small layers (batches of 2-8, 4-32 channels, 4x4 to 8x8 planes)
    to the published models' (64 cubed, 16x16 planes)."""
    fam: dict[str, list[tuple[P.KernelCase, str]]] = {}
    gemms = [
        (2, 4, 8, 0, 1), (6, 12, 16, 0, 1), (4, 12, 6, 1, 0), (6, 12, 4, 0, 0),
        (8, 32, 16, 0, 1), (16, 16, 16, 1, 0), (32, 32, 32, 0, 0), (64, 64, 64, 0, 1),
        (2, 64, 64, 0, 0), (64, 10, 2, 1, 0), (12, 16, 6, 1, 0), (32, 32, 32, 0, 1),
        # the published CCT's tiles (bench/step_kernels.py): 64 cubed in the
        # forms it runs, ragged M (gemm.c's 4 x 4 tile split), K 1 and N 1
        (64, 64, 64, 1, 0), (43, 64, 64, 1, 0), (64, 1, 64, 1, 0), (42, 64, 64, 1, 0),
        (10, 128, 1, 1, 0), (64, 64, 64, 0, 0),
    ]  # fmt: skip
    fam["gemm"] = [
        (P.gemm(m, n, k, ta, tb, ""), HOLD if i % 4 == 3 else FIT)
        for i, (m, n, k, ta, tb) in enumerate(gemms)
    ]
    convs = [
        (1, 16, 16, 4, 3), (1, 16, 16, 8, 3), (1, 16, 16, 16, 3), (2, 8, 8, 6, 1),
        (2, 8, 16, 8, 3), (2, 16, 16, 4, 1), (1, 32, 32, 8, 1), (2, 4, 8, 8, 3),
    ]  # fmt: skip
    convs += [(2, 3, 4, 8, 3), (2, 8, 8, 4, 3), (2, 3, 8, 8, 3), (1, 8, 16, 8, 1)]
    # the published CCT's tiles: 64 and 11-16 channels on 16x16, its 3-channel tokenizer
    convs += [(1, 64, 9, 16, 3), (1, 11, 64, 16, 3), (1, 16, 26, 16, 3), (1, 3, 8, 32, 3)]
    _conv_families(fam, "conv", [(n, ci, m, h, k, 1, 1) for n, ci, m, h, k in convs], 4)
    strided = [
        (2, 4, 8, 8, 3), (2, 8, 16, 6, 3), (2, 3, 8, 12, 3), (2, 4, 8, 8, 1),
        (2, 8, 8, 4, 1), (2, 8, 8, 8, 3), (1, 16, 16, 8, 1), (2, 16, 16, 4, 3),
    ]  # fmt: skip
    _conv_families(fam, "conv_s", [(n, ci, m, h, k, 1, 2) for n, ci, m, h, k in strided], 4)
    # depthwise 3x3 on planes >= 8 wide: conv.c's depthwise path
    dws = ((1, 32, 8), (2, 16, 8), (1, 32, 16), (1, 8, 12), (2, 8, 10))
    _conv_families(fam, "depthwise", [(n, ch, ch, h, 3, ch, 1) for n, ch, h in dws], 2)
    # depthwise narrower than 8 or strided: the general path
    gs = ((2, 8, 4), (2, 16, 4), (1, 32, 4), (2, 8, 6), (1, 16, 5), (2, 4, 6))
    _conv_families(fam, "grouped", [(n, ch, ch, h, 3, ch, 1) for n, ch, h in gs], 3)
    gs = ((2, 8, 6), (2, 4, 12), (2, 16, 4), (2, 16, 6), (2, 8, 8), (1, 32, 8))
    _conv_families(fam, "grouped_s", [(n, ch, ch, h, 3, ch, 2) for n, ch, h in gs], 3)
    fam["elementwise"] = [
        (P.relu(n), HOLD if i == 2 else FIT) for i, n in enumerate((16, 64, 256, 512, 4096))
    ]
    bins = [
        ((2, 4, 8, 8), (2, 4, 8, 8)), ((2, 16, 32), (1, 1, 32)), ((64,), (64,)),
        ((2, 16, 32), (2, 16, 32)), ((8, 32), (1, 32)), ((2, 2, 16, 16), (2, 2, 16, 16)),
        ((512,), (512,)), ((2, 8, 4, 4), (2, 8, 4, 4)),
    ]  # fmt: skip
    fam["binary"] = [(P.binary(a, b), HOLD if i % 4 == 3 else FIT) for i, (a, b) in enumerate(bins)]
    tps = [
        ((2, 16, 2, 16), (0, 2, 1, 3)), ((32, 16), (1, 0)), ((2, 2, 16, 16), (0, 1, 3, 2)),
        ((64, 64), (1, 0)), ((2, 16, 4, 8), (0, 2, 1, 3)), ((8, 12), (1, 0)),
    ]  # fmt: skip
    fam["transpose"] = [
        (P.transpose(a, p), HOLD if i % 3 == 2 else FIT) for i, (a, p) in enumerate(tps)
    ]
    bmm = [
        (2, 8, 8, 8, 0),
        (4, 8, 16, 8, 1),
        (4, 16, 16, 16, 1),
        (4, 16, 16, 16, 0),
        (2, 8, 8, 8, 1),
        (8, 16, 8, 16, 0),
        (2, 32, 32, 16, 1),
        # the published CCT's tiles (bench/step_kernels.py): K 64-128, ragged
        # N, one row (one core), K 1 (an outer product)
        (1, 64, 32, 128, 0),
        (1, 32, 64, 128, 1),
        (1, 32, 43, 128, 0),
        (1, 64, 64, 64, 1),
        (1, 1, 64, 128, 0),
        (1, 64, 128, 1, 0),
        (1, 32, 42, 128, 1),
        (2, 64, 64, 64, 0),
    ]
    fam["batch_matmul"] = [
        (P.batch_matmul(*x), HOLD if i % 3 == 2 else FIT) for i, x in enumerate(bmm)
    ]
    _named_families(fam)
    fam["reduce"] = [
        (P.layernorm(2, 64, ""), FIT),
        (P.layernorm(16, 64, ""), HOLD),
        (P.layernorm(64, 64, ""), FIT),
        (P.maxpool(8, 4, ""), FIT),
        (P.maxpool(16, 8, ""), HOLD),
        (P.maxpool(16, 16, ""), FIT),
    ]
    fam["loss"] = [
        (P.sce(b, c), HOLD if i == 2 else FIT)
        for i, (b, c) in enumerate(((2, 4), (6, 4), (8, 10), (16, 10), (64, 10)))
    ]
    fam["optimizer"] = [
        (P.sgd(n), HOLD if i == 2 else FIT) for i, n in enumerate((4, 16, 64, 512, 4096))
    ]
    return fam


def _named_families(fam: dict[str, list[tuple[P.KernelCase, str]]]) -> None:
    """The families of layer norm, max pooling, ReduceSum, softmax and gelu
    (cost/kernels.py FAMILY): the examples' shapes and the published CCT's
    tiles (layer norms of 64 x 128, 3x3 stride-2 pooling of 4-32 channels
    on 16x16 and 32x32 planes, column sums of 64 x 64/128, softmax lines of
    64, gelu on 8,192)."""
    norms = ((2, 64), (16, 64), (64, 64), (64, 128), (32, 128), (8, 32), (6, 16))
    fam["norm"] = [
        (replace(P.layernorm(r, c, ""), family="norm"), HOLD if i % 3 == 1 else FIT)
        for i, (r, c) in enumerate(norms)
    ]
    fam["norm_grad"] = [
        (P.layernorm_grad(r, c, ""), HOLD if i % 3 == 1 else FIT) for i, (r, c) in enumerate(norms)
    ]
    # (planes, size, window, stride, pad); "MACs" the window taps, as the model counts them
    pools = [(8, 4, 2, 2, 0), (16, 8, 2, 2, 0), (16, 16, 2, 2, 0), (8, 32, 3, 2, 1)]
    pools += [(16, 8, 3, 2, 1), (32, 16, 3, 2, 1), (4, 32, 3, 2, 1), (2, 8, 3, 2, 1)]
    fam["maxpool"] = [
        (replace(P.maxpool_k(p, h, k, st, pd, ""), family="maxpool"), HOLD if i % 3 == 1 else FIT)
        for i, (p, h, k, st, pd) in enumerate(pools)
    ]
    fam["maxpool_grad"] = []
    for i, (p, h, k, st, pd) in enumerate(pools):
        c = P.maxpool_grad(p, h, k, st, pd, "")
        taps = replace(c, family="maxpool_grad", macs=c.macs * k * k)
        fam["maxpool_grad"].append((taps, HOLD if i % 3 == 1 else FIT))
    sums = [
        ((6, 4), 1), ((6, 12), 1), ((64, 64), 1), ((64, 128), 1), ((2, 16, 32), 3),
        ((64, 1), 3), ((1, 10), 1), ((16, 32), 1), ((64, 64), 2),
    ]  # fmt: skip
    fam["reduce_sum"] = [
        (P.reduce_sum(sh, m), HOLD if i % 3 == 1 else FIT) for i, (sh, m) in enumerate(sums)
    ]
    smx = ((128, 64), (64, 64), (8, 10), (64, 1), (32, 16), (4, 16))
    fam["softmax"] = [
        (replace(P.softmax(r, c, ""), family="softmax"), HOLD if i % 3 == 1 else FIT)
        for i, (r, c) in enumerate(smx)
    ]
    sizes = (8192, 2048, 512, 64, 4096)
    fam["gelu"] = [
        (replace(P.gelu(n, ""), family="gelu"), HOLD if i == 1 else FIT)
        for i, n in enumerate(sizes)
    ]
    fam["gelu_grad"] = [
        (replace(P.gelu_grad(n, ""), family="gelu_grad"), HOLD if i == 1 else FIT)
        for i, n in enumerate(sizes)
    ]


def _conv_families(
    fam: dict[str, list[tuple[P.KernelCase, str]]],
    name: str,
    shapes: list[tuple[int, ...]],
    every: int,
) -> None:
    """The forward, input- and weight-gradient calls of `shapes` (batch,
    in channels, out channels, size, kernel, groups[, stride]) as families
    `name`, `name`_dx and `name`_dw; every `every`-th shape held out."""
    for i, (n, c, m, h, k, g, *st) in enumerate(shapes):
        role = HOLD if i % every == every - 1 else FIT
        fwd, dx, dw = P.conv(name, n, c, m, h, k, g, "", *st)
        fam.setdefault(name, []).append((fwd, role))
        fam.setdefault(f"{name}_dx", []).append((dx, role))
        fam.setdefault(f"{name}_dw", []).append((dw, role))


def outputs(c: P.KernelCase) -> int:
    """The output elements of a probe's call, counted as the cycle model
    counts an op's (deeploy_mlir/cost/kernels.py `op_outputs`: every output
    tensor of the op)."""
    return c.outputs


@dataclass
class Fit:
    call: int  # cycles per call (fork, barrier)
    per_output: float  # cycles per output element, busiest core
    rate: float  # MACs per cycle per core
    cold: int  # cycles a call pays after another kernel's
    #: (case, role, cold cycles, warm cycles, predicted warm)
    points: list[tuple[P.KernelCase, str, int, int, float]]

    def error(self, role: str) -> float:
        errs = [abs(w - p) / w for _, r, _, w, p in self.points if r == role]
        return max(errs) if errs else 0.0


def _nnls(rows: list[list[float]], ys: list[float]) -> list[float]:
    """Least squares with coefficients >= 0 (every subset of free columns,
    the best feasible one; 3 columns)."""
    import itertools

    import numpy as np

    a, y = np.asarray(rows, dtype=float), np.asarray(ys, dtype=float)
    n = a.shape[1]
    best: tuple[float, list[float]] = (float("inf"), [0.0] * n)
    for k in range(1, n + 1):
        for cols in itertools.combinations(range(n), k):
            sol, *_ = np.linalg.lstsq(a[:, cols], y, rcond=None)
            if (sol < 0).any():
                continue
            x = [0.0] * n
            for c, v in zip(cols, sol, strict=True):
                x[c] = float(v)
            r = float(((a @ np.asarray(x) - y) ** 2).sum())
            if r < best[0]:
                best = (r, x)
    return best[1]


def fit_family(
    cases: list[tuple[P.KernelCase, str]], cyc: dict[int, tuple[int, int]], site: int = 0
) -> Fit:
    """cycles = call + per_output x outputs_b + MACs_b / (rate) over the
    fitted calls (relative residuals: each row divided by its cycles), the
    busiest core's share of outputs and MACs; cold: the median of cold -
    warm over every call."""
    share = [c.effective(CORES) / CORES / c.macs if c.macs else 1 / CORES for c, _ in cases]
    rows, ys = [], []
    for (c, role), sh, i in zip(cases, share, range(len(cases)), strict=True):
        if role != FIT:
            continue
        w = cyc[i][1]
        rows.append([1.0 / w, c.outputs * sh / w, c.macs * sh / w])
        ys.append(1.0)
    ratios = {c.outputs / c.macs for c, _ in cases if c.macs}
    call, po, inv = (0.0, 0.0, 0.0) if len(ratios) <= 1 else _nnls(rows, ys)
    if inv == 0 and po == 0:
        # outputs a fixed multiple of the MACs in every probe: the MACs
        # term alone (a throughput, per family)
        call, inv = _nnls([[r[0], r[2]] for r in rows], ys)
    # no MACs term fitted (the outputs' explain the cycles): a throughput
    # high enough to cost nothing measurable
    rate = 1.0 / inv if inv > 0 else NO_MAC_TERM
    pts = [
        (c, role, cyc[i][0], cyc[i][1], call + po * c.outputs * sh + c.macs * sh / rate)
        for i, ((c, role), sh) in enumerate(zip(cases, share, strict=True))
    ]
    colds = sorted(max(0, cold - warm) for _, _, cold, warm, _ in pts)
    # the board's call: the fitted one plus what a step's call site adds
    return Fit(round(call) + site, round(po, 3), round(rate, 4), colds[len(colds) // 2], pts)


FLUSH = r"""
static float *fl_x, *fl_y, *fl_lr;
static void flush(int relu)
{
    if (!fl_x) { fl_x = l1f(8u, 7); fl_y = l1f(8u, 8); fl_lr = l1f(1u, 9); }
    if (relu) {
        dm_unary_args_t f = {fl_x, fl_y, 8u};
        pi_cl_team_fork(8, dm_relu_fp32, &f);
    } else {
        dm_sgd_args_t f = {fl_x, fl_y, fl_lr, fl_y, 8u};
        pi_cl_team_fork(8, dm_sgd_fp32, &f);
    }
}
"""

CASE = r"""
    {
        int n = teams[0];
        %(decl)s
        flush(%(relu)d);  /* another kernel ran last, as in a step */
        unsigned t0 = cyc();
        pi_cl_team_fork(n, %(fn)s, &a);
        unsigned t1 = cyc();
        pi_cl_team_fork(n, %(fn)s, &a);
        unsigned t2 = cyc();
        printf("KC %(idx)d %%u %%u\n", t1 - t0, t2 - t1);
        pi_cl_l1_free_all();
    }
"""


def measure_cold_warm(cases: list[P.KernelCase]) -> dict[int, tuple[int, int]]:
    """{case index: (cycles of a call after another kernel's, of the same
    call again)} at 8 cores."""
    body = "".join(
        CASE
        % {
            "decl": c.decl.replace("\n", "\n        "),
            "fn": c.fn,
            "idx": i,
            "relu": int(c.fn != "dm_relu_fp32"),
        }
        for i, c in enumerate(cases)
    )
    prog = P.KERNEL_PROBE % {"teams": "8", "cases": body}
    prog = prog.replace("static void run(void *arg)", FLUSH + "static void run(void *arg)", 1)
    out = P.run_program(prog)
    if "ERROR" in out:
        raise RuntimeError(next(ln for ln in out.splitlines() if "ERROR" in ln))
    return {int(i): (int(c), int(w)) for i, c, w in P.lines(out, "KC")}


# ------------------------------------------------------------------ code as emitted

#: copies per group, bytes per copy and direction of each group of the
#: straight-line copy probe (every group once, as a step runs its copies)
COPY_GROUPS = [
    (k, nbytes, d) for nbytes in (16, 256, 1024, 4096) for k in (1, 2, 3) for d in (0, 1)
]


def emitted_copies_program() -> str:
    """Straight-line code as the C emitter writes a step's copies: per group
    k zeroed commands and pi_cl_dma_cmd calls (each its own offsets), then
    the k waits; the whole sequence runs once (its code is cold, as a step's
    is after the kernels ran) and each group is timed."""
    lines = [
        "static void run(void *arg)",
        "{",
        "    (void)arg;",
        "    uint8_t *ext = pi_l2_malloc(3 * 4096 * 4);",
        "    uint8_t *loc = pi_cl_l1_malloc(&cluster, 3 * 4096 * 4);",
        "    static pi_cl_dma_cmd_t cmds[3];",
        f"    static unsigned t[{len(COPY_GROUPS) + 1}];",
        '    if (!ext || !loc) { printf("ERROR alloc\\n"); return; }',
        "    t[0] = cyc();",
    ]
    off = 0
    for g, (k, nbytes, d) in enumerate(COPY_GROUPS):
        direction = "PI_CL_DMA_DIR_LOC2EXT" if d else "PI_CL_DMA_DIR_EXT2LOC"
        for i in range(k):
            off = (off + nbytes) % (3 * 4096 * 4 - nbytes) // 4 * 4
            lines.append(f"    cmds[{i}u] = (pi_cl_dma_cmd_t){{0}};")
            lines.append(
                f"    pi_cl_dma_cmd((uintptr_t)(ext + {off}u), (uintptr_t)(loc + {off}u), "
                f"{nbytes}u, {direction}, &cmds[{i}u]);"
            )
        lines += [f"    pi_cl_dma_cmd_wait(&cmds[{i}u]);" for i in range(k)]
        lines.append(f"    t[{g + 1}] = cyc();")
    lines.append(
        f"    for (int g = 0; g < {len(COPY_GROUPS)}; g++)"
        ' printf("EDMA %d %u\\n", g, t[g + 1] - t[g]);'
    )
    lines.append("}")
    return "\n".join(lines) + "\n"


def measure_emitted_dma() -> list[tuple[str, int, int, int]]:
    """The straight-line copy probe: [(kind, bytes, k, cycles)] per group."""
    out = P.run_program(emitted_copies_program(), kernels=False)
    got = {int(g): int(c) for g, c in P.lines(out, "EDMA")}
    return [
        ("out-1d" if d else "in-1d", nbytes, k, got[g])
        for g, (k, nbytes, d) in enumerate(COPY_GROUPS)
    ]


#: kernel calls in the straight-line call-site probe
SITES = 24


def call_sites_program() -> str:
    """Straight-line code as the C emitter writes a step's kernel calls: per
    call an argument struct filled field by field (dm_gemm_args_t, 13 fields,
    each call its own values) and a fork of dm_gemm_fp32 on 0 rows; the
    sequence runs once (cold code), then one such call again and again
    (warm). Prints the mean cycles per cold call site and the warm call.
    The pointers are offsets from a base the compiler cannot see, as the
    emitted C's are from its arenas (pi_cl_l1_malloc'd at run time): with
    link-time constant pointers clang-19 builds each struct by a memcpy of
    a constant copy in L2, which the emitted code never does."""
    lines = [
        "static float buf[64];",
        "static void run(void *arg)",
        "{",
        "    (void)arg;",
        "    float *base = buf;",
        '    __asm__ volatile("" : "+r"(base));  /* a run-time address, like an arena\'s */',
        "    unsigned t0 = cyc();",
    ]
    for i in range(SITES):
        lines += [
            "    {",
            "        dm_gemm_args_t args = {",
            f"            .A = base + {i % 8}, .B = base + {(i + 1) % 8}, .C = 0, .Y = base + 32,",
            f"            .M = 0u, .N = {4 + i}u, .K = {8 + i}u, .trans_a = {i % 2}u,",
            f"            .trans_b = {(i // 2) % 2}u, .alpha = 1.0f, .beta = 0.0f,",
            f"            .c_stride_m = {i}u, .c_stride_n = 1u,",
            "        };",
            "        pi_cl_team_fork(8, dm_gemm_fp32, &args);",
            "    }",
        ]
    lines += [
        "    unsigned cold = cyc() - t0;",
        "    unsigned warm = 0;",
        "    for (int r = 0; r < 3; r++) {",
        "        dm_gemm_args_t args = {.A = buf, .B = buf, .Y = buf, .N = 4u, .K = 8u};",
        "        unsigned t1 = cyc();",
        "        pi_cl_team_fork(8, dm_gemm_fp32, &args);",
        "        warm = cyc() - t1;",
        "    }",
        f'    printf("SITES %u %u\\n", cold / {SITES}u, warm);',
        "}",
    ]
    return "\n".join(lines) + "\n"


def measure_call_sites() -> tuple[int, int]:
    """(cycles per call site in cold straight-line code, per warm call of the
    same kernel on no work): their difference is what a step's call costs
    beyond the probes' calls."""
    out = P.run_program(call_sites_program())
    ((cold, warm),) = P.lines(out, "SITES")
    return int(cold), int(warm)


def fit_issue(points: list[tuple[str, int, int, int]], copies: dict[str, tuple[int, float]]) -> int:
    """The cluster's cycles per copy (`issue`) for which the cycle model's
    events (k Transfers, k Waits, the engine's fitted setup and bandwidth
    per kind) best match the emitted-form probe (least squares over 0-400)."""
    from deeploy_mlir.cost.events import Transfer, Wait, simulate
    from deeploy_mlir.targets.boards import Board, Engine, KernelThroughput

    def board(issue: int) -> Board:
        kinds = tuple((k, s, b) for k, (s, b) in copies.items())
        e = Engine("mchan", ("L2", "L1"), 8.0, 0, 2, False, issue, kinds)
        r = Engine("ram", ("L3", "L2"), 1.0, 0, 2, True)
        kt = {f: KernelThroughput(1.0) for f in ("gemm", "conv", "elementwise", "reduce")}
        kt |= {f: KernelThroughput(1.0) for f in ("loss", "optimizer", "depthwise", "grouped")}
        return Board("probe", 8, 1, {"L1": 1, "L2": 1, "L3": 1}, {"mchan": e, "ram": r}, kt)

    def err(issue: int) -> float:
        b = board(issue)
        tot = 0.0
        for kind, nbytes, k, cycles in points:
            evs: list[Transfer | Wait] = [
                Transfer("mchan", nbytes, f"t{i}", kind) for i in range(k)
            ]
            evs += [Wait(f"t{i}") for i in range(k)]
            tot += ((simulate(b, evs).total - cycles) / cycles) ** 2
        return tot

    return min(range(0, 401), key=err)


@dataclass
class Kernels:
    """The kernel families' numbers on one ISA, and what they were fitted from."""

    #: cycles of an empty kernel call at 8 cores (relu on 0 elements)
    call: int
    kernels: dict[str, Fit]
    ceiling: list[P.Ceiling]
    #: cycles a step's call site adds (cold straight-line code filling the
    #: argument struct) over the probes' calls, and its two measurements
    site: int
    site_cold: int
    site_warm: int
    #: the measurements themselves (JSON; --raw writes them, --from-raw fits them again)
    raw: dict[str, Any]


@dataclass
class Calibration:
    dma_setup: int
    dma_bandwidth: float
    dma_issue: int
    dma_probe_issue: int
    dma_fits: dict[str, tuple[float, float]]
    #: kind ("in-1d" ...) -> (setup after the issue, bandwidth)
    copies: dict[str, tuple[int, float]]
    ram_setup: int
    ram_bandwidth: float
    ram_fits: dict[str, tuple[float, float]]
    #: cluster cycles to program one HyperRAM transfer (median over the copies)
    ram_issue: int
    #: kind ("in-1d" ...) -> (setup after the issue, bandwidth) of the HyperRAM
    ram_copies: dict[str, tuple[int, float]]
    k: Kernels


def measure_dma(sizes: list[int] = DMA_SIZES, ram: bool = True) -> P.Transfers:
    return P.measure_transfers(sizes, ram=ram)


def dma_numbers(t: P.Transfers) -> tuple[int, float, int, dict[str, tuple[float, float]]]:
    fits = {f"{d} {r}-D": P.fit(pts) for (d, r), pts in sorted(t.dma.items())}
    issue = sorted(t.issue)[len(t.issue) // 2]
    setup, bw = P.fit([p for pts in t.dma.values() for p in pts])
    # the engine's setup is what follows the issue on the cluster
    return max(0, round(setup) - issue), round(bw, 2), issue, fits


def copy_kinds(t: P.Transfers, issue: int) -> dict[str, tuple[int, float]]:
    """Per kind ("in-1d" ...) its setup after the isolated issue and its bandwidth."""
    out = {}
    for (d, r), pts in sorted(t.dma.items()):
        a, b = P.fit(pts)
        out[f"{'in' if d == 'L2->L1' else 'out'}-{r}d"] = (max(0, round(a) - issue), round(b, 2))
    return out


def measure_kernels(raw: dict[str, Any] | None = None) -> Kernels:
    """Every family's probe calls, the call-site probe and the FMA ceiling on
    GVSoC (P.ISA's build), fitted; or fitted again from `raw` (a previous
    run's Kernels.raw) without simulating."""
    cases = family_cases()
    flat = [c for cs in cases.values() for c, _ in cs]
    names = [f"{c.name} {c.shape}" for c in flat]
    if raw is None:
        site_cold, site_warm = measure_call_sites()
        cyc = measure_cold_warm([P.relu(0), *flat])
        ceiling = P.measure_ceiling()
        raw = {
            "isa": P.ISA,
            "cases": names,
            "cycles": [list(cyc[i]) for i in range(len(flat) + 1)],
            "site": [site_cold, site_warm],
            "ceiling": [[x.cores, x.fmadds, x.cycles] for x in ceiling],
        }
    if raw.get("cases") != names:
        raise SystemExit("the raw measurements are of other probe calls than family_cases()'s")
    cyc = {i: (int(a), int(b)) for i, (a, b) in enumerate(raw["cycles"])}
    site_cold, site_warm = (int(x) for x in raw["site"])
    site = max(0, site_cold - site_warm)
    kernels: dict[str, Fit] = {}
    k = 1
    for f, cs in cases.items():
        kernels[f] = fit_family(cs, {i: cyc[k + i] for i in range(len(cs))}, site)
        k += len(cs)
    ceiling = [P.Ceiling(*(int(v) for v in x)) for x in raw["ceiling"]]
    return Kernels(cyc[0][1], kernels, ceiling, site, site_cold, site_warm, raw)


def measure(ram: bool = True, raw: dict[str, Any] | None = None) -> Calibration:
    t = measure_dma(ram=ram)
    setup, bw, issue, fits = dma_numbers(t)
    kinds = copy_kinds(t, issue)
    emitted = measure_emitted_dma()
    per_copy = fit_issue(emitted, kinds)
    ram_pts = [p for pts in t.ram.values() for p in pts]
    rs, rb = P.fit(ram_pts) if ram_pts else (300.0, 1.0)
    ram_issue = sorted(t.ram_issue)[len(t.ram_issue) // 2] if t.ram_issue else 0
    ram_copies: dict[str, tuple[int, float]] = {}
    for d, pts in sorted(t.ram.items()):
        a, b = P.fit(pts)
        for r in (1, 2):  # a 2-D copy is one transfer per row (ram_gvsoc.c)
            kind = f"{'in' if d == 'L3->L2' else 'out'}-{r}d"
            ram_copies[kind] = (max(0, round(a) - ram_issue), round(b, 3))
    return Calibration(
        setup,
        bw,
        per_copy,
        issue,
        fits,
        kinds,
        round(rs),
        round(rb, 3),
        {d: P.fit(p) for d, p in t.ram.items()},
        ram_issue,
        ram_copies,
        measure_kernels(raw),
    )


def emitted_issue_here() -> int:
    """The DMA's `issue` (cluster cycles per copy as the emitted C copies)
    on P.ISA's build, fitted with the siracusa board's measured copy kinds:
    the one DMA number that is the cores' code (the engine's setup and
    bandwidth are not)."""
    from deeploy_mlir.targets.boards import load_board

    mchan = load_board(str(BOARDS["f"])).engine_between("L2", "L1")
    kinds = {k: (s, b) for k, s, b in mchan.copies}
    return fit_issue(measure_emitted_dma(), kinds)


def _fits(fits: dict[str, tuple[float, float]]) -> str:
    return "; ".join(f"{k}: {a:.0f} + B/{b:.2f}" for k, (a, b) in fits.items())


HEAD_TEXT = """\
# Siracusa (PULPOpen cluster; Prasad et al., "Siracusa: A 16 nm Heterogenous
# RISC-V SoC for Extended Reality with At-MRAM Neural Engine", arXiv:2312.14750).
# Every number says where it comes from. "measured" numbers are GVSoC
# siracusa's (../shared/gvsoc), written by `{cmd}` (bench/calibrate.py says
# how; nothing here is fitted to the example models' steps); "estimate"
# means ours, not a measurement or a datasheet value.
name: siracusa
cores: 8                 # the paper's "octa-core cluster of RISC-V DSP cores"
clock_hz: 360000000      # estimate: the order of the cluster's top clock, not measured
levels:
  L1: 262144             # 256 KiB cluster TCDM (public Siracusa descriptions)
  L2: 2097152            # 2 MiB SoC L2 SRAM (public Siracusa descriptions)
  L3: 8388608            # 8 MiB HyperRAM, as GVSoC siracusa's (and PULP boards')
engines:
  mchan:                 # cluster DMA, L2 <-> L1; in-order, reusable command
    hop: L2-L1
    # measured ({cmd}): issue-to-wait-end cycles of one copy, 256-16384 B,
    # fitted over both directions and 1-D/2-D: {dma_all:.0f} + B/{dma_bw:.2f};
    # per direction and shape: {dma_fits}
    bandwidth: {dma_bw}      # measured: bytes/cycle, the fit above
    setup: {dma_setup}            # measured: the fit's fixed cycles - one issue ({dma_probe_issue})
    # issue: the cluster's cycles per copy as the emitted C copies (a zeroed
    # command, pi_cl_dma_cmd, later its wait, in straight-line code run once):
    # the value for which the cycle model's events best match groups of 1-3
    # such copies of 16-4096 B issued and then waited, both directions ({cmd})
    issue: {dma_issue}           # measured: see above
    copies:              # measured ({cmd}): per direction and shape, setup + bandwidth
{copies}
    rank: 2              # mchan copies 1-D and 2-D (pmsis cl_dma 1d/2d calls)
    shared_request: false  # one command per transfer, reusable while in flight (in order)
  ram:                   # L3 RAM copies, L3 <-> L2 (pi_cl_ram_copy/_2d + wait)
    hop: L3-L2
    # measured ({cmd}): HyperRAM copies through runtime_c/gvsoc's uDMA layer
    # (ram_gvsoc.c: transfers queued on transfer id 0, up to 8, 32 KiB each), 256-16384 B, issue to
    # wait end on an idle interface; per direction: {ram_fits}
    bandwidth: {ram_bw}     # measured: the fit over both directions (copies: each its own)
    setup: {ram_setup}          # measured: that fit's fixed cycles - one issue
    # issue: the cluster's cycles to program one transfer (its registers, through
    # the SoC interconnect): pi_cl_ram_copy's own cycles on an idle interface
    issue: {ram_issue}           # measured: median of the copies above
    copies:              # measured: per direction, the fit above - one issue
{ram_copies}
    queue: 8             # ram_gvsoc.c: a transfer id queues 8 (GVSoC udma_hyper_v3's FIFO)
    chunk: 32768         # ram_gvsoc.c: bytes per transfer
    row_transfers: true  # ram_gvsoc.c: a 2-D copy is one transfer per row
    rank: 2              # 1-D and 2-D copies (pi_cl_ram_copy_2d)
    shared_request: true   # one pi_cl_ram_req_t holds one transfer: sub-copies waited one by one
"""

KERNELS_TEXT = """\
# Per kernel family (fp32, -ffp-contract=off, no SIMD), one kernel call at 8
# cores (`mcycle` around pi_cl_team_fork) costs
#   call + per_output x outputs_b + MACs_b / macs_per_cycle_per_core
# (+ cold when the call follows another kernel's: instruction cache refills)
# with outputs_b / MACs_b the busiest core's share of the output elements
# and MACs (gemm and batch_matmul as gemm.c splits a product, the loss its
# rows, reduce_sum its outputs; deeploy_mlir/cost/kernels.py). measured ({cmd}):
# probe calls of each family's kernels on GVSoC, each once after another
# kernel's call (cold) and once again (warm); call, per_output and
# macs_per_cycle_per_core: least squares (>= 0, relative residuals) over the
# warm cycles of the calls marked "fit"; cold: the median of cold - warm.
# call also holds what a step's call site adds: {site} cycles (straight-line
# code as emitted, 24 calls filling a dm_gemm_args_t each and forking on 0
# rows, run once: {site_cold} per call; the same call warm: {site_warm}).
# The held-out calls' worst error is in each line's comment. For families
# that do not multiply-accumulate one "MAC" is one element operation
# (pooling: one window tap). macs_per_cycle_per_core {no_mac}: the fit found
# no cost per MAC beyond the one per output. Empty call at 8 cores (relu on 0 elements):
# {fork} cycles. Measured FMA ceiling: {ceiling:.2f} fmadd/cycle on 8 cores
# ({ceiling_core:.2f} per core).
kernels:
{kernels}
"""
BOARD_TEXT = HEAD_TEXT + KERNELS_TEXT

_CONV = "k1 and k3, 3-64 channels, batch 1-2, 4x4 to 32x32 (the published CCT's tiles)"
_CONV_S = "stride 2, k1 and k3, 3-16 channels, batch 1-2, 4x4 to 12x12"
_DW = "depthwise 3x3 on planes >= 8 wide (the depthwise path), 8-32 channels"
_GROUPED = "depthwise 3x3 narrower than 8 (the general path), 4-32 channels"
_GROUPED_S = "depthwise 3x3 stride 2 (the general path), 4-32 channels, 4x4 to 12x12"
KERNEL_NOTES = {
    "gemm": "A B, A B^T, A^T B, M N K 2x4x8 to 64 cubed (the published CCT's tiles: M 42-43, K 1)",
    "conv": f"conv forward, {_CONV}",
    "conv_dx": f"conv input gradient, {_CONV}",
    "conv_dw": f"conv weight gradient, {_CONV}",
    "conv_s": f"conv forward, {_CONV_S}",
    "conv_s_dx": f"conv input gradient, {_CONV_S}",
    "conv_s_dw": f"conv weight gradient, {_CONV_S}",
    "depthwise": f"forward, {_DW}",
    "depthwise_dx": f"input gradient, {_DW}",
    "depthwise_dw": f"weight gradient, {_DW}",
    "grouped": f"forward, {_GROUPED}",
    "grouped_dx": f"input gradient, {_GROUPED}",
    "grouped_dw": f"weight gradient, {_GROUPED}",
    "grouped_s": f"forward, {_GROUPED_S}",
    "grouped_s_dx": f"input gradient, {_GROUPED_S}",
    "grouped_s_dw": f"weight gradient, {_GROUPED_S}",
    "elementwise": "relu, 16-4096 elements",
    "binary": "add, same shapes and broadcast, 64-2048 elements",
    "transpose": "2-D and 4-D permutations, 96-4096 elements",
    "batch_matmul": "1-8 products of 1-64 rows, K 1-128, B and B^T (the published CCT's tiles)",
    "reduce": "layernorm 2-64 rows of 64, maxpool 2x2 (taps) 8x4x4 to 16x16x16",
    "norm": "layernorm 2-64 rows of 16-128",
    "norm_grad": "layernorm gradient, dScale/dBias then dX (two forks), 2-64 rows of 16-128",
    "maxpool": "2x2 s2 and 3x3 s2 pad 1 (taps), 2-32 planes of 4x4 to 32x32",
    "maxpool_grad": "2x2 s2 and 3x3 s2 pad 1 (taps), 2-32 planes of 4x4 to 32x32",
    "reduce_sum": "sums over rows, columns and all, 10-8192 elements",
    "softmax": "4-128 lines of 1-64",
    "gelu": "64-8192 elements in [-3, 3]",
    "gelu_grad": "64-8192 elements in [-3, 3]",
    "loss": "softmax cross-entropy (two forks), 2x4 to 64x10",
    "optimizer": "sgd, 4-4096 elements",
}


_KIND = {
    "in-1d": "L2->L1 1-D",
    "in-2d": "L2->L1 2-D",
    "out-1d": "L1->L2 1-D",
    "out-2d": "L1->L2 2-D",
}


def _kernel_lines(k: Kernels) -> str:
    fam_lines = []
    for f, fit in k.kernels.items():
        n_fit = sum(r == FIT for _, r, _, _, _ in fit.points)
        fam_lines.append(
            f"  {f}: {{macs_per_cycle_per_core: {fit.rate}, call: {fit.call}, "
            f"per_output: {fit.per_output}, cold: {fit.cold}}}"
            f"  # measured: {KERNEL_NOTES[f]}; {n_fit} calls fitted (worst {fit.error(FIT):.0%}), "
            f"{len(fit.points) - n_fit} held out (worst {fit.error(HOLD):.0%})"
        )
    return "\n".join(fam_lines)


def _kernels_format(k: Kernels, cmd: str) -> dict[str, Any]:
    c8 = [x for x in k.ceiling if x.cores == CORES]
    ceiling = c8[0].per_cycle if c8 else 0.0
    return {
        "cmd": cmd,
        "ceiling": ceiling,
        "ceiling_core": ceiling / CORES,
        "fork": k.call,
        "no_mac": NO_MAC_TERM,
        "site": k.site,
        "site_cold": k.site_cold,
        "site_warm": k.site_warm,
        "kernels": _kernel_lines(k),
    }


def board_text(c: Calibration) -> str:
    copies = "\n".join(
        f"      {kind}: {{setup: {s}, bandwidth: {b}}}  # measured: {_KIND[kind]} fit - one issue"
        for kind, (s, b) in c.copies.items()
    )
    return BOARD_TEXT.format(
        dma_all=c.dma_setup + c.dma_probe_issue,
        dma_bw=c.dma_bandwidth,
        dma_fits=_fits(c.dma_fits),
        dma_setup=c.dma_setup,
        dma_issue=c.dma_issue,
        dma_probe_issue=c.dma_probe_issue,
        copies=copies,
        ram_bw=c.ram_bandwidth,
        ram_setup=max(0, c.ram_setup - c.ram_issue),
        ram_issue=c.ram_issue,
        ram_copies="\n".join(
            f"      {kind}: {{setup: {a}, bandwidth: {b}}}  # measured: "
            f"{'L3->L2' if kind.startswith('in') else 'L2->L3'} fit - one issue"
            + (" (per row: one transfer per row)" if kind.endswith("2d") else "")
            for kind, (a, b) in c.ram_copies.items()
        ),
        ram_fits=_fits(c.ram_fits),
        **_kernels_format(c.k, CMD),
    )


#: a block bench/micro_tiles.py writes (its comment lines and the top-level
#: key with its indented lines): this script does not measure them, so a
#: calibration keeps them as they are
_MICRO_TILES = re.compile(
    r"^# measured \(python bench/micro_tiles\.py[^\n]*\n(?:#[^\n]*\n)*"
    r"^(?:gemm_tiles|conv_tiles):\n(?:^  [^\n]*\n)*",
    re.M,
)


def _keep_micro_tiles(old: str, new: str) -> str:
    """`new` board text with the micro-tile blocks of the `old` file
    (gemm_tiles, conv_tiles: bench/micro_tiles.py --write) appended."""
    blocks = "".join(m.group(0) for m in _MICRO_TILES.finditer(old))
    return new.rstrip("\n") + "\n" + blocks if blocks else new


ZFINX_HEAD = """\
# Siracusa as the chip runs: its cluster cores keep floats in the integer
# registers (Zfinx; pulp-sdk's rtos/pulpos/pulp/rules/pulpos/targets/
# siracusa.mk: -march=rv32imc_zfinx_xpulpv3). Written by
# `{cmd}`: the kernel numbers below are measured on
# GVSoC siracusa built with the Zfinx register file
# (scripts/build-gvsoc-zfinx.sh), the code built as `make gvsoc
# GVSOC_ISA=zfinx` builds it (clang-19 -march=rv32imc_zfinx -O2
# -ffp-contract=off; no Xpulp: clang has none). The cores, clock, memory
# levels and DMA engines are the chip's, not the ISA's: copied from
# siracusa.yaml with their comments, measured there by `{f_cmd}`
# on the F build (a copy's cycles are the DMA engine's and the SoC's).{issue_note}
# Calibrate again after a kernel change: `{cmd}` (about 2-3 minutes).
name: siracusa_zfinx
# the cores' float ISA: a project lowered for this board builds for it by
# default (its Makefile's GVSOC_ISA), and run --on gvsoc / report --measure
# simulate it
isa: zfinx
"""


def zfinx_board_text(k: Kernels, issue: int | None) -> str:
    """The Zfinx board: siracusa.yaml's chip and DMA engines (its text from
    `cores:` up to its kernels), this ISA's kernel families."""
    f_text = BOARDS["f"].read_text()
    start = f_text.index("\ncores:") + 1
    end = f_text.index("# Per kernel family")
    note = ""
    if issue is not None:
        note = (
            "\n# Of the DMA's numbers only `issue` (the cluster's cycles per copy as the\n"
            f"# emitted C copies) is the cores' code: on this ISA it measured {issue}\n"
            "# cycles (the same straight-line probe, fitted with siracusa.yaml's copy\n"
            "# kinds); the mchan issue below is siracusa.yaml's."
        )
    head = ZFINX_HEAD.format(cmd=CMDS["zfinx"], f_cmd=CMDS["f"], issue_note=note)
    return head + f_text[start:end] + KERNELS_TEXT.format(**_kernels_format(k, CMDS["zfinx"]))


def report(c: Calibration) -> str:
    rows = [
        "| quantity | measured | how |",
        "|---|---|---|",
        f"| cluster DMA setup (after issue) | {c.dma_setup} cycles "
        "| fit over 1-D/2-D, both directions |",
        f"| cluster DMA issue, isolated | {c.dma_probe_issue} cycles | median |",
        f"| cluster cycles per copy as the emitted C copies | {c.dma_issue} cycles "
        "| straight-line groups of 1-3 copies issued then waited, the cycle model's best fit |",
        f"| cluster DMA bandwidth | {c.dma_bandwidth} B/cycle | fit |",
    ]
    rows += [f"| DMA {k} | {a:.0f} + B/{b:.2f} | fit |" for k, (a, b) in c.dma_fits.items()]
    rows += [
        f"| HyperRAM {k} | {a:.0f} + B/{b:.3f} | fit, one copy issued and waited |"
        for k, (a, b) in c.ram_fits.items()
    ]
    rows.append(
        f"| HyperRAM issue (cluster cycles per transfer) | {c.ram_issue} cycles "
        "| median, pi_cl_ram_copy on an idle interface |"
    )
    return "\n".join(rows + kernel_rows(c.k))


def kernel_rows(k: Kernels, header: bool = False) -> list[str]:
    rows = ["| quantity | measured | how |", "|---|---|---|"] if header else []
    rows.append(
        f"| empty kernel call at 8 cores (fork + barrier) | {k.call} cycles | relu on 0 elements |"
    )
    rows.append(
        f"| a step's call site beyond the call | {k.site} cycles | straight-line struct fill + "
        f"fork, cold ({k.site_cold}) - warm ({k.site_warm}); in every family's call |"
    )
    for f, fit in k.kernels.items():
        rows.append(
            f"| {f} | {fit.rate} MAC/cycle/core ({fit.rate * CORES:.2f} on 8 cores), "
            f"{fit.call} cycles per call, {fit.per_output} per output, {fit.cold} cold "
            f"| {KERNEL_NOTES[f]}; worst error fitted {fit.error(FIT):.0%}, "
            f"held out {fit.error(HOLD):.0%} |"
        )
    rows += [
        f"| fmadd ceiling, {x.cores} cores | {x.per_cycle:.2f} FMA/cycle ({x.cycles} cycles) "
        "| probe |"
        for x in k.ceiling
    ]
    return rows


def points(k: Kernels) -> str:
    """Every probe call: measured cold and warm cycles, the fit's warm cycles."""
    out = ["family | call | role | outputs | MACs | cold | warm | fit | error"]
    for f, fit in k.kernels.items():
        for case, role, cold, warm, pred in fit.points:
            out.append(
                f"{f} | {case.name} {case.shape} | {role} | {case.outputs} | {case.macs} | "
                f"{cold} | {warm} | {pred:.0f} | {(pred - warm) / warm:+.0%}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print, do not write the board")
    ap.add_argument("--no-ram", action="store_true", help="skip the HyperRAM measurement")
    ap.add_argument("--points", action="store_true", help="also print every probe call")
    ap.add_argument(
        "--isa",
        choices=tuple(BOARDS),
        default="f",
        help="f (default): ../shared/gvsoc's F build, writes siracusa.yaml (DMA and kernels); "
        "zfinx: the real chip's ISA on scripts/build-gvsoc-zfinx.sh's GVSoC, writes "
        "siracusa_zfinx.yaml (its kernels; the DMA engines copied from siracusa.yaml)",
    )
    ap.add_argument("--raw", metavar="OUT.json", help="also write the kernel measurements")
    ap.add_argument(
        "--from-raw",
        metavar="IN.json",
        help="fit the kernel families from a --raw file instead of simulating them",
    )
    args = ap.parse_args(argv)
    P.ISA = args.isa
    raw = None
    if args.from_raw:
        raw = json.loads(Path(args.from_raw).read_text())
        if raw.get("isa") != args.isa:
            raise SystemExit(f"{args.from_raw} holds {raw.get('isa')} measurements, not {args.isa}")
    t0 = time.time()
    board = BOARDS[args.isa]
    if args.isa == "f":
        c = measure(ram=not args.no_ram, raw=raw)
        k, text = c.k, board_text(c)
        table = report(c)
    else:
        k = measure_kernels(raw)
        issue = k.raw.get("dma_issue")
        if issue is None:
            issue = k.raw["dma_issue"] = emitted_issue_here()
        text = zfinx_board_text(k, int(issue))
        table = "\n".join(
            [
                *kernel_rows(k, header=True),
                f"| cluster cycles per copy as the emitted C copies (this ISA) | {issue} cycles "
                "| straight-line groups of 1-3 copies, siracusa.yaml's copy kinds |",
            ]
        )
    if args.raw:
        Path(args.raw).write_text(json.dumps(k.raw) + "\n")
    if args.points:
        print(points(k) + "\n")
    print(table)
    print(f"\nmeasured in {time.time() - t0:.0f} s", file=sys.stderr)
    if not args.dry_run:
        if board.exists():
            text = _keep_micro_tiles(board.read_text(), text)
        board.write_text(text)
        print(f"\nwrote {board.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
