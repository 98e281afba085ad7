#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Protected completer: serves the device's DMA (its memory reads and writes) from the windows the
root complex handed out, and refuses everything else.

::

    RCTLPRX --> header FIFO --+                   +--> MWr: payload --> DwordAligner --> window.wr
            --> status FIFO --+--> dispatch ------+
            --> payload RAM --+    (in order)     +--> MRd: on-chip queue --+
                                                  |   (+ refusals: UR)      +--> formatter --> RCTLPTX
                                                  +--> MRd: off-chip queue -+    (DwordAligner,
                                                       + window.rd_cmd           header, MPS split)

- The payload buffer holds the payload beats only (as received); each TLP's decoded header waits in
  the header FIFO and its framing in the status FIFO. A TLP is dispatched once it is complete:
  truncated or oversized writes never reach memory.
- A read is served only if all its bytes lie in one window, a write likewise; a read outside gets
  a completion with Unsupported Request status, a write outside (or poisoned, or malformed) is
  dropped. Every refusal is counted and the last refused address kept (``refused_adr``).
- One completion formatter serves every window: on-chip windows straight from their memories
  (their reads are not queued behind LiteDRAM data), off-chip windows from their read data, in
  request order. Completions are split at MPS-aligned boundaries (also RCB-aligned) with exact
  Byte Count and Lower Address.
- Reads never pass earlier writes (PCIe ordering); writes may pass reads.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.common import phy_layout

from functools import reduce
from operator import and_

from literecorder.cores.common import RAMFIFO
from literecorder.cores.pcie.common import *
from literecorder.cores.pcie.tlp import request_header_layout, request_status_layout

# Byte count helpers -------------------------------------------------------------------------------

def _first_be_skip(be):
    """Bytes not enabled at the start of the first dword (xxx1: 0, xx10: 1, x100: 2, 1000: 3)."""
    return Mux(be[0], 0, Mux(be[1], 1, Mux(be[2], 2, Mux(be[3], 3, 0))))

def _last_be_skip(be):
    """Bytes not enabled at the end of the last dword (1xxx: 0, 01xx: 1, 001x: 2, 0001: 3)."""
    return Mux(be[3], 0, Mux(be[2], 1, Mux(be[1], 2, Mux(be[0], 3, 0))))

def _single_dw_bytes(be, r):
    """Byte count of a one-dword request (PCIe: from the first to the last enabled byte, 1 if none)."""
    cases = {}
    for v in range(16):
        bits = [i for i in range(4) if v >> i & 1]
        cases[v] = r.eq(max(bits) - min(bits) + 1 if bits else 1)
    return Case(be, cases)

def read_request_layout(wbits, obits):
    return [
        ("window",   wbits),
        ("ur",       1),      # Refused: one completion with Unsupported Request status.
        ("offset",   obits),  # Byte offset of the first dword in its window.
        ("len",      11),     # Dwords.
        ("first_be", 4),
        ("last_be",  4),
        ("tag",      8),
        ("req_id",   16),
    ]

# Completer ----------------------------------------------------------------------------------------

class RCCompleter(LiteXModule):
    """Serves the device's memory requests from the windows added with ``add_window``.

    Parameters
    ----------
    data_width : int
    endianness : str
        Byte order of the PHY's payload dwords.
    buffer_beats : int
        Payload buffer (beats); holds at least two TLPs of the largest MPS.
    read_requests : int
        Reads of off-chip windows queued in the formatter (latency hiding: their windows fetch ahead).
    """
    def __init__(self, data_width, endianness="little", buffer_beats=64, read_requests=16,
        header_depth=16):
        check_data_width(data_width, minimum=128)
        self.data_width    = data_width
        self.endianness    = endianness
        self.buffer_beats  = buffer_beats
        self.read_requests = read_requests
        self.header_depth  = header_depth
        self.windows       = []

        # From RCTLPRX.
        self.req        = stream.Endpoint(request_header_layout())
        self.req_status = stream.Endpoint(request_status_layout())
        self.req_data   = stream.Endpoint([("dat", data_width)])
        # To RCTLPTX.
        self.source     = stream.Endpoint(phy_layout(data_width))

        # Control / status.
        self.enable       = Signal()        # 0: every request is refused (before NVMe setup).
        self.mps_log2     = Signal(4, reset=MPS_LOG2_RESET)
        self.completer_id = Signal(16, reset=ROOT_ID)
        self.rd_refused   = Signal(32)      # Reads answered with UR.
        self.wr_refused   = Signal(32)      # Writes dropped (outside windows or disabled).
        self.poisoned     = Signal(32)      # Poisoned writes dropped.
        self.malformed    = Signal(32)      # Truncated/oversized TLPs dropped.
        self.refused_adr  = Signal(64)      # Address of the last refused/dropped request.
        self.rd_served    = Signal(32)      # Completions sent with data.
        self.wr_bytes     = Signal(64)      # Payload bytes written to windows.

    def add_window(self, window):
        if window.data_width != self.data_width:
            raise ValueError(f"window {window.name}: data_width {window.data_width} != {self.data_width}")
        for w in self.windows:
            if w.name == window.name:
                raise ValueError(f"window {window.name}: a window of that name exists")
            if w.overlaps(window):
                raise ValueError(f"windows {w.name} and {window.name} overlap")
        self.windows.append(window)
        return window

    def do_finalize(self):
        if not self.windows:
            raise ValueError("the completer needs at least one window")
        dw        = self.data_width
        ndw       = dw//32
        lbit      = log2_int(ndw)
        beat_log2 = log2_int(dw//8)
        windows   = self.windows
        nwin      = len(windows)
        wbits     = max(1, bits_for(nwin - 1))
        obits     = max(log2_int(w.size) for w in windows)
        on_chip   = [i for i, w in enumerate(windows) if w.on_chip]
        off_chip  = [i for i, w in enumerate(windows) if not w.on_chip]

        # Request FIFOs: header (at the first beat), status (at the end), payload beats -----------
        self.hdr_fifo    = hdr_fifo    = RAMFIFO(request_header_layout(), self.header_depth)
        self.status_fifo = status_fifo = stream.SyncFIFO(request_status_layout(), self.header_depth)
        self.payload     = payload     = RAMFIFO([("dat", dw)], self.buffer_beats)
        self.comb += [
            self.req.connect(hdr_fifo.sink),
            self.req_status.connect(status_fifo.sink),
            self.req_data.connect(payload.sink),
        ]
        status = status_fifo.source

        # Window decode of the request at the head of the header FIFO into a register stage (`hdr`
        # and its decoded fields): the dispatch and both paths work from registers -----------------
        head    = hdr_fifo.source
        end_adr = Signal(33)     # Last byte + 1 of the request.
        self.comb += end_adr.eq(head.adr[:32] + Cat(Constant(0, 2), head.len) - 1)
        hit_c    = Signal(nwin)
        win_c    = Signal(wbits)
        offset_c = Signal(obits)
        for i, w in enumerate(windows):
            sb = log2_int(w.size)
            self.comb += hit_c[i].eq(
                (head.adr[32:] == 0) & ~end_adr[32] &
                (head.adr[sb:32] == (w.base >> sb)) & (end_adr[sb:32] == (w.base >> sb)) &
                (head.we & w.writable | ~head.we & w.readable))
            self.comb += If(hit_c[i], win_c.eq(i), offset_c.eq(head.adr[:sb]))
        hdr       = Record(request_header_layout())
        hdr_valid = Signal()
        any_hit   = Signal()
        win_idx   = Signal(wbits)
        offset    = Signal(obits)
        rd_beats  = Signal(9)    # Window beats a read covers.
        wr_end    = Signal(lbit) # Dword of the last payload dword in its beat (writes).
        pop       = Signal()
        self.comb += head.ready.eq(~hdr_valid | pop)
        self.sync += [
            If(head.valid & head.ready,
                hdr_valid.eq(1),
                hdr.raw_bits().eq(head.payload.raw_bits()),
                any_hit.eq((hit_c != 0) & self.enable),
                win_idx.eq(win_c),
                offset.eq(offset_c),
                # (Windows are aligned on their size, a multiple of the beat: the offset's dword
                # in the beat is the address's.)
                rd_beats.eq((head.adr[2:beat_log2] + head.len + ndw - 1) >> lbit),
                wr_end.eq(head.adr[2:beat_log2] + head.len - 1),
            ).Elif(pop,
                hdr_valid.eq(0),
            )
        ]
        # PCIe ordering of posted writes across windows: a write starts only when the other windows'
        # writes are in their memories.
        # (A beat in the write register below is not in its memory yet: a write to another window
        # or a read waits for it too.)
        others_drained = Signal(reset=1)
        if nwin > 1:
            self.comb += Case(win_idx, {i: others_drained.eq(reduce(and_,
                [v.drained for j, v in enumerate(windows) if j != i])) for i in range(nwin)})

        # Write path: payload -> aligner -> window ------------------------------------------------
        self.wr_aligner = wal = DwordAligner(dw)
        wr_win  = Signal(wbits)
        wr_beat = Signal(obits - beat_log2)
        self.comb += [
            wal.sink.dat.eq(payload.source.dat),
            wal.cmd.in_offset.eq(Mux(hdr.h4, 4, 3)),     # Payload after the header (mod ndw).
            wal.cmd.out_offset.eq(offset[2:beat_log2]),
            wal.cmd.length.eq(hdr.len),
        ]
        wr_be = Signal(dw//8)
        for l in range(ndw):
            first_dw = wal.source.first & (offset[2:beat_log2] == l)
            last_dw  = wal.source.last  & (wr_end == l) & (hdr.len != 1)
            self.comb += If(wal.source.dwords[l],
                If(first_dw,
                    wr_be[4*l:4*(l + 1)].eq(hdr.first_be)
                ).Elif(last_dw,
                    wr_be[4*l:4*(l + 1)].eq(hdr.last_be)
                ).Else(
                    wr_be[4*l:4*(l + 1)].eq(0xf)
                )
            )
        # Window write beat register (`wr_*`): the windows' write ports start from registers.
        wr_valid = Signal()
        wr_win_r = Signal(wbits)
        wr_adr   = Signal(obits - beat_log2)
        wr_dat   = Signal(dw, reset_less=True)
        wr_be_r  = Signal(dw//8)
        wr_last  = Signal()
        wr_ready = Signal()
        wr_take  = Signal()
        self.comb += [
            wr_take.eq(~wr_valid | wr_ready),
            wal.source.ready.eq(wr_take),
        ]
        self.sync += If(wr_take,
            wr_valid.eq(wal.source.valid),
            wr_win_r.eq(wr_win),
            wr_adr.eq(wr_beat),
            wr_dat.eq(wal.source.dat),
            wr_be_r.eq(wr_be),
            wr_last.eq(wal.source.last),
        )
        cases = {}
        for i, w in enumerate(windows):
            self.comb += [
                w.wr.adr.eq(wr_adr),
                w.wr.dat.eq(wr_dat),
                w.wr.be.eq(wr_be_r),
                w.wr.last.eq(wr_last),
            ]
            if w.writable:
                cases[i] = [w.wr.valid.eq(wr_valid), wr_ready.eq(w.wr.ready)]
        self.comb += Case(wr_win_r, cases)

        # Read queues: on-chip windows (and refusals), off-chip windows ---------------------------
        rr_layout = read_request_layout(wbits, obits)
        self.fast = fast = stream.SyncFIFO(rr_layout, 4)
        rd_req = stream.Endpoint(rr_layout)
        self.comb += [
            rd_req.window.eq(win_idx),
            rd_req.ur.eq(~any_hit),
            rd_req.offset.eq(offset),
            rd_req.len.eq(hdr.len),
            rd_req.first_be.eq(hdr.first_be),
            rd_req.last_be.eq(hdr.last_be),
            rd_req.tag.eq(hdr.tag),
            rd_req.req_id.eq(hdr.req_id),
        ]
        to_fast = Signal()
        self.comb += to_fast.eq(~any_hit | Array([Constant(int(w.on_chip), 1) for w in windows])[win_idx])
        cmd_ready = Signal()
        if off_chip:
            self.slow = slow = RAMFIFO(rr_layout, self.read_requests)
            cases = {}
            for i in off_chip:
                w = windows[i]
                self.comb += [
                    w.rd_cmd.adr.eq(offset[beat_log2:]),
                    w.rd_cmd.beats.eq(rd_beats),
                ]
                cases[i] = [
                    w.rd_cmd.valid.eq(rd_req.valid & ~to_fast & slow.sink.ready),
                    cmd_ready.eq(w.rd_cmd.ready),
                ]
            self.comb += Case(win_idx, cases)
            self.comb += [
                rd_req.connect(slow.sink, omit={"valid", "ready"}),
                slow.sink.valid.eq(rd_req.valid & ~to_fast & cmd_ready),
            ]
        self.comb += [
            rd_req.connect(fast.sink, omit={"valid", "ready"}),
            fast.sink.valid.eq(rd_req.valid & to_fast),
            rd_req.ready.eq(Mux(to_fast, fast.sink.ready, cmd_ready & slow.sink.ready if off_chip else 0)),
        ]

        # Dispatch (in order) ----------------------------------------------------------------------
        ev_malformed  = Signal()
        ev_poisoned   = Signal()
        ev_wr_refused = Signal()
        ev_rd_refused = Signal()
        ev_wr_ok      = Signal()
        drop_left     = Signal(9)
        self.comb += status.ready.eq(pop)
        self.sync += [
            If(ev_malformed,  self.malformed.eq(self.malformed + 1)),
            If(ev_poisoned,   self.poisoned.eq(self.poisoned + 1)),
            If(ev_wr_refused, self.wr_refused.eq(self.wr_refused + 1)),
            If(ev_rd_refused, self.rd_refused.eq(self.rd_refused + 1)),
            If(ev_wr_ok,      self.wr_bytes.eq(self.wr_bytes + Cat(Constant(0, 2), hdr.len))),
            If(ev_malformed | ev_poisoned | ev_wr_refused | ev_rd_refused,
                self.refused_adr.eq(hdr.adr)
            ),
        ]
        self.dispatch = dispatch = FSM(reset_state="IDLE")
        dispatch.act("IDLE",
            If(hdr_valid & status.valid,
                If(status.malformed | (hdr.we & (hdr.ep | ~any_hit)),
                    ev_malformed.eq(status.malformed),
                    ev_poisoned.eq(~status.malformed & hdr.ep),
                    ev_wr_refused.eq(~status.malformed & ~hdr.ep),
                    NextValue(drop_left, status.beats),
                    NextState("DROP")
                ).Elif(hdr.we,
                    If(others_drained & (~wr_valid | (wr_win_r == win_idx)),
                        ev_wr_ok.eq(1),
                        NextState("WRITE")
                    )
                ).Elif(~wr_valid,
                    # Read: refused reads still get their (UR) completion.
                    rd_req.valid.eq(1),
                    If(rd_req.ready,
                        pop.eq(1),
                        ev_rd_refused.eq(~any_hit),
                    )
                )
            )
        )
        dispatch.act("DROP",
            If(drop_left == 0,
                pop.eq(1),
                NextState("IDLE")
            ).Elif(payload.source.valid,
                NextValue(drop_left, drop_left - 1),
            )
        )
        dropping = Signal()
        self.comb += [
            dropping.eq(dispatch.ongoing("DROP") & (drop_left != 0)),
            wal.sink.valid.eq(payload.source.valid & ~dropping),
            payload.source.ready.eq(Mux(dropping, 1, wal.sink.ready)),
            wal.cmd.valid.eq(dispatch.ongoing("WRITE")),
        ]
        self.sync += If(ev_wr_ok,
            wr_win.eq(win_idx),
            wr_beat.eq(offset[beat_log2:]),
        ).Elif(wal.source.valid & wal.source.ready,
            wr_beat.eq(wr_beat + 1),
        )
        dispatch.act("WRITE",
            If(wal.cmd.ready,
                pop.eq(1),
                NextState("IDLE")
            )
        )

        # Completion formatter ---------------------------------------------------------------------
        self.submodules += self._formatter(windows, on_chip, off_chip, wbits, obits, fast,
            self.slow if off_chip else None)

    def _formatter(self, windows, on_chip, off_chip, wbits, obits, fast, slow):
        """One formatter for every window: takes a read request (on-chip windows first), sends its
        completions (split at MPS), then takes the next one.

        Every completion's geometry (dwords, last or not) is a register, computed when the request
        is taken and when the previous completion ends; on-chip windows are read ahead into a small
        FIFO (a read is issued while it has room), so the memories' addresses do not wait for the
        TX side's ``ready``; the completions leave through an output register."""
        m         = LiteXModule()
        dw        = self.data_width
        ndw       = dw//32
        lbit      = log2_int(ndw)
        beat_log2 = log2_int(dw//8)
        m.out_buf = out_buf = stream.Buffer(phy_layout(dw))
        self.comb += out_buf.source.connect(self.source)
        out       = out_buf.sink

        # Request being served: its queue entry stays at the head until its last completion.
        busy      = Signal()
        from_fast = Signal()
        sel_fast  = Signal()
        done      = Signal()
        load      = Signal()
        req       = stream.Endpoint(read_request_layout(wbits, obits))
        heads     = fast.source.valid | (slow.source.valid if slow is not None else 0)
        self.comb += [
            sel_fast.eq(Mux(busy, from_fast, fast.source.valid)),
            load.eq(~busy & heads),
            fast.source.ready.eq(done & from_fast),
        ]
        if slow is not None:
            self.comb += [
                If(sel_fast,
                    fast.source.connect(req, omit={"valid", "ready"}),
                ).Else(
                    slow.source.connect(req, omit={"valid", "ready"}),
                ),
                slow.source.ready.eq(done & ~from_fast),
            ]
        else:
            self.comb += fast.source.connect(req, omit={"valid", "ready"})

        # Progress within the request and geometry of the current completion (registers).
        mps_dws  = Signal(11)
        dwa      = Signal(obits - 2)  # Dword address (in its window) of the current completion.
        left     = Signal(11)         # Dwords left (the current completion's included).
        ndws     = Signal(11)         # Dwords of the current completion.
        last_cpl = Signal()           # The current completion is the request's last.
        bc       = Signal(13)         # Bytes left: Byte Count of the current completion.
        first    = Signal()
        skip     = Signal(2)          # Bytes before the first enabled one.
        self.sync += mps_dws.eq(1 << (self.mps_log2 - 2))
        # First completion: up to the first MPS boundary; the next ones: MPS or the rest.
        to_bnd0 = Signal(11)
        ndws0   = Signal(11)
        left1   = Signal(11)
        ndws1   = Signal(11)
        self.comb += [
            to_bnd0.eq(mps_dws - (req.offset[2:][:11] & (mps_dws - 1))),
            ndws0.eq(Mux(req.len < to_bnd0, req.len, to_bnd0)),
            left1.eq(left - ndws),
            ndws1.eq(Mux(left1 < mps_dws, left1, mps_dws)),
        ]
        total  = Signal(13)
        single = Signal(3)
        self.comb += [
            _single_dw_bytes(req.first_be, single),
            If(req.len == 1,
                total.eq(single)
            ).Else(
                total.eq((req.len << 2) - _first_be_skip(req.first_be) - _last_be_skip(req.last_be))
            ),
        ]
        ur     = req.ur
        al_end = Signal()    # The current completion's last beat is sent.
        self.sync += [
            If(load,
                busy.eq(1),
                from_fast.eq(fast.source.valid),
                dwa.eq(req.offset[2:]),
                left.eq(req.len),
                ndws.eq(ndws0),
                last_cpl.eq(req.len <= to_bnd0),
                bc.eq(total),
                first.eq(1),
                skip.eq(_first_be_skip(req.first_be)),
            ).Elif(al_end,
                dwa.eq(dwa + ndws),
                left.eq(left1),
                ndws.eq(ndws1),
                last_cpl.eq(left1 <= mps_dws),
                bc.eq(bc - Mux(first, (ndws << 2) - skip, ndws << 2)),
                first.eq(0),
            ),
            If(done, busy.eq(0)),
        ]

        # Completion header (3 dwords).
        header = Signal(96)
        self.comb += header.eq(tlp_image(COMPLETION_HEADER, 3,
            length        = Mux(ur, 0, ndws[:10]),
            type          = FMT_TYPE_CPL,
            fmt           = Cat(0, ~ur),                   # CplD, or Cpl for a refused read.
            byte_count    = bc[:12],
            status        = Mux(ur, CPL_UR, CPL_SC),
            completer_id  = self.completer_id,
            lower_address = Cat(Mux(first & ~ur, skip, 0), Mux(ur, 0, dwa[:5])),
            tag           = req.tag,
            requester_id  = req.req_id))

        # Data: on-chip windows read ahead into `prefetch` (a read is issued while it has room for
        # the reads in flight), off-chip windows streamed.
        m.aligner  = al = DwordAligner(dw)
        m.prefetch = pf = stream.SyncFIFO([("dat", dw)], 4)
        rbits    = max([log2_int(windows[i].size) - beat_log2 for i in on_chip] + [1])
        rd_beat  = Signal(rbits)     # Beat address of the next read.
        rd_left  = Signal(10)        # Reads left to issue.
        rd_on    = Signal()          # Reads of an on-chip window are being issued.
        issue    = Signal()
        inflight = Signal()          # A read was issued: its data is on the window's rd_dat.
        win      = Signal(wbits)
        is_on    = Array([Constant(int(w.on_chip), 1) for w in windows])
        self.comb += issue.eq(rd_on & (pf.level + inflight < pf.depth))
        self.sync += [
            inflight.eq(issue),
            If(load,
                win.eq(req.window),
                rd_beat.eq(req.offset[beat_log2:]),
                rd_left.eq((req.offset[2:beat_log2] + req.len + ndw - 1) >> lbit),
                rd_on.eq(is_on[req.window] & ~ur),
            ).Elif(issue,
                rd_beat.eq(rd_beat + 1),
                rd_left.eq(rd_left - 1),
                rd_on.eq(rd_left != 1),
            ),
        ]
        src_dat   = Signal(dw)
        src_valid = Signal()
        cases, rd_cases = {}, {}
        for i in on_chip:
            w = windows[i]
            self.comb += [
                w.rd_adr.eq(rd_beat),
                w.rd_active.eq(rd_on & (win == i)),
            ]
            rd_cases[i] = pf.sink.dat.eq(w.rd_dat)
            cases[i] = [src_dat.eq(pf.source.dat), src_valid.eq(pf.source.valid),
                pf.source.ready.eq(al.sink.ready)]
        for i in off_chip:
            w = windows[i]
            cases[i] = [src_dat.eq(w.rd_data.dat), src_valid.eq(w.rd_data.valid),
                w.rd_data.ready.eq(al.sink.ready)]
        self.comb += [
            pf.sink.valid.eq(inflight),
            Case(win, rd_cases),
            Case(win, cases),
        ]
        self.comb += [
            al.sink.dat.eq(dword_swap(src_dat, ndw, self.endianness)),
            al.sink.valid.eq(src_valid & busy),
            # Payload from dword 3 of the completion, after its header.
            al.cmd.in_offset.eq(dwa[:lbit]),
            al.cmd.out_offset.eq(3),
            al.cmd.length.eq(ndws),
            al_end.eq(al.cmd.valid & al.cmd.ready),
        ]
        self.comb += [
            out.dat[96:].eq(al.source.dat[96:]),
            If(al.source.first | ur,
                out.dat[:96].eq(header),
            ).Else(
                out.dat[:96].eq(al.source.dat[:96]),
            ),
            If(busy & ur,
                # Refused read: one completion without data.
                out.valid.eq(1),
                out.first.eq(1),
                out.last.eq(1),
                out.be.eq(0xfff),
            ).Else(
                al.cmd.valid.eq(busy),
                out.valid.eq(al.source.valid),
                out.first.eq(al.source.first),
                out.last.eq(al.source.last),
                out.be.eq(be_of_dwords(al.source.dwords | Mux(al.source.first, 0b111, 0))),
                al.source.ready.eq(out.ready),
            ),
            done.eq(busy & Mux(ur, out.ready, al_end & last_cpl)),
        ]
        self.sync += If(out.valid & out.ready & out.first & ~ur, self.rd_served.eq(self.rd_served + 1))
        return m
