"""Memory planning on the examples: no two live buffers overlap (checked from
the planned IR by the independent checker), greedy is within 1.05x of the
lower bound and matches Z3's exact minimum on these small graphs, and in-place
reuse saves memory without changing the numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import example_dirs, run_cli, train_like_expected
from xdsl.dialects import func
from xdsl.passes import ModulePass

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.training import ArenaViewOp
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.memory.planner import Buffer, check_no_overlap, lower_bound
from deeploy_mlir.passes.arena_plan import nbytes
from deeploy_mlir.pipeline import l2_pipeline, print_pipeline, run_pipeline

pytestmark = pytest.mark.usefixtures("fast_build")

EXAMPLES = example_dirs()


def planned(d: Path, pipeline: tuple[ModulePass, ...] = l2_pipeline()):
    model = import_model(d)
    run_pipeline(model.module, pipeline)
    return model.module


def lifetimes_from_ir(module) -> tuple[list[Buffer], dict[str, int]]:
    """Buffers and offsets read back from planned IR, with lifetimes derived
    here (not by the planner): arguments live throughout; a view from its
    definition to its last use; the functions run one after the other."""
    fns = [f for f in module.ops if isinstance(f, func.FuncOp)]
    total = sum(len(list(f.body.block.ops)) for f in fns) + 1
    bufs: dict[str, Buffer] = {}
    offsets: dict[str, int] = {}
    t0 = 0
    for f in fns:
        ops = list(f.body.block.ops)
        pos = {o: t0 + i for i, o in enumerate(ops)}
        for i, a in enumerate(f.args):
            info = T.arg_info(f, i)
            name, off = info.name, info.offset
            assert name is not None and off is not None
            bufs[name] = Buffer(name, nbytes(a.type), 0, total)
            offsets[name] = off
        for o in ops:
            if isinstance(o, ArenaViewOp):
                key = f"{f.sym_name.data}#{pos[o]}"
                last = max(pos[u.operation] for u in o.result.uses)
                bufs[key] = Buffer(key, nbytes(o.result.type), pos[o], last + 1)
                offsets[key] = o.offset.value.data
        t0 += len(ops)
    return list(bufs.values()), offsets


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
@pytest.mark.parametrize("inplace", [True, False])
def test_plans_are_valid_and_near_the_bound(d: Path, inplace: bool) -> None:
    module = planned(d, l2_pipeline(inplace))
    bufs, offsets = lifetimes_from_ir(module)
    assert check_no_overlap(bufs, offsets) == []
    planned_l2 = T.arena_of(module, "L2")
    assert planned_l2 is not None
    arena, bound = planned_l2.size_bytes, planned_l2.bound_bytes
    assert bound == lower_bound(bufs)
    assert max(offsets[b.name] + b.size for b in bufs) <= arena
    assert arena <= 1.05 * bound


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_greedy_equals_exact_on_the_examples(d: Path) -> None:
    greedy = T.arena_bytes(planned(d), "L2")
    m = planned(d, l2_pipeline(strategy="exact"))
    exact_l2 = T.arena_of(m, "L2")
    assert exact_l2 is not None and exact_l2.is_proven is True
    exact = exact_l2.size_bytes
    assert exact <= greedy
    assert greedy <= 1.05 * exact


def test_exact_beats_greedy_where_greedy_is_not_optimal() -> None:
    from deeploy_mlir.memory.planner import plan_exact, plan_greedy

    # Greedy, by hand: p(16) at 0; t(12, earlier start than q) at 0; q meets t
    # -> 12; r meets q only -> 0; s meets q [12,24) and r [0,8) -> 8 does not
    # fit below 12 -> 24; arena 32. The bound is 28 (at t=2: q + r + s), and
    # the exact plan reaches it (q at 0, r and s above it, t beside them).
    bufs = [
        Buffer("p", 16, 5, 7),
        Buffer("q", 12, 1, 4),
        Buffer("r", 8, 2, 3),
        Buffer("s", 8, 2, 3),
        Buffer("t", 12, 0, 2),
        Buffer("u", 4, 5, 8),
    ]
    g_off, g = plan_greedy(bufs)
    e_off, e, proven = plan_exact(bufs)
    assert check_no_overlap(bufs, e_off) == [] and check_no_overlap(bufs, g_off) == []
    assert proven
    assert (g, e, lower_bound(bufs)) == (32, 28, 28)


def test_exact_takes_greedy_at_the_bound_without_the_solver(monkeypatch) -> None:
    import z3

    from deeploy_mlir.memory.planner import plan_exact, plan_greedy

    def no_solver() -> None:
        raise AssertionError("Z3 asked although greedy is at the lower bound")

    monkeypatch.setattr(z3, "Optimize", no_solver)
    # a chain: each buffer meets only its neighbours; greedy stacks two at a time
    bufs = [Buffer("a", 16, 0, 2), Buffer("b", 8, 1, 3), Buffer("c", 16, 2, 4)]
    g_off, g = plan_greedy(bufs)
    e_off, e, proven = plan_exact(bufs)
    assert (g, e, proven, lower_bound(bufs)) == (24, 24, True, 24)
    assert e_off == g_off and check_no_overlap(bufs, e_off) == []


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_inplace_saves_memory_and_keeps_the_numbers(d: Path, tmp_path: Path) -> None:
    r = run_cli("report", d, "--json")
    assert r.code == 0, r.err
    rep = json.loads(r.out)
    on = rep["memory"]["L2"]["arena_bytes"]
    off = rep["inplace_off"]["memory"]["L2"]["arena_bytes"]
    assert 0 < on < off
    for lv in ("L1", "L2", "L3"):
        assert set(rep["memory"][lv]) >= {"arena_bytes", "bound_bytes"}
    assert {b["kind"] for b in rep["buffers"]} >= {"weight", "gradient", "activation", "input"}
    train_like_expected(d, tmp_path, "--pass-pipeline", print_pipeline(l2_pipeline(False)))
