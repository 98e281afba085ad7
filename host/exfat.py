#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Read-only access to the exFAT volumes `rec_format fs=exfat` makes (doc/catalog.md, "exFAT
volumes"; Microsoft's exFAT file system specification, 2019): the boot sector, the root directory
(following its FAT chain) and its files, to find the catalog file and to check that the volume and
the catalog agree (`literec fsck`). Never writes."""

import struct
from dataclasses import dataclass

CATALOG_FILE = "literec.catalog"

class ExfatError(Exception):
    """The volume cannot be read as exFAT."""

@dataclass
class File:
    name:          str
    attributes:    int
    flags:         int          # GeneralSecondaryFlags: 1 AllocationPossible, 2 NoFatChain
    first_cluster: int
    length:        int          # DataLength
    valid:         int          # ValidDataLength
    offset:        int = 0      # byte offset of the first cluster on the drive (0: no cluster)

def is_exfat(block0):
    """The first bytes of a drive hold an exFAT boot sector."""
    return len(block0) >= 512 and block0[3:11] == b"EXFAT   " and block0[510:512] == b"\x55\xaa"

def boot_checksum(region):
    s = 0
    for i, b in enumerate(region):
        if i not in (106, 107, 112):
            s = (((s & 1) << 31) | (s >> 1)) + b & 0xFFFFFFFF
    return s

class Volume:
    """An exFAT volume read through ``read(offset, n)`` (a Drive's read)."""
    def __init__(self, read, what="volume"):
        self.read = read
        b = read(0, 512)
        if not is_exfat(b):
            raise ExfatError(f"{what}: no exFAT boot sector")
        self.sector = 1 << b[108]
        self.cluster = self.sector << b[109]
        if not 9 <= b[108] <= 12 or b[108] + b[109] > 25:
            raise ExfatError(f"{what}: sector or cluster size out of range")
        if boot_checksum(read(0, 11*self.sector)) != struct.unpack("<I", read(11*self.sector, 4))[0]:
            raise ExfatError(f"{what}: the boot region's checksum is wrong")
        (self.volume_sectors,) = struct.unpack_from("<Q", b, 72)
        self.fat_offset, self.fat_length, self.heap, self.clusters, self.root = struct.unpack_from("<IIIII", b, 80)
        self.nfats = b[110]

    def cluster_offset(self, c):
        return self.heap*self.sector + (c - 2)*self.cluster

    def next_cluster(self, c):
        n = struct.unpack("<I", self.read(self.fat_offset*self.sector + 4*c, 4))[0]
        return n if 2 <= n < self.clusters + 2 else None

    def root_entries(self):
        c, seen = self.root, 0
        while c is not None and seen <= self.clusters:
            d = self.read(self.cluster_offset(c), self.cluster)
            for i in range(0, len(d), 32):
                if d[i] == 0:
                    return
                yield d[i:i + 32]
            c, seen = self.next_cluster(c), seen + 1

    def files(self):
        """The files of the root directory (entry sets whose checksums are right)."""
        e = list(self.root_entries())
        out = []
        for i, x in enumerate(e):
            if x[0] != 0x85 or i + 2 >= len(e):
                continue
            n = 1 + x[1]
            s = e[i:i + n]
            if len(s) < 3 or s[1][0] != 0xC0:
                continue
            chk = 0
            for k, b in enumerate(b"".join(s)):
                if k not in (2, 3):
                    chk = (((chk & 1) << 15) | (chk >> 1)) + b & 0xFFFF
            if chk != struct.unpack_from("<H", x, 2)[0]:
                continue
            name = b"".join(y[2:32] for y in s[2:]).decode("utf-16-le", "replace")[:s[1][3]]
            valid, = struct.unpack_from("<Q", s[1], 8)
            first, length = struct.unpack_from("<IQ", s[1], 20)
            f = File(name, struct.unpack_from("<H", x, 4)[0], s[1][1], first, length, valid)
            if first:
                f.offset = self.cluster_offset(first)
            out.append(f)
        return out

    def find(self, name):
        up = name.upper()
        return next((f for f in self.files() if f.name.upper() == up), None)

    def bitmap_used(self, first, count):
        """How many of the clusters first .. first+count-1 the allocation bitmap marks used."""
        bm = next((x for x in self.root_entries() if x[0] == 0x81), None)
        if bm is None:
            raise ExfatError("no allocation bitmap")
        c0, = struct.unpack_from("<I", bm, 20)
        lo, hi = first - 2, first - 2 + count
        data = self.read(self.cluster_offset(c0) + lo//8, (hi + 7)//8 - lo//8)
        return sum((data[(i//8) - lo//8] >> (i % 8)) & 1 for i in range(lo, hi))

def catalog_offset(read, what):
    """Byte offset of the catalog file of a volume `rec_format fs=exfat` made; ExfatError when the
    volume has none (another's volume)."""
    v = Volume(read, what)
    f = v.find(CATALOG_FILE)
    if f is None or not f.offset or not (f.flags & 2):
        raise ExfatError(f"{what}: an exFAT volume the recorder did not make (no contiguous {CATALOG_FILE} file)")
    return f.offset, v
