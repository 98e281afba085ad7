#!/usr/bin/env python3
#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Benchmark of the simulated SSD model (standalone harness, no RTL): link payload limits and the
profile curves, each against the figure it is configured to reproduce.

    .venv/bin/python test/bench_ssd_model.py [--curves]

Prints `RESULT name=... measured=... limit=... ratio=...` (rates in MB/s, or IOPS) and, with
--curves, `CURVE profile=... bytes=... MBps=...` points (throughput vs bytes written). All numbers
are measured in modeled time (completion times of the commands, picoseconds)."""

import os
import sys
import time
import struct
import argparse
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sim.ssd import SimSSD, measure_link, rate_bins, link_limit

MiB = 1 << 20

def result(name, measured, limit, unit="MBps"):
    scale = 1e6 if unit == "MBps" else 1
    print(f"RESULT name={name} measured={measured / scale:.1f} limit={limit / scale:.1f} "
          f"ratio={measured / limit:.4f} unit={unit}", flush=True)

def curve(profile, bins):
    for b, r in bins:
        print(f"CURVE profile={profile} bytes={b} MBps={r / 1e6:.1f}")

def region(bins, lo, hi):
    sel = [(b, r) for b, r in bins if lo <= b <= hi]
    # bytes / time over the region (harmonic mean of equal-size bins)
    return len(sel) / sum(1 / r for b, r in sel)

_n = [0]
def dev(tmp, profile, ns_size=1024 * MiB, **opts):
    _n[0] += 1
    d = SimSSD(profile=profile, ns_file=os.path.join(tmp, f"{profile}-{_n[0]}.img"), ns_size=ns_size,
               host_mem=48 * MiB, opts=opts)
    d.bring_up(mrrs=4096)
    return d

def stream(d, ncmds, bin_cmds, nlb=256, op=1, **kw):
    r = d.stream(op, 0, nlb, ncmds, qd=32, times=True, **kw)
    assert r["errors"] == 0, r
    return rate_bins(r["times"], r["t_start"], nlb * 512, bin_cmds), r

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--curves", action="store_true", help="also print the curve points")
    a = ap.parse_args()
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="ssdbench-")

    # Link limits (ideal profile: only the link limits) ------------------------------------------------
    for link, mps in (("gen3x4", 256), ("gen3x4", 128), ("gen3x4", 512), ("gen2x4", 256),
                      ("gen3x8", 256), ("gen4x4", 512), ("gen1x1", 128)):
        for direction in ("cpld", "mwr"):
            rate, lim = measure_link(link, mps, direction, ncmds=300, tmpdir=tmp)
            result(f"link_{link}_mps{mps}_{direction}", rate, lim)

    # tlc-slc: SLC cache (scaled to 256 MiB) then TLC -----------------------------------------------------
    with dev(tmp, "tlc-slc", cache_size=256 * MiB, write_buf=2 * MiB) as d:
        bins, _ = stream(d, 6144, 128)                       # 768 MiB, 16 MiB bins
        result("tlc-slc_in_cache", region(bins, 32 * MiB, 240 * MiB), 2.75e9)
        result("tlc-slc_after_cache", region(bins, 320 * MiB, 760 * MiB), 1.6e9)
        if a.curves: curve("tlc-slc", bins)
    # mlc / optane: flat
    for prof in ("mlc", "optane"):
        with dev(tmp, prof, write_buf=2 * MiB) as d:
            bins, _ = stream(d, 2048, 128)
            result(f"{prof}_flat", region(bins, 32 * MiB, 240 * MiB), 2.2e9)
            if a.curves: curve(prof, bins)
    # enterprise-tlc: 1.7 GB/s with dips to 1.3 GB/s (dips every 20 ms for 6 ms here)
    with dev(tmp, "enterprise-tlc", write_buf=1 * MiB, dip_period_us=20000, dip_len_us=6000) as d:
        bins, _ = stream(d, 4096, 32)
        rates = [r for b, r in bins[1:-1]]
        result("enterprise-tlc_peak", max(rates), 1.7e9)
        result("enterprise-tlc_dip", min(rates), 1.3e9)
        if a.curves: curve("enterprise-tlc", bins)
    # seed-ssd1: 8 MiB at 2.5 GiB/s, ~1.05 GiB/s, then 0.44 GiB/s (second tier scaled to 64 MiB)
    with dev(tmp, "seed-ssd1", cache2_size=64 * MiB, write_buf=512 * 1024) as d:
        bins, _ = stream(d, 1536, 16)
        G = 2**30
        result("seed-ssd1_tier1", region(bins, 4 * MiB, 8 * MiB), 2.5 * G)
        result("seed-ssd1_tier2", region(bins, 16 * MiB, 70 * MiB), 1.05 * G)
        result("seed-ssd1_sustained", region(bins, 96 * MiB, 190 * MiB), 0.44 * G)
        if a.curves: curve("seed-ssd1", bins)
    # Thermal: tlc-slc in its cache, tau scaled to 20 ms: 2.75 GB/s until TMT1, then 1.4 GB/s
    with dev(tmp, "tlc-slc", temp_tau_us=20000, write_buf=1 * MiB) as d:
        bins, _ = stream(d, 4096, 16)
        rates = [r for b, r in bins[3:-1]]
        m = d.model()
        result("thermal_before_throttle", max(rates), 2.75e9)
        result("thermal_throttled", min(rates), 1.4e9)
        print(f"RESULT name=thermal_tmt1_transitions measured={m['tmt1_count']:.0f} "
              f"tmt1_seconds={m['tmt1_time']:.4f} temp_c={m['temp']:.1f}")
        if a.curves: curve("tlc-slc-thermal", bins)
    # GC: overwrite of a full drive without deallocate, then after a full deallocate (mlc, 64 MiB)
    with dev(tmp, "mlc", ns_size=64 * MiB, write_buf=1 * MiB, gc_rate=1.6e9) as d:
        n = 64 * MiB // (128 * 1024)
        stream(d, n, n)
        bins, _ = stream(d, n, n // 8)
        m = d.model()
        u = m["valid_units"] / (m["valid_units"] + m["stale_units"] + 1e-9)
        expect = 1 / (1 / 2.2e9 + (u / (1 - u)) / 1.6e9) if u < 1 else 0
        result("gc_overwrite_no_trim", bins[-1][1], expect)
        ranges = d.alloc(4096)
        d.write_mem(ranges, struct.pack("<IIQ", 0, 64 * MiB // 512, 0))
        d.cmd(1, 0x09, nsid=1, prp1=ranges, cdw={10: 0, 11: 4})
        bins, _ = stream(d, n, n // 8)
        result("gc_overwrite_after_trim", region(bins, 16 * MiB, 56 * MiB), 2.2e9)
    # budget: 4 KiB random QD32 after fill: bursts at the command ceiling, GC phases ~2k IOPS (seed 004)
    with dev(tmp, "budget", ns_size=64 * MiB, gc_batch=2 * MiB, write_buf=256 * 1024) as d:
        d.stream(1, 0, 64, 64 * MiB // 32768, qd=32)
        r = d.stream(1, 0, 8, 30000, qd=32, random=True, times=True)
        t = r["times"]
        iops = [200 / ((t[i] - t[i - 200]) / 1e12) for i in range(400, len(t), 200)]
        result("budget_burst_iops", max(iops), 1 / (15.5e-6 + 4096 / 0.9e9), unit="IOPS")
        gc = sorted(x for x in iops if x < 10e3)
        result("budget_gc_iops_median", gc[len(gc) // 2], 2000, unit="IOPS")
        if a.curves:
            for i, x in enumerate(iops):
                print(f"CURVE profile=budget-iops window={i} IOPS={x:.0f}")
    # QD1 latency
    with dev(tmp, "tlc-slc") as d:
        buf = d.alloc(4096)
        for op, name, lat in ((2, "read", 80), (1, "write", 20)):
            t1 = d.now
            d.io(op, 0, 8, buf)
            us = (d.now - t1) / 1e6
            print(f"RESULT name=tlc-slc_qd1_4k_{name}_latency_us measured={us:.2f} configured={lat} "
                  f"(plus link and transfer)")
    print(f"[bench] done in {time.time() - t0:.1f} s wall", flush=True)

if __name__ == "__main__":
    main()
