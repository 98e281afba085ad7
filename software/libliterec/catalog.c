// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// On-disk catalog (see catalog.h and doc/catalog.md). Blocks of 4096 bytes are read into and
// written from the port's on-chip RAM window through the NVMe driver's CPU I/O queue; the entry
// being written (a running recording, or the one being changed) is kept in `blk`, in the on-disk
// byte layout, so there is one description of the format: the offsets below.

#include <stdio.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <generated/mem.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"
#include "catalog.h"
#include "catalog_fs.h"
#include "record.h"

uint32_t catalog_checkpoint_ms = 100;
struct catalog_meta catalog_next_meta;

const char *catalog_state_str(int state)
{
	static const char *s[] = {"?", "recording", "complete", "aborted", "error", "deleted", "interrupted"};
	return (state >= 1 && state <= 6) ? s[state] : "?";
}

const char *catalog_mode_str(int mode)
{
	static const char *s[] = {"fixed", "until-stop", "ring"};
	return (mode >= 0 && mode <= 2) ? s[mode] : "?";
}

/* Wall clock (rec_clock) ------------------------------------------------------------------------ */

static uint64_t clock_us0, clock_cycles0;
static int      clock_set;

void catalog_set_clock(uint64_t unix_s)
{
	clock_us0     = unix_s*1000000ULL;
	clock_cycles0 = literec_cycles();
	clock_set     = 1;
}

/* Wall clock at a cycle of the modeled clock (0: never set). */
static uint64_t unix_at(uint64_t cycles)
{
	uint64_t d;
	if (!clock_set)
		return 0;
	d = cycles > clock_cycles0 ? cycles - clock_cycles0 : 0;
	return clock_us0 + d/CONFIG_CLOCK_FREQUENCY*1000000ULL + (d % CONFIG_CLOCK_FREQUENCY)*1000000ULL/CONFIG_CLOCK_FREQUENCY;
}

uint64_t catalog_unix_us(void)
{
	return unix_at(literec_cycles());
}

#ifdef CSR_NVME0_BASE

#define NPORTS LITEREC_SSD_PORTS

/* Layout (doc/catalog.md) ------------------------------------------------------------------------- */

#define CRC_OFF      0xffc
#define FIRST_BLOCK  16
#define ENTRY_BLOCK(slot, copy) (FIRST_BLOCK + 2*(slot) + (copy))

/* Header */
#define H_VERSION    0x008
#define H_BYTES      0x00a
#define H_SET        0x010
#define H_SIZE       0x020
#define H_POS        0x021
#define H_LBA_SIZE   0x024
#define H_NSZE       0x028
#define H_AREA       0x030
#define H_BLOCK      0x038
#define H_SLOTS      0x03c
#define H_FIRST      0x040
#define H_CLK        0x044
#define H_CYCLES     0x048
#define H_UNIX       0x050
#define H_MODEL      0x058
#define H_SERIAL     0x080
#define H_FLAGS      0x00c
#define H_FS_LBA     0x098
#define H_MEMBERS    0x0a0

#define H_FLAG_EXFAT 1           /* flags: the catalog is the first file of an exFAT volume */

/* Entry */
#define E_VERSION    0x008
#define E_SLOT       0x00a
#define E_SEQ        0x00c
#define E_SET        0x010
#define E_ID         0x020
#define E_STATE      0x024
#define E_MODE       0x025
#define E_SOURCE     0x026
#define E_WIDTH      0x027
#define E_ORDER      0x028
#define E_CHUNK      0x030
#define E_LBA_SIZE   0x034
#define E_SEED       0x038
#define E_CLK        0x03c
#define E_START      0x040
#define E_REGION     0x080
#define E_BYTES      0x0c0
#define E_DROPPED    0x0c8
#define E_RING       0x0d0
#define E_TRIGGER    0x0d8
#define E_OLDEST     0x0e0
#define E_T0         0x0e8
#define E_T1         0x0f0
#define E_U0         0x0f8
#define E_U1         0x100
#define E_TUPD       0x108
#define E_DROPS      0x110
#define E_LOGGED     0x114
#define E_ERR_STATUS 0x118
#define E_ERR_POS    0x11c
#define E_ERR_LBA    0x120
#define E_RATE       0x128
#define E_FREQ       0x130
#define E_NAME       0x150
#define E_DATATYPE   0x170
#define E_TEXT       0x190
#define E_DROPLOG    0x300

static const char hdr_magic[8] = {'L', 'R', 'C', 'A', 'T', 'H', 'D', 'R'};
static const char ent_magic[8] = {'L', 'R', 'C', 'A', 'T', 'R', 'E', 'C'};

/* Byte access: the local block (little-endian CPU) and the RAM windows (32-bit reads) ------------- */

static uint8_t blk[CATALOG_BLOCK] __attribute__((aligned(8)));

static void     p8(int off, uint8_t v)   { blk[off] = v; }
static void     p32(int off, uint32_t v) { memcpy(blk + off, &v, 4); }
static void     p64(int off, uint64_t v) { memcpy(blk + off, &v, 8); }
static uint32_t g32(int off)             { uint32_t v; memcpy(&v, blk + off, 4); return v; }

static uint32_t v32(volatile const uint8_t *b, int off) { return *(volatile const uint32_t *)(b + off); }
static uint64_t v64(volatile const uint8_t *b, int off) { return v32(b, off) | ((uint64_t)v32(b, off + 4) << 32); }
static uint8_t  v8(volatile const uint8_t *b, int off)  { return v32(b, off & ~3) >> (8*(off & 3)); }
static uint16_t v16(volatile const uint8_t *b, int off) { return v32(b, off & ~3) >> (8*(off & 2)); }

static void vstr(char *dst, volatile const uint8_t *b, int off, int n)   /* off, n: multiples of 4 */
{
	uint32_t w;
	int i;
	for (i = 0; i < n; i += 4) {
		w = v32(b, off + i);
		memcpy(dst + i, &w, 4);
	}
	dst[n] = 0;
}

static int vmatch(volatile const uint8_t *b, int off, const void *what, int n)   /* off, n: multiples of 4 */
{
	uint32_t w;
	int i;
	for (i = 0; i < n; i += 4) {
		w = v32(b, off + i);
		if (memcmp(&w, (const uint8_t *)what + i, 4))
			return 0;
	}
	return 1;
}

static void vcopy_in(volatile const uint8_t *src)
{
	volatile const uint32_t *s = (volatile const uint32_t *)src;
	uint32_t *d = (uint32_t *)blk;
	int i;
	for (i = 0; i < CATALOG_BLOCK/4; i++)
		d[i] = s[i];
}

static void vcopy_out(volatile uint8_t *dst)
{
	const uint32_t *src = (const uint32_t *)blk;
	volatile uint32_t *d = (volatile uint32_t *)dst;
	int i;
	for (i = 0; i < CATALOG_BLOCK/4; i++)
		d[i] = src[i];
}

/* CRC-32 of bytes 0x000-0xFFB (zlib's: reflected 0xEDB88320, init and final XOR ~0), read in 32-bit
 * words (the on-chip RAM windows are uncached: a word read costs what a byte read costs). */
static uint32_t crc_tab[256];

static uint32_t crc_block(volatile const uint8_t *b)
{
	uint32_t crc = ~0u, w, c;
	int i, k;
	if (!crc_tab[1])
		for (i = 0; i < 256; i++) {
			for (c = i, k = 0; k < 8; k++)
				c = (c >> 1) ^ (0xedb88320u & -(c & 1));
			crc_tab[i] = c;
		}
	for (i = 0; i < CRC_OFF; i += 4) {
		w = v32(b, i);
		for (k = 0; k < 4; k++, w >>= 8)
			crc = (crc >> 8) ^ crc_tab[(crc ^ w) & 0xff];
	}
	return ~crc;
}

static void seal(void)
{
	p32(CRC_OFF, crc_block(blk));
}

/* Block I/O through the CPU queue ------------------------------------------------------------------ */

static uint32_t per_block(int port)
{
	return CATALOG_BLOCK >> nvme_ctrls[port].lba_shift;
}

/* First LBA of the catalog: 0 on a raw drive, its file's first LBA in an exFAT volume. */
static uint64_t cat_base[NPORTS];

static uint64_t block_lba(int port, int block)
{
	return cat_base[port] + (uint64_t)block*per_block(port);
}

/* First LBA after the catalog area (raw), or after the volume's structures and catalog file (exFAT). */
static uint64_t area_end(int port)
{
	return cat_base[port] + CATALOG_AREA_BYTES/nvme_ctrls[port].lba_size;
}

/* The highest area_end of the ports of mask; *fs: they hold exFAT volumes. */
static uint64_t mask_area_end(uint32_t mask, int *fs)
{
	uint64_t a = 0;
	int p;
	*fs = 0;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			if (area_end(p) > a)
				a = area_end(p);
			*fs |= catalog_fs_on(p);
		}
	return a;
}

static int quiet;          /* catalog_report_interrupted: no I/O error messages */

static void io_error(int port, const char *what, int r)
{
	if (!quiet)
		printf("Error: nvme%d: catalog %s: %s\n", port, what, nvme_strerror(r));
}

static int read_blocks(int port, int block, int n)
{
	int r = nvme_cpu_io(port, NVME_OP_READ, block_lba(port, block), n*per_block(port), 0);
	if (r)
		io_error(port, "read", r);
	return r;
}

/* Submits the write of `blk` to `block` on every port of *ports; a port whose command could not be
 * submitted is reported and taken out of *ports, which is then what poll_all/wait_all complete. */
static int write_all(uint32_t *ports, int block)
{
	int p, r, err = 0;
	for (p = 0; p < NPORTS; p++)
		if (*ports & (1u << p)) {
			vcopy_out(nvme_cpu_buf(p));
			if ((r = nvme_cpu_submit(p, NVME_OP_WRITE, block_lba(p, block), per_block(p), 1))) {
				io_error(p, "write", r);
				*ports &= ~(1u << p);
				err = -1;
			}
		}
	return err;
}

/* As write_all, for a command without data (flush). */
static int submit_all(uint32_t *ports, int op)
{
	int p, r, err = 0;
	for (p = 0; p < NPORTS; p++)
		if ((*ports & (1u << p)) && (r = nvme_cpu_submit(p, op, 0, 1, 0))) {
			io_error(p, op == NVME_OP_FLUSH ? "flush" : "I/O", r);
			*ports &= ~(1u << p);
			err = -1;
		}
	return err;
}

/* Polls the ports of *pending; clears the done ones; returns -1 if one failed. */
static int poll_all(uint32_t *pending)
{
	int p, status, err = 0;
	for (p = 0; p < NPORTS; p++)
		if ((*pending & (1u << p)) && nvme_cpu_poll(p, &status)) {
			*pending &= ~(1u << p);
			if (status) {
				io_error(p, "I/O", status);
				err = -1;
			}
		}
	return err;
}

static int wait_all(uint32_t pending)
{
	int err = 0;
	while (pending)
		if (poll_all(&pending))
			err = -1;
	return err;
}

/* Writes `blk` (seq already set) as the copy its seq selects, to every port of mask. */
static int write_entry(uint32_t mask)
{
	int slot = v16(blk, E_SLOT), copy = (g32(E_SEQ) & 1) ? 0 : 1;
	int err;
	seal();
	err = write_all(&mask, ENTRY_BLOCK(slot, copy));
	return wait_all(mask) || err ? -1 : 0;
}

/* Ports and sets ------------------------------------------------------------------------------------ */

/* The running recording (catalog_rec_*): its set, id, checkpoint state machine and timings (blk holds
 * its entry while act is set). */
static struct catalog_set act_set;
static uint32_t act_id;
static int      act, act_phase, act_errors, act_failed, act_fs;

struct cat_port {
	int      st;
	uint16_t version;
	uint8_t  set[16];
	uint8_t  size, pos;
	int      hdr_off;           /* copy used: 0 (A) or 4096 (B) in the port's buffer */
	char     serial[21];
};
static struct cat_port ports[NPORTS];

static int header_ok(volatile const uint8_t *b)
{
	return vmatch(b, 0, hdr_magic, 8) && v16(b, H_VERSION) == CATALOG_VERSION && crc_block(b) == v32(b, CRC_OFF);
}

int catalog_probe(int port)
{
	struct cat_port *cp = &ports[port];
	struct nvme_ctrl *c = &nvme_ctrls[port];
	volatile uint8_t *b = nvme_cpu_buf(port);
	int copy, r;
	memset(cp, 0, sizeof(*cp));
	if (!c->initialized)
		return cp->st = CATALOG_PORT_NOINIT;
	if (!c->cpuq)
		return cp->st = CATALOG_PORT_NOQ;
	if (c->lba_size > CATALOG_BLOCK)
		return cp->st = CATALOG_PORT_GEOMETRY;
	cat_base[port] = 0;
	catalog_fs_off(port);
	if ((r = nvme_cpu_io(port, NVME_OP_READ, 0, 2*per_block(port), 0))) {
		io_error(port, "header read", r);
		return cp->st = CATALOG_PORT_IOERR;
	}
	/* An exFAT boot sector ("EXFAT   " at byte 3): the catalog is the volume's first file, if the
	 * recorder made the volume. */
	if (vmatch(b, 0, "\xeb\x76\x90\x45", 4) && vmatch(b, 4, "XFAT", 4) && v16(b, 8) == 0x2020 && v8(b, 10) == ' ') {
		uint64_t base;
		r = catalog_fs_probe(port, &base);
		if (r == -2)
			return cp->st = CATALOG_PORT_IOERR;
		if (r < 0)
			return cp->st = CATALOG_PORT_FOREIGN;
		cat_base[port] = base;
		if ((r = nvme_cpu_io(port, NVME_OP_READ, base, 2*per_block(port), 0))) {
			io_error(port, "header read", r);
			return cp->st = CATALOG_PORT_IOERR;
		}
	}
	cp->st = CATALOG_PORT_NONE;
	for (copy = 0; copy < 2; copy++) {
		volatile uint8_t *h = b + copy*CATALOG_BLOCK;
		if (!vmatch(h, 0, hdr_magic, 8))
			continue;
		if (v16(h, H_VERSION) != CATALOG_VERSION) {
			cp->version = v16(h, H_VERSION);
			cp->st = CATALOG_PORT_VERSION;
			continue;
		}
		if (!header_ok(h)) {
			if (cp->st == CATALOG_PORT_NONE)
				cp->st = CATALOG_PORT_CORRUPT;
			continue;
		}
		if (v32(h, H_LBA_SIZE) != c->lba_size)
			return cp->st = CATALOG_PORT_GEOMETRY;
		cp->st      = CATALOG_PORT_OK;
		cp->hdr_off = copy*CATALOG_BLOCK;
		cp->size    = v8(h, H_SIZE);
		cp->pos     = v8(h, H_POS);
		vstr(cp->serial, h, H_SERIAL, 20);
		for (r = 0; r < 16; r++)
			cp->set[r] = v8(h, H_SET + r);
		if (cp->size < 1 || cp->size > CATALOG_MAX_DRIVES || cp->pos >= cp->size)
			cp->st = CATALOG_PORT_CORRUPT;
		break;
	}
	return cp->st;
}

int catalog_port_state(int port)
{
	return ports[port].st;
}

const char *catalog_port_str(int port)
{
	static char buf[96];
	switch (ports[port].st) {
	case CATALOG_PORT_NOINIT:   return "not initialized (nvme_init)";
	case CATALOG_PORT_NONE:     return "no catalog";
	case CATALOG_PORT_OK:
		snprintf(buf, sizeof(buf), "drive %d of %d of set %02x%02x%02x%02x%02x%02x%02x%02x", ports[port].pos,
			ports[port].size, ports[port].set[0], ports[port].set[1], ports[port].set[2], ports[port].set[3],
			ports[port].set[4], ports[port].set[5], ports[port].set[6], ports[port].set[7]);
		return buf;
	case CATALOG_PORT_CORRUPT:  return "corrupt catalog header (CRC mismatch in both copies): rec_format yes starts a new one";
	case CATALOG_PORT_VERSION:
		snprintf(buf, sizeof(buf), "catalog format version %d is not supported (this BIOS writes version %d)",
			ports[port].version, CATALOG_VERSION);
		return buf;
	case CATALOG_PORT_NOQ:      return "no CPU I/O queue (the controller granted one I/O queue pair): no catalog I/O";
	case CATALOG_PORT_IOERR:    return "catalog header could not be read";
	case CATALOG_PORT_FOREIGN:  return "an exFAT volume the recorder did not make (no literec.catalog file in it): the BIOS "
		"does not write it; rec_format fs=exfat yes replaces it with the recorder's (its files are lost)";
	case CATALOG_PORT_GEOMETRY: return "LBA size differs from the one the catalog was formatted with (the drive "
		"was reformatted with another LBA size): the BIOS leaves its recordings untouched; rec_format yes "
		"would discard them";
	}
	return "?";
}

static void print_ports(uint32_t mask)
{
	int p, first = 1;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			printf("%snvme%d", first ? "" : "+", p);
			first = 0;
		}
}

static void set_hex(const uint8_t *id, char *out)
{
	int i;
	for (i = 0; i < 8; i++)
		sprintf(out + 2*i, "%02x", id[i]);
}

int catalog_sets(uint32_t mask, struct catalog_set *sets, int max)
{
	int p, q, n = 0;
	/* The drives of a running recording's set keep the probe of its start (their CPU queues carry
	 * its checkpoints; their headers do not change). */
	for (p = 0; p < NPORTS; p++)
		if (!act || !(act_set.ports & (1u << p)))
			catalog_probe(p);
	for (p = 0; p < NPORTS; p++) {
		struct catalog_set *s = NULL;
		if (!(mask & (1u << p)) || ports[p].st != CATALOG_PORT_OK)
			continue;
		for (q = 0; q < n; q++)
			if (!memcmp(sets[q].id, ports[p].set, 16))
				s = &sets[q];
		if (s || n == max)
			continue;
		s = &sets[n++];
		memset(s, 0, sizeof(*s));
		memcpy(s->id, ports[p].set, 16);
		s->size = ports[p].size;
		s->ref  = p;
		s->lba_size = nvme_ctrls[p].lba_size;
		for (q = 0; q < s->size; q++) {
			volatile uint8_t *h = nvme_cpu_buf(p) + ports[p].hdr_off;
			s->port_of[q] = -1;
			vstr(s->serial[q], h, H_MEMBERS + 32*q, 20);
		}
		for (q = s->size; q < CATALOG_MAX_DRIVES; q++)
			s->port_of[q] = -1;
		/* Members on any port (a recording on a subset of the set still enters every drive's catalog). */
		for (q = 0; q < NPORTS; q++)
			if (ports[q].st == CATALOG_PORT_OK && !memcmp(ports[q].set, s->id, 16) && ports[q].pos < s->size &&
			    s->port_of[ports[q].pos] < 0) {
				s->port_of[ports[q].pos] = q;
				s->ports |= 1u << q;
			}
	}
	return n;
}

int catalog_select(uint32_t mask, int flags, struct catalog_set *s)
{
	struct catalog_set sets[NPORTS];
	char hex[17];
	int p, q, n, with = 0, without = 0;
	n = catalog_sets(mask, sets, NPORTS);
	for (p = 0; p < NPORTS; p++) {
		if (!(mask & (1u << p)) || ports[p].st == CATALOG_PORT_NOINIT)
			continue;
		if (ports[p].st == CATALOG_PORT_OK)
			with |= 1u << p;
		else if (ports[p].st == CATALOG_PORT_NONE)
			without |= (flags & CATALOG_SEL_ANY) ? 0 : 1u << p;
		else {
			printf("Error: nvme%d: %s\n", p, catalog_port_str(p));
			return -1;
		}
	}
	if (!with)
		return 0;
	if (without) {
		printf("Error: mixed drives: ");
		for (p = 0; p < NPORTS; p++)
			if (without & (1u << p))
				printf("nvme%d has no catalog, ", p);
		printf("the others have one: a recording is in the catalog of all its drives or of none (rec_format yes ports=...)\n");
		return -1;
	}
	if (n > 1) {
		printf("Error: mixed set:");
		for (q = 0; q < n; q++) {
			set_hex(sets[q].id, hex);
			printf(" ");
			print_ports(sets[q].ports & mask);
			printf(" in set %s%s", hex, q + 1 < n ? "," : "");
		}
		printf(": drives of different sets cannot be used together (ports=... selects one set)\n");
		return -1;
	}
	*s = sets[0];
	for (p = 0; p < NPORTS; p++)
		if (ports[p].st == CATALOG_PORT_OK && !memcmp(ports[p].set, s->id, 16) && s->port_of[ports[p].pos] != p) {
			printf("Error: nvme%d and nvme%d are both drive %d of the set (the same drive, or a copy of it)\n",
				s->port_of[ports[p].pos], p, ports[p].pos);
			return -1;
		}
	if (flags & CATALOG_SEL_COMPLETE)
		for (q = 0; q < s->size; q++)
			if (s->port_of[q] < 0) {
				set_hex(s->id, hex);
				printf("Error: drive %d of set %s (serial %s) is not present: nvme_init its port, the catalog "
					"is written to every drive of the set\n", q, hex, s->serial[q]);
				return -1;
			}
	return 1;
}

/* Entries ----------------------------------------------------------------------------------------- */

static void decode(volatile const uint8_t *b, struct catalog_entry *e)
{
	int i;
	e->slot     = v16(b, E_SLOT);
	e->seq      = v32(b, E_SEQ);
	e->id       = v32(b, E_ID);
	e->state    = v8(b, E_STATE);
	e->mode     = v8(b, E_MODE);
	e->source   = v8(b, E_SOURCE);
	e->width    = v8(b, E_WIDTH);
	for (i = 0; i < CATALOG_MAX_DRIVES; i++) {
		e->order[i]     = v8(b, E_ORDER + i);
		e->start_lba[i] = v64(b, E_START + 8*i);
		e->region[i]    = v64(b, E_REGION + 8*i);
	}
	e->chunk    = v32(b, E_CHUNK);
	e->lba_size = v32(b, E_LBA_SIZE);
	e->seed     = v32(b, E_SEED);
	e->clk      = v32(b, E_CLK);
	e->bytes    = v64(b, E_BYTES);
	e->dropped  = v64(b, E_DROPPED);
	e->ring     = v64(b, E_RING);
	e->trigger  = v64(b, E_TRIGGER);
	e->oldest   = v64(b, E_OLDEST);
	e->t0       = v64(b, E_T0);
	e->t1       = v64(b, E_T1);
	e->u0       = v64(b, E_U0);
	e->u1       = v64(b, E_U1);
	e->tupd     = v64(b, E_TUPD);
	e->drops_total  = v32(b, E_DROPS);
	e->drops_logged = v32(b, E_LOGGED);
	e->err_status   = v32(b, E_ERR_STATUS);
	e->err_pos      = v8(b, E_ERR_POS);
	e->err_lba      = v64(b, E_ERR_LBA);
	e->rate_mhz     = v64(b, E_RATE);
	e->freq_mhz     = v64(b, E_FREQ);
	vstr(e->name, b, E_NAME, 32);
	vstr(e->datatype, b, E_DATATYPE, 32);
	vstr(e->text, b, E_TEXT, 256);
	if (e->width > CATALOG_MAX_DRIVES)
		e->width = CATALOG_MAX_DRIVES;
	if (e->drops_logged > CATALOG_DROP_EVENTS)
		e->drops_logged = CATALOG_DROP_EVENTS;
}

/* A copy of this set (magic and set identity), then a valid one (version, slot, CRC). */
static int entry_ours(volatile const uint8_t *b, struct catalog_set *s)
{
	return vmatch(b, 0, ent_magic, 8) && vmatch(b, E_SET, s->id, 16);
}

static int entry_valid(volatile const uint8_t *b, int slot)
{
	return v16(b, E_VERSION) == CATALOG_VERSION && v16(b, E_SLOT) == slot && crc_block(b) == v32(b, CRC_OFF);
}

struct scan_info {
	uint32_t max_id, free_seq;
	int      free_slot, corrupt;
};

typedef void (*raw_visit_fn)(const struct catalog_entry *e, volatile uint8_t *raw, void *ctx);

/* Every slot of the set: the newest valid copy (from the reference drive, or from another member
 * when both copies are corrupt there) is decoded and visited (deleted ones too). */
static int scan_slots(struct catalog_set *s, raw_visit_fn fn, void *ctx, struct scan_info *si)
{
	struct catalog_entry e;
	int slot, k, p, copy;
	memset(si, 0, sizeof(*si));
	si->free_slot = -1;
	for (slot = 0; slot < CATALOG_SLOTS; slot++) {
		volatile uint8_t *best = NULL, *cand[2];
		int bad = 0;
		for (k = 0; k <= s->size && !best; k++) {
			volatile uint8_t *b;
			p = k == 0 ? s->ref : s->port_of[k - 1];
			if (p < 0 || (k > 0 && p == s->ref) || (k > 0 && !bad))
				continue;
			if (read_blocks(p, ENTRY_BLOCK(slot, 0), 2))
				return -1;
			/* The newer of the copies of this set first (its CRC only), the other if it is corrupt. */
			b = nvme_cpu_buf(p);
			cand[0] = entry_ours(b, s) ? b : NULL;
			cand[1] = entry_ours(b + CATALOG_BLOCK, s) ? b + CATALOG_BLOCK : NULL;
			if (!cand[0] || (cand[1] && v32(cand[1], E_SEQ) > v32(cand[0], E_SEQ))) {
				volatile uint8_t *t = cand[0];
				cand[0] = cand[1];
				cand[1] = t;
			}
			for (copy = 0; copy < 2 && cand[copy] && !best; copy++) {
				if (entry_valid(cand[copy], slot))
					best = cand[copy];
				else
					bad++;
			}
		}
		if (!best) {
			if (bad) {
				printf("Warning: catalog slot %d is corrupt on every drive of the set (CRC): left alone\n", slot);
				si->corrupt++;
				continue;
			}
			/* Never written in this set: slots are taken lowest first, so the ones after it are empty too. */
			if (si->free_slot < 0) {
				si->free_slot = slot;
				si->free_seq  = 1;
			}
			break;
		}
		decode(best, &e);
		/* State 1 of an entry no recording of this boot updates: cut by a power loss or a reset. */
		if (e.state == CATALOG_STATE_RECORDING && !(act && e.id == act_id && !memcmp(s->id, act_set.id, 16)))
			e.state = CATALOG_STATE_INTERRUPTED;
		if (e.id > si->max_id)
			si->max_id = e.id;
		if (e.state == CATALOG_STATE_DELETED && si->free_slot < 0) {
			si->free_slot = slot;
			si->free_seq  = e.seq + 1;
		}
		if (fn)
			fn(&e, best, ctx);
	}
	return si->corrupt;
}

struct scan_tramp {
	catalog_visit_fn fn;
	void *ctx;
	int deleted;
};

static void tramp(const struct catalog_entry *e, volatile uint8_t *raw, void *ctx)
{
	struct scan_tramp *t = ctx;
	if (t->deleted || e->state != CATALOG_STATE_DELETED)
		t->fn(e, t->ctx);
}

int catalog_scan(struct catalog_set *s, int deleted, catalog_visit_fn fn, void *ctx)
{
	struct scan_tramp t = {fn, ctx, deleted};
	struct scan_info si;
	return scan_slots(s, tramp, &t, &si);
}

struct find_ctx {
	uint32_t id;
	int found;
	struct catalog_entry *e;
};

static void find_visit(const struct catalog_entry *e, volatile uint8_t *raw, void *ctx)
{
	struct find_ctx *f = ctx;
	if (e->id == f->id && e->state != CATALOG_STATE_DELETED) {
		*f->e = *e;
		if (!act)                 /* blk holds the running recording's entry: never overwritten */
			vcopy_in(raw);
		f->found = 1;
	}
}

int catalog_find(struct catalog_set *s, uint32_t id, struct catalog_entry *e)
{
	struct find_ctx f = {id, 0, e};
	struct scan_info si;
	if (scan_slots(s, find_visit, &f, &si) < 0)
		return -1;
	if (!f.found) {
		printf("Error: no recording with id %lu in the catalog (rec_list shows them)\n", (unsigned long)id);
		return -1;
	}
	return 0;
}

void catalog_found_drop(int j, uint64_t *data_offset, uint64_t *bytes)
{
	*data_offset = v64(blk, E_DROPLOG + 16*j);
	*bytes       = v64(blk, E_DROPLOG + 16*j + 8);
}


/* Regions --------------------------------------------------------------------------------------- */

/* Chunks of a `chunks`-chunk recording on stripe member k of w. */
static uint64_t member_chunks(uint64_t chunks, int k, int w)
{
	return chunks > (uint64_t)k ? (chunks - k + w - 1)/w : 0;
}

struct place_ctx {
	struct catalog_set *s;
	uint64_t end[CATALOG_MAX_DRIVES];     /* per set position: first LBA after every live region */
	/* overlap check */
	uint64_t lba, blocks[CATALOG_MAX_DRIVES];
	uint32_t positions;                    /* positions of the new recording */
	int      overlap_id, overlap_pos;
	uint64_t overlap_lo, overlap_hi;
};

static void place_visit(const struct catalog_entry *e, volatile uint8_t *raw, void *ctx)
{
	struct place_ctx *pc = ctx;
	int k;
	if (e->state == CATALOG_STATE_DELETED)
		return;
	for (k = 0; k < e->width; k++) {
		int q = e->order[k];
		uint64_t lo, hi;
		if (q >= CATALOG_MAX_DRIVES)
			continue;
		lo = e->start_lba[q];
		hi = lo + e->region[q];
		if (hi > pc->end[q])
			pc->end[q] = hi;
		if ((pc->positions & (1u << q)) && !pc->overlap_id && e->region[q] && pc->blocks[q] &&
		    pc->lba < hi && lo < pc->lba + pc->blocks[q]) {
			pc->overlap_id  = e->id;
			pc->overlap_pos = q;
			pc->overlap_lo  = lo;
			pc->overlap_hi  = hi;
		}
	}
}

/* Positions and per-position LBA counts of a recording of `bytes` on the ports of mask. */
static int plan(struct catalog_set *s, uint32_t mask, uint64_t bytes, uint32_t chunk, struct place_ctx *pc,
	uint8_t *order)
{
	uint64_t chunks = (bytes + chunk - 1)/chunk;
	int p, k = 0, w = 0;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p))
			w++;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			int q = ports[p].pos;
			order[k] = q;
			pc->positions |= 1u << q;
			pc->blocks[q] = member_chunks(chunks, k, w)*(chunk/s->lba_size);
			k++;
		}
	return w;
}

int catalog_place_auto(uint32_t mask, uint64_t bytes, uint32_t chunk, uint64_t *lba)
{
	struct catalog_set s;
	struct place_ctx pc;
	struct scan_info si;
	uint8_t order[CATALOG_MAX_DRIVES];
	uint64_t at;
	int r, p, fs;
	if (act) {
		printf("Error: a recording is already in the catalog and running\n");
		return -1;
	}
	r = catalog_select(mask, CATALOG_SEL_COMPLETE, &s);
	if (r == 0) {
		printf("Error: 'auto' places a recording after the others in the catalog, and ");
		for (p = 0; p < NPORTS; p++)
			if (mask & (1u << p))
				printf("nvme%d ", p);
		printf("has no catalog: rec_format yes [ports=...] creates one (or give an LBA)\n");
		return -1;
	}
	if (r < 0)
		return -1;
	memset(&pc, 0, sizeof(pc));
	pc.s = &s;
	plan(&s, mask, bytes, chunk, &pc, order);
	if (scan_slots(&s, place_visit, &pc, &si) < 0)
		return -1;
	at = mask_area_end(mask, &fs);
	if (fs) {
		/* exFAT: the first free run of clusters on every drive (the volume's bitmap, which also knows
		 * the .sigmf-meta files and the files a PC wrote), on a chunk. */
		uint64_t bl[NPORTS];
		for (p = 0; p < NPORTS; p++)
			bl[p] = (mask & (1u << p)) ? pc.blocks[ports[p].pos] : 0;
		if (catalog_fs_place(mask, bl, chunk, at, lba))
			return -1;
		return 0;
	}
	for (p = 0; p < CATALOG_MAX_DRIVES; p++)
		if ((pc.positions & (1u << p)) && pc.end[p] > at)
			at = pc.end[p];
	/* Recordings start on a chunk (the recorder refuses an unaligned start). */
	if (chunk >= s.lba_size)
		at = (at + chunk/s.lba_size - 1)/(chunk/s.lba_size)*(chunk/s.lba_size);
	for (p = 0; p < NPORTS; p++)
		if ((mask & (1u << p)) && at + pc.blocks[ports[p].pos] > nvme_ctrls[p].nsze) {
			printf("Error: no room for %llu bytes on nvme%d after the last recording (LBA %llu, %llu of %llu LBAs free): "
				"rec_delete recordings or give an LBA\n", (unsigned long long)bytes, p, (unsigned long long)at,
				(unsigned long long)(nvme_ctrls[p].nsze > at ? nvme_ctrls[p].nsze - at : 0),
				(unsigned long long)nvme_ctrls[p].nsze);
			return -1;
		}
	*lba = at;
	return 0;
}

int catalog_until_stop_region(uint32_t mask, uint32_t chunk, int place, uint64_t *lba, uint64_t *bytes)
{
	struct catalog_set s;
	uint64_t at, lbas, rows, cb;
	int r, p, fs, w = 0;
	if (act)
		return 0;                           /* catalog_rec_begin says a recording is running */
	if ((r = catalog_select(mask, CATALOG_SEL_COMPLETE, &s)) <= 0)
		return r;
	at = mask_area_end(mask, &fs);
	if (!fs || chunk < s.lba_size)
		return 0;
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p))
			w++;
	cb = chunk/s.lba_size;
	if (!place) {
		if (*lba < at || *lba % cb) {
			printf("Error: LBA %llu: an until-stop recording on an exFAT volume starts on a chunk (%llu LBAs) at or "
				"after LBA %llu (or: auto)\n", (unsigned long long)*lba, (unsigned long long)cb,
				(unsigned long long)at);
			return -1;
		}
		at = *lba;
	} else
		at = (at + cb - 1)/cb*cb;
	if (catalog_fs_free_run(mask, chunk, at, place, &at, &lbas))
		return -1;
	rows = lbas/cb;
	if (!rows) {
		printf("Error: %s on the exFAT volume%s: no free chunk in a row%s: rec_delete recordings (or delete files "
			"on a PC)%s\n", place ? "no free space" : "the clusters from this LBA are not free", w > 1 ? "s" : "",
			place ? "" : " from there", place ? "" : ", or use auto");
		return -1;
	}
	*lba   = at;
	*bytes = rows*chunk*w;
	printf("catalog: until-stop on exFAT: %s free run, LBAs %llu..%llu on ", place ? "the largest" : "the",
		(unsigned long long)at, (unsigned long long)(at + rows*cb - 1));
	print_ports(mask);
	printf(" (%llu bytes in all), reserved; the file is cut at the stop\n", (unsigned long long)*bytes);
	return 1;
}

/* Recording ---------------------------------------------------------------------------------------- */

static uint32_t act_rec_ports, act_pending, act_checkpoints;
static uint64_t act_next, act_ckpt_t0, act_ckpt_max, act_ckpt_cpu, act_begin_cycles;

int catalog_rec_active(void)
{
	return act;
}

static void set_meta(void)
{
	struct catalog_meta *m = &catalog_next_meta;
	memcpy(blk + E_NAME, m->name, strlen(m->name));
	memcpy(blk + E_DATATYPE, m->datatype, strlen(m->datatype));
	memcpy(blk + E_TEXT, m->text, strlen(m->text));
	p64(E_RATE, m->rate_mhz);
	p64(E_FREQ, m->freq_mhz);
	memset(m, 0, sizeof(*m));            /* for the next recording only */
}

int catalog_rec_begin(const struct catalog_job *j)
{
	struct place_ctx pc;
	struct scan_info si;
	uint8_t order[CATALOG_MAX_DRIVES];
	uint64_t area, nsze_min = ~0ULL, bytes = j->bytes;
	int r, p, w, fs;
	char hex[17];
	uint64_t t_begin = literec_cycles();

	if (act) {
		printf("Error: a recording is already in the catalog and running\n");
		return -1;
	}
	r = catalog_select(j->mask, CATALOG_SEL_COMPLETE, &act_set);
	if (r == 0) {
		printf("catalog: ");
		print_ports(j->mask);
		printf(" has no catalog: nothing records this recording (rec_format yes creates one)\n");
		return 0;
	}
	if (r < 0)
		return -1;
	area = mask_area_end(j->mask, &fs);
	for (p = 0; p < NPORTS; p++)
		if ((j->mask & (1u << p)) && nvme_ctrls[p].nsze < nsze_min)
			nsze_min = nvme_ctrls[p].nsze;
	if (j->lba < area) {
		printf("Error: LBA %llu is inside the catalog area (LBAs 0..%llu): recordings start at LBA %llu (or: auto)\n",
			(unsigned long long)j->lba, (unsigned long long)(area - 1), (unsigned long long)area);
		return -1;
	}
	memset(&pc, 0, sizeof(pc));
	w = 0;
	for (p = 0; p < NPORTS; p++)
		if (j->mask & (1u << p))
			w++;
	if (j->mode == CATALOG_MODE_UNTIL_STOP && bytes == 0)
		bytes = (nsze_min - j->lba)/(j->chunk/act_set.lba_size)*j->chunk*w;
	if (j->mode == CATALOG_MODE_RING && (bytes == 0 || bytes % ((uint64_t)j->chunk*w))) {
		printf("Error: a ring of %llu bytes is not a whole number of %lu-byte chunks on each of %d drives\n",
			(unsigned long long)bytes, (unsigned long)j->chunk, w);
		return -1;
	}
	pc.lba = j->lba;
	plan(&act_set, j->mask, bytes, j->chunk, &pc, order);
	if (scan_slots(&act_set, place_visit, &pc, &si) < 0)
		return -1;
	if (pc.overlap_id) {
		printf("Error: LBAs %llu..%llu overlap recording %lu (LBAs %llu..%llu on nvme%d): choose another LBA, "
			"rec_delete it, or use auto\n", (unsigned long long)j->lba,
			(unsigned long long)(j->lba + pc.blocks[pc.overlap_pos] - 1), (unsigned long)pc.overlap_id,
			(unsigned long long)pc.overlap_lo, (unsigned long long)(pc.overlap_hi - 1),
			act_set.port_of[pc.overlap_pos]);
		return -1;
	}
	if (si.free_slot < 0) {
		printf("Error: the catalog is full (%d recordings): rec_delete one first\n", CATALOG_SLOTS);
		return -1;
	}
	if (fs)
		for (p = 0; p < NPORTS; p++)
			if ((j->mask & (1u << p)) && j->lba + pc.blocks[ports[p].pos] > catalog_fs_end_lba(p)) {
				printf("Error: LBAs %llu..%llu run past the last cluster of nvme%d's exFAT volume (LBA %llu)%s\n",
					(unsigned long long)j->lba, (unsigned long long)(j->lba + pc.blocks[ports[p].pos] - 1), p,
					(unsigned long long)(catalog_fs_end_lba(p) - 1), j->mode == CATALOG_MODE_UNTIL_STOP ?
					": an until-stop recording reserves the free clusters from its LBA (until-stop=<mib>: fewer)" : "");
				return -1;
			}

	/* The new entry. */
	memset(blk, 0, sizeof(blk));
	memcpy(blk, ent_magic, 8);
	blk[E_VERSION] = CATALOG_VERSION;
	blk[E_SLOT]     = si.free_slot;
	blk[E_SLOT + 1] = si.free_slot >> 8;
	p32(E_SEQ, si.free_seq);
	memcpy(blk + E_SET, act_set.id, 16);
	p32(E_ID, si.max_id + 1);
	p8(E_STATE, CATALOG_STATE_RECORDING);
	p8(E_MODE, j->mode);
	p8(E_SOURCE, j->source);
	p8(E_WIDTH, w);
	memset(blk + E_ORDER, 0xff, CATALOG_MAX_DRIVES);
	memcpy(blk + E_ORDER, order, w);
	p32(E_CHUNK, j->chunk);
	p32(E_LBA_SIZE, act_set.lba_size);
	p32(E_SEED, j->source == CATALOG_SOURCE_PATTERN ? j->seed : 0);
	p32(E_CLK, CONFIG_CLOCK_FREQUENCY);
	for (p = 0; p < w; p++) {
		p64(E_START + 8*order[p], j->lba);
		p64(E_REGION + 8*order[p], pc.blocks[order[p]]);
	}
	p64(E_RING, j->mode == CATALOG_MODE_RING ? bytes : 0);
	p64(E_TRIGGER, CATALOG_NO_TRIGGER);
	p64(E_T0, literec_cycles());
	p64(E_U0, catalog_unix_us());
	p64(E_TUPD, literec_cycles());
	p8(E_ERR_POS, 0xff);
	set_meta();
	act_fs = fs;
	if (fs) {
		/* The recording's files on every drive it records to (refused: nothing written). */
		uint64_t bl[NPORTS];
		char name[33];
		memcpy(name, blk + E_NAME, 32);
		name[32] = 0;
		for (p = 0; p < NPORTS; p++)
			bl[p] = (j->mask & (1u << p)) ? pc.blocks[ports[p].pos] : 0;
		if (catalog_fs_rec_begin(j->mask, j->lba, bl, name, g32(E_ID), j->chunk, j->mode, j->mode ==
		    CATALOG_MODE_RING ? bytes : 0))
			return -1;
	}
	if (write_entry(act_set.ports)) {
		if (fs)
			catalog_fs_rec_abort();
		/* The drives that took the entry would list a recording that never started: withdrawn
		 * (deleted, in the other copy) on every drive. */
		p8(E_STATE, CATALOG_STATE_DELETED);
		p32(E_SEQ, g32(E_SEQ) + 1);
		if (write_entry(act_set.ports))
			printf("Error: the catalog may list recording %lu (slot %d), which did not start: rec_delete %lu "
				"once the drives work\n", (unsigned long)g32(E_ID), si.free_slot, (unsigned long)g32(E_ID));
		else
			printf("catalog: the entry could not be written on every drive: withdrawn, nothing recorded\n");
		return -1;
	}
	act = 1;
	act_id = g32(E_ID);
	act_phase = 0;
	act_errors = 0;
	act_checkpoints = 0;
	act_ckpt_max = act_ckpt_cpu = 0;
	act_begin_cycles = literec_cycles() - t_begin;
	/* The recording starts now: the next update of the entry carries this start time. */
	p64(E_T0, literec_cycles());
	p64(E_U0, catalog_unix_us());
	act_rec_ports = j->mask;
	act_next = literec_cycles() + literec_us_to_cycles((uint64_t)catalog_checkpoint_ms*1000);
	set_hex(act_set.id, hex);
	printf("catalog: recording %lu (slot %d of set %s) on ", (unsigned long)g32(E_ID), si.free_slot, hex);
	print_ports(j->mask);
	printf(" from LBA %llu, checkpoints every %lu ms\n", (unsigned long long)j->lba, (unsigned long)catalog_checkpoint_ms);
	return g32(E_ID);
}

static void put_progress(const struct catalog_progress *pr)
{
	p64(E_BYTES, pr->bytes_recorded);
	p64(E_DROPPED, pr->bytes_dropped);
	p64(E_OLDEST, pr->oldest);
	p64(E_TRIGGER, pr->trigger);
	p64(E_TUPD, literec_cycles());
}

/* One step of the checkpoint machine: 0 idle -> 1 flushing the recording's drives -> 2 writing the
 * entry to every drive of the set -> 0. */
static void checkpoint_step(const struct catalog_progress *pr, int force)
{
	switch (act_phase) {
	case 0:
		if (!pr || (!force && literec_cycles() < act_next))
			return;
		put_progress(pr);
		act_ckpt_t0 = literec_cycles();
		act_failed = 0;
		act_pending = act_rec_ports;
		if (submit_all(&act_pending, NVME_OP_FLUSH))
			act_errors++, act_failed = 1;
		act_phase = 1;
		return;
	case 1:
		if (poll_all(&act_pending))
			act_errors++, act_failed = 1;
		if (act_pending)
			return;
		if (act_failed) {
			/* The flush failed: an entry now would claim data the drives may not hold. */
			act_phase = 0;
			act_next = literec_cycles() + literec_us_to_cycles((uint64_t)catalog_checkpoint_ms*1000);
			return;
		}
		p32(E_SEQ, g32(E_SEQ) + 1);
		seal();
		act_pending = act_set.ports;
		if (write_all(&act_pending, ENTRY_BLOCK(v16(blk, E_SLOT), (g32(E_SEQ) & 1) ? 0 : 1)))
			act_errors++, act_failed = 1;
		act_phase = 2;
		return;
	case 2:
		if (poll_all(&act_pending))
			act_errors++, act_failed = 1;
		if (act_pending)
			return;
		/* A failed write may have torn this copy: the next update rewrites the same copy (same
		 * seq), the other one keeps the previous state. */
		if (act_failed)
			p32(E_SEQ, g32(E_SEQ) - 1);
		else if (act_fs)
			catalog_fs_rec_checkpoint(v64(blk, E_BYTES));     /* the files' ValidDataLength */
		act_checkpoints++;
		if (literec_cycles() - act_ckpt_t0 > act_ckpt_max)
			act_ckpt_max = literec_cycles() - act_ckpt_t0;
		act_phase = 0;
		act_next = literec_cycles() + literec_us_to_cycles((uint64_t)catalog_checkpoint_ms*1000);
		return;
	}
}

int catalog_rec_due(void)
{
	if (!act)
		return 0;
	if (act_phase)
		return 1;
	return literec_cycles() >= act_next ? 2 : 0;
}

void catalog_rec_checkpoint(const struct catalog_progress *pr)
{
	uint64_t t0;
	if (!act || (act_phase == 0 && literec_cycles() < act_next))
		return;
	t0 = literec_cycles();
	checkpoint_step(pr, 0);
	act_ckpt_cpu += literec_cycles() - t0;      /* CPU time spent in the steps */
}

void catalog_rec_drop(uint64_t data_offset, uint64_t bytes)
{
	uint32_t n;
	if (!act)
		return;
	p32(E_DROPS, g32(E_DROPS) + 1);
	n = g32(E_LOGGED);
	if (n < CATALOG_DROP_EVENTS) {
		p64(E_DROPLOG + 16*n, data_offset);
		p64(E_DROPLOG + 16*n + 8, bytes);
		p32(E_LOGGED, n + 1);
	}
}

int catalog_rec_end(const struct catalog_result *res)
{
	int k, w, err;
	uint32_t id, pending;
	uint64_t t_end = literec_cycles(), u_end;
	if (!act)
		return 0;
	if (res->t_stop && res->t_stop <= t_end)
		t_end = res->t_stop;
	u_end = unix_at(t_end);
	while (act_phase)
		checkpoint_step(NULL, 0);
	/* The data first (flush), then the entry that says it is there. */
	pending = act_rec_ports;
	if (submit_all(&pending, NVME_OP_FLUSH) | wait_all(pending))   /* both: the submitted ones complete */
		act_errors++;
	put_progress(&res->p);
	p8(E_STATE, res->state);
	if (res->drops_total > g32(E_DROPS))
		p32(E_DROPS, res->drops_total);
	if (res->t_start && res->t_start <= t_end) {
		p64(E_T0, res->t_start);      /* the cycle the recorder started (an armed one: later) */
		p64(E_U0, unix_at(res->t_start));
	}
	p64(E_T1, t_end);                     /* the recording ended when the job layer said so */
	p64(E_U1, u_end);
	w = blk[E_WIDTH];
	if (blk[E_MODE] != CATALOG_MODE_RING)
		for (k = 0; k < w; k++)
			p64(E_REGION + 8*blk[E_ORDER + k],
				member_chunks(res->chunks_written, k, w)*(g32(E_CHUNK)/g32(E_LBA_SIZE)));
	if (res->state == CATALOG_STATE_ERROR) {
		p32(E_ERR_STATUS, res->err_status);
		p8(E_ERR_POS, (res->err_port >= 0 && res->err_port < NPORTS) ? ports[res->err_port].pos : 0xff);
		p64(E_ERR_LBA, res->err_lba);
	}
	p32(E_SEQ, g32(E_SEQ) + 1);
	err = write_entry(act_set.ports);
	act = 0;
	id = g32(E_ID);
	if (act_fs) {
		struct catalog_entry e;
		decode(blk, &e);
		if (catalog_fs_rec_end(&act_set, &e, NULL))
			act_errors++;
		act_fs = 0;
	}
	printf("catalog: recording %lu %s, %llu bytes, %lu checkpoint(s)%s\n", (unsigned long)id,
		catalog_state_str(res->state), (unsigned long long)res->p.bytes_recorded, (unsigned long)act_checkpoints,
		(err || act_errors) ? ", catalog I/O errors (see above)" : "");
	printf("RESULT name=catalog_rec id=%lu state=%s bytes=%llu dropped=%llu checkpoints=%lu ckpt_max_cycles=%llu "
		"ckpt_cpu_cycles=%llu begin_cycles=%llu end_cycles=%llu ok=%d\n", (unsigned long)id,
		catalog_state_str(res->state), (unsigned long long)res->p.bytes_recorded,
		(unsigned long long)res->p.bytes_dropped, (unsigned long)act_checkpoints, (unsigned long long)act_ckpt_max,
		(unsigned long long)act_ckpt_cpu, (unsigned long long)act_begin_cycles,
		(unsigned long long)(literec_cycles() - t_end), !(err || act_errors));
	return err ? -1 : 0;
}

int catalog_lookup(uint32_t id, uint32_t mask_hint, struct catalog_job *j, uint64_t *bytes_recorded,
	uint64_t *oldest)
{
	struct catalog_set s;
	struct catalog_entry e;
	int k, last = -1, r;
	r = catalog_select(mask_hint, CATALOG_SEL_ANY, &s);
	if (r == 0)
		printf("Error: id=%lu: no catalog on the initialized drives (rec_format yes creates one)\n", (unsigned long)id);
	if (r <= 0 || catalog_find(&s, id, &e))
		return -1;
	memset(j, 0, sizeof(*j));
	for (k = 0; k < e.width; k++) {
		int q = e.order[k], p = q < CATALOG_MAX_DRIVES ? s.port_of[q] : -1;
		if (p < 0) {
			printf("Error: recording %lu needs drive %d of the set (serial %s): it is not present\n",
				(unsigned long)id, q, q < CATALOG_MAX_DRIVES ? s.serial[q] : "?");
			return -1;
		}
		if (p <= last || e.start_lba[q] != e.start_lba[e.order[0]]) {
			printf("Error: recording %lu: its drives are not on ports in its stripe order (the recorder stripes in "
				"port order from one LBA): put them back on the ports they were recorded on\n", (unsigned long)id);
			return -1;
		}
		last = p;
		j->mask |= 1u << p;
	}
	j->lba    = e.start_lba[e.order[0]];
	j->chunk  = e.chunk;
	j->mode   = e.mode;
	j->source = e.source;
	j->seed   = e.seed;
	j->bytes  = e.ring ? e.ring : e.bytes;
	*bytes_recorded = e.bytes;
	*oldest = e.oldest;
	return 0;
}

/* Format and delete ---------------------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *data, int n)
{
	const uint8_t *b = data;
	int i;
	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int catalog_format(uint32_t mask, int fs, const char *label)
{
	uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL, t, u;
	int p, n = 0, k, err = 0;
	char hex[17];
	uint8_t id[16];
	uint32_t one;

	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			struct nvme_ctrl *c = &nvme_ctrls[p];
			if (!c->initialized || !c->cpuq || c->lba_size > CATALOG_BLOCK ||
			    (c->nsze << c->lba_shift) <= CATALOG_AREA_BYTES) {
				printf("Error: nvme%d: %s\n", p, !c->initialized ? nvme_strerror(NVME_ERR_NO_INIT) :
					!c->cpuq ? nvme_strerror(NVME_ERR_NO_CPUQ) : "the namespace is too small or its LBAs larger than 4096 bytes");
				return -1;
			}
			h1 = fnv(h1, c->serial, sizeof(c->serial));
			h2 = fnv(h2, c->model, sizeof(c->model));
			n++;
		}
	t = literec_cycles();
	u = catalog_unix_us();
	h1 = fnv(fnv(h1, &t, 8), &u, 8);
	t = literec_cycles();
	h2 = fnv(fnv(h2, &t, 8), &h1, 8);
	memcpy(id, &h1, 8);
	memcpy(id + 8, &h2, 8);

	for (p = 0, k = 0; p < NPORTS; p++) {
		struct nvme_ctrl *c = &nvme_ctrls[p];
		int q, i;
		if (!(mask & (1u << p)))
			continue;
		cat_base[p] = 0;
		catalog_fs_off(p);
		if (fs) {
			uint64_t base;
			if (catalog_fs_format(p, label, &base)) {
				err = -1;
				k++;
				continue;
			}
			cat_base[p] = base;
		}
		memset(blk, 0, sizeof(blk));
		memcpy(blk, hdr_magic, 8);
		blk[H_VERSION] = CATALOG_VERSION;
		blk[H_BYTES + 1] = CATALOG_BLOCK >> 8;
		memcpy(blk + H_SET, id, 16);
		p8(H_SIZE, n);
		p8(H_POS, k);
		p32(H_LBA_SIZE, c->lba_size);
		p64(H_NSZE, c->nsze);
		p64(H_AREA, CATALOG_AREA_BYTES);
		p32(H_BLOCK, CATALOG_BLOCK);
		p32(H_SLOTS, CATALOG_SLOTS);
		p32(H_FIRST, FIRST_BLOCK);
		p32(H_CLK, CONFIG_CLOCK_FREQUENCY);
		if (fs) {
			p32(H_FLAGS, H_FLAG_EXFAT);
			p64(H_FS_LBA, cat_base[p]);
		}
		p64(H_CYCLES, literec_cycles());
		p64(H_UNIX, catalog_unix_us());
		memcpy(blk + H_MODEL, c->model, strlen(c->model));
		memcpy(blk + H_SERIAL, c->serial, strlen(c->serial));
		for (q = 0, i = 0; q < NPORTS; q++)
			if (mask & (1u << q)) {
				memcpy(blk + H_MEMBERS + 32*i, nvme_ctrls[q].serial, strlen(nvme_ctrls[q].serial));
				p64(H_MEMBERS + 32*i + 24, nvme_ctrls[q].nsze);
				i++;
			}
		seal();
		/* Old entries carry the old set identity and are ignored; they are zeroed where the drive can. */
		if ((c->oncs >> 3) & 1) {
			int r = nvme_cpu_io(p, NVME_OP_WRITE_ZEROES, block_lba(p, 2), (CATALOG_AREA_BYTES/CATALOG_BLOCK - 2)*per_block(p), 0);
			if (r)
				io_error(p, "write zeroes", r);
		}
		one = 1u << p;      /* changed only by a failed submission, which ends the sequence */
		if (write_all(&one, 0) || wait_all(one) || write_all(&one, 1) || wait_all(one) ||
		    submit_all(&one, NVME_OP_FLUSH) || wait_all(one))
			err = -1;
		k++;
	}
	set_hex(id, hex);
	if (err)
		printf("Error: the catalog could not be written on every drive (see above)\n");
	else {
		printf("rec_format: new catalog of set %s on ", hex);
		print_ports(mask);
		printf(" (%d drive%s, drive 0 = nvme%d), %s from LBA %lu\n", n, n > 1 ? "s" : "", __builtin_ctz(mask),
			fs ? "in exFAT volumes, recordings as files" : "data",
			(unsigned long)area_end(__builtin_ctz(mask)));
	}
	printf("RESULT name=rec_format ok=%d drives=%d set=%s fs=%s\n", !err, n, hex, fs ? "exfat" : "raw");
	return err;
}

int catalog_delete(struct catalog_set *s, uint32_t id, int trim)
{
	struct catalog_entry e;
	int k, err = 0;
	if (catalog_find(s, id, &e))
		return -1;
	p8(E_STATE, CATALOG_STATE_DELETED);
	p64(E_TUPD, literec_cycles());
	p32(E_SEQ, g32(E_SEQ) + 1);
	if (write_entry(s->ports))
		return -1;
	if (catalog_fs_on(s->ref) && catalog_fs_delete(s, &e))
		err = -1;
	if (!trim)
		return err;
	for (k = 0; k < e.width; k++) {
		int q = e.order[k], p = s->port_of[q], n = 0;
		uint64_t lba = e.start_lba[q], left = e.region[q];
		volatile uint8_t *d = nvme_cpu_dsm_buf(p);
		if (!left)
			continue;
		if (!((nvme_ctrls[p].oncs >> 2) & 1)) {
			printf("nvme%d does not support Dataset Management: its extent stays allocated\n", p);
			continue;
		}
		while (left && n < 256) {
			uint32_t nlb = left > 0xffffffffULL ? 0xffffffffu : (uint32_t)left;
			*(volatile uint32_t *)(d + 16*n)      = 0;
			*(volatile uint32_t *)(d + 16*n + 4)  = nlb;
			*(volatile uint32_t *)(d + 16*n + 8)  = (uint32_t)lba;
			*(volatile uint32_t *)(d + 16*n + 12) = (uint32_t)(lba >> 32);
			lba += nlb;
			left -= nlb;
			n++;
		}
		if ((n = nvme_cpu_io(p, NVME_OP_CPU_DSM, 0, n, 0))) {
			io_error(p, "deallocate", n);
			err = -1;
		} else
			printf("nvme%d: deallocated LBAs %llu..%llu\n", p, (unsigned long long)e.start_lba[q],
				(unsigned long long)(e.start_lba[q] + e.region[q] - 1));
	}
	return err;
}


/* Interrupted recordings: report and close ------------------------------------------------------- */

static uint64_t cycles_to_us(uint64_t d, uint32_t clk)
{
	return clk ? d/clk*1000000ULL + (d % clk)*1000000ULL/clk : 0;
}

/* Ends the interrupted recording whose entry catalog_find put in blk (e) at its last checkpoint:
 * state aborted, the stop time that checkpoint's, a fixed or until-stop recording's regions shrunk
 * to its chunks. On an exFAT set its files are cut first (cut: what was done, per stripe member),
 * the entry written after them: a power loss in between leaves the entry interrupted, and the next
 * repair cuts the files to the same lengths again. */
static int end_at_checkpoint(struct catalog_set *s, const struct catalog_entry *e, struct catalog_fs_cut *cut)
{
	struct catalog_entry ce;
	uint64_t chunks;
	int k;
	if (e->chunk < e->lba_size || !e->lba_size) {
		printf("Error: recording %lu: chunk of %lu bytes with %lu-byte LBAs: not closed\n", (unsigned long)e->id,
			(unsigned long)e->chunk, (unsigned long)e->lba_size);
		return -1;
	}
	p8(E_STATE, CATALOG_STATE_ABORTED);
	p64(E_T1, e->tupd);
	p64(E_U1, e->u0 ? e->u0 + cycles_to_us(e->tupd - e->t0, e->clk) : 0);
	chunks = (e->bytes + e->chunk - 1)/e->chunk;
	if (e->mode != CATALOG_MODE_RING)
		for (k = 0; k < e->width; k++)
			p64(E_REGION + 8*e->order[k], member_chunks(chunks, k, e->width)*(e->chunk/e->lba_size));
	if (catalog_fs_on(s->ref)) {
		decode(blk, &ce);
		if (catalog_fs_rec_end(s, &ce, cut)) {
			printf("Error: recording %lu: its files could not be cut (see above): the catalog keeps it "
				"interrupted\n", (unsigned long)e->id);
			return -1;
		}
	}
	p32(E_SEQ, g32(E_SEQ) + 1);
	return write_entry(s->ports);
}

int catalog_close(struct catalog_set *s, uint32_t id)
{
	struct catalog_entry e;
	uint64_t chunks, lbas;
	int k, q;
	if (catalog_find(s, id, &e))
		return -1;
	if (e.state != CATALOG_STATE_INTERRUPTED) {
		printf("Error: recording %lu is %s: rec_close ends an interrupted recording (one a power loss or a reset "
			"cut; rec_list shows them)\n", (unsigned long)id, catalog_state_str(e.state));
		return -1;
	}
	/* blk holds the entry (catalog_find): the end is its last checkpoint. */
	if (end_at_checkpoint(s, &e, NULL))
		return -1;
	printf("rec_close: recording %lu ended at its last checkpoint: %llu bytes, state aborted\n", (unsigned long)id,
		(unsigned long long)(e.bytes - e.oldest));
	chunks = (e.bytes + e.chunk - 1)/e.chunk;
	for (k = 0; k < e.width; k++) {
		q = e.order[k];
		if (e.mode == CATALOG_MODE_RING) {
			printf("rec_close: drive %d: the ring keeps its whole region, LBAs %llu..%llu\n", q,
				(unsigned long long)e.start_lba[q], (unsigned long long)(e.start_lba[q] + e.region[q] - 1));
			continue;
		}
		lbas = member_chunks(chunks, k, e.width)*(e.chunk/e.lba_size);
		if (lbas < e.region[q])
			printf("rec_close: drive %d: LBAs %llu..%llu freed\n", q, (unsigned long long)(e.start_lba[q] + lbas),
				(unsigned long long)(e.start_lba[q] + e.region[q] - 1));
	}
	return 0;
}

/* The interrupted recordings of a scan: named (raw catalog, or an exFAT set that cannot be repaired
 * now), or listed for the repair. */
struct interrupted_ctx {
	int      port, repair;
	int      n;
	uint32_t id[CATALOG_SLOTS];
};

static void interrupted_visit(const struct catalog_entry *e, volatile uint8_t *raw, void *ctx)
{
	struct interrupted_ctx *ic = ctx;
	if (e->state != CATALOG_STATE_INTERRUPTED)
		return;
	if (ic->repair) {
		if (ic->n < CATALOG_SLOTS)
			ic->id[ic->n++] = e->id;
		return;
	}
	if (ic->port < 0)
		return;
	printf("nvme%d: catalog: recording %lu%s%s%s was interrupted (a power loss or a reset) with %llu bytes at its "
		"last checkpoint: rec_close %lu ends it there\n", ic->port, (unsigned long)e->id, e->name[0] ? " \"" : "",
		e->name, e->name[0] ? "\"" : "", (unsigned long long)(e->bytes - e->oldest), (unsigned long)e->id);
	printf("RESULT name=catalog_interrupted port=%d id=%lu bytes=%llu mode=%s\n", ic->port, (unsigned long)e->id,
		(unsigned long long)e->bytes, catalog_mode_str(e->mode));
}

/* The repair of an interrupted recording of an exFAT set (doc/catalog.md, "exFAT volumes"): ended at
 * its last checkpoint as rec_close does, one line per file saying what was cut. */
static void repair(struct catalog_set *s, uint32_t id)
{
	static struct catalog_fs_cut cut[CATALOG_MAX_DRIVES];
	struct catalog_entry e;
	int k, r;
	if (catalog_find(s, id, &e) || e.state != CATALOG_STATE_INTERRUPTED)
		return;
	r = end_at_checkpoint(s, &e, cut);
	for (k = 0; k < e.width; k++) {
		struct catalog_fs_cut *c = &cut[k];
		if (c->port < 0 || !c->found)
			continue;
		printf("nvme%d: exFAT repair: recording %lu was interrupted (a power loss or a reset): \"%s\" ", c->port,
			(unsigned long)id, c->name);
		if (e.mode == CATALOG_MODE_RING)
			printf("keeps its %llu bytes, valid data %llu -> %llu bytes (its last checkpoint)", (unsigned long long)c->length,
				(unsigned long long)c->old_valid, (unsigned long long)c->valid);
		else if (c->old_length != c->length)
			printf("cut from %llu to %llu bytes (its last checkpoint), the %llu bytes after it freed",
				(unsigned long long)c->old_length, (unsigned long long)c->length,
				(unsigned long long)(c->old_length - c->length));
		else
			printf("already %llu bytes (its last checkpoint)", (unsigned long long)c->length);
		printf("%s%s\n", c->meta ? ", its .sigmf-meta written" : "", r ? "" : "; the recording is ended (aborted)");
		printf("RESULT name=catalog_repair port=%d id=%lu part=%d old_length=%llu length=%llu valid=%llu meta=%d "
			"ok=%d\n", c->port, (unsigned long)id, k + 1, (unsigned long long)c->old_length,
			(unsigned long long)c->length, (unsigned long long)c->valid, c->meta, r == 0);
	}
	if (r)
		printf("Error: recording %lu: not repaired completely (see above): the next nvme_init or rec_list tries "
			"again, rec_close %lu ends it by hand\n", (unsigned long)id, (unsigned long)id);
}

/* Interrupted recordings of the sets on the ports of mask: an exFAT set whose drives are all present
 * is repaired; the others are named when port >= 0 (nvme_init). */
static void interrupted(uint32_t mask, int port)
{
	static struct interrupted_ctx ic;
	struct catalog_set sets[NPORTS];
	struct scan_info si;
	int i, j, n, q;
	if (act)
		return;
	quiet = 1;
	n = catalog_sets(mask, sets, NPORTS);
	for (i = 0; i < n; i++) {
		int complete = 1;
		for (q = 0; q < sets[i].size; q++)
			if (sets[i].port_of[q] < 0)
				complete = 0;
		ic.port = port;
		ic.n = 0;
		ic.repair = catalog_fs_on(sets[i].ref) && complete;
		if (!ic.repair && port < 0)
			continue;
		if (scan_slots(&sets[i], interrupted_visit, &ic, &si) < 0 || !ic.repair)
			continue;
		quiet = 0;
		for (j = 0; j < ic.n; j++)
			repair(&sets[i], ic.id[j]);
		quiet = 1;
	}
	quiet = 0;
}

void catalog_report_interrupted(int port)
{
	interrupted(1u << port, port);
}

void catalog_repair_interrupted(uint32_t mask)
{
	interrupted(mask, -1);
}

/* The guard of the commands that write a drive ------------------------------------------------------- */

#define GUARD_NAMES 4

struct guard_ctx {
	int      pos, n;
	uint64_t lo, hi;                        /* LBAs the command writes: lo..hi-1 */
	uint32_t id[GUARD_NAMES];
	char     name[GUARD_NAMES][33];
	uint64_t first[GUARD_NAMES], last[GUARD_NAMES];
};

static void guard_visit(const struct catalog_entry *e, volatile uint8_t *raw, void *ctx)
{
	struct guard_ctx *g = ctx;
	int k, q = g->pos;
	if (e->state == CATALOG_STATE_DELETED)
		return;
	for (k = 0; k < e->width; k++)
		if (e->order[k] == q && e->region[q] && g->lo < e->start_lba[q] + e->region[q] && e->start_lba[q] < g->hi) {
			if (g->n < GUARD_NAMES) {
				g->id[g->n]    = e->id;
				g->first[g->n] = e->start_lba[q];
				g->last[g->n]  = e->start_lba[q] + e->region[q] - 1;
				strcpy(g->name[g->n], e->name);
			}
			g->n++;
			return;
		}
}

int catalog_force_arg(int *nb_params, char **params)
{
	int i, k, force = 0;
	for (i = 0; i < *nb_params; i++)
		if (!strcmp(params[i], "force=1") || !strcmp(params[i], "force=0")) {
			force = params[i][6] == '1';
			for (k = i; k + 1 < *nb_params; k++)
				params[k] = params[k + 1];
			(*nb_params)--;
			i--;
		}
	return force;
}

int catalog_guard(const char *cmd, uint32_t mask, uint64_t lba, uint64_t blocks, int force)
{
	struct catalog_set sets[NPORTS];
	struct guard_ctx g;
	struct scan_info si;
	uint64_t area;
	int p, i, n, st, hit_area;
	if (force || !blocks)
		return 0;
#ifdef CSR_RECORDER_BASE
	rec_catalog_settle();
#endif
	/* A port whose queue engine serves a recording or replay: the command itself refuses it (nothing
	 * is sent), with that reason. */
	for (p = 0; p < NPORTS; p++)
		if ((mask & (1u << p)) && nvme_engine_in_use(p))
			mask &= ~(1u << p);
	if (act && (mask & act_set.ports)) {
		printf("Error: %s: the catalog on ", cmd);
		print_ports(mask & act_set.ports);
		printf(" is updated by the running recording: wait for its end; nothing was written (force=1 writes anyway)\n");
		return -1;
	}
	n = catalog_sets(mask, sets, NPORTS);
	for (p = 0; p < NPORTS; p++) {
		if (!(mask & (1u << p)))
			continue;
		st = ports[p].st;
		if (st == CATALOG_PORT_NOINIT || st == CATALOG_PORT_NONE || st == CATALOG_PORT_NOQ)
			continue;
		if (st == CATALOG_PORT_FOREIGN) {
			printf("Error: %s would write LBAs %llu..%llu of nvme%d: it holds %s; nothing was written (force=1 "
				"writes anyway)\n", cmd, (unsigned long long)lba, (unsigned long long)(lba + blocks - 1), p,
				catalog_port_str(p));
			printf("RESULT name=catalog_guard cmd=%s port=%d refused=1 catalog=0 recordings=0 foreign=1\n", cmd, p);
			return -1;
		}
		if (st == CATALOG_PORT_IOERR) {
			printf("Error: %s: the catalog of nvme%d could not be read to check what the write would destroy; "
				"nothing was written (force=1 writes anyway)\n", cmd, p);
			return -1;
		}
		area = area_end(p);
		memset(&g, 0, sizeof(g));
		g.pos = ports[p].pos;
		g.lo  = lba;
		g.hi  = lba + blocks;
		hit_area = lba < area;
		if (st == CATALOG_PORT_OK)
			for (i = 0; i < n; i++)
				if (!memcmp(sets[i].id, ports[p].set, 16) && scan_slots(&sets[i], guard_visit, &g, &si) < 0)
					return -1;
		if (!hit_area && !g.n) {
			uint64_t at = lba;
			/* exFAT: the clusters of files that are no recordings (.sigmf-meta, a PC's files). */
			if (catalog_fs_on(p) && catalog_fs_used(p, lba, blocks, &at)) {
				printf("Error: %s would write LBAs %llu..%llu of nvme%d: files of its exFAT volume (from LBA %llu: "
					".sigmf-meta files, or files a PC wrote) would be damaged; nothing was written (force=1 writes "
					"anyway)\n", cmd, (unsigned long long)lba, (unsigned long long)(lba + blocks - 1), p,
					(unsigned long long)at);
				printf("RESULT name=catalog_guard cmd=%s port=%d refused=1 catalog=0 recordings=0 files=1\n", cmd, p);
				return -1;
			}
			continue;
		}
		printf("Error: %s would write LBAs %llu..%llu of nvme%d: ", cmd, (unsigned long long)lba,
			(unsigned long long)(lba + blocks - 1), p);
		if (hit_area)
			printf("the catalog (LBAs 0..%llu)", (unsigned long long)(area - 1));
		for (i = 0; i < g.n && i < GUARD_NAMES; i++)
			printf("%srecording %lu%s%s%s (LBAs %llu..%llu)", hit_area || i ? ", " : "", (unsigned long)g.id[i],
				g.name[i][0] ? " \"" : "", g.name[i], g.name[i][0] ? "\"" : "", (unsigned long long)g.first[i],
				(unsigned long long)g.last[i]);
		if (g.n > GUARD_NAMES)
			printf(" and %d more recording(s)", g.n - GUARD_NAMES);
		if (hit_area)
			printf(" would be lost; nothing was written (force=1 overwrites them; rec_format yes writes a new "
				"catalog afterwards)\n");
		else
			printf(" would be lost; nothing was written (rec_delete <id> frees a recording's LBAs, rec_format yes "
				"all of them; force=1 overwrites them)\n");
		printf("RESULT name=catalog_guard cmd=%s port=%d refused=1 catalog=%d recordings=%d\n", cmd, p, hit_area, g.n);
		return -1;
	}
	return 0;
}

#ifdef CSR_RECORDER_BASE

/* Recording jobs (record.c) ------------------------------------------------------------------------
 * Every recording job (rec_start, rec_record, the self-tests) enters the drives' catalog, when they
 * have one, from here only: begin when the job starts (refused: nothing is sent), a checkpoint from
 * the polling (at most every catalog_checkpoint_ms of modeled time, one non-blocking step per poll),
 * the end when a poll sees the job over, with the accounting, the drop log and a ring's trigger and
 * oldest byte. `auto` places a recording after the last one; `id=<n>` replays one. */

static int      cat_on;                 /* the current recording job is in the catalog */
static uint64_t cat_start;              /* modeled cycle of the start (0: armed, not known) */
static uint64_t cat_drops, cat_gaps;    /* drop log entries passed on, and their bytes */

int catalog_job_on(void) { return cat_on; }

void catalog_job_started(uint64_t cycles) { cat_start = cycles; }

int catalog_job_begin(struct rec_job *j)
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
void catalog_job_end(struct rec_job *j, struct rec_result *r, int state)
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
void catalog_job_poll(struct rec_job *j, struct rec_result *r)
{
	struct catalog_progress pr;
	int due;
	if (!cat_on || j->replay)
		return;
	/* (An arm clears `done`: an armed job is done when the run its start began ended.) */
	if (r->done && !r->busy) {
		catalog_job_end(j, r, CATALOG_STATE_COMPLETE);
		return;
	}
	if (!(due = catalog_rec_due()))
		return;
	cat_progress(j, r, &pr);
	if (due == 2)
		cat_drop_log(r, pr.bytes_recorded);
	catalog_rec_checkpoint(&pr);
}

/* rec_record/rec_start auto: the first LBA after the catalog's recordings (on a chunk). */
int catalog_job_place(struct rec_job *j)
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
int catalog_job_replay(const char *idv, int nb_params, char **params, struct rec_job *j)
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

#endif

#else

int catalog_rec_begin(const struct catalog_job *j) { return 0; }
int catalog_until_stop_region(uint32_t mask, uint32_t chunk, int place, uint64_t *lba, uint64_t *bytes) { return 0; }
void catalog_rec_checkpoint(const struct catalog_progress *p) {}
void catalog_rec_drop(uint64_t data_offset, uint64_t bytes) {}
int catalog_rec_end(const struct catalog_result *r) { return 0; }
int catalog_rec_active(void) { return 0; }
int catalog_rec_due(void) { return 0; }
int catalog_guard(const char *cmd, uint32_t mask, uint64_t lba, uint64_t blocks, int force) { return 0; }
int catalog_force_arg(int *nb_params, char **params) { return 0; }
void catalog_report_interrupted(int port) {}
void catalog_repair_interrupted(uint32_t mask) {}

#endif
