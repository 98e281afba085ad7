#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""PCIe root-complex definitions and the two building blocks every direction of the datapath uses:
the dword aligner and the RAM FIFO.

Beats on the PHY side use LitePCIe's ``phy_layout`` (``dat``, ``be``; ``first``/``last``): a TLP is
its header dwords (as values) followed by its payload dwords, packed from dword 0 of its first beat.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from literecorder.cores.common import ram_style_attr # noqa: F401 -- (also used from here)

# Constants (defined once; exported to the BIOS by soc.recorder.add_nvme_port) ---------------------

# Completion status.
CPL_SC  = 0b000
CPL_UR  = 0b001
CPL_CRS = 0b010
CPL_CA  = 0b011

# Requester/completer ID of the root port (bus 0, device 0, function 0).
ROOT_ID = 0x0000

# Reset values of the root-complex controls.
MPS_LOG2_RESET    = 8       # 256 B until the BIOS programs the negotiated Max Payload Size.
REQ_TIMEOUT_RESET = 2**20   # Completion timeout of the requester (sys_clk cycles).

# Fmt/Type of the TLP kinds the root complex tells apart (dword 0 bits 30:24).
FMT_TYPE_MEM = 0b00000      # Type of MRd/MWr (Fmt: bit 6 = with data, bit 5 = 4-dword header).
FMT_TYPE_CPL = 0b01010      # Type of Cpl/CplD.

# Checks -------------------------------------------------------------------------------------------

def check_data_width(data_width, minimum=64):
    allowed = [w for w in (64, 128, 256, 512) if w >= minimum]
    if data_width not in allowed:
        raise ValueError(f"data_width={data_width}: allowed are {', '.join(map(str, allowed))} bits")

def dword_swap(dat, ndw, endianness):
    """Payload dwords in the PHY's byte order: each dword byte-reversed on a "big"-endian PHY
    (LitePCIe's S7 convention: header dwords are values, payload dwords keep the wire order)."""
    if endianness == "little":
        return dat
    return Cat(*[Cat(*[dat[32*i + 8*b:32*i + 8*b + 8] for b in reversed(range(4))]) for i in range(ndw)])

def be_of_dwords(dwords):
    """Byte enables (4 per dword) of a dword-valid vector."""
    return Cat(*[Replicate(dwords[i], 4) for i in range(len(dwords))])

# Dword Aligner ------------------------------------------------------------------------------------

def aligner_cmd_layout(ndw):
    return [
        ("in_offset",  bits_for(ndw - 1)),  # Dword of the first input beat where the packet starts.
        ("out_offset", bits_for(ndw - 1)),  # Dword of the first output beat where it must start.
        ("length",     11),                  # Dwords (1..1024).
    ]

class DwordAligner(LiteXModule):
    """Moves a packet of ``length`` dwords from dword ``in_offset`` of the input beats to dword
    ``out_offset`` of the output beats: the one re-alignment shifter of the root complex, used once
    per direction (TX: window data -> completion payload after its header; RX: write payload after
    its header -> window beats).

    ::

        cmd (in_offset, out_offset, length) ----------------+  (acknowledged at the packet's end)
        sink beats ---> [prev] --+--> Cat(prev[ndw-k:], cur[:ndw-k]) --> source beats (+ dwords)
                     cur --------+

    ``cmd`` stays valid during its packet and is acknowledged with the last output beat, so the
    aligner keeps no copy of it; ``sink`` gives exactly ceil((in_offset + length)/ndw) beats.
    ``source.dwords`` flags the output dwords holding the packet (the others are don't-care).
    """
    def __init__(self, data_width):
        check_data_width(data_width, minimum=128)
        dw   = data_width
        ndw  = dw//32
        lbit = log2_int(ndw)
        self.cmd    = cmd    = stream.Endpoint(aligner_cmd_layout(ndw))
        self.sink   = sink   = stream.Endpoint([("dat", dw)])
        self.source = source = stream.Endpoint([("dat", dw), ("dwords", ndw)])

        # # #

        # Packet geometry (from the held command).
        k      = Signal(lbit)        # Dwords of an output beat taken from the previous input beat.
        prime  = Signal()            # The first output beat needs two input beats.
        n_in   = Signal(10)
        n_out  = Signal(10)
        end    = Signal(lbit + 1)    # Dwords of the last output beat (1..ndw).
        diff   = Signal(lbit + 1)    # out_offset - in_offset: its borrow says `prime`.
        self.comb += [
            diff.eq(cmd.out_offset - cmd.in_offset),
            k.eq(diff[:lbit]),
            prime.eq(diff[lbit]),
            n_in.eq((cmd.in_offset  + cmd.length + ndw - 1) >> lbit),
            n_out.eq((cmd.out_offset + cmd.length + ndw - 1) >> lbit),
            end.eq((cmd.out_offset + cmd.length - 1)[:lbit] + 1),
        ]

        # Progress: input beats consumed, output beats sent (both 0 between packets).
        c     = Signal(10)
        j     = Signal(10)
        prev  = Signal(dw, reset_less=True)
        have  = Signal()             # An input beat remains for the current output beat.
        pre   = Signal()             # Priming: the first input beat goes to `prev` only.
        self.comb += [
            have.eq(c != n_in),
            pre.eq(prime & (c == 0)),
        ]
        cases = {0: source.dat.eq(sink.dat)}
        for i in range(1, ndw):
            cases[i] = source.dat.eq(Cat(prev[32*(ndw - i):], sink.dat[:32*(ndw - i)]))
        self.comb += Case(k, cases)

        self.comb += [
            source.first.eq(j == 0),
            source.last.eq(j == n_out - 1),
            If(cmd.valid,
                If(pre,
                    sink.ready.eq(1),
                ).Elif(have,
                    source.valid.eq(sink.valid),
                    sink.ready.eq(source.ready),
                ).Else(
                    source.valid.eq(1),   # Tail: the rest of the previous input beat.
                ),
            ),
            cmd.ready.eq(source.valid & source.ready & source.last),
        ]
        for i in range(ndw):
            # (The last dword of a beat is always at or after the start offset.)
            at_start = (i >= cmd.out_offset) if i < ndw - 1 else Constant(1, 1)
            self.comb += source.dwords[i].eq((~source.first | at_start) & (~source.last | (i < end)))
        self.sync += [
            If(sink.valid & sink.ready,
                prev.eq(sink.dat),
                c.eq(c + 1),
            ),
            If(source.valid & source.ready,
                j.eq(j + 1),
            ),
            If(cmd.ready,
                c.eq(0),
                j.eq(0),
            ),
        ]
