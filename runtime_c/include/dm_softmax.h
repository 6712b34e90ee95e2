/* deeploy-mlir runtime: softmax and its gradient along one axis. */
#ifndef DM_SOFTMAX_H
#define DM_SOFTMAX_H

#include "dm_common.h"

/* A tensor seen as [outer, len, inner] (row-major): the axis has `len`
 * elements, `inner` is the product of the dims after it. A line is the `len`
 * elements of one (outer, inner) position, `inner` apart. */

/* Y = exp(X - max) / sum(exp(X - max)) along each line. Parallel over the
 * lines; each line's sum runs along the axis in order. Y may alias X. */
typedef struct {
    const float *X;
    float *Y;
    uint32_t outer, len, inner;
} dm_softmax_args_t;

/* dX = Y * (dY - sum(dY * Y)) along each line (Y: the softmax's output).
 * Parallel over the lines. dX may alias dY or Y. */
typedef struct {
    const float *dY;
    const float *Y;
    float *dX;
    uint32_t outer, len, inner;
} dm_softmax_grad_args_t;

void dm_softmax_fp32(void *args);
void dm_softmax_grad_fp32(void *args);

#endif
