"""The command-line options of `deeploy-mlir sweep` (lists of budgets,
bufferings and boards). The parser (cli/parser.py) adds them; the sweep itself
is deeploy_mlir/sweep.py, which imports the CLI's modules -- so the options
live here, and neither imports the other's package."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

BUFFERINGS = ("single", "double", "double-l3")
RUNNERS = ("host", "qemu", "gvsoc")


def _list(kind: str, conv: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def parse(s: str) -> list[Any]:
        items = [w.strip() for w in s.split(",")]
        if not s.strip() or any(not w for w in items):
            raise argparse.ArgumentTypeError(f"{kind} must be a comma-separated list, got '{s}'")
        out = [conv(w) for w in items]
        if len(set(out)) != len(out):
            raise argparse.ArgumentTypeError(f"{kind} lists a value twice: '{s}'")
        return out

    return parse


def _budget(w: str) -> int:
    try:
        v = int(w.replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--l1: '{w}' is not a number of bytes") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"--l1: budgets must be positive, got {v}")
    return v


def _buffering(w: str) -> str:
    if w not in BUFFERINGS:
        raise argparse.ArgumentTypeError(
            f"--buffering: '{w}' is not one of {', '.join(BUFFERINGS)}"
        )
    return w


def add_parser(sub: argparse._SubParsersAction, common: Callable[..., None]) -> None:  # type: ignore[type-arg]
    del common  # sweep's --l1/--buffering/--board take lists: its own options
    sw = sub.add_parser(
        "sweep",
        help="compile (and run) every L1 x buffering x board combination, tabulate and plot",
        description="Compile MODEL tiled at every L1 budget, buffering and board given, in "
        "parallel worker processes (and with --on build and run each); write DIR/sweep.json, "
        "DIR/sweep.md (arenas, tiles, DMA bytes, modeled and measured cycles) and plots of "
        "the cycles and the L1 arena against the budget. A point that fails is a row with "
        "its error.",
    )
    sw.add_argument("model", help="artifact directory or a single training ONNX file")
    sw.add_argument(
        "--l1",
        type=_list("--l1", _budget),
        required=True,
        metavar="A,B,C",
        help="L1 budgets in bytes",
    )
    sw.add_argument(
        "--buffering",
        type=_list("--buffering", _buffering),
        default=["double"],
        metavar="single,double",
        help="bufferings: single, double, double-l3 (default: double)",
    )
    sw.add_argument(
        "--board",
        type=_list("--board", str),
        default=["siracusa"],
        metavar="siracusa[,gap9_evk]",
        help="boards (shipped names or YAML files; default: siracusa); each gives the regime, "
        "the L2/L3 capacities and the cycle model",
    )
    sw.add_argument(
        "--on",
        choices=RUNNERS,
        default=None,
        help="also build and run each point there (as `run --on`) and report measured cycles",
    )
    sw.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    sw.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes (default: one per core)",
    )
    sw.add_argument("--data", default=None, metavar="DATA.npz", help="training data for --on")
    sw.add_argument("--steps", type=int, default=1, help="optimizer steps with --on (default 1)")
    sw.add_argument("--accum", type=int, default=1, help="mini-batches per step (default 1)")
    sw.add_argument("--lr", type=float, default=0.01, help="SGD learning rate (default 0.01)")
    sw.add_argument("-q", "--quiet", action="store_true", help="no progress display")
