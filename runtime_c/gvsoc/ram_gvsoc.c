/* deeploy-mlir's PMSIS layer for GVSoC: L3 RAM copies on the HyperRAM behind
 * the uDMA HyperBus interface (udma hyper v3 as GVSoC models it: from uDMA
 * peripheral DM_HYPER_PERIPH on, one register space per transfer id, then a
 * common one; siracusa: peripheral 4, 2 ids; pulp-open: peripheral 8, 8 ids;
 * gvsoc.mk defines them for the target). Each copy is programmed on transfer
 * id 0, from whichever core calls it (FC or cluster core 0), in chunks of at
 * most DM_HYPER_CHUNK bytes (a 2-D copy: each row its own chunks).
 *
 * A transfer id queues up to DM_HYPER_FIFO programmed transfers (the model's
 * HYPER_FIFO_DEPTH: the registers are latched when the transfer is enabled)
 * and runs them in order, one at a time on the one HyperBus. A cluster copy
 * (pi_cl_ram_copy, _2d) enqueues its chunks and returns; it waits only while
 * the queue is full. pi_cl_ram_copy_wait waits for that request's own
 * chunks: the id's STATUS counts the transfers not yet done (bits 1-8), so
 * with the number enqueued so far the chunks done are known; the request
 * remembers the count after its last chunk. One id keeps every copy in issue
 * order: a fetch issued after a write-back of the same bytes reads them
 * written (the second id of siracusa would let a fetch pass queued
 * write-backs on the bus, but then that order would have to be proven by
 * the waits). */
#include <string.h>

#include "bsp/ram.h"
#include "bsp/ram/hyperram.h"
#include "pmsis.h"

#define DM_UDMA 0x1A102000u
#if !defined(DM_HYPER_PERIPH) || !defined(DM_HYPER_NB_CHANNELS)
#error "DM_HYPER_PERIPH and DM_HYPER_NB_CHANNELS must be defined (runtime_c/gvsoc/gvsoc.mk)"
#endif
#define DM_HYPER_BASE (DM_UDMA + 0x80u + ((uint32_t)DM_HYPER_PERIPH << 7))
#define DM_HYPER_CH(id) (DM_HYPER_BASE + 0x80u * (id))
#define DM_HYPER_COMMON (DM_HYPER_BASE + 0x80u * (uint32_t)DM_HYPER_NB_CHANNELS)
/* per transfer id */
#define R_RX_SADDR 0x00u
#define R_RX_SIZE 0x04u
#define R_RX_CFG 0x08u
#define R_TX_SADDR 0x0Cu
#define R_TX_SIZE 0x10u
#define R_TX_CFG 0x14u
#define R_CA_SETUP 0x18u
#define R_HYPER_ADDR 0x1Cu
#define R_STATUS 0x24u
#define R_TWD_ACT 0x28u
#define R_TWD_COUNT 0x2Cu
#define R_TWD_STRIDE 0x30u
#define R_TWD_ACT_L2 0x34u
#define R_TWD_COUNT_L2 0x38u
#define R_TWD_STRIDE_L2 0x3Cu
/* common */
#define R_PAGE_BOUND 0x00u
#define R_T_LATENCY_ACCESS 0x04u
#define R_EN_LATENCY_ADD 0x08u
#define R_T_CS_MAX 0x0Cu
#define R_MEM_SEL 0x20u
#define CFG_EN (1u << 4)
/* bytes per programmed transfer */
#define DM_HYPER_CHUNK 0x8000u
#define DM_RAM_SIZE 0x800000u

static inline void wr(uint32_t addr, uint32_t v) { *(volatile uint32_t *)addr = v; }
static inline uint32_t rd(uint32_t addr) { return *(volatile uint32_t *)addr; }

/* the L3 heap: first fit over [8, size) (0 is never handed out) */
#define DM_RAM_RANGES 64
static uint32_t dm_ram_start[DM_RAM_RANGES], dm_ram_len[DM_RAM_RANGES];
static int dm_ram_n = -1;

void pi_hyperram_conf_init(struct pi_hyperram_conf *conf)
{
    memset(conf, 0, sizeof *conf);
}

int32_t pi_ram_open(struct pi_device *device)
{
    (void)device;
    /* the clocks of the interface's uDMA slots */
    wr(DM_UDMA, rd(DM_UDMA) | (((1u << (DM_HYPER_NB_CHANNELS + 1)) - 1u) << DM_HYPER_PERIPH));
    wr(DM_HYPER_COMMON + R_EN_LATENCY_ADD, 1u);
    wr(DM_HYPER_COMMON + R_MEM_SEL, 0u); /* chip select 0: the HyperRAM */
    wr(DM_HYPER_COMMON + R_T_CS_MAX, 0xffffffffu);
    wr(DM_HYPER_COMMON + R_T_LATENCY_ACCESS, 6u);
    wr(DM_HYPER_COMMON + R_PAGE_BOUND, 3u);
    if (dm_ram_n < 0) {
        dm_ram_start[0] = 8u;
        dm_ram_len[0] = DM_RAM_SIZE - 8u;
        dm_ram_n = 1;
    }
    return 0;
}

void pi_ram_close(struct pi_device *device) { (void)device; }

int pi_ram_alloc(struct pi_device *device, uint32_t *addr, uint32_t size)
{
    (void)device;
    size = (size + 7u) & ~7u;
    for (int i = 0; i < dm_ram_n; i++) {
        if (dm_ram_len[i] >= size) {
            *addr = dm_ram_start[i];
            dm_ram_start[i] += size;
            dm_ram_len[i] -= size;
            return 0;
        }
    }
    return -1;
}

int pi_ram_free(struct pi_device *device, uint32_t addr, uint32_t size)
{
    (void)device;
    size = (size + 7u) & ~7u;
    /* merge with a neighbour, else keep as its own range */
    for (int i = 0; i < dm_ram_n; i++) {
        if (dm_ram_start[i] == addr + size) {
            dm_ram_start[i] = addr;
            dm_ram_len[i] += size;
            return 0;
        }
        if (dm_ram_start[i] + dm_ram_len[i] == addr) {
            dm_ram_len[i] += size;
            return 0;
        }
    }
    if (dm_ram_n < DM_RAM_RANGES) {
        dm_ram_start[dm_ram_n] = addr;
        dm_ram_len[dm_ram_n] = size;
        dm_ram_n++;
    }
    return 0;
}

/* transfers a transfer id queues (udma_hyper_v3's HYPER_FIFO_DEPTH) */
#define DM_HYPER_FIFO 8u
/* transfers enqueued on id 0 so far (wraps: only differences are used) */
static uint32_t dm_hyper_issued;

/* transfers on id 0 not yet done (STATUS: bit 0 busy, bits 1-8 the count) */
static inline uint32_t dm_hyper_pending(void)
{
    return (rd(DM_HYPER_CH(0) + R_STATUS) >> 1) & 0xffu;
}

/* until every transfer enqueued so far is done and the interface is idle */
static void dm_hyper_wait(void)
{
    while (rd(DM_HYPER_CH(0) + R_STATUS) != 0u) {
    }
}

/* until the first `seq` transfers ever enqueued are done (the ones after them
 * may still be queued or on the bus); the last one enqueued: the interface
 * idle, as dm_hyper_wait */
static void dm_hyper_wait_seq(uint32_t seq)
{
    for (;;) {
        uint32_t issued = dm_hyper_issued;
        uint32_t pending = dm_hyper_pending();
        if (pending == 0u) {
            dm_hyper_wait();
            return;
        }
        if ((int32_t)(issued - pending - seq) >= 0) {
            return;
        }
    }
}

/* Enqueues `size` bytes in chunks on transfer id 0, each once the queue has
 * room; returns the transfer count after the last chunk. */
static uint32_t dm_hyper_copy_async(uint32_t l3, uint32_t l2, uint32_t size, int read)
{
    while (size > 0u) {
        uint32_t n = size < DM_HYPER_CHUNK ? size : DM_HYPER_CHUNK;
        uint32_t ch = DM_HYPER_CH(0);
        while (dm_hyper_pending() >= DM_HYPER_FIFO) {
        }
        wr(ch + R_TWD_ACT, 0u);
        wr(ch + R_TWD_COUNT, 0u);
        wr(ch + R_TWD_STRIDE, 0u);
        wr(ch + R_TWD_ACT_L2, 0u);
        wr(ch + R_TWD_COUNT_L2, 0u);
        wr(ch + R_TWD_STRIDE_L2, 0u);
        wr(ch + R_CA_SETUP, read ? 0x5u : 0x1u);
        wr(ch + R_HYPER_ADDR, l3);
        if (read) {
            wr(ch + R_RX_SADDR, l2);
            wr(ch + R_RX_SIZE, n);
            wr(ch + R_RX_CFG, CFG_EN);
        } else {
            wr(ch + R_TX_SADDR, l2);
            wr(ch + R_TX_SIZE, n);
            wr(ch + R_TX_CFG, CFG_EN);
        }
        dm_hyper_issued++;
        l3 += n;
        l2 += n;
        size -= n;
    }
    return dm_hyper_issued;
}

static void dm_hyper_copy(uint32_t l3, uint32_t l2, uint32_t size, int read)
{
    dm_hyper_wait_seq(dm_hyper_copy_async(l3, l2, size, read));
}

void pi_ram_read(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size)
{
    (void)device;
    dm_hyper_copy(pi_ram_addr, (uint32_t)data, size, 1);
}

void pi_ram_write(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size)
{
    (void)device;
    dm_hyper_copy(pi_ram_addr, (uint32_t)data, size, 0);
}

void pi_cl_ram_copy(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                    int ext2loc, pi_cl_ram_req_t *req)
{
    (void)device;
    req->seq = dm_hyper_copy_async(pi_ram_addr, (uint32_t)addr, size, ext2loc);
    req->done = 1u;
}

void pi_cl_ram_copy_2d(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                       uint32_t stride, uint32_t length, int ext2loc, pi_cl_ram_req_t *req)
{
    (void)device;
    uint32_t l2 = (uint32_t)addr;
    uint32_t seq = dm_hyper_issued;
    while (size > 0u) {
        uint32_t n = size < length ? size : length;
        seq = dm_hyper_copy_async(pi_ram_addr, l2, n, ext2loc);
        pi_ram_addr += stride;
        l2 += n;
        size -= n;
    }
    req->seq = seq;
    req->done = 1u;
}

/* Until this request's chunks are done (the copies issued after it may still
 * fly); a request nothing was issued on returns at once. */
void pi_cl_ram_copy_wait(pi_cl_ram_req_t *req)
{
    if (req->done) {
        dm_hyper_wait_seq(req->seq);
    }
}
