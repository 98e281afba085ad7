#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Memories behind the completer's windows: an on-chip RAM shared with the CPU, and LiteDRAM."""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream, wishbone


from literecorder.cores.pcie.completer import CompleterWindow

# On-chip RAM window -------------------------------------------------------------------------------

class SRAMWindow(LiteXModule):
    """On-chip RAM seen by the device (completer window) and by the CPU (32-bit Wishbone).

    For the NVMe admin queues, Identify/log buffers and small transfers of the BIOS driver.

    Parameters
    ----------
    name, base, size, data_width : see ``CompleterWindow`` (``base`` is the PCIe bus address; the
        CPU sees the same RAM wherever the SoC maps ``bus``).
    fifo_depth : int
        Read beats buffered (bounds the reads in flight).
    """
    def __init__(self, name, base, size, data_width, fifo_depth=32):
        self.window = w = CompleterWindow(name, base, size, data_width, fast=True)
        dw   = data_width
        ndw  = dw//32
        rows = size//(dw//8)
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        mem = Memory(dw, rows, name=f"{name}_mem")
        self.specials += mem
        pa = mem.get_port(write_capable=True, we_granularity=8)
        pb = mem.get_port(write_capable=True, we_granularity=8)
        self.specials += pa, pb

        # Completer side: writes have priority; reads are issued one beat per cycle.
        fifo = stream.SyncFIFO([("dat", dw)], fifo_depth, buffered=True)
        self.submodules += fifo
        reserved = Signal(max=fifo_depth + 1)
        need     = Signal(10)
        self.comb += need.eq(reserved + w.rd_cmd.beats)
        rd_adr   = Signal(w.adr_width)
        rd_left  = Signal(8)
        issue    = Signal()
        issued   = Signal()
        accept   = Signal()
        self.comb += [
            w.wr.ready.eq(1),
            accept.eq(w.rd_cmd.valid & (rd_left == 0) & (need <= fifo_depth)),
            w.rd_cmd.ready.eq(accept),
            issue.eq((rd_left != 0) & ~w.wr.valid),
            If(w.wr.valid,
                pa.adr.eq(w.wr.adr),
                pa.dat_w.eq(w.wr.dat),
                pa.we.eq(w.wr.be),
            ).Else(
                pa.adr.eq(rd_adr),
            ),
            fifo.sink.valid.eq(issued),
            fifo.sink.dat.eq(pa.dat_r),
            fifo.source.connect(w.rd_data),
        ]
        self.sync += [
            issued.eq(issue),
            If(accept,
                rd_adr.eq(w.rd_cmd.adr),
                rd_left.eq(w.rd_cmd.beats),
            ).Elif(issue,
                rd_adr.eq(rd_adr + 1),
                rd_left.eq(rd_left - 1),
            ),
            reserved.eq(reserved + Mux(accept, w.rd_cmd.beats, 0) - (w.rd_data.valid & w.rd_data.ready)),
        ]

        # CPU side (32-bit Wishbone, word addressed within the window).
        lane   = Signal(max=max(ndw, 2))
        lane_r = Signal(max=max(ndw, 2))
        self.comb += [
            lane.eq(bus.adr[:log2_int(ndw)]),
            pb.adr.eq(bus.adr[log2_int(ndw):]),
            pb.dat_w.eq(Replicate(bus.dat_w, ndw)),
        ]
        # Lane select with constant slices (a variable shift by lane*32 is a known pitfall:
        # Verilog sizes the product to its operands and wraps).
        self.comb += Case(lane_r, {l: bus.dat_r.eq(pb.dat_r[32*l:32*(l+1)]) for l in range(ndw)})
        for l in range(ndw):
            self.comb += If(bus.cyc & bus.stb & bus.we & ~bus.ack & (lane == l),
                pb.we[4*l:4*(l+1)].eq(bus.sel))
        self.sync += [
            lane_r.eq(lane),
            bus.ack.eq(bus.cyc & bus.stb & ~bus.ack),
        ]

# LiteDRAM window ----------------------------------------------------------------------------------

class DRAMWindow(LiteXModule):
    """LiteDRAM memory seen by the device through one native port (reads and writes in order).

    Beats (``data_width``) are mapped on the port's words (``port.data_width``, a multiple):
    consecutive beats of a write are merged into one masked word write; a read fetches the words
    covering its beats and drops the halves it does not need. Up to ``read_depth`` words are in
    flight to hide the DRAM latency.

    Parameters
    ----------
    port : LiteDRAMNativePort
    name, base, size, data_width : see ``CompleterWindow``; ``base`` is the PCIe bus address.
    dram_offset : int
        Byte offset in the DRAM (port address space) where the window starts.
    """
    def __init__(self, port, name, base, size, data_width, dram_offset=0, read_depth=32):
        self.window = w = CompleterWindow(name, base, size, data_width)
        dw    = data_width
        pdw   = port.data_width
        if pdw % dw:
            raise ValueError(f"DRAM port width {pdw} is not a multiple of the beat width {dw}")
        ratio = pdw//dw
        rbits = log2_int(ratio) if ratio > 1 else 0
        word_offset = dram_offset//(pdw//8)
        if dram_offset % size:
            raise ValueError(f"window {name}: dram_offset 0x{dram_offset:x} must be aligned on its size")

        # # #

        # In-order command queue (reads: word addresses; writes: word address + data + mask).
        cmds  = stream.SyncFIFO([("we", 1), ("adr", port.address_width)], 32)
        wdata = stream.SyncFIFO([("data", pdw), ("we", pdw//8)], 32)
        self.submodules += cmds, wdata

        # Read side: returned words are buffered; reads are only issued with room reserved.
        rfifo = stream.SyncFIFO([("data", pdw)], read_depth, buffered=True)
        rd_info = stream.SyncFIFO([("words", 8), ("skip", max(rbits, 1)), ("beats", 8)], 8)
        self.submodules += rfifo, rd_info
        reserved = Signal(max=read_depth + 1)
        can_read = Signal()
        rd_issue = Signal()
        self.comb += [
            can_read.eq(reserved < read_depth),
            port.cmd.valid.eq(cmds.source.valid & (cmds.source.we | can_read)),
            port.cmd.we.eq(cmds.source.we),
            port.cmd.addr.eq(cmds.source.adr),
            port.cmd.last.eq(1),
            cmds.source.ready.eq(port.cmd.ready & (cmds.source.we | can_read)),
            rd_issue.eq(port.cmd.valid & port.cmd.ready & ~cmds.source.we),
            rfifo.sink.valid.eq(port.rdata.valid),
            rfifo.sink.data.eq(port.rdata.data),
            port.rdata.ready.eq(1),
        ]
        self.sync += reserved.eq(reserved + rd_issue - (rfifo.source.valid & rfifo.source.ready))

        # Write side: masked writes, data in command order.
        self.comb += [
            port.wdata.valid.eq(wdata.source.valid),
            port.wdata.data.eq(wdata.source.data),
            port.wdata.we.eq(wdata.source.we),
            wdata.source.ready.eq(port.wdata.ready),
        ]

        # Front end: accepts read commands and write beats in order.
        acc_dat   = Signal(pdw)
        acc_we    = Signal(pdw//8)
        acc_adr   = Signal(port.address_width)
        acc_valid = Signal()
        rd_word   = Signal(port.address_width)
        rd_words  = Signal(8)
        beat_word = Signal(port.address_width)
        beat_lane = Signal(max(rbits, 1))
        self.comb += [
            beat_word.eq(word_offset + (w.wr.adr >> rbits)),
            beat_lane.eq(w.wr.adr[:rbits] if rbits else 0),
        ]
        lane_dat = Signal(pdw)
        lane_we  = Signal(pdw//8)
        self.comb += Case(beat_lane, {l: [lane_dat.eq(w.wr.dat << (dw*l)), lane_we.eq(w.wr.be << (dw//8*l))]
            for l in range(ratio)})

        rd_first_word = Signal(port.address_width)
        rd_nwords     = Signal(9)
        self.comb += [
            rd_first_word.eq(word_offset + (w.rd_cmd.adr >> rbits)),
            rd_nwords.eq(((w.rd_cmd.adr[:rbits] if rbits else 0) + w.rd_cmd.beats + ratio - 1) >> rbits),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        # Drained: nothing of an accepted write is left on its way to LiteDRAM. A beat being
        # accepted this cycle leaves IDLE (so `drained` falls the next cycle); the completer only
        # writes one window at a time, so `w.wr.valid` needs not be looked at (it would close a
        # combinational loop through the completer's ordering check).
        self.comb += w.drained.eq(fsm.ongoing("IDLE") & ~acc_valid &
            ~cmds.source.valid & ~wdata.source.valid)
        fsm.act("IDLE",
            If(acc_valid,
                NextState("FLUSH")
            ).Elif(w.wr.valid,
                w.wr.ready.eq(1),
                NextValue(acc_adr, beat_word),
                NextValue(acc_dat, lane_dat),
                NextValue(acc_we,  lane_we),
                NextValue(acc_valid, 1),
                # A word is written as soon as it is complete or the TLP ends.
                If((beat_lane == ratio - 1) | w.wr.last,
                    NextState("FLUSH")
                ).Else(
                    NextState("MERGE")
                )
            ).Elif(w.rd_cmd.valid & rd_info.sink.ready,
                w.rd_cmd.ready.eq(1),
                rd_info.sink.valid.eq(1),
                NextValue(rd_word, rd_first_word),
                NextValue(rd_words, rd_nwords),
                NextState("READ")
            )
        )
        self.comb += [
            rd_info.sink.words.eq(rd_nwords),
            rd_info.sink.skip.eq(w.rd_cmd.adr[:rbits] if rbits else 0),
            rd_info.sink.beats.eq(w.rd_cmd.beats),
        ]
        fsm.act("MERGE",
            If(w.wr.valid,
                If(beat_word == acc_adr,
                    w.wr.ready.eq(1),
                    NextValue(acc_dat, acc_dat | lane_dat),
                    NextValue(acc_we,  acc_we  | lane_we),
                    If((beat_lane == ratio - 1) | w.wr.last,
                        NextState("FLUSH")
                    )
                ).Else(
                    NextState("FLUSH")
                )
            )
        )
        fsm.act("FLUSH",
            cmds.sink.valid.eq(wdata.sink.ready),
            cmds.sink.we.eq(1),
            cmds.sink.adr.eq(acc_adr),
            wdata.sink.valid.eq(cmds.sink.ready),
            wdata.sink.data.eq(acc_dat),
            wdata.sink.we.eq(acc_we),
            If(cmds.sink.ready & wdata.sink.ready,
                NextValue(acc_valid, 0),
                NextState("IDLE")
            )
        )
        fsm.act("READ",
            cmds.sink.valid.eq(1),
            cmds.sink.we.eq(0),
            cmds.sink.adr.eq(rd_word),
            If(cmds.sink.ready,
                NextValue(rd_word, rd_word + 1),
                NextValue(rd_words, rd_words - 1),
                If(rd_words == 1, NextState("IDLE"))
            )
        )

        # Back end: words -> beats, dropping the lanes before/after the requested beats.
        info    = rd_info.source
        lane    = Signal(max(rbits, 1))
        beats   = Signal(8)
        started = Signal()
        word    = rfifo.source
        cur_lane = Signal(max(rbits, 1))
        self.comb += [
            cur_lane.eq(Mux(started, lane, info.skip)),
            Case(cur_lane, {l: w.rd_data.dat.eq(word.data[dw*l:dw*(l+1)]) for l in range(ratio)}),
        ]
        left = Signal(8)
        cur_left = Signal(8)
        self.comb += cur_left.eq(Mux(started, left, info.beats))
        self.comb += [
            w.rd_data.valid.eq(word.valid & info.valid),
            # Next word when the word's last lane is consumed, or the read ends.
            word.ready.eq(w.rd_data.ready & info.valid & ((cur_lane == ratio - 1) | (cur_left == 1))),
            info.ready.eq(w.rd_data.valid & w.rd_data.ready & (cur_left == 1)),
        ]
        self.sync += If(w.rd_data.valid & w.rd_data.ready,
            If(cur_left == 1,
                started.eq(0)
            ).Else(
                started.eq(1),
                lane.eq(cur_lane + 1),
                left.eq(cur_left - 1),
            )
        )
