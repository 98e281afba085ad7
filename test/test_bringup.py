#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""RTL bring-up sequencer (cores/nvme/bringup.py, Migen simulation) against a Python model of the
device behind the root complex's requester: a Type-0 configuration space (64-bit BAR0 sizing,
capability list, DevCap/DevCtl, Command), the NVMe registers (CAP, CC/CSTS with RDY after a delay,
shutdown, AQA/ASQ/ACQ, doorbells) and an admin queue processed the way a controller does: it reads
each submission entry through the admin window, writes Identify data and the completion entry into
it. The real queue engine sits on the same stand-in and must end up configured and ready.

Expected values are the PCIe/NVMe facts and the BIOS's choices written out as numbers here (the CC
of an enabled controller, the entries of every admin command dword by dword, the DevCtl and Command
values), not taken from the sequencer's module. Every failure is checked for its code, its step and
its detail; the sequence is run at 128, 256 and 512 bits."""

import random
import struct

import pytest

from migen import *

from litex.soc.interconnect import stream

from literecorder.cores.common import doorbell_layout
from literecorder.cores.pcie.windows import CompleterWindow
from literecorder.cores.pcie.requester import REQ_OK, REQ_UR, REQ_CRS, REQ_TIMEOUT
from literecorder.cores.nvme.engine import NVMeQueueEngine
from literecorder.cores.nvme.bringup import NVMeBringUp, STEP, ERR

pytestmark = pytest.mark.unit

SYS_CLK  = 100_000           # 100 cycles per millisecond: the timeouts stay short in cycles.
ADMIN    = 0x90000000
BAR      = 0xC0000000
QBASE    = 0xA0000000
ENTRIES  = 16

# Stand-ins ----------------------------------------------------------------------------------------

class _PHY:
    def __init__(self, dw):
        self.data_width   = dw
        self.root_mps_cap = 512
        self.max_payload_size = 512
        self.link_up      = Signal()
        self.ltssm        = Signal(6)
        self.perst        = Signal(reset=1)

class _Requester:
    def __init__(self):
        self.kind, self.adr, self.length = Signal(2), Signal(64), Signal(2)
        self.first_be, self.last_be, self.wdata = Signal(4), Signal(4), Signal(64)
        self.start, self.busy, self.status, self.rdata = Signal(), Signal(), Signal(3), Signal(64)

class _Completer:
    def __init__(self):
        self.enable, self.mps_log2 = Signal(), Signal(4)

class RCStandIn:
    """What NVMeBringUp and NVMeQueueEngine use of RCRootComplex."""
    def __init__(self, dw):
        self.phy       = _PHY(dw)
        self.requester = _Requester()
        self.completer = _Completer()
        self.doorbell  = stream.Endpoint(doorbell_layout())
        self.windows   = {}

    def add_window(self, name, base, size, readable=True, writable=True, on_chip=False):
        w = CompleterWindow(name, base, size, self.phy.data_width, readable, writable, on_chip)
        self.windows[name] = w
        return w

class EngineStandIn(Module):
    """What NVMeBringUp uses of NVMeQueueEngine (its windows, configuration, enable, ready,
    outstanding); ready a few cycles after enable, as the engine once its CQ memory is cleared."""
    def __init__(self, rc, base, entries):
        self.entries   = entries
        self.sq_window = rc.add_window("sq", base, 4096, writable=False, on_chip=True)
        self.cq_window = rc.add_window("cq", base + 0x100000, 4096, readable=False, on_chip=True)
        q = log2_int(entries) + 1
        self.enable, self.ready, self.outstanding = Signal(), Signal(), Signal(q)
        self.qsize, self.qd, self.nsid, self.lba_shift = Signal(q), Signal(q), Signal(32), Signal(4)
        self.max_blocks, self.sq_db, self.cq_db, self.timeout = Signal(17), Signal(32), Signal(32), Signal(32)
        count = Signal(4)
        self.sync += If(~self.enable, count.eq(0), self.ready.eq(0)).Elif(count != 15, count.eq(count + 1)
            ).Else(self.ready.eq(1))

class DUT(Module):
    def __init__(self, dw=256, autostart=True, sys_clk=SYS_CLK, real_engine=False):
        self.dw = dw
        self.rc = RCStandIn(dw)
        if real_engine:
            self.submodules.engine = NVMeQueueEngine(self.rc, QBASE, ENTRIES)
            self.comb += self.engine.doorbell.ready.eq(1)
        else:
            self.submodules.engine = EngineStandIn(self.rc, QBASE, ENTRIES)
        self.submodules.bringup = NVMeBringUp(self.rc, self.engine, sys_clk, admin_base=ADMIN,
            bar_base=BAR, engine_timeout_ms=50, autostart=autostart)

# Device model -------------------------------------------------------------------------------------

class Device:
    """Configuration space, NVMe registers and admin queue of an NVMe controller (see the module
    docstring); ``opts`` change it (faults, identity)."""
    def __init__(self, dut, **opts):
        self.dut  = dut
        self.o    = dict(vendor=0x1EE7, device=0x5100, class_code=0x010802, bar_size=16*1024, bar64=True,
            mps_code=1, mqes=1023, to=2, dstrd=0, mpsmin=0, rdy_cycles=30, mdts=5, sqes=0x66, cqes=0x44,
            nsid=1, nsze=123456789, lbads=9, flbas=0, crs=0, link_at=5, admin_status={}, admin_drop=(),
            fatal_on_enable=False, rdy_never=False, link_drop_after=None, shuffle=False, seed=1)
        self.o.update(opts)
        o = self.o
        self.rng    = random.Random(o["seed"])
        self.cfg    = {0x00: o["vendor"] | (o["device"] << 16), 0x04: 0x00100000,
            0x08: (o["class_code"] << 8) | 0x01, 0x0c: 0, 0x10: 0x4 if o["bar64"] else 0x0, 0x14: 0,
            0x34: 0x40,
            0x40: 0x00007001,                  # Power management -> 0x70
            0x70: 0x0002b010,                  # PCI Express -> 0xb0
            0x74: o["mps_code"],               # DevCap
            0x78: 0x00002810,                  # DevCtl: MRRS 512, MPS 128, ext tags, relaxed ordering
            0xb0: 0x00000011}                  # MSI-X, end of the list
        self.cfg_writes = []                    # (register, value, byte enables)
        self.mmio_writes = []                   # (offset, value)
        self.sqes   = []                        # Admin entries fetched (16 dwords each)
        self.cc, self.csts = 0, 0
        self.rdy_at = None
        self.aqa = self.asq = self.acq = 0
        self.sq_head = self.cq_tail = 0
        self.phase  = 1
        self.pending = []                       # Doorbell rings to serve.
        self.requests = 0

    # Configuration space.
    def cfg_read(self, reg):
        o = self.o
        if reg == 0x10 and self.bar_sizing_lo:
            return (~(o["bar_size"] - 1) & 0xfffffff0) | self.cfg[0x10] & 0xf
        if reg == 0x14 and self.bar_sizing_hi:
            return 0xffffffff
        return self.cfg.get(reg, 0)

    bar_sizing_lo = bar_sizing_hi = False

    def cfg_write(self, reg, val, be):
        self.cfg_writes.append((reg, val, be))
        mask = sum(0xff << (8*i) for i in range(4) if be >> i & 1)
        if reg == 0x10:
            self.bar_sizing_lo = val == 0xffffffff
            if not self.bar_sizing_lo:
                self.cfg[0x10] = (val & ~(self.o["bar_size"] - 1) & 0xfffffff0) | self.cfg[0x10] & 0xf
            return
        if reg == 0x14:
            self.bar_sizing_hi = val == 0xffffffff
            if not self.bar_sizing_hi:
                self.cfg[0x14] = val
            return
        self.cfg[reg] = (self.cfg.get(reg, 0) & ~mask) | (val & mask)

    @property
    def bar0(self):
        return self.cfg[0x10] & 0xfffffff0 | (self.cfg[0x14] << 32 if self.o["bar64"] else 0)

    # NVMe registers.
    def cap(self):
        o = self.o
        return (o["mqes"] | (1 << 16) | (o["to"] << 24) | (o["dstrd"] << 32) | (1 << 37) |
            (o["mpsmin"] << 48) | (4 << 52))

    def mmio_read(self, off, now):
        if off == 0x00: return self.cap()
        if off == 0x14: return self.cc
        if off == 0x1c:
            if self.rdy_at is not None and now >= self.rdy_at:
                self.csts = (self.csts & ~1) | (self.cc & 1)
                self.rdy_at = None
            return self.csts
        return 0

    def mmio_write(self, off, val, now):
        self.mmio_writes.append((off, val))
        o = self.o
        if off == 0x14:
            old, self.cc = self.cc, val
            if (val >> 14) & 3:
                self.csts = (self.csts & ~0xc) | (2 << 2)          # Shutdown complete at once.
            if (old ^ val) & 1:
                if val & 1 and o["fatal_on_enable"]:
                    self.csts |= 2
                elif not (val & 1 and o["rdy_never"]):
                    self.rdy_at = now + o["rdy_cycles"]
                if not val & 1:
                    self.csts &= ~0xc
                    self.sq_head = self.cq_tail = 0
                    self.phase = 1
        elif off == 0x24: self.aqa = val
        elif off == 0x28: self.asq = (self.asq & ~0xffffffff) | val
        elif off == 0x2c: self.asq = (self.asq & 0xffffffff) | (val << 32)
        elif off == 0x30: self.acq = (self.acq & ~0xffffffff) | val
        elif off == 0x34: self.acq = (self.acq & 0xffffffff) | (val << 32)
        elif off == 0x1000:
            self.pending.append(val)

    # Requester service.
    @passive
    def requester(self):
        r, dut = self.dut.rc.requester, self.dut
        now = 0
        while True:
            if (yield r.start):
                self.requests += 1
                kind, adr, wdata = (yield r.kind), (yield r.adr), (yield r.wdata)
                length, be = (yield r.length), (yield r.first_be)
                yield r.busy.eq(1)
                for _ in range(3):
                    yield
                    now += 1
                status, rdata = REQ_OK, 0
                if kind in (2, 3):
                    bus, reg = adr >> 20, adr & 0xffc
                    assert bus == 1 and (adr >> 12) & 0xff == 0, hex(adr)
                    if self.o["crs"]:
                        self.o["crs"] -= 1
                        status = REQ_CRS
                    elif self.o["vendor"] == 0xffff:
                        status = REQ_UR
                    elif kind == 2:
                        rdata = self.cfg_read(reg)
                    else:
                        self.cfg_write(reg, wdata & 0xffffffff, be)
                else:
                    bar = self.bar0
                    assert bar <= adr < bar + self.o["bar_size"], f"MMIO 0x{adr:x} outside BAR0 0x{bar:x}"
                    assert self.cfg[0x04] & 2, "MMIO with memory space disabled"
                    off = adr - bar
                    if kind == 0:
                        rdata = self.mmio_read(off, now) & ((1 << 32*length) - 1)
                    else:
                        self.mmio_write(off, wdata & 0xffffffff, now)
                yield r.status.eq(status)
                yield r.rdata.eq(rdata)
                yield r.busy.eq(0)
            yield
            now += 1

    @passive
    def link(self):
        phy = self.dut.rc.phy
        t = 0
        while True:
            perst = yield phy.perst
            up = not perst and self.o["link_at"] is not None and t >= self.o["link_at"]
            if self.o["link_drop_after"] is not None and self.requests >= self.o["link_drop_after"]:
                up = False
            yield phy.link_up.eq(int(up))
            yield phy.ltssm.eq(0x10 if up else 0x01)
            yield
            t += 1

    # Admin queue (served between requests, as a controller fetches after its doorbell).
    def read_window(self, offset, nbytes):
        w, bb = self.dut.rc.windows["admin"], self.dut.dw//8
        data = b""
        for k in range(nbytes//bb or 1):
            yield w.rd_adr.eq(offset//bb + k)
            yield
            yield
            data += ((yield w.rd_dat)).to_bytes(bb, "little")
        lo = offset % bb
        return data[lo:lo + nbytes] if nbytes < bb else data

    def write_window(self, offset, data):
        w, bb = self.dut.rc.windows["admin"], self.dut.dw//8
        beats = []
        for a in range(offset - offset % bb, offset + len(data), bb):
            chunk, be = 0, 0
            for i in range(bb):
                if offset <= a + i < offset + len(data):
                    chunk |= data[a + i - offset] << (8*i)
                    be |= 1 << i
            beats.append((a//bb, chunk, be))
        if self.o["shuffle"]:
            self.rng.shuffle(beats)
        for adr, chunk, be in beats:
            yield w.wr.valid.eq(1)
            yield w.wr.adr.eq(adr)
            yield w.wr.dat.eq(chunk)
            yield w.wr.be.eq(be)
            yield
        yield w.wr.valid.eq(0)

    @passive
    def admin(self):
        o = self.o
        while True:
            if not self.pending:
                yield
                continue
            tail = self.pending.pop(0)
            entries = (self.aqa & 0xfff) + 1
            while self.sq_head != tail:
                raw = yield from self.read_window(self.asq - ADMIN + 64*self.sq_head, 64)
                d = list(struct.unpack("<16I", raw))
                self.sqes.append(d)
                self.sq_head = (self.sq_head + 1) % entries
                opc, cid = d[0] & 0xff, d[0] >> 16
                status, dw0 = o["admin_status"].get(opc, 0), 0
                if opc in o["admin_drop"]:
                    continue
                if opc == 0x06 and not status:
                    prp1, cns = d[6] | (d[7] << 32), d[10] & 0xff
                    data = bytearray(4096)
                    if cns == 1:
                        data[0:2] = struct.pack("<H", o["vendor"])
                        data[4:24] = b"LRSIM-MODEL-SERIAL  "
                        data[77] = o["mdts"]
                        data[512], data[513] = o["sqes"], o["cqes"]
                    elif cns == 2:
                        data[0:4] = struct.pack("<I", o["nsid"])
                    elif cns == 0:
                        assert d[1] == o["nsid"]
                        data[0:8] = struct.pack("<Q", o["nsze"])
                        data[8:16] = struct.pack("<Q", o["nsze"])
                        data[25] = 1
                        data[26] = o["flbas"]
                        data[128:132] = struct.pack("<I", 9 << 16)       # LBAF0: 512 B
                        data[132:136] = struct.pack("<I", 12 << 16)      # LBAF1: 4 KiB
                        data[128 + 4*o["flbas"] + 2] = o["lbads"]
                    yield from self.write_window(prp1 - ADMIN, bytes(data))
                cqe = struct.pack("<4I", dw0, 0, self.sq_head, cid | (self.phase << 16) | (status << 17))
                yield from self.write_window(self.acq - ADMIN + 16*self.cq_tail, cqe)
                self.cq_tail = (self.cq_tail + 1) % entries
                if self.cq_tail == 0:
                    self.phase ^= 1

# Runs ---------------------------------------------------------------------------------------------

def run(dw=256, cycles=6000, stop=None, actions=None, autostart=True, sys_clk=SYS_CLK, real_engine=False,
        **opts):
    """Simulates the bring-up until it is ready or failed (or ``stop`` returns True); returns
    (dut, device, final registers)."""
    dut = DUT(dw, autostart, sys_clk, real_engine)
    dev = Device(dut, **opts)
    b = dut.bringup
    out = {}
    def main():
        for name, sig in (actions or {}).get("init", []):
            yield sig(b).eq(name)
        for t in range(cycles):
            if (yield b.ready) or (yield b.failed):
                if stop is None or (yield from stop(dut, dev, t)):
                    break
            yield
        for name in ("ready", "failed", "step", "code", "detail", "nsze", "nsid", "lba_shift", "mdts",
                "xfer_log2", "qsize", "mps_log2", "vendor_device", "busy", "runs"):
            out[name] = yield getattr(b, name)
        e = dut.engine
        for name in ("enable", "ready", "qsize", "qd", "nsid", "lba_shift", "max_blocks", "sq_db", "cq_db",
                "timeout"):
            out["engine_" + name] = yield getattr(e, name)
        out["dma"] = yield dut.rc.completer.enable
        out["cpl_mps_log2"] = yield dut.rc.completer.mps_log2
        out["cycles"] = t
    run_simulation(dut, [main(), dev.requester(), dev.link(), dev.admin()])
    return dut, dev, out

def sqe(opc, cid, nsid=0, prp1=0, cdw10=0, cdw11=0):
    return [opc | (cid << 16), nsid, 0, 0, 0, 0, prp1, 0, 0, 0, cdw10, cdw11, 0, 0, 0, 0]

# Tests --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dw", [128, 256, 512])
def test_bringup_from_reset(dw):
    # The real queue engine at 128 bits (its CQ memory is cleared in 256 cycles there).
    dut, dev, r = run(dw, shuffle=(dw == 256), real_engine=(dw == 128))
    assert (r["ready"], r["failed"], r["code"]) == (1, 0, 0), r
    assert r["step"] == STEP["READY"]
    # Enumeration: decoding off, BAR0 sized and assigned (64-bit), DevCtl MPS = min(256 device, 512
    # root) = 256 B, MRRS 512 B, other DevCtl bits kept; Command: MEM | BME | INTx off.
    assert dev.cfg_writes == [
        (0x04, 0x0000, 0b0011),
        (0x10, 0xffffffff, 0xf), (0x14, 0xffffffff, 0xf),
        (0x10, 0xC0000000 | 0x4, 0xf), (0x14, 0, 0xf),
        (0x78, 0x2830, 0b0011),
        (0x04, 0x0406, 0b0011),
    ]
    assert dev.bar0 == 0xC0000000
    assert (r["dma"], r["cpl_mps_log2"], r["mps_log2"]) == (1, 8, 8)
    assert r["vendor_device"] == 0x51001EE7
    # Controller: disabled (it was), admin queues, enabled with IOCQES 4, IOSQES 6, MPS 0.
    assert dev.mmio_writes[:6] == [(0x24, 0x000f000f), (0x28, 0x90000000), (0x2c, 0), (0x30, 0x90001000),
        (0x34, 0), (0x14, 0x00460001)]
    # Admin commands, dword by dword; SQ tail doorbells 1..6, CQ head doorbells 1..6 (DSTRD 0: 0x1004).
    assert dev.sqes == [
        sqe(0x06, 0, prp1=0x90002000, cdw10=1),
        sqe(0x06, 1, prp1=0x90002000, cdw10=2),
        sqe(0x06, 2, nsid=1, prp1=0x90002000, cdw10=0),
        sqe(0x09, 3, cdw10=7, cdw11=0),
        sqe(0x05, 4, prp1=0xA0100000, cdw10=(15 << 16) | 1, cdw11=1),
        sqe(0x01, 5, prp1=0xA0000000, cdw10=(15 << 16) | 1, cdw11=(1 << 16) | 1),
    ]
    assert [v for o, v in dev.mmio_writes if o == 0x1000] == [1, 2, 3, 4, 5, 6]
    assert [v for o, v in dev.mmio_writes if o == 0x1004] == [1, 2, 3, 4, 5, 6]
    # What it learned, and the engine it configured: 16 entries (MQES 1023), QD 15, 128 KiB commands
    # (MDTS 5: 2^5 x 4 KiB) of 512-byte LBAs, doorbells of queue 1, timeout 50 ms x 100 cycles.
    assert (r["nsid"], r["nsze"], r["lba_shift"], r["mdts"], r["xfer_log2"], r["qsize"]) == \
        (1, 123456789, 9, 5, 17, 16)
    assert (r["engine_enable"], r["engine_ready"], r["engine_qsize"], r["engine_qd"], r["engine_nsid"]) == \
        (1, 1, 16, 15, 1)
    assert (r["engine_lba_shift"], r["engine_max_blocks"]) == (9, 256)
    assert (r["engine_sq_db"], r["engine_cq_db"], r["engine_timeout"]) == (0xC0001008, 0xC000100C, 5000)

def test_bringup_namespace_geometry():
    # 4 KiB LBAs (format 1), MDTS 0 (no limit: one PRP list page, 2 MiB), DSTRD 2, a small queue,
    # an enabled controller found at start (shut down first, then disabled).
    dut, dev, r = run(flbas=1, lbads=12, mdts=0, dstrd=2, mqes=7, nsid=3)
    assert (r["ready"], r["code"]) == (1, 0), r
    assert (r["nsid"], r["lba_shift"], r["xfer_log2"], r["qsize"]) == (3, 12, 21, 8)
    assert (r["engine_max_blocks"], r["engine_qd"]) == (512, 7)
    # Doorbells with a 16-byte stride: SQ1 tail 0x1020, CQ1 head 0x1030, admin CQ head 0x1010.
    assert (r["engine_sq_db"], r["engine_cq_db"]) == (0xC0001020, 0xC0001030)
    assert [v for o, v in dev.mmio_writes if o == 0x1010] == [1, 2, 3, 4, 5, 6]
    assert dev.sqes[2][1] == 3 and dev.sqes[4][10] == (7 << 16) | 1

def test_bringup_crs_then_ready():
    # The device answers CRS for its first configuration requests: retried.
    dut, dev, r = run(crs=5)
    assert (r["ready"], r["code"]) == (1, 0), r

def test_bringup_restart_shuts_down_and_refuses_while_held():
    """``start`` again on a running port: normal shutdown, disable, the same sequence; refused while
    ``hold``."""
    def stop(dut, dev, t):
        b = dut.bringup
        if not hasattr(dev, "phase_"):
            dev.phase_ = 0
        if dev.phase_ == 0:
            yield b.hold.eq(1)
            yield b.start.eq(1)
            yield
            yield b.start.eq(0)
            dev.refused_ = yield b.refused
            yield b.hold.eq(0)
            yield
            dev.still_ready = yield b.ready
            dev.n_writes = len(dev.mmio_writes)
            yield b.start.eq(1)
            yield
            yield b.start.eq(0)
            yield
            dev.phase_ = 1
            return False
        return True
    dut, dev, r = run(stop=stop, cycles=12000)
    assert (dev.refused_, dev.still_ready) == (1, 1)
    assert (r["ready"], r["code"], r["runs"]) == (1, 0, 2), r
    later = dev.mmio_writes[dev.n_writes:]
    # The second run: CC.SHN = 01b first (shutdown), then CC.EN = 0 with SHN cleared, then the rest.
    assert later[0] == (0x14, 0x00464001) and later[1] == (0x14, 0x00460000), later[:3]
    assert later[2:8] == [(0x24, 0x000f000f), (0x28, 0x90000000), (0x2c, 0), (0x30, 0x90001000),
        (0x34, 0), (0x14, 0x00460001)]
    # The admin queues start over: CIDs go on, tail doorbells restart at 1.
    assert [d[0] & 0xff for d in dev.sqes] == [6, 6, 6, 9, 5, 1]*2
    assert [d[0] >> 16 for d in dev.sqes[6:]] == list(range(6, 12))

# Failures: code, step, detail ---------------------------------------------------------------------

def test_bringup_link_down():
    # No link: reported after link_timeout_ms (here 3 ms = 300 cycles), LTSSM state as detail.
    dut, dev, r = run(link_at=None, actions={"init": [(3, lambda b: b.link_timeout_ms)]})
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["LINK-DOWN"], STEP["LINK"], 0x01), r
    assert 200 <= r["cycles"] <= 320 and dev.requests == 0

def test_bringup_link_lost_during_init():
    # The link goes down after the 20th request (the controller's initialization): the step it was in.
    dut, dev, r = run(link_drop_after=20)
    assert (r["failed"], r["code"], r["step"]) == (1, ERR["LINK-DOWN"], STEP["DISABLE"]), r

def test_bringup_no_device():
    dut, dev, r = run(vendor=0xffff)
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["NO-DEVICE"], STEP["ID"], REQ_UR), r

def test_bringup_not_nvme():
    dut, dev, r = run(class_code=0x010601)          # An AHCI controller.
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["NOT-NVME"], STEP["CLASS"], 0x010601), r
    assert dev.cfg_writes == []

def test_bringup_crs_forever():
    # CRS beyond 1 s (2 cycles per ms here): retried for 1 s, then reported with the CRS status.
    dut, dev, r = run(crs=10**9, cycles=3000, sys_clk=2_000)
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["NO-DEVICE"], STEP["ID"], REQ_CRS), r
    assert 1995 <= r["cycles"] <= 2030 and 10**9 - 400 < dev.o["crs"] < 10**9 - 200

@pytest.mark.parametrize("opts,detail", [
    (dict(bar_size=2 << 20), 0xffe00004),           # Larger than the port's 1 MiB window.
    (dict(bar64=False, bar_size=4 << 20), 0xffc00000),
])
def test_bringup_bar_refused(opts, detail):
    dut, dev, r = run(**opts)
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["BAR"], STEP["BAR"], detail), r

@pytest.mark.parametrize("opts,step,detail", [
    (dict(mpsmin=1), "CAP", 1),                          # 8 KiB pages at least.
    (dict(sqes=0x55), "IDENTIFY-CONTROLLER", 0x55),      # No 64-byte submission entries.
    (dict(cqes=0x33), "IDENTIFY-CONTROLLER", 0x33),
    (dict(nsid=0), "IDENTIFY-NS-LIST", 0),               # No active namespace.
    (dict(lbads=13), "IDENTIFY-NAMESPACE", 0x10),        # 8 KiB LBAs: 0x10 | format 0.
    (dict(nsze=0), "IDENTIFY-NAMESPACE", 0),
])
def test_bringup_unsupported(opts, step, detail):
    dut, dev, r = run(**opts)
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["UNSUPPORTED"], STEP[step], detail), r
    assert r["engine_enable"] == 0

def test_bringup_not_ready_and_fatal():
    # CSTS.RDY never follows CC.EN: min(CAP.TO 1 s, timeout_ms 4) -> 4 ms; CSTS as detail.
    dut, dev, r = run(rdy_never=True, actions={"init": [(4, lambda b: b.timeout_ms)]})
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["NOT-READY"], STEP["ENABLE"], 0), r
    dut, dev, r = run(fatal_on_enable=True)
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["FATAL"], STEP["ENABLE"], 2), r
    # CAP.TO bounds the wait below timeout_ms: TO = 0 -> no wait at all.
    dut, dev, r = run(rdy_cycles=1000, to=0)
    assert (r["failed"], r["code"], r["step"]) == (1, ERR["NOT-READY"], STEP["ENABLE"]), r

@pytest.mark.parametrize("opc,step", [(0x06, "IDENTIFY-CONTROLLER"), (0x09, "SET-QUEUES"), (0x05, "CREATE-CQ"),
    (0x01, "CREATE-SQ")])
def test_bringup_admin_status(opc, step):
    # Status field: SC 02h (Invalid Field), SCT 1 for the queue commands (Invalid Queue Size), DNR.
    status = (1 << 14) | ((1 << 8) | 0x02 if opc in (0x01, 0x05) else 0x02)
    dut, dev, r = run(admin_status={opc: status})
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["ADMIN-STATUS"], STEP[step], status), r
    assert r["engine_enable"] == 0 and r["ready"] == 0

def test_bringup_admin_timeout():
    dut, dev, r = run(admin_drop=(0x05,), actions={"init": [(5, lambda b: b.timeout_ms)]})
    assert (r["failed"], r["code"], r["step"], r["detail"]) == (1, ERR["ADMIN-TIMEOUT"], STEP["CREATE-CQ"], 0x05), r

def test_bringup_waits_for_start():
    dut, dev, r = run(autostart=False, cycles=500)
    assert (r["ready"], r["failed"], r["busy"], r["step"], r["runs"]) == (0, 0, 0, STEP["IDLE"], 0)
    assert dev.requests == 0

def test_bringup_parameter_checks():
    rc = RCStandIn(256)
    eng = NVMeQueueEngine(RCStandIn(256), QBASE, ENTRIES)
    with pytest.raises(ValueError, match="admin_base=0x90001000: aligned on 0x4000"):
        NVMeBringUp(rc, eng, SYS_CLK, admin_base=ADMIN + 0x1000, bar_base=BAR)
    with pytest.raises(ValueError, match="BAR window 0xc0080000 \\+ 0x100000"):
        NVMeBringUp(rc, eng, SYS_CLK, admin_base=ADMIN, bar_base=BAR + 0x80000)
    with pytest.raises(ValueError, match="engine_timeout_ms=50000: 1 ms .. 21474 ms at 200 MHz"):
        NVMeBringUp(rc, eng, 200e6, admin_base=ADMIN, bar_base=BAR, engine_timeout_ms=50000)
    with pytest.raises(ValueError, match="data_width=64"):
        NVMeBringUp(RCStandIn(64), eng, SYS_CLK, admin_base=ADMIN, bar_base=BAR)

def test_bringup_doc_lists_steps_and_codes():
    """doc/core.md's tables name every step and error code with its number."""
    import os, re
    from literecorder.cores.nvme.bringup import STEPS, ERRORS
    from literecorder.cores.recorder.job import JOB_CODES
    doc = open(os.path.join(os.path.dirname(__file__), "..", "doc", "core.md")).read()
    steps  = re.findall(r"^\| (\d+) \| ([A-Z-]+) \|", doc, re.M)
    assert steps[:len(STEPS) + len(ERRORS)] == [(str(i), n) for i, (n, _) in enumerate(STEPS)] + \
        [(str(i), n) for i, (n, _, _) in enumerate(ERRORS)]
    verdicts = re.findall(r"^\| (\d+) \| ([A-Z-]+): ", doc, re.M)
    assert verdicts == [(str(i), n) for i, (n, _) in enumerate(JOB_CODES)]

def test_coreless_soc_parameter_checks():
    from literecorder.soc.coreless_soc import LiteRecorderCorelessSimSoC
    with pytest.raises(ValueError, match="ring_slots=3: a power of two from 2 to 4096"):
        LiteRecorderCorelessSimSoC(ring_slots=3)
    with pytest.raises(ValueError, match="n_ssds=9: between 1 and 8"):
        LiteRecorderCorelessSimSoC(n_ssds=9)
    with pytest.raises(ValueError, match="pcie_data_width=64: allowed are 128, 256, 512"):
        LiteRecorderCorelessSimSoC(pcie_data_width=64)
