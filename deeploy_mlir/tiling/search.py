"""The tile search: the best combination of an op's problem under a budget.

`solve_front` (the default) scans the (footprint, cycles) front of the op's
combinations (`model.pareto_candidates`) for the one that fits the budget
with the fewest cycles, then tiles: exact, as the front holds every
combination that could be the optimum under any budget. `solve_z3` gives Z3
one Boolean per combination of the front, so that the footprint constraint
and the objective are linear, and solves it in a fresh Z3 context under
Z3's deterministic resource limit; when the front's best entry fits the budget it
is the answer without Z3 (a `lower` whose ops all take this path does not
import z3). `solve_bruteforce` tries every combination (for tests).

Both return the same tiles whenever Z3 proves its optimum (the problem Z3
gets is that scan written as a pseudo-Boolean program; tests/test_tiling.py
compares them on every example and published op); Z3 costs 20-30 MiB of
memory per context and stops at its resource limit. `solver=z3` keeps it for
research on richer formulations.

A library module: tile-select imports it; it imports the model, numpy and
(lazily) z3.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deeploy_mlir.tiling.model import (
    MAX_COMBINATIONS,
    CostModel,
    Halo,
    Operand,
    combinations,
    footprints,
    pareto_candidates,
    tile_counts,
    with_halos,
)

#: Z3's resource limit per tile-select solve: a count of solver steps, the
#: same on every machine and load. The examples' and Deeploy's graphs need at
#: most ~15,000 per solve, a front of 3,000 combinations ~300,000; this is
#: about 5 s of solving on one 2020s x86 core (the wall-clock limit it replaces)
DEFAULT_RLIMIT = 5_000_000


def _thinned(complete: bool) -> str:
    return "" if complete else f"candidate sizes thinned to {MAX_COMBINATIONS:,} combinations"


def solve_front(
    dims: Sequence[int],
    whole: set[int],
    ops: Sequence[Operand],
    budget: int,
    model: CostModel,
    hs: Sequence[Halo] = (),
) -> tuple[list[int], str]:
    """(tiles, why the result may not be the optimum: "" when it is, the
    thinned candidates otherwise): the combination of the front that fits
    `budget` with the fewest cycles, then the fewest tiles (the front's
    (cycles, tiles) pairs are distinct, so the choice is unique)."""
    c = pareto_candidates(dims, whole, ops, model, hs)
    ids = [i for i, f in enumerate(c.foot) if f <= budget]
    if not ids:
        raise ValueError("infeasible")
    best = min(ids, key=lambda i: (c.cost[i], c.count[i]))
    return c.tiles[best], _thinned(c.complete)


def solve_z3(
    dims: Sequence[int],
    whole: set[int],
    ops: Sequence[Operand],
    budget: int,
    model: CostModel,
    rlimit: int,
    hs: Sequence[Halo] = (),
) -> tuple[list[int], str]:
    """(tiles, why the search stopped before proving the optimum: "" when it
    proved it; "rlimit N" when Z3 reached its resource limit, the thinned
    candidates otherwise). The input dims of `hs` are not chosen: each
    combination sets them from its output tiles (footprint and cycles then
    count the halos).

    Each dim's tile size ranges over its candidates (the smallest size per
    tile count); each combination on the (footprint, objective) front
    (`pareto_candidates`) is one Boolean of a pseudo-Boolean problem whose
    footprint constraint and cycle objective are linear in the Booleans, so
    Z3's optimizer solves it exactly. When the combinations of a large op
    would exceed MAX_COMBINATIONS, each dim keeps a spread subset of its
    candidates and the result is reported as not proven.

    Each solve has its own Z3 context, so its work (and where `rlimit`, Z3's
    deterministic resource limit, stops it; 0 = none) does not depend on what
    was solved before in the process."""
    c = pareto_candidates(dims, whole, ops, model, hs)
    # a combination above the budget is never chosen: Z3 gets the others
    # (fewer Booleans; the footprint constraint still holds them to it)
    ids = [i for i, f in enumerate(c.foot) if f <= budget]
    if not ids:
        raise ValueError("infeasible")
    # the best combination of all (fewest cycles, then tiles) fits: it is the
    # optimum under the budget too, and Z3 (its import and context: about
    # 30 MiB and a few hundred ms) is not needed
    best = min(range(len(c.foot)), key=lambda i: (c.cost[i], c.count[i]))
    if c.foot[best] <= budget:
        return c.tiles[best], _thinned(c.complete)
    import z3

    zc = z3.Context()
    opt = z3.Optimize(ctx=zc)
    # Ctrl-C is Python's to handle (Z3's own handler would swallow it, or kill the process)
    opt.set(ctrl_c=False)
    if rlimit:
        opt.set("rlimit", rlimit)
    pick = [z3.Bool(f"c{i}", zc) for i in ids]
    opt.add(z3.PbEq([(b, 1) for b in pick], 1))
    opt.add(z3.PbLe([(b, c.foot[i]) for b, i in zip(pick, ids, strict=True)], budget))
    # one objective: the rank of each combination by cycles, then tile count
    # (the front's (cycles, count) pairs are distinct, so ranks keep the
    # order exactly while the weights stay small)
    order = sorted(range(len(pick)), key=lambda k: (c.cost[ids[k]], c.count[ids[k]]))
    rank = {k: r for r, k in enumerate(order)}
    opt.minimize(z3.Sum([z3.If(b, rank[k], 0) for k, b in enumerate(pick)]))
    r = opt.check()
    if r == z3.unsat:
        raise ValueError("infeasible")
    why = [] if r == z3.sat else [f"rlimit {rlimit}" if rlimit else f"Z3: {opt.reason_unknown()}"]
    if not c.complete:
        why.append(_thinned(False))
    chosen: list[int] = []
    try:
        # after a stop at the rlimit: the best model found so far, if any
        # (a search stopped early may leave none, or one that is not a choice)
        m = opt.model()
        chosen = [k for k, b in enumerate(pick) if z3.is_true(m.eval(b, model_completion=True))]
    except z3.Z3Exception:
        pass
    if len(chosen) != 1 or c.foot[ids[chosen[0]]] > budget:
        assert r != z3.sat, "Z3 proved an optimum that is not one fitting combination"
        # no choice found: the smallest tiles (they fit)
        smallest = with_halos([size if d in whole else 1 for d, size in enumerate(dims)], hs)
        return smallest, "; ".join(why)
    return c.tiles[ids[chosen[0]]], "; ".join(why)


def solve_bruteforce(
    dims: Sequence[int],
    whole: set[int],
    ops: Sequence[Operand],
    budget: int,
    model: CostModel,
    hs: Sequence[Halo] = (),
) -> list[int] | None:
    """Every combination of tile sizes, not only the candidates, and no front
    (for tests on small ops): the first that fits with the fewest cycles,
    then tiles."""
    ranges = [[size] if d in whole else range(1, size + 1) for d, size in enumerate(dims)]
    t = combinations(ranges, dims, hs)
    t = t[footprints(t, ops) <= budget]
    if not len(t):
        return None
    # lexsort is stable: among equal keys the first combination wins
    best = np.lexsort((tile_counts(dims, t, hs), model.objective(dims, t, ops, hs)))[0]
    return [int(x) for x in t[best]]
