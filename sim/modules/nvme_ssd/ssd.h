/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Simulated NVMe SSD: controller (NVMe 1.4 subset), media/performance model, faults, logs.
 */
#ifndef SSD_H
#define SSD_H

#include <stdint.h>
#include <stdio.h>
#include "../common/pcie_sim.h"

/* Parameters (all overridable by name, see ssd_params.c) ---------------------------------------- */
typedef struct ssd_params {
    /* media */
    double write_rate, cache_size, cache_rate, cache2_size, cache2_rate, cache_flush_rate, cache_idle_us;
    double read_rate, read_lat_us, write_lat_us, flush_lat_us, cmd_cost_us;
    double lat_jitter_pct, spike_prob, spike_us;
    double dip_rate, dip_period_us, dip_len_us;
    double write_buf, op_pct, gc_rate, gc_mode, gc_batch, gc_free_pct, bg_gc_rate;
    double temp_ambient, temp_per_gbps, temp_read_per_gbps, temp_tau_us, tmt1, tmt2;
    double throttle1_rate, throttle2_rate, temp_hyst, wctemp, cctemp, endurance_tbw;
    /* controller */
    double mdts, mqes, dstrd, cap_to, rdy_us, shn_us, max_queues, max_tags, cpl_timeout_us;
    double crs_us, train_us, link_latency_ns, dllp_pct, msix_vectors, up_credits, dn_credits;
    double dn_backlog_ns, tx_backlog_ns, fetch_max, sample_us, ctl_poll_cycles;
} ssd_params_t;

typedef struct ssd_param_desc {
    const char *name;
    size_t      off;
    double      min, max;
    const char *unit, *help;
} ssd_param_desc_t;

extern const ssd_param_desc_t ssd_param_descs[];
extern const char *const ssd_profile_names[];
int  ssd_profile_defaults(const char *profile, ssd_params_t *p);
const ssd_param_desc_t *ssd_param_find(const char *name);
/* Parse "2.75G", "42GB", "8MiB", "0x10", "1e9" -> value; 0 on success. */
int  ssd_parse_number(const char *s, double *v);
/* name=value with range check; error message in err. */
int  ssd_param_set(ssd_params_t *p, const char *name, const char *value, char *err, size_t errlen);

/* Faults ------------------------------------------------------------------------------------------ */
enum {
    F_STATUS = 1, F_DROP_CQE, F_CFS, F_RDY_SLOW, F_RDY_FAIL, F_LINK_DOWN, F_RETRAIN, F_BAR_UR, F_BAR_CA,
    F_BAR_POISON, F_BAR_DROP, F_POISON, F_MALFORMED, F_ROGUE, F_BITFLIP, F_NS_NOT_READY, F_BUSY,
};
typedef struct ssd_fault {
    int      id, kind, active, fired;
    int      op;            /* opcode to match, -1 any; admin opcodes 0x100 | opc */
    int      qid;           /* -1 any */
    uint64_t lba_lo, lba_hi;/* inclusive; lba_hi = UINT64_MAX any */
    int64_t  count;         /* remaining firings, -1 unlimited */
    int64_t  skip;
    int      sct, sc, dnr;
    ps_t     at_ps, for_ps;
    uint64_t addr, off;     /* rogue */
    int      rogue_read, mal_kind, bit, reg;
    char     spec[160];
} ssd_fault_t;

#define SSD_MAX_FAULTS 64

/* Controller -------------------------------------------------------------------------------------- */
typedef struct ssd_sq { int valid; uint64_t base; uint32_t size, head, tail; uint16_t cqid; int fetching; uint32_t pending_fetch; uint8_t *fbuf; } ssd_sq_t;
typedef struct ssd_cq { int valid; uint64_t base; uint32_t size, head, tail; int phase, ien; uint16_t iv; int nsq; } ssd_cq_t;

enum { CS_FREE = 0, CS_PRP, CS_XFER_IN, CS_MEDIA_W, CS_MEDIA_R, CS_XFER_OUT, CS_WAIT, CS_DONE, CS_LOST };

typedef struct ssd_cmd {
    int      state, idx;
    uint32_t gen;
    uint16_t sqid, cid;
    uint32_t sqe[16];
    uint8_t  opc;
    int      admin, dir;        /* dir: 0 none, 1 host->dev, 2 dev->host */
    uint64_t slba, bytes;
    uint32_t nlb;
    uint64_t *prps;             /* page addresses (first may have an offset) */
    uint32_t nprps, prp_need, prp_cap;
    uint64_t prp_list_ptr;
    uint8_t  *prp_fetch;
    uint8_t  *buf;
    uint64_t buf_cap;
    uint32_t seg_next;          /* next data segment to transfer */
    uint64_t xfer_issued, xfer_done;
    int      dma_pending;
    ps_t     t_submit, t_due;
    int      sct, sc, dnr;
    uint32_t dw0;
    int      lost, aborted, apos;
    struct ssd_cmd *next_out;   /* XFER_OUT round robin */
} ssd_cmd_t;

#define SSD_MAX_CMDS 1024
#define SSD_MAX_QUEUES 65

typedef struct ssd_errlog { uint64_t count; uint16_t sqid, cid, status; uint64_t lba; uint32_t nsid; } ssd_errlog_t;

typedef struct ssd {
    /* configuration */
    int      index;
    char     profile[32];
    ssd_params_t p;
    int      gen, width;
    unsigned mps_cap, lba_size, data_width;
    uint64_t ns_size, nsze;
    uint64_t sys_clk_hz, seed;
    char     ns_file[512], ctl_path[256], cmd_log_path[512], sample_log_path[512];
    char     serial[21], model[41];
    /* PCIe */
    pcie_ep_t ep;
    /* NVMe registers */
    uint32_t cc, csts, aqa, intms;
    uint64_t asq, acq;
    int      rdy_target;        /* RDY value being moved to */
    ps_t     rdy_at, shn_at;
    int      cfs_pending; ps_t cfs_at;
    uint32_t page_size;
    /* MSI-X */
    uint32_t msix_table[64 * 4];
    uint64_t msix_pba;
    /* queues / commands */
    ssd_sq_t sq[SSD_MAX_QUEUES];
    ssd_cq_t cq[SSD_MAX_QUEUES];
    unsigned nsqa, ncqa, sq_rr;
    ssd_cmd_t cmds[SSD_MAX_CMDS];
    int      free_cmds[SSD_MAX_CMDS], nfree;
    int      active[SSD_MAX_CMDS], nactive;
    uint32_t gen_counter;
    int      ncmds_max;
    /* features */
    uint32_t feat[32];
    uint16_t temp_over[9], temp_under[9];
    int      vwc;
    /* async events */
    uint16_t aer_cid[8]; int naer; uint32_t aer_pending_mask; uint32_t aer_queue[8]; int naerq;
    /* error log */
    ssd_errlog_t errlog[64]; uint64_t err_count;
    /* media */
    int      fd;
    uint8_t  *valid;            /* bitmap per map unit */
    uint64_t units, unit_size, phys_units, valid_units, erased_units, stale_units;
    uint64_t gc_bytes;       /* bytes written not yet a whole unit (GC is charged per unit) */
    int      gc_phase;          /* burst mode: 1 while collecting */
    double   cache_used, cache2_used;
    ps_t     media_free, read_free, last_idle_acct;
    uint64_t inflight_w;
    /* write buffer: chunks accepted and their media completion times (FIFO) */
    struct { ps_t end; uint32_t bytes; } *wq;
    uint32_t wq_cap, wq_head, wq_n;
    uint64_t wq_bytes;
    /* thermal */
    double   temp;
    ps_t     temp_t;
    uint64_t temp_w_bytes, temp_r_bytes;
    int      throttle;          /* 0 none, 1 TMT1, 2 TMT2 */
    uint32_t tmt_count[3]; double tmt_time[3]; double warn_time, crit_time;
    /* stats */
    uint64_t bytes_written, bytes_read, host_reads, host_writes, cmds_done, media_errors;
    double   busy_ps;
    uint64_t s_w_bytes, s_r_bytes, s_ios;   /* per sample interval */
    ps_t     next_sample;
    FILE    *cmd_log, *sample_log;
    /* faults */
    ssd_fault_t faults[SSD_MAX_FAULTS]; int nfaults, next_fault_id;
    ps_t     ns_not_ready_until;
    int      rdy_fail;
    ps_t     rdy_extra;
    ps_t     next_fault_time;
    /* control channel */
    int      ctl_fd;
    uint64_t ctl_cycles;
    /* prng */
    uint64_t rng;
    /* XFER_OUT list */
    ssd_cmd_t *out_head;
    ps_t     now;
    int      fatal;             /* CFS set */
    uint64_t bme_violations;
} ssd_t;

/* API (ssd_ctrl.c / ssd_conf.c) */
ssd_t *ssd_create_json(const char *json, char *err, size_t errlen);
void   ssd_destroy(ssd_t *s);
ps_t   ssd_service(ssd_t *s, ps_t now);
int    ssd_control(ssd_t *s, const char *cmd, char *out, size_t outlen);
int    ssd_fault_add(ssd_t *s, const char *spec, char *err, size_t errlen);
void   ssd_poll_control(ssd_t *s);
void   ssd_sample(ssd_t *s, ps_t now);

/* internal */
extern const pcie_dev_ops_t ssd_dev_ops;
int    ssd_init(ssd_t *s, char *err, size_t errlen);
ps_t   ssd_media_write(ssd_t *s, ps_t now, uint64_t bytes);
double ssd_media_rate(ssd_t *s, ps_t now, int *tier);
void   ssd_media_mark(ssd_t *s, uint64_t off, uint64_t len, int valid);
void   ssd_media_idle(ssd_t *s, ps_t now);
void   ssd_thermal(ssd_t *s, ps_t now);
double ssd_rand(ssd_t *s);
ps_t   ssd_lat(ssd_t *s, double us);
int    ssd_media_open(ssd_t *s, char *err, size_t errlen);
ssd_fault_t *ssd_fault_match(ssd_t *s, int kind, int op, int qid, uint64_t slba, uint32_t nlb);
void   ssd_faults_timed(ssd_t *s, ps_t now);
void   ssd_reset_controller(ssd_t *s, int full);

#endif
