#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Simulated SSD, fault injection (set at start and changed while running through the control
channel): error statuses, lost CQEs, CFS, slow/failing RDY, link down/retrain, UR/CA/poisoned/no
completions to host reads, poisoned and malformed TLPs, rogue DMA, silent bit flips, namespace not
ready, busy device; the UNIX-socket control channel."""

import os
import struct
import socket
import random
import tempfile

import pytest

from literecorder.sim.ssd import SimSSD, SSDError, send_control, US

pytestmark = pytest.mark.unit

def status(c):
    return (c["sct"], c["sc"])

def make(tmp_path, faults=(), profile="ideal", **kw):
    d = SimSSD(profile=profile, ns_file=str(tmp_path / "ns.img"), ns_size=32 << 20, faults=faults, **kw)
    return d

@pytest.mark.parametrize("spec, opc, want", [
    ("write-fault:lba=100-107", 1, (2, 0x80)),
    ("read-error:lba=104", 2, (2, 0x81)),
    ("internal-error:op=flush", 0, (0, 0x06)),
    ("status:op=read,sct=2,sc=0x85,lba=100", 2, (2, 0x85)),
])
def test_error_status_on_chosen_lbas_or_opcodes(tmp_path, spec, opc, want):
    with make(tmp_path, [spec]) as d:
        d.bring_up()
        buf = d.alloc(1 << 16)
        if opc == 0:
            c = d.cmd(1, 0x00, nsid=1)
        else:
            c = d.io(opc, 96, 16, buf)                  # covers LBA 100-107
        assert status(c) == want and c["dnr"] == 1
        other = d.io(opc or 2, 0, 8, buf) if opc else d.io(2, 0, 8, buf)
        assert status(other) == (0, 0)                  # outside the LBAs / other opcode
        if opc:
            assert status(d.io(opc, 96, 16, buf)) == want   # unlimited count by default
        log = d.alloc(4096)
        d.admin(0x02, prp1=log, cdw={10: (127 << 16) | 0x02})
        media_errors = struct.unpack_from("<Q", d.read_mem(log, 512), 160)[0]
        assert media_errors == (2 if want[0] == 2 else 0)

def test_write_fault_leaves_the_media_unchanged(tmp_path):
    with make(tmp_path, ["write-fault:lba=0-7,count=1"]) as d:
        d.bring_up()
        buf, rb = d.alloc(8192), d.alloc(8192)
        d.write_mem(buf, b"\x11" * 4096)
        assert status(d.io(1, 0, 8, buf)) == (2, 0x80)
        assert status(d.io(2, 0, 8, rb)) == (0, 0)
        assert d.read_mem(rb, 4096) == bytes(4096)
        assert status(d.io(1, 0, 8, buf)) == (0, 0)     # count=1 consumed
        assert status(d.io(2, 0, 8, rb)) == (0, 0)
        assert d.read_mem(rb, 4096) == b"\x11" * 4096

def test_skip_and_count(tmp_path):
    with make(tmp_path, ["read-error:skip=2,count=2"]) as d:
        d.bring_up()
        buf = d.alloc(4096)
        got = [status(d.io(2, i, 1, buf))[1] for i in range(6)]
        assert got == [0, 0, 0x81, 0x81, 0, 0]

def test_admin_opcode_fault(tmp_path):
    with make(tmp_path, ["internal-error:op=admin:0x06,count=1"]) as d:
        d.bring_up(qid=0)
        buf = d.alloc(4096)
        assert status(d.admin(0x06, prp1=buf, cdw={10: 1})) == (0, 0x06)
        assert status(d.admin(0x06, prp1=buf, cdw={10: 1})) == (0, 0)

def test_drop_cqe_then_the_rest_completes(tmp_path):
    with make(tmp_path, ["drop-cqe:op=write,skip=1,count=1"]) as d:
        d.bring_up()
        buf = d.alloc(4096)
        cids = []
        for i in range(3):
            cid = d.next_cid(); cids.append(cid)
            d.submit(1, [0x01 | (cid << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, i, 0, 0])
        got = []
        while True:
            e = d.poll_cqe(1, timeout_us=1000)
            if e is None:
                break
            got.append(e["cid"])
        assert sorted(got) == [cids[0], cids[2]]
        assert d.stats()["active_cmds"] == 1

def test_cfs_at_a_time(tmp_path):
    with make(tmp_path, ["cfs:at_us=3000"]) as d:
        d.bring_up()
        assert d.rd32(0x1c) & 2 == 0
        d.run_us(3000)
        assert d.rd32(0x1c) & 2 == 2
        buf = d.alloc(4096)
        d.submit(1, [0x02 | (d.next_cid() << 16), 1, 0, 0, 0, 0, buf, 0, 0, 0, 0, 0, 0])
        assert d.poll_cqe(1, timeout_us=500) is None    # a fatal controller does nothing
        d.wr32(0x14, 0)                                  # reset clears it
        assert d.wait_reg(0x1c, 3, 0, 1000)

def test_rdy_slow_and_rdy_fail(tmp_path):
    with make(tmp_path, ["rdy-slow:us=2000"]) as d:
        d.enumerate()
        t0 = d.now
        d.init_controller(timeout_us=5000)
        assert d.now - t0 >= 2000 * US
    with make(tmp_path, ["rdy-fail"]) as d:
        d.enumerate()
        with pytest.raises(SSDError, match="CSTS.RDY did not become 1"):
            d.init_controller(timeout_us=3000)
        rc, out = d.control("fault clear all")
        assert rc == 0 and "cleared=1" in out
        d.init_controller(timeout_us=3000)

def test_link_down_fault_at_a_time(tmp_path):
    with make(tmp_path, ["link-down:at_us=5000,for_us=50"]) as d:
        d.bring_up()
        d.run_until = None
        d.run(5000 * US - d.now + 10 * US)
        s = d.stats()
        assert s["link_up"] == 0 and s["link_downs"] == 1
        d.run_us(200)
        assert d.stats()["link_up"] == 1
        assert d.cfg32(0x04) & 0xffff == 0               # function was reset

@pytest.mark.parametrize("spec, want", [("bar-ur:reg=0x1c", 1), ("bar-ca:reg=0x1c", 4)])
def test_ur_ca_completions_to_host_reads(tmp_path, spec, want):
    with make(tmp_path, [spec]) as d:
        d.enumerate()
        assert d.rd32(0x08) == 0x00010400               # other registers answer
        st, _ = d.mmio_read(0x1c)
        assert st == want
        st, b = d.mmio_read(0x1c)
        assert st == 0                                  # count=1 by default

def test_poisoned_and_dropped_completions_to_host_reads(tmp_path):
    with make(tmp_path, ["bar-poison:reg=0x08", "bar-drop:reg=0x14"]) as d:
        d.enumerate()
        d.trace()
        d.mmio_read(0x08)
        cpl = [r for r in d.traced() if r.dir == 1 and r.is_cpl]
        assert len(cpl) == 1 and cpl[0].ep == 1
        st, _ = d.mmio_read(0x14, timeout_us=20)
        assert st == -1                                 # no completion: host times out

def test_poisoned_write_data_is_refused_by_the_host(tmp_path):
    with make(tmp_path, ["poison:op=read"]) as d:
        d.bring_up()
        rb = d.alloc(8192)
        d.write_mem(rb, b"\xee" * 4096)
        d.io(2, 0, 8, rb)
        assert d.stats()["poisoned_rx"] == 1             # the first TLP only
        assert d.read_mem(rb, 256) == b"\xee" * 256     # poisoned TLP not written

@pytest.mark.parametrize("kind, counter", [("len", "malformed_rx"), ("mps", "mps_violations"),
    ("4k", "boundary_violations")])
def test_malformed_tlps(tmp_path, kind, counter):
    with make(tmp_path, [f"malformed:kind={kind}"]) as d:
        d.bring_up()
        rb = d.alloc(16384)
        assert status(d.io(2, 0, 16, rb)) == (0, 0)
        assert d.stats()[counter] == 1

@pytest.mark.parametrize("direction, counter", [("write", "rogue_writes"), ("read", "rogue_reads")])
def test_rogue_dma_outside_the_given_buffers(tmp_path, direction, counter):
    target = 0x2_0000_0000                               # not host memory
    op = 2 if direction == "write" else 1
    with make(tmp_path, [f"rogue:addr={target:#x},dir={direction}"]) as d:
        d.bring_up()
        buf = d.alloc(4096)
        d.io(op, 0, 8, buf)
        d.run_us(10)
        s = d.stats()
        assert s[counter] == 1 and s["rogue_first_addr"] == target

def test_bitflip_on_read_is_silent_and_exact(tmp_path):
    with make(tmp_path, ["bitflip:lba=16-23,bit=12345"]) as d:
        d.bring_up()
        buf, rb = d.alloc(8192), d.alloc(8192)
        data = os.urandom(4096)
        d.write_mem(buf, data)
        assert status(d.io(1, 16, 8, buf)) == (0, 0)
        assert status(d.io(2, 16, 8, rb)) == (0, 0)      # success status
        got = d.read_mem(rb, 4096)
        diff = [i for i in range(4096) if got[i] != data[i]]
        assert diff == [12345 // 8] and got[diff[0]] ^ data[diff[0]] == 1 << (12345 % 8)
        assert status(d.io(2, 16, 8, rb)) == (0, 0)
        assert d.read_mem(rb, 4096) == data              # media intact, count=1

def test_namespace_not_ready_for_a_while(tmp_path):
    with make(tmp_path, ["ns-not-ready:for_us=3000"]) as d:
        d.bring_up()
        buf = d.alloc(4096)
        c = d.io(2, 0, 1, buf)
        assert status(c) == (0, 0x82) and c["dnr"] == 0
        d.run_us(3000)
        assert status(d.io(2, 0, 1, buf)) == (0, 0)

def test_busy_device_back_pressure_delays_host_requests(tmp_path):
    with make(tmp_path) as d:
        d.bring_up()
        t0 = d.now
        d.rd32(0x1c)
        quick = d.now - t0
        d.control("fault add busy:for_us=200")
        d.run_us(1)
        t0 = d.now
        st, _ = d.mmio_read(0x1c, timeout_us=1000)
        assert st == 0 and d.now - t0 >= 199 * US > quick

def test_faults_change_while_running(tmp_path):
    with make(tmp_path) as d:
        d.bring_up()
        buf = d.alloc(4096)
        assert status(d.io(2, 5, 1, buf)) == (0, 0)
        rc, out = d.control("fault add read-error:lba=5")
        assert rc == 0 and out == "ok id=1"
        assert status(d.io(2, 5, 1, buf)) == (2, 0x81)
        rc, out = d.control("fault list")
        assert "read-error:lba=5 fired=1" in out
        assert d.control("fault clear 1") == (0, "ok cleared=1")
        assert status(d.io(2, 5, 1, buf)) == (0, 0)
        rc, out = d.control("fault add explode")
        assert rc == -1 and "unknown kind 'explode'" in out
        assert d.control("set read_lat_us=500")[0] == 0
        t0 = d.now
        d.io(2, 5, 1, buf)
        assert d.now - t0 >= 500 * US
        assert d.control("set read_lat_us=fast")[0] == -1
        assert d.control("frobnicate")[0] == -1
        rc, out = d.control("stats")
        assert rc == 0 and " host_reads=3 " in out

def test_control_socket(tmp_path):
    ctl = os.path.join(tempfile.gettempdir(), f"ssdtest-{os.getpid()}.ctl")
    with make(tmp_path, ctl_path=ctl) as d:
        d.bring_up()
        buf = d.alloc(4096)
        import threading
        reply = {}
        def client():
            reply["r"] = send_control(ctl, "fault add read-error:lba=9")
        t = threading.Thread(target=client)
        t.start()
        for _ in range(200):
            d.lib.ssdh_poll_control(d.h)
            if not t.is_alive():
                break
            t.join(0.01)
        t.join(2)
        assert reply["r"] == "ok id=1"
        assert status(d.io(2, 9, 1, buf)) == (2, 0x81)
    assert not os.path.exists(ctl)
