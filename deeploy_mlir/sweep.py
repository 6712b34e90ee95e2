"""deeploy-mlir sweep: every L1 budget x buffering x board of one model.

Each point is one `lower` (tiled, `--board B`: the board's regime and
capacities, its target's kernels) in a worker process, and with `--on` a
build and run of the project. DIR/sweep.json holds one row per point,
DIR/sweep.md the same as a Markdown table, DIR/sweep_cycles.png and
DIR/sweep_l1.png the modeled cycles and the L1 arena against the budget. A
point that fails is a row with its one-line error; the sweep goes on.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from deeploy_mlir.errors import DeeployError


def _target(board: str) -> str:
    """The target whose kernels and SDK a board's points use (targets.target)."""
    from deeploy_mlir.targets.target import target_of_board

    return target_of_board(board)


def run_point(
    model: str,
    l1: int,
    buffering: str,
    board: str,
    on: str | None,
    train: dict[str, Any],
) -> dict[str, Any]:
    """One point: its row (the `error` member set when it failed)."""
    row: dict[str, Any] = {"l1_budget": l1, "buffering": buffering, "board": board}
    try:
        row.update(_measure(model, l1, buffering, board, on, train))
        row["error"] = None
    except DeeployError as e:
        row["error"] = str(e).splitlines()[0]
    except Exception as e:  # a bug of ours: the row says so, the sweep goes on
        first = str(e).splitlines()[0] if str(e) else ""
        row["error"] = f"internal error: {type(e).__name__}: {first}"
    return row


def _measure(
    model: str, l1: int, buffering: str, board: str, on: str | None, train: dict[str, Any]
) -> dict[str, Any]:
    from deeploy_mlir.cli.compile import compile_model
    from deeploy_mlir.cli.options import config_of
    from deeploy_mlir.cli.parser import build_parser
    from deeploy_mlir.cli.run import build_and_run, parse_bench
    from deeploy_mlir.cost.schedule import schedule_cost
    from deeploy_mlir.targets.boards import load_board

    argv = ["lower", model, "-o", "unused", "-q", "--l1", str(l1), "--buffering", buffering]
    argv += ["--board", board, "--target", _target(board)]
    argv += ["--steps", str(train["steps"]), "--accum", str(train["accum"])]
    argv += ["--lr", repr(train["lr"])]
    if train["data"]:
        argv += ["--data", train["data"]]
    # the point's options checked as `lower`'s: one CompileConfig per point
    args = build_parser().parse_args(argv)
    c = compile_model(args, need_data=False, cfg=config_of(args))
    project: Any = c.project
    man = project.manifest()
    costs = schedule_cost(project.module, load_board(board))
    out: dict[str, Any] = {
        "regime": man["regime"],
        "arenas": {lv: m["arena_bytes"] for lv, m in man["memory"].items()},
        "tiles": sum(o.calls for o in costs["train"].ops) if "train" in costs else None,
        "dma_bytes": sum(b for _, b in costs["train"].hops.values()) if "train" in costs else 0,
        "modeled_cycles": {k: fc.timeline.total for k, fc in costs.items()},
        "measured_cycles": None,
    }
    if on is not None:
        from deeploy_mlir.emitters.c import write_project

        with tempfile.TemporaryDirectory(prefix="deeploy-mlir-sweep-") as tmp:
            write_project(project, Path(tmp) / "project")
            stdout = build_and_run(Path(tmp) / "project", on, _target(board))
        bench = parse_bench(stdout)
        out["measured_cycles"] = {
            "train": _mean(bench["train"]),
            "optimizer": _mean(bench["optimizer"]),
        }
    return out


def _mean(xs: list[int]) -> int | None:
    return round(sum(xs) / len(xs)) if xs else None


def _n(v: object) -> str:
    return f"{v:,}" if isinstance(v, int) else ("" if v is None else str(v))


def markdown(rows: list[dict[str, Any]], model: str, on: str | None) -> str:
    head = [
        "board",
        "buffering",
        "L1 budget",
        "regime",
        "L1 arena",
        "L2 arena",
        "L3 arena",
        "tiles",
        "DMA bytes",
        "modeled cycles (train / optimizer)",
    ]
    if on is not None:
        head.append(f"measured cycles on {on} (train / optimizer)")
    head.append("error")
    lines = [
        f"# deeploy-mlir sweep of {model}",
        "",
        "Arenas in bytes; tiles: kernel calls of one training step; DMA bytes: bytes "
        "copied in one training step (all hops, modeled); cycles: one training step / "
        "one optimizer step.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in rows:
        cells = [r["board"], r["buffering"], _n(r["l1_budget"])]
        if r["error"] is None:
            a = r["arenas"]
            mc = r["modeled_cycles"]
            cells += [
                r["regime"],
                _n(a.get("L1", 0)),
                _n(a.get("L2", 0)),
                _n(a.get("L3", 0)),
                _n(r["tiles"]),
                _n(r["dma_bytes"]),
                f"{_n(mc.get('train'))} / {_n(mc.get('optimizer'))}",
            ]
            if on is not None:
                m = r["measured_cycles"] or {}
                cells.append(f"{_n(m.get('train'))} / {_n(m.get('optimizer'))}")
            cells.append("")
        else:
            cells += [""] * (len(head) - 4)
            cells.append(r["error"].replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], out: Path, model: str) -> list[Path]:
    """sweep_cycles.png (modeled training-step cycles) and sweep_l1.png (the L1
    arena, with the budget as the diagonal) against the L1 budget, one line
    per board x buffering."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r["error"] is None:
            series.setdefault((r["board"], r["buffering"]), []).append(r)
    boards = list(dict.fromkeys(r["board"] for r in rows))
    bufferings = list(dict.fromkeys(r["buffering"] for r in rows))
    # a board per line style and marker, a buffering per colour: boards with
    # the same numbers draw on top of each other and stay told apart
    styles = [("-", "o", 7), ("--", "s", 5), (":", "^", 4), ("-.", "v", 3)]
    budgets = sorted({r["l1_budget"] for r in rows})
    written: list[Path] = []
    for name, ylabel, value in (
        ("cycles", "modeled cycles of one training step", lambda r: r["modeled_cycles"]["train"]),
        ("l1", "L1 arena (bytes)", lambda r: r["arenas"].get("L1", 0)),
    ):
        fig, ax = plt.subplots(figsize=(9, 5))
        for (board, buf), rs in series.items():
            rs = sorted(rs, key=lambda r: r["l1_budget"])
            line, marker, size = styles[boards.index(board) % len(styles)]
            ax.plot(
                [r["l1_budget"] for r in rs],
                [value(r) for r in rs],
                linestyle=line,
                marker=marker,
                markersize=size,
                color=f"C{bufferings.index(buf)}",
                label=f"{board}, {buf} buffering",
            )
        if name == "l1" and budgets:
            ax.plot(budgets, budgets, color="grey", linestyle="--", label="the budget")
        failed = sorted({r["l1_budget"] for r in rows if r["error"] is not None})
        for b in failed:
            ax.axvline(b, color="red", linewidth=0.6, linestyle=":")
        if failed:
            ax.plot([], [], color="red", linewidth=0.6, linestyle=":", label="a point failed")
        ax.set_xscale("log")
        if name == "l1":
            ax.set_yscale("log")
        ax.set_xlabel("L1 budget (bytes)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{model}: {ylabel} against the L1 budget")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
        fig.tight_layout()
        path = out / f"sweep_{name}.png"
        fig.savefig(path, format="png")
        plt.close(fig)
        written.append(path)
    return written


def cmd_sweep(args: argparse.Namespace) -> int:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from deeploy_mlir import progress
    from deeploy_mlir.targets.boards import load_board

    if args.jobs < 1:
        raise DeeployError(f"-j must be at least 1, got {args.jobs}")
    if not Path(args.model).exists():
        raise DeeployError(f"{args.model}: no such file or directory")
    for b in args.board:
        load_board(b)  # a bad board is the whole sweep's error, before any work
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise DeeployError(f"{out}: exists and is not a directory")
    points = [(b, buf, l1) for b in args.board for buf in args.buffering for l1 in sorted(args.l1)]
    train = {"data": args.data, "steps": args.steps, "accum": args.accum, "lr": args.lr}
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    progress.stage(f"sweep: {len(points)} points, {args.jobs} worker(s)", total=len(points))
    ctx = multiprocessing.get_context("spawn")  # the parent may run a display thread
    with ProcessPoolExecutor(max_workers=min(args.jobs, len(points)), mp_context=ctx) as pool:
        futures = {
            pool.submit(run_point, args.model, l1, buf, b, args.on, train): (b, buf, l1)
            for b, buf, l1 in points
        }
        for k, f in enumerate(as_completed(futures), 1):
            rows[futures[f]] = f.result()
            b, buf, l1 = futures[f]
            progress.update(f"sweep: {b}, {buf}, L1 {l1} done", k, len(points))
    progress.stage("tables and plots")
    ordered = [rows[p] for p in points]
    name = Path(args.model).name
    out.mkdir(parents=True, exist_ok=True)
    doc = {"model": str(args.model), "on": args.on, "points": ordered}
    (out / "sweep.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "sweep.md").write_text(markdown(ordered, name, args.on))
    plot(ordered, out, name)
    progress.done()
    failed = sum(r["error"] is not None for r in ordered)
    print(
        f"wrote {out}/sweep.json, sweep.md, sweep_cycles.png, sweep_l1.png "
        f"({len(ordered)} point{'s' if len(ordered) != 1 else ''}, {failed} failed)"
    )
    return 0
