/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Pad glue: after the falling edge of sys_clk the RTL's outputs are sampled (settled for the
 * coming rising edge); after the rising edge transfers are committed and the model's outputs
 * (tx_ready, rx_*, link status) are updated. Idle cycles cost a few compares.
 */
#include <string.h>
#include "pcie_pads.h"

void pcie_pads_init(pcie_pads_t *p, pcie_ep_t *ep, unsigned data_width, uint64_t sys_clk_hz)
{
    memset(p, 0, sizeof(*p));
    p->ep = ep;
    p->dw = data_width;
    p->dwords = data_width / 32;
    p->period_ps = (ps_t)(1e12 / (double)sys_clk_hz + 0.5);
    p->next_due = 0;
    p->s_perst_n = 0;
}

static uint8_t *find(struct pad_s *pads, const char *name, size_t *len)
{
    for (int i = 0; pads[i].name; i++)
        if (!strcmp(pads[i].name, name)) { if (len) *len = pads[i].len; return pads[i].signal; }
    return NULL;
}

int pcie_pads_add(pcie_pads_t *p, struct pad_list_s *plist, char *err, size_t errlen)
{
    struct pad_s *pads = plist->pads;
    if (!strcmp(plist->name, "sys_clk")) {
        p->clk = find(pads, "sys_clk", NULL);
        return 0;
    }
    if (strcmp(plist->name, "pcie")) return 0;
    p->tx_valid = find(pads, "tx_valid", NULL);   p->tx_ready = find(pads, "tx_ready", NULL);
    p->tx_first = find(pads, "tx_first", NULL);   p->tx_last = find(pads, "tx_last", NULL);
    p->tx_dat = find(pads, "tx_dat", &p->tx_dat_len); p->tx_be = find(pads, "tx_be", &p->tx_be_len);
    p->rx_valid = find(pads, "rx_valid", NULL);   p->rx_ready = find(pads, "rx_ready", NULL);
    p->rx_first = find(pads, "rx_first", NULL);   p->rx_last = find(pads, "rx_last", NULL);
    p->rx_dat = find(pads, "rx_dat", &p->rx_dat_len); p->rx_be = find(pads, "rx_be", &p->rx_be_len);
    p->perst_n = find(pads, "perst_n", NULL);     p->link_up = find(pads, "link_up", NULL);
    p->link_gen = find(pads, "link_gen", NULL);   p->link_width = find(pads, "link_width", NULL);
    p->ltssm = find(pads, "ltssm", NULL);
    (void)err; (void)errlen;
    return 0;
}

int pcie_pads_check(pcie_pads_t *p, char *err, size_t errlen)
{
    const char *missing = !p->clk ? "sys_clk" : !p->tx_valid ? "tx_valid" : !p->tx_ready ? "tx_ready" :
        !p->tx_first ? "tx_first" : !p->tx_last ? "tx_last" : !p->tx_dat ? "tx_dat" : !p->tx_be ? "tx_be" :
        !p->rx_valid ? "rx_valid" : !p->rx_ready ? "rx_ready" : !p->rx_first ? "rx_first" :
        !p->rx_last ? "rx_last" : !p->rx_dat ? "rx_dat" : !p->rx_be ? "rx_be" : !p->perst_n ? "perst_n" :
        !p->link_up ? "link_up" : !p->link_gen ? "link_gen" : !p->link_width ? "link_width" :
        !p->ltssm ? "ltssm" : NULL;
    if (missing) { snprintf(err, errlen, "pad '%s' of the pcie interface not found", missing); return -1; }
    if (p->tx_dat_len != p->dw || p->rx_dat_len != p->dw || p->tx_be_len != p->dw / 8 || p->rx_be_len != p->dw / 8) {
        snprintf(err, errlen, "data_width=%u does not match the pads (tx_dat %zu bits, tx_be %zu bits)",
            p->dw, p->tx_dat_len, p->tx_be_len);
        return -1;
    }
    return 0;
}

static unsigned be_dwords(const uint32_t *be, unsigned dwords)
{
    unsigned n = 0;
    for (unsigned i = 0; i < dwords; i++) {
        unsigned nib = (be[i / 8] >> ((i % 8) * 4)) & 0xf;
        if (!nib) break;
        n++;
    }
    return n;
}

static void finish_tlp(pcie_pads_t *p)
{
    pcie_link_t *l = &p->ep->link;
    pcie_tlp_t *t = pcie_tlp_alloc(&l->pool);
    unsigned n = p->asm_n;
    unsigned nhdr = (p->asm_buf[0] >> 29) & 1 ? 4 : 3;
    if (n < nhdr) { t->flags |= TLPF_MALFORMED; nhdr = n < 3 ? n : 3; }
    memcpy(t->hdr, p->asm_buf, nhdr * 4);
    t->nhdr = (uint8_t)(nhdr ? nhdr : 3);
    unsigned pl = n > nhdr ? n - nhdr : 0;
    if (pl * 4 > TLP_MAX_PAYLOAD) { pl = TLP_MAX_PAYLOAD / 4; t->flags |= TLPF_MALFORMED; }
    t->plen = pl * 4;
    memcpy(t->data, p->asm_buf + nhdr, t->plen);
    if (!(t->flags & TLPF_MALFORMED)) {
        unsigned want = tlp_has_data(t) ? tlp_len_dw(t) : 0;
        if (want != pl || p->asm_bad) t->flags |= TLPF_MALFORMED;
    }
    if (t->flags & TLPF_MALFORMED) p->bad_tlps_in++;
    p->tlps_in++;
    pcie_link_dn_send(l, t, p->now);
    if (l->dn_flight.tail && l->dn_flight.tail->t < p->next_due) p->next_due = l->dn_flight.tail->t;
}

static void load_rx(pcie_pads_t *p)
{
    pcie_tlp_t *t = p->rx_cur;
    memcpy(p->rx_words, t->hdr, t->nhdr * 4);
    memcpy(p->rx_words + t->nhdr, t->data, t->plen);
    p->rx_total = t->nhdr + t->plen / 4;
    p->rx_pos = 0;
}

static void present_beat(pcie_pads_t *p)
{
    uint32_t dat[16] = {0}, be[2] = {0};
    unsigned n = p->rx_total - p->rx_pos;
    if (n > p->dwords) n = p->dwords;
    memcpy(dat, p->rx_words + p->rx_pos, n * 4);
    for (unsigned i = 0; i < n; i++) be[i / 8] |= 0xfu << ((i % 8) * 4);
    memcpy(p->rx_dat, dat, p->dw / 8);
    memcpy(p->rx_be, be, p->dw / 64);
    *p->rx_first = p->rx_pos == 0;
    *p->rx_last = p->rx_pos + n >= p->rx_total;
    *p->rx_valid = 1;
    p->rx_valid_val = 1;
}

int pcie_pads_tick(pcie_pads_t *p)
{
    int clk = *p->clk;
    if (clk == p->last_clk) return 0;
    p->last_clk = clk;
    if (!clk) {
        /* Falling edge: sample the RTL's settled outputs. */
        p->s_tx_valid = *p->tx_valid;
        p->s_rx_ready = *p->rx_ready;
        p->s_perst_n = *p->perst_n;
        if (p->s_tx_valid && p->tx_ready_val) {
            memcpy(p->s_dat, p->tx_dat, p->dw / 8);
            p->s_be[0] = p->s_be[1] = 0;
            memcpy(p->s_be, p->tx_be, p->dw / 64);
            p->s_first = *p->tx_first;
            p->s_last = *p->tx_last;
        }
        return 0;
    }
    /* Rising edge: commit. */
    pcie_ep_t *ep = p->ep;
    pcie_link_t *l = &ep->link;
    p->cycle++;
    p->now += p->period_ps;
    if ((!p->s_perst_n) != l->perst) {
        pcie_ep_set_perst(ep, !p->s_perst_n, p->now);
        p->asm_active = 0;
        p->rx_cur = NULL;   /* the link dropped it */
        p->next_due = p->now;
    }
    if (p->s_tx_valid && p->tx_ready_val) {
        p->beats_in++;
        if (p->s_first) { p->asm_n = 0; p->asm_active = 1; p->asm_bad = 0; }
        if (p->asm_active) {
            unsigned n = be_dwords(p->s_be, p->dwords);
            if (p->asm_n + n > sizeof(p->asm_buf) / 4) { n = 0; p->asm_bad = 1; }
            memcpy(p->asm_buf + p->asm_n, p->s_dat, n * 4);
            p->asm_n += n;
            if (p->s_last) { p->asm_active = 0; finish_tlp(p); }
        }
    }
    if (p->rx_valid_val && p->s_rx_ready) {
        p->beats_out++;
        p->rx_pos += p->dwords;
        if (p->rx_pos >= p->rx_total) {
            p->rx_cur = NULL;
            p->tlps_out++;
            pcie_tlp_free(&l->pool, pcie_link_up_take(l, p->now));
        }
    }
    if (p->now >= p->next_due) p->next_due = pcie_ep_service(ep, p->now);
    if (p->rx_cur && l->up_flight.head != p->rx_cur) {   /* dropped by a link down */
        p->rx_cur = NULL;
    }
    /* Next TLP to the RTL. */
    if (!p->rx_cur) {
        pcie_tlp_t *h = l->up_flight.head;
        if (h && h->t <= p->now) {
            p->rx_cur = h;   /* stays at the head of up_flight until taken */
            load_rx(p);
            present_beat(p);
        } else if (p->rx_valid_val) {
            *p->rx_valid = 0;
            p->rx_valid_val = 0;
        }
        if (h && h->t > p->now && h->t < p->next_due) p->next_due = h->t;
    } else if (p->rx_valid_val && p->s_rx_ready)
        present_beat(p);
    uint8_t rdy = p->asm_active ? 1 : (uint8_t)pcie_link_dn_ready(l, p->now);
    if (rdy != p->tx_ready_val) { *p->tx_ready = rdy; p->tx_ready_val = rdy; }
    *p->link_up = (uint8_t)l->up;
    *p->link_gen = l->cur_gen;
    *p->link_width = l->cur_width;
    *p->ltssm = l->ltssm;
    return 1;
}
