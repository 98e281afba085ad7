#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated SSD, PCIe function and link (written from the PCIe base specification): Type-0
configuration space, BAR sizing, capabilities, Command MEM/BME enforcement, DevCtl MPS/MRRS,
TLP fields of the device's requests, completions (split, UR/CA, poisoned, timeout), CRS, LTSSM,
link down / retrain, PERST#."""

import os
import struct
import random

import pytest

from literecorder.sim.ssd import SimSSD, SSDError

pytestmark = pytest.mark.unit

UR, CRS, CA = 1, 2, 4

@pytest.fixture
def dev(tmp_path):
    d = SimSSD(profile="ideal", ns_file=str(tmp_path / "ns.img"))
    yield d
    d.close()

def test_link_trains_to_the_configured_speed_and_width(tmp_path):
    for link, gen, width in (("gen3x4", 3, 4), ("gen2x8", 2, 8), ("gen4x1", 4, 1)):
        with SimSSD(link=link, ns_file=str(tmp_path / f"{link}.img"), train=False) as d:
            s = d.stats()
            assert (s["link_up"], s["link_gen"], s["link_width"], s["ltssm"]) == (0, 0, 0, 0x00)
            d.perst(False)
            d.run_us(1)
            assert d.stats()["link_up"] == 0 and d.stats()["ltssm"] != 0x10   # still training
            d.run_us(100)
            s = d.stats()
            assert (s["link_up"], s["link_gen"], s["link_width"], s["ltssm"]) == (1, gen, width, 0x10)
            pcie = d.find_cap(0x10)
            linkcap = d.cfg32(pcie + 0x0c)
            assert linkcap & 0xf == gen and (linkcap >> 4) & 0x3f == width
            linksta = d.cfg32(pcie + 0x10) >> 16
            assert linksta & 0xf == gen and (linksta >> 4) & 0x3f == width
            assert d.cfg32(pcie + 0x2c) == ((1 << gen) - 1) << 1   # supported speeds vector

def test_type0_header_ids_and_class(dev):
    assert dev.cfg32(0x00) == 0x5100_1ee7
    assert dev.cfg32(0x08) >> 8 == 0x010802          # mass storage / NVM / NVMe
    assert (dev.cfg32(0x0c) >> 16) & 0x7f == 0       # header type 0
    assert dev.cfg32(0x2c) == 0x0001_1ee7
    assert dev.cfg32(0x04) & 0xffff == 0             # Command: everything off after reset
    assert (dev.cfg32(0x04) >> 16) & 0x10            # Status: capabilities list

def test_bar0_is_64bit_and_sizes_to_16k(dev):
    assert dev.cfg32(0x10) & 0xf == 0x4              # memory, 64-bit, non-prefetchable
    dev.cfg_write(0x10, 0xffffffff); dev.cfg_write(0x14, 0xffffffff)
    lo, hi = dev.cfg32(0x10), dev.cfg32(0x14)
    size = (~(((hi << 32) | lo) & ~0xf) + 1) & 0xffffffffffffffff
    assert size == 16384
    dev.cfg_write(0x10, 0x12345678); dev.cfg_write(0x14, 0x9)
    assert dev.cfg32(0x10) == 0x12344004 and dev.cfg32(0x14) == 0x9
    for bar in range(2, 6):                          # unimplemented BARs read 0
        dev.cfg_write(0x10 + 4 * bar, 0xffffffff)
        assert dev.cfg32(0x10 + 4 * bar) == 0

def test_capability_list_pm_msix_pcie(dev):
    seen = []
    p = dev.cfg32(0x34) & 0xff
    while p:
        v = dev.cfg32(p)
        seen.append(v & 0xff)
        p = (v >> 8) & 0xff
    assert sorted(seen) == [0x01, 0x10, 0x11]
    msix = dev.find_cap(0x11)
    mc = dev.cfg32(msix) >> 16
    assert mc & 0x7ff == 31                           # 32 vectors
    assert dev.cfg32(msix + 4) == 0x2000 and dev.cfg32(msix + 8) == 0x3000   # table/PBA in BAR0
    pm = dev.find_cap(0x01)
    assert (dev.cfg32(pm) >> 16) & 0x7 == 3          # PM version 3
    pcie = dev.find_cap(0x10)
    assert (dev.cfg32(pcie) >> 16) & 0xf == 2 and (dev.cfg32(pcie) >> 20) & 0xf == 0   # v2 endpoint

@pytest.mark.parametrize("mps, enc", [(128, 0), (256, 1), (512, 2), (4096, 5)])
def test_devcap_reports_the_configured_mps(tmp_path, mps, enc):
    with SimSSD(mps=mps, ns_file=str(tmp_path / "ns.img")) as d:
        assert d.cfg32(d.find_cap(0x10) + 4) & 7 == enc

def test_devctl_defaults_and_readonly_fields(dev):
    pcie = dev.find_cap(0x10)
    ctl = dev.cfg32(pcie + 8) & 0xffff
    assert (ctl >> 5) & 7 == 0 and (ctl >> 12) & 7 == 2   # MPS 128, MRRS 512 after reset
    dev.cfg_write(pcie + 4, 0xffffffff)                    # DevCap is read-only
    assert dev.cfg32(pcie + 4) & 7 == 1
    dev.cfg_write(0x00, 0)                                 # IDs are read-only
    assert dev.cfg32(0) == 0x5100_1ee7

def test_bar_access_without_mem_gets_ur_and_writes_are_dropped(dev):
    dev.enumerate(cmd=0)
    st, _ = dev.mmio_read(0x08)
    assert st == UR
    dev.wr32(0x24, 0x001f001f)                             # dropped
    dev.cfg_write(0x04, 0x2, be=0x3)                       # MEM on
    assert dev.rd32(0x08) == 0x00010400
    assert dev.rd32(0x24) == 0
    st, _ = dev.mmio_read(0x4000)                          # outside BAR0
    assert st == UR

def test_no_dma_without_bus_master_enable(dev):
    dev.enumerate(cmd=0x2)                                 # MEM only
    dev.trace()
    dev.asq = dev.alloc(4096); dev.acq = dev.alloc(4096)
    dev.wr32(0x24, 0x000f000f); dev.wr64(0x28, dev.asq); dev.wr64(0x30, dev.acq)
    dev.wr32(0x14, 0x00460001)
    assert dev.wait_reg(0x1c, 1, 1, 1000)
    dev.queues = {0: dict(sq=dev.asq, cq=dev.acq, size=16, cq_size=16, tail=0, head=0, phase=1, cqid=0)}
    dev.submit(0, [0x06 | (1 << 16), 0, 0, 0, 0, 0, dev.alloc(4096), 0, 0, 0, 1])
    dev.run_us(200)
    assert [r for r in dev.traced() if r.dir == 1 and (r.is_mrd or r.is_mwr)] == []
    assert dev.stats()["dma_refused"] >= 1
    assert dev.rd32(0x1c) & 2                             # reported as controller fatal (CFS)

def test_requests_respect_mps_mrrs_and_4k(tmp_path):
    rnd = random.Random(7)
    for mps, mrrs in ((128, 128), (256, 512), (512, 256), (256, 4096)):
        with SimSSD(profile="ideal", mps=4096, ns_file=str(tmp_path / f"{mps}-{mrrs}.img"), host_mem=32 << 20) as d:
            d.bring_up(mps=mps, mrrs=mrrs)
            buf = d.alloc(1 << 20) + 0x40            # dword offsets inside pages
            data = bytes(rnd.getrandbits(8) for _ in range(256 * 512))
            d.write_mem(buf, data)
            d.trace()
            assert d.io(1, 0, 256, buf)["sc"] == 0
            rb = d.alloc(1 << 20) + 0x80
            assert d.io(2, 0, 256, rb)["sc"] == 0
            assert d.read_mem(rb, len(data)) == data
            recs = [r for r in d.traced() if r.dir == 1]
            mrd = [r for r in recs if r.is_mrd]; mwr = [r for r in recs if r.is_mwr]
            assert mrd and mwr
            assert max(r.length for r in mrd) == mrrs
            assert max(r.length for r in mwr) == mps
            for r in mrd + mwr:
                assert (r.addr & 0xfff) + r.length <= 4096, "request crosses a 4 KiB boundary"
            s = d.stats()
            assert s["mps_violations"] == 0 and s["mrrs_violations"] == 0 and s["boundary_violations"] == 0

def test_outstanding_reads_never_exceed_the_tag_limit(tmp_path):
    with SimSSD(profile="ideal", ns_file=str(tmp_path / "ns.img"), opts={"max_tags": 8}) as d:
        d.bring_up(mrrs=128)
        d.host_cfg(mps=256, cpl_latency_ns=2000)          # slow host memory: tags pile up
        buf = d.alloc(1 << 20)
        d.trace()
        assert d.io(1, 0, 1024, buf)["sc"] == 0
        outstanding, peak, tags = set(), 0, set()
        for r in sorted(d.traced(), key=lambda r: r.t_ps):
            if r.dir == 1 and r.is_mrd:
                assert r.tag not in outstanding, "tag reused while outstanding"
                outstanding.add(r.tag); tags.add(r.tag)
                peak = max(peak, len(outstanding))
            elif r.dir == 0 and r.is_cpl and r.byte_count == r.plen - (r.lower_addr & 3):
                outstanding.discard(r.tag)
        assert peak == 8 and tags == set(range(8))

def test_split_completions_at_rcb_are_reassembled(tmp_path):
    with SimSSD(profile="ideal", ns_file=str(tmp_path / "ns.img")) as d:
        d.bring_up(mrrs=4096)
        d.host_cfg(rcb=64, mps=128)                        # every 4 KiB read -> 32 completions
        buf = d.alloc(1 << 16)
        data = os.urandom(8192)
        d.write_mem(buf, data)
        d.trace()
        assert d.io(1, 10, 16, buf)["sc"] == 0
        cpls = [r for r in d.traced() if r.dir == 0 and r.is_cpl and r.plen]
        assert max(r.plen for r in cpls) == 128 and len(cpls) >= 64
        rb = d.alloc(1 << 16)
        assert d.io(2, 10, 16, rb)["sc"] == 0
        assert d.read_mem(rb, 8192) == data

@pytest.mark.parametrize("status, poison, drop", [(UR, False, False), (CA, False, False),
    (0, True, False), (0, False, True)])
def test_failed_host_completion_fails_the_command_with_data_transfer_error(tmp_path, status, poison, drop):
    with SimSSD(profile="ideal", ns_file=str(tmp_path / "ns.img"), opts={"cpl_timeout_us": 50}) as d:
        d.bring_up()
        buf = d.alloc(1 << 16)
        d.host_fail(buf, buf + 8192, status=status, count=1, poison=poison, drop=drop)
        c = d.io(1, 0, 16, buf)
        assert (c["sct"], c["sc"], c["dnr"]) == (0, 0x04, 1)
        log = d.alloc(4096)
        e = d.admin(0x02, prp1=log, cdw={10: (15 << 16) | 0x01})
        assert e["sc"] == 0
        cnt, sqid, cid, st = struct.unpack("<QHHH", d.read_mem(log, 14))
        assert cnt >= 1 and sqid == 1 and cid == c["cid"] and (st >> 1) & 0xff == 0x04
        if drop:
            assert d.stats()["cpl_timeouts"] >= 1
        # the device keeps working afterwards
        assert d.io(1, 0, 16, buf)["sc"] == 0

def test_crs_for_config_reads_right_after_link_up(tmp_path):
    with SimSSD(ns_file=str(tmp_path / "ns.img"), opts={"crs_us": 50, "train_us": 5}, train=False) as d:
        d.perst(False)
        d.run_us(6)
        st, _ = d.cfg_read(0)
        assert st == CRS
        d.run_us(60)
        st, v = d.cfg_read(0)
        assert st == 0 and v == 0x5100_1ee7
        assert d.stats()["crs_sent"] >= 1

def test_config_requests_to_other_functions_and_type1_get_ur(dev):
    # CfgRd0 to function 1, CfgRd1
    for hdr in ([0x04000001, 0x0000_010f, (0x0101 << 16) | 0x00],
                [0x05000001, 0x0000_020f, (0x0100 << 16) | 0x00]):
        dev.trace()
        dev.send_raw(hdr)
        dev.run_us(5)
        cpl = [r for r in dev.traced() if r.dir == 1 and r.is_cpl]
        assert len(cpl) == 1 and cpl[0].cpl_status == UR

def test_malformed_tlp_from_host_is_dropped_and_counted(dev):
    dev.enumerate()
    dev.send_raw([0x40000002, 0x0000000f | (0xf << 4), dev.bar0 + 0x24], payload=b"\0" * 4)  # len 2, 1 DW
    dev.send_raw([0x00000001, 0x0000000f, dev.bar0], malformed=True)
    dev.run_us(5)
    assert dev.stats()["dev_malformed_rx"] == 2
    assert dev.rd32(0x24) == 0

def test_perst_resets_the_function(dev):
    dev.bring_up()
    assert dev.rd32(0x1c) & 1
    dev.perst(True); dev.run_us(5)
    assert dev.stats()["link_up"] == 0
    dev.perst(False); dev.run_us(100)
    assert dev.cfg32(0x04) & 0xffff == 0 and dev.cfg32(0x10) == 0x4   # config space reset
    dev.enumerate()
    assert dev.rd32(0x14) == 0 and dev.rd32(0x1c) == 0                # controller reset

def test_link_down_drops_traffic_resets_and_retrains(dev):
    dev.bring_up()
    rc, out = dev.control("link down 20")
    assert rc == 0
    s = dev.stats()
    assert s["link_up"] == 0 and s["ltssm"] == 0 and s["link_downs"] == 1
    st, _ = dev.cfg_read(0, timeout_us=5)
    assert st == -1                                                   # nothing answers
    dev.run_us(100)
    s = dev.stats()
    assert (s["link_up"], s["ltssm"], s["link_gen"]) == (1, 0x10, 3)
    assert dev.cfg32(0x04) & 0xffff == 0                              # DL_Down reset the function

def test_retrain_pauses_traffic_without_reset(dev):
    dev.bring_up()
    rc, _ = dev.control("link retrain 30")
    assert rc == 0 and dev.stats()["ltssm"] == 0x0b and dev.stats()["link_up"] == 1
    t0 = dev.now
    v = dev.rd32(0x1c)
    assert v & 1 and dev.now - t0 >= 30_000_000                      # the read waited for recovery
    assert dev.stats()["ltssm"] == 0x10 and dev.stats()["retrains"] == 1
