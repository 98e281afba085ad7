#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-complex TLP layer on top of LitePCIe's PHY interface (``phy_layout`` beats).

LitePCIe's packetizer/depacketizer serve an endpoint: no configuration requests, no byte enables
on requests, completions with one fixed byte count, and beat shifters that assume the lengths an
endpoint sees (payloads of 1 dword or whole beats). The root complex needs any length at any
alignment, 3- and 4-dword headers in both directions and exact byte enables, so its header
inserter and extracter are driven by the Length field of the header::

    requester --+
    doorbells --+--> Arbiter --> RCHeaderInserter --> endianness --> phy.sink
    completer --+

    phy.source --> endianness --> RCHeaderExtracter --> decode --+--> completions (requester)
                                                                +--> memory requests (completer)
                                                                +--> dropped (counted)

Raw TLPs use LitePCIe's ``tlp_raw_layout``: ``fmt`` (Fmt[1:0]: bit 0 = 4-dword header, bit 1 =
with data), ``header`` (4 dwords, dword 0 in bits 31:0, as values), ``dat``/``be`` (payload from
dword 0; ``be`` set for the valid dwords; one beat with ``be`` = 0 for a TLP without payload).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litex.soc.interconnect.packet import Arbiter

from litepcie.common import phy_layout
from litepcie.tlp.common import tlp_raw_layout, dword_endianness_swap

from literecorder.cores.pcie.common import *

# Helpers ------------------------------------------------------------------------------------------

def _bits(sig, lo=0, hi=None):
    """``[sig[lo:hi]]``, or ``[]`` when that slice is empty (Verilog has no zero-width slices, e.g.
    the payload of a 4-dword header's first beat at 128 bits)."""
    hi = len(sig) if hi is None else hi
    return [sig[lo:hi]] if hi > lo else []

def _cat(*parts):
    """Cat of the non-empty parts (a part may be a list from ``_bits``); 0 when all are empty."""
    flat = []
    for p in parts:
        flat += p if isinstance(p, list) else [p]
    return Cat(*flat) if flat else Constant(0, 1)

def _dw(sig, i):
    return sig[32*i:32*(i+1)]

def _valid_dws_be(n, ndw):
    """Byte enables of a beat whose first ``n`` dwords are valid (``n`` >= ndw: all)."""
    be = Signal(4*ndw)
    cases = {i: be.eq((1 << (4*i)) - 1) for i in range(ndw)}
    cases["default"] = be.eq((1 << (4*ndw)) - 1)
    return be, Case(n, cases)

def _length_dws(header):
    """Payload dwords of a raw TLP header (0 without data, 1024 for Length = 0)."""
    dw0 = header[:32]
    return Mux(dw0[30], Mux(dw0[:10] == 0, 1024, dw0[:10]), 0)

# Header Inserter ----------------------------------------------------------------------------------

class RCHeaderInserter(LiteXModule):
    """Raw TLP (header + dword-0-aligned payload) -> PHY beats (header then payload)."""
    def __init__(self, data_width):
        check_data_width(data_width)
        if data_width < 128:
            raise ValueError(f"data_width={data_width}: the root complex needs >= 128-bit beats")
        ndw = data_width//32
        self.sink   = sink   = stream.Endpoint(tlp_raw_layout(data_width))
        self.source = source = stream.Endpoint(phy_layout(data_width))

        # # #

        h4       = Signal()        # 4-dword header.
        n        = Signal(11)      # Payload dwords.
        n_in     = Signal(8)       # Input beats (>= 1).
        n_out    = Signal(8)       # Output beats.
        in_left  = Signal(8)
        out_left = Signal(8)
        total    = Signal(12)
        prev     = Signal(data_width, reset_less=True)
        prev_h4  = Signal()
        self.comb += [
            h4.eq(sink.fmt[0]),
            n.eq(_length_dws(sink.header)),
            n_in.eq(Mux(n == 0, 1, (n + ndw - 1) >> log2_int(ndw))),
            total.eq(n + 3 + h4),
            n_out.eq((total + ndw - 1) >> log2_int(ndw)),
        ]

        first_dat = Signal(data_width)
        body_dat  = Signal(data_width)
        self.comb += Case(h4, {
            0: first_dat.eq(_cat(sink.header[:96],  _bits(sink.dat, 0, 32*(ndw - 3)))),
            1: first_dat.eq(_cat(sink.header[:128], _bits(sink.dat, 0, 32*(ndw - 4)))),
        })
        self.comb += Case(prev_h4, {
            0: body_dat.eq(_cat(prev[32*(ndw - 3):], _bits(sink.dat, 0, 32*(ndw - 3)))),
            1: body_dat.eq(_cat(prev[32*(ndw - 4):], _bits(sink.dat, 0, 32*(ndw - 4)))),
        })
        tail_dat = Signal(data_width)
        self.comb += Case(prev_h4, {
            0: tail_dat.eq(prev[32*(ndw - 3):]),
            1: tail_dat.eq(prev[32*(ndw - 4):]),
        })

        # Output byte enables from the dwords left to send.
        dws_left  = Signal(13)
        first_be, first_case = _valid_dws_be(total, ndw)
        left_be,  left_case  = _valid_dws_be(dws_left, ndw)
        self.comb += [first_case, left_case]

        self.fsm = fsm = FSM(reset_state="FIRST")
        fsm.act("FIRST",
            source.valid.eq(sink.valid),
            source.first.eq(1),
            source.dat.eq(first_dat),
            source.be.eq(first_be),
            source.last.eq(n_out == 1),
            sink.ready.eq(source.ready),
            If(sink.valid & source.ready,
                NextValue(prev, sink.dat),
                NextValue(prev_h4, h4),
                NextValue(in_left, n_in - 1),
                NextValue(out_left, n_out - 1),
                NextValue(dws_left, total - ndw),
                If(n_out != 1, NextState("BODY")),
            )
        )
        fsm.act("BODY",
            source.be.eq(left_be),
            source.last.eq(out_left == 1),
            If(in_left != 0,
                source.valid.eq(sink.valid),
                source.dat.eq(body_dat),
                sink.ready.eq(source.ready),
            ).Else(
                source.valid.eq(1),
                source.dat.eq(tail_dat),
            ),
            If(source.valid & source.ready,
                If(in_left != 0,
                    NextValue(prev, sink.dat),
                    NextValue(in_left, in_left - 1),
                ),
                NextValue(out_left, out_left - 1),
                NextValue(dws_left, dws_left - ndw),
                If(out_left == 1, NextState("FIRST")),
            )
        )

# Header Extracter ---------------------------------------------------------------------------------

class RCHeaderExtracter(LiteXModule):
    """PHY beats -> raw TLP (header held for the packet, payload aligned on dword 0).

    The payload length comes from the header, not from the beats' byte enables. A TLP whose beats
    end before (truncated) or after (extra data) its Length is flagged with ``malformed`` on its
    last output beat; the extra beats are discarded.
    """
    def __init__(self, data_width):
        check_data_width(data_width)
        if data_width < 128:
            raise ValueError(f"data_width={data_width}: the root complex needs >= 128-bit beats")
        ndw = data_width//32
        self.sink   = sink   = stream.Endpoint(phy_layout(data_width))
        self.source = source = stream.Endpoint(tlp_raw_layout(data_width).payload_layout + [("malformed", 1)])

        # # #

        header   = Signal(128, reset_less=True)
        h4       = Signal()
        n        = Signal(11)
        n_in     = Signal(8)
        n_out    = Signal(8)
        in_left  = Signal(8)
        out_left = Signal(8)
        dws_left = Signal(11)
        bad      = Signal()
        extra    = Signal()
        first_out = Signal()
        prev     = Signal(data_width, reset_less=True)
        hdr_in   = sink.dat[:128]

        self.comb += [
            h4.eq(hdr_in[29]),
            n.eq(_length_dws(hdr_in)),
            n_in.eq((n + 3 + h4 + ndw - 1) >> log2_int(ndw)),
            n_out.eq(Mux(n == 0, 1, (n + ndw - 1) >> log2_int(ndw))),
        ]
        cur_h4 = Signal()
        self.comb += cur_h4.eq(header[29])

        first_dat = Signal(data_width)
        body_dat  = Signal(data_width)
        tail_dat  = Signal(data_width)
        self.comb += Case(h4, {
            0: first_dat.eq(_cat(_bits(sink.dat, 96))),
            1: first_dat.eq(_cat(_bits(sink.dat, 128))),
        })
        self.comb += Case(cur_h4, {
            0: [body_dat.eq(_cat(_bits(prev, 96),  sink.dat[:96])),  tail_dat.eq(_cat(_bits(prev, 96)))],
            1: [body_dat.eq(_cat(_bits(prev, 128), sink.dat[:128])), tail_dat.eq(_cat(_bits(prev, 128)))],
        })

        first_be, first_case = _valid_dws_be(n, ndw)
        left_be,  left_case  = _valid_dws_be(dws_left, ndw)
        self.comb += [first_case, left_case]

        self.fsm = fsm = FSM(reset_state="FIRST")
        # Beat 0: the header; a TLP fitting in one beat is output at once.
        fsm.act("FIRST",
            source.fmt.eq(hdr_in[29:31]),
            source.header.eq(hdr_in),
            source.first.eq(1),
            source.dat.eq(first_dat),
            source.be.eq(first_be),
            If(n_in == 1,
                source.valid.eq(sink.valid),
                source.last.eq(1),
                source.malformed.eq(~sink.last),
                sink.ready.eq(source.ready),
                If(sink.valid & source.ready & ~sink.last,
                    NextState("DRAIN")
                )
            ).Else(
                sink.ready.eq(1),
                If(sink.valid,
                    NextValue(header, hdr_in),
                    NextValue(prev, sink.dat),
                    NextValue(in_left, n_in - 1),
                    NextValue(out_left, n_out),
                    NextValue(dws_left, n),
                    NextValue(bad, 0),
                    NextValue(extra, 0),
                    NextValue(first_out, 1),
                    If(sink.last,
                        # Truncated after its header: emit its (short) payload as malformed.
                        NextValue(bad, 1),
                        NextValue(in_left, 0),
                    ),
                    NextState("BODY"),
                )
            )
        )
        extra_now = Signal()  # Consuming the last expected beat, but the TLP goes on.
        self.comb += extra_now.eq((in_left == 1) & ~sink.last)
        fsm.act("BODY",
            source.fmt.eq(header[29:31]),
            source.header.eq(header),
            source.first.eq(first_out),
            source.be.eq(left_be),
            source.last.eq((out_left == 1) | bad),
            source.malformed.eq(source.last & (bad | extra | ((in_left != 0) & extra_now))),
            If(in_left != 0,
                source.valid.eq(sink.valid),
                source.dat.eq(body_dat),
                sink.ready.eq(source.ready),
            ).Else(
                source.valid.eq(1),
                source.dat.eq(tail_dat),
            ),
            If(source.valid & source.ready,
                NextValue(first_out, 0),
                NextValue(out_left, out_left - 1),
                NextValue(dws_left, dws_left - ndw),
                If(in_left != 0,
                    NextValue(prev, sink.dat),
                    NextValue(in_left, in_left - 1),
                    If(sink.last & (in_left != 1),
                        # Ends early: the next output beat is the last one, flagged.
                        NextValue(bad, 1),
                        NextValue(in_left, 0),
                    ),
                    If(extra_now, NextValue(extra, 1)),
                ),
                If(source.last,
                    If(extra | ((in_left != 0) & extra_now),
                        NextState("DRAIN")
                    ).Else(
                        NextState("FIRST")
                    )
                ),
            )
        )
        # Extra beats after the Length of the TLP: discarded.
        fsm.act("DRAIN",
            sink.ready.eq(1),
            If(sink.valid & sink.last, NextState("FIRST"))
        )

# TX -----------------------------------------------------------------------------------------------

class RCTLPTX(LiteXModule):
    """Arbitrates raw TLPs packet by packet and sends them to the PHY.

    ``get_port()`` returns a ``tlp_raw_layout`` sink (see the module docstring).
    """
    def __init__(self, phy_sink, data_width, endianness="little"):
        check_data_width(data_width)
        self.data_width = data_width
        self.endianness = endianness
        self.phy_sink   = phy_sink
        self.ports      = []

    def get_port(self):
        port = stream.Endpoint(tlp_raw_layout(self.data_width))
        self.ports.append(port)
        return port

    def do_finalize(self):
        dw  = self.data_width
        raw = stream.Endpoint(tlp_raw_layout(dw))
        self.arbiter  = Arbiter(self.ports, raw)
        # Header dwords travel as values, payload dwords in the PHY's byte order ("big": each
        # payload dword byte-reversed, as LitePCIe's S7 PHY expects).
        self.buffer   = buf = stream.Buffer(tlp_raw_layout(dw))
        self.inserter = inserter = RCHeaderInserter(dw)
        self.comb += [
            raw.connect(buf.sink),
            buf.source.connect(inserter.sink, omit={"dat"}),
            inserter.source.connect(self.phy_sink),
        ]
        self.comb += dword_endianness_swap(buf.source.dat, inserter.sink.dat, dw,
            self.endianness, mode="dat")

# RX -----------------------------------------------------------------------------------------------

class RCTLPRX(LiteXModule):
    """Extracts and decodes the TLPs received from the device.

    Outputs: ``req_source`` (memory reads/writes of the device, ``rx_request_layout`` +
    ``malformed``) and ``cpl_source`` (completions, ``rx_completion_layout`` + ``malformed``). Every
    other TLP (messages, configuration requests, I/O, atomics, prefixed TLPs) is dropped and counted
    in ``unsupported``.
    """
    def __init__(self, phy_source, data_width, endianness="little"):
        check_data_width(data_width)
        dw = data_width
        self.req_source  = req_source = stream.Endpoint(rx_request_layout(dw) + [("malformed", 1)])
        self.cpl_source  = cpl_source = stream.Endpoint(rx_completion_layout(dw) + [("malformed", 1)])
        self.unsupported = Signal(32)

        # # #

        self.extracter = extracter = RCHeaderExtracter(dw)
        self.comb += phy_source.connect(extracter.sink)
        src    = extracter.source
        header = src.header

        dat = Signal(dw)
        self.comb += dword_endianness_swap(src.dat, dat, dw, endianness, mode="dat")

        dw0, dw1, dw2, dw3 = [header[32*i:32*(i+1)] for i in range(4)]
        fmt_type = Signal(7)
        length   = Signal(11)
        self.comb += [
            fmt_type.eq(dw0[24:31]),
            length.eq(Mux(dw0[:10] == 0, 1024, dw0[:10])),
        ]
        is_req = Signal()
        is_cpl = Signal()
        self.comb += [
            is_req.eq((fmt_type[:5] == 0b00000) & ~dw0[31]),                 # MRd/MWr 32/64.
            is_cpl.eq((fmt_type[:5] == 0b01010) & ~fmt_type[5] & ~dw0[31]),  # Cpl/CplD.
        ]

        # Requests.
        self.comb += [
            req_source.we.eq(fmt_type[6]),
            req_source.addr64.eq(fmt_type[5]),
            req_source.ep.eq(dw0[14]),
            If(fmt_type[5],
                req_source.adr.eq(Cat(Constant(0, 2), dw3[2:32], dw2)),
            ).Else(
                req_source.adr.eq(Cat(Constant(0, 2), dw2[2:32])),
            ),
            req_source.len.eq(length),
            req_source.first_be.eq(dw1[0:4]),
            req_source.last_be.eq(dw1[4:8]),
            req_source.tag.eq(dw1[8:16]),
            req_source.req_id.eq(dw1[16:32]),
            req_source.dat.eq(dat),
            req_source.be.eq(src.be),
            req_source.malformed.eq(src.malformed),
        ]
        # Completions.
        self.comb += [
            cpl_source.with_data.eq(fmt_type[6]),
            cpl_source.ep.eq(dw0[14]),
            cpl_source.status.eq(dw1[13:16]),
            cpl_source.byte_count.eq(dw1[0:12]),
            cpl_source.cmp_id.eq(dw1[16:32]),
            cpl_source.lower_adr.eq(dw2[0:7]),
            cpl_source.tag.eq(dw2[8:16]),
            cpl_source.req_id.eq(dw2[16:32]),
            cpl_source.len.eq(length),
            cpl_source.dat.eq(dat),
            cpl_source.be.eq(src.be),
            cpl_source.malformed.eq(src.malformed),
        ]
        # Dispatch.
        for ep in [req_source, cpl_source]:
            self.comb += [ep.first.eq(src.first), ep.last.eq(src.last)]
        self.comb += [
            If(is_req,
                req_source.valid.eq(src.valid),
                src.ready.eq(req_source.ready),
            ).Elif(is_cpl,
                cpl_source.valid.eq(src.valid),
                src.ready.eq(cpl_source.ready),
            ).Else(
                src.ready.eq(1),
            )
        ]
        self.sync += If(src.valid & src.ready & src.first & ~is_req & ~is_cpl,
            self.unsupported.eq(self.unsupported + 1))
