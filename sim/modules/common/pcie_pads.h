/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * LiteX Verilator glue of the `pcie` pad interface (doc/sim_pcie_port.md) for any device built on
 * pcie_ep_t. Needs the LiteX sim core headers (modules.h/pads.h).
 */
#ifndef PCIE_PADS_H
#define PCIE_PADS_H

#include "pcie_sim.h"
#include "modules.h"

typedef struct pcie_pads {
    pcie_ep_t *ep;
    unsigned   dw;                        /* data width (bits) */
    unsigned   dwords;                    /* dwords per beat */
    /* pads */
    uint8_t *clk, *tx_valid, *tx_ready, *tx_first, *tx_last, *rx_valid, *rx_ready, *rx_first, *rx_last;
    uint8_t *perst_n, *link_up, *link_gen, *link_width, *ltssm;
    uint8_t *tx_dat, *tx_be, *rx_dat, *rx_be;
    size_t   tx_dat_len, rx_dat_len, tx_be_len, rx_be_len;
    /* time */
    ps_t     period_ps, now, next_due;
    uint64_t cycle;
    int      last_clk;
    /* sampled after the falling edge */
    int      s_tx_valid, s_rx_ready, s_perst_n;
    uint8_t  s_first, s_last;
    uint32_t s_dat[16], s_be[2];
    /* host -> device assembly */
    uint32_t asm_buf[1024 + 8];
    unsigned asm_n;
    int      asm_active, asm_bad;
    uint8_t  tx_ready_val;
    /* device -> host beat state */
    pcie_tlp_t *rx_cur;
    unsigned rx_pos, rx_total;
    uint32_t rx_words[1024 + 8];
    uint8_t  rx_valid_val;
    /* stats */
    uint64_t beats_in, beats_out, tlps_in, tlps_out, bad_tlps_in;
} pcie_pads_t;

/* Attach the pads of `plist` ("pcie" or "sys_clk"); returns 0 or -1 with a message. */
int  pcie_pads_add(pcie_pads_t *p, struct pad_list_s *plist, char *err, size_t errlen);
/* Check that every pad was found and has the expected width. */
int  pcie_pads_check(pcie_pads_t *p, char *err, size_t errlen);
void pcie_pads_init(pcie_pads_t *p, pcie_ep_t *ep, unsigned data_width, uint64_t sys_clk_hz);
/* Call from the module's tick (after every eval). Returns 1 on a rising edge. */
int  pcie_pads_tick(pcie_pads_t *p);

#endif
