// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Record / replay BIOS commands: the recorder datapath (cores/recorder/core.py) moves a data stream
// through the LiteDRAM ring to the SSDs (chunks striped over the selected ports) and back. The CPU
// configures, starts and waits; it does no work per chunk.
//
//   rec_record <lba> <mib> [seed=N] [rate=MBps] [strict=0|1] [ports=all|N] [chunk=KiB] [qd=N] [stop=MiB]
//   rec_replay <lba> <mib> [seed=N] [ports=all|N] [chunk=KiB] [qd=N]
//   rec_status

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
#include "nvme.h"

#if defined(CSR_RECORDER_BASE) && defined(CSR_NVME0_BASE)

#define NPORTS LITEREC_SSD_PORTS
/* Chunk commands in flight per SSD unless qd= says otherwise (32 x 128 KiB: 4 MiB per drive). */
#define REC_DEFAULT_QD_PER_PORT 32

struct rec_args {
	uint64_t lba;
	unsigned long mib;
	unsigned long long seed;
	unsigned long rate_mbps;     /* 0: as fast as the recorder takes it */
	unsigned long strict;
	unsigned long stop_mib;      /* 0: no early stop */
	uint32_t mask;               /* ports */
	int nports;
	unsigned long chunk;         /* bytes */
	uint32_t chunk_blocks, lba_size;
	uint64_t chunks;
	unsigned long qd;            /* chunk commands in flight (all ports) */
};

static const char *rec_usage_record =
	"rec_record <lba> <mib> [seed=N] [rate=MBps] [strict=0|1] [ports=all|N] [chunk=KiB] [qd=N] [stop=MiB]";
static const char *rec_usage_replay =
	"rec_replay <lba> <mib> [seed=N] [ports=all|N] [chunk=KiB] [qd=N]";

static int parse_rec_args(int nb_params, char **params, int record, struct rec_args *a)
{
	const char *usage = record ? rec_usage_record : rec_usage_replay;
	unsigned long long v;
	unsigned long kib;
	int i, p, n;
	memset(a, 0, sizeof(*a));
	a->seed  = 1;
	a->mask  = 1;
	a->chunk = LITEREC_CHUNK_SIZE;
	a->qd    = 0;
	if (nb_params < 2) {
		printf("%s\n", usage);
		return -1;
	}
	if (literec_parse_u64(params[0], &v)) {
		printf("Error: invalid LBA '%s': a number\n", params[0]);
		return -1;
	}
	a->lba = v;
	if (literec_parse_ulong(params[1], &a->mib) || a->mib == 0 || a->mib > 1048576) {
		printf("Error: invalid size '%s' MiB: 1..1048576\n", params[1]);
		return -1;
	}
	for (i = 2; i < nb_params; i++) {
		char *eq = strchr(params[i], '=');
		const char *val = eq ? eq + 1 : "";
		int klen = eq ? (int)(eq - params[i]) : (int)strlen(params[i]);
#define KEY(k) (klen == (int)strlen(k) && !strncmp(params[i], k, klen))
		if (!eq) {
			printf("Error: '%s': options are key=value\n%s\n", params[i], usage);
			return -1;
		} else if (KEY("seed")) {
			if (literec_parse_u64(val, &a->seed) || a->seed > 0xffffffffULL) {
				printf("Error: invalid seed '%s': a 32-bit number\n", val);
				return -1;
			}
		} else if (KEY("ports")) {
			if (!strcmp(val, "all"))
				a->mask = (1u << NPORTS) - 1;
			else if (literec_parse_u64(val, &v) || v >= NPORTS) {
				printf("Error: invalid ports '%s': 'all' or a port 0..%d\n", val, NPORTS - 1);
				return -1;
			} else
				a->mask = 1u << v;
		} else if (KEY("chunk")) {
			if (literec_parse_ulong(val, &kib) || kib < 4 || (kib & (kib - 1)) || kib > 16384) {
				printf("Error: invalid chunk '%s' KiB: a power of two 4..16384\n", val);
				return -1;
			}
			a->chunk = kib*1024;
		} else if (KEY("qd")) {
			if (literec_parse_ulong(val, &a->qd) || a->qd == 0 || a->qd > RECORDER_SLOTS) {
				printf("Error: invalid qd '%s': chunk commands in flight, 1..%d\n", val, RECORDER_SLOTS);
				return -1;
			}
		} else if (record && KEY("rate")) {
			if (literec_parse_ulong(val, &a->rate_mbps)) {
				printf("Error: invalid rate '%s' MB/s: a number (0: as fast as possible)\n", val);
				return -1;
			}
		} else if (record && KEY("strict")) {
			if (literec_parse_ulong(val, &a->strict) || a->strict > 1) {
				printf("Error: invalid strict '%s': 0 (the source waits) or 1 (beats not taken are lost)\n", val);
				return -1;
			}
		} else if (record && KEY("stop")) {
			if (literec_parse_ulong(val, &a->stop_mib) || a->stop_mib == 0 || a->stop_mib >= a->mib) {
				printf("Error: invalid stop '%s' MiB: 1..%lu (less than the recording)\n", val, a->mib - 1);
				return -1;
			}
		} else {
			printf("Error: unknown option '%.*s'\n%s\n", klen, params[i], usage);
			return -1;
		}
#undef KEY
	}
	/* Ports: initialized, healthy, one LBA size, chunk <= MDTS. */
	for (p = 0, n = 0; p < NPORTS; p++) {
		struct nvme_ctrl *c = &nvme_ctrls[p];
		struct nvme_engine_status st;
		if (!(a->mask & (1u << p)))
			continue;
		if (!c->initialized) {
			printf("Error: nvme%d: %s\n", p, nvme_strerror(NVME_ERR_NO_INIT));
			return -1;
		}
		nvme_engine_status(p, &st);
		if (st.error) {
			printf("Error: nvme%d: the queue engine stopped on an earlier error (nothing was sent)\n", p);
			nvme_report_engine(p);
			return -1;
		}
		if (n == 0)
			a->lba_size = c->lba_size;
		else if (c->lba_size != a->lba_size) {
			printf("Error: nvme%d has %lu-byte LBAs, the other ports %lu: striping needs one LBA size\n",
				p, (unsigned long)c->lba_size, (unsigned long)a->lba_size);
			return -1;
		}
		if (a->chunk > c->max_xfer) {
			printf("Error: chunk of %lu KiB exceeds nvme%d's maximum transfer (MDTS) of %lu KiB\n",
				a->chunk >> 10, p, (unsigned long)(c->max_xfer >> 10));
			return -1;
		}
		n++;
	}
	a->nports = n;
	if (a->chunk < a->lba_size) {
		printf("Error: chunk of %lu bytes is smaller than an LBA (%lu bytes)\n", a->chunk, (unsigned long)a->lba_size);
		return -1;
	}
	if (((uint64_t)a->mib << 20) % a->chunk) {
		printf("Error: %lu MiB is not a whole number of %lu KiB chunks\n", a->mib, a->chunk >> 10);
		return -1;
	}
	a->chunks       = ((uint64_t)a->mib << 20)/a->chunk;
	a->chunk_blocks = a->chunk/a->lba_size;
	/* LBA range on every port: port j (j-th selected) gets chunks j, j+n, ... */
	for (p = 0, i = 0; p < NPORTS; p++) {
		uint64_t count, end;
		if (!(a->mask & (1u << p)))
			continue;
		count = (a->chunks - i + a->nports - 1)/a->nports;
		end   = a->lba + count*a->chunk_blocks;
		if (a->lba >= nvme_ctrls[p].nsze || end > nvme_ctrls[p].nsze) {
			printf("Error: LBA %llu..%llu is outside nvme%d's namespace (LBA 0..%llu); nothing was sent\n",
				(unsigned long long)a->lba, (unsigned long long)(end - 1), p,
				(unsigned long long)(nvme_ctrls[p].nsze - 1));
			return -1;
		}
		i++;
	}
	return 0;
}

static void print_ports(uint32_t mask)
{
	int p, first = 1;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			printf("%snvme%d", first ? "" : "+", p);
			first = 0;
		}
}

/* Configure the ring and the engines, start, wait; returns 0 or -1 (error printed). */
static int rec_run(struct rec_args *a, int replay, uint32_t gen_ctrl)
{
	unsigned long slots, word = RECORDER_WORD_BYTES;
	uint64_t t0, limit;
	uint32_t st;
	int p, stopped = 0;

	slots = PCIE_DRAM_WINDOW_SIZE/a->chunk;
	if (slots > RECORDER_SLOTS)
		slots = RECORDER_SLOTS;
	for (p = 0; p < NPORTS; p++)
		if (a->mask & (1u << p)) {
			nvme_engine_set_qd(p, nvme_ctrls[p].io_qsize - 1);
			nvme_engine_source(p, NVME_SRC_EXT);
		}
	recorder_ring_word_write((PCIE_DRAM_WINDOW_BASE - MAIN_RAM_BASE)/word);
	recorder_ring_bus_write(PCIE_DRAM_WINDOW_BASE);
	recorder_ring_slots_write(slots);
	recorder_chunk_words_write(a->chunk/word);
	recorder_chunk_bytes_write(a->chunk);
	recorder_chunk_blocks_write(a->chunk_blocks);
	recorder_lba_base_lo_write((uint32_t)a->lba);
	recorder_lba_base_hi_write((uint32_t)(a->lba >> 32));
	recorder_total_chunks_write(a->chunks);
	recorder_port_mask_write(a->mask);
	recorder_max_inflight_write(a->qd ? a->qd : REC_DEFAULT_QD_PER_PORT*a->nports);
	recorder_ctrl_write((1 << CSR_RECORDER_CTRL_START_OFFSET) | (replay << CSR_RECORDER_CTRL_MODE_OFFSET));
	if (gen_ctrl)
		recstream_ctrl_write(gen_ctrl);      /* the source starts once the recorder runs */

	/* Modeled-time bound: the whole transfer at 10 MB/s plus 10 s. */
	t0 = literec_cycles();
	limit = literec_us_to_cycles(((uint64_t)a->mib << 20)/10 + 10000000ULL);
	for (;;) {
		st = recorder_status_read();
		if (st & (1 << CSR_RECORDER_STATUS_DONE_OFFSET))
			break;
		/* The source has ended (early stop, or beats lost in strict mode): close the recording,
		 * its last chunk is padded with zeros. */
		if (!replay && !stopped && !recstream_gen_busy_read()) {
			recorder_ctrl_write((1 << CSR_RECORDER_CTRL_STOP_OFFSET));
			stopped = 1;
		}
		if (literec_cycles() - t0 > limit) {
			printf("Error: the recorder did not finish within %llu ms of modeled time (%lu of %llu chunks done)\n",
				(unsigned long long)((limit/(CONFIG_CLOCK_FREQUENCY/1000))), (unsigned long)recorder_chunks_done_read(),
				(unsigned long long)a->chunks);
			break;
		}
	}
	if (!replay)
		recstream_ctrl_write((1 << CSR_RECSTREAM_CTRL_GEN_STOP_OFFSET));
	for (p = 0; p < NPORTS; p++)
		if (a->mask & (1u << p))
			nvme_engine_source(p, NVME_SRC_CPU);
	st = recorder_status_read();
	if (st & (1 << CSR_RECORDER_STATUS_ERROR_OFFSET)) {
		int ep = recorder_err_port_read();
		uint64_t lba = ((uint64_t)recorder_err_lba_hi_read() << 32) | recorder_err_lba_lo_read();
		printf("Error: nvme%d: %s of the chunk at LBA %llu failed: %s\n", ep, replay ? "read" : "write",
			(unsigned long long)lba, nvme_status_str(recorder_err_status_read()));
		printf("  %lu of %llu chunks completed before the error\n", (unsigned long)recorder_chunks_done_read(),
			(unsigned long long)a->chunks);
		nvme_report_engine(ep);
		return -1;
	}
	if (!(st & (1 << CSR_RECORDER_STATUS_DONE_OFFSET)))
		return -1;
	return 0;
}

static void print_rate(const char *what, uint64_t bytes, uint64_t cycles)
{
	uint64_t kbps = cycles ? bytes*(CONFIG_CLOCK_FREQUENCY/1000)/cycles : 0;   /* MB/s x 1000 */
	printf("%s", what);
	literec_print_fixed(kbps, 3);
}

static void rec_record_handler(int nb_params, char **params)
{
	struct rec_args a;
	unsigned long word = RECORDER_WORD_BYTES, stop_beats = 0;
	uint64_t bytes, cycles, rate, beats_in, lost;
	uint32_t in_rate;
	int r;
	if (parse_rec_args(nb_params, params, 1, &a))
		return;
	/* Source rate: beats per cycle x 65536 (0: every cycle). */
	rate = (uint64_t)a.rate_mbps*1000000ULL*65536/((uint64_t)word*CONFIG_CLOCK_FREQUENCY);
	if (a.rate_mbps && (rate == 0 || rate >= 65536)) {
		printf("Error: rate %lu MB/s: 1..%llu MB/s (a %lu-byte word per cycle at most), or 0 for unlimited\n",
			a.rate_mbps, (unsigned long long)((uint64_t)word*CONFIG_CLOCK_FREQUENCY/1000000 - 1), word);
		return;
	}
	in_rate = (uint32_t)rate;
	if (a.stop_mib)
		stop_beats = ((uint64_t)a.stop_mib << 20)/word;
	recstream_gen_seed_write((uint32_t)a.seed);
	/* Early stop: the source produces `stop` MiB, then the recorder is stopped (last chunk padded). */
	recstream_gen_beats_write(stop_beats ? stop_beats : ((uint64_t)a.mib << 20)/word);
	recstream_gen_rate_write(in_rate);
	recstream_ctrl_write(a.strict << CSR_RECSTREAM_CTRL_STRICT_OFFSET);
	r = rec_run(&a, 0,
		(a.strict << CSR_RECSTREAM_CTRL_STRICT_OFFSET) | (1 << CSR_RECSTREAM_CTRL_GEN_START_OFFSET));
	beats_in = recorder_beats_in_read();
	lost     = recstream_gen_lost_read();
	cycles   = recorder_cycles_read();
	bytes    = (uint64_t)recorder_chunks_done_read()*a.chunk;
	if (r) {
		printf("RESULT name=rec_record ok=0 chunks=%lu bytes_in=%llu lost_beats=%llu\n",
			(unsigned long)recorder_chunks_done_read(), (unsigned long long)(beats_in*word), (unsigned long long)lost);
		return;
	}
	printf("rec_record: %llu bytes (%lu chunks of %lu KiB) to ", (unsigned long long)bytes,
		(unsigned long)recorder_chunks_done_read(), a.chunk >> 10);
	print_ports(a.mask);
	printf(" from LBA %llu in %llu us:", (unsigned long long)a.lba,
		(unsigned long long)(cycles*1000000/CONFIG_CLOCK_FREQUENCY));
	print_rate(" ", bytes, cycles);
	printf(" MB/s; input %llu bytes, %llu beats lost, %lu stall cycles, ring peak %lu chunks\n",
		(unsigned long long)(beats_in*word), (unsigned long long)lost, (unsigned long)recorder_stalls_read(),
		(unsigned long)recorder_max_level_read());
	printf("RESULT name=rec_record ok=1 lba=%llu bytes=%llu chunks=%lu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)a.lba, (unsigned long long)bytes, (unsigned long)recorder_chunks_done_read(), a.chunk,
		a.nports, (unsigned long long)cycles);
	print_rate("", bytes, cycles);
	printf(" bytes_in=%llu lost_beats=%llu stalls=%lu ring_peak=%lu\n", (unsigned long long)(beats_in*word),
		(unsigned long long)lost, (unsigned long)recorder_stalls_read(), (unsigned long)recorder_max_level_read());
}
define_command(rec_record, rec_record_handler,
	"Record the test stream to the SSDs: rec_record <lba> <mib> [seed=] [rate=MBps] [strict=] [ports=] [chunk=KiB] [qd=] [stop=MiB]",
	LITEREC_CMDS);

static void rec_replay_handler(int nb_params, char **params)
{
	struct rec_args a;
	unsigned long word = RECORDER_WORD_BYTES;
	uint64_t bytes, cycles, errors, extra, checked, expect;
	int r;
	if (parse_rec_args(nb_params, params, 0, &a))
		return;
	expect = ((uint64_t)a.mib << 20)/word;
	recstream_check_seed_write((uint32_t)a.seed);
	recstream_check_beats_write(expect);
	recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_CHECK_START_OFFSET);
	r = rec_run(&a, 1, 0);
	cycles  = recorder_cycles_read();
	bytes   = (uint64_t)recorder_beats_out_read()*word;
	errors  = recstream_check_errors_read();
	extra   = recstream_check_extra_read();
	checked = recstream_check_checked_read();
	if (r) {
		printf("RESULT name=rec_replay ok=0 chunks=%lu bytes=%llu errors=%llu\n",
			(unsigned long)recorder_chunks_done_read(), (unsigned long long)bytes, (unsigned long long)errors);
		return;
	}
	printf("rec_replay: %llu bytes (%lu chunks of %lu KiB) from ", (unsigned long long)bytes,
		(unsigned long)recorder_chunks_done_read(), a.chunk >> 10);
	print_ports(a.mask);
	printf(" at LBA %llu in %llu us:", (unsigned long long)a.lba,
		(unsigned long long)(cycles*1000000/CONFIG_CLOCK_FREQUENCY));
	print_rate(" ", bytes, cycles);
	printf(" MB/s; pattern check (seed %llu): %llu word errors", a.seed, (unsigned long long)errors);
	if (errors)
		printf(", first at byte %llu", (unsigned long long)recstream_check_first_read()*word);
	if (checked != expect)
		printf(", length error: %llu of %llu words", (unsigned long long)checked, (unsigned long long)expect);
	printf("\n");
	printf("RESULT name=rec_replay ok=1 lba=%llu bytes=%llu chunks=%lu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)a.lba, (unsigned long long)bytes, (unsigned long)recorder_chunks_done_read(), a.chunk,
		a.nports, (unsigned long long)cycles);
	print_rate("", bytes, cycles);
	printf(" errors=%llu first_error=%llu checked_beats=%llu extra_beats=%llu\n", (unsigned long long)errors,
		(unsigned long long)(errors ? (uint64_t)recstream_check_first_read()*word : 0),
		(unsigned long long)checked, (unsigned long long)extra);
}
define_command(rec_replay, rec_replay_handler,
	"Replay from the SSDs into the pattern checker: rec_replay <lba> <mib> [seed=] [ports=] [chunk=KiB] [qd=]",
	LITEREC_CMDS);

static void rec_status_handler(int nb_params, char **params)
{
	uint32_t st = recorder_status_read();
	printf("recorder: %s%s%s, %lu chunks requested, %lu completed, ring peak %lu of %lu slots\n",
		(st & (1 << CSR_RECORDER_STATUS_BUSY_OFFSET)) ? "busy" : "idle",
		(st & (1 << CSR_RECORDER_STATUS_DONE_OFFSET)) ? ", done" : "",
		(st & (1 << CSR_RECORDER_STATUS_ERROR_OFFSET)) ? ", error" : "",
		(unsigned long)recorder_chunks_req_read(), (unsigned long)recorder_chunks_done_read(),
		(unsigned long)recorder_max_level_read(), (unsigned long)recorder_ring_slots_read());
	printf("RESULT name=rec_status busy=%lu done=%lu error=%lu err_status=0x%04lx chunks_req=%lu chunks_done=%lu "
		"beats_in=%lu beats_out=%lu lost_beats=%lu check_errors=%lu\n",
		(unsigned long)((st >> CSR_RECORDER_STATUS_BUSY_OFFSET) & 1),
		(unsigned long)((st >> CSR_RECORDER_STATUS_DONE_OFFSET) & 1),
		(unsigned long)((st >> CSR_RECORDER_STATUS_ERROR_OFFSET) & 1),
		(unsigned long)recorder_err_status_read(),
		(unsigned long)recorder_chunks_req_read(), (unsigned long)recorder_chunks_done_read(),
		(unsigned long)recorder_beats_in_read(), (unsigned long)recorder_beats_out_read(),
		(unsigned long)recstream_gen_lost_read(), (unsigned long)recstream_check_errors_read());
}
define_command(rec_status, rec_status_handler, "Recorder datapath status", LITEREC_CMDS);

#endif
