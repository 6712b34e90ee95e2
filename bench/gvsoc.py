"""Speed on GVSoC siracusa (8-core PULP cluster, ../shared/gvsoc), as Markdown
tables for the README.

    python bench/gvsoc.py                     # default set: a few minutes
    python bench/gvsoc.py --only kernels      # one table: kernels, ceiling, steps
    python bench/gvsoc.py --models mlp_small ds_cnn --configs untiled single-64000
    python bench/gvsoc.py --all               # every example model and configuration
    python bench/gvsoc.py --only kernels --baseline DIR   # DIR/runtime_c's kernels beside these

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
siracusa` prints) and measured / predicted. Configurations: untiled (whole
tensors in L1), tiled single or double buffered at an L1 arena budget (the
cluster stacks come on top of it).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import gvsoc_probe as P
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
BOARD = "siracusa"

# ------------------------------------------------------------------ kernels


def kernel_cases() -> list[P.KernelCase]:
    """Shapes of the published models' layers (examples/make_models.py
    --published): CCT (embedding 128, 64 tokens), ResNet-8 (16 channels,
    32x32 at full size: 16x16 here), MobileNetV1 (depthwise and pointwise
    32 channels at 16x16 (24x24 at full size), depthwise 64 channels at
    12x12)."""
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
    ]
    return cases


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
    tiling, _, arena = CONFIGS[config]
    if arena is not None:
        return _stacks(model) + arena, arena
    if tiling == "untiled" and model.startswith("published/"):
        return UNTILED_L1_PUBLISHED, UNTILED_L1_PUBLISHED - _stacks(model)
    return None, None


def _same_tiles_pipeline(d: Path, run_l1: int | None, l2: int | None) -> str:
    """Double buffering's pass pipeline without dma-multibuffer: single
    buffering at the double-buffered tiles."""
    opts = ["--tiling", "tiled", "--buffering", "double"]
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
    from deeploy_mlir.pipeline import parse_pipeline, print_pipeline

    passes = parse_pipeline(r.stdout.strip())
    return print_pipeline([q for q in passes if q.name != "dma-multibuffer"])


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

    tiling, buffering, _ = CONFIGS[config]
    mem = get_target("pulp-open").default_budgets()
    run_l1, _ = _l1_opts(model, config)
    m = import_model(str(EXAMPLES / model), None).module.clone()
    cfg = CompileConfig(
        tiling=tiling,  # type: ignore[arg-type]
        l1=(run_l1 or mem["l1"]) - _stacks(model),
        l1_stacks=_stacks(model),
        buffering="double" if buffering == "single@double" else buffering,  # type: ignore[arg-type]
        l2=l2 or mem["l2"],
        l3=mem["l3"],
    )
    if buffering == "single@double":
        from deeploy_mlir.pipeline import parse_pipeline

        passes = parse_pipeline(_same_tiles_pipeline(EXAMPLES / model, run_l1, l2))
    else:
        passes = pipeline(cfg)
    run_pipeline(m, passes, verify_each=False)
    cost = schedule_cost(m, load_board(BOARD))
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


def _run_once(d: Path, config: str, model: str, l2: int | None, profile: bool) -> Measured | str:
    from deeploy_mlir.cli.run import parse_bench
    from deeploy_mlir.emitters.c.profile import Site, parse_profile
    from deeploy_mlir.errors import DeeployError
    from deeploy_mlir.targets import gvsoc

    ref = d / "reference.json"
    ref = ref if ref.is_file() else d / "expected.json"
    lr = json.loads(ref.read_text())["lr"] if ref.is_file() else 0.01
    tiling, buffering, _ = CONFIGS[config]
    run_l1, _ = _l1_opts(model, config)
    if buffering == "single@double":
        opts = ["--pass-pipeline", _same_tiles_pipeline(d, run_l1, l2)]
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
        try:
            setup = gvsoc.find_setup()
            elf = gvsoc.build(proj, BOARD, setup, defines=(QUIET,))
            text = gvsoc.run(elf, BOARD, setup)
        except DeeployError as e:
            return str(e)
        bench = parse_bench(text)
        prof = None
        if profile:
            sites = json.loads((proj / "profile.json").read_text())["sites"]
            prof = parse_profile(text, [Site(**s) for s in sites])
    batch = int(np.load(d / "data.npz")["input"].shape[1])
    tc, oc = bench["train"], bench["optimizer"]
    return Measured(sum(tc) / len(tc), sum(oc) / max(1, len(oc)), batch, l2, prof, len(tc))


#: L2 budgets (bytes) measured to leave room for the program's code and data
#: on GVSoC siracusa (its 2 MiB L2 holds the code, the initial parameters and
#: the input data beside the arena): the published CCT's 940 KB step function
#: takes tens of minutes to compile, too long to find the budget by retrying
L2_BUDGET: dict[str, int] = {"published/cct": 460000}

_L2_LEFT = re.compile(r"does not fit GVSoC \S+ L2: its L2 arena needs \d+ bytes and (\d+) are left")


def run_step(model: str, config: str, profile: bool = False) -> Measured | str:
    """Build `model` for GVSoC siracusa (the harness without its final
    parameters) and run 1 optimizer step of 2 mini-batches: cycles, or the
    one-line reason it did not run. When the program's code and data leave
    less L2 than the target's default budget, it is compiled again with the
    L2 budget that is left (the memory plan then keeps more in L3)."""
    d = EXAMPLES / model
    m = _run_once(d, config, model, L2_BUDGET.get(model), profile)
    if isinstance(m, str) and (left := _L2_LEFT.search(m)):
        budget = int(left.group(1)) // 1024 * 1024 - 4096
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("kernels", "ceiling", "steps"), action="append")
    ap.add_argument("--models", nargs="+", help=f"example models (default {DEFAULT_MODELS})")
    ap.add_argument("--configs", nargs="+", choices=list(CONFIGS), help="step configurations")
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
        "--baseline",
        type=Path,
        help="kernels: also build the runtime_c under this directory (another revision's) "
        "and print before / after",
    )
    args = ap.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "runtime_c" / "kernels").is_dir():
        ap.error(f"--baseline {args.baseline}: no runtime_c/kernels there")
    parts = args.only or ["ceiling", "kernels", "steps"]
    from deeploy_mlir.targets.boards import load_board

    clock = load_board(BOARD).clock_hz
    need_ceiling = "ceiling" in parts or "kernels" in parts
    ceil = P.measure_ceiling() if need_ceiling else []
    per = {c.cores: c.per_cycle for c in ceil}
    if "ceiling" in parts:
        print("### FMA ceiling (GVSoC siracusa)\n")
        print(ceiling_table(ceil) + "\n")
    if "kernels" in parts and args.baseline is not None:
        print(f"### Kernels before ({args.baseline}) and after (GVSoC siracusa)\n")
        print(baseline_table(per, args.baseline) + "\n")
    elif "kernels" in parts:
        print("### Kernels (GVSoC siracusa, -O2 -ffp-contract=off)\n")
        print(kernels_table(per) + "\n")
    if "steps" in parts:
        if args.published:
            ms, cs = args.models or PUBLISHED_MODELS, args.configs or PUBLISHED_CONFIGS
        else:
            ms = models() if args.all else (args.models or DEFAULT_MODELS)
            cs = list(CONFIGS) if args.all else (args.configs or DEFAULT_CONFIGS)
        for m in ms:
            if m not in models():
                ap.error(f"unknown model '{m}' (available: {', '.join(models())})")
        print(f"### Training steps (GVSoC siracusa, clock {clock / 1e6:g} MHz)\n", flush=True)
        table, runs = steps_table([(m, c) for m in ms for c in cs], clock, args.profile)
        print(table + "\n")
        for model, config, meas, pred in runs:
            if meas.profile is not None:
                print(profile_table(model, config, meas, pred) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
