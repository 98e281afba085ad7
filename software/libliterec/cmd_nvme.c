// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// NVMe BIOS commands.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <generated/mem.h>

#include <bios/command.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"
#include "catalog.h"

#ifdef CSR_NVME0_BASE

#define REG(port, name)   (nvme_csr_base(port) + (CSR_NVME0_##name##_ADDR - CSR_NVME0_BASE))
#define RD(port, name)    csr_read_simple(REG(port, name))
#define WR(port, name, v) csr_write_simple((v), REG(port, name))
#define RD64(port, name)    literec_csr_read64(REG(port, name))
#define WR64(port, name, v) literec_csr_write64(REG(port, name), (v))

int nvme_arg_port(int nb_params, char **params, int idx, int *port)
{
	unsigned long v;
	*port = 0;
	if (nb_params <= idx)
		return 0;
	if (literec_parse_ulong(params[idx], &v) || v >= (unsigned long)pcie_nports()) {
		printf("Error: invalid port '%s': allowed 0..%d\n", params[idx], pcie_nports() - 1);
		return -1;
	}
	*port = v;
	return 0;
}

int nvme_need_init(int port)
{
	if (!nvme_ctrls[port].initialized) {
		printf("Error: nvme%d: %s\n", port, nvme_strerror(NVME_ERR_NO_INIT));
		return -1;
	}
	return 0;
}

/* Prints a driver/NVMe error with its details. */
static void report(int port, const char *what, int r)
{
	if (r == NVME_ERR_PCIE)
		printf("Error: nvme%d: %s: %s (%s)\n", port, what, nvme_strerror(r),
			pcie_strerror(nvme_ctrls[port].last_pcie_error));
	else if (r > 0)
		printf("Error: nvme%d: %s failed: %s\n", port, what, nvme_status_str(r));
	else
		printf("Error: nvme%d: %s: %s\n", port, what, nvme_strerror(r));
}

void nvme_report_engine(int port)
{
	struct nvme_engine_status st;
	static const char *ops[] = {"read", "write", "flush", "deallocate", "write-zeroes", "?", "?", "?"};
	nvme_engine_status(port, &st);
	if (!st.error)
		return;
	printf("Error: nvme%d: %s command (CID %lu) at LBA %llu: %s\n", port, ops[st.err_op & 7],
		(unsigned long)st.err_cid, (unsigned long long)st.err_lba, nvme_status_str(st.err_status));
	printf("  engine stopped: %lu submitted, %lu completed, %d outstanding; nvme_init to recover\n",
		(unsigned long)st.submitted, (unsigned long)st.completed, st.outstanding);
}

/* Decimal fixed point: v / 10^d. */
void literec_print_fixed(uint64_t v, int d)
{
	uint64_t p = 1;
	int i;
	for (i = 0; i < d; i++)
		p *= 10;
	printf("%llu.%0*llu", (unsigned long long)(v/p), d, (unsigned long long)(v % p));
}

/* nvme_init ------------------------------------------------------------------------------------- */

static void nvme_init_handler(int nb_params, char **params)
{
	int port, r;
	struct nvme_ctrl *c;
	if (nvme_arg_port(nb_params, params, 0, &port))
		return;
	r = nvme_init(port, 1);
	if (r) {
		report(port, "init", r);
		printf("RESULT name=nvme_init port=%d ok=0 error=%d\n", port, r);
		return;
	}
	catalog_report_interrupted(port);
	c = &nvme_ctrls[port];
	printf("nvme%d: %s, NVMe %lu.%lu, %llu x %lu B (%llu MB), I/O queue of %d entries (QD %d), %lu KiB per command\n",
		port, c->model, (unsigned long)(c->vs >> 16), (unsigned long)((c->vs >> 8) & 0xff),
		(unsigned long long)c->nsze, (unsigned long)c->lba_size,
		(unsigned long long)((c->nsze << c->lba_shift)/1000000), c->io_qsize, c->io_qd,
		(unsigned long)(c->max_xfer >> 10));
	printf("RESULT name=nvme_init port=%d ok=1 nsze=%llu lba_size=%lu qsize=%d max_xfer=%lu\n", port,
		(unsigned long long)c->nsze, (unsigned long)c->lba_size, c->io_qsize, (unsigned long)c->max_xfer);
}
define_literec_command(nvme_init, nvme_init_handler, "Initialize the NVMe controller and its I/O queue: nvme_init [port]");

/* nvme_id --------------------------------------------------------------------------------------- */

static void nvme_id_handler(int nb_params, char **params)
{
	int port;
	struct nvme_ctrl *c;
	if (nvme_arg_port(nb_params, params, 0, &port) || nvme_need_init(port))
		return;
	c = &nvme_ctrls[port];
	printf("nvme%d identity:\n", port);
	printf("  model         : %s\n", c->model);
	printf("  serial        : %s\n", c->serial);
	printf("  firmware      : %s\n", c->fw);
	printf("  PCI vendor    : %04x (subsystem %04x)\n", c->vid, c->ssvid);
	printf("  version       : NVMe %lu.%lu.%lu\n", (unsigned long)(c->vs >> 16),
		(unsigned long)((c->vs >> 8) & 0xff), (unsigned long)(c->vs & 0xff));
	printf("  namespace %-4lu: %llu LBAs of %lu B = %llu MB (capacity %llu, used %llu LBAs)\n",
		(unsigned long)c->nsid, (unsigned long long)c->nsze, (unsigned long)c->lba_size,
		(unsigned long long)((c->nsze << c->lba_shift)/1000000), (unsigned long long)c->ncap,
		(unsigned long long)c->nuse);
	printf("  LBA formats   : %d (using #%d)\n", c->nlbaf, c->flbas);
	if (c->mdts)
		printf("  MDTS          : %lu KiB\n", (unsigned long)((4096u << c->mdts) >> 10));
	else
		printf("  MDTS          : no limit\n");
	printf("  write cache   : %s\n", (c->vwc & 1) ? "present" : "none");
	printf("  ONCS          : 0x%04x (Dataset Management %s, Write Zeroes %s)\n", c->oncs,
		(c->oncs & (1 << 2)) ? "yes" : "no", (c->oncs & (1 << 3)) ? "yes" : "no");
	printf("  CAP           : 0x%016llx (MQES %d, DSTRD %d, TO %lu ms)\n", (unsigned long long)c->cap,
		c->mqes, c->dstrd, (unsigned long)c->to_ms);
	printf("  temperatures  : warning %d C, critical %d C\n", c->wctemp ? c->wctemp - 273 : 0,
		c->cctemp ? c->cctemp - 273 : 0);
	printf("RESULT name=nvme_id port=%d vid=0x%04x nsze=%llu lba_size=%lu mdts=%d vwc=%d oncs=0x%04x model=\"%s\" serial=\"%s\" fw=\"%s\"\n",
		port, c->vid, (unsigned long long)c->nsze, (unsigned long)c->lba_size, c->mdts, c->vwc & 1,
		c->oncs, c->model, c->serial, c->fw);
}
define_literec_command(nvme_id, nvme_id_handler, "Identity of the controller and namespace: nvme_id [port]");

/* nvme_smart ------------------------------------------------------------------------------------ */

static uint64_t le64p(volatile uint8_t *p)
{
	uint64_t v = 0;
	int i;
	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t le32p(volatile uint8_t *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void nvme_smart_handler(int nb_params, char **params)
{
	int port, r, temp;
	volatile uint8_t *b;
	uint64_t dur, duw;
	if (nvme_arg_port(nb_params, params, 0, &port) || nvme_need_init(port))
		return;
	r = nvme_get_log(port, 0x02, 0xffffffff, 512, &b);
	if (r) {
		report(port, "Get Log Page (SMART / Health Information)", r);
		return;
	}
	temp = (b[1] | (b[2] << 8)) - 273;
	dur  = le64p(b + 32);
	duw  = le64p(b + 48);
	printf("nvme%d SMART / health:\n", port);
	printf("  critical warning   : 0x%02x%s\n", b[0], b[0] ? " (see NVMe SMART log byte 0)" : " (none)");
	printf("  temperature        : %d C\n", temp);
	printf("  available spare    : %d %% (threshold %d %%)\n", b[3], b[4]);
	printf("  percentage used    : %d %%\n", b[5]);
	printf("  data units read    : %llu (%llu MB)\n", (unsigned long long)dur, (unsigned long long)(dur*512/1000));
	printf("  data units written : %llu (%llu MB)\n", (unsigned long long)duw, (unsigned long long)(duw*512/1000));
	printf("  host read commands : %llu\n", (unsigned long long)le64p(b + 64));
	printf("  host write commands: %llu\n", (unsigned long long)le64p(b + 80));
	printf("  busy time          : %llu min\n", (unsigned long long)le64p(b + 96));
	printf("  power cycles       : %llu, power-on hours %llu, unsafe shutdowns %llu\n",
		(unsigned long long)le64p(b + 112), (unsigned long long)le64p(b + 128), (unsigned long long)le64p(b + 144));
	printf("  media errors       : %llu, error log entries %llu\n", (unsigned long long)le64p(b + 160),
		(unsigned long long)le64p(b + 176));
	printf("  thermal management : TMT1 %lu transitions / %lu s, TMT2 %lu transitions / %lu s\n",
		(unsigned long)le32p(b + 216), (unsigned long)le32p(b + 224), (unsigned long)le32p(b + 220),
		(unsigned long)le32p(b + 228));
	printf("  warning/critical temperature time: %lu / %lu min\n", (unsigned long)le32p(b + 192),
		(unsigned long)le32p(b + 196));
	printf("RESULT name=nvme_smart port=%d critical_warning=%d temperature_c=%d available_spare=%d percentage_used=%d data_units_read=%llu data_units_written=%llu host_reads=%llu host_writes=%llu media_errors=%llu error_entries=%llu tmt1_count=%lu tmt1_seconds=%lu tmt2_count=%lu tmt2_seconds=%lu\n",
		port, b[0], temp, b[3], b[5], (unsigned long long)dur, (unsigned long long)duw,
		(unsigned long long)le64p(b + 64), (unsigned long long)le64p(b + 80),
		(unsigned long long)le64p(b + 160), (unsigned long long)le64p(b + 176),
		(unsigned long)le32p(b + 216), (unsigned long)le32p(b + 224),
		(unsigned long)le32p(b + 220), (unsigned long)le32p(b + 228));
}
define_literec_command(nvme_smart, nvme_smart_handler, "SMART / health log: nvme_smart [port]");

/* nvme_errlog ----------------------------------------------------------------------------------- */

static void nvme_errlog_handler(int nb_params, char **params)
{
	int port, r, i, shown = 0;
	volatile uint8_t *b;
	if (nvme_arg_port(nb_params, params, 0, &port) || nvme_need_init(port))
		return;
	r = nvme_get_log(port, 0x01, 0xffffffff, 4096, &b);
	if (r) {
		report(port, "Get Log Page (Error Information)", r);
		return;
	}
	for (i = 0; i < 64; i++) {
		volatile uint8_t *e = b + 64*i;
		uint64_t count = le64p(e);
		int status = (e[12] | (e[13] << 8)) >> 1;
		if (count == 0)
			continue;
		printf("  #%llu: SQ %d CID %d LBA %llu NSID %lu: %s\n", (unsigned long long)count,
			e[8] | (e[9] << 8), e[10] | (e[11] << 8), (unsigned long long)le64p(e + 16),
			(unsigned long)le32p(e + 24), nvme_status_str(status));
		shown++;
	}
	printf("nvme%d: %d error log entries\n", port, shown);
	printf("RESULT name=nvme_errlog port=%d entries=%d\n", port, shown);
}
define_literec_command(nvme_errlog, nvme_errlog_handler, "Error Information log: nvme_errlog [port]");

/* nvme_feature ---------------------------------------------------------------------------------- */

static void nvme_feature_handler(int nb_params, char **params)
{
	unsigned long fid, val;
	uint32_t dw0;
	int port, r, set = nb_params >= 2 && strcmp(params[1], "get") != 0;
	if (nb_params < 1) {
		printf("nvme_feature <fid> [value|get] [port]   (4: temperature threshold, 6: write cache, 7: queues; "
			"get: read the feature of another port)\n");
		return;
	}
	if (literec_parse_ulong(params[0], &fid) || fid == 0 || fid > 0xff) {
		printf("Error: invalid feature identifier '%s': 0x01..0xff\n", params[0]);
		return;
	}
	/* Features whose value travels in a data buffer (LBA Range Type, Autonomous Power State
	 * Transition, Host Memory Buffer, Timestamp, Host Identifier): no buffer is given here. */
	if (fid == 0x03 || fid == 0x0c || fid == 0x0d || fid == 0x0e || fid == 0x81) {
		printf("Error: feature 0x%02lx carries its value in a data buffer, which nvme_feature does not "
			"provide: features with a Dword 11 value only (e.g. 4 temperature threshold, 6 write cache, "
			"7 number of queues)\n", fid);
		return;
	}
	if (set && (literec_parse_ulong(params[1], &val) || val > 0xffffffffUL)) {
		printf("Error: invalid value '%s': a 32-bit number to set, or get\n", params[1]);
		return;
	}
	if (nvme_arg_port(nb_params, params, 2, &port) || nvme_need_init(port))
		return;
	r = set ? nvme_set_feature(port, fid, val, &dw0) : nvme_get_feature(port, fid, 0, &dw0);
	if (r) {
		report(port, set ? "Set Features" : "Get Features", r);
		return;
	}
	printf("nvme%d: feature 0x%02lx %s 0x%08lx", port, fid, set ? "set, result" : "=", (unsigned long)dw0);
	if (fid == 0x04 && !set)
		printf(" (temperature threshold %ld C)", (long)(dw0 & 0xffff) - 273);
	if (fid == 0x07)
		printf(" (%lu I/O SQs, %lu I/O CQs allocated)", (unsigned long)(dw0 & 0xffff) + 1,
			(unsigned long)(dw0 >> 16) + 1);
	if (fid == 0x06 && !set)
		printf(" (volatile write cache %s)", (dw0 & 1) ? "enabled" : "disabled");
	printf("\nRESULT name=nvme_feature port=%d fid=0x%02lx value=0x%08lx\n", port, fid, (unsigned long)dw0);
}
define_literec_command(nvme_feature, nvme_feature_handler, "Get/Set Features: nvme_feature <fid> [value|get] [port]");

/* I/O commands ---------------------------------------------------------------------------------- */

static void io_result(int port, const char *name, int op, uint64_t lba, uint32_t blocks, uint32_t addr,
	int r, uint64_t cycles)
{
	struct nvme_ctrl *c = &nvme_ctrls[port];
	uint64_t bytes = (op == NVME_OP_READ || op == NVME_OP_WRITE) ? ((uint64_t)blocks << c->lba_shift) : 0;
	uint64_t us = literec_cycles_to_us(cycles);
	if (r) {
		if (r == NVME_ERR_ENGINE)
			nvme_report_engine(port);
		else if (r == NVME_ERR_STOPPED) {
			printf("Error: nvme%d: %s not sent: %s\n", port, name, nvme_strerror(r));
			nvme_report_engine(port);
		} else if (r != NVME_ERR_ARG)
			report(port, name, r);
		printf("RESULT name=%s port=%d ok=0 error=%d\n", name, port, r);
		return;
	}
	printf("nvme%d: %s LBA %llu, %lu blocks", port, name, (unsigned long long)lba, (unsigned long)blocks);
	if (bytes)
		printf(" (%llu bytes, buffer 0x%08lx)", (unsigned long long)bytes, (unsigned long)addr);
	printf(": OK in %llu us\n", (unsigned long long)us);
	printf("RESULT name=%s port=%d ok=1 lba=%llu blocks=%lu bytes=%llu cycles=%llu\n", name, port,
		(unsigned long long)lba, (unsigned long)blocks, (unsigned long long)bytes,
		(unsigned long long)cycles);
}

static void rw_handler(int op, const char *name, int nb_params, char **params)
{
	unsigned long long lba, blocks, addr = PCIE_DRAM_WINDOW_BASE;
	uint64_t cycles = 0;
	int port, r, force = op == NVME_OP_WRITE ? catalog_force_arg(&nb_params, params) : 0;
	if (nb_params < 2) {
		printf("%s <lba> <blocks> [addr] [port]%s   (addr: bus address in the DRAM window, default 0x%08lx)\n",
			name, op == NVME_OP_WRITE ? " [force=1]" : "", (unsigned long)PCIE_DRAM_WINDOW_BASE);
		return;
	}
	if (literec_parse_u64(params[0], &lba)) {
		printf("Error: invalid LBA '%s'\n", params[0]);
		return;
	}
	if (literec_parse_u64(params[1], &blocks)) {
		printf("Error: invalid block count '%s'\n", params[1]);
		return;
	}
	if (nb_params > 2 && literec_parse_u64(params[2], &addr)) {
		printf("Error: invalid address '%s'\n", params[2]);
		return;
	}
	if (nvme_arg_port(nb_params, params, 3, &port))
		return;
	if (nvme_io_check(port, op, lba, blocks, addr))
		return;
	if (op == NVME_OP_WRITE && catalog_guard(name, 1u << port, lba, blocks, force))
		return;
	r = nvme_io(port, op, lba, blocks, addr, &cycles);
	io_result(port, name, op, lba, blocks, addr, r, cycles);
}

static void nvme_read_handler(int nb_params, char **params)  { rw_handler(NVME_OP_READ, "nvme_read", nb_params, params); }
static void nvme_write_handler(int nb_params, char **params) { rw_handler(NVME_OP_WRITE, "nvme_write", nb_params, params); }
define_literec_command(nvme_read, nvme_read_handler, "Read blocks into memory: nvme_read <lba> <blocks> [addr] [port]");

/* Diagnostics: a read/write whose LBA range is NOT checked against the namespace (the buffer still
 * is): shows how the controller itself rejects it. */
static void nvme_raw_handler(int nb_params, char **params)
{
	unsigned long long lba, blocks;
	uint64_t cycles = 0;
	int op, port, r, force = catalog_force_arg(&nb_params, params);
	if (nb_params < 3) {
		printf("nvme_raw <read|write> <lba> <blocks> [port] [force=1]   (no namespace range check: diagnostics)\n");
		return;
	}
	if (!strcmp(params[0], "read")) op = NVME_OP_READ;
	else if (!strcmp(params[0], "write")) op = NVME_OP_WRITE;
	else { printf("Error: operation '%s': allowed read or write\n", params[0]); return; }
	if (literec_parse_u64(params[1], &lba) || literec_parse_u64(params[2], &blocks) || blocks == 0 ||
	    blocks > 65536) {
		printf("Error: invalid LBA or block count (1..65536)\n");
		return;
	}
	if (nvme_arg_port(nb_params, params, 3, &port))
		return;
	if (op == NVME_OP_WRITE && (nvme_need_init(port) || catalog_guard("nvme_raw", 1u << port, lba, blocks, force)))
		return;
	r = nvme_io_unchecked(port, op, lba, blocks, PCIE_DRAM_WINDOW_BASE, &cycles);
	io_result(port, "nvme_raw", op, lba, blocks, PCIE_DRAM_WINDOW_BASE, r, cycles);
}
define_literec_command(nvme_raw, nvme_raw_handler, "Read/write without the namespace range check: nvme_raw <read|write> <lba> <blocks> [port] [force=1]");
define_literec_command(nvme_write, nvme_write_handler, "Write blocks from memory: nvme_write <lba> <blocks> [addr] [port] [force=1]");

static void nvme_flush_handler(int nb_params, char **params)
{
	uint64_t cycles = 0;
	int port, r;
	if (nvme_arg_port(nb_params, params, 0, &port))
		return;
	if (nvme_io_check(port, NVME_OP_FLUSH, 0, 0, 0))
		return;
	r = nvme_io(port, NVME_OP_FLUSH, 0, 0, 0, &cycles);
	io_result(port, "nvme_flush", NVME_OP_FLUSH, 0, 0, 0, r, cycles);
}
define_literec_command(nvme_flush, nvme_flush_handler, "Flush the volatile write cache: nvme_flush [port]");

static void range_handler(int op, const char *name, uint16_t oncs_bit, int nb_params, char **params)
{
	unsigned long long lba, blocks;
	uint64_t cycles = 0;
	int port, r, force = catalog_force_arg(&nb_params, params);
	if (nb_params < 2) {
		printf("%s <lba> <blocks> [port] [force=1]\n", name);
		return;
	}
	if (literec_parse_u64(params[0], &lba) || literec_parse_u64(params[1], &blocks)) {
		printf("Error: invalid LBA or block count\n");
		return;
	}
	if (nvme_arg_port(nb_params, params, 2, &port))
		return;
	if (nvme_io_check(port, op, lba, blocks, 0))
		return;
	if (!(nvme_ctrls[port].oncs & oncs_bit)) {
		printf("Error: nvme%d does not support %s (ONCS 0x%04x)\n", port, name, nvme_ctrls[port].oncs);
		return;
	}
	if (catalog_guard(name, 1u << port, lba, blocks, force))
		return;
	r = nvme_io(port, op, lba, blocks, 0, &cycles);
	io_result(port, name, op, lba, blocks, 0, r, cycles);
}

static void nvme_trim_handler(int nb_params, char **params)  { range_handler(NVME_OP_DEALLOCATE, "nvme_trim", 1 << 2, nb_params, params); }
static void nvme_zero_handler(int nb_params, char **params)  { range_handler(NVME_OP_WRITE_ZEROES, "nvme_zero", 1 << 3, nb_params, params); }
define_literec_command(nvme_trim, nvme_trim_handler, "Deallocate blocks (Dataset Management): nvme_trim <lba> <blocks> [port] [force=1]");
define_literec_command(nvme_zero, nvme_zero_handler, "Write Zeroes: nvme_zero <lba> <blocks> [port] [force=1]");

/* nvme_shutdown / nvme_status / nvme_timeout ------------------------------------------------------ */

static void nvme_shutdown_handler(int nb_params, char **params)
{
	int port, r;
	if (nvme_arg_port(nb_params, params, 0, &port))
		return;
	r = nvme_shutdown(port);
	if (r) {
		report(port, "shutdown", r);
		return;
	}
	printf("nvme%d: shutdown complete (CSTS.SHST = 10b); nvme_init to use it again\n", port);
	printf("RESULT name=nvme_shutdown port=%d ok=1\n", port);
}
define_literec_command(nvme_shutdown, nvme_shutdown_handler, "Clean shutdown (CC.SHN): nvme_shutdown [port]");

static void nvme_status_handler(int nb_params, char **params)
{
	struct nvme_engine_status st;
	uint32_t csts;
	int port, err;
	if (nvme_arg_port(nb_params, params, 0, &port))
		return;
	nvme_engine_status(port, &st);
	printf("nvme%d: %s\n", port, nvme_ctrls[port].initialized ? "initialized" : "not initialized");
	if (pcie_devs[port].present) {
		csts = nvme_csts(port, &err);
		if (err)
			printf("  CSTS: unreadable (%s)\n", pcie_strerror(nvme_ctrls[port].last_pcie_error));
		else
			printf("  CSTS 0x%08lx: RDY %lu, CFS %lu, SHST %lu\n", (unsigned long)csts,
				(unsigned long)(csts & 1), (unsigned long)((csts >> 1) & 1), (unsigned long)((csts >> 2) & 3));
	}
	printf("  engine: %s%s, %d outstanding, %lu submitted, %lu completed, doorbells SQ %lu / CQ %lu, QD %d\n",
		st.ready ? "ready" : "off", st.error ? ", STOPPED ON ERROR" : "", st.outstanding,
		(unsigned long)st.submitted, (unsigned long)st.completed, (unsigned long)st.sq_doorbells,
		(unsigned long)st.cq_doorbells, nvme_ctrls[port].io_qd);
	if (st.error)
		nvme_report_engine(port);
	printf("RESULT name=nvme_status port=%d initialized=%d ready=%d error=%d err_status=0x%04lx err_lba=%llu outstanding=%d submitted=%lu completed=%lu\n",
		port, nvme_ctrls[port].initialized, st.ready, st.error, (unsigned long)st.err_status,
		(unsigned long long)st.err_lba, st.outstanding, (unsigned long)st.submitted,
		(unsigned long)st.completed);
}
define_literec_command(nvme_status, nvme_status_handler, "Controller and queue engine status: nvme_status [port]");

static void nvme_timeout_handler(int nb_params, char **params)
{
	unsigned long ms;
	int port;
	if (nb_params < 1) {
		printf("nvme_timeout <ms> [port]   (command timeout and bound of the CAP.TO waits; now %lu ms)\n",
			(unsigned long)(nvme_ctrls[0].timeout_ms ? nvme_ctrls[0].timeout_ms : 1000));
		return;
	}
	/* The engine's TIMEOUT register counts 32 bits of cycles. */
	if (literec_parse_ulong(params[0], &ms) || ms == 0 || ms > NVME_TIMEOUT_MAX_MS) {
		printf("Error: invalid timeout '%s': 1..%lu ms (the engine counts 2^32 cycles of %lu MHz)\n", params[0],
			(unsigned long)NVME_TIMEOUT_MAX_MS, (unsigned long)(CONFIG_CLOCK_FREQUENCY/1000000));
		return;
	}
	if (nvme_arg_port(nb_params, params, 1, &port))
		return;
	nvme_ctrls[port].timeout_ms = ms;
	WR(port, TIMEOUT, (uint32_t)literec_us_to_cycles((uint64_t)ms*1000));
	printf("nvme%d: command timeout %lu ms\n", port, ms);
}
define_literec_command(nvme_timeout, nvme_timeout_handler, "Command timeout in ms (modeled time): nvme_timeout <ms> [port]");


#endif
