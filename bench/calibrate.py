"""Calibrate the siracusa board (deeploy_mlir/targets/boards/siracusa.yaml)
against GVSoC siracusa, and write the numbers into it.

    python bench/calibrate.py            # measure, print, write the board
    python bench/calibrate.py --dry-run  # measure and print only

What it measures (bench/gvsoc_probe.py's programs; about a minute):

* the cluster DMA (mchan), 1-D and 2-D (256-byte rows), L2->L1 and L1->L2,
  256 to 16,384 bytes: cycles from issuing one command to the end of its
  wait, fitted as setup + bytes / bandwidth; the cycles the cluster
  controller spends issuing one command (`issue`);
* the HyperRAM (L3) through runtime_c/gvsoc's synchronous uDMA copies, both
  directions, the same sizes (one fit over both directions);
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
  code (an isolated issue is printed too). gemm and the loss split rows over the cores: their
  MACs are the busiest core's share x 8.
  Families (deeploy_mlir/cost/kernels.py): gemm (A B, A B^T, A^T B), conv
  (3x3 forward, dX, dW), depthwise (3x3 forward, dX, dW), elementwise (relu),
  reduce (layernorm, maxpool 2x2), loss (softmax), optimizer (sgd).

The board's schema has one setup and bandwidth per engine: the DMA's are
the fit over every direction and shape (the per-direction fits are in the
file's comments).
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import gvsoc_probe as P

ROOT = Path(__file__).resolve().parents[1]
BOARD = ROOT / "deeploy_mlir" / "targets" / "boards" / "siracusa.yaml"
CMD = "python bench/calibrate.py"
DMA_SIZES = [256, 1024, 4096, 16384]
CORES = 8


def family_cases() -> dict[str, list[P.KernelCase]]:
    fam: dict[str, list[P.KernelCase]] = {"call": [P.relu(0)]}
    fam["gemm"] = [
        P.gemm(m, n, k, ta, tb, "")
        for m, n, k in ((6, 12, 16), (16, 16, 16), (32, 32, 32), (64, 64, 64))
        for ta, tb in ((0, 0), (0, 1), (1, 0))
    ]
    fam["conv"] = [c for h in (4, 8, 16) for c in P.conv("conv 3x3", 1, 16, 16, h, 3, 1, "")]
    fam["depthwise"] = [c for h in (4, 8, 16) for c in P.conv("depthwise", 1, 32, 32, h, 3, 32, "")]
    fam["elementwise"] = [P.relu(n) for n in (64, 512, 4096)]
    fam["reduce"] = [P.layernorm(r, 64, "") for r in (2, 16, 64)] + [
        P.maxpool(16, h, "") for h in (4, 8, 16)
    ]
    fam["loss"] = [P.sce(b, c) for b, c in ((2, 10), (6, 4), (16, 10), (64, 10))]
    fam["optimizer"] = [P.sgd(n) for n in (64, 512, 4096)]
    return fam


@dataclass
class Calibration:
    dma_setup: int
    dma_bandwidth: float
    dma_issue: int
    dma_probe_issue: int
    dma_fits: dict[str, tuple[float, float]]
    ram_setup: int
    ram_bandwidth: float
    ram_fits: dict[str, tuple[float, float]]
    call: int
    #: family -> (MAC/cycle per core, cycles per call, points [(MACs, cycles)])
    kernels: dict[str, tuple[float, int, list[tuple[float, int]]]]
    ceiling: list[P.Ceiling]


def measure_dma(sizes: list[int] = DMA_SIZES, ram: bool = True) -> P.Transfers:
    return P.measure_transfers(sizes, ram=ram)


def dma_numbers(t: P.Transfers) -> tuple[int, float, int, dict[str, tuple[float, float]]]:
    fits = {f"{d} {r}-D": P.fit(pts) for (d, r), pts in sorted(t.dma.items())}
    issue = sorted(t.issue)[len(t.issue) // 2]
    setup, bw = P.fit([p for pts in t.dma.values() for p in pts])
    # the engine's setup is what follows the issue on the cluster
    return max(0, round(setup) - issue), round(bw, 2), issue, fits


def kernel_numbers(
    cases: dict[str, list[P.KernelCase]],
    cycles: dict[tuple[int, int], int],
    profiled: list[tuple[str, float, int, int, int]],
) -> tuple[int, dict[str, tuple[float, int, list[tuple[float, int, int]]]]]:
    """The empty fork's cycles and per family (MAC/cycle/core, cycles per
    call, points): the probes' calls and the models' profiled calls, fitted
    together as cycles = calls x call + MACs / (8 x MAC/cycle/core)."""
    flat = [(f, c) for f, cs in cases.items() for c in cs]
    probes: dict[str, list[tuple[float, int, int]]] = {}
    for i, (f, c) in enumerate(flat):
        calls = 2 if f == "loss" else 1  # the loss op forks twice
        probes.setdefault(f, []).append((c.effective(CORES), calls, cycles[(i, CORES)]))
    fork = int(probes.pop("call")[0][2])
    out = {}
    for f, pts in probes.items():
        # throughput: the probes (sizes where the MACs dominate), least
        # squares through the origin of (MACs, cycles - calls x fork)
        tp = sum(x * x for x, _, _ in pts) / sum(x * (y - n * fork) for x, n, y in pts)
        # cycles per call: the median of what the MACs leave over all the
        # calls measured, the examples' small ones included (at least a fork)
        every = pts + [(x, n, y) for g, x, n, y, _ in profiled if g == f]
        rest = [(y - x / tp) / n for x, n, y in every]
        call = max(fork, round(sum(rest) / len(rest)))
        out[f] = (round(tp / CORES, 4), call, every)
    return fork, out


PROF_DECL = """
#include <stdio.h>
typedef struct { const char *fn; unsigned c; } dm_prof_t;
static dm_prof_t dm_prof[1024];
static unsigned dm_nprof;
static inline unsigned dm_cyc(void)
{
    unsigned v;
    __asm__ volatile("csrr %0, mcycle" : "=r"(v));
    return v;
}
"""
PROF_TAIL = """
void %(name)s(void)
{
    dm_nprof = 0;
    unsigned t0 = dm_cyc();
    dm_inner_%(name)s();
    printf("PROFTOTAL %(name)s %%u\\n", dm_cyc() - t0);
    for (unsigned i = 0; i < dm_nprof; i++)
        printf("PROF %(name)s %%s %%u\\n", dm_prof[i].fn, dm_prof[i].c);
}
"""


def _instrument(path: Path, name: str) -> None:
    """Time every kernel fork of `name` (RunTrainingNetwork...) and print
    the cycles after the function (outside the timed forks)."""
    src = path.read_text()
    src = re.sub(
        r"pi_cl_team_fork\((\w+), (\w+), &args\);",
        r"{ unsigned _t0 = dm_cyc(); pi_cl_team_fork(\1, \2, &args); "
        r'dm_prof[dm_nprof].c = dm_cyc() - _t0; dm_prof[dm_nprof++].fn = "\2"; }',
        src,
    )
    src = src.replace(f"void {name}(void)", PROF_DECL + f"static void dm_inner_{name}(void)", 1)
    path.write_text(src + PROF_TAIL % {"name": name})


@dataclass
class Profile:
    #: (family, effective MACs, calls, cycles, op index) per compute op
    calls: list[tuple[str, float, int, int, int]]
    #: cluster cycles per transfer outside the kernels and the copies
    #: themselves: (step - forks - sum of setup + bytes / bandwidth) / transfers
    per_transfer: list[float]


def profile_model(model: str) -> Profile | str:
    """Every kernel call of one untiled training step and optimizer step of
    example `model` on GVSoC, matched to the compute ops of the IR in
    program order: [(family, effective MACs, calls, cycles, op index)], or why not."""
    from deeploy_mlir.config import CompileConfig
    from deeploy_mlir.cost.kernels import kernel_family, op_calls, op_macs, op_units
    from deeploy_mlir.dialects import training as T
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.pipeline import pipeline, run_pipeline
    from deeploy_mlir.targets import gvsoc
    from deeploy_mlir.targets.target import get_target

    d = ROOT / "examples" / model
    with tempfile.TemporaryDirectory(prefix="dm-prof-") as tmp:
        keep = Path(tmp) / "p"
        r = subprocess.run(
            [
                *(sys.executable, "-m", "deeploy_mlir.cli", "lower", str(d), "-o", str(keep)),
                *("--tiling", "untiled", "--buffering", "single"),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if r.returncode != 0:
            return (r.stderr or r.stdout).strip().splitlines()[-1]
        _instrument(keep / "TrainingNetwork.c", "RunTrainingNetwork")
        _instrument(keep / "OptimizerNetwork.c", "RunOptimizerNetwork")
        setup = gvsoc.find_setup()
        out = gvsoc.run(gvsoc.build(keep, "siracusa", setup), "siracusa", setup, timeout=900)
    prof: dict[str, list[int]] = {"RunTrainingNetwork": [], "RunOptimizerNetwork": []}
    for fn, _kernel, c in P.lines(out, "PROF"):
        prof[fn].append(int(c))
    totals = {fn: int(c) for fn, c in P.lines(out, "PROFTOTAL")}
    m = import_model(str(d), None).module.clone()
    mem = get_target("pulp-open").default_budgets()
    cfg = CompileConfig(tiling="untiled", l1=mem["l1"], buffering="single", l2=mem["l2"])
    run_pipeline(m, pipeline(cfg), False)
    fns = {f.sym_name.data: f for f in m.ops if hasattr(f, "sym_name")}
    from deeploy_mlir.cost.schedule import function_cost
    from deeploy_mlir.targets.boards import load_board

    board = load_board("siracusa")
    mchan = board.engine_between("L2", "L1")
    pts = []
    per_transfer = []
    for cname, fname in (
        ("RunTrainingNetwork", "training_step"),
        ("RunOptimizerNetwork", "optimizer_step"),
    ):
        ops = [o for o in fns[fname].walk() if isinstance(o, T.TrainingComputeOp)]
        # the first step's forks (the harness runs several mini-batches)
        cyc = prof[cname]
        need = sum(op_calls(o) for o in ops)
        if len(cyc) < need:
            return f"{cname}: {len(cyc)} kernel calls measured, the IR has {need}"
        k = 0
        for i, o in enumerate(ops):
            n = op_calls(o)
            fam, macs, units = kernel_family(o), op_macs(o), op_units(o)
            eff = macs * CORES * -(-units // CORES) / units if units else float(macs)
            pts.append((fam, eff, n, sum(cyc[k : k + n]), i))
            k += n
        # the step's first run: its forks are the first `need` entries
        cost = function_cost(board, fns[fname])
        if cost.transfers and cname in totals:
            copies = sum(
                n * mchan.setup + math.ceil(b / mchan.bandwidth) for n, b in cost.hops.values()
            )
            rest = totals[cname] - sum(cyc[:need]) - copies
            per_transfer.append(rest / cost.transfers)
    return Profile(pts, per_transfer)


#: the example models whose kernel calls calibrate the families (mlp_small
#: is left out: tests/test_calibration.py checks the model on it)
PROFILED = ["mlp_wide", "ds_cnn", "resnet8", "autoencoder", "cct"]


def measure(ram: bool = True, models: list[str] = PROFILED) -> Calibration:
    t = measure_dma(ram=ram)
    setup, bw, issue, fits = dma_numbers(t)
    ram_pts = [p for pts in t.ram.values() for p in pts]
    rs, rb = P.fit(ram_pts) if ram_pts else (300.0, 1.0)
    cases = family_cases()
    flat = [c for cs in cases.values() for c in cs]
    cyc = P.measure_kernels(flat, teams=(CORES,))
    profiled: list[tuple[str, float, int, int, int]] = []
    per_transfer: list[float] = []
    for m in models:
        prof = profile_model(m)
        if isinstance(prof, str):
            print(f"{m}: not profiled: {prof}", file=sys.stderr)
        else:
            profiled += prof.calls
            per_transfer += prof.per_transfer
    call, kernels = kernel_numbers(cases, cyc, profiled)
    probe_issue = issue
    if per_transfer:
        # the issue cycles the examples' steps show per copy (issue, wait,
        # the emitted code around them), instead of the isolated probe's
        issue = round(sum(per_transfer) / len(per_transfer))
    return Calibration(
        setup,
        bw,
        issue,
        probe_issue,
        fits,
        round(rs),
        round(rb, 3),
        {d: P.fit(p) for d, p in t.ram.items()},
        call,
        kernels,
        P.measure_ceiling(),
    )


def _fits(fits: dict[str, tuple[float, float]]) -> str:
    return "; ".join(f"{k}: {a:.0f} + B/{b:.2f}" for k, (a, b) in fits.items())


BOARD_TEXT = """\
# Siracusa (PULPOpen cluster; Prasad et al., "Siracusa: A 16 nm Heterogenous
# RISC-V SoC for Extended Reality with At-MRAM Neural Engine", arXiv:2312.14750).
# Every number says where it comes from. "measured" numbers are GVSoC
# siracusa's (../shared/gvsoc), written by `{cmd}` (bench/calibrate.py says
# how); "estimate" means ours, not a measurement or a datasheet value.
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
    setup: {dma_setup}            # measured: the fit's fixed cycles minus one isolated issue
    # issue: the cluster's cycles per copy in the examples' steps outside the
    # kernels and the copies (issue, wait, the code around them); one isolated
    # issue takes {dma_probe_issue}
    issue: {dma_issue}           # measured: see above
    rank: 2              # mchan copies 1-D and 2-D (pmsis cl_dma 1d/2d calls)
    shared_request: false  # one command per transfer, reusable while in flight (in order)
  ram:                   # L3 RAM copies, L3 <-> L2 (pi_cl_ram_copy/_2d + wait)
    hop: L3-L2
    # measured ({cmd}): one synchronous HyperRAM copy (runtime_c/gvsoc's uDMA
    # layer), 256-16384 B, fitted over both directions; per direction: {ram_fits}
    bandwidth: {ram_bw}     # measured: bytes/cycle, the fit above (synchronous copies)
    setup: {ram_setup}          # measured: the fit's fixed cycles
    rank: 2              # 1-D and 2-D copies (pi_cl_ram_copy_2d)
    shared_request: true   # one pi_cl_ram_req_t holds one transfer: sub-copies waited one by one
# MACs per cycle per core for fp32 kernels (-ffp-contract=off, no SIMD), and
# `call`: the fixed cycles of one kernel call on 8 cores (fork, wake-up,
# barrier). For families that do not multiply-accumulate, one "MAC" is one
# element operation (pooling: one window tap). measured ({cmd}): cycles of
# one call at 8 cores over 3-4 sizes (value: least squares through the origin
# of MACs / (8 x value) = cycles - calls x empty fork), and every kernel call
# of one untiled training and optimizer step of the examples {profiled}
# (call: the mean of cycles - MACs / (8 x value) per call); gemm and the
# loss count the busiest core's rows (the kernels split rows over the cores);
# the measured FMA ceiling is {ceiling:.2f} fmadd/cycle on 8 cores ({ceiling_core:.2f} per core).
kernels:
{kernels}
"""

KERNEL_NOTES = {
    "gemm": "A B, A B^T, A^T B, M N K 6x12x16 to 64 cubed",
    "conv": "3x3 fwd/dX/dW, 16->16 channels, 4x4 to 16x16",
    "depthwise": "3x3 fwd/dX/dW, 32 channels, 4x4 to 16x16",
    "elementwise": "relu, 64-4096 elements",
    "reduce": "layernorm 2-64 rows of 64, maxpool 2x2 (taps) 4x4 to 16x16",
    "loss": "softmax cross-entropy (two forks), 2x10 to 64x10",
    "optimizer": "sgd, 64-4096 elements",
}


def board_text(c: Calibration) -> str:
    fam_lines = []
    for f, (tp, call, pts) in c.kernels.items():
        span = f"{min(p[0] for p in pts):.0f}-{max(p[0] for p in pts):.0f} MACs"
        fam_lines.append(
            f"  {f}: {{macs_per_cycle_per_core: {tp}, call: {call}}}"
            f"  # measured: {KERNEL_NOTES[f]}, and the examples' calls ({len(pts)} calls, {span})"
        )
    c8 = [x for x in c.ceiling if x.cores == CORES]
    ceiling = c8[0].per_cycle if c8 else 0.0
    return BOARD_TEXT.format(
        cmd=CMD,
        dma_all=c.dma_setup + c.dma_probe_issue,
        dma_bw=c.dma_bandwidth,
        dma_fits=_fits(c.dma_fits),
        dma_setup=c.dma_setup,
        dma_issue=c.dma_issue,
        dma_probe_issue=c.dma_probe_issue,
        ram_bw=c.ram_bandwidth,
        ram_setup=c.ram_setup,
        ram_fits=_fits(c.ram_fits),
        ceiling=ceiling,
        ceiling_core=ceiling / CORES,
        kernels="\n".join(fam_lines),
        profiled=", ".join(PROFILED),
    )


def report(c: Calibration) -> str:
    rows = [
        "| quantity | measured | how |",
        "|---|---|---|",
        f"| cluster DMA setup (after issue) | {c.dma_setup} cycles "
        "| fit over 1-D/2-D, both directions |",
        f"| cluster DMA issue, isolated | {c.dma_probe_issue} cycles | median |",
        f"| cluster cycles per copy in the examples' steps | {c.dma_issue} cycles "
        "| (step - forks - copies) / copies |",
        f"| cluster DMA bandwidth | {c.dma_bandwidth} B/cycle | fit |",
    ]
    rows += [f"| DMA {k} | {a:.0f} + B/{b:.2f} | fit |" for k, (a, b) in c.dma_fits.items()]
    rows += [
        f"| HyperRAM {k} | {a:.0f} + B/{b:.3f} | fit, synchronous copy |"
        for k, (a, b) in c.ram_fits.items()
    ]
    rows.append(
        f"| empty kernel call at 8 cores (fork + barrier) | {c.call} cycles | relu on 0 elements |"
    )
    rows += [
        f"| {f} | {tp} MAC/cycle/core ({tp * CORES:.2f} on 8 cores), {call} cycles per call "
        f"| {KERNEL_NOTES[f]} |"
        for f, (tp, call, _) in c.kernels.items()
    ]
    rows += [
        f"| fmadd ceiling, {x.cores} cores | {x.per_cycle:.2f} FMA/cycle ({x.cycles} cycles) "
        "| probe |"
        for x in c.ceiling
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print, do not write the board")
    ap.add_argument("--no-ram", action="store_true", help="skip the HyperRAM measurement")
    args = ap.parse_args(argv)
    c = measure(ram=not args.no_ram)
    print(report(c))
    if not args.dry_run:
        BOARD.write_text(board_text(c))
        print(f"\nwrote {BOARD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
