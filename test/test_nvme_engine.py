#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NVMe queue engine (Migen simulation) against a model of the controller's queue side: it rings
on the engine's doorbells, fetches the SQEs and PRP lists through the windows the way the device
does, completes commands out of order by writing CQEs into the CQ window. Checked: every SQE field
(MDTS split, PRP1/PRP2/PRP lists, Dataset Management range, Write Zeroes), doorbell coalescing, the
completions given out (request ID, CID, LBA, blocks, latency, last command), the error stop with the
failing command, the command timeout with the oldest command, and the parameter checks."""

import random

import pytest

from pinned import pinned

from migen import *

from litex.soc.interconnect import stream

from literecorder.cores.pcie.windows import CompleterWindow
from literecorder.cores.common import doorbell_layout
from literecorder.cores.nvme.common import *
from literecorder.cores.nvme.engine import NVMeQueueEngine, NVMeDoorbells

pytestmark = pytest.mark.unit

DW      = 256
ENTRIES = 16
BASE    = 0xA0000000
SQ_DB, CQ_DB = 0xC0001008, 0xC000100C

class WindowHost:
    """Stand-in of the root complex: hands out the windows and takes the doorbells."""
    def __init__(self, dw=DW):
        class PHY:
            data_width = dw
        self.phy      = PHY()
        self.windows  = {}
        self.doorbell = stream.Endpoint(doorbell_layout())

    def add_window(self, name, base, size, readable=True, writable=True, on_chip=False):
        w = CompleterWindow(name, base, size, self.phy.data_width, readable, writable, on_chip)
        self.windows[name] = w
        return w

class Harness(Module):
    def __init__(self, dw=DW):
        self.dw   = dw
        self.host = WindowHost(dw)
        self.submodules.engine = e = NVMeQueueEngine(self.host, BASE, ENTRIES)
        self.comb += e.doorbell.connect(self.host.doorbell)

def dwords(v, n):
    return [(v >> (32*i)) & 0xffffffff for i in range(n)]

class Controller:
    """Queue side of an NVMe controller: SQ/CQ of ``qsize`` entries in the engine's windows."""
    def __init__(self, h, rng, qsize, fail_cids=(), hold=False):
        self.h, self.rng, self.qsize = h, rng, qsize
        self.sq_head = self.cq_tail = 0
        self.phase   = 1
        self.sqes    = []          # Every SQE fetched, as 16 dwords.
        self.prps    = {}          # CID -> PRP list page rows read (dwords).
        self.doorbells = []
        self.fail    = set(fail_cids)
        self.hold    = hold        # Never complete (timeout test).

    def read_window(self, w, adr):
        yield w.rd_adr.eq(adr)
        yield
        yield
        return (yield w.rd_dat)

    def write_cqe(self, cid, status):
        w = self.h.host.windows["cq"]
        cqe = (self.sq_head << 64) | (cid << 96) | (self.phase << 112) | (status << 113)
        beat, k = divmod(self.cq_tail*16, self.h.dw//8)
        yield w.wr.valid.eq(1)
        yield w.wr.adr.eq(beat)
        yield w.wr.dat.eq(cqe << (8*k))
        yield w.wr.be.eq(0xffff << k)
        yield w.wr.last.eq(1)
        yield
        while not (yield w.wr.ready):
            yield
        yield w.wr.valid.eq(0)
        self.cq_tail = (self.cq_tail + 1) % self.qsize
        if self.cq_tail == 0:
            self.phase ^= 1

    @passive
    def run(self):
        db  = self.h.host.doorbell
        sqw = self.h.host.windows["sq"]
        prw = self.h.host.windows["prp"]
        todo = []
        while True:
            yield db.ready.eq(self.rng.random() < 0.7)
            yield
            if (yield db.valid) and (yield db.ready):
                adr, dat = (yield db.adr), (yield db.dat)
                self.doorbells.append((adr, dat))
                yield db.ready.eq(0)      # No doorbell is taken while the model is busy.
                if adr == SQ_DB:
                    while self.sq_head != dat:
                        nb, ndw = 64//(self.h.dw//8), self.h.dw//32
                        sqe = []
                        for b in range(nb):
                            sqe += dwords((yield from self.read_window(sqw, self.sq_head*nb + b)), ndw)
                        self.sqes.append(sqe)
                        cid = sqe[0] >> 16
                        prp2 = sqe[8]
                        if prp2 >= prw.base and prp2 < prw.base + prw.size or \
                           (sqe[0] & 0xff) == NVM_DSM:
                            page = (sqe[6] if (sqe[0] & 0xff) == NVM_DSM else prp2) - prw.base
                            rows = []
                            for b in range(128//(self.h.dw//8)):
                                rows += dwords((yield from self.read_window(prw, page//(self.h.dw//8) + b)), self.h.dw//32)
                            self.prps[cid] = rows
                        self.sq_head = (self.sq_head + 1) % self.qsize
                        todo.append(cid)
            # Complete what was fetched, newest first (out of order).
            if todo and not self.hold and self.rng.random() < 0.2:
                yield db.ready.eq(0)
                cid = todo.pop()
                yield from self.write_cqe(cid, 0x4002 if cid in self.fail else 0)   # DNR | Invalid Field.

def configure(e, qsize, qd, max_blocks, timeout=0):
    for sig, v in [(e.qsize, qsize), (e.qd, qd), (e.nsid, 3), (e.lba_shift, 9), (e.max_blocks, max_blocks),
                   (e.sq_db, SQ_DB), (e.cq_db, CQ_DB), (e.timeout, timeout), (e.enable, 1)]:
        yield sig.eq(v)
    yield
    while not (yield e.ready):
        yield

def push(e, requests):
    for op, lba, blocks, adr, rid in requests:
        yield e.sink.valid.eq(1)
        for sig, v in [(e.sink.op, op), (e.sink.lba, lba), (e.sink.blocks, blocks), (e.sink.adr, adr), (e.sink.id, rid)]:
            yield sig.eq(v)
        yield
        while not (yield e.sink.ready):
            yield
        yield e.sink.valid.eq(0)

def collect(e, out, n, rng):
    for _ in range(30000):
        if len(out) == n:
            return
        ready = rng.random() < 0.7
        yield e.source.ready.eq(ready)
        yield
        if ready and (yield e.source.valid):
            c = {}
            for k in ["id", "cid", "op", "lba", "blocks", "status", "latency", "final"]:
                c[k] = (yield getattr(e.source, k))
            out.append(c)
    raise AssertionError(f"{len(out)} of {n} completions")

def test_commands_prp_lists_and_completions():
    rng = random.Random(1)
    h   = Harness()
    e   = h.engine
    ctl = Controller(h, rng, qsize=ENTRIES, fail_cids=())
    requests = [
        (OP_WRITE, 100, 20, 0x60001000, 1),          # 8 + 8 + 4 blocks (MDTS 4 KiB): PRP1 only.
        (OP_READ,  7, 24, 0x60002100, 2),            # 3 commands of 8 blocks at an offset: PRP1 + PRP2.
        (OP_FLUSH, 0, 0, 0, 3),
        (OP_DEALLOCATE, 1000, 70000, 0, 4),          # Ranges of 65536 + 4464 blocks.
        (OP_WRITE_ZEROES, 1 << 40, 9, 0, 5),
    ]
    got = []
    def main():
        yield from configure(e, ENTRIES, ENTRIES - 1, max_blocks=8)
        yield from push(e, requests)
        while len(got) < 10:
            yield
        for _ in range(100):     # The last CQ head doorbell.
            yield
    run_simulation(h, [main(), ctl.run(), collect(e, got, 3 + 3 + 1 + 2 + 1, rng)])

    # SQEs in submission order.
    ops = [(s[0] & 0xff, s[1], s[10] | s[11] << 32, s[12], s[6], s[8]) for s in ctl.sqes]
    page = lambda a: a & ~0xfff
    want = [
        (NVM_WRITE, 3, 100, 7, 0x60001000, 0), (NVM_WRITE, 3, 108, 7, 0x60002000, 0),
        (NVM_WRITE, 3, 116, 3, 0x60003000, 0),
        (NVM_READ, 3, 7, 7, 0x60002100, page(0x60002100) + 0x1000),
        (NVM_READ, 3, 15, 7, 0x60003100, page(0x60003100) + 0x1000),
        (NVM_READ, 3, 23, 7, 0x60004100, page(0x60004100) + 0x1000),
        (NVM_FLUSH, 3, 0, 0, 0, 0),
    ]
    assert ops[:7] == want
    # Dataset Management: one range, deallocate, PRP1 = the CID's page of the PRP window.
    dsm = [s for s in ctl.sqes if s[0] & 0xff == NVM_DSM]
    assert [(s[10], s[11], s[6]) for s in dsm] == [(0, 4, BASE + NVME_PRP_OFFSET + (s[0] >> 16)*4096) for s in dsm]
    ranges = [(ctl.prps[s[0] >> 16][1], ctl.prps[s[0] >> 16][2] | ctl.prps[s[0] >> 16][3] << 32) for s in dsm]
    assert ranges == [(65536, 1000), (70000 - 65536, 1000 + 65536)]
    wz = [s for s in ctl.sqes if s[0] & 0xff == NVM_WRITE_ZEROES]
    assert [(s[10] | s[11] << 32, s[12]) for s in wz] == [(1 << 40, 8)]
    # CIDs in flight are distinct; every CQE gave one completion with its request's fields.
    assert sorted(c["cid"] for c in got) == sorted(s[0] >> 16 for s in ctl.sqes)
    by_id = {}
    for c in got:
        by_id.setdefault(c["id"], []).append(c)
    assert sorted((c["lba"], c["blocks"]) for c in by_id[1]) == [(100, 8), (108, 8), (116, 4)]
    assert sorted((c["lba"], c["blocks"]) for c in by_id[4]) == [(1000, 65536), (66536, 4464)]
    # `final` marks the completion of the request's last command (by LBA, whatever the order).
    for rid, cs in by_id.items():
        assert [c["final"] for c in sorted(cs, key=lambda c: c["lba"])][-1] == 1
        assert sum(c["final"] for c in cs) == 1
    assert all(c["status"] == 0 and 0 < c["latency"] < 5000 for c in got)
    # The latencies (cycles from submission to completion) of the seeded controller model, exactly:
    # a stage added or a wait lost in the engine moves them.
    lat = [c["latency"] for c in sorted(got, key=lambda c: (c["id"], c["lba"]))]
    pinned("unit.nvme_engine.completions.latency_sum", sum(lat), rel=0)
    pinned("unit.nvme_engine.completions.latency_max", max(lat), rel=0)
    pinned("unit.nvme_engine.completions.latency_first", lat[0], rel=0)
    # Doorbells: the SQ tail after each burst of submissions, the CQ head after the CQEs seen.
    sq = [d for a, d in ctl.doorbells if a == SQ_DB]
    cq = [d for a, d in ctl.doorbells if a == CQ_DB]
    assert sq[-1] == len(ctl.sqes) % ENTRIES and sq == sorted(sq)
    assert cq[-1] == len(got) % ENTRIES and len(cq) <= len(got)

@pytest.mark.parametrize("dw", [128, 256, 512])
def test_prp_list_entries(dw):
    """A read of 24 blocks over 4 pages from an offset (SQE and PRP list rows at each datapath
    width): PRP2 is the CID's list page, whose entries are the buffer's pages 2..4."""
    rng = random.Random(2)
    h   = Harness(dw)
    e   = h.engine
    ctl = Controller(h, rng, qsize=ENTRIES)
    got = []
    def main():
        yield from configure(e, ENTRIES, ENTRIES - 1, max_blocks=64)
        yield from push(e, [(OP_READ, 5, 24, 0x60010e00, 9)])
    run_simulation(h, [main(), ctl.run(), collect(e, got, 1, rng)])
    s = ctl.sqes[0]
    cid = s[0] >> 16
    assert (s[6], s[8]) == (0x60010e00, BASE + NVME_PRP_OFFSET + cid*4096)
    entries = [ctl.prps[cid][2*i] | ctl.prps[cid][2*i + 1] << 32 for i in range(3)]
    assert entries == [0x60011000, 0x60012000, 0x60013000]
    assert (got[0]["id"], got[0]["blocks"], got[0]["final"]) == (9, 24, 1)

def test_error_stops_submission():
    rng = random.Random(3)
    h   = Harness()
    e   = h.engine
    ctl = Controller(h, rng, qsize=ENTRIES, fail_cids={2})
    got, state = [], {}
    def main():
        yield from configure(e, ENTRIES, ENTRIES - 1, max_blocks=8)
        yield from push(e, [(OP_WRITE, 64*i, 8, 0x60000000, i) for i in range(3)])
        while not ((yield e.error) and (yield e.outstanding) == 0):
            yield
        # A request while stopped is taken but not submitted.
        yield from push(e, [(OP_READ, 4096, 16, 0x60000000, 7)])
        for _ in range(50):
            yield
        for k in ["error", "err_status", "err_lba", "err_op", "err_cid", "submitted", "completed", "outstanding"]:
            state[k] = (yield getattr(e, k))
        # Resumed: they are.
        yield e.clear_error.eq(1)
        yield
        yield e.clear_error.eq(0)
        yield from push(e, [(OP_READ, 8192, 8, 0x60000000, 8)])
        for _ in range(20):
            yield
        state["after"] = (yield e.submitted)
    run_simulation(h, [main(), ctl.run(), collect(e, got, 6, rng)])
    failed = [c for c in got if c["status"]]
    assert len(failed) == 1 and failed[0]["cid"] == 2 and failed[0]["status"] == 0x4002
    assert (state["error"], state["err_status"], state["err_cid"], state["err_op"], state["err_lba"]) == \
        (1, 0x4002, 2, OP_WRITE, 128)
    assert (state["submitted"], state["completed"], state["outstanding"]) == (3, 3, 0)
    assert state["after"] == 6
    assert sorted(c["id"] for c in got) == [0, 1, 2, 7, 7, 8]

def test_timeout_reports_and_completes_the_oldest_command():
    """No CQE for `timeout` cycles: the engine stops with the timeout status, reports the oldest
    command and completes it (its consumer, the recorder or the CPU, sees the failure; its slot is
    freed); the younger command stays outstanding."""
    rng = random.Random(4)
    h   = Harness()
    e   = h.engine
    ctl = Controller(h, rng, qsize=ENTRIES, hold=True)
    state = {}
    got = []
    def main():
        yield from configure(e, ENTRIES, ENTRIES - 1, max_blocks=8, timeout=150)
        yield from push(e, [(OP_WRITE, 1234, 8, 0x60000000, 1)])
        for _ in range(30):
            yield
        yield from push(e, [(OP_READ, 99, 8, 0x60000000, 2)])
        for _ in range(150 + 2*ENTRIES + 40):
            yield
        for k in ["error", "err_status", "err_lba", "err_op", "outstanding", "completed"]:
            state[k] = (yield getattr(e, k))
    run_simulation(h, [main(), ctl.run(), collect(e, got, 1, rng)])
    assert state == {"error": 1, "err_status": NVME_STATUS_TIMEOUT, "err_lba": 1234, "err_op": OP_WRITE,
        "outstanding": 1, "completed": 1}
    assert [(c["id"], c["op"], c["lba"], c["blocks"], c["status"]) for c in got] == \
        [(1, OP_WRITE, 1234, 8, NVME_STATUS_TIMEOUT)]

def test_engine_checks_its_parameters():
    with pytest.raises(ValueError, match="entries=12: a power of two between 4 and 4096"):
        NVMeQueueEngine(WindowHost(), BASE, entries=12)
    with pytest.raises(ValueError, match="must be aligned on 0x1000000"):
        NVMeQueueEngine(WindowHost(), BASE + 0x1000, entries=16)

def test_sq_doorbell_held_while_the_drive_is_busy():
    """The SQ tail doorbell alone (NVMeDoorbells): each submission followed by a pause rings it while
    the drive holds fewer than NVME_SQ_DOORBELL_HOLD_MIN announced commands; with that many or more,
    only every NVME_SQ_DOORBELL_HOLD entries, or once the oldest waited NVME_SQ_DOORBELL_HOLD_CYCLES;
    entries held when the commands complete are rung then (nothing stays unannounced)."""
    dbs = NVMeDoorbells(qbits=6)
    N   = 2*NVME_SQ_DOORBELL_HOLD_MIN + 2   # Submissions; the last 2 are held (then one more).
    rung = []       # (cycle, tail) of each SQ doorbell.
    now, marks, submitted_at = [0], [], []
    def run():
        yield dbs.sq_db.eq(SQ_DB)
        yield dbs.cq_db.eq(CQ_DB)
        yield dbs.source.ready.eq(1)
        tail = outstanding = 0
        def submit():
            nonlocal tail, outstanding
            yield dbs.pending.eq(1)
            yield dbs.submitted.eq(1)
            yield
            tail, outstanding = tail + 1, outstanding + 1
            yield dbs.tail.eq(tail)
            yield dbs.outstanding.eq(outstanding)
            yield dbs.pending.eq(0)
            yield dbs.submitted.eq(0)
            for _ in range(6):      # A pause.
                yield
        for _ in range(N):
            yield from submit()
        # One more entry while the drive stays busy: announced after NVME_SQ_DOORBELL_HOLD_CYCLES.
        marks.append(len(rung))
        yield from submit()
        submitted_at.append(now[0])
        for _ in range(NVME_SQ_DOORBELL_HOLD_CYCLES + 8):
            yield
        marks.append(len(rung))
        yield from submit()
        # The drive completes everything: the held entries are announced.
        outstanding = 0
        yield dbs.outstanding.eq(0)
        for _ in range(8):
            yield
    @passive
    def watch():
        cycle = 0
        while True:
            if (yield dbs.source.valid) and (yield dbs.source.adr) == SQ_DB:
                rung.append((cycle, (yield dbs.source.dat)))
            cycle += 1
            now[0] = cycle
            yield
    run_simulation(dbs, [run(), watch()])
    tails = [t for _, t in rung]
    # One doorbell per submission up to HOLD_MIN announced, then one per HOLD entries, then the rest.
    first = list(range(1, NVME_SQ_DOORBELL_HOLD_MIN + 1))
    held  = list(range(NVME_SQ_DOORBELL_HOLD_MIN + NVME_SQ_DOORBELL_HOLD, N + 1, NVME_SQ_DOORBELL_HOLD))
    want  = first + held
    # The 2 entries left of N and the one after them: rung by the wait limit; the last one at the end.
    want += [N + 1, N + 2]
    assert tails == want, f"SQ doorbells at tails {tails}, expected {want}"
    cycle, tail = rung[marks[0]]
    assert tail == N + 1 and 0 <= cycle - submitted_at[0] <= NVME_SQ_DOORBELL_HOLD_CYCLES, (cycle, submitted_at)
    assert marks[1] == marks[0] + 1    # Nothing else rung while waiting.
