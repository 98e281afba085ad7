#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Store-and-forward packet FIFO of the root-port PHYs.

The UltraScale(+) integrated blocks take a packet on RQ/CC only as an unbroken run of beats: PG156
("Requester Memory Write Operation", "Completions with Error Status UR and CA") and PG213: "the user
application must keep the s_axis_rq_tvalid [s_axis_cc_tvalid] signal asserted over the duration of
the packet. The integrated block treats the deassertion ... during the packet transfer as an error,
and nullifies the corresponding TLP". On RC/CQ they mark a packet whose payload they could not read
back from their own memories with ``discontinue`` in its *last* beat, and the user must then
discard the whole packet (PG156 "Aborting a Completion Transfer"). Both need the packet whole
before any of it is passed on: ``PacketFIFO`` writes beats as they come and makes them readable only
when the last beat of their packet is in (commit), or forgets the packet (rollback).

::

    sink --> [ memory: committed packets | packet being written ] --> source
               ^ rd_ptr        commit_ptr ^            wr_ptr ^
               last beat in:  commit_ptr <- wr_ptr     (the packet becomes readable)
               last beat with discard, or the packet longer than the FIFO: wr_ptr <- commit_ptr

The source presents a packet only once it is complete, so its beats leave on consecutive cycles
(only the receiver's ``ready`` may stretch them), from a registered read port: the block's interface
is driven from flip-flops. Sizing rule (``packet_fifo_depth``): at least two packets of the largest
size, so that one packet is written while the previous one is read and back-to-back packets keep
the full rate.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

# Sizing -------------------------------------------------------------------------------------------

def packet_beats(payload_bytes, descriptor_bytes, data_width):
    """Beats of a packet made of a descriptor (or TLP header) and a payload, at ``data_width`` bits."""
    bytes_per_beat = data_width//8
    return -(-(descriptor_bytes + payload_bytes)//bytes_per_beat)

def packet_fifo_depth(payload_bytes, descriptor_bytes, data_width):
    """Depth (beats, a power of two) holding at least two packets of the largest size."""
    need  = 2*packet_beats(payload_bytes, descriptor_bytes, data_width)
    depth = 2
    while depth < need:
        depth *= 2
    return depth

# Packet FIFO --------------------------------------------------------------------------------------

class PacketFIFO(LiteXModule):
    """Store-and-forward FIFO of whole packets (see the module docstring).

    ``discard`` is sampled on every beat written; a packet with ``discard`` on any of its beats is
    forgotten when its last beat comes (``discarded`` pulses). A packet longer than ``depth`` beats
    can never be whole here: it is forgotten too, its remaining beats accepted and dropped
    (``overflowed`` pulses on its last beat), so the FIFO never waits forever for it.

    Parameters
    ----------
    description : stream.EndpointDescription
        Layout of ``sink`` and ``source``; every payload field is stored, with ``last``.
    depth : int
        Capacity in beats, a power of two, at least 2 (``packet_fifo_depth``).
    """
    def __init__(self, description, depth):
        if not (isinstance(depth, int) and depth >= 2 and (depth & (depth - 1)) == 0):
            raise ValueError(f"PacketFIFO depth must be a power of two, at least 2, not {depth!r}.")
        self.sink       = sink   = stream.Endpoint(description)
        self.source     = source = stream.Endpoint(description)
        self.discard    = Signal() # In:  with a beat of ``sink``: forget its packet.
        self.discarded  = Signal() # Out: pulse, a packet was forgotten because of ``discard``.
        self.overflowed = Signal() # Out: pulse, a packet longer than ``depth`` was dropped.
        self.depth      = depth

        # # #

        aw = log2_int(depth)
        fields  = [getattr(sink, name) for name, _ in description.payload_layout]
        ofields = [getattr(source, name) for name, _ in description.payload_layout]
        width   = sum(len(f) for f in fields) + 1

        # Not an attribute: LiteX would map an attribute Memory into the CSR space.
        mem    = Memory(width, depth)
        wrport = mem.get_port(write_capable=True)
        rdport = mem.get_port(has_re=True, mode=READ_FIRST) # Output register: holds while not ready.
        self.specials += mem, wrport, rdport

        # Pointers (one bit more than the address: full and empty differ).
        wr_ptr     = Signal(aw + 1) # Next beat written.
        commit_ptr = Signal(aw + 1) # End of the last complete packet.
        rd_ptr     = Signal(aw + 1) # Next beat read.

        # Write side.
        full     = Signal()
        too_long = Signal() # All that is stored belongs to the packet being written (with full:
                            # the packet is longer than the FIFO).
        dropping = Signal() # Swallowing the rest of a packet longer than the FIFO.
        bad      = Signal() # ``discard`` seen on an earlier beat of the packet being written.
        write    = Signal()
        self.comb += [
            full.eq((wr_ptr[:aw] == rd_ptr[:aw]) & (wr_ptr[aw] != rd_ptr[aw])),
            too_long.eq(commit_ptr == rd_ptr),
            sink.ready.eq(dropping | ~full | too_long),
            write.eq(sink.valid & ~dropping & ~full),
            wrport.adr.eq(wr_ptr[:aw]),
            wrport.dat_w.eq(Cat(*fields, sink.last)),
            wrport.we.eq(write),
        ]
        self.sync += [
            self.discarded.eq(0),
            self.overflowed.eq(0),
            If(sink.valid & sink.ready,
                If(dropping | full,
                    # Longer than the FIFO: forget what was written, drop up to the last beat.
                    wr_ptr.eq(commit_ptr),
                    dropping.eq(~sink.last),
                    bad.eq(0),
                    self.overflowed.eq(sink.last),
                ).Elif(sink.last,
                    If(bad | self.discard,
                        wr_ptr.eq(commit_ptr),
                        self.discarded.eq(1),
                    ).Else(
                        wr_ptr.eq(wr_ptr + 1),
                        commit_ptr.eq(wr_ptr + 1),
                    ),
                    bad.eq(0),
                ).Else(
                    wr_ptr.eq(wr_ptr + 1),
                    bad.eq(bad | self.discard),
                )
            )
        ]

        # Read side: only committed beats, into the read port's register.
        load     = Signal()
        in_packet = Signal() # The beat on ``source`` is not the first of its packet.
        self.comb += [
            load.eq((rd_ptr != commit_ptr) & (~source.valid | source.ready)),
            rdport.adr.eq(rd_ptr[:aw]),
            rdport.re.eq(load),
            Cat(*ofields, source.last).eq(rdport.dat_r),
            source.first.eq(~in_packet),
        ]
        self.sync += [
            If(source.valid & source.ready,
                in_packet.eq(~source.last)
            ),
            If(load,
                rd_ptr.eq(rd_ptr + 1),
                source.valid.eq(1),
            ).Elif(source.ready,
                source.valid.eq(0),
            )
        ]
