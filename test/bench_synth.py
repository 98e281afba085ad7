#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Logic cost of the NVMe datapath: Yosys ``synth_xilinx -family xcup`` (UltraScale+) of the cores.

    .venv/bin/python test/bench_synth.py [--out build/synth] [--widths 256,128] [--designs ...]
                                         [--timeout 900] [--yosys yosys]

Designs (each elaborated to Verilog as its own top with ``litex.gen.fhdl.verilog.convert``):

  rc        RCRootComplex (TLP layer, requester, completer) + SRAMWindow (64 KiB on-chip) +
            DRAMWindow (LiteDRAM native port stand-in, 512-bit); the NVMe engine's windows are IOs.
  nvme      NVMeHost (queue engine, request generator, statistics, CPU request FIFO), NVME_ENTRIES.
  recorder  RecorderCore on two LiteDRAM native port stand-ins (write, read; 512-bit), 1 port,
            256 slots. Independent of the PCIe width: synthesized once, named by its 512-bit word.
  datapath  rc + nvme + recorder of one SSD port, connected as in soc/recorder.py.

No CSR banks: the signals the cores' ``add_csr()`` would connect (configuration, control pulses,
status, counters) are top-level IOs instead, as are the stream Endpoints at the design boundary,
the PHY interface and the LiteDRAM ports (no PHY, no LiteDRAM controller/crossbar, no CPU).

The PHY is a stand-in with the core-facing attributes of ``SimRootPortPHY`` (checked against it),
without the simulation pads.

Per design one line::

    RESULT name=synth_<design>_<width> lut=N ff=N ramb36=X lutram=N carry=N seconds=T

(``lut`` = LUT1-LUT6, INV cells not included; ``ff`` = FD*; ``ramb36`` = RAMB36E2 + RAMB18E2/2;
``lutram`` = LUTRAM cells (RAM32M16, RAM64M8, ...); ``carry`` = CARRY8 + CARRY4 (Yosys 0.23 uses
CARRY4 for xcup); ``seconds`` = Yosys run time), a ``DETAIL`` line (cell split, LUTRAM in LUTs, SRL,
MUXF, DSP, INV, IO buffers, unmapped cells) and the memories as Yosys mapped them (``MEMORY``). For ``datapath`` also::

    RESULT name=synth_datapath_<width>_vs_reference lut_ratio=... ff_ratio=...

against the open LiteNVMe host with the same Yosys (QD 32: 5215 LUT / 2779 FF at 256 bits;
3658 LUT / 1795 FF at 128 bits). Verilog, Yosys logs and statistics stay in ``--out``.
A failing design prints ``ERROR name=...`` and the exit code is non-zero.
"""

import os
import re
import sys
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
    RECORDER_SLOTS)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Reference: open LiteNVMe host (root-port TLP layer, accessors, I/O engine, host-memory responder;
# no PHY, no CPU), same Yosys, QD 32.
REFERENCE = {256: (5215, 2779), 128: (3658, 1795)}

# LiteDRAM stand-in: 512-bit native port on 1 GiB (64-byte words), main RAM at 0x40000000; the DRAM
# window is its upper half (soc.recorder.dram_window).
DRAM_PORT_WIDTH  = 512
DRAM_SIZE        = 1 << 30
DRAM_ADDR_WIDTH  = (DRAM_SIZE // (DRAM_PORT_WIDTH // 8)).bit_length() - 1
MAIN_RAM_BASE    = 0x40000000

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

def window_ios(windows):
    return flat([[w.rd_cmd, w.rd_data, w.wr] for w in windows])

# PHY stand-in -------------------------------------------------------------------------------------

class RootPortPHYStandIn:
    """Core-facing interface of ``SimRootPortPHY`` without the pads (all of it becomes top IOs)."""
    endianness = SimRootPortPHY.endianness

    def __init__(self, data_width, root_mps_cap=512):
        check_data_width(data_width)
        self.data_width   = data_width
        self.root_mps_cap = root_mps_cap
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

# Design builders ----------------------------------------------------------------------------------
# Each returns (module, ios, description). Built as in soc/recorder.py (add_nvme_port, add_recorder)
# for port 0, without add_csr().

def _rc_parts(dw, nvme):
    phy  = RootPortPHYStandIn(dw)
    sram = SRAMWindow("nvme0_sram", PCIE_SRAM_BASE, PCIE_SRAM_SIZE, dw)
    port = dram_port("both")
    offset = size = DRAM_SIZE // 2
    dram = DRAMWindow(port, "nvme0_dram", MAIN_RAM_BASE + offset, size, dw, dram_offset=offset)
    rc   = RCRootComplex(phy, windows=[sram.window, dram.window] + nvme.windows)
    ios  = phy.ios() + flat(sram.bus) + dram_port_ios(port)
    # What RCRootComplex.add_csr() drives/reads (requester_id/completer_id stay constants as in the SoC).
    ios += public_ios(rc.requester, skip=("requester_id", "doorbell"))
    ios += public_ios(rc.completer, skip=("completer_id",))
    ios += [rc.rx.unsupported]
    return phy, sram, dram, rc, ios

def _nvme(dw):
    qbase = NVME_QUEUE_BASE
    return NVMeHost(dw, sq_base=qbase, cq_base=qbase + 0x100000, prp_base=qbase + 0x200000,
        entries=NVME_ENTRIES)

def _nvme_ios(nvme):
    # What NVMeHost.add_csr() drives/reads; the engine/generator/stats streams are internal.
    ios  = [nvme.select]
    ios += public_ios(nvme.engine,    skip=("sink", "source", "doorbell"))
    ios += public_ios(nvme.generator, skip=("source", "lba_shift"))
    ios += public_ios(nvme.stats,     skip=("sink", "source", "lba_shift", "now"))
    ios += flat(nvme.cpu_fifo.sink, skip_fields=("first", "last")) + [nvme.cpu_fifo.level]
    return ios

def _recorder():
    wr, rd = dram_port("write"), dram_port("read")
    rec = RecorderCore(wr, rd, n_ports=1, slots=RECORDER_SLOTS)
    ios = dram_port_ios(wr) + dram_port_ios(rd) + flat([rec.sink, rec.source])
    ios += public_ios(rec, skip=("sink", "source", "req", "cpl"))
    return rec, ios

def build_rc(dw):
    m = LiteXModule()
    # The NVMe engine's windows are needed for the address decode; the engine itself is not built.
    nvme = _nvme(dw)
    phy, sram, dram, rc, ios = _rc_parts(dw, nvme)
    m.sram, m.dram, m.rc = sram, dram, rc
    ios += window_ios(nvme.windows) + flat(rc.doorbell)
    return m, ios, f"RCRootComplex + SRAMWindow {PCIE_SRAM_SIZE//1024} KiB + DRAMWindow; NVMe windows as IOs"

def build_nvme(dw):
    m = LiteXModule()
    m.nvme = nvme = _nvme(dw)
    ios = _nvme_ios(nvme) + window_ios(nvme.windows)
    ios += flat([nvme.doorbell, nvme.ext_sink, nvme.ext_source])
    return m, ios, f"NVMeHost entries={NVME_ENTRIES}"

def build_recorder(dw):
    m = LiteXModule()
    m.rec, ios = _recorder()
    ios += flat([m.rec.req, m.rec.cpl])
    return m, ios, f"RecorderCore n_ports=1 slots={RECORDER_SLOTS}, {DRAM_PORT_WIDTH}-bit LiteDRAM ports"

def build_datapath(dw):
    m = LiteXModule()
    m.nvme = nvme = _nvme(dw)
    phy, sram, dram, rc, ios = _rc_parts(dw, nvme)
    m.sram, m.dram, m.rc = sram, dram, rc
    m.rec, rec_ios = _recorder()
    m.comb += [
        nvme.doorbell.connect(rc.doorbell),
        m.rec.req[0].connect(nvme.ext_sink),
        nvme.ext_source.connect(m.rec.cpl[0]),
    ]
    ios += _nvme_ios(nvme) + rec_ios
    return m, ios, "rc + nvme + recorder (1 SSD port)"

DESIGNS = {
    "rc":       (build_rc,       True),   # (builder, depends on the PCIe width)
    "nvme":     (build_nvme,     True),
    "recorder": (build_recorder, False),
    "datapath": (build_datapath, True),
}

# Elaboration --------------------------------------------------------------------------------------

def elaborate(design, dw, name, out):
    builder, _ = DESIGNS[design]
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
        "ramb36": cells.get("RAMB36E2", 0) + cells.get("RAMB18E2", 0) / 2,
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
    ap.add_argument("--designs", default="rc,nvme,recorder,datapath", help="designs (default: rc,nvme,recorder,datapath)")
    ap.add_argument("--timeout", type=float, default=900, help="Yosys time limit per design in seconds (default: 900)")
    ap.add_argument("--yosys", default="yosys", help="Yosys executable (default: yosys)")
    a = ap.parse_args()

    try:
        widths  = [int(w) for w in a.widths.split(",") if w]
        designs = [d for d in a.designs.split(",") if d]
    except ValueError:
        ap.error(f"--widths: comma-separated integers expected, got {a.widths!r}")
    for d in designs:
        if d not in DESIGNS:
            ap.error(f"unknown design {d!r} (known: {', '.join(DESIGNS)})")
    os.makedirs(a.out, exist_ok=True)
    print(f"# Yosys: {a.yosys} synth_xilinx -family xcup; out: {a.out}; timeout {a.timeout:g} s/design")
    print("# IOs: stream Endpoints at the design boundary, PHY interface, LiteDRAM native ports and the")
    print("# signals add_csr() would connect (no CSR banks, no PHY, no LiteDRAM controller, no CPU).")

    jobs = []
    for d in designs:
        if DESIGNS[d][1]:
            jobs += [(d, w, f"synth_{d}_{w}") for w in widths]
        else:
            # Independent of the PCIe width: once, named by the width of its LiteDRAM words.
            jobs.append((d, widths[0] if widths else 256, f"synth_{d}_{DRAM_PORT_WIDTH}"))

    results = open(os.path.join(a.out, "results.txt"), "w")
    def emit(line):
        print(line, flush=True)
        results.write(line + "\n")
        results.flush()

    failures = []
    t_all = time.time()
    for design, dw, name in jobs:
        try:
            if design in ("rc", "datapath"):
                check_phy_standin(dw)
            t0 = time.time()
            vfile, desc, nios = elaborate(design, dw, name, a.out)
            t_elab = time.time() - t0
            print(f"# {name}: {desc}; {nios} IO signals; Verilog {os.path.getsize(vfile)//1024} KiB "
                  f"in {t_elab:.1f} s", flush=True)
            dt, cells, log = run_yosys(a.yosys, vfile, name, a.out, a.timeout)
            s = summarize(cells)
            emit(f"RESULT name={name} lut={s['lut']} ff={s['ff']} ramb36={fmt(s['ramb36'])} "
                  f"lutram={s['lutram']} carry={s['carry']} seconds={dt:.1f}")
            emit(f"DETAIL name={name} ramb36_cells={s['ramb36_cells']} ramb18_cells={s['ramb18_cells']} "
                  f"uram={s['uram']} lutram_luts={s['lutram_luts']} lutram_types={s['lutram_types']} "
                  f"srl={s['srl']} muxf={s['muxf']} dsp={s['dsp']} carry8={s['carry8_cells']} "
                  f"carry4={s['carry4_cells']} inv={s['inv']} iobuf={s['iobuf']} unmapped={s['unmapped']}")
            for mem, shape, how in memory_mappings(log, vfile):
                emit(f"MEMORY name={name} memory={mem} words_x_bits={shape} mapped={how}")
            if s["unmapped"] != "-":
                emit(f"WARNING name={name}: cells Yosys left unmapped: {s['unmapped']}")
            if s["lut"] == 0 or s["ff"] == 0:
                raise YosysError(f"implausible result (lut={s['lut']} ff={s['ff']}): logic optimized away?")
            if design == "datapath" and dw in REFERENCE:
                rl, rf = REFERENCE[dw]
                emit(f"RESULT name={name}_vs_reference lut_ratio={s['lut']/rl:.3f} ff_ratio={s['ff']/rf:.3f}")
            sys.stdout.flush()
        except Exception as e:
            msg = str(e) if isinstance(e, YosysError) else f"{type(e).__name__}: {e}"
            if not isinstance(e, YosysError):
                traceback.print_exc(file=sys.stderr)
            emit(f"ERROR name={name} {msg}")
            failures.append(name)

    emit(f"# total wall time {time.time() - t_all:.1f} s")
    if failures:
        emit(f"# FAILED: {' '.join(failures)}")
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
