#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The seeds' benchmarks at the BIOS prompt (nvme_bench peak/sizes/full/iops) on the seed-ssd1 drive:
exact points, addresses, byte and command counts, rates recomputed from the modeled cycles and
pinned to the recorded figures (test/pinned.py: the modeled time is deterministic), the interval lines
of the long runs, a read error that fails the full run, and the argument checks."""

import re

import pytest

from conftest import parse_results, result, ssd_ctl as ctl
from pinned import pinned

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("bench")]

KiB, MiB = 1024, 1024*1024
F = 200e6        # modeled clock of the default build

@pytest.fixture(scope="module")
def sim(request):
    from conftest import get_build, ssd_devices, SimSession, _run_name
    build = get_build()
    assert build.sys_clk_freq == F
    s = SimSession(build, name=_run_name(request) + "-bench",
        devices=ssd_devices(["--ssd-profile", "seed-ssd1", "--ns-size", "64MiB"], 1, build.sys_clk_freq))
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    yield s
    s.close()

def lines(out, name):
    return [d for d in parse_results(out) if d.get("name") == name]

def close(value, bytes_, cycles, unit):
    """A printed rate (3 decimals) equals bytes over the modeled cycles (to its rounding)."""
    return abs(float(value) - bytes_*F/cycles/unit) < 0.01 + 1e-6*float(value)

def test_peak_sweep_points_addresses_and_rates(sim):
    out = sim.cmd("nvme_bench peak 8", timeout=600)
    pts = lines(out, "bench_peak")
    assert [int(p["chunks"]) for p in pts] == [1, 2, 4, 8]
    for p in pts:
        n = int(p["chunks"])
        # Seed 000's placement: n chunks at n x 128 KiB (LBA n x 256), no point overlapping another.
        assert (int(p["lba"]), int(p["bytes"]), p["chunk_kib"]) == (n*256, n*128*KiB, "128")
        assert close(p["write_mibps"], n*128*KiB, int(p["write_cycles"]), MiB)
        assert close(p["read_mibps"], n*128*KiB, int(p["read_cycles"]), MiB)
        pinned(f"system.bench.seed-ssd1.peak.{n}.write_mibps", float(p["write_mibps"]))
        pinned(f"system.bench.seed-ssd1.peak.{n}.read_mibps", float(p["read_mibps"]))
    assert result(out, "bench_peak_done") == dict(name="bench_peak_done", port="0", points="4", ok="1")
    # The summary table: one row per point with the same figures.
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
    assert [(int(c), int(b), w, r) for c, b, w, r in rows] == \
        [(int(p["chunks"]), int(p["bytes"]), p["write_mibps"], p["read_mibps"]) for p in pts]
    # Larger transfers amortize the per-command latency: the rate grows with the chunk count.
    assert float(pts[-1]["write_mibps"]) > float(pts[0]["write_mibps"])
    assert float(pts[-1]["read_mibps"]) > float(pts[0]["read_mibps"])

def test_requests_larger_than_the_drives_transfer_size(sim):
    """A 4 MiB request is four commands of the drive's 1 MiB MDTS (seed-ssd1: MDTS 8): the run waits for
    all of them, and IOPS count requests (they were counted per command: an iops_ratio 4x the ratio)."""
    r = result(sim.cmd("nvme_bench seq write 4096 4 16", timeout=600), "nvme_bench")
    assert (r["requests"], r["commands"], r["bytes"]) == ("4", "16", str(16*MiB)), r
    assert int(r["iops"]) == 4*int(F)//int(r["cycles"])
    assert abs(float(r["iops_ratio"]) - float(r["ratio"])) <= 0.01*float(r["ratio"]) + 0.0002, r
    pinned("system.bench.seed-ssd1.seq_write_4096k_qd4.cycles", int(r["cycles"]))

def test_sizes_sweep_from_512_bytes_to_128_kib(sim):
    out = sim.cmd("nvme_bench sizes 9999 kib=256", timeout=600)
    assert "nvme0: QD 9999 is beyond the I/O queue (512 entries): QD 511" in out
    pts = lines(out, "bench_sizes")
    sizes = [512 << i for i in range(9)]
    assert [(int(p["bytes_per_cmd"]), p["op"]) for p in pts] == [(s, op) for s in sizes for op in ("write", "read")]
    for p in pts:
        s = int(p["bytes_per_cmd"])
        assert (int(p["commands"]), int(p["bytes"]), p["qd"]) == (256*KiB//s, 256*KiB, "511")
        assert close(p["mbps"], 256*KiB, int(p["cycles"]), 1e6)
        assert abs(int(p["iops"]) - int(p["commands"])*F/int(p["cycles"])) <= 1
        pinned(f"system.bench.seed-ssd1.sizes.{p['op']}.{s}.mbps", float(p["mbps"]))
    assert result(out, "bench_sizes_done")["points"] == "18"

def test_full_run_writes_reads_back_and_compares_with_interval_lines(sim):
    out = sim.cmd("nvme_bench full 8 1", timeout=600)
    for phase in ("write", "read"):
        iv = [p for p in lines(out, "bench_full") if p["phase"] == phase]
        assert len(iv) >= 2, out
        pinned(f"system.bench.seed-ssd1.full_8mib.{phase}.intervals", len(iv), rel=0, tol=1)
        t = [float(p["t_ms"]) for p in iv]
        b = [int(p["bytes"]) for p in iv]
        assert t == sorted(t) and b == sorted(b) and b[-1] == 8*MiB
        assert all(int(p["temp_c"]) > 0 for p in iv)
        pinned(f"system.bench.seed-ssd1.full_8mib.{phase}.t_ms", t[-1])
    done = result(out, "bench_full_done")
    assert (done["mib"], done["errors"], done["ok"]) == ("8", "0", "1")
    # SMART data units (1000 x 512 B) grew by the 8 MiB written.
    assert int(done["data_units_written_after"]) - int(done["data_units_written_before"]) == 8*MiB // 512000 + 1 \
        or int(done["data_units_written_after"]) - int(done["data_units_written_before"]) == 8*MiB // 512000

def test_full_run_with_a_read_error_fails_with_the_status_in_words(sim):
    ctl(sim, "fault add read-error:lba=4096")
    try:
        out = sim.cmd("nvme_bench full 4 1", timeout=600)
    finally:
        ctl(sim, "fault clear all")
    assert "Unrecovered Read Error (SCT 2, SC 0x81" in out, out
    assert result(out, "bench_full_done")["ok"] == "0"
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"

def test_iops_consistency_intervals(sim):
    out = sim.cmd("nvme_bench iops 8 0.004 op=25 interval=1", timeout=600)
    fill = result(out, "bench_iops_fill")
    assert fill["mib"] == "8" and close(fill["mbps"], 8*MiB, int(fill["cycles"]), 1e6)
    iv = lines(out, "bench_iops")
    # Intervals end where the CPU's poll loop sees the time pass: at k ms, late by at most a few
    # iterations of the loop (each reads the engine status and the 64-bit command counter).
    t = [float(p["t_ms"]) for p in iv]
    assert len(t) == 4 and all(k + 1 <= tk <= k + 1 + 0.005 for k, tk in enumerate(t)), t
    # Each interval's IOPS: its commands over its modeled time (intervals end where the CPU's poll
    # saw the time pass: a few cycles late, to the printed microsecond).
    prev = 0.0
    for p in iv:
        dt = float(p["t_ms"]) - prev
        prev = float(p["t_ms"])
        assert abs(int(p["iops"]) - int(p["commands"])/(dt/1000)) <= 0.002*int(p["iops"]) + 1
    done = result(out, "bench_iops_done")
    iops = [int(p["iops"]) for p in iv]
    assert done["span_mib"] == "6" and done["intervals"] == "4"
    assert (int(done["min_iops"]), int(done["max_iops"])) == (min(iops), max(iops))
    assert int(done["mean_iops"]) == sum(iops)//4
    pinned("system.bench.seed-ssd1.iops.fill_mbps", float(fill["mbps"]))
    pinned("system.bench.seed-ssd1.iops.mean_iops", int(done["mean_iops"]))
    pinned("system.bench.seed-ssd1.iops.min_iops", int(done["min_iops"]))
    # Every command of the intervals completed, and the ones in flight when it stopped too: QD 32
    # plus the engine's request queue, not a generator left running.
    assert sum(int(p["commands"]) for p in iv) <= int(done["commands"]) <= sum(int(p["commands"]) for p in iv) + 64

@pytest.mark.parametrize("cmd, message", [
    ("nvme_bench peak 3",          "Error: max_chunks '3': a power of two from 1 to 1048576"),
    ("nvme_bench peak 8 chunk=3",  "Error: chunk '3' KiB: a power of two from 4 to 2048"),
    ("nvme_bench peak 512",        "Error: the sweep to 512 chunks of 128 KiB needs 128 MiB of namespace; it has 64 MiB"),
    ("nvme_bench peak 8 foo=1",    "Error: unknown option 'foo=': allowed chunk=, port="),
    ("nvme_bench peak 8 port=7",   "Error: invalid port '7': allowed 0..0"),
    ("nvme_bench sizes x",         "Error: queue depth 'x': allowed 1..65535"),
    ("nvme_bench sizes kib=100",   "Error: kib '100': allowed 128..1073741824"),
    ("nvme_bench full 65",         "Error: mib '65': allowed 1..64"),
    ("nvme_bench iops 8 abc",      "Error: seconds 'abc': a positive number of seconds (up to 6 decimals)"),
    ("nvme_bench iops 8 1 op=95",  "Error: op (%) '95': allowed 0..90"),
    ("nvme_bench fast",            "Error: benchmark 'fast': allowed seq, rand, peak, sizes, full, iops"),
])
def test_bad_arguments_are_refused_with_what_is_allowed(sim, cmd, message):
    out = sim.cmd(cmd)
    assert message in out, out
    assert "RESULT" not in out
