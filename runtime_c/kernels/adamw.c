/* com.microsoft AdamWOptimizer on one parameter (dm_kernels_ext.h):
 * parallel over elements, in place. */
#include <math.h>

#include "dm_kernels_ext.h"

/* b^n by binary exponentiation in double (no libm call; log2(n) products):
 * r = 1; for each bit of n from the lowest: if set, r = r * b; b = b * b. */
static inline double dm_powi(double b, int64_t n)
{
    double r = 1.0;
    uint64_t e = n > 0 ? (uint64_t)n : 0u;
    while (e != 0u) {
        if (e & 1u) r = r * b;
        b = b * b;
        e >>= 1;
    }
    return r;
}

void dm_adamw_fp32(void *args)
{
    const dm_adamw_args_t *a = (const dm_adamw_args_t *)args;
    if (a->update_signal != NULL && a->update_signal[0] == 0u) return;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    const float lr = a->lr[0];
    const float alpha = a->alpha, beta = a->beta, eps = a->epsilon, wd = a->weight_decay;
    float ac = 1.0f, bc = 1.0f;
    if (a->correct_bias) {
        ac = 1.0f - (float)dm_powi((double)alpha, a->step[0]);
        bc = 1.0f - (float)dm_powi((double)beta, a->step[0]);
    }
    const float one_m_alpha = 1.0f - alpha, one_m_beta = 1.0f - beta;
    if (a->adam_mode == 1u) {
        const float lr_c = a->correct_bias ? lr * (sqrtf(bc) / ac) : lr;
        const float lr_wd = lr * wd;
        for (uint32_t i = i0; i < i1; i++) {
            const float g = a->grad[i];
            const float m1 = alpha * a->m1[i] + one_m_alpha * g;
            const float m2 = beta * a->m2[i] + (one_m_beta * g) * g;
            float w = a->weight[i] - (lr_c * m1) / (sqrtf(m2) + eps);
            w = w - lr_wd * w;
            a->m1[i] = m1;
            a->m2[i] = m2;
            a->weight[i] = w;
        }
    } else {
        for (uint32_t i = i0; i < i1; i++) {
            const float g = a->grad[i];
            float w = a->weight[i];
            w = w - (w * lr) * wd;
            const float m1 = alpha * a->m1[i] + one_m_alpha * g;
            const float m2 = beta * a->m2[i] + (one_m_beta * g) * g;
            w = w - (lr * m1) / (ac * (sqrtf(m2 / bc) + eps));
            a->m1[i] = m1;
            a->m2[i] = m2;
            a->weight[i] = w;
        }
    }
}

void dm_step_count_i64(void *args)
{
    const dm_step_count_args_t *a = (const dm_step_count_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(1u, &i0, &i1);
    if (i0 >= i1) return;
    const int64_t count = a->count[0];
    const int counted = a->update_signal == NULL || a->update_signal[0] != 0u;
    a->out[0] = counted ? count + 1 : count;
}
