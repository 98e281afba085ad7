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
PCIE_STAGING_BASE   = 0xB0000000  # + port * PCIE_STAGING_STRIDE: the recorder's on-chip slots (device only).
PCIE_STAGING_STRIDE = 0x01000000

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
    from literecorder.cores.nvme.core import NVMeHost, SRC_CPU, SRC_GEN, SRC_EXT
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
        "PCIE_ROOT_MPS":          phy.max_payload_size,
        "PCIE_ROOT_LINK_GEN":     phy.root_link_cap[0],
        "PCIE_ROOT_LINK_WIDTH":   phy.root_link_cap[1],
        # Encoding of the link status CSR's LTSSM field: 1 = 7-series pl_ltssm_state (PG054),
        # 0 = UltraScale/UltraScale+ cfg_ltssm_state (PG156/PG213), also the simulated link's.
        "PCIE_LTSSM_S7":          int(getattr(phy, "ltssm_s7", False)),
        # The engine's request operations and sources (nvme.h uses these, defined once here).
        "NVME_OP_READ":           nvme_common.OP_READ,
        "NVME_OP_WRITE":          nvme_common.OP_WRITE,
        "NVME_OP_FLUSH":          nvme_common.OP_FLUSH,
        "NVME_OP_DEALLOCATE":     nvme_common.OP_DEALLOCATE,
        "NVME_OP_WRITE_ZEROES":   nvme_common.OP_WRITE_ZEROES,
        "NVME_SRC_CPU":           SRC_CPU,
        "NVME_SRC_GEN":           SRC_GEN,
        "NVME_SRC_EXT":           SRC_EXT,
    }
    for name, value in shared.items():
        if name not in soc.constants:
            soc.add_constant(name, value)
        elif getattr(soc.constants[name], "value", soc.constants[name]) != value:
            raise ValueError(f"add_nvme_port({index}): {name} = {value} differs from the first port's "
                f"{getattr(soc.constants[name], 'value', soc.constants[name])}: all ports must share it")
    return rc

RECORDER_SLOTS = 4096           # Chunks in the LiteDRAM ring at most (512 MiB of 128 KiB chunks).
RECORDER_BUFFER_DEFAULT = 64*2**20  # The ring a recording uses unless `buffer=` says otherwise (bytes).
RECORDER_STAGING_DEFAULT = 1024*1024 # On-chip slots of each SSD port (bytes; boards: soc.boards).

def _user_stream(name, ep):
    """Width of a user stream: an AXIStreamInterface or a LiteX endpoint with ``data`` (and
    optionally ``keep``, one bit per byte: ``stream.user_keep``)."""
    from literecorder.cores.recorder.frontend.stream import user_keep
    names = [f[0] for f in ep.description.payload_layout]
    if "data" not in names:
        raise ValueError(f"add_recorder: the {name} stream has no `data` field (fields: {names})")
    try:
        user_keep(ep)
    except ValueError as e:
        raise ValueError(f"add_recorder: the {name} stream: {e}") from None
    return len(ep.data)

def add_recorder(soc, n_ports, record=None, record_cd="sys", replay=None, replay_cd="sys",
    control_cd=None, with_test_streams=True, slots=RECORDER_SLOTS, fifo_depth=32,
    buffer_default=RECORDER_BUFFER_DEFAULT, control=None, staging=RECORDER_STAGING_DEFAULT,
    staging_ram="block", chunk_size=128*1024, with_job_csr=True):
    """Adds the recorder datapath (``cores.recorder``) between data streams and the NVMe hosts
    ``nvme0`` .. ``nvme<n_ports-1>`` (call after ``add_nvme_port``).

    Parameters
    ----------
    record : stream.Endpoint or AXIStreamInterface, optional
        The user's stream to record (a source: ``data`` of 8..ring-word bits, a power of two;
        ``keep``, one bit per byte, honoured on the ``last`` beat; without one, or an
        ``AXIStreamInterface(keep_width=0)``, every byte is valid), in clock domain ``record_cd``.
    replay : stream.Endpoint or AXIStreamInterface, optional
        Where replayed data goes (a sink of the same kind), in clock domain ``replay_cd``.
    control_cd : str, optional
        Clock domain of the hardware control port ``soc.recorder_ctl`` (``ControlPort``: start,
        stop, abort, trigger in; busy, running, recording, replaying, armed, refused, overflow,
        error out); default ``record_cd``.
    control : ControlPort, optional
        The control port made beforehand (``LiteRecorderSoC.add_recorder_stream``), else one is made
        in ``control_cd`` and set as ``soc.recorder_ctl``.
    with_test_streams : bool
        Adds the test pattern source and checker (``recstream`` CSRs), selectable at run time.
    buffer_default : int
        Bytes of the LiteDRAM ring a recording uses unless its ``buffer=`` says otherwise (at
        most the DRAM window and ``slots`` chunks; ``buffer=all`` takes all of them).
    staging : int
        Bytes of on-chip chunk slots per SSD port (the ring's first tier; a power of two of
        ``chunk_size`` x 1..16, or 0: the DRAM ring alone). Each is a block RAM served to its SSD by
        an on-chip window of the port's root complex (``staging`` at ``PCIE_STAGING_BASE`` + port x
        ``PCIE_STAGING_STRIDE``).
    staging_ram : str
        "block" (block RAM) or "ultra" (UltraRAM, UltraScale+ parts).
    chunk_size : int
        The build's chunk (bytes): ``staging // chunk_size`` slots per port.
    with_job_csr : bool
        The job's configuration and start/stop/abort registers (``RecorderCore.add_csr``); False:
        the caller drives them (the CPU-less core's ``RecorderJob``), the status registers stay.

    The DRAM ring starts at the DRAM window (``dram_window``), an address fixed in the hardware.

    CSRs: ``recorder`` (+ ``recstream``). Constants: ``RECORDER_SLOTS``, ``RECORDER_RING_BUS``,
    ``RECORDER_BUFFER_DEFAULT``,
    ``RECORDER_WORD_BYTES``,
    ``REC_INPUT_PATTERN``/``REC_INPUT_USER``/``REC_OUTPUT_CHECKER``/``REC_OUTPUT_USER`` (-1: absent),
    ``REC_USER_RECORD_BITS``/``REC_USER_REPLAY_BITS``, the modes and status codes (REC_*).
    """
    from literecorder.cores.recorder.core import RecorderCore
    from literecorder.cores.recorder.frontend.stream import (RecordPort, ReplayPort, ControlPort, axis_to_user,
        user_to_axis)
    from literecorder.cores.recorder.frontend.pattern import TestStreams
    from literecorder.cores.recorder.common import export_constants
    from literecorder.cores.nvme.core import SRC_EXT
    from litex.soc.interconnect.axi import AXIStreamInterface

    if not (isinstance(buffer_default, int) and buffer_default >= 2*4096 and buffer_default % 4096 == 0):
        raise ValueError(f"add_recorder: buffer_default={buffer_default}: bytes, a multiple of 4096, at least 8192")
    if not (isinstance(staging, int) and (staging == 0 or (staging >= 4096 and staging & (staging - 1) == 0
            and staging <= PCIE_STAGING_STRIDE and 1 <= staging//chunk_size <= 16))):
        raise ValueError(f"add_recorder: staging={staging}: bytes of on-chip slots per SSD port, 0 or a power "
            f"of two of 1 to 16 chunks of {chunk_size} bytes (at most {PCIE_STAGING_STRIDE})")
    if staging_ram not in ("block", "ultra"):
        raise ValueError(f"add_recorder: staging_ram={staging_ram!r}: 'block' or 'ultra'")
    if record is None and replay is None and not with_test_streams:
        raise ValueError("add_recorder: no stream to record or replay (give record/replay or with_test_streams)")
    wr_port = soc.sdram.crossbar.get_port(mode="write")
    rd_port = soc.sdram.crossbar.get_port(mode="read")
    dw      = wr_port.data_width

    # Ports: index 0 = test streams (when present), then the user's.
    rec_ports, play_ports = [], []
    if with_test_streams:
        streams = TestStreams(dw)
        streams.add_csr()
        soc.recstream = streams
        p = RecordPort(dw, dw, "sys", depth=fifo_depth)
        soc.comb += streams.source.connect(p.sink)
        rec_ports.append(("pattern", p))
        q = ReplayPort(dw, dw, "sys")
        soc.comb += q.source.connect(streams.sink)
        play_ports.append(("checker", q))
    if record is not None:
        p = RecordPort(_user_stream("record", record), dw, record_cd, depth=fifo_depth)
        soc.comb += axis_to_user(record, p.sink)
        rec_ports.append(("user", p))
    if replay is not None:
        q = ReplayPort(_user_stream("replay", replay), dw, replay_cd, depth=fifo_depth)
        soc.comb += user_to_axis(q.source, replay)
        play_ports.append(("user", q))

    # On-chip slots: one staging bank per SSD port, served by an on-chip window of its root complex.
    banks = None
    if staging:
        from literecorder.cores.recorder.ring import StagingBank
        banks = []
        for i in range(n_ports):
            rc = getattr(soc, f"pcie{i}")
            w  = rc.add_window("staging", PCIE_STAGING_BASE + i*PCIE_STAGING_STRIDE, staging, on_chip=True)
            b  = StagingBank(w, dw, ram_style=staging_ram)
            setattr(soc, f"recorder_staging{i}", b)
            banks.append(b)
        soc.logger.info(f"Recorder ring: {staging//chunk_size} on-chip slots of {chunk_size//1024} KiB per SSD port "
            f"({staging//1024} KiB of {'UltraRAM' if staging_ram == 'ultra' else 'block RAM'} each, "
            f"{n_ports*staging//1024} KiB in all), then the LiteDRAM ring.")
    # The DRAM ring: the DRAM window the SSDs reach (add_nvme_port), fixed in the build.
    offset, _ = dram_window(soc)
    ring_bus  = soc.bus.regions["main_ram"].origin + offset
    rec = RecorderCore(wr_port, rd_port, n_ports=n_ports, slots=slots,
        n_inputs=max(len(rec_ports), 1), n_outputs=max(len(play_ports), 1),
        staging=banks, staging_slots=staging//chunk_size if staging else 0,
        ring_word=offset//(dw//8), ring_bus=ring_bus)
    rec.add_csr(control=with_job_csr)
    soc.recorder = rec
    if with_test_streams:
        soc.comb += streams.run.eq(rec.restart)
    for i, (name, p) in enumerate(rec_ports):
        setattr(soc, f"recorder_in_{name}", p)
        soc.comb += [p.source.connect(rec.inputs[i]), p.drop.eq(rec.drop), p.clear.eq(rec.input_clear)]
    for i, (name, q) in enumerate(play_ports):
        setattr(soc, f"recorder_out_{name}", q)
        soc.comb += rec.outputs[i].connect(q.sink)
    for i in range(n_ports):
        host = getattr(soc, f"nvme{i}")
        soc.comb += [
            rec.req[i].connect(host.ext_sink),
            host.ext_source.connect(rec.cpl[i]),
            # The port serves the recorder only while its engine runs with the external source.
            rec.served[i].eq((host.select == SRC_EXT) & host.engine.enable),
        ]

    # Hardware control port (user's clock domain).
    ctl = control
    if ctl is None:
        ctl = ControlPort(control_cd or record_cd)
        soc.recorder_ctl = ctl
    soc.comb += [
        rec.hw_start.eq(ctl.sys_start), rec.hw_stop.eq(ctl.sys_stop),
        rec.hw_abort.eq(ctl.sys_abort), rec.hw_trigger.eq(ctl.sys_trigger),
        ctl.sys_busy.eq(rec.busy), ctl.sys_running.eq(rec.running), ctl.sys_overflow.eq(rec.overflow),
        ctl.sys_error.eq(rec.error), ctl.sys_recording.eq(rec.recording),
        ctl.sys_replaying.eq(rec.replaying), ctl.sys_armed.eq(rec.armed), ctl.sys_refused.eq(rec.refused),
    ]

    # Constants for the BIOS.
    names_in  = [n for n, _ in rec_ports]
    names_out = [n for n, _ in play_ports]
    soc.add_constant("RECORDER_SLOTS",      slots)
    soc.add_constant("RECORDER_RING_BUS",   ring_bus)
    soc.add_constant("RECORDER_BUFFER_DEFAULT", buffer_default)
    soc.add_constant("RECORDER_STAGING_BYTES", staging)
    soc.add_constant("RECORDER_STAGING_SLOTS", rec.staging_slots)
    soc.add_constant("RECORDER_WORD_BYTES", dw//8)
    soc.add_constant("RECORDER_LOG_DEPTH",  rec.log_depth)
    soc.add_constant("RECORDER_TRIM_ROWS_MAX", 2**len(rec.trim_rows) - 1)
    soc.add_constant("REC_INPUT_PATTERN",   names_in.index("pattern")  if "pattern" in names_in  else -1)
    soc.add_constant("REC_INPUT_USER",      names_in.index("user")     if "user"    in names_in  else -1)
    soc.add_constant("REC_OUTPUT_CHECKER",  names_out.index("checker") if "checker" in names_out else -1)
    soc.add_constant("REC_OUTPUT_USER",     names_out.index("user")    if "user"    in names_out else -1)
    soc.add_constant("REC_USER_RECORD_BITS", _user_stream("record", record) if record is not None else 0)
    soc.add_constant("REC_USER_REPLAY_BITS", _user_stream("replay", replay) if replay is not None else 0)
    export_constants(soc)
    return rec
