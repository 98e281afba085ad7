// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Recorder jobs (record.c; the commands: cmd_record.c): record a stream (test pattern or the user's) to the SSDs, replay it
// (into the checker or the user's output). A job is configured, checked, started; the CPU then
// only polls. rec_record_run/rec_replay_run are the blocking forms used by tests and self-tests.

#ifndef __LITEREC_RECORD_H
#define __LITEREC_RECORD_H

#include <stdint.h>

struct rec_job {
	/* What */
	int      replay;             /* 0: record, 1: replay */
	int      mode;               /* record: REC_MODE_FIXED / _UNTIL_STOP / _RING */
	uint64_t lba;                /* first LBA of the region on every selected port */
	uint64_t bytes;              /* fixed: size; ring: region; until-stop: region (0: to the end); replay: length */
	uint64_t post_bytes;         /* ring: bytes after the trigger */
	uint64_t trim_bytes;         /* trim ahead distance (0: no trim) */
	int      input, output;      /* REC_INPUT_* / REC_OUTPUT_* index */
	int      drop;               /* overflow policy: 0 lossless, 1 drop */
	int      flush_after;        /* NVMe Flush after the recording */
	int      surplus;            /* input outside the recording: REC_SURPLUS_* */
	int      arm;                /* wait for the hardware start input */
	int      no_catalog;         /* a test of the drives (self-test, nvme_bench full): not entered in
	                              * the catalog (the command checked its LBAs with catalog_guard) */
	uint32_t seed;
	uint32_t mask;               /* ports the chunks are striped over */
	unsigned long chunk;         /* bytes per chunk (one NVMe command) */
	unsigned long qd;            /* chunk commands in flight, all ports (0: 32 per port) */
	uint64_t start_chunk;        /* replay: first chunk of the region (ring order), 0 = the start */
	uint64_t region_bytes;       /* replay: the region (a ring's), 0: the replay length */
	uint64_t buffer_bytes;       /* the LiteDRAM ring (0: RECORDER_BUFFER_DEFAULT; REC_BUFFER_ALL: the
	                              * whole DRAM window; both up to the slots) */
	int      staging;            /* on-chip slots: REC_STAGING_AUTO (all the build has) or _OFF (DRAM ring only) */
	int      spill;              /* record: REC_SPILL_AUTO (to DRAM only under the drop policy), _OFF, _ON */
	/* Record: the test source */
	unsigned long rate_mbps;     /* 0: as fast as the recorder takes it */
	int      strict;             /* 1: beats the recorder cannot take are lost */
	uint64_t source_bytes;       /* bytes the source produces (0: `bytes`, or endless) */
	uint64_t stop_bytes;         /* the source ends (`last`) after this (the chunk is padded) */
	uint64_t abort_bytes;        /* abort once the source produced this */
	uint64_t packet_bytes;       /* source packets (`last`) checked against the chunks (0: none) */
	/* Replay: the checker */
	uint64_t check_bytes;        /* bytes the checker expects (0: `bytes`) */
	/* Derived by rec_job_check() */
	int      nports, start_port;
	uint32_t chunk_blocks, lba_size;
	uint64_t chunks;             /* fixed / replay: chunks */
	uint64_t rows, capacity;     /* region rows (per port) and chunks (all ports) */
	uint64_t last_lba, start_lba, nsze;
	unsigned long ring_slots;
};

#define REC_STAGING_AUTO  0
#define REC_STAGING_OFF   1
#define REC_SPILL_AUTO    0
#define REC_SPILL_OFF     1
#define REC_SPILL_ON      2
#define REC_BUFFER_ALL    (~0ULL)  /* buffer=all: the whole DRAM window (up to RECORDER_SLOTS chunks) */

/* Input that arrives outside a recording: auto = flushed for the test pattern, kept for the user's. */
#define REC_SURPLUS_AUTO  0
#define REC_SURPLUS_KEEP  1    /* waits at the port (lossless), recorded by the next recording */
#define REC_SURPLUS_FLUSH 2    /* discarded and counted */

struct rec_result {
	int      ok;                 /* finished without an error or a refusal */
	int      status;             /* REC_STATUS_* */
	int      busy, done, overflow, triggered;
	uint64_t chunks;             /* chunks completed (record: written; replay: handed out) */
	uint64_t bytes;              /* record: bytes committed (written); replay: bytes handed out */
	uint64_t cycles;             /* start to now/finish, modeled clock */
	/* record accounting: bytes_in = kept + dropped, kept = committed + buffered */
	uint64_t bytes_in, bytes_kept, bytes_dropped, bytes_committed, bytes_buffered;
	uint64_t drops, level, peak, stalls, surplus, lost_beats, early_last, keep_errors;
	uint64_t wraps, trigger_pos, oldest, addr_last;
	unsigned ring_peak;
	/* the ring's two tiers: on-chip slots (per port) and DRAM slots, peaks, bytes through DRAM */
	unsigned long onchip_slots;
	uint64_t peak_onchip, peak_dram, bytes_spilled;
	int      aborted;
	uint64_t dropped;            /* bytes of the partial chunk an abort dropped */
	/* replay */
	uint64_t errors, first_error, checked_beats, extra_beats, last_at;
	/* error */
	int      err_port;
	uint32_t err_status;
	uint64_t err_lba;
};

/* Defaults for a job (chunk size of the build, port 0, seed 1, test streams, lossless). */
void rec_job_init(struct rec_job *j);
/* Checks ports, sizes and LBA ranges (prints why, returns -1; nothing is sent). */
int rec_job_check(struct rec_job *j);
/* Starts a checked job (returns -1 with the reason printed if the recorder refuses it). */
int rec_job_start(struct rec_job *j);
/* Reads the recorder's state into r (a consistent snapshot of the counters). */
void rec_job_poll(struct rec_job *j, struct rec_result *r);
/* Waits until the job ends (or timeout_us of modeled time passed, 0: no limit; a key stops the
 * wait); prints a live status line every interval_us if nonzero. Returns 1 when done. */
int rec_job_wait(struct rec_job *j, struct rec_result *r, uint64_t timeout_us, uint64_t interval_us);
/* Aborts the running job, if any, and waits for its end (-1: it did not end within 1 s). */
int rec_job_abort(void);
/* Sends a pulse (CSR_RECORDER_CONTROL_*_OFFSET: stop, abort, trigger, disarm) to the last job started. */
void rec_job_pulse(int offset);
/* The job is over: the queue engines of its ports go back to the CPU. */
void rec_job_release(const struct rec_job *j);
/* Runs a checked job to its end; errors from the drives are printed with their status in words. */
int rec_record_run(struct rec_job *j, struct rec_result *r);
int rec_replay_run(struct rec_job *j, struct rec_result *r);
/* Writes the registers as given (no BIOS check) and starts: the recorder's own status code
 * (REC_STATUS_NONE: accepted, and ended at once). */
int rec_raw_start(int replay, uint64_t first, uint64_t last, uint64_t start, uint64_t chunks, uint64_t nsze,
	uint32_t mask, unsigned long chunk, uint32_t lba_size);
/* Discard (and count) the input outside the recording, or let it wait. */
void rec_flush_surplus(int on);
/* A recording that ended since the last poll enters the drives' catalog now (catalog.h). */
void rec_catalog_settle(void);
/* The last job started (NULL: none). */
struct rec_job *rec_current_job(void);
/* MB/s x 1000 of bytes in cycles of the modeled clock. */
uint64_t rec_kbps(uint64_t bytes, uint64_t cycles);
void rec_print_ports(uint32_t mask);
/* Composite temperature (C) of the first initialized port in mask (SMART log), -273 if none. */
int rec_temperature(uint32_t mask);
const char *rec_status_str(int status);

/* The recorder's status register and live counters (in files that include generated/csr.h). */
#define STATUS_CODE(st) (((st) >> CSR_RECORDER_STATUS_CODE_OFFSET) & ((1 << CSR_RECORDER_STATUS_CODE_SIZE) - 1))
#define STATUS_BIT(st, f) (((st) >> CSR_RECORDER_STATUS_##f##_OFFSET) & 1)
/* Counters that change while a recording runs, two CSR words: read consistently (the snap_*
 * registers are frozen by the snapshot and need no re-read). */
#define LIVE64(core, reg) literec_csr_read64(CSR_##core##_##reg##_ADDR)

#endif
