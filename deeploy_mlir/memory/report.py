"""What a planned module holds in memory, and what its schedule costs.

- `memory_summary`: per level the arena and its lower bound, the regime, the
  footprint by kind, and every buffer with its level, offset, size and kind
  (the manifest's members, docs/manifest.md);
- `regime_report`: for each memory regime a board can hold, the modeled cycles
  of single buffering, double buffering and untiled schedules (`deeploy-mlir
  report --board`), and `print_regime_table` / `plot_report` to show them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from deeploy_mlir.config import Buffering, CompileConfig, Tiling
from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.passes.arena_plan import nbytes

if TYPE_CHECKING:  # the cost model and boards: only for the report, not for manifests
    from deeploy_mlir.cost.schedule import FunctionCost
    from deeploy_mlir.targets.boards import Board

#: argument kinds as the report names them
KIND_LABEL = {
    "param": "weight",
    "grad_accum": "gradient",
    "input": "input",
    "output": "output",
    "reset_flag": "control",
    "lr": "optimizer_state",
    "running_stat": "running_stat",
    "optimizer_state": "optimizer_state",
}
#: footprint kinds (memory-regime's names) of the report's buffer kinds
FOOTPRINT_OF = {
    "weight": "weights",
    "gradient": "gradients",
    "optimizer_state": "optimizer_state",
    "activation": "activations",
    "input": "inputs",
    "output": "outputs",
    "control": "control",
    "running_stat": "weights",  # persistent state beside the weights
}
MANIFEST_VERSION = 1


def _view_kind(v: SSAValue, level: str) -> str:
    """An arena view's kind: L1 tiles (and rings of them), L2 stage buffers of
    L3 tensors, or activations (the temporaries of a step)."""
    if level == "L1":
        return "tile"
    if level == "L2":
        for u in v.uses:
            o = u.operation
            if isinstance(o, dma.CopyOp) and "L3" in (o.src_level, o.dst_level):
                return "stage"
    return "activation"


def derived_regime(buffers: list[dict[str, Any]]) -> str:
    """The regime the levels of `buffers` describe (for modules that no
    memory-regime pass planned): stream if a weight or gradient lives in L3,
    spill if an activation does, resident if nothing does, else custom."""
    in_l3 = {b["kind"] for b in buffers if b["level"] == "L3"}
    if in_l3 & {"weight", "gradient", "running_stat", "optimizer_state"}:
        return "stream"
    if "activation" in in_l3:
        return "spill"
    return "resident" if not in_l3 else "custom"


def memory_summary(module: ModuleOp) -> dict[str, Any]:
    """{"memory": {level: {"arena_bytes", "bound_bytes"}}, "regime", "footprint",
    "buffers": [...]}; every level L1, L2, L3 is present (0 bytes when nothing
    lives there)."""
    memory = {
        lv: {
            "arena_bytes": a.size_bytes if (a := T.arena_of(module, lv)) else 0,
            "bound_bytes": a.bound_bytes if (a := T.arena_of(module, lv)) else 0,
        }
        for lv in T.MEMORY_LEVELS
    }
    for lv in T.MEMORY_LEVELS:  # planned by arena-plan{strategy=exact}
        a = T.arena_of(module, lv)
        if a is not None and a.is_proven is not None:
            memory[lv]["proven"] = a.is_proven
    buffers: list[dict[str, Any]] = []
    seen: set[str] = set()
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
            continue
        for i, a in enumerate(fn.args):
            info = T.arg_info(fn, i)
            name, kind = info.name_or(f"{fn.sym_name.data}.arg{i}"), info.kind
            if name in seen or info.offset is None:
                continue
            seen.add(name)
            buffers.append(
                {
                    "name": name,
                    "kind": KIND_LABEL.get(kind, kind),
                    "level": T.memory_level(a.type),
                    "offset": info.offset,
                    "bytes": nbytes(a.type),
                }
            )
        for op in fn.walk():
            if isinstance(op, T.ArenaViewOp):
                hint = op.result.name_hint or "tmp"
                buffers.append(
                    {
                        "name": f"{fn.sym_name.data}/{hint}",
                        "kind": _view_kind(op.result, op.level),
                        "level": op.level,
                        "offset": op.offset.value.data,
                        "bytes": nbytes(op.result.type),
                    }
                )
    regime = T.regime_of(module)
    if regime is not None:
        footprint = regime.footprint_bytes()
    else:  # from the planned buffers (activations: the L2/L3 temporaries)
        footprint = dict.fromkeys(FOOTPRINT_OF.values(), 0)
        for b in buffers:
            if b["kind"] in FOOTPRINT_OF:
                footprint[FOOTPRINT_OF[b["kind"]]] += b["bytes"]
    return {
        "memory": memory,
        "regime": regime.regime_name if regime is not None else derived_regime(buffers),
        "footprint": footprint,
        "buffers": buffers,
    }


# --------------------------------------------------------------------------
# regimes x schedules


@dataclass(frozen=True)
class Schedule:
    tiling: Tiling  # tiled | untiled
    buffering: Buffering  # single | double
    tile_buffers: int  # the buffers per tile tile-select chooses the tiles for


#: the schedules the report compares, per regime. `single` single-buffers the
#: tiles chosen for double buffering (the same copies, without overlap);
#: `single-own` the tiles chosen for one buffer (what `--buffering single`
#: compiles: larger tiles, fewer copies); `untiled` one tile per tensor
SCHEDULES = {
    "single": Schedule("tiled", "single", 2),
    "double": Schedule("tiled", "double", 2),
    "untiled": Schedule("untiled", "single", 1),
    "single-own": Schedule("tiled", "single", 1),
}

#: compile(regime, schedule) -> the lowered module
Compile = Callable[[str, Schedule], ModuleOp]


def cost_doc(c: FunctionCost) -> dict[str, Any]:
    t = c.timeline
    return {
        "cycles": t.total,
        "dma_busy": dict(t.dma_busy),
        "compute_busy": t.compute_busy,
        "bound": t.roofline,
        "ratio": round(t.ratio, 4),
        "transfers": {h: {"transfers": n, "bytes": b} for h, (n, b) in sorted(c.hops.items())},
    }


@dataclass
class RegimeReport:
    board: Board
    chosen: str
    needs: dict[str, dict[str, int]]  # regime -> {"L2", "L3"} bytes
    fits: dict[str, bool]
    #: regime -> schedule -> {"train", "optimizer"} -> FunctionCost
    costs: dict[str, dict[str, dict[str, FunctionCost]]]
    #: regime -> schedule -> why it could not be compiled (untiled over L1)
    missing: dict[str, dict[str, str]]

    def regimes_doc(self) -> dict[str, Any]:
        """{regime: {"single": {"train", "optimizer"}, "double": {...}, "bound": {...}}}
        for every regime the board holds."""
        out: dict[str, Any] = {}
        for r, by in self.costs.items():
            out[r] = {
                s: {k: by[s][k].timeline.total for k in ("train", "optimizer")}
                for s in ("single", "double")
            }
            out[r]["bound"] = {k: by["double"][k].timeline.roofline for k in ("train", "optimizer")}
        return out

    def schedules_doc(self) -> dict[str, Any]:
        return {
            r: {s: {k: cost_doc(c) for k, c in fc.items()} for s, fc in by.items()}
            for r, by in self.costs.items()
        }


def compiler(model: ModuleOp, base: CompileConfig) -> Compile:
    """compile(regime, schedule): `model` (tensor form) through the pipeline of
    `base` with memory-regime{regime} and the schedule's tiling and buffering;
    an arena over its budget fails in arena-plan, as for `lower`."""
    import dataclasses

    from deeploy_mlir.pipeline import pipeline, run_pipeline

    def compile_(regime: str, s: Schedule) -> ModuleOp:
        two = s.tiling == "tiled" and s.buffering == "single" and s.tile_buffers == 2
        cfg = dataclasses.replace(
            base,
            regime=regime,  # type: ignore[arg-type]
            tiling=s.tiling,
            buffering=s.buffering,
            tile_buffers=2 if two else None,
        )
        module = model.clone()
        run_pipeline(module, pipeline(cfg), verify_each=False)
        return module

    return compile_


def bufferize(model: ModuleOp) -> ModuleOp:
    """A copy of `model` right after training-bufferize (what memory-regime sees)."""
    from deeploy_mlir.pipeline import bufferize_only, run_pipeline

    module = model.clone()
    run_pipeline(module, bufferize_only())
    return module


def regime_report(
    bufferized: ModuleOp,
    board: Board,
    l2: int,
    l3: int,
    chosen: str,
    compile_: Compile,
    schedules: tuple[str, ...] = tuple(SCHEDULES),
) -> RegimeReport:
    """Model `schedules` (default: all of SCHEDULES) of every regime the board
    (with budgets `l2`, `l3`) holds. `bufferized` is the module right after
    training-bufferize."""
    from deeploy_mlir.passes.memory_regime import REGIMES, capacity, regime_need

    cap = capacity(board, l2, l3)
    needs: dict[str, dict[str, int]] = {}
    fits: dict[str, bool] = {}
    from deeploy_mlir.cost.schedule import schedule_cost

    costs: dict[str, dict[str, dict[str, FunctionCost]]] = {}
    missing: dict[str, dict[str, str]] = {}
    for r in REGIMES:
        need = regime_need(bufferized, r)
        needs[r] = {"L2": need.l2, "L3": need.l3}
        fits[r] = cap.shortfall(need) is None
        if not fits[r]:
            continue
        costs[r] = {}
        for s in schedules:
            sched = SCHEDULES[s]
            try:
                module = compile_(r, sched)
            except DeeployError as e:
                if s in ("single", "double"):
                    raise
                missing.setdefault(r, {})[s] = str(e)
                continue
            costs[r][s] = schedule_cost(module, board)
    return RegimeReport(board, chosen, needs, fits, costs, missing)


def print_regime_table(rep: RegimeReport) -> None:
    engines = list(rep.board.engines)
    print(f"\ncycles on board {rep.board.name} (regime chosen: {rep.chosen})")
    head = f"{'regime':9} {'schedule':10} {'step':9} {'cycles':>10}"
    head += "".join(f" {e + ' busy':>11}" for e in engines)
    print(head + f" {'compute':>10} {'bound':>10} {'ratio':>6}")
    for r in rep.needs:
        if not rep.fits[r]:
            n = rep.needs[r]
            print(f"{r:9} does not fit: needs {n['L2']} B of L2 and {n['L3']} B of L3")
            continue
        for s in SCHEDULES:
            if s not in rep.costs[r] and s not in rep.missing.get(r, {}):
                continue
            if s not in rep.costs[r]:
                print(f"{r:9} {s:10} -- {rep.missing.get(r, {}).get(s, '')}")
                continue
            for k, c in rep.costs[r][s].items():
                t = c.timeline
                line = f"{r:9} {s:10} {k:9} {t.total:>10}"
                line += "".join(f" {t.dma_busy[e]:>11}" for e in engines)
                print(line + f" {t.compute_busy:>10} {t.roofline:>10} {t.ratio:>6.2f}")
    print(
        "single: the double-buffered tiles with every copy waited around its kernel; "
        "single-own: the tiles chosen for one buffer (--buffering single); untiled: whole "
        "tensors in L1; bound: max(compute, busiest DMA engine)"
    )


def check_plot_path(path: str) -> Path:
    """A --plot path we can write a PNG to, or a one-line error."""
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise DeeployError(f"--plot {path}: must name a .png file")
    if p.is_dir():
        raise DeeployError(f"--plot {path}: is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise DeeployError(f"--plot {path}: the directory {parent} does not exist")
    return p


def plot_report(path: Path, costs: dict[str, FunctionCost], title: str) -> None:
    """A PNG: the bytes live in each memory level over the schedule (training
    step, then optimizer step), and the cycles of each compute op (computing,
    and stalled in the waits before it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # L1 (KiB) has its own panel: at the scale of L2 and L3 it would hug zero
    fig, (top, mid, bottom) = plt.subplots(
        3, 1, figsize=(12, 10), gridspec_kw={"height_ratios": [2, 1, 2]}
    )
    colors = {"L1": "tab:blue", "L2": "tab:orange", "L3": "tab:green"}
    offset = 0
    labelled: set[str] = set()
    for c in costs.values():
        for lv, points in c.memory.items():
            if not any(b for _, b in points):
                continue
            xs = [offset + t for t, _ in points]
            label = None if lv in labelled else lv
            labelled.add(lv)
            ax = mid if lv == "L1" else top
            ax.step(xs, [b for _, b in points], where="post", color=colors[lv], label=label)
        offset += c.timeline.total
        for ax in (top, mid):
            ax.axvline(offset, color="grey", linewidth=0.5)
    mid.set_xlabel("cycle (training step, then optimizer step)")
    top.set_ylabel("bytes live")
    mid.set_ylabel("L1 bytes live")
    top.set_title(f"{title}: memory over the schedule")
    for ax in (top, mid):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    labels: list[str] = []
    compute: list[int] = []
    stall: list[int] = []
    for k, c in costs.items():
        for o in c.ops:
            labels.append(f"{k}: {o.label}")
            compute.append(o.compute)
            stall.append(o.stall)
        if c.tail:
            labels.append(f"{k}: end")
            compute.append(0)
            stall.append(c.tail)
    xs = list(range(len(labels)))
    bottom.bar(xs, compute, label="compute")
    bottom.bar(xs, stall, bottom=compute, label="DMA wait before it (end: after the last op)")
    bottom.set_xticks(xs, labels, rotation=90, fontsize="x-small")
    bottom.set_ylabel("cycles")
    bottom.set_title("cycles per op")
    bottom.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    try:
        fig.savefig(path, format="png")
    except OSError as e:
        raise DeeployError(f"--plot {path}: cannot write it ({e.strerror})") from None
    finally:
        plt.close(fig)
