#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Verilator simulation platform: clock, UART console and one TLP port per simulated SSD.

Its Verilog writes a memory port with byte enables as one masked word write
(``mem[adr] <= (mem[adr] & ~mask) | (dat_w & mask)``) instead of LiteX's one ``if`` per byte lane:
the same behaviour, but Verilator evaluates one statement per port and cycle instead of 32 or 64
(the SRAM windows, the completion queue, the L2 cache): the SoC simulates about 1.2x faster.
"""

import importlib
import re
from contextlib import contextmanager

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform

# IOs ----------------------------------------------------------------------------------------------

_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(8)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(8)),
    ),
]

def pcie_sim_io(index, data_width):
    """TLP-boundary port between the root complex RTL and a simulated PCIe device (C module).

    ``tx_*``: TLPs from the root complex to the device, ``rx_*``: TLPs from the device. Beats carry
    LitePCIe's ``phy_layout`` (``dat``/``be``) with little-endian dwords: header dwords as 32-bit
    values (Fmt/Type in bits 31:24 of dword 0), payload bytes in memory order from bit 0.
    """
    return ("pcie", index,
        Subsignal("tx_valid",   Pins(1)),
        Subsignal("tx_ready",   Pins(1)),
        Subsignal("tx_first",   Pins(1)),
        Subsignal("tx_last",    Pins(1)),
        Subsignal("tx_dat",     Pins(data_width)),
        Subsignal("tx_be",      Pins(data_width//8)),
        Subsignal("rx_valid",   Pins(1)),
        Subsignal("rx_ready",   Pins(1)),
        Subsignal("rx_first",   Pins(1)),
        Subsignal("rx_last",    Pins(1)),
        Subsignal("rx_dat",     Pins(data_width)),
        Subsignal("rx_be",      Pins(data_width//8)),
        Subsignal("perst_n",    Pins(1)),   # Root -> device: fundamental reset (PERST#), active low.
        Subsignal("link_up",    Pins(1)),   # Device -> root: data link layer up.
        Subsignal("link_gen",   Pins(3)),   # Trained generation (1-4).
        Subsignal("link_width", Pins(4)),   # Trained width (1, 2, 4, 8).
        Subsignal("ltssm",      Pins(6)),   # LTSSM state (Xilinx encoding, 0x10 = L0).
    )

# Run-time options of the simulated ADC/DAC (sim module `simio`, soc/sim_io.py).
# Run-time options of the simulated ADC/DAC (sim module `simio`): added by the SoC that has them.
_simio = ("simio", 0,
    Subsignal("adc_enable",       Pins(1)),
    Subsignal("adc_rate",         Pins(16)),
    Subsignal("adc_beats",        Pins(64)),
    Subsignal("adc_seed",         Pins(32)),
    Subsignal("dac_backpressure", Pins(1)),
)

# Memories for Verilator ---------------------------------------------------------------------------

# LiteX's write logic of one port with byte enables: one `if` per lane, in lane order.
_LANE  = r"\tif \((\w+)\[(\d+)\]\)\n\t\t(\w+)\[(\w+)\]\[(\d+):(\d+)\] <= (\w+)\[\d+:\d+\];\n"
_LANES = re.compile(f"(?:{_LANE})+")

def _masked_write(m):
    lanes = re.findall(_LANE, m.group(0))
    we, mem, adr, dat = lanes[0][0], lanes[0][2], lanes[0][3], lanes[0][6]
    width = int(lanes[0][4]) - int(lanes[0][5]) + 1
    for i, (w, n, mm, a, hi, lo, d) in enumerate(lanes):
        if (w, mm, a, d) != (we, mem, adr, dat) or (int(n), int(lo), int(hi)) != (i, i*width, (i + 1)*width - 1):
            raise ValueError(f"memory {mem}: unexpected write lanes in LiteX's Verilog: {m.group(0)[:200]}")
    mask = "{" + ", ".join(f"{{{width}{{{we}[{i}]}}}}" for i in reversed(range(len(lanes)))) + "}"
    return f"\tif (|{we})\n\t\t{mem}[{adr}] <= ({mem}[{adr}] & ~{mask}) | ({dat} & {mask});\n"

def verilator_memory_verilog(name, memory, namespace, add_data_file):
    """LiteX's Verilog of ``memory`` with each byte-enable port written as one masked word write."""
    v = _litex_memory_verilog(name, memory, namespace, add_data_file)
    lanes = sum(1 for port in memory.ports if port.we is not None and port.we_granularity < memory.width)
    v, n = _LANES.subn(_masked_write, v)
    if n != lanes:
        raise ValueError(f"memory of {memory.width} bits: {lanes} byte-enable port(s) expected, {n} found "
            "in LiteX's Verilog (has its memory emitter changed?)")
    return v

litex_memory = importlib.import_module("litex.gen.fhdl.memory")  # (`import ... as` finds migen's)
_litex_memory_verilog = litex_memory._memory_generate_verilog

@contextmanager
def _verilator_memories():
    litex_memory._memory_generate_verilog = verilator_memory_verilog
    try:
        yield
    finally:
        litex_memory._memory_generate_verilog = _litex_memory_verilog

# Platform -----------------------------------------------------------------------------------------

class LiteRecorderSimPlatform(SimPlatform):
    def __init__(self, n_pcie_ports=0, pcie_data_width=256):
        io = list(_io) + [pcie_sim_io(i, pcie_data_width) for i in range(n_pcie_ports)]
        SimPlatform.__init__(self, "SIM", io)

    def get_verilog(self, *args, **kwargs):
        with _verilator_memories():
            return SimPlatform.get_verilog(self, *args, **kwargs)
