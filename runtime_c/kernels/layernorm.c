/* Layer normalization: parallel over rows (the forward, dX) or columns
 * (dScale, dBias). Statistics are two passes over a row, in order. */
#include <math.h>

#include "dm_layernorm.h"
#include "dm_rows.h"

/* A row's mean and 1 / sqrtf(variance + epsilon), two passes in order. */
static void dm_row_stats(const float *x, uint32_t cols, float epsilon, float *mean, float *inv)
{
    const float m = dm_row_sum(0.0f, x, cols) / (float)cols;
    float v = 0.0f;
    for (uint32_t c = 0; c < cols; c++) {
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
        for (uint32_t c = 0; c < cols; c++) {
            const float v = dm_xhat(x[c], m, inv) * a->scale[c];
            y[c] = a->bias != NULL ? v + a->bias[c] : v;
        }
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
        float sum_g = 0.0f, sum_gx = 0.0f;
        for (uint32_t c = 0; c < cols; c++) {
            const float g = dy[c] * a->scale[c];
            sum_g += g;
            sum_gx += g * dm_xhat(x[c], m, inv);
        }
        const float mean_g = sum_g / (float)cols, mean_gx = sum_gx / (float)cols;
        for (uint32_t c = 0; c < cols; c++) {
            const float xhat = dm_xhat(x[c], m, inv);
            dx[c] = inv * (dy[c] * a->scale[c] - mean_g - xhat * mean_gx);
        }
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
