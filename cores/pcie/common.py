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
from litex.soc.interconnect.packet import Header, HeaderField

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

# Type of the TLP kinds the root complex tells apart (the header's `type` field).
FMT_TYPE_MEM = 0b00000      # MRd/MWr (`fmt`: bit 1 = with data, bit 0 = 4-dword header).
FMT_TYPE_CPL = 0b01010      # Cpl/CplD.
TYPE_CFG0    = 0b00100      # CfgRd0/CfgWr0.

# TLP headers --------------------------------------------------------------------------------------
#
# One table per header, in LitePCIe's HeaderField terms (byte = 4 x the dword, bit offset in that
# dword, width), for headers laid out as in ``phy_layout`` beats: dword i (a value, PCIe Base spec
# bit numbering) at bits 32*i..32*i+31. Every module that builds or reads a header goes through
# these tables with tlp_get (a field's bits), tlp_set (statements setting fields) or tlp_image
# (a header with the given fields, zeros elsewhere).

def _field(dword, offset, width):
    return HeaderField(byte=4*dword, offset=offset, width=width)

_DW0 = {
    "length": _field(0,  0, 10),    # Dwords (0: 1024).
    "at":     _field(0, 10,  2),    # Address Type.
    "attr":   _field(0, 12,  2),    # Attr[1:0]: No Snoop (bit 12), Relaxed Ordering (bit 13).
    "ep":     _field(0, 14,  1),    # Poisoned.
    "td":     _field(0, 15,  1),    # TLP Digest.
    "th":     _field(0, 16,  1),    # TLP Processing Hints.
    "attr2":  _field(0, 18,  1),    # Attr[2]: ID-Based Ordering.
    "tc":     _field(0, 20,  3),    # Traffic Class.
    "type":   _field(0, 24,  5),
    "fmt":    _field(0, 29,  3),    # Bit 0: 4-dword header, bit 1: with data, bit 2: prefix.
}

_DW1_REQUEST = {
    "first_be":     _field(1,  0,  4),
    "last_be":      _field(1,  4,  4),
    "tag":          _field(1,  8,  8),
    "requester_id": _field(1, 16, 16),
}

REQUEST_HEADER = Header(fields={**_DW0, **_DW1_REQUEST,
    "adr_3dw":      _field(2,  2, 30),  # 3-dword header: address bits 31:2.
    "adr_hi":       _field(2,  0, 32),  # 4-dword header: address bits 63:32,
    "adr_lo":       _field(3,  2, 30),  # and 31:2.
}, length=16, swap_field_bytes=False)

CONFIG_HEADER = Header(fields={**_DW0, **_DW1_REQUEST,
    "register":     _field(2,  2, 10),  # Extended Register and Register Number (ECAM bits 11:2).
    "function":     _field(2, 16,  3),
    "device":       _field(2, 19,  5),
    "bus":          _field(2, 24,  8),
}, length=12, swap_field_bytes=False)

COMPLETION_HEADER = Header(fields={**_DW0,
    "byte_count":    _field(1,  0, 12),
    "bcm":           _field(1, 12,  1),
    "status":        _field(1, 13,  3),
    "completer_id":  _field(1, 16, 16),
    "lower_address": _field(2,  0,  7),
    "tag":           _field(2,  8,  8),
    "requester_id":  _field(2, 16, 16),
}, length=12, swap_field_bytes=False)

def _span(header, name):
    f = header.fields[name]
    start = 8*f.byte + f.offset
    return start, f.width

def tlp_get(dat, header, name):
    """The bits of field ``name`` in ``dat`` (header dwords from bit 0)."""
    start, width = _span(header, name)
    return dat[start:start + width]

def tlp_set(sig, header, **values):
    """Statements setting the given fields of ``sig`` (expressions or integers)."""
    return [tlp_get(sig, header, name).eq(v) for name, v in values.items()]

def tlp_image(header, dwords, **values):
    """A header of ``dwords`` dwords with the given fields (expressions or integers; a narrower
    expression is zero-extended) and zeros elsewhere, as one expression."""
    pieces = sorted((_span(header, name) + (v,) for name, v in values.items()), key=lambda p: p[0])
    out, pos = [], 0
    for start, width, v in pieces:
        if start < pos:
            raise ValueError(f"tlp_image: overlapping fields at bit {start}")
        if start > pos:
            out.append(Constant(0, start - pos))
        if isinstance(v, int):
            out.append(Constant(v, width))
        else:
            n = len(v)
            out.append(v[:width] if n >= width else Cat(v, Constant(0, width - n)))
        pos = start + width
    if pos > 32*dwords:
        raise ValueError(f"tlp_image: fields beyond {dwords} dwords")
    if pos < 32*dwords:
        out.append(Constant(0, 32*dwords - pos))
    return Cat(*out)

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

def aligner_geometry_layout(ndw):
    """A packet's geometry in the ``DwordAligner``, derived from its command (``aligner_geometry``)."""
    lbit = log2_int(ndw)
    return [
        ("n_in",   10),         # Input beats of the packet.
        ("last_j", 10),         # Index of the last output beat (output beats - 1).
        ("end",    lbit + 1),   # Dwords of the last output beat (1..ndw).
    ]

def aligner_geometry(ndw, in_offset, out_offset, length):
    """The one definition of a packet's geometry: ``{field: expression}`` of
    ``aligner_geometry_layout``. The aligner computes it from its command, or takes it from a
    register its user loads ahead (``DwordAligner(geometry="cmd")``) to keep the adders off the
    beat path."""
    lbit = log2_int(ndw)
    return {
        "n_in":  (in_offset  + length + ndw - 1) >> lbit,
        "last_j": (out_offset + length - 1) >> lbit,
        "end":   (out_offset + length - 1)[:lbit] + 1,
    }

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
    With ``geometry="cmd"`` the command also carries the packet's geometry
    (``aligner_geometry_layout``, computed by the user with ``aligner_geometry`` into registers).
    """
    def __init__(self, data_width, geometry="comb"):
        check_data_width(data_width, minimum=128)
        if geometry not in ("comb", "cmd"):
            raise ValueError(f"DwordAligner: geometry={geometry!r}: 'comb' (from the command) or 'cmd' (with it)")
        dw   = data_width
        ndw  = dw//32
        lbit = log2_int(ndw)
        layout = aligner_cmd_layout(ndw) + (aligner_geometry_layout(ndw) if geometry == "cmd" else [])
        self.cmd    = cmd    = stream.Endpoint(layout)
        self.sink   = sink   = stream.Endpoint([("dat", dw)])
        self.source = source = stream.Endpoint([("dat", dw), ("dwords", ndw)])

        # # #

        # Packet geometry (from the held command).
        k      = Signal(lbit)        # Dwords of an output beat taken from the previous input beat.
        prime  = Signal()            # The first output beat needs two input beats.
        n_in   = Signal(10)
        last_j = Signal(10)          # Index of the last output beat.
        end    = Signal(lbit + 1)    # Dwords of the last output beat (1..ndw).
        diff   = Signal(lbit + 1)    # out_offset - in_offset: its borrow says `prime`.
        geo = aligner_geometry(ndw, cmd.in_offset, cmd.out_offset, cmd.length)
        if geometry == "cmd":
            geo = {name: getattr(cmd, name) for name in geo}
        self.comb += [
            diff.eq(cmd.out_offset - cmd.in_offset),
            k.eq(diff[:lbit]),
            prime.eq(diff[lbit]),
            n_in.eq(geo["n_in"]),
            last_j.eq(geo["last_j"]),
            end.eq(geo["end"]),
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
            source.last.eq(j == last_j),
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
