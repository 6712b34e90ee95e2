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
    const uint32_t n = i1 - i0;
    if (a->reset[0]) {
        dm_copy_words((dm_word_t *)a->out + i0, (const dm_word_t *)a->grad + i0, n);
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
