/* 2-D convolution (NCHW) and its gradients, direct loops: every output
 * element is written once by the core that owns it, so the kernels need no
 * barrier and no atomics. Taps that fall in the padding are skipped by
 * computing, per output, the range of taps inside the input
 * (dm_window_range) instead of testing every tap. */
#include "dm_conv.h"

void dm_conv2d_fp32(void *args)
{
    const dm_conv2d_args_t *a = (const dm_conv2d_args_t *)args;
    const uint32_t cg = a->in_ch / a->groups, mg = a->out_ch / a->groups;
    const uint32_t plane = a->in_h * a->in_w, taps = a->k_h * a->k_w;
    uint32_t r0, r1;
    dm_chunk(a->batch * a->out_ch * a->out_h, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t oh = r % a->out_h, m = (r / a->out_h) % a->out_ch;
        const uint32_t n = r / (a->out_h * a->out_ch);
        const float *x = a->X + (n * a->in_ch + (m / mg) * cg) * plane;
        const float *w = a->W + m * cg * taps;
        const int32_t ih0 = (int32_t)(oh * a->stride_h) - (int32_t)a->pad_top;
        uint32_t kh0, kh1;
        dm_window_range(ih0, a->dil_h, a->in_h, a->k_h, &kh0, &kh1);
        const float bias = a->B != NULL ? a->B[m] : 0.0f;
        float *y = a->Y + r * a->out_w;
        for (uint32_t ow = 0; ow < a->out_w; ow++) {
            const int32_t iw0 = (int32_t)(ow * a->stride_w) - (int32_t)a->pad_left;
            uint32_t kw0, kw1;
            dm_window_range(iw0, a->dil_w, a->in_w, a->k_w, &kw0, &kw1);
            float acc = 0.0f;
            for (uint32_t c = 0; c < cg; c++) {
                const float *xc = x + c * plane;
                const float *wc = w + c * taps;
                for (uint32_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = xc + (uint32_t)(ih0 + (int32_t)(kh * a->dil_h)) * a->in_w;
                    const float *wr = wc + kh * a->k_w;
                    for (uint32_t kw = kw0; kw < kw1; kw++)
                        acc += xr[(uint32_t)(iw0 + (int32_t)(kw * a->dil_w))] * wr[kw];
                }
            }
            y[ow] = acc + bias;
        }
    }
}

/* The output position o with o * stride + k * dil - pad = i, or -1. */
static int32_t dm_source(uint32_t i, uint32_t k, uint32_t dil, uint32_t pad, uint32_t stride,
                         uint32_t n_out)
{
    const int32_t t = (int32_t)(i + pad) - (int32_t)(k * dil);
    if (t < 0 || (uint32_t)t % stride != 0u) return -1;
    const uint32_t o = (uint32_t)t / stride;
    return o < n_out ? (int32_t)o : -1;
}

void dm_conv2d_grad_input_fp32(void *args)
{
    const dm_conv2d_grad_args_t *a = (const dm_conv2d_grad_args_t *)args;
    const uint32_t cg = a->in_ch / a->groups, mg = a->out_ch / a->groups;
    const uint32_t oplane = a->out_h * a->out_w, taps = a->k_h * a->k_w;
    uint32_t r0, r1;
    dm_chunk(a->batch * a->in_ch * a->in_h, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t ih = r % a->in_h, c = (r / a->in_h) % a->in_ch;
        const uint32_t n = r / (a->in_h * a->in_ch);
        const uint32_t m0 = (c / cg) * mg;
        const float *dy = a->dY + (n * a->out_ch + m0) * oplane;
        const float *w = a->W + (m0 * cg + c % cg) * taps;
        float *dx = a->dX + r * a->in_w;
        for (uint32_t iw = 0; iw < a->in_w; iw++) {
            float acc = 0.0f;
            for (uint32_t j = 0; j < mg; j++) {
                const float *dyj = dy + j * oplane;
                const float *wj = w + j * cg * taps;
                for (uint32_t kh = 0; kh < a->k_h; kh++) {
                    const int32_t oh =
                        dm_source(ih, kh, a->dil_h, a->pad_top, a->stride_h, a->out_h);
                    if (oh < 0) continue;
                    for (uint32_t kw = 0; kw < a->k_w; kw++) {
                        const int32_t ow =
                            dm_source(iw, kw, a->dil_w, a->pad_left, a->stride_w, a->out_w);
                        if (ow < 0) continue;
                        acc += dyj[(uint32_t)oh * a->out_w + (uint32_t)ow] * wj[kh * a->k_w + kw];
                    }
                }
            }
            dx[iw] = acc;
        }
    }
}

void dm_conv2d_grad_weight_fp32(void *args)
{
    const dm_conv2d_grad_args_t *a = (const dm_conv2d_grad_args_t *)args;
    const uint32_t cg = a->in_ch / a->groups, mg = a->out_ch / a->groups;
    const uint32_t plane = a->in_h * a->in_w, oplane = a->out_h * a->out_w;
    const uint32_t taps = a->k_h * a->k_w;
    uint32_t e0, e1;
    if (a->dW != NULL) {
        dm_chunk(a->out_ch * cg * taps, &e0, &e1);
        for (uint32_t e = e0; e < e1; e++) {
            const uint32_t kw = e % a->k_w, kh = (e / a->k_w) % a->k_h;
            const uint32_t c = (e / taps) % cg, m = e / (taps * cg);
            const uint32_t xc = (m / mg) * cg + c;
            const int32_t dh = (int32_t)(kh * a->dil_h) - (int32_t)a->pad_top;
            const int32_t dw = (int32_t)(kw * a->dil_w) - (int32_t)a->pad_left;
            uint32_t oh0, oh1, ow0, ow1;
            dm_window_range(dh, a->stride_h, a->in_h, a->out_h, &oh0, &oh1);
            dm_window_range(dw, a->stride_w, a->in_w, a->out_w, &ow0, &ow1);
            float acc = 0.0f;
            for (uint32_t n = 0; n < a->batch; n++) {
                const float *dy = a->dY + (n * a->out_ch + m) * oplane;
                const float *x = a->X + (n * a->in_ch + xc) * plane;
                for (uint32_t oh = oh0; oh < oh1; oh++) {
                    const float *xr = x + (uint32_t)((int32_t)(oh * a->stride_h) + dh) * a->in_w;
                    for (uint32_t ow = ow0; ow < ow1; ow++)
                        acc += dy[oh * a->out_w + ow] *
                               xr[(uint32_t)((int32_t)(ow * a->stride_w) + dw)];
                }
            }
            a->dW[e] = acc;
        }
    }
    if (a->dB != NULL) {
        dm_chunk(a->out_ch, &e0, &e1);
        for (uint32_t m = e0; m < e1; m++) {
            float acc = 0.0f;
            for (uint32_t n = 0; n < a->batch; n++) {
                const float *dy = a->dY + (n * a->out_ch + m) * oplane;
                for (uint32_t i = 0; i < oplane; i++) acc += dy[i];
            }
            a->dB[m] = acc;
        }
    }
}
