#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""TLP <-> descriptor converters for the UltraScale (PG156) and UltraScale+ (PG213) PCIe blocks.

The integrated blocks do not carry TLPs on their user interface: each packet starts with a
descriptor (RQ, CQ: 4 dwords; RC, CC: 3 dwords) followed by the payload (dword-aligned mode,
straddling off). The root complex on top of the PHY speaks TLPs (LitePCIe layout, "little"
endianness: header dwords as PCIe values, payload after the header). These converters translate:

::

    TLP requests    (MRd/MWr 32/64, CfgRd/CfgWr 0/1, IO) --> TLPToRQ --> s_axis_rq
    TLP completions (Cpl/CplD/CplLk/CplDLk)              --> TLPToCC --> s_axis_cc
    m_axis_rc --> RCToTLP --> TLP completions (status, byte count, lower address, completer ID)
    m_axis_cq --> CQToTLP --> TLP requests    (MRd/MWr, 3-DW header below 4 GiB, else 4-DW)

Payload placement is the subtle part: a 3-DW TLP (32-bit memory request, configuration request)
carries its first payload dword in dword 3, a 4-DW descriptor in dword 4. TLPToRQ therefore
shifts 3-DW requests right by one dword (``_DwordInserter``) and CQToTLP shifts 32-bit requests
left by one dword (``_DwordRemover``); RC and CC descriptors are 3 dwords like completion headers,
so completions are rewritten in place. Only the first beat's header dwords are rewritten, which
needs the descriptor/header in the first beat: data widths 128 and 256 are supported.

All field positions follow the descriptor figures/tables of PG156/PG213 (requester request,
requester completion, completer request, completer completion descriptors, and the s_axis_rq,
m_axis_rc, m_axis_cq, s_axis_cc tuser tables).
"""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.packet import Status, Arbiter, Dispatcher

from litepcie.common import phy_layout

from literecorder.cores.pcie.common import tlp_get, tlp_image, REQUEST_HEADER, CONFIG_HEADER, COMPLETION_HEADER
from literecorder.cores.pcie.phy.packet_fifo import PacketFIFO, packet_fifo_depth

# Constants ----------------------------------------------------------------------------------------

FAMILIES = ["us", "usp"]

# tuser widths for 64/128/256-bit interfaces (PG156 / PG213 port descriptions).
RQ_TUSER_WIDTH = {"us": 60, "usp": 62}
RC_TUSER_WIDTH = {"us": 75, "usp": 75}
CQ_TUSER_WIDTH = {"us": 85, "usp": 88}
CC_TUSER_WIDTH = {"us": 33, "usp": 33}

# discontinue in m_axis_rc_tuser / m_axis_cq_tuser (64/128/256-bit interfaces, both families): the
# block's mark, in the last beat of a packet, of an uncorrectable error reading it back from its
# memories. PG156 RC: is_eof_1 [41:38], discontinue [42], parity [74:43]; CQ: sop [40], discontinue
# [41], parity from [53]. The same offsets in cocotbext-pcie's model of both families
# (alexforencich/cocotbext-pcie, cocotbext/pcie/xilinx/us/interface.py, 92732edd: RcSink 42, CqSink 41).
RC_TUSER_DISCONTINUE = 42
CQ_TUSER_DISCONTINUE = 41

# Descriptor sizes (bytes): RQ and CQ 4 dwords, RC and CC 3 dwords.
RQ_DESCRIPTOR_BYTES = 16
CQ_DESCRIPTOR_BYTES = 16
RC_DESCRIPTOR_BYTES = 12
CC_DESCRIPTOR_BYTES = 12

# tuser bits the converters use (the rest is driven 0 towards the block / ignored from it):
# First/Last DW BE on RQ (tuser[7:0], set by TLPToRQ) and CQ (tuser[7:0], read by CQToTLP).
BE_TUSER_WIDTH = 8

# Request Type field of RQ/CQ descriptors (PG156/PG213 "Transaction Types").
REQ_TYPE_MEM_RD    = 0b0000
REQ_TYPE_MEM_WR    = 0b0001
REQ_TYPE_IO_RD     = 0b0010
REQ_TYPE_IO_WR     = 0b0011
REQ_TYPE_MEM_RD_LK = 0b0111
REQ_TYPE_CFG_RD0   = 0b1000
REQ_TYPE_CFG_RD1   = 0b1001
REQ_TYPE_CFG_WR0   = 0b1010
REQ_TYPE_CFG_WR1   = 0b1011

# Error Code field of RC descriptors.
RC_ERROR_NORMAL      = 0b0000 # Normal termination (last or intermediate split completion).
RC_ERROR_POISONED    = 0b0001 # Poisoned completion: delivered, EP set.
RC_ERROR_BAD_STATUS  = 0b0010 # UR/CA/CRS status: delivered with its status.
RC_ERROR_FLR         = 0b1000 # Request terminated by a Function-Level Reset.
RC_ERROR_TIMEOUT     = 0b1001 # Request terminated by a completion timeout.

# TLP completion status.
CPL_STATUS_UR = 0b001

# Layouts ------------------------------------------------------------------------------------------

def axis_layout(data_width, user_width):
    """One beat of a UltraScale(+) AXI4-Stream interface (tkeep: one bit per dword)."""
    return stream.EndpointDescription([
        ("dat",  data_width),
        ("keep", data_width//32),
        ("user", user_width),
    ])

def stored_layout(data_width, user_width=0):
    """A beat as the packet FIFOs store it: data, tkeep and the tuser bits in use (if any)."""
    layout = [("dat", data_width), ("keep", data_width//32)]
    if user_width:
        layout.append(("user", user_width))
    return stream.EndpointDescription(layout)

# Helpers ------------------------------------------------------------------------------------------

def check_data_width(data_width):
    if data_width not in [128, 256]:
        raise ValueError(f"UltraScale(+) descriptor converters support data_width 128 or 256, "
            f"not {data_width!r} (the descriptor must fit in the first beat).")

def check_family(family):
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, not {family!r}.")

def dword(sig, n):
    return sig[32*n:32*(n + 1)]

def above(sig, n):
    """Bits of ``sig`` from ``n`` up, as a Cat() argument list (empty when there are none)."""
    return [sig[n:]] if len(sig) > n else []

def keep_to_be(keep):
    return Cat(*[Replicate(keep[i], 4) for i in range(len(keep))])

def be_to_keep(be):
    return Cat(*[be[4*i] for i in range(len(be)//4)])

class _TLPHeader:
    """Field views of TLP header dwords (PCIe values), through the request header's table."""
    def __init__(self, h):
        self.h        = h
        dat = Cat(*h)
        def f(name):
            return tlp_get(dat, REQUEST_HEADER, name)
        self.length   = f("length")
        self.at       = f("at")
        self.ep       = f("ep")
        self.attr     = Cat(f("attr"), f("attr2"))   # No Snoop, Relaxed Ordering, ID-Based.
        self.tc       = f("tc")
        self.type     = f("type")
        self.is_4dw   = f("fmt")[0]
        self.has_data = f("fmt")[1]
        self.prefix   = f("fmt")[2]
        self.first_be = f("first_be")
        self.last_be  = f("last_be")
        self.tag      = f("tag")
        self.req_id   = f("requester_id")

def tlp_dword0(length, at, attr, ep, tc, type, is_4dw, has_data):
    return tlp_image(REQUEST_HEADER, 1, length=length, at=at, attr=attr[0:2], attr2=attr[2], ep=ep,
        tc=tc, type=type, fmt=Cat(is_4dw, has_data))

def _rq_request_type(t, req_type, valid):
    """RQ Request Type of a TLP header; ``valid`` is 0 for TLPs the RQ interface does not take here."""
    return Case(t.type, {
        0b00000 : [valid.eq(1), req_type.eq(Mux(t.has_data, REQ_TYPE_MEM_WR,  REQ_TYPE_MEM_RD))],
        0b00001 : [valid.eq(~t.has_data), req_type.eq(REQ_TYPE_MEM_RD_LK)],
        0b00010 : [valid.eq(1), req_type.eq(Mux(t.has_data, REQ_TYPE_IO_WR,   REQ_TYPE_IO_RD))],
        0b00100 : [valid.eq(1), req_type.eq(Mux(t.has_data, REQ_TYPE_CFG_WR0, REQ_TYPE_CFG_RD0))],
        0b00101 : [valid.eq(1), req_type.eq(Mux(t.has_data, REQ_TYPE_CFG_WR1, REQ_TYPE_CFG_RD1))],
    })

# Dword Inserter -----------------------------------------------------------------------------------

class _DwordInserter(LiteXModule):
    """Moves a packet one dword towards the end when ``shift`` is set on its first beat.

    The first output beat then starts with a placeholder dword (be set) that the next stage
    overwrites; an extra beat is emitted when the last input dword no longer fits.
    """
    def __init__(self, data_width):
        self.sink     = sink   = stream.Endpoint(phy_layout(data_width))
        self.source   = source = stream.Endpoint(phy_layout(data_width))
        self.shift    = Signal() # In:  evaluated on the first beat of each packet.
        self.shifting = Signal() # Out: the beat on sink belongs to a shifted packet.

        # # #

        self.status = status = Status(sink)
        shifting  = Signal()
        carry_dat = Signal(32)
        carry_be  = Signal(4)
        top_used  = Signal()
        self.comb += [
            self.shifting.eq(Mux(status.first, self.shift, shifting)),
            top_used.eq(sink.be[-4:] != 0),
        ]
        self.sync += [
            If(sink.valid & sink.ready,
                If(status.first, shifting.eq(self.shift)),
                carry_dat.eq(sink.dat[-32:]),
                carry_be.eq(sink.be[-4:]),
            )
        ]

        self.fsm = fsm = FSM(reset_state="COPY")
        fsm.act("COPY",
            If(self.shifting,
                source.valid.eq(sink.valid),
                source.first.eq(status.first),
                source.last.eq(sink.last & ~top_used),
                source.dat.eq(Cat(carry_dat, sink.dat[:-32])),
                source.be.eq(Cat(Mux(status.first, 0xf, carry_be), sink.be[:-4])),
                sink.ready.eq(source.ready),
                If(sink.valid & sink.ready & sink.last & top_used,
                    NextState("FLUSH")
                )
            ).Else(
                sink.connect(source, omit={"first"}),
                source.first.eq(status.first),
            )
        )
        fsm.act("FLUSH",
            source.valid.eq(1),
            source.last.eq(1),
            source.dat.eq(carry_dat),
            source.be.eq(carry_be),
            If(source.ready,
                NextState("COPY")
            )
        )

# Dword Remover ------------------------------------------------------------------------------------

class _DwordRemover(LiteXModule):
    """Drops the first dword of a packet (moving the rest one dword towards the start) when
    ``remove`` is set on its first beat."""
    def __init__(self, data_width):
        self.sink   = sink   = stream.Endpoint(phy_layout(data_width))
        self.source = source = stream.Endpoint(phy_layout(data_width))
        self.remove = Signal() # In: evaluated on the first beat of each packet.

        # # #

        self.status = status = Status(sink)
        hold_dat   = Signal(data_width - 32)
        hold_be    = Signal(data_width//8 - 4)
        hold_first = Signal()
        tail_empty = Signal()
        self.comb += tail_empty.eq(sink.be[4:] == 0)

        self.fsm = fsm = FSM(reset_state="COPY")
        fsm.act("COPY",
            If(status.first & self.remove,
                sink.ready.eq(1),
                If(sink.valid,
                    NextValue(hold_dat,   sink.dat[32:]),
                    NextValue(hold_be,    sink.be[4:]),
                    NextValue(hold_first, 1),
                    If(sink.last,
                        NextState("FLUSH")
                    ).Else(
                        NextState("SHIFT")
                    )
                )
            ).Else(
                sink.connect(source, omit={"first"}),
                source.first.eq(status.first),
            )
        )
        fsm.act("SHIFT",
            source.valid.eq(sink.valid),
            source.first.eq(hold_first),
            source.last.eq(sink.last & tail_empty),
            source.dat.eq(Cat(hold_dat, sink.dat[:32])),
            source.be.eq(Cat(hold_be, sink.be[:4])),
            sink.ready.eq(source.ready),
            If(sink.valid & source.ready,
                NextValue(hold_dat,   sink.dat[32:]),
                NextValue(hold_be,    sink.be[4:]),
                NextValue(hold_first, 0),
                If(sink.last,
                    If(tail_empty,
                        NextState("COPY")
                    ).Else(
                        NextState("FLUSH")
                    )
                )
            )
        )
        fsm.act("FLUSH",
            source.valid.eq(1),
            source.first.eq(hold_first),
            source.last.eq(1),
            source.dat.eq(hold_dat),
            source.be.eq(hold_be),
            If(source.ready,
                NextState("COPY")
            )
        )

# Packet Dropper -----------------------------------------------------------------------------------

class _PacketFilter(LiteXModule):
    """Passes or drops whole packets; ``drop`` is evaluated on the first beat. ``dropped`` pulses on
    the last beat of each dropped packet."""
    def __init__(self, sink, source, drop):
        self.dropped = Signal()

        # # #

        self.status = status = Status(sink)
        dropping = Signal()
        drop_now = Signal()
        self.comb += drop_now.eq(Mux(status.first, drop, dropping))
        self.sync += If(sink.valid & sink.ready & status.first, dropping.eq(drop))
        self.comb += [
            If(drop_now,
                sink.ready.eq(1)
            ).Else(
                source.valid.eq(sink.valid),
                sink.ready.eq(source.ready),
            ),
            source.first.eq(status.first),
            source.last.eq(sink.last),
            self.dropped.eq(sink.valid & sink.last & drop_now),
        ]

# TLP -> Requester Request (RQ) --------------------------------------------------------------------

class TLPToRQ(LiteXModule):
    """Outbound requests: TLP (LitePCIe layout) -> RQ descriptor + payload (s_axis_rq).

    Memory and I/O requests carry the address in the descriptor's Address field; configuration
    requests carry the register number (extended + register, 10 bits) in Address[11:2], the target
    Bus/Device/Function in Completer ID. The Requester ID of the TLP is used (Requester ID Enable,
    allowed in root-port mode). First/Last DW BE go to tuser[3:0]/[7:4]. Unsupported TLPs
    (messages, atomics, TLP prefixes) are dropped and counted through ``dropped``.

    Parameters
    ----------
    data_width : int
        AXI4-Stream width of the integrated block, 128 or 256.
    family : str
        ``"us"`` (pcie3_ultrascale, 60-bit tuser) or ``"usp"`` (pcie4_uscale_plus, 62-bit tuser).
    """
    def __init__(self, data_width, family="usp"):
        check_data_width(data_width)
        check_family(family)
        self.sink    = sink   = stream.Endpoint(phy_layout(data_width))
        self.source  = source = stream.Endpoint(axis_layout(data_width, RQ_TUSER_WIDTH[family]))
        self.dropped = Signal()

        # # #

        # Filtering (on the TLP's first beat).
        t = _TLPHeader([dword(sink.dat, i) for i in range(4)])
        t_req_type, t_valid = Signal(4), Signal() # Type computed again below on the output side.
        self.comb += _rq_request_type(t, t_req_type, t_valid)

        inserter = _DwordInserter(data_width)
        self.inserter = inserter
        self.filter   = _PacketFilter(sink, inserter.sink, drop=~t_valid | t.prefix)
        self.comb += [
            inserter.sink.dat.eq(sink.dat),
            inserter.sink.be.eq(sink.be),
            inserter.shift.eq(~t.is_4dw), # 3-DW header: payload moves from dword 3 to dword 4.
            self.dropped.eq(self.filter.dropped),
        ]

        # Descriptor (on the inserter's first output beat, header at dword 1 when shifted).
        beat  = inserter.source
        h     = [Mux(inserter.shifting, dword(beat.dat, i + 1), dword(beat.dat, i)) for i in range(3)]
        h    += [dword(beat.dat, 3)]
        o     = _TLPHeader(h)
        req_type, req_valid = Signal(4), Signal()
        self.comb += _rq_request_type(o, req_type, req_valid)
        is_cfg      = Signal()
        dword_count = Signal(11)
        addr_lo     = Signal(32)
        self.comb += [
            is_cfg.eq(o.type[1:5] == 0b0010),
            dword_count.eq(Cat(o.length, o.length == 0)),
            addr_lo.eq(Mux(o.is_4dw, h[3], h[2])),
        ]
        desc = Signal(128)
        self.comb += [
            If(is_cfg,
                dword(desc, 0).eq(Cat(C(0, 2), tlp_get(Cat(*h), CONFIG_HEADER, "register"))),
                dword(desc, 1).eq(0),
            ).Else(
                dword(desc, 0).eq(Cat(o.at, addr_lo[2:32])),       # Address[31:2], AT.
                dword(desc, 1).eq(Mux(o.is_4dw, h[2], 0)),         # Address[63:32].
            ),
            dword(desc, 2).eq(Cat(dword_count, req_type, o.ep, o.req_id)),
            dword(desc, 3).eq(Cat(o.tag, Mux(is_cfg, Cat(*[tlp_get(Cat(*h), CONFIG_HEADER, n)
                for n in ("function", "device", "bus")]), 0), C(1, 1), o.tc, o.attr, C(0, 1))),
        ]
        first = beat.first
        self.comb += [
            source.valid.eq(beat.valid),
            beat.ready.eq(source.ready),
            source.first.eq(first),
            source.last.eq(beat.last),
            If(first,
                source.dat.eq(Cat(desc, *above(beat.dat, 128))),
                source.keep.eq(Cat(C(0b1111, 4), *above(be_to_keep(beat.be), 4))),
                source.user[0:4].eq(o.first_be),
                source.user[4:8].eq(o.last_be),
            ).Else(
                source.dat.eq(beat.dat),
                source.keep.eq(be_to_keep(beat.be)),
            ),
        ]

# TLP -> Completer Completion (CC) -----------------------------------------------------------------

class TLPToCC(LiteXModule):
    """Outbound completions: TLP Cpl/CplD/CplLk/CplDLk -> CC descriptor + payload (s_axis_cc).

    Lower Address (7 bits), Byte Count (TLP 0 = 4096), Dword Count (0 for completions without
    data), status, poisoned, Requester ID, tag, TC, attributes and the Completer ID of the TLP (with
    Completer ID Enable, root-port mode) are copied exactly: strict requesters check them.
    """
    def __init__(self, data_width, family="usp"):
        check_data_width(data_width)
        check_family(family)
        self.sink   = sink   = stream.Endpoint(phy_layout(data_width))
        self.source = source = stream.Endpoint(axis_layout(data_width, CC_TUSER_WIDTH[family]))

        # # #

        self.status = status = Status(sink)
        h = [dword(sink.dat, i) for i in range(3)]
        t = _TLPHeader(h + [0])
        cpl = Cat(*h)
        def c(name):
            return tlp_get(cpl, COMPLETION_HEADER, name)
        byte_count  = Signal(13)
        dword_count = Signal(11)
        self.comb += [
            byte_count.eq(Cat(c("byte_count"), c("byte_count") == 0)),
            dword_count.eq(Mux(t.has_data, Cat(t.length, t.length == 0), 0)),
        ]
        desc = Cat(
            # Dword 0.
            c("lower_address"), C(0, 1), t.at, C(0, 6), byte_count, t.type[0], C(0, 2),
            # Dword 1.
            dword_count, c("status"), t.ep, C(0, 1), c("requester_id"),
            # Dword 2.
            c("tag"), c("completer_id"), C(1, 1), t.tc, t.attr, C(0, 1),
        )
        self.comb += [
            source.valid.eq(sink.valid),
            sink.ready.eq(source.ready),
            source.first.eq(status.first),
            source.last.eq(sink.last),
            source.dat.eq(Mux(status.first, Cat(desc, sink.dat[96:]), sink.dat)),
            source.keep.eq(be_to_keep(sink.be)),
            source.user.eq(0), # Discontinue/parity unused.
        ]

# Requester Completion (RC) -> TLP -----------------------------------------------------------------

class RCToTLP(LiteXModule):
    """Inbound completions: RC descriptor + payload (m_axis_rc) -> TLP completion.

    Error codes: normal, poisoned (EP set) and bad status (UR/CRS/CA status kept) are delivered as
    received; a completion timeout or FLR termination becomes a Cpl without data, status UR, with
    the descriptor's tag so the requester can retire the request; other codes (invalid length,
    mismatch, invalid address, invalid tag: completions that match no request) are dropped and
    counted through ``dropped``. Each RC packet is one completion TLP: split completions stay
    separate TLPs; the last one of a request is the one whose Byte Count fits in its payload.
    """
    def __init__(self, data_width, family="usp"):
        check_data_width(data_width)
        check_family(family)
        self.sink    = sink   = stream.Endpoint(axis_layout(data_width, RC_TUSER_WIDTH[family]))
        self.source  = source = stream.Endpoint(phy_layout(data_width))
        self.dropped = Signal()

        # # #

        d = [dword(sink.dat, i) for i in range(3)]
        error_code  = d[0][12:16]
        terminated  = Signal()
        deliver     = Signal()
        self.comb += [
            terminated.eq((error_code == RC_ERROR_FLR) | (error_code == RC_ERROR_TIMEOUT)),
            deliver.eq((error_code <= RC_ERROR_BAD_STATUS) | terminated),
        ]
        dword_count = d[1][0:11]
        has_data    = Signal()
        status      = Signal(3)
        self.comb += [
            has_data.eq((dword_count != 0) & ~terminated),
            status.eq(Mux(terminated, CPL_STATUS_UR, d[1][11:14])),
        ]
        attr = d[2][28:31]
        hdr  = tlp_image(COMPLETION_HEADER, 3,
            length        = Mux(terminated, 0, dword_count[0:10]),
            attr          = attr[0:2],
            attr2         = attr[2],
            ep            = d[1][14],
            tc            = d[2][25:28],
            type          = Cat(d[0][29], C(0b0101, 4)), # Cpl (01010) / CplLk (01011).
            fmt           = Cat(C(0, 1), has_data),
            byte_count    = d[0][16:28],
            status        = status,
            completer_id  = d[2][8:24],
            lower_address = d[0][0:7],
            tag           = d[2][0:8],
            requester_id  = d[1][16:32],
        )

        self.filter = _PacketFilter(sink, source, drop=~deliver)
        first = self.filter.status.first
        self.comb += [
            source.dat.eq(Mux(first, Cat(hdr, sink.dat[96:]), sink.dat)),
            source.be.eq(keep_to_be(sink.keep)),
            self.dropped.eq(self.filter.dropped),
        ]

# Completer Request (CQ) -> TLP --------------------------------------------------------------------

class CQToTLP(LiteXModule):
    """Inbound requests: CQ descriptor + payload (m_axis_cq) -> TLP MRd/MWr.

    Requests below 4 GiB become 3-DW TLPs (as the requester had to send them), others 4-DW TLPs;
    First/Last DW BE come from tuser[3:0]/[7:4]. Requests other than memory reads/writes (I/O,
    atomics, locked reads, messages routed to CQ) are dropped and counted through ``dropped``.
    """
    def __init__(self, data_width, family="usp"):
        check_data_width(data_width)
        check_family(family)
        self.sink    = sink   = stream.Endpoint(axis_layout(data_width, CQ_TUSER_WIDTH[family]))
        self.source  = source = stream.Endpoint(phy_layout(data_width))
        self.dropped = Signal()

        # # #

        d = [dword(sink.dat, i) for i in range(4)]
        req_type    = d[2][11:15]
        dword_count = d[2][0:11]
        is_4dw      = Signal()
        has_data    = Signal()
        supported   = Signal()
        self.comb += [
            is_4dw.eq(d[1] != 0),
            has_data.eq(req_type == REQ_TYPE_MEM_WR),
            supported.eq((req_type == REQ_TYPE_MEM_RD) | (req_type == REQ_TYPE_MEM_WR)),
        ]
        h0 = tlp_dword0(
            length   = dword_count[0:10],
            at       = d[0][0:2],
            attr     = d[3][28:31],
            ep       = C(0, 1),
            tc       = d[3][25:28],
            type     = C(0b00000, 5),
            is_4dw   = is_4dw,
            has_data = has_data,
        )
        h1     = tlp_image(REQUEST_HEADER, 2, first_be=sink.user[0:4], last_be=sink.user[4:8],
            tag=d[3][0:8], requester_id=d[2][16:32])[32:]
        addr32 = Cat(C(0, 2), d[0][2:32])

        # Header rewrite in place: a 3-DW header is written at dwords 1-3, then dword 0 is removed.
        rewritten = stream.Endpoint(phy_layout(data_width))
        remover   = _DwordRemover(data_width)
        self.remover = remover
        self.filter  = _PacketFilter(sink, rewritten, drop=~supported)
        first = self.filter.status.first
        self.comb += [
            If(first,
                If(is_4dw,
                    rewritten.dat.eq(Cat(h0, h1, d[1], addr32, *above(sink.dat, 128))),
                ).Else(
                    rewritten.dat.eq(Cat(C(0, 32), h0, h1, addr32, *above(sink.dat, 128))),
                )
            ).Else(
                rewritten.dat.eq(sink.dat),
            ),
            rewritten.be.eq(keep_to_be(sink.keep)),
            rewritten.connect(remover.sink),
            remover.remove.eq(~is_4dw),
            remover.source.connect(source),
            self.dropped.eq(self.filter.dropped),
        ]

# TLP <-> Descriptor Bridge ------------------------------------------------------------------------

class TLPDescriptorBridge(LiteXModule):
    """One TLP stream each way <-> the four AXI4-Stream interfaces of an UltraScale(+) block.

    ::

        sink ---> Dispatcher --+--> TLPToRQ --> PacketFIFO --> s_axis_rq   (requests)
                  (Type)       +--> TLPToCC --> PacketFIFO --> s_axis_cc   (completions)
        source <- Arbiter <----+--- RCToTLP <-- PacketFIFO <-- m_axis_rc   (completions)
                               +--- CQToTLP <-- PacketFIFO <-- m_axis_cq   (requests)

    TLPs of Type 0101x (Cpl/CplD/CplLk/CplDLk) go to CC, all others to RQ. Inbound packets are
    merged packet by packet (round robin). ``dropped`` pulses for each TLP no interface can carry.

    Whole packets only (``packet_fifo``): the block nullifies an RQ/CC packet whose ``tvalid``
    drops before its last beat (PG156/PG213), so each outbound packet reaches the block only once
    all of it is stored; an RC/CQ packet marked ``discontinue`` (the block could not read it back
    from its memories: PG156 "Aborting a Completion Transfer") is discarded whole before the
    converters see any of it (``rc_discontinued``/``cq_discontinued`` pulse). Sizing: two packets
    of the largest each FIFO carries, ``mps`` bytes of payload on CC (the completer's CplD, split at
    the Max Payload Size) and CQ (the device's MWr), ``short_payload`` bytes on RQ (the requester's
    reads and writes) and RC (the completions to its reads). A longer packet cannot be stored whole:
    it is dropped and counted in ``dropped``.

    Parameters
    ----------
    data_width : int
        AXI4-Stream width of the integrated block, 128 or 256.
    family : str
        ``"us"`` or ``"usp"``.
    mps : int
        Largest payload (bytes) of a completion sent and of a write received.
    short_payload : int
        Largest payload (bytes) of a request sent and of a completion received; None: ``mps``.
    store_and_forward : bool
        False: RQ/CC through one register slice (``PipeValid``) as before the store-and-forward
        stage, gaps of the TLP stream passed on to the block (for measurements and for the test that
        shows the gaps); RC/CQ keep their discard FIFOs.
    """
    def __init__(self, data_width, family="usp", mps=512, short_payload=None, store_and_forward=True):
        check_data_width(data_width)
        check_family(family)
        if short_payload is None:
            short_payload = mps
        for name, value in [("mps", mps), ("short_payload", short_payload)]:
            if not (isinstance(value, int) and 4 <= value <= 4096 and value % 4 == 0):
                raise ValueError(f"{name} must be a payload size in bytes, a multiple of 4 from 4 to "
                    f"4096, not {value!r}.")
        self.sink      = sink   = stream.Endpoint(phy_layout(data_width))
        self.source    = source = stream.Endpoint(phy_layout(data_width))
        self.s_axis_rq = stream.Endpoint(axis_layout(data_width, RQ_TUSER_WIDTH[family]))
        self.s_axis_cc = stream.Endpoint(axis_layout(data_width, CC_TUSER_WIDTH[family]))
        self.m_axis_rc = stream.Endpoint(axis_layout(data_width, RC_TUSER_WIDTH[family]))
        self.m_axis_cq = stream.Endpoint(axis_layout(data_width, CQ_TUSER_WIDTH[family]))
        self.dropped   = Signal()
        self.rc_discontinued = Signal() # Pulse: an RC packet marked discontinue was discarded.
        self.cq_discontinued = Signal() # Pulse: a CQ packet marked discontinue was discarded.

        # # #

        def depth(payload, descriptor):
            return packet_fifo_depth(payload, descriptor, data_width)

        # Outbound.
        self.rq = rq = TLPToRQ(data_width, family)
        self.cc = cc = TLPToCC(data_width, family)
        self.dispatcher = Dispatcher(sink, [rq.sink, cc.sink])
        self.comb += self.dispatcher.sel.eq(sink.dat[25:29] == 0b0101)
        overflows = []
        if store_and_forward:
            # Only the tuser bits the converters drive are stored (First/Last DW BE on RQ).
            self.rq_buffer = PacketFIFO(stored_layout(data_width, BE_TUSER_WIDTH),
                depth(short_payload, RQ_DESCRIPTOR_BYTES))
            self.cc_buffer = PacketFIFO(stored_layout(data_width), depth(mps, CC_DESCRIPTOR_BYTES))
            overflows += [self.rq_buffer.overflowed, self.cc_buffer.overflowed]
        else:
            self.rq_buffer = stream.PipeValid(stored_layout(data_width, BE_TUSER_WIDTH))
            self.cc_buffer = stream.PipeValid(stored_layout(data_width))
        self.comb += [
            rq.source.connect(self.rq_buffer.sink, omit={"user"}),
            self.rq_buffer.sink.user.eq(rq.source.user[:BE_TUSER_WIDTH]),
            self.rq_buffer.source.connect(self.s_axis_rq),  # tuser above First/Last DW BE: 0.
            cc.source.connect(self.cc_buffer.sink, omit={"user"}),
            self.cc_buffer.source.connect(self.s_axis_cc),  # tuser (discontinue, parity): 0.
        ]

        # Inbound: whole packets, those marked discontinue discarded.
        self.rc = rc = RCToTLP(data_width, family)
        self.cq = cq = CQToTLP(data_width, family)
        self.rc_buffer = PacketFIFO(stored_layout(data_width), depth(short_payload, RC_DESCRIPTOR_BYTES))
        self.cq_buffer = PacketFIFO(stored_layout(data_width, BE_TUSER_WIDTH),
            depth(mps, CQ_DESCRIPTOR_BYTES))
        overflows += [self.rc_buffer.overflowed, self.cq_buffer.overflowed]
        self.comb += [
            self.m_axis_rc.connect(self.rc_buffer.sink, omit={"user"}),
            self.rc_buffer.discard.eq(self.m_axis_rc.user[RC_TUSER_DISCONTINUE]),
            self.rc_buffer.source.connect(rc.sink),
            self.m_axis_cq.connect(self.cq_buffer.sink, omit={"user"}),
            self.cq_buffer.sink.user.eq(self.m_axis_cq.user[:BE_TUSER_WIDTH]),
            self.cq_buffer.discard.eq(self.m_axis_cq.user[CQ_TUSER_DISCONTINUE]),
            self.cq_buffer.source.connect(cq.sink),
            self.rc_discontinued.eq(self.rc_buffer.discarded),
            self.cq_discontinued.eq(self.cq_buffer.discarded),
        ]
        self.arbiter = Arbiter([rc.source, cq.source], source)

        self.comb += self.dropped.eq(reduce(or_, [rq.dropped, rc.dropped, cq.dropped] + overflows))
