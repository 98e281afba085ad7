#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Verilator simulation platform: clock, UART console and one TLP port per simulated SSD."""

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform

# IOs ----------------------------------------------------------------------------------------------

_io = [
    ("sys_clk", 0, Pins(1)),
    ("adc_clk", 0, Pins(1)),     # Clock of the simulated user streams (ADC/DAC), 100 MHz.
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
_simio = ("simio", 0,
    Subsignal("adc_enable",       Pins(1)),
    Subsignal("adc_rate",         Pins(16)),
    Subsignal("adc_beats",        Pins(64)),
    Subsignal("adc_seed",         Pins(32)),
    Subsignal("dac_backpressure", Pins(1)),
)

# Platform -----------------------------------------------------------------------------------------

class LiteRecorderSimPlatform(SimPlatform):
    def __init__(self, n_pcie_ports=0, pcie_data_width=256):
        io = list(_io) + [_simio] + [pcie_sim_io(i, pcie_data_width) for i in range(n_pcie_ports)]
        SimPlatform.__init__(self, "SIM", io)
