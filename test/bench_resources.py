#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Resources of the whole board designs with Yosys (``make resources``): each target is generated
(no Vivado), synthesized with Debian's Yosys ``synth_xilinx`` for its family with the PCIe hard IP
black-boxed, and reported per block, with the deepest logic path of the datapath.

    .venv/bin/python test/bench_resources.py [--boards kc705,kcu105,zcu106] [--ssds N]
                                             [--out build/resources] [--timeout 3600]

Blocks: the design is synthesized flat (as Vivado would, with optimization across blocks); each
mapped cell is then counted in the block of the first named signal it drives, directly or through
unnamed ones (a LUT in the block of the register it feeds). The names of each block's signals come
from the design itself (the signals its Migen modules drive, in the generated namespace).

    CPU        VexRiscv (its own module) and its bus interfaces
    LiteDRAM   controller, crossbar, L2 cache, DRAM PHY
    root port  root-port PHY wrappers (CDC FIFOs, descriptor conversion, configuration)
    root cplx  root complex: TLP layer, requester, completer, SRAM/DRAM windows
    NVMe host  queue engines, request generators, statistics
    recorder   recorder ring, test streams, DRAM pattern engine
    SoC        bus, CSRs, UART, timer, CRG, LEDs

Logic depth: on the flattened mapped netlist, the longest path in LUT levels (LUT1-LUT6; MUXF7/F8
inside a level; carry cells counted apart) between sequential elements (flip-flops, block RAMs,
LUT RAM, DSPs, ports, black boxes), per block of the path's end register; the datapath figure is
the deepest of root port, root complex, NVMe host and recorder, named by its start and end signals.

Per board::

    RESULT name=resources board=... ssds=N lut=N ff=N ramb36=X dsp=N lutram=N seconds=T
    RESULT name=resources_block board=... block=... lut=N lut_share=P ff=N ...
    RESULT name=logic_depth board=... block=... levels=N carry=N from=... to=...
"""

import os
import re
import sys
import json
import time
import argparse
import subprocess
from collections import defaultdict

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TEST_DIR)
sys.path.insert(0, os.path.join(os.path.dirname(TEST_DIR), "targets"))
import _bootstrap # noqa: F401

import board_checks as bc
from literecorder.soc import fpga_drive_fmc

ROOT = bc.ROOT

# Part resources (datasheet product tables: DS180 7 series, DS890 UltraScale, DS891 Zynq US+).
PARTS = {
    "kc705":  dict(part="XC7K325T", family="xc7",  lut=203800, ff=407600, ramb36=445, dsp=840),
    "kcu105": dict(part="XCKU040",  family="xcu",  lut=242400, ff=484800, ramb36=600, dsp=1920),
    "zcu106": dict(part="XCZU7EV",  family="xcup", lut=230400, ff=460800, ramb36=312, dsp=1728),
}

# Logic depth limit between registers of the project's blocks: LiteDRAM's own depth measured the
# same way (8 LUT levels), which closes at the boards' 125 MHz system clock.
LEVELS_LIMIT = 8

BLOCKS = ["CPU", "LiteDRAM", "root port", "root cplx", "NVMe host", "recorder", "SoC"]
DATAPATH = ["root port", "root cplx", "NVMe host", "recorder"]
PROJECT  = DATAPATH + ["SoC"]

# Block of a signal name (None: an unnamed or generated intermediate, look further).
_RULES = [
    (r"(basesoc_)?(vexriscv|cpu|ibus|dbus|interrupt)", "CPU"),
    (r"(basesoc_)?(sdram|\w*ddrphy\d*|port|l2|tag|data|word|litedramnativeport\d*|idelayctrl)", "LiteDRAM"),
    (r"(s7|us|usp)rootportphy\d*|pcie\d*_phy", "root port"),
    (r"rcrootcomplex\d*|rc|sramwindow\d*|dramwindow\d*|rctlptx\d*|rccompleter\d*", "root cplx"),
    (r"nvmehost\d*|nvme\d*|nvme_(sq|cq|prp|info)", "NVMe host"),
    (r"add_recorder|recorder\w*|drampat\w*|recstream\w*|recordport\w*|replayport\w*|controlport\w*|"
     r"teststreams\w*", "recorder"),
]

BLOCK_NAMES = {}        # Verilog name -> block, from the design (block_names); rules below otherwise.

def block_of(name):
    n = name.lstrip("\\")
    if n.startswith("$"):
        return None
    if n in BLOCK_NAMES:
        return BLOCK_NAMES[n]
    if n.startswith("VexRiscv."):                   # The CPU's own module, flattened.
        return "CPU"
    n = re.sub(r"^(board_main|generate|builder)_", "", n)
    if re.match(r"(rhs|t|comb|sync|cases|new|f|complexslicelowerer|self)\d*(_|$)", n):
        return None                                 # Temporaries of the Verilog writer.
    if n.startswith("csr"):
        return "SoC"
    for pattern, block in _RULES:
        if re.match(rf"({pattern})(_|$|\d)", n):
            return block
    return "SoC"

def block_names(gen):
    """{Verilog name: block} of the signals each block's Migen modules drive and of their memories,
    from the generated SoC and its namespace (the names LiteX gave them depend on the design)."""
    from migen.fhdl.tools import list_targets
    from migen.fhdl.specials import Memory
    soc, vns = gen.soc, gen.vns
    owners = [("CPU", ["cpu"]), ("LiteDRAM", ["sdram", "ddrphy", "sdrphy"]),
        ("recorder", ["recstream", "drampat"] + sorted(a for a in vars(soc) if a.startswith("recorder")))]
    for i in range(gen.ssds):
        owners += [("root port", [f"pcie{i}_phy"]), ("root cplx", [f"pcie{i}", f"nvme{i}_sram",
            f"nvme{i}_dram"]), ("NVMe host", [f"nvme{i}"])]
    names = {}
    for block, attrs in owners:
        for a in attrs:
            m = getattr(soc, a, None)
            if m is None or not hasattr(m, "_fragment"):     # not a module (e.g. a configuration)
                continue
            frag = m._fragment                       # Merged with its submodules once finalized.
            for sig in list_targets(frag):
                names.setdefault(vns.get_name(sig), block)
            for sp in frag.specials:
                if isinstance(sp, Memory):
                    names.setdefault(vns.get_name(sp), block)
    return names

# Yosys ------------------------------------------------------------------------------------------

def yosys(script, log, timeout):
    with open(log, "w") as f:
        r = subprocess.run(["yosys", "-q", "-l", log + ".full", "-p", script], stdout=f,
            stderr=subprocess.STDOUT, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"yosys failed (see {log}.full)")

def attribute(design, top):
    """{cell name: block} of the flattened mapped netlist: a cell belongs to the block of the first
    named signal it drives, directly or through unnamed ones (a LUT is counted in the block of the
    register it feeds; one feeding several blocks counts in the first found)."""
    mod = design["modules"][top]
    named = {}                                       # bit -> block
    for name, net in mod["netnames"].items():
        if net.get("hide_name"):
            continue
        b = block_of(name)
        if b is not None:
            for bit in net["bits"]:
                if isinstance(bit, int):
                    named.setdefault(bit, b)
    readers = defaultdict(list)
    outs = {}
    for cname, cell in mod["cells"].items():
        dirs = cell.get("port_directions", {})
        outs[cname] = [b for p, bits in cell["connections"].items() if dirs.get(p) == "output"
            for b in bits if isinstance(b, int)]
        for p, bits in cell["connections"].items():
            if dirs.get(p) == "input":
                for bit in bits:
                    if isinstance(bit, int):
                        readers[bit].append(cname)
    assigned = {}
    for cname in mod["cells"]:
        b = block_of(cname) if not cname.startswith("$") else None
        seen, frontier = {cname}, [cname]
        while frontier and b is None and len(seen) < 5000:
            nxt = []
            for c in frontier:
                for bit in outs[c]:
                    if bit in named:
                        b = named[bit]
                        break
                    for r in readers[bit]:
                        if r not in seen:
                            seen.add(r)
                            nxt.append(r)
                if b is not None:
                    break
            frontier = nxt
        assigned[cname] = b or "SoC"
    return assigned

# Counting ---------------------------------------------------------------------------------------

def cell_kind(t):
    """Resource class of a mapped cell type (None: not counted)."""
    if re.fullmatch(r"LUT[1-6]", t):
        return "lut"
    if re.fullmatch(r"FD[CPRS]E(_1)?", t):
        return "ff"
    if t in ("RAMB36E1", "RAMB36E2"):
        return "ramb36"
    if t in ("RAMB18E1", "RAMB18E2"):
        return "ramb18"
    if t.startswith("DSP48"):
        return "dsp"
    if _LUTRAM.fullmatch(t):
        return "lutram"
    if t.startswith("CARRY"):
        return "carry"
    return None

def count(design, top, assigned):
    """(total, {block: counts}) of the flattened mapped netlist."""
    total, blocks = defaultdict(float), defaultdict(lambda: defaultdict(float))
    for cname, cell in design["modules"][top]["cells"].items():
        k = cell_kind(cell["type"])
        if k is None:
            continue
        n = 0.5 if k == "ramb18" else 1
        k = "ramb36" if k == "ramb18" else k
        total[k] += n
        blocks[assigned[cname]][k] += n
    return total, blocks

_LUTRAM = re.compile(r"RAM\d+M\d*|RAM\d+X1[SD]|SRL16E|SRLC16E|SRLC32E")

# Logic depth ------------------------------------------------------------------------------------

def comb_ports(cell):
    """Input ports of ``cell`` with a combinational path to its outputs, and the (LUT levels, carry
    cells) the cell adds: LUTs 1 level, LUT RAM / shift registers 1 level through their address
    (their write side is sequential), MUXF7/F8 and inverters 0, carry cells 1 carry."""
    t, ports = cell["type"], cell["connections"]
    dirs = cell.get("port_directions", {})
    ins  = [p for p in ports if dirs.get(p) == "input"]
    if re.fullmatch(r"LUT[1-6]", t):
        return ins, (1, 0)
    if re.fullmatch(r"MUXF[789]|INV|BUF", t):
        return ins, (0, 0)
    if re.fullmatch(r"CARRY[48]", t):
        return ins, (0, 1)
    if _LUTRAM.fullmatch(t):
        return [p for p in ins if re.fullmatch(r"ADDR[A-H]|A\d*|DPRA\d*", p)], (1, 0)
    return [], (0, 0)

_CLOCK_PORTS = re.compile(r"C|CLK|WCLK|CLKARDCLK|CLKBWRCLK|CLKARDCLKL|CLKBWRCLKL|CLKA|CLKB")

def logic_depth(flat, top, skip_start=None, over=None):
    """{(block, clock): (levels, carry, from, to)}: deepest LUT path between sequential elements
    (flip-flops, block RAMs, LUT RAM write ports, DSPs, black boxes), by the block of the signal it
    ends in and the clock of its end register (``-`` for ports and black boxes without one).
    ``skip_start(name)``: paths from these start signals are left out (e.g. CSR registers).
    ``over``: also return the list of every end register deeper than ``over`` levels with its path
    (the named signals it runs through), as ``(levels, carry, block, clock, [start, ..., end])``."""
    mod   = flat["modules"][top]
    cells = mod["cells"]
    names, aliases = {}, defaultdict(list)
    for name, net in mod["netnames"].items():
        if name.startswith("$") or net.get("hide_name"):
            continue
        for bit in net["bits"]:
            if isinstance(bit, int):
                names.setdefault(bit, name)
                if len(net["bits"]) == 1:
                    aliases[bit].append(name)
    def clock_name(bit):
        """The most readable of a clock net's names (a top-level one, the shortest)."""
        cands = aliases.get(bit) or [names.get(bit, "?")]
        return min(cands, key=lambda n: ("." in n, not n.endswith("clk"),
            not n.startswith(("sys", "pcie")), bool(re.match(r"(to|from)\d+_", n)), len(n), n))
    driver = {}
    for cname, cell in cells.items():
        dirs = cell.get("port_directions", {})
        for p, bits in cell["connections"].items():
            if dirs.get(p) == "output":
                for b in bits:
                    if isinstance(b, int):
                        driver[b] = cname
    comb = {c: comb_ports(cell) for c, cell in cells.items()}
    memo, via, active = {}, {}, set()
    sys.setrecursionlimit(200000)
    def arrival(bit):
        """(LUT levels, carry cells, start signal) of the deepest path ending at ``bit``."""
        c = driver.get(bit)
        if c is None or not comb[c][0]:
            start = names.get(bit, c or "input")
            if skip_start is not None and skip_start(start):
                return (-10**6, -10**6, start)       # Never the deepest.
            return (0, 0, start)
        if c in memo:
            return memo[c]
        if c in active:                              # Combinational loop: cut it here.
            return (0, 0, names.get(bit, c))
        active.add(c)
        best, best_bit = None, None
        for p in comb[c][0]:
            for b in cells[c]["connections"][p]:
                if isinstance(b, int):
                    a = arrival(b)
                    if best is None or (a[0], a[1]) > (best[0], best[1]):
                        best, best_bit = a, b
        best = best or (0, 0, names.get(bit, c))
        lut, carry = comb[c][1]
        memo[c] = (best[0] + lut, best[1] + carry, best[2])
        via[c] = best_bit
        active.discard(c)
        return memo[c]
    def trace(bit):
        """Named signals along the deepest path ending at ``bit`` (start first), each with the LUT
        levels reached there (``name@levels``)."""
        path = []
        while True:
            n = names.get(bit)
            c = driver.get(bit)
            if n is not None and (not path or path[-1].split("@")[0] != n):
                lv = memo[c][0] if c in memo else 0
                path.append(f"{n}@{lv}")

            if c is None or not comb[c][0] or c not in via or via[c] is None:
                break
            bit = via[c]
        return path[::-1]
    deepest, deep = {}, []
    for cname, cell in cells.items():
        dirs = cell.get("port_directions", {})
        through = set(comb[cname][0])
        ends = [p for p, d in dirs.items() if d == "input" and p not in through]
        if not ends or re.fullmatch(r"LUT[1-6]|MUXF[789]|INV|BUF|CARRY[48]", cell["type"]):
            continue
        out  = [b for p, bits in cell["connections"].items() if dirs.get(p) == "output" for b in bits
            if isinstance(b, int)]
        end = next((names[b] for b in out if b in names), None)
        if end is None:                              # Unnamed register: name it by its input.
            data = [p for p in ends if not re.fullmatch(r"C|CLK\w*|WCLK|CE|R|S|CLR|PRE|\w*RST\w*|\w*EN\w*", p)]
            end = next((names[b] for p in data for b in cell["connections"][p]
                if isinstance(b, int) and b in names), cname)
        block = ("CPU" if end.startswith("VexRiscv.") else block_of(end.split(".")[-1])) or "SoC"
        clk = next((clock_name(b) for p in ends if _CLOCK_PORTS.fullmatch(p)
            for b in cell["connections"][p] if isinstance(b, int)), "-")
        key = (block, clk)
        for p in ends:
            if _CLOCK_PORTS.fullmatch(p):
                continue
            for b in cell["connections"][p]:
                if isinstance(b, int):
                    lv, cy, start = arrival(b)
                    if lv >= 0 and (lv, cy) > deepest.get(key, (0, 0))[:2]:
                        deepest[key] = (lv, cy, start, end)
                    if over is not None and lv > over:
                        deep.append((lv, cy, block, clk, trace(b) + [end]))
    return (deepest, deep) if over is not None else deepest

# Board ------------------------------------------------------------------------------------------

def run_board(board, ssds, out, timeout, reuse=False, over=LEVELS_LIMIT):
    t0   = time.time()
    work = os.path.join(out, f"{board}-{ssds}")
    gen  = bc.generate(board, ssds, work)
    BLOCK_NAMES.clear()
    BLOCK_NAMES.update(block_names(gen))
    tcl  = gen.read("tcl")
    with open(gen.verilog) as f:
        ips = sorted(n for n in bc.verilog_instances(f.read()) if re.sub(r"\d+$", "", n) in bc.IP_STUBS)
    width = gen.soc.recorder_config.pcie_data_width
    stubs = []
    for ip in ips:
        path = os.path.join(work, ip + "_stub.v")
        with open(path, "w") as f:
            f.write(bc.ip_stub(ip, width))
        stubs.append(path)
    top  = gen.top
    fam  = PARTS[board]["family"]
    flat = os.path.join(work, "flat.json")
    if not (reuse and os.path.exists(flat)):
        yosys("; ".join([
            *[f"read_verilog -lib {s}" for s in stubs],
            *[f"read_verilog {s}" for s in bc.tcl_sources(tcl)],
            # Yosys 0.23 maps the 4096 x 32 integrated SRAM to UltraScale LUTRAM and then fails in
            # its own map file ("invalid OPTION_ABITS/WIDTH combination"): it goes to block RAM,
            # where Vivado puts it too.
            *(["setattr -set ram_style \"block\" m:sram"] if fam in ("xcu", "xcup") else []),
            f"synth_xilinx -flatten -family {fam} -top {top} -noiopad",
            f"write_json {flat}"]), os.path.join(work, "yosys.log"), timeout)
    with open(flat) as f:
        design = json.load(f)
    assigned      = attribute(design, top)
    total, blocks = count(design, top, assigned)
    depth, deep   = logic_depth(design, top, over=over)
    with open(os.path.join(work, "deep_paths.txt"), "w") as f:
        for lv, cy, block, clk, path in sorted(deep, key=lambda d: (-d[0], d[2], d[4][-1])):
            f.write(f"{lv} +{cy}c {block} @{clk}: {' -> '.join(path)}\n")
    return dict(total=total, blocks=blocks, depth=depth, deep=deep, seconds=time.time() - t0, ips=ips)

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards",  default="kc705,kcu105,zcu106")
    ap.add_argument("--ssds",    type=int, default=None, help="SSDs (default: each board's maximum)")
    ap.add_argument("--out",     default=os.path.join(ROOT, "build", "resources"))
    ap.add_argument("--timeout", type=int, default=4*3600, help="per Yosys run (s)")
    ap.add_argument("--reuse",   action="store_true", help="analyse the last netlist again (no Yosys)")
    a = ap.parse_args()
    rc = 0
    for board in a.boards.split(","):
        ssds = a.ssds or fpga_drive_fmc.max_ssds(board)
        p    = PARTS[board]
        try:
            r = run_board(board, ssds, a.out, a.timeout, reuse=a.reuse)
        except Exception as e:
            print(f"ERROR name=resources board={board} {type(e).__name__}: {e}", flush=True)
            rc = 1
            continue
        t = r["total"]
        print(f"\n{board.upper()} ({p['part']}, {ssds} SSD{'s' if ssds > 1 else ''}; Yosys synth_xilinx "
            f"-flatten -family {p['family']}, hard IP {', '.join(r['ips'])} black-boxed)")
        print(f"  {'block':<10} {'LUT':>8} {'share':>6} {'FF':>8} {'RAMB36':>7} {'DSP':>4} {'LUTRAM':>7}")
        for b in BLOCKS:
            c = r["blocks"].get(b, {})
            print(f"  {b:<10} {int(c.get('lut', 0)):>8} {c.get('lut', 0)/max(t.get('lut', 1), 1):>6.1%} "
                f"{int(c.get('ff', 0)):>8} {c.get('ramb36', 0):>7g} {int(c.get('dsp', 0)):>4} "
                f"{int(c.get('lutram', 0)):>7}")
            print(f"RESULT name=resources_block board={board} block={b.replace(' ', '_')} "
                f"lut={int(c.get('lut', 0))} lut_share={c.get('lut', 0)/max(t.get('lut', 1), 1):.3f} "
                f"ff={int(c.get('ff', 0))} ramb36={c.get('ramb36', 0):g} dsp={int(c.get('dsp', 0))} "
                f"lutram={int(c.get('lutram', 0))}")
        print(f"  {'total':<10} {int(t.get('lut', 0)):>8} {t.get('lut', 0)/p['lut']:>6.1%} "
            f"{int(t.get('ff', 0)):>8} {t.get('ramb36', 0):>7g} {int(t.get('dsp', 0)):>4} "
            f"{int(t.get('lutram', 0)):>7}   (share of the {p['part']}: LUT {t.get('lut', 0)/p['lut']:.1%}, "
            f"FF {t.get('ff', 0)/p['ff']:.1%}, RAMB36 {t.get('ramb36', 0)/p['ramb36']:.1%}, "
            f"DSP {t.get('dsp', 0)/p['dsp']:.1%})")
        print(f"RESULT name=resources board={board} ssds={ssds} lut={int(t.get('lut', 0))} "
            f"ff={int(t.get('ff', 0))} ramb36={t.get('ramb36', 0):g} dsp={int(t.get('dsp', 0))} "
            f"lutram={int(t.get('lutram', 0))} part_lut={p['lut']} part_ff={p['ff']} "
            f"part_ramb36={p['ramb36']} part_dsp={p['dsp']} seconds={r['seconds']:.0f}")
        print(f"  deepest logic path per block and clock (LUT levels, + carry cells; limit "
            f"{LEVELS_LIMIT} for the project's blocks: {', '.join(PROJECT)}):")
        for (b, clk), (lv, cy, start, end) in sorted(r["depth"].items(),
                key=lambda kv: (BLOCKS.index(kv[0][0]), kv[0][1])):
            flag = "  OVER" if b in PROJECT and lv > LEVELS_LIMIT else ""
            print(f"    {b:<10} {clk:<24} {lv:>3} +{cy:<3} {start} -> {end}{flag}")
            print(f"RESULT name=logic_depth board={board} block={b.replace(' ', '_')} clock={clk} "
                f"levels={lv} carry={cy} limit={LEVELS_LIMIT if b in PROJECT else '-'} "
                f"from={start} to={end}")
        over = sorted({(lv, blk, path[0], path[-1]) for lv, cy, blk, clk, path in r["deep"]
            if blk in PROJECT}, reverse=True)
        print(f"  project paths over {LEVELS_LIMIT} levels: {len(over)} "
            f"(all with their signals: {os.path.join(a.out, f'{board}-{ssds}', 'deep_paths.txt')})")
        if over:
            rc = rc or 2
    return rc

if __name__ == "__main__":
    sys.exit(main())
