#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteRecorder SoC for the full-system Verilator simulation.

    +-----------+   wishbone   +----------+        +----------------+
    | VexRiscv  |--------------| LiteDRAM |--------| SDRAM PHY model|  (DDR3, 64-bit)
    | + BIOS    |              +----------+        +----------------+
    +-----------+
         |   CSRs
    +-----------+   TLPs   +----------------------------+
    | recorder  |----------| simulated SSD (C module)   |  one port per SSD
    +-----------+          +----------------------------+

The declared ``sys_clk_freq`` is the modeled hardware clock: the BIOS's timer and every figure it
prints count cycles of this clock.
"""

from migen import *

from litex.gen import *

from litex.soc.integration.soc_core import SoCCore
from litex.build.io import CRG

from litedram import modules as litedram_modules
from litedram.phy.model import sdram_module_nphases
from litedram.core.controller import ControllerSettings

from literecorder.soc.sim_platform import LiteRecorderSimPlatform
from literecorder.soc.recorder import RecorderConfig
from literecorder.soc.sim_dram import FastSDRAMPHYModel

# Simulation SoC -----------------------------------------------------------------------------------

class LiteRecorderSimSoC(SoCCore):
    def __init__(self,
        sys_clk_freq     = int(200e6),
        sdram_module     = "MT41K128M16",
        sdram_data_width = 64,
        n_ssds           = 1,
        pcie_data_width  = 256,
        chunk_size       = 128*1024,
        input_width      = 256,
        with_test_streams = True,
        **kwargs):
        # Parameters -------------------------------------------------------------------------------
        if not (1 <= n_ssds <= 8):
            raise ValueError(f"n_ssds={n_ssds}: between 1 and 8 SSDs are supported")
        self.recorder_config = RecorderConfig(
            sys_clk_freq    = sys_clk_freq,
            n_ssds          = n_ssds,
            pcie_data_width = pcie_data_width,
            chunk_size      = chunk_size,
        )

        # Platform / CRG ---------------------------------------------------------------------------
        platform = LiteRecorderSimPlatform(n_pcie_ports=n_ssds, pcie_data_width=pcie_data_width)
        self.crg = CRG(platform.request("sys_clk"))

        # SoCCore ----------------------------------------------------------------------------------
        kwargs.setdefault("cpu_type",             "vexriscv")
        kwargs.setdefault("uart_name",            "sim")
        # 192 KiB: the BIOS with the command library (the catalog took it past 128 KiB).
        kwargs.setdefault("integrated_rom_size",  0x30000)
        kwargs.setdefault("integrated_sram_size", 0x4000)
        kwargs.setdefault("timer_uptime",         True)
        SoCCore.__init__(self, platform, clk_freq=sys_clk_freq,
            ident                    = "LiteRecorder simulation",
            integrated_main_ram_size = 0,
            **kwargs)

        # LiteDRAM with the SDRAM PHY model (board-like DDR3, 64-bit) ------------------------------
        module_cls  = getattr(litedram_modules, sdram_module)
        sdram_rate  = "1:{}".format(sdram_module_nphases[module_cls.memtype])
        module      = module_cls(sys_clk_freq, sdram_rate)
        self.sdrphy = FastSDRAMPHYModel(
            module     = module,
            data_width = sdram_data_width,
            clk_freq   = sys_clk_freq)
        self.add_sdram("sdram",
            phy           = self.sdrphy,
            module        = module,
            l2_cache_size = 8192,
            # Recording and replaying write and read the DRAM at the same rate (stream + SSD):
            # equal read/write windows of the controller (LiteDRAM's default favours reads 32/16).
            controller_settings = ControllerSettings(read_time=32, write_time=32))
        # Short BIOS memtest: the simulated DRAM is large, the boot must stay fast.
        self.add_constant("MEMTEST_DATA_SIZE", 8*1024)
        self.add_constant("MEMTEST_ADDR_SIZE", 8*1024)

        # No boot sequence (serialboot waits seconds of modeled time): straight to the prompt.
        self.add_config("BIOS_NO_BOOT")
        self.add_config("BIOS_NO_CRC")

        # DRAM test-pattern engine (fills/checks buffers at DRAM speed) ------------------------------
        from literecorder.cores.recorder.pattern import DRAMPatternEngine
        self.drampat = DRAMPatternEngine(
            wr_port = self.sdram.crossbar.get_port(mode="write"),
            rd_port = self.sdram.crossbar.get_port(mode="read"))
        self.drampat.add_csr()
        self.add_constant("DRAMPAT_WORD_BYTES", self.drampat.writer.port.data_width//8)

        # Simulation debug (finish / trace control from the BIOS) ----------------------------------
        platform.add_debug(self, reset=0)

        # PCIe root ports, one simulated SSD each ----------------------------------------------------
        from literecorder.cores.pcie.sim_phy import SimRootPortPHY
        from literecorder.soc.recorder import add_nvme_port
        for i in range(n_ssds):
            phy = SimRootPortPHY(platform.request("pcie", i), data_width=pcie_data_width)
            setattr(self, f"pcie{i}_phy", phy)
            add_nvme_port(self, i, phy)

        # Simulated user streams (ADC records, DAC replays) in their own clock domain ----------------
        from migen.genlib.resetsync import AsyncResetSynchronizer
        from literecorder.soc.sim_io import SimStreamFixture
        self.cd_adc = ClockDomain()
        self.comb += self.cd_adc.clk.eq(platform.request("adc_clk"))
        self.specials += AsyncResetSynchronizer(self.cd_adc, ResetSignal("sys"))
        self.simio = SimStreamFixture(platform.request("simio"), input_width, cd="adc")

        # Recorder datapath: LiteDRAM ring between the streams (test + user) and the SSDs ----------
        from literecorder.soc.recorder import add_recorder
        add_recorder(self, n_ports=n_ssds,
            record = self.simio.adc.source, record_cd = "adc",
            replay = self.simio.dac.sink,   replay_cd = "adc",
            with_test_streams = with_test_streams)
        self.comb += self.simio.run.eq(self.recorder_ctl.running)

        # Recorder configuration exported to the BIOS ----------------------------------------------
        self.recorder_config.export(self)

    def init_rom(self, name, contents=[], auto_size=True):
        # The ROM keeps its declared size (LiteX shrinks it to the BIOS by default): a BIOS change
        # then leaves the Verilog unchanged and needs no new Verilator build.
        SoCCore.init_rom(self, name, contents, auto_size=False)
