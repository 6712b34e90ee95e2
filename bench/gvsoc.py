"""Speed on GVSoC siracusa (8-core PULP cluster, ../shared/gvsoc), as Markdown
tables for the README.

    python bench/gvsoc.py                     # default set: a few minutes
    python bench/gvsoc.py --only kernels      # one table: kernels, ceiling, steps
    python bench/gvsoc.py --models mlp_small ds_cnn --configs untiled single-64000
    python bench/gvsoc.py --all               # every example model and configuration
    python bench/gvsoc.py --only kernels --baseline DIR   # DIR/runtime_c's kernels beside these
    python bench/gvsoc.py --only steps --roofline   # single / double / single@double per
                                                    # example and arena, with the roofline
    python bench/gvsoc.py --only step-kernels [--baseline DIR]  # the CCT step's calls, (e)
    python bench/gvsoc.py --isa zfinx ...     # clang-19 Zfinx code on the Zfinx GVSoC
                                              # (scripts/build-gvsoc-zfinx.sh): the real ISA,
                                              # predicted on the siracusa_zfinx board
    python bench/gvsoc.py --no-forward ...    # l3-overlap's forwarding off

(a) **kernels**: the runtime's fp32 kernels (runtime_c/kernels) at 1 and 8
cores on shapes of the published models' layers, scaled down where a
layer's tensors would not fit L1 next to the cluster stacks (128 KiB free):
cycles of one call (`mcycle` around `pi_cl_team_fork`, the second of two
calls: fork and barrier included, instruction cache warm), MACs, MAC/cycle,
speed-up 8 vs 1 core, and the ratio to the ceiling (b) at that core count.
The kernels are built as the emitted projects are: -O2 -ffp-contract=off
(no fused multiply-add, so the host's bits); two rows show what contraction
(-ffp-contract=fast, fmadd.s) would gain.

(b) **ceiling**: 8 independent fmadd.s chains per core, registers only,
4,000 iterations, on 1/2/4/8 cores (the slowest core's cycles).

(c) **steps**: `deeploy-mlir run MODEL --on gvsoc` for example models with 1
optimizer step of 2 mini-batches (`--steps 1 --accum 2`): cycles per
training step (mean of the 2 mini-batches) and per optimizer step, the MACs
of one training step (the cost model's count, deeploy_mlir/cost/kernels.py),
MAC/cycle, and images/s at the board's clock (batch / training-step time).
Each row shows the cycle model's prediction (deeploy_mlir.cost.schedule on
the same pipeline and the siracusa board, the numbers `report --board
siracusa` prints; with --isa zfinx the siracusa_zfinx board's, which
tile-select then also scores the tiles with) and measured / predicted.
Configurations: untiled (whole tensors in L1), tiled single or double
buffered at an L1 arena budget (the cluster stacks come on top of it).

(d) **--roofline**: single-N, double-N and single@double-N (`--kinds`: also
forced-N, every op double-buffered, and single@forced-N) of every example
at the L1 arenas where it tiles, each step beside its roofline R = max(K +
I, D) (K, I from a profiled run of the same program, D from the calibrated
cycle model; `roofline`) and double against the same tiles and the same
budget: the README's "Double vs single buffering" table.
(e) **step-kernels**: the gemm, batch_matmul, conv2d and conv2d_grad calls
of one training step (`--step MODEL CONFIG`, default the published CCT at
double-128000 at the default L2 budget, or --step-project for the program a
run built; bench/step_kernels.py reads them from the
emitted C, no C build), each distinct call measured alone (8 cores) and
weighted by its count in the step, per family and in all.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import gvsoc_probe as P
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
#: the GVSoC model the programs run on
TARGET = "siracusa"
#: per ISA (--isa) the board whose numbers predict its runs and score its
#: tiles (tile-select): the calibrated numbers of that build
#: (python bench/calibrate.py [--isa zfinx])
ISA_BOARDS = {"f": "siracusa", "zfinx": "siracusa_zfinx", "f-clang": "siracusa"}


def board() -> str:
    """The board of the ISA the bench runs (P.ISA)."""
    return ISA_BOARDS[P.ISA]


#: --no-forward: l3-overlap's forwarding off (forward=false) in the measured
#: program's pipeline and the prediction's (the default pipeline forwards)
NO_FORWARD = False


# ------------------------------------------------------------------ kernels


def kernel_cases() -> list[P.KernelCase]:
    """Shapes of the published models' layers (examples/make_models.py
    --published): CCT (embedding 128, 64 tokens), ResNet-8 (16 channels,
    32x32 at full size: 16x16 here), MobileNetV1 (depthwise and pointwise
    32 channels at 16x16 (24x24 at full size), depthwise 64 channels at
    12x12); the loss at the CCT's batch 1 x 10 classes and at 64 rows; a
    sigmoid (no published model has one) of the CCT mlp's size."""
    cases = [P.gemm(64, 128, 64, ta, tb, "CCT mlp") for ta, tb in ((0, 1), (0, 0), (1, 0), (1, 1))]
    cases += P.conv("conv 3x3", 1, 16, 16, 16, 3, 1, "ResNet-8")
    cases += P.conv("depthwise 3x3", 1, 32, 32, 16, 3, 32, "MobileNetV1")
    # MobileNetV1 0.25's stride-1 depthwise layer at 12x12, full size
    cases += P.conv("depthwise 3x3", 1, 64, 64, 12, 3, 64, "MobileNetV1")
    cases += P.conv("pointwise", 1, 32, 32, 16, 1, 1, "MobileNetV1")
    cases += [
        P.maxpool(16, 32, "ResNet-8"),
        P.layernorm(64, 128, "CCT"),
        P.softmax(64, 64, "CCT attention"),
        P.gelu(64 * 128, "CCT mlp 64x128"),
        P.gelu_grad(64 * 128, "CCT mlp 64x128"),
        P.sce(1, 10),
        P.sce(64, 10),
        P.sigmoid(64 * 128, "CCT-sized"),
    ]
    return cases + cct_data_cases() + cct_row_cases()


def cct_row_cases() -> list[P.KernelCase]:
    """The published CCT's reductions and row kernels at the shapes its step
    (double-128000) calls them, as `python bench/step_kernels.py DIR` lists
    a lowered step's calls: the bias gradients' reduce_sum over 64 tokens
    (12 calls a step), the attention's softmax and its gradient over 128
    rows of 64, the layer norm's gradients (5 each)."""
    return [
        P.reduce_sum((1, 64, 64), 3, "CCT bias grad"),
        P.softmax(128, 64, "CCT attention"),
        P.softmax_grad(128, 64, "CCT attention"),
        P.layernorm_grad_dx(64, 128, "CCT"),
        P.layernorm_grad_params(64, 128, "CCT"),
        P.maxpool_k(64, 16, 3, 2, 1, "CCT tokenizer 2 (step tile)"),
    ]


def cct_data_cases() -> list[P.KernelCase]:
    """The published CCT's memory-bound calls at the tile shapes its step
    (double-128000, L2 460,000) runs: the tokenizer's maxpool 3x3 stride 2
    pad 1 (forward with and without indices, gradient), the attention's
    transposes, the residual and broadcast adds, the gradient accumulation,
    relu and its gradient."""
    return [
        P.maxpool_k(8, 32, 3, 2, 1, "CCT tokenizer 1"),
        P.maxpool_k(8, 32, 3, 2, 1, "CCT tokenizer 1", indices=False),
        P.maxpool_k(32, 16, 3, 2, 1, "CCT tokenizer 2"),
        P.maxpool_grad(4, 32, 3, 2, 1, "CCT tokenizer 1"),
        P.maxpool_grad(16, 16, 3, 2, 1, "CCT tokenizer 2"),
        P.transpose((128, 32), (1, 0)),
        P.transpose((1, 64, 64), (0, 2, 1)),
        P.transpose((1, 2, 32, 64), (0, 2, 1, 3)),
        P.transpose((1, 2, 64, 32), (0, 3, 1, 2)),
        P.transpose((1, 64, 1, 64), (0, 2, 1, 3)),
        P.transpose((1, 64, 1, 64), (0, 2, 3, 1)),
        P.binary((1, 64, 128), (1, 64, 128)),
        P.binary((1, 64, 128), (1, 1, 128)),
        P.binary((1, 64, 64), (1, 1, 64)),
        P.accumulate(8192),
        P.relu(2048),
        P.relu_grad(8192),
    ]


def contraction_cases() -> list[P.KernelCase]:
    return [
        P.gemm(64, 128, 64, 0, 0, "CCT mlp"),
        P.conv("conv 3x3", 1, 16, 16, 16, 3, 1, "ResNet-8")[0],
    ]


def baseline_table(ceiling: dict[int, float], base: Path) -> str:
    """The kernels of `base` (a directory holding another revision's
    runtime_c, e.g. `git archive REV runtime_c | tar -x -C DIR`) beside this
    tree's, built by the same probe in the same run."""
    cases = kernel_cases()
    before = P.measure_kernels(cases, teams=(1, 8), rt=base / "runtime_c")
    after = P.measure_kernels(cases, teams=(1, 8))
    rows = [
        "| kernel | shape | MACs | cycles 8 cores before | after | MAC/cycle before | after "
        "| of ceiling before | after | cycles 1 core before | after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, c in enumerate(cases):
        b8, a8 = before[(i, 8)], after[(i, 8)]
        rows.append(
            f"| {c.name} | {c.shape} | {c.macs} | {b8} | {a8} | {c.macs / b8:.3f} | "
            f"{c.macs / a8:.3f} | {c.macs / b8 / ceiling[8]:.0%} | "
            f"{c.macs / a8 / ceiling[8]:.0%} | {before[(i, 1)]} | {after[(i, 1)]} |"
        )
    return "\n".join(rows)


def kernels_table(ceiling: dict[int, float]) -> str:
    cases = kernel_cases()
    cyc = P.measure_kernels(cases, teams=(1, 8))
    rows = [
        "| kernel | shape | MACs | cycles 1 core | cycles 8 cores | MAC/cycle 1 | MAC/cycle 8 "
        "| speed-up 8 vs 1 | of ceiling (8 cores) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i, c in enumerate(cases):
        c1, c8 = cyc[(i, 1)], cyc[(i, 8)]
        rows.append(
            f"| {c.name} | {c.shape} | {c.macs} | {c1} | {c8} | {c.macs / c1:.3f} | "
            f"{c.macs / c8:.3f} | {c1 / c8:.2f} | {c.macs / c8 / ceiling[8]:.0%} |"
        )
    con = contraction_cases()
    off = P.measure_kernels(con, teams=(8,))
    on = P.measure_kernels(con, teams=(8,), flags="-ffp-contract=fast")
    rows += [
        "",
        "Contraction (8 cores): the same call built with -ffp-contract=fast (fmadd.s).",
        "",
        "| kernel | shape | cycles, contract off | cycles, contract fast | MAC/cycle off "
        "| MAC/cycle fast |",
        "|---|---|---|---|---|---|",
    ]
    for i, c in enumerate(con):
        a, b = off[(i, 8)], on[(i, 8)]
        rows.append(f"| {c.name} | {c.shape} | {a} | {b} | {c.macs / a:.3f} | {c.macs / b:.3f} |")
    return "\n".join(rows)


def step_kernel_cases(
    model: str, config: str, project: Path | None = None
) -> list[tuple[P.KernelCase, int]]:
    """The distinct calls of gemm, batch_matmul, conv2d and conv2d_grad (dX,
    dW) in one training step of `model` at `config` (lowered as the steps
    table's run lowers it, L2_BUDGET included; the C is not compiled), each
    with the times the step makes it (bench/step_kernels.py); with
    `project`, those of that lowered project instead."""
    import step_kernels as S

    if project is not None:
        calls = S.step_calls_of(project)
        out = [(S.probe_case(c), n) for c, n in calls.items() if c.fn in S.FAMILIES]
        return sorted(out, key=lambda cn: (cn[0].group, -cn[0].macs * cn[1], cn[0].shape))
    run_l1, _ = _l1_opts(model, config)
    tiling, buffering, _ = CONFIGS[config]
    opts = ["--tiling", tiling, "--buffering", buffering]
    opts += ["--l1", str(run_l1)] if run_l1 is not None else []
    l2 = L2_BUDGET.get(model)
    opts += ["--l2", str(l2)] if l2 is not None else []
    with tempfile.TemporaryDirectory(prefix="dm-bench-") as tmp:
        proj = Path(tmp) / "p"
        subprocess.run(
            [
                *(sys.executable, "-m", "deeploy_mlir.cli", "lower", str(EXAMPLES / model)),
                *("-o", str(proj), "-q", *opts),
            ],
            check=True,
            cwd=ROOT,
        )
        calls = S.step_calls_of(proj)
    out = [(S.probe_case(c), n) for c, n in calls.items() if c.fn in S.FAMILIES]
    return sorted(out, key=lambda cn: (cn[0].group, -cn[0].macs * cn[1], cn[0].shape))


def step_kernels_table(
    model: str,
    config: str,
    ceiling: dict[int, float],
    base: Path | None,
    project: Path | None = None,
) -> str:
    """Each distinct call of the step's big kernel families measured alone
    (8 cores, the second of two calls, data in L1), weighted by its count in
    the step: per family the sum is the step's kernel cycles of that family
    as the isolated calls add up. With `base`, that runtime_c's kernels
    beside (before / after)."""
    cases = step_kernel_cases(model, config, project)
    ks = [c for c, _ in cases]
    after = P.measure_kernels(ks, teams=(8,))
    before = P.measure_kernels(ks, teams=(8,), rt=base / "runtime_c") if base else None
    head = "| family | shape | calls | MACs/call | cycles/call "
    head += "before | after | " if before else "| "
    head += "step cycles " + ("before | after | " if before else "| ")
    head += "MAC/cycle " + ("before | after |" if before else "|")
    ncol = head.count("|") - 1
    rows = [head, "|" + "---|" * ncol]
    fam: dict[str, list[int]] = {}
    for i, (c, n) in enumerate(cases):
        a8 = after[(i, 8)]
        b8 = before[(i, 8)] if before else 0
        f = fam.setdefault(c.group, [0, 0, 0, 0])
        f[0] += n
        f[1] += c.macs * n
        f[2] += b8 * n
        f[3] += a8 * n
        r = f"| {c.group} | {c.shape} | {n} | {c.macs} | "
        r += f"{b8} | {a8} | {b8 * n} | {a8 * n} | " if before else f"{a8} | {a8 * n} | "
        r += f"{c.macs / b8:.3f} | {c.macs / a8:.3f} |" if before else f"{c.macs / a8:.3f} |"
        rows.append(r)
    tot = [sum(f[j] for f in fam.values()) for j in range(4)]
    for name, f in [*sorted(fam.items()), ("**all**", tot)]:
        r = f"| {name} | (sum) | {f[0]} | {f[1]} | "
        r += f"| | {f[2]} | {f[3]} | " if before else f"| {f[3]} | "
        r += f"{f[1] / f[2]:.3f} | {f[1] / f[3]:.3f} |" if before else f"{f[1] / f[3]:.3f} |"
        rows.append(r)
    rows.append("")
    rows.append(f"Ceiling at 8 cores: {ceiling.get(8, 0):.2f} MAC/cycle.")
    return "\n".join(rows)


def ceiling_table(ceil: list[P.Ceiling]) -> str:
    rows = [
        "| cores | fmadd.s | cycles (slowest core) | FMA/cycle | per core |",
        "|---|---|---|---|---|",
    ]
    rows += [
        f"| {c.cores} | {c.fmadds} | {c.cycles} | {c.per_cycle:.2f} | {c.per_cycle / c.cores:.2f} |"
        for c in ceil
    ]
    return "\n".join(rows)


# ------------------------------------------------------------------ steps

#: the configurations: name -> (tiling, buffering, L1 arena budget or None
#: for the default); the run's --l1 adds the cluster stacks
#: of the program (targets/stacks.py) to the arena's budget
CONFIGS: dict[str, tuple[str, str, int | None]] = {
    "untiled": ("untiled", "single", None),
    "single-64000": ("tiled", "single", 64000),
    "double-64000": ("tiled", "double", 64000),
    "single-128000": ("tiled", "single", 128000),
    "double-128000": ("tiled", "double", 128000),
    "single-4096": ("tiled", "single", 4096),
    "double-4096": ("tiled", "double", 4096),
    # single buffering at the tiles double buffering chooses (tile-select for
    # two buffers per tile; the copies of each tile waited around its kernel):
    # double's pipeline without dma-multibuffer
    "single@double-64000": ("tiled", "single@double", 64000),
    "single@double-128000": ("tiled", "single@double", 128000),
    "single@double-4096": ("tiled", "single@double", 4096),
}
_DYNAMIC = re.compile(r"^(single|double|single@double|forced|single@forced)-(\d+)$")


def config_spec(config: str) -> tuple[str, str, int | None]:
    """(tiling, buffering, arena) of a configuration: one of CONFIGS, or
    `single-N`, `double-N`, `single@double-N`, `forced-N`, `single@forced-N`
    at any L1 arena of N bytes."""
    if config in CONFIGS:
        return CONFIGS[config]
    if m := _DYNAMIC.match(config):
        return ("tiled", m.group(1), int(m.group(2)))
    raise ValueError(f"unknown configuration '{config}'")


def _config_arg(config: str) -> str:
    try:
        config_spec(config)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return config


DEFAULT_MODELS = ["mlp_small", "mlp_wide", "ds_cnn"]
DEFAULT_CONFIGS = ["untiled", "single-4096", "double-4096"]
#: the published-size models a step of which fits a few minutes of GVSoC
PUBLISHED_MODELS = ["published/resnet8", "published/mobilenet_v1", "published/cct"]
PUBLISHED_CONFIGS = ["untiled", "single-64000", "double-64000", "single-128000", "double-128000"]
#: L1 (stacks included) for a published model's untiled run: GVSoC
#: siracusa's 256 KiB less the runtime's L1 data and boot stacks
UNTILED_L1_PUBLISHED = 258048
#: the preprocessor name that keeps the harness from printing the final
#: parameters (a published model's 283,000 floats cost more simulation than its steps)
QUIET = "DM_NO_FINAL_PARAMS"


def models() -> list[str]:
    """Example models (examples/NAME) and published ones (published/NAME,
    when `python examples/make_models.py --published` wrote them)."""
    ex = sorted(p.parent.name for p in EXAMPLES.glob("*/training_model.onnx"))
    pub = sorted(
        f"published/{p.parent.name}" for p in (EXAMPLES / "published").glob("*/training_model.onnx")
    )
    return ex + pub


@functools.cache
def _stacks(model: str) -> int:
    """The L1 bytes of the cluster stacks of `model`'s program (sized for the
    kernels it forks, as `lower` sizes them: targets/stacks.py)."""
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.targets.stacks import program_kernels, stack_reservation

    return stack_reservation(kernels=program_kernels(import_model(str(EXAMPLES / model)).module))


def _l1_opts(model: str, config: str) -> tuple[int | None, int | None]:
    """(the run's --l1, the arena's budget) of a configuration, None: the
    default. --l1 is the arena's budget plus the program's own stacks."""
    tiling, _, arena = config_spec(config)
    if arena is not None:
        return _stacks(model) + arena, arena
    if tiling == "untiled" and model.startswith("published/"):
        return UNTILED_L1_PUBLISHED, UNTILED_L1_PUBLISHED - _stacks(model)
    return None, None


#: configurations run through a pass pipeline derived from double buffering's
DERIVED = ("single@double", "forced", "single@forced")


def _same_tiles_pipeline(
    d: Path,
    run_l1: int | None,
    l2: int | None,
    kind: str = "single@double",
    spec: tuple[str, str] = ("tiled", "double"),
) -> str:
    """A pass pipeline derived from double buffering's: `single@double`
    without dma-multibuffer (single buffering at the double-buffered tiles);
    `forced` with tile-select{fallback=false} (every op double-buffered, no
    single-buffered tiles kept); `single@forced` both; `plain` the pipeline of
    `spec` (tiling, buffering) itself. tile-select scores with board()'s
    numbers (the ISA's calibration)."""
    opts = ["--tiling", spec[0], "--buffering", spec[1]]
    opts += ["--l1", str(run_l1)] if run_l1 is not None else []
    opts += ["--l2", str(l2)] if l2 is not None else []
    r = subprocess.run(
        [
            *(sys.executable, "-m", "deeploy_mlir.cli", "lower", str(d), "-o", "unused"),
            *(*opts, "--print-pipeline"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    from dataclasses import replace

    from deeploy_mlir.pipeline import parse_pipeline, print_pipeline

    passes = list(parse_pipeline(r.stdout.strip()))
    if kind.startswith("single@"):
        passes = [q for q in passes if q.name != "dma-multibuffer"]
    if kind.endswith("forced"):
        passes = [replace(q, fallback=False) if q.name == "tile-select" else q for q in passes]
    passes = [replace(q, board=board()) if q.name == "tile-select" else q for q in passes]
    if NO_FORWARD:
        passes = [replace(q, forward=False) if q.name == "l3-overlap" else q for q in passes]
    return print_pipeline(passes)


def _spec(tiling: str, buffering: str) -> tuple[str, str]:
    """The CLI's (--tiling, --buffering) a configuration's pipeline starts
    from: double buffering's for the configurations derived from it."""
    return (tiling, "double" if buffering in DERIVED else buffering)


def _custom(buffering: str) -> str | None:
    """The kind of _same_tiles_pipeline a configuration runs through, None:
    the CLI's own options (double and single on the target's board)."""
    if buffering in DERIVED:
        return buffering
    return "plain" if board() != ISA_BOARDS["f"] or NO_FORWARD else None


@dataclass
class Prediction:
    train: int
    optimizer: int
    macs: int
    #: op name -> (MACs, predicted compute cycles) of one training step
    per_op: dict[str, tuple[int, int]]
    #: engine -> cycles the cycle model keeps it busy in one training step
    #: (the calibrated setup + bytes / bandwidth of every copy)
    dma_busy: dict[str, int] = field(default_factory=dict[str, int])


def predict(model: str, config: str, l2: int | None = None) -> Prediction:
    """The cycle model on the pipeline `run` uses for `config`."""
    from deeploy_mlir.config import CompileConfig
    from deeploy_mlir.cost.schedule import schedule_cost
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.pipeline import pipeline, run_pipeline
    from deeploy_mlir.targets.boards import load_board
    from deeploy_mlir.targets.target import get_target

    tiling, buffering, _ = config_spec(config)
    mem = get_target("pulp-open").default_budgets()
    run_l1, _ = _l1_opts(model, config)
    m = import_model(str(EXAMPLES / model), None).module.clone()
    cfg = CompileConfig(
        tiling=tiling,  # type: ignore[arg-type]
        l1=(run_l1 or mem["l1"]) - _stacks(model),
        l1_stacks=_stacks(model),
        buffering="double" if buffering in DERIVED else buffering,  # type: ignore[arg-type]
        l2=l2 or mem["l2"],
        l3=mem["l3"],
    )
    kind = _custom(buffering)
    if kind is not None:
        from deeploy_mlir.pipeline import parse_pipeline

        spec = _spec(tiling, buffering)
        passes = parse_pipeline(_same_tiles_pipeline(EXAMPLES / model, run_l1, l2, kind, spec))
    else:
        passes = pipeline(cfg)
    run_pipeline(m, passes, verify_each=False)
    cost = schedule_cost(m, load_board(board()))
    tr, op = cost["train"], cost.get("optimizer")
    per_op: dict[str, tuple[int, int]] = {}
    for o in tr.ops:
        name = "training." + o.label.split(" #")[0]
        a, b = per_op.get(name, (0, 0))
        per_op[name] = (a + o.macs, b + o.compute)
    return Prediction(
        tr.cycles,
        op.cycles if op else 0,
        sum(o.macs for o in tr.ops),
        per_op,
        dict(tr.timeline.dma_busy),
    )


@dataclass
class Measured:
    train: float
    optimizer: float
    batch: int
    #: the L2 budget the run needed (None: the target's default)
    l2: int | None = None
    #: run --json's "profile" (with --profile)
    profile: dict | None = None
    #: mini-batches trained (the profile's counters add up over all of them)
    minibatches: int = 2
    #: SHA-256 of the emitted program (_program_digest)
    program: str = ""


def _run_once(d: Path, config: str, model: str, l2: int | None, profile: bool) -> Measured | str:
    from deeploy_mlir.cli.run import parse_bench
    from deeploy_mlir.emitters.c.profile import Site, parse_profile
    from deeploy_mlir.errors import DeeployError
    from deeploy_mlir.targets import gvsoc

    ref = d / "reference.json"
    ref = ref if ref.is_file() else d / "expected.json"
    lr = json.loads(ref.read_text())["lr"] if ref.is_file() else 0.01
    tiling, buffering, _ = config_spec(config)
    run_l1, _ = _l1_opts(model, config)
    kind = _custom(buffering)
    if kind is not None:
        spec = _spec(tiling, buffering)
        opts = ["--pass-pipeline", _same_tiles_pipeline(d, run_l1, l2, kind, spec)]
        opts += ["--l1", str(run_l1)] if run_l1 is not None else []
    else:
        opts = ["--tiling", tiling, "--buffering", buffering]
        if run_l1 is not None:
            opts += ["--l1", str(run_l1)]
        if l2 is not None:
            opts += ["--l2", str(l2)]
    if profile:
        opts.append("--profile")
    with tempfile.TemporaryDirectory(prefix="dm-bench-") as tmp:
        proj = Path(tmp) / "p"
        r = subprocess.run(
            [
                *(sys.executable, "-m", "deeploy_mlir.cli", "lower", str(d), "-o", str(proj)),
                *("--data", str(d / "data.npz"), "--steps", "1", "--accum", "2"),
                *("--lr", str(lr), "-q", *opts),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if r.returncode != 0:
            lines = (r.stderr or r.stdout).strip().splitlines()
            return lines[-1][:200] if lines else f"exit {r.returncode}"
        digest = _program_digest(proj)
        if digest in _MEASURED:
            return _MEASURED[digest]
        try:
            setup = gvsoc.find_setup(P.ISA)
            elf = gvsoc.build(proj, TARGET, setup, defines=(QUIET,))
            text = gvsoc.run(elf, TARGET, setup)
        except DeeployError as e:
            return str(e)
        bench = parse_bench(text)
        prof = None
        if profile:
            sites = json.loads((proj / "profile.json").read_text())["sites"]
            prof = parse_profile(text, [Site(**s) for s in sites])
    batch = int(np.load(d / "data.npz")["input"].shape[1])
    tc, oc = bench["train"], bench["optimizer"]
    got = Measured(sum(tc) / len(tc), sum(oc) / max(1, len(oc)), batch, l2, prof, len(tc), digest)
    _MEASURED[digest] = got
    return got


#: program digest -> its measurement: two configurations that emit the same
#: C (e.g. double buffering that keeps single's tiles for every op) are
#: simulated once
_MEASURED: dict[str, Measured] = {}


def _program_digest(proj: Path) -> str:
    """SHA-256 of an emitted project's own files (the runtime copied beside
    them is the same for every configuration)."""
    h = hashlib.sha256()
    for f in sorted(proj.rglob("*")):
        rel = f.relative_to(proj)
        if f.is_file() and rel.parts[0] != "runtime":
            h.update(str(rel).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


#: L2 budgets (bytes) to start from instead of the target's default (none
#: now: the budget is found from the built program, run_step)
L2_BUDGET: dict[str, int] = {}
#: compiles run_step may take to find the L2 budget the program leaves
L2_ATTEMPTS = 4

_L2_LEFT = re.compile(r"does not fit GVSoC \S+ L2: its L2 arena needs \d+ bytes and (\d+) are left")


def run_step(model: str, config: str, profile: bool = False) -> Measured | str:
    """Build `model` for GVSoC siracusa (the harness without its final
    parameters) and run 1 optimizer step of 2 mini-batches: cycles, or the
    one-line reason it did not run. The L2 budget comes from the built
    program: when its code and data (targets/gvsoc.py measures the heap the
    ELF leaves) leave less L2 than the budget it was compiled for, it is
    compiled again with the L2 that is left, less 4 KiB for a change of code
    size (the memory plan then keeps more in L3), up to L2_ATTEMPTS times."""
    d = EXAMPLES / model
    m = _run_once(d, config, model, L2_BUDGET.get(model), profile)
    for _ in range(L2_ATTEMPTS - 1):
        if not (isinstance(m, str) and (left := _L2_LEFT.search(m))):
            break
        budget = int(left.group(1)) // 1024 * 1024 - 4096
        print(f"  {model} {config}: again with --l2 {budget}", file=sys.stderr, flush=True)
        m = _run_once(d, config, model, budget, profile)
    return m


def steps_table(
    pairs: list[tuple[str, str]], clock: int, profile: bool = False
) -> tuple[str, list[tuple[str, str, Measured, Prediction | None]]]:
    rows = [
        "| model | config | train cycles/step | predicted | meas/pred | optimizer cycles "
        "| predicted | meas/pred | MACs/step | MAC/cycle | images/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    runs: list[tuple[str, str, Measured, Prediction | None]] = []
    for model, config in pairs:
        t0 = time.time()
        m = run_step(model, config, profile)
        p: Prediction | None = None
        perr = ""
        if not isinstance(m, str):
            try:
                p = predict(model, config, m.l2)
            except Exception as e:
                perr = str(e).splitlines()[0][:100]
        cfg = config if isinstance(m, str) or m.l2 is None else f"{config}, L2 {m.l2}"
        if isinstance(m, str):
            rows.append(f"| {model} | {config} | does not run: {m} | | | | | | | | |")
        elif p is None:
            rows.append(f"| {model} | {cfg} | {m.train:.0f} | {perr} | | | | | | | |")
        else:
            rows.append(
                f"| {model} | {cfg} | {m.train:.0f} | {p.train} | {m.train / p.train:.2f} | "
                f"{m.optimizer:.0f} | {p.optimizer} | "
                f"{m.optimizer / p.optimizer if p.optimizer else 0:.2f} | {p.macs} | "
                f"{p.macs / m.train:.3f} | {m.batch * clock / m.train:.1f} |"
            )
        if not isinstance(m, str):
            runs.append((model, config, m, p))
        print(f"  {model} {config}: {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return "\n".join(rows), runs


def profile_table(model: str, config: str, m: Measured, p: Prediction | None) -> str:
    """One training step's cycles per op type (the profile's sites summed
    over the op's instances, divided by the mini-batches run): kernel calls,
    DMA issue and wait cycles per engine, MACs and the kernels' MAC/cycle."""
    assert m.profile is not None
    per: dict[str, dict[str, float]] = {}
    visits = 0
    for s in m.profile["sites"]:
        if s["function"] != "training_step":
            continue
        name = str(s["op"]).split(" #")[0]
        row = per.setdefault(name, {})
        row[s["kind"]] = row.get(s["kind"], 0.0) + s["cycles"] / m.minibatches
        if s["kind"] == "kernel":
            row["calls"] = row.get("calls", 0.0) + s["calls"] / m.minibatches
        visits += s["calls"]
    kinds = ("kernel", "dma-issue", "dma-wait", "ram-issue", "ram-wait")
    total = sum(sum(r.get(k, 0.0) for k in kinds) for r in per.values())
    rows = [
        f"Per op, {model} {config} (one training step of {m.train:.0f} cycles; the probes "
        f"count {total:.0f}, {total / m.train:.0%}; {m.profile['overhead']} cycles per probe "
        f"pair, {visits / m.minibatches:.0f} probe pairs a step):",
        "",
        "| op | kernel calls | kernel cycles | DMA issue | DMA wait | L3 issue | L3 wait "
        "| total | of step | MACs | kernel MAC/cycle | predicted compute |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    kernel = sum(r.get("kernel", 0.0) for r in per.values())
    # the cluster DMA's issue cycles (an L3 copy's issue includes waiting for
    # room in the HyperBus queue, engine time: left out, a lower bound)
    issue = sum(r.get("dma-issue", 0.0) for r in per.values())
    if p is not None and p.dma_busy:
        busy = max(p.dma_busy.values())
        roof = max(kernel + issue, busy)
        rows[0] += (
            f" roofline {roof:.0f} = max(kernels {kernel:.0f} + mchan copy issue {issue:.0f} "
            f"(measured), busiest DMA engine {busy:.0f} (calibrated model: "
            + ", ".join(f"{e} {c}" for e, c in sorted(p.dma_busy.items()))
            + f")); step / roofline {m.train / roof:.2f}"
        )
    order = sorted(per, key=lambda n: -sum(per[n].get(k, 0.0) for k in kinds))
    for name in order:
        r = per[name]
        tot = sum(r.get(k, 0.0) for k in kinds)
        macs, pred = p.per_op.get(name, (0, 0)) if p is not None else (0, 0)
        mpc = f"{macs / r['kernel']:.3f}" if macs and r.get("kernel") else ""
        rows.append(
            f"| {name} | {r.get('calls', 0):.0f} | {r.get('kernel', 0):.0f} | "
            f"{r.get('dma-issue', 0):.0f} | {r.get('dma-wait', 0):.0f} | "
            f"{r.get('ram-issue', 0):.0f} | {r.get('ram-wait', 0):.0f} | {tot:.0f} | "
            f"{tot / m.train:.1%} | {macs} | {mpc} | {pred} |"
        )
    return "\n".join(rows)


#: example model -> the L1 arenas (bytes) of the buffering table: below
#: the arena its untiled program needs (`minimal-l1 --json`'s "untiled" less
#: the cluster stacks), above the smallest tiled one
ROOFLINE_ARENAS: dict[str, list[int]] = {
    "mlp_small": [512, 1024],
    "mlp_wide": [4096, 8192],
    "simple_mlp": [1024, 2048],
    "autoencoder": [1024, 2048],
    "ds_cnn": [2048, 4096],
    "resnet8": [2048, 4096],
    "mobilenet_v1": [2048, 4096],
    "cct": [4096, 16384],
    "cct_lora": [4096, 8192],
}
#: the buffering table's configurations at an arena N
ROOFLINE_CONFIGS = ("single", "double", "single@double")


@dataclass
class Roof:
    """The roofline of one training step: R = max(K + I, D)."""

    kernel: float  #: K, kernel-call cycles (profile, per training step)
    issue: float  #: I, cluster-DMA copy-issue cycles (profile)
    wait: float  #: cluster-DMA wait cycles (profile; not part of R)
    dma: int  #: D, the busiest DMA engine's cycles (calibrated model)
    #: the factor K and I take for the unprofiled step: min(1, T / (K + I +
    #: wait)), T the unprofiled step (the probes' windows cannot add up to
    #: more than the unprofiled step holds)
    scale: float = 1.0

    @property
    def profiled_bound(self) -> float:
        """R of the profiled run: K and I as its probes measure them."""
        return max(self.kernel + self.issue, self.dma)

    @property
    def bound(self) -> float:
        """R of the unprofiled step: K and I scaled by `scale`."""
        return max(self.scale * (self.kernel + self.issue), self.dma)


def roofline(m: Measured, p: Prediction, unprofiled: float | None = None) -> Roof:
    """R of a profiled run `m` of a program and the cycle model's `p` of it.
    K and I are the probes' windows, each less the empty probe pair's cycles
    (the overhead the harness measures). The windows hold the same code as
    the unprofiled program, but the probes' bookkeeping (L2 counters read
    and written between the windows, a posted store of the start time inside
    them, a larger program for the instruction cache) lengthens a profiled
    step by 80-160 cycles per probe pair, and some of it lands inside the
    windows: where K + I + the waits exceed the `unprofiled` step, K and I
    are scaled down by that ratio (`Roof.scale`)."""
    assert m.profile is not None
    over = m.profile["overhead"]
    acc = {"kernel": 0.0, "dma-issue": 0.0, "dma-wait": 0.0}
    for s in m.profile["sites"]:
        if s["function"] == "training_step" and s["kind"] in acc:
            acc[s["kind"]] += (s["cycles"] - over * s["calls"]) / m.minibatches
    busy = max(p.dma_busy.values()) if p.dma_busy else 0
    probed = acc["kernel"] + acc["dma-issue"] + acc["dma-wait"]
    scale = min(1.0, unprofiled / probed) if unprofiled and probed else 1.0
    return Roof(acc["kernel"], acc["dma-issue"], acc["dma-wait"], busy, scale)


def _pairs(m: Measured) -> float:
    """Probe pairs visited in one training step of a profiled run."""
    assert m.profile is not None
    sites = [s for s in m.profile["sites"] if s["function"] == "training_step"]
    return sum(s["calls"] for s in sites) / m.minibatches


def roofline_table(points: list[tuple[str, int]], kinds: Sequence[str] = ROOFLINE_CONFIGS) -> str:
    """Single, double and single@double buffering at each (model, arena):
    the measured training step (unprofiled), its roofline R from a profiled
    run of the same program, step / R, and double against single@double (the
    same tiles) and single (the same budget)."""
    rows = [
        "| model | arena | config | train cycles/step | same program as | K kernels | I issue "
        "| DMA wait | D busiest engine | scale | R | step / R | profiled step | profiled "
        "step / profiled R | vs the same tiles single-buffered | vs single |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model, arena in points:
        got: dict[str, tuple[Measured, Measured, Roof] | str] = {}
        for kind in kinds:
            config = f"{kind}-{arena}"
            t0 = time.time()
            m = run_step(model, config)
            mp = run_step(model, config, profile=True) if not isinstance(m, str) else m
            if isinstance(m, str) or isinstance(mp, str):
                got[kind] = m if isinstance(m, str) else str(mp)
            else:
                got[kind] = (m, mp, roofline(mp, predict(model, config, m.l2), m.train))
                r = got[kind][2]  # type: ignore[index]
                rec = {"model": model, "arena": arena, "config": kind, "train": m.train}
                rec |= {"profiled": mp.train, "program": m.program, "pairs": _pairs(mp)}
                rec |= {"kernel": r.kernel, "issue": r.issue, "wait": r.wait, "dma": r.dma}
                rec |= {"scale": r.scale}
                print("ROOF " + json.dumps(rec), file=sys.stderr, flush=True)
            print(f"  {model} {config}: {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
        ok = {k: g for k, g in got.items() if not isinstance(g, str)}
        for kind in kinds:
            g = got[kind]
            if isinstance(g, str):
                rows.append(f"| {model} | {arena} | {kind} | does not run: {g} |" + " |" * 12)
                continue
            m, mp, r = g
            same = [
                k for k in kinds[: kinds.index(kind)] if k in ok and ok[k][0].program == m.program
            ]
            cmp = ["", ""]
            if kind in ("double", "forced"):
                for i, other in enumerate((f"single@{kind}", "single")):
                    if other in ok:
                        base = ok[other][0].train
                        verdict = "ok" if m.train <= base else "SLOWER"
                        cmp[i] = f"{m.train / base:.3f} ({verdict})"
            rows.append(
                f"| {model} | {arena} | {kind} | {m.train:.0f} | {same[0] if same else ''} | "
                f"{r.kernel:.0f} | {r.issue:.0f} | {r.wait:.0f} | {r.dma} | {r.scale:.3f} | "
                f"{r.bound:.0f} | {m.train / r.bound:.2f} | {mp.train:.0f} | "
                f"{mp.train / r.profiled_bound:.2f} | {cmp[0]} | {cmp[1]} |"
            )
        print("\n".join(rows[-len(kinds) :]), file=sys.stderr, flush=True)
    return "\n".join(rows)


def _steps(args: argparse.Namespace, ap: argparse.ArgumentParser, clock: float) -> None:
    """The steps part of main: the training-step tables, or --roofline's."""
    if args.published:
        ms, cs = args.models or PUBLISHED_MODELS, args.configs or PUBLISHED_CONFIGS
    else:
        ms = models() if args.all else (args.models or DEFAULT_MODELS)
        cs = list(CONFIGS) if args.all else (args.configs or DEFAULT_CONFIGS)
    for m in ms:
        if m.partition(":")[0] not in models():
            ap.error(f"unknown model '{m}' (available: {', '.join(models())})")
    if args.roofline:
        pts: list[tuple[str, int]] = []
        for m in args.models or list(ROOFLINE_ARENAS):
            # MODEL:ARENA names one point
            name, _, at = m.partition(":")
            arenas = [int(at)] if at.isdigit() else args.arenas or ROOFLINE_ARENAS.get(name)
            if not arenas or name not in models() or (at and not at.isdigit()):
                ap.error(f"--roofline: '{m}': an example model with known arenas, or --arenas")
            pts += [(name, a) for a in arenas]
        print("### Double vs single buffering (GVSoC siracusa)\n", flush=True)
        print(roofline_table(pts, tuple(args.kinds)) + "\n")
        return
    isa = {"f": "", "zfinx": ", clang-19 Zfinx", "f-clang": ", clang-19 RV32F"}[args.isa]
    print(f"### Training steps (GVSoC siracusa{isa}, clock {clock / 1e6:g} MHz)\n", flush=True)
    table, runs = steps_table([(m, c) for m in ms for c in cs], clock, args.profile)
    print(table + "\n")
    for model, config, meas, pred in runs:
        if meas.profile is not None:
            print(profile_table(model, config, meas, pred) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--only", choices=("kernels", "ceiling", "steps", "step-kernels"), action="append"
    )
    ap.add_argument(
        "--step",
        nargs=2,
        metavar=("MODEL", "CONFIG"),
        default=["published/cct", "double-128000"],
        help="step-kernels: the step whose gemm / batch_matmul / conv2d / conv2d_grad calls "
        "are measured one by one (default: published/cct double-128000)",
    )
    ap.add_argument(
        "--step-project",
        type=Path,
        help="step-kernels: read the calls from this project (`deeploy-mlir lower -o DIR`) "
        "instead of lowering --step",
    )
    ap.add_argument(
        "--models",
        nargs="+",
        help=f"example models (default {DEFAULT_MODELS}); --roofline: also MODEL:ARENA",
    )
    ap.add_argument(
        "--configs",
        nargs="+",
        type=_config_arg,
        help=f"step configurations: {', '.join(CONFIGS)}, or single-N, double-N, single@double-N "
        "at an L1 arena of N bytes",
    )
    ap.add_argument("--all", action="store_true", help="every example model and configuration")
    ap.add_argument(
        "--published",
        action="store_true",
        help=f"steps of the published-size models ({', '.join(PUBLISHED_MODELS)}; "
        "python examples/make_models.py --published writes them) at "
        f"{', '.join(PUBLISHED_CONFIGS)}",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="steps: also a per-op table of each run (run --profile's cycle probes)",
    )
    ap.add_argument(
        "--roofline",
        action="store_true",
        help="steps: single-N, double-N and single@double-N of every example model (or "
        "--models) at the L1 arenas where it tiles (or --arenas), with each step's "
        "roofline R = max(K + I, D) and step / R",
    )
    ap.add_argument("--arenas", nargs="+", type=int, help="--roofline: these L1 arenas")
    ap.add_argument(
        "--kinds",
        nargs="+",
        choices=(*ROOFLINE_CONFIGS, "forced", "single@forced"),
        default=list(ROOFLINE_CONFIGS),
        help="--roofline: the configurations at each arena (default %(default)s; forced: "
        "every op double-buffered, tile-select{fallback=false}; single@forced: its tiles "
        "single-buffered)",
    )
    ap.add_argument(
        "--baseline",
        type=Path,
        help="kernels, step-kernels: also build the runtime_c under this directory "
        "(another revision's) "
        "and print before / after",
    )
    ap.add_argument(
        "--isa",
        choices=P.gvsoc.ISAS,
        default="f",
        help="the cluster cores' float ISA: f (default) Debian gcc RV32IMFC on ../shared/gvsoc "
        "(built with separate f registers); zfinx clang-19 -march=rv32imc_zfinx on the GVSoC "
        "of scripts/build-gvsoc-zfinx.sh (floats in the x registers, as the real Siracusa); "
        "f-clang clang-19 RV32IMFC on ../shared/gvsoc (the compiler's share)",
    )
    ap.add_argument(
        "--no-forward",
        action="store_true",
        help="steps: l3-overlap's forwarding off (forward=false; the default pipeline "
        "forwards), in the measured program and the prediction alike",
    )
    args = ap.parse_args(argv)
    P.ISA = args.isa
    global NO_FORWARD
    NO_FORWARD = args.no_forward
    if args.baseline is not None and not (args.baseline / "runtime_c" / "kernels").is_dir():
        ap.error(f"--baseline {args.baseline}: no runtime_c/kernels there")
    parts = args.only or ["ceiling", "kernels", "steps"]
    from deeploy_mlir.targets.boards import load_board

    clock = load_board(board()).clock_hz
    isa = {"f": "", "zfinx": ", clang-19 Zfinx", "f-clang": ", clang-19 RV32F"}[args.isa]
    need_ceiling = "ceiling" in parts or "kernels" in parts or "step-kernels" in parts
    ceil = P.measure_ceiling() if need_ceiling else []
    per = {c.cores: c.per_cycle for c in ceil}
    if "ceiling" in parts:
        print(f"### FMA ceiling (GVSoC siracusa{isa})\n")
        print(ceiling_table(ceil) + "\n")
    if "kernels" in parts and args.baseline is not None:
        print(f"### Kernels before ({args.baseline}) and after (GVSoC siracusa{isa})\n")
        print(baseline_table(per, args.baseline) + "\n")
    elif "kernels" in parts:
        print(f"### Kernels (GVSoC siracusa{isa}, -O2 -ffp-contract=off)\n")
        print(kernels_table(per) + "\n")
    if "step-kernels" in parts:
        model, config = args.step
        if config not in CONFIGS:
            ap.error(f"--step: unknown configuration '{config}'")
        print(f"### The kernel calls of {model} {config}, one at a time (GVSoC siracusa{isa})\n")
        table = step_kernels_table(model, config, per, args.baseline, args.step_project)
        print(table + "\n", flush=True)
    if "steps" in parts:
        _steps(args, ap, clock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
