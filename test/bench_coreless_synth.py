#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Logic cost of the CPU-less NVMe host (issue 41, variant (b)) with the flow of test/bench_synth.py
(Yosys ``synth_xilinx -family xcup``, the same counting, each block its own top):

    .venv/bin/python test/bench_coreless_synth.py [--out build/synth_coreless] [--widths 256]
                                                  [--blocks ...] [--entries 64]

  coreless       RCRootComplex + NVMeQueueEngine (``--entries``, default 512 as the SoC: QD up to 511) +
                 NVMeBringUp, as soc/coreless_soc.py builds a port: the requester driven by the
                 sequencer (no CPU port, no counters), no benchmark, no CPU request FIFO, the windows
                 of the engine (SQ, CQ, PRP) and the admin window; the data window (LiteDRAM in the
                 SoC) and the queue engine's request/completion streams are IOs. The figure to put
                 beside LiteNVMe's 5215 LUT / 2779 FF (256 bits, QD 32: root-port TLP layer,
                 accessors, I/O engine, host-memory responder; no PHY, no CPU).
  coreless_dram  The same with the data window served by DRAMWindow on a 512-bit LiteDRAM port.
  rc_coreless    RCRootComplex alone with the 5 windows of the CPU-less port (the requester's
                 inputs/outputs are IOs here, as the sequencer drives them).
  engine         NVMeQueueEngine alone (``--entries``), windows and streams as IOs.
  bringup        NVMeBringUp alone (requester, completer controls, engine configuration as IOs).

    RESULT name=synth_<block> width=W entries=E lut=N lutram=N lutram_lut=N ff=N bram36=N carry=N seconds=T
    RESULT name=synth_coreless_vs_litenvme width=256 lut_eq=N ff=N ref_lut=5215 ref_ff=2779 lut_ratio=X ff_ratio=Y
"""

import os
import sys
import time
import argparse
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from migen import *

from litex.gen import LiteXModule
from litex.gen.fhdl.verilog import convert
from litex.soc.interconnect import stream

from bench_synth import (RootPortPHYStandIn, check_phy_standin, public_ios, flat, window_ios, dram_port,
    dram_port_ios, run_yosys, summarize, memory_mappings, REFERENCE, YosysError, DRAM_SIZE, MAIN_RAM_BASE,
    _WindowHost)

from literecorder.cores.pcie.core import RCRootComplex
from literecorder.cores.pcie.windows import DRAMWindow
from literecorder.cores.nvme.engine import NVMeQueueEngine
from literecorder.cores.nvme.bringup import NVMeBringUp, ADMIN_WINDOW_SIZE
from literecorder.soc.recorder import PCIE_SRAM_BASE, PCIE_BAR_BASE, PCIE_PORT_STRIDE, NVME_QUEUE_BASE

SYS_CLK = int(200e6)

def bringup_ios(b):
    """What NVMeBringUp.add_csr connects (control, status, what it learned)."""
    return [b.start, b.link_timeout_ms, b.timeout_ms, b.ready, b.busy, b.failed, b.link_up, b.refused, b.step,
        b.code, b.detail, b.vendor_device, b.nsid, b.nsze, b.lba_shift, b.mdts, b.xfer_log2, b.qsize,
        b.mps_log2, b.runs, b.hold]

def _port(dw, entries, with_dram):
    """A CPU-less port: root complex, engine, bring-up (soc/coreless_soc.add_coreless_nvme_port)."""
    m = LiteXModule()
    phy = RootPortPHYStandIn(dw)
    m.rc = rc = RCRootComplex(phy)
    dram = rc.add_window("dram", MAIN_RAM_BASE + DRAM_SIZE//2, DRAM_SIZE//2)
    ios = phy.ios()
    if with_dram:
        port = dram_port("both")
        m.dramw = DRAMWindow(dram, port, dram_offset=DRAM_SIZE//2)
        ios += dram_port_ios(port)
    else:
        ios += window_ios([dram])
    m.engine = engine = NVMeQueueEngine(rc, NVME_QUEUE_BASE, entries)
    m.comb += engine.doorbell.connect(rc.doorbell)
    m.bringup = b = NVMeBringUp(rc, engine, SYS_CLK, admin_base=PCIE_SRAM_BASE, bar_base=PCIE_BAR_BASE,
        bar_size=PCIE_PORT_STRIDE)
    ios += flat([engine.sink, engine.source]) + bringup_ios(b)
    return m, ios

def build_coreless(dw, entries):
    m, ios = _port(dw, entries, with_dram=False)
    return m, ios, f"RCRootComplex + NVMeQueueEngine({entries}) + NVMeBringUp, data window as IOs"

def build_coreless_dram(dw, entries):
    m, ios = _port(dw, entries, with_dram=True)
    return m, ios, f"coreless + DRAMWindow (512-bit LiteDRAM port)"

def build_rc_coreless(dw, entries):
    m = LiteXModule()
    phy = RootPortPHYStandIn(dw)
    m.rc = rc = RCRootComplex(phy)
    ws = [rc.add_window("dram", MAIN_RAM_BASE + DRAM_SIZE//2, DRAM_SIZE//2),
          rc.add_window("admin", PCIE_SRAM_BASE, ADMIN_WINDOW_SIZE, on_chip=True)]
    host = _WindowHost(dw)
    NVMeQueueEngine(host, NVME_QUEUE_BASE, entries)        # Its window geometry.
    for w in host.windows:
        ws.append(rc.add_window(w.name, w.base, w.size, w.readable, w.writable, w.on_chip))
    r = rc.requester
    ios = phy.ios() + window_ios(ws) + flat(rc.doorbell)
    ios += [r.kind, r.adr, r.length, r.first_be, r.last_be, r.wdata, r.start, r.busy, r.status, r.rdata,
        rc.completer.enable, rc.completer.mps_log2]
    return m, ios, "RCRootComplex, the CPU-less port's 5 windows as IOs, requester/completer controls as IOs"

def build_engine(dw, entries):
    m = LiteXModule()
    host = _WindowHost(dw)
    m.engine = e = NVMeQueueEngine(host, NVME_QUEUE_BASE, entries)
    ios = window_ios(host.windows) + flat([e.sink, e.source, e.doorbell])
    ios += public_ios(e, skip=("sink", "source", "doorbell", "sq_window", "cq_window", "prp_window", "entries",
        "data_width"))
    return m, ios, f"NVMeQueueEngine entries={entries}"

class _RCStandIn:
    """What NVMeBringUp uses of RCRootComplex, as IOs."""
    def __init__(self, dw):
        class R: pass
        self.phy = RootPortPHYStandIn(dw)
        self.requester = r = R()
        for name, w in [("kind", 2), ("adr", 64), ("length", 2), ("first_be", 4), ("last_be", 4), ("wdata", 64),
                ("start", 1), ("busy", 1), ("status", 3), ("rdata", 64)]:
            setattr(r, name, Signal(w, name="req_" + name))
        self.completer = c = R()
        c.enable, c.mps_log2 = Signal(name="cpl_enable"), Signal(4, name="cpl_mps_log2")
        self.windows = []

    def add_window(self, name, base, size, readable=True, writable=True, on_chip=False):
        from literecorder.cores.pcie.windows import CompleterWindow
        w = CompleterWindow(name, base, size, self.phy.data_width, readable, writable, on_chip)
        self.windows.append(w)
        return w

def build_bringup(dw, entries):
    m = LiteXModule()
    rc = _RCStandIn(dw)
    host = _WindowHost(dw)
    e = NVMeQueueEngine(host, NVME_QUEUE_BASE, entries)   # Its windows only (not in the design).
    class EngineIOs:
        pass
    eng = EngineIOs()
    eng.entries, eng.sq_window, eng.cq_window = entries, e.sq_window, e.cq_window
    q = log2_int(entries) + 1
    for name, w in [("enable", 1), ("ready", 1), ("outstanding", q), ("qsize", q), ("qd", q), ("nsid", 32),
            ("lba_shift", 4), ("max_blocks", 17), ("sq_db", 32), ("cq_db", 32), ("timeout", 32)]:
        setattr(eng, name, Signal(w, name="engine_" + name))
    m.bringup = b = NVMeBringUp(rc, eng, SYS_CLK, admin_base=PCIE_SRAM_BASE, bar_base=PCIE_BAR_BASE,
        bar_size=PCIE_PORT_STRIDE)
    r = rc.requester
    ios = [r.kind, r.adr, r.length, r.first_be, r.last_be, r.wdata, r.start, r.busy, r.status, r.rdata,
        rc.completer.enable, rc.completer.mps_log2, rc.phy.link_up, rc.phy.ltssm, rc.phy.perst]
    ios += window_ios(rc.windows)
    ios += [getattr(eng, n) for n in ("enable", "ready", "outstanding", "qsize", "qd", "nsid", "lba_shift",
        "max_blocks", "sq_db", "cq_db", "timeout")]
    ios += bringup_ios(b)
    return m, ios, "NVMeBringUp (requester, completer controls, engine configuration, admin window as IOs)"

BLOCKS = {
    "coreless":      build_coreless,
    "coreless_dram": build_coreless_dram,
    "rc_coreless":   build_rc_coreless,
    "engine":        build_engine,
    "bringup":       build_bringup,
}

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "build", "synth_coreless"))
    ap.add_argument("--widths", default="256")
    ap.add_argument("--blocks", default=",".join(BLOCKS))
    ap.add_argument("--entries", type=int, default=512)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--yosys", default="yosys")
    a = ap.parse_args()
    widths = [int(w) for w in a.widths.split(",") if w]
    blocks = [b for b in a.blocks.split(",") if b]
    for b in blocks:
        if b not in BLOCKS:
            ap.error(f"unknown block {b!r} (known: {', '.join(BLOCKS)})")
    os.makedirs(a.out, exist_ok=True)
    failures, table = [], {}
    for dw in widths:
        check_phy_standin(dw)
        for block in blocks:
            name = f"synth_{block}_{dw}_{a.entries}"
            try:
                core, ios, desc = BLOCKS[block](dw, a.entries)
                top = LiteXModule()
                top.cd_sys = ClockDomain("sys")
                top.core = core
                ios = set(ios) | {top.cd_sys.clk, top.cd_sys.rst}
                vfile = os.path.join(a.out, name + ".v")
                convert(top, ios=ios, name=name).write(vfile)
                print(f"# {name}: {desc}; {len(ios)} IO signals", flush=True)
                dt, cells, log = run_yosys(a.yosys, vfile, name, a.out, a.timeout)
                s = summarize(cells)
                table[(block, dw)] = s
                print(f"RESULT name=synth_{block} width={dw} entries={a.entries} lut={s['lut']} lutram={s['lutram']} "
                      f"lutram_lut={s['lutram_luts']} ff={s['ff']} bram36={s['ramb36']} carry={s['carry']} "
                      f"seconds={dt:.1f}", flush=True)
                for mem, shape, how in memory_mappings(log, vfile):
                    print(f"MEMORY name={name} memory={mem} words_x_bits={shape} mapped={how}")
            except Exception as e:
                traceback.print_exc()
                print(f"ERROR name={name} {e}", flush=True)
                failures.append(name)
        s = table.get(("coreless", dw))
        if s is not None and dw in REFERENCE:
            rl, rf = REFERENCE[dw]
            lut_eq = s["lut"] + s["lutram_luts"]
            print(f"RESULT name=synth_coreless_vs_litenvme width={dw} entries={a.entries} lut_eq={lut_eq} ff={s['ff']} "
                  f"ref_lut={rl} ref_ff={rf} lut_ratio={lut_eq/rl:.3f} ff_ratio={s['ff']/rf:.3f} "
                  f"over_lut={max(0, lut_eq - rl)} over_ff={max(0, s['ff'] - rf)}")
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
