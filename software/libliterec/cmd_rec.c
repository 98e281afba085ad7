// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Recorder BIOS commands: configuration of this build.

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include <bios/command.h>

#include "literec.h"
#include "pcie.h"

static void rec_info_handler(int nb_params, char **params)
{
	printf("LiteRecorder build configuration:\n");
	printf("  sys_clk        : %lu Hz (modeled hardware clock)\n", (unsigned long)CONFIG_CLOCK_FREQUENCY);
#ifdef MAIN_RAM_SIZE
	printf("  DRAM           : %lu MiB at 0x%08lx\n",
		(unsigned long)(MAIN_RAM_SIZE >> 20), (unsigned long)MAIN_RAM_BASE);
#else
	printf("  DRAM           : none\n");
#endif
	printf("  SSD ports      : %d\n", LITEREC_SSD_PORTS);
	printf("  chunk size     : %lu KiB\n", (unsigned long)(LITEREC_CHUNK_SIZE >> 10));
	printf("  PCIe datapath  : %d bits\n", LITEREC_PCIE_DATA_WIDTH);
#ifdef RECORDER_STAGING_SLOTS
	printf("  ring           : %d on-chip slots per SSD port (%lu KiB of block RAM each), then the DRAM ring\n",
		RECORDER_STAGING_SLOTS, (unsigned long)(RECORDER_STAGING_BYTES >> 10));
#endif
#ifdef LITEREC_DRAM_PEAK_MBPS
	/* The links' budget: as trained now when every port's link is up (the simulated drive's link is a
	 * run-time option, a board's the IP's and the drive's), else the build's assumption. */
	uint32_t link_mbps = LITEREC_LINK_MBPS, links_mbps = LITEREC_LINKS_MBPS;
	int trained = 1;
#ifdef CSR_PCIE0_BASE
	uint32_t sum = 0, first = 0;
	for (int p = 0; p < LITEREC_SSD_PORTS; p++) {
		int gen, width;
		uint32_t m = pcie_port_payload_mbps(p, &gen, &width);
		if (!m) {
			trained = 0;
			break;
		}
		if (p == 0)
			first = m;
		sum += m;
		printf("  SSD link %d     : Gen%d x%d as trained, %lu MB/s of completion payload (MPS %d)\n", p, gen, width,
			(unsigned long)m, pcie_devs[p].mps ? pcie_devs[p].mps : LITEREC_LINK_MPS);
	}
	if (trained) {
		link_mbps  = first;
		links_mbps = sum;
	}
#else
	trained = 0;
#endif
	if (!trained)
		printf("  SSD links      : not all trained (nvme_init trains them): the build's Gen%d x%d, %d MB/s each\n",
			LITEREC_LINK_GEN, LITEREC_LINK_WIDTH, LITEREC_LINK_MBPS);
	/* A byte that goes through the DRAM ring crosses the DRAM twice: that ring's ceiling is half the peak
	 * (with on-chip slots only the bytes the drives have not taken go there). */
	printf("  DRAM bandwidth : %d MB/s peak; the DRAM ring carries %d MB/s at most (each byte crosses it twice)\n",
		LITEREC_DRAM_PEAK_MBPS, LITEREC_DRAM_CEILING_MBPS);
	printf("  budget         : %lu MB/s of SSD links in all: %s\n", (unsigned long)links_mbps,
		links_mbps <= LITEREC_DRAM_CEILING_MBPS ? "within the DRAM ring's ceiling" :
#ifdef RECORDER_STAGING_SLOTS
		"above the DRAM ring's ceiling (the on-chip slots carry the steady state; the DRAM takes spills)"
#else
		"bound by the DRAM"
#endif
		);
#endif
	printf("RESULT name=rec_info sys_clk_hz=%lu dram_bytes=%lu ssd_ports=%d chunk_bytes=%lu pcie_data_width=%d",
		(unsigned long)CONFIG_CLOCK_FREQUENCY,
#ifdef MAIN_RAM_SIZE
		(unsigned long)MAIN_RAM_SIZE,
#else
		0UL,
#endif
		LITEREC_SSD_PORTS, (unsigned long)LITEREC_CHUNK_SIZE, LITEREC_PCIE_DATA_WIDTH);
#ifdef LITEREC_DRAM_PEAK_MBPS
	printf(" dram_peak_mbps=%d dram_ceiling_mbps=%d link_mbps=%lu links_mbps=%lu links_trained=%d dram_bound=%d",
		LITEREC_DRAM_PEAK_MBPS, LITEREC_DRAM_CEILING_MBPS, (unsigned long)link_mbps, (unsigned long)links_mbps,
		trained, links_mbps > LITEREC_DRAM_CEILING_MBPS);
#endif
#ifdef RECORDER_STAGING_SLOTS
	printf(" onchip_slots=%d staging_bytes=%lu", RECORDER_STAGING_SLOTS*LITEREC_SSD_PORTS,
		(unsigned long)RECORDER_STAGING_BYTES);
#endif
	printf("\n");
}
define_literec_command(rec_info, rec_info_handler, "Recorder build configuration (clock, DRAM, SSD ports, chunk)");

/* Test pattern: 32-bit word i of a buffer = xs(xs(seed + i)), xs = xorshift32. --------------------- */

#include <system.h>

#define ZERO_PATTERN 0xffffffffffffULL   /* not a 32-bit seed: the all-zero pattern */

static uint32_t xorshift32(uint32_t x)
{
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* Word i of the pattern (cores/recorder/frontend/pattern.py): xs(xs(seed + i)). */
static uint32_t pattern_word(unsigned long long seed, uint32_t i)
{
	if (seed == ZERO_PATTERN)
		return 0;
	return xorshift32(xorshift32((uint32_t)seed + i));
}

#ifdef CSR_DRAMPAT_BASE
/* The DRAM pattern engine: regions aligned on the DRAM word (and not the zero pattern). */
static int drampat_usable(unsigned long addr, unsigned long bytes, unsigned long long seed)
{
	return seed != ZERO_PATTERN && (addr % DRAMPAT_WORD_BYTES) == 0 && (bytes % DRAMPAT_WORD_BYTES) == 0;
}

static void drampat_run(unsigned long addr, unsigned long bytes, unsigned long long seed, int check)
{
	flush_cpu_dcache();
	flush_l2_cache();          /* CPU-written lines reach the DRAM first */
	drampat_base_write(addr - MAIN_RAM_BASE);
	drampat_length_write(bytes);
	drampat_seed_write((uint32_t)seed);
	drampat_ctrl_write((1 << CSR_DRAMPAT_CTRL_START_OFFSET) | ((check ? 1 : 0) << CSR_DRAMPAT_CTRL_CHECK_OFFSET));
	while (drampat_busy_read());
	flush_cpu_dcache();
	flush_l2_cache();          /* no stale CPU copy of what the engine wrote */
}
#endif

static int parse_buf_args(int nb_params, char **params, const char *name, unsigned long *addr,
	unsigned long *bytes, unsigned long long *seed)
{
	*seed = 1;
	if (nb_params < 2) {
		printf("%s <addr> <bytes> [seed|zero]   (32-bit words: xs(xs(seed + i)), xs = xorshift32, or 0)\n", name);
		return -1;
	}
	if (literec_parse_ulong(params[0], addr) || (*addr & 3)) {
		printf("Error: invalid address '%s': a dword-aligned address\n", params[0]);
		return -1;
	}
	if (literec_parse_ulong(params[1], bytes) || *bytes == 0 || (*bytes & 3)) {
		printf("Error: invalid size '%s': a non-zero multiple of 4 bytes\n", params[1]);
		return -1;
	}
	if (nb_params > 2 && !strcmp(params[2], "zero"))
		*seed = ZERO_PATTERN;
	else if (nb_params > 2 && (literec_parse_u64(params[2], seed) || *seed > 0xffffffffULL)) {
		printf("Error: invalid seed '%s': a 32-bit number or 'zero'\n", params[2]);
		return -1;
	}
#ifdef MAIN_RAM_BASE
	if (*addr < MAIN_RAM_BASE || (uint64_t)*addr >= (uint64_t)MAIN_RAM_BASE + MAIN_RAM_SIZE ||
	    *bytes > (uint64_t)MAIN_RAM_BASE + MAIN_RAM_SIZE - *addr) {
		printf("Error: 0x%08lx..0x%08lx is outside the DRAM 0x%08lx..0x%08lx\n", *addr, *addr + *bytes - 1,
			(unsigned long)MAIN_RAM_BASE, (unsigned long)((uint64_t)MAIN_RAM_BASE + MAIN_RAM_SIZE - 1));
		return -1;
	}
#endif
	return 0;
}

static void rec_fill_handler(int nb_params, char **params)
{
	unsigned long addr, bytes, i;
	unsigned long long seed;
	volatile uint32_t *p;
	if (parse_buf_args(nb_params, params, "rec_fill", &addr, &bytes, &seed))
		return;
#if defined(CSR_RECORDER_BASE) && defined(PCIE_DRAM_WINDOW_BASE)
	/* The recorder's ring lives in the DRAM window: not while it records or replays. */
	if ((recorder_status_read() & (1 << CSR_RECORDER_STATUS_BUSY_OFFSET)) &&
	    (uint64_t)addr + bytes > PCIE_DRAM_WINDOW_BASE &&
	    addr < (uint64_t)PCIE_DRAM_WINDOW_BASE + PCIE_DRAM_WINDOW_SIZE) {
		printf("Error: 0x%08lx..0x%08lx overlaps the recorder's ring (0x%08lx..0x%08lx) while it runs "
			"(rec_stop / rec_abort / rec_wait first); nothing was written\n", addr, addr + bytes - 1,
			(unsigned long)PCIE_DRAM_WINDOW_BASE, (unsigned long)((uint64_t)PCIE_DRAM_WINDOW_BASE + PCIE_DRAM_WINDOW_SIZE - 1));
		return;
	}
#endif
#ifdef CSR_DRAMPAT_BASE
	if (drampat_usable(addr, bytes, seed)) {
		drampat_run(addr, bytes, seed, 0);
		printf("filled 0x%08lx..0x%08lx with pattern seed %llu (DRAM pattern engine)\n", addr, addr + bytes - 1, seed);
		return;
	}
#endif
	p = (volatile uint32_t *)addr;
	for (i = 0; i < bytes/4; i++)
		p[i] = pattern_word(seed, i);
	flush_cpu_dcache();
	flush_l2_cache();
	printf("filled 0x%08lx..0x%08lx with pattern seed %llu\n", addr, addr + bytes - 1, seed);
}
define_literec_command(rec_fill, rec_fill_handler, "Fill DRAM with a test pattern: rec_fill <addr> <bytes> [seed]");

static void rec_check_handler(int nb_params, char **params)
{
	unsigned long addr, bytes, i, errors = 0, first = 0;
	unsigned long long seed;
	volatile uint32_t *p;
	if (parse_buf_args(nb_params, params, "rec_check", &addr, &bytes, &seed))
		return;
#ifdef CSR_DRAMPAT_BASE
	if (drampat_usable(addr, bytes, seed)) {
		drampat_run(addr, bytes, seed, 1);
		errors = drampat_errors_read();
		first  = drampat_first_error_read()/4;
		if (errors) {
			p = (volatile uint32_t *)addr;
			printf("first mismatch at 0x%08lx: 0x%08lx, expected 0x%08lx\n", addr + 4*first,
				(unsigned long)p[first], (unsigned long)pattern_word(seed, first));
		}
		goto report;
	}
#endif
	flush_cpu_dcache();
	flush_l2_cache();
	p = (volatile uint32_t *)addr;
	for (i = 0; i < bytes/4; i++) {
		if (p[i] != pattern_word(seed, i)) {
			if (!errors) {
				first = i;
				printf("first mismatch at 0x%08lx: 0x%08lx, expected 0x%08lx\n", addr + 4*i,
					(unsigned long)p[i], (unsigned long)pattern_word(seed, i));
			}
			errors++;
		}
	}
#ifdef CSR_DRAMPAT_BASE
report:
#endif
	printf("checked 0x%08lx..0x%08lx (seed %llu): %lu word errors\n", addr, addr + bytes - 1, seed, errors);
	printf("RESULT name=rec_check bytes=%lu errors=%lu first_error_offset=%lu\n", bytes, errors,
		errors ? first*4 : 0);
}
define_literec_command(rec_check, rec_check_handler, "Check a test pattern in DRAM: rec_check <addr> <bytes> [seed]");

/* Modeled time since power-up (64-bit timer): the simulation's speed is measured against it. ---- */

static void rec_uptime_handler(int nb_params, char **params)
{
	uint64_t c = literec_cycles();
	printf("RESULT name=uptime cycles=%llu us=%llu\n", (unsigned long long)c,
		(unsigned long long)literec_cycles_to_us(c));
}
define_literec_command(rec_uptime, rec_uptime_handler, "Modeled time since power-up (64-bit cycle counter)");
