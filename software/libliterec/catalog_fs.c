// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// The catalog in an exFAT volume (catalog_fs.h, doc/catalog.md "exFAT volumes"). The exFAT code
// reads and writes 512-byte pieces; here they go to the port's CPU I/O buffer, which caches one
// 4 KiB block of the drive for the length of one exFAT operation (written back at its end, so
// the catalog's own use of the buffer never sees a stale block).

#include <stdio.h>
#include <stdarg.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <generated/mem.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"
#include "catalog.h"
#include "catalog_fs.h"
#include "exfat.h"

#ifdef CSR_NVME0_BASE

#define NPORTS LITEREC_SSD_PORTS
#define BLK    4096

/* Device access through the CPU I/O queue ------------------------------------------------------------ */

static struct {
	uint64_t blk;
	uint8_t  valid, dirty;
} cache[NPORTS];

static struct exfat_dev devs[NPORTS];
static struct exfat_vol vols[NPORTS];
static uint8_t on[NPORTS];

static uint32_t per_blk(int p)
{
	return BLK >> nvme_ctrls[p].lba_shift;
}

static int io(int p, int op, uint64_t blk)
{
	int r = nvme_cpu_io(p, op, blk*per_blk(p), per_blk(p), 0);
	if (r)
		printf("Error: nvme%d: exFAT %s of LBA %llu: %s\n", p, op == NVME_OP_READ ? "read" : "write",
			(unsigned long long)(blk*per_blk(p)), nvme_strerror(r));
	return r ? -1 : 0;
}

static int writeback(int p)
{
	if (cache[p].valid && cache[p].dirty) {
		cache[p].dirty = 0;
		if (io(p, NVME_OP_WRITE, cache[p].blk)) {
			cache[p].valid = 0;
			return -1;
		}
	}
	return 0;
}

static int load(int p, uint64_t blk)
{
	if (cache[p].valid && cache[p].blk == blk)
		return 0;
	if (writeback(p))
		return -1;
	cache[p].valid = 0;
	if (io(p, NVME_OP_READ, blk))
		return -1;
	cache[p].blk = blk;
	cache[p].valid = 1;
	return 0;
}

/* The words of the piece at byte `off` of drive `p` in its block cache (NULL: the block could not be read). */
static volatile uint32_t *piece_words(int p, uint64_t off)
{
	if (load(p, off/BLK))
		return NULL;
	return (volatile uint32_t *)(nvme_cpu_buf(p) + off % BLK);
}

static int dev_read(void *ctx, uint64_t off, uint8_t *b)
{
	int i;
	volatile uint32_t *w = piece_words((int)(long)ctx, off);
	if (!w)
		return -1;
	for (i = 0; i < EXFAT_PIECE/4; i++) {
		uint32_t v = w[i];
		memcpy(b + 4*i, &v, 4);
	}
	return 0;
}

static int dev_write(void *ctx, uint64_t off, const uint8_t *b)
{
	int p = (int)(long)ctx, i;
	volatile uint32_t *w = piece_words(p, off);
	if (!w)
		return -1;
	for (i = 0; i < EXFAT_PIECE/4; i++) {
		uint32_t v;
		memcpy(&v, b + 4*i, 4);
		w[i] = v;
	}
	cache[p].dirty = 1;
	return 0;
}

static int dev_flush(void *ctx)
{
	int p = (int)(long)ctx, r = writeback(p);
	cache[p].valid = 0;
	return r;
}

/* Zeroes whole pieces: Write Zeroes where the drive has it, else zero blocks. */
static int dev_zero(void *ctx, uint64_t off, uint64_t bytes)
{
	int p = (int)(long)ctx, i, r;
	uint32_t sh = nvme_ctrls[p].lba_shift;
	uint64_t lba, n;
	if (dev_flush(ctx))
		return -1;
	/* Partial 4 KiB blocks at either end: through the cache. */
	while (bytes && (off % BLK || bytes < BLK)) {
		static const uint8_t z[EXFAT_PIECE];
		if (dev_write(ctx, off, z))
			return -1;
		off += EXFAT_PIECE;
		bytes -= EXFAT_PIECE;
		if (off % BLK == 0 && dev_flush(ctx))
			return -1;
	}
	if (dev_flush(ctx))
		return -1;
	lba = off >> sh;
	n = (bytes & ~(uint64_t)(BLK - 1)) >> sh;
	if ((nvme_ctrls[p].oncs >> 3) & 1) {
		while (n) {
			uint32_t k = n > NVME_DSM_MAX_BLOCKS ? NVME_DSM_MAX_BLOCKS : n;
			if ((r = nvme_cpu_io(p, NVME_OP_WRITE_ZEROES, lba, k, 0))) {
				printf("Error: nvme%d: exFAT write zeroes: %s\n", p, nvme_strerror(r));
				return -1;
			}
			lba += k;
			n -= k;
		}
	} else {
		volatile uint32_t *w = (volatile uint32_t *)nvme_cpu_buf(p);
		for (i = 0; i < BLK/4; i++)
			w[i] = 0;
		for (; n; n -= per_blk(p), lba += per_blk(p))
			if (io(p, NVME_OP_WRITE, lba/per_blk(p)))
				return -1;
	}
	off += bytes & ~(uint64_t)(BLK - 1);
	bytes &= BLK - 1;
	for (; bytes; off += EXFAT_PIECE, bytes -= EXFAT_PIECE) {
		static const uint8_t z[EXFAT_PIECE];
		if (dev_write(ctx, off, z))
			return -1;
	}
	return dev_flush(ctx);
}

static const struct exfat_dev *dev(int p)
{
	devs[p].ctx   = (void *)(long)p;
	devs[p].read  = dev_read;
	devs[p].write = dev_write;
	devs[p].zero  = dev_zero;
	devs[p].flush = dev_flush;
	cache[p].valid = cache[p].dirty = 0;
	return &devs[p];
}

static void fs_error(int p, const char *what, const char *name, int r)
{
	printf("Error: nvme%d: exFAT: %s%s%s%s: %s\n", p, what, name ? " \"" : "", name ? name : "", name ? "\"" : "",
		exfat_strerror(r));
}

/* Probe and format ----------------------------------------------------------------------------------- */

int catalog_fs_on(int port)
{
	return on[port];
}

void catalog_fs_off(int port)
{
	on[port] = 0;
}

int catalog_fs_probe(int port, uint64_t *base)
{
	struct exfat_file f;
	int r;
	on[port] = 0;
	if ((r = exfat_mount(&vols[port], dev(port))) < 0)
		return r == EXFAT_EIO ? -2 : -1;
	if ((r = exfat_find(&vols[port], CATALOG_FS_FILE, &f)) < 0)
		return r == EXFAT_EIO ? -2 : -1;
	if (!(f.flags & 2) || f.length < CATALOG_AREA_BYTES ||
	    exfat_cluster_off(&vols[port], f.first_cluster) % nvme_ctrls[port].lba_size)
		return -1;
	*base = exfat_cluster_off(&vols[port], f.first_cluster) >> nvme_ctrls[port].lba_shift;
	on[port] = 1;
	return 1;
}

int catalog_fs_format(int port, const char *label, uint64_t *base)
{
	struct nvme_ctrl *c = &nvme_ctrls[port];
	struct exfat_file f;
	uint64_t bytes = (c->nsze << c->lba_shift) & ~(uint64_t)(BLK - 1);
	uint32_t serial = (uint32_t)literec_cycles() ^ ((uint32_t)(catalog_unix_us()/1000000) * 2654435761u) ^ (port << 24);
	int r;
	on[port] = 0;
	r = exfat_format(&vols[port], dev(port), bytes, c->lba_size, 0, label, serial, CATALOG_FS_FILE,
		CATALOG_AREA_BYTES, 0x27, &f);
	if (r < 0) {
		fs_error(port, "format", NULL, r);
		return -1;
	}
	*base = exfat_cluster_off(&vols[port], f.first_cluster) >> c->lba_shift;
	on[port] = 1;
	printf("rec_format: nvme%d: exFAT volume%s%s%s, %llu clusters of %lu KiB, catalog file at LBA %llu\n", port,
		label[0] ? " \"" : "", label, label[0] ? "\"" : "", (unsigned long long)vols[port].clusters,
		(unsigned long)(exfat_cluster_bytes(&vols[port]) >> 10), (unsigned long long)*base);
	return 0;
}

uint64_t catalog_fs_end_lba(int port)
{
	struct exfat_vol *v = &vols[port];
	return (exfat_cluster_off(v, 2) + ((uint64_t)v->clusters << v->cluster_shift)) >> nvme_ctrls[port].lba_shift;
}

static int place(uint32_t mask, const uint64_t *blocks, uint32_t chunk, uint64_t from, uint64_t *lba, int quiet)
{
	uint64_t at = from, off;
	int p, moved, r, rounds = 0;
	do {
		moved = 0;
		for (p = 0; p < NPORTS; p++) {
			uint32_t sh = nvme_ctrls[p].lba_shift;
			if (!(mask & (1u << p)) || !on[p])
				continue;
			r = exfat_find_free(&vols[p], at << sh, blocks[p] << sh, chunk, &off);
			if (r < 0) {
				if (quiet && r == EXFAT_ENOSPC)
					return -2;
				if (r == EXFAT_ENOSPC)
					printf("Error: nvme%d: no %llu free bytes in a row on the exFAT volume from LBA %llu: "
						"rec_delete recordings (or delete files on a PC)\n", p,
						(unsigned long long)(blocks[p] << sh), (unsigned long long)at);
				else
					fs_error(p, "free space", NULL, r);
				return -1;
			}
			if ((off >> sh) != at) {
				at = off >> sh;
				moved = 1;
			}
		}
	} while (moved && ++rounds < 1000);
	*lba = at;
	return 0;
}

int catalog_fs_place(uint32_t mask, const uint64_t *blocks, uint32_t chunk, uint64_t from, uint64_t *lba)
{
	return place(mask, blocks, chunk, from, lba, 0) ? -1 : 0;
}

int catalog_fs_free_run(uint32_t mask, uint32_t chunk, uint64_t from, int largest, uint64_t *lba, uint64_t *lbas)
{
	uint64_t one[NPORTS], at = from, best = 0, best_at = from, hold = 0;
	int p, r, rounds;
	for (p = 0; p < NPORTS; p++) {
		one[p] = chunk >> nvme_ctrls[p].lba_shift;
		if ((mask & (1u << p)) && on[p]) {
			/* Room for the .sigmf-meta (at most 64 KiB) written at the end, when the recording
			 * filled its whole reservation. */
			uint64_t cl = exfat_cluster_bytes(&vols[p]), h = ((64u << 10) + cl - 1)/cl*cl;
			if ((h >> nvme_ctrls[p].lba_shift) > hold)
				hold = h >> nvme_ctrls[p].lba_shift;
		}
	}
	for (rounds = 0; rounds < 100000; rounds++) {
		uint64_t cand = at, run = ~0ULL, b;
		if (largest && (r = place(mask, one, chunk, at, &cand, 1)) < 0) {
			if (r == -1)
				return -1;
			break;                              /* no free chunk after `at` */
		}
		for (p = 0; p < NPORTS; p++) {
			uint32_t sh = nvme_ctrls[p].lba_shift;
			if (!(mask & (1u << p)) || !on[p])
				continue;
			if ((r = exfat_free_run(&vols[p], cand << sh, &b)) < 0) {
				if (r == EXFAT_ERANGE)
					b = 0;
				else {
					fs_error(p, "free space", NULL, r);
					return -1;
				}
			}
			if ((b >> sh) < run)
				run = b >> sh;
		}
		if (run == ~0ULL)
			run = 0;
		if (run > best) {
			best = run;
			best_at = cand;
		}
		if (!largest)
			break;
		at = cand + (run ? run : 1);
	}
	*lba = best_at;
	*lbas = best > hold ? best - hold : 0;
	return 0;
}

int catalog_fs_used(int port, uint64_t lba, uint64_t blocks, uint64_t *at)
{
	uint32_t sh = nvme_ctrls[port].lba_shift;
	uint64_t off;
	int r;
	if (!on[port])
		return 0;
	r = exfat_used_in(&vols[port], lba << sh, blocks << sh, &off);
	if (r > 0)
		*at = off >> sh;
	return r < 0 ? 1 : r;
}

/* Recordings -------------------------------------------------------------------------------------------- */

static struct {
	int      active;
	uint32_t mask, chunk;
	int      width, mode;
	uint64_t ring;
	int      k[NPORTS];                  /* stripe member of each port */
	struct exfat_file f[NPORTS];
	char     name[40];
	int      errors;
} rec;

/* The files of a recording: base name (rec_meta name=, or rec-<id>). */
static void base_name(char *out, const char *name, uint32_t id)
{
	if (name && name[0])
		snprintf(out, 40, "%s", name);
	else
		snprintf(out, 40, "rec-%lu", (unsigned long)id);
}

/* kind 0: the data (.sigmf-data, or a stripe .part<k+1>of<w>), 1: the .sigmf-meta. */
static void file_name(char *out, const char *base, int kind, int k, int w)
{
	if (kind == 1)
		snprintf(out, 64, "%s.sigmf-meta", base);
	else if (w == 1)
		snprintf(out, 64, "%s.sigmf-data", base);
	else
		snprintf(out, 64, "%s.part%dof%d", base, k + 1, w);
}

/* Data bytes of a recording of `bytes` on stripe member k of w. */
static uint64_t member_bytes(uint64_t bytes, uint32_t chunk, int k, int w)
{
	uint64_t full = bytes/chunk, part = bytes % chunk, n;
	n = full > (uint64_t)k ? (full - k + w - 1)/w*chunk : 0;
	if (part && (int)(full % w) == k)
		n += part;
	return n;
}

static void remove_files(uint32_t mask)
{
	char fn[64];
	int p;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			file_name(fn, rec.name, 0, rec.k[p], rec.width);
			exfat_delete(&vols[p], fn);
		}
}

int catalog_fs_rec_begin(uint32_t mask, uint64_t lba, const uint64_t *blocks, const char *name, uint32_t id,
	uint32_t chunk, int mode, uint64_t ring)
{
	struct exfat_file f;
	char fn[64];
	const char *why;
	uint32_t made = 0;
	int p, k = 0, r, kind;
	memset(&rec, 0, sizeof(rec));
	base_name(rec.name, name, id);
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p))
			rec.k[p] = k++;
	rec.width = k;
	for (kind = 0; kind < 2; kind++) {
		file_name(fn, rec.name, kind, 0, rec.width);
		if (exfat_name_check(fn, &why)) {
			printf("Error: the file name \"%s\" is not allowed on an exFAT volume (%s): rec_meta name=<another>\n",
				fn, why);
			return -1;
		}
	}
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p))
			for (kind = 0; kind < 2; kind++) {
				file_name(fn, rec.name, kind, rec.k[p], rec.width);
				r = exfat_find(&vols[p], fn, &f);
				if (r == 0) {
					printf("Error: nvme%d: a file named \"%s\" is on the volume: rec_meta name=<another> (or "
						"rec_delete the recording it belongs to)\n", p, fn);
					return -1;
				}
				if (r != EXFAT_ENOENT) {
					fs_error(p, "lookup", fn, r);
					return -1;
				}
			}
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			uint32_t sh = nvme_ctrls[p].lba_shift;
			file_name(fn, rec.name, 0, rec.k[p], rec.width);
			r = exfat_create(&vols[p], fn, lba << sh, blocks[p] << sh, 0x20, catalog_unix_us(), &rec.f[p]);
			if (r < 0) {
				if (r == EXFAT_ENOSPC)
					printf("Error: nvme%d: LBAs %llu..%llu are not free on the exFAT volume (files of a PC, or "
						"of other recordings): use auto\n", p, (unsigned long long)lba,
						(unsigned long long)(lba + blocks[p] - 1));
				else
					fs_error(p, "create", fn, r);
				remove_files(made);
				return -1;
			}
			made |= 1u << p;
		}
	rec.active = 1;
	rec.mask   = mask;
	rec.chunk  = chunk;
	rec.mode   = mode;
	rec.ring   = ring;
	return 0;
}

void catalog_fs_rec_abort(void)
{
	if (rec.active)
		remove_files(rec.mask);
	rec.active = 0;
}

void catalog_fs_rec_checkpoint(uint64_t bytes)
{
	int p, r;
	if (!rec.active)
		return;
	if (rec.mode == CATALOG_MODE_RING && bytes > rec.ring)
		bytes = rec.ring;
	for (p = 0; p < NPORTS; p++)
		if (rec.mask & (1u << p)) {
			uint64_t vdl = member_bytes(bytes, rec.chunk, rec.k[p], rec.width);
			if (vdl > rec.f[p].length)
				vdl = rec.f[p].length;
			if ((r = exfat_set_length(&vols[p], &rec.f[p], rec.f[p].length, vdl, catalog_unix_us(), 0)) < 0 &&
			    !rec.errors++)
				fs_error(p, "checkpoint", NULL, r);
		}
}

/* .sigmf-meta ------------------------------------------------------------------------------------------ */

/* Streams text into a file's clusters, one piece at a time. */
struct meta_out {
	int      port;
	uint64_t off, len, cap;
	uint32_t n;
	uint8_t  piece[EXFAT_PIECE];
};

static void out_bytes(struct meta_out *m, const char *s, int n)
{
	for (; n > 0; n--, s++) {
		if (m->len >= m->cap)
			return;
		m->piece[m->n++] = *s;
		m->len++;
		if (m->n == EXFAT_PIECE) {
			exfat_put(&vols[m->port], m->off + m->len - EXFAT_PIECE, m->piece);
			m->n = 0;
		}
	}
}

static void out(struct meta_out *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out(struct meta_out *m, const char *fmt, ...)
{
	char b[200];              /* every call below prints less */
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	out_bytes(m, b, n < (int)sizeof(b) ? n : (int)sizeof(b) - 1);
}

static void out_str(struct meta_out *m, const char *s)
{
	out_bytes(m, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			out(m, "\\%c", *s);
		else if ((uint8_t)*s < 0x20)
			out(m, "\\u%04x", (uint8_t)*s);
		else
			out_bytes(m, s, 1);
	}
	out_bytes(m, "\"", 1);
}

static int sample_bytes(const char *dt)
{
	int n = 1;
	if (!dt[0])
		return 1;
	if (strstr(dt + 1, "16"))
		n = 2;
	else if (strstr(dt + 1, "32"))
		n = 4;
	else if (strstr(dt + 1, "64"))
		n = 8;
	return dt[0] == 'c' ? 2*n : n;
}

static void iso_utc(char *b, uint64_t us)
{
	static const uint8_t md[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	uint64_t s = us/1000000, d = s/86400;
	uint32_t y = 1970, m = 0, sec = s % 86400;
	for (;;) {
		uint32_t yd = (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 366 : 365;
		if (d < yd)
			break;
		d -= yd;
		y++;
	}
	for (;; m++) {
		uint32_t l = md[m] + (m == 1 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
		if (d < l)
			break;
		d -= l;
	}
	snprintf(b, 40, "%04lu-%02lu-%02luT%02lu:%02lu:%02lu.%06luZ", (unsigned long)y, (unsigned long)m + 1,
		(unsigned long)d + 1, (unsigned long)sec/3600, (unsigned long)sec/60 % 60, (unsigned long)sec % 60,
		(unsigned long)(us % 1000000));
}

static void annotation(struct meta_out *m, int *first, uint64_t sample, const char *label, const char *comment)
{
	out(m, "%s\n    {\"core:sample_start\": %llu, \"core:sample_count\": 1, \"core:label\": \"%s\", \"core:comment\": ",
		*first ? "" : ",", (unsigned long long)sample, label);
	out_str(m, comment);
	out(m, "}");
	*first = 0;
}

static struct meta_out m;

static int write_meta(int p, const struct catalog_entry *e, int k, const char *base)
{
	struct exfat_file f;
	char fn[64], t[40], c[128];
	uint64_t logged = 0, off, n, bytes, nsamples, ss;
	int j, r, first = 1;
	memset(&m, 0, sizeof(m));
	m.port = p;
	m.cap  = 64u << 10;
	file_name(fn, base, 1, k, e->width);
	exfat_delete(&vols[p], fn);
	if ((r = exfat_find_free(&vols[p], 0, m.cap, 0, &m.off)) < 0 ||
	    (r = exfat_create(&vols[p], fn, m.off, m.cap, 0x20, catalog_unix_us(), &f)) < 0) {
		fs_error(p, "create", fn, r);
		return -1;
	}
	for (j = 0; j < (int)e->drops_logged; j++) {
		catalog_found_drop(j, &off, &n);
		logged += n;
	}
	ss = sample_bytes(e->datatype);
	bytes = e->bytes - e->oldest;
	nsamples = bytes/ss;
	out(&m, "{\n  \"global\": {\n    \"core:datatype\": \"%s\",\n    \"core:version\": \"1.0.0\",\n",
		e->datatype[0] ? e->datatype : "ru8");
	if (e->rate_mhz)
		out(&m, "    \"core:sample_rate\": %llu.%03llu,\n", (unsigned long long)(e->rate_mhz/1000),
			(unsigned long long)(e->rate_mhz % 1000));
	out(&m, "    \"core:recorder\": \"LiteRecorder\",\n    \"core:description\": ");
	if (e->text[0])
		out_str(&m, e->text);
	else {
		snprintf(t, sizeof(t), "LiteRecorder recording %lu", (unsigned long)e->id);
		out_str(&m, t);
	}
	out(&m, ",\n    \"core:extensions\": [{\"name\": \"literec\", \"version\": \"1.0.0\", \"optional\": true}],\n");
	out(&m, "    \"literec:recording_id\": %lu,\n    \"literec:gaps\": \"skip\",\n", (unsigned long)e->id);
	out(&m, "    \"literec:dropped_bytes\": %llu,\n", (unsigned long long)e->dropped);
	out(&m, "    \"literec:drop_events\": %lu,\n", (unsigned long)e->drops_total);
	out(&m, "    \"literec:drop_events_logged\": %lu,\n", (unsigned long)e->drops_logged);
	out(&m, "    \"literec:unplaced_dropped_bytes\": %llu", (unsigned long long)(e->dropped > logged ? e->dropped - logged : 0));
	if (e->width > 1)
		out(&m, ",\n    \"literec:part\": %d,\n    \"literec:parts\": %d,\n    \"literec:chunk_bytes\": %lu", k + 1,
			e->width, (unsigned long)e->chunk);
	if (e->mode == CATALOG_MODE_RING)
		out(&m, ",\n    \"literec:ring_bytes\": %llu,\n    \"literec:oldest_offset\": %llu", (unsigned long long)e->ring,
			(unsigned long long)(e->ring ? e->oldest % e->ring : 0));
	out(&m, "\n  },\n  \"captures\": [\n    {\"core:sample_start\": 0, \"core:global_index\": 0");
	if (e->u0) {
		iso_utc(t, e->u0);
		out(&m, ", \"core:datetime\": \"%s\"", t);
	}
	if (e->freq_mhz)
		out(&m, ", \"core:frequency\": %llu.%03llu", (unsigned long long)(e->freq_mhz/1000),
			(unsigned long long)(e->freq_mhz % 1000));
	out(&m, "}\n  ],\n  \"annotations\": [");
	if (nsamples && e->width == 1 && e->mode != CATALOG_MODE_RING) {
		for (j = 0; j < (int)e->drops_logged; j++) {
			catalog_found_drop(j, &off, &n);
			snprintf(c, sizeof(c), "%llu bytes dropped by the recorder %s data offset %llu%s (not in the file)",
				(unsigned long long)n, off/ss < nsamples ? "before" : "after", (unsigned long long)off,
				off/ss < nsamples ? "" : ", the end of the recording");
			annotation(&m, &first, off/ss < nsamples ? off/ss : nsamples - 1, "drop", c);
		}
	}
	if (nsamples && e->mode == CATALOG_MODE_RING && e->trigger != CATALOG_NO_TRIGGER && e->trigger >= e->oldest &&
	    e->width == 1) {
		uint64_t s = (e->trigger - e->oldest)/ss;
		snprintf(c, sizeof(c), "ring trigger at data offset %llu", (unsigned long long)e->trigger);
		annotation(&m, &first, s < nsamples ? s : nsamples - 1, "trigger", c);
	}
	out(&m, "%s]\n}\n", first ? "" : "\n  ");
	if (m.n)
		exfat_put(&vols[p], m.off + m.len - m.n, m.piece);
	if ((r = exfat_set_length(&vols[p], &f, m.len, m.len, catalog_unix_us(), 1)) < 0) {
		fs_error(p, "length", fn, r);
		return -1;
	}
	return 0;
}

int catalog_fs_rec_end(const struct catalog_set *s, const struct catalog_entry *e, struct catalog_fs_cut *cut)
{
	struct exfat_file f;
	char base[40], fn[64];
	uint64_t bytes = e->mode == CATALOG_MODE_RING && e->bytes > e->ring ? e->ring : e->bytes;
	int k, r, err = 0;
	base_name(base, e->name, e->id);
	for (k = 0; k < e->width; k++) {
		int q = e->order[k] & 7, p = s->port_of[q];
		struct catalog_fs_cut c;
		uint64_t n;
		memset(&c, 0, sizeof(c));
		c.port = -1;
		if (cut)
			cut[k] = c;
		if (p < 0 || !on[p])
			continue;
		c.port = p;
		file_name(fn, base, 0, k, e->width);
		strcpy(c.name, fn);
		if (rec.active && (rec.mask & (1u << p)))
			f = rec.f[p];
		else if ((r = exfat_find(&vols[p], fn, &f)) == EXFAT_ENOENT) {
			printf("nvme%d: \"%s\" is not on the volume (deleted or renamed on a PC?): its length is left "
				"alone\n", p, fn);
			if (cut)
				cut[k] = c;
			continue;
		} else if (r < 0) {
			fs_error(p, "lookup", fn, r);
			err = -1;
			continue;
		}
		c.found = 1;
		c.old_length = f.length;
		c.old_valid  = f.valid;
		/* Never past the file's allocation: the catalog's bytes were written inside it. */
		n = member_bytes(bytes, e->chunk, k, e->width);
		if (n > f.length)
			n = f.length;
		r = e->mode == CATALOG_MODE_RING ? exfat_set_length(&vols[p], &f, f.length, n, catalog_unix_us(), 0) :
			exfat_set_length(&vols[p], &f, n, n, catalog_unix_us(), 1);
		if (r < 0) {
			fs_error(p, "length", fn, r);
			err = -1;
		}
		c.length = f.length;
		c.valid  = f.valid;
		if (write_meta(p, e, k, base))
			err = -1;
		else
			c.meta = 1;
		if (cut)
			cut[k] = c;
	}
	rec.active = 0;
	return err;
}

int catalog_fs_delete(const struct catalog_set *s, const struct catalog_entry *e)
{
	char base[40], fn[64];
	int k, kind, r, err = 0;
	base_name(base, e->name, e->id);
	for (k = 0; k < e->width; k++) {
		int q = e->order[k] & 7, p = s->port_of[q];
		if (p < 0 || !on[p])
			continue;
		for (kind = 0; kind < 2; kind++) {
			file_name(fn, base, kind, k, e->width);
			r = exfat_delete(&vols[p], fn);
			if (r == EXFAT_ENOENT)
				printf("nvme%d: \"%s\" is not on the volume (deleted or renamed on a PC?)\n", p, fn);
			else if (r < 0) {
				fs_error(p, "delete", fn, r);
				err = -1;
			}
		}
	}
	return err;
}

#endif
