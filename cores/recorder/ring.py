#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The ring of chunk slots in LiteDRAM: its writer (record) and its reader (replay).

::

    record:  ring words --> accept (room?) --> FIFO --> LiteDRAM DMA writer    (chunk k: slot k mod S)
    replay:  LiteDRAM DMA reader (slot of chunk k, once its NVMe Read completed) --> ring words

Writer: a word is accepted while the input is open and the slot of the chunk it belongs to is
free (its previous chunk's NVMe Write completed); a chunk counts as filled once all its words left
for LiteDRAM (``filled``: it may then be written to the SSDs). When the input closes inside a
chunk, the rest of the chunk is padded with zero words (``pad``), or the partial chunk is dropped
(``drop_partial``: abort). Reader: reads the slot of chunk ``rd`` once its command completed, hands
the words out in order, and frees the slot when the last word of the chunk left (``freed``); words
beyond the replay's byte count are not handed out, the last word handed out carries ``last``.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litedram.frontend.dma import LiteDRAMDMAWriter

from literecorder.cores.recorder.common import word_layout, BYTE_BITS, CHUNK_BITS
from literecorder.cores.common import RAMFIFO
from literecorder.cores.recorder.slots import RingPointer

# Ring Writer --------------------------------------------------------------------------------------

class RingWriter(LiteXModule):
    def __init__(self, port, slots, fifo_depth=64):
        dw = port.data_width
        aw = port.address_width
        self.sink = sink = stream.Endpoint(word_layout(dw))
        # Configuration.
        self.ring_word   = Signal(aw)          # Ring start (DRAM port word address).
        self.ring_slots  = Signal(bits_for(slots))
        self.chunk_words = Signal(32)
        # Control.
        self.restart     = Signal()
        self.open        = Signal()            # The input is accepted.
        self.pad         = Signal()            # Input closed: pad the partial chunk with zeros.
        self.drop_partial = Signal()           # Pulse (input closed): drop the partial chunk.
        self.freed       = Signal(CHUNK_BITS)  # Chunks whose slot is free again (NVMe Write done).
        # Status.
        self.accept      = Signal()            # A word was accepted this cycle.
        self.filling     = Signal(CHUNK_BITS)  # Chunk the input fills.
        self.partial     = Signal()            # The filling chunk holds words.
        self.word_last   = Signal()            # The next word completes the filling chunk.
        self.filled      = Signal(CHUNK_BITS)  # Chunks entirely handed to LiteDRAM.
        self.padding     = Signal()
        self.idle        = Signal()            # No word on its way to LiteDRAM.
        self.room        = Signal()            # The filling chunk's slot is free.

        # # #

        # Input side: words into the FIFO (block RAM, no output register), in chunk order.
        self.fifo = fifo = RAMFIFO([("data", dw)], fifo_depth)
        in_word = Signal(32)
        self.comb += [
            self.partial.eq(in_word != 0),
            self.word_last.eq(in_word + 1 == self.chunk_words),
            self.room.eq((self.filling - self.freed) < self.ring_slots),
            self.padding.eq(self.pad & (in_word != 0)),
            self.accept.eq(sink.valid & sink.ready),
            sink.ready.eq(self.open & self.room & fifo.sink.ready),
            fifo.sink.valid.eq(self.accept | (self.padding & fifo.sink.ready)),
            fifo.sink.data.eq(Mux(self.padding, 0, sink.data)),
        ]
        self.sync += If(self.restart,
            in_word.eq(0),
            self.filling.eq(0),
        ).Elif(self.drop_partial,
            in_word.eq(0),
        ).Elif(fifo.sink.valid & fifo.sink.ready,
            If(in_word + 1 == self.chunk_words,
                in_word.eq(0),
                self.filling.eq(self.filling + 1),
            ).Else(
                in_word.eq(in_word + 1)
            )
        )

        # Output side: FIFO -> DMA writer at the slot's address; a chunk is filled once its words
        # were taken by LiteDRAM (wdata).
        self.dma = dma = LiteDRAMDMAWriter(port, fifo_depth=16)
        self.out = out = RingPointer(slots)
        out_word = Signal(32)
        com_word = Signal(32)
        self.comb += [
            out.ring_slots.eq(self.ring_slots),
            out.chunk_words.eq(self.chunk_words),
            out.restart.eq(self.restart),
            dma.sink.valid.eq(fifo.source.valid),
            dma.sink.address.eq(self.ring_word + out.word + out_word),
            dma.sink.data.eq(fifo.source.data),
            fifo.source.ready.eq(dma.sink.ready),
            out.advance.eq(dma.sink.valid & dma.sink.ready & (out_word + 1 == self.chunk_words)),
            self.idle.eq((fifo.level == 0) & ~dma.fifo.source.valid),
        ]
        self.sync += [
            If(self.restart,
                out_word.eq(0),
            ).Elif(dma.sink.valid & dma.sink.ready,
                If(out_word + 1 == self.chunk_words, out_word.eq(0)).Else(out_word.eq(out_word + 1))
            ),
            If(self.restart,
                com_word.eq(0),
                self.filled.eq(0),
            ).Elif(port.wdata.valid & port.wdata.ready,
                If(com_word + 1 == self.chunk_words,
                    com_word.eq(0),
                    self.filled.eq(self.filled + 1),
                ).Else(
                    com_word.eq(com_word + 1)
                )
            ),
        ]

# DRAM Word Reader ---------------------------------------------------------------------------------

class DRAMWordReader(LiteXModule):
    """Reads words of a LiteDRAM native port, in order, into a block-RAM FIFO without an output
    register: a read is issued only with room reserved for its word (``depth`` words in flight or
    waiting). ``sink``: word addresses; ``source``: the words."""
    def __init__(self, port, depth):
        self.sink   = sink   = stream.Endpoint([("address", port.address_width)])
        self.source = source = stream.Endpoint([("data", port.data_width)])

        # # #

        self.fifo = fifo = RAMFIFO([("data", port.data_width)], depth)
        reserved = Signal(max=depth + 1)
        room     = Signal()
        issue    = Signal()
        self.comb += [
            room.eq(reserved != depth),
            port.cmd.valid.eq(sink.valid & room),
            port.cmd.we.eq(0),
            port.cmd.addr.eq(sink.address),
            port.cmd.last.eq(1),
            sink.ready.eq(port.cmd.ready & room),
            issue.eq(port.cmd.valid & port.cmd.ready),
            fifo.sink.valid.eq(port.rdata.valid),
            fifo.sink.data.eq(port.rdata.data),
            port.rdata.ready.eq(1),
            fifo.source.connect(source),
        ]
        self.sync += reserved.eq(reserved + issue - (source.valid & source.ready))

# Ring Reader --------------------------------------------------------------------------------------

class RingReader(LiteXModule):
    def __init__(self, port, slots, fifo_depth=64):
        dw = port.data_width
        aw = port.address_width
        wbytes = dw//8
        self.source = source = stream.Endpoint(word_layout(dw))
        # Configuration.
        self.ring_word   = Signal(aw)
        self.chunk_words = Signal(32)
        self.total_bytes = Signal(BYTE_BITS)   # Bytes handed out in all (the rest is padding).
        # Control.
        self.restart     = Signal()
        self.enable      = Signal()
        self.flush       = Signal()            # Discard the words coming out (after an error).
        self.done        = Signal()            # The slot tracker: the chunk being read completed.
        self.slot_word   = Signal(32)          # Its slot's offset (DRAM words, the tracker's walk).
        # Status.
        self.advance     = Signal()            # Pulse: the next chunk (the tracker's walk moves).
        self.freed       = Signal(CHUNK_BITS)  # Chunks entirely handed out (slots free).
        self.bytes_out   = Signal(BYTE_BITS)
        self.idle        = Signal()

        # # #

        self.dma = dma = DRAMWordReader(port, fifo_depth)
        rd_word  = Signal(32)
        out_word = Signal(32)
        pending  = Signal(max=fifo_depth + 2)   # Reads issued whose words are not out yet.
        issue    = Signal()
        take     = Signal()
        self.comb += [
            dma.sink.valid.eq(self.enable & self.done),
            dma.sink.address.eq(self.ring_word + self.slot_word + rd_word),
            issue.eq(dma.sink.valid & dma.sink.ready),
            self.advance.eq(issue & (rd_word + 1 == self.chunk_words)),
            take.eq(dma.source.valid & (source.ready | self.flush | (self.bytes_out >= self.total_bytes))),
            dma.source.ready.eq(take),
            self.idle.eq(pending == 0),
        ]
        # Words out, the last one carries `last` and the bytes left; padding words are discarded.
        rest = Signal(BYTE_BITS)
        self.comb += [
            rest.eq(self.total_bytes - self.bytes_out),
            source.valid.eq(dma.source.valid & ~self.flush & (self.bytes_out < self.total_bytes)),
            source.data.eq(dma.source.data),
            source.bytes.eq(Mux(rest < wbytes, rest, wbytes)),
            source.last.eq(rest <= wbytes),
        ]
        self.sync += [
            If(self.restart,
                rd_word.eq(0), out_word.eq(0), pending.eq(0), self.freed.eq(0), self.bytes_out.eq(0),
            ).Else(
                If(issue,
                    If(rd_word + 1 == self.chunk_words, rd_word.eq(0)).Else(rd_word.eq(rd_word + 1))
                ),
                If(issue & ~take, pending.eq(pending + 1)).Elif(~issue & take, pending.eq(pending - 1)),
                If(take,
                    If(source.valid, self.bytes_out.eq(self.bytes_out + source.bytes)),
                    If(out_word + 1 == self.chunk_words,
                        out_word.eq(0),
                        self.freed.eq(self.freed + 1),
                    ).Else(
                        out_word.eq(out_word + 1)
                    )
                ),
            ),
        ]
