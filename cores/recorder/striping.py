#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Striping frontend of the recorder: ring chunks -> NVMe commands on the ports' queue engines.

::

    chunk k --> port (k-th enabled port, round-robin), LBA of its row --> req[port]
    cpl[0..N-1] --> one completion at a time --> slot tracker / trims / flushes / errors

The enabled ports (``mask``) form a stripe set; chunk ``k`` goes to the next enabled port after
chunk ``k-1``; a row is one chunk on each enabled port, all rows at the same LBA on every port,
from ``first_lba`` to ``last_lba`` (the row of the last chunk) in steps of ``chunk_blocks``. A walk
may start at any row and port (``start_lba``, ``start_port``: a ring replayed from its oldest
chunk) and wraps from ``last_lba`` to ``first_lba``.

Trim ahead (``trim_rows`` > 0): before a row is written it is deallocated (Dataset Management,
one command per port), the trims running ``trim_rows`` rows ahead of the writes (the next row to
write and the ``trim_rows - 1`` after it); a write waits until its row's trims completed (one row of
trims in flight at a time, so a count is exact).
Flush (``flush``): one NVMe Flush per enabled port, after the last write.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from literecorder.cores.nvme.common import (request_layout, completion_layout,
    OP_READ, OP_WRITE, OP_FLUSH, OP_DEALLOCATE, NVME_STATUS_TIMEOUT)
from literecorder.cores.recorder.common import CHUNK_BITS, ID_BITS, ONCHIP_ID, TRIM_BITS, bit
from literecorder.cores.recorder.slots import RingPointer

# Stripe walker ------------------------------------------------------------------------------------

class StripeWalker(LiteXModule):
    """Port and LBA of consecutive chunks of a stripe set (see the module's description)."""
    def __init__(self, n_ports):
        pbits = max(bits_for(n_ports - 1), 1)
        # Configuration.
        self.mask         = Signal(n_ports)
        self.first_lba    = Signal(64)
        self.last_lba     = Signal(64)
        self.start_lba    = Signal(64)
        self.start_port   = Signal(pbits)
        self.chunk_blocks = Signal(32)
        # Control.
        self.restart = Signal()
        self.advance = Signal()            # To the next chunk.
        self.advance_row = Signal()        # To the next row (the port stays).
        # State.
        self.port    = Signal(pbits)
        self.lba     = Signal(64)
        self.rows    = Signal(CHUNK_BITS)  # Rows completed since the restart.
        self.row_end = Signal()            # The chunk is the last of its row.

        # # #

        last_port = Signal(pbits)
        nxt       = Signal(pbits)
        first     = Signal(pbits)
        for i in range(n_ports):
            self.comb += If(self.mask[i], last_port.eq(i))
        for i in reversed(range(n_ports)):
            self.comb += If(self.mask[i], first.eq(i))
        cases = {}
        for p in range(n_ports):
            stmts = [nxt.eq(first)]
            for q in reversed(range(p + 1, n_ports)):
                stmts.append(If(self.mask[q], nxt.eq(q)))
            cases[p] = stmts
        self.comb += Case(self.port, cases)
        self.comb += self.row_end.eq(self.port == last_port)
        next_row = [
            self.rows.eq(self.rows + 1),
            If(self.lba == self.last_lba,
                self.lba.eq(self.first_lba),
            ).Else(
                self.lba.eq(self.lba + self.chunk_blocks)
            )
        ]
        self.sync += If(self.restart,
            self.port.eq(self.start_port),
            self.lba.eq(self.start_lba),
            self.rows.eq(0),
        ).Elif(self.advance,
            self.port.eq(nxt),
            If(self.row_end, *next_row)
        ).Elif(self.advance_row,
            *next_row
        )

# Completion merge ---------------------------------------------------------------------------------

class CompletionMerge(LiteXModule):
    """One completion per cycle from the ports' completion streams (lowest port first)."""
    def __init__(self, n_ports):
        self.sinks  = [stream.Endpoint(completion_layout()) for _ in range(n_ports)]
        self.source = stream.Endpoint(completion_layout())
        self.port   = Signal(max=max(n_ports, 2))

        # # #

        for i in reversed(range(n_ports)):
            self.comb += If(self.sinks[i].valid, self.port.eq(i))
        cases = {}
        for i, s in enumerate(self.sinks):
            cases[i] = s.connect(self.source)
        self.comb += Case(self.port, cases)

# Striper ------------------------------------------------------------------------------------------

class Striper(LiteXModule):
    """Issues the recorder's NVMe commands on ``n_ports`` queue engines and collects completions.

    Data commands: ``more`` (comb) says whether the chunk of the walk (``walker``, chunk
    ``walk_count``) may be requested (record: its data is in its slot; replay: a free slot); each
    request reads/writes the chunk's slot at its port's LBA, with the slot's id: an on-chip slot
    (``chunk_oc``: ``oc_adr``, id ``ONCHIP_ID | chunk_id``) or the next slot of the DRAM ring pointer
    ``ptr`` (``ring_bus`` + slot offset, lap parity and slot). ``ring_bus`` is the DRAM ring's start
    as the SSDs address it, fixed at build time.

    Record with on-chip slots: two walks over the chunks. The walk ``walker`` writes the chunks in
    DRAM slots and passes over those in on-chip slots (``walk_oc``); the walk ``oc_walker`` (chunk
    ``oc_count``) writes the chunks in on-chip slots (``oc_more``, ``oc_chunk``, ``oc_id``, ``oc_slot_adr``)
    and passes over the others. The on-chip walk goes first: chunks that arrived after the drives
    fell behind are written from on-chip memory ahead of the DRAM backlog, and the DRAM carries only
    what the drives did not take. Each walk stays within ``lead_rows`` rows of the first chunk not
    yet written (``commit_rows``: the ring's window of chunks in flight; in ring mode, a row is not
    written again before its previous lap completed, nor trimmed). Trims run ahead of the walk
    that is further.
    """
    def __init__(self, n_ports, slots, ring_bus=0):
        if not (isinstance(ring_bus, int) and 0 <= ring_bus < 2**32):
            raise ValueError(f"Striper: ring_bus={ring_bus!r}: the DRAM ring's bus address (32 bits)")
        self.req = [stream.Endpoint(request_layout())    for _ in range(n_ports)]
        self.cpl = [stream.Endpoint(completion_layout()) for _ in range(n_ports)]

        # Configuration.
        self.replay       = Signal()
        self.ring         = Signal()           # Ring mode: rows wrap (else a wrap is refused).
        self.ring_bus     = Constant(ring_bus, 32)
        self.max_inflight = Signal(16)
        self.trim_rows    = Signal(TRIM_BITS)  # Trim ahead distance in rows (0: no trim).
        self.region_rows  = Signal(CHUNK_BITS) # Rows of the region (trims stay inside it).
        self.lead_rows    = Signal(CHUNK_BITS) # Record: rows a walk may be ahead of ``commit_rows`` (>= 1).
        # Control.
        self.restart      = Signal()
        self.enable       = Signal()           # Data commands may be issued.
        self.more         = Signal()           # The chunk of the walk may be requested (filled / room).
        self.walk_known   = Signal(reset=1)    # Record: the tier of the walk's chunk is known ...
        self.walk_oc      = Signal()           # ... it is in an on-chip slot (the on-chip walk writes it).
        self.oc_more      = Signal()           # Record: the chunk of the on-chip walk is filled ...
        self.oc_known     = Signal()           # ... its tier is known ...
        self.oc_chunk     = Signal()           # ... it is in an on-chip slot ...
        self.oc_id        = Signal(ID_BITS - 2)  # ... this one ...
        self.oc_slot_adr  = Signal(32)         # ... at this bus address.
        self.commit_rows  = Signal(CHUNK_BITS) # Record: rows before the first chunk not yet written.
        self.flush        = Signal()           # Pulse: flush every enabled port.
        self.chunk_oc     = Signal()           # The next chunk is in an on-chip slot ...
        self.chunk_id     = Signal(ID_BITS - 2)  # ... this one (global id) ...
        self.oc_adr       = Signal(32)         # ... at this bus address.
        self.data_fire    = Signal()           # Pulse: a data command was taken ...
        self.data_id      = Signal(ID_BITS)    # ... its id ...
        self.data_chunk   = Signal(CHUNK_BITS) # ... and chunk.
        # Status.
        self.requested    = Signal(CHUNK_BITS) # Data commands issued (chunks; ptr counts the DRAM ones).
        self.walk_count   = Signal(CHUNK_BITS) # Chunk of the walk (``walker``) ...
        self.oc_count     = Signal(CHUNK_BITS) # ... and of the on-chip walk (``oc_walker``).
        self.completed    = Signal(CHUNK_BITS) # Data commands completed without error.
        self.idle         = Signal()           # Nothing in flight.
        self.flushed      = Signal()           # The flush completed on every port.
        self.trimmed_rows = Signal(CHUNK_BITS) # Rows whose trims completed.
        self.trims        = Signal(CHUNK_BITS) # Trim commands issued.
        self.error        = Signal()
        self.err_status   = Signal(15)
        self.err_port     = Signal(max=max(n_ports, 2))
        self.err_lba      = Signal(64)
        self.err_op       = Signal(3)
        # Completed chunks (to the slot tracker).
        self.mark         = Signal()
        self.mark_id      = Signal(ID_BITS)

        # # #

        # Walkers: data chunks (with the ring pointer of the requests), on-chip chunks, trim rows.
        self.walker    = walker    = StripeWalker(n_ports)
        self.oc_walker = oc_walker = StripeWalker(n_ports)
        self.tw        = tw        = StripeWalker(n_ports)
        self.ptr       = ptr       = RingPointer(slots)
        for w in (oc_walker, tw):
            self.comb += [
                w.mask.eq(walker.mask),
                w.first_lba.eq(walker.first_lba),
                w.last_lba.eq(walker.last_lba),
                w.start_lba.eq(walker.start_lba),
                w.start_port.eq(walker.start_port),
                w.chunk_blocks.eq(walker.chunk_blocks),
                w.restart.eq(self.restart),
            ]
        self.comb += [
            walker.restart.eq(self.restart),
            ptr.restart.eq(self.restart),
        ]

        # Completions.
        self.merge = merge = CompletionMerge(n_ports)
        for i in range(n_ports):
            self.comb += self.cpl[i].connect(merge.sinks[i])
        c = merge.source
        self.comb += c.ready.eq(1)
        fail     = Signal()
        c_data   = Signal()
        self.comb += [
            fail.eq(c.status[:11] != 0),
            c_data.eq((c.op == OP_READ) | (c.op == OP_WRITE)),
            self.mark.eq(c.valid & c.final & ~fail & c_data),
            self.mark_id.eq(c.id),
        ]
        self.sync += [
            If(self.restart,
                self.completed.eq(0), self.error.eq(0), self.err_status.eq(0), self.err_port.eq(0),
                self.err_lba.eq(0), self.err_op.eq(0),
            ).Elif(c.valid & c.final & ~fail & c_data,
                self.completed.eq(self.completed + 1),
            ),
            If(c.valid & fail & ~self.error & ~self.restart,
                self.error.eq(1),
                self.err_status.eq(c.status),
                self.err_port.eq(merge.port),
                self.err_lba.eq(c.lba),
                self.err_op.eq(c.op),
            ),
        ]

        # Command scheduler: flush > trim > data, one request at a time.
        self.fsm = fsm = FSM(reset_state="IDLE")
        inflight   = Signal(17)   # requested - completed: at most max_inflight (16 bits) and the failed ones.
        trim_busy  = Signal()     # A row of trims in flight.
        flush_pend = Signal()
        trim_due   = Signal()
        data_ok    = Signal()
        want_w     = Signal()     # The walk's chunk may be written/read now ...
        want_oc    = Signal()     # ... the on-chip walk's.
        use_oc     = Signal()     # DATA: the on-chip walk's chunk is offered.
        pass_w     = Signal()     # Record: the walk passes over an on-chip chunk ...
        pass_oc    = Signal()     # ... the on-chip walk over a DRAM chunk.
        # From registers: the walks' lead over the first chunk not yet written (void in the cycle
        # after the walk moved: commit_rows only grows), the trims' lead over the walks.
        lead_w     = Signal()
        lead_oc    = Signal()
        moved_w    = Signal()
        moved_oc   = Signal()
        ahead_w    = Signal()
        ahead_oc   = Signal()
        self.sync += [
            lead_w.eq(walker.rows - self.commit_rows < self.lead_rows),
            lead_oc.eq(oc_walker.rows - self.commit_rows < self.lead_rows),
            moved_w.eq(walker.advance), moved_oc.eq(oc_walker.advance),
            ahead_w.eq(tw.rows < walker.rows + self.trim_rows),
            ahead_oc.eq(tw.rows < oc_walker.rows + self.trim_rows),
        ]
        trimmed_w  = Signal()
        trimmed_oc = Signal()
        # Record: a chunk of the DRAM backlog is written only while no on-chip chunk is: behind the
        # drives, the drives take the on-chip chunks (an on-chip slot is free again as soon as its
        # write completed) and the DRAM keeps only what they did not take; the backlog is written when
        # the drives are ahead of the input (between on-chip chunks) or after it closed.
        oc_inflight = Signal(8)
        oc_idle     = Signal()
        self.comb += oc_idle.eq(oc_inflight == 0)
        self.comb += [
            self.idle.eq((inflight == 0) & ~trim_busy & ~flush_pend & fsm.ongoing("IDLE")),
            # Trims run up to trim_rows rows ahead of the data, inside the region unless ring.
            trim_due.eq(self.enable & (self.trim_rows != 0) & ~self.replay & ~trim_busy & ~self.error &
                (ahead_w | ahead_oc) & (self.ring | (tw.rows < self.region_rows))),
            trimmed_w.eq((self.trim_rows == 0) | self.replay | (self.trimmed_rows > walker.rows)),
            trimmed_oc.eq((self.trim_rows == 0) | (self.trimmed_rows > oc_walker.rows)),
            # The walks: each writes the chunks of its tier and passes over the others.
            pass_w.eq(~self.replay & self.more & self.walk_known & self.walk_oc),
            pass_oc.eq(~self.replay & self.oc_more & self.oc_known & ~self.oc_chunk),
            want_w.eq(self.more & (self.replay | (self.walk_known & ~self.walk_oc & lead_w & ~moved_w & oc_idle)) &
                trimmed_w),
            want_oc.eq(~self.replay & self.oc_more & self.oc_known & self.oc_chunk & lead_oc & ~moved_oc & trimmed_oc),
            # A data command: its row trimmed (if trimming), below the in-flight limit.
            data_ok.eq(self.enable & ~self.error & (inflight < self.max_inflight) & (want_w | want_oc)),
        ]
        fsm.act("IDLE",
            If(flush_pend,
                NextState("FLUSH")
            ).Elif(trim_due,
                NextState("TRIM")
            ).Elif(data_ok,
                NextValue(use_oc, want_oc),
                NextState("DATA")
            )
        )

        # Requests: the port of the state's walk gets the command.
        cmd_port = Signal(max=max(n_ports, 2))     # TRIM/FLUSH: port being served.
        cmd_op   = Signal(3)
        cmd_lba  = Signal(64)
        sel      = Signal(max=max(n_ports, 2))
        offer    = Signal()
        fire     = Signal()
        self.comb += [
            If(fsm.ongoing("DATA"),
                sel.eq(Mux(use_oc, oc_walker.port, walker.port)), offer.eq(1),
                cmd_op.eq(Mux(self.replay, OP_READ, OP_WRITE)), cmd_lba.eq(Mux(use_oc, oc_walker.lba, walker.lba)),
            ).Elif(fsm.ongoing("TRIM"),
                sel.eq(cmd_port), offer.eq(bit(walker.mask, cmd_port)),
                cmd_op.eq(OP_DEALLOCATE), cmd_lba.eq(tw.lba),
            ).Elif(fsm.ongoing("FLUSH"),
                sel.eq(cmd_port), offer.eq(bit(walker.mask, cmd_port)),
                cmd_op.eq(OP_FLUSH),
            ),
            fire.eq(offer & Array(r.ready for r in self.req)[sel]),
        ]
        cmd_adr = Signal(32)
        self.comb += [
            If(use_oc,
                cmd_adr.eq(self.oc_slot_adr), self.data_id.eq(Cat(self.oc_id, C(1, 1), C(0, 1))),
            ).Elif(self.chunk_oc,
                cmd_adr.eq(self.oc_adr), self.data_id.eq(Cat(self.chunk_id, C(1, 1), C(0, 1))),
            ).Else(
                cmd_adr.eq(self.ring_bus + ptr.byte), self.data_id.eq(ptr.id),
            ),
            self.data_chunk.eq(Mux(use_oc, self.oc_count, self.walk_count)),
        ]
        for i, r in enumerate(self.req):
            self.comb += [
                r.valid.eq(offer & (sel == i)),
                r.op.eq(cmd_op),
                r.lba.eq(cmd_lba),
                r.blocks.eq(walker.chunk_blocks),
                r.adr.eq(cmd_adr),
                r.id.eq(self.data_id),
            ]
        data_fire = Signal()
        self.comb += [
            data_fire.eq(fsm.ongoing("DATA") & fire),
            walker.advance.eq((data_fire & ~use_oc) | pass_w),
            oc_walker.advance.eq((data_fire & use_oc) | pass_oc),
            ptr.advance.eq(data_fire & ~use_oc & ~self.chunk_oc),
            self.data_fire.eq(data_fire),
        ]
        self.sync += If(self.restart,
            self.requested.eq(0), self.walk_count.eq(0), self.oc_count.eq(0),
        ).Else(
            If(data_fire, self.requested.eq(self.requested + 1)),
            If(walker.advance, self.walk_count.eq(self.walk_count + 1)),
            If(oc_walker.advance, self.oc_count.eq(self.oc_count + 1)),
        )
        # Commands in flight, counted (not requested - completed: two 48-bit counters on the scheduler's path),
        # and those of on-chip slots (record).
        self.sync += If(self.restart,
            inflight.eq(0), oc_inflight.eq(0),
        ).Else(
            inflight.eq(inflight + data_fire - self.mark),
            oc_inflight.eq(oc_inflight + (data_fire & use_oc) - (self.mark & self.mark_id[log2_int(ONCHIP_ID)])),
        )
        fsm.act("DATA",
            If(fire, NextState("IDLE"))
        )
        # TRIM / FLUSH: one command per enabled port (cmd_port walks all ports).
        port_done = Signal()
        self.comb += port_done.eq(~offer | fire)
        for state in ("TRIM", "FLUSH"):
            fsm.act(state,
                If(port_done,
                    NextValue(cmd_port, cmd_port + 1),
                    If(cmd_port == n_ports - 1,
                        NextValue(cmd_port, 0),
                        NextState("IDLE")
                    )
                )
            )
        row_sent   = Signal()
        flush_sent = Signal()
        self.comb += [
            row_sent.eq(fsm.ongoing("TRIM") & port_done & (cmd_port == n_ports - 1)),
            flush_sent.eq(fsm.ongoing("FLUSH") & port_done & (cmd_port == n_ports - 1)),
            tw.advance_row.eq(row_sent),
        ]

        # Trim and flush bookkeeping (one row of trims in flight: its completions are counted).
        trim_cpl  = Signal(max=n_ports + 1)
        flush_cpl = Signal(max=n_ports + 1)
        nports    = Signal(max=n_ports + 1)
        self.comb += nports.eq(reduce(add, [walker.mask[i] for i in range(n_ports)]))
        self.sync += [
            If(self.restart,
                self.trimmed_rows.eq(0), self.trims.eq(0), trim_cpl.eq(0), trim_busy.eq(0),
                flush_cpl.eq(0), self.flushed.eq(0), flush_pend.eq(0),
            ).Else(
                If(fsm.ongoing("IDLE") & ~flush_pend & trim_due, trim_busy.eq(1)),
                If(self.flush, flush_pend.eq(1), flush_cpl.eq(0), self.flushed.eq(0)),
                If(flush_sent, flush_pend.eq(0)),
                If(fsm.ongoing("TRIM") & fire, self.trims.eq(self.trims + 1)),
                If(c.valid & (c.op == OP_DEALLOCATE),
                    If(trim_cpl + 1 == nports,
                        trim_cpl.eq(0),
                        trim_busy.eq(0),
                        self.trimmed_rows.eq(self.trimmed_rows + 1),
                    ).Else(
                        trim_cpl.eq(trim_cpl + 1)
                    )
                ),
                If(c.valid & (c.op == OP_FLUSH),
                    If(flush_cpl + 1 == nports,
                        self.flushed.eq(1)
                    ).Else(
                        flush_cpl.eq(flush_cpl + 1)
                    )
                ),
            ),
        ]
