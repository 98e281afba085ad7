#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The on-disk catalog, format version 1 (doc/catalog.md): drive header and recording entries,
parsed from and packed to 4096-byte blocks, and the striping rule that maps a recording's data
offsets to drive offsets. Pure functions on bytes: no file access here."""

import struct
import zlib
from dataclasses import dataclass, field

# Constants ----------------------------------------------------------------------------------------

VERSION           = 1
FLAG_EXFAT        = 1               # header flags: the catalog is the first file of an exFAT volume
BLOCK             = 4096
AREA_BYTES        = 1 << 20
ENTRY_FIRST_BLOCK = 16
ENTRY_SLOTS       = 120
MAX_DRIVES        = 8
DROP_LOG_OFFSET   = 0x300
DROP_LOG_EVENTS   = 207
CRC_OFFSET        = 0xFFC
HEADER_MAGIC      = b"LRCATHDR"
ENTRY_MAGIC       = b"LRCATREC"
NO_TRIGGER        = 0xFFFFFFFFFFFFFFFF

# State 1 ("recording" on the drive) read by the host: the recording did not end, a power loss or a
# reset cut it (the BIOS names it the same way when no recording of its boot updates the entry;
# `rec_close <id>` ends it at its last checkpoint).
STATES  = {1: "interrupted", 2: "complete", 3: "aborted", 4: "error", 5: "deleted"}
MODES   = {0: "fixed", 1: "until-stop", 2: "ring"}
SOURCES = {0: "pattern", 1: "user"}
STATE_RECORDING, STATE_COMPLETE, STATE_ABORTED, STATE_ERROR, STATE_DELETED = 1, 2, 3, 4, 5
MODE_FIXED, MODE_UNTIL_STOP, MODE_RING = 0, 1, 2

def header_block(copy):
    """Block index of header copy 0 (A) or 1 (B)."""
    return copy

def entry_block(slot, copy):
    """Block index of entry slot ``slot``, copy 0 (A) or 1 (B)."""
    return ENTRY_FIRST_BLOCK + 2*slot + copy

# Errors -------------------------------------------------------------------------------------------

class CatalogError(Exception):
    """A catalog block that cannot be used (the message says why)."""

class NoCatalog(CatalogError):
    """No catalog magic: the block was never written by LiteRecorder (or was overwritten)."""

class BadCRC(CatalogError):
    """The magic is right but the CRC is not: a corrupt (or torn) block."""

class BadVersion(CatalogError):
    """A catalog block of a format version this reader does not know."""
    def __init__(self, msg, version):
        super().__init__(msg)
        self.version = version

def crc32(data):
    return zlib.crc32(data) & 0xffffffff

def _check_block(block, magic, what):
    if len(block) != BLOCK:
        raise CatalogError(f"{what}: {len(block)} bytes read, a block is {BLOCK}")
    if block[0:8] != magic:
        raise NoCatalog(f"{what}: no catalog magic ({magic.decode()})")
    version = struct.unpack_from("<H", block, 8)[0]
    if version != VERSION:
        raise BadVersion(f"{what}: catalog format version {version} is not supported (this literec "
            f"reads version {VERSION})", version)
    want = struct.unpack_from("<I", block, CRC_OFFSET)[0]
    got  = crc32(block[:CRC_OFFSET])
    if want != got:
        raise BadCRC(f"{what}: CRC mismatch (stored 0x{want:08x}, computed 0x{got:08x}): the block is corrupt")

def _seal(buf):
    struct.pack_into("<I", buf, CRC_OFFSET, crc32(bytes(buf[:CRC_OFFSET])))
    return bytes(buf)

def _str(raw):
    # UTF-8: the BIOS stores names as typed (rec_meta's \\uXXXX escapes become UTF-8).
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")

def _put_str(buf, off, size, s):
    b = s.encode("utf-8")
    if len(b) > size:
        raise ValueError(f"{s!r}: at most {size} bytes of UTF-8")
    buf[off:off + len(b)] = b

# Drive header -------------------------------------------------------------------------------------

@dataclass
class Member:
    serial: str = ""
    nsze:   int = 0

@dataclass
class DriveHeader:
    set_id:         bytes = bytes(16)
    set_size:       int = 1
    position:       int = 0
    lba_size:       int = 512
    nsze:           int = 0
    area_bytes:     int = AREA_BYTES
    entry_slots:    int = ENTRY_SLOTS
    entry_first_block: int = ENTRY_FIRST_BLOCK
    sys_clk_hz:     int = 0
    format_cycles:  int = 0
    format_unix_us: int = 0
    model:          str = ""
    serial:         str = ""
    members:        list = field(default_factory=list)
    flags:          int = 0
    catalog_lba:    int = 0          # flags & FLAG_EXFAT: first LBA of the catalog file in the exFAT volume

    @property
    def exfat(self):
        return bool(self.flags & FLAG_EXFAT)

    @property
    def set_hex(self):
        """The whole 16-byte set id in hex (32 digits)."""
        return self.set_id.hex()

    @property
    def set_name(self):
        """The set id as the BIOS prints it (``rec_format``, ``rec_list``): its first 8 bytes in hex
        (16 digits)."""
        return self.set_id[:8].hex()

    @property
    def data_start_lba(self):
        return self.catalog_lba + self.area_bytes//self.lba_size

def pack_header(h):
    if not (1 <= h.set_size <= MAX_DRIVES) or not (0 <= h.position < h.set_size):
        raise ValueError(f"set_size {h.set_size} / position {h.position}: 1-8 drives, position below the size")
    buf = bytearray(BLOCK)
    buf[0:8] = HEADER_MAGIC
    struct.pack_into("<HHI", buf, 8, VERSION, BLOCK, h.flags)
    struct.pack_into("<Q", buf, 0x98, h.catalog_lba)
    buf[0x10:0x20] = h.set_id
    struct.pack_into("<BBH", buf, 0x20, h.set_size, h.position, 0)
    struct.pack_into("<IQQII", buf, 0x24, h.lba_size, h.nsze, h.area_bytes, BLOCK, h.entry_slots)
    struct.pack_into("<IIQQ", buf, 0x40, h.entry_first_block, h.sys_clk_hz, h.format_cycles, h.format_unix_us)
    _put_str(buf, 0x58, 40, h.model)
    _put_str(buf, 0x80, 20, h.serial)
    for p, m in enumerate(h.members[:MAX_DRIVES]):
        _put_str(buf, 0xA0 + 32*p, 20, m.serial)
        struct.pack_into("<Q", buf, 0xA0 + 32*p + 24, m.nsze)
    return _seal(buf)

def parse_header(block, what="drive header"):
    _check_block(block, HEADER_MAGIC, what)
    h = DriveHeader()
    h.set_id = bytes(block[0x10:0x20])
    h.set_size, h.position = struct.unpack_from("<BB", block, 0x20)
    h.lba_size, h.nsze, h.area_bytes, block_bytes, h.entry_slots = struct.unpack_from("<IQQII", block, 0x24)
    h.entry_first_block, h.sys_clk_hz, h.format_cycles, h.format_unix_us = struct.unpack_from("<IIQQ", block, 0x40)
    h.flags, = struct.unpack_from("<I", block, 0x0C)
    h.catalog_lba, = struct.unpack_from("<Q", block, 0x98)
    h.model  = _str(block[0x58:0x80])
    h.serial = _str(block[0x80:0x94])
    if not (1 <= h.set_size <= MAX_DRIVES) or h.position >= h.set_size:
        raise CatalogError(f"{what}: set size {h.set_size} / position {h.position} out of range")
    if h.lba_size not in (512, 4096) or block_bytes != BLOCK or h.area_bytes % BLOCK or \
       h.entry_first_block + 2*h.entry_slots > h.area_bytes//BLOCK:
        raise CatalogError(f"{what}: inconsistent layout (LBA size {h.lba_size}, block {block_bytes}, "
            f"area {h.area_bytes}, {h.entry_slots} slots from block {h.entry_first_block})")
    h.members = [Member(_str(block[0xA0 + 32*p:0xA0 + 32*p + 20]),
        struct.unpack_from("<Q", block, 0xA0 + 32*p + 24)[0]) for p in range(h.set_size)]
    return h

# Recording entry ----------------------------------------------------------------------------------

@dataclass
class Drop:
    data_offset: int
    nbytes:      int

@dataclass
class Entry:
    slot:            int = 0
    seq:             int = 1
    set_id:          bytes = bytes(16)
    id:              int = 1
    state:           int = STATE_COMPLETE
    mode:            int = MODE_FIXED
    source:          int = 0
    order:           list = field(default_factory=lambda: [0])
    chunk_bytes:     int = 128*1024
    lba_size:        int = 512
    seed:            int = 1
    sys_clk_hz:      int = 200_000_000
    start_lba:       list = field(default_factory=lambda: [0]*MAX_DRIVES)
    region_blocks:   list = field(default_factory=lambda: [0]*MAX_DRIVES)
    bytes_recorded:  int = 0
    bytes_dropped:   int = 0
    ring_bytes:      int = 0
    trigger:         int = NO_TRIGGER
    oldest:          int = 0
    start_cycles:    int = 0
    stop_cycles:     int = 0
    start_unix_us:   int = 0
    stop_unix_us:    int = 0
    update_cycles:   int = 0
    drops_total:     int = 0
    drops:           list = field(default_factory=list)
    error_status:    int = 0
    error_position:  int = 0xff
    error_lba:       int = 0
    sample_rate_mhz: int = 0
    frequency_mhz:   int = 0
    name:            str = ""
    datatype:        str = ""
    text:            str = ""

    @property
    def width(self):
        return len(self.order)

    @property
    def state_name(self):
        return STATES.get(self.state, f"state{self.state}")

    @property
    def mode_name(self):
        return MODES.get(self.mode, f"mode{self.mode}")

    @property
    def source_name(self):
        return SOURCES.get(self.source, f"source{self.source}")

    @property
    def sample_rate(self):
        return self.sample_rate_mhz/1000 if self.sample_rate_mhz else None

    @property
    def frequency(self):
        return self.frequency_mhz/1000 if self.frequency_mhz else None

    @property
    def valid_range(self):
        """(first, end) data offsets of the valid data, in time order."""
        return self.oldest, self.bytes_recorded

    @property
    def length(self):
        return self.bytes_recorded - self.oldest

    @property
    def logged_drop_bytes(self):
        return sum(d.nbytes for d in self.drops)

    def seconds(self, cycles):
        return cycles/self.sys_clk_hz if self.sys_clk_hz else 0.0

def pack_entry(e):
    if not (1 <= e.width <= MAX_DRIVES):
        raise ValueError(f"stripe width {e.width}: 1-8 drives")
    if len(e.drops) > DROP_LOG_EVENTS:
        raise ValueError(f"{len(e.drops)} drop events: the log holds {DROP_LOG_EVENTS}")
    buf = bytearray(BLOCK)
    buf[0:8] = ENTRY_MAGIC
    struct.pack_into("<HHI", buf, 8, VERSION, e.slot, e.seq)
    buf[0x10:0x20] = e.set_id
    struct.pack_into("<IBBBB", buf, 0x20, e.id, e.state, e.mode, e.source, e.width)
    buf[0x28:0x30] = bytes(e.order) + b"\xff"*(MAX_DRIVES - e.width)
    struct.pack_into("<IIII", buf, 0x30, e.chunk_bytes, e.lba_size, e.seed, e.sys_clk_hz)
    struct.pack_into("<8Q", buf, 0x40, *e.start_lba)
    struct.pack_into("<8Q", buf, 0x80, *e.region_blocks)
    struct.pack_into("<10Q", buf, 0xC0, e.bytes_recorded, e.bytes_dropped, e.ring_bytes, e.trigger, e.oldest,
        e.start_cycles, e.stop_cycles, e.start_unix_us, e.stop_unix_us, e.update_cycles)
    struct.pack_into("<IIIB", buf, 0x110, e.drops_total, len(e.drops), e.error_status, e.error_position)
    struct.pack_into("<QQQ", buf, 0x120, e.error_lba, e.sample_rate_mhz, e.frequency_mhz)
    _put_str(buf, 0x150, 32, e.name)
    _put_str(buf, 0x170, 32, e.datatype)
    _put_str(buf, 0x190, 256, e.text)
    for j, d in enumerate(e.drops):
        struct.pack_into("<QQ", buf, DROP_LOG_OFFSET + 16*j, d.data_offset, d.nbytes)
    return _seal(buf)

def parse_entry(block, what="entry"):
    _check_block(block, ENTRY_MAGIC, what)
    e = Entry()
    e.slot, e.seq = struct.unpack_from("<HI", block, 0x0A)
    e.set_id = bytes(block[0x10:0x20])
    e.id, e.state, e.mode, e.source, width = struct.unpack_from("<IBBBB", block, 0x20)
    if not (1 <= width <= MAX_DRIVES):
        raise CatalogError(f"{what}: stripe width {width} out of range (1-8)")
    e.order = list(block[0x28:0x28 + width])
    e.chunk_bytes, e.lba_size, e.seed, e.sys_clk_hz = struct.unpack_from("<IIII", block, 0x30)
    e.start_lba     = list(struct.unpack_from("<8Q", block, 0x40))
    e.region_blocks = list(struct.unpack_from("<8Q", block, 0x80))
    (e.bytes_recorded, e.bytes_dropped, e.ring_bytes, e.trigger, e.oldest, e.start_cycles, e.stop_cycles,
        e.start_unix_us, e.stop_unix_us, e.update_cycles) = struct.unpack_from("<10Q", block, 0xC0)
    e.drops_total, logged, e.error_status, e.error_position = struct.unpack_from("<IIIB", block, 0x110)
    e.error_lba, e.sample_rate_mhz, e.frequency_mhz = struct.unpack_from("<QQQ", block, 0x120)
    e.name     = _str(block[0x150:0x170])
    e.datatype = _str(block[0x170:0x190])
    e.text     = _str(block[0x190:0x290])
    if logged > DROP_LOG_EVENTS:
        raise CatalogError(f"{what}: {logged} logged drop events, the log holds {DROP_LOG_EVENTS}")
    e.drops = [Drop(*struct.unpack_from("<QQ", block, DROP_LOG_OFFSET + 16*j)) for j in range(logged)]
    # Geometry the striping rule needs.
    if e.lba_size not in (512, 4096) or e.chunk_bytes == 0 or e.chunk_bytes % e.lba_size:
        raise CatalogError(f"{what}: chunk of {e.chunk_bytes} bytes with {e.lba_size}-byte LBAs is not usable")
    if any(p >= MAX_DRIVES for p in e.order) or len(set(e.order)) != width:
        raise CatalogError(f"{what}: stripe order {e.order} is not a list of distinct set positions")
    if e.mode == MODE_RING and (e.ring_bytes == 0 or e.ring_bytes % (e.chunk_bytes*width)):
        raise CatalogError(f"{what}: ring of {e.ring_bytes} bytes is not a multiple of chunk x width")
    if e.oldest > e.bytes_recorded or (e.ring_bytes and e.bytes_recorded - e.oldest > e.ring_bytes):
        raise CatalogError(f"{what}: valid window {e.oldest}..{e.bytes_recorded} is inconsistent")
    return e

# Striping -----------------------------------------------------------------------------------------

def segments(e, start, end):
    """Drive extents of the data offsets ``start`` .. ``end``-1 of recording ``e``, in order:
    yields (set position, drive byte offset, data offset, length); a segment never crosses a chunk."""
    chunk  = e.chunk_bytes
    blocks = chunk//e.lba_size
    w      = e.width
    d = start
    while d < end:
        phys = d % e.ring_bytes if e.ring_bytes else d
        k, within = divmod(phys, chunk)
        n = min(chunk - within, end - d)
        if e.ring_bytes:
            n = min(n, e.ring_bytes - phys)
        pos = e.order[k % w]
        lba = e.start_lba[pos] + (k//w)*blocks
        yield pos, lba*e.lba_size + within, d, n
        d += n

def member_chunks(chunks, m, w):
    """Chunks of the first ``chunks`` of a stripe of width ``w`` that land on member ``m``."""
    return (chunks - m + w - 1)//w if chunks > m else 0

def region_problem(e, header):
    """Why entry ``e`` does not fit the drives of ``header``'s set, or None when it does: the data
    it claims (``bytes_recorded``, a ring's ``ring_bytes``) must lie in the LBAs its region reserves
    on each member, and each region in the data area of its drive. A CRC-valid entry that breaks
    this would be read from another recording's LBAs, or from beyond the drive."""
    if e.lba_size != header.lba_size:
        return f"{e.lba_size}-byte LBAs, the drives of the set have {header.lba_size}-byte LBAs"
    blocks = e.chunk_bytes//e.lba_size
    if e.mode == MODE_RING:
        chunks, claim = e.ring_bytes//e.chunk_bytes, f"a ring of {e.ring_bytes} bytes"
    else:
        chunks, claim = -(-e.bytes_recorded//e.chunk_bytes), f"{e.bytes_recorded} bytes recorded"
    for m, p in enumerate(e.order):
        lo, n = e.start_lba[p], e.region_blocks[p]
        extent = f"LBAs {lo}..{lo + n - 1}" if n else "no LBAs"
        need = member_chunks(chunks, m, e.width)*blocks
        if need > n:
            return f"{claim} need{'s' if e.mode == MODE_RING else ''} {need} LBAs on drive {p}, its region has {n} ({extent})"
        if n and lo < header.data_start_lba:
            return (f"region on drive {p} starts at LBA {lo}, inside the catalog area "
                f"(LBAs 0..{header.data_start_lba - 1})")
        nsze = header.members[p].nsze if p < len(header.members) else 0
        if nsze and lo + n > nsze:
            return f"region on drive {p} ({extent}) ends beyond the drive ({nsze} LBAs)"
    return None

def region_extents(e):
    """{set position: (first LBA, LBA count)} of the recording's region."""
    return {p: (e.start_lba[p], e.region_blocks[p]) for p in e.order}
