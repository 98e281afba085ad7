#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The CPU-less recorder (bring-up variant (b) of issue 41, doc/core.md): the root complexes, NVMe
queue engines and recorder of the LiteX SoC, with an RTL bring-up sequencer per SSD port instead of
the VexRiscv BIOS, and recording/replay started by registers.

::

    register bus master (the user's; here   +----------+
    a byte-stream bridge, sim only) --------| CSRs     |  bringup<N>: control, status, error code/step
                                            +----------+  job: record/replay by registers
                                                 |        recorder, recstream: status, test streams
    +-----------------+  +-------------+  +------+---------------------------------------+
    | LiteDRAM        |--| recorder    |--| per SSD: NVMe queue engine <- NVMeBringUp     |
    | (ring, windows) |  | (RecorderJob)|  |          root complex (requester, completer)  |
    +-----------------+  +-------------+  +------+---------------------------------------+
                                                 | TLPs
                                            root-port PHY (target)

Per port: no CPU request path and no benchmark generator (the engine's request source is the
recorder for good), no on-chip RAM window for a CPU (the sequencer's admin window has no memory).
The register bus is whatever master the design gives the SoC: the simulation's is LiteX's
``Stream2Wishbone`` (the UARTBone protocol) on the simulated serial port, reached over TCP by
LiteX's ``CommUART`` (targets/coreless_sim.py); the packaged core will give an AXI4-Lite slave.
"""

from migen import *

from litex.gen import *

from litex.soc.integration.soc_core import SoCCore

from litedram.core.controller import ControllerSettings

from literecorder.soc.recorder import (RecorderConfig, RECORDER_SLOTS, RECORDER_BUFFER_DEFAULT,
    RECORDER_STAGING_DEFAULT, PCIE_SRAM_BASE, PCIE_PORT_STRIDE, PCIE_BAR_BASE, NVME_QUEUE_BASE, NVME_ENTRIES,
    add_recorder, dram_window)

# Queue entries of each engine: the LiteX SoC's (QD up to 511; the recorder keeps 32 per SSD). Its
# queue memories are block RAM; at 64 entries they would fall into LUTRAM and cost more logic
# (doc/core.md, Size).

# Integration --------------------------------------------------------------------------------------

def add_coreless_nvme_port(soc, index, phy, sys_clk_freq, entries=NVME_ENTRIES, autostart=True):
    """A root port ``index`` brought up in RTL: the root complex on ``phy`` (``pcie<index>``), its
    DRAM window, the NVMe queue engine (``nvme<index>``: ``NVMeHost`` without the benchmark, its
    request source the recorder for good) and its bring-up sequencer (``bringup<index>``, with
    CSRs). The admin window takes the place of the LiteX SoC's on-chip RAM window
    (``PCIE_SRAM_BASE`` + port x ``PCIE_PORT_STRIDE``); BAR0 is assigned at ``PCIE_BAR_BASE`` + port
    x ``PCIE_PORT_STRIDE``, the engine's windows at ``NVME_QUEUE_BASE`` + port x span (the LiteX
    SoC's address map)."""
    from literecorder.cores.pcie.core import RCRootComplex
    from literecorder.cores.pcie.windows import DRAMWindow
    from literecorder.cores.nvme.core import NVMeHost, SRC_EXT
    from literecorder.cores.nvme.common import NVME_WINDOWS_SPAN
    from literecorder.cores.nvme.bringup import NVMeBringUp

    if not hasattr(soc, "sdram"):
        soc.logger.error("add_coreless_nvme_port needs LiteDRAM (add_sdram first): data buffers live in DRAM.")
        raise ValueError("add_coreless_nvme_port: no LiteDRAM in the SoC")
    if not (0 <= index < 8):
        raise ValueError(f"add_coreless_nvme_port: index {index}: ports 0..7 are allowed")
    if hasattr(soc, f"pcie{index}"):
        raise ValueError(f"add_coreless_nvme_port: port {index} exists already")

    rc = RCRootComplex(phy)
    setattr(soc, f"pcie{index}", rc)
    offset, size = dram_window(soc)
    main_ram_base = soc.bus.regions["main_ram"].origin
    dram = DRAMWindow(rc.add_window("dram", main_ram_base + offset, size),
        port=soc.sdram.crossbar.get_port(), dram_offset=offset)
    setattr(soc, f"nvme{index}_dram", dram)
    nvme = NVMeHost(rc, NVME_QUEUE_BASE + index*NVME_WINDOWS_SPAN, entries=entries, with_bench=False)
    soc.comb += nvme.select.eq(SRC_EXT)
    setattr(soc, f"nvme{index}", nvme)
    bringup = NVMeBringUp(rc, nvme.engine, sys_clk_freq,
        admin_base = PCIE_SRAM_BASE + index*PCIE_PORT_STRIDE,
        bar_base   = PCIE_BAR_BASE + index*PCIE_PORT_STRIDE,
        bar_size   = PCIE_PORT_STRIDE,
        autostart  = autostart)
    bringup.add_csr()
    setattr(soc, f"bringup{index}", bringup)
    return bringup

def add_coreless_recorder(soc, bringups, slots=RECORDER_SLOTS, staging=RECORDER_STAGING_DEFAULT,
    chunk_size=128*1024):
    """The recorder (``add_recorder``: test pattern source and checker, on-chip slots, the DRAM ring)
    with its jobs started by registers (``job``: ``RecorderJob``); a bring-up ``start`` is refused
    while the recorder runs."""
    from literecorder.cores.recorder.job import RecorderJob
    rec = add_recorder(soc, n_ports=len(bringups), slots=slots, staging=staging, chunk_size=chunk_size,
        with_job_csr=False)
    job = RecorderJob(rec, bringups, dram_slots=slots, window_bytes=dram_window(soc)[1],
        buffer_bytes=RECORDER_BUFFER_DEFAULT, staging_bytes=staging, staging_slots=rec.staging_slots)
    job.add_csr()
    soc.job = job
    for b in bringups:
        soc.comb += b.hold.eq(rec.busy)
    return job

# CPU-less SoC -------------------------------------------------------------------------------------

class LiteRecorderCorelessSoC(SoCCore):
    """LiteDRAM, one root complex + NVMe queue engine + bring-up sequencer per SSD, the recorder with
    register-driven jobs; no CPU, no BIOS. Like ``LiteRecorderSoC``, a target builds its platform and
    ``self.crg`` and defines ``create_sdram_phy()``, ``create_pcie_phy(index)`` and
    ``add_register_master()`` (the master of the register bus).

    Parameters
    ----------
    platform, sys_clk_freq, ident :
        As ``LiteRecorderSoC``.
    n_ssds, pcie_data_width, chunk_size, ring_slots, staging :
        As ``LiteRecorderSoC`` (``chunk_size``: the on-chip slots' unit; a job chooses its chunk).
    nvme_entries : int
        Queue entries of each engine (``NVME_ENTRIES``: QD up to 511).
    """
    def __init__(self, platform, sys_clk_freq, ident, n_ssds=1, pcie_data_width=256, chunk_size=128*1024,
        ring_slots=RECORDER_SLOTS, staging=RECORDER_STAGING_DEFAULT, nvme_entries=NVME_ENTRIES,
        **kwargs):
        self.recorder_config = RecorderConfig(sys_clk_freq, n_ssds, pcie_data_width, chunk_size)
        if not (isinstance(ring_slots, int) and 2 <= ring_slots <= RECORDER_SLOTS and
            (ring_slots & (ring_slots - 1)) == 0):
            raise ValueError(f"ring_slots={ring_slots}: a power of two from 2 to {RECORDER_SLOTS} "
                "(chunk slots of the recorder's ring)")
        self.n_ssds = n_ssds
        kwargs.update(cpu_type=None, with_uart=False, with_timer=False, integrated_rom_size=0,
            integrated_sram_size=0, integrated_main_ram_size=0)
        SoCCore.__init__(self, platform, clk_freq=sys_clk_freq, ident=ident, **kwargs)
        self.add_register_master()

        sdram_phy, module, sdram_kwargs = self.create_sdram_phy()
        self.add_sdram("sdram", phy=sdram_phy, module=module, l2_cache_size=0,
            controller_settings=ControllerSettings(read_time=32, write_time=32), **sdram_kwargs)
        window = dram_window(self)[1]
        if 2*chunk_size > window:
            raise ValueError(f"chunk_size={chunk_size}: the recorder's ring needs 2 chunks at least "
                f"in the DRAM window ({window} bytes, the upper half of main RAM): use smaller chunks")

        self.pcie_phys, self.bringups = [], []
        for i in range(n_ssds):
            phy = self.create_pcie_phy(i)
            if phy.data_width != pcie_data_width:
                raise ValueError(f"pcie{i}: the PHY's datapath is {phy.data_width} bits, the SoC's "
                    f"{pcie_data_width}")
            setattr(self, f"pcie{i}_phy", phy)
            self.pcie_phys.append(phy)
            self.bringups.append(add_coreless_nvme_port(self, i, phy, sys_clk_freq, entries=nvme_entries))
        add_coreless_recorder(self, self.bringups, slots=ring_slots, staging=staging, chunk_size=chunk_size)
        self.recorder_config.export(self)

    # Target hooks ---------------------------------------------------------------------------------
    def create_sdram_phy(self):
        raise NotImplementedError(f"{type(self).__name__} must define create_sdram_phy()")

    def create_pcie_phy(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define create_pcie_phy(index)")

    def add_register_master(self):
        """Adds the master of the register bus (``self.bus.add_master``). Every target defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define add_register_master()")

# Simulation ---------------------------------------------------------------------------------------

class LiteRecorderCorelessSimSoC(LiteRecorderCorelessSoC):
    """The CPU-less recorder in the Verilator simulation: the simulation's clock, DRAM model and TLP
    ports (as ``LiteRecorderSimSoC``), the registers reached through LiteX's ``Stream2Wishbone`` on
    the serial port (the UARTBone protocol; the simulation's ``serial2tcp`` module carries it)."""
    def __init__(self, sys_clk_freq=int(200e6), dram="sim", n_ssds=1, pcie_data_width=256,
        chunk_size=128*1024, ring_slots=RECORDER_SLOTS, **kwargs):
        from litex.build.io import CRG
        from literecorder.soc.sim_platform import LiteRecorderSimPlatform
        from literecorder.soc.sim_soc import sim_dram
        # (SimBuild's options of the LiteX SoC's streams do not apply: test streams only.)
        for name in ("input_width", "with_test_streams"):
            kwargs.pop(name, None)
        self.dram_settings, sys_clk_freq = sim_dram(dram, sys_clk_freq)
        self.dram_name  = dram
        self.sim_clocks = {}
        platform = LiteRecorderSimPlatform(n_pcie_ports=n_ssds, pcie_data_width=pcie_data_width)
        self.crg = CRG(platform.request("sys_clk"))
        staging = kwargs.pop("staging", None)
        if staging is None:
            from literecorder.soc.boards import BOARDS, board
            staging = board(dram)["staging"] if dram in BOARDS else RECORDER_STAGING_DEFAULT
        LiteRecorderCorelessSoC.__init__(self, platform, sys_clk_freq, ident="LiteRecorder CPU-less simulation",
            n_ssds=n_ssds, pcie_data_width=pcie_data_width, chunk_size=chunk_size, ring_slots=ring_slots,
            staging=staging, **kwargs)
        platform.add_debug(self, reset=0)

    def add_register_master(self):
        from litex.soc.cores.uart import RS232PHYModel, Stream2Wishbone
        self.bridge_phy = RS232PHYModel(self.platform.request("serial"))
        self.bridge = Stream2Wishbone(self.bridge_phy, clk_freq=self.sys_clk_freq)
        self.bus.add_master(name="bridge", master=self.bridge.wishbone)

    def create_sdram_phy(self):
        from litedram.phy.model import SDRAMPHYModel
        from literecorder.soc.sim_soc import _model_module
        d = self.dram_settings
        module = _model_module(d["module"], self.sys_clk_freq, d["data_width"])
        self.sdrphy = SDRAMPHYModel(module=module, data_width=d["data_width"], clk_freq=self.sys_clk_freq)
        return self.sdrphy, module, {}

    def create_pcie_phy(self, index):
        from literecorder.cores.pcie.sim_phy import SimRootPortPHY
        return SimRootPortPHY(self.platform.request("pcie", index),
            data_width=self.recorder_config.pcie_data_width)
