/* deeploy-mlir runtime, internal to the kernels (dm_kernels.h does not
 * include it): float data moved or tested as its 32-bit pattern in integer
 * registers. A transpose, a copy, a zero fill or a ReLU needs no float
 * operation, and on the PULP cluster, whose cores share their FPUs in pairs,
 * a float load or store costs more than an integer one (README, "Cycles on
 * GVSoC siracusa"). dm_word_t may alias any object (gcc's may_alias), so
 * reading floats through it is not undefined. Also the contiguous float add
 * the binary and accumulate kernels share. */
#ifndef DM_WORDS_H
#define DM_WORDS_H

#include "dm_common.h"

typedef uint32_t __attribute__((may_alias)) dm_word_t;

/* The bits of ReLU's max(x, 0) (x > 0 ? x : +0) from x's bits b: x > 0
 * exactly when b - 1 < 0x7f800000 as unsigned (+0 gives 0xffffffff, the
 * negatives and -0 0x7fffffff and up, +inf 0x7f7fffff, the NaNs above
 * 0x7f800000). The mask is all ones when x > 0, else zero. */
DM_INLINE uint32_t dm_positive_mask(uint32_t b)
{
    return 0u - (uint32_t)(b - 1u < 0x7f800000u);
}

/* y[k] = max(y[k], 0), k < n, in place on the bits (dm_positive_mask):
 * the ReLU a kernel applies to what it stored (a convolution with `relu`);
 * the bits of dm_relu_fp32. Unrolled by four with the loads first. */
DM_INLINE void dm_relu_words(dm_word_t *y, uint32_t n)
{
    dm_word_t *const end4 = y + (n & ~3u), *const end = y + n;
    while (y != end4) {
        const uint32_t b0 = y[0], b1 = y[1], b2 = y[2], b3 = y[3];
        y[0] = b0 & dm_positive_mask(b0);
        y[1] = b1 & dm_positive_mask(b1);
        y[2] = b2 & dm_positive_mask(b2);
        y[3] = b3 & dm_positive_mask(b3);
        y += 4;
    }
    for (; y != end; y++) *y &= dm_positive_mask(*y);
}

/* y[k] = x[k], k < n, as words, unrolled by four with the loads first (the
 * asm keeps gcc from turning the loop into a memcpy call: a library call,
 * a deeper stack and picolibc's byte loops). */
DM_INLINE void dm_copy_words(dm_word_t *y, const dm_word_t *x, uint32_t n)
{
    dm_word_t *const end4 = y + (n & ~3u), *const end = y + n;
    while (y != end4) {
        const uint32_t a = x[0], b = x[1], c = x[2], d = x[3];
        __asm__ volatile("" : "+r"(y));
        y[0] = a;
        y[1] = b;
        y[2] = c;
        y[3] = d;
        y += 4;
        x += 4;
    }
    while (y != end) *y++ = *x++;
}

/* y[k] = a[k] + b[k], k < n, contiguous (the binary kernel's add and
 * accumulate's sum): unrolled by four, the loads first; y may be a or b. */
DM_INLINE void dm_add_contig(float *y, const float *a, const float *b, uint32_t n)
{
    float *const end4 = y + (n & ~3u), *const end = y + n;
    while (y != end4) {
        const float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
        const float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
        y[0] = a0 + b0;
        y[1] = a1 + b1;
        y[2] = a2 + b2;
        y[3] = a3 + b3;
        y += 4;
        a += 4;
        b += 4;
    }
    while (y != end) *y++ = *a++ + *b++;
}

#endif
