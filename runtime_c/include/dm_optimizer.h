/* deeploy-mlir runtime: gradient accumulation and optimizer updates
 * (parallel over elements). */
#ifndef DM_OPTIMIZER_H
#define DM_OPTIMIZER_H

#include "dm_common.h"

/* InPlaceAccumulatorV2: out = reset[0] ? grad : buffer + grad.
 * out may alias buffer (the normal case) or grad. */
typedef struct {
    const float *buffer;
    const float *grad;
    const uint8_t *reset;
    float *out;
    uint32_t size;
} dm_accumulate_args_t;

/* out = weight - lr[0] * grad. out may alias weight. */
typedef struct {
    const float *weight;
    const float *grad;
    const float *lr;
    float *out;
    uint32_t size;
} dm_sgd_args_t;

void dm_accumulate_fp32(void *args);
void dm_sgd_fp32(void *args);

#endif
