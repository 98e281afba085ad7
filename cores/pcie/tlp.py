#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-complex TLP layer on LitePCIe's PHY interface (``phy_layout`` beats).

TLPs are neither unpacked into header + dword-0-aligned payload nor packed back: the receive side
decodes the header in place (it is always at dword 0 of the first beat) and hands the payload on as
it arrived, the transmit side takes TLPs already laid out as PHY beats. The only payload shift of
each direction is the completer's ``DwordAligner`` (from the wire position to the window position
and back)::

    phy.source --> RCTLPRX --+--> memory requests: header (beat 0), status (end), payload beats
                             +--> completions (beats, header fields decoded on the first)
                             +--> anything else: dropped, counted

    requester (CPU requests, doorbells) --+
    completer (completions) --------------+--> RCTLPTX (packet arbiter) --> phy.sink

The receive side checks each TLP's beats against its Length field: a TLP that ends early (truncated)
or goes on after it (extra beats, discarded) is flagged ``malformed``.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.common import phy_layout

from literecorder.cores.pcie.common import *

# Layouts ------------------------------------------------------------------------------------------

def request_header_layout():
    """Memory request of the device (its DMA), decoded from the first beat."""
    return [
        ("we",       1),   # 1: MWr, 0: MRd.
        ("h4",       1),   # 4-dword header.
        ("ep",       1),   # Poisoned.
        ("adr",     64),   # Byte address (bits 1:0 are 0).
        ("len",     11),   # Dwords (1..1024).
        ("first_be", 4),
        ("last_be",  4),
        ("tag",      8),
        ("req_id",  16),
    ]

def request_status_layout():
    """End of a memory request TLP: its framing and the payload beats it left in the buffer."""
    return [("malformed", 1), ("beats", 9)]

def completion_header_layout():
    """Completion from the device, fields decoded from its first beat (``dat`` raw beats)."""
    return [
        ("with_data", 1),
        ("ep",        1),
        ("status",    3),
        ("len",      11),
        ("tag",       8),
        ("req_id",   16),
    ]

# RX -----------------------------------------------------------------------------------------------

class RCTLPRX(LiteXModule):
    """Decodes the TLPs received from the device.

    Memory requests go to three streams: ``req`` (decoded header, at the first beat), ``req_data``
    (beats holding payload of writes, as received: payload from dword 3 or 4 of the first beat; a
    first beat without payload is not passed on) and ``req_status`` (at the end of the TLP: malformed
    flag, payload beats passed on). Writes larger than ``mps_log2`` are not buffered: they end as
    malformed with no payload beat. Completions go to ``cpl`` (header fields valid on the first
    beat, ``malformed`` on the last). Everything else is dropped and counted in ``unsupported``.
    """
    def __init__(self, phy_source, data_width, endianness="little"):
        check_data_width(data_width, minimum=128)
        dw   = data_width
        ndw  = dw//32
        lbit = log2_int(ndw)
        self.req         = req    = stream.Endpoint(request_header_layout())
        self.req_status  = status = stream.Endpoint(request_status_layout())
        self.req_data    = data   = stream.Endpoint([("dat", dw)])
        self.cpl         = cpl    = stream.Endpoint(completion_header_layout() + [("dat", dw), ("malformed", 1)])
        self.mps_log2    = Signal(4, reset=MPS_LOG2_RESET)
        self.unsupported = Signal(32)

        # # #

        # Input register: each beat with the decode of its header fields (meaningful on a first
        # beat), so that the state machine below works from registers.
        src     = phy_source
        sink    = stream.Endpoint(phy_layout(dw))
        mps_dws = Signal(11)
        self.sync += mps_dws.eq(1 << (self.mps_log2 - 2))
        def decode(dat):
            fmt      = tlp_get(dat, REQUEST_HEADER, "fmt")
            type_    = tlp_get(dat, REQUEST_HEADER, "type")
            ln       = tlp_get(dat, REQUEST_HEADER, "length")
            length   = Mux(ln == 0, 1024, ln)
            h4, with_dat, prefix = fmt[0], fmt[1], fmt[2]
            n_exp    = (3 + h4 + Mux(with_dat, length, 0) + ndw - 1) >> lbit
            return dict(
                length   = length,
                is_req   = (type_ == FMT_TYPE_MEM) & ~prefix,
                is_cpl   = (type_ == FMT_TYPE_CPL) & ~h4 & ~prefix,
                oversize = with_dat & (length > mps_dws),
                n_exp    = n_exp,
                one_beat = n_exp == 1,
            )
        dec = dict(length=Signal(11), is_req=Signal(), is_cpl=Signal(), oversize=Signal(),
            n_exp=Signal(9), one_beat=Signal())
        self.comb += src.ready.eq(~sink.valid | sink.ready)
        self.sync += If(src.ready,
            sink.valid.eq(src.valid),
            sink.first.eq(src.first),
            sink.last.eq(src.last),
            sink.dat.eq(src.dat),
            sink.be.eq(src.be),
            *[dec[k].eq(v) for k, v in decode(src.dat).items()],
        )
        def rq(name):
            return tlp_get(sink.dat, REQUEST_HEADER, name)
        def cp(name):
            return tlp_get(sink.dat, COMPLETION_HEADER, name)
        h4       = rq("fmt")[0]
        with_dat = rq("fmt")[1]
        length   = dec["length"]
        is_req   = dec["is_req"]
        is_cpl   = dec["is_cpl"]
        oversize = dec["oversize"]
        n_exp    = dec["n_exp"]

        self.comb += [
            req.we.eq(with_dat),
            req.h4.eq(h4),
            req.ep.eq(rq("ep")),
            req.adr.eq(Mux(h4, Cat(Constant(0, 2), rq("adr_lo"), rq("adr_hi")),
                Cat(Constant(0, 2), rq("adr_3dw")))),
            req.len.eq(length),
            req.first_be.eq(rq("first_be")),
            req.last_be.eq(rq("last_be")),
            req.tag.eq(rq("tag")),
            req.req_id.eq(rq("requester_id")),
            cpl.with_data.eq(with_dat),
            cpl.ep.eq(cp("ep")),
            cpl.status.eq(cp("status")),
            cpl.len.eq(length),
            cpl.tag.eq(cp("tag")),
            cpl.req_id.eq(cp("requester_id")),
            cpl.dat.eq(dword_swap(sink.dat, ndw, endianness)),
            data.dat.eq(dword_swap(sink.dat, ndw, endianness)),
        ]

        # Per-TLP state (from its first beat).
        kind    = Signal(2)          # 0: request, 1: completion, 2: dropped.
        to_data = Signal()           # Payload beats are passed on (a write that fits).
        over    = Signal()           # A write larger than MPS (dropped, reported as malformed).
        n_beats = Signal(9)
        cnt     = Signal(9)          # Beats seen.
        beats   = Signal(9)          # Beats passed on to req_data.
        K_REQ, K_CPL, K_DROP = range(3)

        # End of the TLP at this beat (by its Length or by `last`) and its framing.
        end_first = Signal()
        mal_first = Signal()
        end_body  = Signal()
        mal_body  = Signal()
        self.comb += [
            end_first.eq(dec["one_beat"] | sink.last),
            mal_first.eq(dec["one_beat"] ^ sink.last),
            end_body.eq((cnt == n_beats - 1) | sink.last),
            mal_body.eq((cnt == n_beats - 1) ^ sink.last),
        ]

        self.fsm = fsm = FSM(reset_state="FIRST")
        first_to_data = Signal()
        self.comb += first_to_data.eq(is_req & with_dat & ~oversize & (3 + h4 < ndw))
        fsm.act("FIRST",
            If(is_req,
                # Header now, payload beat if any, status when the TLP ends here.
                req.valid.eq(sink.valid & (data.ready | ~first_to_data) & (status.ready | ~end_first)),
                data.valid.eq(sink.valid & first_to_data & req.ready & (status.ready | ~end_first)),
                status.valid.eq(sink.valid & end_first & req.ready & (data.ready | ~first_to_data)),
                sink.ready.eq(req.ready & (data.ready | ~first_to_data) & (status.ready | ~end_first)),
            ).Elif(is_cpl,
                cpl.valid.eq(sink.valid),
                cpl.first.eq(1),
                cpl.last.eq(end_first),
                cpl.malformed.eq(mal_first),
                sink.ready.eq(cpl.ready),
            ).Else(
                sink.ready.eq(1),
            ),
            status.malformed.eq(mal_first | oversize),
            status.beats.eq(first_to_data),
            If(sink.valid & sink.ready,
                NextValue(kind, Mux(is_req, K_REQ, Mux(is_cpl, K_CPL, K_DROP))),
                NextValue(to_data, is_req & with_dat & ~oversize),
                NextValue(over, oversize),
                NextValue(n_beats, n_exp),
                NextValue(cnt, 1),
                NextValue(beats, first_to_data),
                If(~is_req & ~is_cpl,
                    NextValue(self.unsupported, self.unsupported + 1),
                ),
                If(~end_first,
                    NextState("BODY")
                ).Elif(~sink.last,
                    NextState("DRAIN")
                )
            )
        )
        fsm.act("BODY",
            If(kind == K_REQ,
                data.valid.eq(sink.valid & to_data & (status.ready | ~end_body)),
                status.valid.eq(sink.valid & end_body & (data.ready | ~to_data)),
                sink.ready.eq((data.ready | ~to_data) & (status.ready | ~end_body)),
            ).Elif(kind == K_CPL,
                cpl.valid.eq(sink.valid),
                cpl.last.eq(end_body),
                cpl.malformed.eq(mal_body),
                sink.ready.eq(cpl.ready),
            ).Else(
                sink.ready.eq(1),
            ),
            status.malformed.eq(mal_body | over),
            status.beats.eq(beats + to_data),
            If(sink.valid & sink.ready,
                NextValue(cnt, cnt + 1),
                NextValue(beats, beats + to_data),
                If(end_body,
                    If(sink.last,
                        NextState("FIRST")
                    ).Else(
                        NextState("DRAIN")
                    )
                )
            )
        )
        # Beats after the Length of the TLP: discarded.
        fsm.act("DRAIN",
            sink.ready.eq(1),
            If(sink.valid & sink.last, NextState("FIRST"))
        )

# TX -----------------------------------------------------------------------------------------------

class RCTLPTX(LiteXModule):
    """Arbitrates TLPs laid out as PHY beats (``phy_layout``) packet by packet (round robin).

    ``get_port(dwords)`` returns a sink; ``dwords``: the dwords of a beat the port may enable (the
    others are taken from the other ports without a multiplexer: their byte enables are 0)."""
    def __init__(self, phy_sink, data_width):
        check_data_width(data_width, minimum=128)
        self.data_width = data_width
        self.phy_sink   = phy_sink
        self.ports      = []

    def get_port(self, dwords=None):
        port = stream.Endpoint(phy_layout(self.data_width))
        self.ports.append((port, dwords or self.data_width//32))
        return port

    def do_finalize(self):
        dw   = self.data_width
        ndw  = dw//32
        out  = self.phy_sink
        n    = len(self.ports)
        if n == 0:
            return
        grant  = Signal(max=max(n, 2))
        locked = Signal()
        # Round robin at packet boundaries: keep the grant while a packet is under way.
        self.sync += [
            If(out.valid & out.ready,
                locked.eq(~out.last),
            ),
        ]
        requests = Cat(*[p.valid for p, _ in self.ports])
        nxt = Signal(max=max(n, 2))
        cases = {}
        for g in range(n):
            # First requesting port after g (g itself last).
            stmt = nxt.eq(g)
            for o in reversed(range(1, n + 1)):
                i = (g + o) % n
                stmt = If(requests[i], nxt.eq(i)).Else(stmt)
            cases[g] = stmt
        self.comb += Case(grant, cases)
        self.sync += If(out.valid & out.ready & out.last,
            grant.eq(nxt)
        ).Elif(~locked & ~Array([p.valid for p, _ in self.ports])[grant],
            grant.eq(nxt)
        )
        # Data: dwords used by a single port are wired from it.
        for i in range(ndw):
            users = [k for k, (_, d) in enumerate(self.ports) if i < d]
            dat_i = out.dat[32*i:32*(i + 1)]
            if len(users) <= 1:
                self.comb += dat_i.eq(self.ports[users[0] if users else 0][0].dat[32*i:32*(i + 1)])
            else:
                self.comb += Case(grant, {k: dat_i.eq(self.ports[k][0].dat[32*i:32*(i + 1)]) for k in users})
        cases = {}
        for k, (p, d) in enumerate(self.ports):
            be_mask = (1 << (4*d)) - 1
            cases[k] = [
                out.valid.eq(p.valid),
                out.first.eq(p.first),
                out.last.eq(p.last),
                out.be.eq(p.be & be_mask),
                p.ready.eq(out.ready),
            ]
        self.comb += Case(grant, cases)
