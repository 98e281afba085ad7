// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// NVMe host driver (see nvme.h).

#include <stdio.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <generated/mem.h>
#include <system.h>

#include "literec.h"
#include "pcie.h"
#include "nvme.h"

#ifdef CSR_NVME0_BASE

static const unsigned long nvme_bases[] = {
	CSR_NVME0_BASE,
#ifdef CSR_NVME1_BASE
	CSR_NVME1_BASE,
#endif
#ifdef CSR_NVME2_BASE
	CSR_NVME2_BASE,
#endif
#ifdef CSR_NVME3_BASE
	CSR_NVME3_BASE,
#endif
#ifdef CSR_NVME4_BASE
	CSR_NVME4_BASE,
#endif
#ifdef CSR_NVME5_BASE
	CSR_NVME5_BASE,
#endif
#ifdef CSR_NVME6_BASE
	CSR_NVME6_BASE,
#endif
#ifdef CSR_NVME7_BASE
	CSR_NVME7_BASE,
#endif
};
#define NPORTS ((int)(sizeof(nvme_bases)/sizeof(nvme_bases[0])))
#define REG(port, name)   (nvme_bases[port] + (CSR_NVME0_##name##_ADDR - CSR_NVME0_BASE))
#define RD(port, name)    csr_read_simple(REG(port, name))
#define WR(port, name, v) csr_write_simple((v), REG(port, name))
#define RD64(port, name)    literec_csr_read64(REG(port, name))
#define WR64(port, name, v) literec_csr_write64(REG(port, name), (v))

struct nvme_ctrl nvme_ctrls[NPORTS];

unsigned long nvme_csr_base(int port) { return nvme_bases[port]; }

/* On-chip RAM window of each port: admin queues and data buffers (CPU and device addresses). */
#define ADMIN_Q_ENTRIES 16
#define SRAM(port)      ((uintptr_t)PCIE0_SRAM_BASE + (uintptr_t)(port)*PCIE_PORT_STRIDE)
#define ASQ_OFF         0x0000   /* admin queues: page (4 KiB) aligned (ASQB/ACQB bits 11:0 reserved) */
#define ACQ_OFF         0x1000
#define BUF_OFF         0x2000   /* 4 KiB: Identify / log pages */
#define CPUSQ_OFF       0x3000   /* CPU I/O queue pair (QID 2): SQ and CQ, page aligned */
#define CPUCQ_OFF       0x4000
#define CPUBUF_OFF      0x5000   /* 8 KiB: its data buffer (two pages: PRP1 + PRP2) */
#define CPUDSM_OFF      0x7000   /* 4 KiB: its Dataset Management ranges (256) */
#define CPUQ_ID         2
#define CPUQ_ENTRIES    8

static const unsigned long queue_bases[][3] = {
	{NVME0_SQ_BASE, NVME0_CQ_BASE, NVME0_PRP_BASE},
#ifdef NVME1_SQ_BASE
	{NVME1_SQ_BASE, NVME1_CQ_BASE, NVME1_PRP_BASE},
#endif
#ifdef NVME2_SQ_BASE
	{NVME2_SQ_BASE, NVME2_CQ_BASE, NVME2_PRP_BASE},
#endif
#ifdef NVME3_SQ_BASE
	{NVME3_SQ_BASE, NVME3_CQ_BASE, NVME3_PRP_BASE},
#endif
#ifdef NVME4_SQ_BASE
	{NVME4_SQ_BASE, NVME4_CQ_BASE, NVME4_PRP_BASE},
#endif
#ifdef NVME5_SQ_BASE
	{NVME5_SQ_BASE, NVME5_CQ_BASE, NVME5_PRP_BASE},
#endif
#ifdef NVME6_SQ_BASE
	{NVME6_SQ_BASE, NVME6_CQ_BASE, NVME6_PRP_BASE},
#endif
#ifdef NVME7_SQ_BASE
	{NVME7_SQ_BASE, NVME7_CQ_BASE, NVME7_PRP_BASE},
#endif
};

#endif

/* Status words --------------------------------------------------------------------------------- */

static const char *generic_status(int sc)
{
	switch (sc) {
	case 0x00: return "Successful Completion";
	case 0x01: return "Invalid Command Opcode";
	case 0x02: return "Invalid Field in Command";
	case 0x03: return "Command ID Conflict";
	case 0x04: return "Data Transfer Error";
	case 0x05: return "Commands Aborted due to Power Loss Notification";
	case 0x06: return "Internal Error";
	case 0x07: return "Command Abort Requested";
	case 0x08: return "Command Aborted due to SQ Deletion";
	case 0x09: return "Command Aborted due to Failed Fused Command";
	case 0x0a: return "Command Aborted due to Missing Fused Command";
	case 0x0b: return "Invalid Namespace or Format";
	case 0x0c: return "Command Sequence Error";
	case 0x13: return "PRP Offset Invalid";
	case 0x15: return "Operation Denied";
	case 0x80: return "LBA Out of Range";
	case 0x81: return "Capacity Exceeded";
	case 0x82: return "Namespace Not Ready";
	case 0x83: return "Reservation Conflict";
	case 0x84: return "Format In Progress";
	default:   return NULL;
	}
}

static const char *specific_status(int sc)
{
	switch (sc) {
	case 0x00: return "Completion Queue Invalid";
	case 0x01: return "Invalid Queue Identifier";
	case 0x02: return "Invalid Queue Size";
	case 0x03: return "Abort Command Limit Exceeded";
	case 0x05: return "Asynchronous Event Request Limit Exceeded";
	case 0x08: return "Invalid Interrupt Vector";
	case 0x09: return "Invalid Log Page";
	case 0x0a: return "Invalid Format";
	case 0x0c: return "Invalid Queue Deletion";
	case 0x0d: return "Feature Identifier Not Saveable";
	case 0x0e: return "Feature Not Changeable";
	case 0x0f: return "Feature Not Namespace Specific";
	case 0x80: return "Conflicting Attributes";
	case 0x81: return "Invalid Protection Information";
	case 0x82: return "Attempted Write to Read Only Range";
	default:   return NULL;
	}
}

static const char *media_status(int sc)
{
	switch (sc) {
	case 0x80: return "Write Fault";
	case 0x81: return "Unrecovered Read Error";
	case 0x82: return "End-to-end Guard Check Error";
	case 0x83: return "End-to-end Application Tag Check Error";
	case 0x84: return "End-to-end Reference Tag Check Error";
	case 0x85: return "Compare Failure";
	case 0x86: return "Access Denied";
	case 0x87: return "Deallocated or Unwritten Logical Block";
	default:   return NULL;
	}
}

const char *nvme_status_str(int status)
{
	static char buf[96];
	int sc = status & 0xff, sct = (status >> 8) & 7;
	const char *s = NULL;
	if (status == NVME_STATUS_TIMEOUT)
		return "command timeout (no completion from the controller)";
	switch (sct) {
	case 0: s = generic_status(sc); break;
	case 1: s = specific_status(sc); break;
	case 2: s = media_status(sc); break;
	}
	if (s)
		snprintf(buf, sizeof(buf), "%s (SCT %d, SC 0x%02x%s)", s, sct, sc, (status >> 14) & 1 ? ", DNR" : "");
	else
		snprintf(buf, sizeof(buf), "status SCT %d SC 0x%02x%s", sct, sc, (status >> 14) & 1 ? " (DNR)" : "");
	return buf;
}

const char *nvme_strerror(int r)
{
	switch (r) {
	case 0:                  return "OK";
	case NVME_ERR_PCIE:      return "PCIe request to the controller failed";
	case NVME_ERR_TIMEOUT:   return "command timeout (no completion from the controller)";
	case NVME_ERR_NOT_READY: return "controller not ready (CSTS.RDY did not follow CC.EN in time)";
	case NVME_ERR_FATAL:     return "controller fatal status (CSTS.CFS)";
	case NVME_ERR_NO_INIT:   return "controller not initialized: run nvme_init";
	case NVME_ERR_NO_DEVICE: return "no NVMe controller on this port";
	case NVME_ERR_ENGINE:    return "queue engine stopped";
	case NVME_ERR_ARG:       return "invalid argument";
	case NVME_ERR_STOPPED:   return "queue engine stopped by an earlier error: run nvme_init";
	case NVME_ERR_NO_CPUQ:   return "no CPU I/O queue on this controller (it granted one I/O queue pair only, or a command timed out: run nvme_init)";
	case NVME_ERR_BUSY:      return "the CPU I/O queue has a command in flight";
	case NVME_ERR_SHUTDOWN:  return "shutdown not complete (CSTS.SHST did not report it in time)";
	case NVME_ERR_IN_USE:    return "the queue engine serves the running recording or replay (rec_stop / rec_abort / rec_wait first); nothing was sent";
	default:                 return r > 0 ? nvme_status_str(r) : "unknown error";
	}
}

#ifdef CSR_NVME0_BASE

/* Registers ------------------------------------------------------------------------------------ */

static int reg_read32(int port, uint32_t off, uint32_t *v)
{
	int r = pcie_mem_read32(port, pcie_devs[port].bar0 + off, v);
	if (r != PCIE_OK) {
		nvme_ctrls[port].last_pcie_error = r;
		return NVME_ERR_PCIE;
	}
	return 0;
}

static int reg_write32(int port, uint32_t off, uint32_t v)
{
	int r = pcie_mem_write32(port, pcie_devs[port].bar0 + off, v);
	if (r != PCIE_OK) {
		nvme_ctrls[port].last_pcie_error = r;
		return NVME_ERR_PCIE;
	}
	return 0;
}

static int reg_read64(int port, uint32_t off, uint64_t *v)
{
	int r = pcie_mem_read64(port, pcie_devs[port].bar0 + off, v);
	if (r != PCIE_OK) {
		nvme_ctrls[port].last_pcie_error = r;
		return NVME_ERR_PCIE;
	}
	return 0;
}

static int reg_write64(int port, uint32_t off, uint64_t v)
{
	/* Two dword writes (lower first): valid for every controller. */
	int r = reg_write32(port, off, (uint32_t)v);
	return r ? r : reg_write32(port, off + 4, (uint32_t)(v >> 32));
}

uint32_t nvme_csts(int port, int *err)
{
	uint32_t v = 0xffffffff;
	*err = reg_read32(port, 0x1c, &v);
	return v;
}

/* Wait for CSTS bits (mask) == value, bounded by min(CAP.TO, driver timeout). A fatal status
 * (CFS) ends the wait unless ignore_cfs (waiting for the reset that clears it). */
static int wait_csts_cfs(int port, uint32_t mask, uint32_t value, int ignore_cfs)
{
	struct nvme_ctrl *c = &nvme_ctrls[port];
	uint32_t csts, ms = c->to_ms;
	uint64_t t0 = literec_cycles(), limit;
	int r;
	if (c->timeout_ms && c->timeout_ms < ms)
		ms = c->timeout_ms;
	limit = literec_us_to_cycles((uint64_t)ms*1000);
	for (;;) {
		if ((r = reg_read32(port, 0x1c, &csts)))
			return r;
		if (csts == 0xffffffff)
			return NVME_ERR_PCIE;
		if ((csts & mask) == value)
			return 0;
		if ((csts & 2) && !(mask & 2) && !ignore_cfs)
			return NVME_ERR_FATAL;
		if (literec_cycles() - t0 > limit)
			return (csts & 2) ? NVME_ERR_FATAL : NVME_ERR_NOT_READY;
	}
}

static int wait_csts(int port, uint32_t mask, uint32_t value)
{
	return wait_csts_cfs(port, mask, value, 0);
}

/* Admin queue ---------------------------------------------------------------------------------- */

int nvme_admin(int port, struct nvme_sqe *sqe, uint32_t *dw0)
{
	struct nvme_ctrl *c = &nvme_ctrls[port];
	volatile uint32_t *sq = (volatile uint32_t *)(SRAM(port) + ASQ_OFF) + c->asq_tail*16;
	volatile uint32_t *cq;
	const uint32_t *src = (const uint32_t *)sqe;
	uint64_t t0, limit;
	uint32_t dw3;
	int i, r;

	sqe->cdw0 = (sqe->cdw0 & 0xffff) | ((uint32_t)c->cid << 16);
	for (i = 0; i < 16; i++)
		sq[i] = src[i];
	c->asq_tail = (c->asq_tail + 1) % ADMIN_Q_ENTRIES;
	if ((r = reg_write32(port, 0x1000, c->asq_tail)))
		return r;

	cq = (volatile uint32_t *)(SRAM(port) + ACQ_OFF) + c->acq_head*4;
	t0 = literec_cycles();
	limit = literec_us_to_cycles((uint64_t)c->timeout_ms*1000);
	for (;;) {
		dw3 = cq[3];
		if (((dw3 >> 16) & 1) == c->acq_phase && (dw3 & 0xffff) == c->cid)
			break;
		if (literec_cycles() - t0 > limit) {
			uint32_t csts;
			c->cid++;
			if (!reg_read32(port, 0x1c, &csts) && csts != 0xffffffff && (csts & 2))
				return NVME_ERR_FATAL;
			/* Its completion may still come and take this slot of the admin CQ: the queues
			 * are no longer in step, nvme_init sets them up again. */
			c->initialized = 0;
			return NVME_ERR_TIMEOUT;
		}
	}
	if (dw0)
		*dw0 = cq[0];
	c->acq_head = (c->acq_head + 1) % ADMIN_Q_ENTRIES;
	if (c->acq_head == 0)
		c->acq_phase ^= 1;
	c->cid++;
	if ((r = reg_write32(port, 0x1000 + (4 << c->dstrd), c->acq_head)))
		return r;
	return (dw3 >> 17) & 0x7fff;
}

static void ident_str(char *dst, volatile uint8_t *src, int n)
{
	int i;
	for (i = 0; i < n; i++)
		dst[i] = src[i];
	dst[n] = 0;
	for (i = n - 1; i >= 0 && (dst[i] == ' ' || dst[i] == 0); i--)
		dst[i] = 0;
}

static uint64_t le64(volatile uint8_t *p)
{
	uint64_t v = 0;
	int i;
	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t le32(volatile uint8_t *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint16_t le16(volatile uint8_t *p)
{
	return p[0] | (p[1] << 8);
}

static void clear_buf(int port)
{
	volatile uint32_t *b = (volatile uint32_t *)(SRAM(port) + BUF_OFF);
	int i;
	for (i = 0; i < 1024; i++)
		b[i] = 0;
}

static int identify(int port, uint32_t cns, uint32_t nsid)
{
	struct nvme_sqe s;
	memset(&s, 0, sizeof(s));
	clear_buf(port);
	s.cdw0  = 0x06;
	s.nsid  = nsid;
	s.prp1  = SRAM(port) + BUF_OFF;
	s.cdw10 = cns;
	return nvme_admin(port, &s, NULL);
}

int nvme_get_log(int port, uint8_t lid, uint32_t nsid, uint32_t bytes, volatile uint8_t **buf)
{
	struct nvme_sqe s;
	uint32_t numd = bytes/4 - 1;
	memset(&s, 0, sizeof(s));
	clear_buf(port);
	s.cdw0  = 0x02;
	s.nsid  = nsid;
	s.prp1  = SRAM(port) + BUF_OFF;
	s.cdw10 = ((numd & 0xffff) << 16) | lid;
	s.cdw11 = numd >> 16;
	*buf = (volatile uint8_t *)(SRAM(port) + BUF_OFF);
	return nvme_admin(port, &s, NULL);
}

int nvme_get_feature(int port, uint8_t fid, uint32_t cdw11, uint32_t *value)
{
	struct nvme_sqe s;
	memset(&s, 0, sizeof(s));
	s.cdw0  = 0x0a;
	s.cdw10 = fid;
	s.cdw11 = cdw11;
	return nvme_admin(port, &s, value);
}

int nvme_set_feature(int port, uint8_t fid, uint32_t cdw11, uint32_t *result)
{
	struct nvme_sqe s;
	memset(&s, 0, sizeof(s));
	s.cdw0  = 0x09;
	s.cdw10 = fid;
	s.cdw11 = cdw11;
	return nvme_admin(port, &s, result);
}

/* Engine ---------------------------------------------------------------------------------------- */

#define CTRL_ENABLE      (1 << CSR_NVME0_CTRL_ENABLE_OFFSET)
#define CTRL_CLEAR_ERROR (1 << CSR_NVME0_CTRL_CLEAR_ERROR_OFFSET)
#define CTRL_STATS_CLEAR (1 << CSR_NVME0_CTRL_STATS_CLEAR_OFFSET)

static void engine_ctrl(int port, int enable, int source, uint32_t pulses)
{
	WR(port, CTRL, (enable ? CTRL_ENABLE : 0) | pulses | (source << CSR_NVME0_CTRL_SOURCE_OFFSET));
}

void nvme_engine_status(int port, struct nvme_engine_status *s)
{
	uint32_t v = RD(port, STATUS), info = RD(port, ERR_INFO);
	s->ready        = (v >> CSR_NVME0_STATUS_READY_OFFSET) & 1;
	s->error        = (v >> CSR_NVME0_STATUS_ERROR_OFFSET) & 1;
	s->outstanding  = (v >> CSR_NVME0_STATUS_OUTSTANDING_OFFSET) & 0x1fff;
	s->err_status   = RD(port, ERR_STATUS);
	s->err_lba      = RD64(port, ERR_LBA);
	s->err_cid      = info & 0xffff;
	s->err_op       = (info >> 16) & 7;
	s->submitted    = RD(port, SUBMITTED);
	s->completed    = RD(port, COMPLETED);
	s->sq_doorbells = RD(port, SQ_DOORBELLS);
	s->cq_doorbells = RD(port, CQ_DOORBELLS);
}

void nvme_engine_source(int port, int source)
{
	engine_ctrl(port, 1, source, source == NVME_SRC_CPU ? 0 : CTRL_STATS_CLEAR);
}

int nvme_engine_in_use(int port)
{
#ifdef CSR_RECORDER_BASE
	uint32_t source = (RD(port, CTRL) >> CSR_NVME0_CTRL_SOURCE_OFFSET) & ((1 << CSR_NVME0_CTRL_SOURCE_SIZE) - 1);
	return source == NVME_SRC_EXT && (recorder_status_read() & (1 << CSR_RECORDER_STATUS_BUSY_OFFSET));
#else
	return 0;
#endif
}

void nvme_engine_set_qd(int port, int qd)
{
	WR(port, QD, qd);
	nvme_ctrls[port].io_qd = qd;
}

/* Init / shutdown -------------------------------------------------------------------------------- */

int nvme_shutdown(int port)
{
	struct nvme_ctrl *c = &nvme_ctrls[port];
	uint32_t cc;
	int r;
	if (port < 0 || port >= NPORTS || !pcie_devs[port].present)
		return NVME_ERR_NO_DEVICE;
	engine_ctrl(port, 0, 0, 0);
	if ((r = reg_read32(port, 0x14, &cc)))
		return r;
	if (!(cc & 1)) {
		c->initialized = 0;
		return 0;
	}
	/* Normal shutdown notification, wait for CSTS.SHST = 10b (shutdown complete). */
	if ((r = reg_write32(port, 0x14, (cc & ~(3 << 14)) | (1 << 14))))
		return r;
	r = wait_csts(port, 3 << 2, 2 << 2);
	c->initialized = 0;
	return r == NVME_ERR_NOT_READY ? NVME_ERR_SHUTDOWN : r;
}

/* nvme_init, step by step: each step returns 0 or an NVME_ERR_* code (printing why when verbose). */

/* The engine stops using the old queues first, once the commands it still has in flight (after an
 * error stop, say) completed: their data and CQEs are on the link, and a disabled engine would not
 * take the CQEs (the link would stall behind them). Bounded by the command timeout. */
static void init_quiesce_engine(int port, uint32_t timeout_ms)
{
	if (pcie_devs[port].present) {
		struct nvme_engine_status st;
		uint64_t t0 = literec_cycles();
		do
			nvme_engine_status(port, &st);
		while (st.outstanding && literec_cycles() - t0 < literec_us_to_cycles(1000ULL*timeout_ms));
	}
	engine_ctrl(port, 0, 0, 0);
}

/* An NVMe controller on the link (enumerated if needed): its CAP and VS, 4 KiB pages supported. */
static int init_find_controller(int port, struct nvme_ctrl *c, int verbose)
{
	uint32_t mps_min;
	int r;

	if (!pcie_devs[port].present) {
		r = pcie_enumerate(port, 0);
		if (r != PCIE_OK) {
			c->last_pcie_error = r;
			return NVME_ERR_PCIE;
		}
	}
	if (pcie_devs[port].class_code != 0x010802)
		return NVME_ERR_NO_DEVICE;
	if ((r = reg_read64(port, 0x00, &c->cap)) || (r = reg_read32(port, 0x08, &c->vs)))
		return r;
	c->mqes  = (c->cap & 0xffff) + 1;
	c->dstrd = (c->cap >> 32) & 0xf;
	c->to_ms = ((c->cap >> 24) & 0xff)*500;
	mps_min  = (c->cap >> 48) & 0xf;
	if (mps_min != 0) {
		if (verbose)
			printf("nvme%d: CAP.MPSMIN %lu (4 KiB pages not supported)\n", port, (unsigned long)mps_min);
		return NVME_ERR_NO_DEVICE;
	}
	return 0;
}

/* Disable (after a clean shutdown when it was running), wait CSTS.RDY = 0. */
static int init_disable_controller(int port)
{
	uint32_t cc;
	int r;

	if ((r = reg_read32(port, 0x14, &cc)))
		return r;
	if (cc & 1) {
		uint32_t csts;
		if ((r = reg_read32(port, 0x1c, &csts)))
			return r;
		/* Clean shutdown first, unless the controller is in fatal status (it is reset). */
		if (!(csts & 2)) {
			reg_write32(port, 0x14, (cc & ~(3 << 14)) | (1 << 14));
			wait_csts(port, 3 << 2, 2 << 2);
		}
		if ((r = reg_write32(port, 0x14, cc & ~(1 | (3 << 14)))))
			return r;
	}
	return wait_csts_cfs(port, 1, 0, 1);
}

/* Admin queues in the on-chip RAM window; enable, wait CSTS.RDY = 1. */
static int init_enable_controller(int port, struct nvme_ctrl *c)
{
	int r, i;

	for (i = 0; i < ADMIN_Q_ENTRIES*4; i++)
		((volatile uint32_t *)(SRAM(port) + ACQ_OFF))[i] = 0;
	c->asq_tail = c->acq_head = 0;
	c->acq_phase = 1;
	if ((r = reg_write32(port, 0x24, ((ADMIN_Q_ENTRIES - 1) << 16) | (ADMIN_Q_ENTRIES - 1))) ||
	    (r = reg_write64(port, 0x28, SRAM(port) + ASQ_OFF)) ||
	    (r = reg_write64(port, 0x30, SRAM(port) + ACQ_OFF)))
		return r;
	/* IOCQES 16 B, IOSQES 64 B, MPS 4 KiB, NVM command set, round robin; enable. */
	if ((r = reg_write32(port, 0x14, (4 << 20) | (6 << 16) | 1)))
		return r;
	return wait_csts(port, 1, 1);
}

/* Identify Controller: identity, limits, entry sizes (64/16-byte entries must be allowed). */
static int init_identify_controller(int port, struct nvme_ctrl *c, int verbose)
{
	volatile uint8_t *b = (volatile uint8_t *)(SRAM(port) + BUF_OFF);
	int r;

	if ((r = identify(port, 1, 0)))
		return r;
	c->vid   = le16(b + 0);
	c->ssvid = le16(b + 2);
	ident_str(c->serial, b + 4, 20);
	ident_str(c->model, b + 24, 40);
	ident_str(c->fw, b + 64, 8);
	c->mdts   = b[77];
	c->wctemp = le16(b + 266);
	c->cctemp = le16(b + 268);
	c->nn     = le32(b + 516);
	c->oncs   = le16(b + 520);
	c->vwc    = b[525];
	if ((b[512] & 0xf) > 6 || (b[513] & 0xf) > 4 || (b[512] >> 4) < 6 || (b[513] >> 4) < 4) {
		if (verbose)
			printf("nvme%d: SQES 0x%02x / CQES 0x%02x do not allow 64/16-byte entries\n", port, b[512], b[513]);
		return NVME_ERR_NO_DEVICE;
	}
	return 0;
}

/* The first active namespace and its LBA format. */
static int init_identify_namespace(int port, struct nvme_ctrl *c, int verbose)
{
	volatile uint8_t *b = (volatile uint8_t *)(SRAM(port) + BUF_OFF);
	uint32_t lbaf;
	int r;

	if ((r = identify(port, 2, 0)))
		return r;
	c->nsid = le32(b);
	if (c->nsid == 0) {
		if (verbose)
			printf("nvme%d: no active namespace\n", port);
		return NVME_ERR_NO_DEVICE;
	}
	if ((r = identify(port, 0, c->nsid)))
		return r;
	c->nsze   = le64(b + 0);
	c->ncap   = le64(b + 8);
	c->nuse   = le64(b + 16);
	c->nlbaf  = b[25] + 1;
	c->flbas  = b[26] & 0xf;
	lbaf      = le32(b + 128 + 4*c->flbas);
	c->lba_shift = (lbaf >> 16) & 0xff;
	c->lba_size  = 1 << c->lba_shift;
	if (c->lba_shift < NVME_LBA_SHIFT_MIN || c->lba_shift > NVME_LBA_SHIFT_MAX || c->nsze == 0) {
		if (verbose)
			printf("nvme%d: namespace %lu: LBA size 2^%d / size %llu not supported\n", port,
				(unsigned long)c->nsid, c->lba_shift, (unsigned long long)c->nsze);
		return NVME_ERR_NO_DEVICE;
	}
	return 0;
}

/* Two I/O queue pairs requested: 1 for the engine (its CQ and SQ in the engine's windows, no
 * interrupts: the engine sees each CQE), 2 for the CPU (catalog I/O while the engine records). */
static int init_engine_queues(int port, struct nvme_ctrl *c)
{
	struct nvme_sqe s;
	uint32_t dw0;
	int r;

	if ((r = nvme_set_feature(port, 0x07, 0x00010001, &dw0)))
		return r;
	c->cpuq = (dw0 & 0xffff) >= 1 && (dw0 >> 16) >= 1;
	c->io_qsize = c->mqes < NVME_ENGINE_ENTRIES ? c->mqes : NVME_ENGINE_ENTRIES;
	memset(&s, 0, sizeof(s));
	s.cdw0  = 0x05;
	s.prp1  = queue_bases[port][1];
	s.cdw10 = ((c->io_qsize - 1) << 16) | 1;
	s.cdw11 = 1;                          /* PC=1, IEN=0 */
	if ((r = nvme_admin(port, &s, NULL)))
		return r;
	memset(&s, 0, sizeof(s));
	s.cdw0  = 0x01;
	s.prp1  = queue_bases[port][0];
	s.cdw10 = ((c->io_qsize - 1) << 16) | 1;
	s.cdw11 = (1 << 16) | 1;              /* CQID 1, PC=1 */
	return nvme_admin(port, &s, NULL);
}

/* The CPU's I/O queue pair in the on-chip RAM window (polled), when the controller granted it;
 * without it the CPU's I/O goes through the engine (c->cpuq = 0). */
static void init_cpu_queues(int port, struct nvme_ctrl *c)
{
	struct nvme_sqe s;
	int i;

	if (!c->cpuq)
		return;
	for (i = 0; i < CPUQ_ENTRIES*4; i++)
		((volatile uint32_t *)(SRAM(port) + CPUCQ_OFF))[i] = 0;
	c->cpucq_phase = 1;
	memset(&s, 0, sizeof(s));
	s.cdw0  = 0x05;
	s.prp1  = SRAM(port) + CPUCQ_OFF;
	s.cdw10 = ((CPUQ_ENTRIES - 1) << 16) | CPUQ_ID;
	s.cdw11 = 1;
	if (nvme_admin(port, &s, NULL) == 0) {
		memset(&s, 0, sizeof(s));
		s.cdw0  = 0x01;
		s.prp1  = SRAM(port) + CPUSQ_OFF;
		s.cdw10 = ((CPUQ_ENTRIES - 1) << 16) | CPUQ_ID;
		s.cdw11 = (CPUQ_ID << 16) | 1;
		c->cpuq = nvme_admin(port, &s, NULL) == 0;
	} else
		c->cpuq = 0;
}

/* Engine configuration (commands up to MDTS and at most 2 MiB: one PRP list page), start, ready. */
static int init_start_engine(int port, struct nvme_ctrl *c)
{
	uint64_t t0;

	c->io_qd    = c->io_qsize - 1;
	c->max_xfer = NVME_MAX_TRANSFER;
	if (c->mdts && c->mdts < 20 && (4096u << c->mdts) < c->max_xfer)   /* 4096 << 20 wraps 32 bits */
		c->max_xfer = 4096u << c->mdts;
	WR(port, QSIZE, c->io_qsize);
	WR(port, QD, c->io_qd);
	WR(port, NSID, c->nsid);
	WR(port, LBA_SHIFT, c->lba_shift);
	WR(port, MAX_BLOCKS, c->max_xfer >> c->lba_shift);
	/* Doorbells are 32-bit bus addresses: BAR0 was assigned below 4 GiB (PCIE_BAR_BASE). */
	WR(port, SQ_DB, (uint32_t)(pcie_devs[port].bar0 + 0x1000 + 2*(4 << c->dstrd)));
	WR(port, CQ_DB, (uint32_t)(pcie_devs[port].bar0 + 0x1000 + 3*(4 << c->dstrd)));
	WR(port, TIMEOUT, (uint32_t)literec_us_to_cycles((uint64_t)c->timeout_ms*1000));
	engine_ctrl(port, 1, 0, CTRL_STATS_CLEAR);
	t0 = literec_cycles();
	while (!((RD(port, STATUS) >> CSR_NVME0_STATUS_READY_OFFSET) & 1))
		if (literec_cycles() - t0 > literec_us_to_cycles(1000))
			return NVME_ERR_ENGINE;
	return 0;
}

int nvme_init(int port, int verbose)
{
	struct nvme_ctrl *c;
	uint32_t timeout_ms;
	int r;

	if (port < 0 || port >= NPORTS)
		return NVME_ERR_NO_DEVICE;
	c = &nvme_ctrls[port];
	timeout_ms = c->timeout_ms ? c->timeout_ms : 1000;
	memset(c, 0, sizeof(*c));
	c->timeout_ms = timeout_ms;

	init_quiesce_engine(port, timeout_ms);
	if ((r = init_find_controller(port, c, verbose)) ||
	    (r = init_disable_controller(port)) ||
	    (r = init_enable_controller(port, c)) ||
	    (r = init_identify_controller(port, c, verbose)) ||
	    (r = init_identify_namespace(port, c, verbose)) ||
	    (r = init_engine_queues(port, c)))
		return r;
	init_cpu_queues(port, c);
	if ((r = init_start_engine(port, c)))
		return r;
	c->initialized = 1;
	return 0;
}

/* I/O ------------------------------------------------------------------------------------------ */

static int check_range = 1;

int nvme_io_check(int port, int op, uint64_t lba, uint64_t blocks, uint64_t addr)
{
	struct nvme_ctrl *c;
	uint64_t bytes;
	if (port < 0 || port >= NPORTS) {
		printf("Error: port %d: allowed 0..%d\n", port, NPORTS - 1);
		return NVME_ERR_ARG;
	}
	c = &nvme_ctrls[port];
	if (!c->initialized) {
		printf("Error: nvme%d: %s\n", port, nvme_strerror(NVME_ERR_NO_INIT));
		return NVME_ERR_NO_INIT;
	}
	if (op == NVME_OP_FLUSH)
		return 0;
	if (blocks == 0) {
		printf("Error: 0 blocks: at least 1 block\n");
		return NVME_ERR_ARG;
	}
	if (blocks > 0xffffffffULL) {
		printf("Error: %llu blocks: at most 4294967295 blocks per request\n", (unsigned long long)blocks);
		return NVME_ERR_ARG;
	}
	if (check_range && (lba >= c->nsze || blocks > c->nsze - lba)) {
		if (lba + blocks - 1 < lba)          /* the end is beyond 2^64: not printable as an LBA */
			printf("Error: LBA range %llu + %llu blocks is outside the namespace (LBAs 0..%llu)\n",
				(unsigned long long)lba, (unsigned long long)blocks, (unsigned long long)(c->nsze - 1));
		else
			printf("Error: LBA range %llu..%llu is outside the namespace (LBAs 0..%llu)\n",
				(unsigned long long)lba, (unsigned long long)(lba + blocks - 1),
				(unsigned long long)(c->nsze - 1));
		return NVME_ERR_ARG;
	}
	if (op != NVME_OP_READ && op != NVME_OP_WRITE)
		return 0;
	bytes = blocks << c->lba_shift;
	if (addr & 3) {
		printf("Error: buffer address 0x%llx is not dword aligned\n", (unsigned long long)addr);
		return NVME_ERR_ARG;
	}
	if (addr < PCIE_DRAM_WINDOW_BASE || addr >= (uint64_t)PCIE_DRAM_WINDOW_BASE + (uint64_t)PCIE_DRAM_WINDOW_SIZE ||
	    bytes > (uint64_t)PCIE_DRAM_WINDOW_BASE + (uint64_t)PCIE_DRAM_WINDOW_SIZE - addr) {
		printf("Error: buffer 0x%llx..0x%llx is outside the DMA window 0x%08lx..0x%08lx\n",
			(unsigned long long)addr, (unsigned long long)(addr + bytes - 1),
			(unsigned long)PCIE_DRAM_WINDOW_BASE,
			(unsigned long)((uint64_t)PCIE_DRAM_WINDOW_BASE + PCIE_DRAM_WINDOW_SIZE - 1));
		return NVME_ERR_ARG;
	}
	return 0;
}

int nvme_io_unchecked(int port, int op, uint64_t lba, uint32_t blocks, uint32_t addr, uint64_t *cycles)
{
	int r;
	check_range = 0;
	r = nvme_io(port, op, lba, blocks, addr, cycles);
	check_range = 1;
	return r;
}

int nvme_io(int port, int op, uint64_t lba, uint32_t blocks, uint32_t addr, uint64_t *cycles)
{
	struct nvme_ctrl *c = &nvme_ctrls[port];
	struct nvme_engine_status st;
	uint32_t target;
	uint64_t t0;

	if (nvme_io_check(port, op, lba, blocks, addr))
		return NVME_ERR_ARG;
	if (nvme_engine_in_use(port))
		return NVME_ERR_IN_USE;
	nvme_engine_status(port, &st);
	if (st.error)
		return NVME_ERR_STOPPED;
	/* The device reads the buffer from DRAM: write the CPU's cached data back first. */
	if (op == NVME_OP_WRITE) {
		flush_cpu_dcache();
		flush_l2_cache();
	}
	engine_ctrl(port, 1, 0, CTRL_STATS_CLEAR);
	target = RD(port, COMPLETED);
	WR(port, REQ_OP, op);
	WR64(port, REQ_LBA, lba);
	WR(port, REQ_BLOCKS, blocks);
	WR(port, REQ_ADR, addr);
	WR(port, REQ_ID, 0);
	t0 = literec_cycles();
	WR(port, REQ_PUSH, 1);
	/* Commands of this request: blocks split at the engine's command size. */
	if (op == NVME_OP_FLUSH)
		target += 1;
	else {
		uint32_t per = (op == NVME_OP_READ || op == NVME_OP_WRITE) ? (c->max_xfer >> c->lba_shift) : NVME_DSM_MAX_BLOCKS;
		target += blocks/per + (blocks % per != 0);   /* (blocks + per - 1) wraps 32 bits */
	}
	for (;;) {
		nvme_engine_status(port, &st);
		if ((int32_t)(st.completed - target) >= 0)
			break;
		/* Stopped: every command in flight completed, or a command timed out (it never will). */
		if (st.error && ((st.outstanding == 0 && RD(port, REQ_LEVEL) == 0) || st.err_status == NVME_STATUS_TIMEOUT))
			break;
	}
	if (cycles)
		*cycles = literec_cycles() - t0;
	/* The error bit and the completion counter change in the same cycle: read the status again
	 * now that every command has completed (the loop may have read them on either side). */
	nvme_engine_status(port, &st);
	if (op == NVME_OP_READ) {
		flush_cpu_dcache();
		flush_l2_cache();
	}
	if (st.error)
		return NVME_ERR_ENGINE;
	return 0;
}

/* CPU I/O queue --------------------------------------------------------------------------------- */

volatile uint8_t *nvme_cpu_buf(int port)     { return (volatile uint8_t *)(SRAM(port) + CPUBUF_OFF); }
volatile uint8_t *nvme_cpu_dsm_buf(int port) { return (volatile uint8_t *)(SRAM(port) + CPUDSM_OFF); }

int nvme_cpu_submit(int port, int op, uint64_t lba, uint32_t blocks, int fua)
{
	static const uint8_t opcodes[] = {0x02, 0x01, 0x00, 0x09, 0x08, 0x09};
	struct nvme_ctrl *c;
	struct nvme_sqe s;
	volatile uint32_t *sq;
	const uint32_t *src = (const uint32_t *)&s;
	int i, r;
	if (port < 0 || port >= NPORTS)
		return NVME_ERR_NO_DEVICE;
	c = &nvme_ctrls[port];
	if (!c->initialized)
		return NVME_ERR_NO_INIT;
	if (!c->cpuq)
		return NVME_ERR_NO_CPUQ;
	if (c->cpu_busy)
		return NVME_ERR_BUSY;
	if (op < 0 || op > NVME_OP_CPU_DSM || op == NVME_OP_DEALLOCATE || blocks == 0 ||
	    ((op == NVME_OP_READ || op == NVME_OP_WRITE) && ((uint64_t)blocks << c->lba_shift) > NVME_CPU_BUF_BYTES) ||
	    (op == NVME_OP_WRITE_ZEROES && blocks > NVME_DSM_MAX_BLOCKS) || (op == NVME_OP_CPU_DSM && blocks > 256))
		return NVME_ERR_ARG;
	memset(&s, 0, sizeof(s));
	s.cdw0 = opcodes[op] | ((uint32_t)c->cpu_cid << 16);
	s.nsid = c->nsid;
	if (op == NVME_OP_CPU_DSM) {
		s.prp1  = SRAM(port) + CPUDSM_OFF;
		s.cdw10 = blocks - 1;
		s.cdw11 = 1 << 2;                     /* AD: deallocate */
	} else if (op != NVME_OP_FLUSH) {
		s.prp1  = SRAM(port) + CPUBUF_OFF;
		if (op != NVME_OP_WRITE_ZEROES && ((uint64_t)blocks << c->lba_shift) > 4096)
			s.prp2 = SRAM(port) + CPUBUF_OFF + 4096;
		if (op == NVME_OP_WRITE_ZEROES)
			s.prp1 = 0;
		s.cdw10 = (uint32_t)lba;
		s.cdw11 = (uint32_t)(lba >> 32);
		s.cdw12 = (blocks - 1) | (fua ? (1u << 30) : 0);
	}
	sq = (volatile uint32_t *)(SRAM(port) + CPUSQ_OFF) + c->cpusq_tail*16;
	for (i = 0; i < 16; i++)
		sq[i] = src[i];
	c->cpusq_tail = (c->cpusq_tail + 1) % CPUQ_ENTRIES;
	c->cpu_busy = 1;
	c->cpu_t0 = literec_cycles();
	if ((r = reg_write32(port, 0x1000 + 2*CPUQ_ID*(4 << c->dstrd), c->cpusq_tail))) {
		c->cpuq = 0;
		return r;
	}
	return 0;
}

int nvme_cpu_poll(int port, int *status)
{
	struct nvme_ctrl *c = &nvme_ctrls[port];
	volatile uint32_t *cq;
	uint32_t dw3;
	if (!c->cpu_busy) {
		*status = NVME_ERR_ARG;
		return 1;
	}
	cq = (volatile uint32_t *)(SRAM(port) + CPUCQ_OFF) + c->cpucq_head*4;
	dw3 = cq[3];
	if (((dw3 >> 16) & 1) != c->cpucq_phase || (dw3 & 0xffff) != c->cpu_cid) {
		if (literec_cycles() - c->cpu_t0 <= literec_us_to_cycles((uint64_t)c->timeout_ms*1000))
			return 0;
		/* No completion: the queue cannot be trusted any more (a late CQE), until nvme_init. */
		c->cpu_busy = 0;
		c->cpuq = 0;
		*status = NVME_ERR_TIMEOUT;
		return 1;
	}
	c->cpucq_head = (c->cpucq_head + 1) % CPUQ_ENTRIES;
	if (c->cpucq_head == 0)
		c->cpucq_phase ^= 1;
	c->cpu_cid++;
	c->cpu_busy = 0;
	*status = (dw3 >> 17) & 0x7fff;
	if (reg_write32(port, 0x1000 + (2*CPUQ_ID + 1)*(4 << c->dstrd), c->cpucq_head))
		*status = NVME_ERR_PCIE;
	return 1;
}

int nvme_cpu_io(int port, int op, uint64_t lba, uint32_t blocks, int fua)
{
	int r, status;
	if ((r = nvme_cpu_submit(port, op, lba, blocks, fua)))
		return r;
	while (!nvme_cpu_poll(port, &status));
	return status;
}

#else

int nvme_init(int port, int verbose) { return NVME_ERR_NO_DEVICE; }

#endif
