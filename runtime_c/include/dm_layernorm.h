/* deeploy-mlir runtime: layer normalization and its gradients. */
#ifndef DM_LAYERNORM_H
#define DM_LAYERNORM_H

#include "dm_common.h"

/* X is [rows, cols]: each row is normalized over its cols elements (the dims
 * from the axis on); scale and bias have cols elements. */

/* Y = (X - mean) * inv_std * scale + bias per row, inv_std = 1 / sqrtf(var +
 * epsilon), var the mean of (X - mean)^2 (two passes, in order). bias, mean
 * and inv_std may be NULL (no bias; statistics not stored: rows elements
 * each otherwise). Parallel over the rows. Y may alias X. */
typedef struct {
    const float *X;
    const float *scale;
    const float *bias;
    float *Y;
    float *mean;
    float *inv_std;
    uint32_t rows, cols;
    float epsilon;
} dm_layernorm_args_t;

/* dX = inv_std * (g - mean(g) - xhat * mean(g * xhat)) per row, with
 * xhat = (X - mean) * inv_std and g = dY * scale. mean and inv_std are the
 * forward's (rows elements), or NULL: recomputed from X as the forward does.
 * Parallel over the rows. dX does not alias X. */
typedef struct {
    const float *dY;
    const float *X;
    const float *scale;
    const float *mean;
    const float *inv_std;
    float *dX;
    uint32_t rows, cols;
    float epsilon;
} dm_layernorm_grad_args_t;

/* dScale[c] = sum over rows of dY * xhat, dBias[c] = sum over rows of dY (rows
 * in order); mean and inv_std are the forward's (not NULL); dScale or dBias
 * may be NULL. acc != 0: each sum starts from the output's current value
 * instead of 0 (the rows of a tile after the first: the sums continue in the
 * same order, so splitting the rows in order gives the same bits). Parallel
 * over the columns. Run it before a dX kernel that overwrites dY in place. */
typedef struct {
    const float *dY;
    const float *X;
    const float *mean;
    const float *inv_std;
    float *dScale;
    float *dBias;
    uint32_t rows, cols;
    uint32_t acc;
} dm_layernorm_grad_params_args_t;

void dm_layernorm_fp32(void *args);
void dm_layernorm_grad_fp32(void *args);
void dm_layernorm_grad_params_fp32(void *args);

#endif
