/*
 * This file is part of LiteRecorder.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * LiteX Verilator sim module `qemu_nvme`: QEMU's NVMe controller behind the bridge, on the `pcie`
 * pads of one root port, in place of the simulated SSD. Args: a JSON object (doc/qemu_bridge.md,
 * sim/qemu.py: qemu_module_args). QEMU is started in new_sess and stopped (and reaped) in close;
 * it also dies with the simulation process (PR_SET_PDEATHSIG, atexit).
 */
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "modules.h"
#include "qemu_nvme.h"
#include "../common/pcie_pads.h"

typedef struct qemu_sess {
    qb_t       *b;
    pcie_pads_t pads;
    int         checked;
} qemu_sess_t;

static int qemu_nvme_start(void *base) { (void)base; return RC_OK; }

static int qemu_nvme_new(void **sess, char *args)
{
    char err[1024];
    qemu_sess_t *s = calloc(1, sizeof(*s));
    if (!s) return RC_NOENMEM;
    s->b = qb_create_json(args, err, sizeof(err));
    if (!s->b) {
        fprintf(stderr, "[qemu_nvme] ERROR: %s\n", err);
        free(s);
        return RC_ERROR;
    }
    qb_t *b = s->b;
    pcie_pads_init(&s->pads, &b->ep, b->c.data_width, b->c.sys_clk_hz);
    fprintf(stderr, "[qemu_nvme%d] QEMU pid %d: NVMe %04x:%04x serial %s on %s (%u-byte LBAs), "
        "host memory 0x0-0x%llx mirrored, link gen%dx%d, log %s\n", b->c.index, (int)b->q.pid,
        b->cfg_init[0] | (b->cfg_init[1] << 8), b->cfg_init[2] | (b->cfg_init[3] << 8), b->c.serial,
        b->c.image, b->c.lba_size, (unsigned long long)b->c.mem_top - 1, b->c.gen, b->c.width,
        b->c.log_path);
    *sess = s;
    return RC_OK;
}

static int qemu_nvme_add_pads(void *sess, struct pad_list_s *plist)
{
    qemu_sess_t *s = sess;
    char err[256];
    if (!s || !plist) return RC_INVARG;
    if (pcie_pads_add(&s->pads, plist, err, sizeof(err))) {
        fprintf(stderr, "[qemu_nvme%d] ERROR: %s\n", s->b->c.index, err);
        return RC_ERROR;
    }
    if (!strcmp(plist->name, "pcie") && plist->index != s->b->c.index)
        fprintf(stderr, "[qemu_nvme%d] note: attached to pcie port %d\n", s->b->c.index, plist->index);
    return RC_OK;
}

static int qemu_nvme_tick(void *sess, uint64_t time_ps)
{
    qemu_sess_t *s = sess;
    (void)time_ps;
    if (!s->checked) {
        char err[256];
        if (pcie_pads_check(&s->pads, err, sizeof(err))) {
            fprintf(stderr, "[qemu_nvme%d] ERROR: %s\n", s->b->c.index, err);
            qb_destroy(s->b);
            exit(1);
        }
        s->checked = 1;
    }
    pcie_pads_tick(&s->pads);
    return RC_OK;
}

static int qemu_nvme_close(void *sess)
{
    qemu_sess_t *s = sess;
    if (!s) return RC_OK;
    qb_t *b = s->b;
    fprintf(stderr, "[qemu_nvme%d] stopping QEMU: %llu commands, %llu CQEs, %llu bytes fetched, "
        "%llu bytes written back, %llu fetch failures%s%s\n", b->c.index,
        (unsigned long long)b->st.cmds, (unsigned long long)b->st.cqes,
        (unsigned long long)b->st.fetch_bytes, (unsigned long long)b->st.wb_bytes,
        (unsigned long long)b->st.dma_failures, b->fatal ? ", fatal: " : "", b->fatal ? b->fatal_why : "");
    qb_destroy(b);
    free(s);
    return RC_OK;
}

static struct ext_module_s ext_mod = {
    "qemu_nvme",
    qemu_nvme_start,
    qemu_nvme_new,
    qemu_nvme_add_pads,
    qemu_nvme_close,
    qemu_nvme_tick
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
    return register_module(&ext_mod);
}
