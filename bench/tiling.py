"""Tile selection time and the quality of the chosen tiles.

For each bundled example and each L1 budget, prints the Z3 solver time, the
L1 arena, and the modeled copy cycles of the chosen tiles against two
baselines measured in the same run: the untiled plan (one tile per tensor,
where it fits) and a naive plan (the largest power-of-two tile of the first
loop dim that fits, everything else whole).

    python bench/tiling.py
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from xdsl.dialects import func

from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.passes.tile_select import TileSelect
from deeploy_mlir.pipeline import l2_pipeline, make_context, run_pipeline
from deeploy_mlir.tiling.model import CostModel, footprint, tile_operands, whole_dims

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = (8192, 16384, 65536, 262144)


def naive(dims: list[int], whole: set[int], ops, budget: int) -> list[int] | None:
    tiles = list(dims)
    free = [d for d in range(len(dims)) if d not in whole]
    if footprint(tiles, ops, 1) <= budget:
        return tiles
    if not free:
        return None
    d0 = free[0]
    t = 1 << int(math.log2(dims[d0]))
    while t >= 1:
        tiles[d0] = t
        if footprint(tiles, ops, 1) <= budget:
            return tiles
        t //= 2
    return None


def main() -> None:
    model = CostModel()
    print(
        f"{'example':10} {'L1':>7} {'Z3 ms':>7} {'ops':>4} {'cycles':>9} "
        f"{'untiled':>9} {'naive':>9} {'naive/Z3':>8}"
    )
    for d in sorted(p.parent for p in (ROOT / "examples").glob("*/expected.json")):
        for budget in BUDGETS:
            m = import_model(d)
            run_pipeline(m.module, l2_pipeline())
            ops = [
                o
                for f in m.module.ops
                if isinstance(f, func.FuncOp)
                for o in f.body.block.ops
                if isinstance(o, T.TrainingComputeOp) and o.is_buffer_form
            ]
            problems = [
                (list(o.iteration_space().dims), whole_dims(o), tile_operands(o)) for o in ops
            ]
            t0 = time.perf_counter()
            TileSelect(l1=budget).apply(make_context(), m.module)
            ms = (time.perf_counter() - t0) * 1000
            chosen = [
                list(o.tile_sizes())
                for f in m.module.ops
                if isinstance(f, func.FuncOp)
                for o in f.body.block.ops
                if hasattr(o, "tile_sizes")
            ]
            z3_cycles = sum(
                model.cycles(p[0], t, p[2]) for p, t in zip(problems, chosen, strict=True)
            )
            untiled = [p[0] if footprint(p[0], p[2], 1) <= budget else None for p in problems]
            un = (
                sum(model.cycles(p[0], t, p[2]) for p, t in zip(problems, untiled, strict=True))
                if all(untiled)
                else float("nan")
            )
            nv = [naive(*p, budget) for p in problems]
            nc = (
                sum(model.cycles(p[0], t, p[2]) for p, t in zip(problems, nv, strict=True))
                if all(nv)
                else float("nan")
            )
            print(
                f"{d.name:10} {budget:>7} {ms:>7.0f} {len(ops):>4} {z3_cycles:>9.0f} "
                f"{un:>9.0f} {nc:>9.0f} {nc / z3_cycles:>8.3f}"
            )


if __name__ == "__main__":
    main()
