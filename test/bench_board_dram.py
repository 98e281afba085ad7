#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The recorder on a board's DRAM model (``targets/sim.py --dram kcu105|zcu106|kc705``, with the
board's PCIe datapath and link: the KC705 one Gen2 x4 SSD at 128 bits) and on the simulation's own
DRAM (also one Gen4 x4 SSD at 512 bits, ``sim-gen4``): record and replay rates of 1 and 2 SSDs
(``ideal``) against the links as trained (``rec_info``), and
the bytes that went through the DRAM (``bytes_spilled``), with the ring's on-chip slots
(``staging=auto``) and without them (``staging=off``: the DRAM ring alone, the recorder before
issue 26).

A benchmark, not part of `make test` (a Verilator build per DRAM, minutes of CPU): `make bench` runs
the pytest part (KCU105 model), or as a script for every DRAM with ``RESULT name=board_dram`` lines:
``.venv/bin/python test/bench_board_dram.py [--dram kcu105 zcu106 kc705 sim sim-gen4] [--mib 64] [--staging auto off]``.
The generation of the same SoC and its budget constants are checked in test/test_boards.py."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import result

# What is measured: the build (targets/sim.py's parameters), the simulated drives' link, the SSD counts.
CONFIGS = {
    "kcu105":   dict(build=dict(n_ssds=2, dram="kcu105"), link="gen3x4", ssds=(1, 2)),
    "zcu106":   dict(build=dict(n_ssds=2, dram="zcu106"), link="gen3x4", ssds=(1, 2)),
    # The KC705's FPGA Drive FMC carries one SSD, on a Gen2 x4 link (7-series pcie_7x, 128-bit datapath).
    "kc705":    dict(build=dict(n_ssds=1, dram="kc705", pcie_data_width=128), link="gen2x4", ssds=(1,)),
    "sim":      dict(build=dict(n_ssds=2, dram="sim"), link="gen3x4", ssds=(1, 2)),
    # One Gen4 x4 drive on a 512-bit datapath (the simulation's DRAM and 200 MHz clock).
    "sim-gen4": dict(build=dict(n_ssds=1, dram="sim", pcie_data_width=512), link="gen4x4", ssds=(1,)),
}

def _session(config, name):
    from conftest import get_build, DEFAULT_SSD
    from literecorder.targets.sim import SimSession, ssd_devices
    cfg = CONFIGS[config]
    build = get_build(pgo=True, **cfg["build"])
    return SimSession(build, name=name, devices=ssd_devices(list(DEFAULT_SSD) + ["--link", cfg["link"]],
        build.n_ssds, build.sys_clk_freq, build.pcie_data_width), boot_timeout=300)

def measure(sim, config, mib=64, staging=("auto", "off")):
    """-> RESULT-line dicts: for each SSD count of the configuration, record then replay, each
    staging choice, against the links as trained (rec_info after nvme_init)."""
    cfg = CONFIGS[config]
    n = cfg["build"]["n_ssds"]
    for i in range(n):
        assert result(sim.cmd(f"nvme_init {i}"), "nvme_init")["ok"] == "1"
    info = result(sim.cmd("rec_info"), "rec_info")
    assert info["links_trained"] == "1", info
    link = int(info["link_mbps"])
    dram = cfg["build"]["dram"]
    rows = []
    for st in staging:
        for ssds in cfg["ssds"]:
            ports = "0" if ssds == 1 else "all"
            size = mib*ssds
            rec = result(sim.cmd(f"rec_record 0 {size} ports={ports} staging={st}", timeout=1800), "rec_record")
            rep = result(sim.cmd(f"rec_replay 0 {size} ports={ports} staging={st}", timeout=1800), "rec_replay")
            assert rec["ok"] == "1" and rec["lost_beats"] == "0", rec
            assert rep["ok"] == "1" and rep["errors"] == "0", rep
            for d, r in (("record", rec), ("replay", rep)):
                mbps = float(r["mbps"])
                rows.append(dict(config=config, dram=dram, link=cfg["link"], ssds=ssds, dir=d, staging=st, mib=size, mbps=mbps,
                    limit_mbps=link*ssds, ratio=round(mbps/(link*ssds), 4), bytes_spilled=int(r["bytes_spilled"]),
                    peak_onchip=int(r["peak_onchip"]), peak_dram=int(r["peak_dram"])))
    return rows

def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dram", nargs="+", default=["kcu105", "zcu106", "kc705", "sim", "sim-gen4"],
        choices=sorted(CONFIGS), help="configurations (a board's DRAM model, the simulation's DRAM)")
    p.add_argument("--mib", type=int, default=64, help="MiB per SSD of each run (default 64)")
    p.add_argument("--staging", nargs="+", default=["auto", "off"])
    a = p.parse_args(argv)
    for dram in a.dram:
        sim = _session(dram, f"bench-board-dram-{dram}")
        try:
            for r in measure(sim, dram, a.mib, a.staging):
                print("RESULT name=board_dram " + " ".join(f"{k}={v}" for k, v in r.items()), flush=True)
        finally:
            sim.close()

# pytest: the KCU105 model ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sim(request):
    from conftest import _run_name
    s = _session("kcu105", _run_name(request) + "-kcu105dram")
    yield s
    s.close()

@pytest.mark.system
@pytest.mark.xdist_group("board_dram")
def test_rec_info_reports_the_board_budget(sim):
    r = result(sim.cmd("rec_info"), "rec_info")
    assert int(r["sys_clk_hz"]) == 125_000_000
    assert (int(r["dram_peak_mbps"]), int(r["dram_ceiling_mbps"])) == (8000, 4000)
    assert (int(r["link_mbps"]), int(r["links_mbps"])) == (3653, 7306)
    assert int(r["ssd_ports"]) == 2
    # The board's on-chip slots: 512 KiB per SSD port, 4 chunks of 128 KiB.
    assert (int(r["onchip_slots"]), int(r["staging_bytes"])) == (8, 512*1024)

@pytest.mark.system
@pytest.mark.xdist_group("board_dram")
def test_on_chip_slots_lift_the_board_dram_bound(sim):
    rows = measure(sim, "kcu105", mib=16)
    for r in rows:
        print("RESULT name=board_dram " + " ".join(f"{k}={v}" for k, v in r.items()))
    by = {(r["staging"], r["ssds"], r["dir"]): r for r in rows}
    for ssds in (1, 2):
        for d in ("record", "replay"):
            on, off = by[("auto", ssds, d)], by[("off", ssds, d)]
            # On-chip slots: nothing through the DRAM, faster than the DRAM ring alone.
            assert on["bytes_spilled"] == 0 and on["peak_dram"] == 0, on
            assert off["bytes_spilled"] == off["mib"] << 20, off
            assert on["mbps"] > off["mbps"], (on, off)

if __name__ == "__main__":
    main()
