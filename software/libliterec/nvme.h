// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// NVMe host driver: admin queue in the root port's on-chip RAM window (driven by the CPU), one I/O
// queue pair driven by the hardware queue engine.

#ifndef __LITEREC_NVME_H
#define __LITEREC_NVME_H

#include <stdint.h>
#include <generated/soc.h>

/* Driver errors (negative); NVMe statuses are returned as positive 15-bit CQE status fields. */
#define NVME_ERR_PCIE      (-1)   /* a PCIe request to the controller failed (see pcie.h) */
#define NVME_ERR_TIMEOUT   (-2)   /* no completion within the command timeout */
/* Command timeout: 1 ms .. what the engine's 32-bit cycle counter holds, at most 60 s. */
#define NVME_TIMEOUT_MAX_MS (0xffffffffULL/(CONFIG_CLOCK_FREQUENCY/1000) < 60000 ? \
	0xffffffffULL/(CONFIG_CLOCK_FREQUENCY/1000) : 60000)
#define NVME_ERR_NOT_READY (-3)   /* CSTS.RDY did not follow CC.EN within the timeout */
#define NVME_ERR_FATAL     (-4)   /* CSTS.CFS: controller fatal status */
#define NVME_ERR_NO_INIT   (-5)   /* nvme_init has not succeeded on this port */
#define NVME_ERR_NO_DEVICE (-6)   /* no NVMe controller on the port */
#define NVME_ERR_ENGINE    (-7)   /* the queue engine stopped (error status or timeout) */
#define NVME_ERR_ARG       (-8)   /* invalid argument (nothing was sent) */
#define NVME_ERR_STOPPED   (-9)   /* the queue engine stopped on an earlier error (nothing was sent) */
#define NVME_ERR_NO_CPUQ   (-10)  /* no CPU I/O queue on this controller (see nvme_init) */
#define NVME_ERR_BUSY      (-11)  /* the CPU I/O queue has a command in flight */
#define NVME_ERR_SHUTDOWN (-12)  /* CSTS.SHST did not report shutdown complete in time */
#define NVME_ERR_IN_USE    (-13)  /* the queue engine serves the recorder's running job (nothing was sent) */

struct nvme_ctrl {
	int      initialized;
	int      last_pcie_error;
	/* Registers */
	uint64_t cap;
	uint32_t vs;
	int      dstrd;            /* doorbell stride: 4 << dstrd bytes */
	uint32_t to_ms;            /* CAP.TO */
	int      mqes;             /* max entries per queue (CAP.MQES + 1) */
	/* Admin queue state */
	uint16_t asq_tail, acq_head;
	uint8_t  acq_phase;
	uint16_t cid;
	/* Identify Controller */
	uint16_t vid, ssvid;
	char     serial[21], model[41], fw[9];
	uint8_t  mdts;             /* 2^mdts minimum pages, 0: no limit */
	uint32_t max_xfer;         /* bytes per command used by the engine */
	uint16_t oncs;
	uint8_t  vwc;
	uint32_t nn;
	uint16_t wctemp, cctemp;   /* Kelvin */
	/* Namespace */
	uint32_t nsid;
	uint64_t nsze, ncap, nuse;
	uint32_t lba_size;
	uint8_t  lba_shift;
	int      nlbaf, flbas;
	/* I/O queue pair (hardware engine) */
	int      io_qsize, io_qd;
	/* CPU I/O queue pair (QID 2, on-chip RAM window): catalog I/O beside the engine, one command at a time */
	int      cpuq;             /* 1: created */
	uint16_t cpusq_tail, cpucq_head, cpu_cid;
	uint8_t  cpucq_phase, cpu_busy;
	uint64_t cpu_t0;
	uint32_t timeout_ms;       /* command timeout and bound of the CAP.TO waits */
};

extern struct nvme_ctrl nvme_ctrls[];

struct nvme_sqe {
	uint32_t cdw0, nsid, cdw2, cdw3;
	uint64_t mptr, prp1, prp2;
	uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

/* Status field (15 bits: SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14) in words. */
const char *nvme_status_str(int status);
/* Any return value of this driver in words (driver errors and NVMe statuses). */
const char *nvme_strerror(int r);

int nvme_init(int port, int verbose);
int nvme_admin(int port, struct nvme_sqe *sqe, uint32_t *dw0);
int nvme_shutdown(int port);
int nvme_get_log(int port, uint8_t lid, uint32_t nsid, uint32_t bytes, volatile uint8_t **buf);
int nvme_get_feature(int port, uint8_t fid, uint32_t cdw11, uint32_t *value);
int nvme_set_feature(int port, uint8_t fid, uint32_t cdw11, uint32_t *result);

/* I/O through the hardware queue engine (op: NVME_OP_READ/WRITE/FLUSH/DEALLOCATE/WRITE_ZEROES, the
 * engine's request operations exported by the SoC builder in generated/soc.h; addr: bus address of
 * the DRAM buffer). Waits for the completion of every command of the request; *cycles gets the
 * elapsed time. */
int nvme_io(int port, int op, uint64_t lba, uint32_t blocks, uint32_t addr, uint64_t *cycles);
/* The same without the namespace range check (diagnostics: the controller must reject it). */
int nvme_io_unchecked(int port, int op, uint64_t lba, uint32_t blocks, uint32_t addr, uint64_t *cycles);
/* Checks an I/O request without sending anything: prints the reason and returns NVME_ERR_ARG. */
int nvme_io_check(int port, int op, uint64_t lba, uint64_t blocks, uint64_t addr);

/* CPU I/O queue (QID 2): a few commands driven by the CPU from the port's on-chip RAM window, while
 * the hardware engine may own queue 1 (a recording). One command in flight per port. The data
 * buffer is NVME_CPU_BUF_BYTES of the window (nvme_cpu_buf); DSM ranges go to nvme_cpu_dsm_buf.
 * nvme_cpu_submit: 0 when sent; nvme_cpu_poll: 0 while in flight, 1 when done with *status =
 * 0, the NVMe status field (> 0) or a driver error (< 0); nvme_cpu_io does both with the timeout. */
#define NVME_CPU_BUF_BYTES 8192
#define NVME_OP_CPU_DSM    5    /* Dataset Management (deallocate): `blocks` = number of ranges */
volatile uint8_t *nvme_cpu_buf(int port);
volatile uint8_t *nvme_cpu_dsm_buf(int port);
int nvme_cpu_submit(int port, int op, uint64_t lba, uint32_t blocks, int fua);
int nvme_cpu_poll(int port, int *status);
int nvme_cpu_io(int port, int op, uint64_t lba, uint32_t blocks, int fua);

/* Engine state / registers. */
struct nvme_engine_status {
	int      ready, error, outstanding;
	uint32_t err_status, err_cid, err_op;
	uint64_t err_lba;
	uint32_t submitted, completed, sq_doorbells, cq_doorbells;
};
void nvme_engine_status(int port, struct nvme_engine_status *s);
void nvme_engine_set_qd(int port, int qd);
/* Request source of a port's engine: NVME_SRC_CPU, NVME_SRC_GEN (the benchmark generator),
 * NVME_SRC_EXT (the recorder datapath), from generated/soc.h (the engine stays enabled; statistics
 * cleared unless CPU). */
void nvme_engine_source(int port, int source);
/* 1 while the port's queue engine serves the recorder's running recording or replay. */
int  nvme_engine_in_use(int port);
/* Prints the engine's error (failing command, status in words), if it stopped on one. */
void nvme_report_engine(int port);
/* Decimal fixed point: prints v / 10^d. */
void literec_print_fixed(uint64_t v, int d);
unsigned long nvme_csr_base(int port);
/* Command arguments: params[idx] as a port (0 when absent), -1 with the reason printed; a port
 * without nvme_init is refused (-1, printed). */
int nvme_arg_port(int nb_params, char **params, int idx, int *port);
int nvme_need_init(int port);
uint32_t nvme_csts(int port, int *err);

#endif
