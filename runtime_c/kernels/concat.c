/* Concat and Split along one axis (dm_kernels_ext.h): parallel over the
 * rows of the whole tensor. */
#include "dm_kernels_ext.h"

/* Copy row r of the whole tensor to (to_whole) or from its part. */
static inline void dm_concat_rows(const dm_concat_args_t *a, int to_whole)
{
    uint32_t total = 0u;
    for (uint32_t k = 0; k < a->count; k++) total += a->lens[k];
    const uint32_t inner = a->inner;
    uint32_t r0, r1;
    dm_chunk(a->outer * total, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t o = r / total;
        uint32_t j = r % total, k = 0u;
        while (j >= a->lens[k]) j -= a->lens[k++];
        float *whole = a->whole + r * inner;
        float *part = a->parts[k] + (o * a->lens[k] + j) * inner;
        if (to_whole) {
            for (uint32_t e = 0; e < inner; e++) whole[e] = part[e];
        } else {
            for (uint32_t e = 0; e < inner; e++) part[e] = whole[e];
        }
    }
}

void dm_concat_fp32(void *args) { dm_concat_rows((const dm_concat_args_t *)args, 1); }

void dm_split_fp32(void *args) { dm_concat_rows((const dm_concat_args_t *)args, 0); }
