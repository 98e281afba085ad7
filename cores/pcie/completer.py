#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Protected completer: serves the device's DMA (its memory reads and writes) from a list of
windows, and refuses everything else.

::

    RX requests --> size check --> packet buffer --> dispatch (in order) --+--> MWr: align --> window.wr
                                   (store & forward:   |                   |
                                    malformed TLPs     |                   +--> MRd: split (MPS) --> window.rd_cmd
                                    are dropped)       |                                 |              |
                                                       +--> refused: counted              pending ---> window.rd_data
                                                                                                        |
                                                                      TX <-- CplD header + align <------+

- A read is served only if all its bytes lie in one window; otherwise it gets a completion with
  Unsupported Request status. A write outside the windows (or poisoned, or malformed) is dropped.
  Every refusal is counted and the last refused address is kept (``refused_adr``).
- Completions are split at MPS-aligned boundaries (which are also RCB-aligned) with exact Byte
  Count and Lower Address; several reads are in flight (``max_pending`` completions) so that
  window latency (LiteDRAM) is hidden.
- Writes are stored completely before they are applied (a truncated or oversized TLP never reaches
  memory); reads never pass earlier writes (PCIe ordering), writes may pass reads.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from litepcie.tlp.common import tlp_raw_layout

from functools import reduce
from operator import and_

from literecorder.cores.pcie.common import *

# Window -------------------------------------------------------------------------------------------

def window_rd_cmd_layout(adr_width):
    return [("adr", adr_width), ("beats", 8)]

def window_wr_layout(adr_width, data_width):
    return [("adr", adr_width), ("dat", data_width), ("be", data_width//8)]

class CompleterWindow:
    """A region of the PCIe address space the device may access, served by a memory.

    The completer drives ``rd_cmd`` (beat address within the window, number of beats) and reads
    the beats in order from ``rd_data``; it writes beats (``adr``, ``dat``, ``be``, ``last`` at the
    end of each TLP) to ``wr``. A window must apply writes and reads in the order it accepts them.
    ``rd_cmd.ready`` must only be given when the window can buffer the whole read (no deadlock
    when the completer waits for an earlier window's data).

    Parameters
    ----------
    name : str
    base : int
        PCIe bus address, aligned on ``size``.
    size : int
        Bytes, a power of two >= 4096.
    data_width : int
        Beat width (the TLP datapath width).
    readable, writable : bool
        A window may refuse one direction (e.g. a submission queue is read-only for the device).
    fast : bool
        On-chip memory: its reads go to the completer's fast lane (not queued behind LiteDRAM).
    """
    def __init__(self, name, base, size, data_width, readable=True, writable=True, fast=False):
        if size < 4096 or size & (size - 1):
            raise ValueError(f"window {name}: size 0x{size:x} must be a power of two >= 4096")
        if base % size:
            raise ValueError(f"window {name}: base 0x{base:x} must be aligned on its size 0x{size:x}")
        if base + size > 2**32:
            raise ValueError(f"window {name}: must lie below 4 GiB (32-bit DMA addresses)")
        self.name       = name
        self.base       = base
        self.size       = size
        self.data_width = data_width
        self.readable   = readable
        self.writable   = writable
        self.fast       = fast   # On-chip (short, fixed latency): served by the fast read lane.
        self.adr_width  = log2_int(size) - log2_int(data_width//8)
        self.rd_cmd     = stream.Endpoint(window_rd_cmd_layout(self.adr_width))
        self.rd_data    = stream.Endpoint([("dat", data_width)])
        self.wr         = stream.Endpoint(window_wr_layout(self.adr_width, data_width))
        # Every write accepted so far is in the memory (a window with a write queue drives it):
        # a write to another window waits for it, so that posted writes become visible in order.
        self.drained    = Signal(reset=1)

    def contains(self, adr, nbytes):
        """Migen expression: [adr, adr + nbytes) lies in this window (adr and nbytes signals)."""
        return (adr[log2_int(self.size):] == (self.base >> log2_int(self.size))) & \
               ((adr[:log2_int(self.size)] + nbytes) <= self.size)

# Byte count helpers -------------------------------------------------------------------------------

def _first_be_skip(be):
    """Bytes not enabled at the start of the first dword (xxx1: 0, xx10: 1, x100: 2, 1000: 3)."""
    return Mux(be[0], 0, Mux(be[1], 1, Mux(be[2], 2, Mux(be[3], 3, 0))))

def _last_be_skip(be):
    """Bytes not enabled at the end of the last dword (1xxx: 0, 01xx: 1, 001x: 2, 0001: 3)."""
    return Mux(be[3], 0, Mux(be[2], 1, Mux(be[1], 2, Mux(be[0], 3, 0))))

def _single_dw_bytes(be):
    """Byte count of a one-dword request (PCIe: from the first to the last enabled byte, 1 if none)."""
    cases = {}
    for v in range(16):
        if v == 0:
            n = 1
        else:
            lo = min(i for i in range(4) if v >> i & 1)
            hi = max(i for i in range(4) if v >> i & 1)
            n = hi - lo + 1
        cases[v] = n
    r = Signal(3)
    return r, Case(be, {v: r.eq(n) for v, n in cases.items()})

# Read Splitter ------------------------------------------------------------------------------------

def split_request_layout(window_bits):
    return [
        ("offset",   32),   # Byte offset of the first dword in its window.
        ("len",      11),   # Dwords.
        ("first_be",  4),
        ("last_be",   4),
        ("tag",       8),
        ("req_id",   16),
        ("window",   window_bits),
        ("ur",        1),   # Refused: answer with one UR completion.
    ]

def completion_desc_layout(window_bits):
    return [
        ("offset",     32),
        ("ndws",       11),  # Payload dwords of this completion.
        ("byte_count", 13),  # Remaining bytes including this completion (4096 encoded as 0 on the wire).
        ("lower_adr",   7),
        ("tag",         8),
        ("req_id",     16),
        ("window",     window_bits),
        ("ur",          1),
    ]

class ReadSplitter(LiteXModule):
    """Splits a read request into completions ending on MPS-aligned boundaries."""
    def __init__(self, window_bits):
        self.sink    = sink   = stream.Endpoint(split_request_layout(window_bits))
        self.source  = source = stream.Endpoint(completion_desc_layout(window_bits))
        self.mps_log2 = Signal(4, reset=8)   # 7 (128 B) .. 12 (4096 B).

        # # #

        offset = Signal(32)
        left   = Signal(11)    # Dwords left.
        bc     = Signal(13)    # Bytes left.
        first  = Signal()
        skip   = Signal(2)
        mps_dws = Signal(11)
        self.comb += mps_dws.eq(1 << (self.mps_log2 - 2))

        # Total byte count of the request.
        single, single_case = _single_dw_bytes(sink.first_be)
        self.comb += single_case
        total = Signal(13)
        self.comb += If(sink.len == 1,
            total.eq(single)
        ).Else(
            total.eq((sink.len << 2) - _first_be_skip(sink.first_be) - _last_be_skip(sink.last_be))
        )

        # Dwords of the next completion: up to the next MPS boundary.
        to_boundary = Signal(11)
        ndws        = Signal(11)
        mps_mask    = Signal(12)
        self.comb += [
            mps_mask.eq((1 << self.mps_log2) - 1),
            to_boundary.eq(mps_dws - ((offset & mps_mask) >> 2)),
            ndws.eq(Mux(left < to_boundary, left, to_boundary)),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            sink.ready.eq(sink.ur & source.ready),
            # A refused request: one UR completion, no split.
            source.valid.eq(sink.valid & sink.ur),
            source.ur.eq(1),
            source.tag.eq(sink.tag),
            source.req_id.eq(sink.req_id),
            source.byte_count.eq(total),
            source.lower_adr.eq(0),
            source.ndws.eq(0),
            source.first.eq(1),
            source.last.eq(1),
            If(sink.valid & ~sink.ur,
                NextValue(offset, sink.offset),
                NextValue(left,   sink.len),
                NextValue(bc,     total),
                NextValue(first,  1),
                NextValue(skip,   _first_be_skip(sink.first_be)),
                NextState("SPLIT")
            )
        )
        fsm.act("SPLIT",
            source.valid.eq(1),
            source.offset.eq(offset),
            source.ndws.eq(ndws),
            source.byte_count.eq(bc),
            source.lower_adr.eq(Mux(first, Cat(skip, offset[2:7]), offset[:7])),
            source.tag.eq(sink.tag),
            source.req_id.eq(sink.req_id),
            source.window.eq(sink.window),
            source.first.eq(first),
            source.last.eq(left == ndws),
            If(source.ready,
                NextValue(offset, offset + (ndws << 2)),
                NextValue(left, left - ndws),
                NextValue(bc, bc - Mux(first, (ndws << 2) - skip, ndws << 2)),
                NextValue(first, 0),
                If(left == ndws,
                    sink.ready.eq(1),
                    NextState("IDLE")
                )
            )
        )

# Dword shifters -----------------------------------------------------------------------------------

def _shift_down(prev, cur, s, ndw):
    """Beat made of the dwords [s, ndw) of ``prev`` then [0, s) of ``cur`` (s a signal < ndw)."""
    out = Signal(32*ndw)
    cases = {0: out.eq(prev)}
    for i in range(1, ndw):
        cases[i] = out.eq(Cat(prev[32*i:], cur[:32*i]))
    return out, Case(s, cases)

def _shift_up(prev, cur, s, ndw):
    """Beat made of the dwords [ndw - s, ndw) of ``prev`` then [0, ndw - s) of ``cur``."""
    out = Signal(32*ndw)
    cases = {0: out.eq(cur)}
    for i in range(1, ndw):
        cases[i] = out.eq(Cat(prev[32*(ndw - i):], cur[:32*(ndw - i)]))
    return out, Case(s, cases)

# Completion Lane ----------------------------------------------------------------------------------

class CompletionLane(LiteXModule):
    """Read requests of some windows, in order: split at MPS, read the windows (several completions
    in flight), format the completions. ``windows``: list of (completer index, window)."""
    def __init__(self, windows, tx_port, data_width, wbits, max_pending, request_depth, with_ur):
        dw        = data_width
        ndw       = dw//32
        beat_log2 = log2_int(dw//8)
        self.sink         = stream.Endpoint(split_request_layout(wbits))
        self.mps_log2     = Signal(4, reset=8)
        self.completer_id = Signal(16)
        self.served       = Signal()

        # # #

        # Read path: splitter, issue, pending ------------------------------------------------------
        self.splitter = splitter = ReadSplitter(wbits)
        self.comb += splitter.mps_log2.eq(self.mps_log2)
        split_fifo = stream.SyncFIFO(split_request_layout(wbits), request_depth, buffered=request_depth > 4)
        self.submodules += split_fifo
        self.comb += [
            split_fifo.source.connect(splitter.sink),
            self.sink.connect(split_fifo.sink),
        ]

        self.pending = pending = stream.SyncFIFO(completion_desc_layout(wbits), max_pending)
        desc = splitter.source
        beats_needed = Signal(9)
        desc_bytes   = Signal(14)
        self.comb += [
            desc_bytes.eq(desc.offset[:beat_log2] + Cat(Constant(0, 2), desc.ndws) + (dw//8 - 1)),
            beats_needed.eq(desc_bytes[beat_log2:]),
        ]
        cmd_ready = Signal()
        cases = {}
        for i, w in windows:
            self.comb += [
                w.rd_cmd.adr.eq(desc.offset[beat_log2:]),
                w.rd_cmd.beats.eq(beats_needed),
            ]
            cases[i] = [
                w.rd_cmd.valid.eq(desc.valid & ~desc.ur & pending.sink.ready),
                cmd_ready.eq(w.rd_cmd.ready),
            ]
        self.comb += Case(desc.window, cases)
        self.comb += [
            desc.connect(pending.sink, omit={"valid", "ready"}),
            pending.sink.valid.eq(desc.valid & (desc.ur | cmd_ready)),
            desc.ready.eq(pending.sink.ready & (desc.ur | cmd_ready)),
        ]

        # Completion formatter ---------------------------------------------------------------------
        head      = pending.source
        rd_dat    = Signal(dw)
        rd_valid  = Signal()
        rd_ready  = Signal()
        cases = {}
        for i, w in windows:
            cases[i] = [rd_dat.eq(w.rd_data.dat), rd_valid.eq(w.rd_data.valid),
                w.rd_data.ready.eq(rd_ready)]
        self.comb += Case(head.window, cases)

        shift     = Signal(log2_int(ndw) if ndw > 1 else 1)
        in_left   = Signal(9)
        out_left  = Signal(9)
        dws_left  = Signal(11)
        prev      = Signal(dw, reset_less=True)
        n_in      = Signal(9)
        n_out     = Signal(9)
        head_bytes = Signal(14)
        self.comb += [
            shift.eq(head.offset[2:beat_log2]),
            head_bytes.eq(head.offset[:beat_log2] + Cat(Constant(0, 2), head.ndws) + (dw//8 - 1)),
            n_in.eq(head_bytes[beat_log2:]),
            n_out.eq((head.ndws + ndw - 1) >> log2_int(ndw)),
        ]
        body, body_case = _shift_down(prev, rd_dat, shift, ndw)
        self.comb += body_case
        left_be = Signal(dw//8)
        self.comb += Case(dws_left, {**{i: left_be.eq((1 << (4*i)) - 1) for i in range(ndw)},
            "default": left_be.eq((1 << (4*ndw)) - 1)})

        cpl = tx_port
        bc_wire = Signal(12)
        self.comb += bc_wire.eq(head.byte_count[:12])
        self.comb += [
            cpl.header[0:32].eq(Cat(head.ndws[:10], Constant(0, 4), Constant(0, 1), Constant(0, 9),
                Constant(0b01010, 5), Mux(head.ur, 0b00, 0b10), Constant(0, 1))),
            cpl.header[32:64].eq(Cat(bc_wire, Constant(0, 1), Mux(head.ur, CPL_UR, CPL_SC),
                self.completer_id)),
            cpl.header[64:96].eq(Cat(head.lower_adr, Constant(0, 1), head.tag, head.req_id)),
            cpl.fmt.eq(Mux(head.ur, 0b00, 0b10)),
        ]

        self.fsm = fsm = FSM(reset_state="HEAD")
        fsm.act("HEAD",
            If(head.valid,
                If(head.ur,
                    NextState("UR")
                ).Else(
                    NextValue(in_left, n_in),
                    NextValue(out_left, n_out),
                    NextValue(dws_left, head.ndws),
                    NextState("PRIME")
                )
            )
        )
        fsm.act("UR",
            cpl.valid.eq(1),
            cpl.first.eq(1),
            cpl.last.eq(1),
            cpl.be.eq(0),
            If(cpl.ready,
                head.ready.eq(1),
                NextState("HEAD")
            )
        )
        # First window beat: kept when the payload starts past dword 0 and spans two beats.
        fsm.act("PRIME",
            If(shift == 0,
                NextState("DATA")
            ).Else(
                rd_ready.eq(1),
                If(rd_valid,
                    NextValue(prev, rd_dat),
                    NextValue(in_left, in_left - 1),
                    NextState("DATA")
                )
            )
        )
        first_out = Signal()
        self.sync += If(fsm.ongoing("HEAD"), first_out.eq(1)).Elif(cpl.valid & cpl.ready, first_out.eq(0))
        fsm.act("DATA",
            cpl.first.eq(first_out),
            cpl.last.eq(out_left == 1),
            cpl.be.eq(left_be),
            If(in_left != 0,
                cpl.valid.eq(rd_valid),
                rd_ready.eq(cpl.ready),
                If(shift == 0,
                    cpl.dat.eq(rd_dat)
                ).Else(
                    cpl.dat.eq(body)
                )
            ).Else(
                # Last output beat from the kept beat only.
                cpl.valid.eq(1),
                cpl.dat.eq(body),
            ),
            If(cpl.valid & cpl.ready,
                If(in_left != 0,
                    NextValue(prev, rd_dat),
                    NextValue(in_left, in_left - 1),
                ),
                NextValue(out_left, out_left - 1),
                NextValue(dws_left, dws_left - ndw),
                If(out_left == 1,
                    head.ready.eq(1),
                    NextState("HEAD")
                )
            )
        )
        self.comb += self.served.eq(cpl.valid & cpl.ready & cpl.first & ~head.ur)


# Completer ----------------------------------------------------------------------------------------

class RCCompleter(LiteXModule):
    """Serves the device's memory requests from ``windows`` (see module docstring).

    Parameters
    ----------
    req_source : stream.Endpoint
        Decoded memory requests from ``RCTLPRX``.
    tx : RCTLPTX
        Its raw-TLP ports carry the completions (one port per read lane).
    windows : list of CompleterWindow
    data_width : int
    max_pending : int
        Completions issued to windows and not yet sent (read latency hiding).
    """
    def __init__(self, req_source, tx, windows, data_width, max_pending=16, buffer_beats=64,
        slow_depth=64):
        check_data_width(data_width)
        if not windows:
            raise ValueError("the completer needs at least one window")
        for a in windows:
            if a.data_width != data_width:
                raise ValueError(f"window {a.name}: data_width {a.data_width} != {data_width}")
            for b in windows:
                if a is not b and a.base < b.base + b.size and b.base < a.base + a.size:
                    raise ValueError(f"windows {a.name} and {b.name} overlap")
        dw        = data_width
        ndw       = dw//32
        beat_log2 = log2_int(dw//8)
        nwin      = len(windows)
        wbits     = max(1, bits_for(nwin - 1))
        self.windows = windows

        # Control / status.
        self.enable        = Signal()        # 0: every request is refused (before NVMe setup).
        self.mps_log2      = Signal(4, reset=8)
        self.completer_id  = Signal(16, reset=ROOT_ID)
        self.rd_refused    = Signal(32)      # Reads answered with UR.
        self.wr_refused    = Signal(32)      # Writes dropped (outside windows or disabled).
        self.poisoned      = Signal(32)      # Poisoned writes dropped.
        self.malformed     = Signal(32)      # Truncated/oversized TLPs dropped.
        self.refused_adr   = Signal(64)      # Address of the last refused/dropped request.
        self.rd_served     = Signal(32)      # Completions sent with data.
        self.wr_bytes      = Signal(48)      # Payload bytes written to windows.

        # # #

        # Oversized writes are dropped before buffering (the buffer holds whole TLPs) -------------
        mps_dws = Signal(11)
        self.comb += mps_dws.eq(1 << (self.mps_log2 - 2))
        req_layout = rx_request_layout(dw) + [("malformed", 1)]
        checked = stream.Endpoint(req_layout)
        oversize = Signal()
        dropping = Signal()
        self.comb += oversize.eq(req_source.we & (req_source.len > mps_dws))
        self.comb += [
            req_source.connect(checked),
            If((req_source.first & oversize) | dropping,
                checked.valid.eq(0),
                req_source.ready.eq(1),
            )
        ]
        ev_oversize = Signal()
        self.comb += ev_oversize.eq(req_source.valid & req_source.ready & req_source.first & oversize)
        self.sync += [
            If(ev_oversize,
                dropping.eq(~req_source.last),
            ).Elif(req_source.valid & req_source.ready & req_source.last,
                dropping.eq(0)
            )
        ]

        # Packet buffer (store and forward) -------------------------------------------------------
        self.buffer = buf = stream.SyncFIFO(req_layout, buffer_beats, buffered=True)
        self.comb += checked.connect(buf.sink)
        # One entry per complete packet: its malformed flag (known at its last beat).
        self.status = status = stream.SyncFIFO([("malformed", 1)], buffer_beats)
        self.comb += [
            status.sink.valid.eq(checked.valid & checked.ready & checked.last),
            status.sink.malformed.eq(checked.malformed),
        ]
        pkt = buf.source

        # Window decode of the request at the head of the buffer ----------------------------------
        nbytes = Signal(13)
        self.comb += nbytes.eq(pkt.len << 2)
        hit     = Signal(nwin)
        win_idx = Signal(wbits)
        offset  = Signal(32)
        for i, w in enumerate(windows):
            self.comb += hit[i].eq(w.contains(pkt.adr, nbytes) & (pkt.adr[32:] == 0) &
                ((pkt.we & w.writable) | (~pkt.we & w.readable)))
            self.comb += If(hit[i], win_idx.eq(i), offset.eq(pkt.adr[:log2_int(w.size)]))
        any_hit = Signal()
        self.comb += any_hit.eq((hit != 0) & self.enable)
        # PCIe ordering of posted writes across windows: a write starts only when the writes of the
        # other windows are in their memories (e.g. an NVMe read's data still queued for LiteDRAM
        # must be there before its completion entry lands in the on-chip CQ and the recorder reads
        # the data through another DRAM port).
        others_drained = Signal()
        if len(windows) > 1:
            self.comb += Case(win_idx, {i: others_drained.eq(reduce(and_,
                [v.drained for j, v in enumerate(windows) if j != i])) for i in range(len(windows))})
        else:
            self.comb += others_drained.eq(1)

        # Read lanes: on-chip windows (fast) and the others (LiteDRAM) -------------------------
        # Completions of different requests may pass each other (PCIe ordering): a small read of a
        # submission queue or a PRP list is not queued behind bulk data completions.
        fast_ids = [i for i, w in enumerate(windows) if w.fast]
        slow_ids = [i for i, w in enumerate(windows) if not w.fast]
        lanes = []
        self.fast_lane = CompletionLane([(i, windows[i]) for i in fast_ids], tx.get_port(),
            data_width, wbits, max_pending, request_depth=4, with_ur=True)
        lanes.append(self.fast_lane)
        if slow_ids:
            self.slow_lane = CompletionLane([(i, windows[i]) for i in slow_ids], tx.get_port(),
                data_width, wbits, max_pending, request_depth=slow_depth, with_ur=False)
            lanes.append(self.slow_lane)
        for lane in lanes:
            self.comb += [
                lane.mps_log2.eq(self.mps_log2),
                lane.completer_id.eq(self.completer_id),
            ]
        self.sync += self.rd_served.eq(self.rd_served + sum(lane.served for lane in lanes))
        split_in = stream.Endpoint(split_request_layout(wbits))
        to_fast  = Signal()
        self.comb += to_fast.eq(~any_hit | Array([Constant(int(w.fast), 1) for w in windows])[win_idx])
        if slow_ids:
            self.comb += If(to_fast,
                split_in.connect(self.fast_lane.sink)
            ).Else(
                split_in.connect(self.slow_lane.sink)
            )
        else:
            self.comb += split_in.connect(self.fast_lane.sink)

        # Dispatch (in order) ----------------------------------------------------------------------
        wr_shift  = Signal(log2_int(ndw) if ndw > 1 else 1)
        wr_adr    = Signal(32)
        wr_win    = Signal(wbits)
        wr_left   = Signal(11)   # Payload dwords not yet placed.
        wr_pos    = Signal(11)   # Payload dwords placed.
        wr_n      = Signal(11)
        wr_in_left = Signal(9)
        wr_prev   = Signal(dw, reset_less=True)
        wr_first_be = Signal(4)
        wr_last_be  = Signal(4)
        wr_beat_adr = Signal(32 - beat_log2)
        wr_out_left = Signal(9)
        wr_dat  = Signal(dw)
        wr_be   = Signal(dw//8)
        wr_valid = Signal()
        wr_ready = Signal()
        wr_last  = Signal()
        cases = {}
        for i, w in enumerate(windows):
            self.comb += [
                w.wr.adr.eq(wr_beat_adr),
                w.wr.dat.eq(wr_dat),
                w.wr.be.eq(wr_be),
                w.wr.last.eq(wr_last),
            ]
            cases[i] = [w.wr.valid.eq(wr_valid), wr_ready.eq(w.wr.ready)]
        self.comb += Case(wr_win, cases)

        ev_malformed  = Signal()
        ev_poisoned   = Signal()
        ev_wr_refused = Signal()
        ev_rd_refused = Signal()
        ev_wr_ok      = Signal()
        self.sync += [
            If(ev_oversize | ev_malformed, self.malformed.eq(self.malformed + 1)),
            If(ev_poisoned,   self.poisoned.eq(self.poisoned + 1)),
            If(ev_wr_refused, self.wr_refused.eq(self.wr_refused + 1)),
            If(ev_rd_refused, self.rd_refused.eq(self.rd_refused + 1)),
            If(ev_wr_ok,      self.wr_bytes.eq(self.wr_bytes + (pkt.len << 2))),
            If(ev_oversize,
                self.refused_adr.eq(req_source.adr)
            ).Elif(ev_malformed | ev_poisoned | ev_wr_refused | ev_rd_refused,
                self.refused_adr.eq(pkt.adr)
            ),
        ]
        self.dispatch = dispatch = FSM(reset_state="IDLE")
        dispatch.act("IDLE",
            If(pkt.valid & status.source.valid,
                If(status.source.malformed,
                    ev_malformed.eq(1),
                    NextState("DROP")
                ).Elif(pkt.we,
                    If(pkt.ep,
                        ev_poisoned.eq(1),
                        NextState("DROP")
                    ).Elif(~any_hit,
                        ev_wr_refused.eq(1),
                        NextState("DROP")
                    ).Elif(others_drained,
                        NextValue(wr_win, win_idx),
                        NextValue(wr_shift, offset[2:beat_log2]),
                        NextValue(wr_beat_adr, offset[beat_log2:]),
                        NextValue(wr_left, pkt.len),
                        NextValue(wr_n, pkt.len),
                        NextValue(wr_pos, 0),
                        NextValue(wr_first_be, pkt.first_be),
                        NextValue(wr_last_be, pkt.last_be),
                        NextValue(wr_in_left, (pkt.len + ndw - 1) >> log2_int(ndw)),
                        NextValue(wr_out_left, (offset[2:beat_log2] + pkt.len + ndw - 1) >> log2_int(ndw)),
                        ev_wr_ok.eq(1),
                        NextState("WRITE")
                    )
                ).Else(
                    # Read: refused reads still get their (UR) completion.
                    split_in.valid.eq(1),
                    If(split_in.ready,
                        pkt.ready.eq(1),
                        status.source.ready.eq(1),
                        ev_rd_refused.eq(~any_hit),
                    )
                )
            )
        )
        self.comb += [
            split_in.offset.eq(offset),
            split_in.len.eq(pkt.len),
            split_in.first_be.eq(pkt.first_be),
            split_in.last_be.eq(pkt.last_be),
            split_in.tag.eq(pkt.tag),
            split_in.req_id.eq(pkt.req_id),
            split_in.window.eq(win_idx),
            split_in.ur.eq(~any_hit),
        ]
        dispatch.act("DROP",
            pkt.ready.eq(1),
            If(pkt.valid & pkt.last,
                status.source.ready.eq(1),
                NextState("IDLE")
            )
        )
        # Write: payload dword i goes to window dword (shift + i).
        shifted, shifted_case = _shift_up(wr_prev, pkt.dat, wr_shift, ndw)
        self.comb += shifted_case
        lane_be = Signal(dw//8)
        for l in range(ndw):
            # Lane l of the current beat holds payload dword (pos + l - shift).
            pos_l = Signal(12, name=f"wr_pos{l}")
            self.comb += pos_l.eq(wr_pos + l)
            self.comb += If((pos_l >= wr_shift) & (pos_l < wr_shift + wr_n),
                If(pos_l == wr_shift,
                    lane_be[4*l:4*(l+1)].eq(wr_first_be)
                ).Elif(pos_l == wr_shift + wr_n - 1,
                    lane_be[4*l:4*(l+1)].eq(wr_last_be)
                ).Else(
                    lane_be[4*l:4*(l+1)].eq(0xf)
                )
            )
        dispatch.act("WRITE",
            wr_dat.eq(shifted),
            wr_be.eq(lane_be),
            wr_last.eq(wr_out_left == 1),
            If(wr_in_left != 0,
                wr_valid.eq(pkt.valid),
                pkt.ready.eq(wr_ready),
            ).Else(
                wr_valid.eq(1),
            ),
            If(wr_valid & wr_ready,
                If(wr_in_left != 0,
                    NextValue(wr_prev, pkt.dat),
                    NextValue(wr_in_left, wr_in_left - 1),
                ),
                NextValue(wr_out_left, wr_out_left - 1),
                NextValue(wr_pos, wr_pos + ndw),
                NextValue(wr_beat_adr, wr_beat_adr + 1),
                If(wr_out_left == 1,
                    status.source.ready.eq(1),
                    NextState("IDLE")
                )
            )
        )
