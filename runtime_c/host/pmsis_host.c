/* Host emulation of PMSIS: see pmsis.h (and bsp/ram.h for the L3 RAM). */
#include "pmsis.h"
#include "bsp/ram.h"
#include "bsp/ram/aps25xxxn.h"
#include "bsp/ram/hyperram.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void dm_check_free(const char *who, const void *p, uint64_t n);

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
    dm_check_free("pi_l2_free", chunk, size > 0 ? (uint64_t)size : 1u);
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
    dm_check_free("pi_cl_l1_free", chunk, size > 0 ? (uint64_t)size : 1u);
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
/* transfer ids of the cluster DMA (4-bit TID in mchan and GAP9's cluster DMA) */
#define DM_MCHAN_TIDS 16
/* mchan limits, as pulp-sdk states them: pos/implem/dma.h passes a 1-D size and
 * a 2-D row length as unsigned short (16 bits), and a 2-D size into mchan_v7's
 * 17-bit command length field (archi/dma/mchan_v7.h, MCHAN_CMD_CMD_LEN_WIDTH).
 * deeploy_mlir/dialects/dma.py (MCHAN: max_row, max_bytes) says the same. */
#define DM_MCHAN_MAX_1D 0xFFFFu
#define DM_MCHAN_MAX_ROW 0xFFFFu
#define DM_MCHAN_MAX_2D 0x1FFFFu

enum { DM_MCHAN, DM_RAM };

/* `rows` rows of `length` bytes, `step` bytes apart; the last row has
 * `last` bytes (length, or fewer when a 2-D size is not a multiple) */
typedef struct {
    uint8_t *base;
    uint32_t rows, length, last, step;
} dm_side_t;

typedef struct {
    int active;
    int engine;
    int hop;
    const void *req; /* the command / request it was issued on */
    uint32_t id;
    dm_side_t src, dst;
    uint32_t checksum;
} dm_transfer_t;

static dm_transfer_t dm_inflight[DM_HOST_MAX_INFLIGHT];
static uint32_t dm_next_id = 1u;
static uint64_t dm_stats[DM_HOPS][2];
static int dm_dma_started;
static int dm_stopping; /* a stop is exiting: no in-flight complaint at exit */

/* cluster-DMA transfer ids: taken at issue, freed by the wait on the command
 * whose latest transfer holds it, or by pi_cl_dma_flush */
static struct {
    int taken;
    int orphan; /* its command was reused before the wait: only a flush frees it */
    const void *cmd;
    uint32_t id;
} dm_tids[DM_MCHAN_TIDS];

#define DM_NAME_MAX 64
static struct {
    const void *req;
    int warned;
    char name[DM_NAME_MAX];
} dm_names[256];
static unsigned dm_names_next;

static void dm_dma_at_exit(void);

static void dm_dma_start(void)
{
    if (!dm_dma_started) {
        dm_dma_started = 1;
        atexit(dm_dma_at_exit);
    }
}

static void dm_stopf(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void dm_stopf(const char *fmt, ...)
{
    va_list ap;
    dm_stopping = 1;
    fflush(stdout);
    fputs("dm-host: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(3);
}

void dm_host_name_request(const void *req, const char *name)
{
    const unsigned n = sizeof dm_names / sizeof dm_names[0];
    unsigned slot = n;
    for (unsigned i = 0; i < n; i++) {
        if (dm_names[i].req == req) {
            slot = i;
            break;
        }
    }
    if (slot == n) { /* a new request: the oldest name gives way */
        slot = dm_names_next % n;
        dm_names_next++;
        dm_names[slot].warned = 0;
    }
    dm_names[slot].req = req;
    strncpy(dm_names[slot].name, name != NULL ? name : "", DM_NAME_MAX - 1u);
    dm_names[slot].name[DM_NAME_MAX - 1u] = '\0';
}

static int dm_name_slot(const void *req)
{
    for (unsigned i = 0; i < sizeof dm_names / sizeof dm_names[0]; i++) {
        if (dm_names[i].req == req && dm_names[i].name[0] != '\0') return (int)i;
    }
    return -1;
}

/* The request's name, or "request@<address>"; up to four in one message. */
static const char *dm_request_name(const void *req)
{
    static char buf[4][40];
    static unsigned turn;
    int slot = dm_name_slot(req);
    if (slot >= 0) return dm_names[slot].name;
    char *b = buf[turn++ % 4u];
    snprintf(b, sizeof buf[0], "request@%p", req);
    return b;
}

void dm_host_dma_stats(uint64_t out[4][2])
{
    memcpy(out, dm_stats, sizeof dm_stats);
}

uint32_t dm_host_dma_in_flight(void)
{
    uint32_t n = 0u;
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) n += dm_inflight[i].active ? 1u : 0u;
    return n;
}

static void dm_dma_at_exit(void)
{
    fflush(stdout);
    for (int h = 0; h < DM_HOPS; h++) {
        fprintf(stderr, "dm-host: dma %s transfers=%llu bytes=%llu\n", dm_hop_names[h],
                (unsigned long long)dm_stats[h][0], (unsigned long long)dm_stats[h][1]);
    }
    uint32_t left = dm_stopping ? 0u : dm_host_dma_in_flight();
    if (left > 0u) {
        fprintf(stderr, "dm-host: %u DMA transfer(s) still in flight at exit (a missing wait):",
                (unsigned)left);
        unsigned shown = 0;
        for (int i = 0; i < DM_HOST_MAX_INFLIGHT && shown < 8u; i++) {
            const dm_transfer_t *t = &dm_inflight[i];
            if (!t->active) continue;
            fprintf(stderr, "%s %s on '%s'", shown ? "," : "", dm_hop_names[t->hop],
                    dm_request_name(t->req));
            shown++;
        }
        fprintf(stderr, "%s\n", left > shown ? ", ..." : "");
        fflush(stderr);
        _Exit(3);
    }
    fflush(stderr);
}

/* -- byte ranges -- */

static uint32_t dm_row_len(const dm_side_t *s, uint32_t r)
{
    return r + 1u == s->rows ? s->last : s->length;
}

static uint32_t dm_checksum(const dm_side_t *s)
{
    uint32_t h = 2166136261u;
    for (uint32_t r = 0; r < s->rows; r++) {
        const uint8_t *p = s->base + (size_t)r * s->step;
        for (uint32_t i = 0, n = dm_row_len(s, r); i < n; i++) h = (h ^ p[i]) * 16777619u;
    }
    return h;
}

static int64_t dm_floor_div(int64_t a, int64_t b) /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Does [x, x + n) (host addresses) meet a byte of side `s`? */
static int dm_span_meets(uint64_t x, uint64_t n, const dm_side_t *s)
{
    if (n == 0u || s->rows == 0u) return 0;
    const int64_t b = (int64_t)(uintptr_t)s->base, X = (int64_t)x, N = (int64_t)n;
    const int64_t len = (int64_t)s->length, step = (int64_t)s->step;
    int64_t kmin = 0, kmax = (int64_t)s->rows - 1;
    if (step > 0) {
        /* row k meets it iff b + k*step < X + N and b + k*step + len > X */
        int64_t lo = dm_floor_div(X - len - b, step) + 1, hi = dm_floor_div(X + N - 1 - b, step);
        if (lo > kmin) kmin = lo;
        if (hi < kmax) kmax = hi;
    } else if (!(b < X + N && b + len > X)) {
        return 0;
    }
    if (kmin > kmax) return 0;
    if (kmin < (int64_t)s->rows - 1) return 1; /* a full-length row */
    const int64_t at = b + kmin * step; /* only the (maybe shorter) last row */
    return at < X + N && at + (int64_t)s->last > X;
}

static int dm_sides_meet(const dm_side_t *a, const dm_side_t *b)
{
    for (uint32_t r = 0; r < a->rows; r++) {
        uint64_t x = (uint64_t)(uintptr_t)a->base + (uint64_t)r * a->step;
        if (dm_span_meets(x, dm_row_len(a, r), b)) return 1;
    }
    return 0;
}

/* Stops when freeing [p, p + n) would free bytes a copy in flight uses. */
static void dm_check_free(const char *who, const void *p, uint64_t n)
{
    if (p == NULL) return;
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        const dm_transfer_t *t = &dm_inflight[i];
        if (!t->active) continue;
        uint64_t x = (uint64_t)(uintptr_t)p;
        if (dm_span_meets(x, n, &t->src) || dm_span_meets(x, n, &t->dst)) {
            dm_stopf("%s frees memory the %s transfer on '%s' still uses (wait for it first)",
                     who, dm_hop_names[t->hop], dm_request_name(t->req));
        }
    }
}

/* -- the seal of a command / request while its transfer is in flight -- */

static void dm_seal(int engine, void *req, uint32_t id)
{
    if (engine == DM_MCHAN) {
        pi_cl_dma_cmd_t *c = (pi_cl_dma_cmd_t *)req;
        c->id = id;
        c->guard = ~id;
        return;
    }
    pi_cl_ram_req_t *r = (pi_cl_ram_req_t *)req;
    r->id = id;
    r->guard = ~id;
    r->done = 0u;
    for (unsigned i = 0; i < sizeof r->runtime; i++) r->runtime[i] = (uint8_t)(id * 31u + i);
}

static int dm_sealed(int engine, const void *req, uint32_t id)
{
    if (engine == DM_MCHAN) {
        const pi_cl_dma_cmd_t *c = (const pi_cl_dma_cmd_t *)req;
        return c->guard == ~c->id && c->id >= id;
    }
    const pi_cl_ram_req_t *r = (const pi_cl_ram_req_t *)req;
    if (r->id != id || r->guard != ~id || r->done != 0u) return 0;
    for (unsigned i = 0; i < sizeof r->runtime; i++) {
        if (r->runtime[i] != (uint8_t)(id * 31u + i)) return 0;
    }
    return 1;
}

static void dm_check_sealed(int engine, const void *req, uint32_t id, int hop)
{
    if (!dm_sealed(engine, req, id)) {
        dm_stopf("%s transfer on '%s': the %s's storage changed while its transfer was in "
                 "flight (on the board the %s; keep it alive and untouched until the wait: "
                 "not a local that went out of scope, not an object reused meanwhile)",
                 dm_hop_names[hop], dm_request_name(req),
                 engine == DM_MCHAN ? "command" : "request",
                 engine == DM_MCHAN ? "wait reads its transfer id back from it"
                                    : "fabric controller still owns it");
    }
}

/* -- issue and land -- */

static void dm_land(dm_transfer_t *t)
{
    if (t->engine == DM_RAM) dm_check_sealed(DM_RAM, t->req, t->id, t->hop);
    if (dm_checksum(&t->src) != t->checksum) {
        dm_stopf("%s transfer on '%s': source modified while in flight (wait for the "
                 "transfer before writing its source)",
                 dm_hop_names[t->hop], dm_request_name(t->req));
    }
    for (uint32_t r = 0; r < t->dst.rows; r++) {
        const uint8_t *d = t->dst.base + (size_t)r * t->dst.step;
        for (uint32_t i = 0, n = dm_row_len(&t->dst, r); i < n; i++) {
            if (d[i] != 0xFFu) {
                dm_stopf("%s transfer on '%s': destination written while in flight (wait for "
                         "the transfer before writing its destination)",
                         dm_hop_names[t->hop], dm_request_name(t->req));
            }
        }
    }
    for (uint32_t r = 0; r < t->dst.rows; r++) {
        memcpy(t->dst.base + (size_t)r * t->dst.step, t->src.base + (size_t)r * t->src.step,
               dm_row_len(&t->dst, r));
    }
    t->active = 0;
    if (t->engine == DM_RAM) ((pi_cl_ram_req_t *)(uintptr_t)t->req)->done = 1u;
}

/* Queues one copy of `size` bytes: on the ext side rows of `length` bytes
 * `stride` apart, on the loc side contiguous. */
static uint32_t dm_issue(int engine, const void *req, uint8_t *ext, uint8_t *loc, uint32_t size,
                         uint32_t stride, uint32_t length, int ext2loc, int hop)
{
    dm_dma_start();
    dm_transfer_t n;
    memset(&n, 0, sizeof n);
    n.active = 1;
    n.engine = engine;
    n.hop = hop;
    n.req = req;
    const uint32_t rows = size / length + (size % length != 0u ? 1u : 0u);
    const uint32_t last = rows == 0u ? 0u : size - (rows - 1u) * length;
    dm_side_t e = {ext, rows, length, last, stride}, l = {loc, rows, length, last, length};
    n.src = ext2loc ? e : l;
    n.dst = ext2loc ? l : e;
    dm_transfer_t *slot = NULL;
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        dm_transfer_t *t = &dm_inflight[i];
        if (!t->active) {
            if (slot == NULL) slot = t;
            continue;
        }
        /* the new copy writes what the one in flight reads or writes, or reads what it writes */
        const char *mine = NULL, *its = NULL;
        if (dm_sides_meet(&n.dst, &t->src)) {
            mine = "write";
            its = "reads";
        } else if (dm_sides_meet(&n.dst, &t->dst)) {
            mine = "write";
            its = "writes";
        } else if (dm_sides_meet(&n.src, &t->dst)) {
            mine = "read";
            its = "writes";
        }
        if (mine != NULL) {
            dm_stopf("%s transfer on '%s' would %s bytes that the %s transfer in flight on '%s' "
                     "%s (wait for '%s' first)",
                     dm_hop_names[hop], dm_request_name(req), mine, dm_hop_names[t->hop],
                     dm_request_name(t->req), its, dm_request_name(t->req));
        }
    }
    if (slot == NULL) {
        dm_stopf("more than %d DMA transfers in flight (issuing on '%s')", DM_HOST_MAX_INFLIGHT,
                 dm_request_name(req));
    }
    n.id = dm_next_id++;
    n.checksum = dm_checksum(&n.src);
    for (uint32_t r = 0; r < n.dst.rows; r++) {
        memset(n.dst.base + (size_t)r * n.dst.step, 0xFF, dm_row_len(&n.dst, r));
    }
    *slot = n;
    dm_stats[hop][0] += 1u;
    dm_stats[hop][1] += size;
    return n.id;
}

/* DM_HOST_LENIENT=1 (any value but empty or "0"): a wait on a request that
 * never had a transfer warns instead of stopping. */
static int dm_lenient(void)
{
    const char *s = getenv("DM_HOST_LENIENT");
    return s != NULL && s[0] != '\0' && strcmp(s, "0") != 0;
}

/* A wait on a command / request that never had a transfer: a stop, or a
 * warning (once per request) under DM_HOST_LENIENT. */
static void dm_wait_unissued(const char *who, const void *req, const char *on_board)
{
    if (!dm_lenient()) {
        dm_stopf("%s on '%s', which has no transfer issued: %s", who, dm_request_name(req),
                 on_board);
    }
    static unsigned warnings;
    int slot = dm_name_slot(req);
    if (slot >= 0) {
        if (dm_names[slot].warned) return;
        dm_names[slot].warned = 1;
    }
    if (warnings > 32u) return;
    fflush(stdout);
    if (warnings++ == 32u) {
        fputs("dm-host: warning: more waits without a transfer: not shown\n", stderr);
    } else {
        fprintf(stderr, "dm-host: warning: %s on '%s', which has no transfer issued: %s\n", who,
                dm_request_name(req), on_board);
    }
    fflush(stderr);
}

/* -- cluster DMA (mchan) -- */

static void dm_mchan(uintptr_t ext, uintptr_t loc, uint32_t size, uint32_t stride,
                     uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd, int two_d)
{
    const char *who = two_d ? "pi_cl_dma_cmd_2d" : "pi_cl_dma_cmd";
    if (cmd == NULL) dm_stopf("%s: the command is NULL", who);
    if (dir != PI_CL_DMA_DIR_EXT2LOC && dir != PI_CL_DMA_DIR_LOC2EXT) {
        dm_stopf("%s on '%s': direction %d is neither PI_CL_DMA_DIR_EXT2LOC nor "
                 "PI_CL_DMA_DIR_LOC2EXT",
                 who, dm_request_name(cmd), (int)dir);
    }
    if (!two_d && size > DM_MCHAN_MAX_1D) {
        dm_stopf("pi_cl_dma_cmd on '%s': size %u does not fit 16 bits (the SDKs truncate it to "
                 "%u); split the copy",
                 dm_request_name(cmd), (unsigned)size, (unsigned)(size & 0xFFFFu));
    }
    if (two_d && size > DM_MCHAN_MAX_2D) {
        dm_stopf("pi_cl_dma_cmd_2d on '%s': size %u does not fit the DMA's 17-bit length field; "
                 "split the copy",
                 dm_request_name(cmd), (unsigned)size);
    }
    if (two_d && length > DM_MCHAN_MAX_ROW) {
        dm_stopf("pi_cl_dma_cmd_2d on '%s': row length %u does not fit 16 bits (pulp-sdk "
                 "truncates it); split the copy",
                 dm_request_name(cmd), (unsigned)length);
    }
    if (two_d && length == 0u && size > 0u) {
        dm_stopf("pi_cl_dma_cmd_2d on '%s': row length 0 for %u bytes", dm_request_name(cmd),
                 (unsigned)size);
    }
    if (ext == 0u || loc == 0u) {
        dm_stopf("%s on '%s': a NULL address (ext %p, loc %p)", who, dm_request_name(cmd),
                 (void *)ext, (void *)loc);
    }
    /* the transfer id this transfer takes; the one the command held is orphaned */
    int free_tid = -1, orphans = 0;
    for (int i = 0; i < DM_MCHAN_TIDS; i++) {
        if (dm_tids[i].taken && !dm_tids[i].orphan && dm_tids[i].cmd == cmd) {
            dm_tids[i].orphan = 1;
        }
        if (!dm_tids[i].taken && free_tid < 0) free_tid = i;
        orphans += dm_tids[i].taken && dm_tids[i].orphan;
    }
    if (free_tid < 0) {
        dm_stopf("%s on '%s': all %d cluster-DMA transfer ids are taken (%d of them by transfers "
                 "whose command was reused before its wait: pi_cl_dma_cmd_wait frees only a "
                 "command's latest transfer id, pi_cl_dma_flush frees all); on the board the "
                 "core stalls for ever",
                 who, dm_request_name(cmd), DM_MCHAN_TIDS, orphans);
    }
    const int e2l = dir == PI_CL_DMA_DIR_EXT2LOC;
    if (!two_d) {
        stride = size;
        length = size;
    }
    dm_seal(DM_MCHAN, cmd,
            dm_issue(DM_MCHAN, cmd, (uint8_t *)ext, (uint8_t *)loc, size, stride,
                     length > 0u ? length : 1u, e2l, e2l ? DM_HOP_L2_L1 : DM_HOP_L1_L2));
    dm_tids[free_tid].taken = 1;
    dm_tids[free_tid].orphan = 0;
    dm_tids[free_tid].cmd = cmd;
    dm_tids[free_tid].id = cmd->id;
}

void pi_cl_dma_cmd(uintptr_t ext, uintptr_t loc, uint32_t size, pi_cl_dma_dir_e dir,
                   pi_cl_dma_cmd_t *cmd)
{
    dm_mchan(ext, loc, size, size, size, dir, cmd, 0);
}

void pi_cl_dma_cmd_2d(uintptr_t ext, uintptr_t loc, uint32_t size, uint32_t stride,
                      uint32_t length, pi_cl_dma_dir_e dir, pi_cl_dma_cmd_t *cmd)
{
    dm_mchan(ext, loc, size, stride, length, dir, cmd, 1);
}

/* Lands, in issue order, every cluster-DMA transfer in flight with id <= upto. */
static void dm_mchan_land_upto(uint32_t upto)
{
    for (;;) {
        dm_transfer_t *first = NULL;
        for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
            dm_transfer_t *t = &dm_inflight[i];
            if (t->active && t->engine == DM_MCHAN && t->id <= upto &&
                (first == NULL || t->id < first->id))
                first = t;
        }
        if (first == NULL) return;
        dm_land(first);
    }
}

void pi_cl_dma_cmd_wait(pi_cl_dma_cmd_t *cmd)
{
    if (cmd == NULL) dm_stopf("pi_cl_dma_cmd_wait: the command is NULL");
    if (cmd->id == 0u) {
        dm_wait_unissued("pi_cl_dma_cmd_wait", cmd,
                         "on the board it waits for transfer id 0 and frees it, while another "
                         "transfer may hold it");
        return;
    }
    if (cmd->guard != ~cmd->id) {
        dm_stopf("pi_cl_dma_cmd_wait on '%s': the command's storage changed after its issue (on "
                 "the board the wait reads its transfer id back from it; keep it alive and "
                 "untouched until the wait)",
                 dm_request_name(cmd));
    }
    dm_mchan_land_upto(cmd->id);
    for (int i = 0; i < DM_MCHAN_TIDS; i++) {
        if (dm_tids[i].taken && dm_tids[i].cmd == cmd && dm_tids[i].id == cmd->id) {
            dm_tids[i].taken = 0;
        }
    }
}

void pi_cl_dma_flush(void)
{
    dm_mchan_land_upto(UINT32_MAX);
    memset(dm_tids, 0, sizeof dm_tids);
}

/* -- L3 RAM: regions allocated with malloc, at addresses from 0x10000000 -- */

typedef struct {
    uint32_t addr, size;
    uint8_t *mem;
} dm_ram_region_t;

static dm_ram_region_t dm_ram_regions[64];
static uint32_t dm_ram_next = 0x10000000u;
/* pi_ram_open points device->data here; pi_ram_close clears it */
static int dm_ram_is_open;

void pi_hyperram_conf_init(struct pi_hyperram_conf *conf)
{
    memset(conf, 0, sizeof(*conf));
}

void pi_aps25xxxn_conf_init(struct pi_aps25xxxn_conf *conf)
{
    memset(conf, 0, sizeof(*conf));
}

int32_t pi_ram_open(struct pi_device *device)
{
    device->data = &dm_ram_is_open;
    return 0;
}

void pi_ram_close(struct pi_device *device)
{
    device->data = NULL;
}

static void dm_ram_check_open(const char *who, const struct pi_device *device)
{
    if (device == NULL || device->data != &dm_ram_is_open) {
        dm_stopf("%s: the RAM device is not open (pi_ram_open)", who);
    }
}

int pi_ram_alloc(struct pi_device *device, uint32_t *addr, uint32_t size)
{
    dm_ram_check_open("pi_ram_alloc", device);
    const uint32_t span = (size + 63u) & ~63u;
    for (unsigned i = 0; i < sizeof dm_ram_regions / sizeof dm_ram_regions[0]; i++) {
        if (dm_ram_regions[i].mem != NULL) continue;
        if (size > 0x7FFFFFFFu || dm_ram_next > UINT32_MAX - span - 64u) return -1;
        uint8_t *mem = (uint8_t *)malloc(size ? size : 1u);
        if (mem == NULL) return -1;
        memset(mem, 0xFF, size); /* unwritten L3 reads as NaN */
        dm_ram_regions[i].addr = dm_ram_next;
        dm_ram_regions[i].size = size;
        dm_ram_regions[i].mem = mem;
        *addr = dm_ram_next;
        dm_ram_next += span + 64u; /* a gap: an overrun does not reach the next one */
        return 0;
    }
    return -1;
}

int pi_ram_free(struct pi_device *device, uint32_t addr, uint32_t size)
{
    dm_ram_check_open("pi_ram_free", device);
    for (unsigned i = 0; i < sizeof dm_ram_regions / sizeof dm_ram_regions[0]; i++) {
        dm_ram_region_t *r = &dm_ram_regions[i];
        if (r->mem == NULL || r->addr != addr) continue;
        if (r->size != size) {
            dm_stopf("pi_ram_free: 0x%08x was allocated with %u bytes, freed with %u",
                     (unsigned)addr, (unsigned)r->size, (unsigned)size);
        }
        dm_check_free("pi_ram_free", r->mem, r->size);
        free(r->mem);
        r->mem = NULL;
        return 0;
    }
    dm_stopf("pi_ram_free: 0x%08x is not an allocation of pi_ram_alloc", (unsigned)addr);
}

/* The host bytes of L3 [addr, addr + span); stops when outside every region. */
static uint8_t *dm_ram_ptr(const char *who, uint32_t addr, uint64_t span)
{
    for (unsigned i = 0; i < sizeof dm_ram_regions / sizeof dm_ram_regions[0]; i++) {
        const dm_ram_region_t *r = &dm_ram_regions[i];
        if (r->mem != NULL && addr >= r->addr && span <= r->size &&
            addr - r->addr <= r->size - span)
            return r->mem + (addr - r->addr);
    }
    dm_stopf("%s: L3 bytes 0x%08x..+%llu are outside every pi_ram_alloc allocation", who,
             (unsigned)addr, (unsigned long long)span);
}

static void dm_ram_copy(const char *who, struct pi_device *device, uint32_t pi_ram_addr,
                        void *addr, uint32_t size, uint32_t stride, uint32_t length, int ext2loc,
                        pi_cl_ram_req_t *req)
{
    dm_ram_check_open(who, device);
    if (req == NULL) dm_stopf("%s: the request is NULL", who);
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        if (dm_inflight[i].active && dm_inflight[i].engine == DM_RAM &&
            dm_inflight[i].req == req) {
            dm_stopf("L3 RAM request '%s' reused while a transfer is in flight (wait for it "
                     "before issuing the next)",
                     dm_request_name(req));
        }
    }
    if (length == 0u && size > 0u) {
        dm_stopf("%s on '%s': row length 0 for %u bytes", who, dm_request_name(req),
                 (unsigned)size);
    }
    if (addr == NULL) dm_stopf("%s on '%s': the L2 address is NULL", who, dm_request_name(req));
    if (length == 0u) length = 1u;
    const uint32_t rows = size / length + (size % length != 0u ? 1u : 0u);
    const uint64_t span =
        rows == 0u ? 0u : (uint64_t)(rows - 1u) * stride + (size - (rows - 1u) * length);
    uint8_t *ext = dm_ram_ptr(who, pi_ram_addr, span);
    dm_seal(DM_RAM, req,
            dm_issue(DM_RAM, req, ext, (uint8_t *)addr, size, stride, length, ext2loc != 0,
                     ext2loc ? DM_HOP_L3_L2 : DM_HOP_L2_L3));
}

void pi_cl_ram_copy(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                    int ext2loc, pi_cl_ram_req_t *req)
{
    dm_ram_copy("pi_cl_ram_copy", device, pi_ram_addr, addr, size, size, size, ext2loc, req);
}

void pi_cl_ram_copy_2d(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                       uint32_t stride, uint32_t length, int ext2loc, pi_cl_ram_req_t *req)
{
    dm_ram_copy("pi_cl_ram_copy_2d", device, pi_ram_addr, addr, size, stride, length, ext2loc,
                req);
}

void pi_cl_ram_copy_wait(pi_cl_ram_req_t *req)
{
    if (req == NULL) dm_stopf("pi_cl_ram_copy_wait: the request is NULL");
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        const dm_transfer_t *t = &dm_inflight[i];
        if (t->active && t->engine == DM_RAM && t->req == req) {
            dm_check_sealed(DM_RAM, req, t->id, t->hop);
        }
    }
    if (req->id == 0u) {
        dm_wait_unissued("pi_cl_ram_copy_wait", req,
                         "on the board the wait never returns (its done flag is never set)");
        return;
    }
    for (int i = 0; i < DM_HOST_MAX_INFLIGHT; i++) {
        dm_transfer_t *t = &dm_inflight[i];
        if (t->active && t->engine == DM_RAM && t->req == req) dm_land(t);
    }
    /* the SDK's wait polls the done flag: a request whose storage changed
     * since (zeroed, reused) would wait for ever */
    if (req->done == 0u) {
        dm_stopf("pi_cl_ram_copy_wait on '%s': its done flag is clear and no transfer is in "
                 "flight on it (its storage changed after the issue?): on the board the wait "
                 "never returns",
                 dm_request_name(req));
    }
}

/* pi_ram_read and pi_ram_write are synchronous: issued on a request of their
 * own and landed at once, so they are counted and checked against the copies
 * in flight like the others. */
static void dm_ram_copy_sync(const char *who, struct pi_device *device, uint32_t pi_ram_addr,
                             void *data, uint32_t size, int ext2loc)
{
    pi_cl_ram_req_t req = {0};
    dm_host_name_request(&req, who);
    dm_ram_copy(who, device, pi_ram_addr, data, size, size, size, ext2loc, &req);
    pi_cl_ram_copy_wait(&req);
    dm_host_name_request(&req, "");
}

void pi_ram_read(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size)
{
    dm_ram_copy_sync("pi_ram_read", device, pi_ram_addr, data, size, 1);
}

void pi_ram_write(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size)
{
    dm_ram_copy_sync("pi_ram_write", device, pi_ram_addr, data, size, 0);
}
