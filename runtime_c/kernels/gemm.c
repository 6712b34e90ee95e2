/* Gemm: parallel over 4 x 4 tiles of the output (dm_chunk of the tiles by
 * pi_core_id(), row-major), or over rows (M or N below 4).
 *
 * Every output sums k = 0..K-1 in order in a float with one fused
 * multiply-add per term, acc = fmaf(A'[m,k], B'[k,n], acc) from acc = 0, and
 * then y = alpha * acc (+ beta * C: a separate multiply and add). A K tile
 * goes on from Y's partial sum (acc_Y) and a K tile before the last stores
 * its raw sum (partial), so tiles of K in order give the whole product's bits. fmaf rounds
 * once, as IEEE 754 defines it, so every target computes the same bits
 * (RV32F's fmadd.s, the host's libm fmaf) whatever the blocking and the team
 * size: the edge paths below sum in the same order as the blocked body.
 *
 * Register blocking: a micro-tile of MR x NR outputs (4 x 4 in the body,
 * 4 x 1 and 1 x 4 and 1 x 1 at the edges of a core's rows and of N) stays in
 * registers while k runs innermost, so each loaded element of A' or B' serves
 * NR or MR multiply-adds (8 loads for 16 in the body). The four transpose
 * forms are four instances of one inline body in which the storage layout is
 * a compile-time constant: an operand stored with k contiguous is read
 * through one pointer per row of A' (column of B') and the k loop is unrolled
 * (immediate offsets, one increment per pointer per KU steps); an operand
 * stored with m (n) contiguous is read through one pointer at immediate
 * offsets, moved by one row per step of k. */
#include <math.h>

#include "dm_gemm.h"

/* DM_GEMM_NR: columns of the body's micro-tile. 4 (4 x 4: 16 sums and 8
 * operands, 24 float registers) where floats have registers of their own
 * (RV32F, the host); 2 on Zfinx, where floats share the 31 x registers with
 * the tile's pointers: a 4 x 4 tile there spills (clang-19: 617 stores to
 * the stack in this file against 80 with f registers), 4 x 2 (8 sums, 6
 * operands) fits. The sums are the same bits either way (k in order). */
#ifndef DM_GEMM_NR
#if defined(__riscv_zfinx)
#define DM_GEMM_NR 2u
#else
#define DM_GEMM_NR 4u
#endif
#endif

/* DM_GEMM_NR_AB, DM_GEMM_NR_ATB: the columns of the micro-tile of A B and
 * of A^T B, whose B is strided (one pointer, moved by one row per step of
 * k, the tile's columns at immediate offsets): 3 on Zfinx, with k unrolled
 * by 1 (4 x 3: 12 sums, 7 operands and the pointers fit the x registers;
 * A^T B: 23 instructions per 12 multiply-adds against 35 per 16 for 4 x 2
 * by 2; GVSoC Zfinx, 8 cores, M64 N128 K64: A B 202,321 -> 191,265
 * cycles, A^T B 183,729 -> 172,317; A B^T and A^T B^T measured no faster with
 * 4 x 3). Undefined elsewhere: every form DM_GEMM_NR. */
#if defined(__riscv_zfinx)
#ifndef DM_GEMM_NR_AB
#define DM_GEMM_NR_AB 3u
#endif
#ifndef DM_GEMM_NR_ATB
#define DM_GEMM_NR_ATB 3u
#endif
#endif

/* DM_GEMM_KU_AB: steps of k per iteration for A B (A k-contiguous, B
 * strided). 2 where floats have registers of their own; 1 on Zfinx with
 * the 4 x 3 tile (by 2 and by 4 it spills; with 4 x 2, by 4 was best: by
 * 2 clang-19 spent 27 instructions beside 16 multiply-adds, stride
 * reloads from the stack, pointer copies, and by 4 43 beside 32). The
 * order of k is the same, so are the bits. */
#ifndef DM_GEMM_KU_AB
#if defined(__riscv_zfinx)
#define DM_GEMM_KU_AB 1u
#else
#define DM_GEMM_KU_AB 2u
#endif
#endif

/* DM_GEMM_KU_ATB, DM_GEMM_KU_ATBT: the same for A^T B (both strided) and
 * A^T B^T: 1 and 2, and 1 (the 4 x 3 tile: by 2 it spills) and 4 on Zfinx
 * (A^T B^T 184k -> 177k cycles at M64 N128 K64, 8 cores). */
#if defined(__riscv_zfinx)
#ifndef DM_GEMM_KU_ATB
#define DM_GEMM_KU_ATB 1u
#endif
#ifndef DM_GEMM_KU_ATBT
#define DM_GEMM_KU_ATBT 4u
#endif
#else
#ifndef DM_GEMM_KU_ATB
#define DM_GEMM_KU_ATB 1u
#endif
#ifndef DM_GEMM_KU_ATBT
#define DM_GEMM_KU_ATBT 2u
#endif
#endif

/* A'[m,k] = A[m * a_sm + k * a_sk], B'[k,n] = B[k * b_sk + n * b_sn], where
 * a_rows says a_sk == 1 (else a_sm == 1) and b_cols says b_sk == 1 (else
 * b_sn == 1); ku: steps of k per iteration of the k loop (1, 2 or 4). Each
 * instance gets a_rows, b_cols and ku as constants. */
typedef struct {
    const dm_gemm_args_t *args;
    uint32_t a_sm, a_sk, b_sk, b_sn;
    int a_rows, b_cols;
    uint32_t ku;
#if defined(DM_GEMM_NR_AB) || defined(DM_GEMM_NR_ATB)
    uint32_t nr; /* columns of the body's micro-tile (DM_GEMM_NR, DM_GEMM_NR_ATB) */
#endif
} dm_gemm_view_t;

/* The body's micro-tile columns of view v (one value, DM_GEMM_NR, where
 * the forms share it, without DM_GEMM_NR_AB and DM_GEMM_NR_ATB: the F
 * objects stay as they were) and the view's
 * initializer's last member. */
#if defined(DM_GEMM_NR_AB) || defined(DM_GEMM_NR_ATB)
#define DM_VIEW_NR(v) ((v)->nr)
#define DM_NR_INIT(nr) , nr
#ifndef DM_GEMM_NR_AB
#define DM_GEMM_NR_AB DM_GEMM_NR
#endif
#ifndef DM_GEMM_NR_ATB
#define DM_GEMM_NR_ATB DM_GEMM_NR
#endif
#else
#define DM_VIEW_NR(v) DM_GEMM_NR
#define DM_NR_INIT(nr)
#define DM_GEMM_NR_AB DM_GEMM_NR
#define DM_GEMM_NR_ATB DM_GEMM_NR
#endif

/* The operands of step k + u, u relative to the pointers: a k-contiguous
 * operand is read at offset u from its row pointers (moved on by dm_advance),
 * a strided one at offsets 0..3 from its one pointer (moved by one step of k
 * in dm_step). */
DM_INLINE void dm_load(const dm_gemm_view_t *v, const float *pa[4], const float *pb[4],
                       uint32_t u, uint32_t MR, uint32_t NR, float x[4], float y[4])
{
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MR; i++) DM_LDF(x[i], v->a_rows ? pa[i] + u : pa[0] + i);
#pragma GCC unroll 8
    for (uint32_t j = 0; j < NR; j++) DM_LDF(y[j], v->b_cols ? pb[j] + u : pb[0] + j);
}

/* One step of k: c[i][j] += x[i] * y[j] row by row, with (next != 0) the
 * loads of the following step (at offset u + 1) between the multiply-adds:
 * x[i] after row i's last use of it, y[j] after its last use in the last
 * row, and x of the last row at the end. */
DM_INLINE void dm_step(const dm_gemm_view_t *v, const float *pa[4], const float *pb[4],
                       uint32_t u, uint32_t MR, uint32_t NR, float c[4][4], float x[4],
                       float y[4], int next)
{
    if (next && !v->a_rows) pa[0] += v->a_sk;
    if (next && !v->b_cols) pb[0] += v->b_sk;
    const uint32_t un = v->a_rows ? u + 1u : 0u, vn = v->b_cols ? u + 1u : 0u;
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MR; i++) {
#pragma GCC unroll 8
        for (uint32_t j = 0; j < NR; j++) {
            DM_FMA(c[i][j], x[i], y[j]);
            if (next && i + 1u == MR) DM_LDF(y[j], v->b_cols ? pb[j] + vn : pb[0] + j);
        }
        if (next) DM_LDF(x[i], v->a_rows ? pa[i] + un : pa[0] + i);
    }
}

/* The k-contiguous operands move on by `steps` elements. */
DM_INLINE void dm_advance(const dm_gemm_view_t *v, const float *pa[4], const float *pb[4],
                          uint32_t steps, uint32_t MR, uint32_t NR)
{
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MR; i++)
        if (v->a_rows) pa[i] += steps;
#pragma GCC unroll 8
    for (uint32_t j = 0; j < NR; j++)
        if (v->b_cols) pb[j] += steps;
}

/* Y[m+i, n+j] for i < MR, j < NR: the k loop, then the epilogue; rows
 * i < sm and columns j < sn are computed but not stored (a tile moved up or
 * left to stay inside Y: another tile stores them, with the same bits). */
DM_INLINE void dm_tile(const dm_gemm_view_t *v, uint32_t m, uint32_t n, uint32_t MR,
                       uint32_t NR, uint32_t sm, uint32_t sn)
{
    const dm_gemm_args_t *a = v->args;
    const float *pa[4], *pb[4];
    float c[4][4], xv[4], yv[4];
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MR; i++) pa[i] = a->A + (m + i) * v->a_sm;
#pragma GCC unroll 8
    for (uint32_t j = 0; j < NR; j++) pb[j] = a->B + (n + j) * v->b_sn;
    if (a->acc_Y) { /* a later K tile: the sums go on from Y's partial sums */
        const float *yp = a->Y + m * a->N + n;
#pragma GCC unroll 4
        for (uint32_t i = 0; i < MR; i++, yp += a->N)
#pragma GCC unroll 8
            for (uint32_t j = 0; j < NR; j++) c[i][j] = yp[j];
    } else {
#pragma GCC unroll 4
        for (uint32_t i = 0; i < MR; i++)
#pragma GCC unroll 8
            for (uint32_t j = 0; j < NR; j++) c[i][j] = 0.0f;
    }

#define DM_STEP(U, NEXT) dm_step(v, pa, pb, (U), MR, NR, c, xv, yv, (NEXT))
    uint32_t k = a->K; /* steps left, the current one included */
    if (k > 0u) {
        dm_load(v, pa, pb, 0u, MR, NR, xv, yv);
        const uint32_t ku = v->ku;
        if (ku > 1u) {
            /* blocks of ku steps while a step follows the block's last */
            while (k > ku) {
#pragma GCC unroll 4
                for (uint32_t u = 0; u < ku; u++) DM_STEP(u, 1);
                dm_advance(v, pa, pb, ku, MR, NR);
                k -= ku;
            }
        }
        for (; k > 1u; k--) {
            DM_STEP(0u, 1);
            dm_advance(v, pa, pb, 1u, MR, NR);
        }
        DM_STEP(0u, 0);
    }

    /* y = alpha * acc (+ beta * C); a factor of 1 is exact, so alpha = 1
     * skips its multiply; a K tile before the last (partial) stores the raw
     * sums */
    const float alpha = a->alpha;
    const int partial = a->partial != 0u;
    if (!partial && alpha != 1.0f) {
#pragma GCC unroll 4
        for (uint32_t i = 0; i < MR; i++)
#pragma GCC unroll 8
            for (uint32_t j = 0; j < NR; j++) c[i][j] = alpha * c[i][j];
    }
    float *y = a->Y + m * a->N + n;
    const float *cp = a->C;
    if (!partial && cp != NULL) {
        const float beta = a->beta;
        const uint32_t cm = a->c_stride_m;
        cp += m * cm + n * a->c_stride_n;
        if (a->c_stride_n != 0u) { /* [N], [1,N], [M,N]: a row of C per row of Y */
#pragma GCC unroll 4
            for (uint32_t i = 0; i < MR; i++, cp += cm)
#pragma GCC unroll 8
                for (uint32_t j = 0; j < NR; j++) c[i][j] = c[i][j] + beta * cp[j];
        } else { /* [], [M,1]: one value per row of Y */
#pragma GCC unroll 4
            for (uint32_t i = 0; i < MR; i++, cp += cm) {
                const float b = beta * cp[0];
#pragma GCC unroll 8
                for (uint32_t j = 0; j < NR; j++) c[i][j] = c[i][j] + b;
            }
        }
    }
    if (a->reset_Y != NULL && !a->acc_Y && !partial && a->reset_Y[0] == 0u) {
#pragma GCC unroll 4
        for (uint32_t i = 0; i < MR; i++, y += a->N)
#pragma GCC unroll 8
            for (uint32_t j = 0; j < NR; j++)
                if (i >= sm && j >= sn) y[j] = y[j] + c[i][j];
        return;
    }
#pragma GCC unroll 4
    for (uint32_t i = 0; i < MR; i++, y += a->N)
#pragma GCC unroll 8
        for (uint32_t j = 0; j < NR; j++)
            if (i >= sm && j >= sn) y[j] = c[i][j];
}

/* M and N >= 4: the ceil(M / 4) x ceil(N / 4) tiles of 4 x 4, row-major,
 * split evenly over the cores (dm_chunk of the tiles); a last row (column)
 * of tiles that would pass Y's end is moved up (left) to end at it, and
 * stores only the rows (columns) the tile before it did not. Every tile
 * runs the 4 x 4 body: no 1 x 4 or 4 x 1 edge tiles (5 loads per 4
 * multiply-adds instead of 8 per 16), and every core gets the same number
 * of tiles to within one (splitting rows left up to 4 rows more on some
 * cores, and edge rows as 1 x 4 tiles, when M is not a multiple of 32). */
DM_INLINE void dm_tiles(const dm_gemm_view_t *v)
{
    const uint32_t M = v->args->M, N = v->args->N;
    const uint32_t NR = DM_VIEW_NR(v);
    const uint32_t cb = (N + NR - 1u) / NR;
    uint32_t u0, u1;
    dm_chunk(((M + 3u) / 4u) * cb, &u0, &u1);
    uint32_t r = u0 / cb, c = u0 - r * cb;
    for (uint32_t u = u0; u < u1; u++) {
        uint32_t m = 4u * r, n = NR * c, sm = 0, sn = 0;
        if (m + 4u > M) {
            sm = m + 4u - M;
            m = M - 4u;
        }
        if (n + NR > N) {
            sn = n + NR - N;
            n = N - NR;
        }
        dm_tile(v, m, n, 4u, NR, sm, sn);
        if (++c == cb) {
            c = 0;
            r++;
        }
    }
}

/* M a multiple of 4 x cores, or M or N below 4: this core's rows [m0, m1)
 * (dm_chunk of M): 4 x 4 tiles,
 * then 4 x 1 for the last N % 4 columns; the last (m1 - m0) % 4 rows as
 * 1 x 4 and 1 x 1 tiles. */
DM_INLINE void dm_rows(const dm_gemm_view_t *v)
{
    const uint32_t N = v->args->N;
    uint32_t m0, m1;
    dm_chunk(v->args->M, &m0, &m1);
    uint32_t m = m0;
    const uint32_t NR = DM_VIEW_NR(v);
    for (; m + 4u <= m1; m += 4u) {
        uint32_t n = 0;
        for (; n + NR <= N; n += NR) dm_tile(v, m, n, 4u, NR, 0u, 0u);
        for (; n < N; n++) dm_tile(v, m, n, 4u, 1u, 0u, 0u);
    }
    for (; m < m1; m++) {
        uint32_t n = 0;
        for (; n + 4u <= N; n += 4u) dm_tile(v, m, n, 1u, 4u, 0u, 0u);
        for (; n < N; n++) dm_tile(v, m, n, 1u, 1u, 0u, 0u);
    }
}

DM_INLINE void dm_gemm_view(const dm_gemm_view_t *v)
{
    const uint32_t M = v->args->M, N = v->args->N;
    if (M >= 4u && N >= 4u && M % (4u * (uint32_t)pi_cl_team_nb_cores()) != 0u)
        dm_tiles(v);
    else /* every core the same 4-row blocks (or M or N below 4) */
        dm_rows(v);
}

void dm_gemm_fp32(void *args)
{
    const dm_gemm_args_t *a = (const dm_gemm_args_t *)args;
    const uint32_t M = a->M, N = a->N, K = a->K;
    /* unrolling k pays where an operand is k-contiguous (its loads take
     * immediate offsets); by 4 when both are (8 pointers to move) */
    if (!a->trans_a && !a->trans_b) {
        const dm_gemm_view_t v = {a, K, 1u, N, 1u, 1, 0, DM_GEMM_KU_AB DM_NR_INIT(DM_GEMM_NR_AB)};
        dm_gemm_view(&v);
    } else if (!a->trans_a) {
        const dm_gemm_view_t v = {a, K, 1u, 1u, K, 1, 1, 4u DM_NR_INIT(DM_GEMM_NR)};
        dm_gemm_view(&v);
    } else if (!a->trans_b) {
        const dm_gemm_view_t v = {a, 1u, M, N, 1u, 0, 0, DM_GEMM_KU_ATB DM_NR_INIT(DM_GEMM_NR_ATB)};
        dm_gemm_view(&v);
    } else {
        const dm_gemm_view_t v = {a, 1u, M, 1u, K, 0, 1, DM_GEMM_KU_ATBT DM_NR_INIT(DM_GEMM_NR)};
        dm_gemm_view(&v);
    }
}
