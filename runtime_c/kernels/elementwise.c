/* Elementwise kernels: parallel over the flat output index. Each output
 * element is written after its own inputs are read, so in-place use is safe. */
#include <math.h>

#include "dm_elementwise.h"
#include "dm_words.h"

/* One row of a binary op: y[k] = a[k * sa] op b[k * sb], k < n, the op's
 * loop chosen once (not per element); unrolled by two. */
#define DM_BINARY_ROW(NAME, EXPR)                                                                 \
    DM_INLINE void NAME(float *y, const float *a, const float *b,          \
                                               uint32_t n, uint32_t sa, uint32_t sb)              \
    {                                                                                             \
        float *const end2 = y + (n & ~1u), *const end = y + n;                                    \
        while (y != end2) {                                                                       \
            const float x0 = a[0], z0 = b[0], x1 = a[sa], z1 = b[sb];                             \
            y[0] = (EXPR(x0, z0));                                                                \
            y[1] = (EXPR(x1, z1));                                                                \
            y += 2;                                                                               \
            a += 2u * sa;                                                                         \
            b += 2u * sb;                                                                         \
        }                                                                                         \
        if (y != end) *y = (EXPR(a[0], b[0]));                                                    \
    }
#define DM_ADD(x, z) (x) + (z)
#define DM_SUB(x, z) (x) - (z)
#define DM_MUL(x, z) (x) * (z)
#define DM_DIV(x, z) (x) / (z)
DM_BINARY_ROW(dm_row_add, DM_ADD)
DM_BINARY_ROW(dm_row_sub, DM_SUB)
DM_BINARY_ROW(dm_row_mul, DM_MUL)
DM_BINARY_ROW(dm_row_div, DM_DIV)

/* y[k] = a[k] + b[k], k < n, contiguous (dm_words.h; the strides are 1). */
DM_INLINE void dm_row_add_contig(float *y, const float *a, const float *b, uint32_t n, uint32_t sa,
                                 uint32_t sb)
{
    (void)sa;
    (void)sb;
    dm_add_contig(y, a, b, n);
}

/* Dims of size 1 are dropped and neighbours merged where A's and B's strides
 * allow (Y is contiguous), so that a row (the innermost dim) is as long as
 * it can be; this core's flat range then runs row by row, the rows' offsets
 * from an odometer over the outer dims. */
__attribute__((noinline)) static void dm_binary_rows(const dm_binary_args_t *a)
{
    uint32_t shape[4], sa[4], sb[4], rank = 0, total = 1u;
    for (uint32_t d = 0; d < a->rank; d++) {
        const uint32_t n = a->shape[d];
        total *= n;
        if (n == 1u) continue;
        if (rank != 0u && sa[rank - 1u] == a->a_strides[d] * n &&
            sb[rank - 1u] == a->b_strides[d] * n) {
            shape[rank - 1u] *= n; /* the outer dim steps over this one whole */
            sa[rank - 1u] = a->a_strides[d];
            sb[rank - 1u] = a->b_strides[d];
            continue;
        }
        shape[rank] = n;
        sa[rank] = a->a_strides[d];
        sb[rank] = a->b_strides[d];
        rank++;
    }
    if (rank == 0u) { /* one element (or none) */
        shape[0] = total;
        sa[0] = sb[0] = 0u;
        rank = 1u;
    }
    uint32_t i0, i1;
    dm_chunk(total, &i0, &i1);
    if (i0 >= i1) return;
    const uint32_t last = rank - 1u, len = shape[last], la = sa[last], lb = sb[last];
    const uint32_t op = a->op, contig = op == DM_BINARY_ADD && la == 1u && lb == 1u;
    /* multi-index of i0 and the matching offsets into A and B */
    uint32_t idx[4] = {0u, 0u, 0u, 0u};
    uint32_t ia = 0u, ib = 0u, rest = i0;
    for (uint32_t d = rank; d-- > 0;) {
        idx[d] = rest % shape[d];
        rest /= shape[d];
        ia += idx[d] * sa[d];
        ib += idx[d] * sb[d];
    }
    for (uint32_t i = i0; i < i1;) {
        uint32_t n = len - idx[last];
        if (n > i1 - i) n = i1 - i;
        /* direct calls (an indirect one would count as unknown stack depth) */
        float *y = a->Y + i;
        const float *pa = a->A + ia, *pb = a->B + ib;
        if (contig) dm_row_add_contig(y, pa, pb, n, la, lb);
        else if (op == DM_BINARY_ADD) dm_row_add(y, pa, pb, n, la, lb);
        else if (op == DM_BINARY_SUB) dm_row_sub(y, pa, pb, n, la, lb);
        else if (op == DM_BINARY_MUL) dm_row_mul(y, pa, pb, n, la, lb);
        else dm_row_div(y, pa, pb, n, la, lb);
        i += n;
        if (i >= i1) break;
        /* the next row: its start in A and B */
        ia -= idx[last] * la;
        ib -= idx[last] * lb;
        idx[last] = 0u;
        for (uint32_t d = last; d-- > 0;) {
            ia += sa[d];
            ib += sb[d];
            if (++idx[d] < shape[d]) break;
            ia -= idx[d] * sa[d];
            ib -= idx[d] * sb[d];
            idx[d] = 0u;
        }
    }
}

/* ReLU on the bits (dm_positive_mask): integer loads, masks and stores, the
 * same bits as x > 0.0f ? x : 0.0f; unrolled by four. */
void dm_relu_fp32(void *args)
{
    const dm_unary_args_t *a = (const dm_unary_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    if (i0 >= i1) return;
    const dm_word_t *x = (const dm_word_t *)a->X + i0;
    dm_word_t *y = (dm_word_t *)a->Y + i0;
    dm_word_t *const end4 = y + ((i1 - i0) & ~3u), *const end = y + (i1 - i0);
    while (y != end4) {
        const uint32_t b0 = x[0], b1 = x[1], b2 = x[2], b3 = x[3];
        y[0] = b0 & dm_positive_mask(b0);
        y[1] = b1 & dm_positive_mask(b1);
        y[2] = b2 & dm_positive_mask(b2);
        y[3] = b3 & dm_positive_mask(b3);
        y += 4;
        x += 4;
    }
    for (; y != end; x++) *y++ = *x & dm_positive_mask(*x);
}

/* dX = dY where X > 0, else +0: on the bits, as dm_relu_fp32. */
void dm_relu_grad_fp32(void *args)
{
    const dm_relu_grad_args_t *a = (const dm_relu_grad_args_t *)args;
    uint32_t i0, i1;
    dm_chunk(a->size, &i0, &i1);
    if (i0 >= i1) return;
    const dm_word_t *x = (const dm_word_t *)a->X + i0, *dy = (const dm_word_t *)a->dY + i0;
    dm_word_t *dx = (dm_word_t *)a->dX + i0;
    dm_word_t *const end4 = dx + ((i1 - i0) & ~3u), *const end = dx + (i1 - i0);
    while (dx != end4) {
        const uint32_t m0 = dm_positive_mask(x[0]), m1 = dm_positive_mask(x[1]);
        const uint32_t m2 = dm_positive_mask(x[2]), m3 = dm_positive_mask(x[3]);
        const uint32_t g0 = dy[0], g1 = dy[1], g2 = dy[2], g3 = dy[3];
        dx[0] = g0 & m0;
        dx[1] = g1 & m1;
        dx[2] = g2 & m2;
        dx[3] = g3 & m3;
        dx += 4;
        dy += 4;
        x += 4;
    }
    for (; dx != end; x++, dy++) *dx++ = *dy & dm_positive_mask(*x);
}

/* powf per element, as before the rows (its library call's stack stays off
 * the rows' path): an odometer (last dim fastest) walks i0..i1-1. */
__attribute__((noinline)) static void dm_binary_pow(const dm_binary_args_t *a)
{
    const uint32_t rank = a->rank;
    uint32_t total = 1u;
    for (uint32_t d = 0; d < rank; d++) total *= a->shape[d];
    uint32_t i0, i1;
    dm_chunk(total, &i0, &i1);
    if (i0 >= i1) return;
    uint32_t idx[4] = {0u, 0u, 0u, 0u};
    uint32_t ia = 0u, ib = 0u, rest = i0;
    for (uint32_t d = rank; d-- > 0;) {
        idx[d] = rest % a->shape[d];
        rest /= a->shape[d];
        ia += idx[d] * a->a_strides[d];
        ib += idx[d] * a->b_strides[d];
    }
    for (uint32_t i = i0; i < i1; i++) {
        a->Y[i] = powf(a->A[ia], a->B[ib]);
        for (uint32_t d = rank; d-- > 0;) {
            ia += a->a_strides[d];
            ib += a->b_strides[d];
            if (++idx[d] < a->shape[d]) break;
            ia -= idx[d] * a->a_strides[d];
            ib -= idx[d] * a->b_strides[d];
            idx[d] = 0u;
        }
    }
}

void dm_binary_fp32(void *args)
{
    const dm_binary_args_t *a = (const dm_binary_args_t *)args;
    if (a->op == DM_BINARY_POW) {
        dm_binary_pow(a);
    } else {
        dm_binary_rows(a);
    }
}
