/* Unary activations and their gradients (dm_kernels_ext.h): parallel over
 * the flat index. Each output element is written after its own inputs are
 * read, so in-place use is safe. */
#include <math.h>

#include "dm_activation.h"
#include "dm_kernels_ext.h"
#include "dm_mathf.h"

static inline float dm_unary_ext_apply(const dm_unary_ext_args_t *a, float x)
{
    switch (a->op) {
    case DM_UNARY_SIGMOID: return dm_sigmoid(x);
    case DM_UNARY_QUICK_GELU: return x * dm_sigmoid(a->alpha * x);
    case DM_UNARY_TANH: return dm_tanh(x);
    case DM_UNARY_LEAKY_RELU: return x > 0.0f ? x : a->alpha * x;
    case DM_UNARY_CLIP: return x < a->lo ? a->lo : (x > a->hi ? a->hi : x);
    case DM_UNARY_ABS: return fabsf(x);
    case DM_UNARY_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    case DM_UNARY_NEG: return -x;
    case DM_UNARY_LOG: return dm_logf(x);
    case DM_UNARY_EXP: return dm_expf(x);
    case DM_UNARY_SQRT: return sqrtf(x);
    default: return 1.0f / x; /* DM_UNARY_RECIPROCAL */
    }
}

void dm_unary_ext_fp32(void *args)
{
    const dm_unary_ext_args_t *a = (const dm_unary_ext_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    for (uint32_t i = i0; i < i1; i++) a->Y[i] = dm_unary_ext_apply(a, a->X[i]);
}

static inline float dm_unary_grad_apply(const dm_unary_grad_args_t *a, float dy, float z)
{
    switch (a->op) {
    case DM_UGRAD_SIGMOID: return (dy * z) * (1.0f - z);
    case DM_UGRAD_TANH: return dy * (1.0f - z * z);
    case DM_UGRAD_LEAKY_RELU: return z > 0.0f ? dy : a->alpha * dy;
    case DM_UGRAD_CLIP: return dy * ((a->lo <= z && z <= a->hi) ? 1.0f : 0.0f);
    case DM_UGRAD_QUICK_GELU: {
        const float v = a->alpha * z;
        const float s = dm_sigmoid(v);
        return (dy * s) * (1.0f + v * (1.0f - s));
    }
    default: /* DM_UGRAD_ABS */
        return dy * (z > 0.0f ? 1.0f : (z < 0.0f ? -1.0f : z));
    }
}

void dm_unary_grad_fp32(void *args)
{
    const dm_unary_grad_args_t *a = (const dm_unary_grad_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    for (uint32_t i = i0; i < i1; i++) a->dX[i] = dm_unary_grad_apply(a, a->dY[i], a->Z[i]);
}
