#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The LiteRecorder SoC, one builder for the simulation and every board.

::

    +-----------+  wishbone  +----------+   +---------------------------+
    | VexRiscv  |------------| LiteDRAM |---| DRAM PHY        (target)  |
    | BIOS +    |            +----------+   +---------------------------+
    | libliterec|                 |  native ports
    +-----------+   +-------------+--------------+----------+
         | CSRs     | DRAM pattern| root complex | recorder |<-- record stream (test pattern
         |          | engine      | + NVMe host  |  ring    |--> replay stream  or the user's)
                    +-------------+------+-------+----------+
                                         | TLPs, one port per SSD
                                  +------+----------------------+
                                  | PCIe root-port PHY (target) |
                                  +-----------------------------+

A target subclasses :class:`LiteRecorderSoC`, builds its platform and ``self.crg`` first, then calls
``LiteRecorderSoC.__init__``; it contributes only what differs between targets, through three
methods:

- ``create_sdram_phy()`` -> ``(phy, module, add_sdram kwargs)``: the DRAM PHY and its module;
- ``create_pcie_phy(index)`` -> the root-port PHY of SSD ``index`` (pins, placement, clocking);
- ``pcie_link()`` -> ``(generation, lanes)`` of each SSD link (for the bandwidth budget).

A design with its own data attaches it with one call, before the parent constructor (like its
CRG): ``ctl = self.add_recorder_stream(record=..., record_cd=..., replay=..., replay_cd=...)``
returns the hardware control port (``ControlPort``) to wire to its logic. Without it the recorder
has the test pattern source and checker only (``recstream`` CSRs; the simulation adds its simulated
ADC/DAC). ``recorder_streams()`` is the hook behind it: it returns the stream arguments of
``add_recorder``. See doc/integration.md and examples/.
"""

import os
import sys

from migen import *

from litex.gen import *

from litex.soc.integration.soc_core import SoCCore

from litedram.core.controller import ControllerSettings

from litex.soc.integration.builder import Builder

from literecorder import ROOT
from literecorder.soc.recorder import (RecorderConfig, RECORDER_SLOTS, RECORDER_STAGING_DEFAULT, add_nvme_port, add_recorder,
    dram_window)

# BIOS software ------------------------------------------------------------------------------------

#: The BIOS command library (record/replay, NVMe, PCIe, catalog, benchmark and self-test commands).
LIBLITEREC_DIR = os.path.join(ROOT, "software", "libliterec")

#: Software packages linked whole into the BIOS of every LiteRecorder SoC: (name, source directory).
BIOS_SOFTWARE = [("libliterec", LIBLITEREC_DIR)]

class LiteRecorderBuilder(Builder):
    """LiteX ``Builder`` of a LiteRecorder SoC: the BIOS it compiles carries the project's command
    library. The simulation, every board target and the tests build through it, so that no target
    can ship a BIOS without the commands. Takes the same arguments as LiteX's ``Builder``."""
    def __init__(self, soc, **kwargs):
        Builder.__init__(self, soc, **kwargs)
        for name, src_dir in BIOS_SOFTWARE:
            self.add_software_package(name, src_dir)
            self.add_software_library(name)

    def build(self, *args, **kwargs):
        # The BIOS Makefiles call `python3 -m litex...`: the interpreter running us must come first.
        os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
        return Builder.build(self, *args, **kwargs)

# Options ------------------------------------------------------------------------------------------

_SIZE_UNITS = {"": 1, "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2}

def parse_size(text):
    """Command-line size: ``131072``, ``128KiB``, ``128K``, ``1MiB`` -> bytes."""
    import re, argparse
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(text))
    if m is None or m.group(2).lower() not in _SIZE_UNITS:
        raise argparse.ArgumentTypeError(f"invalid size {text!r}: bytes, or a number with KiB or MiB")
    return int(m.group(1))*_SIZE_UNITS[m.group(2).lower()]

# Bandwidth budget ---------------------------------------------------------------------------------

MB = 1e6

# Payload data rate of one lane after line coding (bytes/s): 2.5 GT/s 8b/10b, 5 GT/s 8b/10b,
# 8 GT/s 128b/130b, 16 GT/s 128b/130b.
LANE_BYTES = {1: 2.5e9*8/10/8, 2: 5e9*8/10/8, 3: 8e9*128/130/8, 4: 16e9*128/130/8}
CPLD_OVERHEAD = 20 # Bytes on the wire per completion TLP besides its payload (framing, 3-DW header, LCRC).

LINK_MPS = 256     # The MPS of the build's budget (the BIOS uses the MPS programmed once enumerated).

def link_payload_rate(gen, lanes, mps=LINK_MPS):
    """Bytes/s an SSD can read from our DRAM over one link: the payload of completions of ``mps``
    bytes, before the DLLP/SKP share (1-3 %). Gen3 x4, MPS 256: 3653 MB/s. The BIOS computes the
    same for the links as trained (``rec_info``) from the constants of ``export_link_rates``."""
    if gen not in LANE_BYTES:
        raise ValueError(f"PCIe generation {gen!r}: allowed are {sorted(LANE_BYTES)}")
    if lanes not in (1, 2, 4, 8, 16):
        raise ValueError(f"PCIe link width x{lanes}: allowed are x1, x2, x4, x8, x16")
    return lanes*LANE_BYTES[gen]*mps/(mps + CPLD_OVERHEAD)

def export_link_rates(soc, datapath_rate):
    """The figures of ``link_payload_rate`` as BIOS constants: kB/s per lane of each generation,
    the bytes of a completion besides its payload, the budget's MPS, and the sys-domain TLP
    datapath's rate (MB/s) that caps any link."""
    for gen, rate in LANE_BYTES.items():
        soc.add_constant(f"LITEREC_LANE_KBPS_GEN{gen}", int(rate//1e3))
    soc.add_constant("LITEREC_CPLD_OVERHEAD", CPLD_OVERHEAD)
    soc.add_constant("LITEREC_LINK_MPS",      LINK_MPS)
    soc.add_constant("LITEREC_DATAPATH_MBPS", int(datapath_rate//MB))

def dram_peak_rate(sys_clk_freq, phy):
    """Bytes/s of the LiteDRAM native interface: one DFI word of every phase per sys clock cycle
    (e.g. 64-bit DDR3/DDR4 through a 1:4 PHY: 512 bits per cycle, 8 GB/s at 125 MHz)."""
    s = phy.settings
    return sys_clk_freq*s.nphases*s.dfi_databits/8

class DRAMBudget:
    """What N SSDs need against what the DRAM gives.

    Every recorded byte crosses the DRAM twice (stream -> ring, ring -> SSD) and so does every
    replayed byte: the recorder's ceiling is half the DRAM's peak rate, before refresh and
    read/write turnaround losses.
    """
    def __init__(self, dram_peak, link_rate, n_ssds):
        self.dram_peak = dram_peak
        self.ceiling   = dram_peak/2
        self.link_rate = link_rate
        self.n_ssds    = n_ssds
        self.links     = n_ssds*link_rate
        self.dram_bound = self.links > self.ceiling

    def summary(self):
        return (f"DRAM peak {self.dram_peak/MB:.0f} MB/s, recording ceiling {self.ceiling/MB:.0f} MB/s "
            f"(each byte crosses the DRAM twice); SSD links {self.n_ssds} x {self.link_rate/MB:.0f} "
            f"= {self.links/MB:.0f} MB/s")

    def bound_message(self, staging):
        """What bounds recording and replay when the links need more than the DRAM's ceiling, with
        ``staging`` bytes of on-chip chunk slots per SSD port (0: the DRAM ring alone); None when the
        links fit under the ceiling."""
        if not self.dram_bound:
            return None
        need = (f"{self.n_ssds} SSD links need {self.links/MB:.0f} MB/s, more than the DRAM's "
            f"recording ceiling of {self.ceiling/MB:.0f} MB/s (peak {self.dram_peak/MB:.0f} MB/s / 2)")
        if not staging:
            return (f"{need}: with the DRAM ring alone (no on-chip slots) recording and replay are "
                "bound by the DRAM, not by the SSDs.")
        return (f"{need}: the ring's on-chip slots ({staging//1024} KiB per SSD port) carry the "
            "streams at the links' rate and the DRAM only what the drives fall behind by, so the "
            "DRAM bounds recording and replay only when that exceeds its ceiling (measured with the "
            "board's DRAM model: doc/performance.md); with staging=0 (the DRAM ring alone) it would "
            "bound them.")

    def export(self, soc):
        soc.add_constant("LITEREC_DRAM_PEAK_MBPS",    int(self.dram_peak//MB))
        soc.add_constant("LITEREC_DRAM_CEILING_MBPS", int(self.ceiling//MB))
        soc.add_constant("LITEREC_LINK_MBPS",         int(self.link_rate//MB))
        soc.add_constant("LITEREC_LINKS_MBPS",        int(self.links//MB))

# LiteRecorder SoC ---------------------------------------------------------------------------------

class LiteRecorderSoC(SoCCore):
    recorder_user_streams = None    # add_recorder_stream()'s arguments (None: no user stream).

    """The recorder SoC: VexRiscv + BIOS + command library, LiteDRAM, one root complex and NVMe host
    per SSD, the recorder ring, the DRAM pattern engine.

    Parameters
    ----------
    platform : Platform
        The target's platform (with its extensions already added).
    sys_clk_freq : int
        System clock (Hz): the CPU, LiteDRAM's native ports and the recorder run on it.
    ident : str
        SoC identifier (printed by the BIOS).
    n_ssds : int
        SSD ports (1-8, the target may allow fewer).
    pcie_data_width : int
        Width of the TLP datapath (128, 256 or 512; the PHY must support it).
    chunk_size : int
        Default recorder chunk (bytes, power of two >= 128 KiB): one NVMe command.
    ring_slots : int
        Chunk slots of the recorder's ring in LiteDRAM at most (power of two, 2-4096; the BIOS uses
        as many as the DRAM window holds).
    staging : int
        Bytes of on-chip chunk slots per SSD port (``add_recorder(staging=...)``; None: the
        target's default, ``default_staging()``; 0: the DRAM ring alone).
    """
    def __init__(self, platform, sys_clk_freq, ident,
        n_ssds          = 1,
        pcie_data_width = 256,
        chunk_size      = 128*1024,
        ring_slots      = RECORDER_SLOTS,
        staging         = None,
        **kwargs):
        # Parameters -------------------------------------------------------------------------------
        self.recorder_config = RecorderConfig(
            sys_clk_freq    = sys_clk_freq,
            n_ssds          = n_ssds,
            pcie_data_width = pcie_data_width,
            chunk_size      = chunk_size,
        )
        if not (isinstance(ring_slots, int) and 2 <= ring_slots <= RECORDER_SLOTS and
            (ring_slots & (ring_slots - 1)) == 0):
            raise ValueError(f"ring_slots={ring_slots}: a power of two from 2 to {RECORDER_SLOTS} "
                "(chunk slots of the recorder's ring)")
        self.n_ssds     = n_ssds
        self.ring_slots = ring_slots

        # SoCCore ----------------------------------------------------------------------------------
        # The BIOS command library needs: a 256 KiB ROM (the catalog took it past 128 KiB, the exFAT
        # volumes past 192 KiB; LiteX shrinks a board's ROM to the BIOS), 32 KiB of SRAM (data, bss
        # and stack: with the exFAT code, 16 KiB left a 3.6 KiB stack, which overflowed into the
        # bss), the 64-bit uptime counter (every time it measures), main RAM in LiteDRAM (its
        # buffers are the SSDs' DMA windows).
        kwargs.setdefault("cpu_type", "vexriscv")
        kwargs["integrated_rom_size"]      = max(kwargs.get("integrated_rom_size")  or 0, 0x40000)
        kwargs["integrated_sram_size"]     = max(kwargs.get("integrated_sram_size") or 0, 0x8000)
        kwargs["timer_uptime"]             = True
        kwargs["integrated_main_ram_size"] = 0
        l2_size = kwargs.pop("l2_size", 8192)
        ident   = kwargs.pop("ident", None) or ident
        SoCCore.__init__(self, platform, clk_freq=sys_clk_freq, ident=ident, **kwargs)

        # No boot sequence: a recorder has nothing to boot, straight to the prompt.
        self.add_config("BIOS_NO_BOOT")

        # LiteDRAM ---------------------------------------------------------------------------------
        sdram_phy, module, sdram_kwargs = self.create_sdram_phy()
        self.add_sdram("sdram",
            phy           = sdram_phy,
            module        = module,
            l2_cache_size = l2_size,
            # Recording and replaying write and read the DRAM at the same rate (stream + SSD):
            # equal read/write windows of the controller (LiteDRAM's default favours reads 32/16).
            controller_settings = ControllerSettings(read_time=32, write_time=32),
            **sdram_kwargs)
        window = dram_window(self)[1]
        if 2*chunk_size > window:
            raise ValueError(f"chunk_size={chunk_size}: the recorder's ring needs 2 chunks at least "
                f"in the DRAM window ({window} bytes, the upper half of main RAM): use smaller chunks")

        # DRAM test-pattern engine (fills/checks buffers at DRAM speed) ----------------------------
        from literecorder.cores.recorder.frontend.pattern import DRAMPatternEngine
        self.drampat = DRAMPatternEngine(self.sdram.crossbar.get_port(mode="both"))
        self.drampat.add_csr()
        self.add_constant("DRAMPAT_WORD_BYTES", self.drampat.port.data_width//8)

        # PCIe root ports, one SSD each ------------------------------------------------------------
        self.pcie_phys = []
        for i in range(n_ssds):
            phy = self.create_pcie_phy(i)
            if phy.data_width != pcie_data_width:
                raise ValueError(f"pcie{i}: the PHY's datapath is {phy.data_width} bits, the SoC's "
                    f"{pcie_data_width}")
            setattr(self, f"pcie{i}_phy", phy)
            self.pcie_phys.append(phy)
            add_nvme_port(self, i, phy)

        # Recorder datapath: LiteDRAM ring between the record/replay streams and the SSDs ----------
        if staging is None:
            staging = self.default_staging()
        self.staging = staging
        add_recorder(self, n_ports=n_ssds, slots=ring_slots, staging=staging, chunk_size=chunk_size,
            staging_ram=self.staging_ram(), **self.recorder_streams())

        # Configuration and bandwidth budget exported to the BIOS (rec_info) -----------------------
        self.recorder_config.export(self)
        gen, lanes = self.pcie_link()
        datapath_rate = pcie_data_width/8*sys_clk_freq
        self.dram_budget = budget = DRAMBudget(
            dram_peak = dram_peak_rate(sys_clk_freq, sdram_phy),
            # The SSD's reads cross the sys-domain TLP datapath too: the lower of the two.
            link_rate = min(link_payload_rate(gen, lanes), datapath_rate),
            n_ssds    = n_ssds)
        budget.export(self)
        export_link_rates(self, datapath_rate)
        self.add_constant("LITEREC_LINK_GEN",   gen)
        self.add_constant("LITEREC_LINK_WIDTH", lanes)
        self.logger.info(budget.summary())
        if budget.dram_bound:
            self.logger.warning(budget.bound_message(staging))

    # Target hooks ---------------------------------------------------------------------------------
    def default_staging(self):
        """Bytes of on-chip chunk slots per SSD port when the target is not told."""
        return RECORDER_STAGING_DEFAULT

    def staging_ram(self):
        """Memory of the on-chip slots: "block" or "ultra"."""
        return "block"

    def create_sdram_phy(self):
        """-> (phy, module, extra ``add_sdram`` kwargs). Every target defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define create_sdram_phy()")

    def create_pcie_phy(self, index):
        """-> the root-port PHY of SSD ``index``. Every target defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define create_pcie_phy(index)")

    def pcie_link(self):
        """-> (generation, lanes) of each SSD link."""
        raise NotImplementedError(f"{type(self).__name__} must define pcie_link()")

    def recorder_streams(self):
        """-> the stream arguments of ``add_recorder`` (``record``, ``record_cd``, ``replay``,
        ``replay_cd``, ``control_cd``, ``with_test_streams``, ``control``); by default those given to
        ``add_recorder_stream``, or ``{}``: the test pattern source and checker only. Called once
        the DRAM and the SSD ports exist."""
        return dict(self.recorder_user_streams or {})

    # User streams ---------------------------------------------------------------------------------
    def add_recorder_stream(self, record=None, record_cd="sys", replay=None, replay_cd="sys",
        control_cd=None, with_test_streams=True):
        """Attaches the user's streams to the recorder; call it in the design's ``__init__`` before
        ``LiteRecorderSoC.__init__`` (which builds the recorder), like the CRG.

        ``record``: the stream to record (a source, ``stream.Endpoint`` with ``data`` (+ ``keep``) or
        an ``AXIStreamInterface``) in clock domain ``record_cd``; ``replay``: where replayed data goes
        (a sink) in ``replay_cd``; ``control_cd``: the control port's domain (default
        ``record_cd``); ``with_test_streams``: keep the test pattern source/checker beside them.
        Returns the hardware control port (``soc.recorder_ctl``): ``start``/``stop``/``abort``/
        ``trigger`` in, ``busy``/``running``/``recording``/``replaying``/``armed``/``refused``/
        ``overflow``/``error`` out, in ``control_cd``."""
        from literecorder.cores.recorder.frontend.stream import ControlPort
        if hasattr(self, "recorder"):
            raise ValueError("add_recorder_stream: the recorder is built already: call it before "
                "LiteRecorderSoC.__init__ (in your __init__, like the CRG)")
        if self.recorder_user_streams is not None:
            raise ValueError("add_recorder_stream: called twice (one record and one replay stream)")
        if record is None and replay is None:
            raise ValueError("add_recorder_stream: give record= and/or replay=")
        ctl = ControlPort(control_cd or (record_cd if record is not None else replay_cd))
        self.recorder_ctl = ctl
        self.recorder_user_streams = dict(record=record, record_cd=record_cd, replay=replay,
            replay_cd=replay_cd, with_test_streams=with_test_streams, control=ctl)
        return ctl

