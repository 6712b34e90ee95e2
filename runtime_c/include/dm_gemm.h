/* deeploy-mlir runtime: matrix products. */
#ifndef DM_GEMM_H
#define DM_GEMM_H

#include "dm_common.h"

/* Y[m,n] = alpha * sum_k A'[m,k] * B'[k,n] + beta * C[m*c_stride_m + n*c_stride_n]
 * A' = A stored [K,M] when trans_a, else [M,K]; B' = B stored [N,K] when
 * trans_b, else [K,N]. C may be NULL (no bias; beta ignored); a stride 0
 * broadcasts C: shapes [] (0,0), [N] and [1,N] (0,1), [M,1] (1,0), [M,N] (N,1).
 * Y is [M,N] and never aliases A or B. Parallel over 4 x 4 tiles of Y (over
 * rows m when M or N is below 4); every output sums
 * k = 0..K-1 in order in a float, one fused multiply-add (fmaf) per term.
 *
 * A split K (tiles of the reduction, run in order) gives the same bits as one
 * product: acc_Y != 0 starts every output's sum from its current Y (the
 * partial sum of the K tiles before) instead of 0, and partial != 0 stores
 * the raw sum (no alpha, no C: those come once, on the last K tile). Both 0
 * (the default of a C initializer) is the whole product. */
/* reset_Y (accumulate-fuse: Y is a gradient accumulation buffer): not NULL,
 * acc_Y and partial 0 and reset_Y[0] == 0: Y = old Y + the result, added at
 * the store (InPlaceAccumulatorV2's buffer + grad: the same bits). */
typedef struct {
    const float *A;
    const float *B;
    const float *C;
    float *Y;
    uint32_t M, N, K;
    uint32_t trans_a, trans_b;
    float alpha, beta;
    uint32_t c_stride_m, c_stride_n;
    uint32_t acc_Y, partial;
    const uint8_t *reset_Y;
} dm_gemm_args_t;

void dm_gemm_fp32(void *args);

#endif
