#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Synthetic drive sets for the host tool's tests: drive images with a catalog (format version 1,
written with literecorder.host.catalog) and recordings striped onto them by the recorder's rule."""

import os
import struct

from literecorder.host import catalog as cat
from literecorder.host.recording import pattern_words

def header(set_id, n, p, lba_size=512, nsze=1 << 17):
    return cat.DriveHeader(set_id=set_id, set_size=n, position=p, lba_size=lba_size, nsze=nsze,
        sys_clk_hz=200_000_000, format_cycles=1000, model="Synthetic SSD", serial=f"SYN{p:04d}",
        members=[cat.Member(f"SYN{q:04d}", nsze) for q in range(n)])

class Image:
    """A set of ``n`` drive images in ``tmpdir`` (``paths[p]`` = drive at set position p)."""
    def __init__(self, tmpdir, n, set_id=b"S"*16, lba_size=512, nsze=1 << 17, names=None):
        self.n, self.set_id, self.lba_size, self.nsze = n, set_id, lba_size, nsze
        self.paths = [os.path.join(str(tmpdir), (names or "drive{}.img").format(p)) for p in range(n)]
        for p, path in enumerate(self.paths):
            with open(path, "wb") as f:
                f.truncate(nsze*lba_size)
            blk = cat.pack_header(header(set_id, n, p, lba_size, nsze))
            self.write(p, 0, blk)
            self.write(p, cat.BLOCK, blk)

    def write(self, p, offset, data):
        with open(self.paths[p], "r+b") as f:
            f.seek(offset)
            f.write(data)

    def read(self, p, offset, n):
        with open(self.paths[p], "rb") as f:
            f.seek(offset)
            return f.read(n)

    def put_entry(self, e, copy=None, drives=None):
        """Writes entry ``e`` into its slot (the copy its seq selects: odd A, even B) on every drive."""
        e.set_id = self.set_id if e.set_id == bytes(16) else e.set_id
        e.lba_size = self.lba_size
        copy = (0 if e.seq & 1 else 1) if copy is None else copy
        blk = cat.pack_entry(e)
        for p in (range(self.n) if drives is None else drives):
            self.write(p, cat.entry_block(e.slot, copy)*cat.BLOCK, blk)
        return blk

    def put_stream(self, e, data, first=0):
        """Stores stream bytes ``data`` at data offsets ``first`` .. by the striping rule."""
        for pos, off, d, n in cat.segments(e, first, first + len(data)):
            self.write(pos, off, data[d - first:d - first + n])

def recording(rec_id, slot, order, start_lba, nbytes, chunk=64*1024, lba_size=512, **kw):
    per_drive = -(-nbytes//chunk)
    e = cat.Entry(slot=slot, id=rec_id, order=list(order), chunk_bytes=chunk, lba_size=lba_size,
        bytes_recorded=nbytes, start_cycles=2000, stop_cycles=2000 + 200_000, update_cycles=2000 + 200_000, **kw)
    e.start_lba = [0]*cat.MAX_DRIVES
    e.region_blocks = [0]*cat.MAX_DRIVES
    for m, p in enumerate(order):
        e.start_lba[p] = start_lba
        chunks_here = (per_drive - m + len(order) - 1)//len(order)
        e.region_blocks[p] = chunks_here*chunk//lba_size
    return e

def stream(seed, nbytes, first_byte=0):
    """The recorder's test stream (checked against pattern_word_py in test_catalog_host)."""
    assert first_byte % 4 == 0
    return pattern_words(seed, first_byte//4, -(-nbytes//4)).astype("<u4").tobytes()[:nbytes]
