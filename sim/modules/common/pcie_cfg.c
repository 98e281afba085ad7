/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Type-0 configuration space: 4 KiB of registers with writable and write-1-to-clear masks,
 * BAR sizing (writes of all-ones read back the size mask), capability list builders.
 */
#include <string.h>
#include "pcie_sim.h"

static void setw16(pcie_cfg_t *c, unsigned off, uint16_t m) { c->wmask[off] = m; c->wmask[off+1] = m >> 8; }
static void setw32(pcie_cfg_t *c, unsigned off, uint32_t m) { for (int i = 0; i < 4; i++) c->wmask[off+i] = m >> (8*i); }

void pcie_cfg_init(pcie_cfg_t *c, const pcie_cfg_ids_t *ids)
{
    memset(c, 0, sizeof(*c));
    pcie_cfg_w16(c, 0x00, ids->vendor);
    pcie_cfg_w16(c, 0x02, ids->device);
    setw16(c, 0x04, 0x0546);                  /* MEM, BME, parity, SERR, INTx disable */
    pcie_cfg_w16(c, 0x06, 0x0010);            /* capabilities list */
    c->w1cmask[0x07] = 0xf9;                  /* status error bits */
    c->data[0x08] = ids->revision;
    c->data[0x09] = ids->class_code & 0xff;
    c->data[0x0a] = (ids->class_code >> 8) & 0xff;
    c->data[0x0b] = (ids->class_code >> 16) & 0xff;
    c->wmask[0x0c] = 0xff;                    /* cache line size */
    c->data[0x0e] = 0x00;                     /* header type 0 */
    pcie_cfg_w16(c, 0x2c, ids->subsys_vendor);
    pcie_cfg_w16(c, 0x2e, ids->subsys);
    c->wmask[0x3c] = 0xff;                    /* interrupt line */
    c->data[0x3d] = 0x01;                     /* INTA# */
}

void pcie_cfg_add_bar(pcie_cfg_t *c, int bar, uint64_t size, int is64, int prefetch)
{
    unsigned off = 0x10 + 4 * bar;
    uint64_t mask = ~(size - 1);
    c->bar_mask[bar] = mask;
    c->bar64[bar] = is64;
    pcie_cfg_w32(c, off, (is64 ? 0x4 : 0) | (prefetch ? 0x8 : 0));
    setw32(c, off, (uint32_t)mask & ~0xfu);
    if (is64)
        setw32(c, off + 4, (uint32_t)(mask >> 32));
}

uint8_t pcie_cfg_add_cap(pcie_cfg_t *c, uint8_t id, unsigned size)
{
    uint8_t off = c->next_free ? c->next_free : 0x40;
    c->data[off] = id;
    c->data[off + 1] = 0;
    if (c->last_cap)
        c->data[c->last_cap + 1] = off;
    else
        c->data[0x34] = off;
    c->last_cap = off;
    c->next_free = (uint8_t)((off + size + 3) & ~3u);
    return off;
}

void pcie_cfg_add_pm(pcie_cfg_t *c)
{
    uint8_t o = pcie_cfg_add_cap(c, 0x01, 8);
    c->pm_cap = o;
    pcie_cfg_w16(c, o + 2, 0x0003);           /* PMC: version 3 */
    pcie_cfg_w16(c, o + 4, 0x0008);           /* PMCSR: D0, No_Soft_Reset */
    setw16(c, o + 4, 0x0003);
}

static unsigned mps_enc(unsigned bytes) { unsigned e = 0; while ((128u << e) < bytes && e < 5) e++; return e; }

void pcie_cfg_add_pcie(pcie_cfg_t *c, unsigned mps_bytes, int max_gen, int max_width)
{
    uint8_t o = pcie_cfg_add_cap(c, 0x10, 0x3c);
    c->pcie_cap = o;
    pcie_cfg_w16(c, o + 0x02, 0x0002);                            /* version 2, endpoint */
    pcie_cfg_w32(c, o + 0x04, mps_enc(mps_bytes) | (1u << 5) | (1u << 15)); /* DevCap */
    pcie_cfg_w16(c, o + 0x08, 0x2810);                            /* DevCtl: MRRS 512, RO, NS */
    setw16(c, o + 0x08, 0x7fff);
    c->w1cmask[o + 0x0a] = 0x0f;                                  /* DevSta error bits */
    pcie_cfg_w32(c, o + 0x0c, (max_gen & 0xf) | ((max_width & 0x3f) << 4) | (3u << 10));  /* LinkCap */
    setw16(c, o + 0x10, 0x00cb);                                  /* LinkCtl */
    pcie_cfg_w16(c, o + 0x12, 1u << 12);                          /* LinkSta: slot clock */
    pcie_cfg_w32(c, o + 0x24, 0x1f);                              /* DevCap2: CTO ranges A-D, disable */
    setw16(c, o + 0x28, 0x001f);                                  /* DevCtl2 */
    pcie_cfg_w32(c, o + 0x2c, ((1u << max_gen) - 1) << 1);         /* LinkCap2: speeds vector */
    pcie_cfg_w16(c, o + 0x30, max_gen & 0xf);                     /* LinkCtl2: target speed */
    setw16(c, o + 0x30, 0x000f);
}

void pcie_cfg_add_msix(pcie_cfg_t *c, unsigned vectors, int bar, uint32_t table_off, uint32_t pba_off)
{
    uint8_t o = pcie_cfg_add_cap(c, 0x11, 12);
    c->msix_cap = o;
    pcie_cfg_w16(c, o + 2, (vectors - 1) & 0x7ff);
    setw16(c, o + 2, 0xc000);
    pcie_cfg_w32(c, o + 4, table_off | bar);
    pcie_cfg_w32(c, o + 8, pba_off | bar);
}

uint32_t pcie_cfg_read32(const pcie_cfg_t *c, unsigned off)
{
    off &= 0xffc;
    return c->data[off] | (c->data[off+1] << 8) | (c->data[off+2] << 16) | ((uint32_t)c->data[off+3] << 24);
}

uint32_t pcie_cfg_write32(pcie_cfg_t *c, unsigned off, uint32_t val, unsigned be)
{
    off &= 0xffc;
    uint32_t old = pcie_cfg_read32(c, off);
    for (int i = 0; i < 4; i++) {
        if (!(be & (1u << i))) continue;
        uint8_t v = val >> (8 * i), m = c->wmask[off + i], w1c = c->w1cmask[off + i];
        uint8_t d = c->data[off + i];
        d = (d & ~m) | (v & m);
        d &= ~(v & w1c);
        c->data[off + i] = d;
    }
    return old;
}

uint64_t pcie_cfg_bar_addr(const pcie_cfg_t *c, int bar)
{
    uint64_t a = pcie_cfg_read32(c, 0x10 + 4 * bar) & ~0xfull;
    if (c->bar64[bar])
        a |= (uint64_t)pcie_cfg_read32(c, 0x14 + 4 * bar) << 32;
    return a;
}

int pcie_cfg_bar_hit(const pcie_cfg_t *c, uint64_t addr, unsigned len, uint64_t *off)
{
    for (int b = 0; b < 6; b++) {
        if (!c->bar_mask[b]) continue;
        uint64_t base = pcie_cfg_bar_addr(c, b), size = ~c->bar_mask[b] + 1;
        if (!c->bar64[b]) size &= 0xffffffffull;
        if (addr >= base && addr + len <= base + size) {
            *off = addr - base;
            return b;
        }
    }
    return -1;
}

unsigned pcie_cfg_mps(const pcie_cfg_t *c)
{
    unsigned ctl = 128u << ((pcie_cfg_r16(c, c->pcie_cap + 8) >> 5) & 7);
    unsigned cap = 128u << (pcie_cfg_read32(c, c->pcie_cap + 4) & 7);
    return ctl < cap ? ctl : cap;
}

unsigned pcie_cfg_mrrs(const pcie_cfg_t *c)
{
    unsigned e = (pcie_cfg_r16(c, c->pcie_cap + 8) >> 12) & 7;
    return 128u << (e > 5 ? 5 : e);
}

void pcie_cfg_set_link_status(pcie_cfg_t *c, int gen, int width)
{
    pcie_cfg_w16(c, c->pcie_cap + 0x12, (gen & 0xf) | ((width & 0x3f) << 4) | (1u << 12));
}
