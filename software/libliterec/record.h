// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Recorder jobs (cmd_record.c): record the test stream to the SSDs or replay it into the checker.

#ifndef __LITEREC_RECORD_H
#define __LITEREC_RECORD_H

#include <stdint.h>

struct rec_job {
	/* What */
	uint64_t lba;                /* first LBA on every selected port */
	uint64_t bytes;              /* recording/replay length, a whole number of chunks */
	uint32_t seed;
	uint32_t mask;               /* ports the chunks are striped over */
	unsigned long chunk;         /* bytes per chunk (one NVMe command) */
	unsigned long qd;            /* chunk commands in flight, all ports (0: 32 per port) */
	/* Record: the source */
	unsigned long rate_mbps;     /* 0: as fast as the recorder takes it */
	int      strict;             /* 1: beats the recorder cannot take are lost */
	uint64_t source_bytes;       /* bytes the source produces (0: `bytes`) */
	uint64_t stop_bytes;         /* stop (pad the chunk) once the source produced this (0: no) */
	uint64_t abort_bytes;        /* abort (drop the partial chunk) once the source produced this */
	uint64_t packet_bytes;       /* source packets (`last`) checked against the chunks (0: none) */
	/* Replay: the checker */
	uint64_t check_bytes;        /* bytes the checker expects (0: `bytes`) */
	/* Derived by rec_job_check() */
	int      nports;
	uint32_t chunk_blocks, lba_size;
	uint64_t chunks;
};

struct rec_result {
	int      ok;                 /* finished without an error */
	uint64_t chunks;             /* chunks completed */
	uint64_t bytes;              /* bytes written to / read from the SSDs */
	uint64_t cycles;             /* start to finish, modeled clock */
	/* record */
	uint64_t bytes_in, lost_beats, stalls, early_last;
	unsigned ring_peak;
	int      aborted;
	uint64_t dropped;            /* bytes of the partial chunk an abort dropped */
	/* replay */
	uint64_t errors, first_error, checked_beats, extra_beats;
	/* error */
	int      err_port;
	uint32_t err_status;
	uint64_t err_lba;
};

/* Defaults for a job (chunk size of the build, port 0, seed 1). */
void rec_job_init(struct rec_job *j);
/* Checks ports, sizes and LBA ranges (prints why, returns -1; nothing is sent). */
int rec_job_check(struct rec_job *j);
/* Runs a checked job; errors from the drives are printed with their status in words. */
int rec_record_run(struct rec_job *j, struct rec_result *r);
int rec_replay_run(struct rec_job *j, struct rec_result *r);
/* MB/s x 1000 of bytes in cycles of the modeled clock. */
uint64_t rec_kbps(uint64_t bytes, uint64_t cycles);
void rec_print_ports(uint32_t mask);

#endif
