#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NVMe host of one SSD port: queue engine + request sources (+ benchmark), with CSRs.

::

    CPU request (CSRs) -------+
    request generator* -------+--> mux --> NVMeQueueEngine --> completions --> statistics* --> (ext)
    external (recorder) ------+
                                                      * with_bench (left out of recorder-only builds)

The request generator issues sequential or random block requests in hardware (benchmarks: the CPU
only starts it and reads the statistics at the end, no CPU work per command).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

import functools

from literecorder.cores.common import csr_storage, csr_status
from literecorder.cores.nvme.common import *
from literecorder.cores.nvme.engine import NVMeQueueEngine
from literecorder.cores.nvme.bench import NVMeRequestGenerator, NVMeStatistics

SRC_CPU, SRC_GEN, SRC_EXT = range(3)

# NVMe Host ----------------------------------------------------------------------------------------

class NVMeHost(LiteXModule):
    """Queue engine of one SSD port with its request sources (and benchmark).

    Parameters
    ----------
    rc : RCRootComplex
        Root complex of the SSD's port (windows and doorbells of the engine).
    base : int
        Bus address of the engine's windows.
    entries : int
        I/O queue entries of the engine.
    with_bench : bool
        Request generator and statistics (``nvme_bench``); without them the request sources are the
        CPU FIFO and the external user.

    ``ext_sink`` / ``ext_source``: request/completion streams of an external user (the recorder);
    selected with the ``source`` CSR field."""
    def __init__(self, rc, base, entries=512, with_bench=True):
        self.with_bench = with_bench
        self.engine     = engine = NVMeQueueEngine(rc, base, entries)
        self.cpu        = cpu    = stream.Endpoint(request_layout())  # Fields: from the CSRs.
        self.cpu_push   = Signal()       # Pulse: the CPU request is complete (one at a time).
        self.cpu_level  = Signal()       # The CPU request waits to be taken by the engine.
        self.ext_sink   = stream.Endpoint(request_layout())
        self.ext_source = stream.Endpoint(completion_layout())
        self.select     = Signal(2)

        # # #

        # The CPU request: its fields stay in their CSRs until the engine takes it.
        self.comb += cpu.valid.eq(self.cpu_level)
        self.sync += If(self.cpu_push,
            self.cpu_level.eq(1)
        ).Elif(cpu.valid & cpu.ready,
            self.cpu_level.eq(0)
        )

        self.comb += engine.doorbell.connect(rc.doorbell)
        sources = {
            SRC_CPU:   cpu,
            SRC_EXT:   self.ext_sink,
        }
        completions = engine.source
        if with_bench:
            self.generator = gen   = NVMeRequestGenerator()
            self.stats     = stats = NVMeStatistics()
            sources[SRC_GEN] = gen.source
            self.comb += [
                gen.lba_shift.eq(engine.lba_shift),
                stats.lba_shift.eq(engine.lba_shift),
                engine.source.connect(stats.sink),
            ]
            completions = stats.source
        cases = {k: src.connect(engine.sink) for k, src in sources.items()}
        cases["default"] = cpu.connect(engine.sink)
        self.comb += [
            Case(self.select, cases),
            If(self.select == SRC_EXT,
                completions.connect(self.ext_source)
            ).Else(
                completions.ready.eq(1)
            ),
        ]

    def add_csr(self):
        e, cpu = self.engine, self.cpu

        def storage(name, size, desc, reset=0, target=None):
            csr = csr_storage(self, name, size, desc, reset)
            if target is not None:
                self.comb += target.eq(csr.storage)        # (the CSR may be wider than the target)
            return csr

        status = functools.partial(csr_status, self)

        # Engine configuration.
        self._ctrl = CSRStorage(description="Queue engine control.", fields=[
            CSRField("enable", size=1, description="Run the engine (0: held in reset; set it after the I/O queues were created on the controller)."),
            CSRField("clear_error", size=1, pulse=True, description="Resume after an error (when no command is outstanding)."),
            CSRField("stats_clear", size=1, pulse=True, description="Clear the statistics and start their time base (benchmark builds)."),
            CSRField("source", size=2, offset=4, description="Request source.", values=[
                ("``0``", "CPU request FIFO (CSRs)."),
                ("``1``", "Hardware request generator (benchmark builds)."),
                ("``2``", "External user (recorder datapath)."),
            ]),
        ])
        self.comb += [
            e.enable.eq(self._ctrl.fields.enable),
            e.clear_error.eq(self._ctrl.fields.clear_error),
            self.select.eq(self._ctrl.fields.source),
        ]
        storage("qsize",      16, "Entries of the I/O SQ/CQ created on the controller (<= entries of the engine).", e.entries, e.qsize)
        storage("qd",         16, "Commands in flight (< qsize).", e.entries - 1, e.qd)
        storage("nsid",       32, "Namespace ID.", 1, e.nsid)
        storage("lba_shift",   4, f"log2 of the LBA size ({NVME_LBA_SHIFT_MIN}..{NVME_LBA_SHIFT_MAX}: 512 B .. 4 KiB).", 9, e.lba_shift)
        storage("max_blocks", 17, "Blocks per command (from MDTS); larger requests are split.", 256, e.max_blocks)
        storage("sq_db",      32, "Bus address of the I/O SQ tail doorbell (below 4 GiB).", 0, e.sq_db)
        storage("cq_db",      32, "Bus address of the I/O CQ head doorbell (below 4 GiB).", 0, e.cq_db)
        storage("timeout",    32, "Command timeout: cycles without a completion while commands are outstanding (0: off).", 0, e.timeout)

        # Engine status.
        self._status = CSRStatus(description="Queue engine status.", fields=[
            CSRField("ready", size=1, description="Initialized and accepting requests."),
            CSRField("error", size=1, description="Stopped on an error status or a timeout (see err_*)."),
            CSRField("outstanding", size=13, offset=8, description="Commands in flight."),
        ])
        self.comb += [
            self._status.fields.ready.eq(e.ready),
            self._status.fields.error.eq(e.error),
            self._status.fields.outstanding.eq(e.outstanding),
        ]
        status("err_status", e.err_status, f"Status field of the failing command's CQE (0x{NVME_STATUS_TIMEOUT:x}: command timeout).")
        status("err_lba",    e.err_lba, "Starting LBA of the failing (or oldest timed-out) command.")
        err_info = Signal(32)
        self.comb += err_info.eq(Cat(e.err_cid, e.err_op))
        status("err_info",   err_info, "CID (15:0) and request operation (18:16) of the failing command.")
        status("submitted",  e.submitted, "Commands submitted since enable.")
        status("completed",  e.completed, "Commands completed since enable.")
        status("sq_doorbells", e.sq_doorbells, "SQ tail doorbell writes.")
        status("cq_doorbells", e.cq_doorbells, "CQ head doorbell writes.")

        # CPU request (one at a time: written, pushed, taken by the engine; then the next one).
        storage("req_op",     3, "Request operation: 0 read, 1 write, 2 flush, 3 deallocate, 4 write zeroes.", 0, cpu.op)
        storage("req_lba",   64, "Request starting LBA.", 0, cpu.lba)
        storage("req_blocks", 32, "Request blocks.", 0, cpu.blocks)
        storage("req_adr",    32, "Request buffer bus address.", 0, cpu.adr)
        storage("req_id",     16, "Request ID.", 0, cpu.id)
        self._req_push = CSR(name="req_push")
        self.comb += self.cpu_push.eq(self._req_push.re)
        status("req_level", self.cpu_level, "The pushed request waits to be taken (write the next one only once this is 0).")
        if not self.with_bench:
            return
        gen, st = self.generator, self.stats
        self.comb += st.clear.eq(self._ctrl.fields.stats_clear)
        pushes = Signal(32)
        self.sync += If(st.clear, pushes.eq(0)).Elif(self._req_push.re, pushes.eq(pushes + 1))
        status("req_pushes", pushes, "CPU request pushes since the statistics were cleared.")

        # Generator.
        self._gen_ctrl = CSRStorage(description="Request generator.", fields=[
            CSRField("start",  size=1, pulse=True, description="Start issuing ``gen_count`` requests."),
            CSRField("random", size=1, description="Random LBAs (aligned on the request size) instead of sequential."),
            CSRField("op",     size=3, offset=4, description="Operation (as req_op)."),
        ])
        self.comb += [
            gen.start.eq(self._gen_ctrl.fields.start),
            gen.random.eq(self._gen_ctrl.fields.random),
            gen.op.eq(self._gen_ctrl.fields.op),
        ]
        storage("gen_lba",     64, "First LBA.", 0, gen.lba_base)
        storage("gen_mask",    64, "Random LBA range - 1 (power of two - 1).", 0, gen.lba_mask)
        storage("gen_limit",   64, "Random LBA span (0: the mask's): draws at or beyond it are skipped.", 0, gen.lba_limit)
        storage("gen_blocks",  32, "Blocks per request.", 0, gen.blocks)
        storage("gen_count",   32, "Requests.", 0, gen.count)
        storage("gen_adr",     32, "Buffer ring base (bus address).", 0, gen.adr_base)
        storage("gen_adr_mask", 32, "Buffer ring size - 1 (power of two - 1).", 0, gen.adr_mask)
        storage("gen_seed",    32, "LFSR seed of the random LBAs.", 1, gen.seed)
        status("gen_issued", gen.issued, "Requests issued by the generator.")
        status("gen_busy",   gen.busy, "Generator issuing.")

        # Statistics (64-bit counters of time, bytes and commands).
        status("st_commands", st.commands, "Commands completed since stats_clear.")
        status("st_bytes",    st.bytes, "Bytes transferred.")
        status("st_lat_sum",  st.lat_sum, "Sum of command latencies (cycles).")
        status("st_lat_max",  st.lat_max, "Maximum command latency (cycles).")
        status("st_errors",   st.errors, "Commands completed with an error status.")
        status("st_elapsed",  st.t_last, "Cycles from stats_clear to the last completion.")
