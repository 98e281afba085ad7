// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Record / replay commands: argument parsing and printing over the job library (record.h,
// record.c), which configures, starts and polls the recorder datapath (cores/recorder).
//
//   rec_start <lba|auto> <mib|until-stop[=<mib>]|ring=<mib>> [input=pattern|user] [policy=lossless|drop]
//             [post=<mib>] [trim-ahead=<mib>] [flush=0|1] [arm=1] [chunk=KiB] [ports=all|N] [qd=N]
//             [seed=N] [rate=MBps] [strict=0|1]
//   rec_stop, rec_abort, rec_trigger, rec_wait [timeout_ms], rec_status, rec_drops [first] [count]
//   play_start <lba> <mib> | id=<n> [output=checker|user] [bytes=N] [region=<mib>] [from=<chunk>] ...
//   rec_record <lba|auto> <mib> [...]   rec_replay <lba> <mib> | id=<n> [...]   (blocking, test streams)
//
// Every recording enters the drives' catalog (catalog.h) when they have one: catalog_job_*() in
// catalog.c; `auto` and `id=<n>` are resolved there too (catalog_job_place, catalog_job_replay).

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include <bios/command.h>
#include <libbase/console.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"
#include "record.h"
#include "catalog.h"

#if defined(CSR_RECORDER_BASE) && defined(CSR_NVME0_BASE)

#define NPORTS LITEREC_SSD_PORTS
#define WORD   RECORDER_WORD_BYTES

static const char *mode_str(struct rec_job *j)
{
	if (j->replay)
		return "replay";
	return j->mode == REC_MODE_RING ? "ring" : j->mode == REC_MODE_UNTIL_STOP ? "until-stop" : "fixed";
}

/* Argument parsing ------------------------------------------------------------------------------- */

/* Sizes in MiB: up to 1 PiB (8 drives of 32 TB are 256 TB). */
#define REC_MAX_MIB (1UL << 30)

static int parse_mib(const char *what, const char *val, uint64_t *bytes, int zero_ok)
{
	unsigned long x;
	if (literec_parse_ulong(val, &x) || (!zero_ok && x == 0) || x > REC_MAX_MIB) {
		printf("Error: invalid %s '%s' MiB: %s..%lu\n", what, val, zero_ok ? "0" : "1", REC_MAX_MIB);
		return -1;
	}
	*bytes = (uint64_t)x << 20;
	return 0;
}

/* Options shared by every command; returns 1 if the option was one of them, -1 on an error. */
static int parse_common(const char *key, int klen, const char *val, struct rec_job *j)
{
	unsigned long long v;
	unsigned long x;
#define KEY(k) (klen == (int)strlen(k) && !strncmp(key, k, klen))
	if (KEY("seed")) {
		if (literec_parse_u64(val, &v) || v > 0xffffffffULL) {
			printf("Error: invalid seed '%s': a 32-bit number\n", val);
			return -1;
		}
		j->seed = v;
	} else if (KEY("ports")) {
		if (!strcmp(val, "all"))
			j->mask = (1u << NPORTS) - 1;
		else if (literec_parse_u64(val, &v) || v >= NPORTS) {
			printf("Error: invalid ports '%s': 'all' or a port 0..%d\n", val, NPORTS - 1);
			return -1;
		} else
			j->mask = 1u << v;
	} else if (KEY("chunk")) {
		if (literec_parse_ulong(val, &x) || x < 4 || (x & (x - 1)) || x > 16384) {
			printf("Error: invalid chunk '%s' KiB: a power of two 4..16384\n", val);
			return -1;
		}
		j->chunk = x*1024;
	} else if (KEY("staging")) {
		if (!strcmp(val, "auto"))
			j->staging = REC_STAGING_AUTO;
		else if (!strcmp(val, "off"))
			j->staging = REC_STAGING_OFF;
		else {
			printf("Error: invalid staging '%s': auto (the on-chip slots) or off (the DRAM ring alone)\n", val);
			return -1;
		}
	} else if (KEY("spill")) {
		if (!strcmp(val, "auto"))
			j->spill = REC_SPILL_AUTO;
		else if (!strcmp(val, "0"))
			j->spill = REC_SPILL_OFF;
		else if (!strcmp(val, "1"))
			j->spill = REC_SPILL_ON;
		else {
			printf("Error: invalid spill '%s': auto (to DRAM slots under policy=drop), 0 or 1\n", val);
			return -1;
		}
	} else if (KEY("buffer")) {
		if (!strcmp(val, "all"))
			j->buffer_bytes = REC_BUFFER_ALL;
		else if (literec_parse_ulong(val, &x) || x == 0 || x > REC_MAX_MIB) {
			printf("Error: invalid buffer '%s' MiB: 1..%lu, or all (the whole DRAM window)\n", val, REC_MAX_MIB);
			return -1;
		} else
			j->buffer_bytes = (uint64_t)x << 20;
	} else if (KEY("qd")) {
		if (literec_parse_ulong(val, &j->qd) || j->qd == 0 || j->qd > RECORDER_SLOTS) {
			printf("Error: invalid qd '%s': chunk commands in flight, 1..%d\n", val, RECORDER_SLOTS);
			return -1;
		}
	} else
		return 0;
#undef KEY
	return 1;
}

/* Record options; returns 1 if taken, 0 if unknown, -1 on an error. */
static int parse_record_opt(const char *key, int klen, const char *val, struct rec_job *j, unsigned long mib)
{
	unsigned long x;
#define KEY(k) (klen == (int)strlen(k) && !strncmp(key, k, klen))
	if (KEY("rate")) {
		if (literec_parse_ulong(val, &j->rate_mbps)) {
			printf("Error: invalid rate '%s' MB/s: a number (0: as fast as possible)\n", val);
			return -1;
		}
	} else if (KEY("strict")) {
		if (literec_parse_ulong(val, &x) || x > 1) {
			printf("Error: invalid strict '%s': 0 (the source waits) or 1 (beats not taken are lost)\n", val);
			return -1;
		}
		j->strict = x;
	} else if (KEY("input")) {
		if (!strcmp(val, "pattern"))
			j->input = REC_INPUT_PATTERN;
		else if (!strcmp(val, "user"))
			j->input = REC_INPUT_USER;
		else {
			printf("Error: invalid input '%s': pattern (the test stream) or user (the user's stream port)\n", val);
			return -1;
		}
		if (j->input < 0) {
			printf("Error: input=%s: this build has no such input (inputs:%s%s)\n", val,
				REC_INPUT_PATTERN >= 0 ? " pattern" : "", REC_INPUT_USER >= 0 ? " user" : "");
			return -1;
		}
	} else if (KEY("policy")) {
		if (!strcmp(val, "lossless"))
			j->drop = 0;
		else if (!strcmp(val, "drop"))
			j->drop = 1;
		else {
			printf("Error: invalid policy '%s': lossless (back-pressure the input) or drop (drop and count what finds the ring full)\n", val);
			return -1;
		}
	} else if (KEY("post")) {
		if (parse_mib("post", val, &j->post_bytes, 1))
			return -1;
	} else if (KEY("trim-ahead")) {
		if (parse_mib("trim-ahead", val, &j->trim_bytes, 1))
			return -1;
	} else if (KEY("flush")) {
		if (literec_parse_ulong(val, &x) || x > 1) {
			printf("Error: invalid flush '%s': 1 (NVMe Flush after the recording) or 0\n", val);
			return -1;
		}
		j->flush_after = x;
	} else if (KEY("surplus")) {
		if (!strcmp(val, "keep"))
			j->surplus = REC_SURPLUS_KEEP;
		else if (!strcmp(val, "flush"))
			j->surplus = REC_SURPLUS_FLUSH;
		else {
			printf("Error: invalid surplus '%s': keep (input outside a recording waits) or flush (it is discarded and counted)\n", val);
			return -1;
		}
	} else if (KEY("arm")) {
		if (literec_parse_ulong(val, &x) || x > 1) {
			printf("Error: invalid arm '%s': 1 (the hardware start input starts the recording) or 0\n", val);
			return -1;
		}
		j->arm = x;
	} else if (KEY("stop") || KEY("abort")) {
		if (literec_parse_ulong(val, &x) || x == 0 || x >= mib) {
			printf("Error: invalid %.*s '%s' MiB: 1..%lu (less than the recording)\n", klen, key, val, mib - 1);
			return -1;
		}
		if (KEY("stop"))
			j->stop_bytes = (uint64_t)x << 20;
		else
			j->abort_bytes = (uint64_t)x << 20;
	} else
		return 0;
#undef KEY
	return 1;
}

static int parse_replay_opt(const char *key, int klen, const char *val, struct rec_job *j)
{
	unsigned long long v;
#define KEY(k) (klen == (int)strlen(k) && !strncmp(key, k, klen))
	if (KEY("output")) {
		if (!strcmp(val, "checker"))
			j->output = REC_OUTPUT_CHECKER;
		else if (!strcmp(val, "user"))
			j->output = REC_OUTPUT_USER;
		else {
			printf("Error: invalid output '%s': checker (the test checker) or user (the user's stream port)\n", val);
			return -1;
		}
		if (j->output < 0) {
			printf("Error: output=%s: this build has no such output (outputs:%s%s)\n", val,
				REC_OUTPUT_CHECKER >= 0 ? " checker" : "", REC_OUTPUT_USER >= 0 ? " user" : "");
			return -1;
		}
	} else if (KEY("bytes")) {
		if (literec_parse_u64(val, &v) || v == 0) {
			printf("Error: invalid bytes '%s': the exact replay length, 1 or more\n", val);
			return -1;
		}
		j->bytes = v;
	} else if (KEY("region")) {
		if (parse_mib("region", val, &j->region_bytes, 0))
			return -1;
	} else if (KEY("from")) {
		if (literec_parse_u64(val, &v)) {
			printf("Error: invalid from '%s': the first chunk of the region to replay (ring order)\n", val);
			return -1;
		}
		j->start_chunk = v;
	} else
		return 0;
#undef KEY
	return 1;
}

/* Options set with rec_set apply to every following rec_start/play_start/rec_record/rec_replay
 * (a BIOS command line holds 63 characters). */
#define REC_SET_MAX 12
static char rec_set_opts[REC_SET_MAX][32];
static int rec_set_n;

static int apply_opt(const char *opt, int replay, unsigned long mib, const char *usage, struct rec_job *j, int from_set)
{
	const char *eq = strchr(opt, '=');
	const char *val = eq ? eq + 1 : "";
	int klen = eq ? (int)(eq - opt) : (int)strlen(opt), r;
	if (!eq) {
		printf("Error: '%s': options are key=value\n%s\n", opt, usage);
		return -1;
	}
	r = parse_common(opt, klen, val, j);
	if (r == 0)
		r = replay ? parse_replay_opt(opt, klen, val, j) : parse_record_opt(opt, klen, val, j, mib);
	if (r < 0)
		return -1;
	if (r == 0) {
		if (from_set)
			return 0;      /* a rec_set option of the other direction */
		printf("Error: unknown option '%.*s'\n%s\n", klen, opt, usage);
		return -1;
	}
	return 0;
}

/* cmd <lba|auto> <size> [key=value ...]; size: MiB, or (record) until-stop[=MiB] / ring=MiB;
 * replay: cmd <lba> <size> | id=<n> [key=value ...]. */
static int parse_args(int nb_params, char **params, int replay, int extended, const char *usage, struct rec_job *j)
{
	unsigned long long v;
	unsigned long mib = 0;
	int i, first = 2, place = 0;
	const char *id = NULL;
	rec_job_init(j);
	j->replay = replay;
	if (replay && nb_params >= 1 && !strncmp(params[0], "id=", 3)) {
		id = params[0] + 3;
		first = 1;
	} else if (nb_params < 2) {
		printf("%s\n", usage);
		return -1;
	}
	if (!id && !replay && !strcmp(params[0], "auto"))
		place = 1;
	else if (!id && literec_parse_u64(params[0], &v)) {
		printf("Error: invalid LBA '%s': a number%s\n", params[0],
			replay ? "" : ", or auto (after the last recording of the catalog)");
		return -1;
	} else if (!id)
		j->lba = v;
	if (!id && extended && !replay && !strncmp(params[1], "until-stop", 10)) {
		j->mode = REC_MODE_UNTIL_STOP;
		if (params[1][10] == '=') {
			if (parse_mib("until-stop region", params[1] + 11, &j->bytes, 0))
				return -1;
		} else if (params[1][10]) {
			printf("Error: invalid size '%s': MiB, until-stop[=<MiB>] or ring=<MiB>\n", params[1]);
			return -1;
		}
		mib = ~0UL;
	} else if (!id && extended && !replay && !strncmp(params[1], "ring=", 5)) {
		j->mode = REC_MODE_RING;
		if (parse_mib("ring", params[1] + 5, &j->bytes, 0))
			return -1;
		mib = ~0UL;
	} else if (!id) {
		if (literec_parse_ulong(params[1], &mib) || mib == 0 || mib > REC_MAX_MIB) {
			printf("Error: invalid size '%s' MiB: 1..%lu%s\n", params[1], REC_MAX_MIB,
				extended && !replay ? ", until-stop[=<MiB>] or ring=<MiB>" : "");
			return -1;
		}
		j->bytes = (uint64_t)mib << 20;
	}
	for (i = 0; i < rec_set_n; i++)
		if (apply_opt(rec_set_opts[i], replay, mib, usage, j, 1))
			return -1;
	for (i = first; i < nb_params; i++) {
		if (!extended && (!strncmp(params[i], "input=", 6) || !strncmp(params[i], "policy=", 7) ||
			!strncmp(params[i], "output=", 7))) {
			printf("Error: unknown option '%.*s'\n%s\n", (int)(strchr(params[i], '=') - params[i]), params[i], usage);
			return -1;
		}
		if (apply_opt(params[i], replay, mib, usage, j, 0))
			return -1;
	}
	if (j->stop_bytes && j->abort_bytes) {
		printf("Error: stop= and abort= exclude each other\n");
		return -1;
	}
	if (j->post_bytes && j->mode != REC_MODE_RING) {
		printf("Error: post= is for ring recordings (ring=<MiB>)\n");
		return -1;
	}
	if (j->mode == REC_MODE_RING && j->post_bytes > j->bytes) {
		printf("Error: post=%llu MiB exceeds the ring of %llu MiB\n", (unsigned long long)(j->post_bytes >> 20),
			(unsigned long long)(j->bytes >> 20));
		return -1;
	}
	if (id && catalog_job_replay(id, nb_params, params, j))
		return -1;
	if (place && catalog_job_place(j))
		return -1;
	if (!place && !id && !replay && j->mode == REC_MODE_UNTIL_STOP && !j->bytes) {
		rec_catalog_settle();
		if (catalog_until_stop_region(j->mask, j->chunk, 0, &j->lba, &j->bytes) < 0)
			return -1;
	}
	return rec_job_check(j);
}

/* Printing -------------------------------------------------------------------------------------- */

static void print_fixed3(uint64_t v) { literec_print_fixed(v, 3); }

/* The ring's tiers, appended to a RESULT line: on-chip slots per port and DRAM slots, their peaks,
 * the bytes that went through DRAM. */
static void rec_print_tiers(struct rec_job *j, struct rec_result *r)
{
	printf(" onchip_slots=%lu dram_slots=%lu peak_onchip=%llu peak_dram=%llu bytes_spilled=%llu",
		r->onchip_slots*j->nports, j->replay && r->onchip_slots ? 0UL : j->ring_slots,
		(unsigned long long)r->peak_onchip, (unsigned long long)r->peak_dram, (unsigned long long)r->bytes_spilled);
}

static void print_record(struct rec_job *j, struct rec_result *r)
{
	printf("rec_record: %llu bytes (%llu chunks of %lu KiB) to ", (unsigned long long)r->bytes,
		(unsigned long long)r->chunks, j->chunk >> 10);
	rec_print_ports(j->mask);
	printf(" from LBA %llu in %llu us: ", (unsigned long long)j->lba,
		(unsigned long long)(literec_cycles_to_us(r->cycles)));
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	printf(" MB/s; input %llu bytes, %llu beats lost, %llu stall cycles, ring peak %u chunks, %s\n",
		(unsigned long long)r->bytes_in, (unsigned long long)r->lost_beats, (unsigned long long)r->stalls,
		r->ring_peak, rec_status_str(r->status));
	if (r->dropped)
		printf("rec_record: abort dropped the last %llu bytes (a partly filled chunk)\n", (unsigned long long)r->dropped);
	printf("RESULT name=rec_record ok=1 lba=%llu bytes=%llu chunks=%llu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)j->lba, (unsigned long long)r->bytes, (unsigned long long)r->chunks, j->chunk,
		j->nports, (unsigned long long)r->cycles);
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	printf(" bytes_in=%llu lost_beats=%llu stalls=%llu ring_peak=%u aborted=%d dropped=%llu early_last=%llu"
		" status=%d bytes_kept=%llu bytes_dropped=%llu",
		(unsigned long long)r->bytes_in, (unsigned long long)r->lost_beats, (unsigned long long)r->stalls, r->ring_peak,
		r->aborted, (unsigned long long)r->dropped, (unsigned long long)r->early_last, r->status,
		(unsigned long long)r->bytes_kept, (unsigned long long)r->bytes_dropped);
	rec_print_tiers(j, r);
	printf("\n");
}

/* Commands -------------------------------------------------------------------------------------- */

static const char *rec_usage_record =
	"rec_record <lba|auto> <mib> [seed=N] [rate=MBps] [strict=0|1] [ports=all|N] [chunk=KiB] [qd=N] [stop=MiB] [abort=MiB] [flush=0|1] [staging=auto|off] [spill=auto|0|1]";
static const char *rec_usage_replay =
	"rec_replay <lba> <mib> | id=<n> [seed=N] [ports=all|N] [chunk=KiB] [qd=N] [bytes=N] [region=MiB] [from=chunk] [staging=auto|off]";
static const char *rec_usage_start =
	"rec_start <lba|auto> <mib|until-stop[=<mib>]|ring=<mib>> [input=pattern|user] [policy=lossless|drop] [post=<mib>] "
	"[trim-ahead=<mib>] [flush=0|1] [surplus=keep|flush] [arm=1] [buffer=<mib>|all] [staging=auto|off] [spill=auto|0|1] [chunk=KiB] [ports=all|N] [qd=N] [seed=N] [rate=MBps] [strict=0|1]";
static const char *rec_usage_play =
	"play_start <lba> <mib> | id=<n> [output=checker|user] [bytes=N] [region=<mib>] [from=<chunk>] [chunk=KiB] [ports=all|N] [qd=N] [seed=N]";

static void rec_record_handler(int nb_params, char **params)
{
	struct rec_job j;
	struct rec_result r;
	if (parse_args(nb_params, params, 0, 0, rec_usage_record, &j))
		return;
	if (REC_INPUT_PATTERN < 0) {
		printf("Error: rec_record records the test pattern: this build has none (use rec_start input=user)\n");
		return;
	}
	if (rec_record_run(&j, &r)) {
		printf("RESULT name=rec_record ok=0 chunks=%llu bytes_in=%llu lost_beats=%llu status=%d\n",
			(unsigned long long)r.chunks, (unsigned long long)r.bytes_in, (unsigned long long)r.lost_beats, r.status);
		return;
	}
	print_record(&j, &r);
}
define_literec_command(rec_record, rec_record_handler,
	"Record the test stream to the SSDs: rec_record <lba|auto> <mib> [seed=] [rate=MBps] [strict=] [ports=] [chunk=KiB] [qd=] [stop=MiB] [abort=MiB]");

static void print_replay(struct rec_job *j, struct rec_result *r)
{
	uint64_t expect = ((j->check_bytes ? j->check_bytes : j->bytes) + WORD - 1)/WORD;
	printf("rec_replay: %llu bytes (%llu chunks of %lu KiB) from ", (unsigned long long)r->bytes,
		(unsigned long long)r->chunks, j->chunk >> 10);
	rec_print_ports(j->mask);
	printf(" at LBA %llu in %llu us: ", (unsigned long long)j->lba,
		(unsigned long long)(literec_cycles_to_us(r->cycles)));
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	if (j->output == REC_OUTPUT_CHECKER) {
		printf(" MB/s; pattern check (seed %lu): %llu word errors", (unsigned long)j->seed, (unsigned long long)r->errors);
		if (r->errors)
			printf(", first at byte %llu", (unsigned long long)r->first_error);
		if (r->checked_beats != expect)
			printf(", length error: %llu of %llu words", (unsigned long long)r->checked_beats, (unsigned long long)expect);
	} else
		printf(" MB/s to the user's output");
	printf("\n");
	printf("RESULT name=rec_replay ok=1 lba=%llu bytes=%llu chunks=%llu chunk_bytes=%lu ports=%d cycles=%llu mbps=",
		(unsigned long long)j->lba, (unsigned long long)r->bytes, (unsigned long long)r->chunks, j->chunk,
		j->nports, (unsigned long long)r->cycles);
	print_fixed3(rec_kbps(r->bytes, r->cycles));
	printf(" errors=%llu first_error=%llu checked_beats=%llu extra_beats=%llu last_at=%llu", (unsigned long long)r->errors,
		(unsigned long long)(r->errors ? r->first_error : 0),
		(unsigned long long)r->checked_beats, (unsigned long long)r->extra_beats, (unsigned long long)r->last_at);
	rec_print_tiers(j, r);
	printf("\n");
}

static void rec_replay_handler(int nb_params, char **params)
{
	struct rec_job j;
	struct rec_result r;
	if (parse_args(nb_params, params, 1, 0, rec_usage_replay, &j))
		return;
	if (REC_OUTPUT_CHECKER < 0) {
		printf("Error: rec_replay checks the test pattern: this build has no checker (use play_start output=user)\n");
		return;
	}
	if (rec_replay_run(&j, &r)) {
		printf("RESULT name=rec_replay ok=0 chunks=%llu bytes=%llu errors=%llu status=%d\n",
			(unsigned long long)r.chunks, (unsigned long long)r.bytes, (unsigned long long)r.errors, r.status);
		return;
	}
	print_replay(&j, &r);
}
define_literec_command(rec_replay, rec_replay_handler,
	"Replay from the SSDs into the pattern checker: rec_replay <lba> <mib>|id=<n> [seed=] [ports=] [chunk=KiB] [qd=] [bytes=] [region=] [from=]");

/* The configuration as the recorder holds it (read back: nothing truncated on the way). */
static void print_config(const char *name)
{
	printf("RESULT name=%s first_lba=%llu last_lba=%llu chunk_bytes=%lu chunks=%llu bytes=%llu capacity=%llu rows=%llu "
		"ring_slots=%lu post_bytes=%llu trim_rows=%lu port_mask=0x%lx\n", name,
		(unsigned long long)recorder_first_lba_read(), (unsigned long long)recorder_last_lba_read(),
		(unsigned long)(1ul << recorder_chunk_log2_read()), (unsigned long long)recorder_chunks_read(),
		(unsigned long long)(recorder_chunks_read()*(1ul << recorder_chunk_log2_read())),
		(unsigned long long)recorder_capacity_read(), (unsigned long long)recorder_rows_read(),
		(unsigned long)recorder_ring_slots_read(), (unsigned long long)recorder_post_bytes_read(),
		(unsigned long)recorder_trim_rows_read(), (unsigned long)recorder_port_mask_read());
}

static void rec_start_handler(int nb_params, char **params)
{
	struct rec_job j;
	if (parse_args(nb_params, params, 0, 1, rec_usage_start, &j))
		return;
	if (rec_job_start(&j))
		return;
	print_config("rec_start");
	printf("rec_start: %s recording from %s input, %s, to ", mode_str(&j),
		j.input == REC_INPUT_USER ? "the user's" : "the pattern", j.drop ? "drop policy" : "lossless");
	rec_print_ports(j.mask);
	printf(" LBA %llu..%llu (%llu rows of %lu KiB, %llu MiB)%s\n", (unsigned long long)j.lba,
		(unsigned long long)(j.last_lba + j.chunk_blocks - 1), (unsigned long long)j.rows, j.chunk >> 10,
		(unsigned long long)(j.capacity*j.chunk >> 20), j.arm ? ", armed" : "");
}
define_literec_command(rec_start, rec_start_handler,
	"Start a recording: rec_start <lba|auto> <mib|until-stop[=mib]|ring=mib> [input=] [policy=] [post=] [trim-ahead=] [flush=] [arm=] ...");

static void play_start_handler(int nb_params, char **params)
{
	struct rec_job j;
	if (parse_args(nb_params, params, 1, 1, rec_usage_play, &j))
		return;
	if (rec_job_start(&j))
		return;
	print_config("play_start");
	printf("play_start: %llu bytes from ", (unsigned long long)j.bytes);
	rec_print_ports(j.mask);
	printf(" LBA %llu to the %s\n", (unsigned long long)j.lba, j.output == REC_OUTPUT_USER ? "user's output" : "checker");
}
define_literec_command(play_start, play_start_handler,
	"Start a replay: play_start <lba> <mib>|id=<n> [output=checker|user] [bytes=N] [region=mib] [from=chunk] ...");

static int need_job(void)
{
	if (!rec_current_job()) {
		printf("Error: no recording or replay was started (rec_start / play_start)\n");
		return -1;
	}
	return 0;
}

static void pulse(int offset, const char *what)
{
	uint32_t st = recorder_status_read();
	if (need_job())
		return;
	if (!STATUS_BIT(st, BUSY)) {
		if (offset == CSR_RECORDER_CONTROL_ABORT_OFFSET && STATUS_BIT(st, ARMED)) {
			rec_job_pulse(CSR_RECORDER_CONTROL_DISARM_OFFSET);
			printf("%s: disarmed (the hardware start input no longer starts a run)\n", what);
			return;
		}
		printf("%s: the recorder is not running (nothing to do)\n", what);
		return;
	}
	rec_job_pulse(offset);
	printf("%s: sent\n", what);
}

static void rec_stop_handler(int nb_params, char **params) { pulse(CSR_RECORDER_CONTROL_STOP_OFFSET, "rec_stop"); }
define_literec_command(rec_stop, rec_stop_handler, "Stop the recording (the partly filled chunk is padded with zeros)");

static void rec_abort_handler(int nb_params, char **params) { pulse(CSR_RECORDER_CONTROL_ABORT_OFFSET, "rec_abort"); }
define_literec_command(rec_abort, rec_abort_handler, "Abort the recording (the partly filled chunk is dropped)");

static void rec_trigger_handler(int nb_params, char **params)
{
	if (need_job())
		return;
	if (rec_current_job()->replay || rec_current_job()->mode != REC_MODE_RING) {
		printf("Error: rec_trigger is for ring recordings (rec_start ... ring=<mib> post=<mib>)\n");
		return;
	}
	pulse(CSR_RECORDER_CONTROL_TRIGGER_OFFSET, "rec_trigger");
}
define_literec_command(rec_trigger, rec_trigger_handler, "Ring recording: the event (the recording ends post= MiB later)");

static void print_status(struct rec_job *j, struct rec_result *r)
{
	const char *state = r->busy ? "running" : STATUS_BIT(recorder_status_read(), ARMED) ? "armed" :
		r->done ? "done" : "idle";
	uint64_t bytes = j->replay ? r->bytes : r->bytes_committed;
	int temp = rec_temperature(j->mask);
	printf("recorder: %s %s, %s", mode_str(j), state, r->busy ? "in progress" : rec_status_str(r->status));
	if (r->status == REC_STATUS_ERR_DEVICE || r->status == REC_STATUS_ERR_TIMEOUT)
		printf(" (nvme%d, LBA %llu: %s)", r->err_port, (unsigned long long)r->err_lba, nvme_status_str(r->err_status));
	printf("\n  ");
	if (!j->replay) {
		printf("in %llu B = kept %llu B + dropped %llu B (%llu drop events); kept = written %llu B + buffered %llu B\n  ",
			(unsigned long long)r->bytes_in, (unsigned long long)r->bytes_kept, (unsigned long long)r->bytes_dropped,
			(unsigned long long)r->drops, (unsigned long long)r->bytes_committed, (unsigned long long)r->bytes_buffered);
	} else
		printf("out %llu B, ", (unsigned long long)r->bytes);
	print_fixed3(rec_kbps(bytes, r->cycles));
	printf(" MB/s over %llu us, ring %llu of %lu chunks (peak %llu), %llu stall cycles, drive %d C\n",
		(unsigned long long)(literec_cycles_to_us(r->cycles)), (unsigned long long)r->level, j->ring_slots,
		(unsigned long long)r->peak, (unsigned long long)r->stalls, temp);
	if (!j->replay && j->mode == REC_MODE_RING)
		printf("  ring: %llu wraps, trigger %s at byte %llu, oldest byte %llu, last chunk at byte %llu of nvme%d\n",
			(unsigned long long)r->wraps, r->triggered ? "came" : "not yet", (unsigned long long)r->trigger_pos,
			(unsigned long long)r->oldest, (unsigned long long)r->addr_last, (int)recorder_addr_last_port_read());
	printf("RESULT name=rec_status state=%s status=%d mode=%s bytes_in=%llu bytes_committed=%llu bytes_dropped=%llu "
		"bytes_buffered=%llu bytes_kept=%llu drops=%llu overflow=%d level=%llu peak=%llu ring_slots=%lu cycles=%llu mbps=",
		state, r->status, mode_str(j), (unsigned long long)r->bytes_in, (unsigned long long)r->bytes_committed,
		(unsigned long long)r->bytes_dropped, (unsigned long long)r->bytes_buffered, (unsigned long long)r->bytes_kept,
		(unsigned long long)r->drops, r->overflow, (unsigned long long)r->level, (unsigned long long)r->peak,
		j->ring_slots, (unsigned long long)r->cycles);
	print_fixed3(rec_kbps(bytes, r->cycles));
	printf(" chunks=%llu bytes_out=%llu stalls=%llu surplus=%llu keep_errors=%llu wraps=%llu trigger=%llu oldest=%llu "
		"addr_last=%llu addr_last_port=%d temperature_c=%d error=%d err_status=0x%04lx trims=%llu trimmed_rows=%llu requested=%llu",
		(unsigned long long)r->chunks, (unsigned long long)(j->replay ? r->bytes : 0), (unsigned long long)r->stalls,
		(unsigned long long)r->surplus, (unsigned long long)r->keep_errors, (unsigned long long)r->wraps,
		(unsigned long long)r->trigger_pos, (unsigned long long)r->oldest, (unsigned long long)r->addr_last,
		(int)recorder_addr_last_port_read(), temp, r->status >= REC_STATUS_ERR_DEVICE,
		(unsigned long)r->err_status, (unsigned long long)LIVE64(RECORDER, TRIMS),
		(unsigned long long)LIVE64(RECORDER, TRIMMED_ROWS), (unsigned long long)LIVE64(RECORDER, REQUESTED));
	rec_print_tiers(j, r);
	printf("\n");
}

static void rec_status_handler(int nb_params, char **params)
{
	struct rec_result r;
	if (need_job())
		return;
	rec_job_poll(rec_current_job(), &r);
	if (r.done && !r.busy)
		rec_job_release(rec_current_job());
	print_status(rec_current_job(), &r);
}
define_literec_command(rec_status, rec_status_handler, "Recorder status, live or at the end (accounting, ring, drive)");

static void rec_wait_handler(int nb_params, char **params)
{
	struct rec_result r;
	unsigned long ms = 0;
	if (nb_params > 0 && (literec_parse_ulong(params[0], &ms) || ms == 0)) {
		printf("Error: invalid timeout '%s' ms: modeled milliseconds, 1 or more (none: until the end)\n", params[0]);
		return;
	}
	if (need_job())
		return;
	if (rec_job_wait(rec_current_job(), &r, (uint64_t)ms*1000, 50000))
		printf("rec_wait: %s %s\n", mode_str(rec_current_job()), rec_status_str(r.status));
	else if (ms)
		printf("rec_wait: still running after %lu ms\n", ms);
	printf("RESULT name=rec_wait done=%d status=%d cycles=%llu\n", r.done && !r.busy, r.status,
		(unsigned long long)r.cycles);
}
define_literec_command(rec_wait, rec_wait_handler, "Wait for the recording/replay to end: rec_wait [timeout_ms] (a key stops waiting)");

static void rec_drops_handler(int nb_params, char **params)
{
	unsigned long first = 0, count = 16, i;
	uint64_t drops;
	if (need_job())
		return;
	if ((nb_params > 0 && literec_parse_ulong(params[0], &first)) ||
		(nb_params > 1 && (literec_parse_ulong(params[1], &count) || count == 0))) {
		printf("rec_drops [first] [count]   (the drop log: position and length of each drop event)\n");
		return;
	}
	drops = LIVE64(RECORDER, DROPS);
	printf("rec_drops: %llu drop event(s), the log holds the first %d\n", (unsigned long long)drops, RECORDER_LOG_DEPTH);
	for (i = first; i < first + count && i < drops && i < RECORDER_LOG_DEPTH; i++) {
		recorder_log_index_write(i);
		recorder_log_index_read();     /* one CSR access: the log memory's read has settled */
		printf("RESULT name=rec_drop index=%lu pos=%llu len=%llu abort=%d\n", i,
			(unsigned long long)recorder_log_pos_read(), (unsigned long long)recorder_log_len_read(),
			(int)recorder_log_abort_read());
	}
	{
		uint64_t logged = drops < RECORDER_LOG_DEPTH ? drops : RECORDER_LOG_DEPTH;
		if (i < logged)
			printf("rec_drops: entries %lu-%lu shown, %llu more in the log: rec_drops %lu %llu shows them\n",
				first, i ? i - 1 : 0, (unsigned long long)(logged - i), i, (unsigned long long)(logged - i));
	}
}
define_literec_command(rec_drops, rec_drops_handler, "Drop log: rec_drops [first] [count]");

static void rec_set_handler(int nb_params, char **params)
{
	struct rec_job j;
	int i, r;
	if (nb_params == 1 && !strcmp(params[0], "clear")) {
		rec_set_n = 0;
		printf("rec_set: cleared\n");
		return;
	}
	for (i = 0; i < nb_params; i++) {
		const char *eq = strchr(params[i], '=');
		int k, klen = eq ? (int)(eq - params[i]) : 0;
		if (!eq || strlen(params[i]) >= sizeof(rec_set_opts[0])) {
			printf("Error: '%s': rec_set takes key=value options (under %d characters), or clear\n", params[i],
				(int)sizeof(rec_set_opts[0]));
			return;
		}
		/* Check it as an option of either direction (an invalid value is refused here). */
		rec_job_init(&j);
		r = parse_common(params[i], klen, eq + 1, &j);
		if (r == 0)
			r = parse_record_opt(params[i], klen, eq + 1, &j, ~0UL);
		if (r == 0)
			r = parse_replay_opt(params[i], klen, eq + 1, &j);
		if (r < 0)
			return;
		if (r == 0) {
			printf("Error: unknown option '%.*s'\n", klen, params[i]);
			return;
		}
		for (k = 0; k < rec_set_n; k++)
			if (!strncmp(rec_set_opts[k], params[i], klen + 1))
				break;
		if (k == rec_set_n) {
			if (rec_set_n == REC_SET_MAX) {
				printf("Error: %d options at most (rec_set clear)\n", REC_SET_MAX);
				return;
			}
			rec_set_n++;
		}
		strcpy(rec_set_opts[k], params[i]);
	}
	printf("rec_set:");
	for (i = 0; i < rec_set_n; i++)
		printf(" %s", rec_set_opts[i]);
	printf("%s\n", rec_set_n ? "" : " (none)");
}
define_literec_command(rec_set, rec_set_handler, "Options for the following rec_start/play_start/rec_record/rec_replay: rec_set key=value ... | clear");

/* rec_raw: the recorder's own configuration checks, with the registers exactly as given. */
static void rec_raw_handler(int nb_params, char **params)
{
	unsigned long long first, last, v;
	uint64_t start, chunks = 1, nsze;
	unsigned long chunk = LITEREC_CHUNK_SIZE;
	uint32_t mask = 1;
	int i, replay, code, force = catalog_force_arg(&nb_params, params);
	if (nb_params < 3 || (strcmp(params[0], "record") && strcmp(params[0], "replay")) ||
		literec_parse_u64(params[1], &first) || literec_parse_u64(params[2], &last)) {
		printf("rec_raw <record|replay> <first_lba> <last_lba> [start=lba] [chunks=N] [nsze=N] [chunk=KiB] [mask=N] [force=1]\n"
			"  (writes the registers as given, no check by the BIOS: shows the recorder's own status code)\n");
		return;
	}
	if (!nvme_ctrls[0].initialized) {
		printf("Error: nvme0: %s\n", nvme_strerror(NVME_ERR_NO_INIT));
		return;
	}
	replay = !strcmp(params[0], "replay");
	start = first;
	nsze = nvme_ctrls[0].nsze;
	for (i = 3; i < nb_params; i++) {
		char *eq = strchr(params[i], '=');
		if (!eq || literec_parse_u64(eq + 1, &v)) {
			printf("Error: '%s': options are key=number\n", params[i]);
			return;
		}
		if (!strncmp(params[i], "start=", 6)) start = v;
		else if (!strncmp(params[i], "chunks=", 7)) chunks = v;
		else if (!strncmp(params[i], "nsze=", 5)) nsze = v;
		else if (!strncmp(params[i], "chunk=", 6)) chunk = v*1024;
		else if (!strncmp(params[i], "mask=", 5)) mask = v;
		else {
			printf("Error: unknown option '%s'\n", params[i]);
			return;
		}
	}
	/* A record the recorder accepts may write a chunk before it is ended: not into the catalog. */
	if (!replay && catalog_guard("rec_raw", mask, first, last >= first ? last - first + chunk/nvme_ctrls[0].lba_size : 0,
	    force))
		return;
	code = rec_raw_start(replay, first, last, start, chunks, nsze, mask, chunk, nvme_ctrls[0].lba_size);
	if (code < 0)
		return;
	printf("rec_raw: %s\n", code == REC_STATUS_NONE ? "accepted (ended at once)" : rec_status_str(code));
	printf("RESULT name=rec_raw status=%d\n", code);
}
define_literec_command(rec_raw, rec_raw_handler, "The recorder's own checks: rec_raw <record|replay> <first_lba> <last_lba> [...] [force=1]");

#endif
