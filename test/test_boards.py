#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Board targets without Vivado: each target and SSD count generates (Verilog, Vivado TCL with the
root-port IP creation, XDC), the root-port IP configuration in the TCL agrees with the family's
product guide, the XDC constrains the reference clocks and the clock-domain crossings, the placement
comes as pre-placement commands (after the IP's own XDC), the whole design lints with Verilator
against primitive and hard-IP stubs, and the FPGA Drive FMC pins are real package pins on banks of
the right voltage. Also: the command line
(bad arguments, --build without Vivado), the PERST# sequencer, the DRAM budget."""

import os
import re
import sys
import time
import subprocess

import pytest

from migen import *

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TEST_DIR)
sys.path.insert(0, os.path.join(os.path.dirname(TEST_DIR), "targets"))
import _bootstrap # noqa: F401

import board_checks as bc
from board_pin_facts import FACTS

from literecorder.soc import fpga_drive_fmc
from literecorder.soc.boards import BOARDS
from literecorder.soc.recorder_soc import (link_payload_rate, dram_peak_rate, DRAMBudget, parse_size,
    MB)
from literecorder.cores.pcie.phy.common import PERSTSequencer

ROOT = bc.ROOT
CONFIGS = [("kc705", 1), ("kcu105", 1), ("kcu105", 2), ("zcu106", 1), ("zcu106", 2)]

# Generation (once per configuration and worker) ---------------------------------------------------

_generated = {}

def generated(board, ssds):
    key = (board, ssds)
    if key not in _generated:
        out = os.path.join(ROOT, "build", "test", f"board-{board}-{ssds}")
        _generated[key] = bc.generate(board, ssds, out, compile_software=True)
    return _generated[key]

# Product-guide rules of the root-port IP configuration --------------------------------------------
#
# PG054 (7 series, pcie_7x): Gen2 x4 runs its AXI4-Stream at 64 bits / 250 MHz or 128 bits / 125 MHz;
# reference clock 100, 125 or 250 MHz; Kintex-7 Gen2 x1-x4 supports MPS up to 1024 bytes; the
# XC7K325T has one integrated block (X0Y0).
# PG156/PG213 (pcie3_ultrascale, pcie4_uscale_plus), "Supported clock frequencies and interface
# widths": Gen3 x4 is 128 bits at 250 MHz or 256 bits at 125 MHz; reference clock 100, 125 or
# 250 MHz; Gen3 uses QPLL1.

def check_s7_ip(config, link):
    p = []
    want = {"Device_Port_Type": "Root_Port_of_PCI_Express_Root_Complex", "Link_Speed": "5.0_GT/s",
        "Trgt_Link_Speed": "4'h2", "Maximum_Link_Width": "X4", "Ref_Clk_Freq": "100_MHz",
        "Bar0_Enabled": "false", "Use_Class_Code_Lookup_Assistant": "false", "Class_Code_Base": "06",
        "Class_Code_Sub": "04", "Class_Code_Interface": "00", "PCIe_Blk_Locn": link["pcie_blk_locn"]}
    p += [f"{k} = {config.get(k)!r}, not {v!r}" for k, v in want.items() if config.get(k) != v]
    if (config.get("Interface_Width"), config.get("User_Clk_Freq")) not in [("64_bit", "250"),
        ("128_bit", "125")]:
        p.append(f"Gen2 x4 at {config.get('Interface_Width')} / {config.get('User_Clk_Freq')} MHz "
            "is not a PG054 configuration")
    if config.get("Max_Payload_Size") not in ["128_bytes", "256_bytes", "512_bytes", "1024_bytes"]:
        p.append(f"Max_Payload_Size {config.get('Max_Payload_Size')}")
    return p

def check_us_ip(config, link, usp=False):
    p = []
    want = {"device_port_type": "Root_Port_of_PCI_Express_Root_Complex",
        "PL_LINK_CAP_MAX_LINK_SPEED": "8.0_GT/s", "PL_LINK_CAP_MAX_LINK_WIDTH": "X4",
        "pf0_bar0_enabled": "false", "REF_CLK_FREQ": "100_MHz",
        "PF0_Use_Class_Code_Lookup_Assistant": "false", "PF0_CLASS_CODE": "060400",
        "pcie_blk_locn": link["pcie_blk_locn"], f"gen_{link['pcie_blk_locn'].lower()}": "true",
        "coreclk_freq": "250",
        # The FMC's short traces (Opsero's designs for this adapter).
        "ins_loss_profile": "Chip-to-Chip", "INS_LOSS_NYQ": "5"}
    if usp:
        want.update(select_quad=f"GTH_Quad_{link['quad']}", en_gt_selection="true",
            type1_membase_memlimit_enable="Enabled")
    else:
        # pcie3_ultrascale: PG156 offers X0Y2 only quad 227 (x4), X0Y1 only 226: the quads the
        # KCU105's FMC uses (228, 227) are reached by the lanes' LOCs, no IP quad selection;
        # type1_membase_memlimit_enable is no parameter of pcie3_ultrascale 4.4 (its complete list).
        want.update(select_quad=None, en_gt_selection=None, type1_membase_memlimit_enable=None)
    p += [f"{k} = true: one block only" for k, v in config.items()
        if k.startswith("gen_x") and v == "true" and k != f"gen_{link['pcie_blk_locn'].lower()}"]
    p += [f"{k} = {config.get(k)!r}, not {v!r}" for k, v in want.items() if config.get(k) != v]
    if (config.get("axisten_if_width"), config.get("axisten_freq")) not in [("128_bit", "250"),
        ("256_bit", "125")]:
        p.append(f"Gen3 x4 at {config.get('axisten_if_width')} / {config.get('axisten_freq')} MHz "
            "is not a PG156/PG213 configuration")
    if config.get("plltype") != "QPLL1":
        p.append(f"plltype {config.get('plltype')}: Gen3 on the UltraScale(+) GTs uses QPLL1 (PG156: required, "
            "PG239: the default; QPLL0 is Gen4's)")
    if config.get("pf0_dev_cap_max_payload") not in ["128_bytes", "256_bytes", "512_bytes", "1024_bytes"]:
        p.append(f"pf0_dev_cap_max_payload {config.get('pf0_dev_cap_max_payload')}")
    return p

def cells_re(ip, what, lo, hi, ref, name):
    """Regular expression of a checked placement filter of the build script (soc/vivado.py
    ``literec_cells``): ``what``, its count of cells (lo, hi), primitive ``ref``, name regexp ``name``
    (itself a regular expression of the filter's text)."""
    return (r"\[literec_cells \{" + re.escape(f"{ip} {what}") + r"\} " + f"{lo} {hi} " +
        r"\{REF_NAME == " + ref + r" && NAME =~ \"" + ip + "/" + name + r"\"\}\]")

FAMILY = {"kc705": ("pcie_7x", "pcie_s7_rp", check_s7_ip, "PCIE_X0Y0"),
          "kcu105": ("pcie3_ultrascale", "pcie_us_rp", check_us_ip, None),
          "zcu106": ("pcie4_uscale_plus", "pcie_usp_rp", lambda c, l: check_us_ip(c, l, usp=True), None)}

# Generation, TCL, XDC, lint -----------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("board, ssds", [pytest.param(b, n, marks=pytest.mark.xdist_group(f"board-{b}"))
    for b, n in CONFIGS])
def test_board_generates_tcl_xdc_and_lints(board, ssds):
    gen   = generated(board, ssds)

    # DRAM budget: 8 GB/s peak, 4 GB/s ceiling; N links (limited by the sys-domain datapath).
    b = gen.soc.dram_budget
    assert b.dram_peak == 8e9 and b.ceiling == 4e9
    g, lanes = BOARDS[board]["link"]
    assert b.links == ssds*min(link_payload_rate(g, lanes),
        gen.soc.recorder_config.pcie_data_width/8*125e6)
    assert b.dram_bound == (ssds == 2)
    c = gen.soc.constants["LITEREC_DRAM_CEILING_MBPS"]
    assert getattr(c, "value", c) == 4000
    links = fpga_drive_fmc.carrier(board)["links"]
    ip_name, module, check_ip, _ = FAMILY[board]
    tcl, xdc = gen.read("tcl"), gen.read("xdc")
    with open(gen.verilog) as f:
        verilog = f.read()

    # TCL: one root-port IP per SSD, each configured as the product guide allows, placed on the
    # PCIe block and quad of its lanes.
    ips = bc.tcl_ips(tcl)
    assert sorted(ips) == [f"{module}{i}" for i in range(ssds)]
    for i in range(ssds):
        ip, config = ips[f"{module}{i}"]
        assert ip == ip_name
        assert check_ip(config, links[i]) == [], (i, check_ip(config, links[i]))
        assert re.search(rf"^{module}{i} {module}{i}\(", verilog, re.M)
    assert f"read_xdc {gen.top}.xdc" in tcl and any("VexRiscv" in s for s in bc.tcl_sources(tcl))

    # XDC: every port on its own pin; reference clocks; the lanes' pins on the GT channels the
    # placement uses; no GT/PCIe LOC on cells (they are TCL pre-placement commands: after opt_design,
    # before place_design, i.e. after the IP's own XDC, which LiteX's EARLY XDC precedes), each lane's
    # after a reset of the IP's LOCs, each filter checked (literec_cells: its count of cells); the
    # crossings' max delays in the LATE XDC the script writes, none in LiteX's XDC.
    locs = bc.xdc_locs(xdc)
    assert len(set(locs.values())) == len(locs)
    facts = FACTS[board]
    pre_placement = tcl[tcl.index("\nopt_design "):tcl.index("\nplace_design ")]
    assert not re.search(r"^(re)?set_property LOC \S* ?\[get_cells", xdc, re.M)
    ANY = r"\.\*"
    for i, link in enumerate(links[:ssds]):
        port = f"fpga_drive_fmc_pcie{i}"
        assert f"create_clock -name {port}_clk_p -period 10.0 [get_ports {port}_clk_p]" in xdc
        gt = link["gt_channels"][0].rsplit("_X", 1)[0]
        ip = f"{module}{i}"
        resets = [m.start() for m in re.finditer("^reset_property LOC " +
            cells_re(ip, "transceiver channels", 4, 4, gt, ANY) + "$", pre_placement, re.M)]
        assert len(resets) == 1, (i, resets)
        for lane in range(4):
            pin  = locs[f"{port}_rx_p[{lane}]"]
            site = facts["gt_sites"][pin]
            assert site == link["gt_channels"][lane]
            lane_re = ANY + r"(pipe_lane|channel_inst)\\\[" + str(lane) + r"\\\]" + ANY
            m = re.search(f"^set_property LOC {site} " + cells_re(ip, f"lane {lane}", 1, 1, gt, lane_re) + "$",
                pre_placement, re.M)
            assert m and m.start() > resets[0], (i, lane)
        block = cells_re(ip, "integrated block", 1, 1, {"pcie_7x": "PCIE_2_1", "pcie3_ultrascale": "PCIE_3_1",
            "pcie4_uscale_plus": "PCIE40E4"}[ip_name], ANY)
        assert re.search(f"^reset_property LOC {block}\nset_property LOC {link['pcie_site']} {block}$",
            pre_placement, re.M)
        assert f"set_false_path -to [get_ports {{{port}_perst}}]" in xdc
        if board == "kcu105":
            # The IP's GTHE3_COMMON (its default quad) released like the channels.
            assert re.search("^reset_property LOC " + cells_re(ip, "GTHE3_COMMON", 1, 1, "GTHE3_COMMON", ANY)
                + "$", pre_placement, re.M), i
    if board == "kc705":
        # LitePCIe S7PCIEPHY: the IP's GTXE2_COMMON and block RAM LOCs released; the PIPE clock
        # select into its BUFGCTRL false-pathed.
        for what, lo, hi, ref, name in [
            ("GTXE2_COMMON", 1, 1, "GTXE2_COMMON", ANY + r"gtx_common\\\.gtxe2_common_i"),
            ("block RAMs", 1, -1, "RAMB36E1", ANY + r"genblk" + ANY + r"\\\.bram36_tdp_bl\\\.bram36_tdp_bl")]:
            assert re.search("^reset_property LOC " + cells_re(f"{module}0", what, lo, hi, ref, name) + "$",
                pre_placement, re.M), what
        sel = re.findall(r"^set_false_path -through \[get_nets \{(\w+)\}\]$", xdc, re.M)
        assert len(sel) == 1 and sel[0].endswith("pclk_sel")
        assert re.search(rf"^BUFGCTRL BUFGCTRL\([^;]*\.S1\s*\({sel[0]}\)", verilog, re.M)
    # The board's system clock input in the standard of its bank (ZCU106: CLK_125 is LVDS in bank
    # 68 at VADJ_FMC 1.8 V, the board's XDC; litex-boards declares DIFF_SSTL15).
    if board == "zcu106":
        stds = bc.xdc_iostandards(xdc)
        assert (stds.get("clk125_p"), stds.get("clk125_n")) == ("LVDS", "LVDS"), stds
    # sys <-> each root port's user clock: a max delay of one destination period each way, in the
    # LATE XDC (test_board_tcl runs it in Vivado's processing order); none in LiteX's (EARLY) XDC.
    delays = re.findall(r"^puts \$literec_xdc \{set_max_delay -datapath_only -from \[get_clocks -of_objects "
        r"\[get_nets (\w+)\]\] -to \[get_clocks -of_objects \[get_nets (\w+)\]\] ([\d.]+)\}$", tcl, re.M)
    pcie_clks = sorted({dst for src, dst, _ in delays if src == "sys_clk"})
    assert len(pcie_clks) == ssds and len(delays) == 2*ssds
    for i, clk in enumerate(pcie_clks):
        user_ns = 1e9/getattr(gen.soc, f"pcie{i}_phy").user_clk_freq
        assert ("sys_clk", clk, f"{user_ns:.3f}") in delays
        assert (clk, "sys_clk", f"{1e9/gen.soc.sys_clk_freq:.3f}") in delays
    assert "set_max_delay -datapath_only" not in xdc and "set_clock_groups" not in xdc
    for line in xdc.splitlines():
        if line.startswith("set_false_path"):
            assert not any(clk in line for clk in pcie_clks), line

    # Lint: no error; wrong-width port connections only the known one of LiteDRAM's UltraScale
    # PHY (1-bit signal on the 9-bit CNTVALUEOUT of its delay lines), none on our IP; warning
    # classes: Migen's usual ones, plus UNOPTFLAT on the root complex's window write-ready mux only.
    r = bc.lint(gen, os.path.join(gen.output_dir, "lint"))
    assert r.returncode == 0 and r.errors == [], r.errors[:5]
    # (Verilator shortens the port name in some messages: '...ALUEOUT'.)
    assert all(re.search(r"'(CNTV|\.\.\.)ALUEOUT' expects 9 bits", w) and re.search(r"'\w*ddrphy\d*'", w)
        for w in r.pins), r.pins[:5]
    assert not any(module in w for w in r.pins)
    assert r.classes <= bc.MIGEN_WARNINGS | {"UNOPTFLAT"}, r.classes
    unoptflat = {re.search(r"'([\w.]+)'", w).group(1) for w in r.warnings if "UNOPTFLAT" in w}
    assert all(re.fullmatch(rf"{gen.top}\.\w*_(rc|rcrootcomplex\d)_wr_ready", n) for n in unoptflat), \
        unoptflat

# BIOS ---------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("board, ssds", [pytest.param(b, n, marks=pytest.mark.xdist_group(f"board-{b}"))
    for b, n in CONFIGS])
def test_board_bios_has_every_command_of_the_simulation(board, ssds):
    """The board's BIOS carries the project's command library: its command table holds every
    command of the simulation's BIOS (the library's commands; test_foundation checks the
    simulation's table against the same list) but the simulated ADC/DAC's."""
    gen     = generated(board, ssds)
    board_t = bc.bios_commands(gen.bios)
    lib     = bc.library_commands()
    assert len(lib) >= 40 and {"nvme_init", "rec_start", "rec_list", "nvme_bench"} <= lib
    missing = sorted(lib - bc.SIM_ONLY_COMMANDS - board_t)
    assert missing == [], f"{board} x{ssds}: the BIOS lacks {missing}"
    assert not (bc.SIM_ONLY_COMMANDS & board_t)
    # LiteX's own commands are there too (the library adds to the BIOS, it does not replace it).
    assert {"help", "mem_read", "sdram_test"} <= board_t
    # pcie_link names the LTSSM state in the table of the board's IP (PG054 on the 7-series).
    with open(os.path.join(os.path.dirname(os.path.dirname(gen.bios)), "include", "generated",
            "soc.h")) as f:
        s7 = re.search(r"#define PCIE_LTSSM_S7 (\d+)", f.read())
    assert s7 and int(s7.group(1)) == int(board == "kc705"), s7
    # No memory of ours on the CSR bus (LiteX would give the CPU a port of its own on it, a third
    # one on a staging bank): LiteX's identifier is the only CSR memory.
    with open(os.path.join(gen.output_dir, "csr.csv")) as f:
        mems = [l.split(",")[1] for l in f if l.startswith("csr_base,") and l.split(",")[1].endswith("_mem")]
    assert mems == ["identifier_mem"], mems

@pytest.mark.unit
@pytest.mark.xdist_group("board-kcu105")
def test_lint_catches_a_wrong_ip_port_width():
    """The whole-design lint reports a root-port IP whose port list disagrees with the design."""
    gen  = generated("kcu105", 1)
    stub = bc.ip_stub("pcie_us_rp0", 256).replace("input  [59:0]                s_axis_rq_tuser",
        "input  [58:0]                s_axis_rq_tuser")
    assert "[58:0]                s_axis_rq_tuser" in stub
    r = bc.lint(gen, os.path.join(gen.output_dir, "lint-bad"), ip_stub_text={"pcie_us_rp0": stub})
    bad = [w for w in r.pins if "s_axis_rq_tuser" in w]
    assert len(bad) == 1 and "expects 59 bits" in bad[0], r.pins

@pytest.mark.unit
def test_primitive_stub_has_the_real_ports_and_parameters():
    libs = [open(os.path.join(bc._yosys_share(), f)).read() for f in ("cells_xtra.v", "cells_sim.v")]
    stub = bc.primitive_stub(libs, "IBUFDS_GTE3")
    assert re.findall(r"(input|output) (\w+)", stub) == [("output", "O"), ("output", "ODIV2"),
        ("input", "CEB"), ("input", "I"), ("input", "IB")]
    assert "REFCLK_HROW_CK_SEL" in stub
    stub = bc.primitive_stub(libs, "BUFGCE_DIV")
    assert "parameter integer BUFGCE_DIVIDE = 1" in stub
    assert bc.primitive_stub(libs, "NO_SUCH_PRIMITIVE") is None
    with pytest.raises(RuntimeError, match="no primitive stub for: NO_SUCH_PRIMITIVE"):
        bc.primitive_stubs({"BUFG", "NO_SUCH_PRIMITIVE"})

# Pins ---------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("board, ssds", CONFIGS)
def test_fmc_pins_are_package_pins_on_banks_of_the_right_voltage(board, ssds):
    assert bc.check_extension(board, ssds) == []
    # Every pin was checked against the facts (none skipped): lanes, clock, PERST#, PE detect.
    io = fpga_drive_fmc.io(board, ssds)
    pins = [p for r in bc._resources(io) for p in r[3]]
    assert len(pins) == ssds*(16 + 2 + 2) + 1 and all(p in FACTS[board]["pins"] for p in pins)

def _bad(board, name, index, sub, pins=None, std=None):
    """The extension with one subsignal changed."""
    from litex.build.generic_platform import Pins, Subsignal, IOStandard
    io = fpga_drive_fmc.io(board, 2 if fpga_drive_fmc.max_ssds(board) > 1 else 1)
    out = []
    for r in io:
        if r[0] == name and r[1] == index:
            items = []
            for it in r[2:]:
                if isinstance(it, Subsignal) and it.name == sub:
                    cons = [Pins(pins) if isinstance(c, Pins) and pins else
                        IOStandard(std) if isinstance(c, IOStandard) and std else c for c in it.constraints]
                    it = Subsignal(sub, *cons)
                elif isinstance(it, Pins) and sub is None and pins:
                    it = Pins(pins)
                elif isinstance(it, IOStandard) and sub is None and std:
                    it = IOStandard(std)
                items.append(it)
            r = (r[0], r[1], *items)
        out.append(r)
    return out

@pytest.mark.unit
@pytest.mark.parametrize("board, io, message", [
    ("kcu105", ("fpga_drive_fmc_pcie", 0, "perst", None, "LVCMOS33"),
        "fpga_drive_fmc_pcie:0.perst: LVCMOS33 needs VCCO 3.3 V, bank 66 is VADJ_1V8_FPGA_10A at 1.8 V"),
    ("kc705",  ("fpga_drive_fmc_pcie", 0, "perst", None, "LVCMOS18"),
        "fpga_drive_fmc_pcie:0.perst: LVCMOS18 needs VCCO 1.8 V, bank 16 is VADJ_FPGA at 2.5 V"),
    ("zcu106", ("fpga_drive_fmc_pcie", 1, "tx_p", "H4 L6 K4 M4", None),
        "fpga_drive_fmc_pcie:1.tx_p[2]: K4 belongs to GTHE4_CHANNEL_X0Y18, lane 2 is placed on "
        "GTHE4_CHANNEL_X0Y16"),
    ("kcu105", ("fpga_drive_fmc_pcie", 1, "rx_p", "M2 H2 K2 F3", None),
        "fpga_drive_fmc_pcie:1.rx_p: F3 is not a known pin of the xcku040-ffva1156"),
    ("kcu105", ("fpga_drive_fmc_pcie", 0, "clk_p", "K5", None),
        "fpga_drive_fmc_pcie:0.clk_p: K5 is MGTREFCLK0N_228, not a reference clock P input"),
    ("zcu106", ("fpga_drive_fmc_pedet", 0, None, "V8", None),
        "fpga_drive_fmc_pedet:0: V8 is MGTREFCLK0P_226, not a user IO pin"),
    ("kc705",  ("fpga_drive_fmc_pcie", 0, "tx_n", "D1 C3 B1 E3", None),
        "fpga_drive_fmc_pcie:0.tx_n: pin E3 already used by fpga_drive_fmc_pcie:0.rx_n"),
])
def test_pin_check_catches_bad_pins(board, io, message):
    problems = bc.check_extension(board, 2 if board != "kc705" else 1, io=_bad(board, *io))
    assert any(message in p for p in problems), problems

@pytest.mark.unit
def test_pin_check_compares_with_the_platform():
    # A platform IO in the adapter's bank at another voltage, and a connector map that disagrees.
    from litex.build.generic_platform import Pins, IOStandard
    p = bc.check_extension("kcu105", 1, platform_io=[("x", 0, Pins("G10"), IOStandard("LVCMOS33"))],
        connectors=[("HPC", {"LA00_CC_P": "H12"})])
    assert p == ["platform x:0 (G10, LVCMOS33) disagrees with bank 66 at 1.8 V",
        "LA00_CC_P: H11 here, H12 in the platform's HPC connector map"]

# Command line -------------------------------------------------------------------------------------

def run_target(board, *args, timeout=600, env=None):
    return subprocess.run([sys.executable, os.path.join(ROOT, "targets", f"xilinx_{board}.py"), *args],
        capture_output=True, text=True, timeout=timeout, env=env)

@pytest.mark.unit
@pytest.mark.parametrize("board, args, message", [
    ("kc705",  ["--ssds", "2"],              "--ssds 2: the KC705 takes 1 SSD (its HPC connector "
                                             "carries one x4 link (DP0-DP3))"),
    ("kcu105", ["--ssds", "3"],              "--ssds 3: the KCU105 takes 1 to 2 SSDs"),
    ("zcu106", ["--ssds", "0"],              "--ssds 0: the ZCU106 takes 1 to 2 SSDs"),
    ("kcu105", ["--pcie-data-width", "512"], "--pcie-data-width 512: the KCU105 root port allows 256 or 128 bits"),
    ("kc705",  ["--pcie-data-width", "256"], "--pcie-data-width 256: the KC705 root port allows 128 bits"),
    ("zcu106", ["--ring-size", "3"],         "ring_slots=3: a power of two from 2 to 4096"),
    ("kcu105", ["--chunk-size", "64KiB"],    "chunk_size=65536: must be a power of two >= 131072"),
    ("kcu105", ["--chunk-size", "12x"],      "invalid size '12x'"),
    ("zcu106", ["--vivado-version", "25.2"], "vivado_version must be a Vivado release such as '2025.2', not '25.2'"),
])
def test_target_refuses_bad_arguments(board, args, message, tmp_path):
    r = run_target(board, "--output-dir", str(tmp_path / "out"), *args, timeout=120)
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert message in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "out" / "gateware").exists()

@pytest.mark.unit
@pytest.mark.parametrize("board", ["kc705", "zcu106"])
def test_build_without_vivado_stops_at_once_naming_vivado(board, tmp_path):
    env = dict(os.environ, PATH=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
        if not os.path.exists(os.path.join(p, "vivado"))))
    t0 = time.time()
    r  = run_target(board, "--build", "--output-dir", str(tmp_path / "out"), timeout=120, env=env)
    assert r.returncode == 2
    assert "--build needs Vivado (`vivado` is not on PATH)" in r.stderr
    assert not (tmp_path / "out").exists()             # Nothing generated first.
    assert time.time() - t0 < 60

@pytest.mark.unit
def test_flash_refused_on_zcu106_with_the_reason(tmp_path):
    r = run_target("zcu106", "--flash", "--output-dir", str(tmp_path / "out"), timeout=120)
    assert r.returncode == 2
    assert ("--load/--flash need openFPGALoader" in r.stderr or
        "--flash on the ZCU106: the PL is configured by the processing system" in r.stderr)

@pytest.mark.unit
def test_kc705_command_generates_everything_with_the_bios(tmp_path):
    """doc/boards.md's KC705 command: Verilog, TCL, XDC and the BIOS, paths and DRAM budget printed."""
    out = tmp_path / "kc705"
    r = run_target("kc705", "--output-dir", str(out), timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    gw = out / "gateware"
    for ext in (".v", ".tcl", ".xdc"):
        assert f"{gw / ('xilinx_kc705' + ext)}:" in r.stdout and (gw / ("xilinx_kc705" + ext)).exists()
    assert (out / "software" / "bios" / "bios.bin").exists()
    assert "DRAM peak 8000 MB/s, recording ceiling 4000 MB/s" in r.stdout
    assert "SSD links 1 x 1855 = 1855 MB/s" in r.stdout and "recording ceiling (" not in r.stdout
    # The BIOS gets the budget and the board's boot link timeout.
    soc_h = (out / "software" / "include" / "generated" / "soc.h").read_text()
    for name, value in [("LITEREC_DRAM_PEAK_MBPS", 8000), ("LITEREC_DRAM_CEILING_MBPS", 4000),
        ("LITEREC_LINK_MBPS", 1855), ("LITEREC_LINKS_MBPS", 1855), ("LITEREC_LINK_GEN", 2),
        ("LITEREC_LINK_WIDTH", 4), ("PCIE_BOOT_LINK_TIMEOUT_US", 500000)]:
        assert re.search(rf"#define {name} {value}\b", soc_h), name

@pytest.mark.unit
@pytest.mark.parametrize("args, message", [
    (["--dram", "kcu105", "--sys-clk-freq", "200e6"], "--dram kcu105 models the KCU105's DRAM through a "
        "1:4 PHY at its system clock of 125 MHz (1000 MT/s); --sys-clk-freq 200 MHz contradicts it"),
    (["--dram", "vc707"],            "argument --dram: invalid choice: 'vc707'"),
    (["--ring-size", "6"],           "ring size 6: a power of two from 2 to 4096 chunk slots"),
    (["--chunk-size", "96KiB"],      "chunk_size=98304: must be a power of two >= 131072"),
    (["--pcie-data-width", "64"],    "argument --pcie-data-width: invalid choice: 64"),
])
def test_sim_refuses_bad_board_options(args, message):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "targets", "sim.py"), *args, "--build-only"],
        capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and message in r.stderr, r.stderr[-1500:]

# DRAM budget --------------------------------------------------------------------------------------

@pytest.mark.unit
def test_link_and_dram_rates():
    # PCIe payload ceilings of the reference table (MPS 256, completions): Gen2 x4 1855, Gen3 x4 3653.
    assert round(link_payload_rate(2, 4)/MB) == 1855
    assert round(link_payload_rate(3, 4)/MB) == 3653
    assert round(link_payload_rate(3, 8)/MB) == 7306
    with pytest.raises(ValueError, match="PCIe generation 5"):
        link_payload_rate(5, 4)
    with pytest.raises(ValueError, match="link width x3"):
        link_payload_rate(3, 3)
    class Settings:
        nphases, dfi_databits = 4, 128     # 64-bit DDR3/DDR4 through a 1:4 PHY.
    class Phy:
        settings = Settings()
    assert dram_peak_rate(125e6, Phy()) == 8e9
    assert dram_peak_rate(200e6, Phy()) == 12.8e9
    b = DRAMBudget(8e9, link_payload_rate(3, 4), 2)
    assert b.ceiling == 4e9 and b.dram_bound and round(b.links/MB) == 7306
    # The note of a build whose links exceed the ceiling says what bounds recording: with the ring's
    # on-chip slots not the DRAM (7052.8 MB/s over 2 SSDs with the KCU105's DRAM model,
    # doc/performance.md), on the DRAM ring alone the DRAM.
    assert b.bound_message(512*1024) == ("2 SSD links need 7306 MB/s, more than the DRAM's recording "
        "ceiling of 4000 MB/s (peak 8000 MB/s / 2): the ring's on-chip slots (512 KiB per SSD port) carry "
        "the streams at the links' rate and the DRAM only what the drives fall behind by, so the DRAM "
        "bounds recording and replay only when that exceeds its ceiling (measured with the board's DRAM "
        "model: doc/performance.md); with staging=0 (the DRAM ring alone) it would bound them.")
    assert b.bound_message(0).endswith(": with the DRAM ring alone (no on-chip slots) recording and replay "
        "are bound by the DRAM, not by the SSDs.")
    b = DRAMBudget(8e9, link_payload_rate(3, 4), 1)
    assert not b.dram_bound and b.bound_message(512*1024) is None
    assert [parse_size(s) for s in ["131072", "128KiB", "128k", "1MiB", "2M"]] == \
        [131072, 131072, 131072, 1 << 20, 2 << 20]

@pytest.mark.unit
def test_sim_soc_with_a_board_dram_has_its_clock_module_and_budget():
    """``targets/sim.py --dram kcu105 --ssds 2`` (generation only; the measured run is the benchmark
    test/bench_board_dram.py): the board's 125 MHz, its DDR4 module through a 1:4 PHY model, the
    budget constants rec_info prints, 2 SSD links bound by the DRAM."""
    import logging
    from literecorder.soc.sim_soc import LiteRecorderSimSoC, sim_dram
    assert sim_dram("kcu105", None)[1] == 125e6
    logging.disable(logging.INFO)
    try:
        soc = LiteRecorderSimSoC(sys_clk_freq=None, dram="kcu105", n_ssds=2)
    finally:
        logging.disable(logging.NOTSET)
    const = lambda name: getattr(soc.constants[name], "value", soc.constants[name])
    assert soc.sys_clk_freq == 125e6
    assert soc.sdram.controller.settings.phy.memtype == "DDR4"
    assert type(soc.sdrphy.module).__name__.startswith("EDY4016A")
    assert [const(n) for n in ("LITEREC_DRAM_PEAK_MBPS", "LITEREC_DRAM_CEILING_MBPS", "LITEREC_LINK_MBPS",
        "LITEREC_LINKS_MBPS", "LITEREC_LINK_GEN", "LITEREC_LINK_WIDTH", "LITEREC_SSD_PORTS")] == \
        [8000, 4000, 3653, 7306, 3, 4, 2]
    assert soc.dram_budget.dram_bound
    # The link-rate constants the BIOS computes the trained links' budget from (pcie_link_payload_mbps),
    # with the BIOS's integer arithmetic, give link_payload_rate for every generation, width and MPS.
    lane = [0] + [const(f"LITEREC_LANE_KBPS_GEN{g}") for g in (1, 2, 3, 4)]
    assert lane[1:] == [250000, 500000, 984615, 1969230]
    assert [const(n) for n in ("LITEREC_CPLD_OVERHEAD", "LITEREC_LINK_MPS", "LITEREC_DATAPATH_MBPS")] == [20, 256, 4000]
    for g in (1, 2, 3, 4):
        for w in (1, 2, 4, 8):
            for mps in (128, 256, 512):
                bios = min(w*lane[g]*mps//(mps + 20)//1000, 4000)
                assert abs(bios - min(link_payload_rate(g, w, mps), 4e9)/MB) < 1.0, (g, w, mps)

# PERST# -------------------------------------------------------------------------------------------

@pytest.mark.unit
def test_perst_sequencer_holds_perst_for_the_minimum_time():
    dut = PERSTSequencer(sys_clk_freq=1e6, min_time=10e-6)   # 10 cycles.
    assert dut.cycles == 10
    trace = []
    def gen():
        yield dut.request.eq(0)                 # Software releases PERST# at once.
        for _ in range(14):
            trace.append((yield dut.perst))
            yield
        yield dut.request.eq(1)                 # A 1-cycle pulse...
        yield
        yield dut.request.eq(0)
        for _ in range(16):
            trace.append((yield dut.perst))
            yield
    run_simulation(dut, gen())
    # Held from reset for the minimum time (the release is seen one cycle after the count ends).
    assert trace[:14] == [1]*11 + [0]*3
    # ... and again for the minimum time after the pulse (seen a cycle later), however short the
    # request.
    assert trace[14:] == [0] + [1]*11 + [0]*4

@pytest.mark.unit
def test_perst_sequencer_follows_a_long_request_and_checks_its_parameters():
    dut = PERSTSequencer(sys_clk_freq=1e6, min_time=3e-6)
    trace = []
    def gen():
        yield dut.request.eq(1)                 # Held asserted longer than the minimum.
        for _ in range(8):
            trace.append(((yield dut.perst), (yield dut.holding)))
            yield
        yield dut.request.eq(0)
        for _ in range(3):
            trace.append(((yield dut.perst), (yield dut.holding)))
            yield
    run_simulation(dut, gen())
    assert [p for p, _ in trace] == [1]*10 + [0]       # Released once the request drops.
    assert [h for _, h in trace][:4] == [1, 1, 1, 0]
    with pytest.raises(ValueError, match="min_time must be positive"):
        PERSTSequencer(1e6, min_time=0)
    with pytest.raises(ValueError, match="sys_clk_freq must be positive"):
        PERSTSequencer(0)

# PERST# at the card --------------------------------------------------------------------------------
#
# Opsero's reference designs for the FPGA Drive FMC drive the card's PERST pins from proc_sys_reset's
# active-high peripheral_reset on every carrier (KC705, KCU105: bd_mb.tcl; ZCU106: bd_zynqmp.tcl;
# "Active HIGH PERST output for FMC designs", bd_zynq.tcl) and tie them to 0 to run the Versal
# designs (bd_versal.tcl), fpga-drive-aximm-pcie f7bad85: at the card's pin, 1 holds the SSD in
# reset, 0 lets it run. The card model below is that and nothing else.

def ssd_held_in_reset(pin):
    """The SSD behind the FPGA Drive FMC, from the level of the card's PERST pin."""
    return pin == 1

def perst_pin_trace(pad, active_high, cycles_held=20, cycles_after=20, min_cycles=10):
    """Levels of a root port's PERST# pad (its ``_add_reset``, the code every hardware PHY uses) while
    software asserts PERST# for ``cycles_held`` cycles, then releases it; the minimum assertion
    time is ``min_cycles``."""
    from litex.gen import LiteXModule
    from migen.genlib.record import Record
    from literecorder.cores.pcie.phy.common import RootPortPHY
    class Reset(RootPortPHY):
        def __init__(self):
            self._add_interface(128)
            self.pads = Record([(pad, 1)])
            self._add_reset(self.pads, sys_clk_freq=1e6, perst_min_time=min_cycles*1e-6,
                perst_active_high=active_high)
    dut = Reset()
    trace = []
    def gen():
        yield dut.perst.eq(1)
        for _ in range(cycles_held):
            trace.append((yield getattr(dut.pads, pad)))
            yield
        yield dut.perst.eq(0)
        for _ in range(cycles_after):
            trace.append((yield getattr(dut.pads, pad)))
            yield
    run_simulation(dut, gen())
    return trace

def check_perst_at_the_card(trace, cycles_held=20):
    """Problems of a PERST pin trace seen through the card: the SSD must be held in reset while
    PERST# is asserted (from the first cycle) and run a few cycles after its release."""
    p = []
    held = [ssd_held_in_reset(v) for v in trace]
    if not all(held[:cycles_held]):
        p.append(f"the SSD runs while PERST# is asserted (cycles {[i for i, h in enumerate(held[:cycles_held]) if not h]})")
    if any(held[cycles_held + 3:]):
        p.append("the SSD is held in reset after PERST# was released (the pin stays high): its link "
            "stays in Detect")
    return p

@pytest.mark.unit
def test_perst_reaches_the_ssd_as_the_reference_designs_drive_the_card():
    """The adapter's one fact (fpga_drive_fmc.PERST_ACTIVE_HIGH, pad ``perst``) gives the pin levels
    of Opsero's designs: high while PERST# is asserted, low once released."""
    assert fpga_drive_fmc.PERST_ACTIVE_HIGH is True
    trace = perst_pin_trace(fpga_drive_fmc.perst_pad_name(), fpga_drive_fmc.PERST_ACTIVE_HIGH)
    assert check_perst_at_the_card(trace) == [], trace
    assert trace[:21] == [1]*21 and trace[-10:] == [0]*10
    # Every board's pads and PHYs use it (the IO list, the PHY's pad and polarity).
    for board in BOARDS:
        subs = {i.name for r in fpga_drive_fmc.io(board, 1) if r[0] == "fpga_drive_fmc_pcie" for i in r[2:]}
        assert "perst" in subs and "rst_n" not in subs, (board, subs)

@pytest.mark.unit
def test_check_fails_on_the_wrong_perst_polarity_for_the_card():
    """PERST# driven as the SSD's own active-low pin (the PHYs before: rst_n = ~perst): behind the
    card's inverter the SSD stays in reset once released, and runs during the minimum hold."""
    trace = perst_pin_trace("rst_n", active_high=False)
    assert check_perst_at_the_card(trace) == [
        "the SSD runs while PERST# is asserted (cycles " + str(list(range(20))) + ")",
        "the SSD is held in reset after PERST# was released (the pin stays high): its link stays in Detect"]
    # A pad whose name says the other polarity is refused.
    from migen.genlib.record import Record
    from literecorder.cores.pcie.phy.common import RootPortPHY
    for pad, high, msg in [("rst_n", True, "PERST# pad 'rst_n' is active low, but perst_active_high=True"),
        ("perst", False, "PERST# pad 'perst' is active high, but perst_active_high=False")]:
        phy = RootPortPHY()
        phy._add_interface(128)
        with pytest.raises(ValueError, match=re.escape(msg)):
            phy._add_reset(Record([(pad, 1)]), perst_active_high=high)

@pytest.mark.unit
def test_the_simulated_ssd_sees_the_perst_a_board_ssd_sees_behind_the_card():
    """The simulation has no adapter: its PHY drives the SSD's PERST# (``perst_n``, active low)
    directly. For the same ``perst``, the SSD sees the same thing behind the board's card."""
    from migen.genlib.record import Record
    from literecorder.cores.pcie.sim_phy import SimRootPortPHY
    pads = Record([("tx_valid", 1), ("tx_first", 1), ("tx_last", 1), ("tx_dat", 256), ("tx_be", 32),
        ("tx_ready", 1), ("rx_valid", 1), ("rx_first", 1), ("rx_last", 1), ("rx_dat", 256), ("rx_be", 32),
        ("rx_ready", 1), ("perst_n", 1), ("link_up", 1), ("link_gen", 3), ("link_width", 4), ("ltssm", 6)])
    sim = SimRootPortPHY(pads)
    seen = []
    def gen():
        for perst in [1, 1, 0, 0, 1, 0]:
            yield sim.perst.eq(perst)
            yield
            seen.append((perst, (yield pads.perst_n) == 0))
    run_simulation(sim, gen())
    assert seen == [(p, bool(p)) for p in [1, 1, 0, 0, 1, 0]]
    board = perst_pin_trace(fpga_drive_fmc.perst_pad_name(), fpga_drive_fmc.PERST_ACTIVE_HIGH,
        cycles_held=12, cycles_after=12, min_cycles=1)
    assert [ssd_held_in_reset(v) for v in board][:12] == [True]*12
    assert [ssd_held_in_reset(v) for v in board][-6:] == [False]*6

# User stream --------------------------------------------------------------------------------------

@pytest.mark.unit
def test_a_user_stream_feeds_the_recorder_user_port():
    """``recorder_streams()`` of a subclass gives ``add_recorder`` its streams (the documented way
    to attach a user's data): the user's 64-bit stream, in its own clock domain, becomes the
    recorder's user input beside the test pattern; without a replay stream there is no user
    output."""
    import logging
    from litex.soc.interconnect import stream
    from literecorder.soc.sim_soc import LiteRecorderSimSoC
    class UserStreamSoC(LiteRecorderSimSoC):
        def recorder_streams(self):
            self.cd_user = ClockDomain()
            self.user = stream.Endpoint([("data", 64)], name="userstream")
            return dict(record=self.user, record_cd="user")
    logging.disable(logging.INFO)
    try:
        soc = UserStreamSoC(n_ssds=1)
        soc.finalize()
        v = str(soc.platform.get_verilog(soc))
    finally:
        logging.disable(logging.NOTSET)
    const = lambda name: getattr(soc.constants[name], "value", soc.constants[name])
    assert (const("REC_INPUT_PATTERN"), const("REC_INPUT_USER")) == (0, 1)
    assert (const("REC_OUTPUT_CHECKER"), const("REC_OUTPUT_USER")) == (0, -1)
    assert (const("REC_USER_RECORD_BITS"), const("REC_USER_REPLAY_BITS")) == (64, 0)
    assert soc.recorder_in_user.sink.data.nbits == 64
    assert not hasattr(soc, "simio")
    # The user's valid/data reach the user port's input (its clock-domain crossing FIFO).
    for field in ("valid", "payload_data", "last"):
        assert re.search(rf"assign \w*recordport\w*sink\w*{field}\w* = \w*userstream_{field};", v), field
    assert re.search(r"assign \w*userstream_ready = \w*recordport\w*sink\w*ready\w*;", v)
    with pytest.raises(ValueError, match="no `data` field"):
        class BadStreamSoC(LiteRecorderSimSoC):
            def recorder_streams(self):
                return dict(record=stream.Endpoint([("value", 64)]))
        logging.disable(logging.INFO)
        try:
            BadStreamSoC(n_ssds=1)
        finally:
            logging.disable(logging.NOTSET)
