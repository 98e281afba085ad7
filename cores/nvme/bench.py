#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The benchmark frontend of an NVMe host (``nvme_bench``): a request generator that issues
sequential or random block requests in hardware and the statistics of their completions (the CPU
only starts it and reads the figures at the end). NVMeHost attaches both with ``with_bench``;
recorder-only builds leave them out.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from literecorder.cores.nvme.common import *

# Request Generator --------------------------------------------------------------------------------

class NVMeRequestGenerator(LiteXModule):
    """``count`` requests of ``blocks`` blocks: sequential from ``lba_base``, or random (aligned on
    ``blocks``, a power of two) in [lba_base, lba_base + lba_mask], and below ``lba_base +
    lba_limit`` when ``lba_limit`` is not 0 (a draw beyond it is skipped: any span, not only powers of
    two); buffers cycle in the DRAM ring [adr_base, adr_base + adr_mask]."""
    def __init__(self):
        self.source   = source = stream.Endpoint(request_layout())
        self.start    = Signal()
        self.op       = Signal(3)
        self.random   = Signal()
        self.lba_base = Signal(64)
        self.lba_mask = Signal(64)
        self.lba_limit = Signal(64)
        self.blocks   = Signal(32)
        self.count    = Signal(32)
        self.adr_base = Signal(32)
        self.adr_mask = Signal(32)
        self.seed     = Signal(32, reset=1)
        self.lba_shift = Signal(4)
        self.issued   = Signal(32)
        self.busy     = Signal()

        # # #

        lfsr   = Signal(32)
        seq    = Signal(64)
        req_bytes = lba_bytes(self, self.blocks, self.lba_shift, 32)
        offset = Signal(32)   # Byte offset in the buffer ring.
        rnd    = Signal(64)
        draw   = Signal()   # The random LBA is in the span (always, for sequential requests).
        lfsr_next = Signal(32)
        self.comb += [
            # Galois LFSR, x^32 + x^22 + x^2 + x + 1.
            lfsr_next.eq(Mux(lfsr[0], (lfsr >> 1) ^ 0x80200003, lfsr >> 1)),
            draw.eq(~self.random | (self.lba_limit == 0) | (rnd < self.lba_limit)),
            # Random offset aligned on the request size (a power of two).
            rnd.eq(Cat(lfsr, lfsr ^ 0x5bd1e995) & self.lba_mask & ~(self.blocks - 1)),
            source.op.eq(self.op),
            source.lba.eq(self.lba_base + Mux(self.random, rnd, seq)),
            source.blocks.eq(self.blocks),
            source.adr.eq(self.adr_base + (offset & self.adr_mask)),
            source.id.eq(self.issued[:16]),
            source.valid.eq(self.busy & draw),
        ]
        self.sync += [
            If(self.start,
                self.busy.eq(self.count != 0),
                self.issued.eq(0),
                seq.eq(0),
                offset.eq(0),
                lfsr.eq(Mux(self.seed == 0, 1, self.seed)),
            ).Elif(source.valid & source.ready,
                self.issued.eq(self.issued + 1),
                seq.eq(seq + self.blocks),
                offset.eq(offset + req_bytes),
                lfsr.eq(lfsr_next),
                If(self.issued + 1 == self.count, self.busy.eq(0)),
            ).Elif(self.busy & ~draw,
                lfsr.eq(lfsr_next),
            )
        ]

# Statistics ---------------------------------------------------------------------------------------

class NVMeStatistics(LiteXModule):
    """Counts the completions passing through (commands, bytes, latency sum/max, errors) and the
    cycles from ``clear`` to the last completion. Counters of time, bytes and commands are 64-bit
    (32 bits of cycles wrap after 21.5 s at 200 MHz); ``lat_max`` is one command's latency."""
    def __init__(self):
        self.sink      = sink   = stream.Endpoint(completion_layout())
        self.source    = source = stream.Endpoint(completion_layout())
        self.clear     = Signal()
        self.lba_shift = Signal(4)
        self.commands  = Signal(64)
        self.bytes     = Signal(64)
        self.lat_sum   = Signal(64)
        self.lat_max   = Signal(32)
        self.errors    = Signal(64)
        self.cycles    = Signal(64)   # Cycles since ``clear``.
        self.t_last    = Signal(64)   # ``cycles`` at the last completion: the elapsed time.

        # # #

        cpl_bytes = lba_bytes(self, sink.blocks, self.lba_shift, 32)
        self.comb += sink.connect(source)
        self.sync += [
            If(self.clear,
                self.commands.eq(0), self.bytes.eq(0), self.lat_sum.eq(0), self.lat_max.eq(0),
                self.errors.eq(0), self.cycles.eq(0), self.t_last.eq(0),
            ).Elif(sink.valid & sink.ready,
                self.commands.eq(self.commands + 1),
                If((sink.op == OP_READ) | (sink.op == OP_WRITE),
                    self.bytes.eq(self.bytes + cpl_bytes)),
                self.lat_sum.eq(self.lat_sum + sink.latency),
                If(sink.latency > self.lat_max, self.lat_max.eq(sink.latency)),
                If(sink.status[:11] != 0, self.errors.eq(self.errors + 1)),
                self.t_last.eq(self.cycles),
            ),
            If(~self.clear, self.cycles.eq(self.cycles + 1)),
        ]
