/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * The bridge as a PCIe function of the common layer (pcie_dev_ops_t):
 *
 *  - configuration requests go to QEMU's configuration space (the BAR registers are the host's
 *    view, kept here: QEMU's BAR0 sits at QB_QEMU_BAR_ADDR; the PCIe capability is presented as an
 *    endpoint with the link of the link model);
 *  - BAR reads go to QEMU at once; BAR writes are forwarded in order, an SQ tail doorbell only
 *    after the memory QEMU will read for the new commands is in the shared memory: the SQ entries
 *    are fetched with MRd through the root port's completer, each command is parsed (opcode, PRP1,
 *    PRP2, PRP lists incl. chained lists, metadata pointer, DSM/Copy ranges, feature data) and its
 *    data-out buffers and PRP lists are fetched the same way; data-in buffers are cleared;
 *  - QEMU's completion queues in the shared memory are polled; for each new CQE the data-in
 *    buffers of the command are written back with MWr (posted, in order), then the CQE;
 *  - a fetch the completer refuses (UR/CA/timeout) fails the command with Data Transfer Error: the
 *    command QEMU sees is replaced by an invalid opcode (QEMU touches no memory for it) and the
 *    status of its CQE is rewritten. A failed SQ entry fetch sets CSTS.CFS (controller fatal).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/stat.h>
#include "qemu_nvme.h"

enum { JOB_SQE = 1, JOB_LIST = 2, JOB_DATA = 3 };

#define ST(sct, sc, dnr) ((uint16_t)(((dnr) << 14) | ((sct) << 8) | (sc)))
#define ST_DTE           ST(0, 0x04, 1)      /* Data Transfer Error */
#define ST_INVALID_FIELD ST(0, 0x02, 1)
#define NEUTER_OPCODE    0xff                /* an opcode QEMU rejects without touching memory */

static void msg(qb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(qb_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[qemu_nvme%d] ", b->c.index);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static inline uint8_t *shm(qb_t *b, uint64_t a) { return b->q.mem + a; }
static inline int in_mem(const qb_t *b, uint64_t a, uint64_t len)
{
    return b->q.mem && a <= b->c.mem_top && len <= b->c.mem_top - a;
}

static void set_fatal(qb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- jobs (DMA reads of the bridge) --------------------------------------------------------------- */

static void job_unlink(qb_t *b, qb_job_t *j)
{
    if (j->prev) j->prev->next = j->next; else b->jobs = j->next;
    if (j->next) j->next->prev = j->prev;
    b->njobs--;
}

static void dma_cb(void *dev, uint64_t cookie, int status);

/* Read [addr, addr+len) of host memory into the shared memory (dword-aligned outward). */
static int job_read(qb_t *b, int kind, qb_op_t *op, qb_cmd_t *c, uint64_t addr, uint64_t len)
{
    uint64_t a0 = addr & ~3ull, a1 = (addr + len + 3) & ~3ull;
    if (!in_mem(b, a0, a1 - a0) || a1 - a0 > 0xffffffffull) return PCIE_DMA_UR;
    qb_job_t *j = calloc(1, sizeof(*j));
    if (!j) return PCIE_DMA_UR;
    j->kind = kind; j->op = op; j->cmd = c; j->addr = a0; j->len = (uint32_t)(a1 - a0);
    j->next = b->jobs;
    if (b->jobs) b->jobs->prev = j;
    b->jobs = j;
    b->njobs++;
    if (kind == JOB_SQE) op->sqe_pending++; else c->pending++;
    int st = pcie_dma_read(&b->ep, a0, j->len, shm(b, a0), dma_cb, (uint64_t)(uintptr_t)j);
    if (st) {
        if (kind == JOB_SQE) op->sqe_pending--; else c->pending--;
        job_unlink(b, j);
        free(j);
        return st;
    }
    b->st.fetch_jobs++;
    b->st.fetch_bytes += j->len;
    if (kind == JOB_SQE) b->st.sqe_bytes += j->len;
    if (kind == JOB_LIST) b->st.list_bytes += j->len;
    return 0;
}

/* Forget every job (the ep dropped or cancels their DMA). */
static void drop_jobs(qb_t *b, int cancel)
{
    if (cancel) pcie_dma_cancel_mask(&b->ep, 0, 0);
    while (b->jobs) {
        qb_job_t *j = b->jobs;
        job_unlink(b, j);
        free(j);
    }
}

/* --- commands ------------------------------------------------------------------------------------------ */

static unsigned hkey(uint16_t sqid, uint16_t cid) { return ((unsigned)sqid * 40503u + cid) & 4095u; }

static void cmd_free(qb_cmd_t *c) { if (c) { free(c->segs); free(c); } }

static void hash_put(qb_t *b, qb_cmd_t *c)
{
    unsigned k = hkey(c->sqid, c->cid);
    c->hnext = b->hash[k];
    b->hash[k] = c;
}

static qb_cmd_t *hash_take(qb_t *b, uint16_t sqid, uint16_t cid)
{
    qb_cmd_t **pp = &b->hash[hkey(sqid, cid)];
    /* the oldest with this (sqid, cid): the chain is newest first */
    qb_cmd_t **found = NULL;
    for (; *pp; pp = &(*pp)->hnext)
        if ((*pp)->sqid == sqid && (*pp)->cid == cid) found = pp;
    if (!found) return NULL;
    qb_cmd_t *c = *found;
    *found = c->hnext;
    return c;
}

static void timed_unlink(qb_t *b, qb_cmd_t *c)
{
    if (!c->timed) return;
    if (c->iprev) c->iprev->inext = c->inext; else b->timed_head = c->inext;
    if (c->inext) c->inext->iprev = c->iprev; else b->timed_tail = c->iprev;
    c->timed = 0;
    b->ntimed--;
}

static void drop_inflight(qb_t *b)
{
    for (unsigned k = 0; k < 4096; k++) {
        while (b->hash[k]) {
            qb_cmd_t *c = b->hash[k];
            b->hash[k] = c->hnext;
            cmd_free(c);
        }
    }
    b->timed_head = b->timed_tail = NULL;
    b->ntimed = 0;
    b->inflight = 0;
}

static void drop_wb(qb_t *b)
{
    while (b->wb_head) {
        qb_wb_t *w = b->wb_head;
        b->wb_head = w->next;
        free(w);
    }
    b->wb_tail = NULL;
}

static void op_free_cmds(qb_op_t *op)
{
    while (op->cmds) {
        qb_cmd_t *c = op->cmds;
        op->cmds = c->bnext;
        cmd_free(c);
    }
    op->cmds_tail = NULL;
}

/* Controller state gone (controller reset, function reset, fatal): nothing pending survives. */
static void drop_work(qb_t *b, int cancel_dma)
{
    drop_jobs(b, cancel_dma);
    for (qb_op_t *op = b->ops_head; op; op = op->next) {
        op_free_cmds(op);
        if (op->is_sqdb) op->dropped = 1;   /* QEMU must not read entries the bridge did not fetch */
        op->is_sqdb = 0;
        op->sqe_pending = 0;
        op->waiting = 0;
    }
    drop_inflight(b);
    drop_wb(b);
    for (unsigned q = 0; q < b->nq; q++) {
        memset(&b->sq[q], 0, sizeof(b->sq[q]));
        memset(&b->cq[q], 0, sizeof(b->cq[q]));
    }
}

static void set_fatal(qb_t *b, const char *fmt, ...)
{
    if (b->fatal) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->fatal_why, sizeof(b->fatal_why), fmt, ap);
    va_end(ap);
    b->fatal = 1;
    b->st.cfs_events++;
    msg(b, "ERROR: %s: the controller is now fatal (CSTS.CFS=1) until the host resets it", b->fatal_why);
    drop_work(b, 1);
}

static void check_dead(qb_t *b)
{
    if (b->q.dead && !b->fatal) {
        char tail[1024];
        qbp_alive(&b->q);
        qbp_log_tail(&b->q, tail, sizeof(tail), 0);
        set_fatal(b, "%s", b->q.why);
        msg(b, "QEMU log %s ends with:\n%s", b->q.log_path, tail[0] ? tail : "(empty)");
    }
}

/* --- write-back ---------------------------------------------------------------------------------------- */

static qb_wb_t *wb_add(qb_t *b, uint64_t addr, uint32_t len, const uint8_t *src)
{
    qb_wb_t *w = calloc(1, sizeof(*w));
    if (!w) return NULL;
    w->addr = addr; w->len = len; w->src = src;
    if (b->wb_tail) b->wb_tail->next = w; else b->wb_head = w;
    b->wb_tail = w;
    return w;
}

/* Posted writes while the link has room (MWr split at MPS/4 KiB by the common layer). */
static int drain_wb(qb_t *b)
{
    int n = 0;
    while (b->wb_head && pcie_ep_tx_room(&b->ep)) {
        qb_wb_t *w = b->wb_head;
        uint64_t a = w->addr + w->pos;
        uint32_t chunk = w->len - w->pos, to4k = 4096 - (uint32_t)(a & 0xfff);
        if (chunk > to4k) chunk = to4k;
        const uint8_t *src = w->src ? w->src + w->pos : w->inline_data + w->pos;
        if (pcie_dma_write(&b->ep, a, src, chunk, 0)) {
            /* no bus mastering / link down: the data cannot reach the host */
            b->st.dma_failures++;
            drop_wb(b);
            return n;
        }
        b->st.wb_bytes += chunk;
        w->pos += chunk;
        n++;
        if (w->pos == w->len) {
            b->wb_head = w->next;
            if (!b->wb_head) b->wb_tail = NULL;
            free(w);
        }
    }
    return n;
}

/* --- command parsing and fetch planning --------------------------------------------------------------- */

static void cmd_ready_check(qb_t *b, qb_cmd_t *c);
static void drain_ops(qb_t *b);

static void warn_opcode(qb_t *b, int admin, unsigned opc, const char *what)
{
    unsigned bit = (admin ? 256u : 0u) + opc;
    if (b->warned_opc[bit / 32 % 8] & (1u << (bit % 32))) return;
    b->warned_opc[bit / 32 % 8] |= 1u << (bit % 32);
    msg(b, "note: %s opcode 0x%02x: %s", admin ? "admin" : "I/O", opc, what);
}

static void seg_add(qb_cmd_t *c, uint64_t addr, uint32_t len)
{
    if (c->nsegs == c->capsegs) {
        unsigned cap = c->capsegs ? c->capsegs * 2 : 8;
        qb_seg_t *n = realloc(c->segs, cap * sizeof(*n));
        if (!n) return;
        c->segs = n;
        c->capsegs = cap;
    }
    c->segs[c->nsegs++] = (qb_seg_t){ addr, len };
}

static void fail_cmd(qb_t *b, qb_cmd_t *c, int dma_status)
{
    (void)b;
    if (!c->dma_status) c->dma_status = dma_status;
}

/* One data segment of the command: data-out is fetched, data-in cleared and remembered. */
static void data_seg(qb_t *b, qb_cmd_t *c, uint64_t addr, uint64_t len, int in)
{
    if (!len) return;
    if (!in_mem(b, addr, len)) {
        b->st.no_mirror++;
        msg(b, "warning: SQ %u CID %u: buffer 0x%llx+%llu is outside the mirrored host memory "
            "(mem_top 0x%llx): failed with Data Transfer Error", c->sqid, c->cid,
            (unsigned long long)addr, (unsigned long long)len, (unsigned long long)b->c.mem_top);
        fail_cmd(b, c, PCIE_DMA_UR);
        return;
    }
    if (!in) {
        int st = job_read(b, JOB_DATA, NULL, c, addr, len);
        if (st) fail_cmd(b, c, st);
        else c->fetched_bytes += len;
        return;
    }
    memset(shm(b, addr), 0, len);
    b->st.zeroed_bytes += len;
    /* partial dwords at the ends are written back whole: fetch the host's bytes of those dwords */
    if (addr & 3) {
        int st = job_read(b, JOB_DATA, NULL, c, addr & ~3ull, 4);
        if (st) fail_cmd(b, c, st);
    }
    if ((addr + len) & 3 && ((addr + len) & ~3ull) != (addr & ~3ull)) {
        int st = job_read(b, JOB_DATA, NULL, c, (addr + len) & ~3ull, 4);
        if (st) fail_cmd(b, c, st);
    }
    uint64_t a0 = addr & ~3ull, a1 = (addr + len + 3) & ~3ull;
    seg_add(c, a0, (uint32_t)(a1 - a0));
}

static void list_fetch(qb_t *b, qb_cmd_t *c, uint64_t list);

/* PRP1/PRP2 for `len` bytes (NVMe base specification, PRP entries and PRP lists). */
static void prp_start(qb_t *b, qb_cmd_t *c, uint64_t prp1, uint64_t prp2, uint64_t len, int in)
{
    uint64_t P = 1ull << b->page_bits;
    c->data_in = in;
    uint64_t first = P - (prp1 & (P - 1));
    if (first > len) first = len;
    data_seg(b, c, prp1, first, in);
    uint64_t rem = len - first;
    if (!rem) return;
    if (rem <= P) {                        /* PRP2 is the second data page */
        if (prp2 & (P - 1)) return;        /* PRP Offset Invalid: no transfer */
        data_seg(b, c, prp2, rem, in);
        return;
    }
    /* a PRP list pointer should be qword aligned; QEMU reads the list wherever it points */
    c->prp_rem = rem;
    list_fetch(b, c, prp2);
}

static void list_fetch(qb_t *b, qb_cmd_t *c, uint64_t list)
{
    uint64_t P = 1ull << b->page_bits;
    uint64_t avail = (P - (list & (P - 1))) / 8, need = (c->prp_rem + P - 1) / P;
    c->list_addr = list;
    c->list_chain = need > avail;
    c->list_n = (unsigned)(c->list_chain ? avail : need);
    c->walking = 1;
    int st = job_read(b, JOB_LIST, NULL, c, list, (uint64_t)c->list_n * 8);
    if (st) { c->walking = 0; fail_cmd(b, c, st); }
}

/* The list entries are in the shared memory: data segments, maybe the next list. */
static void list_done(qb_t *b, qb_cmd_t *c)
{
    uint64_t P = 1ull << b->page_bits;
    unsigned nd = c->list_chain ? c->list_n - 1 : c->list_n;
    c->walking = 0;
    for (unsigned i = 0; i < nd && c->prp_rem; i++) {
        uint64_t e;
        memcpy(&e, shm(b, c->list_addr + 8ull * i), 8);
        if (e & (P - 1)) return;           /* PRP Offset Invalid: the controller transfers nothing */
        uint64_t n = c->prp_rem < P ? c->prp_rem : P;
        data_seg(b, c, e, n, c->data_in);
        c->prp_rem -= n;
    }
    if (c->list_chain && c->prp_rem) {
        uint64_t next;
        memcpy(&next, shm(b, c->list_addr + 8ull * (c->list_n - 1)), 8);
        if (next & 7) return;
        list_fetch(b, c, next);
    }
}

static unsigned feat_len(unsigned fid)
{
    switch (fid) {
    case 0x0e: return 8;       /* Timestamp */
    case 0x16: return 512;     /* Host Behavior Support */
    case 0x0c: return 256;     /* Autonomous Power State Transition */
    default: return 0;
    }
}

static void plan_cmd(qb_t *b, qb_cmd_t *c)
{
    const uint32_t *d = c->sqe;
    unsigned opc = c->opc, psdt = (d[0] >> 14) & 3;
    uint64_t prp1 = d[6] | ((uint64_t)d[7] << 32), prp2 = d[8] | ((uint64_t)d[9] << 32);
    uint64_t mptr = d[4] | ((uint64_t)d[5] << 32);
    uint64_t len = 0, mlen = 0;
    int in = 0;
    b->st.cmds++;
    if (c->admin) {
        switch (opc) {
        case 0x02: len = ((((uint64_t)(d[11] & 0xffff)) << 16 | (d[10] >> 16)) + 1) * 4; in = 1; break;
        case 0x06: len = 4096; in = 1; break;
        case 0x09: len = feat_len(d[10] & 0xff); in = 0; break;
        case 0x0a: len = ((d[10] >> 8) & 7) == 3 ? 0 : feat_len(d[10] & 0xff); in = 1; break;
        case 0x15: len = 4096; in = 0; break;
        case 0x7c:                             /* Doorbell Buffer Config: shadow doorbells in host memory */
            warn_opcode(b, 1, opc, "Doorbell Buffer Config is not mirrored: QEMU sees an invalid opcode");
            c->neuter = 1;
            return;
        case 0x00: case 0x01: case 0x04: case 0x05: case 0x08: case 0x0c: case 0x80:
            return;
        default:
            warn_opcode(b, 1, opc, "not known to the bridge, forwarded without mirroring any data");
            return;
        }
    } else {
        switch (opc) {
        case 0x01: case 0x02: case 0x05: {     /* Write, Read, Compare */
            uint32_t nsid = d[1];
            if (nsid == 0 || nsid > QB_MAX_NS || !b->ns[nsid].known) return;   /* Invalid Namespace */
            qb_ns_t *ns = &b->ns[nsid];
            unsigned f = (ns->flbas & 0xf) | (ns->nlbaf > 16 ? ((ns->flbas >> 5) & 3) << 4 : 0);
            uint64_t slba = d[10] | ((uint64_t)d[11] << 32), nlb = (d[12] & 0xffff) + 1ull;
            if (slba + nlb > ns->nsze || slba + nlb < slba) return;           /* LBA Out of Range */
            unsigned ms = ns->ms[f], pract = (d[12] >> 29) & 1;
            int md = ms && !((ns->dps & 7) && pract && (ms == 8 || ms == 16));
            int ext = (ns->flbas >> 4) & 1;
            len = nlb * ((1ull << ns->lbads[f]) + (ext && md ? ms : 0));
            if (md && !ext) mlen = nlb * ms;
            in = opc == 0x02;
            break;
        }
        case 0x09: len = ((d[10] & 0xff) + 1ull) * 16; in = 0; break;                /* DSM ranges */
        case 0x19: len = ((d[12] & 0xff) + 1ull) * (((d[12] >> 8) & 0xf) == 1 ? 40 : 32); in = 0; break;
        case 0x00: case 0x04: case 0x08: case 0x0c: return;
        default:
            warn_opcode(b, 0, opc, "not known to the bridge, forwarded without mirroring any data");
            return;
        }
    }
    if (!len && !mlen) return;
    if (psdt) {
        warn_opcode(b, c->admin, opc, "SGL data pointers are not mirrored: failed with Invalid Field");
        c->neuter = 1;
        c->ovr = ST_INVALID_FIELD;
        return;
    }
    uint64_t max = b->mdts ? (4096ull << b->mdts) : (1ull << 30);
    if (len > max || mlen > max) {             /* QEMU rejects it (MDTS) without a transfer */
        if (!b->mdts) warn_opcode(b, c->admin, opc, "a transfer above 1 GiB is not mirrored");
        return;
    }
    if (len) prp_start(b, c, prp1, prp2, len, in);
    if (mlen) data_seg(b, c, mptr, mlen, in);
}

/* Called when a command might have everything it needs in the shared memory. */
static void cmd_ready_check(qb_t *b, qb_cmd_t *c)
{
    if (c->ready || c->pending || c->walking) return;
    c->ready = 1;
    if (c->dma_status) {
        b->st.dma_failures++;
        msg(b, "SQ %u CID %u opcode 0x%02x: host memory read failed (%s): Data Transfer Error",
            c->sqid, c->cid, c->opc, pcie_dma_status_name(c->dma_status));
        c->neuter = 1;
        c->ovr = ST_DTE;
    }
    qb_op_t *op = c->batch;
    if (--op->waiting == 0) drain_ops(b);
}

static void parse_batch(qb_t *b, qb_op_t *op)
{
    qb_sq_t *sq = &b->sq[op->qid];
    op->waiting = 1;                           /* guard while the commands are planned */
    for (uint32_t s = op->old_tail; s != op->new_tail; s = (s + 1) % sq->size) {
        qb_cmd_t *c = calloc(1, sizeof(*c));
        if (!c) break;
        memcpy(c->sqe, shm(b, sq->base + 64ull * s), 64);
        c->sqid = op->qid;
        c->cid = (uint16_t)(c->sqe[0] >> 16);
        c->opc = (uint8_t)c->sqe[0];
        c->admin = op->qid == 0;
        c->slot = s;
        c->batch = op;
        if (op->cmds_tail) op->cmds_tail->bnext = c; else op->cmds = c;
        op->cmds_tail = c;
        op->waiting++;
        plan_cmd(b, c);
        cmd_ready_check(b, c);
    }
    if (--op->waiting == 0) drain_ops(b);
}

static void dma_cb(void *dev, uint64_t cookie, int status)
{
    qb_t *b = dev;
    qb_job_t *j = (qb_job_t *)(uintptr_t)cookie;
    job_unlink(b, j);
    int kind = j->kind;
    qb_op_t *op = j->op;
    qb_cmd_t *c = j->cmd;
    free(j);
    if (kind == JOB_SQE) {
        if (status && !op->sqe_status) op->sqe_status = status;
        if (--op->sqe_pending == 0) {
            if (op->sqe_status) drain_ops(b);
            else parse_batch(b, op);
        }
        return;
    }
    c->pending--;
    if (status) {
        fail_cmd(b, c, status);
        if (kind == JOB_LIST) c->walking = 0;
    } else if (kind == JOB_LIST)
        list_done(b, c);
    cmd_ready_check(b, c);
}

/* --- BAR writes, in order ------------------------------------------------------------------------------ */

static uint32_t reg_read32(qb_t *b, unsigned off)
{
    uint64_t v = 0;
    if (qbp_mem_read(&b->q, QB_QEMU_BAR_ADDR + off, 4, &v)) check_dead(b);
    return (uint32_t)v;
}

static uint64_t reg_read64(qb_t *b, unsigned off)
{
    uint64_t v = 0;
    if (qbp_mem_read(&b->q, QB_QEMU_BAR_ADDR + off, 8, &v)) check_dead(b);
    return v;
}

static void exec_op(qb_t *b, qb_op_t *op)
{
    if (b->q.dead) return;
    if (op->is_sqdb && !b->fatal) {
        qb_sq_t *sq = &b->sq[op->qid];
        if (op->sqe_status) {
            set_fatal(b, "SQ %u: reading submission queue entries %u..%u at 0x%llx failed (%s)",
                op->qid, op->old_tail, op->new_tail, (unsigned long long)sq->base,
                pcie_dma_status_name(op->sqe_status));
            return;
        }
        qb_cq_t *cq = &b->cq[sq->cqid];
        uint64_t now = qb_wall_ns();
        while (op->cmds) {
            qb_cmd_t *c = op->cmds;
            op->cmds = c->bnext;
            c->bnext = NULL;
            if (c->neuter) {
                shm(b, sq->base + 64ull * c->slot)[0] = NEUTER_OPCODE;
                b->st.neutered++;
            }
            c->forwarded = 1;
            c->t_submit_ns = now;
            hash_put(b, c);
            b->inflight++;
            cq->outstanding++;
            if (!(c->admin && c->opc == 0x0c)) {         /* an AER may wait forever */
                c->timed = 1;
                c->iprev = b->timed_tail;
                if (b->timed_tail) b->timed_tail->inext = c; else b->timed_head = c;
                b->timed_tail = c;
                b->ntimed++;
            }
        }
        op->cmds_tail = NULL;
        b->st.doorbells++;
    }
    if (op->dropped || (b->fatal && op->off >= 0x1000 && !(((op->off - 0x1000) / (4u << b->dstrd)) & 1)))
        return;                                           /* SQ doorbells of a dead controller */
    int cc = op->off < 0x18 && op->off + op->len > 0x14;
    uint32_t old_cc = cc ? reg_read32(b, 0x14) : 0;
    if (qbp_mem_write(&b->q, QB_QEMU_BAR_ADDR + op->off, op->val, op->len)) { check_dead(b); return; }
    b->st.bar_writes++;
    if (op->off >= 0x1000 && op->len == 4 && !((op->off - 0x1000) % (4u << b->dstrd))) {
        unsigned idx = (unsigned)((op->off - 0x1000) / (4u << b->dstrd));
        if ((idx & 1) && idx / 2 < b->nq) b->cq[idx / 2].head = (uint32_t)op->val;   /* CQ head */
    }
    if (!cc) return;
    uint32_t new_cc = reg_read32(b, 0x14);
    if (!(old_cc & 1) && (new_cc & 1)) {
        /* enable: the admin queues QEMU will use */
        uint32_t aqa = reg_read32(b, 0x24);
        uint64_t asq = reg_read64(b, 0x28), acq = reg_read64(b, 0x30);
        b->page_bits = 12 + ((new_cc >> 7) & 0xf);
        b->sq[0] = (qb_sq_t){ 1, asq, (aqa & 0xfff) + 1, 0, 0 };
        b->cq[0] = (qb_cq_t){ 1, acq, ((aqa >> 16) & 0xfff) + 1, 0, 1, 0 };
        if (in_mem(b, acq, 16ull * b->cq[0].size)) memset(shm(b, acq), 0, 16ull * b->cq[0].size);
    } else if ((old_cc & 1) && !(new_cc & 1)) {
        /* controller reset: everything in flight is gone */
        drop_work(b, 1);
        b->fatal = 0;
    }
}

static void drain_ops(qb_t *b)
{
    while (b->ops_head) {
        qb_op_t *op = b->ops_head;
        if (op->sqe_pending || op->waiting) return;
        b->ops_head = op->next;
        if (!b->ops_head) b->ops_tail = NULL;
        b->nops--;
        exec_op(b, op);
        op_free_cmds(op);
        free(op);
    }
}

static void enqueue_write(qb_t *b, uint64_t off, uint64_t val, unsigned len)
{
    qb_op_t *op = calloc(1, sizeof(*op));
    if (!op) return;
    op->off = off; op->val = val; op->len = len;
    unsigned stride = 4u << b->dstrd;
    if (off >= 0x1000 && len == 4 && !((off - 0x1000) % stride) && !b->fatal) {
        unsigned idx = (unsigned)((off - 0x1000) / stride), qid = idx / 2;
        if (!(idx & 1) && qid < b->nq && b->sq[qid].valid && val < b->sq[qid].size &&
            val != b->sq[qid].tail && b->cq[b->sq[qid].cqid].valid) {
            qb_sq_t *sq = &b->sq[qid];
            op->is_sqdb = 1;
            op->qid = (uint16_t)qid;
            op->old_tail = sq->tail;
            op->new_tail = (uint32_t)val;
            sq->tail = (uint32_t)val;
            /* fetch the new entries (one read, or two when the queue wraps) */
            uint32_t a = op->old_tail, e = op->new_tail;
            int st = 0;
            if (e > a) st = job_read(b, JOB_SQE, op, NULL, sq->base + 64ull * a, 64ull * (e - a));
            else {
                st = job_read(b, JOB_SQE, op, NULL, sq->base + 64ull * a, 64ull * (sq->size - a));
                if (!st && e) st = job_read(b, JOB_SQE, op, NULL, sq->base, 64ull * e);
            }
            if (st && !op->sqe_status) op->sqe_status = st;
        }
    }
    if (b->ops_tail) b->ops_tail->next = op; else b->ops_head = op;
    b->ops_tail = op;
    b->nops++;
    if (op->is_sqdb && !op->sqe_pending && !op->sqe_status) parse_batch(b, op);
    else drain_ops(b);
}

/* --- CQE processing ---------------------------------------------------------------------------------- */

static void gather(qb_t *b, const qb_cmd_t *c, uint8_t *dst, size_t n)
{
    size_t o = 0;
    memset(dst, 0, n);
    for (unsigned i = 0; i < c->nsegs && o < n; i++) {
        size_t k = c->segs[i].len < n - o ? c->segs[i].len : n - o;
        memcpy(dst + o, shm(b, c->segs[i].addr), k);
        o += k;
    }
}

/* Learn from successful admin commands what the mirroring needs later. */
static void snoop(qb_t *b, qb_cmd_t *c)
{
    const uint32_t *d = c->sqe;
    uint16_t qid = d[10] & 0xffff;
    uint32_t qsize = (d[10] >> 16) + 1;
    uint64_t prp1 = d[6] | ((uint64_t)d[7] << 32);
    switch (c->opc) {
    case 0x05:                                           /* Create I/O CQ */
        if (qid && qid < b->nq) {
            b->cq[qid] = (qb_cq_t){ 1, prp1, qsize, 0, 1, 0 };
            if (in_mem(b, prp1, 16ull * qsize)) memset(shm(b, prp1), 0, 16ull * qsize);
        }
        break;
    case 0x01:                                           /* Create I/O SQ */
        if (qid && qid < b->nq) b->sq[qid] = (qb_sq_t){ 1, prp1, qsize, 0, (uint16_t)(d[11] >> 16) };
        break;
    case 0x00: if (qid && qid < b->nq) b->sq[qid].valid = 0; break;
    case 0x04: if (qid && qid < b->nq) b->cq[qid].valid = 0; break;
    case 0x06: {
        uint8_t id[4096];
        gather(b, c, id, sizeof(id));
        unsigned cns = d[10] & 0xff;
        if (cns == 1) b->mdts = id[77];
        if (cns == 0 && d[1] >= 1 && d[1] <= QB_MAX_NS) {
            qb_ns_t *ns = &b->ns[d[1]];
            uint64_t nsze;
            memcpy(&nsze, id, 8);
            if (nsze) {
                ns->known = 1;
                ns->nsze = nsze;
                ns->nlbaf = id[25] + 1u;
                ns->flbas = id[26];
                ns->dps = id[29];
                for (unsigned i = 0; i < 64 && i < ns->nlbaf; i++) {
                    uint32_t f;
                    memcpy(&f, id + 128 + 4 * i, 4);
                    ns->ms[i] = f & 0xffff;
                    ns->lbads[i] = (f >> 16) & 0xff;
                }
            }
        }
        break;
    }
    case 0x80: {                                         /* Format NVM */
        unsigned lbaf = (d[10] & 0xf) | (((d[10] >> 12) & 3) << 4), mset = (d[10] >> 4) & 1;
        for (unsigned n = 1; n <= QB_MAX_NS; n++) {
            if (!b->ns[n].known || (d[1] != 0xffffffffu && d[1] != n)) continue;
            b->ns[n].flbas = (lbaf & 0xf) | (mset << 4) | (((lbaf >> 4) & 3) << 5);
            b->ns[n].dps = (d[10] >> 5) & 7;
        }
        break;
    }
    }
}

static void process_cqe(qb_t *b, unsigned cqid, uint64_t addr)
{
    uint32_t e[4];
    memcpy(e, shm(b, addr), 16);
    uint16_t sqid = (uint16_t)(e[2] >> 16), cid = (uint16_t)e[3];
    qb_cmd_t *c = hash_take(b, sqid, cid);
    b->st.cqes++;
    if (c) {
        if (c->ovr) e[3] = (e[3] & 0x1ffff) | ((uint32_t)c->ovr << 17);
        int ok = ((e[3] >> 17) & 0x7ff) == 0;
        if (ok) {
            if (c->admin) snoop(b, c);
            for (unsigned i = 0; i < c->nsegs; i++)
                wb_add(b, c->segs[i].addr, c->segs[i].len, shm(b, c->segs[i].addr));
        }
        timed_unlink(b, c);
        b->inflight--;
        if (b->cq[cqid].outstanding) b->cq[cqid].outstanding--;
        cmd_free(c);
    } else {
        b->st.unknown_cqes++;
        if (b->st.unknown_cqes <= 3)
            msg(b, "warning: CQ %u: completion for SQ %u CID %u that the bridge did not forward", cqid, sqid, cid);
    }
    qb_wb_t *w = wb_add(b, addr, 16, NULL);
    if (w) memcpy(w->inline_data, e, 16);
}

static int poll_cqs(qb_t *b)
{
    int n = 0;
    for (unsigned q = 0; q < b->nq; q++) {
        qb_cq_t *cq = &b->cq[q];
        if (!cq->valid || !cq->outstanding || !in_mem(b, cq->base, 16ull * cq->size)) continue;
        for (;;) {
            uint64_t a = cq->base + 16ull * cq->seen;
            uint32_t dw3 = __atomic_load_n((uint32_t *)shm(b, a + 12), __ATOMIC_ACQUIRE);
            if (((dw3 >> 16) & 1) != (unsigned)cq->phase) break;
            process_cqe(b, q, a);
            n++;
            if (++cq->seen == cq->size) { cq->seen = 0; cq->phase ^= 1; }
            if (!cq->outstanding) break;
        }
    }
    return n;
}

static int cqe_waiting(qb_t *b)
{
    for (unsigned q = 0; q < b->nq; q++) {
        qb_cq_t *cq = &b->cq[q];
        if (!cq->valid || !cq->outstanding || !in_mem(b, cq->base, 16ull * cq->size)) continue;
        uint32_t dw3 = __atomic_load_n((uint32_t *)shm(b, cq->base + 16ull * cq->seen + 12), __ATOMIC_ACQUIRE);
        if (((dw3 >> 16) & 1) == (unsigned)cq->phase) return 1;
    }
    return 0;
}

static void check_wall(qb_t *b)
{
    uint64_t now = qb_wall_ns();
    if (b->timed_head && now - b->timed_head->t_submit_ns > (uint64_t)(b->c.cmd_timeout_ms * 1e6)) {
        qb_cmd_t *c = b->timed_head;
        qb_cq_t *cq = &b->cq[b->sq[c->sqid].cqid];
        if (cq->valid && (cq->seen + 1) % cq->size == cq->head % cq->size) {
            /* the host leaves its CQ full: the wait is not QEMU's; restart the clock */
            timed_unlink(b, c);
            c->t_submit_ns = now;
            c->timed = 1;
            c->inext = NULL;
            c->iprev = b->timed_tail;
            if (b->timed_tail) b->timed_tail->inext = c; else b->timed_head = c;
            b->timed_tail = c;
            b->ntimed++;
            return;
        }
        b->st.timeouts++;
        if (!qbp_alive(&b->q)) { check_dead(b); return; }
        set_fatal(b, "QEMU did not complete %s opcode 0x%02x (SQ %u, CID %u) within %.0f ms (qemu_timeout)",
            c->admin ? "admin" : "I/O", c->opc, c->sqid, c->cid, b->c.cmd_timeout_ms);
        return;
    }
    if (now - b->last_alive_check_ns > 100000000ull) {
        b->last_alive_check_ns = now;
        if (!qbp_alive(&b->q)) check_dead(b);
        /* QEMU clears O_NONBLOCK of fds it receives (shared file description): poll first */
        struct pollfd pf = { b->q.irqfd[0], POLLIN, 0 };
        uint64_t v;
        if (b->q.irqfd[0] >= 0 && poll(&pf, 1, 0) == 1 && read(b->q.irqfd[0], &v, 8) == 8)
            b->st.intx_events += v;
    }
}

int qb_busy(const qb_t *b) { return b->inflight || b->wb_head || b->njobs || b->ops_head; }

static ps_t dev_tick(void *dev, ps_t now)
{
    qb_t *b = dev;
    drain_wb(b);
    if (b->inflight && now >= b->next_poll) {
        int n = poll_cqs(b);
        if (!n && b->c.block_us > 0 && b->ntimed && !b->wb_head && !b->njobs && !b->ops_head) {
            /* harness: nothing else can happen before QEMU answers; wait for it in wall time */
            uint64_t until = qb_wall_ns() + (uint64_t)(b->c.block_us * 1000.0);
            while (!cqe_waiting(b) && qb_wall_ns() < until) {
                struct timespec ts = { 0, 20000 };
                nanosleep(&ts, NULL);
            }
            n = poll_cqs(b);
        }
        b->next_poll = now + b->poll_ps;
        check_wall(b);
        drain_wb(b);
    }
    ps_t nx = PS_NEVER;
    if (b->wb_head) {
        nx = pcie_ep_tx_room_at(&b->ep);
        if (nx <= now) nx = now + 1;
    }
    if (b->inflight && b->next_poll < nx) nx = b->next_poll;
    return nx;
}

/* --- BAR access --------------------------------------------------------------------------------------- */

static int bar_read(void *dev, int bar, uint64_t off, uint8_t *buf, unsigned len)
{
    qb_t *b = dev;
    if (bar != 0 || b->q.dead) return -1;
    b->st.bar_reads++;
    for (unsigned pos = 0; pos < len;) {
        uint64_t o = off + pos;
        unsigned n = (len - pos >= 8 && !(o & 7)) ? 8 : 4;
        uint64_t v = 0;
        if (o + n <= b->reg_size && qbp_mem_read(&b->q, QB_QEMU_BAR_ADDR + o, n, &v)) {
            check_dead(b);
            return -1;
        }
        if (b->fatal) {                                   /* CSTS.CFS */
            if (o == 0x1c) v |= 2;
            if (o == 0x18 && n == 8) v |= 2ull << 32;
        }
        memcpy(buf + pos, &v, n);
        pos += n;
    }
    return 0;
}

static void bar_write(void *dev, int bar, uint64_t off, const uint8_t *buf, unsigned len)
{
    qb_t *b = dev;
    if (bar != 0 || b->q.dead) return;
    for (unsigned pos = 0; pos < len;) {
        uint64_t o = off + pos;
        unsigned n = o >= 0x1000 ? 4 : 8;              /* one doorbell per write */
        while (n > 1 && ((o & (n - 1)) || pos + n > len)) n >>= 1;
        uint64_t v = 0;
        memcpy(&v, buf + pos, n);
        if (o + n <= b->reg_size) enqueue_write(b, o, v, n);
        pos += n;
    }
}

/* --- configuration -------------------------------------------------------------------------------------- */

/* DevCtl Max_Payload_Size / Max_Read_Request_Size: read/write in a PCIe function, read-only zero
 * in QEMU's emulation; the bridge keeps them (the DMA engine of the common layer honours them). */
#define DEVCTL_SIZES 0x70e0u
#define DEVCTL_RESET 0x2000u                 /* MPS 128 B, MRRS 512 B */

static uint32_t overlay(qb_t *b, unsigned reg, uint32_t v)
{
    if (b->pcie_cap && reg == b->pcie_cap + 8) v = (v & ~DEVCTL_SIZES) | b->devctl_sizes;
    return v;
}

/* The PCIe capability as seen behind a root port: an endpoint on the link of the link model. */
static uint32_t patch_cfg(qb_t *b, unsigned reg, uint32_t v)
{
    unsigned pc = b->pcie_cap;
    if (!pc) return v;
    if (reg == pc) v &= ~(0xfu << 20);                                  /* Device/Port Type: endpoint */
    if (reg == pc + 0x0c) v = (v & ~0x3ffu) | (b->c.gen & 0xf) | ((b->c.width & 0x3f) << 4);
    if (reg == pc + 0x10) {
        uint32_t sta = b->ep.link.up ? ((b->ep.link.cur_gen & 0xf) | ((b->ep.link.cur_width & 0x3f) << 4)) : 0;
        v = (v & ~(0x3ffu << 16)) | (sta << 16);
    }
    if (reg == pc + 0x2c) v = (v & ~0xfeu) | ((((1u << b->c.gen) - 1) << 1) & 0xfe);
    return overlay(b, reg, v);
}

static int sync_dword(qb_t *b, unsigned reg)
{
    uint32_t v;
    if (qbp_cfg_read(&b->q, reg, 4, &v)) return -1;
    pcie_cfg_w32(&b->ep.cs, reg, overlay(b, reg, v));
    return 0;
}

/* Shadow of QEMU's header and capabilities (the ep reads Command, DevCap/DevCtl from it). */
static int sync_shadow(qb_t *b)
{
    for (unsigned r = 0; r < 0x100; r += 4) {
        if (r >= 0x10 && r < 0x28) continue;
        if (sync_dword(b, r)) return -1;
    }
    return 0;
}

static void program_qemu_bar(qb_t *b)
{
    qbp_cfg_write(&b->q, 0x10, (uint32_t)QB_QEMU_BAR_ADDR | (b->cfg_init[0x10] & 0xf), 4);
    qbp_cfg_write(&b->q, 0x14, (uint32_t)(QB_QEMU_BAR_ADDR >> 32), 4);
}

/* Function-level state back to reset: PERST#, link down, FLR. */
static void function_reset(qb_t *b, int kind, int cancel_dma)
{
    drop_work(b, cancel_dma);
    b->fatal = 0;
    b->mdts = b->c.mdts;
    b->devctl_sizes = DEVCTL_RESET;
    b->st.resets++;
    if (b->q.dead) return;
    qbp_device_reset(&b->q);
    /* configuration registers the device reset of QEMU leaves alone */
    qbp_cfg_write(&b->q, 0x04, 0, 2);
    qbp_cfg_write(&b->q, 0x06, 0xffff, 2);
    qbp_cfg_write(&b->q, 0x0c, b->cfg_init[0x0c], 1);
    qbp_cfg_write(&b->q, 0x3c, b->cfg_init[0x3c], 1);
    if (b->pm_cap) {
        unsigned o = b->pm_cap + 4;
        qbp_cfg_write(&b->q, o, (b->cfg_init[o] | (b->cfg_init[o + 1] << 8)) | 0x8000, 2);
    }
    if (b->pcie_cap) {
        static const unsigned regs[] = { 0x08, 0x10, 0x28, 0x30 };
        for (unsigned i = 0; i < 4; i++) {
            unsigned o = b->pcie_cap + regs[i];
            qbp_cfg_write(&b->q, o, b->cfg_init[o] | (b->cfg_init[o + 1] << 8), 2);
        }
        qbp_cfg_write(&b->q, b->pcie_cap + 0x0a, 0xffff, 2);
    }
    if (kind == PCIE_RESET_FLR) {                   /* the host's BARs reset too */
        for (unsigned r = 0x10; r < 0x28; r += 4)
            pcie_cfg_w32(&b->ep.cs, r, pcie_cfg_read32(&b->ep.cs_reset, r));
    }
    program_qemu_bar(b);
    sync_shadow(b);
    for (unsigned n = 1; n <= QB_MAX_NS; n++) if (n != 1) b->ns[n].known = 0;
    check_dead(b);
}

static int cfg_access(void *dev, int write, unsigned reg, unsigned be, uint32_t *val)
{
    qb_t *b = dev;
    if (b->q.dead) return CPL_UR;
    if (reg >= 0x10 && reg < 0x28) {                 /* BARs: the host's addresses */
        if (write) { pcie_cfg_write32(&b->ep.cs, reg, *val, be); b->st.cfg_writes++; }
        else { *val = pcie_cfg_read32(&b->ep.cs, reg); b->st.cfg_reads++; }
        return CPL_SC;
    }
    if (reg >= b->cfg_size) {                          /* beyond QEMU's space: reads 0 */
        if (!write) *val = 0;
        return CPL_SC;
    }
    if (!write) {
        uint32_t v;
        if (qbp_cfg_read(&b->q, reg, 4, &v)) { check_dead(b); return CPL_UR; }
        b->st.cfg_reads++;
        *val = patch_cfg(b, reg, v);
        return CPL_SC;
    }
    b->st.cfg_writes++;
    if (b->pcie_cap && reg == b->pcie_cap + 8) {
        uint32_t m = ((be & 1) ? 0x00e0u : 0) | ((be & 2) ? 0x7000u : 0);
        b->devctl_sizes = (b->devctl_sizes & ~m) | (*val & m);
    }
    for (unsigned i = 0; i < 4;) {
        if (!((be >> i) & 1)) { i++; continue; }
        unsigned n = (!(i & 3) && (be & 0xf) == 0xf) ? 4 : (!(i & 1) && ((be >> i) & 3) == 3) ? 2 : 1;
        if (reg + i + 4 <= b->cfg_size &&
            qbp_cfg_write(&b->q, reg + i, (*val >> (8 * i)) & (n == 4 ? 0xffffffffu : (1u << (8 * n)) - 1), n)) {
            check_dead(b);
            return CPL_UR;
        }
        i += n;
    }
    if (reg < 0x100 && sync_dword(b, reg)) { check_dead(b); return CPL_UR; }
    if (b->pcie_cap && reg == b->pcie_cap + 8 && (be & 2) && (*val & 0x8000)) {
        b->st.flr++;
        function_reset(b, PCIE_RESET_FLR, 1);
    }
    return CPL_SC;
}

static void dev_reset(void *dev, int kind)
{
    qb_t *b = dev;
    /* the ep already dropped its DMA state (PERST#, link down) */
    function_reset(b, kind, 0);
}

const pcie_dev_ops_t qb_dev_ops = {
    .bar_read = bar_read,
    .bar_write = bar_write,
    .cfg_written = NULL,
    .reset = dev_reset,
    .tick = dev_tick,
    .unhandled = NULL,
    .cfg_access = cfg_access,
};

/* --- life cycle -------------------------------------------------------------------------------------- */

void qb_destroy(qb_t *b)
{
    if (!b) return;
    drop_work(b, 0);
    while (b->ops_head) {
        qb_op_t *op = b->ops_head;
        b->ops_head = op->next;
        op_free_cmds(op);
        free(op);
    }
    pcie_ep_destroy(&b->ep);
    qbp_stop(&b->q);
    free(b->sq);
    free(b->cq);
    free(b);
}

qb_t *qb_create(const qb_conf_t *conf, char *err, size_t errlen)
{
    qb_t *b = calloc(1, sizeof(*b));
    if (!b) { snprintf(err, errlen, "out of memory"); return NULL; }
    b->c = *conf;
    b->nq = b->c.max_ioqpairs + 1;
    b->sq = calloc(b->nq, sizeof(*b->sq));
    b->cq = calloc(b->nq, sizeof(*b->cq));
    pcie_ep_cfg_t ec;
    memset(&ec, 0, sizeof(ec));
    ec.max_tags = b->c.max_tags;
    ec.cpl_timeout_ps = (ps_t)(b->c.cpl_timeout_us * PS_PER_US);
    ec.tx_backlog_ps = 2 * PS_PER_US;
    pcie_link_cfg_t lc;
    memset(&lc, 0, sizeof(lc));
    lc.gen = b->c.gen; lc.width = b->c.width;
    lc.dllp_share = 0.02;
    lc.latency_ps = (ps_t)(b->c.link_latency_ns * PS_PER_NS);
    lc.train_ps = (ps_t)(b->c.train_us * PS_PER_US);
    lc.retrain_ps = lc.train_ps;
    lc.up_credits = 64;
    lc.dn_credits = 64;
    lc.dn_backlog_ps = 2 * PS_PER_US;
    pcie_ep_init(&b->ep, &ec, &lc, &qb_dev_ops, b);
    if (!b->sq || !b->cq) { snprintf(err, errlen, "out of memory"); qb_destroy(b); return NULL; }
    b->poll_ps = (ps_t)(b->c.poll_ns * PS_PER_NS);
    if (!b->poll_ps) b->poll_ps = 1;
    if (qbp_start(&b->q, &b->c, err, errlen)) { qb_destroy(b); return NULL; }

    /* QEMU's function: header, capabilities, BAR sizes; its BAR0 goes above the mirrored memory */
    qb_proc_t *q = &b->q;
    int bad = 0;
    for (unsigned r = 0; r < 0x100 && !bad; r += 4) {
        uint32_t v;
        bad = qbp_cfg_read(q, r, 4, &v);
        memcpy(b->cfg_init + r, &v, 4);
    }
    for (unsigned p = b->cfg_init[0x34] & 0xfc, n = 0; p && n < 48 && !bad; n++) {
        if (b->cfg_init[p] == 0x10) b->pcie_cap = p;
        if (b->cfg_init[p] == 0x01) b->pm_cap = p;
        p = b->cfg_init[p + 1] & 0xfc;
    }
    b->cfg_size = b->pcie_cap ? 4096 : 256;            /* PCI Express: extended space */
    uint32_t lo = 0, hi = 0;
    bad = bad || qbp_cfg_write(q, 0x10, 0xffffffff, 4) || qbp_cfg_read(q, 0x10, 4, &lo) ||
        qbp_cfg_write(q, 0x14, 0xffffffff, 4) || qbp_cfg_read(q, 0x14, 4, &hi);
    if (bad) { snprintf(err, errlen, "QEMU's configuration space: %s", q->why); qb_destroy(b); return NULL; }
    if ((lo & 0x7) != 0x4 || !(lo & ~0xfu)) {
        snprintf(err, errlen, "QEMU's NVMe BAR0 is not a 64-bit memory BAR (0x%08x)", lo);
        qb_destroy(b);
        return NULL;
    }
    uint64_t mask = ((uint64_t)hi << 32) | (lo & ~0xfu);
    uint64_t size = ~mask + 1;
    b->qemu_bar_size = (uint32_t)size;
    if (b->c.mem_top > QB_QEMU_BAR_ADDR) {
        snprintf(err, errlen, "mem_top 0x%llx is above QEMU's BAR address 0x%llx",
            (unsigned long long)b->c.mem_top, (unsigned long long)QB_QEMU_BAR_ADDR);
        qb_destroy(b);
        return NULL;
    }
    /* NVMe registers + doorbells of QEMU 7.x: pow2ceil(4 KiB + 8 x (max_ioqpairs + 1)) */
    unsigned rs = 1;
    while (rs < 0x1000u + 8u * (b->c.max_ioqpairs + 1)) rs <<= 1;
    b->reg_size = rs < size ? rs : (unsigned)size;
    program_qemu_bar(b);
    /* CAP (doorbell stride): needs MEM for a moment */
    uint64_t cap = 0;
    bad = qbp_cfg_write(q, 0x04, 0x0002, 2) || qbp_mem_read(q, QB_QEMU_BAR_ADDR, 8, &cap) ||
        qbp_cfg_write(q, 0x04, 0x0000, 2);
    if (bad) { snprintf(err, errlen, "reading QEMU's NVMe CAP: %s", q->why); qb_destroy(b); return NULL; }
    b->dstrd = (unsigned)((cap >> 32) & 0xf);
    b->page_bits = 12;
    b->mdts = b->c.mdts;

    /* the ep's configuration space: the shadow of QEMU's, with the host's BARs */
    pcie_cfg_t *cs = &b->ep.cs;
    memcpy(cs->data, b->cfg_init, 0x100);
    for (unsigned r = 0x10; r < 0x28; r += 4) pcie_cfg_w32(cs, r, 0);
    memset(cs->wmask, 0, sizeof(cs->wmask));
    memset(cs->w1cmask, 0, sizeof(cs->w1cmask));
    pcie_cfg_add_bar(cs, 0, size, 1, (b->cfg_init[0x10] >> 3) & 1);
    cs->pcie_cap = (uint8_t)b->pcie_cap;
    b->devctl_sizes = DEVCTL_RESET;
    cs->pm_cap = (uint8_t)b->pm_cap;
    if (sync_shadow(b)) { snprintf(err, errlen, "QEMU's configuration space: %s", q->why); qb_destroy(b); return NULL; }
    pcie_ep_config_done(&b->ep);

    /* namespace 1 as QEMU is started (refined by Identify Namespace) */
    qb_ns_t *ns = &b->ns[1];
    ns->known = 1;
    struct stat st;
    ns->nsze = (stat(b->c.image, &st) ? 0 : (uint64_t)st.st_size) / b->c.lba_size;
    ns->nlbaf = 1;
    ns->lbads[0] = (unsigned)__builtin_ctz(b->c.lba_size);
    return b;
}
