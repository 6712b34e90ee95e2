/* ReduceMean: ReduceSum, then each core divides the outputs it summed (the
 * same dm_chunk of the outputs), so no barrier is needed between the two. */
#include "dm_reduce.h"

void dm_reduce_mean_fp32(void *args)
{
    const dm_reduce_args_t *a = (const dm_reduce_args_t *)args;
    dm_reduce_sum_fp32(args);
    uint32_t outs = 1u, count = 1u;
    for (uint32_t d = 0; d < a->rank; d++) {
        if (a->reduce_mask & (1u << d)) {
            count *= a->shape[d];
        } else {
            outs *= a->shape[d];
        }
    }
    uint32_t o0, o1;
    dm_chunk(outs, &o0, &o1);
    for (uint32_t o = o0; o < o1; o++) a->Y[o] = a->Y[o] / (float)count;
}
