"""Measure what runtime_c/kernels/gemm.c's micro-tiles cost beside its 4 x 4
body, on GVSoC siracusa, for the board's `gemm_tiles`
(deeploy_mlir/targets/boards.py `GemmTiles`; the cycle model's
`gemm_share`).

    python bench/gemm_tiles.py            # measure, print the fit and the board lines
    python bench/gemm_tiles.py --write    # and write them into the siracusa board

The gemm family's fit (bench/calibrate.py) prices a MAC at the 4 x 4 body's
rate with every core busy. Two things it cannot see (about 20 seconds of
probes, each call after another kernel's and then again; the warm call):

* `alone`: 4 FPUs serve 8 cores, core c sharing with core c + 4 (issue 19's
  fmadd ceiling: 48,131 cycles at 1-4 cores, 64,121-72,124 at 8). Products
  of at most 4 tiles of 4 x 4 keep cores 0-3 busy and 4-7 idle: each core
  has its FPU to itself. Fitted over those probes: busiest = alone x its
  4 x 4 MACs.
* `edge`, `single`: the 4 x 1 / 1 x 4 and 1 x 1 micro-tiles (the last N % 4
  columns, the rows of a core beyond its blocks of 4, N < 4) keep 4 or 1
  accumulators in flight, not 16: more loads per MAC, and one chain of
  dependent multiply-adds. Fitted over probes in which every core has the
  same micro-tiles as its FPU partner (all contended): busiest = 16 x 4x4 +
  4 x edge x 4x1 + single x 1x1 (least squares).

Per probe the busiest core's work is measured as (warm - call) / (per_output
+ K / rate), with the board's gemm call, per_output and rate (the body's),
in MACs per step of k; the micro-tiles each core gets are
`gemm_micro_tiles`'s (gemm.c's dealing). Held-out probes (1 x 4 tiles on
2-3 cores, mixed partners) print their error with the fitted numbers.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import gvsoc_probe as P

ROOT = Path(__file__).resolve().parents[1]
BOARD = ROOT / "deeploy_mlir" / "targets" / "boards" / "siracusa.yaml"
CMD = "python bench/gemm_tiles.py --write"
CORES = 8

#: (M, N, K, trans_a, trans_b, role): "alone" (4 x 4 tiles on cores 0-3
#: only), "edge" (every core the same micro-tiles as its partner), "held"
CASES = [
    (4, 4, 64, 0, 1, "alone"), (8, 8, 64, 0, 1, "alone"), (8, 6, 64, 0, 1, "alone"),
    (16, 4, 32, 0, 0, "alone"), (4, 16, 32, 1, 0, "alone"),
    (32, 3, 64, 0, 1, "edge"), (32, 6, 64, 0, 1, "edge"), (8, 3, 64, 0, 1, "edge"),
    (24, 3, 64, 0, 1, "edge"), (8, 2, 64, 0, 1, "edge"), (64, 6, 32, 0, 0, "edge"),
    (32, 3, 16, 1, 0, "edge"), (16, 3, 32, 0, 0, "edge"),
    (2, 64, 64, 0, 0, "held"), (3, 16, 64, 0, 1, "held"), (12, 12, 32, 0, 1, "held"),
    (40, 3, 32, 0, 1, "held"), (8, 12, 64, 0, 1, "held"), (8, 24, 64, 0, 1, "held"),
    (32, 7, 16, 1, 0, "held"),
]  # fmt: skip


@dataclass
class TilesFit:
    edge: float
    single: float
    alone: float
    #: (M, N, K, form, role, warm cycles, predicted with the fit, predicted with 1.0 each)
    points: list[tuple[int, int, int, str, str, int, int, int]]

    def error(self, role: str) -> float:
        errs = [abs(p - w) / w for *_, r, w, p, _ in self.points if r == role]
        return max(errs) if errs else 0.0


def _predict(m: int, n: int, k: int, tiles: object) -> int:
    from deeploy_mlir.cost.events import compute_cycles
    from deeploy_mlir.cost.kernels import gemm_share
    from deeploy_mlir.targets.boards import load_board

    b = load_board("siracusa")
    share = gemm_share(m, n, CORES, tiles)  # type: ignore[arg-type]
    return compute_cycles(b, "gemm", m * n * k, 1, 0, m * n, 0, share)


def fit(warm: list[int], call: int, per_output: float, rate: float) -> TilesFit:
    """The fit of `warm` (cycles per CASES entry) with the gemm family's body numbers."""
    import numpy as np

    from deeploy_mlir.cost.kernels import gemm_micro_tiles
    from deeploy_mlir.targets.boards import GemmTiles

    meas = [
        (w - call) / (per_output + k / rate) for (_, _, k, *_), w in zip(CASES, warm, strict=True)
    ]
    tiles0 = [gemm_micro_tiles(m, n, CORES, 0) for m, n, *_ in CASES]
    al = [
        (16 * t[0], b)
        for (*_, role), t, b in zip(CASES, tiles0, meas, strict=True)
        if role == "alone"
    ]
    alone = sum(x * y for x, y in al) / sum(x * x for x, _ in al)
    rows, ys = [], []
    for (*_, role), t, b in zip(CASES, tiles0, meas, strict=True):
        if role == "edge":
            rows.append([4 * t[1], t[2]])
            ys.append(b - 16 * t[0])
    (edge, single), *_ = np.linalg.lstsq(np.asarray(rows, float), np.asarray(ys, float), rcond=None)
    tiles = GemmTiles(round(float(edge), 3), round(float(single), 3), round(alone, 3))
    pts = [
        (m, n, k, f"{ta}{tb}", role, w, _predict(m, n, k, tiles), _predict(m, n, k, None))
        for (m, n, k, ta, tb, role), w in zip(CASES, warm, strict=True)
    ]
    return TilesFit(tiles.edge, tiles.single, tiles.alone, pts)


def measure(call: int, per_output: float, rate: float) -> TilesFit:
    """Probe CASES at 8 cores (the warm call) and fit."""
    import calibrate as C

    cases = [P.gemm(m, n, k, ta, tb, "") for m, n, k, ta, tb, _ in CASES]
    cyc = C.measure_cold_warm(cases)
    return fit([cyc[i][1] for i in range(len(CASES))], call, per_output, rate)


def board_lines(f: TilesFit, cmd: str = CMD) -> str:
    n = {r: sum(p[4] == r for p in f.points) for r in ("alone", "edge", "held")}
    fitted = max(f.error("alone"), f.error("edge"))
    return (
        f"# measured ({cmd}): gemm.c's micro-tiles beside the 4 x 4 body (bench/gemm_tiles.py\n"
        "# says how), each a MAC's cycles relative to the body's with every core busy;\n"
        f"# {n['alone'] + n['edge']} probes fitted (worst {fitted:.0%}), "
        f"{n['held']} held out (worst {f.error('held'):.0%})\n"
        "gemm_tiles:\n"
        f"  edge: {f.edge}  # measured: a 4 x 1 / 1 x 4 micro-tile's MAC\n"
        f"  single: {f.single}  # measured: a 1 x 1 micro-tile's MAC\n"
        f"  alone: {f.alone}  # measured: a MAC on a core whose FPU partner (core + 4) idles\n"
    )


def write_board(text: str, lines: str) -> str:
    """The board `text` with its gemm_tiles block (and the comment above it)
    replaced by `lines`, or `lines` appended."""
    block = re.compile(
        r"(?:^# measured \(python bench/gemm_tiles\.py[^\n]*\n(?:#[^\n]*\n)*)?"
        r"^gemm_tiles:\n(?:^  [^\n]*\n)*",
        re.M,
    )
    if block.search(text):
        return block.sub(lambda _: lines, text, count=1)
    return text.rstrip("\n") + "\n" + lines


def table(f: TilesFit) -> str:
    out = [
        "| M N K | form | role | measured | model | model, 1.0 each |",
        "|---|---|---|---|---|---|",
    ]
    for m, n, k, form, role, w, p, p0 in f.points:
        out.append(
            f"| {m} {n} {k} | {form} | {role} | {w} | {p} ({(p - w) / w:+.0%}) "
            f"| {p0} ({(p0 - w) / w:+.0%}) |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="write gemm_tiles into the board")
    args = ap.parse_args(argv)
    from deeploy_mlir.targets.boards import load_board

    g = load_board("siracusa").kernels["gemm"]
    f = measure(g.call, g.per_output, g.macs_per_cycle_per_core)
    print(table(f) + "\n")
    lines = board_lines(f)
    print(lines)
    if args.write:
        BOARD.write_text(write_board(BOARD.read_text(), lines))
        print(f"wrote {BOARD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
