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

        # Window decode of the request at the head of the header FIFO, over two register stages:
        # `pre` (the request, each window's hit, the beat geometry) then `hdr` (the window, its
        # offset): the dispatch and both paths work from registers ---------------------------------
        head    = hdr_fifo.source
        end_adr = Signal(33)     # Last byte + 1 of the request.
        self.comb += end_adr.eq(head.adr[:32] + Cat(Constant(0, 2), head.len) - 1)
        hit_c = Signal(nwin)
        for i, w in enumerate(windows):
            sb = log2_int(w.size)
            self.comb += hit_c[i].eq(
                (head.adr[32:] == 0) & ~end_adr[32] &
                (head.adr[sb:32] == (w.base >> sb)) & (end_adr[sb:32] == (w.base >> sb)) &
                (head.we & w.writable | ~head.we & w.readable))
        wr_in_offset = Mux(head.h4, 4, 3)[:lbit]   # Write payload after the header (mod ndw).
        wr_geo_c = aligner_geometry(ndw, wr_in_offset, head.adr[2:beat_log2], head.len)
        pre       = Record(request_header_layout())
        pre_valid = Signal()
        pre_hit   = Signal(nwin)
        pre_geo   = Record(aligner_geometry_layout(ndw))  # Write payload's geometry in the aligner.
        pre_rd_beats = Signal(9)
        pre_wr_end   = Signal(lbit)
        hdr       = Record(request_header_layout())
        hdr_valid = Signal()
        any_hit   = Signal()
        win_idx   = Signal(wbits)
        offset    = Signal(obits)
        wr_geo    = Record(aligner_geometry_layout(ndw))
        rd_beats  = Signal(9)    # Window beats a read covers.
        wr_end    = Signal(lbit) # Dword of the last payload dword in its beat (writes).
        pop       = Signal()
        hdr_take  = Signal()
        self.comb += [
            hdr_take.eq(~hdr_valid | pop),
            head.ready.eq(~pre_valid | hdr_take),
        ]
        self.sync += If(head.ready,
            pre_valid.eq(head.valid),
            pre.raw_bits().eq(head.payload.raw_bits()),
            pre_hit.eq(hit_c),
            [getattr(pre_geo, name).eq(v) for name, v in wr_geo_c.items()],
            # (Windows are aligned on their size, a multiple of the beat: the offset's dword in
            # the beat is the address's.)
            pre_rd_beats.eq((head.adr[2:beat_log2] + head.len + ndw - 1) >> lbit),
            pre_wr_end.eq(head.adr[2:beat_log2] + head.len - 1),
        )
        win_c    = Signal(wbits)
        offset_c = Signal(obits)
        for i, w in enumerate(windows):
            self.comb += If(pre_hit[i], win_c.eq(i), offset_c.eq(pre.adr[:log2_int(w.size)]))
        self.sync += If(hdr_take,
            hdr_valid.eq(pre_valid),
            hdr.raw_bits().eq(pre.raw_bits()),
            any_hit.eq((pre_hit != 0) & self.enable),
            win_idx.eq(win_c),
            offset.eq(offset_c),
            wr_geo.raw_bits().eq(pre_geo.raw_bits()),
            rd_beats.eq(pre_rd_beats),
            wr_end.eq(pre_wr_end),
        )
        # PCIe ordering of posted writes across windows: a write starts only when the other windows'
        # writes are in their memories.
        # (A beat in the write register below is not in its memory yet: a write to another window
        # or a read waits for it too.)
        others_drained = Signal(reset=1)
        if nwin > 1:
            self.comb += Case(win_idx, {i: others_drained.eq(reduce(and_,
                [v.drained for j, v in enumerate(windows) if j != i])) for i in range(nwin)})

        # Write path: payload -> aligner -> window ------------------------------------------------
        self.wr_aligner = wal = DwordAligner(dw, geometry="cmd")
        wr_win  = Signal(wbits)
        wr_beat = Signal(obits - beat_log2)
        wr_win_now  = Signal(wbits)
        wr_beat_now = Signal(obits - beat_log2)
        self.comb += [
            wal.sink.dat.eq(payload.source.dat),
            wal.cmd.in_offset.eq(Mux(hdr.h4, 4, 3)),     # Payload after the header (mod ndw).
            wal.cmd.out_offset.eq(offset[2:beat_log2]),
            wal.cmd.length.eq(hdr.len),
            [getattr(wal.cmd, name).eq(getattr(wr_geo, name)) for name, _ in wr_geo.layout],
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
            wr_win_r.eq(wr_win_now),
            wr_adr.eq(wr_beat_now),
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
                        # The aligner starts in this cycle (no cycle between writes).
                        ev_wr_ok.eq(1),
                        wal.cmd.valid.eq(1),
                        If(wal.cmd.ready,
                            pop.eq(1),
                        ).Else(
                            NextState("WRITE")
                        )
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
        ]
        # The write's window and beat address: from the decode stage in its first cycle.
        self.comb += [
            wr_win_now.eq(Mux(ev_wr_ok, win_idx, wr_win)),
            wr_beat_now.eq(Mux(ev_wr_ok, offset[beat_log2:], wr_beat)),
        ]
        self.sync += [
            wr_win.eq(wr_win_now),
            wr_beat.eq(wr_beat_now),
            If(wal.source.valid & wal.source.ready,
                wr_beat.eq(wr_beat_now + 1),
            ),
        ]
        dispatch.act("WRITE",
            wal.cmd.valid.eq(1),
            If(wal.cmd.ready,
                pop.eq(1),
                NextState("IDLE")
            )
        )

        # Completion formatter ---------------------------------------------------------------------
        self.submodules += self._formatter(windows, on_chip, off_chip, wbits, obits, fast,
            self.slow if off_chip else None)

    def _formatter(self, windows, on_chip, off_chip, wbits, obits, fast, slow):
        """One formatter for every window, in two stages joined by small FIFOs:

        ::

            fast/slow queues --> splitter --> completions (desc) --> sender --> output register
            (on-chip first)        |                                   ^
                                   +--> on-chip reads (issue) --> prefetch (on-chip windows)
                                                                 window rd_data (off-chip)

        The splitter takes a request (on-chip windows first) and cuts it into completions at MPS
        boundaries: each completion's header fields and its geometry in the aligner are computed
        over two cycles into a descriptor. The sender sends the descriptors back to back (no cycle
        between completions, nor between requests) from registers; on-chip windows are read ahead
        into a small FIFO (a read is issued while it has room), so the memories' addresses do not
        wait for the TX side's ``ready``; the completions leave through an output register."""
        m         = LiteXModule()
        dw        = self.data_width
        ndw       = dw//32
        lbit      = log2_int(ndw)
        beat_log2 = log2_int(dw//8)
        rbits     = max([log2_int(windows[i].size) - beat_log2 for i in on_chip] + [1])
        is_on     = Array([Constant(int(w.on_chip), 1) for w in windows])

        # Splitter: request -> completion descriptors ----------------------------------------------
        desc_layout = [
            ("ur",       1),
            ("window",   wbits),
            ("ndws",     11),          # Dwords of the completion.
            ("bc",       12),          # Byte Count.
            ("la",       7),           # Lower Address.
            ("in_offset", lbit),       # Dword of the completion's first dword in its window beat.
            ("tag",      8),
            ("req_id",   16),
        ] + aligner_geometry_layout(ndw)
        m.desc  = desc  = stream.SyncFIFO(desc_layout, 4, buffered=True)
        m.issue = issue_q = stream.SyncFIFO([("window", wbits), ("beat", rbits), ("n", 10)], 4, buffered=True)

        mps_dws  = Signal(11)
        self.sync += mps_dws.eq(1 << (self.mps_log2 - 2))
        s_ur     = Signal()
        s_win    = Signal(wbits)
        s_on     = Signal()
        s_tag    = Signal(8)
        s_req_id = Signal(16)
        s_dwa    = Signal(obits - 2)  # Dword address (in its window) of the next completion.
        s_left   = Signal(11)         # Dwords left (the next completion's included).
        s_len    = Signal(11)
        s_fbe    = Signal(4)
        s_lbe    = Signal(4)
        s_first  = Signal()
        s_skip   = Signal(2)          # Bytes before the first enabled one.
        s_bc     = Signal(13)         # Bytes left: Byte Count of the next completion.
        s_ndws   = Signal(11)         # Dwords of the next completion.
        req      = stream.Endpoint(read_request_layout(wbits, obits))
        take_fast = Signal()
        self.comb += take_fast.eq(fast.source.valid)
        if slow is not None:
            self.comb += If(take_fast,
                fast.source.connect(req, omit={"ready"}),
            ).Else(
                slow.source.connect(req, omit={"ready"}),
            )
        else:
            self.comb += fast.source.connect(req, omit={"ready"})
        # First completion: up to the first MPS boundary; the next ones: MPS or the rest.
        to_bnd = Signal(11)
        self.comb += to_bnd.eq(mps_dws - (s_dwa[:11] & (mps_dws - 1)))
        total  = Signal(13)
        single = Signal(3)
        self.comb += [
            _single_dw_bytes(s_fbe, single),
            If(s_len == 1,
                total.eq(single)
            ).Else(
                total.eq((s_len << 2) - _first_be_skip(s_fbe) - _last_be_skip(s_lbe))
            ),
        ]
        geo = aligner_geometry(ndw, s_dwa[:lbit], Constant(3, lbit), s_ndws)
        last = Signal()
        self.comb += last.eq(s_ur | (s_left == s_ndws))
        self.comb += [
            desc.sink.ur.eq(s_ur),
            desc.sink.window.eq(s_win),
            desc.sink.ndws.eq(s_ndws),
            desc.sink.bc.eq(s_bc[:12]),
            desc.sink.la.eq(Cat(Mux(s_first & ~s_ur, s_skip, 0), Mux(s_ur, 0, s_dwa[:5]))),
            desc.sink.in_offset.eq(s_dwa[:lbit]),
            desc.sink.tag.eq(s_tag),
            desc.sink.req_id.eq(s_req_id),
            [getattr(desc.sink, name).eq(v) for name, v in geo.items()],
            issue_q.sink.window.eq(s_win),
            issue_q.sink.beat.eq(s_dwa[lbit:]),
            issue_q.sink.n.eq(geo["n_in"]),
        ]
        m.split = split = FSM(reset_state="LOAD")
        split.act("LOAD",
            # The next request is chosen (on-chip windows first) when the sender is on its last
            # completion: a read of an on-chip window waits behind one completion at most, as the
            # NVMe command fetches do not wait behind a queue of DRAM data.
            If(req.valid & (desc.level <= 1),
                fast.source.ready.eq(take_fast),
                (slow.source.ready.eq(~take_fast) if slow is not None else []),
                NextValue(s_ur, req.ur),
                NextValue(s_win, req.window),
                NextValue(s_on, is_on[req.window] & ~req.ur),
                NextValue(s_tag, req.tag),
                NextValue(s_req_id, req.req_id),
                NextValue(s_dwa, req.offset[2:]),
                NextValue(s_left, req.len),
                NextValue(s_len, req.len),
                NextValue(s_fbe, req.first_be),
                NextValue(s_lbe, req.last_be),
                NextValue(s_first, 1),
                NextState("CALC")
            )
        )
        split.act("CALC",
            If(s_first,
                NextValue(s_ndws, Mux(s_left < to_bnd, s_left, to_bnd)),
                NextValue(s_bc, total),
                NextValue(s_skip, _first_be_skip(s_fbe)),
            ).Else(
                NextValue(s_ndws, Mux(s_left < mps_dws, s_left, mps_dws)),
            ),
            NextState("EMIT")
        )
        split.act("EMIT",
            desc.sink.valid.eq(~s_on | issue_q.sink.ready),
            issue_q.sink.valid.eq(s_on & desc.sink.ready),
            If(desc.sink.valid & desc.sink.ready,
                NextValue(s_dwa, s_dwa + s_ndws),
                NextValue(s_left, s_left - s_ndws),
                NextValue(s_bc, s_bc - Mux(s_first, (s_ndws << 2) - s_skip, s_ndws << 2)),
                NextValue(s_first, 0),
                If(last,
                    NextState("LOAD")
                ).Else(
                    NextState("CALC")
                )
            )
        )

        # On-chip reads: issued in the sender's order while the prefetch FIFO has room -------------
        m.prefetch = pf = stream.SyncFIFO([("dat", dw)], 4)
        rd_beat  = Signal(rbits)     # Beat address of the next read.
        rd_left  = Signal(10)        # Reads left to issue for the current entry.
        rd_on    = Signal()          # Reads of an on-chip window are being issued.
        rd_win   = Signal(wbits)
        issue    = Signal()
        take     = Signal()
        inflight = Signal()          # A read was issued: its data is on the window's rd_dat.
        in_win   = Signal(wbits)     # ... of this window.
        self.comb += [
            issue.eq(rd_on & (pf.level + inflight < pf.depth)),
            take.eq(issue_q.source.valid & (~rd_on | (issue & (rd_left == 1)))),
            issue_q.source.ready.eq(take),
        ]
        self.sync += [
            inflight.eq(issue),
            in_win.eq(rd_win),
            If(take,
                rd_on.eq(1),
                rd_win.eq(issue_q.source.window),
                rd_beat.eq(issue_q.source.beat),
                rd_left.eq(issue_q.source.n),
            ).Elif(issue,
                rd_beat.eq(rd_beat + 1),
                rd_left.eq(rd_left - 1),
                rd_on.eq(rd_left != 1),
            ),
        ]
        rd_cases = {}
        for i in on_chip:
            w = windows[i]
            self.comb += [
                w.rd_adr.eq(rd_beat),
                w.rd_active.eq(rd_on & (rd_win == i)),
            ]
            rd_cases[i] = pf.sink.dat.eq(w.rd_dat)
        self.comb += [
            pf.sink.valid.eq(inflight),
            Case(in_win, rd_cases),
        ]

        # Sender: one completion per descriptor, back to back --------------------------------------
        m.out_buf = out_buf = stream.Buffer(phy_layout(dw))
        self.comb += out_buf.source.connect(self.source)
        out = out_buf.sink
        d   = desc.source
        m.aligner = al = DwordAligner(dw, geometry="cmd")
        header = Signal(96)
        self.comb += header.eq(tlp_image(COMPLETION_HEADER, 3,
            length        = Mux(d.ur, 0, d.ndws[:10]),
            type          = FMT_TYPE_CPL,
            fmt           = Cat(0, ~d.ur),                 # CplD, or Cpl for a refused read.
            byte_count    = d.bc,
            status        = Mux(d.ur, CPL_UR, CPL_SC),
            completer_id  = self.completer_id,
            lower_address = d.la,
            tag           = d.tag,
            requester_id  = d.req_id))
        src_dat   = Signal(dw)
        src_valid = Signal()
        cases = {}
        for i in on_chip:
            cases[i] = [src_dat.eq(pf.source.dat), src_valid.eq(pf.source.valid),
                pf.source.ready.eq(al.sink.ready)]
        for i in off_chip:
            w = windows[i]
            cases[i] = [src_dat.eq(w.rd_data.dat), src_valid.eq(w.rd_data.valid),
                w.rd_data.ready.eq(al.sink.ready)]
        self.comb += Case(d.window, cases)
        self.comb += [
            al.sink.dat.eq(dword_swap(src_dat, ndw, self.endianness)),
            al.sink.valid.eq(src_valid & d.valid & ~d.ur),
            # Payload from dword 3 of the completion, after its header.
            al.cmd.in_offset.eq(d.in_offset),
            al.cmd.out_offset.eq(3),
            al.cmd.length.eq(d.ndws),
            [getattr(al.cmd, name).eq(getattr(d, name)) for name, _ in aligner_geometry_layout(ndw)],
        ]
        self.comb += [
            out.dat[96:].eq(al.source.dat[96:]),
            If(al.source.first | d.ur,
                out.dat[:96].eq(header),
            ).Else(
                out.dat[:96].eq(al.source.dat[:96]),
            ),
            If(d.valid & d.ur,
                # Refused read: one completion without data.
                out.valid.eq(1),
                out.first.eq(1),
                out.last.eq(1),
                out.be.eq(0xfff),
                d.ready.eq(out.ready),
            ).Else(
                al.cmd.valid.eq(d.valid),
                out.valid.eq(al.source.valid),
                out.first.eq(al.source.first),
                out.last.eq(al.source.last),
                out.be.eq(be_of_dwords(al.source.dwords | Mux(al.source.first, 0b111, 0))),
                al.source.ready.eq(out.ready),
                d.ready.eq(al.cmd.ready),
            ),
        ]
        self.sync += If(out.valid & out.ready & out.first & ~d.ur, self.rd_served.eq(self.rd_served + 1))
        return m
