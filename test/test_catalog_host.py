#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The catalog format (doc/catalog.md) and the host tool `literec` on synthetic drive images:
byte layout, CRCs, A/B copies, de-striping over 1-3 drives, rings, drops, SigMF, pattern
verification, and the errors for missing, extra, swapped, mixed and corrupt drives."""

import os
import json
import struct
import zlib
import subprocess
import sys

import pytest

from literecorder.host import catalog as cat
from literecorder.host.cli import main as literec, commands
from catalog_images import Image, recording, stream
from patterns import pattern_bytes

pytestmark = pytest.mark.unit

MiB = 1 << 20

def run(capsys, *argv):
    rc = literec([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err

def listing(capsys, *paths, extra=()):
    rc, out, err = run(capsys, "list", *paths, "--json", *extra)
    assert rc == 0, err
    return json.loads(out)

# Format -------------------------------------------------------------------------------------------

def test_header_layout_is_the_documented_one():
    h = cat.DriveHeader(set_id=bytes(range(16)), set_size=3, position=2, lba_size=4096, nsze=0x123456789,
        sys_clk_hz=200_000_000, format_cycles=0x1122334455, format_unix_us=1_700_000_000_000_000,
        model="M" * 40, serial="S" * 20, members=[cat.Member(f"SER{i}", 1000 + i) for i in range(3)])
    b = cat.pack_header(h)
    assert len(b) == 4096 and b[0:8] == b"LRCATHDR"
    assert struct.unpack_from("<HHI", b, 8) == (1, 4096, 0)
    assert b[0x10:0x20] == bytes(range(16)) and (b[0x20], b[0x21]) == (3, 2)
    assert struct.unpack_from("<IQQIII", b, 0x24) == (4096, 0x123456789, 1 << 20, 4096, 120, 16)
    assert struct.unpack_from("<IQQ", b, 0x44) == (200_000_000, 0x1122334455, 1_700_000_000_000_000)
    assert b[0x58:0x80] == b"M" * 40 and b[0x80:0x94] == b"S" * 20
    assert b[0xA0 + 64:0xA0 + 68] == b"SER2" and struct.unpack_from("<Q", b, 0xA0 + 64 + 24)[0] == 1002
    assert b[0x1A0:0xFFC] == bytes(0xFFC - 0x1A0)
    assert struct.unpack_from("<I", b, 0xFFC)[0] == zlib.crc32(b[:0xFFC])
    assert cat.parse_header(b) == h

def test_entry_layout_is_the_documented_one():
    e = cat.Entry(slot=7, seq=9, set_id=b"x" * 16, id=42, state=cat.STATE_ABORTED, mode=cat.MODE_RING, source=1,
        order=[2, 0, 1], chunk_bytes=128 * 1024, lba_size=512, seed=0xdeadbeef, sys_clk_hz=125_000_000,
        start_lba=[2048, 2048, 4096, 0, 0, 0, 0, 0], region_blocks=[256, 256, 512, 0, 0, 0, 0, 0],
        bytes_recorded=5 * MiB + 3, bytes_dropped=4096, ring_bytes=3 * MiB * 2, trigger=4 * MiB, oldest=MiB,
        start_cycles=1, stop_cycles=2, start_unix_us=3, stop_unix_us=4, update_cycles=5, drops_total=3,
        drops=[cat.Drop(100, 64), cat.Drop(200, 128)], error_status=0x4281, error_position=2, error_lba=777,
        sample_rate_mhz=30_720_000_000, frequency_mhz=2_400_000_000_000, name="capture", datatype="ci16_le",
        text="hello world")
    b = cat.pack_entry(e)
    assert b[0:8] == b"LRCATREC" and struct.unpack_from("<HHI", b, 8) == (1, 7, 9)
    assert struct.unpack_from("<IBBBB", b, 0x20) == (42, 3, 2, 1, 3)
    assert b[0x28:0x30] == bytes([2, 0, 1]) + b"\xff" * 5
    assert struct.unpack_from("<IIII", b, 0x30) == (128 * 1024, 512, 0xdeadbeef, 125_000_000)
    assert struct.unpack_from("<Q", b, 0x40 + 16)[0] == 4096 and struct.unpack_from("<Q", b, 0x80 + 16)[0] == 512
    assert struct.unpack_from("<Q", b, 0xC0)[0] == 5 * MiB + 3
    assert struct.unpack_from("<QQQ", b, 0xD0) == (6 * MiB, 4 * MiB, MiB)
    assert struct.unpack_from("<Q", b, 0x108)[0] == 5
    assert struct.unpack_from("<IIIB", b, 0x110) == (3, 2, 0x4281, 2)
    assert struct.unpack_from("<QQQ", b, 0x120) == (777, 30_720_000_000, 2_400_000_000_000)
    assert b[0x150:0x157] == b"capture" and b[0x170:0x177] == b"ci16_le" and b[0x190:0x19b] == b"hello world"
    assert struct.unpack_from("<QQQQ", b, 0x300) == (100, 64, 200, 128)
    assert struct.unpack_from("<I", b, 0xFFC)[0] == zlib.crc32(b[:0xFFC])
    assert cat.parse_entry(b) == e

def test_entry_errors_say_what_is_wrong():
    good = cat.pack_entry(cat.Entry())
    bad = bytearray(good); bad[0x40] ^= 1
    with pytest.raises(cat.BadCRC, match="CRC mismatch"):
        cat.parse_entry(bytes(bad))
    v2 = bytearray(good); v2[8] = 2
    with pytest.raises(cat.BadVersion, match="version 2 is not supported"):
        cat.parse_entry(bytes(v2))
    with pytest.raises(cat.NoCatalog):
        cat.parse_entry(bytes(4096))
    with pytest.raises(ValueError, match="at most 32 bytes of UTF-8"):
        cat.pack_entry(cat.Entry(name="n" * 33))
    with pytest.raises(ValueError, match="at most 32 bytes of UTF-8"):
        cat.pack_entry(cat.Entry(name="\u00e9" * 17))                 # 34 bytes
    # Names are UTF-8 (the BIOS stores rec_meta's \uXXXX escapes so): 16 letters beyond ASCII fit.
    e = cat.Entry(name="my capture \u00e9t\u00e9")
    assert cat.parse_entry(cat.pack_entry(e)).name == "my capture \u00e9t\u00e9"
    assert cat.parse_entry(cat.pack_entry(cat.Entry(name="\u00e9" * 16))).name == "\u00e9" * 16
    with pytest.raises(ValueError, match="the log holds 207"):
        cat.pack_entry(cat.Entry(drops=[cat.Drop(i, 1) for i in range(208)]))

def test_striping_rule():
    # Chunk k -> member k mod W at start + (k div W) * chunk_blocks: the recorder's rule.
    e = recording(1, 0, [1, 0, 2], 4096, 10 * 64 * 1024)
    segs = list(cat.segments(e, 0, 10 * 64 * 1024))
    assert [(p, off) for p, off, _, _ in segs[:4]] == [(1, 4096 * 512), (0, 4096 * 512), (2, 4096 * 512),
        (1, 4096 * 512 + 64 * 1024)]
    assert all(n == 64 * 1024 for _, _, _, n in segs)
    # Unaligned ranges are cut at chunk borders.
    assert [(p, off, d, n) for p, off, d, n in cat.segments(e, 65530, 65540)] == \
        [(1, 4096 * 512 + 65530, 65530, 6), (0, 4096 * 512, 65536, 4)]

def test_vectorized_pattern_is_the_recorders():
    for seed, first in ((1, 0), (0x5eed0001, 12345), (0xffffffff, (1 << 32) - 3)):
        assert stream(seed, 64, first_byte=4 * first) == pattern_bytes(seed, 64, first_word=first)

# List / extract -----------------------------------------------------------------------------------

@pytest.mark.parametrize("ndrives, order", [(1, [0]), (2, [0, 1]), (3, [2, 0, 1])])
def test_extract_destripes_exact_length(tmp_path, capsys, ndrives, order):
    img = Image(tmp_path, ndrives)
    n = MiB + 300 * 4 + 3           # not a whole number of chunks, not even of words
    e = recording(1, 0, order, 2048, n, seed=77, name="first")
    img.put_entry(e)
    img.put_stream(e, stream(77, n) + bytes(-n % (64 * 1024)))
    lst = listing(capsys, *img.paths)
    assert [(r["id"], r["name"], r["bytes"], r["state"], r["order"]) for r in lst["recordings"]] == \
        [(1, "first", n, "complete", order)]
    out = tmp_path / "rec.bin"
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", out)
    assert rc == 0, err
    assert out.read_bytes() == stream(77, n)
    assert f"recording 1: {n} bytes" in err and o == ""

def test_list_table_and_info(tmp_path, capsys):
    img = Image(tmp_path, 2)
    img.put_entry(recording(1, 0, [0, 1], 2048, 4 * MiB, name="a", datatype="ci16_le", sample_rate_mhz=10**11,
        frequency_mhz=2_412_500_000_000))
    img.put_entry(recording(2, 1, [1], 2048 + 4096, MiB, name="b"))
    rc, out, err = run(capsys, "list", *img.paths)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("set 5353535353535353: 2 drive(s), ")
    j = listing(capsys, *img.paths)
    assert (j["set"], j["set_id"]) == ("53" * 8, "53" * 16)         # the BIOS's 16 digits, and the whole id
    assert lines[1:] == [
        "ID  NAME  STATE     MODE   LENGTH   BYTES    DROPPED  DRIVES  START         DURATION    FORMAT             FREQUENCY",
        "1   a     complete  fixed  4.0 MiB  4194304  0        0+1     t+0.000010 s  0.001000 s  ci16_le @ 100 MHz  2.4125 GHz",
        "2   b     complete  fixed  1.0 MiB  1048576  0        1       t+0.000010 s  0.001000 s  bytes              -",
    ]
    rc, out, err = run(capsys, "info", img.paths[1])
    assert rc == 0, err
    assert "drive 1 of 2" in out and "serial SYN0001" in out
    # The set id as the BIOS prints it: its first 8 bytes, 16 hex digits (the list's first line too).
    assert out.splitlines()[2] == "  set           : 5353535353535353 (drive 1 of 2)"
    r = dict(kv.split("=", 1) for kv in out.splitlines()[-1].split()[1:])
    assert r["set"] == "5353535353535353"
    # Drive 1 holds half of recording 1 (2048 + 4096 LBAs... 2048..6143) and recording 2 after it.
    assert (r["position"], r["recordings"], r["next_lba"]) == ("1", "2", str(2048 + 4096 + 2048))
    assert int(r["free_bytes"]) == ((1 << 17) - (2048 + 4096 + 2048)) * 512

@pytest.mark.parametrize("millihertz, text", [
    (0, "-"), (1, "0.001 Hz"), (1500, "1.5 Hz"), (999_999, "999.999 Hz"), (10**6, "1 kHz"),
    (10**11, "100 MHz"), (30_720_000_000, "30.72 MHz"), (2_400_000_000_000, "2.4 GHz"),
    (123_456_789_012_345, "123.456789012345 GHz"),
])
def test_rates_and_frequencies_print_exactly_and_readably(millihertz, text):
    from literecorder.host.common import hertz
    assert hertz(millihertz) == text

def test_newest_copy_wins_and_deleted_is_hidden(tmp_path, capsys):
    img = Image(tmp_path, 1)
    e = recording(5, 3, [0], 2048, MiB, name="old")
    e.seq = 1; img.put_entry(e)                 # copy A
    e.seq = 2; e.name = "new"; img.put_entry(e) # copy B
    assert [r["name"] for r in listing(capsys, *img.paths)["recordings"]] == ["new"]
    e.seq = 3; e.state = cat.STATE_DELETED; img.put_entry(e)
    assert listing(capsys, *img.paths)["recordings"] == []
    assert [r["state"] for r in listing(capsys, *img.paths, extra=["--deleted"])["recordings"]] == ["deleted"]
    rc, _, err = run(capsys, "extract", *img.paths, "--id", 5, "-o", tmp_path / "x")
    assert rc == 2 and "no recording with id 5" in err

def test_entries_of_an_earlier_format_are_ignored(tmp_path, capsys):
    img = Image(tmp_path, 1)
    e = recording(1, 0, [0], 2048, MiB)
    e.set_id = b"O" * 16            # another set: left over from before the last rec_format
    img.put_entry(e)
    assert listing(capsys, *img.paths)["recordings"] == []

# Errors on sets -----------------------------------------------------------------------------------

@pytest.fixture
def two(tmp_path):
    img = Image(tmp_path, 2)
    e = recording(1, 0, [0, 1], 2048, 512 * 1024, seed=9)
    img.put_entry(e)
    img.put_stream(e, stream(9, 512 * 1024))
    return img

def test_swapped_order_is_refused_unless_any_order(two, capsys, tmp_path):
    rc, _, err = run(capsys, "list", two.paths[1], two.paths[0])
    assert rc == 2
    assert f"swapped order: {two.paths[1]} is drive 1, {two.paths[0]} is drive 0 of the set" in err
    assert f"give them in set order ({two.paths[0]} {two.paths[1]})" in err
    rc, _, err = run(capsys, "extract", two.paths[1], two.paths[0], "--any-order", "--id", 1, "-o", tmp_path / "o")
    assert rc == 0, err
    assert (tmp_path / "o").read_bytes() == stream(9, 512 * 1024)

def test_missing_drive_is_named(two, capsys, tmp_path):
    rc, _, err = run(capsys, "extract", two.paths[0], "--id", 1, "-o", tmp_path / "o")
    assert rc == 2 and "missing drive: set 5353535353535353 has 2 drives, drive 1 (serial SYN0001) not given" in err
    # --partial lists, but extracting a recording that needs the missing drive still fails.
    assert len(listing(capsys, two.paths[0], extra=["--partial"])["recordings"]) == 1
    rc, _, err = run(capsys, "extract", two.paths[0], "--partial", "--id", 1, "-o", tmp_path / "o")
    assert rc == 2 and "drive 1 (serial SYN0001) not given" in err

def test_extra_drive_and_mixed_set(two, capsys, tmp_path):
    rc, _, err = run(capsys, "list", two.paths[0], two.paths[1], two.paths[1])
    assert rc == 2 and "extra drive:" in err and "are both drive 1" in err
    other = Image(tmp_path / "o" if os.makedirs(tmp_path / "o") is None else None, 2, set_id=b"T" * 16)
    rc, _, err = run(capsys, "list", two.paths[0], other.paths[1])
    assert rc == 2 and f"mixed set: {other.paths[1]} belongs to set 5454545454545454" in err
    blank = tmp_path / "blank.img"
    blank.write_bytes(bytes(1 << 20))
    rc, _, err = run(capsys, "list", two.paths[0], two.paths[1], blank)
    assert rc == 2 and f"{blank}: no LiteRecorder catalog" in err
    rc, _, err = run(capsys, "list", tmp_path / "nonexistent.img")
    assert rc == 2 and "cannot open" in err

def test_corrupt_header(two, capsys):
    # One copy corrupt: the other is used, with a warning.
    two.write(0, 0x30, b"\x99")
    rc, out, err = run(capsys, "list", *two.paths)
    assert rc == 0 and "drive header copy A: CRC mismatch" in err and "copy B used" in err
    # Both corrupt: a clear error, exit 2.
    two.write(0, 4096 + 0x30, b"\x99")
    rc, out, err = run(capsys, "list", *two.paths)
    assert rc == 2 and f"{two.paths[0]}: corrupt catalog header: drive header copy A: CRC mismatch" in err

def test_unknown_version(two, capsys):
    for copy in (0, 1):
        blk = bytearray(two.read(1, copy * 4096, 4096))
        blk[8] = 7
        struct.pack_into("<I", blk, 0xFFC, zlib.crc32(bytes(blk[:0xFFC])))
        two.write(1, copy * 4096, bytes(blk))
    rc, _, err = run(capsys, "list", *two.paths)
    assert rc == 2 and "catalog format version 7 is not supported (this literec reads version 1)" in err

def test_corrupt_entry(two, capsys, tmp_path):
    # The newest copy (A, seq 1) corrupt on drive 0 only: drive 1's copy is used, with a warning.
    two.write(0, cat.entry_block(0, 0) * 4096 + 0xC0, b"\x01")
    rc, out, err = run(capsys, "extract", *two.paths, "--id", 1, "-o", tmp_path / "o")
    assert rc == 0 and "entry slot 0 copy A: CRC mismatch" in err and "older copy" in err
    assert (tmp_path / "o").read_bytes() == stream(9, 512 * 1024)
    # Corrupt on every drive: the slot is reported and the exit status is 2.
    two.write(1, cat.entry_block(0, 0) * 4096 + 0xC0, b"\x01")
    rc, out, err = run(capsys, "list", *two.paths)
    assert rc == 2 and err.count("entry slot 0 copy A: CRC mismatch") == 2 and "(no recordings)" in out

# Rings, drops, SigMF, verify ----------------------------------------------------------------------

def test_ring_extracts_in_time_order_from_the_oldest_byte(tmp_path, capsys):
    img = Image(tmp_path, 2)
    chunk, ring = 64 * 1024, 8 * 64 * 1024        # 4 chunks per drive
    total = 2 * ring + 5 * chunk + 1000            # wrapped twice and a bit
    e = recording(1, 0, [0, 1], 2048, ring, chunk=chunk, seed=3, mode=cat.MODE_RING)
    # The last chunk is written whole (padded): it overwrote the oldest chunk of the previous lap.
    written = -(-total // chunk) * chunk
    oldest = written - ring
    e.ring_bytes, e.bytes_recorded, e.oldest, e.trigger = ring, total, oldest, total - 2 * chunk
    img.put_entry(e)
    # Write the whole stream in order: later laps overwrite earlier ones, as the recorder does.
    img.put_stream(e, stream(3, written))
    out = tmp_path / "ring"
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", out, "--sigmf")
    assert rc == 0, err
    data = (tmp_path / "ring.sigmf-data").read_bytes()
    assert len(data) == total - oldest and data == stream(3, total - oldest, first_byte=oldest)
    meta = json.loads((tmp_path / "ring.sigmf-meta").read_text())
    trig = [a for a in meta["annotations"] if a.get("core:label") == "trigger"]
    assert trig and trig[0]["core:sample_start"] == total - 2 * chunk - oldest
    rc, o, err = run(capsys, "verify", *img.paths, "--id", 1)
    assert rc == 0 and "0 word error(s)" in o, o + err

def test_drops_zero_filled_or_skipped_and_in_sigmf(tmp_path, capsys):
    import sigmf
    from sigmf import sigmffile
    img = Image(tmp_path, 1)
    n = 256 * 1024
    drops = [cat.Drop(64 * 1024, 4096), cat.Drop(200 * 1024, 8192)]
    e = recording(1, 0, [0], 2048, n, seed=5, datatype="ri16_le", sample_rate_mhz=2_000_000_000,
        start_unix_us=1_700_000_000_123_456, drops=drops, drops_total=2, bytes_dropped=4096 + 8192 + 640)
    img.put_entry(e)
    # The pattern source counts every input word: kept data are the input minus the drops.
    full = stream(5, n + 4096 + 8192)
    kept = full[:64 * 1024] + full[64 * 1024 + 4096:200 * 1024 + 4096] + full[200 * 1024 + 4096 + 8192:]
    img.put_stream(e, kept)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "z", "--sigmf")
    assert rc == 0, err
    assert err.splitlines()[:3] == ["gaps: 2, 12288 bytes dropped by the recorder, zero-filled at their place:",
        "  4096 bytes before data offset 65536, at output offset 65536",
        "  8192 bytes before data offset 204800, at output offset 208896"]
    assert "640 dropped bytes of the input are not in the drop log" in err
    z = (tmp_path / "z.sigmf-data").read_bytes()
    assert z == kept[:65536] + bytes(4096) + kept[65536:204800] + bytes(8192) + kept[204800:]
    m = sigmffile.fromfile(str(tmp_path / "z.sigmf-meta"))
    assert m.get_global_field("core:datatype") == "ri16_le" and m.get_global_field("core:sample_rate") == 2e6
    assert m.get_capture_info(0)["core:datetime"] == "2023-11-14T22:13:20.123456Z"
    anns = m.get_annotations()
    assert [(a["core:sample_start"], a["core:sample_count"]) for a in anns] == [(65536 // 2, 2048), (208896 // 2, 4096)]
    assert len(m.read_samples()) == len(z) // 2
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--gaps", "skip")
    assert rc == 0 and (tmp_path / "s").read_bytes() == kept
    # verify maps data offsets to input offsets through the drop log: the kept data are right.
    rc, o, err = run(capsys, "verify", *img.paths, "--id", 1)
    assert rc == 0 and "0 word error(s)" in o, o + err

def test_verify_reports_errors_by_offset(two, capsys):
    # Flip one bit in the second chunk (drive 1, its first chunk) and garble 3 words in chunk 4.
    base = 2048 * 512
    b = two.read(1, base + 1000, 1)
    two.write(1, base + 1000, bytes([b[0] ^ 0x10]))
    two.write(0, base + 2 * 64 * 1024 + 40, b"\0" * 12)
    rc, out, err = run(capsys, "verify", *two.paths, "--id", 1)
    assert rc == 1
    assert "data offset 65536..65539: 1 word(s) differ" not in out
    first = 64 * 1024 + 1000 // 4 * 4
    assert f"  data offset {first}..{first + 3}: 1 word(s) differ" in out
    assert f"  data offset {4 * 64 * 1024 + 40}..{4 * 64 * 1024 + 51}: 3 word(s) differ" in out
    r = dict(kv.split("=", 1) for kv in out.splitlines()[-1].split()[1:])
    assert (r["errors"], r["first_error"], r["words"]) == ("4", str(first), str(512 * 1024 // 4))
    rc, out, err = run(capsys, "verify", *two.paths, "--id", 1, "--seed", 10)
    assert rc == 1 and "131072 word error(s), first at data offset 0" in out

def test_killed_recording_extracts_to_its_checkpoint(tmp_path, capsys):
    img = Image(tmp_path, 1)
    e = recording(1, 0, [0], 2048, 4 * MiB, seed=2, state=cat.STATE_RECORDING)
    e.bytes_recorded, e.stop_cycles = 1536 * 1024, 0
    img.put_entry(e)
    img.put_stream(e, stream(2, 2 * MiB))         # more reached the drive than the checkpoint says
    rc, out, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "k")
    assert rc == 0 and "did not end (state interrupted" in err
    assert (tmp_path / "k").read_bytes() == stream(2, 1536 * 1024)

def test_verify_refuses_a_user_stream(two, capsys):
    e = recording(2, 1, [0], 8192, 4096, source=1)
    two.put_entry(e)
    rc, _, err = run(capsys, "verify", *two.paths, "--id", 2)
    assert rc == 2 and "recording 2 is a user stream" in err

# Refusals that protect the drives and the data ----------------------------------------------------

def _one(tmp_path, n=512 * 1024, seed=9, **kw):
    img = Image(tmp_path, 1)
    e = recording(1, 0, [0], 2048, n, seed=seed, **kw)
    img.put_entry(e)
    img.put_stream(e, stream(seed, n) + bytes(-n % (64 * 1024)))
    return img, e

def test_extract_never_writes_over_a_drive_it_reads(tmp_path, capsys):
    img, e = _one(tmp_path)
    drive = img.paths[0]
    before = open(drive, "rb").read()
    link = tmp_path / "same-drive"
    os.symlink(drive, link)
    for out, sigmf in ((drive, False), (link, False), (os.path.splitext(drive)[0], True)):
        if sigmf:      # FILE.sigmf-data would be new, FILE.sigmf-meta is the drive itself
            os.rename(drive, str(out) + ".sigmf-meta")
            drive_now = str(out) + ".sigmf-meta"
        else:
            drive_now = drive
        rc, o, err = run(capsys, "extract", drive_now, "--id", 1, "-o", out, *(["--sigmf"] if sigmf else []))
        assert rc == 2 and "a drive of the set being read: give another file" in err, err
        assert open(drive_now, "rb").read() == before
        if sigmf:
            os.rename(drive_now, drive)
    assert listing(capsys, drive)["recordings"][0]["bytes"] == 512 * 1024

def test_a_truncated_image_is_an_error_not_zeros(tmp_path, capsys):
    img, e = _one(tmp_path)
    drive = img.paths[0]
    os.truncate(drive, MiB + 100 * 1024)          # inside the recording (data from LBA 2048 = 1 MiB)
    rc, o, err = run(capsys, "extract", drive, "--id", 1, "-o", tmp_path / "out")
    assert rc == 2, err
    assert f"the file ends at byte {MiB + 100 * 1024}" in err and "truncated image" in err, err
    assert "the image is 1150976 bytes, the drive 67108864: a truncated copy?" in err
    rc, o, err = run(capsys, "verify", drive, "--id", 1)
    assert rc == 2 and "truncated image" in err and "word error" not in o
    rc, o, err = run(capsys, "info", drive)
    assert f"file of {MiB + 100 * 1024} bytes" in o and "a truncated copy?" in err
    os.truncate(drive, 3000)                      # not even a header block
    rc, o, err = run(capsys, "list", drive)
    assert rc == 2 and "the file ends at byte 3000, bytes 0..4095 are needed" in err, err

def test_an_entry_striped_beyond_the_set_is_reported_not_a_traceback(tmp_path, capsys):
    img = Image(tmp_path, 1)
    e = recording(1, 0, [0, 3], 2048, 256 * 1024, seed=4)
    img.put_entry(e)
    rc, o, err = run(capsys, "list", *img.paths)
    assert rc == 2 and "recording 1 is striped over drive position(s) [3], the set has 1 drive(s)" in err, err
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "x")
    assert rc == 2 and "no recording with id 1" in err

@pytest.mark.parametrize("nbytes, datatype, size", [(0, "ri16_le", 2), (65539, "ci16_le", 4)])
def test_sigmf_needs_whole_samples_and_leaves_no_file_behind(tmp_path, capsys, nbytes, datatype, size):
    (tmp_path / "d").mkdir()
    img, e = _one(tmp_path / "d", n=nbytes, datatype=datatype)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--sigmf")
    assert rc == 2, err
    assert (f"recording 1: {nbytes} bytes are not a whole, non-zero number of {datatype} samples "
        f"({size} bytes each)") in err, err
    assert sorted(os.listdir(tmp_path)) == ["d"]
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "raw")
    assert rc == 0 and os.path.getsize(tmp_path / "raw") == nbytes

# Tool structure -----------------------------------------------------------------------------------

def test_subcommand_registry_and_console_script():
    cmds = commands()
    assert list(cmds) == ["bench", "extract", "fsck", "info", "list", "verify"]
    for mod in cmds.values():
        assert callable(mod.add_arguments) and callable(mod.run) and mod.HELP
    exe = os.path.join(os.path.dirname(sys.executable), "literec")
    r = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "extract" in r.stdout and "verify" in r.stdout
    r = subprocess.run([exe, "list"], capture_output=True, text=True)
    assert r.returncode == 2 and "the following arguments are required: DEV" in r.stderr

# Entries that do not fit their region or their drives ----------------------------------------------

def test_an_entry_claiming_more_than_its_region_is_refused(tmp_path, capsys):
    # Recording 1's region holds 512 KiB; recording 2 follows it. An entry of recording 1 that claims
    # 1 MiB would read recording 2's data as its own: it is inconsistent, not extracted.
    img = Image(tmp_path, 1)
    a = recording(1, 0, [0], 2048, 512 * 1024, seed=1)
    b = recording(2, 1, [0], 2048 + 1024, 512 * 1024, seed=2)
    for e in (a, b):
        img.put_entry(e)
        img.put_stream(e, stream(e.seed, 512 * 1024))
    a.bytes_recorded = MiB
    img.put_entry(a)
    rc, out, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "o")
    assert rc == 2 and not (tmp_path / "o").exists(), err
    assert ("recording 1: inconsistent catalog entry: 1048576 bytes recorded need 2048 LBAs on drive 0, "
        "its region has 1024 (LBAs 2048..3071)") in err, err
    rc, out, err = run(capsys, "verify", *img.paths, "--id", 1)
    assert rc == 2 and "inconsistent catalog entry" in err and "word error" not in out
    # list shows it as such (and exits 2); the other recording is still read.
    rc, out, err = run(capsys, "list", *img.paths)
    assert rc == 2 and out.splitlines()[2].split()[:3] == ["1", "-", "inconsistent"], out
    assert "recording 1: inconsistent catalog entry" in err
    rc, out, err = run(capsys, "list", *img.paths, "--json")
    recs = json.loads(out)["recordings"]
    assert "2048 LBAs on drive 0" in recs[0]["inconsistent"] and recs[1]["inconsistent"] is None
    rc, out, err = run(capsys, "extract", *img.paths, "--id", 2, "-o", tmp_path / "b")
    assert (tmp_path / "b").read_bytes() == stream(2, 512 * 1024)
    # A ring whose ring does not fit the region, bytes_recorded near 2^64.
    a.mode, a.ring_bytes, a.oldest, a.bytes_recorded = cat.MODE_RING, 4 * MiB, (1 << 64) - 1 - MiB, (1 << 64) - 1
    img.put_entry(a)
    rc, out, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "o")
    assert rc == 2 and "a ring of 4194304 bytes needs 8192 LBAs on drive 0, its region has 1024" in err, err

@pytest.mark.parametrize("start, message", [
    (1 << 62, "region on drive 0 (LBAs 4611686018427387904..4611686018427388927) ends beyond the drive "
        "(131072 LBAs)"),
    (100, "region on drive 0 starts at LBA 100, inside the catalog area (LBAs 0..2047)"),
])
def test_an_entry_outside_its_drive_is_refused(tmp_path, capsys, start, message):
    img, e = _one(tmp_path)
    e.start_lba[0] = start
    img.put_entry(e)
    rc, out, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "o")
    assert rc == 2 and f"recording 1: inconsistent catalog entry: {message}" in err, err
    assert "Traceback" not in err

def test_a_read_beyond_any_drive_is_an_error_not_a_traceback(tmp_path):
    from literecorder.host import drives as drv
    img, e = _one(tmp_path)
    d = drv.open_drive(img.paths[0])
    with pytest.raises(drv.SetError, match=r"bytes 9223372036854775808\.\.9223372036854776319 are "
            r"beyond the end of the file \(67108864 bytes\)"):
        d.read(1 << 63, 512)
    d.close()

def test_a_time_out_of_range_is_said_not_a_traceback(tmp_path, capsys):
    img, e = _one(tmp_path, start_unix_us=(1 << 64) - 1)
    rc, out, err = run(capsys, "list", *img.paths)
    assert rc == 0 and "invalid time (18446744073709551615 us since 1970-01-01)" in out, out + err
    h = cat.parse_header(img.read(0, 0, 4096))
    h.format_unix_us = 1 << 63
    for copy in (0, 1):
        img.write(0, copy * 4096, cat.pack_header(h))
    rc, out, err = run(capsys, "info", *img.paths)
    assert rc == 0 and "formatted invalid time (9223372036854775808 us since 1970-01-01)" in out, out + err
    # The last microsecond of year 9999 is still a time.
    from literecorder.host.recording import iso_utc
    assert iso_utc(253402300799999999) == "9999-12-31T23:59:59.999999Z" and iso_utc(253402300800000000) is None

@pytest.mark.parametrize("option, value, message", [
    ("--seed", "-1", "argument --seed: -1: pattern seed, allowed 0..4294967295"),
    ("--seed", "0x1ffffffff", "argument --seed: 8589934591: pattern seed, allowed 0..4294967295"),
    ("--seed", "xyz", "argument --seed: 'xyz': pattern seed, an integer 0..4294967295 (decimal, or hex with 0x)"),
    ("--max-report", "-1", "argument --max-report: -1: error ranges to print, allowed 0 or more"),
    ("--max-report", "two", "argument --max-report: 'two': error ranges to print, an integer 0 or more"),
])
def test_verify_refuses_bad_numbers(two, capsys, option, value, message):
    with pytest.raises(SystemExit) as x:
        literec(["verify", *two.paths, "--id", "1", option, value])
    err = capsys.readouterr().err
    assert x.value.code == 2 and message in err and "Traceback" not in err, err

def test_verify_seed_and_max_report_limits(two, capsys):
    two.write(0, 2048 * 512 + 64, b"\0" * 4)
    two.write(0, 2048 * 512 + 640, b"\0" * 4)
    rc, out, err = run(capsys, "verify", *two.paths, "--id", 1, "--max-report", 0)
    assert rc == 1 and "2 word error(s)" in out and "  ... 2 more range(s)" in out, out
    rc, out, err = run(capsys, "verify", *two.paths, "--id", 1, "--seed", "0xffffffff")
    assert rc == 1 and "(seed 4294967295)" in out

def _overflowed(tmp_path, bad_word_at=None):
    # Two drops happened, the log holds the first: the input offset of a data offset is known only
    # before the last logged drop (the unlogged one came at or after it, at data offset 200 KiB).
    img = Image(tmp_path, 1)
    n = 256 * 1024
    e = recording(1, 0, [0], 2048, n, seed=5, drops=[cat.Drop(64 * 1024, 4096)], drops_total=2,
        bytes_dropped=4096 + 8192)
    img.put_entry(e)
    full = stream(5, n + 4096 + 8192)
    kept = full[:64 * 1024] + full[64 * 1024 + 4096:200 * 1024 + 4096] + full[200 * 1024 + 4096 + 8192:]
    img.put_stream(e, kept)
    if bad_word_at is not None:
        img.write(0, 2048 * 512 + bad_word_at, b"\xff\xff\xff\xff")
    return img

def test_verify_checks_only_what_an_overflowed_drop_log_places(tmp_path, capsys):
    img = _overflowed(tmp_path)
    rc, out, err = run(capsys, "verify", *img.paths, "--id", 1)
    assert rc == 4, out + err
    assert "recording 1: 65536 of 262144 bytes checked against the test pattern (seed 5): 0 word error(s)" in out
    assert ("  data offsets 65536..262143 (196608 bytes) not checked: the drop log overflowed (2 drops, "
        "1 logged), the input-stream place of the data from the last logged drop (data offset 65536) on "
        "is unknown") in out, out
    r = dict(kv.split("=", 1) for kv in out.splitlines()[-1].split()[1:])
    assert (r["errors"], r["words"], r["unchecked"]) == ("0", str(65536 // 4), "196608")
    # An error in the part that can be checked is still an error (exit 1), one after it is not seen.
    img = _overflowed(tmp_path / "b" if os.makedirs(tmp_path / "b") is None else None, bad_word_at=1000)
    rc, out, err = run(capsys, "verify", *img.paths, "--id", 1)
    assert rc == 1 and "1 word error(s), first at data offset 1000" in out, out

# Extract outputs: stdout, a failed extract, SigMF names ----------------------------------------------

LITEREC = os.path.join(os.path.dirname(sys.executable), "literec")

def test_extract_to_stdout_is_the_data_alone(tmp_path):
    img, e = _one(tmp_path, n=300 * 1024 + 6, datatype="ri16_le")
    want = stream(9, 300 * 1024 + 6)
    for out in ("-", "/dev/stdout"):
        r = subprocess.run([LITEREC, "extract", img.paths[0], "--id", "1", "-o", out, "--progress"],
            capture_output=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout == want, (len(r.stdout), r.stdout[-120:])
        assert b"recording 1: 307206 bytes (307206 recorded, 0 gap(s)) -> " in r.stderr

def test_extract_to_stdout_in_process_and_refused_with_sigmf(tmp_path, capsysbinary):
    img, e = _one(tmp_path, n=300 * 1024 + 6, datatype="ri16_le")
    rc = literec(["extract", img.paths[0], "--id", "1", "-o", "-"])
    out, err = capsysbinary.readouterr()
    assert rc == 0 and out == stream(9, 300 * 1024 + 6) and b"-> standard output" in err
    # To a file the summary is on stderr too (the same for every output).
    rc = literec(["extract", img.paths[0], "--id", "1", "-o", str(tmp_path / "f")])
    out, err = capsysbinary.readouterr()
    assert rc == 0 and out == b"" and (tmp_path / "f").read_bytes() == stream(9, 300 * 1024 + 6)
    rc = literec(["extract", img.paths[0], "--id", "1", "-o", "-", "--sigmf"])
    out, err = capsysbinary.readouterr()
    assert rc == 2 and out == b"", err
    assert (b"-o -: --sigmf writes two files (FILE.sigmf-data and FILE.sigmf-meta), not standard output: "
        b"give a base name") in err, err

def test_a_failed_extract_leaves_an_existing_output_as_it_was(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    img, e = _one(tmp_path / "d", n=2 * MiB, datatype="ri16_le")
    out = tmp_path / "o"
    for f in ("o", "o.sigmf-data", "o.sigmf-meta"):
        (tmp_path / f).write_bytes(b"keep " + f.encode())
        os.chmod(tmp_path / f, 0o640)
    cut = tmp_path / "d" / "cut.img"
    cut.write_bytes(open(img.paths[0], "rb").read(MiB + MiB + MiB // 2))  # the second MiB of data is missing
    for sigmf in ((), ("--sigmf",)):
        rc, o, err = run(capsys, "extract", cut, "--id", 1, "-o", out, *sigmf)
        assert rc == 2 and "truncated image" in err, err
        assert sorted(os.listdir(tmp_path)) == ["d", "o", "o.sigmf-data", "o.sigmf-meta"]
        for f in ("o", "o.sigmf-data", "o.sigmf-meta"):
            assert (tmp_path / f).read_bytes() == b"keep " + f.encode()
    # A successful extract replaces the file, with the mode the file had.
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", out, "--sigmf")
    assert rc == 0, err
    assert (tmp_path / "o.sigmf-data").read_bytes() == stream(9, 2 * MiB)
    assert json.loads((tmp_path / "o.sigmf-meta").read_text())["global"]["core:datatype"] == "ri16_le"
    assert os.stat(tmp_path / "o.sigmf-data").st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["d", "o", "o.sigmf-data", "o.sigmf-meta"]

def test_sigmf_output_names_are_the_ones_written_and_checked(tmp_path, capsys):
    img, e = _one(tmp_path, datatype="ri16_le")
    drive = str(tmp_path / "x.sigmf-meta")              # a drive image with a SigMF-like name
    os.rename(img.paths[0], drive)
    before = open(drive, "rb").read()
    for name, kind in (("x.sigmf-collection", "a SigMF collection"), ("x.sigmf", "a SigMF archive")):
        rc, o, err = run(capsys, "extract", drive, "--id", 1, "-o", tmp_path / name, "--sigmf")
        assert rc == 2, err
        assert (f"-o {tmp_path / name}: --sigmf writes FILE.sigmf-data and FILE.sigmf-meta, not {kind}: "
            f"give the base name {tmp_path / 'x'}") in err, err
        assert open(drive, "rb").read() == before and sorted(os.listdir(tmp_path)) == ["x.sigmf-meta"]
    rc, o, err = run(capsys, "extract", drive, "--id", 1, "-o", tmp_path / "x.sigmf-data", "--sigmf")
    assert rc == 2 and f"output {drive} is {drive}, a drive of the set being read" in err, err
    assert open(drive, "rb").read() == before and sorted(os.listdir(tmp_path)) == ["x.sigmf-meta"]
    # The names reported are the names written.
    rc, o, err = run(capsys, "extract", drive, "--id", 1, "-o", tmp_path / "y.sigmf-meta", "--sigmf")
    assert rc == 0, err
    assert f"-> {tmp_path / 'y.sigmf-data'} + {tmp_path / 'y.sigmf-meta'}" in err
    assert sorted(os.listdir(tmp_path)) == ["x.sigmf-meta", "y.sigmf-data", "y.sigmf-meta"]

def test_sigmf_metadata_is_validated_before_anything_is_written(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    img, e = _one(tmp_path / "d", datatype="RI16_LE")
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--sigmf")
    assert rc == 2, err
    assert ("recording 1: its metadata is not valid SigMF (global core:datatype: 'RI16_LE' does not match "
        in err), err
    assert "extract it without --sigmf" in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["d"]

# SigMF time and annotations ------------------------------------------------------------------------

def _ring_with_drops(tmp_path, rate_millihz, drops_total=None):
    # A ring wrapped twice; drops before its oldest byte (their bytes moved the input on) and one at
    # the oldest byte itself. The file's sample 0 is input-stream byte oldest + the drops before it.
    img = Image(tmp_path, 2)
    chunk, ring = 64 * 1024, 8 * 64 * 1024
    total = 2 * ring + 5 * chunk
    oldest = total - ring
    drops = [cat.Drop(100 * 1024, 200_000), cat.Drop(ring + 3 * chunk, 4096), cat.Drop(oldest, 1000)]
    e = recording(1, 0, [0, 1], 2048, ring, chunk=chunk, seed=3, mode=cat.MODE_RING, datatype="ri16_le",
        sample_rate_mhz=rate_millihz, start_unix_us=1_700_000_000_000_000, drops=drops,
        drops_total=len(drops) if drops_total is None else drops_total, bytes_dropped=205_096)
    e.ring_bytes, e.bytes_recorded, e.oldest = ring, total, oldest
    img.put_entry(e)
    img.put_stream(e, bytes(total))
    return img, oldest

def test_sigmf_time_of_a_ring_counts_the_bytes_dropped_before_its_oldest(tmp_path, capsys):
    from sigmf import sigmffile
    img, oldest = _ring_with_drops(tmp_path, 1_000_000_000)       # 1 MHz, 2-byte samples
    for gaps, before in (("zero", 200_000 + 4096), ("skip", 200_000 + 4096 + 1000)):
        rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / gaps, "--sigmf", "--gaps", gaps)
        assert rc == 0, err
        m = sigmffile.fromfile(str(tmp_path / f"{gaps}.sigmf-meta"))
        us = (oldest + before) // 2                               # one sample per microsecond
        assert m.get_capture_info(0)["core:datetime"] == \
            f"2023-11-14T22:13:{20 + us // 10**6:02d}.{us % 10**6:06d}Z", (gaps, m.get_capture_info(0))
        # One segment (no gap inside the valid data), its global index counting the older laps and drops.
        assert m.get_captures() == [{"core:sample_start": 0, "core:global_index": us,
            "core:datetime": f"2023-11-14T22:13:{20 + us // 10**6:02d}.{us % 10**6:06d}Z"}]

def test_sigmf_time_is_left_out_when_it_is_not_known(tmp_path, capsys):
    import sigmf
    # No sample rate: the time of the ring's oldest byte is not the recording's start.
    (tmp_path / "a").mkdir()
    img, oldest = _ring_with_drops(tmp_path / "a", 0)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "a" / "r", "--sigmf")
    assert rc == 0, err
    meta = json.loads((tmp_path / "a" / "r.sigmf-meta").read_text())
    assert "core:datetime" not in meta["captures"][0]
    assert ("note: no core:datetime: sample 0 is input-stream byte 1056064 and the recording has no sample "
        "rate (its start, 2023-11-14T22:13:20.000000Z, is the time of byte 0)") in err, err
    # A drop log that overflowed before the oldest byte: its place in the input stream is unknown.
    (tmp_path / "b").mkdir()
    img, oldest = _ring_with_drops(tmp_path / "b", 1_000_000_000, drops_total=4)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "b" / "r", "--sigmf", "--gaps", "skip")
    assert rc == 0, err
    assert "core:datetime" not in json.loads((tmp_path / "b" / "r.sigmf-meta").read_text())["captures"][0]
    assert "note: no core:datetime: the drop log overflowed (4 drops, 3 logged)" in err, err
    # The whole file is after the last logged drop: unknown from sample 0, the smallest global index.
    m = _sigmf_read(tmp_path / "b" / "r.sigmf-meta")
    assert m.get_captures() == [{"core:sample_start": 0, "core:global_index": (oldest + 205096) // 2,
        "literec:time_unknown": True}]
    assert m.get_global_field("literec:time_unknown_from") == 0
    assert [(a["core:sample_start"], a["core:sample_count"], a["core:label"]) for a in m.get_annotations()] == \
        [(0, 1, "drop"), (0, (8 * 64 * 1024) // 2, "time unknown")]
    # A recording from its first byte has the start time, with or without a sample rate.
    (tmp_path / "c").mkdir()
    img, e = _one(tmp_path / "c", datatype="ri16_le", start_unix_us=1_700_000_000_000_000)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "c" / "r", "--sigmf")
    assert rc == 0 and "note" not in err, err
    assert json.loads((tmp_path / "c" / "r.sigmf-meta").read_text())["captures"][0]["core:datetime"] == \
        "2023-11-14T22:13:20.000000Z"

def test_sigmf_annotations_at_the_end_stay_in_the_file(tmp_path, capsys):
    import warnings
    from sigmf import sigmffile
    # A drop after the last byte, kept out: no sample follows it. A ring trigger at its last byte.
    n = 256 * 1024
    img, e = _one(tmp_path, n=n, datatype="ri16_le", drops=[cat.Drop(n, 4096)], drops_total=1, bytes_dropped=4096)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--sigmf", "--gaps", "skip")
    assert rc == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = sigmffile.fromfile(str(tmp_path / "s.sigmf-meta"))
        assert len(m.read_samples()) == n // 2
    (a,) = m.get_annotations()
    assert (a["core:sample_start"], a["core:sample_count"]) == (n // 2 - 1, 1)
    assert a["core:comment"] == ("4096 bytes dropped by the recorder after this sample, the last one "
        "(at the end of the recording; not in the file)")
    e.mode, e.ring_bytes, e.trigger, e.drops, e.drops_total, e.bytes_dropped = cat.MODE_RING, n, n, [], 0, 0
    img.put_entry(e)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "t", "--sigmf")
    assert rc == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (a,) = sigmffile.fromfile(str(tmp_path / "t.sigmf-meta")).get_annotations()
    assert (a["core:sample_start"], a["core:sample_count"], a["core:label"]) == (n // 2 - 1, 1, "trigger")
    assert a["core:comment"] == f"ring trigger at data offset {n}, after this sample, the last one (the end of the recording)"

def _sigmf_read(path):
    """The SigMF recording at ``path`` (.sigmf-meta), loaded and validated by the sigmf package
    with its warnings as errors (an undeclared extension namespace is one)."""
    import warnings
    from sigmf import sigmffile
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = sigmffile.fromfile(str(path))
        m.validate()
    return m

LITEREC_EXTENSION = [{"name": "literec", "version": "1.0.0", "optional": True}]

def test_sigmf_skip_starts_a_capture_segment_after_each_gap(tmp_path, capsys):
    # 2 MHz, 2-byte samples: a sample every 0.5 us. Drops of 4096 and 8192 bytes (2048 and 4096
    # samples) before data offsets 64 KiB and 200 KiB; 640 more dropped bytes without a place.
    img = Image(tmp_path, 1)
    n = 256 * 1024
    e = recording(1, 0, [0], 2048, n, seed=5, datatype="ri16_le", sample_rate_mhz=2_000_000_000,
        frequency_mhz=2_400_000_000_000, start_unix_us=1_700_000_000_123_456,
        drops=[cat.Drop(64 * 1024, 4096), cat.Drop(200 * 1024, 8192)], drops_total=2, bytes_dropped=4096 + 8192 + 640)
    img.put_entry(e)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--sigmf", "--gaps", "skip")
    assert rc == 0, err
    m = _sigmf_read(tmp_path / "s.sigmf-meta")
    assert m.get_captures() == [
        {"core:sample_start": 0, "core:global_index": 0, "core:datetime": "2023-11-14T22:13:20.123456Z",
         "core:frequency": 2.4e9},
        {"core:sample_start": 32768, "core:global_index": 34816, "core:datetime": "2023-11-14T22:13:20.140864Z",
         "core:frequency": 2.4e9},
        {"core:sample_start": 102400, "core:global_index": 108544, "core:datetime": "2023-11-14T22:13:20.177728Z",
         "core:frequency": 2.4e9},
    ]
    assert [(a["core:sample_start"], a["core:sample_count"], a["core:label"]) for a in m.get_annotations()] == \
        [(32768, 1, "drop"), (102400, 1, "drop")]
    g = m._metadata["global"]
    assert (g["core:extensions"], g["literec:gaps"], g["literec:dropped_bytes"], g["literec:drop_events"],
        g["literec:drop_events_logged"], g["literec:unplaced_dropped_bytes"]) == \
        (LITEREC_EXTENSION, "skip", 12928, 2, 2, 640)
    assert "literec:time_unknown_from" not in g
    assert len(m.read_samples()) == n // 2
    # Zero-filled, the file is one run of the input stream: one segment.
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "z", "--sigmf")
    assert rc == 0, err
    assert _sigmf_read(tmp_path / "z.sigmf-meta").get_captures() == [{"core:sample_start": 0,
        "core:global_index": 0, "core:datetime": "2023-11-14T22:13:20.123456Z", "core:frequency": 2.4e9}]

def _overflowed_log(tmp_path):
    # 478 drop events, the log holds the first 207: 512 bytes before every 16 KiB of data up to
    # data offset 207 x 16 KiB; the other 271 x 512 bytes were dropped somewhere after the last
    # logged one. 1 MHz, 2-byte samples: one sample per microsecond.
    img = Image(tmp_path, 1)
    e = recording(1, 0, [0], 2048, 4 * MiB, datatype="ri16_le", sample_rate_mhz=1_000_000_000,
        start_unix_us=1_700_000_000_000_000, drops=[cat.Drop(16384 * (j + 1), 512) for j in range(207)],
        drops_total=478, bytes_dropped=478 * 512)
    img.put_entry(e)
    return img

def test_sigmf_marks_where_the_time_becomes_unknown_skip(tmp_path, capsys):
    img = _overflowed_log(tmp_path)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--sigmf", "--gaps", "skip")
    assert rc == 0, err
    m = _sigmf_read(tmp_path / "s.sigmf-meta")
    caps = m.get_captures()
    # A segment at the start and after each of the 207 gaps: gap j (0-based) follows 16 KiB x (j + 1)
    # of data (8192 x (j + 1) samples), with 256 x (j + 1) samples dropped before it.
    assert len(caps) == 208
    assert caps[0] == {"core:sample_start": 0, "core:global_index": 0, "core:datetime": "2023-11-14T22:13:20.000000Z"}
    assert caps[1] == {"core:sample_start": 8192, "core:global_index": 8448,
        "core:datetime": "2023-11-14T22:13:20.008448Z"}
    assert caps[206] == {"core:sample_start": 206 * 8192, "core:global_index": 206 * 8448,
        "core:datetime": "2023-11-14T22:13:21.740288Z"}
    for j, c in enumerate(caps[1:207], start=1):
        assert (c["core:sample_start"], c["core:global_index"]) == (8192 * j, 8448 * j), j
    # After the last logged drop the place is unknown: the smallest global index, no time.
    assert caps[207] == {"core:sample_start": 207 * 8192, "core:global_index": 207 * 8448, "literec:time_unknown": True}
    g = m._metadata["global"]
    assert (g["literec:time_unknown_from"], g["literec:unplaced_dropped_bytes"], g["literec:drop_events"],
        g["literec:drop_events_logged"], g["literec:dropped_bytes"]) == (207 * 8192, 271 * 512, 478, 207, 478 * 512)
    anns = m.get_annotations()
    assert len(anns) == 208 and [a["core:label"] for a in anns].count("drop") == 207
    (u,) = [a for a in anns if a["core:label"] == "time unknown"]
    assert (u["core:sample_start"], u["core:sample_count"]) == (207 * 8192, 2 * MiB - 207 * 8192)
    assert u["core:comment"] == ("the drop log overflowed (478 drop events, 207 logged): 138752 dropped bytes "
        "are not in it and were dropped somewhere from here on; the place in the input stream, and so the "
        "time, of the samples from here to the end is unknown (the core:global_index of the capture segment "
        "here is the smallest it can be)")

def test_extract_summarizes_many_gaps(tmp_path, capsys):
    # 207 logged drops: a count, the total, the first three and how many more; not a line each.
    img = _overflowed_log(tmp_path)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--gaps", "skip")
    assert rc == 0, err
    assert err.splitlines() == [
        "gaps: 207, 105984 bytes dropped by the recorder, kept out of the file; the first 3:",
        "  512 bytes before data offset 16384, at output offset 16384",
        "  512 bytes before data offset 32768, at output offset 32768",
        "  512 bytes before data offset 49152, at output offset 49152",
        "  ... 204 more",
        "note: 138752 dropped bytes of the input are not in the drop log (positions unknown)",
        f"recording 1: 4194304 bytes (4194304 recorded, 207 gap(s)) -> {tmp_path / 's'}",
    ]
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "z")
    assert rc == 0, err
    assert err.splitlines()[:5] == [
        "gaps: 207, 105984 bytes dropped by the recorder, zero-filled at their place; the first 3:",
        "  512 bytes before data offset 16384, at output offset 16384",
        "  512 bytes before data offset 32768, at output offset 33280",
        "  512 bytes before data offset 49152, at output offset 50176",
        "  ... 204 more",
    ]

def test_sigmf_marks_where_the_time_becomes_unknown_zero(tmp_path, capsys):
    img = _overflowed_log(tmp_path)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "z", "--sigmf")
    assert rc == 0, err
    m = _sigmf_read(tmp_path / "z.sigmf-meta")
    # Zero-filled gaps keep the file one run of the input stream up to the data after the last
    # logged drop: 207 x (8192 + 256) samples in.
    unknown = 207 * 8448
    assert m.get_captures() == [
        {"core:sample_start": 0, "core:global_index": 0, "core:datetime": "2023-11-14T22:13:20.000000Z"},
        {"core:sample_start": unknown, "core:global_index": unknown, "literec:time_unknown": True},
    ]
    assert m.get_global_field("literec:time_unknown_from") == unknown
    assert m.get_global_field("literec:unplaced_dropped_bytes") == 138752
    (u,) = [a for a in m.get_annotations() if a["core:label"] == "time unknown"]
    assert (u["core:sample_start"], u["core:sample_count"]) == (unknown, (4 * MiB + 207 * 512) // 2 - unknown)
    assert len(m.read_samples()) == (4 * MiB + 207 * 512) // 2

def test_sigmf_skip_refuses_samples_out_of_frame(tmp_path, capsys):
    # A 3-byte drop before data offset 1001 of 2-byte samples: kept out, the data after it would
    # start in the middle of a sample of the file.
    (tmp_path / "d").mkdir()
    img, e = _one(tmp_path / "d", n=4096, datatype="ri16_le", drops=[cat.Drop(1001, 3)], drops_total=1, bytes_dropped=3)
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "s", "--sigmf", "--gaps", "skip")
    assert rc == 2, err
    assert err.splitlines()[-1] == ("literec extract: error: recording 1: with --gaps skip the drop before output "
        "offset 1001 leaves the samples after it out of frame (1001 is not a multiple of the 2-byte ri16_le "
        "sample): extract it with --gaps zero (the dropped bytes zero-filled keep every sample in frame)")
    assert sorted(os.listdir(tmp_path)) == ["d"]

# literec bench: options a board run would ignore ------------------------------------------------------

@pytest.mark.parametrize("transport", [["--serial", "/dev/null"], ["--url", "socket://localhost:1"]])
def test_bench_on_a_board_refuses_every_simulation_option(capsys, transport):
    sim_only = [("--ns-size", "1GiB"), ("--fault", "drop-cqe:3"), ("--lba-size", "4096"), ("--ssd", "qemu"),
        ("--link", "gen2x1"), ("--ssd-seed", "7"), ("--qemu-mdts", "5"), ("--boot-timeout", "10"),
        ("--ssds", "2"), ("--dram", "kcu105")]
    for opt, value in sim_only:
        with pytest.raises(SystemExit) as x:
            literec(["bench", "peak", *transport, opt, value, "-o", "x"])
        err = capsys.readouterr().err
        assert x.value.code == 2 and f"error: {opt}: simulation options, they need --sim" in err, (opt, err)
    argv = [a for o in sim_only[:3] for a in o]
    with pytest.raises(SystemExit):
        literec(["bench", "peak", *transport, *argv, "-o", "x"])
    assert "error: --ns-size, --lba-size, --fault: simulation options, they need --sim" in capsys.readouterr().err

def test_extract_does_not_replace_a_file_it_may_not_write(tmp_path, capsys, monkeypatch):
    # The temporary file is renamed over the output: a read-only output is refused first, as a
    # plain open() would refuse it (os.access stands in for a non-root user here).
    from literecorder.host.commands import extract
    (tmp_path / "d").mkdir()
    img, e = _one(tmp_path / "d")
    (tmp_path / "ro").write_bytes(b"read-only")
    monkeypatch.setattr(extract.os, "access", lambda path, mode: not str(path).endswith("ro"))
    rc, o, err = run(capsys, "extract", *img.paths, "--id", 1, "-o", tmp_path / "ro")
    assert rc == 3 and f"cannot write {tmp_path / 'ro'} (Permission denied)" in err, err
    assert (tmp_path / "ro").read_bytes() == b"read-only" and sorted(os.listdir(tmp_path)) == ["d", "ro"]
