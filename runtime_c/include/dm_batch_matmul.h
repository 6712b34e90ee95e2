/* deeploy-mlir runtime: batched matrix products. */
#ifndef DM_BATCH_MATMUL_H
#define DM_BATCH_MATMUL_H

#include "dm_common.h"
#include "dm_gemm.h"

#define DM_BATCH_MAX_RANK 4u

/* For every batch index b of Y's batch dims (batch_shape, rank 0..4, row
 * major): Y_b = alpha * A'_b B'_b + beta * C_b, one dm_gemm_fp32 product.
 * `gemm` is the product of batch 0 (see dm_gemm.h for its fields and the
 * order of its sums); the matrix of A, B or C of batch b starts at sum_d
 * b_d * x_strides[d] elements from gemm.A, gemm.B or gemm.C (stride 0 on a
 * broadcast dim); Y is contiguous [batch.., M, N] from gemm.Y. gemm.C may be
 * NULL. Each product is parallel over its rows. */
typedef struct {
    dm_gemm_args_t gemm;
    uint32_t batch_rank;
    uint32_t batch_shape[DM_BATCH_MAX_RANK];
    uint32_t a_strides[DM_BATCH_MAX_RANK];
    uint32_t b_strides[DM_BATCH_MAX_RANK];
    uint32_t c_strides[DM_BATCH_MAX_RANK];
} dm_batch_matmul_args_t;

void dm_batch_matmul_fp32(void *args);

#endif
