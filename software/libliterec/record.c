// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Recorder jobs (record.h): the recorder datapath (cores/recorder) moves a stream (the test pattern
// or the user's, selected at run time) through the LiteDRAM ring to the SSDs (chunks striped over
// the selected ports) and back. A job is checked, configured and started here; the CPU then only
// polls, it does no work per chunk. The commands are in cmd_record.c; every recording enters the
// drives' catalog through catalog_job_*() (catalog.c).

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include <libbase/console.h>

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

static struct rec_job cur_job;
static int cur_valid;

struct rec_job *rec_current_job(void) { return cur_valid ? &cur_job : NULL; }

/* Jobs ------------------------------------------------------------------------------------------ */

void rec_job_init(struct rec_job *j)
{
	memset(j, 0, sizeof(*j));
	j->seed   = 1;
	j->mask   = 1;
	j->chunk  = LITEREC_CHUNK_SIZE;
	j->mode   = REC_MODE_FIXED;
	j->input  = REC_INPUT_PATTERN >= 0 ? REC_INPUT_PATTERN : REC_INPUT_USER;
	j->output = REC_OUTPUT_CHECKER >= 0 ? REC_OUTPUT_CHECKER : REC_OUTPUT_USER;
}

uint64_t rec_kbps(uint64_t bytes, uint64_t cycles)
{
	/* bytes*(f/1000)/cycles without overflowing 64 bits, for any recording: q*k + r*k/cycles with
	 * r = bytes % cycles; when r*k would not fit (r >= 2^46: recordings of days), r and cycles lose
	 * low bits together (relative error < 2^-45, far below the printed precision). */
	uint64_t k = CONFIG_CLOCK_FREQUENCY/1000, q, r, c = cycles;
	if (!cycles)
		return 0;
	q = bytes/cycles;
	r = bytes % cycles;
	while (r > UINT64_MAX/k) {
		r >>= 1;
		c >>= 1;
	}
	return q*k + r*k/c;
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

const char *rec_status_str(int s)
{
	switch (s) {
	case REC_STATUS_NONE:       return "running";
	case REC_STATUS_COMPLETE:   return "complete";
	case REC_STATUS_STOPPED:    return "stopped";
	case REC_STATUS_ABORTED:    return "aborted";
	case REC_STATUS_CAPACITY:   return "capacity reached";
	case REC_STATUS_TRIGGERED:  return "triggered";
	case REC_STATUS_INPUT_END:  return "input ended";
	case REC_STATUS_ERR_RANGE:  return "range beyond the region or the namespace";
	case REC_STATUS_ERR_ORDER:  return "first address greater than last address";
	case REC_STATUS_ERR_ALIGN:  return "address not aligned on the chunk";
	case REC_STATUS_ERR_CONFIG: return "invalid configuration";
	case REC_STATUS_ERR_DEVICE: return "device error";
	case REC_STATUS_ERR_TIMEOUT:return "command timeout";
	case REC_STATUS_ERR_ENGINE: return "queue engine not given to the recorder";
	}
	return "unknown";
}

/* Source rate: beats per cycle x 65536 (0: every cycle). */
static uint64_t source_rate(struct rec_job *j)
{
	return (uint64_t)j->rate_mbps*1000000ULL*65536/((uint64_t)WORD*CONFIG_CLOCK_FREQUENCY);
}

static int ports_in(uint32_t mask)
{
	int n = 0;
	for (; mask; mask >>= 1)
		n += mask & 1;
	return n;
}

static int port_index(uint32_t mask, int k)
{
	/* The port of the k-th enabled port. */
	int p;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p))
			if (k-- == 0)
				return p;
	return 0;
}

/* Trim-ahead distance in rows of `n` ports (whole rows, rounded up). */
static uint64_t trim_rows_of(const struct rec_job *j, int n)
{
	return j->trim_bytes ? (j->trim_bytes + (uint64_t)j->chunk*n - 1)/((uint64_t)j->chunk*n) : 0;
}

/* Refused while a recording or replay runs: nothing is changed. */
static int recorder_busy(void)
{
	if (!(recorder_status_read() & (1 << CSR_RECORDER_STATUS_BUSY_OFFSET)))
		return 0;
	printf("Error: the recorder is busy (rec_stop / rec_abort / rec_wait first); nothing was changed\n");
	return 1;
}

int rec_job_check(struct rec_job *j)
{
	int p, n;
	/* rate_mbps*1e6*65536 overflows 64 bits above 281474 MB/s: out of range before computing it. */
	uint64_t max_mbps = (uint64_t)WORD*CONFIG_CLOCK_FREQUENCY/1000000;
	uint64_t rate = j->rate_mbps < max_mbps ? source_rate(j) : 65536, cb, region_chunks;
	if (j->rate_mbps && (rate == 0 || rate >= 65536)) {
		printf("Error: rate %lu MB/s: 1..%llu MB/s (a %d-byte word per cycle at most), or 0 for unlimited\n",
			j->rate_mbps, (unsigned long long)(max_mbps - 1), WORD);
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
	if (!j->replay && j->input < 0) {
		printf("Error: this build has no such record input (inputs:%s%s)\n",
			REC_INPUT_PATTERN >= 0 ? " pattern" : "", REC_INPUT_USER >= 0 ? " user" : "");
		return -1;
	}
	if (j->replay && j->output < 0) {
		printf("Error: this build has no such replay output (outputs:%s%s)\n",
			REC_OUTPUT_CHECKER >= 0 ? " checker" : "", REC_OUTPUT_USER >= 0 ? " user" : "");
		return -1;
	}
	/* Ports: initialized, healthy, one LBA size, chunk <= MDTS. */
	j->nsze = 0;
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
		if (n == 0 || c->nsze < j->nsze)
			j->nsze = c->nsze;
		n++;
	}
	j->nports = n;
	if (j->chunk < j->lba_size) {
		printf("Error: chunk of %lu bytes is smaller than an LBA (%lu bytes)\n", j->chunk, (unsigned long)j->lba_size);
		return -1;
	}
	cb = j->chunk/j->lba_size;
	j->chunk_blocks = cb;
	/* The region: rows of one chunk per port, from `lba`. */
	if (j->replay || j->mode == REC_MODE_FIXED) {
		if (j->bytes == 0 || (!j->replay && j->bytes % j->chunk)) {
			printf("Error: %llu bytes is not a whole, non-zero number of %lu KiB chunks\n",
				(unsigned long long)j->bytes, j->chunk >> 10);
			return -1;
		}
		j->chunks = (j->bytes + j->chunk - 1)/j->chunk;
		region_chunks = j->chunks;
		if (j->replay && j->region_bytes) {
			if (j->region_bytes % ((uint64_t)j->chunk*n)) {
				printf("Error: region of %llu bytes is not a whole number of rows (%d x %lu KiB)\n",
					(unsigned long long)j->region_bytes, n, j->chunk >> 10);
				return -1;
			}
			region_chunks = j->region_bytes/j->chunk;
		}
		j->rows = (region_chunks + n - 1)/n;
	} else if (j->mode == REC_MODE_RING || j->bytes) {
		if (j->bytes == 0 || j->bytes % ((uint64_t)j->chunk*n)) {
			printf("Error: region of %llu bytes is not a whole, non-zero number of rows (%d port%s x %lu KiB chunks)\n",
				(unsigned long long)j->bytes, n, n > 1 ? "s" : "", j->chunk >> 10);
			return -1;
		}
		j->rows = j->bytes/((uint64_t)j->chunk*n);
	} else {
		/* Until stop, to the end of the namespace. */
		j->rows = j->lba < j->nsze ? (j->nsze - j->lba)/cb : 0;
		if (j->rows == 0) {
			printf("Error: LBA %llu leaves no room for a chunk in the namespace (LBA 0..%llu)\n",
				(unsigned long long)j->lba, (unsigned long long)(j->nsze - 1));
			return -1;
		}
	}
	j->capacity = j->rows*n;
	j->last_lba = j->lba + (j->rows - 1)*cb;
	if (j->lba >= j->nsze || j->last_lba + cb > j->nsze || j->last_lba < j->lba) {
		for (p = 0; !(j->mask & (1u << p)); p++);
		printf("Error: LBA %llu..%llu is outside nvme%d's namespace (LBA 0..%llu); nothing was sent\n",
			(unsigned long long)j->lba, (unsigned long long)(j->last_lba + cb - 1), p,
			(unsigned long long)(j->nsze - 1));
		return -1;
	}
	if (j->lba % cb) {
		printf("Error: LBA %llu is not a multiple of the chunk (%lu LBAs): recordings start on a chunk\n",
			(unsigned long long)j->lba, (unsigned long)cb);
		return -1;
	}
	if (j->replay && j->start_chunk >= j->capacity) {
		printf("Error: from=%llu: the region holds chunks 0..%llu\n", (unsigned long long)j->start_chunk,
			(unsigned long long)(j->capacity - 1));
		return -1;
	}
	j->start_lba  = j->lba + (j->start_chunk/n)*cb;
	j->start_port = port_index(j->mask, j->start_chunk % n);
	if (j->trim_bytes && j->replay) {
		printf("Error: trim-ahead is for recordings\n");
		return -1;
	}
	if (j->trim_bytes && trim_rows_of(j, n) >= j->rows) {
		printf("Error: trim-ahead of %llu bytes reaches past the region (%llu rows of %d x %lu KiB)\n",
			(unsigned long long)j->trim_bytes, (unsigned long long)j->rows, n, j->chunk >> 10);
		return -1;
	}
	if (trim_rows_of(j, n) > RECORDER_TRIM_ROWS_MAX) {
		printf("Error: trim-ahead of %llu bytes is more than the recorder trims ahead: %d rows of %d x %lu KiB "
			"(%llu MiB)\n", (unsigned long long)j->trim_bytes, RECORDER_TRIM_ROWS_MAX, n, j->chunk >> 10,
			(unsigned long long)(((uint64_t)RECORDER_TRIM_ROWS_MAX*j->chunk*n) >> 20));
		return -1;
	}
	j->ring_slots = PCIE_DRAM_WINDOW_SIZE/j->chunk;
	if (j->ring_slots > RECORDER_SLOTS)
		j->ring_slots = RECORDER_SLOTS;
	if (j->buffer_bytes && j->buffer_bytes != REC_BUFFER_ALL) {
		if (j->buffer_bytes/j->chunk < 2 || j->buffer_bytes/j->chunk > j->ring_slots) {
			printf("Error: buffer of %llu KiB: 2 to %lu chunks of %lu KiB (the DRAM window, %d slots at most; buffer=all)\n",
				(unsigned long long)(j->buffer_bytes >> 10), j->ring_slots, j->chunk >> 10, RECORDER_SLOTS);
			return -1;
		}
		j->ring_slots = j->buffer_bytes/j->chunk;
	} else if (!j->buffer_bytes) {
		/* The default ring (RECORDER_BUFFER_DEFAULT, set by the SoC builder); a ring recording
		 * keeps at most its region: a DRAM buffer larger than the region would only hold data
		 * that the drive overwrites before the end (buffer= overrides both). */
		unsigned long slots = RECORDER_BUFFER_DEFAULT/j->chunk;
		if (j->mode == REC_MODE_RING && j->rows*n < slots)
			slots = j->rows*n;
		if (slots < 2)
			slots = 2;
		if (slots < j->ring_slots)
			j->ring_slots = slots;
	}
	return 0;
}

/* A recording that ended without a poll since (rec_start, then no rec_wait/rec_status) enters the
 * catalog before the next job or catalog command. */
void rec_catalog_settle(void)
{
	struct rec_result r;
	if (catalog_job_on() && cur_valid && !(recorder_status_read() & (1 << CSR_RECORDER_STATUS_BUSY_OFFSET))) {
		rec_job_poll(&cur_job, &r);
		/* An armed job no poll saw running: the recorder's status is still the previous run's. */
		if (catalog_job_on())
			catalog_job_end(&cur_job, NULL, CATALOG_STATE_ABORTED);
	}
}

/* Start ----------------------------------------------------------------------------------------- */

static void set_engines(uint32_t mask, int source)
{
	int p;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			if (source == NVME_SRC_EXT)
				nvme_engine_set_qd(p, nvme_ctrls[p].io_qsize - 1);
			nvme_engine_source(p, source);
		}
}

/* On-chip slots of each port for this job's chunk (0: the DRAM ring alone). */
static unsigned long rec_onchip_slots(struct rec_job *j)
{
	unsigned long n;
	if (j->staging == REC_STAGING_OFF || !RECORDER_STAGING_SLOTS)
		return 0;
	n = RECORDER_STAGING_BYTES/j->chunk;
	return n > RECORDER_STAGING_SLOTS ? RECORDER_STAGING_SLOTS : n;
}

/* The recorder's run configuration (`config`) of a job: written once per job, before its pulses. */
static uint32_t job_config(struct rec_job *j)
{
	uint32_t c = 0;
	int end_on_last = j->replay ? 0 : 1;
#ifdef CSR_RECSTREAM_BASE
	/* The pattern source of a fixed-size recording is as long as the recording: the size ends it;
	 * a source that ends earlier (stop=) ends it with its `last`. */
	if (!j->replay && j->input == REC_INPUT_PATTERN && !j->stop_bytes)
		end_on_last = 0;
#endif
	c |= (j->replay ? 1 : 0) << CSR_RECORDER_CONFIG_DIRECTION_OFFSET;
	c |= (uint32_t)j->mode << CSR_RECORDER_CONFIG_MODE_OFFSET;
	c |= (j->drop ? 1 : 0) << CSR_RECORDER_CONFIG_DROP_OFFSET;
	c |= (uint32_t)(j->input < 0 ? 0 : j->input) << CSR_RECORDER_CONFIG_INPUT_SEL_OFFSET;
	c |= (uint32_t)(j->output < 0 ? 0 : j->output) << CSR_RECORDER_CONFIG_OUTPUT_SEL_OFFSET;
	c |= end_on_last << CSR_RECORDER_CONFIG_END_ON_LAST_OFFSET;
	c |= (j->packet_bytes ? 1 : 0) << CSR_RECORDER_CONFIG_CHECK_LAST_OFFSET;
	c |= (j->flush_after ? 1 : 0) << CSR_RECORDER_CONFIG_FLUSH_AFTER_OFFSET;
#ifdef CSR_RECORDER_CONFIG_SPILL_OFFSET
	/* A source that can wait (lossless) waits for an on-chip slot; one that cannot (policy=drop, or
	 * the strict test source), or a job that asked for a DRAM buffer (buffer=), spills its chunks to
	 * DRAM slots while the drives fall behind. */
	if (j->spill == REC_SPILL_ON || (j->spill == REC_SPILL_AUTO && (j->drop || j->buffer_bytes ||
		(j->strict && !j->replay && j->input == REC_INPUT_PATTERN))))
		c |= 1 << CSR_RECORDER_CONFIG_SPILL_OFFSET;
#endif
	/* Input outside the recording: the test source's surplus is always discarded (counted), the
	 * user's waits unless surplus=flush. */
	if (j->surplus == REC_SURPLUS_FLUSH || (j->surplus == REC_SURPLUS_AUTO && !j->replay && j->input == REC_INPUT_PATTERN))
		c |= 1 << CSR_RECORDER_CONFIG_FLUSH_SURPLUS_OFFSET;
	return c;
}

static void configure(struct rec_job *j)
{
	uint64_t trim_rows = trim_rows_of(j, j->nports);
	uint32_t chunk_log2 = 0;
	while ((1ul << chunk_log2) < j->chunk)   /* (a power of two: rec_job_check) */
		chunk_log2++;
	/* The ring's start is fixed in the hardware (RECORDER_RING_BUS: the DRAM window); a job sets
	 * how many of its slots it uses and the chunk. */
	recorder_ring_slots_write(j->ring_slots);
	recorder_chunk_log2_write(chunk_log2);
	recorder_chunk_blocks_write(j->chunk_blocks);
	recorder_first_lba_write(j->lba);
	recorder_last_lba_write(j->last_lba);
	recorder_start_lba_write(j->start_lba);
	recorder_start_port_write(j->start_port);
	recorder_nsze_write(j->nsze);
	recorder_chunks_write(j->chunks);
	recorder_replay_bytes_write(j->replay ? j->bytes : 0);
	recorder_post_bytes_write(j->post_bytes);
	recorder_trim_rows_write(trim_rows);
	recorder_port_mask_write(j->mask);
	recorder_max_inflight_write(j->qd ? j->qd : REC_DEFAULT_QD_PER_PORT*j->nports);
#ifdef CSR_RECORDER_ONCHIP_SLOTS_ADDR
	recorder_onchip_slots_write(rec_onchip_slots(j));
#endif
#ifdef CSR_RECSTREAM_BASE
	if (!j->replay && j->input == REC_INPUT_PATTERN) {
		uint64_t src = j->stop_bytes ? j->stop_bytes : j->abort_bytes ? j->abort_bytes :
			j->source_bytes ? j->source_bytes : j->mode == REC_MODE_FIXED ? j->bytes : 0;
		/* A source left running by an earlier recording (its surplus kept waiting) stops first, and
		 * what it left in the input path is discarded (counted): it is not this recording's pattern
		 * (a lossless input that waits is recorded by the next run, also with surplus=keep). */
		uint64_t t0;
		recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_GEN_STOP_OFFSET);
		recorder_config_write(job_config(j) | (1 << CSR_RECORDER_CONFIG_FLUSH_SURPLUS_OFFSET));
		t0 = literec_cycles();
		while (literec_cycles() - t0 < literec_us_to_cycles(20))   /* the port's FIFO: a few thousand words at most */
			;
		recstream_gen_seed_write(j->seed);
		recstream_gen_beats_write(src/WORD);
		recstream_gen_rate_write((uint32_t)source_rate(j));
		recstream_gen_packet_write(j->packet_bytes/WORD);
	}
	if (j->replay && j->output == REC_OUTPUT_CHECKER) {
		recstream_check_seed_write(j->seed);
		recstream_check_beats_write((j->check_bytes ? j->check_bytes : j->bytes)/WORD);
		recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_CHECK_START_OFFSET);
	}
#endif
}

int rec_job_start(struct rec_job *j)
{
	uint32_t st, c;
	uint64_t t0;
	if (recorder_busy())
		return -1;
	rec_catalog_settle();
	if (!j->replay && catalog_job_begin(j))
		return -1;
	cur_job = *j;
	cur_valid = 1;
	set_engines(j->mask, NVME_SRC_EXT);
	configure(j);
	c = job_config(j);
#ifdef CSR_RECSTREAM_BASE
	/* The pattern source starts in the cycle the recording starts (gen_on_run). */
	if (!j->replay && j->input == REC_INPUT_PATTERN)
		recstream_ctrl_write((j->strict << CSR_RECSTREAM_CTRL_STRICT_OFFSET) |
			(1 << CSR_RECSTREAM_CTRL_GEN_ON_RUN_OFFSET));
	else
		recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_GEN_STOP_OFFSET);
#endif
	recorder_config_write(c);
	if (j->arm) {
		/* One hardware start: the recorder forgets the arm when the start is taken or the run ends. */
		recorder_control_write(1 << CSR_RECORDER_CONTROL_ARM_OFFSET);
		printf("rec_start: armed, waiting for the hardware start input\n");
		return 0;
	}
	t0 = literec_cycles();
	catalog_job_started(t0);
	recorder_control_write(1 << CSR_RECORDER_CONTROL_START_OFFSET);
	/* The recorder checks the configuration (a few thousand cycles at most), then runs. */
	do {
		st = recorder_status_read();
		if (STATUS_BIT(st, RUNNING) || !STATUS_BIT(st, BUSY))
			break;
	} while (literec_cycles() - t0 < literec_us_to_cycles(10000));
	if (!STATUS_BIT(st, BUSY) && STATUS_CODE(st) >= REC_STATUS_ERR_RANGE) {
		printf("Error: the recorder refused the configuration: %s (status %d)\n", rec_status_str(STATUS_CODE(st)),
			(int)STATUS_CODE(st));
		set_engines(j->mask, NVME_SRC_CPU);
		if (catalog_job_on() && !j->replay)
			catalog_job_end(j, NULL, CATALOG_STATE_ERROR);
		return -1;
	}
	return 0;
}

void rec_flush_surplus(int on)
{
	uint32_t c = job_config(&cur_job) & ~(1u << CSR_RECORDER_CONFIG_FLUSH_SURPLUS_OFFSET);
	recorder_config_write(c | ((on ? 1u : 0u) << CSR_RECORDER_CONFIG_FLUSH_SURPLUS_OFFSET));
}

/* Raw configuration: the registers as given, no check by the BIOS (the recorder's own checks). */
int rec_raw_start(int replay, uint64_t first, uint64_t last, uint64_t start, uint64_t chunks, uint64_t nsze,
	uint32_t mask, unsigned long chunk, uint32_t lba_size)
{
	struct rec_job j;
	uint32_t st;
	uint64_t t0;
	if (recorder_busy())
		return -1;
	rec_catalog_settle();
	rec_job_init(&j);
	j.replay = replay; j.lba = first; j.last_lba = last; j.start_lba = start; j.chunks = chunks;
	j.nsze = nsze; j.mask = mask; j.chunk = chunk; j.chunk_blocks = chunk/lba_size; j.lba_size = lba_size;
	j.bytes = chunks*chunk; j.ring_slots = 64; j.nports = ports_in(mask);
	j.surplus = REC_SURPLUS_FLUSH;
	cur_job = j;
	cur_valid = 1;
	set_engines(mask, NVME_SRC_EXT);
	configure(&j);
	recorder_config_write(job_config(&j));
	recorder_control_write(1 << CSR_RECORDER_CONTROL_START_OFFSET);
	t0 = literec_cycles();
	do
		st = recorder_status_read();
	while (!STATUS_BIT(st, RUNNING) && STATUS_BIT(st, BUSY) && literec_cycles() - t0 < literec_us_to_cycles(10000));
	if (STATUS_BIT(st, RUNNING)) {
		/* Accepted: it must not run, end it at once. */
		recorder_control_write(1 << CSR_RECORDER_CONTROL_ABORT_OFFSET);
		while (STATUS_BIT(recorder_status_read(), BUSY) && literec_cycles() - t0 < literec_us_to_cycles(1000000));
	}
	set_engines(mask, NVME_SRC_CPU);
	return STATUS_BIT(st, RUNNING) ? REC_STATUS_NONE : STATUS_CODE(recorder_status_read());
}

/* Status ---------------------------------------------------------------------------------------- */

void rec_job_poll(struct rec_job *j, struct rec_result *r)
{
	uint32_t st;
	uint64_t committed, wbytes;
	memset(r, 0, sizeof(*r));
	recorder_control_write(1 << CSR_RECORDER_CONTROL_SNAPSHOT_OFFSET);
	st = recorder_status_read();
	r->busy      = STATUS_BIT(st, BUSY);
	r->done      = STATUS_BIT(st, DONE);
	r->overflow  = STATUS_BIT(st, OVERFLOW);
	r->triggered = STATUS_BIT(st, TRIGGERED);
	r->status    = STATUS_CODE(st);
	r->cycles        = recorder_snap_cycles_read();
	r->bytes_in      = recorder_snap_bytes_in_read();
	r->bytes_kept    = recorder_snap_kept_read();
	r->bytes_dropped = recorder_snap_dropped_read();
	committed        = recorder_snap_committed_read();
	r->level         = recorder_snap_level_read();
	r->chunks        = LIVE64(RECORDER, RELEASED);
	r->drops         = LIVE64(RECORDER, DROPS);
	r->stalls        = LIVE64(RECORDER, STALLS);
	r->surplus       = LIVE64(RECORDER, SURPLUS);
	r->peak          = LIVE64(RECORDER, PEAK);
	r->ring_peak     = r->peak;
	r->onchip_slots  = rec_onchip_slots(j);
#ifdef CSR_RECORDER_PEAK_ONCHIP_ADDR
	r->peak_onchip   = LIVE64(RECORDER, PEAK_ONCHIP);
	r->peak_dram     = LIVE64(RECORDER, PEAK_DRAM);
	r->bytes_spilled = LIVE64(RECORDER, BYTES_SPILLED);
#else
	r->peak_dram     = r->peak;
	r->bytes_spilled = j->replay ? LIVE64(RECORDER, BYTES_OUT) : r->bytes_kept;
#endif
	r->early_last    = LIVE64(RECORDER, EARLY_LAST);
	r->keep_errors   = LIVE64(RECORDER, KEEP_ERRORS);
	r->wraps         = r->chunks && j->capacity ? (r->chunks - 1)/j->capacity : 0;
	r->trigger_pos   = recorder_trigger_pos_read();
	r->addr_last     = LIVE64(RECORDER, ADDR_LAST_LBA)*j->lba_size;
	r->err_port      = recorder_err_port_read();
	r->err_status    = recorder_err_status_read();
	r->err_lba       = recorder_err_lba_read();
	r->aborted       = r->status == REC_STATUS_ABORTED;
	if (j->replay) {
		r->bytes = LIVE64(RECORDER, BYTES_OUT);
	} else {
		/* Data written to the SSDs: whole chunks; the last one of a recording may be padded. */
		wbytes = committed*j->chunk;
		r->bytes_committed = wbytes < r->bytes_kept ? wbytes : r->bytes_kept;
		r->bytes_buffered  = r->bytes_kept - r->bytes_committed;
		r->bytes = r->chunks*j->chunk;
		/* Ring: the oldest chunk still on the drives (trim ahead deallocated the rows after the
		 * last one written, up to the trims' progress). */
		if (j->mode == REC_MODE_RING) {
			uint64_t k = r->chunks, oldest = 0, t;
			if (j->trim_bytes) {
				t = LIVE64(RECORDER, TRIMMED_ROWS);
				oldest = t > j->rows ? (t - j->rows)*j->nports : 0;
			} else
				oldest = k > j->capacity ? k - j->capacity : 0;
			if (oldest > k)
				oldest = k;
			r->oldest = oldest*j->chunk;
		}
		/* An abort discards the partly filled chunk: the last drop log entry says how much. */
		if (r->aborted && r->drops && r->drops <= RECORDER_LOG_DEPTH) {
			recorder_log_index_write(r->drops - 1);
			recorder_log_index_read();
			if (recorder_log_abort_read())
				r->dropped = recorder_log_len_read();
		}
	}
#ifdef CSR_RECSTREAM_BASE
	r->lost_beats    = LIVE64(RECSTREAM, GEN_LOST);
	r->errors        = LIVE64(RECSTREAM, CHECK_ERRORS);
	r->first_error   = LIVE64(RECSTREAM, CHECK_FIRST)*WORD;
	r->checked_beats = LIVE64(RECSTREAM, CHECK_CHECKED);
	r->extra_beats   = LIVE64(RECSTREAM, CHECK_EXTRA);
	r->last_at       = LIVE64(RECSTREAM, CHECK_LAST_AT);
#endif
	r->ok = r->done && !r->busy && r->status != REC_STATUS_NONE && r->status < REC_STATUS_ERR_RANGE;
	catalog_job_poll(j, r);
}

int rec_temperature(uint32_t mask)
{
	volatile uint8_t *b;
	int p;
	for (p = 0; p < NPORTS; p++)
		if ((mask & (1u << p)) && nvme_ctrls[p].initialized && nvme_get_log(p, 0x02, 0xffffffff, 512, &b) == 0)
			return (b[1] | (b[2] << 8)) - 273;
	return -273;
}

static void print_live(struct rec_job *j, struct rec_result *r)
{
	uint64_t bytes = j->replay ? r->bytes : r->bytes_committed;
	printf("\r%s: %llu MiB %s, ", j->replay ? "play" : "rec", (unsigned long long)(bytes >> 20),
		j->replay ? "out" : "written");
	literec_print_fixed(rec_kbps(bytes, r->cycles), 3);
	printf(" MB/s, ring %llu/%lu chunks (peak %llu), dropped %llu B, %d C    ", (unsigned long long)r->level,
		j->ring_slots, (unsigned long long)r->peak, (unsigned long long)r->bytes_dropped,
		rec_temperature(j->mask));
}

static void finish(struct rec_job *j, struct rec_result *r)
{
	/* The job is over: the engines go back to the CPU, the test source stops; a drive's error is
	 * reported in words. */
	set_engines(j->mask, NVME_SRC_CPU);
#ifdef CSR_RECSTREAM_BASE
	/* (With surplus=keep the source's surplus waits at the port: it is left as it is.) */
	if (!j->replay && j->input == REC_INPUT_PATTERN && j->surplus != REC_SURPLUS_KEEP)
		recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_GEN_STOP_OFFSET);
#endif
	if (r->status == REC_STATUS_ERR_DEVICE || r->status == REC_STATUS_ERR_TIMEOUT) {
		printf("Error: nvme%d: %s of the chunk at LBA %llu failed: %s\n", r->err_port, j->replay ? "read" : "write",
			(unsigned long long)r->err_lba, nvme_status_str(r->err_status));
		printf("  %llu of %llu chunks completed before the error\n", (unsigned long long)r->chunks,
			(unsigned long long)j->chunks);
		nvme_report_engine(r->err_port);
	}
}

#ifdef CSR_RECSTREAM_BASE
/* Every beat the pattern source handed on (produced, not lost) has reached the recorder. */
static int pattern_arrived(struct rec_job *j)
{
	uint64_t taken = (LIVE64(RECSTREAM, GEN_PRODUCED) - LIVE64(RECSTREAM, GEN_LOST))*RECORDER_WORD_BYTES;
	recorder_control_write(1 << CSR_RECORDER_CONTROL_SNAPSHOT_OFFSET);
	return recorder_snap_bytes_in_read() >= taken;
}
#endif

int rec_job_wait(struct rec_job *j, struct rec_result *r, uint64_t timeout_us, uint64_t interval_us)
{
	uint64_t t0 = literec_cycles(), tl = t0, limit = literec_us_to_cycles(timeout_us);
	uint64_t iv = literec_us_to_cycles(interval_us);
	/* Without a timeout (rec_wait): nothing moving for REC_WAIT_IDLE_MS ends the wait (the job goes on). */
	uint64_t idle_limit = literec_us_to_cycles((uint64_t)REC_WAIT_IDLE_MS*1000), t_moved = t0, moved = ~0ULL;
	int live = 0;
#ifdef CSR_RECSTREAM_BASE
	int closed = 0;
#endif
	for (;;) {
		uint32_t st = recorder_status_read();
		if (!STATUS_BIT(st, BUSY) && !j->arm)
			break;
		/* Armed: the end once the arm was used (or forgotten) and no run is left. */
		if (j->arm && !STATUS_BIT(st, ARMED) && !STATUS_BIT(st, BUSY))
			break;
#ifdef CSR_RECSTREAM_BASE
		/* A test source that ended without its `last` reaching the recorder (lost beats, or a
		 * source longer/shorter than the recording): the CPU closes the input, once every beat
		 * the source handed on has reached the recorder (beats still on their way would be lost). */
		if (!j->replay && j->input == REC_INPUT_PATTERN && !closed && STATUS_BIT(st, RUNNING) &&
			!recstream_gen_busy_read() && j->mode == REC_MODE_FIXED &&
			pattern_arrived(j)) {
			recorder_control_write(1 << (j->abort_bytes ? CSR_RECORDER_CONTROL_ABORT_OFFSET :
				CSR_RECORDER_CONTROL_STOP_OFFSET));
			closed = 1;
		}
#endif
		if (iv && literec_cycles() - tl >= iv) {
			uint64_t m;
			rec_job_poll(j, r);
			print_live(j, r);
			live = 1;
			tl = literec_cycles();
			m = r->bytes_in + r->chunks + r->bytes + r->surplus + (uint64_t)r->busy;
			if (m != moved) {
				moved = m;
				t_moved = tl;
			} else if (!limit && tl - t_moved >= idle_limit) {
				printf("\nrec_wait: nothing moved for %d ms of modeled time (%s): the job goes on; rec_wait "
					"again, rec_stop or rec_abort\n", REC_WAIT_IDLE_MS,
					STATUS_BIT(st, ARMED) ? "armed, no hardware start" : r->busy ? "no input, no command completed" :
					"idle");
				live = 0;
				break;
			}
		} else if (catalog_job_on() && catalog_rec_due())
			rec_job_poll(j, r);        /* a catalog checkpoint */
		if (limit && literec_cycles() - t0 >= limit)
			break;
		if (readchar_nonblock()) {
			readchar();
			break;
		}
	}
	if (live)
		printf("\n");
	rec_job_poll(j, r);
	if (r->done && !r->busy)
		finish(j, r);
	return r->done && !r->busy;
}

static int run(struct rec_job *j, struct rec_result *r)
{
	/* Modeled-time bound: the whole transfer at 10 MB/s plus 10 s. */
	uint64_t limit = (j->bytes ? j->bytes : (uint64_t)j->capacity*j->chunk)/10 + 10000000ULL;
	if (rec_job_start(j)) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	if (!rec_job_wait(j, r, limit, 0)) {
		printf("Error: the recorder did not finish within %llu ms of modeled time (%llu of %llu chunks done)\n",
			(unsigned long long)(limit/1000), (unsigned long long)r->chunks, (unsigned long long)j->chunks);
		return -1;
	}
	return r->ok ? 0 : -1;
}

int rec_record_run(struct rec_job *j, struct rec_result *r)
{
	j->replay = 0;
	return run(j, r);
}

int rec_replay_run(struct rec_job *j, struct rec_result *r)
{
	j->replay = 1;
	return run(j, r);
}

int rec_job_abort(void)
{
	struct rec_result r;
	if (!cur_valid || !STATUS_BIT(recorder_status_read(), BUSY))
		return 0;
	recorder_control_write(1 << CSR_RECORDER_CONTROL_ABORT_OFFSET);
	/* The commands in flight complete (or time out in the engine) within its timeout. */
	if (rec_job_wait(&cur_job, &r, 1000000, 0))
		return 0;
	printf("Error: the recorder did not end within 1 s of modeled time after an abort\n");
	return -1;
}

/* A pulse to the running job (rec_stop, rec_abort, rec_trigger, a disarm). */
void rec_job_pulse(int offset)
{
	recorder_control_write(1 << offset);
}

void rec_job_release(const struct rec_job *j)
{
	set_engines(j->mask, NVME_SRC_CPU);
}

#endif
