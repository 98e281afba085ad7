# LiteRecorder: the two commands of a fresh machine.
#
#   make sim     boot the simulated recorder SoC to the BIOS prompt (interactive)
#   make test    run the whole test suite (unit + system)
#   make bench   benchmarks (model link limits and profile curves, full-system nvme_bench)
#   make synth   logic cost of the NVMe datapath (Yosys)
#   make simspeed  speed of the full-system simulation on a fixed workload (modeled cycles/s)
#   make resources  whole board designs with Yosys: resources per block, logic depth
#   make pins    record the pinned modeled figures (test/data/pinned.json) of the tests that check them
#   make campaigns  the benchmark campaigns of record (literec bench): doc/bench/*/*.csv|png
#
# Both install the toolchain first (Debian packages + .venv with pinned PyPI versions), once.

VENV    := $(CURDIR)/.venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SIMARGS ?=
PYTEST_ARGS ?=
BENCHARGS ?=
RESOURCESARGS ?=

.PHONY: all install sim test test-unit test-system pins bench simspeed synth resources campaigns clean distclean

all: sim

$(STAMP): scripts/install.sh scripts/requirements.txt setup.py
	scripts/install.sh $(VENV)
	touch $@

install: $(STAMP)

sim: $(STAMP)
	$(PYTHON) targets/sim.py $(SIMARGS)

test: $(STAMP)
	$(PYTHON) -m pytest -n $(JOBS) --dist loadgroup -q -ra $(PYTEST_ARGS)

test-unit: $(STAMP)
	$(PYTHON) -m pytest -n $(JOBS) -q -ra -m unit $(PYTEST_ARGS)

test-system: $(STAMP)
	$(PYTHON) -m pytest -n $(JOBS) --dist loadgroup -q -ra -m system $(PYTEST_ARGS)

# Pinned figures (test/pinned.py): the tests that call pinned() run once with LITEREC_PINS=update;
# their figures are merged into test/data/pinned.json. Review its diff before committing it.
PINS_TESTS ?= $(shell grep -l '^from pinned import' test/test_*.py)
pins: $(STAMP)
	LITEREC_PINS=update $(PYTHON) -m pytest -n $(JOBS) --dist loadgroup -q -ra $(PINS_TESTS) $(PYTEST_ARGS)

# Benchmarks (not tests): RESULT lines with the measured figure, the limit and the ratio.
bench: $(STAMP)
	$(PYTHON) test/bench_ssd_model.py --curves
	$(PYTHON) test/bench_system.py $(BENCHARGS)
	$(PYTHON) -m pytest -q -p no:cacheprovider test/bench_board_dram.py
	$(PYTHON) test/bench_board_dram.py --mib 32 $(BOARDDRAMARGS)

# Simulation speed: boot, nvme_init, record and replay 256 MiB on the `ideal` drive; prints
# RESULT name=sim_speed (modeled cycles, wall seconds, cycles per second). THREADS=n: model threads.
THREADS ?= 1
simspeed: $(STAMP)
	$(PYTHON) targets/sim.py --output-dir build/simspeed-t$(THREADS) --threads $(THREADS) \
		--ssd-profile ideal --ns-size 1GiB --timeout 1800 \
		--run "nvme_init; rec_record 0 256; rec_replay 0 256"

# Logic cost of the NVMe datapath with Yosys (synth_xilinx, UltraScale+), about 10 minutes.
synth: $(STAMP)
	$(PYTHON) test/bench_synth.py --out build/synth

# Resources of the whole board designs (KC705, KCU105, ZCU106; Yosys synth_xilinx, hard IP
# black-boxed): LUT/FF/BRAM/DSP per block and the deepest logic path of the datapath.
resources: $(STAMP)
	$(PYTHON) test/bench_resources.py --out build/resources $(RESOURCESARGS)

# Benchmark campaigns of record (doc/benchmarks.md): `literec bench` on the simulation, one directory
# per drive profile (peak, sizes, full, iops) and the recorder striped over 1, 2, 4 SSDs on the
# KCU105's DRAM model. Sizes are chosen for 2 cores (about 1 s of wall time per modeled ms): about an
# hour in all, plus three Verilator builds for the scaling. CAMPAIGN_PROFILES/CAMPAIGN_KINDS narrow it.
CAMPAIGN_PROFILES ?= seed-ssd1 tlc-slc budget enterprise-tlc
CAMPAIGN_KINDS    ?= peak sizes full iops scaling
CAMPAIGN_SSD      ?= --ns-size 16GiB
CAMPAIGN_PEAK     ?= --max-chunks 256
CAMPAIGN_SIZES    ?= --qd 256 --kib 1024
CAMPAIGN_FULL     ?= --mib 128 --interval-ms 2
CAMPAIGN_IOPS     ?= --mib 32 --seconds 0.1 --interval-ms 5
CAMPAIGN_SCALING  ?= --dram kcu105 --ssd-profile tlc-slc --scaling-ssds 1,2,4 --mib 128
LITEREC := $(PYTHON) -m literecorder.host.cli
campaigns: $(STAMP)
	@set -e; for k in $(CAMPAIGN_KINDS); do \
	  case $$k in \
	    peak)  a="$(CAMPAIGN_PEAK)";; sizes) a="$(CAMPAIGN_SIZES)";; \
	    full)  a="$(CAMPAIGN_FULL)";; iops)  a="$(CAMPAIGN_IOPS)";; \
	    scaling) echo "== scaling"; $(LITEREC) bench scaling --sim $(CAMPAIGN_SSD) $(CAMPAIGN_SCALING) \
	        -o doc/bench/scaling; continue;; \
	    *) echo "campaigns: unknown kind $$k (peak sizes full iops scaling)"; exit 2;; \
	  esac; \
	  for p in $(CAMPAIGN_PROFILES); do \
	    echo "== $$k on $$p"; \
	    $(LITEREC) bench $$k --sim --ssd-profile $$p $(CAMPAIGN_SSD) $$a -o doc/bench/$$p; \
	  done; \
	done

clean:
	rm -rf build

distclean: clean
	rm -rf $(VENV)
