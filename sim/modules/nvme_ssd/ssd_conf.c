/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Configuration (JSON args), fault specs, control channel, logs, life cycle.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <json-c/json.h>
#include "ssd.h"

/* --- faults ------------------------------------------------------------------------------------ */

static const struct { const char *name; int kind; int sct, sc; int op; int64_t count; } fault_kinds[] = {
    { "write-fault",    F_STATUS, 2, 0x80, 0x01, -1 },
    { "read-error",     F_STATUS, 2, 0x81, 0x02, -1 },
    { "internal-error", F_STATUS, 0, 0x06, -1, -1 },
    { "status",         F_STATUS, 0, 0x06, -1, -1 },
    { "drop-cqe",       F_DROP_CQE, 0, 0, -1, 1 },
    { "cfs",            F_CFS, 0, 0, -1, 1 },
    { "rdy-slow",       F_RDY_SLOW, 0, 0, -1, -1 },
    { "rdy-fail",       F_RDY_FAIL, 0, 0, -1, -1 },
    { "link-down",      F_LINK_DOWN, 0, 0, -1, 1 },
    { "retrain",        F_RETRAIN, 0, 0, -1, 1 },
    { "bar-ur",         F_BAR_UR, 0, 0, -1, 1 },
    { "bar-ca",         F_BAR_CA, 0, 0, -1, 1 },
    { "bar-poison",     F_BAR_POISON, 0, 0, -1, 1 },
    { "bar-drop",       F_BAR_DROP, 0, 0, -1, 1 },
    { "poison",         F_POISON, 0, 0, 0x02, 1 },
    { "malformed",      F_MALFORMED, 0, 0, 0x02, 1 },
    { "rogue",          F_ROGUE, 0, 0, -1, 1 },
    { "bitflip",        F_BITFLIP, 0, 0, 0x02, 1 },
    { "ns-not-ready",   F_NS_NOT_READY, 0, 0, -1, -1 },
    { "busy",           F_BUSY, 0, 0, -1, 1 },
    { NULL, 0, 0, 0, 0, 0 }
};

#define FAULT_KINDS "write-fault, read-error, internal-error, status, drop-cqe, cfs, rdy-slow, " \
    "rdy-fail, link-down, retrain, bar-ur, bar-ca, bar-poison, bar-drop, poison, malformed, rogue, " \
    "bitflip, ns-not-ready, busy"

static int parse_op(const char *v, int *op)
{
    static const struct { const char *n; int op; } ops[] = {
        { "any", -1 }, { "flush", 0 }, { "write", 1 }, { "read", 2 }, { "wz", 8 },
        { "write-zeroes", 8 }, { "dsm", 9 }, { NULL, 0 } };
    for (int i = 0; ops[i].n; i++) if (!strcmp(v, ops[i].n)) { *op = ops[i].op; return 0; }
    int admin = 0;
    if (!strncmp(v, "admin:", 6)) { admin = 1; v += 6; }
    char *end;
    long x = strtol(v, &end, 0);
    if (*end || end == v || x < 0 || x > 255) return -1;
    *op = (admin ? 0x100 : 0) | (int)x;
    return 0;
}

static int parse_u64(const char *v, uint64_t *out)
{
    double d;
    if (ssd_parse_number(v, &d) || d < 0) return -1;
    *out = (uint64_t)d;
    return 0;
}

int ssd_fault_add(ssd_t *s, const char *spec, char *err, size_t errlen)
{
    char buf[256];
    if (strlen(spec) >= sizeof(buf) - 1 || !*spec) {
        snprintf(err, errlen, "fault spec '%s': empty or too long", spec);
        return -1;
    }
    if (s->nfaults >= SSD_MAX_FAULTS) {
        snprintf(err, errlen, "too many faults (max %d)", SSD_MAX_FAULTS);
        return -1;
    }
    strcpy(buf, spec);
    char *opts = strchr(buf, ':');
    if (opts) *opts++ = 0;
    int k;
    for (k = 0; fault_kinds[k].name; k++) if (!strcmp(buf, fault_kinds[k].name)) break;
    if (!fault_kinds[k].name) {
        snprintf(err, errlen, "fault spec '%s': unknown kind '%s' (allowed: " FAULT_KINDS ")", spec, buf);
        return -1;
    }
    ssd_fault_t f;
    memset(&f, 0, sizeof(f));
    f.kind = fault_kinds[k].kind;
    f.sct = fault_kinds[k].sct; f.sc = fault_kinds[k].sc; f.op = fault_kinds[k].op;
    f.count = fault_kinds[k].count;
    f.qid = -1; f.lba_lo = 0; f.lba_hi = UINT64_MAX; f.dnr = 1; f.bit = -1; f.reg = -1;
    f.off = 1 << 20;
    f.for_ps = f.kind == F_RETRAIN ? 10 * PS_PER_US : 100 * PS_PER_US;
    if (f.kind == F_NS_NOT_READY || f.kind == F_RDY_SLOW) f.for_ps = 0;
    int have_for = 0, have_at = 0;
    while (opts && *opts) {
        char *next = strchr(opts, ',');
        if (next) *next++ = 0;
        char *eq = strchr(opts, '=');
        if (!eq) { snprintf(err, errlen, "fault spec '%s': option '%s' is not key=value", spec, opts); return -1; }
        *eq = 0;
        const char *key = opts, *val = eq + 1;
        uint64_t u = 0;
        int bad = 0;
        if (!strcmp(key, "op")) bad = parse_op(val, &f.op);
        else if (!strcmp(key, "lba")) {
            char *dash = strchr(val, '-');
            if (dash) { *dash = 0; bad = parse_u64(val, &f.lba_lo) || parse_u64(dash + 1, &f.lba_hi) || f.lba_hi < f.lba_lo; }
            else { bad = parse_u64(val, &f.lba_lo); f.lba_hi = f.lba_lo; }
        }
        else if (!strcmp(key, "qid")) { bad = parse_u64(val, &u) || u > 65535; f.qid = (int)u; }
        else if (!strcmp(key, "count")) {
            if (!strcmp(val, "inf")) f.count = -1;
            else { bad = parse_u64(val, &u) || u == 0; f.count = (int64_t)u; }
        }
        else if (!strcmp(key, "skip")) { bad = parse_u64(val, &u); f.skip = (int64_t)u; }
        else if (!strcmp(key, "sct")) { bad = parse_u64(val, &u) || u > 7; f.sct = (int)u; }
        else if (!strcmp(key, "sc")) { bad = parse_u64(val, &u) || u > 255; f.sc = (int)u; }
        else if (!strcmp(key, "dnr")) { bad = parse_u64(val, &u) || u > 1; f.dnr = (int)u; }
        else if (!strcmp(key, "at_us")) { double d; bad = ssd_parse_number(val, &d) || d < 0; f.at_ps = (ps_t)(d * PS_PER_US); have_at = 1; }
        else if (!strcmp(key, "for_us") || !strcmp(key, "us")) { double d; bad = ssd_parse_number(val, &d) || d < 0; f.for_ps = (ps_t)(d * PS_PER_US); have_for = 1; }
        else if (!strcmp(key, "addr")) bad = parse_u64(val, &f.addr);
        else if (!strcmp(key, "off")) bad = parse_u64(val, &f.off);
        else if (!strcmp(key, "dir")) { if (!strcmp(val, "read")) f.rogue_read = 1; else if (strcmp(val, "write")) bad = 1; }
        else if (!strcmp(key, "kind")) {
            if (!strcmp(val, "len")) f.mal_kind = 0; else if (!strcmp(val, "mps")) f.mal_kind = 1;
            else if (!strcmp(val, "4k")) f.mal_kind = 2; else bad = 1;
        }
        else if (!strcmp(key, "bit")) { bad = parse_u64(val, &u); f.bit = (int)u; }
        else if (!strcmp(key, "reg")) { bad = parse_u64(val, &u) || u >= 0x4000; f.reg = (int)u; }
        else {
            snprintf(err, errlen, "fault spec '%s': unknown option '%s' (allowed: op, lba, qid, count, skip, "
                "sct, sc, dnr, at_us, for_us, addr, off, dir, kind, bit, reg)", spec, key);
            return -1;
        }
        if (bad) {
            snprintf(err, errlen, "fault spec '%s': bad value '%s' for '%s'", spec, val, key);
            return -1;
        }
        opts = next;
    }
    (void)have_for; (void)have_at;
    /* A rogue read happens on a Write's data fetch, a rogue write on a Read's data transfer: without
     * op=, the fault waits for a command of that kind (another command must not use it up). */
    if (f.kind == F_ROGUE && f.op == -1)
        f.op = f.rogue_read ? 0x01 : 0x02;
    f.id = ++s->next_fault_id;
    f.active = 1;
    snprintf(f.spec, sizeof(f.spec), "%s", spec);
    if (f.kind == F_RDY_FAIL) s->rdy_fail = 1;
    if (f.kind == F_RDY_SLOW) s->rdy_extra = f.for_ps;
    if (f.kind == F_NS_NOT_READY && f.for_ps) { s->ns_not_ready_until = s->now + f.for_ps; f.active = 0; }
    if (f.kind == F_CFS || f.kind == F_LINK_DOWN || f.kind == F_RETRAIN || f.kind == F_BUSY) {
        f.at_ps = f.at_ps > s->now ? f.at_ps : s->now;
        if (f.at_ps < s->next_fault_time) s->next_fault_time = f.at_ps;
        pcie_ep_kick(&s->ep);
    }
    s->faults[s->nfaults++] = f;
    return f.id;
}

static int fault_clear(ssd_t *s, int id)
{
    int n = 0;
    for (int i = 0; i < s->nfaults; i++) {
        if (id && s->faults[i].id != id) continue;
        if (s->faults[i].kind == F_RDY_FAIL) s->rdy_fail = 0;
        if (s->faults[i].kind == F_RDY_SLOW) s->rdy_extra = 0;
        memmove(&s->faults[i], &s->faults[i + 1], sizeof(s->faults[0]) * (s->nfaults - i - 1));
        s->nfaults--; i--; n++;
    }
    if (!id) s->ns_not_ready_until = 0;
    return n;
}

ssd_fault_t *ssd_fault_match(ssd_t *s, int kind, int op, int qid, uint64_t slba, uint32_t nlb)
{
    for (int i = 0; i < s->nfaults; i++) {
        ssd_fault_t *f = &s->faults[i];
        if (!f->active || f->kind != kind || f->count == 0) continue;
        if (kind == F_BAR_UR || kind == F_BAR_CA || kind == F_BAR_POISON || kind == F_BAR_DROP) {
            if (f->reg >= 0 && (uint64_t)f->reg != (slba & ~3ull)) continue;
        } else {
            if (f->op != -1 && f->op != op) continue;
            if (f->op == -1 && (op & 0x100)) continue;      /* "any" means any I/O opcode */
            if (f->qid != -1 && f->qid != qid) continue;
            if (f->lba_hi != UINT64_MAX || f->lba_lo != 0) {
                uint64_t last = slba + nlb;
                if (last < f->lba_lo || slba > f->lba_hi) continue;
            }
        }
        if (f->skip > 0) { f->skip--; continue; }
        if (f->count > 0) f->count--;
        f->fired++;
        return f;
    }
    return NULL;
}

void ssd_faults_timed(ssd_t *s, ps_t now)
{
    ps_t next = PS_NEVER;
    for (int i = 0; i < s->nfaults; i++) {
        ssd_fault_t *f = &s->faults[i];
        if (!f->active || f->count == 0) continue;
        if (f->kind != F_CFS && f->kind != F_LINK_DOWN && f->kind != F_RETRAIN && f->kind != F_BUSY) continue;
        if (f->at_ps > now) { if (f->at_ps < next) next = f->at_ps; continue; }
        f->count = 0;
        f->fired++;
        switch (f->kind) {
        case F_CFS: s->fatal = 1; s->csts |= 2; break;
        case F_LINK_DOWN: pcie_ep_link_down(&s->ep, now, f->for_ps); break;
        case F_RETRAIN: pcie_ep_retrain(&s->ep, now, f->for_ps); break;
        case F_BUSY:
            if (s->ep.link.dn_free < now + f->for_ps) s->ep.link.dn_free = now + f->for_ps;
            break;
        }
    }
    s->next_fault_time = next;
}

/* --- logs -------------------------------------------------------------------------------------- */

void ssd_sample(ssd_t *s, ps_t now)
{
    static const double mb = 1e6;
    if (!s->sample_log) { s->s_w_bytes = s->s_r_bytes = s->s_ios = 0; return; }
    double dt = s->p.sample_us / 1e6;
    uint64_t erased_pct = s->phys_units ? s->erased_units * 100 / s->phys_units : 0;
    fprintf(s->sample_log, "%.3f,%.3f,%.3f,%.1f,%.2f,%.0f,%.0f,%d,%d,%llu,%d\n",
        now / 1e6, s->s_w_bytes / dt / mb, s->s_r_bytes / dt / mb, s->s_ios / dt, s->temp,
        s->cache_used, s->cache2_used, s->throttle, s->gc_phase || (s->phys_units &&
        s->erased_units <= s->phys_units * s->p.gc_free_pct / 100.0 && s->stale_units),
        (unsigned long long)erased_pct, s->nactive);
    s->s_w_bytes = s->s_r_bytes = s->s_ios = 0;
}

/* --- control --------------------------------------------------------------------------------- */

static int stats_line(ssd_t *s, char *out, size_t n)
{
    ssd_thermal(s, s->now);
    return snprintf(out, n,
        "t_ns=%.0f bytes_written=%llu bytes_read=%llu host_writes=%llu host_reads=%llu cmds=%llu "
        "temp_c=%.2f throttle=%d tmt1_count=%u tmt2_count=%u cache_used=%.0f cache2_used=%.0f "
        "valid_units=%llu stale_units=%llu erased_units=%llu phys_units=%llu media_errors=%llu "
        "errors=%llu csts=0x%x link_up=%d link_gen=%u link_width=%u ltssm=0x%02x link_downs=%u retrains=%u "
        "up_tlps=%llu dn_tlps=%llu dropped_tlps=%llu cpl_timeouts=%llu ur_sent=%llu ca_sent=%llu "
        "crs_sent=%llu malformed_rx=%llu unexpected_cpl=%llu dma_refused=%llu max_mrd=%u max_mwr=%u "
        "active_cmds=%d faults=%d",
        s->now / 1e3, (unsigned long long)s->bytes_written, (unsigned long long)s->bytes_read,
        (unsigned long long)s->host_writes, (unsigned long long)s->host_reads,
        (unsigned long long)s->cmds_done, s->temp, s->throttle, s->tmt_count[1], s->tmt_count[2],
        s->cache_used, s->cache2_used, (unsigned long long)s->valid_units,
        (unsigned long long)s->stale_units, (unsigned long long)s->erased_units,
        (unsigned long long)s->phys_units, (unsigned long long)s->media_errors,
        (unsigned long long)s->err_count, s->csts, s->ep.link.up, s->ep.link.cur_gen,
        s->ep.link.cur_width, s->ep.link.ltssm, s->ep.link.link_downs, s->ep.link.retrains,
        (unsigned long long)s->ep.link.up_tlps, (unsigned long long)s->ep.link.dn_tlps,
        (unsigned long long)s->ep.link.dropped, (unsigned long long)s->ep.cpl_timeouts,
        (unsigned long long)s->ep.ur_sent, (unsigned long long)s->ep.ca_sent,
        (unsigned long long)s->ep.crs_sent, (unsigned long long)s->ep.malformed_rx,
        (unsigned long long)s->ep.unexpected_cpl, (unsigned long long)s->ep.dma_refused,
        s->ep.max_mrd_len, s->ep.max_mwr_len, s->nactive, s->nfaults);
}

int ssd_control(ssd_t *s, const char *cmd, char *out, size_t outlen)
{
    if (s->ep.now > s->now) s->now = s->ep.now;
    char buf[512], err[256];
    snprintf(buf, sizeof(buf), "%s", cmd);
    size_t l = strlen(buf);
    while (l && isspace((unsigned char)buf[l - 1])) buf[--l] = 0;
    char *arg = buf;
    while (isspace((unsigned char)*arg)) arg++;
    char *verb = strsep(&arg, " ");
    if (arg) while (isspace((unsigned char)*arg)) arg++;
    if (!verb || !*verb) { snprintf(out, outlen, "error: empty command"); return -1; }
    if (!strcmp(verb, "fault")) {
        char *sub = arg ? strsep(&arg, " ") : NULL;
        if (sub && !strcmp(sub, "add") && arg && *arg) {
            int id = ssd_fault_add(s, arg, err, sizeof(err));
            if (id < 0) { snprintf(out, outlen, "error: %s", err); return -1; }
            snprintf(out, outlen, "ok id=%d", id);
            return 0;
        }
        if (sub && !strcmp(sub, "clear")) {
            int id = 0;
            if (arg && *arg && strcmp(arg, "all")) id = atoi(arg);
            snprintf(out, outlen, "ok cleared=%d", fault_clear(s, id));
            return 0;
        }
        if (sub && !strcmp(sub, "list")) {
            size_t n = 0;
            n += snprintf(out + n, outlen - n, "ok faults=%d", s->nfaults);
            for (int i = 0; i < s->nfaults && n < outlen; i++)
                n += snprintf(out + n, outlen - n, " [%d %s fired=%d]", s->faults[i].id, s->faults[i].spec, s->faults[i].fired);
            return 0;
        }
        snprintf(out, outlen, "error: usage: fault add SPEC | fault clear [ID|all] | fault list");
        return -1;
    }
    if (!strcmp(verb, "set")) {
        if (!arg || !*arg) { snprintf(out, outlen, "error: usage: set KEY=VALUE [KEY=VALUE...]"); return -1; }
        char *kv;
        while ((kv = strsep(&arg, " "))) {
            if (!*kv) continue;
            char *eq = strchr(kv, '=');
            if (!eq) { snprintf(out, outlen, "error: '%s' is not KEY=VALUE", kv); return -1; }
            *eq = 0;
            if (ssd_param_set(&s->p, kv, eq + 1, err, sizeof(err))) { snprintf(out, outlen, "error: %s", err); return -1; }
        }
        pcie_ep_kick(&s->ep);
        snprintf(out, outlen, "ok");
        return 0;
    }
    if (!strcmp(verb, "get")) {
        const ssd_param_desc_t *d = arg ? ssd_param_find(arg) : NULL;
        if (!d) { snprintf(out, outlen, "error: unknown parameter '%s'", arg ? arg : ""); return -1; }
        snprintf(out, outlen, "ok %s=%.17g", d->name, *(double *)((char *)&s->p + d->off));
        return 0;
    }
    if (!strcmp(verb, "link")) {
        char *sub = arg ? strsep(&arg, " ") : NULL;
        double us = arg && *arg ? atof(arg) : 0;
        if (sub && !strcmp(sub, "down")) {
            pcie_ep_link_down(&s->ep, s->now, (ps_t)((us > 0 ? us : 100) * PS_PER_US));
            snprintf(out, outlen, "ok");
            return 0;
        }
        if (sub && !strcmp(sub, "retrain")) {
            pcie_ep_retrain(&s->ep, s->now, (ps_t)((us > 0 ? us : 10) * PS_PER_US));
            snprintf(out, outlen, "ok");
            return 0;
        }
        snprintf(out, outlen, "error: usage: link down [US] | link retrain [US]");
        return -1;
    }
    if (!strcmp(verb, "stats")) {
        int n = snprintf(out, outlen, "ok ");
        stats_line(s, out + n, outlen - n);
        return 0;
    }
    if (!strcmp(verb, "log") && arg && !strcmp(arg, "flush")) {
        if (s->cmd_log) fflush(s->cmd_log);
        if (s->sample_log) fflush(s->sample_log);
        snprintf(out, outlen, "ok");
        return 0;
    }
    snprintf(out, outlen, "error: unknown command '%s' (fault, set, get, link, stats, log flush)", verb);
    return -1;
}

void ssd_poll_control(ssd_t *s)
{
    if (s->ctl_fd < 0) return;
    for (;;) {
        char buf[512], out[4096];
        struct sockaddr_un from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(s->ctl_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n <= 0) return;
        buf[n] = 0;
        ssd_control(s, buf, out, sizeof(out));
        if (fl > sizeof(sa_family_t))
            sendto(s->ctl_fd, out, strlen(out), MSG_DONTWAIT, (struct sockaddr *)&from, fl);
        else
            fprintf(stderr, "[nvme_ssd%d] %s -> %s\n", s->index, buf, out);
    }
}

/* --- JSON args ----------------------------------------------------------------------------------- */

static int jstr(json_object *o, const char *k, char *dst, size_t n, const char *def)
{
    json_object *v;
    if (json_object_object_get_ex(o, k, &v) && !json_object_is_type(v, json_type_null))
        snprintf(dst, n, "%s", json_object_get_string(v));
    else
        snprintf(dst, n, "%s", def);
    return 0;
}

static int jnum(json_object *o, const char *k, double *dst, double def, char *err, size_t errlen)
{
    json_object *v;
    *dst = def;
    if (!json_object_object_get_ex(o, k, &v) || json_object_is_type(v, json_type_null)) return 0;
    if (json_object_is_type(v, json_type_int)) { *dst = (double)json_object_get_int64(v); return 0; }
    if (json_object_is_type(v, json_type_double)) { *dst = json_object_get_double(v); return 0; }
    if (json_object_is_type(v, json_type_string) && !ssd_parse_number(json_object_get_string(v), dst)) return 0;
    snprintf(err, errlen, "argument '%s': '%s' is not a number", k, json_object_get_string(v));
    return -1;
}

ssd_t *ssd_create_json(const char *json, char *err, size_t errlen)
{
    ssd_t *s = calloc(1, sizeof(*s));
    json_object *o = json ? json_tokener_parse(json) : json_object_new_object();
    double v;
    char link[32];
    if (!s) { snprintf(err, errlen, "out of memory"); return NULL; }
    s->fd = -1;
    s->ctl_fd = -1;
    if (!o || !json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "module args are not a JSON object: %s", json ? json : "(null)");
        goto fail;
    }
    if (jnum(o, "index", &v, 0, err, errlen)) goto fail;
    s->index = (int)v;
    if (v < 0 || v > 7) { snprintf(err, errlen, "index=%g: allowed 0..7", v); goto fail; }
    if (jnum(o, "sys_clk_hz", &v, 200e6, err, errlen)) goto fail;
    if (v < 1e6 || v > 2e9) { snprintf(err, errlen, "sys_clk_hz=%g: allowed 1e6..2e9", v); goto fail; }
    s->sys_clk_hz = (uint64_t)v;
    if (jnum(o, "data_width", &v, 256, err, errlen)) goto fail;
    if (v != 64 && v != 128 && v != 256 && v != 512) { snprintf(err, errlen, "data_width=%g: allowed 64, 128, 256, 512", v); goto fail; }
    s->data_width = (unsigned)v;
    jstr(o, "profile", s->profile, sizeof(s->profile), "tlc-slc");
    if (ssd_profile_defaults(s->profile, &s->p)) {
        char names[256] = "";
        for (int i = 0; ssd_profile_names[i]; i++) { strcat(names, i ? ", " : ""); strcat(names, ssd_profile_names[i]); }
        snprintf(err, errlen, "unknown SSD profile '%s' (allowed: %s)", s->profile, names);
        goto fail;
    }
    jstr(o, "link", link, sizeof(link), "gen3x4");
    {
        int g = 0, w = 0; char tail;
        if (sscanf(link, "gen%dx%d%c", &g, &w, &tail) != 2 || g < 1 || g > 4 || (w != 1 && w != 2 && w != 4 && w != 8)) {
            snprintf(err, errlen, "link '%s': expected genGxL with G in 1-4 and L in 1, 2, 4, 8 (e.g. gen3x4)", link);
            goto fail;
        }
        s->gen = g; s->width = w;
    }
    if (jnum(o, "mps", &v, 256, err, errlen)) goto fail;
    if (v < 128 || v > 4096 || ((unsigned)v & ((unsigned)v - 1)) || v != (unsigned)v) {
        snprintf(err, errlen, "mps=%g: allowed 128, 256, 512, 1024, 2048, 4096", v); goto fail;
    }
    s->mps_cap = (unsigned)v;
    if (jnum(o, "lba_size", &v, 512, err, errlen)) goto fail;
    if (v != 512 && v != 4096) { snprintf(err, errlen, "lba_size=%g: allowed 512 or 4096", v); goto fail; }
    s->lba_size = (unsigned)v;
    if (jnum(o, "ns_size", &v, 1000204886016.0, err, errlen)) goto fail;
    if (v <= 0) { snprintf(err, errlen, "ns_size=%g: the namespace capacity must be positive", v); goto fail; }
    s->ns_size = (uint64_t)v;
    if (s->ns_size % s->lba_size) {
        snprintf(err, errlen, "ns_size=%llu is not a multiple of the LBA size %u", (unsigned long long)s->ns_size, s->lba_size);
        goto fail;
    }
    s->nsze = s->ns_size / s->lba_size;
    if (jnum(o, "seed", &v, 1, err, errlen)) goto fail;
    s->seed = (uint64_t)v;
    s->rng = (s->seed * 0x9E3779B97F4A7C15ULL) ^ (0xD1B54A32D192ED03ULL * (uint64_t)(s->index + 1));
    if (!s->rng) s->rng = 1;
    snprintf(s->serial, sizeof(s->serial), "LRSIM%02d%08llX", s->index, (unsigned long long)(s->seed & 0xffffffffull));
    snprintf(s->model, sizeof(s->model), "LiteRecorder SimSSD %.20s", s->profile);
    {
        char def[64];
        snprintf(def, sizeof(def), "ssd%d.img", s->index);
        jstr(o, "ns_file", s->ns_file, sizeof(s->ns_file), def);
    }
    jstr(o, "ctl_path", s->ctl_path, sizeof(s->ctl_path), "");
    jstr(o, "cmd_log", s->cmd_log_path, sizeof(s->cmd_log_path), "");
    jstr(o, "sample_log", s->sample_log_path, sizeof(s->sample_log_path), "");
    /* parameter overrides */
    json_object *opts;
    if (json_object_object_get_ex(o, "opts", &opts) && !json_object_is_type(opts, json_type_null)) {
        if (!json_object_is_type(opts, json_type_object)) { snprintf(err, errlen, "'opts' must be an object of KEY: VALUE"); goto fail; }
        json_object_object_foreach(opts, key, val) {
            if (ssd_param_set(&s->p, key, json_object_get_string(val), err, errlen)) goto fail;
        }
    }
    if (jnum(o, "sample_us", &v, s->p.sample_us, err, errlen)) goto fail;
    s->p.sample_us = v > 0 ? v : s->p.sample_us;
    if (ssd_init(s, err, errlen)) goto fail;
    if (ssd_media_open(s, err, errlen)) goto fail;
    /* faults */
    json_object *faults;
    if (json_object_object_get_ex(o, "faults", &faults) && !json_object_is_type(faults, json_type_null)) {
        if (!json_object_is_type(faults, json_type_array)) { snprintf(err, errlen, "'faults' must be a list of fault specs"); goto fail; }
        for (size_t i = 0; i < json_object_array_length(faults); i++) {
            const char *spec = json_object_get_string(json_object_array_get_idx(faults, i));
            if (ssd_fault_add(s, spec, err, errlen) < 0) goto fail;
        }
    }
    if (s->cmd_log_path[0]) {
        s->cmd_log = fopen(s->cmd_log_path, "w");
        if (!s->cmd_log) { snprintf(err, errlen, "cannot write cmd_log '%s': %s", s->cmd_log_path, strerror(errno)); goto fail; }
        setvbuf(s->cmd_log, NULL, _IOFBF, 1 << 20);
        fprintf(s->cmd_log, "t_submit_us,t_complete_us,qid,cid,opc,nsid,slba,nlb,bytes,sct,sc,lat_us\n");
    }
    if (s->sample_log_path[0]) {
        s->sample_log = fopen(s->sample_log_path, "w");
        if (!s->sample_log) { snprintf(err, errlen, "cannot write sample_log '%s': %s", s->sample_log_path, strerror(errno)); goto fail; }
        setvbuf(s->sample_log, NULL, _IOFBF, 1 << 16);
        fprintf(s->sample_log, "t_us,write_MBps,read_MBps,iops,temp_c,cache_used,cache2_used,throttle,gc,erased_pct,active_cmds\n");
    }
    if (s->ctl_path[0]) {
        struct sockaddr_un a;
        memset(&a, 0, sizeof(a));
        a.sun_family = AF_UNIX;
        if (strlen(s->ctl_path) >= sizeof(a.sun_path)) { snprintf(err, errlen, "ctl_path '%s' is too long for a UNIX socket", s->ctl_path); goto fail; }
        strcpy(a.sun_path, s->ctl_path);
        unlink(s->ctl_path);
        s->ctl_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
        if (s->ctl_fd < 0 || bind(s->ctl_fd, (struct sockaddr *)&a, sizeof(a))) {
            snprintf(err, errlen, "cannot bind control socket '%s': %s", s->ctl_path, strerror(errno));
            goto fail;
        }
    }
    json_object_put(o);
    return s;
fail:
    if (o) json_object_put(o);
    ssd_destroy(s);
    return NULL;
}

void ssd_destroy(ssd_t *s)
{
    if (!s) return;
    if (s->ep.ops) {
        ssd_reset_controller(s, 1);
        pcie_ep_destroy(&s->ep);
    }
    for (int i = 0; i < SSD_MAX_CMDS; i++) { free(s->cmds[i].buf); free(s->cmds[i].prps); free(s->cmds[i].prp_fetch); }
    if (s->fd >= 0) close(s->fd);
    free(s->valid);
    free(s->wq);
    if (s->cmd_log) fclose(s->cmd_log);
    if (s->sample_log) fclose(s->sample_log);
    if (s->ctl_fd >= 0) { close(s->ctl_fd); unlink(s->ctl_path); }
    free(s);
}

ps_t ssd_service(ssd_t *s, ps_t now)
{
    return pcie_ep_service(&s->ep, now);
}
