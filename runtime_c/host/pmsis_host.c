/* Host emulation of PMSIS: see pmsis.h. */
#include "pmsis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t dm_current_core = 0u;
static int dm_team_cores = NUM_CORES;
static int dm_in_fork = 0;
static unsigned int dm_perf_count = 0u;
static int dm_perf_running = 0;
/* pi_cluster_open points device->data here; pi_cluster_close clears it */
static int dm_cluster_is_open;

static void dm_fatal(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    abort();
}

uint32_t pi_core_id(void) { return dm_current_core; }

uint32_t pi_cluster_id(void) { return 0u; }

int pi_cl_team_nb_cores(void) { return dm_team_cores; }

void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg)
{
    if (nb_cores < 0 || nb_cores > NUM_CORES) {
        fprintf(stderr, "pi_cl_team_fork: %d cores requested, the cluster has %d (NUM_CORES)\n",
                nb_cores, NUM_CORES);
        abort();
    }
    if (dm_in_fork) dm_fatal("pi_cl_team_fork: a team member cannot fork a team (nested fork)");
    const int n = nb_cores > 0 ? nb_cores : NUM_CORES;
    dm_team_cores = n;
    dm_in_fork = 1;
    for (int id = 0; id < n; id++) {
        dm_current_core = (uint32_t)id;
        entry(arg);
        if (dm_perf_running) dm_perf_count++;
    }
    dm_in_fork = 0;
    dm_current_core = 0u;
}

void pi_cl_team_barrier(void)
{
    dm_fatal("pi_cl_team_barrier: kernels must not use barriers under the host emulation; "
             "split the kernel into two forks");
}

static void *dm_alloc(const char *who, long long size)
{
    if (size < 0) {
        fprintf(stderr, "%s: invalid size %lld bytes\n", who, size);
        abort();
    }
    /* a zero-sized request still gets a distinct pointer */
    void *p = malloc(size > 0 ? (size_t)size : 1u);
    if (p == NULL) {
        fprintf(stderr, "%s: cannot allocate %lld bytes\n", who, size);
        abort();
    }
    return p;
}

void *pi_l2_malloc(int size) { return dm_alloc("pi_l2_malloc", size); }

void pi_l2_free(void *chunk, int size)
{
    (void)size;
    free(chunk);
}

void *pi_cl_l1_malloc(struct pi_device *device, uint32_t size)
{
    (void)device;
    return dm_alloc("pi_cl_l1_malloc", (long long)size);
}

void pi_cl_l1_free(struct pi_device *device, void *chunk, int size)
{
    (void)device;
    (void)size;
    free(chunk);
}

void pi_cluster_conf_init(struct pi_cluster_conf *conf)
{
    memset(conf, 0, sizeof(*conf));
}

void pi_open_from_conf(struct pi_device *device, void *conf)
{
    device->api = NULL;
    device->config = conf;
    device->data = NULL;
}

int pi_cluster_open(struct pi_device *device)
{
    device->data = &dm_cluster_is_open;
    return 0;
}

int pi_cluster_close(struct pi_device *device)
{
    device->data = NULL;
    return 0;
}

struct pi_cluster_task *pi_cluster_task(struct pi_cluster_task *task, void (*entry)(void *),
                                        void *arg)
{
    memset(task, 0, sizeof(*task));
    task->entry = entry;
    task->arg = arg;
    return task;
}

int pi_cluster_send_task_to_cl(struct pi_device *device, struct pi_cluster_task *task)
{
    if (device == NULL || device->data != &dm_cluster_is_open) {
        dm_fatal("pi_cluster_send_task_to_cl: the cluster device is not open (pi_cluster_open)");
    }
    if (task->nb_cores < 0 || task->nb_cores > NUM_CORES) {
        fprintf(stderr, "pi_cluster_send_task_to_cl: task asks %d cores, the cluster has %d\n",
                task->nb_cores, NUM_CORES);
        abort();
    }
    /* the entry runs on the cluster controller (core 0), which forks teams */
    dm_current_core = 0u;
    dm_team_cores = task->nb_cores > 0 ? task->nb_cores : NUM_CORES;
    task->entry(task->arg);
    return 0;
}

#if defined(__riscv)
/* Built for one RISC-V core (RV32 under QEMU): the counters are instructions
 * retired (minstret), accumulated between pi_perf_start and pi_perf_stop. */
static unsigned int dm_instret(void)
{
    unsigned int v;
    __asm__ volatile("csrr %0, minstret" : "=r"(v));
    return v;
}
static unsigned int dm_perf_acc = 0u, dm_perf_t0 = 0u;
#endif

void pi_perf_conf(unsigned events) { (void)events; }

void pi_perf_reset(void)
{
    dm_perf_count = 0u;
#if defined(__riscv)
    dm_perf_acc = 0u;
    dm_perf_t0 = dm_instret();
#endif
}

void pi_perf_start(void)
{
    dm_perf_running = 1;
#if defined(__riscv)
    dm_perf_t0 = dm_instret();
#endif
}

void pi_perf_stop(void)
{
#if defined(__riscv)
    if (dm_perf_running) dm_perf_acc += dm_instret() - dm_perf_t0;
#endif
    dm_perf_running = 0;
}

unsigned int pi_perf_read(int id)
{
    switch (id) {
    case PI_PERF_CYCLES:
    case PI_PERF_ACTIVE_CYCLES:
    case PI_PERF_INSTR:
#if defined(__riscv)
        return dm_perf_acc;
#else
        return dm_perf_count;
#endif
    default: return 0u;
    }
}
