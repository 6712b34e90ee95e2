"""Targets: what deeploy-mlir compiles for, one `Target` record each.

A target names its board (targets/boards/<board>.yaml: the capacities of L1,
L2 and L3, the DMA engines' numbers and the kernels' throughput -- the data;
nothing here restates it), the SDK its C project builds with, the DMA engines
its copies go through (dma.EngineAttr names in deeploy_mlir.dialects.dma), and
the GVSoC model it runs on. The default budgets of `lower`/`run`/... are the
board's levels, with one documented exception:

pulp-open's default L1 is 65,536 bytes, not Siracusa's 262,144. The pulp-open
target is the PULPOpen family: GVSoC's pulp-open cluster has a 64 KiB TCDM
(generators/pulp/chips/pulp_open/cluster.json, l1 mapping size 0x10000),
Siracusa's 256 KiB (chips/siracusa/cluster.json, 0x40000). Without --board
and --regime, the budget is the smallest cluster L1 of the family, so code
compiled with the defaults fits either chip; --board siracusa (or --regime)
uses Siracusa's 256 KiB. Like every --l1, the default holds the cluster stacks
beside the arena (targets/stacks.py: --l1 = arena + stacks).

This module imports no xdsl (the CLI's --help prints the default budgets).
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_mlir.errors import DeeployError

LEVELS = ("L1", "L2", "L3")


@dataclass(frozen=True)
class Sdk:
    """The SDK a target's C project builds with (both speak PMSIS)."""

    name: str
    home: str
    #: the make variable that builds the board's L3 RAM driver into the
    #: application (pmsis_bsp's rules/pulpos/src.mk): pulp-sdk's HyperRAM
    #: (siracusa's target file sets it, pulp-open's does not), gap_sdk's
    #: APS25xxxN OctoSPI PSRAM of the GAP9 EVK
    ram_config: str
    cflags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    name: str
    #: the shipped board whose capacities are the default budgets and whose
    #: numbers the cycle model and memory-regime use
    board: str
    sdk: Sdk
    #: the DMA engines of its copies, by dma.EngineAttr name (one per hop)
    engines: tuple[str, ...]
    #: the GVSoC model `--on gvsoc` runs it on (None: none here)
    gvsoc: str | None
    #: the default L1 budget when it is not the board's (see the module's doc)
    l1: int | None = None
    #: where `l1` comes from (for --help and the docs)
    l1_why: str = ""

    def default_budgets(self, board_levels: dict[str, int] | None = None) -> dict[str, int]:
        """{"l1", "l2", "l3"}: the board's levels (`board_levels`, default:
        this target's board), pulp-open's L1 as the module's doc says. With a
        board given (--board, --regime) its levels are the budgets."""
        if board_levels is not None:
            return {lv.lower(): n for lv, n in board_levels.items()}
        from deeploy_mlir.targets.boards import load_board

        out = {lv.lower(): n for lv, n in load_board(self.board).levels.items()}
        if self.l1 is not None:
            out["l1"] = self.l1
        return out


TARGETS: dict[str, Target] = {
    "pulp-open": Target(
        "pulp-open",
        board="siracusa",
        sdk=Sdk("pulp-sdk", "PULP_SDK_HOME", "CONFIG_HYPERRAM"),
        engines=("mchan", "pulp-open-ram"),
        gvsoc="siracusa",
        l1=65536,
        l1_why="GVSoC pulp-open's cluster TCDM, the family's smallest",
    ),
    "gap9": Target(
        "gap9",
        board="gap9_evk",
        sdk=Sdk("gap_sdk", "GAP_SDK_HOME", "CONFIG_APS25XXXN", ("-DCONFIG_GAP9",)),
        engines=("mchan", "gap9-ram"),
        gvsoc=None,
    ),
}


def get_target(name: str) -> Target:
    """The Target called `name`; an unknown one is a one-line error."""
    if name not in TARGETS:
        raise DeeployError(f"unknown target '{name}' (available: {', '.join(TARGETS)})")
    return TARGETS[name]


def target_of_board(board: str) -> str:
    """The target whose board `board` is (its kernels, SDK and engines);
    another board (a shipped one of no target, a YAML file) is a PULP
    board: pulp-open."""
    for t in TARGETS.values():
        if t.board == board:
            return t.name
    return "pulp-open"


def budgets_help() -> str:
    """Each target's default budgets, for --help."""
    parts = []
    for t in TARGETS.values():
        b = t.default_budgets()
        why = f" ({t.l1_why})" if t.l1 is not None and t.l1_why else ""
        parts.append(
            f"{t.name}: L1 {b['l1']:,}{why}, L2 {b['l2']:,}, L3 {b['l3']:,} bytes (board {t.board})"
        )
    return "; ".join(parts)
