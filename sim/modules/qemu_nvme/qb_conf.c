/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * JSON arguments of the bridge (sim/qemu.py: qemu_module_args) with their checks.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "qemu_nvme.h"

void qb_conf_defaults(qb_conf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->sys_clk_hz = 100000000;
    c->data_width = 256;
    snprintf(c->qemu_bin, sizeof(c->qemu_bin), "qemu-system-x86_64");
    c->image_size = 64ull << 20;
    c->lba_size = 512;
    c->max_ioqpairs = 64;
    c->mdts = 7;
    c->gen = 3; c->width = 4;
    c->max_tags = 32;
    c->start_timeout_ms = 5000;
    c->io_timeout_ms = 5000;
    c->cmd_timeout_ms = 10000;
    c->poll_ns = 1000;
    c->block_us = 0;
    c->mem_top = 1ull << 32;
    c->cpl_timeout_us = 10000;
    c->link_latency_ns = 250;
    c->train_us = 10;
}

static int jstr(json_object *o, const char *k, char *dst, size_t n)
{
    json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || json_object_is_type(v, json_type_null)) return 0;
    const char *s = json_object_get_string(v);
    if (strlen(s) >= n) return -1;
    snprintf(dst, n, "%s", s);
    return 0;
}

static int jnum(json_object *o, const char *k, double *dst, char *err, size_t errlen)
{
    json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || json_object_is_type(v, json_type_null)) return 0;
    if (json_object_is_type(v, json_type_int)) { *dst = (double)json_object_get_int64(v); return 0; }
    if (json_object_is_type(v, json_type_double)) { *dst = json_object_get_double(v); return 0; }
    if (json_object_is_type(v, json_type_string)) {
        char *end;
        const char *s = json_object_get_string(v);
        double d = strtod(s, &end);
        if (end != s && !*end) { *dst = d; return 0; }
    }
    snprintf(err, errlen, "argument '%s': '%s' is not a number", k, json_object_get_string(v));
    return -1;
}

static const char *known_keys[] = { "index", "sys_clk_hz", "data_width", "qemu_bin", "image",
    "image_size", "lba_size", "log", "serial", "max_ioqpairs", "mdts", "link", "max_tags",
    "start_timeout_ms", "io_timeout_ms", "cmd_timeout_ms", "poll_ns", "block_us", "mem_top",
    "cpl_timeout_us", "link_latency_ns", "train_us", "verbose", "drive_opts", NULL };

qb_t *qb_create_json(const char *json, char *err, size_t errlen)
{
    qb_conf_t c;
    qb_conf_defaults(&c);
    json_object *o = json && *json ? json_tokener_parse(json) : json_object_new_object();
    if (!o || !json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "module arguments are not a JSON object: %s", json ? json : "(none)");
        if (o) json_object_put(o);
        return NULL;
    }
    json_object_object_foreach(o, key, val) {
        (void)val;
        int ok = 0;
        for (int i = 0; known_keys[i]; i++) if (!strcmp(key, known_keys[i])) ok = 1;
        if (!ok) { snprintf(err, errlen, "unknown argument '%s'", key); goto fail; }
    }
    double v;
#define NUM(k, field, lo, hi) do { v = (double)c.field; \
        if (jnum(o, k, &v, err, errlen)) goto fail; \
        if (v < (lo) || v > (hi)) { snprintf(err, errlen, "argument '%s' = %g out of range %g..%g", k, v, (double)(lo), (double)(hi)); goto fail; } \
        c.field = (__typeof__(c.field))v; } while (0)
    NUM("index", index, 0, 7);
    NUM("sys_clk_hz", sys_clk_hz, 1e6, 2e9);
    NUM("data_width", data_width, 64, 512);
    NUM("image_size", image_size, 0, 1e15);
    NUM("lba_size", lba_size, 512, 4096);
    NUM("max_ioqpairs", max_ioqpairs, 1, 1024);
    NUM("mdts", mdts, 0, 15);
    NUM("max_tags", max_tags, 1, 256);
    NUM("start_timeout_ms", start_timeout_ms, 1, 3.6e6);
    NUM("io_timeout_ms", io_timeout_ms, 1, 3.6e6);
    NUM("cmd_timeout_ms", cmd_timeout_ms, 1, 3.6e6);
    NUM("poll_ns", poll_ns, 1, 1e9);
    NUM("block_us", block_us, 0, 1e6);
    NUM("mem_top", mem_top, 1 << 20, (double)QB_QEMU_BAR_ADDR);
    NUM("cpl_timeout_us", cpl_timeout_us, 1, 1e7);
    NUM("link_latency_ns", link_latency_ns, 0, 1e6);
    NUM("train_us", train_us, 0, 1e6);
    NUM("verbose", verbose, 0, 9);
#undef NUM
    if (c.data_width != 64 && c.data_width != 128 && c.data_width != 256 && c.data_width != 512) {
        snprintf(err, errlen, "data_width=%u: allowed 64, 128, 256, 512", c.data_width);
        goto fail;
    }
    if (c.lba_size != 512 && c.lba_size != 4096) {
        snprintf(err, errlen, "lba_size=%u: allowed 512 or 4096", c.lba_size);
        goto fail;
    }
    if (c.image_size % c.lba_size) {
        snprintf(err, errlen, "image_size=%llu is not a multiple of the LBA size %u",
            (unsigned long long)c.image_size, c.lba_size);
        goto fail;
    }
    if (c.mem_top & 0xfff) { snprintf(err, errlen, "mem_top must be a multiple of 4 KiB"); goto fail; }
    if (jstr(o, "qemu_bin", c.qemu_bin, sizeof(c.qemu_bin)) || jstr(o, "image", c.image, sizeof(c.image)) ||
        jstr(o, "log", c.log_path, sizeof(c.log_path))) {
        snprintf(err, errlen, "a path argument is too long");
        goto fail;
    }
    if (jstr(o, "drive_opts", c.drive_opts, sizeof(c.drive_opts)) || strpbrk(c.drive_opts, " \t\n")) {
        snprintf(err, errlen, "drive_opts: at most 255 characters of KEY=VALUE[,KEY=VALUE] without spaces");
        goto fail;
    }
    snprintf(c.serial, sizeof(c.serial), "LRQEMU%d", c.index);
    if (jstr(o, "serial", c.serial, sizeof(c.serial)) || strchr(c.serial, ',')) {
        snprintf(err, errlen, "serial: at most 20 characters, no ','");
        goto fail;
    }
    char link[32] = "gen3x4";
    if (jstr(o, "link", link, sizeof(link)) || sscanf(link, "gen%dx%d", &c.gen, &c.width) != 2 ||
        c.gen < 1 || c.gen > 4 || (c.width != 1 && c.width != 2 && c.width != 4 && c.width != 8)) {
        snprintf(err, errlen, "link '%s': expected genGxL with G in 1-4 and L in 1, 2, 4, 8", link);
        goto fail;
    }
    if (!c.image[0]) { snprintf(err, errlen, "argument 'image' (raw disk image of QEMU's NVMe namespace) is required"); goto fail; }
    if (!c.log_path[0]) {
        if (strlen(c.image) + 10 > sizeof(c.log_path)) { snprintf(err, errlen, "image path too long"); goto fail; }
        memcpy(c.log_path, c.image, strlen(c.image));
        memcpy(c.log_path + strlen(c.image), ".qemu.log", 10);
    }
    json_object_put(o);
    return qb_create(&c, err, errlen);
fail:
    json_object_put(o);
    return NULL;
}
