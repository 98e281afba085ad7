#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteRecorder SoC for the full-system Verilator simulation: the recorder SoC of
``soc/recorder_soc.py`` with the simulation's clock, DRAM PHY model and TLP ports.

    +-----------+   wishbone   +----------+        +----------------+
    | VexRiscv  |--------------| LiteDRAM |--------| SDRAM PHY model|  (DDR3/DDR4, 64-bit)
    | + BIOS    |              +----------+        +----------------+
    +-----------+
         |   CSRs
    +-----------+   TLPs   +----------------------------+
    | recorder  |----------| simulated SSD (C module)   |  one port per SSD
    +-----------+          +----------------------------+

The declared ``sys_clk_freq`` is the modeled hardware clock: the BIOS's timer and every figure it
prints count cycles of this clock.

``dram``: ``"sim"`` (default) is a 64-bit DDR3 model (MT41K128M16 chips) at the simulation's clock;
a board name (``"kc705"``, ``"kcu105"``, ``"zcu106"``) models that board's DRAM: its module, width
and memory type through the same 1:4 PHY at the board's system clock (which the simulation then
runs at), so the DRAM bandwidth, and what the recorder reaches with several SSDs, are the board's.
"""

import math

from migen import *
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.gen import *

from litex.build.generic_platform import Pins
from litex.build.io import CRG

from litedram import modules as litedram_modules
from litedram.phy.model import SDRAMPHYModel, sdram_module_nphases

from literecorder.soc.sim_platform import LiteRecorderSimPlatform, _simio
from literecorder.soc.recorder_soc import LiteRecorderSoC
from literecorder.soc.recorder import RECORDER_SLOTS
from literecorder.soc.boards import BOARDS, board

SIM_DRAM = dict(memtype="DDR3", module="MT41K128M16", data_width=64, size=None,
    desc="DDR3 model, 4 x MT41K128M16, 64-bit")

# The model's memory is allocated whole by Verilator: modules larger than this keep their timings,
# banks and columns (what the bandwidth depends on) but fewer rows.
SIM_DRAM_MAX_BYTES = 1 << 30

# Clocks -------------------------------------------------------------------------------------------

ADC_CLK_FREQ = int(100e6)   # Clock domain "adc" of the simulated user streams (ADC/DAC).

# LiteX's simulation steps time by the greatest common divisor of every clock's half period: a
# clock whose half period shares little with sys_clk's makes every modeled cycle cost many steps
# (150 MHz beside 200 MHz: 1 ps steps, about 2500 times slower). At most this many steps per half
# period of sys_clk are allowed.
SIM_MAX_STEPS_PER_SYS_HALF = 10

def _half_period_ps(freq):
    half = 1e12/freq/2
    return int(half) if half == int(half) else None

def sim_clock_error(name, freq, sys_clk_freq, others=()):
    """Why the simulation cannot run clock ``name`` at ``freq`` Hz at speed beside sys_clk and the
    clocks ``others`` (frequencies), with the nearest frequencies it can: a message, or None."""
    halves = [_half_period_ps(f) for f in (sys_clk_freq, *others)]
    def steps(f):
        h = _half_period_ps(f)
        if h is None:
            return None
        return halves[0]//math.gcd(h, *halves)
    n = steps(freq)
    if n is not None and n <= SIM_MAX_STEPS_PER_SYS_HALF:
        return None
    # A half period of whole picoseconds: 1e12/(2f) an integer, i.e. f (Hz) a divisor of 5e11 =
    # 2^11 * 5^12. Every such frequency up to 1 GHz is a candidate (62.5 MHz too, not whole MHz only).
    candidates = sorted(2**a*5**b for a in range(12) for b in range(13) if 2**a*5**b <= 1e9)
    good = [f for f in candidates if (steps(f) or 1e9) <= SIM_MAX_STEPS_PER_SYS_HALF]
    below = max((f for f in good if f < freq), default=None)
    above = min((f for f in good if f > freq), default=None)
    near  = " or ".join(f"{f/1e6:g} MHz" for f in (below, above) if f is not None)
    why = ("its half period is not a whole number of picoseconds" if n is None else
        f"the simulation would step {n} times per half period of the {sys_clk_freq/1e6:g} MHz sys_clk "
        f"(about {n}x slower; at most {SIM_MAX_STEPS_PER_SYS_HALF} keep it at speed)")
    return f"simulation clock {name!r} at {freq/1e6:g} MHz: {why}; nearest good frequencies: {near}"

def dram_choices():
    return ["sim"] + sorted(BOARDS)

def sim_dram(dram, sys_clk_freq):
    """(settings dict, sys_clk_freq) of a ``--dram`` choice; a board imposes its system clock."""
    if dram == "sim":
        return SIM_DRAM, sys_clk_freq
    if dram not in BOARDS:
        raise ValueError(f"--dram {dram}: allowed are {', '.join(dram_choices())}")
    b = board(dram)
    if sys_clk_freq is not None and int(sys_clk_freq) != int(b["sys_clk_freq"]):
        raise ValueError(f"--dram {dram} models the {b['name']}'s DRAM through a 1:4 PHY at its system "
            f"clock of {b['sys_clk_freq']/1e6:g} MHz (1000 MT/s); --sys-clk-freq "
            f"{sys_clk_freq/1e6:g} MHz contradicts it (leave it out)")
    return b["dram"], b["sys_clk_freq"]

def _model_module(name, sys_clk_freq, data_width):
    cls   = getattr(litedram_modules, name)
    size  = cls.nbanks*cls.nrows*cls.ncols*data_width//8   # One data_width word per column.
    if size > SIM_DRAM_MAX_BYTES:
        cls = type(name + "Sim", (cls,), dict(nrows=cls.nrows*SIM_DRAM_MAX_BYTES//size))
    rate = "1:{}".format(sdram_module_nphases[cls.memtype])
    return cls(sys_clk_freq, rate)

# Simulation SoC -----------------------------------------------------------------------------------

class LiteRecorderSimSoC(LiteRecorderSoC):
    def __init__(self,
        sys_clk_freq     = int(200e6),
        dram             = "sim",
        n_ssds           = 1,
        pcie_data_width  = 256,
        chunk_size       = 128*1024,
        ring_slots       = RECORDER_SLOTS,
        link             = (3, 4),
        input_width      = 256,
        with_test_streams = True,
        **kwargs):
        self.dram_settings, sys_clk_freq = sim_dram(dram, sys_clk_freq)
        self.dram_name         = dram
        self.sim_clocks        = {}     # Clock domains of the simulation's own clockers: {name: Hz}.
        self.link              = link
        self.input_width       = input_width
        self.with_test_streams = with_test_streams
        if not (1 <= n_ssds <= 8):
            raise ValueError(f"n_ssds={n_ssds}: between 1 and 8 SSDs are supported")

        # Platform / CRG ---------------------------------------------------------------------------
        platform = LiteRecorderSimPlatform(n_pcie_ports=n_ssds, pcie_data_width=pcie_data_width)
        self.crg = CRG(platform.request("sys_clk"))

        # Recorder SoC -----------------------------------------------------------------------------
        kwargs.setdefault("uart_name", "sim")
        LiteRecorderSoC.__init__(self, platform, sys_clk_freq,
            ident           = "LiteRecorder simulation",
            n_ssds          = n_ssds,
            pcie_data_width = pcie_data_width,
            chunk_size      = chunk_size,
            ring_slots      = ring_slots,
            **kwargs)

        # Short BIOS memtest: the simulated DRAM is large, the boot must stay fast.
        self.add_constant("MEMTEST_DATA_SIZE", 8*1024)
        self.add_constant("MEMTEST_ADDR_SIZE", 8*1024)
        self.add_config("BIOS_NO_CRC")

        # Simulation debug (finish / trace control from the BIOS) ----------------------------------
        platform.add_debug(self, reset=0)

        # The simulated ADC produces while the recorder records (not during a replay; unless a subclass gave its own streams).
        if hasattr(self, "simio"):
            self.comb += self.simio.run.eq(self.recorder_ctl.recording)

    def default_staging(self):
        # A board's DRAM model comes with the board's on-chip slots.
        if self.dram_name in BOARDS:
            return board(self.dram_name)["staging"]
        return LiteRecorderSoC.default_staging(self)

    def init_rom(self, name, contents=[], auto_size=True):
        # The ROM keeps its declared size (LiteX shrinks it to the BIOS by default): a BIOS change
        # then leaves the Verilog unchanged and needs no new Verilator build.
        LiteRecorderSoC.init_rom(self, name, contents, auto_size=False)

    # Clocks ---------------------------------------------------------------------------------------
    def add_sim_clock(self, name, freq):
        """A clock domain ``name`` at ``freq`` Hz of its own (a clocker of the simulation, its reset
        from sys): the clock of a user stream, as a board's PLL output would be. Refused (ValueError
        with the nearest good frequencies) when the simulation could not keep it at speed.
        Returns the ClockDomain (also ``self.cd_<name>``)."""
        if name in self.sim_clocks or name == "sys":
            raise ValueError(f"add_sim_clock: clock domain {name!r} exists already")
        err = sim_clock_error(name, freq, self.sys_clk_freq, self.sim_clocks.values())
        if err:
            raise ValueError(err)
        self.platform.add_extension([(f"{name}_clk", 0, Pins(1))])
        cd = ClockDomain(name)
        setattr(self, f"cd_{name}", cd)
        self.comb += cd.clk.eq(self.platform.request(f"{name}_clk"))
        self.specials += AsyncResetSynchronizer(cd, ResetSignal("sys"))
        self.sim_clocks[name] = int(freq)
        return cd

    # Target hooks ---------------------------------------------------------------------------------
    def create_sdram_phy(self):
        d = self.dram_settings
        module = _model_module(d["module"], self.sys_clk_freq, d["data_width"])
        # LiteDRAM's PHY model as it is: the platform writes its banks' byte-enable ports as one
        # masked word write per cycle (sim_platform.py), no faster bank model needed.
        self.sdrphy = SDRAMPHYModel(
            module     = module,
            data_width = d["data_width"],
            clk_freq   = self.sys_clk_freq)
        # The L2 cache's data memory stays one memory with byte enables (an FPGA build splits it in
        # 64 byte-wide memories for the vendor tool): Verilator evaluates one port instead of 64.
        return self.sdrphy, module, dict(l2_cache_full_memory_we=False)

    def create_pcie_phy(self, index):
        from literecorder.cores.pcie.sim_phy import SimRootPortPHY
        return SimRootPortPHY(self.platform.request("pcie", index),
            data_width=self.recorder_config.pcie_data_width)

    def pcie_link(self):
        # The simulated SSD's link is a run-time option (--link); the budget assumes its default.
        return self.link

    def recorder_streams(self):
        # A user's streams (add_recorder_stream) replace the simulated ADC/DAC.
        if self.recorder_user_streams is not None:
            return LiteRecorderSoC.recorder_streams(self)
        # Simulated user streams (ADC records, DAC replays) in their own clock domain, besides the
        # test pattern source/checker (unless with_test_streams=False).
        from literecorder.soc.sim_io import SimStreamFixture
        self.add_sim_clock("adc", ADC_CLK_FREQ)
        self.platform.add_extension([_simio])
        self.simio = SimStreamFixture(self.platform.request("simio"), self.input_width, cd="adc")
        return dict(
            record = self.simio.adc.source, record_cd = "adc",
            replay = self.simio.dac.sink,   replay_cd = "adc",
            with_test_streams = self.with_test_streams)
