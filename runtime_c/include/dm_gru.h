/* deeploy-mlir fp32 kernels of a forward GRU layer in training (the model
 * zoo's nn.GRU, issue 20; com.microsoft GRUTraining / GRUGrad with
 * linear_before_reset = 1), runtime_c/kernels/gru.c. dm_common.h's
 * conventions. The forward and the gradient are two kernels each, each
 * forked once: one parallel over elements, and a recurrence parallel over
 * the batch rows n (a row's time steps in order on one core, no barrier).
 *
 * Layouts (onnxruntime's): X [S, N, I]; W [3H, I], R [3H, H] (rows: the z,
 * r, h gates); B [6H] = Wb [3H] then Rb [3H]; H0 [N, H]; Y [S, N, H]; Y_h
 * [N, H]; zrh and dA [S, N, 3H] (per step and row: z, r, h). P is a step's
 * previous state: H0[n] at t = 0, else Y[t-1,n]. Sums start at 0.0f and add
 * in the order given; sigmoid and tanh are dm_activation.h's
 * (from dm_mathf.h's dm_expf). */
#ifndef DM_GRU_H
#define DM_GRU_H

#include "dm_common.h"

/* com.microsoft GRUTraining:
 * dm_gru_input_fp32, over the S*N*3H (t, n, k):
 *   zrh[t,n,k] = sum over i = 0.. of X[t,n,i] * W[k,i]
 * dm_gru_recur_fp32, t = 0..S-1; per unit j = 0..H-1, q = zrh[t,n]:
 *   dz, dr, dh = the sums over k = 0.. of P[k] * R[j,k], R[H+j,k], R[2H+j,k]
 *   z = sigmoid((q[j] + dz) + (Wb[j] + Rb[j]))
 *   r = sigmoid((q[H+j] + dr) + (Wb[H+j] + Rb[H+j]))
 *   h = tanh((q[2H+j] + Wb[2H+j]) + r * (dh + Rb[2H+j]))
 *   Y[t,n,j] = (1 - z) * h + z * P[j]; q[j], q[H+j], q[2H+j] = z, r, h;
 *   Y_h[n] = Y[S-1,n] (Y_h may be NULL). */
typedef struct {
    const float *X;
    const float *W;
    const float *R;
    const float *B;
    const float *H0;
    float *Y;
    float *Y_h;
    float *zrh;
    uint32_t S, N, I, H;
} dm_gru_args_t;

/* com.microsoft GRUGrad:
 * dm_gru_grad_recur_fp32: G = dH0[n] = dY_h[n]; for t = S-1 down to 0,
 *   with q = zrh[t,n]:
 *   per j: g = G[j] + dY[t,n,j]; z, r, h = q[j], q[H+j], q[2H+j];
 *     daz = ((P[j] - h) * g) * (z * (1 - z))
 *     dah = (g * (1 - z)) * (1 - h * h)
 *     dar = (((sum over k of P[k] * R[2H+j,k]) + Rb[2H+j]) * dah) * (r * (1 - r))
 *     dA[t,n] = (daz, dar, dah) at j, H+j, 2H+j; G[j] = g
 *   then per j: G[j] = G[j] * z[j] + sum over k of dA[t,n,k] * R[k,j]
 *     (k = 0..2H-1), + sum over k of (dah[k] * r[k]) * R[2H+k,j], one sum
 *     in that order.
 * dm_gru_grad_params_fp32, over the 3H*I + 3H*H + 6H + S*N*I elements
 *   of dW, dR, dB, dX; each a sum over n = 0.. and t = S-1 down
 *   to 0 (dX: over k = 0..3H-1), with a = dA[t,n,k], but dah * r for the h
 *   gate's rows of dR and Rbh:
 *   dW[k,i] = sum a * X[t,n,i]; dR[k,j] = sum a * P[j];
 *   dB = (sum dA (Wb: 3H), sum a (Rb: 3H)); dX[t,n,i] = sum dA[t,n,k] * W[k,i].
 * dA [S, N, 3H] is the first kernel's output and the second's input. */
typedef struct {
    const float *X;
    const float *W;
    const float *R;
    const float *B;
    const float *H0;
    const float *Y;
    const float *zrh;
    const float *dY;
    const float *dY_h;
    float *dX;
    float *dW;
    float *dR;
    float *dB;
    float *dH0;
    float *dA;
    uint32_t S, N, I, H;
} dm_gru_grad_args_t;

void dm_gru_input_fp32(void *args);
void dm_gru_recur_fp32(void *args);
void dm_gru_grad_recur_fp32(void *args);
void dm_gru_grad_params_fp32(void *args);

#endif
