/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Media model: a sparse file holds the namespace; a bitmap of 4 KiB map units tracks which
 * units hold data (valid), which were overwritten or deallocated (stale, to be collected) and how
 * much erased space is left (physical = namespace x (1 + over-provisioning)).
 *
 * Write bandwidth: tiers (fast cache, second cache, sustained rate), periodic dips, thermal caps;
 * garbage collection adds copy time once the erased pool is below its threshold (smooth: every
 * written unit reclaims one unit; burst: collect until a batch is free, then run free).
 * Temperature: first-order model toward ambient + k x throughput, time constant tau.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "ssd.h"

double ssd_rand(ssd_t *s)
{
    uint64_t x = s->rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    s->rng = x;
    return ((x * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

ps_t ssd_lat(ssd_t *s, double us)
{
    double v = us;
    if (s->p.lat_jitter_pct > 0)
        v *= 1.0 + (ssd_rand(s) * 2 - 1) * s->p.lat_jitter_pct / 100.0;
    if (s->p.spike_prob > 0 && ssd_rand(s) < s->p.spike_prob)
        v += s->p.spike_us;
    if (v < 0) v = 0;
    return (ps_t)(v * PS_PER_US);
}

int ssd_media_open(ssd_t *s, char *err, size_t errlen)
{
    s->fd = open(s->ns_file, O_RDWR | O_CREAT, 0644);
    if (s->fd < 0) {
        snprintf(err, errlen, "cannot open namespace file '%s': %s", s->ns_file, strerror(errno));
        return -1;
    }
    struct stat st;
    fstat(s->fd, &st);
    if (st.st_size == 0) {
        if (ftruncate(s->fd, (off_t)s->ns_size)) {
            snprintf(err, errlen, "cannot size namespace file '%s' to %llu bytes: %s", s->ns_file,
                (unsigned long long)s->ns_size, strerror(errno));
            return -1;
        }
    } else if ((uint64_t)st.st_size != s->ns_size) {
        snprintf(err, errlen, "namespace file '%s' holds %llu bytes but the namespace size is %llu: "
            "use the same --ns-size or another --ns-file", s->ns_file,
            (unsigned long long)st.st_size, (unsigned long long)s->ns_size);
        return -1;
    }
    s->unit_size = 4096;
    s->units = (s->ns_size + s->unit_size - 1) / s->unit_size;
    s->valid = calloc((s->units + 7) / 8, 1);
    s->phys_units = (uint64_t)(s->units * (1.0 + s->p.op_pct / 100.0));
    if (s->phys_units <= s->units) s->phys_units = s->units + 1;
    /* Units holding data: the file's data extents (holes are deallocated). */
    off_t pos = 0, end = (off_t)s->ns_size;
    while (pos < end) {
        off_t d = lseek(s->fd, pos, SEEK_DATA);
        if (d < 0) break;
        off_t h = lseek(s->fd, d, SEEK_HOLE);
        if (h < 0) h = end;
        for (uint64_t u = (uint64_t)d / s->unit_size; u < ((uint64_t)h + s->unit_size - 1) / s->unit_size && u < s->units; u++)
            if (!(s->valid[u >> 3] & (1u << (u & 7)))) { s->valid[u >> 3] |= 1u << (u & 7); s->valid_units++; }
        pos = h;
    }
    s->erased_units = s->phys_units - s->valid_units;
    s->stale_units = 0;
    return 0;
}

/* Mark [off, off+len) valid (written) or deallocated. Overwrites create stale units. */
void ssd_media_mark(ssd_t *s, uint64_t off, uint64_t len, int valid)
{
    uint64_t u0, u1, valid_before = s->valid_units;
    if (valid) {
        u0 = off / s->unit_size;
        u1 = (off + len + s->unit_size - 1) / s->unit_size;
    } else {   /* only whole units become free */
        u0 = (off + s->unit_size - 1) / s->unit_size;
        u1 = (off + len) / s->unit_size;
        if (off + len == s->ns_size) u1 = s->units;
    }
    for (uint64_t u = u0; u < u1 && u < s->units; u++) {
        uint8_t m = 1u << (u & 7);
        int was = (s->valid[u >> 3] & m) != 0;
        if (valid) {
            if (was) s->stale_units++;        /* old copy becomes garbage */
            else { s->valid[u >> 3] |= m; s->valid_units++; }
            if (s->erased_units) s->erased_units--;
            else if (s->stale_units) s->stale_units--;   /* accounted by GC time in ssd_media_write */
        } else if (was) {
            /* Deallocated: whole blocks of trimmed data are erased without copying. */
            s->valid[u >> 3] &= ~m;
            s->valid_units--;
            s->erased_units++;
        }
    }
    if (!valid && valid_before > s->valid_units && s->stale_units) {
        /* The blocks that held the trimmed data also held a proportional share of the garbage:
         * they are now free of valid data and are erased without copying. */
        uint64_t freed = valid_before - s->valid_units;
        uint64_t rel = (uint64_t)((double)s->stale_units * freed / (double)valid_before);
        if (s->valid_units == 0) rel = s->stale_units;
        s->stale_units -= rel;
        s->erased_units += rel;
    }
}

/* Idle-time work: cache recovery and background reclaim. */
void ssd_media_idle(ssd_t *s, ps_t now)
{
    ps_t busy_end = s->media_free > s->last_idle_acct ? s->media_free : s->last_idle_acct;
    if (now <= busy_end) return;
    ps_t idle_start = busy_end;
    ps_t delay = (ps_t)(s->p.cache_idle_us * PS_PER_US);
    /* only idle time beyond the delay after the last busy moment counts */
    ps_t from = s->media_free + delay > idle_start ? s->media_free + delay : idle_start;
    s->last_idle_acct = now;
    if (now <= from) return;
    double secs = (now - from) / 1e12;
    double rec = secs * s->p.cache_flush_rate;
    if (s->cache_used > 0) { double r = rec < s->cache_used ? rec : s->cache_used; s->cache_used -= r; rec -= r; }
    if (s->cache2_used > 0 && rec > 0) { double r = rec < s->cache2_used ? rec : s->cache2_used; s->cache2_used -= r; }
    if (s->stale_units && s->p.bg_gc_rate > 0) {
        double u = secs * s->p.bg_gc_rate / s->unit_size;
        uint64_t r = u >= (double)s->stale_units ? s->stale_units : (uint64_t)u;
        s->stale_units -= r;
        s->erased_units += r;
    }
}

double ssd_media_rate(ssd_t *s, ps_t now, int *tier)
{
    double r;
    int t;
    if (s->p.cache_size > 0 && s->cache_used < s->p.cache_size) {
        r = s->p.cache_rate; t = 1;
    } else if (s->p.cache2_size > 0 && s->cache2_used < s->p.cache2_size) {
        r = s->p.cache2_rate; t = 2;
    } else {
        r = s->p.write_rate; t = 0;
    }
    if (tier) *tier = t;
    if (s->p.dip_rate > 0 && s->p.dip_period_us > 0) {
        ps_t per = (ps_t)(s->p.dip_period_us * PS_PER_US);
        if (per && (now % per) < (ps_t)(s->p.dip_len_us * PS_PER_US))
            if (r == 0 || s->p.dip_rate < r) r = s->p.dip_rate;
    }
    if (s->throttle) {
        double cap = s->throttle == 2 ? s->p.throttle2_rate : s->p.throttle1_rate;
        if (cap > 0 && (r == 0 || cap < r)) r = cap;
    }
    return r;
}

/* Charge `bytes` written at `now`; returns the time the media is done with them. */
ps_t ssd_media_write(ssd_t *s, ps_t now, uint64_t bytes)
{
    ssd_media_idle(s, now);
    int tier;
    double r = ssd_media_rate(s, now, &tier);
    double t = r > 0 ? bytes / r : 0;
    if (tier == 1) s->cache_used += bytes;
    else if (tier == 2) s->cache2_used += bytes;
    /* Garbage collection. */
    /* Data arrives in payload-sized segments: GC is charged per whole unit written (a 256-byte
     * segment is not a 4 KiB unit). */
    s->gc_bytes += bytes;
    uint64_t units = s->gc_bytes / s->unit_size;
    s->gc_bytes %= s->unit_size;
    double thr = s->phys_units * s->p.gc_free_pct / 100.0;
    if (s->p.gc_rate > 0 && s->stale_units) {
        int collect = 0;
        if (s->p.gc_mode >= 1) {
            if ((double)s->erased_units <= thr) s->gc_phase = 1;
            if (s->gc_phase && (double)s->erased_units >= thr + s->p.gc_batch / s->unit_size) s->gc_phase = 0;
            collect = s->gc_phase ? 2 : 0;   /* reclaim two units per unit written */
        } else if ((double)s->erased_units <= thr)
            collect = 1;
        if (collect) {
            double valid_frac = (double)s->valid_units / (double)(s->valid_units + s->stale_units);
            if (valid_frac > 0.995) valid_frac = 0.995;
            uint64_t rec = units * collect;
            if (rec > s->stale_units) rec = s->stale_units;
            double copy = rec * valid_frac / (1 - valid_frac) * s->unit_size;
            t += copy / s->p.gc_rate;
            s->stale_units -= rec;
            s->erased_units += rec;
        }
    }
    ps_t start = s->media_free > now ? s->media_free : now;
    s->media_free = start + (ps_t)(t * 1e12);
    s->busy_ps += t * 1e12;
    s->temp_w_bytes += bytes;
    return s->media_free;
}

void ssd_thermal(ssd_t *s, ps_t now)
{
    if (now <= s->temp_t) return;
    double dt = (now - s->temp_t) / 1e12;
    double gw = s->temp_w_bytes / dt / 1e9, gr = s->temp_r_bytes / dt / 1e9;
    double target = s->p.temp_ambient + s->p.temp_per_gbps * gw + s->p.temp_read_per_gbps * gr;
    double a = exp(-dt * 1e6 / s->p.temp_tau_us);
    double old = s->temp;
    s->temp = target + (s->temp - target) * a;
    if (old > s->p.wctemp) s->warn_time += dt;
    if (old > s->p.cctemp) s->crit_time += dt;
    if (s->throttle) s->tmt_time[s->throttle] += dt;
    s->temp_t = now;
    s->temp_w_bytes = s->temp_r_bytes = 0;
    int lvl = s->throttle;
    if (s->temp >= s->p.tmt2) lvl = 2;
    else if (s->temp >= s->p.tmt1) lvl = lvl == 2 && s->temp > s->p.tmt2 - s->p.temp_hyst ? 2 : 1;
    else if (s->temp < s->p.tmt1 - s->p.temp_hyst) lvl = 0;
    else if (lvl == 2) lvl = 1;
    if (lvl > s->throttle) s->tmt_count[lvl]++;
    if (lvl == 2 && s->throttle == 0) s->tmt_count[1]++;
    s->throttle = lvl;
}
