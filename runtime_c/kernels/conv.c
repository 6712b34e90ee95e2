/* 2-D convolution (NCHW) and its gradients, direct loops with register
 * blocking. Every output element is written by the core that owns it (the
 * work is split into blocks of outputs, never into partial sums), so the
 * kernels need no barrier and no atomics.
 *
 * Each output sums its terms in the order dm_conv.h gives, from 0, with one
 * fused multiply-add per term (fmaf: rounded once, the same bits on every
 * target), so the blocked paths and the edge paths below compute the same
 * bits and the result does not depend on the team size.
 *
 * Padding is never tested per tap: the taps inside the input are computed
 * per output row (kernel rows) and per output column (kernel columns, with
 * dm_window_range); the columns whose whole window lies inside the input
 * (the interior) run in blocks that share one column range.
 *
 * Blocking: forward and input gradient keep a tile of up to 4 channels x 4
 * (or 1 channel x 8) output columns in registers, so a loaded weight serves
 * 4 or 8 outputs and a loaded input (dY) element 4 channels; the weight
 * gradient keeps 4 output channels x 4 input channels of one tap, so each
 * loaded dY element serves 4 and each X element 4. */
#include <math.h>

#include "dm_conv.h"
#include "dm_words.h"

/* The register tiles' sizes. DM_CONV_MB x DM_CONV_NB: channels x output
 * columns of the blocked tiles of the forward and the input gradient
 * (dm_tile_4x4*, dm_same_4x4*, and DM_CONV_MB x 1 for dm_tile_4x1: the
 * names keep the F sizes; a block of 4 channels is 4 / DM_CONV_MB tiles);
 * DM_CONV_WCB: input channels of the weight gradient's 4-channel tiles (4,
 * or 2: a 4 x 4 block as two 4 x 2 tiles). 4 x 4 and 4 on F and the host
 * (16 sums in f registers); 2 x 4 and 2 on Zfinx, where floats share the x
 * registers with the tiles' pointers and a 4 x 4 tile spills. Each output
 * sums its terms in the same order whatever the tile, so the bits are the
 * same (tests/test_runtime_kernels.py builds the host runtime with the
 * Zfinx sizes). */
#ifndef DM_CONV_ZF
#if defined(__riscv_zfinx)
#define DM_CONV_ZF 1
#else
#define DM_CONV_ZF 0
#endif
#endif
#ifndef DM_CONV_MB
#define DM_CONV_MB (DM_CONV_ZF ? 2u : 4u)
#endif
#ifndef DM_CONV_NB
#define DM_CONV_NB 4u
#endif
#ifndef DM_CONV_WCB
#define DM_CONV_WCB (DM_CONV_ZF ? 2 : 4)
#endif

static uint32_t dm_min(uint32_t x, uint32_t y) { return x < y ? x : y; }

/* The first j in [lo, hi) with (base - j * dil) divisible by stride, or hi;
 * *step: the distance between such j (the smallest s with s * dil divisible
 * by stride). base - lo * dil >= 0. */
static uint32_t dm_first_aligned(int32_t base, uint32_t dil, uint32_t stride, uint32_t lo,
                                 uint32_t hi, uint32_t *step)
{
    uint32_t s = 1;
    while ((s * dil) % stride != 0u) s++;
    *step = s;
    for (uint32_t j = lo; j < hi && j < lo + s; j++)
        if ((uint32_t)(base - (int32_t)(j * dil)) % stride == 0u) return j;
    return hi;
}

/* [*lo, *hi): the taps j < count with 0 <= base - j * dil <= last (the taps
 * of a gradient row or column whose source position lies in the output). */
static void dm_reverse_range(int32_t base, uint32_t dil, int32_t last, uint32_t count,
                             uint32_t *lo, uint32_t *hi)
{
    const int32_t d = (int32_t)dil;
    int32_t h = base < 0 ? 0 : base / d + 1; /* j * dil <= base */
    int32_t l = base - last <= 0 ? 0 : (base - last + d - 1) / d;
    if (h > (int32_t)count) h = (int32_t)count;
    if (l > h) l = h;
    *lo = (uint32_t)l;
    *hi = (uint32_t)h;
}

/* ----------------------------------------------------------- window tiles */

/* A tile of MB channels x OWB columns of one output row, each output summing
 * over np channels, nr kernel rows and nq kernel columns (nested in that
 * order) the products of an input operand (X for the forward, dY for the
 * input gradient) and the weights. Steps are in elements and may be
 * negative. */
typedef struct {
    const float *in;                /* at the first term of tile column 0 */
    int32_t in_p, in_r, in_q, in_j; /* next channel, kernel row, kernel column; tile column */
    const float *w;                 /* at the first term of tile channel 0 */
    int32_t w_i, w_p, w_r, w_q;     /* next tile channel; channel, kernel row, kernel column */
    uint32_t np, nr, nq;
    float *out;          /* tile channel 0, column 0; columns contiguous */
    uint32_t out_i;      /* between tile channels */
    const float *bias;   /* one per tile channel (added last), or NULL */
    uint32_t acc;        /* != 0: each sum starts from out's value, not 0 */
} dm_walk_t;

#if DM_CONV_ZF
/* One channel p of a 1 x 1 tile on Zfinx: the MB weights and OWB inputs
 * loaded between the multiply-adds (DM_LDF, DM_FMA: in the order written),
 * w1 the second channel's weight pointer. */
DM_INLINE void dm_pw_step(const float *w0, const float *w1, const float *x, int32_t xj,
                          float c[4][8], uint32_t MB, uint32_t OWB)
{
    float a, b, xv[4];
    DM_LDF(a, w0);
#pragma GCC unroll 4
    for (uint32_t j = 0; j < OWB; j++) {
        DM_LDF(xv[j], x + (int32_t)j * xj);
        if (j > 0u) DM_FMA(c[0][j - 1u], a, xv[j - 1u]);
    }
    if (MB > 1u) DM_LDF(b, w1);
    DM_FMA(c[0][OWB - 1u], a, xv[OWB - 1u]);
    if (MB > 1u) {
#pragma GCC unroll 4
        for (uint32_t j = 0; j < OWB; j++) DM_FMA(c[1][j], b, xv[j]);
    }
}

/* The 1 x 1 kernels' loop of dm_walk_tile on Zfinx (MB <= 2, OWB <= 4):
 * channels p ascending, each output's sum in the order of the generic loop
 * (the same bits). Weights contiguous over p (w_p = 1, the forward) take two
 * channels per iteration at immediate offsets; tile channels adjacent in W
 * (w_i = 1, the input gradient) share one pointer. clang-19 kept the
 * generic loop's pointer steps on the stack (21 instructions for 8
 * multiply-adds); here 18 (w_i = 1), 37 per two channels (w_p = 1). */
DM_INLINE void dm_pw_zf(const dm_walk_t *k, const float *ip, const float *wp[4], float c[4][8],
                        uint32_t MB, uint32_t OWB, int32_t xj)
{
    const int32_t ps = k->in_p, ws = k->w_p;
    const float *w0 = wp[0], *w1 = MB > 1u ? wp[1] : wp[0];
    uint32_t p = k->np;
    if (ws == 1) {
        for (; p >= 2u; p -= 2u) {
            dm_pw_step(w0, w1, ip, xj, c, MB, OWB);
            ip += ps;
            dm_pw_step(w0 + 1, w1 + 1, ip, xj, c, MB, OWB);
            ip += ps;
            w0 += 2;
            w1 += 2;
        }
    } else if (MB > 1u && k->w_i == 1) {
        for (; p > 0u; p--) {
            dm_pw_step(w0, w0 + 1, ip, xj, c, MB, OWB);
            ip += ps;
            w0 += ws;
        }
        return;
    }
    for (; p > 0u; p--) {
        dm_pw_step(w0, w1, ip, xj, c, MB, OWB);
        ip += ps;
        w0 += ws;
        w1 += ws;
    }
}
#endif

/* JS, QS: in_j and in_q as constants, 0 to read them from the walk; KW: nq
 * as a constant (with w_q = 1), 0 to read it. With all three constant the
 * kernel columns are unrolled and the loads of `in` that several (column,
 * kernel column) pairs share are loaded once. L, R (with KW = 3, JS = 1,
 * QS = +-1, a padding of 1 and as many output as input columns): the tile
 * is the first (L) or last (R) of its row, and skips the terms of its first
 * (last) column that fall in the padding: column j and kernel column q read
 * position j + QS * (q - 1) from the tile's first column. */
DM_INLINE void dm_walk_tile(const dm_walk_t *k, const float *in, float *out, uint32_t MB,
                            uint32_t OWB, int32_t JS, int32_t QS, uint32_t KW, int L, int R,
                            uint32_t skip)
{
    const int32_t in_j = JS != 0 ? JS : k->in_j, in_q = QS != 0 ? QS : k->in_q;
    const int32_t w_q = KW != 0u ? 1 : k->w_q;
    const uint32_t nq = KW != 0u ? KW : k->nq;
    const int32_t w_rskip = k->w_r - (int32_t)nq * w_q;
    const int32_t w_pskip = k->w_p - (int32_t)k->nr * k->w_r;
    const float *wp[4];
    float c[4][8];
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MB; i++) wp[i] = k->w + (int32_t)i * k->w_i;
    if (k->acc) {
#pragma GCC unroll 4
        for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 8
            for (uint32_t j = 0; j < OWB; j++) c[i][j] = out[i * k->out_i + j];
    } else {
#pragma GCC unroll 4
        for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 8
            for (uint32_t j = 0; j < OWB; j++) c[i][j] = 0.0f;
    }
    const float *ip = in;
#if DM_CONV_ZF
    if (KW == 0u && k->nr == 1u && nq == 1u && MB <= 2u && OWB <= 4u) {
        dm_pw_zf(k, ip, wp, c, MB, OWB, in_j);
        ip = NULL;
    } else
#endif
    if (KW == 0u && k->nr == 1u && nq == 1u) { /* one tap per channel (1 x 1 kernels) */
        for (uint32_t p = 0; p < k->np; p++, ip += k->in_p) {
            float wv[4], xv[8];
#pragma GCC unroll 4
            for (uint32_t i = 0; i < MB; i++) {
                wv[i] = *wp[i];
                wp[i] += k->w_p;
            }
#pragma GCC unroll 8
            for (uint32_t j = 0; j < OWB; j++) xv[j] = ip[(int32_t)j * in_j];
#pragma GCC unroll 4
            for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 8
                for (uint32_t j = 0; j < OWB; j++) c[i][j] = fmaf(wv[i], xv[j], c[i][j]);
        }
        ip = NULL;
    }
    for (uint32_t p = 0; ip != NULL && p < k->np; p++) {
        const float *ir = ip;
        for (uint32_t r = 0; r < k->nr; r++) {
            if (KW != 0u) {
#pragma GCC unroll 4
                for (uint32_t q = 0; q < KW; q++) {
                    float wv[4];
#pragma GCC unroll 4
                    for (uint32_t i = 0; i < MB; i++) wv[i] = wp[i][q];
#pragma GCC unroll 8
                    for (uint32_t j = 0; j < OWB; j++) {
                        const int32_t pos = (int32_t)j + QS * ((int32_t)q - 1);
                        if ((L && pos < 0) || (R && pos >= (int32_t)OWB)) continue;
                        const float xv = ir[(int32_t)q * in_q + (int32_t)j * in_j];
#pragma GCC unroll 4
                        for (uint32_t i = 0; i < MB; i++) c[i][j] = fmaf(wv[i], xv, c[i][j]);
                    }
                }
#pragma GCC unroll 4
                for (uint32_t i = 0; i < MB; i++) wp[i] += k->w_r;
            } else {
                const float *iq = ir;
                for (uint32_t q = 0; q < nq; q++, iq += in_q) {
                    float wv[4], xv[8];
#pragma GCC unroll 4
                    for (uint32_t i = 0; i < MB; i++) {
                        wv[i] = *wp[i];
                        wp[i] += w_q;
                    }
#pragma GCC unroll 8
                    for (uint32_t j = 0; j < OWB; j++) xv[j] = iq[(int32_t)j * in_j];
#pragma GCC unroll 4
                    for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 8
                        for (uint32_t j = 0; j < OWB; j++) c[i][j] = fmaf(wv[i], xv[j], c[i][j]);
                }
                if (w_rskip != 0) {
#pragma GCC unroll 4
                    for (uint32_t i = 0; i < MB; i++) wp[i] += w_rskip;
                }
            }
#if DM_CONV_ZF
            /* unconditional (as an address: past the last row it is not
             * read): clang-19 made the test two taken branches and two
             * loads per kernel row */
            ir = (const float *)((uintptr_t)ir + (uintptr_t)(intptr_t)k->in_r * sizeof(float));
#else
            if (r + 1u < k->nr) ir += k->in_r;
#endif
        }
        if (w_pskip != 0) {
#pragma GCC unroll 4
            for (uint32_t i = 0; i < MB; i++) wp[i] += w_pskip;
        }
#if DM_CONV_ZF
        ip = (const float *)((uintptr_t)ip + (uintptr_t)(intptr_t)k->in_p * sizeof(float));
#else
        if (p + 1u < k->np) ip += k->in_p;
#endif
    }
    /* the first `skip` columns were stored by the previous tile of the row */
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MB; i++, out += k->out_i) {
        if (k->bias != NULL) {
            const float b = k->bias[i];
#pragma GCC unroll 8
            for (uint32_t j = 0; j < OWB; j++)
                if (j >= skip) out[j] = c[i][j] + b;
        } else {
#pragma GCC unroll 8
            for (uint32_t j = 0; j < OWB; j++)
                if (j >= skip) out[j] = c[i][j];
        }
    }
}

/* `cols` (>= OWB) columns from k->in and k->out in tiles of OWB; the last
 * tile moved left to end at the last column (it computes some columns again
 * but stores only its new ones: with k->acc a column must be added to once).
 * Each instance is its own function: its registers are not shared with the
 * loops of the caller. */
typedef void (*dm_tile_fn)(const dm_walk_t *k, uint32_t cols);
#define DM_WALK_SPAN(NAME, MB, OWB, JS, QS, KW)                                               \
    static __attribute__((noinline)) void NAME(const dm_walk_t *k, uint32_t cols)            \
    {                                                                                         \
        const int32_t in_j = (JS) != 0 ? (JS) : k->in_j;                                      \
        for (uint32_t t = 0;; t += (OWB)) {                                                   \
            uint32_t skip = 0;                                                                \
            if (t + (OWB) > cols) {                                                           \
                skip = t + (OWB) - cols;                                                      \
                t = cols - (OWB);                                                             \
            }                                                                                 \
            dm_walk_tile(k, k->in + (int32_t)t * in_j, k->out + t, MB, OWB, JS, QS, KW, 0, 0, \
                         skip);                                                               \
            if (t + (OWB) >= cols) break;                                                     \
        }                                                                                     \
    }
DM_WALK_SPAN(dm_tile_4x1, DM_CONV_MB, 1u, 0, 0, 0u)
DM_WALK_SPAN(dm_tile_1x1, 1u, 1u, 0, 0, 0u)
DM_WALK_SPAN(dm_tile_4x4, DM_CONV_MB, DM_CONV_NB, 0, 0, 0u)
DM_WALK_SPAN(dm_tile_1x8, 1u, 8u, 0, 0, 0u)
DM_WALK_SPAN(dm_tile_4x4_j1, DM_CONV_MB, DM_CONV_NB, 1, 0, 0u)
DM_WALK_SPAN(dm_tile_1x8_j1, 1u, 8u, 1, 0, 0u)
DM_WALK_SPAN(dm_tile_4x4_k3, DM_CONV_MB, DM_CONV_NB, 1, 1, 3u)  /* forward 3-wide kernel, stride 1 */
DM_WALK_SPAN(dm_tile_1x8_k3, 1u, 8u, 1, 1, 3u)
DM_WALK_SPAN(dm_tile_4x4_k3r, DM_CONV_MB, DM_CONV_NB, 1, -1, 3u) /* input gradient, 3-wide kernel */
DM_WALK_SPAN(dm_tile_1x8_k3r, 1u, 8u, 1, -1, 3u)

/* A whole row of `cols` (>= OWB) columns of a convolution (QS = 1) or an
 * input gradient (QS = -1) with kernel columns 3 wide, stride and dilation
 * 1, a padding of 1 and as many output as input columns (k->in at column
 * -QS): the first and last tiles skip the padding, the others need no test
 * (a middle tile ends before the last column; the last one may overlap the
 * one before, and stores only its new columns). */
#define DM_SAME_ROW(NAME, MB, OWB, QS)                                                      \
    static __attribute__((noinline)) void NAME(const dm_walk_t *k, uint32_t cols)         \
    {                                                                                      \
        if (cols == (OWB)) {                                                               \
            dm_walk_tile(k, k->in, k->out, MB, OWB, 1, QS, 3u, 1, 1, 0u);                  \
            return;                                                                        \
        }                                                                                  \
        dm_walk_tile(k, k->in, k->out, MB, OWB, 1, QS, 3u, 1, 0, 0u);                      \
        uint32_t t = (OWB);                                                                \
        for (; t + (OWB) < cols; t += (OWB))                                               \
            dm_walk_tile(k, k->in + t, k->out + t, MB, OWB, 1, QS, 3u, 0, 0, 0u);          \
        dm_walk_tile(k, k->in + (cols - (OWB)), k->out + (cols - (OWB)), MB, OWB, 1, QS, 3u, \
                     0, 1, t - (cols - (OWB)));                                            \
    }
DM_SAME_ROW(dm_same_4x4, DM_CONV_MB, DM_CONV_NB, 1)
DM_SAME_ROW(dm_same_1x8, 1u, 8u, 1)
DM_SAME_ROW(dm_same_4x4r, DM_CONV_MB, DM_CONV_NB, -1)
DM_SAME_ROW(dm_same_1x8r, 1u, 8u, -1)

/* Whether a row takes the DM_SAME_ROW path. */
static int dm_same(uint32_t stride, uint32_t dil, uint32_t k, uint32_t pad, uint32_t in,
                   uint32_t out, uint32_t MB)
{
    return stride == 1u && dil == 1u && k == 3u && pad == 1u && in == out &&
           out >= (MB == 4u ? DM_CONV_NB : 8u);
}

/* The blocked tile for MB channels: with kernel columns 3 wide, stride and
 * dilation 1 (qs: the kernel column step of `in`, 1 or -1), with stride 1,
 * or any. */
static dm_tile_fn dm_pick_tile(uint32_t MB, uint32_t stride, uint32_t dil, uint32_t k, int32_t qs)
{
    if (stride == 1u && dil == 1u && k == 3u) {
        if (qs > 0) return MB == 4u ? dm_tile_4x4_k3 : dm_tile_1x8_k3;
        return MB == 4u ? dm_tile_4x4_k3r : dm_tile_1x8_k3r;
    }
    if (stride == 1u) return MB == 4u ? dm_tile_4x4_j1 : dm_tile_1x8_j1;
    return MB == 4u ? dm_tile_4x4 : dm_tile_1x8;
}

/* The output columns whose every kernel column lies inside the input. */
static void dm_interior(uint32_t stride, uint32_t pad, uint32_t dil, uint32_t k, uint32_t in,
                        uint32_t out, uint32_t *lo, uint32_t *hi)
{
    const uint32_t span = (k - 1u) * dil; /* first to last tap */
    if (span >= in) {
        *lo = *hi = 0;
        return;
    }
    dm_window_range(-(int32_t)pad, stride, in - span, out, lo, hi);
}

/* -------------------------------------------- depthwise 3x3, stride 1, pad 1 */

/* Depthwise (one input and one output channel per group) 3 x 3, stride and
 * dilation 1, padding 1, as many output as input rows and columns, at least
 * 8 columns: the forward (S = 1: Y[r, j] reads X[r + kh - 1, j + kw - 1]) and
 * the input gradient (S = -1: dX[r, j] reads dY[r + 1 - kh, j + 1 - kw]) are
 * the same walk. Units are output rows (image, channel, row); a core keeps
 * the channel's 9 weights in registers, and a tile of 8 columns streams the
 * 10 inputs of each kernel row, one load ahead of the three multiply-adds
 * that need it. Each output sums kh, then kw, ascending, the taps in the
 * padding skipped: the order of dm_conv.h, so the bits of the generic path. */
typedef struct {
    float w[9];
    const float *in; /* the tile's first column - 1, at kernel row kh0 */
    int32_t rs;      /* between kernel rows (+-width) */
    uint32_t kh0, kh1;
    float *out;
    float bias; /* added last (forward); unused when acc */
    int has_bias, acc;
} dm_dw_row_t;

/* The T (8 or 4) columns of a tile at `in` / `out`; L: the first of its
 * row (column 0's tap kw = 0 (S = 1) or 2 (S = -1) is in the padding, and
 * x[0] is not read), R: the last (column T - 1's other outer tap, x[T + 1]);
 * columns below `skip` are not stored (the previous tile stored them). */
DM_INLINE void dm_dw_tile(const dm_dw_row_t *t, const float *in, float *out, int S, int L, int R,
                          uint32_t skip, uint32_t T)
{
    float c[8], x[10];
#pragma GCC unroll 8
    for (uint32_t j = 0; j < T; j++) c[j] = t->acc ? out[j] : 0.0f;
    const float *p = in;
    for (uint32_t kh = t->kh0; kh < t->kh1; kh++, p += t->rs) {
        const float w0 = t->w[kh * 3u], w1 = t->w[kh * 3u + 1u], w2 = t->w[kh * 3u + 2u];
        if (!L) DM_LDF(x[0], p);
        DM_LDF(x[1], p + 1);
#pragma GCC unroll 8
        for (uint32_t j = 0; j < T; j++) {
            if (!(R && j + 1u == T)) DM_LDF(x[j + 2u], p + j + 2u);
            /* kw = 0, 1, 2 read x[j + kw] (S = 1) or x[j + 2 - kw] (S = -1) */
            const int lo = L && j == 0u, hi = R && j + 1u == T; /* x[0], x[T + 1] absent */
            if (S > 0) {
                if (!lo) DM_FMA(c[j], w0, x[j]);
                DM_FMA(c[j], w1, x[j + 1u]);
                if (!hi) DM_FMA(c[j], w2, x[j + 2u]);
            } else {
                if (!hi) DM_FMA(c[j], w0, x[j + 2u]);
                DM_FMA(c[j], w1, x[j + 1u]);
                if (!lo) DM_FMA(c[j], w2, x[j]);
            }
        }
    }
#pragma GCC unroll 8
    for (uint32_t j = 0; j < T; j++)
        if (j >= skip) out[j] = t->has_bias ? c[j] + t->bias : c[j];
}

/* One row of `cols` (>= 8) columns: 8-column tiles; 4 columns left over
 * (a 12-column row) take a 4-column tile, other remainders an 8-column
 * tile moved left to end at the row's end (its first columns computed
 * again, the same bits, not stored). */
#define DM_DW_ROW(NAME, S)                                                                    \
    static __attribute__((noinline)) void NAME(const dm_dw_row_t *t, uint32_t cols)          \
    {                                                                                         \
        if (cols == 8u) {                                                                     \
            dm_dw_tile(t, t->in, t->out, S, 1, 1, 0u, 8u);                                    \
            return;                                                                           \
        }                                                                                     \
        dm_dw_tile(t, t->in, t->out, S, 1, 0, 0u, 8u);                                        \
        uint32_t j = 8u;                                                                      \
        for (; j + 8u < cols; j += 8u) dm_dw_tile(t, t->in + j, t->out + j, S, 0, 0, 0u, 8u); \
        if (cols - j == 4u)                                                                   \
            dm_dw_tile(t, t->in + j, t->out + j, S, 0, 1, 0u, 4u);                            \
        else                                                                                  \
            dm_dw_tile(t, t->in + (cols - 8u), t->out + (cols - 8u), S, 0, 1, j - (cols - 8u), \
                       8u);                                                                   \
    }
DM_DW_ROW(dm_dw_row_fwd, 1)
DM_DW_ROW(dm_dw_row_bwd, -1)

/* Whether the depthwise path takes a convolution of this geometry. */
static int dm_dw_fast(uint32_t in_ch, uint32_t out_ch, uint32_t groups, uint32_t k_h,
                      uint32_t k_w, uint32_t stride_h, uint32_t stride_w, uint32_t dil_h,
                      uint32_t dil_w, uint32_t pad_top, uint32_t pad_left, uint32_t in_h,
                      uint32_t in_w, uint32_t out_h, uint32_t out_w)
{
    /* one accumulated difference (few live registers: the kernels' entries
     * that test it keep an empty frame) */
    const uint32_t d = (groups ^ in_ch) | (groups ^ out_ch) | (k_h ^ 3u) | (k_w ^ 3u) |
                       (stride_h ^ 1u) | (stride_w ^ 1u) | (dil_h ^ 1u) | (dil_w ^ 1u) |
                       (pad_top ^ 1u) | (pad_left ^ 1u) | (in_h ^ out_h) | (in_w ^ out_w);
    return d == 0u && in_w >= 8u;
}

/* This core's share of the rows (image, channel, row) of `total`: in -> out
 * through W (forward S = 1, bias B or NULL; input gradient S = -1, acc).
 * Inlined into the two noinline entries below, where S is a constant and
 * the row call direct. */
DM_INLINE void dm_dw_rows(const float *in, const float *W, const float *B, float *out,
                          uint32_t ch, uint32_t H, uint32_t Wd, uint32_t total, int S, int acc,
                          uint32_t relu)
{
    uint32_t u0, u1;
    dm_chunk(total, &u0, &u1);
    if (u0 >= u1) return;
    const uint32_t plane = H * Wd;
    uint32_t pl = u0 / H, r = u0 % H; /* plane (image * ch + channel), row */
    dm_dw_row_t t;
    t.has_bias = B != NULL;
    t.acc = acc;
    t.rs = S > 0 ? (int32_t)Wd : -(int32_t)Wd;
    uint32_t loaded = ~0u;
    for (uint32_t u = u0; u < u1; u++) {
        const uint32_t c = pl % ch;
        if (c != loaded) {
            for (uint32_t i = 0; i < 9u; i++) t.w[i] = W[c * 9u + i];
            t.bias = B != NULL ? B[c] : 0.0f;
            loaded = c;
        }
        /* kernel rows inside the input: S = 1 reads row r + kh - 1, S = -1 row r + 1 - kh */
        const uint32_t top = S > 0 ? r == 0u : r + 1u == H, bot = S > 0 ? r + 1u == H : r == 0u;
        t.kh0 = top ? 1u : 0u;
        t.kh1 = bot ? 2u : 3u;
        const int32_t row0 = S > 0 ? (int32_t)(r + t.kh0) - 1 : (int32_t)r + 1 - (int32_t)t.kh0;
        t.in = in + pl * plane + (uint32_t)row0 * Wd - 1;
        t.out = out + pl * plane + r * Wd;
        if (S > 0)
            dm_dw_row_fwd(&t, Wd);
        else
            dm_dw_row_bwd(&t, Wd);
        if (relu) dm_relu_words((dm_word_t *)t.out, Wd); /* the row complete: its ReLU */
        if (++r == H) {
            r = 0;
            pl++;
        }
    }
}

/* The depthwise entries (dm_dw_fast geometry), called by the kernels as
 * their last act: a frame of their own, not added to the general path's. */
static __attribute__((noinline)) void dm_dw_fwd(const dm_conv2d_args_t *a)
{
    dm_dw_rows(a->X, a->W, a->B, a->Y, a->out_ch, a->out_h, a->out_w,
               a->batch * a->out_ch * a->out_h, 1, 0, a->relu);
}

static __attribute__((noinline)) void dm_dw_dgrad(const dm_conv2d_grad_args_t *a)
{
    dm_dw_rows(a->dY, a->W, NULL, a->dX, a->in_ch, a->in_h, a->in_w,
               a->batch * a->in_ch * a->in_h, -1, a->acc_dX != 0u, 0u);
}

/* The work units (row r < rows, channel block b) of a forward or input
 * gradient, numbered u = r blocks + b: block b of a row holds min(4, ch -
 * 4 b) channels. This core's units [*u0, *u1): those whose first channel,
 * counted over the rows (r ch + 4 b), lies in its share of rows x ch,
 * [ceil(id T / cores), ceil((id + 1) T / cores)), so the cores get the
 * same channels to within one block (dm_chunk over the units would give the
 * cores that draw a row's last, narrower blocks less work: 5 channels,
 * blocks of 4 and 1, left half the cores a quarter of the others' work). */
static uint32_t dm_unit_at(uint32_t t, uint32_t ch, uint32_t rows)
{
    const uint32_t blocks = (ch + 3u) / 4u;
    const uint32_t row = t / ch, blk = (t - row * ch + 3u) / 4u;
    if (row >= rows) return rows * blocks;
    return row * blocks + blk; /* blk == blocks: the next row's first */
}

static void dm_chunk_blocks(uint32_t rows, uint32_t ch, uint32_t *u0, uint32_t *u1)
{
    const uint32_t cores = (uint32_t)pi_cl_team_nb_cores(), id = (uint32_t)pi_core_id();
    const uint32_t total = rows * ch;
    *u0 = dm_unit_at((id * total + cores - 1u) / cores, ch, rows);
    *u1 = dm_unit_at(((id + 1u) * total + cores - 1u) / cores, ch, rows);
}

/* This core's units [*u0, *u1) of `rows` rows (n, g, row) x blocks of 4 of
 * `ch` channels: with a narrower last block numbered (row, block) and split
 * by channels (dm_chunk_blocks); else numbered (n, g, block, row within
 * rows) and split evenly (dm_chunk); dm_unit_rm: unit u's row-major number
 * r blocks + b. */
static void dm_conv_units(uint32_t rows, uint32_t ch, uint32_t *u0, uint32_t *u1)
{
    if (ch % 4u != 0u)
        dm_chunk_blocks(rows, ch, u0, u1);
    else
        dm_chunk(rows * (ch / 4u), u0, u1);
}

static __attribute__((noinline)) uint32_t dm_unit_rm(uint32_t u, uint32_t ch, uint32_t h)
{
    if (ch % 4u != 0u) return u;
    const uint32_t blocks = ch / 4u, t = u / h, ng = t / blocks;
    return (ng * h + (u - t * h)) * blocks + (t - ng * blocks);
}

/* ------------------------------------------------------------------ forward */

/* One block of MB output rows (channels m0.., row oh, image n): the edge
 * columns one at a time with their own kernel column range, the interior
 * [owl, owr) in tiles of OWB columns (the last tile moved left to end at
 * owr: the columns it computes again get the same bits). `k` comes with
 * everything but in, w, nq and out. */
static void dm_conv_rows(dm_walk_t *k, const dm_conv2d_args_t *a, const float *x, const float *w,
                         float *y, int32_t ih0, uint32_t kh0, uint32_t owl, uint32_t owr,
                         uint32_t MB)
{
    const uint32_t OWB = MB == 4u ? DM_CONV_NB : 8u;
    const float *xr = k->nr == 0u ? x : x + (uint32_t)(ih0 + (int32_t)(kh0 * a->dil_h)) * a->in_w;
    const float *wr = w + kh0 * a->k_w;
    const dm_tile_fn edge = MB == 4u ? dm_tile_4x1 : dm_tile_1x1;
    const dm_tile_fn tile = dm_pick_tile(MB, a->stride_w, a->dil_w, a->k_w, 1);
    if (dm_same(a->stride_w, a->dil_w, a->k_w, a->pad_left, a->in_w, a->out_w, MB)) {
        k->nq = 3u;
        k->w = wr;
        k->in = xr - 1;
        k->out = y;
        (MB == 4u ? dm_same_4x4 : dm_same_1x8)(k, a->out_w);
        return;
    }
    for (uint32_t ow = 0; ow < a->out_w; ow++) {
        const int32_t iw0 = (int32_t)(ow * a->stride_w) - (int32_t)a->pad_left;
        if (ow == owl && owr - owl >= OWB) {
            k->nq = a->k_w;
            k->w = wr;
            k->in = xr + (owl * a->stride_w - a->pad_left);
            k->out = y + owl;
            tile(k, owr - owl);
            ow = owr - 1u;
            continue;
        }
        uint32_t kw0, kw1;
        dm_window_range(iw0, a->dil_w, a->in_w, a->k_w, &kw0, &kw1);
        k->nq = kw1 - kw0;
        k->w = wr + kw0;
        k->in = xr + (kw0 < kw1 ? (uint32_t)(iw0 + (int32_t)(kw0 * a->dil_w)) : 0u);
        k->out = y + ow;
        edge(k, 1u);
    }
}

/* relu: the ReLU of work unit u's rows (dm_conv_general's numbering), once
 * stored; a frame of its own (dm_conv_general's keeps its size). */
static __attribute__((noinline)) void dm_conv_relu_unit(const dm_conv2d_args_t *a, uint32_t u)
{
    const uint32_t mg = a->out_ch / a->groups, blocks = (mg + 3u) / 4u;
    const uint32_t v = dm_unit_rm(u, mg, a->out_h), r = v / blocks, blk = v - r * blocks;
    const uint32_t oh = r % a->out_h, g = (r / a->out_h) % a->groups;
    const uint32_t n = r / (a->out_h * a->groups);
    const uint32_t m0 = g * mg + 4u * blk, mb = dm_min(4u, mg - 4u * blk);
    const uint32_t oplane = a->out_h * a->out_w;
    dm_word_t *y = (dm_word_t *)a->Y + ((n * a->out_ch + m0) * a->out_h + oh) * a->out_w;
    for (uint32_t i = 0; i < mb; i++, y += oplane) dm_relu_words(y, a->out_w);
}

/* Every geometry (dm_conv2d_fp32 without the depthwise path). */
static __attribute__((noinline)) void dm_conv_general(const dm_conv2d_args_t *a)
{
    const uint32_t cg = a->in_ch / a->groups, mg = a->out_ch / a->groups;
    const uint32_t taps = a->k_h * a->k_w, blocks = (mg + 3u) / 4u;
    const uint32_t plane = a->in_h * a->in_w, oplane = a->out_h * a->out_w;
    uint32_t owl, owr, u0, u1;
    dm_interior(a->stride_w, a->pad_left, a->dil_w, a->k_w, a->in_w, a->out_w, &owl, &owr);
    dm_walk_t k;
    k.in_p = (int32_t)plane;
    k.in_r = (int32_t)(a->dil_h * a->in_w);
    k.in_q = (int32_t)a->dil_w;
    k.in_j = (int32_t)a->stride_w;
    k.w_i = (int32_t)(cg * taps);
    k.w_p = (int32_t)taps;
    k.w_r = (int32_t)a->k_w;
    k.w_q = 1;
    k.np = cg;
    k.out_i = oplane;
    k.acc = 0;
    /* units ((n, g, oh), block of 4 channels) split by channels when the
     * last block is narrower; else (n, g, block, oh) split evenly (each
     * core's rows of a block include about as many edge rows, which miss
     * kernel rows, as any other's) */
    dm_conv_units(a->batch * a->groups * a->out_h, mg, &u0, &u1);
    for (uint32_t u = u0; u < u1; u++) {
        const uint32_t v = dm_unit_rm(u, mg, a->out_h), r = v / blocks, blk = v - r * blocks;
        const uint32_t oh = r % a->out_h, g = (r / a->out_h) % a->groups;
        const uint32_t n = r / (a->out_h * a->groups);
        const uint32_t m0 = g * mg + 4u * blk, mb = dm_min(4u, mg - 4u * blk);
        const int32_t ih0 = (int32_t)(oh * a->stride_h) - (int32_t)a->pad_top;
        uint32_t kh0, kh1;
        dm_window_range(ih0, a->dil_h, a->in_h, a->k_h, &kh0, &kh1);
        k.nr = kh1 - kh0;
        if (k.nr == 0u) k.np = 0u; /* every tap of the row in the padding */
        const float *x = a->X + (n * a->in_ch + g * cg) * plane;
        for (uint32_t i = 0; i < mb; i += (mb == 4u ? DM_CONV_MB : 1u)) {
            const uint32_t m = m0 + i;
            k.bias = a->B != NULL ? a->B + m : NULL;
            float *y = a->Y + ((n * a->out_ch + m) * a->out_h + oh) * a->out_w;
            dm_conv_rows(&k, a, x, a->W + m * cg * taps, y, ih0, kh0, owl, owr,
                         mb == 4u ? 4u : 1u);
        }
        if (a->relu) dm_conv_relu_unit(a, u); /* the unit's rows are complete: their ReLU */
        k.np = cg;
    }
}

void dm_conv2d_fp32(void *args)
{
    const dm_conv2d_args_t *a = (const dm_conv2d_args_t *)args;
    /* both paths are tail calls: this frame is empty, and the deepest stack
     * is the deeper of the two paths, not their sum */
    if (dm_dw_fast(a->in_ch, a->out_ch, a->groups, a->k_h, a->k_w, a->stride_h, a->stride_w,
                   a->dil_h, a->dil_w, a->pad_top, a->pad_left, a->in_h, a->in_w, a->out_h,
                   a->out_w))
        dm_dw_fwd(a);
    else
        dm_conv_general(a);
}

/* ------------------------------------------------------------ input gradient */

/* One block of MB dX rows (input channels c0.., row ih, image n), as
 * dm_conv_rows: output column ow = (iw + pad_left - kw * dil_w) / stride_w
 * for the kernel columns that reach one (every one in the interior, which
 * exists with stride_w = 1 only). dy: dY of the group's first channel at
 * the first kernel row's output row; w: W at that kernel row. */
static void dm_dgrad_rows(dm_walk_t *k, const dm_conv2d_grad_args_t *a, const float *dy,
                          const float *w, float *dx, uint32_t iwl, uint32_t iwr, uint32_t MB)
{
    const uint32_t IWB = MB == 4u ? DM_CONV_NB : 8u;
    const int32_t last = (int32_t)((a->out_w - 1u) * a->stride_w);
    const dm_tile_fn edge = MB == 4u ? dm_tile_4x1 : dm_tile_1x1;
    const dm_tile_fn tile = dm_pick_tile(MB, 1u, a->dil_w, a->k_w, -1);
    if (dm_same(a->stride_w, a->dil_w, a->k_w, a->pad_left, a->in_w, a->out_w, MB)) {
        k->nq = 3u;
        k->in_q = -1;
        k->w_q = 1;
        k->w = w;
        k->in = dy + 1;
        k->out = dx;
        (MB == 4u ? dm_same_4x4r : dm_same_1x8r)(k, a->in_w);
        return;
    }
    for (uint32_t iw = 0; iw < a->in_w; iw++) {
        if (iw == iwl && iwr - iwl >= IWB) {
            k->nq = a->k_w;
            k->in_q = -(int32_t)a->dil_w;
            k->w_q = 1;
            k->w = w;
            k->in = dy + (iwl + a->pad_left);
            k->out = dx + iwl;
            tile(k, iwr - iwl);
            iw = iwr - 1u;
            continue;
        }
        const int32_t base = (int32_t)(iw + a->pad_left);
        uint32_t kw0, kw1, step;
        dm_reverse_range(base, a->dil_w, last, a->k_w, &kw0, &kw1);
        kw0 = dm_first_aligned(base, a->dil_w, a->stride_w, kw0, kw1, &step);
        k->nq = (kw1 - kw0 + step - 1u) / step;
        k->in_q = -(int32_t)(step * a->dil_w / a->stride_w);
        k->w_q = (int32_t)step;
        k->w = w + kw0;
        k->in = dy + (kw0 < kw1 ? (uint32_t)(base - (int32_t)(kw0 * a->dil_w)) / a->stride_w : 0u);
        k->out = dx + iw;
        edge(k, 1u);
    }
}

/* Every geometry (dm_conv2d_grad_input_fp32 without the depthwise path). */
static __attribute__((noinline)) void dm_dgrad_general(const dm_conv2d_grad_args_t *a)
{
    const uint32_t cg = a->in_ch / a->groups, mg = a->out_ch / a->groups;
    const uint32_t taps = a->k_h * a->k_w, blocks = (cg + 3u) / 4u;
    const uint32_t plane = a->in_h * a->in_w, oplane = a->out_h * a->out_w;
    const int32_t last_h = (int32_t)((a->out_h - 1u) * a->stride_h);
    /* interior columns (stride 1 only): every kernel column reaches an output */
    uint32_t iwl = 0, iwr = 0, u0, u1;
    if (a->stride_w == 1u && a->out_w > a->pad_left) {
        const uint32_t span = (a->k_w - 1u) * a->dil_w;
        iwl = span > a->pad_left ? span - a->pad_left : 0u;
        iwr = dm_min(a->in_w, a->out_w - a->pad_left);
        if (iwr < iwl) iwr = iwl;
    }
    dm_walk_t k;
    k.in_p = (int32_t)oplane;
    k.in_j = 1;
    k.w_i = (int32_t)taps;
    k.w_p = (int32_t)(cg * taps);
    k.np = mg;
    k.out_i = plane;
    k.bias = NULL;
    k.acc = a->acc_dX;
    /* units as the forward's (dm_conv_units), over input channels */
    dm_conv_units(a->batch * a->groups * a->in_h, cg, &u0, &u1);
    for (uint32_t u = u0; u < u1; u++) {
        const uint32_t v = dm_unit_rm(u, cg, a->in_h), r = v / blocks, blk = v - r * blocks;
        const uint32_t ih = r % a->in_h, g = (r / a->in_h) % a->groups;
        const uint32_t n = r / (a->in_h * a->groups);
        const uint32_t cb = dm_min(4u, cg - 4u * blk), c0 = g * cg + 4u * blk;
        /* kernel rows kh0, kh0 + step, .. < kh1 reach output row
         * (ih + pad_top - kh * dil_h) / stride_h */
        const int32_t hbase = (int32_t)(ih + a->pad_top);
        uint32_t kh0, kh1, step;
        dm_reverse_range(hbase, a->dil_h, last_h, a->k_h, &kh0, &kh1);
        kh0 = dm_first_aligned(hbase, a->dil_h, a->stride_h, kh0, kh1, &step);
        k.nr = (kh1 - kh0 + step - 1u) / step;
        k.in_r = -(int32_t)(step * a->dil_h / a->stride_h * a->out_w);
        k.w_r = (int32_t)(step * a->k_w);
        k.np = k.nr == 0u ? 0u : mg;
        const uint32_t oh0 =
            kh0 < kh1 ? (uint32_t)(hbase - (int32_t)(kh0 * a->dil_h)) / a->stride_h : 0u;
        const float *dy = a->dY + (n * a->out_ch + g * mg) * oplane + oh0 * a->out_w;
        for (uint32_t i = 0; i < cb; i += (cb == 4u ? DM_CONV_MB : 1u)) {
            const uint32_t c = c0 + i;
            const float *w = a->W + (g * mg * cg + (c - g * cg)) * taps + kh0 * a->k_w;
            float *dx = a->dX + ((n * a->in_ch + c) * a->in_h + ih) * a->in_w;
            dm_dgrad_rows(&k, a, dy, w, dx, iwl, iwr, cb == 4u ? 4u : 1u);
        }
    }
}

void dm_conv2d_grad_input_fp32(void *args)
{
    const dm_conv2d_grad_args_t *a = (const dm_conv2d_grad_args_t *)args;
    /* tail calls, as dm_conv2d_fp32 */
    if (dm_dw_fast(a->in_ch, a->out_ch, a->groups, a->k_h, a->k_w, a->stride_h, a->stride_w,
                   a->dil_h, a->dil_w, a->pad_top, a->pad_left, a->in_h, a->in_w, a->out_h,
                   a->out_w))
        dm_dw_dgrad(a);
    else
        dm_dgrad_general(a);
}

/* ----------------------------------------------------------- weight gradient */

/* dW[m0 + i, c0 + j, kh, kw] for i < MB, j < CB: sum over n, then output rows
 * [oh0, oh1), then output columns [ow0, ow1) (the outputs whose tap lies in
 * the input). SW: stride_w as a constant, 0 to read it from the args. */
DM_INLINE void dm_wgrad_tile(const dm_conv2d_grad_args_t *a, uint32_t m0, uint32_t c0,
                             uint32_t xc0, uint32_t kh, uint32_t kw, uint32_t MB, uint32_t CB,
                             uint32_t SW)
{
    const uint32_t sw = SW != 0u ? SW : a->stride_w;
    const uint32_t cg = a->in_ch / a->groups, taps = a->k_h * a->k_w;
    const uint32_t plane = a->in_h * a->in_w, oplane = a->out_h * a->out_w;
    const int32_t dh = (int32_t)(kh * a->dil_h) - (int32_t)a->pad_top;
    const int32_t dwo = (int32_t)(kw * a->dil_w) - (int32_t)a->pad_left;
    uint32_t oh0, oh1, ow0, ow1;
    dm_window_range(dh, a->stride_h, a->in_h, a->out_h, &oh0, &oh1);
    dm_window_range(dwo, sw, a->in_w, a->out_w, &ow0, &ow1);
    float c[4][4];
    float *dw = a->dW + (m0 * cg + c0) * taps + kh * a->k_w + kw;
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 4
        for (uint32_t j = 0; j < CB; j++) c[i][j] = a->acc_dW ? dw[(i * cg + j) * taps] : 0.0f;
    const uint32_t cols = ow1 - ow0;
    for (uint32_t n = 0; n < a->batch && cols > 0u; n++) {
        const float *dyn = a->dY + (n * a->out_ch + m0) * oplane + ow0;
        const float *xn = a->X + (n * a->in_ch + xc0) * plane +
                          (uint32_t)((int32_t)(ow0 * sw) + dwo);
        for (uint32_t oh = oh0; oh < oh1; oh++) {
            const float *dp[4], *xp[4];
            const uint32_t xrow = (uint32_t)((int32_t)(oh * a->stride_h) + dh) * a->in_w;
#pragma GCC unroll 4
            for (uint32_t i = 0; i < MB; i++) dp[i] = dyn + i * oplane + oh * a->out_w;
#pragma GCC unroll 4
            for (uint32_t j = 0; j < CB; j++) xp[j] = xn + j * plane + xrow;
            uint32_t t = cols;
            if (SW == 1u) { /* two columns per step: immediate offsets */
                for (; t >= 2u; t -= 2u) {
#pragma GCC unroll 2
                    for (uint32_t u = 0; u < 2u; u++) {
                        float dv[4], xv[4];
#pragma GCC unroll 4
                        for (uint32_t i = 0; i < MB; i++) dv[i] = dp[i][u];
#pragma GCC unroll 4
                        for (uint32_t j = 0; j < CB; j++) xv[j] = xp[j][u];
#pragma GCC unroll 4
                        for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 4
                            for (uint32_t j = 0; j < CB; j++) c[i][j] = fmaf(dv[i], xv[j], c[i][j]);
                    }
#pragma GCC unroll 4
                    for (uint32_t i = 0; i < MB; i++) dp[i] += 2;
#pragma GCC unroll 4
                    for (uint32_t j = 0; j < CB; j++) xp[j] += 2;
                }
            }
            for (; t > 0u; t--) {
                float dv[4], xv[4];
#pragma GCC unroll 4
                for (uint32_t i = 0; i < MB; i++) dv[i] = *dp[i]++;
#pragma GCC unroll 4
                for (uint32_t j = 0; j < CB; j++) {
                    xv[j] = *xp[j];
                    xp[j] += sw;
                }
#pragma GCC unroll 4
                for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 4
                    for (uint32_t j = 0; j < CB; j++) c[i][j] = fmaf(dv[i], xv[j], c[i][j]);
            }
        }
    }
    if (dm_onto(a->reset_dW, a->acc_dW)) {
#pragma GCC unroll 4
        for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 4
            for (uint32_t j = 0; j < CB; j++) {
                float *d = &dw[(i * cg + j) * taps];
                *d = *d + c[i][j];
            }
        return;
    }
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MB; i++)
#pragma GCC unroll 4
        for (uint32_t j = 0; j < CB; j++) dw[(i * cg + j) * taps] = c[i][j];
}

#define DM_WGRAD_TILE(NAME, MB, CB, SW)                                                    \
    static __attribute__((noinline)) void NAME(const dm_conv2d_grad_args_t *a, uint32_t m0, \
                                               uint32_t c0, uint32_t xc0, uint32_t kh,      \
                                               uint32_t kw)                                 \
    {                                                                                       \
        dm_wgrad_tile(a, m0, c0, xc0, kh, kw, MB, CB, SW);                                  \
    }
DM_WGRAD_TILE(dm_wgrad_4x4_s1, 4u, 4u, 1u)
DM_WGRAD_TILE(dm_wgrad_4x3_s1, 4u, 3u, 1u)
DM_WGRAD_TILE(dm_wgrad_4x2_s1, 4u, 2u, 1u)
DM_WGRAD_TILE(dm_wgrad_2x4_s1, 2u, 4u, 1u)
DM_WGRAD_TILE(dm_wgrad_4x1_s1, 4u, 1u, 1u)
DM_WGRAD_TILE(dm_wgrad_1x4_s1, 1u, 4u, 1u)
DM_WGRAD_TILE(dm_wgrad_1x1_s1, 1u, 1u, 1u)
DM_WGRAD_TILE(dm_wgrad_4x4, 4u, 4u, 0u)
DM_WGRAD_TILE(dm_wgrad_4x1, 4u, 1u, 0u)
DM_WGRAD_TILE(dm_wgrad_1x4, 1u, 4u, 0u)
DM_WGRAD_TILE(dm_wgrad_1x1, 1u, 1u, 0u)
#if DM_CONV_WCB == 2
DM_WGRAD_TILE(dm_wgrad_4x2, 4u, 2u, 0u)
#endif

/* W columns of dm_wgrad_k3's common range: *cq += d[t] * x[t + q]. */
DM_INLINE void dm_k3_cols(const float *d, const float *x, uint32_t W, float *c0, float *c1,
                          float *c2)
{
    float xv[10], dv[8], a0 = *c0, a1 = *c1, a2 = *c2;
#pragma GCC unroll 10
    for (uint32_t t = 0; t < W + 2u; t++) xv[t] = x[t];
#pragma GCC unroll 8
    for (uint32_t t = 0; t < W; t++) dv[t] = d[t];
#pragma GCC unroll 8
    for (uint32_t t = 0; t < W; t++) {
        a0 = fmaf(dv[t], xv[t], a0);
        a1 = fmaf(dv[t], xv[t + 1u], a1);
        a2 = fmaf(dv[t], xv[t + 2u], a2);
    }
    *c0 = a0;
    *c1 = a1;
    *c2 = a2;
}

/* dW[m, c, kh, 0..2] of a kernel 3 columns wide, stride_w and dil_w 1, for
 * one output and one input channel (xc in X): the three taps share each
 * loaded dY element and, eight output columns at a time, the X elements
 * they overlap on. Each tap keeps its order (n, oh, ow): per row, the
 * columns only some taps reach come before (after) the common ones. */
static __attribute__((noinline)) void dm_wgrad_k3(const dm_conv2d_grad_args_t *a, uint32_t m,
                                                  uint32_t c, uint32_t xc, uint32_t kh)
{
    const uint32_t cg = a->in_ch / a->groups, taps = a->k_h * 3u;
    const uint32_t plane = a->in_h * a->in_w, oplane = a->out_h * a->out_w;
    const int32_t dh = (int32_t)(kh * a->dil_h) - (int32_t)a->pad_top;
    const int32_t pl = (int32_t)a->pad_left;
    uint32_t oh0, oh1, lo[3], hi[3];
    dm_window_range(dh, a->stride_h, a->in_h, a->out_h, &oh0, &oh1);
    uint32_t L = 0, H = a->out_w;
    for (uint32_t q = 0; q < 3u; q++) {
        dm_window_range((int32_t)q - pl, 1u, a->in_w, a->out_w, &lo[q], &hi[q]);
        if (lo[q] > L) L = lo[q];
        if (hi[q] < H) H = hi[q];
    }
    if (L >= H) { /* no column that all three taps reach: one tap at a time */
        for (uint32_t q = 0; q < 3u; q++) dm_wgrad_1x1_s1(a, m, c, xc, kh, q);
        return;
    }
    float *dw = a->dW + (m * cg + c) * taps + kh * 3u;
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f;
    if (a->acc_dW) {
        c0 = dw[0];
        c1 = dw[1];
        c2 = dw[2];
    }
    for (uint32_t n = 0; n < a->batch; n++) {
        const float *dyn = a->dY + (n * a->out_ch + m) * oplane;
        const float *xn = a->X + (n * a->in_ch + xc) * plane;
        for (uint32_t oh = oh0; oh < oh1; oh++) {
            const float *d = dyn + oh * a->out_w;
            /* x[ow + q] is the input of output column ow and tap q */
            const float *x = xn + (uint32_t)((int32_t)(oh * a->stride_h) + dh) * a->in_w - pl;
            for (uint32_t o = lo[0]; o < L; o++) c0 = fmaf(d[o], x[o], c0);
            for (uint32_t o = lo[1]; o < L; o++) c1 = fmaf(d[o], x[o + 1u], c1);
            for (uint32_t o = lo[2]; o < L; o++) c2 = fmaf(d[o], x[o + 2u], c2);
            uint32_t ow = L;
            for (; ow + 8u <= H; ow += 8u) dm_k3_cols(d + ow, x + ow, 8u, &c0, &c1, &c2);
            for (; ow < H; ow++) dm_k3_cols(d + ow, x + ow, 1u, &c0, &c1, &c2);
            for (uint32_t o = H; o < hi[0]; o++) c0 = fmaf(d[o], x[o], c0);
            for (uint32_t o = H; o < hi[1]; o++) c1 = fmaf(d[o], x[o + 1u], c1);
            for (uint32_t o = H; o < hi[2]; o++) c2 = fmaf(d[o], x[o + 2u], c2);
        }
    }
    if (dm_onto(a->reset_dW, a->acc_dW)) {
        c0 = dw[0] + c0;
        c1 = dw[1] + c1;
        c2 = dw[2] + c2;
    }
    dw[0] = c0;
    dw[1] = c1;
    dw[2] = c2;
}

/* The depthwise path's weight gradient (dm_dw_fast geometry): one channel g
 * per unit, its 9 sums in registers; per image and output row, the kernel
 * rows whose input row exists (KH0..KH1), per kernel row the columns in
 * order: column 0 (taps kw = 1, 2), chunks of 4 inner columns (6 loads of X
 * and 12 multiply-adds per kernel row, the 4 dY loaded once), the
 * remaining inner columns one by one, the last column (kw = 0, 1). Each
 * dW[g, 0, kh, kw] sums n, oh, ow ascending: the order of dm_conv.h. */
/* Inner columns [ow, ow + CH) of dm_dw_wrow: the CH dY loaded once, per
 * kernel row CH + 2 loads of X and 3 CH multiply-adds. */
DM_INLINE void dm_dw_wcols(const float *d, const float *x, uint32_t W, float c[9], uint32_t ow,
                           uint32_t CH, uint32_t KH0, uint32_t KH1)
{
    float dv[8];
#pragma GCC unroll 8
    for (uint32_t j = 0; j < CH; j++) DM_LDF(dv[j], d + ow + j);
#pragma GCC unroll 3
    for (uint32_t kh = KH0; kh < KH1; kh++) {
        const float *xr = x + (kh - KH0) * W + ow - 1u;
        float xv[10];
        DM_LDF(xv[0], xr);
        DM_LDF(xv[1], xr + 1);
#pragma GCC unroll 8
        for (uint32_t j = 0; j < CH; j++) {
            DM_LDF(xv[j + 2u], xr + j + 2u);
            DM_FMA(c[kh * 3u], dv[j], xv[j]);
            DM_FMA(c[kh * 3u + 1u], dv[j], xv[j + 1u]);
            DM_FMA(c[kh * 3u + 2u], dv[j], xv[j + 2u]);
        }
    }
}

DM_INLINE void dm_dw_wrow(const float *d, const float *x, uint32_t W, float c[9], uint32_t KH0,
                          uint32_t KH1)
{
    /* x: input row oh - 1 + KH0 (kernel row KH0) at column 0 */
#pragma GCC unroll 3
    for (uint32_t kh = KH0; kh < KH1; kh++) {
        const float *xr = x + (kh - KH0) * W;
        DM_FMA(c[kh * 3u + 1u], d[0], xr[0]);
        DM_FMA(c[kh * 3u + 2u], d[0], xr[1]);
    }
    uint32_t ow = 1;
    /* a loop of 4-column chunks: its code stays in the core's 512-byte L0
     * instruction cache (8-column chunks did not, measured) */
    for (; ow + 4u < W; ow += 4u) dm_dw_wcols(d, x, W, c, ow, 4u, KH0, KH1);
    for (; ow + 1u < W; ow++) dm_dw_wcols(d, x, W, c, ow, 1u, KH0, KH1);
#pragma GCC unroll 3
    for (uint32_t kh = KH0; kh < KH1; kh++) {
        const float *xr = x + (kh - KH0) * W + W - 2u;
        DM_FMA(c[kh * 3u], d[W - 1u], xr[0]);
        DM_FMA(c[kh * 3u + 1u], d[W - 1u], xr[1]);
    }
}

/* One image's plane: the 9 sums stay in registers over its rows (the first
 * and last rows, which miss a kernel row, are instances of their own),
 * starting from dw (0 when init) and stored back to dw: between images
 * the sums go through dW itself (the same bits), so that no caller holds
 * them in a stack array. */
static __attribute__((noinline)) void dm_dw_wplane(const float *dy, const float *x, uint32_t H,
                                                   uint32_t W, float *dw, int init)
{
    float r[9];
    for (uint32_t i = 0; i < 9u; i++) r[i] = init ? 0.0f : dw[i];
    if (H == 1u) {
        dm_dw_wrow(dy, x, W, r, 1u, 2u);
    } else {
        dm_dw_wrow(dy, x, W, r, 1u, 3u); /* row 0: no input row -1 */
        for (uint32_t oh = 1; oh + 1u < H; oh++)
            dm_dw_wrow(dy + oh * W, x + (oh - 1u) * W, W, r, 0u, 3u);
        dm_dw_wrow(dy + (H - 1u) * W, x + (H - 2u) * W, W, r, 0u, 2u); /* no input row H */
    }
    for (uint32_t i = 0; i < 9u; i++) dw[i] = r[i];
}

/* Channel g of the depthwise path onto a gradient buffer (reset_dW): the
 * sums from 0 through dW as dm_dw_wplane goes, the buffer's 9 old values kept
 * here and added at the end (a frame of its own, off the other paths). */
static __attribute__((noinline)) void dm_dw_wgrad_onto(const dm_conv2d_grad_args_t *a,
                                                       uint32_t g)
{
    const uint32_t plane = a->in_h * a->in_w;
    float old[9];
    float *dw = a->dW + g * 9u;
    for (uint32_t i = 0; i < 9u; i++) old[i] = dw[i];
    for (uint32_t n = 0; n < a->batch; n++)
        dm_dw_wplane(a->dY + (n * a->out_ch + g) * plane, a->X + (n * a->in_ch + g) * plane,
                     a->in_h, a->in_w, dw, n == 0u);
    for (uint32_t i = 0; i < 9u; i++) dw[i] = old[i] + dw[i];
}

DM_INLINE void dm_wgrad_block(const dm_conv2d_grad_args_t *a, uint32_t m0, uint32_t mb,
                              uint32_t c0, uint32_t cb, uint32_t xc0, uint32_t kh, uint32_t kw,
                              uint32_t SW)
{
#if DM_CONV_WCB == 2
    if (mb == 4u && cb >= 2u) { /* 4 x 2 tiles (+ 4 x 1) */
        for (uint32_t j = 0; j + 2u <= cb; j += 2u)
            (SW ? dm_wgrad_4x2_s1 : dm_wgrad_4x2)(a, m0, c0 + j, xc0 + j, kh, kw);
        if (cb == 3u) (SW ? dm_wgrad_4x1_s1 : dm_wgrad_4x1)(a, m0, c0 + 2u, xc0 + 2u, kh, kw);
        return;
    }
#endif
    if (mb == 4u && cb == 4u) {
        (SW ? dm_wgrad_4x4_s1 : dm_wgrad_4x4)(a, m0, c0, xc0, kh, kw);
    } else if (SW && mb == 4u && cb >= 2u) { /* 3 or 2 input channels: one tile */
        (cb == 3u ? dm_wgrad_4x3_s1 : dm_wgrad_4x2_s1)(a, m0, c0, xc0, kh, kw);
    } else if (SW && mb >= 2u && cb == 4u) { /* 2 or 3 output channels: 2 x 4 (+ 1 x 4) */
        dm_wgrad_2x4_s1(a, m0, c0, xc0, kh, kw);
        if (mb == 3u) dm_wgrad_1x4_s1(a, m0 + 2u, c0, xc0, kh, kw);
    } else if (mb == 4u) {
        for (uint32_t j = 0; j < cb; j++)
            (SW ? dm_wgrad_4x1_s1 : dm_wgrad_4x1)(a, m0, c0 + j, xc0 + j, kh, kw);
    } else if (cb == 4u) {
        for (uint32_t i = 0; i < mb; i++)
            (SW ? dm_wgrad_1x4_s1 : dm_wgrad_1x4)(a, m0 + i, c0, xc0, kh, kw);
    } else {
        for (uint32_t i = 0; i < mb; i++)
            for (uint32_t j = 0; j < cb; j++)
                (SW ? dm_wgrad_1x1_s1 : dm_wgrad_1x1)(a, m0 + i, c0 + j, xc0 + j, kh, kw);
    }
}

void dm_conv2d_grad_weight_fp32(void *args)
{
    const dm_conv2d_grad_args_t *a = (const dm_conv2d_grad_args_t *)args;
    const uint32_t cg = a->in_ch / a->groups, mg = a->out_ch / a->groups;
    const uint32_t oplane = a->out_h * a->out_w, taps = a->k_h * a->k_w;
    const uint32_t mblocks = (mg + 3u) / 4u, cblocks = (cg + 3u) / 4u;
    uint32_t e0, e1;
    if (a->dW != NULL &&
        dm_dw_fast(a->in_ch, a->out_ch, a->groups, a->k_h, a->k_w, a->stride_h, a->stride_w,
                   a->dil_h, a->dil_w, a->pad_top, a->pad_left, a->in_h, a->in_w, a->out_h,
                   a->out_w)) { /* depthwise 3 x 3 (dm_dw_wplane): units g */
        const uint32_t plane = a->in_h * a->in_w;
        const int onto = dm_onto(a->reset_dW, a->acc_dW);
        dm_chunk(a->groups, &e0, &e1);
        for (uint32_t g = e0; g < e1; g++) {
            if (onto) {
                dm_dw_wgrad_onto(a, g);
                continue;
            }
            for (uint32_t n = 0; n < a->batch; n++)
                dm_dw_wplane(a->dY + (n * a->out_ch + g) * plane,
                             a->X + (n * a->in_ch + g) * plane, a->in_h, a->in_w, a->dW + g * 9u,
                             n == 0u && !a->acc_dW);
        }
    } else if (a->dW != NULL && mg == 1u && cg == 1u && a->k_w == 3u && a->stride_w == 1u &&
        a->dil_w == 1u) { /* depthwise, three taps wide: units (g, kh) */
        dm_chunk(a->groups * a->k_h, &e0, &e1);
        for (uint32_t e = e0; e < e1; e++) dm_wgrad_k3(a, e / a->k_h, 0u, e / a->k_h, e % a->k_h);
    } else if (a->dW != NULL) {
        /* units (g, kh, kw, block of 4 input channels, block of 4 output
         * channels): the narrower last blocks of the channels come once
         * every mblocks (cblocks) units, so every core's chunk gets its
         * share of them */
        dm_chunk(a->groups * mblocks * cblocks * taps, &e0, &e1);
        for (uint32_t e = e0; e < e1; e++) {
#if DM_CONV_ZF
            /* the tap fastest: every core's chunk gets the same mix of
             * taps, whose windows (edge rows and columns) differ (tap
             * slowest: 179k to 194k instructions per core, 3x3, 16 x 16
             * channels, 8 cores) */
            const uint32_t t = e % taps, mblk = (e / taps) % mblocks;
            const uint32_t cblk = (e / (taps * mblocks)) % cblocks, g = e / (mblocks * cblocks * taps);
#else
            const uint32_t mblk = e % mblocks, cblk = (e / mblocks) % cblocks;
            const uint32_t t = (e / (mblocks * cblocks)) % taps, g = e / (mblocks * cblocks * taps);
#endif
            const uint32_t kw = t % a->k_w, kh = t / a->k_w;
            const uint32_t m0 = g * mg + 4u * mblk, c0 = 4u * cblk;
            const uint32_t mb = dm_min(4u, mg - 4u * mblk), cb = dm_min(4u, cg - c0);
            if (a->stride_w == 1u)
                dm_wgrad_block(a, m0, mb, c0, cb, g * cg + c0, kh, kw, 1u);
            else
                dm_wgrad_block(a, m0, mb, c0, cb, g * cg + c0, kh, kw, 0u);
        }
    }
    if (a->dB != NULL) {
        dm_chunk(a->out_ch, &e0, &e1);
        for (uint32_t m = e0; m < e1; m++) {
            float acc = a->acc_dB ? a->dB[m] : 0.0f;
            for (uint32_t n = 0; n < a->batch; n++) {
                const float *dy = a->dY + (n * a->out_ch + m) * oplane;
                for (uint32_t i = 0; i < oplane; i++) acc += dy[i];
            }
            a->dB[m] = dm_onto(a->reset_dB, a->acc_dB) ? a->dB[m] + acc : acc;
        }
    }
}
