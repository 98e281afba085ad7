#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The worked example (examples/counter): a user's SoC with its own clock domain, a counter source,
a replay checker and a hardware start from the user's logic, simulated through the supported entry
point (SimBuild(soc_cls=...)) and generated for the KCU105. Also: the simulation's clocks declared
by a SoC (refused when the simulation cannot keep them at speed) and the cache key of a user's files."""

import os
import re
import sys
import json
import shutil
import importlib.util

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "counter")
sys.path.insert(0, EXAMPLE)

import run_sim # noqa: E402
import counter_soc # noqa: E402

WORDS = 65536       # 512 KiB: four 128 KiB chunks

_run = {}

def example_run():
    if not _run:
        b = run_sim.build()
        _run["build"] = b
        _run["r"] = run_sim.run(b, WORDS)
    return _run["build"], _run["r"]

@pytest.mark.system
@pytest.mark.xdist_group("example-counter")
def test_example_records_the_counter_from_the_users_start_and_replays_it():
    b, r = example_run()
    assert "rec_start: armed, waiting for the hardware start input" in r["start"].splitlines(), r["start"]
    assert "rec_wait: until-stop input ended" in r["wait"], r["wait"]
    assert r["produced"] == WORDS
    lba, nbytes = run_sim.recording_lba(r["list"])
    assert nbytes == 8*WORDS
    n, bad, first = run_sim.check_namespace(r["ns_file"], 512, lba, WORDS)
    assert (n, bad, first) == (WORDS, 0, None)
    assert (r["checked"], r["errors"]) == (WORDS, 0)

@pytest.mark.system
@pytest.mark.xdist_group("example-counter")
def test_a_second_hardware_start_and_a_start_without_the_engines_never_hang():
    b, r = example_run()
    # The user's start after the armed recording: the arm was used, nothing runs.
    first = r["after_kick"].strip().splitlines()[0]
    assert first.startswith("recorder: until-stop done, input ended"), r["after_kick"]
    # Armed, the engine given back to the CPU, then the user's start: refused by the recorder.
    assert r["refused_wait"] is not None
    assert "rec_wait: until-stop queue engine not given to the recorder" in r["refused_wait"], r["refused_wait"]
    assert re.search(r"RESULT name=rec_wait done=1 status=14 ", r["refused_wait"]), r["refused_wait"]

@pytest.mark.system
@pytest.mark.xdist_group("example-counter")
def test_a_soc_without_the_simulated_adc_declares_its_own_clock():
    b, _ = example_run()
    assert b.layout() == {"clocks": {"user": counter_soc.USER_CLK_FREQ}, "simio": False}
    cfg = json.load(open(os.path.join(b.output_dir, "runs", "counter", "sim_config.js")))
    clockers = {m["interface"][0]: m["args"]["freq_hz"] for m in cfg if m.get("module") == "clocker"}
    assert clockers == {"sys_clk": b.sys_clk_freq, "user_clk": counter_soc.USER_CLK_FREQ}
    assert not any(m.get("module") == "simio" for m in cfg)
    assert os.path.basename(b.output_dir).startswith("CounterSimSoC-")

# Clocks and the cache key (no simulation) ----------------------------------------------------------

@pytest.mark.unit
def test_a_user_clock_the_simulation_cannot_keep_at_speed_is_refused_with_good_ones():
    from literecorder.soc.sim_soc import sim_clock_error, LiteRecorderSimSoC
    assert sim_clock_error("user", 50e6, 200e6) is None
    assert sim_clock_error("user", 125e6, 200e6) is None            # 5 steps per sys half period
    assert sim_clock_error("user", 150e6, 200e6) == ("simulation clock 'user' at 150 MHz: its half "
        "period is not a whole number of picoseconds; nearest good frequencies: 125 MHz or 160 MHz")
    assert sim_clock_error("user", 156.25e6, 200e6) == ("simulation clock 'user' at 156.25 MHz: the "
        "simulation would step 25 times per half period of the 200 MHz sys_clk (about 25x slower; at most 10 "
        "keep it at speed); nearest good frequencies: 125 MHz or 160 MHz")
    # The nearest good frequencies are exact, not whole MHz only: 62.5 MHz is good beside 200 MHz
    # (8000 ps half period, 5 steps per sys half period), 61.44 MHz is not (8138.02 ps).
    assert sim_clock_error("user", 62.5e6, 200e6) is None
    assert sim_clock_error("user", 61.44e6, 200e6) == ("simulation clock 'user' at 61.44 MHz: its half "
        "period is not a whole number of picoseconds; nearest good frequencies: 50 MHz or 62.5 MHz")
    class Bad(LiteRecorderSimSoC):
        def __init__(self):
            LiteRecorderSimSoC.__init__(self)
            self.add_sim_clock("user", 150e6)
    with pytest.raises(ValueError, match=r"simulation clock 'user' at 150 MHz: .* 125 MHz or 160 MHz"):
        Bad()

@pytest.mark.unit
def test_the_build_cache_notices_a_change_in_the_users_files(tmp_path):
    from literecorder.targets.sim import SimBuild, load_soc_class
    d = tmp_path / "mydesign"
    shutil.copytree(EXAMPLE, d, ignore=shutil.ignore_patterns("__pycache__"))
    cls = load_soc_class(f"{d / 'counter_soc.py'}:CounterSimSoC")
    b = SimBuild(soc_cls=cls, pgo=False)
    before = b._sources_digest()
    assert str(d / "counter_soc.py") in b._soc_files()
    (d / "helper.py").write_text("# a file of the user's design\n")
    assert b._sources_digest() != before
    # A class that is not a LiteRecorderSimSoC, a bad spec: clear errors.
    with pytest.raises(ValueError, match="a subclass of literecorder.soc.sim_soc.LiteRecorderSimSoC"):
        SimBuild(soc_cls=dict)
    with pytest.raises(ValueError, match=r"--soc nomodule: MODULE:CLASS"):
        load_soc_class("nomodule")
    with pytest.raises(ValueError, match=r"has no NoSuchClass"):
        load_soc_class(f"{d / 'counter_soc.py'}:NoSuchClass")

@pytest.mark.unit
def test_add_recorder_stream_after_the_recorder_is_refused():
    from literecorder.soc.sim_soc import LiteRecorderSimSoC
    soc = LiteRecorderSimSoC()
    with pytest.raises(ValueError, match=r"the recorder is built already: call it before LiteRecorderSoC.__init__"):
        soc.add_recorder_stream(record=counter_soc.CounterLogic("sys").source)

@pytest.mark.unit
@pytest.mark.xdist_group("board-kcu105")
def test_the_example_generates_for_the_kcu105(tmp_path):
    """The same user logic in the KCU105's design (add_user_clock: the SoC's MMCM makes 50 MHz):
    generated with the target's command line (no Vivado), the user's CSRs and the MMCM's third output
    in it, the crossing constrained."""
    from literecorder.targets import xilinx_kcu105
    out = tmp_path / "kcu105"
    rc = xilinx_kcu105.main(["--output-dir", str(out), "--no-compile-software"],
        soc_cls=counter_soc.CounterKCU105)
    assert rc == 0
    csr_h = (out / "software" / "include" / "generated" / "csr.h").read_text()
    assert "CSR_COUNTER_WORDS_ADDR" in csr_h and "CSR_COUNTER_CHECKED_ADDR" in csr_h
    v = (out / "gateware" / "xilinx_kcu105.v").read_text()
    # The MMCM: the 4x clock, the IDELAY reference, and the user's 50 MHz (VCO 1000 MHz / 20).
    mult = int(re.search(r"\.CLKFBOUT_MULT_F\s*\(\d+'d(\d+)\)", v).group(1))
    div  = int(re.search(r"\.CLKOUT2_DIVIDE\s*\(\d+'d(\d+)\)", v).group(1))
    assert 125e6*mult/div == counter_soc.USER_CLK_FREQ, (mult, div)
    tcl = (out / "gateware" / "xilinx_kcu105.tcl").read_text()
    assert ("puts $literec_xdc {set_max_delay -datapath_only -from [get_clocks -of_objects [get_nets "
        "user_clk]] -to [get_clocks -of_objects [get_nets sys_clk]] 8.000}") in tcl
    assert ("puts $literec_xdc {set_max_delay -datapath_only -from [get_clocks -of_objects [get_nets "
        "sys_clk]] -to [get_clocks -of_objects [get_nets user_clk]] 20.000}") in tcl
