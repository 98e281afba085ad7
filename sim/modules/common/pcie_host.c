/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Root complex + host memory model for harnesses without RTL. Accepts the device's MWr into its
 * memory windows (writes outside every window are counted as rogue and dropped), answers MRd with
 * CplD split at RCB boundaries and at most MPS bytes (UR outside the windows, or as configured by
 * the fail rules), and issues configuration and memory requests to the device. Event driven: time
 * jumps from one event to the next.
 */
#include <stdlib.h>
#include <string.h>
#include "pcie_sim.h"

void pcie_host_init(pcie_host_t *h, pcie_ep_t *ep)
{
    memset(h, 0, sizeof(*h));
    h->ep = ep;
    h->rcb = 64;
    h->mps = 256;
    h->cpl_latency_ps = 200 * PS_PER_NS;
}

void pcie_host_destroy(pcie_host_t *h)
{
    for (int i = 0; i < h->nregions; i++) free(h->regions[i].mem);
    h->nregions = 0;
    tlpq_drain(&h->cpl_wait, &h->ep->link.pool);
    free(h->trace);
    h->trace = NULL;
}

int pcie_host_map(pcie_host_t *h, uint64_t base, uint64_t size)
{
    if (h->nregions >= 16 || !size) return -1;
    uint8_t *m = calloc(1, size);
    if (!m) return -1;
    h->regions[h->nregions++] = (pcie_host_region_t){ base, size, m };
    return 0;
}

uint8_t *pcie_host_ptr(pcie_host_t *h, uint64_t addr, uint64_t len)
{
    for (int i = 0; i < h->nregions; i++) {
        pcie_host_region_t *r = &h->regions[i];
        if (addr >= r->base && addr + len <= r->base + r->size)
            return r->mem + (addr - r->base);
    }
    return NULL;
}

static void trace(pcie_host_t *h, const pcie_tlp_t *t, int dir, ps_t now)
{
    if (!h->trace_on) return;
    if (h->trace_n >= h->trace_cap) {
        size_t cap = h->trace_cap ? h->trace_cap * 2 : 4096;
        if (cap > (1u << 22)) return;
        pcie_trace_rec_t *n = realloc(h->trace, cap * sizeof(*n));
        if (!n) return;
        h->trace = n;
        h->trace_cap = cap;
    }
    pcie_trace_rec_t *r = &h->trace[h->trace_n++];
    r->t_ps = now;
    r->hdr0 = t->hdr[0]; r->hdr1 = t->hdr[1]; r->hdr2 = t->hdr[2];
    unsigned ft = tlp_fmttype(t);
    r->addr = (ft == TLP_MRD32 || ft == TLP_MRD64 || ft == TLP_MWR32 || ft == TLP_MWR64) ? tlp_addr(t) : 0;
    r->dir = dir;
    r->plen = t->plen;
}

void pcie_host_send(pcie_host_t *h, pcie_tlp_t *t)
{
    trace(h, t, 0, h->ep->now);
    pcie_link_dn_send(&h->ep->link, t, h->ep->now);
}

static pcie_host_fail_t *match_fail(pcie_host_t *h, uint64_t a, unsigned len)
{
    for (int i = 0; i < h->nfails; i++) {
        pcie_host_fail_t *f = &h->fails[i];
        if (f->count != 0 && a < f->hi && a + len > f->lo) {
            if (f->count > 0) f->count--;
            return f;
        }
    }
    return NULL;
}

static void host_completions(pcie_host_t *h, pcie_tlp_t *req, ps_t now)
{
    pcie_link_t *l = &h->ep->link;
    uint64_t addr = tlp_addr(req);
    unsigned len = tlp_len_dw(req) * 4, fb = tlp_first_byte(req);
    unsigned total = tlp_req_bytes(req);
    pcie_host_fail_t *f = match_fail(h, addr, len);
    uint8_t *mem = pcie_host_ptr(h, addr, len);
    unsigned status = CPL_SC;
    if (f && f->drop) return;
    if (f && f->status) status = f->status;
    if (!mem && status == CPL_SC) { h->rogue_reads++; if (!h->rogue_first_addr) h->rogue_first_addr = addr; status = CPL_UR; }
    ps_t at = now + h->cpl_latency_ps;
    if (status != CPL_SC) {
        pcie_tlp_t *c = pcie_tlp_alloc(&l->pool);
        tlp_build_cpl(c, 0x0000, status, total, tlp_req_id(req), tlp_tag(req), 0, NULL, 0);
        trace(h, c, 0, at);
        pcie_link_dn_send(l, c, at);
        return;
    }
    unsigned pos = 0, remaining = total;
    while (pos < len) {
        uint64_t a = addr + pos;
        unsigned chunk = len - pos;
        if (chunk > h->mps) {
            uint64_t end = (a + h->mps) & ~(uint64_t)(h->rcb - 1);
            chunk = (unsigned)(end - a);
        }
        pcie_tlp_t *c = pcie_tlp_alloc(&l->pool);
        unsigned la = (unsigned)((a & 0x7f) + (pos == 0 ? fb : 0));
        tlp_build_cpl(c, 0x0000, CPL_SC, remaining & 0xfff, tlp_req_id(req), tlp_tag(req), la,
            mem + pos, chunk / 4);
        if (f && f->poison) c->hdr[0] |= 1u << 14;
        trace(h, c, 0, at);
        pcie_link_dn_send(l, c, at);
        remaining -= pos == 0 ? chunk - fb : chunk;
        pos += chunk;
    }
}

void pcie_host_deliver(pcie_host_t *h, pcie_tlp_t *t, ps_t now)
{
    pcie_ep_t *ep = h->ep;
    unsigned ft = tlp_fmttype(t);
    trace(h, t, 1, now);
    if (t->flags & TLPF_MALFORMED) { h->malformed_rx++; return; }
    if (ft == TLP_MWR32 || ft == TLP_MWR64 || ft == TLP_MRD32 || ft == TLP_MRD64) {
        uint64_t a = tlp_addr(t);
        unsigned len = tlp_len_dw(t) * 4;
        if (((a & 0xfff) + len) > 4096) h->boundary_violations++;
        if (ft == TLP_MRD32 || ft == TLP_MRD64) {
            h->mrd_tlps++;
            h->mrd_bytes += len;
            if (len > pcie_cfg_mrrs(&ep->cs)) h->mrrs_violations++;
            host_completions(h, t, now);
            return;
        }
        h->mwr_tlps++;
        if (len > pcie_cfg_mps(&ep->cs)) h->mps_violations++;
        if (t->plen != len) { h->malformed_rx++; return; }
        if (tlp_ep(t)) { h->poisoned_rx++; return; }
        uint8_t *mem = pcie_host_ptr(h, a, len);
        if (!mem) {
            h->rogue_writes++;
            if (!h->rogue_first_addr) h->rogue_first_addr = a;
            return;
        }
        h->mwr_bytes += len;
        unsigned fbe = tlp_fbe(t), lbe = len > 4 ? tlp_lbe(t) : tlp_fbe(t);
        if (fbe == 0xf && lbe == 0xf) { memcpy(mem, t->data, len); return; }
        for (unsigned i = 0; i < len; i++) {
            unsigned dw = i / 4, b = i % 4;
            unsigned be = dw == 0 ? fbe : (dw == len / 4 - 1 ? lbe : 0xf);
            if (be & (1u << b)) mem[i] = t->data[i];
        }
        return;
    }
    if ((ft & 0xbe) == TLP_CPL) {
        unsigned tag = cpl_tag(t);
        if (tag >= 32 || !h->req[tag].busy) return;
        unsigned st = cpl_status(t);
        h->req[tag].status = st;
        if (st == CPL_SC && t->plen) {
            unsigned room = sizeof(h->req[tag].data) - h->req[tag].bytes;
            unsigned n = t->plen < room ? t->plen : room;
            memcpy((uint8_t *)h->req[tag].data + h->req[tag].bytes, t->data, n);
            h->req[tag].bytes += n;
            if (cpl_bc(t) > (t->plen - (cpl_lower_addr(t) & 3))) return;  /* more to come */
        }
        if (tlp_ep(t)) h->poisoned_rx++;
        h->req[tag].done = 1;
        return;
    }
    h->msgs_rx++;
}

/* One step of the event loop: returns the time of the next event. */
static ps_t host_step(pcie_host_t *h, ps_t now, int *progress)
{
    pcie_ep_t *ep = h->ep;
    pcie_link_t *l = &ep->link;
    ps_t nx = pcie_ep_service(ep, now);
    pcie_tlp_t *t;
    *progress = 0;
    while ((t = l->up_flight.head) && t->t <= now) {
        t = pcie_link_up_take(l, now);
        pcie_host_deliver(h, t, now);
        pcie_tlp_free(&l->pool, t);
        *progress = 1;
    }
    if (l->up_flight.head && l->up_flight.head->t < nx) nx = l->up_flight.head->t;
    if (l->dn_flight.head && l->dn_flight.head->t < nx) nx = l->dn_flight.head->t;
    return nx;
}

static int run(pcie_host_t *h, volatile int *flag, int (*pred)(void *), void *arg, ps_t limit)
{
    ps_t now = h->ep->now;
    for (;;) {
        int progress;
        ps_t nx = host_step(h, now, &progress);
        if (flag && *flag) return 1;
        if (pred && pred(arg)) return 1;
        if (progress) continue;
        if (nx > limit) {
            if (now < limit) { h->ep->now = limit; pcie_ep_service(h->ep, limit); }
            if (flag) return *flag != 0;
            if (pred) return pred(arg);
            return 0;
        }
        now = nx > now ? nx : now + 1;
    }
}

void pcie_host_run_until(pcie_host_t *h, ps_t t) { run(h, NULL, NULL, NULL, t); }
int  pcie_host_run_flag(pcie_host_t *h, volatile int *flag, ps_t limit) { return run(h, flag, NULL, NULL, limit); }
int  pcie_host_run_pred(pcie_host_t *h, int (*pred)(void *), void *arg, ps_t limit) { return run(h, NULL, pred, arg, limit); }

static int alloc_req(pcie_host_t *h)
{
    for (unsigned i = 0; i < 32; i++) {
        unsigned tag = (h->next_tag + i) % 32;
        if (!h->req[tag].busy) {
            h->next_tag = tag + 1;
            memset(&h->req[tag], 0, sizeof(h->req[tag]));
            h->req[tag].busy = 1;
            return (int)tag;
        }
    }
    return -1;
}

int pcie_host_cfg(pcie_host_t *h, int write, unsigned reg, uint32_t *val, unsigned be, ps_t timeout)
{
    int tag = alloc_req(h);
    if (tag < 0) return -1;
    pcie_tlp_t *t = pcie_tlp_alloc(&h->ep->link.pool);
    tlp_build_cfg(t, write, 0, 0x0100, reg, 0x0000, tag, be, write ? *val : 0);
    pcie_host_send(h, t);
    int ok = run(h, &h->req[tag].done, NULL, NULL, h->ep->now + timeout);
    h->req[tag].busy = 0;
    if (!ok) return -1;
    if (!write && h->req[tag].status == CPL_SC) memcpy(val, h->req[tag].data, 4);
    return h->req[tag].status;
}

int pcie_host_mmio(pcie_host_t *h, int write, uint64_t addr, void *buf, unsigned len, ps_t timeout)
{
    pcie_tlp_t *t = pcie_tlp_alloc(&h->ep->link.pool);
    unsigned ndw = (len + 3) / 4;
    if (write) {
        tlp_build_mem(t, 1, addr, ndw, 0x0000, 0, 0xf, ndw > 1 ? 0xf : 0, NULL, 0);
        memset(t->data, 0, ndw * 4);
        memcpy(t->data, buf, len);
        pcie_host_send(h, t);
        return 0;
    }
    int tag = alloc_req(h);
    if (tag < 0) { pcie_tlp_free(&h->ep->link.pool, t); return -1; }
    tlp_build_mem(t, 0, addr, ndw, 0x0000, tag, 0xf, ndw > 1 ? 0xf : 0, NULL, 0);
    pcie_host_send(h, t);
    int ok = run(h, &h->req[tag].done, NULL, NULL, h->ep->now + timeout);
    h->req[tag].busy = 0;
    if (!ok) return -1;
    if (h->req[tag].status == CPL_SC) memcpy(buf, h->req[tag].data, len);
    return h->req[tag].status;
}
