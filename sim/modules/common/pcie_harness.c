/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The host side shared by the standalone harness libraries (see pcie_harness.h): thin calls on the
 * root-complex + host-memory model (pcie_host.c) and its endpoint, for ctypes.
 */
#include <string.h>
#include "pcie_harness.h"

int      pch_map(pcie_host_t *h, uint64_t base, uint64_t size) { return pcie_host_map(h, base, size); }
uint64_t pch_now(pcie_host_t *h) { return h->ep->now; }
void     pch_run(pcie_host_t *h, uint64_t ps) { pcie_host_run_until(h, h->ep->now + ps); }
void     pch_run_until(pcie_host_t *h, uint64_t t) { pcie_host_run_until(h, t); }
void     pch_perst(pcie_host_t *h, int asserted) { pcie_ep_set_perst(h->ep, asserted, h->ep->now); pcie_ep_kick(h->ep); }

int pch_mem_write(pcie_host_t *h, uint64_t addr, const void *buf, uint64_t len)
{
    uint8_t *p = pcie_host_ptr(h, addr, len);
    if (!p) return -1;
    memcpy(p, buf, len);
    return 0;
}

int pch_mem_read(pcie_host_t *h, uint64_t addr, void *buf, uint64_t len)
{
    uint8_t *p = pcie_host_ptr(h, addr, len);
    if (!p) return -1;
    memcpy(buf, p, len);
    return 0;
}

int pch_cfg_read(pcie_host_t *h, unsigned reg, uint32_t *val, uint64_t timeout)
{
    return pcie_host_cfg(h, 0, reg, val, 0xf, timeout);
}

int pch_cfg_write(pcie_host_t *h, unsigned reg, uint32_t val, unsigned be, uint64_t timeout)
{
    return pcie_host_cfg(h, 1, reg, &val, be, timeout);
}

int pch_mmio_read(pcie_host_t *h, uint64_t addr, void *buf, unsigned len, uint64_t timeout)
{
    return pcie_host_mmio(h, 0, addr, buf, len, timeout);
}

int pch_mmio_write(pcie_host_t *h, uint64_t addr, const void *buf, unsigned len)
{
    return pcie_host_mmio(h, 1, addr, (void *)buf, len, 0);
}

typedef struct { pcie_host_t *h; uint64_t addr; uint32_t mask, value; } memwait_t;
static int memwait_pred(void *a)
{
    memwait_t *w = a;
    uint32_t v;
    if (pch_mem_read(w->h, w->addr, &v, 4)) return 0;
    return (v & w->mask) == w->value;
}

/* With the QEMU bridge, modeled time advances by poll_ns per block_us of wall time while QEMU works
 * (the bridge waits for it). */
int pch_wait_mem(pcie_host_t *h, uint64_t addr, uint32_t mask, uint32_t value, uint64_t timeout)
{
    memwait_t w = { h, addr, mask, value };
    return pcie_host_run_pred(h, memwait_pred, &w, h->ep->now + timeout);
}

void pch_host_cfg(pcie_host_t *h, unsigned rcb, unsigned mps, uint64_t cpl_latency_ps)
{
    h->rcb = rcb; h->mps = mps; h->cpl_latency_ps = cpl_latency_ps;
}

int pch_host_fail(pcie_host_t *h, uint64_t lo, uint64_t hi, int status, int count, int poison, int drop)
{
    if (h->nfails >= 8) return -1;
    h->fails[h->nfails++] = (pcie_host_fail_t){ lo, hi, status, count, poison, drop };
    return 0;
}

void pch_host_fail_clear(pcie_host_t *h) { h->nfails = 0; }

void     pch_trace(pcie_host_t *h, int on) { h->trace_on = on; }
void     pch_trace_clear(pcie_host_t *h) { h->trace_n = 0; }
uint64_t pch_trace_count(pcie_host_t *h) { return h->trace_n; }

int pch_trace_get(pcie_host_t *h, uint64_t i, pcie_trace_rec_t *r)
{
    if (i >= h->trace_n) return -1;
    *r = h->trace[i];
    return 0;
}

void pch_send_raw(pcie_host_t *h, const uint32_t *hdr, int nhdr, const uint8_t *payload, unsigned plen,
    int malformed)
{
    pcie_tlp_t *t = pcie_tlp_alloc(&h->ep->link.pool);
    memcpy(t->hdr, hdr, nhdr * 4);
    t->nhdr = (uint8_t)nhdr;
    if (plen > TLP_MAX_PAYLOAD) plen = TLP_MAX_PAYLOAD;
    t->plen = plen;
    if (plen) memcpy(t->data, payload, plen);
    if (malformed) t->flags |= TLPF_MALFORMED;
    pcie_host_send(h, t);
}

int pch_stats_with(pcie_host_t *x, const uint64_t *own, int nown, uint64_t *o, int n)
{
    pcie_link_t *l = &x->ep->link;
    pcie_ep_t   *e = x->ep;
    uint64_t s[] = {
        x->rogue_writes, x->rogue_reads, x->rogue_first_addr, x->mwr_bytes, x->mrd_bytes, x->mwr_tlps,
        x->mrd_tlps, x->poisoned_rx, x->malformed_rx, x->mps_violations, x->mrrs_violations,
        x->boundary_violations, x->msgs_rx, l->up_tlps, l->up_payload, l->up_wire, l->dn_tlps,
        l->dn_payload, l->dn_wire, l->dropped, e->ur_sent, e->ca_sent, e->crs_sent, e->malformed_rx,
        e->unexpected_cpl, e->dma_refused, e->cpl_timeouts, e->mrd_sent, e->mwr_sent, e->cpld_rx,
        e->max_mrd_len, e->max_mwr_len, l->up, l->cur_gen, l->cur_width, l->ltssm, l->link_downs,
        l->retrains,
    };
    uint64_t v[128];
    int k = (int)(sizeof(s) / sizeof(s[0]));
    memcpy(v, s, sizeof(s));
    for (int i = 0; i < nown && k < 128; i++) v[k++] = own[i];
    for (int i = 0; i < n && i < k; i++) o[i] = v[i];
    return k;
}
