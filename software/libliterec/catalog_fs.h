// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// The catalog in an exFAT volume (doc/catalog.md, "exFAT volumes"): the glue between the catalog
// (catalog.c) and the exFAT code (exfat.c) over the NVMe CPU I/O queue. On an exFAT set the
// catalog is the volume's first file, every recording a contiguous file per drive beside its
// .sigmf-meta; catalog.c calls these at its own steps (probe, format, begin, checkpoint, end,
// close, delete) and keeps everything else (slots, copies, checkpoints, sets) as on a raw drive.

#ifndef __LITEREC_CATALOG_FS_H
#define __LITEREC_CATALOG_FS_H

#include <stdint.h>
#include "catalog.h"

#define CATALOG_FS_FILE   "literec.catalog"

/* The port's first LBA holds an exFAT boot sector: 1 the recorder's volume (*base: first LBA of
 * its catalog file), -1 a volume the recorder did not make (or one it cannot read), -2 an I/O error. */
int  catalog_fs_probe(int port, uint64_t *base);
/* The last probe found the recorder's volume on the port. */
int  catalog_fs_on(int port);
void catalog_fs_off(int port);
/* A new volume on the port labelled `label` with an empty catalog file: 0 (*base), or -1 (printed). */
int  catalog_fs_format(int port, const char *label, uint64_t *base);
/* First LBA after the volume's cluster heap (recordings end before it). */
uint64_t catalog_fs_end_lba(int port);
/* The guard: 1 when the LBAs hold clusters of the volume's files (*at: the first one's LBA; on an
 * error too, *at untouched), 0 when they are free. */
int  catalog_fs_used(int port, uint64_t lba, uint64_t blocks, uint64_t *at);
/* The first LBA >= from, on a chunk, where every port of mask has `blocks[port]` free LBAs in a row:
 * 0, or -1 (printed: the volume is full). */
int  catalog_fs_place(uint32_t mask, const uint64_t *blocks, uint32_t chunk, uint64_t from, uint64_t *lba);
/* An until-stop recording without a size: the free LBAs in a row, at the same LBA on every port of
 * mask, that it may reserve: from `from` (largest 0: *lba = from), or the largest such run at or after
 * `from` that starts on a chunk (largest 1). *lbas: its length less room for the .sigmf-meta (0: none).
 * 0, or -1 (printed). */
int  catalog_fs_free_run(uint32_t mask, uint32_t chunk, uint64_t from, int largest, uint64_t *lba, uint64_t *lbas);
/* The recording's files (reserved: DataLength = the region, ValidDataLength 0): 0, or -1 (printed;
 * nothing left behind). */
int  catalog_fs_rec_begin(uint32_t mask, uint64_t lba, const uint64_t *blocks, const char *name, uint32_t id,
	uint32_t chunk, int mode, uint64_t ring);
void catalog_fs_rec_abort(void);
/* ValidDataLength of the running recording's files after a checkpoint of `bytes` data bytes. */
void catalog_fs_rec_checkpoint(uint64_t bytes);
/* What catalog_fs_rec_end did to the data file of stripe member k (cut[k]): the repair of an
 * interrupted recording names it. */
struct catalog_fs_cut {
	int      port;                       /* -1: the member's drive is not present, or not an exFAT volume */
	int      found;                      /* the data file was on the volume */
	char     name[64];
	uint64_t old_length, old_valid;      /* DataLength, ValidDataLength before */
	uint64_t length, valid;              /* and after */
	int      meta;                       /* the .sigmf-meta was written */
};
/* The end (or rec_close, or the repair of an interrupted recording) of a recording whose entry is
 * `e` (blk holds it: catalog_found_drop reads its drop log): exact lengths, the reservation's tail
 * freed (not a ring's), the .sigmf-meta files. cut (CATALOG_MAX_DRIVES entries, may be NULL): what
 * was done per stripe member. A data file missing from its volume (deleted or renamed on a PC) is
 * named and skipped; -1 only for an I/O error or damaged structures. */
int  catalog_fs_rec_end(const struct catalog_set *s, const struct catalog_entry *e, struct catalog_fs_cut *cut);
/* rec_delete: the recording's files. */
int  catalog_fs_delete(const struct catalog_set *s, const struct catalog_entry *e);

#endif
