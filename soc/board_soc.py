#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The recorder SoC on a board with the Opsero FPGA Drive FMC Gen4.

What every board target shares beyond ``LiteRecorderSoC``: the adapter's pins, one root port per
M.2 socket placed on the transceivers and PCIe block its lanes reach (``soc/fpga_drive_fmc.py``),
the timing constraints of each root port's clock-domain crossings, the adapter's SSD2 power switch,
link-up/activity on the carrier's user LEDs, the BIOS's boot-time link timeout, the Vivado version
the build script is pinned to (``soc/vivado.py``) and the user's stream clock
(``add_user_clock``). A target adds its CRG, its DRAM PHY (``create_sdram_phy``) and its root-port
PHY class (``root_port_phy``).
"""

from migen import *

from litex.gen import *

from literecorder.soc.recorder_soc import LiteRecorderSoC
from literecorder.soc.recorder import PCIE_BAR_BASE, PCIE_PORT_STRIDE, RECORDER_SLOTS
from literecorder.soc import fpga_drive_fmc, vivado
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

#: How far a user clock may be from the frequency asked (relative): 100 ppm, twice a usual crystal
#: oscillator's tolerance. ``add_user_clock(tolerance=...)`` takes another.
USER_CLOCK_TOLERANCE = 100e-6

class LiteRecorderBoardSoC(LiteRecorderSoC):
    """``LiteRecorderSoC`` on ``board`` (a key of ``soc.boards.BOARDS``) with the FPGA Drive FMC.

    The target builds ``platform`` and ``self.crg`` first and defines ``create_sdram_phy()`` and
    ``root_port_phy(pads, index, **placement)``.
    """
    board = None

    def __init__(self, platform, sys_clk_freq, ssds=1, pcie_data_width=None,
        chunk_size=128*1024, ring_size=RECORDER_SLOTS, with_status_leds=True,
        vivado_version=vivado.VIVADO_VERSION, **kwargs):
        info = board_info(self.board)
        self.vivado_version = vivado.setup(platform, vivado_version)
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
            # The card inverts its PERST pins (fpga_drive_fmc.PERST_ACTIVE_HIGH).
            perst_active_high = fpga_drive_fmc.PERST_ACTIVE_HIGH,
        )
        phy.add_placement(gt_channels, pcie_site)
        phy.add_timing_constraints(self.platform, self.crg.cd_sys.clk, self.sys_clk_freq)
        return phy

    def pcie_link(self):
        return board_info(self.board)["link"]

    # User clock -----------------------------------------------------------------------------------
    def add_user_clock(self, name="user", freq=None, tolerance=USER_CLOCK_TOLERANCE):
        """Clock domain ``name`` at ``freq`` Hz for the user's stream (``self.cd_<name>``, its reset
        held until its MMCM is locked), with the user <-> sys crossing constrained.

        The clock comes from the SoC's MMCM when that can make ``freq`` within ``tolerance`` beside
        its other outputs, else from an MMCM of its own fed by the board's input clock (through a
        BUFG), configured for the frequency nearest to ``freq`` the primitive can make
        (``soc/clocking.py``). Refused (ValueError with the frequency asked, the nearest made and the
        tolerance) when that is further than ``tolerance`` (relative; ``USER_CLOCK_TOLERANCE``,
        100 ppm). The crossing between the user and sys clocks (the recorder's stream and control
        ports: asynchronous FIFOs and ``MultiReg``) gets a ``set_max_delay -datapath_only`` of one
        destination period each way, in the build script's LATE XDC (``soc/vivado.py``). Returns the
        ClockDomain; ``self.user_clocks[name]`` says where it comes from and, once the SoC is
        finalized, the frequency it has."""
        from literecorder.soc import clocking
        if not (isinstance(freq, (int, float)) and freq > 0):
            raise ValueError(f"add_user_clock: freq must be a frequency in Hz, not {freq!r}.")
        if not (0 < tolerance < 0.1):
            raise ValueError(f"add_user_clock: tolerance must be a relative deviation between 0 and "
                f"0.1 (e.g. 100e-6 for 100 ppm), not {tolerance!r}.")
        if name == "sys" or hasattr(self, f"cd_{name}"):
            raise ValueError(f"add_user_clock: clock domain {name!r} exists already.")
        pll    = self.crg.pll
        others = [(f, m) for _, (_, f, _, m) in sorted(pll.clkouts.items())]
        ppm    = lambda f: abs(f - freq)/freq*1e6
        shared, _ = (None, None)
        if len(others) < pll.nclkouts_max:
            shared, _ = clocking.achievable(pll, freq, others)
        cd = ClockDomain(name)
        if shared is not None and ppm(shared) <= tolerance*1e6:
            clock = dict(source=f"the SoC's {type(pll).__name__}", mmcm=pll, output=len(others))
            pll.create_clkout(cd, freq, margin=tolerance)
        else:
            own = clocking.exact_mmcm(pll)
            own.clkin_freq = pll.clkin_freq
            achieved, _ = clocking.achievable(own, freq, exact=True, pfd=True)
            if achieved is None or ppm(achieved) > tolerance*1e6:
                nearest = (f"{achieved/1e6:.6f} MHz ({ppm(achieved):.0f} ppm off)" if achieved else
                    "no frequency near it")
                beside = (f"; the SoC's {type(pll).__name__} beside its outputs of "
                    f"{', '.join(f'{f/1e6:g}' for f, _ in others)} MHz: {shared/1e6:.6f} MHz "
                    f"({ppm(shared):.0f} ppm off)" if shared is not None else "")
                raise ValueError(f"add_user_clock({name!r}, {freq/1e6:g} MHz): the nearest frequency "
                    f"an MMCM of its own makes from the board's {pll.clkin_freq/1e6:g} MHz input is "
                    f"{nearest}{beside}; the tolerance is {tolerance*1e6:g} ppm. Ask for a frequency "
                    f"the board can make, or pass a larger tolerance= if that deviation is acceptable.")
            clkin = Signal()
            self.specials += Instance("BUFG", i_I=pll.clkin, o_O=clkin)
            own.register_clkin(clkin, pll.clkin_freq)
            own.create_clkout(cd, freq, margin=tolerance)
            setattr(self, f"{name}_mmcm", own)
            clock = dict(source=f"an MMCM of its own ({type(own).__name__}, from the board's "
                f"{pll.clkin_freq/1e6:g} MHz input)", mmcm=own, output=0)
        setattr(self, f"cd_{name}", cd)
        clock.update(freq=freq, tolerance=tolerance, achieved=None)
        self.user_clocks = getattr(self, "user_clocks", {})
        self.user_clocks[name] = clock
        vivado.add_clock_crossing(self.platform, cd.clk, freq, self.crg.cd_sys.clk, self.sys_clk_freq)
        return cd

    def do_finalize(self):
        LiteRecorderSoC.do_finalize(self)
        # The frequency each user clock has: the configuration of its MMCM, now that its outputs are
        # final (within the tolerance: the output's margin).
        for name, c in getattr(self, "user_clocks", {}).items():
            c["achieved"] = c["mmcm"].compute_config()[f"clkout{c['output']}_freq"]
            dev = abs(c["achieved"] - c["freq"])/c["freq"]
            self.logger.info(f"User clock {name!r}: {c['achieved']/1e6:.6f} MHz for {c['freq']/1e6:g} "
                f"MHz ({dev*1e6:.1f} ppm, tolerance {c['tolerance']*1e6:g} ppm) from {c['source']}.")

    def root_port_phy(self, pads, index, **kwargs):
        """-> the family's root-port PHY on ``pads``. Every board target defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define root_port_phy()")
