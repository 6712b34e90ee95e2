"""Arena planning over buffer lifetimes.

A buffer lives over the half-open interval [start, end) of schedule positions
and needs `size` bytes at an offset that is a multiple of `align`. Two buffers
whose lifetimes intersect must not overlap in the arena. The lower bound of an
arena is the largest number of bytes live at one time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import z3

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Buffer:
    name: str
    size: int
    start: int
    end: int
    align: int = 4
    kind: str = "activation"

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.start < other.end and other.start < self.end


def align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """Peak of bytes live at once (sizes rounded up to their alignment)."""
    events: list[tuple[int, int]] = []
    for b in buffers:
        if b.size == 0 or b.start >= b.end:
            continue
        s = align_up(b.size, b.align)
        events.append((b.start, s))
        events.append((b.end, -s))
    events.sort(key=lambda e: (e[0], e[1]))  # frees before allocations at one time
    live = peak = 0
    for _, d in events:
        live += d
        peak = max(peak, live)
    return peak


def _live(bufs: Sequence[Buffer]) -> list[Buffer]:
    return [b for b in bufs if b.size > 0 and b.start < b.end]


def _first_fit(lo: np.ndarray, hi: np.ndarray, size: int, align: int) -> int:
    """Lowest `align`-multiple offset where [off, off+size) misses every busy
    interval [lo, hi) (vectorised: candidates are 0 and the aligned running
    maximum of the interval ends, in order of their starts)."""
    if lo.size == 0:
        return 0
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    cand = np.concatenate(([0], (reach + align - 1) // align * align))
    nxt = np.concatenate((lo, [np.iinfo(np.int64).max]))
    # candidate j (after the first j intervals) must end before interval j starts
    ok = cand + size <= nxt
    return int(cand[int(np.argmax(ok))])


def plan_greedy(buffers: Sequence[Buffer]) -> tuple[dict[str, int], int]:
    """Greedy by size: buffers that live throughout first, then largest first,
    each at the lowest offset that no time-overlapping placed buffer occupies.
    Returns (offsets, arena size).

    The time-overlap query over the placed buffers is vectorised (numpy), so
    10,000 buffers plan in well under a second."""
    live = _live(buffers)
    t0 = min((b.start for b in live), default=0)
    t1 = max((b.end for b in live), default=0)

    def key(b: Buffer) -> tuple[bool, int, int, str]:
        # buffers that live throughout (inputs, parameters, gradients) first:
        # packed at the bottom they leave one contiguous region for the rest
        return (not (b.start == t0 and b.end == t1), -align_up(b.size, b.align), b.start, b.name)

    order = sorted(live, key=key)
    n = len(order)
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    lows = np.empty(n, dtype=np.int64)
    highs = np.empty(n, dtype=np.int64)
    offsets: dict[str, int] = {b.name: 0 for b in buffers}
    total = 0
    for i, b in enumerate(order):
        size = align_up(b.size, b.align)
        mask = (starts[:i] < b.end) & (ends[:i] > b.start)
        off = _first_fit(lows[:i][mask], highs[:i][mask], size, b.align)
        offsets[b.name] = off
        starts[i], ends[i], lows[i], highs[i] = b.start, b.end, off, off + size
        total = max(total, off + size)
    return offsets, total


#: Z3's resource limit for one exact plan: a count of solver steps, the same on
#: every machine and load (about 10 s of solving on one loaded 2020s x86 core,
#: the wall-clock limit it replaces)
DEFAULT_RLIMIT = 50_000_000


def plan_exact(
    buffers: Sequence[Buffer], rlimit: int = DEFAULT_RLIMIT
) -> tuple[dict[str, int], int, bool]:
    """The smallest arena (Z3): returns (offsets, size, proven optimal).

    When the greedy plan already equals the lower bound it is optimal and Z3 is
    not asked. The solver runs in its own Z3 context under `rlimit`, Z3's
    deterministic resource limit (0 = none), so that a search stops at the
    same point whatever the machine, its load, or what was solved before.
    When it stops there, the best plan found is returned with proven=False
    (never worse than greedy, which seeds the upper bound)."""
    import z3

    live = _live(buffers)
    g_off, g_size = plan_greedy(buffers)
    if not live:
        return g_off, 0, True
    bound = lower_bound(live)
    if g_size == bound:  # greedy already reaches the peak of bytes live at once
        return g_off, g_size, True
    zc = z3.Context()
    opt = z3.Optimize(ctx=zc)
    # Ctrl-C is Python's to handle (Z3's own handler would swallow it, or kill the process)
    opt.set(ctrl_c=False)
    if rlimit:
        opt.set("rlimit", rlimit)
    size_of = {b.name: align_up(b.size, b.align) for b in live}
    k = {b.name: z3.Int(f"k_{i}", zc) for i, b in enumerate(live)}
    # (z3's stubs type arithmetic on an ArithRef as any expression: cast back)
    off = {b.name: cast("z3.ArithRef", k[b.name] * b.align) for b in live}
    end = {b.name: cast("z3.ArithRef", off[b.name] + size_of[b.name]) for b in live}
    arena = z3.Int("arena", zc)
    for b in live:
        opt.add(k[b.name] >= 0, end[b.name] <= arena)
    for i, a in enumerate(live):
        for b in live[i + 1 :]:
            if a.overlaps_in_time(b):
                opt.add(z3.Or(end[a.name] <= off[b.name], end[b.name] <= off[a.name]))
    opt.add(arena <= g_size, arena >= bound)
    h = opt.minimize(arena)
    result = opt.check()
    if result != z3.sat:
        return g_off, g_size, False
    m = opt.model()
    offsets = dict(g_off)
    for b in live:
        offsets[b.name] = _model_int(m, off[b.name])
    size = _model_int(m, arena)
    proven = opt.reason_unknown() == "" or str(opt.lower(h)) == str(opt.upper(h))
    return offsets, size, proven


def _model_int(m: z3.ModelRef, e: z3.ExprRef) -> int:
    import z3

    v = m.eval(e, model_completion=True)
    assert isinstance(v, z3.IntNumRef), v
    return v.as_long()


def check_no_overlap(buffers: Sequence[Buffer], offsets: dict[str, int]) -> list[str]:
    """Every pair of time-overlapping buffers that overlap in space (empty = valid).

    Written apart from the planner: a sweep over start times with an ordered
    list of the live intervals."""
    problems: list[str] = []
    items = sorted((b for b in buffers if b.size > 0 and b.start < b.end), key=lambda b: b.start)
    for b in items:
        if offsets[b.name] % b.align:
            problems.append(f"{b.name} at {offsets[b.name]} is not {b.align}-byte aligned")
    active: list[Buffer] = []
    for b in items:
        active = [a for a in active if a.end > b.start]
        lo, hi = offsets[b.name], offsets[b.name] + b.size
        for a in active:
            alo, ahi = offsets[a.name], offsets[a.name] + a.size
            if lo < ahi and alo < hi:
                problems.append(
                    f"{a.name} [{alo},{ahi}) and {b.name} [{lo},{hi}) overlap while both live"
                )
        bisect.insort(active, b, key=lambda x: x.end)
    return problems
