/* Elementwise kernels: parallel over the flat output index. Each output
 * element is written after its own inputs are read, so in-place use is safe. */
#include <math.h>

#include "dm_elementwise.h"

static inline float dm_binary_apply(uint32_t op, float x, float y)
{
    switch (op) {
    case DM_BINARY_ADD: return x + y;
    case DM_BINARY_SUB: return x - y;
    case DM_BINARY_MUL: return x * y;
    case DM_BINARY_POW: return powf(x, y);
    default: return x / y; /* DM_BINARY_DIV */
    }
}

void dm_binary_fp32(void *args)
{
    const dm_binary_args_t *a = (const dm_binary_args_t *)args;
    const uint32_t rank = a->rank;
    uint32_t total = 1u;
    for (uint32_t d = 0; d < rank; d++) total *= a->shape[d];
    uint32_t i0, i1;
    dm_chunk(total, &i0, &i1);
    if (i0 >= i1) return;
    /* multi-index of i0 and the matching offsets into A and B; then an
     * odometer (last dim fastest) walks i0..i1-1 without divisions */
    uint32_t idx[4] = {0u, 0u, 0u, 0u};
    uint32_t ia = 0u, ib = 0u, rest = i0;
    for (uint32_t d = rank; d-- > 0;) {
        idx[d] = rest % a->shape[d];
        rest /= a->shape[d];
        ia += idx[d] * a->a_strides[d];
        ib += idx[d] * a->b_strides[d];
    }
    for (uint32_t i = i0; i < i1; i++) {
        a->Y[i] = dm_binary_apply(a->op, a->A[ia], a->B[ib]);
        for (uint32_t d = rank; d-- > 0;) {
            ia += a->a_strides[d];
            ib += a->b_strides[d];
            if (++idx[d] < a->shape[d]) break;
            ia -= idx[d] * a->a_strides[d];
            ib -= idx[d] * a->b_strides[d];
            idx[d] = 0u;
        }
    }
}

void dm_relu_fp32(void *args)
{
    const dm_unary_args_t *a = (const dm_unary_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    for (uint32_t i = i0; i < i1; i++) {
        float x = a->X[i];
        a->Y[i] = x > 0.0f ? x : 0.0f;
    }
}

void dm_relu_grad_fp32(void *args)
{
    const dm_relu_grad_args_t *a = (const dm_relu_grad_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    for (uint32_t i = i0; i < i1; i++) a->dX[i] = a->X[i] > 0.0f ? a->dY[i] : 0.0f;
}
