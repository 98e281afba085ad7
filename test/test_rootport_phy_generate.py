#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-port PHYs of the three Xilinx families elaborated in a minimal LiteX SoC on real
litex-boards platforms (KC705: Kintex-7, KCU105: UltraScale, ZCU106: UltraScale+), Verilog and
Vivado TCL generated without running Vivado, the TCL checked for the root-port configuration and
the Verilog linted with Verilator against black-box stubs of the hard IP (port lists of the
Vivado-generated IP stubs) and of the Xilinx primitives."""

import os
import re
import shutil
import subprocess

import pytest

from migen import *

from litex.build.io import CRG
from litex.soc.integration.soc_core import SoCMini
from litex.soc.integration.builder import Builder

from litex_boards.platforms import xilinx_kc705, xilinx_kcu105, xilinx_zcu106

from litepcie.common import phy_layout

from literecorder.cores.pcie.phy import S7RootPortPHY, USRootPortPHY, USPRootPortPHY

STUBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "cores", "pcie", "phy", "verilog", "stubs")

FAMILIES = {
    "s7"  : dict(platform=xilinx_kc705,  clk="clk200", cls=S7RootPortPHY,  ip="pcie_7x",
        module="pcie_s7_rp"),
    "us"  : dict(platform=xilinx_kcu105, clk="clk125", cls=USRootPortPHY,  ip="pcie3_ultrascale",
        module="pcie_us_rp"),
    "usp" : dict(platform=xilinx_zcu106, clk="clk125", cls=USPRootPortPHY, ip="pcie4_uscale_plus",
        module="pcie_usp_rp"),
}

# Expected root-port CONFIG properties (name, value) in the IP TCL.
ROOT_PORT_TCL = {
    "s7" : [("Device_Port_Type", "Root_Port_of_PCI_Express_Root_Complex"),
        ("Use_Class_Code_Lookup_Assistant", "false"), ("Class_Code_Base", "06"),
        ("Class_Code_Sub", "04"), ("Class_Code_Interface", "00"),
        ("Bar0_Enabled", "false"), ("Maximum_Link_Width", "X4"), ("Link_Speed", "5.0_GT/s"),
        ("Max_Payload_Size", "512_bytes")],
    "us" : [("device_port_type", "Root_Port_of_PCI_Express_Root_Complex"),
        ("PF0_CLASS_CODE", "060400"), ("pf0_bar0_enabled", "false"), ("REF_CLK_FREQ", "100_MHz"),
        ("PL_LINK_CAP_MAX_LINK_WIDTH", "X4"),
        ("PL_LINK_CAP_MAX_LINK_SPEED", "8.0_GT/s"), ("AXISTEN_IF_RC_STRADDLE", "false"),
        ("axisten_if_enable_client_tag", "true"), ("pf0_dev_cap_max_payload", "512_bytes")],
}
# The Type 1 memory base/limit: a pcie4_uscale_plus parameter, none of pcie3_ultrascale 4.4.
ROOT_PORT_TCL["usp"] = ROOT_PORT_TCL["us"] + [("type1_membase_memlimit_enable", "Enabled")]

# Lint warnings Migen's Verilog emitter produces in any LiteX design (unsized constants, "<=" in
# combinational processes, Case without default); everything else must be clean.
MIGEN_WARNINGS = {"WIDTH", "COMBDLY", "CASEINCOMPLETE"}

# Minimal SoC --------------------------------------------------------------------------------------

class RootPortSoC(SoCMini):
    def __init__(self, platform, family, **kwargs):
        f = FAMILIES[family]
        self.crg = CRG(platform.request(f["clk"]))
        SoCMini.__init__(self, platform, 125e6, ident="LiteRecorder root-port PHY lint")
        self.pcie_phy = f["cls"](platform, platform.request("pcie_x4"), **kwargs)
        self.pcie_phy.add_csr()
        self.comb += self.pcie_phy.source.ready.eq(1)

def generate(family, output_dir, **kwargs):
    f        = FAMILIES[family]
    platform = f["platform"].Platform()
    soc      = RootPortSoC(platform, family, **kwargs)
    builder  = Builder(soc, output_dir=str(output_dir), compile_software=False,
        compile_gateware=False, csr_csv=os.path.join(str(output_dir), "csr.csv"))
    builder.build(run=False)
    gateware = os.path.join(str(output_dir), "gateware")
    name     = platform.name
    with open(os.path.join(gateware, name + ".tcl")) as tcl:
        tcl = tcl.read()
    with open(os.path.join(str(output_dir), "csr.csv")) as csr:
        csr = csr.read()
    return soc, os.path.join(gateware, name + ".v"), name, tcl, csr

def lint(verilog, top, ip_stub, data_width, nlanes=4):
    verilator = shutil.which("verilator")
    assert verilator is not None, "verilator is required (Debian package 'verilator')"
    cmd = [verilator, "--lint-only", "-Wno-fatal", "-Wno-PINMISSING",
        f"+define+RP_DATA_WIDTH={data_width}", f"+define+RP_NLANES={nlanes}",
        os.path.join(STUBS, "xilinx_primitives.v"), ip_stub, verilog, "--top-module", top]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    messages = [l for l in r.stderr.splitlines() if l.startswith("%")]
    errors   = [l for l in messages if l.startswith("%Error")]
    warnings = [l for l in messages if l.startswith("%Warning")]
    classes  = {re.match(r"%Warning-([A-Z]+)", w).group(1) for w in warnings}
    pins     = [w for w in warnings if "port connection" in w] # Port width mismatches.
    return r.returncode, errors, classes, pins

# Tests --------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("family, data_width", [("s7", 128), ("s7", 64), ("us", 256), ("us", 128),
    ("usp", 128), ("usp", 256)])
def test_root_port_generates_and_lints(family, data_width, tmp_path):
    f = FAMILIES[family]
    soc, verilog, top, tcl, csr = generate(family, tmp_path, data_width=data_width)

    # IP TCL: root-port configuration of the right IP.
    from literecorder.cores.pcie.phy.xilinx_ip_params import IP_VERSIONS
    assert (f"create_ip -vendor xilinx.com -library ip -name {f['ip']} -version {IP_VERSIONS[f['ip']]} "
        f"-module_name {f['module']}") in tcl
    if family == "us":
        assert "type1_membase_memlimit_enable" not in tcl
    for name, value in ROOT_PORT_TCL[family]:
        assert f"CONFIG.{name} {{{value}}} \\" in tcl, name
    width = f"{data_width}_bit"
    assert (f"CONFIG.Interface_Width {{{width}}}" if family == "s7" else
        f"CONFIG.axisten_if_width {{{width}}}") in tcl
    assert "synth_ip [get_ips" in tcl or "synth_ip $obj" in tcl

    # Verilog: the hard IP is instantiated, CSRs are mapped.
    with open(verilog) as v:
        assert re.search(rf"^{f['module']} {f['module']}\(", v.read(), re.M)
    for reg in ["link_status", "perst", "cfg_adr", "cfg_wdata", "cfg_ctrl", "cfg_status", "cfg_rdata"]:
        assert f"csr_register,pcie_phy_{reg}," in csr, reg

    # Lint: no errors, no port-width mismatch on the IP or primitives.
    rc, errors, classes, pins = lint(verilog, top, os.path.join(STUBS, f["module"] + ".v"), data_width)
    assert rc == 0 and errors == []
    assert pins == []
    assert classes <= MIGEN_WARNINGS, classes - MIGEN_WARNINGS

@pytest.mark.unit
def test_lint_catches_ip_port_mismatch(tmp_path):
    """The lint check fails when the design and the IP port list disagree (here RQ tuser 61 bits)."""
    soc, verilog, top, tcl, csr = generate("usp", tmp_path, data_width=128)
    stub = (tmp_path / "bad_stub.v")
    with open(os.path.join(STUBS, "pcie_usp_rp.v")) as s:
        stub.write_text(s.read().replace("input  [61:0]                s_axis_rq_tuser",
            "input  [60:0]                s_axis_rq_tuser"))
    rc, errors, classes, pins = lint(verilog, top, str(stub), 128)
    assert len(pins) == 1 and "s_axis_rq_tuser" in pins[0]

@pytest.mark.unit
@pytest.mark.parametrize("family", ["s7", "us", "usp"])
def test_root_port_interface(family, tmp_path):
    f        = FAMILIES[family]
    platform = f["platform"].Platform()
    phy      = f["cls"](platform, platform.request("pcie_x4"))
    dw       = phy.data_width
    assert dw == {"s7": 128, "us": 256, "usp": 256}[family]
    assert phy.nlanes == 4 and phy.root_mps_cap == 512
    # The root port accepts every TLP the SSD may send: its own DevCtl MPS is the MPS the BIOS caps
    # the SSD's with (ROOT_CAPS; an SSD allowed 512 B behind a root port at 256 B sends malformed TLPs).
    assert phy.max_payload_size == phy.root_mps_cap == 512
    assert phy.configuration.max_payload_size == phy.max_payload_size
    assert phy.endianness == {"s7": "big", "us": "little", "usp": "little"}[family]
    for ep in [phy.sink, phy.source]:
        assert ep.description.payload_layout == phy_layout(dw).payload_layout
    assert [len(s) for s in [phy.link_up, phy.link_gen, phy.link_width, phy.ltssm, phy.perst]] == \
        [1, 3, 4, 6, 1]
    assert [n for n, _ in phy.mgmt_sink.description.payload_layout] == ["we", "adr", "dat", "be"]
    assert [n for n, _ in phy.mgmt_source.description.payload_layout] == ["dat", "err"]

@pytest.mark.unit
@pytest.mark.parametrize("family, kwargs, message", [
    ("s7",  dict(data_width=256),           r"data_width must be one of \[64, 128\], not 256"),
    ("s7",  dict(data_width=64, pads="pcie_x8"), "pcie_7x Gen2 x8 needs data_width 128, not 64"),
    ("s7",  dict(root_mps_cap=2048),        r"root_mps_cap must be one of \[128, 256, 512, 1024\]"),
    ("us",  dict(speed="gen4"),             r"speed must be one of \['gen1', 'gen2', 'gen3'\], not 'gen4'"),
    ("us",  dict(data_width=128, pads="pcie_x8"), "gen3 x8 needs more than 128 bits at 250 MHz"),
    ("usp", dict(data_width=512),           r"data_width must be one of \[128, 256\], not 512"),
    ("usp", dict(max_payload_size=1024),    r"max_payload_size must be one of \[128, 256, 512\]"),
    ("usp", dict(mem_window=(0xe0000000, 0x80000)), "mem_window size must be a non-zero multiple of 1 MiB"),
])
def test_root_port_parameters(family, kwargs, message):
    f        = FAMILIES[family]
    platform = f["platform"].Platform()
    pads     = platform.request(kwargs.pop("pads", "pcie_x4"))
    with pytest.raises(ValueError, match=message):
        f["cls"](platform, pads, **kwargs)
