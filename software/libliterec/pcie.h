// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// PCIe root-complex driver: configuration/memory requests through the root port's requester,
// link control, enumeration of the device behind each root port.

#ifndef __LITEREC_PCIE_H
#define __LITEREC_PCIE_H

#include <stdint.h>

/* Request results (the requester's status codes, plus driver errors). */
#define PCIE_OK         0
#define PCIE_UR         1   /* Unsupported Request */
#define PCIE_CRS        2   /* Configuration Request Retry Status */
#define PCIE_CA         3   /* Completer Abort */
#define PCIE_TIMEOUT    4   /* Completion timeout */
#define PCIE_POISONED   5
#define PCIE_MALFORMED  6
#define PCIE_LINK_DOWN  7
#define PCIE_NO_DEVICE  8
#define PCIE_BAD_PORT   9
#define PCIE_NOT_READY 10   /* CRS for longer than the allowed time */

/* Device identity on each root port: bus 1, device 0, function 0. */
#define PCIE_DEV_BUS 1

struct pcie_dev {
	int      present;
	uint16_t vendor, device;
	uint32_t class_code;      /* base << 16 | sub << 8 | prog-if */
	uint64_t bar0;            /* assigned bus address (0: none) */
	uint64_t bar0_size;
	int      bar0_64bit;
	uint8_t  pcie_cap;        /* capability offsets (0: absent) */
	uint8_t  pm_cap, msi_cap, msix_cap;
	int      mps_supported;   /* bytes, from DevCap */
	int      mps, mrrs;       /* programmed in DevCtl (bytes) */
	int      link_gen, link_width;          /* from the device's Link Status */
	int      max_link_gen, max_link_width;  /* from its Link Capabilities */
};

extern struct pcie_dev pcie_devs[];

int  pcie_nports(void);
const char *pcie_strerror(int err);

/* Modeled time (sys_clk cycles since power-up). */
uint64_t literec_cycles(void);
uint64_t literec_us_to_cycles(uint64_t us);
uint64_t literec_cycles_to_us(uint64_t cycles);   /* exact for any 64-bit count (no overflow) */

/* Link / PERST#. */
int  pcie_link_up(int port);
void pcie_link_status(int port, int *up, int *gen, int *width, int *ltssm);
void pcie_set_perst(int port, int asserted);
int  pcie_wait_link(int port, uint32_t timeout_us);
void pcie_set_dma(int port, int enable, int mps_bytes);
int  pcie_root_mps(int port);
/* Payload MB/s an SSD reads over a link of this generation and width with completions of mps bytes
 * (0: the build's LITEREC_LINK_MPS), capped by the TLP datapath: soc/recorder_soc.py's
 * link_payload_rate with its exported constants. 0 for a generation the table does not have. */
uint32_t pcie_link_payload_mbps(int gen, int width, int mps);
/* The same for port's link as trained now (its enumerated MPS once pcie_scan/nvme_init ran);
 * 0 when the link is down. */
uint32_t pcie_port_payload_mbps(int port, int *gen, int *width);

/* Requests (bus/dev/fn of Type-0 configuration requests; reg = byte offset, dword aligned). */
int pcie_cfg_read(int port, int bus, int dev, int fn, int reg, uint32_t *val);
int pcie_cfg_write(int port, int bus, int dev, int fn, int reg, uint32_t val, uint8_t be);
int pcie_mem_read32(int port, uint64_t adr, uint32_t *val);
int pcie_mem_read64(int port, uint64_t adr, uint64_t *val);
int pcie_mem_write32(int port, uint64_t adr, uint32_t val);
int pcie_mem_write64(int port, uint64_t adr, uint64_t val);
int pcie_mem_write_be(int port, uint64_t adr, uint32_t val, uint8_t be);

/* Device configuration reads retried while it answers CRS (up to timeout_us of modeled time). */
int pcie_dev_cfg_read(int port, int reg, uint32_t *val);
int pcie_dev_cfg_write(int port, int reg, uint32_t val);

/* Enumerate the device of a root port: IDs, BAR0 sizing and assignment, capabilities, MPS/MRRS,
 * Command MEM|BME. verbose: print what is found. */
int pcie_enumerate(int port, int verbose);
int pcie_enumerate_timeout(int port, int verbose, uint32_t link_timeout_us);

/* Counters of the completer (refused/dropped device requests). */
struct pcie_counters {
	uint32_t rd_refused, wr_refused, poisoned, malformed, rd_served;
	uint64_t wr_bytes;
	uint32_t unsupported, unexpected, timeouts, doorbells;
	uint64_t refused_adr;
	uint32_t discontinued;   /* TLPs the hard block marked discontinue (boards; 0 in simulation) */
};
void pcie_read_counters(int port, struct pcie_counters *c);

/* CSR base of a root port's block (for other drivers). */
unsigned long pcie_csr_base(int port);

#endif
