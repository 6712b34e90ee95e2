/* Sigmoid and tanh from dm_expf (dm_mathf.h), shared by the activation kernels
 * (activation_ext.c) and the recurrent ones (gru.c, lstm.c), so that a gate
 * has the bits of training.unary's sigmoid or tanh. */
#ifndef DM_ACTIVATION_H
#define DM_ACTIVATION_H

#include <math.h>

#include "dm_mathf.h"

/* tanh from dm_expf (the kernels call no libm but powf and sqrtf: exp,
 * log and erf are dm_mathf.h's): |x| < 0.55: x + x^3 P(x^2), P Horner's form of the Taylor
 * series' next 8 coefficients (-1/3, 2/15, -17/315, ..., 6404582/10854718875;
 * truncation below 5e-9 relative); else sign(x) (1 - 2 / (dm_expf(2 |x|) + 1))
 * (no cancellation past 0.55). */
static inline float dm_tanh(float x)
{
    const float ax = fabsf(x);
    if (ax < dm_fk(0.55f)) {
        const float x2 = x * x;
        float q = dm_fk(0.000590027441f);
        q = dm_fk(-0.00145583439f) + x2 * q;
        q = dm_fk(0.00359212804f) + x2 * q;
        q = dm_fk(-0.00886323553f) + x2 * q;
        q = dm_fk(0.0218694885f) + x2 * q;
        q = dm_fk(-0.0539682540f) + x2 * q;
        q = dm_fk(0.133333333f) + x2 * q;
        q = dm_fk(-0.333333333f) + x2 * q;
        return x + (x * x2) * q;
    }
    const float t = dm_fk(1.0f) - dm_fk(2.0f) / (dm_expf(dm_fk(2.0f) * ax) + dm_fk(1.0f));
    return x < dm_fk(0.0f) ? -t : t;
}

/* x >= 0 ? 1 / (1 + dm_expf(-x)) : e / (1 + e), e = dm_expf(x) (no overflow):
 * both from e = dm_expf(-|x|), one inlined exp. */
static inline float dm_sigmoid(float x)
{
    const float e = dm_expf(-fabsf(x));
    const float one = dm_fk(1.0f);
    return x >= dm_fk(0.0f) ? one / (one + e) : e / (one + e);
}

#endif /* DM_ACTIVATION_H */
