/* 2-D pooling (NCHW) and its gradients. The forward kernels own output rows;
 * the gradient kernels own whole input planes (a plane's dX is cleared and
 * then accumulated by one core), so no two cores write the same element. */
#include <float.h>

#include "dm_pool.h"
#include "dm_rows.h"
#include "dm_words.h"

/* The window geometry of either args struct. */
typedef struct {
    uint32_t in_h, in_w, k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
} dm_win_t;

static dm_win_t dm_win_fwd(const dm_pool2d_args_t *a)
{
    const dm_win_t w = {a->in_h, a->in_w, a->k_h, a->k_w, a->stride_h,
                        a->stride_w, a->dil_h, a->dil_w, a->pad_top, a->pad_left};
    return w;
}

static dm_win_t dm_win_grad(const dm_pool2d_grad_args_t *a)
{
    const dm_win_t w = {a->in_h, a->in_w, a->k_h, a->k_w, a->stride_h,
                        a->stride_w, a->dil_h, a->dil_w, a->pad_top, a->pad_left};
    return w;
}

/* The taps of output (oh, ow) that lie inside the input: rows
 * ih0 + kh * dil_h for kh in [kh0, kh1), columns alike. */
typedef struct {
    int32_t ih0, iw0;
    uint32_t kh0, kh1, kw0, kw1;
} dm_taps_t;

static dm_taps_t dm_taps(const dm_win_t *w, uint32_t oh, uint32_t ow)
{
    dm_taps_t t;
    t.ih0 = (int32_t)(oh * w->stride_h) - (int32_t)w->pad_top;
    t.iw0 = (int32_t)(ow * w->stride_w) - (int32_t)w->pad_left;
    dm_window_range(t.ih0, w->dil_h, w->in_h, w->k_h, &t.kh0, &t.kh1);
    dm_window_range(t.iw0, w->dil_w, w->in_w, w->k_w, &t.kw0, &t.kw1);
    return t;
}

static inline uint32_t dm_tap_h(const dm_taps_t *t, uint32_t kh, uint32_t dil)
{
    return (uint32_t)(t->ih0 + (int32_t)(kh * dil));
}

static inline uint32_t dm_tap_w(const dm_taps_t *t, uint32_t kw, uint32_t dil)
{
    return (uint32_t)(t->iw0 + (int32_t)(kw * dil));
}

static inline float dm_divisor(const dm_taps_t *t, const dm_win_t *w, uint32_t incl)
{
    return incl ? (float)(w->k_h * w->k_w) : (float)((t->kh1 - t->kh0) * (t->kw1 - t->kw0));
}

/* Where plane p of a maxpool's X starts in the index space of the whole
 * input, and its row length there (see dm_maxpool2d_fp32). */
static void dm_index_frame(const dm_pool2d_args_t *a, uint32_t p, int64_t *row0, int64_t *width)
{
    if (a->frame_w == 0u) {
        *row0 = (int64_t)p * (int64_t)a->in_h;
        *width = (int64_t)a->in_w;
        return;
    }
    const int64_t n = (int64_t)(a->org_n + p / a->tile_ch);
    const int64_t c = (int64_t)(a->org_c + p % a->tile_ch);
    *row0 = (n * (int64_t)a->frame_c + c) * (int64_t)a->frame_h + (int64_t)a->org_h;
    *width = (int64_t)a->frame_w;
}

/* The outputs [*lo, *hi) of a row whose every kernel column lies inside the
 * input (no column range to compute per output there). */
static void dm_pool_interior(const dm_win_t *w, uint32_t out_w, uint32_t *lo, uint32_t *hi)
{
    const uint32_t span = (w->k_w - 1u) * w->dil_w; /* first to last tap */
    if (span >= w->in_w) {
        *lo = *hi = 0;
        return;
    }
    dm_window_range(-(int32_t)w->pad_left, w->stride_w, w->in_w - span, out_w, lo, hi);
}

/* Max pooling 2 x 2, stride 2, no padding or dilation (every window inside
 * the input): rows [r0, r1) of (plane, output row), the four taps unrolled
 * in their order (row 0 left, right, row 1 left, right) with the same scan
 * as below (`>`, the first kept on ties), the index from the row's two
 * int64 bases and the best tap's row and column (no division). */
__attribute__((noinline)) static void dm_maxpool_2x2(const dm_pool2d_args_t *a, uint32_t r0,
                                                     uint32_t r1)
{
    if (r0 >= r1) return;
    const uint32_t plane = a->in_h * a->in_w, W = a->in_w, OW = a->out_w;
    const int64_t col0 = a->frame_w == 0u ? 0 : (int64_t)a->org_w;
    uint32_t p = r0 / a->out_h, oh = r0 % a->out_h;
    if (a->indices == NULL) { /* the pointers move on, row by row */
        const float *x0 = a->X + p * plane + 2u * oh * W;
        const uint32_t skip = 2u * W - 2u * OW; /* to the next output row's input */
        float *y = a->Y + r0 * OW;
        for (uint32_t r = r0; r < r1; r++) {
            const float *x1 = x0 + W;
            float *const end = y + OW;
            if (OW != 0u) {
                do { /* rotated: one branch per output */
                    const float a0 = x0[0], a1 = x0[1], a2 = x1[0], a3 = x1[1];
                    const float m1 = a1 > a0 ? a1 : a0;
                    const float m2 = a2 > m1 ? a2 : m1;
                    *y = a3 > m2 ? a3 : m2;
                    y++;
                    x0 += 2;
                    x1 += 2;
                } while (y != end);
            }
            x0 += skip;
            if (++oh == a->out_h) { /* the next plane (its last odd row unread) */
                oh = 0;
                x0 = a->X + ++p * plane;
            }
        }
        return;
    }
    int64_t row0 = 0, width = 0;
    dm_index_frame(a, p, &row0, &width);
    for (uint32_t r = r0; r < r1; r++) {
        const float *x0 = a->X + p * plane + 2u * oh * W, *x1 = x0 + W;
        float *y = a->Y + r * OW;
        int64_t *yi = a->indices + r * OW;
        const int64_t b0 = (row0 + (int64_t)(2u * oh)) * width + col0, b1 = b0 + width;
        for (uint32_t ow = 0; ow < OW; ow++, x0 += 2, x1 += 2) {
            float best = x0[0], v = x0[1];
            uint32_t sel = 0; /* bit 1: row 1, bit 0: right column */
            if (v > best) {
                best = v;
                sel = 1u;
            }
            v = x1[0];
            if (v > best) {
                best = v;
                sel = 2u;
            }
            v = x1[1];
            if (v > best) {
                best = v;
                sel = 3u;
            }
            y[ow] = best;
            yi[ow] = (sel & 2u ? b1 : b0) + (int64_t)(2u * ow + (sel & 1u));
        }
        if (++oh == a->out_h) {
            oh = 0;
            if (++p < a->planes) dm_index_frame(a, p, &row0, &width);
        }
    }
}

/* The largest tap of one window, rows kh0..kh1-1 and columns kw0..kw1-1
 * (kh0 < kh1, kw0 < kw1) of the window at (ih0, iw0) of plane x, in that
 * order with the `>` scan (the first kept on ties, a NaN only when first);
 * *at: the tap, *bk: its kernel row. */
DM_INLINE float dm_window_max(const float *x, uint32_t in_w, int32_t ih0, int32_t iw0,
                              uint32_t kh0, uint32_t kh1, uint32_t kw0, uint32_t kw1,
                              uint32_t dil_h, uint32_t dil_w, const float **at, uint32_t *bk)
{
    const uint32_t nkw = kw1 - kw0, row_step = dil_h * in_w;
    const float *xr = x + (uint32_t)(ih0 + (int32_t)(kh0 * dil_h)) * in_w +
                      (uint32_t)(iw0 + (int32_t)(kw0 * dil_w));
    const float *best_at = xr;
    float best = *xr;
    uint32_t best_k = kh0;
    for (uint32_t kh = kh0; kh < kh1; kh++, xr += row_step) {
        const float *q = xr;
        for (uint32_t kw = 0; kw < nkw; kw++, q += dil_w) {
            const float v = *q;
            if (v > best) {
                best = v;
                best_at = q;
                best_k = kh;
            }
        }
    }
    *at = best_at;
    *bk = best_k;
    return best;
}

/* Max pooling 3 x 3 without dilation, any stride and padding: rows [r0, r1)
 * of (plane, output row). A row's three input rows are three pointers; a
 * kernel row outside the input (the padding) points at its neighbour inside
 * it, so that every window has nine taps: a repeated tap comes right before
 * or after the one it repeats and cannot change the `>` scan's result (nor
 * its first tap among equals, nor a leading NaN). The interior outputs
 * (every column inside) run the nine taps unrolled, the pointers moving by
 * the stride; the border columns take dm_window_max. The index of the best
 * tap comes from its row (the pointer compared with the rows' starts) and
 * column, without a division. */
__attribute__((noinline)) static void dm_maxpool_3x3(const dm_pool2d_args_t *a, uint32_t r0,
                                                     uint32_t r1)
{
    if (r0 >= r1) return;
    const dm_win_t win = dm_win_fwd(a);
    const uint32_t W = a->in_w, H = a->in_h, OW = a->out_w, sw = a->stride_w;
    const uint32_t plane = H * W;
    const int64_t col0 = a->frame_w == 0u ? 0 : (int64_t)a->org_w;
    uint32_t owl, owr;
    dm_pool_interior(&win, OW, &owl, &owr);
    uint32_t p = r0 / a->out_h, oh = r0 % a->out_h;
    int64_t row0 = 0, width = 0;
    if (a->indices != NULL) dm_index_frame(a, p, &row0, &width);
    for (uint32_t r = r0; r < r1; r++) {
        const float *x = a->X + p * plane;
        const int32_t ih0 = (int32_t)(oh * a->stride_h) - (int32_t)a->pad_top;
        float *y = a->Y + r * OW;
        int64_t *yi = a->indices != NULL ? a->indices + r * OW : NULL;
        const uint32_t kh0 = ih0 < 0 ? (uint32_t)-ih0 : 0u;
        const uint32_t kh1 = ih0 + 3 > (int32_t)H ? (uint32_t)((int32_t)H - ih0) : 3u;
        if (kh0 >= kh1) { /* no row inside (the verifiers exclude it) */
            for (uint32_t ow = 0; ow < OW; ow++) {
                y[ow] = -FLT_MAX;
                if (yi != NULL) yi[ow] = -1;
            }
        } else {
            /* the input rows of kernel rows 0..2, clamped to [kh0, kh1) */
            const uint32_t i0 = (uint32_t)(ih0 + (int32_t)kh0), il = (uint32_t)(ih0 + (int32_t)kh1) - 1u;
            const uint32_t i1 = kh0 > 1u ? i0 : (kh1 > 1u ? (uint32_t)(ih0 + 1) : il);
            const uint32_t i2 = kh1 > 2u ? (uint32_t)(ih0 + 2) : il;
            const float *p0 = x + i0 * W, *p1 = x + i1 * W, *p2 = x + i2 * W;
            for (uint32_t ow = 0; ow < OW; ow++) {
                if (ow == owl && owl < owr) { /* the interior, unrolled */
                    const int32_t c = (int32_t)(owl * sw) - (int32_t)a->pad_left;
                    const float *q0 = p0 + c, *q1 = p1 + c, *q2 = p2 + c;
                    float *yo = y + owl, *const yend = y + owr;
                    if (yi == NULL) {
                        do {
                            float m = q0[0], v;
                            v = q0[1]; m = v > m ? v : m;
                            v = q0[2]; m = v > m ? v : m;
                            v = q1[0]; m = v > m ? v : m;
                            v = q1[1]; m = v > m ? v : m;
                            v = q1[2]; m = v > m ? v : m;
                            v = q2[0]; m = v > m ? v : m;
                            v = q2[1]; m = v > m ? v : m;
                            v = q2[2]; m = v > m ? v : m;
                            *yo++ = m;
                            q0 += sw;
                            q1 += sw;
                            q2 += sw;
                        } while (yo != yend);
                    } else {
                        const int64_t b0 = (row0 + (int64_t)i0) * width + col0;
                        const int64_t b1 = (row0 + (int64_t)i1) * width + col0;
                        const int64_t b2 = (row0 + (int64_t)i2) * width + col0;
                        int64_t *yio = yi + owl;
                        do {
                            float m = q0[0], v;
                            const float *at = q0;
                            v = q0[1]; if (v > m) { m = v; at = q0 + 1; }
                            v = q0[2]; if (v > m) { m = v; at = q0 + 2; }
                            v = q1[0]; if (v > m) { m = v; at = q1; }
                            v = q1[1]; if (v > m) { m = v; at = q1 + 1; }
                            v = q1[2]; if (v > m) { m = v; at = q1 + 2; }
                            v = q2[0]; if (v > m) { m = v; at = q2; }
                            v = q2[1]; if (v > m) { m = v; at = q2 + 1; }
                            v = q2[2]; if (v > m) { m = v; at = q2 + 2; }
                            *yo++ = m;
                            /* rows in increasing address order (a clamped row is its neighbour) */
                            *yio++ = at >= p2 ? b2 + (at - p2) : at >= p1 ? b1 + (at - p1) : b0 + (at - p0);
                            q0 += sw;
                            q1 += sw;
                            q2 += sw;
                        } while (yo != yend);
                    }
                    ow = owr - 1u;
                    continue;
                }
                const int32_t iw0 = (int32_t)(ow * sw) - (int32_t)a->pad_left;
                uint32_t kw0, kw1, bk = 0;
                dm_window_range(iw0, 1u, W, 3u, &kw0, &kw1);
                const float *at = NULL;
                float best = -FLT_MAX;
                if (kw0 < kw1) best = dm_window_max(x, W, ih0, iw0, kh0, kh1, kw0, kw1, 1u, 1u, &at, &bk);
                y[ow] = best;
                if (yi != NULL) {
                    const uint32_t ih = (uint32_t)(ih0 + (int32_t)bk);
                    yi[ow] = at == NULL ? -1
                                        : (row0 + (int64_t)ih) * width + col0 + (int64_t)(at - (x + ih * W));
                }
            }
        }
        if (++oh == a->out_h) {
            oh = 0;
            if (++p < a->planes && a->indices != NULL) dm_index_frame(a, p, &row0, &width);
        }
    }
}

/* Per output row: its kernel row range once; per output, its column range
 * (the whole kernel in the interior), the maximum over the taps in that
 * order with the first one kept on ties (and a NaN tap only when it comes
 * first, as onnxruntime's `>` scan), its tap and kernel row, turned into the
 * int64 index without a division (only when indices are wanted). 2 x 2
 * stride 2 unpadded windows and 3 x 3 undilated ones take paths of their
 * own (above). */
__attribute__((noinline)) static void dm_maxpool_general(const dm_pool2d_args_t *a, uint32_t r0,
                                                         uint32_t r1)
{
    const dm_win_t win = dm_win_fwd(a);
    const uint32_t plane = a->in_h * a->in_w, dw = a->dil_w;
    const int64_t col0 = a->frame_w == 0u ? 0 : (int64_t)a->org_w;
    uint32_t owl, owr;
    dm_pool_interior(&win, a->out_w, &owl, &owr);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t p = r / a->out_h, oh = r % a->out_h;
        const float *x = a->X + p * plane;
        const int32_t ih0 = (int32_t)(oh * a->stride_h) - (int32_t)a->pad_top;
        uint32_t kh0, kh1;
        dm_window_range(ih0, a->dil_h, a->in_h, a->k_h, &kh0, &kh1);
        float *y = a->Y + r * a->out_w;
        int64_t *yi = a->indices != NULL ? a->indices + r * a->out_w : NULL;
        int64_t row0 = 0, width = 0;
        if (yi != NULL) dm_index_frame(a, p, &row0, &width);
        for (uint32_t ow = 0; ow < a->out_w; ow++) {
            const int32_t iw0 = (int32_t)(ow * a->stride_w) - (int32_t)a->pad_left;
            uint32_t kw0 = 0, kw1 = a->k_w, bk = 0;
            if (ow < owl || ow >= owr) dm_window_range(iw0, dw, a->in_w, a->k_w, &kw0, &kw1);
            float best = -FLT_MAX;
            const float *at = NULL; /* the best tap */
            if (kh0 < kh1 && kw0 < kw1)
                best = dm_window_max(x, a->in_w, ih0, iw0, kh0, kh1, kw0, kw1, a->dil_h, dw, &at, &bk);
            y[ow] = best;
            if (yi != NULL) {
                const uint32_t ih = (uint32_t)(ih0 + (int32_t)(bk * a->dil_h));
                yi[ow] = at == NULL ? -1
                                    : (row0 + (int64_t)ih) * width + col0 +
                                          (int64_t)(at - (x + ih * a->in_w));
            }
        }
    }
}

/* relu_mask: index -1 where Y is not > 0, over this core's output rows
 * [r0, r1) once the path has stored them (Y tested on its bits). */
__attribute__((noinline)) static void dm_maxpool_relu_mask(const dm_pool2d_args_t *a, uint32_t r0,
                                                           uint32_t r1)
{
    const dm_word_t *y = (const dm_word_t *)a->Y + r0 * a->out_w;
    int64_t *yi = a->indices + r0 * a->out_w;
    int64_t *const end = a->indices + r1 * a->out_w;
    for (; yi < end; yi++, y++)
        if (dm_positive_mask(*y) == 0u) *yi = -1;
}

/* The entry only chooses the path (its frame stays empty: the deepest
 * stack is the deepest path's, not their sum). */
void dm_maxpool2d_fp32(void *args)
{
    const dm_pool2d_args_t *a = (const dm_pool2d_args_t *)args;
    uint32_t r0, r1;
    dm_chunk(a->planes * a->out_h, &r0, &r1);
    if (a->k_h == 2u && a->k_w == 2u && a->stride_h == 2u && a->stride_w == 2u &&
        a->dil_h == 1u && a->dil_w == 1u && a->pad_top == 0u && a->pad_left == 0u &&
        2u * a->out_h <= a->in_h && 2u * a->out_w <= a->in_w) {
        dm_maxpool_2x2(a, r0, r1);
    } else if (a->k_h == 3u && a->k_w == 3u && a->dil_h == 1u && a->dil_w == 1u) {
        dm_maxpool_3x3(a, r0, r1);
    } else {
        dm_maxpool_general(a, r0, r1);
    }
    if (a->relu_mask != 0u && a->indices != NULL && r0 < r1) dm_maxpool_relu_mask(a, r0, r1);
}

/* Plane p's part [lo, hi) of dX (offsets in the plane): zero, then dY[p,o]
 * added at indices[p,o] mod plane for every output o in increasing order
 * when that offset lies in [lo, hi). The remainder comes from the plane's
 * base (the multiple of `plane` below its first index), computed once:
 * an index in [base, base + plane) needs no division. */
DM_INLINE void dm_maxpool_scatter(float *dx, const float *dy, const int64_t *idx, uint32_t plane,
                                  uint32_t oplane, uint32_t lo, uint32_t hi)
{
    dm_word_t *z = (dm_word_t *)dx + lo; /* +0.0f is all zero bits */
    for (uint32_t i = lo; i < hi; i++) {
        __asm__ volatile("" : "+r"(z)); /* a loop, not a memset call */
        *z++ = 0u;
    }
    uint32_t base = 0u;
    const uint32_t n = hi - lo;
    for (uint32_t o = 0; o < oplane; o++) {
        const int64_t v = idx[o];
        if (v < 0) continue;
        /* an index counts elements of a tensor whose size is a uint32_t:
         * 32-bit arithmetic is exact (and needs no 64-bit division on RV32) */
        uint32_t off = (uint32_t)v - base;
        if (off >= plane) {
            off = (uint32_t)v % plane;
            base = (uint32_t)v - off;
        }
        if (off - lo < n) dx[off] += dy[o];
    }
}

/* Units: planes, or, when there are fewer planes than cores, bands of a
 * plane's rows (ceil(cores / planes) bands a plane): a unit's dX elements
 * are written by one core, which reads all the plane's outputs in order. */
void dm_maxpool2d_grad_fp32(void *args)
{
    const dm_pool2d_grad_args_t *a = (const dm_pool2d_grad_args_t *)args;
    const uint32_t plane = a->in_h * a->in_w, oplane = a->out_h * a->out_w;
    const uint32_t cores = (uint32_t)pi_cl_team_nb_cores();
    uint32_t bands = 1u;
    if (a->planes < cores && a->planes != 0u) {
        bands = (cores + a->planes - 1u) / a->planes;
        if (bands > a->in_h) bands = a->in_h;
        if (bands == 0u) bands = 1u;
    }
    const uint32_t band_rows = (a->in_h + bands - 1u) / bands;
    uint32_t u0, u1;
    dm_chunk(a->planes * bands, &u0, &u1);
    if (u0 >= u1) return;
    uint32_t p = u0 / bands, b = u0 % bands;
    for (uint32_t u = u0; u < u1; u++) {
        uint32_t lo = b * band_rows * a->in_w, hi = lo + band_rows * a->in_w;
        if (hi > plane || bands == 1u) hi = plane;
        if (lo > hi) lo = hi;
        dm_maxpool_scatter(a->dX + p * plane, a->dY + p * oplane, a->indices + p * oplane, plane,
                           oplane, lo, hi);
        if (++b == bands) {
            b = 0;
            p++;
        }
    }
}

void dm_avgpool2d_fp32(void *args)
{
    const dm_pool2d_args_t *a = (const dm_pool2d_args_t *)args;
    const dm_win_t win = dm_win_fwd(a);
    const uint32_t plane = a->in_h * a->in_w;
    uint32_t r0, r1;
    dm_chunk(a->planes * a->out_h, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t p = r / a->out_h, oh = r % a->out_h;
        const float *x = a->X + p * plane;
        for (uint32_t ow = 0; ow < a->out_w; ow++) {
            const dm_taps_t t = dm_taps(&win, oh, ow);
            float acc = 0.0f;
            for (uint32_t kh = t.kh0; kh < t.kh1; kh++) {
                const float *xr = x + dm_tap_h(&t, kh, a->dil_h) * a->in_w;
                for (uint32_t kw = t.kw0; kw < t.kw1; kw++) acc += xr[dm_tap_w(&t, kw, a->dil_w)];
            }
            const float div = dm_divisor(&t, &win, a->count_include_pad);
            a->Y[r * a->out_w + ow] = div > 0.0f ? acc / div : 0.0f;
        }
    }
}

void dm_avgpool2d_grad_fp32(void *args)
{
    const dm_pool2d_grad_args_t *a = (const dm_pool2d_grad_args_t *)args;
    const dm_win_t win = dm_win_grad(a);
    const uint32_t plane = a->in_h * a->in_w, oplane = a->out_h * a->out_w;
    uint32_t p0, p1;
    dm_chunk(a->planes, &p0, &p1);
    for (uint32_t p = p0; p < p1; p++) {
        float *dx = a->dX + p * plane;
        const float *dy = a->dY + p * oplane;
        dm_row_fill(dx, plane, 0.0f);
        for (uint32_t oh = 0; oh < a->out_h; oh++) {
            for (uint32_t ow = 0; ow < a->out_w; ow++) {
                const dm_taps_t t = dm_taps(&win, oh, ow);
                const float div = dm_divisor(&t, &win, a->count_include_pad);
                if (!(div > 0.0f)) continue;
                const float share = dy[oh * a->out_w + ow] / div;
                for (uint32_t kh = t.kh0; kh < t.kh1; kh++) {
                    float *dxr = dx + dm_tap_h(&t, kh, a->dil_h) * a->in_w;
                    for (uint32_t kw = t.kw0; kw < t.kw1; kw++)
                        dxr[dm_tap_w(&t, kw, a->dil_w)] += share;
                }
            }
        }
    }
}

void dm_global_avgpool_fp32(void *args)
{
    const dm_global_avgpool_args_t *a = (const dm_global_avgpool_args_t *)args;
    uint32_t p0, p1;
    dm_chunk(a->planes, &p0, &p1);
    for (uint32_t p = p0; p < p1; p++) {
        const float *x = a->X + p * a->size;
        a->Y[p] = dm_row_sum(0.0f, x, a->size) / (float)a->size;
    }
}

void dm_global_avgpool_grad_fp32(void *args)
{
    const dm_global_avgpool_grad_args_t *a = (const dm_global_avgpool_grad_args_t *)args;
    uint32_t p0, p1;
    dm_chunk(a->planes, &p0, &p1);
    for (uint32_t p = p0; p < p1; p++) {
        const float g = a->dY[p] / (float)a->size;
        float *dx = a->dX + p * a->size;
        dm_row_fill(dx, a->size, g);
    }
}
