/* Softmax and its gradient: parallel over lines (dm_chunk of outer * inner). */
#include <math.h>

#include "dm_softmax.h"

void dm_softmax_fp32(void *args)
{
    const dm_softmax_args_t *a = (const dm_softmax_args_t *)args;
    const uint32_t len = a->len, inner = a->inner;
    uint32_t l0, l1;
    dm_chunk(a->outer * inner, &l0, &l1);
    for (uint32_t l = l0; l < l1; l++) {
        const uint32_t base = (l / inner) * len * inner + l % inner;
        const float *x = a->X + base;
        float *y = a->Y + base;
        float mx = x[0];
        for (uint32_t k = 1; k < len; k++) mx = x[k * inner] > mx ? x[k * inner] : mx;
        float sum = 0.0f;
        for (uint32_t k = 0; k < len; k++) {
            float e = expf(x[k * inner] - mx);
            y[k * inner] = e;
            sum += e;
        }
        for (uint32_t k = 0; k < len; k++) y[k * inner] = y[k * inner] / sum;
    }
}

void dm_softmax_grad_fp32(void *args)
{
    const dm_softmax_grad_args_t *a = (const dm_softmax_grad_args_t *)args;
    const uint32_t len = a->len, inner = a->inner;
    uint32_t l0, l1;
    dm_chunk(a->outer * inner, &l0, &l1);
    for (uint32_t l = l0; l < l1; l++) {
        const uint32_t base = (l / inner) * len * inner + l % inner;
        const float *dy = a->dY + base;
        const float *y = a->Y + base;
        float *dx = a->dX + base;
        float s = 0.0f;
        for (uint32_t k = 0; k < len; k++) s += dy[k * inner] * y[k * inner];
        for (uint32_t k = 0; k < len; k++) dx[k * inner] = y[k * inner] * (dy[k * inner] - s);
    }
}
