/* Transpose: each core writes a chunk of Y's rows (contiguous), moving the
 * elements as 32-bit words in integer registers (dm_words.h: no float load
 * or store, which the cores' shared FPUs make dearer).
 *
 * The permutation is first reduced: dims of size 1 are dropped and X dims
 * that stay next to each other, in order, in Y are merged (so (0,2,1,3) on
 * 1x64x1x64 is a plain copy, (0,3,1,2) on 1x2x64x32 a 128 x 32 transpose).
 * Then, by what Y's innermost dims read:
 * - one dim left: a contiguous copy, split evenly;
 * - Y's last dim is X's last: rows copied whole (runs of contiguous words);
 * - Y's second-to-last dim is X's last: 2-D transposes (a batch of them),
 *   four Y rows at a time: each step reads four contiguous words of an X
 *   row and writes one word to each of the four Y rows;
 * - otherwise each Y row gathers its elements at X's stride.
 * The rows' X offsets follow an odometer (no division per row). */
#include "dm_transpose.h"
#include "dm_words.h"

/* y[k] = x[k], k < n (dm_words.h's loop, out of line). */
__attribute__((noinline)) static void dm_tr_copy(dm_word_t *y, const dm_word_t *x, uint32_t n)
{
    dm_copy_words(y, x, n);
}

/* y[k] = x[k * step], k < n. */
__attribute__((noinline)) static void dm_tr_gather(dm_word_t *y, const dm_word_t *x, uint32_t n,
                                                   uint32_t step)
{
    dm_word_t *const end4 = y + (n & ~3u), *const end = y + n;
    while (y != end4) {
        const uint32_t a = x[0];
        x += step;
        const uint32_t b = x[0];
        x += step;
        const uint32_t c = x[0];
        x += step;
        const uint32_t d = x[0];
        x += step;
        y[0] = a;
        y[1] = b;
        y[2] = c;
        y[3] = d;
        y += 4;
    }
    for (; y != end; x += step) *y++ = *x;
}

/* Four Y rows of n words, Y row i at y + i * n: y_i[k] = x[k * step + i]. */
__attribute__((noinline)) static void dm_tr_rows4(dm_word_t *y, const dm_word_t *x, uint32_t n,
                                                  uint32_t step)
{
    dm_word_t *y0 = y, *y1 = y + n, *y2 = y1 + n, *y3 = y2 + n;
    dm_word_t *const end4 = y0 + (n & ~3u), *const end = y0 + n;
    while (y0 != end4) { /* a 4 x 4 block: four X rows of four words */
        uint32_t a = x[0], b = x[1], c = x[2], d = x[3];
        x += step;
        __asm__("" : "+r"(x)); /* one pointer walks the rows (no four of them) */
        y0[0] = a;
        y1[0] = b;
        y2[0] = c;
        y3[0] = d;
        a = x[0], b = x[1], c = x[2], d = x[3];
        x += step;
        __asm__("" : "+r"(x));
        y0[1] = a;
        y1[1] = b;
        y2[1] = c;
        y3[1] = d;
        a = x[0], b = x[1], c = x[2], d = x[3];
        x += step;
        __asm__("" : "+r"(x));
        y0[2] = a;
        y1[2] = b;
        y2[2] = c;
        y3[2] = d;
        a = x[0], b = x[1], c = x[2], d = x[3];
        x += step;
        y0[3] = a;
        y1[3] = b;
        y2[3] = c;
        y3[3] = d;
        y0 += 4;
        y1 += 4;
        y2 += 4;
        y3 += 4;
    }
    for (; y0 != end; x += step) {
        *y0++ = x[0];
        *y1++ = x[1];
        *y2++ = x[2];
        *y3++ = x[3];
    }
}

/* y[k] = y[k] + x[k * step], k < n (accumulate-fuse's transpose onto a
 * gradient buffer: buffer + grad, as dm_accumulate_fp32 adds). */
__attribute__((noinline)) static void dm_tr_gather_add(float *y, const float *x, uint32_t n,
                                                       uint32_t step)
{
    if (step == 1u) {
        dm_add_contig(y, y, x, n);
        return;
    }
    for (float *const end = y + n; y != end; x += step, y++) *y = *y + *x;
}

void dm_transpose_fp32(void *args)
{
    const dm_transpose_args_t *a = (const dm_transpose_args_t *)args;
    const dm_word_t *X = (const dm_word_t *)a->X;
    dm_word_t *Y = (dm_word_t *)a->Y;
    /* len[g], xs[g]: Y's reduced dims in Y's order, their size and X stride */
    uint32_t len[DM_TRANSPOSE_MAX_RANK], xs[DM_TRANSPOSE_MAX_RANK], idx[DM_TRANSPOSE_MAX_RANK];
    uint32_t ng = 0, total = 1u;
    for (uint32_t j = 0; j < a->rank; j++) {
        const uint32_t d = a->perm[j];
        total *= a->shape[d];
        if (a->shape[d] == 1u) continue;
        /* X dim d continues the previous group when the kept X dims
         * between them are none: d - 1, d - 2, ... down to it are size 1 */
        if (ng != 0u) {
            uint32_t e = d;
            while (e > 0u && e - 1u != idx[ng - 1u] && a->shape[e - 1u] == 1u) e--;
            if (e > 0u && e - 1u == idx[ng - 1u]) {
                len[ng - 1u] *= a->shape[d];
                idx[ng - 1u] = d; /* the group's last X dim */
                continue;
            }
        }
        len[ng] = a->shape[d];
        idx[ng++] = d;
    }
    if (total == 0u) return;
    /* a group's X stride: the sizes of the X dims after its last one */
    for (uint32_t g = 0; g < ng; g++) {
        uint32_t s = 1u;
        for (uint32_t d = idx[g] + 1u; d < a->rank; d++) s *= a->shape[d];
        xs[g] = s;
    }
    const int add = a->acc_reset != NULL && a->acc_reset[0] == 0u;
    if (ng <= 1u) { /* a copy */
        uint32_t i0, i1;
        dm_chunk(total, &i0, &i1);
        if (i0 >= i1) return;
        if (add)
            dm_add_contig(a->Y + i0, a->Y + i0, a->X + i0, i1 - i0);
        else
            dm_tr_copy(Y + i0, X + i0, i1 - i0);
        return;
    }
    const uint32_t n = len[ng - 1u], step = xs[ng - 1u];
    /* units: Y rows, or groups of four rows of the 2-D transposes */
    const uint32_t by4 = xs[ng - 2u] == 1u;
    const uint32_t outer_dims = by4 ? ng - 2u : ng - 1u;
    const uint32_t inner_rows = by4 ? len[ng - 2u] : 1u; /* Y rows per outer index */
    const uint32_t groups = by4 ? (inner_rows + 3u) / 4u : 1u;
    const uint32_t outer = total / (n * inner_rows);
    uint32_t u0, u1;
    dm_chunk(outer * groups, &u0, &u1);
    if (u0 >= u1) return;
    uint32_t o = u0 / groups, grp = u0 % groups;
    /* X offset of outer index o: an odometer over the outer dims */
    uint32_t off = 0u, rest = o;
    for (uint32_t g = outer_dims; g-- > 0;) {
        idx[g] = rest % len[g];
        rest /= len[g];
        off += idx[g] * xs[g];
    }
    for (uint32_t u = u0; u < u1; u++) {
        if (add) { /* Y rows += gathered X (one row, or a group of four) */
            const uint32_t rows = by4 ? (inner_rows - grp * 4u < 4u ? inner_rows - grp * 4u : 4u)
                                      : 1u;
            const uint32_t row = by4 ? grp * 4u : 0u;
            float *y = a->Y + (by4 ? (o * inner_rows + row) * n : u * n);
            const float *x = a->X + off + row;
            for (uint32_t i = 0; i < rows; i++) dm_tr_gather_add(y + i * n, x + i, n, step);
            if (by4 && ++grp < groups) continue;
            grp = 0;
        } else if (by4) {
            const uint32_t row = grp * 4u, left = inner_rows - row;
            dm_word_t *y = Y + (o * inner_rows + row) * n;
            const dm_word_t *x = X + off + row;
            if (left >= 4u) {
                dm_tr_rows4(y, x, n, step);
            } else {
                for (uint32_t i = 0; i < left; i++) dm_tr_gather(y + i * n, x + i, n, step);
            }
            if (++grp < groups) continue;
            grp = 0;
        } else if (step == 1u) {
            dm_tr_copy(Y + u * n, X + off, n);
        } else {
            dm_tr_gather(Y + u * n, X + off, n, step);
        }
        o++;
        for (uint32_t g = outer_dims; g-- > 0;) { /* the next outer index */
            off += xs[g];
            if (++idx[g] < len[g]) break;
            off -= idx[g] * xs[g];
            idx[g] = 0u;
        }
    }
}
