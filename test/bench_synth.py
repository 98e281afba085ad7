#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Logic cost of the NVMe datapath: Yosys ``synth_xilinx -family xcup`` (UltraScale+) of the cores.

    .venv/bin/python test/bench_synth.py [--out build/synth] [--widths 256,128] [--blocks ...]
                                         [--timeout 900] [--yosys yosys]

Blocks (each elaborated to Verilog as its own top with ``litex.gen.fhdl.verilog.convert``), as
``soc.recorder.add_nvme_port``/``add_recorder`` build them for one SSD port:

  rc        RCRootComplex: TLP layer, requester, completer with its five windows (the memories
            behind them are IOs).
  windows   SRAMWindow (64 KiB on-chip, CPU port) + DRAMWindow (512-bit LiteDRAM native port).
  nvme      NVMeHost of a recorder-only build (with_bench=False): queue engine, CPU request FIFO,
            NVME_ENTRIES entries (up to 511 commands in flight, QD >= 256).
  bench     NVMeHost with the request generator and statistics (the simulation SoC's, nvme_bench),
            for comparison; not part of the datapath.
  recorder  RecorderCore on two LiteDRAM native port stand-ins (write, read; 512-bit), 1 port,
            4096 slots (RECORDER_SLOTS). Independent of the PCIe width: synthesized once, named by
            its 512-bit word.
  recorder_tiered
            RecorderCore with the ring's on-chip tier (a staging bank per port: 2 ports, 4 slots of
            a 16 KiB bank; 64 DRAM slots) behind a record port, in front of a replay port, as
            add_recorder(staging=...) builds it; small, for the logic-depth test.
  datapath  rc + windows + nvme + recorder of one SSD port, connected as in soc/recorder.py.

The SoCs' test infrastructure, not part of the datapath (a build with only user streams has no
``teststreams``):

  teststreams  TestStreams (pattern source + checker) with the 512-bit record/replay ports
               add_recorder() gives them.
  drampat      DRAMPatternEngine (rec_fill/rec_check at DRAM speed) on a 512-bit read-write port.

No CSR banks: the signals the cores' ``add_csr()`` would connect (configuration, control pulses,
status, counters) are top-level IOs instead, as are the stream Endpoints at the design boundary,
the PHY interface and the LiteDRAM ports (no PHY, no LiteDRAM controller/crossbar, no CPU). The PHY
is a stand-in with the core-facing attributes of ``SimRootPortPHY`` (checked against it).

Per block::

    RESULT name=synth_<block> width=W lut=N lutram=N lutram_lut=N ff=N bram36=N carry=N seconds=T

(``lut`` = LUT1-LUT6, INV cells not included; ``lutram`` = LUTRAM cells (RAM32M16, RAM64M8, ...),
``lutram_lut`` = the LUTs they occupy; ``ff`` = FD*; ``bram36`` = RAMB36E2 + RAMB18E2/2, rounded
up), a ``DETAIL`` line and the memories as Yosys mapped them (``MEMORY``); then a table per width
and, last, one line per width against the open LiteNVMe host measured with the same Yosys (5215 LUT /
2779 FF at 256 bits, QD 32; 3658 / 1795 at 128 bits)::

    RESULT name=synth_datapath width=256 lut=N lutram_lut=N ff=N bram36=N ref_lut=5215 ref_ff=2779 lut_ratio=X ff_ratio=Y

(``lut_ratio`` = (LUT + LUTRAM LUTs) / reference LUTs). Verilog, Yosys logs and statistics stay in
``--out``. A failing block prints ``ERROR name=...`` and the exit code is non-zero.
"""

import os
import re
import sys
import math
import time
import signal
import argparse
import traceback
import subprocess

from migen import *
from migen.genlib.record import Record

from litex.gen import LiteXModule
from litex.gen.fhdl.verilog import convert
from litex.soc.interconnect import stream

from litepcie.common import phy_layout
from litedram.common import LiteDRAMNativePort

from literecorder.cores.pcie.common import check_data_width
from literecorder.cores.pcie.sim_phy import SimRootPortPHY
from literecorder.cores.pcie.core import RCRootComplex
from literecorder.cores.pcie.windows import SRAMWindow, DRAMWindow
from literecorder.cores.nvme.core import NVMeHost
from literecorder.cores.recorder.core import RecorderCore
from literecorder.soc.recorder import (PCIE_SRAM_BASE, PCIE_SRAM_SIZE, NVME_QUEUE_BASE, NVME_ENTRIES,
    RECORDER_SLOTS, PCIE_STAGING_BASE, PCIE_STAGING_STRIDE)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Reference: open LiteNVMe host (root-port TLP layer, accessors, I/O engine, host-memory responder;
# no PHY, no CPU), same Yosys, QD 32.
REFERENCE = {256: (5215, 2779), 128: (3658, 1795)}
# Goal of the datapath for one SSD (LUT + LUTRAM LUTs, FF).
GOAL = (5000, 3000)

# LiteDRAM stand-in: 512-bit native port on 1 GiB (64-byte words), main RAM at 0x40000000; the DRAM
# window is its upper half (soc.recorder.dram_window).
DRAM_PORT_WIDTH  = 512
DRAM_SIZE        = 1 << 30
DRAM_ADDR_WIDTH  = (DRAM_SIZE // (DRAM_PORT_WIDTH // 8)).bit_length() - 1
MAIN_RAM_BASE    = 0x40000000
# The recorder's DRAM ring, fixed in the build as add_recorder() fixes it: at the DRAM window.
RING = dict(ring_word=(DRAM_SIZE//2)//(DRAM_PORT_WIDTH//8), ring_bus=MAIN_RAM_BASE + DRAM_SIZE//2)

# IO collection ------------------------------------------------------------------------------------

def flat(x, skip_fields=()):
    """Signals of a Signal, a Record (stream Endpoint, bus interface) or a list of them."""
    if isinstance(x, (list, tuple)):
        return [s for y in x for s in flat(y, skip_fields)]
    if isinstance(x, Record):
        return [s for name, s in _record_leaves(x) if name not in skip_fields]
    if isinstance(x, Signal):
        return [x]
    return []

def _record_leaves(rec):
    """(field name, Signal) of every leaf of a Record (Endpoint payload/param fields included)."""
    for name, *_ in rec.layout:
        v = getattr(rec, name)
        if isinstance(v, Record):
            yield from _record_leaves(v)
        else:
            yield name, v

def public_ios(obj, skip=()):
    """Public Signals / Records (and lists of them) held by ``obj``: the signals its ``add_csr()``
    or its integration connects. Submodules and private attributes are ignored."""
    ios = []
    for name, v in vars(obj).items():
        if name.startswith("_") or name in skip:
            continue
        ios += flat(v)
    return ios

# PHY stand-in -------------------------------------------------------------------------------------

class RootPortPHYStandIn:
    """Core-facing interface of ``SimRootPortPHY`` without the pads (all of it becomes top IOs)."""
    endianness = SimRootPortPHY.endianness

    def __init__(self, data_width, root_mps_cap=512):
        check_data_width(data_width)
        self.data_width   = data_width
        self.root_mps_cap = root_mps_cap
        self.max_payload_size = root_mps_cap
        self.root_link_cap = (4, 8)
        self.sink         = stream.Endpoint(phy_layout(data_width))
        self.source       = stream.Endpoint(phy_layout(data_width))
        self.link_up      = Signal()
        self.link_gen     = Signal(3)
        self.link_width   = Signal(4)
        self.ltssm        = Signal(6)
        self.perst        = Signal(reset=1)

    def ios(self):
        return public_ios(self)

class _AutoPads:
    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        s = Signal(1024, name=name)
        setattr(self, name, s)
        return s

def check_phy_standin(data_width):
    """The stand-in must expose what SimRootPortPHY exposes (names, widths, resets, layouts)."""
    ref, ours = SimRootPortPHY(_AutoPads(), data_width=data_width), RootPortPHYStandIn(data_width)
    def shape(o):
        r = {}
        for k, v in vars(o).items():
            if k.startswith("_"):
                continue
            if isinstance(v, stream.Endpoint):
                r[k] = ("Endpoint", repr(v.description.payload_layout), repr(v.description.param_layout))
            elif isinstance(v, Signal):
                r[k] = ("Signal", len(v), v.reset.value)
            else:
                r[k] = (type(v).__name__, v)
        r["endianness"] = type(o).endianness
        return r
    a, b = shape(ref), shape(ours)
    if a != b:
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        raise RuntimeError(f"PHY stand-in differs from SimRootPortPHY on: {', '.join(diff)}")

def dram_port(mode):
    return LiteDRAMNativePort(mode, address_width=DRAM_ADDR_WIDTH, data_width=DRAM_PORT_WIDTH)

def dram_port_ios(port):
    return flat([port.cmd, port.wdata, port.rdata])

# Block builders -----------------------------------------------------------------------------------
# Each returns (module, ios, description), built as in soc/recorder.py (add_nvme_port, add_recorder)
# for port 0, without add_csr().

def window_ios(windows):
    ios = []
    for w in windows:
        ios += flat(w.wr) + [w.drained]
        ios += [w.rd_adr, w.rd_dat, w.rd_active] if w.on_chip else flat([w.rd_cmd, w.rd_data])
    return ios

def _rc(dw):
    phy = RootPortPHYStandIn(dw)
    rc  = RCRootComplex(phy)
    ios = phy.ios()
    # What RCRootComplex.add_csr() drives/reads (requester_id/completer_id stay constants as in the SoC).
    ios += public_ios(rc.requester, skip=("requester_id", "doorbell"))
    ios += public_ios(rc.completer, skip=("completer_id", "req", "req_status", "req_data", "source",
        "windows", "data_width", "endianness", "buffer_beats", "read_requests", "header_depth"))
    ios += [rc.rx.unsupported]
    return rc, ios

def _windows(rc, dw):
    sram = SRAMWindow(rc.add_window("sram", PCIE_SRAM_BASE, PCIE_SRAM_SIZE, on_chip=True))
    port = dram_port("both")
    offset = size = DRAM_SIZE // 2
    dram = DRAMWindow(rc.add_window("dram", MAIN_RAM_BASE + offset, size), port, dram_offset=offset)
    return sram, dram, flat(sram.bus) + dram_port_ios(port)

def _nvme(rc, with_bench=False):
    nvme = NVMeHost(rc, NVME_QUEUE_BASE, entries=NVME_ENTRIES, with_bench=with_bench)
    # What NVMeHost.add_csr() drives/reads; the engine's streams are internal.
    ios  = [nvme.select]
    ios += public_ios(nvme.engine, skip=("sink", "source", "doorbell", "sq_window", "cq_window",
        "prp_window", "entries", "data_width"))
    if with_bench:
        ios += public_ios(nvme.generator, skip=("source", "lba_shift"))
        ios += public_ios(nvme.stats, skip=("sink", "source", "lba_shift"))
    ios += flat(nvme.cpu, skip_fields=("valid", "ready", "first", "last")) + [nvme.cpu_push, nvme.cpu_level]
    return nvme, ios

class _WindowHost:
    """Stand-in of the root complex for a block built alone: hands out windows (their ports become
    IOs) and takes the doorbells."""
    def __init__(self, dw):
        from literecorder.cores.pcie.windows import CompleterWindow
        from literecorder.cores.common import doorbell_layout
        self._cls     = CompleterWindow
        self.phy      = RootPortPHYStandIn(dw)
        self.windows  = []
        self.doorbell = stream.Endpoint(doorbell_layout())

    def add_window(self, name, base, size, readable=True, writable=True, on_chip=False):
        w = self._cls(name, base, size, self.phy.data_width, readable, writable, on_chip)
        self.windows.append(w)
        return w

def _recorder():
    wr, rd = dram_port("write"), dram_port("read")
    rec = RecorderCore(wr, rd, n_ports=1, slots=RECORDER_SLOTS, **RING)
    ios = dram_port_ios(wr) + dram_port_ios(rd) + flat(rec.inputs + rec.outputs)
    ios += public_ios(rec, skip=("inputs", "outputs", "req", "cpl"))
    return rec, ios

def build_rc(dw):
    m = LiteXModule()
    m.rc, ios = _rc(dw)
    # The windows the SoC adds, served by IOs here.
    ws  = [m.rc.add_window("sram", PCIE_SRAM_BASE, PCIE_SRAM_SIZE, on_chip=True)]
    ws += [m.rc.add_window("dram", MAIN_RAM_BASE + DRAM_SIZE//2, DRAM_SIZE//2)]
    # The recorder's on-chip slots (a KC705's 256 KiB staging bank).
    ws += [m.rc.add_window("staging", PCIE_STAGING_BASE, 256*1024, on_chip=True)]
    host = _WindowHost(dw)
    NVMeHost(host, NVME_QUEUE_BASE, entries=NVME_ENTRIES, with_bench=False)   # Its window geometry.
    for w in host.windows:
        ws.append(m.rc.add_window(w.name, w.base, w.size, w.readable, w.writable, w.on_chip))
    ios += window_ios(ws) + flat(m.rc.doorbell)
    return m, ios, "RCRootComplex (TLP layer, requester, completer; 6 windows as IOs)"

def build_windows(dw):
    m = LiteXModule()
    host = _WindowHost(dw)
    m.sram, m.dram, ios = _windows(host, dw)
    ios += window_ios(host.windows)
    return m, ios, f"SRAMWindow {PCIE_SRAM_SIZE//1024} KiB + DRAMWindow ({DRAM_PORT_WIDTH}-bit port)"

def _build_nvme(dw, with_bench):
    m = LiteXModule()
    host = _WindowHost(dw)
    m.nvme, ios = _nvme(host, with_bench)
    ios += window_ios(host.windows) + flat([host.doorbell, m.nvme.ext_sink, m.nvme.ext_source])
    return m, ios, f"NVMeHost entries={NVME_ENTRIES} with_bench={with_bench}"

def build_nvme(dw):
    return _build_nvme(dw, with_bench=False)

def build_bench(dw):
    return _build_nvme(dw, with_bench=True)

def build_recorder(dw):
    m = LiteXModule()
    m.rec, ios = _recorder()
    ios += flat([m.rec.req, m.rec.cpl])
    return m, ios, f"RecorderCore n_ports=1 slots={RECORDER_SLOTS}, {DRAM_PORT_WIDTH}-bit LiteDRAM ports"

# Tiered recorder: small on purpose (its logic depth is checked in the suite, test_logic_depth).
TIERED_PORTS, TIERED_STAGING, TIERED_SLOTS, TIERED_DRAM_SLOTS = 2, 16*1024, 4, 64

def build_recorder_tiered(dw):
    from literecorder.cores.recorder.ring import StagingBank
    from literecorder.cores.recorder.frontend.stream import RecordPort, ReplayPort
    m = LiteXModule()
    host  = _WindowHost(dw)
    banks = [StagingBank(host.add_window("staging", PCIE_STAGING_BASE + i*PCIE_STAGING_STRIDE,
        TIERED_STAGING, on_chip=True), DRAM_PORT_WIDTH) for i in range(TIERED_PORTS)]
    for i, b in enumerate(banks):
        setattr(m, f"staging{i}", b)
    wr, rd = dram_port("write"), dram_port("read")
    m.rec = rec = RecorderCore(wr, rd, n_ports=TIERED_PORTS, slots=TIERED_DRAM_SLOTS, staging=banks,
        staging_slots=TIERED_SLOTS, **RING)
    m.dram_ports = (wr, rd)     # For the test's look at the ports' command signals.
    # As add_recorder() attaches them: a record port and a replay port in sys at the ring width.
    m.rec_port  = RecordPort(DRAM_PORT_WIDTH, DRAM_PORT_WIDTH, "sys", depth=32)
    m.play_port = ReplayPort(DRAM_PORT_WIDTH, DRAM_PORT_WIDTH, "sys")
    m.comb += [
        # ``keep`` all ones, as the test pattern source gives it (a user's keep is a RecordPort matter).
        m.rec_port.sink.keep.eq(2**(DRAM_PORT_WIDTH//8) - 1),
        m.rec_port.source.connect(rec.inputs[0]), m.rec_port.drop.eq(rec.drop),
        m.rec_port.clear.eq(rec.input_clear), rec.outputs[0].connect(m.play_port.sink),
    ]
    ios  = dram_port_ios(wr) + dram_port_ios(rd) + flat([m.rec_port.sink, m.play_port.source],
        skip_fields=("keep",))
    ios += public_ios(rec, skip=("inputs", "outputs", "req", "cpl", "staging")) + flat([rec.req, rec.cpl])
    ios += window_ios(host.windows)
    return m, ios, (f"RecorderCore n_ports={TIERED_PORTS} slots={TIERED_DRAM_SLOTS} with staging banks of "
        f"{TIERED_SLOTS} on-chip slots ({TIERED_STAGING//1024} KiB), record/replay ports, "
        f"{DRAM_PORT_WIDTH}-bit LiteDRAM ports")

def build_teststreams(dw):
    from literecorder.cores.recorder.frontend.pattern import TestStreams
    from literecorder.cores.recorder.frontend.stream import RecordPort, ReplayPort
    m = LiteXModule()
    m.streams = streams = TestStreams(DRAM_PORT_WIDTH)
    # As add_recorder() attaches them: a record port and a replay port in sys at the ring width.
    m.rec_port  = RecordPort(DRAM_PORT_WIDTH, DRAM_PORT_WIDTH, "sys", depth=32)
    m.play_port = ReplayPort(DRAM_PORT_WIDTH, DRAM_PORT_WIDTH, "sys")
    m.comb += [streams.source.connect(m.rec_port.sink), m.play_port.source.connect(streams.sink)]
    ios  = public_ios(streams.gen, skip=("source",)) + public_ios(streams.check, skip=("sink",))
    ios += flat([m.rec_port.source, m.play_port.sink]) + [m.rec_port.drop, m.rec_port.clear]
    return m, ios, f"TestStreams (pattern source + checker) with their {DRAM_PORT_WIDTH}-bit record/replay ports"

def build_drampat(dw):
    from literecorder.cores.recorder.frontend.pattern import DRAMPatternEngine
    m = LiteXModule()
    port = dram_port("both")
    m.drampat = DRAMPatternEngine(port)
    ios = dram_port_ios(port) + public_ios(m.drampat, skip=("port",))
    return m, ios, f"DRAMPatternEngine (fill/check a DRAM region), {DRAM_PORT_WIDTH}-bit LiteDRAM port"

def build_datapath(dw):
    m = LiteXModule()
    m.rc, ios = _rc(dw)
    m.sram, m.dram, w_ios = _windows(m.rc, dw)
    m.nvme, n_ios = _nvme(m.rc)
    m.rec, r_ios = _recorder()
    m.comb += [
        m.rec.req[0].connect(m.nvme.ext_sink),
        m.nvme.ext_source.connect(m.rec.cpl[0]),
    ]
    return m, ios + w_ios + n_ios + r_ios, "rc + windows + nvme (recorder-only build) + recorder, 1 SSD port"

BLOCKS = {
    "rc":       (build_rc,       True),   # (builder, depends on the PCIe width)
    "windows":  (build_windows,  True),
    "nvme":     (build_nvme,     True),
    "bench":    (build_bench,    True),
    "recorder": (build_recorder, False),
    "recorder_tiered": (build_recorder_tiered, True),
    "datapath": (build_datapath, True),
    # Test infrastructure of the SoCs (rec_record/rec_replay, the DRAM bound): not in the datapath.
    "teststreams": (build_teststreams, False),
    "drampat":     (build_drampat,     False),
}
DATAPATH_BLOCKS = ["rc", "windows", "nvme", "recorder"]

# Elaboration --------------------------------------------------------------------------------------

def elaborate(design, dw, name, out):
    builder, _ = BLOCKS[design]
    core, ios, desc = builder(dw)
    top = LiteXModule()
    top.cd_sys = ClockDomain("sys")
    top.core = core
    ios = set(ios) | {top.cd_sys.clk, top.cd_sys.rst}
    vfile = os.path.join(out, name + ".v")
    convert(top, ios=ios, name=name).write(vfile)
    return vfile, desc, len(ios)

# Yosys --------------------------------------------------------------------------------------------

class YosysError(Exception):
    pass

def run_yosys(yosys, vfile, top, out, timeout):
    log  = os.path.join(out, top + ".yosys.log")
    stat = os.path.join(out, top + ".stat.txt")
    for f in (log, stat):
        if os.path.exists(f):
            os.remove(f)
    script = f"read_verilog {vfile}; synth_xilinx -family xcup -top {top}; tee -q -o {stat} stat"
    t0 = time.time()
    p = subprocess.Popen([yosys, "-q", "-l", log, "-p", script],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)   # Yosys and its abc children (own session).
        p.communicate()
        raise YosysError(f"Yosys timed out after {timeout} s (log: {log})")
    dt = time.time() - t0
    if p.returncode:
        tail = " | ".join(l for l in (output or "").strip().splitlines()[-3:])
        raise YosysError(f"Yosys exited with {p.returncode}: {tail} (log: {log})")
    if not os.path.exists(stat):
        raise YosysError(f"Yosys wrote no statistics (log: {log})")
    return dt, parse_stat(open(stat).read(), top), log

def parse_stat(txt, top):
    # Only the top module's block (synth_xilinx flattens the design).
    m = re.search(r"^=== " + re.escape(top) + r" ===$(.*?)(?=^=== |\Z)", txt, re.M | re.S)
    block = m.group(1) if m else txt
    cells = {}
    for c, n in re.findall(r"^\s+(\S+)\s+(\d+)\s*$", block, re.M):
        cells[c] = cells.get(c, 0) + int(n)
    if not cells:
        raise YosysError("no cells in the Yosys statistics")
    return cells

# LUT-equivalents of the UltraScale+ distributed RAM primitives.
LUTRAM_LUTS = {
    "RAM32X1S": 1, "RAM32X1D": 2, "RAM32M": 4, "RAM32M16": 8,
    "RAM64X1S": 1, "RAM64X1D": 2, "RAM64M": 4, "RAM64M8": 8,
    "RAM128X1S": 2, "RAM128X1D": 4, "RAM256X1S": 4, "RAM256X1D": 8, "RAM512X1S": 8,
}

def summarize(cells):
    count = lambda pred: sum(n for c, n in cells.items() if pred(c))
    lutram_cells = {c: n for c, n in cells.items() if c.startswith("RAM") and not c.startswith("RAMB")}
    s = {
        "lut":    count(lambda c: re.fullmatch(r"LUT[1-6]", c)),
        "ff":     count(lambda c: c.startswith("FD")),
        "ramb36": cells.get("RAMB36E2", 0) + math.ceil(cells.get("RAMB18E2", 0) / 2),
        "lutram": sum(lutram_cells.values()),
        # Yosys 0.23 maps adders to CARRY4 even for xcup: both kinds are counted.
        "carry":  cells.get("CARRY8", 0) + cells.get("CARRY4", 0),
        "carry8_cells": cells.get("CARRY8", 0),
        "carry4_cells": cells.get("CARRY4", 0),
        "inv":    cells.get("INV", 0),
        "iobuf":  count(lambda c: c in ("IBUF", "OBUF", "IOBUF", "OBUFT")),
        # Details.
        "ramb36_cells": cells.get("RAMB36E2", 0),
        "ramb18_cells": cells.get("RAMB18E2", 0),
        "lutram_luts":  sum(n*LUTRAM_LUTS.get(c, 1) for c, n in lutram_cells.items()),
        "lutram_types": ",".join(f"{c}:{n}" for c, n in sorted(lutram_cells.items())) or "-",
        "srl":    count(lambda c: c.startswith("SRL")),
        "muxf":   count(lambda c: c.startswith("MUXF")),
        "dsp":    count(lambda c: c.startswith("DSP")),
        "uram":   cells.get("URAM288", 0),
        "unmapped": ",".join(f"{c}:{n}" for c, n in sorted(cells.items()) if c.startswith("$")) or "-",
    }
    return s

def memory_mappings(log, vfile):
    """(memory, shape, mapping) from the memory_libmap messages of the Yosys log; shapes from the
    memory banners of the LiteX Verilog (ROMs Yosys extracted from case statements have none)."""
    try:
        txt = open(log, errors="replace").read()
        shapes = dict((m, f"{d}x{w}") for m, d, w in
            re.findall(r"^// Memory (\S+): (\d+)-words x (\d+)-bit", open(vfile).read(), re.M))
    except OSError:
        return []
    maps = re.findall(r"^mapping memory (\S+) via (\S+)", txt, re.M)
    maps += [(mem, "FF") for mem in re.findall(r"^using FF mapping for memory (\S+)", txt, re.M)]
    return [(mem, shapes.get(mem.split(".", 1)[-1], "-"), how) for mem, how in maps]

# Main ---------------------------------------------------------------------------------------------

def fmt(x):
    return f"{x:g}" if isinstance(x, float) else str(x)

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "synth"), help="output directory (default: build/synth)")
    ap.add_argument("--widths", default="256,128", help="PCIe data widths (default: 256,128)")
    ap.add_argument("--blocks", default=",".join(BLOCKS), help=f"blocks (default: {','.join(BLOCKS)})")
    ap.add_argument("--timeout", type=float, default=900, help="Yosys time limit per block in seconds (default: 900)")
    ap.add_argument("--yosys", default="yosys", help="Yosys executable (default: yosys)")
    a = ap.parse_args()

    try:
        widths = [int(w) for w in a.widths.split(",") if w]
    except ValueError:
        ap.error(f"--widths: comma-separated integers expected, got {a.widths!r}")
    for w in widths:
        if w not in (128, 256, 512):
            ap.error(f"--widths: {w}: allowed are 128, 256, 512")
    blocks = [b for b in a.blocks.split(",") if b]
    for b in blocks:
        if b not in BLOCKS:
            ap.error(f"unknown block {b!r} (known: {', '.join(BLOCKS)})")
    os.makedirs(a.out, exist_ok=True)
    print(f"# Yosys: {a.yosys} synth_xilinx -family xcup; out: {a.out}; timeout {a.timeout:g} s/block")
    print("# IOs: stream Endpoints at the block boundary, PHY interface, LiteDRAM native ports and the")
    print("# signals add_csr() would connect (no CSR banks, no PHY, no LiteDRAM controller, no CPU).")

    jobs = []
    for b in blocks:
        if BLOCKS[b][1]:
            jobs += [(b, w, f"synth_{b}_{w}") for w in widths]
        else:
            # Independent of the PCIe width: once, named by the width of its LiteDRAM words.
            jobs.append((b, widths[0] if widths else 256, f"synth_{b}_{DRAM_PORT_WIDTH}"))

    results = open(os.path.join(a.out, "results.txt"), "w")
    def emit(line):
        print(line, flush=True)
        results.write(line + "\n")
        results.flush()

    failures = []
    table    = {}      # (block, width) -> summary
    t_all = time.time()
    for block, dw, name in jobs:
        try:
            if block in ("rc", "datapath"):
                check_phy_standin(dw)
            t0 = time.time()
            vfile, desc, nios = elaborate(block, dw, name, a.out)
            t_elab = time.time() - t0
            print(f"# {name}: {desc}; {nios} IO signals; Verilog {os.path.getsize(vfile)//1024} KiB "
                  f"in {t_elab:.1f} s", flush=True)
            dt, cells, log = run_yosys(a.yosys, vfile, name, a.out, a.timeout)
            s = summarize(cells)
            width = DRAM_PORT_WIDTH if not BLOCKS[block][1] else dw
            emit(f"RESULT name=synth_{block} width={width} lut={s['lut']} lutram={s['lutram']} "
                 f"lutram_lut={s['lutram_luts']} ff={s['ff']} bram36={s['ramb36']} carry={s['carry']} "
                 f"seconds={dt:.1f}")
            emit(f"DETAIL name={name} ramb36_cells={s['ramb36_cells']} ramb18_cells={s['ramb18_cells']} "
                  f"uram={s['uram']} lutram_types={s['lutram_types']} "
                  f"srl={s['srl']} muxf={s['muxf']} dsp={s['dsp']} carry8={s['carry8_cells']} "
                  f"carry4={s['carry4_cells']} inv={s['inv']} iobuf={s['iobuf']} unmapped={s['unmapped']}")
            for mem, shape, how in memory_mappings(log, vfile):
                emit(f"MEMORY name={name} memory={mem} words_x_bits={shape} mapped={how}")
            if s["unmapped"] != "-":
                emit(f"WARNING name={name}: cells Yosys left unmapped: {s['unmapped']}")
            if s["lut"] == 0 or s["ff"] == 0:
                raise YosysError(f"implausible result (lut={s['lut']} ff={s['ff']}): logic optimized away?")
            table[(block, dw)] = s
            sys.stdout.flush()
        except Exception as e:
            msg = str(e) if isinstance(e, YosysError) else f"{type(e).__name__}: {e}"
            if not isinstance(e, YosysError):
                traceback.print_exc(file=sys.stderr)
            emit(f"ERROR name={name} {msg}")
            failures.append(name)

    # Table per width: the blocks of the datapath, their sum, the datapath synthesized whole.
    finals = []
    for dw in widths:
        rows = []
        for b in blocks:
            s = table.get((b, dw)) or (table.get((b, widths[0])) if not BLOCKS[b][1] else None)
            if s is not None:
                rows.append((b if BLOCKS[b][1] else f"{b} ({DRAM_PORT_WIDTH}-bit)", s))
        if not rows:
            continue
        emit(f"# {dw}-bit PCIe datapath, one SSD port, {NVME_ENTRIES}-entry queue (QD up to {NVME_ENTRIES - 1})")
        emit(f"# {'block':<20} {'LUT':>6} {'LUTRAM':>7} {'LUTRAM-LUT':>10} {'LUT+LUTRAM':>10} {'FF':>6} {'BRAM36':>6}")
        for b, s in rows:
            emit(f"# {b:<20} {s['lut']:>6} {s['lutram']:>7} {s['lutram_luts']:>10} "
                 f"{s['lut'] + s['lutram_luts']:>10} {s['ff']:>6} {s['ramb36']:>6}")
        parts = [s for b, s in rows if b.split()[0] in DATAPATH_BLOCKS]
        if len(parts) == len(DATAPATH_BLOCKS):
            tot = {k: sum(s[k] for s in parts) for k in ("lut", "lutram", "lutram_luts", "ff", "ramb36")}
            emit(f"# {'sum of the blocks':<20} {tot['lut']:>6} {tot['lutram']:>7} {tot['lutram_luts']:>10} "
                 f"{tot['lut'] + tot['lutram_luts']:>10} {tot['ff']:>6} {tot['ramb36']:>6}")
        s = table.get(("datapath", dw))
        if s is None:
            continue
        rl, rf = REFERENCE[dw] if dw in REFERENCE else REFERENCE[256]
        lut_eq = s["lut"] + s["lutram_luts"]
        emit(f"# reference (LiteNVMe, QD 32): {rl} LUT / {rf} FF -> ratio LUT+LUTRAM {lut_eq/rl:.3f}, "
             f"FF {s['ff']/rf:.3f}")
        if dw == 256:
            gl, gf = GOAL
            met = lut_eq <= gl and s["ff"] <= gf
            emit(f"GOAL width={dw} lut_goal={gl} ff_goal={gf} lut={lut_eq} ff={s['ff']} met={int(met)} "
                 f"over_lut={max(0, lut_eq - gl)} over_ff={max(0, s['ff'] - gf)}")
            if len(parts) == len(DATAPATH_BLOCKS):
                # Which block stands in the way: the budget left to each once the others are counted.
                named = {b.split()[0]: s_ for b, s_ in rows if b.split()[0] in DATAPATH_BLOCKS}
                for b in DATAPATH_BLOCKS:
                    o_lut = sum(named[x]["lut"] + named[x]["lutram_luts"] for x in DATAPATH_BLOCKS if x != b)
                    o_ff  = sum(named[x]["ff"] for x in DATAPATH_BLOCKS if x != b)
                    mine  = (named[b]["lut"] + named[b]["lutram_luts"], named[b]["ff"])
                    emit(f"# {b:<9} {mine[0]:>5} LUT-eq / {mine[1]:>5} FF; budget left by the other blocks: "
                         f"{gl - o_lut:>6} LUT-eq / {gf - o_ff:>6} FF -> over by "
                         f"{max(0, mine[0] - (gl - o_lut))} / {max(0, mine[1] - (gf - o_ff))}")
        finals.append(f"RESULT name=synth_datapath width={dw} lut={s['lut']} lutram_lut={s['lutram_luts']} "
            f"ff={s['ff']} bram36={s['ramb36']} ref_lut={rl} ref_ff={rf} lut_ratio={lut_eq/rl:.3f} "
            f"ff_ratio={s['ff']/rf:.3f}")

    emit(f"# total wall time {time.time() - t_all:.1f} s")
    for line in finals:
        emit(line)
    if failures:
        emit(f"# FAILED: {' '.join(failures)}")
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
