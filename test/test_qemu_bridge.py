#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The QEMU NVMe bridge (sim/modules/qemu_nvme, doc/qemu_bridge.md) at the TLP level: QEMU's NVMe
controller behind the bridge, driven by the common root-complex/host-memory model (no RTL), and the
same protocol sequence against the project's simulated SSD (`model`) where the two must agree.

Every byte QEMU reads or writes reaches it through MRd/MWr TLPs counted by the host model; QEMU's
view of host memory (the bridge's shared memory) is compared with the host's memory; data written
through the host is read back from QEMU's raw image with ordinary file I/O."""

import os
import re
import sys
import json
import time
import fcntl
import shutil
import signal
import struct
import random
import argparse
import subprocess

import pytest

from literecorder import ROOT
from literecorder.sim import qemu as qemumod
from literecorder.sim.qemu import QemuNVMe, QemuError, qemu_available, read_image, MISSING_MESSAGE
from literecorder.sim.ssd import SimSSD, US

pytestmark = pytest.mark.unit

# Only the cases that start QEMU are skipped without it; the model's side of every comparison, the
# argument checks and the fake-QEMU life-cycle cases run anyway.
needs_qemu = pytest.mark.skipif(not qemu_available(), reason=f"{MISSING_MESSAGE} (this case starts QEMU)")
KINDS = [pytest.param("qemu", marks=needs_qemu), "model"]

OK, INVALID_OPCODE, INVALID_FIELD, DTE = (0, 0, 0), (0, 1, 1), (0, 2, 1), (0, 4, 1)
LBA_RANGE, PRP_OFFSET = (0, 0x80, 1), (0, 0x13, 1)

SIZE = 64 << 20
NBLK = SIZE // 512

# The two devices: identities differ by design, the protocol must not.
EXPECT = {
    "qemu":  dict(vid=0x1b36, did=0x0010, ssvid=0x1af4, ssid=0x1100, model="QEMU NVMe Ctrl",
                  serial="LRQEMU0", mqes=0x7ff, to=0x0f, mdts=7, nn=256, bar_size=16 << 10,
                  caps=[0x10, 0x01], temp=323),
    "model": dict(vid=0x1ee7, did=0x5100, ssvid=0x1ee7, ssid=0x0001, model="LiteRecorder SimSSD ideal",
                  serial="LRSIM0000000001", mqes=1023, to=20, mdts=9, nn=1, bar_size=16 << 10,
                  caps=[0x01, 0x11, 0x10], temp=None),
}

def st(c):
    return (c["sct"], c["sc"], c["dnr"])

def make(kind, tmp_path, size=SIZE, lba_size=512, host_mem=32 << 20, **kw):
    if kind == "qemu":
        return QemuNVMe(image=str(tmp_path / "qemu.img"), image_size=size, lba_size=lba_size,
            host_mem=host_mem, log=str(tmp_path / "qemu.log"), **kw)
    return SimSSD(profile="ideal", ns_file=str(tmp_path / "ns.img"), ns_size=size, lba_size=lba_size,
        host_mem=host_mem, **kw)

def image_path(d):
    return d.image if isinstance(d, QemuNVMe) else d.args["ns_file"]

@pytest.fixture(params=KINDS)
def kind(request):
    return request.param

@pytest.fixture
def dev(kind, tmp_path):
    d = make(kind, tmp_path)
    d.kind = kind
    d.bring_up(mps=128, mrrs=512)
    yield d
    d.close()

@pytest.fixture
def qdev(tmp_path):
    d = make("qemu", tmp_path)
    d.kind = "qemu"
    d.bring_up(mps=128, mrrs=512)
    yield d
    d.close()

def traffic(d, fn, settle_us=50):
    """Run fn (one command); returns (result, MRd bytes, MWr bytes, MRd TLPs, MWr TLPs)."""
    d.run_us(settle_us)
    s0 = d.stats()
    r = fn()
    d.run_us(settle_us)
    s1 = d.stats()
    return (r, s1["mrd_bytes"] - s0["mrd_bytes"], s1["mwr_bytes"] - s0["mwr_bytes"],
        s1["mrd_tlps"] - s0["mrd_tlps"], s1["mwr_tlps"] - s0["mwr_tlps"])

def wait_cqe_wall(d, qid, seconds=5.0):
    """A CQE that QEMU may post at any (wall-clock) time, e.g. an asynchronous event."""
    t_end = time.time() + seconds
    while time.time() < t_end:
        e = d.poll_cqe(qid, timeout_us=20)
        if e is not None:
            return e
        time.sleep(0.001)
    return None

# PCIe function ---------------------------------------------------------------------------------------

def test_configuration_space_and_bar(kind, tmp_path):
    e = EXPECT[kind]
    with make(kind, tmp_path) as d:
        assert d.cfg32(0x00) == (e["did"] << 16) | e["vid"]
        assert d.cfg32(0x08) >> 8 == 0x010802                     # NVMe class code
        assert (d.cfg32(0x0c) >> 16) & 0x7f == 0                  # header type 0
        assert d.cfg32(0x2c) == (e["ssid"] << 16) | e["ssvid"]
        caps, p = [], d.cfg32(0x34) & 0xff
        while p:
            v = d.cfg32(p)
            caps.append(v & 0xff)
            p = (v >> 8) & 0xff
        assert caps == e["caps"]
        pc = d.find_cap(0x10)
        assert (d.cfg32(pc) >> 20) & 0xf == 0                     # PCI Express endpoint
        assert d.cfg32(pc + 0x0c) & 0x3ff == (4 << 4) | 3         # LinkCap gen3 x4
        assert (d.cfg32(pc + 0x10) >> 16) & 0x3ff == (4 << 4) | 3 # LinkSta: trained gen3 x4
        # BAR0: 64-bit memory BAR, sizing by all-ones, the host's address reads back
        assert d.cfg32(0x10) & 0xf == 0x4
        d.cfg_write(0x10, 0xffffffff); d.cfg_write(0x14, 0xffffffff)
        assert d.cfg32(0x10) == (0x1_0000_0000 - e["bar_size"]) | 0x4 and d.cfg32(0x14) == 0xffffffff
        d.cfg_write(0x10, 0xc000_0000); d.cfg_write(0x14, 0)
        assert d.cfg32(0x10) == 0xc000_0004 and d.cfg32(0x14) == 0
        for bar in (0x18, 0x1c, 0x20, 0x24):
            assert d.cfg32(bar) == 0
        assert d.cfg32(0x100) == 0 and d.cfg32(0xffc) == 0               # no extended capabilities
        # without Command.MEM a BAR read is answered with UR, with it the registers appear
        d.bar0 = 0xc000_0000
        assert d.mmio_read(0x08)[0] == 1
        d.cfg_write(0x04, 0x0006, be=0x3)
        assert d.rd32(0x08) == 0x00010400

def test_devctl_payload_and_read_request_sizes(kind, tmp_path):
    """DevCtl MPS/MRRS are read-write (QEMU's emulation makes them read-only: the bridge keeps
    them) and bound the device's TLPs."""
    with make(kind, tmp_path) as d:
        d.bring_up(mps=128, mrrs=256)
        pc = d.find_cap(0x10)
        assert (d.cfg32(pc + 8) >> 12) & 7 == 1 and (d.cfg32(pc + 8) >> 5) & 7 == 0
        buf = d.alloc(1 << 16)
        d.write_mem(buf, os.urandom(1 << 16))
        assert st(d.io(1, 0, 128, buf)) == OK
        assert st(d.io(2, 0, 128, buf)) == OK
        s = d.stats()
        assert s["max_mrd_len"] == 256 and s["max_mwr_len"] == 128
        assert s["mrrs_violations"] == 0 and s["mps_violations"] == 0 and s["boundary_violations"] == 0

def test_cap_vs_and_enable(kind, tmp_path):
    e = EXPECT[kind]
    with make(kind, tmp_path) as d:
        d.enumerate(mps=128)
        cap = d.rd64(0x00)
        assert cap & 0xffff == e["mqes"] and (cap >> 16) & 1 == 1        # MQES, CQR
        assert (cap >> 24) & 0xff == e["to"] and (cap >> 32) & 0xf == 0    # TO, DSTRD
        assert (cap >> 37) & 1 == 1                                       # CSS: NVM command set
        assert (cap >> 48) & 0xf == 0 and (cap >> 52) & 0xf == 4           # MPSMIN 4 KiB, MPSMAX 64 KiB
        assert d.rd32(0x08) == 0x00010400
        assert d.rd32(0x14) == 0 and d.rd32(0x1c) & 1 == 0
        d.init_controller()
        assert d.rd32(0x1c) & 3 == 1                                      # RDY, no CFS
        assert d.rd32(0x24) == (31 << 16) | 31
        d.wr32(0x14, 0)
        assert d.wait_reg(0x1c, 1, 0, 1000)

# Admin -------------------------------------------------------------------------------------------------

def test_identify_controller(dev):
    e = EXPECT[dev.kind]
    buf = dev.alloc(4096)
    c = dev.admin(0x06, prp1=buf, cdw={10: 1})
    assert st(c) == OK and c["sqid"] == 0 and c["sqhd"] == dev.queues[0]["tail"]
    d = dev.read_mem(buf, 4096)
    assert struct.unpack_from("<HH", d, 0) == (e["vid"], e["ssvid"])
    assert d[4:24].decode().rstrip() == e["serial"]
    assert d[24:64].decode().rstrip() == e["model"]
    assert d[77] == e["mdts"]
    assert struct.unpack_from("<I", d, 80)[0] == 0x00010400
    assert d[512] == 0x66 and d[513] == 0x44                               # SQES / CQES
    assert struct.unpack_from("<I", d, 516)[0] == e["nn"]
    assert struct.unpack_from("<H", d, 520)[0] & 0x0c == 0x0c             # DSM + Write Zeroes
    assert d[525] & 1 == 1                                                # volatile write cache

def test_identify_namespace(dev):
    buf = dev.alloc(4096)
    assert st(dev.admin(0x06, nsid=1, prp1=buf, cdw={10: 0})) == OK
    ns = dev.read_mem(buf, 4096)
    nsze, ncap = struct.unpack_from("<QQ", ns, 0)
    assert nsze == ncap == NBLK
    assert ns[26] & 0xf == 0 and (struct.unpack_from("<I", ns, 128)[0] >> 16) & 0xff == 9
    dev.write_mem(buf, b"\xff" * 4096)
    assert st(dev.admin(0x06, nsid=0, prp1=buf, cdw={10: 2})) == OK           # active NS list
    assert struct.unpack("<4I", dev.read_mem(buf, 16)) == (1, 0, 0, 0)

@pytest.mark.parametrize("kind", KINDS)   # The model had DLFEAT at byte 32 (fixed).
def test_identify_namespace_dlfeat_offset(kind, tmp_path):
    """Deallocated blocks read as zeroes on both devices: DLFEAT (byte 33) bits 2:0 = 001b and
    FPI (byte 32) bit 7 clear (no format progress indicator)."""
    with make(kind, tmp_path) as d:
        d.bring_up(mps=128)
        buf = d.alloc(4096)
        assert st(d.admin(0x06, nsid=1, prp1=buf, cdw={10: 0})) == OK
        ns = d.read_mem(buf, 64)
        assert ns[33] & 7 == 1 and ns[32] == 0

@pytest.mark.parametrize("kind", KINDS)   # The model claimed log 05h in LPA (fixed).
def test_log_page_attributes_match_the_logs(kind, tmp_path):
    """Identify Controller LPA bit 1 = the Commands Supported and Effects log (05h) exists; bit 2 =
    extended data (NUMDU, LPO): an offset read returns the log from that offset."""
    with make(kind, tmp_path) as d:
        d.bring_up(mps=128)
        buf = d.alloc(8192)
        assert st(d.admin(0x06, prp1=buf, cdw={10: 1})) == OK
        lpa = d.read_mem(buf, 4096)[261]
        c = d.admin(0x02, nsid=0xffffffff, prp1=buf, cdw={10: (1023 << 16) | 0x05})
        assert (lpa >> 1) & 1 == (st(c) == OK)
        assert (lpa >> 2) & 1 == 1
        full, part = d.alloc(4096), d.alloc(4096)
        assert st(d.admin(0x02, nsid=0xffffffff, prp1=full, cdw={10: (127 << 16) | 0x02})) == OK
        assert st(d.admin(0x02, nsid=0xffffffff, prp1=part, cdw={10: (3 << 16) | 0x02, 12: 32})) == OK
        assert d.read_mem(part, 16)[:8] == d.read_mem(full + 32, 8)          # data units read

def test_smart_log_counts_host_io(dev):
    e = EXPECT[dev.kind]
    buf = dev.alloc(1 << 20)
    for i in range(3):
        assert st(dev.io(1, i * 1000, 1000, buf)) == OK                  # 3 x 512000 bytes
    for i in range(2):
        assert st(dev.io(2, i, 1, buf)) == OK
    log = dev.alloc(4096)
    dev.write_mem(log, b"\xee" * 512)
    assert st(dev.admin(0x02, nsid=0xffffffff, prp1=log, cdw={10: (127 << 16) | 0x02})) == OK
    s = dev.read_mem(log, 512)
    q = lambda off: struct.unpack_from("<Q", s, off)[0]
    assert s[0] == 0                                                    # no critical warning
    temp = struct.unpack_from("<H", s, 1)[0]
    assert temp == e["temp"] if e["temp"] else 273 + 20 < temp < 273 + 90
    assert (q(32), q(48), q(64), q(80)) == (1, 3, 2, 3)                 # units read/written, commands
    assert s[232:] == bytes(280)                                        # reserved

def test_smart_log_namespace_identifier(dev):
    """NVMe up to 1.4 requests the controller's SMART log with NSID FFFFFFFFh only (0h came with
    2.0, for hosts 'should use FFFFFFFFh'): QEMU (1.4) refuses 0h, the host must not use it."""
    log = dev.alloc(4096)
    assert st(dev.admin(0x02, nsid=0xffffffff, prp1=log, cdw={10: (127 << 16) | 0x02})) == OK
    c = dev.admin(0x02, nsid=0, prp1=log, cdw={10: (127 << 16) | 0x02})
    assert st(c) == ((0, 0x0b, 1) if dev.kind == "qemu" else OK)

def test_create_queue_errors(dev):
    cq = dev.alloc(4096)
    cases = [
        (0x05, {10: (15 << 16) | 0, 11: 1}, (1, 1, 1)),           # QID 0
        (0x05, {10: (15 << 16) | 1, 11: 1}, (1, 1, 1)),           # exists
        (0x05, {10: (0 << 16) | 2, 11: 1}, (1, 2, 1)),            # one entry
        (0x05, {10: (15 << 16) | 2, 11: 0}, INVALID_FIELD),       # not contiguous
        (0x01, {10: (15 << 16) | 2, 11: (9 << 16) | 1}, (1, 0, 1)),   # CQ 9 missing
        (0x00, {10: 0}, (1, 1, 1)),                                # delete SQ 0
    ]
    for opc, cdw, want in cases:
        assert st(dev.admin(opc, prp1=cq, cdw=cdw)) == want, (hex(opc), cdw)
    assert st(dev.admin(0x05, prp1=cq + 8, cdw={10: (15 << 16) | 2, 11: 1})) == PRP_OFFSET
    c = dev.admin(0x0a, cdw={10: 0x06})                            # volatile write cache: on
    assert st(c) == OK and c["dw0"] == 1

# NVM -----------------------------------------------------------------------------------------------------

def test_write_read_single_blocks(dev):
    rng = random.Random(7)
    buf, rb = dev.alloc(4096), dev.alloc(4096)
    written = {}
    for lba in (0, 1, 7, 4096, 100000, NBLK // 2 + 3):
        data = bytes(rng.getrandbits(8) for _ in range(512))
        dev.write_mem(buf, data)
        c = dev.io(1, lba, 1, buf)
        assert st(c) == OK and c["sqid"] == 1
        written[lba] = data
    for lba, data in written.items():
        dev.write_mem(rb, b"\x55" * 512)
        assert st(dev.io(2, lba, 1, rb)) == OK
        assert dev.read_mem(rb, 512) == data
    for lba, data in written.items():                               # at LBA x 512 in the image
        assert read_image(image_path(dev), lba * 512, 512) == data

def test_multi_page_prp_and_prp_list(dev):
    buf, rb = dev.alloc(5 * 4096), dev.alloc(5 * 4096)
    # PRP1 with an offset + PRP2 = the next page
    p1 = buf + 4096 - 1024
    data = os.urandom(6 * 512)
    dev.write_mem(p1, data)
    assert st(dev.io(1, 40, 6, prp1=p1, prp2=buf + 4096)) == OK
    assert read_image(image_path(dev), 40 * 512, len(data)) == data
    assert st(dev.io(2, 40, 6, prp1=rb + 4096 - 1024, prp2=rb + 4096)) == OK
    assert dev.read_mem(rb + 4096 - 1024, len(data)) == data
    # 16 scattered pages through a PRP list (PRP1 with an offset)
    rng = random.Random(3)
    pages = [dev.alloc(4096) for _ in range(17)]
    rng.shuffle(pages)
    data = os.urandom(16 * 4096 - 512)
    first = 4096 - 512
    dev.write_mem(pages[0] + 512, data[:first])
    for i in range(1, 16):
        dev.write_mem(pages[i], data[first + (i - 1) * 4096:first + i * 4096])
    lst = dev.alloc(4096)
    dev.write_mem(lst, struct.pack("<15Q", *pages[1:16]))
    assert st(dev.io(1, 1000, 127, prp1=pages[0] + 512, prp2=lst)) == OK
    assert read_image(image_path(dev), 1000 * 512, len(data)) == data
    rb = dev.alloc(16 * 4096)
    assert st(dev.io(2, 1000, 127, rb)) == OK
    assert dev.read_mem(rb, len(data)) == data

def test_prp_list_with_offset_chained(dev):
    """A PRP list starting 16 entries before the end of its page: 15 entries + a pointer to the
    next list (the NVMe rule for lists that cross a page)."""
    rng = random.Random(99)
    npages = 40
    pages = [dev.alloc(4096) for _ in range(npages)]
    rng.shuffle(pages)
    data = os.urandom(npages * 4096)
    for i in range(npages):
        dev.write_mem(pages[i], data[i * 4096:(i + 1) * 4096])
    l1 = dev.alloc(8192) + 4096 - 16 * 8
    l2 = dev.alloc(4096)
    dev.write_mem(l1, struct.pack("<15Q", *pages[1:16]) + struct.pack("<Q", l2))
    dev.write_mem(l2, struct.pack(f"<{npages - 16}Q", *pages[16:]))
    dev.trace()
    assert st(dev.io(1, 2048, npages * 8, prp1=pages[0], prp2=l1)) == OK
    reads = [r for r in dev.traced() if r.dir == 1 and r.is_mrd]
    assert {r.addr for r in reads if r.addr in (l1, l2)} == {l1, l2}
    assert sum(r.length for r in reads if l1 <= r.addr < l1 + 128 or l2 <= r.addr < l2 + 4096) == 16 * 8 + 24 * 8
    assert read_image(image_path(dev), 2048 * 512, len(data)) == data
    rb = dev.alloc(npages * 4096)
    assert st(dev.io(2, 2048, npages * 8, rb)) == OK
    assert dev.read_mem(rb, len(data)) == data

@needs_qemu
def test_large_transfer_with_chained_list(tmp_path):
    """4 MiB in one command (QEMU with MDTS 2^10 x 4 KiB): 1024 pages, a page-aligned list of 511
    entries + chain, then 513 entries."""
    with make("qemu", tmp_path, host_mem=24 << 20, mdts=10) as d:
        d.bring_up(mps=128, mrrs=512)
        n = 1024
        buf = d.alloc(n * 4096)
        data = os.urandom(n * 4096)
        d.write_mem(buf, data)
        l1, l2 = d.alloc(4096), d.alloc(4096)
        d.write_mem(l1, struct.pack("<511Q", *[buf + 4096 * i for i in range(1, 512)]) + struct.pack("<Q", l2))
        d.write_mem(l2, struct.pack("<512Q", *[buf + 4096 * i for i in range(512, n)]))
        c, mrd, mwr, _, _ = traffic(d, lambda: d.io(1, 8, n * 8, prp1=buf, prp2=l1))
        assert st(c) == OK
        assert mrd == 64 + 4096 + 512 * 8 + n * 4096 and mwr == 16
        assert read_image(d.image, 8 * 512, len(data)) == data
        rb = d.alloc(n * 4096)
        d.write_mem(l1, struct.pack("<511Q", *[rb + 4096 * i for i in range(1, 512)]) + struct.pack("<Q", l2))
        d.write_mem(l2, struct.pack("<512Q", *[rb + 4096 * i for i in range(512, n)]))
        c, mrd, mwr, _, _ = traffic(d, lambda: d.io(2, 8, n * 8, prp1=rb, prp2=l1))
        assert st(c) == OK and mwr == n * 4096 + 16
        assert d.read_mem(rb, len(data)) == data

def test_last_lba_and_lba_out_of_range(dev):
    buf = dev.alloc(8192)
    data = os.urandom(512)
    dev.write_mem(buf, data)
    assert st(dev.io(1, NBLK - 1, 1, buf)) == OK
    assert read_image(image_path(dev), (NBLK - 1) * 512, 512) == data
    dev.write_mem(buf, bytes(512))
    assert st(dev.io(2, NBLK - 1, 1, buf)) == OK and dev.read_mem(buf, 512) == data
    for opc, slba, nlb in ((1, NBLK - 1, 2), (2, NBLK, 1), (1, NBLK, 1), (2, 1 << 40, 8)):
        cid = dev._cid + 1
        c = dev.io(opc, slba, nlb, buf)
        assert st(c) == LBA_RANGE and c["cid"] == cid and c["sqid"] == 1, (opc, slba, nlb)
    assert os.path.getsize(image_path(dev)) == SIZE

def test_flush(dev):
    buf = dev.alloc(4096)
    assert st(dev.io(1, 5, 8, buf)) == OK
    assert st(dev.cmd(1, 0x00, nsid=1)) == OK
    assert st(dev.cmd(1, 0x00, nsid=0xffffffff)) == OK

def test_deallocate_and_write_zeroes(dev):
    buf, rb, ranges = dev.alloc(1 << 16), dev.alloc(1 << 16), dev.alloc(4096)
    dev.write_mem(buf, b"\x5a" * (64 * 512))
    assert st(dev.io(1, 0, 64, buf)) == OK
    dev.write_mem(ranges, struct.pack("<IIQ", 0, 16, 8) + struct.pack("<IIQ", 0, 8, 48))
    assert st(dev.cmd(1, 0x09, nsid=1, prp1=ranges, cdw={10: 1, 11: 1 << 2})) == OK
    assert st(dev.io(2, 0, 64, rb)) == OK
    got = dev.read_mem(rb, 64 * 512)
    assert got[:8 * 512] == b"\x5a" * 4096 and got[8 * 512:24 * 512] == bytes(16 * 512)
    assert got[24 * 512:48 * 512] == b"\x5a" * (24 * 512)
    assert got[48 * 512:56 * 512] == bytes(4096) and got[56 * 512:] == b"\x5a" * 4096
    img = read_image(image_path(dev), 0, 64 * 512)
    assert img == got                                              # holes read as zeroes
    assert st(dev.io(8, 2, 4)) == OK                               # Write Zeroes
    assert read_image(image_path(dev), 0, 8 * 512) == b"\x5a" * 1024 + bytes(2048) + b"\x5a" * 1024

def test_invalid_requests_rejected(dev):
    buf = dev.alloc(1 << 16)
    assert st(dev.cmd(1, 0x7f, nsid=1)) == INVALID_OPCODE
    assert st(dev.admin(0x7e)) == INVALID_OPCODE
    assert st(dev.io(2, 0, (4096 << EXPECT[dev.kind]["mdts"]) // 512 + 1, buf)) == INVALID_FIELD   # > MDTS
    assert st(dev.admin(0x06, prp1=buf, cdw={10: 0x13})) == INVALID_FIELD                          # CNS
    assert st(dev.io(2, 0, 16, prp1=buf, prp2=buf + 4096 + 512)) == PRP_OFFSET                      # PRP2 offset
    lst = dev.alloc(4096)
    dev.write_mem(lst, struct.pack("<2Q", buf + 4096, buf + 8192 + 8))
    assert st(dev.io(2, 0, 24, prp1=buf, prp2=lst)) == PRP_OFFSET                                   # list entry
    # an NSID above NN is invalid (Invalid Namespace or Format); below NN but inactive: Invalid Field
    c = dev.io(1, 0, 1, buf, nsid=2)
    assert st(c) == ((0, 0x02, 1) if EXPECT[dev.kind]["nn"] >= 2 else (0, 0x0b, 1))
    assert st(dev.io(1, 0, 1, buf, nsid=1000)) == (0, 0x0b, 1)

def test_shutdown(dev):
    buf = dev.alloc(4096)
    assert st(dev.io(1, 9, 8, buf)) == OK
    cc = dev.rd32(0x14)
    dev.wr32(0x14, cc | (1 << 14))                                 # normal shutdown
    assert (dev.rd32(0x1c) >> 2) & 3 in (1, 2)                     # occurring or complete
    assert dev.wait_reg(0x1c, 0xc, 0x8, 2000)                      # SHST complete
    assert dev.rd32(0x1c) & 3 == 1
    dev.wr32(0x14, 0)
    assert dev.wait_reg(0x1c, 1, 0, 2000)                          # disabled (SHST: see the doc)
    dev.init_controller()                                          # usable again after the reset
    dev.create_io_queue(1)
    assert st(dev.io(2, 9, 8, buf)) == OK

def test_queue_wrap_phase_and_sqhd(dev):
    dev.create_io_queue(2, size=4, cq_size=3)
    buf = dev.alloc(4096)
    got = []
    for i in range(11):
        cid = dev.next_cid()
        dev.submit(2, [0x02 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, i, 0, 0])
        e = dev.poll_cqe(2)
        assert e["cid"] == cid and e["sqid"] == 2 and st(e) == OK
        got.append((e["phase"], e["sqhd"]))
    assert got == [(1, 1), (1, 2), (1, 3), (0, 0), (0, 1), (0, 2), (1, 3), (1, 0), (1, 1), (0, 2), (0, 3)]

def test_full_cq_holds_completions_until_the_head_moves(dev):
    dev.create_io_queue(3, size=8, cq_size=4)
    buf = dev.alloc(4096)
    cids = []
    for i in range(6):
        cid = dev.next_cid(); cids.append(cid)
        dev.submit(3, [0x02 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, i, 0, 0], ring=False)
    dev.ring(3)
    got = [dev.poll_cqe(3, ack=False)["cid"] for _ in range(3)]   # a CQ of 4 holds 3
    assert dev.poll_cqe(3, timeout_us=200, ack=False) is None
    dev.wr32(dev.db(3, cq=True), dev.queues[3]["head"])
    got += [dev.poll_cqe(3)["cid"] for _ in range(3)]
    assert sorted(got) == sorted(cids)

@needs_qemu
def test_full_cq_is_not_a_qemu_timeout(tmp_path):
    """Completions QEMU holds because the host leaves its CQ full do not count against QEMU's
    wall-clock bound."""
    with make("qemu", tmp_path, timeout_s=0.3) as d:
        d.bring_up(mps=128)
        d.create_io_queue(3, size=8, cq_size=2)
        buf = d.alloc(4096)
        for i in range(3):
            d.submit(3, [0x02 | (d.next_cid() << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, i, 0, 0], ring=False)
        d.ring(3)
        assert st(d.poll_cqe(3, ack=False)) == OK                   # a CQ of 2 holds 1
        t_end = time.time() + 0.8
        while time.time() < t_end:
            d.run_us(50)
        assert d.fatal()[0] is False
        d.wr32(d.db(3, cq=True), d.queues[3]["head"])
        assert st(d.poll_cqe(3)) == OK and st(d.poll_cqe(3)) == OK
        assert d.fatal()[0] is False

def test_queue_depth_32_in_one_doorbell(dev):
    dev.create_io_queue(4, size=64)
    bufs = [dev.alloc(8192) for _ in range(32)]
    datas = [os.urandom(8192) for _ in range(32)]
    for i in range(32):
        dev.write_mem(bufs[i], datas[i])
        p1, p2 = dev.prps_for(bufs[i], 8192)
        dev.submit(4, [0x01 | (dev.next_cid() << 16), 1, 0, 0, 0, 0, p1, 0, p2, 0, 5000 + 16 * i, 0, 15], ring=False)
    dev.ring(4)
    cqes = [dev.poll_cqe(4) for _ in range(32)]
    assert all(st(c) == OK for c in cqes) and len({c["cid"] for c in cqes}) == 32
    assert read_image(image_path(dev), 5000 * 512, 32 * 8192) == b"".join(datas)

def test_two_doorbells_in_one_write(dev):
    """An 8-byte MWr over SQ 1 tail and CQ 1 head (doorbell stride 4): both take effect."""
    buf = dev.alloc(4096)
    data = os.urandom(512)
    dev.write_mem(buf, data)
    q = dev.queues[1]
    cid = dev.next_cid()
    dev.submit(1, [0x01 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, 77, 0, 0], ring=False)
    dev.lib.pch_mmio_write(dev.h, dev.bar0 + dev.db(1), struct.pack("<II", q["tail"], q["head"]), 8)
    e = dev.poll_cqe(1)
    assert e["cid"] == cid and st(e) == OK
    assert read_image(image_path(dev), 77 * 512, 512) == data

def test_asynchronous_event_on_invalid_doorbell(dev):
    cid = dev.next_cid()
    dev.submit(0, [0x0c | (cid << 16)])
    dev.run_us(20)
    time.sleep(0.05)        # QEMU takes the AER from its SQ in wall-clock time (doc/qemu_bridge.md)
    dev.wr32(dev.db(5), 3)                                         # SQ 5 does not exist
    e = wait_cqe_wall(dev, 0)
    assert e["cid"] == cid and st(e) == OK
    assert e["dw0"] & 0xffff07 == 0x010000                         # error event, log page 01h, info 0

# Mirroring: TLPs, shared memory, refused reads ------------------------------------------------------------

@pytest.mark.parametrize("what, mrd, mwr", [
    ("identify", 64, 4096 + 16),
    ("write 8 KiB", 64 + 8192, 16),
    ("read 8 KiB", 64, 8192 + 16),
    ("write 64 KiB", 64 + 15 * 8 + 65536, 16),
    ("read 64 KiB", 64 + 15 * 8, 65536 + 16),
    ("read 64 KiB + 512", 64 + 16 * 8, 65536 + 16),
    ("smart", 64, 512 + 16),
    ("flush", 64, 16),
    ("dsm 2 ranges", 64 + 32, 16),
    ("lba out of range", 64, 16),
])
def test_every_byte_crosses_the_link(dev, what, mrd, mwr):
    """The same MRd/MWr traffic through the bridge as the simulated SSD issues: the SQE, PRP list
    entries and data-out read; data-in and the CQE written; nothing else."""
    buf = dev.alloc(1 << 17)
    r = dev.alloc(4096)
    dev.write_mem(r, struct.pack("<IIQ", 0, 16, 8) * 2)
    cmds = {
        "identify": lambda: dev.admin(0x06, prp1=buf, cdw={10: 1}),
        "write 8 KiB": lambda: dev.io(1, 0, 16, buf),
        "read 8 KiB": lambda: dev.io(2, 0, 16, buf),
        "write 64 KiB": lambda: dev.io(1, 0, 128, buf),
        "read 64 KiB": lambda: dev.io(2, 0, 128, buf),
        "read 64 KiB + 512": lambda: dev.io(2, 0, 128, buf + 512),
        "smart": lambda: dev.admin(0x02, nsid=0xffffffff, prp1=buf, cdw={10: (127 << 16) | 2}),
        "flush": lambda: dev.cmd(1, 0, nsid=1),
        "dsm 2 ranges": lambda: dev.cmd(1, 0x09, nsid=1, prp1=r, cdw={10: 1, 11: 4}),
        "lba out of range": lambda: dev.io(1, NBLK, 1, buf),
    }
    c, got_mrd, got_mwr, _, mwr_tlps = traffic(dev, cmds[what])
    assert st(c) == (LBA_RANGE if what == "lba out of range" else OK)
    assert (got_mrd, got_mwr) == (mrd, mwr)
    assert mwr_tlps == (mwr - 16) // 128 + 1                       # MPS 128 B, the CQE last
    s = dev.stats()
    assert s["rogue_reads"] == 0 and s["rogue_writes"] == 0 and s["boundary_violations"] == 0

@needs_qemu
def test_qemu_sees_host_memory_through_tlps_only(qdev):
    """QEMU's view of host memory (the bridge's shared memory) equals the host's memory for what
    QEMU read (SQEs, PRP list, write data) and wrote (read data, CQEs), and holds nothing else."""
    d = qdev
    buf, rb = d.alloc(16 * 4096), d.alloc(16 * 4096)
    data = os.urandom(16 * 4096)
    d.write_mem(buf, data)
    d.write_mem(rb, b"\x33" * len(data))
    assert st(d.io(1, 64, 128, buf)) == OK
    assert d.shm_read(buf, len(data)) == data
    assert st(d.io(2, 64, 128, rb)) == OK
    assert d.shm_read(rb, len(data)) == d.read_mem(rb, len(data)) == data
    q = d.queues[1]
    assert d.shm_read(q["sq"], 64 * 3) == d.read_mem(q["sq"], 64 * 3)
    assert d.shm_read(q["cq"], 16 * 3) == d.read_mem(q["cq"], 16 * 3)
    untouched = d.alloc(4096)
    d.write_mem(untouched, b"\x77" * 4096)
    assert d.shm_read(untouched, 4096) == bytes(4096)               # never fetched: not mirrored
    s = d.stats()
    assert s["fetch_bytes"] == s["mrd_bytes"] and s["wb_bytes"] == s["mwr_bytes"]

@pytest.mark.parametrize("where", ["data", "prp list"])
def test_refused_read_is_a_data_transfer_error(dev, where):
    buf = dev.alloc(16 * 4096)
    lst = dev.alloc(4096)
    dev.write_mem(lst, struct.pack("<15Q", *[buf + 4096 * i for i in range(1, 16)]))
    lo, hi = (buf + 8192, buf + 12288) if where == "data" else (lst, lst + 4096)
    dev.host_fail(lo, hi, status=1, count=1)                       # UR from the completer
    c = dev.io(1, 0, 128, prp1=buf, prp2=lst)
    assert st(c) == DTE
    dev.host_fail_clear()
    assert st(dev.io(1, 0, 128, prp1=buf, prp2=lst)) == OK         # the controller works on
    assert dev.rd32(0x1c) & 3 == 1

def test_missing_completion_is_a_data_transfer_error(dev):
    buf = dev.alloc(4096)
    dev.host_fail(buf, buf + 4096, drop=True, count=1)             # no completion at all
    assert st(dev.io(1, 0, 8, buf, timeout_us=200000)) == DTE
    dev.host_fail_clear()
    assert st(dev.io(1, 0, 8, buf)) == OK

def test_refused_sq_fetch_is_controller_fatal(dev):
    buf = dev.alloc(4096)
    q = dev.queues[1]
    dev.host_fail(q["sq"], q["sq"] + 64 * q["size"], status=1, count=1)
    dev.submit(1, [0x02 | (dev.next_cid() << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, 0, 0, 0])
    assert dev.wait_reg(0x1c, 2, 2, 1000)                          # CSTS.CFS
    dev.host_fail_clear()
    dev.wr32(0x14, 0)
    assert dev.wait_reg(0x1c, 3, 0, 2000)
    dev.init_controller()
    dev.create_io_queue(1)
    assert st(dev.io(2, 0, 8, buf)) == OK

@needs_qemu
def test_buffer_outside_the_mirrored_memory(tmp_path):
    with make("qemu", tmp_path) as d:
        assert d.lib.pch_map(d.h, 0x2_0000_0000, 1 << 20) == 0     # host memory above mem_top (4 GiB)
        d.bring_up(mps=128)
        assert st(d.io(1, 0, 8, 0x2_0000_0000)) == DTE
        assert d.stats()["no_mirror"] == 1
        assert st(d.io(1, 0, 8, d.alloc(4096))) == OK

@needs_qemu
def test_4k_lba_namespace(tmp_path):
    with make("qemu", tmp_path, size=16 << 20, lba_size=4096) as d:
        d.bring_up(mps=128)
        buf, rb = d.alloc(65536), d.alloc(65536)
        ns = d.alloc(4096)
        assert st(d.admin(0x06, nsid=1, prp1=ns, cdw={10: 0})) == OK
        idn = d.read_mem(ns, 4096)
        lbaf = struct.unpack_from("<I", idn, 128 + 4 * (idn[26] & 0xf))[0]
        assert struct.unpack_from("<Q", idn, 0)[0] == 4096 and (lbaf >> 16) & 0xff == 12
        data = os.urandom(3 * 4096)
        d.write_mem(buf, data)
        assert st(d.io(1, 4095, 1, buf)) == OK
        assert st(d.io(1, 4094, 3, buf)) == LBA_RANGE
        assert st(d.io(1, 10, 3, buf)) == OK
        assert st(d.io(2, 10, 3, rb)) == OK
        assert d.read_mem(rb, len(data)) == data and read_image(d.image, 10 * 4096, len(data)) == data

@needs_qemu
def test_timestamp_feature_data_both_ways(qdev):
    d = qdev
    ts = d.alloc(4096)
    d.write_mem(ts, struct.pack("<Q", 0x0123_4567_89ab))
    assert st(d.admin(0x09, prp1=ts, cdw={10: 0x0e})) == OK        # 8 bytes host -> QEMU
    d.write_mem(ts, b"\xee" * 16)
    assert st(d.admin(0x0a, prp1=ts, cdw={10: 0x0e})) == OK        # 8 bytes QEMU -> host
    got = d.read_mem(ts, 16)
    t = int.from_bytes(got[:6], "little")
    assert 0x0123_4567_89ab <= t < 0x0123_4567_89ab + 60000 and got[6] & 0x0e == 0x02
    assert got[8:] == b"\xee" * 8                                   # nothing beyond the 8 bytes

# Function resets ----------------------------------------------------------------------------------------

@needs_qemu
def test_perst_and_flr_reset_the_function(qdev):
    d = qdev
    buf = d.alloc(4096)
    data = os.urandom(512)
    d.write_mem(buf, data)
    assert st(d.io(1, 3, 1, buf)) == OK
    d.perst(True); d.run_us(10); d.perst(False); d.run_us(100)
    assert d.cfg32(0x04) & 0x7 == 0 and d.cfg32(0x10) == 0x4
    d.bring_up(mps=128)
    assert d.rd32(0x1c) & 3 == 1
    d.write_mem(buf, bytes(512))
    assert st(d.io(2, 3, 1, buf)) == OK and d.read_mem(buf, 512) == data
    pc = d.find_cap(0x10)
    d.cfg_write(pc + 8, 0x8000 | (2 << 12), be=0x3)                # Initiate Function Level Reset
    assert d.cfg32(0x04) & 0x7 == 0 and d.cfg32(0x10) == 0x4 and d.cfg32(pc + 8) & 0xffff == 0x2000
    assert d.stats()["flr"] == 1
    d.bring_up(mps=128)
    assert st(d.io(2, 3, 1, buf)) == OK and d.read_mem(buf, 512) == data

# Life cycle ---------------------------------------------------------------------------------------------

def _gone(pid, seconds=5.0):
    """True when pid has terminated and is not left unreaped by this process, within `seconds`
    (a zombie of another parent, e.g. init after the simulation died, counts as gone)."""
    t_end = time.time() + seconds
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().split(")")[-1].split()
            if fields[0] == "Z" and int(fields[1]) != os.getpid():
                return True
        except FileNotFoundError:
            return True
        if time.time() >= t_end:
            return False
        time.sleep(0.01)

@needs_qemu
def test_qemu_started_logged_and_reaped(tmp_path):
    d = make("qemu", tmp_path)
    pid = d.qemu_pid
    assert pid > 0 and os.path.exists(f"/proc/{pid}")
    cmdline = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    assert b"x-remote" in cmdline and any(str(tmp_path / "qemu.img").encode() in a for a in cmdline)
    d.close()
    assert _gone(pid)                                               # reaped by close(), not left a zombie
    log = open(tmp_path / "qemu.log").read()
    assert log.startswith("# started by the LiteRecorder QEMU NVMe bridge: ")
    assert "-machine x-remote" in log

@needs_qemu
def test_qemu_dies_with_the_simulation(tmp_path):
    """A simulation killed with SIGKILL (no close, no atexit) takes QEMU with it (PDEATHSIG)."""
    code = ("import sys, time; from literecorder.sim.qemu import QemuNVMe; "
            f"d = QemuNVMe(image={str(tmp_path / 'q.img')!r}); print(d.qemu_pid, flush=True); time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pid = int(p.stdout.readline())
        assert os.path.exists(f"/proc/{pid}")
        p.kill()
        p.wait(10)
        assert _gone(pid)
    finally:
        if p.poll() is None:
            p.kill()

def test_missing_binary_names_the_package(tmp_path):
    with pytest.raises(ValueError, match=r"^qemu-system-nope not found: install the Debian package qemu-system-x86$"):
        qemumod.find_qemu("qemu-system-nope")
    ap = argparse.ArgumentParser(); qemumod.add_qemu_arguments(ap)
    args = ap.parse_args(["--qemu-bin", "qemu-system-nope"])
    with pytest.raises(ValueError, match="install the Debian package qemu-system-x86"):
        qemumod.qemu_module_args(args, 0, str(tmp_path))
    # the C module says the same when started without the Python checks
    lib = qemumod.load_harness()
    import ctypes
    err = ctypes.create_string_buffer(1024)
    env_path = os.environ["PATH"]
    try:
        os.environ["PATH"] = str(tmp_path)
        h = lib.qbh_create(json.dumps(dict(image=str(tmp_path / "q.img"))).encode(), err, 1024)
    finally:
        os.environ["PATH"] = env_path
    assert not h
    assert err.value.decode() == MISSING_MESSAGE

def _fake_qemu(tmp_path, body):
    p = tmp_path / "fake-qemu"
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return str(p)

def test_qemu_that_exits_at_start(tmp_path):
    fake = _fake_qemu(tmp_path, "echo 'qemu: could not open disk image: Permission denied' >&2; exit 1")
    with pytest.raises(QemuError, match=r"QEMU failed to start \(log .*\): .*could not open disk image: Permission denied"):
        QemuNVMe(image=str(tmp_path / "q.img"), qemu_bin=fake)

def test_qemu_that_never_becomes_ready(tmp_path):
    fake = _fake_qemu(tmp_path, "exec sleep 30")
    t = time.time()
    with pytest.raises(QemuError, match=r"QEMU did not become ready within 300 ms \(start_timeout\)"):
        QemuNVMe(image=str(tmp_path / "q.img"), qemu_bin=fake, timeout_s=0.3)
    # The 0.3 s bound and the stop, not the fake's 30 s (a bound of 10 s: a loaded machine passes).
    assert time.time() - t < 10

@needs_qemu
def test_qemu_killed_while_running(qdev):
    d = qdev
    buf = d.alloc(4096)
    assert st(d.io(1, 0, 8, buf)) == OK
    pid = d.qemu_pid
    d.kill_qemu(signal.SIGKILL)
    with pytest.raises(Exception, match="no CQE"):
        d.io(2, 0, 8, buf, timeout_us=2000)
    assert _gone(pid)                                               # reaped by the bridge
    fatal, why = d.fatal()
    assert fatal and re.search(r"QEMU (exited|channel)|channel is closed", why), why
    assert d.cfg_read(0x00)[0] == 1                                 # UR: the function is gone
    assert d.mmio_read(0x1c)[0] == 1

@needs_qemu
def test_qemu_that_stops_answering(tmp_path):
    with make("qemu", tmp_path, timeout_s=0.3) as d:
        d.bring_up(mps=128)
        d.run_us(20)                                                # the last doorbell is through
        os.kill(d.qemu_pid, signal.SIGSTOP)
        try:
            t = time.time()
            assert d.mmio_read(0x1c)[0] == 1                        # UR after the bound
            assert 0.3 <= time.time() - t < 8                       # the 0.3 s bound, not the 10 s default
            fatal, why = d.fatal()
            assert fatal and why == "QEMU did not answer a BAR_READ request within 300 ms (qemu_timeout)"
            assert d.cfg_read(0x00)[0] == 1
        finally:
            os.kill(d.qemu_pid, signal.SIGCONT)

@needs_qemu
def test_command_that_qemu_does_not_complete(tmp_path):
    """QEMU throttled to 1 I/O per second and a 300 ms bound: the bridge reports the command and
    sets CSTS.CFS instead of waiting."""
    with make("qemu", tmp_path, timeout_s=0.3, extra={"drive_opts": "throttling.iops-total=1"}) as d:
        d.bring_up(mps=128)
        buf = d.alloc(4096)
        assert st(d.io(2, 0, 8, buf)) == OK                          # the first one passes
        with pytest.raises(Exception, match="no CQE"):
            d.io(2, 8, 8, buf, timeout_us=2000)
        fatal, why = d.fatal()
        assert fatal and why == "QEMU did not complete I/O opcode 0x02 (SQ 1, CID %d) within 300 ms (qemu_timeout)" % d._cid
        assert d.rd32(0x1c) & 2 == 2

# Options and module arguments ----------------------------------------------------------------------------

@needs_qemu
def test_module_args(tmp_path):
    ap = argparse.ArgumentParser(); qemumod.add_qemu_arguments(ap)
    a = qemumod.qemu_module_args(ap.parse_args([]), 0, str(tmp_path), 100e6, 256)
    assert a == dict(index=0, sys_clk_hz=100000000, data_width=256, qemu_bin=shutil.which("qemu-system-x86_64"),
        image=str(tmp_path / "qemu0.img"), image_size=64 << 20, lba_size=512,
        log=str(tmp_path / "qemu0.log"), serial="LRQEMU0", mdts=7, max_ioqpairs=64, link="gen3x4",
        start_timeout_ms=10000, io_timeout_ms=10000, cmd_timeout_ms=10000)
    args = ap.parse_args(["--qemu-image", str(tmp_path / "d{i}.img"), "--qemu-size", "1GiB",
        "--qemu-lba-size", "4096", "--qemu-timeout", "2.5", "--qemu-mdts", "9"])
    args.ssds = 2
    a = qemumod.qemu_module_args(args, 1, str(tmp_path), 50e6, 64)
    assert (a["image"], a["image_size"], a["lba_size"], a["mdts"], a["cmd_timeout_ms"], a["data_width"]) == \
        (str(tmp_path / "d1.img"), 1 << 30, 4096, 9, 2500, 64)
    (tmp_path / "old.img").write_bytes(bytes(1 << 20))
    a = qemumod.qemu_module_args(ap.parse_args(["--qemu-image", str(tmp_path / "old.img")]), 0, str(tmp_path))
    assert a["image_size"] == 1 << 20                               # an existing image keeps its size
    for argv, msg in [
        (["--qemu-image", str(tmp_path / "old.img"), "--qemu-size", "2MiB"], "exists with 1048576 bytes"),
        (["--qemu-lba-size", "1024"], "allowed 512 or 4096"),
        (["--qemu-size", "1000"], "not a positive multiple of the LBA size 512"),
        (["--qemu-timeout", "0"], "allowed 0 < SECONDS <= 3600"),
        (["--qemu-mdts", "16"], "allowed 0..15"),
        (["--qemu-image", str(tmp_path / "a,b.img")], "',' in an image path"),
    ]:
        with pytest.raises(ValueError, match=re.escape(msg)):
            qemumod.qemu_module_args(ap.parse_args(argv), 0, str(tmp_path))

def test_module_rejects_bad_arguments(tmp_path):
    import ctypes
    lib = qemumod.load_harness()
    err = ctypes.create_string_buffer(1024)
    for args, msg in [
        (dict(image=str(tmp_path / "q.img"), lba_size=1024), "lba_size=1024: allowed 512 or 4096"),
        (dict(image=str(tmp_path / "q.img"), bogus=1), "unknown argument 'bogus'"),
        (dict(), "argument 'image' (raw disk image of QEMU's NVMe namespace) is required"),
        (dict(image=str(tmp_path / "q.img"), link="gen9x4"), "link 'gen9x4': expected genGxL"),
    ]:
        assert not lib.qbh_create(json.dumps(args).encode(), err, 1024)
        assert err.value.decode() == msg or msg in err.value.decode(), err.value

# The LiteX module through real Verilator pads -----------------------------------------------------------

BAR0 = 0xe000_0000

def _pad_tlps():
    """(dwords, expects_completion) sent in order by the sequencer."""
    return [
        ([0x04000001, 0x0000_010f, 0x0100_0000], True),                    # CfgRd0 VID/DID
        ([0x04000001, 0x0000_020f, 0x0100_0008], True),                    # CfgRd0 class
        ([0x44000001, 0x0000_030f, 0x0100_0010, BAR0], True),              # CfgWr0 BAR0 lo
        ([0x44000001, 0x0000_040f, 0x0100_0014, 0], True),                 # CfgWr0 BAR0 hi
        ([0x44000001, 0x0000_050f, 0x0100_0004, 0x6], True),               # CfgWr0 Command
        ([0x00000001, 0x0000_060f, BAR0 + 0x08], True),                    # MRd VS
        ([0x40000001, 0x0000_000f, BAR0 + 0x24, 0x001f001f], False),       # MWr AQA (posted)
        ([0x00000001, 0x0000_070f, BAR0 + 0x24], True),                    # MRd AQA
        ([0x00000002, 0x0000_08ff, BAR0 + 0x00], True),                    # MRd CAP (2 DW)
        ([0x04000001, 0x0000_090f, 0x0100_0010], True),                    # CfgRd0 BAR0
    ]

def _build_pad_design(out, width, image):
    from migen import Module, Signal, ClockDomain, If, Array, Constant, Display, Finish
    from litex.build.sim import SimPlatform
    from litex.build.sim.config import SimConfig
    from literecorder.soc.sim_platform import pcie_sim_io
    from litex.build.generic_platform import Pins

    ndw = width // 32
    rom = []
    for dws, exp in _pad_tlps():
        for b in range(0, len(dws), ndw):
            chunk = dws[b:b + ndw]
            rom.append((sum(v << (32 * i) for i, v in enumerate(chunk)), (1 << (4 * len(chunk))) - 1,
                int(b == 0), int(b + ndw >= len(dws)), int(exp)))

    class Top(Module):
        def __init__(self, p):
            pads = p.request("pcie", 0)
            self.clock_domains.cd_sys = ClockDomain()
            self.comb += self.cd_sys.clk.eq(p.request("sys_clk"))
            n = len(rom)
            dat = Array(Constant(r[0], width) for r in rom)
            be = Array(Constant(r[1], width // 8) for r in rom)
            first = Array(Constant(r[2], 1) for r in rom)
            last = Array(Constant(r[3], 1) for r in rom)
            exp = Array(Constant(r[4], 1) for r in rom)
            i = Signal(8); state = Signal(3); cnt = Signal(16); rxb = Signal(8); k = Signal(8)
            words = [Signal(32) for _ in range(6)]
            perst = Signal()
            self.comb += [pads.perst_n.eq(perst), pads.rx_ready.eq(1),
                pads.tx_dat.eq(dat[i]), pads.tx_be.eq(be[i]), pads.tx_first.eq(first[i]),
                pads.tx_last.eq(last[i]), pads.tx_valid.eq(state == 2)]
            cap = []
            for w in range(6):
                beat, pos = divmod(w, ndw)
                cap.append(If(rxb == beat, words[w].eq(pads.rx_dat[32 * pos:32 * pos + 32])))
            self.sync += [
                If(state == 0, cnt.eq(cnt + 1), If(cnt == 50, perst.eq(1), state.eq(1))),
                If(state == 1, If(pads.link_up, state.eq(2))),
                If(state == 2, If(pads.tx_ready,
                    i.eq(i + 1),
                    If(last[i],
                        k.eq(k + 1),
                        If(exp[i], state.eq(3), rxb.eq(0)).Elif(i == n - 1, state.eq(5))))),
                If(state == 3, If(pads.rx_valid,
                    *cap,
                    rxb.eq(rxb + 1),
                    If(pads.rx_last, state.eq(4)))),
                If(state == 4,
                    Display("CPL %d hdr0=%08x hdr1=%08x d3=%08x d4=%08x", k, words[0], words[1], words[3], words[4]),
                    If(i == n, state.eq(5)).Else(state.eq(2))),
                If(state == 5, Display("DONE gen=%d width=%d ltssm=%x", pads.link_gen, pads.link_width, pads.ltssm),
                    Finish()),
            ]

    p = SimPlatform("SIM", [("sys_clk", 0, Pins(1)), ("sys_rst", 0, Pins(1)), pcie_sim_io(0, width)])
    top = Top(p)
    mods = os.path.join(out, "sim_modules")
    shutil.rmtree(mods, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "sim", "modules"), mods)
    ap = argparse.ArgumentParser(); qemumod.add_qemu_arguments(ap)
    ap.add_argument("--link", default="gen3x4")
    if os.path.exists(image):
        os.unlink(image)
    args = ap.parse_args(["--qemu-image", image, "--qemu-size", "16MiB", "--link", "gen2x8"])
    cfg = SimConfig(); cfg.add_clocker("sys_clk", freq_hz=100e6)
    cfg.add_module("qemu_nvme", ("pcie", 0), args=qemumod.qemu_module_args(args, 0, out, 100e6, width))
    p.build(top, sim_config=cfg, build_dir=out, run=False, extra_mods=["qemu_nvme"], extra_mods_path=mods)
    r = subprocess.run(["bash", "build_sim.sh"], cwd=out, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

def _pad_digest():
    import hashlib
    h = hashlib.sha256()
    paths = [os.path.abspath(__file__), os.path.join(ROOT, "sim", "qemu.py")]
    for sub in ("qemu_nvme", "common"):
        for dd, _, names in os.walk(os.path.join(ROOT, "sim", "modules", sub)):
            paths += [os.path.join(dd, n) for n in names if n.endswith((".c", ".h", "Makefile"))]
    for p in sorted(paths):
        h.update(p.encode()); h.update(open(p, "rb").read())
    return h.hexdigest()

@needs_qemu
def test_module_through_verilator_pads():
    """The LiteX module `qemu_nvme` in a minimal Verilator design at 64 bits (multi-beat TLPs):
    QEMU's configuration space, BAR assignment, MMIO reads/writes through the pads; QEMU is
    started by the module and gone when the simulation ends."""
    out = os.path.join(ROOT, "build", "qemu_padtest", "w64")
    os.makedirs(out, exist_ok=True)
    image = os.path.join(out, "pad.img")
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest = _pad_digest()
        stamp = os.path.join(out, ".stamp")
        if not (os.path.exists(os.path.join(out, "obj_dir", "Vsim")) and os.path.exists(stamp)
                and open(stamp).read() == digest):
            _build_pad_design(out, 64, image)
            with open(stamp, "w") as f:
                f.write(digest)
        so = os.path.join(out, "modules", "qemu_nvme.so")
        syms = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True).stdout
        assert "litex_sim_ext_module_init" in syms
        if os.path.exists(image):
            os.unlink(image)
        r = subprocess.run([os.path.join(out, "obj_dir", "Vsim")], cwd=out, capture_output=True,
            text=True, timeout=120, stdin=subprocess.DEVNULL)
    text = r.stdout + r.stderr
    cpl = {int(m.group(1)): m.groups()[1:] for m in re.finditer(
        r"CPL\s+(\d+) hdr0=(\w+) hdr1=(\w+) d3=(\w+) d4=(\w+)", text)}
    assert re.search(r"DONE gen=2 width=\s*8 ltssm=10", text), text[-3000:]
    assert cpl[1][0] == "4a000001" and cpl[1][1] == "01000004" and cpl[1][2] == "00101b36"
    assert int(cpl[2][2], 16) >> 8 == 0x010802
    for n in (3, 4, 5):                                             # CfgWr: Cpl, status SC
        assert cpl[n][0] == "0a000000" and int(cpl[n][1], 16) >> 13 & 7 == 0
    assert cpl[6][2] == "00010400"                                  # VS from QEMU
    assert cpl[8][2] == "001f001f"                                  # AQA written by the MWr
    assert cpl[9][0] == "4a000002" and cpl[9][2] == "0f0107ff" and cpl[9][3] == "00401820"   # CAP
    assert cpl[10][2] == "e0000004"                                 # the host's BAR address
    m = re.search(r"\[qemu_nvme0\] QEMU pid (\d+): NVMe 1b36:0010", text)
    assert m, text[-3000:]
    assert _gone(int(m.group(1)))
    assert os.path.getsize(image) == 16 << 20
    assert "-machine x-remote" in open(os.path.join(out, "qemu0.log")).read()
    assert re.search(r"\[qemu_nvme\] stopping QEMU \(pid %s\) at exit" % m.group(1), text)
