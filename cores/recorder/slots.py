#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Slot tracker: which chunks of the ring have completed their NVMe command, in a memory.

The tracker follows the DRAM tier of the ring (``ring.py``): the ``j``-th chunk that went to DRAM
lives in slot ``j mod ring_slots``, in lap ``j div ring_slots``; its command carries ``id = lap
parity << 15 | slot`` (bit 14 clear; ids with bit 14 set are on-chip slots, ``ONCHIP_ID``). A completion writes ``(1, lap parity)`` at its slot (two bits);
chunk ``k`` is done when its slot holds ``(1, parity of its lap)``: the slot's previous chunk
(``k - ring_slots``) has the other parity, so nothing needs clearing between uses; the memory is
cleared once per recording (``clear``: one slot per cycle). Completions may come in any order; the
consumer walks the chunks in order (``slot``/``done``).
"""

from migen import *

from litex.gen import *

from literecorder.cores.recorder.common import ID_BITS, CHUNK_BITS

# Ring pointer -------------------------------------------------------------------------------------

class RingPointer(LiteXModule):
    """A chunk of the ring, walked in order: its number ``count``, ``slot`` and lap ``parity``, the
    slot's offset in DRAM words (``word``) and in bytes (``byte``), and the command ``id``."""
    def __init__(self, slots, word_bits=32, id_bits=ID_BITS):
        sbits = bits_for(slots - 1)
        # Configuration.
        self.ring_slots  = Signal(sbits + 1)
        self.chunk_words = Signal(word_bits)
        self.chunk_bytes = Signal(32)
        # Control.
        self.restart = Signal()
        self.advance = Signal()
        # State.
        self.count  = Signal(CHUNK_BITS)
        self.slot   = Signal(sbits)
        self.parity = Signal()
        self.word   = Signal(word_bits)
        self.byte   = Signal(32)
        self.id     = Signal(id_bits)

        # # #

        self.comb += self.id.eq(Cat(self.slot, *([Constant(0, id_bits - 1 - sbits)] if id_bits - 1 > sbits else []),
            self.parity))
        self.sync += If(self.restart,
            self.count.eq(0), self.slot.eq(0), self.parity.eq(0), self.word.eq(0), self.byte.eq(0),
        ).Elif(self.advance,
            self.count.eq(self.count + 1),
            If(self.slot + 1 == self.ring_slots,
                self.slot.eq(0), self.parity.eq(~self.parity), self.word.eq(0), self.byte.eq(0),
            ).Else(
                self.slot.eq(self.slot + 1),
                self.word.eq(self.word + self.chunk_words),
                self.byte.eq(self.byte + self.chunk_bytes),
            )
        )

# Slot tracker -------------------------------------------------------------------------------------

class SlotTracker(LiteXModule):
    """Parameters
    ----------
    slots : int
        Ring slots at most (the memory depth); fewer may be used (``ring_slots``).
    id_bits : int
        Width of ``mark_id`` (the lap parity is its top bit). With the commands' ids (``ID_BITS``)
        bit 14 tells on-chip slots apart: fewer than 2**14 slots; a tracker of its own ids (the
        ring's chunk tracker) may use 2**(id_bits - 1).
    """
    def __init__(self, slots, id_bits=ID_BITS):
        most = 2**(ID_BITS - 2) - 1 if id_bits == ID_BITS else 2**(id_bits - 1)
        if slots < 2 or slots > most:
            raise ValueError(f"SlotTracker: {slots} slots: 2 to {most} are allowed")
        sbits = bits_for(slots - 1)
        self.ring_slots = Signal(sbits + 1)    # Slots in use (2 .. slots).
        # Clear (before a recording).
        self.clear      = Signal()             # Pulse: clear ring_slots entries.
        self.clearing   = Signal()
        # Completions.
        self.mark       = Signal()             # Pulse: the command of `mark_id` completed.
        self.mark_id    = Signal(id_bits)      # Lap parity (top bit) and slot.
        # In-order walk (a ring pointer of the owner: restart/advance drive it).
        self.ptr        = ptr = RingPointer(slots, id_bits=id_bits)
        self.done       = Signal()             # The walk's chunk has completed.

        # # #

        mem = Memory(2, slots)
        wr  = mem.get_port(write_capable=True)
        # Synchronous read: data one cycle after the address, the old data when a completion is written
        # to it in that cycle (READ_FIRST: no bypass around the memory; seen one cycle later).
        rd  = mem.get_port(mode=READ_FIRST)
        self.specials += mem, wr, rd

        clr  = Signal(sbits + 1)
        self.comb += self.clearing.eq(clr != 0)
        self.sync += If(self.clear,
            clr.eq(self.ring_slots)
        ).Elif(clr != 0,
            clr.eq(clr - 1)
        )
        self.comb += If(self.clearing,
            wr.adr.eq(clr - 1),
            wr.dat_w.eq(0),
            wr.we.eq(1),
        ).Else(
            wr.adr.eq(self.mark_id[:sbits]),
            wr.dat_w.eq(Cat(self.mark_id[id_bits - 1], 1)),
            wr.we.eq(self.mark),
        )

        # In-order walk: the read is valid one cycle after the address settled (`fresh`).
        fresh = Signal()
        self.comb += [
            ptr.ring_slots.eq(self.ring_slots),
            rd.adr.eq(ptr.slot),
            self.done.eq(fresh & ~self.clearing & (rd.dat_r == Cat(ptr.parity, 1))),
        ]
        self.sync += fresh.eq(~(ptr.restart | ptr.advance))
