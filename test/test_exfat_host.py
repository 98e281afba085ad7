#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The BIOS's exFAT code (software/libliterec/exfat.c) compiled for the host, on sparse image files:
format, contiguous files beyond 4 GiB, a 32 TB volume, names with spaces and non-ASCII letters, bad
names, deleting, freeing the tail of a reservation, a full volume. Checked by Debian's exfatprogs
(`fsck.exfat -n`) and, where this machine can, a read-only mount by a real exFAT driver comparing
bytes; the structures against the specification's facts (boot checksum, up-case table)."""

import os
import random
import struct
import subprocess

import pytest

from exfat_tools import (fsck, mounted, compile_tool, boot_checksum, geometry, root_entries, upcase_mapping,
    table_checksum)

pytestmark = pytest.mark.unit

MiB, GiB, TiB = 1 << 20, 1 << 30, 1 << 40
T0 = 1_764_000_000_000_000          # 2025-11-24 16:00:00 UTC, in microseconds

@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    exe = compile_tool(tmp_path_factory.mktemp("exfat"))
    def run(*args, rc=0):
        r = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True)
        assert r.returncode == rc, r.stdout + r.stderr
        out = r.stdout.strip()
        if rc == 0:
            assert out.startswith("ok"), out
            return dict(kv.split("=", 1) for kv in out.split()[1:])
        return out
    return run

def image(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return path

def big_dir():
    """A directory that holds sparse files of 32 TB (ext4 stops at 16 TiB; tmpfs does not)."""
    d = "/dev/shm"
    if not os.path.isdir(d) or os.statvfs(d).f_frsize == 0:
        pytest.skip("no tmpfs at /dev/shm for a sparse 32 TB image")
    return d

# Format ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sector", [512, 4096])
def test_format_is_clean_for_fsck_and_follows_the_specification(tool, tmp_path, sector):
    img = image(tmp_path / "v.img", 64*MiB)
    g = tool(img, "format", 64*MiB, sector, 0, "LITEREC", "literec.catalog", MiB)
    assert (int(g["sector"]), int(g["cluster"]), int(g["heap"])*sector) == (sector, 32768, 2*MiB)
    assert int(g["fat"].split("+")[0])*sector == MiB
    rc, out = fsck(img)
    assert rc == 0 and "clean. directories 1, files 1" in out, out
    data = open(img, "rb").read(24*sector)
    b = data[:512]
    assert b[:11] == b"\xeb\x76\x90EXFAT   " and b[11:64] == bytes(53) and b[510:512] == b"\x55\xaa"
    assert struct.unpack_from("<H", b, 104)[0] == 0x0100 and b[110] == 1 and b[112] == 0xFF
    # Boot checksum (sectors 0-10) in every word of sector 11; the backup region is the same.
    chk = boot_checksum(data[:11*sector])
    assert data[11*sector:12*sector] == struct.pack("<I", chk)*(sector//4)
    assert data[12*sector:24*sector] == data[:12*sector]
    for s in range(1, 9):
        assert data[(s + 1)*sector - 4:(s + 1)*sector] == b"\x00\x00\x55\xaa"
    # Root: label, bitmap, up-case table, then the first file (contiguous, read-only/hidden/system).
    e = root_entries(img)
    assert e[0][:2] == b"\x83\x07" and e[0][2:16].decode("utf-16-le") == "LITEREC"
    assert e[1][0] == 0x81 and struct.unpack_from("<IQ", e[1], 20) == (2, (int(g["clusters"]) + 7)//8)
    assert e[2][0] == 0x82 and e[3][0] == 0x85 and struct.unpack_from("<H", e[3], 4)[0] == 0x27
    assert e[4][0] == 0xC0 and e[4][1] == 3 and struct.unpack_from("<Q", e[4], 8)[0] == MiB
    assert struct.unpack_from("<IQ", e[4], 20) == (int(g["root"]) + 4, MiB)
    assert e[5][0] == 0xC1 and e[5][2:32].decode("utf-16-le") == "literec.catalog"
    assert int(g["first_off"]) == 2*MiB + (int(g["root"]) - 2 + 4)*32768

def test_upcase_table_maps_like_the_specifications_recommended_table(tool, tmp_path):
    """The mapping equals the recommended up-case table of spec 7.2.5.1 as Debian's mkfs.exfat writes
    it (checksum E619D30Dh, the specification's); ours is compressed differently, its checksum in
    the entry is right."""
    ours = image(tmp_path / "ours.img", 64*MiB)
    tool(ours, "format", 64*MiB, 512, 0, "", "x", 4096)
    ref = image(tmp_path / "ref.img", 64*MiB)
    r = subprocess.run(["mkfs.exfat", str(ref)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip("mkfs.exfat not available: " + r.stderr)
    m_ref, chk_ref, _ = upcase_mapping(ref)
    m_ours, chk_ours, t = upcase_mapping(ours)
    assert chk_ref == 0xE619D30D
    assert m_ours == m_ref
    assert chk_ours == table_checksum(t) and len(t) == 2854
    assert (m_ours[ord("a")], m_ours[ord("é")], m_ours[ord("ÿ")], m_ours[ord("я")], m_ours[0xFF41]) == \
        (ord("A"), ord("É"), ord("Ÿ"), ord("Я"), 0xFF21)

@pytest.mark.parametrize("size,sector,cluster,why", [
    (4*MiB, 512, 0, "error -9 volume size or cluster size out of range"),
    (64*MiB, 1024, 0, "error -9 volume size or cluster size out of range"),
    (64*MiB, 512, 256, "error -9 volume size or cluster size out of range"),
    (64*MiB, 512, 3*4096, "error -9 volume size or cluster size out of range"),
])
def test_format_refuses_bad_geometry(tool, tmp_path, size, sector, cluster, why):
    img = image(tmp_path / "v.img", 64*MiB)
    assert tool(img, "format", size, sector, cluster, "", rc=1) == why
    assert tool(img, "mount", rc=1) == "error -2 no exFAT volume (boot sector missing or its checksum wrong)"

def test_a_volume_mkfs_made_is_mounted_and_has_no_catalog(tool, tmp_path):
    img = image(tmp_path / "v.img", 64*MiB)
    if subprocess.run(["mkfs.exfat", "-L", "PC", str(img)], capture_output=True).returncode:
        pytest.skip("mkfs.exfat not available")
    assert tool(img, "mount")["cluster"] == "4096"
    assert tool(img, "find", "literec.catalog", rc=1) == "error -6 no such file"

def test_damaged_main_boot_sector_falls_back_to_the_backup(tool, tmp_path):
    img = image(tmp_path / "v.img", 64*MiB)
    tool(img, "format", 64*MiB, 512, 0, "", "literec.catalog", MiB)
    with open(img, "r+b") as f:
        f.seek(100)
        f.write(b"\xAA")                    # VolumeSerialNumber: the checksum no longer matches
    assert tool(img, "mount")["root"] == "4"
    with open(img, "r+b") as f:
        f.seek(12*512 + 100)
        f.write(b"\xAA")
    assert tool(img, "mount", rc=1).startswith("error -2 ")

# Files ------------------------------------------------------------------------------------------------

def fill(img, off, data):
    with open(img, "r+b") as f:
        f.seek(off)
        f.write(data)

def test_contiguous_files_with_spaces_and_non_ascii_names_read_back_through_a_real_driver(tool, tmp_path):
    img = image(tmp_path / "v.img", 256*MiB)
    tool(img, "format", 256*MiB, 512, 0, "REC", "literec.catalog", MiB)
    rnd = random.Random(28)
    files = {"capture 1.sigmf-data": 3_000_001, "Überflug über Zürich.sigmf-data": 5*MiB, "ябл ко.bin": 70_000,
        "x": 1}
    free0 = int(tool(img, "freeclusters")["free"])
    for name, n in files.items():
        off = int(tool(img, "free", n + MiB, MiB, 0)["off"])
        assert off % MiB == 0
        f = tool(img, "create", name, off, n + MiB, T0)           # a reservation larger than the data
        assert (f["off"], f["length"], f["valid"], f["flags"]) == (str(off), str(n + MiB), "0", "3")
        data = bytes(rnd.getrandbits(8) for _ in range(n))
        fill(img, off, data)
        f = tool(img, "length", name, n, n, 1, T0 + 1_500_000)      # exact length, the tail freed
        assert (f["length"], f["valid"]) == (str(n), str(n))
        files[name] = data
    used = sum((len(d) + 32767)//32768 for d in files.values())
    assert int(tool(img, "freeclusters")["free"]) == free0 - used
    assert tool(img, "create", "CAPTURE 1.SIGMF-DATA", 0, 0, 0, rc=1) == "error -5 a file of that name exists"
    # Names compare through the up-case table (the name hash too): beyond ASCII as well.
    assert tool(img, "create", "ÜBERFLUG ÜBER ZÜRICH.SIGMF-DATA", 0, 0, 0, rc=1) == "error -5 a file of that name exists"
    assert tool(img, "create", "ЯБЛ КО.BIN", 0, 0, 0, rc=1) == "error -5 a file of that name exists"
    assert tool(img, "find", "überflug ÜBER zürich.sigmf-data")["length"] == str(5*MiB)
    rc, out = fsck(img)
    assert rc == 0 and "files 5" in out, out
    with mounted(img) as mnt:
        assert sorted(os.listdir(mnt)) == sorted(list(files) + ["literec.catalog"])
        for name, data in files.items():
            assert open(os.path.join(mnt, name), "rb").read() == data, name
        st = os.stat(os.path.join(mnt, "x"))
        assert st.st_mtime == 1_764_000_001

FORBIDDEN = (" is not allowed: exFAT forbids the characters \" * / : < > ? \\ | and control characters (U+0000-U+001F) "
    "in names; letters of any language, digits, spaces and other signs are allowed")

@pytest.mark.parametrize("name,why", [
    ("a/b", "'/'" + FORBIDDEN),
    ("a:b", "':'" + FORBIDDEN),
    ("what?", "'?'" + FORBIDDEN),
    ("tab\there", "U+0009" + FORBIDDEN),
    ("caf\u00e9 | x", "'|'" + FORBIDDEN),
    ("x" * 256, "longer than 255 characters"),
    ("name.", "ends with a space or a dot (Windows cannot open such a file)"),
    ("name ", "ends with a space or a dot (Windows cannot open such a file)"),
    ("", "empty"),
    ("emoji \U0001F600", "characters beyond U+FFFF are not supported"),
])
def test_bad_names_are_refused(tool, tmp_path, name, why):
    assert tool("-", "name", name, rc=1) == "error -4 invalid file name: " + why
    img = image(tmp_path / "v.img", 64*MiB)
    tool(img, "format", 64*MiB, 512, 0, "", "literec.catalog", MiB)
    assert tool(img, "create", name, 0, 0, 0, rc=1) == "error -4 invalid file name"
    assert tool("-", "name", "x" * 255)  == {}

def test_delete_frees_the_clusters_and_the_entries_are_reused(tool, tmp_path):
    img = image(tmp_path / "v.img", 64*MiB)
    tool(img, "format", 64*MiB, 512, 0, "", "literec.catalog", MiB)
    free0 = int(tool(img, "freeclusters")["free"])
    off = int(tool(img, "free", 10*MiB, 0, 0)["off"])
    tool(img, "create", "a.bin", off, 10*MiB, T0)
    assert int(tool(img, "freeclusters")["free"]) == free0 - 320
    tool(img, "delete", "A.BIN")
    assert int(tool(img, "freeclusters")["free"]) == free0
    assert tool(img, "delete", "a.bin", rc=1) == "error -6 no such file"
    tool(img, "create", "b.bin", off, 10*MiB, T0)
    assert [e[0] for e in root_entries(img)][6:9] == [0x85, 0xC0, 0xC1]     # the deleted set's entries
    rc, out = fsck(img)
    assert rc == 0 and "files 2" in out, out

def test_used_clusters_in_a_range_for_the_guard(tool, tmp_path):
    img = image(tmp_path / "v.img", 64*MiB)
    g = tool(img, "format", 64*MiB, 512, 0, "", "literec.catalog", MiB)
    off = 8*MiB
    tool(img, "create", "f", off, 100_000, T0)                  # 4 clusters of 32 KiB
    assert tool(img, "used", 0, MiB) == {"used": "0", "at": "0"}            # before the heap: not clusters
    assert tool(img, "used", off - 32768, 32768) == {"used": "0", "at": "0"}
    assert tool(img, "used", off - 512, 1024) == {"used": "1", "at": str(off)}
    assert tool(img, "used", off + 4*32768, MiB) == {"used": "0", "at": "0"}
    assert tool(img, "used", 2*MiB, 512)["used"] == "1"                       # the bitmap's cluster
    assert tool(img, "used", off - 16*32768, 64*32768) == {"used": "1", "at": str(off)}     # whole bitmap bytes
    odd = off + 40*32768 + 3*32768                                              # not on a bitmap byte
    tool(img, "create", "g", odd, 1, T0)
    assert tool(img, "used", off + 8*32768, 64*32768) == {"used": "1", "at": str(odd)}
    assert tool(img, "create", "h", odd - 32768, 2*32768, T0, rc=1).startswith("error -7 ")
    # The free run from a cluster (an until-stop recording's reservation): up to the next used cluster.
    assert tool(img, "freerun", off + 4*32768) == {"bytes": str(39*32768)}
    assert tool(img, "freerun", off + 8*32768) == {"bytes": str(35*32768)}
    assert tool(img, "freerun", off) == {"bytes": "0"}
    assert tool(img, "freerun", odd + 32768) == {"bytes": str(64*MiB - (odd + 32768) - (64*MiB - int(g["heap"])*512
        - int(g["clusters"])*32768))}
    assert tool(img, "freerun", off + 100, rc=1).startswith("error -11 ")

def test_a_full_volume_and_lengths_beyond_the_allocation_are_refused(tool, tmp_path):
    img = image(tmp_path / "v.img", 64*MiB)
    tool(img, "format", 64*MiB, 512, 0, "", "literec.catalog", MiB)
    free = int(tool(img, "freeclusters")["free"])
    assert tool(img, "free", (free + 1)*32768, 0, 0, rc=1) == \
        "error -7 no contiguous free space that large on the volume"
    off = int(tool(img, "free", free*32768, 0, 0)["off"])
    tool(img, "create", "all", off, free*32768, T0)
    assert tool(img, "free", 1, 0, 0, rc=1).startswith("error -7 ")
    assert tool(img, "create", "more", off, 32768, T0, rc=1).startswith("error -7 ")
    assert tool(img, "length", "all", free*32768 + 1, 0, 1, T0, rc=1) == "error -11 length beyond the file's allocation"
    assert tool(img, "length", "all", 100, 200, 1, T0, rc=1).startswith("error -11 ")
    assert tool(img, "length", "all", 100, 0, 0, T0, rc=1).startswith("error -11 ")    # would drop clusters
    assert int(tool(img, "freeclusters")["free"]) == 0
    rc, out = fsck(img)
    assert rc == 0, out

def test_a_reservation_with_a_checkpointed_valid_length_is_clean_and_reads_zeros_past_it(tool, tmp_path):
    """What a power loss leaves: DataLength = the reservation, ValidDataLength = the last checkpoint."""
    img = image(tmp_path / "v.img", 64*MiB)
    tool(img, "format", 64*MiB, 512, 0, "", "literec.catalog", MiB)
    off = int(tool(img, "free", 8*MiB, MiB, 0)["off"])
    tool(img, "create", "cut.sigmf-data", off, 8*MiB, T0)
    fill(img, off, b"\x5a"*(6*MiB))                    # written past the checkpoint
    tool(img, "length", "cut.sigmf-data", 8*MiB, 2*MiB, 0, T0)
    rc, out = fsck(img)
    assert rc == 0, out
    with mounted(img) as mnt:
        d = open(os.path.join(mnt, "cut.sigmf-data"), "rb").read()
    # The specification reads zeros past ValidDataLength; exfat-fuse 1.3 returns what is on the drive.
    assert len(d) == 8*MiB and d[:2*MiB] == b"\x5a"*(2*MiB)

# Beyond 32 bits -----------------------------------------------------------------------------------------

def test_files_over_4_gib_on_a_32_tb_volume(tool):
    path = os.path.join(big_dir(), f"literec-exfat-32tb-{os.getpid()}.img")
    size = 32_000_000_000_000
    try:
        image(path, size)
        g = tool(path, "format", size, 4096, 0, "BIG", "literec.catalog", MiB)
        assert (g["cluster"], g["clusters"]) == (str(MiB), "30517460")
        # 5 GiB + 12345 bytes, exact; then 20 TiB reserved with 4 GiB + 1 valid.
        off = int(tool(path, "free", 6*GiB, MiB, 0)["off"])
        tool(path, "create", "five gigs.bin", off, 6*GiB, T0)
        n = 5*GiB + 12345
        tool(path, "length", "five gigs.bin", n, n, 1, T0)
        fill(path, off + n - 4096, b"\xa5"*4096)
        off2 = int(tool(path, "free", 20*TiB, MiB, 0)["off"])
        assert off2 == off + 5*GiB + MiB                         # right after the first file's cluster
        f = tool(path, "create", "twenty TiB.bin", off2, 20*TiB, T0)
        assert f["length"] == str(20*TiB)
        tool(path, "length", "twenty TiB.bin", 20*TiB, 4*GiB + 1, 0, T0)
        fill(path, off2 + 4*GiB - 2, b"\x01\x02\x03")
        # The far end of the volume: the last clusters are free and usable.
        last = int(tool(path, "free", MiB, 0, 29*TiB)["off"])
        assert last == 29*TiB
        tool(path, "create", "at the end", last, MiB, T0)
        fill(path, last, b"END!")
        tool(path, "length", "at the end", 4, 4, 1, T0)
        rc, out = fsck(path)
        assert rc == 0 and "files 4" in out, out
        free = int(tool(path, "freeclusters")["free"])
        assert free == 30517460 - (4 + 1 + 1 + 1) - 5121 - 20*TiB//MiB - 1   # bitmap, up-case, root, first file
        with mounted(path) as mnt:
            p = os.path.join(mnt, "five gigs.bin")
            assert os.path.getsize(p) == n
            with open(p, "rb") as f:
                f.seek(n - 4096)
                assert f.read() == b"\xa5"*4096
            p = os.path.join(mnt, "twenty TiB.bin")
            assert os.path.getsize(p) == 20*TiB
            with open(p, "rb") as f:
                f.seek(4*GiB - 2)
                assert f.read(3) == b"\x01\x02\x03"
            assert open(os.path.join(mnt, "at the end"), "rb").read() == b"END!"
            st = os.statvfs(mnt)
            assert (st.f_frsize, st.f_blocks, st.f_bfree) == (MiB, size//MiB, free)
    finally:
        if os.path.exists(path):
            os.unlink(path)
