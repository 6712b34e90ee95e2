/* A forward GRU layer in training and its gradient: dm_gru.h says what
 * each kernel computes, in which order, and how it is parallel. */
#include <math.h>

#include "dm_activation.h"
#include "dm_gru.h"

/* sum over k = 0..n-1 of a[k] * b[k], in order from 0.0f */
static inline float gru_dot(const float *a, const float *b, uint32_t n)
{
    float acc = 0.0f;
    for (uint32_t k = 0; k < n; k++) acc += a[k] * b[k];
    return acc;
}

void dm_gru_input_fp32(void *args)
{
    const dm_gru_args_t *a = (const dm_gru_args_t *)args;
    const uint32_t I = a->I, H3 = 3u * a->H;
    uint32_t e0, e1;
    dm_chunk(a->S * a->N * H3, &e0, &e1);
    for (uint32_t e = e0; e < e1; e++) {
        const uint32_t row = e / H3, k = e % H3; /* row = t * N + n */
        a->zrh[e] = gru_dot(a->X + row * I, a->W + k * I, I);
    }
}

void dm_gru_recur_fp32(void *args)
{
    const dm_gru_args_t *a = (const dm_gru_args_t *)args;
    const uint32_t N = a->N, H = a->H, H3 = 3u * H;
    const float *wb = a->B, *rb = a->B + H3;
    uint32_t n0, n1;
    dm_chunk(N, &n0, &n1);
    for (uint32_t n = n0; n < n1; n++) {
        for (uint32_t t = 0; t < a->S; t++) {
            const float *p = t == 0 ? a->H0 + n * H : a->Y + ((t - 1u) * N + n) * H;
            float *q = a->zrh + (t * N + n) * H3;
            float *y = a->Y + (t * N + n) * H;
            for (uint32_t j = 0; j < H; j++) {
                const float dz = gru_dot(p, a->R + j * H, H);
                const float dr = gru_dot(p, a->R + (H + j) * H, H);
                const float dh = gru_dot(p, a->R + (2u * H + j) * H, H);
                const float z = dm_sigmoid((q[j] + dz) + (wb[j] + rb[j]));
                const float r = dm_sigmoid((q[H + j] + dr) + (wb[H + j] + rb[H + j]));
                const float h =
                    dm_tanh((q[2u * H + j] + wb[2u * H + j]) + r * (dh + rb[2u * H + j]));
                y[j] = (1.0f - z) * h + z * p[j];
                q[j] = z;
                q[H + j] = r;
                q[2u * H + j] = h;
            }
        }
        if (a->Y_h != NULL && a->S > 0) {
            const float *last = a->Y + ((a->S - 1u) * N + n) * H;
            for (uint32_t j = 0; j < H; j++) a->Y_h[n * H + j] = last[j];
        }
    }
}

void dm_gru_grad_recur_fp32(void *args)
{
    const dm_gru_grad_args_t *a = (const dm_gru_grad_args_t *)args;
    const uint32_t N = a->N, H = a->H, H2 = 2u * H, H3 = 3u * H;
    const float *rbh = a->B + H3 + H2;
    uint32_t n0, n1;
    dm_chunk(N, &n0, &n1);
    for (uint32_t n = n0; n < n1; n++) {
        float *g = a->dH0 + n * H;
        for (uint32_t j = 0; j < H; j++) g[j] = a->dY_h[n * H + j];
        for (uint32_t t = a->S; t-- > 0;) {
            const float *p = t == 0 ? a->H0 + n * H : a->Y + ((t - 1u) * N + n) * H;
            const float *q = a->zrh + (t * N + n) * H3;
            const float *dy = a->dY + (t * N + n) * H;
            float *d = a->dA + (t * N + n) * H3;
            for (uint32_t j = 0; j < H; j++) {
                const float gj = g[j] + dy[j];
                const float z = q[j], r = q[H + j], h = q[H2 + j];
                const float daz = ((p[j] - h) * gj) * (z * (1.0f - z));
                const float dah = (gj * (1.0f - z)) * (1.0f - h * h);
                const float lin = gru_dot(p, a->R + (H2 + j) * H, H) + rbh[j];
                d[j] = daz;
                d[H + j] = (lin * dah) * (r * (1.0f - r));
                d[H2 + j] = dah;
                g[j] = gj;
            }
            for (uint32_t j = 0; j < H; j++) {
                float acc = g[j] * q[j];
                for (uint32_t k = 0; k < H2; k++) acc += d[k] * a->R[k * H + j];
                for (uint32_t k = 0; k < H; k++) {
                    acc += (d[H2 + k] * q[H + k]) * a->R[(H2 + k) * H + j];
                }
                g[j] = acc;
            }
        }
    }
}

/* dA[t,n,k], times r for the h gate's rows when `reset` (dR and Rbh) */
static inline float gru_da(const dm_gru_grad_args_t *a, uint32_t row, uint32_t k, int reset)
{
    const uint32_t H3 = 3u * a->H;
    const float d = a->dA[row * H3 + k];
    return reset && k >= 2u * a->H ? d * a->zrh[row * H3 + k - a->H] : d;
}

/* element e of dW [3H, I], then dR [3H, H], then dB [6H] */
static float gru_param_grad(const dm_gru_grad_args_t *a, uint32_t e)
{
    const uint32_t N = a->N, I = a->I, H = a->H, H3 = 3u * H;
    uint32_t k, col;
    int which; /* 0: dW, 1: dR, 2: dB */
    if (e < H3 * I) {
        which = 0, k = e / I, col = e % I;
    } else if (e < H3 * I + H3 * H) {
        which = 1, k = (e - H3 * I) / H, col = (e - H3 * I) % H;
    } else {
        which = 2, k = e - H3 * I - H3 * H, col = 0;
    }
    const int reset = which == 1 || (which == 2 && k >= H3);
    if (which == 2 && k >= H3) k -= H3;
    float acc = 0.0f;
    for (uint32_t n = 0; n < N; n++) {
        for (uint32_t t = a->S; t-- > 0;) {
            const uint32_t row = t * N + n;
            const float d = gru_da(a, row, k, reset);
            if (which == 0) {
                acc += d * a->X[row * I + col];
            } else if (which == 1) {
                const float *p = t == 0 ? a->H0 + n * H : a->Y + (row - N) * H;
                acc += d * p[col];
            } else {
                acc += d;
            }
        }
    }
    return acc;
}

void dm_gru_grad_params_fp32(void *args)
{
    const dm_gru_grad_args_t *a = (const dm_gru_grad_args_t *)args;
    const uint32_t I = a->I, H = a->H, H3 = 3u * H;
    const uint32_t nw = H3 * I, nr = H3 * H, nb = 2u * H3, nx = a->S * a->N * I;
    uint32_t e0, e1;
    dm_chunk(nw + nr + nb + nx, &e0, &e1);
    for (uint32_t e = e0; e < e1; e++) {
        if (e < nw) {
            a->dW[e] = gru_param_grad(a, e);
        } else if (e < nw + nr) {
            a->dR[e - nw] = gru_param_grad(a, e);
        } else if (e < nw + nr + nb) {
            a->dB[e - nw - nr] = gru_param_grad(a, e);
        } else {
            const uint32_t x = e - nw - nr - nb, row = x / I, i = x % I;
            float acc = 0.0f;
            for (uint32_t k = 0; k < H3; k++) acc += a->dA[row * H3 + k] * a->W[k * I + i];
            a->dX[x] = acc;
        }
    }
}
