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

void dm_gelu_grad_fp32(void *args)
{
    const dm_gelu_grad_args_t *a = (const dm_gelu_grad_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    for (uint32_t i = i0; i < i1; i++) {
        const float x = a->X[i];
        const float cdf = dm_fk(0.5f) * (dm_fk(1.0f) + dm_erff(x * dm_fk(DM_SQRT1_2)));
        const float pdf = dm_expf(dm_fk(-0.5f) * x * x) * dm_fk(DM_INV_SQRT_2PI);
        a->dX[i] = a->dY[i] * (cdf + x * pdf);
    }
}
