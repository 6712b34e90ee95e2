/* deeploy-mlir's PMSIS layer for GVSoC (pulp-open, siracusa): the PMSIS calls
 * that the kernels and the emitted code use, with pulp-sdk's names and
 * signatures (rtos/pmsis/pmsis_api), implemented in pmsis_gvsoc.c over
 * pulp-runtime (crt0, link script, event unit and mchan helpers).
 *
 * - pi_cluster_open boots the 8 cluster cores once; core 0 (the cluster
 *   controller) runs each task sent by pi_cluster_send_task_to_cl, cores 1-7
 *   wait in a dispatch loop until pi_cl_team_fork wakes them (software event)
 *   and meet core 0 at the event unit's hardware barrier when done.
 * - the task's code runs on the task's stacks, as in PULPOS: stack_size bytes
 *   for core 0 and slave_stack_size for each other core (0: PULPOS' 0x800
 *   and 0x400), taken from the L1 heap when the task is sent (-1 when they
 *   do not fit). The stacks are painted first; a task that wrote a stack
 *   down to its last word stops the program with a `dm-gvsoc:` line.
 * - pi_cl_dma_*: the cluster DMA (mchan) as PULPOS drives it: one of the 16
 *   transfer counters per command, freed by the wait on it; flush waits for
 *   every transfer. A 1-D size must fit 16 bits, a 2-D size 17 bits and a
 *   2-D row length and stride 16 bits: larger values stop the program with a
 *   message (PULPOS truncates them silently).
 * - pi_l2_malloc / pi_cl_l1_malloc: first-fit allocators over the heaps the
 *   link script leaves in L2 and L1 (the cores' small boot stacks, for the
 *   dispatch loop, are taken from the top of L1 first); NULL when the
 *   request does not fit.
 * - pi_perf_*: PI_PERF_CYCLES (and PI_PERF_ACTIVE_CYCLES) count mcycle
 *   cycles between start and stop on the calling core.
 * The L3 RAM API (bsp/ram.h) is ram_gvsoc.c, on the boards' HyperRAM. */
#ifndef DM_GVSOC_PMSIS_H
#define DM_GVSOC_PMSIS_H

#include <stddef.h>
#include <stdint.h>

#ifndef NUM_CORES
#define NUM_CORES 8
#endif

/* pi_device, pi_cluster_conf, pi_cluster_task, pi_perf_event_e (relative path, as
 * for dm_pmsis_api.h below) */
#include "../include/dm_pmsis_types.h"

/* cluster DMA (mchan), L2 <-> L1 */
typedef enum {
    PI_CL_DMA_DIR_LOC2EXT = 0, /* L1 -> L2 */
    PI_CL_DMA_DIR_EXT2LOC = 1, /* L2 -> L1 */
} pi_cl_dma_dir_e;

typedef struct pi_cl_dma_cmd_s {
    int id; /* the transfer counter of the latest transfer issued on it */
    struct pi_cl_dma_cmd_s *next;
} pi_cl_dma_cmd_t;

void pi_cl_dma_cmd(uint32_t ext, uint32_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd);
void pi_cl_dma_cmd_2d(uint32_t ext, uint32_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd);

/* The calls declared alike by the host emulation: cores and teams, L2 / L1
 * allocators, cluster, performance counters (mcycle), DMA waits. The path is
 * relative to this file, so the compiles without runtime/include find it. */
#include "../include/dm_pmsis_api.h"

/* deeploy-mlir only: defined by this layer (tests tell it from the host
 * emulation's DM_HOST_EMULATION). */
#define DM_GVSOC 1

/* deeploy-mlir only, for tests: busy-wait loop iterations each cluster core
 * spins after a fork wakes it and before it runs the entry (0 by default), to
 * start a team's cores in a chosen order. */
extern volatile uint32_t dm_gvsoc_fork_delay[8];

/* deeploy-mlir only: the bytes of its stack core `core` (0: the cluster
 * controller) used during the last task, measured from the paint
 * pi_cluster_send_task_to_cl puts on the task's stacks. */
uint32_t dm_gvsoc_stack_used(int core);

/* deeploy-mlir only: the bytes left in the L2 and L1 heaps (largest free block). */
uint32_t dm_gvsoc_l2_largest_free(void);
uint32_t dm_gvsoc_l1_largest_free(void);

#endif
