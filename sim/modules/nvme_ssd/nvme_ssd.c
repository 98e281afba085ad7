/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * LiteX Verilator sim module `nvme_ssd`: one simulated NVMe SSD on the `pcie` pads of one root
 * port. Args: a JSON object (see doc/ssd_model.md and sim/ssd.py: ssd_module_args).
 */
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "modules.h"
#include "ssd.h"
#include "../common/pcie_pads.h"

typedef struct nvme_sess {
    ssd_t      *ssd;
    pcie_pads_t pads;
    uint64_t    poll_every, poll_at;
    int         checked;
} nvme_sess_t;

static int nvme_ssd_start(void *base) { (void)base; return RC_OK; }

static int nvme_ssd_new(void **sess, char *args)
{
    char err[512];
    nvme_sess_t *s = calloc(1, sizeof(*s));
    if (!s) return RC_NOENMEM;
    s->ssd = ssd_create_json(args, err, sizeof(err));
    if (!s->ssd) {
        fprintf(stderr, "[nvme_ssd] ERROR: %s\n", err);
        free(s);
        return RC_ERROR;
    }
    pcie_pads_init(&s->pads, &s->ssd->ep, s->ssd->data_width, s->ssd->sys_clk_hz);
    s->poll_every = (uint64_t)s->ssd->p.ctl_poll_cycles;
    s->poll_at = s->poll_every;
    fprintf(stderr, "[nvme_ssd%d] %s, %s %s, link gen%dx%d, MPS %u, namespace %llu x %u B in %s\n",
        s->ssd->index, s->ssd->model, s->ssd->serial, s->ssd->profile, s->ssd->gen, s->ssd->width,
        s->ssd->mps_cap, (unsigned long long)s->ssd->nsze, s->ssd->lba_size, s->ssd->ns_file);
    *sess = s;
    return RC_OK;
}

static int nvme_ssd_add_pads(void *sess, struct pad_list_s *plist)
{
    nvme_sess_t *s = sess;
    char err[256];
    if (!s || !plist) return RC_INVARG;
    if (pcie_pads_add(&s->pads, plist, err, sizeof(err))) {
        fprintf(stderr, "[nvme_ssd%d] ERROR: %s\n", s->ssd->index, err);
        return RC_ERROR;
    }
    if (!strcmp(plist->name, "pcie") && plist->index != s->ssd->index)
        fprintf(stderr, "[nvme_ssd%d] note: attached to pcie port %d\n", s->ssd->index, plist->index);
    return RC_OK;
}

static int nvme_ssd_tick(void *sess, uint64_t time_ps)
{
    nvme_sess_t *s = sess;
    (void)time_ps;
    if (!s->checked) {
        char err[256];
        if (pcie_pads_check(&s->pads, err, sizeof(err))) {
            fprintf(stderr, "[nvme_ssd%d] ERROR: %s\n", s->ssd->index, err);
            exit(1);
        }
        s->checked = 1;
    }
    if (pcie_pads_tick(&s->pads) && s->pads.cycle >= s->poll_at) {
        s->poll_at = s->pads.cycle + s->poll_every;
        ssd_poll_control(s->ssd);
        s->pads.next_due = s->pads.now;   /* a command may have changed the device's schedule */
        if (s->ssd->sample_log) fflush(s->ssd->sample_log);
    }
    return RC_OK;
}

static int nvme_ssd_close(void *sess)
{
    nvme_sess_t *s = sess;
    if (!s) return RC_OK;
    ssd_destroy(s->ssd);
    free(s);
    return RC_OK;
}

static struct ext_module_s ext_mod = {
    "nvme_ssd",
    nvme_ssd_start,
    nvme_ssd_new,
    nvme_ssd_add_pads,
    nvme_ssd_close,
    nvme_ssd_tick
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
    return register_module(&ext_mod);
}
