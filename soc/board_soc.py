#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The recorder SoC on a board with the Opsero FPGA Drive FMC Gen4.

What every board target shares beyond ``LiteRecorderSoC``: the adapter's pins, one root port per
M.2 socket placed on the transceivers and PCIe block its lanes reach (``soc/fpga_drive_fmc.py``),
the timing constraints of each root port's clock-domain crossings, the adapter's SSD2 power switch,
link-up/activity on the carrier's user LEDs, and the BIOS's boot-time link timeout. A target adds
its CRG, its DRAM PHY (``create_sdram_phy``) and its root-port PHY class (``root_port_phy``).
"""

from migen import *

from litex.gen import *

from literecorder.soc.recorder_soc import LiteRecorderSoC
from literecorder.soc.recorder import PCIE_BAR_BASE, PCIE_PORT_STRIDE, RECORDER_SLOTS
from literecorder.soc import fpga_drive_fmc
from literecorder.soc.boards import board as board_info, check_pcie_data_width

# Activity LED -------------------------------------------------------------------------------------

class ActivityLED(LiteXModule):
    """``led`` lights for ``hold`` seconds after each cycle ``activity`` is set (retriggered)."""
    def __init__(self, activity, sys_clk_freq, hold=50e-3):
        cycles   = max(1, int(hold*sys_clk_freq))
        self.led = Signal()

        # # #

        count = Signal(max=cycles + 1)
        self.comb += self.led.eq(count != 0)
        self.sync += If(activity, count.eq(cycles)).Elif(count != 0, count.eq(count - 1))

# Board Recorder SoC -------------------------------------------------------------------------------

# BIOS boot: time given to each link (PERST# held >= 100 ms after reset by the PHY's sequencer, then
# the SSD's link training, up to 100 ms for most drives).
BOOT_LINK_TIMEOUT_US = 500_000

class LiteRecorderBoardSoC(LiteRecorderSoC):
    """``LiteRecorderSoC`` on ``board`` (a key of ``soc.boards.BOARDS``) with the FPGA Drive FMC.

    The target builds ``platform`` and ``self.crg`` first and defines ``create_sdram_phy()`` and
    ``root_port_phy(pads, index, **placement)``.
    """
    board = None

    def __init__(self, platform, sys_clk_freq, ssds=1, pcie_data_width=None,
        chunk_size=128*1024, ring_size=RECORDER_SLOTS, with_status_leds=True, **kwargs):
        info = board_info(self.board)
        fpga_drive_fmc.check_ssds(self.board, ssds)
        if pcie_data_width is None:
            pcie_data_width = info["pcie_data_width"][0]
        check_pcie_data_width(self.board, pcie_data_width)
        platform.add_extension(fpga_drive_fmc.io(self.board, ssds))
        kwargs.setdefault("uart_name", "serial")
        LiteRecorderSoC.__init__(self, platform, sys_clk_freq,
            ident           = f"LiteRecorder on {info['name']} + FPGA Drive FMC",
            n_ssds          = ssds,
            pcie_data_width = pcie_data_width,
            chunk_size      = chunk_size,
            ring_slots      = ring_size,
            **kwargs)
        self.add_constant("PCIE_BOOT_LINK_TIMEOUT_US", BOOT_LINK_TIMEOUT_US)

        # SSD2's 3.3 V: on when the carrier can link it (KC705's HPC has no lanes for it: off).
        pwr = platform.request("fpga_drive_fmc_disable_ssd2_pwr")
        self.comb += pwr.eq(int(fpga_drive_fmc.max_ssds(self.board) < 2))
        platform.add_platform_command("set_false_path -to [get_ports {{{pwr}}}]", pwr=pwr)

        # Link up / activity of each SSD on the user LEDs (2 per SSD) ------------------------------
        if with_status_leds:
            for i, phy in enumerate(self.pcie_phys):
                busy = (phy.sink.valid & phy.sink.ready) | (phy.source.valid & phy.source.ready)
                act  = ActivityLED(busy, sys_clk_freq)
                setattr(self, f"pcie{i}_activity", act)
                for j, sig in enumerate([phy.link_up, act.led]):
                    led = platform.request("user_led", 2*i + j)
                    self.comb += led.eq(sig)
                    platform.add_platform_command("set_false_path -to [get_ports {{{led}}}]", led=led)

    # Target hooks ---------------------------------------------------------------------------------
    def default_staging(self):
        return board_info(self.board)["staging"]

    def staging_ram(self):
        return board_info(self.board)["staging_ram"]

    def create_pcie_phy(self, index):
        gt_channels, pcie_site, pcie_blk_locn, quad = fpga_drive_fmc.placement(self.board, index)
        pads = self.platform.request("fpga_drive_fmc_pcie", index)
        phy  = self.root_port_phy(pads, index,
            data_width    = self.recorder_config.pcie_data_width,
            # The root port forwards memory requests within its window: the SSD's BAR0 (assigned
            # by the BIOS at PCIE_BAR_BASE + index * PCIE_PORT_STRIDE).
            mem_window    = (PCIE_BAR_BASE + index*PCIE_PORT_STRIDE, PCIE_PORT_STRIDE),
            sys_clk_freq  = self.sys_clk_freq,
            pcie_blk_locn = pcie_blk_locn,
            quad          = quad,
        )
        phy.add_placement(gt_channels, pcie_site)
        phy.add_timing_constraints(self.platform, self.crg.cd_sys.clk, self.sys_clk_freq)
        return phy

    def pcie_link(self):
        return board_info(self.board)["link"]

    def root_port_phy(self, pads, index, **kwargs):
        """-> the family's root-port PHY on ``pads``. Every board target defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define root_port_phy()")
