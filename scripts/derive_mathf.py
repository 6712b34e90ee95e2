"""Derive the constants of runtime_c/include/dm_mathf.h (dm_expf, dm_logf,
dm_erff) from the mathematics, with mpmath at 50 digits.

    python scripts/derive_mathf.py           # print the constant block
    python scripts/derive_mathf.py --write   # rewrite it in dm_mathf.h
    python scripts/derive_mathf.py --check   # exit 1 if dm_mathf.h differs

Each polynomial is mpmath's Chebyshev interpolant (`mpmath.chebyfit`: the
near-minimax polynomial of its degree, within a few percent of the
best uniform error) of the function named below on the stated interval, its
coefficients then rounded to the nearest float32 (printed with 9
significant digits, which a C compiler reads back to the same float).
Functions with a removable singularity are evaluated by their Taylor series
so that mpmath loses no digits near 0.

- expf: x = k ln2 + r, k = round(x log2e), |r| <= ln2/2 (plus the rounding
  of x log2e: the interval is [-0.3467, 0.3467]); e^r = 1 + (r + r^2 g(r)),
  g(r) = (e^r - 1 - r) / r^2 = sum r^j / (j + 2)!, degree 4 (5 coefficients).
  Cody-Waite: ln2 = LN2_HI + LN2_LO, LN2_HI with 16 significant bits so
  that k LN2_HI is exact for |k| <= 255, LN2_LO = float32(ln2 - LN2_HI).
- logf: x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); s = f / (2 + f),
  log(1 + f) = 2 atanh(s) = 2s + s R(s^2) with
  R(z) = 2 atanh(sqrt z) / sqrt z - 2 = z * sum 2 z^j / (2j + 3); and
  2s = f - s f, so log(1 + f) = f - (hfsq - s (hfsq + R)), hfsq = f^2 / 2
  (the division's rounding only touches the small correction).
  R(z) / z on z in [0, ((sqrt2 - 1) / (sqrt2 + 1))^2 * 1.0001], degree 2.
- erff: |x| < 1: erf(x) = x + x P(x^2), P(z) = erf(sqrt z) / sqrt z - 1 =
  2/sqrt(pi) sum (-z)^j / (j! (2j + 1)) - 1, degree 6 on [0, 1].
  1 <= |x| < 4: erf(2.5 + t), |t| <= 1.5, degree 15 in t (16
  coefficients: uniform error 1.0e-9, 0.017 ulp of erf(1); 15 coefficients
  would give 1.1e-8). One polynomial rather than a table of pieces: its
  coefficients are immediates in the code (dm_fk), where a table indexed
  per element would be loaded from L2 (about 14 cycles a load on GVSoC
  siracusa). |x| >= 4: erf = +-1 in float32 (1 - erf(3.9) < 2^-25)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mpmath as mp
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "runtime_c" / "include" / "dm_mathf.h"
BEGIN = "/* BEGIN constants: python scripts/derive_mathf.py --write */"
END = "/* END constants */"

mp.mp.dps = 50

EXP_R = mp.mpf("0.3467")
LOG_ZMAX = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2 * mp.mpf("1.0001")
ERF_BIG = 16


def f32(v: mp.mpf) -> float:
    return float(np.float32(float(v)))


def lit(v: float) -> str:
    """A C float literal that reads back as exactly the float32 `v`."""
    s = f"{v:.9e}f"
    assert float(np.float32(float(s[:-1]))) == v, s
    return s


def series(terms, z: mp.mpf) -> mp.mpf:
    """sum of terms(j, z) for j = 0.. until they drop below 1e-45."""
    acc, j = mp.mpf(0), 0
    while True:
        t = terms(j, z)
        acc += t
        if abs(t) < mp.mpf("1e-45") and j > 2:
            return acc
        j += 1


def cheb(fn, lo: mp.mpf, hi: mp.mpf, ncoef: int) -> list[float]:
    """float32 coefficients, constant term first."""
    c, _err = mp.chebyfit(fn, [lo, hi], ncoef, error=True)
    return [f32(v) for v in reversed(c)]  # chebyfit: highest degree first


def exp_coeffs() -> list[float]:
    def g(r: mp.mpf) -> mp.mpf:
        return series(lambda j, x: x**j / mp.factorial(j + 2), r)

    return cheb(g, -EXP_R, EXP_R, 5)


def log_coeffs() -> list[float]:
    def rz(z: mp.mpf) -> mp.mpf:  # R(z) / z
        return series(lambda j, x: 2 * x**j / (2 * j + 3), z)

    return cheb(rz, mp.mpf(0), LOG_ZMAX, 3)


def erf_small_coeffs() -> list[float]:
    k = 2 / mp.sqrt(mp.pi)

    def p(z: mp.mpf) -> mp.mpf:
        return k * series(lambda j, x: (-x) ** j / (mp.factorial(j) * (2 * j + 1)), z) - 1

    return cheb(p, mp.mpf(0), mp.mpf(1), 7)


def erf_big_coeffs() -> list[float]:
    return cheb(lambda t: mp.erf(mp.mpf(2.5) + t), mp.mpf(-1.5), mp.mpf(1.5), ERF_BIG)


def cody_waite_ln2() -> tuple[float, float]:
    ln2 = mp.log(2)
    hi = float(mp.nint(ln2 * 2**15) / 2**15)  # 16 significant bits (ln2 in [0.5, 1))
    lo = f32(ln2 - hi)
    return hi, lo


def block() -> str:
    hi, lo = cody_waite_ln2()
    out = [
        BEGIN,
        f"#define DM_LOG2E {lit(f32(1 / mp.log(2)))}",
        f"#define DM_LN2_HI {lit(hi)} /* 16 significant bits: k * DM_LN2_HI exact */",
        f"#define DM_LN2_LO {lit(lo)}",
    ]
    for name, cs in (("DM_EXP_G", exp_coeffs()), ("DM_LOG_R", log_coeffs())):
        out += [f"#define {name}{j} {lit(v)}" for j, v in enumerate(cs)]
    out += [f"#define DM_ERF_P{j} {lit(v)}" for j, v in enumerate(erf_small_coeffs())]
    out += [f"#define DM_ERF_B{j} {lit(v)}" for j, v in enumerate(erf_big_coeffs())]
    out.append(END)
    return "\n".join(out) + "\n"


def spliced(text: str, new: str) -> str:
    a, b = text.index(BEGIN), text.index(END) + len(END) + 1
    return text[:a] + new + text[b:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="rewrite the block in dm_mathf.h")
    g.add_argument("--check", action="store_true", help="exit 1 if dm_mathf.h's block differs")
    args = ap.parse_args(argv)
    new = block()
    if args.write:
        HEADER.write_text(spliced(HEADER.read_text(), new))
    elif args.check:
        text = HEADER.read_text()
        if spliced(text, new) != text:
            print(f"{HEADER.name}: constants differ from scripts/derive_mathf.py", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
