#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated SSD, NVMe controller (written from the NVMe 1.4 base specification): registers,
enable/disable/shutdown timing, admin commands, NVM commands, PRP rules, queue wrap and phase,
status codes, namespace file persistence."""

import os
import struct
import random

import pytest

from literecorder.sim.ssd import SimSSD, SSDError, US

pytestmark = pytest.mark.unit

def status(c):
    return (c["sct"], c["sc"])

OK, INVALID_OPCODE, INVALID_FIELD, INVALID_NS, SEQ_ERROR = (0, 0), (0, 1), (0, 2), (0, 0x0b), (0, 0x0c)
PRP_OFFSET, LBA_RANGE, NS_NOT_READY = (0, 0x13), (0, 0x80), (0, 0x82)
CQ_INVALID, QID_INVALID, QSIZE_INVALID, INVALID_VECTOR, INVALID_LOG, INVALID_QDEL = \
    (1, 0), (1, 1), (1, 2), (1, 8), (1, 9), (1, 0x0c)

@pytest.fixture
def dev(tmp_path):
    d = SimSSD(profile="ideal", ns_file=str(tmp_path / "ns.img"), ns_size=64 << 20, host_mem=32 << 20)
    d.bring_up()
    yield d
    d.close()

def rnd_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))

# Registers -----------------------------------------------------------------------------------------

def test_cap_vs_and_reset_values(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), opts={"mqes": 511, "cap_to": 40, "dstrd": 2}) as d:
        d.enumerate()
        cap = d.rd64(0x00)
        assert cap & 0xffff == 511                     # MQES
        assert (cap >> 16) & 1 == 1                    # CQR
        assert (cap >> 17) & 3 == 0                    # AMS: round robin only
        assert (cap >> 24) & 0xff == 40                # TO
        assert (cap >> 32) & 0xf == 2                  # DSTRD
        assert (cap >> 37) & 0xff == 1                 # CSS: NVM command set
        assert (cap >> 48) & 0xf == 0 and (cap >> 52) & 0xf == 4   # MPSMIN 4 KiB, MPSMAX 64 KiB
        assert d.rd32(0x08) == 0x00010400              # VS 1.4
        assert d.rd32(0x14) == 0 and d.rd32(0x1c) == 0 and d.rd32(0x24) == 0
        assert d.rd32(0x00) == cap & 0xffffffff and d.rd32(0x04) == cap >> 32

def test_rdy_follows_en_after_the_configured_delay(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), opts={"rdy_us": 300}) as d:
        d.enumerate()
        asq, acq = d.alloc(4096), d.alloc(4096)
        d.wr32(0x24, 0x000f000f); d.wr64(0x28, asq); d.wr64(0x30, acq)
        t0 = d.now
        d.wr32(0x14, 0x00460001)
        d.run_us(250)
        assert d.rd32(0x1c) & 1 == 0
        assert d.wait_reg(0x1c, 1, 1, 200, step_us=1)
        assert 300 * US <= d.now - t0 <= 320 * US
        cap_to_ps = ((d.rd64(0) >> 24) & 0xff) * 500_000 * US
        assert d.now - t0 < cap_to_ps
        d.wr32(0x14, 0x00460000)
        assert d.wait_reg(0x1c, 1, 0, 400)

def test_invalid_cc_sets_cfs(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img")) as d:
        d.enumerate()
        d.wr32(0x24, 0x000f000f); d.wr64(0x28, d.alloc(4096)); d.wr64(0x30, d.alloc(4096))
        d.wr32(0x14, 0x00460001 | (5 << 7))            # CC.MPS above MPSMAX
        d.run_us(100)
        assert d.rd32(0x1c) & 3 == 2                   # CFS, not RDY

def test_shutdown_reports_shst_complete(dev):
    cc = dev.rd32(0x14)
    dev.wr32(0x14, cc | (1 << 14))                     # normal shutdown
    assert (dev.rd32(0x1c) >> 2) & 3 == 1              # occurring
    assert dev.wait_reg(0x1c, 0xc, 0x8, 1000)          # complete
    dev.wr32(0x14, 0x00460000)
    assert dev.wait_reg(0x1c, 1, 0, 1000)

def test_doorbell_stride(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), profile="ideal", opts={"dstrd": 3}) as d:
        d.bring_up()
        assert d.db(1) == 0x1000 + 2 * 32 and d.db(1, cq=True) == 0x1000 + 3 * 32
        buf = d.alloc(4096)
        assert status(d.io(1, 0, 8, buf)) == OK

# Admin -----------------------------------------------------------------------------------------------

def test_identify_controller(dev):
    buf = dev.alloc(4096)
    c = dev.admin(0x06, prp1=buf, cdw={10: 1})
    assert status(c) == OK and c["sqid"] == 0
    d = dev.read_mem(buf, 4096)
    vid, ssvid = struct.unpack_from("<HH", d, 0)
    assert (vid, ssvid) == (0x1ee7, 0x1ee7)
    assert d[24:64].decode().rstrip() == "LiteRecorder SimSSD ideal"
    assert d[4:24].decode().rstrip() == "LRSIM0000000001"
    assert d[77] == 9                                  # MDTS 2 MiB
    assert struct.unpack_from("<I", d, 80)[0] == 0x00010400
    assert d[512] == 0x66 and d[513] == 0x44           # SQES/CQES
    assert struct.unpack_from("<I", d, 516)[0] == 1    # NN
    assert struct.unpack_from("<H", d, 520)[0] & 0xc == 0xc   # ONCS DSM + Write Zeroes
    assert d[525] & 1                                  # VWC
    assert struct.unpack_from("<H", d, 266)[0] == 353  # WCTEMP 80 C in K

@pytest.mark.parametrize("lba_size, lbads", [(512, 9), (4096, 12)])
def test_identify_namespace(tmp_path, lba_size, lbads):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), ns_size=32 << 20, lba_size=lba_size) as d:
        d.bring_up()
        buf = d.alloc(4096)
        assert status(d.admin(0x06, nsid=1, prp1=buf, cdw={10: 0})) == OK
        nsze, ncap, nuse = struct.unpack_from("<QQQ", d.read_mem(buf, 24))
        assert nsze == ncap == (32 << 20) // lba_size and nuse == 0
        ns = d.read_mem(buf, 4096)
        assert ns[26] & 0xf == 0 and ns[128 + 2] == lbads and ns[33] & 7 == 1 and ns[32] == 0
        assert status(d.admin(0x06, nsid=2, prp1=buf, cdw={10: 0})) == INVALID_NS

def test_identify_active_namespace_list_and_bad_cns(dev):
    buf = dev.alloc(4096)
    dev.write_mem(buf, b"\xff" * 4096)
    assert status(dev.admin(0x06, nsid=0, prp1=buf, cdw={10: 2})) == OK
    ids = struct.unpack("<1024I", dev.read_mem(buf, 4096))
    assert ids[0] == 1 and set(ids[1:]) == {0}
    assert status(dev.admin(0x06, nsid=1, prp1=buf, cdw={10: 2})) == OK
    assert struct.unpack("<I", dev.read_mem(buf, 4))[0] == 0
    assert status(dev.admin(0x06, prp1=buf, cdw={10: 0x13})) == INVALID_FIELD

def test_create_delete_queue_errors(dev):
    cq = dev.alloc(4096)
    mq = 16
    cases = [
        (0x05, {10: (15 << 16) | 0, 11: 1}, QID_INVALID),            # QID 0
        (0x05, {10: (15 << 16) | (mq + 1), 11: 1}, QID_INVALID),     # above max
        (0x05, {10: (15 << 16) | 1, 11: 1}, QID_INVALID),            # exists (bring_up made 1)
        (0x05, {10: (0 << 16) | 2, 11: 1}, QSIZE_INVALID),           # one entry
        (0x05, {10: (1024 << 16) | 2, 11: 1}, QSIZE_INVALID),        # above MQES
        (0x05, {10: (15 << 16) | 2, 11: 0}, INVALID_FIELD),          # not contiguous
        (0x05, {10: (15 << 16) | 2, 11: (40 << 16) | 3}, INVALID_VECTOR),
        (0x01, {10: (15 << 16) | 2, 11: (9 << 16) | 1}, CQ_INVALID), # CQ 9 missing
        (0x01, {10: (15 << 16) | 2, 11: (0 << 16) | 1}, CQ_INVALID), # admin CQ
        (0x00, {10: 0}, QID_INVALID), (0x00, {10: 7}, QID_INVALID),
        (0x04, {10: 0}, QID_INVALID), (0x04, {10: 1}, INVALID_QDEL), # SQ 1 still uses CQ 1
    ]
    for opc, cdw, want in cases:
        assert status(dev.admin(opc, prp1=cq, cdw=cdw)) == want, (hex(opc), cdw)
    assert status(dev.admin(0x05, prp1=cq + 8, cdw={10: (15 << 16) | 2, 11: 1})) == PRP_OFFSET
    assert status(dev.admin(0x00, cdw={10: 1})) == OK
    assert status(dev.admin(0x04, cdw={10: 1})) == OK
    dev.create_io_queue(1)
    assert status(dev.io(1, 0, 1, dev.alloc(4096))) == OK

def test_number_of_queues_feature(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), opts={"max_queues": 8}) as d:
        d.enumerate(); d.init_controller()
        c = d.admin(0x09, cdw={10: 0x07, 11: (3 << 16) | 1})      # 2 SQs, 4 CQs
        assert status(c) == OK and c["dw0"] == (3 << 16) | 1
        c = d.admin(0x09, cdw={10: 0x07, 11: (99 << 16) | 99})    # clamped to 8
        assert c["dw0"] == (7 << 16) | 7
        d.admin(0x09, cdw={10: 0x07, 11: (3 << 16) | 1})
        c = d.admin(0x0a, cdw={10: 0x07})
        assert c["dw0"] == (3 << 16) | 1
        d.create_io_queue(1); d.create_io_queue(2)
        cq = d.alloc(4096)
        assert status(d.admin(0x05, prp1=cq, cdw={10: (15 << 16) | 3, 11: 1})) == OK
        assert status(d.admin(0x01, prp1=d.alloc(4096), cdw={10: (15 << 16) | 3, 11: (3 << 16) | 1})) == QID_INVALID
        assert status(d.admin(0x09, cdw={10: 0x07, 11: 0})) == SEQ_ERROR
        assert status(d.admin(0x09, cdw={10: 0x07 | (1 << 31), 11: 0})) == (1, 0x0d)   # not saveable

def test_temperature_threshold_and_vwc_features(dev):
    c = dev.admin(0x0a, cdw={10: 0x04})
    assert c["dw0"] == 353                                       # default = WCTEMP
    assert status(dev.admin(0x09, cdw={10: 0x04, 11: 330})) == OK
    assert dev.admin(0x0a, cdw={10: 0x04})["dw0"] == 330
    assert dev.admin(0x0a, cdw={10: 0x04 | (1 << 8)})["dw0"] == 353   # SEL=default
    assert status(dev.admin(0x09, cdw={10: 0x04, 11: (3 << 20) | 330})) == INVALID_FIELD
    assert dev.admin(0x0a, cdw={10: 0x06})["dw0"] == 1
    assert status(dev.admin(0x09, cdw={10: 0x06, 11: 0})) == OK
    assert dev.admin(0x0a, cdw={10: 0x06})["dw0"] == 0
    assert status(dev.admin(0x0a, cdw={10: 0x55})) == INVALID_FIELD
    assert status(dev.admin(0x09, cdw={10: 0x02, 11: 3})) == INVALID_FIELD   # power state > NPSS

def test_smart_log_counts_host_io(dev):
    buf = dev.alloc(1 << 20)
    for i in range(3):
        assert status(dev.io(1, i * 1000, 1000, buf)) == OK     # 3 x 512000 bytes
    for i in range(2):
        assert status(dev.io(2, 0, 1, buf)) == OK
    log = dev.alloc(4096)
    assert status(dev.admin(0x02, prp1=log, cdw={10: (127 << 16) | 0x02})) == OK
    s = dev.read_mem(log, 512)
    temp = struct.unpack_from("<H", s, 1)[0]
    assert 273 + 20 < temp < 273 + 90
    lo = lambda off: struct.unpack_from("<Q", s, off)[0]
    assert lo(32) == 1                       # data units read: ceil(1024 / 512000)
    assert lo(48) == 3                       # data units written
    assert lo(64) == 2 and lo(80) == 3       # host read / write commands
    assert struct.unpack_from("<I", s, 216)[0] == 0   # no thermal transitions yet
    assert status(dev.admin(0x02, prp1=log, cdw={10: (127 << 16) | 0x7f})) == INVALID_LOG

def test_get_log_page_offset_and_length(dev):
    log = dev.alloc(4096)
    dev.write_mem(log, b"\xaa" * 64)
    assert status(dev.admin(0x02, prp1=log, cdw={10: (3 << 16) | 0x02, 12: 64})) == OK
    got = dev.read_mem(log, 64)
    assert got[16:] == b"\xaa" * 48                     # only 4 dwords were written
    assert status(dev.admin(0x02, prp1=log, cdw={10: (3 << 16) | 0x02, 12: 2})) == INVALID_FIELD

def test_abort_of_a_lost_command(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), profile="ideal", faults=["drop-cqe:op=write,count=1"]) as d:
        d.bring_up()
        buf = d.alloc(4096)
        cid = d.next_cid()
        d.submit(1, [0x01 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, 0, 0, 7])
        assert d.poll_cqe(1, timeout_us=2000) is None      # never comes
        c = d.admin(0x08, cdw={10: (cid << 16) | 1})
        assert status(c) == OK and c["dw0"] & 1 == 0       # aborted
        e = d.poll_cqe(1, timeout_us=100)
        assert e["cid"] == cid and status(e) == (0, 0x07)
        c = d.admin(0x08, cdw={10: (0x4321 << 16) | 1})
        assert c["dw0"] & 1 == 1                           # nothing to abort

def test_async_event_request_limit(dev):
    for i in range(4):
        dev.submit(0, [0x0c | (dev.next_cid() << 16)])
    dev.run_us(50)
    c = dev.admin(0x0c)
    assert status(c) == (1, 0x05)

def test_async_event_on_invalid_doorbell(dev):
    cid = dev.next_cid()
    dev.submit(0, [0x0c | (cid << 16)])
    dev.run_us(20)
    dev.wr32(dev.db(5), 3)                                  # SQ 5 does not exist
    e = dev.poll_cqe(0, timeout_us=100)
    assert e["cid"] == cid and e["dw0"] & 7 == 0            # error status event

# NVM -----------------------------------------------------------------------------------------------------

def test_write_read_back_exact_data_random_lbas(dev):
    rng = random.Random(1234)
    buf, rb = dev.alloc(1 << 20), dev.alloc(1 << 20)
    written = {}
    for _ in range(20):
        nlb = rng.randint(1, 256)
        slba = rng.randrange(0, (64 << 20) // 512 - nlb)
        data = rnd_bytes(rng, nlb * 512)
        dev.write_mem(buf, data)
        assert status(dev.io(1, slba, nlb, buf)) == OK
        for i in range(nlb):
            written[slba + i] = data[i * 512:(i + 1) * 512]
    for slba in rng.sample(sorted(written), 30):
        dev.write_mem(rb, b"\x55" * 512)
        assert status(dev.io(2, slba, 1, rb)) == OK
        assert dev.read_mem(rb, 512) == written[slba]

def test_namespace_file_is_sparse_persistent_and_readable(tmp_path):
    f = str(tmp_path / "ns.img")
    data = os.urandom(4096)
    with SimSSD(ns_file=f, ns_size=1 << 40) as d:           # 1 TiB namespace
        d.bring_up()
        buf = d.alloc(4096)
        d.write_mem(buf, data)
        assert status(d.io(1, 2 * 10**9 // 512 * 100, 8, buf)) == OK
    st = os.stat(f)
    assert st.st_size == 1 << 40 and st.st_blocks * 512 < 1 << 20
    with open(f, "rb") as fh:
        fh.seek(2 * 10**9 // 512 * 100 * 512)
        assert fh.read(4096) == data
    with SimSSD(ns_file=f, ns_size=1 << 40) as d:           # next run reads it back
        d.bring_up()
        rb = d.alloc(4096)
        assert status(d.io(2, 2 * 10**9 // 512 * 100, 8, rb)) == OK
        assert d.read_mem(rb, 4096) == data
        assert d.model()["valid_units"] == 1

def test_flush_completes_after_the_media_drained(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), profile="mlc", ns_size=64 << 20) as d:
        d.bring_up()
        buf = d.alloc(1 << 20)
        p1, p2 = d.prps_for(buf, 256 * 512)
        for i in range(8):
            d.submit(1, [0x01 | (d.next_cid() << 16), 1, 0, 0, 0, 0, p1, 0, p2, 0, i * 256, 0, 255], ring=False)
        d.ring(1)
        for i in range(8):
            assert status(d.poll_cqe(1)) == OK
        c = d.io(0, 0, 1, extra={12: 0})
        assert status(d.cmd(1, 0x00, nsid=1)) == OK
        assert d.now * 1.0 >= d.model()["media_free_ps"]
        assert status(d.cmd(1, 0x00, nsid=0xffffffff)) == OK
        del c

def test_dsm_deallocate_reads_zeros_and_frees_units(dev):
    buf, rb, ranges = dev.alloc(1 << 20), dev.alloc(1 << 20), dev.alloc(4096)
    dev.write_mem(buf, b"\x5a" * (64 * 512))
    assert status(dev.io(1, 0, 64, buf)) == OK
    v0 = dev.model()["valid_units"]
    assert v0 == 8
    dev.write_mem(ranges, struct.pack("<IIQ", 0, 16, 8) + struct.pack("<IIQ", 0, 8, 48))
    c = dev.cmd(1, 0x09, nsid=1, prp1=ranges, cdw={10: 1, 11: 1 << 2})
    assert status(c) == OK
    assert dev.model()["valid_units"] == v0 - 3
    assert status(dev.io(2, 0, 64, rb)) == OK
    got = dev.read_mem(rb, 64 * 512)
    assert got[:8 * 512] == b"\x5a" * 4096 and got[8 * 512:24 * 512] == bytes(16 * 512)
    assert got[48 * 512:56 * 512] == bytes(4096) and got[56 * 512:] == b"\x5a" * 4096
    dev.write_mem(ranges, struct.pack("<IIQ", 0, 16, (64 << 20) // 512 - 8))
    assert status(dev.cmd(1, 0x09, nsid=1, prp1=ranges, cdw={10: 0, 11: 4})) == LBA_RANGE

def test_write_zeroes(dev):
    buf, rb = dev.alloc(1 << 16), dev.alloc(1 << 16)
    dev.write_mem(buf, b"\x77" * 8192)
    assert status(dev.io(1, 100, 16, buf)) == OK
    assert status(dev.io(8, 104, 4, extra={})) == OK
    assert status(dev.io(2, 100, 16, rb)) == OK
    got = dev.read_mem(rb, 8192)
    assert got[:2048] == b"\x77" * 2048 and got[2048:4096] == bytes(2048) and got[4096:] == b"\x77" * 4096
    assert status(dev.io(8, (64 << 20) // 512 - 2, 4)) == LBA_RANGE

def test_io_status_codes(dev):
    buf = dev.alloc(1 << 22)
    nblocks = (64 << 20) // 512
    assert status(dev.cmd(1, 0x7f, nsid=1)) == INVALID_OPCODE
    assert status(dev.io(1, 0, 1, buf, nsid=2)) == INVALID_NS
    assert status(dev.io(1, nblocks - 1, 2, buf)) == LBA_RANGE
    assert status(dev.io(2, nblocks, 1, buf)) == LBA_RANGE
    assert status(dev.io(2, nblocks - 1, 1, buf)) == OK
    assert status(dev.cmd(1, 0x02, nsid=1, fuse=1, prp1=buf)) == INVALID_FIELD
    assert status(dev.cmd(1, 0x02, nsid=1, psdt=1, prp1=buf)) == INVALID_FIELD
    c = dev.io(2, 0, 4097, buf)                             # 2 MiB + 512 > MDTS
    assert status(c) == INVALID_FIELD and c["dnr"] == 1
    assert status(dev.admin(0x7e)) == INVALID_OPCODE

# PRP -------------------------------------------------------------------------------------------------

def test_prp1_with_offset_and_prp2_page(dev):
    buf = dev.alloc(3 * 4096)
    data = os.urandom(6 * 512)
    p1 = buf + 4096 - 1024                                  # 1 KiB in the first page, rest in the next
    dev.write_mem(p1, data)
    assert status(dev.io(1, 40, 6, prp1=p1, prp2=buf + 4096)) == OK
    rb = dev.alloc(3 * 4096)
    assert status(dev.io(2, 40, 6, prp1=rb + 4096 - 1024, prp2=rb + 4096)) == OK
    assert dev.read_mem(rb + 4096 - 1024, len(data)) == data

def test_prp_offset_rules(dev):
    buf = dev.alloc(4 * 4096)
    assert status(dev.io(2, 0, 1, prp1=buf + 2)) == PRP_OFFSET              # not dword aligned
    assert status(dev.io(2, 0, 16, prp1=buf, prp2=buf + 4096 + 512)) == PRP_OFFSET   # 2nd page with offset
    lst = dev.alloc(4096)
    dev.write_mem(lst, struct.pack("<2Q", buf + 4096, buf + 8192 + 8))
    assert status(dev.io(2, 0, 24, prp1=buf, prp2=lst)) == PRP_OFFSET       # list entry with offset
    assert status(dev.io(2, 0, 24, prp1=buf, prp2=lst + 4)) == PRP_OFFSET   # list pointer not qword aligned

def test_prp_list_with_offset_crossing_into_a_chained_list(dev):
    rng = random.Random(99)
    npages = 40
    pages = [dev.alloc(4096) for _ in range(npages + 1)]
    rng.shuffle(pages)                                          # scattered host pages
    data = rnd_bytes(rng, npages * 4096)
    for i in range(npages):
        dev.write_mem(pages[i], data[i * 4096:(i + 1) * 4096])
    # list 1 starts 16 entries before the end of its page: 15 entries + chain pointer
    l1 = dev.alloc(8192) + 4096 - 16 * 8
    l2 = dev.alloc(4096)
    first = pages[1:16]
    rest = pages[16:npages]
    dev.write_mem(l1, struct.pack(f"<{len(first)}Q", *first) + struct.pack("<Q", l2))
    dev.write_mem(l2, struct.pack(f"<{len(rest)}Q", *rest))
    dev.trace()
    assert status(dev.io(1, 2048, npages * 8, prp1=pages[0], prp2=l1)) == OK
    list_reads = [r for r in dev.traced() if r.dir == 1 and r.is_mrd and (r.addr in (l1, l2))]
    assert {r.addr for r in list_reads} == {l1, l2}
    rb = dev.alloc(npages * 4096)
    assert status(dev.io(2, 2048, npages * 8, rb)) == OK
    assert dev.read_mem(rb, len(data)) == data

# Queues ------------------------------------------------------------------------------------------------

def test_queue_wrap_phase_flip_and_sqhd(dev):
    dev.create_io_queue(2, size=4, cq_size=3)
    buf = dev.alloc(4096)
    expect_phase = 1
    seen_heads = []
    for i in range(11):
        cid = dev.next_cid()
        dev.submit(2, [0x02 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, i, 0, 0])
        e = dev.poll_cqe(2)
        assert e["cid"] == cid and e["sqid"] == 2 and status(e) == OK
        assert e["phase"] == expect_phase
        assert e["sqhd"] == (i + 1) % 4
        seen_heads.append(e["sqhd"])
        if (i + 1) % 3 == 0:
            expect_phase ^= 1
    assert seen_heads[:5] == [1, 2, 3, 0, 1]

def test_full_cq_holds_completions_until_the_head_moves(dev):
    dev.create_io_queue(3, size=8, cq_size=4)
    buf = dev.alloc(4096)
    cids = []
    for i in range(6):
        cid = dev.next_cid(); cids.append(cid)
        dev.submit(3, [0x02 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, i, 0, 0], ring=False)
    dev.ring(3)
    dev.run_us(200)
    got = [dev.poll_cqe(3, ack=False)["cid"] for _ in range(3)]      # CQ of 4 holds 3
    assert dev.poll_cqe(3, timeout_us=100, ack=False) is None
    q = dev.queues[3]
    dev.wr32(dev.db(3, cq=True), q["head"])
    got += [dev.poll_cqe(3)["cid"] for _ in range(3)]
    assert sorted(got) == sorted(cids)

def test_msix_interrupt_written_when_enabled(dev):
    msix = dev.find_cap(0x11)
    addr = dev.alloc(64)
    dev.wr32(0x2000 + 16 * 3 + 0, addr & 0xffffffff)
    dev.wr32(0x2000 + 16 * 3 + 4, addr >> 32)
    dev.wr32(0x2000 + 16 * 3 + 8, 0xbeef0003)
    dev.wr32(0x2000 + 16 * 3 + 12, 0)                        # unmask
    dev.cfg_write(msix, 0x8000 << 16, be=0xc)                 # MSI-X enable
    dev.create_io_queue(4, size=8, ien=True, iv=3)
    dev.io(2, 0, 1, dev.alloc(4096), qid=4)
    dev.run_us(2)                                             # the MSI-X write follows the CQE
    assert dev.r32(addr) == 0xbeef0003
    dev.write_mem(addr, bytes(4))
    dev.wr32(0x2000 + 16 * 3 + 12, 1)                         # mask -> pending bit
    dev.io(2, 0, 1, dev.alloc(4096), qid=4)
    dev.run_us(2)
    assert dev.r32(addr) == 0 and dev.rd32(0x3000) & (1 << 3)
    dev.wr32(0x2000 + 16 * 3 + 12, 0)                         # unmask -> delivered
    dev.run_us(5)
    assert dev.r32(addr) == 0xbeef0003 and dev.rd32(0x3000) & (1 << 3) == 0

def test_delete_sq_aborts_its_commands(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), profile="ideal", opts={"read_lat_us": 500}) as d:
        d.bring_up()
        buf = d.alloc(4096)
        cid = d.next_cid()
        d.submit(1, [0x02 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, 0, 0, 0])
        d.run_us(20)
        assert status(d.admin(0x00, cdw={10: 1})) == OK
        e = d.poll_cqe(1, timeout_us=10)
        assert e["cid"] == cid and status(e) == (0, 0x08)

def test_4k_lba_namespace(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), lba_size=4096, ns_size=16 << 20) as d:
        d.bring_up()
        buf, rb = d.alloc(65536), d.alloc(65536)
        data = os.urandom(3 * 4096)
        d.write_mem(buf, data)
        assert status(d.io(1, 4095, 1, buf)) == OK
        assert status(d.io(1, 4094, 3, buf)) == LBA_RANGE
        assert status(d.io(1, 10, 3, buf)) == OK
        assert status(d.io(2, 10, 3, rb)) == OK
        assert d.read_mem(rb, len(data)) == data

def test_smart_percentage_used_and_temperature_warning(tmp_path):
    # endurance 10 MB: 3 MiB written = 31 % used; threshold below the idle temperature -> warning
    with SimSSD(ns_file=str(tmp_path / "ns.img"), profile="mlc", opts={"endurance_tbw": 10e-6}) as d:
        d.bring_up()
        buf = d.alloc(1 << 20)
        for i in range(3):
            assert status(d.io(1, i * 2048, 2048, buf)) == OK
        log = d.alloc(4096)
        d.admin(0x02, prp1=log, cdw={10: (127 << 16) | 0x02})
        s = d.read_mem(log, 512)
        assert s[5] == int(3 * 2**20 / 10e6 * 100) and s[0] & 0x02 == 0
        cid = d.next_cid()
        d.submit(0, [0x0c | (cid << 16)])
        assert status(d.admin(0x09, cdw={10: 0x04, 11: 273 + 30})) == OK      # over-threshold 30 C
        d.run_us(2000)
        e = d.poll_cqe(0, timeout_us=100)
        assert e["cid"] == cid and e["dw0"] & 7 == 1 and (e["dw0"] >> 8) & 0xff == 0x01   # SMART, temperature
        assert (e["dw0"] >> 16) & 0xff == 0x02
        d.admin(0x02, prp1=log, cdw={10: (127 << 16) | 0x02})
        assert d.read_mem(log, 1)[0] & 0x02

def test_two_ssds_in_one_process_are_independent(tmp_path):
    a = SimSSD(ns_file=str(tmp_path / "a.img"), profile="ideal", index=0)
    b = SimSSD(ns_file=str(tmp_path / "b.img"), profile="mlc", index=1, seed=7)
    try:
        for d in (a, b):
            d.bring_up()
        ba, bb = a.alloc(4096), b.alloc(4096)
        a.write_mem(ba, b"\xaa" * 4096); b.write_mem(bb, b"\xbb" * 4096)
        assert status(a.io(1, 0, 8, ba)) == OK and status(b.io(1, 0, 8, bb)) == OK
        a.write_mem(ba, bytes(4096)); b.write_mem(bb, bytes(4096))
        assert status(a.io(2, 0, 8, ba)) == OK and status(b.io(2, 0, 8, bb)) == OK
        assert a.read_mem(ba, 4096) == b"\xaa" * 4096 and b.read_mem(bb, 4096) == b"\xbb" * 4096
        ida, idb = a.alloc(4096), b.alloc(4096)
        a.admin(0x06, prp1=ida, cdw={10: 1}); b.admin(0x06, prp1=idb, cdw={10: 1})
        assert a.read_mem(ida + 4, 20).decode().rstrip() == "LRSIM0000000001"
        assert b.read_mem(idb + 4, 20).decode().rstrip() == "LRSIM0100000007"
        assert a.read_mem(ida + 78, 2) == b"\x01\x00" and b.read_mem(idb + 78, 2) == b"\x02\x00"
    finally:
        a.close(); b.close()
