#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Root-complex TLP layer: header inserter / extracter at every length and alignment, 3- and
4-dword headers, random back-pressure, malformed TLPs (Migen simulation)."""

import random

import pytest

from migen import *

from literecorder.cores.pcie.tlp import RCHeaderInserter, RCHeaderExtracter

from tlpmodel import TLP, to_beats, random_payload

pytestmark = pytest.mark.unit

def _random_tlps(rng, count, max_len):
    tlps = []
    for _ in range(count):
        kind = rng.choice(["mwr32", "mwr64", "cpld", "mrd32", "mrd64", "cfgrd0", "cfgwr0"])
        if kind in ("mrd32", "mrd64", "cfgrd0"):
            n, length = 0, rng.randint(1, 128)
            if kind == "cfgrd0":
                length = 1
        elif kind == "cfgwr0":
            n = length = 1
        else:
            n = length = rng.randint(1, max_len)
        f = dict(req_id=rng.getrandbits(16), tag=rng.getrandbits(8), first_be=0xf, last_be=0xf,
            adr=rng.getrandbits(30) << 2 | ((rng.getrandbits(32) << 32) if kind.endswith("64") else 0),
            bus=1, dev=0, fn=0, reg=rng.getrandbits(10), cmp_id=0x100, byte_count=n*4, lower_adr=0)
        tlps.append(TLP(kind, length, random_payload(rng, n), **f))
    return tlps

def _raw_beats(tlp, ndw):
    """Raw-TLP beats: (dat, be) of the payload from dword 0 (one empty beat without payload)."""
    beats = to_beats(tlp.payload, ndw)
    return beats or [(0, 0)]

def _header_value(tlp):
    v = 0
    for i, d in enumerate(tlp.header()):
        v |= d << (32*i)
    return v

@pytest.mark.parametrize("dw, seed", [(256, 1), (256, 2), (128, 3), (512, 4)])
def test_inserter_matches_reference(dw, seed):
    ndw = dw//32
    rng = random.Random(seed)
    tlps = _random_tlps(rng, 40, 3*ndw + 5)
    dut = RCHeaderInserter(dw)
    expected = [b for t in tlps for b in [(d, e, i == 0, i == len(to_beats(t.dwords(), ndw)) - 1)
        for i, (d, e) in enumerate(to_beats(t.dwords(), ndw))]]
    got = []

    def source():
        for t in tlps:
            beats = _raw_beats(t, ndw)
            for i, (d, e) in enumerate(beats):
                while rng.random() < 0.3:
                    yield
                yield dut.sink.valid.eq(1)
                yield dut.sink.first.eq(i == 0)
                yield dut.sink.last.eq(i == len(beats) - 1)
                yield dut.sink.fmt.eq(t.fmt_type >> 5)
                yield dut.sink.header.eq(_header_value(t))
                yield dut.sink.dat.eq(d)
                yield dut.sink.be.eq(e)
                yield
                while not (yield dut.sink.ready):
                    yield
                yield dut.sink.valid.eq(0)

    def sink():
        while len(got) < len(expected):
            ready = rng.random() < 0.7
            yield dut.source.ready.eq(ready)
            yield
            if ready and (yield dut.source.valid):
                got.append(((yield dut.source.dat), (yield dut.source.be),
                    bool((yield dut.source.first)), bool((yield dut.source.last))))

    run_simulation(dut, [source(), sink()])
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        gd, gbe, gf, gl = g
        ed, ebe, ef, el = e
        mask = 0
        for j in range(ndw):
            if (ebe >> (4*j)) & 0xf:
                mask |= 0xffffffff << (32*j)
        assert (gbe, gf, gl) == (ebe, ef, el), f"beat {i}"
        assert gd & mask == ed, f"beat {i}"

def _drive_beats(dut, rng, packets, ndw, gaps=0.3):
    for beats in packets:
        for i, (d, e) in enumerate(beats):
            while rng.random() < gaps:
                yield
            yield dut.sink.valid.eq(1)
            yield dut.sink.first.eq(i == 0)
            yield dut.sink.last.eq(i == len(beats) - 1)
            yield dut.sink.dat.eq(d)
            yield dut.sink.be.eq(e)
            yield
            while not (yield dut.sink.ready):
                yield
            yield dut.sink.valid.eq(0)

def _collect_packets(dut, rng, count, out):
    cur = []
    while len(out) < count:
        ready = rng.random() < 0.7
        yield dut.source.ready.eq(ready)
        yield
        if ready and (yield dut.source.valid):
            if (yield dut.source.first):
                assert cur == []
            cur.append(((yield dut.source.header), (yield dut.source.dat), (yield dut.source.be),
                (yield dut.source.malformed)))
            if (yield dut.source.last):
                out.append(cur)
                cur = []

def _payload_of(packet, ndw):
    dws = []
    for _, dat, be, _ in packet:
        for j in range(ndw):
            if (be >> (4*j)) & 0xf:
                dws.append((dat >> (32*j)) & 0xffffffff)
    return dws

@pytest.mark.parametrize("dw, seed", [(256, 5), (256, 6), (128, 7), (512, 8)])
def test_extracter_matches_reference(dw, seed):
    ndw = dw//32
    rng = random.Random(seed)
    tlps = _random_tlps(rng, 40, 3*ndw + 5)
    dut = RCHeaderExtracter(dw)
    got = []
    run_simulation(dut, [
        _drive_beats(dut, rng, [to_beats(t.dwords(), ndw) for t in tlps], ndw),
        _collect_packets(dut, rng, len(tlps), got)])
    assert len(got) == len(tlps)
    for t, p in zip(tlps, got):
        assert p[0][0] & ((1 << (32*len(t.header()))) - 1) == _header_value(t)
        assert _payload_of(p, ndw) == t.payload
        assert all(m == 0 for *_, m in p)
        assert len(p) == max(1, -(-len(t.payload)//ndw))

def test_extracter_flags_truncated_and_extra_beats():
    dw, ndw = 256, 8
    rng = random.Random(9)
    good1 = TLP("mwr32", 12, random_payload(rng, 12), adr=0x1000)
    trunc = TLP("mwr32", 20, random_payload(rng, 20), adr=0x2000)   # 23 dwords: 3 beats.
    extra = TLP("mwr32", 4, random_payload(rng, 4), adr=0x3000)     # 7 dwords: 1 beat.
    extra_long = TLP("cpld", 13, random_payload(rng, 13), byte_count=52)  # 16 dwords: 2 beats.
    good2 = TLP("mwr32", 9, random_payload(rng, 9), adr=0x4000)
    packets = [
        to_beats(good1.dwords(), ndw),
        to_beats(trunc.dwords(), ndw)[:2],                                  # One beat missing.
        to_beats(extra.dwords(), ndw) + [(0x1234, 0xf), (0x5678, 0xff)],    # Two beats too many.
        to_beats(extra_long.dwords(), ndw) + [(0xabcd, 0xf)],               # One beat too many.
        to_beats(good2.dwords(), ndw),
    ]
    dut = RCHeaderExtracter(dw)
    got = []
    run_simulation(dut, [_drive_beats(dut, rng, packets, ndw), _collect_packets(dut, rng, 5, got)])
    flags = [p[-1][3] for p in got]
    assert flags == [0, 1, 1, 1, 0]
    assert _payload_of(got[0], ndw) == good1.payload
    assert _payload_of(got[4], ndw) == good2.payload   # Back in sync after the bad TLPs.
    assert _payload_of(got[2], ndw) == extra.payload
    assert _payload_of(got[3], ndw) == extra_long.payload
    # Only the flagged last beat of each packet carries `malformed`.
    assert all(m == 0 for p in got for *_, m in p[:-1])

def test_inserter_rejects_narrow_datapath():
    with pytest.raises(ValueError, match="128-bit"):
        RCHeaderInserter(64)
    with pytest.raises(ValueError, match="allowed are"):
        RCHeaderExtracter(96)
