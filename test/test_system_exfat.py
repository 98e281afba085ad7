#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Recordings as files any PC reads (issue 28): the BIOS formats the simulated drive as an exFAT
volume (`rec_format fs=exfat`), every recording becomes a contiguous file with its .sigmf-meta
beside it. Checked on the namespace file with Debian's exfatprogs (`fsck.exfat -n`), a real exFAT
driver (exfat-fuse on a read-only loop device) and the `sigmf` package; a volume mkfs.exfat made is
refused; a recording cut by a power loss leaves a clean volume and the next nvme_init ends it, its
file cut at the last checkpoint."""

import os
import re
import sys
import json
import time
import subprocess

import pytest

from conftest import result, get_build, build_dir, ROOT, ssd_ctl, literec
from catalog_images import stream
from literecorder.host import drives as drv
from exfat_tools import fsck, mounted, root_entries, geometry
from patterns import pattern_bytes
from test_system_catalog import new_session, ns, ok

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("exfat")]

MiB = 1 << 20
SIM_PY = os.path.join(ROOT, "targets", "sim.py")

def sigmf_valid(path):
    """The .sigmf-meta loads and validates with the sigmf package: its metadata as a dict."""
    from sigmf import SigMFFile
    meta = json.load(open(path))
    SigMFFile(metadata=meta).validate()
    return meta

def names(img):
    """File names in the volume's root directory (read from the image, as the specification lays it out)."""
    out, e = [], root_entries(img)
    for i, x in enumerate(e):
        if x[0] == 0x85:
            n = e[i + 1][3]
            s = b"".join(y[2:32] for y in e[i + 2:i + 1 + x[1]]).decode("utf-16-le")[:n]
            out.append(s)
    return out

# The acceptance command of the issue --------------------------------------------------------------

def test_acceptance_command_capture1_on_an_8gib_drive(tmp_path):
    get_build()
    img = tmp_path / "ssd0.img"
    r = subprocess.run([sys.executable, SIM_PY, "--output-dir", build_dir(), "--ns-file", str(img), "--ns-size", "8GiB",
        "--run", "nvme_init; rec_format fs=exfat yes; rec_meta name=capture1 datatype=ci16_le rate=100M; "
        "rec_start auto 64 input=pattern; rec_wait"], capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "RESULT name=rec_format ok=1 drives=1 " in r.stdout and " fs=exfat" in r.stdout
    assert "catalog: recording 1 complete, 67108864 bytes" in r.stdout, r.stdout[-3000:]
    rc, out = fsck(img)
    assert rc == 0 and "clean. directories 1, files 3" in out, out
    assert names(img) == ["literec.catalog", "capture1.sigmf-data", "capture1.sigmf-meta"]
    with mounted(img) as mnt:
        assert sorted(os.listdir(mnt)) == ["capture1.sigmf-data", "capture1.sigmf-meta", "literec.catalog"]
        data = os.path.join(mnt, "capture1.sigmf-data")
        assert os.path.getsize(data) == 64*MiB
        with open(data, "rb") as f:
            for k in range(64):
                assert f.read(MiB) == pattern_bytes(1, MiB, k*MiB//4), f"MiB {k}"
        meta = sigmf_valid(os.path.join(mnt, "capture1.sigmf-meta"))
    g = meta["global"]
    assert (g["core:datatype"], g["core:sample_rate"], g["literec:recording_id"], g["literec:dropped_bytes"]) == \
        ("ci16_le", 100e6, 1, 0)
    assert meta["captures"] == [{"core:sample_start": 0, "core:global_index": 0}] and meta["annotations"] == []

# One drive, several recordings ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vol(request, tmp_path_factory):
    s = new_session(request, 1, ["--ssd-profile", "ideal", "--ns-size", "256MiB"], "exfat",
        tmp_path_factory.mktemp("exfat"))
    assert result(s.cmd("nvme_init"), "nvme_init")["ok"] == "1"
    yield s
    s.close()

def test_a_volume_mkfs_made_is_refused_until_rec_format_fs_exfat_yes(vol):
    sim, img = vol, ns(vol)
    subprocess.run(["mkfs.exfat", "-L", "PC", img], check=True, capture_output=True)
    before = open(img, "rb").read(4*MiB)
    foreign = ("an exFAT volume the recorder did not make (no literec.catalog file in it): the BIOS does not write "
        "it; rec_format fs=exfat yes replaces it with the recorder's (its files are lost)")
    out = sim.cmd("rec_list")
    assert f"nvme0: {foreign}" in out and result(out, "rec_list")["sets"] == "0"
    out = sim.cmd("rec_start 8192 1")
    assert f"Error: nvme0: {foreign}" in out and "RESULT name=rec_start" not in out
    out = sim.cmd("nvme_write 100 1")
    assert f"Error: nvme_write would write LBAs 100..100 of nvme0: it holds {foreign}" in out
    out = sim.cmd("rec_format fs=exfat")
    assert ("nvme0 would become drive 0 of a new set of 1: an exFAT volume over the whole namespace (LBAs 0..524287; "
        f"any files and recordings on it lost); now: {foreign}") in out
    assert "To format: rec_format fs=exfat yes" in out
    assert open(img, "rb").read(4*MiB) == before
    rc, _ = fsck(img)
    assert rc == 0

def test_bad_options_and_names_are_refused(vol):
    sim = vol
    assert "Error: fs 'ntfs': exfat (an exFAT volume" in sim.cmd("rec_format fs=ntfs yes")
    assert "Error: label 'ABCDEFGHIJKL': at most 11 characters" in sim.cmd("rec_format fs=exfat label=ABCDEFGHIJKL yes")
    assert "Error: label 'a:b': at most 11 characters, none of" in sim.cmd("rec_format fs=exfat label=a:b yes")
    assert "Error: label= names an exFAT volume" in sim.cmd("rec_format label=X yes")
    # rec_meta name="...": the spaces as typed, \uXXXX for a letter beyond ASCII; bad quoting and escapes.
    assert "next recording: name=a  b \u00fc\u044f " in sim.cmd('rec_meta name="a  b \\u00fc\\u044f"')
    assert 'Error: name: no closing quote (name="words with spaces")' in sim.cmd('rec_meta name="a b')
    assert "Error: name: 'x' after the closing quote" in sim.cmd('rec_meta name="a b"x')
    assert "Error: name: '\\u00zz': \\u and four hex digits" in sim.cmd("rec_meta name=\\u00zz")
    assert "Error: name: at most 32 bytes (UTF-8" in sim.cmd("rec_meta name=" + "a"*31 + "\\u00e9")
    sim.cmd("rec_meta clear")

def test_recordings_as_files_deleted_one_and_the_catalog_agrees(vol, tmp_path):
    sim, img = vol, ns(vol)
    r, out = ok(sim, "rec_format fs=exfat label=LITEREC yes", "rec_format")
    assert r["fs"] == "exfat"
    sim.cmd("rec_clock 1764000000")
    sim.cmd("rec_meta name=first datatype=ri16_le rate=1M freq=2.4G")
    sim.cmd("rec_meta text=three recordings")
    ok(sim, "rec_record auto 4 seed=5", "rec_record")
    ok(sim, "rec_record auto 2 seed=6", "rec_record")                   # no name: rec-2
    sim.cmd("rec_meta name=third")
    ok(sim, "rec_record auto 3 seed=7 stop=1", "rec_record")            # stopped: its tail is freed
    # A name exFAT forbids, and a name already on the volume: refused before anything is written.
    sim.cmd("rec_meta name=a*b")
    out = sim.cmd("rec_record auto 1")
    assert ("Error: the file name \"a*b.sigmf-data\" is not allowed on an exFAT volume ('*' is not allowed: exFAT "
        "forbids the characters \" * / : < > ? \\ | and control characters (U+0000-U+001F) in names; letters of any "
        "language, digits, spaces and other signs are allowed): rec_meta name=<another>") in out
    sim.cmd("rec_meta name=FIRST")
    out = sim.cmd("rec_record auto 1")
    assert ("Error: nvme0: a file named \"FIRST.sigmf-data\" is on the volume: rec_meta name=<another> (or rec_delete "
        "the recording it belongs to)") in out
    sim.cmd("rec_meta clear")
    out = sim.cmd("rec_delete 2")
    assert result(out, "rec_delete")["ok"] == "1", out
    rc, fout = fsck(img)
    assert rc == 0 and "files 5" in fout, fout
    assert names(img) == ["literec.catalog", "first.sigmf-data", "first.sigmf-meta", "third.sigmf-data",
        "third.sigmf-meta"]
    out = sim.cmd("rec_list")
    lst = [l for l in out.splitlines() if l.startswith("RESULT name=rec_list_entry")]
    assert len(lst) == 2 and "id=1 " in lst[0] and "id=3 " in lst[1]
    with mounted(img) as mnt:
        assert open(os.path.join(mnt, "first.sigmf-data"), "rb").read() == pattern_bytes(5, 4*MiB)
        third = open(os.path.join(mnt, "third.sigmf-data"), "rb").read()
        assert len(third) == MiB and third == pattern_bytes(7, MiB)
        m1 = sigmf_valid(os.path.join(mnt, "first.sigmf-meta"))
        m3 = sigmf_valid(os.path.join(mnt, "third.sigmf-meta"))
        st = os.stat(os.path.join(mnt, "first.sigmf-data"))
    assert (m1["global"]["core:datatype"], m1["global"]["core:sample_rate"], m1["global"]["core:description"]) == \
        ("ri16_le", 1e6, "three recordings")
    assert m1["captures"][0]["core:frequency"] == 2.4e9
    assert m1["captures"][0]["core:datetime"].startswith("2025-11-24T16:00:00")
    assert m3["global"]["core:datatype"] == "ru8" and m3["global"]["literec:recording_id"] == 3
    assert 1764000000 <= st.st_mtime < 1764000000 + 60
    assert "RESULT name=fsck recordings=2 drives=1 problems=0 agree=1" in literec("fsck", img).stdout
    # fs= on a drive with recordings: without yes it only says what it would erase.
    before = open(img, "rb").read(4*MiB)
    out = sim.cmd("rec_format fs=exfat")
    assert "the 2 recording(s) listed now would no longer be listed" in out and "To format: rec_format fs=exfat yes" in out
    assert open(img, "rb").read(4*MiB) == before
    # A full volume: no run of free clusters that large.
    out = sim.cmd("rec_record auto 250")
    assert "Error: nvme0: no 262144000 free bytes in a row on the exFAT volume from LBA " in out, out
    assert "RESULT name=rec_record" not in out
    # A new recording reuses the clusters recording 2 freed (the first free run on a chunk).
    r, out = ok(sim, "rec_record auto 2 seed=8", "rec_record")
    assert int(r["lba"]) < int(result(sim.cmd("rec_show 3"), "rec_show")["lba"]), out

def test_drop_log_and_ring_in_the_files_and_their_meta(vol, tmp_path):
    sim, img = vol, ns(vol)
    ok(sim, "rec_format fs=exfat yes", "rec_format")
    # Until-stop, drop policy (test_system_catalog's recipe): a 1000 MB/s source that cannot wait, a drive
    # held to 500 MB/s, a DRAM ring of one chunk alone (staging=off: the 1 MiB of on-chip slots would
    # take these 2 MiB without a drop). The file holds what was recorded; its meta places every drop.
    rate, buf = (ssd_ctl(sim, f"get {k}").split("=")[1] for k in ("write_rate", "write_buf"))
    ssd_ctl(sim, "set write_rate=500000000 write_buf=4096")
    sim.cmd("rec_set rate=1000 strict=1 policy=drop buffer=1")
    sim.cmd("rec_meta name=drops")
    try:
        ok(sim, "rec_start auto until-stop=2 seed=42 staging=off", "rec_start")
        out = sim.cmd("rec_wait", timeout=600)
    finally:
        sim.cmd("rec_set clear")
        ssd_ctl(sim, f"set write_rate={rate} write_buf={buf}")
    c = result(out, "catalog_rec")
    assert (c["state"], c["bytes"]) == ("complete", str(2*MiB)) and int(c["dropped"]) > 0, out
    d = drv.assemble([img])
    d.load_catalog()
    e = d.recordings()[0]
    d.drive(0).close()
    assert 0 < len(e.drops) == e.drops_total <= 207
    kept, pos, before = [], 0, 0
    for x in e.drops:                             # the input stream without the dropped bytes
        kept.append(stream(42, x.data_offset - pos, pos + before))
        pos, before = x.data_offset, before + x.nbytes
    kept.append(stream(42, 2*MiB - pos, pos + before))
    # Ring of 2 MiB that wraps, then the trigger, 1 MiB after it.
    sim.cmd("rec_set rate=2000")
    sim.cmd("rec_meta name=ring")
    try:
        ok(sim, "rec_start auto ring=2 post=1 seed=43", "rec_start")
        assert result(sim.cmd("rec_wait 3"), "rec_wait")["done"] == "0"
        sim.cmd("rec_trigger")
        out = sim.cmd("rec_wait", timeout=600)
    finally:
        sim.cmd("rec_set clear")
    r = [x for x in json.loads(literec("list", img, "--json").stdout)["recordings"] if x["id"] == 2][0]
    total, oldest, trig = r["bytes_recorded"], r["oldest"], r["trigger"]
    assert r["mode"] == "ring" and oldest > 0 and total == trig + MiB, r
    rc, fout = fsck(img)
    assert rc == 0 and "files 5" in fout, fout
    assert "agree=1" in literec("fsck", img).stdout
    with mounted(img) as mnt:
        assert open(os.path.join(mnt, "drops.sigmf-data"), "rb").read() == b"".join(kept)
        m = sigmf_valid(os.path.join(mnt, "drops.sigmf-meta"))
        ring = open(os.path.join(mnt, "ring.sigmf-data"), "rb").read()
        mr = sigmf_valid(os.path.join(mnt, "ring.sigmf-meta"))
    assert m["global"]["literec:drop_events"] == len(e.drops) and m["global"]["literec:gaps"] == "skip"
    assert [(a["core:sample_start"], a["core:label"], a["core:comment"]) for a in m["annotations"]] == [
        (x.data_offset, "drop", f"{x.nbytes} bytes dropped by the recorder before data offset {x.data_offset} "
            "(not in the file)") for x in e.drops]
    g = mr["global"]
    assert (g["literec:ring_bytes"], g["literec:oldest_offset"]) == (2*MiB, oldest % (2*MiB))
    assert len(ring) == 2*MiB
    k = g["literec:oldest_offset"]
    assert (ring[k:] + ring[:k])[:total - oldest] == stream(43, total - oldest, oldest)
    assert [(a["core:sample_start"], a["core:label"]) for a in mr["annotations"]] == [(trig - oldest, "trigger")]

def test_until_stop_without_a_size_reserves_the_largest_free_run_and_is_cut_at_the_stop(vol):
    sim, img = vol, ns(vol)
    ok(sim, "rec_format fs=exfat yes", "rec_format")
    sim.cmd("rec_meta name=a")
    ok(sim, "rec_record auto 2 seed=61", "rec_record")
    sim.cmd("rec_meta name=b")
    ok(sim, "rec_record auto 1 seed=62", "rec_record")
    hole = int(result(sim.cmd("rec_show 1"), "rec_show")["lba"])
    after_b = int(result(sim.cmd("rec_show 2"), "rec_show")["lba"]) + MiB//512
    assert result(sim.cmd("rec_delete 1"), "rec_delete")["ok"] == "1"       # a 2 MiB hole before b
    # An LBA: the free run from it (the hole, less room for a .sigmf-meta), recorded until it is full.
    sim.cmd("rec_meta name=hole")
    r, out = ok(sim, f"rec_start {hole} until-stop seed=64", "rec_start")
    m = re.search(r"catalog: until-stop on exFAT: the free run, LBAs (\d+)\.\.(\d+) on nvme0 \((\d+) bytes in all\), "
        "reserved; the file is cut at the stop", out)
    assert m and int(m[1]) == hole and (int(m[2]) + 1 - hole)*512 == int(m[3]), out
    held = int(m[3])
    assert 2*MiB - 2*128*1024 <= held < 2*MiB and held % (128*1024) == 0, held
    c = result(sim.cmd("rec_wait", timeout=600), "catalog_rec")
    assert (c["state"], c["bytes"]) == ("complete", str(held)), c
    # auto: the largest run (after b), not the first one; stopped, its file is cut there.
    sim.cmd("rec_meta name=open")
    r, out = ok(sim, "rec_start auto until-stop rate=200 seed=63", "rec_start")
    m = re.search(r"catalog: until-stop on exFAT: the largest free run, LBAs (\d+)\.\.(\d+) on nvme0 \((\d+) bytes", out)
    assert m and after_b <= int(m[1]) < after_b + 1024 and int(m[3]) > 240*MiB, out      # the rest of the volume
    assert result(sim.cmd("rec_wait 5"), "rec_wait")["done"] == "0"
    sim.cmd("rec_stop")
    c = result(sim.cmd("rec_wait", timeout=600), "catalog_rec")
    n = int(c["bytes"])
    assert c["state"] == "complete" and 0 < n < 100*MiB, c
    rc, fout = fsck(img)
    assert rc == 0 and "files 7" in fout, fout
    assert "RESULT name=fsck recordings=3 drives=1 problems=0 agree=1" in literec("fsck", img).stdout
    with mounted(img) as mnt:
        assert open(os.path.join(mnt, "open.sigmf-data"), "rb").read() == pattern_bytes(63, n)
        assert open(os.path.join(mnt, "hole.sigmf-data"), "rb").read() == pattern_bytes(64, held)
        sigmf_valid(os.path.join(mnt, "open.sigmf-meta"))

@pytest.mark.xdist_group("exfat-kill")
def test_power_loss_leaves_a_clean_volume_and_the_next_nvme_init_cuts_the_file(request, tmp_path):
    ssd = ["--ssd-profile", "ideal", "--ns-size", "256MiB"]
    sim = new_session(request, 1, ssd, "exfat-cut1", tmp_path)
    img = ns(sim)
    try:
        assert result(sim.cmd("nvme_init"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format fs=exfat yes", "rec_format")
        sim.cmd("rec_checkpoint 5")
        sim.cmd("rec_meta name=cut")
        ok(sim, "rec_start auto 64 rate=200", "rec_start")
        assert result(sim.cmd("rec_wait 30"), "rec_wait")["done"] == "0"
    finally:
        sim.close()                                  # SIGKILL: the power loss
    rc, out = fsck(img)
    assert rc == 0, out
    assert "agree=1" in literec("fsck", img).stdout
    with mounted(img) as mnt:
        assert os.path.getsize(os.path.join(mnt, "cut.sigmf-data")) == 64*MiB     # the reservation
        assert not os.path.exists(os.path.join(mnt, "cut.sigmf-meta"))
    from literecorder.host import exfat
    d = drv.Drive(img)
    f = exfat.Volume(d.read).find("cut.sigmf-data")
    d.close()
    rec = json.loads(literec("list", img, "--json").stdout)["recordings"][0]
    n = rec["bytes_recorded"]                        # the last checkpoint
    assert rec["state"] == "interrupted" and 0 < n < 64*MiB, rec
    # ValidDataLength follows the checkpoints (written right after the catalog entry).
    assert (f.length, f.flags) == (64*MiB, 3) and 0 < f.valid <= n and f.valid % (128*1024) == 0, (f, n)
    sim = new_session(request, 1, ssd, "exfat-cut2", tmp_path)
    try:
        # The next nvme_init repairs: the recording ends at its last checkpoint, its file is cut there.
        out = sim.cmd("nvme_init")
        assert (f'nvme0: exFAT repair: recording 1 was interrupted (a power loss or a reset): "cut.sigmf-data" cut '
            f'from {64*MiB} to {n} bytes (its last checkpoint), the {64*MiB - n} bytes after it freed, its .sigmf-meta '
            "written; the recording is ended (aborted)") in out, out
        r = result(out, "catalog_repair")
        assert (r["old_length"], r["length"], r["valid"], r["meta"], r["ok"]) == (str(64*MiB), str(n), str(n), "1", "1")
        assert "catalog_interrupted" not in out and result(out, "nvme_init")["ok"] == "1"
        # Once: the next nvme_init and rec_list find nothing to repair; rec_close has nothing to end.
        out = sim.cmd("nvme_init")
        assert "repair" not in out and "interrupted" not in out, out
        out = sim.cmd("rec_list")
        assert "repair" not in out and " aborted " in out, out
        assert "Error: recording 1 is aborted: rec_close ends an interrupted recording" in sim.cmd("rec_close 1")
        # A name with spaces and a non-ASCII letter: quoted, the letter as \uXXXX (the console is ASCII).
        out = sim.cmd('rec_meta name="my capture \\u00e9"')
        assert "next recording: name=my capture \u00e9 " in out, out
        ok(sim, "rec_record auto 1 seed=9", "rec_record")
    finally:
        sim.close()
    rc, out = fsck(img)
    assert rc == 0 and "files 5" in out, out
    assert "RESULT name=fsck recordings=2 drives=1 problems=0 agree=1" in literec("fsck", img).stdout
    assert names(img) == ["literec.catalog", "cut.sigmf-data", "cut.sigmf-meta", "my capture \u00e9.sigmf-data",
        "my capture \u00e9.sigmf-meta"]
    with mounted(img) as mnt:
        d = open(os.path.join(mnt, "cut.sigmf-data"), "rb").read()
        assert len(d) == n and d == pattern_bytes(1, n)
        m = sigmf_valid(os.path.join(mnt, "cut.sigmf-meta"))
        assert open(os.path.join(mnt, "my capture \u00e9.sigmf-data"), "rb").read() == pattern_bytes(9, MiB)
    assert m["global"]["literec:recording_id"] == 1
    lst = json.loads(literec("list", img, "--json").stdout)["recordings"]
    assert [(x["state"], x["bytes_recorded"], x["name"]) for x in lst] == [("aborted", n, "cut"),
        ("complete", MiB, "my capture \u00e9")]

# Two drives striped ---------------------------------------------------------------------------------------

@pytest.mark.xdist_group("exfat-2")
def test_two_drives_striped_parts_joined_by_literec(request, tmp_path):
    sim = new_session(request, 2, ["--ssd-profile", "ideal", "--ns-size", "256MiB"], "exfat2", tmp_path)
    try:
        for p in (0, 1):
            assert result(sim.cmd(f"nvme_init {p}"), "nvme_init")["ok"] == "1"
        r, _ = ok(sim, "rec_format fs=exfat label=STRIPE yes", "rec_format")
        assert (r["drives"], r["fs"]) == ("2", "exfat")
        sim.cmd("rec_meta name=both datatype=ci16_le rate=100M")
        r, out = ok(sim, "rec_record auto 8 ports=all seed=31", "rec_record")
        assert result(out, "catalog_rec")["bytes"] == str(8*MiB)
        ok(sim, "rec_record auto 2 ports=1 seed=32", "rec_record")       # on the second drive only
        a, b = ns(sim, 0), ns(sim, 1)
    finally:
        sim.close()
    for img in (a, b):
        rc, out = fsck(img)
        assert rc == 0, out
    assert names(a) == ["literec.catalog", "both.part1of2", "both.sigmf-meta"]
    assert names(b) == ["literec.catalog", "both.part2of2", "both.sigmf-meta", "rec-2.sigmf-data", "rec-2.sigmf-meta"]
    chunk, parts, metas = 128*1024, [], []
    for img, k in ((a, 1), (b, 2)):
        with mounted(img) as mnt:
            parts.append(open(os.path.join(mnt, f"both.part{k}of2"), "rb").read())
            metas.append(sigmf_valid(os.path.join(mnt, "both.sigmf-meta")))
            if k == 2:
                assert open(os.path.join(mnt, "rec-2.sigmf-data"), "rb").read() == stream(32, 2*MiB)
    assert [len(p) for p in parts] == [4*MiB, 4*MiB]
    joined = b"".join(parts[i % 2][(i//2)*chunk:(i//2 + 1)*chunk] for i in range(8*MiB//chunk))
    assert joined == stream(31, 8*MiB)
    assert [(m["global"]["literec:part"], m["global"]["literec:parts"], m["global"]["literec:chunk_bytes"])
        for m in metas] == [(1, 2, chunk), (2, 2, chunk)]
    literec("extract", a, b, "--id", 1, "-o", str(tmp_path / "both"), "--no-progress")
    assert open(tmp_path / "both", "rb").read() == stream(31, 8*MiB)
    assert "RESULT name=fsck recordings=2 drives=2 problems=0 agree=1" in literec("fsck", a, b).stdout

@pytest.mark.xdist_group("exfat-2")
def test_two_drives_killed_then_repaired_once_both_drives_are_present(request, tmp_path):
    from conftest import parse_results
    from literecorder.host.commands.fsck import member_bytes
    ssd = ["--ssd-profile", "ideal", "--ns-size", "256MiB"]
    sim = new_session(request, 2, ssd, "exfat2-cut1", tmp_path)
    a, b = ns(sim, 0), ns(sim, 1)
    try:
        for p in (0, 1):
            assert result(sim.cmd(f"nvme_init {p}"), "nvme_init")["ok"] == "1"
        ok(sim, "rec_format fs=exfat yes", "rec_format")
        sim.cmd("rec_checkpoint 2")
        sim.cmd("rec_meta name=cut2")
        ok(sim, "rec_start auto 16 ports=all rate=400 seed=33", "rec_start")
        assert result(sim.cmd("rec_wait 10"), "rec_wait")["done"] == "0"
    finally:
        sim.close()                                  # SIGKILL: the power loss
    rec = json.loads(literec("list", a, b, "--json").stdout)["recordings"][0]
    n = rec["bytes_recorded"]
    assert rec["state"] == "interrupted" and 0 < n < 16*MiB, rec
    sim = new_session(request, 2, ssd, "exfat2-cut2", tmp_path)
    try:
        out = sim.cmd("nvme_init 0")                 # drive 1 of the set not there yet: named, not repaired
        assert "repair" not in out and 'nvme0: catalog: recording 1 "cut2" was interrupted' in out, out
        out = sim.cmd("nvme_init 1")
        rep = [r for r in parse_results(out) if r.get("name") == "catalog_repair"]
        want = [member_bytes(n, 128*1024, k, 2) for k in (0, 1)]
        assert [(r["port"], r["part"], r["old_length"], r["length"], r["ok"]) for r in rep] == \
            [(str(k), str(k + 1), str(8*MiB), str(want[k]), "1") for k in (0, 1)], out
        for k in (0, 1):
            assert (f'nvme{k}: exFAT repair: recording 1 was interrupted (a power loss or a reset): "cut2.part{k + 1}of2" '
                f"cut from {8*MiB} to {want[k]} bytes") in out, out
        assert "repair" not in sim.cmd("rec_list")
    finally:
        sim.close()
    for img in (a, b):
        rc, fout = fsck(img)
        assert rc == 0 and "files 3" in fout, fout
    assert "RESULT name=fsck recordings=1 drives=2 problems=0 agree=1" in literec("fsck", a, b).stdout
    literec("extract", a, b, "--id", 1, "-o", str(tmp_path / "cut2"), "--no-progress")
    assert open(tmp_path / "cut2", "rb").read() == stream(33, n)
