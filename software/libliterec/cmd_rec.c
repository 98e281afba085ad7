// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Recorder BIOS commands: configuration of this build.

#include <stdio.h>
#include <stdlib.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include <bios/command.h>

#include "literec.h"

static void rec_info_handler(int nb_params, char **params)
{
	printf("LiteRecorder build configuration:\n");
	printf("  sys_clk        : %lu Hz (modeled hardware clock)\n", (unsigned long)CONFIG_CLOCK_FREQUENCY);
#ifdef MAIN_RAM_SIZE
	printf("  DRAM           : %lu MiB at 0x%08lx\n",
		(unsigned long)(MAIN_RAM_SIZE >> 20), (unsigned long)MAIN_RAM_BASE);
#else
	printf("  DRAM           : none\n");
#endif
	printf("  SSD ports      : %d\n", LITEREC_SSD_PORTS);
	printf("  chunk size     : %lu KiB\n", (unsigned long)(LITEREC_CHUNK_SIZE >> 10));
	printf("  PCIe datapath  : %d bits\n", LITEREC_PCIE_DATA_WIDTH);
	printf("RESULT name=rec_info sys_clk_hz=%lu dram_bytes=%lu ssd_ports=%d chunk_bytes=%lu pcie_data_width=%d\n",
		(unsigned long)CONFIG_CLOCK_FREQUENCY,
#ifdef MAIN_RAM_SIZE
		(unsigned long)MAIN_RAM_SIZE,
#else
		0UL,
#endif
		LITEREC_SSD_PORTS, (unsigned long)LITEREC_CHUNK_SIZE, LITEREC_PCIE_DATA_WIDTH);
}
define_command(rec_info, rec_info_handler, "Recorder build configuration (clock, DRAM, SSD ports, chunk)", LITEREC_CMDS);
