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

struct pi_device_api;

struct pi_device {
    struct pi_device_api *api;
    void *config;
    void *data;
};

/* Fields the emitted code may set; the emulation reads none of them. */
struct pi_cluster_conf {
    int id;
    void *heap_start;
    uint32_t heap_size;
    uint32_t cc_stack_size;
};

struct pi_cluster_task {
    void (*entry)(void *);
    void *arg;
    void *stacks;
    uint32_t stack_size;
    uint32_t slave_stack_size;
    int nb_cores; /* team size for the task's forks; 0: NUM_CORES */
};

/* Event ids as in pulp-sdk's pmsis chips/default.h (PULP, Siracusa). */
typedef enum {
    PI_PERF_ACTIVE_CYCLES = 0,
    PI_PERF_INSTR = 1,
    PI_PERF_CYCLES = 17,
} pi_perf_event_e;

/* cores and teams */
uint32_t pi_core_id(void);
uint32_t pi_cluster_id(void);
int pi_cl_team_nb_cores(void);
void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg);
void pi_cl_team_barrier(void);

/* memory */
void *pi_l2_malloc(int size);
void pi_l2_free(void *chunk, int size);
void *pi_cl_l1_malloc(struct pi_device *device, uint32_t size);
void pi_cl_l1_free(struct pi_device *device, void *chunk, int size);

/* cluster: a task runs at once, on the cluster controller (core 0) */
void pi_cluster_conf_init(struct pi_cluster_conf *conf);
void pi_open_from_conf(struct pi_device *device, void *conf);
int pi_cluster_open(struct pi_device *device);
int pi_cluster_close(struct pi_device *device);
struct pi_cluster_task *pi_cluster_task(struct pi_cluster_task *task, void (*entry)(void *),
                                        void *arg);
int pi_cluster_send_task_to_cl(struct pi_device *device, struct pi_cluster_task *task);

/* Performance counters. On the host, pi_perf_read(PI_PERF_CYCLES) (and
 * PI_PERF_ACTIVE_CYCLES, PI_PERF_INSTR) returns the number of kernel
 * core-invocations (one per core per team fork) counted while the counter
 * was started, since the last pi_perf_reset: deterministic, not time. Built
 * for one RISC-V core (RV32 under QEMU) they read instructions retired
 * (minstret) instead. Other event ids read 0. pi_perf_conf selects nothing. */
void pi_perf_conf(unsigned events);
void pi_perf_reset(void);
void pi_perf_start(void);
void pi_perf_stop(void);
unsigned int pi_perf_read(int id);

/* ---- DMA -----------------------------------------------------------------
 * The emulation is what makes DMA bugs visible on the host:
 *  - a copy LANDS AT ITS WAIT: at issue its destination bytes are poisoned
 *    (0xFF: NaN for fp32) and the bytes move when the copy is waited for, so
 *    reading the destination before the wait gives wrong numbers;
 *  - the source is checksummed at issue; if it changed before the copy landed
 *    the program stops, naming the request ("source modified while in flight");
 *  - a cluster-DMA command (mchan) may carry several transfers in flight: they
 *    complete in order, and waiting on the command lands every transfer issued
 *    up to its latest one;
 *  - an L3 RAM request holds ONE transfer: issuing on a request that still
 *    has one in flight stops the program, naming the request;
 *  - at exit, one line per hop on stderr:
 *      dm-host: dma L2->L1 transfers=N bytes=B   (and L1->L2, L3->L2, L2->L3)
 *    and a program that exits with transfers in flight fails (exit code 3).
 * Stops print one line on stderr and exit with code 3.
 * Addresses are uintptr_t here where the SDKs say uint32_t: on the 32-bit
 * targets the two are one type, and 64-bit host pointers survive. */
#define DM_HOST_EMULATION 1

typedef enum {
    PI_CL_DMA_DIR_LOC2EXT = 0,
    PI_CL_DMA_DIR_EXT2LOC = 1,
} pi_cl_dma_dir_e;

typedef struct pi_cl_dma_cmd_s {
    uint32_t id; /* the latest transfer issued on this command */
} pi_cl_dma_cmd_t;

/* 1-D: size contiguous bytes. 2-D: size bytes as rows of `length` bytes,
 * `stride` bytes apart on the ext (L2) side, contiguous on the loc (L1) side. */
void pi_cl_dma_cmd(uintptr_t ext, uintptr_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd);
void pi_cl_dma_cmd_2d(uintptr_t ext, uintptr_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd);
void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd);

/* L3 RAM (HyperRAM / OctoSPI RAM): addresses are uint32_t offsets into the
 * emulated RAM, never 0. */
struct pi_default_ram_conf {
    int ram_start;
    int ram_size;
};

typedef struct pi_cl_ram_req_s {
    uint32_t id; /* 0: idle */
} pi_cl_ram_req_t;

void pi_default_ram_conf_init(struct pi_default_ram_conf *conf);
int pi_ram_open(struct pi_device *device);
void pi_ram_close(struct pi_device *device);
int pi_ram_alloc(struct pi_device *device, uint32_t *addr, uint32_t size);
int pi_ram_free(struct pi_device *device, uint32_t addr, uint32_t size);
void pi_ram_read(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size);
void pi_ram_write(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size);
/* ext2loc = 1: L3 -> L2; 0: L2 -> L3. 2-D: rows of `length` bytes, `stride`
 * bytes apart in L3, contiguous in L2. */
void pi_cl_ram_copy(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                    int ext2loc, pi_cl_ram_req_t *req);
void pi_cl_ram_copy_2d(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                       uint32_t stride, uint32_t length, int ext2loc, pi_cl_ram_req_t *req);
void pi_cl_ram_copy_wait(pi_cl_ram_req_t *req);

/* Host only (see DM_REQ_NAME in dm_dma.h): a name for a request in messages. */
void dm_host_name_request(const void *req, const char *name);
/* Host only: bytes and transfers per hop so far, [hop][0 = transfers, 1 = bytes],
 * hops L2->L1, L1->L2, L3->L2, L2->L3. */
void dm_host_dma_stats(uint64_t out[4][2]);

#endif
