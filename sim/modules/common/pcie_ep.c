/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Endpoint function: answers configuration requests (Type 0, CRS for a while after link-up),
 * decodes BARs (UR without Command.MEM or outside every BAR), and runs the DMA engine of the
 * device: MRd split by MRRS and 4 KiB boundaries with up to max_tags outstanding, completions
 * matched by tag (split completions, lower address and byte count checked), completion timeout;
 * MWr split by MPS and 4 KiB. Nothing is requested without Command.BME.
 */
#include <stdlib.h>
#include <string.h>
#include "pcie_sim.h"

const char *pcie_dma_status_name(int st)
{
    static const char *n[] = { "ok", "UR", "CA", "timeout", "poisoned", "malformed", "no-BME",
        "link-down", "cancelled" };
    return (st >= 0 && st <= 8) ? n[st] : "?";
}

void pcie_ep_init(pcie_ep_t *ep, const pcie_ep_cfg_t *cfg, const pcie_link_cfg_t *lcfg,
    const pcie_dev_ops_t *ops, void *dev)
{
    memset(ep, 0, sizeof(*ep));
    ep->cfg = *cfg;
    if (ep->cfg.max_tags < 1) ep->cfg.max_tags = 1;
    if (ep->cfg.max_tags > 256) ep->cfg.max_tags = 256;
    pcie_link_init(&ep->link, lcfg);
    pcie_cfg_init(&ep->cs, &cfg->ids);
    ep->ops = ops;
    ep->dev = dev;
    ep->bdf = 0x0100;
    ep->dev_wake = PS_NEVER;
    ep->next_timeout = PS_NEVER;
}

/* The device calls this after adding its BARs/capabilities: the reset image of the space. */
void pcie_ep_config_done(pcie_ep_t *ep)
{
    ep->cs_reset = ep->cs;
}

static void job_link(pcie_ep_t *ep, pcie_dma_job_t *j)
{
    j->all_prev = NULL;
    j->all_next = ep->all_jobs;
    if (ep->all_jobs) ep->all_jobs->all_prev = j;
    ep->all_jobs = j;
}

static void job_free(pcie_ep_t *ep, pcie_dma_job_t *j)
{
    if (j->all_prev) j->all_prev->all_next = j->all_next; else ep->all_jobs = j->all_next;
    if (j->all_next) j->all_next->all_prev = j->all_prev;
    free(j);
}

static void free_jobs(pcie_ep_t *ep)
{
    while (ep->all_jobs) job_free(ep, ep->all_jobs);
    for (unsigned i = 0; i < 256; i++) ep->tags[i].job = NULL;
    ep->rd_head = ep->rd_tail = NULL;
    ep->tags_busy = 0;
    ep->next_timeout = PS_NEVER;
}

void pcie_ep_destroy(pcie_ep_t *ep)
{
    free_jobs(ep);
    pcie_link_destroy(&ep->link);
}

uint16_t pcie_ep_id(const pcie_ep_t *ep) { return ep->bdf; }

static void send_up(pcie_ep_t *ep, pcie_tlp_t *t)
{
    pcie_link_up_send(&ep->link, t, ep->now);
}

void pcie_ep_send_raw(pcie_ep_t *ep, pcie_tlp_t *t) { send_up(ep, t); }

ps_t pcie_ep_tx_room_at(const pcie_ep_t *ep)
{
    ps_t b = pcie_ep_backlog(ep);
    if (b < ep->cfg.tx_backlog_ps) return ep->now;
    return ep->now + (b - ep->cfg.tx_backlog_ps) + 1;
}

/* Function reset: config space back to its reset image, DMA state dropped. */
static void function_reset(pcie_ep_t *ep, int kind)
{
    free_jobs(ep);
    ep->cs = ep->cs_reset;
    if (ep->ops->reset) ep->ops->reset(ep->dev, kind);
    ep->dev_wake = 0;
}

/* --- Completions to host requests ---------------------------------------------------------- */

static void send_cpl(pcie_ep_t *ep, const pcie_tlp_t *req, unsigned status)
{
    pcie_tlp_t *c = pcie_tlp_alloc(&ep->link.pool);
    tlp_build_cpl(c, ep->bdf, status, 0, tlp_req_id(req), tlp_tag(req), 0, NULL, 0);
    /* Byte count of a UR/CA completion: the remaining byte count of the request. */
    if (status != CPL_SC && status != CPL_CRS) {
        unsigned bc = tlp_req_bytes(req) & 0xfff;
        c->hdr[1] |= bc;
    }
    if (status == CPL_UR) ep->ur_sent++;
    if (status == CPL_CA) ep->ca_sent++;
    if (status == CPL_CRS) ep->crs_sent++;
    send_up(ep, c);
}

static void handle_cfg(pcie_ep_t *ep, pcie_tlp_t *t)
{
    int write = tlp_has_data(t);
    unsigned dst = t->hdr[2] >> 16, reg = t->hdr[2] & 0xffc;
    if ((tlp_fmttype(t) & 1) || (dst & 7) != 0) {   /* Type 1, or a function we do not have */
        send_cpl(ep, t, CPL_UR);
        return;
    }
    ep->bdf = dst & 0xfff8;   /* capture bus/device */
    if (ep->cfg.crs_ps && ep->now < ep->link_up_time + ep->cfg.crs_ps) {
        send_cpl(ep, t, CPL_CRS);
        return;
    }
    if (ep->ops->cfg_access) {                         /* the device owns its config space */
        uint32_t v = 0;
        if (write) memcpy(&v, t->data, 4);
        int st = ep->ops->cfg_access(ep->dev, write, reg, write ? tlp_fbe(t) : 0xf, &v);
        if (st != CPL_SC) { send_cpl(ep, t, (unsigned)st); return; }
        pcie_tlp_t *c = pcie_tlp_alloc(&ep->link.pool);
        tlp_build_cpl(c, ep->bdf, CPL_SC, 4, tlp_req_id(t), tlp_tag(t), 0, write ? NULL : &v, write ? 0 : 1);
        send_up(ep, c);
        ep->dev_kick = 1;
        return;
    }
    if (write) {
        uint32_t v;
        memcpy(&v, t->data, 4);
        uint32_t old = pcie_cfg_write32(&ep->cs, reg, v, tlp_fbe(t));
        uint32_t nv = pcie_cfg_read32(&ep->cs, reg);
        pcie_tlp_t *c = pcie_tlp_alloc(&ep->link.pool);
        tlp_build_cpl(c, ep->bdf, CPL_SC, 4, tlp_req_id(t), tlp_tag(t), 0, NULL, 0);
        send_up(ep, c);
        if (ep->ops->cfg_written) ep->ops->cfg_written(ep->dev, reg, old, nv);
        ep->dev_kick = 1;
    } else {
        uint32_t v = pcie_cfg_read32(&ep->cs, reg);
        pcie_tlp_t *c = pcie_tlp_alloc(&ep->link.pool);
        tlp_build_cpl(c, ep->bdf, CPL_SC, 4, tlp_req_id(t), tlp_tag(t), 0, &v, 1);
        send_up(ep, c);
    }
}

static void handle_mem(pcie_ep_t *ep, pcie_tlp_t *t)
{
    int write = tlp_has_data(t);
    uint64_t addr = tlp_addr(t), off;
    unsigned len = tlp_len_dw(t) * 4;
    int hook = ep->host_req_hook ? ep->host_req_hook(ep->dev, t) : -1;
    if (write) {
        if (t->plen != len) { ep->malformed_rx++; return; }
        if (!pcie_cfg_mem_en(&ep->cs)) { ep->cs.data[ep->cs.pcie_cap + 0x0a] |= 0x08; ep->ur_sent++; return; }
        int bar = pcie_cfg_bar_hit(&ep->cs, addr, len, &off);
        if (bar < 0) { ep->cs.data[ep->cs.pcie_cap + 0x0a] |= 0x08; ep->ur_sent++; return; }
        unsigned fb = tlp_first_byte(t), n = tlp_req_bytes(t);
        ep->ops->bar_write(ep->dev, bar, off + fb, t->data + fb, n);
        ep->dev_kick = 1;
        return;
    }
    if (hook == 0x200) return;                          /* no completion at all */
    if (hook == CPL_UR || hook == CPL_CA) { send_cpl(ep, t, hook); return; }
    if (!pcie_cfg_mem_en(&ep->cs)) { send_cpl(ep, t, CPL_UR); return; }
    int bar = pcie_cfg_bar_hit(&ep->cs, addr, len, &off);
    uint8_t buf[TLP_MAX_PAYLOAD];
    if (bar < 0 || len > sizeof(buf) || ep->ops->bar_read(ep->dev, bar, off, buf, len) < 0) {
        send_cpl(ep, t, CPL_UR);
        return;
    }
    /* Split at MPS on 64-byte (RCB) boundaries. */
    unsigned mps = pcie_cfg_mps(&ep->cs), fb = tlp_first_byte(t);
    unsigned remaining = tlp_req_bytes(t);
    unsigned pos = 0;   /* dword-aligned offset in buf */
    while (pos < len) {
        uint64_t a = (addr + pos);
        unsigned chunk = len - pos;
        if (chunk > mps) {
            uint64_t end = (a + mps) & ~63ull;
            chunk = (unsigned)(end - a);
        }
        pcie_tlp_t *c = pcie_tlp_alloc(&ep->link.pool);
        unsigned la = (unsigned)((a & 0x7f) + (pos == 0 ? fb : 0));
        tlp_build_cpl(c, ep->bdf, CPL_SC, remaining & 0xfff, tlp_req_id(t), tlp_tag(t), la,
            buf + pos, chunk / 4);
        if (hook == 0x100) c->hdr[0] |= 1u << 14;       /* poisoned */
        send_up(ep, c);
        remaining -= (pos == 0 ? chunk - fb : chunk);
        pos += chunk;
    }
}

/* --- DMA engine ---------------------------------------------------------------------------- */

static void job_finish(pcie_ep_t *ep, pcie_dma_job_t *j)
{
    if (j->cb) j->cb(ep->dev, j->cookie, j->status);
    ep->dev_kick = 1;
    job_free(ep, j);
}

static void tag_release(pcie_ep_t *ep, unsigned tag, int status)
{
    pcie_tag_t *tg = &ep->tags[tag];
    pcie_dma_job_t *j = tg->job;
    tg->job = NULL;
    ep->tags_busy--;
    if (!j) return;
    if (status != PCIE_DMA_OK && j->status == PCIE_DMA_OK) j->status = status;
    if (status == PCIE_DMA_OK) j->done += tg->len;
    j->outstanding--;
    int finished = j->outstanding == 0 && (j->issued == j->len || j->status != PCIE_DMA_OK);
    if (finished) {
        /* Remove from the issue list if it is still there (error before full issue). */
        pcie_dma_job_t **pp = &ep->rd_head, *prev = NULL;
        while (*pp) {
            if (*pp == j) {
                *pp = j->next;
                if (ep->rd_tail == j) ep->rd_tail = prev;
                break;
            }
            prev = *pp;
            pp = &(*pp)->next;
        }
        job_finish(ep, j);
    }
}

static void handle_cpl(pcie_ep_t *ep, pcie_tlp_t *t)
{
    unsigned tag = cpl_tag(t);
    pcie_tag_t *tg = &ep->tags[tag];
    if (!tg->job || cpl_req_id(t) != ep->bdf) { ep->unexpected_cpl++; return; }
    unsigned st = cpl_status(t);
    if (st != CPL_SC) {
        tag_release(ep, tag, st == CPL_CA ? PCIE_DMA_CA : PCIE_DMA_UR);
        return;
    }
    ep->cpld_rx++;
    unsigned remaining = tg->len - tg->got;
    unsigned expect_la = (unsigned)((tg->addr + tg->got) & 0x7f);
    if (!tlp_has_data(t) || t->plen == 0 || t->plen > remaining || cpl_bc(t) != remaining ||
        cpl_lower_addr(t) != expect_la || (t->flags & TLPF_MALFORMED)) {
        tag_release(ep, tag, PCIE_DMA_MALFORMED);
        return;
    }
    if (tlp_ep(t)) {
        tag_release(ep, tag, PCIE_DMA_POISONED);
        return;
    }
    if (tg->job->dst && tg->job->status == PCIE_DMA_OK)
        memcpy(tg->job->dst + tg->off + tg->got, t->data, t->plen);
    tg->got += t->plen;
    if (tg->got == tg->len) tag_release(ep, tag, PCIE_DMA_OK);
}

static int dma_read(pcie_ep_t *ep, uint64_t addr, uint32_t len, uint8_t *dst, pcie_dma_cb cb, uint64_t cookie,
    int first)
{
    if (!pcie_cfg_bme(&ep->cs) || !ep->link.up) { ep->dma_refused++; return PCIE_DMA_NO_BME; }
    pcie_dma_job_t *j = calloc(1, sizeof(*j));
    j->addr = addr; j->len = len; j->dst = dst; j->cb = cb; j->cookie = cookie; j->first = first;
    job_link(ep, j);
    if (len == 0) { job_finish(ep, j); return 0; }
    /* After `prev`: the tail, or (first) the last queued control read, else the head's place. A job
     * that began issuing may be passed: it goes on where it stopped once it is at the head again. */
    pcie_dma_job_t *prev = ep->rd_tail;
    if (first) {
        prev = NULL;
        for (pcie_dma_job_t *q = ep->rd_head; q && q->first; q = q->next)
            prev = q;
    }
    j->next = prev ? prev->next : ep->rd_head;
    if (prev) prev->next = j; else ep->rd_head = j;
    if (!j->next) ep->rd_tail = j;
    return 0;
}

int pcie_dma_read(pcie_ep_t *ep, uint64_t addr, uint32_t len, uint8_t *dst, pcie_dma_cb cb, uint64_t cookie)
{
    return dma_read(ep, addr, len, dst, cb, cookie, 0);
}

int pcie_dma_read_first(pcie_ep_t *ep, uint64_t addr, uint32_t len, uint8_t *dst, pcie_dma_cb cb, uint64_t cookie)
{
    return dma_read(ep, addr, len, dst, cb, cookie, 1);
}

void pcie_dma_cancel(pcie_ep_t *ep, uint64_t cookie) { pcie_dma_cancel_mask(ep, cookie, ~0ull); }

void pcie_dma_cancel_mask(pcie_ep_t *ep, uint64_t key, uint64_t mask)
{
    for (unsigned i = 0; i < 256; i++)
        if (ep->tags[i].job && (ep->tags[i].job->cookie & mask) == key) {
            ep->tags[i].job->cb = NULL;
            ep->tags[i].job->status = PCIE_DMA_CANCELLED;
        }
    pcie_dma_job_t **pp = &ep->rd_head, *prev = NULL;
    while (*pp) {
        pcie_dma_job_t *j = *pp;
        if ((j->cookie & mask) == key) {
            j->cb = NULL;
            j->status = PCIE_DMA_CANCELLED;
            if (j->outstanding == 0) {
                *pp = j->next;
                if (ep->rd_tail == j) ep->rd_tail = prev;
                job_free(ep, j);
                continue;
            }
        }
        prev = j;
        pp = &j->next;
    }
}

static void issue_reads(pcie_ep_t *ep)
{
    while (ep->rd_head) {
        pcie_dma_job_t *j = ep->rd_head;
        if (j->status != PCIE_DMA_OK || !pcie_cfg_bme(&ep->cs) || !ep->link.up) {
            if (j->status == PCIE_DMA_OK) j->status = ep->link.up ? PCIE_DMA_NO_BME : PCIE_DMA_LINK_DOWN;
            if (j->outstanding) return;   /* wait for its tags */
            ep->rd_head = j->next;
            if (!ep->rd_head) ep->rd_tail = NULL;
            job_finish(ep, j);
            continue;
        }
        if (ep->tags_busy >= ep->cfg.max_tags || pcie_ep_backlog(ep) >= ep->cfg.tx_backlog_ps)
            return;
        uint64_t a = j->addr + j->issued;
        uint32_t chunk = j->len - j->issued, mrrs = pcie_cfg_mrrs(&ep->cs);
        uint32_t to4k = 4096 - (uint32_t)(a & 0xfff);
        if (chunk > mrrs) chunk = mrrs;
        if (chunk > to4k) chunk = to4k;
        unsigned tag = ep->next_tag;
        while (ep->tags[tag].job) tag = (tag + 1) % ep->cfg.max_tags;
        ep->next_tag = (tag + 1) % ep->cfg.max_tags;
        pcie_tag_t *tg = &ep->tags[tag];
        tg->job = j; tg->off = j->issued; tg->len = chunk; tg->got = 0; tg->addr = a;
        tg->deadline = ep->now + ep->cfg.cpl_timeout_ps;
        if (tg->deadline < ep->next_timeout) ep->next_timeout = tg->deadline;
        ep->tags_busy++;
        j->outstanding++;
        j->issued += chunk;
        pcie_tlp_t *t = pcie_tlp_alloc(&ep->link.pool);
        unsigned ndw = chunk / 4;
        tlp_build_mem(t, 0, a, ndw, ep->bdf, tag, 0xf, ndw > 1 ? 0xf : 0, NULL, 0);
        ep->mrd_sent++;
        if (chunk > ep->max_mrd_len) ep->max_mrd_len = chunk;
        send_up(ep, t);
        if (j->issued == j->len) {
            ep->rd_head = j->next;
            if (!ep->rd_head) ep->rd_tail = NULL;
        }
    }
}

int pcie_dma_write(pcie_ep_t *ep, uint64_t addr, const uint8_t *src, uint32_t len, unsigned flags)
{
    if (!pcie_cfg_bme(&ep->cs) || !ep->link.up) { ep->dma_refused++; return PCIE_DMA_NO_BME; }
    unsigned mps = pcie_cfg_mps(&ep->cs);
    uint32_t pos = 0;
    while (pos < len) {
        uint64_t a = addr + pos;
        uint32_t chunk = len - pos, to4k = 4096 - (uint32_t)(a & 0xfff);
        if (chunk > mps) chunk = mps;
        if (chunk > to4k) chunk = to4k;
        pcie_tlp_t *t = pcie_tlp_alloc(&ep->link.pool);
        unsigned ndw = chunk / 4;
        tlp_build_mem(t, 1, a, ndw, ep->bdf, 0, 0xf, ndw > 1 ? 0xf : 0, src + pos, 0);
        if ((flags & PCIE_DMAW_POISON) && pos == 0) t->hdr[0] |= 1u << 14;   /* the first TLP only */
        ep->mwr_sent++;
        if (chunk > ep->max_mwr_len) ep->max_mwr_len = chunk;
        send_up(ep, t);
        pos += chunk;
    }
    return 0;
}

static void check_timeouts(pcie_ep_t *ep)
{
    ps_t next = PS_NEVER;
    for (unsigned i = 0; i < 256; i++) {
        pcie_tag_t *tg = &ep->tags[i];
        if (!tg->job) continue;
        if (tg->deadline <= ep->now) {
            ep->cpl_timeouts++;
            tag_release(ep, i, PCIE_DMA_TIMEOUT);
        } else if (tg->deadline < next)
            next = tg->deadline;
    }
    ep->next_timeout = next;
}

/* --- Service ------------------------------------------------------------------------------- */

ps_t pcie_ep_service(pcie_ep_t *ep, ps_t now)
{
    pcie_link_t *l = &ep->link;
    ep->now = now;
    if (l->ltssm_next <= now) {
        if (pcie_link_step(l, now)) {
            ep->link_up_time = now;
            pcie_cfg_set_link_status(&ep->cs, l->cur_gen, l->cur_width);
            ep->dev_kick = 1;
        }
    }
    pcie_tlp_t *t;
    while ((t = l->dn_flight.head) && t->t <= now) {
        t = tlpq_pop(&l->dn_flight);
        if (t->flags & TLPF_MALFORMED) {
            ep->malformed_rx++;
        } else {
            switch (tlp_fmttype(t)) {
            case TLP_CFGRD0: case TLP_CFGWR0: case TLP_CFGRD1: case TLP_CFGWR1:
                handle_cfg(ep, t); break;
            case TLP_MRD32: case TLP_MRD64: case TLP_MWR32: case TLP_MWR64:
                handle_mem(ep, t); break;
            case TLP_CPL: case TLP_CPLD:
                handle_cpl(ep, t); break;
            case TLP_MRDLK32: case TLP_MRDLK64: case TLP_IORD: case TLP_IOWR:
                send_cpl(ep, t, CPL_UR); break;
            default:
                if (ep->ops->unhandled) ep->ops->unhandled(ep->dev, t);
                else if (!((tlp_fmttype(t) >> 3) & 0x6)) send_cpl(ep, t, CPL_UR);  /* non-message */
                break;
            }
        }
        pcie_tlp_free(&l->pool, t);
    }
    if (ep->next_timeout <= now) check_timeouts(ep);
    issue_reads(ep);
    for (int i = 0; i < 8 && (ep->dev_kick || ep->dev_wake <= now); i++) {
        ep->dev_kick = 0;
        ep->dev_wake = ep->ops->tick(ep->dev, now);
        issue_reads(ep);
    }
    ps_t next = ep->dev_wake;
    if (next <= now) next = now + 1;
    if (l->dn_flight.head && l->dn_flight.head->t < next) next = l->dn_flight.head->t;
    if (ep->next_timeout < next) next = ep->next_timeout;
    if (l->ltssm_next < next) next = l->ltssm_next;
    if (ep->rd_head && ep->tags_busy < ep->cfg.max_tags) {
        ps_t r = pcie_ep_tx_room_at(ep);
        if (r <= now) r = now + 1;
        if (r < next) next = r;
    }
    if (next <= now) next = now + 1;
    return next;
}

/* Reset entry points used by the glue (pads or host model) and fault injection. */
void pcie_ep_set_perst(pcie_ep_t *ep, int asserted, ps_t now)
{
    ep->now = now;
    if (asserted && !ep->link.perst) {
        pcie_link_set_perst(&ep->link, 1, now);
        function_reset(ep, PCIE_RESET_PERST);
    } else if (!asserted && ep->link.perst) {
        pcie_link_set_perst(&ep->link, 0, now);
    }
}

void pcie_ep_link_down(pcie_ep_t *ep, ps_t now, ps_t dur)
{
    ep->now = now;
    if (ep->link.perst) return;
    pcie_link_force_down(&ep->link, now, dur);
    function_reset(ep, PCIE_RESET_LINK_DOWN);
}

void pcie_ep_retrain(pcie_ep_t *ep, ps_t now, ps_t dur)
{
    ep->now = now;
    pcie_link_retrain(&ep->link, now, dur);
}
