#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The on-disk catalog end to end: recordings made by the BIOS in the full-system simulation (1 and
2 simulated drives, and QEMU's NVMe controller) are listed, extracted and verified by the host tool
`literec` from the namespace files / disk image, byte for byte; SigMF metadata loads with the sigmf
package; a simulation killed mid-recording leaves the entry of its last checkpoint; corrupt
catalogs, unknown versions, a missing drive and swapped drives are detected by the BIOS and by
`literec`."""

import os
import sys
import json
import time
import shutil
import struct
import zlib
import subprocess

import pytest

from conftest import result, parse_results, literec
from catalog_images import stream
from literecorder.host import catalog as cat, drives as drv
from literecorder.sim.qemu import qemu_available

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("catalog")]

MiB     = 1 << 20
ROOT    = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AREA    = 2048                      # first data LBA (1 MiB catalog area, 512-byte LBAs)

def listing(*paths):
    return json.loads(literec("list", *paths, "--json").stdout)["recordings"]

def ok(sim, command, name=None, timeout=600):
    out = sim.cmd(command, timeout=timeout)
    r = result(out, name or command.split()[0])
    assert r.get("ok", "1") == "1", out
    return r, out

def record(sim, args, timeout=600):
    out = sim.cmd(f"rec_record {args}", timeout=timeout)
    r = result(out, "rec_record")
    assert r["ok"] == "1", out
    return r, out

def ns(sim, i=0):
    return sim.devices[i][1]["ns_file"]

def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)

def reseal(block, **fields):
    b = bytearray(block)
    for off, val in fields.values():
        b[off:off + len(val)] = val
    struct.pack_into("<I", b, 0xFFC, zlib.crc32(bytes(b[:0xFFC])))
    return bytes(b)

def new_session(request, n_ssds, ssd, tag, tmpdir):
    """A booted simulation whose drives are fresh files in tmpdir (namespace files persist across runs)."""
    from conftest import get_build, ssd_devices, SimSession, _run_name
    build = get_build(n_ssds=n_ssds) if n_ssds > 1 else get_build()
    if "--ns-file" not in ssd:
        ssd = ssd + (["--qemu-image", os.path.join(str(tmpdir), "qemu.img")] if "qemu" in ssd else
            ["--ns-file", os.path.join(str(tmpdir), "ssd{i}.img")])
    return SimSession(build, name=_run_name(request) + "-" + tag,
        devices=ssd_devices(ssd, n_ssds, build.sys_clk_freq))

# One drive ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def one(request, tmp_path_factory):
    s = new_session(request, 1, ["--ssd-profile", "ideal", "--ns-size", "256MiB"], "cat1", tmp_path_factory.mktemp("one"))
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    yield s
    s.close()

@pytest.fixture
def fresh_one(request, tmp_path):
    """A simulation of its own on a blank drive: the test that starts from "no catalog" does not
    depend on running before the module's other tests (which format the shared drive)."""
    s = new_session(request, 1, ["--ssd-profile", "ideal", "--ns-size", "256MiB"], "cat1-fresh", tmp_path)
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    yield s
    s.close()

def test_no_catalog_then_format_record_list_extract(fresh_one):
    sim, img = fresh_one, ns(fresh_one)
    # Without a catalog: explicit LBAs still record (and say so), auto names rec_format.
    out = sim.cmd("rec_list")
    assert "nvme0: no catalog (rec_format yes creates one)" in out and result(out, "rec_list")["sets"] == "0"
    out = sim.cmd("rec_record auto 1")
    assert "has no catalog: rec_format yes [ports=...] creates one" in out and "RESULT name=rec_record" not in out
    r, out = record(sim, "4096 1 seed=3")
    assert "nvme0 has no catalog: nothing records this recording" in out and "RESULT name=catalog_rec" not in out
    # rec_format without `yes` only tells.
    before = open(img, "rb").read(8192)
    out = sim.cmd("rec_format")
    assert "nvme0 would become drive 0 of a new set of 1: LBAs 0..2047 (1 MiB) rewritten; now: no catalog" in out
    assert result(out, "rec_format") == {"name": "rec_format", "ok": "0", "dry_run": "1", "drives": "1", "recordings": "0"}
    assert open(img, "rb").read(8192) == before
    r, _ = ok(sim, "rec_format yes")
    assert r["drives"] == "1" and len(r["set"]) == 16
    assert open(img, "rb").read(8)[:8] == b"LRCATHDR"

    # Two recordings, the first with metadata and a wall clock.
    sim.cmd("rec_clock 1700000000")
    out = sim.cmd("rec_meta name=cap1 datatype=ri16_le rate=20M text=first")
    assert "name=cap1 datatype=ri16_le rate=20000000.000" in out
    sim.cmd("rec_meta text+=capture of the day")
    r, out = record(sim, "auto 4 seed=77")
    c = result(out, "catalog_rec")
    assert (c["id"], c["state"], c["bytes"], r["lba"]) == ("1", "complete", str(4 * MiB), str(AREA))
    r, out = record(sim, "auto 8 seed=78 stop=3")
    c = result(out, "catalog_rec")
    assert (c["id"], c["bytes"], r["lba"]) == ("2", str(3 * MiB), str(AREA + 4 * MiB // 512))
    out = sim.cmd("rec_list")
    entries = [d for d in parse_results(out) if d["name"] == "rec_list_entry"]
    assert [(e["id"], e["state"], e["bytes"], e["lba"], e["seed"], e["label"]) for e in entries] == [
        ("1", "complete", str(4 * MiB), str(AREA), "77", "cap1"),
        ("2", "complete", str(3 * MiB), str(AREA + 8192), "78", "-")]
    # The metadata was for the first recording only.
    assert "datatype=- rate=0.000" in sim.cmd("rec_meta")

    # The host tool reads the namespace file as a PC reads the drive.
    recs = listing(img)
    assert [(x["id"], x["bytes"], x["state"], x["order"], x["start_lba"], x["seed"]) for x in recs] == [
        (1, 4 * MiB, "complete", [0], {"0": AREA}, 77), (2, 3 * MiB, "complete", [0], {"0": AREA + 8192}, 78)]
    assert recs[0]["datatype"] == "ri16_le" and recs[0]["sample_rate"] == 20e6
    assert recs[0]["text"] == "first capture of the day"
    assert 1_700_000_000_000_000 <= recs[0]["start_unix_us"] < 1_700_000_001_000_000
    literec("extract", img, "--id", 1, "-o", os.path.dirname(img) + "/r1", "--sigmf", "--no-progress")
    data = open(os.path.dirname(img) + "/r1.sigmf-data", "rb").read()
    assert data == stream(77, 4 * MiB)
    from sigmf import sigmffile
    m = sigmffile.fromfile(os.path.dirname(img) + "/r1.sigmf-meta")
    assert (m.get_global_field("core:datatype"), m.get_global_field("core:sample_rate")) == ("ri16_le", 20e6)
    assert m.get_capture_info(0)["core:datetime"].startswith("2023-11-14T22:13:2")
    assert m.read_samples(0, 4).shape == (4,) and len(m.read_samples()) == 2 * MiB
    literec("extract", img, "--id", 2, "-o", os.path.dirname(img) + "/r2", "--no-progress")
    assert open(os.path.dirname(img) + "/r2", "rb").read() == stream(78, 3 * MiB)
    r = literec("verify", img, "--id", 2)
    assert "RESULT name=verify id=2 bytes=3145728 words=786432 errors=0" in r.stdout

    # Explicit LBAs are checked against the catalog area and the other recordings.
    out = sim.cmd("rec_record 256 1")
    assert "LBA 256 is inside the catalog area (LBAs 0..2047)" in out and result(out, "rec_record")["chunks"] == "0"
    out = sim.cmd(f"rec_record {AREA + 8192 + 256} 1")
    assert f"overlap recording 2 (LBAs {AREA + 8192}..{AREA + 8192 + 6143} on nvme0)" in out
    assert result(out, "rec_record")["chunks"] == "0"
    # Replay by id (the seed comes from the catalog).
    r = result(sim.cmd("rec_replay id=2", timeout=600), "rec_replay")
    assert (r["ok"], r["errors"], r["lba"], r["checked_beats"]) == ("1", "0", str(AREA + 8192), str(3 * MiB // 64))

    # Delete with deallocate: gone from both listings, its LBAs read zeros, ids are not reused and
    # auto goes after the last live recording.
    r, out = ok(sim, "rec_delete 1 trim")
    assert f"nvme0: deallocated LBAs {AREA}..{AREA + 8191}" in out
    assert [x["id"] for x in listing(img)] == [2]
    with open(img, "rb") as f:
        f.seek(AREA * 512)
        assert f.read(MiB) == bytes(MiB)
    r, out = record(sim, "auto 1 seed=5")
    assert result(out, "catalog_rec")["id"] == "3" and r["lba"] == str(AREA + 8192 + 6144)
    assert "no recording with id 1" in sim.cmd("rec_show 1")
    out = sim.cmd("rec_show 3")
    assert "recording 3: complete, fixed, source test pattern (seed 5)" in out
    # It took the deleted recording's slot 0, its copies' sequence going on (3 deleted, 4 begin, 5 end).
    assert result(out, "rec_show")["seq"] == "5"
    assert [(d["id"], d["slot"]) for d in parse_results(sim.cmd("rec_list")) if d["name"] == "rec_list_entry"] == \
        [("3", "0"), ("2", "1")]

@pytest.mark.parametrize("bad, message", [
    ("rec_meta datatype=int16",   "datatype 'int16': a SigMF datatype"),
    ("rec_meta rate=fast",        "rate 'fast': a frequency in Hz"),
    ("rec_meta colour=red",       "unknown key 'colour'"),
    ("rec_clock yesterday",       "invalid time 'yesterday'"),
    ("rec_checkpoint 0",          "invalid interval '0' ms: 1..60000"),
    ("rec_show x",                "invalid id 'x'"),
    ("rec_delete 7 now",          "unknown option 'now'"),
    ("rec_format yes ports=3",    "invalid ports '3'"),
    ("rec_replay id=0",           "invalid id '0'"),
])
def test_bad_arguments(one, bad, message):
    assert message in one.cmd(bad)

def test_checkpoints_cost_no_measurable_time(one):
    sim = one
    ok(sim, "rec_format yes")
    sim.cmd("rec_checkpoint 60000")
    r0, out = record(sim, "auto 16 seed=1")
    assert result(out, "catalog_rec")["checkpoints"] == "0"
    sim.cmd("rec_checkpoint 1")
    r1, out = record(sim, "auto 16 seed=2")
    c = result(out, "catalog_rec")
    n = int(c["checkpoints"])
    # A checkpoint (flush, then the entry) starts 1 ms after the previous one ended: two or more in
    # a ~4.7 ms recording.
    assert n >= 2, out
    sim.cmd("rec_checkpoint 100")
    print(f"16 MiB: {r0['mbps']} MB/s without checkpoints, {r1['mbps']} MB/s with {n} (every 1 ms); "
        f"longest checkpoint {c['ckpt_max_cycles']} cycles, CPU {c['ckpt_cpu_cycles']} cycles in all")
    assert float(r1["mbps"]) >= 0.99 * float(r0["mbps"])
    assert literec("verify", ns(sim), "--id", 2).returncode == 0

def test_corrupt_and_unknown_catalogs_are_detected(one):
    sim, img = one, ns(one)
    ok(sim, "rec_format yes")
    record(sim, "auto 2 seed=12")
    # The entry was written at begin (seq 1, copy A, state recording) and at the end (seq 2, copy B).
    blk_b = cat.entry_block(0, 1) * 4096
    patch(img, blk_b + 0xC0, b"\x55")
    out = sim.cmd("rec_show 1")
    assert "recording 1: interrupted" in out and result(out, "rec_show")["seq"] == "1", out
    r = literec("list", img, "--json")
    assert "entry slot 0 copy B: CRC mismatch" in r.stderr and json.loads(r.stdout)["recordings"][0]["state"] == "interrupted"
    patch(img, cat.entry_block(0, 0) * 4096 + 0xC0, b"\x55")
    out = sim.cmd("rec_list")
    assert "catalog slot 0 is corrupt on every drive of the set (CRC)" in out
    assert result(out, "rec_list")["corrupt"] == "1"
    r = literec("list", img, rc=2)
    assert "entry slot 0 copy A: CRC mismatch" in r.stderr
    # A new recording does not take the corrupt slot.
    r, out = record(sim, "auto 1 seed=13")
    assert "slot 1 of set" in out
    # Header: one copy corrupt is survived, both are refused (and nothing records on the drive).
    patch(img, 0x30, b"\x01")
    assert result(sim.cmd("rec_list"), "rec_list")["recordings"] == "1"
    patch(img, 4096 + 0x30, b"\x01")
    out = sim.cmd("rec_list")
    assert "nvme0: corrupt catalog header (CRC mismatch in both copies)" in out
    out = sim.cmd("rec_record 200192 1")
    assert "corrupt catalog header" in out and result(out, "rec_record")["ok"] == "0"
    r = literec("list", img, rc=2)
    assert f"{img}: corrupt catalog header: drive header copy A: CRC mismatch" in r.stderr
    # An unknown format version.
    for copy in (0, 1):
        with open(img, "rb") as f:
            f.seek(copy * 4096)
            blk = f.read(4096)
        patch(img, copy * 4096, reseal(blk, v=(0x30, b"\x00"), ver=(8, b"\x02")))
    assert "catalog format version 2 is not supported (this BIOS writes version 1)" in sim.cmd("rec_list")
    assert "catalog format version 2 is not supported (this literec reads version 1)" in literec("list", img, rc=2).stderr
    ok(sim, "rec_format yes")
    assert listing(img) == []

def test_job_layer_start_drops_ring_and_replay_by_id(one):
    """rec_start (the job API) enters the catalog like rec_record: its end is seen by rec_wait; an
    until-stop recording with the drop policy keeps the recorder's drop log (as data offsets); a
    ring keeps its trigger and oldest byte; play_start/rec_replay id= replay them (a wrapped ring
    from its oldest byte)."""
    from conftest import ssd_ctl
    sim, img = one, ns(one)
    ok(sim, "rec_format yes")
    out = sim.cmd("rec_start auto 1 seed=41")
    assert result(out, "rec_start")["first_lba"] == str(AREA) and "catalog: recording 1 " in out, out
    out = sim.cmd("rec_wait", timeout=600)
    c = result(out, "catalog_rec")
    assert (c["id"], c["state"], c["bytes"], c["dropped"]) == ("1", "complete", str(MiB), "0"), out

    # Until-stop, drop policy: a 1000 MB/s source that cannot wait, a drive held to 500 MB/s (no
    # write buffer), a ring of 8 chunks (the on-chip slots alone: spill=0). Everything the recorder
    # dropped is in the catalog, in place.
    rate, buf = (ssd_ctl(sim, f"get {k}").split("=")[1] for k in ("write_rate", "write_buf"))
    ssd_ctl(sim, "set write_rate=500000000 write_buf=4096")
    sim.cmd("rec_set rate=1000 strict=1 policy=drop buffer=1 spill=0")
    try:
        out = sim.cmd("rec_start auto until-stop=2 seed=42")
        assert result(out, "rec_start")["first_lba"] == str(AREA + MiB // 512), out
        out = sim.cmd("rec_wait", timeout=600)
    finally:
        sim.cmd("rec_set clear")
        ssd_ctl(sim, f"set write_rate={rate} write_buf={buf}")
    c = result(out, "catalog_rec")
    st = result(sim.cmd("rec_status"), "rec_status")
    assert st["status"] == "4" and st["bytes_committed"] == str(2 * MiB), st     # capacity reached
    ndrops, dropped = int(st["drops"]), int(st["bytes_dropped"])
    assert 0 < ndrops <= 207 and dropped > 0, st
    assert (c["id"], c["state"], c["bytes"], c["dropped"]) == ("2", "complete", str(2 * MiB), str(dropped))
    log = [(int(d["pos"]), int(d["len"])) for d in parse_results(sim.cmd(f"rec_drops 0 {ndrops}"))
        if d["name"] == "rec_drop"]
    assert len(log) == ndrops and sum(n for _, n in log) == dropped
    d = drv.assemble([img])
    d.load_catalog()
    e = [x for x in d.recordings() if x.id == 2][0]
    d.drive(0).close()
    gaps, before = [], 0
    for pos, n in log:
        gaps.append((pos - before, n))
        before += n
    assert (e.drops_total, [(x.data_offset, x.nbytes) for x in e.drops]) == (ndrops, gaps)
    # Extracted with the gaps zero-filled: the source's stream with the dropped bytes zeroed.
    literec("extract", img, "--id", 2, "-o", os.path.dirname(img) + "/drops", "--no-progress")
    expect = bytearray(stream(42, 2 * MiB + dropped))
    for pos, n in log:
        expect[pos:pos + n] = bytes(n)
    assert open(os.path.dirname(img) + "/drops", "rb").read() == bytes(expect)

    # Ring of 2 MiB that wraps (2000 MB/s: a lap every 1 ms), then the trigger, 1 MiB after it.
    sim.cmd("rec_set rate=2000")
    try:
        out = sim.cmd("rec_start auto ring=2 post=1 seed=43")
        lba = int(result(out, "rec_start")["first_lba"])
        assert lba == AREA + 3 * MiB // 512, out
        assert result(sim.cmd("rec_wait 3"), "rec_wait")["done"] == "0"
        sim.cmd("rec_trigger")
        out = sim.cmd("rec_wait", timeout=600)
    finally:
        sim.cmd("rec_set clear")
    c = result(out, "catalog_rec")
    st = result(sim.cmd("rec_status"), "rec_status")
    kept, trig, oldest = int(st["bytes_committed"]), int(st["trigger"]), int(st["oldest"])
    assert st["status"] == "5" and oldest > 0 and kept == trig + MiB, st
    assert (c["id"], c["state"], c["bytes"]) == ("3", "complete", str(kept))
    r = [x for x in listing(img) if x["id"] == 3][0]
    assert (r["mode"], r["oldest"], r["trigger"], r["ring_bytes"]) == ("ring", oldest, trig, 2 * MiB), r
    literec("extract", img, "--id", 3, "-o", os.path.dirname(img) + "/ring", "--no-progress")
    assert open(os.path.dirname(img) + "/ring", "rb").read() == stream(43, kept - oldest, oldest)
    # Replay by id: the wrapped ring from its oldest byte (the checker's pattern from there too).
    r = result(sim.cmd("rec_replay id=3", timeout=600), "rec_replay")
    assert (r["ok"], r["errors"], r["bytes"], r["checked_beats"]) == ("1", "0", str(kept - oldest), str((kept - oldest) // 64)), r
    out = sim.cmd("play_start id=1")
    assert f"play_start: {MiB} bytes from nvme0 LBA {AREA} to the checker" in out, out
    assert result(sim.cmd("rec_wait", timeout=600), "rec_wait")["done"] == "1"
    assert "RESULT name=catalog_rec" not in out          # a replay changes nothing in the catalog
    assert "with id= the catalog gives ports" in sim.cmd("rec_replay id=3 seed=5")

def test_the_catalog_during_a_recording(one):
    """While a recording runs (its entry is updated at checkpoints): replaying another one by id looks
    it up without touching the running entry (it overwrote it: the next checkpoint went into the
    other recording's slot), the catalog commands wait; both recordings are whole afterwards."""
    sim, img = one, ns(one)
    ok(sim, "rec_format yes")
    assert "RESULT name=catalog_rec" in sim.cmd("rec_record auto 1 seed=51", timeout=600)
    sim.cmd("rec_checkpoint 1")
    try:
        out = sim.cmd("rec_start auto until-stop=4 rate=200 seed=52")
        assert "catalog: recording 2 " in out, out
        assert result(sim.cmd("rec_wait 2"), "rec_wait")["done"] == "0"
        out = sim.cmd("play_start id=1")             # looks recording 1 up, then finds the recorder busy
        assert "the recorder is busy" in out and "RESULT name=play_start" not in out, out
        out = sim.cmd("rec_replay id=1")
        assert "the recorder is busy" in out and result(out, "rec_replay")["ok"] == "0", out
        for cmd in ("rec_show 1", "rec_delete 1", "rec_format yes", "rec_list"):
            assert "a recording is running and updates the catalog: wait for its end first" in sim.cmd(cmd), cmd
        assert result(sim.cmd("rec_wait 2"), "rec_wait")["done"] == "0"      # checkpoints after it
        sim.cmd("rec_stop")
        out = sim.cmd("rec_wait", timeout=600)
    finally:
        sim.cmd("rec_checkpoint 100")
    c = result(out, "catalog_rec")
    kept = int(result(sim.cmd("rec_status"), "rec_status")["bytes_kept"])
    assert (c["id"], c["state"], c["bytes"]) == ("2", "complete", str(kept)) and kept > 0, out
    rs = {x["id"]: x for x in listing(img)}
    assert (rs[1]["state"], rs[1]["bytes"], rs[1]["start_lba"]) == ("complete", MiB, {"0": AREA}), rs[1]
    assert (rs[2]["state"], rs[2]["bytes"], rs[2]["start_lba"]) == ("complete", kept, {"0": AREA + MiB // 512}), rs[2]

def test_metadata_frequencies_are_exact_or_refused(one):
    sim = one
    for arg in ("rate=1.5555", "rate=20000000000G", "freq=18446745G", "rate=1e3"):
        assert "to the millihertz (3 decimals with Hz, 6 with k, 9 with M, 12 with G)" in sim.cmd(f"rec_meta {arg}"), arg
    out = sim.cmd("rec_meta rate=30.72M freq=2.4000001G")
    assert "30720000" in out and "2400000100" in out, out
    sim.cmd("rec_meta clear")

# Killed mid-recording -------------------------------------------------------------------------------

@pytest.mark.xdist_group("catalog-kill")          # a session of its own: runs beside the others
def test_killed_recording_keeps_its_last_checkpoint(request, tmp_path):
    sim = new_session(request, 1, ["--ssd-profile", "ideal", "--ns-size", "256MiB"], "kill", tmp_path)
    try:
        img = ns(sim)
        assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format yes")
        sim.cmd("rec_checkpoint 1")
        # 16 MiB at 300 MB/s: ~56 ms of modeled time, a checkpoint every 1 ms. Typed, not waited for.
        sim.proc.stdin.write(b"rec_record auto 16 seed=9 rate=300\r")
        sim.proc.stdin.flush()
        deadline, seen = time.time() + 600, None
        while time.time() < deadline:
            time.sleep(0.5)
            assert sim.proc.poll() is None
            d = drv.assemble([img])
            d.load_catalog()
            rs = d.recordings()
            d.drive(0).close()
            if rs and rs[0].state == cat.STATE_RECORDING and rs[0].bytes_recorded >= MiB:
                seen = rs[0].bytes_recorded
                break
        assert seen, "no checkpoint of at least 1 MiB appeared"
    finally:
        sim.close()         # SIGKILL: a power loss in the middle of the recording
    recs = listing(img)
    assert len(recs) == 1 and recs[0]["state"] == "interrupted" and recs[0]["stop_cycles"] == 0
    n = recs[0]["bytes"]
    assert n >= seen and n % (128 * 1024) == 0 and n < 16 * MiB, recs
    r = literec("extract", img, "--id", 1, "-o", str(tmp_path / "cut"), "--no-progress")
    assert "did not end (state interrupted" in r.stderr
    assert open(str(tmp_path / "cut"), "rb").read() == stream(9, n)
    assert f"RESULT name=verify id=1 bytes={n} " in literec("verify", img, "--id", 1).stdout

# Two drives -----------------------------------------------------------------------------------------

@pytest.mark.xdist_group("catalog-2")
def test_two_drives_round_trip_missing_and_swapped(request, tmp_path):
    ssd = ["--ssd-profile", "ideal", "--ns-size", "256MiB"]
    sim = new_session(request, 2, ssd, "cat2", tmp_path)
    try:
        for p in (0, 1):
            assert result(sim.cmd(f"nvme_init {p}"), "nvme_init")["ok"] == "1"
        r, _ = ok(sim, "rec_format yes")
        assert r["drives"] == "2"
        sim.cmd("rec_meta name=both datatype=ci16_le rate=100M")
        r, out = record(sim, "auto 8 ports=all seed=31")
        assert (r["lba"], r["ports"]) == (str(AREA), "2") and result(out, "catalog_rec")["bytes"] == str(8 * MiB)
        # A recording on the second drive only still enters both drives' catalogs.
        r, out = record(sim, "auto 2 ports=1 seed=32")
        assert r["lba"] == str(AREA + 4 * MiB // 512)
        out = sim.cmd("rec_list")
        assert "set " in out and "2 drives (drive 0 = nvme0, drive 1 = nvme1)" in out
        assert [d["order"] for d in parse_results(out) if d["name"] == "rec_list_entry"] == ["0,1", "1"]
        a, b = ns(sim, 0), ns(sim, 1)
        assert [x["id"] for x in listing(a, "--partial")] == [1, 2]   # each drive carries the whole catalog
    finally:
        sim.close()

    recs = listing(a, b)
    assert [(x["id"], x["bytes"], x["order"]) for x in recs] == [(1, 8 * MiB, [0, 1]), (2, 2 * MiB, [1])]
    assert "RESULT name=verify id=1 bytes=8388608 words=2097152 errors=0" in literec("verify", a, b, "--id", 1).stdout
    base = str(tmp_path / "rec")
    literec("extract", a, b, "--id", 1, "-o", base, "--sigmf", "--no-progress")
    assert open(base + ".sigmf-data", "rb").read() == stream(31, 8 * MiB)
    from sigmf import sigmffile
    m = sigmffile.fromfile(base + ".sigmf-meta")
    assert m.get_global_field("core:datatype") == "ci16_le" and len(m.read_samples()) == 2 * MiB
    literec("extract", a, b, "--id", 2, "-o", base + "2", "--no-progress")
    assert open(base + "2", "rb").read() == stream(32, 2 * MiB)
    # Missing, swapped, twice the same drive.
    r = literec("extract", a, "--id", 1, "-o", base + "x", rc=2)
    assert "missing drive: set " in r.stderr and "drive 1 (serial LRSIM01" in r.stderr
    r = literec("verify", b, a, "--id", 1, rc=2)
    assert f"swapped order: {b} is drive 1, {a} is drive 0 of the set" in r.stderr
    assert literec("verify", b, a, "--id", 1, "--any-order").returncode == 0
    r = literec("list", a, a, rc=2)
    assert "extra drive:" in r.stderr

    # The BIOS with the drives swapped between the ports: it finds each drive's position, records
    # across them in the set's terms, and refuses to replay an old recording in the wrong order.
    shutil.copy(a, str(tmp_path / "d0.img"))
    shutil.copy(b, str(tmp_path / "d1.img"))
    os.replace(str(tmp_path / "d1.img"), str(tmp_path / "swap0.img"))
    os.replace(str(tmp_path / "d0.img"), str(tmp_path / "swap1.img"))
    sim = new_session(request, 2, ssd + ["--ns-file", str(tmp_path / "swap{i}.img")], "swap", tmp_path)
    try:
        for p in (0, 1):
            assert result(sim.cmd(f"nvme_init {p}"), "nvme_init")["ok"] == "1"
        out = sim.cmd("rec_list")
        assert "2 drives (drive 0 = nvme1, drive 1 = nvme0)" in out
        out = sim.cmd("rec_replay id=1")
        assert "not on ports in its stripe order" in out and "RESULT name=rec_replay" not in out
        r = result(sim.cmd("rec_replay id=2", timeout=600), "rec_replay")   # one drive: any port
        assert (r["errors"], r["ports"]) == ("0", "1")
        r, out = record(sim, "auto 1 ports=all seed=33")
        assert result(out, "catalog_rec")["id"] == "3"
    finally:
        sim.close()
    s0, s1 = str(tmp_path / "swap0.img"), str(tmp_path / "swap1.img")
    recs = listing(s1, s0)
    assert recs[2]["order"] == [1, 0]           # chunk 0 went to port 0, which holds drive 1
    literec("extract", s1, s0, "--id", 3, "-o", base + "3", "--no-progress")
    assert open(base + "3", "rb").read() == stream(33, MiB)

def entry_lbas(slot, copy):
    """512-byte LBAs of a catalog entry's copy (doc/catalog.md: 4 KiB blocks, slots from block 16)."""
    first = (16 + 2 * slot + copy) * 8
    return f"{first}-{first + 7}"

def test_a_catalog_write_failing_on_one_drive(request, tmp_path):
    """A recording whose catalog entry cannot be written on every drive of the set does not start
    and is withdrawn from the drives that took it (was: listed as recording forever); a catalog write
    that cannot be submitted is reported once (was: a second, spurious 'invalid argument' from
    waiting on a port that had nothing to wait for)."""
    from literecorder.sim.ssd import send_control
    sim = new_session(request, 2, ["--ssd-profile", "ideal", "--ns-size", "64MiB"], "catfail", tmp_path)
    def ids():
        return [d["id"] for d in parse_results(sim.cmd("rec_list")) if d["name"] == "rec_list_entry"]
    def fault(spec):
        assert send_control(sim.devices[1][1]["ctl_path"], spec).startswith("ok"), spec
    try:
        for p in (0, 1):
            assert result(sim.cmd(f"nvme_init {p}"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format yes")
        record(sim, "auto 1 ports=all seed=41")                      # id 1 in slot 0
        # The next entry (slot 1, seq 1: copy 0) fails on drive 1 only.
        fault(f"fault add write-fault:lba={entry_lbas(1, 0)}")
        out = sim.cmd("rec_record auto 1 ports=all seed=42", timeout=600)
        assert "nvme1: catalog I/O: Write Fault" in out, out
        assert "withdrawn, nothing recorded" in out and "catalog: recording 2" not in out, out
        assert "ok=1" not in out, out
        assert ids() == ["1"]
        assert [x["id"] for x in listing(ns(sim, 0), "--partial")] == [1]
        fault("fault clear all")
        r, out = record(sim, "auto 1 ports=all seed=43")
        assert "catalog: recording 3 (slot 1 of set" in out, out    # the withdrawn slot is free again
        assert ids() == ["1", "3"]
        # A command that never completes on drive 1: the write times out, the queue is given up,
        # the withdrawal cannot be submitted there: each said once, no 'invalid argument'.
        sim.cmd("nvme_timeout 1 1")
        fault(f"fault add drop-cqe:op=write,lba={entry_lbas(2, 0)}")
        out = sim.cmd("rec_record auto 1 ports=all seed=44", timeout=600)
        assert "Error: nvme1: catalog I/O: command timeout (no completion from the controller)" in out, out
        assert "Error: nvme1: catalog write: no CPU I/O queue on this controller" in out, out
        assert "invalid argument" not in out, out
        assert ids() == ["1", "3"]
        sim.cmd("nvme_timeout 1000 1")
        assert result(sim.cmd("nvme_init 1"), "nvme_init")["ok"] == "1"
        r, out = record(sim, "auto 1 ports=all seed=45")
        assert ids() == ["1", "3", "5"]
    finally:
        sim.close()
    a, b = ns(sim, 0), ns(sim, 1)
    assert [(x["id"], x["bytes"]) for x in listing(a, b)] == [(1, MiB), (3, MiB), (5, MiB)]
    out = str(tmp_path / "rec5")
    literec("extract", a, b, "--id", 5, "-o", out, "--no-progress")
    assert open(out, "rb").read() == stream(45, MiB)

# QEMU's controller ----------------------------------------------------------------------------------

@pytest.mark.xdist_group("catalog-qemu")
def test_qemu_controller_round_trip(request, tmp_path):
    if not qemu_available():
        pytest.fail("qemu-system-x86_64 not found: install the Debian package qemu-system-x86 (make install does)")
    sim = new_session(request, 1, ["--ssd", "qemu", "--qemu-size", "64MiB"], "qemu", tmp_path)
    try:
        img = sim.devices[0][1]["image"]
        assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format yes")
        sim.cmd("rec_meta datatype=cf32_le rate=1M name=qemu")
        r, out = record(sim, "auto 4 seed=81")
        assert result(out, "catalog_rec")["bytes"] == str(4 * MiB) and r["lba"] == str(AREA)
        r, out = record(sim, "auto 2 seed=82 abort=1 chunk=512")
        c = result(out, "catalog_rec")
        assert (c["id"], c["state"], c["bytes"]) == ("2", "aborted", str(MiB))
        r, out = ok(sim, "nvme_flush")
    finally:
        sim.close()
    recs = listing(img)
    assert [(x["id"], x["state"], x["bytes"], x["name"]) for x in recs] == [
        (1, "complete", 4 * MiB, "qemu"), (2, "aborted", MiB, "")]
    out = str(tmp_path / "rec")
    literec("extract", img, "--id", 1, "-o", out, "--sigmf", "--no-progress")
    assert open(out + ".sigmf-data", "rb").read() == stream(81, 4 * MiB)
    from sigmf import sigmffile
    assert sigmffile.fromfile(out + ".sigmf-meta").get_global_field("core:sample_rate") == 1e6
    assert literec("verify", img, "--id", 2).returncode == 0

# No command destroys a recording unasked (catalog_guard) ---------------------------------------------

def refusal(cmd, lbas, what, catalog, port=0):
    hint = ("force=1 overwrites them; rec_format yes writes a new catalog afterwards" if catalog else
        "rec_delete <id> frees a recording's LBAs, rec_format yes all of them; force=1 overwrites them")
    return f"Error: {cmd} would write LBAs {lbas} of nvme{port}: {what} would be lost; nothing was written ({hint})"

@pytest.mark.xdist_group("catalog-guard")
def test_writing_commands_leave_the_catalog_and_recordings_alone(request, tmp_path):
    sim = new_session(request, 1, ["--ssd-profile", "ideal", "--ns-size", "64MiB"], "guard", tmp_path)
    try:
        img = ns(sim)
        assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format yes")
        sim.cmd("rec_meta name=first")
        record(sim, "auto 2 seed=3")            # LBAs 2048..6143
        record(sim, "auto 1 seed=4")            # LBAs 6144..8191
        cat_ = "the catalog (LBAs 0..2047)"
        r1, r2 = 'recording 1 "first" (LBAs 2048..6143)', "recording 2 (LBAs 6144..8191)"
        every = f"{cat_}, {r1}, {r2}"
        refused = [
            ("nvme_write 0 8",                "nvme_write",   "0..7",        cat_, True),
            ("nvme_write 3000 8",             "nvme_write",   "3000..3007",  r1, False),
            ("nvme_zero 6000 300",            "nvme_zero",    "6000..6299",  f"{r1}, {r2}", False),
            ("nvme_trim 0 10000",             "nvme_trim",    "0..9999",     every, True),
            ("nvme_raw write 6144 8",         "nvme_raw",     "6144..6151",  r2, False),
            ("nvme_bench seq write 128 32 4", "nvme_bench",   "0..8191",     every, True),
            ("nvme_bench rand write 4 8 1",   "nvme_bench",   "0..131071",   every, True),
            ("nvme_bench peak 4",             "nvme_bench",   "256..2047",   cat_, True),
            ("nvme_bench sizes 4 kib=256",    "nvme_bench",   "0..511",      cat_, True),
            ("nvme_bench full 4",             "nvme_bench",   "0..8191",     every, True),
            ("nvme_bench iops 4 0.001",       "nvme_bench",   "0..8191",     every, True),
            ("rec_selftest region=8",         "rec_selftest", "0..16383",    every, True),
            ("rec_raw record 0 0",            "rec_raw",      "0..255",      cat_, True),
        ]
        for command, name, lbas, what, catalog in refused:
            out = sim.cmd(command)
            lines = [l for l in out.splitlines() if l.strip()]
            assert lines[0] == refusal(name, lbas, what, catalog), out
            assert len(lines) == 2 and result(out, "catalog_guard")["refused"] == "1", out
        # rec_fill writes DRAM only: the catalog's I/O buffer (the port's on-chip window) is out of its reach.
        assert "Error: 0x90005000..0x90005fff is outside the DRAM 0x40000000..0x7fffffff" in \
            sim.cmd("rec_fill 0x90005000 4096")
        # Writes outside the catalog and the recordings, and every read, go through.
        assert result(sim.cmd("nvme_write 20000 8"), "nvme_write")["ok"] == "1"
        assert result(sim.cmd("nvme_zero 20008 8"), "nvme_zero")["ok"] == "1"
        assert result(sim.cmd("nvme_read 0 16"), "nvme_read")["ok"] == "1"
        assert result(sim.cmd("nvme_raw read 0 8"), "nvme_raw")["ok"] == "1"
        assert result(sim.cmd("nvme_bench seq read 128 32 4"), "nvme_bench")["commands"] == "32"
        out = sim.cmd("rec_list")
        assert result(out, "rec_list")["recordings"] == "2", out
        assert [(r["id"], r["name"], r["state"]) for r in listing(img)] == [(1, "first", "complete"), (2, "", "complete")]
        for i in (1, 2):
            assert result(sim.cmd(f"rec_replay id={i}"), "rec_replay")["errors"] == "0"
            assert literec("verify", img, "--id", i).returncode == 0
        # While a recording of the catalog runs, its port's engine refuses the write itself (the guard
        # does not touch the catalog the recording updates).
        ok(sim, "rec_start auto 2 rate=200", "rec_start")
        out = sim.cmd("nvme_write 30000 8")
        assert "the queue engine serves the running recording or replay" in out and "would write" not in out, out
        assert result(sim.cmd("rec_wait"), "rec_wait")["done"] == "1"
        # force=1 goes through: the self-test's whole-region test and the full benchmark overwrite
        # the catalog (their jobs do not enter it), then the drive has none.
        assert result(sim.cmd("nvme_write 3000 8 force=1"), "nvme_write")["ok"] == "1"
        out = sim.cmd("rec_selftest force=1 region=4 test=10")
        assert "TEST #10: PASS" in out and result(out, "rec_selftest_summary")["failed"] == "0", out
        out = sim.cmd("nvme_bench full 4 force=1")
        assert result(out, "bench_full_done")["ok"] == "1", out
        assert "nvme0: no catalog (rec_format yes creates one)" in sim.cmd("rec_list")
    finally:
        sim.close()

@pytest.mark.xdist_group("catalog-2")
def test_the_guard_on_a_set_of_two_drives(request, tmp_path):
    sim = new_session(request, 2, ["--ssd-profile", "ideal", "--ns-size", "64MiB"], "guard2", tmp_path)
    try:
        for p in (0, 1):
            assert result(sim.cmd(f"nvme_init {p}"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format yes")
        record(sim, "auto 2 seed=5 ports=all")          # 1 MiB on each drive: LBAs 2048..4095
        out = sim.cmd("nvme_write 4000 8 0x60000000 1")
        assert out.splitlines()[0] == refusal("nvme_write", "4000..4007", "recording 1 (LBAs 2048..4095)", False, 1), out
        assert result(sim.cmd("nvme_write 4096 8 0x60000000 1"), "nvme_write")["ok"] == "1"
        # A recording on nvme0 updates the catalog of both drives: nvme1 is not written meanwhile.
        ok(sim, "rec_start auto 2 rate=200 ports=0", "rec_start")
        out = sim.cmd("nvme_write 30000 8 0x60000000 1")
        assert out.splitlines()[0] == ("Error: nvme_write: the catalog on nvme1 is updated by the running recording: "
            "wait for its end; nothing was written (force=1 writes anyway)"), out
        assert result(sim.cmd("rec_wait"), "rec_wait")["done"] == "1"
        assert result(sim.cmd("nvme_write 30000 8 0x60000000 1"), "nvme_write")["ok"] == "1"
        assert result(sim.cmd("rec_replay id=1"), "rec_replay")["errors"] == "0"
    finally:
        sim.close()

# Power loss: interrupted recordings and rec_close ---------------------------------------------------

def interrupted_then_closed(sim, img, rid, mode):
    """After a power loss: nvme_init and rec_list name recording `rid` interrupted, rec_close ends it
    at its last checkpoint. Returns its length and the rec_close output."""
    out = sim.cmd("nvme_init")
    assert result(out, "nvme_init")["ok"] == "1"
    r = result(out, "catalog_interrupted")
    n = int(r["bytes"])
    assert r["id"] == str(rid) and r["mode"] == mode and n > 0, out
    assert (f"nvme0: catalog: recording {rid} was interrupted (a power loss or a reset) with {n} bytes at its "
        f"last checkpoint: rec_close {rid} ends it there") in out
    e = [d for d in parse_results(sim.cmd("rec_list")) if d.get("name") == "rec_list_entry" and d["id"] == str(rid)]
    assert e[0]["state"] == "interrupted" and e[0]["stop_cycles"] == "0", e
    assert [r["state"] for r in listing(img) if r["id"] == rid] == ["interrupted"]
    assert f"recording {rid} did not end (a power loss or a reset): {n} bytes at its last checkpoint" in \
        literec("info", img).stdout
    out = sim.cmd(f"rec_close {rid}")
    assert result(out, "rec_close")["ok"] == "1", out
    assert f"rec_close: recording {rid} ended at its last checkpoint: {n} bytes, state aborted" in out
    assert [r["state"] for r in listing(img) if r["id"] == rid] == ["aborted"]
    return n, out

@pytest.mark.xdist_group("catalog-kill")
def test_power_loss_until_stop_and_ring_then_rec_close(request, tmp_path):
    ssd = ["--ssd-profile", "ideal", "--ns-size", "64MiB"]
    img = str(tmp_path / "ssd0.img")
    def boot(tag):
        sim = new_session(request, 1, ssd, tag, tmp_path)
        assert ns(sim) == img
        return sim
    # An until-stop recording to the end of the drive, cut after 20 ms (checkpoints every 5 ms).
    sim = boot("cut1")
    try:
        assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format yes")
        sim.cmd("rec_checkpoint 5")
        ok(sim, "rec_start auto until-stop ports=all rate=100", "rec_start")
        assert result(sim.cmd("rec_wait 20"), "rec_wait")["done"] == "0"
    finally:
        sim.close()                           # SIGKILL: the power loss
    sim = boot("cut2")
    try:
        # Its region still reserves the drive (LBAs 2048 to the end) until it is closed.
        out = sim.cmd("nvme_init")
        assert result(out, "catalog_interrupted")["id"] == "1"
        assert ("Error: no room for 8388608 bytes on nvme0 after the last recording (LBA 131072, 0 of 131072 LBAs "
            "free): rec_delete recordings or give an LBA") in sim.cmd("rec_start auto 8")
        n1, out = interrupted_then_closed(sim, img, 1, "until-stop")
        end = 2048 + (n1 + 131071) // 131072 * 256
        assert f"rec_close: drive 0: LBAs {end}..131071 freed" in out
        assert "Error: recording 1 is aborted: rec_close ends an interrupted recording" in sim.cmd("rec_close 1")
        # A new recording fits in the freed space; then a ring recording, cut too.
        r, out = record(sim, "auto 8 seed=21")
        assert r["lba"] == str(end), out
        sim.cmd("rec_checkpoint 5")
        ok(sim, "rec_start auto ring=8 rate=100", "rec_start")
        assert result(sim.cmd("rec_wait 20"), "rec_wait")["done"] == "0"
    finally:
        sim.close()
    sim = boot("cut3")
    try:
        ring_lba = end + 8 * MiB // 512
        n3, out = interrupted_then_closed(sim, img, 3, "ring")
        assert f"rec_close: drive 0: the ring keeps its whole region, LBAs {ring_lba}..{ring_lba + 16383}" in out
        r, out = record(sim, "auto 2 seed=22")
        assert r["lba"] == str(ring_lba + 16384), out
        for i in (1, 2, 3, 4):
            assert result(sim.cmd(f"rec_replay id={i}"), "rec_replay")["errors"] == "0"
    finally:
        sim.close()
    recs = listing(img)
    assert [(r["id"], r["state"], r["mode"], r["bytes"]) for r in recs] == [(1, "aborted", "until-stop", n1),
        (2, "complete", "fixed", 8 * MiB), (3, "aborted", "ring", n3), (4, "complete", "fixed", 2 * MiB)]
    for i, n in ((1, n1), (2, 8 * MiB), (3, n3), (4, 2 * MiB)):
        assert f"RESULT name=verify id={i} bytes={n} " in literec("verify", img, "--id", i).stdout

def test_a_recording_that_spilled_to_dram_is_verified_by_literec(fresh_one):
    """A recording whose chunks went partly through DRAM slots (the link stalled 3 ms under a
    2000 MB/s source that cannot wait) enters the catalog like any other; `literec verify` finds
    every word of its pattern on the drive."""
    from conftest import ssd_ctl
    sim, img = fresh_one, ns(fresh_one)
    ok(sim, "rec_format yes")
    out = sim.cmd("rec_start auto 16 seed=91 rate=2000 strict=1")
    assert result(out, "rec_start")["first_lba"] == str(AREA), out
    ssd_ctl(sim, "fault add retrain:for_us=3000")
    out = sim.cmd("rec_wait", timeout=600)
    c = result(out, "catalog_rec")
    st = result(sim.cmd("rec_status"), "rec_status")
    assert (c["id"], c["state"], c["bytes"], c["dropped"]) == ("1", "complete", str(16 * MiB), "0"), out
    assert 0 < int(st["bytes_spilled"]) < 16 * MiB and st["bytes_dropped"] == "0", st
    r = literec("verify", img, "--id", 1)
    assert "RESULT name=verify id=1 bytes=16777216 words=4194304 errors=0" in r.stdout, r.stdout
