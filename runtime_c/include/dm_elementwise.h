/* deeploy-mlir runtime: elementwise kernels (parallel over the flat index). */
#ifndef DM_ELEMENTWISE_H
#define DM_ELEMENTWISE_H

#include "dm_common.h"

typedef enum {
    DM_BINARY_ADD = 0,
    DM_BINARY_SUB = 1,
    DM_BINARY_MUL = 2,
    DM_BINARY_DIV = 3,
    DM_BINARY_POW = 4, /* powf(A, B) */
} dm_binary_op_e;

/* Y = A op B. Y is contiguous with `shape` (rank 0..4; rank 0 is one
 * element); A and B are read with their own element strides (0 on a
 * broadcast dim). Y may alias A or B when that operand is not broadcast
 * (contiguous, same shape as Y). Parallel over the flat output index. */
typedef struct {
    const float *A;
    const float *B;
    float *Y;
    uint32_t rank;
    uint32_t shape[4];
    uint32_t a_strides[4];
    uint32_t b_strides[4];
    uint32_t op; /* dm_binary_op_e */
} dm_binary_args_t;

/* dm_relu_fp32: Y = max(X, 0). Y may alias X. */
typedef struct {
    const float *X;
    float *Y;
    uint32_t size;
} dm_unary_args_t;

/* dX = X > 0 ? dY : 0; X is the ReLU's input or its output (same result).
 * dX may alias dY or X. */
typedef struct {
    const float *dY;
    const float *X;
    float *dX;
    uint32_t size;
} dm_relu_grad_args_t;

void dm_binary_fp32(void *args);
void dm_relu_fp32(void *args);
void dm_relu_grad_fp32(void *args);

#endif
