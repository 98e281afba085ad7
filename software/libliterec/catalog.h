// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// On-disk catalog (doc/catalog.md, format version 1): a reserved area at the start of every drive
// of a set that names the set, the drive's position in it, and the recordings with their regions,
// lengths, times, drops and user metadata. Catalog I/O goes through the NVMe driver's CPU I/O
// queue (QID 2), never through the hardware engine that carries the recorded data.
//
// Recording job API (called by the recorder's job layer, record.c, through catalog_job_*()):
//
//   catalog_place_auto(mask, bytes, chunk, &lba)  first LBA after every live recording (rec_* auto)
//   id = catalog_rec_begin(&job)                  > 0: entered (state recording); 0: these drives
//                                                 have no catalog; < 0: refused (printed: overlap,
//                                                 mixed set, missing drive of the set, ...)
//   catalog_rec_checkpoint(&progress)             from the polling loop: cheap; flushes the drives
//                                                 and rewrites the entry at most every
//                                                 catalog_checkpoint_ms of modeled time, without
//                                                 blocking (one step per call; catalog_rec_due()
//                                                 says whether a call would do anything)
//   catalog_rec_drop(data_offset, bytes)          one drop event (the drop log)
//   catalog_rec_end(&result)                      final state, length, stop time, shrunk regions

#ifndef __LITEREC_CATALOG_H
#define __LITEREC_CATALOG_H

#include <stdint.h>

#define CATALOG_VERSION       1
#define CATALOG_BLOCK         4096
#define CATALOG_AREA_BYTES    (1u << 20)
#define CATALOG_SLOTS         120
#define CATALOG_MAX_DRIVES    8
#define CATALOG_DROP_EVENTS   207

#define CATALOG_LBA_AUTO      0xffffffffffffffffULL
#define CATALOG_NO_TRIGGER    0xffffffffffffffffULL

#define CATALOG_STATE_RECORDING 1
#define CATALOG_STATE_COMPLETE  2
#define CATALOG_STATE_ABORTED   3
#define CATALOG_STATE_ERROR     4
#define CATALOG_STATE_DELETED   5
/* Not on the drive: state 1 (recording) of an entry that no recording of this boot updates, i.e. one
 * cut by a power loss or a reset (rec_close ends it at its last checkpoint). */
#define CATALOG_STATE_INTERRUPTED 6

#define CATALOG_MODE_FIXED      0
#define CATALOG_MODE_UNTIL_STOP 1
#define CATALOG_MODE_RING       2

#define CATALOG_SOURCE_PATTERN  0
#define CATALOG_SOURCE_USER     1

/* Job API ---------------------------------------------------------------------------------------- */

struct catalog_job {
	uint32_t mask;          /* ports; chunk k goes to the (k mod n)-th selected port (port order) */
	uint64_t lba;           /* first LBA on every selected port */
	uint64_t bytes;         /* region in data bytes: the recording (fixed), the ring (ring), the
	                           region (until stop; 0: to the end of the smallest drive) */
	uint32_t chunk;         /* bytes per chunk (one NVMe command) */
	int      mode;          /* CATALOG_MODE_* */
	int      source;        /* CATALOG_SOURCE_* */
	uint32_t seed;          /* test-pattern seed */
};

struct catalog_progress {
	uint64_t bytes_recorded;  /* data bytes whose NVMe Writes completed, in order */
	uint64_t bytes_dropped;   /* input bytes not recorded */
	uint64_t oldest;          /* ring: data offset of the oldest valid byte (else 0) */
	uint64_t trigger;         /* ring: data offset of the trigger, or CATALOG_NO_TRIGGER */
};

struct catalog_result {
	int      state;           /* CATALOG_STATE_COMPLETE, _ABORTED or _ERROR */
	struct catalog_progress p;
	uint64_t chunks_written;  /* chunks on the drives (padded ones included): fixed and until-stop
	                             regions shrink to them */
	int      err_port;        /* _ERROR: failing port, its NVMe status and LBA */
	uint32_t err_status;
	uint64_t err_lba;
	uint32_t drops_total;     /* drop events in all (the recorder's count: its log may hold fewer) */
	uint64_t t_start, t_stop; /* modeled cycles of the recording's start and end (0: at begin / now) */
};

extern uint32_t catalog_checkpoint_ms;   /* default 100 */

int  catalog_place_auto(uint32_t mask, uint64_t bytes, uint32_t chunk, uint64_t *lba);
int  catalog_rec_begin(const struct catalog_job *j);
void catalog_rec_checkpoint(const struct catalog_progress *p);
/* What catalog_rec_checkpoint would do now: 0 nothing, 1 a step of the checkpoint under way, 2
 * start a checkpoint (it takes the progress and the drop events passed on before it). */
int  catalog_rec_due(void);
void catalog_rec_drop(uint64_t data_offset, uint64_t bytes);
int  catalog_rec_end(const struct catalog_result *r);
int  catalog_rec_active(void);
/* A recording's job (replay by id): 0 and *j, *bytes_recorded, *oldest (ring: data offset of the
 * oldest valid byte) filled, or -1 (printed). */
int  catalog_lookup(uint32_t id, uint32_t mask_hint, struct catalog_job *j, uint64_t *bytes_recorded,
	uint64_t *oldest);

/* The recorder's jobs (record.c; defined at the end of catalog.c, with the recorder) ------------------ */

struct rec_job;
struct rec_result;
/* A recording job enters the catalog when it starts: 0 (entered, or no catalog, or no_catalog), -1
 * (refused, printed: nothing is sent). */
int  catalog_job_begin(struct rec_job *j);
/* The modeled cycle the job started (not called for an armed job: its start is not known). */
void catalog_job_started(uint64_t cycles);
/* 1 while the current recording job is in the catalog (begun, not ended). */
int  catalog_job_on(void);
/* From rec_job_poll: the end, or a checkpoint when one is due. */
void catalog_job_poll(struct rec_job *j, struct rec_result *r);
/* The end of the recording: from its final status r, or (r NULL) with nothing recorded, in `state`. */
void catalog_job_end(struct rec_job *j, struct rec_result *r, int state);
/* rec_record/rec_start auto: j->lba (and an until-stop region on exFAT) after the catalog's
 * recordings; 0, or -1 (printed). */
int  catalog_job_place(struct rec_job *j);
/* rec_replay/play_start id=<n>: the recording's drives, LBA, chunk, length and seed into j; options
 * of params that would contradict the catalog are refused (-1, printed). */
int  catalog_job_replay(const char *idv, int nb_params, char **params, struct rec_job *j);

/* Wall clock: microseconds since 1970 (0: never set with rec_clock). */
uint64_t catalog_unix_us(void);
void     catalog_set_clock(uint64_t unix_s);

/* For the commands (cmd_catalog.c) ------------------------------------------------------------------ */

/* An entry decoded for display. */
struct catalog_entry {
	int      slot, state, mode, source, width, err_pos;
	uint32_t seq, id, chunk, lba_size, seed, clk, drops_total, drops_logged, err_status;
	uint8_t  order[CATALOG_MAX_DRIVES];
	uint64_t start_lba[CATALOG_MAX_DRIVES], region[CATALOG_MAX_DRIVES];
	uint64_t bytes, dropped, ring, trigger, oldest, t0, t1, u0, u1, tupd, err_lba, rate_mhz, freq_mhz;
	char     name[33], datatype[33], text[257];
};

/* A set of drives as found on the initialized ports. */
struct catalog_set {
	uint8_t  id[16];
	int      size;
	int      port_of[CATALOG_MAX_DRIVES];   /* port of each set position, -1 when missing */
	uint32_t ports;                         /* mask of the present members */
	int      ref;                           /* port the catalog is read from */
	uint32_t lba_size;
	char     serial[CATALOG_MAX_DRIVES][21];/* member serials (from the header) */
};

/* Port status after catalog_probe. */
#define CATALOG_PORT_NOINIT   0   /* not initialized (nvme_init) */
#define CATALOG_PORT_NONE     1   /* no catalog */
#define CATALOG_PORT_OK       2
#define CATALOG_PORT_CORRUPT  3   /* magic right, CRC wrong in both header copies */
#define CATALOG_PORT_VERSION  4   /* unknown format version */
#define CATALOG_PORT_NOQ      5   /* no CPU I/O queue */
#define CATALOG_PORT_IOERR    6
#define CATALOG_PORT_GEOMETRY 7   /* LBA size changed since the format */
#define CATALOG_PORT_FOREIGN  8   /* an exFAT volume the recorder did not make */
int  catalog_probe(int port);                   /* reads the port's header: CATALOG_PORT_* */
int  catalog_port_state(int port);              /* the last probe's result (no I/O) */
const char *catalog_port_str(int port);         /* the last probe's result in words */
/* Sets among the ports of `mask` (probed first): fills up to `max` sets, returns how many. */
int  catalog_sets(uint32_t mask, struct catalog_set *sets, int max);
/* The one set of the ports of `mask`: 1 (*s filled), 0 (none of them has a catalog) or -1 (error
 * printed: corrupt or unknown catalog, mixed set, drives with and without a catalog, a position
 * twice, and with CATALOG_SEL_COMPLETE a drive of the set missing). CATALOG_SEL_ANY: ports without
 * a catalog are left out instead of making a mixed selection. */
#define CATALOG_SEL_COMPLETE 1
#define CATALOG_SEL_ANY      2
int  catalog_select(uint32_t mask, int flags, struct catalog_set *s);
/* Visits every live (or every, with deleted) entry of a set in slot order; returns the number of
 * corrupt slots (printed). */
typedef void (*catalog_visit_fn)(const struct catalog_entry *e, void *ctx);
int  catalog_scan(struct catalog_set *s, int deleted, catalog_visit_fn fn, void *ctx);
int  catalog_find(struct catalog_set *s, uint32_t id, struct catalog_entry *e);
/* Drop event j of the entry catalog_find returned last. */
void catalog_found_drop(int j, uint64_t *data_offset, uint64_t *bytes);
/* A new set on the ports of mask: a raw catalog (fs 0), or exFAT volumes labelled `label` whose first
 * file is the catalog (fs 1). */
int  catalog_format(uint32_t mask, int fs, const char *label);
int  catalog_delete(struct catalog_set *s, uint32_t id, int trim);
/* Ends an interrupted recording at its last checkpoint (state aborted, stop time = that checkpoint);
 * a fixed or until-stop recording's regions shrink to the chunks of that length. 0, or -1 (printed). */
int  catalog_close(struct catalog_set *s, uint32_t id);
/* An until-stop recording without a size on an exFAT set: its region is the free clusters it may
 * reserve (the file is cut at the stop, as every recording's): the largest free run on a chunk
 * (place), or the free run from *lba. 1 (*lba, *bytes: whole rows of chunks on the ports of mask),
 * 0 (not an exFAT set: nothing changed), -1 (printed). */
int  catalog_until_stop_region(uint32_t mask, uint32_t chunk, int place, uint64_t *lba, uint64_t *bytes);
/* nvme_init: names the interrupted recordings of the port's catalog (quiet when there are none or
 * the catalog cannot be read); on an exFAT set whose drives are all present, repairs them instead:
 * each is ended at its last checkpoint as by rec_close, its files cut to that length (one line per
 * file: its name, old and new length). */
void catalog_report_interrupted(int port);
/* rec_list: the same repair on the exFAT sets of the ports of mask (raw catalogs: nothing). */
void catalog_repair_interrupted(uint32_t mask);

/* The guard of every command that writes a drive ---------------------------------------------------- */

/* `cmd` would write `blocks` LBAs from `lba` on every port of `mask`: 0 when that leaves the catalog
 * area and every live recording's region alone (or `force`), -1 with a message naming what it would
 * destroy (the catalog, recording ids and names) and how to go on (force=1, rec_delete, rec_format).
 * Ports without a catalog pass. Reads are never guarded. */
int  catalog_guard(const char *cmd, uint32_t mask, uint64_t lba, uint64_t blocks, int force);
/* Takes the argument force=1 (or force=0) out of params: 1 when force=1 was given, 0 otherwise. */
int  catalog_force_arg(int *nb_params, char **params);

/* Metadata for the next recording (rec_meta). */
struct catalog_meta {
	char     name[33], datatype[33], text[257];
	uint64_t rate_mhz, freq_mhz;
};
extern struct catalog_meta catalog_next_meta;

const char *catalog_state_str(int state);
const char *catalog_mode_str(int mode);

#endif
