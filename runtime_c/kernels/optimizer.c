/* Gradient accumulation and SGD: parallel over elements. Each output element
 * is written after its own inputs are read, so in-place use is safe. */
#include "dm_optimizer.h"
#include "dm_words.h"

/* Unrolled by four, the loads before the stores (out may alias either
 * input: each element is read before it is written); a reset copies grad's
 * bits as words (dm_words.h). */
void dm_accumulate_fp32(void *args)
{
    const dm_accumulate_args_t *a = (const dm_accumulate_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    if (i0 >= i1) return;
    const uint32_t n = i1 - i0, n4 = n & ~3u;
    if (a->reset[0]) {
        const dm_word_t *g = (const dm_word_t *)a->grad + i0;
        dm_word_t *o = (dm_word_t *)a->out + i0;
        dm_word_t *const end4 = o + n4, *const end = o + n;
        while (o != end4) {
            const uint32_t g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3];
            __asm__ volatile("" : "+r"(o)); /* no memmove call */
            o[0] = g0;
            o[1] = g1;
            o[2] = g2;
            o[3] = g3;
            o += 4;
            g += 4;
        }
        while (o != end) *o++ = *g++;
        return;
    }
    dm_add_contig(a->out + i0, a->buffer + i0, a->grad + i0, n);
}

void dm_sgd_fp32(void *args)
{
    const dm_sgd_args_t *a = (const dm_sgd_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    const float lr = a->lr[0];
    for (uint32_t i = i0; i < i1; i++) a->out[i] = a->weight[i] - lr * a->grad[i];
}
