#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The ring's two tiers in Migen's simulator (``cores/recorder/ring.py``): on-chip slot allocation
(seeded random releases), and a RecorderCore with staging banks and a DRAM ring behind NVMe ports
that complete in a random order (``tiered_harness.py``): every chunk at its LBA, spill to DRAM and
back, the drop policy with both tiers full, a ring with trigger across a spill, replay through
on-chip slots only, 1 and 2 ports."""

import random

import pytest

from migen import *

from literecorder.cores.recorder.common import *
from literecorder.cores.recorder.ring import OnChipSlots

from tiered_harness import TieredHarness, nvme_model, dram_model, CHUNK_WORDS

pytestmark = pytest.mark.unit

# On-chip slots -------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_onchip_slots_take_the_lowest_free_slot_and_free_in_any_order(seed):
    """Random allocations on random banks, releases of random taken slots (both release ports, in
    any order): ``free``/``slot`` are the lowest free slot of the bank asked, ``used`` counts."""
    rng = random.Random(seed)
    n_ports, per_port, count = 3, 5, 4          # 4 of the 5 slots of each bank used.
    dut = OnChipSlots(n_ports, per_port)
    busy = set()
    checked = {"allocs": 0, "releases": 0, "full": 0}
    def gen():
        yield dut.count.eq(count)
        yield dut.restart.eq(1)
        yield
        yield dut.restart.eq(0)
        yield
        for _ in range(400):
            # Inputs of this cycle: a bank, an allocation if the model has a free slot there, up
            # to two releases of taken slots.
            port = rng.randrange(n_ports)
            free = [s for s in range(count) if (port, s) not in busy]
            alloc = bool(free) and rng.random() < 0.6
            yield dut.port.eq(port)
            yield dut.alloc.eq(alloc)
            gone = []
            for r, rid in zip(dut.release, dut.release_id):
                left = sorted(busy - set(gone))
                rel = bool(left) and rng.random() < 0.35
                yield r.eq(rel)
                if rel:
                    g = rng.choice(left)
                    gone.append(g)
                    yield rid.eq((g[0] << dut.sbits) | g[1])
            yield
            # The bank asked: its lowest free slot (state before this cycle's edge).
            assert (yield dut.free) == (len(free) > 0)
            if free:
                assert (yield dut.slot) == (port << dut.sbits) | free[0]
            else:
                checked["full"] += 1
            assert (yield dut.used) == len(busy)
            for g in gone:
                busy.discard(g)
            checked["releases"] += len(gone)
            if alloc:
                busy.add((port, free[0]))
                checked["allocs"] += 1
        yield dut.alloc.eq(0)
        for r in dut.release:
            yield r.eq(0)
        yield
        yield
        assert (yield dut.used) == len(busy)
    run_simulation(dut, gen())
    assert checked["allocs"] > 100 and checked["releases"] > 100 and checked["full"] > 0, checked

def test_onchip_slots_size_is_checked():
    with pytest.raises(ValueError, match="1 to 16 slots per bank are allowed"):
        OnChipSlots(2, 17)
    with pytest.raises(ValueError, match="1 to 8 banks are allowed"):
        OnChipSlots(9, 4)

# Recording through both tiers ----------------------------------------------------------------------

def _record(n_ports=1, onchip=2, dram_slots=4, words=80, seed=1, spill=1, strict=False, stall=None,
    p_complete=0.2, mode=MODE_UNTIL_STOP, last_lba=63, trigger_at=None, post_bytes=0, cycles=20000):
    """Records from a source offering one 4-byte word per cycle (``strict``: a word not taken is
    lost and counted in the next one's gap), ``words`` words, then stop (or a ring's trigger after
    ``trigger_at`` words). Returns the core's figures, the disk, the NVMe log, the words kept."""
    h = TieredHarness(n_ports=n_ports, onchip=onchip, dram_slots=dram_slots)
    h.dram = {}
    rec, src = h.rec, h.rec.inputs[0]
    disk, log, kept, got = {}, [], [], {}
    snaps, commits = [], []
    def gen():
        yield rec.direction.eq(DIR_RECORD)
        yield rec.mode.eq(mode)
        yield rec.last_lba.eq(last_lba)
        yield rec.spill.eq(spill)
        yield rec.post_bytes.eq(post_bytes)
        yield rec.start.eq(1)
        yield
        yield rec.start.eq(0)
        while not (yield rec.running):
            yield
        v, gap, offered = 1, 0, 0
        yield src.valid.eq(1)
        yield src.bytes.eq(4)
        yield src.data.eq(v)
        yield src.gap.eq(0)
        for c in range(cycles):
            yield
            taken = (yield src.ready)
            if (yield src.valid) and (taken or strict):
                if taken:
                    kept.append(v)
                    gap = 0
                else:
                    gap += 4
                offered += 1
                v += 1
                yield src.data.eq(v)
                yield src.gap.eq(gap)
                if trigger_at is not None and offered == trigger_at:
                    yield rec.trigger.eq(1)
                else:
                    yield rec.trigger.eq(0)
                if offered == words:
                    yield src.valid.eq(0)
                    if mode != MODE_RING:
                        yield rec.stop.eq(1)
            elif not (yield src.valid):
                yield rec.stop.eq(0)
            # The balance at every cycle (a one-cycle snapshot of the live counters).
            a = rec.acct
            bi, kp, dr = (yield a.bytes_in), (yield a.kept), (yield a.dropped)
            assert bi == kp + dr, (c, bi, kp, dr)
            snaps.append(((yield rec.level_onchip), (yield rec.level_dram)))
            commits.append(((yield rec.ring.committed), (yield rec.released), len(log)))
            if (yield rec.done):
                break
        got["cycles"] = c
        for n in ("released", "status", "bytes_spilled", "peak_onchip", "peak_dram", "done", "trigger_pos"):
            got[n] = yield getattr(rec, n)
        for n in ("bytes_in", "kept", "dropped", "drops", "peak"):
            got[n] = yield getattr(rec.acct, n)
        for n in ("requested", "completed", "idle"):
            got["striper_" + n] = yield getattr(rec.striper, n)
        for n in ("filled", "filling", "idle", "padding"):
            got["writer_" + n] = yield getattr(rec.ring.writer, n)
    gens = [gen()] + [nvme_model(h, p, seed*10 + p, disk, log, p_complete=p_complete, stall=stall)
        for p in range(n_ports)] + dram_model(h, h.dram)
    run_simulation(h, gens)
    got["snaps"] = snaps
    got["commits"] = commits
    got["lead_chunks"] = h.rec.ring.lead_chunks
    return got, disk, log, kept

def _check_committed(got, log, n_ports):
    """The committed count never passes a chunk whose write has not completed (the completions
    logged so far, chunk = row x ports + port) and ends at every chunk. Returns how often it was
    below the count of released slots (chunks written out of order)."""
    done, prefix, seen, behind, committed, lead = set(), 0, 0, 0, 0, 0
    for c_now, released, n_log in got["commits"]:
        for l in log[seen:n_log]:
            k = l[3]*n_ports + l[2]
            if l[0] == "cpl":
                done.add(k)
            else:
                # A write goes out within the ring's window of the first chunk not yet written.
                lead = max(lead, k - committed)
                assert k - committed < got["lead_chunks"], (k, committed)
        seen, committed = n_log, c_now
        while prefix in done:
            prefix += 1
        assert committed <= prefix, (committed, prefix)
        behind += committed < released
    assert got["commits"][-1][0] == got["released"]
    got["lead"] = lead
    return behind

def _expected_chunks(kept, n_chunks):
    data = kept + [0]*(n_chunks*CHUNK_WORDS - len(kept))
    return [data[CHUNK_WORDS*k:CHUNK_WORDS*(k + 1)] for k in range(n_chunks)]

@pytest.mark.parametrize("n_ports,seed", [(1, 1), (1, 2), (2, 3), (2, 4)])
def test_a_slow_drive_spills_to_dram_and_every_chunk_lands_at_its_lba(n_ports, seed):
    """A drive slower than the input (completions in a random order): chunks go on-chip while a
    slot is free, to DRAM otherwise; every chunk is at its port and LBA, bytes_spilled counts the
    DRAM chunks' bytes exactly, the peaks stay within each tier."""
    got, disk, log, kept = _record(n_ports=n_ports, seed=seed, words=120, p_complete=0.15)
    n = len(kept)//CHUNK_WORDS
    assert got["done"] == 1 and got["status"] == STATUS_STOPPED and len(kept) == 120, got
    assert got["released"] == n == 30
    for k, words in enumerate(_expected_chunks(kept, n)):
        assert disk[(k % n_ports, k//n_ports)] == words, k
    reqs = [l for l in log if l[0] == "req"]
    dram = sum(1 for l in reqs if l[4] == "dram")
    assert 0 < dram < n and got["bytes_spilled"] == 16*dram, (dram, got["bytes_spilled"])
    assert got["peak_onchip"] == 2*n_ports and 0 < got["peak_dram"] <= 4, got
    # Out of order across the tiers: some completion overtook an older one of the other tier.
    cpls = [(l[2], l[3]) for l in log if l[0] == "cpl"]
    order = [lba*n_ports + p for p, lba in cpls]
    assert order != sorted(order)
    assert got["bytes_in"] == got["kept"] == 4*120 and got["dropped"] == 0
    # On-chip chunks are written ahead of older DRAM chunks; the committed count stays at the
    # first chunk not yet written.
    reqs = [(l[3]*n_ports + l[2], l[4]) for l in log if l[0] == "req"]
    ahead = [(k, j) for i, (k, kind) in enumerate(reqs) if kind == "oc"
        for j, kind2 in reqs[i + 1:] if kind2 == "dram" and j < k]
    assert ahead, reqs
    assert _check_committed(got, log, n_ports) > 0

def test_the_on_chip_walk_stays_in_the_rings_window_while_the_dram_backlog_waits():
    """A drive slower than the input for the whole recording (200 chunks): the DRAM backlog waits
    while on-chip chunks are written; the on-chip walk runs up to the ring's window ahead of the
    first chunk not yet written, then the backlog goes out. Every chunk at its LBA, committed
    never past a chunk not written."""
    got, disk, log, kept = _record(n_ports=1, seed=11, words=800, p_complete=0.12, last_lba=1023, cycles=40000)
    assert got["status"] == STATUS_STOPPED and got["released"] == 200, got
    for k, words in enumerate(_expected_chunks(kept, 200)):
        assert disk[(0, k)] == words, k
    assert _check_committed(got, log, 1) > 0
    # The walks' lead is lead_chunks // ports - 1 rows (one row of margin for rows begun): one port,
    # a chunk per row, chunks up to lead_rows - 1 past the first not written.
    assert got["lead"] == got["lead_chunks"] - 2, (got["lead"], got["lead_chunks"])

def test_without_spill_the_dram_tier_is_never_used():
    got, disk, log, kept = _record(n_ports=1, seed=5, words=64, spill=0, p_complete=0.15)
    assert got["status"] == STATUS_STOPPED and got["released"] == 16
    assert got["bytes_spilled"] == 0 and got["peak_dram"] == 0 and got["peak_onchip"] == 2
    assert all(l[4] == "oc" for l in log if l[0] == "req")
    for k, words in enumerate(_expected_chunks(kept, 16)):
        assert disk[(0, k)] == words

@pytest.mark.parametrize("n_ports", [1, 2])
def test_drop_policy_with_both_tiers_full_counts_every_byte_and_comes_back_on_chip(n_ports):
    """A strict source (one word per cycle, lost when refused) into a drive that stalls for 600
    cycles: the on-chip slots fill, then the DRAM slots, then words are dropped (counted, in gaps);
    after the stall the chunks go on-chip again. Kept words are on the drives in order."""
    got, disk, log, kept = _record(n_ports=n_ports, seed=7, words=1200, strict=True, p_complete=0.5, last_lba=1023,
        stall=lambda c: 40 <= c < 640)
    assert got["status"] == STATUS_STOPPED, got
    n = got["released"]
    assert n == (len(kept) + CHUNK_WORDS - 1)//CHUNK_WORDS
    for k, words in enumerate(_expected_chunks(kept, n)):
        assert disk[(k % n_ports, k//n_ports)] == words, k
    # Exact balance: bytes_in up to the last word kept, dropped = the words lost before it.
    last = kept[-1]
    assert got["bytes_in"] == 4*last and got["kept"] == 4*len(kept) and got["dropped"] == 4*(last - len(kept))
    runs = sum(1 for a, b in zip(kept, kept[1:]) if b != a + 1) + (1 if kept[0] != 1 else 0)
    assert got["drops"] == runs and runs > 0
    # Both tiers were full, and the recording came back to on-chip slots after the stall.
    assert got["peak_onchip"] == 2*n_ports and got["peak_dram"] == 4
    # (Chunks come back on-chip after the first drop, when both tiers were full; with one port the
    # drive stays slower than the source, and whether the very last chunk is on-chip or in DRAM
    # depends on a cycle of the completions.)
    kinds = [l[4] for l in log if l[0] == "req"]
    first_drop = next(i for i, (a, b) in enumerate(zip([0] + kept, kept)) if b != a + 1)
    assert "dram" in kinds and "oc" in kinds[first_drop//CHUNK_WORDS + 1:], "".join(k[0] for k in kinds)
    # Kept bytes of the DRAM chunks (the last chunk may be padded).
    tier = {l[3]*n_ports + l[2]: l[4] for l in log if l[0] == "req"}
    assert sorted(tier) == list(range(n))
    assert got["bytes_spilled"] == 4*sum(min(CHUNK_WORDS, len(kept) - CHUNK_WORDS*k)
        for k in range(n) if tier[k] == "dram")
    _check_committed(got, log, n_ports)
    assert max(o for o, d in got["snaps"]) == 2*n_ports and max(d for o, d in got["snaps"]) == 4

def test_a_ring_with_trigger_across_a_spill_keeps_the_last_chunks_of_each_row():
    """Ring mode over a region of 4 rows x 2 ports, a slow drive (spills), a trigger after 100
    words and 64 bytes after it: the recording ends TRIGGERED and each (port, row) holds the
    newest chunk written there."""
    got, disk, log, kept = _record(n_ports=2, seed=9, words=10**6, mode=MODE_RING, last_lba=3,
        trigger_at=100, post_bytes=64, p_complete=0.15)
    assert got["status"] == STATUS_TRIGGERED and got["trigger_pos"] == 4*100, got
    assert got["kept"] == 4*100 + 64 and got["bytes_spilled"] > 0
    n = got["released"]
    assert n == len(kept)//CHUNK_WORDS == 29
    chunks = _expected_chunks(kept, n)
    for p in range(2):
        for row in range(4):
            k = max(k for k in range(n) if k % 2 == p and (k//2) % 4 == row)
            assert disk[(p, row)] == chunks[k], (p, row, k)

# Replay through on-chip slots ----------------------------------------------------------------------

@pytest.mark.parametrize("n_ports,seed", [(1, 1), (2, 2)])
def test_replay_goes_through_on_chip_slots_only_in_order(n_ports, seed):
    h = TieredHarness(n_ports=n_ports, onchip=2, dram_slots=4)
    h.dram = {}
    rec, out = h.rec, h.rec.outputs[0]
    n = 24
    disk = {(k % n_ports, k//n_ports): [1000*k + i for i in range(CHUNK_WORDS)] for k in range(n)}
    log, words, got = [], [], {}
    def gen():
        yield rec.direction.eq(DIR_REPLAY)
        yield rec.mode.eq(MODE_FIXED)
        yield rec.chunks.eq(n)
        yield rec.last_lba.eq(63)
        yield rec.replay_bytes.eq(16*n - 6)          # The last chunk is handed out in part.
        yield rec.start.eq(1)
        yield
        yield rec.start.eq(0)
        for c in range(6000):
            yield out.ready.eq(c % 3 != 0)           # Back-pressure from the output.
            yield
            if (yield out.valid) and (yield out.ready):
                words.append((yield out.data))
            if (yield rec.done):
                break
        for name in ("released", "status", "bytes_spilled", "peak_onchip", "peak_dram"):
            got[name] = yield getattr(rec, name)
    gens = [gen()] + [nvme_model(h, p, seed*10 + p, disk, log, p_complete=0.3) for p in range(n_ports)]
    gens += dram_model(h, h.dram)
    run_simulation(h, gens)
    exp = [w for k in range(n) for w in disk[(k % n_ports, k//n_ports)]][:4*n - 1]
    assert words == exp
    assert got["status"] == STATUS_COMPLETE and got["released"] == n
    assert got["bytes_spilled"] == 0 and got["peak_dram"] == 0 and got["peak_onchip"] == 2*n_ports
    assert all(l[4] == "oc" for l in log if l[0] == "req") and not h.dram

def test_the_rings_window_holds_the_slots_and_two_rows_of_lead_in_every_build():
    """The chunk window (placement and chunk trackers) holds every chunk in a slot and as many written
    ahead, with at least two rows of lead for the walks (a build of many ports and few DRAM slots
    included: a lead below one row would stop the walks)."""
    from litedram.common import LiteDRAMNativePort
    from literecorder.cores.recorder.core import RecorderCore
    for n_ports, slots in ((1, 4), (4, 2), (8, 2), (8, 4), (2, 4096)):
        wr = LiteDRAMNativePort("write", address_width=16, data_width=32)
        rd = LiteDRAMNativePort("read",  address_width=16, data_width=32)
        ring = RecorderCore(wr, rd, n_ports=n_ports, slots=slots).ring
        w = ring.chunk_window
        assert w & (w - 1) == 0 and w >= 2*slots + 2, (n_ports, slots, w)
        assert ring.lead_chunks == w - slots - 2 and ring.lead_chunks//n_ports >= 2, (n_ports, slots, w)
