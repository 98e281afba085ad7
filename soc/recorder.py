#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recorder configuration shared by the simulation SoC and the board targets."""

# Recorder Configuration ---------------------------------------------------------------------------

class RecorderConfig:
    """Build-time configuration of the recorder, exported to the BIOS as ``LITEREC_*`` constants.

    Parameters
    ----------
    sys_clk_freq : int
        Modeled system clock (Hz); every time the BIOS measures is in cycles of this clock.
    n_ssds : int
        Number of SSD ports (one PCIe root port and one NVMe queue engine each), 1-8.
    pcie_data_width : int
        Width of the TLP datapath on the core side of the PHY (128, 256 or 512 bits).
    chunk_size : int
        Recorder chunk (bytes): the unit of the DRAM ring and of one NVMe command stream,
        a power of two of at least 128 KiB.
    """
    def __init__(self, sys_clk_freq, n_ssds=1, pcie_data_width=256, chunk_size=128*1024):
        if not (1 <= n_ssds <= 8):
            raise ValueError(f"n_ssds={n_ssds}: between 1 and 8 SSD ports are supported")
        if pcie_data_width not in (128, 256, 512):
            raise ValueError(f"pcie_data_width={pcie_data_width}: allowed are 128, 256, 512 (the queue engine "
                "needs 128-bit beats at least)")
        if chunk_size < 128*1024 or (chunk_size & (chunk_size - 1)):
            raise ValueError(f"chunk_size={chunk_size}: must be a power of two >= 131072 (128 KiB)")
        self.sys_clk_freq    = int(sys_clk_freq)
        self.n_ssds          = n_ssds
        self.pcie_data_width = pcie_data_width
        self.chunk_size      = chunk_size

    def export(self, soc):
        soc.add_constant("LITEREC_SSD_PORTS",       self.n_ssds)
        soc.add_constant("LITEREC_CHUNK_SIZE",      self.chunk_size)
        soc.add_constant("LITEREC_PCIE_DATA_WIDTH", self.pcie_data_width)

# Address map (PCIe bus addresses seen by the device) ----------------------------------------------
#
# The device's DMA reaches only its port's windows; the bus addresses of the RAM windows equal the
# CPU addresses of the same memories, so the driver hands CPU addresses to the device.

PCIE_SRAM_BASE   = 0x90000000   # + port * PCIE_PORT_STRIDE: on-chip RAM window (CPU and device).
PCIE_SRAM_SIZE   = 0x10000      # 64 KiB: admin queues, Identify/log pages, small buffers.
PCIE_PORT_STRIDE = 0x00100000
PCIE_BAR_BASE    = 0xC0000000   # + port * PCIE_PORT_STRIDE: where the BIOS assigns the SSD's BAR0.
NVME_QUEUE_BASE  = 0xA0000000   # + port * NVME_WINDOWS_SPAN: I/O SQ, CQ and PRP windows of the engine.
NVME_ENTRIES     = 512          # I/O queue entries of each engine (up to 511 commands in flight).

def dram_window(soc):
    """(dram offset, size): the upper half of the DRAM holds the recorder/DMA buffers."""
    size = soc.bus.regions["main_ram"].size
    return size//2, size//2

# Integration --------------------------------------------------------------------------------------

def add_nvme_port(soc, index, phy, with_bench=True):
    """Adds a PCIe root complex on ``phy`` (root port ``index``), the DMA windows it hands out and
    the NVMe host of the SSD behind it:

    - ``nvme<index>_sram``: on-chip RAM (64 KiB), uncached on the CPU bus at the same address;
    - the DRAM buffer window (upper half of main RAM) through a LiteDRAM native port;
    - the queue engine's SQ, CQ and PRP windows (``with_bench``: request generator and statistics
      for ``nvme_bench``; recorder-only builds leave them out).

    CSRs: ``pcie<index>``, ``nvme<index>``. Constants for the BIOS: ``PCIE<index>_SRAM_BASE``,
    ``NVME<index>_*_BASE``, ``PCIE_DRAM_WINDOW_*`` and the engine's ``NVME_*`` / ``PCIE_*``
    constants (defined once in the cores).
    """
    from litex.soc.integration.soc import SoCRegion
    from literecorder.cores.pcie.windows import SRAMWindow, DRAMWindow
    from literecorder.cores.pcie.core import RCRootComplex
    from literecorder.cores.pcie import common as pcie_common
    from literecorder.cores.nvme.core import NVMeHost
    from literecorder.cores.nvme import common as nvme_common

    if not hasattr(soc, "sdram"):
        soc.logger.error("add_nvme_port needs LiteDRAM (add_sdram first): data buffers live in DRAM.")
        raise ValueError("add_nvme_port: no LiteDRAM in the SoC")
    if not (0 <= index < 8):
        raise ValueError(f"add_nvme_port: index {index}: ports 0..7 are allowed")
    if hasattr(soc, f"pcie{index}"):
        raise ValueError(f"add_nvme_port: port {index} exists already")

    rc = RCRootComplex(phy)
    setattr(soc, f"pcie{index}", rc)

    # On-chip RAM window.
    sram_base = PCIE_SRAM_BASE + index*PCIE_PORT_STRIDE
    sram = SRAMWindow(rc.add_window("sram", sram_base, PCIE_SRAM_SIZE, on_chip=True))
    setattr(soc, f"nvme{index}_sram", sram)
    soc.bus.add_slave(f"nvme{index}_sram", sram.bus, SoCRegion(origin=sram_base, size=PCIE_SRAM_SIZE,
        cached=False))

    # DRAM window.
    offset, size = dram_window(soc)
    main_ram_base = soc.bus.regions["main_ram"].origin
    dram = DRAMWindow(rc.add_window("dram", main_ram_base + offset, size),
        port=soc.sdram.crossbar.get_port(), dram_offset=offset)
    setattr(soc, f"nvme{index}_dram", dram)

    # NVMe host (its queue engine's windows are handed out by the root complex too).
    qbase = NVME_QUEUE_BASE + index*nvme_common.NVME_WINDOWS_SPAN
    nvme = NVMeHost(rc, qbase, entries=NVME_ENTRIES, with_bench=with_bench)
    setattr(soc, f"nvme{index}", nvme)
    rc.add_csr()
    nvme.add_csr()

    # Per-port constants.
    soc.add_constant(f"NVME{index}_SQ_BASE",  nvme.engine.sq_window.base)
    soc.add_constant(f"NVME{index}_CQ_BASE",  nvme.engine.cq_window.base)
    soc.add_constant(f"NVME{index}_PRP_BASE", nvme.engine.prp_window.base)
    soc.add_constant(f"PCIE{index}_SRAM_BASE", sram_base)
    # Constants shared by all ports: declared by the first one, the same for every port.
    shared = {
        "NVME_ENGINE_ENTRIES":    NVME_ENTRIES,
        "NVME_QUEUE_BASE":        NVME_QUEUE_BASE,
        "NVME_WINDOWS_SPAN":      nvme_common.NVME_WINDOWS_SPAN,
        "NVME_SQ_OFFSET":         nvme_common.NVME_SQ_OFFSET,
        "NVME_CQ_OFFSET":         nvme_common.NVME_CQ_OFFSET,
        "NVME_PRP_OFFSET":        nvme_common.NVME_PRP_OFFSET,
        "NVME_MAX_TRANSFER":      nvme_common.NVME_MAX_TRANSFER,
        "NVME_DSM_MAX_BLOCKS":    nvme_common.NVME_DSM_MAX_BLOCKS,
        "NVME_SQ_DOORBELL_BATCH": nvme_common.NVME_SQ_DOORBELL_BATCH,
        "NVME_STATUS_TIMEOUT":    nvme_common.NVME_STATUS_TIMEOUT,
        "NVME_LBA_SHIFT_MIN":     nvme_common.NVME_LBA_SHIFT_MIN,
        "NVME_LBA_SHIFT_MAX":     nvme_common.NVME_LBA_SHIFT_MAX,
        "NVME_WITH_BENCH":        int(with_bench),
        "PCIE_MPS_LOG2_RESET":    pcie_common.MPS_LOG2_RESET,
        "PCIE_REQ_TIMEOUT_RESET": pcie_common.REQ_TIMEOUT_RESET,
        "PCIE_SRAM_SIZE":         PCIE_SRAM_SIZE,
        "PCIE_PORT_STRIDE":       PCIE_PORT_STRIDE,
        "PCIE_BAR_BASE":          PCIE_BAR_BASE,
        "PCIE_DRAM_WINDOW_BASE":  main_ram_base + offset,
        "PCIE_DRAM_WINDOW_SIZE":  size,
        "PCIE_ROOT_MPS":          phy.root_mps_cap,
    }
    for name, value in shared.items():
        if name not in soc.constants:
            soc.add_constant(name, value)
        elif getattr(soc.constants[name], "value", soc.constants[name]) != value:
            raise ValueError(f"add_nvme_port({index}): {name} = {value} differs from the first port's "
                f"{getattr(soc.constants[name], 'value', soc.constants[name])}: all ports must share it")
    return rc

RECORDER_SLOTS = 256            # Chunks in the LiteDRAM ring at most (QD 256 across the SSDs).

def add_recorder(soc, n_ports, sink=None, source=None, slots=RECORDER_SLOTS):
    """Adds the recorder datapath (``cores.recorder.core.RecorderCore``) between a data stream and
    the NVMe hosts ``nvme0`` .. ``nvme<n_ports-1>`` (call after ``add_nvme_port``).

    ``sink``: the stream to record (``data`` of the LiteDRAM port width), ``source``: where replayed
    data goes. Without them, the test pattern source/checker (``recstream`` CSRs) are attached.
    CSRs: ``recorder``. Constants: ``RECORDER_SLOTS``, ``RECORDER_WORD_BYTES``.
    """
    from literecorder.cores.recorder.core import RecorderCore, RecorderTestStreams

    wr_port = soc.sdram.crossbar.get_port(mode="write")
    rd_port = soc.sdram.crossbar.get_port(mode="read")
    rec = RecorderCore(wr_port, rd_port, n_ports=n_ports, slots=slots)
    rec.add_csr()
    soc.recorder = rec
    for i in range(n_ports):
        host = getattr(soc, f"nvme{i}")
        soc.comb += [
            rec.req[i].connect(host.ext_sink),
            host.ext_source.connect(rec.cpl[i]),
        ]
    if sink is None or source is None:
        streams = RecorderTestStreams(rec.data_width)
        streams.add_csr()
        soc.recstream = streams
        sink   = streams.source if sink   is None else sink
        source = streams.sink   if source is None else source
    soc.comb += [
        sink.connect(rec.sink),
        rec.source.connect(source),
    ]
    soc.add_constant("RECORDER_SLOTS",      slots)
    soc.add_constant("RECORDER_WORD_BYTES", rec.data_width//8)
    return rec
