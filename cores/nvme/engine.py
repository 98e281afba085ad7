#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NVMe I/O queue engine: block requests in, NVMe commands on one I/O queue pair, completions out.
No CPU work per command.

::

    requests --> NVMeSubmitter --(SQEs)--> SQ memory <==(device reads: SQ window)
                  |  (MDTS split,        |
                  |   free CIDs)         +--> slot table ---> NVMePRPLists <==(device reads: PRP window)
                  |                      |                     (lists synthesized from the table)
                  +--> tail -------------+--> NVMeDoorbells --> doorbell writes (coalesced)
                                         |        ^
    completions <-- NVMeCompletionPoller <-- CQ memory <==(device writes: CQ window)
                     (CQE at the head,   |
                      CID -> slot)       +<-- NVMeTimeoutScan (oldest outstanding command)

- The I/O submission/completion queues live in on-chip memories that the root complex serves as
  windows: the device fetches SQEs and posts CQEs over PCIe, the engine sees each CQE as soon as the
  device has written it (no polling over PCIe).
- PRP lists are not stored: a read of the PRP window at (CID, entry) returns the address of page
  ``entry + 1`` of that command's buffer; for Dataset Management the CID's page returns its range.
- Requests larger than ``max_blocks`` (MDTS) are split into several commands.
- Up to ``qd`` commands are in flight (at most ``entries - 1``); the CID is a free slot of the
  slot table, reused only after its completion.
- The engine stops submitting on the first error status (its CQE, LBA and opcode are kept) and on
  a command timeout (no completion for ``timeout`` cycles while commands are outstanding; the
  oldest outstanding command is reported); commands in flight still complete.

Each submodule drives only its own outputs; the engine connects them and keeps the state they share
(free CIDs, commands outstanding, the error report).
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from literecorder.cores.common import RAMFIFO, doorbell_layout
from literecorder.cores.pcie.common import check_data_width
from literecorder.cores.nvme.common import *

# Layouts ------------------------------------------------------------------------------------------

# Per CID: what the completion needs (and the timeout scan).
SLOT_LAYOUT = [("id", 16), ("op", 3), ("lba", 64), ("blocks", 17), ("time", 32), ("last", 1), ("valid", 1)]
# Per CID: what its PRP list / DSM range needs.
PRP_LAYOUT  = [("dsm", 1), ("page", 20), ("lba", 64), ("nlb", 17)]

def _width(layout):
    return sum(w for _, w in layout)

def _fields(layout, sig):
    r, o = {}, 0
    for name, w in layout:
        r[name] = sig[o:o + w]
        o += w
    return r

# Submitter ----------------------------------------------------------------------------------------

class NVMeSubmitter(LiteXModule):
    """Requests -> SQEs in the SQ memory (served as the SQ window), split at ``max_blocks``.

    Takes a free CID (``cid``), writes the command's SQE at ``tail`` (in one cycle at 256 bits) and
    its slot / PRP entries (``slot_*``); ``allow``: the engine lets a command be submitted now."""
    def __init__(self, window, entries, prp_base):
        dw          = window.data_width
        beat_bytes  = dw//8
        sqe_beats   = max(1, NVME_SQE_BYTES//beat_bytes)
        cid_bits    = log2_int(entries)
        qbits       = cid_bits + 1
        self.sink       = sink = stream.Endpoint(request_layout())
        self.cid        = stream.Endpoint([("cid", cid_bits)])
        self.allow      = Signal()
        self.qsize      = Signal(qbits)
        self.nsid       = Signal(32)
        self.lba_shift  = Signal(4)
        self.max_blocks = Signal(17)
        self.now        = Signal(32)
        # Outputs.
        self.tail       = tail = Signal(qbits)
        self.tail_next  = tail_next = Signal(qbits)
        self.submitted  = submit = Signal()   # Pulse: an SQE is written (tail moves).
        self.pending    = Signal()       # A command is ready to be submitted once allowed.
        self.slot_cid   = Signal(cid_bits)
        self.slot_dat   = Signal(_width(SLOT_LAYOUT))
        self.prp_dat    = Signal(_width(PRP_LAYOUT))

        # # #

        # Current request.
        have     = Signal()
        cur_op   = Signal(3)
        cur_lba  = Signal(64)
        cur_left = Signal(32)
        cur_adr  = Signal(32)
        cur_id   = Signal(16)
        n_c      = Signal(17)           # Blocks of this command (from the request's registers),
        n        = Signal(17)           # registered: valid once `calc` is set.
        calc     = Signal()             # n, last, nbytes are those of the current request state.
        is_rw    = Signal()
        is_dsm   = Signal()
        last_c   = Signal()
        last     = Signal()
        opcode   = Signal(8)
        cid      = self.cid.cid
        self.comb += [
            is_rw.eq((cur_op == OP_READ) | (cur_op == OP_WRITE)),
            is_dsm.eq(cur_op == OP_DEALLOCATE),
            Case(cur_op, {op: opcode.eq(oc) for op, oc in OP_TO_OPCODE.items()}),
        ]
        max_n = Signal(17)
        self.comb += [
            max_n.eq(Mux(is_dsm | (cur_op == OP_WRITE_ZEROES), NVME_DSM_MAX_BLOCKS, self.max_blocks)),
            If(cur_op == OP_FLUSH,
                n_c.eq(0)
            ).Elif(cur_left < max_n,
                n_c.eq(cur_left)
            ).Else(
                n_c.eq(max_n)
            ),
            last_c.eq((cur_op == OP_FLUSH) | (cur_left <= max_n)),   # (n_c == cur_left)
        ]
        nbytes_c = lba_bytes(self, n_c, self.lba_shift, 32)
        nbytes   = Signal(32)
        self.sync += [
            n.eq(n_c),
            last.eq(last_c),
            nbytes.eq(nbytes_c),
        ]

        # SQE: PRP1/PRP2 (one page, two pages, or the CID's PRP list page), CDW10-12.
        prp1     = Signal(32)
        prp2     = Signal(32)
        prp_list = Signal(32)
        first_bytes = Signal(13)
        cdw10, cdw11, cdw12 = Signal(32), Signal(32), Signal(32)
        self.comb += [
            first_bytes.eq(NVME_PAGE_SIZE - cur_adr[:12]),
            prp_list.eq(prp_base + (cid << 12)),
            If(is_rw,
                prp1.eq(cur_adr),
                If(nbytes <= first_bytes,
                    prp2.eq(0)
                ).Elif(nbytes <= first_bytes + NVME_PAGE_SIZE,
                    prp2.eq(Cat(Constant(0, 12), cur_adr[12:32] + 1))
                ).Else(
                    prp2.eq(prp_list)
                )
            ).Elif(is_dsm,
                prp1.eq(prp_list)
            ),
            If(is_rw | (cur_op == OP_WRITE_ZEROES),
                cdw10.eq(cur_lba[:32]),
                cdw11.eq(cur_lba[32:]),
                cdw12.eq(n - 1),
            ).Elif(is_dsm,
                cdw11.eq(1 << 2),         # One range; Attribute - Deallocate.
            ),
        ]
        sqe = Cat(opcode, Constant(0, 8), cid, Constant(0, 16 - cid_bits),  # CDW0
            self.nsid,                                                       # NSID
            Constant(0, 128),                                                # CDW2-3, MPTR
            prp1, Constant(0, 32), prp2, Constant(0, 32),                    # PRP1, PRP2
            cdw10, cdw11, cdw12, Constant(0, 96))

        # SQ memory: written through ports of two beats (together a port twice as wide as the beats,
        # which block RAM has; the SQE in 64/(2*beat) steps: one at 256 bits), read by the device
        # through the window one beat at a time.
        ports = min(sqe_beats, 2)
        steps = sqe_beats//ports
        sq_mem = Memory(dw, entries*sqe_beats, name="nvme_sq")
        sq_rd  = sq_mem.get_port(mode=READ_FIRST)
        self.specials += sq_mem, sq_rd
        step  = Signal(max=max(steps, 2))
        write = Signal()
        part  = Signal(ports*dw)
        self.comb += Case(step, {k: part.eq(sqe[k*ports*dw:(k + 1)*ports*dw]) for k in range(steps)})
        for b in range(ports):
            p = sq_mem.get_port(write_capable=True)
            self.specials += p
            adr = [Constant(b, log2_int(ports))] if ports > 1 else []
            adr += [step] if steps > 1 else []
            self.comb += [
                p.adr.eq(Cat(*adr, tail[:cid_bits])),
                p.dat_w.eq(part[b*dw:(b + 1)*dw]),
                p.we.eq(write),
            ]
        self.comb += [
            sq_rd.adr.eq(window.rd_adr),
            window.rd_dat.eq(sq_rd.dat_r),
        ]
        if steps > 1:
            self.sync += If(write, step.eq(Mux(step == steps - 1, 0, step + 1)))

        self.comb += [
            tail_next.eq(Mux(tail + 1 == self.qsize, 0, tail + 1)),
            self.pending.eq(have & self.cid.valid),
            write.eq(have & calc & self.cid.valid & self.allow),
            submit.eq(write & (step == steps - 1)),
            self.cid.ready.eq(submit),
            sink.ready.eq(~have),
            self.slot_cid.eq(cid),
            self.slot_dat.eq(Cat(cur_id, cur_op, cur_lba, n, self.now, last, Constant(1, 1))),
            self.prp_dat.eq(Cat(is_dsm, cur_adr[12:32], cur_lba, Mux(is_dsm, n, 0))),
        ]
        self.sync += [
            calc.eq(~(sink.valid & sink.ready) & ~submit),
            If(sink.valid & sink.ready,
                have.eq(1),
                cur_op.eq(sink.op),
                cur_lba.eq(sink.lba),
                cur_left.eq(sink.blocks),
                cur_adr.eq(sink.adr),
                cur_id.eq(sink.id),
            ).Elif(submit,
                tail.eq(tail_next),
                cur_lba.eq(cur_lba + n),
                cur_left.eq(cur_left - n),
                cur_adr.eq(cur_adr + nbytes),
                If(last, have.eq(0)),
            )
        ]

# PRP Lists ----------------------------------------------------------------------------------------

class NVMePRPLists(LiteXModule):
    """The PRP window: rows of (CID page, entries) synthesized from the per-CID table.

    A read of page ``cid`` returns, for entry ``k``, the address of page ``k + 1`` of the command's
    buffer (the first page is in PRP1); for Dataset Management, the CID's one range (context 0,
    NLB, starting LBA)."""
    def __init__(self, window, entries):
        dw            = window.data_width
        beat_bytes    = dw//8
        rows_per_page = NVME_PAGE_SIZE//beat_bytes
        ents_per_row  = beat_bytes//8
        cid_bits      = log2_int(entries)
        self.we  = Signal()
        self.cid = Signal(cid_bits)
        self.dat = Signal(_width(PRP_LAYOUT))

        # # #

        mem = Memory(_width(PRP_LAYOUT), entries, name="nvme_prp")
        wr  = mem.get_port(write_capable=True)
        rd  = mem.get_port(mode=READ_FIRST)
        self.specials += mem, wr, rd
        self.comb += [
            wr.adr.eq(self.cid),
            wr.dat_w.eq(self.dat),
            wr.we.eq(self.we),
            rd.adr.eq(window.rd_adr[log2_int(rows_per_page):]),
        ]
        row_r = Signal(log2_int(rows_per_page))
        self.sync += row_r.eq(window.rd_adr[:log2_int(rows_per_page)])
        e = _fields(PRP_LAYOUT, rd.dat_r)
        entries_dat = []
        for k in range(ents_per_row):
            page = Signal(20, name=f"prp_page{k}")
            self.comb += page.eq(e["page"] + (row_r << log2_int(ents_per_row)) + k + 1)
            entries_dat.append(Cat(Constant(0, 12), page, Constant(0, 32)))
        self.comb += If(e["dsm"],
            If(row_r == 0, window.rd_dat.eq(Cat(Constant(0, 32), e["nlb"], Constant(0, 15), e["lba"])))
        ).Else(
            window.rd_dat.eq(Cat(*entries_dat))
        )

# Completion Poller --------------------------------------------------------------------------------

class NVMeCompletionPoller(LiteXModule):
    """Watches the CQ memory (written by the device through the CQ window) at the head: each new
    CQE (phase tag) is matched with its CID's slot and given out as a completion; its slot is freed
    (``free``/``free_cid``).

    The slot table is here: written by the submitter (``slot_we``/``slot_cid``/``slot_dat``), read by
    the timeout scan (``scan_adr`` -> ``scan_dat``, one cycle later) while ``scan`` is set."""
    def __init__(self, window, entries):
        dw          = window.data_width
        beat_bytes  = dw//8
        cqe_per_row = beat_bytes//NVME_CQE_BYTES
        cq_rows     = window.size//beat_bytes
        cid_bits    = log2_int(entries)
        qbits       = cid_bits + 1
        self.source   = source = stream.Endpoint(completion_layout())
        self.qsize    = Signal(qbits)
        self.now      = Signal(32)
        self.clear    = Signal()         # The CQ memory is being cleared (engine start).
        self.clear_row = Signal(max=max(cq_rows, 2))
        self.slot_we  = Signal()
        self.slot_cid = Signal(cid_bits)
        self.slot_dat = Signal(_width(SLOT_LAYOUT))
        self.scan     = Signal()
        self.scan_adr = Signal(cid_bits)
        self.scan_dat = Signal(_width(SLOT_LAYOUT))
        self.expire     = Signal()       # Pulse: complete ``expire_cid`` with the timeout status.
        self.expire_cid = Signal(cid_bits)
        # Outputs.
        self.head     = head = Signal(qbits)
        self.sq_head  = Signal(qbits)    # SQ head reported by the last CQE.
        self.more     = Signal()         # A CQE may be visible at the head (0: none for now).
        self.busy     = Signal()         # A completion is being given out (slot table port in use).
        self.free     = Signal()         # Pulse: a CID is returned.
        self.free_cid = Signal(cid_bits)
        self.failed   = Signal()         # Pulse with `free`: its status is an error.

        # # #

        # CQ memory: written by the device (port B), read at the head (port A). Clearing writes
        # only the bytes holding the phase tags.
        cq_mem = Memory(dw, cq_rows, name="nvme_cq")
        cq_rd  = cq_mem.get_port(mode=READ_FIRST)
        cq_wr  = cq_mem.get_port(write_capable=True, we_granularity=8)
        self.specials += cq_mem, cq_rd, cq_wr
        phase_bytes = 0
        for k in range(cqe_per_row):
            phase_bytes |= 1 << (NVME_CQE_BYTES*k + 14)
        dat_w = Signal(dw)
        self.comb += dat_w.eq(window.wr.dat)
        for k in range(cqe_per_row):
            self.comb += dat_w[128*k + 112].eq(window.wr.dat[128*k + 112] & ~self.clear)
        self.comb += [
            window.wr.ready.eq(~self.clear),
            cq_wr.adr.eq(Mux(self.clear, self.clear_row, window.wr.adr)),
            cq_wr.dat_w.eq(dat_w),
            If(self.clear,
                cq_wr.we.eq(phase_bytes),
            ).Elif(window.wr.valid,
                cq_wr.we.eq(window.wr.be),
            ),
        ]

        # Slot table (port A: submitter; port B: completions and the timeout scan).
        slots   = Memory(_width(SLOT_LAYOUT), entries, name="nvme_slots")
        slot_wr = slots.get_port(write_capable=True)
        slot_rd = slots.get_port(write_capable=True, mode=READ_FIRST)
        self.specials += slots, slot_wr, slot_rd
        self.comb += [
            slot_wr.adr.eq(self.slot_cid),
            slot_wr.dat_w.eq(self.slot_dat),
            slot_wr.we.eq(self.slot_we),
            self.scan_dat.eq(slot_rd.dat_r),
        ]

        # CQE at the head (read continuously).
        phase = Signal(reset=1)
        cqe   = Signal(128)
        row_r = Signal(qbits)
        self.comb += cq_rd.adr.eq(head[log2_int(cqe_per_row):] if cqe_per_row > 1 else head)
        self.sync += row_r.eq(head)
        if cqe_per_row > 1:
            self.comb += Case(row_r[:log2_int(cqe_per_row)],
                {k: cqe.eq(cq_rd.dat_r[128*k:128*(k + 1)]) for k in range(cqe_per_row)})
        else:
            self.comb += cqe.eq(cq_rd.dat_r[:128])
        cqe_sqhd   = cqe[64:80]
        cqe_cid    = cqe[96:112]
        cqe_phase  = cqe[112]
        cqe_status = cqe[113:128]
        head_next  = Signal(qbits)
        new_cqe    = Signal()
        fsm_idle   = Signal()
        self.comb += [
            head_next.eq(Mux(head + 1 == self.qsize, 0, head + 1)),
            new_cqe.eq(~self.clear & (cqe_phase == phase) & (row_r == head)),
            self.more.eq(new_cqe | (row_r != head) | ~fsm_idle),
        ]

        c_cid    = Signal(16)
        c_status = Signal(15)
        slot     = _fields(SLOT_LAYOUT, slot_rd.dat_r)
        self.comb += [
            source.id.eq(slot["id"]),
            source.cid.eq(c_cid),
            source.op.eq(slot["op"]),
            source.lba.eq(slot["lba"]),
            source.blocks.eq(slot["blocks"]),
            source.status.eq(c_status),
            source.latency.eq(self.now - slot["time"]),
            source.final.eq(slot["last"]),
        ]
        self.fsm = fsm = FSM(reset_state="POLL")
        fsm.act("POLL",
            slot_rd.adr.eq(Mux(self.scan, self.scan_adr, cqe_cid[:cid_bits])),
            fsm_idle.eq(1),
            If(new_cqe & ~self.scan,
                NextValue(c_cid, cqe_cid),
                NextValue(c_status, cqe_status),
                NextValue(self.sq_head, cqe_sqhd),
                NextValue(head, head_next),
                If(head_next == 0, NextValue(phase, ~phase)),
                NextState("EMIT")
            ).Elif(self.expire,
                NextValue(c_cid, self.expire_cid),
                NextValue(c_status, NVME_STATUS_TIMEOUT),
                NextState("TIMEOUT")
            )
        )
        # A timed-out command completes like any other (its slot freed, the consumer told): the
        # recorder or the CPU waiting for it sees the failure.
        fsm.act("TIMEOUT",
            self.busy.eq(1),
            slot_rd.adr.eq(c_cid[:cid_bits]),
            NextState("EMIT")
        )
        fsm.act("EMIT",
            self.busy.eq(1),
            slot_rd.adr.eq(c_cid[:cid_bits]),
            source.valid.eq(1),
            If(source.ready,
                # Clear the slot's valid bit (write back what was read) and return its CID.
                slot_rd.we.eq(1),
                slot_rd.dat_w.eq(Cat(slot_rd.dat_r[:-1], Constant(0, 1))),
                self.free.eq(1),
                self.failed.eq(c_status[:11] != 0),
                NextState("POLL")
            )
        )
        self.comb += self.free_cid.eq(c_cid[:cid_bits])

# Doorbells ----------------------------------------------------------------------------------------

class NVMeDoorbells(LiteXModule):
    """Coalesced doorbell writes: the SQ tail when the submitter pauses (nothing to submit right now)
    or after ``NVME_SQ_DOORBELL_BATCH`` new entries; the CQ head when no further CQE is visible.
    While the drive holds ``NVME_SQ_DOORBELL_HOLD_MIN`` announced commands or more, a pause rings
    only once ``NVME_SQ_DOORBELL_HOLD`` new entries wait or the oldest of them waited
    ``NVME_SQ_DOORBELL_HOLD_CYCLES`` (the drive has work meanwhile; the end of a burst is announced
    that long after its last entry at most)."""
    def __init__(self, qbits):
        self.source    = source = stream.Endpoint(doorbell_layout())
        self.sq_db     = Signal(32)
        self.cq_db     = Signal(32)
        self.tail      = Signal(qbits)
        self.submitted = Signal()
        self.pending   = Signal()    # The submitter has a command to submit now.
        self.head      = Signal(qbits)
        self.more      = Signal()    # A further CQE is visible at the head.
        self.outstanding = Signal(qbits + 1)  # Commands submitted, not completed.
        self.sq_count  = Signal(32)  # Doorbell writes.
        self.cq_count  = Signal(32)

        # # #

        db_tail  = Signal(qbits)
        db_head  = Signal(qbits)
        since    = Signal(max=NVME_SQ_DOORBELL_BATCH + 1)
        sq_ring  = Signal()
        cq_ring  = Signal()
        hold     = Signal()    # From registers, one cycle late (a doorbell a cycle earlier or later).
        waited   = Signal(max=NVME_SQ_DOORBELL_HOLD_CYCLES + 1)   # Cycles the oldest unannounced entry waited.
        self.sync += [
            If(self.tail == db_tail,
                waited.eq(0),
            ).Elif(waited != NVME_SQ_DOORBELL_HOLD_CYCLES,
                waited.eq(waited + 1),
            ),
            hold.eq(((self.outstanding - since) >= NVME_SQ_DOORBELL_HOLD_MIN) &
                (since < NVME_SQ_DOORBELL_HOLD) & (waited < NVME_SQ_DOORBELL_HOLD_CYCLES - 1)),
        ]
        self.comb += [
            sq_ring.eq((self.tail != db_tail) &
                ((~self.pending & ~hold) | (since == NVME_SQ_DOORBELL_BATCH))),
            cq_ring.eq((self.head != db_head) & ~self.more),
            source.valid.eq(sq_ring | cq_ring),
            If(sq_ring,
                source.adr.eq(self.sq_db),
                source.dat.eq(self.tail),
            ).Else(
                source.adr.eq(self.cq_db),
                source.dat.eq(self.head),
            ),
        ]
        self.sync += [
            If(source.valid & source.ready & sq_ring,
                db_tail.eq(self.tail),
                since.eq(0),
                self.sq_count.eq(self.sq_count + 1),
            ).Elif(self.submitted & (since != NVME_SQ_DOORBELL_BATCH),
                since.eq(since + 1),
            ),
            If(source.valid & source.ready & ~sq_ring,
                db_head.eq(self.head),
                self.cq_count.eq(self.cq_count + 1),
            ),
        ]

# Timeout Scan -------------------------------------------------------------------------------------

class NVMeTimeoutScan(LiteXModule):
    """Command timeout: no completion for ``timeout`` cycles while commands are outstanding. Then the
    slot table is scanned for the oldest outstanding command (``found`` pulses with each older one:
    ``lba``, ``op``, ``cid``) and ``expired`` pulses at the end of the scan, with ``expire`` and
    ``expire_cid`` when an outstanding command was found: the poller completes it with the timeout
    status."""
    def __init__(self, entries):
        cid_bits = log2_int(entries)
        self.timeout     = Signal(32)     # 0: off.
        self.outstanding = Signal()
        self.completed   = Signal()
        self.stopped     = Signal()       # The engine already stopped on an error.
        self.now         = Signal(32)
        self.scan        = Signal()
        self.scan_adr    = Signal(cid_bits)
        self.scan_dat    = Signal(_width(SLOT_LAYOUT))
        self.busy        = Signal()       # The slot table's port is in use by the poller.
        self.found       = Signal()
        self.lba         = Signal(64)
        self.op          = Signal(3)
        self.cid         = Signal(cid_bits)
        self.expired     = Signal()
        self.expire      = Signal()
        self.expire_cid  = Signal(cid_bits)

        # # #

        watchdog = Signal(32)
        self.sync += If(self.completed | ~self.outstanding,
            watchdog.eq(0)
        ).Elif(watchdog != 2**32 - 1,
            watchdog.eq(watchdog + 1)
        )
        idx    = Signal(cid_bits + 1)
        idx_r  = Signal(cid_bits)
        oldest = Signal(32)
        slot   = _fields(SLOT_LAYOUT, self.scan_dat)
        age    = Signal(32)
        self.comb += [
            age.eq(self.now - slot["time"]),
            self.lba.eq(slot["lba"]),
            self.op.eq(slot["op"]),
            self.cid.eq(idx_r),
            self.scan_adr.eq(idx[:cid_bits]),
        ]
        any_found = Signal()
        found_cid = Signal(cid_bits)
        self.comb += self.expire_cid.eq(Mux(self.found, idx_r, found_cid))
        self.fsm = fsm = FSM(reset_state="WATCH")
        fsm.act("WATCH",
            If((self.timeout != 0) & (watchdog >= self.timeout) & ~self.stopped,
                NextValue(idx, 0),
                NextValue(oldest, 0),
                NextValue(any_found, 0),
                NextState("READ")
            )
        )
        fsm.act("READ",
            self.scan.eq(1),
            If(~self.busy,
                NextValue(idx_r, idx[:cid_bits]),
                NextValue(idx, idx + 1),
                NextState("CHECK")
            )
        )
        fsm.act("CHECK",
            self.scan.eq(1),
            self.scan_adr.eq(idx_r),
            If(slot["valid"] & (age >= oldest),
                self.found.eq(1),
                NextValue(oldest, age),
                NextValue(any_found, 1),
                NextValue(found_cid, idx_r),
            ),
            If(idx == entries,
                # The poller is idle (the scan holds it): it takes the oldest command now.
                self.expired.eq(1),
                self.expire.eq(any_found | self.found),
                NextState("WATCH")
            ).Else(
                NextState("READ")
            )
        )

# Queue Engine -------------------------------------------------------------------------------------

class NVMeQueueEngine(LiteXModule):
    """One I/O queue pair of one NVMe controller, driven by hardware.

    Parameters
    ----------
    rc : RCRootComplex
        The root complex of the SSD's port: hands out the SQ, CQ and PRP windows (at ``base`` +
        ``NVME_*_OFFSET``) and takes the doorbell writes.
    base : int
        Bus address of the engine's windows (aligned on ``NVME_WINDOWS_SPAN``).
    entries : int
        Queue entries (power of two): the SQ and CQ memories hold ``entries`` entries; up to
        ``entries - 1`` commands in flight.

    While ``enable`` is 0 the engine is held in reset; setting it (after the I/O queues were
    created on the controller) clears the CQ memory, fills the free-CID list and starts.
    """
    def __init__(self, rc, base, entries=512):
        dw = rc.phy.data_width
        check_data_width(dw, minimum=128)
        if entries < 4 or entries & (entries - 1) or entries > 4096:
            raise ValueError(f"entries={entries}: a power of two between 4 and 4096")
        if base % NVME_WINDOWS_SPAN:
            raise ValueError(f"base 0x{base:x}: must be aligned on 0x{NVME_WINDOWS_SPAN:x}")
        qbits = log2_int(entries) + 1
        self.entries    = entries
        self.data_width = dw
        self.sq_window  = rc.add_window("sq",  base + NVME_SQ_OFFSET,  max(4096, entries*NVME_SQE_BYTES),
            writable=False, on_chip=True)
        self.cq_window  = rc.add_window("cq",  base + NVME_CQ_OFFSET,  max(4096, entries*NVME_CQE_BYTES),
            readable=False, on_chip=True)
        self.prp_window = rc.add_window("prp", base + NVME_PRP_OFFSET, entries*NVME_PAGE_SIZE,
            writable=False, on_chip=True)

        # Configuration, streams, status (the interface table: ENGINE_CONFIG, ENGINE_STATUS).
        self.enable   = Signal()
        self.sink     = stream.Endpoint(request_layout())
        self.source   = stream.Endpoint(completion_layout())
        self.doorbell = stream.Endpoint(doorbell_layout())
        _engine_interface(self, entries, with_reset=True)

        # # #

        core = _NVMeQueueEngineCore(self.sq_window, self.cq_window, self.prp_window, entries)
        self.core = core = ResetInserter()(core)
        self.comb += [
            core.reset.eq(~self.enable),
            self.sink.connect(core.sink),
            core.source.connect(self.source),
            core.doorbell.connect(self.doorbell),
        ]
        for name, *_ in ENGINE_CONFIG:
            self.comb += getattr(core, name).eq(getattr(self, name))
        for name, _ in ENGINE_STATUS:
            self.comb += getattr(self, name).eq(getattr(core, name))

# The engine's interface, declared once for the engine and its logic: (name, bits, reset, meaning);
# "q": log2(entries) + 1 bits.
ENGINE_CONFIG = [
    ("qsize",       "q", "entries",     "Entries of the SQ/CQ on the controller."),
    ("qd",          "q", "entries - 1", "Commands in flight (< qsize)."),
    ("nsid",        32,  1,             "Namespace ID."),
    ("lba_shift",   4,   9,             "log2 of the LBA size."),
    ("max_blocks",  17,  256,           "Blocks per command (MDTS)."),
    ("sq_db",       32,  0,             "SQ tail doorbell bus address (below 4 GiB)."),
    ("cq_db",       32,  0,             "CQ head doorbell bus address (below 4 GiB)."),
    ("timeout",     32,  0,             "Cycles without a completion while commands are outstanding (0: off)."),
    ("clear_error", 1,   0,             "Pulse: resume after an error."),
]
ENGINE_STATUS = [("ready", 1), ("outstanding", "q"), ("error", 1), ("err_status", 15), ("err_lba", 64),
    ("err_op", 3), ("err_cid", 16), ("submitted", 32), ("completed", 32), ("sq_doorbells", 32),
    ("cq_doorbells", 32)]

def _engine_interface(obj, entries, with_reset=False):
    q = log2_int(entries) + 1
    width = lambda w: q if w == "q" else w
    for name, w, reset, _ in ENGINE_CONFIG:
        reset = {"entries": entries, "entries - 1": entries - 1}.get(reset, reset)
        setattr(obj, name, Signal(width(w), name=name, reset=reset if with_reset else 0))
    for name, w in ENGINE_STATUS:
        setattr(obj, name, Signal(width(w), name=name))

class _NVMeQueueEngineCore(LiteXModule):
    """The engine's logic (held in reset while disabled): its five parts and what they share."""
    def __init__(self, sq_window, cq_window, prp_window, entries):
        dw       = sq_window.data_width
        cid_bits = log2_int(entries)
        qbits    = cid_bits + 1
        cq_rows  = cq_window.size//(dw//8)
        # Interface (see NVMeQueueEngine).
        self.sink, self.source = stream.Endpoint(request_layout()), stream.Endpoint(completion_layout())
        self.doorbell = stream.Endpoint(doorbell_layout())
        _engine_interface(self, entries)

        # # #

        now = Signal(32)
        self.sync += now.eq(now + 1)

        self.submitter = sub  = NVMeSubmitter(sq_window, entries, prp_window.base)
        self.prp_lists = prp  = NVMePRPLists(prp_window, entries)
        self.poller    = poll = NVMeCompletionPoller(cq_window, entries)
        self.doorbells = dbs  = NVMeDoorbells(qbits)
        self.timeouts  = tmo  = NVMeTimeoutScan(entries)

        # Start: the CQ memory is cleared and the free-CID list filled (every slot free).
        self.free = free = RAMFIFO([("cid", cid_bits)], entries)
        init_n   = max(entries, cq_rows)
        init_cnt = Signal(max=init_n + 1)
        initing  = Signal(reset=1)
        self.sync += If(initing,
            init_cnt.eq(init_cnt + 1),
            If(init_cnt == init_n - 1, initing.eq(0))
        )
        self.comb += [
            self.ready.eq(~initing),
            If(initing,
                free.sink.valid.eq(init_cnt < entries),
                free.sink.cid.eq(init_cnt),
            ).Else(
                free.sink.valid.eq(poll.free),
                free.sink.cid.eq(poll.free_cid),
            ),
            poll.clear.eq(initing & (init_cnt < cq_rows)),
            poll.clear_row.eq(init_cnt),
        ]

        # Submission: one command at a time while allowed.
        sq_full = Signal()
        self.comb += [
            sq_full.eq(sub.tail_next == poll.sq_head),
            self.sink.connect(sub.sink),
            free.source.connect(sub.cid),
            sub.allow.eq(~initing & ~self.error & (self.outstanding < self.qd) & ~sq_full),
            sub.qsize.eq(self.qsize),
            sub.nsid.eq(self.nsid),
            sub.lba_shift.eq(self.lba_shift),
            sub.max_blocks.eq(self.max_blocks),
            sub.now.eq(now),
            # Slot and PRP tables, written with the SQE.
            poll.slot_we.eq(sub.submitted | (initing & (init_cnt < entries))),
            poll.slot_cid.eq(Mux(initing, init_cnt, sub.slot_cid)),
            poll.slot_dat.eq(Mux(initing, 0, sub.slot_dat)),
            prp.we.eq(sub.submitted),
            prp.cid.eq(sub.slot_cid),
            prp.dat.eq(sub.prp_dat),
        ]

        # Completion.
        self.comb += [
            poll.source.connect(self.source),
            poll.qsize.eq(self.qsize),
            poll.now.eq(now),
        ]

        # Doorbells.
        self.comb += [
            dbs.source.connect(self.doorbell),
            dbs.sq_db.eq(self.sq_db),
            dbs.cq_db.eq(self.cq_db),
            dbs.tail.eq(sub.tail),
            dbs.submitted.eq(sub.submitted),
            dbs.pending.eq(sub.pending & sub.allow),
            dbs.head.eq(poll.head),
            dbs.more.eq(poll.more),
            dbs.outstanding.eq(self.outstanding),
            self.sq_doorbells.eq(dbs.sq_count),
            self.cq_doorbells.eq(dbs.cq_count),
        ]

        # Timeout scan (reads the slot table through the poller).
        self.comb += [
            tmo.timeout.eq(self.timeout),
            tmo.outstanding.eq(self.outstanding != 0),
            tmo.completed.eq(poll.free),
            tmo.stopped.eq(self.error),
            tmo.now.eq(now),
            poll.scan.eq(tmo.scan),
            tmo.busy.eq(poll.busy),
            poll.scan_adr.eq(tmo.scan_adr),
            tmo.scan_dat.eq(poll.scan_dat),
            poll.expire.eq(tmo.expire),
            poll.expire_cid.eq(tmo.expire_cid),
        ]

        # Shared state: commands outstanding, counters, the error report (first error only).
        self.sync += [
            self.outstanding.eq(self.outstanding + sub.submitted - poll.free),
            If(sub.submitted, self.submitted.eq(self.submitted + 1)),
            If(poll.free, self.completed.eq(self.completed + 1)),
            If(self.clear_error,
                self.error.eq(0),
            ).Elif(poll.free & poll.failed & ~self.error,
                self.error.eq(1),
                self.err_status.eq(poll.source.status),
                self.err_lba.eq(poll.source.lba),
                self.err_op.eq(poll.source.op),
                self.err_cid.eq(poll.source.cid),
            ).Elif(tmo.found,
                self.err_lba.eq(tmo.lba),
                self.err_op.eq(tmo.op),
                self.err_cid.eq(tmo.cid),
            ).Elif(tmo.expired,
                self.error.eq(1),
                self.err_status.eq(NVME_STATUS_TIMEOUT),
            ),
        ]
