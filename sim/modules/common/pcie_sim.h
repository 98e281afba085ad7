/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Reusable C for simulated PCIe devices at the TLP boundary (see doc/sim_pcie_port.md):
 *
 *   pcie_tlp_*   TLP pool, header build/parse helpers
 *   pcie_link_*  link model: serial rate, per-TLP overhead, DLLP share, latency, flow-control
 *                credits, pacing per direction, LTSSM (PERST#, training, retrain, link down)
 *   pcie_cfg_*   Type-0 configuration space helper (masks, BAR sizing, capability builders)
 *   pcie_ep_*    endpoint function: config/BAR request handling, CRS, MEM/BME enforcement, DMA
 *                engine (MRd split by MRRS/4 KiB, tags, split completions, completion timeout;
 *                MWr split by MPS/4 KiB)
 *   pcie_host_*  a root-complex + host-memory model, for harnesses without RTL
 *   pcie_pads_*  LiteX Verilator pad glue (only in the sim module build)
 *
 * A device provides pcie_dev_ops_t callbacks and gets everything else. All times are modeled
 * picoseconds (ps_t); nothing uses the wall clock.
 */
#ifndef PCIE_SIM_H
#define PCIE_SIM_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

typedef uint64_t ps_t;
#define PS_NEVER   UINT64_MAX
#define PS_PER_US  1000000ULL
#define PS_PER_NS  1000ULL

/* TLP ------------------------------------------------------------------------------------------ */

#define TLP_MAX_PAYLOAD 4096

/* Fmt/Type byte (dword 0 bits 31:24). */
enum {
    TLP_MRD32 = 0x00, TLP_MRD64 = 0x20, TLP_MWR32 = 0x40, TLP_MWR64 = 0x60,
    TLP_MRDLK32 = 0x01, TLP_MRDLK64 = 0x21,
    TLP_IORD = 0x02, TLP_IOWR = 0x42,
    TLP_CFGRD0 = 0x04, TLP_CFGWR0 = 0x44, TLP_CFGRD1 = 0x05, TLP_CFGWR1 = 0x45,
    TLP_CPL = 0x0A, TLP_CPLD = 0x4A, TLP_CPLLK = 0x0B, TLP_CPLDLK = 0x4B,
};
/* Completion status. */
enum { CPL_SC = 0, CPL_UR = 1, CPL_CRS = 2, CPL_CA = 4 };

typedef struct pcie_tlp {
    struct pcie_tlp *next;
    ps_t     t;            /* arrival time at the receiver (ps) */
    uint32_t hdr[4];       /* header dwords as values */
    uint32_t plen;         /* payload bytes carried (a multiple of 4) */
    uint8_t  nhdr;         /* 3 or 4 */
    uint8_t  flags;        /* TLPF_* */
    uint8_t  data[TLP_MAX_PAYLOAD + 64];
} pcie_tlp_t;

#define TLPF_MALFORMED 0x01   /* delivered as received, known bad (length mismatch ...) */

typedef struct pcie_tlp_pool {
    pcie_tlp_t *free;
    size_t      allocated, in_use;
} pcie_tlp_pool_t;

pcie_tlp_t *pcie_tlp_alloc(pcie_tlp_pool_t *pool);
void        pcie_tlp_free(pcie_tlp_pool_t *pool, pcie_tlp_t *t);
void        pcie_tlp_pool_destroy(pcie_tlp_pool_t *pool);

static inline unsigned tlp_fmttype(const pcie_tlp_t *t) { return t->hdr[0] >> 24; }
static inline unsigned tlp_has_data(const pcie_tlp_t *t) { return (t->hdr[0] >> 30) & 1; }
static inline unsigned tlp_is_4dw(const pcie_tlp_t *t)   { return (t->hdr[0] >> 29) & 1; }
static inline unsigned tlp_len_dw(const pcie_tlp_t *t)   { unsigned l = t->hdr[0] & 0x3ff; return l ? l : 1024; }
static inline unsigned tlp_ep(const pcie_tlp_t *t)       { return (t->hdr[0] >> 14) & 1; }
static inline unsigned tlp_req_id(const pcie_tlp_t *t)   { return t->hdr[1] >> 16; }
static inline unsigned tlp_tag(const pcie_tlp_t *t)      { return (t->hdr[1] >> 8) & 0xff; }
static inline unsigned tlp_fbe(const pcie_tlp_t *t)      { return t->hdr[1] & 0xf; }
static inline unsigned tlp_lbe(const pcie_tlp_t *t)      { return (t->hdr[1] >> 4) & 0xf; }
uint64_t tlp_addr(const pcie_tlp_t *t);                   /* memory requests */
/* Completion fields. */
static inline unsigned cpl_cpl_id(const pcie_tlp_t *t)   { return t->hdr[1] >> 16; }
static inline unsigned cpl_status(const pcie_tlp_t *t)   { return (t->hdr[1] >> 13) & 7; }
static inline unsigned cpl_bc(const pcie_tlp_t *t)       { unsigned b = t->hdr[1] & 0xfff; return b ? b : 4096; }
static inline unsigned cpl_req_id(const pcie_tlp_t *t)   { return t->hdr[2] >> 16; }
static inline unsigned cpl_tag(const pcie_tlp_t *t)      { return (t->hdr[2] >> 8) & 0xff; }
static inline unsigned cpl_lower_addr(const pcie_tlp_t *t){ return t->hdr[2] & 0x7f; }

/* Builders (payload copied when data != NULL; len_dw counts dwords; 1024 dwords encoded as 0). */
void tlp_build_mem(pcie_tlp_t *t, int write, uint64_t addr, unsigned len_dw, unsigned req_id,
    unsigned tag, unsigned fbe, unsigned lbe, const void *data, int force64);
void tlp_build_cfg(pcie_tlp_t *t, int write, int type1, unsigned bdf, unsigned reg,
    unsigned req_id, unsigned tag, unsigned fbe, uint32_t data);
void tlp_build_cpl(pcie_tlp_t *t, unsigned cpl_id, unsigned status, unsigned byte_count,
    unsigned req_id, unsigned tag, unsigned lower_addr, const void *data, unsigned len_dw);
/* Byte-enable helpers: number of enabled bytes of a request, and its first byte offset. */
unsigned tlp_req_bytes(const pcie_tlp_t *t);
unsigned tlp_first_byte(const pcie_tlp_t *t);
/* Wire size (bytes on the link, before the DLLP share): header + payload + 8 (framing/seq/LCRC). */
static inline unsigned tlp_wire_bytes(const pcie_tlp_t *t) { return t->nhdr * 4 + t->plen + 8; }
/* "MWr64 len=64 addr=0x..." for logs. */
const char *tlp_describe(const pcie_tlp_t *t, char *buf, size_t len);

/* Queue of TLPs (FIFO). */
typedef struct { pcie_tlp_t *head, *tail; unsigned n; uint64_t bytes; } tlpq_t;
void        tlpq_push(tlpq_t *q, pcie_tlp_t *t);
pcie_tlp_t *tlpq_pop(tlpq_t *q);
void        tlpq_drain(tlpq_t *q, pcie_tlp_pool_t *pool);

/* Link ----------------------------------------------------------------------------------------- */

/* LTSSM states (Xilinx UltraScale+ encoding subset). */
enum {
    LTSSM_DETECT_QUIET = 0x00, LTSSM_DETECT_ACTIVE = 0x01, LTSSM_POLLING_ACTIVE = 0x02,
    LTSSM_POLLING_CONFIG = 0x04, LTSSM_CONFIG_LW_START = 0x05, LTSSM_CONFIG_COMPLETE = 0x09,
    LTSSM_CONFIG_IDLE = 0x0A, LTSSM_RECOVERY_RCVRLOCK = 0x0B, LTSSM_RECOVERY_SPEED = 0x0C,
    LTSSM_RECOVERY_RCVRCFG = 0x0D, LTSSM_RECOVERY_IDLE = 0x0E, LTSSM_L0 = 0x10,
};

typedef struct pcie_link_cfg {
    int      gen, width;        /* 1-4, 1/2/4/8 */
    double   dllp_share;        /* fraction added to every TLP's wire time (0.02 = 2 %) */
    ps_t     latency_ps;        /* one-way latency (PHY + DLL, both ends) */
    ps_t     train_ps;          /* PERST# release -> L0 */
    ps_t     retrain_ps;        /* recovery duration for a retrain */
    unsigned up_credits;        /* TLPs the root complex buffers (device -> host) */
    unsigned dn_credits;        /* TLPs the device buffers (host -> device, not yet processed) */
    ps_t     dn_backlog_ps;     /* host TX buffer ahead of the wire (keeps the link saturated) */
} pcie_link_cfg_t;

typedef struct pcie_link {
    pcie_link_cfg_t cfg;
    pcie_tlp_pool_t pool;
    double   ps_per_byte;       /* wire time per byte incl. DLLP share */
    /* Device -> host (upstream). */
    tlpq_t   up_pending;        /* waiting for credits */
    tlpq_t   up_flight;         /* on the wire or buffered at the root complex, in arrival order */
    ps_t     up_free;           /* time the upstream wire is free */
    /* Host -> device (downstream). */
    tlpq_t   dn_flight;         /* on the wire or in the device's receive buffer */
    ps_t     dn_free;
    /* LTSSM */
    int      up;                /* DL_Active */
    int      perst;             /* 1 = PERST# asserted (held in reset) */
    uint8_t  ltssm, cur_gen, cur_width;
    ps_t     ltssm_next;        /* time of the next LTSSM step, PS_NEVER when stable */
    ps_t     down_until;        /* forced link down / retrain end */
    int      training_kind;     /* 0 training from reset, 1 retrain (no reset) */
    uint32_t link_downs, retrains;
    /* Stats per direction: TLPs, payload bytes, wire bytes. */
    uint64_t up_tlps, up_payload, up_wire, dn_tlps, dn_payload, dn_wire;
    uint64_t dropped;           /* TLPs lost on link down */
} pcie_link_t;

/* Lane rate in bytes/s for a generation (after 8b/10b or 128b/130b). */
double pcie_lane_rate(int gen);
/* Payload limit (bytes/s) of a saturated direction for TLPs of `payload` bytes and `hdr_bytes`. */
double pcie_payload_limit(int gen, int width, double dllp_share, unsigned payload, unsigned hdr_bytes);
void pcie_link_init(pcie_link_t *l, const pcie_link_cfg_t *cfg);
void pcie_link_destroy(pcie_link_t *l);
/* Device enqueues a TLP upstream at `now` (takes ownership). Dropped when the link is down. */
void pcie_link_up_send(pcie_link_t *l, pcie_tlp_t *t, ps_t now);
/* The host took delivery of the head of up_flight (frees a credit). */
pcie_tlp_t *pcie_link_up_take(pcie_link_t *l, ps_t now);
/* Backlog of the upstream direction in ps (wire busy + pending). */
ps_t pcie_link_up_backlog(const pcie_link_t *l, ps_t now);
/* Host sends a TLP downstream at `now` (takes ownership). */
void pcie_link_dn_send(pcie_link_t *l, pcie_tlp_t *t, ps_t now);
/* May the host start a new downstream TLP now (TX buffer space and device credits)? */
int  pcie_link_dn_ready(const pcie_link_t *l, ps_t now);
/* PERST# level from the host (1 = asserted). */
void pcie_link_set_perst(pcie_link_t *l, int asserted, ps_t now);
/* Force the link down for `dur` (then retrain from Detect), or retrain (recovery) for `dur`. */
void pcie_link_force_down(pcie_link_t *l, ps_t now, ps_t dur);
void pcie_link_retrain(pcie_link_t *l, ps_t now, ps_t dur);
/* Advance the LTSSM; returns 1 when the link has just reached L0 from down. */
int  pcie_link_step(pcie_link_t *l, ps_t now);

/* Configuration space -------------------------------------------------------------------------- */

typedef struct pcie_cfg {
    uint8_t  data[4096];
    uint8_t  wmask[4096];       /* writable bits */
    uint8_t  w1cmask[4096];     /* write-1-to-clear bits */
    uint64_t bar_mask[6];       /* size masks of implemented BARs (0 = none) */
    int      bar64[6];
    uint8_t  last_cap, next_free; /* last capability added, next free offset */
    uint8_t  pcie_cap, msix_cap, pm_cap;
} pcie_cfg_t;

typedef struct pcie_cfg_ids {
    uint16_t vendor, device, subsys_vendor, subsys;
    uint8_t  revision;
    uint32_t class_code;        /* 24 bits: base/sub/prog-if */
} pcie_cfg_ids_t;

void pcie_cfg_init(pcie_cfg_t *c, const pcie_cfg_ids_t *ids);
/* A memory BAR of `size` bytes (power of two >= 128); 64-bit takes two slots. */
void pcie_cfg_add_bar(pcie_cfg_t *c, int bar, uint64_t size, int is64, int prefetch);
uint8_t pcie_cfg_add_cap(pcie_cfg_t *c, uint8_t id, unsigned size);
void pcie_cfg_add_pm(pcie_cfg_t *c);
/* PCIe capability (endpoint): DevCap MPS supported, link max speed/width. */
void pcie_cfg_add_pcie(pcie_cfg_t *c, unsigned mps_bytes, int max_gen, int max_width);
void pcie_cfg_add_msix(pcie_cfg_t *c, unsigned vectors, int bar, uint32_t table_off, uint32_t pba_off);
uint32_t pcie_cfg_read32(const pcie_cfg_t *c, unsigned off);
/* Masked write (byte enables); returns the old dword. */
uint32_t pcie_cfg_write32(pcie_cfg_t *c, unsigned off, uint32_t val, unsigned be);
static inline uint16_t pcie_cfg_r16(const pcie_cfg_t *c, unsigned off) { return c->data[off] | (c->data[off+1] << 8); }
static inline void pcie_cfg_w16(pcie_cfg_t *c, unsigned off, uint16_t v) { c->data[off] = v; c->data[off+1] = v >> 8; }
static inline void pcie_cfg_w32(pcie_cfg_t *c, unsigned off, uint32_t v) { for (int i = 0; i < 4; i++) c->data[off+i] = v >> (8*i); }
uint64_t pcie_cfg_bar_addr(const pcie_cfg_t *c, int bar);
/* Which BAR decodes [addr, addr+len) (-1 none); *off = offset in the BAR. */
int pcie_cfg_bar_hit(const pcie_cfg_t *c, uint64_t addr, unsigned len, uint64_t *off);
/* Programmed values of the PCIe capability: MPS and MRRS in bytes (DevCtl), Command bits. */
unsigned pcie_cfg_mps(const pcie_cfg_t *c);
unsigned pcie_cfg_mrrs(const pcie_cfg_t *c);
static inline int pcie_cfg_mem_en(const pcie_cfg_t *c) { return c->data[4] & 2; }
static inline int pcie_cfg_bme(const pcie_cfg_t *c)    { return c->data[4] & 4; }
void pcie_cfg_set_link_status(pcie_cfg_t *c, int gen, int width);

/* Endpoint ------------------------------------------------------------------------------------- */

enum { PCIE_RESET_PERST = 1, PCIE_RESET_LINK_DOWN = 2, PCIE_RESET_FLR = 3 };
enum {
    PCIE_DMA_OK = 0, PCIE_DMA_UR = 1, PCIE_DMA_CA = 2, PCIE_DMA_TIMEOUT = 3, PCIE_DMA_POISONED = 4,
    PCIE_DMA_MALFORMED = 5, PCIE_DMA_NO_BME = 6, PCIE_DMA_LINK_DOWN = 7, PCIE_DMA_CANCELLED = 8,
};
const char *pcie_dma_status_name(int st);

typedef struct pcie_ep pcie_ep_t;
typedef void (*pcie_dma_cb)(void *dev, uint64_t cookie, int status);

typedef struct pcie_dev_ops {
    /* BAR access (MEM enabled, inside the BAR). Return 0, or -1 to answer UR. */
    int  (*bar_read)(void *dev, int bar, uint64_t off, uint8_t *buf, unsigned len);
    void (*bar_write)(void *dev, int bar, uint64_t off, const uint8_t *buf, unsigned len);
    /* A configuration write happened (old/new dword at `off`). Optional. */
    void (*cfg_written)(void *dev, unsigned off, uint32_t old, uint32_t val);
    /* Function reset (PERST#, link down = DL_Down, FLR). The ep already reset its own state. */
    void (*reset)(void *dev, int kind);
    /* Do due work at `now`; return the next time the device needs to run (PS_NEVER). */
    ps_t (*tick)(void *dev, ps_t now);
    /* A TLP the ep does not handle itself (messages, bad types). Optional. */
    void (*unhandled)(void *dev, pcie_tlp_t *t);
    /* Optional: the device answers Type-0 configuration requests to its function itself (a bridge
     * to another implementation of the function). `reg` is the dword offset, `be` the first DW
     * byte enables; a read returns the dword in *val, a write passes it in *val. Return CPL_SC or
     * CPL_UR/CPL_CA. The ep still captures the bus/device number and answers CRS; the device keeps
     * ep->cs in step for the fields the ep itself uses (Command MEM/BME, BARs, DevCtl MPS/MRRS). */
    int  (*cfg_access)(void *dev, int write, unsigned reg, unsigned be, uint32_t *val);
} pcie_dev_ops_t;

typedef struct pcie_dma_job {
    struct pcie_dma_job *next;
    uint64_t addr, cookie;
    uint32_t len, issued, done;
    uint8_t *dst;
    int      status, outstanding;
    int      first;             /* queued ahead of the data reads (pcie_dma_read_first) */
    pcie_dma_cb cb;
    struct pcie_dma_job *all_next, *all_prev;
} pcie_dma_job_t;

typedef struct pcie_tag {
    pcie_dma_job_t *job;        /* NULL = free */
    uint32_t off, len, got;     /* job offset, requested bytes, received bytes */
    uint64_t addr;
    ps_t     deadline;
} pcie_tag_t;

typedef struct pcie_ep_cfg {
    pcie_cfg_ids_t ids;
    unsigned max_tags;          /* outstanding MRd (1-256) */
    ps_t     cpl_timeout_ps;    /* completion timeout */
    ps_t     crs_ps;            /* CRS answers to config reads for this long after link-up */
    ps_t     tx_backlog_ps;     /* the DMA engine issues MRds while the upstream backlog is below */
} pcie_ep_cfg_t;

struct pcie_ep {
    pcie_ep_cfg_t cfg;
    pcie_link_t link;
    pcie_cfg_t  cs, cs_reset;
    const pcie_dev_ops_t *ops;
    void       *dev;
    uint16_t    bdf;            /* captured from config requests */
    ps_t        now, dev_wake, link_up_time;
    int         dev_kick;
    /* DMA engine */
    pcie_dma_job_t *rd_head, *rd_tail, *all_jobs;
    pcie_tag_t  tags[256];
    unsigned    tags_busy, next_tag;
    ps_t        next_timeout;
    /* Hooks for fault injection on host requests (return CPL_* status to answer with, or -1). */
    int (*host_req_hook)(void *dev, pcie_tlp_t *t);
    /* Stats */
    uint64_t ur_sent, ca_sent, crs_sent, malformed_rx, unexpected_cpl, dma_refused, cpl_timeouts;
    uint64_t mrd_sent, mwr_sent, cpld_rx;
    unsigned max_mrd_len, max_mwr_len;  /* largest request sizes issued (bytes) */
};

void pcie_ep_init(pcie_ep_t *ep, const pcie_ep_cfg_t *cfg, const pcie_link_cfg_t *lcfg,
    const pcie_dev_ops_t *ops, void *dev);
void pcie_ep_destroy(pcie_ep_t *ep);
/* Call after the device added its BARs and capabilities: snapshot of the reset values. */
void pcie_ep_config_done(pcie_ep_t *ep);
/* PERST# from the host (function reset on assertion, training on release). */
void pcie_ep_set_perst(pcie_ep_t *ep, int asserted, ps_t now);
/* Link down for `dur` (DL_Down: function reset), then retraining; retrain = recovery only. */
void pcie_ep_link_down(pcie_ep_t *ep, ps_t now, ps_t dur);
void pcie_ep_retrain(pcie_ep_t *ep, ps_t now, ps_t dur);
/* Run everything due at `now`; returns the next time anything (device, link, timeouts) is due. */
ps_t pcie_ep_service(pcie_ep_t *ep, ps_t now);
/* Ask for the device's tick at the next service (after it changed state from a callback). */
static inline void pcie_ep_kick(pcie_ep_t *ep) { ep->dev_kick = 1; }
/* DMA: read `len` bytes of host memory at `addr` into dst (dword-aligned addr/len). The callback
 * runs once with the final status. Returns 0, or PCIE_DMA_NO_BME (nothing is sent). */
int pcie_dma_read(pcie_ep_t *ep, uint64_t addr, uint32_t len, uint8_t *dst, pcie_dma_cb cb, uint64_t cookie);
/* The same for a device's own control reads (command and PRP list fetches): queued after the
 * control reads already waiting but ahead of every data read not yet begun, the way a controller's
 * command fetch does not wait behind the data of the commands it already holds. */
int pcie_dma_read_first(pcie_ep_t *ep, uint64_t addr, uint32_t len, uint8_t *dst, pcie_dma_cb cb, uint64_t cookie);
/* Posted write: MWr split at MPS and 4 KiB. flags: PCIE_DMAW_POISON sets EP on its first TLP. */
#define PCIE_DMAW_POISON 1
int pcie_dma_write(pcie_ep_t *ep, uint64_t addr, const uint8_t *src, uint32_t len, unsigned flags);
/* Cancel every DMA read of this cookie (no callback). */
void pcie_dma_cancel(pcie_ep_t *ep, uint64_t cookie);
/* Cancel every DMA read whose (cookie & mask) == key. */
void pcie_dma_cancel_mask(pcie_ep_t *ep, uint64_t key, uint64_t mask);
/* Send a raw TLP upstream (fault injection: malformed TLPs). */
void pcie_ep_send_raw(pcie_ep_t *ep, pcie_tlp_t *t);
static inline ps_t pcie_ep_backlog(const pcie_ep_t *ep) { return pcie_link_up_backlog(&ep->link, ep->now); }
/* Upstream space for more posted data (the device paces its MWr with this). */
static inline int pcie_ep_tx_room(const pcie_ep_t *ep) { return pcie_ep_backlog(ep) < ep->cfg.tx_backlog_ps; }
/* Time when the backlog will be below the threshold again. */
ps_t pcie_ep_tx_room_at(const pcie_ep_t *ep);
uint16_t pcie_ep_id(const pcie_ep_t *ep);

/* Host (root-complex) model for harnesses ------------------------------------------------------ */

typedef struct pcie_trace_rec {
    uint64_t t_ps;
    uint64_t addr;
    uint32_t hdr0, hdr1, hdr2;
    uint32_t dir;               /* 0 = host -> device, 1 = device -> host */
    uint32_t plen;
} pcie_trace_rec_t;

typedef struct pcie_host_region { uint64_t base, size; uint8_t *mem; } pcie_host_region_t;

typedef struct pcie_host_fail {
    uint64_t lo, hi; int status; int count; int poison; int drop;
} pcie_host_fail_t;

typedef struct pcie_host {
    pcie_ep_t *ep;
    pcie_host_region_t regions[16];
    int      nregions;
    unsigned rcb, mps;          /* completion splitting: at RCB boundaries, at most MPS */
    ps_t     cpl_latency_ps;    /* memory read latency */
    pcie_host_fail_t fails[8];
    int      nfails;
    /* Requests of the host to the device (config/MMIO) awaiting completion. */
    struct { int busy, done, status; uint32_t data[32]; unsigned bytes; } req[32];
    unsigned next_tag;
    tlpq_t   cpl_wait;          /* completions waiting for memory latency */
    /* trace */
    pcie_trace_rec_t *trace;
    size_t   trace_cap, trace_n;
    int      trace_on;
    /* stats */
    uint64_t rogue_writes, rogue_reads, rogue_first_addr, mwr_bytes, mrd_bytes, mwr_tlps, mrd_tlps;
    uint64_t poisoned_rx, malformed_rx, mps_violations, mrrs_violations, boundary_violations;
    uint64_t msgs_rx;
} pcie_host_t;

void pcie_host_init(pcie_host_t *h, pcie_ep_t *ep);
void pcie_host_destroy(pcie_host_t *h);
int  pcie_host_map(pcie_host_t *h, uint64_t base, uint64_t size);
uint8_t *pcie_host_ptr(pcie_host_t *h, uint64_t addr, uint64_t len);
/* Advance the whole system (host + link + device) to `t`. */
void pcie_host_run_until(pcie_host_t *h, ps_t t);
/* Advance until `*flag` becomes nonzero or `limit` is reached; returns 1 if the flag was seen. */
int  pcie_host_run_flag(pcie_host_t *h, volatile int *flag, ps_t limit);
/* Advance until pred(arg) returns nonzero or `limit`; returns the last pred value. */
int  pcie_host_run_pred(pcie_host_t *h, int (*pred)(void *), void *arg, ps_t limit);
/* Config / memory requests from the host (blocking in modeled time). Return CPL status or -1 on
 * timeout; data in *val. */
int  pcie_host_cfg(pcie_host_t *h, int write, unsigned reg, uint32_t *val, unsigned be, ps_t timeout);
int  pcie_host_mmio(pcie_host_t *h, int write, uint64_t addr, void *buf, unsigned len, ps_t timeout);
/* Send an arbitrary TLP to the device now. */
void pcie_host_send(pcie_host_t *h, pcie_tlp_t *t);
void pcie_host_deliver(pcie_host_t *h, pcie_tlp_t *t, ps_t now);

#endif
