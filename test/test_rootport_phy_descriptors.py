#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""UltraScale(+) descriptor converters (cores/pcie/phy/xilinx_us_descriptors.py) against a Python
model of the descriptor formats written from PG156/PG213 (requester request, requester completion,
completer request, completer completion descriptors and their tuser fields), with seeded random
TLPs (all payload lengths/end positions, 32/64-bit addresses, configuration requests, split and
error completions) and random valid/ready back-pressure on both sides."""

import random

import pytest

from migen import *
from migen.sim import run_simulation, passive

from literecorder.cores.pcie.phy.xilinx_us_descriptors import TLPToRQ, TLPToCC, RCToTLP, CQToTLP
from literecorder.cores.pcie.phy.xilinx_us_descriptors import TLPDescriptorBridge

M32 = 0xffffffff

# Model: TLP headers (PCIe Base Specification layout) ----------------------------------------------

def tlp_dw0(fmt, typ, length=0, tc=0, attr=0, ep=0, at=0):
    return ((fmt << 29) | (typ << 24) | (tc << 20) | ((attr >> 2) << 18) | (ep << 14) |
        ((attr & 3) << 12) | (at << 10) | (length & 0x3ff))

def tlp_mem(addr, write, length, req_id=0, tag=0, first_be=0xf, last_be=0xf, tc=0, attr=0,
    payload=None):
    is4 = addr >> 32 != 0
    fmt = (2 if write else 0) | int(is4)
    h = [tlp_dw0(fmt, 0, length, tc, attr), (req_id << 16) | (tag << 8) | (last_be << 4) | first_be]
    h += [addr >> 32, addr & M32] if is4 else [addr & M32]
    return h + (payload or [])

def tlp_cfg(bus, dev, fn, reg, write, typ=0, req_id=0, tag=0, first_be=0xf, data=0):
    h = [tlp_dw0(2 if write else 0, 0b00100 | typ, 1), (req_id << 16) | (tag << 8) | first_be,
        (bus << 24) | (dev << 19) | (fn << 16) | (reg << 2)]
    return h + ([data] if write else [])

def tlp_cpl(cpl_id, req_id, tag, status=0, byte_count=4, lower_addr=0, payload=None, locked=0,
    tc=0, attr=0, ep=0):
    payload = payload or []
    fmt = 2 if payload else 0
    return [tlp_dw0(fmt, 0b01010 | locked, len(payload), tc, attr, ep),
        (cpl_id << 16) | (status << 13) | (byte_count & 0xfff),
        (req_id << 16) | (tag << 8) | (lower_addr & 0x7f)] + payload

# Model: descriptors (PG156/PG213) -----------------------------------------------------------------

def model_tlp_to_rq(tlp):
    """-> (descriptor + payload dwords, first_be, last_be) or None if the RQ does not take it."""
    h0, h1, h2 = tlp[:3]
    fmt, typ = h0 >> 29, (h0 >> 24) & 0x1f
    has_data, is4 = (fmt >> 1) & 1, fmt & 1
    length = (h0 & 0x3ff) or 1024
    tc, ep, at = (h0 >> 20) & 7, (h0 >> 14) & 1, (h0 >> 10) & 3
    attr = ((h0 >> 12) & 3) | (((h0 >> 18) & 1) << 2)
    req_id, tag, last_be, first_be = h1 >> 16, (h1 >> 8) & 0xff, (h1 >> 4) & 0xf, h1 & 0xf
    req_type = {0b00000: 0b0001 if has_data else 0b0000, 0b00010: 0b0011 if has_data else 0b0010,
        0b00100: 0b1010 if has_data else 0b1000, 0b00101: 0b1011 if has_data else 0b1001}.get(typ)
    if typ == 0b00001 and not has_data:
        req_type = 0b0111
    if req_type is None or fmt >> 2:
        return None
    if typ in (0b00100, 0b00101):
        d0, d1, completer = h2 & 0xffc, 0, h2 >> 16      # Register number in Address[11:2].
    else:
        addr = ((h2 << 32) | tlp[3]) if is4 else h2
        d0, d1, completer = (addr & 0xfffffffc) | at, addr >> 32, 0
    d2 = (length & 0x7ff) | (req_type << 11) | (ep << 15) | (req_id << 16)
    d3 = tag | (completer << 8) | (1 << 24) | (tc << 25) | (attr << 28)
    return [d0, d1, d2, d3] + tlp[4 if is4 else 3:], first_be, last_be

def model_tlp_to_cc(tlp):
    h0, h1, h2 = tlp[:3]
    has_data = (h0 >> 30) & 1
    dword_count = ((h0 & 0x3ff) or 1024) if has_data else 0
    tc, ep, at = (h0 >> 20) & 7, (h0 >> 14) & 1, (h0 >> 10) & 3
    attr = ((h0 >> 12) & 3) | (((h0 >> 18) & 1) << 2)
    locked = (h0 >> 24) & 1
    byte_count = (h1 & 0xfff) or 4096
    d0 = (h2 & 0x7f) | (at << 8) | (byte_count << 16) | (locked << 29)
    d1 = dword_count | (((h1 >> 13) & 7) << 11) | (ep << 14) | ((h2 >> 16) << 16)
    d2 = ((h2 >> 8) & 0xff) | ((h1 >> 16) << 8) | (1 << 24) | (tc << 25) | (attr << 28)
    return [d0, d1, d2] + tlp[3:]

def model_rc_to_tlp(desc):
    d0, d1, d2 = desc[:3]
    lower_addr, error, byte_count, locked = d0 & 0xfff, (d0 >> 12) & 0xf, (d0 >> 16) & 0x1fff, (d0 >> 29) & 1
    dword_count, status, ep, req_id = d1 & 0x7ff, (d1 >> 11) & 7, (d1 >> 14) & 1, d1 >> 16
    tag, cpl_id, tc, attr = d2 & 0xff, (d2 >> 8) & 0xffff, (d2 >> 25) & 7, (d2 >> 28) & 7
    if error in (8, 9):  # FLR / completion timeout: terminate the request with UR, no data.
        status, dword_count = 1, 0
    elif error > 2:
        return None
    h0 = tlp_dw0(2 if dword_count else 0, 0b01010 | locked, dword_count, tc, attr, ep)
    h1 = (cpl_id << 16) | (status << 13) | (byte_count & 0xfff)
    h2 = (req_id << 16) | (tag << 8) | (lower_addr & 0x7f)
    return [h0, h1, h2] + desc[3:]

def model_cq_to_tlp(desc, first_be, last_be):
    addr = (desc[1] << 32) | (desc[0] & 0xfffffffc)
    at, dword_count = desc[0] & 3, desc[2] & 0x7ff
    req_type, req_id = (desc[2] >> 11) & 0xf, desc[2] >> 16
    tag, tc, attr = desc[3] & 0xff, (desc[3] >> 25) & 7, (desc[3] >> 28) & 7
    if req_type not in (0, 1):
        return None
    is4 = addr >> 32 != 0
    h0 = tlp_dw0((req_type << 1) | int(is4), 0, dword_count, tc, attr, 0, at)
    h1 = (req_id << 16) | (tag << 8) | (last_be << 4) | first_be
    return [h0, h1] + ([addr >> 32, addr & M32] if is4 else [addr & M32]) + desc[4:]

def rq_desc(addr, dword_count, req_type, req_id, tag, completer_id=0, tc=0, attr=0, ep=0):
    return [addr & M32, addr >> 32, dword_count | (req_type << 11) | (ep << 15) | (req_id << 16),
        tag | (completer_id << 8) | (1 << 24) | (tc << 25) | (attr << 28)]

def rc_desc(lower_addr, error, byte_count, dword_count, status, req_id, tag, cpl_id, locked=0,
    ep=0, tc=0, attr=0, completed=0):
    return [lower_addr | (error << 12) | (byte_count << 16) | (locked << 29) | (completed << 30),
        dword_count | (status << 11) | (ep << 14) | (req_id << 16),
        tag | (cpl_id << 8) | (tc << 25) | (attr << 28)]

def cq_desc(addr, dword_count, req_type, req_id, tag, bar_id=0, tc=0, attr=0):
    return [addr & M32, addr >> 32, dword_count | (req_type << 11) | (req_id << 16),
        tag | (bar_id << 16) | (tc << 25) | (attr << 28)]

# Stream harness -----------------------------------------------------------------------------------

def to_beats(dwords, data_width, keep_per_dword, user=0):
    n, beats = data_width//32, []
    for i in range(0, len(dwords), n):
        chunk = dwords[i:i + n]
        dat   = sum(d << (32*k) for k, d in enumerate(chunk))
        mask  = sum((1 if keep_per_dword else 0xf) << ((1 if keep_per_dword else 4)*k) for k in range(len(chunk)))
        beats.append(dict(dat=dat, mask=mask, user=user if i == 0 else 0, first=int(i == 0),
            last=int(i + n >= len(dwords))))
    return beats

def send(ep, packets, rng, mask_name, idle=0.3):
    for beats in packets:
        for b in beats:
            while rng.random() < idle:
                yield ep.valid.eq(0)
                yield
            yield ep.valid.eq(1)
            yield ep.dat.eq(b["dat"])
            yield getattr(ep, mask_name).eq(b["mask"])
            if hasattr(ep, "user"):
                yield ep.user.eq(b["user"])
            yield ep.first.eq(b["first"])
            yield ep.last.eq(b["last"])
            yield
            while not (yield ep.ready):
                yield
    yield ep.valid.eq(0)

@passive
def receive(ep, data_width, out, rng, mask_name, keep_per_dword, ready=0.7):
    n, cur = data_width//32, None
    while True:
        r = int(rng.random() < ready)
        yield ep.ready.eq(r)
        yield
        if r and (yield ep.valid):
            dat, mask, first, last = (yield ep.dat), (yield getattr(ep, mask_name)), (yield ep.first), (yield ep.last)
            user = (yield ep.user) if hasattr(ep, "user") else 0
            step = 1 if keep_per_dword else 4
            valid = [(mask >> (step*k)) & ((1 << step) - 1) for k in range(n)]
            full = (1 << step) - 1
            ndw = sum(1 for v in valid if v == full)
            assert valid[:ndw] == [full]*ndw and not any(valid[ndw:]), f"non contiguous mask {mask:#x}"
            assert ndw > 0, "empty beat"
            assert first == (cur is None), "first flag"
            if cur is None:
                cur = dict(dwords=[], user=user)
            else:
                assert last or ndw == n, "partial beat before the last one"
            cur["dwords"] += [(dat >> (32*k)) & M32 for k in range(ndw)]
            if last:
                out.append(cur)
                cur = None

def run(dut, sink_packets, source, sink, data_width, in_mask, out_mask, in_keep, out_keep, seed,
    expected, dropped=None):
    rng_s, rng_r = random.Random(seed), random.Random(seed + 1)
    out = []
    def main():
        yield from send(sink, sink_packets, rng_s, in_mask)
        for _ in range(20000):
            if len(out) >= expected:
                break
            yield
        for _ in range(30):
            yield
    counters = dict(dropped=0)
    @passive
    def count_dropped():
        while True:
            if (yield dut.dropped):
                counters["dropped"] += 1
            yield
    gens = [main(), receive(source, data_width, out, rng_r, out_mask, out_keep)]
    if dropped is not None:
        gens.append(count_dropped())
    run_simulation(dut, gens)
    if dropped is not None:
        assert counters["dropped"] == dropped
    return out

# Random traffic -----------------------------------------------------------------------------------

def random_request_tlps(rng, count):
    tlps = []
    for _ in range(count):
        kind = rng.choice(["mrd", "mwr", "mwr", "cfgrd", "cfgwr", "mrd64", "mwr64"])
        req_id, tag = rng.choice([0x0000, 0x0100, 0x1234]), rng.randrange(256)
        tc, attr = rng.randrange(8), rng.randrange(8)
        if kind.startswith("cfg"):
            tlps.append(tlp_cfg(rng.randrange(256), rng.randrange(32), rng.randrange(8),
                rng.randrange(1024), kind == "cfgwr", typ=rng.randrange(2), req_id=req_id, tag=tag,
                first_be=rng.randrange(16), data=rng.getrandbits(32)))
        else:
            addr   = rng.getrandbits(30) << 2
            if kind.endswith("64"):
                addr |= rng.randrange(1, 2**32) << 32
            length = rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, rng.randrange(1, 41)])
            write  = kind.startswith("mwr")
            tlps.append(tlp_mem(addr, write, length, req_id, tag, rng.randrange(16),
                0 if length == 1 else rng.randrange(16), tc, attr,
                [rng.getrandbits(32) for _ in range(length)] if write else None))
    return tlps

# RQ -----------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("data_width, family, seed", [(128, "us", 1), (256, "usp", 2)])
def test_tlp_to_rq_random(data_width, family, seed):
    rng  = random.Random(seed)
    tlps = random_request_tlps(rng, 60)
    msg  = [tlp_dw0(0b001, 0b10000, 0), 0, 0, 0]                # Message: not an RQ request.
    tlps.insert(17, msg)
    dut  = TLPToRQ(data_width, family)
    out  = run(dut, [to_beats(t, data_width, False) for t in tlps], dut.source, dut.sink,
        data_width, "be", "keep", False, True, seed, expected=60, dropped=1)
    expected = [model_tlp_to_rq(t) for t in tlps if model_tlp_to_rq(t) is not None]
    assert len(out) == len(expected) == 60
    for o, (dwords, first_be, last_be) in zip(out, expected):
        assert o["dwords"] == dwords
        assert o["user"] & 0xff == (last_be << 4) | first_be
        assert o["user"] >> 8 == 0

@pytest.mark.unit
def test_tlp_to_rq_exact_fields():
    """Hand-computed descriptors (PG156/PG213 bit positions) for the root complex's own requests."""
    tlps = [
        tlp_cfg(1, 0, 0, 0x04 >> 2, True, req_id=0, tag=0x42, data=0x6),
        tlp_cfg(1, 0, 0, 0x100 >> 2, False, tag=0x07, first_be=0xf),
        tlp_mem(0xe0001000, False, 2, tag=0x10, last_be=0xf),
        tlp_mem(0x1_2345_6780, True, 1, tag=0x11, first_be=0x3, last_be=0, payload=[0xdeadbeef]),
    ]
    dut = TLPToRQ(256, "usp")
    out = run(dut, [to_beats(t, 256, False) for t in tlps], dut.source, dut.sink, 256, "be",
        "keep", False, True, 5, expected=4)
    # CfgWr0 bus 1 dev 0 fn 0, Command (dword 1): Address[11:2]=1, type 1010, completer 0x0100.
    assert out[0]["dwords"] == [0x00000004, 0, 0x00005001, 0x01010042, 0x00000006]
    assert out[0]["user"] & 0xff == 0x0f
    # CfgRd0 extended register 0x100: register number 0x40 -> Address 0x100, type 1000.
    assert out[1]["dwords"] == [0x00000100, 0, 0x00004001, 0x01010007]
    # MRd32 BAR0+0x1000, 2 dwords.
    assert out[2]["dwords"] == [0xe0001000, 0, 0x00000002, 0x01000010]
    assert out[2]["user"] & 0xff == 0xff
    # MWr64 1 dword: 4-DW TLP, payload stays in dword 4.
    assert out[3]["dwords"] == [0x23456780, 0x1, 0x00000801, 0x01000011, 0xdeadbeef]
    assert out[3]["user"] & 0xff == 0x03

# CC -----------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("data_width, family, seed", [(128, "usp", 3), (256, "us", 4)])
def test_tlp_to_cc_random(data_width, family, seed):
    rng  = random.Random(seed)
    tlps = []
    for _ in range(50):
        length = rng.choice([0, 1, 2, 3, 4, 7, 8, 9, 16, rng.randrange(1, 33)])
        status = 0 if length else rng.choice([1, 2, 4])
        tlps.append(tlp_cpl(rng.randrange(2**16), rng.randrange(2**16), rng.randrange(256), status,
            rng.randrange(4096), rng.randrange(128), [rng.getrandbits(32) for _ in range(length)],
            locked=rng.randrange(2), tc=rng.randrange(8), attr=rng.randrange(8), ep=rng.randrange(2)))
    dut = TLPToCC(data_width, family)
    out = run(dut, [to_beats(t, data_width, False) for t in tlps], dut.source, dut.sink,
        data_width, "be", "keep", False, True, seed, expected=50)
    assert [o["dwords"] for o in out] == [model_tlp_to_cc(t) for t in tlps]
    assert all(o["user"] == 0 for o in out)

@pytest.mark.unit
def test_tlp_to_cc_exact_fields():
    """CplD to the SSD's MRd: lower address, byte count (0 = 4096), completer ID must be exact."""
    tlps = [
        tlp_cpl(0x0000, 0x0100, 0x21, 0, 0x010, 0x44, [1, 2, 3, 4]),
        tlp_cpl(0x0000, 0x0100, 0x22, 0, 0x000, 0x00, [5]),          # Byte Count 4096.
        tlp_cpl(0x0000, 0x0100, 0x23, 1, 0x004, 0x00),               # UR, no data.
    ]
    dut = TLPToCC(128, "usp")
    out = run(dut, [to_beats(t, 128, False) for t in tlps], dut.source, dut.sink, 128, "be",
        "keep", False, True, 6, expected=3)
    assert out[0]["dwords"] == [0x00100044, 0x01000004, 0x01000021, 1, 2, 3, 4]
    assert out[1]["dwords"] == [0x10000000, 0x01000001, 0x01000022, 5]
    assert out[2]["dwords"] == [0x00040000, 0x01000800, 0x01000023]

# RC -----------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("data_width, family, seed", [(128, "us", 7), (256, "usp", 8)])
def test_rc_to_tlp_random(data_width, family, seed):
    rng   = random.Random(seed)
    descs = []
    for _ in range(50):
        error = rng.choice([0, 0, 0, 0, 1, 2, 9, 8, 6, 3])
        dwc   = rng.choice([1, 2, 3, 4, 5, 8, 9, 16, rng.randrange(1, 33)]) if error in (0, 1) else 0
        status = {2: rng.choice([1, 2, 4])}.get(error, 0)
        descs.append(rc_desc(rng.randrange(4096), error, rng.randrange(1, 4097), dwc, status,
            rng.randrange(2**16), rng.randrange(256), rng.randrange(2**16), rng.randrange(2),
            int(error == 1), rng.randrange(8), rng.randrange(8), rng.randrange(2))
            + [rng.getrandbits(32) for _ in range(dwc)])
    expected = [model_rc_to_tlp(d) for d in descs]
    dropped  = sum(1 for e in expected if e is None)
    dut = RCToTLP(data_width, family)
    out = run(dut, [to_beats(d, data_width, True) for d in descs], dut.source, dut.sink,
        data_width, "keep", "be", True, False, seed, expected=len(descs) - dropped, dropped=dropped)
    assert dropped > 0
    assert [o["dwords"] for o in out] == [e for e in expected if e is not None]

@pytest.mark.unit
def test_rc_to_tlp_exact_fields():
    """Configuration completions: CRS (status 010) and a CplD with the SSD's Vendor/Device ID."""
    descs = [
        rc_desc(0x000, 2, 4, 0, 0b010, 0x0000, 0x42, 0x0100, completed=1),
        rc_desc(0x000, 0, 4, 1, 0b000, 0x0000, 0x43, 0x0100, completed=1) + [0xa808144d],
        rc_desc(0x000, 9, 0, 0, 0b000, 0x0000, 0x44, 0x0000),
    ]
    dut = RCToTLP(256, "usp")
    out = run(dut, [to_beats(d, 256, True) for d in descs], dut.source, dut.sink, 256, "keep",
        "be", True, False, 9, expected=3)
    assert out[0]["dwords"] == [0x0a000000, 0x01004004, 0x00004200]
    assert out[1]["dwords"] == [0x4a000001, 0x01000004, 0x00004300, 0xa808144d]
    assert out[2]["dwords"] == [0x0a000000, 0x00002000, 0x00004400]

# CQ -----------------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("data_width, family, seed", [(128, "usp", 10), (256, "us", 11)])
def test_cq_to_tlp_random(data_width, family, seed):
    rng   = random.Random(seed)
    items = []
    for i in range(50):
        req_type = rng.choice([0, 1, 1, 1]) if i != 23 else 0b0011 # One I/O write: dropped.
        addr = rng.getrandbits(30) << 2
        if rng.random() < 0.4:
            addr |= rng.randrange(1, 2**32) << 32
        dwc = rng.choice([1, 2, 3, 4, 5, 8, 9, 16, 17, rng.randrange(1, 41)])
        first_be, last_be = rng.randrange(1, 16), 0 if dwc == 1 else rng.randrange(1, 16)
        desc = cq_desc(addr, dwc, req_type, rng.randrange(2**16), rng.randrange(256),
            rng.randrange(7), rng.randrange(8), rng.randrange(8))
        if req_type in (1, 3):
            desc += [rng.getrandbits(32) for _ in range(dwc)]
        items.append((desc, first_be, last_be))
    dut = CQToTLP(data_width, family)
    out = run(dut, [to_beats(d, data_width, True, user=(l << 4) | f) for d, f, l in items],
        dut.source, dut.sink, data_width, "keep", "be", True, False, seed, expected=49, dropped=1)
    expected = [model_cq_to_tlp(*it) for it in items]
    assert [o["dwords"] for o in out] == [e for e in expected if e is not None]

@pytest.mark.unit
def test_cq_to_tlp_exact_fields():
    """The SSD posting a 16-byte CQE below 4 GiB (3-DW MWr) and reading 64 bytes above 4 GiB."""
    cqe = [0x11111111, 0x22222222, 0x33333333, 0x44444444]
    items = [
        (cq_desc(0x8000_0010, 4, 1, 0x0100, 0x05) + cqe, 0xf, 0xf),
        (cq_desc(0x2_0000_0040, 16, 0, 0x0100, 0x06), 0xf, 0xf),
    ]
    dut = CQToTLP(128, "usp")
    out = run(dut, [to_beats(d, 128, True, user=(l << 4) | f) for d, f, l in items], dut.source,
        dut.sink, 128, "keep", "be", True, False, 12, expected=2)
    assert out[0]["dwords"] == [0x40000004, 0x010005ff, 0x80000010] + cqe
    assert out[1]["dwords"] == [0x20000010, 0x010006ff, 0x00000002, 0x00000040]

# Bridge (dispatch / merge) ------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("data_width, family, seed", [(256, "usp", 13)])
def test_bridge_routes_and_merges(data_width, family, seed):
    """Requests go to RQ and completions to CC in order; RC and CQ merge into one TLP stream."""
    rng  = random.Random(seed)
    tlps = random_request_tlps(rng, 25)
    for i in range(20):
        tlps.insert(rng.randrange(len(tlps)), tlp_cpl(0, 0x0100, i, 0, 8, 0x10, [rng.getrandbits(32),
            rng.getrandbits(32)]))
    rcs = [rc_desc(0, 0, 4, 1, 0, 0, i, 0x0100) + [rng.getrandbits(32)] for i in range(15)]
    cqs = [cq_desc(0x1000*i, 2, 1, 0x0100, i) + [i, i] for i in range(15)]
    dut = TLPDescriptorBridge(data_width, family)
    rq_out, cc_out, tlp_out = [], [], []
    def main():
        yield from send(dut.sink, [to_beats(t, data_width, False) for t in tlps],
            random.Random(seed + 2), "be")
        for _ in range(5000):
            if (len(rq_out), len(cc_out), len(tlp_out)) == (25, 20, 30):
                break
            yield
    def feed(ep, descs, s):
        yield from send(ep, [to_beats(d, data_width, True, user=0xff) for d in descs],
            random.Random(s), "keep")
    run_simulation(dut, [main(), feed(dut.m_axis_rc, rcs, seed + 3), feed(dut.m_axis_cq, cqs, seed + 4),
        receive(dut.s_axis_rq, data_width, rq_out, random.Random(seed + 5), "keep", True),
        receive(dut.s_axis_cc, data_width, cc_out, random.Random(seed + 6), "keep", True),
        receive(dut.source, data_width, tlp_out, random.Random(seed + 7), "be", False)])
    requests    = [t for t in tlps if (t[0] >> 25) & 0xf != 0b0101]
    completions = [t for t in tlps if (t[0] >> 25) & 0xf == 0b0101]
    assert [o["dwords"] for o in rq_out] == [model_tlp_to_rq(t)[0] for t in requests]
    assert [o["dwords"] for o in cc_out] == [model_tlp_to_cc(t) for t in completions]
    inbound = [o["dwords"] for o in tlp_out]
    assert [t for t in inbound if (t[0] >> 25) & 0xf == 0b0101] == [model_rc_to_tlp(d) for d in rcs]
    assert [t for t in inbound if (t[0] >> 25) & 0xf != 0b0101] == [model_cq_to_tlp(d, 0xf, 0xf) for d in cqs]

# Parameters ---------------------------------------------------------------------------------------

@pytest.mark.unit
@pytest.mark.parametrize("cls", [TLPToRQ, TLPToCC, RCToTLP, CQToTLP])
def test_converter_parameters(cls):
    with pytest.raises(ValueError, match="data_width 128 or 256, not 64"):
        cls(64, "usp")
    with pytest.raises(ValueError, match=r"family must be one of \['us', 'usp'\], not 'v7'"):
        cls(128, "v7")
