"""An event-driven cycle model of one schedule on one board.

A schedule is what the cluster issues, in order:

- `Transfer(engine, bytes, token, kind, rows)` queues a copy on the engine's
  FIFO as one transfer, or several (`pieces`: a 2-D copy's rows apart on an
  engine with `row_transfers`, chunks of at most the engine's `chunk`
  bytes). Issuing each costs the cluster the engine's `issue` cycles
  (programming it; 0 unless the board says). A transfer starts when the
  engine is free and not before it was issued, and takes `setup + ceil(bytes
  / bandwidth)` cycles, the setup and bandwidth of its kind (direction and
  rank, "in-1d" ...) where the board gives them (`Engine.copy_cost`). An
  engine with a bounded `queue` makes the cluster wait, before it programs a
  transfer, until fewer than `queue` of its transfers are queued or running
  (GVSoC's HyperBus interface: 8 per transfer id); `queue` 0 is a
  synchronous copy, the cluster waiting for each transfer's end.
- `Compute(family, macs, calls, units, outputs, cold)` runs on the whole
  cluster from the current cluster time for `calls x call + cold x
  family.cold + ceil(outputs_b x per_output) + ceil(macs_b /
  macs_per_cycle_per_core)` cycles: `call` the family's fixed cycles per
  kernel call (fork, barrier), `cold` the calls that follow another kernel
  (instruction cache refills), `per_output` the cycles per output element
  (loop set-up, stores), `macs_b` and `outputs_b` the busiest core's share.
- `Wait(token)` advances the cluster time to the end of every transfer issued
  on `token` so far.

The total is the cluster time after the last event, and after every transfer
still in flight has landed. The roofline is the busiest resource's work,
max(compute cycles, each engine's busy cycles); total >= roofline always, and
total / roofline says how far the schedule is from perfect overlap.

All arithmetic is in Python ints and exact fractions: a board's float numbers
are taken as the decimals they print as (0.1 is 1/10, not the nearest binary
float), so `ceil` never rounds up a quotient that is exact on paper, and
nothing overflows however large a schedule's sums get.

If no token is reissued after a wait on it (what `dma.copy`'s fresh tokens
give), moving a Wait later never increases the total.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from deeploy_mlir.targets.boards import Board, Engine


@dataclass(frozen=True)
class Transfer:
    engine: str
    bytes: int
    token: str
    kind: str | None = None  # "in-1d", "out-2d", ... (None: the engine's setup/bandwidth)
    rows: int = 1  # rows of a 2-D copy (an engine with `row_transfers` moves each apart)


@dataclass(frozen=True)
class Wait:
    token: str


@dataclass(frozen=True)
class Compute:
    family: str
    macs: int
    calls: int = 1  # kernel calls (forks), each `call` cycles
    units: int = 0  # work units split over the cores (0: an even split)
    outputs: int = 0  # output elements written
    cold: int = 0  # calls that follow another kernel's


Event = Transfer | Wait | Compute


@dataclass(frozen=True)
class Timeline:
    total: int  # cycles until the cluster is done and no transfer is in flight
    dma_busy: dict[str, int]  # engine name -> cycles it spent copying (every engine of the board)
    compute_busy: int  # cycles the cluster spent computing
    roofline: int  # max(compute_busy, max(dma_busy)): the busiest resource
    ratio: float  # total / roofline (1.0 for an empty schedule), >= 1


@functools.cache
def exact(x: float) -> Fraction:
    """`x` as the decimal it prints as: exact(0.1) == Fraction(1, 10)
    (cached: tile-select asks for the same few constants many times)."""
    return Fraction(repr(x))


def transfer_cycles(engine: Engine, nbytes: int, kind: str | None = None) -> int:
    """Cycles one transfer of `nbytes` (of copy `kind`, see `Engine.copy_cost`)
    keeps `engine` busy."""
    if nbytes < 0:
        raise ValueError(f"transfer on '{engine.name}' of {nbytes} bytes: must be >= 0")
    setup, bandwidth = engine.copy_cost(kind)
    bw = exact(bandwidth)  # ceil(nbytes / bw) in integers: -(-a // b) = ceil(a / b)
    return setup + -(-nbytes * bw.denominator // bw.numerator)


def pieces(engine: Engine, nbytes: int, rows: int = 1) -> list[int]:
    """The bytes of each transfer the engine makes of one copy of `nbytes` in
    `rows` rows: one, unless it moves 2-D rows apart (`row_transfers`) or in
    chunks of at most `chunk` bytes."""
    rows = rows if engine.row_transfers and rows > 1 else 1
    row, extra = divmod(nbytes, rows)
    out: list[int] = []
    for r in range(rows):
        n = row + (1 if r < extra else 0)
        if engine.chunk and n > engine.chunk:
            full, last = divmod(n, engine.chunk)
            out += [engine.chunk] * full + ([last] if last else [])
        else:
            out.append(n)
    return out


def compute_cycles(
    board: Board,
    family: str,
    macs: int,
    calls: int = 1,
    units: int = 0,
    outputs: int = 0,
    cold: int = 0,
    share: Fraction | None = None,
) -> int:
    """Cycles the cluster of `board` takes for `macs` MACs and `outputs`
    output elements of kernel `family` in `calls` kernel calls, `cold` of
    them after another kernel. With `units` (> 0) the work is split over the
    cores in whole units: the busiest core does ceil(units / cores) of them,
    so the cluster takes that core's time. `share` (deeploy_mlir.cost.kernels
    `Split.share`), when given, is the busiest core's share instead."""
    if family not in board.kernels:
        raise ValueError(
            f"compute of family '{family}': board '{board.name}' has kernels "
            f"{', '.join(board.kernels)}"
        )
    if macs < 0:
        raise ValueError(f"compute of family '{family}' with {macs} MACs: must be >= 0")
    k = board.kernels[family]
    per_core = exact(k.macs_per_cycle_per_core)
    if share is not None:
        pass
    elif units > 0:
        share = Fraction(-(-units // board.cores), units)
    else:
        share = Fraction(1, board.cores)
    fixed = calls * k.call + cold * k.cold
    if outputs and k.per_output:
        fixed += math.ceil(outputs * share * exact(k.per_output))
    return fixed + math.ceil(macs * share / per_core)


class Simulator:
    """The event model, one event at a time: what `simulate` runs, and what a
    schedule walker (deeploy_mlir.cost.schedule) drives directly so that it can
    see each event's effect (the cycles a wait stalls the cluster). Tokens may be
    any hashable value. Cycles of equal transfers and computes are computed once."""

    def __init__(self, board: Board) -> None:
        self.board = board
        self.now = 0  # cluster time
        self.free = dict.fromkeys(board.engines, 0)  # engine -> when its queue drains
        self.busy = dict.fromkeys(board.engines, 0)
        self.done: dict[Hashable, int] = {}  # token -> when its last transfer so far lands
        self.computing = 0
        self._transfer: dict[tuple[str, int, str | None, int], tuple[int, ...]] = {}
        self._compute: dict[tuple[str, int, int, int, int, int, Fraction | None], int] = {}
        #: per engine with a bounded queue: the ends of its transfers, in order
        self.queued: dict[str, list[int]] = {}

    def transfer(
        self, engine: str, nbytes: int, token: Hashable, kind: str | None = None, rows: int = 1
    ) -> int:
        """Queue a copy; returns the cycles it keeps `engine` busy."""
        key = (engine, nbytes, kind, rows)
        each = self._transfer.get(key)
        if each is None:
            if engine not in self.board.engines:
                raise ValueError(
                    f"transfer on engine '{engine}': board '{self.board.name}' "
                    f"has engines {', '.join(self.board.engines)}"
                )
            e = self.board.engines[engine]
            each = tuple(transfer_cycles(e, n, kind) for n in pieces(e, nbytes, rows))
            self._transfer[key] = each
        e = self.board.engines[engine]
        end = 0
        for cycles in each:
            if e.queue:
                # the cluster waits for room in the engine's queue: until
                # fewer than `queue` transfers are queued or running
                ends = self.queued.setdefault(engine, [])
                while ends and ends[0] <= self.now:
                    ends.pop(0)
                if len(ends) >= e.queue:
                    self.now = ends[len(ends) - e.queue]
                    del ends[: len(ends) - e.queue + 1]
            # the cluster programs the engine before the transfer starts
            self.now += e.issue
            end = max(self.free[engine], self.now) + cycles
            self.free[engine] = end
            self.busy[engine] += cycles
            if e.queue == 0:
                self.now = end  # a synchronous copy
            elif e.queue is not None:
                self.queued[engine].append(end)
        if end > self.done.get(token, 0):
            self.done[token] = end
        return sum(each)

    def wait(self, token: Hashable) -> int:
        """Advance the cluster to the end of `token`'s transfers; returns the stall."""
        if token not in self.done:
            raise ValueError(f"wait on token '{token}' before any transfer")
        stall = max(0, self.done[token] - self.now)
        self.now += stall
        return stall

    def compute(
        self,
        family: str,
        macs: int,
        calls: int = 1,
        units: int = 0,
        outputs: int = 0,
        cold: int = 0,
        share: Fraction | None = None,
    ) -> int:
        """Run a kernel on the cluster; returns its cycles."""
        key = (family, macs, calls, units, outputs, cold, share)
        cycles = self._compute.get(key)
        if cycles is None:
            cycles = compute_cycles(self.board, family, macs, calls, units, outputs, cold, share)
            self._compute[key] = cycles
        self.now += cycles
        self.computing += cycles
        return cycles

    def timeline(self) -> Timeline:
        """The totals so far (transfers still in flight counted to their end)."""
        total = max(self.now, *self.free.values())
        roofline = max(self.computing, *self.busy.values())
        assert total >= roofline, (total, roofline)
        ratio = total / roofline if roofline else 1.0
        return Timeline(total, dict(self.busy), self.computing, roofline, ratio)


def simulate(board: Board, events: Iterable[Event]) -> Timeline:
    """Run `events` on `board`. A schedule that names an engine or kernel family
    the board lacks, or waits on a token no transfer was issued on, is a bug in
    whoever built it: ValueError."""
    sim = Simulator(board)
    for i, ev in enumerate(events):
        try:
            match ev:
                case Transfer(engine=name, bytes=nbytes, token=token, kind=kind, rows=rows):
                    sim.transfer(name, nbytes, token, kind, rows)
                case Wait(token=token):
                    sim.wait(token)
                case Compute(
                    family=family, macs=macs, calls=calls, units=units, outputs=o, cold=cold
                ):
                    sim.compute(family, macs, calls, units, o, cold)
                case _:
                    raise TypeError(f"event {i}: not a Transfer, Wait or Compute: {ev!r}")
        except ValueError as e:
            msg = str(e)
            raise ValueError(msg if msg.startswith("compute of") else f"event {i}: {msg}") from None
    return sim.timeline()
