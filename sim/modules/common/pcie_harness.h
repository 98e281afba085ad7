/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The host side shared by the standalone harness libraries (nvme_ssd/ssd_harness.c -> libsimssd.so,
 * qemu_nvme/qb_harness.c -> libqemubridge.so): the calls on the root-complex + host-memory model
 * (pcie_host.c) and its endpoint, for ctypes (their signatures: sim/harness.py PCH_SIGNATURES).
 *
 * A harness handle starts with its pcie_host_t (first member), so the handle a harness' create
 * call returns is the `h` of these calls too; each harness keeps only its device's calls (create,
 * destroy, stats, ...) under its own prefix.
 */
#ifndef PCIE_HARNESS_H
#define PCIE_HARNESS_H

#include "pcie_sim.h"

int      pch_map(pcie_host_t *h, uint64_t base, uint64_t size);
/* Modeled time of the endpoint; run `ps` more, or until `t`. */
uint64_t pch_now(pcie_host_t *h);
void     pch_run(pcie_host_t *h, uint64_t ps);
void     pch_run_until(pcie_host_t *h, uint64_t t);
void     pch_perst(pcie_host_t *h, int asserted);
/* Host memory (0, or -1 outside the mapped windows). */
int      pch_mem_write(pcie_host_t *h, uint64_t addr, const void *buf, uint64_t len);
int      pch_mem_read(pcie_host_t *h, uint64_t addr, void *buf, uint64_t len);
/* Config / MMIO requests to the device (blocking in modeled time): CPL status or -1 on timeout. */
int      pch_cfg_read(pcie_host_t *h, unsigned reg, uint32_t *val, uint64_t timeout);
int      pch_cfg_write(pcie_host_t *h, unsigned reg, uint32_t val, unsigned be, uint64_t timeout);
int      pch_mmio_read(pcie_host_t *h, uint64_t addr, void *buf, unsigned len, uint64_t timeout);
int      pch_mmio_write(pcie_host_t *h, uint64_t addr, const void *buf, unsigned len);
/* Run until the host memory dword at addr satisfies (v & mask) == value; 1 if it did. */
int      pch_wait_mem(pcie_host_t *h, uint64_t addr, uint32_t mask, uint32_t value, uint64_t timeout);
/* The host's settings (RCB, MPS, memory read latency) and injected completion failures. */
void     pch_host_cfg(pcie_host_t *h, unsigned rcb, unsigned mps, uint64_t cpl_latency_ps);
int      pch_host_fail(pcie_host_t *h, uint64_t lo, uint64_t hi, int status, int count, int poison, int drop);
void     pch_host_fail_clear(pcie_host_t *h);
/* TLP trace. */
void     pch_trace(pcie_host_t *h, int on);
void     pch_trace_clear(pcie_host_t *h);
uint64_t pch_trace_count(pcie_host_t *h);
int      pch_trace_get(pcie_host_t *h, uint64_t i, pcie_trace_rec_t *r);
/* Raw TLP to the device: header dwords, payload; malformed marks a TLP the PHY found bad. */
void     pch_send_raw(pcie_host_t *h, const uint32_t *hdr, int nhdr, const uint8_t *payload, unsigned plen,
    int malformed);

/* For the harnesses' own stats call: the host/link/endpoint counters (sim/harness.py
 * PCIE_HOST_STATS), then the device's `own[nown]`, into o[n]; returns the number of counters. */
int      pch_stats_with(pcie_host_t *h, const uint64_t *own, int nown, uint64_t *o, int n);

#endif
