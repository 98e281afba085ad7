// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// exFAT volumes (see exfat.h; layouts, checksums and the up-case table from Microsoft's exFAT file
// system specification, 2019, sections 3, 6 and 7). Every access goes through one 512-byte piece
// cache (`pc`), written back at the end of each public operation.

#include <stdint.h>
#include <string.h>

#include "exfat.h"

/* On-disk offsets ------------------------------------------------------------------------------------ */

/* Boot sector (spec 3.1) */
#define B_FS_NAME        3
#define B_PART_OFFSET    64
#define B_VOL_LENGTH     72
#define B_FAT_OFFSET     80
#define B_FAT_LENGTH     84
#define B_HEAP_OFFSET    88
#define B_CLUSTERS       92
#define B_ROOT           96
#define B_SERIAL         100
#define B_REVISION       104
#define B_FLAGS          106
#define B_SECTOR_SHIFT   108
#define B_CLUSTER_SHIFT  109
#define B_NFATS          110
#define B_DRIVE          111
#define B_PERCENT        112
#define B_BOOTCODE       120

/* Directory entries (spec 6, 7): 32 bytes each */
#define T_END            0x00
#define T_BITMAP         0x81
#define T_UPCASE         0x82
#define T_LABEL          0x83
#define T_FILE           0x85
#define T_STREAM         0xc0
#define T_NAME           0xc1
#define IN_USE           0x80

#define F_SECONDARY      1
#define F_CHECKSUM       2
#define F_ATTR           4
#define F_CREATE         8
#define F_MODIFY         12
#define F_ACCESS         16
#define F_CREATE_10MS    20
#define F_MODIFY_10MS    21
#define F_CREATE_UTC     22
#define F_MODIFY_UTC     23
#define F_ACCESS_UTC     24

#define S_FLAGS          1
#define S_NAME_LEN       3
#define S_NAME_HASH      4
#define S_VALID          8
#define S_FIRST          20
#define S_LENGTH         24

#define FLAG_ALLOC       0x01
#define FLAG_NOFATCHAIN  0x02

#define MAX_SET          (2 + (EXFAT_NAME_LIMIT + 14)/15)

static void     put16(uint8_t *b, uint16_t v) { b[0] = v; b[1] = v >> 8; }
static void     put32(uint8_t *b, uint32_t v) { put16(b, v); put16(b + 2, v >> 16); }
static void     put64(uint8_t *b, uint64_t v) { put32(b, v); put32(b + 4, v >> 32); }
static uint16_t get16(const uint8_t *b)       { return b[0] | (b[1] << 8); }
static uint32_t get32(const uint8_t *b)       { return get16(b) | ((uint32_t)get16(b + 2) << 16); }
static uint64_t get64(const uint8_t *b)       { return get32(b) | ((uint64_t)get32(b + 4) << 32); }

const char *exfat_strerror(int err)
{
	switch (err) {
	case EXFAT_EIO:       return "I/O error";
	case EXFAT_ENOTEXFAT: return "no exFAT volume (boot sector missing or its checksum wrong)";
	case EXFAT_EUNSUP:    return "an exFAT variant this BIOS does not handle";
	case EXFAT_ENAME:     return "invalid file name";
	case EXFAT_EEXIST:    return "a file of that name exists";
	case EXFAT_ENOENT:    return "no such file";
	case EXFAT_ENOSPC:    return "no contiguous free space that large on the volume";
	case EXFAT_EDIRFULL:  return "the root directory is full";
	case EXFAT_ESIZE:     return "volume size or cluster size out of range";
	case EXFAT_ECORRUPT:  return "inconsistent volume structures";
	case EXFAT_ERANGE:    return "length beyond the file's allocation";
	}
	return "?";
}

/* Up-case table (spec 7.2.5.1, the recommended table) ------------------------------------------------ */

/* The recommended table's mappings as runs: code points first, first + stride, ... (count of them)
 * map to themselves + delta; every other code point maps to itself. */
static const struct { uint16_t first; uint8_t count, stride; int16_t delta; } up_runs[] = {
	{0x0061, 26, 1, -32}, {0x00e0, 23, 1, -32}, {0x00f8, 7, 1, -32}, {0x00ff, 1, 1, 121},
	{0x0101, 24, 2, -1}, {0x0133, 3, 2, -1}, {0x013a, 8, 2, -1}, {0x014b, 23, 2, -1},
	{0x017a, 3, 2, -1}, {0x0180, 1, 1, 195}, {0x0183, 2, 2, -1}, {0x0188, 1, 1, -1},
	{0x018c, 1, 1, -1}, {0x0192, 1, 1, -1}, {0x0195, 1, 1, 97}, {0x0199, 1, 1, -1},
	{0x019a, 1, 1, 163}, {0x019e, 1, 1, 130}, {0x01a1, 3, 2, -1}, {0x01a8, 1, 1, -1},
	{0x01ad, 1, 1, -1}, {0x01b0, 1, 1, -1}, {0x01b4, 2, 2, -1}, {0x01b9, 1, 1, -1},
	{0x01bd, 1, 1, -1}, {0x01bf, 1, 1, 56}, {0x01c6, 1, 1, -2}, {0x01c9, 1, 1, -2},
	{0x01cc, 1, 1, -2}, {0x01ce, 8, 2, -1}, {0x01dd, 1, 1, -79}, {0x01df, 9, 2, -1},
	{0x01f3, 1, 1, -2}, {0x01f5, 1, 1, -1}, {0x01f9, 20, 2, -1}, {0x0223, 9, 2, -1},
	{0x023a, 1, 1, 10795}, {0x023c, 1, 1, -1}, {0x023e, 1, 1, 10792}, {0x0242, 1, 1, -1},
	{0x0247, 5, 2, -1}, {0x0253, 1, 1, -210}, {0x0254, 1, 1, -206}, {0x0256, 2, 1, -205},
	{0x0259, 1, 1, -202}, {0x025b, 1, 1, -203}, {0x0260, 1, 1, -205}, {0x0263, 1, 1, -207},
	{0x0268, 1, 1, -209}, {0x0269, 1, 1, -211}, {0x026b, 1, 1, 10743}, {0x026f, 1, 1, -211},
	{0x0272, 1, 1, -213}, {0x0275, 1, 1, -214}, {0x027d, 1, 1, 10727}, {0x0280, 1, 1, -218},
	{0x0283, 1, 1, -218}, {0x0288, 1, 1, -218}, {0x0289, 1, 1, -69}, {0x028a, 2, 1, -217},
	{0x028c, 1, 1, -71}, {0x0292, 1, 1, -219}, {0x037b, 3, 1, 130}, {0x03ac, 1, 1, -38},
	{0x03ad, 3, 1, -37}, {0x03b1, 17, 1, -32}, {0x03c2, 1, 1, -31}, {0x03c3, 9, 1, -32},
	{0x03cc, 1, 1, -64}, {0x03cd, 2, 1, -63}, {0x03d9, 12, 2, -1}, {0x03f2, 1, 1, 7},
	{0x03f8, 1, 1, -1}, {0x03fb, 1, 1, -1}, {0x0430, 32, 1, -32}, {0x0450, 16, 1, -80},
	{0x0461, 17, 2, -1}, {0x048b, 27, 2, -1}, {0x04c2, 7, 2, -1}, {0x04cf, 1, 1, -15},
	{0x04d1, 34, 2, -1}, {0x0561, 38, 1, -48}, {0x1d7d, 1, 1, 3814}, {0x1e01, 75, 2, -1},
	{0x1ea1, 45, 2, -1}, {0x1f00, 8, 1, 8}, {0x1f10, 6, 1, 8}, {0x1f20, 8, 1, 8}, {0x1f30, 8, 1, 8},
	{0x1f40, 6, 1, 8}, {0x1f51, 4, 2, 8}, {0x1f60, 8, 1, 8}, {0x1f70, 2, 1, 74}, {0x1f72, 4, 1, 86},
	{0x1f76, 2, 1, 100}, {0x1f78, 2, 1, 128}, {0x1f7a, 2, 1, 112}, {0x1f7c, 2, 1, 126},
	{0x1f80, 8, 1, 8}, {0x1f90, 8, 1, 8}, {0x1fa0, 8, 1, 8}, {0x1fb0, 2, 1, 8}, {0x1fb3, 1, 1, 9},
	{0x1fcc, 1, 1, -9}, {0x1fd0, 2, 1, 8}, {0x1fe0, 2, 1, 8}, {0x1fe5, 1, 1, 7}, {0x1ffc, 1, 1, -9},
	{0x214e, 1, 1, -28}, {0x2170, 16, 1, -16}, {0x2184, 1, 1, -1}, {0x24d0, 26, 1, -26},
	{0x2c30, 47, 1, -48}, {0x2c61, 1, 1, -1}, {0x2c68, 3, 2, -1}, {0x2c76, 1, 1, -1},
	{0x2c81, 50, 2, -1}, {0x2d00, 38, 1, -7264}, {0xff41, 26, 1, -32}
};

#define UP_RUNS (sizeof(up_runs)/sizeof(up_runs[0]))

/* The up-case of c, with *i the index of the run to look at first: the runs are sorted and do not
 * overlap, so a caller going through increasing code points passes the same index on (linear in
 * all); 0 starts at the first run. */
static uint16_t upcase_at(uint32_t c, unsigned *i)
{
	while (*i < UP_RUNS && c > up_runs[*i].first + ((up_runs[*i].count - 1u) << (up_runs[*i].stride - 1)))
		(*i)++;
	if (*i < UP_RUNS && c >= up_runs[*i].first && ((c - up_runs[*i].first) & (up_runs[*i].stride - 1)) == 0)
		return c + up_runs[*i].delta;
	return c;
}

static uint16_t upcase(uint16_t c)
{
	unsigned i = 0;
	return upcase_at(c, &i);
}

/* Piece cache and device access ----------------------------------------------------------------------- */

static uint8_t  pc[EXFAT_PIECE];
static const struct exfat_dev *pc_dev;
static uint64_t pc_off;
static int      pc_valid, pc_dirty, io_err;

static void pc_writeback(void)
{
	if (pc_valid && pc_dirty && pc_dev->write(pc_dev->ctx, pc_off, pc) < 0)
		io_err = 1;
	pc_dirty = 0;
}

/* The piece at `off` (a multiple of 512) in the cache; NULL after an I/O error. */
static uint8_t *piece(const struct exfat_vol *v, uint64_t off)
{
	if (pc_valid && pc_dev == v->dev && pc_off == off)
		return pc;
	pc_writeback();
	pc_valid = 0;
	if (v->dev->read(v->dev->ctx, off, pc) < 0) {
		io_err = 1;
		return NULL;
	}
	pc_dev = v->dev;
	pc_off = off;
	pc_valid = 1;
	return pc;
}

/* Writes a whole piece (the cache forgets it). */
static void put_piece(const struct exfat_vol *v, uint64_t off, const uint8_t *b)
{
	if (pc_valid && pc_dev == v->dev && pc_off == off)
		pc_valid = pc_dirty = 0;
	if (v->dev->write(v->dev->ctx, off, b) < 0)
		io_err = 1;
}

static void zero_bytes(const struct exfat_vol *v, uint64_t off, uint64_t bytes)
{
	static const uint8_t z[EXFAT_PIECE];
	if (pc_valid && pc_dev == v->dev && pc_off + EXFAT_PIECE > off && pc_off < off + bytes)
		pc_valid = pc_dirty = 0;
	if (v->dev->zero) {
		if (v->dev->zero(v->dev->ctx, off, bytes) < 0)
			io_err = 1;
		return;
	}
	for (; bytes; off += EXFAT_PIECE, bytes -= EXFAT_PIECE)
		put_piece(v, off, z);
}

/* End of an operation: write back, flush the callbacks' cache; `r` or EXFAT_EIO. */
static int done(const struct exfat_vol *v, int r)
{
	pc_writeback();
	if (v->dev->flush && v->dev->flush(v->dev->ctx) < 0)
		io_err = 1;
	if (io_err) {
		io_err = 0;
		pc_valid = 0;
		return EXFAT_EIO;
	}
	return r;
}

static uint8_t *at(const struct exfat_vol *v, uint64_t off)   /* byte `off`, in the cache */
{
	uint8_t *p = piece(v, off & ~(uint64_t)(EXFAT_PIECE - 1));
	return p ? p + (off & (EXFAT_PIECE - 1)) : NULL;
}

/* Geometry ------------------------------------------------------------------------------------------- */

uint64_t exfat_cluster_bytes(const struct exfat_vol *v)
{
	return 1ULL << v->cluster_shift;
}

uint64_t exfat_cluster_off(const struct exfat_vol *v, uint32_t c)
{
	return ((uint64_t)v->heap_offset << v->sector_shift) + ((uint64_t)(c - 2) << v->cluster_shift);
}

uint32_t exfat_off_cluster(const struct exfat_vol *v, uint64_t off)
{
	return ((off - ((uint64_t)v->heap_offset << v->sector_shift)) >> v->cluster_shift) + 2;
}

uint32_t exfat_default_cluster(uint64_t bytes)
{
	if (bytes < (2ULL << 30))
		return 32u << 10;
	if (bytes < (512ULL << 30))
		return 128u << 10;
	return 1u << 20;
}

static uint64_t clusters_of(const struct exfat_vol *v, uint64_t bytes)
{
	return (bytes + exfat_cluster_bytes(v) - 1) >> v->cluster_shift;
}

static uint64_t fat_entry_off(const struct exfat_vol *v, uint32_t c)
{
	return ((uint64_t)v->fat_offset << v->sector_shift) + 4ULL*c;
}

static int cluster_ok(const struct exfat_vol *v, uint32_t c)
{
	return c >= 2 && c - 2 < v->clusters;
}

/* Next cluster of a FAT chain: 0 at its end (or when the chain leaves the heap). */
static uint32_t fat_next(const struct exfat_vol *v, uint32_t c)
{
	uint8_t *p = at(v, fat_entry_off(v, c));
	uint32_t n = p ? get32(p) : 0;
	return cluster_ok(v, n) ? n : 0;
}

/* Checksums (spec 3.4, 6.3.3, 7.2.2, 7.6.4) --------------------------------------------------------- */

static uint32_t sum32(uint32_t s, uint8_t b) { return ((s & 1) ? 0x80000000u : 0) + (s >> 1) + b; }
static uint16_t sum16(uint16_t s, uint8_t b) { return ((s & 1) ? 0x8000 : 0) + (s >> 1) + b; }

static uint16_t set_checksum(const uint8_t *set, int entries)
{
	uint16_t s = 0;
	int i;
	for (i = 0; i < 32*entries; i++)
		if (i != F_CHECKSUM && i != F_CHECKSUM + 1)
			s = sum16(s, set[i]);
	return s;
}

/* Names --------------------------------------------------------------------------------------------- */

/* The reason for a forbidden character c (spec 7.7.3, FileName): which one, what is allowed. */
static const char *forbidden(uint32_t c)
{
	static const char rest[] = " is not allowed: exFAT forbids the characters \" * / : < > ? \\ | and control "
		"characters (U+0000-U+001F) in names; letters of any language, digits, spaces and other signs are allowed";
	static const char hex[] = "0123456789ABCDEF";
	static char b[sizeof(rest) + 8];
	int n = 0;
	if (c < 0x20) {
		memcpy(b, "U+00", 4);
		b[4] = hex[c >> 4];
		b[5] = hex[c & 15];
		n = 6;
	} else {
		b[0] = '\'';
		b[1] = c;
		b[2] = '\'';
		n = 3;
	}
	memcpy(b + n, rest, sizeof(rest));
	return b;
}

/* UTF-8 to UTF-16 (BMP); the number of code units, or EXFAT_ENAME with *why. */
static int utf16(const char *s, uint16_t *out, const char **why)
{
	const uint8_t *u = (const uint8_t *)s;
	int n = 0;
	while (*u) {
		uint32_t c;
		if (*u < 0x80)
			c = *u++;
		else if ((*u & 0xe0) == 0xc0 && (u[1] & 0xc0) == 0x80) {
			c = ((u[0] & 0x1f) << 6) | (u[1] & 0x3f);
			u += 2;
			if (c < 0x80)
				goto bad;
		} else if ((*u & 0xf0) == 0xe0 && (u[1] & 0xc0) == 0x80 && (u[2] & 0xc0) == 0x80) {
			c = ((u[0] & 0x0f) << 12) | ((u[1] & 0x3f) << 6) | (u[2] & 0x3f);
			u += 3;
			if (c < 0x800 || (c >= 0xd800 && c < 0xe000))
				goto bad;
		} else if ((*u & 0xf8) == 0xf0) {
			*why = "characters beyond U+FFFF are not supported";
			return EXFAT_ENAME;
		} else
			goto bad;
		if (c < 0x20 || c == '"' || c == '*' || c == '/' || c == ':' || c == '<' || c == '>' || c == '?' ||
		    c == '\\' || c == '|') {
			*why = forbidden(c);
			return EXFAT_ENAME;
		}
		if (n == EXFAT_NAME_LIMIT) {
			*why = EXFAT_NAME_LIMIT == EXFAT_NAME_MAX ? "longer than 255 characters" :
				"longer than this build handles";
			return EXFAT_ENAME;
		}
		out[n++] = c;
	}
	if (n == 0) {
		*why = "empty";
		return EXFAT_ENAME;
	}
	if (out[n - 1] == ' ' || out[n - 1] == '.') {
		*why = "ends with a space or a dot (Windows cannot open such a file)";
		return EXFAT_ENAME;
	}
	return n;
bad:
	*why = "not valid UTF-8";
	return EXFAT_ENAME;
}

int exfat_name_check(const char *utf8, const char **why)
{
	uint16_t n[EXFAT_NAME_LIMIT];
	const char *w = NULL;
	int r = utf16(utf8, n, &w);
	if (why)
		*why = w;
	return r < 0 ? r : 0;
}

static uint16_t name_hash(const uint16_t *name, int n)
{
	uint16_t h = 0, c;
	int i;
	for (i = 0; i < n; i++) {
		c = upcase(name[i]);
		h = sum16(sum16(h, c & 0xff), c >> 8);
	}
	return h;
}

/* Time stamps (spec 7.4.8): local time = UTC here, UtcOffset valid with offset 0 ------------------------ */

static void timestamp(uint64_t unix_us, uint32_t *ts, uint8_t *ms10)
{
	static const uint8_t mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	uint64_t s = unix_us/1000000, days;
	uint32_t y = 1970, m = 0, sec;
	if (s < 315532800ULL) {                 /* before 1980-01-01: the earliest exFAT time */
		*ts = (1 << 21) | (1 << 16);
		*ms10 = 0;
		return;
	}
	days = s/86400;
	sec = s % 86400;
	for (;;) {
		uint32_t yd = (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 366 : 365;
		if (days < yd)
			break;
		days -= yd;
		y++;
	}
	for (;; m++) {
		uint32_t md = mdays[m] + (m == 1 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
		if (days < md)
			break;
		days -= md;
	}
	if (y > 2107)
		y = 2107;
	*ts = ((y - 1980) << 25) | ((m + 1) << 21) | ((days + 1) << 16) | ((sec/3600) << 11) | ((sec/60 % 60) << 5) |
		((sec % 60)/2);
	*ms10 = (sec % 2)*100 + (unix_us/10000) % 100;
}

/* Allocation bitmap ----------------------------------------------------------------------------------- */

static uint64_t bitmap_off(const struct exfat_vol *v)
{
	return exfat_cluster_off(v, v->bitmap_cluster);
}

static int bit_used(const struct exfat_vol *v, uint32_t c)
{
	uint8_t *p = at(v, bitmap_off(v) + (c - 2)/8);
	return p ? (*p >> ((c - 2) & 7)) & 1 : 1;
}

/* Bytes of the bitmap from cluster c's byte to the end of its piece. */
static uint32_t piece_room(const struct exfat_vol *v, uint32_t c)
{
	return EXFAT_PIECE - ((bitmap_off(v) + (c - 2)/8) & (EXFAT_PIECE - 1));
}

/* Marks n clusters from c used (val 1) or free (val 0): whole bytes at a time where it can (a
 * reservation of terabytes is millions of clusters). */
static void bits_set(const struct exfat_vol *v, uint32_t c, uint64_t n, int val)
{
	while (n) {
		uint8_t *p = at(v, bitmap_off(v) + (c - 2)/8);
		if (!p)
			return;
		pc_dirty = 1;
		if (((c - 2) & 7) == 0 && n >= 8) {
			uint64_t bytes = n/8 < piece_room(v, c) ? n/8 : piece_room(v, c);
			memset(p, val ? 0xff : 0, bytes);
			c += 8*bytes;
			n -= 8*bytes;
			continue;
		}
		if (val)
			*p |= 1 << ((c - 2) & 7);
		else
			*p &= ~(1 << ((c - 2) & 7));
		c++;
		n--;
	}
}

/* The first cluster marked used among n from c, or 0 (none; or an I/O error: io_err). */
static uint32_t bits_first_used(const struct exfat_vol *v, uint32_t c, uint64_t n)
{
	while (n) {
		uint8_t *p = at(v, bitmap_off(v) + (c - 2)/8);
		if (!p)
			return 0;
		if (((c - 2) & 7) == 0 && n >= 8) {
			uint64_t bytes = n/8 < piece_room(v, c) ? n/8 : piece_room(v, c), k;
			for (k = 0; k < bytes && !p[k]; k++)
				;
			if (k < bytes) {
				c += 8*k;
				while (!bit_used(v, c))
					c++;
				return c;
			}
			c += 8*bytes;
			n -= 8*bytes;
			continue;
		}
		if ((*p >> ((c - 2) & 7)) & 1)
			return c;
		c++;
		n--;
	}
	return 0;
}

int exfat_find_free(struct exfat_vol *v, uint64_t from, uint64_t bytes, uint64_t align, uint64_t *off)
{
	uint64_t need = clusters_of(v, bytes), run = 0, heap = (uint64_t)v->heap_offset << v->sector_shift;
	uint32_t c, start = 0, end = v->clusters + 2;
	if (!need)
		need = 1;
	c = 2;
	if (from > heap)
		c = exfat_off_cluster(v, from + exfat_cluster_bytes(v) - 1);
	for (; c >= 2 && c < end; c++) {
		uint8_t *p;
		if (((c - 2) & 7) == 0 && end - c >= 8) {
			if (!(p = at(v, bitmap_off(v) + (c - 2)/8)))
				return done(v, EXFAT_EIO);
			if (*p == 0xff) {                  /* 8 used clusters */
				run = 0;
				c += 7;
				continue;
			}
			if (*p == 0 && run && run + 8 < need) {   /* 8 free clusters that extend the run */
				run += 8;
				c += 7;
				continue;
			}
		}
		if (bit_used(v, c)) {
			run = 0;
			continue;
		}
		if (!run) {
			if (align > 1 && exfat_cluster_off(v, c) % align)
				continue;
			start = c;
		}
		if (++run == need) {
			*off = exfat_cluster_off(v, start);
			return done(v, 0);
		}
	}
	return done(v, EXFAT_ENOSPC);
}

int exfat_free_run(struct exfat_vol *v, uint64_t off, uint64_t *bytes)
{
	uint64_t heap = (uint64_t)v->heap_offset << v->sector_shift;
	uint32_t c, u;
	*bytes = 0;
	if (off < heap || (off & (exfat_cluster_bytes(v) - 1)))
		return done(v, EXFAT_ERANGE);
	c = exfat_off_cluster(v, off);
	if (c - 2 >= v->clusters)
		return done(v, 0);
	u = bits_first_used(v, c, v->clusters + 2 - c);
	*bytes = (uint64_t)((u ? u : v->clusters + 2) - c) << v->cluster_shift;
	return done(v, 0);
}

int exfat_used_in(struct exfat_vol *v, uint64_t off, uint64_t bytes, uint64_t *at)
{
	uint64_t heap = (uint64_t)v->heap_offset << v->sector_shift, end = off + bytes;
	uint32_t c, last;
	if (!bytes || end <= heap)
		return done(v, 0);
	c = off < heap ? 2 : exfat_off_cluster(v, off);
	if (c - 2 >= v->clusters)
		return done(v, 0);
	last = exfat_off_cluster(v, end - 1);
	if (last - 2 >= v->clusters)
		last = v->clusters + 1;
	c = bits_first_used(v, c, last - c + 1);
	if (c)
		*at = exfat_cluster_off(v, c);
	return done(v, c ? 1 : 0);
}

int exfat_free_clusters(struct exfat_vol *v, uint64_t *n)
{
	uint32_t c;
	*n = 0;
	for (c = 2; c < v->clusters + 2; c++)
		*n += !bit_used(v, c);
	return done(v, 0);
}

/* Directory -------------------------------------------------------------------------------------------- */

/* A position in the root directory (a FAT chain). */
struct dpos {
	uint32_t c, i;
};

static uint64_t dpos_off(const struct exfat_vol *v, const struct dpos *d)
{
	return exfat_cluster_off(v, d->c) + 32ULL*d->i;
}

/* Advances; 0 at the end of the directory's clusters. */
static int dpos_next(const struct exfat_vol *v, struct dpos *d)
{
	if (++d->i < (exfat_cluster_bytes(v) >> 5))
		return 1;
	d->i = 0;
	d->c = fat_next(v, d->c);
	return d->c != 0;
}

/* Reads the entry set whose primary is at *d: up to MAX_SET entries into set (32 bytes each), their
 * offsets into offs; the number of entries, or < 0. */
static int read_set(const struct exfat_vol *v, struct dpos d, uint8_t *set, uint64_t *offs)
{
	uint8_t *p = at(v, dpos_off(v, &d));
	int n, k;
	if (!p)
		return EXFAT_EIO;
	n = 1 + p[F_SECONDARY];
	if (n < 3 || n > MAX_SET)
		return EXFAT_ECORRUPT;
	for (k = 0; k < n; k++) {
		if (k && !dpos_next(v, &d))
			return EXFAT_ECORRUPT;
		offs[k] = dpos_off(v, &d);
		if (!(p = at(v, offs[k])))
			return EXFAT_EIO;
		memcpy(set + 32*k, p, 32);
	}
	if (set[32] != T_STREAM || get16(set + F_CHECKSUM) != set_checksum(set, n))
		return EXFAT_ECORRUPT;
	return n;
}

static void write_entry(const struct exfat_vol *v, uint64_t off, const uint8_t *e)
{
	uint8_t *p = at(v, off);
	if (p) {
		memcpy(p, e, 32);
		pc_dirty = 1;
	}
}

static void file_from_set(struct exfat_file *f, const uint8_t *set, const uint64_t *offs, int n)
{
	f->entry_off[0] = offs[0];
	f->entry_off[1] = offs[1];
	f->secondary    = n - 1;
	f->attributes   = get16(set + F_ATTR);
	f->flags        = set[32 + S_FLAGS];
	f->first_cluster = get32(set + 32 + S_FIRST);
	f->length       = get64(set + 32 + S_LENGTH);
	f->valid        = get64(set + 32 + S_VALID);
}

/* Finds the file `name` (n code units): 1 (*f), 0 (none), < 0. */
static int lookup(const struct exfat_vol *v, const uint16_t *name, int n, struct exfat_file *f, struct dpos *where)
{
	uint8_t set[32*MAX_SET];
	uint64_t offs[MAX_SET];
	struct dpos d = {v->root_cluster, 0};
	uint16_t h = name_hash(name, n);
	for (;;) {
		uint8_t *p = at(v, dpos_off(v, &d));
		int k, m;
		if (!p)
			return EXFAT_EIO;
		if (p[0] == T_END)
			return 0;
		if (p[0] == T_FILE && (m = read_set(v, d, set, offs)) > 0 && set[32 + S_NAME_LEN] == n &&
		    get16(set + 32 + S_NAME_HASH) == h) {
			for (k = 0; k < n; k++)
				if (upcase(get16(set + 64 + 32*(k/15) + 2 + 2*(k % 15))) != upcase(name[k]))
					break;
			if (k == n) {
				file_from_set(f, set, offs, m);
				if (where)
					*where = d;
				return 1;
			}
		}
		if (!dpos_next(v, &d))
			return 0;
	}
}

int exfat_find(struct exfat_vol *v, const char *name, struct exfat_file *f)
{
	uint16_t u[EXFAT_NAME_LIMIT];
	const char *why;
	int n = utf16(name, u, &why), r;
	if (n < 0)
		return n;
	r = lookup(v, u, n, f, NULL);
	return done(v, r < 0 ? r : r ? 0 : EXFAT_ENOENT);
}

/* First run of `need` unused entries in the root directory. */
static int dir_slots(const struct exfat_vol *v, int need, struct dpos *out)
{
	struct dpos d = {v->root_cluster, 0}, start = d;
	int run = 0;
	for (;;) {
		uint8_t *p = at(v, dpos_off(v, &d));
		if (!p)
			return EXFAT_EIO;
		if (p[0] & IN_USE)
			run = 0;
		else {
			if (!run)
				start = d;
			if (++run == need) {
				*out = start;
				return 0;
			}
		}
		if (!dpos_next(v, &d))
			return EXFAT_EDIRFULL;
	}
}

/* Writes a new entry set (secondaries first, the primary last) at d. */
static void put_set(const struct exfat_vol *v, struct dpos d, const uint8_t *set, int n)
{
	uint64_t offs[MAX_SET];
	int k;
	for (k = 0; k < n; k++) {
		offs[k] = dpos_off(v, &d);
		if (k + 1 < n)
			dpos_next(v, &d);
	}
	for (k = n - 1; k >= 0; k--)
		write_entry(v, offs[k], set + 32*k);
}

static int build_set(uint8_t *set, const uint16_t *name, int n, uint16_t attr, uint8_t flags, uint32_t first,
	uint64_t length, uint64_t valid, uint64_t unix_us)
{
	int entries = 2 + (n + 14)/15, k;
	uint32_t ts;
	uint8_t ms10;
	memset(set, 0, 32*entries);
	timestamp(unix_us, &ts, &ms10);
	set[0] = T_FILE;
	set[F_SECONDARY] = entries - 1;
	put16(set + F_ATTR, attr);
	put32(set + F_CREATE, ts);
	put32(set + F_MODIFY, ts);
	put32(set + F_ACCESS, ts);
	set[F_CREATE_10MS] = ms10;
	set[F_MODIFY_10MS] = ms10;
	set[F_CREATE_UTC] = set[F_MODIFY_UTC] = set[F_ACCESS_UTC] = 0x80;
	set[32] = T_STREAM;
	set[32 + S_FLAGS] = flags;
	set[32 + S_NAME_LEN] = n;
	put16(set + 32 + S_NAME_HASH, name_hash(name, n));
	put64(set + 32 + S_VALID, valid);
	put32(set + 32 + S_FIRST, first);
	put64(set + 32 + S_LENGTH, length);
	for (k = 0; k < n; k++) {
		uint8_t *e = set + 64 + 32*(k/15);
		e[0] = T_NAME;
		put16(e + 2 + 2*(k % 15), name[k]);
	}
	for (k = n; k < 15*(entries - 2); k++)
		set[64 + 32*(k/15)] = T_NAME;
	put16(set + F_CHECKSUM, set_checksum(set, entries));
	return entries;
}

static int create(struct exfat_vol *v, const char *name, uint64_t off, uint64_t reserve, uint16_t attr,
	uint64_t unix_us, struct exfat_file *f)
{
	uint16_t u[EXFAT_NAME_LIMIT];
	uint8_t set[32*MAX_SET];
	uint64_t need;
	uint32_t first = 0;
	struct dpos d;
	const char *why;
	int n = utf16(name, u, &why), r, entries;
	if (n < 0)
		return n;
	if ((r = lookup(v, u, n, f, NULL)) != 0)
		return r < 0 ? r : EXFAT_EEXIST;
	need = clusters_of(v, reserve);
	if (need) {
		if (off < ((uint64_t)v->heap_offset << v->sector_shift) || (off & (exfat_cluster_bytes(v) - 1)))
			return EXFAT_ERANGE;
		first = exfat_off_cluster(v, off);
		if (!cluster_ok(v, first) || need > v->clusters - (first - 2))
			return EXFAT_ENOSPC;
		if (bits_first_used(v, first, need) || io_err)
			return io_err ? EXFAT_EIO : EXFAT_ENOSPC;
	}
	entries = build_set(set, u, n, attr, FLAG_ALLOC | (need ? FLAG_NOFATCHAIN : 0), first, reserve, 0, unix_us);
	if ((r = dir_slots(v, entries, &d)) < 0)
		return r;
	/* The clusters first: a cut after it leaves clusters marked used that no file owns (fsck frees them),
	 * never a file whose clusters look free. */
	bits_set(v, first, need, 1);
	put_set(v, d, set, entries);
	r = lookup(v, u, n, f, NULL);
	return r == 1 ? 0 : r < 0 ? r : EXFAT_ECORRUPT;
}

int exfat_create(struct exfat_vol *v, const char *name, uint64_t off, uint64_t reserve, uint16_t attr,
	uint64_t unix_us, struct exfat_file *f)
{
	return done(v, create(v, name, off, reserve, attr, unix_us, f));
}

static int set_length(struct exfat_vol *v, struct exfat_file *f, uint64_t length, uint64_t valid, uint64_t unix_us,
	int shrink)
{
	uint8_t set[32*MAX_SET];
	uint64_t offs[MAX_SET], alloc, keep;
	struct dpos d;
	uint32_t ts;
	uint8_t ms10;
	int n;
	if (!(f->flags & FLAG_NOFATCHAIN) && f->first_cluster)
		return EXFAT_EUNSUP;
	alloc = clusters_of(v, f->length);
	if (valid > length || clusters_of(v, length) > alloc)
		return EXFAT_ERANGE;
	d.c = exfat_off_cluster(v, f->entry_off[0]);
	d.i = (f->entry_off[0] - exfat_cluster_off(v, d.c)) >> 5;
	if ((n = read_set(v, d, set, offs)) < 0)
		return n;
	if (get32(set + 32 + S_FIRST) != f->first_cluster || get64(set + 32 + S_LENGTH) != f->length)
		return EXFAT_ECORRUPT;
	keep = clusters_of(v, length);
	if (keep < alloc && !shrink)
		return EXFAT_ERANGE;
	timestamp(unix_us, &ts, &ms10);
	put32(set + F_MODIFY, ts);
	put32(set + F_ACCESS, ts);
	set[F_MODIFY_10MS] = ms10;
	put64(set + 32 + S_LENGTH, length);
	put64(set + 32 + S_VALID, valid);
	if (!keep) {
		put32(set + 32 + S_FIRST, 0);
		set[32 + S_FLAGS] = FLAG_ALLOC;
	}
	put16(set + F_CHECKSUM, set_checksum(set, n));
	write_entry(v, offs[1], set + 32);
	write_entry(v, offs[0], set);
	if (keep < alloc)
		bits_set(v, f->first_cluster + keep, alloc - keep, 0);
	file_from_set(f, set, offs, n);
	return 0;
}

int exfat_set_length(struct exfat_vol *v, struct exfat_file *f, uint64_t length, uint64_t valid, uint64_t unix_us,
	int shrink)
{
	return done(v, set_length(v, f, length, valid, unix_us, shrink));
}

static int delete(struct exfat_vol *v, const char *name)
{
	uint16_t u[EXFAT_NAME_LIMIT];
	uint8_t set[32*MAX_SET];
	uint64_t offs[MAX_SET];
	struct exfat_file f;
	struct dpos d;
	const char *why;
	int n = utf16(name, u, &why), r, k;
	if (n < 0)
		return n;
	if ((r = lookup(v, u, n, &f, &d)) <= 0)
		return r < 0 ? r : EXFAT_ENOENT;
	if ((n = read_set(v, d, set, offs)) < 0)
		return n;
	/* The primary first: from then on no reader sees the file. */
	for (k = 0; k < n; k++) {
		set[32*k] &= ~IN_USE;
		write_entry(v, offs[k], set + 32*k);
	}
	if (f.first_cluster && (f.flags & FLAG_NOFATCHAIN))
		bits_set(v, f.first_cluster, clusters_of(v, f.length), 0);
	else if (f.first_cluster) {
		uint32_t c = f.first_cluster, left = v->clusters;
		while (c && left--) {
			bits_set(v, c, 1, 0);
			c = fat_next(v, c);
		}
	}
	return 0;
}

int exfat_delete(struct exfat_vol *v, const char *name)
{
	return done(v, delete(v, name));
}

int exfat_put(struct exfat_vol *v, uint64_t off, const uint8_t *buf)
{
	put_piece(v, off, buf);
	return done(v, 0);
}

int exfat_write_file(struct exfat_vol *v, const char *name, const void *data, uint32_t len, uint64_t from,
	uint64_t unix_us)
{
	struct exfat_file f;
	uint8_t b[EXFAT_PIECE];
	uint64_t off;
	uint32_t k;
	int r;
	if ((r = exfat_name_check(name, NULL)) < 0)
		return r;
	r = exfat_delete(v, name);
	if (r < 0 && r != EXFAT_ENOENT)
		return r;
	if ((r = exfat_find_free(v, from, len, 0, &off)) < 0)
		return r;
	if ((r = exfat_create(v, name, off, len, 0x20, unix_us, &f)) < 0)
		return r;
	for (k = 0; k < len; k += EXFAT_PIECE) {
		uint32_t m = len - k < EXFAT_PIECE ? len - k : EXFAT_PIECE;
		memset(b, 0, sizeof(b));
		memcpy(b, (const uint8_t *)data + k, m);
		put_piece(v, off + k, b);
	}
	return exfat_set_length(v, &f, len, len, unix_us, 0);
}

/* Format --------------------------------------------------------------------------------------------- */

#define UPCASE_MAX_BYTES 4096       /* the table below takes 2854 */

/* Up-case table in the compressed form of spec 7.2.5.1: runs of three or more code points that map to
 * themselves as FFFFh, length; every other entry as its up-case value. Emitted to `out` (NULL: only
 * counted); returns the bytes, *chk the TableChecksum. */
static uint32_t upcase_table(const struct exfat_vol *v, uint64_t out, uint32_t *chk)
{
	uint8_t b[EXFAT_PIECE];
	uint32_t bytes = 0, s = 0, c = 0, run, w[2];
	unsigned i_run = 0, i_lit = 0;       /* two walks through the runs, each in increasing order */
	int k, nw;
	memset(b, 0, sizeof(b));
	while (c < 0x10000) {
		for (run = 0; c + run < 0x10000 && upcase_at(c + run, &i_run) == c + run; run++)
			;
		if (run >= 3) {
			w[0] = 0xffff;
			w[1] = run;
			nw = 2;
			c += run;
		} else {
			w[0] = upcase_at(c, &i_lit);
			nw = 1;
			c++;
		}
		for (k = 0; k < nw; k++) {
			b[bytes % EXFAT_PIECE] = w[k];
			b[bytes % EXFAT_PIECE + 1] = w[k] >> 8;
			s = sum32(sum32(s, w[k] & 0xff), w[k] >> 8);
			bytes += 2;
			if (bytes % EXFAT_PIECE == 0) {
				if (out)
					put_piece(v, out + bytes - EXFAT_PIECE, b);
				memset(b, 0, sizeof(b));
			}
		}
	}
	if (out && bytes % EXFAT_PIECE)
		put_piece(v, out + bytes/EXFAT_PIECE*EXFAT_PIECE, b);
	*chk = s;
	return bytes;
}

/* Piece `k` of sector `sec` (0-10) of the boot region. */
static void boot_piece(const struct exfat_vol *v, int sec, uint32_t k, uint8_t *b)
{
	uint32_t per = (1u << v->sector_shift)/EXFAT_PIECE;
	memset(b, 0, EXFAT_PIECE);
	if (sec == 0 && k == 0) {
		b[0] = 0xeb;
		b[1] = 0x76;
		b[2] = 0x90;
		memcpy(b + B_FS_NAME, "EXFAT   ", 8);
		put64(b + B_PART_OFFSET, 0);
		put64(b + B_VOL_LENGTH, v->sectors);
		put32(b + B_FAT_OFFSET, v->fat_offset);
		put32(b + B_FAT_LENGTH, v->fat_length);
		put32(b + B_HEAP_OFFSET, v->heap_offset);
		put32(b + B_CLUSTERS, v->clusters);
		put32(b + B_ROOT, v->root_cluster);
		put32(b + B_SERIAL, v->serial);
		put16(b + B_REVISION, 0x0100);
		put16(b + B_FLAGS, 0);
		b[B_SECTOR_SHIFT]  = v->sector_shift;
		b[B_CLUSTER_SHIFT] = v->cluster_shift - v->sector_shift;
		b[B_NFATS] = 1;
		b[B_DRIVE] = 0x80;
		b[B_PERCENT] = 0xff;                      /* not available */
		memset(b + B_BOOTCODE, 0xf4, 510 - B_BOOTCODE);
		b[510] = 0x55;
		b[511] = 0xaa;
	}
	if (sec >= 1 && sec <= 8 && k == per - 1) {       /* ExtendedBootSignature */
		b[EXFAT_PIECE - 2] = 0x55;
		b[EXFAT_PIECE - 1] = 0xaa;
	}
}

static void write_boot_region(const struct exfat_vol *v)
{
	uint8_t b[EXFAT_PIECE];
	uint32_t per = (1u << v->sector_shift)/EXFAT_PIECE, k, s = 0, i;
	uint64_t sec = 1ULL << v->sector_shift;
	int n, copy;
	for (n = 0; n < 11; n++)
		for (k = 0; k < per; k++) {
			boot_piece(v, n, k, b);
			for (i = 0; i < EXFAT_PIECE; i++)
				if (!(n == 0 && k == 0 && (i == B_FLAGS || i == B_FLAGS + 1 || i == B_PERCENT)))
					s = sum32(s, b[i]);
		}
	/* The backup first, then the main region (its boot sector last). */
	for (copy = 1; copy >= 0; copy--) {
		for (i = 0; i < EXFAT_PIECE; i += 4)
			put32(b + i, s);
		for (k = 0; k < per; k++)
			put_piece(v, (12*copy + 11)*sec + k*EXFAT_PIECE, b);
		for (n = 10; n >= 0; n--)
			for (k = 0; k < per; k++) {
				boot_piece(v, n, k, b);
				put_piece(v, (12*copy + n)*sec + k*EXFAT_PIECE, b);
			}
	}
}

/* Writes the FAT chain c, c+1, ..., c+n-1 (end of chain after the last). */
static void fat_chain(const struct exfat_vol *v, uint32_t c, uint32_t n)
{
	uint32_t k;
	for (k = 0; k < n; k++) {
		uint8_t *p = at(v, fat_entry_off(v, c + k));
		if (!p)
			return;
		put32(p, k + 1 < n ? c + k + 1 : 0xffffffffu);
		pc_dirty = 1;
	}
}

static int format(struct exfat_vol *v, const struct exfat_dev *d, uint64_t bytes, uint32_t sector, uint32_t cluster,
	const char *label, uint32_t serial, const char *first_name, uint64_t first_bytes, uint16_t first_attr,
	struct exfat_file *first)
{
	static const uint8_t zero[EXFAT_PIECE];
	uint8_t e[32];
	uint64_t fat_bytes, est, align, heap, root_off;
	uint32_t up_bytes, up_chk, bm_cl, up_cl, root_cl, c, spc_shift;
	int i, n;
	memset(v, 0, sizeof(*v));
	v->dev = d;
	if (sector != 512 && sector != 4096)
		return EXFAT_ESIZE;
	if (!cluster)
		cluster = exfat_default_cluster(bytes);
	if (cluster < sector || cluster > (32u << 20) || (cluster & (cluster - 1)))
		return EXFAT_ESIZE;
	n = strlen(label);
	if (n > EXFAT_LABEL_MAX)
		return EXFAT_ENAME;
	v->sector_shift  = __builtin_ctz(sector);
	v->cluster_shift = __builtin_ctz(cluster);
	spc_shift = v->cluster_shift - v->sector_shift;
	v->sectors = bytes >> v->sector_shift;
	v->serial  = serial;
	if (bytes < (8ULL << 20))
		return EXFAT_ESIZE;
	/* FAT at 1 MiB, the heap on a multiple of 1 MiB (and of the cluster): clusters are aligned for the
	 * drive and for the recorder's chunks. */
	v->fat_offset = (1u << 20) >> v->sector_shift;
	est = (v->sectors - v->fat_offset) >> spc_shift;
	fat_bytes = (est + 2)*4;
	v->fat_length = (fat_bytes + sector - 1) >> v->sector_shift;
	align = (cluster > (1u << 20) ? cluster : (1u << 20)) >> v->sector_shift;
	heap = (v->fat_offset + v->fat_length + align - 1)/align*align;
	if (heap >= v->sectors || heap > 0xffffffffULL)
		return EXFAT_ESIZE;
	v->heap_offset = heap;
	est = (v->sectors - heap) >> spc_shift;
	if (est > 0xfffffff5ULL)
		return EXFAT_ESIZE;
	v->clusters = est;
	v->bitmap_cluster = 2;
	v->bitmap_bytes = (v->clusters + 7)/8;
	bm_cl = (v->bitmap_bytes + cluster - 1) >> v->cluster_shift;
	up_cl = (UPCASE_MAX_BYTES + cluster - 1) >> v->cluster_shift;   /* written below, in one pass */
	root_cl = (EXFAT_ROOT_BYTES + cluster - 1) >> v->cluster_shift;
	v->root_cluster = 2 + bm_cl + up_cl;
	if ((uint64_t)bm_cl + up_cl + root_cl + clusters_of(v, first_bytes) + 1 > v->clusters)
		return EXFAT_ESIZE;

	/* Whatever a previous volume left: the old boot sector goes first, so a cut format is no volume. */
	put_piece(v, 0, zero);
	/* FAT: media type, entry 1, the chains of the bitmap, up-case table and root directory. The
	 * other entries are never read (free clusters' entries mean nothing, spec 4.1; files are
	 * NoFatChain). */
	zero_bytes(v, (uint64_t)v->fat_offset << v->sector_shift,
		((fat_entry_off(v, v->root_cluster + root_cl) + EXFAT_PIECE) & ~(uint64_t)(EXFAT_PIECE - 1)) -
		((uint64_t)v->fat_offset << v->sector_shift));
	if (!at(v, fat_entry_off(v, 0)))
		return EXFAT_EIO;
	put32(at(v, fat_entry_off(v, 0)), 0xfffffff8u);
	put32(at(v, fat_entry_off(v, 1)), 0xffffffffu);
	pc_dirty = 1;
	fat_chain(v, 2, bm_cl);
	fat_chain(v, 2 + bm_cl, up_cl);
	fat_chain(v, v->root_cluster, root_cl);
	/* Bitmap, up-case table, root directory. */
	zero_bytes(v, bitmap_off(v), (uint64_t)bm_cl << v->cluster_shift);
	bits_set(v, 2, bm_cl + up_cl + root_cl, 1);
	up_bytes = upcase_table(v, exfat_cluster_off(v, 2 + bm_cl), &up_chk);
	root_off = exfat_cluster_off(v, v->root_cluster);
	zero_bytes(v, root_off, (uint64_t)root_cl << v->cluster_shift);
	memset(e, 0, 32);
	e[0] = T_LABEL;
	e[1] = n;
	for (i = 0; i < n; i++)
		put16(e + 2 + 2*i, (uint8_t)label[i]);
	write_entry(v, root_off, e);
	memset(e, 0, 32);
	e[0] = T_BITMAP;
	put32(e + 20, 2);
	put64(e + 24, v->bitmap_bytes);
	write_entry(v, root_off + 32, e);
	memset(e, 0, 32);
	e[0] = T_UPCASE;
	put32(e + 4, up_chk);
	put32(e + 20, 2 + bm_cl);
	put64(e + 24, up_bytes);
	write_entry(v, root_off + 64, e);
	if (io_err)
		return EXFAT_EIO;
	/* The first file, zeroed. */
	c = v->root_cluster + root_cl;
	if (first_name) {
		int r = create(v, first_name, exfat_cluster_off(v, c), first_bytes, first_attr, 0, first);
		if (r < 0)
			return r;
		zero_bytes(v, exfat_cluster_off(v, c), clusters_of(v, first_bytes) << v->cluster_shift);
		if ((r = set_length(v, first, first_bytes, first_bytes, 0, 0)) < 0)
			return r;
	}
	pc_writeback();
	write_boot_region(v);
	return 0;
}

int exfat_format(struct exfat_vol *v, const struct exfat_dev *d, uint64_t bytes, uint32_t sector, uint32_t cluster,
	const char *label, uint32_t serial, const char *first_name, uint64_t first_bytes, uint16_t first_attr,
	struct exfat_file *first)
{
	return done(v, format(v, d, bytes, sector, cluster, label, serial, first_name, first_bytes, first_attr, first));
}

/* Mount -------------------------------------------------------------------------------------------------- */

/* Checks the boot region at sector `base` (0, or 12: the backup, with sectors of 1 << sshift bytes)
 * and fills the geometry from it. */
static int boot_region(struct exfat_vol *v, uint32_t base, uint32_t sshift)
{
	uint8_t b0[EXFAT_PIECE], *p;
	uint32_t s = 0, per, k, i;
	uint64_t sec;
	int n;
	if (!(p = piece(v, (uint64_t)base << sshift)))
		return EXFAT_EIO;
	memcpy(b0, p, EXFAT_PIECE);
	if (memcmp(b0 + B_FS_NAME, "EXFAT   ", 8) || b0[510] != 0x55 || b0[511] != 0xaa ||
	    (base && b0[B_SECTOR_SHIFT] != sshift))
		return EXFAT_ENOTEXFAT;
	for (i = 11; i < 64; i++)
		if (b0[i])
			return EXFAT_ENOTEXFAT;
	v->sector_shift = b0[B_SECTOR_SHIFT];
	v->cluster_shift = v->sector_shift + b0[B_CLUSTER_SHIFT];
	if (v->sector_shift < 9 || v->sector_shift > 12 || v->cluster_shift > 25)
		return EXFAT_EUNSUP;
	sec = 1ULL << v->sector_shift;
	per = sec/EXFAT_PIECE;
	for (n = 0; n < 11; n++)
		for (k = 0; k < per; k++) {
			if (!(p = piece(v, ((uint64_t)base + n)*sec + k*EXFAT_PIECE)))
				return EXFAT_EIO;
			for (i = 0; i < EXFAT_PIECE; i++)
				if (!(n == 0 && k == 0 && (i == B_FLAGS || i == B_FLAGS + 1 || i == B_PERCENT)))
					s = sum32(s, p[i]);
		}
	if (!(p = piece(v, ((uint64_t)base + 11)*sec)))
		return EXFAT_EIO;
	if (get32(p) != s)
		return EXFAT_ENOTEXFAT;
	if (b0[B_NFATS] != 1)
		return EXFAT_EUNSUP;
	v->sectors      = get64(b0 + B_VOL_LENGTH);
	v->fat_offset   = get32(b0 + B_FAT_OFFSET);
	v->fat_length   = get32(b0 + B_FAT_LENGTH);
	v->heap_offset  = get32(b0 + B_HEAP_OFFSET);
	v->clusters     = get32(b0 + B_CLUSTERS);
	v->root_cluster = get32(b0 + B_ROOT);
	v->serial       = get32(b0 + B_SERIAL);
	if (!cluster_ok(v, v->root_cluster) || (uint64_t)v->heap_offset + ((uint64_t)v->clusters << (v->cluster_shift -
	    v->sector_shift)) > v->sectors || (uint64_t)v->fat_length << v->sector_shift < 4ULL*(v->clusters + 2))
		return EXFAT_ECORRUPT;
	return 0;
}

static int mount(struct exfat_vol *v, const struct exfat_dev *d)
{
	struct dpos dp;
	int r;
	memset(v, 0, sizeof(*v));
	v->dev = d;
	if ((r = boot_region(v, 0, 9)) == EXFAT_ENOTEXFAT && (r = boot_region(v, 12, 9)) == EXFAT_ENOTEXFAT)
		r = boot_region(v, 12, 12);
	if (r < 0)
		return r;
	dp.c = v->root_cluster;
	dp.i = 0;
	for (;;) {
		uint8_t *p = at(v, dpos_off(v, &dp));
		if (!p)
			return EXFAT_EIO;
		if (p[0] == T_END)
			break;
		if (p[0] == T_BITMAP && !(p[1] & 1)) {
			v->bitmap_cluster = get32(p + 20);
			v->bitmap_bytes   = get64(p + 24);
		}
		if (!dpos_next(v, &dp))
			break;
	}
	if (!cluster_ok(v, v->bitmap_cluster) || v->bitmap_bytes < (v->clusters + 7)/8)
		return EXFAT_ECORRUPT;
	return 0;
}

int exfat_mount(struct exfat_vol *v, const struct exfat_dev *d)
{
	int r = mount(v, d);
	pc_valid = 0;          /* nothing cached across mounts */
	return done(v, r);
}
