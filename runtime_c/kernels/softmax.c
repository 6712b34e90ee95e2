/* Softmax and its gradient: parallel over lines (dm_chunk of outer * inner). */
#include "dm_rows.h"
#include "dm_softmax.h"

/* Where line l (of outer * inner) starts in a [outer, len, inner] tensor. */
DM_INLINE uint32_t dm_line_start(uint32_t l, uint32_t len, uint32_t inner)
{
    return (l / inner) * len * inner + l % inner;
}

void dm_softmax_fp32(void *args)
{
    const dm_softmax_args_t *a = (const dm_softmax_args_t *)args;
    const uint32_t len = a->len, inner = a->inner;
    uint32_t l0, l1;
    dm_chunk(a->outer * inner, &l0, &l1);
    for (uint32_t l = l0; l < l1; l++) {
        const uint32_t base = dm_line_start(l, len, inner);
        const float *x = a->X + base;
        float *y = a->Y + base;
        const float mx = dm_row_max(x, len, inner);
        const float sum = dm_row_exp(x, y, len, inner, mx);
        dm_row_div(y, len, inner, sum);
    }
}

void dm_softmax_grad_fp32(void *args)
{
    const dm_softmax_grad_args_t *a = (const dm_softmax_grad_args_t *)args;
    const uint32_t len = a->len, inner = a->inner;
    uint32_t l0, l1;
    dm_chunk(a->outer * inner, &l0, &l1);
    for (uint32_t l = l0; l < l1; l++) {
        const uint32_t base = dm_line_start(l, len, inner);
        const float *dy = a->dY + base;
        const float *y = a->Y + base;
        float *dx = a->dX + base;
        float s = 0.0f;
        for (uint32_t k = 0; k < len; k++) s += dy[k * inner] * y[k * inner];
        for (uint32_t k = 0; k < len; k++) dx[k * inner] = y[k * inner] * (dy[k * inner] - s);
    }
}
