// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Record / replay BIOS commands: the recorder datapath (cores/recorder/core.py) moves a data stream
// through the LiteDRAM ring to the SSDs (chunks striped over the selected ports) and back. The CPU
// configures, starts and waits; it does no work per chunk.
//
//   rec_record <lba|auto> <mib> [seed=N] [rate=MBps] [strict=0|1] [ports=all|N] [chunk=KiB] [qd=N] [stop=MiB] [abort=MiB]
//   rec_replay <lba> <mib> | id=<n> [seed=N] [ports=all|N] [chunk=KiB] [qd=N]
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
#include "record.h"
#include "catalog.h"

#if defined(CSR_RECORDER_BASE) && defined(CSR_NVME0_BASE)

#define NPORTS LITEREC_SSD_PORTS
#define WORD   RECORDER_WORD_BYTES
/* Chunk commands in flight per SSD unless qd= says otherwise (32 x 128 KiB: 4 MiB per drive). */
#define REC_DEFAULT_QD_PER_PORT 32

static void rec_catalog_checkpoint(struct rec_job *j);

/* Jobs ------------------------------------------------------------------------------------------ */

void rec_job_init(struct rec_job *j)
{
	memset(j, 0, sizeof(*j));
	j->seed  = 1;
	j->mask  = 1;
	j->chunk = LITEREC_CHUNK_SIZE;
}

uint64_t rec_kbps(uint64_t bytes, uint64_t cycles)
{
	return cycles ? bytes*(CONFIG_CLOCK_FREQUENCY/1000)/cycles : 0;
}

void rec_print_ports(uint32_t mask)
{
	int p, first = 1;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			printf("%snvme%d", first ? "" : "+", p);
			first = 0;
		}
}

/* Source rate: beats per cycle x 65536 (0: every cycle). */
static uint64_t source_rate(struct rec_job *j)
{
	return (uint64_t)j->rate_mbps*1000000ULL*65536/((uint64_t)WORD*CONFIG_CLOCK_FREQUENCY);
}

int rec_job_check(struct rec_job *j)
{
	int p, i, n;
	uint64_t rate = source_rate(j);
	if (j->rate_mbps && (rate == 0 || rate >= 65536)) {
		printf("Error: rate %lu MB/s: 1..%llu MB/s (a %d-byte word per cycle at most), or 0 for unlimited\n",
			j->rate_mbps, (unsigned long long)((uint64_t)WORD*CONFIG_CLOCK_FREQUENCY/1000000 - 1), WORD);
		return -1;
	}
	if (j->mask == 0 || j->mask >= (1u << NPORTS)) {
		printf("Error: no valid port selected (ports 0..%d)\n", NPORTS - 1);
		return -1;
	}
	if (j->chunk < 4096 || (j->chunk & (j->chunk - 1)) || j->chunk > (16u << 20)) {
		printf("Error: chunk of %lu bytes: a power of two from 4 KiB to 16 MiB\n", j->chunk);
		return -1;
	}
	/* Ports: initialized, healthy, one LBA size, chunk <= MDTS. */
	for (p = 0, n = 0; p < NPORTS; p++) {
		struct nvme_ctrl *c = &nvme_ctrls[p];
		struct nvme_engine_status st;
		if (!(j->mask & (1u << p)))
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
			j->lba_size = c->lba_size;
		else if (c->lba_size != j->lba_size) {
			printf("Error: nvme%d has %lu-byte LBAs, the other ports %lu: striping needs one LBA size\n",
				p, (unsigned long)c->lba_size, (unsigned long)j->lba_size);
			return -1;
		}
		if (j->chunk > c->max_xfer) {
			printf("Error: chunk of %lu KiB exceeds nvme%d's maximum transfer (MDTS) of %lu KiB\n",
				j->chunk >> 10, p, (unsigned long)(c->max_xfer >> 10));
			return -1;
		}
		n++;
	}
	j->nports = n;
	if (j->chunk < j->lba_size) {
		printf("Error: chunk of %lu bytes is smaller than an LBA (%lu bytes)\n", j->chunk, (unsigned long)j->lba_size);
		return -1;
	}
	if (j->bytes == 0 || j->bytes % j->chunk) {
		printf("Error: %llu bytes is not a whole, non-zero number of %lu KiB chunks\n",
			(unsigned long long)j->bytes, j->chunk >> 10);
		return -1;
	}
	j->chunks       = j->bytes/j->chunk;
	j->chunk_blocks = j->chunk/j->lba_size;
	/* LBA range on every port: port i (i-th selected) gets chunks i, i+n, ... */
	for (p = 0, i = 0; p < NPORTS; p++) {
		uint64_t count, end;
		if (!(j->mask & (1u << p)))
			continue;
		count = (j->chunks - i + j->nports - 1)/j->nports;
		end   = j->lba + count*j->chunk_blocks;
		if (j->lba >= nvme_ctrls[p].nsze || end > nvme_ctrls[p].nsze) {
			printf("Error: LBA %llu..%llu is outside nvme%d's namespace (LBA 0..%llu); nothing was sent\n",
				(unsigned long long)j->lba, (unsigned long long)(end - 1), p,
				(unsigned long long)(nvme_ctrls[p].nsze - 1));
			return -1;
		}
		i++;
	}
	return 0;
}

/* Configure the ring and the engines, start, wait; fills r, returns 0 or -1 (error printed). */
static int rec_run(struct rec_job *j, int replay, uint32_t gen_ctrl, struct rec_result *r)
{
	unsigned long slots;
	uint64_t t0, limit;
	uint32_t st;
	int p, closed = 0;

	memset(r, 0, sizeof(*r));
	slots = PCIE_DRAM_WINDOW_SIZE/j->chunk;
	if (slots > RECORDER_SLOTS)
		slots = RECORDER_SLOTS;
	for (p = 0; p < NPORTS; p++)
		if (j->mask & (1u << p)) {
			nvme_engine_set_qd(p, nvme_ctrls[p].io_qsize - 1);
			nvme_engine_source(p, NVME_SRC_EXT);
		}
	recorder_ring_word_write((PCIE_DRAM_WINDOW_BASE - MAIN_RAM_BASE)/WORD);
	recorder_ring_bus_write(PCIE_DRAM_WINDOW_BASE);
	recorder_ring_slots_write(slots);
	recorder_chunk_words_write(j->chunk/WORD);
	recorder_chunk_bytes_write(j->chunk);
	recorder_chunk_blocks_write(j->chunk_blocks);
	recorder_lba_base_lo_write((uint32_t)j->lba);
	recorder_lba_base_hi_write((uint32_t)(j->lba >> 32));
	recorder_total_chunks_write(j->chunks);
	recorder_port_mask_write(j->mask);
	recorder_max_inflight_write(j->qd ? j->qd : REC_DEFAULT_QD_PER_PORT*j->nports);
	recorder_ctrl_write((1 << CSR_RECORDER_CTRL_START_OFFSET) | (replay << CSR_RECORDER_CTRL_MODE_OFFSET) |
		((!replay && j->packet_bytes) ? (1 << CSR_RECORDER_CTRL_CHECK_LAST_OFFSET) : 0));
	if (gen_ctrl)
		recstream_ctrl_write(gen_ctrl);      /* the source starts once the recorder runs */

	/* Modeled-time bound: the whole transfer at 10 MB/s plus 10 s. */
	t0 = literec_cycles();
	limit = literec_us_to_cycles(j->bytes/10 + 10000000ULL);
	for (;;) {
		st = recorder_status_read();
		if (st & (1 << CSR_RECORDER_STATUS_DONE_OFFSET))
			break;
		if (!replay && !closed && !recstream_gen_busy_read()) {
			/* The source has ended (early end, beats lost in strict mode, or a shorter source):
			 * close the recording. Stop pads its partly filled chunk with zeros, abort drops it. */
			recorder_ctrl_write(j->abort_bytes ? (1 << CSR_RECORDER_CTRL_ABORT_OFFSET) :
				(1 << CSR_RECORDER_CTRL_STOP_OFFSET));
			closed = 1;
		}
		if (!replay)
			rec_catalog_checkpoint(j);
		if (literec_cycles() - t0 > limit) {
			printf("Error: the recorder did not finish within %llu ms of modeled time (%lu of %llu chunks done)\n",
				(unsigned long long)((limit/(CONFIG_CLOCK_FREQUENCY/1000))), (unsigned long)recorder_chunks_done_read(),
				(unsigned long long)j->chunks);
			break;
		}
	}
	if (!replay)
		recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_GEN_STOP_OFFSET);
	for (p = 0; p < NPORTS; p++)
		if (j->mask & (1u << p))
			nvme_engine_source(p, NVME_SRC_CPU);

	st = recorder_status_read();
	r->chunks        = recorder_chunks_done_read();
	r->bytes         = r->chunks*j->chunk;
	r->cycles        = recorder_cycles_read();
	r->bytes_in      = (uint64_t)recorder_beats_in_read()*WORD;
	r->lost_beats    = recstream_gen_lost_read();
	r->stalls        = recorder_stalls_read();
	r->early_last    = recorder_early_last_read();
	r->ring_peak     = recorder_max_level_read();
	r->aborted       = (st >> CSR_RECORDER_STATUS_ABORTED_OFFSET) & 1;
	r->dropped       = (uint64_t)recorder_dropped_read()*WORD;
	r->errors        = recstream_check_errors_read();
	r->first_error   = (uint64_t)recstream_check_first_read()*WORD;
	r->checked_beats = recstream_check_checked_read();
	r->extra_beats   = recstream_check_extra_read();
	if (replay)
		r->bytes = (uint64_t)recorder_beats_out_read()*WORD;
	if (st & (1 << CSR_RECORDER_STATUS_ERROR_OFFSET)) {
		r->err_port   = recorder_err_port_read();
		r->err_lba    = ((uint64_t)recorder_err_lba_hi_read() << 32) | recorder_err_lba_lo_read();
		r->err_status = recorder_err_status_read();
		printf("Error: nvme%d: %s of the chunk at LBA %llu failed: %s\n", r->err_port, replay ? "read" : "write",
			(unsigned long long)r->err_lba, nvme_status_str(r->err_status));
		printf("  %llu of %llu chunks completed before the error\n", (unsigned long long)r->chunks,
			(unsigned long long)j->chunks);
		nvme_report_engine(r->err_port);
		return -1;
	}
	if (!(st & (1 << CSR_RECORDER_STATUS_DONE_OFFSET)))
		return -1;
	r->ok = 1;
	return 0;
}

int rec_record_run(struct rec_job *j, struct rec_result *r)
{
	uint64_t rate = source_rate(j), src = j->stop_bytes ? j->stop_bytes : j->abort_bytes ? j->abort_bytes :
		j->source_bytes ? j->source_bytes : j->bytes;
	recstream_gen_seed_write(j->seed);
	recstream_gen_beats_write(src/WORD);
	recstream_gen_rate_write((uint32_t)rate);
	recstream_gen_packet_write(j->packet_bytes/WORD);
	recstream_ctrl_write(j->strict << CSR_RECSTREAM_CTRL_STRICT_OFFSET);
	return rec_run(j, 0, (j->strict << CSR_RECSTREAM_CTRL_STRICT_OFFSET) |
		(1 << CSR_RECSTREAM_CTRL_GEN_START_OFFSET), r);
}

int rec_replay_run(struct rec_job *j, struct rec_result *r)
{
	recstream_check_seed_write(j->seed);
	recstream_check_beats_write((j->check_bytes ? j->check_bytes : j->bytes)/WORD);
	recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_CHECK_START_OFFSET);
	return rec_run(j, 1, 0, r);
}

/* Catalog hooks (catalog.h): the recording enters the drives' catalog -------------------------------- */

/* Leading arguments: `auto <mib>` (record) or `id=<n>` (replay). Returns the index of the first option
 * (0: the plain `<lba> <mib>` form, parsed by the caller), -1 on an error; *placed = 0 when the LBA is
 * still to be placed (auto, once the options are known). */
static int rec_catalog_args(int nb_params, char **params, int record, struct rec_job *j, int *placed)
{
	unsigned long v;
	uint64_t recorded;
	struct catalog_job cj;
	*placed = 1;
	if (record && nb_params >= 2 && !strcmp(params[0], "auto")) {
		if (literec_parse_ulong(params[1], &v) || v == 0 || v > 1048576) {
			printf("Error: invalid size '%s' MiB: 1..1048576\n", params[1]);
			return -1;
		}
		j->bytes = (uint64_t)v << 20;
		*placed = 0;
		return 2;
	}
	if (record || nb_params < 1 || strncmp(params[0], "id=", 3))
		return 0;
	if (literec_parse_ulong(params[0] + 3, &v) || v == 0 || v > 0xffffffffUL) {
		printf("Error: invalid id '%s': a recording id of the catalog (rec_list)\n", params[0] + 3);
		return -1;
	}
	if (catalog_lookup(v, (1u << NPORTS) - 1, &cj, &recorded))
		return -1;
	if (cj.mode == CATALOG_MODE_RING) {
		printf("Error: recording %lu is a ring: replay it with the host tool (literec extract) or by LBA\n", v);
		return -1;
	}
	j->lba   = cj.lba;
	j->mask  = cj.mask;
	j->chunk = cj.chunk;
	j->seed  = cj.seed;
	j->bytes = (recorded + cj.chunk - 1)/cj.chunk*cj.chunk;
	j->check_bytes = recorded/WORD*WORD;
	if (j->bytes == 0) {
		printf("Error: recording %lu holds no data\n", v);
		return -1;
	}
	return 1;
}

static int rec_catalog_begin(struct rec_job *j)
{
	struct catalog_job cj = {
		.mask = j->mask, .lba = j->lba, .bytes = j->bytes, .chunk = j->chunk,
		.mode = CATALOG_MODE_FIXED, .source = CATALOG_SOURCE_PATTERN, .seed = j->seed,
	};
	return catalog_rec_begin(&cj);
}

static void rec_catalog_checkpoint(struct rec_job *j)
{
	struct catalog_progress pr = {0, 0, 0, CATALOG_NO_TRIGGER};
	uint64_t in;
	if (!catalog_rec_active())
		return;
	pr.bytes_recorded = (uint64_t)recorder_chunks_done_read()*j->chunk;
	in = (uint64_t)recorder_beats_in_read()*WORD;
	if (in < pr.bytes_recorded)
		pr.bytes_recorded = in;
	catalog_rec_checkpoint(&pr);
}

static void rec_catalog_end(struct rec_job *j, struct rec_result *r)
{
	struct catalog_result cr;
	if (!catalog_rec_active())
		return;
	memset(&cr, 0, sizeof(cr));
	cr.state = r->ok ? (r->aborted ? CATALOG_STATE_ABORTED : CATALOG_STATE_COMPLETE) : CATALOG_STATE_ERROR;
	cr.p.bytes_recorded = r->chunks*j->chunk < r->bytes_in ? r->chunks*j->chunk : r->bytes_in;
	cr.p.bytes_dropped  = r->lost_beats*WORD;        /* lost by the source: positions unknown */
	cr.p.trigger        = CATALOG_NO_TRIGGER;
	cr.chunks_written   = r->chunks;
	cr.err_port         = r->ok ? -1 : r->err_port;
	cr.err_status       = r->err_status;
	cr.err_lba          = r->err_lba;
	catalog_rec_end(&cr);
}

/* Commands ---------------------------------------------------------------------------------------- */

static const char *rec_usage_record =
	"rec_record <lba|auto> <mib> [seed=N] [rate=MBps] [strict=0|1] [ports=all|N] [chunk=KiB] [qd=N] [stop=MiB] [abort=MiB]";
static const char *rec_usage_replay =
	"rec_replay <lba> <mib> | id=<n> [seed=N] [ports=all|N] [chunk=KiB] [qd=N]";

static int parse_args(int nb_params, char **params, int record, struct rec_job *j)
{
	const char *usage = record ? rec_usage_record : rec_usage_replay;
	unsigned long long v;
	unsigned long mib, x;
	int i, first, placed;
	rec_job_init(j);
	if ((first = rec_catalog_args(nb_params, params, record, j, &placed)) < 0)
		return -1;
	mib = j->bytes >> 20;
	if (first == 0 && nb_params < 2) {
		printf("%s\n", usage);
		return -1;
	}
	if (first == 0 && literec_parse_u64(params[0], &v)) {
		printf("Error: invalid LBA '%s': a number (or auto: after the last recording of the catalog)\n", params[0]);
		return -1;
	}
	if (first == 0)
		j->lba = v;
	if (first == 0 && (literec_parse_ulong(params[1], &mib) || mib == 0 || mib > 1048576)) {
		printf("Error: invalid size '%s' MiB: 1..1048576\n", params[1]);
		return -1;
	}
	if (first == 0)
		j->bytes = (uint64_t)mib << 20;
	for (i = first ? first : 2; i < nb_params; i++) {
		char *eq = strchr(params[i], '=');
		const char *val = eq ? eq + 1 : "";
		int klen = eq ? (int)(eq - params[i]) : (int)strlen(params[i]);
#define KEY(k) (klen == (int)strlen(k) && !strncmp(params[i], k, klen))
		if (!eq) {
			printf("Error: '%s': options are key=value\n%s\n", params[i], usage);
			return -1;
		} else if (KEY("seed")) {
			if (literec_parse_u64(val, &v) || v > 0xffffffffULL) {
				printf("Error: invalid seed '%s': a 32-bit number\n", val);
				return -1;
			}
			j->seed = v;
		} else if (KEY("ports")) {
			if (!strcmp(val, "all"))
				j->mask = (1u << NPORTS) - 1;
			else if (literec_parse_u64(val, &v) || v >= NPORTS) {
				printf("Error: invalid ports '%s': 'all' or a port 0..%d\n", val, NPORTS - 1);
				return -1;
			} else
				j->mask = 1u << v;
		} else if (KEY("chunk")) {
			if (literec_parse_ulong(val, &x) || x < 4 || (x & (x - 1)) || x > 16384) {
				printf("Error: invalid chunk '%s' KiB: a power of two 4..16384\n", val);
				return -1;
			}
			j->chunk = x*1024;
		} else if (KEY("qd")) {
			if (literec_parse_ulong(val, &j->qd) || j->qd == 0 || j->qd > RECORDER_SLOTS) {
				printf("Error: invalid qd '%s': chunk commands in flight, 1..%d\n", val, RECORDER_SLOTS);
				return -1;
			}
		} else if (record && KEY("rate")) {
			if (literec_parse_ulong(val, &j->rate_mbps)) {
				printf("Error: invalid rate '%s' MB/s: a number (0: as fast as possible)\n", val);
				return -1;
			}
		} else if (record && KEY("strict")) {
			if (literec_parse_ulong(val, &x) || x > 1) {
				printf("Error: invalid strict '%s': 0 (the source waits) or 1 (beats not taken are lost)\n", val);
				return -1;
			}
			j->strict = x;
		} else if (record && (KEY("stop") || KEY("abort"))) {
			if (literec_parse_ulong(val, &x) || x == 0 || x >= mib) {
				printf("Error: invalid %.*s '%s' MiB: 1..%lu (less than the recording)\n", klen, params[i], val, mib - 1);
				return -1;
			}
			if (KEY("stop"))
				j->stop_bytes = (uint64_t)x << 20;
			else
				j->abort_bytes = (uint64_t)x << 20;
		} else {
			printf("Error: unknown option '%.*s'\n%s\n", klen, params[i], usage);
			return -1;
		}
#undef KEY
	}
	if (j->stop_bytes && j->abort_bytes) {
		printf("Error: stop= and abort= exclude each other\n");
		return -1;
	}
	if (!placed && catalog_place_auto(j->mask, j->bytes, j->chunk, &j->lba))
		return -1;
	return rec_job_check(j);
}

static void print_fixed3(uint64_t v) { literec_print_fixed(v, 3); }

static void rec_record_handler(int nb_params, char **params)
{
	struct rec_job j;
	struct rec_result r;
	int id, failed;
	if (parse_args(nb_params, params, 1, &j))
		return;
	if ((id = rec_catalog_begin(&j)) < 0)
		return;
	failed = rec_record_run(&j, &r);
	rec_catalog_end(&j, &r);
	if (failed) {
		printf("RESULT name=rec_record ok=0 chunks=%llu bytes_in=%llu lost_beats=%llu\n",
			(unsigned long long)r.chunks, (unsigned long long)r.bytes_in, (unsigned long long)r.lost_beats);
		return;
	}
	printf("rec_record: %llu bytes (%llu chunks of %lu KiB) to ", (unsigned long long)r.bytes,
		(unsigned long long)r.chunks, j.chunk >> 10);
	rec_print_ports(j.mask);
	printf(" from LBA %llu in %llu us: ", (unsigned long long)j.lba,
		(unsigned long long)(r.cycles*1000000/CONFIG_CLOCK_FREQUENCY));
	print_fixed3(rec_kbps(r.bytes, r.cycles));
	printf(" MB/s; input %llu bytes, %llu beats lost, %llu stall cycles, ring peak %u chunks%s\n",
		(unsigned long long)r.bytes_in, (unsigned long long)r.lost_beats, (unsigned long long)r.stalls,
		r.ring_peak, r.aborted ? ", aborted" : "");
	if (r.dropped)
		printf("rec_record: abort dropped the last %llu bytes (a partly filled chunk)\n", (unsigned long long)r.dropped);
	printf("RESULT name=rec_record ok=1 lba=%llu bytes=%llu chunks=%llu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)j.lba, (unsigned long long)r.bytes, (unsigned long long)r.chunks, j.chunk,
		j.nports, (unsigned long long)r.cycles);
	print_fixed3(rec_kbps(r.bytes, r.cycles));
	printf(" bytes_in=%llu lost_beats=%llu stalls=%llu ring_peak=%u aborted=%d dropped=%llu early_last=%llu\n",
		(unsigned long long)r.bytes_in, (unsigned long long)r.lost_beats, (unsigned long long)r.stalls, r.ring_peak,
		r.aborted, (unsigned long long)r.dropped, (unsigned long long)r.early_last);
}
define_command(rec_record, rec_record_handler,
	"Record the test stream to the SSDs: rec_record <lba> <mib> [seed=] [rate=MBps] [strict=] [ports=] [chunk=KiB] [qd=] [stop=MiB] [abort=MiB]",
	LITEREC_CMDS);

static void rec_replay_handler(int nb_params, char **params)
{
	struct rec_job j;
	struct rec_result r;
	uint64_t expect;
	if (parse_args(nb_params, params, 0, &j))
		return;
	if (rec_replay_run(&j, &r)) {
		printf("RESULT name=rec_replay ok=0 chunks=%llu bytes=%llu errors=%llu\n",
			(unsigned long long)r.chunks, (unsigned long long)r.bytes, (unsigned long long)r.errors);
		return;
	}
	expect = j.bytes/WORD;
	printf("rec_replay: %llu bytes (%llu chunks of %lu KiB) from ", (unsigned long long)r.bytes,
		(unsigned long long)r.chunks, j.chunk >> 10);
	rec_print_ports(j.mask);
	printf(" at LBA %llu in %llu us: ", (unsigned long long)j.lba,
		(unsigned long long)(r.cycles*1000000/CONFIG_CLOCK_FREQUENCY));
	print_fixed3(rec_kbps(r.bytes, r.cycles));
	printf(" MB/s; pattern check (seed %lu): %llu word errors", (unsigned long)j.seed, (unsigned long long)r.errors);
	if (r.errors)
		printf(", first at byte %llu", (unsigned long long)r.first_error);
	if (r.checked_beats != expect)
		printf(", length error: %llu of %llu words", (unsigned long long)r.checked_beats, (unsigned long long)expect);
	printf("\n");
	printf("RESULT name=rec_replay ok=1 lba=%llu bytes=%llu chunks=%llu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)j.lba, (unsigned long long)r.bytes, (unsigned long long)r.chunks, j.chunk,
		j.nports, (unsigned long long)r.cycles);
	print_fixed3(rec_kbps(r.bytes, r.cycles));
	printf(" errors=%llu first_error=%llu checked_beats=%llu extra_beats=%llu\n", (unsigned long long)r.errors,
		(unsigned long long)(r.errors ? r.first_error : 0),
		(unsigned long long)r.checked_beats, (unsigned long long)r.extra_beats);
}
define_command(rec_replay, rec_replay_handler,
	"Replay from the SSDs into the pattern checker: rec_replay <lba> <mib> [seed=] [ports=] [chunk=KiB] [qd=]",
	LITEREC_CMDS);

static void rec_status_handler(int nb_params, char **params)
{
	uint32_t st = recorder_status_read();
	printf("recorder: %s%s%s%s, %lu chunks requested, %lu completed, ring peak %lu of %lu slots\n",
		(st & (1 << CSR_RECORDER_STATUS_BUSY_OFFSET)) ? "busy" : "idle",
		(st & (1 << CSR_RECORDER_STATUS_DONE_OFFSET)) ? ", done" : "",
		(st & (1 << CSR_RECORDER_STATUS_ERROR_OFFSET)) ? ", error" : "",
		(st & (1 << CSR_RECORDER_STATUS_ABORTED_OFFSET)) ? ", aborted" : "",
		(unsigned long)recorder_chunks_req_read(), (unsigned long)recorder_chunks_done_read(),
		(unsigned long)recorder_max_level_read(), (unsigned long)recorder_ring_slots_read());
	printf("RESULT name=rec_status busy=%lu done=%lu error=%lu aborted=%lu err_status=0x%04lx chunks_req=%lu "
		"chunks_done=%lu beats_in=%lu beats_out=%lu lost_beats=%lu check_errors=%lu early_last=%lu\n",
		(unsigned long)((st >> CSR_RECORDER_STATUS_BUSY_OFFSET) & 1),
		(unsigned long)((st >> CSR_RECORDER_STATUS_DONE_OFFSET) & 1),
		(unsigned long)((st >> CSR_RECORDER_STATUS_ERROR_OFFSET) & 1),
		(unsigned long)((st >> CSR_RECORDER_STATUS_ABORTED_OFFSET) & 1),
		(unsigned long)recorder_err_status_read(),
		(unsigned long)recorder_chunks_req_read(), (unsigned long)recorder_chunks_done_read(),
		(unsigned long)recorder_beats_in_read(), (unsigned long)recorder_beats_out_read(),
		(unsigned long)recstream_gen_lost_read(), (unsigned long)recstream_check_errors_read(),
		(unsigned long)recorder_early_last_read());
}
define_command(rec_status, rec_status_handler, "Recorder datapath status", LITEREC_CMDS);

#endif
