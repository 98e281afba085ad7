/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Standalone harness (libsimssd.so, no RTL): the SSD model + the common root-complex/host-memory
 * model, driven through a C API for ctypes (sim/ssd.py). The host-side calls (memory, config,
 * MMIO, run, trace ...) are the common ones of pcie_harness.c (pch_*, on the same handle); here the
 * SSD's own (ssdh_*) and a small NVMe streaming host for throughput runs (keeps QD commands in
 * flight, polls the CQ in host memory).
 */
#include <stdlib.h>
#include <string.h>
#include "ssd.h"
#include "pcie_harness.h"

typedef struct ssdh {
    pcie_host_t host;   /* first: the handle is the pch_* calls' host (pcie_harness.h) */
    ssd_t      *s;
} ssdh_t;

ssdh_t *ssdh_create(const char *json, char *err, int errlen)
{
    ssdh_t *h = calloc(1, sizeof(*h));
    if (!h) { snprintf(err, errlen, "out of memory"); return NULL; }
    h->s = ssd_create_json(json, err, (size_t)errlen);
    if (!h->s) { free(h); return NULL; }
    pcie_host_init(&h->host, &h->s->ep);
    return h;
}

void ssdh_destroy(ssdh_t *h)
{
    if (!h) return;
    pcie_host_destroy(&h->host);
    ssd_destroy(h->s);
    free(h);
}

int ssdh_control(ssdh_t *h, const char *cmd, char *out, int outlen)
{
    return ssd_control(h->s, cmd, out, (size_t)outlen);
}

void ssdh_poll_control(ssdh_t *h) { ssd_poll_control(h->s); }

int ssdh_stats(ssdh_t *h, uint64_t *o, int n)
{
    /* This model's own, in the order of sim/ssd.py HOST_STATS after PCIE_HOST_STATS. */
    uint64_t own[] = {
        h->s->csts, h->s->fatal, (uint64_t)h->s->nactive, h->host.ep->link.pool.in_use,
    };
    return pch_stats_with(&h->host, own, (int)(sizeof(own) / sizeof(own[0])), o, n);
}

/* Model state for tests (doubles): temperature, cache levels, rates ... (see sim/ssd.py). */
int ssdh_model(ssdh_t *h, double *o, int n)
{
    ssd_t *s = h->s;
    s->now = s->now > s->ep.now ? s->now : s->ep.now;
    ssd_media_idle(s, s->now);
    ssd_thermal(s, s->now);
    double v[] = {
        s->temp, (double)s->throttle, s->cache_used, s->cache2_used, (double)s->valid_units,
        (double)s->stale_units, (double)s->erased_units, (double)s->phys_units, (double)s->tmt_count[1],
        (double)s->tmt_count[2], s->tmt_time[1], s->tmt_time[2], (double)s->bytes_written,
        (double)s->bytes_read, (double)s->media_free, (double)s->err_count, (double)s->gc_phase,
    };
    int k = (int)(sizeof(v) / sizeof(v[0]));
    for (int i = 0; i < n && i < k; i++) o[i] = v[i];
    return k;
}

/* --- streaming host ---------------------------------------------------------------------------- */

typedef struct ssdh_stream {
    /* queue (the caller created it) */
    uint64_t sq_base, cq_base, bar0;
    uint32_t sqid, cqid, sq_size, cq_size, dstrd;
    uint32_t sq_tail, cq_head, phase;     /* in/out state */
    /* workload */
    uint32_t opcode, nlb;                 /* nlb 0's based */
    uint32_t lba_size, qd, random, cid_base;
    uint64_t slba, lba_range, ncmds, seed;
    uint64_t buf_base, buf_slot;          /* data buffer of slot i: buf_base + i * buf_slot */
    uint64_t prp_base;                    /* PRP list of slot i: prp_base + i * 4096 */
    uint64_t timeout_ps;
    /* results */
    uint64_t done, errors, first_status, t_start, t_end;
    uint64_t *t_complete;                 /* optional: completion time of each command */
} ssdh_stream_t;

typedef struct { ssdh_t *h; ssdh_stream_t *st; } cqwait_t;
static int cq_pred(void *a)
{
    cqwait_t *w = a;
    uint32_t v;
    pch_mem_read(&w->h->host, w->st->cq_base + (uint64_t)w->st->cq_head * 16 + 12, &v, 4);
    return ((v >> 16) & 1) == w->st->phase;
}

int ssdh_stream(ssdh_t *h, ssdh_stream_t *st)
{
    uint64_t submitted = 0, inflight = 0;
    uint64_t bytes = (uint64_t)(st->nlb + 1) * st->lba_size;
    uint64_t rng = st->seed ? st->seed : 1;
    uint32_t stride = 4u << st->dstrd;
    st->done = st->errors = st->first_status = 0;
    st->t_start = h->s->ep.now;
    uint64_t *slot_busy = calloc(st->qd, sizeof(uint64_t));
    uint16_t *cid_slot = calloc(65536, sizeof(uint16_t));
    uint32_t next_slot = 0;
    int rc = 0;
    while (st->done < st->ncmds) {
        int rung = 0;
        while (inflight < st->qd && submitted < st->ncmds) {
            while (slot_busy[next_slot]) next_slot = (next_slot + 1) % st->qd;
            uint32_t slot = next_slot;
            slot_busy[slot] = 1;
            uint64_t buf = st->buf_base + slot * st->buf_slot;
            uint64_t lba;
            if (st->random) {
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
                uint64_t span = st->lba_range / (st->nlb + 1);
                lba = st->slba + (span ? (rng % span) * (st->nlb + 1) : 0);
            } else {
                lba = st->slba + (submitted * (st->nlb + 1)) % (st->lba_range ? st->lba_range : UINT64_MAX);
            }
            uint32_t sqe[16];
            memset(sqe, 0, sizeof(sqe));
            uint16_t cid = (uint16_t)(st->cid_base + submitted);
            cid_slot[cid] = (uint16_t)slot;
            sqe[0] = st->opcode | ((uint32_t)cid << 16);
            sqe[1] = 1;
            sqe[6] = (uint32_t)buf; sqe[7] = (uint32_t)(buf >> 32);
            if (st->opcode == 1 || st->opcode == 2) {
                if (bytes > 8192) {
                    uint64_t pl = st->prp_base + slot * 4096ull;
                    uint64_t n = (bytes + 4095) / 4096;
                    for (uint64_t i = 1; i < n && i <= 512; i++) {
                        uint64_t a = buf + i * 4096;
                        pch_mem_write(&h->host, pl + (i - 1) * 8, &a, 8);
                    }
                    sqe[8] = (uint32_t)pl; sqe[9] = (uint32_t)(pl >> 32);
                } else if (bytes > 4096) {
                    uint64_t a = buf + 4096;
                    sqe[8] = (uint32_t)a; sqe[9] = (uint32_t)(a >> 32);
                }
                sqe[10] = (uint32_t)lba; sqe[11] = (uint32_t)(lba >> 32);
                sqe[12] = st->nlb;
            }
            pch_mem_write(&h->host, st->sq_base + (uint64_t)st->sq_tail * 64, sqe, 64);
            st->sq_tail = (st->sq_tail + 1) % st->sq_size;
            submitted++; inflight++;
            rung = 1;
        }
        if (rung) {
            uint32_t v = st->sq_tail;
            pch_mmio_write(&h->host, st->bar0 + 0x1000 + (2ull * st->sqid) * stride, &v, 4);
        }
        cqwait_t w = { h, st };
        if (!pcie_host_run_pred(&h->host, cq_pred, &w, h->s->ep.now + st->timeout_ps)) { rc = -1; break; }
        int consumed = 0;
        while (cq_pred(&w)) {
            uint32_t e[4];
            pch_mem_read(&h->host, st->cq_base + (uint64_t)st->cq_head * 16, e, 16);
            uint32_t status = e[3] >> 17;
            uint16_t cid = e[3] & 0xffff;
            if (status) { if (!st->errors) st->first_status = status; st->errors++; }
            slot_busy[cid_slot[cid]] = 0;
            if (st->t_complete && st->done < st->ncmds) st->t_complete[st->done] = h->s->ep.now;
            st->done++; inflight--;
            st->cq_head++;
            if (st->cq_head == st->cq_size) { st->cq_head = 0; st->phase ^= 1; }
            consumed = 1;
        }
        if (consumed) {
            uint32_t v = st->cq_head;
            pch_mmio_write(&h->host, st->bar0 + 0x1000 + (2ull * st->cqid + 1) * stride, &v, 4);
        }
    }
    st->t_end = h->s->ep.now;
    free(slot_busy);
    free(cid_slot);
    return rc;
}
