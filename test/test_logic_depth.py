#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Logic depth of the project's blocks: at most ``LEVELS_LIMIT`` (8) LUT levels between registers,
LiteDRAM's own depth measured the same way, which closes at the boards' 125 MHz system clock.

Each datapath block is built alone as ``make synth`` builds it (test/bench_synth.py: its CSR
signals, streams and memories' ports are IOs), at the KC705's 128-bit PCIe width and at the
UltraScale boards' 256 bits, synthesized with Yosys ``synth_xilinx -flatten`` and measured with
``make resources``' own ``logic_depth`` (test/bench_resources.py). The whole board designs stay
in ``make resources`` (minutes per board). A deep block made on purpose shows that the check fails
above the limit.
"""

import os
import json
import shutil
import subprocess

import pytest

from migen import *

from litex.gen import *
from litex.gen.fhdl.verilog import convert

import bench_synth
import bench_resources
from bench_resources import LEVELS_LIMIT, logic_depth

pytestmark = [
    pytest.mark.unit,
    pytest.mark.skipif(shutil.which("yosys") is None, reason="yosys is not installed (scripts/install.sh)"),
]

def synth_depth(vfile, top, out, family="xc7"):
    """(deepest, paths over the limit) of ``top`` in ``vfile`` after Yosys synth_xilinx."""
    flat = os.path.join(out, top + ".json")
    subprocess.run(["yosys", "-q", "-l", os.path.join(out, top + ".log"), "-p",
        f"read_verilog {vfile}; synth_xilinx -flatten -family {family} -top {top} -noiopad; "
        f"write_json {flat}"], check=True, stdout=subprocess.DEVNULL, timeout=1800)
    with open(flat) as f:
        design = json.load(f)
    return logic_depth(design, top, over=LEVELS_LIMIT)

def describe(deep):
    lines = sorted({(lv, " -> ".join(path)) for lv, cy, blk, clk, path in deep}, reverse=True)
    return "\n".join(f"  {lv} levels: {p}" for lv, p in lines[:10])

@pytest.mark.parametrize("block,width", [
    ("rc",       128),
    ("rc",       256),
    ("windows",  256),
    ("nvme",     128),
    ("nvme",     256),
    ("recorder", 256),
])
def test_block_has_at_most_8_lut_levels(block, width, tmp_path):
    name = f"depth_{block}_{width}"
    vfile, desc, _ = bench_synth.elaborate(block, width, name, str(tmp_path))
    deepest, deep = synth_depth(vfile, name, str(tmp_path))
    levels = max(lv for lv, *_ in deepest.values())
    assert levels >= 3, f"{desc}: {levels} levels, the measurement found no logic"
    assert not deep, (f"{desc}, {width} bits: {len(deep)} register inputs deeper than "
        f"{LEVELS_LIMIT} LUT levels:\n{describe(deep)}")

class _Deep(LiteXModule):
    """A 32-bit compare of two sums into a register: deeper than the limit once mapped."""
    def __init__(self):
        self.a, self.b, self.c, self.d = [Signal(32) for _ in range(4)]
        self.sel = Signal(8)
        self.q   = Signal()
        s1, s2 = Signal(33), Signal(33)
        self.comb += [s1.eq(self.a + self.b), s2.eq(self.c ^ Cat(*[self.sel]*4))]
        x = s1
        for i in range(6):
            x = Mux(x[i] ^ self.sel[i], x + s2, x - s2)
        self.sync += self.q.eq(x == 0)

def test_the_check_fails_on_a_deep_block(tmp_path):
    top = LiteXModule()
    top.cd_sys = ClockDomain("sys")
    top.core = core = _Deep()
    vfile = os.path.join(str(tmp_path), "deep.v")
    convert(top, ios={core.a, core.b, core.c, core.d, core.sel, core.q, top.cd_sys.clk,
        top.cd_sys.rst}, name="deep").write(vfile)
    deepest, deep = synth_depth(vfile, "deep", str(tmp_path))
    assert deep, f"a chain of six 33-bit add/sub muxes measured {deepest}"
    assert max(lv for lv, *_ in deep) > LEVELS_LIMIT
    # Every path over the limit ends in the one register and starts at an input.
    assert {path[-1].split("@")[0] for *_, path in deep} <= {"core_q", "q"}, describe(deep)

# The ring with its on-chip tier, behind its record port ---------------------------------------------

# LUT levels from the read port's ``cmd.ready`` to the recorder's registers at most: LiteDRAM's
# crossbar derives ``cmd.ready`` from the command's address and its bank machines (the whole KC705
# design measured 5 levels from a combinational address to ``cmd.ready``), so what the recorder adds
# after it must leave room for them.
READY_LEVELS = 3

def test_tiered_recorder_has_at_most_8_lut_levels_and_registered_dram_commands(tmp_path):
    """The recorder as add_recorder(staging=...) builds it (bench_synth ``recorder_tiered``, small: 2
    ports, 4 on-chip slots each): no path deeper than the limit (the staging slots' offsets, the
    spilled-byte count after the input FIFO), the read port's command address straight from
    flip-flops (LiteDRAM decodes it into its banks), ``cmd.ready`` into at most ``READY_LEVELS``."""
    name = "depth_recorder_tiered"
    m, ios, desc = bench_synth.build_recorder_tiered(128)
    top = LiteXModule()
    top.cd_sys = ClockDomain("sys")
    top.core = m
    vfile = os.path.join(str(tmp_path), name + ".v")
    conv = convert(top, ios=set(ios) | {top.cd_sys.clk, top.cd_sys.rst}, name=name)
    conv.write(vfile)
    deepest, deep = synth_depth(vfile, name, str(tmp_path))
    levels = max(lv for lv, *_ in deepest.values())
    assert levels >= 3, f"{desc}: {levels} levels, the measurement found no logic"
    assert not deep, (f"{desc}: {len(deep)} register inputs deeper than {LEVELS_LIMIT} LUT levels:\n"
        f"{describe(deep)}")

    with open(os.path.join(str(tmp_path), name + ".json")) as f:
        mod = json.load(f)["modules"][name]
    driver = {}
    for cname, cell in mod["cells"].items():
        for p, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(p) == "output":
                driver.update({b: cell["type"] for b in bits if isinstance(b, int)})
    wr, rd = m.dram_ports
    addr = conv.ns.get_name(rd.cmd.addr)
    kinds = {driver.get(b, "input/constant") for b in mod["ports"][addr]["bits"]}
    assert kinds and all(k.startswith("FD") for k in kinds), \
        f"{addr}: driven by {sorted(kinds)}, not straight from flip-flops"
    ready = conv.ns.get_name(rd.cmd.ready)
    after = logic_depth(json.load(open(os.path.join(str(tmp_path), name + ".json"))), name,
        skip_start=lambda n: n != ready)
    lv = max((v[0] for v in after.values() if v[2] == ready), default=0)
    assert 1 <= lv <= READY_LEVELS, f"{ready}: {lv} LUT levels into the recorder ({after})"

# The UltraScale(+) root port's TLP datapath -------------------------------------------------------

def test_us_root_port_datapath_has_at_most_8_lut_levels(tmp_path):
    """USRootPortDatapath as the UltraScale(+) PHYs build it at the boards' 256 bits: clock crossings,
    descriptor converters and the packet FIFOs before RQ/CC and after RC/CQ, in the sys and pcie
    domains (LiteX's Xilinx reset synchronizers); its streams and counters are IOs."""
    from litex.build.xilinx.common import xilinx_special_overrides
    from literecorder.cores.pcie.phy.usrootport import USRootPortDatapath
    name = "depth_us_datapath_256"
    top = LiteXModule()
    top.cd_sys  = ClockDomain("sys")
    top.cd_pcie = ClockDomain("pcie")
    top.dp = dp = USRootPortDatapath(256, "usp", mps=512)
    ios = {top.cd_sys.clk, top.cd_sys.rst, top.cd_pcie.clk, top.cd_pcie.rst, dp.dropped, dp.discontinued}
    for ep in [dp.sink, dp.source, dp.s_axis_rq, dp.s_axis_cc, dp.m_axis_rc, dp.m_axis_cq]:
        ios |= set(ep.flatten())
    vfile = os.path.join(str(tmp_path), name + ".v")
    convert(top, ios=ios, name=name, special_overrides=xilinx_special_overrides).write(vfile)
    deepest, deep = synth_depth(vfile, name, str(tmp_path))
    levels = max(lv for lv, *_ in deepest.values())
    assert levels >= 3, f"{levels} levels, the measurement found no logic"
    assert not deep, (f"{len(deep)} register inputs deeper than {LEVELS_LIMIT} LUT levels:\n"
        f"{describe(deep)}")
