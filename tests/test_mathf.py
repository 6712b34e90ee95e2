"""runtime_c/include/dm_mathf.h: dm_expf, dm_logf and dm_erff.

- Their constants are what scripts/derive_mathf.py derives (mpmath).
- Accuracy: dense sweeps of the whole float32 range (every 509th bit
  pattern, ~8.4 M inputs, plus every float around the reduction and piece
  boundaries) against float64 numpy / math.erf: the error in units in the
  last place of the float32 result, ulp(y) = 2^(floor(log2 |y|) - 23), at
  least 2^-149 (subnormals). The bounds asserted are the header's.
- Special values (inf, NaN, zeros, overflow, underflow, subnormals).
- tests/mathf_model.py, the numpy model the kernel tests use, gives the C's
  bits on all those inputs.
The C is built as the kernels are (gcc -O2 -ffp-contract=off)."""

from __future__ import annotations

import ctypes
import importlib.util
import math
import shutil
import subprocess
from pathlib import Path

import mathf_model as M
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
F32 = np.float32
GCC = shutil.which("gcc")
pytestmark = pytest.mark.skipif(GCC is None, reason="gcc is needed to build runtime_c")

#: the header's accuracy claims, in ulps
BOUND = {"exp": 1.1, "log": 1.0, "erf": 2.0}

SRC = '#include <stdint.h>\n#include "dm_mathf.h"\n' + "".join(
    f"void t_{n}(const float *x, float *y, uint32_t k)\n"
    f"{{ for (uint32_t i = 0; i < k; i++) y[i] = dm_{n}f(x[i]); }}\n"
    for n in ("exp", "log", "erf")
)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    d = tmp_path_factory.mktemp("mathf")
    (d / "t.c").write_text(SRC)
    so = d / "libt.so"
    inc = ROOT / "runtime_c" / "include"
    flags = ["-O2", "-std=gnu11", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror"]
    subprocess.run([GCC, *flags, "-fPIC", "-shared", f"-I{inc}", d / "t.c", "-o", so], check=True)
    return ctypes.CDLL(str(so))


def run(lib: ctypes.CDLL, fn: str, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, F32)
    y = np.empty_like(x)
    getattr(lib, "t_" + fn)(
        ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_uint32(x.size)
    )
    return y


def ulp_error(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|y - ref| in ulps of the float32 result ref rounds to (finite refs)."""
    a = np.abs(ref)
    with np.errstate(divide="ignore"):
        ex = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    ex = np.maximum(ex, -126.0)
    return np.abs(y.astype(np.float64) - ref) / np.exp2(ex - 23)


def sweep(step: int = 509) -> np.ndarray:
    """every `step`-th float32 bit pattern (no NaNs)."""
    x = np.arange(0, 2**32, step, dtype=np.uint64).astype(np.uint32).view(F32)
    return x[~np.isnan(x)]


def around(points: list[float], n: int = 2048) -> np.ndarray:
    """n consecutive floats on each side of each point."""
    out = []
    for p in points:
        b = int(np.array(p, F32).view(np.uint32))
        out.append(np.arange(b - n, b + n, dtype=np.int64).astype(np.uint32).view(F32))
    x = np.concatenate(out)
    return x[~np.isnan(x)]


def reference(fn: str, x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if fn == "exp":
            return np.exp(x64)
        if fn == "log":
            return np.log(x64)
    return np.frompyfunc(math.erf, 1, 1)(x64).astype(np.float64)


def inputs(fn: str) -> np.ndarray:
    x = sweep()
    if fn == "exp":
        edges = [k * math.log(2) / 2 for k in range(-9, 10, 2)] + [88.72, -87.33, -103.0, 0.0]
        x = np.concatenate([x[(x > -110) & (x < 90)], around(edges)])
    elif fn == "log":
        x = np.concatenate([x[x > 0], around([1.0, 2.0, 0.5, math.sqrt(0.5), math.sqrt(2)])])
        x = x[x > 0]
    else:
        x = x[np.abs(x) < 5]
        x = np.concatenate([x[::4], around([1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, -1.0])])
    return x


@pytest.mark.parametrize("fn", ["exp", "log", "erf"])
def test_accuracy_and_model(lib: ctypes.CDLL, fn: str) -> None:
    x = inputs(fn)
    y = run(lib, fn, x)
    ref = reference(fn, x)
    finite = np.abs(ref) < float(np.finfo(F32).max)
    err = ulp_error(y[finite], ref[finite])
    worst = int(np.argmax(err))
    assert err.max() <= BOUND[fn], (fn, float(err.max()), float(x[finite][worst]))
    # beyond float32's range (exp's overflow): +inf
    assert (y[~finite] == np.inf).all()
    # the numpy model: the same bits
    want = getattr(M, fn + "f")(x)
    bad = y.view(np.uint32) != want.view(np.uint32)
    assert not bad.any(), (fn, x[bad][:4], y[bad][:4], want[bad][:4])


def test_exp_special_values(lib: ctypes.CDLL) -> None:
    tiny = F32(2.0**-149)
    x = np.array([np.inf, -np.inf, 0.0, -0.0, 88.72283, 88.72284, 89.0, 1e30,
                  -103.27893, -103.98, -104.0, -1e30, tiny, -tiny], F32)  # fmt: skip
    y = run(lib, "exp", x)
    assert y[0] == np.inf and y[1] == 0 and y[2] == 1 and y[3] == 1
    assert np.isfinite(y[4]) and y[4] > 3.4e38  # the largest x below ln(FLT_MAX)
    assert y[5] == np.inf and y[6] == np.inf and y[7] == np.inf  # overflow
    assert y[8] == tiny  # e^-103.27893 ~ 2^-149: the smallest subnormal
    assert y[9] == 0 and y[10] == 0 and y[11] == 0  # below 2^-150: +0
    assert not np.signbit(y[9:12]).any()
    assert y[12] == 1 and y[13] == 1
    assert np.isnan(run(lib, "exp", np.array([np.nan], F32)))[0]


def test_log_special_values(lib: ctypes.CDLL) -> None:
    tiny = F32(2.0**-149)
    x = np.array([0.0, -0.0, -1.0, -np.inf, np.inf, np.nan, 1.0, tiny, F32(2.0**-127), 2.0], F32)
    y = run(lib, "log", x)
    assert y[0] == -np.inf and y[1] == -np.inf
    assert np.isnan(y[2]) and np.isnan(y[3]) and np.isnan(y[5])
    assert y[4] == np.inf and y[6] == 0 and not np.signbit(y[6])
    assert y[7] == F32(-149 * math.log(2))  # subnormals exact in the exponent
    assert y[8] == F32(-127 * math.log(2))
    assert y[9] == F32(math.log(2))


def test_erf_special_values(lib: ctypes.CDLL) -> None:
    tiny = F32(2.0**-149)
    x = np.array([np.inf, -np.inf, 0.0, -0.0, 4.0, -4.0, 1e30, tiny, -tiny, np.nan], F32)
    y = run(lib, "erf", x)
    assert y[0] == 1 and y[1] == -1 and y[4] == 1 and y[5] == -1 and y[6] == 1
    assert y[2] == 0 and not np.signbit(y[2]) and y[3] == 0 and np.signbit(y[3])
    assert y[7] == tiny and y[8] == -tiny  # erf(x) ~ 1.128 x rounds to x at 2^-149
    assert np.isnan(y[9])
    # odd: erf(-x) == -erf(x), bit for bit
    v = inputs("erf")
    assert (run(lib, "erf", -v).view(np.uint32) == (-run(lib, "erf", v)).view(np.uint32)).all()


def test_constants_are_the_derivation() -> None:
    """dm_mathf.h's constant block is what scripts/derive_mathf.py writes."""
    if importlib.util.find_spec("mpmath") is None:
        pytest.fail("mpmath is needed (pip install -e '.[test]')")
    path = ROOT / "scripts" / "derive_mathf.py"
    spec = importlib.util.spec_from_file_location("derive_mathf", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = M.HEADER.read_text()
    assert mod.spliced(text, mod.block()) == text
