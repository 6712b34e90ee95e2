/* deeploy-mlir fp32 kernels of a one-layer forward LSTM as onnxruntime-
 * training runs it (com.microsoft LSTMTraining / LSTMGrad; the model zoo's
 * nn.LSTM, issue 20), runtime_c/kernels/lstm.c. dm_common.h's conventions:
 * the recurrence is sequential in time, so the caller forks one kernel per
 * time step (`t`); within a step the kernels are parallel over the cores.
 *
 * Layouts: X [S, B, I]; the gates in the order i, o, f, c: W [4H, I],
 * R [4H, H], bias [8H] (Wb then Rb); states [B, H]; the sequences of
 * hidden and cell states [S, B, H]; iofc and dA [S, B, 4H] (per step and
 * batch row the four gates, H values each). sigmoid and tanh are lstm.c's
 * (from dm_expf, as activation_ext.c's dm_sigmoid and dm_tanh). */
#ifndef DM_LSTM_H
#define DM_LSTM_H

#include "dm_common.h"

/* com.microsoft LSTMTraining, step t: dm_lstm_step_fp32, parallel over the
 * B*H units (b, h). For each gate q (i, o, f, c), row j = q*H + h:
 *   ax = sum over k = 0.. of X[t,b,k] * W[j,k]     (from 0.0f, in order)
 *   ah = sum over k = 0.. of Hp[b,k] * R[j,k]      (Hp: Y[t-1], or H0 at t 0)
 *   a_q = (ax + ah) + (bias[j] + bias[4H + j])
 * i = sigmoid(a_i), o = sigmoid(a_o), f = sigmoid(a_f), c = tanh(a_c),
 * C = Cp * f + i * c (Cp: C_all[t-1], or C0 at t 0), Hn = o * tanh(C);
 * iofc[t,b,q*H+h] = i, o, f, c; C_all[t,b,h] = C; Y[t,b,h] = Hn; at the last
 * step t = S-1 also Y_h[b,h] = Hn and Y_c[b,h] = C (Y_h, Y_c may be NULL). */
typedef struct {
    const float *X;
    const float *W;
    const float *R;
    const float *bias;
    const float *H0;
    const float *C0;
    float *Y;
    float *Y_h;
    float *Y_c;
    float *C_all;
    float *iofc;
    uint32_t S, B, I, H;
    uint32_t t;
} dm_lstm_args_t;

void dm_lstm_step_fp32(void *args);

/* com.microsoft LSTMGrad (onnxruntime's order of operations), backwards in
 * time: for t = S-1 down to 0 dm_lstm_grad_gates_fp32 then
 * dm_lstm_grad_state_fp32, then dm_lstm_grad_weights_fp32 once. dH0 and
 * dC0 hold the running gradients dH and dC of the state between the calls
 * (their final values: dH0, dC0). dY, dY_h, dY_c may be NULL (zero); dX, dW,
 * dR, dB may be NULL (not computed). dA may alias iofc.
 * dm_lstm_grad_gates_fp32, step t, parallel over the B*H units (b, h):
 *   at t = S-1: g = 0.0f + dY_h[b,h], dc = 0.0f + dY_c[b,h]; else g = dH0[b,h],
 *   dc = dC0[b,h]; then g = g + dY[t,b,h]; with i, o, f, c = iofc[t,b,.],
 *   Cp = C_all[t-1,b,h] (C0 at t 0), tc = tanh(C_all[t,b,h]):
 *   dao = g * tc; dc = dc + (g * o) * (1 - tc * tc);
 *   dai = dc * c; dac = dc * i; daf = dc * Cp; dc = dc * f;
 *   dac = dac * (1 - c * c); dai = dai * (i * (1 - i));
 *   daf = daf * (f * (1 - f)); dao = dao * (o * (1 - o));
 *   dA[t,b,.] = dai, dao, daf, dac; dC0[b,h] = dc.
 * dm_lstm_grad_state_fp32, step t, parallel over B*H units (b, n), then,
 * when dX is given, B*I units (b, k):
 *   dH0[b,n] = ((s_i + s_o) + s_f) + s_c, s_q = sum over h = 0.. of
 *   dA[t,b,q*H+h] * R[q*H+h, n] (from 0.0f, in order); dX[t,b,k] the same
 *   with W[q*H+h, k].
 * dm_lstm_grad_weights_fp32, parallel over the 4H rows j:
 *   dW[j,k] = sum over b = 0.. (outer), t = S-1 down to 0 (inner) of
 *   dA[t,b,j] * X[t,b,k] (from 0.0f); dR[j,n] the same with Hp[t,b,n]
 *   (Y[t-1], H0 at t 0); dB[j] = dB[4H+j] = the same sum of dA[t,b,j]. */
typedef struct {
    const float *X;
    const float *W;
    const float *R;
    const float *H0;
    const float *C0;
    const float *Y;
    const float *C_all;
    const float *iofc;
    const float *dY;
    const float *dY_h;
    const float *dY_c;
    float *dX;
    float *dW;
    float *dR;
    float *dB;
    float *dH0;
    float *dC0;
    float *dA;
    uint32_t S, B, I, H;
    uint32_t t;
} dm_lstm_grad_args_t;

void dm_lstm_grad_gates_fp32(void *args);
void dm_lstm_grad_state_fp32(void *args);
void dm_lstm_grad_weights_fp32(void *args);

#endif
