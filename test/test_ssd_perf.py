#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated SSD, performance model: link payload limits (both directions), profile curves
(SLC cache drop and recovery, flat MLC, enterprise dips, GC after fill with and without deallocate,
budget GC bursts, seed-000 SSD 1 tiers), thermal throttling, per-command latency, logs."""

import os
import csv
import struct

import pytest

from literecorder.sim.ssd import SimSSD, measure_link, link_limit, rate_bins, US
from pinned import pinned

pytestmark = pytest.mark.unit

MiB = 1 << 20

@pytest.mark.parametrize("link, mps, direction", [
    ("gen3x4", 256, "cpld"), ("gen3x4", 256, "mwr"), ("gen2x4", 128, "cpld"), ("gen2x4", 512, "mwr"),
    ("gen4x4", 512, "cpld"), ("gen1x1", 128, "mwr"),
])
def test_saturated_link_measures_within_2_percent_of_the_limit(tmp_path, link, mps, direction):
    rate, limit = measure_link(link, mps, direction, ncmds=200, tmpdir=str(tmp_path))
    assert 0.98 * limit <= rate <= 1.001 * limit, (rate / 1e6, limit / 1e6)

def test_limit_formula_matches_the_reference_table():
    # REFERENCE.md (before the DLLP share): Gen3 x4 MPS 256: CplD 3653 / MWr 3601 MB/s
    assert link_limit("gen3x4", 256, "cpld", 0) / 1e6 == pytest.approx(3653, abs=1)
    assert link_limit("gen3x4", 256, "mwr", 0) / 1e6 == pytest.approx(3601, abs=1)
    assert link_limit("gen2x4", 128, "cpld", 0) / 1e6 == pytest.approx(1730, abs=1)
    assert link_limit("gen4x4", 512, "mwr", 0) / 1e6 == pytest.approx(7524, abs=1)

def dev_with(tmp_path, profile, ns_size=512 * MiB, **opts):
    d = SimSSD(profile=profile, ns_file=str(tmp_path / f"{profile}.img"), ns_size=ns_size,
               host_mem=48 * MiB, opts=opts)
    d.bring_up(mrrs=4096)
    return d

def stream_bins(d, op, slba, nlb, ncmds, bin_cmds, qd=32, **kw):
    r = d.stream(op, slba, nlb, ncmds, qd=qd, times=True, **kw)
    assert r["errors"] == 0, r
    return rate_bins(r["times"], r["t_start"], nlb * 512, bin_cmds), r

def test_tlc_slc_drops_when_the_cache_fills_and_recovers_when_idle(tmp_path):
    with dev_with(tmp_path, "tlc-slc", cache_size=64 * MiB, write_buf=2 * MiB, cache_flush_rate=4e9,
                  cache_idle_us=1000) as d:
        bins, _ = stream_bins(d, 1, 0, 256, 1536, 64)            # 192 MiB in 8 MiB bins
        fast = [r for b, r in bins if 24 * MiB <= b <= 56 * MiB]
        slow = [r for b, r in bins if b >= 96 * MiB]
        assert fast and slow
        for r in fast:
            assert r == pytest.approx(2.75e9, rel=0.02)
        for r in slow:
            assert r == pytest.approx(1.6e9, rel=0.02)
        assert d.model()["cache_used"] >= 64 * MiB
        d.run_us(1000 + 64 * MiB / 4e9 * 1e6 + 3000)              # idle: the cache drains
        assert d.model()["cache_used"] == 0
        bins, _ = stream_bins(d, 1, 0, 256, 256, 64)
        assert bins[-1][1] == pytest.approx(2.75e9, rel=0.02)

@pytest.mark.parametrize("profile, rate", [("mlc", 2.2e9), ("optane", 2.2e9)])
def test_flat_profiles(tmp_path, profile, rate):
    with dev_with(tmp_path, profile, write_buf=2 * MiB) as d:
        bins, _ = stream_bins(d, 1, 0, 256, 1024, 64)
        for b, r in bins[2:-1]:
            assert r == pytest.approx(rate, rel=0.02)

def test_enterprise_tlc_dips(tmp_path):
    with dev_with(tmp_path, "enterprise-tlc", write_buf=1 * MiB, dip_period_us=20000, dip_len_us=6000) as d:
        bins, _ = stream_bins(d, 1, 0, 256, 2048, 32)             # 4 MiB bins (~2.4 ms)
        rates = [r for b, r in bins[1:-1]]
        assert max(rates) == pytest.approx(1.7e9, rel=0.02)
        assert min(rates) == pytest.approx(1.3e9, rel=0.03)

def test_overwrite_of_a_full_drive_stalls_without_deallocate(tmp_path):
    with dev_with(tmp_path, "mlc", ns_size=32 * MiB, write_buf=1 * MiB, gc_rate=1.6e9) as d:
        n = 32 * MiB // (128 * 1024)
        bins, _ = stream_bins(d, 1, 0, 256, n, n)                  # fill
        assert bins[0][1] == pytest.approx(2.2e9, rel=0.05)
        bins, _ = stream_bins(d, 1, 0, 256, n, n // 4)             # overwrite, no trim
        m = d.model()
        # Nothing trimmed: GC keeps the drive nearly full of valid units (95 %), so each block it
        # frees costs moving most of it; that is why the overwrite stalls.
        frac = m["valid_units"] / (m["valid_units"] + m["stale_units"])
        pinned("unit.ssd_perf.overwrite_no_trim.valid_fraction", frac)
        slowed = bins[-1][1]
        assert slowed < 0.25 * 2.2e9
        pinned("unit.ssd_perf.overwrite_no_trim.rate", slowed)
        # deallocate everything, then write again: full speed
        ranges = d.alloc(4096)
        d.write_mem(ranges, struct.pack("<IIQ", 0, 32 * MiB // 512, 0))
        assert d.cmd(1, 0x09, nsid=1, prp1=ranges, cdw={10: 0, 11: 4})["sc"] == 0
        assert d.model()["valid_units"] == 0
        bins, _ = stream_bins(d, 1, 0, 256, n, n // 4)
        assert bins[-1][1] == pytest.approx(2.2e9, rel=0.02)

def test_budget_gc_bursts_after_fill(tmp_path):
    with dev_with(tmp_path, "budget", ns_size=32 * MiB, gc_batch=1 * MiB, write_buf=256 * 1024) as d:
        d.stream(1, 0, 64, 32 * MiB // 32768, qd=32)               # sequential fill
        r = d.stream(1, 0, 8, 12000, qd=32, random=True, times=True)   # 4 KiB random QD32
        assert r["errors"] == 0
        t = r["times"]
        iops = []
        for i in range(400, len(t), 200):                            # after the buffer filled
            iops.append(200 / ((t[i] - t[i - 200]) / 1e12))
        ceiling = 1 / (15.5e-6 + 4096 / 0.9e9)                         # cmd_cost_us + 4 KiB at write_rate
        assert ceiling == pytest.approx(50e3, rel=0.01)
        assert max(iops) == pytest.approx(ceiling, rel=0.03)          # bursts at the command ceiling
        assert min(iops) < 3e3                                        # GC phases around 2k IOPS
        pinned("unit.ssd_perf.budget_gc.min_iops", min(iops))
        pinned("unit.ssd_perf.budget_gc.mean_iops", sum(iops) / len(iops))

def test_seed_ssd1_tiers(tmp_path):
    with dev_with(tmp_path, "seed-ssd1", cache2_size=48 * MiB, write_buf=512 * 1024) as d:
        bins, _ = stream_bins(d, 1, 0, 256, 1024, 16)               # 2 MiB bins
        GiB = 2**30
        first = [r for b, r in bins if 2 * MiB < b <= 8 * MiB]
        mid = [r for b, r in bins if 16 * MiB <= b <= 54 * MiB]
        last = [r for b, r in bins if b >= 64 * MiB]
        assert all(r == pytest.approx(2.5 * GiB, rel=0.03) for r in first)
        assert all(r == pytest.approx(1.05 * GiB, rel=0.02) for r in mid)
        assert all(r == pytest.approx(0.44 * GiB, rel=0.02) for r in last)

def test_thermal_throttle_and_smart(tmp_path):
    with dev_with(tmp_path, "tlc-slc", temp_tau_us=20000, write_buf=1 * MiB) as d:
        bins, _ = stream_bins(d, 1, 0, 256, 3072, 16)               # 384 MiB in 2 MiB bins
        m = d.model()
        assert m["tmt1_count"] >= 1 and m["tmt1_time"] > 0
        pinned("unit.ssd_perf.thermal.tmt1_count", m["tmt1_count"], rel=0)
        pinned("unit.ssd_perf.thermal.tmt1_time", m["tmt1_time"])
        rates = [r for b, r in bins[3:-1]]
        assert max(rates) == pytest.approx(2.75e9, rel=0.02)          # before throttling
        assert min(rates) == pytest.approx(1.4e9, rel=0.02)           # throttled at TMT1
        log = d.alloc(4096)
        d.admin(0x02, prp1=log, cdw={10: (127 << 16) | 0x02})
        s = d.read_mem(log, 512)
        assert struct.unpack_from("<I", s, 216)[0] == m["tmt1_count"]
        assert struct.unpack_from("<I", s, 224)[0] == int(m["tmt1_time"])
        temp_k = struct.unpack_from("<H", s, 1)[0]
        assert 273 + 60 < temp_k < 273 + 82
        d.run_us(200000)                                              # idle: cools down
        assert d.model()["temp"] < 42 and d.model()["throttle"] == 0

def test_qd1_latency(tmp_path):
    with dev_with(tmp_path, "tlc-slc") as d:
        buf = d.alloc(4096)
        for op, lat in ((2, 80), (1, 20)):
            t0 = d.now
            assert d.io(op, 0, 8, buf)["sc"] == 0
            us = (d.now - t0) / US
            assert lat < us < lat + 6, (op, us)
            pinned(f"unit.ssd_perf.qd1_latency_us.op{op}", us, rel=0.01)

def test_latency_spikes_are_seeded(tmp_path):
    def lats(seed):
        with SimSSD(profile="optane", ns_file=str(tmp_path / f"s{seed}.img"), ns_size=16 * MiB, seed=seed,
                    opts={"spike_prob": 0.1, "spike_us": 1000}) as d:
            d.bring_up()
            buf = d.alloc(4096)
            out = []
            for i in range(60):
                t0 = d.now
                d.io(2, i, 1, buf)
                out.append((d.now - t0) // US)
            return out
    a, b, c = lats(1), lats(1), lats(2)
    assert a == b and a != c
    spikes = [x for x in a if x > 1000]
    # Seed 1's draws: exactly the recorded spike count and total latency.
    assert 1 <= len(spikes) <= 20 and all(x < 1020 for x in spikes)
    pinned("unit.ssd_perf.spikes_seed1.count", len(spikes), rel=0)
    pinned("unit.ssd_perf.spikes_seed1.total_us", sum(a), rel=0)

def test_command_and_sample_logs(tmp_path):
    cl, sl = str(tmp_path / "cmds.csv"), str(tmp_path / "samples.csv")
    with SimSSD(profile="mlc", ns_file=str(tmp_path / "ns.img"), ns_size=64 * MiB, cmd_log=cl,
                sample_log=sl, sample_us=200, host_mem=32 * MiB, opts={"write_buf": 1 * MiB}) as d:
        d.bring_up(mrrs=4096)
        r = d.stream(1, 0, 256, 100, qd=8)
        d.io(2, 7, 3, d.alloc(4096))
        d.run_us(500)
        d.control("log flush")
    rows = list(csv.DictReader(open(cl)))
    io = [x for x in rows if not x["opc"].startswith("a")]
    assert len(io) == 101
    w = [x for x in io if x["opc"] == "01"]
    assert len(w) == 100 and all(int(x["nlb"]) == 256 and int(x["bytes"]) == 131072 for x in w)
    rd = [x for x in io if x["opc"] == "02"][0]
    assert (int(rd["slba"]), int(rd["nlb"]), rd["sct"], rd["sc"]) == (7, 3, "0", "0")
    assert all(float(x["t_complete_us"]) >= float(x["t_submit_us"]) for x in rows)
    samples = list(csv.DictReader(open(sl)))
    assert len(samples) >= 20
    busy = [float(x["write_MBps"]) for x in samples if float(x["write_MBps"]) > 0]
    total = sum(busy) * 200e-6 * 1e6
    assert total == pytest.approx(100 * 131072, rel=0.01)
    assert sorted(busy)[len(busy) // 2] == pytest.approx(2200, rel=0.05)
    assert all(float(x["temp_c"]) >= 40 for x in samples)
