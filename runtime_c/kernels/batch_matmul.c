/* Batched matrix products: every core walks the batches in order and runs
 * its share of the rows of each product (dm_gemm_fp32 splits the rows by
 * pi_core_id()); the products write disjoint parts of Y, so no barrier. */
#include "dm_batch_matmul.h"

void dm_batch_matmul_fp32(void *args)
{
    const dm_batch_matmul_args_t *a = (const dm_batch_matmul_args_t *)args;
    uint32_t count = 1u;
    for (uint32_t d = 0; d < a->batch_rank; d++) count *= a->batch_shape[d];
    const dm_gemm_args_t *g0 = &a->gemm;
    dm_gemm_args_t g = *g0;
    const uint32_t y_size = g0->M * g0->N;
    for (uint32_t b = 0; b < count; b++) {
        uint32_t oa = 0u, ob = 0u, oc = 0u, rest = b;
        for (uint32_t d = a->batch_rank; d-- > 0;) {
            const uint32_t i = rest % a->batch_shape[d];
            rest /= a->batch_shape[d];
            oa += i * a->a_strides[d];
            ob += i * a->b_strides[d];
            oc += i * a->c_strides[d];
        }
        g.A = g0->A + oa;
        g.B = g0->B + ob;
        g.C = g0->C != NULL ? g0->C + oc : NULL;
        g.Y = g0->Y + b * y_size;
        dm_gemm_fp32(&g);
    }
}
