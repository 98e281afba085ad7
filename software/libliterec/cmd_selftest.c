// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// rec_selftest: the twelve self-tests of MLE's NVMe Streamer (seed 000), adapted to LiteRecorder's
// recorder datapath. They overwrite the selected drives' data from LBA 0.
//
//   #00 link status            #01 flush of surplus beats      #02 pattern checker (seed, length)
//   #03 flush after write      #04 early end of input packets  #05 abort
//   #06 stop                   #07 adjacent sessions, out of order
//   #08 performance vs chunk count                              #09 status of invalid requests
//   #10 write/read the whole region                             #11 link status

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include <bios/command.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"
#include "record.h"
#include "catalog.h"

#if defined(CSR_RECORDER_BASE) && defined(CSR_NVME0_BASE) && defined(CSR_RECSTREAM_BASE)

#define NPORTS LITEREC_SSD_PORTS
#define CHUNK  LITEREC_CHUNK_SIZE

struct st_ctx {
	uint32_t mask;
	uint64_t region_chunks;      /* chunks of the test region (all selected drives) */
	unsigned long max_sweep;     /* largest chunk count of #08 */
	int      verbose;
	int      sabotage;           /* break=1: break the condition of #01, #03, #09 (they must fail) */
};

static int st_fail(const char *what)
{
	printf("  FAIL: %s\n", what);
	return -1;
}

/* Drives the chunks are striped over. */
static int st_width(struct st_ctx *x)
{
	int n = 0, p;
	for (p = 0; p < NPORTS; p++)
		n += (x->mask >> p) & 1;
	return n;
}

/* A session of `chunks` from chunk `first_chunk` of the region: first_chunk is a multiple of the
 * drive count (a session starts a stripe row). */
static void st_job(struct st_ctx *x, struct rec_job *j, uint64_t first_chunk, uint64_t chunks, uint32_t seed)
{
	int n = st_width(x);
	rec_job_init(j);
	j->no_catalog = 1;       /* the drives' test, not a recording: rec_selftest checked the catalog */
	j->mask  = x->mask;
	j->seed  = seed;
	j->bytes = chunks*CHUNK;
	/* Sessions start on a stripe boundary: chunk c of the region is chunk c/n of each drive. */
	j->lba   = (first_chunk/n)*(CHUNK/nvme_ctrls[__builtin_ctz(x->mask)].lba_size);
}

static int st_record(struct st_ctx *x, uint64_t first, uint64_t chunks, uint32_t seed, struct rec_result *r)
{
	struct rec_job j;
	st_job(x, &j, first, chunks, seed);
	if (rec_job_check(&j) || rec_record_run(&j, r))
		return st_fail("recording failed");
	return 0;
}

static int st_replay(struct st_ctx *x, uint64_t first, uint64_t chunks, uint32_t seed, uint64_t check_bytes,
	struct rec_result *r)
{
	struct rec_job j;
	st_job(x, &j, first, chunks, seed);
	j.check_bytes = check_bytes;
	if (rec_job_check(&j) || rec_replay_run(&j, r))
		return st_fail("replay failed");
	return 0;
}

/* Replays and expects the pattern of `seed` (continuing from `first_word`) without errors. */
static int st_verify(struct st_ctx *x, uint64_t first, uint64_t chunks, uint32_t seed)
{
	struct rec_result r;
	if (st_replay(x, first, chunks, seed, 0, &r))
		return -1;
	if (r.errors || r.extra_beats || r.checked_beats*RECORDER_WORD_BYTES != chunks*CHUNK) {
		printf("  chunks %llu..%llu (seed %lu): %llu word errors (first at byte %llu), %llu words checked\n",
			(unsigned long long)first, (unsigned long long)(first + chunks - 1), (unsigned long)seed,
			(unsigned long long)r.errors, (unsigned long long)r.first_error, (unsigned long long)r.checked_beats);
		return st_fail("data differs from what was recorded");
	}
	return 0;
}

static void print_mibps(uint64_t bytes, uint64_t cycles)
{
	/* MiB/s as the seed prints it (rec_kbps: MB/s x 1000 without 64-bit overflow). */
	printf("%llu MiB/s", (unsigned long long)(rec_kbps(bytes, cycles)*1000/1048576));
}

/* Tests ------------------------------------------------------------------------------------------ */

static int t_link(struct st_ctx *x)
{
	int p, up, gen, width, ltssm, bad = 0;
	for (p = 0; p < NPORTS; p++) {
		struct pcie_dev *d = &pcie_devs[p];
		/* The link trains to the lower of the two ends' capabilities. */
		int cap_gen   = d->max_link_gen < PCIE_ROOT_LINK_GEN ? d->max_link_gen : PCIE_ROOT_LINK_GEN;
		int cap_width = d->max_link_width < PCIE_ROOT_LINK_WIDTH ? d->max_link_width : PCIE_ROOT_LINK_WIDTH;
		if (!(x->mask & (1u << p)))
			continue;
		pcie_link_status(p, &up, &gen, &width, &ltssm);
		printf("  pcie%d: root port link %s Gen%d x%d, SSD %s, trained Gen%d x%d of Gen%d x%d (root port Gen%d x%d, "
			"SSD Gen%d x%d), %s\n", p, up ? "up" : "down", gen, width, d->present ? "found" : "missing",
			d->link_gen, d->link_width, cap_gen, cap_width, PCIE_ROOT_LINK_GEN, PCIE_ROOT_LINK_WIDTH,
			d->max_link_gen, d->max_link_width, nvme_ctrls[p].initialized ? "initialized" : "not initialized");
		if (!up || !d->present || !nvme_ctrls[p].initialized)
			bad = 1;
		else if (gen != cap_gen || width != cap_width)
			bad = 1;
	}
	return bad ? st_fail("a link is down or below what both ends can train, or a drive is not initialized") : 0;
}

/* Waits until the pattern source has produced all its beats by itself (DONE), 1 s of modeled time. */
/* The source's surplus is at most a few chunks: at the source's full rate (one ring word per cycle)
 * it is gone in microseconds, so 2 ms of modeled time is ample (and a failing test ends quickly). */
static int gen_done(void)
{
	uint64_t t0 = literec_cycles();
	while (recstream_gen_busy_read())
		if (literec_cycles() - t0 > literec_us_to_cycles(2000))
			return 0;
	return 1;
}

/* #01: the source offers two chunks, the recording takes one. The surplus waits at the port (the
 * source is not DONE) until the flush starts: then it is discarded and counted, the source finishes,
 * and nothing after the first chunk reaches the drive. */
static int t_surplus(struct st_ctx *x)
{
	struct rec_job j;
	struct rec_result r;
	uint64_t produced;
	if (st_record(x, 0, 2, 0x0100, &r))
		return -1;
	st_job(x, &j, 0, 1, 0x0102);
	j.source_bytes = 2*CHUNK;
	j.surplus = REC_SURPLUS_KEEP;
	if (rec_job_check(&j) || rec_record_run(&j, &r))
		return st_fail("recording failed");
	if (r.chunks != 1)
		return st_fail("the recorder wrote more than the requested chunk");
	if (!recstream_gen_busy_read())
		return st_fail("the pattern generator is DONE before the flush: the surplus was not held");
	printf("  AXI4-Stream pattern generator not DONE (%llu of %llu bytes produced: the surplus waits)\n",
		(unsigned long long)(recstream_gen_produced_read()*RECORDER_WORD_BYTES), (unsigned long long)(2*CHUNK));
	printf("  start flush\n");
	if (!x->sabotage)
		rec_flush_surplus(1);
	if (!gen_done())
		return st_fail("pattern generator not DONE after the flush started");
	produced = recstream_gen_produced_read()*RECORDER_WORD_BYTES;
	printf("  AXI4-Stream pattern generator DONE (%llu bytes produced)\n", (unsigned long long)produced);
	rec_flush_surplus(0);
	printf("  stop flush: flush finished, %llu surplus bytes discarded\n", (unsigned long long)recorder_surplus_read());
	if (produced != 2*CHUNK || recorder_surplus_read() != CHUNK)
		return st_fail("the surplus flushed is not the second chunk");
	if (st_verify(x, 0, 1, 0x0102))
		return -1;
	/* Against the previous recording's pattern, exactly chunk 0 differs: chunk 1 is untouched. */
	{
		struct rec_result v;
		if (st_replay(x, 0, 2, 0x0100, 0, &v))
			return -1;
		if (v.first_error != 0 || v.errors != CHUNK/4)
			return st_fail("the surplus beats reached the drive");
	}
	return 0;
}

static int t_checker(struct st_ctx *x)
{
	struct rec_result r;
	printf("  writing 10 chunks\n");
	if (st_record(x, 0, 10, 0x0200, &r))
		return -1;
	printf("  reading 10 chunks, checker expecting 9: length error expected\n");
	if (st_replay(x, 0, 10, 0x0200, 9*CHUNK, &r))
		return -1;
	if (r.extra_beats != CHUNK/RECORDER_WORD_BYTES || r.errors)
		return st_fail("no length error, or data errors");
	printf("  reading 10 chunks with another seed: pattern error expected at beat 0\n");
	if (st_replay(x, 0, 10, 0x0201, 0, &r))
		return -1;
	if (r.errors != 10*CHUNK/4 || r.first_error != 0)
		return st_fail("the pattern error was not flagged at the first beat");
	printf("  reading 10 chunks: no error expected\n");
	return st_verify(x, 0, 10, 0x0200);
}

/* #03: flush after write: set before the recording, the surplus beats that arrive after it are
 * flushed without the CPU (the source finishes by itself), and the drives are flushed (NVMe Flush
 * issued by the recorder on every port). */
static int t_flush_after_write(struct st_ctx *x)
{
	struct rec_job j;
	struct rec_result r;
	uint64_t n = 100 < x->region_chunks ? 100 : x->region_chunks - 2;
	printf("  setting flush after write, writing %llu chunks (the source offers 2 more)\n", (unsigned long long)n);
	st_job(x, &j, 0, n, 0x0300);
	j.source_bytes = (n + 2)*CHUNK;
	j.surplus = x->sabotage ? REC_SURPLUS_KEEP : REC_SURPLUS_FLUSH;
	j.flush_after = 1;
	if (rec_job_check(&j) || rec_record_run(&j, &r))
		return st_fail("recording failed");
	if (!gen_done())
		return st_fail("pattern generator not DONE: the surplus was not flushed after the write");
	printf("  flush in progress after the write: %llu surplus bytes flushed, drives flushed; pattern generator DONE\n",
		(unsigned long long)r.surplus);
	if (recorder_surplus_read() != 2*CHUNK || r.chunks != n)
		return st_fail("the flush after write did not take exactly the surplus");
	return st_verify(x, 0, n, 0x0300);
}

static int t_early_last(struct st_ctx *x)
{
	struct rec_job j;
	struct rec_result r;
	/* Input packets of half a chunk: each chunk sees a packet end in its middle. */
	st_job(x, &j, 0, 4, 0x0400);
	j.packet_bytes = CHUNK/2;
	if (rec_job_check(&j) || rec_record_run(&j, &r))
		return st_fail("recording failed");
	printf("  %llu chunks written, %llu packets ended before their chunk\n", (unsigned long long)r.chunks,
		(unsigned long long)r.early_last);
	if (r.early_last != 4)
		return st_fail("early packet ends were not flagged (4 expected)");
	/* Packets of one chunk: no flag. */
	st_job(x, &j, 0, 4, 0x0401);
	j.packet_bytes = CHUNK;
	if (rec_job_check(&j) || rec_record_run(&j, &r))
		return st_fail("recording failed");
	if (r.early_last)
		return st_fail("packets aligned on the chunks were flagged");
	return 0;
}

/* #05 abort / #06 stop: a second recording ends early; the first one's data must remain after it. */
static int t_end_early(struct st_ctx *x, int abort)
{
	struct rec_job j;
	struct rec_result r, v;
	uint64_t n = x->region_chunks < 32 ? x->region_chunks : 32, keep;
	uint32_t s1 = abort ? 0x0500 : 0x0600, s2 = s1 + 1;
	printf("  writing %llu chunks\n", (unsigned long long)n);
	if (st_record(x, 0, n, s1, &r))
		return -1;
	st_job(x, &j, 0, n, s2);
	/* The source ends after 10.5 chunks. */
	if (abort)
		j.abort_bytes = 10*CHUNK + CHUNK/2;
	else
		j.stop_bytes = 10*CHUNK + CHUNK/2;
	if (rec_job_check(&j) || rec_record_run(&j, &r))
		return st_fail("recording failed");
	keep = abort ? 10 : 11;
	printf("  %s after 10.5 chunks: %llu chunks written (last address 0x%llx), %llu bytes dropped\n",
		abort ? "aborted" : "stopped", (unsigned long long)r.chunks,
		(unsigned long long)((r.chunks - 1)*CHUNK), (unsigned long long)r.dropped);
	if (r.chunks != keep || (abort && r.dropped != CHUNK/2) || (!abort && r.dropped))
		return st_fail(abort ? "abort must drop the partial chunk" : "stop must complete the partial chunk");
	if (st_replay(x, 0, n, s2, 0, &v))
		return -1;
	/* Abort: the error starts at the first chunk not written. Stop: at the padding. */
	{
		uint64_t expect = abort ? keep*CHUNK : 10*CHUNK + CHUNK/2;
		printf("  reading %llu chunks: first pattern error at byte 0x%llx (expected 0x%llx)\n",
			(unsigned long long)n, (unsigned long long)v.first_error, (unsigned long long)expect);
		if (!v.errors || v.first_error != expect)
			return st_fail("the early end is not where it was captured");
	}
	/* Against the first recording's pattern exactly the chunks of the second one differ: the older
	 * data after the early end is intact, at its place. */
	if (st_replay(x, 0, n, s1, 0, &v))
		return -1;
	if (v.first_error != 0 || v.errors != keep*CHUNK/4)
		return st_fail("the first recording was damaged beyond the early end");
	return 0;
}

static int t_sessions(struct st_ctx *x)
{
	/* In units of n chunks (n drives: a session starts a stripe row). */
	static const uint64_t order[][2] = {{10, 4}, {2, 4}, {6, 4}};
	struct rec_result r;
	uint64_t n = st_width(x);
	int i;
	if (x->region_chunks < 16*n)
		return st_fail("the region is smaller than 16 chunks per drive");
	printf("  writing %llu chunks at chunk 0\n", (unsigned long long)(16*n));
	if (st_record(x, 0, 16*n, 0x0700, &r))
		return -1;
	for (i = 0; i < 3; i++) {
		printf("  writing %llu chunks at chunk %llu\n", (unsigned long long)(order[i][1]*n),
			(unsigned long long)(order[i][0]*n));
		if (st_record(x, order[i][0]*n, order[i][1]*n, 0x0710 + i, &r))
			return -1;
	}
	/* Read back in another order; the gaps still hold the first session's data. */
	if (st_verify(x, 6*n, 4*n, 0x0712) || st_verify(x, 10*n, 4*n, 0x0710) || st_verify(x, 2*n, 4*n, 0x0711))
		return -1;
	{
		/* Against the first session's pattern exactly chunks 2n..14n-1 differ. */
		struct rec_result v;
		if (st_replay(x, 0, 16*n, 0x0700, 0, &v))
			return -1;
		if (v.first_error != 2*n*CHUNK || v.errors != 12*n*CHUNK/4)
			return st_fail("a session wrote outside its chunks");
	}
	return 0;
}

static int t_sweep(struct st_ctx *x)
{
	unsigned long n;
	struct rec_result r;
	/* Each point at its own address: n chunks from chunk n - 1 (1 @0, 2 @1, 4 @3, ...). */
	for (n = 1; n <= x->max_sweep && 2*n - 1 <= x->region_chunks; n *= 2) {
		if (st_record(x, n - 1, n, 0x0800 + n, &r))
			return -1;
		printf("  writing %lu chunks took %llu ns => ", n, (unsigned long long)(literec_cycles_to_us(r.cycles*1000)));
		print_mibps(r.bytes, r.cycles);
		printf("\n");
		printf("RESULT name=rec_selftest_sweep op=write chunks=%lu bytes=%llu cycles=%llu\n", n,
			(unsigned long long)r.bytes, (unsigned long long)r.cycles);
		if (st_replay(x, n - 1, n, 0x0800 + n, 0, &r))
			return -1;
		printf("  reading %lu chunks took %llu ns => ", n, (unsigned long long)(literec_cycles_to_us(r.cycles*1000)));
		print_mibps(r.bytes, r.cycles);
		printf("\n");
		printf("RESULT name=rec_selftest_sweep op=read chunks=%lu bytes=%llu cycles=%llu errors=%llu\n", n,
			(unsigned long long)r.bytes, (unsigned long long)r.cycles, (unsigned long long)r.errors);
		if (r.errors)
			return st_fail("read back data differs");
	}
	return 0;
}

/* #09: invalid requests are refused with their status code, by the BIOS and, with the registers
 * written as given, by the recorder itself (write and read paths). */
static int raw_case(struct st_ctx *x, int replay, const char *what, uint64_t first, uint64_t last, int expect)
{
	int p = __builtin_ctz(x->mask);
	uint64_t cb = CHUNK/nvme_ctrls[p].lba_size;
	int code;
	if (x->sabotage) {               /* a valid request: the test must see no refusal and fail */
		first = 0;
		last = 2*cb;
	}
	code = rec_raw_start(replay, first, last, first, 1, nvme_ctrls[p].nsze, 1u << p, CHUNK, nvme_ctrls[p].lba_size);
	printf("  %s %s: status %d (%s)\n", replay ? "read" : "write", what, code, rec_status_str(code));
	if (code != expect) {
		printf("  expected status %d (%s)\n", expect, rec_status_str(expect));
		return -1;
	}
	return 0;
}

static int t_invalid(struct st_ctx *x)
{
	struct rec_job j;
	int p = __builtin_ctz(x->mask), rd;
	uint32_t before = 0;
	uint64_t cb = CHUNK/nvme_ctrls[p].lba_size, ns = nvme_ctrls[p].nsze;
	struct nvme_engine_status st;
	nvme_engine_status(p, &st);
	before = st.submitted;
	/* The recorder's own checks, registers as given: WRITE/READ_ADDR_LAST beyond the media, first
	 * greater than last, unaligned first (write) and last (read). */
	for (rd = 0; rd < 2; rd++) {
		if (raw_case(x, rd, "with the last address beyond the media", 0, (ns/cb)*cb, REC_STATUS_ERR_RANGE) ||
			raw_case(x, rd, "with the first address greater than the last", 4*cb, 2*cb, REC_STATUS_ERR_ORDER) ||
			raw_case(x, rd, rd ? "with an unaligned last address" : "with an unaligned first address",
				rd ? 0 : cb/2, rd ? 2*cb + cb/2 : 2*cb, REC_STATUS_ERR_ALIGN))
			return st_fail("the recorder did not refuse an invalid request with its status code");
	}
	/* The BIOS refuses before writing a register. */
	printf("  range beyond the media:\n  ");
	st_job(x, &j, 0, 1, 1);
	j.lba = nvme_ctrls[p].nsze;
	if (rec_job_check(&j) == 0)
		return st_fail("accepted");
	printf("  range crossing the end of the media:\n  ");
	st_job(x, &j, 0, st_width(x) + 1, 1);     /* two stripe rows from the last one */
	j.lba = nvme_ctrls[p].nsze - CHUNK/nvme_ctrls[p].lba_size;
	if (rec_job_check(&j) == 0)
		return st_fail("accepted");
	printf("  length not a whole number of chunks:\n  ");
	st_job(x, &j, 0, 1, 1);
	j.bytes = CHUNK + 4096;
	if (rec_job_check(&j) == 0)
		return st_fail("accepted");
	printf("  chunk larger than the drive's maximum transfer:\n  ");
	st_job(x, &j, 0, 1, 1);
	j.chunk = nvme_ctrls[p].max_xfer*2;
	j.bytes = j.chunk;
	if (j.chunk <= (16u << 20) && rec_job_check(&j) == 0)
		return st_fail("accepted");
	nvme_engine_status(p, &st);
	if (st.submitted != before)
		return st_fail("a command was sent");
	return 0;
}

static int t_full(struct st_ctx *x)
{
	struct rec_result r;
	printf("  writing all %llu chunks of the region\n", (unsigned long long)x->region_chunks);
	if (st_record(x, 0, x->region_chunks, 0x0a00, &r))
		return -1;
	printf("  writing %llu bytes took %llu us => ", (unsigned long long)r.bytes,
		(unsigned long long)(literec_cycles_to_us(r.cycles)));
	print_mibps(r.bytes, r.cycles);
	printf("\n");
	if (st_replay(x, 0, x->region_chunks, 0x0a00, 0, &r))
		return -1;
	printf("  reading %llu bytes took %llu us => ", (unsigned long long)r.bytes,
		(unsigned long long)(literec_cycles_to_us(r.cycles)));
	print_mibps(r.bytes, r.cycles);
	printf(", %llu word errors, %llu words checked, %llu extra\n", (unsigned long long)r.errors,
		(unsigned long long)r.checked_beats, (unsigned long long)r.extra_beats);
	/* Every word of the region compared, none beyond it, none differing. */
	return r.errors || r.extra_beats || r.checked_beats*RECORDER_WORD_BYTES != x->region_chunks*CHUNK ?
		st_fail("read back data differs") : 0;
}

/* Command --------------------------------------------------------------------------------------- */

struct st_test {
	const char *name;
	int (*fn)(struct st_ctx *x);
};

static int t_abort(struct st_ctx *x) { return t_end_early(x, 1); }
static int t_stop(struct st_ctx *x)  { return t_end_early(x, 0); }

static const struct st_test st_tests[] = {
	{"test link status",                                t_link},
	{"test flush rest of beats that have not been transferred", t_surplus},
	{"test pattern checker",                            t_checker},
	{"test flush after write",                          t_flush_after_write},
	{"test early end of input packets",                 t_early_last},
	{"test write abort",                                t_abort},
	{"test write stop",                                 t_stop},
	{"test adjacent sessions written and read out of order", t_sessions},
	{"test performance with different chunk counts",    t_sweep},
	{"test status of invalid requests",                 t_invalid},
	{"test write read of the whole region",             t_full},
	{"test link status",                                t_link},
};
#define ST_N (int)(sizeof(st_tests)/sizeof(st_tests[0]))

static void rec_selftest_handler(int nb_params, char **params)
{
	struct st_ctx x;
	unsigned long long v;
	unsigned long region_mib = 0, only = ST_N;
	int i, p, n = 0, failed = 0, force = catalog_force_arg(&nb_params, params);
	memset(&x, 0, sizeof(x));
	x.mask = 1;
	x.max_sweep = 256;
	for (i = 0; i < nb_params; i++) {
		char *eq = strchr(params[i], '=');
		if (eq && !strncmp(params[i], "ports=", 6)) {
			if (!strcmp(eq + 1, "all"))
				x.mask = (1u << NPORTS) - 1;
			else if (literec_parse_u64(eq + 1, &v) || v >= NPORTS) {
				printf("Error: invalid ports '%s': 'all' or a port 0..%d\n", eq + 1, NPORTS - 1);
				return;
			} else
				x.mask = 1u << v;
		} else if (eq && !strncmp(params[i], "region=", 7)) {
			if (literec_parse_ulong(eq + 1, &region_mib) || region_mib == 0) {
				printf("Error: invalid region '%s' MiB: a positive number (default: the whole namespace)\n", eq + 1);
				return;
			}
		} else if (eq && !strncmp(params[i], "break=", 6)) {
			if (strcmp(eq + 1, "0") && strcmp(eq + 1, "1")) {
				printf("Error: invalid break '%s': 1 breaks the condition of #01, #03 and #09 (they must then fail)\n", eq + 1);
				return;
			}
			x.sabotage = eq[1] == '1';
		} else if (eq && !strncmp(params[i], "sweep=", 6)) {
			if (literec_parse_ulong(eq + 1, &x.max_sweep) || x.max_sweep == 0) {
				printf("Error: invalid sweep '%s': the largest chunk count of test #08\n", eq + 1);
				return;
			}
		} else if (eq && !strncmp(params[i], "test=", 5)) {
			if (literec_parse_ulong(eq + 1, &only) || only >= ST_N) {
				printf("Error: invalid test '%s': 0..%d\n", eq + 1, ST_N - 1);
				return;
			}
		} else {
			printf("rec_selftest [ports=all|N] [region=MiB] [sweep=N] [test=N] [break=1] [force=1]   (overwrites the "
				"drives from LBA 0; a drive with a catalog only with force=1)\n");
			return;
		}
	}
	/* The region: the smallest namespace of the selected drives (or region=), in whole chunks. */
	x.region_chunks = (uint64_t)-1;
	for (p = 0; p < NPORTS; p++) {
		uint64_t c;
		if (!(x.mask & (1u << p)))
			continue;
		if (!nvme_ctrls[p].initialized) {
			printf("Error: nvme%d: %s\n", p, nvme_strerror(NVME_ERR_NO_INIT));
			return;
		}
		c = (nvme_ctrls[p].nsze*nvme_ctrls[p].lba_size)/CHUNK;
		if (c < x.region_chunks)
			x.region_chunks = c;
		n++;
	}
	x.region_chunks *= n;
	if (region_mib) {
		uint64_t c = ((uint64_t)region_mib << 20)/CHUNK;
		if (c > x.region_chunks) {
			printf("Error: region of %lu MiB exceeds the drives' %llu MiB\n", region_mib,
				(unsigned long long)(x.region_chunks*CHUNK >> 20));
			return;
		}
		x.region_chunks = c;
	}
	x.region_chunks -= x.region_chunks % n;
	if (x.region_chunks < 32) {
		printf("Error: the test region holds %llu chunks of %d KiB, at least 32 are needed\n",
			(unsigned long long)x.region_chunks, CHUNK >> 10);
		return;
	}
	/* Up front: the tests write the region of every drive from LBA 0. */
	if (catalog_guard("rec_selftest", x.mask, 0,
	    x.region_chunks/n*(CHUNK/nvme_ctrls[__builtin_ctz(x.mask)].lba_size), force))
		return;
	printf("Self-test of ");
	rec_print_ports(x.mask);
	printf(": %llu chunks of %d KiB from LBA 0 (overwritten)\n", (unsigned long long)x.region_chunks, CHUNK >> 10);
	n = 0;
	for (i = 0; i < ST_N; i++) {
		int r;
		if (only != ST_N && (unsigned long)i != only)
			continue;
		printf("****************************************************************\n");
		printf("TEST #%02d: %s\n", i, st_tests[i].name);
		r = st_tests[i].fn(&x);
		printf("TEST #%02d: %s\n", i, r ? "FAIL" : "PASS");
		printf("RESULT name=rec_selftest test=%d pass=%d\n", i, r ? 0 : 1);
		failed += r ? 1 : 0;
		n++;
		/* A failing test may leave the recorder running or an engine stopped: end the one, bring
		 * the drives back for the next test. */
		if (r) {
			rec_job_abort();
			for (p = 0; p < NPORTS; p++)
				if ((x.mask & (1u << p)) && nvme_init(p, 0))
					printf("Error: nvme%d: nvme_init after the failed test did not succeed\n", p);
		}
	}
	printf("****************************************************************\n");
	printf("Overall Test Summary: %s\n%d of %d tests failed\n", failed ? "FAIL" : "PASS", failed, n);
	printf("RESULT name=rec_selftest_summary tests=%d failed=%d\n", n, failed);
}
define_literec_command(rec_selftest, rec_selftest_handler,
	"Self-test suite of the recorder (overwrites the drives): rec_selftest [ports=all|N] [region=MiB] [sweep=N] [test=N] [break=1] [force=1]");

#endif
