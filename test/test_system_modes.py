#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recording modes and the register model (seed 000) in the full-system simulation: a ring with a
trigger and trim ahead, until-stop into the end of its region, stop/abort at random moments with
the captured last address, trim ahead against garbage collection, every status code provoked
through the registers, and the self-tests that must fail when their condition is broken."""

import random

import pytest

from conftest import parse_results, result, ssd_ctl
from patterns import pattern_bytes

pytestmark = [pytest.mark.system]

MiB, KiB = 1 << 20, 1 << 10
CHUNK = 128*KiB

def init(sim):
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"

def status(sim):
    return {k: (int(v) if v.isdigit() else v) for k, v in result(sim.cmd("rec_status"), "rec_status").items()}

def read_ns(sim, offset, nbytes):
    with open(sim.devices[0][1]["ns_file"], "rb") as f:
        f.seek(offset)
        return f.read(nbytes)

def wait(sim, ms=None, timeout=1200):
    out = sim.cmd("rec_wait" + (f" {ms}" if ms else ""), timeout=timeout)
    return result(out, "rec_wait")

@pytest.fixture(scope="module")
def ideal(request):
    from conftest import get_build, ssd_devices, SimSession, _run_name
    build = get_build()
    s = SimSession(build, name=_run_name(request) + "-modes",
        devices=ssd_devices(["--ssd-profile", "ideal", "--ns-size", "256MiB"], 1, build.sys_clk_freq))
    init(s)
    yield s
    s.close()

# Ring with trigger -----------------------------------------------------------------------------

@pytest.mark.xdist_group("modes")
def test_ring_with_trim_ahead_wraps_and_keeps_what_surrounds_the_trigger(ideal):
    sim, seed = ideal, 0x716
    region, post, trim = 4*MiB, 1*MiB, 512*KiB        # 32 rows of one chunk; 4 rows trimmed ahead
    # The source is limited to 1000 MB/s: 4 ms of modeled time are about 4 MB = one lap per 4 ms.
    out = sim.cmd(f"rec_start 0 ring=4 post=1 trim-ahead=0.5 rate=1000 seed={seed}")
    assert out.strip() == "Error: invalid trim-ahead '0.5' MiB: 0..1073741824", out   # whole MiB only
    out = sim.cmd(f"rec_start 0 ring=4 post=1 trim-ahead=1 rate=1000 seed={seed}")
    cfg = result(out, "rec_start")
    assert (int(cfg["rows"]), int(cfg["capacity"]), int(cfg["trim_rows"])) == (32, 32, 8)
    assert wait(sim, 12)["done"] == "0"                # still running after 12 ms: it wraps
    sim.cmd("rec_trigger")
    assert wait(sim)["done"] == "1"
    st = status(sim)
    assert st["mode"] == "ring" and st["status"] == 5 and st["wraps"] >= 2, st
    kept, trig, oldest = st["bytes_kept"], st["trigger"], st["oldest"]
    assert kept == trig + post                         # post bytes after the trigger, exactly
    chunks = -(-kept//CHUNK)
    assert st["chunks"] == chunks
    # With 8 rows trimmed ahead, the region holds the last 32 - 8 rows: the oldest is 24 chunks back.
    assert oldest == (chunks - 24)*CHUNK, st
    assert st["addr_last"] == ((chunks - 1) % 32)*CHUNK
    # The region holds the stream from `oldest` to the end in ring order (the last chunk padded).
    for c in range(oldest//CHUNK, chunks):
        data = read_ns(sim, (c % 32)*CHUNK, CHUNK)
        n = min(CHUNK, kept - c*CHUNK)
        assert data[:n] == pattern_bytes(seed, n, c*CHUNK//4), c
        assert data[n:] == bytes(CHUNK - n)
    # The trigger is where the post-trigger data begins: it is in the kept part, post bytes back.
    assert oldest <= trig < kept
    # The rows trimmed ahead of the last one written read back as deallocated (zeros).
    for r in range(chunks, chunks + 8):
        assert read_ns(sim, (r % 32)*CHUNK, CHUNK) == bytes(CHUNK), r

@pytest.mark.xdist_group("modes")
def test_until_stop_ends_cleanly_at_the_end_of_its_region(ideal):
    sim, seed = ideal, 0x5709
    out = sim.cmd(f"rec_start {64*MiB//512} until-stop=8 seed={seed}")
    assert result(out, "rec_start")["capacity"] == "64"
    assert wait(sim)["done"] == "1"
    st = status(sim)
    assert st["status"] == 4 and st["error"] == 0 and st["bytes_committed"] == 8*MiB, st   # capacity reached
    assert st["addr_last"] == 64*MiB + 8*MiB - CHUNK
    assert read_ns(sim, 64*MiB, 8*MiB) == pattern_bytes(seed, 8*MiB)

# Stop / abort at random moments: WRITE_ADDR_LAST --------------------------------------------------

@pytest.mark.xdist_group("modes")
@pytest.mark.parametrize("how", ["stop", "abort"])
def test_stop_and_abort_at_random_moments_capture_the_last_address_exactly(ideal, how):
    sim = ideal
    rng = random.Random(2026 + (how == "abort"))
    base = 96*MiB
    for trial in range(2):
        old, new = 0x1000 + trial, 0x2000 + trial
        assert result(sim.cmd(f"rec_record {base//512} 8 seed={old}"), "rec_record")["ok"] == "1"
        sim.cmd(f"rec_start {base//512} until-stop=8 rate=900 seed={new}")
        ms = rng.choice([1, 2, 3, 4, 5])
        wait(sim, ms)
        sim.cmd(f"rec_{how}")
        assert wait(sim)["done"] == "1"
        st = status(sim)
        assert st["status"] == (2 if how == "stop" else 3), st
        chunks = st["chunks"]
        assert 0 < chunks < 64
        assert st["addr_last"] == base + (chunks - 1)*CHUNK
        kept = st["bytes_kept"]
        data = read_ns(sim, base, 8*MiB)
        if how == "stop":                  # the partial chunk is padded: kept bytes, then zeros
            assert data[:kept] == pattern_bytes(new, kept)
            assert data[kept:chunks*CHUNK] == bytes(chunks*CHUNK - kept)
        else:                              # the partial chunk is dropped: whole chunks only
            assert kept == chunks*CHUNK and st["bytes_dropped"] > 0
            assert data[:kept] == pattern_bytes(new, kept)
        # Beyond the last chunk the earlier recording is intact.
        assert data[chunks*CHUNK:] == pattern_bytes(old, 8*MiB - chunks*CHUNK, chunks*CHUNK//4)

# Status codes through the registers -----------------------------------------------------------------

@pytest.mark.xdist_group("modes")
def test_every_status_code_through_the_registers(ideal):
    sim = ideal
    ns = 256*MiB//512
    cases = [
        ("record 0 256 chunks=1",                         0),    # accepted (and ended at once)
        (f"record 0 {ns} chunks=1",                       8),    # last row beyond the namespace
        ("record 0 256 chunks=3",                         8),    # more chunks than the region holds
        ("record 256 512 start=0 chunks=1",               8),    # start outside the region
        ("replay 512 256 chunks=1",                       9),    # first > last
        ("record 128 512 start=128 chunks=1",             10),   # unaligned first
        ("replay 0 384 chunks=1",                         10),   # unaligned last
        ("record 0 256 chunks=1 mask=0",                  11),   # no port
        ("record 0 256 chunks=0",                         11),   # no chunk
        (f"record 0 256 chunks=1 nsze={256 + 128}",       8),    # the namespace size the core is given
    ]
    for args, code in cases:
        r = result(sim.cmd(f"rec_raw {args}"), "rec_raw")
        assert int(r["status"]) == code, (args, r)
    # Device error with its NVMe status, and a command timeout (the engine's timeout scan).
    ssd_ctl(sim, "fault add write-fault:lba=4096-4351")
    out = sim.cmd("rec_record 4096 1")
    assert "Write Fault (SCT 2, SC 0x80" in out and "status=12" in out, out
    st = status(sim)
    assert st["status"] == 12 and st["err_status"] == "0x4280", st
    ssd_ctl(sim, "fault clear all")
    init(sim)
    sim.cmd("nvme_timeout 20")
    ssd_ctl(sim, "fault add drop-cqe:op=write,count=1")
    out = sim.cmd("rec_record 4096 1")
    assert "status=13" in out, out
    assert status(sim)["status"] == 13
    ssd_ctl(sim, "fault clear all")
    sim.cmd("nvme_timeout 1000")
    init(sim)

# Trim ahead against garbage collection ------------------------------------------------------------

@pytest.mark.xdist_group("modes-gc")
def test_trim_ahead_keeps_an_overwrite_of_a_full_drive_fast(start_sim):
    """A budget drive, full: overwriting it without deallocating stalls for garbage collection
    (seed 001); with trim ahead the drive has erased blocks ahead of the writes."""
    # The budget profile with its garbage collection 100x faster than its default (0.44 GB/s) and a
    # 1 MiB write buffer, so that a 16 MiB drive shows it in milliseconds of modeled time.
    rates, size = {}, 16
    for trim in (0, 4):
        sim = start_sim(ssd=["--ssd-profile", "budget", "--ns-size", f"{size}MiB", "--ssd-opt", "op_pct=2",
            "--ssd-opt", "gc_rate=44GB", "--ssd-opt", "write_buf=1MiB", "--ssd-opt", "gc_batch=1MiB"])
        init(sim)
        assert result(sim.cmd(f"rec_record 0 {size} seed=1"), "rec_record")["ok"] == "1"     # full
        out = sim.cmd(f"rec_start 0 {size} seed=2" + (f" trim-ahead={trim}" if trim else ""))
        assert "RESULT name=rec_start" in out, out
        assert wait(sim)["done"] == "1"
        st = status(sim)
        assert st["status"] == 1 and st["bytes_committed"] == size*MiB, st
        rates[trim] = float(st["mbps"])
        assert read_ns(sim, 0, size*MiB) == pattern_bytes(2, size*MiB)
        sim.close()
    print(f"RESULT name=trim_ahead_overwrite budget_mbps_without={rates[0]} budget_mbps_with={rates[4]}")
    assert rates[4] > 1.3*rates[0], rates

# Self-tests: the strengthened ones fail when broken ----------------------------------------------

@pytest.mark.xdist_group("modes")
@pytest.mark.parametrize("test", [1, 3, 9])
def test_strengthened_selftests_fail_when_their_condition_is_broken(ideal, test):
    sim = ideal
    out = sim.cmd(f"rec_selftest region=8 test={test}", timeout=900)
    assert result(out, "rec_selftest_summary")["failed"] == "0", out
    out = sim.cmd(f"rec_selftest region=8 test={test} break=1", timeout=900)
    assert f"TEST #{test:02d}: FAIL" in out and result(out, "rec_selftest_summary")["failed"] == "1", out
    init(sim)
