"""The command line's grammar: every command's options (no xdsl, numpy or
onnx here: --help and --version import nothing heavy; tests/test_everyday.py
checks it)."""

from __future__ import annotations

import argparse
import math
import struct
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from deeploy_mlir.config import BUFFERINGS, DEFAULT_SEED, TILINGS, CompileConfig


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit code 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)

    def format_help(self) -> str:
        # `lower`'s description names the default pipeline, computed only when
        # the help is printed (pipeline imports xdsl): the text of the passes
        # `lower MODEL` runs, as --print-pipeline prints them
        if "{pipeline}" in (self.description or ""):
            from deeploy_mlir.pipeline import pipeline, print_pipeline

            default = print_pipeline(pipeline(default_config("pulp-open")))
            self.description = (self.description or "").replace("{pipeline}", default)
        for action in self._actions:  # the boards' budgets, read only for the help
            if action.help is not None and "{budgets}" in action.help:
                from deeploy_mlir.targets.target import budgets_help

                action.help = action.help.replace("{budgets}", budgets_help())
        return super().format_help()


#: the largest memory budget (bytes): a 32-bit target addresses 4 GiB
MAX_BUDGET = (1 << 32) - 1
#: the largest float32
FLOAT32_MAX = 3.4028234663852886e38


def _positive(kind: str, most: int | None = None, why: str = ""):
    def conv(s: str) -> int:
        try:
            v = int(s, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be an integer, got '{s}'") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{kind} must be positive, got {v}")
        if most is not None and v > most:
            raise argparse.ArgumentTypeError(f"{kind} must be at most {most}{why}, got {v}")
        return v

    return conv


def _lr(s: str) -> float:
    """A learning rate: positive, finite and not 0 as a float32 (the C harness's type)."""
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"learning rate must be a number, got '{s}'") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"learning rate must be finite, got {s}")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"learning rate must be positive, got {s}")
    if v > FLOAT32_MAX:
        raise argparse.ArgumentTypeError(
            f"learning rate {s} does not fit a float32 (at most {FLOAT32_MAX:.8g})"
        )
    if struct.unpack("<f", struct.pack("<f", v))[0] == 0.0:
        raise argparse.ArgumentTypeError(f"learning rate {s} is 0 as a float32")
    return v


#: memory_regime.REGIMES, spelled here so that building the parser imports no
#: xdsl (tests/test_everyday.py checks that they agree); TILINGS and
#: BUFFERINGS are deeploy_mlir.config's
REGIMES = ("resident", "spill", "stream")


class _Version(argparse.Action):
    """--version: the installed version, looked up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        print(f"deeploy-mlir {_version()}")
        parser.exit()


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "model",
        help="artifact directory (training_model.onnx, optimizer_model.onnx, "
        "checkpoint) or a single training ONNX file",
    )
    from deeploy_mlir.targets.target import TARGETS

    p.add_argument(
        "--target",
        default="pulp-open",
        help=f"target platform: {' or '.join(TARGETS)} (default: pulp-open). Default "
        "budgets: {budgets}; --l1 holds the cluster stacks beside the L1 arena",
    )
    p.add_argument(
        "--pass-pipeline",
        default=None,
        metavar="P",
        help="passes to run, xdsl-opt syntax (default: the pipeline that --tiling and "
        "--l1 describe, see `deeploy-mlir lower --help`); the budgets are then its "
        "arena-plan{capacity=N} options. With L3 homes, the default pipeline's "
        "l3-overlap forwards L3 copies (a fetch of bytes an L2 buffer holds reads it); "
        "l3-overlap{forward=false} in P turns that off",
    )
    p.add_argument(
        "--print-pipeline",
        action="store_true",
        help="print the pass pipeline this command would run (the text --pass-pipeline "
        "takes) on stdout and exit, writing nothing (MODEL is read: the L1 budget's "
        "cluster stacks are sized for the kernels it forks)",
    )
    p.add_argument(
        "--verify-each",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="verify the IR after every pass, so that a pass that breaks it is named "
        "(default: only after the last pass; slower on large graphs)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress display (it is shown on stderr only when stderr is a terminal)",
    )
    p.add_argument(
        "--params",
        default=None,
        metavar="PARAMS.npz",
        help="initial parameters by name (default: the checkpoint, else the graph's initializers)",
    )
    for lv in ("l1", "l2", "l3"):
        p.add_argument(
            f"--{lv}",
            type=_positive(f"--{lv}", MAX_BUDGET, " (a 32-bit target addresses 4 GiB)"),
            default=None,
            metavar="BYTES",
            help=f"{lv.upper()} budget in bytes (default: the target's, see --target; the "
            "board's with --board or --regime)",
        )
    p.add_argument(
        "--tiling",
        choices=TILINGS,
        default="tiled",
        help="tiled: Z3 chooses tiles that fit --l1 (default); untiled: one tile per tensor, "
        "each whole tensor in L1; none: kernels run on the L2 buffers",
    )
    p.add_argument(
        "--l1-as-l2",
        action="store_true",
        help="allocate the L1 buffers in L2 and do the L2<->L1 copies with memcpy "
        "(a baseline and debugging mode; the numbers do not change)",
    )
    p.add_argument(
        "--weights-in-l3",
        action="store_true",
        help="keep every parameter in L3 (staged through L2 around each op that uses it); "
        "without it only tensors that do not fit the --l2 budget go to L3",
    )
    p.add_argument(
        "--home",
        choices=("L2", "L3"),
        default="L2",
        help="the level where the tensors that live across a step (inputs, parameters, "
        "gradients, outputs) are kept: L2 (default; those that do not fit --l2 go to L3) or "
        "L3 (all of them, moved through L2 in tiles)",
    )
    p.add_argument(
        "--buffering",
        choices=BUFFERINGS,
        default="double",
        help="double (default): fetch tile i+1 and write tile i-1 back while tile i computes, "
        "on every DMA hop; double-l3: only on the L3 hop; single: each tile's copies are "
        "waited for before and after its kernel",
    )
    p.add_argument(
        "--regime",
        choices=("auto", *REGIMES),
        default=None,
        help="which tensors live in L3, from the board's capacities: resident (all in L2), "
        "spill (activations in L3), stream (weights and gradients too), auto (the first that "
        "fits; the default with --board); without --regime and --board, --l2/--weights-in-l3/"
        "--home decide",
    )
    p.add_argument(
        "--solver",
        choices=("front", "z3"),
        default=None,
        help="how tile-select finds each op's tiles: front scans the op's (L1 bytes, cycles) "
        "front for the fastest tiles that fit, exactly (the default); z3 solves the same choice "
        "with Z3 under --rlimit (20-30 MiB more memory, the same tiles when it proves its "
        "optimum). --rlimit alone implies z3",
    )
    p.add_argument(
        "--rlimit",
        type=_positive("--rlimit"),
        default=None,
        metavar="N",
        help="with --solver z3: Z3's resource limit per tile-select search, a count of solver "
        "steps that is the "
        "same on every machine and load (default: tile-select's, far above what the examples "
        "need); a search that reaches it keeps the best tiles found and is named in a note and "
        "in manifest.json. With --pass-pipeline, write tile-select{rlimit=N} instead",
    )
    p.add_argument(
        "--board",
        default=None,
        metavar="NAME|PATH",
        help="the board (siracusa, siracusa_zfinx, gap9_evk, pulp_slowram or a YAML file) whose "
        "capacities (the default budgets) and cycle numbers to use; default with --regime: the "
        "target's (siracusa for pulp-open, gap9_evk for gap9). siracusa_zfinx: Siracusa's "
        "kernels as the chip runs them (floats in the integer registers); its project's "
        "`make gvsoc`, --on gvsoc and report --measure build for that ISA",
    )


def _train_opts(p: argparse.ArgumentParser, data_required: bool) -> None:
    p.add_argument(
        "--data",
        required=data_required,
        metavar="DATA.npz",
        help="one array per user input of the training graph, named like it, with "
        "the steps x accum mini-batches stacked on a new first axis",
    )
    p.add_argument(
        "--steps", type=_positive("--steps"), default=1, help="optimizer steps (default 1)"
    )
    p.add_argument(
        "--accum",
        type=_positive("--accum"),
        default=1,
        help="mini-batches accumulated per optimizer step (default 1)",
    )
    p.add_argument("--lr", type=_lr, default=0.01, help="SGD learning rate (default 0.01)")
    _seed_opt(p)
    p.add_argument(
        "--profile",
        action="store_true",
        help="per-op cycle profile: read the cycle counter around every kernel call, DMA "
        "copy and DMA wait; the harness prints PROF lines (the project's profile.json "
        'names each site; run --json writes them as "profile"); the numbers do not change',
    )


def _seed(s: str) -> int:
    try:
        v = int(s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be an integer, got '{s}'") from None
    if not 0 <= v <= MAX_BUDGET:
        raise argparse.ArgumentTypeError(f"--seed must be in [0, {MAX_BUDGET}], got {v}")
    return v


def _seed_opt(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--seed",
        type=_seed,
        default=DEFAULT_SEED,
        metavar="N",
        help="seed of the dropout masks, an unsigned 32-bit integer; each dropout node and "
        f"mini-batch draws its own stream from it (default {DEFAULT_SEED})",
    )


def _force(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--force",
        action="store_true",
        help=f"replace {what} even if it is a directory deeploy-mlir did not write "
        "(everything in it is deleted; the current directory and the inputs' are still refused)",
    )


def default_config(target: str) -> CompileConfig:
    """The CompileConfig of `lower MODEL --target TARGET` for a MODEL that
    forks the deepest kernels (convolutions: the largest cluster stacks), for
    `lower --help`."""
    from deeploy_mlir.cli.options import config_of, with_stacks

    args = build_parser().parse_args(["lower", "MODEL", "-o", "OUT", "--target", target])
    return with_stacks(config_of(args), None)


#: the top-level --help: the commands, one line each, and what every command promises
DESCRIPTION = """deeploy-mlir: compile ONNX training graphs to C for PULP targets, and run them.

Commands:
  lower       MODEL -o OUT      write the C project
  run         MODEL --data D    lower, build on the host emulation (or QEMU), train, print losses
  report      MODEL             arena sizes and bounds per memory level (+ cycles with --board)
  minimal-l1  MODEL             the smallest L1 budget that compiles, tiled and untiled
  board       NAME|FILE.yaml    check a board description and print it
  test        DIR               run a Deeploy test folder (network.onnx, inputs.npz, outputs.npz)
  sweep       MODEL -o DIR      compile (and run) every L1 x buffering x board point, tabulate

Long commands show their progress on stderr when it is a terminal (--quiet: off).

Errors in the input (files, graphs, data, options) print one line and exit 2.
Output paths are checked before any work starts: an output directory (-o, --keep)
is never the current directory, one holding it, or one holding the model, --data,
--params or --board; an existing one is replaced only if deeploy-mlir wrote it
(its .deeploy-mlir marker) or with --force. Outputs appear whole or not at all.
"""


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="deeploy-mlir",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    lo = sub.add_parser(
        "lower",
        help="write the C project for a training model",
        description="Compile MODEL to a C project in OUT. Without --pass-pipeline the "
        "pipeline follows --tiling, --buffering, --weights-in-l3, --target and the budgets "
        "(--print-pipeline prints it); for pulp-open's defaults and a model with "
        "convolutions (the largest cluster stacks) it is: {pipeline}",
    )
    _common(lo)
    lo.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="output directory: created, or replaced whole if it is a previous deeploy-mlir "
        "output (it holds a .deeploy-mlir marker) or empty; never the current directory, a "
        "directory holding it, or one holding the model, --data, --params or --board",
    )
    _force(lo, "OUT")
    _train_opts(lo, data_required=False)
    lo.add_argument(
        "--emit-ir",
        metavar="FILE",
        default=None,
        help="also write the IR after the pipeline to FILE (a file, outside OUT; replaced "
        "whole; when a pass fails: the IR as it stood before that pass, and nothing else)",
    )
    ru = sub.add_parser(
        "run",
        help="lower, build on the host emulation and train",
        description="Lower MODEL, build it with the host gcc against the PMSIS "
        "emulation, train and print each mini-batch's loss.",
    )
    _common(ru)
    _train_opts(ru, data_required=True)
    ru.add_argument(
        "--json",
        metavar="OUT.json",
        default=None,
        help='write {"losses": [...], "params": {name: values}} (a file, checked before the '
        "run, replaced whole after it)",
    )
    ru.add_argument(
        "--keep",
        metavar="DIR",
        default=None,
        help="keep the generated project (built) in DIR when the run succeeds; the same rules "
        "as lower's -o OUT",
    )
    _force(ru, "--keep DIR")
    ru.add_argument(
        "--on",
        choices=("host", "qemu", "gvsoc"),
        default="host",
        help="host: build with gcc against the PMSIS emulation (default); qemu: build for one "
        "RV32IMF core and run under qemu-system-riscv32 (BENCH lines count instructions retired); "
        "gvsoc: build for the 8-core PULP cluster and run on the GVSoC simulator (BENCH lines "
        "count cycles; see docs/gvsoc.md)",
    )
    _gvsoc_opts(ru)
    ml = sub.add_parser(
        "minimal-l1",
        help="the smallest L1 budget at which the model compiles, tiled and untiled",
        description="Bisect the L1 budget: the smallest number of bytes at which MODEL compiles "
        "with Z3-chosen tiles, and with one tile per tensor (untiled), for the --buffering "
        "given (default double: two buffers per tile).",
    )
    _common(ml)
    ml.add_argument(
        "--json",
        action="store_true",
        help='print {"tiled": B, "untiled": B} (for the --buffering given)',
    )
    re_ = sub.add_parser("report", help="memory plan: arena and lower bound per level")
    _common(re_)
    re_.add_argument("--json", action="store_true", help="print JSON")
    re_.add_argument(
        "--plot",
        metavar="OUT.png",
        default=None,
        help="write a PNG of the bytes live in each memory level over the schedule and the "
        "cycles per op (the chosen regime, double buffered, on --board or the target's board)",
    )
    re_.add_argument(
        "--measure",
        action="store_true",
        help="also build the compiled step for GVSoC, run it and show its measured cycles "
        "beside the cycle model's (--board, default the target's board; needs GVSoC, "
        "docs/gvsoc.md)",
    )
    bo = sub.add_parser(
        "board",
        help="check a board file and print it",
        description="Load BOARD (a shipped board's name, or a path to a YAML file), check "
        "every field, and print its cores, memory levels, DMA engines and kernel throughput.",
    )
    bo.add_argument(
        "board",
        help="board name (siracusa, siracusa_zfinx, gap9_evk, pulp_slowram) or YAML path",
    )
    bo.add_argument("--json", action="store_true", help="print the board as JSON")
    _test_parser(sub)
    from deeploy_mlir.cli.sweep_options import add_parser as _sweep_parser

    _sweep_parser(sub, _common)
    return ap


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("deeploy-mlir")
    except PackageNotFoundError:  # a checkout on PYTHONPATH, not installed
        return "0.1.0+source"


def _gvsoc_opts(p: argparse.ArgumentParser) -> None:
    from deeploy_mlir.targets.gvsoc import DEFAULT_TIMEOUT, TARGETS

    p.add_argument(
        "--gvsoc-target",
        choices=tuple(TARGETS),
        default=None,
        help="with --on gvsoc: the GVSoC model to run on (default: siracusa for --target "
        "pulp-open)",
    )
    p.add_argument(
        "--gvsoc-timeout",
        type=_positive("--gvsoc-timeout"),
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"with --on gvsoc: wall-clock seconds before a run counts as hung (default "
        f"{DEFAULT_TIMEOUT})",
    )


def _atol(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--atol must be a number, got '{s}'") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"--atol must be a non-negative number, got {s}")
    return v


def _test_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    te = sub.add_parser(
        "test",
        help="run one of Deeploy's test folders and compare its outputs",
        description="Run a Deeploy test folder the way Deeploy's runner does: compile "
        "DIR/network.onnx, feed DIR/inputs.npz's arrays to the graph inputs in order, build and "
        "run one step on the host emulation, and compare each graph output with DIR/outputs.npz's "
        "array at the same position. Exit 0 when all match, 1 when one does not.",
    )
    _common(te)
    for action in te._actions:
        if action.dest == "model":
            action.metavar = "DIR"
            action.help = "a Deeploy test folder: network.onnx, inputs.npz, outputs.npz"
    te.add_argument(
        "--atol",
        type=_atol,
        default=1e-4,
        help="absolute tolerance per element (default 1e-4, as Deeploy's runner)",
    )
    te.add_argument(
        "--keep",
        metavar="OUT",
        default=None,
        help="keep the generated project (built) in OUT when the run succeeds; the same rules "
        "as lower's -o OUT",
    )
    _force(te, "--keep OUT")
    _seed_opt(te)
    te.add_argument(
        "--on",
        choices=("host", "gvsoc"),
        default="host",
        help="host: the PMSIS emulation (default); gvsoc: the 8-core cluster on the GVSoC "
        "simulator (docs/gvsoc.md)",
    )
    _gvsoc_opts(te)
