/* deeploy-mlir runtime, internal to the kernels (dm_kernels.h does not
 * include it): loops over one row of n floats, element k at x[k * stride],
 * shared by the softmax, log-softmax, loss (with and without ignore_index),
 * layer-norm and pooling kernels. Each walks
 * k = 0..n-1 in order and accumulates in a float with the same operations
 * as the loops they replaced, so a kernel keeps the summation order its
 * header documents, bit for bit. Always inlined (DM_INLINE): a constant
 * stride of 1 folds away, and gcc -O2 gives the code of the loops they
 * replaced. */
#ifndef DM_ROWS_H
#define DM_ROWS_H

#include <math.h>

#include "dm_common.h"
#include "dm_mathf.h"

/* The largest element, x[0] first: a later one replaces it only when `>`
 * (the first among equals; a NaN only when it comes first). n > 0. */
DM_INLINE float dm_row_max(const float *x, uint32_t n, uint32_t stride)
{
    float mx = x[0];
    for (uint32_t k = 1; k < n; k++) mx = x[k * stride] > mx ? x[k * stride] : mx;
    return mx;
}

/* The sum of dm_expf(x[k] - mx), added in order. */
DM_INLINE float dm_row_exp_sum(const float *x, uint32_t n, uint32_t stride, float mx)
{
    float sum = 0.0f;
    for (uint32_t k = 0; k < n; k++) sum += dm_expf(x[k * stride] - mx);
    return sum;
}

/* y[k] = dm_expf(x[k] - mx) (y may alias x); returns dm_row_exp_sum's sum, the
 * same bits. A NULL test in one helper for both would cost the storing
 * loop a branch: gcc -O2 does not unswitch loops. */
DM_INLINE float dm_row_exp(const float *x, float *y, uint32_t n, uint32_t stride, float mx)
{
    float sum = 0.0f;
    for (uint32_t k = 0; k < n; k++) {
        const float e = dm_expf(x[k * stride] - mx);
        y[k * stride] = e;
        sum += e;
    }
    return sum;
}

/* y[k] = x[k] - mx - lse, the log-softmax of the row: mx = dm_row_max,
 * lse = dm_logf(dm_row_exp_sum); y may alias x. */
DM_INLINE void dm_row_log_softmax(const float *x, float *y, uint32_t n, uint32_t stride)
{
    const float mx = dm_row_max(x, n, stride);
    const float lse = dm_logf(dm_row_exp_sum(x, n, stride, mx));
    for (uint32_t k = 0; k < n; k++) y[k * stride] = x[k * stride] - mx - lse;
}

/* acc + x[0] + x[1] + ... + x[n-1], added in that order (contiguous). */
DM_INLINE float dm_row_sum(float acc, const float *x, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) acc += x[k];
    return acc;
}

/* y[k] = y[k] / d, the bits of the division, for the price of one division
 * per row: fdiv.s is one unit for the whole cluster on GVSoC siracusa (about
 * 14 cycles a division, the 8 cores' divisions queue: 112 cycles each at 8
 * cores, measured), a multiply-add is one of 4 FPUs' single-cycle ops.
 * For 1 <= d <= 2^100 (r = 1 / d, rounded, is then a normal float):
 * q0 = y r, e = y - q0 d by fmaf (exact), q = q0 + e r by fmaf rounds to the
 * correctly rounded y / d (Markstein's theorem: r within half an ulp of
 * 1 / d, q0 within an ulp of y / d); e is exact only while q0 is not too
 * small, so |q0| < 2^-100 takes the division itself, and so do an infinite
 * or NaN q0 (y infinite or NaN). Any other d (inf, NaN, below 1): the
 * division for every element. test_kernel_softmax_division_bits
 * (tests/test_transformer_ops.py) checks the bits against the division. */
DM_INLINE float dm_div_by(float y, float d, float r)
{
    const float q0 = y * r;
    /* |q0| < 2^-100, or q0 infinite or NaN: the division */
    if ((dm_f2u(q0) & 0x7fffffffu) - 0x0d800000u >= 0x7f800000u - 0x0d800000u) return y / d;
    return fmaf(fmaf(-q0, d, y), r, q0);
}

DM_INLINE void dm_row_div(float *y, uint32_t n, uint32_t stride, float d)
{
    if (!(d >= 1.0f && d <= 0x1p100f)) {
        for (uint32_t k = 0; k < n; k++) y[k * stride] = y[k * stride] / d;
        return;
    }
    const float r = 1.0f / d;
    for (uint32_t k = 0; k < n; k++) y[k * stride] = dm_div_by(y[k * stride], d, r);
}

/* y[k] = v (contiguous). */
DM_INLINE void dm_row_fill(float *y, uint32_t n, float v)
{
    for (uint32_t k = 0; k < n; k++) y[k] = v;
}

#endif
