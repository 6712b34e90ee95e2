/* Gemm: parallel over the output rows; every output element sums
 * k = 0..K-1 in order in a float (the blocking below keeps that order).
 *
 * Register blocking: 4 x 4 output elements per step of k, so each loaded
 * element of A' and B' serves four multiply-adds (8 loads for 16 MACs); the
 * edges of a core's rows and of N take the one-element path. Multiply and
 * add stay separate operations (strict C11: no contraction into fused
 * multiply-adds), so every target computes the same bits. */
#include "dm_gemm.h"

typedef struct {
    const float *A, *B;
    uint32_t a_sm, a_sk, b_sk, b_sn, K;
} dm_gemm_view_t;

static float dm_dot(const dm_gemm_view_t *v, uint32_t m, uint32_t n)
{
    const float *ap = v->A + m * v->a_sm, *bp = v->B + n * v->b_sn;
    float acc = 0.0f;
    for (uint32_t k = 0; k < v->K; k++) acc += ap[k * v->a_sk] * bp[k * v->b_sk];
    return acc;
}

static void dm_block4x4(const dm_gemm_view_t *v, uint32_t m, uint32_t n, float acc[4][4])
{
    const float *a0 = v->A + m * v->a_sm, *a1 = a0 + v->a_sm, *a2 = a1 + v->a_sm,
                *a3 = a2 + v->a_sm;
    const float *b0 = v->B + n * v->b_sn, *b1 = b0 + v->b_sn, *b2 = b1 + v->b_sn,
                *b3 = b2 + v->b_sn;
    float c00 = 0.0f, c01 = 0.0f, c02 = 0.0f, c03 = 0.0f, c10 = 0.0f, c11 = 0.0f, c12 = 0.0f,
          c13 = 0.0f, c20 = 0.0f, c21 = 0.0f, c22 = 0.0f, c23 = 0.0f, c30 = 0.0f, c31 = 0.0f,
          c32 = 0.0f, c33 = 0.0f;
    const uint32_t ask = v->a_sk, bsk = v->b_sk;
    for (uint32_t k = 0, ia = 0, ib = 0; k < v->K; k++, ia += ask, ib += bsk) {
        const float x0 = a0[ia], x1 = a1[ia], x2 = a2[ia], x3 = a3[ia];
        const float y0 = b0[ib], y1 = b1[ib], y2 = b2[ib], y3 = b3[ib];
        c00 += x0 * y0; c01 += x0 * y1; c02 += x0 * y2; c03 += x0 * y3;
        c10 += x1 * y0; c11 += x1 * y1; c12 += x1 * y2; c13 += x1 * y3;
        c20 += x2 * y0; c21 += x2 * y1; c22 += x2 * y2; c23 += x2 * y3;
        c30 += x3 * y0; c31 += x3 * y1; c32 += x3 * y2; c33 += x3 * y3;
    }
    acc[0][0] = c00; acc[0][1] = c01; acc[0][2] = c02; acc[0][3] = c03;
    acc[1][0] = c10; acc[1][1] = c11; acc[1][2] = c12; acc[1][3] = c13;
    acc[2][0] = c20; acc[2][1] = c21; acc[2][2] = c22; acc[2][3] = c23;
    acc[3][0] = c30; acc[3][1] = c31; acc[3][2] = c32; acc[3][3] = c33;
}

static void dm_store(const dm_gemm_args_t *a, uint32_t m, uint32_t n, float acc)
{
    float y = a->alpha * acc;
    if (a->C != NULL) y += a->beta * a->C[m * a->c_stride_m + n * a->c_stride_n];
    a->Y[m * a->N + n] = y;
}

void dm_gemm_fp32(void *args)
{
    const dm_gemm_args_t *a = (const dm_gemm_args_t *)args;
    const uint32_t M = a->M, N = a->N, K = a->K;
    uint32_t m0, m1;
    dm_chunk(M, &m0, &m1);
    /* element strides of A'[m,k] and B'[k,n] in storage */
    const dm_gemm_view_t v = {a->A, a->B, a->trans_a ? 1u : K, a->trans_a ? M : 1u,
                              a->trans_b ? 1u : N, a->trans_b ? K : 1u, K};
    uint32_t m = m0;
    for (; m + 4u <= m1; m += 4u) {
        uint32_t n = 0;
        for (; n + 4u <= N; n += 4u) {
            float acc[4][4];
            dm_block4x4(&v, m, n, acc);
            for (uint32_t i = 0; i < 4u; i++)
                for (uint32_t j = 0; j < 4u; j++) dm_store(a, m + i, n + j, acc[i][j]);
        }
        for (; n < N; n++)
            for (uint32_t i = 0; i < 4u; i++) dm_store(a, m + i, n, dm_dot(&v, m + i, n));
    }
    for (; m < m1; m++)
        for (uint32_t n = 0; n < N; n++) dm_store(a, m, n, dm_dot(&v, m, n));
}
