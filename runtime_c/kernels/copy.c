/* Byte copy between non-overlapping buffers, parallel over chunks. */
#include <string.h>

#include "dm_copy.h"

void dm_copy(void *args)
{
    const dm_copy_args_t *a = (const dm_copy_args_t *)args;
    uint32_t b0, b1;
    dm_chunk(a->bytes, &b0, &b1);
    if (b1 > b0) memcpy((uint8_t *)a->dst + b0, (const uint8_t *)a->src + b0, b1 - b0);
}
