"""deeploy-mlir: compile ONNX training graphs to C for PULP targets, and run them.

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

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from deeploy_mlir.errors import DeeployError
from deeploy_mlir.outputs import (
    Input,
    check_dir_output,
    check_file_output,
    inputs_of,
    staged_dir,
    staged_file,
    write_file,
)

if TYPE_CHECKING:  # numpy is imported where it is used: Ctrl-C at start-up is handled
    import numpy as np

    from deeploy_mlir.memory.report import RegimeReport
    from deeploy_mlir.targets.boards import Board

#: default memory sizes per target (bytes): Siracusa's cluster L1 and SoC L2
TARGET_MEMORY = {
    "pulp-open": {"l1": 65536, "l2": 2097152, "l3": 8388608},
    "gap9": {"l1": 131072, "l2": 1572864, "l3": 8388608},
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit code 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)

    def format_help(self) -> str:
        # `lower`'s description names the default pipeline, computed only when
        # the help is printed (pipeline imports xdsl)
        if "{pipeline}" in (self.description or ""):
            from deeploy_mlir.pipeline import pipeline_for

            default = pipeline_for(l2=TARGET_MEMORY["pulp-open"]["l2"])
            self.description = (self.description or "").replace("{pipeline}", default)
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


#: pipeline.TILINGS, pipeline.BUFFERINGS and memory_regime.REGIMES, spelled
#: here so that building the parser imports no xdsl (tests/test_everyday.py
#: checks that they agree)
TILINGS = ("tiled", "untiled", "none")
BUFFERINGS = ("single", "double", "double-l3")
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
    p.add_argument(
        "--target",
        default="pulp-open",
        help="target platform: pulp-open or gap9 (default: pulp-open)",
    )
    p.add_argument(
        "--pass-pipeline",
        default=None,
        metavar="P",
        help="passes to run, xdsl-opt syntax (default: the pipeline that --tiling and "
        "--l1 describe, see `deeploy-mlir lower --help`)",
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
            help=f"{lv.upper()} budget in bytes (default: the target's)",
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
        "--rlimit",
        type=_positive("--rlimit"),
        default=None,
        metavar="N",
        help="Z3's resource limit per tile-select search, a count of solver steps that is the "
        "same on every machine and load (default: tile-select's, far above what the examples "
        "need); a search that reaches it keeps the best tiles found and is named in a note and "
        "in manifest.json. With --pass-pipeline, write tile-select{rlimit=N} instead",
    )
    p.add_argument(
        "--board",
        default=None,
        metavar="NAME|PATH",
        help="the board (siracusa, gap9_evk, pulp_slowram or a YAML file) whose capacities "
        "(the default budgets) and cycle numbers to use; default with --regime: the target's "
        "(siracusa for pulp-open, gap9_evk for gap9)",
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


def _force(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--force",
        action="store_true",
        help=f"replace {what} even if it is a directory deeploy-mlir did not write "
        "(everything in it is deleted; the current directory and the inputs' are still refused)",
    )


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="deeploy-mlir",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    lo = sub.add_parser(
        "lower",
        help="write the C project for a training model",
        description="Compile MODEL to a C project in OUT. Without --pass-pipeline the "
        "pipeline follows --tiling, --buffering, --weights-in-l3, --target and the budgets; "
        "for pulp-open's defaults it is: {pipeline}",
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
    bo = sub.add_parser(
        "board",
        help="check a board file and print it",
        description="Load BOARD (a shipped board's name, or a path to a YAML file), check "
        "every field, and print its cores, memory levels, DMA engines and kernel throughput.",
    )
    bo.add_argument("board", help="board name (siracusa, gap9_evk, pulp_slowram) or YAML path")
    bo.add_argument("--json", action="store_true", help="print the board as JSON")
    _test_parser(sub)
    from deeploy_mlir.sweep import add_parser as _sweep_parser

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


# --------------------------------------------------------------------------


@dataclass
class Compiled:
    model: object
    project: object
    data: dict[str, np.ndarray]
    #: wall-clock seconds per pass (for `report`; never in the IR or the project)
    seconds: dict[str, float] = field(default_factory=dict)


def _budgets(args: argparse.Namespace) -> dict[str, int]:
    if args.target not in TARGET_MEMORY:
        raise DeeployError(
            f"unknown target '{args.target}' (available: {', '.join(TARGET_MEMORY)})"
        )
    base = dict(TARGET_MEMORY[args.target])
    board = _board(args)
    if board is not None:  # the board's capacities are the default budgets
        base = {lv.lower(): n for lv, n in board.levels.items()}
    for lv in ("l1", "l2", "l3"):
        if getattr(args, lv) is not None:
            base[lv] = getattr(args, lv)
    # the cluster stacks live in L1 beside the arena: "l1" is the arena's share
    from deeploy_mlir.targets.stacks import l1_arena_budget, stack_reservation

    base["l1_stacks"] = stack_reservation()
    base["l1"] = l1_arena_budget(base["l1"])
    return base


def _board(args: argparse.Namespace) -> Board | None:
    """The board of --board, or the target's with --regime (None: neither)."""
    from deeploy_mlir.pipeline import TARGET_BOARDS
    from deeploy_mlir.targets.boards import load_board

    name = getattr(args, "board", None)
    if name is None and getattr(args, "regime", None) is None:
        return None
    return load_board(name or TARGET_BOARDS.get(args.target, "siracusa"))


def _regime_opts(args: argparse.Namespace) -> dict[str, Any]:
    """pipeline_for's memory-regime options ({} without --regime and --board)."""
    if getattr(args, "board", None) is None and getattr(args, "regime", None) is None:
        return {}
    if args.weights_in_l3 or args.home != "L2":
        raise DeeployError(
            "--regime/--board choose where tensors live: do not combine them with "
            "--weights-in-l3 or --home L3"
        )
    from deeploy_mlir.pipeline import TARGET_BOARDS

    return {
        "regime": args.regime or "auto",
        "board": args.board or TARGET_BOARDS.get(args.target, "siracusa"),
        "l3_budget": _budgets(args)["l3"],
    }


def _rlimit(args: argparse.Namespace) -> int | None:
    """--rlimit (None: tile-select's default); refused beside --pass-pipeline,
    whose tile-select carries its own."""
    rlimit = getattr(args, "rlimit", None)
    if rlimit is not None and args.pass_pipeline is not None:
        raise DeeployError(
            "--rlimit sets the default pipeline's tile-select limit: with --pass-pipeline, "
            "write tile-select{rlimit=N} in the pipeline instead"
        )
    return rlimit


def _pipeline_opts(args: argparse.Namespace) -> dict[str, Any]:
    """pipeline_for's options from the command line but the tiling and the L1
    budgets (target, buffering, L2, where weights and tensors live, rlimit,
    memory regime)."""
    return {
        "target": args.target,
        "buffering": args.buffering,
        "l2": _budgets(args)["l2"],
        "weights": "L3" if args.weights_in_l3 else "L2",
        "home": args.home,
        "rlimit": _rlimit(args),
        **_regime_opts(args),
    }


def search_notes(module: object) -> list[str]:
    """One line per search that stopped before proving its optimum: each
    tile-select op (as the pass listed them) and each exact arena plan."""
    from xdsl.dialects.builtin import ModuleOp

    from deeploy_mlir.dialects import training as T
    from deeploy_mlir.dialects.tiling import stopped_early

    assert isinstance(module, ModuleOp)
    notes = [
        f"note: tile-select: stopped before proving the optimum for {op} ({why})"
        for op, why in stopped_early(module) or []
    ]
    for lv in ("L1", "L2", "L3"):
        arena = T.arena_of(module, lv)
        if arena is not None and arena.is_proven is False:
            notes.append(
                f"note: arena-plan: stopped before proving the smallest {lv} arena (Z3 resource "
                "limit): the best plan found is used"
            )
    return notes


_PACKAGE = Path(__file__).resolve().parent


def _inputs(args: argparse.Namespace) -> list[Input]:
    """The files and directories the command reads (outputs may not replace them)."""
    board = getattr(args, "board", None)
    board_file = board if board and ("/" in board or board.endswith((".yaml", ".yml"))) else None
    return inputs_of(
        [
            ("the model", args.model),
            ("--data", getattr(args, "data", None)),
            ("--params", getattr(args, "params", None)),
            ("--board", board_file),
            ("deeploy-mlir's sources", _PACKAGE),
            ("deeploy-mlir's runtime sources", _PACKAGE.parent / "runtime_c"),
        ]
    )


def compile_model(args: argparse.Namespace, need_data: bool, notes: bool = True) -> Compiled:
    """Import, run the pipeline, and make the project. `notes`: print on stderr
    a line for each search that stopped before proving its optimum."""
    from deeploy_mlir.emitters.c import EmitOptions, Project
    from deeploy_mlir.frontend.data import check_minibatches, load_data, zero_data
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.interp.attrs import check_arenas
    from deeploy_mlir.pipeline import parse_pipeline, pipeline_for, run_pipeline

    budgets = _budgets(args)
    _rlimit(args)  # --rlimit beside --pass-pipeline fails here, before any work
    spec = args.pass_pipeline or pipeline_for(
        args.tiling, budgets["l1"], stacks=budgets["l1_stacks"], **_pipeline_opts(args)
    )
    parse_pipeline(spec)  # bad pipelines fail before any work
    from deeploy_mlir import progress

    progress.stage(f"import {args.model}")
    model = import_model(args.model, args.params)
    steps, accum = getattr(args, "steps", 1), getattr(args, "accum", 1)
    check_minibatches(model, steps, accum)  # before any array is made or read
    n = steps * accum
    if getattr(args, "feeds", None) is not None:  # arrays given by the caller (`test`)
        data = args.feeds(model)
    elif getattr(args, "data", None):
        data = load_data(args.data, model, n)
    elif need_data:
        raise DeeployError("--data is required")
    else:
        data = zero_data(model, n)
    module = model.module.clone()
    seconds: dict[str, float] = {}
    emit_ir = getattr(args, "emit_ir", None)
    try:
        run_pipeline(
            module,
            spec,
            verify_each=getattr(args, "verify_each", True),
            seconds=seconds,
            keep_before=emit_ir is not None,
        )
        check_arenas(module, budgets)
    except DeeployError as e:
        if emit_ir is not None:  # the IR that failed, for the user to look at
            name, ir = getattr(e, "ir_before", ("", module))
            try:
                write_file(Path(emit_ir), str(ir) + "\n")
            except OSError as w:
                raise DeeployError(f"--emit-ir {emit_ir}: cannot write it ({w.strerror})") from None
            where = f"before pass {name}" if name else "after the pipeline"
            print(f"deeploy-mlir: note: wrote the IR {where} to {emit_ir}", file=sys.stderr)
        raise
    if notes:
        for line in search_notes(module):
            print(line, file=sys.stderr)
    progress.stage("C emission")
    opts = EmitOptions(
        target=args.target,
        steps=steps,
        accum=accum,
        lr=getattr(args, "lr", 0.01),
        l1_as_l2=args.l1_as_l2,
    )
    project = Project(module, model.params, data, opts)
    progress.done()
    return Compiled(model, project, data, seconds)


def cmd_lower(args: argparse.Namespace) -> int:
    from deeploy_mlir.emitters.c import write_project

    inputs = _inputs(args)
    target = check_dir_output(args.output, "-o", inputs, force=args.force)
    ir = None
    if args.emit_ir is not None:
        ir = check_file_output(args.emit_ir, "--emit-ir", inputs, within=target)
    out = Path(args.output)
    c = compile_model(args, need_data=False)
    write_project(c.project, target, force=args.force)  # type: ignore[arg-type]
    if ir is not None:
        write_file(ir, str(c.project.module) + "\n")  # type: ignore[attr-defined]
    if not args.data:
        print("note: no --data given: the harness trains on zero-filled inputs", file=sys.stderr)
    print(f"wrote {out}/ ({args.target})")
    return 0


#: a float word of the harness: its bits in hex, then (optionally) its decimal
_HEX = re.compile(r"^([0-9a-f]{8})(?:\([^()\s]*\))?$")


def parse_run_output(text: str) -> tuple[dict[str, list[list[float]]], dict[str, np.ndarray]]:
    """OUT and PARAM lines of the harness -> outputs per mini-batch, final params."""
    outs: dict[str, list[list[float]]] = {}
    params: dict[str, np.ndarray] = {}
    done = False
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "OUT" and len(parts) >= 4:
            outs.setdefault(parts[3], []).append(_floats(parts[4:]).tolist())
        elif parts[0] == "OUTI" and len(parts) >= 4:  # integer outputs, in decimal
            outs.setdefault(parts[3], []).append([int(w) for w in parts[4:]])
        elif parts[0] == "PARAM" and len(parts) >= 2:
            params[parts[1]] = _floats(parts[2:])
        elif parts[0] == "DONE":
            done = True
    if not done:
        raise RuntimeError("the program did not finish (no DONE line)")
    return outs, params


def _floats(words: Sequence[str]) -> np.ndarray:
    import numpy as np

    bits = []
    for w in words:
        m = _HEX.match(w)
        assert m is not None, w
        bits.append(int(m.group(1), 16))
    return np.array(bits, dtype=np.uint32).view(np.float32)


def _gvsoc_check(args: argparse.Namespace) -> None:
    """--on gvsoc: the GVSoC target and setup exist (before any compiling);
    otherwise no --gvsoc-* option was given."""
    from deeploy_mlir.targets.gvsoc import DEFAULT_TIMEOUT, find_setup, gvsoc_target

    if args.on != "gvsoc":
        if args.gvsoc_target is not None or args.gvsoc_timeout != DEFAULT_TIMEOUT:
            raise DeeployError("--gvsoc-target and --gvsoc-timeout need --on gvsoc")
        return
    args.gvsoc_target = gvsoc_target(args.target, args.gvsoc_target)
    args.gvsoc_setup = find_setup()


def _gvsoc_build_and_run(args: argparse.Namespace, project_dir: Path) -> str:
    from deeploy_mlir.targets.gvsoc import build, run

    elf = build(project_dir, args.gvsoc_target, args.gvsoc_setup, args.l1_as_l2)
    return run(elf, args.gvsoc_target, args.gvsoc_setup, args.gvsoc_timeout)


def build_and_run(project_dir: Path, on: str = "host", target: str = "pulp-open") -> str:
    """Build the project with its Makefile and run it; returns its stdout.
    `gvsoc`: on the GVSoC model of `target` (docs/gvsoc.md), default limits."""
    if on == "gvsoc":
        from deeploy_mlir.targets import gvsoc

        model, setup = gvsoc.gvsoc_target(target, None), gvsoc.find_setup()
        return gvsoc.run(gvsoc.build(project_dir, model, setup), model, setup)
    tools = {
        "host": [os.environ.get("CC", "gcc")],
        "qemu": ["riscv64-unknown-elf-gcc", "qemu-system-riscv32"],
    }[on]
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        hint = (
            "apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc"
            if on == "qemu"
            else "install gcc (or set CC)"
        )
        raise DeeployError(f"--on {on} needs {', '.join(missing)}: {hint}")
    build = "host" if on == "host" else "rv32"
    from deeploy_mlir import progress

    progress.stage(f"C build (make {build})")
    r = subprocess.run(
        ["make", "-s", "-C", str(project_dir), build], capture_output=True, text=True
    )
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).splitlines()
        first = next((ln.strip() for ln in lines if "error" in ln), lines[-1] if lines else "")
        raise RuntimeError(f"building the generated C failed: {first}\n{r.stdout}{r.stderr}")
    if on == "host":
        cmd = [str(project_dir / "build" / "host" / "network")]
    else:
        from deeploy_mlir.targets.qemu import qemu_command

        cmd = qemu_command(project_dir / "build" / "rv32" / "network.elf")
    if on == "host" and progress.active() and shutil.which("stdbuf"):
        cmd = ["stdbuf", "-oL", *cmd]  # its lines as they come, for the progress display
    progress.stage(f"training ({on})")
    trained = [0]

    def on_line(line: str) -> None:
        if line.startswith("BENCH train "):
            trained[0] += 1
            progress.update(f"training ({on}): mini-batch {trained[0]}")
        elif line.startswith("BENCH optimizer "):
            progress.update(f"training ({on}): optimizer step {line.split()[2]} done")

    r = progress.run_lines(cmd, 3600, on_line)
    progress.done()
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).splitlines()
        last = lines[-1].strip() if lines else ""
        raise RuntimeError(
            f"the generated program failed ({r.returncode}): {last}\n{r.stdout}{r.stderr}"
        )
    # QEMU's semihosting console writes the program's printf to stderr; the
    # host emulation writes its DMA counters there at exit
    return r.stdout + r.stderr


_DMA_LINE = re.compile(r"^dm-host: dma (L\d->L\d) transfers=(\d+) bytes=(\d+)$")


def parse_dma_counters(text: str) -> dict[str, dict[str, int]]:
    """The host emulation's exit counters: {"L2->L1": {"transfers", "bytes"}, ...}."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        m = _DMA_LINE.match(line.strip())
        if m:
            out[m.group(1)] = {"transfers": int(m.group(2)), "bytes": int(m.group(3))}
    return out


def parse_bench(text: str) -> dict[str, list[int]]:
    """BENCH lines -> {"train": [...per mini-batch], "optimizer": [...per step]}."""
    out: dict[str, list[int]] = {"train": [], "optimizer": []}
    for line in text.splitlines():
        parts = line.split()
        if parts[:2] == ["BENCH", "train"]:
            out["train"].append(int(parts[4]))
        elif parts[:2] == ["BENCH", "optimizer"]:
            out["optimizer"].append(int(parts[3]))
    return out


@contextlib.contextmanager
def _project_dir(keep: Path | None, force: bool) -> Iterator[Path]:
    """Where to write, build and run a project: a hidden directory beside
    `keep` that replaces it when the block succeeds, else a temporary one."""
    if keep is not None:
        with staged_dir(keep, force=force) as d:
            yield d
        return
    with tempfile.TemporaryDirectory(prefix="deeploy-mlir-") as tmp:
        yield Path(tmp)


def cmd_run(args: argparse.Namespace) -> int:
    from deeploy_mlir.emitters.c import write_project_files
    from deeploy_mlir.interp.attrs import loss_output_name

    _gvsoc_check(args)
    inputs = _inputs(args)
    keep = (
        check_dir_output(args.keep, "--keep", inputs, force=args.force)
        if args.keep is not None
        else None
    )
    out_json = (
        check_file_output(args.json, "--json", inputs, within=keep)
        if args.json is not None
        else None
    )
    c = compile_model(args, need_data=True)
    loss_name = loss_output_name(c.model.module)  # type: ignore[attr-defined]
    with _project_dir(keep, args.force) as out:
        write_project_files(c.project, out)  # type: ignore[arg-type]
        if args.on == "gvsoc":
            stdout = _gvsoc_build_and_run(args, out)
        else:
            stdout = build_and_run(out, args.on)
        outs, params = parse_run_output(stdout)  # a run that did not finish keeps nothing
    losses = [v[0] for v in outs.get(loss_name, [])] if loss_name else []
    for i, loss in enumerate(losses):
        print(f"step {i // args.accum} mini-batch {i % args.accum}: loss {loss:.6f}")
    if out_json is not None:
        shapes = {k: v.shape for k, v in c.model.params.items()}  # type: ignore[attr-defined]
        doc: dict[str, object] = {
            "losses": losses,
            "params": {k: v.reshape(shapes[k]).tolist() for k, v in params.items()},
        }
        dma_counts = parse_dma_counters(stdout)
        if dma_counts:
            doc["dma"] = dma_counts
        if args.on == "qemu":
            bench = parse_bench(stdout)
            doc["bench"] = {
                "train_instret": bench["train"],
                "optimizer_instret": bench["optimizer"],
            }
        elif args.on == "gvsoc":
            bench = parse_bench(stdout)
            doc["bench"] = {
                "train_cycles": bench["train"],
                "optimizer_cycles": bench["optimizer"],
            }
        write_file(out_json, json.dumps(doc) + "\n")
    return 0


def _inplace_off(args: argparse.Namespace) -> dict[str, Any]:
    """The manifest of the same compile with in-place reuse off (`report`)."""
    from deeploy_mlir import progress
    from deeploy_mlir.pipeline import pipeline_for

    args.pass_pipeline = pipeline_for(
        args.tiling,
        _budgets(args)["l1"],
        stacks=_budgets(args)["l1_stacks"],
        inplace=False,
        **_pipeline_opts(args),
    )
    args.rlimit = None  # in the pipeline now
    progress.stage("compile again without in-place reuse")
    with progress.nested():
        c = compile_model(args, need_data=False, notes=False)
    return c.project.manifest()  # type: ignore[attr-defined,no-any-return]


def _print_report(man: dict[str, Any], off: dict[str, Any] | None, solver_ms: int | None) -> None:
    """`report`'s text: arenas against their bounds, tile selection, regime, largest buffers."""
    head = f"{'level':6} {'arena (B)':>10} {'bound (B)':>10} {'ratio':>6}"
    print(head + (f" {'in-place off (B)':>17}" if off else ""))
    for lv, m in man["memory"].items():
        ratio = m["arena_bytes"] / m["bound_bytes"] if m["bound_bytes"] else 1.0
        line = f"{lv:6} {m['arena_bytes']:>10} {m['bound_bytes']:>10} {ratio:>6.3f}"
        if off:
            line += f" {off['memory'][lv]['arena_bytes']:>17}"
        print(line)
    st = man["cluster_stacks"]
    print(
        f"L1 also holds the cluster stacks: {st['l1_bytes']} B ({st['stack_size']} for the "
        f"cluster controller, {st['cores'] - 1} x {st['slave_stack_size']} for the other cores)"
    )
    if solver_ms is not None:
        print(
            f"\ntile selection: {solver_ms} ms (Z3), {man['tiling']['stopped_early']} op(s) "
            "stopped before proving the optimum (resource limit)"
        )
    print(
        f"\nregime: {man['regime']}; footprint (B): "
        + ", ".join(f"{k} {v}" for k, v in man["footprint"].items())
    )
    print("\nlargest buffers:")
    for b in sorted(man["buffers"], key=lambda b: -b["bytes"])[:10]:
        print(f"  {b['bytes']:>10} B  {b['level']} @{b['offset']:<8} {b['kind']:<15} {b['name']}")


def cmd_report(args: argparse.Namespace) -> int:
    from deeploy_mlir.memory.report import check_plot_path, plot_report, print_regime_table

    plot = None
    if args.plot is not None:
        check_plot_path(args.plot)
        plot = check_file_output(args.plot, "--plot", _inputs(args))
    if plot is not None and args.board is None and args.regime is None:
        args.regime = "auto"  # the plot models the target's board
    board = _board(args)
    custom = args.pass_pipeline is not None
    c = compile_model(args, need_data=False)
    man = c.project.manifest()  # type: ignore[attr-defined]
    doc: dict[str, object] = {
        "memory": man["memory"],
        "regime": man["regime"],
        "footprint": man["footprint"],
        "buffers": man["buffers"],
    }
    # timed here, around the pass (the IR and the project hold no timings)
    solver_ms = round(c.seconds.get("tile-select", 0.0) * 1000) if "tiling" in man else None
    if solver_ms is not None:
        doc["tiling"] = {**man["tiling"], "solver_ms": solver_ms}
    off = None
    if not custom:
        off = _inplace_off(args)
        doc["inplace_off"] = {"memory": off["memory"]}
    rep = None
    if board is not None:
        from deeploy_mlir import progress

        progress.stage(f"model every regime and schedule on {board.name}")
        with progress.nested():
            rep = _regime_report(args, c, board, man["regime"])
        progress.done()
    if rep is not None:
        doc["board"] = rep.board.name
        doc["needs"] = {r: {**n, "fits": rep.fits[r]} for r, n in rep.needs.items()}
        doc["regimes"] = rep.regimes_doc()
        doc["schedules"] = rep.schedules_doc()
        if plot is not None:
            shown = man["regime"] if man["regime"] in rep.costs else next(iter(rep.costs), None)
            if shown is not None:
                with staged_file(plot) as tmp:
                    plot_report(
                        tmp,
                        rep.costs[shown]["double"],
                        f"{Path(args.model).name} on {rep.board.name}, {shown} regime, "
                        "double buffering",
                    )
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    _print_report(man, off, solver_ms)
    if rep is not None:
        print_regime_table(rep)
    if plot is not None:
        print(f"\nwrote {args.plot}")
    return 0


def _regime_report(
    args: argparse.Namespace, c: Compiled, board: Board, chosen: str
) -> RegimeReport:
    """Every regime the board holds x single/double/untiled, modeled on `board`."""
    from deeploy_mlir.memory.report import bufferize, compiler, regime_report

    budgets = _budgets(args)
    model = c.model.module  # type: ignore[attr-defined]
    compile_ = compiler(
        model,
        _regime_opts(args)["board"],
        args.target,
        budgets["l1"],
        budgets["l2"],
        budgets["l3"],
    )
    return regime_report(bufferize(model), board, budgets["l2"], budgets["l3"], chosen, compile_)


def _compiles(args: argparse.Namespace, tiling: str, l1: int) -> bool:
    return _why_not(args, tiling, l1) is None


def _why_not(args: argparse.Namespace, tiling: str, l1: int) -> str | None:
    """Why the model does not compile with `tiling` at `l1` bytes (None: it does)."""
    from deeploy_mlir.interp.attrs import arena_sizes
    from deeploy_mlir.pipeline import pipeline_for, run_pipeline

    module = args._model.module.clone()
    try:
        run_pipeline(
            module,
            pipeline_for(tiling, l1, **_pipeline_opts(args)),
            verify_each=args.verify_each,
        )
    except DeeployError as e:
        return str(e)
    need = arena_sizes(module).get("L1", 0)
    return None if need <= l1 else f"the L1 arena needs {need} bytes"


def cmd_minimal_l1(args: argparse.Namespace) -> int:
    """Smallest L1 budget (bytes) at which the model compiles, by bisection:
    compiling is monotone in the budget (a tile that fits also fits more).
    The bisection is over the arena's budget; the cluster stacks are added."""
    from deeploy_mlir import progress
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.targets.stacks import stack_reservation

    progress.stage(f"import {args.model}")
    args._model = import_model(args.model, args.params)
    result: dict[str, int | None] = {}
    why: str | None = None
    for tiling in ("tiled", "untiled"):
        progress.stage(f"bisect the L1 budget, {tiling}")
        hi = _budgets(args)["l2"]
        with progress.nested():
            why = _why_not(args, tiling, hi)
        if why is not None:
            result[tiling] = None
            continue
        lo = 0  # does not compile
        while hi - lo > 4:
            mid = (lo + hi) // 2 // 4 * 4 or 4
            if mid <= lo:
                break
            progress.update(f"bisect the L1 budget, {tiling}: {mid} bytes?")
            with progress.nested():
                fits = _compiles(args, tiling, mid)
            if fits:
                hi = mid
            else:
                lo = mid
        result[tiling] = hi + stack_reservation()
    if all(b is None for b in result.values()):
        raise DeeployError(
            f"minimal-l1: the model compiles with no L1 budget up to the L2 budget "
            f"({_budgets(args)['l2']} bytes), tiled or untiled: {why}"
        )
    if args.json:
        print(json.dumps(result))
    else:
        print(f"smallest L1 budget, {args.buffering} buffering:")
        for tiling, b in result.items():
            print(f"  {tiling:8} {b if b is not None else 'does not fit L2'} bytes")
    return 0


def cmd_board(args: argparse.Namespace) -> int:
    """Check a board file (or a shipped board) and print what it says."""
    from dataclasses import asdict

    from deeploy_mlir.targets.boards import load_board

    b = load_board(args.board)
    if args.json:
        print(json.dumps(asdict(b), indent=2))
        return 0
    print(f"board {b.name}: {b.cores} cores at {b.clock_hz / 1e6:g} MHz")
    for lv, size in b.levels.items():
        print(f"  {lv}: {size} bytes")
    for e in b.engines.values():
        shared = ", one transfer per request" if e.shared_request else ""
        print(
            f"  engine {e.name}: {e.hop[0]} <-> {e.hop[1]}, {e.bandwidth:g} B/cycle, "
            f"{e.setup} cycles setup, {e.issue} cycles issue, rank {e.rank}{shared}"
        )
    for k, t in b.kernels.items():
        print(
            f"  kernel {k}: {t.macs_per_cycle_per_core:g} MAC/cycle/core, {t.call} cycles per call"
        )
    return 0


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
    te.add_argument(
        "--on",
        choices=("host", "gvsoc"),
        default="host",
        help="host: the PMSIS emulation (default); gvsoc: the 8-core cluster on the GVSoC "
        "simulator (docs/gvsoc.md)",
    )
    _gvsoc_opts(te)


def cmd_test(args: argparse.Namespace) -> int:
    """`test DIR`: one step of a Deeploy test folder on the host emulation."""
    import numpy as np

    from deeploy_mlir.emitters.c import write_project_files
    from deeploy_mlir.testfolder import check_outputs, compare, feeds, load_folder

    keep = None
    if args.keep is not None:
        keep = check_dir_output(args.keep, "--keep", _inputs(args), force=args.force)
    folder = load_folder(args.model)
    unread: list[str] = []

    def folder_feeds(model: object) -> dict[str, np.ndarray]:
        data, rest = feeds(folder, model)  # type: ignore[arg-type]
        unread.extend(rest)
        return data

    args.model, args.feeds = str(folder.network), folder_feeds
    args.steps, args.accum = 1, 1
    _gvsoc_check(args)
    c = compile_model(args, need_data=True)
    if unread:
        print(f"note: inputs.npz arrays not read (beyond the graph's inputs): {', '.join(unread)}")
    sources = check_outputs(folder, c.model)  # type: ignore[arg-type]
    with _project_dir(keep, args.force) as out:
        write_project_files(c.project, out)  # type: ignore[arg-type]
        if args.on == "gvsoc":
            stdout = _gvsoc_build_and_run(args, out)
        else:
            stdout = build_and_run(out, "host")
        outs, params = parse_run_output(stdout)
    got: dict[str, np.ndarray] = {}
    for src in sources:
        if src.param:
            got[src.name] = params[src.key]
        elif src.key in outs:
            got[src.name] = np.asarray(outs[src.key][0])
        else:
            raise RuntimeError(f"the harness printed no values for graph output '{src.name}'")
    results = compare(folder, [src.name for src in sources], got, args.atol)
    for r in results:
        verdict = "ok" if r.ok else "MISMATCH"
        print(
            f"output {r.index} '{r.name}' {list(r.shape)}: largest |difference| "
            f"{r.max_diff:.3g}  {verdict}"
        )
    n_ok = sum(r.ok for r in results)
    diffs = [r.max_diff for r in results]
    worst = float("nan") if any(np.isnan(diffs)) else max(diffs)
    print(
        f"{folder.path}: {n_ok}/{len(results)} outputs match (atol {args.atol:g}, largest "
        f"|difference| {worst:.3g})"
    )
    return 0 if n_ok == len(results) else 1


COMMANDS = {
    "lower": cmd_lower,
    "run": cmd_run,
    "report": cmd_report,
    "minimal-l1": cmd_minimal_l1,
    "board": cmd_board,
    "test": cmd_test,
    "sweep": lambda args: _sweep(args),
}

#: the commands that show progress on a terminal
LONG_COMMANDS = ("lower", "run", "report", "minimal-l1", "test", "sweep")


def _sweep(args: argparse.Namespace) -> int:
    from deeploy_mlir.sweep import cmd_sweep

    return cmd_sweep(args)


_INTERRUPTED: list[bool] = []


def _ignore_unraisable(unraisable: object) -> None:
    pass


def _on_sigint(signum: int, frame: object) -> None:
    """Ctrl-C: remembered (a C extension being imported, numpy's, turns the
    KeyboardInterrupt into an ImportError), raised once, ignored after."""
    if not _INTERRUPTED:
        _INTERRUPTED.append(True)
        raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    import signal

    _INTERRUPTED.clear()  # main may run more than once in a process (tests)
    previous = None
    with contextlib.suppress(ValueError):  # ValueError: not the main thread
        previous = signal.signal(signal.SIGINT, _on_sigint)
    try:
        code = _main(argv)
    finally:
        if previous is not None:  # the caller's handler again (main called in-process)
            signal.signal(signal.SIGINT, previous)
    if _INTERRUPTED and code != 130:  # a Ctrl-C that something swallowed
        print("deeploy-mlir: interrupted", file=sys.stderr)
        return 130
    return code


def _main(argv: Sequence[str] | None = None) -> int:
    import warnings

    # a numeric warning raised in our code (an overflow, a NaN) is an error, never a stray line
    warnings.filterwarnings("error", category=RuntimeWarning, module=r"deeploy_mlir\.")
    try:
        args = build_parser().parse_args(argv)
        from deeploy_mlir import progress

        if getattr(args, "pass_pipeline", None) is not None and not args.pass_pipeline.strip():
            raise DeeployError("--pass-pipeline is empty (leave it out for the default pipeline)")
        if args.command in LONG_COMMANDS and progress.wanted(getattr(args, "quiet", False)):
            progress.enable(args.command)
        try:
            return COMMANDS[args.command](args)
        finally:
            progress.disable()
    except DeeployError as e:
        print(f"deeploy-mlir: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback (outputs are cleaned up)
        # a half-built object (a z3.Context stopped in its __init__) fails in
        # its __del__ when the traceback is freed: not reported after Ctrl-C
        sys.unraisablehook = _ignore_unraisable
        print("deeploy-mlir: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug of ours: one line, unless debugging
        if _INTERRUPTED:  # an interrupted import fails with another exception
            sys.unraisablehook = _ignore_unraisable
            print("deeploy-mlir: interrupted", file=sys.stderr)
            return 130
        if os.environ.get("DEEPLOY_MLIR_DEBUG"):
            raise
        first = str(e).splitlines()[0] if str(e) else ""
        print(
            f"deeploy-mlir: internal error: {type(e).__name__}: {first} "
            "(set DEEPLOY_MLIR_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def entry() -> None:
    """The `deeploy-mlir` command. After a Ctrl-C the process ends with
    os._exit: the interpreter would otherwise end an interrupted run by
    killing itself with SIGINT when the interrupt reached a nested PyRun call
    (a C extension being imported), whatever main returned."""
    code = main()
    if _INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
