/* deeploy-mlir runtime: what every kernel family shares.
 *
 * Every kernel is `void dm_<name>(void *args)` taking a pointer to its args
 * struct. It is run by each core of a team fork
 * (pi_cl_team_fork(NUM_CORES, dm_<name>, &args)) and splits its OUTER loop
 * into pi_cl_team_nb_cores() chunks by pi_core_id() (dm_chunk below).
 * Kernels use no barrier, no global mutable state, no malloc and no printf:
 * an operation with two phases is two kernels, run by two forks.
 * Tensors are row-major and contiguous unless a struct says otherwise; sizes
 * are uint32_t and count elements unless they are called `bytes`.
 *
 * The comment above an args struct is the kernels' specification, in one
 * shape the headers share: the kernels that take the struct, in the order
 * their forks run (a "two-phase" struct: both phases take it, the first
 * writing what the second reads); for each, the loop its cores split
 * ("parallel over rows": dm_chunk of that loop) and its float operations in
 * their order (the tests rebuild them in numpy and ask for the same bits);
 * "Y may alias X": the only in-place use allowed. */
#ifndef DM_COMMON_H
#define DM_COMMON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "pmsis.h"

/* The kernels' small helpers (the register tiles of gemm and conv, the row
 * loops of dm_rows.h): inlined at every optimization level, so a helper
 * costs nothing over the loop it names. */
#define DM_INLINE static inline __attribute__((always_inline))

/* One fused multiply-add, acc = fmaf(x, y, acc), and one float load, v = *p,
 * as the register tiles issue them. On RV32F (GVSoC, the SDK, QEMU) each is
 * one volatile instruction (fmadd.s, flw), so gcc keeps them in the order
 * the kernel writes them: the tiles interleave the loads of the next step
 * between the multiply-adds of this one. The cluster's cores share their
 * FPUs in pairs; a core that issues its loads in a burst leaves the FPU idle
 * while its partner, which runs the same code in step, does the same, so the
 * loads go between the multiply-adds (measured: 71% of the FMA ceiling with
 * bursts, see README). fmadd.s with the dynamic rounding mode is what fmaf
 * compiles to, so the bits are those of the C fallback (the host). */
#if defined(__riscv) && defined(__riscv_flen) && !defined(__riscv_zfinx) && !defined(DM_NO_ASM_FMA)
#define DM_FMA(acc, x, y) __asm__ volatile("fmadd.s %0, %1, %2, %0" : "+f"(acc) : "f"(x), "f"(y))
#define DM_LDF(v, p) __asm__ volatile("flw %0, %1" : "=f"(v) : "m"(*(p)))
#elif defined(__riscv) && defined(__riscv_zfinx) && !defined(DM_NO_ASM_FMA)
/* Zfinx (the Siracusa cluster cores, pulp-sdk's -march=rv32imc_zfinx_xpulpv3,
 * built here with clang-19): floats live in the x registers, so the same
 * fmadd.s takes x registers ("r") and a float is loaded with lw. */
#define DM_FMA(acc, x, y) __asm__ volatile("fmadd.s %0, %1, %2, %0" : "+r"(acc) : "r"(x), "r"(y))
#define DM_LDF(v, p) __asm__ volatile("lw %0, %1" : "=r"(v) : "m"(*(p)))
#else
#define DM_FMA(acc, x, y) ((acc) = fmaf((x), (y), (acc)))
#define DM_LDF(v, p) ((v) = *(p))
#endif

/* [*start, *end) is this core's chunk of `total` items:
 * chunk = ceil(total / cores), start = id * chunk, end = min(start + chunk, total).
 * Cores past the end get an empty range. */
static inline void dm_chunk(uint32_t total, uint32_t *start, uint32_t *end)
{
    uint32_t cores = (uint32_t)pi_cl_team_nb_cores();
    uint32_t id = (uint32_t)pi_core_id();
    uint32_t chunk = (total + cores - 1u) / cores;
    uint32_t s = id * chunk;
    if (s > total) s = total;
    *start = s;
    *end = total - s > chunk ? s + chunk : total;
}

#endif
