"""Arena planning on a synthetic training graph of 10,000 buffers.

The graph has the shape of a training step: forward activations live until
their layer's backward pass (nested, long lifetimes), backward temporaries
live a few ops, and parameters and gradient buffers live throughout. Prints
the planning time (target: < 2 s on 2 cores), the arena against the lower
bound (peak live bytes), and against the no-reuse baseline (every buffer its
own space), all measured in this run.

    python bench/arena.py [--buffers N] [--seed S]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deeploy_mlir.memory.planner import Buffer, check_no_overlap, lower_bound, plan_greedy


def training_like(n: int, seed: int) -> list[Buffer]:
    rng = np.random.default_rng(seed)
    layers = n // 5
    span = 4 * layers + 2
    bufs: list[Buffer] = []
    for i in range(layers):
        size = int(rng.integers(1, 512)) * 4
        bufs.append(Buffer(f"w{i}", size, 0, span, kind="weight"))
        bufs.append(Buffer(f"g{i}", size, 0, span, kind="gradient"))
        act = int(rng.integers(16, 4096)) * 4
        fwd, bwd = 2 * i, span - 2 * i - 1  # stored for the backward pass
        bufs.append(Buffer(f"act{i}", act, fwd, bwd, kind="activation"))
        bufs.append(Buffer(f"dact{i}", act, bwd - 1, bwd + 1, kind="activation"))
        bufs.append(Buffer(f"dw{i}", size, bwd, bwd + 1, kind="activation"))
    return bufs[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--buffers", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    bufs = training_like(args.buffers, args.seed)
    t = time.perf_counter()
    offsets, arena = plan_greedy(bufs)
    dt = time.perf_counter() - t
    t = time.perf_counter()
    bad = check_no_overlap(bufs, offsets)
    dt_check = time.perf_counter() - t
    bound = lower_bound(bufs)
    no_reuse = sum(-(-b.size // b.align) * b.align for b in bufs)
    print(f"buffers:            {len(bufs)}")
    print(f"greedy plan time:   {dt:.3f} s (target < 2 s)")
    print(
        f"overlap check time: {dt_check:.3f} s ({'valid' if not bad else f'{len(bad)} OVERLAPS'})"
    )
    print(f"arena:              {arena} B")
    print(f"lower bound:        {bound} B   arena / bound    = {arena / bound:.4f}")
    print(f"no-reuse baseline:  {no_reuse} B   arena / no-reuse = {arena / no_reuse:.4f}")
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
