/* deeploy-mlir runtime: matrix products. */
#ifndef DM_GEMM_H
#define DM_GEMM_H

#include "dm_common.h"

/* Y[m,n] = alpha * sum_k A'[m,k] * B'[k,n] + beta * C[m*c_stride_m + n*c_stride_n]
 * A' = A stored [K,M] when trans_a, else [M,K]; B' = B stored [N,K] when
 * trans_b, else [K,N]. C may be NULL (no bias; beta ignored); a stride 0
 * broadcasts C: shapes [] (0,0), [N] and [1,N] (0,1), [M,1] (1,0), [M,N] (N,1).
 * Y is [M,N] and never aliases A or B. Parallel over rows m; every output sums
 * k = 0..K-1 in order in a float, one fused multiply-add (fmaf) per term. */
typedef struct {
    const float *A;
    const float *B;
    const float *C;
    float *Y;
    uint32_t M, N, K;
    uint32_t trans_a, trans_b;
    float alpha, beta;
    uint32_t c_stride_m, c_stride_n;
} dm_gemm_args_t;

void dm_gemm_fp32(void *args);

#endif
