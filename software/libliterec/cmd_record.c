// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Record / replay: the recorder datapath (cores/recorder) moves a stream (the test pattern or the
// user's, selected at run time) through the LiteDRAM ring to the SSDs (chunks striped over the
// selected ports) and back. The CPU configures, starts and polls; it does no work per chunk.
//
//   rec_start <lba|auto> <mib|until-stop[=<mib>]|ring=<mib>> [input=pattern|user] [policy=lossless|drop]
//             [post=<mib>] [trim-ahead=<mib>] [flush=0|1] [arm=1] [chunk=KiB] [ports=all|N] [qd=N]
//             [seed=N] [rate=MBps] [strict=0|1]
//   rec_stop, rec_abort, rec_trigger, rec_wait [timeout_ms], rec_status, rec_drops [first] [count]
//   play_start <lba> <mib> | id=<n> [output=checker|user] [bytes=N] [region=<mib>] [from=<chunk>] ...
//   rec_record <lba|auto> <mib> [...]   rec_replay <lba> <mib> | id=<n> [...]   (blocking, test streams)
//
// Every recording enters the drives' catalog (catalog.h) when they have one: see "Catalog" below.

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include <bios/command.h>
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
#define STATUS_CODE(st) (((st) >> CSR_RECORDER_STATUS_CODE_OFFSET) & ((1 << CSR_RECORDER_STATUS_CODE_SIZE) - 1))
#define STATUS_BIT(st, f) (((st) >> CSR_RECORDER_STATUS_##f##_OFFSET) & 1)
/* Counters that change while a recording runs, two CSR words: read consistently (the snap_*
 * registers are frozen by the snapshot and need no re-read). */
#define LIVE64(core, reg) literec_csr_read64(CSR_##core##_##reg##_ADDR)

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

static const char *mode_str(struct rec_job *j)
{
	if (j->replay)
		return "replay";
	return j->mode == REC_MODE_RING ? "ring" : j->mode == REC_MODE_UNTIL_STOP ? "until-stop" : "fixed";
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

/* Catalog (catalog.h, doc/catalog.md) ---------------------------------------------------------------
 * Every recording job (rec_start, rec_record, the self-tests) enters the drives' catalog, when they
 * have one, from here only: begin when the job starts (refused: nothing is sent), a checkpoint from
 * the polling (at most every catalog_checkpoint_ms of modeled time, one non-blocking step per poll),
 * the end when a poll sees the job over, with the accounting, the drop log and a ring's trigger and
 * oldest byte. `auto` places a recording after the last one; `id=<n>` replays one. */

static int      cat_on;                 /* the current recording job is in the catalog */
static uint64_t cat_start;              /* modeled cycle of the start (0: armed, not known) */
static uint64_t cat_drops, cat_gaps;    /* drop log entries passed on, and their bytes */

static int cat_begin(struct rec_job *j)
{
	struct catalog_job cj;
	int id;
	if (j->no_catalog) {
		cat_on = 0;
		return 0;
	}
	memset(&cj, 0, sizeof(cj));
	cj.mask   = j->mask;
	cj.lba    = j->lba;
	cj.chunk  = j->chunk;
	cj.seed   = j->seed;
	cj.mode   = j->mode == REC_MODE_RING ? CATALOG_MODE_RING :
		j->mode == REC_MODE_UNTIL_STOP ? CATALOG_MODE_UNTIL_STOP : CATALOG_MODE_FIXED;
	cj.source = j->input == REC_INPUT_USER ? CATALOG_SOURCE_USER : CATALOG_SOURCE_PATTERN;
	cj.bytes  = j->mode == REC_MODE_FIXED ? j->bytes : j->capacity*j->chunk;
	id = catalog_rec_begin(&cj);
	cat_on = id > 0;
	cat_start = 0;
	cat_drops = cat_gaps = 0;
	return id < 0 ? -1 : 0;
}

static void cat_progress(struct rec_job *j, struct rec_result *r, struct catalog_progress *pr)
{
	pr->bytes_recorded = r->bytes_committed;
	pr->bytes_dropped  = r->bytes_dropped;
	pr->oldest         = j->mode == REC_MODE_RING ? r->oldest : 0;
	pr->trigger        = j->mode == REC_MODE_RING && (r->triggered || r->status == REC_STATUS_TRIGGERED) ?
		r->trigger_pos : CATALOG_NO_TRIGGER;
}

/* The recorder's drop log (input position, length) as the catalog's (data offset, length), in order,
 * up to the data offset `upto`. */
static void cat_drop_log(struct rec_result *r, uint64_t upto)
{
	uint64_t n = r->drops < RECORDER_LOG_DEPTH ? r->drops : RECORDER_LOG_DEPTH, pos, len;
	for (; cat_drops < n; cat_drops++) {
		recorder_log_index_write(cat_drops);
		recorder_log_index_read();     /* one CSR access: the log memory's read has settled */
		pos = recorder_log_pos_read();
		len = recorder_log_len_read();
		if (pos - cat_gaps > upto)
			return;
		catalog_rec_drop(pos - cat_gaps, len);
		cat_gaps += len;
	}
}

/* The end of the recording: from its final status r, or (r NULL) with nothing recorded, in `state`. */
static void cat_end(struct rec_job *j, struct rec_result *r, int state)
{
	struct catalog_result cr;
	memset(&cr, 0, sizeof(cr));
	cat_on = 0;
	if (!r) {
		cr.state     = state;
		cr.p.trigger = CATALOG_NO_TRIGGER;
		cr.err_port  = -1;
		catalog_rec_end(&cr);
		return;
	}
	cat_drop_log(r, ~0ULL);
	cr.state = !r->ok ? CATALOG_STATE_ERROR : r->aborted ? CATALOG_STATE_ABORTED : CATALOG_STATE_COMPLETE;
	cat_progress(j, r, &cr.p);
	cr.chunks_written = r->chunks;
	cr.err_port       = r->ok ? -1 : r->err_port;
	cr.err_status     = r->err_status;
	cr.err_lba        = r->err_lba;
	cr.drops_total    = r->drops > 0xffffffffULL ? 0xffffffffu : (uint32_t)r->drops;   /* 32-bit field: saturates */
	/* The recorder's own count of cycles from its start to its end. */
	if (cat_start) {
		cr.t_start = cat_start;
		cr.t_stop  = cat_start + r->cycles;
	} else {
		cr.t_stop  = literec_cycles();
		cr.t_start = cr.t_stop - r->cycles;
	}
	catalog_rec_end(&cr);
}

/* From rec_job_poll: the end, or a checkpoint when one is due. */
static void cat_poll(struct rec_job *j, struct rec_result *r)
{
	struct catalog_progress pr;
	int due;
	if (!cat_on || j->replay)
		return;
	/* (An arm clears `done`: an armed job is done when the run its start began ended.) */
	if (r->done && !r->busy) {
		cat_end(j, r, CATALOG_STATE_COMPLETE);
		return;
	}
	if (!(due = catalog_rec_due()))
		return;
	cat_progress(j, r, &pr);
	if (due == 2)
		cat_drop_log(r, pr.bytes_recorded);
	catalog_rec_checkpoint(&pr);
}

/* A recording that ended without a poll since (rec_start, then no rec_wait/rec_status) enters the
 * catalog before the next job or catalog command. */
void rec_catalog_settle(void)
{
	struct rec_result r;
	if (cat_on && cur_valid && !(recorder_status_read() & (1 << CSR_RECORDER_STATUS_BUSY_OFFSET))) {
		rec_job_poll(&cur_job, &r);
		/* An armed job no poll saw running: the recorder's status is still the previous run's. */
		if (cat_on)
			cat_end(&cur_job, NULL, CATALOG_STATE_ABORTED);
	}
}

/* rec_record/rec_start auto: the first LBA after the catalog's recordings (on a chunk). */
static int cat_place(struct rec_job *j)
{
	int r;
	rec_catalog_settle();
	/* Until stop without a size on exFAT: the largest free run (catalog_until_stop_region). */
	if (j->mode == REC_MODE_UNTIL_STOP && !j->bytes && (r = catalog_until_stop_region(j->mask, j->chunk, 1, &j->lba,
	    &j->bytes)))
		return r < 0 ? -1 : 0;
	return catalog_place_auto(j->mask, j->bytes, j->chunk, &j->lba);
}

/* rec_replay/play_start id=<n>: the recording's drives, LBA, chunk, length and seed (a wrapped ring:
 * its region from the oldest chunk, the checker's pattern from the oldest byte). Options that would
 * contradict the catalog are refused. */
static int cat_replay(const char *idv, int nb_params, char **params, struct rec_job *j)
{
	static const char *fixed[] = {"ports=", "chunk=", "seed=", "bytes=", "region=", "from="};
	struct catalog_job cj;
	uint64_t recorded, oldest;
	unsigned long v;
	int i, k;
	if (literec_parse_ulong(idv, &v) || v == 0 || v > 0xffffffffUL) {
		printf("Error: invalid id '%s': a recording id of the catalog (rec_list)\n", idv);
		return -1;
	}
	for (i = 1; i < nb_params; i++)
		for (k = 0; k < (int)(sizeof(fixed)/sizeof(fixed[0])); k++)
			if (!strncmp(params[i], fixed[k], strlen(fixed[k]))) {
				printf("Error: '%s': with id= the catalog gives ports, chunk, seed and length\n", params[i]);
				return -1;
			}
	rec_catalog_settle();
	if (catalog_lookup(v, (1u << NPORTS) - 1, &cj, &recorded, &oldest))
		return -1;
	if (recorded <= oldest) {
		printf("Error: recording %lu holds no data\n", v);
		return -1;
	}
	if (cj.source == CATALOG_SOURCE_USER && j->output == REC_OUTPUT_CHECKER) {
		printf("Error: recording %lu holds the user's stream, not the test pattern: play_start id=%lu output=user\n", v, v);
		return -1;
	}
	j->lba   = cj.lba;
	j->mask  = cj.mask;
	j->chunk = cj.chunk;
	j->bytes = recorded - oldest;
	j->seed  = cj.seed + (uint32_t)(oldest/4);     /* pattern word i is xs(xs(seed + i)) */
	j->region_bytes = 0;
	j->start_chunk  = 0;
	if (cj.mode == CATALOG_MODE_RING) {
		j->region_bytes = cj.bytes;
		j->start_chunk  = (oldest/cj.chunk) % (cj.bytes/cj.chunk);
	}
	return 0;
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

static uint32_t ctrl_config(struct rec_job *j)
{
	uint32_t c = 0;
	int end_on_last = j->replay ? 0 : 1;
#ifdef CSR_RECSTREAM_BASE
	/* The pattern source of a fixed-size recording is as long as the recording: the size ends it;
	 * a source that ends earlier (stop=) ends it with its `last`. */
	if (!j->replay && j->input == REC_INPUT_PATTERN && !j->stop_bytes)
		end_on_last = 0;
#endif
	c |= (j->replay ? 1 : 0) << CSR_RECORDER_CTRL_DIRECTION_OFFSET;
	c |= (uint32_t)j->mode << CSR_RECORDER_CTRL_MODE_OFFSET;
	c |= (j->drop ? 1 : 0) << CSR_RECORDER_CTRL_DROP_OFFSET;
	c |= (uint32_t)(j->input < 0 ? 0 : j->input) << CSR_RECORDER_CTRL_INPUT_SEL_OFFSET;
	c |= (uint32_t)(j->output < 0 ? 0 : j->output) << CSR_RECORDER_CTRL_OUTPUT_SEL_OFFSET;
	c |= end_on_last << CSR_RECORDER_CTRL_END_ON_LAST_OFFSET;
	c |= (j->packet_bytes ? 1 : 0) << CSR_RECORDER_CTRL_CHECK_LAST_OFFSET;
	c |= (j->flush_after ? 1 : 0) << CSR_RECORDER_CTRL_FLUSH_AFTER_OFFSET;
#ifdef CSR_RECORDER_CTRL_SPILL_OFFSET
	/* A source that can wait (lossless) waits for an on-chip slot; one that cannot (policy=drop, or
	 * the strict test source), or a job that asked for a DRAM buffer (buffer=), spills its chunks to
	 * DRAM slots while the drives fall behind. */
	if (j->spill == REC_SPILL_ON || (j->spill == REC_SPILL_AUTO && (j->drop || j->buffer_bytes ||
		(j->strict && !j->replay && j->input == REC_INPUT_PATTERN))))
		c |= 1 << CSR_RECORDER_CTRL_SPILL_OFFSET;
#endif
	/* Input outside the recording: the test source's surplus is always discarded (counted), the
	 * user's waits unless surplus=flush. */
	if (j->surplus == REC_SURPLUS_FLUSH || (j->surplus == REC_SURPLUS_AUTO && !j->replay && j->input == REC_INPUT_PATTERN))
		c |= 1 << CSR_RECORDER_CTRL_FLUSH_SURPLUS_OFFSET;
	return c;
}

static void configure(struct rec_job *j)
{
	uint64_t trim_rows = trim_rows_of(j, j->nports);
	recorder_ring_word_write((PCIE_DRAM_WINDOW_BASE - MAIN_RAM_BASE)/WORD);
	recorder_ring_bus_write(PCIE_DRAM_WINDOW_BASE);
	recorder_ring_slots_write(j->ring_slots);
	recorder_chunk_words_write(j->chunk/WORD);
	recorder_chunk_bytes_write(j->chunk);
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
		recorder_ctrl_write(ctrl_config(j) | (1 << CSR_RECORDER_CTRL_FLUSH_SURPLUS_OFFSET));
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
	if (!j->replay && cat_begin(j))
		return -1;
	cur_job = *j;
	cur_valid = 1;
	set_engines(j->mask, NVME_SRC_EXT);
	configure(j);
	c = ctrl_config(j);
#ifdef CSR_RECSTREAM_BASE
	/* The pattern source starts in the cycle the recording starts (gen_on_run). */
	if (!j->replay && j->input == REC_INPUT_PATTERN)
		recstream_ctrl_write((j->strict << CSR_RECSTREAM_CTRL_STRICT_OFFSET) |
			(1 << CSR_RECSTREAM_CTRL_GEN_ON_RUN_OFFSET));
	else
		recstream_ctrl_write(1 << CSR_RECSTREAM_CTRL_GEN_STOP_OFFSET);
#endif
	recorder_ctrl_write(c);
	if (j->arm) {
		/* One hardware start: the recorder forgets the arm when the start is taken or the run ends. */
		recorder_ctrl_write(c | (1 << CSR_RECORDER_CTRL_ARM_OFFSET));
		printf("rec_start: armed, waiting for the hardware start input\n");
		return 0;
	}
	t0 = literec_cycles();
	cat_start = t0;
	recorder_ctrl_write(c | (1 << CSR_RECORDER_CTRL_START_OFFSET));
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
		if (cat_on && !j->replay)
			cat_end(j, NULL, CATALOG_STATE_ERROR);
		return -1;
	}
	return 0;
}

void rec_flush_surplus(int on)
{
	uint32_t c = ctrl_config(&cur_job) & ~(1u << CSR_RECORDER_CTRL_FLUSH_SURPLUS_OFFSET);
	recorder_ctrl_write(c | ((on ? 1u : 0u) << CSR_RECORDER_CTRL_FLUSH_SURPLUS_OFFSET));
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
	recorder_ctrl_write(ctrl_config(&j) | (1 << CSR_RECORDER_CTRL_START_OFFSET));
	t0 = literec_cycles();
	do
		st = recorder_status_read();
	while (!STATUS_BIT(st, RUNNING) && STATUS_BIT(st, BUSY) && literec_cycles() - t0 < literec_us_to_cycles(10000));
	if (STATUS_BIT(st, RUNNING)) {
		/* Accepted: it must not run, end it at once. */
		recorder_ctrl_write(ctrl_config(&j) | (1 << CSR_RECORDER_CTRL_ABORT_OFFSET));
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
	recorder_ctrl_write(ctrl_config(j) | (1 << CSR_RECORDER_CTRL_SNAPSHOT_OFFSET));
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
	cat_poll(j, r);
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
	recorder_ctrl_write(ctrl_config(j) | (1 << CSR_RECORDER_CTRL_SNAPSHOT_OFFSET));
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
			recorder_ctrl_write(ctrl_config(j) | (1 << (j->abort_bytes ? CSR_RECORDER_CTRL_ABORT_OFFSET :
				CSR_RECORDER_CTRL_STOP_OFFSET)));
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
		} else if (cat_on && catalog_rec_due())
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

/* Argument parsing ------------------------------------------------------------------------------- */

/* Sizes in MiB: up to 1 PiB (8 drives of 32 TB are 256 TB). */
#define REC_MAX_MIB (1UL << 30)

static int parse_mib(const char *what, const char *val, uint64_t *bytes, int zero_ok)
{
	unsigned long x;
	if (literec_parse_ulong(val, &x) || (!zero_ok && x == 0) || x > REC_MAX_MIB) {
		printf("Error: invalid %s '%s' MiB: %s..%lu\n", what, val, zero_ok ? "0" : "1", REC_MAX_MIB);
		return -1;
	}
	*bytes = (uint64_t)x << 20;
	return 0;
}

/* Options shared by every command; returns 1 if the option was one of them, -1 on an error. */
static int parse_common(const char *key, int klen, const char *val, struct rec_job *j)
{
	unsigned long long v;
	unsigned long x;
#define KEY(k) (klen == (int)strlen(k) && !strncmp(key, k, klen))
	if (KEY("seed")) {
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
	} else if (KEY("staging")) {
		if (!strcmp(val, "auto"))
			j->staging = REC_STAGING_AUTO;
		else if (!strcmp(val, "off"))
			j->staging = REC_STAGING_OFF;
		else {
			printf("Error: invalid staging '%s': auto (the on-chip slots) or off (the DRAM ring alone)\n", val);
			return -1;
		}
	} else if (KEY("spill")) {
		if (!strcmp(val, "auto"))
			j->spill = REC_SPILL_AUTO;
		else if (!strcmp(val, "0"))
			j->spill = REC_SPILL_OFF;
		else if (!strcmp(val, "1"))
			j->spill = REC_SPILL_ON;
		else {
			printf("Error: invalid spill '%s': auto (to DRAM slots under policy=drop), 0 or 1\n", val);
			return -1;
		}
	} else if (KEY("buffer")) {
		if (!strcmp(val, "all"))
			j->buffer_bytes = REC_BUFFER_ALL;
		else if (literec_parse_ulong(val, &x) || x == 0 || x > REC_MAX_MIB) {
			printf("Error: invalid buffer '%s' MiB: 1..%lu, or all (the whole DRAM window)\n", val, REC_MAX_MIB);
			return -1;
		} else
			j->buffer_bytes = (uint64_t)x << 20;
	} else if (KEY("qd")) {
		if (literec_parse_ulong(val, &j->qd) || j->qd == 0 || j->qd > RECORDER_SLOTS) {
			printf("Error: invalid qd '%s': chunk commands in flight, 1..%d\n", val, RECORDER_SLOTS);
			return -1;
		}
	} else
		return 0;
#undef KEY
	return 1;
}

/* Record options; returns 1 if taken, 0 if unknown, -1 on an error. */
static int parse_record_opt(const char *key, int klen, const char *val, struct rec_job *j, unsigned long mib)
{
	unsigned long x;
#define KEY(k) (klen == (int)strlen(k) && !strncmp(key, k, klen))
	if (KEY("rate")) {
		if (literec_parse_ulong(val, &j->rate_mbps)) {
			printf("Error: invalid rate '%s' MB/s: a number (0: as fast as possible)\n", val);
			return -1;
		}
	} else if (KEY("strict")) {
		if (literec_parse_ulong(val, &x) || x > 1) {
			printf("Error: invalid strict '%s': 0 (the source waits) or 1 (beats not taken are lost)\n", val);
			return -1;
		}
		j->strict = x;
	} else if (KEY("input")) {
		if (!strcmp(val, "pattern"))
			j->input = REC_INPUT_PATTERN;
		else if (!strcmp(val, "user"))
			j->input = REC_INPUT_USER;
		else {
			printf("Error: invalid input '%s': pattern (the test stream) or user (the user's stream port)\n", val);
			return -1;
		}
		if (j->input < 0) {
			printf("Error: input=%s: this build has no such input (inputs:%s%s)\n", val,
				REC_INPUT_PATTERN >= 0 ? " pattern" : "", REC_INPUT_USER >= 0 ? " user" : "");
			return -1;
		}
	} else if (KEY("policy")) {
		if (!strcmp(val, "lossless"))
			j->drop = 0;
		else if (!strcmp(val, "drop"))
			j->drop = 1;
		else {
			printf("Error: invalid policy '%s': lossless (back-pressure the input) or drop (drop and count what finds the ring full)\n", val);
			return -1;
		}
	} else if (KEY("post")) {
		if (parse_mib("post", val, &j->post_bytes, 1))
			return -1;
	} else if (KEY("trim-ahead")) {
		if (parse_mib("trim-ahead", val, &j->trim_bytes, 1))
			return -1;
	} else if (KEY("flush")) {
		if (literec_parse_ulong(val, &x) || x > 1) {
			printf("Error: invalid flush '%s': 1 (NVMe Flush after the recording) or 0\n", val);
			return -1;
		}
		j->flush_after = x;
	} else if (KEY("surplus")) {
		if (!strcmp(val, "keep"))
			j->surplus = REC_SURPLUS_KEEP;
		else if (!strcmp(val, "flush"))
			j->surplus = REC_SURPLUS_FLUSH;
		else {
			printf("Error: invalid surplus '%s': keep (input outside a recording waits) or flush (it is discarded and counted)\n", val);
			return -1;
		}
	} else if (KEY("arm")) {
		if (literec_parse_ulong(val, &x) || x > 1) {
			printf("Error: invalid arm '%s': 1 (the hardware start input starts the recording) or 0\n", val);
			return -1;
		}
		j->arm = x;
	} else if (KEY("stop") || KEY("abort")) {
		if (literec_parse_ulong(val, &x) || x == 0 || x >= mib) {
			printf("Error: invalid %.*s '%s' MiB: 1..%lu (less than the recording)\n", klen, key, val, mib - 1);
			return -1;
		}
		if (KEY("stop"))
			j->stop_bytes = (uint64_t)x << 20;
		else
			j->abort_bytes = (uint64_t)x << 20;
	} else
		return 0;
#undef KEY
	return 1;
}

static int parse_replay_opt(const char *key, int klen, const char *val, struct rec_job *j)
{
	unsigned long long v;
#define KEY(k) (klen == (int)strlen(k) && !strncmp(key, k, klen))
	if (KEY("output")) {
		if (!strcmp(val, "checker"))
			j->output = REC_OUTPUT_CHECKER;
		else if (!strcmp(val, "user"))
			j->output = REC_OUTPUT_USER;
		else {
			printf("Error: invalid output '%s': checker (the test checker) or user (the user's stream port)\n", val);
			return -1;
		}
		if (j->output < 0) {
			printf("Error: output=%s: this build has no such output (outputs:%s%s)\n", val,
				REC_OUTPUT_CHECKER >= 0 ? " checker" : "", REC_OUTPUT_USER >= 0 ? " user" : "");
			return -1;
		}
	} else if (KEY("bytes")) {
		if (literec_parse_u64(val, &v) || v == 0) {
			printf("Error: invalid bytes '%s': the exact replay length, 1 or more\n", val);
			return -1;
		}
		j->bytes = v;
	} else if (KEY("region")) {
		if (parse_mib("region", val, &j->region_bytes, 0))
			return -1;
	} else if (KEY("from")) {
		if (literec_parse_u64(val, &v)) {
			printf("Error: invalid from '%s': the first chunk of the region to replay (ring order)\n", val);
			return -1;
		}
		j->start_chunk = v;
	} else
		return 0;
#undef KEY
	return 1;
}

/* Options set with rec_set apply to every following rec_start/play_start/rec_record/rec_replay
 * (a BIOS command line holds 63 characters). */
#define REC_SET_MAX 12
static char rec_set_opts[REC_SET_MAX][32];
static int rec_set_n;

static int apply_opt(const char *opt, int replay, unsigned long mib, const char *usage, struct rec_job *j, int from_set)
{
	const char *eq = strchr(opt, '=');
	const char *val = eq ? eq + 1 : "";
	int klen = eq ? (int)(eq - opt) : (int)strlen(opt), r;
	if (!eq) {
		printf("Error: '%s': options are key=value\n%s\n", opt, usage);
		return -1;
	}
	r = parse_common(opt, klen, val, j);
	if (r == 0)
		r = replay ? parse_replay_opt(opt, klen, val, j) : parse_record_opt(opt, klen, val, j, mib);
	if (r < 0)
		return -1;
	if (r == 0) {
		if (from_set)
			return 0;      /* a rec_set option of the other direction */
		printf("Error: unknown option '%.*s'\n%s\n", klen, opt, usage);
		return -1;
	}
	return 0;
}

/* cmd <lba|auto> <size> [key=value ...]; size: MiB, or (record) until-stop[=MiB] / ring=MiB;
 * replay: cmd <lba> <size> | id=<n> [key=value ...]. */
static int parse_args(int nb_params, char **params, int replay, int extended, const char *usage, struct rec_job *j)
{
	unsigned long long v;
	unsigned long mib = 0;
	int i, first = 2, place = 0;
	const char *id = NULL;
	rec_job_init(j);
	j->replay = replay;
	if (replay && nb_params >= 1 && !strncmp(params[0], "id=", 3)) {
		id = params[0] + 3;
		first = 1;
	} else if (nb_params < 2) {
		printf("%s\n", usage);
		return -1;
	}
	if (!id && !replay && !strcmp(params[0], "auto"))
		place = 1;
	else if (!id && literec_parse_u64(params[0], &v)) {
		printf("Error: invalid LBA '%s': a number%s\n", params[0],
			replay ? "" : ", or auto (after the last recording of the catalog)");
		return -1;
	} else if (!id)
		j->lba = v;
	if (!id && extended && !replay && !strncmp(params[1], "until-stop", 10)) {
		j->mode = REC_MODE_UNTIL_STOP;
		if (params[1][10] == '=') {
			if (parse_mib("until-stop region", params[1] + 11, &j->bytes, 0))
				return -1;
		} else if (params[1][10]) {
			printf("Error: invalid size '%s': MiB, until-stop[=<MiB>] or ring=<MiB>\n", params[1]);
			return -1;
		}
		mib = ~0UL;
	} else if (!id && extended && !replay && !strncmp(params[1], "ring=", 5)) {
		j->mode = REC_MODE_RING;
		if (parse_mib("ring", params[1] + 5, &j->bytes, 0))
			return -1;
		mib = ~0UL;
	} else if (!id) {
		if (literec_parse_ulong(params[1], &mib) || mib == 0 || mib > REC_MAX_MIB) {
			printf("Error: invalid size '%s' MiB: 1..%lu%s\n", params[1], REC_MAX_MIB,
				extended && !replay ? ", until-stop[=<MiB>] or ring=<MiB>" : "");
			return -1;
		}
		j->bytes = (uint64_t)mib << 20;
	}
	for (i = 0; i < rec_set_n; i++)
		if (apply_opt(rec_set_opts[i], replay, mib, usage, j, 1))
			return -1;
	for (i = first; i < nb_params; i++) {
		if (!extended && (!strncmp(params[i], "input=", 6) || !strncmp(params[i], "policy=", 7) ||
			!strncmp(params[i], "output=", 7))) {
			printf("Error: unknown option '%.*s'\n%s\n", (int)(strchr(params[i], '=') - params[i]), params[i], usage);
			return -1;
		}
		if (apply_opt(params[i], replay, mib, usage, j, 0))
			return -1;
	}
	if (j->stop_bytes && j->abort_bytes) {
		printf("Error: stop= and abort= exclude each other\n");
		return -1;
	}
	if (j->post_bytes && j->mode != REC_MODE_RING) {
		printf("Error: post= is for ring recordings (ring=<MiB>)\n");
		return -1;
	}
	if (j->mode == REC_MODE_RING && j->post_bytes > j->bytes) {
		printf("Error: post=%llu MiB exceeds the ring of %llu MiB\n", (unsigned long long)(j->post_bytes >> 20),
			(unsigned long long)(j->bytes >> 20));
		return -1;
	}
	if (id && cat_replay(id, nb_params, params, j))
		return -1;
	if (place && cat_place(j))
		return -1;
	if (!place && !id && !replay && j->mode == REC_MODE_UNTIL_STOP && !j->bytes) {
		rec_catalog_settle();
		if (catalog_until_stop_region(j->mask, j->chunk, 0, &j->lba, &j->bytes) < 0)
			return -1;
	}
	return rec_job_check(j);
}

/* Printing -------------------------------------------------------------------------------------- */

static void print_fixed3(uint64_t v) { literec_print_fixed(v, 3); }

/* The ring's tiers, appended to a RESULT line: on-chip slots per port and DRAM slots, their peaks,
 * the bytes that went through DRAM. */
static void rec_print_tiers(struct rec_job *j, struct rec_result *r)
{
	printf(" onchip_slots=%lu dram_slots=%lu peak_onchip=%llu peak_dram=%llu bytes_spilled=%llu",
		r->onchip_slots*j->nports, j->replay && r->onchip_slots ? 0UL : j->ring_slots,
		(unsigned long long)r->peak_onchip, (unsigned long long)r->peak_dram, (unsigned long long)r->bytes_spilled);
}

static void print_record(struct rec_job *j, struct rec_result *r)
{
	printf("rec_record: %llu bytes (%llu chunks of %lu KiB) to ", (unsigned long long)r->bytes,
		(unsigned long long)r->chunks, j->chunk >> 10);
	rec_print_ports(j->mask);
	printf(" from LBA %llu in %llu us: ", (unsigned long long)j->lba,
		(unsigned long long)(literec_cycles_to_us(r->cycles)));
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	printf(" MB/s; input %llu bytes, %llu beats lost, %llu stall cycles, ring peak %u chunks, %s\n",
		(unsigned long long)r->bytes_in, (unsigned long long)r->lost_beats, (unsigned long long)r->stalls,
		r->ring_peak, rec_status_str(r->status));
	if (r->dropped)
		printf("rec_record: abort dropped the last %llu bytes (a partly filled chunk)\n", (unsigned long long)r->dropped);
	printf("RESULT name=rec_record ok=1 lba=%llu bytes=%llu chunks=%llu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)j->lba, (unsigned long long)r->bytes, (unsigned long long)r->chunks, j->chunk,
		j->nports, (unsigned long long)r->cycles);
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	printf(" bytes_in=%llu lost_beats=%llu stalls=%llu ring_peak=%u aborted=%d dropped=%llu early_last=%llu"
		" status=%d bytes_kept=%llu bytes_dropped=%llu",
		(unsigned long long)r->bytes_in, (unsigned long long)r->lost_beats, (unsigned long long)r->stalls, r->ring_peak,
		r->aborted, (unsigned long long)r->dropped, (unsigned long long)r->early_last, r->status,
		(unsigned long long)r->bytes_kept, (unsigned long long)r->bytes_dropped);
	rec_print_tiers(j, r);
	printf("\n");
}

/* Commands -------------------------------------------------------------------------------------- */

static const char *rec_usage_record =
	"rec_record <lba|auto> <mib> [seed=N] [rate=MBps] [strict=0|1] [ports=all|N] [chunk=KiB] [qd=N] [stop=MiB] [abort=MiB] [flush=0|1] [staging=auto|off] [spill=auto|0|1]";
static const char *rec_usage_replay =
	"rec_replay <lba> <mib> | id=<n> [seed=N] [ports=all|N] [chunk=KiB] [qd=N] [bytes=N] [region=MiB] [from=chunk] [staging=auto|off]";
static const char *rec_usage_start =
	"rec_start <lba|auto> <mib|until-stop[=<mib>]|ring=<mib>> [input=pattern|user] [policy=lossless|drop] [post=<mib>] "
	"[trim-ahead=<mib>] [flush=0|1] [surplus=keep|flush] [arm=1] [buffer=<mib>|all] [staging=auto|off] [spill=auto|0|1] [chunk=KiB] [ports=all|N] [qd=N] [seed=N] [rate=MBps] [strict=0|1]";
static const char *rec_usage_play =
	"play_start <lba> <mib> | id=<n> [output=checker|user] [bytes=N] [region=<mib>] [from=<chunk>] [chunk=KiB] [ports=all|N] [qd=N] [seed=N]";

static void rec_record_handler(int nb_params, char **params)
{
	struct rec_job j;
	struct rec_result r;
	if (parse_args(nb_params, params, 0, 0, rec_usage_record, &j))
		return;
	if (REC_INPUT_PATTERN < 0) {
		printf("Error: rec_record records the test pattern: this build has none (use rec_start input=user)\n");
		return;
	}
	if (rec_record_run(&j, &r)) {
		printf("RESULT name=rec_record ok=0 chunks=%llu bytes_in=%llu lost_beats=%llu status=%d\n",
			(unsigned long long)r.chunks, (unsigned long long)r.bytes_in, (unsigned long long)r.lost_beats, r.status);
		return;
	}
	print_record(&j, &r);
}
define_literec_command(rec_record, rec_record_handler,
	"Record the test stream to the SSDs: rec_record <lba|auto> <mib> [seed=] [rate=MBps] [strict=] [ports=] [chunk=KiB] [qd=] [stop=MiB] [abort=MiB]");

static void print_replay(struct rec_job *j, struct rec_result *r)
{
	uint64_t expect = ((j->check_bytes ? j->check_bytes : j->bytes) + WORD - 1)/WORD;
	printf("rec_replay: %llu bytes (%llu chunks of %lu KiB) from ", (unsigned long long)r->bytes,
		(unsigned long long)r->chunks, j->chunk >> 10);
	rec_print_ports(j->mask);
	printf(" at LBA %llu in %llu us: ", (unsigned long long)j->lba,
		(unsigned long long)(literec_cycles_to_us(r->cycles)));
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	if (j->output == REC_OUTPUT_CHECKER) {
		printf(" MB/s; pattern check (seed %lu): %llu word errors", (unsigned long)j->seed, (unsigned long long)r->errors);
		if (r->errors)
			printf(", first at byte %llu", (unsigned long long)r->first_error);
		if (r->checked_beats != expect)
			printf(", length error: %llu of %llu words", (unsigned long long)r->checked_beats, (unsigned long long)expect);
	} else
		printf(" MB/s to the user's output");
	printf("\n");
	printf("RESULT name=rec_replay ok=1 lba=%llu bytes=%llu chunks=%llu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)j->lba, (unsigned long long)r->bytes, (unsigned long long)r->chunks, j->chunk,
		j->nports, (unsigned long long)r->cycles);
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	printf(" errors=%llu first_error=%llu checked_beats=%llu extra_beats=%llu last_at=%llu", (unsigned long long)r->errors,
		(unsigned long long)(r->errors ? r->first_error : 0),
		(unsigned long long)r->checked_beats, (unsigned long long)r->extra_beats, (unsigned long long)r->last_at);
	rec_print_tiers(j, r);
	printf("\n");
}

static void rec_replay_handler(int nb_params, char **params)
{
	struct rec_job j;
	struct rec_result r;
	if (parse_args(nb_params, params, 1, 0, rec_usage_replay, &j))
		return;
	if (REC_OUTPUT_CHECKER < 0) {
		printf("Error: rec_replay checks the test pattern: this build has no checker (use play_start output=user)\n");
		return;
	}
	if (rec_replay_run(&j, &r)) {
		printf("RESULT name=rec_replay ok=0 chunks=%llu bytes=%llu errors=%llu status=%d\n",
			(unsigned long long)r.chunks, (unsigned long long)r.bytes, (unsigned long long)r.errors, r.status);
		return;
	}
	print_replay(&j, &r);
}
define_literec_command(rec_replay, rec_replay_handler,
	"Replay from the SSDs into the pattern checker: rec_replay <lba> <mib>|id=<n> [seed=] [ports=] [chunk=KiB] [qd=] [bytes=] [region=] [from=]");

/* The configuration as the recorder holds it (read back: nothing truncated on the way). */
static void print_config(const char *name)
{
	printf("RESULT name=%s first_lba=%llu last_lba=%llu chunk_bytes=%lu chunks=%llu bytes=%llu capacity=%llu rows=%llu "
		"ring_slots=%lu post_bytes=%llu trim_rows=%lu port_mask=0x%lx\n", name,
		(unsigned long long)recorder_first_lba_read(), (unsigned long long)recorder_last_lba_read(),
		(unsigned long)recorder_chunk_bytes_read(), (unsigned long long)recorder_chunks_read(),
		(unsigned long long)(recorder_chunks_read()*recorder_chunk_bytes_read()),
		(unsigned long long)recorder_capacity_read(), (unsigned long long)recorder_rows_read(),
		(unsigned long)recorder_ring_slots_read(), (unsigned long long)recorder_post_bytes_read(),
		(unsigned long)recorder_trim_rows_read(), (unsigned long)recorder_port_mask_read());
}

static void rec_start_handler(int nb_params, char **params)
{
	struct rec_job j;
	if (parse_args(nb_params, params, 0, 1, rec_usage_start, &j))
		return;
	if (rec_job_start(&j))
		return;
	print_config("rec_start");
	printf("rec_start: %s recording from %s input, %s, to ", mode_str(&j),
		j.input == REC_INPUT_USER ? "the user's" : "the pattern", j.drop ? "drop policy" : "lossless");
	rec_print_ports(j.mask);
	printf(" LBA %llu..%llu (%llu rows of %lu KiB, %llu MiB)%s\n", (unsigned long long)j.lba,
		(unsigned long long)(j.last_lba + j.chunk_blocks - 1), (unsigned long long)j.rows, j.chunk >> 10,
		(unsigned long long)(j.capacity*j.chunk >> 20), j.arm ? ", armed" : "");
}
define_literec_command(rec_start, rec_start_handler,
	"Start a recording: rec_start <lba|auto> <mib|until-stop[=mib]|ring=mib> [input=] [policy=] [post=] [trim-ahead=] [flush=] [arm=] ...");

static void play_start_handler(int nb_params, char **params)
{
	struct rec_job j;
	if (parse_args(nb_params, params, 1, 1, rec_usage_play, &j))
		return;
	if (rec_job_start(&j))
		return;
	print_config("play_start");
	printf("play_start: %llu bytes from ", (unsigned long long)j.bytes);
	rec_print_ports(j.mask);
	printf(" LBA %llu to the %s\n", (unsigned long long)j.lba, j.output == REC_OUTPUT_USER ? "user's output" : "checker");
}
define_literec_command(play_start, play_start_handler,
	"Start a replay: play_start <lba> <mib>|id=<n> [output=checker|user] [bytes=N] [region=mib] [from=chunk] ...");

static int need_job(void)
{
	if (!cur_valid) {
		printf("Error: no recording or replay was started (rec_start / play_start)\n");
		return -1;
	}
	return 0;
}

static void pulse(int offset, const char *what)
{
	uint32_t st = recorder_status_read();
	if (need_job())
		return;
	if (!STATUS_BIT(st, BUSY)) {
		if (offset == CSR_RECORDER_CTRL_ABORT_OFFSET && STATUS_BIT(st, ARMED)) {
			recorder_ctrl_write(ctrl_config(&cur_job) | (1 << CSR_RECORDER_CTRL_DISARM_OFFSET));
			printf("%s: disarmed (the hardware start input no longer starts a run)\n", what);
			return;
		}
		printf("%s: the recorder is not running (nothing to do)\n", what);
		return;
	}
	recorder_ctrl_write(ctrl_config(&cur_job) | (1 << offset));
	printf("%s: sent\n", what);
}

int rec_job_abort(void)
{
	struct rec_result r;
	if (!cur_valid || !STATUS_BIT(recorder_status_read(), BUSY))
		return 0;
	recorder_ctrl_write(ctrl_config(&cur_job) | (1 << CSR_RECORDER_CTRL_ABORT_OFFSET));
	/* The commands in flight complete (or time out in the engine) within its timeout. */
	if (rec_job_wait(&cur_job, &r, 1000000, 0))
		return 0;
	printf("Error: the recorder did not end within 1 s of modeled time after an abort\n");
	return -1;
}

static void rec_stop_handler(int nb_params, char **params) { pulse(CSR_RECORDER_CTRL_STOP_OFFSET, "rec_stop"); }
define_literec_command(rec_stop, rec_stop_handler, "Stop the recording (the partly filled chunk is padded with zeros)");

static void rec_abort_handler(int nb_params, char **params) { pulse(CSR_RECORDER_CTRL_ABORT_OFFSET, "rec_abort"); }
define_literec_command(rec_abort, rec_abort_handler, "Abort the recording (the partly filled chunk is dropped)");

static void rec_trigger_handler(int nb_params, char **params)
{
	if (need_job())
		return;
	if (cur_job.replay || cur_job.mode != REC_MODE_RING) {
		printf("Error: rec_trigger is for ring recordings (rec_start ... ring=<mib> post=<mib>)\n");
		return;
	}
	pulse(CSR_RECORDER_CTRL_TRIGGER_OFFSET, "rec_trigger");
}
define_literec_command(rec_trigger, rec_trigger_handler, "Ring recording: the event (the recording ends post= MiB later)");

static void print_status(struct rec_job *j, struct rec_result *r)
{
	const char *state = r->busy ? "running" : STATUS_BIT(recorder_status_read(), ARMED) ? "armed" :
		r->done ? "done" : "idle";
	uint64_t bytes = j->replay ? r->bytes : r->bytes_committed;
	int temp = rec_temperature(j->mask);
	printf("recorder: %s %s, %s", mode_str(j), state, r->busy ? "in progress" : rec_status_str(r->status));
	if (r->status == REC_STATUS_ERR_DEVICE || r->status == REC_STATUS_ERR_TIMEOUT)
		printf(" (nvme%d, LBA %llu: %s)", r->err_port, (unsigned long long)r->err_lba, nvme_status_str(r->err_status));
	printf("\n  ");
	if (!j->replay) {
		printf("in %llu B = kept %llu B + dropped %llu B (%llu drop events); kept = written %llu B + buffered %llu B\n  ",
			(unsigned long long)r->bytes_in, (unsigned long long)r->bytes_kept, (unsigned long long)r->bytes_dropped,
			(unsigned long long)r->drops, (unsigned long long)r->bytes_committed, (unsigned long long)r->bytes_buffered);
	} else
		printf("out %llu B, ", (unsigned long long)r->bytes);
	print_fixed3(rec_kbps(bytes, r->cycles));
	printf(" MB/s over %llu us, ring %llu of %lu chunks (peak %llu), %llu stall cycles, drive %d C\n",
		(unsigned long long)(literec_cycles_to_us(r->cycles)), (unsigned long long)r->level, j->ring_slots,
		(unsigned long long)r->peak, (unsigned long long)r->stalls, temp);
	if (!j->replay && j->mode == REC_MODE_RING)
		printf("  ring: %llu wraps, trigger %s at byte %llu, oldest byte %llu, last chunk at byte %llu of nvme%d\n",
			(unsigned long long)r->wraps, r->triggered ? "came" : "not yet", (unsigned long long)r->trigger_pos,
			(unsigned long long)r->oldest, (unsigned long long)r->addr_last, (int)recorder_addr_last_port_read());
	printf("RESULT name=rec_status state=%s status=%d mode=%s bytes_in=%llu bytes_committed=%llu bytes_dropped=%llu "
		"bytes_buffered=%llu bytes_kept=%llu drops=%llu overflow=%d level=%llu peak=%llu ring_slots=%lu cycles=%llu mbps=",
		state, r->status, mode_str(j), (unsigned long long)r->bytes_in, (unsigned long long)r->bytes_committed,
		(unsigned long long)r->bytes_dropped, (unsigned long long)r->bytes_buffered, (unsigned long long)r->bytes_kept,
		(unsigned long long)r->drops, r->overflow, (unsigned long long)r->level, (unsigned long long)r->peak,
		j->ring_slots, (unsigned long long)r->cycles);
	print_fixed3(rec_kbps(bytes, r->cycles));
	printf(" chunks=%llu bytes_out=%llu stalls=%llu surplus=%llu keep_errors=%llu wraps=%llu trigger=%llu oldest=%llu "
		"addr_last=%llu addr_last_port=%d temperature_c=%d error=%d err_status=0x%04lx trims=%llu trimmed_rows=%llu requested=%llu",
		(unsigned long long)r->chunks, (unsigned long long)(j->replay ? r->bytes : 0), (unsigned long long)r->stalls,
		(unsigned long long)r->surplus, (unsigned long long)r->keep_errors, (unsigned long long)r->wraps,
		(unsigned long long)r->trigger_pos, (unsigned long long)r->oldest, (unsigned long long)r->addr_last,
		(int)recorder_addr_last_port_read(), temp, r->status >= REC_STATUS_ERR_DEVICE,
		(unsigned long)r->err_status, (unsigned long long)LIVE64(RECORDER, TRIMS),
		(unsigned long long)LIVE64(RECORDER, TRIMMED_ROWS), (unsigned long long)LIVE64(RECORDER, REQUESTED));
	rec_print_tiers(j, r);
	printf("\n");
}

static void rec_status_handler(int nb_params, char **params)
{
	struct rec_result r;
	if (need_job())
		return;
	rec_job_poll(&cur_job, &r);
	if (r.done && !r.busy)
		set_engines(cur_job.mask, NVME_SRC_CPU);
	print_status(&cur_job, &r);
}
define_literec_command(rec_status, rec_status_handler, "Recorder status, live or at the end (accounting, ring, drive)");

static void rec_wait_handler(int nb_params, char **params)
{
	struct rec_result r;
	unsigned long ms = 0;
	if (nb_params > 0 && (literec_parse_ulong(params[0], &ms) || ms == 0)) {
		printf("Error: invalid timeout '%s' ms: modeled milliseconds, 1 or more (none: until the end)\n", params[0]);
		return;
	}
	if (need_job())
		return;
	if (rec_job_wait(&cur_job, &r, (uint64_t)ms*1000, 50000))
		printf("rec_wait: %s %s\n", mode_str(&cur_job), rec_status_str(r.status));
	else if (ms)
		printf("rec_wait: still running after %lu ms\n", ms);
	printf("RESULT name=rec_wait done=%d status=%d cycles=%llu\n", r.done && !r.busy, r.status,
		(unsigned long long)r.cycles);
}
define_literec_command(rec_wait, rec_wait_handler, "Wait for the recording/replay to end: rec_wait [timeout_ms] (a key stops waiting)");

static void rec_drops_handler(int nb_params, char **params)
{
	unsigned long first = 0, count = 16, i;
	uint64_t drops;
	if (need_job())
		return;
	if ((nb_params > 0 && literec_parse_ulong(params[0], &first)) ||
		(nb_params > 1 && (literec_parse_ulong(params[1], &count) || count == 0))) {
		printf("rec_drops [first] [count]   (the drop log: position and length of each drop event)\n");
		return;
	}
	drops = LIVE64(RECORDER, DROPS);
	printf("rec_drops: %llu drop event(s), the log holds the first %d\n", (unsigned long long)drops, RECORDER_LOG_DEPTH);
	for (i = first; i < first + count && i < drops && i < RECORDER_LOG_DEPTH; i++) {
		recorder_log_index_write(i);
		recorder_log_index_read();     /* one CSR access: the log memory's read has settled */
		printf("RESULT name=rec_drop index=%lu pos=%llu len=%llu abort=%d\n", i,
			(unsigned long long)recorder_log_pos_read(), (unsigned long long)recorder_log_len_read(),
			(int)recorder_log_abort_read());
	}
	{
		uint64_t logged = drops < RECORDER_LOG_DEPTH ? drops : RECORDER_LOG_DEPTH;
		if (i < logged)
			printf("rec_drops: entries %lu-%lu shown, %llu more in the log: rec_drops %lu %llu shows them\n",
				first, i ? i - 1 : 0, (unsigned long long)(logged - i), i, (unsigned long long)(logged - i));
	}
}
define_literec_command(rec_drops, rec_drops_handler, "Drop log: rec_drops [first] [count]");

static void rec_set_handler(int nb_params, char **params)
{
	struct rec_job j;
	int i, r;
	if (nb_params == 1 && !strcmp(params[0], "clear")) {
		rec_set_n = 0;
		printf("rec_set: cleared\n");
		return;
	}
	for (i = 0; i < nb_params; i++) {
		const char *eq = strchr(params[i], '=');
		int k, klen = eq ? (int)(eq - params[i]) : 0;
		if (!eq || strlen(params[i]) >= sizeof(rec_set_opts[0])) {
			printf("Error: '%s': rec_set takes key=value options (under %d characters), or clear\n", params[i],
				(int)sizeof(rec_set_opts[0]));
			return;
		}
		/* Check it as an option of either direction (an invalid value is refused here). */
		rec_job_init(&j);
		r = parse_common(params[i], klen, eq + 1, &j);
		if (r == 0)
			r = parse_record_opt(params[i], klen, eq + 1, &j, ~0UL);
		if (r == 0)
			r = parse_replay_opt(params[i], klen, eq + 1, &j);
		if (r < 0)
			return;
		if (r == 0) {
			printf("Error: unknown option '%.*s'\n", klen, params[i]);
			return;
		}
		for (k = 0; k < rec_set_n; k++)
			if (!strncmp(rec_set_opts[k], params[i], klen + 1))
				break;
		if (k == rec_set_n) {
			if (rec_set_n == REC_SET_MAX) {
				printf("Error: %d options at most (rec_set clear)\n", REC_SET_MAX);
				return;
			}
			rec_set_n++;
		}
		strcpy(rec_set_opts[k], params[i]);
	}
	printf("rec_set:");
	for (i = 0; i < rec_set_n; i++)
		printf(" %s", rec_set_opts[i]);
	printf("%s\n", rec_set_n ? "" : " (none)");
}
define_literec_command(rec_set, rec_set_handler, "Options for the following rec_start/play_start/rec_record/rec_replay: rec_set key=value ... | clear");

/* rec_raw: the recorder's own configuration checks, with the registers exactly as given. */
static void rec_raw_handler(int nb_params, char **params)
{
	unsigned long long first, last, v;
	uint64_t start, chunks = 1, nsze;
	unsigned long chunk = LITEREC_CHUNK_SIZE;
	uint32_t mask = 1;
	int i, replay, code, force = catalog_force_arg(&nb_params, params);
	if (nb_params < 3 || (strcmp(params[0], "record") && strcmp(params[0], "replay")) ||
		literec_parse_u64(params[1], &first) || literec_parse_u64(params[2], &last)) {
		printf("rec_raw <record|replay> <first_lba> <last_lba> [start=lba] [chunks=N] [nsze=N] [chunk=KiB] [mask=N] [force=1]\n"
			"  (writes the registers as given, no check by the BIOS: shows the recorder's own status code)\n");
		return;
	}
	if (!nvme_ctrls[0].initialized) {
		printf("Error: nvme0: %s\n", nvme_strerror(NVME_ERR_NO_INIT));
		return;
	}
	replay = !strcmp(params[0], "replay");
	start = first;
	nsze = nvme_ctrls[0].nsze;
	for (i = 3; i < nb_params; i++) {
		char *eq = strchr(params[i], '=');
		if (!eq || literec_parse_u64(eq + 1, &v)) {
			printf("Error: '%s': options are key=number\n", params[i]);
			return;
		}
		if (!strncmp(params[i], "start=", 6)) start = v;
		else if (!strncmp(params[i], "chunks=", 7)) chunks = v;
		else if (!strncmp(params[i], "nsze=", 5)) nsze = v;
		else if (!strncmp(params[i], "chunk=", 6)) chunk = v*1024;
		else if (!strncmp(params[i], "mask=", 5)) mask = v;
		else {
			printf("Error: unknown option '%s'\n", params[i]);
			return;
		}
	}
	/* A record the recorder accepts may write a chunk before it is ended: not into the catalog. */
	if (!replay && catalog_guard("rec_raw", mask, first, last >= first ? last - first + chunk/nvme_ctrls[0].lba_size : 0,
	    force))
		return;
	code = rec_raw_start(replay, first, last, start, chunks, nsze, mask, chunk, nvme_ctrls[0].lba_size);
	if (code < 0)
		return;
	printf("rec_raw: %s\n", code == REC_STATUS_NONE ? "accepted (ended at once)" : rec_status_str(code));
	printf("RESULT name=rec_raw status=%d\n", code);
}
define_literec_command(rec_raw, rec_raw_handler, "The recorder's own checks: rec_raw <record|replay> <first_lba> <last_lba> [...] [force=1]");

#endif
