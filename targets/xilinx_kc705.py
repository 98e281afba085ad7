#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteRecorder on the Xilinx KC705 (Kintex-7 XC7K325T) with the Opsero FPGA Drive FMC Gen4 on the
HPC connector: one NVMe SSD on a Gen2 x4 root port (pcie_7x), DDR3 SODIMM.

    ./targets/xilinx_kc705.py                      # generate Verilog, Vivado TCL, XDC (no Vivado)
    ./targets/xilinx_kc705.py --build              # + bitstream (needs Vivado)
    ./targets/xilinx_kc705.py --load               # load it over JTAG (openFPGALoader)

The KC705's HPC connector carries four transceiver lanes (DP0-DP3): one x4 link, SSD1's socket.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bootstrap # noqa: F401 -- makes the checkout importable as `literecorder`.

from migen import *

from litex.gen import *

from litex_boards.platforms import xilinx_kc705 as board_platform

from litex.soc.cores.clock import S7MMCM, S7IDELAYCTRL
from litex.build.openfpgaloader import OpenFPGALoader

from litedram.modules import MT8JTF12864
from litedram.phy import s7ddrphy

from literecorder.soc.board_soc import LiteRecorderBoardSoC
from literecorder.soc.vivado import add_late_constraint
from literecorder.cores.pcie.phy import S7RootPortPHY

#: litex-boards' platform of the board (``xilinx_kc705.Platform`` for a user of this module).
Platform = board_platform.Platform

# CRG ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq):
        self.rst       = Signal()
        self.cd_sys    = ClockDomain()
        self.cd_sys4x  = ClockDomain()
        self.cd_idelay = ClockDomain()

        # # #

        self.pll = pll = S7MMCM(speedgrade=-2)
        self.comb += pll.reset.eq(platform.request("cpu_reset") | self.rst)
        pll.register_clkin(platform.request("clk200"), 200e6)
        pll.create_clkout(self.cd_sys,    sys_clk_freq)
        pll.create_clkout(self.cd_sys4x,  4*sys_clk_freq)
        pll.create_clkout(self.cd_idelay, 200e6)
        # sys_clk -> the MMCM's reset (the SoC's rst): a false path from the sys clock to the board
        # clock only, in the LATE XDC (soc/vivado.py), where both clocks exist. (LiteX's
        # add_false_path_constraints would make clock groups of every clock derived from the board
        # clock, the user clocks among them, and void their crossings' constraints.)
        add_late_constraint(platform, "set_false_path -from [get_clocks -of_objects [get_nets {sys}]] "
            "-to [get_clocks -of_objects [get_nets {clkin}]]", sys=self.cd_sys.clk, clkin=pll.clkin)

        self.idelayctrl = S7IDELAYCTRL(self.cd_idelay)

# BaseSoC ------------------------------------------------------------------------------------------

class BaseSoC(LiteRecorderBoardSoC):
    board = "kc705"

    def __init__(self, sys_clk_freq=125e6, **kwargs):
        platform = Platform()
        self.crg = _CRG(platform, sys_clk_freq)
        LiteRecorderBoardSoC.__init__(self, platform, sys_clk_freq, **kwargs)

    def create_sdram_phy(self):
        self.ddrphy = s7ddrphy.K7DDRPHY(self.platform.request("ddram"),
            memtype      = "DDR3",
            nphases      = 4,
            sys_clk_freq = self.sys_clk_freq)
        return self.ddrphy, MT8JTF12864(self.sys_clk_freq, "1:4"), {}

    def root_port_phy(self, pads, index, quad, **kwargs):
        # pcie_7x places its lanes itself from the block location; quad 118 follows from the LOCs.
        return S7RootPortPHY(self.platform, pads, ip_name=f"pcie_s7_rp{index}", **kwargs)

# Build --------------------------------------------------------------------------------------------

def main(argv=None, soc_cls=None):
    """The target's command line; ``soc_cls``: a subclass of ``BaseSoC`` (a user's design)."""
    soc_cls = soc_cls or BaseSoC
    from literecorder.targets.board_cli import board_main
    return board_main("kc705", Platform, soc_cls,
        programmer = lambda cable: OpenFPGALoader(board="kc705", cable=cable or ""),
        flash      = True,
        argv       = argv)

if __name__ == "__main__":
    sys.exit(main())
