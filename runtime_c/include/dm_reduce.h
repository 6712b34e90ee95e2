/* deeploy-mlir runtime: reductions. */
#ifndef DM_REDUCE_H
#define DM_REDUCE_H

#include "dm_common.h"

/* Y = sum of X (contiguous, `shape`, rank 1..4) over the dims whose bit
 * (1 << dim) is set in reduce_mask; Y is contiguous over the kept dims, in
 * order. Parallel over the outputs; each output sums its inputs in increasing
 * flat-index order. Y does not alias X. */
typedef struct {
    const float *X;
    float *Y;
    uint32_t rank;
    uint32_t shape[4];
    uint32_t reduce_mask;
} dm_reduce_args_t;

void dm_reduce_sum_fp32(void *args);
/* Y = the mean over the reduced dims (the sum divided by their element count). */
void dm_reduce_mean_fp32(void *args);

#endif
