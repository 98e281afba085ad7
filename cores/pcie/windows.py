#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Windows of the completer: what the device may access, and the memories behind them.

A window is handed out by the root complex (``RCRootComplex.add_window``); its owner serves it:

- an on-chip window (``on_chip=True``: block RAM, or data computed from one) is read straight from
  its memory: the completer drives ``rd_adr`` and takes ``rd_dat`` one cycle later (a synchronous
  read port, no FIFO); ``rd_active`` is set while the completer uses the read port;
- another window (LiteDRAM) takes read commands (``rd_cmd``: beat address, beats) and returns the
  beats in order on ``rd_data``;
- both take writes on ``wr`` (beat address, data, byte enables, ``last`` at the end of each TLP) and
  apply writes and reads in the order they accepted them.

``SRAMWindow`` (on-chip RAM shared with the CPU) and ``DRAMWindow`` (LiteDRAM native port) serve the
windows of the SoC; the NVMe queue engine serves its own (queues, PRP lists).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream, wishbone

from literecorder.cores.common import ram_style_attr

# Window -------------------------------------------------------------------------------------------

def window_rd_cmd_layout(adr_width):
    return [("adr", adr_width), ("beats", 9)]

def window_wr_layout(adr_width, data_width):
    return [("adr", adr_width), ("dat", data_width), ("be", data_width//8)]

class CompleterWindow:
    """A region of the PCIe bus address space the device may access (see the module docstring).

    Parameters
    ----------
    name : str
    base : int
        PCIe bus address, aligned on ``size``, below 4 GiB.
    size : int
        Bytes, a power of two >= 4096.
    data_width : int
        Beat width (the TLP datapath width).
    readable, writable : bool
        A window may refuse one direction (a submission queue is read-only for the device).
    on_chip : bool
        Served from a synchronous-read memory port (``rd_adr``/``rd_dat``) instead of ``rd_cmd``/
        ``rd_data``; its reads are not queued behind off-chip data.
    """
    def __init__(self, name, base, size, data_width, readable=True, writable=True, on_chip=False):
        if size < 4096 or size & (size - 1):
            raise ValueError(f"window {name}: size 0x{size:x} must be a power of two >= 4096")
        if base % size:
            raise ValueError(f"window {name}: base 0x{base:x} must be aligned on its size 0x{size:x}")
        if base + size > 2**32:
            raise ValueError(f"window {name}: must lie below 4 GiB (32-bit DMA addresses)")
        if not (readable or writable):
            raise ValueError(f"window {name}: neither readable nor writable")
        self.name       = name
        self.base       = base
        self.size       = size
        self.data_width = data_width
        self.readable   = readable
        self.writable   = writable
        self.on_chip    = on_chip
        self.adr_width  = log2_int(size) - log2_int(data_width//8)
        self.wr         = stream.Endpoint(window_wr_layout(self.adr_width, data_width))
        # Every write accepted so far is in the memory (a window with a write queue drives it):
        # the completer starts a write to another window only then, so that posted writes become
        # visible in order (an NVMe read's data in DRAM before its completion entry in the CQ).
        self.drained    = Signal(reset=1)
        if on_chip:
            self.rd_adr    = Signal(self.adr_width)
            self.rd_dat    = Signal(data_width)
            self.rd_active = Signal()
        else:
            self.rd_cmd  = stream.Endpoint(window_rd_cmd_layout(self.adr_width))
            self.rd_data = stream.Endpoint([("dat", data_width)])

    def overlaps(self, other):
        return self.base < other.base + other.size and other.base < self.base + self.size

# On-chip RAM window -------------------------------------------------------------------------------

class SRAMWindow(LiteXModule):
    """On-chip RAM seen by the device (an on-chip window) and by the CPU (32-bit Wishbone, ``bus``).

    For the NVMe admin queues, Identify/log buffers and small transfers of the BIOS driver. Port A
    serves the device's reads and the CPU (when the device is not reading), port B the device's
    writes: no data multiplexer on either port.
    """
    def __init__(self, window):
        if not window.on_chip:
            raise ValueError(f"window {window.name}: SRAMWindow serves on-chip windows")
        w    = window
        dw   = w.data_width
        ndw  = dw//32
        rows = w.size//(dw//8)
        self.window = w
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        mem = Memory(dw, rows, name=f"{w.name}_mem")
        pa  = mem.get_port(write_capable=True, we_granularity=8, mode=READ_FIRST)
        pb  = mem.get_port(write_capable=True, we_granularity=8)
        self.specials += mem, pa, pb

        # Device writes (port B).
        self.comb += [
            w.wr.ready.eq(1),
            pb.adr.eq(w.wr.adr),
            pb.dat_w.eq(w.wr.dat),
            If(w.wr.valid, pb.we.eq(w.wr.be)),
        ]

        # Device reads and CPU (port A, the device first).
        lane   = Signal(max=max(ndw, 2))
        lane_r = Signal(max=max(ndw, 2))
        cpu    = Signal()
        self.comb += [
            lane.eq(bus.adr[:log2_int(ndw)]),
            cpu.eq(bus.cyc & bus.stb & ~bus.ack & ~w.rd_active),
            pa.adr.eq(Mux(cpu, bus.adr[log2_int(ndw):], w.rd_adr)),
            pa.dat_w.eq(Replicate(bus.dat_w, ndw)),
            w.rd_dat.eq(pa.dat_r),
            # Lane select with constant slices (a variable shift by lane*32 is a known pitfall).
            Case(lane_r, {l: bus.dat_r.eq(pa.dat_r[32*l:32*(l + 1)]) for l in range(ndw)}),
        ]
        for l in range(ndw):
            self.comb += If(cpu & bus.we & (lane == l), pa.we[4*l:4*(l + 1)].eq(bus.sel))
        self.sync += [
            lane_r.eq(lane),
            bus.ack.eq(cpu),
        ]

# LiteDRAM window ----------------------------------------------------------------------------------

class DRAMWindow(LiteXModule):
    """LiteDRAM memory seen by the device through one native port (reads and writes in order).

    Beats (``data_width``) are mapped on the port's words (``port.data_width``, a multiple): the
    beats of a write go straight into the lanes of the word being built in the write-data RAM, which
    is sent as one masked write when it is complete or the TLP ends (no word register); a read
    fetches the words covering its beats and drops the lanes it does not need. Up to ``read_depth``
    words are in flight to hide the DRAM latency.

    Parameters
    ----------
    window : CompleterWindow
        An off-chip window (``on_chip=False``).
    port : LiteDRAMNativePort
    dram_offset : int
        Byte offset in the DRAM (port address space) where the window starts.
    """
    def __init__(self, window, port, dram_offset=0, read_depth=32, write_depth=32, read_requests=16):
        w   = window
        dw  = w.data_width
        pdw = port.data_width
        if w.on_chip:
            raise ValueError(f"window {w.name}: DRAMWindow serves off-chip windows")
        if pdw % dw:
            raise ValueError(f"DRAM port width {pdw} is not a multiple of the beat width {dw}")
        if dram_offset % w.size:
            raise ValueError(f"window {w.name}: dram_offset 0x{dram_offset:x} must be aligned on its size")
        ratio = pdw//dw
        rbits = log2_int(ratio)
        aw    = port.address_width
        word_offset = dram_offset//(pdw//8)
        self.window = w

        # # #

        def lane_of(adr):
            return adr[:rbits] if rbits else Constant(0, 1)

        # Commands in order (reads: one per word; writes: their word, data in the write RAM).
        cmds = stream.SyncFIFO([("we", 1), ("adr", aw)], 8)
        self.submodules += cmds

        # Write-data RAM: the lanes of a word are written by their beats; masks beside them.
        wmem  = Memory(pdw, write_depth, name=f"{w.name}_wdata")
        wmask = Memory(pdw//8, write_depth, name=f"{w.name}_wmask")
        ww = wmem.get_port(write_capable=True, we_granularity=dw)
        wr = wmem.get_port(mode=READ_FIRST)
        mw = wmask.get_port(write_capable=True, we_granularity=dw//8)
        mr = wmask.get_port(mode=READ_FIRST)
        ram_style_attr(wmem, "block")
        ram_style_attr(wmask, "block")
        self.specials += wmem, wmask, ww, wr, mw, mr
        wp      = Signal(log2_int(write_depth))
        rp      = Signal(log2_int(write_depth))
        wlevel  = Signal(max=write_depth + 1)
        wvis    = Signal(max=write_depth + 1)
        wcommit = Signal()
        wcommit_d = Signal()
        wpop    = Signal()

        beat_word = Signal(aw)
        beat_lane = Signal(max(rbits, 1))
        fresh     = Signal(reset=1)  # The next beat starts a word (its other lanes are masked off).
        self.comb += [
            beat_word.eq(word_offset + (w.wr.adr >> rbits)),
            beat_lane.eq(lane_of(w.wr.adr)),
            ww.adr.eq(wp),
            ww.dat_w.eq(Replicate(w.wr.dat, ratio)),
            mw.adr.eq(wp),
            Case(beat_lane, {l: mw.dat_w.eq(w.wr.be << (dw//8*l)) for l in range(ratio)}),
        ]

        # Front end: write beats and read commands, in the order they come.
        rd_info   = stream.SyncFIFO([("skip", max(rbits, 1)), ("beats", 9)], read_requests)
        self.submodules += rd_info
        rd_word   = Signal(aw)
        rd_words  = Signal(9)
        self.fsm = fsm = FSM(reset_state="IDLE")
        write_now = Signal()
        fsm.act("IDLE",
            If(w.wr.valid,
                write_now.eq(wlevel != write_depth),
            ).Elif(w.rd_cmd.valid & rd_info.sink.ready,
                w.rd_cmd.ready.eq(1),
                rd_info.sink.valid.eq(1),
                NextValue(rd_word, word_offset + (w.rd_cmd.adr >> rbits)),
                NextValue(rd_words, (lane_of(w.rd_cmd.adr) + w.rd_cmd.beats + ratio - 1) >> rbits),
                NextState("READ")
            )
        )
        # A beat is written into its lane of the word at `wp`; the word is sent when its last lane is
        # written or the TLP ends (the beats of a TLP are consecutive: a word left open is always
        # completed by the next beat).
        end_word = Signal()
        self.comb += [
            end_word.eq((beat_lane == ratio - 1) | w.wr.last),
            w.wr.ready.eq(write_now & (~end_word | cmds.sink.ready)),
            If(w.wr.valid & w.wr.ready,
                ww.we.eq(1 << beat_lane if rbits else 1),
                mw.we.eq(Mux(fresh, (1 << ratio) - 1, 1 << beat_lane if rbits else 1)),
            ),
        ]
        self.sync += If(w.wr.valid & w.wr.ready,
            fresh.eq(end_word),
        )
        self.comb += [
            wcommit.eq(w.wr.valid & w.wr.ready & end_word),
            cmds.sink.valid.eq(wcommit | fsm.ongoing("READ")),
            cmds.sink.we.eq(~fsm.ongoing("READ")),
            cmds.sink.adr.eq(Mux(fsm.ongoing("READ"), rd_word, beat_word)),
            rd_info.sink.skip.eq(lane_of(w.rd_cmd.adr)),
            rd_info.sink.beats.eq(w.rd_cmd.beats),
        ]
        fsm.act("READ",
            If(cmds.sink.ready,
                NextValue(rd_word, rd_word + 1),
                NextValue(rd_words, rd_words - 1),
                If(rd_words == 1, NextState("IDLE"))
            )
        )

        # Back end: commands to the port; reads only with room reserved for their data.
        reserved = Signal(max=read_depth + 1)
        rd_free  = Signal()      # A word of read data is released.
        can_read = Signal()
        rd_issue = Signal()
        # LiteDRAM takes the data of a write when it wants it (it does not wait for wdata.valid):
        # a write is issued only when its word is visible at the write RAM's output.
        w_issued = Signal(max=write_depth + 1)   # Writes issued, data not yet taken.
        can_write = Signal()
        wr_issue  = Signal()
        self.comb += [
            can_read.eq(reserved != read_depth),
            can_write.eq(wvis != w_issued),
            port.cmd.valid.eq(cmds.source.valid & Mux(cmds.source.we, can_write, can_read)),
            port.cmd.we.eq(cmds.source.we),
            port.cmd.addr.eq(cmds.source.adr),
            port.cmd.last.eq(1),
            cmds.source.ready.eq(port.cmd.ready & Mux(cmds.source.we, can_write, can_read)),
            wr_issue.eq(port.cmd.valid & port.cmd.ready & cmds.source.we),
            rd_issue.eq(port.cmd.valid & port.cmd.ready & ~cmds.source.we),
            port.rdata.ready.eq(1),
        ]
        self.sync += reserved.eq(reserved + rd_issue - rd_free)

        # Write data to the port: the RAM's read latch, one word ahead when a word is taken.
        self.comb += [
            wpop.eq(port.wdata.valid & port.wdata.ready),
            wr.adr.eq(rp + wpop),
            mr.adr.eq(rp + wpop),
            port.wdata.valid.eq(wvis != 0),
            port.wdata.data.eq(wr.dat_r),
            port.wdata.we.eq(mr.dat_r),
        ]
        # Drained: every committed word was taken by the port. A TLP's last beat commits its word,
        # and the completer writes one window at a time: a word left open is never pending here.
        self.comb += w.drained.eq(wlevel == 0)
        self.sync += [
            wcommit_d.eq(wcommit),
            If(wcommit, wp.eq(wp + 1)),
            rp.eq(rp + wpop),
            wlevel.eq(wlevel + wcommit - wpop),
            wvis.eq(wvis + wcommit_d - wpop),
            w_issued.eq(w_issued + wr_issue - wpop),
        ]

        # Read data RAM: written a word at a time (one write port per lane), read a beat at a time
        # (block RAM with ports of different widths: no lane multiplexer). The read latch holds the
        # current beat; it is addressed one beat ahead when a beat is taken.
        rmem = Memory(dw, read_depth*ratio, name=f"{w.name}_rdata")
        ram_style_attr(rmem, "block")
        rrd  = rmem.get_port(mode=READ_FIRST)
        rwr  = [rmem.get_port(write_capable=True) for _ in range(ratio)]
        self.specials += rmem, rrd, *rwr
        rwp    = Signal(log2_int(read_depth))
        rvis   = Signal(max=read_depth + 1)   # Words visible at the read latch, not yet released.
        rcame  = Signal()
        for l, p in enumerate(rwr):
            self.comb += [
                p.adr.eq(Cat(Constant(l, rbits), rwp) if rbits else rwp),
                p.dat_w.eq(port.rdata.data[dw*l:dw*(l + 1)]),
                p.we.eq(port.rdata.valid),
            ]
        self.sync += [
            rcame.eq(port.rdata.valid),
            If(port.rdata.valid, rwp.eq(rwp + 1)),
            rvis.eq(rvis + rcame - rd_free),
        ]

        # Beats of each read: from lane `skip` of its first word, `beats` of them; a word is released
        # when its last lane is taken or the read ends. A new read is addressed in its first cycle.
        info   = rd_info.source
        rw     = Signal(log2_int(read_depth))   # Word of the current beat.
        lane   = Signal(max(rbits, 1))
        left   = Signal(9)
        loaded = Signal()                        # `lane`/`left` belong to the read at the head.
        take   = Signal()
        last_b = Signal()
        end_w  = Signal()
        self.comb += [
            w.rd_data.dat.eq(rrd.dat_r),
            w.rd_data.valid.eq(loaded & (rvis != 0)),
            take.eq(w.rd_data.valid & w.rd_data.ready),
            last_b.eq(left == 1),
            end_w.eq(last_b | (lane == ratio - 1) if rbits else 1),
            rd_free.eq(take & end_w),
            info.ready.eq(take & last_b),
            If(~loaded,
                rrd.adr.eq(Cat(info.skip[:rbits], rw) if rbits else rw),
            ).Elif(take & end_w,
                rrd.adr.eq(Cat(Constant(0, rbits), rw + 1) if rbits else rw + 1),
            ).Elif(take,
                rrd.adr.eq(Cat((lane + 1)[:rbits], rw) if rbits else rw),
            ).Else(
                rrd.adr.eq(Cat(lane, rw) if rbits else rw),
            ),
        ]
        self.sync += [
            If(~loaded,
                If(info.valid,
                    loaded.eq(1),
                    lane.eq(info.skip),
                    left.eq(info.beats),
                )
            ).Elif(take,
                left.eq(left - 1),
                lane.eq(lane + 1),
                If(end_w, rw.eq(rw + 1)),
                If(last_b, loaded.eq(0)),
            )
        ]
