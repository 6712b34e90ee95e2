"""Measure what runtime_c/kernels/gemm.c's micro-tiles cost beside its 4 x 4
body, and conv.c's one-channel path beside the conv families' fits, on
GVSoC siracusa, for the board's `gemm_tiles` and `conv_tiles`
(deeploy_mlir/targets/boards.py `GemmTiles`, `ConvTiles`; the cycle model's
`gemm_share` and `narrow_macs`).

    python bench/micro_tiles.py            # measure, print the fits and the board lines
    python bench/micro_tiles.py --write    # and write them into the siracusa board

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

* `narrow` (conv_tiles): conv.c's forward and input gradient split their
  channels (output, input) in blocks of 4; the last channels % 4 run one
  channel at a time, and on planes narrower than 8 column by column (1 x 1
  edge tiles): probes of 2-6 channels on 4 x 4 planes measure 3-8x the
  family's prediction. Fitted: (warm - call - per_output x outputs / 8) /
  (MACs / 8 / rate) = 1 + (narrow - 1) x (channels % 4) / channels (least
  squares over the fitted probes, the family's numbers held fixed).

Per probe the busiest core's work is measured as (warm - call) / (per_output
+ K / rate), with the board's gemm call, per_output and rate (the body's),
in MACs per step of k; the micro-tiles each core gets are
`gemm_micro_tiles`'s (gemm.c's dealing). Held-out probes (1 x 4 tiles on
2-3 cores, mixed partners) print their error with the fitted numbers.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import gvsoc_probe as P

ROOT = Path(__file__).resolve().parents[1]
BOARD = ROOT / "deeploy_mlir" / "targets" / "boards" / "siracusa.yaml"
CMD = "python bench/micro_tiles.py --write"
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


#: conv probes (N, C, M, plane, k, kernel, role): kernel "fwd" (narrow output
#: channels) or "dX" (narrow input channels); "fit" or "held"
CONV_CASES = [
    (2, 3, 8, 4, 3, "dX", "fit"), (2, 2, 8, 4, 3, "dX", "fit"), (2, 6, 8, 4, 3, "dX", "fit"),
    (1, 3, 4, 4, 3, "dX", "fit"), (2, 8, 3, 4, 3, "fwd", "fit"), (2, 8, 2, 4, 3, "fwd", "fit"),
    (2, 8, 6, 4, 3, "fwd", "fit"), (2, 3, 8, 6, 3, "dX", "held"), (2, 4, 3, 6, 3, "fwd", "held"),
    (2, 3, 3, 8, 3, "dX", "held"), (2, 3, 3, 8, 3, "fwd", "held"),
]  # fmt: skip


@dataclass
class NarrowFit:
    narrow: float
    #: (case, measured warm, predicted with the fit, predicted with 1.0)
    points: list[tuple[tuple[int, int, int, int, int, str, str], int, int, int]]

    def error(self, role: str) -> float:
        errs = [abs(p - w) / w for c, w, p, _ in self.points if c[6] == role]
        return max(errs) if errs else 0.0


def _conv_predict(case: tuple[int, int, int, int, int, str, str], narrow: float) -> int:
    from deeploy_mlir.cost.events import compute_cycles
    from deeploy_mlir.targets.boards import load_board

    n, c, m, h, k, which, _ = case
    b = load_board("siracusa")
    fam = "conv" if which == "fwd" else "conv_dx"
    ch = m if which == "fwd" else c
    macs = n * m * h * h * c * k * k
    outs = n * (m if which == "fwd" else c) * h * h
    frac = Fraction(ch % 4, ch) if h < 8 else Fraction(0)
    eff = macs + math.ceil(macs * frac * (Fraction(repr(narrow)) - 1))
    return compute_cycles(b, fam, eff, 1, 0, outs, 0)


def measure_narrow() -> NarrowFit:
    """Probe CONV_CASES at 8 cores (the warm call) and fit `narrow`."""
    import calibrate as C

    from deeploy_mlir.targets.boards import load_board

    b = load_board("siracusa")
    cases = []
    for n, c, m, h, k, which, _ in CONV_CASES:
        fwd, dx, _dw = P.conv("narrow", n, c, m, h, k, 1, "")
        cases.append(fwd if which == "fwd" else dx)
    cyc = C.measure_cold_warm(cases)
    num = den = 0.0
    for i, (n, c, m, h, k, which, role) in enumerate(CONV_CASES):
        if role != "fit":
            continue
        kt = b.kernels["conv" if which == "fwd" else "conv_dx"]
        ch = m if which == "fwd" else c
        frac = (ch % 4) / ch if h < 8 else 0.0
        outs = n * (m if which == "fwd" else c) * h * h
        body = n * m * h * h * c * k * k / CORES / kt.macs_per_cycle_per_core
        y = (cyc[i][1] - kt.call - kt.per_output * outs / CORES) / body - 1
        num += y * frac
        den += frac * frac
    narrow = round(1 + num / den, 3)
    pts = [
        (case, cyc[i][1], _conv_predict(case, narrow), _conv_predict(case, 1.0))
        for i, case in enumerate(CONV_CASES)
    ]
    return NarrowFit(narrow, pts)


def narrow_lines(f: NarrowFit, cmd: str = CMD) -> str:
    n_fit = sum(c[6] == "fit" for c, *_ in f.points)
    return (
        f"# measured ({cmd}): conv.c's one-channel path on planes narrower than 8\n"
        f"# (bench/micro_tiles.py says how); {n_fit} probes fitted (worst {f.error('fit'):.0%}), "
        f"{len(f.points) - n_fit} held out (worst {f.error('held'):.0%})\n"
        "conv_tiles:\n"
        f"  narrow: {f.narrow}  # measured: a MAC of the last channels % 4 / the family's\n"
    )


def narrow_table(f: NarrowFit) -> str:
    out = [
        "| N C M plane k | kernel | role | measured | model | model, 1.0 |",
        "|---|---|---|---|---|---|",
    ]
    for (n, c, m, h, k, which, role), w, p, p0 in f.points:
        out.append(
            f"| {n} {c} {m} {h}x{h} k{k} | {which} | {role} | {w} | {p} ({(p - w) / w:+.0%}) "
            f"| {p0} ({(p0 - w) / w:+.0%}) |"
        )
    return "\n".join(out)


def board_lines(f: TilesFit, cmd: str = CMD) -> str:
    n = {r: sum(p[4] == r for p in f.points) for r in ("alone", "edge", "held")}
    fitted = max(f.error("alone"), f.error("edge"))
    return (
        f"# measured ({cmd}): gemm.c's micro-tiles beside the 4 x 4 body (bench/micro_tiles.py\n"
        "# says how), each a MAC's cycles relative to the body's with every core busy;\n"
        f"# {n['alone'] + n['edge']} probes fitted (worst {fitted:.0%}), "
        f"{n['held']} held out (worst {f.error('held'):.0%})\n"
        "gemm_tiles:\n"
        f"  edge: {f.edge}  # measured: a 4 x 1 / 1 x 4 micro-tile's MAC\n"
        f"  single: {f.single}  # measured: a 1 x 1 micro-tile's MAC\n"
        f"  alone: {f.alone}  # measured: a MAC on a core whose FPU partner (core + 4) idles\n"
    )


def write_board(text: str, lines: str, key: str = "gemm_tiles") -> str:
    """The board `text` with its `key` block (and the comment above it)
    replaced by `lines`, or `lines` appended."""
    block = re.compile(
        r"(?:^# measured \(python bench/micro_tiles\.py[^\n]*\n(?:#[^\n]*\n)*)?"
        rf"^{key}:\n(?:^  [^\n]*\n)*",
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
    nf = measure_narrow()
    print(narrow_table(nf) + "\n")
    conv = narrow_lines(nf)
    print(conv)
    if args.write:
        text = write_board(BOARD.read_text(), lines)
        BOARD.write_text(write_board(text, conv, "conv_tiles"))
        print(f"wrote {BOARD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
