# This file is part of LiteRecorder.
# SPDX-License-Identifier: BSD-2-Clause
#
# Verilator build of the simulation SoC, run from the gateware directory that LiteX generated
# (sim.v, sim_init.cpp, sim_header.h, variables.mak). It replaces LiteX's sim Makefile so that the
# project chooses the Verilator and C++ options (targets/sim.py: SimBuild); LiteX's simulation core
# (event loop, pads, module loader) and its modules are compiled from the LiteX package as they are.
#
#   make -f sim.mk VSRCS="a.v b.v" [JOBS=n] [THREADS=n] [TRACE=1] [TRACE_FST=1] [VFLAGS=...]
#                  [PGO=gen|use PGO_DIR=dir]
#
# PGO (profile-guided optimization of the C++ model, SimBuild does it): `gen` builds an instrumented
# model (a training run writes its profile to PGO_DIR on SIGUSR1, glue.cpp), `use` the final one.
# Without ccache: it does not find profiles named by -fprofile-dir and would return stale objects.

GLUE_DIR   := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))

include variables.mak

OBJ_DIR    := $(abspath obj_dir)
JOBS       ?= 2
THREADS    ?= 1
TRACE      ?= 0
TRACE_FST  ?= 0
OPT        ?= -O2
VFLAGS     ?=
PGO        ?=
PGO_DIR    ?= $(abspath pgo)
# LiteX's own simulation modules to build (the CPU-less core's register bridge needs serial2tcp).
LITEX_MODULES ?= serial2console clocker

# LiteX's simulation core (C), compiled once per build directory.
CORE_SRCS  := $(wildcard $(SRC_DIR)/*.c)
CORE_OBJS  := $(addprefix $(OBJ_DIR)/,$(notdir $(CORE_SRCS:.c=.o)))
PGO_FLAGS  := $(if $(filter gen,$(PGO)),-fprofile-generate -fprofile-update=single -fprofile-dir=$(PGO_DIR) -DLITEREC_PGO_TRAIN) \
              $(if $(filter use,$(PGO)),-fprofile-use -fprofile-partial-training -Wno-missing-profile -Wno-coverage-mismatch -fprofile-dir=$(PGO_DIR))
CFLAGS     := -Wall $(OPT) $(PGO_FLAGS) -I$(SRC_DIR) $(if $(filter 1,$(TRACE_FST)),-DTRACE_FST) \
              $(if $(filter 1,$(TRACE)),-DLITEREC_TRACE)
LDFLAGS    := -lpthread -Wl,--no-as-needed -ljson-c -lz -lm -lstdc++ -ldl -levent \
              $(if $(filter gen,$(PGO)),-lgcov)

TRACE_ARGS := $(if $(filter 1,$(TRACE)),--trace $(if $(filter 1,$(TRACE_FST)),--trace-fst),)
THREAD_ARGS:= $(if $(filter-out 1,$(THREADS)),--threads $(THREADS),)

.PHONY: all modules sim
all: modules sim

$(OBJ_DIR)/%.o: $(SRC_DIR)/%.c
	@mkdir -p $(OBJ_DIR)
	$(CC) -c $(CFLAGS) -o $@ $<

modules:
	mkdir -p modules
	$(MAKE) -C modules -f $(SRC_DIR)/modules/Makefile MODULES="$(LITEX_MODULES)"

sim: $(CORE_OBJS)
	verilator --cc $(VSRCS) --exe --top-module sim -O3 $(VFLAGS) $(TRACE_ARGS) $(THREAD_ARGS) \
		-DPRINTF_COND=0 --unroll-count 256 --relative-includes \
		-Wno-fatal -Wno-BLKANDNBLK -Wno-WIDTH -Wno-COMBDLY -Wno-CASEINCOMPLETE \
		-CFLAGS "$(CFLAGS) -I$(abspath .)" -LDFLAGS "$(LDFLAGS)" \
		sim_init.cpp $(GLUE_DIR)glue.cpp $(CORE_OBJS)
	$(MAKE) -j$(JOBS) -C $(OBJ_DIR) -f Vsim.mk Vsim $(if $(PGO),OBJCACHE=) OPT_FAST="$(OPT)" OPT_SLOW="-O1" OPT_GLOBAL="$(OPT)"
