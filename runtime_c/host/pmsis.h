/* Host emulation of the PMSIS calls that deeploy-mlir's kernels and emitted
 * code use, with the names and signatures of pulp-sdk / gap_sdk PMSIS
 * (rtos/pmsis/pmsis_api and rtos/pulpos), so the same C builds with the host
 * gcc and runs on this machine.
 *
 * Cluster cores run IN TURN, not in parallel: pi_cl_team_fork(n, fn, arg)
 * sets the current core id to 0, 1, ..., n-1 and calls fn(arg) for each, one
 * after another (n = 0 means NUM_CORES). So a barrier cannot be emulated:
 * pi_cl_team_barrier() aborts with a message, and kernels must not use one (a
 * kernel with two phases is two kernels, run by two forks).
 *
 * Outside a fork (fabric controller, or the cluster controller running a
 * task sent by pi_cluster_send_task_to_cl) pi_core_id() is 0 and
 * pi_cl_team_nb_cores() is the team size of the last fork (NUM_CORES before
 * any), as on the hardware: a kernel called without a fork does core 0's
 * chunk only.
 *
 * Allocators are malloc/free; a failure or a negative size aborts with a
 * message naming the size. */
#ifndef DM_HOST_PMSIS_H
#define DM_HOST_PMSIS_H

#include <stddef.h>
#include <stdint.h>

/* Cluster cores of a team; override with -DNUM_CORES=... (the same value for
 * every translation unit). */
#ifndef NUM_CORES
#define NUM_CORES 8
#endif

/* pi_device, pi_cluster_conf, pi_cluster_task, pi_perf_event_e (relative path, as
 * for dm_pmsis_api.h below) */
#include "../include/dm_pmsis_types.h"

/* The calls on cores and teams, the L2 / L1 allocators, the cluster and the
 * performance counters are declared in dm_pmsis_api.h (included below, after
 * the DMA types), as the GVSoC layer declares them. On the host:
 * cluster: a task runs at once, on the cluster controller (core 0).
 * Performance counters: pi_perf_read(PI_PERF_CYCLES) (and
 * PI_PERF_ACTIVE_CYCLES, PI_PERF_INSTR) returns the number of kernel
 * core-invocations (one per core per team fork) counted while the counter
 * was started, since the last pi_perf_reset: deterministic, not time. Built
 * for one RISC-V core (RV32 under QEMU) they read instructions retired
 * (minstret) instead. Other event ids read 0. pi_perf_conf selects nothing. */

/* ---- DMA -----------------------------------------------------------------
 * Two engines, with the calls and types of pulp-sdk / gap_sdk PMSIS:
 *   cluster DMA (mchan), L2 <-> L1: pi_cl_dma_cmd, pi_cl_dma_cmd_2d,
 *     pi_cl_dma_cmd_wait, pi_cl_dma_flush (rtos/pmsis/pmsis_api cl_dma.h);
 *   L3 RAM, L3 <-> L2: pi_ram_* and pi_cl_ram_copy, pi_cl_ram_copy_2d,
 *     pi_cl_ram_copy_wait (pmsis_bsp bsp/ram.h, with bsp/ram/hyperram.h or
 *     bsp/ram/aps25xxxn.h for the device's configuration).
 * Where the SDKs take an address as uint32_t this file says uintptr_t: on the
 * 32-bit targets the two are one type, and 64-bit host pointers survive
 * (emitted code casts pointers with (uintptr_t)). L3 addresses stay uint32_t:
 * they are offsets into the emulated RAM, never 0.
 *
 * Differences from the real runtime that remain: cluster cores run in turn
 * (above); stacks are the host's, not the cluster task's stack_size and
 * slave_stack_size (x86-64 frames are not RV32 ones: tests/test_stacks.py
 * checks the sizes against gcc's RV32 figures instead); L1 and L2 are
 * malloc'ed, without the chip's capacities; a copy lands at its wait, not
 * when the engine would finish; pi_cl_dma_cmd_wait on a command that was
 * already waited for returns, where the board frees its transfer id again.
 *
 * The emulation is what makes DMA bugs visible on the host. Every stop prints
 * one line "dm-host: ..." on stderr, naming the request (DM_REQ_NAME in
 * dm_dma.h), and exits with code 3.
 *  - A copy LANDS AT ITS WAIT: at issue its destination bytes are poisoned
 *    (0xFF: NaN for fp32) and the bytes move when the copy is waited for, so
 *    reading the destination before the wait gives wrong numbers.
 *  - The source is checksummed at issue; if it changed before the copy lands:
 *    stop ("source modified while in flight"). A destination written before
 *    the copy lands: stop ("destination written while in flight").
 *  - Copies in flight at the same time must not touch each other's bytes
 *    (one writing what another reads or writes): stop at the second issue.
 *  - mchan: transfers complete in issue order, so one command may carry
 *    several transfers in flight; pi_cl_dma_cmd_wait(cmd) lands every cluster
 *    DMA transfer issued up to the command's latest, in order. But, as in both
 *    SDKs, every transfer takes one of the DMA's 16 transfer ids until the
 *    wait on its command frees it, and a wait frees only the command's LATEST
 *    transfer id: the ids of earlier transfers issued on a reused command stay
 *    taken until pi_cl_dma_flush(). Issuing with all 16 taken stops (on the
 *    board the core stalls for ever). 1-D sizes must fit 16 bits and 2-D row
 *    lengths 16 bits, 2-D sizes 17 bits (the SDKs truncate them).
 *  - An L3 RAM request holds ONE transfer: issuing on a request that still
 *    has one in flight stops ("... reused while a transfer is in flight").
 *  - Commands and requests have the SDK's sizes (8 and 96 bytes, pulp-sdk on
 *    RV32) and lifetimes. On the board an L3 RAM request belongs to the
 *    fabric controller from its issue to its end (it queues the request's
 *    task and writes its done flag), and a command's transfer id is read
 *    back at its wait: their storage must outlive the transfer (not a local
 *    of a function that returns first, not an object reused meanwhile). The
 *    emulation seals them at issue (a request's 88 runtime bytes get a
 *    pattern) and checks the seal where the transfer lands or is waited
 *    for: a change stops ("... storage changed while its transfer was in
 *    flight"). pi_cl_ram_copy_wait then reads the request's done flag, as
 *    the SDK does: waiting again on a finished request returns at once.
 *  - Waiting with nothing in flight returns at once. A wait on a command or
 *    request that never had a transfer (zero-initialised) STOPS: on the board
 *    an mchan wait then waits for and frees transfer id 0 (another
 *    transfer's, maybe) and an L3 RAM wait never returns. DM_HOST_LENIENT=1
 *    in the environment (any value but empty or "0") makes it a warning
 *    instead, printed once per request, and the program goes on.
 *  - At exit, one line per hop on stderr, always:
 *      dm-host: dma L2->L1 transfers=N bytes=B   (then L1->L2, L3->L2, L2->L3)
 *    counting every copy issued (pi_ram_read/pi_ram_write included), and a
 *    program that exits with a copy in flight fails with code 3.
 *  - Freeing memory (pi_l2_free, pi_cl_l1_free, pi_ram_free) that a copy in
 *    flight reads or writes stops. */
#define DM_HOST_EMULATION 1

typedef enum {
    PI_CL_DMA_DIR_LOC2EXT = 0, /* L1 -> L2 */
    PI_CL_DMA_DIR_EXT2LOC = 1, /* L2 -> L1 */
} pi_cl_dma_dir_e;

/* 8 bytes, as pulp-sdk's on RV32 (int id; struct pi_cl_dma_cmd_s *next) on
 * every build, so frames and static pools weigh what they weigh there. */
typedef struct pi_cl_dma_cmd_s {
    uint32_t id;    /* the latest transfer issued on this command; 0: none */
    uint32_t guard; /* ~id from issue on: a wait checks the command is intact */
} pi_cl_dma_cmd_t;
_Static_assert(sizeof(pi_cl_dma_cmd_t) == 8, "pi_cl_dma_cmd_t: 8 bytes as on pulp-sdk");

/* 1-D: `size` contiguous bytes (size < 2^16). 2-D: `size` bytes (< 2^17) as
 * rows of `length` bytes (< 2^16; the last row may be shorter) that start
 * `stride` bytes apart on the ext (L2) side and follow each other on the loc
 * (L1) side. */
void pi_cl_dma_cmd(uintptr_t ext, uintptr_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd);
void pi_cl_dma_cmd_2d(uintptr_t ext, uintptr_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd);
/* pi_cl_dma_cmd_wait(cmd); pi_cl_dma_flush() lands every cluster-DMA
 * transfer in flight and frees all 16 transfer ids. */

/* The calls declared alike by the GVSoC layer: cores and teams, L2 / L1
 * allocators, cluster, performance counters (see above), DMA waits. The path
 * is relative to this file, so the compiles without runtime/include find it. */
#include "../include/dm_pmsis_api.h"

/* L3 RAM (pi_ram_*, pi_cl_ram_*): in bsp/ram.h, and the RAM configurations
 * in bsp/ram/hyperram.h (pulp-sdk) and bsp/ram/aps25xxxn.h (gap_sdk, GAP9 EVK),
 * as on the SDKs, where pmsis.h does not declare them: emitted code that
 * forgets the include does not build here either. */

/* Host only (see DM_REQ_NAME in dm_dma.h): a name for a command or request in
 * messages. The text is copied (up to 63 characters). */
void dm_host_name_request(const void *req, const char *name);
/* Host only: transfers and bytes per hop so far, out[hop][0] = transfers,
 * out[hop][1] = bytes; hops in order L2->L1, L1->L2, L3->L2, L2->L3. */
void dm_host_dma_stats(uint64_t out[4][2]);
/* Host only: copies issued and not landed yet. */
uint32_t dm_host_dma_in_flight(void);

#endif
