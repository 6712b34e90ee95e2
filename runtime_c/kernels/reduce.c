/* ReduceSum over a set of dims: parallel over the outputs; each output sums
 * its inputs in increasing flat-index order. */
#include "dm_reduce.h"

void dm_reduce_sum_fp32(void *args)
{
    const dm_reduce_args_t *a = (const dm_reduce_args_t *)args;
    /* kept and reduced dims, in order, with their element strides in X */
    uint32_t kshape[4], kstride[4], rshape[4], rstride[4];
    uint32_t nk = 0u, nr = 0u, outs = 1u, inner = 1u, stride = 1u;
    for (uint32_t d = a->rank; d-- > 0;) {
        if (a->reduce_mask & (1u << d)) {
            rshape[nr] = a->shape[d];
            rstride[nr++] = stride;
            inner *= a->shape[d];
        } else {
            kshape[nk] = a->shape[d];
            kstride[nk++] = stride;
            outs *= a->shape[d];
        }
        stride *= a->shape[d];
    }
    /* both lists run from the innermost dim outwards: index 0 is fastest */
    uint32_t o0, o1;
    dm_chunk(outs, &o0, &o1);
    for (uint32_t o = o0; o < o1; o++) {
        uint32_t off = 0u, rest = o;
        for (uint32_t j = 0; j < nk; j++) {
            off += (rest % kshape[j]) * kstride[j];
            rest /= kshape[j];
        }
        uint32_t ridx[4] = {0u, 0u, 0u, 0u};
        float acc = 0.0f;
        for (uint32_t r = 0; r < inner; r++) {
            acc += a->X[off];
            for (uint32_t j = 0; j < nr; j++) {
                off += rstride[j];
                if (++ridx[j] < rshape[j]) break;
                off -= ridx[j] * rstride[j];
                ridx[j] = 0u;
            }
        }
        a->Y[o] = acc;
    }
}
