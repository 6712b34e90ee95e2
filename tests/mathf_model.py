"""numpy models of runtime_c/include/dm_mathf.h's dm_expf, dm_logf and
dm_erff, operation for operation in float32 (numpy's float32 add, multiply
and divide round as C's do without contraction), so that the kernel tests
can ask the kernels that call them for identical bits. The constants are
read from the header itself (tests/test_mathf.py checks them against
scripts/derive_mathf.py and this model against the C, bit for bit)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

HEADER = Path(__file__).resolve().parents[1] / "runtime_c" / "include" / "dm_mathf.h"
F32 = np.float32
U32 = np.uint32


def _constants() -> dict[str, np.float32]:
    text = HEADER.read_text()
    return {
        m[1]: F32(float(m[2]))
        for m in re.finditer(r"^#define (DM_\w+) (\S+?)f\b", text, flags=re.MULTILINE)
    }


C = _constants()
MAGIC = F32(12582912.0)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, F32).view(U32)


def _float(u: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(u.astype(np.int64) & 0xFFFFFFFF).astype(U32).view(F32)


def expf(x: np.ndarray) -> np.ndarray:
    x = np.array(x, F32, ndmin=1)
    shape = x.shape
    x = x.ravel()
    with np.errstate(all="ignore"):
        x = np.where(x > F32(89.0), F32(89.0), x)
        x = np.where(x < F32(-104.0), F32(-104.0), x)
        t = x * C["DM_LOG2E"] + MAGIC
        kf = t - MAGIC
        k = ((_bits(t).astype(np.int64) - 0x4B400000) + 2**31) % 2**32 - 2**31
        r = (x - kf * C["DM_LN2_HI"]) - kf * C["DM_LN2_LO"]
        g = np.full_like(r, C["DM_EXP_G4"])
        for j in (3, 2, 1, 0):
            g = C[f"DM_EXP_G{j}"] + r * g
        p = F32(1.0) + (r + (r * r) * g)
        k1 = k >> 1
        s1 = _float((k1 + 127) << 23)
        s2 = _float((k - k1 + 127) << 23)
        e = ((p * s1) * s2).astype(F32)
        return np.where(np.isnan(x), x, e).reshape(shape)


def logf(x: np.ndarray) -> np.ndarray:
    x = np.array(x, F32, ndmin=1)
    shape = x.shape
    x = x.ravel().copy()
    ix = _bits(x).astype(np.int64)
    out = np.zeros_like(x)
    special = (ix - 0x00800000) % 2**32 >= 0x7F000000
    zero = special & ((ix << 1) % 2**32 == 0)
    nan_or_inf = special & ~zero & ((x != x) | (ix == 0x7F800000))
    neg = special & ~zero & ~nan_or_inf & (ix >> 31 == 1)
    sub = special & ~zero & ~nan_or_inf & ~neg
    out[zero] = -np.inf
    out[nan_or_inf] = x[nan_or_inf]
    out[neg] = np.nan
    e0 = np.zeros(x.shape, np.int64)
    x[sub] = x[sub] * F32(33554432.0)
    e0[sub] = -25
    main = ~(zero | nan_or_inf | neg)
    xm, e0 = x[main], e0[main]
    ix = (_bits(xm).astype(np.int64) - 0x3F3504F3) % 2**32
    e = e0 + ((ix + 2**31) % 2**32 - 2**31 >> 23)
    m = _float((ix & 0x007FFFFF) + 0x3F3504F3)
    with np.errstate(all="ignore"):
        f = m - F32(1.0)
        s = f / (F32(2.0) + f)
        z = s * s
        rr = np.full_like(z, C["DM_LOG_R2"])
        rr = C["DM_LOG_R1"] + z * rr
        rr = C["DM_LOG_R0"] + z * rr
        big_r = z * rr
        hfsq = F32(0.5) * f * f
        dk = e.astype(F32)
        out[main] = dk * C["DM_LN2_HI"] - ((hfsq - (s * (hfsq + big_r) + dk * C["DM_LN2_LO"])) - f)
    return out.reshape(shape)


def erff(x: np.ndarray) -> np.ndarray:
    x = np.array(x, F32, ndmin=1)
    shape = x.shape
    x = x.ravel()
    ax = np.abs(x)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        small = ax < F32(1.0)
        xs = x[small]
        z = xs * xs
        q = np.full_like(z, C["DM_ERF_P6"])
        for j in (5, 4, 3, 2, 1, 0):
            q = C[f"DM_ERF_P{j}"] + z * q
        out[small] = xs + xs * q
        mid = ~small & (ax < F32(4.0))
        t = ax[mid] - F32(2.5)
        y = np.full_like(t, C["DM_ERF_B15"])
        for j in range(14, -1, -1):
            y = C[f"DM_ERF_B{j}"] + t * y
        out[mid] = np.where(x[mid] < 0, -y, y)
        big = ~small & ~mid
        xb = x[big]
        out[big] = np.where(xb != xb, xb, np.where(xb < 0, F32(-1.0), F32(1.0)))
    return out.reshape(shape)
