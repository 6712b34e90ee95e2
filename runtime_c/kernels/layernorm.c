/* Layer normalization: parallel over rows (the forward, dX) or columns
 * (dScale, dBias). Statistics are two passes over a row, in order. */
#include <math.h>

#include "dm_layernorm.h"
#include "dm_rows.h"

/* A row's mean and 1 / sqrtf(variance + epsilon), two passes in order. The
 * loops take 4 elements a step, loads first, then the additions in their
 * order (the same bits as one element a step; the loads no longer wait on
 * the previous addition). */
__attribute__((noinline)) static void dm_row_stats(const float *x, uint32_t cols, float epsilon,
                                                  float *mean, float *inv)
{
    const uint32_t c4 = cols & ~3u;
    float s = 0.0f;
    for (uint32_t c = 0; c < c4; c += 4u) {
        const float x0 = x[c], x1 = x[c + 1u], x2 = x[c + 2u], x3 = x[c + 3u];
        s += x0;
        s += x1;
        s += x2;
        s += x3;
    }
    const float m = dm_row_sum(s, x + c4, cols - c4) / (float)cols;
    float v = 0.0f;
    for (uint32_t c = 0; c < c4; c += 4u) {
        const float d0 = x[c] - m, d1 = x[c + 1u] - m, d2 = x[c + 2u] - m, d3 = x[c + 3u] - m;
        const float e0 = d0 * d0, e1 = d1 * d1, e2 = d2 * d2, e3 = d3 * d3;
        v += e0;
        v += e1;
        v += e2;
        v += e3;
    }
    for (uint32_t c = c4; c < cols; c++) {
        const float d = x[c] - m;
        v += d * d;
    }
    *mean = m;
    *inv = 1.0f / sqrtf(v / (float)cols + epsilon);
}

/* The normalized element (x - mean) * inv_std. */
DM_INLINE float dm_xhat(float x, float mean, float inv)
{
    return (x - mean) * inv;
}

void dm_layernorm_fp32(void *args)
{
    const dm_layernorm_args_t *a = (const dm_layernorm_args_t *)args;
    const uint32_t cols = a->cols;
    uint32_t r0, r1;
    dm_chunk(a->rows, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const float *x = a->X + r * cols;
        float *y = a->Y + r * cols;
        float m, inv;
        dm_row_stats(x, cols, a->epsilon, &m, &inv);
        if (a->mean != NULL) a->mean[r] = m;
        if (a->inv_std != NULL) a->inv_std[r] = inv;
        const float *sc = a->scale, *bi = a->bias;
        const uint32_t c4 = bi != NULL ? cols & ~3u : 0u;
        for (uint32_t c = 0; c < c4; c += 4u) {
            const float x0 = x[c], x1 = x[c + 1u], x2 = x[c + 2u], x3 = x[c + 3u];
            const float s0 = sc[c], s1 = sc[c + 1u], s2 = sc[c + 2u], s3 = sc[c + 3u];
            const float b0 = bi[c], b1 = bi[c + 1u], b2 = bi[c + 2u], b3 = bi[c + 3u];
            y[c] = dm_xhat(x0, m, inv) * s0 + b0;
            y[c + 1u] = dm_xhat(x1, m, inv) * s1 + b1;
            y[c + 2u] = dm_xhat(x2, m, inv) * s2 + b2;
            y[c + 3u] = dm_xhat(x3, m, inv) * s3 + b3;
        }
        for (uint32_t c = c4; c < cols; c++) {
            const float v = dm_xhat(x[c], m, inv) * sc[c];
            y[c] = bi != NULL ? v + bi[c] : v;
        }
    }
}

/* One row of dX: the sums of g = dY * scale and of g * xhat in order, then
 * the outputs; 4 columns a step, loads first (the same bits as one column a
 * step). A leaf of its own (noinline): its registers are the caller-saved
 * ones, so the kernel's stack path stays that of the one-column loops. */
__attribute__((noinline)) static void dm_ln_grad_row(const float *dy, const float *x,
                                                    const float *sc, float *dx, uint32_t cols,
                                                    float m, float inv)
{
    float sum_g = 0.0f, sum_gx = 0.0f;
    uint32_t c = 0;
    for (; c + 4u <= cols; c += 4u) {
        const float g0 = dy[c] * sc[c], g1 = dy[c + 1u] * sc[c + 1u];
        const float g2 = dy[c + 2u] * sc[c + 2u], g3 = dy[c + 3u] * sc[c + 3u];
        const float h0 = g0 * dm_xhat(x[c], m, inv), h1 = g1 * dm_xhat(x[c + 1u], m, inv);
        const float h2 = g2 * dm_xhat(x[c + 2u], m, inv);
        const float h3 = g3 * dm_xhat(x[c + 3u], m, inv);
        sum_g += g0;
        sum_gx += h0;
        sum_g += g1;
        sum_gx += h1;
        sum_g += g2;
        sum_gx += h2;
        sum_g += g3;
        sum_gx += h3;
    }
    for (; c < cols; c++) {
        const float g = dy[c] * sc[c];
        sum_g += g;
        sum_gx += g * dm_xhat(x[c], m, inv);
    }
    const float mean_g = sum_g / (float)cols, mean_gx = sum_gx / (float)cols;
    for (c = 0; c + 4u <= cols; c += 4u) {
        const float x0 = x[c], x1 = x[c + 1u], x2 = x[c + 2u], x3 = x[c + 3u];
        const float g0 = dy[c] * sc[c], g1 = dy[c + 1u] * sc[c + 1u];
        const float g2 = dy[c + 2u] * sc[c + 2u], g3 = dy[c + 3u] * sc[c + 3u];
        dx[c] = inv * (g0 - mean_g - dm_xhat(x0, m, inv) * mean_gx);
        dx[c + 1u] = inv * (g1 - mean_g - dm_xhat(x1, m, inv) * mean_gx);
        dx[c + 2u] = inv * (g2 - mean_g - dm_xhat(x2, m, inv) * mean_gx);
        dx[c + 3u] = inv * (g3 - mean_g - dm_xhat(x3, m, inv) * mean_gx);
    }
    for (; c < cols; c++) {
        const float xhat = dm_xhat(x[c], m, inv);
        dx[c] = inv * (dy[c] * sc[c] - mean_g - xhat * mean_gx);
    }
}

void dm_layernorm_grad_fp32(void *args)
{
    const dm_layernorm_grad_args_t *a = (const dm_layernorm_grad_args_t *)args;
    const uint32_t cols = a->cols;
    uint32_t r0, r1;
    dm_chunk(a->rows, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const float *x = a->X + r * cols;
        const float *dy = a->dY + r * cols;
        float *dx = a->dX + r * cols;
        float m, inv;
        if (a->mean != NULL && a->inv_std != NULL) {
            m = a->mean[r];
            inv = a->inv_std[r];
        } else {
            dm_row_stats(x, cols, a->epsilon, &m, &inv);
        }
        dm_ln_grad_row(dy, x, a->scale, dx, cols, m, inv);
    }
}

void dm_layernorm_grad_params_fp32(void *args)
{
    const dm_layernorm_grad_params_args_t *a = (const dm_layernorm_grad_params_args_t *)args;
    const uint32_t cols = a->cols;
    uint32_t c0, c1;
    dm_chunk(cols, &c0, &c1);
    for (uint32_t c = c0; c < c1; c++) {
        /* acc: the sums so far (earlier tiles of the rows) are the start */
        float ds = a->acc && a->dScale != NULL ? a->dScale[c] : 0.0f;
        float db = a->acc && a->dBias != NULL ? a->dBias[c] : 0.0f;
        for (uint32_t r = 0; r < a->rows; r++) {
            const float dy = a->dY[r * cols + c];
            ds += dy * dm_xhat(a->X[r * cols + c], a->mean[r], a->inv_std[r]);
            db += dy;
        }
        if (a->dScale != NULL) a->dScale[c] = ds;
        if (a->dBias != NULL) a->dBias[c] = db;
    }
}
