/* Transpose: each core writes a chunk of Y's rows; the last dim of Y walks X
 * with X's stride of the dim it comes from. */
#include "dm_transpose.h"

void dm_transpose_fp32(void *args)
{
    const dm_transpose_args_t *a = (const dm_transpose_args_t *)args;
    const uint32_t rank = a->rank;
    if (rank == 0u) {
        if (pi_core_id() == 0) a->Y[0] = a->X[0];
        return;
    }
    uint32_t xstride[DM_TRANSPOSE_MAX_RANK], ystride[DM_TRANSPOSE_MAX_RANK];
    uint32_t yshape[DM_TRANSPOSE_MAX_RANK];
    uint32_t s = 1u;
    for (uint32_t d = rank; d-- > 0;) {
        xstride[d] = s;
        s *= a->shape[d];
    }
    /* ystride[j]: X's stride of the dim Y's dim j comes from */
    for (uint32_t j = 0; j < rank; j++) {
        yshape[j] = a->shape[a->perm[j]];
        ystride[j] = xstride[a->perm[j]];
    }
    const uint32_t len = yshape[rank - 1u], step = ystride[rank - 1u];
    const uint32_t rows = len ? s / len : 0u;
    uint32_t r0, r1;
    dm_chunk(rows, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        uint32_t off = 0u, rest = r;
        for (uint32_t j = rank - 1u; j-- > 0;) {
            off += (rest % yshape[j]) * ystride[j];
            rest /= yshape[j];
        }
        const float *x = a->X + off;
        float *y = a->Y + r * len;
        for (uint32_t k = 0; k < len; k++) y[k] = x[k * step];
    }
}
