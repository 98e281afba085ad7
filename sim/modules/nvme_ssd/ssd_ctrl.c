/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * NVMe controller (NVMe 1.4 subset) on top of the common PCIe endpoint: registers, admin and
 * I/O queues, PRP handling, admin and NVM commands, MSI-X, faults, per-command log.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <fcntl.h>
#include <unistd.h>
#include "ssd.h"

#define BAR0_SIZE   0x4000
#define MSIX_TABLE  0x2000
#define MSIX_PBA    0x3000
#define COOKIE_SQF  (1ull << 62)
#define COOKIE_PRP  (1ull << 61)
#define COOKIE_DAT  (1ull << 60)

enum { SCT_GEN = 0, SCT_CMD = 1, SCT_MEDIA = 2 };
enum { SC_OK = 0, SC_INVALID_OPCODE = 1, SC_INVALID_FIELD = 2, SC_DATA_XFER = 4, SC_INTERNAL = 6,
       SC_ABORT_REQ = 7, SC_ABORT_SQ_DEL = 8, SC_INVALID_NS = 0x0b, SC_SEQ_ERROR = 0x0c,
       SC_PRP_OFFSET = 0x13, SC_LBA_RANGE = 0x80, SC_NS_NOT_READY = 0x82 };
enum { SC_CQ_INVALID = 0, SC_QID_INVALID = 1, SC_QSIZE_INVALID = 2, SC_AER_LIMIT = 5,
       SC_INVALID_VECTOR = 8, SC_INVALID_LOG = 9, SC_INVALID_QDEL = 0x0c, SC_NOT_SAVEABLE = 0x0d };

static inline uint32_t cap_lo(ssd_t *s) { return ((uint32_t)s->p.mqes & 0xffff) | (1u << 16) | (((uint32_t)s->p.cap_to & 0xff) << 24); }
static inline uint32_t cap_hi(ssd_t *s) { return ((uint32_t)s->p.dstrd & 0xf) | (1u << 5) | (0u << 16) | (4u << 20); }
static inline uint32_t db_stride(ssd_t *s) { return 4u << (uint32_t)s->p.dstrd; }

/* --- errors / async events ------------------------------------------------------------------ */

static void errlog_add(ssd_t *s, ssd_cmd_t *c, uint64_t lba)
{
    memmove(&s->errlog[1], &s->errlog[0], sizeof(s->errlog[0]) * 63);
    s->err_count++;
    s->errlog[0].count = s->err_count;
    s->errlog[0].sqid = c ? c->sqid : 0xffff;
    s->errlog[0].cid = c ? c->cid : 0xffff;
    s->errlog[0].status = c ? (uint16_t)(((c->dnr & 1) << 15) | ((c->sct & 7) << 9) | ((c->sc & 0xff) << 1)) : 0;
    s->errlog[0].lba = lba;
    s->errlog[0].nsid = c ? c->sqe[1] : 0;
}

static void post_cqe_raw(ssd_t *s, uint16_t cqid, uint32_t dw0, uint16_t sqid, uint16_t cid,
    unsigned sct, unsigned sc, int dnr);

static void aer_event(ssd_t *s, unsigned type, unsigned info, unsigned lid)
{
    uint32_t ev = (type & 7) | ((info & 0xff) << 8) | ((lid & 0xff) << 16);
    if (s->aer_pending_mask & (1u << type)) return;   /* masked until the log page is read */
    if (s->naer) {
        uint16_t cid = s->aer_cid[0];
        memmove(&s->aer_cid[0], &s->aer_cid[1], sizeof(s->aer_cid[0]) * 7);
        s->naer--;
        s->aer_pending_mask |= 1u << type;
        post_cqe_raw(s, 0, ev, 0, cid, 0, 0, 0);
    } else if (s->naerq < 8) {
        s->aer_queue[s->naerq++] = ev;
    }
}

/* --- MSI-X ---------------------------------------------------------------------------------- */

static void msix_fire(ssd_t *s, unsigned vec)
{
    pcie_cfg_t *cs = &s->ep.cs;
    uint16_t mc = pcie_cfg_r16(cs, cs->msix_cap + 2);
    if (!(mc & 0x8000) || vec >= (unsigned)s->p.msix_vectors) return;
    uint32_t *e = &s->msix_table[vec * 4];
    if ((mc & 0x4000) || (e[3] & 1)) { s->msix_pba |= 1ull << vec; return; }
    uint64_t a = ((uint64_t)e[1] << 32) | e[0];
    pcie_dma_write(&s->ep, a, (const uint8_t *)&e[2], 4, 0);
}

/* --- CQE ------------------------------------------------------------------------------------ */

static int cq_full(ssd_cq_t *q) { return (q->tail + 1) % q->size == q->head; }

static void post_cqe_raw(ssd_t *s, uint16_t cqid, uint32_t dw0, uint16_t sqid, uint16_t cid,
    unsigned sct, unsigned sc, int dnr)
{
    ssd_cq_t *q = &s->cq[cqid];
    uint32_t e[4];
    e[0] = dw0;
    e[1] = 0;
    e[2] = (s->sq[sqid].head & 0xffff) | ((uint32_t)sqid << 16);
    e[3] = cid | ((uint32_t)(q->phase & 1) << 16) | ((sc & 0xff) << 17) | ((sct & 7) << 25) |
           ((uint32_t)(dnr & 1) << 31);
    if (pcie_dma_write(&s->ep, q->base + (uint64_t)q->tail * 16, (uint8_t *)e, 16, 0)) {
        s->fatal = 1; s->csts |= 2; s->bme_violations++;
        return;
    }
    q->tail++;
    if (q->tail == q->size) { q->tail = 0; q->phase ^= 1; }
    if (q->ien) msix_fire(s, q->iv);
}

/* --- command slots -------------------------------------------------------------------------- */

static ssd_cmd_t *cmd_alloc(ssd_t *s)
{
    if (!s->nfree) return NULL;
    ssd_cmd_t *c = &s->cmds[s->free_cmds[--s->nfree]];
    uint8_t *buf = c->buf; uint64_t cap = c->buf_cap;
    uint64_t *prps = c->prps; uint32_t pcap = c->prp_cap;
    uint8_t *pf = c->prp_fetch;
    int idx = c->idx;
    memset(c, 0, sizeof(*c));
    c->buf = buf; c->buf_cap = cap; c->prps = prps; c->prp_cap = pcap; c->prp_fetch = pf;
    c->idx = idx;
    c->gen = ++s->gen_counter;
    c->state = CS_WAIT;
    c->apos = s->nactive;
    s->active[s->nactive++] = idx;
    return c;
}

static void cmd_free(ssd_t *s, ssd_cmd_t *c)
{
    if (c->state == CS_FREE) return;
    c->state = CS_FREE;
    s->free_cmds[s->nfree++] = c->idx;
    int last = s->active[--s->nactive];
    s->active[c->apos] = last;
    s->cmds[last].apos = c->apos;
}

/* cookie: flags 62..60 | segment 59..40 | generation 39..16 | slot 15..0 */
static uint64_t cmd_cookie(ssd_cmd_t *c) { return ((uint64_t)(c->gen & 0xffffff) << 16) | (uint64_t)c->idx; }
#define COOKIE_KEY_MASK 0xffffffffffull

static void out_remove(ssd_t *s, ssd_cmd_t *c)
{
    ssd_cmd_t **pp = &s->out_head;
    while (*pp) { if (*pp == c) { *pp = c->next_out; break; } pp = &(*pp)->next_out; }
    c->next_out = NULL;
}

static void out_add(ssd_t *s, ssd_cmd_t *c)
{
    ssd_cmd_t **pp = &s->out_head;
    while (*pp) pp = &(*pp)->next_out;
    c->next_out = NULL;
    *pp = c;
}

static void cmd_cancel_dma(ssd_t *s, ssd_cmd_t *c)
{
    pcie_dma_cancel_mask(&s->ep, cmd_cookie(c), COOKIE_KEY_MASK);
}

static void cmd_set_status(ssd_cmd_t *c, int sct, int sc, int dnr)
{
    c->sct = sct; c->sc = sc; c->dnr = dnr;
}

static void cmd_done(ssd_t *s, ssd_cmd_t *c) { c->state = CS_DONE; pcie_ep_kick(&s->ep); (void)s; }

static void cmd_fail(ssd_t *s, ssd_cmd_t *c, int sct, int sc)
{
    cmd_set_status(c, sct, sc, 1);
    cmd_done(s, c);
}

static int buf_ensure(ssd_cmd_t *c, uint64_t n)
{
    if (c->buf_cap >= n) return 0;
    uint8_t *b = realloc(c->buf, n);
    if (!b) return -1;
    c->buf = b; c->buf_cap = n;
    return 0;
}

static void log_cmd(ssd_t *s, ssd_cmd_t *c)
{
    if (!s->cmd_log) return;
    fprintf(s->cmd_log, "%.3f,%.3f,%u,%u,%s%02x,%u,%llu,%u,%llu,%d,%d,%.3f\n",
        c->t_submit / 1e6, s->now / 1e6, c->sqid, c->cid, c->admin ? "a" : "", c->opc, c->sqe[1],
        (unsigned long long)c->slba, c->admin ? 0 : c->nlb + 1, (unsigned long long)c->bytes,
        c->sct, c->sc, (s->now - c->t_submit) / 1e6);
}

/* Complete a DONE command: faults, CQE, log. Returns 1 when the slot was released. */
static int cmd_post(ssd_t *s, ssd_cmd_t *c)
{
    if (!c->aborted) {
        /* Admin commands match faults given as op=admin:OPCODE only. */
        int op = c->admin ? (0x100 | c->opc) : c->opc;
        ssd_fault_t *f = ssd_fault_match(s, F_DROP_CQE, op, c->sqid, c->slba, c->nlb);
        if (f) { c->state = CS_LOST; c->lost = 1; return 0; }
    }
    ssd_sq_t *sq = &s->sq[c->sqid];
    uint16_t cqid = sq->valid ? sq->cqid : 0;
    ssd_cq_t *q = &s->cq[cqid];
    if (!q->valid) { cmd_free(s, c); return 1; }
    if (cq_full(q)) return 0;
    if (c->sct || c->sc) errlog_add(s, c, c->slba);
    post_cqe_raw(s, cqid, c->dw0, c->sqid, c->cid, c->sct, c->sc, c->dnr);
    s->cmds_done++;
    if (!c->admin) {
        s->s_ios++;
        if (c->opc == 1 && !c->sct && !c->sc) { s->host_writes++; }
        if (c->opc == 2 && !c->sct && !c->sc) { s->host_reads++; }
    }
    log_cmd(s, c);
    cmd_free(s, c);
    return 1;
}

/* --- PRP ------------------------------------------------------------------------------------ */

static void dma_cb(void *dev, uint64_t cookie, int status);
static void data_ready(ssd_t *s, ssd_cmd_t *c);

static int prp_store(ssd_cmd_t *c, uint64_t a)
{
    if (c->nprps >= c->prp_cap) {
        uint32_t n = c->prp_cap ? c->prp_cap * 2 : 64;
        uint64_t *p = realloc(c->prps, n * sizeof(*p));
        if (!p) return -1;
        c->prps = p; c->prp_cap = n;
    }
    c->prps[c->nprps++] = a;
    return 0;
}

static void prp_fetch_next(ssd_t *s, ssd_cmd_t *c)
{
    uint32_t page = s->page_size;
    uint64_t p = c->prp_list_ptr;
    uint32_t in_page = (page - (uint32_t)(p & (page - 1))) / 8;
    uint32_t need = c->prp_need - c->nprps;
    uint32_t n = need <= in_page ? need : in_page;   /* when more than fit: last entry chains */
    if (!c->prp_fetch) c->prp_fetch = malloc(65536);
    if (n * 8 > 65536) n = 65536 / 8;
    c->state = CS_PRP;
    c->dma_pending++;
    if (pcie_dma_read_first(&s->ep, p, n * 8, c->prp_fetch, dma_cb, COOKIE_PRP | cmd_cookie(c))) {
        c->dma_pending--;
        s->fatal = 1; s->csts |= 2;
        cmd_fail(s, c, SCT_GEN, SC_DATA_XFER);
    }
    c->prp_fetch[65535] = 0;
    c->prp_list_ptr = n;   /* remember the count until the data arrives */
}

static void prp_list_arrived(ssd_t *s, ssd_cmd_t *c)
{
    uint32_t page = s->page_size;
    uint32_t n = (uint32_t)c->prp_list_ptr;
    uint32_t need = c->prp_need - c->nprps;
    uint64_t *e = (uint64_t *)c->prp_fetch;
    uint32_t take = n;
    int chain = 0;
    if (need > n) { take = n - 1; chain = 1; }
    for (uint32_t i = 0; i < take; i++) {
        if (e[i] & (page - 1)) { cmd_fail(s, c, SCT_GEN, SC_PRP_OFFSET); return; }
        prp_store(c, e[i]);
    }
    if (chain) {
        uint64_t next = e[n - 1];
        if (next & 7) { cmd_fail(s, c, SCT_GEN, SC_PRP_OFFSET); return; }
        c->prp_list_ptr = next;
        prp_fetch_next(s, c);
        return;
    }
    data_ready(s, c);
}

/* Build the page list of a transfer of `len` bytes from PRP1/PRP2. */
static void prp_setup(ssd_t *s, ssd_cmd_t *c, uint64_t len)
{
    uint32_t page = s->page_size;
    uint64_t prp1 = ((uint64_t)c->sqe[7] << 32) | c->sqe[6];
    uint64_t prp2 = ((uint64_t)c->sqe[9] << 32) | c->sqe[8];
    c->nprps = 0;
    c->bytes = len;
    if (prp1 & 3) { cmd_fail(s, c, SCT_GEN, SC_PRP_OFFSET); return; }
    prp_store(c, prp1);
    uint64_t first = page - (prp1 & (page - 1));
    if (len <= first) { data_ready(s, c); return; }
    uint64_t rem = len - first;
    if (rem <= page) {
        if (prp2 & (page - 1)) { cmd_fail(s, c, SCT_GEN, SC_PRP_OFFSET); return; }
        prp_store(c, prp2);
        data_ready(s, c);
        return;
    }
    if (prp2 & 7) { cmd_fail(s, c, SCT_GEN, SC_PRP_OFFSET); return; }
    c->prp_need = 1 + (uint32_t)((rem + page - 1) / page);
    c->prp_list_ptr = prp2;
    prp_fetch_next(s, c);
}

/* Segment i of the transfer: address and length. */
static void seg_of(ssd_t *s, ssd_cmd_t *c, uint32_t i, uint64_t *addr, uint32_t *len, uint64_t *off)
{
    uint32_t page = s->page_size;
    uint64_t first = page - (c->prps[0] & (page - 1));
    if (first > c->bytes) first = c->bytes;
    if (i == 0) { *addr = c->prps[0]; *len = (uint32_t)first; *off = 0; return; }
    *off = first + (uint64_t)(i - 1) * page;
    *addr = c->prps[i];
    uint64_t r = c->bytes - *off;
    *len = (uint32_t)(r < page ? r : page);
}

/* --- I/O data paths --------------------------------------------------------------------------- */

static void wq_expire(ssd_t *s)
{
    while (s->wq_n && s->wq[s->wq_head].end <= s->now) {
        s->wq_bytes -= s->wq[s->wq_head].bytes;
        s->wq_head = (s->wq_head + 1) % s->wq_cap;
        s->wq_n--;
    }
}

static void wq_push(ssd_t *s, ps_t end, uint32_t bytes)
{
    if (s->wq_n == s->wq_cap) {
        uint32_t ncap = s->wq_cap ? s->wq_cap * 2 : 1024;
        __typeof__(s->wq) n = malloc(sizeof(s->wq[0]) * ncap);
        for (uint32_t i = 0; i < s->wq_n; i++) n[i] = s->wq[(s->wq_head + i) % s->wq_cap];
        free(s->wq);
        s->wq = n; s->wq_cap = ncap; s->wq_head = 0;
    }
    uint32_t i = (s->wq_head + s->wq_n) % s->wq_cap;
    s->wq[i].end = end; s->wq[i].bytes = bytes;
    s->wq_n++;
    s->wq_bytes += bytes;
}

/* Room in the controller's write buffer for one more page (accepted + requested data). */
static int write_buffer_room(ssd_t *s)
{
    wq_expire(s);
    return (double)(s->inflight_w + s->wq_bytes + s->page_size) <= s->p.write_buf;
}

/* When the write buffer will have room for another page again. */
static ps_t write_room_at(ssd_t *s)
{
    wq_expire(s);
    double need = (double)(s->inflight_w + s->wq_bytes + s->page_size) - s->p.write_buf;
    if (need <= 0) return s->now + 1;
    double acc = 0;
    for (uint32_t k = 0; k < s->wq_n; k++) {
        uint32_t i = (s->wq_head + k) % s->wq_cap;
        acc += s->wq[i].bytes;
        if (acc >= need) return s->wq[i].end > s->now ? s->wq[i].end : s->now + 1;
    }
    return PS_NEVER;   /* waiting for requested data, not for the media */
}

static void issue_in(ssd_t *s, ssd_cmd_t *c)
{
    uint32_t nseg = c->nprps;
    while (c->seg_next < nseg && c->xfer_issued < c->bytes) {
        if (c->opc == 1 && !c->admin && !write_buffer_room(s)) return;
        uint64_t a, off; uint32_t len;
        seg_of(s, c, c->seg_next, &a, &len, &off);
        c->dma_pending++;
        if (pcie_dma_read(&s->ep, a, len, c->buf + off, dma_cb, COOKIE_DAT | ((uint64_t)c->seg_next << 40) | cmd_cookie(c))) {
            c->dma_pending--;
            s->fatal = 1; s->csts |= 2;
            cmd_fail(s, c, SCT_GEN, SC_DATA_XFER);
            return;
        }
        if (c->opc == 1 && !c->admin) s->inflight_w += len;
        c->seg_next++;
        c->xfer_issued += len;
    }
}

static void file_io(ssd_t *s, int write, uint8_t *buf, uint64_t off, uint64_t len)
{
    uint64_t done = 0;
    while (done < len) {
        ssize_t r = write ? pwrite(s->fd, buf + done, len - done, (off_t)(off + done))
                          : pread(s->fd, buf + done, len - done, (off_t)(off + done));
        if (r <= 0) { if (!write) memset(buf + done, 0, len - done); break; }
        done += (uint64_t)r;
    }
}

static void punch(ssd_t *s, uint64_t off, uint64_t len)
{
    if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len)) {
        /* File systems without hole punching: write zeroes. */
        static uint8_t z[65536];
        for (uint64_t d = 0; d < len; d += sizeof(z)) {
            uint64_t n = len - d < sizeof(z) ? len - d : sizeof(z);
            if (pwrite(s->fd, z, n, (off_t)(off + d)) < 0) break;
        }
    }
}

static int status_fault(ssd_t *s, ssd_cmd_t *c)
{
    ssd_fault_t *f = ssd_fault_match(s, F_STATUS, c->opc, c->sqid, c->slba, c->nlb);
    if (!f) return 0;
    cmd_set_status(c, f->sct, f->sc, f->dnr);
    if (f->sct == SCT_MEDIA) s->media_errors++;
    return 1;
}

static void write_data_in(ssd_t *s, ssd_cmd_t *c)
{
    uint64_t off = c->slba * s->lba_size;
    if (status_fault(s, c)) { c->t_due = s->now + ssd_lat(s, s->p.write_lat_us); c->state = CS_WAIT; return; }
    file_io(s, 1, c->buf, off, c->bytes);
    ssd_media_mark(s, off, c->bytes, 1);
    s->bytes_written += c->bytes;
    int fua = (c->sqe[12] >> 30) & 1;
    ps_t lat = ssd_lat(s, s->p.write_lat_us);
    if (s->vwc && !fua) c->t_due = s->now + lat;
    else c->t_due = (s->media_free > s->now ? s->media_free : s->now) + lat;
    c->state = CS_WAIT;
}

static void read_start(ssd_t *s, ssd_cmd_t *c)
{
    double rr = s->p.read_rate;
    ps_t start = s->read_free > s->now ? s->read_free : s->now;
    ps_t rd = start + (rr > 0 ? (ps_t)(c->bytes / rr * 1e12) : 0) + (ps_t)(s->p.cmd_cost_us * PS_PER_US);
    s->read_free = rd;
    ps_t lat = s->now + ssd_lat(s, s->p.read_lat_us);
    c->t_due = lat > rd ? lat : rd;
    s->temp_r_bytes += c->bytes;
    c->state = CS_MEDIA_R;
}

static void read_media_done(ssd_t *s, ssd_cmd_t *c)
{
    if (status_fault(s, c)) { cmd_done(s, c); return; }
    file_io(s, 0, c->buf, c->slba * s->lba_size, c->bytes);
    ssd_fault_t *f = ssd_fault_match(s, F_BITFLIP, c->opc, c->sqid, c->slba, c->nlb);
    if (f) {
        uint64_t bit = f->bit >= 0 ? (uint64_t)f->bit % (c->bytes * 8) : (uint64_t)(ssd_rand(s) * c->bytes * 8);
        c->buf[bit / 8] ^= 1u << (bit % 8);
    }
    s->bytes_read += c->bytes;
    s->s_r_bytes += c->bytes;
    c->state = CS_XFER_OUT;
    c->seg_next = 0;
    c->xfer_issued = 0;
    out_add(s, c);
}

static void dsm_data_in(ssd_t *s, ssd_cmd_t *c)
{
    unsigned nr = (c->sqe[10] & 0xff) + 1;
    int ad = (c->sqe[11] >> 2) & 1;
    for (unsigned i = 0; i < nr; i++) {
        uint32_t nlb; uint64_t slba;
        memcpy(&nlb, c->buf + i * 16 + 4, 4);
        memcpy(&slba, c->buf + i * 16 + 8, 8);
        if (slba + nlb > s->nsze || slba + nlb < slba) { c->slba = slba; cmd_fail(s, c, SCT_GEN, SC_LBA_RANGE); return; }
    }
    if (ad) for (unsigned i = 0; i < nr; i++) {
        uint32_t nlb; uint64_t slba;
        memcpy(&nlb, c->buf + i * 16 + 4, 4);
        memcpy(&slba, c->buf + i * 16 + 8, 8);
        if (!nlb) continue;
        punch(s, slba * s->lba_size, (uint64_t)nlb * s->lba_size);
        ssd_media_mark(s, slba * s->lba_size, (uint64_t)nlb * s->lba_size, 0);
    }
    c->t_due = s->now + ssd_lat(s, s->p.write_lat_us);
    c->state = CS_WAIT;
}

/* --- admin data builders --------------------------------------------------------------------- */

static void put_str(uint8_t *d, const char *s, size_t n)
{
    size_t l = strlen(s);
    for (size_t i = 0; i < n; i++) d[i] = i < l ? (uint8_t)s[i] : ' ';
}
static void put16(uint8_t *d, uint16_t v) { d[0] = v; d[1] = v >> 8; }
static void put32(uint8_t *d, uint32_t v) { for (int i = 0; i < 4; i++) d[i] = v >> (8 * i); }
static void put64(uint8_t *d, uint64_t v) { for (int i = 0; i < 8; i++) d[i] = v >> (8 * i); }
static void put128(uint8_t *d, double v)
{
    if (v < 0) v = 0;
    uint64_t lo = (uint64_t)fmod(v, 18446744073709551616.0), hi = (uint64_t)(v / 18446744073709551616.0);
    put64(d, lo); put64(d + 8, hi);
}

static uint16_t kelvin(double c) { return (uint16_t)lround(c + 273.15); }

static void identify_ctrl(ssd_t *s, uint8_t *d)
{
    memset(d, 0, 4096);
    put16(d + 0, s->ep.cfg.ids.vendor);
    put16(d + 2, s->ep.cfg.ids.subsys_vendor);
    put_str(d + 4, s->serial, 20);
    put_str(d + 24, s->model, 40);
    put_str(d + 64, "LRSIM1.0", 8);
    d[72] = 6;                                  /* RAB */
    d[77] = (uint8_t)s->p.mdts;
    put16(d + 78, (uint16_t)(s->index + 1));    /* CNTLID */
    put32(d + 80, 0x00010400);
    put32(d + 84, 100000); put32(d + 88, 100000);   /* RTD3R / RTD3E (us) */
    put32(d + 92, 1u << 8);                     /* OAES: namespace attribute notices */
    d[111] = 1;                                 /* CNTRLTYPE: I/O controller */
    d[258] = 3;                                 /* ACL */
    d[259] = 3;                                 /* AERL */
    d[260] = 0x03;                              /* FRMW: slot 1 read-only, 1 slot */
    d[261] = 0x04;                              /* LPA bit 2: extended data for Get Log Page (no command effects log) */
    d[262] = 63;                                /* ELPE */
    put16(d + 266, kelvin(s->p.wctemp));
    put16(d + 268, kelvin(s->p.cctemp));
    put16(d + 324, kelvin(s->p.tmt1)); put16(d + 326, kelvin(s->p.tmt2)); /* MNTMT/MXTMT */
    put128(d + 280, (double)s->ns_size);        /* TNVMCAP */
    put128(d + 296, 0);                         /* UNVMCAP */
    d[512] = 0x66; d[513] = 0x44;               /* SQES / CQES */
    put16(d + 514, SSD_MAX_CMDS);               /* MAXCMD */
    put32(d + 516, 1);                          /* NN */
    put16(d + 520, 0x000c);                     /* ONCS: DSM, Write Zeroes */
    d[525] = 0x01;                              /* VWC present */
    char nqn[128];
    snprintf(nqn, sizeof(nqn), "nqn.2024-12.org.literecorder:simssd:%s", s->serial);
    memcpy(d + 768, nqn, strlen(nqn));
    put16(d + 2048, 700);                       /* PSD0 MP = 7.00 W */
}

/* Namespace Globally Unique Identifier: "LRSIM" + the serial number's digits (stable per drive). */
static void ns_nguid(ssd_t *s, uint8_t *g)
{
    memset(g, 0, 16);
    memcpy(g, "LRSIM", 5);
    for (unsigned i = 0, k = 5; s->serial[i] && k < 16; i++)
        if (s->serial[i] >= '0' && s->serial[i] <= '9') g[k++] = (uint8_t)s->serial[i];
}

static void identify_ns(ssd_t *s, uint8_t *d)
{
    memset(d, 0, 4096);
    put64(d + 0, s->nsze);
    put64(d + 8, s->nsze);
    put64(d + 16, s->valid_units * s->unit_size / s->lba_size > s->nsze ? s->nsze : s->valid_units * s->unit_size / s->lba_size);
    d[24] = 0x00;
    d[25] = 0;                                  /* NLBAF (0's based) */
    d[26] = 0;                                  /* FLBAS */
    d[33] = 0x09;                               /* DLFEAT: reads of deallocated = 0, WZ deallocates */
    put128(d + 48, (double)s->ns_size);         /* NVMCAP */
    ns_nguid(s, d + 104);                       /* NGUID */
    d[128 + 2] = s->lba_size == 4096 ? 12 : 9;  /* LBAF0.LBADS */
}

static void smart_log(ssd_t *s, uint8_t *d)
{
    memset(d, 0, 512);
    ssd_thermal(s, s->now);
    uint8_t cw = 0;
    if (s->temp > s->temp_over[0] - 273.15 || s->temp < s->temp_under[0] - 273.15) cw |= 0x02;
    double pu = s->bytes_written / (s->p.endurance_tbw * 1e12) * 100.0;
    d[0] = cw;
    put16(d + 1, kelvin(s->temp));
    d[3] = 100; d[4] = 10;                      /* available spare / threshold */
    d[5] = pu > 255 ? 255 : (uint8_t)pu;
    put128(d + 32, ceil(s->bytes_read / 512000.0));
    put128(d + 48, ceil(s->bytes_written / 512000.0));
    put128(d + 64, (double)s->host_reads);
    put128(d + 80, (double)s->host_writes);
    put128(d + 96, floor(s->busy_ps / 60e12));
    put128(d + 112, 1);
    put128(d + 128, floor(s->now / 3600e12));
    put128(d + 144, 0);
    put128(d + 160, (double)s->media_errors);
    put128(d + 176, (double)s->err_count);
    put32(d + 192, (uint32_t)(s->warn_time / 60));
    put32(d + 196, (uint32_t)(s->crit_time / 60));
    put16(d + 200, kelvin(s->temp));
    put32(d + 216, s->tmt_count[1]);
    put32(d + 220, s->tmt_count[2]);
    put32(d + 224, (uint32_t)s->tmt_time[1]);
    put32(d + 228, (uint32_t)s->tmt_time[2]);
}

static void error_log(ssd_t *s, uint8_t *d, size_t len)
{
    memset(d, 0, len);
    for (unsigned i = 0; i < 64 && (i + 1) * 64 <= len; i++) {
        ssd_errlog_t *e = &s->errlog[i];
        if (!e->count) break;
        uint8_t *p = d + i * 64;
        put64(p, e->count); put16(p + 8, e->sqid); put16(p + 10, e->cid);
        put16(p + 12, e->status); put16(p + 14, 0xffff); put64(p + 16, e->lba); put32(p + 24, e->nsid);
    }
}

/* --- admin commands -------------------------------------------------------------------------- */

static void admin_out(ssd_t *s, ssd_cmd_t *c, uint64_t len)
{
    /* buffer already filled; transfer to the host */
    c->dir = 2;
    prp_setup(s, c, len);
}

static int cq_in_use(ssd_t *s, unsigned cqid)
{
    for (unsigned q = 1; q < SSD_MAX_QUEUES; q++) if (s->sq[q].valid && s->sq[q].cqid == cqid) return 1;
    return 0;
}

static void admin_exec(ssd_t *s, ssd_cmd_t *c)
{
    uint32_t *w = c->sqe;
    unsigned max_q = (unsigned)s->p.max_queues;
    switch (c->opc) {
    case 0x00: {   /* Delete I/O SQ */
        unsigned qid = w[10] & 0xffff;
        if (qid == 0 || qid > max_q || !s->sq[qid].valid) { cmd_fail(s, c, SCT_CMD, SC_QID_INVALID); return; }
        for (int i = 0; i < SSD_MAX_CMDS; i++) {
            ssd_cmd_t *o = &s->cmds[i];
            if (o->state != CS_FREE && o->sqid == qid && o != c) {
                cmd_cancel_dma(s, o);
                out_remove(s, o);
                if (o->opc == 1 && o->state == CS_XFER_IN) s->inflight_w -= (o->xfer_issued - o->xfer_done);
                cmd_set_status(o, SCT_GEN, SC_ABORT_SQ_DEL, 1);
                o->aborted = 1;
                cmd_post(s, o);
            }
        }
        free(s->sq[qid].fbuf);
        s->sq[qid].fbuf = NULL;
        s->sq[qid].valid = 0;
        s->cq[s->sq[qid].cqid].nsq--;
        cmd_done(s, c);
        return;
    }
    case 0x01: {   /* Create I/O SQ */
        unsigned qid = w[10] & 0xffff, qsize = (w[10] >> 16) + 1, cqid = w[11] >> 16, pc = w[11] & 1;
        uint64_t base = ((uint64_t)w[7] << 32) | w[6];
        if (qid == 0 || qid > max_q || qid > s->nsqa || s->sq[qid].valid) { cmd_fail(s, c, SCT_CMD, SC_QID_INVALID); return; }
        if (qsize < 2 || qsize > (unsigned)s->p.mqes + 1) { cmd_fail(s, c, SCT_CMD, SC_QSIZE_INVALID); return; }
        if (!pc) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        if (((s->cc >> 16) & 0xf) != 6) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        if (cqid == 0 || cqid > max_q || !s->cq[cqid].valid) { cmd_fail(s, c, SCT_CMD, SC_CQ_INVALID); return; }
        if (base & (s->page_size - 1)) { cmd_fail(s, c, SCT_GEN, SC_PRP_OFFSET); return; }
        ssd_sq_t *q = &s->sq[qid];
        memset(q, 0, sizeof(*q));
        q->valid = 1; q->base = base; q->size = qsize; q->cqid = cqid;
        q->fbuf = malloc(64 * 64);
        s->cq[cqid].nsq++;
        cmd_done(s, c);
        return;
    }
    case 0x02: {   /* Get Log Page */
        unsigned lid = w[10] & 0xff, rae = (w[10] >> 15) & 1;
        uint64_t numd = ((((uint64_t)w[11] & 0xffff) << 16) | (w[10] >> 16)) + 1;
        uint64_t lpo = ((uint64_t)w[13] << 32) | w[12];
        uint64_t len = numd * 4;
        if (lpo & 3) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        uint8_t img[4096];
        size_t isz;
        if (lid == 0x01) { isz = 64 * 64; error_log(s, img, isz); }
        else if (lid == 0x02) { isz = 512; smart_log(s, img); if (!rae) s->aer_pending_mask &= ~(1u << 1); }
        else if (lid == 0x03) { isz = 512; memset(img, 0, 512); img[0] = 1; memcpy(img + 8, "LRSIM1.0", 8); }
        else { cmd_fail(s, c, SCT_CMD, SC_INVALID_LOG); return; }
        if (lid == 0x01 && !rae) s->aer_pending_mask &= ~1u;
        if (len > 65536) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        buf_ensure(c, len);
        memset(c->buf, 0, len);
        if (lpo < isz) memcpy(c->buf, img + lpo, (isz - lpo) < len ? (isz - lpo) : len);
        admin_out(s, c, len);
        return;
    }
    case 0x04: {   /* Delete I/O CQ */
        unsigned qid = w[10] & 0xffff;
        if (qid == 0 || qid > max_q || !s->cq[qid].valid) { cmd_fail(s, c, SCT_CMD, SC_QID_INVALID); return; }
        if (cq_in_use(s, qid)) { cmd_fail(s, c, SCT_CMD, SC_INVALID_QDEL); return; }
        s->cq[qid].valid = 0;
        cmd_done(s, c);
        return;
    }
    case 0x05: {   /* Create I/O CQ */
        unsigned qid = w[10] & 0xffff, qsize = (w[10] >> 16) + 1, pc = w[11] & 1, ien = (w[11] >> 1) & 1;
        unsigned iv = w[11] >> 16;
        uint64_t base = ((uint64_t)w[7] << 32) | w[6];
        if (qid == 0 || qid > max_q || qid > s->ncqa || s->cq[qid].valid) { cmd_fail(s, c, SCT_CMD, SC_QID_INVALID); return; }
        if (qsize < 2 || qsize > (unsigned)s->p.mqes + 1) { cmd_fail(s, c, SCT_CMD, SC_QSIZE_INVALID); return; }
        if (!pc) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        if (((s->cc >> 20) & 0xf) != 4) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        if (ien && iv >= (unsigned)s->p.msix_vectors) { cmd_fail(s, c, SCT_CMD, SC_INVALID_VECTOR); return; }
        if (base & (s->page_size - 1)) { cmd_fail(s, c, SCT_GEN, SC_PRP_OFFSET); return; }
        ssd_cq_t *q = &s->cq[qid];
        memset(q, 0, sizeof(*q));
        q->valid = 1; q->base = base; q->size = qsize; q->phase = 1; q->ien = ien; q->iv = iv;
        cmd_done(s, c);
        return;
    }
    case 0x06: {   /* Identify */
        unsigned cns = w[10] & 0xff;
        uint32_t nsid = w[1];
        buf_ensure(c, 4096);
        if (cns == 0x01) identify_ctrl(s, c->buf);
        else if (cns == 0x00) {
            if (nsid != 1 && nsid != 0xffffffffu) { cmd_fail(s, c, SCT_GEN, SC_INVALID_NS); return; }
            identify_ns(s, c->buf);
        } else if (cns == 0x02) {
            memset(c->buf, 0, 4096);
            if (nsid >= 0xfffffffeu) { cmd_fail(s, c, SCT_GEN, SC_INVALID_NS); return; }
            if (nsid < 1) put32(c->buf, 1);
        } else if (cns == 0x03) {
            /* Namespace Identification Descriptor list (mandatory since NVMe 1.3): the NGUID. */
            if (nsid != 1) { cmd_fail(s, c, SCT_GEN, SC_INVALID_NS); return; }
            memset(c->buf, 0, 4096);
            c->buf[0] = 0x02;                      /* NIDT: NGUID */
            c->buf[1] = 16;                        /* NIDL */
            ns_nguid(s, c->buf + 4);
        } else { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        admin_out(s, c, 4096);
        return;
    }
    case 0x08: {   /* Abort */
        unsigned sqid = w[10] & 0xffff, cid = w[10] >> 16;
        c->dw0 = 1;
        for (int i = 0; i < SSD_MAX_CMDS; i++) {
            ssd_cmd_t *o = &s->cmds[i];
            if (o == c || o->state == CS_FREE || o->sqid != sqid || o->cid != cid) continue;
            cmd_cancel_dma(s, o);
            out_remove(s, o);
            if (o->opc == 1 && !o->admin && o->state == CS_XFER_IN) s->inflight_w -= (o->xfer_issued - o->xfer_done);
            o->aborted = 1;
            cmd_set_status(o, SCT_GEN, SC_ABORT_REQ, 1);
            o->state = CS_DONE;
            c->dw0 = 0;
            break;
        }
        cmd_done(s, c);
        return;
    }
    case 0x09:     /* Set Features */
    case 0x0a: {   /* Get Features */
        int set = c->opc == 0x09;
        unsigned fid = w[10] & 0xff, sel = (w[10] >> 8) & 7, sv = w[10] >> 31;
        uint32_t v = w[11];
        if (set && sv) { cmd_fail(s, c, SCT_CMD, SC_NOT_SAVEABLE); return; }
        if (!set && sel > 3) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        if (!set && sel == 3) { c->dw0 = (fid == 0x04 || fid == 0x06 || fid == 0x07 || fid == 0x02) ? 0x4 : 0; cmd_done(s, c); return; }
        int deflt = !set && (sel == 1 || sel == 2);
        switch (fid) {
        case 0x01: case 0x05: case 0x08: case 0x0a: case 0x0b:
            if (set) s->feat[fid] = v; else c->dw0 = deflt ? 0 : s->feat[fid];
            break;
        case 0x02:
            if (set) { if ((v & 0x1f) > 0) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; } s->feat[2] = v & 0xff; }
            else c->dw0 = deflt ? 0 : s->feat[2];
            break;
        case 0x04: {
            unsigned tmpsel = (v >> 16) & 0xf, thsel = (v >> 20) & 3;
            if (thsel > 1 || (tmpsel > 1 && tmpsel != 0xf)) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
            uint16_t *arr = thsel ? s->temp_under : s->temp_over;
            unsigned i = tmpsel == 0xf ? 0 : tmpsel;
            if (set) { arr[i] = v & 0xffff; if (tmpsel == 0xf) arr[1] = arr[0]; if (i == 0) arr[1] = arr[0]; }
            else c->dw0 = deflt ? (thsel ? 0 : kelvin(s->p.wctemp)) : arr[i];
            break;
        }
        case 0x06:
            if (set) s->vwc = v & 1; else c->dw0 = deflt ? 1 : (uint32_t)s->vwc;
            break;
        case 0x07:
            if (set) {
                unsigned nsqr = v & 0xffff, ncqr = v >> 16;
                if (nsqr == 0xffff || ncqr == 0xffff) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
                for (unsigned q = 1; q < SSD_MAX_QUEUES; q++)
                    if (s->sq[q].valid || s->cq[q].valid) { cmd_fail(s, c, SCT_GEN, SC_SEQ_ERROR); return; }
                s->nsqa = (nsqr + 1 < max_q ? nsqr + 1 : max_q);
                s->ncqa = (ncqr + 1 < max_q ? ncqr + 1 : max_q);
            }
            c->dw0 = deflt ? ((max_q - 1) << 16 | (max_q - 1)) : (((s->ncqa - 1) << 16) | (s->nsqa - 1));
            break;
        case 0x09:
            if ((v & 0xffff) >= (unsigned)s->p.msix_vectors) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
            if (set) s->feat[9] = v; else c->dw0 = deflt ? (v & 0xffff) : s->feat[9];
            break;
        default:
            cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return;
        }
        cmd_done(s, c);
        return;
    }
    case 0x0c:     /* Asynchronous Event Request */
        if (s->naer >= 4) { cmd_fail(s, c, SCT_CMD, SC_AER_LIMIT); return; }
        if (s->naerq) {
            c->dw0 = s->aer_queue[0];
            s->aer_pending_mask |= 1u << (s->aer_queue[0] & 7);
            memmove(&s->aer_queue[0], &s->aer_queue[1], sizeof(s->aer_queue[0]) * 7);
            s->naerq--;
            cmd_done(s, c);
            return;
        }
        s->aer_cid[s->naer++] = c->cid;
        cmd_free(s, c);   /* completed later by aer_event() */
        return;
    default:
        cmd_fail(s, c, SCT_GEN, SC_INVALID_OPCODE);
    }
}

/* --- NVM commands ---------------------------------------------------------------------------- */

static void io_exec(ssd_t *s, ssd_cmd_t *c)
{
    uint32_t *w = c->sqe;
    uint32_t nsid = w[1];
    c->slba = ((uint64_t)w[11] << 32) | w[10];
    c->nlb = w[12] & 0xffff;
    if (c->opc != 0 && c->opc != 1 && c->opc != 2 && c->opc != 8 && c->opc != 9) {
        cmd_fail(s, c, SCT_GEN, SC_INVALID_OPCODE); return;
    }
    if (c->opc == 0 && nsid == 0xffffffffu) nsid = 1;
    if (nsid != 1) { cmd_fail(s, c, SCT_GEN, SC_INVALID_NS); return; }
    if (s->now < s->ns_not_ready_until || ssd_fault_match(s, F_NS_NOT_READY, c->opc, c->sqid, c->slba, c->nlb)) {
        cmd_set_status(c, SCT_GEN, SC_NS_NOT_READY, 0);
        cmd_done(s, c);
        return;
    }
    ssd_thermal(s, s->now);
    switch (c->opc) {
    case 0x00:    /* Flush */
        c->slba = 0; c->nlb = 0;
        if (status_fault(s, c)) { cmd_done(s, c); return; }
        c->t_due = (s->media_free > s->now ? s->media_free : s->now) + ssd_lat(s, s->p.flush_lat_us);
        c->state = CS_WAIT;
        return;
    case 0x01: case 0x02: {
        uint64_t n = (uint64_t)c->nlb + 1;
        if (c->slba + n > s->nsze || c->slba + n < c->slba) { cmd_fail(s, c, SCT_GEN, SC_LBA_RANGE); return; }
        uint64_t bytes = n * s->lba_size;
        if (s->p.mdts > 0 && bytes > (4096ull << (int)s->p.mdts)) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
        if (buf_ensure(c, bytes)) { cmd_fail(s, c, SCT_GEN, SC_INTERNAL); return; }
        c->dir = c->opc == 1 ? 1 : 2;
        prp_setup(s, c, bytes);
        return;
    }
    case 0x08: {  /* Write Zeroes */
        uint64_t n = (uint64_t)c->nlb + 1;
        if (c->slba + n > s->nsze || c->slba + n < c->slba) { cmd_fail(s, c, SCT_GEN, SC_LBA_RANGE); return; }
        if (status_fault(s, c)) { cmd_done(s, c); return; }
        uint64_t off = c->slba * s->lba_size, len = n * s->lba_size;
        punch(s, off, len);
        ssd_media_mark(s, off, len, 0);
        c->t_due = s->now + ssd_lat(s, s->p.write_lat_us);
        c->state = CS_WAIT;
        return;
    }
    case 0x09: {  /* Dataset Management */
        unsigned nr = (w[10] & 0xff) + 1;
        c->slba = 0; c->nlb = 0;
        buf_ensure(c, nr * 16);
        c->dir = 1;
        prp_setup(s, c, nr * 16);
        return;
    }
    }
}

/* After the PRPs are known. */
static void data_ready(ssd_t *s, ssd_cmd_t *c)
{
    c->seg_next = 0; c->xfer_issued = 0; c->xfer_done = 0;
    if (c->dir == 1) {
        c->state = CS_XFER_IN;
        if (!c->admin && c->opc == 1) {
            ssd_fault_t *f = ssd_fault_match(s, F_ROGUE, c->opc, c->sqid, c->slba, c->nlb);
            if (f && f->rogue_read) {
                uint64_t a = f->addr ? f->addr : c->prps[0] + f->off;
                pcie_dma_read(&s->ep, a & ~3ull, 64, NULL, NULL, 0);
            }
        }
        issue_in(s, c);
    } else if (c->admin) {
        c->state = CS_XFER_OUT;
        out_add(s, c);
    } else
        read_start(s, c);
}

static void cmd_start(ssd_t *s, ssd_cmd_t *c)
{
    uint32_t dw0 = c->sqe[0];
    c->opc = dw0 & 0xff;
    c->cid = dw0 >> 16;
    c->t_submit = s->now;
    c->state = CS_WAIT;
    c->t_due = PS_NEVER;
    if ((dw0 >> 8) & 3 || (dw0 >> 14) & 3) { cmd_fail(s, c, SCT_GEN, SC_INVALID_FIELD); return; }
    if (c->admin) {
        ssd_fault_t *f = ssd_fault_match(s, F_STATUS, 0x100 | c->opc, 0, 0, 0);
        if (f) { cmd_fail(s, c, f->sct, f->sc); c->dnr = f->dnr; return; }
        admin_exec(s, c);
    } else
        io_exec(s, c);
}

/* --- DMA completions ------------------------------------------------------------------------ */

static void sq_fetched(ssd_t *s, unsigned qid, int status);

static void dma_cb(void *dev, uint64_t cookie, int status)
{
    ssd_t *s = dev;
    s->now = s->ep.now;
    if (cookie & COOKIE_SQF) { sq_fetched(s, (unsigned)(cookie & 0xffff), status); return; }
    unsigned idx = cookie & 0xffff;
    uint32_t gen = (uint32_t)((cookie >> 16) & 0xffffff);
    uint32_t seg = (uint32_t)((cookie >> 40) & 0xfffff);
    if (idx >= SSD_MAX_CMDS) return;
    ssd_cmd_t *c = &s->cmds[idx];
    if (c->state == CS_FREE || (c->gen & 0xffffff) != gen) return;
    c->dma_pending--;
    if (status != PCIE_DMA_OK) {
        if (status == PCIE_DMA_NO_BME) { s->fatal = 1; s->csts |= 2; }
        if (c->state == CS_XFER_IN && c->opc == 1 && !c->admin) s->inflight_w -= (c->xfer_issued - c->xfer_done);
        cmd_cancel_dma(s, c);
        c->dma_pending = 0;
        errlog_add(s, c, c->slba);
        cmd_fail(s, c, SCT_GEN, SC_DATA_XFER);
        return;
    }
    if (cookie & COOKIE_PRP) { prp_list_arrived(s, c); return; }
    if (c->state != CS_XFER_IN) return;
    /* One data segment arrived. */
    uint64_t a, off; uint32_t l;
    seg_of(s, c, seg, &a, &l, &off);
    c->xfer_done += l;
    if (c->opc == 1 && !c->admin) {
        s->inflight_w -= l;
        s->s_w_bytes += l;
        ps_t end = ssd_media_write(s, s->now, l);
        if (c->xfer_done == c->bytes && s->p.cmd_cost_us > 0) {
            s->media_free += (ps_t)(s->p.cmd_cost_us * PS_PER_US);   /* per-command media cost */
            end = s->media_free;
        }
        wq_push(s, end, l);
    }
    if (c->xfer_done < c->bytes) { issue_in(s, c); return; }
    if (c->admin) { cmd_done(s, c); return; }
    if (c->opc == 1) {
        write_data_in(s, c);
    } else if (c->opc == 9) dsm_data_in(s, c);
}

/* --- SQ fetch ------------------------------------------------------------------------------- */

static void sq_fetched(ssd_t *s, unsigned qid, int status)
{
    ssd_sq_t *q = &s->sq[qid];
    if (!q->valid || !q->fetching) return;
    q->fetching = 0;
    if (status != PCIE_DMA_OK) {
        s->fatal = 1; s->csts |= 2;   /* cannot read commands: controller fatal */
        errlog_add(s, NULL, 0);
        return;
    }
    for (uint32_t i = 0; i < q->pending_fetch; i++) {
        ssd_cmd_t *c = cmd_alloc(s);
        if (!c) break;
        memcpy(c->sqe, q->fbuf + i * 64, 64);
        c->sqid = qid;
        c->admin = qid == 0;
        q->head = (q->head + 1) % q->size;
        cmd_start(s, c);
    }
    q->pending_fetch = 0;
}

static void fetch_sqs(ssd_t *s)
{
    if (s->fatal || !(s->csts & 1) || ((s->csts >> 2) & 3) == 2) return;
    for (unsigned k = 0; k < SSD_MAX_QUEUES; k++) {
        unsigned qid = (s->sq_rr + k) % SSD_MAX_QUEUES;
        ssd_sq_t *q = &s->sq[qid];
        if (!q->valid || q->fetching || q->head == q->tail) continue;
        if (s->nfree < 1) return;
        uint32_t avail = q->tail > q->head ? q->tail - q->head : q->size - q->head;
        uint32_t n = avail;
        uint32_t mrrs_n = pcie_cfg_mrrs(&s->ep.cs) / 64;
        if (n > (uint32_t)s->p.fetch_max) n = (uint32_t)s->p.fetch_max;
        if (n > mrrs_n) n = mrrs_n;
        if (n > (uint32_t)s->nfree) n = s->nfree;
        if (n > 64) n = 64;
        if (!n) continue;
        q->fetching = 1;
        q->pending_fetch = n;
        if (pcie_dma_read_first(&s->ep, q->base + (uint64_t)q->head * 64, n * 64, q->fbuf, dma_cb, COOKIE_SQF | qid)) {
            q->fetching = 0;
            s->fatal = 1; s->csts |= 2; s->bme_violations++;
            return;
        }
    }
    s->sq_rr = (s->sq_rr + 1) % SSD_MAX_QUEUES;
}

/* --- data out (device -> host) ---------------------------------------------------------------- */

static void pump_out(ssd_t *s)
{
    while (s->out_head && pcie_ep_tx_room(&s->ep)) {
        ssd_cmd_t *c = s->out_head;
        if (c->seg_next >= c->nprps || c->xfer_issued >= c->bytes) {
            s->out_head = c->next_out;
            c->next_out = NULL;
            cmd_done(s, c);
            continue;
        }
        uint64_t a, off; uint32_t len;
        seg_of(s, c, c->seg_next, &a, &len, &off);
        unsigned flags = 0;
        if (!c->admin && c->seg_next == 0) {
            ssd_fault_t *f;
            if ((f = ssd_fault_match(s, F_POISON, c->opc, c->sqid, c->slba, c->nlb))) flags |= PCIE_DMAW_POISON;
            if ((f = ssd_fault_match(s, F_ROGUE, c->opc, c->sqid, c->slba, c->nlb)) && !f->rogue_read) {
                uint64_t ra = f->addr ? f->addr : c->prps[0] + f->off;
                pcie_dma_write(&s->ep, ra & ~3ull, c->buf, 64, 0);
            }
            if ((f = ssd_fault_match(s, F_MALFORMED, c->opc, c->sqid, c->slba, c->nlb))) {
                pcie_tlp_t *t = pcie_tlp_alloc(&s->ep.link.pool);
                unsigned mps = pcie_cfg_mps(&s->ep.cs);
                if (f->mal_kind == 1) {        /* payload larger than MPS */
                    unsigned n = 2 * mps > TLP_MAX_PAYLOAD ? TLP_MAX_PAYLOAD : 2 * mps;
                    tlp_build_mem(t, 1, a & ~0xfffull, n / 4, pcie_ep_id(&s->ep), 0, 0xf, 0xf, c->buf, 0);
                } else if (f->mal_kind == 2) { /* crosses a 4 KiB boundary */
                    tlp_build_mem(t, 1, (a | 0xfc0) , 32, pcie_ep_id(&s->ep), 0, 0xf, 0xf, c->buf, 0);
                } else {                       /* length field disagrees with the payload */
                    tlp_build_mem(t, 1, a, 16, pcie_ep_id(&s->ep), 0, 0xf, 0xf, c->buf, 0);
                    t->hdr[0] = (t->hdr[0] & ~0x3ffu) | 32;
                }
                pcie_ep_send_raw(&s->ep, t);
            }
        }
        if (pcie_dma_write(&s->ep, a, c->buf + off, len, flags)) {
            s->fatal = 1; s->csts |= 2; s->bme_violations++;
            s->out_head = c->next_out;
            cmd_fail(s, c, SCT_GEN, SC_DATA_XFER);
            continue;
        }
        c->seg_next++;
        c->xfer_issued += len;
    }
}

/* --- registers -------------------------------------------------------------------------------- */

static uint32_t reg_read32(ssd_t *s, uint64_t off)
{
    switch (off) {
    case 0x00: return cap_lo(s);
    case 0x04: return cap_hi(s);
    case 0x08: return 0x00010400;
    case 0x0c: case 0x10: return s->intms;
    case 0x14: return s->cc;
    case 0x1c: return s->csts;
    case 0x24: return s->aqa;
    case 0x28: return (uint32_t)s->asq;
    case 0x2c: return (uint32_t)(s->asq >> 32);
    case 0x30: return (uint32_t)s->acq;
    case 0x34: return (uint32_t)(s->acq >> 32);
    }
    if (off >= MSIX_TABLE && off < MSIX_TABLE + (uint64_t)s->p.msix_vectors * 16)
        return s->msix_table[(off - MSIX_TABLE) / 4];
    if (off == MSIX_PBA) return (uint32_t)s->msix_pba;
    if (off == MSIX_PBA + 4) return (uint32_t)(s->msix_pba >> 32);
    return 0;
}

static void cc_write(ssd_t *s, uint32_t v)
{
    uint32_t old = s->cc;
    s->cc = v & 0x00fffff1;
    int en_old = old & 1, en = v & 1;
    if (!en_old && en) {
        unsigned mps = (v >> 7) & 0xf, css = (v >> 4) & 7, ams = (v >> 11) & 7;
        unsigned asqs = (s->aqa & 0xfff) + 1, acqs = ((s->aqa >> 16) & 0xfff) + 1;
        s->csts &= ~0xcu;   /* SHST = 0 */
        if (mps > 4 || css != 0 || ams != 0 || asqs < 2 || acqs < 2 || (s->asq & 0xfff) || (s->acq & 0xfff)) {
            s->csts |= 2;
            s->fatal = 1;
            return;
        }
        s->page_size = 4096u << mps;
        memset(&s->sq[0], 0, sizeof(s->sq[0]));
        memset(&s->cq[0], 0, sizeof(s->cq[0]));
        s->sq[0].valid = 1; s->sq[0].base = s->asq; s->sq[0].size = asqs; s->sq[0].cqid = 0;
        if (!s->sq[0].fbuf) s->sq[0].fbuf = malloc(64 * 64);
        s->cq[0].valid = 1; s->cq[0].base = s->acq; s->cq[0].size = acqs; s->cq[0].phase = 1;
        s->cq[0].ien = 1; s->cq[0].iv = 0; s->cq[0].nsq = 1;
        s->rdy_target = 1;
        s->rdy_at = s->rdy_fail ? PS_NEVER : s->now + (ps_t)(s->p.rdy_us * PS_PER_US) + s->rdy_extra;
    } else if (en_old && !en) {
        ssd_reset_controller(s, 0);
        s->cc = v & 0x00fffff0;
        s->rdy_target = 0;
        s->rdy_at = s->now + (ps_t)(s->p.rdy_us * PS_PER_US);
    }
    unsigned shn = (v >> 14) & 3;
    if (en && shn && !((old >> 14) & 3)) {
        s->csts = (s->csts & ~0xcu) | (1u << 2);
        ps_t t = s->media_free > s->now ? s->media_free : s->now;
        s->shn_at = t + (ps_t)(s->p.shn_us * PS_PER_US);
    }
}

static void doorbell(ssd_t *s, uint64_t off, uint32_t v)
{
    uint32_t stride = db_stride(s);
    uint64_t rel = off - 0x1000;
    if (rel % stride) return;
    unsigned idx = (unsigned)(rel / stride), qid = idx / 2;
    if (qid >= SSD_MAX_QUEUES) { aer_event(s, 0, 0, 1); return; }
    if (idx & 1) {
        ssd_cq_t *q = &s->cq[qid];
        if (!q->valid) { errlog_add(s, NULL, 0); aer_event(s, 0, 0, 1); return; }
        if (v >= q->size) { errlog_add(s, NULL, 0); aer_event(s, 0, 1, 1); return; }
        q->head = v;
    } else {
        ssd_sq_t *q = &s->sq[qid];
        if (!q->valid) { errlog_add(s, NULL, 0); aer_event(s, 0, 0, 1); return; }
        if (v >= q->size) { errlog_add(s, NULL, 0); aer_event(s, 0, 1, 1); return; }
        q->tail = v;
    }
}

static int bar_read(void *dev, int bar, uint64_t off, uint8_t *buf, unsigned len)
{
    ssd_t *s = dev;
    s->now = s->ep.now;
    if (bar != 0) return -1;
    for (unsigned i = 0; i < len; i += 4) {
        uint32_t v = reg_read32(s, off + i);
        memcpy(buf + i, &v, 4);
    }
    return 0;
}

static void bar_write(void *dev, int bar, uint64_t off, const uint8_t *buf, unsigned len)
{
    ssd_t *s = dev;
    s->now = s->ep.now;
    if (bar != 0) return;
    /* dword granularity (partial writes merge into the register) */
    uint64_t a = off & ~3ull;
    uint64_t end = off + len;
    for (; a < end; a += 4) {
        uint32_t cur = reg_read32(s, a), v = cur;
        for (unsigned b = 0; b < 4; b++)
            if (a + b >= off && a + b < end) v = (v & ~(0xffu << (8 * b))) | ((uint32_t)buf[a + b - off] << (8 * b));
        if (a >= 0x1000 && a < MSIX_TABLE) { doorbell(s, a, v); continue; }
        if (a >= MSIX_TABLE && a < MSIX_TABLE + (uint64_t)s->p.msix_vectors * 16) {
            unsigned i = (unsigned)((a - MSIX_TABLE) / 4);
            s->msix_table[i] = (i & 3) == 3 ? (v & 1) : v;
            if ((i & 3) == 3 && !(v & 1) && (s->msix_pba >> (i / 4) & 1)) {
                s->msix_pba &= ~(1ull << (i / 4));
                msix_fire(s, i / 4);
            }
            continue;
        }
        switch (a) {
        case 0x0c: s->intms |= v; break;
        case 0x10: s->intms &= ~v; break;
        case 0x14: cc_write(s, v); break;
        case 0x24: s->aqa = v & 0x0fff0fff; break;
        case 0x28: s->asq = (s->asq & ~0xffffffffull) | (v & ~0xfffu); break;
        case 0x2c: s->asq = (s->asq & 0xffffffffull) | ((uint64_t)v << 32); break;
        case 0x30: s->acq = (s->acq & ~0xffffffffull) | (v & ~0xfffu); break;
        case 0x34: s->acq = (s->acq & 0xffffffffull) | ((uint64_t)v << 32); break;
        default: break;
        }
    }
}

/* --- reset ------------------------------------------------------------------------------------ */

void ssd_reset_controller(ssd_t *s, int full)
{
    while (s->nactive) {
        ssd_cmd_t *c = &s->cmds[s->active[s->nactive - 1]];
        cmd_cancel_dma(s, c);
        cmd_free(s, c);
    }
    for (unsigned q = 0; q < SSD_MAX_QUEUES; q++) {
        if (s->sq[q].valid) pcie_dma_cancel(&s->ep, COOKIE_SQF | q);
        free(s->sq[q].fbuf);
        memset(&s->sq[q], 0, sizeof(s->sq[q]));
        memset(&s->cq[q], 0, sizeof(s->cq[q]));
    }
    s->out_head = NULL;
    s->inflight_w = 0;
    s->wq_n = 0; s->wq_bytes = 0;
    s->naer = 0; s->naerq = 0; s->aer_pending_mask = 0;
    s->nsqa = s->ncqa = (unsigned)s->p.max_queues;
    s->csts &= ~1u;
    s->fatal = 0;
    s->csts &= ~2u;
    if (full) {
        s->cc = 0; s->csts = 0; s->aqa = 0; s->asq = s->acq = 0; s->intms = 0;
        s->rdy_target = 0; s->rdy_at = PS_NEVER; s->shn_at = PS_NEVER;
        memset(s->msix_table, 0, sizeof(s->msix_table));
        for (int v = 0; v < 64; v++) s->msix_table[v * 4 + 3] = 1;
        s->msix_pba = 0;
        s->vwc = 1;
        memset(s->feat, 0, sizeof(s->feat));
    }
}

static void dev_reset(void *dev, int kind)
{
    ssd_t *s = dev;
    (void)kind;
    ssd_reset_controller(s, 1);
}

/* --- tick ------------------------------------------------------------------------------------- */

static int cmp_age(const void *a, const void *b)
{
    const ssd_cmd_t *x = *(ssd_cmd_t *const *)a, *y = *(ssd_cmd_t *const *)b;
    return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static ps_t dev_tick(void *dev, ps_t now)
{
    ssd_t *s = dev;
    ps_t next = PS_NEVER;
    s->now = now;
    if (now >= s->next_fault_time) ssd_faults_timed(s, now);
    if (s->next_fault_time < next) next = s->next_fault_time;
    if (s->cfs_pending && now >= s->cfs_at) { s->cfs_pending = 0; s->fatal = 1; s->csts |= 2; }
    if (s->cfs_pending && s->cfs_at < next) next = s->cfs_at;
    if (s->rdy_at <= now) {
        s->csts = (s->csts & ~1u) | (s->rdy_target ? 1u : 0u);
        s->rdy_at = PS_NEVER;
    }
    if (s->rdy_at < next) next = s->rdy_at;
    if (s->shn_at <= now) {
        s->csts = (s->csts & ~0xcu) | (2u << 2);
        s->shn_at = PS_NEVER;
    }
    if (s->shn_at < next) next = s->shn_at;
    /* thermal + samples */
    if (now >= s->next_sample) {
        ssd_media_idle(s, now);
        ssd_thermal(s, now);
        if (s->temp > s->temp_over[0] - 273.15) aer_event(s, 1, 0x01, 0x02);
        ssd_sample(s, now);
        s->next_sample = now + (ps_t)(s->p.sample_us * PS_PER_US);
    }
    int busy = 0;
    static ssd_cmd_t *xin[SSD_MAX_CMDS];
    int nin = 0;
    if (!s->fatal) {
        fetch_sqs(s);
        for (int pass = 0; pass < 2; pass++) {
            for (int i = s->nactive - 1; i >= 0; i--) {
                if (i >= s->nactive) continue;
                ssd_cmd_t *c = &s->cmds[s->active[i]];
                switch (c->state) {
                case CS_FREE: case CS_LOST: continue;
                case CS_XFER_IN:
                    busy = 1;
                    if (c->xfer_issued < c->bytes && nin < SSD_MAX_CMDS) xin[nin++] = c;
                    break;
                case CS_MEDIA_R:
                    busy = 1;
                    if (c->t_due <= now) read_media_done(s, c);
                    else if (c->t_due < next) next = c->t_due;
                    break;
                case CS_WAIT:
                    busy = 1;
                    if (c->t_due <= now) cmd_done(s, c);
                    else if (c->t_due < next) next = c->t_due;
                    break;
                case CS_DONE:
                    cmd_post(s, c);
                    break;
                default:
                    busy = 1;
                    break;
                }
            }
            /* Host -> device data: oldest command first. */
            if (nin > 1) qsort(xin, nin, sizeof(xin[0]), cmp_age);
            for (int k = 0; k < nin; k++) {
                ssd_cmd_t *c = xin[k];
                if (c->state != CS_XFER_IN) continue;
                issue_in(s, c);
                if (c->state == CS_XFER_IN && c->xfer_issued < c->bytes) {
                    ps_t t = write_room_at(s);
                    if (t < next) next = t;
                    break;
                }
            }
            nin = 0;
            pump_out(s);
            fetch_sqs(s);
        }
        if (s->out_head) { busy = 1; ps_t r = pcie_ep_tx_room_at(&s->ep); if (r < next) next = r; }
    }
    if (busy || s->media_free > now || s->sample_log) {
        if (s->next_sample < next) next = s->next_sample;
    }
    s->ctl_cycles++;
    return next;
}

static void cfg_written(void *dev, unsigned off, uint32_t old, uint32_t val)
{
    ssd_t *s = dev;
    (void)old; (void)val;
    if (off == 0x04 && !(val & 4) && (old & 4)) {
        /* BME cleared: nothing may be requested any more */
    }
    (void)s;
}

static int host_req_hook(void *dev, pcie_tlp_t *t)
{
    ssd_t *s = dev;
    s->now = s->ep.now;
    uint64_t off;
    int bar = pcie_cfg_bar_hit(&s->ep.cs, tlp_addr(t), tlp_len_dw(t) * 4, &off);
    if (bar != 0) return -1;
    for (int kind = F_BAR_UR; kind <= F_BAR_DROP; kind++) {
        ssd_fault_t *f = ssd_fault_match(s, kind, -1, (int)off, off, 0);
        if (!f) continue;
        switch (kind) {
        case F_BAR_UR: return CPL_UR;
        case F_BAR_CA: return CPL_CA;
        case F_BAR_POISON: return 0x100;
        case F_BAR_DROP: return 0x200;
        }
    }
    return -1;
}

const pcie_dev_ops_t ssd_dev_ops = {
    .bar_read = bar_read,
    .bar_write = bar_write,
    .cfg_written = cfg_written,
    .reset = dev_reset,
    .tick = dev_tick,
    .unhandled = NULL,
};

int ssd_init(ssd_t *s, char *err, size_t errlen)
{
    if (0x1000 + 2u * ((unsigned)s->p.max_queues + 1) * db_stride(s) > MSIX_TABLE) {
        snprintf(err, errlen, "max_queues=%g with dstrd=%g: the doorbells do not fit below the MSI-X "
            "table at 0x%x (reduce max_queues or dstrd)", s->p.max_queues, s->p.dstrd, MSIX_TABLE);
        return -1;
    }
    if (s->p.rdy_us * PS_PER_US > s->p.cap_to * 500e3 * PS_PER_US) {
        snprintf(err, errlen, "rdy_us=%g exceeds CAP.TO (cap_to=%g x 500 ms)", s->p.rdy_us, s->p.cap_to);
        return -1;
    }
    pcie_ep_cfg_t ec;
    memset(&ec, 0, sizeof(ec));
    ec.ids.vendor = 0x1ee7;
    ec.ids.device = 0x5100;
    ec.ids.subsys_vendor = 0x1ee7;
    ec.ids.subsys = 0x0001;
    ec.ids.revision = 0x01;
    ec.ids.class_code = 0x010802;
    ec.max_tags = (unsigned)s->p.max_tags;
    ec.cpl_timeout_ps = (ps_t)(s->p.cpl_timeout_us * PS_PER_US);
    ec.crs_ps = (ps_t)(s->p.crs_us * PS_PER_US);
    ec.tx_backlog_ps = (ps_t)(s->p.tx_backlog_ns * PS_PER_NS);
    pcie_link_cfg_t lc;
    memset(&lc, 0, sizeof(lc));
    lc.gen = s->gen; lc.width = s->width;
    lc.dllp_share = s->p.dllp_pct / 100.0;
    lc.latency_ps = (ps_t)(s->p.link_latency_ns * PS_PER_NS);
    lc.train_ps = (ps_t)(s->p.train_us * PS_PER_US);
    lc.retrain_ps = lc.train_ps;
    lc.up_credits = (unsigned)s->p.up_credits;
    lc.dn_credits = (unsigned)s->p.dn_credits;
    lc.dn_backlog_ps = (ps_t)(s->p.dn_backlog_ns * PS_PER_NS);
    pcie_ep_init(&s->ep, &ec, &lc, &ssd_dev_ops, s);
    s->ep.host_req_hook = host_req_hook;
    pcie_cfg_add_bar(&s->ep.cs, 0, BAR0_SIZE, 1, 0);
    pcie_cfg_add_pm(&s->ep.cs);
    pcie_cfg_add_msix(&s->ep.cs, (unsigned)s->p.msix_vectors, 0, MSIX_TABLE, MSIX_PBA);
    pcie_cfg_add_pcie(&s->ep.cs, s->mps_cap, s->gen, s->width);
    pcie_ep_config_done(&s->ep);
    for (int i = 0; i < SSD_MAX_CMDS; i++) { s->cmds[i].idx = i; s->free_cmds[i] = SSD_MAX_CMDS - 1 - i; }
    s->nactive = 0;
    s->nfree = SSD_MAX_CMDS;
    ssd_reset_controller(s, 1);
    s->temp = s->p.temp_ambient;
    s->temp_over[0] = s->temp_over[1] = kelvin(s->p.wctemp);
    s->temp_under[0] = s->temp_under[1] = 0;
    s->next_sample = 0;
    return 0;
}
