// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// PCIe root-complex driver (see pcie.h).

#include <stdio.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <generated/mem.h>

#include "literec.h"
#include "pcie.h"

#ifdef CSR_PCIE0_BASE

/* CSR block of each root port: the blocks are identical, registers are addressed by their offset
 * in the block of port 0. */
static const unsigned long pcie_bases[] = {
	CSR_PCIE0_BASE,
#ifdef CSR_PCIE1_BASE
	CSR_PCIE1_BASE,
#endif
#ifdef CSR_PCIE2_BASE
	CSR_PCIE2_BASE,
#endif
#ifdef CSR_PCIE3_BASE
	CSR_PCIE3_BASE,
#endif
#ifdef CSR_PCIE4_BASE
	CSR_PCIE4_BASE,
#endif
#ifdef CSR_PCIE5_BASE
	CSR_PCIE5_BASE,
#endif
#ifdef CSR_PCIE6_BASE
	CSR_PCIE6_BASE,
#endif
#ifdef CSR_PCIE7_BASE
	CSR_PCIE7_BASE,
#endif
};
#define NPORTS ((int)(sizeof(pcie_bases)/sizeof(pcie_bases[0])))

#define REG(port, name) (pcie_bases[port] + (CSR_PCIE0_##name##_ADDR - CSR_PCIE0_BASE))
#define RD(port, name)    csr_read_simple(REG(port, name))
#define WR(port, name, v) csr_write_simple((v), REG(port, name))
#define RD64(port, name)  literec_csr_read64(REG(port, name))

struct pcie_dev pcie_devs[NPORTS];

int pcie_nports(void) { return NPORTS; }
unsigned long pcie_csr_base(int port) { return pcie_bases[port]; }

#else

struct pcie_dev pcie_devs[1];
int pcie_nports(void) { return 0; }
unsigned long pcie_csr_base(int port) { return 0; }

#endif

const char *pcie_strerror(int err)
{
	switch (err) {
	case PCIE_OK:        return "OK";
	case PCIE_UR:        return "Unsupported Request completion";
	case PCIE_CRS:       return "Configuration Request Retry Status (device not ready)";
	case PCIE_CA:        return "Completer Abort completion";
	case PCIE_TIMEOUT:   return "completion timeout (no answer from the device)";
	case PCIE_POISONED:  return "poisoned completion";
	case PCIE_MALFORMED: return "malformed completion";
	case PCIE_LINK_DOWN: return "link down";
	case PCIE_NO_DEVICE: return "no device";
	case PCIE_BAD_PORT:  return "no such root port";
	case PCIE_NOT_READY: return "device not ready (CRS beyond the allowed time)";
	default:             return "unknown error";
	}
}

/* Time -------------------------------------------------------------------------------------------- */

uint64_t literec_cycles(void)
{
	timer0_uptime_latch_write(1);
	return timer0_uptime_cycles_read();
}

uint64_t literec_us_to_cycles(uint64_t us)
{
	/* Whole seconds apart: exact for clocks that are not a whole number of MHz (156.25 MHz). */
	return us/1000000*CONFIG_CLOCK_FREQUENCY + us % 1000000*CONFIG_CLOCK_FREQUENCY/1000000;
}

uint64_t literec_cycles_to_us(uint64_t cycles)
{
	/* cycles*1e6/f overflows 64 bits after 1.8e13 cycles (25 h at 200 MHz): whole seconds apart. */
	return cycles/CONFIG_CLOCK_FREQUENCY*1000000ULL + cycles % CONFIG_CLOCK_FREQUENCY*1000000ULL/CONFIG_CLOCK_FREQUENCY;
}

#ifdef CSR_PCIE0_BASE

/* Link ------------------------------------------------------------------------------------------- */

void pcie_link_status(int port, int *up, int *gen, int *width, int *ltssm)
{
	uint32_t v = RD(port, LINK);
	if (up)    *up    = (v >> CSR_PCIE0_LINK_UP_OFFSET) & 1;
	if (gen)   *gen   = (v >> CSR_PCIE0_LINK_GEN_OFFSET) & 7;
	if (width) *width = (v >> CSR_PCIE0_LINK_WIDTH_OFFSET) & 15;
	if (ltssm) *ltssm = (v >> CSR_PCIE0_LINK_LTSSM_OFFSET) & 63;
}

#ifdef LITEREC_LINK_MPS
uint32_t pcie_link_payload_mbps(int gen, int width, int mps)
{
	static const uint32_t lane_kbps[] = {0, LITEREC_LANE_KBPS_GEN1, LITEREC_LANE_KBPS_GEN2,
		LITEREC_LANE_KBPS_GEN3, LITEREC_LANE_KBPS_GEN4};
	uint64_t kbps;
	if (gen < 1 || gen > 4 || width < 1)
		return 0;
	if (mps <= 0)
		mps = LITEREC_LINK_MPS;
	kbps = (uint64_t)width*lane_kbps[gen]*mps/(mps + LITEREC_CPLD_OVERHEAD);
	if (kbps/1000 > LITEREC_DATAPATH_MBPS)
		return LITEREC_DATAPATH_MBPS;
	return kbps/1000;
}

uint32_t pcie_port_payload_mbps(int port, int *gen, int *width)
{
	int up, g, w;
	pcie_link_status(port, &up, &g, &w, NULL);
	if (gen)   *gen = g;
	if (width) *width = w;
	if (!up)
		return 0;
	return pcie_link_payload_mbps(g, w, pcie_devs[port].mps);
}
#endif

int pcie_link_up(int port)
{
	int up;
	pcie_link_status(port, &up, NULL, NULL, NULL);
	return up;
}

static uint32_t control[8];
static int control_valid[8];

static uint32_t ctrl_get(int port)
{
	if (!control_valid[port]) {
		control[port] = RD(port, CONTROL);
		control_valid[port] = 1;
	}
	return control[port];
}

static void ctrl_set(int port, uint32_t v)
{
	control[port] = v;
	control_valid[port] = 1;
	WR(port, CONTROL, v);
}

void pcie_set_perst(int port, int asserted)
{
	uint32_t v = ctrl_get(port) & ~(1 << CSR_PCIE0_CONTROL_PERST_OFFSET);
	ctrl_set(port, v | ((asserted ? 1 : 0) << CSR_PCIE0_CONTROL_PERST_OFFSET));
	if (asserted)
		memset(&pcie_devs[port], 0, sizeof(pcie_devs[port]));
}

int pcie_wait_link(int port, uint32_t timeout_us)
{
	uint64_t t0 = literec_cycles(), limit = literec_us_to_cycles(timeout_us);
	while (!pcie_link_up(port))
		if (literec_cycles() - t0 > limit)
			return PCIE_LINK_DOWN;
	return PCIE_OK;
}

static int mps_log2(int bytes)
{
	int l = 7;
	while ((1 << l) < bytes && l < 12)
		l++;
	return l;
}

void pcie_set_dma(int port, int enable, int mps_bytes)
{
	uint32_t v = ctrl_get(port);
	v &= ~((1 << CSR_PCIE0_CONTROL_DMA_ENABLE_OFFSET) | (15 << CSR_PCIE0_CONTROL_MPS_LOG2_OFFSET));
	v |= (enable ? 1 : 0) << CSR_PCIE0_CONTROL_DMA_ENABLE_OFFSET;
	v |= mps_log2(mps_bytes) << CSR_PCIE0_CONTROL_MPS_LOG2_OFFSET;
	ctrl_set(port, v);
}

int pcie_root_mps(int port)
{
	return RD(port, ROOT_CAPS);
}

/* Requests --------------------------------------------------------------------------------------- */

#define KIND_MRD   0
#define KIND_MWR   1
#define KIND_CFGRD 2
#define KIND_CFGWR 3

static int request(int port, int kind, uint64_t adr, int len, uint8_t first_be, uint8_t last_be,
	uint64_t wdata, uint64_t *rdata)
{
	uint32_t st;
	if (port < 0 || port >= NPORTS)
		return PCIE_BAD_PORT;
	if (!pcie_link_up(port))
		return PCIE_LINK_DOWN;
	WR(port, REQ_ADR_LO, (uint32_t)adr);
	WR(port, REQ_ADR_HI, (uint32_t)(adr >> 32));
	WR(port, REQ_WDATA_LO, (uint32_t)wdata);
	WR(port, REQ_WDATA_HI, (uint32_t)(wdata >> 32));
	WR(port, REQ_CTRL, (kind << CSR_PCIE0_REQ_CTRL_KIND_OFFSET) |
		(len << CSR_PCIE0_REQ_CTRL_LENGTH_OFFSET) |
		(first_be << CSR_PCIE0_REQ_CTRL_FIRST_BE_OFFSET) |
		(last_be << CSR_PCIE0_REQ_CTRL_LAST_BE_OFFSET) |
		(1u << CSR_PCIE0_REQ_CTRL_START_OFFSET));
	/* The requester always finishes (completion timeout in hardware). */
	do {
		st = RD(port, REQ_STATUS);
	} while ((st >> CSR_PCIE0_REQ_STATUS_BUSY_OFFSET) & 1);
	st = (st >> CSR_PCIE0_REQ_STATUS_STATUS_OFFSET) & 7;
	if (st == PCIE_OK && rdata)
		*rdata = ((uint64_t)RD(port, REQ_RDATA_HI) << 32) | RD(port, REQ_RDATA_LO);
	return st;
}

static uint64_t ecam(int bus, int dev, int fn, int reg)
{
	return ((uint64_t)bus << 20) | (dev << 15) | (fn << 12) | (reg & 0xffc);
}

int pcie_cfg_read(int port, int bus, int dev, int fn, int reg, uint32_t *val)
{
	uint64_t v = 0;
	int r = request(port, KIND_CFGRD, ecam(bus, dev, fn, reg), 1, 0xf, 0, 0, &v);
	*val = (r == PCIE_OK) ? (uint32_t)v : 0xffffffff;
	return r;
}

int pcie_cfg_write(int port, int bus, int dev, int fn, int reg, uint32_t val, uint8_t be)
{
	return request(port, KIND_CFGWR, ecam(bus, dev, fn, reg), 1, be, 0, val, NULL);
}

int pcie_mem_read32(int port, uint64_t adr, uint32_t *val)
{
	uint64_t v = 0;
	int r = request(port, KIND_MRD, adr, 1, 0xf, 0, 0, &v);
	*val = (r == PCIE_OK) ? (uint32_t)v : 0xffffffff;
	return r;
}

int pcie_mem_read64(int port, uint64_t adr, uint64_t *val)
{
	int r = request(port, KIND_MRD, adr, 2, 0xf, 0xf, 0, val);
	if (r != PCIE_OK)
		*val = ~0ULL;
	return r;
}

int pcie_mem_write32(int port, uint64_t adr, uint32_t val)
{
	return request(port, KIND_MWR, adr, 1, 0xf, 0, val, NULL);
}

int pcie_mem_write64(int port, uint64_t adr, uint64_t val)
{
	return request(port, KIND_MWR, adr, 2, 0xf, 0xf, val, NULL);
}

int pcie_mem_write_be(int port, uint64_t adr, uint32_t val, uint8_t be)
{
	return request(port, KIND_MWR, adr, 1, be, 0, val, NULL);
}

/* Device configuration (bus 1, device 0, function 0), retried on CRS for up to 1 s. */
#define CRS_TIMEOUT_US 1000000

int pcie_dev_cfg_read(int port, int reg, uint32_t *val)
{
	uint64_t t0 = literec_cycles(), limit = literec_us_to_cycles(CRS_TIMEOUT_US);
	int r;
	for (;;) {
		r = pcie_cfg_read(port, PCIE_DEV_BUS, 0, 0, reg, val);
		if (r != PCIE_CRS)
			return r;
		if (literec_cycles() - t0 > limit)
			return PCIE_NOT_READY;
	}
}

int pcie_dev_cfg_write(int port, int reg, uint32_t val)
{
	uint64_t t0 = literec_cycles(), limit = literec_us_to_cycles(CRS_TIMEOUT_US);
	int r;
	for (;;) {
		r = pcie_cfg_write(port, PCIE_DEV_BUS, 0, 0, reg, val, 0xf);
		if (r != PCIE_CRS)
			return r;
		if (literec_cycles() - t0 > limit)
			return PCIE_NOT_READY;
	}
}

/* Enumeration ------------------------------------------------------------------------------------ */

static const char *cap_name(int id)
{
	switch (id) {
	case 0x01: return "Power Management";
	case 0x05: return "MSI";
	case 0x10: return "PCI Express";
	case 0x11: return "MSI-X";
	case 0x09: return "Vendor Specific";
	default:   return "other";
	}
}

static const char *class_name(uint32_t cc)
{
	if (cc == 0x010802) return "NVM Express controller";
	if ((cc >> 8) == 0x0108) return "non-volatile memory controller";
	if ((cc >> 16) == 0x01) return "mass storage controller";
	return "other";
}

int pcie_enumerate_timeout(int port, int verbose, uint32_t link_timeout_us);

int pcie_enumerate(int port, int verbose)
{
	return pcie_enumerate_timeout(port, verbose, 100000);
}

int pcie_enumerate_timeout(int port, int verbose, uint32_t link_timeout_us)
{
	struct pcie_dev *d;
	uint32_t v, hdr, lo, hi, sz_lo, sz_hi = 0, cmd;
	int r, ptr, guard;

	if (port < 0 || port >= NPORTS)
		return PCIE_BAD_PORT;
	d = &pcie_devs[port];
	memset(d, 0, sizeof(*d));

	/* Release PERST# and wait for the link. */
	if (ctrl_get(port) & (1 << CSR_PCIE0_CONTROL_PERST_OFFSET))
		pcie_set_perst(port, 0);
	if (pcie_wait_link(port, link_timeout_us) != PCIE_OK) {
		if (verbose)
			printf("pcie%d: link down (no device, or it did not train within %lu us)\n", port,
				(unsigned long)link_timeout_us);
		return PCIE_LINK_DOWN;
	}

	r = pcie_dev_cfg_read(port, 0x00, &v);
	if (r != PCIE_OK || (v & 0xffff) == 0xffff || v == 0) {
		if (verbose)
			printf("pcie%d: no device at %02x:00.0 (%s)\n", port, PCIE_DEV_BUS,
				r != PCIE_OK ? pcie_strerror(r) : "vendor ID 0xffff");
		return r != PCIE_OK ? r : PCIE_NO_DEVICE;
	}
	d->vendor = v & 0xffff;
	d->device = v >> 16;
	if ((r = pcie_dev_cfg_read(port, 0x08, &v)) != PCIE_OK)
		return r;
	d->class_code = v >> 8;
	if ((r = pcie_dev_cfg_read(port, 0x0c, &hdr)) != PCIE_OK)
		return r;

	/* Disable decoding while sizing the BAR. */
	if ((r = pcie_dev_cfg_read(port, 0x04, &cmd)) != PCIE_OK)
		return r;
	pcie_dev_cfg_write(port, 0x04, cmd & ~0x7);

	/* BAR0 sizing (64-bit BAR0/BAR1 or 32-bit). */
	pcie_dev_cfg_read(port, 0x10, &lo);
	pcie_dev_cfg_write(port, 0x10, 0xffffffff);
	pcie_dev_cfg_read(port, 0x10, &sz_lo);
	d->bar0_64bit = ((lo >> 1) & 3) == 2;
	if (d->bar0_64bit) {
		pcie_dev_cfg_read(port, 0x14, &hi);
		pcie_dev_cfg_write(port, 0x14, 0xffffffff);
		pcie_dev_cfg_read(port, 0x14, &sz_hi);
	}
	{
		uint64_t mask = ((uint64_t)(d->bar0_64bit ? sz_hi : 0xffffffff) << 32) | (sz_lo & ~0xfu);
		d->bar0_size = (~mask) + 1;
	}
	if (d->bar0_size == 0 || d->bar0_size > PCIE_PORT_STRIDE) {
		if (verbose)
			printf("pcie%d: BAR0 size 0x%llx not supported (window of 0x%x)\n", port,
				(unsigned long long)d->bar0_size, PCIE_PORT_STRIDE);
		return PCIE_NO_DEVICE;
	}
	d->bar0 = PCIE_BAR_BASE + (uint64_t)port*PCIE_PORT_STRIDE;
	pcie_dev_cfg_write(port, 0x10, (uint32_t)d->bar0 | (lo & 0xf));
	if (d->bar0_64bit)
		pcie_dev_cfg_write(port, 0x14, (uint32_t)(d->bar0 >> 32));

	/* Capabilities. */
	if ((r = pcie_dev_cfg_read(port, 0x34, &v)) != PCIE_OK)
		return r;
	ptr = v & 0xfc;
	if (verbose) {
		printf("pcie%d: %02x:00.0 [%04x:%04x] class %06lx (%s), header type %02lx\n", port,
			PCIE_DEV_BUS, d->vendor, d->device, (unsigned long)d->class_code,
			class_name(d->class_code), (unsigned long)((hdr >> 16) & 0x7f));
		printf("  BAR0: %s, %lu KiB, assigned 0x%08llx\n", d->bar0_64bit ? "64-bit" : "32-bit",
			(unsigned long)(d->bar0_size >> 10), (unsigned long long)d->bar0);
		printf("  capabilities:");
	}
	for (guard = 0; ptr && guard < 48; guard++) {
		uint32_t c;
		if (pcie_dev_cfg_read(port, ptr, &c) != PCIE_OK)
			break;
		switch (c & 0xff) {
		case 0x01: d->pm_cap = ptr; break;
		case 0x05: d->msi_cap = ptr; break;
		case 0x10: d->pcie_cap = ptr; break;
		case 0x11: d->msix_cap = ptr; break;
		}
		if (verbose)
			printf(" [%02x] %s", ptr, cap_name(c & 0xff));
		ptr = (c >> 8) & 0xfc;
	}
	if (verbose)
		printf("\n");

	/* PCI Express capability: MPS/MRRS = min(root, device), link. */
	if (d->pcie_cap) {
		uint32_t devcap, devctl, lnkcap, lnksta;
		int root = pcie_root_mps(port), mps, mrrs = 512;
		pcie_dev_cfg_read(port, d->pcie_cap + 0x04, &devcap);
		pcie_dev_cfg_read(port, d->pcie_cap + 0x08, &devctl);
		pcie_dev_cfg_read(port, d->pcie_cap + 0x0c, &lnkcap);
		pcie_dev_cfg_read(port, d->pcie_cap + 0x10, &lnksta);
		lnksta >>= 16;
		d->mps_supported  = 128 << (devcap & 7);
		mps = d->mps_supported < root ? d->mps_supported : root;
		if (mrrs > 4096) mrrs = 4096;
		d->mps  = mps;
		d->mrrs = mrrs;
		devctl &= ~((7 << 5) | (7 << 12));
		devctl |= (mps_log2(mps) - 7) << 5;
		devctl |= (mps_log2(mrrs) - 7) << 12;
		pcie_dev_cfg_write(port, d->pcie_cap + 0x08, devctl & 0xffff);
		d->max_link_gen   = lnkcap & 0xf;
		d->max_link_width = (lnkcap >> 4) & 0x3f;
		d->link_gen       = lnksta & 0xf;
		d->link_width     = (lnksta >> 4) & 0x3f;
		if (verbose)
			printf("  PCIe: MPS %d B (device supports %d, root %d), MRRS %d B, link Gen%d x%d (max Gen%d x%d)\n",
				d->mps, d->mps_supported, root, d->mrrs, d->link_gen, d->link_width,
				d->max_link_gen, d->max_link_width);
	} else {
		d->mps = 128;
		d->mrrs = 128;
	}

	/* Decode memory, allow its DMA (Bus Master); INTx off (the host polls). */
	pcie_dev_cfg_write(port, 0x04, (cmd & ~0x7) | 0x0006 | 0x0400);
	pcie_set_dma(port, 1, d->mps);
	d->present = 1;
	return PCIE_OK;
}

void pcie_read_counters(int port, struct pcie_counters *c)
{
	c->rd_refused  = RD(port, RD_REFUSED);
	c->wr_refused  = RD(port, WR_REFUSED);
	c->poisoned    = RD(port, POISONED);
	c->malformed   = RD(port, MALFORMED);
	c->rd_served   = RD(port, RD_SERVED);
	c->wr_bytes    = RD64(port, WR_BYTES);
	c->unsupported = RD(port, UNSUPPORTED);
	c->unexpected  = RD(port, UNEXPECTED);
	c->timeouts    = RD(port, TIMEOUTS);
	c->doorbells   = RD(port, DOORBELLS);
	c->refused_adr = ((uint64_t)RD(port, REFUSED_ADR_HI) << 32) | RD(port, REFUSED_ADR_LO);
#ifdef CSR_PCIE0_DISCONTINUED_ADDR
	c->discontinued = RD(port, DISCONTINUED);
#else
	c->discontinued = 0;
#endif
}

#endif /* CSR_PCIE0_BASE */
