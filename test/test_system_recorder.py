#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recorder datapath in the full-system simulation: test stream -> LiteDRAM ring -> NVMe Write
(record) and NVMe Read -> LiteDRAM ring -> pattern checker (replay), against the simulated SSD.
Data is checked by the hardware checker and in the SSD's namespace file (Python)."""

import pytest

from conftest import parse_results, result, ssd_ctl as ctl
from pinned import pinned
from patterns import pattern_bytes
from literecorder.sim.ssd import send_control

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("recorder")]

MiB     = 1 << 20
NS_SIZE = 256*MiB
LBAS    = NS_SIZE//512

def read_ns(sim, offset, nbytes):
    with open(sim.devices[0][1]["ns_file"], "rb") as f:
        f.seek(offset)
        return f.read(nbytes)

def record(sim, args, ok=True):
    out = sim.cmd(f"rec_record {args}", timeout=600)
    r = result(out, "rec_record")
    assert r["ok"] == ("1" if ok else "0"), out
    return r, out

def replay(sim, args, ok=True):
    out = sim.cmd(f"rec_replay {args}", timeout=600)
    r = result(out, "rec_replay")
    assert r["ok"] == ("1" if ok else "0"), out
    return r, out

@pytest.fixture(scope="module")
def sim(request):
    from conftest import get_build, ssd_devices, SimSession, _run_name
    build = get_build()
    s = SimSession(build, name=_run_name(request) + "-rec",
        devices=ssd_devices(["--ssd-profile", "ideal", "--ns-size", str(NS_SIZE)], 1, build.sys_clk_freq))
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    yield s
    s.close()

@pytest.fixture
def healthy(sim):
    """Faults cleared and the drive initialized before each test."""
    ctl(sim, "fault clear all")
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    return sim

def test_record_then_replay_exact_data(healthy):
    sim = healthy
    lba, seed = 4096, 0x5eed0001
    r, _ = record(sim, f"{lba} 16 seed={seed}")
    assert (r["bytes"], r["chunks"], r["bytes_in"], r["lost_beats"]) == (str(16*MiB), "128", str(16*MiB), "0")
    assert int(r["ring_peak"]) >= 1
    pinned("system.recorder.ideal.record_16mib.mbps", float(r["mbps"]))
    pinned("system.recorder.ideal.record_16mib.ring_peak", int(r["ring_peak"]), rel=0.1)
    # The namespace holds the stream, byte for byte, from the first LBA on.
    assert read_ns(sim, lba*512, 16*MiB) == pattern_bytes(seed, 16*MiB)
    r, _ = replay(sim, f"{lba} 16 seed={seed}")
    assert (r["bytes"], r["errors"], r["extra_beats"]) == (str(16*MiB), "0", "0")
    assert int(r["checked_beats"])*64 == 16*MiB
    pinned("system.recorder.ideal.replay_16mib.mbps", float(r["mbps"]))

def test_replay_with_another_seed_fails_every_word(healthy):
    sim = healthy
    record(sim, "0 2 seed=7")
    r, out = replay(sim, "0 2 seed=8")
    assert r["errors"] == str(2*MiB//4) and r["first_error"] == "0", out
    assert "word errors, first at byte 0" in out

def test_early_stop_keeps_older_data_behind(healthy):
    """Seed test #05: a second recording stopped early; the first one's data remains after it."""
    sim = healthy
    record(sim, "8192 8 seed=100")
    r, _ = record(sim, "8192 8 seed=200 stop=3")
    assert (r["bytes"], r["chunks"], r["bytes_in"]) == (str(3*MiB), "24", str(3*MiB))
    assert replay(sim, "8192 3 seed=200")[0]["errors"] == "0"
    r, _ = replay(sim, "8192 8 seed=200")
    # Every word of the 5 MiB behind that differs from seed 200's pattern is an error, no more.
    behind = memoryview(pattern_bytes(100, 5*MiB, first_word=3*MiB//4)).cast("I")
    want = memoryview(pattern_bytes(200, 5*MiB, first_word=3*MiB//4)).cast("I")
    assert r["first_error"] == str(3*MiB) and int(r["errors"]) == sum(a != b for a, b in zip(behind, want))
    assert read_ns(sim, 8192*512, 3*MiB) == pattern_bytes(200, 3*MiB)
    assert read_ns(sim, 8192*512 + 3*MiB, 5*MiB) == pattern_bytes(100, 5*MiB, first_word=3*MiB//4)

def test_stop_inside_a_chunk_pads_it_with_zeros(healthy):
    sim = healthy
    record(sim, "16384 8 seed=300 chunk=2048")
    r, _ = record(sim, "16384 8 seed=400 chunk=2048 stop=3")
    # 3 MiB of data in 2 MiB chunks: the second chunk is padded.
    assert (r["bytes"], r["chunks"], r["bytes_in"]) == (str(4*MiB), "2", str(3*MiB))
    assert read_ns(sim, 16384*512, 3*MiB) == pattern_bytes(400, 3*MiB)
    assert read_ns(sim, 16384*512 + 3*MiB, MiB) == bytes(MiB)
    assert read_ns(sim, 16384*512 + 4*MiB, 4*MiB) == pattern_bytes(300, 4*MiB, first_word=4*MiB//4)

def test_strict_source_faster_than_the_link_loses_beats_and_replay_sees_it(healthy):
    sim = healthy
    r, _ = record(sim, "0 8 seed=11 rate=3000 strict=1")
    assert r["lost_beats"] == "0"
    assert replay(sim, "0 8 seed=11")[0]["errors"] == "0"
    r, _ = record(sim, "0 8 seed=12 rate=8000 strict=1 buffer=1")
    lost = int(r["lost_beats"])
    assert lost > 0
    # A source of 8000 MB/s into a drive of 3653 and a ring of 2 MiB (8 on-chip slots, 1 MiB of DRAM
    # slots): what the drive did not take while the source ran, less what the ring holds, is lost
    # (the drive takes on-chip chunks while the DRAM holds its deficit). (With the default 64 MiB of
    # DRAM nothing is lost since the on-chip chunks are written ahead of the DRAM backlog: before,
    # the DRAM carried every byte twice and the source lost about 8300 beats to its bandwidth.)
    # The count depends on the drive's and the ring's state when the source starts, and that on
    # the wall time the console waits between commands: 10 % around the pin.
    assert int(r["peak_onchip"]) == 8 and int(r["peak_dram"]) == 8 and int(r["bytes_spilled"]) == 1*MiB, r
    pinned("system.recorder.ideal.strict_8000.lost_beats", lost, rel=0.10)
    # What was not lost was recorded; the recording ended with the source (last chunk padded).
    assert int(r["bytes_in"]) + lost*64 == 8*MiB
    assert int(r["bytes"]) == -(-int(r["bytes_in"]) // (128*1024)) * 128*1024
    # Lost beats shift the stream: the checker sees it.
    r, _ = replay(sim, "0 8 seed=12")
    assert int(r["errors"]) > 0
    pinned("system.recorder.ideal.strict_8000.replay_errors", int(r["errors"]))

def test_write_error_stops_recording_with_the_status_in_words(healthy):
    sim = healthy
    ctl(sim, "fault add write-fault:lba=2048-2055")
    r, out = record(sim, "0 4 seed=1", ok=False)
    assert "Write Fault (SCT 2, SC 0x80" in out, out
    assert "of the chunk at LBA 2048 failed" in out, out
    # The engine stays stopped until nvme_init; a new recording is refused before anything is sent.
    out = sim.cmd("rec_record 0 1")
    assert "nvme0: the queue engine stopped on an earlier error (nothing was sent)" in out, out
    assert "RESULT name=rec_record" not in out
    ctl(sim, "fault clear all")
    assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    record(sim, "0 4 seed=1")
    assert replay(sim, "0 4 seed=1")[0]["errors"] == "0"

def test_read_error_stops_replay(healthy):
    sim = healthy
    record(sim, "0 2 seed=3")
    ctl(sim, "fault add read-error:lba=1024")
    r, out = replay(sim, "0 2 seed=3", ok=False)
    assert "Unrecovered Read Error (SCT 2, SC 0x81" in out and "read of the chunk at LBA 1024" in out, out

def test_silent_bit_flip_is_caught_by_the_checker(healthy):
    sim = healthy
    record(sim, "0 2 seed=21")
    ctl(sim, "fault add bitflip:op=read,bit=12345")
    r, _ = replay(sim, "0 2 seed=21")
    assert r["errors"] == "1"
    assert r["first_error"] == str((12345//8)//64*64)

@pytest.mark.parametrize("args, message", [
    ("0 0",                  "invalid size '0' MiB"),
    ("x 1",                  "invalid LBA 'x'"),
    ("0 1 speed=3",          "unknown option 'speed'"),
    ("0 1 seed",             "options are key=value"),
    ("0 1 chunk=4096",       "exceeds nvme0's maximum transfer (MDTS) of 2048 KiB"),
    ("0 1 chunk=3",          "invalid chunk '3' KiB"),
    ("0 1 qd=0",             "invalid qd '0'"),
    ("0 1 ports=5",          "invalid ports '5'"),
    ("0 4 stop=4",           "invalid stop '4' MiB"),
    ("0 1 rate=20000",       "rate 20000 MB/s"),
    (f"{LBAS - 100} 1",      "outside nvme0's namespace"),
])
def test_bad_arguments_are_refused_before_anything_is_sent(healthy, args, message):
    sim = healthy
    before = result(sim.cmd("nvme_status"), "nvme_status")["submitted"]
    out = sim.cmd(f"rec_record {args}")
    assert message in out, out
    assert "RESULT name=rec_record" not in out
    assert result(sim.cmd("nvme_status"), "nvme_status")["submitted"] == before

def test_abort_drops_the_partial_chunk(healthy):
    sim = healthy
    record(sim, "24576 8 seed=600 chunk=2048")
    r, out = record(sim, "24576 8 seed=700 chunk=2048 abort=3")
    # 3 MiB taken: one whole 2 MiB chunk is written, the partial one is dropped.
    assert (r["bytes"], r["chunks"], r["bytes_in"], r["aborted"], r["dropped"]) == \
        (str(2*MiB), "1", str(3*MiB), "1", str(MiB)), out
    assert "abort dropped the last 1048576 bytes" in out
    assert read_ns(sim, 24576*512, 2*MiB) == pattern_bytes(700, 2*MiB)
    assert read_ns(sim, 24576*512 + 2*MiB, 6*MiB) == pattern_bytes(600, 6*MiB, first_word=2*MiB//4)
    assert "stop= and abort= exclude each other" in sim.cmd("rec_record 0 8 stop=1 abort=2")

def test_a_running_recording_keeps_its_queue_engine(healthy):
    """While a recording runs, a benchmark, an I/O command through the engine and a PCIe scan of its
    port are refused (they took the engine or the drive's DMA away: the recording stalled); the
    recording ends complete and exact."""
    sim = healthy
    lba, seed = 8192, 0x5eed0009
    out = sim.cmd(f"rec_start {lba} 2 rate=40 seed={seed}")
    assert "RESULT name=rec_start" in out, out
    refused = "the queue engine serves the running recording or replay (rec_stop / rec_abort / rec_wait first)"
    out = sim.cmd("nvme_bench seq write 128 4 8")
    assert f"Error: nvme0: {refused}" in out and "RESULT name=nvme_bench ok=0" in out, out
    out = sim.cmd(f"nvme_read {lba} 8")
    assert refused in out and result(out, "nvme_read")["ok"] == "0", out
    out = sim.cmd("pcie_scan 0")
    assert f"Error: pcie0: not scanned: {refused}" in out, out
    assert result(sim.cmd("rec_status"), "rec_status")["state"] == "running"
    out = sim.cmd("rec_wait", timeout=600)
    st = result(sim.cmd("rec_status"), "rec_status")
    assert (st["state"], st["bytes_committed"]) == ("done", str(2*MiB)), out
    assert read_ns(sim, lba*512, 2*MiB) == pattern_bytes(seed, 2*MiB)
    # Once the recording is over, the same commands run.
    assert result(sim.cmd(f"nvme_read {lba} 8"), "nvme_read")["ok"] == "1"
    assert result(sim.cmd("nvme_bench seq read 128 4 1"), "nvme_bench")["mbps"] != "0.000"

def test_selftest_suite_passes(healthy):
    sim = healthy
    out = sim.cmd("rec_selftest region=8 sweep=16", timeout=900)
    tests = [d for d in parse_results(out) if d.get("name") == "rec_selftest"]
    assert [(d["test"], d["pass"]) for d in tests] == [(str(i), "1") for i in range(12)], out
    assert result(out, "rec_selftest_summary") == {"name": "rec_selftest_summary", "tests": "12", "failed": "0"}
    assert "Overall Test Summary: PASS" in out
    sweep = [d for d in parse_results(out) if d.get("name") == "rec_selftest_sweep"]
    assert [(d["op"], d["chunks"]) for d in sweep] == [(op, str(n)) for n in (1, 2, 4, 8, 16) for op in ("write", "read")]

def test_selftest_reports_a_failure(healthy):
    sim = healthy
    ctl(sim, "fault add bitflip:op=read,count=inf")
    out = sim.cmd("rec_selftest region=8 test=10", timeout=900)
    assert "TEST #10: FAIL" in out and "FAIL: read back data differs" in out, out
    assert result(out, "rec_selftest_summary")["failed"] == "1"
    assert "Overall Test Summary: FAIL" in out
    for bad, message in [
        ("test=12",   "Error: invalid test '12': 0..11"),
        ("region=0",  "Error: invalid region '0' MiB: a positive number (default: the whole namespace)"),
        ("ports=9",   "Error: invalid ports '9': 'all' or a port 0..0"),
        ("bogus",     "rec_selftest [ports=all|N] [region=MiB] [sweep=N] [test=N] [break=1] [force=1]   "
                      "(overwrites the drives from LBA 0; a drive with a catalog only with force=1)"),
    ]:
        out = sim.cmd(f"rec_selftest {bad}")
        assert out.strip() == message, out

# The ring's two tiers -----------------------------------------------------------------------------

def test_a_stalled_link_spills_to_dram_and_the_recording_comes_back_on_chip(healthy):
    """The strict test source (2000 MB/s, it cannot wait: its chunks may go to DRAM slots) while the
    link stalls for 3 ms (a retrain): the on-chip slots fill, the DRAM takes the rest, then the
    chunks go on-chip again. Nothing is lost, every byte is at its place on the drive."""
    sim = healthy
    lba, seed, mib = 8192, 77, 32
    out = sim.cmd(f"rec_start {lba} {mib} seed={seed} rate=2000 strict=1")
    assert result(out, "rec_start")["first_lba"] == str(lba), out
    ctl(sim, "fault add retrain:for_us=3000")
    sim.cmd("rec_wait", timeout=600)
    st = result(sim.cmd("rec_status"), "rec_status")
    assert st["status"] == "1" and st["bytes_in"] == st["bytes_committed"] == str(mib*MiB), st
    assert st["bytes_dropped"] == "0" and st["bytes_buffered"] == "0", st
    spilled = int(st["bytes_spilled"])
    # Part of the recording went through DRAM slots (the stall), not all of it (it came back).
    assert 0 < spilled < mib*MiB and spilled % (128*1024) == 0, st
    assert int(st["peak_dram"]) >= 1 and st["peak_onchip"] == "8" and st["onchip_slots"] == "8", st
    assert read_ns(sim, lba*512, mib*MiB) == pattern_bytes(seed, mib*MiB)
    r, _ = replay(sim, f"{lba} {mib} seed={seed}")
    assert r["errors"] == "0" and r["bytes_spilled"] == "0" and r["peak_dram"] == "0", r

def test_a_lossless_source_waits_for_on_chip_slots_and_never_uses_the_dram(healthy):
    sim = healthy
    ctl(sim, "fault add retrain:for_us=1000")
    r, _ = record(sim, "0 8 seed=78")
    assert r["lost_beats"] == "0" and int(r["stalls"]) > 0, r
    assert (r["bytes_spilled"], r["peak_dram"], r["peak_onchip"]) == ("0", "0", "8"), r
    # staging=off: the DRAM ring alone (every byte through it, as before the on-chip slots).
    r, _ = record(sim, "0 8 seed=79 staging=off")
    assert (r["bytes_spilled"], r["peak_onchip"], r["onchip_slots"]) == (str(8*MiB), "0", "0"), r
    assert read_ns(sim, 0, 8*MiB) == pattern_bytes(79, 8*MiB)
