/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * LiteX sim module `simio`: drives the `simio` pads of the simulation SoC with run-time options of
 * targets/sim.py (the simulated ADC/DAC's enable, rate, length, seed, back-pressure), so that one
 * Verilator build serves every scenario. The values are static: set before the first clock edge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <json-c/json.h>
#include "error.h"
#include "modules.h"

/* The options, in the order of the pads: name, width in bits. */
static const struct { const char *name; unsigned bits; } opts[] = {
    {"adc_enable", 1}, {"adc_rate", 16}, {"adc_beats", 64}, {"adc_seed", 32}, {"dac_backpressure", 1},
};
#define NOPTS (sizeof(opts)/sizeof(opts[0]))

typedef struct {
    uint64_t value[NOPTS];
    void    *pad[NOPTS];
    size_t   len[NOPTS];
    int      set;
} simio_t;

static int simio_start(void *base) { (void)base; return RC_OK; }

static int simio_new(void **sess, char *args)
{
    simio_t *s = calloc(1, sizeof(*s));
    json_object *j, *v;
    if (!s) return RC_NOENMEM;
    j = json_tokener_parse(args ? args : "{}");
    if (!j) {
        fprintf(stderr, "[simio] ERROR: arguments are not JSON: %s\n", args);
        free(s);
        return RC_JSERROR;
    }
    for (unsigned i = 0; i < NOPTS; i++) {
        if (!json_object_object_get_ex(j, opts[i].name, &v))
            continue;
        s->value[i] = (uint64_t)json_object_get_int64(v);
        if (opts[i].bits < 64 && s->value[i] >> opts[i].bits) {
            fprintf(stderr, "[simio] ERROR: %s=%llu does not fit in %u bits\n", opts[i].name,
                (unsigned long long)s->value[i], opts[i].bits);
            json_object_put(j);
            free(s);
            return RC_ERROR;
        }
    }
    json_object_put(j);
    *sess = s;
    return RC_OK;
}

static int simio_add_pads(void *sess, struct pad_list_s *plist)
{
    simio_t *s = sess;
    if (!s || !plist) return RC_INVARG;
    if (strcmp(plist->name, "simio")) return RC_OK;
    for (int k = 0; plist->pads[k].name; k++)
        for (unsigned i = 0; i < NOPTS; i++)
            if (!strcmp(plist->pads[k].name, opts[i].name)) {
                s->pad[i] = plist->pads[k].signal;
                s->len[i] = plist->pads[k].len;
            }
    return RC_OK;
}

static void put(void *p, size_t bits, uint64_t v)
{
    /* Verilator's storage of an input: 8-bit up to 8 bits, 16 up to 16, 32 up to 32, else 64. */
    if (bits <= 8)       *(uint8_t *)p  = (uint8_t)v;
    else if (bits <= 16) *(uint16_t *)p = (uint16_t)v;
    else if (bits <= 32) *(uint32_t *)p = (uint32_t)v;
    else                 *(uint64_t *)p = v;
}

static int simio_tick(void *sess, uint64_t time_ps)
{
    simio_t *s = sess;
    (void)time_ps;
    if (s->set) return RC_OK;
    for (unsigned i = 0; i < NOPTS; i++) {
        if (!s->pad[i]) {
            fprintf(stderr, "[simio] ERROR: pad '%s' of the simio interface not found\n", opts[i].name);
            exit(1);
        }
        put(s->pad[i], s->len[i], s->value[i]);
    }
    s->set = 1;
    return RC_OK;
}

static int simio_close(void *sess) { free(sess); return RC_OK; }

static struct ext_module_s ext_mod = {
    "simio", simio_start, simio_new, simio_add_pads, simio_close, simio_tick
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
    return register_module(&ext_mod);
}
