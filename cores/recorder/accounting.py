#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Exact accounting of a recording: every byte that reached the recorder is kept or dropped.

::

    bytes_in = bytes_kept + bytes_dropped            (kept: taken into the ring)
    bytes_kept = bytes_committed + bytes_buffered    (committed: written to the SSDs)

``bytes_committed`` is ``min(committed chunks x chunk bytes, bytes_kept)`` (the last chunk of a
recording may be padded). Every drop event (bytes a port refused in front of a word it kept, or the
partly filled chunk an abort discards) is logged with its position in the input stream and its
length; the log holds ``log_depth`` events, ``drops`` counts them all. The CPU reads a consistent
set of counters through ``snapshot`` (all copied in the same cycle).
"""

from migen import *

from litex.gen import *

from literecorder.cores.recorder.common import BYTE_BITS, TIME_BITS, CHUNK_BITS, GAP_BITS

class Accounting(LiteXModule):
    def __init__(self, log_depth=512):
        # Events.
        self.restart   = Signal()
        self.running   = Signal()
        self.word      = Signal()              # A word of the input reached the recorder ...
        self.word_bytes = Signal(8)            # ... with these bytes (kept) ...
        self.word_gap  = Signal(GAP_BITS)      # ... and these dropped in front of it.
        self.discard   = Signal()              # Pulse: the kept bytes of a partial chunk ...
        self.discard_bytes = Signal(32)        # ... are dropped (abort).
        self.discard_pos   = Signal(BYTE_BITS) # Input position of the partial chunk's first byte.
        self.surplus   = Signal()              # A word arrived outside a recording (discarded).
        self.stall     = Signal()              # The input waited this cycle (lossless).
        self.level     = Signal(CHUNK_BITS)    # Chunks in the ring (filling included).
        self.committed = Signal(CHUNK_BITS)    # Chunks written to the SSDs.
        self.snapshot  = Signal()              # Pulse: copy the counters below.
        self.log_index = Signal(max=log_depth) # Drop log entry to read.
        # Counters (live).
        self.cycles    = Signal(TIME_BITS)
        self.bytes_in  = Signal(BYTE_BITS)
        self.kept      = Signal(BYTE_BITS)
        self.dropped   = Signal(BYTE_BITS)
        self.drops     = Signal(CHUNK_BITS)    # Drop events.
        self.surplus_bytes = Signal(BYTE_BITS)
        self.stalls    = Signal(TIME_BITS)
        self.peak      = Signal(CHUNK_BITS)
        self.overflow  = Signal()              # At least one drop.
        # Snapshot.
        self.s_cycles    = Signal(TIME_BITS)
        self.s_bytes_in  = Signal(BYTE_BITS)
        self.s_kept      = Signal(BYTE_BITS)
        self.s_dropped   = Signal(BYTE_BITS)
        self.s_committed = Signal(CHUNK_BITS)
        self.s_level     = Signal(CHUNK_BITS)
        # Log entry read (one cycle after log_index).
        self.log_pos     = Signal(BYTE_BITS)
        self.log_len     = Signal(GAP_BITS)
        self.log_abort   = Signal()

        # # #

        # Drop log.
        mem = Memory(BYTE_BITS + GAP_BITS + 1, log_depth)
        wr  = mem.get_port(write_capable=True)
        rd  = mem.get_port()
        self.specials += mem, wr, rd
        self.comb += [
            rd.adr.eq(self.log_index),
            Cat(self.log_pos, self.log_len, self.log_abort).eq(rd.dat_r),
            wr.adr.eq(self.drops),
            wr.we.eq(((self.word & (self.word_gap != 0)) | self.discard) & (self.drops < log_depth)),
            If(self.discard,
                wr.dat_w.eq(Cat(self.discard_pos, self.discard_bytes, Constant(0, GAP_BITS - 32), C(1, 1))),
            ).Else(
                wr.dat_w.eq(Cat(self.bytes_in, self.word_gap, C(0, 1))),
            ),
        ]

        self.sync += [
            If(self.restart,
                self.cycles.eq(0), self.bytes_in.eq(0), self.kept.eq(0), self.dropped.eq(0),
                self.drops.eq(0), self.surplus_bytes.eq(0), self.stalls.eq(0), self.peak.eq(0),
                self.overflow.eq(0),
            ).Else(
                If(self.running, self.cycles.eq(self.cycles + 1)),
                If(self.stall, self.stalls.eq(self.stalls + 1)),
                If(self.level > self.peak, self.peak.eq(self.level)),
                If(self.surplus, self.surplus_bytes.eq(self.surplus_bytes + self.word_bytes + self.word_gap)),
                If(self.discard,
                    self.kept.eq(self.kept - self.discard_bytes),
                    self.dropped.eq(self.dropped + self.discard_bytes),
                    self.drops.eq(self.drops + 1),
                ).Elif(self.word,
                    self.bytes_in.eq(self.bytes_in + self.word_gap + self.word_bytes),
                    self.kept.eq(self.kept + self.word_bytes),
                    If(self.word_gap != 0,
                        self.dropped.eq(self.dropped + self.word_gap),
                        self.drops.eq(self.drops + 1),
                        self.overflow.eq(1),
                    ),
                ),
            ),
            If(self.snapshot,
                self.s_cycles.eq(self.cycles),
                self.s_bytes_in.eq(self.bytes_in),
                self.s_kept.eq(self.kept),
                self.s_dropped.eq(self.dropped),
                self.s_committed.eq(self.committed),
                self.s_level.eq(self.level),
            ),
        ]
