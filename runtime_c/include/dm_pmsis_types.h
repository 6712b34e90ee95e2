/* The PMSIS types that both of deeploy-mlir's PMSIS layers define alike, with
 * pulp-sdk's names and the fields the emitted code sets (rtos/pmsis/pmsis_api):
 * the host emulation (runtime_c/host) and the GVSoC layer (runtime_c/gvsoc).
 * Each layer's pmsis.h includes this file first, then declares its own
 * pi_cl_dma_cmd_t, then dm_pmsis_api.h. Include pmsis.h, not this. */
#ifndef DM_PMSIS_TYPES_H
#define DM_PMSIS_TYPES_H

#include <stddef.h>
#include <stdint.h>

struct pi_device_api;

struct pi_device {
    struct pi_device_api *api;
    void *config;
    void *data;
};

/* The host emulation reads none of these fields. */
struct pi_cluster_conf {
    int id;
    void *heap_start;
    uint32_t heap_size;
    uint32_t cc_stack_size;
};

/* stacks, stack_size and slave_stack_size: the GVSoC layer allocates the
 * cluster stacks from them like PULPOS (the host emulation ignores them).
 * nb_cores: the team size of the task's forks with nb_cores 0; 0: NUM_CORES. */
struct pi_cluster_task {
    void (*entry)(void *);
    void *arg;
    void *stacks;
    uint32_t stack_size;
    uint32_t slave_stack_size;
    int nb_cores;
};

/* Event ids as in pulp-sdk's pmsis chips/default.h (PULP, Siracusa). */
typedef enum {
    PI_PERF_ACTIVE_CYCLES = 0,
    PI_PERF_INSTR = 1,
    PI_PERF_CYCLES = 17,
} pi_perf_event_e;

#endif
