"""The event-driven cycle model (deeploy_mlir.cost.events): hand-computed
schedules, exact arithmetic, bad schedules, and properties over random ones.

Expected cycles are derived here from the board's numbers, never pasted from
the model's output."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deeploy_mlir.cost.events import (
    Compute,
    Event,
    Transfer,
    Wait,
    compute_cycles,
    simulate,
    transfer_cycles,
)
from deeploy_mlir.targets.boards import Board, Engine, available_boards, load_board


def plain(board: Board) -> Board:
    """`board` without the per-transfer issue and per-call cycles, and with
    unbounded queues and whole copies (the arithmetic these hand computations
    check; test_issue_and_call_cycles and the queue tests check the rest)."""
    return replace(
        board,
        engines={
            n: replace(e, issue=0, copies=(), queue=None, chunk=0, row_transfers=False)
            for n, e in board.engines.items()
        },
        kernels={n: replace(k, call=0, per_output=0.0, cold=0) for n, k in board.kernels.items()},
    )


SIRACUSA = plain(load_board("siracusa"))
BOARDS = [plain(load_board(n)) for n in available_boards()]


def dma(board: Board, engine: str, nbytes: int) -> int:
    """setup + ceil(bytes / bandwidth), from the board's numbers."""
    e = board.engines[engine]
    return e.setup + math.ceil(nbytes / e.bandwidth)


def mac(board: Board, family: str, macs: int) -> int:
    """ceil(macs / (throughput * cores)), from the board's numbers."""
    return math.ceil(macs / (board.kernels[family].macs_per_cycle_per_core * board.cores))


# Sizes for which the float formulas above are exact (powers of two over the
# boards' power-of-two bandwidths and throughputs), plus an odd one.
IN, OUT, MACS = 16384, 4096, 262144


def test_the_numbers_are_the_boards() -> None:
    for b in BOARDS:
        for name, e in b.engines.items():
            assert dma(b, name, IN) == transfer_cycles(e, IN)
        assert mac(b, "gemm", MACS) == compute_cycles(b, "gemm", MACS)
        per_cycle = Fraction(repr(b.kernels["gemm"].macs_per_cycle_per_core)) * b.cores
        assert compute_cycles(b, "gemm", MACS + 1) == math.ceil((MACS + 1) / per_cycle)
    # 8 bytes a cycle (gap9_evk's estimate): a partial beat is a whole cycle
    gap9 = plain(load_board("gap9_evk"))
    assert gap9.engines["mchan"].bandwidth == 8.0
    assert dma(gap9, "mchan", IN + 1) == dma(gap9, "mchan", IN) + 1


def test_single_buffered_two_op_schedule() -> None:
    """Transfer in, wait, compute, transfer out, wait: nothing overlaps."""
    b = SIRACUSA
    t = simulate(
        b,
        [
            Transfer("mchan", IN, "in"),
            Wait("in"),
            Compute("gemm", MACS),
            Transfer("mchan", OUT, "out"),
            Wait("out"),
        ],
    )
    d_in, c, d_out = dma(b, "mchan", IN), mac(b, "gemm", MACS), dma(b, "mchan", OUT)
    assert t.total == d_in + c + d_out
    assert t.dma_busy == {"mchan": d_in + d_out, "ram": 0}
    assert t.compute_busy == c
    assert t.roofline == max(c, d_in + d_out)
    assert t.ratio == t.total / t.roofline


@pytest.mark.parametrize("b", BOARDS, ids=[b.name for b in BOARDS])
def test_two_ops_on_two_engines(b: Board) -> None:
    """Op 1 (a gemm) runs on a tile fetched by the cluster DMA while op 2's
    weights stream in from L3; op 2 (elementwise) needs them in L1, so their
    L2 -> L1 copy queues behind op 1's write-back on the cluster DMA."""
    w = 2048
    events: list[Event] = [
        Transfer("ram", w, "w"),  # op 2's weights, L3 -> L2, issued first
        Transfer("mchan", IN, "x"),  # op 1's input, L2 -> L1
        Wait("x"),
        Compute("gemm", MACS),
        Transfer("mchan", OUT, "y"),  # op 1's output, L1 -> L2
        Wait("w"),
        Transfer("mchan", w, "w1"),  # op 2's weights, L2 -> L1
        Wait("w1"),
        Compute("elementwise", OUT),
        Wait("y"),
    ]
    d_ram, d_x, d_y, d_w1 = (
        dma(b, "ram", w),
        dma(b, "mchan", IN),
        dma(b, "mchan", OUT),
        dma(b, "mchan", w),
    )
    c1, c2 = mac(b, "gemm", MACS), mac(b, "elementwise", OUT)
    after_op1 = d_x + c1  # the cluster, and when y is issued (mchan is idle by then)
    w1_start = max(after_op1, d_ram, after_op1 + d_y)  # issued after the wait, behind y
    t = simulate(b, events)
    assert t.total == w1_start + d_w1 + c2
    assert t.dma_busy == {"mchan": d_x + d_y + d_w1, "ram": d_ram}
    assert t.compute_busy == c1 + c2
    assert t.roofline == max(c1 + c2, d_x + d_y + d_w1, d_ram)


@pytest.mark.parametrize("macs", [MACS, MACS // 64], ids=["compute_bound", "dma_bound"])
def test_double_buffered_second_transfer_overlaps_compute(macs: int) -> None:
    """Two tiles: the second tile's input is copied while the first computes.
    Its wait ends when both the copy and the first compute are done."""
    b = SIRACUSA
    single: list[Event] = [
        Transfer("mchan", IN, "in0"),
        Wait("in0"),
        Compute("gemm", macs),
        Transfer("mchan", IN, "in1"),
        Wait("in1"),
        Compute("gemm", macs),
        Transfer("mchan", OUT, "out"),
        Wait("out"),
    ]
    double: list[Event] = [
        Transfer("mchan", IN, "in0"),
        Wait("in0"),
        Transfer("mchan", IN, "in1"),  # issued before the first compute
        Compute("gemm", macs),
        Wait("in1"),
        Compute("gemm", macs),
        Transfer("mchan", OUT, "out"),
        Wait("out"),
    ]
    d, c, d_out = dma(b, "mchan", IN), mac(b, "gemm", macs), dma(b, "mchan", OUT)
    s, t = simulate(b, single), simulate(b, double)
    assert s.total == d + c + d + c + d_out
    # in1 runs on mchan from d to 2d while the cluster computes from d to d + c
    assert t.total == max(d + c, 2 * d) + c + d_out
    assert s.total - t.total == min(c, d)
    assert t.dma_busy == s.dma_busy == {"mchan": 2 * d + d_out, "ram": 0}
    assert t.compute_busy == s.compute_busy == 2 * c
    assert t.roofline == s.roofline == max(2 * c, 2 * d + d_out)
    assert 1 <= t.ratio < s.ratio


def test_engines_run_in_parallel_and_each_is_fifo() -> None:
    b = SIRACUSA
    t = simulate(
        b,
        [
            Transfer("ram", OUT, "w"),  # L3 -> L2
            Transfer("mchan", IN, "a"),  # L2 -> L1, meanwhile
            Transfer("mchan", IN, "b"),  # queued behind "a"
            Wait("b"),
            Compute("elementwise", 1024),
            Wait("w"),
        ],
    )
    d_ram, d = dma(b, "ram", OUT), dma(b, "mchan", IN)
    assert t.total == max(2 * d + mac(b, "elementwise", 1024), d_ram)
    assert t.dma_busy == {"mchan": 2 * d, "ram": d_ram}


def test_a_wait_covers_every_transfer_issued_on_its_token_so_far() -> None:
    b = SIRACUSA
    d_ram, d = dma(b, "ram", OUT), dma(b, "mchan", IN)
    both = [Transfer("ram", OUT, "t"), Transfer("mchan", IN, "t"), Wait("t")]
    assert simulate(b, [*both, Compute("gemm", 4)]).total == max(d_ram, d) + mac(b, "gemm", 4)
    # a transfer issued on the token after the wait is not covered by it
    later = [Transfer("mchan", IN, "t"), Wait("t"), Compute("gemm", 4), Transfer("mchan", IN, "t")]
    # the compute ends at d + 1, when the second copy is issued and starts
    assert simulate(b, later).total == d + mac(b, "gemm", 4) + d


def test_issuing_costs_nothing_and_the_end_waits_for_copies_in_flight() -> None:
    b = SIRACUSA
    c, d = mac(b, "gemm", 1 << 16), dma(b, "ram", 1 << 16)
    t = simulate(b, [Transfer("ram", 1 << 16, "x"), Compute("gemm", 1 << 16)])
    assert t.total == max(c, d)  # the compute starts at 0; the copy lands at d
    assert simulate(b, []).total == 0 and simulate(b, []).ratio == 1.0


def test_zero_bytes_cost_the_setup_and_zero_macs_cost_nothing() -> None:
    b = SIRACUSA
    t = simulate(b, [Transfer("mchan", 0, "z"), Wait("z"), Compute("loss", 0)])
    assert t.total == b.engines["mchan"].setup and t.compute_busy == 0


def test_arithmetic_is_exact() -> None:
    """0.7 B/cycle moves 21 bytes in exactly 30 cycles, although
    21 / 0.7 == 30.000000000000004 in floats. Huge sums stay exact ints."""
    e = Engine("slow", ("L3", "L2"), 0.7, 0, 1, False)
    assert 21 / 0.7 > 30 and transfer_cycles(e, 21) == 30
    half = dataclasses.replace(SIRACUSA.kernels["gemm"], macs_per_cycle_per_core=0.5)
    b = dataclasses.replace(SIRACUSA, cores=3, kernels={**SIRACUSA.kernels, "gemm": half})
    big = 10**30 * 3 * 5  # divisible by 0.5 MAC/cycle/core * 3 cores = 1.5
    assert compute_cycles(b, "gemm", big) == 10**31
    t = simulate(b, [Compute("gemm", big), Compute("gemm", big)])
    assert t.total == 2 * 10**31 and isinstance(t.total, int)


@pytest.mark.parametrize(
    ("events", "err"),
    [
        (
            [Transfer("idma", 8, "t")],
            "event 0: transfer on engine 'idma': board 'siracusa' has engines mchan, ram",
        ),
        ([Compute("gemn", 8)], "compute of family 'gemn': board 'siracusa' has kernels gemm, conv"),
        ([Transfer("mchan", 8, "t"), Wait("u")], "event 1: wait on token 'u' before any transfer"),
        ([Transfer("mchan", -1, "t")], "transfer on 'mchan' of -1 bytes: must be >= 0"),
        ([Compute("gemm", -1)], "compute of family 'gemm' with -1 MACs: must be >= 0"),
    ],
    ids=[
        "unknown_engine",
        "unknown_family",
        "wait_before_transfer",
        "negative_bytes",
        "negative_macs",
    ],
)
def test_a_bad_schedule_is_a_value_error(events: list[Event], err: str) -> None:
    with pytest.raises(ValueError, match=re.escape(err)):
        simulate(SIRACUSA, events)


# --------------------------------------------------------------------------
# properties over random schedules


@st.composite
def schedules(draw: st.DrawFn) -> tuple[Board, list[Event]]:
    """A board and a schedule where every wait names an issued token and no
    token is reissued after a wait on it (as dma.copy's fresh tokens)."""
    board = draw(st.sampled_from(BOARDS))
    engines, families = sorted(board.engines), sorted(board.kernels)
    events: list[Event] = []
    open_tokens: list[str] = []  # issued, not yet waited on
    issued: list[str] = []
    for _ in range(draw(st.integers(0, 24))):
        kind = draw(st.sampled_from(["transfer", "wait", "compute"]))
        if kind == "transfer":
            token = draw(st.sampled_from([*open_tokens, f"t{len(issued)}"]))
            if token not in issued:
                issued.append(token)
                open_tokens.append(token)
            nbytes = draw(st.integers(0, 1 << 20))
            events.append(Transfer(draw(st.sampled_from(engines)), nbytes, token))
        elif kind == "wait" and issued:
            token = draw(st.sampled_from(issued))
            if token in open_tokens:
                open_tokens.remove(token)
            events.append(Wait(token))
        else:
            events.append(Compute(draw(st.sampled_from(families)), draw(st.integers(0, 1 << 22))))
    return board, events


@given(schedules())
def test_total_is_at_least_the_roofline_and_at_most_everything_in_series(
    case: tuple[Board, list[Event]],
) -> None:
    board, events = case
    t = simulate(board, events)
    assert t.total >= t.roofline == max(t.compute_busy, *t.dma_busy.values())
    assert t.ratio >= 1
    # some resource is busy at every cycle: the cluster only idles in a wait,
    # and what it waits for keeps an engine busy
    assert t.total <= t.compute_busy + sum(t.dma_busy.values())


@given(schedules(), st.data())
def test_moving_a_wait_later_never_increases_the_total(
    case: tuple[Board, list[Event]], data: st.DataObject
) -> None:
    board, events = case
    waits = [i for i, e in enumerate(events) if isinstance(e, Wait)]
    if not waits:
        return
    i = data.draw(st.sampled_from(waits))
    j = data.draw(st.integers(i, len(events) - 1))
    moved = list(events)
    moved.insert(j, moved.pop(i))
    assert simulate(board, moved).total <= simulate(board, events).total


def test_why_tokens_are_not_reissued_after_their_wait() -> None:
    """Moved past a transfer reissued on its token, a wait covers that
    transfer too, and can end later: the property above needs fresh tokens."""
    b = SIRACUSA
    copy_a, again_a = Transfer("mchan", IN, "a"), Transfer("mchan", IN, "a")
    events: list[Event] = [copy_a, Wait("a"), again_a, Compute("gemm", MACS)]
    moved: list[Event] = [copy_a, again_a, Wait("a"), Compute("gemm", MACS)]
    d, c = dma(b, "mchan", IN), mac(b, "gemm", MACS)
    assert simulate(b, events).total == d + max(c, d)
    assert simulate(b, moved).total == 2 * d + c


def test_issue_and_call_cycles() -> None:
    """A transfer costs the cluster the engine's `issue` cycles before it
    starts; a compute costs `call` per kernel call, and with `units` the
    busiest core's whole units."""
    real = load_board("siracusa")
    e, k = real.engines["mchan"], real.kernels["gemm"]
    assert e.issue > 0 and k.call > 0
    t = simulate(real, [Transfer("mchan", 1024, "a"), Wait("a")])
    assert t.total == e.issue + e.setup + math.ceil(Fraction(1024) / Fraction(repr(e.bandwidth)))
    per_core = Fraction(repr(k.macs_per_cycle_per_core))
    # 2 calls of 8 rows x 100 MACs on 8 cores: one row per core
    assert compute_cycles(real, "gemm", 800, 2, 8) == 2 * k.call + math.ceil(100 / per_core)
    # 9 rows: one core does 2 rows
    assert compute_cycles(real, "gemm", 900, 1, 9) == k.call + math.ceil(200 / per_core)
    # 4 rows: half the cores idle, the same time as 4 of 8 rows
    assert compute_cycles(real, "gemm", 400, 1, 4) == compute_cycles(real, "gemm", 800, 1, 8)
    t = simulate(real, [Compute("gemm", 800, 2, 8), Transfer("mchan", 0, "b")])
    assert t.compute_busy == compute_cycles(real, "gemm", 800, 2, 8)
    assert t.total == t.compute_busy + e.issue + e.setup


def test_copy_kinds_outputs_and_cold_calls() -> None:
    """A transfer of a kind the engine gives costs that kind's setup and
    bandwidth (no kind: the engine's); a compute costs per output element
    of the busiest core and per cold call on top of the calls and MACs."""
    real = load_board("siracusa")
    e, k = real.engines["mchan"], real.kernels["conv"]
    assert e.copies and k.per_output > 0 and k.cold > 0
    for kind, setup, bw in e.copies:
        t = simulate(real, [Transfer("mchan", 1000, "a", kind), Wait("a")])
        assert t.total == e.issue + setup + math.ceil(Fraction(1000) / Fraction(repr(bw)))
    t = simulate(real, [Transfer("mchan", 1000, "a"), Wait("a")])
    assert t.total == e.issue + e.setup + math.ceil(Fraction(1000) / Fraction(repr(e.bandwidth)))
    rate, po = Fraction(repr(k.macs_per_cycle_per_core)), Fraction(repr(k.per_output))
    # 800 outputs and 80,000 MACs on 8 cores: 100 and 10,000 per core
    warm = 2 * k.call + math.ceil(100 * po) + math.ceil(10000 / rate)
    assert compute_cycles(real, "conv", 80000, 2, 0, 800, 0) == warm
    assert compute_cycles(real, "conv", 80000, 2, 0, 800, 1) == warm + k.cold
    # rows split over the cores: 9 rows, the busiest core does 2 of them
    g = real.kernels["gemm"]
    rate, po = Fraction(repr(g.macs_per_cycle_per_core)), Fraction(repr(g.per_output))
    got = compute_cycles(real, "gemm", 900, 1, 9, 90, 0)
    assert got == g.call + math.ceil(20 * po) + math.ceil(200 / rate)
    t = simulate(real, [Compute("conv", 80000, 2, 0, 800, 1)])
    assert t.total == warm + k.cold


def _ram_board(**kw: object) -> Board:
    """SIRACUSA with its L3 engine at round numbers: 100 cycles setup, 1 byte
    a cycle, no per-kind costs, an unbounded queue, then `kw`."""
    ram = replace(
        SIRACUSA.engines["ram"],
        setup=100,
        bandwidth=1.0,
        issue=0,
        copies=(),
        queue=None,
        chunk=0,
        row_transfers=False,
    )
    return replace(SIRACUSA, engines={**SIRACUSA.engines, "ram": replace(ram, **kw)})


def test_a_bounded_queue_makes_the_cluster_wait_to_issue() -> None:
    """queue 0: the cluster waits for each copy (synchronous); queue 1: a copy
    is issued once the one before it has landed; unbounded: never waits.
    Copies of 900 bytes take 100 + 900 = 1,000 cycles; a compute of c."""
    c = mac(SIRACUSA, "gemm", MACS)
    ops: list[Event] = [
        Transfer("ram", 900, "a"),
        Transfer("ram", 900, "b"),
        Compute("gemm", MACS),
        Wait("a"),
        Wait("b"),
    ]
    # synchronous: 1,000 + 1,000 and then the compute
    assert simulate(_ram_board(queue=0), ops).total == 2000 + c
    # one in flight: b's issue waits for a (1,000), b flies under the compute
    assert simulate(_ram_board(queue=1), ops).total == 1000 + max(1000, c)
    # two or more, or unbounded: both fly under the compute
    for q in (2, 8, None):
        assert simulate(_ram_board(queue=q), ops).total == max(2000, c)


def test_chunks_and_rows_are_transfers_of_their_own() -> None:
    """A copy over `chunk` bytes is several transfers, a 2-D copy on an engine
    with `row_transfers` one per row: each pays the setup (100) and the
    cluster's issue (here 150 for each)."""
    b = _ram_board(chunk=1000)
    # 2,500 bytes: 1,000 + 1,000 + 500, three setups
    t = simulate(b, [Transfer("ram", 2500, "a", "in-1d"), Wait("a")])
    assert t.dma_busy["ram"] == 3 * 100 + 2500
    # 4 rows of 50 bytes: one transfer unless rows go apart
    assert simulate(b, [Transfer("ram", 200, "a", "in-2d", 4)]).dma_busy["ram"] == 300
    rows = _ram_board(row_transfers=True, issue=150, queue=8)
    t = simulate(rows, [Transfer("ram", 200, "a", "in-2d", 4), Wait("a")])
    assert t.dma_busy["ram"] == 4 * (100 + 50)
    # each row issued 150 cycles after the one before (the engine, 150 a
    # row, keeps up): the last one issued at 600 ends at 750
    assert t.total == 4 * 150 + 150
    # a full queue: with queue 1 each row is issued once the one before landed
    t = simulate(
        replace(rows, engines={**rows.engines, "ram": replace(rows.engines["ram"], queue=1)}),
        [Transfer("ram", 200, "a", "in-2d", 4), Wait("a")],
    )
    assert t.total == 4 * (150 + 150)


def test_gemm_and_unit_splits() -> None:
    """The busiest core's share as runtime_c/kernels/gemm.c and dm_chunk
    deal the work, derived by hand for 8 cores."""
    from deeploy_mlir.cost.kernels import Split, gemm_share

    # M a multiple of 32: rows, 8 of 64 to a core
    assert gemm_share(64, 64, 8) == Fraction(8, 64)
    # M = 43, N = 64: 11 x 16 = 176 tiles of 4 x 4, 22 to a core: 352
    # outputs of 2,752 (a row split would give 6 rows of 43)
    assert gemm_share(43, 64, 8) == Fraction(352, 2752)
    # M = 1 (or N below 4): rows, the one row on one core
    assert gemm_share(1, 32, 8) == 1
    assert gemm_share(10, 2, 8) == Fraction(2, 10)
    # M = 12, N = 12: 3 x 3 = 9 tiles, the busiest core 2 tiles = 32 of 144
    assert gemm_share(12, 12, 8) == Fraction(32, 144)
    # units: dm_chunk of 9 units, the busiest 2; of 0 or of 16: even
    assert Split("units", (0,)).share((9, 5), 8) == Fraction(2, 9)
    assert Split("units", (0, 1)).share((2, 8), 8) == Fraction(1, 8)
    # a batched product splits each product alone: the share of (M, N)
    assert Split("gemm", (1, 2)).share((4, 43, 64, 128), 8) == Fraction(352, 2752)
    real = load_board("siracusa")
    g = real.kernels["gemm"]
    rate = Fraction(repr(g.macs_per_cycle_per_core))
    got = compute_cycles(real, "gemm", 43 * 64 * 64, 1, share=Fraction(352, 2752))
    assert got == g.call + math.ceil(352 * 64 / rate)
