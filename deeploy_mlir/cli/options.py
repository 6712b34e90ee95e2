"""From the command line to a CompileConfig: the budgets (the target's, the
board's, or --l1/--l2/--l3; --l1 holds the cluster stacks), the board, the
memory regime, and the files a command reads."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from deeploy_mlir.config import DEFAULT_SEED, CompileConfig
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.outputs import Input, inputs_of

if TYPE_CHECKING:
    from deeploy_mlir.targets.boards import Board


def budgets(args: argparse.Namespace) -> dict[str, int]:
    """{"l1": the L1 arena's budget, "l1_stacks", "l2", "l3"} in bytes."""
    from deeploy_mlir.targets.stacks import l1_arena_budget, stack_reservation
    from deeploy_mlir.targets.target import get_target

    target = get_target(args.target)
    board = board_of(args)  # its capacities are the default budgets
    base = target.default_budgets(board.levels if board is not None else None)
    for lv in ("l1", "l2", "l3"):
        if getattr(args, lv) is not None:
            base[lv] = getattr(args, lv)
    # the cluster stacks live in L1 beside the arena: "l1" is the arena's
    # share. Their size depends on the kernels the program forks
    # (targets/stacks.py): until the model is imported, the split is the
    # smallest stacks' (a program forking no kernel); compile_model resizes
    # them for the program (program_budget)
    total, floor = base["l1"], stack_reservation(kernels=())
    if total > floor:
        base["l1_stacks"], base["l1"] = floor, l1_arena_budget(total, kernels=())
    elif total > 1:  # below any program's stacks: program_budget says so, with its figures
        base["l1_stacks"], base["l1"] = total - 1, 1
    else:
        l1_arena_budget(total, kernels=())  # the one-line error
    return base


def with_stacks(cfg: CompileConfig, kernels: Iterable[str] | None) -> CompileConfig:
    """`cfg` with its --l1 split for the cluster stacks of a program forking
    `kernels` (None: any kernel, the worst case). A config that keeps no
    stacks beside the arena (l1_stacks 0) is kept as it is."""
    import dataclasses

    from deeploy_mlir.targets.stacks import l1_arena_budget, stack_reservation

    if cfg.l1_stacks == 0:
        return cfg
    total = cfg.l1 + cfg.l1_stacks  # the command line's --l1
    arena = l1_arena_budget(total, kernels=kernels)
    return dataclasses.replace(cfg, l1=arena, l1_stacks=stack_reservation(kernels=kernels))


def board_of(args: argparse.Namespace) -> Board | None:
    """The board of --board, or the target's with --regime (None: neither)."""
    from deeploy_mlir.targets.boards import load_board
    from deeploy_mlir.targets.target import get_target

    name = getattr(args, "board", None)
    if name is None and getattr(args, "regime", None) is None:
        return None
    return load_board(name or get_target(args.target).board)


def board_isa(board: str | None) -> str:
    """The cluster cores' float ISA of `board` (a shipped name or a YAML
    path; None: the targets' boards, "f"): the emitted Makefile's GVSOC_ISA
    default and the GVSoC build `--on gvsoc` and `report --measure` run."""
    if board is None:
        return "f"
    from deeploy_mlir.targets.boards import load_board

    return load_board(board).isa


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


def _solver(args: argparse.Namespace) -> Literal["front", "z3"]:
    """--solver; --rlimit, Z3's limit, implies z3 unless --solver front is
    given, which is then an error (the limit would be ignored)."""
    solver = getattr(args, "solver", None)
    if getattr(args, "rlimit", None) is not None:
        if solver == "front":
            raise DeeployError(
                "--rlimit limits Z3's search: it needs --solver z3, not --solver front"
            )
        return "z3"
    if solver is not None and args.pass_pipeline is not None:
        raise DeeployError(
            "--solver sets the default pipeline's tile-select: with --pass-pipeline, "
            "set tile-select's solver option in the pipeline instead"
        )
    return solver or "front"


def config_of(args: argparse.Namespace) -> CompileConfig:
    """The CompileConfig of a command line (lower, run, test, report, minimal-l1)."""
    b = budgets(args)
    rlimit = _rlimit(args)
    regime = board = None
    custom = args.pass_pipeline is not None
    if not custom and (args.board is not None or args.regime is not None):
        if args.weights_in_l3 or args.home != "L2":
            raise DeeployError(
                "--regime/--board choose where tensors live: do not combine them with "
                "--weights-in-l3 or --home L3"
            )
        from deeploy_mlir.targets.target import get_target

        regime = args.regime or "auto"
        board = args.board or get_target(args.target).board
    return CompileConfig(
        target=args.target,
        tiling=args.tiling,
        buffering=args.buffering,
        l1=b["l1"],
        l1_stacks=b["l1_stacks"],
        l2=b["l2"],
        l3=b["l3"],
        weights="L3" if args.weights_in_l3 else "L2",
        home=args.home,
        regime=regime,
        board=board,
        solver=_solver(args),
        rlimit=rlimit,
        name_options=True,
        pass_pipeline=args.pass_pipeline,
        steps=getattr(args, "steps", 1),
        accum=getattr(args, "accum", 1),
        lr=getattr(args, "lr", 0.01),
        l1_as_l2=args.l1_as_l2,
        verify_each=getattr(args, "verify_each", True),
        seed=getattr(args, "seed", DEFAULT_SEED),
    )


_PACKAGE = Path(__file__).resolve().parent.parent


def inputs(args: argparse.Namespace) -> list[Input]:
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
