// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// exFAT volumes (Microsoft's exFAT file system specification, 2019) for the recorder: format a
// volume, create contiguous files (NoFatChain) of any 64-bit length, update their length,
// ValidDataLength and times, free the tail of a reservation, delete, find. No hardware
// dependency: the volume is read and written in 512-byte pieces through the callbacks of
// struct exfat_dev (the BIOS: an NVMe drive through the CPU I/O queue, caching one LBA; the unit
// test: an image file), so the same code is compiled for the host (test/test_exfat_host.py).
//
// Layout written by exfat_format (doc/catalog.md, "exFAT volumes"):
//
//   sector 0-11     main boot region (boot sector, 8 extended boot sectors, OEM parameters,
//                   reserved, checksum sector); 12-23 its backup
//   1 MiB           the FAT (one; entries 0 and 1, the chains of the bitmap, up-case table and
//                   root directory: every other file is NoFatChain)
//   heap            cluster 2: allocation bitmap, then the up-case table, the root directory
//                   (EXFAT_ROOT_BYTES, one run) and the first file, whose name the caller gives
//                   (the recorder: its catalog)

#ifndef __LITEREC_EXFAT_H
#define __LITEREC_EXFAT_H

#include <stdint.h>

#define EXFAT_PIECE       512                /* unit of every read and write of struct exfat_dev */
#define EXFAT_NAME_MAX    255                /* UTF-16 code units of a file name (exFAT's limit) */
/* Longest name this build handles (buffers on the stack: the BIOS builds with a smaller one; files
 * with longer names, a PC's, are skipped by lookups and never touched). */
#ifndef EXFAT_NAME_LIMIT
#define EXFAT_NAME_LIMIT  EXFAT_NAME_MAX
#endif
#define EXFAT_LABEL_MAX   11
#define EXFAT_ROOT_BYTES  (128u << 10)       /* root directory written by exfat_format */

/* Errors (negative return values); exfat_strerror says them in words. */
#define EXFAT_EIO        -1   /* a read or write of the device failed */
#define EXFAT_ENOTEXFAT  -2   /* no exFAT boot sector (or its checksum is wrong in both copies) */
#define EXFAT_EUNSUP     -3   /* an exFAT this code does not handle (two FATs, sector > 4 KiB, ...) */
#define EXFAT_ENAME      -4   /* empty name, too long, or a character exFAT forbids */
#define EXFAT_EEXIST     -5   /* a file of that name exists */
#define EXFAT_ENOENT     -6   /* no such file */
#define EXFAT_ENOSPC     -7   /* no contiguous free run that large */
#define EXFAT_EDIRFULL   -8   /* no room in the root directory */
#define EXFAT_ESIZE      -9   /* volume too small or too large, bad cluster size */
#define EXFAT_ECORRUPT   -10  /* inconsistent structures (entry set checksum, a cluster outside the heap) */
#define EXFAT_ERANGE     -11  /* a length beyond the file's allocation */

struct exfat_dev {
	void *ctx;
	/* 512 bytes at byte offset off (a multiple of 512): 0, or < 0 on an I/O error. */
	int (*read)(void *ctx, uint64_t off, uint8_t *buf);
	int (*write)(void *ctx, uint64_t off, const uint8_t *buf);
	/* Optional (NULL: zero pieces are written): zeroes `bytes` from `off` (multiples of 512). */
	int (*zero)(void *ctx, uint64_t off, uint64_t bytes);
	/* Optional: called at the end of every operation (a cache in the callbacks writes back). */
	int (*flush)(void *ctx);
};

struct exfat_vol {
	const struct exfat_dev *dev;
	uint32_t sector_shift, cluster_shift;    /* log2 of bytes per sector, per cluster */
	uint64_t sectors;                        /* VolumeLength */
	uint32_t fat_offset, fat_length;         /* sectors */
	uint32_t heap_offset;                    /* sectors */
	uint32_t clusters;                       /* ClusterCount */
	uint32_t root_cluster;
	uint32_t bitmap_cluster;
	uint64_t bitmap_bytes;
	uint32_t serial;
};

/* A file: where its entry set is and what it says. */
struct exfat_file {
	uint64_t entry_off[2];      /* byte offsets of its file entry and of its stream extension */
	int      secondary;         /* SecondaryCount */
	uint16_t attributes;
	uint8_t  flags;             /* GeneralSecondaryFlags: 1 AllocationPossible, 2 NoFatChain */
	uint32_t first_cluster;
	uint64_t length, valid;     /* DataLength, ValidDataLength */
};

/* Cluster size exfat_format picks for a volume of `bytes` (power of two, 32 KiB .. 1 MiB). */
uint32_t exfat_default_cluster(uint64_t bytes);
/* Formats `bytes` of the device (sectors of `sector` bytes, 512 or 4096; cluster 0: the default)
 * with the volume label `label` (ASCII, <= 11 characters, may be empty) and the serial number
 * `serial`, and creates the first file, `first_name`, of `first_bytes` (contiguous, zeroed,
 * attributes `first_attr`). Mounted in *v afterwards; *first describes the first file. */
int exfat_format(struct exfat_vol *v, const struct exfat_dev *d, uint64_t bytes, uint32_t sector, uint32_t cluster,
	const char *label, uint32_t serial, const char *first_name, uint64_t first_bytes, uint16_t first_attr,
	struct exfat_file *first);
/* Reads the boot region (main copy, the backup if the main one is damaged) and finds the
 * allocation bitmap. */
int exfat_mount(struct exfat_vol *v, const struct exfat_dev *d);

/* Byte offset on the device of cluster c (c >= 2), and the cluster at a byte offset (offset in the heap). */
uint64_t exfat_cluster_off(const struct exfat_vol *v, uint32_t c);
uint32_t exfat_off_cluster(const struct exfat_vol *v, uint64_t off);
uint64_t exfat_cluster_bytes(const struct exfat_vol *v);

/* The name check: 0, or EXFAT_ENAME. `why` (may be NULL) says what is wrong. */
int exfat_name_check(const char *utf8, const char **why);

/* Finds the first free run of clusters holding `bytes` (at least one cluster) whose first byte is
 * at or after byte offset `from` and a multiple of `align` (a power of two; 0 or 1: any): *off is
 * its byte offset. */
int exfat_find_free(struct exfat_vol *v, uint64_t from, uint64_t bytes, uint64_t align, uint64_t *off);
/* Creates a contiguous file: clusters from byte offset `off` (a cluster boundary; free) holding
 * `reserve` bytes, DataLength = `reserve` (cluster rounded up when round), ValidDataLength 0,
 * times from `unix_us` (microseconds since 1970, 0: 1980-01-01). */
int exfat_create(struct exfat_vol *v, const char *name, uint64_t off, uint64_t reserve, uint16_t attr,
	uint64_t unix_us, struct exfat_file *f);
/* Sets DataLength and ValidDataLength (valid <= length <= allocation) and the modification time.
 * A length in fewer clusters than the allocation frees the clusters past it (the tail of a
 * reservation) when `shrink`, and is refused (EXFAT_ERANGE) otherwise. */
int exfat_set_length(struct exfat_vol *v, struct exfat_file *f, uint64_t length, uint64_t valid, uint64_t unix_us,
	int shrink);
int exfat_find(struct exfat_vol *v, const char *name, struct exfat_file *f);
/* Deletes a file (its clusters are freed in the bitmap; the data stay on the device). */
int exfat_delete(struct exfat_vol *v, const char *name);
/* Creates a small file holding `len` bytes of data (a .sigmf-meta) at the first free cluster at or
 * after `from`, replacing a file of that name. */
int exfat_write_file(struct exfat_vol *v, const char *name, const void *data, uint32_t len, uint64_t from,
	uint64_t unix_us);
/* Writes one piece of a file's data (byte offset on the device, a multiple of 512). */
int exfat_put(struct exfat_vol *v, uint64_t off, const uint8_t *buf);
/* Bytes of free clusters in a row from byte offset `off` (a cluster boundary in the heap) up to the
 * first used cluster or the heap's end: *bytes (0 when the cluster at off is used). */
int exfat_free_run(struct exfat_vol *v, uint64_t off, uint64_t *bytes);
/* Whether a cluster marked used lies in the `bytes` from byte offset `off`: 1 (*at: its offset), 0, < 0. */
int exfat_used_in(struct exfat_vol *v, uint64_t off, uint64_t bytes, uint64_t *at);
/* Free clusters (counts the bitmap). */
int exfat_free_clusters(struct exfat_vol *v, uint64_t *n);

const char *exfat_strerror(int err);

#endif
