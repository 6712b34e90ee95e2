/* deeploy-mlir runtime, internal to the kernels (dm_kernels.h does not
 * include it): float data moved or tested as its 32-bit pattern in integer
 * registers. A transpose, a copy, a zero fill or a ReLU needs no float
 * operation, and on the PULP cluster, whose cores share their FPUs in pairs,
 * a float load or store costs more than an integer one (README, "Cycles on
 * GVSoC siracusa"). dm_word_t may alias any object (gcc's may_alias), so
 * reading floats through it is not undefined. */
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

#endif
