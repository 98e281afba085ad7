#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""`literec` on exFAT sets (doc/catalog.md, "exFAT volumes"): volumes made by the BIOS's exFAT code
compiled for the host (test/c/exfat_tool.c) with a catalog file written by literecorder.host.catalog;
list, extract and `literec fsck` (volume and catalog agree, and each way they can disagree)."""

import os
import json
import subprocess

import pytest

from literecorder.host import catalog as cat
from literecorder.host.cli import main as literec
from catalog_images import header, recording, stream
from exfat_tools import compile_tool

pytestmark = pytest.mark.unit

MiB = 1 << 20

@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    exe = compile_tool(tmp_path_factory.mktemp("exfat"))
    def run(*args):
        r = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr
        return dict(kv.split("=", 1) for kv in r.stdout.split()[1:])
    return run

def run(capsys, *argv):
    rc = literec([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err

def put(path, off, data):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(data)

def exfat_set(tool, tmp_path, nbytes=3*MiB + 1000, name="cap"):
    """One 64 MiB drive: an exFAT volume, its catalog file, one complete recording `name`."""
    img = str(tmp_path / "ssd0.img")
    with open(img, "wb") as f:
        f.truncate(64*MiB)
    g = tool(img, "format", 64*MiB, 512, 0, "REC", "literec.catalog", MiB)
    base = int(g["first_off"])
    h = header(b"X"*16, 1, 0, nsze=64*MiB//512)
    h.flags, h.catalog_lba = cat.FLAG_EXFAT, base//512
    blk = cat.pack_header(h)
    put(img, base, blk)
    put(img, base + cat.BLOCK, blk)
    chunk = 128*1024
    off = int(tool(img, "free", 4*MiB, chunk, 0)["off"])
    e = recording(1, 0, [0], off//512, nbytes, chunk=chunk, name=name, seed=4)
    e.set_id = b"X"*16
    put(img, base + cat.entry_block(0, 1)*cat.BLOCK, cat.pack_entry(e))
    tool(img, "create", f"{name}.sigmf-data", off, e.region_blocks[0]*512, 0)
    put(img, off, stream(4, nbytes))
    tool(img, "length", f"{name}.sigmf-data", nbytes, nbytes, 1, 0)
    meta = tmp_path / "m.json"
    meta.write_text("{}")
    tool(img, "write", f"{name}.sigmf-meta", meta, 0, 0)
    return img, e

def test_list_extract_and_fsck_agree(tool, tmp_path, capsys):
    img, e = exfat_set(tool, tmp_path)
    rc, out, err = run(capsys, "list", img, "--json")
    assert rc == 0, err
    r = json.loads(out)["recordings"]
    assert [(x["id"], x["name"], x["bytes"]) for x in r] == [(1, "cap", 3*MiB + 1000)]
    rc, out, err = run(capsys, "extract", img, "--id", 1, "-o", tmp_path / "x.bin", "--no-progress")
    assert rc == 0, err
    assert open(tmp_path / "x.bin", "rb").read() == stream(4, 3*MiB + 1000)
    rc, out, err = run(capsys, "fsck", img)
    assert (rc, out) == (0, "RESULT name=fsck recordings=1 drives=1 problems=0 agree=1\n"), err

def test_fsck_names_each_disagreement(tool, tmp_path, capsys):
    img, e = exfat_set(tool, tmp_path)
    tool(img, "length", "cap.sigmf-data", MiB, MiB, 1, 0)             # cut on a PC
    tool(img, "delete", "cap.sigmf-meta")
    rc, out, err = run(capsys, "fsck", img)
    assert rc == 2
    assert out.splitlines() == [
        f"{img}: recording 1: \"cap.sigmf-data\" has DataLength 1048576 and ValidDataLength 1048576, the catalog says "
        f"3146728 and 3146728 (complete)",
        f"{img}: recording 1: no \"cap.sigmf-meta\" beside its data",
        "RESULT name=fsck recordings=1 drives=1 problems=2 agree=0"]
    tool(img, "delete", "cap.sigmf-data")
    rc, out, err = run(capsys, "fsck", img)
    assert rc == 2 and out.splitlines()[0] == \
        f"{img}: recording 1: no file \"cap.sigmf-data\" on the volume (deleted or renamed on a PC?)"

def test_a_volume_mkfs_made_is_no_catalog(tmp_path, capsys):
    img = str(tmp_path / "pc.img")
    with open(img, "wb") as f:
        f.truncate(64*MiB)
    if subprocess.run(["mkfs.exfat", img], capture_output=True).returncode:
        pytest.skip("mkfs.exfat not available")
    rc, out, err = run(capsys, "list", img)
    assert rc == 2
    assert (f"{img}: an exFAT volume the recorder did not make (no contiguous literec.catalog file): no LiteRecorder "
        "catalog") in err

def test_header_flags_and_catalog_lba_are_the_documented_bytes():
    h = header(b"Y"*16, 2, 1)
    h.flags, h.catalog_lba = cat.FLAG_EXFAT, 4480
    b = cat.pack_header(h)
    assert b[0x0C:0x10] == b"\x01\x00\x00\x00" and b[0x98:0xA0] == (4480).to_bytes(8, "little")
    g = cat.parse_header(b)
    assert (g.exfat, g.catalog_lba, g.data_start_lba) == (True, 4480, 4480 + 2048)
