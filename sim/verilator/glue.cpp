// This file is part of LiteRecorder.
// SPDX-License-Identifier: BSD-2-Clause
//
// Glue between LiteX's simulation core (sim.c: event loop, modules, pads) and the Verilated SoC.
// The functions are the ones sim.c and the generated sim_init.cpp call. Waveform tracing is compiled
// in only for trace builds (LITEREC_TRACE): a model built without --trace evaluates faster.
// A PGO training build (LITEREC_PGO_TRAIN, sim.mk PGO=gen) writes its profile and exits on SIGUSR1.

#include <stdio.h>
#include <stdint.h>
#include "Vsim.h"
#include "verilated.h"

#ifdef LITEREC_TRACE
#ifdef TRACE_FST
#include "verilated_fst_c.h"
typedef VerilatedFstC Tracer;
static const char *trace_file = "sim.fst";
#else
#include "verilated_vcd_c.h"
typedef VerilatedVcdC Tracer;
static const char *trace_file = "sim.vcd";
#endif
static Tracer *tracer;
static Vsim *traced;
static uint64_t trace_start, trace_end;
#endif

static uint64_t now_ps;

#ifdef LITEREC_PGO_TRAIN
#include <signal.h>
#include <unistd.h>
extern "C" void __gcov_dump(void);
static volatile sig_atomic_t pgo_dump_requested;
static void pgo_request_dump(int) { pgo_dump_requested = 1; }
#endif

extern "C" void litex_sim_eval(void *vsim, uint64_t time_ps)
{
	((Vsim *)vsim)->eval();
	now_ps = time_ps;
#ifdef LITEREC_PGO_TRAIN
	if (pgo_dump_requested) {     /* between two evaluations: the profile is consistent */
		__gcov_dump();
		_exit(0);
	}
#endif
}

extern "C" void litex_sim_init_cmdargs(int argc, char *argv[])
{
	Verilated::commandArgs(argc, argv);
#ifdef LITEREC_PGO_TRAIN
	signal(SIGUSR1, pgo_request_dump);
#endif
}

extern "C" void litex_sim_init_tracer(void *vsim, long start, long end)
{
#ifdef LITEREC_TRACE
	traced = (Vsim *)vsim;
	trace_start = start;
	trace_end = end >= 0 ? (uint64_t)end : UINT64_MAX;
	Verilated::traceEverOn(true);
	tracer = new Tracer;
	traced->trace(tracer, 99);
	tracer->open(trace_file);
	tracer->set_time_unit("1ps");
	tracer->set_time_resolution("1ps");
#else
	(void)vsim; (void)start; (void)end;
#endif
}

extern "C" void litex_sim_tracer_dump()
{
#ifdef LITEREC_TRACE
	/* The SoC's sim_trace signal switches dumping on and off (the BIOS/gateware control it). */
	if (traced->sim_trace && trace_start <= now_ps && now_ps <= trace_end)
		tracer->dump((uint64_t)now_ps);
#endif
}

extern "C" int litex_sim_got_finish()
{
#ifdef LITEREC_TRACE
	tracer->flush();       /* a trace stays readable when the simulation is killed */
#endif
	if (!Verilated::gotFinish())
		return 0;
#ifdef LITEREC_TRACE
	tracer->close();
#endif
	return 1;
}

#if VM_COVERAGE
extern "C" void litex_sim_coverage_dump()
{
	VerilatedCov::write("sim.cov");
}
#endif

double sc_time_stamp()
{
	return (double)now_ps;
}
