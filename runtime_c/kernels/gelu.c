/* GELU, erf form: parallel over the flat index (float constants through
 * dm_fk: no load from L2 in the loop, see dm_mathf.h). */
#include <math.h>

#include "dm_gelu.h"
#include "dm_mathf.h"

#define DM_SQRT1_2 0.70710678118654752440f
#define DM_INV_SQRT_2PI 0.39894228040143267794f

void dm_gelu_fp32(void *args)
{
    const dm_gelu_args_t *a = (const dm_gelu_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    for (uint32_t i = i0; i < i1; i++) {
        const float x = a->X[i];
        a->Y[i] = dm_fk(0.5f) * x * (dm_fk(1.0f) + dm_erff(x * dm_fk(DM_SQRT1_2)));
    }
}

/* Blocks of DM_GELU_BLOCK elements: the cdf terms of a block first (into
 * 64 bytes of stack, L1), then its pdf terms and outputs. One loop holding
 * both dm_erff and dm_expf has more float constants than registers, so gcc
 * builds them again per element (three instructions each); a loop per
 * function keeps its constants in registers. The operations per element
 * are unchanged; an element's dX is written after its X and dY are read,
 * and a block's X are all read before it writes, so dX may alias X or dY. */
#define DM_GELU_BLOCK 16u

void dm_gelu_grad_fp32(void *args)
{
    const dm_gelu_grad_args_t *a = (const dm_gelu_grad_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    float cdf[DM_GELU_BLOCK];
    for (uint32_t b = i0; b < i1; b += DM_GELU_BLOCK) {
        const uint32_t n = i1 - b < DM_GELU_BLOCK ? i1 - b : DM_GELU_BLOCK;
        const float *x = a->X + b;
        for (uint32_t j = 0; j < n; j++)
            cdf[j] = dm_fk(0.5f) * (dm_fk(1.0f) + dm_erff(x[j] * dm_fk(DM_SQRT1_2)));
        const float *dy = a->dY + b;
        float *dx = a->dX + b;
        for (uint32_t j = 0; j < n; j++) {
            const float v = x[j];
            const float pdf = dm_expf(dm_fk(-0.5f) * v * v) * dm_fk(DM_INV_SQRT_2PI);
            dx[j] = dy[j] * (cdf[j] + v * pdf);
        }
    }
}
