"""Arena planning: the greedy planner against an independent overlap checker,
hand-derived bounds, and random lifetimes (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deeploy_mlir.memory.planner import Buffer, check_no_overlap, lower_bound, plan_greedy


def test_bound_of_disjoint_lifetimes_is_the_largest() -> None:
    bufs = [Buffer("a", 100, 0, 2), Buffer("b", 60, 2, 4), Buffer("c", 40, 4, 6)]
    assert lower_bound(bufs) == 100
    offsets, size = plan_greedy(bufs)
    assert size == 100 and set(offsets.values()) == {0}


def test_bound_counts_overlapping_lifetimes() -> None:
    # a [0,3) b [1,4) c [3,5): peak at t=1..2 is a+b = 32; at t=3 b+c = 28
    bufs = [Buffer("a", 12, 0, 3), Buffer("b", 20, 1, 4), Buffer("c", 8, 3, 5)]
    assert lower_bound(bufs) == 32
    offsets, size = plan_greedy(bufs)
    # largest first: b at 0; a overlaps b -> at 20; c overlaps b only -> at 20
    assert offsets == {"b": 0, "a": 20, "c": 20}
    assert size == 32


def test_alignment_rounds_sizes_and_offsets() -> None:
    bufs = [Buffer("f", 6, 0, 2, align=4), Buffer("l", 8, 0, 2, align=8)]
    offsets, _size = plan_greedy(bufs)
    assert offsets["l"] % 8 == 0 and offsets["f"] % 4 == 0
    assert not check_no_overlap(bufs, offsets)
    assert lower_bound(bufs) == 16


def test_zero_sized_and_empty_lifetimes_take_no_space() -> None:
    bufs = [Buffer("z", 0, 0, 5), Buffer("e", 50, 3, 3), Buffer("a", 8, 0, 5)]
    _offsets, size = plan_greedy(bufs)
    assert size == 8 and lower_bound(bufs) == 8


def test_checker_catches_an_overlap() -> None:
    bufs = [Buffer("a", 12, 0, 3), Buffer("b", 12, 2, 4)]
    assert check_no_overlap(bufs, {"a": 0, "b": 8})
    assert not check_no_overlap(bufs, {"a": 0, "b": 12})
    assert not check_no_overlap([bufs[0], Buffer("c", 12, 3, 4)], {"a": 0, "c": 0})
    assert check_no_overlap([Buffer("x", 4, 0, 1, align=8)], {"x": 4})  # misaligned


buffers = st.lists(
    st.tuples(
        st.integers(0, 4096), st.integers(0, 50), st.integers(1, 20), st.sampled_from([4, 8])
    ),
    min_size=1,
    max_size=60,
).map(lambda xs: [Buffer(f"b{i}", s, t, t + d, a) for i, (s, t, d, a) in enumerate(xs)])


@settings(max_examples=300, deadline=None)
@given(buffers)
def test_greedy_plans_never_overlap(bufs: list[Buffer]) -> None:
    offsets, size = plan_greedy(bufs)
    assert check_no_overlap(bufs, offsets) == []
    assert size >= lower_bound(bufs)
    for b in bufs:
        if b.size:
            assert offsets[b.name] + b.size <= size
