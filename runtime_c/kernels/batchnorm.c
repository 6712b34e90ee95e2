/* BatchNorm training forward and gradient (dm_kernels_ext.h): statistics
 * parallel over channels, the elementwise parts over the N*C rows. */
#include <math.h>

#include "dm_batchnorm.h"

void dm_batchnorm_stats_fp32(void *args)
{
    const dm_batchnorm_args_t *a = (const dm_batchnorm_args_t *)args;
    const uint32_t N = a->N, C = a->C, S = a->S;
    const float m = (float)(N * S);
    uint32_t c0, c1;
    dm_chunk(C, &c0, &c1);
    for (uint32_t c = c0; c < c1; c++) {
        float sum = 0.0f;
        for (uint32_t n = 0; n < N; n++) {
            const float *x = a->X + (n * C + c) * S;
            for (uint32_t s = 0; s < S; s++) sum += x[s];
        }
        const float mean = sum / m;
        float sq = 0.0f;
        for (uint32_t n = 0; n < N; n++) {
            const float *x = a->X + (n * C + c) * S;
            for (uint32_t s = 0; s < S; s++) {
                const float d = x[s] - mean;
                sq += d * d;
            }
        }
        const float var = sq / m;
        a->mean[c] = mean;
        a->inv_std[c] = sqrtf(1.0f / (var + a->epsilon));
        const float keep = a->momentum, take = 1.0f - a->momentum;
        if (a->running_mean != NULL) {
            a->running_mean[c] = a->running_mean_in[c] * keep + mean * take;
        }
        if (a->running_var != NULL) a->running_var[c] = a->running_var_in[c] * keep + var * take;
    }
}

void dm_batchnorm_apply_fp32(void *args)
{
    const dm_batchnorm_args_t *a = (const dm_batchnorm_args_t *)args;
    const uint32_t C = a->C, S = a->S;
    uint32_t r0, r1;
    dm_chunk(a->N * C, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t c = r % C;
        const float ns = a->inv_std[c] * a->scale[c];
        const float nb = a->bias[c] - a->mean[c] * ns;
        const float *x = a->X + r * S;
        float *y = a->Y + r * S;
        for (uint32_t s = 0; s < S; s++) y[s] = x[s] * ns + nb;
    }
}

void dm_batchnorm_grad_reduce_fp32(void *args)
{
    const dm_batchnorm_grad_args_t *a = (const dm_batchnorm_grad_args_t *)args;
    const uint32_t N = a->N, C = a->C, S = a->S;
    uint32_t c0, c1;
    dm_chunk(C, &c0, &c1);
    for (uint32_t c = c0; c < c1; c++) {
        const float mean = a->mean[c], inv_std = a->inv_std[c];
        float db = 0.0f, ds = 0.0f;
        for (uint32_t n = 0; n < N; n++) {
            const float *x = a->X + (n * C + c) * S;
            const float *dy = a->dY + (n * C + c) * S;
            for (uint32_t s = 0; s < S; s++) {
                db += dy[s];
                ds += ((x[s] - mean) * inv_std) * dy[s];
            }
        }
        a->dbias[c] = db;
        a->dscale[c] = ds;
    }
}

void dm_batchnorm_grad_apply_fp32(void *args)
{
    const dm_batchnorm_grad_args_t *a = (const dm_batchnorm_grad_args_t *)args;
    const uint32_t C = a->C, S = a->S;
    const float m = (float)(a->N * S);
    uint32_t r0, r1;
    dm_chunk(a->N * C, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t c = r % C;
        const float mean = a->mean[c], inv_std = a->inv_std[c];
        const float k = (a->scale[c] * inv_std) / m;
        const float db = a->dbias[c], ds = a->dscale[c];
        const float *x = a->X + r * S;
        const float *dy = a->dY + r * S;
        float *dx = a->dX + r * S;
        for (uint32_t s = 0; s < S; s++) {
            dx[s] = k * ((dy[s] * m - db) - ((x[s] - mean) * ds) * inv_std);
        }
    }
}
