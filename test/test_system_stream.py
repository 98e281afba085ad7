#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The user's stream in the full-system simulation: the simulated ADC (a source that cannot wait,
AXI4-Stream, its own clock domain) recorded through the user port onto realistic drives, the drop
policy's exact accounting checked against the ADC's own count and the namespace file, lossless
back-pressure, a throttling drive, sizes beyond 2**32 beats, replay to the user's output, and a SoC
with user streams only."""

import os

import pytest

from conftest import parse_results, result, ssd_ctl, simio_args
from patterns import pattern_bytes, kept_stream

pytestmark = [pytest.mark.system]

MiB = 1 << 20

REC_STATUS_COMPLETE, REC_STATUS_INPUT_END = 1, 6

def init(sim, ports=(0,)):
    for p in ports:
        assert result(sim.cmd(f"nvme_init {p}"), "nvme_init")["ok"] == "1"

def status(sim):
    return {k: (int(v) if v.isdigit() else v) for k, v in result(sim.cmd("rec_status"), "rec_status").items()}

def drop_log(sim, count):
    out = sim.cmd(f"rec_drops 0 {count}")
    return [(int(d["pos"]), int(d["len"]), int(d["abort"])) for d in parse_results(out) if d["name"] == "rec_drop"]

def read_ns(sim, offset, nbytes, port=0):
    with open(sim.devices[port][1]["ns_file"], "rb") as f:
        f.seek(offset)
        return f.read(nbytes)

def wait(sim, timeout=1200):
    out = sim.cmd("rec_wait", timeout=timeout)
    assert result(out, "rec_wait")["done"] == "1", out
    return out

def check_balance(st):
    assert st["bytes_in"] == st["bytes_committed"] + st["bytes_dropped"] + st["bytes_buffered"], st
    assert st["bytes_kept"] == st["bytes_committed"] + st["bytes_buffered"], st

# Drop policy -----------------------------------------------------------------------------------

@pytest.mark.xdist_group("stream-adc")
def test_adc_faster_than_the_drive_after_its_cache_drops_whole_words_accounted_exactly(start_sim):
    """ADC at 2200 MB/s: above the drive once its SLC cache (256 MiB) is full (1600 MB/s), below it
    before (2750 MB/s). Drops start only after the cache and the 16 MiB ring are full; the ADC's
    own count of lost bytes equals the recorder's; every kept byte is in the namespace file at its
    place, the gaps where the drop log says."""
    total, seed = 352*MiB, 0x0adc
    sim = start_sim(ssd=["--ssd-profile", "tlc-slc", "--ssd-opt", "cache_size=256MiB", "--ns-size", "1GiB"],
        simio=simio_args("adc", rate_mbps=2200, total_bytes=total, seed=seed))
    init(sim)
    out = sim.cmd("rec_start 0 until-stop input=user policy=drop buffer=16")
    assert "RESULT name=rec_start" in out, out
    wait(sim)
    st = status(sim)
    assert st["state"] == "done" and st["status"] == REC_STATUS_INPUT_END, st
    check_balance(st)
    assert st["bytes_in"] == total and st["bytes_buffered"] == 0
    assert st["bytes_dropped"] > 0 and st["overflow"] == 1 and st["drops"] >= 1
    # The ADC counted the same bytes as lost, on its side of the clock-domain crossing.
    io = result(sim.cmd("sim_io"), "sim_io")
    assert int(io["adc_produced_bytes"]) == total
    assert int(io["adc_lost_bytes"]) == st["bytes_dropped"]
    # The drop log: whole ring words, after the cache was full, adding up to the dropped bytes.
    log = drop_log(sim, st["drops"])
    assert len(log) == st["drops"] <= 512
    assert sum(n for _, n, _ in log) == st["bytes_dropped"]
    # Without arguments, the first 16 entries, and a line that says the list was cut.
    out = sim.cmd("rec_drops")
    shown = [d for d in parse_results(out) if d["name"] == "rec_drop"]
    assert len(shown) == min(16, st["drops"])
    cut = [l for l in out.splitlines() if l.startswith("rec_drops: entries")]
    if st["drops"] > 16:
        assert cut == [f"rec_drops: entries 0-15 shown, {st['drops'] - 16} more in the log: "
            f"rec_drops 16 {st['drops'] - 16} shows them"], out
    else:
        assert cut == [], out
    assert all(p % 64 == 0 and n % 64 == 0 and a == 0 for p, n, a in log)
    assert log[0][0] >= 256*MiB
    # Every kept byte at its place: the pattern stream without the logged gaps.
    kept = st["bytes_kept"]
    assert read_ns(sim, 0, kept) == kept_stream(seed, total, [(p, n) for p, n, _ in log])

@pytest.mark.xdist_group("stream-lossless")
def test_lossless_source_that_waits_loses_nothing_and_the_back_pressure_is_counted(start_sim):
    sim = start_sim(ssd=["--ssd-profile", "tlc-slc", "--ssd-opt", "cache_size=32MiB", "--ns-size", "1GiB"])
    init(sim)
    size, seed = 96*MiB, 0x1e55
    sim.cmd(f"rec_set rate=2200 seed={seed} buffer=8")
    out = sim.cmd("rec_start 0 96 input=pattern policy=lossless")
    assert "RESULT name=rec_start" in out, out
    wait(sim)
    st = status(sim)
    assert st["status"] == REC_STATUS_COMPLETE, st
    check_balance(st)
    assert (st["bytes_in"], st["bytes_committed"], st["bytes_dropped"], st["drops"], st["overflow"]) == \
        (size, size, 0, 0, 0)
    # The drive fell to 1600 MB/s after its cache: the ring filled (8 on-chip slots, then the 8 MiB
    # of DRAM asked for with buffer=) and the source waited.
    assert st["stalls"] > 0 and (st["peak"], st["peak_dram"], st["peak_onchip"]) == (72, 64, 8), st
    assert read_ns(sim, 0, size) == pattern_bytes(seed, size)

@pytest.mark.xdist_group("stream-thermal")
def test_throttling_drive_the_ring_absorbs_the_dip_without_a_drop(start_sim):
    """A drive that heats up and throttles below the ADC's rate for a while: the ring takes the
    difference (its peak occupancy shows it), nothing is dropped, the data is intact."""
    total, seed = 96*MiB, 0x7e
    sim = start_sim(ssd=["--ssd-profile", "mlc", "--ns-size", "1GiB",
        "--ssd-opt", "temp_per_gbps=60", "--ssd-opt", "temp_tau_us=4000", "--ssd-opt", "tmt1=76",
        "--ssd-opt", "throttle1_rate=900MB", "--ssd-opt", "temp_hyst=2"],
        simio=simio_args("adc", rate_mbps=1200, total_bytes=total, seed=seed))
    init(sim)
    sim.cmd("rec_start 0 until-stop input=user policy=drop buffer=64")
    wait(sim)
    st = status(sim)
    check_balance(st)
    assert st["status"] == REC_STATUS_INPUT_END and st["bytes_dropped"] == 0 and st["bytes_in"] == total, st
    stats = ssd_ctl(sim, "stats")
    assert int(stats.split("tmt1_count=")[1].split()[0]) > 0, stats   # the drive did throttle
    assert st["peak"] >= 8, st      # chunks held while the drive was throttled
    assert read_ns(sim, 0, total) == pattern_bytes(seed, total)

# Sizes -----------------------------------------------------------------------------------------

@pytest.mark.xdist_group("stream-big")
def test_a_recording_beyond_2_to_the_32_beats_is_configured_end_to_end(start_sim):
    sim = start_sim(ssd=["--ssd-profile", "ideal", "--ns-size", "400GiB"])
    init(sim)
    mib = 300*1024                      # 300 GiB: 4.9e9 ring words of 64 bytes, 2.4e6 chunks
    out = sim.cmd(f"rec_start 0 {mib} input=pattern")
    cfg = result(out, "rec_start")
    assert int(cfg["bytes"]) == mib*MiB and int(cfg["chunks"]) == mib*8
    assert int(cfg["last_lba"]) == (mib*MiB - 128*1024)//512 and int(cfg["capacity"]) == mib*8
    sim.cmd("rec_stop")
    wait(sim)
    st = status(sim)
    assert st["status"] == 2 and st["bytes_committed"] > 0   # stopped; what was taken is on the drive
    check_balance(st)
    assert read_ns(sim, 0, st["bytes_kept"]) == pattern_bytes(1, st["bytes_kept"])

# Replay to the user's output -------------------------------------------------------------------

@pytest.mark.xdist_group("stream-adc")
def test_record_from_the_adc_and_replay_to_the_user_output_with_back_pressure(start_sim):
    total, seed = 24*MiB + 4096, 0x5a
    sim = start_sim(ssd=["--ssd-profile", "ideal", "--ns-size", "1GiB"],
        simio=simio_args("adc", rate_mbps=1500, total_bytes=total, seed=seed, backpressure=True))
    init(sim)
    sim.cmd("rec_start 0 until-stop input=user")
    wait(sim)
    st = status(sim)
    assert st["status"] == REC_STATUS_INPUT_END and st["bytes_kept"] == total and st["bytes_dropped"] == 0, st
    sim.cmd("sim_io clear")
    out = sim.cmd(f"play_start 0 25 output=user bytes={total}")
    assert "RESULT name=play_start" in out, out
    wait(sim)
    io = result(sim.cmd("sim_io"), "sim_io")
    assert (int(io["dac_bytes"]), int(io["dac_errors"]), int(io["dac_lasts"])) == (total, 0, 1), io

# Arguments -------------------------------------------------------------------------------------

@pytest.mark.xdist_group("stream-args")
def test_bad_start_arguments_are_refused_with_what_is_allowed(start_sim):
    sim = start_sim(ssd=["--ssd-profile", "ideal", "--ns-size", "16GiB"])
    init(sim)
    for args, message in [
        ("0 8 input=adc",            "invalid input 'adc'"),
        ("0 8 policy=maybe",         "invalid policy 'maybe'"),
        ("0 8 post=1",               "post= is for ring recordings"),
        ("0 ring=8 post=16",         "exceeds the ring"),
        ("0 ring=7 chunk=2048",      "not a whole, non-zero number of rows"),
        ("0 8 buffer=1024",          "buffer of 1048576 KiB"),
        ("0 until-stop=x",           "invalid until-stop region 'x'"),
        ("0 8 trim-ahead=8",         "reaches past the region"),
        ("100 8",                    "not a multiple of the chunk"),
        ("0 8 surplus=some",         "invalid surplus 'some'"),
        # 65600 rows ahead of a 72000-row ring: more than the recorder's trim distance (16 bits).
        ("0 ring=9000 trim-ahead=8200", "is more than the recorder trims ahead: 65535 rows of 1 x 128 KiB (8191 MiB)"),
        # rate x 1e6 x 65536 is beyond 64 bits: refused, not wrapped to a slow rate.
        ("0 8 rate=281480000",       "rate 281480000 MB/s: 1..12799 MB/s"),
        ("0 1073741825",             "invalid size '1073741825' MiB: 1..1073741824"),
        # 64 TiB and more is a size (8 drives of 32 TB are 256 TB): here beyond the namespace.
        ("0 70000000",               "is outside nvme0's namespace"),
    ]:
        out = sim.cmd(f"rec_start {args}")
        assert message in out and "RESULT name=rec_start" not in out, (args, out)
    for cmd, message in [("rec_stop", "no recording or replay was started"),
                         ("rec_set policy=maybe", "invalid policy 'maybe'"), ("rec_set color=red", "unknown option 'color'"), ("play_start 0 8 output=dac", "invalid output 'dac'"),
                         ("rec_wait 0", "invalid timeout '0'")]:
        assert message in sim.cmd(cmd), cmd

@pytest.mark.xdist_group("stream-args")
def test_the_ring_is_the_default_buffer_unless_buffer_says_otherwise(start_sim):
    """RECORDER_BUFFER_DEFAULT (64 MiB) unless `buffer=` gives a size or `all` (the DRAM window,
    512 MiB here, at most RECORDER_SLOTS chunks); a ring recording keeps at most its region."""
    sim = start_sim(ssd=["--ssd-profile", "ideal", "--ns-size", "16GiB"])
    init(sim)
    for args, slots in [("0 8",                 64*MiB // (128*1024)),
                        ("0 8 buffer=all",      4096),
                        ("0 8 buffer=16",       128),
                        ("0 8 chunk=4",         4096),           # 16384 chunks of 4 KiB: the slots
                        ("0 8 chunk=1024",      64),
                        ("0 ring=4",            32),             # the region
                        ("0 ring=4 buffer=all", 4096)]:
        out = sim.cmd(f"rec_start {args} input=pattern seed=5")
        assert int(result(out, "rec_start")["ring_slots"]) == slots, (args, out)
        if "ring=" in args:
            sim.cmd("rec_trigger")
        wait(sim)
        st = status(sim)
        check_balance(st)
        assert st["state"] == "done" and st["ring_slots"] == slots and st["bytes_dropped"] == 0, (args, st)
    out = sim.cmd("rec_start 0 8 buffer=al")
    assert "invalid buffer 'al' MiB: 1..1073741824, or all" in out and "RESULT name=rec_start" not in out, out

@pytest.mark.xdist_group("stream-args")
def test_rec_raw_is_refused_while_a_recording_runs_and_the_recording_goes_on(start_sim):
    sim = start_sim(ssd=["--ssd-profile", "ideal", "--ns-size", "1GiB"])
    init(sim)
    assert "RESULT name=rec_start" in sim.cmd("rec_start 0 8 input=pattern rate=100 seed=77")
    out = sim.cmd("rec_raw record 0 256 chunks=1")
    assert "the recorder is busy" in out and "RESULT name=rec_raw" not in out, out
    out = sim.cmd("rec_fill 0x60000000 0x10000")
    assert "overlaps the recorder's ring (0x60000000..0x7fffffff) while it runs" in out, out
    assert status(sim)["state"] == "running"
    sim.cmd("rec_stop")
    wait(sim)
    st = status(sim)
    assert st["status"] == 2 and st["bytes_kept"] > 0, st              # stopped, as asked
    check_balance(st)
    assert read_ns(sim, 0, st["bytes_kept"]) == pattern_bytes(77, st["bytes_kept"])

# A SoC with user streams only --------------------------------------------------------------------

@pytest.mark.xdist_group("stream-user-only")
def test_a_soc_with_user_streams_only_builds_and_records_a_32_bit_adc(start_sim):
    """No test pattern source or checker in the SoC (the BIOS library builds without them); a 32-bit
    ADC in its own 100 MHz domain recorded through the AXI4-Stream port and replayed to the DAC."""
    total, seed = 2*MiB + 4, 0x3232
    sim = start_sim(ssd=["--ssd-profile", "mlc", "--ns-size", "1GiB"], test_streams=False, input_width=32,
        simio=simio_args("adc", rate_mbps=300, total_bytes=total, seed=seed, width=32))
    init(sim)
    assert "this build has none" in sim.cmd("rec_record 0 8")
    assert "input=pattern: this build has no such input (inputs: user)" in sim.cmd("rec_start 0 8 input=pattern")
    out = sim.cmd("rec_start 0 until-stop input=user policy=drop")
    assert "RESULT name=rec_start" in out, out
    wait(sim)
    st = status(sim)
    check_balance(st)
    assert st["status"] == REC_STATUS_INPUT_END and st["bytes_in"] == total and st["bytes_dropped"] == 0, st
    assert read_ns(sim, 0, total) == pattern_bytes(seed, total)
    assert read_ns(sim, total, 128*1024 - 4) == bytes(128*1024 - 4)      # the last chunk padded
    out = sim.cmd(f"play_start 0 3 output=user bytes={total}")
    assert "RESULT name=play_start" in out, out
    wait(sim)
    io = result(sim.cmd("sim_io"), "sim_io")
    assert (int(io["dac_bytes"]), int(io["dac_errors"]), int(io["dac_lasts"])) == (total, 0, 1), io
