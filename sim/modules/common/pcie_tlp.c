/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * TLP pool, queues, header builders and parsers.
 */
#include <stdlib.h>
#include <string.h>
#include "pcie_sim.h"

pcie_tlp_t *pcie_tlp_alloc(pcie_tlp_pool_t *pool)
{
    pcie_tlp_t *t = pool->free;
    if (t)
        pool->free = t->next;
    else {
        t = malloc(sizeof(*t));
        if (!t) { fprintf(stderr, "pcie: out of memory\n"); abort(); }
        pool->allocated++;
    }
    pool->in_use++;
    t->next = NULL; t->t = 0; t->plen = 0; t->nhdr = 3; t->flags = 0;
    memset(t->hdr, 0, sizeof(t->hdr));
    return t;
}

void pcie_tlp_free(pcie_tlp_pool_t *pool, pcie_tlp_t *t)
{
    if (!t) return;
    t->next = pool->free;
    pool->free = t;
    pool->in_use--;
}

void pcie_tlp_pool_destroy(pcie_tlp_pool_t *pool)
{
    while (pool->free) {
        pcie_tlp_t *n = pool->free->next;
        free(pool->free);
        pool->free = n;
    }
    pool->allocated = 0;
}

void tlpq_push(tlpq_t *q, pcie_tlp_t *t)
{
    t->next = NULL;
    if (q->tail) q->tail->next = t; else q->head = t;
    q->tail = t;
    q->n++;
    q->bytes += tlp_wire_bytes(t);
}

pcie_tlp_t *tlpq_pop(tlpq_t *q)
{
    pcie_tlp_t *t = q->head;
    if (!t) return NULL;
    q->head = t->next;
    if (!q->head) q->tail = NULL;
    q->n--;
    q->bytes -= tlp_wire_bytes(t);
    t->next = NULL;
    return t;
}

void tlpq_drain(tlpq_t *q, pcie_tlp_pool_t *pool)
{
    pcie_tlp_t *t;
    while ((t = tlpq_pop(q)))
        pcie_tlp_free(pool, t);
}

uint64_t tlp_addr(const pcie_tlp_t *t)
{
    if (tlp_is_4dw(t))
        return ((uint64_t)t->hdr[2] << 32) | (t->hdr[3] & ~3u);
    return t->hdr[2] & ~3u;
}

void tlp_build_mem(pcie_tlp_t *t, int write, uint64_t addr, unsigned len_dw, unsigned req_id,
    unsigned tag, unsigned fbe, unsigned lbe, const void *data, int force64)
{
    int is64 = force64 || (addr >> 32) != 0;
    unsigned ft = (write ? 0x40 : 0x00) | (is64 ? 0x20 : 0x00);
    t->hdr[0] = (ft << 24) | (len_dw & 0x3ff);
    t->hdr[1] = ((req_id & 0xffff) << 16) | ((tag & 0xff) << 8) | ((lbe & 0xf) << 4) | (fbe & 0xf);
    if (is64) {
        t->hdr[2] = addr >> 32;
        t->hdr[3] = (uint32_t)addr & ~3u;
        t->nhdr = 4;
    } else {
        t->hdr[2] = (uint32_t)addr & ~3u;
        t->hdr[3] = 0;
        t->nhdr = 3;
    }
    t->plen = 0;
    if (write) {
        t->plen = len_dw * 4;
        if (data) memcpy(t->data, data, t->plen);
    }
}

void tlp_build_cfg(pcie_tlp_t *t, int write, int type1, unsigned bdf, unsigned reg,
    unsigned req_id, unsigned tag, unsigned fbe, uint32_t data)
{
    unsigned ft = (write ? 0x44 : 0x04) | (type1 ? 1 : 0);
    t->hdr[0] = (ft << 24) | 1;
    t->hdr[1] = ((req_id & 0xffff) << 16) | ((tag & 0xff) << 8) | (fbe & 0xf);
    t->hdr[2] = ((bdf & 0xffff) << 16) | (reg & 0xffc);
    t->hdr[3] = 0;
    t->nhdr = 3;
    t->plen = 0;
    if (write) {
        t->plen = 4;
        memcpy(t->data, &data, 4);
    }
}

void tlp_build_cpl(pcie_tlp_t *t, unsigned cpl_id, unsigned status, unsigned byte_count,
    unsigned req_id, unsigned tag, unsigned lower_addr, const void *data, unsigned len_dw)
{
    unsigned ft = data ? TLP_CPLD : TLP_CPL;
    t->hdr[0] = (ft << 24) | (data ? (len_dw & 0x3ff) : 0);
    t->hdr[1] = ((cpl_id & 0xffff) << 16) | ((status & 7) << 13) | (byte_count & 0xfff);
    t->hdr[2] = ((req_id & 0xffff) << 16) | ((tag & 0xff) << 8) | (lower_addr & 0x7f);
    t->hdr[3] = 0;
    t->nhdr = 3;
    t->plen = 0;
    if (data) {
        t->plen = len_dw * 4;
        memcpy(t->data, data, t->plen);
    }
}

static unsigned first_set(unsigned be) { for (unsigned i = 0; i < 4; i++) if (be & (1u << i)) return i; return 4; }
static unsigned last_set(unsigned be)  { for (int i = 3; i >= 0; i--) if (be & (1u << i)) return i; return 0; }

unsigned tlp_first_byte(const pcie_tlp_t *t)
{
    unsigned fbe = tlp_fbe(t);
    return fbe ? first_set(fbe) : 0;
}

unsigned tlp_req_bytes(const pcie_tlp_t *t)
{
    unsigned n = tlp_len_dw(t), fbe = tlp_fbe(t), lbe = tlp_lbe(t);
    if (n == 1) {
        if (!fbe) return 1;   /* zero-length read: byte count 1 */
        return last_set(fbe) - first_set(fbe) + 1;
    }
    return n * 4 - first_set(fbe) - (3 - last_set(lbe));
}

const char *tlp_describe(const pcie_tlp_t *t, char *buf, size_t len)
{
    const char *name;
    switch (tlp_fmttype(t)) {
    case TLP_MRD32: name = "MRd32"; break;   case TLP_MRD64: name = "MRd64"; break;
    case TLP_MWR32: name = "MWr32"; break;   case TLP_MWR64: name = "MWr64"; break;
    case TLP_CFGRD0: name = "CfgRd0"; break; case TLP_CFGWR0: name = "CfgWr0"; break;
    case TLP_CPL: name = "Cpl"; break;       case TLP_CPLD: name = "CplD"; break;
    default: name = "TLP"; break;
    }
    if ((tlp_fmttype(t) & 0xbe) == TLP_CPL)
        snprintf(buf, len, "%s tag=%u st=%u bc=%u la=0x%02x len=%u", name, cpl_tag(t), cpl_status(t),
            cpl_bc(t), cpl_lower_addr(t), t->plen);
    else
        snprintf(buf, len, "%s(0x%02x) tag=%u len=%u addr=0x%llx", name, tlp_fmttype(t), tlp_tag(t),
            tlp_len_dw(t) * 4, (unsigned long long)tlp_addr(t));
    return buf;
}
