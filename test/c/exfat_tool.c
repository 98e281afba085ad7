// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// The BIOS's exFAT code (software/libliterec/exfat.c) on an image file, for test/test_exfat_host.py.
//
//   exfat_tool IMG format BYTES SECTOR CLUSTER LABEL [FIRST_NAME FIRST_BYTES]
//   exfat_tool IMG mount
//   exfat_tool IMG free BYTES ALIGN FROM          first free run: its byte offset
//   exfat_tool IMG create NAME OFF RESERVE UNIX_US
//   exfat_tool IMG length NAME LENGTH VALID SHRINK UNIX_US
//   exfat_tool IMG find NAME
//   exfat_tool IMG delete NAME
//   exfat_tool IMG write NAME HOSTFILE FROM UNIX_US
//   exfat_tool IMG used OFF BYTES                 a used cluster in these bytes (the guard)
//   exfat_tool IMG freeclusters
//   exfat_tool - name NAME                       the name check
//
// Prints "ok ..." and exits 0, or prints "error <code> <message>" and exits 1.

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exfat.h"

static int fd;
static unsigned long long reads, writes;

static int rd(void *ctx, uint64_t off, uint8_t *b)
{
	reads++;
	return pread(fd, b, EXFAT_PIECE, off) == EXFAT_PIECE ? 0 : -1;
}

static int wr(void *ctx, uint64_t off, const uint8_t *b)
{
	writes++;
	return pwrite(fd, b, EXFAT_PIECE, off) == EXFAT_PIECE ? 0 : -1;
}

static int zero(void *ctx, uint64_t off, uint64_t bytes)
{
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, bytes) ? -1 : 0;
}

static const struct exfat_dev dev = {NULL, rd, wr, zero, NULL};

static int fail(int r)
{
	printf("error %d %s\n", r, exfat_strerror(r));
	return 1;
}

static void show(const struct exfat_vol *v, const struct exfat_file *f)
{
	printf("ok first=%u off=%llu length=%llu valid=%llu flags=%u attr=%u\n", f->first_cluster,
		f->first_cluster ? (unsigned long long)exfat_cluster_off(v, f->first_cluster) : 0ULL,
		(unsigned long long)f->length, (unsigned long long)f->valid, f->flags, f->attributes);
}

int main(int argc, char **argv)
{
	struct exfat_vol v;
	struct exfat_file f;
	uint64_t off;
	int r;
	if (argc >= 4 && !strcmp(argv[1], "-") && !strcmp(argv[2], "name")) {
		const char *why = NULL;
		r = exfat_name_check(argv[3], &why);
		if (r)
			printf("error %d %s: %s\n", r, exfat_strerror(r), why);
		else
			printf("ok\n");
		return !!r;
	}
	if (argc < 3)
		return 2;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	if (!strcmp(argv[2], "format") && argc >= 7) {
		r = exfat_format(&v, &dev, strtoull(argv[3], 0, 0), strtoul(argv[4], 0, 0), strtoul(argv[5], 0, 0), argv[6],
			0x12345678, argc >= 9 ? argv[7] : NULL, argc >= 9 ? strtoull(argv[8], 0, 0) : 0, 0x27, &f);
		if (r)
			return fail(r);
		printf("ok sector=%u cluster=%llu clusters=%u fat=%u+%u heap=%u root=%u bitmap=%u", 1u << v.sector_shift,
			(unsigned long long)exfat_cluster_bytes(&v), v.clusters, v.fat_offset, v.fat_length, v.heap_offset,
			v.root_cluster, v.bitmap_cluster);
		if (argc >= 9)
			printf(" first_off=%llu", (unsigned long long)exfat_cluster_off(&v, f.first_cluster));
		printf(" reads=%llu writes=%llu\n", reads, writes);
		return 0;
	}
	if ((r = exfat_mount(&v, &dev)))
		return fail(r);
	if (!strcmp(argv[2], "mount")) {
		printf("ok sector=%u cluster=%llu clusters=%u heap=%u root=%u bitmap=%u\n", 1u << v.sector_shift,
			(unsigned long long)exfat_cluster_bytes(&v), v.clusters, v.heap_offset, v.root_cluster, v.bitmap_cluster);
		return 0;
	}
	if (!strcmp(argv[2], "free") && argc == 6) {
		if ((r = exfat_find_free(&v, strtoull(argv[5], 0, 0), strtoull(argv[3], 0, 0), strtoull(argv[4], 0, 0), &off)))
			return fail(r);
		printf("ok off=%llu\n", (unsigned long long)off);
		return 0;
	}
	if (!strcmp(argv[2], "used") && argc == 5) {
		if ((r = exfat_used_in(&v, strtoull(argv[3], 0, 0), strtoull(argv[4], 0, 0), &off)) < 0)
			return fail(r);
		printf("ok used=%d at=%llu\n", r, r ? (unsigned long long)off : 0ULL);
		return 0;
	}
	if (!strcmp(argv[2], "freerun") && argc == 4) {
		if ((r = exfat_free_run(&v, strtoull(argv[3], 0, 0), &off)))
			return fail(r);
		printf("ok bytes=%llu\n", (unsigned long long)off);
		return 0;
	}
	if (!strcmp(argv[2], "freeclusters")) {
		if ((r = exfat_free_clusters(&v, &off)))
			return fail(r);
		printf("ok free=%llu\n", (unsigned long long)off);
		return 0;
	}
	if (!strcmp(argv[2], "create") && argc == 7) {
		if ((r = exfat_create(&v, argv[3], strtoull(argv[4], 0, 0), strtoull(argv[5], 0, 0), 0x20,
		    strtoull(argv[6], 0, 0), &f)))
			return fail(r);
		show(&v, &f);
		return 0;
	}
	if (!strcmp(argv[2], "find") && argc == 4) {
		if ((r = exfat_find(&v, argv[3], &f)))
			return fail(r);
		show(&v, &f);
		return 0;
	}
	if (!strcmp(argv[2], "length") && argc == 8) {
		if ((r = exfat_find(&v, argv[3], &f)) || (r = exfat_set_length(&v, &f, strtoull(argv[4], 0, 0),
		    strtoull(argv[5], 0, 0), strtoull(argv[7], 0, 0), atoi(argv[6]))))
			return fail(r);
		show(&v, &f);
		return 0;
	}
	if (!strcmp(argv[2], "delete") && argc == 4) {
		if ((r = exfat_delete(&v, argv[3])))
			return fail(r);
		printf("ok\n");
		return 0;
	}
	if (!strcmp(argv[2], "write") && argc == 7) {
		static char data[1 << 16];
		FILE *h = fopen(argv[4], "rb");
		size_t n = h ? fread(data, 1, sizeof(data), h) : 0;
		if (h)
			fclose(h);
		if ((r = exfat_write_file(&v, argv[3], data, n, strtoull(argv[5], 0, 0), strtoull(argv[6], 0, 0))) ||
		    (r = exfat_find(&v, argv[3], &f)))
			return fail(r);
		show(&v, &f);
		return 0;
	}
	return 2;
}
