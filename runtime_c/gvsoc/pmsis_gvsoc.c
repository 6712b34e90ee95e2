/* deeploy-mlir's PMSIS layer for GVSoC: see pmsis.h. Built with pulp-runtime's
 * headers (pulp.h: hal/eu, hal/dma/mchan, cluster control) and picolibc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pulp.h"

#include "pmsis.h"

/* SW event that wakes cores 1..7 for a fork (events 0-7 are software events) */
#define DM_FORK_EVENT 1
/* barrier 0: all 8 cores (end of a fork); barrier 1: the fork's team */
#define DM_BAR_ALL 0
#define DM_BAR_TEAM 1

#ifndef CLUSTER_STACK_SIZE
#error "CLUSTER_STACK_SIZE must be defined (bytes per cluster core's boot stack)"
#endif
/* CLUSTER_STACK_SIZE is each core's BOOT stack: crt0 gives core i the stack
 * below cluster_stacks + (i + 1) * CLUSTER_STACK_SIZE, and it holds only the
 * dispatch loop (cluster_entry_stub), like PULPOS' stackless loop in
 * pe-eu-v3.S. The code of a task runs on the task's stacks (stack_size,
 * slave_stack_size), taken from the L1 heap when the task is sent. */
/* the word the task's stacks are painted with (overflow check, high-water) */
#define DM_STACK_PAINT 0x5AC3A5C3u

/* ---- output and exit ---------------------------------------------------- */

static int dm_putc(char c, FILE *f)
{
    (void)f;
    *(volatile uint32_t *)(long)(ARCHI_STDOUT_ADDR + STDOUT_PUTC_OFFSET + (hal_core_id() << 3) +
                                 (hal_cluster_id() << 7)) = (uint32_t)(unsigned char)c;
    return (unsigned char)c;
}

static FILE dm_stdout = FDEV_SETUP_STREAM(dm_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdout = &dm_stdout;
FILE *const stderr = &dm_stdout;

/* hooks of pulp-runtime's init.c */
#include "io.h"
int pos_io_start(void) { return 0; }
int pos_io_stop(void) { return 0; }

static void dm_wait_forever(void)
{
    eu_evt_maskClr(0xffffffff);
    eu_evt_wait();
    for (;;) {
    }
}

/* exit() and _exit() end the simulation with `status` (pulp-runtime's crt0
 * calls exit after main). Defined here so that picolibc's exit, which walks
 * .fini_array in a layout pulp-runtime's link script does not follow, is not
 * linked. */
void exit(int status)
{
    apb_soc_status_set((unsigned int)status);
    dm_wait_forever();
    for (;;) {
    }
}

void _exit(int status)
{
    apb_soc_status_set((unsigned int)status);
    dm_wait_forever();
    for (;;) {
    }
}

/* ---- allocators ----------------------------------------------------------
 * First fit over a sorted table of free ranges (kept in L2); frees merge
 * neighbours. Sizes are rounded up to 8 bytes. */
#define DM_HEAP_RANGES 64

typedef struct {
    uint32_t start[DM_HEAP_RANGES];
    uint32_t size[DM_HEAP_RANGES];
    int n;
} dm_heap_t;

static dm_heap_t dm_heap_l2, dm_heap_l1;
static int dm_heaps_ready;

static void dm_heap_init(dm_heap_t *h, uint32_t start, uint32_t end)
{
    start = (start + 7u) & ~7u;
    end &= ~7u;
    h->n = 0;
    if (end > start) {
        h->start[0] = start;
        h->size[0] = end - start;
        h->n = 1;
    }
}

static void *dm_heap_alloc(dm_heap_t *h, uint32_t size)
{
    size = (size + 7u) & ~7u;
    if (size == 0u) size = 8u;
    for (int i = 0; i < h->n; i++) {
        if (h->size[i] >= size) {
            uint32_t p = h->start[i];
            h->start[i] += size;
            h->size[i] -= size;
            if (h->size[i] == 0u) {
                for (int j = i; j + 1 < h->n; j++) {
                    h->start[j] = h->start[j + 1];
                    h->size[j] = h->size[j + 1];
                }
                h->n--;
            }
            return (void *)p;
        }
    }
    return NULL;
}

static void dm_heap_free(dm_heap_t *h, void *chunk, uint32_t size)
{
    uint32_t p = (uint32_t)chunk;
    size = (size + 7u) & ~7u;
    if (chunk == NULL) return;
    if (size == 0u) size = 8u;
    int i = 0;
    while (i < h->n && h->start[i] < p) i++;
    int merge_prev = i > 0 && h->start[i - 1] + h->size[i - 1] == p;
    int merge_next = i < h->n && p + size == h->start[i];
    if (merge_prev && merge_next) {
        h->size[i - 1] += size + h->size[i];
        for (int j = i; j + 1 < h->n; j++) {
            h->start[j] = h->start[j + 1];
            h->size[j] = h->size[j + 1];
        }
        h->n--;
    } else if (merge_prev) {
        h->size[i - 1] += size;
    } else if (merge_next) {
        h->start[i] = p;
        h->size[i] += size;
    } else {
        if (h->n == DM_HEAP_RANGES) return; /* table full: the range is lost */
        for (int j = h->n; j > i; j--) {
            h->start[j] = h->start[j - 1];
            h->size[j] = h->size[j - 1];
        }
        h->start[i] = p;
        h->size[i] = size;
        h->n++;
    }
}

static uint32_t dm_heap_largest(const dm_heap_t *h)
{
    uint32_t m = 0;
    for (int i = 0; i < h->n; i++)
        if (h->size[i] > m) m = h->size[i];
    return m;
}

/* link script symbols (pulp-runtime's link.ld, its memory lengths set for the
 * GVSoC target by gvsoc.mk) */
extern unsigned char __dm_l2_heap_start;
extern unsigned char __l1_heap_start;
extern unsigned char __l1_heap_size;
extern unsigned char __dm_l2_end;

/* L1 (cluster TCDM) pointer of the cluster stacks, read by crt0's pe_start */
L1_DATA char *cluster_stacks;

static void dm_heaps_init(void)
{
    uint32_t l1 = (uint32_t)&__l1_heap_start;
    uint32_t l1_end = l1 + (uint32_t)&__l1_heap_size;
    uint32_t stacks = (l1_end - ARCHI_CLUSTER_NB_PE * CLUSTER_STACK_SIZE) & ~15u;
    cluster_stacks = (char *)stacks;
    dm_heap_init(&dm_heap_l1, l1, stacks);
    dm_heap_init(&dm_heap_l2, (uint32_t)&__dm_l2_heap_start, (uint32_t)&__dm_l2_end);
    dm_heaps_ready = 1;
}

/* pulp-runtime's init.c initialises the allocators through this hook */
void pos_allocs_init(void);
void pos_allocs_init(void) { dm_heaps_init(); }

void *pi_l2_malloc(int size)
{
    if (size < 0) return NULL;
    return dm_heap_alloc(&dm_heap_l2, (uint32_t)size);
}

void pi_l2_free(void *chunk, int size)
{
    if (size >= 0) dm_heap_free(&dm_heap_l2, chunk, (uint32_t)size);
}

void *pi_cl_l1_malloc(struct pi_device *device, uint32_t size)
{
    (void)device;
    return dm_heap_alloc(&dm_heap_l1, size);
}

void pi_cl_l1_free(struct pi_device *device, void *chunk, int size)
{
    (void)device;
    if (size >= 0) dm_heap_free(&dm_heap_l1, chunk, (uint32_t)size);
}

uint32_t dm_gvsoc_l2_largest_free(void) { return dm_heap_largest(&dm_heap_l2); }
uint32_t dm_gvsoc_l1_largest_free(void) { return dm_heap_largest(&dm_heap_l1); }

/* ---- cluster ------------------------------------------------------------- */

/* the task the FC hands to the cluster controller; DM_QUIT stops the cluster */
#define DM_QUIT ((struct pi_cluster_task *)1)
static struct pi_cluster_task *volatile dm_pending;
static volatile int dm_cluster_running;

/* the fork in progress, read by cores 1..7 when woken */
L1_DATA static void (*volatile dm_fork_fn)(void *);
L1_DATA static void *volatile dm_fork_arg;
L1_DATA static volatile int dm_fork_n;
L1_DATA static volatile int dm_fork_quit;
/* the team size pi_cl_team_nb_cores returns (last fork's, NUM_CORES before) */
L1_DATA static volatile int dm_team_n;
L1_DATA static volatile int dm_task_cores;

volatile uint32_t dm_gvsoc_fork_delay[8];

static inline void dm_fork_skew(uint32_t core)
{
    for (uint32_t i = dm_gvsoc_fork_delay[core]; i != 0u; i--) __asm__ __volatile__("nop");
}

/* the cores of a task: nb_cores, 0 for NUM_CORES */
static int dm_cores(const struct pi_cluster_task *t)
{
    int n = t->nb_cores > 0 ? t->nb_cores : NUM_CORES;
    return n > ARCHI_CLUSTER_NB_PE ? ARCHI_CLUSTER_NB_PE : n;
}

void cluster_start(int cid, int (*entry)());
int cluster_wait(int cid);
void cluster_entry_stub(void);

/* the stacks of the task in progress (set by the FC before it hands the task
 * over): the cluster controller's top is dm_stacks + dm_stack_size, core i's
 * (i >= 1) dm_stacks + dm_stack_size + i * dm_slave_stack_size, as PULPOS'
 * pe-eu-v3.S sets them (pos_master_loop_exec_task, pos_set_slave_stack) */
L1_DATA static char *volatile dm_stacks;
L1_DATA static volatile uint32_t dm_stack_size;
L1_DATA static volatile uint32_t dm_slave_stack_size;

/* runs fn(arg) with sp = top, and returns on the caller's stack (the old sp
 * is kept in s0, callee-saved: nothing is stored on the new stack) */
void dm_call_on_stack(void (*fn)(void *), void *arg, char *top);
__asm__(".section .text\n"
        ".global dm_call_on_stack\n"
        ".type dm_call_on_stack, @function\n"
        "dm_call_on_stack:\n"
        "    addi sp, sp, -16\n"
        "    sw ra, 12(sp)\n"
        "    sw s0, 8(sp)\n"
        "    mv s0, sp\n"
        "    mv sp, a2\n"
        "    mv t0, a0\n"
        "    mv a0, a1\n"
        "    jalr t0\n"
        "    mv sp, s0\n"
        "    lw s0, 8(sp)\n"
        "    lw ra, 12(sp)\n"
        "    addi sp, sp, 16\n"
        "    ret\n"
        ".size dm_call_on_stack, .-dm_call_on_stack\n");

void cluster_entry_stub(void)
{
    eu_evt_maskSet((1u << PULP_DISPATCH_EVENT) | (1u << PULP_MUTEX_EVENT) |
                   (1u << PULP_HW_BAR_EVENT));
    uint32_t core = hal_core_id();
    if (core == 0u) {
        eu_bar_setup(eu_bar_addr(DM_BAR_ALL), (1u << ARCHI_CLUSTER_NB_PE) - 1u);
        dm_team_n = NUM_CORES;
        dm_fork_quit = 0;
    }
    /* every core waits here until core 0 has set the barrier up */
    eu_bar_trig_wait_clr(eu_bar_addr(DM_BAR_ALL));
    if (core == 0u) {
        for (;;) {
            struct pi_cluster_task *t;
            while ((t = dm_pending) == NULL) {
            }
            if (t == DM_QUIT) break;
            dm_task_cores = dm_cores(t);
            dm_team_n = dm_task_cores;
            dm_call_on_stack(t->entry, t->arg, dm_stacks + dm_stack_size);
            dm_pending = NULL;
        }
        dm_fork_quit = 1;
        eu_evt_trig(eu_evt_trig_addr(DM_FORK_EVENT), ((1u << ARCHI_CLUSTER_NB_PE) - 1u) & ~1u);
        dm_cluster_running = 0;
    } else {
        for (;;) {
            eu_evt_maskWaitAndClr(1u << DM_FORK_EVENT);
            if (dm_fork_quit) break;
            if ((int)core < dm_fork_n) {
                dm_fork_skew(core);
                dm_call_on_stack(dm_fork_fn, dm_fork_arg,
                                 dm_stacks + dm_stack_size + core * dm_slave_stack_size);
            }
            eu_bar_trig_wait_clr(eu_bar_addr(DM_BAR_ALL));
        }
    }
    dm_wait_forever();
}

void cluster_start(int cid, int (*entry)())
{
    (void)entry;
    if (!dm_heaps_ready) dm_heaps_init();
    pos_fll_init(POS_FLL_CL);
    hal_icache_cluster_enable(cid);
    dm_pending = NULL;
    dm_cluster_running = 1;
    for (int i = 0; i < ARCHI_CLUSTER_NB_PE; i++)
        plp_ctrl_core_bootaddr_set_remote(cid, i, (int)_start);
    eoc_fetch_enable_remote(cid, (1u << ARCHI_CLUSTER_NB_PE) - 1u);
}

int cluster_wait(int cid)
{
    (void)cid;
    while (dm_cluster_running) {
    }
    return 0;
}

static int dm_cluster_open;

void pi_cluster_conf_init(struct pi_cluster_conf *conf)
{
    memset(conf, 0, sizeof *conf);
}

void pi_open_from_conf(struct pi_device *device, void *conf)
{
    device->api = NULL;
    device->config = conf;
    device->data = NULL;
}

int pi_cluster_open(struct pi_device *device)
{
    (void)device;
    if (!dm_cluster_open) {
        cluster_start(0, NULL);
        dm_cluster_open = 1;
    }
    return 0;
}

/* the task stacks in L1 (kept from task to task while the sizes stay, as
 * PULPOS' pos_cluster_task_set_stack does), freed by pi_cluster_close */
static char *dm_stacks_mem;
static uint32_t dm_stacks_bytes;
static uint32_t dm_stack_used[ARCHI_CLUSTER_NB_PE];

int pi_cluster_close(struct pi_device *device)
{
    if (dm_cluster_open) {
        dm_pending = DM_QUIT;
        cluster_wait(0);
        dm_cluster_open = 0;
    }
    if (dm_stacks_mem != NULL) {
        pi_cl_l1_free(device, dm_stacks_mem, (int)dm_stacks_bytes);
        dm_stacks_mem = NULL;
        dm_stacks_bytes = 0;
    }
    return 0;
}

struct pi_cluster_task *pi_cluster_task(struct pi_cluster_task *task, void (*entry)(void *),
                                        void *arg)
{
    memset(task, 0, sizeof *task);
    task->entry = entry;
    task->arg = arg;
    return task;
}

/* the task's stacks, as PULPOS' pos_cluster_task_set_stack: stack_size 0
 * means 0x800 for the cluster controller and 0x400 for the others,
 * slave_stack_size 0 the same as stack_size; stack_size +
 * slave_stack_size * (nb_cores - 1) bytes from the L1 heap. -1 when they do
 * not fit. */
static int dm_task_set_stacks(struct pi_device *device, struct pi_cluster_task *task)
{
    if (task->stack_size == 0u) {
        task->stack_size = 0x800;
        task->slave_stack_size = 0x400;
    }
    if (task->slave_stack_size == 0u) task->slave_stack_size = task->stack_size;
    int cores = dm_cores(task);
    uint32_t bytes = task->stack_size + task->slave_stack_size * (uint32_t)(cores - 1);
    if (dm_stacks_mem == NULL || bytes != dm_stacks_bytes) {
        if (dm_stacks_mem != NULL) pi_cl_l1_free(device, dm_stacks_mem, (int)dm_stacks_bytes);
        dm_stacks_bytes = bytes;
        dm_stacks_mem = pi_cl_l1_malloc(device, bytes);
        if (dm_stacks_mem == NULL) {
            dm_stacks_bytes = 0;
            return -1;
        }
    }
    task->stacks = dm_stacks_mem;
    return 0;
}

/* the bytes of stack `core` (0: the cluster controller) between `lo` and
 * `hi` that the task wrote: from the lowest word that lost the paint */
static uint32_t dm_stack_depth(uint32_t lo, uint32_t hi)
{
    for (uint32_t a = lo; a < hi; a += 4u)
        if (*(volatile uint32_t *)a != DM_STACK_PAINT) return hi - a;
    return 0;
}

int pi_cluster_send_task_to_cl(struct pi_device *device, struct pi_cluster_task *task)
{
    if (!dm_cluster_open) return -1;
    if (task->stacks == NULL && dm_task_set_stacks(device, task) != 0) return -1;
    int cores = dm_cores(task);
    uint32_t base = (uint32_t)task->stacks;
    uint32_t end = base + task->stack_size + task->slave_stack_size * (uint32_t)(cores - 1);
    /* deeploy-mlir only: paint the stacks, to tell afterwards how deep each
     * core went and whether one went past its end */
    for (uint32_t a = base; a + 4u <= end; a += 4u) *(volatile uint32_t *)a = DM_STACK_PAINT;
    dm_stacks = (char *)task->stacks;
    dm_stack_size = task->stack_size;
    dm_slave_stack_size = task->slave_stack_size;
    __asm__ __volatile__("" : : : "memory");
    dm_pending = task;
    /* poll now and then: fewer L2 accesses competing with the cluster's */
    while (dm_pending != NULL) {
        for (int i = 0; i < 64; i++) __asm__ __volatile__("nop");
    }
    for (int c = 0; c < ARCHI_CLUSTER_NB_PE; c++) dm_stack_used[c] = 0;
    dm_stack_used[0] = dm_stack_depth(base, base + task->stack_size);
    for (int c = 1; c < cores; c++) {
        uint32_t lo = base + task->stack_size + (uint32_t)(c - 1) * task->slave_stack_size;
        dm_stack_used[c] = dm_stack_depth(lo, lo + task->slave_stack_size);
    }
    /* a stack written down to its last word went past its end (into the
     * next core's stack, or below the stacks for the cluster controller):
     * the results cannot be trusted */
    for (int c = 0; c < cores; c++) {
        uint32_t size = c == 0 ? task->stack_size : task->slave_stack_size;
        if (dm_stack_used[c] >= size) {
            printf("dm-gvsoc: the cluster task overflowed the stack of core %d (%lu bytes, "
                   "pi_cluster_task.%s)\n",
                   c, (unsigned long)size, c == 0 ? "stack_size" : "slave_stack_size");
            exit(3);
        }
    }
    return 0;
}

uint32_t dm_gvsoc_stack_used(int core)
{
    return core >= 0 && core < ARCHI_CLUSTER_NB_PE ? dm_stack_used[core] : 0u;
}

uint32_t pi_core_id(void) { return hal_core_id(); }

uint32_t pi_cluster_id(void) { return hal_cluster_id(); }

int pi_cl_team_nb_cores(void) { return dm_team_n; }

void pi_cl_team_fork(int nb_cores, void (*entry)(void *), void *arg)
{
    int n = nb_cores > 0 ? nb_cores : dm_task_cores;
    /* the task has stacks for its nb_cores cores only */
    if (n > dm_task_cores) n = dm_task_cores;
    dm_team_n = n;
    dm_fork_fn = entry;
    dm_fork_arg = arg;
    dm_fork_n = n;
    eu_bar_setup(eu_bar_addr(DM_BAR_TEAM), (1u << n) - 1u);
    __asm__ __volatile__("" : : : "memory");
    eu_evt_trig(eu_evt_trig_addr(DM_FORK_EVENT), ((1u << ARCHI_CLUSTER_NB_PE) - 1u) & ~1u);
    dm_fork_skew(0);
    entry(arg);
    eu_bar_trig_wait_clr(eu_bar_addr(DM_BAR_ALL));
}

void pi_cl_team_barrier(void)
{
    eu_bar_trig_wait_clr(eu_bar_addr(DM_BAR_TEAM));
}

/* ---- performance counters ---------------------------------------------- */

static inline uint32_t dm_mcycle(void)
{
    uint32_t v;
    __asm__ __volatile__("csrr %0, mcycle" : "=r"(v));
    return v;
}

/* one slot per cluster core, the last for the FC */
static uint32_t dm_perf_acc[ARCHI_CLUSTER_NB_PE + 1];
static uint32_t dm_perf_t0[ARCHI_CLUSTER_NB_PE + 1];
static uint8_t dm_perf_on[ARCHI_CLUSTER_NB_PE + 1];

static inline int dm_perf_slot(void)
{
    return hal_is_fc() ? ARCHI_CLUSTER_NB_PE : (int)hal_core_id();
}

void pi_perf_conf(unsigned events) { (void)events; }

void pi_perf_reset(void)
{
    int s = dm_perf_slot();
    dm_perf_acc[s] = 0;
    dm_perf_t0[s] = dm_mcycle();
}

void pi_perf_start(void)
{
    int s = dm_perf_slot();
    dm_perf_t0[s] = dm_mcycle();
    dm_perf_on[s] = 1;
}

void pi_perf_stop(void)
{
    int s = dm_perf_slot();
    if (dm_perf_on[s]) dm_perf_acc[s] += dm_mcycle() - dm_perf_t0[s];
    dm_perf_on[s] = 0;
}

unsigned int pi_perf_read(int id)
{
    int s = dm_perf_slot();
    if (id != PI_PERF_CYCLES && id != PI_PERF_ACTIVE_CYCLES) return 0;
    uint32_t v = dm_perf_acc[s];
    if (dm_perf_on[s]) v += dm_mcycle() - dm_perf_t0[s];
    return v;
}

/* ---- cluster DMA (mchan) -------------------------------------------------- */

static void dm_dma_fail(const char *what, uint32_t value)
{
    printf("dm-gvsoc: %s (%lu)\n", what, (unsigned long)value);
    exit(3);
}

void pi_cl_dma_cmd(uint32_t ext, uint32_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd)
{
    if (size >= (1u << 16)) dm_dma_fail("pi_cl_dma_cmd: size does not fit 16 bits", size);
    eu_mutex_lock_from_id(0);
    int id = plp_dma_counter_alloc();
    unsigned int c = plp_dma_getCmd((int)dir, size, PLP_DMA_1D, PLP_DMA_TRIG_EVT,
                                    PLP_DMA_NO_TRIG_IRQ, PLP_DMA_SHARED);
    __asm__ __volatile__("" : : : "memory");
    plp_dma_cmd_push(c, loc, ext);
    cmd->id = id;
    eu_mutex_unlock_from_id(0);
}

void pi_cl_dma_cmd_2d(uint32_t ext, uint32_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd)
{
    if (size >= (1u << 17)) dm_dma_fail("pi_cl_dma_cmd_2d: size does not fit 17 bits", size);
    if (length >= (1u << 16))
        dm_dma_fail("pi_cl_dma_cmd_2d: row length does not fit 16 bits", length);
    if (stride >= (1u << 16)) dm_dma_fail("pi_cl_dma_cmd_2d: stride does not fit 16 bits", stride);
    eu_mutex_lock_from_id(0);
    int id = plp_dma_counter_alloc();
    unsigned int c = plp_dma_getCmd((int)dir, size, PLP_DMA_2D, PLP_DMA_TRIG_EVT,
                                    PLP_DMA_NO_TRIG_IRQ, PLP_DMA_SHARED);
    __asm__ __volatile__("" : : : "memory");
    plp_dma_cmd_push_2d(c, loc, ext, stride, length);
    cmd->id = id;
    eu_mutex_unlock_from_id(0);
}

void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd)
{
    int counter = cmd->id;
    eu_mutex_lock_from_id(0);
    while (DMA_READ(MCHAN_STATUS_OFFSET) & (1u << counter)) {
        eu_mutex_unlock_from_id(0);
        eu_evt_maskWaitAndClr(1u << ARCHI_CL_EVT_DMA0);
        eu_mutex_lock_from_id(0);
    }
    plp_dma_counter_free(counter);
    eu_mutex_unlock_from_id(0);
}

void pi_cl_dma_flush(void) { plp_dma_barrier(); }
