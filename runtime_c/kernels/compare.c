/* Compare, logical, Where and Cast (dm_kernels_ext.h): parallel over the
 * flat output index; broadcast operands walked by an odometer over the
 * output's multi-index (last dim fastest), as dm_binary_fp32 does. */
#include "dm_kernels_ext.h"

/* The multi-index of flat index i0 of `shape` and each operand's offset. */
static inline void dm_odometer_start(uint32_t rank, const uint32_t *shape, uint32_t i0,
                                     uint32_t *idx, uint32_t nops,
                                     const uint32_t *const *strides, uint32_t *offs)
{
    uint32_t rest = i0;
    for (uint32_t k = 0; k < nops; k++) offs[k] = 0u;
    for (uint32_t d = rank; d-- > 0;) {
        idx[d] = rest % shape[d];
        rest /= shape[d];
        for (uint32_t k = 0; k < nops; k++) offs[k] += idx[d] * strides[k][d];
    }
}

/* Advance the multi-index by one. */
static inline void dm_odometer_step(uint32_t rank, const uint32_t *shape, uint32_t *idx,
                                    uint32_t nops, const uint32_t *const *strides,
                                    uint32_t *offs)
{
    for (uint32_t d = rank; d-- > 0;) {
        for (uint32_t k = 0; k < nops; k++) offs[k] += strides[k][d];
        if (++idx[d] < shape[d]) return;
        for (uint32_t k = 0; k < nops; k++) offs[k] -= idx[d] * strides[k][d];
        idx[d] = 0u;
    }
}

static inline uint32_t dm_total(uint32_t rank, const uint32_t *shape)
{
    uint32_t total = 1u;
    for (uint32_t d = 0; d < rank; d++) total *= shape[d];
    return total;
}

static inline uint8_t dm_compare_apply(uint32_t op, const void *A, const void *B, uint32_t ia,
                                       uint32_t ib)
{
    if (op >= DM_LOGIC_AND) {
        const uint8_t x = ((const uint8_t *)A)[ia] != 0u, y = ((const uint8_t *)B)[ib] != 0u;
        switch (op) {
        case DM_LOGIC_AND: return (uint8_t)(x && y);
        case DM_LOGIC_OR: return (uint8_t)(x || y);
        default: return (uint8_t)(x != y); /* DM_LOGIC_XOR */
        }
    }
    const float x = ((const float *)A)[ia], y = ((const float *)B)[ib];
    switch (op) {
    case DM_CMP_GREATER: return (uint8_t)(x > y);
    case DM_CMP_GREATER_EQUAL: return (uint8_t)(x >= y);
    case DM_CMP_LESS: return (uint8_t)(x < y);
    case DM_CMP_LESS_EQUAL: return (uint8_t)(x <= y);
    default: return (uint8_t)(x == y); /* DM_CMP_EQUAL */
    }
}

void dm_compare_fp32(void *args)
{
    const dm_compare_args_t *a = (const dm_compare_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(dm_total(a->rank, a->shape), &i0, &i1);
    if (i0 >= i1) return;
    const uint32_t *strides[2] = {a->a_strides, a->b_strides};
    uint32_t idx[4] = {0u, 0u, 0u, 0u}, offs[2];
    dm_odometer_start(a->rank, a->shape, i0, idx, 2u, strides, offs);
    for (uint32_t i = i0; i < i1; i++) {
        a->Y[i] = dm_compare_apply(a->op, a->A, a->B, offs[0], offs[1]);
        dm_odometer_step(a->rank, a->shape, idx, 2u, strides, offs);
    }
}

void dm_where_fp32(void *args)
{
    const dm_where_args_t *a = (const dm_where_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(dm_total(a->rank, a->shape), &i0, &i1);
    if (i0 >= i1) return;
    const uint32_t *strides[3] = {a->c_strides, a->a_strides, a->b_strides};
    uint32_t idx[4] = {0u, 0u, 0u, 0u}, offs[3];
    dm_odometer_start(a->rank, a->shape, i0, idx, 3u, strides, offs);
    for (uint32_t i = i0; i < i1; i++) {
        a->Y[i] = a->C[offs[0]] ? a->A[offs[1]] : a->B[offs[2]];
        dm_odometer_step(a->rank, a->shape, idx, 3u, strides, offs);
    }
}

void dm_cast(void *args)
{
    const dm_cast_args_t *a = (const dm_cast_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    switch (a->op) {
    case DM_CAST_U8_TO_F32: {
        const uint8_t *x = (const uint8_t *)a->X;
        float *y = (float *)a->Y;
        for (uint32_t i = i0; i < i1; i++) y[i] = x[i] ? 1.0f : 0.0f;
        break;
    }
    case DM_CAST_F32_TO_U8: {
        const float *x = (const float *)a->X;
        uint8_t *y = (uint8_t *)a->Y;
        for (uint32_t i = i0; i < i1; i++) y[i] = (uint8_t)(x[i] != 0.0f);
        break;
    }
    case DM_CAST_I64_TO_F32: {
        const int64_t *x = (const int64_t *)a->X;
        float *y = (float *)a->Y;
        for (uint32_t i = i0; i < i1; i++) y[i] = (float)x[i];
        break;
    }
    case DM_CAST_F32_TO_I64: {
        const float *x = (const float *)a->X;
        int64_t *y = (int64_t *)a->Y;
        for (uint32_t i = i0; i < i1; i++) y[i] = (int64_t)x[i];
        break;
    }
    default: { /* DM_CAST_U8_NOT */
        const uint8_t *x = (const uint8_t *)a->X;
        uint8_t *y = (uint8_t *)a->Y;
        for (uint32_t i = i0; i < i1; i++) y[i] = (uint8_t)(x[i] == 0u);
        break;
    }
    }
}
