/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * QEMU NVMe bridge (doc/qemu_bridge.md): a simulated PCIe function whose NVMe controller is QEMU's
 * (hw/nvme in a qemu-system-x86_64 child process, multiprocess "x-remote" mode). Configuration and
 * BAR requests of the root port are forwarded to QEMU over its socket protocol; QEMU's view of host
 * memory is a shared memory file that the bridge keeps consistent with the SoC's memory with real
 * MRd/MWr TLPs through the root port's completer (pcie_dma_read/pcie_dma_write of the common layer).
 */
#ifndef QEMU_NVME_H
#define QEMU_NVME_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "pcie_sim.h"

/* QEMU's BAR0 lives above every host address the bridge mirrors (QEMU's RAM regions hide PCI BARs
 * at the same addresses). The host sees the address it assigned; the bridge translates. */
#define QB_QEMU_BAR_ADDR   0x10000000000ull    /* 1 TiB */
#define QB_MAX_NS          16

/* --- configuration ----------------------------------------------------------------------------- */

typedef struct qb_conf {
    int      index;
    uint64_t sys_clk_hz;
    unsigned data_width;
    char     qemu_bin[512];
    char     image[1024];
    uint64_t image_size;        /* 0: use the existing file's size */
    unsigned lba_size;          /* logical block size QEMU is started with */
    char     log_path[1024];
    char     serial[21];
    char     drive_opts[256];   /* appended to QEMU's -drive option (e.g. cache=none) */
    unsigned max_ioqpairs, mdts;
    int      gen, width;        /* link model */
    unsigned max_tags;
    double   start_timeout_ms;  /* QEMU start (QMP greeting + status) */
    double   io_timeout_ms;     /* one request/answer on the QEMU socket */
    double   cmd_timeout_ms;    /* a command forwarded to QEMU until its CQE */
    double   poll_ns;           /* modeled interval between checks of QEMU's completion queues */
    double   block_us;          /* harness: wait this long (wall) for QEMU when nothing else is due */
    uint64_t mem_top;           /* host addresses [0, mem_top) are mirrored */
    double   cpl_timeout_us, link_latency_ns, train_us;
    int      verbose;
} qb_conf_t;

/* --- QEMU process and its socket protocol (qb_proc.c) ---------------------------------------- */

typedef struct qb_proc {
    pid_t    pid;
    int      sock;              /* mpqemu channel */
    int      qmp;               /* QMP monitor channel */
    int      irqfd[2];          /* INTx eventfd + resample eventfd */
    int      memfd;
    uint8_t *mem;               /* shared "system memory" of QEMU: [0, mem_size) */
    uint64_t mem_size;
    double   io_timeout_ms;
    int      dead;              /* the socket failed or QEMU exited */
    int      sock_closed;       /* the channel was closed by QEMU (it is exiting) */
    int      exit_status;       /* waitpid status once reaped */
    char     log_path[1024];
    char     why[512];          /* first failure */
    uint64_t requests;          /* socket round trips */
} qb_proc_t;

/* Find the binary (a path, or a name searched in PATH); 0 or -1 with the message. */
int  qbp_find_binary(const char *bin, char *path, size_t pathlen, char *err, size_t errlen);
/* Start QEMU with an NVMe controller on the raw image and wait until it is ready. */
int  qbp_start(qb_proc_t *p, const qb_conf_t *c, char *err, size_t errlen);
/* Stop (close the channel, wait up to 2 s, then SIGKILL) and reap; idempotent. */
void qbp_stop(qb_proc_t *p);
/* Configuration space: len 1/2/4 at addr (the access must not cross the last dword). */
int  qbp_cfg_read(qb_proc_t *p, unsigned addr, unsigned len, uint32_t *val);
int  qbp_cfg_write(qb_proc_t *p, unsigned addr, uint32_t val, unsigned len);
/* Memory space (QEMU system address), size 1/2/4/8. */
int  qbp_mem_read(qb_proc_t *p, uint64_t addr, unsigned size, uint64_t *val);
int  qbp_mem_write(qb_proc_t *p, uint64_t addr, uint64_t val, unsigned size);
/* Device reset message (QEMU's device reset handler: the NVMe controller). */
int  qbp_device_reset(qb_proc_t *p);
/* Is QEMU still running (reaps it when it exited)? Sets dead/why. */
int  qbp_alive(qb_proc_t *p);
/* Last lines of QEMU's own output in its log (for error messages); oneline joins them with " | ". */
void qbp_log_tail(const qb_proc_t *p, char *out, size_t n, int oneline);
/* Kill and reap every QEMU started by this process (atexit). */
void qbp_kill_all(void);

/* --- bridge (qb_bridge.c) ---------------------------------------------------------------------- */

typedef struct qb_seg { uint64_t addr; uint32_t len; } qb_seg_t;

struct qb_op;

typedef struct qb_cmd {
    struct qb_cmd   *hnext;         /* in-flight hash chain */
    struct qb_cmd   *bnext;         /* next command of its doorbell */
    struct qb_cmd   *inext, *iprev; /* forwarded commands with a completion deadline, oldest first */
    struct qb_op    *batch;         /* the doorbell that brought it */
    uint16_t sqid, cid;
    uint32_t slot;
    uint8_t  opc;
    uint8_t  admin;
    uint32_t sqe[16];
    int      pending;               /* DMA reads outstanding */
    int      walking;               /* PRP list walk not finished */
    int      dma_status;            /* first failure (PCIE_DMA_*) */
    uint16_t ovr;                   /* status override for the CQE: (DNR << 14) | (SCT << 8) | SC; 0 none */
    int      neuter;                /* replace the SQE QEMU sees (QEMU must not touch memory) */
    int      data_in;               /* direction of the PRP data */
    uint64_t prp_rem;               /* PRP walk: bytes still to describe */
    uint64_t list_addr;
    unsigned list_n;                /* entries fetched at list_addr */
    int      list_chain;
    qb_seg_t *segs;                 /* data-in segments (written back on success) */
    unsigned nsegs, capsegs;
    uint64_t fetched_bytes;         /* data fetched for this command (stats) */
    uint64_t t_submit_ns;           /* wall clock when forwarded to QEMU */
    int      forwarded, ready, timed;
} qb_cmd_t;

typedef struct qb_op {              /* a BAR write, forwarded in order */
    struct qb_op *next;
    uint64_t off, val;
    unsigned len;
    int      is_sqdb;
    uint16_t qid;
    uint32_t old_tail, new_tail;
    int      sqe_pending;           /* SQE fetch jobs outstanding */
    int      sqe_status;
    int      waiting;               /* commands not ready */
    int      dropped;               /* a doorbell whose commands were dropped: not forwarded */
    qb_cmd_t *cmds, *cmds_tail;
} qb_op_t;

typedef struct qb_sq { int valid; uint64_t base; uint32_t size, tail; uint16_t cqid; } qb_sq_t;
typedef struct qb_cq { int valid; uint64_t base; uint32_t size, seen; int phase; uint32_t outstanding, head; } qb_cq_t;

typedef struct qb_ns {
    int      known;
    uint64_t nsze;
    unsigned flbas, nlbaf, dps;
    unsigned lbads[64], ms[64];
} qb_ns_t;

typedef struct qb_wb {              /* write-back to host memory (ordered) */
    struct qb_wb *next;
    uint64_t addr;
    uint32_t len, pos;
    const uint8_t *src;             /* shared memory, or inline */
    uint8_t  inline_data[16];
} qb_wb_t;

typedef struct qb_job {             /* one DMA read of the bridge */
    struct qb_job *next, *prev;
    int      kind;                  /* JOB_SQE, JOB_LIST, JOB_DATA */
    qb_op_t  *op;
    qb_cmd_t *cmd;
    uint64_t addr;
    uint32_t len;
} qb_job_t;

typedef struct qb_stats {
    uint64_t cfg_reads, cfg_writes, bar_reads, bar_writes, doorbells, cmds, cqes;
    uint64_t fetch_bytes, fetch_jobs, wb_bytes, wb_tlps_bytes, sqe_bytes, list_bytes;
    uint64_t dma_failures, neutered, unknown_cqes, timeouts, qemu_requests, zeroed_bytes;
    uint64_t intx_events, cfs_events, flr, resets, no_mirror;
} qb_stats_t;

typedef struct qb {
    qb_conf_t  c;
    pcie_ep_t  ep;
    qb_proc_t  q;
    /* function */
    uint32_t   qemu_bar_size;
    unsigned   reg_size;            /* QEMU's register + doorbell region of BAR0 */
    uint8_t    cfg_init[256];       /* QEMU's configuration header + capabilities after start */
    unsigned   pcie_cap, pm_cap;
    unsigned   cfg_size;            /* 256, or 4096 with a PCI Express capability */
    uint32_t   devctl_sizes;        /* DevCtl MPS/MRRS as the host wrote them */
    /* controller */
    unsigned   dstrd, page_bits;
    unsigned   mdts;                /* from Identify Controller (0 = unknown/unlimited) */
    int        fatal;               /* CSTS.CFS presented to the host */
    char       fatal_why[256];
    qb_sq_t   *sq;
    qb_cq_t   *cq;
    unsigned   nq;
    qb_ns_t    ns[QB_MAX_NS + 1];
    /* work */
    qb_op_t   *ops_head, *ops_tail;
    unsigned   nops;
    qb_cmd_t  *hash[4096];
    unsigned   inflight;            /* commands forwarded to QEMU, CQE not seen */
    qb_cmd_t  *timed_head, *timed_tail; /* the ones with a deadline (not AERs) */
    unsigned   ntimed;
    qb_wb_t   *wb_head, *wb_tail;
    qb_job_t  *jobs;
    unsigned   njobs;
    ps_t       next_poll, poll_ps;
    uint64_t   last_alive_check_ns;
    uint32_t   warned_opc[8];       /* opcodes already reported as not mirrored */
    qb_stats_t st;
} qb_t;

qb_t *qb_create_json(const char *json, char *err, size_t errlen);
qb_t *qb_create(const qb_conf_t *c, char *err, size_t errlen);
void  qb_destroy(qb_t *b);
void  qb_conf_defaults(qb_conf_t *c);
extern const pcie_dev_ops_t qb_dev_ops;
/* Bridge work that does not depend on modeled time (e.g. after the harness changed something). */
int   qb_busy(const qb_t *b);
uint64_t qb_wall_ns(void);

#endif
