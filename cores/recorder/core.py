#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recorder datapath: a LiteDRAM ring of chunks between data streams and the NVMe queue engines.

::

                   record ports (frontend/stream.py) ring (ring.py: Ring)       striping (striping.py)
    user/test --> packer --> FIFO/CDC --+--> RingWriter --> slots --> NVMe Write --> req[0..N-1]
    streams                             |        ^ slot free         slots.py     cpl[0..N-1]
                                        |        +---------------- SlotTracker <--+
    user/test <-- unpacker <-- FIFO/CDC <--- RingReader <--- slots <-- NVMe Read
                   replay ports                                 accounting.py: counters, drop log

The ring (``self.ring``, ``ring.Ring``) owns the slots of both tiers (on-chip staging banks, the
LiteDRAM ring at an address fixed in the build), their pointers, the slot trackers and the
filled/freed counts; this core checks the configuration, runs the job and keeps the accounts.

The ring holds up to ``slots`` chunks (a chunk is one NVMe command). Record: a chunk whose words
all reached LiteDRAM is written to the next port of the stripe set; its slot is free again once
the write completed, slots are freed in chunk order (completions come in any order). Replay: reads
run ahead as long as slots are free, each chunk is streamed out once its read completed. The CPU
configures and starts (or the hardware ``start`` input does), then only reads the status.

Recordings end by themselves (fixed size, region full, input ``last``, post-trigger in a ring,
an error) or by stop/abort (CSR or hardware inputs); the core checks its configuration before it
starts (the region against the namespace, order, alignment) and reports a status code
(``common.STATUS_*``).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

import functools

from literecorder.cores.common import csr_storage, csr_status
from literecorder.cores.nvme.common import request_layout, completion_layout, NVME_STATUS_TIMEOUT
from literecorder.cores.recorder.common import *
from literecorder.cores.recorder.ring import Ring
from literecorder.cores.recorder.striping import Striper, StripeWalker
from literecorder.cores.recorder.accounting import Accounting

# Configuration check ------------------------------------------------------------------------------

class _RegionCheck(LiteXModule):
    """Checks a recording's configuration and computes the region's rows and chunk capacity
    (sequentially: about 38 + n_ports cycles; one 64-bit subtractor for every comparison, no
    multiplier, no barrel shifter). Faults in order: ENGINE, CONFIG, ORDER, ALIGN, RANGE."""
    def __init__(self, n_ports):
        self.start  = Signal()
        self.busy   = Signal()
        self.status = Signal(4)              # STATUS_NONE: accepted.
        self.rows   = Signal(CHUNK_BITS)
        self.capacity = Signal(CHUNK_BITS)   # Chunks the region holds (rows x ports).
        # Configuration to check.
        self.mask = Signal(n_ports)
        self.served = Signal(n_ports, reset=2**n_ports - 1)  # Ports whose queue engine takes our commands.
        self.first_lba, self.last_lba, self.start_lba, self.nsze = [Signal(64) for _ in range(4)]
        self.start_port   = Signal(max=max(n_ports, 2))
        self.chunk_blocks = Signal(32)
        self.chunk_words  = Signal(32)
        self.ring_slots   = Signal(16)
        self.chunks       = Signal(CHUNK_BITS)
        self.sized        = Signal()          # Fixed size / replay: chunks <= capacity, not 0.

        # # #

        diff = Signal(64)
        cb   = Signal(32)
        port = Signal(max=n_ports + 1)
        pow2 = Signal()
        self.comb += pow2.eq((self.chunk_blocks != 0) & ((self.chunk_blocks & (self.chunk_blocks - 1)) == 0))
        misaligned = Signal()
        self.comb += misaligned.eq(((self.first_lba[:32] | self.last_lba[:32] | self.start_lba[:32]) &
            (self.chunk_blocks - 1)[:32]) != 0)

        # The comparisons, one per cycle: a - b on 65 bits, a borrow is the fault. Step 1 leaves
        # nsze - last in ``diff`` for step 2; the last step leaves last - first for ROWS. Each
        # operand is one of four (a 4:1 multiplexer per bit).
        step   = Signal(3)
        a_sel  = Signal(2)
        b_sel  = Signal(2)
        a, b   = Signal(64), Signal(64)
        sub    = Signal(65)
        borrow = Signal()
        A_LAST, A_NSZE, A_DIFF, A_START = range(4)
        B_FIRST, B_LAST, B_CB, B_START  = range(4)
        steps  = [
            (A_LAST,  B_FIRST),     # 0 ORDER: first <= last.
            (A_NSZE,  B_LAST),      # 1 RANGE: last <= nsze ...
            (A_DIFF,  B_CB),        # 2 RANGE: ... and last + chunk_blocks <= nsze.
            (A_START, B_FIRST),     # 3 RANGE: first <= start ...
            (A_LAST,  B_START),     # 4 RANGE: ... <= last.
            (A_LAST,  B_FIRST),     # 5 rows - 1 (in chunk_blocks units, shifted below).
        ]
        self.comb += [
            Case(step, {i: [a_sel.eq(x), b_sel.eq(y)] for i, (x, y) in enumerate(steps)}),
            a.eq(Array([self.last_lba, self.nsze, diff, self.start_lba])[a_sel]),
            b.eq(Array([self.first_lba, self.last_lba, self.chunk_blocks, self.start_lba])[b_sel]),
            sub.eq(Cat(a, C(0, 1)) - Cat(b, C(0, 1))),
            borrow.eq(sub[64]),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        self.comb += self.busy.eq(~fsm.ongoing("IDLE"))
        fsm.act("IDLE",
            If(self.start,
                NextValue(self.status, STATUS_NONE),
                NextValue(self.capacity, 0),
                NextValue(step, 0),
                NextState("BASIC")
            )
        )
        fsm.act("BASIC",
            NextValue(cb, self.chunk_blocks),
            NextValue(port, 0),
            If((self.mask & ~self.served) != 0,
                NextValue(self.status, STATUS_ERR_ENGINE), NextState("IDLE")
            ).Elif((self.mask == 0) | ~pow2 | (self.chunk_words == 0) | (self.ring_slots < 2) |
               ~bit(self.mask, self.start_port),
                NextValue(self.status, STATUS_ERR_CONFIG), NextState("IDLE")
            ).Else(
                NextState("COMPARE")
            )
        )
        fsm.act("COMPARE",
            NextValue(step, step + 1),
            NextValue(diff, sub[:64]),
            If(borrow,
                NextValue(self.status, Mux(step == 0, STATUS_ERR_ORDER, STATUS_ERR_RANGE)),
                NextState("IDLE")
            ).Elif((step == 0) & misaligned,
                NextValue(self.status, STATUS_ERR_ALIGN), NextState("IDLE")
            ).Elif(step == len(steps) - 1,
                NextState("ROWS")
            )
        )
        # rows = (last - first)/chunk_blocks + 1: shift both until chunk_blocks is 1.
        fsm.act("ROWS",
            If(cb == 1,
                NextValue(self.rows, diff + 1),
                NextState("CAPACITY")
            ).Else(
                NextValue(diff, diff[1:]),
                NextValue(cb, cb[1:]),
            )
        )
        fsm.act("CAPACITY",
            If(port == n_ports,
                If(self.sized & ((self.chunks == 0) | (self.chunks > self.capacity)),
                    NextValue(self.status, Mux(self.chunks == 0, STATUS_ERR_CONFIG, STATUS_ERR_RANGE))
                ),
                NextState("IDLE")
            ).Else(
                If(bit(self.mask, port), NextValue(self.capacity, self.capacity + self.rows)),
                NextValue(port, port + 1)
            )
        )

# Recorder Core ------------------------------------------------------------------------------------

class RecorderCore(LiteXModule):
    """Ring of ``slots`` chunks in LiteDRAM between record/replay streams and ``n_ports`` NVMe hosts.

    Parameters
    ----------
    wr_port, rd_port : LiteDRAMNativePort
        LiteDRAM ports (write/read) of the ring; their width is the ring word.
    n_ports : int
        NVMe ports (``req[i]`` -> ``NVMeHost.ext_sink``, ``NVMeHost.ext_source`` -> ``cpl[i]``).
    slots : int
        Chunks the ring holds at most (the slot tracker's memory).
    n_inputs, n_outputs : int
        Record inputs (``inputs[i]``, ring words from a ``RecordPort``) and replay outputs
        (``outputs[i]``, to a ``ReplayPort``), selected at run time (``input_sel``/``output_sel``).
    staging : list of StagingBank, optional
        The ring's on-chip tier: one bank per NVMe port (``ring.StagingBank``), of
        ``staging_slots`` chunk slots each at most (``onchip_slots`` of them used at run time).
        Without it the ring is the DRAM ring alone.
    ring_word, ring_bus : int
        Start of the DRAM ring, fixed at build time: its word address on the LiteDRAM ports and the
        bus address of the same memory as the SSDs see it (the PCIe DRAM window).
    """
    def __init__(self, wr_port, rd_port, n_ports=1, slots=4096, n_inputs=1, n_outputs=1, log_depth=512,
        staging=None, staging_slots=0, ring_word=0, ring_bus=0):
        if wr_port.data_width != rd_port.data_width:
            raise ValueError("RecorderCore: the write and read ports must have the same width")
        if not (1 <= n_ports <= 8):
            raise ValueError(f"RecorderCore: n_ports={n_ports}: 1 to 8 NVMe ports are allowed")
        if n_inputs < 1 or n_outputs < 1:
            raise ValueError("RecorderCore: at least one input and one output stream are needed")
        if staging is not None and len(staging) != n_ports:
            raise ValueError(f"RecorderCore: staging: {len(staging)} banks for {n_ports} NVMe ports (one per port)")
        if staging is not None and not (1 <= staging_slots <= 16):
            raise ValueError(f"RecorderCore: staging_slots={staging_slots}: 1 to 16 on-chip slots per port")
        dw = wr_port.data_width
        if dw < 8 or dw & (dw - 1):
            raise ValueError(f"RecorderCore: ring word of {dw} bits: a power of two of 8 bits at least")
        self.data_width = dw
        self.ring_word  = ring_word
        self.ring_bus   = ring_bus
        self.n_ports    = n_ports
        self.slots      = slots
        self.log_depth  = log_depth
        self.staging    = staging
        self.staging_slots = staging_slots if staging is not None else 0

        self.inputs  = [stream.Endpoint(word_layout(dw)) for _ in range(n_inputs)]
        self.outputs = [stream.Endpoint(word_layout(dw)) for _ in range(n_outputs)]
        self.req     = [stream.Endpoint(request_layout())    for _ in range(n_ports)]
        self.cpl     = [stream.Endpoint(completion_layout()) for _ in range(n_ports)]

        # Control: pulses (add_csr ORs the CSR pulses and the hardware inputs hw_* into them).
        self.start   = Signal()
        self.stop    = Signal()
        self.abort   = Signal()
        self.trigger = Signal()
        self.hw_start, self.hw_stop, self.hw_abort, self.hw_trigger = [Signal(name=f"hw_{n}")
            for n in ("start", "stop", "abort", "trigger")]
        self.arm     = Signal()                   # Pulse: the next hw_start may start one run.
        self.disarm  = Signal()                   # Pulse: forget an arm not yet used.
        self.armed   = Signal()                   # An arm waits for its hw_start (flip-flop).
        # NVMe ports whose queue engine serves the recorder (its ``source`` is the external user):
        # a run on another port is refused (STATUS_ERR_ENGINE), its commands would never be taken.
        self.served  = Signal(n_ports, reset=2**n_ports - 1)
        self.restart = Signal()                   # Pulse: a run begins.
        self.input_clear = Signal()               # Pulse: a run begins, the input was discarded
                                                  # before it: the record ports forget what they hold.
        # Configuration (static while busy).
        self.direction    = Signal()              # DIR_RECORD / DIR_REPLAY.
        self.mode         = Signal(2)             # MODE_FIXED / MODE_UNTIL_STOP / MODE_RING.
        self.drop         = Signal()              # Overflow policy: 0 lossless, 1 drop.
        self.input_sel    = Signal(max=max(n_inputs, 2))
        self.output_sel   = Signal(max=max(n_outputs, 2))
        self.end_on_last  = Signal(reset=1)       # The input's `last` ends the recording.
        self.check_last   = Signal()              # Else: count `last` before a chunk's end.
        self.flush_after  = Signal()              # NVMe Flush on every port after a recording.
        self.flush_surplus = Signal()             # Discard (and count) input outside recordings.
        self.ring_slots   = Signal(16)
        self.chunk_log2   = Signal(5)             # Chunk: 2**chunk_log2 bytes.
        self.chunk_blocks = Signal(32)
        self.first_lba    = Signal(64)
        self.last_lba     = Signal(64)
        self.start_lba    = Signal(64)
        self.start_port   = Signal(max=max(n_ports, 2))
        self.nsze         = Signal(64)            # Namespace size (LBAs): the region must fit.
        self.chunks       = Signal(CHUNK_BITS)    # Fixed size / replay: chunks.
        self.replay_bytes = Signal(BYTE_BITS)     # Replay: bytes handed out (<= chunks x chunk).
        self.post_bytes   = Signal(BYTE_BITS)     # Ring: bytes recorded after the trigger.
        self.trim_rows    = Signal(TRIM_BITS)
        self.port_mask    = Signal(n_ports)
        self.max_inflight = Signal(16)
        self.onchip_slots = Signal(5)             # On-chip slots used per port (0: the DRAM ring only).
        self.spill        = Signal(reset=1)       # Record: a chunk may take a DRAM slot when no on-chip one is free.
        # Status.
        self.busy        = Signal()
        self.running     = Signal()
        self.recording   = Signal()               # running, direction record (flip-flop) ...
        self.replaying   = Signal()               # ... direction replay (flip-flop).
        self.refused     = Signal()               # The last start was refused (its status code says why).
        self.done        = Signal()
        self.status      = Signal(4)
        self.overflow    = Signal()
        self.error       = Signal()
        self.triggered   = Signal()
        self.trigger_pos = Signal(BYTE_BITS)      # Kept bytes before the trigger.
        self.early_last  = Signal(CHUNK_BITS)     # Counted per ring word at most: 48 bits.
        self.keep_errors = Signal(CHUNK_BITS)
        self.released    = Signal(CHUNK_BITS)     # Record: chunks written; replay: chunks out.
        self.addr_last_lba  = Signal(64)          # LBA of the last chunk released ...
        self.addr_last_port = Signal(max=max(n_ports, 2))   # ... and its port.
        self.level_onchip = Signal(CHUNK_BITS)    # Chunks in on-chip slots ...
        self.level_dram   = Signal(CHUNK_BITS)    # ... and in DRAM slots (filling included).
        self.peak_onchip  = Signal(CHUNK_BITS)
        self.peak_dram    = Signal(CHUNK_BITS)
        self.bytes_spilled = Signal(BYTE_BITS)    # Bytes that went through DRAM slots (record: kept; replay: out).

        # # #

        # Layers -----------------------------------------------------------------------------------
        self.check   = check   = _RegionCheck(n_ports)
        self.ring    = ring    = Ring(wr_port, rd_port, n_ports, slots, banks=staging,
            staging_slots=self.staging_slots, ring_word=ring_word)
        writer, reader = ring.writer, ring.reader
        self.striper = striper = Striper(n_ports, slots, ring_bus=ring_bus)
        self.rel     = rel     = StripeWalker(n_ports)      # Chunks released: addr_last.
        self.fw      = fw      = StripeWalker(n_ports)      # Chunk being filled: its port (its bank).
        self.acct    = acct    = Accounting(log_depth)
        for i in range(n_ports):
            self.comb += [striper.req[i].connect(self.req[i]), self.cpl[i].connect(striper.cpl[i])]

        replay = Signal()
        self.comb += replay.eq(self.direction == DIR_REPLAY)

        # Configuration of the layers.
        for w in (striper.walker, rel, fw):
            self.comb += [
                w.mask.eq(self.port_mask), w.first_lba.eq(self.first_lba), w.last_lba.eq(self.last_lba),
                w.start_lba.eq(self.start_lba), w.start_port.eq(self.start_port),
                w.chunk_blocks.eq(self.chunk_blocks),
            ]
        self.comb += [
            check.mask.eq(self.port_mask), check.served.eq(self.served), check.first_lba.eq(self.first_lba),
            check.last_lba.eq(self.last_lba), check.start_lba.eq(self.start_lba),
            check.nsze.eq(self.nsze), check.start_port.eq(self.start_port),
            check.chunk_blocks.eq(self.chunk_blocks), check.chunk_words.eq(ring.chunk_words),
            check.ring_slots.eq(self.ring_slots), check.chunks.eq(self.chunks),
            check.sized.eq(replay | (self.mode == MODE_FIXED)),
            ring.replay.eq(replay), ring.ring_slots.eq(self.ring_slots), ring.chunk_log2.eq(self.chunk_log2),
            ring.onchip_slots.eq(self.onchip_slots),
            reader.total_bytes.eq(self.replay_bytes),
            striper.replay.eq(replay), striper.ring.eq(self.mode == MODE_RING),
            striper.max_inflight.eq(self.max_inflight),
            striper.trim_rows.eq(self.trim_rows), striper.region_rows.eq(check.rows),
            striper.ptr.ring_slots.eq(self.ring_slots), striper.ptr.chunk_words.eq(ring.chunk_words),
            striper.ptr.chunk_bytes.eq(ring.chunk_bytes),
            # The ring and the striper: requests, their slots, completions.
            ring.requested.eq(striper.requested), ring.requested_dram.eq(striper.ptr.count),
            ring.req_fire.eq(striper.data_fire), ring.req_port.eq(striper.walker.port),
            ring.fill_port.eq(fw.port),
            striper.chunk_oc.eq(ring.req_oc), striper.chunk_id.eq(ring.req_id), striper.oc_adr.eq(ring.req_adr),
            ring.mark.eq(striper.mark), ring.mark_id.eq(striper.mark_id),
            ring.data_fire.eq(striper.data_fire), ring.data_id.eq(striper.data_id),
            ring.data_chunk.eq(striper.data_chunk),
            # Record: the striper's walks and the tiers of their chunks.
            ring.walk_chunk.eq(striper.walk_count), ring.walk_move.eq(striper.walker.advance),
            ring.oc_chunk_n.eq(striper.oc_count), ring.oc_move.eq(striper.oc_walker.advance),
            striper.walk_known.eq(ring.walk_known), striper.walk_oc.eq(ring.walk_oc),
            striper.oc_known.eq(ring.oc_known), striper.oc_chunk.eq(ring.oc_placed),
            striper.oc_id.eq(ring.req_id), striper.oc_slot_adr.eq(ring.req_adr),
            striper.commit_rows.eq(rel.rows),
        ]
        # The walks' lead (rows) over the first chunk not yet written: the ring's window; in ring mode
        # also the region less the trims (a row is written again, or trimmed, once its previous lap
        # was written). At least 1: the row of that chunk.
        lead_most = ring.lead_chunks//n_ports - 1
        ring_lead = Signal(CHUNK_BITS)
        self.comb += ring_lead.eq(check.rows - self.trim_rows)
        self.sync += If((self.mode == MODE_RING) & (check.rows <= self.trim_rows),
            striper.lead_rows.eq(1),
        ).Elif((self.mode == MODE_RING) & (ring_lead < lead_most),
            striper.lead_rows.eq(ring_lead),
        ).Else(
            striper.lead_rows.eq(lead_most),
        )

        # Control ----------------------------------------------------------------------------------
        restart  = self.restart   # Pulse: every layer restarts (after the check, before the run).
        running  = Signal()    # Between restart and the end.
        in_open  = Signal()    # Record: the input is accepted.
        closing  = Signal()
        close_status = Signal(4)
        finished = Signal()
        self.fsm = fsm = FSM(reset_state="IDLE")
        # busy (not IDLE) and running (RUN, FLUSH) are flip-flops set and cleared with the state (they
        # cross to the user's clock domain: a decode of the state register may glitch there).
        self.sync += [
            If(fsm.before_leaving("IDLE"), self.busy.eq(1)).Elif(fsm.before_entering("IDLE"), self.busy.eq(0)),
            If(fsm.before_entering("RUN"), running.eq(1)).Elif(fsm.before_entering("END"), running.eq(0)),
            If(fsm.before_entering("RUN"),
                self.recording.eq(~replay), self.replaying.eq(replay),
            ).Elif(fsm.before_entering("END"),
                self.recording.eq(0), self.replaying.eq(0),
            ),
        ]
        # Arm: one hardware start. Kept until a start is taken (the hardware's or the CPU's), the
        # CPU disarms, or a run ends; a hw_start without it is ignored (a second start after an
        # armed run must not start the recorder again with the old configuration).
        hw_taken = Signal()
        self.comb += hw_taken.eq(fsm.ongoing("IDLE") & self.hw_start & self.armed)
        self.sync += If(self.arm,
            self.armed.eq(1)
        ).Elif(hw_taken | self.disarm | fsm.ongoing("END") | (fsm.ongoing("IDLE") & self.start),
            self.armed.eq(0)
        )
        self.comb += [
            self.running.eq(running),
            self.error.eq(striper.error),
        ]
        fsm.act("IDLE",
            # An arm begins a job: done/refused speak of the run its start will begin.
            If(self.arm,
                NextValue(self.done, 0),
                NextValue(self.refused, 0),
            ),
            If(self.start,
                NextValue(self.done, 0),
                NextValue(self.refused, 0),
                NextValue(self.status, STATUS_NONE),
                check.start.eq(1),
                NextState("CHECK")
            )
        )
        fsm.act("CHECK",
            If(~check.busy & ~check.start,
                If(check.status != STATUS_NONE,
                    NextValue(self.status, check.status),
                    NextValue(self.refused, 1),
                    NextState("END")
                ).Else(
                    ring.clear.eq(1),
                    NextState("CLEAR")
                )
            )
        )
        fsm.act("CLEAR",
            If(~ring.clearing & ~ring.clear,
                restart.eq(1),
                NextValue(in_open, ~replay),
                NextState("RUN")
            )
        )
        fsm.act("RUN",
            If(finished,
                If(self.flush_after & ~replay & ~striper.error,
                    striper.flush.eq(1),
                    NextState("FLUSH")
                ).Else(
                    NextState("END")
                )
            )
        )
        fsm.act("FLUSH",
            If(striper.flushed | striper.error,
                NextState("END")
            )
        )
        fsm.act("END",
            ring.ended.eq(1),
            NextValue(self.done, 1),
            NextState("IDLE")
        )
        # A stop, abort or trigger with the start or while the run is prepared (CHECK, CLEAR) is kept
        # and applies when it begins (its first cycle in RUN): a recording stopped before it ran ends
        # at once, a ring triggered before it ran keeps post_bytes.
        stop, abort, trigger = Signal(), Signal(), Signal()
        early = [(self.stop, Signal(), stop), (self.abort, Signal(), abort), (self.trigger, Signal(), trigger)]
        for pulse, kept, _ in early:
            self.sync += If(fsm.ongoing("IDLE"),
                kept.eq(self.start & pulse),
            ).Elif((fsm.ongoing("CHECK") | fsm.ongoing("CLEAR")) & pulse,
                kept.eq(1),
            )
        self.comb += [out.eq(pulse | kept) for pulse, kept, out in early]
        self.comb += [
            self.input_clear.eq(restart & (self.drop | self.flush_surplus)),
            ring.restart.eq(restart),
            striper.restart.eq(restart),
            rel.restart.eq(restart),
            acct.restart.eq(restart),
        ]

        # Record input -----------------------------------------------------------------------------
        src = stream.Endpoint(word_layout(dw))
        self.comb += Case(self.input_sel, {i: s.connect(src) for i, s in enumerate(self.inputs)})
        limit    = Signal(CHUNK_BITS)
        limit_hit = Signal()
        post_hit = Signal()
        open_now = Signal()
        marker   = Signal()
        accepted = Signal()
        self.comb += [
            limit.eq(Mux(self.mode == MODE_FIXED, self.chunks, check.capacity)),
            limit_hit.eq((self.mode != MODE_RING) & (writer.filling == limit)),
            post_hit.eq(self.triggered & (acct.kept >= self.trigger_pos + self.post_bytes)),
            # Not in the cycle of an abort: its partial chunk is discarded (with its accounting)
            # that cycle, a word taken with it would be neither counted nor written.
            open_now.eq(fsm.ongoing("RUN") & in_open & ~limit_hit & ~post_hit & ~striper.error & ~abort),
            marker.eq(src.bytes == 0),
            writer.sink.valid.eq(src.valid & open_now & ~marker),
            writer.sink.data.eq(src.data),
            writer.open.eq(open_now),
            # Outside a recording (before its run, after its input closed) the input waits (what
            # waits begins the next recording), or is discarded and counted (surplus: flush_surplus,
            # or the drop policy: a source that cannot wait must not see stale data recorded at the
            # next start).
            If(open_now,
                src.ready.eq(marker | writer.sink.ready),
            ).Else(
                src.ready.eq(self.flush_surplus | self.drop)
            ),
            accepted.eq(open_now & src.valid & src.ready),
            acct.word.eq(accepted),
            acct.word_bytes.eq(src.bytes),
            acct.word_gap.eq(src.gap),
            acct.surplus.eq(~open_now & src.valid & src.ready),
            acct.stall.eq(open_now & src.valid & ~src.ready),
            acct.running.eq(running),
        ]
        # Closing the input: status of the first reason.
        self.comb += [
            If(striper.error,
                close_status.eq(Mux(striper.err_status == NVME_STATUS_TIMEOUT, STATUS_ERR_TIMEOUT, STATUS_ERR_DEVICE)),
            ).Elif(abort,
                close_status.eq(STATUS_ABORTED),
            ).Elif(stop,
                close_status.eq(STATUS_STOPPED),
            ).Elif(accepted & src.last & self.end_on_last,
                close_status.eq(STATUS_INPUT_END),
            ).Elif(limit_hit,
                close_status.eq(Mux(self.mode == MODE_FIXED, STATUS_COMPLETE, STATUS_CAPACITY)),
            ).Elif(post_hit,
                close_status.eq(STATUS_TRIGGERED),
            ),
            closing.eq(fsm.ongoing("RUN") & in_open & (close_status != STATUS_NONE)),
        ]
        # The partly filled chunk when the input closes: padded with zeros, or dropped (abort).
        chunk_pos  = Signal(BYTE_BITS)   # Input position of the filling chunk's first kept byte.
        chunk_kept = Signal(32)          # Bytes kept in the filling chunk.
        aborting   = Signal()
        self.comb += [
            aborting.eq(closing & (close_status == STATUS_ABORTED)),
            writer.drop_partial.eq(aborting),
            acct.discard.eq(aborting & writer.partial),
            acct.discard_bytes.eq(chunk_kept),
            acct.discard_pos.eq(chunk_pos),
        ]
        self.sync += [
            If(closing,
                in_open.eq(0),
                self.status.eq(close_status),
                writer.pad.eq(close_status != STATUS_ABORTED),
            ),
            If(restart,
                in_open.eq(~replay),
                writer.pad.eq(0),
                self.early_last.eq(0), self.keep_errors.eq(0),
                self.triggered.eq(0), self.trigger_pos.eq(0),
            ),
            If(accepted & ~marker,
                If(~writer.partial,
                    chunk_pos.eq(acct.bytes_in + src.gap),
                    chunk_kept.eq(src.bytes),
                ).Else(
                    chunk_kept.eq(chunk_kept + src.bytes),
                ),
                If(src.keep_err, self.keep_errors.eq(self.keep_errors + 1)),
                If(src.last & ~self.end_on_last & self.check_last &
                   ~writer.word_last, self.early_last.eq(self.early_last + 1)),
            ),
            # Ring: the trigger marks the position; the recording ends post_bytes later.
            If(running & (self.mode == MODE_RING) & trigger & ~self.triggered & ~replay,
                self.triggered.eq(1),
                self.trigger_pos.eq(acct.kept),
            ),
            # An error after the input closed (during the drain) becomes the status.
            If(fsm.ongoing("RUN") & ~in_open & striper.error & (self.status < STATUS_ERR_DEVICE),
                self.status.eq(close_status),
            ),
        ]

        # Chunk flow ------------------------------------------------------------------------------
        # The ring (ring.py) places each chunk in an on-chip slot or a DRAM slot and releases the
        # slots; the striper writes a filled chunk (record) or reads a chunk into a free slot.
        staged = ring.staged
        self.comb += [
            fw.restart.eq(restart), fw.advance.eq(writer.place_we),
            writer.spill.eq(self.spill),
            # Record: a filled chunk may be written; replay: a free slot may be read into.
            If(replay,
                striper.more.eq((striper.requested != self.chunks) & ring.read_room),
            ).Else(
                striper.more.eq(striper.walk_count != writer.filled),
                striper.oc_more.eq((striper.oc_count != writer.filled) if self.staging_slots else 0),
            ),
            striper.enable.eq(fsm.ongoing("RUN")),
            ring.run.eq(fsm.ongoing("RUN")),
            reader.enable.eq(replay & fsm.ongoing("RUN") & ~striper.error & ~self.abort),
            reader.flush.eq(striper.error),
            self.released.eq(ring.released),
            acct.committed.eq(Mux(replay, self.released, ring.committed)),
            acct.level.eq(Mux(replay, striper.requested - reader.freed,
                writer.filling + writer.partial - self.released)),
            self.overflow.eq(acct.overflow),
        ]
        # Per tier: chunks in slots, their peaks, the bytes that went through DRAM.
        self.comb += [self.level_onchip.eq(ring.level_onchip), self.level_dram.eq(ring.level_dram)]
        # bytes_spilled follows one cycle later: its events and byte counts are registered first (the
        # kept word's bytes come from the input FIFO, the discard after the close decision).
        sp_add, sp_sub = Signal(), Signal()        # Add / subtract ...
        sp_bytes = Signal(32)                      # ... these bytes.
        self.sync += If(restart,
            self.peak_onchip.eq(0), self.peak_dram.eq(0), self.bytes_spilled.eq(0),
            sp_add.eq(0), sp_sub.eq(0),
        ).Else(
            If(self.level_onchip > self.peak_onchip, self.peak_onchip.eq(self.level_onchip)),
            If(self.level_dram > self.peak_dram, self.peak_dram.eq(self.level_dram)),
            # At most one event per cycle: a word is kept, an abort discards (no word is kept in its
            # cycle), or a word is handed out (replay).
            sp_add.eq((~replay & accepted & ~marker & writer.to_dram) |
                (replay & ~staged & reader.source.valid & reader.source.ready)),
            sp_sub.eq(acct.discard & writer.partial_dram),
            If(replay,
                sp_bytes.eq(reader.source.bytes),
            ).Elif(abort,                         # (No word is kept in an abort's cycle.)
                sp_bytes.eq(acct.discard_bytes),
            ).Else(
                sp_bytes.eq(src.bytes),
            ),
            If(sp_add,
                self.bytes_spilled.eq(self.bytes_spilled + sp_bytes),
            ).Elif(sp_sub,
                self.bytes_spilled.eq(self.bytes_spilled - sp_bytes),
            ),
        )
        # The last chunk released: its port and LBA (the seed's WRITE_ADDR_LAST / READ_ADDR_LAST).
        rel_pulse = Signal()
        freed_q   = Signal(CHUNK_BITS)
        self.sync += freed_q.eq(reader.freed)
        self.comb += [
            rel_pulse.eq(Mux(replay, reader.freed != freed_q, ring.commit_now)),
            rel.advance.eq(rel_pulse),
        ]
        self.sync += [
            If(restart,
                self.addr_last_lba.eq(0), self.addr_last_port.eq(0),
            ).Elif(rel_pulse,
                self.addr_last_lba.eq(rel.lba), self.addr_last_port.eq(rel.port),
            )
        ]
        # Output.
        self.comb += Case(self.output_sel, {i: reader.source.connect(s) for i, s in enumerate(self.outputs)})

        # The end: everything requested completed and the DMA drained (or an error and drained).
        self.comb += If(replay,
            finished.eq(((reader.freed == self.chunks) & striper.idle) |
                (striper.error & reader.idle))
        ).Else(
            finished.eq((~in_open & ~writer.padding & writer.idle &
                (((striper.requested == writer.filled) & (self.released == striper.requested) &
                  (ring.committed == striper.requested) & striper.idle) | striper.error)))
        )
        self.sync += If(fsm.ongoing("RUN") & replay & finished,
            self.status.eq(Mux(striper.error, close_status, STATUS_COMPLETE)))

    # CSRs -----------------------------------------------------------------------------------------

    def _add_control_csr(self):
        """The job's configuration and pulses, the drop log's index (``add_csr``)."""
        n_inputs, n_outputs = len(self.inputs), len(self.outputs)
        # Pulses apart from the configuration (as LiteDRAM's BIST): a pulse is one write of `control`,
        # the configuration is written once per run and held.
        self._control = CSRStorage(description="Recorder control: pulses (a 1 acts in the write's cycle; the "
            "configuration is in ``config``).", fields=[
            CSRField("start",    size=1, offset=0, pulse=True, description="Check the configuration and start."),
            CSRField("stop",     size=1, offset=1, pulse=True, description="Record: close the input, pad the partly filled chunk with zeros, finish."),
            CSRField("abort",    size=1, offset=2, pulse=True, description="Record: close the input, drop the partly filled chunk, finish."),
            CSRField("trigger",  size=1, offset=3, pulse=True, description="Ring: the event; the recording ends ``post_bytes`` later."),
            CSRField("snapshot", size=1, offset=4, pulse=True, description="Copy the accounting counters (``snap_*``) in one cycle."),
            CSRField("arm",      size=1, offset=5, pulse=True, description="Arm: the next rising edge of the hardware ``start`` input starts one run with this configuration (cleared when a start is taken, by ``disarm`` or when a run ends; a hardware start while not armed is ignored)."),
            CSRField("disarm",   size=1, offset=6, pulse=True, description="Forget an arm not yet used."),
        ])
        self._config = CSRStorage(description="Run configuration (written before ``start`` or ``arm``, held "
            "during the run).", fields=[
            CSRField("direction", size=1, offset=0, values=[("0", "record"), ("1", "replay")], description="Direction."),
            CSRField("mode",     size=2, offset=1, values=[("0", "fixed size (``chunks``)"),
                ("1", "until stop (or the region is full)"), ("2", "ring with trigger")], description="Record mode."),
            CSRField("drop",     size=1, offset=3, values=[("0", "lossless: back-pressure the input"),
                ("1", "drop: refuse whole ring words when full, count and log them")], description="Overflow policy."),
            CSRField("input_sel",  size=2, offset=4, description=f"Record input (0..{n_inputs - 1})."),
            CSRField("output_sel", size=2, offset=6, description=f"Replay output (0..{n_outputs - 1})."),
            CSRField("end_on_last",  size=1, offset=8, reset=1, description="The input's ``last`` ends the recording (``keep``: exact bytes)."),
            CSRField("check_last",   size=1, offset=9, description="With end_on_last=0: count input packets that end before their chunk."),
            CSRField("flush_after",  size=1, offset=10, description="NVMe Flush on every port after a recording."),
            CSRField("flush_surplus", size=1, offset=11, description="Discard (and count) input that arrives outside a recording."),
            CSRField("spill",    size=1, offset=12, reset=1, values=[("0", "on-chip slots only: the input waits (or drops) when none is free"),
                ("1", "a chunk takes a DRAM slot when no on-chip slot is free")], description="Record: the DRAM tier of the ring (always used without on-chip slots)."),
        ])
        f = self._config.fields
        self.comb += [
            self.direction.eq(f.direction), self.mode.eq(f.mode), self.drop.eq(f.drop),
            self.input_sel.eq(f.input_sel), self.output_sel.eq(f.output_sel),
            self.end_on_last.eq(f.end_on_last), self.check_last.eq(f.check_last),
            self.flush_after.eq(f.flush_after), self.flush_surplus.eq(f.flush_surplus),
            self.spill.eq(f.spill),
        ]
        p = self._control.fields
        self.comb += [
            self.start.eq(p.start | (self.hw_start & self.armed)),
            self.arm.eq(p.arm), self.disarm.eq(p.disarm),
            self.stop.eq(p.stop | self.hw_stop),
            self.abort.eq(p.abort | self.hw_abort),
            self.trigger.eq(p.trigger | self.hw_trigger),
        ]
        self.comb += self.acct.snapshot.eq(p.snapshot)

        storage = functools.partial(csr_storage, self)
        status  = functools.partial(csr_status, self)
        storage("ring_slots",   self.ring_slots,   f"Chunks in the DRAM ring (2..{self.slots}; its start is fixed "
            "in the build: ``RECORDER_RING_BUS``).", self.slots)
        storage("chunk_log2",   self.chunk_log2,   f"Chunk size: 2**chunk_log2 bytes (one NVMe command; at least "
            f"a ring word: {log2_int(self.data_width//8)}..31).")
        storage("chunk_blocks", self.chunk_blocks, "LBAs per chunk (a power of two; one NVMe command: <= MDTS).")
        storage("first_lba",    self.first_lba,    "Region: LBA of its first row (on every port; a multiple of chunk_blocks).")
        storage("last_lba",     self.last_lba,     "Region: LBA of its last row (WRITE_ADDR_LAST/READ_ADDR_LAST of the seed, in LBAs).")
        storage("start_lba",    self.start_lba,    "LBA of the first chunk (a row of the region; record: first_lba).")
        storage("start_port",   self.start_port,   "Port of the first chunk (an enabled port).")
        storage("nsze",         self.nsze,         "Namespace size in LBAs (the smallest of the enabled ports): the region must fit.")
        storage("chunks",       self.chunks,       "Fixed size / replay: chunks (<= the region's capacity).")
        storage("replay_bytes", self.replay_bytes, "Replay: bytes handed out (the rest of the last chunk is not).")
        storage("post_bytes",   self.post_bytes,   "Ring: bytes recorded after the trigger.")
        storage("trim_rows",    self.trim_rows,    "Trim ahead: rows deallocated ahead of the writes (0: none).")
        storage("port_mask",    self.port_mask,    "NVMe ports of the stripe set.", 1)
        storage("max_inflight", self.max_inflight, "Data commands in flight at most (all ports together).", 64)
        if self.staging is not None:
            storage("onchip_slots", self.onchip_slots, f"On-chip slots used in each port's staging bank "
                f"(0..{self.staging_slots}; 0: the DRAM ring only).", self.staging_slots)
        storage("log_index",    self.acct.log_index, "Drop log: entry to read (``log_pos``/``log_len``).")

    def add_csr(self, control=True):
        """The recorder's registers. ``control=False``: the job's configuration and its start/stop/
        abort/trigger/arm pulses are driven by another block (the CPU-less core's ``RecorderJob``,
        cores/recorder/job.py); ``control`` keeps only ``snapshot``; the status, counters and drop
        log are the same."""
        if control:
            self._add_control_csr()
        else:
            self._control = CSRStorage(description="Recorder snapshot (the job is started by ``job``).", fields=[
                CSRField("snapshot", size=1, offset=4, pulse=True, description="Copy the accounting counters (``snap_*``) in one cycle."),
            ])
            self.comb += self.acct.snapshot.eq(self._control.fields.snapshot)
            csr_storage(self, "log_index", self.acct.log_index, "Drop log: entry to read (``log_pos``/``log_len``).")
        status = functools.partial(csr_status, self)
        self._status = CSRStatus(description="Recorder status.", fields=[
            CSRField("busy",      size=1, offset=0, description="Checking, recording or replaying."),
            CSRField("done",      size=1, offset=1, description="Finished since the last start (or arm)."),
            CSRField("error",     size=1, offset=2, description="A command failed (err_*)."),
            CSRField("overflow",  size=1, offset=3, description="Bytes were dropped."),
            CSRField("triggered", size=1, offset=4, description="Ring: the trigger came."),
            CSRField("running",   size=1, offset=5, description="Recording/replaying (the configuration was accepted)."),
            CSRField("armed",     size=1, offset=6, description="Armed: the next hardware start starts a run."),
            CSRField("refused",   size=1, offset=7, description="The last start was refused by the configuration check (``code`` says why)."),
            CSRField("code",      size=4, offset=8, description="Status code (REC_STATUS_*): how the last run ended or why it was refused."),
        ])
        self.comb += [
            self._status.fields.busy.eq(self.busy), self._status.fields.done.eq(self.done),
            self._status.fields.error.eq(self.error), self._status.fields.overflow.eq(self.overflow),
            self._status.fields.triggered.eq(self.triggered), self._status.fields.code.eq(self.status),
            self._status.fields.running.eq(self.running),
            self._status.fields.armed.eq(self.armed), self._status.fields.refused.eq(self.refused),
        ]
        a, s = self.acct, self.striper
        for name, sig, desc in [
            ("snap_cycles",    a.s_cycles,    "Snapshot: cycles from start."),
            ("snap_bytes_in",  a.s_bytes_in,  "Snapshot: bytes that reached the recorder (kept + dropped)."),
            ("snap_kept",      a.s_kept,      "Snapshot: bytes kept (taken into the ring)."),
            ("snap_dropped",   a.s_dropped,   "Snapshot: bytes dropped."),
            ("snap_committed", a.s_committed, "Snapshot: chunks written to the SSDs (record) / handed out (replay)."),
            ("snap_level",     a.s_level,     "Snapshot: chunks in the ring."),
            ("drops",          a.drops,       "Drop events (the log holds the first ones)."),
            ("stalls",         a.stalls,      "Cycles the input waited for room (lossless)."),
            ("surplus",        a.surplus_bytes, "Bytes discarded outside recordings (flush_surplus / drop)."),
            ("peak",           a.peak,        "Highest number of chunks in the ring."),
            ("peak_onchip",    self.peak_onchip, "Highest number of chunks in on-chip slots."),
            ("peak_dram",      self.peak_dram,   "Highest number of chunks in DRAM slots."),
            ("bytes_spilled",  self.bytes_spilled, "Bytes that went through DRAM slots (record: kept into them; replay: handed out of them)."),
            ("requested",      s.requested,   "Data commands issued."),
            ("released",       self.released, "Record: chunks written (on-chip slots as their writes complete, DRAM slots in order); replay: chunks handed out."),
            ("bytes_out",      self.ring.reader.bytes_out, "Replay: bytes handed out."),
            ("err_status",     s.err_status,  "CQE status of the failing command."),
            ("err_port",       s.err_port,    "Port of the failing command."),
            ("err_lba",        s.err_lba,     "LBA of the failing command."),
            ("err_op",         s.err_op,      "Operation of the failing command (0 read, 1 write, 2 flush, 3 deallocate)."),
            ("addr_last_lba",  self.addr_last_lba,  "LBA of the last chunk written (record) or read (replay), in order."),
            ("addr_last_port", self.addr_last_port, "Its port."),
            ("trigger_pos",    self.trigger_pos, "Ring: bytes kept before the trigger."),
            ("rows",           self.check.rows, "Rows of the region (computed by the check)."),
            ("capacity",       self.check.capacity, "Chunks the region holds."),
            ("trimmed_rows",   s.trimmed_rows, "Trim ahead: rows deallocated."),
            ("trims",          s.trims,       "Trim ahead: Dataset Management commands issued."),
            ("early_last",     self.early_last, "Input packets that ended before their chunk (check_last)."),
            ("keep_errors",    self.keep_errors, "Input words with a keep that is not allowed."),
            ("log_pos",        a.log_pos,     "Drop log entry: input position (bytes) of the drop."),
            ("log_len",        a.log_len,     "Drop log entry: bytes dropped."),
            ("log_abort",      a.log_abort,   "Drop log entry: 1 = the partly filled chunk an abort dropped."),
        ]:
            status(name, sig, desc)
