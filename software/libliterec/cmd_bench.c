// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// nvme_bench: the seeds' benchmarks on a port's queue engine (the request generator feeds it, no
// CPU work per command) and on the recorder (full-disk write and compare). Time is the modeled
// clock, 64-bit; every point or interval prints a RESULT line.
//
//   nvme_bench <seq|rand> <read|write> <kib> <qd> <mib> [port]   one run
//   nvme_bench peak [max_chunks] [chunk=KiB] [port=N]            seed 000's chunk-count sweep
//   nvme_bench sizes [qd] [mib=N|kib=N] [port=N]                    seed 003's transfer-size sweep
//   nvme_bench full [mib] [interval_ms] [port=N]                 write the region, read and compare
//   nvme_bench iops [mib] [seconds] [op=%] [interval=ms] [port=N] seed 004's IOPS consistency

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <generated/mem.h>

#include <bios/command.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"
#include "record.h"
#include "catalog.h"

/* The request generator and statistics are built with the benchmark (NVMeHost with_bench). */
#if defined(CSR_NVME0_BASE) && defined(CSR_NVME0_GEN_CTRL_ADDR)

#define REG(port, name)   (nvme_csr_base(port) + (CSR_NVME0_##name##_ADDR - CSR_NVME0_BASE))
#define RD(port, name)    csr_read_simple(REG(port, name))
#define WR(port, name, v) csr_write_simple((v), REG(port, name))
#define RD64(port, name)    literec_csr_read64(REG(port, name))
#define WR64(port, name, v) literec_csr_write64(REG(port, name), (v))

#define GEN_UNTIL_STOPPED 0xffffffffUL

/* force=1 of the command line: the benchmarks that write may overwrite the catalog and recordings. */
static int bench_force;

/* The LBAs a benchmark writes, checked against the catalog (catalog_guard) before it starts. */
static int bench_guard(int port, uint64_t lba, uint64_t blocks)
{
	return catalog_guard("nvme_bench", 1u << port, lba, blocks, bench_force);
}

/* One generator run ------------------------------------------------------------------------------ */

struct gen_run {
	/* In */
	int      port, random, op, qd;
	uint64_t lba;                /* first LBA */
	uint64_t span;               /* random: LBAs drawn from (0: the namespace's largest power of two) */
	uint32_t blocks, count;      /* blocks per request; requests (GEN_UNTIL_STOPPED: until tick says) */
	uint64_t interval;           /* cycles between tick() calls (0: none) */
	uint64_t duration;           /* GEN_UNTIL_STOPPED: cycles until the generator is stopped */
	void   (*tick)(struct gen_run *g, uint64_t t, uint32_t commands);
	void    *ctx;
	/* Out (from the port's statistics) */
	uint64_t cmds, bytes, cycles, lat_sum, lat_max, errors, pushes;
	uint64_t requests;           /* completed requests: cmds / per_request */
	uint32_t per_request;        /* NVMe commands per request (the engine splits at max_xfer) */
};

/* n events in cycles of the modeled clock, per second (64-bit: n x f apart when it would overflow). */
static uint64_t per_second(uint64_t n, uint64_t cycles)
{
	uint64_t us;
	if (!cycles)
		return 0;
	if (n <= ~0ULL/CONFIG_CLOCK_FREQUENCY)
		return n*CONFIG_CLOCK_FREQUENCY/cycles;
	us = literec_cycles_to_us(cycles);
	return n/us*1000000 + n % us*1000000/us;
}

/* Mean of sum over n, in us x 1000 (sum in cycles; no 64-bit overflow for sums of years). */
static uint64_t mean_us_x1000(uint64_t sum, uint64_t n)
{
	if (!n)
		return 0;
	return literec_cycles_to_us(sum/n*1000 + sum % n*1000/n);
}

/* Runs the generator on a port; 0 when every request completed without an error, -1 otherwise
 * (the reason printed). */
static int gen_run(struct gen_run *g)
{
	struct nvme_ctrl *c = &nvme_ctrls[g->port];
	struct nvme_engine_status st;
	uint64_t mask, ring, t0, tl, tp, timeout, now, done, last = 0, expected;
	uint32_t max_blocks = c->max_xfer >> c->lba_shift;
	int port = g->port, stopped = 0, timed_out = 0;

	if (nvme_engine_in_use(port)) {
		printf("Error: nvme%d: %s\n", port, nvme_strerror(NVME_ERR_IN_USE));
		return -1;
	}
	nvme_engine_status(port, &st);
	if (st.error) {
		nvme_report_engine(port);
		return -1;
	}
	/* Random LBAs: the smallest power of two covering the span; draws beyond it are skipped. */
	mask = 1;
	if (g->span) {
		while (mask < g->span)
			mask *= 2;
	} else {
		while (mask*2 <= c->nsze)
			mask *= 2;
	}
	mask -= 1;
	/* Buffers: a ring of up to 64 MiB at the start of the DRAM window. */
	ring = 64ULL << 20;
	if (ring > PCIE_DRAM_WINDOW_SIZE)
		ring = PCIE_DRAM_WINDOW_SIZE;
	nvme_engine_set_qd(port, g->qd);
	WR64(port, GEN_LBA, g->lba);
	WR64(port, GEN_MASK, mask);
	WR64(port, GEN_LIMIT, g->span);
	WR(port, GEN_BLOCKS, g->blocks);
	WR(port, GEN_COUNT, g->count);
	WR(port, GEN_ADR, PCIE_DRAM_WINDOW_BASE);
	WR(port, GEN_ADR_MASK, ring - 1);
	WR(port, GEN_SEED, 0x1234567);
	/* Statistics from now on; the generator feeds the engine. */
	WR(port, CTRL, (1 << CSR_NVME0_CTRL_ENABLE_OFFSET) | (1 << CSR_NVME0_CTRL_STATS_CLEAR_OFFSET) |
		(1 << CSR_NVME0_CTRL_SOURCE_OFFSET));
	WR(port, GEN_CTRL, (1 << CSR_NVME0_GEN_CTRL_START_OFFSET) | (g->random << CSR_NVME0_GEN_CTRL_RANDOM_OFFSET) |
		(g->op << CSR_NVME0_GEN_CTRL_OP_OFFSET));
	t0 = tl = tp = literec_cycles();
	timeout = literec_us_to_cycles(600000000ULL);   /* 600 s of modeled time without progress */
	/* The engine splits a request into commands of max_xfer: the statistics count commands. */
	g->per_request = g->blocks/max_blocks + (g->blocks % max_blocks != 0);
	expected = (uint64_t)g->count*g->per_request;
	for (;;) {
		nvme_engine_status(port, &st);
		if (st.error && (st.outstanding == 0 || st.err_status == NVME_STATUS_TIMEOUT))
			break;
		done = RD64(port, ST_COMMANDS);
		if ((stopped || (done >= expected && !RD(port, GEN_BUSY))) && st.outstanding == 0)
			break;
		now = literec_cycles();
		if (done != last) {
			last = done;
			tp = now;
		}
		if (!stopped && g->count == GEN_UNTIL_STOPPED && now - t0 >= g->duration) {
			/* Stop: the engine goes back to the CPU source, the commands in flight complete (the
			 * last interval ends here: commands completed later are only in the totals). */
			WR(port, CTRL, (1 << CSR_NVME0_CTRL_ENABLE_OFFSET));
			stopped = 1;
			if (g->interval)
				g->tick(g, now - t0, RD64(port, ST_COMMANDS));
		} else if (!stopped && g->interval && now - tl >= g->interval) {
			tl += g->interval;
			g->tick(g, now - t0, RD64(port, ST_COMMANDS));
		}
		if (now - tp > timeout) {
			timed_out = 1;
			break;
		}
	}
	nvme_engine_status(port, &st);
	WR(port, CTRL, (1 << CSR_NVME0_CTRL_ENABLE_OFFSET));    /* Back to CPU requests. */
	nvme_engine_set_qd(port, c->io_qsize - 1);
	g->cmds    = RD64(port, ST_COMMANDS);
	g->bytes   = RD64(port, ST_BYTES);
	g->lat_sum = RD64(port, ST_LAT_SUM);
	g->lat_max = RD(port, ST_LAT_MAX);
	g->errors  = RD64(port, ST_ERRORS);
	g->cycles  = RD64(port, ST_ELAPSED);
	g->pushes  = RD(port, REQ_PUSHES);
	g->requests = g->cmds/g->per_request;
	if (!g->cycles)
		g->cycles = 1;
	if (timed_out) {
		printf("Error: nvme%d: the benchmark made no progress for 600 s of modeled time (%llu of %llu commands)\n",
			port, (unsigned long long)g->cmds, (unsigned long long)expected);
		return -1;
	}
	if (st.error) {
		nvme_report_engine(port);
		return -1;
	}
	if (g->count == GEN_UNTIL_STOPPED && !stopped) {
		printf("Error: nvme%d: the generator issued all of its %lu requests before the duration ended: "
			"a shorter duration\n", port, (unsigned long)GEN_UNTIL_STOPPED);
		return -1;
	}
	return 0;
}

/* Arguments ----------------------------------------------------------------------------------------- */

/* Splits params into positional values and key=value options; port= selects the port. Returns -1
 * with the reason printed. */
struct bench_args {
	int    npos;
	char  *pos[4];
	int    nkv;
	char  *key[4], *val[4];
	int    port;
};

static int bench_args(int nb_params, char **params, struct bench_args *a, const char *keys)
{
	int i;
	memset(a, 0, sizeof(*a));
	for (i = 0; i < nb_params; i++) {
		char *eq = strchr(params[i], '=');
		if (!eq) {
			if (a->npos == 4) {
				printf("Error: too many arguments ('%s')\n", params[i]);
				return -1;
			}
			a->pos[a->npos++] = params[i];
			continue;
		}
		*eq = 0;
		if (!strcmp(params[i], "port")) {
			char *p[1] = {eq + 1};
			if (nvme_arg_port(1, p, 0, &a->port))
				return -1;
			continue;
		}
		/* keys: "a,b,c" */
		{
			const char *k = keys;
			int found = 0, n = strlen(params[i]);
			while (k && *k) {
				const char *e = strchr(k, ',');
				int l = e ? e - k : (int)strlen(k);
				if (l == n && !strncmp(k, params[i], n))
					found = 1;
				k = e ? e + 1 : NULL;
			}
			if (!found || a->nkv == 4) {
				printf("Error: unknown option '%s=': allowed ", params[i]);
				for (k = keys; *k; k++)
					printf(*k == ',' ? "=, " : "%c", *k);
				printf("%sport=\n", *keys ? "=, " : "");
				return -1;
			}
		}
		a->key[a->nkv] = params[i];
		a->val[a->nkv++] = eq + 1;
	}
	return nvme_need_init(a->port);
}

static const char *bench_opt(struct bench_args *a, const char *key)
{
	int i;
	for (i = 0; i < a->nkv; i++)
		if (!strcmp(a->key[i], key))
			return a->val[i];
	return NULL;
}

/* A number in [lo, hi]; -1 with the reason printed. */
static int bench_num(const char *what, const char *s, unsigned long lo, unsigned long hi, unsigned long *v)
{
	if (literec_parse_ulong(s, v) || *v < lo || *v > hi) {
		printf("Error: %s '%s': allowed %lu..%lu\n", what, s, lo, hi);
		return -1;
	}
	return 0;
}

/* Seconds with up to 6 decimals ("30", "0.25") as microseconds; -1 if not such a number. */
static int parse_seconds_us(const char *s, uint64_t *us)
{
	uint64_t v = 0, scale = 1000000;
	int dot = 0, digits = 0;
	for (; *s; s++) {
		if (*s == '.' && !dot) {
			dot = 1;
			continue;
		}
		if (*s < '0' || *s > '9' || (dot && scale == 1) || v > 100000000000ULL)
			return -1;
		if (dot) {
			scale /= 10;
			v += (uint64_t)(*s - '0')*scale;
		} else
			v = v*10 + (uint64_t)(*s - '0')*1000000;
		digits++;
	}
	*us = v;
	return digits ? 0 : -1;
}

/* MiB/s x 1000 of bytes in cycles of the modeled clock. */
static uint64_t mibps_x1000(uint64_t bytes, uint64_t cycles)
{
	return rec_kbps(bytes, cycles)*1000000/1048576;
}

/* v / 10^d right-aligned in width characters. */
static void print_fixed_w(uint64_t v, int d, int width)
{
	char buf[32];
	uint64_t p = 1;
	int i;
	for (i = 0; i < d; i++)
		p *= 10;
	snprintf(buf, sizeof(buf), "%llu.%0*llu", (unsigned long long)(v/p), d, (unsigned long long)(v % p));
	printf("%*s", width, buf);
}

static void print_ms(uint64_t cycles)
{
	literec_print_fixed(literec_cycles_to_us(cycles), 3);
}

/* Payload limit of a link direction (MB/s, x1000): lanes x lane rate x MPS / (MPS + overhead),
 * before the DLLP/SKP share (REFERENCE.md). overhead: 20 B per CplD, 24 B per 4-dword MWr. */
static uint64_t link_limit_kbps(int gen, int width, int mps, int overhead)
{
	/* Lane rates in kB/s: Gen1 250000, Gen2 500000, Gen3 984615, Gen4 1969231. */
	static const uint64_t lane[] = {0, 250000, 500000, 984615, 1969231};
	if (gen < 1 || gen > 4)
		return 0;
	return lane[gen]*width*mps/(mps + overhead);
}

/* nvme_bench <seq|rand> <read|write> <kib> <qd> <mib> [port] -------------------------------------- */

static void bench_single(int nb_params, char **params)
{
	unsigned long kib, qd, mib;
	int port;
	struct nvme_ctrl *c;
	struct gen_run g;
	uint64_t blocks, count, limit, mbps_x1000, iops;
	memset(&g, 0, sizeof(g));
	if (nb_params < 5) {
		printf("nvme_bench <seq|rand> <read|write> <kib> <qd> <mib> [port]\n");
		return;
	}
	g.random = !strcmp(params[0], "rand");
	if (!strcmp(params[1], "read")) g.op = NVME_OP_READ;
	else if (!strcmp(params[1], "write")) g.op = NVME_OP_WRITE;
	else { printf("Error: operation '%s': allowed read or write\n", params[1]); return; }
	if (nvme_arg_port(nb_params, params, 5, &port) || nvme_need_init(port))
		return;
	c = &nvme_ctrls[port];
	if (literec_parse_ulong(params[2], &kib) || kib == 0 || (kib & (kib - 1)) ||
	    ((kib*1024) >> c->lba_shift) == 0 || kib > 16384) {
		printf("Error: command size '%s' KiB: a power of two, at least one LBA (%lu B), at most 16384\n",
			params[2], (unsigned long)c->lba_size);
		return;
	}
	if (literec_parse_ulong(params[3], &qd) || qd == 0 || qd > (unsigned long)c->io_qsize - 1) {
		printf("Error: queue depth '%s': 1..%d (I/O queue of %d entries)\n", params[3], c->io_qsize - 1, c->io_qsize);
		return;
	}
	if (literec_parse_ulong(params[4], &mib) || mib == 0 || mib*1024 < kib || mib > 1048576) {
		printf("Error: total '%s' MiB: at least one command, at most 1048576 MiB\n", params[4]);
		return;
	}
	blocks = ((uint64_t)kib*1024) >> c->lba_shift;
	count  = (uint64_t)mib*1024/kib;
	/* Sequential: from LBA 0 (wrapping is not allowed); random: the namespace's power of two. */
	if (!g.random && blocks*count > c->nsze) {
		printf("Error: %lu MiB do not fit in the namespace (%llu MB)\n", mib,
			(unsigned long long)((c->nsze << c->lba_shift)/1000000));
		return;
	}
	if (g.random && c->nsze < blocks) {
		printf("Error: the namespace is smaller than one command\n");
		return;
	}
	if (g.op == NVME_OP_WRITE && bench_guard(port, 0, g.random ? c->nsze : blocks*count))
		return;
	g.port = port; g.qd = qd; g.blocks = blocks; g.count = count;
	if (gen_run(&g)) {
		printf("RESULT name=nvme_bench ok=0 commands=%llu errors=%llu\n", (unsigned long long)g.cmds,
			(unsigned long long)g.errors);
		return;
	}
	/* NVMe Write: our CplD carry the data (20 B per TLP: 3-dword header + framing + LCRC).
	 * NVMe Read: the SSD's MWr carry it; the DMA windows lie below 4 GiB, so they have a 3-dword
	 * header too (20 B; a 64-bit address would cost 24 B). */
	limit = link_limit_kbps(pcie_devs[port].link_gen, pcie_devs[port].link_width, pcie_devs[port].mps, 20);
	mbps_x1000 = rec_kbps(g.bytes, g.cycles);
	iops = per_second(g.requests, g.cycles);
	printf("nvme%d: %s %s %lu KiB QD %lu: %llu commands, %llu bytes in %llu cycles (%llu us): ",
		port, params[0], params[1], kib, qd, (unsigned long long)g.cmds, (unsigned long long)g.bytes,
		(unsigned long long)g.cycles, (unsigned long long)(literec_cycles_to_us(g.cycles)));
	literec_print_fixed(mbps_x1000, 3);
	printf(" MB/s, %llu IOPS\n", (unsigned long long)iops);
	printf("RESULT name=nvme_bench pattern=%s op=%s kib=%lu qd=%lu commands=%llu requests=%llu bytes=%llu cycles=%llu mbps=",
		params[0], params[1], kib, qd, (unsigned long long)g.cmds, (unsigned long long)g.requests,
		(unsigned long long)g.bytes, (unsigned long long)g.cycles);
	literec_print_fixed(mbps_x1000, 3);
	printf(" iops=%llu lat_mean_us=", (unsigned long long)iops);
	literec_print_fixed(mean_us_x1000(g.lat_sum, g.cmds), 3);
	printf(" lat_max_us=");
	literec_print_fixed(literec_cycles_to_us(g.lat_max*1000), 3);
	printf(" link_limit_mbps=");
	literec_print_fixed(limit, 3);
	printf(" ratio=");
	literec_print_fixed(limit ? mbps_x1000*10000/limit : 0, 4);
	printf(" link_limit_iops=%llu iops_ratio=", (unsigned long long)(limit*1000/((uint64_t)kib*1024)));
	literec_print_fixed(limit ? iops*((uint64_t)kib*1024)*10000/(limit*1000) : 0, 4);
	printf(" cpu_requests=%llu cpu_requests_per_cmd=", (unsigned long long)g.pushes);
	literec_print_fixed(g.pushes*1000/(g.cmds ? g.cmds : 1), 3);
	printf("\n");
}

/* nvme_bench peak [max_chunks] [chunk=KiB] [port=N] ------------------------------------------------ */

#define PEAK_POINTS 32

static void bench_peak(int nb_params, char **params)
{
	struct bench_args a;
	struct nvme_ctrl *c;
	struct gen_run g;
	unsigned long max = 32768, kib = LITEREC_CHUNK_SIZE/1024;
	uint64_t n, chunk_blocks, wr[PEAK_POINTS], rd[PEAK_POINTS];
	int points = 0, i;
	if (bench_args(nb_params, params, &a, "chunk"))
		return;
	c = &nvme_ctrls[a.port];
	if (a.npos > 1) {
		printf("Error: nvme_bench peak [max_chunks] [chunk=KiB] [port=N]\n");
		return;
	}
	if (a.npos && (literec_parse_ulong(a.pos[0], &max) || max == 0 || max > (1UL << 20) || (max & (max - 1)))) {
		printf("Error: max_chunks '%s': a power of two from 1 to 1048576 (the sweep doubles from 1)\n", a.pos[0]);
		return;
	}
	if (bench_opt(&a, "chunk") && (literec_parse_ulong(bench_opt(&a, "chunk"), &kib) || kib < 4 || kib > 2048 ||
		(kib & (kib - 1)))) {
		printf("Error: chunk '%s' KiB: a power of two from 4 to 2048\n", bench_opt(&a, "chunk"));
		return;
	}
	chunk_blocks = ((uint64_t)kib*1024) >> c->lba_shift;
	/* Point n lies at n chunks (seed 000: 1 chunk @ 0x20000, 2 @ 0x40000, ...): up to 2 x max. */
	if (chunk_blocks == 0 || 2*(uint64_t)max*chunk_blocks > c->nsze) {
		printf("Error: the sweep to %lu chunks of %lu KiB needs %llu MiB of namespace; it has %llu MiB\n",
			max, kib, (unsigned long long)((2*(uint64_t)max*kib) >> 10),
			(unsigned long long)((c->nsze << c->lba_shift) >> 20));
		return;
	}
	if (bench_guard(a.port, chunk_blocks, (2*(uint64_t)max - 1)*chunk_blocks))
		return;
	printf("nvme%d: peak sweep, 1..%lu chunks of %lu KiB, write then read, QD %d\n", a.port, max, kib,
		c->io_qsize - 1);
	for (n = 1; n <= max; n *= 2) {
		memset(&g, 0, sizeof(g));
		g.port = a.port; g.qd = c->io_qsize - 1; g.blocks = chunk_blocks; g.count = n;
		g.lba = n*chunk_blocks;
		g.op = NVME_OP_WRITE;
		if (gen_run(&g))
			goto fail;
		wr[points] = g.cycles;
		g.op = NVME_OP_READ;
		if (gen_run(&g))
			goto fail;
		rd[points] = g.cycles;
		printf("RESULT name=bench_peak port=%d chunks=%llu chunk_kib=%lu lba=%llu bytes=%llu write_cycles=%llu "
			"write_mibps=", a.port, (unsigned long long)n, kib, (unsigned long long)g.lba,
			(unsigned long long)g.bytes, (unsigned long long)wr[points]);
		literec_print_fixed(mibps_x1000(g.bytes, wr[points]), 3);
		printf(" read_cycles=%llu read_mibps=", (unsigned long long)rd[points]);
		literec_print_fixed(mibps_x1000(g.bytes, rd[points]), 3);
		printf("\n");
		points++;
	}
	printf("\n  chunks        bytes   write MiB/s    read MiB/s\n");
	for (i = 0, n = 1; i < points; i++, n *= 2) {
		uint64_t bytes = n*kib*1024;
		printf("%8llu %12llu", (unsigned long long)n, (unsigned long long)bytes);
		print_fixed_w(mibps_x1000(bytes, wr[i]), 3, 14);
		print_fixed_w(mibps_x1000(bytes, rd[i]), 3, 14);
		printf("\n");
	}
	printf("RESULT name=bench_peak_done port=%d points=%d ok=1\n", a.port, points);
	return;
fail:
	printf("RESULT name=bench_peak_done port=%d points=%d ok=0\n", a.port, points);
}

/* nvme_bench sizes [qd] [mib=N|kib=N] [port=N] ---------------------------------------------------- */

static void bench_sizes(int nb_params, char **params)
{
	struct bench_args a;
	struct nvme_ctrl *c;
	struct gen_run g;
	unsigned long qd = 256, kib = 8192, mib;
	uint32_t size;
	int points = 0, op;
	if (bench_args(nb_params, params, &a, "mib,kib"))
		return;
	c = &nvme_ctrls[a.port];
	if (a.npos > 1) {
		printf("Error: nvme_bench sizes [qd] [mib=N|kib=N] [port=N]\n");
		return;
	}
	if (a.npos && bench_num("queue depth", a.pos[0], 1, 65535, &qd))
		return;
	if (bench_opt(&a, "mib")) {
		if (bench_num("mib", bench_opt(&a, "mib"), 1, 1048576, &mib))
			return;
		kib = mib*1024;
	}
	if (bench_opt(&a, "kib") && bench_num("kib", bench_opt(&a, "kib"), 128, 1073741824, &kib))
		return;
	if (((uint64_t)kib << 10) >> c->lba_shift > c->nsze) {
		printf("Error: %lu KiB do not fit in the namespace (%llu MiB)\n", kib,
			(unsigned long long)((c->nsze << c->lba_shift) >> 20));
		return;
	}
	if (qd > (unsigned long)c->io_qsize - 1) {
		printf("nvme%d: QD %lu is beyond the I/O queue (%d entries): QD %d\n", a.port, qd, c->io_qsize,
			c->io_qsize - 1);
		qd = c->io_qsize - 1;
	}
	if (bench_guard(a.port, 0, ((uint64_t)kib << 10) >> c->lba_shift))
		return;
	printf("nvme%d: transfer-size sweep 512 B..128 KiB, %lu KiB each, sequential from LBA 0, QD %lu\n",
		a.port, kib, qd);
	for (size = 512; size <= 131072; size *= 2) {
		if (size < c->lba_size) {
			printf("nvme%d: %lu B: below the LBA size (%lu B), skipped\n", a.port, (unsigned long)size,
				(unsigned long)c->lba_size);
			continue;
		}
		for (op = 0; op < 2; op++) {
			memset(&g, 0, sizeof(g));
			g.port = a.port; g.qd = qd; g.blocks = size >> c->lba_shift;
			g.count = ((uint64_t)kib << 10)/size;
			g.op = op ? NVME_OP_READ : NVME_OP_WRITE;
			if (gen_run(&g)) {
				printf("RESULT name=bench_sizes_done port=%d points=%d ok=0\n", a.port, points);
				return;
			}
			printf("RESULT name=bench_sizes port=%d op=%s bytes_per_cmd=%lu qd=%lu commands=%llu bytes=%llu "
				"cycles=%llu mbps=", a.port, op ? "read" : "write", (unsigned long)size, qd,
				(unsigned long long)g.cmds, (unsigned long long)g.bytes, (unsigned long long)g.cycles);
			literec_print_fixed(rec_kbps(g.bytes, g.cycles), 3);
			printf(" iops=%llu\n", (unsigned long long)per_second(g.requests, g.cycles));
			points++;
		}
	}
	printf("RESULT name=bench_sizes_done port=%d points=%d ok=1\n", a.port, points);
}

/* nvme_bench full [mib] [interval_ms] [port=N] ----------------------------------------------------- */

/* Data units written (SMART, 1000 x 512 B each), low 64 bits; 0 if the log cannot be read. */
static uint64_t smart_units_written(int port)
{
	volatile uint8_t *b;
	uint64_t v = 0;
	int i;
	if (nvme_get_log(port, 0x02, 0xffffffff, 512, &b))
		return 0;
	for (i = 7; i >= 0; i--)
		v = (v << 8) | b[48 + i];
	return v;
}

/* Runs a started job to its end, a RESULT line per interval; returns 0 when it ended well. */
static int full_phase(int port, struct rec_job *j, struct rec_result *r, uint64_t interval_us)
{
	uint64_t prev_bytes = 0, prev_cycles = 0, bytes;
	int done;
	for (;;) {
		done = rec_job_wait(j, r, interval_us, 0);
		bytes = j->replay ? r->bytes : r->bytes_committed;
		printf("RESULT name=bench_full port=%d phase=%s t_ms=", port, j->replay ? "read" : "write");
		print_ms(r->cycles);
		printf(" bytes=%llu mbps=", (unsigned long long)bytes);
		literec_print_fixed(r->cycles > prev_cycles ? rec_kbps(bytes - prev_bytes, r->cycles - prev_cycles) : 0, 3);
		printf(" temp_c=%d\n", rec_temperature(j->mask));
		prev_bytes = bytes;
		prev_cycles = r->cycles;
		if (done || !r->busy) {
			/* A replay: every word of the region compared, none beyond it, none differing. */
			if (j->replay && (r->errors || r->extra_beats || r->checked_beats*RECORDER_WORD_BYTES != j->bytes)) {
				printf("Error: nvme%d: read back %llu word errors, %llu of %llu words checked, %llu extra\n", port,
					(unsigned long long)r->errors, (unsigned long long)r->checked_beats,
					(unsigned long long)(j->bytes/RECORDER_WORD_BYTES), (unsigned long long)r->extra_beats);
				return -1;
			}
			return r->ok ? 0 : -1;
		}
	}
}

static void bench_full(int nb_params, char **params)
{
	struct bench_args a;
	struct nvme_ctrl *c;
	struct rec_job j;
	struct rec_result w, rd;
	unsigned long mib, interval_ms = 1000;
	uint64_t units0, units1, ns_mib;
	int t0, t1, bad;
	if (bench_args(nb_params, params, &a, ""))
		return;
	c = &nvme_ctrls[a.port];
	ns_mib = (c->nsze << c->lba_shift) >> 20;
	mib = ns_mib;
	if (a.npos > 2) {
		printf("Error: nvme_bench full [mib] [interval_ms] [port=N]\n");
		return;
	}
	if (a.npos > 0 && bench_num("mib", a.pos[0], 1, ns_mib, &mib))
		return;
	if (a.npos > 1 && bench_num("interval_ms", a.pos[1], 1, 3600000, &interval_ms))
		return;
	rec_job_init(&j);
	j.mask  = 1u << a.port;
	j.lba   = 0;
	j.bytes = (uint64_t)mib << 20;
	j.bytes -= j.bytes % j.chunk;
	j.seed  = 0x5eed;
	if (j.bytes == 0) {
		printf("Error: mib '%lu': at least one chunk (%lu KiB)\n", mib, j.chunk/1024);
		return;
	}
	j.no_catalog = 1;        /* a test of the drive: not a recording of the catalog */
	if (rec_job_check(&j) || bench_guard(a.port, 0, j.bytes >> c->lba_shift))
		return;
	units0 = smart_units_written(a.port);
	t0 = rec_temperature(j.mask);
	printf("nvme%d: full run, %llu MiB from LBA 0 with the test pattern, interval %lu ms\n", a.port,
		(unsigned long long)(j.bytes >> 20), interval_ms);
	bad = rec_job_start(&j) || full_phase(a.port, &j, &w, interval_ms*1000ULL);
	if (!bad) {
		j.replay = 1;
		bad = rec_job_check(&j) || rec_job_start(&j) || full_phase(a.port, &j, &rd, interval_ms*1000ULL);
	}
	t1 = rec_temperature(j.mask);
	units1 = smart_units_written(a.port);
	if (bad) {
		printf("RESULT name=bench_full_done port=%d mib=%llu ok=0\n", a.port, (unsigned long long)(j.bytes >> 20));
		return;
	}
	printf("RESULT name=bench_full_done port=%d mib=%llu write_mbps=", a.port, (unsigned long long)(j.bytes >> 20));
	literec_print_fixed(rec_kbps(w.bytes_committed, w.cycles), 3);
	printf(" read_mbps=");
	literec_print_fixed(rec_kbps(rd.bytes, rd.cycles), 3);
	printf(" errors=%llu temp_before_c=%d temp_after_c=%d data_units_written_before=%llu "
		"data_units_written_after=%llu ok=1\n", (unsigned long long)rd.errors, t0, t1,
		(unsigned long long)units0, (unsigned long long)units1);
}

/* nvme_bench iops [mib] [seconds] [op=%] [interval=ms] [port=N] ------------------------------------ */

struct iops_ctx {
	uint64_t last_t;
	uint32_t last_cmds;
	uint64_t intervals, sum, min, max;
};

static void iops_tick(struct gen_run *g, uint64_t t, uint32_t commands)
{
	struct iops_ctx *x = g->ctx;
	uint32_t n = commands - x->last_cmds;
	uint64_t iops = (uint64_t)n*CONFIG_CLOCK_FREQUENCY/(t - x->last_t);
	printf("RESULT name=bench_iops port=%d t_ms=", g->port);
	print_ms(t);
	printf(" commands=%lu iops=%llu\n", (unsigned long)n, (unsigned long long)iops);
	x->last_t = t;
	x->last_cmds = commands;
	x->intervals++;
	x->sum += iops;
	if (x->intervals == 1 || iops < x->min)
		x->min = iops;
	if (iops > x->max)
		x->max = iops;
}

static void bench_iops(int nb_params, char **params)
{
	struct bench_args a;
	struct nvme_ctrl *c;
	struct gen_run g;
	struct iops_ctx x;
	unsigned long mib = 1024, op = 25, interval_ms = 1000;
	uint64_t seconds_us = 30000000ULL, region, blocks4k, span;
	if (bench_args(nb_params, params, &a, "op,interval"))
		return;
	c = &nvme_ctrls[a.port];
	if (a.npos > 2) {
		printf("Error: nvme_bench iops [mib] [seconds] [op=%%] [interval=ms] [port=N]\n");
		return;
	}
	if (a.npos > 0 && bench_num("mib", a.pos[0], 1, 1048576, &mib))
		return;
	if (a.npos > 1 && (parse_seconds_us(a.pos[1], &seconds_us) || seconds_us == 0)) {
		printf("Error: seconds '%s': a positive number of seconds (up to 6 decimals)\n", a.pos[1]);
		return;
	}
	if (bench_opt(&a, "op") && bench_num("op (%)", bench_opt(&a, "op"), 0, 90, &op))
		return;
	if (bench_opt(&a, "interval") && bench_num("interval (ms)", bench_opt(&a, "interval"), 1, 3600000, &interval_ms))
		return;
	if (c->lba_size > 4096) {
		printf("Error: nvme%d: LBA size %lu B: the 4 KiB random writes need LBAs of at most 4 KiB\n", a.port,
			(unsigned long)c->lba_size);
		return;
	}
	region = ((uint64_t)mib << 20) >> c->lba_shift;
	if (region > c->nsze) {
		printf("Error: %lu MiB do not fit in the namespace (%llu MiB)\n", mib,
			(unsigned long long)((c->nsze << c->lba_shift) >> 20));
		return;
	}
	blocks4k = 4096 >> c->lba_shift;
	/* Over-provisioning: the random writes hit the first (100 - op)% of the filled region. */
	span = region*(100 - op)/100;
	span -= span % blocks4k;
	if (span == 0) {
		printf("Error: the span of the random writes is empty (mib %lu, op %lu%%)\n", mib, op);
		return;
	}
	if (bench_guard(a.port, 0, region))
		return;
	/* Fill: sequential 128 KiB writes over the region (its tail in 4 KiB writes). */
	memset(&g, 0, sizeof(g));
	g.port = a.port; g.qd = c->io_qsize - 1; g.op = NVME_OP_WRITE;
	g.blocks = 131072 >> c->lba_shift;
	g.count = region/g.blocks;
	printf("nvme%d: IOPS consistency: fill %lu MiB, then 4 KiB random writes at QD 32 over %llu MiB (op %lu%%) "
		"for ", a.port, mib, (unsigned long long)((span << c->lba_shift) >> 20), op);
	literec_print_fixed(seconds_us/1000, 3);
	printf(" s, interval %lu ms\n", interval_ms);
	if (g.count && gen_run(&g))
		goto fail;
	printf("RESULT name=bench_iops_fill port=%d mib=%lu cycles=%llu mbps=", a.port, mib, (unsigned long long)g.cycles);
	literec_print_fixed(rec_kbps(g.bytes, g.cycles), 3);
	printf("\n");
	/* Random 4 KiB writes at QD 32 until the duration passed. */
	memset(&x, 0, sizeof(x));
	memset(&g, 0, sizeof(g));
	g.port = a.port; g.qd = 32 > c->io_qsize - 1 ? c->io_qsize - 1 : 32; g.op = NVME_OP_WRITE; g.random = 1;
	g.blocks = blocks4k; g.span = span; g.count = GEN_UNTIL_STOPPED;
	g.interval = literec_us_to_cycles(interval_ms*1000ULL);
	g.duration = literec_us_to_cycles(seconds_us);
	g.tick = iops_tick; g.ctx = &x;
	if (gen_run(&g))
		goto fail;
	printf("RESULT name=bench_iops_done port=%d span_mib=%llu intervals=%llu mean_iops=%llu min_iops=%llu "
		"max_iops=%llu commands=%llu ok=1\n", a.port, (unsigned long long)((span << c->lba_shift) >> 20),
		(unsigned long long)x.intervals, (unsigned long long)(x.intervals ? x.sum/x.intervals : 0),
		(unsigned long long)x.min, (unsigned long long)x.max, (unsigned long long)g.cmds);
	return;
fail:
	printf("RESULT name=bench_iops_done port=%d ok=0\n", a.port);
}

/* Dispatch ---------------------------------------------------------------------------------------- */

#define NVME_BENCH_USAGE \
	"nvme_bench <seq|rand> <read|write> <kib> <qd> <mib> [port]\n" \
	"nvme_bench peak [max_chunks] [chunk=KiB] [port=N]\n" \
	"nvme_bench sizes [qd] [mib=N|kib=N] [port=N]\n" \
	"nvme_bench full [mib] [interval_ms] [port=N]\n" \
	"nvme_bench iops [mib] [seconds] [op=%] [interval=ms] [port=N]\n" \
	"(the writes refuse to overwrite the catalog or a recording: force=1 overrides)\n"

static void nvme_bench_handler(int nb_params, char **params)
{
	bench_force = catalog_force_arg(&nb_params, params);
	if (nb_params < 1) {
		printf("%s", NVME_BENCH_USAGE);
		return;
	}
	if (!strcmp(params[0], "seq") || !strcmp(params[0], "rand"))
		bench_single(nb_params, params);
	else if (!strcmp(params[0], "peak"))
		bench_peak(nb_params - 1, params + 1);
	else if (!strcmp(params[0], "sizes"))
		bench_sizes(nb_params - 1, params + 1);
	else if (!strcmp(params[0], "full"))
		bench_full(nb_params - 1, params + 1);
	else if (!strcmp(params[0], "iops"))
		bench_iops(nb_params - 1, params + 1);
	else
		printf("Error: benchmark '%s': allowed seq, rand, peak, sizes, full, iops\n%s", params[0], NVME_BENCH_USAGE);
}
define_literec_command(nvme_bench, nvme_bench_handler, "Benchmarks: nvme_bench <seq|rand|peak|sizes|full|iops> ... [force=1]");

#endif
