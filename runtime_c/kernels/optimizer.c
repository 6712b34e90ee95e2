/* Gradient accumulation and SGD: parallel over elements. Each output element
 * is written after its own inputs are read, so in-place use is safe. */
#include "dm_optimizer.h"

void dm_accumulate_fp32(void *args)
{
    const dm_accumulate_args_t *a = (const dm_accumulate_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    if (a->reset[0]) {
        for (uint32_t i = i0; i < i1; i++) a->out[i] = a->grad[i];
    } else {
        for (uint32_t i = i0; i < i1; i++) a->out[i] = a->buffer[i] + a->grad[i];
    }
}

void dm_sgd_fp32(void *args)
{
    const dm_sgd_args_t *a = (const dm_sgd_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    const float lr = a->lr[0];
    for (uint32_t i = i0; i < i1; i++) a->out[i] = a->weight[i] - lr * a->grad[i];
}
