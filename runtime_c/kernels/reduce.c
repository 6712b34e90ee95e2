/* ReduceSum over a set of dims: parallel over the outputs; each output sums
 * its inputs in increasing flat-index order.
 *
 * The dims are canonicalized first (size-1 dims dropped, neighbours of the
 * same kind merged: (1, 64, 64) over dims 0 and 1 is 64 rows reduced, 64
 * columns kept), which changes no output's order of addition. Then:
 * - the innermost dim kept (column sums): DM_REDUCE_COLS neighbouring outputs
 *   of a core's chunk sum together, one accumulator each, their inputs read
 *   row by row (one pass over the reduced index for the block instead of one
 *   per output);
 * - the innermost dim reduced (row sums): the row's contiguous run added in
 *   order by dm_row_sum;
 * with one reduced dim left after merging, the walk is a plain strided loop;
 * more, an odometer over them (the general path). */
#include "dm_reduce.h"
#include "dm_rows.h"

#define DM_REDUCE_COLS 4u

/* Moves `off` to the next input of the reduced odometer (nr dims, index 0
 * fastest). */
DM_INLINE uint32_t dm_reduce_step(uint32_t off, uint32_t nr, const uint32_t *rshape,
                                  const uint32_t *rstride, uint32_t *ridx)
{
    for (uint32_t j = 0; j < nr; j++) {
        off += rstride[j];
        if (++ridx[j] < rshape[j]) break;
        off -= ridx[j] * rstride[j];
        ridx[j] = 0u;
    }
    return off;
}

void dm_reduce_sum_fp32(void *args)
{
    const dm_reduce_args_t *a = (const dm_reduce_args_t *)args;
    /* canonical kept and reduced dims, innermost first, with their element
     * strides in X; kind[i] of the i-th canonical dim (1: reduced) */
    uint32_t kshape[4], kstride[4], rshape[4], rstride[4];
    uint32_t nk = 0u, nr = 0u, outs = 1u, inner = 1u, stride = 1u;
    int last = -1; /* kind of the previous canonical dim, -1: none yet */
    int first = -1; /* kind of the innermost canonical dim */
    for (uint32_t d = a->rank; d-- > 0;) {
        const uint32_t n = a->shape[d];
        const int red = (a->reduce_mask >> d) & 1u;
        if (n == 1u) continue;
        if (red) {
            if (last == 1) {
                rshape[nr - 1u] *= n;
            } else {
                rshape[nr] = n;
                rstride[nr++] = stride;
            }
            inner *= n;
        } else {
            if (last == 0) {
                kshape[nk - 1u] *= n;
            } else {
                kshape[nk] = n;
                kstride[nk++] = stride;
            }
            outs *= n;
        }
        if (first < 0) first = red;
        last = red;
        stride *= n;
    }
    uint32_t o0, o1;
    dm_chunk(outs, &o0, &o1);
    const float *x = a->X;
    float *y = a->Y;
    uint32_t o = o0;
    while (o < o1) {
        uint32_t off = 0u, rest = o;
        for (uint32_t j = 0; j < nk; j++) {
            off += (rest % kshape[j]) * kstride[j];
            rest /= kshape[j];
        }
        if (first == 0 && nr > 0u) {
            /* columns: outputs o.. are neighbours in X up to the end of the
             * innermost kept run (kstride[0] == 1) */
            const uint32_t run = kshape[0] - o % kshape[0];
            const uint32_t left = o1 - o < run ? o1 - o : run;
            if (left >= DM_REDUCE_COLS) {
                const float *p = x + off;
                float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
                if (nr == 1u) {
                    const uint32_t st = rstride[0];
                    for (uint32_t r = 0; r < inner; r++, p += st) {
                        s0 += p[0];
                        s1 += p[1];
                        s2 += p[2];
                        s3 += p[3];
                    }
                } else {
                    uint32_t ridx[4] = {0u, 0u, 0u, 0u};
                    uint32_t q = 0u;
                    for (uint32_t r = 0; r < inner; r++) {
                        s0 += p[q];
                        s1 += p[q + 1u];
                        s2 += p[q + 2u];
                        s3 += p[q + 3u];
                        q = dm_reduce_step(q, nr, rshape, rstride, ridx);
                    }
                }
                y[o] = s0;
                y[o + 1u] = s1;
                y[o + 2u] = s2;
                y[o + 3u] = s3;
                o += DM_REDUCE_COLS;
                continue;
            }
        }
        float acc = 0.0f;
        if (nr == 1u && rstride[0] == 1u) {
            acc = dm_row_sum(acc, x + off, inner); /* a contiguous row */
        } else if (nr == 1u) {
            const uint32_t st = rstride[0];
            for (uint32_t r = 0; r < inner; r++, off += st) acc += x[off];
        } else {
            uint32_t ridx[4] = {0u, 0u, 0u, 0u};
            for (uint32_t r = 0; r < inner; r++) {
                acc += x[off];
                off = dm_reduce_step(off, nr, rshape, rstride, ridx);
            }
        }
        y[o++] = acc;
    }
}
