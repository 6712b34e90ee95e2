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

/* ---- DMA (see pmsis.h) ---------------------------------------------------- */

enum { DM_HOP_L2_L1, DM_HOP_L1_L2, DM_HOP_L3_L2, DM_HOP_L2_L3, DM_HOPS };
static const char *const dm_hop_names[DM_HOPS] = {"L2->L1", "L1->L2", "L3->L2", "L2->L3"};

#ifndef DM_HOST_MAX_INFLIGHT
#define DM_HOST_MAX_INFLIGHT 256
#endif

typedef struct {
    int active;
    int ram;           /* 0: mchan, 1: L3 RAM */
    const void *req;   /* the command / request it was issued on */
    uint32_t id;
    uint8_t *dst;
    const uint8_t *src;
    uint32_t rows, length, dst_step, src_step;
    uint32_t checksum;
} dm_transfer_t;

static dm_transfer_t dm_inflight[DM_HOST_MAX_INFLIGHT];
static uint32_t dm_next_id = 1u;
static uint64_t dm_stats[DM_HOPS][2];
static int dm_dma_started;

static struct {
    const void *req;
    char name[48];
} dm_names[64];
static unsigned dm_names_next;

static void dm_stop(const char *msg, const char *detail)
{
    fprintf(stderr, "dm-host: %s%s\n", msg, detail);
    fflush(stderr);
    exit(3);
}

void dm_host_name_request(const void *req, const char *name)
{
    unsigned n = sizeof dm_names / sizeof dm_names[0];
    unsigned slot = dm_names_next % n;
    for (unsigned i = 0; i < n; i++) {
        if (dm_names[i].req == req) {
            slot = i;
            break;
        }
    }
    if (slot == dm_names_next % n) dm_names_next++;
    dm_names[slot].req = req;
    strncpy(dm_names[slot].name, name, sizeof dm_names[slot].name - 1u);
    dm_names[slot].name[sizeof dm_names[slot].name - 1u] = '\0';
}

static const char *dm_request_name(const void *req)
{
    static char buf[48];
    for (unsigned i = 0; i < sizeof dm_names / sizeof dm_names[0]; i++) {
        if (dm_names[i].req == req && dm_names[i].name[0] != '\0') return dm_names[i].name;
    }
    snprintf(buf, sizeof buf, "request@%p", req);
    return buf;
}

void dm_host_dma_stats(uint64_t out[4][2])
{
    memcpy(out, dm_stats, sizeof dm_stats);
}

static void dm_dma_at_exit(void)
{
    unsigned left = 0;
    for (int h = 0; h < DM_HOPS; h++) {
        fprintf(stderr, "dm-host: dma %s transfers=%llu bytes=%llu\n", dm_hop_names[h],
                (unsigned long long)dm_stats[h][0], (unsigned long long)dm_stats[h][1]);
    }
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) left += dm_inflight[i].active ? 1u : 0u;
    if (left) {
        fprintf(stderr, "dm-host: %u DMA transfer(s) still in flight at exit (a missing wait)\n",
                left);
        fflush(stderr);
        _Exit(3);
    }
    fflush(stderr);
}

static uint32_t dm_checksum(const uint8_t *p, uint32_t rows, uint32_t length, uint32_t step)
{
    uint32_t h = 2166136261u;
    for (uint32_t r = 0; r < rows; r++) {
        for (uint32_t i = 0; i < length; i++) h = (h ^ p[r * step + i]) * 16777619u;
    }
    return h;
}

static void dm_land(dm_transfer_t *t)
{
    if (dm_checksum(t->src, t->rows, t->length, t->src_step) != t->checksum) {
        dm_stop("source modified while in flight on request ", dm_request_name(t->req));
    }
    for (uint32_t r = 0; r < t->rows; r++) {
        memcpy(t->dst + r * t->dst_step, t->src + r * t->src_step, t->length);
    }
    t->active = 0;
}

/* Queue one transfer of `rows` rows of `length` bytes; ext rows are `stride`
 * bytes apart, loc rows contiguous. Returns its id. */
static uint32_t dm_issue(int ram, const void *req, uint8_t *ext, uint8_t *loc, uint32_t size,
                         uint32_t stride, uint32_t length, int ext2loc, int hop)
{
    if (!dm_dma_started) {
        dm_dma_started = 1;
        atexit(dm_dma_at_exit);
    }
    if (length == 0u || size % length != 0u) {
        char detail[96];
        snprintf(detail, sizeof detail, "size %u is not a multiple of the row length %u",
                 (unsigned)size, (unsigned)length);
        dm_stop("bad 2-D transfer: ", detail);
    }
    dm_transfer_t *t = NULL;
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        if (!dm_inflight[i].active) {
            t = &dm_inflight[i];
            break;
        }
    }
    if (t == NULL) dm_stop("too many DMA transfers in flight on request ", dm_request_name(req));
    t->active = 1;
    t->ram = ram;
    t->req = req;
    t->id = dm_next_id++;
    t->rows = size / length;
    t->length = length;
    if (ext2loc) {
        t->src = ext;
        t->src_step = stride;
        t->dst = loc;
        t->dst_step = length;
    } else {
        t->src = loc;
        t->src_step = length;
        t->dst = ext;
        t->dst_step = stride;
    }
    t->checksum = dm_checksum(t->src, t->rows, t->length, t->src_step);
    for (uint32_t r = 0; r < t->rows; r++) memset(t->dst + r * t->dst_step, 0xFF, t->length);
    dm_stats[hop][0] += 1u;
    dm_stats[hop][1] += size;
    return t->id;
}

void pi_cl_dma_cmd(uintptr_t ext, uintptr_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd)
{
    pi_cl_dma_cmd_2d(ext, loc, size, size, size, dir, cmd);
}

void pi_cl_dma_cmd_2d(uintptr_t ext, uintptr_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd)
{
    int ext2loc = dir == PI_CL_DMA_DIR_EXT2LOC;
    cmd->id = dm_issue(0, cmd, (uint8_t *)ext, (uint8_t *)loc, size, stride, length, ext2loc,
                       ext2loc ? DM_HOP_L2_L1 : DM_HOP_L1_L2);
}

void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd)
{
    /* in order: every cluster-DMA transfer up to this command's latest */
    for (;;) {
        dm_transfer_t *first = NULL;
        for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
            dm_transfer_t *t = &dm_inflight[i];
            if (t->active && !t->ram && t->id <= cmd->id && (first == NULL || t->id < first->id))
                first = t;
        }
        if (first == NULL) return;
        dm_land(first);
    }
}

/* -- L3 RAM: regions allocated with malloc, at addresses from 0x10000000 -- */

typedef struct {
    uint32_t addr, size;
    uint8_t *mem;
} dm_ram_region_t;

static dm_ram_region_t dm_ram_regions[16];
static uint32_t dm_ram_next = 0x10000000u;

void pi_default_ram_conf_init(struct pi_default_ram_conf *conf)
{
    conf->ram_start = 0;
    conf->ram_size = 0;
}

int pi_ram_open(struct pi_device *device)
{
    (void)device;
    return 0;
}

void pi_ram_close(struct pi_device *device) { (void)device; }

int pi_ram_alloc(struct pi_device *device, uint32_t *addr, uint32_t size)
{
    (void)device;
    for (unsigned i = 0; i < sizeof dm_ram_regions / sizeof dm_ram_regions[0]; i++) {
        if (dm_ram_regions[i].mem == NULL) {
            uint8_t *mem = (uint8_t *)malloc(size ? size : 1u);
            if (mem == NULL) return -1;
            memset(mem, 0xFF, size);
            dm_ram_regions[i].addr = dm_ram_next;
            dm_ram_regions[i].size = size;
            dm_ram_regions[i].mem = mem;
            *addr = dm_ram_next;
            dm_ram_next += (size + 63u) & ~63u;
            return 0;
        }
    }
    return -1;
}

int pi_ram_free(struct pi_device *device, uint32_t addr, uint32_t size)
{
    (void)device;
    (void)size;
    for (unsigned i = 0; i < sizeof dm_ram_regions / sizeof dm_ram_regions[0]; i++) {
        if (dm_ram_regions[i].mem != NULL && dm_ram_regions[i].addr == addr) {
            free(dm_ram_regions[i].mem);
            dm_ram_regions[i].mem = NULL;
            return 0;
        }
    }
    return -1;
}

/* The host bytes of [addr, addr + span) in L3; stops when outside every region. */
static uint8_t *dm_ram_ptr(uint32_t addr, uint32_t span)
{
    for (unsigned i = 0; i < sizeof dm_ram_regions / sizeof dm_ram_regions[0]; i++) {
        const dm_ram_region_t *r = &dm_ram_regions[i];
        if (r->mem != NULL && addr >= r->addr && span <= r->size &&
            addr - r->addr <= r->size - span)
            return r->mem + (addr - r->addr);
    }
    char detail[64];
    snprintf(detail, sizeof detail, "0x%08x (+%u bytes)", (unsigned)addr, (unsigned)span);
    dm_stop("L3 access outside every allocation: ", detail);
    return NULL;
}

void pi_ram_read(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size)
{
    (void)device;
    memcpy(data, dm_ram_ptr(pi_ram_addr, size), size);
}

void pi_ram_write(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size)
{
    (void)device;
    memcpy(dm_ram_ptr(pi_ram_addr, size), data, size);
}

void pi_cl_ram_copy(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                    int ext2loc, pi_cl_ram_req_t *req)
{
    pi_cl_ram_copy_2d(device, pi_ram_addr, addr, size, size, size, ext2loc, req);
}

void pi_cl_ram_copy_2d(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                       uint32_t stride, uint32_t length, int ext2loc, pi_cl_ram_req_t *req)
{
    (void)device;
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        if (dm_inflight[i].active && dm_inflight[i].ram && dm_inflight[i].req == req) {
            char detail[160];
            snprintf(detail, sizeof detail, "'%s' reused while a transfer is in flight "
                     "(wait for it before issuing the next)", dm_request_name(req));
            dm_stop("L3 RAM request ", detail);
        }
    }
    uint32_t span = length == 0u ? 0u : (size / length - 1u) * stride + length;
    if (size == 0u) span = 0u;
    uint8_t *ext = dm_ram_ptr(pi_ram_addr, span);
    req->id = dm_issue(1, req, ext, (uint8_t *)addr, size, stride, length, ext2loc,
                       ext2loc ? DM_HOP_L3_L2 : DM_HOP_L2_L3);
}

void pi_cl_ram_copy_wait(pi_cl_ram_req_t *req)
{
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        dm_transfer_t *t = &dm_inflight[i];
        if (t->active && t->ram && t->req == req) dm_land(t);
    }
}
