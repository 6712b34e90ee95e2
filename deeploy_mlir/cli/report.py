"""`report` (arenas against their bounds, the regimes and schedules modeled on
a board), `minimal-l1` (the smallest L1 budget that compiles) and `board`."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deeploy_mlir.cli.compile import Compiled, compile_model
from deeploy_mlir.cli.options import board_of, config_of, inputs
from deeploy_mlir.config import CompileConfig
from deeploy_mlir.errors import DeeployError, L1BudgetError
from deeploy_mlir.outputs import check_file_output, staged_file

if TYPE_CHECKING:
    from deeploy_mlir.memory.report import RegimeReport
    from deeploy_mlir.targets.boards import Board


def _inplace_off(args: argparse.Namespace, cfg: CompileConfig) -> dict[str, Any]:
    """`report`'s `inplace_off`: the memory of the same compile with in-place
    reuse off, or, where that compile does not fit the budgets that the one
    with in-place reuse fits (an output in place of an input needs no buffer
    of its own; without reuse it does), `memory` None and the reason."""
    from deeploy_mlir import progress

    progress.stage("compile again without in-place reuse")
    try:
        with progress.nested():
            c = compile_model(
                args, need_data=False, notes=False, cfg=dataclasses.replace(cfg, inplace=False)
            )
    except DeeployError as e:
        return {"memory": None, "error": str(e)}
    return {"memory": c.project.manifest()["memory"]}  # type: ignore[attr-defined]


def _print_report(man: dict[str, Any], off: dict[str, Any] | None, solver_ms: int | None) -> None:
    """`report`'s text: arenas against their bounds, tile selection, regime, largest buffers."""
    head = f"{'level':6} {'arena (B)':>10} {'bound (B)':>10} {'ratio':>6}"
    print(head + (f" {'in-place off (B)':>17}" if off else ""))
    for lv, m in man["memory"].items():
        ratio = m["arena_bytes"] / m["bound_bytes"] if m["bound_bytes"] else 1.0
        line = f"{lv:6} {m['arena_bytes']:>10} {m['bound_bytes']:>10} {ratio:>6.3f}"
        if off:
            line += f" {off['memory'][lv]['arena_bytes'] if off['memory'] else '-':>17}"
        print(line)
    if off and off["memory"] is None:
        print(f"in-place off does not compile: {off['error']}")
    st = man["cluster_stacks"]
    print(
        f"L1 also holds the cluster stacks: {st['l1_bytes']} B ({st['stack_size']} for the "
        f"cluster controller, {st['cores'] - 1} x {st['slave_stack_size']} for the other cores)"
    )
    if solver_ms is not None:
        print(
            f"\ntile selection: {solver_ms} ms, {man['tiling']['stopped_early']} op(s) "
            "whose search may have missed the optimum (Z3's resource limit, thinned candidates)"
        )
    print(
        f"\nregime: {man['regime']}; footprint (B): "
        + ", ".join(f"{k} {v}" for k, v in man["footprint"].items())
    )
    print("\nlargest buffers:")
    for b in sorted(man["buffers"], key=lambda b: -b["bytes"])[:10]:
        print(f"  {b['bytes']:>10} B  {b['level']} @{b['offset']:<8} {b['kind']:<15} {b['name']}")


def _measure_setup(args: argparse.Namespace) -> tuple[str, Any]:
    """--measure: the GVSoC model of the target and the GVSoC setup, or a
    one-line error naming what is missing (before any compiling)."""
    from deeploy_mlir.targets.gvsoc import find_setup, gvsoc_target

    model = gvsoc_target(args.target, None)
    if args.board is None:  # measured cycles beside the target's board's model
        from deeploy_mlir.targets.target import get_target

        args.board = get_target(args.target).board
    from deeploy_mlir.cli.options import board_isa

    try:
        setup = find_setup(board_isa(args.board))  # the GVSoC build of the board's cores
    except DeeployError as e:
        why = str(e)
        if why.startswith("--on gvsoc needs "):
            raise DeeployError("--measure needs " + why.removeprefix("--on gvsoc needs ")) from None
        raise DeeployError("--measure needs GVSoC: " + why.removeprefix("--on gvsoc: ")) from None
    return model, setup


def _measure(
    args: argparse.Namespace, c: Compiled, board: Board, gv: tuple[str, Any]
) -> dict[str, Any]:
    """Build the compiled step for GVSoC, run it, and set its measured cycles
    beside the cycle model's of the same program on `board`."""
    import tempfile

    from deeploy_mlir import progress
    from deeploy_mlir.cli.run import parse_bench
    from deeploy_mlir.cost.schedule import schedule_cost
    from deeploy_mlir.emitters.c import write_project_files
    from deeploy_mlir.targets.gvsoc import DEFAULT_TIMEOUT, build, run

    model, setup = gv
    cost = schedule_cost(c.project.module, board)  # type: ignore[attr-defined]
    progress.stage(f"measure on GVSoC {model}: build the step")
    with tempfile.TemporaryDirectory(prefix="deeploy-mlir-measure-") as tmp:
        write_project_files(c.project, Path(tmp))  # type: ignore[arg-type]
        elf = build(Path(tmp), model, setup, c.config.l1_as_l2 if c.config else False)
        progress.stage(f"measure on GVSoC {model}: run the step (simulation, minutes)")
        out = run(elf, model, setup, DEFAULT_TIMEOUT)
    progress.done()
    bench = parse_bench(out)
    doc: dict[str, Any] = {"gvsoc_target": model, "gvsoc_isa": setup.isa}
    ratio: dict[str, float] = {}
    for key in ("train", "optimizer"):
        got = bench.get(key) or []
        if not got or key not in cost:
            continue
        mean = sum(got) / len(got)
        modelled = cost[key].cycles
        doc[f"{key}_cycles"] = round(mean)
        doc[f"modelled_{key}_cycles"] = modelled
        ratio[key] = round(mean / modelled, 4) if modelled else 0.0
    if not ratio:
        raise DeeployError(f"--measure: the run on GVSoC {model} printed no cycle counts")
    doc["ratio"] = ratio
    return doc


def _print_measured(m: dict[str, Any], board: str) -> None:
    isa = f", {m['gvsoc_isa']} cores" if m.get("gvsoc_isa", "f") != "f" else ""
    print(
        f"\nmeasured on GVSoC {m['gvsoc_target']}{isa} (this compile) against the model on {board}:"
    )
    for key, what in (("train", "training step"), ("optimizer", "optimizer step")):
        if f"{key}_cycles" in m:
            print(
                f"  {what:15} {m[f'{key}_cycles']:>10} cycles measured, "
                f"{m[f'modelled_{key}_cycles']:>10} modelled, measured/modelled "
                f"{m['ratio'][key]:.2f}"
            )


def cmd_report(args: argparse.Namespace) -> int:
    from deeploy_mlir.memory.report import check_plot_path, plot_report, print_regime_table

    gv = _measure_setup(args) if getattr(args, "measure", False) else None
    plot = None
    if args.plot is not None:
        check_plot_path(args.plot)
        plot = check_file_output(args.plot, "--plot", inputs(args))
    if plot is not None and args.board is None and args.regime is None:
        args.regime = "auto"  # the plot models the target's board
    board = board_of(args)
    custom = args.pass_pipeline is not None
    c = compile_model(args, need_data=False, cfg=config_of(args))
    assert c.config is not None
    cfg = c.config  # the L1 budget split for this program's cluster stacks
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
        off = _inplace_off(args, cfg)
        doc["inplace_off"] = off
    rep = None
    if board is not None:
        from deeploy_mlir import progress

        progress.stage(f"model every regime and schedule on {board.name}")
        with progress.nested():
            rep = _regime_report(cfg, c, board, man["regime"], args.board)
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
    measured = None
    if gv is not None and board is not None:
        measured = _measure(args, c, board, gv)
        doc["measured"] = measured
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    _print_report(man, off, solver_ms)
    if rep is not None:
        print_regime_table(rep)
    if measured is not None and board is not None:
        _print_measured(measured, board.name)
    if plot is not None:
        print(f"\nwrote {args.plot}")
    return 0


def _regime_report(
    cfg: CompileConfig, c: Compiled, board: Board, chosen: str, board_name: str | None
) -> RegimeReport:
    """Every regime the board holds x single/double/untiled, modeled on `board`."""
    from deeploy_mlir.memory.report import bufferize, compiler, regime_report
    from deeploy_mlir.targets.target import get_target

    model = c.model.module  # type: ignore[attr-defined]
    # the default pipeline with memory-regime{board}: each regime and schedule
    base = CompileConfig(
        target=cfg.target,
        l1=cfg.l1,
        l2=cfg.l2,
        l3=cfg.l3,
        board=board_name or get_target(cfg.target).board,
        name_options=True,
        verify_each=False,
    )
    return regime_report(bufferize(model), board, cfg.l2, cfg.l3, chosen, compiler(model, base))


def _why_not(args: argparse.Namespace, cfg: CompileConfig) -> DeeployError | None:
    """Why the model does not compile with `cfg` (None: it does); an arena
    over its budget fails in arena-plan."""
    from deeploy_mlir.pipeline import pipeline, run_pipeline

    module = args._model.module.clone()
    try:
        run_pipeline(module, pipeline(cfg), verify_each=cfg.verify_each)
    except DeeployError as e:
        return e
    return None


def cmd_minimal_l1(args: argparse.Namespace) -> int:
    """Smallest L1 budget (bytes, a multiple of 4 for the arena) at which the
    model compiles. Compiling is monotone in the budget (a tile that fits also
    fits more), and a budget too small for an op's smallest tiles fails with
    the bytes that op needs (L1BudgetError.needs), below which nothing
    compiles: the search jumps up to each such bound until a budget compiles,
    then bisects what is left (none when the last bound compiled). The
    search is over the arena's budget; the cluster stacks (sized for the
    kernels the model forks) are added."""
    from deeploy_mlir import progress
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.targets.stacks import program_kernels, stack_reservation

    cfg = config_of(args)
    progress.stage(f"import {args.model}")
    args._model = import_model(args.model, args.params)
    stacks = stack_reservation(kernels=program_kernels(args._model.module))
    result: dict[str, int | None] = {}
    why: str | None = None
    for tiling in ("tiled", "untiled"):
        progress.stage(f"search the L1 budget, {tiling}")

        def at(l1: int, tiling: str = tiling) -> CompileConfig:
            # the arena's budget (the stacks are added to the result)
            return dataclasses.replace(cfg, tiling=tiling, l1=l1, l1_stacks=0, pass_pipeline=None)

        def fails(l1: int, tiling: str = tiling) -> DeeployError | None:
            progress.update(f"search the L1 budget, {tiling}: {l1} bytes?")
            with progress.nested():
                return _why_not(args, at(l1, tiling))

        best, why = _smallest_budget(fails, cfg.l2)
        result[tiling] = None if best is None else best + stacks
    if all(b is None for b in result.values()):
        raise DeeployError(
            f"minimal-l1: the model compiles with no L1 budget up to the L2 budget "
            f"({cfg.l2} bytes), tiled or untiled: {why}"
        )
    if args.json:
        print(json.dumps(result))
    else:
        print(f"smallest L1 budget, {args.buffering} buffering:")
        for tiling, b in result.items():
            print(f"  {tiling:8} {b if b is not None else 'does not fit L2'} bytes")
    return 0


def _smallest_budget(
    fails: Callable[[int], DeeployError | None], top: int
) -> tuple[int | None, str | None]:
    """The smallest multiple of 4 (or `top`) in (0, top] for which `fails`
    gives None, and None with the reason when `top` fails too. `fails` is
    monotone (a budget that compiles, any larger one does); an L1BudgetError
    at a budget proves every budget below its `needs` fails."""

    def up4(n: int) -> int:
        return (n + 3) // 4 * 4

    lo = 0  # the largest budget known to fail (0: none tried)
    b, step = min(4, top), 64
    while True:  # jump up to each lower bound; gallop when a failure gives none
        e = fails(b)
        if e is None:
            hi = b
            break
        if b >= top:
            return None, str(e)
        lo = b
        need = e.needs if isinstance(e, L1BudgetError) else 0
        if up4(need) > b:  # every multiple of 4 below `need` fails
            lo, b = up4(need) - 4, up4(need)
        else:
            b, step = b + step, step * 2
        b = min(b, top)
    while hi - lo > 4:  # bisect (lo fails, hi compiles)
        mid = (lo + hi) // 2 // 4 * 4
        if mid <= lo:
            break
        e = fails(mid)
        if e is None:
            hi = mid
        else:
            lo = max(mid, up4(e.needs) - 4) if isinstance(e, L1BudgetError) else mid
    return hi, None


def cmd_board(args: argparse.Namespace) -> int:
    """Check a board file (or a shipped board) and print what it says."""
    from dataclasses import asdict

    from deeploy_mlir.targets.boards import load_board

    b = load_board(args.board)
    if args.json:
        print(json.dumps(asdict(b), indent=2))
        return 0
    print(f"board {b.name}: {b.cores} cores at {b.clock_hz / 1e6:g} MHz")
    if b.isa != "f":  # the default, separate float registers, goes unsaid
        print(f"  float ISA: {b.isa} (the emitted Makefile's GVSOC_ISA default)")
    for lv, size in b.levels.items():
        print(f"  {lv}: {size} bytes")
    for e in b.engines.values():
        shared = ", one transfer per request" if e.shared_request else ""
        if e.queue is not None:
            shared += f", queues {e.queue} transfers" if e.queue else ", synchronous"
        shared += f", {e.chunk}-byte transfers" if e.chunk else ""
        shared += ", 2-D rows apart" if e.row_transfers else ""
        print(
            f"  engine {e.name}: {e.hop[0]} <-> {e.hop[1]}, {e.bandwidth:g} B/cycle, "
            f"{e.setup} cycles setup, {e.issue} cycles issue, rank {e.rank}{shared}"
        )
        for kind, setup, bw in e.copies:
            print(f"    {kind} copies: {bw:g} B/cycle, {setup} cycles setup")
    for k, t in b.kernels.items():
        extra = f", {t.per_output:g} per output" if t.per_output else ""
        extra += f", {t.cold} more after another kernel" if t.cold else ""
        print(
            f"  kernel {k}: {t.macs_per_cycle_per_core:g} MAC/cycle/core, "
            f"{t.call} cycles per call{extra}"
        )
    return 0
