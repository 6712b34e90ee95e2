/* Gather along one axis and its gradient, a scatter-add (dm_kernels_ext.h). */
#include "dm_kernels_ext.h"

static inline uint32_t dm_gather_row(int64_t i, uint32_t rows)
{
    return (uint32_t)(i < 0 ? i + (int64_t)rows : i);
}

void dm_gather_fp32(void *args)
{
    const dm_gather_args_t *a = (const dm_gather_args_t *)args;
    const uint32_t n = a->n, inner = a->inner;
    uint32_t r0, r1;
    dm_chunk(a->outer * n, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t o = r / n, j = r % n;
        const float *src = a->data + (o * a->rows + dm_gather_row(a->indices[j], a->rows)) * inner;
        float *dst = a->Y + r * inner;
        for (uint32_t k = 0; k < inner; k++) dst[k] = src[k];
    }
}

void dm_gather_grad_fp32(void *args)
{
    const dm_gather_grad_args_t *a = (const dm_gather_grad_args_t *)args;
    const uint32_t n = a->n, rows = a->rows, inner = a->inner;
    uint32_t r0, r1;
    dm_chunk(a->outer * rows, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t o = r / rows, row = r % rows;
        float *dst = a->dX + r * inner;
        for (uint32_t k = 0; k < inner; k++) dst[k] = 0.0f;
        for (uint32_t j = 0; j < n; j++) {
            if (dm_gather_row(a->indices[j], rows) != row) continue;
            const float *src = a->dY + (o * n + j) * inner;
            for (uint32_t k = 0; k < inner; k++) dst[k] += src[k];
        }
    }
}
