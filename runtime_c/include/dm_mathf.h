/* deeploy-mlir runtime, internal to the kernels: float32 exp, log and erf in
 * plain float32 C arithmetic (no fused multiply-add: the project builds with
 * -ffp-contract=off, so the host emulation and RV32F give the same bits),
 * always inlined, no calls, no stack, no table: every constant an
 * immediate of the code on RV32F (dm_fk).
 *
 * They replace libm's expf, logf and erff in every kernel (softmax, the
 * losses, log-softmax, GELU and its gradient, the unary kernel's exp, log,
 * sigmoid and tanh, GRU and LSTM gates): picolibc's take about 300 cycles an
 * element on a cluster core of GVSoC siracusa; these take a few dozen.
 *
 * Accuracy (tests/test_mathf.py, against float64 over dense sweeps of the
 * whole float range; docs/architecture.md has the exhaustive figures):
 * dm_expf and dm_logf within 1 ulp, dm_erff within 2 ulp, subnormal results
 * included. Special values: dm_expf(+inf) = +inf, dm_expf(-inf) = 0,
 * overflow to +inf for x > 88.72, underflow through the subnormals to +0;
 * dm_logf(+-0) = -inf, dm_logf(x < 0) = NaN (the constant NAN),
 * dm_logf(+inf) = +inf, subnormal x exact; dm_erff(+-inf) = +-1,
 * dm_erff(-0) = -0. A NaN gives a NaN (dm_logf and dm_erff return the
 * input itself; dm_expf computes one, whose payload is the platform's).
 *
 * The constants between BEGIN and END are written by
 * scripts/derive_mathf.py (Chebyshev fits with mpmath, rounded to float32;
 * its docstring gives each function and interval) and
 * tests/test_mathf.py checks them against it. The numpy model of these
 * functions, operation for operation, is tests/mathf_model.py. */
#ifndef DM_MATHF_H
#define DM_MATHF_H

#include <math.h>
#include <stdint.h>

/* BEGIN constants: python scripts/derive_mathf.py --write */
#define DM_LOG2E 1.442695022e+00f
#define DM_LN2_HI 6.931457520e-01f /* 16 significant bits: k * DM_LN2_HI exact */
#define DM_LN2_LO 1.428606765e-06f
#define DM_EXP_G0 5.000000000e-01f
#define DM_EXP_G1 1.666657627e-01f
#define DM_EXP_G2 4.166655615e-02f
#define DM_EXP_G3 8.363194764e-03f
#define DM_EXP_G4 1.392620383e-03f
#define DM_LOG_R0 6.666668653e-01f
#define DM_LOG_R1 3.998877704e-01f
#define DM_LOG_R2 2.958005369e-01f
#define DM_ERF_P0 1.283791661e-01f
#define DM_ERF_P1 -3.761262596e-01f
#define DM_ERF_P2 1.128359437e-01f
#define DM_ERF_P3 -2.685421146e-02f
#define DM_ERF_P4 5.189087242e-03f
#define DM_ERF_P5 -8.016864303e-04f
#define DM_ERF_P6 7.875874871e-05f
#define DM_ERF_B0 9.995930195e-01f
#define DM_ERF_B1 2.178283641e-03f
#define DM_ERF_B2 -5.445683375e-03f
#define DM_ERF_B3 8.350128308e-03f
#define DM_ERF_B4 -8.622641675e-03f
#define DM_ERF_B5 6.116989069e-03f
#define DM_ERF_B6 -2.797455527e-03f
#define DM_ERF_B7 5.436847568e-04f
#define DM_ERF_B8 2.586050832e-04f
#define DM_ERF_B9 -2.525023592e-04f
#define DM_ERF_B10 8.118151163e-05f
#define DM_ERF_B11 7.220430689e-06f
#define DM_ERF_B12 -1.574533962e-05f
#define DM_ERF_B13 3.621387350e-06f
#define DM_ERF_B14 8.934341054e-07f
#define DM_ERF_B15 -3.701029527e-07f
/* END constants */

#define DM_MATHF_INLINE static inline __attribute__((always_inline))

DM_MATHF_INLINE uint32_t dm_f2u(float x)
{
    union {
        float f;
        uint32_t u;
    } v;
    v.f = x;
    return v.u;
}

DM_MATHF_INLINE float dm_u2f(uint32_t u)
{
    union {
        float f;
        uint32_t u;
    } v;
    v.u = u;
    return v.f;
}

/* dm_fk(c): the float constant c, on RV32F built in a register from an
 * integer immediate (lui, addi, fmv.w.x: no load). gcc otherwise loads
 * every float constant from .rodata, which lives in L2 on PULP: about 14
 * cycles a load from a cluster core on GVSoC siracusa (an L1 load: 1), and
 * inside a loop with branches (dm_erff's ranges, the clamps) it does not
 * hoist them. The asm is not volatile, so gcc may still hoist or share it.
 * dm_clampf(x, lo, hi): fmin.s then fmax.s on RV32F (a NaN becomes lo: the
 * functions give a NaN back by testing x itself), compare and select
 * elsewhere (a NaN stays). */
#if defined(__riscv) && defined(__riscv_flen) && !defined(__riscv_zfinx) && !defined(DM_NO_ASM_FMA)
DM_MATHF_INLINE float dm_fk(float c)
{
    float r;
    __asm__("fmv.w.x %0, %1" : "=f"(r) : "r"(dm_f2u(c)));
    return r;
}
DM_MATHF_INLINE float dm_clampf(float x, float lo, float hi)
{
    __asm__("fmin.s %0, %0, %1\n\tfmax.s %0, %0, %2" : "+f"(x) : "f"(hi), "f"(lo));
    return x;
}
#elif defined(__riscv) && defined(__riscv_zfinx) && !defined(DM_NO_ASM_FMA)
/* Zfinx: the float is its bits in an x register (lui, addi: no load), and
 * fmin.s/fmax.s take x registers. */
DM_MATHF_INLINE float dm_fk(float c)
{
    float r;
    __asm__("mv %0, %1" : "=r"(r) : "r"(dm_f2u(c)));
    return r;
}
DM_MATHF_INLINE float dm_clampf(float x, float lo, float hi)
{
    __asm__("fmin.s %0, %0, %1\n\tfmax.s %0, %0, %2" : "+r"(x) : "r"(hi), "r"(lo));
    return x;
}
#else
#define dm_fk(c) (c)
DM_MATHF_INLINE float dm_clampf(float x, float lo, float hi)
{
    x = x > hi ? hi : x;
    return x < lo ? lo : x;
}
#endif

/* e^x. y = x clamped to [-104, 89] (e^-104 < 2^-150 rounds to 0, e^89
 * overflows: the results of the ends are those of x beyond them); k =
 * round(y log2e) by adding and subtracting 1.5 * 2^23 (no float-to-int
 * conversion); r = (y - k LN2_HI) - k LN2_LO (the first difference exact);
 * p = 1 + (r + r^2 g(r)), g in Horner's form; then p 2^k as
 * p 2^(k >> 1) 2^(k - (k >> 1)): both factors normal floats, the first
 * product exact, the second rounds once into the subnormals or to +inf.
 * A NaN x is returned as it is. */
DM_MATHF_INLINE float dm_expf(float x)
{
    const float magic = dm_fk(12582912.0f); /* 1.5 * 2^23 */
    const float y = dm_clampf(x, dm_fk(-104.0f), dm_fk(89.0f));
    const float t = y * dm_fk(DM_LOG2E) + magic;
    const float kf = t - magic;
    const int32_t k = (int32_t)(dm_f2u(t) - 0x4b400000u);
    const float r = (y - kf * dm_fk(DM_LN2_HI)) - kf * dm_fk(DM_LN2_LO);
    float g = dm_fk(DM_EXP_G4);
    g = dm_fk(DM_EXP_G3) + r * g;
    g = dm_fk(DM_EXP_G2) + r * g;
    g = dm_fk(DM_EXP_G1) + r * g;
    g = dm_fk(DM_EXP_G0) + r * g;
    const float p = dm_fk(1.0f) + (r + (r * r) * g);
    const int32_t k1 = k >> 1;
    const float s1 = dm_u2f((uint32_t)(k1 + 127) << 23);
    const float s2 = dm_u2f((uint32_t)(k - k1 + 127) << 23);
    const float e = (p * s1) * s2;
    return x != x ? x : e;
}

/* log(x). Positive normal x: 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2))
 * from the bits (the exponent taken from x's bits minus those of
 * 0x3f3504f3, about sqrt(1/2)); s = f / (2 + f), z = s^2, R = z (R0 + z (R1
 * + z R2)), hfsq = 0.5 f f; log = e LN2_HI - ((hfsq - (s (hfsq + R) +
 * e LN2_LO)) - f). Subnormal x is scaled by 2^25 first; zero, negative,
 * inf and NaN take the one branch out. */
DM_MATHF_INLINE float dm_logf(float x)
{
    uint32_t ix = dm_f2u(x);
    int32_t e0 = 0;
    if (ix - 0x00800000u >= 0x7f000000u) { /* not a positive normal finite float */
        if ((ix << 1) == 0u) return -INFINITY;
        if (x != x || ix == 0x7f800000u) return x;
        if (ix >> 31) return NAN;
        x = x * 33554432.0f; /* subnormal: * 2^25, exact */
        ix = dm_f2u(x);
        e0 = -25;
    }
    ix -= 0x3f3504f3u;
    const int32_t e = e0 + ((int32_t)ix >> 23);
    const float m = dm_u2f((ix & 0x007fffffu) + 0x3f3504f3u);
    const float f = m - dm_fk(1.0f);
    const float s = f / (dm_fk(2.0f) + f);
    const float z = s * s;
    float rr = dm_fk(DM_LOG_R2);
    rr = dm_fk(DM_LOG_R1) + z * rr;
    rr = dm_fk(DM_LOG_R0) + z * rr;
    const float big_r = z * rr;
    const float hfsq = dm_fk(0.5f) * f * f;
    const float dk = (float)e;
    return dk * dm_fk(DM_LN2_HI) - ((hfsq - (s * (hfsq + big_r) + dk * dm_fk(DM_LN2_LO))) - f);
}

/* erf(x). |x| < 1: x + x P(x^2) (P in Horner's form). 1 <= |x| < 4:
 * B(|x| - 2.5), B of degree 15 in Horner's form, the sign of x. |x| >= 4:
 * +-1; NaN: itself. */
DM_MATHF_INLINE float dm_erff(float x)
{
    const float ax = fabsf(x);
    const float one = dm_fk(1.0f);
    if (ax < one) {
        const float z = x * x;
        float q = dm_fk(DM_ERF_P6);
        q = dm_fk(DM_ERF_P5) + z * q;
        q = dm_fk(DM_ERF_P4) + z * q;
        q = dm_fk(DM_ERF_P3) + z * q;
        q = dm_fk(DM_ERF_P2) + z * q;
        q = dm_fk(DM_ERF_P1) + z * q;
        q = dm_fk(DM_ERF_P0) + z * q;
        return x + x * q;
    }
    float y;
    if (ax < dm_fk(4.0f)) {
        const float t = ax - dm_fk(2.5f);
        y = dm_fk(DM_ERF_B15);
        y = dm_fk(DM_ERF_B14) + t * y;
        y = dm_fk(DM_ERF_B13) + t * y;
        y = dm_fk(DM_ERF_B12) + t * y;
        y = dm_fk(DM_ERF_B11) + t * y;
        y = dm_fk(DM_ERF_B10) + t * y;
        y = dm_fk(DM_ERF_B9) + t * y;
        y = dm_fk(DM_ERF_B8) + t * y;
        y = dm_fk(DM_ERF_B7) + t * y;
        y = dm_fk(DM_ERF_B6) + t * y;
        y = dm_fk(DM_ERF_B5) + t * y;
        y = dm_fk(DM_ERF_B4) + t * y;
        y = dm_fk(DM_ERF_B3) + t * y;
        y = dm_fk(DM_ERF_B2) + t * y;
        y = dm_fk(DM_ERF_B1) + t * y;
        y = dm_fk(DM_ERF_B0) + t * y;
    } else {
        if (x != x) return x;
        y = one;
    }
    return x < dm_fk(0.0f) ? -y : y;
}

#endif /* DM_MATHF_H */
