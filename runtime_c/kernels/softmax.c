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
        uint32_t k = 0;
        if (inner == 1u) { /* contiguous: 4 products a step, added in order */
            for (; k + 4u <= len; k += 4u) {
                const float p0 = dy[k] * y[k], p1 = dy[k + 1u] * y[k + 1u];
                const float p2 = dy[k + 2u] * y[k + 2u], p3 = dy[k + 3u] * y[k + 3u];
                s += p0;
                s += p1;
                s += p2;
                s += p3;
            }
        }
        for (; k < len; k++) s += dy[k * inner] * y[k * inner];
        k = 0;
        if (inner == 1u) { /* loads before stores: dX may alias dY or Y */
            for (; k + 4u <= len; k += 4u) {
                const float y0 = y[k], y1 = y[k + 1u], y2 = y[k + 2u], y3 = y[k + 3u];
                const float d0 = dy[k], d1 = dy[k + 1u], d2 = dy[k + 2u], d3 = dy[k + 3u];
                dx[k] = y0 * (d0 - s);
                dx[k + 1u] = y1 * (d1 - s);
                dx[k + 2u] = y2 * (d2 - s);
                dx[k + 3u] = y3 * (d3 - s);
            }
        }
        for (; k < len; k++) dx[k * inner] = y[k * inner] * (dy[k * inner] - s);
    }
}
