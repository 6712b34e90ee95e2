"""CompileConfig: what one compile is asked to do, built once from the command
line (deeploy_mlir.cli.options.config_of) and read by pipeline.pipeline(cfg)
and the commands (lower, run, test, report, minimal-l1, sweep).

No xdsl here: the CLI builds it before anything heavy is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Tiling = Literal["tiled", "untiled", "none"]
Buffering = Literal["single", "double", "double-l3"]
Level = Literal["L2", "L3"]
Regime = Literal["auto", "resident", "spill", "stream"]

#: the dropout masks' seed when --seed is not given (any fixed number: runs repeat)
DEFAULT_SEED = 20240229

TILINGS: tuple[Tiling, ...] = ("tiled", "untiled", "none")
BUFFERINGS: tuple[Buffering, ...] = ("single", "double", "double-l3")


@dataclass(frozen=True)
class CompileConfig:
    """One compile. Budgets are bytes; `l1` is the L1 arena's budget (the
    command line's --l1 minus `l1_stacks`, the L1 the cluster stacks take
    beside it). A budget of 0 is unchecked (the passes' default)."""

    target: str = "pulp-open"
    tiling: Tiling = "tiled"
    buffering: Buffering = "double"
    l1: int = 65536
    l1_stacks: int = 0
    l2: int = 0
    l3: int = 0
    #: where the parameters live (L3: all of them, staged through L2)
    weights: Level = "L2"
    #: where every tensor that lives across a step lives
    home: Level = "L2"
    #: memory-regime's regime (None: memory-home decides, from l2/weights/home)
    regime: Regime | None = None
    #: memory-regime's board, a shipped name or a YAML path (None: the target's)
    board: str | None = None
    #: transpose-fold first (matrix transposes folded into the products that
    #: read or write them)
    transpose_fold: bool = True
    #: training-inplace-alias (in-place reuse of buffers)
    inplace: bool = True
    #: accumulate-fuse after bufferization (gradients written straight into
    #: their accumulation buffers)
    accumulate_fuse: bool = True
    #: relu-fuse, after transpose-fold (ReluGrad reads the ReLU's output; a conv2d read only
    #: by a ReLU applies it at its store)
    relu_fuse: bool = True
    #: tile-select's search: the exact scan of the front, or Z3 (tiling/search.py)
    solver: Literal["front", "z3"] = "front"
    #: tile-select's Z3 resource limit with solver z3 (None: the pass's default)
    rlimit: int | None = None
    #: tile-select's buffers per L1 tile (None: 2 for tiled double buffering, else 1)
    tile_buffers: int | None = None
    #: name the command-line budget options (--l1, --l2, --l3) in arena-plan's errors
    name_options: bool = False
    #: --pass-pipeline: the passes to run instead of the ones above
    pass_pipeline: str | None = None
    # emission and running
    steps: int = 1
    accum: int = 1
    lr: float = 0.01
    l1_as_l2: bool = False
    verify_each: bool = True
    #: --seed: the dropout masks' (each dropout node and mini-batch its own stream)
    seed: int = DEFAULT_SEED
