/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Link model: each direction is a serializer. A TLP occupies the wire for
 * (header + payload + 8 B framing/sequence/LCRC) x (1 + DLLP share) / (lane rate x width),
 * then arrives after the one-way latency. Upstream TLPs need a credit at the root complex
 * (freed when the host takes the last beat); downstream the host may queue a little ahead of
 * the wire (dn_backlog_ps) while the device has receive-buffer credits.
 */
#include <math.h>
#include <string.h>
#include "pcie_sim.h"

double pcie_lane_rate(int gen)
{
    switch (gen) {
    case 1: return 2.5e9 * 8 / 10 / 8;
    case 2: return 5.0e9 * 8 / 10 / 8;
    case 3: return 8.0e9 * 128 / 130 / 8;
    case 4: return 16.0e9 * 128 / 130 / 8;
    default: return 0;
    }
}

double pcie_payload_limit(int gen, int width, double dllp_share, unsigned payload, unsigned hdr_bytes)
{
    double raw = pcie_lane_rate(gen) * width;
    return raw * payload / (payload + hdr_bytes + 8) / (1.0 + dllp_share);
}

void pcie_link_init(pcie_link_t *l, const pcie_link_cfg_t *cfg)
{
    memset(l, 0, sizeof(*l));
    l->cfg = *cfg;
    if (!l->cfg.up_credits) l->cfg.up_credits = 64;
    if (!l->cfg.dn_credits) l->cfg.dn_credits = 32;
    l->ps_per_byte = 1e12 / (pcie_lane_rate(cfg->gen) * cfg->width) * (1.0 + cfg->dllp_share);
    l->perst = 1;
    l->ltssm = LTSSM_DETECT_QUIET;
    l->ltssm_next = PS_NEVER;
}

void pcie_link_destroy(pcie_link_t *l)
{
    tlpq_drain(&l->up_pending, &l->pool);
    tlpq_drain(&l->up_flight, &l->pool);
    tlpq_drain(&l->dn_flight, &l->pool);
    pcie_tlp_pool_destroy(&l->pool);
}

static inline ps_t wire_ps(const pcie_link_t *l, const pcie_tlp_t *t)
{
    return (ps_t)llround(tlp_wire_bytes(t) * l->ps_per_byte);
}

static void up_launch(pcie_link_t *l, pcie_tlp_t *t, ps_t now)
{
    ps_t start = l->up_free > now ? l->up_free : now;
    l->up_free = start + wire_ps(l, t);
    t->t = l->up_free + l->cfg.latency_ps;
    l->up_tlps++;
    l->up_payload += t->plen;
    l->up_wire += tlp_wire_bytes(t);
    tlpq_push(&l->up_flight, t);
}

void pcie_link_up_send(pcie_link_t *l, pcie_tlp_t *t, ps_t now)
{
    if (!l->up) {
        l->dropped++;
        pcie_tlp_free(&l->pool, t);
        return;
    }
    if (l->up_pending.n == 0 && l->up_flight.n < l->cfg.up_credits)
        up_launch(l, t, now);
    else
        tlpq_push(&l->up_pending, t);
}

pcie_tlp_t *pcie_link_up_take(pcie_link_t *l, ps_t now)
{
    pcie_tlp_t *t = tlpq_pop(&l->up_flight);
    while (l->up_pending.n && l->up_flight.n < l->cfg.up_credits)
        up_launch(l, tlpq_pop(&l->up_pending), now);
    return t;
}

ps_t pcie_link_up_backlog(const pcie_link_t *l, ps_t now)
{
    ps_t b = l->up_free > now ? l->up_free - now : 0;
    if (l->up_pending.n)
        b += (ps_t)(l->up_pending.bytes * l->ps_per_byte);
    return b;
}

void pcie_link_dn_send(pcie_link_t *l, pcie_tlp_t *t, ps_t now)
{
    if (!l->up) {
        l->dropped++;
        pcie_tlp_free(&l->pool, t);
        return;
    }
    ps_t start = l->dn_free > now ? l->dn_free : now;
    l->dn_free = start + wire_ps(l, t);
    t->t = l->dn_free + l->cfg.latency_ps;
    l->dn_tlps++;
    l->dn_payload += t->plen;
    l->dn_wire += tlp_wire_bytes(t);
    tlpq_push(&l->dn_flight, t);
}

int pcie_link_dn_ready(const pcie_link_t *l, ps_t now)
{
    return l->up && l->dn_free <= now + l->cfg.dn_backlog_ps && l->dn_flight.n < l->cfg.dn_credits;
}

static void link_drop_all(pcie_link_t *l)
{
    l->dropped += l->up_pending.n + l->up_flight.n + l->dn_flight.n;
    tlpq_drain(&l->up_pending, &l->pool);
    tlpq_drain(&l->up_flight, &l->pool);
    tlpq_drain(&l->dn_flight, &l->pool);
}

static void link_go_down(pcie_link_t *l)
{
    l->up = 0;
    l->cur_gen = l->cur_width = 0;
    l->ltssm = LTSSM_DETECT_QUIET;
    link_drop_all(l);
}

void pcie_link_set_perst(pcie_link_t *l, int asserted, ps_t now)
{
    if (asserted == l->perst) return;
    l->perst = asserted;
    if (asserted) {
        link_go_down(l);
        l->ltssm_next = PS_NEVER;
    } else {
        l->training_kind = 0;
        l->ltssm = LTSSM_DETECT_ACTIVE;
        l->ltssm_next = now + l->cfg.train_ps / 5;
    }
}

void pcie_link_force_down(pcie_link_t *l, ps_t now, ps_t dur)
{
    if (l->perst) return;
    link_go_down(l);
    l->link_downs++;
    l->training_kind = 0;
    l->down_until = now + dur;
    l->ltssm_next = now + dur;   /* then Detect.Active ... L0 */
}

void pcie_link_retrain(pcie_link_t *l, ps_t now, ps_t dur)
{
    if (!l->up) return;
    l->retrains++;
    l->training_kind = 1;
    l->ltssm = LTSSM_RECOVERY_RCVRLOCK;
    l->ltssm_next = now + dur;
    /* No TLP crosses during recovery: both serializers are busy until it ends. */
    if (l->up_free < now + dur) l->up_free = now + dur;
    if (l->dn_free < now + dur) l->dn_free = now + dur;
}

int pcie_link_step(pcie_link_t *l, ps_t now)
{
    int came_up = 0;
    while (l->ltssm_next <= now) {
        ps_t step = l->cfg.train_ps / 5;
        ps_t t = l->ltssm_next;
        switch (l->ltssm) {
        case LTSSM_DETECT_QUIET:     l->ltssm = LTSSM_DETECT_ACTIVE; l->ltssm_next = t + step; break;
        case LTSSM_DETECT_ACTIVE:    l->ltssm = LTSSM_POLLING_ACTIVE; l->ltssm_next = t + step; break;
        case LTSSM_POLLING_ACTIVE:   l->ltssm = LTSSM_CONFIG_LW_START; l->ltssm_next = t + step; break;
        case LTSSM_CONFIG_LW_START:  l->ltssm = LTSSM_CONFIG_COMPLETE; l->ltssm_next = t + step; break;
        case LTSSM_RECOVERY_RCVRLOCK:
        case LTSSM_CONFIG_COMPLETE:
        default:
            l->ltssm = LTSSM_L0;
            l->ltssm_next = PS_NEVER;
            if (!l->up) {
                l->up = 1;
                came_up = 1;
                l->up_free = l->dn_free = t;
            }
            l->cur_gen = l->cfg.gen;
            l->cur_width = l->cfg.width;
            break;
        }
    }
    return came_up;
}
