"""deeploy-mlir: compile ONNX training graphs to C for PULP targets, and run them.

Commands:
  lower   MODEL -o OUT       write the C project
  run     MODEL --data D     lower, build on the host emulation, train, print losses
  report  MODEL              arena sizes and lower bounds per memory level
  test    DIR                run a Deeploy test folder (network.onnx, inputs.npz, outputs.npz)

Errors in the input (files, graphs, data, options) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from deeploy_mlir.errors import DeeployError

if TYPE_CHECKING:
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


def _positive(kind: str):
    def conv(s: str) -> int:
        try:
            v = int(s, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be an integer, got '{s}'") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{kind} must be positive, got {v}")
        return v

    return conv


def _lr(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"learning rate must be a number, got '{s}'") from None
    if not np.isfinite(v):
        raise argparse.ArgumentTypeError(f"learning rate must be finite, got {s}")
    return v


def _common(p: argparse.ArgumentParser) -> None:
    from deeploy_mlir.passes.memory_regime import REGIMES
    from deeploy_mlir.pipeline import BUFFERINGS, TILINGS

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
        "--params",
        default=None,
        metavar="PARAMS.npz",
        help="initial parameters by name (default: the checkpoint, else the graph's initializers)",
    )
    for lv in ("l1", "l2", "l3"):
        p.add_argument(
            f"--{lv}",
            type=_positive(f"--{lv}"),
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


def build_parser() -> argparse.ArgumentParser:
    from deeploy_mlir.pipeline import pipeline_for

    ap = _Parser(
        prog="deeploy-mlir",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    lo = sub.add_parser(
        "lower",
        help="write the C project for a training model",
        description="Compile MODEL to a C project in OUT. Without --pass-pipeline the "
        "pipeline follows --tiling, --buffering, --weights-in-l3, --target and the budgets; "
        f"for pulp-open's defaults it is: {pipeline_for(l2=TARGET_MEMORY['pulp-open']['l2'])}",
    )
    _common(lo)
    lo.add_argument("-o", "--output", required=True, metavar="OUT", help="output directory")
    _train_opts(lo, data_required=False)
    lo.add_argument(
        "--emit-ir",
        metavar="FILE",
        default=None,
        help="also write the IR after the pipeline to FILE",
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
        help='write {"losses": [...], "params": {name: values}}',
    )
    ru.add_argument("--keep", metavar="DIR", default=None, help="keep the generated project in DIR")
    ru.add_argument(
        "--on",
        choices=("host", "qemu"),
        default="host",
        help="host: build with gcc against the PMSIS emulation (default); qemu: build for one "
        "RV32IMF core and run under qemu-system-riscv32 (BENCH lines count instructions retired)",
    )
    ml = sub.add_parser(
        "minimal-l1",
        help="the smallest L1 budget at which the model compiles, tiled and untiled",
        description="Bisect the L1 budget: the smallest number of bytes at which MODEL compiles "
        "with Z3-chosen tiles, and with one tile per tensor (untiled).",
    )
    _common(ml)
    ml.add_argument("--json", action="store_true", help='print {"tiled": B, "untiled": B}')
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
    return ap


# --------------------------------------------------------------------------


@dataclass
class Compiled:
    model: object
    project: object
    data: dict[str, np.ndarray]


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


def compile_model(args: argparse.Namespace, need_data: bool) -> Compiled:
    from deeploy_mlir.emitters.c import EmitOptions, Project
    from deeploy_mlir.frontend.data import load_data, zero_data
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.interp.interpreter import check_arenas
    from deeploy_mlir.pipeline import parse_pipeline, pipeline_for, run_pipeline

    budgets = _budgets(args)
    spec = args.pass_pipeline or pipeline_for(
        args.tiling,
        budgets["l1"],
        stacks=budgets["l1_stacks"],
        target=args.target,
        buffering=args.buffering,
        l2=budgets["l2"],
        weights="L3" if args.weights_in_l3 else "L2",
        home=args.home,
        **_regime_opts(args),
    )
    parse_pipeline(spec)  # bad pipelines fail before any work
    model = import_model(args.model, args.params)
    steps, accum = getattr(args, "steps", 1), getattr(args, "accum", 1)
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
    run_pipeline(module, spec, verify_each=getattr(args, "verify_each", True))
    check_arenas(module, budgets)
    opts = EmitOptions(
        target=args.target,
        steps=steps,
        accum=accum,
        lr=getattr(args, "lr", 0.01),
        l1_as_l2=args.l1_as_l2,
    )
    project = Project(module, model.params, data, opts)
    return Compiled(model, project, data)


def cmd_lower(args: argparse.Namespace) -> int:
    from deeploy_mlir.emitters.c import write_project

    c = compile_model(args, need_data=False)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise DeeployError(f"{out}: exists and is not a directory")
    write_project(c.project, out)  # type: ignore[arg-type]
    if args.emit_ir:
        Path(args.emit_ir).write_text(str(c.project.module) + "\n")  # type: ignore[attr-defined]
    if not args.data:
        print("note: no --data given: the harness trains on zero-filled inputs", file=sys.stderr)
    print(f"wrote {out}/ ({args.target})")
    return 0


_HEX = re.compile(r"^[0-9a-f]{8}$")


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
    assert all(_HEX.match(w) for w in words), words
    return np.array([int(w, 16) for w in words], dtype=np.uint32).view(np.float32)


def build_and_run(project_dir: Path, on: str = "host") -> str:
    """Build the project with its Makefile and run it; returns its stdout."""
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
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
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


def cmd_run(args: argparse.Namespace) -> int:
    from deeploy_mlir.emitters.c import write_project
    from deeploy_mlir.interp.interpreter import loss_output_name

    c = compile_model(args, need_data=True)
    loss_name = loss_output_name(c.model.module)  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory(prefix="deeploy-mlir-") as tmp:
        out = Path(args.keep) if args.keep else Path(tmp) / "project"
        write_project(c.project, out)  # type: ignore[arg-type]
        stdout = build_and_run(out, args.on)
    outs, params = parse_run_output(stdout)
    losses = [v[0] for v in outs.get(loss_name, [])] if loss_name else []
    for i, loss in enumerate(losses):
        print(f"step {i // args.accum} mini-batch {i % args.accum}: loss {loss:.6f}")
    if args.json:
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
        Path(args.json).write_text(json.dumps(doc) + "\n")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from deeploy_mlir.memory.report import check_plot_path, plot_report, print_regime_table
    from deeploy_mlir.pipeline import pipeline_for

    plot = check_plot_path(args.plot) if args.plot else None
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
    solver_ms = c.project.solver_ms()  # type: ignore[attr-defined]
    if solver_ms is not None:
        doc["tiling"] = {**man["tiling"], "solver_ms": solver_ms}
    off = None
    if not custom:
        args.pass_pipeline = pipeline_for(
            args.tiling,
            _budgets(args)["l1"],
            stacks=_budgets(args)["l1_stacks"],
            inplace=False,
            target=args.target,
            buffering=args.buffering,
            l2=_budgets(args)["l2"],
            weights="L3" if args.weights_in_l3 else "L2",
            home=args.home,
            **_regime_opts(args),
        )
        off = compile_model(args, need_data=False).project.manifest()  # type: ignore[attr-defined]
        doc["inplace_off"] = {"memory": off["memory"]}
    rep = _regime_report(args, c, board, man["regime"]) if board is not None else None
    if rep is not None:
        doc["board"] = rep.board.name
        doc["needs"] = {r: {**n, "fits": rep.fits[r]} for r, n in rep.needs.items()}
        doc["regimes"] = rep.regimes_doc()
        doc["schedules"] = rep.schedules_doc()
        if plot is not None:
            chosen = rep.costs.get(man["regime"]) or next(iter(rep.costs.values()), None)
            if chosen is not None:
                plot_report(plot, chosen["double"], f"{Path(args.model).name} on {rep.board.name}")
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
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
            "stopped early at the time limit"
        )
    print(
        f"\nregime: {man['regime']}; footprint (B): "
        + ", ".join(f"{k} {v}" for k, v in man["footprint"].items())
    )
    print("\nlargest buffers:")
    for b in sorted(man["buffers"], key=lambda b: -b["bytes"])[:10]:
        print(f"  {b['bytes']:>10} B  {b['level']} @{b['offset']:<8} {b['kind']:<15} {b['name']}")
    if rep is not None:
        print_regime_table(rep)
    if plot is not None:
        print(f"\nwrote {plot}")
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
    from deeploy_mlir.interp.interpreter import arena_sizes
    from deeploy_mlir.pipeline import pipeline_for, run_pipeline

    module = args._model.module.clone()
    try:
        run_pipeline(
            module,
            pipeline_for(
                tiling,
                l1,
                target=args.target,
                buffering=args.buffering,
                l2=_budgets(args)["l2"],
                weights="L3" if args.weights_in_l3 else "L2",
                home=args.home,
                **_regime_opts(args),
            ),
            verify_each=args.verify_each,
        )
    except DeeployError:
        return False
    return arena_sizes(module).get("L1", 0) <= l1


def cmd_minimal_l1(args: argparse.Namespace) -> int:
    """Smallest L1 budget (bytes) at which the model compiles, by bisection:
    compiling is monotone in the budget (a tile that fits also fits more).
    The bisection is over the arena's budget; the cluster stacks are added."""
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.targets.stacks import stack_reservation

    args._model = import_model(args.model, args.params)
    result: dict[str, int | None] = {}
    for tiling in ("tiled", "untiled"):
        hi = _budgets(args)["l2"]
        if not _compiles(args, tiling, hi):
            result[tiling] = None
            continue
        lo = 0  # does not compile
        while hi - lo > 4:
            mid = (lo + hi) // 2 // 4 * 4 or 4
            if mid <= lo:
                break
            if _compiles(args, tiling, mid):
                hi = mid
            else:
                lo = mid
        result[tiling] = hi + stack_reservation()
    if args.json:
        print(json.dumps(result))
    else:
        for tiling, b in result.items():
            print(f"{tiling:8} {b if b is not None else 'does not fit L2'} bytes")
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
            f"{e.setup} cycles setup, rank {e.rank}{shared}"
        )
    for k, t in b.kernels.items():
        print(f"  kernel {k}: {t.macs_per_cycle_per_core:g} MAC/cycle/core")
    return 0


def _atol(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--atol must be a number, got '{s}'") from None
    if not np.isfinite(v) or v < 0:
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
    te.add_argument("--keep", metavar="OUT", default=None, help="keep the generated project in OUT")


def cmd_test(args: argparse.Namespace) -> int:
    """`test DIR`: one step of a Deeploy test folder on the host emulation."""
    from deeploy_mlir.emitters.c import write_project
    from deeploy_mlir.testfolder import check_outputs, compare, feeds, load_folder

    folder = load_folder(args.model)
    unread: list[str] = []

    def folder_feeds(model: object) -> dict[str, np.ndarray]:
        data, rest = feeds(folder, model)  # type: ignore[arg-type]
        unread.extend(rest)
        return data

    args.model, args.feeds = str(folder.network), folder_feeds
    args.steps, args.accum = 1, 1
    c = compile_model(args, need_data=True)
    if unread:
        print(f"note: inputs.npz arrays not read (beyond the graph's inputs): {', '.join(unread)}")
    sources = check_outputs(folder, c.model)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory(prefix="deeploy-mlir-") as tmp:
        out = Path(args.keep) if args.keep else Path(tmp) / "project"
        write_project(c.project, out)  # type: ignore[arg-type]
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
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except DeeployError as e:
        print(f"deeploy-mlir: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug of ours: one line, unless debugging
        if os.environ.get("DEEPLOY_MLIR_DEBUG"):
            raise
        first = str(e).splitlines()[0] if str(e) else ""
        print(
            f"deeploy-mlir: internal error: {type(e).__name__}: {first} "
            "(set DEEPLOY_MLIR_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
