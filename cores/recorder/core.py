#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recorder datapath: a LiteDRAM ring of chunks between a data stream and the NVMe queue engines.

::

    record:  sink --> FIFO --> LiteDRAM ring (chunk slots) --> NVMe Write requests --> port 0..N-1
    replay:  NVMe Read requests --> LiteDRAM ring --> source          (chunk k -> port k mod N)

The ring holds ``slots`` chunks (a chunk is one NVMe command: 4 KiB .. MDTS, 128 KiB and more in
practice). Chunks are striped round-robin over the enabled ports; each port writes its chunks at
consecutive LBAs from ``lba_base``. Recording: a chunk is requested once all its words were handed
to LiteDRAM; its slot is reused once its write completed (slots are freed in order, completions may
come in any order). Replay: chunks are requested ahead as long as free slots remain, streamed out
in order as soon as their read completed. No CPU work per chunk: the CPU configures, starts and
reads the status.

Pattern source and checker (the seed's AXI4-Stream pattern generator/checker): the stream of the
test pattern of ``cores.recorder.pattern`` (beat ``i`` carries pattern words ``i*n .. i*n+n-1``),
rate-limited, lossless (waits) or strict (a beat not taken when produced is lost, like an ADC);
the checker counts differing words, the first error and length errors.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from litedram.frontend.dma import LiteDRAMDMAReader, LiteDRAMDMAWriter

from literecorder.cores.nvme.common import request_layout, completion_layout, OP_READ, OP_WRITE
from literecorder.cores.recorder.pattern import pattern_beat

# Rate limiter -------------------------------------------------------------------------------------

class _RateTicker(LiteXModule):
    """``tick`` on average ``rate``/65536 times per cycle (``rate`` 0: every cycle)."""
    def __init__(self):
        self.rate = Signal(16)
        self.tick = Signal()
        acc = Signal(17)
        self.comb += self.tick.eq((self.rate == 0) | acc[16])
        self.sync += acc.eq(acc[:16] + self.rate)

# Pattern Source -----------------------------------------------------------------------------------

class PatternSource(LiteXModule):
    """``beats`` beats of the test pattern with ``seed`` (0: until ``stop``).

    lossless (``strict`` = 0): a produced beat waits for ``ready`` (up to 16 beats of credit);
    strict: a beat is offered in the cycle it is produced and lost if not taken (``lost``)."""
    def __init__(self, data_width):
        self.source   = source = stream.Endpoint([("data", data_width)])
        self.start    = Signal()
        self.stop     = Signal()
        self.seed     = Signal(32)
        self.beats    = Signal(32)
        self.rate     = Signal(16)
        self.strict   = Signal()
        self.packet_beats = Signal(32)   # `last` every packet_beats beats (0: no packets).
        self.busy     = Signal()
        self.produced = Signal(32)     # Beats produced (taken + lost).
        self.lost     = Signal(32)

        # # #

        self.ticker = ticker = _RateTicker()
        self.comb += ticker.rate.eq(self.rate)
        credit = Signal(5)
        data, stmts = pattern_beat(self.seed, self.produced, data_width)
        self.comb += stmts + [source.data.eq(data)]
        pkt = Signal(32)
        self.comb += source.last.eq((self.packet_beats != 0) & (pkt + 1 == self.packet_beats))
        self.sync += If(self.start, pkt.eq(0)).Elif(source.valid & (source.ready | self.strict),
            If(source.last, pkt.eq(0)).Else(pkt.eq(pkt + 1)))

        last = Signal()
        self.comb += last.eq((self.beats != 0) & (self.produced + 1 == self.beats))
        self.comb += If(self.busy,
            If(self.strict,
                source.valid.eq(ticker.tick)
            ).Else(
                source.valid.eq((credit != 0) | ticker.tick)
            )
        )
        produce = Signal()
        self.comb += produce.eq(source.valid & (source.ready | self.strict))
        self.sync += [
            If(self.start,
                self.busy.eq(1), self.produced.eq(0), self.lost.eq(0), credit.eq(0),
            ).Elif(self.stop,
                self.busy.eq(0),
            ).Elif(self.busy,
                If(produce,
                    self.produced.eq(self.produced + 1),
                    If(~source.ready, self.lost.eq(self.lost + 1)),
                    If(last, self.busy.eq(0)),
                ),
                # Credits of the lossless mode: ticks not yet turned into a taken beat.
                If(~self.strict,
                    If(ticker.tick & ~(source.valid & source.ready),
                        If(credit != 16, credit.eq(credit + 1))
                    ).Elif(~ticker.tick & source.valid & source.ready & (credit != 0),
                        credit.eq(credit - 1)
                    )
                ),
            )
        ]

# Pattern Checker ----------------------------------------------------------------------------------

class PatternChecker(LiteXModule):
    """Compares incoming beats with the test pattern (``seed``); ``beats`` expected (0: any).

    ``errors``: 32-bit words that differ; ``first_error``: beat index of the first differing beat;
    ``extra``: beats received beyond ``beats`` (length error); ``checked``: beats received."""
    def __init__(self, data_width):
        self.sink        = sink = stream.Endpoint([("data", data_width)])
        self.start       = Signal()
        self.seed        = Signal(32)
        self.beats       = Signal(32)
        self.checked     = Signal(32)
        self.errors      = Signal(32)
        self.first_error = Signal(32)
        self.extra       = Signal(32)

        # # #

        nw = data_width//32
        exp, stmts = pattern_beat(self.seed, self.checked, data_width)
        self.comb += stmts
        diff = Signal(nw)
        self.comb += [diff[l].eq(sink.data[32*l:32*(l+1)] != exp[32*l:32*(l+1)]) for l in range(nw)]
        ndiff = Signal(max=nw + 1)
        self.comb += ndiff.eq(sum(diff[l] for l in range(nw)))
        self.comb += sink.ready.eq(1)
        self.sync += [
            If(self.start,
                self.checked.eq(0), self.errors.eq(0), self.first_error.eq(0), self.extra.eq(0),
            ).Elif(sink.valid,
                self.checked.eq(self.checked + 1),
                If((self.beats != 0) & (self.checked >= self.beats),
                    self.extra.eq(self.extra + 1)
                ).Elif(diff != 0,
                    If(self.errors == 0, self.first_error.eq(self.checked)),
                    self.errors.eq(self.errors + ndiff),
                ),
            )
        ]

# Recorder Core ------------------------------------------------------------------------------------

MODE_RECORD, MODE_REPLAY = 0, 1

class RecorderCore(LiteXModule):
    """Ring of ``slots`` chunks in LiteDRAM between ``sink``/``source`` and ``n_ports`` NVMe hosts.

    Parameters
    ----------
    wr_port, rd_port : LiteDRAMNativePort
        LiteDRAM ports (write/read) of the ring; their word is the stream's beat.
    n_ports : int
        NVMe ports (``req[i]`` -> ``NVMeHost.ext_sink``, ``NVMeHost.ext_source`` -> ``cpl[i]``).
    slots : int
        Maximum chunks in the ring (a power of two).
    """
    def __init__(self, wr_port, rd_port, n_ports=1, slots=64, fifo_depth=64):
        assert wr_port.data_width == rd_port.data_width
        assert slots & (slots - 1) == 0 and slots >= 2
        dw    = wr_port.data_width
        aw    = wr_port.address_width
        sbits = log2_int(slots)
        self.data_width = dw
        self.n_ports    = n_ports
        self.slots      = slots

        self.sink   = sink   = stream.Endpoint([("data", dw)])
        self.source = source = stream.Endpoint([("data", dw)])
        self.req    = [stream.Endpoint(request_layout())    for _ in range(n_ports)]
        self.cpl    = [stream.Endpoint(completion_layout()) for _ in range(n_ports)]

        # Configuration (static while busy).
        self.start         = Signal()
        self.stop          = Signal()          # Record: close the input (pad the chunk), finish.
        self.abort         = Signal()          # Record: close the input, drop the partial chunk, finish.
        self.check_last    = Signal()          # Record: input packets must end with their chunks.
        self.mode          = Signal()          # MODE_RECORD / MODE_REPLAY.
        self.ring_word     = Signal(aw)        # Ring start: DRAM port word address.
        self.ring_bus      = Signal(32)        # Ring start: bus address (as the SSD sees it).
        self.ring_slots    = Signal(sbits + 1) # Slots used (2 .. slots).
        self.chunk_words   = Signal(24)        # DRAM words per chunk.
        self.chunk_bytes   = Signal(32)
        self.chunk_blocks  = Signal(32)        # LBAs per chunk (<= MDTS: one NVMe command).
        self.lba_base      = Signal(64)        # First LBA on every port.
        self.total_chunks  = Signal(32)        # Chunks to record/replay (record: 0 = until stop).
        self.port_mask     = Signal(n_ports)   # Ports the chunks are striped over.
        self.max_inflight  = Signal(16)        # Chunk commands in flight at most (all ports).

        # Status.
        self.busy        = Signal()
        self.done        = Signal()            # Finished (since the last start).
        self.error       = Signal()
        self.err_status  = Signal(15)
        self.err_port    = Signal(max=max(n_ports, 2))
        self.err_lba     = Signal(64)
        self.beats_in    = Signal(32)          # Record: beats taken from the sink.
        self.beats_out   = Signal(32)          # Replay: beats given to the source.
        self.stalls      = Signal(32)          # Record: cycles the sink waited (ring/FIFO full).
        self.chunks_req  = Signal(32)          # Chunks requested from the SSDs.
        self.chunks_done = Signal(32)          # Chunks completed (record: freed; replay: streamed out).
        self.cycles      = Signal(32)          # Cycles from start to finish.
        self.max_level   = Signal(sbits + 1)   # Highest ring fill (chunks in the ring).
        self.early_last  = Signal(32)          # Record: packets that ended before their chunk.
        self.aborted     = Signal()            # Record: ended by an abort.
        self.dropped     = Signal(24)          # Record: words of the partial chunk an abort dropped.

        # # #

        running = Signal()
        self.comb += self.busy.eq(running)
        self.sync += If(running, self.cycles.eq(self.cycles + 1))

        # Slot bookkeeping: a flag per slot, set by the completion of its chunk's command.
        slot_done = Array(Signal(name=f"slot_done{i}") for i in range(slots))

        # Chunk counters (chunk numbers; slot = chunk mod ring_slots, tracked incrementally).
        fill_k  = Signal(32)   # Record: chunks written into the ring (handed to LiteDRAM).
        req_k   = self.chunks_req
        free_k  = self.chunks_done

        def slot_counter(name):
            slot = Signal(sbits, name=name + "_slot")
            byte = Signal(32,    name=name + "_byte")   # Byte offset of the slot in the ring.
            word = Signal(aw,    name=name + "_word")   # Word offset of the slot in the ring.
            adv  = [
                If(slot + 1 == self.ring_slots,
                    slot.eq(0), byte.eq(0), word.eq(0)
                ).Else(
                    slot.eq(slot + 1), byte.eq(byte + self.chunk_bytes), word.eq(word + self.chunk_words)
                )
            ]
            rst = [slot.eq(0), byte.eq(0), word.eq(0)]
            return slot, byte, word, adv, rst

        req_slot,  req_byte,  _,         req_adv,  req_rst  = slot_counter("req")
        free_slot, _,         free_word, free_adv, free_rst = slot_counter("free")
        io_slot,   _,         io_word,   io_adv,   io_rst   = slot_counter("io")   # Record: fill; replay: read.

        in_ring = Signal(33)
        self.comb += in_ring.eq(Mux(self.mode == MODE_RECORD, fill_k, req_k) - free_k)
        self.sync += If(running & (in_ring > self.max_level), self.max_level.eq(in_ring))

        # Port selection (round-robin over the enabled ports) and per-port LBAs.
        port     = Signal(max=max(n_ports, 2))
        next_port = Signal(max=max(n_ports, 2))
        first_port = Signal(max=max(n_ports, 2))
        port_lba = Array(Signal(64, name=f"port_lba{i}") for i in range(n_ports))
        for i in reversed(range(n_ports)):
            self.comb += If(self.port_mask[i], first_port.eq(i))
        # Next enabled port after `port` (cyclic).
        cases = {}
        for p in range(n_ports):
            stmts = [next_port.eq(p)]
            for off in reversed(range(1, n_ports + 1)):
                q = (p + off) % n_ports
                stmts.append(If(self.port_mask[q], next_port.eq(q)))
            cases[p] = stmts
        self.comb += Case(port, cases)

        # Errors of the completions.
        stop_req = Signal()    # Record: input closed by stop.
        self.comb += [c.ready.eq(1) for c in self.cpl]
        for i, c in enumerate(self.cpl):
            self.sync += If(running & c.valid,
                If(c.status[:11] != 0,
                    If(~self.error,
                        self.err_status.eq(c.status),
                        self.err_port.eq(i),
                        self.err_lba.eq(c.lba),
                    ),
                    self.error.eq(1),
                ).Elif(c.final,
                    slot_done[c.id[:sbits]].eq(1)
                )
            )

        # Completed chunk commands (several ports may complete in the same cycle).
        cpl_k   = Signal(32)
        cpl_inc = Signal(max=n_ports + 1)
        self.comb += cpl_inc.eq(sum((c.valid & c.final & (c.status[:11] == 0)) for c in self.cpl))
        self.sync += If(self.start, cpl_k.eq(0)).Elif(running, cpl_k.eq(cpl_k + cpl_inc))
        inflight = Signal(32)
        self.comb += inflight.eq(req_k - cpl_k)

        # Requests: chunk `req_k` to `port`.
        req_ok = Signal()
        self.comb += If(self.mode == MODE_RECORD,
            req_ok.eq((req_k != fill_k) & (inflight < self.max_inflight))
        ).Else(
            req_ok.eq((req_k != self.total_chunks) & (in_ring < self.ring_slots) &
                (inflight < self.max_inflight))
        )
        for i, r in enumerate(self.req):
            self.comb += [
                r.valid.eq(running & ~self.error & req_ok & (port == i)),
                r.op.eq(Mux(self.mode == MODE_RECORD, OP_WRITE, OP_READ)),
                r.lba.eq(port_lba[i]),
                r.blocks.eq(self.chunk_blocks),
                r.adr.eq(self.ring_bus + req_byte),
                r.id.eq(req_slot),
            ]
        req_fire = Signal()
        self.comb += req_fire.eq(Array(r.valid & r.ready for r in self.req)[port])
        self.sync += If(req_fire,
            req_k.eq(req_k + 1),
            port_lba[port].eq(port_lba[port] + self.chunk_blocks),
            port.eq(next_port),
            *req_adv
        )

        # Record: input FIFO -> LiteDRAM writer -------------------------------------------------
        self.fifo   = fifo   = stream.SyncFIFO([("data", dw)], fifo_depth, buffered=True)   # with `last`
        self.writer = writer = LiteDRAMDMAWriter(wr_port, fifo_depth=32)
        in_open  = Signal()    # Record: input accepted.
        padding  = Signal()    # Record: zero words up to the end of the chunk after a stop.
        in_word  = Signal(24)  # Word in the chunk being filled.
        com_word = Signal(24)  # Words of chunk `fill_k` handed to LiteDRAM (wdata).
        wr_k     = Signal(32)  # Chunks whose writes were issued (may be ahead of fill_k).
        self.comb += [
            fifo.sink.data.eq(sink.data),
            fifo.sink.last.eq(sink.last),
            fifo.sink.valid.eq(sink.valid & in_open),
            sink.ready.eq(fifo.sink.ready & in_open),
        ]
        self.sync += If(running & sink.valid & ~sink.ready, self.stalls.eq(self.stalls + 1))
        wr_room = Signal()
        wr_last = Signal()     # All chunks of a fixed-length recording written.
        self.comb += [
            wr_room.eq((wr_k - free_k) < self.ring_slots),
            wr_last.eq((self.total_chunks != 0) & (wr_k == self.total_chunks)),
        ]
        self.comb += [
            writer.sink.valid.eq(running & (self.mode == MODE_RECORD) & ~self.error & wr_room & ~wr_last &
                (fifo.source.valid | padding)),
            writer.sink.address.eq(self.ring_word + io_word + in_word),
            writer.sink.data.eq(Mux(padding, 0, fifo.source.data)),
            # Beats beyond the recording (or left when not running) are discarded.
            fifo.source.ready.eq((writer.sink.valid & writer.sink.ready & ~padding) | ~running | wr_last),
        ]
        # After a stop, once the input FIFO is empty, a partly filled chunk is padded with zeros.
        # Abort instead: the partly filled chunk is dropped (never requested; its slot is reused).
        self.sync += If(running & (self.mode == MODE_RECORD) & ~in_open & ~fifo.source.valid &
            (in_word != 0) & ~wr_last & ~padding,
            If(self.aborted,
                self.dropped.eq(in_word),
                in_word.eq(0),
            ).Else(
                padding.eq(1)
            )
        )
        self.sync += [
            If(writer.sink.valid & writer.sink.ready & ~padding,
                self.beats_in.eq(self.beats_in + 1),
                If(self.check_last & fifo.source.last & (in_word + 1 != self.chunk_words),
                    self.early_last.eq(self.early_last + 1))
            ),
            If(writer.sink.valid & writer.sink.ready,
                If(in_word + 1 == self.chunk_words,
                    in_word.eq(0),
                    wr_k.eq(wr_k + 1),
                    padding.eq(0),
                    If((self.total_chunks != 0) & (wr_k + 1 == self.total_chunks), in_open.eq(0)),
                    *io_adv
                ).Else(
                    in_word.eq(in_word + 1)
                )
            ),
            # A chunk is complete once all its words left the writer for LiteDRAM.
            If(wr_port.wdata.valid & wr_port.wdata.ready,
                If(com_word + 1 == self.chunk_words,
                    com_word.eq(0),
                    fill_k.eq(fill_k + 1),
                ).Else(
                    com_word.eq(com_word + 1)
                )
            ),
        ]

        # Replay: LiteDRAM reader -> source -------------------------------------------------------
        self.reader = reader = LiteDRAMDMAReader(rd_port, fifo_depth=fifo_depth, fifo_buffered=True)
        rd_k    = Signal(32)   # Chunk being read from the ring.
        rd_word = Signal(24)
        out_word = Signal(24)
        self.comb += [
            reader.sink.valid.eq(running & (self.mode == MODE_REPLAY) & ~self.error &
                (rd_k != req_k) & slot_done[io_slot]),
            reader.sink.address.eq(self.ring_word + io_word + rd_word),
            reader.source.connect(source),
        ]
        rd_inflight = Signal(max=fifo_depth + 2)   # Reads issued whose data is not out yet.
        rd_issue = Signal()
        self.comb += rd_issue.eq(reader.sink.valid & reader.sink.ready)
        self.sync += If(rd_issue & ~(source.valid & source.ready),
            rd_inflight.eq(rd_inflight + 1)
        ).Elif(~rd_issue & source.valid & source.ready,
            rd_inflight.eq(rd_inflight - 1)
        )
        self.sync += [
            If(rd_issue,
                If(rd_word + 1 == self.chunk_words,
                    rd_word.eq(0),
                    rd_k.eq(rd_k + 1),
                    *io_adv
                ).Else(
                    rd_word.eq(rd_word + 1)
                )
            ),
        ]

        # Freeing slots in order ------------------------------------------------------------------
        out_fire = Signal()
        self.comb += out_fire.eq(source.valid & source.ready)
        self.sync += [
            If(out_fire, self.beats_out.eq(self.beats_out + 1)),
            If(self.mode == MODE_RECORD,
                # Record: the slot's write completed.
                If(running & (free_k != req_k) & slot_done[free_slot],
                    slot_done[free_slot].eq(0),
                    free_k.eq(free_k + 1),
                    *free_adv
                )
            ).Else(
                # Replay: the slot's data was streamed out.
                If(out_fire,
                    If(out_word + 1 == self.chunk_words,
                        out_word.eq(0),
                        slot_done[free_slot].eq(0),
                        free_k.eq(free_k + 1),
                        *free_adv
                    ).Else(
                        out_word.eq(out_word + 1)
                    )
                )
            ),
        ]

        # Start / stop / finish -------------------------------------------------------------------
        finished = Signal()
        self.comb += If(self.mode == MODE_RECORD,
            finished.eq(~in_open & ~padding & (in_word == 0) & (~fifo.source.valid | wr_last) &
                ~writer.fifo.source.valid & (fill_k == wr_k) & (req_k == fill_k) & (free_k == req_k))
        ).Else(
            finished.eq(free_k == self.total_chunks)
        )
        self.sync += [
            If(self.start,
                running.eq(1), self.done.eq(0), self.error.eq(0), self.err_status.eq(0),
                self.err_port.eq(0), self.err_lba.eq(0),
                self.beats_in.eq(0), self.beats_out.eq(0), self.stalls.eq(0), self.cycles.eq(0),
                self.max_level.eq(0), self.early_last.eq(0), self.aborted.eq(0), self.dropped.eq(0),
                fill_k.eq(0), req_k.eq(0), free_k.eq(0), wr_k.eq(0), rd_k.eq(0),
                in_word.eq(0), com_word.eq(0), rd_word.eq(0), out_word.eq(0),
                in_open.eq(self.mode == MODE_RECORD), padding.eq(0),
                port.eq(first_port),
                *[port_lba[i].eq(self.lba_base) for i in range(n_ports)],
                *[slot_done[i].eq(0) for i in range(slots)],
                *req_rst, *free_rst, *io_rst,
            ).Elif(running,
                If(self.stop, in_open.eq(0)),
                # Abort: the partly filled chunk is dropped (its slot is refilled by the next run).
                If(self.abort & (self.mode == MODE_RECORD), in_open.eq(0), self.aborted.eq(1)),
                # Error: stop once the ring's DMA has drained (nothing stale for the next run).
                If((self.error & ~writer.fifo.source.valid & (rd_inflight == 0)) | finished,
                    running.eq(0), self.done.eq(1),
                )
            )
        ]

    def add_csr(self):
        self._ctrl = CSRStorage(description="Recorder control.", fields=[
            CSRField("start", size=1, pulse=True, description="Start recording/replaying (with the configuration below)."),
            CSRField("stop",  size=1, pulse=True, description="Record: close the input, pad the last chunk with zeros, finish."),
            CSRField("abort", size=1, pulse=True, description="Record: close the input, write what was taken, drop the partly filled chunk, finish."),
            CSRField("mode",  size=1, offset=4, description="0: record (sink -> SSDs), 1: replay (SSDs -> source)."),
            CSRField("check_last", size=1, offset=5, description="Record: count input packets (``last``) that end before their chunk."),
        ])
        self.comb += [
            self.start.eq(self._ctrl.fields.start),
            self.stop.eq(self._ctrl.fields.stop),
            self.abort.eq(self._ctrl.fields.abort),
            self.check_last.eq(self._ctrl.fields.check_last),
            self.mode.eq(self._ctrl.fields.mode),
        ]
        def storage(name, sig, desc, reset=0):
            csr = CSRStorage(len(sig), name=name, reset=reset, description=desc)
            setattr(self, "_" + name, csr)
            self.comb += sig.eq(csr.storage)
        def status(name, sig, desc):
            csr = CSRStatus(len(sig), name=name, description=desc)
            setattr(self, "_" + name, csr)
            self.comb += csr.status.eq(sig)
        storage("ring_word",    self.ring_word,    "Ring start: word address on the LiteDRAM port.")
        storage("ring_bus",     self.ring_bus,     "Ring start: bus address (as the SSDs see it).")
        storage("ring_slots",   self.ring_slots,   f"Chunks in the ring (2..{self.slots}).", self.slots)
        storage("chunk_words",  self.chunk_words,  "LiteDRAM words per chunk.")
        storage("chunk_bytes",  self.chunk_bytes,  "Bytes per chunk.")
        storage("chunk_blocks", self.chunk_blocks, "LBAs per chunk (one NVMe command: <= MDTS).")
        self._lba_base_lo = CSRStorage(32, description="First LBA on every port [31:0].")
        self._lba_base_hi = CSRStorage(32, description="First LBA on every port [63:32].")
        self.comb += self.lba_base.eq(Cat(self._lba_base_lo.storage, self._lba_base_hi.storage))
        storage("total_chunks", self.total_chunks, "Chunks to record/replay (record: 0 = until stop).")
        storage("port_mask",    self.port_mask,    "NVMe ports the chunks are striped over.", 1)
        storage("max_inflight", self.max_inflight, "Chunk commands in flight at most (all ports together).", 64)
        self._status = CSRStatus(description="Recorder status.", fields=[
            CSRField("busy",  size=1, description="Recording/replaying."),
            CSRField("done",  size=1, description="Finished since the last start."),
            CSRField("error", size=1, description="Stopped on an error completion (see err_*)."),
            CSRField("aborted", size=1, description="Record: ended by an abort."),
            CSRField("early_last", size=1, description="Record: an input packet ended before its chunk."),
        ])
        self.comb += [
            self._status.fields.busy.eq(self.busy),
            self._status.fields.done.eq(self.done),
            self._status.fields.error.eq(self.error),
            self._status.fields.aborted.eq(self.aborted),
            self._status.fields.early_last.eq(self.early_last != 0),
        ]
        status("err_status",  self.err_status,  "CQE status of the failing command.")
        status("err_port",    self.err_port,    "Port of the failing command.")
        status("err_lba_lo",  self.err_lba[:32], "LBA of the failing command [31:0].")
        status("err_lba_hi",  self.err_lba[32:], "LBA of the failing command [63:32].")
        status("beats_in",    self.beats_in,    "Record: data words taken from the input.")
        status("beats_out",   self.beats_out,   "Replay: data words given to the output.")
        status("stalls",      self.stalls,      "Record: cycles the input waited (ring full).")
        status("chunks_req",  self.chunks_req,  "Chunks requested from the SSDs.")
        status("chunks_done", self.chunks_done, "Chunks completed (record: written, replay: streamed out).")
        status("cycles",      self.cycles,      "Cycles from start to finish.")
        status("max_level",   self.max_level,   "Highest number of chunks in the ring.")
        status("early_last",  self.early_last,  "Record: input packets that ended before their chunk.")
        status("dropped",     self.dropped,     "Record: words of the partial chunk dropped by an abort.")

# Test stream endpoints with CSRs ------------------------------------------------------------------

class RecorderTestStreams(LiteXModule):
    """Pattern source (record input) and checker (replay output) with CSRs."""
    def __init__(self, data_width):
        self.gen   = gen   = PatternSource(data_width)
        self.check = check = PatternChecker(data_width)
        self.source = gen.source
        self.sink   = check.sink

    def add_csr(self):
        gen, check = self.gen, self.check
        self._ctrl = CSRStorage(description="Test streams control.", fields=[
            CSRField("gen_start",   size=1, pulse=True, description="Start the pattern source."),
            CSRField("gen_stop",    size=1, pulse=True, description="Stop the pattern source."),
            CSRField("check_start", size=1, pulse=True, description="Reset the checker's counters."),
            CSRField("strict",      size=1, offset=4, description="Source: 1 = a beat not taken when produced is lost (like an ADC), 0 = it waits."),
        ])
        self.comb += [
            gen.start.eq(self._ctrl.fields.gen_start),
            gen.stop.eq(self._ctrl.fields.gen_stop),
            check.start.eq(self._ctrl.fields.check_start),
            gen.strict.eq(self._ctrl.fields.strict),
        ]
        self._gen_seed   = CSRStorage(32, description="Source pattern seed.")
        self._gen_beats  = CSRStorage(32, description="Source beats (0: until stopped).")
        self._gen_rate   = CSRStorage(16, description="Source rate: beats per cycle x 65536 (0: every cycle).")
        self._gen_packet = CSRStorage(32, description="Source packet length in beats (``last`` on its final beat; 0: no packets).")
        self._check_seed  = CSRStorage(32, description="Checker pattern seed.")
        self._check_beats = CSRStorage(32, description="Checker: expected beats (0: any).")
        self._gen_busy     = CSRStatus(description="Source running.")
        self._gen_produced = CSRStatus(32, description="Beats produced (taken + lost).")
        self._gen_lost     = CSRStatus(32, description="Beats lost (strict mode).")
        self._check_checked = CSRStatus(32, description="Beats checked.")
        self._check_errors  = CSRStatus(32, description="32-bit words that differ from the pattern.")
        self._check_first   = CSRStatus(32, description="Beat index of the first differing beat.")
        self._check_extra   = CSRStatus(32, description="Beats received beyond the expected length.")
        self.comb += [
            gen.seed.eq(self._gen_seed.storage),
            gen.beats.eq(self._gen_beats.storage),
            gen.rate.eq(self._gen_rate.storage),
            gen.packet_beats.eq(self._gen_packet.storage),
            check.seed.eq(self._check_seed.storage),
            check.beats.eq(self._check_beats.storage),
            self._gen_busy.status.eq(gen.busy),
            self._gen_produced.status.eq(gen.produced),
            self._gen_lost.status.eq(gen.lost),
            self._check_checked.status.eq(check.checked),
            self._check_errors.status.eq(check.errors),
            self._check_first.status.eq(check.first_error),
            self._check_extra.status.eq(check.extra),
        ]
