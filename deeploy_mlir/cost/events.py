"""An event-driven cycle model of one schedule on one board.

A schedule is what the cluster issues, in order:

- `Transfer(engine, bytes, token)` queues a copy on the engine's FIFO. Issuing
  costs the cluster 0 cycles. The copy starts when the engine is free and not
  before it was issued, and takes `setup + ceil(bytes / bandwidth)` cycles.
- `Compute(family, macs)` runs on the whole cluster from the current cluster
  time for `ceil(macs / (macs_per_cycle_per_core * cores))` cycles.
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

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from deeploy_mlir.targets.boards import Board, Engine


@dataclass(frozen=True)
class Transfer:
    engine: str
    bytes: int
    token: str


@dataclass(frozen=True)
class Wait:
    token: str


@dataclass(frozen=True)
class Compute:
    family: str
    macs: int


Event = Transfer | Wait | Compute


@dataclass(frozen=True)
class Timeline:
    total: int  # cycles until the cluster is done and no transfer is in flight
    dma_busy: dict[str, int]  # engine name -> cycles it spent copying (every engine of the board)
    compute_busy: int  # cycles the cluster spent computing
    roofline: int  # max(compute_busy, max(dma_busy)): the busiest resource
    ratio: float  # total / roofline (1.0 for an empty schedule), >= 1


def exact(x: float) -> Fraction:
    """`x` as the decimal it prints as: exact(0.1) == Fraction(1, 10)."""
    return Fraction(repr(x))


def transfer_cycles(engine: Engine, nbytes: int) -> int:
    """Cycles one transfer of `nbytes` keeps `engine` busy."""
    if nbytes < 0:
        raise ValueError(f"transfer on '{engine.name}' of {nbytes} bytes: must be >= 0")
    return engine.setup + math.ceil(nbytes / exact(engine.bandwidth))


def compute_cycles(board: Board, family: str, macs: int) -> int:
    """Cycles the cluster of `board` takes for `macs` MACs of kernel `family`."""
    if family not in board.kernels:
        raise ValueError(
            f"compute of family '{family}': board '{board.name}' has kernels "
            f"{', '.join(board.kernels)}"
        )
    if macs < 0:
        raise ValueError(f"compute of family '{family}' with {macs} MACs: must be >= 0")
    per_cycle = exact(board.kernels[family].macs_per_cycle_per_core) * board.cores
    return math.ceil(macs / per_cycle)


def simulate(board: Board, events: Iterable[Event]) -> Timeline:
    """Run `events` on `board`. A schedule that names an engine or kernel family
    the board lacks, or waits on a token no transfer was issued on, is a bug in
    whoever built it: ValueError."""
    now = 0
    free = dict.fromkeys(board.engines, 0)  # engine -> when its queue drains
    busy = dict.fromkeys(board.engines, 0)
    done: dict[str, int] = {}  # token -> when its last transfer so far lands
    computing = 0
    for i, ev in enumerate(events):
        match ev:
            case Transfer(engine=name, bytes=nbytes, token=token):
                if name not in board.engines:
                    raise ValueError(
                        f"event {i}: transfer on engine '{name}': board '{board.name}' "
                        f"has engines {', '.join(board.engines)}"
                    )
                cycles = transfer_cycles(board.engines[name], nbytes)
                free[name] = max(free[name], now) + cycles
                busy[name] += cycles
                done[token] = max(done.get(token, 0), free[name])
            case Wait(token=token):
                if token not in done:
                    raise ValueError(f"event {i}: wait on token '{token}' before any transfer")
                now = max(now, done[token])
            case Compute(family=family, macs=macs):
                cycles = compute_cycles(board, family, macs)
                now += cycles
                computing += cycles
            case _:
                raise TypeError(f"event {i}: not a Transfer, Wait or Compute: {ev!r}")
    total = max(now, *free.values())
    roofline = max(computing, *busy.values())
    assert total >= roofline, (total, roofline)
    ratio = total / roofline if roofline else 1.0
    return Timeline(total, busy, computing, roofline, ratio)
