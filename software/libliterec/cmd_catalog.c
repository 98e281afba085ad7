// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Catalog BIOS commands (catalog.h, doc/catalog.md):
//
//   rec_format [fs=raw|exfat] [label=NAME] [yes] [ports=all|N|N,M..]
//                                           write an empty catalog (without `yes`: say what it would erase);
//                                           fs=exfat: in an exFAT volume, recordings as files (catalog_fs.c)
//   rec_list [ports=...] [deleted]          the recordings of each set
//   rec_show <id> [ports=...]               one recording, with its drop log
//   rec_delete <id> [trim] [ports=...]      delete (trim: deallocate its regions)
//   rec_close <id> [ports=...]              end an interrupted recording at its last checkpoint
//   rec_meta [key=value ...] [clear]        metadata for the next recording (name, datatype, rate, freq, text);
//                                           name="words in quotes", \uXXXX for a letter beyond ASCII
//   rec_clock [unix-seconds]                wall-clock time of the recordings
//   rec_checkpoint [ms]                     checkpoint interval of a running recording (modeled time)

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <generated/mem.h>

#include <bios/command.h>
#include <bios/readline.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"
#include "catalog.h"
#include "record.h"

#ifdef CSR_NVME0_BASE

#define NPORTS LITEREC_SSD_PORTS

static uint32_t initialized_ports(void)
{
	uint32_t m = 0;
	int p;
	for (p = 0; p < NPORTS; p++)
		if (nvme_ctrls[p].initialized)
			m |= 1u << p;
	return m;
}

/* ports=all|N|N,M,...: 0 on success. */
static int parse_ports(const char *v, uint32_t *mask)
{
	unsigned long p;
	char buf[32], *tok, *save;
	if (!strcmp(v, "all")) {
		*mask = initialized_ports();
		return 0;
	}
	*mask = 0;
	strncpy(buf, v, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (literec_parse_ulong(tok, &p) || p >= NPORTS) {
			printf("Error: invalid ports '%s': 'all', a port 0..%d or a list like 0,1\n", v, NPORTS - 1);
			return -1;
		}
		*mask |= 1u << p;
	}
	if (!*mask) {
		printf("Error: invalid ports '%s': 'all', a port 0..%d or a list like 0,1\n", v, NPORTS - 1);
		return -1;
	}
	return 0;
}

/* Options common to the commands: ports=..., and the words in `flags` (set in *found as bits).
 * The catalog is not read or changed by commands while a recording updates it. */
static int parse_opts(int n, char **params, const char *usage, uint32_t *mask, const char **flags, uint32_t *found)
{
	int i, k;
#ifdef CSR_RECORDER_BASE
	rec_catalog_settle();
#endif
	if (catalog_rec_active()) {
		printf("Error: a recording is running and updates the catalog: wait for its end first\n");
		return -1;
	}
	*mask = initialized_ports();
	if (found)
		*found = 0;
	for (i = 0; i < n; i++) {
		if (!strncmp(params[i], "ports=", 6)) {
			if (parse_ports(params[i] + 6, mask))
				return -1;
			continue;
		}
		for (k = 0; flags && flags[k]; k++)
			if (!strcmp(params[i], flags[k])) {
				*found |= 1u << k;
				break;
			}
		if (!flags || !flags[k]) {
			printf("Error: unknown option '%s'\n%s\n", params[i], usage);
			return -1;
		}
	}
	if (!*mask) {
		printf("Error: no initialized drive: nvme_init [port] first\n");
		return -1;
	}
	return 0;
}

static int nbits(uint32_t m)
{
	int n = 0;
	for (; m; m &= m - 1)
		n++;
	return n;
}

static void print_set(const struct catalog_set *s)
{
	int q;
	printf("set %02x%02x%02x%02x%02x%02x%02x%02x: %d drive%s (", s->id[0], s->id[1], s->id[2], s->id[3], s->id[4],
		s->id[5], s->id[6], s->id[7], s->size, s->size > 1 ? "s" : "");
	for (q = 0; q < s->size; q++) {
		if (s->port_of[q] >= 0)
			printf("%sdrive %d = nvme%d", q ? ", " : "", q, s->port_of[q]);
		else
			printf("%sdrive %d = serial %s MISSING", q ? ", " : "", q, s->serial[q]);
	}
	printf(")\n");
}

static uint64_t cycles_us(uint64_t cycles, uint32_t clk)
{
	return clk ? cycles/clk*1000000ULL + (cycles % clk)*1000000ULL/clk : 0;
}

static void print_order(const struct catalog_entry *e, char sep)
{
	int k;
	for (k = 0; k < e->width; k++)
		printf("%s%d", k ? (sep == '+' ? "+" : ",") : "", e->order[k]);
}

/* rec_list -------------------------------------------------------------------------------------- */

static void list_visit(const struct catalog_entry *e, void *ctx)
{
	uint64_t end = e->t1 ? e->t1 : e->tupd;
	int *count = ctx;
	(*count)++;
	printf("%4lu  %-11s  %-10s  %12llu  %8llu  ", (unsigned long)e->id, catalog_state_str(e->state),
		catalog_mode_str(e->mode), (unsigned long long)(e->bytes - e->oldest), (unsigned long long)e->dropped);
	print_order(e, '+');
	printf("  %10llu  %10llu us  %s\n", (unsigned long long)e->start_lba[e->order[0] & 7],
		(unsigned long long)cycles_us(end - e->t0, e->clk), e->name[0] ? e->name : "-");
	printf("RESULT name=rec_list_entry id=%lu slot=%d state=%s mode=%s bytes=%llu oldest=%llu dropped=%llu drops=%lu "
		"width=%d order=", (unsigned long)e->id, e->slot, catalog_state_str(e->state), catalog_mode_str(e->mode),
		(unsigned long long)e->bytes, (unsigned long long)e->oldest, (unsigned long long)e->dropped,
		(unsigned long)e->drops_total, e->width);
	print_order(e, ',');
	printf(" lba=%llu chunk=%lu seed=%lu start_cycles=%llu stop_cycles=%llu label=%s\n",
		(unsigned long long)e->start_lba[e->order[0] & 7], (unsigned long)e->chunk, (unsigned long)e->seed,
		(unsigned long long)e->t0, (unsigned long long)e->t1, e->name[0] ? e->name : "-");
}

static void rec_list_handler(int nb_params, char **params)
{
	static const char *flags[] = {"deleted", NULL};
	struct catalog_set sets[NPORTS];
	uint32_t mask, found;
	uint64_t t0;
	int n, i, p, total = 0, corrupt = 0;
	if (parse_opts(nb_params, params, "rec_list [ports=all|N|N,M..] [deleted]", &mask, flags, &found))
		return;
	t0 = literec_cycles();
	catalog_repair_interrupted(mask);    /* exFAT sets: a recording a power loss cut is ended, its files cut */
	n = catalog_sets(mask, sets, NPORTS);
	for (p = 0; p < NPORTS; p++)
		if ((mask & (1u << p)) && catalog_port_state(p) != CATALOG_PORT_OK)
			printf("nvme%d: %s%s\n", p, catalog_port_str(p),
				catalog_port_state(p) == CATALOG_PORT_NONE ? " (rec_format yes creates one)" : "");
	for (i = 0; i < n; i++) {
		int count = 0, c;
		print_set(&sets[i]);
		printf("  id  state        mode               bytes   dropped  drives         lba     duration     name\n");
		c = catalog_scan(&sets[i], found & 1, list_visit, &count);
		if (c < 0)
			return;
		if (!count)
			printf("  (no recordings)\n");
		total += count;
		corrupt += c;
	}
	printf("RESULT name=rec_list sets=%d recordings=%d corrupt=%d cycles=%llu\n", n, total, corrupt,
		(unsigned long long)(literec_cycles() - t0));
}
define_literec_command(rec_list, rec_list_handler, "List the recordings in the catalog: rec_list [ports=] [deleted]");

/* rec_show -------------------------------------------------------------------------------------- */

static int parse_id(int nb_params, char **params, const char *usage, uint32_t *id)
{
	unsigned long v;
	if (nb_params < 1) {
		printf("%s\n", usage);
		return -1;
	}
	if (literec_parse_ulong(params[0], &v) || v == 0 || v > 0xffffffffUL) {
		printf("Error: invalid id '%s': a recording id (rec_list shows them)\n", params[0]);
		return -1;
	}
	*id = v;
	return 0;
}

static void rec_show_handler(int nb_params, char **params)
{
	static const char *usage = "rec_show <id> [ports=all|N|N,M..]";
	struct catalog_set s;
	struct catalog_entry e;
	uint32_t id, mask;
	uint64_t off, n;
	int k, j;
	if (parse_id(nb_params, params, usage, &id) || parse_opts(nb_params - 1, params + 1, usage, &mask, NULL, NULL))
		return;
	if ((k = catalog_select(mask, CATALOG_SEL_ANY, &s)) <= 0) {
		if (k == 0)
			printf("Error: no catalog on the initialized drives (rec_format yes creates one)\n");
		return;
	}
	if (catalog_find(&s, id, &e))
		return;
	printf("recording %lu%s%s%s: %s, %s, source %s", (unsigned long)e.id, e.name[0] ? " \"" : "", e.name,
		e.name[0] ? "\"" : "", catalog_state_str(e.state), catalog_mode_str(e.mode),
		e.source == CATALOG_SOURCE_PATTERN ? "test pattern" : "user stream");
	if (e.source == CATALOG_SOURCE_PATTERN)
		printf(" (seed %lu)", (unsigned long)e.seed);
	printf("\n  length        : %llu bytes", (unsigned long long)(e.bytes - e.oldest));
	if (e.mode == CATALOG_MODE_RING)
		printf(" (data offsets %llu..%llu of a %llu-byte ring)", (unsigned long long)e.oldest,
			(unsigned long long)e.bytes, (unsigned long long)e.ring);
	printf("\n  dropped       : %llu bytes, %lu drop event(s), %lu logged\n", (unsigned long long)e.dropped,
		(unsigned long)e.drops_total, (unsigned long)e.drops_logged);
	printf("  striping      : %lu KiB chunks over %d drive(s), order ", (unsigned long)(e.chunk >> 10), e.width);
	print_order(&e, ',');
	printf(" (set positions)\n");
	for (k = 0; k < e.width; k++) {
		int q = e.order[k] & 7;
		if (s.port_of[q] >= 0)
			printf("  drive %d       : nvme%d", q, s.port_of[q]);
		else
			printf("  drive %d       : missing (serial %s)", q, s.serial[q]);
		printf(", LBAs %llu..%llu\n", (unsigned long long)e.start_lba[q],
			(unsigned long long)(e.start_lba[q] + e.region[q] - 1));
	}
	printf("  start         : cycle %llu (%llu us)", (unsigned long long)e.t0, (unsigned long long)cycles_us(e.t0, e.clk));
	if (e.u0)
		printf(", unix %llu.%06llu", (unsigned long long)(e.u0/1000000), (unsigned long long)(e.u0 % 1000000));
	if (e.t1)
		printf("\n  stop          : cycle %llu (%llu us after the start)", (unsigned long long)e.t1,
			(unsigned long long)cycles_us(e.t1 - e.t0, e.clk));
	else
		printf("\n  last update   : cycle %llu (%llu us after the start): the recording did not end",
			(unsigned long long)e.tupd, (unsigned long long)cycles_us(e.tupd - e.t0, e.clk));
	if (e.mode == CATALOG_MODE_RING && e.trigger != CATALOG_NO_TRIGGER)
		printf("\n  trigger       : data offset %llu", (unsigned long long)e.trigger);
	if (e.state == CATALOG_STATE_ERROR)
		printf("\n  error         : drive %d, LBA %llu: %s", e.err_pos, (unsigned long long)e.err_lba,
			nvme_status_str(e.err_status));
	printf("\n  metadata      : datatype %s, rate %llu.%03llu Hz, frequency %llu.%03llu Hz%s%s\n",
		e.datatype[0] ? e.datatype : "(bytes)", (unsigned long long)(e.rate_mhz/1000),
		(unsigned long long)(e.rate_mhz % 1000), (unsigned long long)(e.freq_mhz/1000),
		(unsigned long long)(e.freq_mhz % 1000), e.text[0] ? ", text: " : "", e.text);
	for (j = 0; j < (int)e.drops_logged; j++) {
		catalog_found_drop(j, &off, &n);
		printf("  drop %-3d      : %llu bytes before data offset %llu\n", j, (unsigned long long)n,
			(unsigned long long)off);
	}
	printf("RESULT name=rec_show id=%lu state=%s mode=%s bytes=%llu oldest=%llu ring=%llu dropped=%llu drops=%lu "
		"logged=%lu chunk=%lu width=%d lba=%llu seed=%lu datatype=%s rate_millihz=%llu start_unix_us=%llu "
		"seq=%lu\n", (unsigned long)e.id, catalog_state_str(e.state), catalog_mode_str(e.mode),
		(unsigned long long)e.bytes, (unsigned long long)e.oldest, (unsigned long long)e.ring,
		(unsigned long long)e.dropped, (unsigned long)e.drops_total, (unsigned long)e.drops_logged,
		(unsigned long)e.chunk, e.width, (unsigned long long)e.start_lba[e.order[0] & 7], (unsigned long)e.seed,
		e.datatype[0] ? e.datatype : "-", (unsigned long long)e.rate_mhz, (unsigned long long)e.u0,
		(unsigned long)e.seq);
}
define_literec_command(rec_show, rec_show_handler, "Show a recording of the catalog: rec_show <id> [ports=]");

/* rec_delete ------------------------------------------------------------------------------------ */

static void rec_delete_handler(int nb_params, char **params)
{
	static const char *usage = "rec_delete <id> [trim] [ports=all|N|N,M..]";
	static const char *flags[] = {"trim", NULL};
	struct catalog_set s;
	uint32_t id, mask, found;
	int r;
	if (parse_id(nb_params, params, usage, &id) || parse_opts(nb_params - 1, params + 1, usage, &mask, flags, &found))
		return;
	if ((r = catalog_select(mask, CATALOG_SEL_COMPLETE | CATALOG_SEL_ANY, &s)) <= 0) {
		if (r == 0)
			printf("Error: no catalog on the initialized drives (rec_format yes creates one)\n");
		return;
	}
	r = catalog_delete(&s, id, found & 1);
	if (r == 0)
		printf("rec_delete: recording %lu deleted%s\n", (unsigned long)id, (found & 1) ? " and deallocated" : "");
	printf("RESULT name=rec_delete ok=%d id=%lu trim=%d\n", r == 0, (unsigned long)id, (int)(found & 1));
}
define_literec_command(rec_delete, rec_delete_handler, "Delete a recording from the catalog: rec_delete <id> [trim] [ports=]");

/* rec_close ------------------------------------------------------------------------------------- */

static void rec_close_handler(int nb_params, char **params)
{
	static const char *usage = "rec_close <id> [ports=all|N|N,M..]   (an interrupted recording: ends it at its last checkpoint)";
	struct catalog_set s;
	uint32_t id, mask;
	int r;
	if (parse_id(nb_params, params, usage, &id) || parse_opts(nb_params - 1, params + 1, usage, &mask, NULL, NULL))
		return;
	if ((r = catalog_select(mask, CATALOG_SEL_COMPLETE | CATALOG_SEL_ANY, &s)) <= 0) {
		if (r == 0)
			printf("Error: no catalog on the initialized drives (rec_format yes creates one)\n");
		return;
	}
	r = catalog_close(&s, id);
	printf("RESULT name=rec_close ok=%d id=%lu\n", r == 0, (unsigned long)id);
}
define_literec_command(rec_close, rec_close_handler, "End an interrupted recording at its last checkpoint: rec_close <id> [ports=]");

/* rec_format ------------------------------------------------------------------------------------ */

static void count_visit(const struct catalog_entry *e, void *ctx)
{
	(*(int *)ctx)++;
}

static void rec_format_handler(int nb_params, char **params)
{
	static const char *flags[] = {"yes", NULL};
	static const char *usage = "rec_format [fs=raw|exfat] [label=NAME] [yes] [ports=all|N|N,M..]";
	struct catalog_set sets[NPORTS];
	uint32_t mask, found;
	int p, i, j, n, k = 0, count = 0, fs = 0;
	const char *label = "";
	/* fs= and label= first (the other options: parse_opts). */
	for (i = 0; i < nb_params; i++) {
		if (!strncmp(params[i], "fs=", 3)) {
			if (!strcmp(params[i] + 3, "exfat"))
				fs = 1;
			else if (!strcmp(params[i] + 3, "raw"))
				fs = 0;
			else {
				printf("Error: fs '%s': exfat (an exFAT volume, recordings as files any PC reads) or raw (the "
					"catalog alone)\n%s\n", params[i] + 3, usage);
				return;
			}
		} else if (!strncmp(params[i], "label=", 6)) {
			const char *l = params[i] + 6;
			if (strlen(l) > 11 || strpbrk(l, "\"*/:<>?\\|")) {
				printf("Error: label '%s': at most 11 characters, none of \" * / : < > ? \\ |\n", l);
				return;
			}
			for (j = 0; l[j]; j++)
				if ((uint8_t)l[j] < 0x20 || (uint8_t)l[j] > 0x7e) {
					printf("Error: label '%s': printable ASCII characters only\n", l);
					return;
				}
			label = l;
		} else
			continue;
		for (j = i; j + 1 < nb_params; j++)
			params[j] = params[j + 1];
		nb_params--;
		i--;
	}
	if (label[0] && !fs) {
		printf("Error: label= names an exFAT volume: rec_format fs=exfat label=%s ...\n", label);
		return;
	}
	if (parse_opts(nb_params, params, usage, &mask, flags, &found))
		return;
	for (p = 0; p < NPORTS; p++)
		if ((mask & (1u << p)) && !nvme_ctrls[p].initialized) {
			printf("Error: nvme%d: %s\n", p, nvme_strerror(NVME_ERR_NO_INIT));
			return;
		}
	if (found & 1) {
		catalog_format(mask, fs, label);
		return;
	}
	n = catalog_sets(mask, sets, NPORTS);
	for (i = 0; i < n; i++)
		catalog_scan(&sets[i], 0, count_visit, &count);
	for (p = 0; p < NPORTS; p++)
		if (mask & (1u << p)) {
			if (fs)
				printf("rec_format: nvme%d would become drive %d of a new set of %d: an exFAT volume over the whole "
					"namespace (LBAs 0..%llu; any files and recordings on it lost); now: %s\n", p, k++, nbits(mask),
					(unsigned long long)(nvme_ctrls[p].nsze - 1), catalog_port_str(p));
			else
				printf("rec_format: nvme%d would become drive %d of a new set of %d: LBAs 0..%lu (1 MiB) rewritten; "
					"now: %s\n", p, k++, nbits(mask),
					(unsigned long)(CATALOG_AREA_BYTES/nvme_ctrls[p].lba_size - 1), catalog_port_str(p));
		}
	if (count)
		printf("rec_format: the %d recording(s) listed now would no longer be listed (their data stays on the "
			"drives but nothing would say where)\n", count);
	printf("rec_format: nothing was written. To format: rec_format%s%s%s yes%s%s\n", fs ? " fs=exfat" : "",
		label[0] ? " label=" : "", label, nb_params ? " " : "", nb_params ? params[0] : "");
	printf("RESULT name=rec_format ok=0 dry_run=1 drives=%d recordings=%d\n", nbits(mask), count);
}
define_literec_command(rec_format, rec_format_handler, "Write an empty catalog: rec_format [fs=raw|exfat] [label=] [yes] [ports=] (without yes: what it would erase)");

#endif

/* rec_meta -------------------------------------------------------------------------------------- */

/* SigMF core:datatype: (r|c)(f32|f64|i32|i16|u32|u16)(_le|_be) or (r|c)(i8|u8). */
static int sigmf_datatype(const char *t)
{
	static const char *w[] = {"f32", "f64", "i32", "i16", "u32", "u16", NULL};
	int i;
	if (*t != 'r' && *t != 'c')
		return 0;
	t++;
	if (!strcmp(t, "i8") || !strcmp(t, "u8"))
		return 1;
	for (i = 0; w[i]; i++)
		if (!strncmp(t, w[i], 3) && (!strcmp(t + 3, "_le") || !strcmp(t + 3, "_be")))
			return 1;
	return 0;
}

/* Hz with an optional k/M/G suffix -> millihertz: the decimals must fit a millihertz (3 with Hz,
 * 6 with k, 9 with M, 12 with G) and the value 64 bits; anything else is refused, not rounded. */
static int parse_hz(const char *s, uint64_t *mhz)
{
	uint64_t ip = 0, fp = 0, mult = 1000, scale = 1;
	int nd = 0, digits = 0;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (ip > (UINT64_MAX - 9)/10)
			return -1;
		ip = ip*10 + (*s - '0');
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, nd++, digits++) {
			if (nd >= 12)
				return -1;
			fp = fp*10 + (*s - '0');
			scale *= 10;
		}
	if (!digits)
		return -1;
	if (*s == 'k')      { mult = 1000ULL*1000; s++; }
	else if (*s == 'M') { mult = 1000ULL*1000000; s++; }
	else if (*s == 'G') { mult = 1000ULL*1000000000; s++; }
	if (*s || mult % scale || ip > UINT64_MAX/mult || fp*(mult/scale) > UINT64_MAX - ip*mult)
		return -1;
	*mhz = ip*mult + fp*(mult/scale);
	return 0;
}

/* A value as typed (doc/catalog.md, "Names"): a word, or "words in quotes". LiteX's get_param()
 * splits the line at its spaces in place (a NUL for the first space after each word, the other
 * spaces skipped): the quoted words are put back together from the line, every character between
 * two of them a space again, so the spaces are the ones typed. LiteX's readline keeps printable
 * ASCII only: \uXXXX stands for the Unicode character U+XXXX (stored as UTF-8), \\ and \" for a
 * backslash and a quote. *i: the last parameter the value used. 0, or -1 (printed). */
static int meta_value(const char *key, int nb_params, char **params, int *i, const char *v, char *out, int max)
{
	char raw[CMD_LINE_BUFFER_SIZE];
	const char *c = v;
	int n = 0, k = *i, o = 0;
	if (*c == '"') {
		for (c++;;) {
			if (n >= (int)sizeof(raw) - 2)
				break;
			if (*c == 0) {
				if (k + 1 >= nb_params) {
					printf("Error: %s: no closing quote (%s=\"words with spaces\")\n", key, key);
					return -1;
				}
				k++;
				if (params[k] > c && params[k] - c < CMD_LINE_BUFFER_SIZE)
					while (c < params[k] && n < (int)sizeof(raw) - 2)
						raw[n++] = ' ', c++;
				else
					raw[n++] = ' ';
				c = params[k];
				continue;
			}
			if (*c == '\\' && c[1]) {
				raw[n++] = *c++;
				raw[n++] = *c++;
				continue;
			}
			if (*c == '"') {
				c++;
				break;
			}
			raw[n++] = *c++;
		}
		if (*c) {
			printf("Error: %s: '%s' after the closing quote (a space first, or \\\" for a quote)\n", key, c);
			return -1;
		}
	} else
		while (*c && n < (int)sizeof(raw) - 1)
			raw[n++] = *c++;
	raw[n] = 0;
	for (c = raw; *c; ) {
		uint8_t u[3];
		int len = 1, j;
		u[0] = *c;
		if (*c == '\\') {
			unsigned long cp = 0;
			if (c[1] == '\\' || c[1] == '"') {
				u[0] = c[1];
				c += 2;
			} else if (c[1] == 'u') {
				for (j = 2; j < 6; j++) {
					char h = c[j];
					int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 :
						h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
					if (d < 0)
						break;
					cp = cp*16 + d;
				}
				if (j < 6 || cp == 0 || (cp >= 0xd800 && cp < 0xe000)) {
					printf("Error: %s: '%.6s': \\u and four hex digits of a Unicode character U+0001..U+FFFF "
						"(not a surrogate)\n", key, c);
					return -1;
				}
				if (cp < 0x80)
					u[0] = cp;
				else if (cp < 0x800) {
					u[0] = 0xc0 | (cp >> 6);
					u[1] = 0x80 | (cp & 0x3f);
					len = 2;
				} else {
					u[0] = 0xe0 | (cp >> 12);
					u[1] = 0x80 | ((cp >> 6) & 0x3f);
					u[2] = 0x80 | (cp & 0x3f);
					len = 3;
				}
				c += 6;
			} else {
				printf("Error: %s: '\\%c': the escapes are \\uXXXX (a Unicode character), \\\\ and \\\"\n", key,
					c[1] ? c[1] : ' ');
				return -1;
			}
		} else
			c++;
		if (o + len > max) {
			printf("Error: %s: at most %d bytes (UTF-8: a letter beyond ASCII takes 2 or 3)\n", key, max);
			return -1;
		}
		for (j = 0; j < len; j++)
			out[o++] = u[j];
	}
	out[o] = 0;
	*i = k;
	return 0;
}

static void print_meta(void)
{
	struct catalog_meta *m = &catalog_next_meta;
	printf("next recording: name=%s datatype=%s rate=%llu.%03llu freq=%llu.%03llu text=%s\n",
		m->name[0] ? m->name : "-", m->datatype[0] ? m->datatype : "-", (unsigned long long)(m->rate_mhz/1000),
		(unsigned long long)(m->rate_mhz % 1000), (unsigned long long)(m->freq_mhz/1000),
		(unsigned long long)(m->freq_mhz % 1000), m->text[0] ? m->text : "-");
}

static void rec_meta_handler(int nb_params, char **params)
{
	static const char *usage = "rec_meta [name=<word>|name=\"<words>\"] [datatype=<SigMF datatype>] [rate=<Hz>] [freq=<Hz>] [text=|text+=<words...>] | clear";
	struct catalog_meta m = catalog_next_meta;
	int i;
	for (i = 0; i < nb_params; i++) {
		char *eq = strchr(params[i], '=');
		const char *v = eq ? eq + 1 : "";
		int klen = eq ? (int)(eq - params[i]) : (int)strlen(params[i]);
#define KEY(k) (klen == (int)strlen(k) && !strncmp(params[i], k, klen))
		if (!eq && !strcmp(params[i], "clear")) {
			memset(&m, 0, sizeof(m));
		} else if (!eq) {
			printf("Error: '%s': key=value\n%s\n", params[i], usage);
			return;
		} else if (KEY("name")) {
			if (meta_value("name", nb_params, params, &i, v, m.name, 32))
				return;
		} else if (KEY("datatype")) {
			if (*v && !sigmf_datatype(v)) {
				printf("Error: datatype '%s': a SigMF datatype, e.g. ri16_le, ci16_le, cf32_le, ru8 ((r|c)(f32|f64|i32|i16|u32|u16)_(le|be), (r|c)(i8|u8))\n", v);
				return;
			}
			strcpy(m.datatype, v);
		} else if (KEY("rate") || KEY("freq")) {
			uint64_t hz;
			if (parse_hz(v, &hz)) {
				printf("Error: %.*s '%s': a frequency in Hz with an optional k/M/G suffix, to the millihertz "
					"(3 decimals with Hz, 6 with k, 9 with M, 12 with G), below 2^64 mHz\n", klen, params[i], v);
				return;
			}
			if (KEY("rate"))
				m.rate_mhz = hz;
			else
				m.freq_mhz = hz;
		} else if (KEY("text") || KEY("text+")) {
			/* The rest of the line (words joined with single spaces); text+= appends to the text
			 * so far (a BIOS command line holds 64 characters). */
			size_t len = KEY("text") ? 0 : strlen(m.text);
			int k;
			m.text[len] = 0;
			for (k = i; k < nb_params; k++) {
				const char *w = k == i ? v : params[k];
				size_t l = strlen(w);
				if (!l)
					continue;
				if (len + (len ? 1 : 0) + l > 256) {
					printf("Error: text: at most 256 characters\n");
					return;
				}
				if (len)
					m.text[len++] = ' ';
				memcpy(m.text + len, w, l + 1);
				len += l;
			}
			i = nb_params;
		} else {
			printf("Error: unknown key '%.*s'\n%s\n", klen, params[i], usage);
			return;
		}
#undef KEY
	}
	catalog_next_meta = m;
	print_meta();
}
define_literec_command(rec_meta, rec_meta_handler, "Metadata of the next recording: rec_meta [name=] [datatype=] [rate=Hz] [freq=Hz] [text=...] | clear");

/* rec_clock, rec_checkpoint ------------------------------------------------------------------------- */

static void rec_clock_handler(int nb_params, char **params)
{
	unsigned long long t;
	uint64_t us;
	if (nb_params > 0) {
		if (literec_parse_u64(params[0], &t) || t > 253402300799ULL) {
			printf("Error: invalid time '%s': seconds since 1970-01-01 UTC (e.g. the output of `date +%%s`)\n", params[0]);
			return;
		}
		catalog_set_clock(t);
	}
	us = catalog_unix_us();
	if (us)
		printf("rec_clock: %llu.%06llu s since 1970-01-01 UTC (kept by the modeled clock)\n",
			(unsigned long long)(us/1000000), (unsigned long long)(us % 1000000));
	else
		printf("rec_clock: not set: recordings carry modeled cycles only (rec_clock <unix-seconds> sets it)\n");
	printf("RESULT name=rec_clock unix_us=%llu\n", (unsigned long long)us);
}
define_literec_command(rec_clock, rec_clock_handler, "Wall-clock time for the catalog: rec_clock [unix-seconds]");

static void rec_checkpoint_handler(int nb_params, char **params)
{
	unsigned long ms;
	if (nb_params > 0) {
		if (literec_parse_ulong(params[0], &ms) || ms < 1 || ms > 60000) {
			printf("Error: invalid interval '%s' ms: 1..60000 (modeled milliseconds)\n", params[0]);
			return;
		}
		catalog_checkpoint_ms = ms;
	}
	printf("rec_checkpoint: a running recording's catalog entry is updated every %lu ms of modeled time\n",
		(unsigned long)catalog_checkpoint_ms);
	printf("RESULT name=rec_checkpoint ms=%lu\n", (unsigned long)catalog_checkpoint_ms);
}
define_literec_command(rec_checkpoint, rec_checkpoint_handler, "Catalog checkpoint interval: rec_checkpoint [ms]");
