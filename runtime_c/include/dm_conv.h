/* deeploy-mlir runtime: 2-D convolution (NCHW) and its gradients.
 *
 * X [batch, in_ch, in_h, in_w], W [out_ch, in_ch / groups, k_h, k_w],
 * Y and dY [batch, out_ch, out_h, out_w]. Output channel m belongs to group
 * m / (out_ch / groups) and reads that group's in_ch / groups input channels.
 * Output row oh and kernel row kh read input row
 *     ih = oh * stride_h + kh * dil_h - pad_top
 * (columns alike with stride_w, dil_w, pad_left); rows and columns outside
 * the input read zero (the bottom and right pads are implied by out_h and
 * out_w). in_ch and out_ch are multiples of groups; below, cg = in_ch /
 * groups and g = m / (out_ch / groups) is output channel m's group. No
 * output aliases an input. */
#ifndef DM_CONV_H
#define DM_CONV_H

#include "dm_common.h"

/* Y[n,m,oh,ow] = B[m] + sum over c, kh, kw (in that order, nested) of
 * X[n, g*cg + c, ih, iw] * W[m,c,kh,kw]; B may be NULL (no bias).
 * dm_conv2d_fp32: parallel over the output rows (n, m, oh), in blocks of up
 * to 4 channels. Every sum of products in this header is in float, in the
 * order given, one fused multiply-add (fmaf) per term. With relu != 0
 * (relu-fuse: the convolution's only reader was a ReLU), each output is
 * then replaced by its ReLU, max(Y, 0) on the bits (+0 for Y <= 0 and NaN,
 * as dm_relu_fp32), by the core that stored it once its row is complete. */
typedef struct {
    const float *X;
    const float *W;
    const float *B;
    float *Y;
    uint32_t batch, in_ch, in_h, in_w;
    uint32_t out_ch, k_h, k_w, out_h, out_w;
    uint32_t groups;
    uint32_t stride_h, stride_w, dil_h, dil_w;
    uint32_t pad_top, pad_left;
    uint32_t relu; /* != 0: Y = max(Y, 0) (relu-fuse), each row once complete */
} dm_conv2d_args_t;

/* The gradients of dm_conv2d_fp32 for an upstream gradient dY (com.microsoft
 * ConvGrad); two kernels on the same struct, each writing only its outputs:
 * dm_conv2d_grad_input_fp32 (needs dY, W; writes dX):
 *   dX[n,c,ih,iw] = sum over the output channels m of c's group, then kh, oh
 *   with oh * stride_h + kh * dil_h - pad_top = ih, then kw, ow alike, of
 *   dY[n,m,oh,ow] * W[m, c mod cg, kh, kw]; parallel over the rows (n, c, ih)
 *   in blocks of up to 4 channels;
 * dm_conv2d_grad_weight_fp32 (needs dY, X; writes dW and dB, either may be
 *   NULL): dW[m,c,kh,kw] = sum over n, oh, ow of dY[n,m,oh,ow] *
 *   X[n, g*cg + c, ih, iw] (taps in the padding add nothing), parallel over
 *   blocks of the elements of dW (4 x 4 channels of one tap; one channel's
 *   kernel row when depthwise); dB[m] = sum over n, oh, ow of dY[n,m,oh,ow],
 *   parallel over m.
 * acc_dX, acc_dW, acc_dB != 0: that output's sums start from its current
 * value instead of 0 (a tile of a reduction after the first: the output
 * channels for dX, the batch or the output rows for dW and dB). The terms
 * follow in the order above, so splitting the outermost summed dim in order
 * gives the same bits as one call.
 * reset_dW, reset_dB (accumulate-fuse: that output is a gradient
 * accumulation buffer): not NULL, that output's acc_* 0 and its reset[0] == 0:
 * each element becomes its old value + the sum (InPlaceAccumulatorV2's
 * buffer + grad, added after the sum is complete: the same bits). */
typedef struct {
    const float *dY;
    const float *X;
    const float *W;
    float *dX;
    float *dW;
    float *dB;
    uint32_t batch, in_ch, in_h, in_w;
    uint32_t out_ch, k_h, k_w, out_h, out_w;
    uint32_t groups;
    uint32_t stride_h, stride_w, dil_h, dil_w;
    uint32_t pad_top, pad_left;
    uint32_t acc_dX, acc_dW, acc_dB;
    const uint8_t *reset_dW;
    const uint8_t *reset_dB;
} dm_conv2d_grad_args_t;

/* Whether output sums of a call add the output's old value at their store
 * (reset_dW / reset_dB of dm_conv2d_grad_args_t). */
DM_INLINE int dm_onto(const uint8_t *reset, uint32_t acc)
{
    return reset != NULL && acc == 0u && reset[0] == 0u;
}

/* [*lo, *hi): the j < count whose position j * step + off lies in [0, size)
 * (off may be negative): the outputs a kernel tap reaches, or the taps an
 * output reads (shared with the pooling kernels). */
static inline void dm_window_range(int32_t off, uint32_t step, uint32_t size, uint32_t count,
                                   uint32_t *lo, uint32_t *hi)
{
    const int32_t s = (int32_t)step;
    int32_t first = off >= 0 ? 0 : (s - 1 - off) / s;
    const int32_t last = (int32_t)size - 1 - off; /* j * step <= last */
    int32_t end = last < 0 ? 0 : last / s + 1;
    if (end > (int32_t)count) end = (int32_t)count;
    if (first > end) first = end;
    *lo = (uint32_t)first;
    *hi = (uint32_t)end;
}

void dm_conv2d_fp32(void *args);
void dm_conv2d_grad_input_fp32(void *args);
void dm_conv2d_grad_weight_fp32(void *args);

#endif
