#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The simulation with a board's DRAM (``targets/sim.py --dram kcu105``): the SoC runs at the
board's 125 MHz with its DDR4 module through a 1:4 PHY model (8 GB/s peak), rec_info reports the
budget, and recording/replaying over two SSDs stays under the DRAM's ceiling (4 GB/s: every byte
crosses the DRAM twice) although the two links could carry 7.3 GB/s.

A benchmark, not part of `make test` (it needs a Verilator build of its own, minutes of CPU): `make
bench` runs it, or `.venv/bin/python -m pytest -q test/bench_board_dram.py`. The generation of the
same SoC and its budget constants are checked in test/test_boards.py."""

import pytest

from conftest import result

BUILD = dict(n_ssds=2, dram="kcu105", pgo=True)

@pytest.fixture(scope="module")
def sim(request):
    from conftest import get_build, _run_name, DEFAULT_SSD
    from literecorder.targets.sim import SimSession, ssd_devices
    build = get_build(**BUILD)
    s = SimSession(build, name=_run_name(request) + "-kcu105dram",
        devices=ssd_devices(list(DEFAULT_SSD), build.n_ssds, build.sys_clk_freq, build.pcie_data_width),
        boot_timeout=300)
    yield s
    s.close()

@pytest.mark.system
@pytest.mark.xdist_group("board_dram")
def test_rec_info_reports_the_board_budget(sim):
    r = result(sim.cmd("rec_info"), "rec_info")
    assert int(r["sys_clk_hz"]) == 125_000_000
    assert (int(r["dram_peak_mbps"]), int(r["dram_ceiling_mbps"])) == (8000, 4000)
    assert (int(r["link_mbps"]), int(r["links_mbps"]), int(r["dram_bound"])) == (3653, 7306, 1)
    assert int(r["ssd_ports"]) == 2

@pytest.mark.system
@pytest.mark.xdist_group("board_dram")
def test_two_ssds_are_bound_by_the_board_dram(sim):
    for i in range(2):
        assert result(sim.cmd(f"nvme_init {i}"), "nvme_init")["ok"] == "1"
    rec = result(sim.cmd("rec_record 0 32 ports=all", timeout=600), "rec_record")
    rep = result(sim.cmd("rec_replay 0 32 ports=all", timeout=600), "rec_replay")
    assert rec["ok"] == "1" and rec["ports"] == "2" and rec["lost_beats"] == "0"
    assert rep["ok"] == "1" and rep["errors"] == "0" and rep["ports"] == "2"
    assert int(rec["bytes"]) == int(rep["bytes"]) == 32 << 20
    # Time is counted in cycles of the modeled 125 MHz clock: the rate the BIOS prints is theirs.
    assert abs(float(rec["mbps"]) - (32 << 20)/(int(rec["cycles"])/125e6)/1e6) < 0.01
    # Under the DRAM ceiling (and well under the two links), above one SSD link's half.
    for r in (rec, rep):
        assert 1826 < float(r["mbps"]) < 4000, r
