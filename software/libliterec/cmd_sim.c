// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// The simulation's user streams (soc/sim_io.py): the simulated ADC (records through the user port)
// and DAC (replay output=user). Only in the simulation SoC.
//
//   sim_io [clear]

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include <bios/command.h>

#include "literec.h"

#ifdef CSR_SIMIO_BASE

static void sim_io_handler(int nb_params, char **params)
{
	uint32_t cfg = simio_config_read();
	uint64_t beat = REC_USER_RECORD_BITS/8;
	if (nb_params > 0) {
		if (strcmp(params[0], "clear")) {
			printf("sim_io [clear]   (clear: reset the DAC's counters)\n");
			return;
		}
		simio_ctrl_write(1 << CSR_SIMIO_CTRL_DAC_CLEAR_OFFSET);
	}
	printf("sim_io: ADC %s, %lu/65536 beats per cycle of %lu bits at 100 MHz, seed %lu; %llu bytes produced, %llu lost\n",
		(cfg >> CSR_SIMIO_CONFIG_ADC_ENABLE_OFFSET) & 1 ? "enabled" : "disabled",
		(unsigned long)((cfg >> CSR_SIMIO_CONFIG_ADC_RATE_OFFSET) & 0xffff), (unsigned long)REC_USER_RECORD_BITS,
		(unsigned long)simio_adc_seed_read(), (unsigned long long)(simio_adc_produced_read()*beat),
		(unsigned long long)(simio_adc_lost_read()*beat));
	printf("RESULT name=sim_io adc_enable=%lu adc_rate=%lu adc_beat_bytes=%llu adc_seed=%lu adc_produced_bytes=%llu "
		"adc_lost_bytes=%llu dac_beats=%llu dac_bytes=%llu dac_errors=%llu dac_lasts=%llu\n",
		(unsigned long)((cfg >> CSR_SIMIO_CONFIG_ADC_ENABLE_OFFSET) & 1),
		(unsigned long)((cfg >> CSR_SIMIO_CONFIG_ADC_RATE_OFFSET) & 0xffff), (unsigned long long)beat,
		(unsigned long)simio_adc_seed_read(), (unsigned long long)(simio_adc_produced_read()*beat),
		(unsigned long long)(simio_adc_lost_read()*beat), (unsigned long long)simio_dac_beats_read(),
		(unsigned long long)simio_dac_bytes_read(), (unsigned long long)simio_dac_errors_read(),
		(unsigned long long)simio_dac_lasts_read());
}
define_command(sim_io, sim_io_handler, "Simulated ADC/DAC counters: sim_io [clear]", LITEREC_CMDS);

#endif
