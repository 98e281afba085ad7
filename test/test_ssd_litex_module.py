#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The `nvme_ssd` LiteX sim module in a real (minimal) Verilator simulation: built through the
LiteX module Makefile path, loaded from the project's module directory, driven through the `pcie`
pads by a small RTL sequencer (config read/write, BAR assignment, MMIO read/write, a 2-DW read),
at several data widths (multi-beat TLPs at 64 bits). Not the full SoC."""

import os
import re
import sys
import fcntl
import shutil
import subprocess

import pytest

from literecorder import ROOT
from literecorder.sim import ssd as ssdmod

pytestmark = pytest.mark.unit

BAR0 = 0xe000_0000

def tlps():
    """(dwords, expects_completion) sent in order by the sequencer."""
    return [
        ([0x04000001, 0x0000_010f, 0x0100_0000], True),                    # CfgRd0 reg 0
        ([0x44000001, 0x0000_020f, 0x0100_0010, BAR0], True),              # CfgWr0 BAR0 lo
        ([0x44000001, 0x0000_030f, 0x0100_0014, 0], True),                 # CfgWr0 BAR0 hi
        ([0x44000001, 0x0000_040f, 0x0100_0004, 0x6], True),               # CfgWr0 Command
        ([0x00000001, 0x0000_050f, BAR0 + 0x08], True),                    # MRd VS
        ([0x40000001, 0x0000_000f, BAR0 + 0x24, 0x001f001f], False),       # MWr AQA (posted)
        ([0x00000001, 0x0000_060f, BAR0 + 0x24], True),                    # MRd AQA
        ([0x00000002, 0x0000_07ff, BAR0 + 0x00], True),                    # MRd CAP (2 DW)
    ]

def build_design(out, width):
    from migen import Module, Signal, ClockDomain, If, Array, Constant, Display, Finish
    from litex.build.sim import SimPlatform
    from litex.build.sim.config import SimConfig
    from litex.build.generic_platform import Pins
    from literecorder.soc.sim_platform import pcie_sim_io

    ndw = width // 32
    rom = []   # (dat, be, first, last, expects)
    for dws, exp in tlps():
        for b in range(0, len(dws), ndw):
            chunk = dws[b:b + ndw]
            dat = sum(v << (32 * i) for i, v in enumerate(chunk))
            rom.append((dat, (1 << (4 * len(chunk))) - 1, int(b == 0), int(b + ndw >= len(dws)), int(exp)))

    class Top(Module):
        def __init__(self, p):
            pads = p.request("pcie", 0)
            self.clock_domains.cd_sys = ClockDomain()
            self.comb += self.cd_sys.clk.eq(p.request("sys_clk"))
            n = len(rom)
            dat = Array(Constant(r[0], width) for r in rom)
            be = Array(Constant(r[1], width // 8) for r in rom)
            first = Array(Constant(r[2], 1) for r in rom)
            last = Array(Constant(r[3], 1) for r in rom)
            exp = Array(Constant(r[4], 1) for r in rom)
            i = Signal(8); state = Signal(3); cnt = Signal(16); rxb = Signal(8); k = Signal(8)
            words = [Signal(32) for _ in range(6)]
            st = Signal(3)
            perst = Signal()
            self.comb += [pads.perst_n.eq(perst), pads.rx_ready.eq(1),
                pads.tx_dat.eq(dat[i]), pads.tx_be.eq(be[i]), pads.tx_first.eq(first[i]),
                pads.tx_last.eq(last[i]), pads.tx_valid.eq(state == 2)]
            cap = []
            for w in range(6):                       # dword w of the completion
                beat, pos = divmod(w, ndw)
                cap.append(If(rxb == beat, words[w].eq(pads.rx_dat[32 * pos:32 * pos + 32])))
            self.sync += [
                If(state == 0, cnt.eq(cnt + 1), If(cnt == 50, perst.eq(1), state.eq(1))),
                If(state == 1, If(pads.link_up, state.eq(2))),
                If(state == 2, If(pads.tx_ready,
                    i.eq(i + 1),
                    If(last[i],
                        k.eq(k + 1),
                        If(exp[i], state.eq(3), rxb.eq(0)).Elif(i == n - 1, state.eq(5))))),
                If(state == 3, If(pads.rx_valid,
                    *cap,
                    rxb.eq(rxb + 1),
                    If(pads.rx_last, state.eq(4)))),
                If(state == 4,
                    Display("CPL %d hdr0=%08x hdr1=%08x d3=%08x d4=%08x", k, words[0], words[1], words[3], words[4]),
                    If(i == n, state.eq(5)).Else(state.eq(2))),
                If(state == 5, Display("DONE gen=%d width=%d ltssm=%x", pads.link_gen, pads.link_width, pads.ltssm),
                    Finish()),
            ]

    p = SimPlatform("SIM", [("sys_clk", 0, Pins(1)), ("sys_rst", 0, Pins(1)), pcie_sim_io(0, width)])
    top = Top(p)
    mods = os.path.join(out, "sim_modules")
    shutil.rmtree(mods, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "sim", "modules"), mods)
    import argparse
    ap = argparse.ArgumentParser(); ssdmod.add_ssd_arguments(ap)
    args = ap.parse_args(["--ssd-profile", "ideal", "--ns-size", "16MiB", "--link", "gen2x8"])
    cfg = SimConfig(); cfg.add_clocker("sys_clk", freq_hz=200e6)
    cfg.add_module("nvme_ssd", ("pcie", 0), args=ssdmod.ssd_module_args(args, 0, out, 200e6, width))
    p.build(top, sim_config=cfg, build_dir=out, run=False, extra_mods=["nvme_ssd"], extra_mods_path=mods)
    r = subprocess.run(["bash", "build_sim.sh"], cwd=out, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

def _digest():
    import hashlib
    h = hashlib.sha256()
    paths = [os.path.abspath(__file__), os.path.join(ROOT, "sim", "ssd.py")]
    for d, _, names in os.walk(os.path.join(ROOT, "sim", "modules")):
        paths += [os.path.join(d, n) for n in names if n.endswith((".c", ".h", "Makefile"))]
    for p in sorted(paths):
        h.update(p.encode()); h.update(open(p, "rb").read())
    return h.hexdigest()

@pytest.mark.parametrize("width", [64, 512])
def test_module_through_verilator_pads(width):
    out = os.path.join(ROOT, "build", "ssd_padtest", f"w{width}")
    os.makedirs(out, exist_ok=True)
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest = _digest()
        stamp = os.path.join(out, ".stamp")
        if not (os.path.exists(os.path.join(out, "obj_dir", "Vsim")) and os.path.exists(stamp)
                and open(stamp).read() == digest):
            build_design(out, width)
            with open(stamp, "w") as f:
                f.write(digest)
    so = os.path.join(out, "modules", "nvme_ssd.so")
    assert os.path.exists(so)
    syms = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True).stdout
    assert "litex_sim_ext_module_init" in syms
    for f in ("ssd0.img",):
        if os.path.exists(os.path.join(out, f)):
            os.unlink(os.path.join(out, f))
    r = subprocess.run([os.path.join(out, "obj_dir", "Vsim")], cwd=out, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL)
    text = r.stdout + r.stderr
    cpl = {int(m.group(1)): m.groups()[1:] for m in re.finditer(
        r"CPL\s+(\d+) hdr0=(\w+) hdr1=(\w+) d3=(\w+) d4=(\w+)", text)}
    assert "DONE gen=2 width= 8 ltssm=10" in re.sub(r"width=\s*8", "width= 8", text), text[-2000:]
    # CfgRd: CplD, completer 01:00.0, byte count 4, VID/DID
    assert cpl[1][0] == "4a000001" and cpl[1][1] == "01000004" and cpl[1][2] == "51001ee7"
    for n in (2, 3, 4):                                   # CfgWr: Cpl without data, status SC
        assert cpl[n][0] == "0a000000" and int(cpl[n][1], 16) >> 13 & 7 == 0
    assert cpl[5][0] == "4a000001" and cpl[5][2] == "00010400"          # VS over MMIO
    assert cpl[7][2] == "001f001f"                                       # AQA written by the MWr
    assert cpl[8][0] == "4a000002" and cpl[8][1] == "01000008"          # CAP: 2 DW, 8 bytes
    assert cpl[8][2] == "140103ff" and cpl[8][3] == "00400020"
