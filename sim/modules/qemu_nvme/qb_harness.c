/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Standalone harness (libqemubridge.so, no RTL): the bridge + QEMU + the common root-complex /
 * host-memory model (pcie_host.c), driven through a C API for ctypes (sim/qemu.py: QemuNVMe). The
 * host-side calls (memory, config, MMIO, run, trace ...) are the common ones of pcie_harness.c
 * (pch_*, on the same handle), as in the simulated SSD's harness (ssd_harness.c), so that the same
 * Python NVMe helpers drive both; here the bridge's own (qbh_*).
 */
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include "qemu_nvme.h"
#include "pcie_harness.h"

typedef struct qbh {
    pcie_host_t host;   /* first: the handle is the pch_* calls' host (pcie_harness.h) */
    qb_t       *b;
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

/* QEMU's view of host memory (the shared memory of the bridge). */
int qbh_shm_read(qbh_t *h, uint64_t addr, void *buf, uint64_t len)
{
    qb_t *b = h->b;
    if (!b->q.mem || addr > b->c.mem_top || len > b->c.mem_top - addr) return -1;
    memcpy(buf, b->q.mem + addr, len);
    return 0;
}

int qbh_stats(qbh_t *h, uint64_t *o, int n)
{
    qb_stats_t *s = &h->b->st;
    /* This model's own, in the order of sim/qemu.py QEMU_STATS after PCIE_HOST_STATS. */
    uint64_t own[] = {
        (uint64_t)h->b->fatal, (uint64_t)h->b->inflight, h->host.ep->link.pool.in_use,
        s->cfg_reads, s->cfg_writes, s->bar_reads, s->bar_writes, s->doorbells, s->cmds, s->cqes,
        s->fetch_bytes, s->fetch_jobs, s->wb_bytes, s->sqe_bytes, s->list_bytes, s->dma_failures,
        s->neutered, s->unknown_cqes, s->timeouts, h->b->q.requests, s->zeroed_bytes, s->intx_events,
        s->cfs_events, s->flr, s->resets, s->no_mirror, (uint64_t)h->b->njobs, (uint64_t)h->b->nops,
    };
    return pch_stats_with(&h->host, own, (int)(sizeof(own) / sizeof(own[0])), o, n);
}
