"""Memory regimes (memory-regime) and the cycle model of the emitted schedule
on every example model and shipped board.

- Orderings: resident < spill < stream in training-step cycles (the optimizer
  step does not touch activations: resident = spill < stream there), double
  buffering <= single buffering of the same tiles, and no schedule below its
  roofline bound, whose parts are recomputed here from the board's numbers.
- Each regime trains mlp_small on the host emulation to onnxruntime-training's
  numbers, and the copies the cycle model counts are the copies the emulation
  counts (plus the harness's own L3 traffic, derived from the parameter sizes).
- `report --board --json --plot`, the regimes a board cannot hold, and the
  forced-regime error.
"""

from __future__ import annotations

import dataclasses
import json
import math
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from board_edits import edited, siracusa
from conftest import (
    example_dirs,
    load_expected,
    model_dirs,
    model_l1,
    run_cli,
    stacks_of,
    train_like_expected,
)
from xdsl.dialects.builtin import ModuleOp

from deeploy_mlir.config import CompileConfig
from deeploy_mlir.cost.schedule import FunctionCost, OpCost, schedule_cost
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.memory.report import (
    SCHEDULES,
    Compile,
    RegimeReport,
    Schedule,
    bufferize,
    compiler,
    regime_report,
)
from deeploy_mlir.passes.memory_regime import REGIMES, footprint, regime_need
from deeploy_mlir.targets.boards import Board, available_boards, load_board

pytestmark = pytest.mark.usefixtures("fast_build")

EXAMPLES = example_dirs()
#: the models of examples/make_models.py (conv, pooling, transformer ops)
MODELS = model_dirs()
BOARDS = available_boards()
#: an L1 small enough that every example tiles into several tiles per op, so
#: that double buffering has copies to overlap
SMALL_L1 = 2048


def _compiler(module: ModuleOp, board: str, l1: int, l2: int, l3: int) -> Compile:
    """memory.report.compiler for pulp-open with these budgets (`report`'s)."""
    cfg = CompileConfig(l1=l1, l2=l2, l3=l3, board=board, name_options=True, verify_each=False)
    return compiler(module, cfg)


@cache
def _model(d: Path):  # type: ignore[no-untyped-def]
    return import_model(str(d), None)


@cache
def _small_l1_modules(d: Path, l1: int = SMALL_L1) -> dict[tuple[str, str], ModuleOp]:
    """(regime, schedule) -> the module compiled at `l1`. Neither the tiles
    nor the regime's moves depend on the board (every regime fits every
    shipped board), so one compile serves every board."""
    b = load_board("siracusa")
    compile_ = _compiler(_model(d).module, "siracusa", l1, b.levels["L2"], b.levels["L3"])
    return {(r, s): compile_(r, SCHEDULES[s]) for r in REGIMES for s in ("single", "double")}


@cache
def _report(d: Path, board_name: str, l1: int | None) -> RegimeReport:
    """single and double buffering of every regime the board holds: at the
    board's L1 as `report --board` runs them, at SMALL_L1 from the shared
    compiles."""
    b = load_board(board_name)
    module = _model(d).module
    l2, l3 = b.levels["L2"], b.levels["L3"]
    if l1 is None:
        compile_ = _compiler(module, board_name, b.levels["L1"], l2, l3)
    else:
        modules = _small_l1_modules(d)

        def compile_(regime: str, s: Schedule) -> ModuleOp:
            name = next(k for k, v in SCHEDULES.items() if v == s)
            return modules[(regime, name)]

    return regime_report(
        bufferize(module), b, l2, l3, "auto", compile_, schedules=("single", "double")
    )


@pytest.mark.parametrize("d", MODELS, ids=[d.name for d in MODELS])
def test_model_orderings_and_bounds_on_every_board(d: Path) -> None:
    """The orderings of test_orderings_and_bounds for the conv and transformer
    models: resident < spill < stream, double <= single buffering (the same
    copies and kernels), and every schedule at or above its roofline bound,
    on every shipped board (one compile per regime and schedule serves all)."""
    modules = _small_l1_modules(d, model_l1(d))
    for board_name in BOARDS:
        b = load_board(board_name)

        def compile_(regime: str, s: Schedule) -> ModuleOp:
            name = next(k for k, v in SCHEDULES.items() if v == s)
            return modules[(regime, name)]

        rep = regime_report(
            bufferize(_model(d).module),
            b,
            b.levels["L2"],
            b.levels["L3"],
            "auto",
            compile_,
            schedules=("single", "double"),
        )
        assert set(rep.costs) == set(REGIMES), board_name
        for s in ("single", "double"):
            cyc = {r: rep.costs[r][s]["train"].cycles for r in REGIMES}
            assert cyc["resident"] < cyc["spill"] < cyc["stream"], (board_name, s, cyc)
        for r in REGIMES:
            for k in ("train", "optimizer"):
                single, double = rep.costs[r]["single"][k], rep.costs[r]["double"][k]
                assert double.cycles <= single.cycles, (board_name, r, k)
                assert double.hops == single.hops
                for c in (single, double):
                    t = c.timeline
                    assert t.total >= t.roofline == max(t.compute_busy, *t.dma_busy.values())


def _check_bound(c: FunctionCost, board: Board) -> None:
    """total >= roofline = max(compute, busiest engine); compute recomputed
    from each op's MACs, output elements, kernel calls, cold calls and rows
    and the board's throughput, cycles per output, per call and per cold
    call (the examples here: one kernel family per op)."""
    t = c.timeline
    assert t.roofline == max(t.compute_busy, *t.dma_busy.values())
    assert t.total >= t.roofline
    assert t.ratio == pytest.approx(t.total / t.roofline)
    assert set(t.dma_busy) == set(board.engines)
    compute = 0
    for o in c.ops:
        fam = o.family
        assert fam == _FAMILY_OF[o.label.split(" #")[0]]
        per_call = o.macs // o.calls if o.calls else 0
        k = board.kernels[fam]
        # the busiest core's share of the work (its MACs / all MACs): the
        # gemms' and the loss's splits recomputed here from the op's rows
        share = _share(o, board.cores)
        thr = Fraction(repr(k.macs_per_cycle_per_core)) / share
        outs = o.outputs // o.calls if o.calls else 0
        compute += o.calls * (o.forks * k.call + math.ceil(per_call / thr))
        compute += o.calls * math.ceil(outs * share * Fraction(repr(k.per_output)))
        compute += o.cold * k.cold
    assert t.compute_busy == compute


def _share(o: OpCost, cores: int) -> Fraction:
    """The busiest core's share the schedule recorded for `o`: an even
    split (1 / cores) unless its kernel splits rows or gemm tiles (the gemms,
    the loss and the sums: cost/kernels.py `Split`, whose values
    tests/test_cost_events.py derives by hand), never below an even split."""
    assert o.share is not None
    if o.family not in ("gemm", "loss", "reduce_sum"):
        assert o.share == Fraction(1, cores), o
    assert Fraction(1, cores) <= o.share <= 1, o
    return o.share


#: the kernel family of each op of the examples (by the label's op name)
_FAMILY_OF = {
    "gemm": "gemm",
    "relu": "elementwise",
    "relu_grad": "elementwise",
    "accumulate": "elementwise",
    "reduce_sum": "reduce_sum",
    "softmax_cross_entropy_loss": "loss",
    "softmax_cross_entropy_loss_grad": "loss",
    "sgd": "optimizer",
}


@pytest.mark.parametrize("l1", [None, SMALL_L1], ids=["board_l1", f"l1_{SMALL_L1}"])
@pytest.mark.parametrize("board_name", BOARDS)
@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_orderings_and_bounds(d: Path, board_name: str, l1: int | None) -> None:
    rep = _report(d, board_name, l1)
    board = rep.board
    # the examples are tiny next to any board's L2: every regime fits
    assert set(rep.costs) == set(REGIMES)
    cyc = {
        r: {s: {k: c.cycles for k, c in by.items()} for s, by in rep.costs[r].items()}
        for r in REGIMES
    }
    for s in ("single", "double"):
        assert cyc["resident"][s]["train"] < cyc["spill"][s]["train"] < cyc["stream"][s]["train"]
        # the optimizer step reads weights and gradients only
        assert cyc["resident"][s]["optimizer"] == cyc["spill"][s]["optimizer"]
        assert cyc["spill"][s]["optimizer"] < cyc["stream"][s]["optimizer"]
    for r in REGIMES:
        for k in ("train", "optimizer"):
            single, double = rep.costs[r]["single"][k], rep.costs[r]["double"][k]
            assert double.cycles <= single.cycles
            # the same copies and kernels, only their overlap differs --
            # except the L2 -> L1 fetches of loop-invariant input tiles,
            # which double buffering issues once per loop (dma-multibuffer)
            fetch = "L2->L1"
            assert {h: v for h, v in double.hops.items() if h != fetch} == {
                h: v for h, v in single.hops.items() if h != fetch
            }
            if fetch in single.hops:
                got, base = double.hops[fetch], single.hops[fetch]
                assert all(a <= b for a, b in zip(got, base, strict=True))
            assert double.timeline.roofline <= single.timeline.roofline
            for c in (single, double):
                _check_bound(c, board)
    doc = rep.regimes_doc()
    assert set(doc) == set(REGIMES)
    for r, v in doc.items():
        assert set(v) == {"single", "double", "bound"}
        for s in ("single", "double"):
            assert v[s] == {k: rep.costs[r][s][k].cycles for k in ("train", "optimizer")}
            assert all(v[s][k] >= v["bound"][k] for k in ("train", "optimizer"))


def test_double_buffering_overlaps_something() -> None:
    """Not only <=: where double buffering keeps an op's two-buffer tiles,
    overlapping their copies with the kernels saves cycles. Since tile-
    select keeps the single-buffered tiles of an op when the cycle model
    finds them faster (at cct's model_l1 it now does for every op), the
    fallback is turned off here (bench/gvsoc.py's "forced"). Compared at the
    same tiles: double buffering's pipeline with and without dma-multibuffer
    (bench/gvsoc.py's single@double), the same copies but the fetches of
    loop-invariant tiles, made once with double buffering. The ops whose
    tiles sit on a ring (dma.slot) wait less for DMA in every regime; the
    step is faster where nothing else bounds it (all in L2). With
    activations in L3 (spill, stream), the cycles saved may go to the next
    op's wait for the L3 engine, whose queue (run in issue order) then
    decides when the step ends: <= there."""
    from deeploy_mlir.dialects import dma
    from deeploy_mlir.dialects import training as T
    from deeploy_mlir.memory.buffers import step_functions
    from deeploy_mlir.passes.dma_multibuffer import DmaMultibuffer
    from deeploy_mlir.pipeline import pipeline, run_pipeline

    def ring_ops(m: ModuleOp) -> set[str]:
        """The labels (the cost model's "<op> #k") of the training step's
        compute ops inside a loop that holds a ring."""
        fn = next(f for f in step_functions(m) if f.sym_name.data == "training_step")
        out: set[str] = set()
        k = 0
        for o in fn.walk():
            if not isinstance(o, T.TrainingComputeOp):
                continue
            p = o.parent_op()
            while p is not None and p is not fn:
                if any(isinstance(x, dma.SlotOp) for x in p.walk()):
                    out.add(f"{o.name.removeprefix('training.')} #{k}")
                    break
                p = p.parent_op()
            k += 1
        return out

    d = next(m for m in MODELS if m.name == "cct")
    b = load_board("siracusa")
    base = CompileConfig(
        l1=model_l1(d),
        l2=b.levels["L2"],
        l3=b.levels["L3"],
        board="siracusa",
        name_options=True,
        verify_each=False,
        tiling="tiled",
        buffering="double",
    )
    for r in REGIMES:
        passes = pipeline(dataclasses.replace(base, regime=r))  # type: ignore[arg-type]
        # every op double-buffered: tile-select's fallback to one buffer off
        passes = tuple(
            dataclasses.replace(p, fallback=False) if p.name == "tile-select" else p for p in passes
        )
        assert any(isinstance(p, DmaMultibuffer) for p in passes)
        cost = {}
        rings: set[str] = set()
        for s, ps in (
            ("double", passes),
            ("single", tuple(p for p in passes if not isinstance(p, DmaMultibuffer))),
        ):
            m = _model(d).module.clone()
            run_pipeline(m, ps, verify_each=False)
            # a ring (dma.slot) only where dma-multibuffer double-buffered a tile
            assert ("dma.slot" in str(m)) == (s == "double"), (r, s)
            if s == "double":
                rings = ring_ops(m)
            cost[s] = schedule_cost(m, b)["train"]
        # the same copies (but the L2 -> L1 fetches of loop-invariant input
        # tiles, which double buffering issues once per loop)
        fetch = "L2->L1"
        dh, sh = cost["double"].hops, cost["single"].hops
        assert {h: v for h, v in dh.items() if h != fetch} == {
            h: v for h, v in sh.items() if h != fetch
        }, r
        assert all(a <= b for a, b in zip(dh[fetch], sh[fetch], strict=True)), r
        assert rings, r
        stall = {s: sum(o.stall for o in c.ops if o.label in rings) for s, c in cost.items()}
        assert stall["double"] < stall["single"], (r, stall)
        assert cost["double"].cycles <= cost["single"].cycles, r
        if r == "resident":
            assert cost["double"].cycles < cost["single"].cycles, r


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_footprint_by_kind(d: Path) -> None:
    exp = load_expected(d)
    param_bytes = sum(np.array(v, dtype=np.float32).nbytes for v in exp["params"].values())
    data = np.load(d / "data.npz")
    n_mb = exp["steps"] * exp["accum"]
    input_bytes = sum(data[k].nbytes // n_mb for k in data.files)
    fp = footprint(bufferize(_model(d).module))
    assert fp["weights"] == fp["gradients"] == param_bytes
    assert fp["inputs"] == input_bytes
    assert fp["optimizer_state"] == 4  # the learning rate
    assert fp["activations"] > 0


def _needs(d: Path) -> dict[str, tuple[int, int]]:
    m = bufferize(_model(d).module)
    return {r: (regime_need(m, r).l2, regime_need(m, r).l3) for r in REGIMES}


def test_needs_are_what_the_pipeline_plans(tmp_path: Path) -> None:
    """A regime's need is the L2/L3 arena its compile really plans (kernels on
    L2: no tile or stage buffer comes on top), and spilling and streaming each
    need less L2 than the regime before."""
    d = EXAMPLES[0]
    needs = _needs(d)
    assert needs["resident"][0] > needs["spill"][0] > needs["stream"][0]
    assert needs["resident"][1] == 0 < needs["spill"][1] < needs["stream"][1]
    for r in REGIMES:
        out = tmp_path / r
        res = run_cli("lower", d, "-o", out, "--tiling", "none", "--regime", r)
        assert res.code == 0, res.err
        man = json.loads((out / "manifest.json").read_text())
        assert man["version"] == 1 and man["regime"] == r
        assert man["memory"]["L2"]["arena_bytes"] == needs[r][0]
        assert man["memory"]["L3"]["arena_bytes"] == needs[r][1]
        levels = {b["kind"]: b["level"] for b in man["buffers"] if b["kind"] != "stage"}
        assert levels["weight"] == levels["gradient"] == ("L3" if r == "stream" else "L2")
        assert levels["activation"] == ("L2" if r == "resident" else "L3")
        assert levels["input"] == "L2"


def test_forced_regime_the_budget_cannot_hold(tmp_path: Path) -> None:
    d = EXAMPLES[0]
    need = _needs(d)["resident"][0]
    r = run_cli("lower", d, "-o", "/nonexistent/out", "--regime", "resident", "--l2", need - 1)
    assert r.code == 2
    assert r.err.splitlines() == [
        f"deeploy-mlir: error: memory-regime: regime 'resident' needs {need} bytes of L2 but "
        f"the L2 capacity is {need - 1} bytes (l2={need - 1})"
    ]
    # auto takes the next regime that fits
    out = tmp_path / "auto"
    r = run_cli("lower", d, "-o", out, "--tiling", "none", "--regime", "auto", "--l2", need - 1)
    assert r.code == 0, r.err
    assert json.loads((out / "manifest.json").read_text())["regime"] == "spill"


def test_report_json_plot_and_a_board_that_cannot_hold_resident(tmp_path: Path) -> None:
    """A Siracusa with an L2 just too small for the resident regime: the report
    leaves resident out and chooses spill; its numbers are the in-process
    model's; the PNG is written."""
    d = EXAMPLES[0]
    needs = _needs(d)
    l2 = needs["resident"][0] - 4
    assert needs["spill"][0] <= l2
    board_file = tmp_path / "small.yaml"
    import yaml

    # a board's L1 may not be larger than its L2
    l1 = min(siracusa()["levels"]["L1"], l2)
    board_file.write_text(yaml.safe_dump(edited(siracusa(), {"levels.L2": l2, "levels.L1": l1})))
    png = tmp_path / "cycles.png"
    # the board's L1 (at most its small L2) cannot hold the cluster stacks: the
    # L1 budget is given (the model's stacks plus the 2 KiB arena the test means)
    l1_opt = stacks_of(d) + 2048
    r = run_cli("report", d, "--board", board_file, "--json", "--plot", png, "--l1", l1_opt)
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["regime"] == "spill"
    assert set(doc["regimes"]) == {"spill", "stream"}
    assert doc["needs"]["resident"] == {"L2": needs["resident"][0], "L3": 0, "fits": False}
    for reg, v in doc["regimes"].items():
        assert set(v) == {"single", "double", "bound"}
        for s in v.values():
            assert set(s) == {"train", "optimizer"} and all(isinstance(x, int) for x in s.values())
        # every schedule of the report (untiled too) is at or above its bound
        for s, by in doc["schedules"][reg].items():
            assert s in SCHEDULES
            for c in by.values():
                assert c["cycles"] >= c["bound"] == max(c["compute_busy"], *c["dma_busy"].values())
    # the same numbers as the model run in-process on that board
    b = load_board(str(board_file))
    module = _model(d).module
    compile_ = _compiler(module, str(board_file), 2048, l2, b.levels["L3"])
    rep = regime_report(
        bufferize(module), b, l2, b.levels["L3"], "spill", compile_, ("single", "double")
    )
    assert rep.regimes_doc() == doc["regimes"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the text table names every regime and schedule
    r = run_cli("report", d, "--board", board_file, "--l1", l1_opt)
    assert r.code == 0, r.err
    assert "regime chosen: spill" in r.out and "resident  does not fit" in r.out
    for s in SCHEDULES:
        assert f"spill     {s}" in r.out


# --------------------------------------------------------------------------
# every regime trains mlp_small, and the model counts the copies the C makes


@pytest.mark.parametrize("regime", REGIMES)
def test_each_regime_trains_and_its_copies_are_the_models(regime: str, tmp_path: Path) -> None:
    d = EXAMPLES[0]
    got = train_like_expected(d, tmp_path, "--regime", regime)
    exp = load_expected(d)
    # the copies of one training and one optimizer step, as the model walks them
    board = load_board("siracusa")
    b = board.levels
    compile_ = _compiler(_model(d).module, "siracusa", b["L1"], b["L2"], b["L3"])
    from deeploy_mlir.cost.schedule import schedule_cost

    cost = schedule_cost(compile_(regime, SCHEDULES["double"]), board)
    n_mb, steps = exp["steps"] * exp["accum"], exp["steps"]
    want: dict[str, list[int]] = {}
    for k, times in (("train", n_mb), ("optimizer", steps)):
        for hop, (n, nbytes) in cost[k].hops.items():
            w = want.setdefault(hop, [0, 0])
            w[0] += times * n
            w[1] += times * nbytes
    dma = {h: [v["transfers"], v["bytes"]] for h, v in got["dma"].items() if v["transfers"]}
    # the harness's own L3 traffic when parameters live there: it writes their
    # initial values and zeroes the gradient buffers once, and reads the final
    # parameters to print them
    param_bytes = sum(np.array(v, dtype=np.float32).nbytes for v in exp["params"].values())
    if regime == "stream":
        assert dma.pop("L2->L3")[1] - want.pop("L2->L3")[1] == 2 * param_bytes
        assert dma.pop("L3->L2")[1] - want.pop("L3->L2")[1] == param_bytes
    assert dma == want
    if regime != "spill":
        # (stream: its L3 hops were compared above, less the harness's own)
        assert "L3->L2" not in want and "L2->L3" not in want
        return
    # spill, derived from mlp_small's graph (input B x I, fc1 H x I, fc2 O x H):
    # the training step's activations h1 = relu(fc1(x)) [B, H], the logits
    # [B, O], the log-probabilities [B, O], their gradient [B, O], fc2's bias
    # gradient [O], h1's gradient (fc2 backward, relu_grad in place) [B, H] and
    # fc1's bias gradient [H] live in L3. Each is stored once, after its last
    # writer (fc1's and fc2-backward's stores are overwritten unread by the
    # in-place relu's and relu_grad's: l3-overlap drops them), and none is
    # fetched back: at the board's L2 each reader reads the L2 buffer its
    # bytes were stored from (l3-overlap's forwarding, the default).
    h, i = np.shape(exp["params"]["fc1.weight"])
    o = np.shape(exp["params"]["fc2.weight"])[0]
    with np.load(d / "data.npz") as z:
        _, b, width = z["input"].shape
    assert np.shape(exp["params"]["fc2.weight"])[1] == h and width == i
    assert dma == {
        **{k: v for k, v in dma.items() if "L3" not in k},
        "L2->L3": [n_mb * 7, n_mb * 4 * (2 * b * h + 3 * b * o + o + h)],
    }
