/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Parameters of the simulated SSD, their ranges, and the performance profiles (defaults from
 * the figures of doc/ssd_model.md / REFERENCE.md). Every parameter can be overridden by name.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <math.h>
#include "ssd.h"

#define P(name, lo, hi, unit, help) { #name, offsetof(ssd_params_t, name), lo, hi, unit, help }
const ssd_param_desc_t ssd_param_descs[] = {
    P(write_rate,       0, 1e12, "B/s", "sustained media write rate after the caches (0 = unlimited)"),
    P(cache_size,       0, 1e15, "B",   "fast write cache (SLC) size"),
    P(cache_rate,       0, 1e12, "B/s", "write rate while the fast cache has room (0 = unlimited)"),
    P(cache2_size,      0, 1e15, "B",   "second cache tier size (used after the first fills)"),
    P(cache2_rate,      0, 1e12, "B/s", "write rate in the second tier"),
    P(cache_flush_rate, 0, 1e12, "B/s", "cache recovery rate while idle"),
    P(cache_idle_us,    0, 1e12, "us",  "idle time before the cache starts recovering"),
    P(read_rate,        0, 1e12, "B/s", "media read rate (0 = unlimited)"),
    P(read_lat_us,      0, 1e9,  "us",  "read command latency (first data)"),
    P(write_lat_us,     0, 1e9,  "us",  "write completion latency after the data is in"),
    P(flush_lat_us,     0, 1e9,  "us",  "flush latency after the media drained"),
    P(cmd_cost_us,      0, 1e9,  "us",  "serialized media cost per I/O command (IOPS ceiling)"),
    P(lat_jitter_pct,   0, 100,  "%",   "uniform latency jitter"),
    P(spike_prob,       0, 1,    "",    "probability of a latency spike per command"),
    P(spike_us,         0, 1e9,  "us",  "latency spike duration"),
    P(dip_rate,         0, 1e12, "B/s", "write rate during periodic dips (0 = no dips)"),
    P(dip_period_us,    0, 1e12, "us",  "dip period"),
    P(dip_len_us,       0, 1e12, "us",  "dip length"),
    P(write_buf,        4096, 1e12, "B", "controller write buffer (data accepted ahead of the media)"),
    P(op_pct,           0, 1000, "%",   "over-provisioning (physical space beyond the namespace)"),
    P(gc_rate,          0, 1e12, "B/s", "garbage-collection copy rate (0 = GC costs nothing)"),
    P(gc_mode,          0, 1,    "",    "0 smooth (GC interleaved), 1 burst (collect in batches)"),
    P(gc_batch,         4096, 1e15, "B","burst mode: space reclaimed per collection phase"),
    P(gc_free_pct,      0, 100,  "%",   "GC starts when erased space falls below this share of physical"),
    P(bg_gc_rate,       0, 1e12, "B/s", "background reclaim of stale space while idle"),
    P(temp_ambient,     -40, 150, "C",  "idle temperature"),
    P(temp_per_gbps,    0, 1000, "C",   "steady-state rise per GB/s written"),
    P(temp_read_per_gbps, 0, 1000, "C", "steady-state rise per GB/s read"),
    P(temp_tau_us,      1, 1e12, "us",  "thermal time constant"),
    P(tmt1,             0, 200,  "C",   "light throttling threshold"),
    P(tmt2,             0, 200,  "C",   "heavy throttling threshold"),
    P(throttle1_rate,   0, 1e12, "B/s", "write rate cap at TMT1"),
    P(throttle2_rate,   0, 1e12, "B/s", "write rate cap at TMT2"),
    P(temp_hyst,        0, 50,   "C",   "throttling release hysteresis"),
    P(wctemp,           0, 200,  "C",   "warning composite temperature (Identify WCTEMP)"),
    P(cctemp,           0, 200,  "C",   "critical composite temperature (Identify CCTEMP)"),
    P(endurance_tbw,    1e-9, 1e9, "TB", "rated endurance (SMART percentage used)"),
    P(mdts,             0, 15,   "",    "max data transfer size: 2^mdts x 4 KiB (0 = no limit)"),
    P(mqes,             1, 65535, "",   "CAP.MQES (0's based max queue entries)"),
    P(dstrd,            0, 4,    "",    "CAP.DSTRD (doorbell stride 4 << DSTRD)"),
    P(cap_to,           1, 255,  "",    "CAP.TO in 500 ms units"),
    P(rdy_us,           0, 1e9,  "us",  "CC.EN -> CSTS.RDY delay (bounded by CAP.TO)"),
    P(shn_us,           0, 1e9,  "us",  "shutdown duration after the media drained"),
    P(max_queues,       1, 64,   "",    "I/O queue pairs supported"),
    P(max_tags,         1, 256,  "",    "outstanding MRd tags"),
    P(cpl_timeout_us,   1, 1e9,  "us",  "completion timeout of the device's MRd"),
    P(crs_us,           0, 1e9,  "us",  "CRS answers to config requests after link-up"),
    P(train_us,         0, 1e9,  "us",  "link training time after PERST# release"),
    P(link_latency_ns,  0, 1e9,  "ns",  "one-way link latency"),
    P(dllp_pct,         0, 50,   "%",   "DLLP/SKP share of the wire"),
    P(msix_vectors,     1, 64,   "",    "MSI-X table size"),
    P(up_credits,       1, 4096, "",    "TLPs buffered at the root complex (device -> host)"),
    P(dn_credits,       1, 4096, "",    "TLPs buffered by the device (host -> device)"),
    P(dn_backlog_ns,    0, 1e9,  "ns",  "host TX buffer ahead of the wire"),
    P(tx_backlog_ns,    1, 1e9,  "ns",  "device TX queue ahead of the wire"),
    P(fetch_max,        1, 64,   "",    "SQEs fetched per MRd"),
    P(sample_us,        1, 1e12, "us",  "sample interval of the sample log"),
    P(ctl_poll_cycles,  1, 1e9,  "",    "control channel poll interval (sys_clk cycles)"),
    { NULL, 0, 0, 0, NULL, NULL }
};

const char *const ssd_profile_names[] = { "ideal", "tlc-slc", "mlc", "enterprise-tlc", "optane",
    "budget", "seed-ssd1", NULL };

static void common_defaults(ssd_params_t *p)
{
    memset(p, 0, sizeof(*p));
    p->read_lat_us = 10; p->write_lat_us = 5; p->flush_lat_us = 20;
    p->lat_jitter_pct = 0; p->spike_prob = 0; p->spike_us = 2000;
    p->write_buf = 8.0 * 1024 * 1024; p->op_pct = 7; p->gc_rate = 1.6e9; p->gc_mode = 0;
    p->gc_batch = 256.0 * 1024 * 1024; p->gc_free_pct = 2; p->bg_gc_rate = 0.5e9;
    p->cache_flush_rate = 1e9; p->cache_idle_us = 50000;
    p->temp_ambient = 40; p->temp_per_gbps = 15; p->temp_read_per_gbps = 5; p->temp_tau_us = 60e6;
    p->tmt1 = 76; p->tmt2 = 80; p->throttle1_rate = 1.4e9; p->throttle2_rate = 0.7e9; p->temp_hyst = 2;
    p->wctemp = 80; p->cctemp = 85; p->endurance_tbw = 600;
    p->mdts = 9; p->mqes = 1023; p->dstrd = 0; p->cap_to = 20; p->rdy_us = 50; p->shn_us = 100;
    p->max_queues = 16; p->max_tags = 32; p->cpl_timeout_us = 10000; p->crs_us = 0; p->train_us = 10;
    p->link_latency_ns = 250; p->dllp_pct = 2; p->msix_vectors = 32; p->up_credits = 64;
    p->dn_credits = 32; p->dn_backlog_ns = 1000; p->tx_backlog_ns = 1500; p->fetch_max = 8;
    p->sample_us = 1000; p->ctl_poll_cycles = 65536;
}

int ssd_profile_defaults(const char *profile, ssd_params_t *p)
{
    common_defaults(p);
    if (!strcmp(profile, "ideal")) {
        /* No media limit: only the link limits (GC still costs once a full drive is overwritten). */
    } else if (!strcmp(profile, "tlc-slc")) {            /* 970 EVO Plus 1 TB */
        p->cache_size = 42e9; p->cache_rate = 2.75e9; p->write_rate = 1.6e9;
        p->read_rate = 3.3e9; p->read_lat_us = 80; p->write_lat_us = 20;
    } else if (!strcmp(profile, "mlc")) {                /* 970 Pro */
        p->write_rate = 2.2e9; p->read_rate = 3.3e9; p->read_lat_us = 70; p->write_lat_us = 20;
    } else if (!strcmp(profile, "enterprise-tlc")) {     /* PM1725b */
        p->write_rate = 1.7e9; p->dip_rate = 1.3e9; p->dip_period_us = 200000; p->dip_len_us = 40000;
        p->read_rate = 3.2e9; p->read_lat_us = 90; p->write_lat_us = 20; p->op_pct = 28;
    } else if (!strcmp(profile, "optane")) {             /* Optane 905P-like: in-place writes */
        p->write_rate = 2.2e9; p->read_rate = 2.5e9; p->read_lat_us = 10; p->write_lat_us = 10;
        p->gc_rate = 20e9; p->op_pct = 20; p->temp_per_gbps = 10;
    } else if (!strcmp(profile, "budget")) {             /* seed 004: bursty GC after fill */
        p->write_rate = 0.9e9; p->read_rate = 1.7e9; p->cmd_cost_us = 15.5; p->read_lat_us = 100;
        p->write_lat_us = 30; p->gc_mode = 1; p->gc_rate = 0.44e9; p->gc_batch = 256.0 * 1048576;
        p->mdts = 5;
    } else if (!strcmp(profile, "seed-ssd1")) {          /* SSD 1 of seed 000 */
        p->cache_size = 8.0 * 1048576; p->cache_rate = 2.5 * 1073741824.0;
        p->cache2_size = 2.0 * 1073741824; p->cache2_rate = 1.05 * 1073741824.0;
        p->write_rate = 0.44 * 1073741824.0; p->read_rate = 1.7 * 1073741824.0;
        p->read_lat_us = 170; p->write_lat_us = 20; p->mdts = 8;
    } else
        return -1;
    return 0;
}

const ssd_param_desc_t *ssd_param_find(const char *name)
{
    for (const ssd_param_desc_t *d = ssd_param_descs; d->name; d++)
        if (!strcmp(d->name, name)) return d;
    return NULL;
}

int ssd_parse_number(const char *s, double *v)
{
    char *end;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return -1;
    double x;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        x = (double)strtoull(s, &end, 16);
    else
        x = strtod(s, &end);
    if (end == s || isnan(x) || isinf(x)) return -1;
    double m = 1;
    if (*end) {
        char suf[8] = {0};
        size_t n = strlen(end);
        if (n > 4) return -1;
        for (size_t i = 0; i < n; i++) suf[i] = tolower((unsigned char)end[i]);
        if (n && suf[n-1] == 'b' && n > 1) suf[--n] = 0;   /* "GB", "MiB" */
        else if (n == 1 && suf[0] == 'b') suf[--n] = 0;
        const char *u = suf;
        int bin = (n == 2 && u[1] == 'i');
        if (n == 0) m = 1;
        else if (n > 2 || (n == 2 && !bin)) return -1;
        else switch (u[0]) {
            case 'k': m = bin ? 1024.0 : 1e3; break;
            case 'm': m = bin ? 1048576.0 : 1e6; break;
            case 'g': m = bin ? 1073741824.0 : 1e9; break;
            case 't': m = bin ? 1099511627776.0 : 1e12; break;
            default: return -1;
        }
    }
    *v = x * m;
    return 0;
}

int ssd_param_set(ssd_params_t *p, const char *name, const char *value, char *err, size_t errlen)
{
    const ssd_param_desc_t *d = ssd_param_find(name);
    if (!d) {
        snprintf(err, errlen, "unknown SSD parameter '%s' (see doc/ssd_model.md for the list)", name);
        return -1;
    }
    double v;
    if (ssd_parse_number(value, &v)) {
        snprintf(err, errlen, "SSD parameter %s: '%s' is not a number (e.g. 42, 2.75G, 8MiB)", name, value);
        return -1;
    }
    if (v < d->min || v > d->max) {
        snprintf(err, errlen, "SSD parameter %s=%s out of range: allowed %g..%g %s", name, value,
            d->min, d->max, d->unit);
        return -1;
    }
    *(double *)((char *)p + d->off) = v;
    return 0;
}
