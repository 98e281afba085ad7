#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Independent checks of exFAT volumes for the tests: Debian's exfatprogs (`fsck.exfat -n`) and a
real exFAT driver (a read-only loop device mounted with exfat-fuse), plus the BIOS's exFAT code
compiled for the host (test/c/exfat_tool.c)."""

import os
import shutil
import struct
import subprocess
import contextlib
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def fsck(image):
    """`fsck.exfat -n IMAGE`: (exit status, output)."""
    if not shutil.which("fsck.exfat"):
        pytest.skip("fsck.exfat not installed (Debian package exfatprogs; scripts/install.sh installs it)")
    r = subprocess.run(["fsck.exfat", "-n", str(image)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr

def mount_unavailable():
    """Why a read-only exFAT mount cannot run here (None: it can)."""
    if os.geteuid() != 0:
        return "mounting needs root (losetup, mount.exfat-fuse)"
    for tool in ("losetup", "mount.exfat-fuse"):
        if not shutil.which(tool):
            return f"{tool} not installed (exfat-fuse, util-linux)"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse in this machine"
    if not os.path.exists("/dev/loop-control"):
        return "no loop devices in this machine"
    return None

@contextlib.contextmanager
def mounted(image):
    """The volume mounted read-only by a real exFAT driver (exfat-fuse through a read-only loop
    device; the kernel has no exfat here): yields the mount point. Skips with the reason when
    neither can run on this machine."""
    why = mount_unavailable()
    if why:
        pytest.skip("no exFAT mount: " + why)
    mnt = tempfile.mkdtemp(prefix="literec-exfat-")
    r = subprocess.run(["losetup", "-f", "--show", "-r", str(image)], capture_output=True, text=True)
    if r.returncode:
        os.rmdir(mnt)
        pytest.skip("no exFAT mount: losetup failed: " + r.stderr.strip())
    loop = r.stdout.strip()
    try:
        r = subprocess.run(["mount.exfat-fuse", "-o", "ro", loop, mnt], capture_output=True, text=True)
        if r.returncode:
            pytest.skip("no exFAT mount: mount.exfat-fuse failed: " + (r.stdout + r.stderr).strip())
        try:
            yield mnt
        finally:
            subprocess.run(["umount", mnt], check=False)
    finally:
        subprocess.run(["losetup", "-d", loop], check=False)
        os.rmdir(mnt)

def compile_tool(out_dir):
    """The BIOS's exfat.c with test/c/exfat_tool.c, compiled for the host."""
    exe = os.path.join(str(out_dir), "exfat_tool")
    subprocess.run(["cc", "-O1", "-Wall", "-Werror", "-I", os.path.join(ROOT, "software", "libliterec"), "-o", exe,
        os.path.join(ROOT, "test", "c", "exfat_tool.c"), os.path.join(ROOT, "software", "libliterec", "exfat.c")],
        check=True)
    return exe

# Reading the structures (independent of the C code, from the specification) -----------------------

def boot_checksum(region):
    """Boot checksum (spec 3.4) of sectors 0-10 of `region` (bytes of 11 sectors)."""
    s = 0
    for i, b in enumerate(region):
        if i in (106, 107, 112):
            continue
        s = (((s & 1) << 31) | (s >> 1)) + b & 0xFFFFFFFF
    return s

def geometry(img):
    """Boot sector fields of an image (bytes or a path)."""
    with open(img, "rb") as f:
        b = f.read(512)
    sshift, cshift = b[108], b[108] + b[109]
    fat_off, fat_len, heap, clusters, root = struct.unpack_from("<IIIII", b, 80)
    return dict(sector=1 << sshift, cluster=1 << cshift, fat_offset=fat_off, fat_length=fat_len, heap=heap,
        clusters=clusters, root=root, volume_sectors=struct.unpack_from("<Q", b, 72)[0])

def cluster_offset(g, c):
    return g["heap"]*g["sector"] + (c - 2)*g["cluster"]

def root_entries(img):
    """The root directory's entries (32 bytes each) up to the end marker, following its FAT chain."""
    g = geometry(img)
    out = []
    with open(img, "rb") as f:
        c = g["root"]
        while 2 <= c < g["clusters"] + 2:
            f.seek(cluster_offset(g, c))
            d = f.read(g["cluster"])
            for i in range(0, len(d), 32):
                if d[i] == 0:
                    return out
                out.append(d[i:i + 32])
            f.seek(g["fat_offset"]*g["sector"] + 4*c)
            c = struct.unpack("<I", f.read(4))[0]
    return out

def upcase_mapping(img):
    """The volume's up-case table (spec 7.2.5) decompressed: 65536 code points."""
    g = geometry(img)
    e = next(e for e in root_entries(img) if e[0] == 0x82)
    first, length = struct.unpack_from("<IQ", e, 20)
    with open(img, "rb") as f:
        f.seek(cluster_offset(g, first))
        t = f.read(length)
    words = struct.unpack("<%dH" % (len(t)//2), t)
    m, i = [], 0
    while i < len(words):
        if words[i] == 0xFFFF and i + 1 < len(words):
            m += range(len(m), len(m) + words[i + 1])
            i += 2
        else:
            m.append(words[i])
            i += 1
    m += range(len(m), 0x10000)
    return m, struct.unpack_from("<I", e, 4)[0], t

def table_checksum(t):
    s = 0
    for b in t:
        s = (((s & 1) << 31) | (s >> 1)) + b & 0xFFFFFFFF
    return s
