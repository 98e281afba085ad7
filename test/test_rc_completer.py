#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Protected completer (Migen simulation): device writes at any alignment with byte enables, reads
split at MPS with exact Byte Count / Lower Address, several windows with different latencies,
refusal of everything outside the windows (UR for reads, writes dropped and counted), poisoned,
malformed and oversized writes dropped without touching memory."""

import random

import pytest

from migen import *

from litex.soc.interconnect import stream

from litepcie.common import phy_layout

from literecorder.cores.pcie.core import RCRootComplex
from literecorder.cores.pcie.windows import SRAMWindow

from tlpmodel import TLP, to_beats, parse_header, random_payload

pytestmark = pytest.mark.unit

DW, NDW = 256, 8
SRAM_BASE, SRAM_SIZE = 0x90000000, 0x10000
MDL_BASE,  MDL_SIZE  = 0x60000000, 0x10000
RO_BASE,   RO_SIZE   = 0x70000000, 0x1000
ROC_BASE,  ROC_SIZE  = 0xA0000000, 0x2000    # On-chip, read-only (like a submission queue).

class PHYStub:
    endianness = "little"
    def __init__(self, dw=DW):
        self.data_width   = dw
        self.root_mps_cap = 512
        self.max_payload_size = 512
        self.sink         = stream.Endpoint(phy_layout(dw))    # Root complex -> device.
        self.source       = stream.Endpoint(phy_layout(dw))    # Device -> root complex.
        self.link_up, self.link_gen, self.link_width = Signal(), Signal(3), Signal(4)
        self.ltssm, self.perst = Signal(6), Signal()

class Harness(Module):
    def __init__(self, buffer_beats=32, dw=DW):
        self.dw, self.ndw = dw, dw//32
        self.phy = phy = PHYStub(dw)
        self.phy_tx, self.phy_rx = phy.sink, phy.source
        self.submodules.rc = rc = RCRootComplex(phy, buffer_beats=buffer_beats)
        self.sram_w = rc.add_window("sram", SRAM_BASE, SRAM_SIZE, on_chip=True)
        self.submodules.sram = SRAMWindow(self.sram_w)
        self.mdl = rc.add_window("mdl", MDL_BASE, MDL_SIZE)
        self.ro  = rc.add_window("ro", RO_BASE, RO_SIZE, writable=False)
        self.roc = rc.add_window("roc", ROC_BASE, ROC_SIZE, writable=False, on_chip=True)
        self.cpl = rc.completer

class Memory:
    """Reference memory of the device-visible windows."""
    def __init__(self, rng):
        self.data = {}
        for base, size in [(SRAM_BASE, SRAM_SIZE), (MDL_BASE, MDL_SIZE), (RO_BASE, RO_SIZE), (ROC_BASE, ROC_SIZE)]:
            self.data[base] = bytearray(rng.getrandbits(8) for _ in range(size)) if base != SRAM_BASE else bytearray(size)

    def window(self, adr):
        for base, buf in self.data.items():
            if base <= adr < base + len(buf):
                return base, buf
        return None, None

def model_window(w, mem, rng, latency=(5, 30)):
    """Python model of a window memory with a random read latency (LiteDRAM-like)."""
    buf = mem.data[w.base]
    bb = w.data_width//8
    queue = []
    @passive
    def gen():
        cycle = 0
        out = []
        while True:
            # Handshakes of the current cycle (they happen at the coming clock edge).
            if (yield w.rd_cmd.valid) and (yield w.rd_cmd.ready):
                adr, n = (yield w.rd_cmd.adr), (yield w.rd_cmd.beats)
                queue.append((cycle + rng.randint(*latency), adr, n))
            if (yield w.wr.valid) and (yield w.wr.ready):
                adr, dat, be = (yield w.wr.adr), (yield w.wr.dat), (yield w.wr.be)
                for b in range(bb):
                    if be >> b & 1:
                        buf[adr*bb + b] = (dat >> (8*b)) & 0xff
            if (yield w.rd_data.valid) and (yield w.rd_data.ready):
                out.pop(0)
            while queue and queue[0][0] <= cycle:
                _, adr, n = queue.pop(0)
                for k in range(n):
                    out.append(int.from_bytes(buf[(adr + k)*bb:(adr + k + 1)*bb], "little"))
            # Outputs of the next cycle.
            yield w.rd_cmd.ready.eq(len(queue) < 4)
            yield w.wr.ready.eq(rng.random() < 0.8)
            yield w.rd_data.valid.eq(len(out) > 0)
            if out:
                yield w.rd_data.dat.eq(out[0])
            yield
            cycle += 1
    return gen()

def model_on_chip(w, mem):
    """Python model of a synchronous-read memory behind an on-chip window (rd_dat one cycle after
    rd_adr)."""
    buf = mem.data[w.base]
    bb = w.data_width//8
    @passive
    def gen():
        while True:
            adr = (yield w.rd_adr)
            yield w.rd_dat.eq(int.from_bytes(buf[adr*bb:(adr + 1)*bb], "little"))
            yield
    return gen()

def payload_bytes(dws):
    return b"".join(d.to_bytes(4, "little") for d in dws)

def send_tlps(h, tlps, rng, gaps=0.2, done=None):
    for t in tlps:
        if isinstance(t, tuple):           # (tlp, beats override)
            t, beats = t
        else:
            beats = to_beats(t.dwords(), h.ndw)
        for i, (d, e) in enumerate(beats):
            while rng.random() < gaps:
                yield
            yield h.phy_rx.valid.eq(1)
            yield h.phy_rx.first.eq(i == 0)
            yield h.phy_rx.last.eq(i == len(beats) - 1)
            yield h.phy_rx.dat.eq(d)
            yield h.phy_rx.be.eq(e)
            yield
            while not (yield h.phy_rx.ready):
                yield
            yield h.phy_rx.valid.eq(0)
    if done is not None:
        done.append(True)

COUNTERS = ["rd_refused", "wr_refused", "poisoned", "malformed", "refused_adr", "rd_served", "wr_bytes"]

def collect_tlps(h, rng, out, stop, max_cycles=60000, idle_end=600):
    """PHY side of the device: TLPs sent by the root complex, with back-pressure; ends ``idle_end``
    cycles after the last one (once the sender is done) and then reads the completer's counters
    into ``h.counts``."""
    cur = []
    idle = 0
    cycles = 0
    while idle < idle_end or not stop:
        cycles += 1
        assert cycles < max_cycles, f"no progress: {len(out)} TLPs received, sender done: {bool(stop)}"
        ready = rng.random() < 0.75
        yield h.phy_tx.ready.eq(ready)
        yield
        if ready and (yield h.phy_tx.valid):
            idle = 0
            dat, be = (yield h.phy_tx.dat), (yield h.phy_tx.be)
            for j in range(h.ndw):
                if be >> (4*j) & 0xf:
                    cur.append((dat >> (32*j)) & 0xffffffff)
            if (yield h.phy_tx.last):
                out.append(cur)
                cur = []
        else:
            idle += 1
    h.counts = {}
    for name in COUNTERS:
        h.counts[name] = (yield getattr(h.cpl, name))

def decode_completion(dws):
    hdr = parse_header(dws[:3])
    return hdr, dws[3:]

def run(h, rng, tlps, mem, mps_log2=8, enable=1, cycles_guard=200000):
    out, done = [], []
    def ctrl():
        yield h.cpl.enable.eq(enable)
        yield h.cpl.mps_log2.eq(mps_log2)
        yield
    run_simulation(h, [ctrl(), send_tlps(h, tlps, rng, done=done), collect_tlps(h, rng, out, done),
        model_window(h.mdl, mem, rng), model_window(h.ro, mem, rng, latency=(1, 3)),
        model_on_chip(h.roc, mem)])
    return out

def check_read_completions(tlp, cpls, mem, mps):
    """The completions of one read: split at MPS-aligned addresses, exact fields and data."""
    adr, n = tlp.f["adr"], tlp.length
    _, buf = mem.window(adr)
    base, _ = mem.window(adr)
    expected = buf[adr - base: adr - base + 4*n]
    first_be, last_be = tlp.f["first_be"], tlp.f["last_be"]
    lead = (first_be & -first_be).bit_length() - 1 if first_be else 0
    if n == 1:
        total = (first_be.bit_length() - lead) if first_be else 1
    else:
        trail = 4 - last_be.bit_length()
        total = 4*n - lead - trail
    got = b""
    remaining = total
    cur = adr
    for i, (hdr, data) in enumerate(cpls):
        assert hdr["fmt_type"] == 0x4a and hdr["status"] == 0
        assert hdr["tag"] == tlp.f["tag"] and hdr["req_id"] == tlp.f["req_id"]
        assert hdr["cmp_id"] == 0x0000
        assert hdr["byte_count"] == remaining & 0xfff
        to_boundary = (mps - (cur % mps)) // 4
        assert hdr["length"] == min(to_boundary, (adr + 4*n - cur) // 4)
        assert len(data) == hdr["length"]
        if i == 0:
            assert hdr["lower_adr"] == (cur & 0x7c) | lead
            remaining -= 4*hdr["length"] - lead
        else:
            assert hdr["lower_adr"] == cur & 0x7f
            assert cur % mps == 0
            remaining -= 4*hdr["length"]
        got += payload_bytes(data)
        cur += 4*hdr["length"]
    assert cur == adr + 4*n
    assert got == bytes(expected)

def _rand_be(rng):
    return rng.choice([0xf, 0xe, 0xc, 0x8]), rng.choice([0xf, 0x7, 0x3, 0x1])

@pytest.mark.parametrize("seed, mps_log2, dw", [(1, 8, 256), (2, 7, 256), (3, 9, 256), (4, 8, 128)])
def test_writes_then_reads_any_alignment(seed, mps_log2, dw):
    """Writes at random alignments/byte enables (disjoint regions), each followed at once by a read
    of the same region (a read never passes an earlier write), then random reads (up to 512 B)."""
    rng = random.Random(seed)
    mem = Memory(rng)
    ref = Memory(random.Random(seed))   # Same initial contents, updated by the reference model.
    mps = 1 << mps_log2
    tlps, reads = [], []
    next_free = {SRAM_BASE: SRAM_BASE, MDL_BASE: MDL_BASE}
    def read(adr, n, fbe, lbe):
        t = TLP("mrd32", n, adr=adr, first_be=fbe, last_be=lbe, tag=len(reads), req_id=0x100)
        tlps.append(t)
        reads.append(t)
    for i in range(12):
        base = rng.choice([SRAM_BASE, MDL_BASE])
        n = rng.randint(1, mps//4)
        adr = next_free[base] + 4*rng.randint(0, 40)
        next_free[base] = adr + 4*n
        fbe, lbe = _rand_be(rng)
        if n == 1:
            fbe, lbe = rng.randint(0, 15), 0
        payload = random_payload(rng, n)
        tlps.append(TLP("mwr32", n, payload, adr=adr, first_be=fbe, last_be=lbe, req_id=0x100))
        _, buf = ref.window(adr)
        data = payload_bytes(payload)
        for k in range(4*n):
            dwi, bi = divmod(k, 4)
            be = fbe if dwi == 0 else (lbe if dwi == n - 1 else 0xf)
            if be >> bi & 1:
                buf[adr - base + k] = data[k]
        read(adr, n, 0xf, 0xf if n > 1 else 0)
    for i in range(10):
        base, size = rng.choice([(SRAM_BASE, SRAM_SIZE), (MDL_BASE, MDL_SIZE), (ROC_BASE, ROC_SIZE), (RO_BASE, RO_SIZE)])
        rn  = rng.randint(1, 128)
        radr = base + 4*rng.randrange(0, min(size, 0x1400)//4 - rn)
        rfbe, rlbe = _rand_be(rng)
        if rn == 1:
            rfbe, rlbe = rng.choice([0xf, 0x1, 0x6, 0x0]), 0
        read(radr, rn, rfbe, rlbe)
    h = Harness(dw=dw)
    out = run(h, rng, tlps, mem, mps_log2=mps_log2)
    by_tag = {}
    for dws in out:
        hdr, data = decode_completion(dws)
        by_tag.setdefault(hdr["tag"], []).append((hdr, data))
    assert sorted(by_tag) == list(range(len(reads)))
    for t in reads:
        check_read_completions(t, by_tag[t.f["tag"]], ref, mps)
    assert mem.data[MDL_BASE] == ref.data[MDL_BASE]

def test_refusals_are_counted_and_harmless():
    rng = random.Random(11)
    mem = Memory(rng)
    before = {k: bytes(v) for k, v in mem.data.items()}
    payload = random_payload(rng, 8)
    tlps = [
        TLP("mrd32", 4, adr=0x10000000, tag=1, req_id=0x100),                 # No window: UR.
        TLP("mrd32", 8, adr=MDL_BASE + MDL_SIZE - 16, tag=2, req_id=0x100),   # Crosses the end: UR.
        TLP("mwr32", 8, payload, adr=0x10000000),                             # No window: dropped.
        TLP("mwr32", 8, payload, adr=RO_BASE + 0x100),                        # Read-only window.
        TLP("mwr32", 8, payload, adr=MDL_BASE + 0x200, ep=1),                 # Poisoned.
        TLP("mwr64", 8, payload, adr=(1 << 32) | 0x1000),                     # Above 4 GiB.
        (TLP("mwr32", 20, random_payload(rng, 20), adr=MDL_BASE + 0x400),     # Truncated TLP.
            to_beats(TLP("mwr32", 20, random_payload(rng, 20), adr=MDL_BASE + 0x400).dwords(), NDW)[:2]),
        TLP("mwr32", 4, payload[:4], adr=SRAM_BASE + 0x20),                   # Accepted: 16 bytes.
        TLP("mwr32", 128, random_payload(rng, 128), adr=MDL_BASE + 0x800),    # > MPS (256 B).
        TLP("mrd32", 2, adr=RO_BASE + 0x10, tag=3, req_id=0x100, last_be=0xf),  # Allowed read.
        TLP("mrd32", 4, adr=SRAM_BASE + 0x20, tag=4, req_id=0x100),           # The accepted write.
    ]
    h = Harness()
    out = run(h, rng, tlps, mem)
    assert len(out) == 4
    ur1, ur2, ok, sram = sorted([decode_completion(d) for d in out], key=lambda c: c[0]["tag"])
    for (hdr, data), tag, bc in [(ur1, 1, 16), (ur2, 2, 32)]:
        assert hdr["fmt_type"] == 0x0a and hdr["status"] == 1 and hdr["tag"] == tag
        assert hdr["byte_count"] == bc and data == []
    assert ok[0]["status"] == 0 and payload_bytes(ok[1]) == before[RO_BASE][0x10:0x18]
    assert payload_bytes(sram[1]) == payload_bytes(payload[:4])
    assert {k: bytes(v) for k, v in mem.data.items()} == before

    assert h.counts == {"rd_refused": 2, "wr_refused": 3, "poisoned": 1, "malformed": 2,
        "refused_adr": MDL_BASE + 0x800, "rd_served": 2, "wr_bytes": 16}

def test_disabled_completer_refuses_everything():
    rng = random.Random(12)
    mem = Memory(rng)
    before = bytes(mem.data[MDL_BASE])
    tlps = [TLP("mwr32", 4, random_payload(rng, 4), adr=MDL_BASE),
            TLP("mrd32", 4, adr=MDL_BASE, tag=7, req_id=0x100)]
    out = run(Harness(), rng, tlps, mem, enable=0)
    assert len(out) == 1
    hdr, data = decode_completion(out[0])
    assert hdr["status"] == 1 and hdr["tag"] == 7
    assert bytes(mem.data[MDL_BASE]) == before

def test_cqe_at_every_offset_of_a_beat():
    """A 16-byte completion-queue entry written at each 16-byte offset lands exactly there."""
    rng = random.Random(13)
    mem = Memory(rng)
    ref = bytearray(mem.data[MDL_BASE])
    tlps = []
    for k in range(16):
        cqe = random_payload(rng, 4)
        adr = MDL_BASE + 0x100 + 16*k
        tlps.append(TLP("mwr32", 4, cqe, adr=adr))
        ref[0x100 + 16*k: 0x100 + 16*k + 16] = payload_bytes(cqe)
    run(Harness(), rng, tlps, mem)
    assert mem.data[MDL_BASE] == ref

def test_a_write_waits_until_the_other_windows_writes_are_in_memory():
    """PCIe orders posted writes: an NVMe read's data queued for LiteDRAM must be in memory before its
    completion entry lands in the on-chip CQ. The off-chip window here accepts write beats at once and
    applies them 30-60 cycles later (its `drained` is low meanwhile); each write to the on-chip window
    must start only after every earlier write to the off-chip window was applied."""
    rng = random.Random(21)
    mem = Memory(rng)
    h   = Harness()
    tlps, order = [], []
    for i in range(6):
        n = rng.randint(8, 64)
        tlps.append(TLP("mwr32", n, random_payload(rng, n), adr=MDL_BASE + 0x400*i))
        tlps.append(TLP("mwr32", 4, random_payload(rng, 4), adr=SRAM_BASE + 0x10*i))
        order += ["mdl", "sram"]
    applied, sram_first = [], []
    @passive
    def slow_window():
        w, bb, buf = h.mdl, DW//8, mem.data[MDL_BASE]
        pending, cycle, beats_seen = [], 0, 0
        while True:
            if (yield w.wr.valid) and (yield w.wr.ready):
                adr, dat, be, last = (yield w.wr.adr), (yield w.wr.dat), (yield w.wr.be), (yield w.wr.last)
                pending.append((cycle + rng.randint(30, 60), adr, dat, be, last))
            while pending and pending[0][0] <= cycle:
                _, adr, dat, be, last = pending.pop(0)
                for b in range(bb):
                    if be >> b & 1:
                        buf[adr*bb + b] = (dat >> (8*b)) & 0xff
                if last:
                    applied.append(cycle)
            yield w.wr.ready.eq(1)
            yield w.drained.eq(len(pending) == 0)
            yield
            cycle += 1
    @passive
    def sram_monitor():
        cycle, in_tlp = 0, False
        while True:
            if (yield h.sram_w.wr.valid) and (yield h.sram_w.wr.ready):
                if not in_tlp:
                    sram_first.append(cycle)
                in_tlp = not (yield h.sram_w.wr.last)
            yield
            cycle += 1
    out, done = [], []
    def ctrl():
        yield h.cpl.enable.eq(1)
        yield h.cpl.mps_log2.eq(8)
        yield
    run_simulation(h, [ctrl(), send_tlps(h, tlps, rng, gaps=0, done=done), collect_tlps(h, rng, out, done),
        slow_window(), sram_monitor()])
    assert len(applied) == 6 and len(sram_first) == 6
    for i in range(6):
        assert sram_first[i] > applied[i], f"write {i} to the on-chip window at cycle {sram_first[i]} " \
            f"before the off-chip write was in memory (cycle {applied[i]})"
    assert h.counts["wr_bytes"] == sum(4*t.length for t in tlps)
