/* deeploy-mlir runtime: transposition (ONNX Transpose). */
#ifndef DM_TRANSPOSE_H
#define DM_TRANSPOSE_H

#include "dm_common.h"

#define DM_TRANSPOSE_MAX_RANK 6u

/* Y[o_0, .., o_{r-1}] = X[i] with i_{perm[j]} = o_j: X is contiguous with
 * `shape` (rank 0..6), Y contiguous with shape[perm[j]] as its dim j. 4-byte
 * elements. Parallel over Y's rows (all dims but the last). Y does not alias
 * X.
 * acc_reset (accumulate-fuse: Y is a gradient accumulation buffer): when not
 * NULL and acc_reset[0] == 0, Y[o] = Y[o] + X[i] instead (InPlaceAccumulatorV2's
 * buffer + grad, the same bits); NULL or acc_reset[0] != 0: Y[o] = X[i]. */
typedef struct {
    const float *X;
    float *Y;
    uint32_t rank;
    uint32_t shape[DM_TRANSPOSE_MAX_RANK];
    uint32_t perm[DM_TRANSPOSE_MAX_RANK];
    const uint8_t *acc_reset;
} dm_transpose_args_t;

void dm_transpose_fp32(void *args);

#endif
