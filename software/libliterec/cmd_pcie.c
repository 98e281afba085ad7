// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// PCIe BIOS commands: pcie_scan, pcie_link, pcie_cfg_rd/wr, pcie_mem_rd/wr, pcie_stats.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include <bios/command.h>
#include <bios/init.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"

#ifdef CSR_PCIE0_BASE

/* [port] argument: index into params, default 0; prints the error and returns -1 if invalid. */
static int parse_port(int nb_params, char **params, int idx)
{
	unsigned long v;
	if (nb_params <= idx)
		return 0;
	if (literec_parse_ulong(params[idx], &v) || v >= (unsigned long)pcie_nports()) {
		printf("Error: invalid port '%s': allowed 0..%d\n", params[idx], pcie_nports() - 1);
		return -1;
	}
	return v;
}

/* "0x1234" or "bar0+0x1c" (relative to the BAR0 the enumeration assigned). */
static int parse_mem_addr_any(int port, const char *s, uint64_t *adr)
{
	unsigned long long v;
	char *end;
	if (strncmp(s, "bar0", 4) == 0) {
		if (!pcie_devs[port].present || !pcie_devs[port].bar0) {
			printf("Error: BAR0 of port %d is not assigned: run pcie_scan first\n", port);
			return -1;
		}
		v = 0;
		if (s[4] == '+') {
			errno = 0;
			v = strtoull(s + 5, &end, 0);
			if (*end || end == s + 5 || s[5] == '-' || s[5] == '+' || errno || v >= pcie_devs[port].bar0_size) {
				printf("Error: invalid offset in '%s': bar0+OFFSET with OFFSET 0..0x%llx (BAR0 is %llu bytes)\n", s,
					(unsigned long long)(pcie_devs[port].bar0_size - 1), (unsigned long long)pcie_devs[port].bar0_size);
				return -1;
			}
		} else if (s[4]) {
			printf("Error: invalid address '%s' (expected ADDR or bar0+OFFSET)\n", s);
			return -1;
		}
		*adr = pcie_devs[port].bar0 + v;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end || end == s || *s == '-' || *s == '+' || errno) {   /* strtoull takes a sign: not an address */
		printf("Error: invalid address '%s' (expected a 64-bit ADDR or bar0+OFFSET)\n", s);
		return -1;
	}
	*adr = v;
	return 0;
}

/* A dword-aligned memory address: ADDR or bar0+OFFSET. */
static int parse_mem_addr(int port, const char *s, uint64_t *adr)
{
	if (parse_mem_addr_any(port, s, adr))
		return -1;
	if (*adr & 3) {
		printf("Error: address 0x%llx is not dword aligned\n", (unsigned long long)*adr);
		return -1;
	}
	return 0;
}

static const char *ltssm_name(int s)
{
#if PCIE_LTSSM_S7
	/* 7-series pl_ltssm_state (PG054): the codes Xilinx's own pcie_7x example designs name (L0,
	 * Recovery.Idle); the others are in PG054's table. */
	switch (s) {
	case 0x16: return "L0";
	case 0x20: return "Recovery.Idle";
	default:   return "7-series code: see PG054, pl_ltssm_state";
	}
#else
	/* UltraScale(+) cfg_ltssm_state (PG156, PG213), also the simulated link's. */
	switch (s) {
	case 0x00: return "Detect.Quiet";
	case 0x01: return "Detect.Active";
	case 0x02: return "Polling.Active";
	case 0x03: return "Polling.Compliance";
	case 0x04: return "Polling.Configuration";
	case 0x05: return "Configuration.Linkwidth.Start";
	case 0x06: return "Configuration.Linkwidth.Accept";
	case 0x07: return "Configuration.Lanenum.Accept";
	case 0x08: return "Configuration.Lanenum.Wait";
	case 0x09: return "Configuration.Complete";
	case 0x0a: return "Configuration.Idle";
	case 0x0b: return "Recovery.RcvrLock";
	case 0x0c: return "Recovery.Speed";
	case 0x0d: return "Recovery.RcvrCfg";
	case 0x0e: return "Recovery.Idle";
	case 0x10: return "L0";
	default:   return "other";
	}
#endif
}

static void pcie_scan_handler(int nb_params, char **params)
{
	int port, first = 0, last = pcie_nports() - 1, r, found = 0;
	if (nb_params > 0) {
		if ((port = parse_port(nb_params, params, 0)) < 0)
			return;
		first = last = port;
	}
	for (port = first; port <= last; port++) {
#ifdef CSR_NVME0_BASE
		/* Enumeration turns the device's memory decoding and DMA off while it assigns BAR0. */
		if (nvme_engine_in_use(port)) {
			printf("Error: pcie%d: not scanned: %s\n", port, nvme_strerror(NVME_ERR_IN_USE));
			continue;
		}
#endif
		r = pcie_enumerate(port, 1);
		if (r != PCIE_OK) {
			printf("pcie%d: enumeration failed: %s\n", port, pcie_strerror(r));
#ifdef CSR_NVME0_BASE
			if (nvme_ctrls[port].initialized) {
				nvme_ctrls[port].initialized = 0;    /* no BAR0 any more */
				printf("pcie%d: its NVMe controller needs nvme_init\n", port);
			}
#endif
			continue;
		}
		found++;
		/* An NVMe controller: show CAP and VS through BAR0 (memory requests). */
		if (pcie_devs[port].class_code == 0x010802) {
			uint64_t cap;
			uint32_t vs;
			r = pcie_mem_read64(port, pcie_devs[port].bar0 + 0x00, &cap);
			if (r == PCIE_OK)
				r = pcie_mem_read32(port, pcie_devs[port].bar0 + 0x08, &vs);
			if (r != PCIE_OK) {
				printf("  NVMe registers: read failed: %s\n", pcie_strerror(r));
				continue;
			}
			printf("  NVMe CAP 0x%016llx (MQES %u, DSTRD %u, TO %u ms, MPSMIN %u KiB), VS %lu.%lu.%lu\n",
				(unsigned long long)cap, (unsigned)(cap & 0xffff) + 1, (unsigned)((cap >> 32) & 0xf),
				(unsigned)((cap >> 24) & 0xff)*500, 4u << ((cap >> 48) & 0xf),
				(unsigned long)(vs >> 16), (unsigned long)((vs >> 8) & 0xff), (unsigned long)(vs & 0xff));
		}
	}
	printf("RESULT name=pcie_scan devices=%d\n", found);
}
define_literec_command(pcie_scan, pcie_scan_handler, "Enumerate the SSD of each root port: pcie_scan [port]");

static void pcie_link_handler(int nb_params, char **params)
{
	int port, up, gen, width, ltssm;
	if ((port = parse_port(nb_params, params, 0)) < 0)
		return;
	pcie_link_status(port, &up, &gen, &width, &ltssm);
	printf("pcie%d: link %s, LTSSM 0x%02x (%s)", port, up ? "up" : "down", ltssm, ltssm_name(ltssm));
	if (up)
		printf(", Gen%d x%d", gen, width);
	printf("\n");
	if (!up) {
		printf("RESULT name=pcie_link port=%d up=0\n", port);
		return;
	}
	if (!pcie_devs[port].present) {
		printf("  device not enumerated: run pcie_scan for MPS/MRRS\n");
		printf("RESULT name=pcie_link port=%d up=1 gen=%d width=%d\n", port, gen, width);
		return;
	}
	printf("  root port MPS supported %d B, device %d B -> MPS %d B; MRRS %d B\n",
		pcie_root_mps(port), pcie_devs[port].mps_supported, pcie_devs[port].mps, pcie_devs[port].mrrs);
	printf("RESULT name=pcie_link port=%d up=1 gen=%d width=%d mps=%d mrrs=%d\n", port, gen, width,
		pcie_devs[port].mps, pcie_devs[port].mrrs);
}
define_literec_command(pcie_link, pcie_link_handler, "Root port link status and negotiated MPS/MRRS: pcie_link [port]");

static void pcie_cfg_rd_handler(int nb_params, char **params)
{
	unsigned long reg;
	uint32_t v;
	int port, r;
	if (nb_params < 1) {
		printf("pcie_cfg_rd <offset> [port]   (device 01:00.0 of the root port)\n");
		return;
	}
	if (literec_parse_ulong(params[0], &reg) || reg > 0xffc || (reg & 3)) {
		printf("Error: invalid offset '%s': a dword-aligned offset 0x000..0xffc\n", params[0]);
		return;
	}
	if ((port = parse_port(nb_params, params, 1)) < 0)
		return;
	r = pcie_cfg_read(port, PCIE_DEV_BUS, 0, 0, reg, &v);
	if (r != PCIE_OK) {
		printf("Error: configuration read 0x%03lx: %s\n", reg, pcie_strerror(r));
		return;
	}
	printf("cfg[0x%03lx] = 0x%08lx\n", reg, (unsigned long)v);
}
define_literec_command(pcie_cfg_rd, pcie_cfg_rd_handler, "Configuration read: pcie_cfg_rd <offset> [port]");

static void pcie_cfg_wr_handler(int nb_params, char **params)
{
	unsigned long reg, val;
	int port, r;
	if (nb_params < 2) {
		printf("pcie_cfg_wr <offset> <value> [port]   (device 01:00.0 of the root port)\n");
		return;
	}
	if (literec_parse_ulong(params[0], &reg) || reg > 0xffc || (reg & 3)) {
		printf("Error: invalid offset '%s': a dword-aligned offset 0x000..0xffc\n", params[0]);
		return;
	}
	if (literec_parse_ulong(params[1], &val) || val > 0xffffffffUL) {
		printf("Error: invalid value '%s': a 32-bit number\n", params[1]);
		return;
	}
	if ((port = parse_port(nb_params, params, 2)) < 0)
		return;
	r = pcie_cfg_write(port, PCIE_DEV_BUS, 0, 0, reg, val, 0xf);
	if (r != PCIE_OK)
		printf("Error: configuration write 0x%03lx: %s\n", reg, pcie_strerror(r));
}
define_literec_command(pcie_cfg_wr, pcie_cfg_wr_handler, "Configuration write: pcie_cfg_wr <offset> <value> [port]");

static void pcie_mem_rd_handler(int nb_params, char **params)
{
	uint64_t adr;
	uint32_t v;
	int port, r;
	if (nb_params < 1) {
		printf("pcie_mem_rd <addr|bar0+offset> [port]   (32-bit memory read)\n");
		return;
	}
	if ((port = parse_port(nb_params, params, 1)) < 0)
		return;
	if (parse_mem_addr(port, params[0], &adr))
		return;
	r = pcie_mem_read32(port, adr, &v);
	if (r != PCIE_OK) {
		printf("Error: memory read 0x%llx: %s\n", (unsigned long long)adr, pcie_strerror(r));
		return;
	}
	printf("mem[0x%llx] = 0x%08lx\n", (unsigned long long)adr, (unsigned long)v);
}
define_literec_command(pcie_mem_rd, pcie_mem_rd_handler, "Memory read (device BAR): pcie_mem_rd <addr|bar0+off> [port]");

static void pcie_mem_wr_handler(int nb_params, char **params)
{
	uint64_t adr;
	unsigned long val;
	int port, r;
	if (nb_params < 2) {
		printf("pcie_mem_wr <addr|bar0+offset> <value> [port]   (32-bit memory write)\n");
		return;
	}
	if ((port = parse_port(nb_params, params, 2)) < 0)
		return;
	if (parse_mem_addr(port, params[0], &adr))
		return;
	if (literec_parse_ulong(params[1], &val) || val > 0xffffffffUL) {
		printf("Error: invalid value '%s': a 32-bit number\n", params[1]);
		return;
	}
	r = pcie_mem_write32(port, adr, val);
	if (r != PCIE_OK)
		printf("Error: memory write 0x%llx: %s\n", (unsigned long long)adr, pcie_strerror(r));
}
define_literec_command(pcie_mem_wr, pcie_mem_wr_handler, "Memory write (device BAR): pcie_mem_wr <addr|bar0+off> <value> [port]");

static void pcie_stats_handler(int nb_params, char **params)
{
	struct pcie_counters c;
	int port;
	if ((port = parse_port(nb_params, params, 0)) < 0)
		return;
	pcie_read_counters(port, &c);
	printf("pcie%d: device DMA: %lu completions served, %llu bytes written\n", port,
		(unsigned long)c.rd_served, (unsigned long long)c.wr_bytes);
	printf("  refused: %lu reads (UR), %lu writes dropped, %lu poisoned, %lu malformed; last refused address 0x%llx\n",
		(unsigned long)c.rd_refused, (unsigned long)c.wr_refused, (unsigned long)c.poisoned,
		(unsigned long)c.malformed, (unsigned long long)c.refused_adr);
	printf("  unsupported TLPs %lu, unexpected completions %lu, request timeouts %lu, doorbells %lu, discontinued %lu\n",
		(unsigned long)c.unsupported, (unsigned long)c.unexpected, (unsigned long)c.timeouts,
		(unsigned long)c.doorbells, (unsigned long)c.discontinued);
	printf("RESULT name=pcie_stats port=%d rd_served=%lu wr_bytes=%llu rd_refused=%lu wr_refused=%lu poisoned=%lu malformed=%lu refused_adr=0x%llx unsupported=%lu unexpected=%lu timeouts=%lu doorbells=%lu discontinued=%lu\n",
		port, (unsigned long)c.rd_served, (unsigned long long)c.wr_bytes, (unsigned long)c.rd_refused,
		(unsigned long)c.wr_refused, (unsigned long)c.poisoned, (unsigned long)c.malformed,
		(unsigned long long)c.refused_adr, (unsigned long)c.unsupported, (unsigned long)c.unexpected,
		(unsigned long)c.timeouts, (unsigned long)c.doorbells, (unsigned long)c.discontinued);
}
define_literec_command(pcie_stats, pcie_stats_handler, "Root-complex counters (refused DMA, errors): pcie_stats [port]");

/* At boot: release PERST#, enumerate each port, one line each. The link gets 20 ms of modeled time,
 * or PCIE_BOOT_LINK_TIMEOUT_US of a board (its PERST# sequencer holds PERST# >= 100 ms after reset,
 * then the SSD trains). */
#ifndef PCIE_BOOT_LINK_TIMEOUT_US
#define PCIE_BOOT_LINK_TIMEOUT_US 20000
#endif
static void pcie_boot_init(void)
{
	int port, r;
	for (port = 0; port < pcie_nports(); port++) {
		r = pcie_enumerate_timeout(port, 0, PCIE_BOOT_LINK_TIMEOUT_US);
		if (r != PCIE_OK) {
			printf("pcie%d: %s\n", port, pcie_strerror(r));
			continue;
		}
		printf("pcie%d: link Gen%d x%d, 01:00.0 [%04x:%04x] class %06lx, BAR0 0x%08llx, MPS %d\n", port,
			pcie_devs[port].link_gen, pcie_devs[port].link_width, pcie_devs[port].vendor,
			pcie_devs[port].device, (unsigned long)pcie_devs[port].class_code,
			(unsigned long long)pcie_devs[port].bar0, pcie_devs[port].mps);
	}
}
define_init_func(pcie_boot_init);

#endif
