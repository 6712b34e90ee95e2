/* deeploy-mlir runtime: 2-D pooling (NCHW) and its gradients.
 *
 * The batch and channel dims are one dim of `planes` = batch * channels
 * planes of in_h x in_w (input) and out_h x out_w (output) elements. Output
 * row oh and kernel row kh read input row oh * stride_h + kh * dil_h - pad_top
 * (columns alike); taps outside the input are skipped. Every window must
 * reach the input (the training.* verifiers ensure it; an empty window gives
 * -FLT_MAX and index -1 for max pooling, 0 for average pooling). No output
 * aliases an input. */
#ifndef DM_POOL_H
#define DM_POOL_H

#include "dm_common.h"
#include "dm_conv.h"

/* dm_maxpool2d_fp32: Y = the largest element of each window (the first one in
 * row-major tap order among equals) and, unless indices is NULL, its flat
 * index into the whole input (ONNX MaxPool's Indices, storage_order 0):
 * ((n * frame_c + c) * frame_h + ih) * frame_w + iw, where plane p of X is
 * channel c = org_c + p % tile_ch of image n = org_n + p / tile_ch, and ih,
 * iw count from org_h, org_w: X may be a tile (tile_ch channels, starting at
 * org_*) of an input of frame_c channels of frame_h x frame_w. frame_w = 0:
 * X is the whole input, (p * in_h + ih) * in_w + iw. relu_mask != 0
 * (relu-fuse: X is a ReLU's output, whose gradient mask the indices carry):
 * an index is -1 where its Y is not > 0 (the selected element would get a
 * zero gradient: dm_maxpool2d_grad_fp32 adds nothing for it).
 * dm_avgpool2d_fp32: Y = the sum of each window's taps inside the input
 * divided by k_h * k_w when count_include_pad, else by the number of those
 * taps; indices is unused.
 * Both parallel over the output rows (p, oh). */
typedef struct {
    const float *X;
    float *Y;
    int64_t *indices;
    uint32_t planes, in_h, in_w, out_h, out_w;
    uint32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    uint32_t count_include_pad;
    uint32_t tile_ch, frame_c, frame_h, frame_w, org_n, org_c, org_h, org_w;
    uint32_t relu_mask; /* max pooling with indices: -1 where Y is not > 0 (relu-fuse) */
} dm_pool2d_args_t;

/* dm_maxpool2d_grad_fp32: dX is zero but for dX[p].flat[indices[p,o] mod
 * (in_h * in_w)] += dY[p,o], over the outputs o of plane p in increasing
 * order (onnxruntime's MaxPoolGrad; the modulo makes indices numbered from
 * any first plane work); negative indices add nothing.
 * dm_avgpool2d_grad_fp32: each dY[p,oh,ow], divided by its window's divisor
 * (as in dm_avgpool2d_fp32), adds to every tap of the window inside the
 * input; indices is unused.
 * Both parallel over the planes. */
typedef struct {
    const float *dY;
    const int64_t *indices;
    float *dX;
    uint32_t planes, in_h, in_w, out_h, out_w;
    uint32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    uint32_t count_include_pad;
} dm_pool2d_grad_args_t;

/* Y[p] = (sum of X[p, 0 .. size-1] in order) / size; parallel over planes. */
typedef struct {
    const float *X;
    float *Y;
    uint32_t planes, size;
} dm_global_avgpool_args_t;

/* dX[p, i] = dY[p] / size for i < size; parallel over planes. */
typedef struct {
    const float *dY;
    float *dX;
    uint32_t planes, size;
} dm_global_avgpool_grad_args_t;

void dm_maxpool2d_fp32(void *args);
void dm_maxpool2d_grad_fp32(void *args);
void dm_avgpool2d_fp32(void *args);
void dm_avgpool2d_grad_fp32(void *args);
void dm_global_avgpool_fp32(void *args);
void dm_global_avgpool_grad_fp32(void *args);

#endif
