#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteRecorder on the Xilinx KCU105 (Kintex UltraScale XCKU040) with the Opsero FPGA Drive FMC Gen4
on the HPC connector: 1 or 2 NVMe SSDs, each on a Gen3 x4 root port (pcie3_ultrascale), DDR4.

    ./targets/xilinx_kcu105.py --ssds 2            # generate Verilog, Vivado TCL, XDC (no Vivado)
    ./targets/xilinx_kcu105.py --ssds 2 --build    # + bitstream (needs Vivado)
    ./targets/xilinx_kcu105.py --ssds 2 --load     # load it over JTAG (openFPGALoader)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bootstrap # noqa: F401 -- makes the checkout importable as `literecorder`.

from migen import *

from litex.gen import *

from litex_boards.platforms import xilinx_kcu105 as board_platform

from litex.soc.cores.clock import USMMCM, USIDELAYCTRL
from litex.build.openfpgaloader import OpenFPGALoader

from litedram.modules import EDY4016A
from litedram.phy import usddrphy

from literecorder.soc import fpga_drive_fmc
from literecorder.soc.board_soc import LiteRecorderBoardSoC
from literecorder.soc.vivado import add_late_constraint
from literecorder.cores.pcie.phy import USRootPortPHY

#: litex-boards' platform of the board (``xilinx_kcu105.Platform`` for a user of this module).
Platform = board_platform.Platform

# CRG ----------------------------------------------------------------------------------------------

class _CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq):
        self.rst       = Signal()
        self.cd_sys    = ClockDomain()
        self.cd_sys4x  = ClockDomain()
        self.cd_pll4x  = ClockDomain()
        self.cd_idelay = ClockDomain()

        # # #

        self.pll = pll = USMMCM(speedgrade=-2)
        self.comb += pll.reset.eq(platform.request("cpu_reset") | self.rst)
        pll.register_clkin(platform.request("clk125"), 125e6)
        pll.create_clkout(self.cd_pll4x, sys_clk_freq*4, buf=None, with_reset=False)
        pll.create_clkout(self.cd_idelay, 200e6)
        # sys_clk -> the MMCM's reset (the SoC's rst): a false path from the sys clock to the board
        # clock only, in the LATE XDC (soc/vivado.py), where both clocks exist. (LiteX's
        # add_false_path_constraints would make clock groups of every clock derived from the board
        # clock, the user clocks among them, and void their crossings' constraints.)
        add_late_constraint(platform, "set_false_path -from [get_clocks -of_objects [get_nets {sys}]] "
            "-to [get_clocks -of_objects [get_nets {clkin}]]", sys=self.cd_sys.clk, clkin=pll.clkin)

        self.specials += [
            Instance("BUFGCE_DIV",
                p_BUFGCE_DIVIDE = 4,
                i_CE = 1, i_I = self.cd_pll4x.clk, o_O = self.cd_sys.clk),
            Instance("BUFGCE",
                i_CE = 1, i_I = self.cd_pll4x.clk, o_O = self.cd_sys4x.clk),
        ]

        self.idelayctrl = USIDELAYCTRL(cd_ref=self.cd_idelay, cd_sys=self.cd_sys)

# BaseSoC ------------------------------------------------------------------------------------------

class BaseSoC(LiteRecorderBoardSoC):
    board = "kcu105"

    def __init__(self, sys_clk_freq=125e6, **kwargs):
        platform = Platform()
        self.crg = _CRG(platform, sys_clk_freq)
        LiteRecorderBoardSoC.__init__(self, platform, sys_clk_freq, **kwargs)

    def create_sdram_phy(self):
        self.ddrphy = usddrphy.USDDRPHY(self.platform.request("ddram"),
            memtype          = "DDR4",
            sys_clk_freq     = self.sys_clk_freq,
            iodelay_clk_freq = 200e6)
        return self.ddrphy, EDY4016A(self.sys_clk_freq, "1:4"), dict(size=0x40000000)

    def root_port_phy(self, pads, index, quad, **kwargs):
        return USRootPortPHY(self.platform, pads, speed="gen3", gt_quad=quad,
            channel_loss=fpga_drive_fmc.CHANNEL_LOSS, ip_name=f"pcie_us_rp{index}", **kwargs)

# Build --------------------------------------------------------------------------------------------

def main(argv=None, soc_cls=None):
    """The target's command line; ``soc_cls``: a subclass of ``BaseSoC`` (a user's design)."""
    soc_cls = soc_cls or BaseSoC
    from literecorder.targets.board_cli import board_main
    return board_main("kcu105", Platform, soc_cls,
        programmer = lambda cable: OpenFPGALoader(cable=cable or "jtag-smt2-nc",
            fpga_part="xcku040ffva1156"),
        flash      = True,
        argv       = argv)

if __name__ == "__main__":
    sys.exit(main())
