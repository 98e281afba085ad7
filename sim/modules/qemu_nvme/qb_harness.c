/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Standalone harness (libqemubridge.so, no RTL): the bridge + QEMU + the common root-complex /
 * host-memory model (pcie_host.c), driven through a C API for ctypes (sim/qemu.py: QemuNVMe). The
 * same calls as the simulated SSD's harness (ssd_harness.c) with the prefix qbh_, so that the same
 * Python NVMe helpers drive both.
 */
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include "qemu_nvme.h"

typedef struct qbh {
    qb_t       *b;
    pcie_host_t host;
} qbh_t;

qbh_t *qbh_create(const char *json, char *err, int errlen)
{
    qbh_t *h = calloc(1, sizeof(*h));
    if (!h) { snprintf(err, errlen, "out of memory"); return NULL; }
    h->b = qb_create_json(json, err, (size_t)errlen);
    if (!h->b) { free(h); return NULL; }
    pcie_host_init(&h->host, &h->b->ep);
    return h;
}

void qbh_destroy(qbh_t *h)
{
    if (!h) return;
    pcie_host_destroy(&h->host);
    qb_destroy(h->b);
    free(h);
}

int      qbh_map(qbh_t *h, uint64_t base, uint64_t size) { return pcie_host_map(&h->host, base, size); }
uint64_t qbh_now(qbh_t *h) { return h->b->ep.now; }
void     qbh_run(qbh_t *h, uint64_t ps) { pcie_host_run_until(&h->host, h->b->ep.now + ps); }
void     qbh_run_until(qbh_t *h, uint64_t t) { pcie_host_run_until(&h->host, t); }
void     qbh_perst(qbh_t *h, int asserted) { pcie_ep_set_perst(&h->b->ep, asserted, h->b->ep.now); pcie_ep_kick(&h->b->ep); }
int      qbh_busy(qbh_t *h) { return qb_busy(h->b); }
int      qbh_qemu_pid(qbh_t *h) { return (int)h->b->q.pid; }
int      qbh_kill_qemu(qbh_t *h, int sig) { return h->b->q.pid > 0 ? kill(h->b->q.pid, sig) : -1; }
int      qbh_fatal(qbh_t *h, char *why, int n) { snprintf(why, (size_t)n, "%s", h->b->fatal_why); return h->b->fatal; }
void     qbh_config(qbh_t *h, char *out, int n)
{
    qb_t *b = h->b;
    snprintf(out, (size_t)n, "bar_size=%u reg_size=%u dstrd=%u pcie_cap=0x%x pm_cap=0x%x mdts=%u log=%s image=%s",
        b->qemu_bar_size, b->reg_size, b->dstrd, b->pcie_cap, b->pm_cap, b->mdts, b->c.log_path, b->c.image);
}

int qbh_mem_write(qbh_t *h, uint64_t addr, const void *buf, uint64_t len)
{
    uint8_t *p = pcie_host_ptr(&h->host, addr, len);
    if (!p) return -1;
    memcpy(p, buf, len);
    return 0;
}

int qbh_mem_read(qbh_t *h, uint64_t addr, void *buf, uint64_t len)
{
    uint8_t *p = pcie_host_ptr(&h->host, addr, len);
    if (!p) return -1;
    memcpy(buf, p, len);
    return 0;
}

/* QEMU's view of host memory (the shared memory of the bridge). */
int qbh_shm_read(qbh_t *h, uint64_t addr, void *buf, uint64_t len)
{
    qb_t *b = h->b;
    if (!b->q.mem || addr > b->c.mem_top || len > b->c.mem_top - addr) return -1;
    memcpy(buf, b->q.mem + addr, len);
    return 0;
}

int qbh_cfg_read(qbh_t *h, unsigned reg, uint32_t *val, uint64_t timeout)
{
    return pcie_host_cfg(&h->host, 0, reg, val, 0xf, timeout);
}

int qbh_cfg_write(qbh_t *h, unsigned reg, uint32_t val, unsigned be, uint64_t timeout)
{
    return pcie_host_cfg(&h->host, 1, reg, &val, be, timeout);
}

int qbh_mmio_read(qbh_t *h, uint64_t addr, void *buf, unsigned len, uint64_t timeout)
{
    return pcie_host_mmio(&h->host, 0, addr, buf, len, timeout);
}

int qbh_mmio_write(qbh_t *h, uint64_t addr, const void *buf, unsigned len)
{
    return pcie_host_mmio(&h->host, 1, addr, (void *)buf, len, 0);
}

typedef struct { qbh_t *h; uint64_t addr; uint32_t mask, value; } memwait_t;
static int memwait_pred(void *a)
{
    memwait_t *w = a;
    uint32_t v;
    if (qbh_mem_read(w->h, w->addr, &v, 4)) return 0;
    return (v & w->mask) == w->value;
}

/* Run until the host memory dword at addr satisfies (v & mask) == value; 1 if it did. While QEMU
 * works, modeled time advances by poll_ns per block_us of wall time (the bridge waits for it). */
int qbh_wait_mem(qbh_t *h, uint64_t addr, uint32_t mask, uint32_t value, uint64_t timeout)
{
    memwait_t w = { h, addr, mask, value };
    return pcie_host_run_pred(&h->host, memwait_pred, &w, h->b->ep.now + timeout);
}

void qbh_host_cfg(qbh_t *h, unsigned rcb, unsigned mps, uint64_t cpl_latency_ps)
{
    pcie_host_configure(&h->host, rcb, mps, cpl_latency_ps);
}

int qbh_host_fail(qbh_t *h, uint64_t lo, uint64_t hi, int status, int count, int poison, int drop)
{
    return pcie_host_add_fail(&h->host, lo, hi, status, count, poison, drop);
}

void qbh_host_fail_clear(qbh_t *h) { h->host.nfails = 0; }

void qbh_trace(qbh_t *h, int on) { h->host.trace_on = on; }
void qbh_trace_clear(qbh_t *h) { h->host.trace_n = 0; }
uint64_t qbh_trace_count(qbh_t *h) { return h->host.trace_n; }
int qbh_trace_get(qbh_t *h, uint64_t i, pcie_trace_rec_t *r) { return pcie_host_trace_get(&h->host, i, r); }

/* Raw TLP to the device: header dwords, payload; malformed marks a TLP the PHY found bad. */
void qbh_send_raw(qbh_t *h, const uint32_t *hdr, int nhdr, const uint8_t *payload, unsigned plen, int malformed)
{
    pcie_host_send_raw(&h->host, hdr, nhdr, payload, plen, malformed);
}

int qbh_stats(qbh_t *h, uint64_t *o, int n)
{
    qb_stats_t *s = &h->b->st;
    uint64_t v[128];
    int k = pcie_host_stats(&h->host, v);
    /* Then this model's own, in the order of sim/qemu.py QEMU_STATS after PCIE_HOST_STATS. */
    uint64_t own[] = {
        (uint64_t)h->b->fatal, (uint64_t)h->b->inflight, h->host.ep->link.pool.in_use,
        s->cfg_reads, s->cfg_writes, s->bar_reads, s->bar_writes, s->doorbells, s->cmds, s->cqes,
        s->fetch_bytes, s->fetch_jobs, s->wb_bytes, s->sqe_bytes, s->list_bytes, s->dma_failures,
        s->neutered, s->unknown_cqes, s->timeouts, h->b->q.requests, s->zeroed_bytes, s->intx_events,
        s->cfs_events, s->flr, s->resets, s->no_mirror, (uint64_t)h->b->njobs, (uint64_t)h->b->nops,
    };
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) v[k++] = own[i];
    for (int i = 0; i < n && i < k; i++) o[i] = v[i];
    return k;
}
