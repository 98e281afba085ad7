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

/* 64-bit counters read consistently (hi, lo, hi again). */
#define SIMIO64(name) literec_csr_read64(CSR_SIMIO_##name##_ADDR)

static void sim_io_handler(int nb_params, char **params)
{
	uint32_t cfg = simio_config_read();
	uint64_t beat = REC_USER_RECORD_BITS/8, produced, lost;
	/* The ADC's rate register: beats per cycle x 65536; 0 is a beat every cycle. */
	unsigned long rate = (cfg >> CSR_SIMIO_CONFIG_ADC_RATE_OFFSET) & 0xffff;
	if (rate == 0)
		rate = 65536;
	if (nb_params > 0) {
		if (strcmp(params[0], "clear")) {
			printf("sim_io [clear]   (clear: reset the DAC's counters)\n");
			return;
		}
		simio_ctrl_write(1 << CSR_SIMIO_CTRL_DAC_CLEAR_OFFSET);
	}
	produced = SIMIO64(ADC_PRODUCED)*beat;
	lost     = SIMIO64(ADC_LOST)*beat;
	printf("sim_io: ADC %s, %lu/65536 beats per cycle of %lu bits at 100 MHz, seed %lu; %llu bytes produced, %llu lost\n",
		(cfg >> CSR_SIMIO_CONFIG_ADC_ENABLE_OFFSET) & 1 ? "enabled" : "disabled", rate,
		(unsigned long)REC_USER_RECORD_BITS, (unsigned long)simio_adc_seed_read(), (unsigned long long)produced,
		(unsigned long long)lost);
	printf("RESULT name=sim_io adc_enable=%lu adc_rate=%lu adc_beat_bytes=%llu adc_seed=%lu adc_produced_bytes=%llu "
		"adc_lost_bytes=%llu dac_beats=%llu dac_bytes=%llu dac_errors=%llu dac_lasts=%llu\n",
		(unsigned long)((cfg >> CSR_SIMIO_CONFIG_ADC_ENABLE_OFFSET) & 1), rate, (unsigned long long)beat,
		(unsigned long)simio_adc_seed_read(), (unsigned long long)produced, (unsigned long long)lost,
		(unsigned long long)SIMIO64(DAC_BEATS), (unsigned long long)SIMIO64(DAC_BYTES),
		(unsigned long long)SIMIO64(DAC_ERRORS), (unsigned long long)simio_dac_lasts_read());
}
define_literec_command(sim_io, sim_io_handler, "Simulated ADC/DAC counters: sim_io [clear]");

#endif
