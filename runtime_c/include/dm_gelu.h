/* deeploy-mlir runtime: GELU (erf form) and its gradient. */
#ifndef DM_GELU_H
#define DM_GELU_H

#include "dm_common.h"

/* Y = 0.5 * X * (1 + erf(X / sqrt(2))). Parallel over the flat index; Y may
 * alias X. (Arguments: dm_gelu_args_t.) */
typedef struct {
    const float *X;
    float *Y;
    uint32_t size;
} dm_gelu_args_t;

/* dX = dY * (0.5 * (1 + erf(X / sqrt(2))) + X * exp(-X^2 / 2) / sqrt(2 pi)),
 * X the Gelu's input. Parallel over the flat index; dX may alias dY or X. */
typedef struct {
    const float *dY;
    const float *X;
    float *dX;
    uint32_t size;
} dm_gelu_grad_args_t;

void dm_gelu_fp32(void *args);
void dm_gelu_grad_fp32(void *args);

#endif
