/* Log-softmax and its gradient along one axis (dm_kernels_ext.h):
 * parallel over the lines. */
#include <math.h>

#include "dm_kernels_ext.h"
#include "dm_rows.h"

void dm_log_softmax_fp32(void *args)
{
    const dm_log_softmax_args_t *a = (const dm_log_softmax_args_t *)args;
    const uint32_t len = a->len, inner = a->inner;
    uint32_t l0, l1;
    dm_chunk(a->outer * inner, &l0, &l1);
    for (uint32_t l = l0; l < l1; l++) {
        const uint32_t base = (l / inner) * len * inner + l % inner;
        dm_row_log_softmax(a->X + base, a->out + base, len, inner);
    }
}

void dm_log_softmax_grad_fp32(void *args)
{
    const dm_log_softmax_args_t *a = (const dm_log_softmax_args_t *)args;
    const uint32_t len = a->len, inner = a->inner;
    uint32_t l0, l1;
    dm_chunk(a->outer * inner, &l0, &l1);
    for (uint32_t l = l0; l < l1; l++) {
        const uint32_t base = (l / inner) * len * inner + l % inner;
        const float *dy = a->X + base;
        const float *y = a->Y + base;
        float *dx = a->out + base;
        float s = 0.0f;
        for (uint32_t k = 0; k < len; k++) s += dy[k * inner];
        for (uint32_t k = 0; k < len; k++) dx[k * inner] = dy[k * inner] - dm_expf(y[k * inner]) * s;
    }
}
