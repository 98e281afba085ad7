#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NVMe I/O queue engine: block requests in, NVMe commands on one I/O queue pair, completions out.
No CPU work per command.

::

    requests --> split (MDTS) --> SQE builder --> SQ memory <==(device reads: SQ window)
                    |                  |                |
                    |          slot tables (CID)        +--> SQ tail doorbell (coalesced)
                    |                  |
                    |        PRP lists / DSM ranges <==(device reads: PRP window, synthesized)
                    |
    completions <-- match CID <-- CQE poll <-- CQ memory <==(device writes: CQ window)
                                                   +--> CQ head doorbell (coalesced)

- The I/O submission/completion queues live in on-chip memories that the root complex's completer
  serves as windows: the device fetches SQEs and posts CQEs over PCIe, the engine sees each CQE as
  soon as the device has written it (no polling over PCIe).
- PRP lists are not stored: a read of the PRP window at (CID, entry) returns the address of page
  ``entry + 1`` of that command's buffer; for Dataset Management the CID's page returns its range.
- Requests larger than ``max_blocks`` (MDTS) are split into several commands.
- Up to ``qd`` commands are in flight (at most ``entries - 1``); the CID is a free slot of the
  slot tables, reused only after its completion.
- The engine stops submitting on the first error status (its CQE, LBA and opcode are kept) and on
  a command timeout (no completion for ``timeout`` cycles while commands are outstanding; the
  oldest outstanding command is reported); commands in flight still complete.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from literecorder.cores.pcie.common import check_data_width
from literecorder.cores.pcie.completer import CompleterWindow
from literecorder.cores.pcie.requester import doorbell_layout
from literecorder.cores.nvme.common import *

# Helpers ------------------------------------------------------------------------------------------

STATUS_TIMEOUT = 0x7fff   # Engine status code of a command timeout (not an NVMe status).

def _window_reader(window, depth, read_row, row_data):
    """Read side of a window served by a synchronous (1-cycle) memory-like port.

    ``read_row``: signal set to the row to read; ``row_data``: the row's data one cycle later.
    Returns (statements, submodules)."""
    fifo     = stream.SyncFIFO([("dat", window.data_width)], depth, buffered=True)
    reserved = Signal(max=depth + 1)
    adr      = Signal(window.adr_width)
    left     = Signal(8)
    issued   = Signal()
    accept   = Signal()
    issue    = Signal()
    need     = Signal(10)
    comb = [
        need.eq(reserved + window.rd_cmd.beats),
        accept.eq(window.rd_cmd.valid & (left == 0) & (need <= depth)),
        window.rd_cmd.ready.eq(accept),
        issue.eq(left != 0),
        read_row.eq(adr),
        fifo.sink.valid.eq(issued),
        fifo.sink.dat.eq(row_data),
        fifo.source.connect(window.rd_data),
    ]
    sync = [
        issued.eq(issue),
        If(accept,
            adr.eq(window.rd_cmd.adr),
            left.eq(window.rd_cmd.beats),
        ).Elif(issue,
            adr.eq(adr + 1),
            left.eq(left - 1),
        ),
        reserved.eq(reserved + Mux(accept, window.rd_cmd.beats, 0) -
            (window.rd_data.valid & window.rd_data.ready)),
    ]
    return comb, sync, fifo

# Queue Engine -------------------------------------------------------------------------------------

class NVMeQueueEngine(LiteXModule):
    """One I/O queue pair of one NVMe controller, driven by hardware.

    Parameters
    ----------
    data_width : int
        TLP datapath width (128, 256 or 512).
    sq_base, cq_base, prp_base : int
        PCIe bus addresses of the SQ, CQ and PRP windows (aligned on their sizes).
    entries : int
        Queue entries (power of two): the SQ and CQ memories hold ``entries`` entries; up to
        ``entries - 1`` commands in flight.

    While ``enable`` is 0 the engine is held in reset; setting it (after the I/O queues were
    created on the controller) clears the CQ memory, fills the free-CID list and starts.
    """
    def __init__(self, data_width, sq_base, cq_base, prp_base, entries=512, read_depth=32):
        check_data_width(data_width)
        if data_width < 128:
            raise ValueError(f"data_width={data_width}: the queue engine needs >= 128-bit beats")
        if entries < 4 or entries & (entries - 1) or entries > 4096:
            raise ValueError(f"entries={entries}: a power of two between 4 and 4096")
        dw    = data_width
        qbits = log2_int(entries) + 1
        self.entries    = entries
        self.data_width = dw

        # Windows (served by the root complex's completer).
        self.sq_window  = CompleterWindow("sq",  sq_base,  entries*64, dw, writable=False, fast=True)
        self.cq_window  = CompleterWindow("cq",  cq_base,  max(4096, entries*16), dw, readable=False, fast=True)
        self.prp_window = CompleterWindow("prp", prp_base, entries*4096, dw, writable=False, fast=True)
        self.windows    = [self.sq_window, self.cq_window, self.prp_window]
        self.prp_base   = prp_base

        # Configuration.
        self.enable      = Signal()
        self.qsize       = Signal(qbits, reset=entries)     # Entries of the SQ/CQ on the controller.
        self.qd          = Signal(qbits, reset=entries - 1) # Commands in flight (< qsize).
        self.nsid        = Signal(32, reset=1)
        self.lba_shift   = Signal(4, reset=9)
        self.max_blocks  = Signal(17, reset=256)            # Blocks per command (MDTS).
        self.sq_db       = Signal(64)
        self.cq_db       = Signal(64)
        self.timeout     = Signal(32)                       # Cycles without completion (0: off).
        self.clear_error = Signal()                         # Pulse: resume after an error.

        # Streams.
        self.sink     = stream.Endpoint(request_layout())
        self.source   = stream.Endpoint(completion_layout())
        self.doorbell = stream.Endpoint(doorbell_layout())

        # Status.
        self.ready        = Signal()
        self.now          = Signal(32)
        self.outstanding  = Signal(qbits)
        self.error        = Signal()
        self.err_status   = Signal(15)
        self.err_lba      = Signal(64)
        self.err_op       = Signal(3)
        self.err_cid      = Signal(16)
        self.submitted    = Signal(32)
        self.completed    = Signal(32)
        self.sq_doorbells = Signal(32)
        self.cq_doorbells = Signal(32)

        # # #

        self.core = core = ResetInserter()(_NVMeQueueEngineLogic(self, read_depth))
        self.comb += core.reset.eq(~self.enable)

class _NVMeQueueEngineLogic(LiteXModule):
    def __init__(self, e, read_depth):
        dw          = e.data_width
        entries     = e.entries
        beat_bytes  = dw//8
        sqe_beats   = max(1, 64//beat_bytes)
        cqe_per_row = beat_bytes//16
        cid_bits    = log2_int(entries)
        qbits       = cid_bits + 1
        sink, source, doorbell = e.sink, e.source, e.doorbell
        prp_base    = e.prp_base

        self.sync += e.now.eq(e.now + 1)

        # Memories ---------------------------------------------------------------------------------
        sq_rows = entries*64//beat_bytes
        cq_rows = max(4096, entries*16)//beat_bytes
        sq_mem = Memory(dw, sq_rows, name="nvme_sq")
        self.specials += sq_mem
        cq_mem = Memory(dw, cq_rows, name="nvme_cq")
        self.specials += cq_mem
        sq_wr = sq_mem.get_port(write_capable=True)
        sq_rd = sq_mem.get_port()
        cq_wr = cq_mem.get_port(write_capable=True, we_granularity=8)
        cq_rd = cq_mem.get_port()
        self.specials += sq_wr, sq_rd, cq_wr, cq_rd

        # Slot tables: per CID, what completions and PRP/DSM reads need.
        info_layout = [("id", 16), ("op", 3), ("lba", 64), ("blocks", 17), ("time", 32),
                       ("last", 1), ("valid", 1)]
        info_w = sum(w for _, w in info_layout)
        info_mem = Memory(info_w, entries, name="nvme_info")
        self.specials += info_mem
        info_wr = info_mem.get_port(write_capable=True)            # Submission.
        info_rd = info_mem.get_port(write_capable=True)            # Completion / timeout scan.
        self.specials += info_wr, info_rd
        prp_layout = [("dsm", 1), ("page", 21), ("lba", 64), ("nlb", 32)]
        prp_w = sum(w for _, w in prp_layout)
        prp_mem = Memory(prp_w, entries, name="nvme_prp")
        self.specials += prp_mem
        prp_wr = prp_mem.get_port(write_capable=True)
        prp_rd = prp_mem.get_port()
        self.specials += prp_wr, prp_rd

        def unpack(layout, sig):
            r, o = {}, 0
            for name, w in layout:
                r[name] = sig[o:o+w]
                o += w
            return r

        # Device side of the windows ---------------------------------------------------------------
        # SQ: read-only for the device.
        comb, sync, sq_fifo = _window_reader(e.sq_window, read_depth, sq_rd.adr, sq_rd.dat_r)
        self.submodules += sq_fifo
        self.comb += comb
        self.sync += sync
        # CQ: written by the device.
        cq_init = Signal()   # Set below: the CQ memory is being cleared.
        cq_init_row = Signal(max=max(2, max(4096, entries*16)//beat_bytes))
        self.comb += [
            If(cq_init,
                cq_wr.adr.eq(cq_init_row),
                cq_wr.dat_w.eq(0),
                cq_wr.we.eq(2**(dw//8) - 1),
            ).Else(
                e.cq_window.wr.ready.eq(1),
                cq_wr.adr.eq(e.cq_window.wr.adr),
                cq_wr.dat_w.eq(e.cq_window.wr.dat),
                If(e.cq_window.wr.valid, cq_wr.we.eq(e.cq_window.wr.be)),
            )
        ]
        # PRP window: rows of (CID page, entries) synthesized from the slot table.
        prp_row      = Signal(e.prp_window.adr_width)
        prp_row_r    = Signal(e.prp_window.adr_width)
        prp_data     = Signal(dw)
        rows_per_page = 4096//beat_bytes
        ents_per_row  = beat_bytes//8
        self.comb += prp_rd.adr.eq(prp_row[log2_int(rows_per_page):])
        self.sync += prp_row_r.eq(prp_row)
        pe = unpack(prp_layout, prp_rd.dat_r)
        in_page = prp_row_r[:log2_int(rows_per_page)]
        entries_data = []
        for k in range(ents_per_row):
            ent = Signal(64, name=f"prp_entry{k}")
            self.comb += ent.eq((pe["page"] + (in_page << log2_int(ents_per_row)) + k + 1) << 12)
            entries_data.append(ent)
        dsm_desc = Signal(dw)
        self.comb += dsm_desc.eq(Cat(Constant(0, 32), pe["nlb"], pe["lba"]))
        self.comb += If(pe["dsm"],
            If(in_page == 0, prp_data.eq(dsm_desc))
        ).Else(
            prp_data.eq(Cat(*entries_data))
        )
        comb, sync, prp_fifo = _window_reader(e.prp_window, read_depth, prp_row, prp_data)
        self.submodules += prp_fifo
        self.comb += comb
        self.sync += sync

        # Free CIDs (filled at start, while the CQ memory and the slot table are cleared) ----------
        self.free = free = stream.SyncFIFO([("cid", cid_bits)], entries, buffered=True)
        cq_rows_n = max(4096, entries*16)//beat_bytes
        init_n    = max(entries, cq_rows_n)
        init_cnt  = Signal(max=init_n + 1)
        initing   = Signal(reset=1)
        cpl_free  = Signal()           # The completion path returns a CID.
        cpl_cid   = Signal(cid_bits)
        self.sync += If(initing,
            init_cnt.eq(init_cnt + 1),
            If(init_cnt == init_n - 1, initing.eq(0))
        )
        self.comb += [
            If(initing,
                free.sink.valid.eq(init_cnt < entries),
                free.sink.cid.eq(init_cnt),
            ).Else(
                free.sink.valid.eq(cpl_free),
                free.sink.cid.eq(cpl_cid),
            ),
            e.ready.eq(~initing),
        ]

        # Queue state.
        tail     = Signal(qbits)
        db_tail  = Signal(qbits)
        head     = Signal(qbits)
        db_head  = Signal(qbits)
        phase    = Signal(reset=1)
        sq_head  = Signal(qbits)
        tail_next = Signal(qbits)
        head_next = Signal(qbits)
        self.comb += [
            tail_next.eq(Mux(tail + 1 == e.qsize, 0, tail + 1)),
            head_next.eq(Mux(head + 1 == e.qsize, 0, head + 1)),
        ]
        sq_full = Signal()
        self.comb += sq_full.eq(tail_next == sq_head)

        # Submission -------------------------------------------------------------------------------
        have    = Signal()
        cur_op  = Signal(3)
        cur_lba = Signal(64)
        cur_left = Signal(32)
        cur_adr = Signal(32)
        cur_id  = Signal(16)
        n       = Signal(17)            # Blocks of this command.
        nbytes  = Signal(32)
        cid     = Signal(cid_bits)
        prp1    = Signal(64)
        prp2    = Signal(64)
        opcode  = Signal(8)
        is_rw   = Signal()
        last    = Signal()
        beat    = Signal(max=max(sqe_beats, 2))
        sqe     = Signal(512)
        cdw10, cdw11, cdw12 = Signal(32), Signal(32), Signal(32)
        prp_list = Signal(64)
        first_bytes = Signal(13)

        self.comb += [
            is_rw.eq((cur_op == OP_READ) | (cur_op == OP_WRITE)),
        ]
        self.comb += Case(cur_op, {op: opcode.eq(oc) for op, oc in OP_TO_OPCODE.items()})
        max_n = Signal(33)
        self.comb += [
            max_n.eq(Mux((cur_op == OP_DEALLOCATE) | (cur_op == OP_WRITE_ZEROES), 65536, e.max_blocks)),
            If(cur_op == OP_FLUSH,
                n.eq(0)
            ).Elif(cur_left < max_n,
                n.eq(cur_left)
            ).Else(
                n.eq(max_n)
            ),
            last.eq((cur_op == OP_FLUSH) | (cur_left == n)),
            nbytes.eq(n << e.lba_shift),
            first_bytes.eq(4096 - cur_adr[:12]),
            prp_list.eq(prp_base + (cid << 12)),
            prp1.eq(0),
            prp2.eq(0),
            If(is_rw,
                prp1.eq(cur_adr),
                If(nbytes <= first_bytes,
                    prp2.eq(0)
                ).Elif(nbytes <= first_bytes + 4096,
                    prp2.eq(Cat(Constant(0, 12), cur_adr[12:32] + 1))
                ).Else(
                    prp2.eq(prp_list)
                )
            ).Elif(cur_op == OP_DEALLOCATE,
                prp1.eq(prp_list)
            ),
            cdw10.eq(0), cdw11.eq(0), cdw12.eq(0),
            If(is_rw | (cur_op == OP_WRITE_ZEROES),
                cdw10.eq(cur_lba[:32]),
                cdw11.eq(cur_lba[32:]),
                cdw12.eq(n - 1),
            ).Elif(cur_op == OP_DEALLOCATE,
                cdw10.eq(0),              # One range.
                cdw11.eq(1 << 2),         # Attribute - Deallocate.
            ),
            sqe.eq(Cat(opcode, Constant(0, 8), cid, Constant(0, 16 - cid_bits),  # CDW0
                e.nsid,                                                       # NSID
                Constant(0, 64), Constant(0, 64),                                # CDW2-3, MPTR
                prp1, prp2, cdw10, cdw11, cdw12, Constant(0, 96))),
        ]

        can_submit = Signal()
        self.comb += can_submit.eq(e.ready & ~e.error & free.source.valid &
            (e.outstanding < e.qd) & ~sq_full)

        info_w_sig = Signal(info_w)
        self.comb += info_w_sig.eq(Cat(cur_id, cur_op, cur_lba, n, e.now, last, Constant(1, 1)))
        prp_w_sig = Signal(prp_w)
        self.comb += prp_w_sig.eq(Cat(cur_op == OP_DEALLOCATE, cur_adr[12:32], Constant(0, 1),
            cur_lba, Mux(cur_op == OP_DEALLOCATE, n, 0)))

        self.submit = submit = FSM(reset_state="IDLE")
        submit.act("IDLE",
            If(e.ready & ~have,
                sink.ready.eq(1),
                If(sink.valid,
                    NextValue(have, 1),
                    NextValue(cur_op, sink.op),
                    NextValue(cur_lba, sink.lba),
                    NextValue(cur_left, sink.blocks),
                    NextValue(cur_adr, sink.adr),
                    NextValue(cur_id, sink.id),
                )
            ).Elif(have & can_submit,
                NextValue(cid, free.source.cid),
                free.source.ready.eq(1),
                NextValue(beat, 0),
                NextState("WRITE-SQE")
            )
        )
        sqe_beat = Signal(dw)
        self.comb += Case(beat, {b: sqe_beat.eq(sqe[b*dw:(b+1)*dw]) for b in range(sqe_beats)})
        submit.act("WRITE-SQE",
            sq_wr.adr.eq(Cat(beat, tail) if sqe_beats > 1 else tail),
            sq_wr.dat_w.eq(sqe_beat),
            sq_wr.we.eq(1),
            info_wr.adr.eq(cid),
            info_wr.dat_w.eq(info_w_sig),
            info_wr.we.eq(beat == 0),
            prp_wr.adr.eq(cid),
            prp_wr.dat_w.eq(prp_w_sig),
            prp_wr.we.eq(beat == 0),
            NextValue(beat, beat + 1),
            If(beat == sqe_beats - 1,
                NextValue(tail, tail_next),
                NextValue(e.submitted, e.submitted + 1),
                NextValue(cur_lba, cur_lba + n),
                NextValue(cur_left, cur_left - n),
                NextValue(cur_adr, cur_adr + nbytes),
                If(last, NextValue(have, 0)),
                NextState("IDLE")
            )
        )

        # Completion -------------------------------------------------------------------------------
        cqe      = Signal(128)
        cq_row_r = Signal(cid_bits + 1)
        self.comb += cq_rd.adr.eq(head[log2_int(cqe_per_row):] if cqe_per_row > 1 else head)
        self.sync += cq_row_r.eq(head)
        if cqe_per_row > 1:
            self.comb += Case(cq_row_r[:log2_int(cqe_per_row)],
                {k: cqe.eq(cq_rd.dat_r[128*k:128*(k+1)]) for k in range(cqe_per_row)})
        else:
            self.comb += cqe.eq(cq_rd.dat_r[:128])
        cqe_sqhd   = cqe[64:80]
        cqe_cid    = cqe[96:112]
        cqe_phase  = cqe[112]
        cqe_status = cqe[113:128]
        new_cqe = Signal()
        self.comb += new_cqe.eq(e.ready & (cqe_phase == phase) & (cq_row_r == head))

        c_cid    = Signal(16)
        c_status = Signal(15)
        info     = unpack(info_layout, info_rd.dat_r)
        watchdog = Signal(32)
        timed_out = Signal()
        scan     = Signal(cid_bits + 1)
        oldest_age = Signal(32)
        found    = Signal()

        self.complete = complete = FSM(reset_state="POLL")
        complete.act("POLL",
            info_rd.adr.eq(cqe_cid[:cid_bits]),
            If(e.clear_error, NextValue(e.error, 0)),
            If(new_cqe,
                NextValue(c_cid, cqe_cid),
                NextValue(c_status, cqe_status),
                NextValue(sq_head, cqe_sqhd),
                NextValue(head, head_next),
                If(head_next == 0, NextValue(phase, ~phase)),
                NextState("EMIT")
            ).Elif(timed_out & ~e.error,
                NextValue(scan, 0),
                NextValue(found, 0),
                NextValue(oldest_age, 0),
                NextState("SCAN")
            )
        )
        self.comb += [
            source.id.eq(info["id"]),
            source.cid.eq(c_cid),
            source.op.eq(info["op"]),
            source.lba.eq(info["lba"]),
            source.blocks.eq(info["blocks"]),
            source.status.eq(c_status),
            source.latency.eq(e.now - info["time"]),
            source.final.eq(info["last"]),
        ]
        complete.act("EMIT",
            info_rd.adr.eq(c_cid[:cid_bits]),
            source.valid.eq(1),
            If(source.ready,
                # Clear the slot's valid bit and return its CID.
                info_rd.we.eq(1),
                info_rd.dat_w.eq(Cat(info_rd.dat_r[:info_w - 1], Constant(0, 1))),
                cpl_free.eq(1),
                cpl_cid.eq(c_cid[:cid_bits]),
                NextValue(e.completed, e.completed + 1),
                If((c_status[:11] != 0) & ~e.error,
                    NextValue(e.error, 1),
                    NextValue(e.err_status, c_status),
                    NextValue(e.err_lba, info["lba"]),
                    NextValue(e.err_op, info["op"]),
                    NextValue(e.err_cid, c_cid),
                ),
                NextState("POLL")
            )
        )
        # Timeout: report the oldest outstanding command (scan of the slot table).
        complete.act("SCAN",
            info_rd.adr.eq(scan[:cid_bits]),
            NextValue(scan, scan + 1),
            NextState("SCAN-CHECK")
        )
        scan_r = Signal(cid_bits + 1)
        self.sync += If(complete.ongoing("SCAN"), scan_r.eq(scan))
        complete.act("SCAN-CHECK",
            info_rd.adr.eq(scan_r[:cid_bits]),
            If(info["valid"] & ((e.now - info["time"]) >= oldest_age),
                NextValue(oldest_age, e.now - info["time"]),
                NextValue(e.err_lba, info["lba"]),
                NextValue(e.err_op, info["op"]),
                NextValue(e.err_cid, scan_r),
            ),
            If(info["valid"], NextValue(found, 1)),
            If(scan == entries,
                NextValue(e.error, 1),
                NextValue(e.err_status, STATUS_TIMEOUT),
                If(found | info["valid"],
                    NextState("TIMEOUT-CPL")
                ).Else(
                    NextState("POLL")
                )
            ).Else(
                NextState("SCAN")
            )
        )
        # The oldest command completes with the timeout status (its slot freed): the consumer of
        # the completions (the recorder, the CPU) sees the failure like any other.
        complete.act("TIMEOUT-CPL",
            info_rd.adr.eq(e.err_cid[:cid_bits]),
            NextValue(c_cid, e.err_cid),
            NextValue(c_status, STATUS_TIMEOUT),
            NextState("EMIT")
        )

        # Outstanding / watchdog.
        sub_pulse = Signal()
        self.comb += sub_pulse.eq(submit.ongoing("WRITE-SQE") & (beat == sqe_beats - 1))
        self.sync += [
            e.outstanding.eq(e.outstanding + sub_pulse - cpl_free),
            If(cpl_free | (e.outstanding == 0),
                watchdog.eq(0)
            ).Else(
                watchdog.eq(watchdog + 1)
            ),
        ]
        self.comb += timed_out.eq((e.timeout != 0) & (watchdog >= e.timeout))

        # Initialization of the CQ memory and of the slot table (valid bits).
        self.comb += [
            cq_init.eq(initing & (init_cnt < cq_rows_n)),
            cq_init_row.eq(init_cnt),
            If(initing & (init_cnt < entries),
                info_wr.adr.eq(init_cnt),
                info_wr.dat_w.eq(0),
                info_wr.we.eq(1),
            ),
        ]

        # Doorbells (coalesced) --------------------------------------------------------------------
        sq_ring  = Signal()
        cq_ring  = Signal()
        since_sq = Signal(qbits)
        self.comb += [
            # SQ tail: when the submitter pauses (nothing to submit now) or after 16 entries.
            sq_ring.eq((tail != db_tail) & submit.ongoing("IDLE") &
                (~(have & can_submit) | (since_sq >= 16))),
            # CQ head: when no further CQE is visible at the head.
            cq_ring.eq((head != db_head) & complete.ongoing("POLL") & ~new_cqe),
            doorbell.valid.eq(sq_ring | cq_ring),
            If(sq_ring,
                doorbell.adr.eq(e.sq_db),
                doorbell.dat.eq(tail),
            ).Else(
                doorbell.adr.eq(e.cq_db),
                doorbell.dat.eq(head),
            ),
        ]
        self.sync += [
            If(sub_pulse, since_sq.eq(since_sq + 1)),
            If(doorbell.valid & doorbell.ready,
                If(sq_ring,
                    db_tail.eq(tail),
                    since_sq.eq(0),
                    e.sq_doorbells.eq(e.sq_doorbells + 1),
                ).Else(
                    db_head.eq(head),
                    e.cq_doorbells.eq(e.cq_doorbells + 1),
                )
            )
        ]
